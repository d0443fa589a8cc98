# tests/faults/scenarios/80-replay.sh - sourced by tests/faults/run.sh (its
# helpers at hand). Replay (issue 12 item 4) through the real farm, real MPI
# ranks, no device: brute force over a small Kernel Tuner cache gives the
# cache's optimum as the archive's best, every configuration once with its
# status mapped; the /runs row names the source; --workers 4 and mpirun -np 5
# both give four replay devices sharing the work; a replay of the matrix's
# reference archive reproduces its rows' statuses and times (the job's targets
# name `host`: --replay overrides them); a kernel whose values differ from the
# source, or whose problem has other sizes than the archive's of that name, is
# refused with exit 2 before anything is written.
export TUNEFARM_KERNEL_PATH="$ROOT/tests/fixtures"
SMALL_KT="$ROOT/tests/unit/fixtures/ktcache_small.json.gz"
REPLAY_JOB="$ROOT/tests/fixtures/replay_small.yaml"

# replay_check ARCHIVE DEVICES: brute force over replay_small answered from
# ktcache_small: 12 rows, each configuration once, statuses as Kernel Tuner
# recorded them, best = 64,1,col at 1.75 ms, DEVICES replay devices named
# "Test GPU", and the /runs row naming the cache.
replay_check() {
    $PY - "$1" "$2" "$SMALL_KT" <<'PYEOF'
import h5py, sys
path, ndev, src = sys.argv[1], int(sys.argv[2]), sys.argv[3]
f = h5py.File(path)
t = f['kernels/replay_small/results'][()]
names = {v: k for k, v in h5py.check_enum_dtype(t.dtype['status']).items()}
keys = [(r['layout'].decode() if isinstance(r['layout'], bytes) else str(r['layout']),
         int(r['tile_size_x']), int(r['block_size_x'])) for r in t]
assert len(t) == 12 and len(set(int(r['config']) for r in t)) == 12, len(t)
got = {k: names[int(r['status'])] for k, r in zip(keys, t)}
want = {('col', 2, 16): 'ok', ('row', 1, 16): 'ok', ('col', 1, 64): 'ok',
        ('row', 1, 32): 'compile_error', ('row', 2, 32): 'runtime_error',
        ('col', 2, 64): 'invalid'}
for k, s in got.items():
    assert s == want.get(k, 'invalid'), (k, s)
msgs = {k: r['message'].decode() for k, r in zip(keys, t)}
assert msgs[('col', 1, 16)] == 'not in the replay source', msgs[('col', 1, 16)]
ok = [(float(r['time_median']), k) for k, r in zip(keys, t) if names[int(r['status'])] == 'ok']
best = min(ok)
assert best[1] == ('col', 1, 64) and abs(best[0] - 1.75e-3) < 1e-12, best
d = f['devices'][()]
assert len(d) == ndev, len(d)
assert all(x['backend'] == b'replay' and x['name'] == b'Test GPU' for x in d), d
runs = f['runs'][()]
assert len(runs) == 1 and runs[0]['replay_source'].decode() == src, runs[0]['replay_source']
assert b'--replay' in runs[0]['command']
PYEOF
}

echo "-- replay: a Kernel Tuner cache through the farm, no device"
check "brute-force replay of a small cache" "$TF" run -q "$REPLAY_JOB" -o rs1.h5 --replay "$SMALL_KT"
check "  every configuration once, statuses mapped, the cache's optimum best, /runs names the source" \
    replay_check rs1.h5 1
check "--workers 4: four replay devices" "$TF" run -q "$REPLAY_JOB" -o rs4.h5 --replay "$SMALL_KT" --workers 4 --speed 1000
check "  the same answers" replay_check rs4.h5 4
check "mpirun -np 5 (real ranks): four replay devices" mpirun -np 5 --oversubscribe \
    "$TF" run -q "$REPLAY_JOB" -o rsm.h5 --replay "$SMALL_KT"
check "  the same answers" replay_check rsm.h5 4
check "  and more than one of them measured" $PY -c "
import h5py; t = h5py.File('rsm.h5')['kernels/replay_small/results'][()]
assert len(set(int(r['device']) for r in t)) > 1"

echo "-- replay: a kernel that differs from the source is refused"
expect_fail "mismatched values: exit 2" 2 "$TF" run -q "$ROOT/tests/fixtures/replay_mismatch.yaml" \
    -o rmis.h5 --replay "$SMALL_KT"
check "  naming the parameter and both value lists" contains "$TMP/last" \
    "parameter 'block_size_x' has the values [16, 32, 64] in the replay source but [64, 32, 128] in kernel 'replay_mismatch'"
