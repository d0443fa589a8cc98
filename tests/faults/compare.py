#!/usr/bin/env python3
"""compare.py REFERENCE.h5 ARCHIVE.h5 - the fault matrix's verdict on an archive.

ARCHIVE must hold exactly the rows of the uninterrupted REFERENCE run: per
kernel the same (problem, configuration, phase) keys, none twice, every row in
one run, and the same status per key (the fixtures' statuses are deterministic:
MODE picks the failure). Prints one line saying what differs; exit 0 if nothing.
"""
import sys

import h5py


def rows(path):
    out = {}
    with h5py.File(path, "r") as f:
        for name, group in f["kernels"].items():
            problems = {int(p["id"]): p["name"].decode() for p in group["problems"][()]}
            table = group["results"][()]
            keys = {}
            runs = set()
            for r in table:
                key = (problems[int(r["problem"])], int(r["config"]), int(r["phase"]))
                if key in keys:
                    raise SystemExit(f"{path}: {name} {key} appears twice")
                keys[key] = r["status"]
                runs.add(int(r["run"]))
            out[name] = (keys, runs)
    return out


def main():
    ref, got = rows(sys.argv[1]), rows(sys.argv[2])
    if sorted(ref) != sorted(got):
        raise SystemExit(f"kernels differ: {sorted(ref)} vs {sorted(got)}")
    for name, (keys, runs) in got.items():
        want = ref[name][0]
        if len(runs) != 1:
            raise SystemExit(f"{name}: rows from runs {sorted(runs)}, expected one run")
        missing, extra = set(want) - set(keys), set(keys) - set(want)
        if missing or extra:
            raise SystemExit(f"{name}: {len(missing)} rows missing (e.g. {sorted(missing)[:3]}), "
                             f"{len(extra)} extra (e.g. {sorted(extra)[:3]})")
        wrong = [k for k in keys if keys[k] != want[k]]
        if wrong:
            raise SystemExit(f"{name}: status differs for {wrong[:3]}")
    total = sum(len(k) for k, _ in got.values())
    print(f"{sys.argv[2]}: the {total} rows of the uninterrupted run, none twice, one run")


if __name__ == "__main__":
    main()
