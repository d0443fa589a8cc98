# tests/faults/scenarios/10-runner.sh - runner isolation (sourced by
# tests/faults/run.sh, in $TMP, with its helpers): hostile variants among
# innocent ones (tests/fixtures/runner_hostile) cost their own configuration
# and nothing else, and a worker rank stopped and continued records no
# healthy configuration as a timeout.
HOSTILE="$ROOT/tests/fixtures/runner_hostile"
echo "-- hostile variants: each costs its own configuration, never the next ones"

# The job's cache is `relcache`: relative to the folder the run starts in.
# MODE 9 and 10 fork sleepers of 300 s: a run they hold up takes about 300 s,
# a healthy one a few seconds. Sleepers left behind keep mpirun from exiting,
# and tunefarm run stops it 10 s after the finalize timeout (60 s by default):
# that timeout is 300 s here, so a hold is not cut short, and the run's
# timeout 400 s. The sleepers carry TF_FAULTS_RUNNER=$TMP (`strays`).
mkdir -p hostile && cd hostile
t0=$(date +%s)
rc=0
env TF_FAULTS_RUNNER="$TMP" TUNEFARM_FINALIZE_TIMEOUT=300 timeout -k 5 400 \
    "$TF" run -n 1 "$HOSTILE/job.yaml" -o hostile.h5 \
    >hostile.out 2>&1 || rc=$?
took=$(($(date +%s) - t0))
if [ "$rc" -eq 0 ]; then
    pass "hostile job: the run ends (exit 0, $took s)"
else
    echo "exit $rc after $took s" >>hostile.out; fail "hostile job: the run ends" hostile.out
fi
check "  the relative cache is where the run started" test -d relcache/host
check "  writes past y (16, 1, 4 floats) and before it: runtime_error naming y, every time" \
    kernel_rows hostile.h5 hostile "REP MODE" "
for rep in range(3):
    for mode, says in [(1, 'y: wrote past its end'), (2, 'y: wrote past its end'),
                       (3, 'y: wrote past its end'), (4, 'y: wrote before its start')]:
        s, m = rows[rep, mode][:2]
        assert s == 'runtime_error' and m.startswith(says), (rep, mode, s, m)"
check "  a runaway loop past y: runtime_error, caught by the guard page" kernel_rows hostile.h5 hostile "REP MODE" "
for rep in range(3):
    s, m = rows[rep, 5][:2]
    assert s == 'runtime_error' and 'in the guard page' in m, (rep, s, m)"
check "  the runaway loop on a thread of the variant's: crashed (signal 11), the runner ends" \
    kernel_rows hostile.h5 hostile "REP MODE" "
for rep in range(3):
    s, m = rows[rep, 14][:2]
    assert s == 'crashed' and 'signal 11' in m, (rep, s, m)"
check "  a runaway read past x: runtime_error 'x: read past its end', in the guard page" \
    kernel_rows hostile.h5 hostile "REP MODE" "
for rep in range(3):
    s, m = rows[rep, 15][:2]
    assert s == 'runtime_error' and m.startswith('x: read past its end') and 'guard page' in m, (rep, s, m)"
check "  every innocent configuration after them is ok (MODE 0, 7, 8, 11 x 3)" \
    kernel_rows hostile.h5 hostile "REP MODE" "
bad = {k: v[:2] for k, v in rows.items() if k[1] in (0, 7, 8, 11) and v[0] != 'ok'}
assert not bad and len(rows) == 42, bad"
check "  chdir(), forked children, setsid(): each ok, and so is what follows" \
    kernel_rows hostile.h5 hostile "REP MODE" "
bad = {k: v[:2] for k, v in rows.items() if k[1] in (6, 9, 10) and v[0] != 'ok'}
assert not bad, bad"
check "  forked sleepers (300 s) hold nothing up: the run took less than 150 s" test "$took" -lt 150
check "  and none is left running" test "$(strays TF_FAULTS_RUNNER "$TMP")" -eq 0
check "  MODE 11 (samples of 20, 100, 40 ms): median above min" kernel_rows hostile.h5 hostile "REP MODE" "
assert all(rows[rep, 11][2] < rows[rep, 11][3] for rep in range(3)), [rows[r, 11] for r in range(3)]"
check "  the archive passes the integration checks (min < median somewhere)" \
    $PY "$ROOT/tests/integration/check_archive.py" hostile.h5 hostile --rows 42 --unique
cd "$area"

echo "-- a worker rank stopped and continued: the configuration in flight is ok"
# measuring WORKER: its runner is inside a variant (MODE 12 sleeps in each launch).
# The worker's child is the runner's shield; the runner is the shield's child.
measuring() {
    local s r
    for s in $(pgrep -P "$1" -f -- __runner || true); do
        for r in $(pgrep -P "$s" -f -- __runner || true); do
            grep -q nanosleep "/proc/$r/wchan" 2>/dev/null && return 0
        done
    done
    return 1
}
"$TF" run -n 1 "$HOSTILE/stall.yaml" -o wstop.h5 >wstop.h5.out 2>&1 &
RUN_PID=$!
caught=0
for i in $(seq 300); do
    if pid=$(rank_pid 1 wstop.h5) && measuring "$pid"; then caught=1; break; fi
    sleep 0.05
done
if [ "$caught" = 1 ]; then
    kill -STOP "$pid"; sleep 5; kill -CONT "$pid"
    finish_rc
    if [ "$RUN_RC" -eq 0 ]; then
        check "SIGSTOP the worker mid-configuration 5 s (timeout 2 s), SIGCONT: no timeout" \
            $PY "$ROOT/tests/integration/check_archive.py" wstop.h5 hostile --rows 3 --unique --all-ok
    else
        echo "exit $RUN_RC" >>wstop.h5.out; fail "SIGSTOP the worker: the run failed" wstop.h5.out
    fi
else
    fail "SIGSTOP the worker: no worker rank caught measuring in 15 s" wstop.h5.out
    kill "$RUN_PID" 2>/dev/null || true; wait "$RUN_PID" 2>/dev/null || true
fi
