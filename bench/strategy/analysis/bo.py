import sys, numpy as np, warnings
from load import load, DEVS, log_times, expected_improvement, study
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import Matern, ConstantKernel as C, WhiteKernel
warnings.filterwarnings('ignore')

def feats(X, mode):
    F=X.copy()
    if mode=='log':
        F=np.log2(np.maximum(F,1)); 
    lo=F.min(0); hi=F.max(0); return (F-lo)/np.where(hi>lo,hi-lo,1)

def run(dev, seed, budget, init=10, mode='lin', xi=0.0, refit=1, nu=2.5):
    X,idx,T,vals=load(dev) if dev not in CACHE else CACHE[dev]
    F=feats(X,mode)
    rng=np.random.default_rng(seed)
    n=len(T); seen=np.zeros(n,bool)
    order=list(rng.choice(n,init,replace=False))
    for i in order: seen[i]=True
    gp=None; k=None
    while len(order)<budget:
        y=log_times(T[order])
        mu0=y.mean(); sd0=y.std()+1e-9; yn=(y-mu0)/sd0
        if k is None or len(order)%refit==0:
            kern=C(1.0,(1e-2,1e2))*Matern(length_scale=np.ones(F.shape[1]),length_scale_bounds=(1e-2,1e2),nu=nu)+WhiteKernel(1e-2,(1e-6,1e0))
            gp=GaussianProcessRegressor(kern,normalize_y=False,n_restarts_optimizer=0,random_state=0).fit(F[order],yn)
            k=gp.kernel_
        else:
            gp=GaussianProcessRegressor(k,optimizer=None).fit(F[order],yn)
        cand=np.where(~seen)[0]
        m,s=gp.predict(F[cand],return_std=True)
        ei=expected_improvement(m,s,yn.min(),xi)
        j=cand[np.argmax(ei)]
        order.append(j); seen[j]=True
    t=T[order]; return T.min()/t.min()

CACHE={}
if __name__=='__main__':
    study(run, load, CACHE, sys.argv)
