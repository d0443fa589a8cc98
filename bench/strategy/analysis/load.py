import ast, gzip, json, os, sys
import numpy as np
from scipy.stats import norm
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


def twos(v):
    """How many times 2 divides the positive integer v."""
    v = int(v); k = 0
    while v % 2 == 0:
        v //= 2; k += 1
    return k


def alignment_columns(X):
    """Per parameter (column of X), how many times 2 divides each value, where
    coordinator/strategy.c's tf_alignment_coords gives one: three or more values, all
    positive integers, not all powers of two, not all of one alignment. A list of
    n x 1 arrays, in the order of the parameters."""
    out = []
    for j in range(X.shape[1]):
        vals = sorted(set(X[:, j]))
        if len(vals) < 3 or not all(v >= 1 and v == int(v) for v in vals):
            continue
        if all(2 ** twos(v) == v for v in vals) or len({twos(v) for v in vals}) < 2:
            continue
        out.append(np.array([[twos(v)] for v in X[:, j]], float))
    return out


def log_times(t, penalty=0.5):
    """Log times of the results so far; a failure (inf) counts as the worst log time + penalty."""
    y = np.log(t)
    fin = np.isfinite(y)
    worst = y[fin].max() if fin.any() else 0.0
    return np.where(fin, y, worst + penalty)


def expected_improvement(m, s, best, xi=0.0):
    """EI of predictions m (std s) below `best` (all in log time), margin xi."""
    s = np.maximum(s, 1e-9)
    z = (best - m - xi) / s
    return (best - m - xi) * norm.cdf(z) + s * norm.pdf(z)


def parse_opts(text):
    """"refit=4,mode='log'" -> {'refit': 4, 'mode': 'log'} (Python literals, no eval)."""
    out = {}
    for item in filter(None, (x.strip() for x in text.split(','))):
        k, v = item.split('=', 1)
        out[k.strip()] = ast.literal_eval(v.strip())
    return out


def study(run, prep, cache, argv):
    """argv: BUDGET SEEDS [OPTS]. Fills cache[device] = prep(device), runs seeds 1..SEEDS of
    run(device, seed, budget, **opts) on each device, prints the mean quality per device and
    over the six, each with its standard error over seeds."""
    if len(argv) not in (3, 4) or not (argv[1].isdigit() and argv[2].isdigit()):
        sys.exit('usage: %s BUDGET SEEDS [OPTS]   (BUDGET: evaluations per search, SEEDS: '
                 'seeds 1..SEEDS, OPTS: name=value,... e.g. "batch=4")' % argv[0])
    budget, seeds = int(argv[1]), int(argv[2])
    kw = parse_opts(argv[3]) if len(argv) > 3 else {}
    for d in DEVS:
        cache[d] = prep(d)
    res, var = [], []
    for d in DEVS:
        q = [run(d, s, budget, **kw) for s in range(1, seeds + 1)]
        res.append(np.mean(q))
        var.append(np.var(q, ddof=1) / len(q) if len(q) > 1 else 0.0)
        print(d, '%.3f ± %.3f' % (np.mean(q), np.sqrt(var[-1])), end='; ', flush=True)
    # the standard error of the mean over seeds; for the average, from the per-device ones
    print('\nmean %.3f ± %.3f' % (np.mean(res), np.sqrt(np.sum(var)) / len(var)), kw, flush=True)


if __name__=='__main__':
    for dv in DEVS:
        X,idx,T,vals=load(dv)
        o=T.min(); s=np.sort(o/T)[::-1]
        print(dv,len(T),np.isinf(T).sum(),'within .95:',(o/T>=.95).sum(),'within .9:',(o/T>=.9).sum(), 'best', X[T.argmin()])
