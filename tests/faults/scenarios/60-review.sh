# tests/faults/scenarios/60-review.sh - sourced by tests/faults/run.sh (its
# helpers at hand). Findings of the hostile review of 2026-11-23
# (bench/results/hostile-review-2026-11-23-cpu.md): a variant that leaves the
# runner's state changed must cost its own configuration at most, and never
# the innocent ones after it (tests/fixtures/review_hostile: MODE m with I = 0
# misbehaves, I = 1..3 are innocent and measured right after it).
REVIEW_FIX="$ROOT/tests/fixtures/review_hostile"
echo "-- hostile review: state a variant leaves behind"

# review_job DIR MODES: a copy of the fixture in DIR whose space is MODES.
review_job() {
    mkdir -p "$1"
    cp "$REVIEW_FIX"/review.c "$REVIEW_FIX"/reference.c "$REVIEW_FIX"/job.yaml "$1"/
    sed "s/^  MODE: .*/  MODE: [$2]/; s/^default: .*/default: {MODE: ${2%%,*}, I: 1}/" \
        "$REVIEW_FIX/kernel.yaml" >"$1/kernel.yaml"
}

# 1 args[3] = args[2]; 2 the int scalar zeroed in place; 3 the runner's pointer
# to y moved through args; 4 an interval timer left armed; 5 RLIMIT_NOFILE
# lowered to 4; 8 junk written to every descriptor; 21 SIGSEGV/SIGBUS ignored.
# Junk that reached an MPI socket held both ranks in MPI_Finalize until the
# finalize timeout (R8): here 300 s, so such a run takes more than 300 s (the
# timeout lets it get there), a healthy one a few seconds.
review_job state "1, 2, 3, 4, 5, 8, 21"
t0=$(date +%s)
rc=0
TUNEFARM_FINALIZE_TIMEOUT=300 timeout -k 5 400 "$TF" run -n 1 state/job.yaml -o "$PWD/state.h5" \
    >state.out 2>&1 || rc=$?
took=$(($(date +%s) - t0))
if [ "$rc" -eq 0 ]; then
    pass "review job: the run ends (exit 0, $took s)"
else
    echo "exit $rc after $took s" >>state.out; fail "review job: the run ends" state.out
fi
check "  every innocent variant after a hostile one is ok (args, timer, rlimit, fds, handlers)" \
    kernel_rows state.h5 review "MODE I" "
bad = {k: v[:2] for k, v in rows.items() if k[1] > 0 and v[0] != 'ok'}
assert not bad and len(rows) == 28, (len(rows), bad)"
check "  args[3] = args[2], y's pointer moved through args: the variant's own launch only (ok)" \
    kernel_rows state.h5 review "MODE I" "
assert rows[1, 0][0] == 'ok' and rows[3, 0][0] == 'ok', (rows[1, 0], rows[3, 0])"
check "  a scalar zeroed in place does not make the samples free (min >= 1/4 of an innocent's)" \
    kernel_rows state.h5 review "MODE I" "
innocent = min(v[2] for k, v in rows.items() if k[1] > 0)
assert rows[2, 0][0] == 'ok' and rows[2, 0][2] >= innocent / 4, (rows[2, 0], innocent)"
check "  junk written to every descriptor reaches no MPI socket (no finalize wait: less than 150 s)" \
    sh -c "[ $took -lt 150 ] && ! grep -q 'MPI_Finalize has not returned' state.out"

echo "-- hostile review: one flipped bit in a journal record with results after it"
# The matrix job with no checkpoint before the kill, so the journal holds
# several records; the coordinator and everything it started killed at once.
sed "s/^checkpoint: .*/checkpoint: 600/; s|kernel: faulty|kernel: $ROOT/tests/fixtures/faulty/kernel.yaml|; s|kernel: ranked|kernel: $ROOT/tests/fixtures/ranked/kernel.yaml|" \
    "$JOB" >flip.yaml
setsid "$TF" run -n 1 flip.yaml -o "$PWD/flip.h5" >flip.out 2>&1 &
FLIP_PID=$!
wait_results flip.h5 4 || true
kill -KILL -- "-$FLIP_PID" 2>/dev/null || true
wait "$FLIP_PID" 2>/dev/null || true
for p in $(pgrep -f -- "$PWD/flip.h5" || true); do kill -KILL "$p" 2>/dev/null || true; done
# The second record damaged, and at least one whole record after it.
if [ "$(journal_records flip.h5.journal)" -ge 3 ]; then
    cp flip.h5.journal flip.journal.good
    # One bit of the second record's payload (records follow a 116-byte header).
    $PY -c "
import struct
d = bytearray(open('flip.h5.journal', 'rb').read())
second = 116 + 8 + struct.unpack_from('<I', d, 116)[0]
d[second + 8 + 20] ^= 4
open('flip.h5.journal', 'wb').write(d)"
    cp flip.h5.journal flip.journal.bad
    expect_fail "a record failing its CRC with records after it: status refuses (exit 2)" 2 \
        "$TF" status flip.h5
    check "  saying the journal is damaged, not torn" contains "$TMP/last" "fails its checksum"
    expect_fail "  run refuses to resume on it (exit 2)" 2 \
        timeout -k 5 60 "$TF" run -n 1 flip.yaml -o "$PWD/flip.h5"
    check "  and the journal is left as it was (nothing dropped)" cmp flip.h5.journal flip.journal.bad
    cp flip.journal.good flip.h5.journal
    expect_fail "  the journal restored: the run resumes (exit 0)" 0 \
        timeout -k 5 120 "$TF" run -n 1 flip.yaml -o "$PWD/flip.h5"
else
    fail "journal bit flip: no records in the journal before the kill" flip.out
fi
