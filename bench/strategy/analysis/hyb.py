import sys, numpy as np, warnings
from load import load, DEVS, log_times, expected_improvement, study
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import Matern, ConstantKernel as C, WhiteKernel
warnings.filterwarnings('ignore')
CACHE={}
def prep(d):
    X,idx,T,vals=load(d)
    key={tuple(r):i for i,r in enumerate(idx)}; radix=[len(v) for v in vals]
    N=[]
    for i in range(len(T)):
        out=[]; r=list(idx[i])
        for j in range(7):
            for dv in (-2,-1,1,2):
                v=r[j]+dv
                if 0<=v<radix[j]:
                    r2=r.copy(); r2[j]=v; k=key.get(tuple(r2))
                    if k is not None: out.append(k)
        N.append(out)
    F=idx/np.maximum(idx.max(0),1)
    return X,idx,T,F,N
def run(d, seed, budget, init=8, chains=16, guide='ei', refit=4, nu=1.5, glob=0.0):
    X,idx,T,F,N=CACHE[d]
    rng=np.random.default_rng(seed); n=len(T); seen=np.zeros(n,bool)
    order=list(rng.choice(n,init,replace=False)); seen[order]=True
    k=None
    while len(order)<budget:
        t=np.array([T[i] for i in order]); rk=np.argsort(t)
        cand=[]
        for r in rk[:chains]:
            if not np.isfinite(t[r]): break
            c=[j for j in N[order[r]] if not seen[j]]
            if c: cand=c if guide!='union' else cand+c
            if c and guide!='union': break
        if guide=='union':
            cand=sorted(set(cand))
        if not cand or rng.random()<glob:
            cand=list(np.where(~seen)[0])
        if guide=='rand':
            j=cand[rng.integers(len(cand))]
        else:
            y=log_times(t)
            yn=(y-y.mean())/(y.std()+1e-9)
            if k is None or len(order)%refit==0:
                kern=C(1.0,(1e-2,1e2))*Matern(length_scale=np.ones(7),length_scale_bounds=(1e-2,1e2),nu=nu)+WhiteKernel(1e-2,(1e-6,1e0))
                gp=GaussianProcessRegressor(kern,n_restarts_optimizer=0,random_state=0).fit(F[order],yn); k=gp.kernel_
            else: gp=GaussianProcessRegressor(k,optimizer=None).fit(F[order],yn)
            c=np.array(cand); m,s=gp.predict(F[c],return_std=True); b=yn.min()
            ei=expected_improvement(m,s,b)
            j=c[np.argmax(ei)]
        order.append(j); seen[j]=True
    return T.min()/T[order].min()
if __name__=='__main__':
    study(run, prep, CACHE, sys.argv)
