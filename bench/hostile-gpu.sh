#!/usr/bin/env bash
# bench/hostile-gpu.sh - hostile CUDA variants among innocent ones on a GPU
# (issue 11's review of the GPU runner): tests/fixtures/runner_gpuhostile's job,
# every MODE three times in a row, then one line per case:
#   overflow   writes 16 and 1 floats past y, and y[-1]: runtime_error naming y
#              (the runner's canaries around every device buffer)
#   trap       __trap(): runtime_error, and the runner is replaced
#   hang       a kernel that never returns: timeout (runner killed), the rest goes on
#   innocent   every MODE 0 configuration, each after a hostile one: ok
#   leftovers  no runner left running after the run
# Without a GPU each case prints "skipped: no device (why)" and the script exits
# 0; the variants are still compiled with NVRTC for sm_90 when libnvrtc is here.
# Logs go to $OUT (the device tool's folder) or /tmp/tunefarm-hostile-gpu.
# Exit status: 0 every case passed or was skipped, 1 otherwise.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
LOG=${OUT:-/tmp/tunefarm-hostile-gpu}
mkdir -p "$LOG"
WORK=$(mktemp -d /tmp/tf-hostile-gpu.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
TF="$ROOT/tunefarm"
PY=${PYTHON:-python3} # the one with h5py
JOB="$ROOT/tests/fixtures/runner_gpuhostile/job.yaml"
CASES="overflow trap hang innocent leftovers"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export XDG_CACHE_HOME="$WORK/cache"
failed=0

echo "== tunefarm bench/hostile-gpu.sh, $(date -u +%Y-%m-%dT%H:%MZ)" | tee "$LOG/hostile-gpu.log"
make -j"$(nproc)" tunefarm >"$LOG/hostile-gpu-build.log" 2>&1 ||
    { echo "build failed"; tail -20 "$LOG/hostile-gpu-build.log"; exit 1; }
"$TF" devices >"$LOG/hostile-gpu-devices.txt" 2>&1
if ! grep -qE '^[0-9]+ +cuda ' "$LOG/hostile-gpu-devices.txt"; then
    why=$(sed -n 's/^cuda: //p' "$LOG/hostile-gpu-devices.txt" | head -1)
    # Compiling needs no device: check the fixture still compiles where NVRTC is.
    if (cd "$WORK" && "$TF" compile -q "$JOB" --arch sm_90) >>"$LOG/hostile-gpu.log" 2>&1; then
        echo "compile: the hostile variants compile for sm_90 (NVRTC, no device)"
    else
        echo "compile: not checked (no NVRTC here, see $LOG/hostile-gpu.log)"
    fi
    for c in $CASES; do echo "$c: skipped: no device (${why:-no cuda device})"; done
    exit 0
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee -a "$LOG/hostile-gpu.log"

t0=$(date +%s)
rc=0
(cd "$WORK" && timeout -k 10 600 "$TF" run -n 1 "$JOB" -o "$WORK/gpuhostile.h5") \
    >>"$LOG/hostile-gpu.log" 2>&1 || rc=$?
took=$(($(date +%s) - t0))
echo "run: exit $rc in $took s" | tee -a "$LOG/hostile-gpu.log"
cp "$WORK/gpuhostile.h5" "$LOG/" 2>/dev/null || true

# case NAME PYTHON: PYTHON sees rows = {(REP, MODE): (status, message)} and
# prints the case's detail; an assertion failing fails the case.
case_() {
    local name=$1 out
    if out=$($PY - "$WORK/gpuhostile.h5" 2>&1 <<PYEOF
import h5py, sys
t = h5py.File(sys.argv[1])['kernels/gpuhostile/results'][()]
names = {v: k for k, v in h5py.check_enum_dtype(t.dtype['status']).items()}
rows = {(int(r['REP']), int(r['MODE'])): (names[int(r['status'])], r['message'].decode())
        for r in t}
$2
PYEOF
    ); then
        echo "$name: ok: $out"
    else
        echo "$name: FAILED: $out"; failed=1
    fi
}
{
case_ overflow "
for rep in range(3):
    for mode, says in [(1, 'y: wrote past its end'), (2, 'y: wrote past its end'),
                       (3, 'y: wrote before its start')]:
        s, m = rows[rep, mode]
        assert s == 'runtime_error' and m.startswith(says), (rep, mode, s, m)
print('9 of 9 runtime_error naming y, e.g. %r' % rows[0, 1][1])"
case_ trap "
for rep in range(3):
    assert rows[rep, 4][0] == 'runtime_error', rows[rep, 4]
print('3 of 3 runtime_error: %r' % rows[0, 4][1])"
case_ hang "
for rep in range(3):
    assert rows[rep, 5][0] == 'timeout', rows[rep, 5]
print('3 of 3 timeout: %r' % rows[0, 5][1])"
case_ innocent "
bad = {k: v for k, v in rows.items() if k[1] == 0 and v[0] != 'ok'}
assert not bad and len(rows) == 18, (bad, len(rows))
print('3 of 3 ok, each measured after a hostile variant')"
if pgrep -f -- "__runner cuda" >/dev/null; then
    echo "leftovers: FAILED: $(pgrep -af -- "__runner cuda" | head -3)"; failed=1
else
    echo "leftovers: ok: no runner left"
fi
} | tee -a "$LOG/hostile-gpu.log"
# (the block above runs in a pipeline's subshell: its verdicts are read back
# from the log, by their form alone; a message may hold CUDA_ERROR_LAUNCH_FAILED)
grep -Eq '^[a-z]+: FAILED: ' "$LOG/hostile-gpu.log" && failed=1
[ "$rc" -eq 0 ] || failed=1
exit "$failed"
