"""Bayesian optimisation with hyperparameters it could not have: the GP's length
scales, signal and noise, and the standardisation of log time they belong to, are
fitted on a random 800 of the device's own configurations (what a search learns
only after measuring them); then a sequential EI search (one worker, no
fantasies) runs with them fixed. A comparison for the C `bayes`: if this falls
short of 0.95 at 2% too, estimating the hyperparameters from few results is not
what holds the search back.  usage: oracle.py BUDGET SEEDS [init=10,xi=0.0,std='fixed']
std='fixed': log time standardised as in the 800-configuration fit (the signal
variance belongs to it); std='run': over the results so far, as strategy_bayes.c."""
import sys, warnings, numpy as np
from load import load, DEVS, log_times, expected_improvement, study, alignment_columns
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import Matern, ConstantKernel as C, WhiteKernel
warnings.filterwarnings('ignore')


def feats(X, align):
    F = np.where(X.min(0) >= 1, np.log2(np.maximum(X, 1)), X)  # log2 where all values >= 1
    cols = [F]
    if align:
        cols += alignment_columns(X)
    F = np.hstack(cols)
    lo = F.min(0); hi = F.max(0)
    return (F - lo) / np.where(hi > lo, hi - lo, 1)


def prep(dev, align=1):
    X, idx, T, vals = load(dev)
    F = feats(X, align)
    rng = np.random.default_rng(12345)
    sub = rng.choice(len(T), 800, replace=False)
    y = log_times(T[sub]); mu, sd = y.mean(), y.std(); y = (y - mu) / sd
    kern = C(1.0, (1e-2, 1e2)) * Matern(length_scale=np.ones(F.shape[1]), length_scale_bounds=(1e-2, 1e2), nu=2.5) + WhiteKernel(1e-2, (1e-6, 1e0))
    k = GaussianProcessRegressor(kern, random_state=0).fit(F[sub], y).kernel_
    print(dev, k, flush=True)
    return F, T, k, mu, sd


def run(dev, seed, budget, init=10, xi=0.0, std='fixed'):
    if std not in ('fixed', 'run'):
        sys.exit("oracle.py: std is 'fixed' or 'run', not %r" % (std,))
    F, T, k, mu, sd = CACHE[dev]
    rng = np.random.default_rng(seed)
    n = len(T); seen = np.zeros(n, bool)
    order = list(rng.choice(n, init, replace=False))
    seen[order] = True
    while len(order) < budget:
        y = log_times(T[order])
        if std == 'fixed':  # the standardisation the hyperparameters were fitted in
            yn = (y - mu) / sd
        else:
            yn = (y - y.mean()) / (y.std() + 1e-9)
        gp = GaussianProcessRegressor(k, optimizer=None).fit(F[order], yn)
        cand = np.where(~seen)[0]
        m, s = gp.predict(F[cand], return_std=True)
        j = cand[np.argmax(expected_improvement(m, s, yn.min(), xi))]
        order.append(j); seen[j] = True
    return T.min() / T[order].min()


CACHE = {}
if __name__ == '__main__':
    study(run, prep, CACHE, sys.argv)
