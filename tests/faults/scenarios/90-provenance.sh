# tests/faults/scenarios/90-provenance.sh - sourced by tests/faults/run.sh (its
# helpers at hand). A run is measured with one software stack (issue 13 item 4):
# an interrupted run resumed by the same software is one run of two sessions,
# each recorded with what its device ran with, and `status` says so; resumed
# by another compiler (a C compiler whose --version says another release, as
# after an upgrade between two nights) it is not resumed: a new run starts and
# measures everything, saying why, and the interrupted run stays unfinished.

echo "-- provenance: a resume is a session of the run; another compiler starts a new run"
# rows ARCHIVE RUN: results rows of run RUN; ended ARCHIVE RUN: 1 if it has an end.
rows() { $PY -c "import h5py; print(sum(int((g['results']['run'] == $2).sum()) for g in h5py.File('$1')['kernels'].values()))"; }
ended() { $PY -c "import h5py; print(int(h5py.File('$1')['runs']['end_unix'][$2] > 0))"; }
want=$(rows ref.h5 0)

start prov1.h5
if wait_results prov1.h5 5; then
    kill -TERM "$RUN_PID"; finish_rc
    if [ "$RUN_RC" -eq 75 ] && "$TF" run -n 1 "$JOB" -o prov1.h5 >prov1.resume 2>&1 &&
       contains prov1.resume "resuming run 0"; then
        got=$(rows prov1.h5 0) runs=$($PY -c "import h5py; print(len(h5py.File('prov1.h5')['runs']))")
        check "interrupted, resumed by the same software: one run ($runs), every row once ($got of $want)" \
            test "$got" = "$want" -a "$runs" = 1
        check "  two sessions, each with what its device ran with" $PY -c "
import h5py
f = h5py.File('prov1.h5')
s, d = f['sessions'][()], f['session_devices'][()]
assert list(s['run']) == [0, 0] and s['end_unix'][0] > 0 and s['end_unix'][1] > s['start_unix'][1], s
assert sorted(d['session']) == [0, 1] and all(v for v in d['compiler_version']), d"
        check "  status says it was measured in two sessions" sh -c \
            "\"$TF\" status prov1.h5 | grep -q 'measured in 2 sessions (resumed 1 time)'"
    else
        cat prov1.resume >>prov1.h5.out 2>/dev/null; echo "exit $RUN_RC" >>prov1.h5.out
        fail "provenance: interrupt (75) and resume failed" prov1.h5.out
    fi
else fail "provenance: no results reached the journal" prov1.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi

# The same compiler under another name and release: cc, with --version answered here.
realcc=$(command -v "${CC:-cc}")
mkdir -p newcc
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "cc (tunefarm test) 99.0"; exit 0; }\nexec %s "$@"\n' \
    "$realcc" >newcc/cc
chmod +x newcc/cc
start prov2.h5
if wait_results prov2.h5 5; then
    kill -TERM "$RUN_PID"; finish_rc
    if [ "$RUN_RC" -eq 75 ] && env CC="$PWD/newcc/cc" "$TF" run -n 1 "$JOB" -o prov2.h5 >prov2.next 2>&1; then
        check "another compiler: not resumed, and it says why" sh -c "
            grep -q 'not resuming unfinished run 0 of job .matrix.' prov2.next &&
            grep -q 'compiler cc .* -> cc (tunefarm test) 99.0' prov2.next"
        got=$(rows prov2.h5 1) end1=$(ended prov2.h5 1) end0=$(ended prov2.h5 0)
        check "  a new run measured everything ($got of $want rows); the interrupted one stays unfinished" \
            test "$got" = "$want" -a "$end1" = 1 -a "$end0" = 0
        check "  the new run's session records the new compiler" $PY -c "
import h5py
f = h5py.File('prov2.h5')
s, d = f['sessions'][()], f['session_devices'][()]
new = [r for r in d if s['run'][r['session']] == 1]
assert new and all(r['compiler_version'] == b'cc (tunefarm test) 99.0' for r in new), d"
    else
        cat prov2.next >>prov2.h5.out 2>/dev/null; echo "exit $RUN_RC" >>prov2.h5.out
        fail "provenance: interrupt (75) or the run with another compiler failed" prov2.h5.out
    fi
else fail "provenance: no results reached the journal" prov2.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi
