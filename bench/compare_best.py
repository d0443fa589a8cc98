#!/usr/bin/env python3
"""bench/compare_best.py - the best time per (kernel, problem, device) of several
archives side by side, e.g. the same job run with different search strategies.

usage: bench/compare_best.py LABEL=ARCHIVE [LABEL=ARCHIVE...]

Reads each archive through `tunefarm export --format csv` (TF: the tunefarm binary,
default ./tunefarm) and prints, per kernel, problem and device: each archive's best
ok time_median, ok results, and its speed relative to the first archive's best
(first best / this best: > 1 is faster). The last line is the geometric mean of
those ratios over the rows every archive has."""
import io, math, os, subprocess, sys

import pandas as pd

tf = os.environ.get("TF", "./tunefarm")
runs = [a.split("=", 1) for a in sys.argv[1:]]
if not runs or any(len(r) != 2 for r in runs):
    sys.exit(__doc__)
best = {}
for label, path in runs:
    csv = subprocess.run([tf, "export", path, "--format", "csv"], check=True,
                         capture_output=True, text=True).stdout
    d = pd.read_csv(io.StringIO(csv))
    ok = d[d.status == "ok"]
    g = ok.groupby(["kernel", "problem_name", "device_name"])
    best[label] = pd.DataFrame({"best": g.time_median.min(), "ok": g.size()})
labels = [r[0] for r in runs]
keys = sorted(set().union(*[set(b.index) for b in best.values()]))
print("| kernel | problem | device | " + " | ".join("%s best (ok)" % l for l in labels) +
      " | " + " | ".join("%s vs %s" % (l, labels[0]) for l in labels[1:]) + " |")
print("|---" * (3 + 2 * len(labels) - 1) + "|")
logs = {l: [] for l in labels[1:]}
for k in keys:
    cells, ratios = [], []
    for l in labels:
        b = best[l]
        cells.append("%.4g ms (%d)" % (b.loc[k, "best"] * 1e3, b.loc[k, "ok"]) if k in b.index else "-")
    for l in labels[1:]:
        if k in best[l].index and k in best[labels[0]].index:
            r = best[labels[0]].loc[k, "best"] / best[l].loc[k, "best"]
            ratios.append("%.3f" % r)
            logs[l].append(math.log(r))
        else:
            ratios.append("-")
    print("| %s | %s | %s | %s | %s |" % (k[0], k[1], k[2], " | ".join(cells), " | ".join(ratios)))
print()
for l in labels[1:]:
    if logs[l]:
        print("%s vs %s: geometric mean speed ratio %.3f over %d rows" % (
            l, labels[0], math.exp(sum(logs[l]) / len(logs[l])), len(logs[l])))
