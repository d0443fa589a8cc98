import sys, numpy as np, warnings
from load import load, DEVS, log_times, expected_improvement, study
from sklearn.ensemble import RandomForestRegressor, ExtraTreesRegressor
warnings.filterwarnings('ignore')
CACHE={}


def twos(x):
    """How many times 2 divides x (0 for x <= 0)."""
    x, c = int(x), 0
    while x > 0 and x % 2 == 0:
        x, c = x // 2, c + 1
    return c


def prep(d):
    """load(d) plus the features for feat='all': the indices, and for each numeric
    parameter of more than two positive values log2 of the value and how many times 2
    divides it, the latter only where it does not just relabel the values (as for 1, 2,
    4, 8). Like the C bayes's alignment coordinate (tf_alignment_coords), which adds it
    for the same parameters of these caches (block_size_x and the two tile sizes) by its
    own rule.
    For trees log2 adds no split the index lacks (it is a monotone map of it); only the
    alignment column does."""
    X, idx, T, vals = load(d)
    cols = [idx.astype(float)]
    for j in range(X.shape[1]):
        if len(vals[j]) > 2 and min(vals[j]) > 0:
            cols.append(np.log2(X[:, j:j + 1]))
            a = np.array([[twos(x)] for x in X[:, j]], float)
            distinct = len(set(a[:, 0]))
            relabels = distinct == len(vals[j])  # one count per value: no new grouping
            if distinct > 1 and not relabels:
                cols.append(a)
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
