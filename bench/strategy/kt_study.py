#!/usr/bin/env python3
"""Kernel Tuner 1.5's own strategies on the convolution caches (simulation mode).

The default --strategies are the five of bench/results/strategy-study-2026-11-23.md;
every other strategy that runs is in bench/results/kt-strategies-2026-11-28.md.

usage: kt_study.py [--seeds N] [--budgets 0.5,1,2,5] [--strategies a,b] CACHE.json...

The same measure as bench/strategy/study: for each cache (uncompressed Kernel
Tuner cache of the convolution_milo space), each strategy and each budget
(percent of the valid space, rounded up, as max_fevals), the mean over seeds
1..N of (optimum time / best time found), per device and averaged. Kernel Tuner
has no seed option: Python's and NumPy's generators are seeded before each run.
The restrictions are the T1 file's four, so Kernel Tuner knows the valid set
up front exactly like tunefarm's replay. Not a test dependency: run it in a
virtual environment (python3 -m venv /tmp/kt && /tmp/kt/bin/pip install
kernel_tuner)."""
import argparse
import json
import math
import os
import random
import sys
import time
import warnings

import numpy as np

import kernel_tuner

RESTRICTIONS = [
    "use_padding==0 or block_size_x % 32 != 0",
    "block_size_x*block_size_y<=1024",
    "use_padding==0 or use_shmem != 0",
    "use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*((block_size_y*tile_size_y+(filter_height-1)))) < 12*1024",
]


def run(cache, data, strategy, budget, seed):
    random.seed(seed)
    np.random.seed(seed)
    args = [np.zeros(1, np.float32)] * 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = kernel_tuner.tune_kernel(
            data["kernel_name"], "__global__ void convolution_kernel() {}", tuple(data["problem_size"]), args,
            data["tune_params"], grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
            restrictions=RESTRICTIONS, cache=cache, simulation_mode=True, strategy=strategy,
            strategy_options={"max_fevals": budget}, verbose=False, quiet=True)
    times = [r["time"] for r in results if isinstance(r.get("time"), (int, float)) and math.isfinite(r["time"])]
    return min(times) if times else math.inf, len(results)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=25)
    ap.add_argument("--budgets", default="0.5,1,2,5")
    ap.add_argument("--strategies", default="random_sample,genetic_algorithm,simulated_annealing,dual_annealing,bayes_opt")
    ap.add_argument("caches", nargs="+")
    a = ap.parse_args()
    caches = []
    for path in a.caches:
        with open(path) as f:
            data = json.load(f)
        valid = [v for v in data["cache"].values() if v["time"] != "InvalidConfig"]
        opt = min(v["time"] for v in valid if not isinstance(v["time"], str))
        caches.append((path, data, len(valid), opt))
    names = [os.path.basename(p).split(".")[0] for p, *_ in caches]
    print(f"Kernel Tuner {kernel_tuner.__version__} simulation mode, seeds 1..{a.seeds}, "
          "mean of optimum time / best time found\n")
    print("| strategy | budget | " + " | ".join(names) + " | mean | s/run |")
    print("|---|---|" + "---|" * (len(names) + 2))
    sys.stdout.flush()
    for strategy in a.strategies.split(","):
        for pct in a.budgets.split(","):
            qs, t0, runs = [], time.time(), 0
            for path, data, nvalid, opt in caches:
                budget = math.ceil(float(pct) / 100 * nvalid - 1e-9)
                q = 0.0
                for seed in range(1, a.seeds + 1):
                    best, _ = run(path, data, strategy, budget, seed)
                    q += opt / best if math.isfinite(best) else 0.0
                    runs += 1
                qs.append(q / a.seeds)
            print(f"| {strategy} | {pct}% | " + " | ".join(f"{q:.3f}" for q in qs) +
                  f" | **{sum(qs) / len(qs):.3f}** | {(time.time() - t0) / runs:.2f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
