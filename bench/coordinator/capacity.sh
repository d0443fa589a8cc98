#!/bin/sh
# The coordinator's capacity: results/s and rank 0's peak memory with the
# null replay source (`--replay null:`, every configuration ok at once), so
# nothing but the farm itself is measured: dispatch, RESULTS messages, the
# journal (on) and checkpoints (every CHECKPOINT seconds, default 2).
#
#   bench/coordinator/capacity.sh [DIGITS [WORKERS [CHECKPOINT]]]
#
# The space is DIGITS parameters of ten values each: 10^DIGITS configurations,
# all valid, brute-forced. A second kernel `sparse` has a Cartesian space of
# 10^9 (three more ten-valued parameters) of which the same 10^DIGITS are
# valid: rank 0's memory must follow what is measured, not the Cartesian
# size. Prints tunefarm's summary line and its TUNEFARM_PROFILE line.
# TUNEFARM=PATH runs another build (a before/after comparison); SPARSE=1
# makes the space sparse (10^9 Cartesian).
set -eu
DIGITS=${1:-4}
WORKERS=${2:-8}
CHECKPOINT=${3:-2}
SPARSE=${SPARSE:-0}
here=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/tf-capacity.XXXXXX)
trap 'rm -rf "$dir"' EXIT
printf 'int capacity(float *x) { (void)x; return 0; }\n' >"$dir/k.c"
{
    echo "name: capacity"
    echo "language: c"
    echo "source: k.c"
    echo "entry: capacity"
    echo "reference: {source: k.c, entry: capacity}"
    echo "problems: {one: {N: 1}}"
    echo "parameters:"
    i=0
    total=$DIGITS
    [ "$SPARSE" = 1 ] && total=9
    while [ "$i" -lt "$total" ]; do
        echo "  P$i: {range: [0, 9]}"
        i=$((i + 1))
    done
    if [ "$total" -gt "$DIGITS" ]; then
        echo "constraints:"
        i=$DIGITS
        while [ "$i" -lt "$total" ]; do
            echo "  - P$i == 0"
            i=$((i + 1))
        done
    fi
    echo "arguments:"
    echo "  - {name: x, buffer: float32, size: N, output: true}"
} >"$dir/kernel.yaml"
cat >"$dir/job.yaml" <<JOB
name: capacity
kernels:
  - {kernel: ./kernel.yaml, problems: [one]}
targets: [replay]
search: {strategy: brute_force}
checkpoint: $CHECKPOINT
archive: $dir/capacity.h5
JOB
echo "capacity: 10^$DIGITS valid of 10^$( [ "$SPARSE" = 1 ] && echo 9 || echo "$DIGITS") Cartesian, $WORKERS workers, checkpoint ${CHECKPOINT}s, load $(cut -d' ' -f1-3 /proc/loadavg)"
TUNEFARM_PROFILE=1 "${TUNEFARM:-$here/tunefarm}" run "$dir/job.yaml" -q --replay null: --workers "$WORKERS" \
    2>"$dir/err" >"$dir/out" || { cat "$dir/err" "$dir/out"; exit 1; }
grep -E "^Job 'capacity'" "$dir/out"
grep -E "^tunefarm profile: coordinator" "$dir/err"
