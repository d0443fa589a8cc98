#!/usr/bin/env bash
# bench/gpu-search-stops.sh - how searches end on a GPU (session 26's changes):
# a time budget with slices cut to what it has left, patience bounding what is
# out unanswered, and a model's long refit giving way to the time budget (the
# strategies' stop hook). sgemm (the CLBlast space, ~880k valid configurations)
# on every GPU of the machine. Run there as
#     source .device/env.sh && source .device/extra.sh && bash bench/gpu-search-stops.sh
set -u
cd "$(dirname "$0")/.."
LOG=${OUT:-/tmp/gss}; mkdir -p "$LOG"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 XDG_CACHE_HOME=/tmp/gss-cache
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores"
make -j16 >"$LOG/build.log" 2>&1 || { tail -20 "$LOG/build.log"; exit 1; }
# job NAME SEARCH: sgemm s1024 (the 4096 reference costs 25 s a worker) with SEARCH.
job() {
    cat >"/tmp/gss-$1.yaml" <<YAML
name: gss_$1
kernels:
  - kernel: $PWD/kernels/sgemm
    problems: [s1024]
targets: [cuda]
search: $2
measure: {warmup: 2, min_samples: 10, max_samples: 200, min_time: 0.02, max_time: 0.5, max_noise: 0.01, timeout: 10}
YAML
}
run() {
    local name=$1; shift
    rm -f "/tmp/gss-$name.h5"*
    local t0; t0=$(date +%s.%N)
    ./tunefarm run "/tmp/gss-$name.yaml" -o "/tmp/gss-$name.h5" "$@" >"$LOG/$name.log" 2>&1
    local rc=$?
    echo "-- $name: exit $rc, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s wall"
    grep -hE "time budget of|^Job|^Duty|^Statuses|ended by" "$LOG/$name.log"
}
job local_tb30 "{strategy: local, time_budget: 30, seed: 7}"
run local_tb30
job bayes_tb30 "{strategy: bayes, time_budget: 30, seed: 7}"
run bayes_tb30
# Options within their ranges that make one refit take minutes on 300 results.
job bayes_slow "{strategy: bayes, time_budget: 30, seed: 7, options: {init: 300, fit_train: 4096, max_train: 4096, fit_steps: 10000}}"
run bayes_slow
job local_pat "{strategy: local, patience: 20, noise: 0.01, seed: 7}"
run local_pat
python3 - "/tmp/gss-local_pat.h5" <<'PY' 2>/dev/null || true
import sys
try:
    import h5py
except ImportError:
    sys.exit(0)
t = h5py.File(sys.argv[1])['kernels/sgemm/results'][()]
print('   local_pat: %d results in the archive' % len(t))
PY
