import sys, numpy as np, warnings
from load import load, DEVS
from hyb import prep
import hyb
from scipy.stats import norm
from sklearn.ensemble import RandomForestRegressor
warnings.filterwarnings('ignore')
CACHE={}
def run(d, seed, budget, init=8, chains=16, every=2, trees=40, start=20):
    X,idx,T,F,N=CACHE[d]; G=idx.astype(float)
    rng=np.random.default_rng(seed); n=len(T); seen=np.zeros(n,bool)
    order=list(rng.choice(n,init,replace=False)); seen[order]=True
    step=0
    while len(order)<budget:
        step+=1
        t=T[order]
        if len(order)>=start and step%every==0:
            y=np.log(np.where(np.isfinite(t),t,np.nan)); ymax=np.nanmax(y); y=np.where(np.isnan(y),ymax+0.5,y)
            M=RandomForestRegressor(n_estimators=trees,max_features=0.8,random_state=int(rng.integers(1<<30))).fit(G[order],y)
            cand=np.where(~seen)[0]; P=np.stack([e.predict(G[cand]) for e in M.estimators_])
            m=P.mean(0); s=P.std(0)+1e-9; b=y.min(); z=(b-m)/s; ei=(b-m)*norm.cdf(z)+s*norm.pdf(z)
            j=cand[np.argmax(ei)]
        else:
            rk=np.argsort(t); j=None
            for r in rk[:chains]:
                if not np.isfinite(t[r]): break
                c=[k for k in N[order[r]] if not seen[k]]
                if c: j=c[rng.integers(len(c))]; break
            if j is None: j=np.where(~seen)[0][rng.integers((~seen).sum())]
        order.append(j); seen[j]=True
    return T.min()/T[order].min()
if __name__=='__main__':
    budget=int(sys.argv[1]); seeds=int(sys.argv[2]); kw=eval('dict('+(sys.argv[3] if len(sys.argv)>3 else '')+')')
    for d in DEVS: CACHE[d]=prep(d)
    res=[]
    for d in DEVS:
        q=[run(d,s,budget,**kw) for s in range(1,seeds+1)]
        res.append(np.mean(q)); print(d, round(np.mean(q),3), end='; ',flush=True)
    print('\nmean',round(np.mean(res),3), kw,flush=True)
