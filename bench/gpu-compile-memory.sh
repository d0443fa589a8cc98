#!/usr/bin/env bash
# bench/gpu-compile-memory.sh - the compilers' memory limit (RLIMIT_DATA, TUNEFARM_COMPILE_MEMORY)
# with NVRTC on the GPU machine: test_cuda, `compile --arch sm_90` of the default job
# under the default limit, 1024 and 256 MiB, then the default job. Run there as
#     source .device/env.sh && source .device/extra.sh && bash bench/gpu-compile-memory.sh
set -u
cd "$(dirname "$0")/.."
LOG=${OUT:-/tmp/v3out}; mkdir -p "$LOG"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CUDA_CACHE_DISABLE=1
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB"
make -j16 >"$LOG/build.log" 2>&1 || { tail -20 "$LOG/build.log"; exit 1; }
make -s tests/unit/test_cuda >>"$LOG/build.log" 2>&1 && tests/unit/test_cuda >"$LOG/test_cuda.log" 2>&1; tail -3 "$LOG/test_cuda.log"
for m in default 1024 256; do
    rm -rf /tmp/v3c-$m
    if [ $m = default ]; then unset TUNEFARM_COMPILE_MEMORY; else export TUNEFARM_COMPILE_MEMORY=$m; fi
    /usr/bin/time -f "%e s, max RSS of a child %M KB" env XDG_CACHE_HOME=/tmp/v3c-$m ./tunefarm compile jobs/default.yaml --arch sm_90 -j16 >"$LOG/compile-$m.log" 2>&1
    echo "-- compile --arch sm_90, limit $m: $(grep -h 'variants of' "$LOG/compile-$m.log" | sed 's/^tunefarm compile: //'); $(tail -1 "$LOG/compile-$m.log")"
    grep -h "out of memory\|limit of" "$LOG/compile-$m.log" | head -2
done
unset TUNEFARM_COMPILE_MEMORY
XDG_CACHE_HOME=/tmp/v3run ./tunefarm run -q jobs/default.yaml -o /tmp/v3.h5 >"$LOG/default.log" 2>&1
echo "-- default job (default limit), exit $?"; grep -E "^(Job|Compile|Duty|Statuses)" "$LOG/default.log"
