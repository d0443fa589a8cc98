#!/bin/bash
# bench/coordinator/list_slices.sh - how fast the coordinator takes the results
# of long list slices (a random search's sample: every WORK is a list).
#
# usage: bench/coordinator/list_slices.sh [BUDGET]   (from the repository root)
# A replay (instant, one worker) of a random search of BUDGET configurations
# (default 200000) of tests/fixtures/followup_huge, problem dense, answered
# from a small archive (a 10-configuration host run made first): almost
# every answer is "not in the replay source", so the run is the coordinator
# and the wire, nothing else. Slices grow to half of what is left, so they
# are lists of tens of thousands. Prints the replay's wall time and rate.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TF=${TF:-$ROOT/tunefarm}
BUDGET=${1:-200000}
TMP=$(mktemp -d /tmp/tunefarm-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export TUNEFARM_KERNEL_PATH="$ROOT/tests/fixtures" XDG_CACHE_HOME="$TMP/cache"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
cd "$TMP"
"$TF" run -q -n 1 "$ROOT/tests/fixtures/followup_huge.yaml" -o src.h5 >src.out 2>&1
cat >bench.yaml <<YAML
name: list_slices
kernels:
  - kernel: followup_huge
    problems: [dense]
targets: [replay]
search: {strategy: random, budget: $BUDGET, seed: 11}
checkpoint: 1000
YAML
start=$(date +%s.%N)
"$TF" run -q bench.yaml -o replay.h5 --replay src.h5 >replay.out 2>&1
end=$(date +%s.%N)
grep '^Job ' replay.out
awk -v s="$start" -v e="$end" -v n="$BUDGET" \
    'BEGIN { printf "replay of %d configurations: %.2f s wall (%.0f/s), mpirun and archive included\n", n, e - s, n / (e - s) }'
