#!/usr/bin/env python3
"""Kernel Tuner 1.5's simulation mode on caches `tunefarm export --format kt-cache` wrote.

usage: kt_simulate.py [--fevals N] [--seeds S] CACHE...   (run with a Python that has
                                                          kernel_tuner, e.g. a venv)

For each cache: Kernel Tuner reads it (kernel_tuner.tune_cache: the arguments,
the problem size and the valid configurations inferred from the file), and
runs two of its search strategies on it in simulation mode (no GPU: every
configuration it asks for is answered from the cache), N distinct
configurations each, over S seeds. Prints what Kernel Tuner saw (device,
kernel, configurations, failures), each strategy's best time found against the
cache's best, the simulated tuning time Kernel Tuner accounted from the
recorded compile and benchmark times, and checks that Kernel Tuner left the
file as it was. Exits 1 if Kernel Tuner refuses a file or finds nothing."""
import argparse
import hashlib
import json
import random
import sys
import warnings

import numpy as np

import kernel_tuner


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fevals", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("caches", nargs="+")
    a = ap.parse_args()
    print("kernel_tuner %s, numpy %s" % (kernel_tuner.__version__, np.__version__))
    status = 0
    for path in a.caches:
        before = digest(path)
        with open(path) as f:
            doc = json.load(f)
        cache = doc["cache"]
        ok = {k: e["time"] for k, e in cache.items() if not isinstance(e["time"], str)}
        best = min(ok.values())
        failures = {}
        for e in cache.values():
            if isinstance(e["time"], str):
                failures[e["time"]] = failures.get(e["time"], 0) + 1
        print("\n%s: device %r, kernel %r, problem_size %s, %d configurations (%d ok%s); "
              "best time %.4f ms" % (path, doc["device_name"], doc["kernel_name"],
                                     doc["problem_size"], len(cache), len(ok),
                                     "".join(", %s %d" % kv for kv in sorted(failures.items())),
                                     best))
        fevals = min(a.fevals, len(ok))
        for strategy in ("random_sample", "genetic_algorithm"):
            found, simulated, distinct = [], [], []
            for seed in range(a.seeds):
                random.seed(seed)
                np.random.seed(seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # "no thread block dimensions": none here
                    try:
                        res, env = kernel_tuner.tune_cache(
                            path, strategy=strategy, strategy_options={"max_fevals": fevals},
                            quiet=True)
                    except Exception as e:  # a file Kernel Tuner refuses
                        print("  %s: Kernel Tuner refused the file: %s" % (strategy, e))
                        status = 1
                        break
                times = [r["time"] for r in res if r and "__error__" not in r]
                if not times:
                    print("  %s: no valid configuration found" % strategy)
                    status = 1
                    break
                keys = {",".join(str(r[p]) for p in doc["tune_params_keys"]) for r in res if r}
                found.append(min(times))
                simulated.append(env.get("simulated_time", float("nan")))
                distinct.append(len(keys))
            if found:
                print("  %-17s %d seeds x %d distinct configurations (of %d ok): best found "
                      "%.4f ms median over seeds (%.2fx the cache's best; worst seed %.2fx); "
                      "simulated tuning time %.1f s median; simulation device %r" %
                      (strategy, len(found), int(np.median(distinct)), len(ok),
                       float(np.median(found)), float(np.median(found)) / best,
                       max(found) / best, float(np.median(simulated)) / 1e3,
                       env.get("device_name")))
        after = digest(path)
        print("  file unchanged by Kernel Tuner: %s" % ("yes" if after == before else "NO"))
        if after != before:
            status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
