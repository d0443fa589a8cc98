# tests/faults/scenarios/22-coordinator.sh - sourced by tests/faults/run.sh
# (its helpers at hand). The coordinator's bookkeeping of workers and answers
# (review of 2026-11-25). Silent is not stalled (H2, M4), on
# tests/fixtures/slow_reference:
#  - a problem whose CPU reference takes 15 s, with variants of a 1.5 s
#    timeout, on two workers: neither is taken for stalled (the bound was
#    1.5 s per configuration owed + 10 s, so both were, and the work was
#    handed over and measured twice); the workers' heartbeat says they live;
#  - a worker stopped (SIGSTOP) inside the second configuration of its slice,
#    the first one answered: the slice goes to the other worker without the
#    answered one ("takes over 3 configurations"; it went over whole, and
#    the other worker measured the answered one again, dropped as a repeat).
# Configurations above 2^64 / 3 (L11, tests/fixtures/wide_index): of 10^19,
# 0 and 0x5555555555555555 are valid; with top_k 2 both are measured twice,
# four rows (the phase folded into the record's key, config * 3 + phase, made
# the second one's phase 2 the first one's phase 1: dropped, run incomplete).
export TUNEFARM_KERNEL_PATH="$ROOT/tests/fixtures"
SILENT="$ROOT/tests/fixtures/slow_reference.yaml"
CHECK_ARCHIVE="$PY $ROOT/tests/integration/check_archive.py"

echo "-- a worker waiting on a slow reference is silent, not stalled"
check "a 15 s reference, 1.5 s timeouts, two workers" \
    sh -c "\"$TF\" run -n 2 \"$SILENT\" -o sref.h5 >sref.out 2>&1"
check "  no worker taken for stalled, nothing handed over" sh -c "
    ! grep -q 'has sent nothing' sref.out && ! grep -q 'takes over' sref.out &&
    ! grep -q 'Stalled workers' sref.out"
check "  every configuration once, all ok" $CHECK_ARCHIVE sref.h5 slow_reference --rows 16 \
    --unique --all-ok

echo "-- a stalled worker's slice goes over without what it had answered"
sed -e 's/problems: \[slow\]/problems: [one]/' \
    -e 's/^measure: .*/measure: {warmup: 0, min_samples: 1, max_samples: 1, min_time: 0.000001, max_time: 1, max_noise: 0.99, timeout: 30}/' \
    "$SILENT" >one.yaml
# busy_in_variant WORKER: its runner (the shield's child) sleeps in a variant
# (REP=1: the reference of problem `one` does not sleep).
busy_in_variant() {
    local s r
    for s in $(pgrep -P "$1" -f -- __runner || true); do
        for r in $(pgrep -P "$s" -f -- __runner || true); do
            grep -q nanosleep "/proc/$r/wchan" 2>/dev/null && return 0
        done
    done
    return 1
}
"$TF" run -n 2 one.yaml -o trim.h5 >trim.out 2>&1 &
RUN_PID=$!
caught=0
for i in $(seq 400); do
    for r in 1 2; do
        if pid=$(rank_pid $r trim.h5) && busy_in_variant "$pid"; then caught=$r; break 2; fi
    done
    sleep 0.05
done
if [ "$caught" != 0 ]; then
    sleep 3 # the answer of REP=0 goes out meanwhile (the heartbeat sends what waits)
    kill -STOP "$pid"
    for i in $(seq 90); do
        if "$TF" status trim.h5 2>/dev/null | grep -q "Run 0: .*finished"; then break; fi
        sleep 1
    done
    kill -CONT "$pid" 2>/dev/null || true; finish_rc
    check "rank $caught stopped inside REP=1, REP=0 answered: the run ends (exit 0)" \
        test "$RUN_RC" -eq 0
    check "  its slice of 4 goes over as the 3 not answered" \
        grep -q "takes over 3 configurations of stalled rank $caught" trim.out
    check "  and nothing it had answered is measured again" sh -c \
        "! grep -q 'the rank it was taken from' trim.out"
    check "  every configuration once" $CHECK_ARCHIVE trim.h5 slow_reference --rows 16 --unique
else
    fail "stalled mid-slice: no worker caught inside REP=1 in 20 s" trim.out
    kill "$RUN_PID" 2>/dev/null || true; wait "$RUN_PID" 2>/dev/null || true
fi

echo "-- configurations above 2^64 / 3: each phase of each is its own answer"
check "0 and 0x5555555555555555 of 10^19, top_k 2: the run completes (exit 0)" sh -c \
    "\"$TF\" run -n 1 \"$ROOT/tests/fixtures/wide_index.yaml\" -o wide.h5 >wide.out 2>&1"
check "  four rows, both phases of both, nothing dropped" sh -c "
    ! grep -q 'dropped' wide.out && $PY -c \"
import h5py
t = h5py.File('wide.h5')['kernels/wide_index/results'][()]
got = sorted((int(r['config']), int(r['phase'])) for r in t)
assert got == [(0, 1), (0, 2), (6148914691236517205, 1), (6148914691236517205, 2)], got
\""
check "  status counts four distinct, none repeated" sh -c "
    \"$TF\" status wide.h5 >wide.status && grep -q 'two on .*: 4 of 4 measured' wide.status &&
    ! grep -q 'repeat' wide.status || { cat wide.status; exit 1; }"

echo "-- merging a live run across its checkpoints"
# The merge reads the input's journal, then (2.5 s later: test hook) its
# archive, while the run checkpoints every second: the journal read is then
# behind the archive, whose rows hold it. (Read the other way round, the
# journal was ahead of the archive: "the archive was removed or replaced by
# an older copy", exit 2.)
start mcp.h5
if wait_results mcp.h5 5; then
    check "merge of a live run, checkpoints between its journal and archive reads" sh -c "
        TUNEFARM_TEST_READ_PAUSE=2.5 \"$TF\" merge mcpout.h5 mcp.h5 >mcpout.1 2>&1 &&
        grep -q 'STILL RUNNING' mcpout.1 || { cat mcpout.1; exit 1; }"
    finish_rc
    check "  once it ended, merging again completes it" sh -c "
        [ $RUN_RC -eq 0 ] && \"$TF\" merge mcpout.h5 mcp.h5 >mcpout.2 2>&1 &&
        grep -q 'rows added to run 0 .*now finished' mcpout.2"
    verdict "  the merged archive holds the whole run, none twice" mcpout.h5
else fail "live merge across checkpoints: no results reached the journal" mcp.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi

echo "-- reading a live run across its checkpoints: status, query, export"
# The same hook in the commands that only read: each reads the journal, waits
# 2.5 s while the run checkpoints, then reads the archive. (They read the
# archive first until 2026-12-06: a checkpoint between the reads made them
# refuse a live archive as "replaced by an older copy", one call in ~700.)
start rcp.h5
if wait_results rcp.h5 5; then
    for c in status query "export --format csv"; do
        check "$c of a live run, checkpoints between its journal and archive reads" sh -c "
            TUNEFARM_TEST_READ_PAUSE=2.5 \"$TF\" $c rcp.h5 >rcp.$$.out 2>&1 ||
            { cat rcp.$$.out; exit 1; }"
    done
    finish_rc
    check "  the run ends (exit 0)" test "$RUN_RC" -eq 0
    verdict "  and its archive holds the whole run, none twice" rcp.h5
else fail "live reads across checkpoints: no results reached the journal" rcp.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi
