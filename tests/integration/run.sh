#!/usr/bin/env bash
# Integration tests of the tunefarm binary: the command line, bad input, the
# failure model (compile errors, crashes, hangs, wrong results), MPI runs with
# one coordinator and two workers against a serial run, archive extension, and
# the archive read back by h5dump and by h5py/pandas. Real processes, real
# compilers, real MPI ranks, real HDF5 files.
. "$(dirname "$0")/../lib.sh"
cd "$TMP"
FIX="$ROOT/tests/fixtures"
CHECK="$PY $ROOT/tests/integration/check_archive.py"

echo "-- command line"
check "help" "$TF" --help
check "run --help" "$TF" run --help
check "query --help" "$TF" query --help
check "devices --help" "$TF" devices --help
# README: "every command has --help", help too (review D: it was exit 2, "no
# command or topic '--help'")
check "help --help" sh -c "\"$TF\" help --help | grep -q '^usage: tunefarm COMMAND'"
check "help -h" sh -c "\"$TF\" help -h | grep -q '^usage: tunefarm COMMAND'"
# help strategies: every registered strategy, its line and its options with
# defaults, from the registry itself (no copy to go stale)
check "help strategies" sh -c "\"$TF\" help strategies >help_strategies.txt"
for s in brute_force random genetic local bayes hybrid; do
    check "help strategies: $s" grep -qx "$s" help_strategies.txt
done
check "help strategies: options with defaults" sh -c \
    "grep -q '^    population (16) ' help_strategies.txt && grep -q '^    warp (1) ' help_strategies.txt"
check "help strategies: no line past 79 columns" sh -c "! awk 'length > 79' help_strategies.txt | grep -q ."
expect_fail "unknown command exits 2" 2 "$TF" frobnicate
expect_fail "run without a job exits 2" 2 "$TF" run
# An empty value (an unset variable, "--grace $GRACE") is no number (review
# D): it read as 0, so a signal dropped the work in flight at once.
expect_fail "run --grace '' exits 2" 2 "$TF" run -q --grace '' "$FIX/ranked.yaml" -o grace.h5
check "  saying what it wants" contains "$TMP/last" "--grace wants seconds from 0 to 86400"
check "  and writing nothing" sh -c "[ ! -e grace.h5 ]"
check "devices lists the host" sh -c "\"$TF\" devices | grep -q 'host'"

