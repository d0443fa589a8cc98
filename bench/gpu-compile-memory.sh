#!/usr/bin/env bash
# bench/gpu-compile-memory.sh - the compilers' memory limit (RLIMIT_DATA, TUNEFARM_COMPILE_MEMORY)
# with NVRTC on the GPU machine: test_cuda, `compile --arch sm_90` of the default job
# under the default limit, 1024 and 256 MiB, then the default job. Run there as
#     source .device/env.sh && source .device/extra.sh && bash bench/gpu-compile-memory.sh [bomb]
# (`bomb`: only the last part, a variant whose source makes NVRTC allocate without end)
set -u
cd "$(dirname "$0")/.."
LOG=${OUT:-/tmp/v3out}; mkdir -p "$LOG"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CUDA_CACHE_DISABLE=1
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB"
make -j16 >"$LOG/build.log" 2>&1 || { tail -20 "$LOG/build.log"; exit 1; }
if [ "${1:-}" != bomb ]; then
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
fi
# A CUDA kernel one of whose variants (BLOCK 512) makes NVRTC allocate
# without end. Under the limit that variant alone fails, naming it;
# the others are measured.
rm -rf /tmp/v3bomb && mkdir -p /tmp/v3bomb && cp -R kernels/vecadd_cuda /tmp/v3bomb/
# NVRTC refuses to include /dev/zero ("not a regular file", 2026-12-07), so the
# bomb is an array initialiser of 2^32 elements from a macro that doubles 32
# times (a token stream with no error, unlike `int int ...`, which NVRTC stops at).
{ printf '#if BLOCK == 512\n#define T0 0,\n'; for i in $(seq 1 32); do printf '#define T%d T%d T%d\n' $i $((i-1)) $((i-1)); done
  printf '__device__ int tf_bomb[] = {T32 0};\n#endif\n'; cat kernels/vecadd_cuda/vecadd.cu; } >/tmp/v3bomb/vecadd_cuda/vecadd.cu
sed -e 's#../../kernels/vecadd_cuda#vecadd_cuda#' -e 's#^archive:.*#archive: bomb.h5#' \
    tests/fixtures/vecadd_cuda.yaml >/tmp/v3bomb/bomb.yaml
for m in default 1024; do
    if [ $m = default ]; then unset TUNEFARM_COMPILE_MEMORY; else export TUNEFARM_COMPILE_MEMORY=$m; fi
    rm -f /tmp/v3bomb/bomb-$m.h5
    (while sleep 0.2; do awk '/MemAvailable/{print $2}' /proc/meminfo; done) >"$LOG/mem-$m.txt" &
    sampler=$!
    /usr/bin/time -f "%e s wall" env XDG_CACHE_HOME=/tmp/v3bomb/cache-$m ./tunefarm run -q /tmp/v3bomb/bomb.yaml \
        -o /tmp/v3bomb/bomb-$m.h5 >"$LOG/bomb-$m.log" 2>&1
    rc=$?; kill $sampler
    echo "-- macro bomb in BLOCK 512, limit $m: exit $rc; $(grep -E '^Statuses' "$LOG/bomb-$m.log"); $(tail -1 "$LOG/bomb-$m.log"); node memory available at least $(sort -n "$LOG/mem-$m.txt" | head -1) kB"
    ./tunefarm export /tmp/v3bomb/bomb-$m.h5 --format csv 2>/dev/null | grep -i "compile_error" | cut -c1-300 | head -2
done
unset TUNEFARM_COMPILE_MEMORY
free -g | sed -n 2p
