#!/usr/bin/env bash
# tests/integration/port.sh - what porting a kernel needs (issue 14 items 1,
# 2, 3 and 8), through the commands a user runs: tests/fixtures/heat (NX
# compiled in with `defines:`, a reference that depends on STEPS and reads NX
# and STEPS after the kernel's arguments, one compiler warning per variant, a
# one-value parameter) counted by `tunefarm space`, compiled ahead by
# `tunefarm compile` (per problem; its CUDA twin for sm_90 without a GPU, with
# the registers ptxas reports), measured by `tunefarm run` (serial and under
# mpirun) and read back with h5py/pandas and `tunefarm query`; and the two
# mistakes the loader and the compiler now name. Run alone, or sourced by
# run.sh (which has the harness loaded already).
port_alone=0
if ! declare -F check >/dev/null; then
    . "$(dirname "$0")/../lib.sh"
    port_alone=1
fi
PORT_FIX="$ROOT/tests/fixtures"
PORT="$TMP/port"
mkdir -p "$PORT"
export XDG_CACHE_HOME="$TMP/port-cache"

echo "-- porting a kernel: sizes compiled in, a reference that depends on a parameter, what the compiler said"
"$TF" space "$PORT_FIX/heat" >"$PORT/space.out" 2>&1 || true
check "space: heat loads and counts per problem (BLOCK <= NX / 8)" sh -c \
    "grep -q 'problem small (NX=1000): 9 configurations, 6 valid' '$PORT/space.out' &&
     grep -q 'problem large (NX=5000): 9 configurations, 9 valid' '$PORT/space.out'"
check "compile --arch host: one variant per configuration and problem (6 + 9)" sh -c \
    "\"$TF\" compile -q \"$PORT_FIX/heat.yaml\" --arch host >'$PORT/compile.out' &&
     grep -q 'host: 15 variants of 1 kernel(s): 15 compiled now, 0 from the cache, 0 do not compile' '$PORT/compile.out'"
check "  a second compile finds all 15 in the cache" sh -c \
    "\"$TF\" compile -q \"$PORT_FIX/heat.yaml\" --arch host | grep -q '0 compiled now, 15 from the cache'"

rm -f "$PORT/reference.log"
if TF_TEST_REFERENCE_LOG="$PORT/reference.log" "$TF" run -q -n 1 "$PORT_FIX/heat.yaml" \
    -o "$PORT/heat.h5" >"$PORT/run.out" 2>&1; then
    pass "run heat (one worker) completes"
else
    fail "run heat (one worker) completes" "$PORT/run.out"
fi
check "  every configuration of both problems ok (STEPS 2 and 4 too)" \
    $PY "$ROOT/tests/integration/check_archive.py" "$PORT/heat.h5" heat --rows 15 --unique --all-ok
