#!/usr/bin/env python3
"""compare.py FAULTS.h5 CLEAN.h5 - the GPU fault benchmark's verdict.

FAULTS.h5 is a run of faults.yaml (transpose with 9 bad variants mixed in),
CLEAN.h5 a run of clean.yaml (the shipped transpose, same problem and
settings) taken after it on the same GPU. Prints the status of every bad
variant, whether every good one was measured, and each run's best
configuration with its time in both runs. Exit 1 if a bad variant has another
status than expected or a good one is not ok.
"""
import sys

import h5py
import numpy as np

PARAMS = ["TILE", "ROWS", "PAD", "VEC"]
EXPECTED = {1: "runtime_error", 2: "timeout", 3: "invalid"}


def load(path, kernel):
    with h5py.File(path, "r") as f:
        d = f["kernels/%s/results" % kernel][()]
        names = {v: k for k, v in h5py.check_enum_dtype(d.dtype["status"]).items()}
    return d, names


def key(row):
    return tuple(int(row[p]) for p in PARAMS)


def main():
    faults, names = load(sys.argv[1], "transpose_faults")
    clean, _ = load(sys.argv[2], "transpose")
    bad = 0
    for r in faults[faults["FAULT"] != 0]:
        status = names[int(r["status"])]
        ok = status == EXPECTED[int(r["FAULT"])]
        bad += not ok
        msg = r["message"].decode(errors="replace")[:70]
        print("FAULT=%d %s: %s%s  %s" % (int(r["FAULT"]), dict(zip(PARAMS, key(r))), status,
                                          "" if ok else " (UNEXPECTED)", msg))
    good = faults[faults["FAULT"] == 0]
    good_ok = int(np.sum(good["status"] == 0))
    clean_ok = int(np.sum(clean["status"] == 0))
    print("good variants measured ok: %d of %d beside the faults; %d of %d in the clean run"
          % (good_ok, len(good), clean_ok, len(clean)))
    bad += good_ok != len(good)
    times_f = {key(r): float(r["time_median"]) for r in good if r["status"] == 0}
    times_c = {key(r): float(r["time_median"]) for r in clean if r["status"] == 0}
    best_f = min(times_f, key=times_f.get)
    best_c = min(times_c, key=times_c.get)
    for label, b in (("with faults", best_f), ("clean", best_c)):
        print("best %-12s %s: %.2f us with faults, %.2f us clean"
              % (label, dict(zip(PARAMS, b)), 1e6 * times_f[b], 1e6 * times_c[b]))
    same = best_f == best_c
    print("same best configuration: %s%s" % ("yes" if same else "no",
          "" if same else " (the two bests differ by %.1f%% in the clean run)"
          % (100 * abs(times_c[best_f] / times_c[best_c] - 1))))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
