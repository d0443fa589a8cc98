#!/usr/bin/env python3
"""bench/gpus_report.py - per-GPU numbers of multi-GPU runs (issue 16 item 2).

usage: bench/gpus_report.py duty ARCHIVE
         per device (by PCI bus id): results, the span between its first and last
         result, configurations/s and duty cycle (device_time / span); then per
         device model (the GPUs of one class together): results and the span from
         the class's first to its last result, which is what scales with GPUs in a
         job whose host kernels take their own time
       bench/gpus_report.py agree ARCHIVE...
         the same configurations measured on different GPUs, one archive per GPU
         (each a run on that GPU alone): Spearman rank correlation of time_median
         for every pair over the configurations ok on both, and the spread of the
         fastest configuration (fastest in the first archive) across all of them
Needs h5py and numpy."""
import sys

import h5py
import numpy as np


def rows(path):
    out = []
    with h5py.File(path, "r") as f:
        dev = f["devices"][()]
        bus = {int(d["id"]): d["pci_bus"].decode() or d["uuid"].decode() or "%s #%d" % (
            d["name"].decode(), int(d["id"])) for d in dev}
        model = {int(d["id"]): d["name"].decode() for d in dev}
        for k in f["kernels"]:
            t = f["kernels/%s/results" % k][()]
            names = {v: n for n, v in h5py.check_enum_dtype(t.dtype["status"]).items()}
            for r in t:
                out.append((k, bus.get(int(r["device"]), "?"), int(r["config"]), names[int(r["status"])],
                            float(r["time_median"]), float(r["device_time"]), float(r["timestamp"]),
                            model.get(int(r["device"]), "?")))
    return out


def duty(path):
    rs = rows(path)
    for b in sorted({r[1] for r in rs}):
        mine = [r for r in rs if r[1] == b]
        ts = [r[6] for r in mine]
        span = max(ts) - min(ts)
        gpu = float(np.nansum([r[5] for r in mine]))
        print("device %s: %d results over %.2f s: %.1f configurations/s, duty cycle %.1f%%" % (
            b, len(mine), span, len(mine) / span if span > 0 else 0, 100 * gpu / span if span > 0 else 0))
    for m in sorted({r[7] for r in rs}):
        ts = [r[6] for r in rs if r[7] == m]
        span = max(ts) - min(ts)
        print("model %s: %d results over %.2f s, first to last: %.2f configurations/s" % (
            m, len(ts), span, len(ts) / span if span > 0 else 0))


def ranks(x):
    order = np.argsort(x)
    r = np.empty(len(x))
    r[order] = np.arange(len(x))
    return r


def agree(paths):
    times = []
    for p in paths:
        times.append({(r[0], r[2]): r[4] for r in rows(p) if r[3] == "ok"})
    for i in range(len(paths)):
        for j in range(i + 1, len(paths)):
            common = sorted(set(times[i]) & set(times[j]))
            a = np.array([times[i][c] for c in common])
            b = np.array([times[j][c] for c in common])
            rho = np.corrcoef(ranks(a), ranks(b))[0, 1] if len(common) > 2 else float("nan")
            print("GPU %d vs GPU %d: Spearman %.4f over %d configurations" % (i, j, rho, len(common)))
    best = min(times[0], key=times[0].get)
    bt = [t.get(best, float("nan")) for t in times]
    print("fastest configuration on GPU 0 (%s %d): %s ms; spread (slowest / fastest - 1) %.2f%%" % (
        best[0], best[1], ", ".join("%.4f" % (x * 1e3) for x in bt),
        100 * (np.nanmax(bt) / np.nanmin(bt) - 1)))


if len(sys.argv) < 3 or sys.argv[1] not in ("duty", "agree"):
    sys.exit(__doc__)
duty(sys.argv[2]) if sys.argv[1] == "duty" else agree(sys.argv[2:])
