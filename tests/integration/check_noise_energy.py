#!/usr/bin/python3
"""The noisy and energy_status columns of a tunefarm archive, read with h5py
and pandas only, for tests/integration/noise_energy.sh.

usage: check_noise_energy.py ARCHIVE KERNEL --max-noise X [--noisy-where P=V ...]
           [--energy STATUS ...] [--per-joule METRIC=SIZE] [--watts W]
           [--summary FILE] [--query FILE]

Always: every ok row is noisy exactly when its time_rsd is above max_noise
(the protocol stops early only once rsd <= max_noise); failed rows are not
noisy and have energy_status not_run; a row has energy_j exactly when its
energy_status is measured. --noisy-where: rows with that parameter value are
noisy. --energy: the ok rows' energy statuses are among these. --per-joule:
the metric equals SIZE / (energy_j / samples) where measured, NaN elsewhere.
--watts: a launch's energy (energy_j / samples) is what W watts give over its
time, no less than 0.8 x W x time_min (the window's bound is 10%) and no more
than 20 x W x time_mean (a loaded machine's gaps between launches count).
--summary / --query: the "Noisy:" and "Energy:" lines of a run's summary or of
`tunefarm query`, and query's noisy column, agree with the archive.
Exits 1 with a message on the first failed assertion."""
import argparse
import math
import re
import sys

import h5py
import pandas as pd


def fail(msg):
    print("check_noise_energy: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("archive")
    ap.add_argument("kernel")
    ap.add_argument("--max-noise", type=float, required=True)
    ap.add_argument("--noisy-where", nargs="*", default=[])
    ap.add_argument("--energy", nargs="*")
    ap.add_argument("--per-joule")
    ap.add_argument("--watts", type=float)
    ap.add_argument("--summary")
    ap.add_argument("--query")
    a = ap.parse_args()

    with h5py.File(a.archive, "r") as f:
        ds = f["kernels/%s/results" % a.kernel]
        for col in ("noisy", "energy_status"):
            if col not in ds.dtype.names:
                fail("%s has no column '%s'" % (ds.name, col))
        status = {v: k for k, v in h5py.check_enum_dtype(ds.dtype["status"]).items()}
        energy = {v: k for k, v in h5py.check_enum_dtype(ds.dtype["energy_status"]).items()}
        df = pd.DataFrame(ds[()])
        problems = pd.DataFrame(f["kernels/%s/problems" % a.kernel][()])
    df["status"] = df["status"].map(status)
    df["energy_status"] = df["energy_status"].map(energy)
    ok = df[df.status == "ok"]
    bad = df[df.status != "ok"]
    if ok.empty:
        fail("no ok rows")

    # noisy: exactly the ok rows whose spread stayed above max_noise
    near = (ok.time_rsd - a.max_noise).abs() < 1e-9  # (running vs two-pass rsd)
    want = ok.time_rsd > a.max_noise
    wrong = ok[(ok.noisy.astype(bool) != want) & ~near]
    if len(wrong):
        r = wrong.iloc[0]
        fail("config %d: noisy %d with time_rsd %.4g and max_noise %g"
             % (r.config, r.noisy, r.time_rsd, a.max_noise))
    if len(bad) and (bad.noisy != 0).any():
        fail("a failed row is marked noisy")
    if len(bad) and (bad.energy_status != "not_run").any():
        fail("a failed row's energy_status is not not_run: %s" % list(bad.energy_status))
    for cond in a.noisy_where:
        p, v = cond.split("=")
        rows = ok[ok[p].astype(str) == v]
        if rows.empty:
            fail("no ok row with %s" % cond)
        if (rows.noisy != 1).any():
            fail("rows with %s are not all noisy (time_rsd %s)" % (cond, list(rows.time_rsd)))

    # energy: there exactly when measured, and why not otherwise
    measured = df.energy_status == "measured"
    if df[measured].energy_j.isna().any() or (df[measured].energy_j <= 0).any():
        fail("a measured row has no positive energy_j")
    if df[~measured].energy_j.notna().any():
        fail("a row that is not measured has an energy_j")
    if a.energy is not None:
        others = set(ok.energy_status) - set(a.energy)
        if others:
            fail("ok rows with energy_status %s, expected only %s" % (sorted(others), a.energy))
    per_launch = ok.energy_j / ok.samples
    if a.per_joule:
        metric, size = a.per_joule.split("=")
        sizes = problems[size].to_numpy()[ok.problem.to_numpy()]
        expect = sizes / per_launch.to_numpy()
        got = ok[metric].to_numpy()
        for e, g in zip(expect, got):
            if math.isnan(e) != math.isnan(g) or (not math.isnan(e) and abs(g / e - 1) > 1e-9):
                fail("%s is %r where %s / (energy_j / samples) is %r" % (metric, g, size, e))
    if a.watts is not None:
        m = ok[ok.energy_status == "measured"]
        if m.empty:
            fail("no measured row to check the watts against")
        for _, r in m.iterrows():
            e = r.energy_j / r.samples
            lo, hi = 0.8 * a.watts * r.time_min, 20 * a.watts * r.time_mean
            if not lo <= e <= hi:
                fail("config %d: %.4g J a launch, outside %.4g..%.4g J (%g W over %.4g..%.4g s)"
                     % (r.config, e, lo, hi, a.watts, r.time_min, r.time_mean))

    noisy, n_ok = int(ok.noisy.sum()), len(ok)
    n_measured = int((ok.energy_status == "measured").sum())
    for path in filter(None, (a.summary, a.query)):
        text = open(path).read()
        line = "Noisy: %d of %d ok results" % (noisy, n_ok)
        if line not in text:
            fail("%s does not say '%s':\n%s" % (path, line, text))
        line = "Energy: measured for %d of %d ok results" % (n_measured, n_ok)
        if line not in text:
            fail("%s does not say '%s':\n%s" % (path, line, text))
        for s in set(ok.energy_status) - {"measured"}:
            count = int((ok.energy_status == s).sum())
            if "%s %d" % (s, count) not in text:
                fail("%s does not count %d %s" % (path, count, s))
        # the table: one line for the kernel (one problem, one class); its
        # noisy column follows ok/total
        rows = [l for l in text.splitlines() if l.startswith(a.kernel + " ")]
        if len(rows) != 1:
            fail("%s: expected one table line for %s, found %d" % (path, a.kernel, len(rows)))
        m = re.search(r" (\d+)/(\d+) +(\d+) ", rows[0])
        if not m or int(m.group(3)) != noisy:
            fail("%s: the noisy column of '%s' is not %d" % (path, rows[0], noisy))
    print("%s: %d ok rows, %d noisy, energy %s" % (
        a.kernel, n_ok, noisy, dict(ok.energy_status.value_counts())))


if __name__ == "__main__":
    main()
