# tests/faults/scenarios/30-space.sh - sourced by tests/faults/run.sh (its
# helpers at hand). Huge spaces (issue 11 item 7): a random search of 10^11
# configurations samples without counting them, and a signal during a long
# count ends the run promptly with 75. A worker killed from outside (item 9)
# ends the run with the documented exit 1, not mpirun's 137.
SPACE_FIX="$ROOT/tests/fixtures"

# space_stop ARCHIVE: when a check failed, end whatever still runs for
# ARCHIVE (an absolute path under $TMP: mpirun has its own process group and
# outlives a tunefarm killed by timeout).
space_stop() {
    local p
    for p in $(pgrep -f -- "$1" || true); do kill -KILL "$p" 2>/dev/null || true; done
}

echo "-- huge spaces: sampling without a count, a signal while counting"
t0=$(date +%s)
expect_fail "random search, budget 10, of 10^11 configurations: the run finishes (exit 0)" 0 \
    timeout -k 5 120 "$TF" run -n 1 "$SPACE_FIX/space_random.yaml" -o "$TMP/space_random.h5"
t1=$(date +%s)
space_stop "$TMP/space_random.h5"
# Counting 10^11 configurations would take hours (the timeout ends it at 120
# s); sampling takes a few seconds, so 100 s leaves a slow machine room.
check "  in seconds ($((t1 - t0)) s, less than 100), with an estimated count of the valid ones" sh -c \
    "[ $((t1 - t0)) -lt 100 ] && grep -q '10 of about [0-9]* valid (100000000000 in the Cartesian product)' '$TMP/last'"
check "  10 distinct valid rows, all ok, the default among them" $PY -c "
import h5py
t = h5py.File('$TMP/space_random.h5')['kernels/space_huge/results'][()]
names = {v: k for k, v in h5py.check_enum_dtype(t.dtype['status']).items()}
configs = [int(r['config']) for r in t]
assert len(configs) == 10 and len(set(configs)) == 10, configs
assert {names[int(r['status'])] for r in t} == {'ok'}
assert all(sum(int(r['P%d' % i]) for i in range(11)) % 2 == 0 for r in t)
assert 0 in configs, configs   # the default: every P = 0
"

# Problem `none` of space_huge: nothing is valid, and only the deepest level
# can tell, so brute force counts for hours unless a signal stops it.
"$TF" run -n 1 "$SPACE_FIX/space_count.yaml" -o "$TMP/space_count.h5" >space_count.out 2>&1 &
RUN_PID=$!
for i in $(seq 300); do
    contains space_count.out "counting the valid configurations of space_huge/none" && break
    sleep 0.1
done
if contains space_count.out "counting the valid configurations of space_huge/none"; then
    # The count polls for a signal every 65536 steps (well under a second); a
    # count that did not would run for hours: after 60 s it is killed.
    t0=$(date +%s%N)
    kill -TERM "$RUN_PID"
    for i in $(seq 1200); do kill -0 "$RUN_PID" 2>/dev/null || break; sleep 0.05; done
    ms=$((($(date +%s%N) - t0) / 1000000))
    kill -0 "$RUN_PID" 2>/dev/null && space_stop "$TMP/space_count.h5"
    finish_rc
    if [ "$RUN_RC" -eq 75 ] && [ "$ms" -lt 15000 ] &&
       contains space_count.out "stopped by a signal while counting the valid configurations" &&
       contains space_count.out "run the same command again"; then
        pass "SIGTERM while counting 10^11 configurations: exit 75 in $ms ms, progress shown"
    else
        echo "exit $RUN_RC after $ms ms" >>space_count.out
        fail "SIGTERM while counting: expected exit 75 within 15 s" space_count.out
        space_stop "$TMP/space_count.h5"
    fi
    check "  no archive left, nor a journal (nothing was measured)" sh -c \
        "[ ! -e '$TMP/space_count.h5' ] && [ ! -e '$TMP/space_count.h5.journal' ]"
else
    fail "a long count shows no progress line after 30 s" space_count.out
    space_stop "$TMP/space_count.h5"
    wait "$RUN_PID" 2>/dev/null || true
fi

echo "-- a worker killed from outside: the documented exit 1"
start wkill1.h5
if wait_results wkill1.h5 5 && pid=$(rank_pid 1 wkill1.h5); then
    kill -KILL "$pid"; finish_rc
    if [ "$RUN_RC" -eq 1 ] && contains wkill1.h5.out "run the same command again to resume"; then
        pass "worker SIGKILL: exit 1 (not mpirun's 137), saying what to do"
    else
        echo "exit $RUN_RC" >>wkill1.h5.out
        fail "worker SIGKILL: expected exit 1" wkill1.h5.out
    fi
    resume "worker SIGKILL, exit 1, then resume" wkill1.h5
else
    fail "worker SIGKILL (exit code): no worker rank found" wkill1.h5.out
    kill "$RUN_PID" 2>/dev/null || true
fi