check "  the reference ran once per problem and STEPS (6 runs), given NX and STEPS" sh -c \
    "[ \$(wc -l <'$PORT/reference.log') -eq 6 ] &&
     [ \"\$(sort -u '$PORT/reference.log' | tr '\n' ' ')\" = '1000 1 1000 2 1000 4 5000 1 5000 2 5000 4 ' ]"
check "  the run measured what compile made (every compile_time 0), warnings and all" $PY -c "
import h5py, sys
d = h5py.File('$PORT/heat.h5', 'r')['kernels/heat/results'][()]
assert (d['compile_time'] == 0).all(), d['compile_time']
assert (d['warnings'] == 1).all(), d['warnings']
assert all(b'unused_on_purpose' in w and b'warning' in w for w in d['first_warning']), d['first_warning'][0]
assert (d['VEC'] == 1).all() and sorted(set(d['STEPS'])) == [1, 2, 4]
"
"$TF" query "$PORT/heat.h5" >"$PORT/query.out" 2>&1 || true
check "query: best configurations without the one-value VEC" sh -c \
    "grep -E '^heat +small .* BLOCK=[0-9]+ STEPS=[0-9]+\$' '$PORT/query.out' >/dev/null &&
     ! grep -q 'VEC=' '$PORT/query.out'"
check "  and the compiler's warning for each best" sh -c \
    "grep -q '^Compiler, best configurations' '$PORT/query.out' &&
     [ \$(grep -cE '^heat +(small|large) .* 1: .*heat.c:[0-9]+:[0-9]+: warning: unused variable' '$PORT/query.out') -eq 2 ]"
check "  the run's own summary shows the same" contains "$PORT/run.out" "Compiler, best configurations"
check "best --format make: the flags a worker compiled, NX of each problem included" sh -c \
    "\"$TF\" best '$PORT/heat.h5' --format make >'$PORT/best.mk' &&
     grep -qE '^HEAT_BEST_SMALL_[A-Z0-9_]+ := -DBLOCK=[0-9]+ -DSTEPS=[124] -DVEC=1 -DNX=1000\$' '$PORT/best.mk' &&
     grep -qE '^HEAT_BEST_LARGE_[A-Z0-9_]+ := -DBLOCK=[0-9]+ -DSTEPS=[124] -DVEC=1 -DNX=5000\$' '$PORT/best.mk'"
if mpirun -np 3 --oversubscribe --bind-to none "$TF" run -q "$PORT_FIX/heat.yaml" \
    -o "$PORT/heat-mpi.h5" >"$PORT/mpi.out" 2>&1; then
    pass "mpirun -np 3: two workers share it"
else
    fail "mpirun -np 3: two workers share it" "$PORT/mpi.out"
fi
check "  all 15 ok" $PY "$ROOT/tests/integration/check_archive.py" "$PORT/heat-mpi.h5" heat --rows 15 --unique --all-ok

# The mistakes: a reference that does not declare STEPS, a kernel that does
# not ask for NX.
mkdir -p "$PORT/nodep" "$PORT/nodefine"
cp "$PORT_FIX/heat/"* "$PORT/nodep/"
sed -i '/^  depends_on: \[STEPS\]$/d' "$PORT/nodep/kernel.yaml"
expect_fail "an argument reading STEPS without depends_on is refused at load (exit 2)" 2 \
    "$TF" space "$PORT/nodep"
check "  at the argument's file:line:col, saying what to write" sh -c \
    "grep -q 'nodep/kernel.yaml:36:41: error: argument .steps. reads parameter .STEPS.' '$TMP/last' &&
     grep -q \"'depends_on: \\[STEPS\\]'\" '$TMP/last'"
cp "$PORT_FIX/heat/"* "$PORT/nodefine/"
sed -i '/^defines: \[NX\]$/d' "$PORT/nodefine/kernel.yaml"
sed -e 's/^name: heat$/name: heat_nodefine/' -e "s|  - kernel: heat|  - kernel: $PORT/nodefine|" \
    "$PORT_FIX/heat.yaml" >"$PORT/nodefine.yaml"
"$TF" run -q -n 1 "$PORT/nodefine.yaml" -o "$PORT/nodefine.h5" >"$PORT/nodefine.out" 2>&1 || true
check "without 'defines: [NX]' every variant is compile_error saying so" $PY -c "
import h5py
d = h5py.File('$PORT/nodefine.h5', 'r')['kernels/heat/results'][()]
assert len(d) == 15 and all(b'NX must be defined' in m for m in d['message']), d['message'][:2]
"

if ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || ls /usr/local/cuda/lib64/libnvrtc.so* >/dev/null 2>&1; then
    "$TF" space "$PORT_FIX/heat_cuda" --arch sm_90 >"$PORT/space-cuda.out" 2>&1 || true
    check "space: heat_cuda on sm_90, 9 valid per problem" sh -c \
        "[ \$(grep -c ': 9 configurations, 9 valid' '$PORT/space-cuda.out') -eq 2 ]"
    check "compile heat_cuda for sm_90, no GPU: 18 variants, per problem" sh -c \
        "\"$TF\" compile -q \"$PORT_FIX/heat_cuda.yaml\" --arch sm_90 | grep -q 'sm_90: 18 variants of 1 kernel(s): 18 compiled now'"
    check "  each variant's registers (ptxas), shared memory per NX and NVRTC's warning are in the cache" $PY -c "
import glob
metas = [dict(l.split(' ', 1) for l in open(p).read().splitlines()) for p in glob.glob('$XDG_CACHE_HOME/tunefarm/cuda/*/*.meta')]
assert len(metas) == 18, len(metas)
assert all(0 < int(m['registers']) <= 255 and int(m['spill_bytes']) == 0 for m in metas), metas[0]
assert sorted(set(int(m['shared_bytes']) for m in metas)) == [8000, 40000], metas
assert all(m['warnings'] == '1' and 'warning #177-D' in m['first_warning'] for m in metas), metas[0]
"
    # The driver stand-in (worker/nocuda.c) is found beside the binary; a copy
    # of the binary alone says, once, that it compiles without it.
    "$TF" compile "$PORT_FIX/heat_cuda.yaml" --arch sm_90 >"$PORT/stub.out" 2>&1 || true
    check "  the compiler processes found libtunefarm-nocuda.so (no note)" \
        sh -c "! grep -q 'libtunefarm-nocuda.so is neither' '$PORT/stub.out'"
    if [ -e /usr/local/lib/tunefarm/libtunefarm-nocuda.so ]; then
        skip "a binary copied alone says it lacks libtunefarm-nocuda.so" \
            "an installed one (/usr/local/lib/tunefarm) would be found"
    else
        mkdir -p "$PORT/lone" && cp "$TF" "$PORT/lone/tunefarm"
        XDG_CACHE_HOME="$PORT/lone-cache" "$PORT/lone/tunefarm" compile "$PORT_FIX/heat_cuda.yaml" \
            --arch sm_90 >"$PORT/lone.out" 2>&1 || true
        check "  a binary copied alone still compiles, and says once why it may be slower" sh -c \
            "grep -q 'sm_90: 18 variants of 1 kernel(s): 18 compiled now' '$PORT/lone.out' &&
             [ \$(grep -c 'libtunefarm-nocuda.so is neither in build/' '$PORT/lone.out') -eq 1 ]"
    fi
else
    skip "compile heat_cuda for sm_90" "no NVRTC on this machine"
fi
export XDG_CACHE_HOME="$TMP/cache"

[ "$port_alone" -eq 0 ] || finish