check "  and writing nothing" sh -c "[ ! -e rmis.h5 ] && [ ! -e rmis.h5.journal ]"
expect_fail "under mpirun too: exit 2" 2 mpirun -np 3 --oversubscribe "$TF" run -q \
    "$ROOT/tests/fixtures/replay_mismatch.yaml" -o rmis.h5 --replay "$SMALL_KT"
check "  writing nothing" sh -c "[ ! -e rmis.h5 ] && [ ! -e rmis.h5.journal ]"

echo "-- replay: an archive's problem of the same name but other sizes is refused"
mkdir -p sized && cp -r "$ROOT/tests/fixtures/replay_small" sized/ && cp "$REPLAY_JOB" sized/job.yaml
sed -i 's/small: {N: 64}/small: {N: 128}/' sized/replay_small/kernel.yaml
expect_fail "the job's problem small has N=128, the archive's N=64: exit 2" 2 \
    "$TF" run -q sized/job.yaml -o rsz.h5 --replay rs1.h5
check "  naming both" contains "$TMP/last" "problem 'small' was measured with N=64, the job's has N=128"
check "  and writing nothing" sh -c "[ ! -e rsz.h5 ] && [ ! -e rsz.h5.journal ]"

echo "-- replay: an archive (the matrix's reference) reproduces its rows"
check "replay of ref.h5 with the matrix job (targets: host, overridden)" \
    "$TF" run -q "$JOB" -o rref.h5 --replay ref.h5 --workers 2
check "  same configurations, statuses and time statistics as ref.h5" $PY - <<'PYEOF'
import h5py, math
a, b = h5py.File('ref.h5'), h5py.File('rref.h5')
for k in a['kernels']:
    ra, rb = a['kernels'][k]['results'][()], b['kernels'][k]['results'][()]
    ka = {(int(r['problem']), int(r['config'])): r for r in ra}
    kb = {(int(r['problem']), int(r['config'])): r for r in rb}
    assert ka.keys() == kb.keys(), (k, len(ka), len(kb))
    for key, x in ka.items():
        y = kb[key]
        assert x['status'] == y['status'], (k, key)
        for c in ('time_median', 'time_min', 'time_mean', 'time_rsd', 'samples', 'compile_time'):
            assert x[c] == y[c] or (math.isnan(x[c]) and math.isnan(y[c])), (k, key, c, x[c], y[c])
d = b['devices'][()]
assert all(x['backend'] == b'replay' for x in d) and len(d) == 2, d
assert b['runs'][()][0]['replay_source'].decode().endswith('/ref.h5')
PYEOF

echo "-- replay: a run resumes only a run of the same source"
cp ref.h5 ref2.h5
# The coordinator is stopped (SIGSTOP) before the SIGTERM and continued once
# the signal, passed on as SIGUSR1 by `tunefarm run`, waits for it: so the run
# cannot end before the signal reaches it.
"$TF" run "$JOB" -o rres.h5 --replay ref.h5 --workers 2 --speed 0.5 >rres.h5.out 2>&1 &
RUN_PID=$!
# usr1_pending PID: SIGUSR1 (bit 10) is pending for the process PID.
usr1_pending() {
    local pnd
    pnd=$(awk '/^ShdPnd:/ {print $2}' "/proc/$1/status" 2>/dev/null) || return 1
    [ -n "$pnd" ] && [ $((0x$pnd & 0x200)) -ne 0 ]
}
if wait_results rres.h5 3 && pid=$(rank_pid 0 rres.h5) && kill -STOP "$pid"; then
    kill -TERM "$RUN_PID"
    for i in $(seq 200); do usr1_pending "$pid" && break; sleep 0.05; done
    kill -CONT "$pid" 2>/dev/null || true; finish_rc
    check "a slow replay stopped by SIGTERM: exit 75, run unfinished" sh -c \
        "[ $RUN_RC -eq 75 ] && \"$TF\" status rres.h5 | grep -q UNFINISHED"
    check "  a replay of another source starts a run of its own" sh -c \
        "\"$TF\" run \"$JOB\" -o rres.h5 --replay ref2.h5 >rres.2 2>&1 && ! grep -q resuming rres.2"
    check "  the same source resumes its run" sh -c \
        "\"$TF\" run \"$JOB\" -o rres.h5 --replay ref.h5 >rres.3 2>&1 && grep -q 'resuming run 0' rres.3"
    check "  and the archive has both runs, each with its source" $PY -c "
import h5py; r = h5py.File('rres.h5')['runs'][()]
assert len(r) == 2 and r[0]['end_unix'] > 0 and r[1]['end_unix'] > 0, r
assert r[0]['replay_source'].decode().endswith('/ref.h5') and r[1]['replay_source'].decode().endswith('/ref2.h5'), r"
else fail "slow replay: no results, or no coordinator to stop" rres.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi
unset TUNEFARM_KERNEL_PATH
