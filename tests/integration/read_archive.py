#!/usr/bin/python3
"""read_archive.py ARCHIVE - read a tunefarm HDF5 archive with h5py + pandas only.

Checks the documented layout (schema/archive.md): root attributes, /devices,
/runs, /sessions, /session_devices and /run_kernels where present (archives
before them lack them), and every /kernels/NAME group with its attributes, `problems` and
`results`. Each kernel's results become a pandas DataFrame with the enum
`status` and the fixed-length byte-string columns decoded to str; the script
prints the row count per status and the best `ok` row (lowest time_median)
per (problem, device). It uses none of tunefarm's code, so it is also the
proof that an archive is readable by outside tools. Exit status: 0 ok,
1 the file does not have the documented layout, 2 usage.

Run it with /usr/bin/python3 (the interpreter that has h5py and pandas).
"""
import sys

try:
    import h5py
    import numpy as np
    import pandas as pd
except ImportError as e:  # pragma: no cover - environment problem, not a layout problem
    sys.stderr.write("read_archive.py: %s (run it with /usr/bin/python3)\n" % e)
    sys.exit(2)

FORMAT = "tunefarm-archive"
SCHEMA_VERSION = 1
ENERGY_NAMES = ["measured", "unknown", "not_run", "off", "no_counter", "counter_error",
                "no_window", "not_in_source"]
STATUS_NAMES = ["ok", "invalid", "compile_error", "launch_error", "runtime_error", "timeout",
                "wrong_result", "crashed"]
DEVPROPS = ["max_threads", "max_shared", "max_shared_optin", "warp_size", "sm_count",
            "l2_bytes", "max_registers", "simd_bytes"]
DEVICE_COLUMNS = ["id", "backend", "vendor", "name", "arch", "uuid", "pci_bus", "host",
                  "memory_bytes", "compute_units", "driver_version", "runtime_version",
                  "compiler_version"] + DEVPROPS
RUN_COLUMNS = ["id", "job_name", "job_hash", "start_unix", "end_unix", "start", "end",
               "command", "slurm_job_id", "ranks", "tunefarm_version"]
# Tables that came with per-run provenance: optional (older archives lack them).
SESSION_COLUMNS = ["run", "start_unix", "end_unix", "start", "end", "command", "slurm_job_id",
                   "ranks", "tunefarm_version", "host"]
SESSION_DEVICE_COLUMNS = ["session", "device", "driver_version", "runtime_version",
                          "compiler_version", "tunefarm_version", "clock_mhz",
                          "memory_clock_mhz", "power_limit_w", "clock_policy"]
RUN_KERNEL_COLUMNS = ["run", "kernel", "source_hash"]
RESULT_COLUMNS = ["run", "device", "problem", "config", "status", "samples", "time_median",
                  "time_min", "time_mean", "time_rsd", "compile_time", "registers",
                  "shared_bytes", "spill_bytes", "sm_clock_mhz", "power_w", "temperature_c",
                  "energy_j", "flushed_l2", "throttled", "timestamp", "message"]


class LayoutError(Exception):
    pass


def text(v):
    """h5py gives fixed-length strings as bytes (numpy.bytes_), variable ones as str."""
    if isinstance(v, (bytes, np.bytes_)):
        return v.decode("utf-8", "replace")
    return str(v)


def attr(obj, name, required=True):
    if name not in obj.attrs:
        if required:
            raise LayoutError("%s has no attribute '%s'" % (obj.name, name))
        return None
    return obj.attrs[name]


def str_list(obj, name, required=True):
    v = attr(obj, name, required)
    if v is None or isinstance(v, h5py.Empty):
        return []
    return [text(x) for x in np.atleast_1d(v)]


def table(parent, name, columns):
    if name not in parent or not isinstance(parent[name], h5py.Dataset):
        raise LayoutError("%s has no dataset '%s'" % (parent.name, name))
    ds = parent[name]
    if ds.dtype.names is None or ds.ndim != 1:
        raise LayoutError("%s is not a 1-D compound table" % ds.name)
    missing = [c for c in columns if c not in ds.dtype.names]
    if missing:
        raise LayoutError("%s lacks column(s) %s" % (ds.name, ", ".join(missing)))
    return ds


def frame(ds):
    """DataFrame of a compound dataset with byte-string columns decoded."""
    df = pd.DataFrame(ds[()])
    for col in df.columns:
        if ds.dtype[col].kind == "S":
            df[col] = df[col].str.decode("utf-8", "replace")
    return df


def check_ids(df, where):
    if len(df) and not (df["id"].to_numpy() == np.arange(len(df))).all():
        raise LayoutError("%s: ids must equal the row index" % where)


def read_kernel(g, devices, runs):
    params = str_list(g, "parameter_names")
    sizes = str_list(g, "size_names")
    metrics = str_list(g, "metric_names")
    constraints = str_list(g, "constraints", required=False)
    text(attr(g, "source_hash"))
    values = {}
    for p in params:
        v = np.atleast_1d(attr(g, "values:" + p))
        if len(v) == 0:
            raise LayoutError("%s: parameter %s has no values" % (g.name, p))
        values[p] = [text(x) for x in v] if v.dtype.kind in "SUO" else [int(x) for x in v]

    problems = frame(table(g, "problems", ["id", "name"] + sizes))
    check_ids(problems, g.name + "/problems")
    # Each problem's default configuration (optional: older archives have only
    # the kernel's default_index); 2**64 - 1 means none.
    cartesian = int(np.prod([len(v) for v in values.values()], dtype=object))
    if "default_config" in problems.columns:
        bad = [int(d) for d in problems["default_config"]
               if int(d) != 2**64 - 1 and int(d) >= cartesian]
        if bad:
            raise LayoutError("%s/problems: default_config %d is outside the %d configurations"
                              % (g.name, bad[0], cartesian))

    ds = table(g, "results", RESULT_COLUMNS + params + metrics)
    mapping = h5py.check_enum_dtype(ds.dtype["status"])
    if mapping is None:
        raise LayoutError("%s: column 'status' is not an HDF5 enum" % ds.name)
    for i, name in enumerate(STATUS_NAMES):
        if mapping.get(name) != i:
            raise LayoutError("%s: status enum lacks %s = %d" % (ds.name, name, i))
    df = frame(ds)
    code_to_name = {v: k for k, v in mapping.items()}
    df["status"] = df["status"].map(code_to_name)
    if df["status"].isna().any():
        raise LayoutError("%s: a status value is outside the enum" % ds.name)
    # noisy and energy_status (optional: older archives lack them)
    if "noisy" in ds.dtype.names and not df["noisy"].isin([0, 1]).all():
        raise LayoutError("%s: column 'noisy' holds a value other than 0 or 1" % ds.name)
    if "energy_status" in ds.dtype.names:
        energy = h5py.check_enum_dtype(ds.dtype["energy_status"])
        if energy is None:
            raise LayoutError("%s: column 'energy_status' is not an HDF5 enum" % ds.name)
        for i, name in enumerate(ENERGY_NAMES):
            if energy.get(name) != i:
                raise LayoutError("%s: energy_status enum lacks %s = %d" % (ds.name, name, i))
        df["energy_status"] = df["energy_status"].map({v: k for k, v in energy.items()})
        measured = df[df["energy_status"] == "measured"]
        if measured["energy_j"].isna().any():
            raise LayoutError("%s: a row with energy_status 'measured' has no energy_j" % ds.name)
    for col, limit in (("run", len(runs)), ("device", len(devices)), ("problem", len(problems))):
        if len(df) and int(df[col].max()) >= limit:
            raise LayoutError("%s: column '%s' refers past the %d rows of its table"
                              % (ds.name, col, limit))
    return df, params, sizes, metrics, constraints, problems


def report(path):
    with h5py.File(path, "r") as f:
        fmt = text(attr(f, "format"))
        if fmt != FORMAT:
            raise LayoutError("format attribute is '%s', expected '%s'" % (fmt, FORMAT))
        version = int(attr(f, "schema_version"))
        if version != SCHEMA_VERSION:
            raise LayoutError("schema_version %d, this reader knows %d" % (version, SCHEMA_VERSION))
        print("%s: %s v%d, created %s by tunefarm %s" % (
            path, fmt, version, text(attr(f, "created")), text(attr(f, "tunefarm_version"))))
        float(attr(f, "created_unix"))

        devices = frame(table(f, "devices", DEVICE_COLUMNS))
        check_ids(devices, "/devices")
        runs = frame(table(f, "runs", RUN_COLUMNS))
        check_ids(runs, "/runs")
        print("devices: %d, runs: %d" % (len(devices), len(runs)))
        if "kernels" not in f or not isinstance(f["kernels"], h5py.Group):
            raise LayoutError("no group /kernels")
        # Provenance per run and session, where the archive has it.
        refs = {"run": len(runs), "device": len(devices)}
        if "sessions" in f:
            sessions = frame(table(f, "sessions", SESSION_COLUMNS))
            refs["session"] = len(sessions)
            print("sessions: %d" % len(sessions))
            for name, columns in (("sessions", SESSION_COLUMNS),
                                  ("session_devices", SESSION_DEVICE_COLUMNS),
                                  ("run_kernels", RUN_KERNEL_COLUMNS)):
                if name not in f:
                    raise LayoutError("/sessions without /%s" % name)
                df = frame(table(f, name, columns))
                for col in ("run", "session", "device"):
                    if col in df.columns and len(df) and int(df[col].max()) >= refs[col]:
                        raise LayoutError("/%s: column '%s' refers past the %d rows of its table"
                                          % (name, col, refs[col]))
                if name == "run_kernels":
                    unknown = set(df["kernel"]) - set(f["kernels"].keys())
                    if unknown:
                        raise LayoutError("/run_kernels names kernel(s) %s not under /kernels"
                                          % ", ".join(sorted(unknown)))

        for name, g in f["kernels"].items():
            if not isinstance(g, h5py.Group):
                raise LayoutError("/kernels/%s is not a group" % name)
            df, params, sizes, metrics, constraints, problems = read_kernel(g, devices, runs)
            counts = df["status"].value_counts()
            summary = ", ".join("%d %s" % (n, s) for s, n in counts.items())
            print("kernel %s: %d rows%s; parameters %s; sizes %s; metrics %s; %d constraints" % (
                name, len(df), " (%s)" % summary if summary else "", ",".join(params),
                ",".join(sizes), ",".join(metrics) or "-", len(constraints)))
            ok = df[df["status"] == "ok"].dropna(subset=["time_median"])
            if ok.empty:
                print("  no ok rows")
                continue
            best = ok.loc[ok.groupby(["problem", "device"])["time_median"].idxmin()]
            for _, row in best.iterrows():
                cfg = " ".join("%s=%s" % (p, row[p]) for p in params)
                extra = "".join(" %s=%.6g" % (m, row[m]) for m in metrics)
                print("  best problem=%s device=%d (%s): config %d [%s] time_median=%.4g s%s" % (
                    problems["name"][int(row["problem"])], int(row["device"]),
                    devices["name"][int(row["device"])], int(row["config"]), cfg,
                    row["time_median"], extra))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: read_archive.py ARCHIVE\n")
        return 2
    try:
        report(argv[1])
    except LayoutError as e:
        sys.stderr.write("read_archive.py: %s: not a valid tunefarm archive: %s\n" % (argv[1], e))
        return 1
    except (OSError, KeyError, ValueError, TypeError) as e:
        sys.stderr.write("read_archive.py: %s: cannot read: %s\n" % (argv[1], e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
