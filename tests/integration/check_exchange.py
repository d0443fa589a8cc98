#!/usr/bin/python3
"""Checks of `tunefarm export` / `tunefarm import` files for the integration
tests (tests/integration/exchange.sh), with Debian's h5py, pandas and
jsonschema only: the archive is read with h5py, never with tunefarm's code.

usage: check_exchange.py csv ARCHIVE CSV          every row and column of the archive, as
                                                  pandas.read_csv reads the CSV (no options)
       check_exchange.py json ARCHIVE JSON        the JSON export holds the archive's rows
       check_exchange.py t4 RESULTS METADATA SCHEMAS  both validate (and a damaged copy does not)
       check_exchange.py kt CACHE                 a Kernel Tuner cache as Kernel Tuner reads it
       check_exchange.py kt-roundtrip F G         G holds F's configurations and times
       check_exchange.py t4-roundtrip F G         the same for T4 files
       check_exchange.py t4-columns ARCHIVE BACK  BACK (ARCHIVE exported as T4, imported) has
                                                  each configuration's row with its columns
       check_exchange.py best CACHE               the lowest median of F's samples, as query prints it
Exits 1 with a message on the first failed check."""
import copy
import gzip
import json
import math
import sys
import warnings

import h5py
import numpy as np
import pandas as pd


def fail(msg):
    print("check_exchange: " + msg, file=sys.stderr)
    sys.exit(1)


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def archive_rows(path):
    """Per kernel: (DataFrame of results with status names and decoded strings,
    problems, devices, runs)."""
    out = {}
    with h5py.File(path, "r") as f:
        devices = pd.DataFrame(f["devices"][()])
        runs = pd.DataFrame(f["runs"][()])
        for name in f["kernels"]:
            ds = f["kernels"][name]["results"]
            df = pd.DataFrame(ds[()], columns=list(ds.dtype.names))
            names = {v: k for k, v in h5py.check_enum_dtype(ds.dtype["status"]).items()}
            df["status"] = df["status"].map(names)
            if "energy_status" in df.columns:  # by name, as status (archives before it lack it)
                energy = h5py.check_enum_dtype(ds.dtype["energy_status"])
                df["energy_status"] = df["energy_status"].map({v: k for k, v in energy.items()})
            for col in df.columns:
                if df[col].dtype == object:
                    df[col] = df[col].map(text)
            problems = pd.DataFrame(f["kernels"][name]["problems"][()])
            out[name] = (df, problems)
    for frame in (devices, runs):
        for col in frame.columns:
            if frame[col].dtype == object:
                frame[col] = frame[col].map(text)
    return out, devices, runs


def same_number(a, b):
    if isinstance(a, float) and math.isnan(a):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return b is not None and not (isinstance(b, float) and math.isnan(b)) and \
        math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0)


def check_csv(archive, path):
    kernels, devices, runs = archive_rows(archive)
    with warnings.catch_warnings(record=True):  # a DtypeWarning is not an error
        warnings.simplefilter("always")
        csv = pd.read_csv(path)
    total = sum(len(df) for df, _ in kernels.values())
    if len(csv) != total:
        fail("%s: %d rows, the archive has %d" % (path, len(csv), total))
    at = 0
    for name, (df, problems) in kernels.items():
        part = csv.iloc[at:at + len(df)].reset_index(drop=True)
        at += len(df)
        if not (part["kernel"] == name).all():
            fail("%s: rows of kernel %s out of place" % (path, name))
        for col in df.columns:
            if col not in csv.columns:
                fail("%s: no column %s" % (path, col))
            for i in range(len(df)):
                a, b = df[col].iloc[i], part[col].iloc[i]
                if isinstance(a, str):
                    ok = (a == "" and isinstance(b, float) and math.isnan(b)) or a == text(b)
                else:
                    ok = same_number(float(a), None if pd.isna(b) else float(b))
                if not ok:
                    fail("%s: kernel %s row %d column %s: %r in the archive, %r in the CSV"
                         % (path, name, i, col, a, b))
        # joined columns
        for i in range(len(df)):
            d, r, p = int(df["device"].iloc[i]), int(df["run"].iloc[i]), int(df["problem"].iloc[i])
            want = {"device_name": devices["name"][d], "device_arch": devices["arch"][d],
                    "device_host": devices["host"][d], "run_start": runs["start"][r],
                    "job_name": runs["job_name"][r], "problem_name": text(problems["name"][p])}
            for col, v in want.items():
                got = part[col].iloc[i]
                if not ((v == "" and pd.isna(got)) or text(got) == v):
                    fail("%s: row %d %s is %r, expected %r" % (path, i, col, got, v))
    print("%s: %d rows, %d columns match %s" % (path, len(csv), len(csv.columns), archive))


def check_json(archive, path):
    kernels, devices, runs = archive_rows(archive)
    doc = load(path)
    if doc.get("format") != "tunefarm-export":
        fail("%s: format is %r" % (path, doc.get("format")))
    got = {k["name"]: k for k in doc["kernels"]}
    if set(got) != set(kernels):
        fail("%s: kernels %s, archive %s" % (path, sorted(got), sorted(kernels)))
    for name, (df, _) in kernels.items():
        res = got[name]["results"]
        if len(res) != len(df):
            fail("%s: %s has %d results, archive %d" % (path, name, len(res), len(df)))
        for i, r in enumerate(res):
            for col in ("config", "status", "time_median", "time_mean", "compile_time",
                        "noisy", "energy_status"):
                a, b = df[col].iloc[i], r[col]
                ok = a == b if isinstance(a, str) else same_number(float(a), b)
                if not ok:
                    fail("%s: %s result %d %s: %r vs %r" % (path, name, i, col, a, b))
    ids = {d["id"] for d in doc["devices"]}
    for k in doc["kernels"]:
        for r in k["results"]:
            if r["device"] not in ids:
                fail("%s: a result's device %d is not in devices" % (path, r["device"]))
    print("%s: %d kernels, rows match %s" % (path, len(got), archive))


def check_t4(results, metadata, schemas):
    import jsonschema
    rs = load(schemas + "/results-schema.json")
    ms = load(schemas + "/metadata-schema.json")
    doc, meta = load(results), load(metadata)
    jsonschema.validate(doc, rs)
    jsonschema.validate(meta, ms)
    # The validator must be able to say no: a result without its invalidity.
    broken = copy.deepcopy(doc)
    del broken["results"][0]["invalidity"]
    try:
        jsonschema.validate(broken, rs)
    except jsonschema.ValidationError:
        pass
    else:
        fail("a T4 result without invalidity validated: the check cannot fail")
    print("%s (%d results) and %s validate" % (results, len(doc["results"]), metadata))


def py_str(v):
    return str(v)


def check_kt(path):
    with open(path) as f:
        raw = f.read().strip()
    # Kernel Tuner reads a cache as closed only if it ends so (util.correct_open_cache).
    if raw[-3:] not in ("}\n}", "}}}"):
        fail("%s does not end as a closed Kernel Tuner cache" % path)
    doc = json.loads(raw)
    keys, params = doc["tune_params_keys"], doc["tune_params"]
    for field in ("device_name", "kernel_name", "problem_size", "objective"):
        if field not in doc:
            fail("%s: no %s" % (path, field))
    errors = {"InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig"}
    for key, e in doc["cache"].items():
        if key != ",".join(py_str(e[k]) for k in keys):
            fail("%s: key %r is not the values %r" % (path, key, [e[k] for k in keys]))
        for k in keys:
            if e[k] not in params[k]:
                fail("%s: %s=%r not in tune_params" % (path, k, e[k]))
        t = e["time"]
        if not (isinstance(t, float) or t in errors):
            fail("%s: %s time %r" % (path, key, t))
        for k in ("compile_time", "verification_time", "benchmark_time"):
            if not isinstance(e.get(k), (int, float)):
                fail("%s: %s has no %s (simulated time budgets need it)" % (path, key, k))
    print("%s: %d entries, keys as Kernel Tuner makes them" % (path, len(doc["cache"])))


def close(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def kt_roundtrip(fpath, gpath):
    F, G = load(fpath), load(gpath)
    for field in ("tune_params_keys", "tune_params", "kernel_name", "objective"):
        if F[field] != G[field]:
            fail("%s: %s differs" % (gpath, field))
    if set(F["cache"]) != set(G["cache"]):
        fail("%s: %d configurations differ" % (gpath, len(set(F["cache"]) ^ set(G["cache"]))))
    fields = ["time", "compile_time", "benchmark_time", "timestamp"] + F["tune_params_keys"]
    metrics = {k for e in F["cache"].values() for k, v in e.items()
               if isinstance(v, float) and k not in fields and k not in
               ("times", "verification_time", "strategy_time", "framework_time")}
    for key, e in F["cache"].items():
        g = G["cache"][key]
        for k in fields + sorted(metrics):
            if not close(e.get(k), g.get(k)):
                fail("%s: %s %s: %r, was %r" % (gpath, key, k, g.get(k), e.get(k)))
    print("%s: the %d configurations of %s with their statuses, times, compile and benchmark "
          "times, timestamps and %s" % (gpath, len(F["cache"]), fpath, ", ".join(sorted(metrics))))


def measurement(r, name):
    for m in r.get("measurements", []):
        if m["name"] == name:
            return m["value"]
    return None


def t4_roundtrip(fpath, gpath):
    F, G = load(fpath), load(gpath)

    def index(doc):
        return {json.dumps(r["configuration"], sort_keys=True): r for r in doc["results"]}
    f, g = index(F), index(G)
    if len(f) != len(F["results"]) or set(f) != set(g):
        fail("%s: configurations differ from %s" % (gpath, fpath))
    for key, a in f.items():
        b = g[key]
        ta, tb = a.get("times", {}), b.get("times", {})
        pairs = [("invalidity", a["invalidity"], b["invalidity"]),
                 ("timestamp", a.get("timestamp"), b.get("timestamp")),
                 ("time", measurement(a, "time"), measurement(b, "time")),
                 ("compilation", ta.get("compilation", ta.get("compilation_time")),
                  tb.get("compilation_time"))]
        for name, x, y in pairs:
            if not close(x, y):
                fail("%s: %s %s: %r, was %r" % (gpath, key, name, y, x))
    print("%s: the %d configurations of %s with their invalidity, times, compile times and "
          "timestamps" % (gpath, len(f), fpath))


# The columns a T4 file carries for every row, and those it carries for ok rows only
# (a failure's times mean nothing: schema/archive.md).
T4_COLUMNS = ["status", "phase", "noisy", "registers", "shared_bytes", "spill_bytes",
              "warnings", "first_warning", "energy_status", "flushed_l2", "throttled",
              "sm_clock_mhz", "power_w", "temperature_c", "energy_j", "message",
              "compile_time", "device_time"]
T4_OK_COLUMNS = ["samples", "time_median", "time_min", "time_mean", "time_rsd"]


def t4_columns(archive, back):
    """Each row of BACK against the row of ARCHIVE the T4 export chose for its
    configuration: strict (phase 2) over single (0) over screening (1), then the
    latest run, then the latest timestamp."""
    kernels, _, _ = archive_rows(archive)
    got, _, _ = archive_rows(back)
    if len(got) != 1:
        fail("%s: %d kernels, expected 1" % (back, len(got)))
    name, (b, _) = next(iter(got.items()))
    if name not in kernels:
        fail("%s: kernel %s is not in %s" % (back, name, archive))
    a = kernels[name][0]
    rank = {2: 2, 0: 1, 1: 0}
    chosen = {}
    for i in range(len(a)):
        key = (rank[int(a["phase"].iloc[i])], int(a["run"].iloc[i]), float(a["timestamp"].iloc[i]))
        c = int(a["config"].iloc[i])
        if c not in chosen or key > chosen[c][0]:
            chosen[c] = (key, i)
    if sorted(chosen) != sorted(int(c) for c in b["config"]):
        fail("%s: configurations differ from %s" % (back, archive))
    nonzero, energy = set(), set()
    for j in range(len(b)):
        c = int(b["config"].iloc[j])
        i = chosen[c][1]
        cols = T4_COLUMNS + (T4_OK_COLUMNS if a["status"].iloc[i] == "ok" else [])
        for col in cols:
            x, y = a[col].iloc[i], b[col].iloc[j]
            if isinstance(x, str):
                ok = x == y
            else:
                x, y = float(x), float(y)
                ok = (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-12)
            if not ok:
                fail("%s: configuration %d %s: %r, was %r in %s" % (back, c, col, y, x, archive))
            if col in ("noisy", "warnings", "phase", "flushed_l2", "throttled", "shared_bytes",
                       "spill_bytes") and x > 0:
                nonzero.add(col)
            if col == "energy_status":
                energy.add(x)
        x, y = float(a["timestamp"].iloc[i]), float(b["timestamp"].iloc[j])
        if abs(x - y) > 1e-6:
            fail("%s: configuration %d timestamp: %r, was %r" % (back, c, y, x))
    print("%s: the %d configurations of %s with %s (above 0 in some: %s; energy statuses: %s)" %
          (back, len(b), archive, ", ".join(T4_COLUMNS + T4_OK_COLUMNS + ["timestamp"]),
           ", ".join(sorted(nonzero)) or "none", ", ".join(sorted(energy))))


def best(path):
    doc = load(path)
    med = min(float(np.median(e["times"])) for e in doc["cache"].values()
              if not isinstance(e["time"], str))
    # as tf_format_seconds writes it
    print("%.2f us" % (med * 1e3) if med < 1 else "%.3f ms" % med)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"csv": check_csv, "json": check_json, "t4": check_t4, "kt": check_kt,
     "kt-roundtrip": kt_roundtrip, "t4-roundtrip": t4_roundtrip, "t4-columns": t4_columns,
     "best": best}[cmd](*args)


if __name__ == "__main__":
    main()
