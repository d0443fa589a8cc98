import sys, numpy as np, warnings
from load import DEVS, log_times, expected_improvement, study
from hyb import prep
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
            y=log_times(t)
            M=RandomForestRegressor(n_estimators=trees,max_features=0.8,random_state=int(rng.integers(1<<30))).fit(G[order],y)
            cand=np.where(~seen)[0]; P=np.stack([e.predict(G[cand]) for e in M.estimators_])
            ei=expected_improvement(P.mean(0),P.std(0)+1e-9,y.min())
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
    study(run, prep, CACHE, sys.argv)
