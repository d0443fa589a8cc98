import sys, numpy as np, warnings
from load import load, DEVS
from scipy.stats import norm
from sklearn.ensemble import RandomForestRegressor, ExtraTreesRegressor
warnings.filterwarnings('ignore')
CACHE={}
def run(d, seed, budget, init=10, trees=50, model='rf', xi=0.0, batch=1, eps=0.0):
    X,idx,T,vals=CACHE[d]
    F=idx.astype(float)
    rng=np.random.default_rng(seed); n=len(T); seen=np.zeros(n,bool)
    order=list(rng.choice(n,init,replace=False)); seen[order]=True
    while len(order)<budget:
        t=T[order]; y=np.log(np.where(np.isfinite(t),t,np.nan)); ymax=np.nanmax(y); y=np.where(np.isnan(y),ymax+0.5,y)
        M=(RandomForestRegressor if model=='rf' else ExtraTreesRegressor)(n_estimators=trees,min_samples_leaf=1,max_features=0.8 if model=='rf' else 1.0,random_state=int(rng.integers(1<<30)))
        M.fit(F[order],y)
        cand=np.where(~seen)[0]
        P=np.stack([e.predict(F[cand]) for e in M.estimators_])
        m=P.mean(0); s=P.std(0)+1e-9; b=y.min()
        z=(b-m-xi)/s; ei=(b-m-xi)*norm.cdf(z)+s*norm.pdf(z)
        if rng.random()<eps: j=cand[rng.integers(len(cand))]; pick=[j]
        else: pick=list(cand[np.argsort(-ei)[:batch]])
        for j in pick:
            if len(order)<budget: order.append(j); seen[j]=True
    return T.min()/T[order].min()
if __name__=='__main__':
    budget=int(sys.argv[1]); seeds=int(sys.argv[2]); kw=eval('dict('+(sys.argv[3] if len(sys.argv)>3 else '')+')')
    for d in DEVS: CACHE[d]=load(d)
    res=[]
    for d in DEVS:
        q=[run(d,s,budget,**kw) for s in range(1,seeds+1)]
        res.append(np.mean(q)); print(d, round(np.mean(q),3), end='; ',flush=True)
    print('\nmean',round(np.mean(res),3), kw,flush=True)