echo "-- the shipped jobs"
# Every job in jobs/ loads with its kernels, plans every kernel x problem and
# runs through on the null replay (no device, no compiler, under a second):
# a job file that drifted from its kernels (a problem renamed, an option
# dropped) fails here rather than on a user's cluster.
for j in "$ROOT"/jobs/*.yaml; do
    n=$(basename "$j" .yaml)
    ks=$(sed -n 's/^  - kernel: \([A-Za-z0-9_]*\).*/\1/p' "$j" | tr '\n' ' ')
    check "jobs/$n.yaml runs on the null replay, every kernel in its summary" sh -c \
        "\"$TF\" run \"$j\" -o shipped-$n.h5 -q --replay null: >shipped-$n.txt 2>&1 &&
         [ -n \"$ks\" ] && for k in $ks; do grep -q \"^\$k \" shipped-$n.txt || exit 1; done"
done

# schema/kernel.md's complete example is the shipped gemm's file, abridged: with
# the shipped gemm.c it must load and its variants compile and verify.
mkdir -p kmd && awk '/^```yaml$/ { n++; next } /^```$/ && n == 1 { exit } n == 1' \
    "$ROOT/schema/kernel.md" >kmd/kernel.yaml
cp "$ROOT/kernels/gemm/gemm.c" "$ROOT/kernels/gemm/reference.c" kmd/
printf 'name: kmd\nkernels:\n  - {kernel: ./kernel.yaml, problems: [small]}\nsearch: {strategy: random, budget: 2, seed: 3}\nmeasure: {min_samples: 2, max_time: 0.02, energy_time: 0}\n' >kmd/job.yaml
check "schema/kernel.md's example runs with the shipped gemm.c (2 variants ok)" sh -c \
    "cd kmd && \"$TF\" run -q -n 1 job.yaml -o kmd.h5 >out.txt 2>&1 && grep -Eq '^gemm +small .* 2/2 ' out.txt"

echo "-- bad input: exit 2, file:line:column, nothing written"
# bad_job NAME FILE LOCATION TEXT: running FILE fails with exit 2, the error
# names LOCATION (file:line:col) and contains TEXT, and no archive appears.
bad_job() {
    local name=$1 file=$2 loc=$3 text=$4 rc=0
    rm -rf results
    "$TF" run "$file" >"$TMP/out" 2>&1 || rc=$?
    if [ "$rc" -eq 2 ] && contains "$TMP/out" "$loc" && contains "$TMP/out" "$text" &&
        [ ! -e results ]; then
        pass "$name"
    else
        echo "      exit $rc; expected 2 with '$loc' and '$text'" >>"$TMP/out"
        fail "$name" "$TMP/out"
    fi
}
mkdir -p bad && cp -r "$FIX/ranked" bad/ranked
printf 'name: broken\nkernels:\n  - kernel: [ranked\n' >bad/syntax.yaml
bad_job "YAML syntax error" bad/syntax.yaml "bad/syntax.yaml:" "YAML"
printf 'name: broken\nkernels:\n  - kernel: ranked\nsearch:\n  strategy: random\n  budgit: 5\n' >bad/key.yaml
bad_job "unknown key" bad/key.yaml "bad/key.yaml:6:3" "budgit"
printf 'name: broken\nkernels:\n  - kernel: ranked\nsearch:\n  strategy: random\n  budget: ten\n' >bad/type.yaml
bad_job "wrong type" bad/type.yaml "bad/type.yaml:6:" "budget"
printf 'name: broken\nkernels:\n  - kernel: nowhere\n' >bad/nokernel.yaml
bad_job "unknown kernel" bad/nokernel.yaml "bad/nokernel.yaml:3:" "nowhere"
printf 'name: broken\nkernels:\n  - kernel: ranked\n' >bad/job.yaml
sed -i 's/  - X + Y <= 6/  - X + Yy <= 6/' bad/ranked/kernel.yaml
bad_job "undefined name in a constraint" bad/job.yaml "bad/ranked/kernel.yaml:20:9" "Yy"
cp "$FIX/ranked/kernel.yaml" bad/ranked/kernel.yaml
sed -i 's/  Y: \[0, 1, 2, 3\]/  Y: []/' bad/ranked/kernel.yaml
bad_job "empty parameter space" bad/job.yaml "bad/ranked/kernel.yaml:" "Y"
printf 'name: broken\nkernels:\n  - kernel: ranked\nmeasure: {max_time: 2, timeout: 1}\n' >bad/deadline.yaml
bad_job "timeout shorter than max_time" bad/deadline.yaml "bad/deadline.yaml:4:" "must exceed 'max_time'"
expect_fail "missing job file" 2 "$TF" run bad/none.yaml
start=$(date +%s)
expect_fail "an unwritable archive is refused before measuring" 2 "$TF" run -q "$FIX/ranked.yaml" -o /proc/no/such.h5
check "the refusal came at once and says why" sh -c \
    "[ \$(( \$(date +%s) - $start )) -lt 20 ] && grep -q 'such.h5' \"$TMP/last\""
rm -rf bad results

echo "-- failures are results: compile error, crash, hang, wrong result, NaN"
if "$TF" run -q "$FIX/faulty.yaml" -o faulty.h5 >faulty.out 2>&1; then
    pass "fault job completes"
else
    fail "fault job completes" faulty.out
fi
check "every mode has its status" $CHECK faulty.h5 faulty --unique \
    --status-where MODE=0:ok MODE=1:compile_error MODE=2:crashed MODE=3:timeout \
    MODE=4:wrong_result MODE=5:wrong_result
check "summary counts the failures" sh -c "grep -q 'crashed' faulty.out && grep -q 'timeout' faulty.out"
check "compiler message kept in the archive" sh -c \
    "$PY -c \"import h5py,sys; d=h5py.File('faulty.h5')['kernels/faulty/results'][()]; sys.exit(0 if any(b'error' in m for m in d['message']) else 1)\""

check "an OpenMP reference does not crash the runner" sh -c \
    "\"$TF\" run -q -n 1 \"$FIX/ompref.yaml\" -o ompref.h5 && $CHECK ompref.h5 ompref --rows 3 --all-ok"
# issue 14: parameter ranges, a constraint with and/not and a chain, inputs in [LO, HI)
check "ranges, Python's words and input ranges run end to end" sh -c \
    "\"$TF\" run -q -n 1 \"$FIX/init_range.yaml\" -o init_range.h5 && $CHECK init_range.h5 init_range --rows 8 --unique --all-ok"

echo "-- MPI: one coordinator, two workers, against a serial run"
# Timing on a small machine: a first run fills the compile cache, so that the
# timed runs below measure with no compiler running beside them (on two
# hyperthreads a compiler next door halves a measurement, enough to reorder
# configurations that differ by 2x).
check "compile-cache warm-up run" "$TF" run -q -n 1 "$FIX/ranked.yaml" -o warmup.h5
if "$TF" run -q -n 1 "$FIX/ranked.yaml" -o serial.h5 >serial.out 2>&1; then
    pass "serial run (no launcher, one worker) completes"
else
    fail "serial run (no launcher, one worker) completes" serial.out
fi
check "serial run finds the known best" $CHECK serial.h5 ranked --rows 38 --unique --best X=2 Y=1 Z=a
if mpirun -np 3 --oversubscribe --bind-to none "$TF" run -q "$FIX/ranked.yaml" -o mpi.h5 >mpi.out 2>&1; then
    pass "mpirun -np 3 completes"
else
    fail "mpirun -np 3 completes" mpi.out
fi
check "one row per valid configuration (38)" $CHECK mpi.h5 ranked --rows 38 --unique --all-ok
check "MPI run finds the serial run's best" $CHECK mpi.h5 ranked --best X=2 Y=1 Z=a
check "h5dump reads the archive" h5dump -H mpi.h5
check "h5py + pandas read every table" $PY "$ROOT/tests/integration/read_archive.py" mpi.h5
check "query prints the best configuration" sh -c "\"$TF\" query mpi.h5 | grep -q 'X=2 Y=1 Z=a'"

echo "-- two phases: screen everything, re-measure the top 8 strictly"
mkdir -p twophase && cp -r "$FIX/ranked" twophase/ && sed \
    -e 's/^name: ranked/name: ranked_two_phase/' \
    -e 's/^search: .*/search: {strategy: brute_force, top_k: 8}/' \
    -e 's|^measure: |screen: {warmup: 1, min_samples: 3, max_samples: 50, min_time: 0.003, max_time: 0.01, max_noise: 0.5}\nmeasure: |' \
    "$FIX/ranked.yaml" >twophase/job.yaml
check "two-phase run completes" "$TF" run -q -n 1 twophase/job.yaml -o twophase.h5
check "every configuration screened once" $CHECK twophase.h5 ranked --phase 1 --rows 38 --unique
check "the top 8 re-measured" $CHECK twophase.h5 ranked --phase 2 --rows 8 --unique --all-ok
check "phase 2 is exactly the 8 fastest screened" $CHECK twophase.h5 ranked --two-phase 8
best=$($CHECK twophase.h5 ranked --print-best 2>&1 || true)
check "query reports the strict phase's best ($best)" sh -c "\"$TF\" query twophase.h5 | grep -q '$best'"

sed -e 's/^name: ranked/name: ranked_mpi_two_phase/' \
    -e 's/^search: .*/search: {strategy: random, budget: 20, seed: 5, top_k: 5}/' \
    "$FIX/ranked.yaml" >twophase/mpi.yaml
check "two phases over MPI (2 workers, random 20, top 5)" \
    mpirun -np 3 --oversubscribe --bind-to none "$TF" run -q twophase/mpi.yaml -o twophase-mpi.h5
check "  20 screened, each once" $CHECK twophase-mpi.h5 ranked --phase 1 --rows 20 --unique
check "  5 re-measured" $CHECK twophase-mpi.h5 ranked --phase 2 --rows 5 --unique
check "  they are the 5 fastest screened" $CHECK twophase-mpi.h5 ranked --two-phase 5

echo "-- compiling ahead: tunefarm compile, no GPU"
check "a job of host kernels for sm_90: nothing to compile, said (exit 0), no cache folder made" sh -c \
    "XDG_CACHE_HOME='$TMP/empty-arch-cache' \"$TF\" compile \"$FIX/ranked.yaml\" --arch sm_90 >empty.out 2>&1 &&
     grep -q 'no kernel of .*ranked.yaml runs on sm_90' empty.out && ! grep -q 'variants of' empty.out"
# A kernel's `#error` text is its author's, and `compile` prints the first
# error it meets: escape bytes in it (ESC starts a terminal command: clear the
# screen, retitle the window) must not reach the terminal, and the text must
# still read as the compiler's message.
mkdir -p hostile_error && cp -R "$FIX/ranked" hostile_error/ && cp "$FIX/ranked.yaml" hostile_error/
printf '#error "hostile \033[2J\033]0;retitled\007 text"\n' >>hostile_error/ranked/ranked.c
expect_fail "a kernel whose #error holds ESC and BEL: compile --arch host exits 1" 1 \
    env XDG_CACHE_HOME="$TMP/hostile-error-cache" "$TF" compile hostile_error/ranked.yaml --arch host
check "  the message is there, each control byte a '?'" \
    contains "$TMP/last" '#error "hostile ?[2J?]0;retitled? text"'
check "  no control byte in the output but newline and tab" sh -c \
    "! tr -d '\\n\\t' <\"$TMP/last\" | LC_ALL=C grep -q '[[:cntrl:]]'"
if ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || ls /usr/local/cuda/lib64/libnvrtc.so* >/dev/null 2>&1; then
    export XDG_CACHE_HOME="$TMP/precompile-cache"
    check "compile vecadd_cuda for sm_90 and sm_80" sh -c \
        "\"$TF\" compile -q \"$FIX/vecadd_cuda.yaml\" --arch sm_90,sm_80 >precompile.out &&
         grep -q 'sm_90: 5 variants of 1 kernel(s): 5 compiled now, 0 from the cache' precompile.out &&
         grep -q 'sm_80: 5 variants of 1 kernel(s): 5 compiled now' precompile.out"
    check "a second compile finds them all in the cache" sh -c \
        "\"$TF\" compile -q \"$FIX/vecadd_cuda.yaml\" --arch sm_90 | grep -q '0 compiled now, 5 from the cache'"
    export XDG_CACHE_HOME="$TMP/precompile-cache2"
    check "under mpirun each rank compiles its share" sh -c \
        "mpirun -np 2 --oversubscribe \"$TF\" compile -q \"$FIX/vecadd_cuda.yaml\" --arch sm_90 >share.out &&
         grep -q '3 of them on rank 0 of 2' share.out && grep -q '2 of them on rank 1 of 2' share.out"
    # Every shipped GPU kernel (default + a seeded sample) for NVIDIA and AMD, no GPU.
    export XDG_CACHE_HOME="$TMP/gpu-sample-cache"
    check "compile every GPU kernel's sample for sm_90 and gfx90a" sh -c \
        "\"$TF\" compile -q \"$FIX/gpu_sample.yaml\" --arch sm_90,gfx90a >sample.out &&
         grep -q 'sm_90: 20 variants of 5 kernel(s): 20 compiled now, 0 from the cache, 0 do not' sample.out &&
         grep -q 'gfx90a: 20 variants of 5 kernel(s): 20 compiled now, 0 from the cache, 0 do not' sample.out"
    check "  real cubins for sm_90" $PY "$ROOT/tests/integration/check_elf.py" "$XDG_CACHE_HOME" cuda sm_90 20
    check "  real AMDGPU code objects for gfx90a" $PY "$ROOT/tests/integration/check_elf.py" "$XDG_CACHE_HOME" hip gfx90a 20
    rc=0
    "$TF" compile -q "$FIX/gpu_sample.yaml" --arch gfx942 >gfx942.out 2>&1 || rc=$?
    if [ "$rc" -eq 0 ]; then
        check "  real AMDGPU code objects for gfx942" $PY "$ROOT/tests/integration/check_elf.py" "$XDG_CACHE_HOME" hip gfx942 20
    elif grep -q "cannot compile for gfx942" gfx942.out; then
        skip "gfx942" "this hipRTC cannot compile for it ($(grep -o 'comgr [0-9.]*' gfx942.out | head -1); Debian bookworm ships ROCm 5.2.3)"
    else
        fail "gfx942: unexpected failure" gfx942.out
    fi
    export XDG_CACHE_HOME="$TMP/cache"
else
    skip "tunefarm compile for sm_90" "no NVRTC on this machine"
fi
echo "-- compile ranks: one rank compiles ahead while the other measures"
# Measuring is slowed (min_time 0.2 s) so the compile rank, which starts past
# the measured slices, is ahead of the measuring worker: the worker then finds
# binaries in the cache (compile time 0) instead of compiling them itself.
mkdir -p ahead && cp -r "$FIX/ranked" ahead/ && sed \
    -e 's/^name: ranked/name: ranked_compile_rank/' -e 's/min_time: 0.02/min_time: 0.2/' -e 's/max_time: 0.1/max_time: 0.3/' \
    "$FIX/ranked.yaml" >ahead/job.yaml
# with_compile_rank WHAT JOB NAME: JOB run by a worker and a compile rank, into
# NAME.h5 (output NAME.out), with a fresh compile cache.
with_compile_rank() {
    export XDG_CACHE_HOME="$TMP/cache-$3"
    if mpirun --oversubscribe --bind-to none -np 2 "$TF" run -q "$2" -o "$3.h5" : \
        -np 1 "$TF" run -q "$2" -o "$3.h5" --compile-rank >"$3.out" 2>&1; then
        pass "$1"
    else
        fail "$1" "$3.out"
    fi
}
# found_in_cache ARCHIVE: some of its rows' binaries were not built by the
# worker that measured them (compile time 0).
found_in_cache() {
    $PY -c "
import h5py, sys
d = h5py.File(sys.argv[1], 'r')['kernels/ranked/results'][()]
hits = int((d['compile_time'] == 0).sum())
print(hits, 'of', len(d), 'from the cache')
sys.exit(0 if hits > 0 else 1)" "$1"
}
with_compile_rank "a run with a compile rank completes" ahead/job.yaml ahead
check "  one row per valid configuration, none twice" $CHECK ahead.h5 ranked --rows 38 --unique --all-ok
check "  the summary counts what it compiled ahead" contains ahead.out "Compile ranks: 1 rank got"
check "  the compile rank says what it did" contains ahead.out "configurations compiled ahead"
check "  the measuring worker found some in the cache" found_in_cache ahead.h5
# An adaptive search with a compile rank: the rank shares the compiling of the
# proposals the measuring worker holds (coordinator/plan.c: the back half of its
# latest slice), so that worker again finds binaries it did not build.
sed -e 's/^name: ranked_compile_rank/name: ranked_adaptive/' \
    -e 's/^search: .*/search: {strategy: genetic, budget: 30, seed: 3}/' ahead/job.yaml >ahead/adaptive.yaml
with_compile_rank "a genetic search with a compile rank completes" ahead/adaptive.yaml adaptive
check "  its budget, each configuration once" $CHECK adaptive.h5 ranked --rows 30 --unique --all-ok
check "  the measuring worker found some of its proposals compiled" found_in_cache adaptive.h5
# Hints alone (the search's guesses) would also give cache hits: the summary
# counts the proposals taken from the measuring worker's slices.
check "  the compile rank took proposals the measuring worker held" \
    grep -Eq "Compile ranks: .*\(([1-9][0-9]*) of them proposals a device rank held\)" adaptive.out
export XDG_CACHE_HOME="$TMP/cache-ahead" # the first run's cache, warm now
# Again with the cache now warm: the compile rank finds nothing to do and gets
# STOP at once, seconds before the run ends. It must wait for the others
# before its bounded MPI_Finalize (here 2 s): leaving early looks like a
# failure to mpirun, which then stops the whole job.
if TUNEFARM_FINALIZE_TIMEOUT=2 mpirun --oversubscribe --bind-to none \
    -np 2 "$TF" run -q --fresh ahead/job.yaml -o ahead.h5 : \
    -np 1 "$TF" run -q --fresh ahead/job.yaml -o ahead.h5 --compile-rank >ahead2.out 2>&1; then
    pass "an idle compile rank outlives the finalize timeout (2 s): the run completes"
else
    fail "an idle compile rank outlives the finalize timeout (2 s): the run completes" ahead2.out
fi
check "  its second run is whole" $CHECK ahead.h5 ranked --rows 76 --runs 2
# Binding (README "Where processes run"): a pool never has more compiler
# processes than the CPUs its rank may use, and pools whose ranks may use the
# same CPUs share them. A compile rank restricted to one CPU (taskset) gets a
# pool of one; unrestricted, beside the host worker (also unrestricted), half
# the machine's CPUs (rounded up).
ncpu=$(nproc --all)
half=$(( (ncpu + 1) / 2 ))
if TUNEFARM_FINALIZE_TIMEOUT=2 mpirun --oversubscribe --bind-to none \
    -np 2 "$TF" run -q --fresh ahead/job.yaml -o ahead.h5 : \
    -np 1 taskset -c 0 "$TF" run -q --fresh ahead/job.yaml -o ahead.h5 --compile-rank >ahead3.out 2>&1; then
    pass "a compile rank restricted to CPU 0 (taskset) runs"
else
    fail "a compile rank restricted to CPU 0 (taskset) runs" ahead3.out
fi
check "  its pools have one compiler process" contains ahead3.out "pools of 1 compiler processes; 1 CPUs allowed"
check "  unrestricted beside the host worker, half the CPUs ($half of $ncpu)" contains ahead2.out "pools of $half compiler processes; $ncpu CPUs allowed"
# A host worker leaves one of its CPUs to the runner: restricted to one CPU,
# its pool is one process (not the machine's count less one).
if TUNEFARM_PROFILE=1 taskset -c 0 "$TF" run --fresh ahead/job.yaml -o ahead.h5 >ahead4.out 2>&1; then
    pass "a host worker under taskset -c 0 runs"
else
    fail "a host worker under taskset -c 0 runs" ahead4.out
fi
check "  its pool has one compiler process" contains ahead4.out "a pool of 1 compiler processes; 1 CPUs allowed"
# TUNEFARM_TRACE: the worker writes its feed's trace, one line per configuration
# measured (bench/trace_report.py reads it).
rm -f "$TMP"/trace.*.csv
if TUNEFARM_TRACE=$TMP/trace "$TF" run -q ahead/job.yaml -o trace.h5 >ahead5.out 2>&1; then
    pass "a run with TUNEFARM_TRACE runs"
else
    fail "a run with TUNEFARM_TRACE runs" ahead5.out
fi
measured=$($PY -c "import h5py,sys; f=h5py.File(sys.argv[1]); print(sum(len(f['kernels/%s/results' % k]) for k in f['kernels']))" trace.h5 2>/dev/null || echo "?")
check "  its trace has one measure line per configuration ($measured)" sh -c \
    "cat \"$TMP\"/trace.*.csv | grep -c ',measure,' | grep -qx '$measured'"
check "  and bench/trace_report.py reads it" sh -c \
    "$PY \"$ROOT/bench/trace_report.py\" \"$TMP\"/trace.*.csv | grep -q 'measured: .* waiting for a compile'"
export XDG_CACHE_HOME="$TMP/cache"
expect_fail "--compile-rank without a launcher is refused" 2 "$TF" run --compile-rank ahead/job.yaml

expect_fail "an unknown architecture is refused" 2 "$TF" compile "$FIX/vecadd_cuda.yaml" --arch sm_1
check "  naming the known ones" contains "$TMP/last" "known: sm_70"

echo "-- a rank that never gets through MPI_Finalize, an mpirun that never exits"
# The coordinator's MPI_Finalize sleeps for ever (LD_PRELOAD shim), as on a rank
# whose closing barrier was lost. Its work is saved by then: the finalize
# timeout (TUNEFARM_FINALIZE_TIMEOUT, here 3 s) ends it with the run's exit code.
# timed OUT CMD...: run CMD (at most 120 s, then killed) with its output in OUT;
# its exit status in $rc, its seconds in $took (both also appended to OUT).
timed() {
    local out=$1 start
    shift
    start=$(date +%s)
    rc=0
    timeout -k 10 120 "$@" >"$out" 2>&1 || rc=$?
    took=$(($(date +%s) - start))
    echo "exit $rc after $took s" >>"$out"
}
if mpicc -shared -fPIC -o hang_finalize.so "$ROOT/tests/integration/hang_finalize.c" 2>hang.err; then
    timed hang.out env TUNEFARM_FINALIZE_TIMEOUT=3 TF_TEST_HANG_RANK=0 \
        LD_PRELOAD="$TMP/hang_finalize.so" "$TF" run -q -n 2 "$FIX/ranked.yaml" -o hang.h5
    check "the run ends with exit 0 (in $took s)" test "$rc" -eq 0
    check "  rank 0 says it left without finalizing" \
        contains hang.out "rank 0: MPI_Finalize has not returned after 3 s; exiting without it"
    check "  after printing its summary" contains hang.out "Job 'ranked': 38 configurations"
    check "  the archive is whole: 38 rows, the run finished" sh -c \
        "$CHECK hang.h5 ranked --rows 38 --unique --all-ok --runs 1 &&
         \"$TF\" status hang.h5 | grep -q ', finished 2'"
else
    fail "the finalize shim builds" hang.err
fi
# An mpirun that does not exit once the run is saved (Open MPI 4.1's can
# deadlock in its PMIx server after ranks left without finalizing; here a
# wrapper sleeps after the real one): tunefarm stops it after the finalize
# timeout and 10 s more, and exits with the coordinator's code.
mkdir -p stuckbin
printf '#!/bin/sh\n%s "$@"\nexec sleep 600\n' "$(command -v mpirun)" >stuckbin/mpirun
chmod +x stuckbin/mpirun
timed stuck.out env TUNEFARM_FINALIZE_TIMEOUT=2 PATH="$TMP/stuckbin:$PATH" \
    "$TF" run -q -n 1 "$FIX/ranked.yaml" -o stuck.h5
check "an mpirun that never exits: the run still ends, exit 0 (in $took s)" test "$rc" -eq 0
check "  tunefarm says it stopped mpirun" \
    contains stuck.out "mpirun has not exited 12 s after the run was saved; stopping it"
check "  the archive is whole" $CHECK stuck.h5 ranked --rows 38 --unique --all-ok --runs 1

echo "-- archives grow, and refuse what does not fit"
check "a second run extends the archive" "$TF" run -q -n 1 "$FIX/ranked.yaml" -o mpi.h5
check "two runs, 76 rows" $CHECK mpi.h5 ranked --rows 76 --runs 2
check "query --run 1" sh -c "\"$TF\" query --run 1 mpi.h5 | grep -q '38/38'"
mkdir -p other && cp -r "$FIX/ranked" other/ranked && cp "$FIX/ranked.yaml" other/
sed -i 's/  X: \[0, 1, 2, 3, 4, 5\]/  X: [0, 1, 2, 3, 4, 5, 6]/' other/ranked/kernel.yaml
expect_fail "kernel with other parameters is refused" 2 "$TF" run -q other/ranked.yaml -o mpi.h5
check "the refusal says why" contains "$TMP/last" "mpi.h5: error: archive kernel 'ranked' has parameter X"
check "the archive is untouched" $CHECK mpi.h5 ranked --rows 76 --runs 2
check "that kernel in an archive of its own" "$TF" run -q other/ranked.yaml -o other.h5
$PY -c "import h5py; f=h5py.File('foreign.h5','w'); f['x']=[1,2,3]"
expect_fail "foreign HDF5 file is refused" 2 "$TF" query foreign.h5
check "foreign file error says so" contains "$TMP/last" "not a tunefarm archive"
head -c 3000 mpi.h5 >truncated.h5
expect_fail "truncated archive is refused" 2 "$TF" query truncated.h5
expect_fail "truncated archive is not extended" 2 "$TF" run -q -n 1 "$FIX/ranked.yaml" -o truncated.h5

echo "-- merge: archives of a job array into one"
check "merge two archives into a new one" "$TF" merge -q merged.h5 mpi.h5 serial.h5
check "  every run and row of both (76 + 38)" $CHECK merged.h5 ranked --rows 114 --runs 3
check "  merging again adds nothing" sh -c "\"$TF\" merge merged.h5 serial.h5 | grep -q '0 runs, 0 rows added'"
check "  still 114 rows" $CHECK merged.h5 ranked --rows 114 --runs 3
check "  h5dump reads it" h5dump -H merged.h5
check "  query reads it" sh -c "\"$TF\" query merged.h5 | grep -q 'X=2 Y=1 Z=a'"
expect_fail "a kernel with other parameters is not merged" 2 "$TF" merge -q merged.h5 other.h5
check "  saying which parameter" contains "$TMP/last" "parameter X"
# A misspelt option was once taken for OUT: `merge --quite out.h5 in.h5`
# wrote an archive named "--quite". `--` still lets a path begin with '-'.
expect_fail "merge: an unknown option is refused, not written to" 2 \
    "$TF" merge --quite merged.h5 serial.h5
check "  nothing named after it" test ! -e --quite
check "  -- before paths that begin with '-'" sh -c \
    "\"$TF\" merge -q -- -dash.h5 serial.h5 && $CHECK ./-dash.h5 ranked --rows 38"
# A merge SIGKILLed while it writes (a batch system's time limit; the write
# pauses with its temporary made: test hook) leaves OUT.tmp.PID. Whoever next
# takes OUT's lock (a merge here; a run or an import alike) removes it: with
# the lock held, no writer of OUT is alive to own it.
TUNEFARM_TEST_CHECKPOINT_PAUSE=60 "$TF" merge -q killed.h5 serial.h5 >/dev/null 2>&1 &
kpid=$!
for i in $(seq 200); do [ -e "killed.h5.tmp.$kpid" ] && break; sleep 0.1; done
kill -KILL "$kpid"; wait "$kpid" 2>/dev/null || true
check "a merge SIGKILLed while it writes leaves its empty temporary (killed.h5.tmp.$kpid)" \
    sh -c "[ -f killed.h5.tmp.$kpid ] && [ ! -s killed.h5.tmp.$kpid ] && [ ! -e killed.h5 ]"
check "  the next merge writes the archive and removes the temporary" sh -c \
    "\"$TF\" merge -q killed.h5 serial.h5 && ! ls killed.h5.tmp.* 2>/dev/null && $CHECK killed.h5 ranked --rows 38"
# A file size limit (ulimit -f) fails the write with EFBIG instead of killing
# merge with SIGXFSZ: exit 1, OUT as it was, no temporary or journal left, and
# no line saying rows were added.
cp merged.h5 limited.h5
"$TF" run -q -n 1 "$FIX/ranked.yaml" -o third.h5 >third.out 2>&1 || true
check "merge under a file size limit too small for OUT: exit 1, OUT as it was" sh -c "
    sum=\$(cksum <limited.h5); rc=0
    (ulimit -f \$(( \$(stat -c %s limited.h5) / 1024 )); \"$TF\" merge limited.h5 third.h5 \
        >limited.out 2>limited.err) || rc=\$?
    [ \$rc -eq 1 ] && [ \"\$(cksum <limited.h5)\" = \"\$sum\" ] &&
    ! ls limited.h5.tmp.* limited.h5.journal 2>/dev/null && ! grep -q 'rows added' limited.out &&
    grep -q 'limit\|too large\|space' limited.err || { cat limited.out limited.err; exit 1; }"
# Under a small file size limit Open MPI's mpirun hangs after aborting (its
# start-up files do not fit), deaf to SIGTERM: `tunefarm run` refuses to
# start it, at once, saying what to raise; nothing is written. (sh counts
# ulimit -f in 512-byte blocks, bash in KiB.)
check "run under ulimit -f 1000: refused at once (exit 1), naming the limit, nothing written" sh -c "
    rc=0; (ulimit -f 1000; timeout -s KILL 30 \"$TF\" run -q -n 1 \"$FIX/ranked.yaml\" -o fsize.h5 \
        >fsize.out 2>&1) || rc=\$?
    [ \$rc -eq 1 ] && grep -q 'file size limit (ulimit -f) is [0-9]* KiB: under 64 MiB' fsize.out &&
    [ ! -e fsize.h5 ] || { echo \"exit \$rc\"; cat fsize.out; exit 1; }"

echo "-- a variant still compiling does not hold up the ones ready behind it"
# slow_compile's V=0 takes gcc seconds, V=1..7 milliseconds; brute force queues
# V=0 first. The worker measures ready ones of the same problem meanwhile.
if TUNEFARM_PROFILE=1 "$TF" run --fresh "$FIX/slow_compile.yaml" -o slow_compile.h5 \
    >slow_compile.out 2>&1; then pass "the slow-compile job runs"
else fail "the slow-compile job runs" slow_compile.out; fi
check "  every configuration once, ok" $CHECK slow_compile.h5 slow_compile --unique --rows 8
check "  V=0 (queued first) was not measured first" $PY -c "
import sys, h5py, numpy as np
d = h5py.File('slow_compile.h5', 'r')['kernels/slow_compile/results'][()]
order = [int(v) for v in d['V'][np.argsort(d['timestamp'], kind='stable')]]
print('measured in the order V =', order)
sys.exit(0 if order[0] != 0 and sorted(order) == list(range(8)) else 1)"
check "  the worker says how many it took early" sh -c \
    "grep -E 'variants compiled here.* [1-9][0-9]* measured while one queued before them was still compiling' slow_compile.out"
# Run again with every variant in the cache: each is ready long before the runner
# is free, so the worker sends the next while the runner measures one (runner.c,
# "two requests in flight"), and each still gets exactly one result.
if TUNEFARM_PROFILE=1 "$TF" run --fresh "$FIX/slow_compile.yaml" -o slow_cached.h5 \
    >slow_cached.out 2>&1; then pass "the same job with its variants cached runs"
else fail "the same job with its variants cached runs" slow_cached.out; fi
check "  every configuration once, ok" $CHECK slow_cached.h5 slow_compile --unique --rows 8
check "  the worker sent some to the runner while it measured the one before" sh -c \
    "grep -E '8 found in the cache.* [1-9][0-9]* sent to the runner while it measured the one before' slow_cached.out"

. "$ROOT/tests/integration/space.sh"
. "$ROOT/tests/integration/report.sh"
. "$ROOT/tests/integration/port.sh"

finish
