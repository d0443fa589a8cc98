import json, gzip, numpy as np
import os
D=os.environ.get('MILO', os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../../shared/datasets/benchmark_hub/convolution_milo/'))
DEVS=['A100','A4000','A6000','MI250X','W6600','W7800']
KEYS=['block_size_x','block_size_y','tile_size_x','tile_size_y','read_only','use_padding','use_shmem']
def load(dev):
    d=json.load(gzip.open(D+dev+'.json.gz'))
    X=[];T=[]
    for k,v in d['cache'].items():
        t=v['time']
        if isinstance(t,str): 
            if 'Invalid' in t: continue
            t=np.inf
        X.append([v[k2] for k2 in KEYS]); T.append(float(t))
    X=np.array(X,float); T=np.array(T)
    vals=[sorted(set(X[:,j])) for j in range(X.shape[1])]
    idx=np.array([[vals[j].index(x) for j,x in enumerate(r)] for r in X])
    return X,idx,T,vals
if __name__=='__main__':
    for dv in DEVS:
        X,idx,T,vals=load(dv)
        o=T.min(); s=np.sort(o/T)[::-1]
        print(dv,len(T),np.isinf(T).sum(),'within .95:',(o/T>=.95).sum(),'within .9:',(o/T>=.9).sum(), 'best', X[T.argmin()])
