import numpy as np
from load import load, DEVS
for d in DEVS:
    X,idx,T,vals=load(d)
    key={tuple(r):i for i,r in enumerate(idx)}
    radix=[len(v) for v in vals]
    def nbrs(i,reach=2):
        out=[]
        r=list(idx[i])
        for j in range(7):
            for dv in range(-reach,reach+1):
                if dv==0: continue
                v=r[j]+dv
                if 0<=v<radix[j]:
                    r2=r.copy(); r2[j]=v; k=key.get(tuple(r2))
                    if k is not None: out.append(k)
        return out
    N=[nbrs(i) for i in range(len(T))]
    tt=np.where(np.isfinite(T),T,1e9)
    lo=[i for i in range(len(T)) if all(tt[i]<=tt[j] for j in N[i]) and np.isfinite(T[i])]
    # steepest descent basins
    def climb(i):
        while True:
            b=min(N[i],key=lambda j:tt[j],default=i)
            if tt[b]<tt[i]: i=b
            else: return i
    g=int(np.argmin(tt)); ends=[climb(i) for i in range(len(T))]
    q=np.array([T.min()/T[e] for e in ends])
    print(d,'local optima',len(lo),'basin of global',sum(e==g for e in ends),'mean quality of descent end',round(q.mean(),3), 'frac>=.95',round((q>=.95).mean(),3))
