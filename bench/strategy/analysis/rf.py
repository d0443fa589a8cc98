import sys, numpy as np, warnings
from load import load, DEVS, log_times, expected_improvement, study, alignment_columns
from sklearn.ensemble import RandomForestRegressor, ExtraTreesRegressor
warnings.filterwarnings('ignore')
CACHE={}


def prep(d):
    """load(d) plus the features for feat='all': the indices, log2 of each parameter of
    more than two positive values, and the alignment columns of the C bayes
    (load.alignment_columns). For trees log2 adds no split the index lacks (it is a
    monotone map of it); only the alignment columns do."""
    X, idx, T, vals = load(d)
    cols = [idx.astype(float)]
    cols += [np.log2(X[:, j:j + 1]) for j in range(X.shape[1])
             if len(vals[j]) > 2 and min(vals[j]) > 0]
    cols += alignment_columns(X)
    return X, idx, T, vals, np.hstack(cols)


def run(d, seed, budget, init=10, trees=50, model='rf', xi=0.0, batch=1, eps=0.0, feat='idx'):
    X,idx,T,vals,features=CACHE[d]
    F=features if feat=='all' else idx.astype(float)
    rng=np.random.default_rng(seed); n=len(T); seen=np.zeros(n,bool)
    order=list(rng.choice(n,init,replace=False)); seen[order]=True
    while len(order)<budget:
        y=log_times(T[order])
        M=(RandomForestRegressor if model=='rf' else ExtraTreesRegressor)(n_estimators=trees,min_samples_leaf=1,max_features=0.8 if model=='rf' else 1.0,random_state=int(rng.integers(1<<30)))
        M.fit(F[order],y)
        cand=np.where(~seen)[0]
        P=np.stack([e.predict(F[cand]) for e in M.estimators_])
        ei=expected_improvement(P.mean(0),P.std(0)+1e-9,y.min(),xi)
        if rng.random()<eps: j=cand[rng.integers(len(cand))]; pick=[j]
        else: pick=list(cand[np.argsort(-ei)[:batch]])
        for j in pick:
            if len(order)<budget: order.append(j); seen[j]=True
    return T.min()/T[order].min()
if __name__=='__main__':
    study(run, prep, CACHE, sys.argv)
