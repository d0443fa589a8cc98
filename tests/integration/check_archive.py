#!/usr/bin/python3
"""Assertions on a tunefarm archive for the integration tests, read with h5py
and pandas only (no tunefarm code), the way a user's notebook would.

usage: check_archive.py ARCHIVE KERNEL [--rows N] [--run R] [--phase P] [--unique]
                        [--best P=V ...] [--status-where P=V:STATUS ...]
                        [--all-ok] [--runs N] [--two-phase K] [--print-best]
Always: every ok row has time_min <= time_median, and where at least five ok
rows have three samples or more, time_min < time_median in one of them at
least (a median that is really the minimum, or the other way round, would
pass every other check).
Exits 1 with a message on the first failed assertion."""
import argparse
import sys

import h5py
import numpy as np
import pandas as pd


def fail(msg):
    print("check_archive: " + msg, file=sys.stderr)
    sys.exit(1)


def decode(df):
    for col in df.columns:
        if df[col].dtype == object or df[col].dtype.kind == "S":
            df[col] = df[col].map(lambda v: v.decode() if isinstance(v, bytes) else v)
    return df


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("archive")
    ap.add_argument("kernel")
    ap.add_argument("--rows", type=int)
    ap.add_argument("--run", type=int)
    ap.add_argument("--phase", type=int)
    ap.add_argument("--runs", type=int)
    ap.add_argument("--unique", action="store_true")
    ap.add_argument("--all-ok", action="store_true")
    ap.add_argument("--best", nargs="*", default=[])
    ap.add_argument("--status-where", nargs="*", default=[])
    ap.add_argument("--two-phase", type=int, metavar="K")
    ap.add_argument("--print-best", action="store_true")
    a = ap.parse_args()

    with h5py.File(a.archive, "r") as f:
        fmt = f.attrs.get("format")
        if isinstance(fmt, bytes):
            fmt = fmt.decode()
        if fmt != "tunefarm-archive":
            fail("format attribute is %r" % (fmt,))
        if a.runs is not None and len(f["runs"]) != a.runs:
            fail("expected %d runs, found %d" % (a.runs, len(f["runs"])))
        ds = f["kernels/%s/results" % a.kernel]
        param_names = [n.decode() if isinstance(n, bytes) else str(n)
                       for n in f["kernels/%s" % a.kernel].attrs["parameter_names"]]
        status_names = {v: k for k, v in h5py.check_enum_dtype(ds.dtype["status"]).items()}
        df = decode(pd.DataFrame(ds[()]))
    df["status"] = df["status"].map(status_names)
    if a.run is not None:
        df = df[df["run"] == a.run]
    if a.phase is not None:
        df = df[df["phase"] == a.phase]
    ok = df[df["status"] == "ok"]
    upside_down = ok[ok["time_min"] > ok["time_median"]]
    if not upside_down.empty:
        fail("time_min > time_median in %d ok rows (configs %s)"
             % (len(upside_down), upside_down["config"].tolist()[:5]))
    sampled = ok[ok["samples"] >= 3]
    if len(sampled) >= 5 and not (sampled["time_min"] < sampled["time_median"]).any():
        fail("time_min == time_median in all %d ok rows of 3+ samples: the median is not "
             "a median (or the minimum not a minimum)" % len(sampled))
    if a.rows is not None and len(df) != a.rows:
        fail("expected %d rows, found %d" % (a.rows, len(df)))
    if a.unique:
        dup = df.duplicated(subset=["run", "device", "problem", "config", "phase"])
        if dup.any():
            fail("configurations measured twice: %s" % df[dup]["config"].tolist())
    if a.all_ok and not (df["status"] == "ok").all():
        bad = df[df["status"] != "ok"][["config", "status", "message"]]
        fail("not every row is ok:\n%s" % bad.to_string())
    if a.best:
        ok = df[df["status"] == "ok"]
        if ok.empty:
            fail("no ok row")
        best = ok.loc[ok["time_median"].idxmin()]
        for pv in a.best:
            p, v = pv.split("=", 1)
            if str(best[p]) != v:
                fail("best configuration has %s=%s, expected %s (best row: %s)"
                     % (p, best[p], v, best.to_dict()))
    for spec in a.status_where:
        cond, status = spec.split(":", 1)
        p, v = cond.split("=", 1)
        rows = df[df[p].astype(str) == v]
        if rows.empty:
            fail("no row with %s=%s" % (p, v))
        got = set(rows["status"])
        if got != {status}:
            fail("rows with %s=%s have statuses %s, expected only %s (messages: %s)"
                 % (p, v, sorted(got), status, sorted(set(rows["message"]))[:3]))
    if a.two_phase is not None:
        # Phase 2 re-measures exactly the K fastest ok configurations of phase 1;
        # equal screened medians (timings are whole nanoseconds) go to the lower
        # configuration index, as the coordinator breaks them.
        screened = df[(df["phase"] == 1) & (df["status"] == "ok")]
        expect = set(screened.sort_values(["time_median", "config"])["config"].head(a.two_phase))
        got = set(df[df["phase"] == 2]["config"])
        if got != expect:
            fail("phase 2 measured %s, the %d fastest screened are %s"
                 % (sorted(got), a.two_phase, sorted(expect)))
    if a.print_best:
        final = df[(df["status"] == "ok") & (df["phase"] != 1)]
        best = final.loc[final["time_median"].idxmin()]
        print(" ".join("%s=%s" % (p, best[p]) for p in param_names))
        return
    print("check_archive: %s %s: %d rows ok" % (a.archive, a.kernel, len(df)))


if __name__ == "__main__":
    main()
