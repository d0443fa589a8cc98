# tests/faults/scenarios/65-shield.sh - sourced by tests/faults/run.sh (its
# helpers at hand). A variant that turns on the runner's parent costs its own
# configuration and nothing else (tests/fixtures/shield_parent: MODE m with
# I = 0 misbehaves, I = 1..3 are innocent and measured right after it). The
# runner's parent is a shield (worker/runner_shield.c, tf_runner_shield_start), not the worker
# rank: before it, kill(getppid(), SIGKILL) killed the rank and the run ended
# with exit 1, every resume again (hostile review R12b).
SHIELD_FIX="$ROOT/tests/fixtures/shield_parent"
echo "-- the runner's shield: a variant killing or stopping its parent"

# shield_rows ARCHIVE PYTHON: PYTHON with rows = {(MODE, I): (status, message)}.
shield_rows() { $PY -c "
import h5py, sys
t = h5py.File(sys.argv[1])['kernels/shield/results'][()]
names = {v: k for k, v in h5py.check_enum_dtype(t.dtype['status']).items()}
rows = {(int(r['MODE']), int(r['I'])): (names[int(r['status'])], r['message'].decode())
        for r in t}
$2" "$1"; }

# shield_strays: processes left running with TF_FAULTS_SHIELD=$TMP in their
# environment (MODE 3's 60 s sleeper; zombies are not counted).
shield_strays() {
    local p n=0
    for p in /proc/[0-9]*; do
        { tr "\0" "\n" <"$p/environ"; } 2>/dev/null | grep -qx "TF_FAULTS_SHIELD=$TMP" || continue
        [ "$(sed 's/.*) \(.\).*/\1/' "$p/stat" 2>/dev/null)" = Z ] && continue
        n=$((n + 1))
    done
    echo "$n"
}

# 1 kill(getppid(), SIGKILL); 2 kill(getppid(), SIGSTOP); 3 SIGKILL, then a
# forked 60 s sleeper; 4 the parent-death signal cleared, then SIGKILL; 5
# SIGSTOP, then SIGQUIT (pending until the stopped parent runs again).
t0=$(date +%s)
rc=0
env TF_FAULTS_SHIELD="$TMP" timeout -k 5 150 "$TF" run -n 1 "$SHIELD_FIX/job.yaml" \
    -o "$PWD/shield.h5" >shield.out 2>&1 || rc=$?
took=$(($(date +%s) - t0))
if [ "$rc" -eq 0 ]; then
    pass "shield job: the run ends (exit 0, $took s)"
else
    echo "exit $rc after $took s" >>shield.out; fail "shield job: the run ends (exit 0)" shield.out
fi
check "  kill(getppid(), SIGKILL): that configuration crashed, saying so" shield_rows shield.h5 "
s, m = rows[1, 0]
assert s == 'crashed' and m.startswith('runner killed by signal 9') and 'not by its worker' in m, (s, m)"
check "  every innocent configuration after each attack is ok" shield_rows shield.h5 "
bad = {k: v for k, v in rows.items() if k[1] > 0 and v[0] != 'ok'}
assert not bad and len(rows) == 20, (len(rows), bad)"
check "  kill(getppid(), SIGSTOP): ok (the runner answers; nothing waits on the stopped shield)" \
    shield_rows shield.h5 "
assert rows[2, 0][0] == 'ok', rows[2, 0]"
check "  SIGKILL then fork(): crashed at once, not a timeout (the child holds no channel)" \
    shield_rows shield.h5 "
s, m = rows[3, 0]
assert s == 'crashed', (s, m)"
check "  the parent-death signal cleared, then SIGKILL: crashed all the same" \
    shield_rows shield.h5 "
assert rows[4, 0][0] == 'crashed', rows[4, 0]"
# A signal queued for the shield is seen after the variant, before the
# runner answers (it continues the shield and asks it for a round trip):
# without that, MODE 5 was ok and its SIGQUIT fell on a later configuration.
check "  SIGSTOP then SIGQUIT to the parent: crashed, that configuration and no other" \
    shield_rows shield.h5 "
assert rows[5, 0][0] == 'crashed', rows[5, 0]"
check "  the runner says which configuration killed its parent (stderr)" \
    contains shield.out "killed the runner's parent (its shield); the runner ends"
left=$(shield_strays)
check "  the forked sleeper holds nothing up (less than 40 s) and is not left running ($left)" \
    sh -c "[ $took -lt 40 ] && [ $left -eq 0 ]"
check "  the archive is whole (h5dump, 20 unique rows)" sh -c \
    "h5dump -H shield.h5 >/dev/null && $PY $ROOT/tests/integration/check_archive.py shield.h5 shield --rows 20 --unique"
