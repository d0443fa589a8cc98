# tests/faults/scenarios/65-shield.sh - sourced by tests/faults/run.sh (its
# helpers at hand). A variant that turns on the runner's parent costs its own
# configuration and nothing else (tests/fixtures/shield_parent: MODE m with
# I = 0 misbehaves, I = 1..3 are innocent and measured right after it). The
# runner's parent is a shield (worker/runner_shield.c, tf_runner_shield_start), not the worker
# rank: before it, kill(getppid(), SIGKILL) killed the rank and the run ended
# with exit 1, every resume again (hostile review R12b).
SHIELD_FIX="$ROOT/tests/fixtures/shield_parent"
echo "-- the runner's shield: a variant killing or stopping its parent"

# 1 kill(getppid(), SIGKILL); 2 kill(getppid(), SIGSTOP); 3 SIGKILL, then a
# forked 300 s sleeper; 4 the parent-death signal cleared, then SIGKILL; 5
# SIGSTOP, then SIGQUIT (pending until the stopped parent runs again). A run
# the sleeper holds up takes about 300 s, a healthy one a few seconds (the
# finalize timeout, 60 s by default, would cut a hold short at 70 s: 300 s
# here, as in 10-runner.sh). The sleeper carries TF_FAULTS_SHIELD=$TMP.
t0=$(date +%s)
rc=0
env TF_FAULTS_SHIELD="$TMP" TUNEFARM_FINALIZE_TIMEOUT=300 timeout -k 5 400 \
    "$TF" run -n 1 "$SHIELD_FIX/job.yaml" -o "$PWD/shield.h5" >shield.out 2>&1 || rc=$?
took=$(($(date +%s) - t0))
if [ "$rc" -eq 0 ]; then
    pass "shield job: the run ends (exit 0, $took s)"
else
    echo "exit $rc after $took s" >>shield.out; fail "shield job: the run ends (exit 0)" shield.out
fi
check "  kill(getppid(), SIGKILL): that configuration crashed, saying so" kernel_rows shield.h5 shield "MODE I" "
s, m = rows[1, 0][:2]
assert s == 'crashed' and m.startswith('runner killed by signal 9') and 'not by its worker' in m, (s, m)"
check "  every innocent configuration after each attack is ok" kernel_rows shield.h5 shield "MODE I" "
bad = {k: v[:2] for k, v in rows.items() if k[1] > 0 and v[0] != 'ok'}
assert not bad and len(rows) == 20, (len(rows), bad)"
check "  kill(getppid(), SIGSTOP): ok (the runner answers; nothing waits on the stopped shield)" \
    kernel_rows shield.h5 shield "MODE I" "
assert rows[2, 0][0] == 'ok', rows[2, 0][:2]"
check "  SIGKILL then fork(): crashed at once, not a timeout (the child holds no channel)" \
    kernel_rows shield.h5 shield "MODE I" "
s, m = rows[3, 0][:2]
assert s == 'crashed', (s, m)"
check "  the parent-death signal cleared, then SIGKILL: crashed all the same" \
    kernel_rows shield.h5 shield "MODE I" "
assert rows[4, 0][0] == 'crashed', rows[4, 0][:2]"
# A signal queued for the shield is seen after the variant, before the
# runner answers (it continues the shield and asks it for a round trip):
# without that, MODE 5 was ok and its SIGQUIT fell on a later configuration.
check "  SIGSTOP then SIGQUIT to the parent: crashed, that configuration and no other" \
    kernel_rows shield.h5 shield "MODE I" "
assert rows[5, 0][0] == 'crashed', rows[5, 0][:2]"
check "  the runner says which configuration killed its parent (stderr)" \
    contains shield.out "killed the runner's parent (its shield); the runner ends"
left=$(strays TF_FAULTS_SHIELD "$TMP")
check "  the forked sleeper holds nothing up (less than 150 s) and is not left running ($left)" \
    sh -c "[ $took -lt 150 ] && [ $left -eq 0 ]"
check "  the archive is whole (h5dump, 20 unique rows)" sh -c \
    "h5dump -H shield.h5 >/dev/null && $PY $ROOT/tests/integration/check_archive.py shield.h5 shield --rows 20 --unique"
