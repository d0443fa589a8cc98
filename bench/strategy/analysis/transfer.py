"""transfer.py BUDGET SEEDS [OPTS] - a warm start whose model also sees the other devices.

Sequential expected improvement on one target device, the other five caches being the
fleet (as `bench/strategy/study --warm-others`). The GP is bo.py's (Matern 5/2, ARD,
white noise) on nearly the C `bayes`'s features: log2 of each size in [0, 1] plus the
alignment columns (load.alignment_columns), left unscaled here (strategy_bayes.c and
oracle.py's feats scale them to [0, 1]; an ARD length scale absorbs the scale, up to
the fit's start and bounds). OPTS `mode`:

  'cold'   `init` random configurations, then expected improvement on the target's
           results (the C `bayes`, one worker, no fantasies).
  'seeds'  each other device's fastest configuration first (`warm_count: 1`), the
           seeds taking the place of as many random starts, then as 'cold'. What a
           job's `warm_start: same` does today.
  'task'   the same seeds and random starts, and the model also sees `per` results
           of each other device: its `top` fastest and the rest drawn at random,
           each device's log times standardised on their own. One more coordinate
           tells them apart, 0 on the target and 1 on a source; its fitted length
           scale says how far the sources speak for the target (long where the fleet
           agrees with it, short where it does not, as on A100). Proposals are the
           target's unseen configurations only.

`refit`: the hyperparameters are fitted every `refit` results (bo.py's rule). A source's
sample is drawn from the seed, so 'task' runs are deterministic in (device, seed).
`sources='vendor'`: only the other vendor's devices are the fleet.
A prototype to decide whether a transfer model is worth writing in C (strategy_bayes.c
sees only the seeds' results today); `bench/results/warm-fleet-2026-11-28.md`.
"""
import sys, warnings
import numpy as np
from load import load, DEVS, log_times, expected_improvement, study, alignment_columns
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import Matern, ConstantKernel as C, WhiteKernel
warnings.filterwarnings('ignore')

CACHE = {}


def features(X):
    """log2 of each parameter (values >= 1; 0/1 flags as they are) in [0, 1], then the
    alignment columns as they are (how many times 2 divides the value; unscaled, unlike
    strategy_bayes.c: the section-4 numbers were made with this)."""
    F = np.where(X.min(0) >= 1, np.log2(np.maximum(X, 1)), X)
    lo, hi = F.min(0), F.max(0)
    F = (F - lo) / np.where(hi > lo, hi - lo, 1)
    return np.hstack([F] + alignment_columns(X))


def prep(dev):
    X, idx, T, vals = load(dev)
    return X, T, features(X), {tuple(r): i for i, r in enumerate(X)}


def standardise(y):
    return (y - y.mean()) / (y.std() + 1e-9)


def fleet(dev, sources):
    """The devices that warm-start `dev`: every other one ('others'), or only those of
    the other vendor ('vendor': NVIDIA A*, AMD MI*/W*), the harder transfer."""
    amd = lambda d: not d.startswith('A')
    return [s for s in DEVS if s != dev and (sources == 'others' or amd(s) != amd(dev))]


def run(dev, seed, budget, mode='task', init=12, per=24, top=8, refit=4, xi=0.0,
        sources='others'):
    X, T, F, where = CACHE[dev]
    rng = np.random.default_rng(seed)
    n = len(T)
    seen = np.zeros(n, bool)
    order = []
    if mode in ('seeds', 'task'):
        for src in fleet(dev, sources):
            Xs, Ts, _, _ = CACHE[src]
            for i in np.argsort(Ts):  # the source's fastest that exists here
                j = where.get(tuple(Xs[i]))
                if j is not None:
                    if not seen[j]:
                        order.append(j); seen[j] = True
                    break
    while len(order) < init:  # the random start; seeds count towards it
        j = int(rng.integers(n))
        if not seen[j]:
            order.append(j); seen[j] = True
    # The sources' samples (task mode): features with the task coordinate 1.
    SX, Sy = np.zeros((0, F.shape[1] + 1)), np.zeros(0)
    if mode == 'task':
        parts_x, parts_y = [], []
        for src in fleet(dev, sources):
            Xs, Ts, Fs, _ = CACHE[src]
            ok = np.isfinite(Ts)
            best = np.argsort(Ts)[:top]
            rest = np.setdiff1d(np.where(ok)[0], best)
            pick = np.concatenate([best, rng.choice(rest, per - top, replace=False)])
            # the source's configurations in the target's feature space (same space)
            parts_x.append(np.hstack([F[[where[tuple(Xs[i])] for i in pick]],
                                      np.ones((len(pick), 1))]))
            parts_y.append(standardise(np.log(Ts[pick])))
        SX, Sy = np.vstack(parts_x), np.concatenate(parts_y)
    d = F.shape[1] + (1 if mode == 'task' else 0)
    kern = None
    while len(order) < budget:
        y = standardise(log_times(T[order]))
        FX = F[order] if mode != 'task' else np.hstack([F[order], np.zeros((len(order), 1))])
        XX, yy = np.vstack([SX, FX]) if mode == 'task' else FX, np.concatenate([Sy, y])
        if kern is None or len(order) % refit == 0:
            k0 = (C(1.0, (1e-2, 1e2)) * Matern(length_scale=np.ones(d), length_scale_bounds=(1e-2, 1e2), nu=2.5)
                  + WhiteKernel(1e-2, (1e-6, 1e0)))
            gp = GaussianProcessRegressor(k0, n_restarts_optimizer=0, random_state=0).fit(XX, yy)
            kern = gp.kernel_
        else:
            gp = GaussianProcessRegressor(kern, optimizer=None).fit(XX, yy)
        cand = np.where(~seen)[0]
        FC = F[cand] if mode != 'task' else np.hstack([F[cand], np.zeros((len(cand), 1))])
        m, s = gp.predict(FC, return_std=True)
        j = cand[np.argmax(expected_improvement(m, s, y.min(), xi))]
        order.append(j); seen[j] = True
    return T.min() / T[order].min()


if __name__ == '__main__':
    study(run, prep, CACHE, sys.argv)
