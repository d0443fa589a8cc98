#!/usr/bin/env python3
"""tunefarm's space counting and listing side by side with Kernel Tuner's
Searchspace construction, on the spaces of bench/spaces/kt_defs.py.

usage: kt_space.py [-r REPEAT] [--python PY] [SPACE...]

Run from the repository root after `make tunefarm bench/space`, with Kernel
Tuner in a virtual environment (a benchmark only, never a test dependency):
    python3 -m venv /tmp/kt && /tmp/kt/bin/pip install kernel_tuner
    /tmp/kt/bin/python bench/spaces/kt_space.py -r 3

For each space (default: all), best of REPEAT:
  KT        kernel_tuner.searchspace.Searchspace(tune_params, restrictions, 1024)
            (its default PythonConstraint framework and solver): the list of
            valid configurations, which is also its count;
  count     bench/space: tf_space_count on a fresh space (in process);
  list      bench/space: a cursor over every valid configuration, fresh space;
  CLI       `tunefarm space KERNEL --arch sm_90 -p P --list > /dev/null`: the
            whole command, process start and CSV text included.
Both sides must produce the same valid set: the count, and the SHA-256 of the
sorted list of value tuples (Kernel Tuner's Searchspace.list against the
values `tunefarm space --list` printed). Totals and speedups at the end."""
import argparse
import hashlib
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kt_defs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


def set_hash(tuples):
    h = hashlib.sha256()
    for t in sorted(tuples):
        h.update((",".join(str(v) for v in t) + "\n").encode())
    return h.hexdigest()[:16]


def kt_side(name, repeat):
    from kernel_tuner.searchspace import Searchspace
    tp, r = kt_defs.SPACES[name][0]()
    best, ss = math.inf, None
    for _ in range(repeat):
        ss = None
        t0 = time.perf_counter()
        ss = Searchspace(tp, r, 1024)
        best = min(best, time.perf_counter() - t0)
    size = ss.size
    digest = set_hash(ss.list)
    return math.prod(len(v) for v in tp.values()), size, best, digest


def tf_side(name, repeat):
    _, path, problem = kt_defs.SPACES[name]
    out = subprocess.run([os.path.join(ROOT, "bench/space"), "-r", str(repeat), "-p", problem,
                          "-a", "sm_90", os.path.join(ROOT, path)], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    f = out[-1].split()
    cart, valid, count_s, list_s, plain_count, plain_list = (
        int(f[1]), int(f[2]), float(f[3]), float(f[4]), float(f[6]), float(f[7]))
    cmd = [os.path.join(ROOT, "tunefarm"), "space", os.path.join(ROOT, path), "--arch", "sm_90",
           "-p", problem, "--list", "-q"]
    cli = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        cli = min(cli, time.perf_counter() - t0)
    text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    lines = text.splitlines()[1:]
    digest = set_hash(tuple(int(v) for v in line.split(",")) for line in lines)
    return dict(cart=cart, valid=valid, listed=len(lines), count=count_s, list=list_s,
                plain_count=plain_count, plain_list=plain_list, cli=cli, digest=digest)


def ratio(a, b):
    return a / b if b > 0 else math.inf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-r", "--repeat", type=int, default=3)
    ap.add_argument("spaces", nargs="*", default=list(kt_defs.SPACES))
    a = ap.parse_args()
    import kernel_tuner
    print("Kernel Tuner %s, Python %s" % (kernel_tuner.__version__, sys.version.split()[0]))
    print("%-15s %11s %9s %10s %10s %10s %10s %8s %8s %8s  %s" % (
        "space", "cartesian", "valid", "KT (ms)", "count (ms)", "list (ms)", "CLI (ms)",
        "count x", "list x", "CLI x", "same set"))
    tot = dict(kt=0.0, count=0.0, list=0.0, cli=0.0)
    ok = True
    for name in a.spaces:
        tf = tf_side(name, a.repeat)
        cart, size, kt, kt_digest = kt_side(name, a.repeat)
        same = cart == tf["cart"] and size == tf["valid"] == tf["listed"] and \
            kt_digest == tf["digest"]
        ok &= same
        for k in ("count", "list", "cli"):
            tot[k] += tf[k]
        tot["kt"] += kt
        print("%-15s %11d %9d %10.1f %10.3f %10.3f %10.1f %8.0f %8.0f %8.0f  %s" % (
            name, cart, size, 1e3 * kt, 1e3 * tf["count"], 1e3 * tf["list"], 1e3 * tf["cli"],
            ratio(kt, tf["count"]), ratio(kt, tf["list"]), ratio(kt, tf["cli"]),
            "yes (%s)" % kt_digest if same else "NO: KT %d %s, tunefarm %d/%d %s" % (
                size, kt_digest, tf["valid"], tf["listed"], tf["digest"])), flush=True)
        print("%-15s   (memo off: count %.3f ms, list %.3f ms)" % (
            "", 1e3 * tf["plain_count"], 1e3 * tf["plain_list"]), flush=True)
    print("%-15s %11s %9s %10.1f %10.3f %10.3f %10.1f %8.0f %8.0f %8.0f" % (
        "total", "", "", 1e3 * tot["kt"], 1e3 * tot["count"], 1e3 * tot["list"],
        1e3 * tot["cli"], ratio(tot["kt"], tot["count"]), ratio(tot["kt"], tot["list"]),
        ratio(tot["kt"], tot["cli"])))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
