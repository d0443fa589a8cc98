# tests/faults/scenarios/20-journal.sh - journal identity, merge of a run that
# went on, nothing left behind by a refused run, a stalled worker's work
# re-queued. Sourced by tests/faults/run.sh (its helpers, ref.h5 and $JOB at hand).

echo "-- journals: only the archive's own is folded in"
# The case: the journal of a killed run, put beside another archive of
# the same job whose checkpoint counter matches (small integers do).
start jsrc.h5
if wait_results jsrc.h5 8 && pid=$(rank_pid 0 jsrc.h5); then
    kill -KILL "$pid"; finish_rc
    cp ref.h5 jother.h5
    $PY -c "
import h5py, numpy, struct
d = open('jsrc.h5.journal', 'rb').read()
gen = struct.unpack_from('<Q', d, 8 if d[:8] == b'TFJRNL01' else 40)[0]
with h5py.File('jother.h5', 'r+') as f:
    f.attrs['checkpoint'] = numpy.uint64(gen)"
    cp jsrc.h5.journal jother.h5.journal
    sum=$(md5sum <jother.h5) jsum=$(md5sum <jother.h5.journal)
    expect_fail "a journal from another archive, checkpoints matching: run refuses it (exit 2)" 2 \
        "$TF" run -q -n 1 "$JOB" -o jother.h5
    check "  naming both files and what to do" sh -c "
        grep -q \"journal 'jother.h5.journal' belongs to another archive\" '$TMP/last' &&
        grep -q \"not to 'jother.h5'\" '$TMP/last' && grep -q 'Move the journal away' '$TMP/last'"
    expect_fail "  status refuses it (exit 2)" 2 "$TF" status jother.h5
    expect_fail "  merge refuses it (exit 2)" 2 "$TF" merge jmerged.h5 jother.h5
    check "  nothing folded in: archive and journal as they were, no merge output" sh -c "
        [ \"\$(md5sum <jother.h5)\" = '$sum' ] && [ \"\$(md5sum <jother.h5.journal)\" = '$jsum' ] &&
        [ ! -e jmerged.h5 ] && [ ! -e jmerged.h5.journal ]"
    resume "  beside its own archive the journal is folded in, and the run resumes" jsrc.h5
else fail "journal identity: no coordinator rank to kill" jsrc.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi

echo "-- merge: a run merged while unfinished is completed by merging it again"
start msrc.h5
if wait_results msrc.h5 8; then
    kill -TERM "$RUN_PID"; finish_rc
    nrows() { $PY -c "import h5py; print(sum(len(g['results']) for g in h5py.File('$1')['kernels'].values()))"; }
    if [ "$RUN_RC" -eq 75 ] && "$TF" merge mout.h5 msrc.h5 >mout.1 2>&1; then
        first=$(nrows mout.h5)
        check "merge of an interrupted run says it is unfinished ($first rows)" \
            grep -q "run 0 (job 'matrix') is unfinished" mout.1
        if "$TF" run -q -n 1 "$JOB" -o msrc.h5 >msrc.resume 2>&1 &&
           "$TF" merge mout.h5 msrc.h5 >mout.2 2>&1; then
            check "  resumed, merged again: 'N rows added to run 0', now finished" \
                grep -q "msrc.h5: $((56 - first)) rows added to run 0 (job 'matrix'), now finished" mout.2
            verdict "  the merged archive holds the whole run, none twice" mout.h5
            check "  status calls it finished" sh -c "\"$TF\" status mout.h5 | grep -q 'Run 0: .*finished'"
            check "  a third merge adds nothing" sh -c "
                \"$TF\" merge mout.h5 msrc.h5 >mout.3 2>&1 && ! grep -q 'rows added to run' mout.3 &&
                [ \$($PY -c \"import h5py; print(sum(len(g['results']) for g in h5py.File('mout.h5')['kernels'].values()))\") = 56 ]"
        else cat msrc.resume mout.2 >mout.fail 2>/dev/null || true; fail "merge: resume or second merge failed" mout.fail; fi
    else echo "exit $RUN_RC" >>msrc.h5.out; cat mout.1 >>msrc.h5.out 2>/dev/null || true; fail "merge: interrupt (exit 75) or first merge failed" msrc.h5.out; fi
else fail "merge: no results reached the journal" msrc.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi

# Merging an archive a run is writing: what it has so far, said to be partial.
# The coordinator is stopped (SIGSTOP) while the merge reads, so that the run
# is certainly going on (not ended, nor ending meanwhile), and continued after.
start mlive.h5
if wait_results mlive.h5 5 && pid=$(rank_pid 0 mlive.h5) && kill -STOP "$pid"; then
    check "merge of a run in progress (coordinator stopped): merged so far, said to be still running" sh -c "
        \"$TF\" status mlive.h5 | grep -q 'Run 0: .*STILL RUNNING' &&
        \"$TF\" merge mlout.h5 mlive.h5 >mlout.1 2>&1 && grep -q 'STILL RUNNING' mlout.1"
    kill -CONT "$pid" 2>/dev/null || true
    finish_rc
    check "  once it ended, merging again completes it" sh -c "
        [ $RUN_RC -eq 0 ] && \"$TF\" merge mlout.h5 mlive.h5 >mlout.2 2>&1 &&
        grep -q 'rows added to run 0 .*now finished' mlout.2"
    verdict "  the merged archive holds the whole run, none twice" mlout.h5
else fail "live merge: no results reached the journal, or no coordinator to stop" mlive.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi

echo "-- a refused run leaves nothing behind"
mkdir dir.h5
expect_fail "an archive path that is a folder: refused (exit 2)" 2 "$TF" run -q -n 1 "$JOB" -o dir.h5
check "  and no empty dir.h5.journal is left" sh -c "[ ! -e dir.h5.journal ]"

echo "-- a stalled worker: its work goes to another worker, no duplicate rows"
# Rank 1 of two is stopped (SIGSTOP) early; once it is overdue (its
# configurations' timeouts + 10 s) its slices go to rank 2, which measures
# everything while rank 1 stays stopped. Then rank 1 may go on; the archive
# holds each configuration once, and the run exits 0.
"$TF" run -n 2 "$JOB" -o stall.h5 >stall.h5.out 2>&1 &
RUN_PID=$!
if wait_results stall.h5 3 && pid=$(rank_pid 1 stall.h5); then
    kill -STOP "$pid"
    done_while_stopped=0
    for i in $(seq 90); do
        if "$TF" status stall.h5 2>/dev/null | grep -q "Run 0: .*finished"; then done_while_stopped=1; break; fi
        sleep 1
    done
    kill -CONT "$pid" 2>/dev/null || true; finish_rc
    if [ "$done_while_stopped" = 1 ]; then
        pass "stalled worker: the other worker measured everything while it was stopped"
    else
        echo "exit $RUN_RC" >>stall.h5.out; fail "stalled worker: the run did not finish while rank 1 was stopped" stall.h5.out
    fi
    check "  saying which rank stalled and who took its work" sh -c "
        grep -q 'rank 1 has sent nothing for .* its work goes to the other workers of its class' stall.h5.out &&
        grep -q 'rank 2 takes over [0-9]* configurations of stalled rank 1' stall.h5.out"
    check "  exit 0" test "$RUN_RC" -eq 0
    verdict "  every configuration once, statuses as uninterrupted" stall.h5
else fail "stalled worker: no results or no rank 1" stall.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi
