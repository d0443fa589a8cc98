#!/bin/bash
# farm_study.sh - the convolution_milo strategy study through the real farm:
# `tunefarm run replay.yaml --replay CACHE --workers W` (mpirun, a coordinator
# and W replay ranks) for each cache x strategy x seed, budget B; prints one
# line per run: device, strategy, seed, optimum time / best time found (Kernel
# Tuner's mean `time`, as bench/strategy/study.c), the simulated wall time
# (last result's simulated timestamp - run start) and the real wall time.
# usage: farm_study.sh [-s "local random"] [-n SEEDS] [-w WORKERS] [-b BUDGET] [-x SPEED] CACHE...
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
strategies="local random" seeds=5 workers=8 budget=88 speed=instant
while getopts s:n:w:b:x: o; do
    case $o in s) strategies=$OPTARG ;; n) seeds=$OPTARG ;; w) workers=$OPTARG ;;
                b) budget=$OPTARG ;; x) speed=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
tmp=$(mktemp -d /tmp/tf-farm-study.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp "$here"/kernel.yaml "$here"/placeholder.* "$tmp/"
for cache in "$@"; do
    dev=$(basename "$cache" .json.gz)
    for st in $strategies; do
        for seed in $(seq 1 "$seeds"); do
            sed -e "s/strategy: local/strategy: $st/" -e "s/budget: 88/budget: $budget/" \
                -e "s/seed: 1/seed: $seed/" "$here/replay.yaml" >"$tmp/job.yaml"
            t0=$(date +%s.%N)
            "$root/tunefarm" run -q "$tmp/job.yaml" -o "$tmp/r.h5" --fresh \
                --replay "$cache" --workers "$workers" --speed "$speed" >/dev/null
            t1=$(date +%s.%N)
            /usr/bin/python3 - "$tmp/r.h5" "$cache" "$dev" "$st" "$seed" "$t0" "$t1" <<'PYEOF'
import gzip, json, sys, h5py
path, cache, dev, st, seed, t0, t1 = sys.argv[1:]
kt = json.load(gzip.open(cache))['cache']
opt = min(v['time'] for v in kt.values() if not isinstance(v['time'], str))
f = h5py.File(path)
t = f['kernels/convolution_milo/results'][()]
ok = t[t['time_mean'] == t['time_mean']]
best = min(ok['time_mean']) * 1e3
sim = max(t['timestamp']) - f['runs'][()][-1]['start_unix']
print(f"{dev:7s} {st:7s} {seed:>3s} {opt / best:.3f} rows={len(t)} sim_wall={sim:.1f}s real_wall={float(t1) - float(t0):.1f}s")
PYEOF
            rm -f "$tmp/r.h5" "$tmp/r.h5.journal"
        done
    done
done
