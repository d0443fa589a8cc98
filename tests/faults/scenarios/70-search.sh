# tests/faults/scenarios/70-search.sh - sourced by tests/faults/run.sh (its
# helpers at hand). Search strategies in a run (issue 12 items 1, 3, 8): each
# strategy on the bowl fixture proposes only valid configurations, measures
# exactly its budget, never one twice; brute force and random select the same
# configurations for the same seed; a genetic search whose coordinator is
# SIGKILLed mid-search resumes (journal replayed into the strategy) and ends
# with exactly its budget, distinct and valid; patience and the time budget end
# searches early and say so; SIGTERM amid fast results never deadlocks the
# coordinator with its workers (exit 75).
export TUNEFARM_KERNEL_PATH="$ROOT/tests/fixtures"
SEARCH_JOB="$ROOT/tests/fixtures/search_bowl.yaml"

# search_job NAME STRATEGY [SED...]: a copy of the bowl job with STRATEGY (and
# the genetic options only for genetic), edited further by SED expressions.
search_job() {
    local name=$1 st=$2; shift 2
    local opts='/options:/d'
    [ "$st" = genetic ] && opts='s/^  options:/  options:/'
    sed -e "s/strategy: genetic/strategy: $st/" -e "$opts" "$@" "$SEARCH_JOB" >"$name.yaml"
}

# search_rows ARCHIVE BUDGET: exactly BUDGET rows, distinct, valid (the
# constraint), failures only where the fixture fails to compile; prints the
# sorted configurations to ARCHIVE.configs.
search_rows() {
    $PY - "$1" "$2" <<'PYEOF'
import h5py, sys
path, budget = sys.argv[1], int(sys.argv[2])
t = h5py.File(path)['kernels/search_bowl/results'][()]
names = {v: k for k, v in h5py.check_enum_dtype(t.dtype['status']).items()}
configs = [int(r['config']) for r in t]
assert len(configs) == budget, (len(configs), budget)
assert len(set(configs)) == budget, 'a configuration measured twice'
for r in t:
    x, y = int(r['X']), int(r['Y'])
    assert (x + 2 * y) % 6 != 5, ('invalid configuration proposed', x, y)
    want = 'compile_error' if x >= 14 and y >= 14 else 'ok'
    assert names[int(r['status'])] == want, (x, y, names[int(r['status'])])
open(path + '.configs', 'w').write('\n'.join(map(str, sorted(configs))) + '\n')
PYEOF
}

echo "-- search strategies in a run (bowl fixture, budget 40)"
for st in brute_force random genetic local bayes hybrid; do
    search_job "s_$st" "$st"
    if "$TF" run -n 1 "s_$st.yaml" -o "s_$st.h5" >"s_$st.out" 2>&1 &&
       search_rows "s_$st.h5" 40 >"$TMP/out" 2>&1 &&
       contains "s_$st.out" "Search: $st" && contains "s_$st.out" "ended by: budget 1"; then
        pass "$st: 40 distinct valid configurations, the budget named as the end"
    else
        cat "$TMP/out" >>"s_$st.out"; fail "$st: budget 40 on the bowl" "s_$st.out"
    fi
done
# The kernel's default (X=0 Y=0 Z=a: index 0) is among every search's results,
# so the summary can say what tuning buys (a random sample always held it; the
# adaptive strategies have it proposed first by the plan).
for st in random genetic local bayes hybrid; do
    check "$st: the default configuration measured, its speedup in the summary" \
        sh -c "grep -qx 0 s_$st.h5.configs && grep -E '^search_bowl +base .* [0-9.]+x ' s_$st.out"
done

# Where genetic ends up is a property of the strategy, not of times measured
# on a busy machine: it is checked on a replay (one simulated worker, instant)
# of the bowl's exact times, a Kernel Tuner cache written here whose time grows
# as search_bowl's work does (1 + 3 * (|X - 11| + |Y - 3| + 4 * (Z != b))),
# with X >= 14 and Y >= 14 failing to compile, through the replay-only copy of
# the bowl (tests/fixtures/replay_bowl). The same seed, the same 40 answers.
$PY - bowl_kt.json <<'PYEOF'
import json, sys
cache = {}
for x in range(16):
    for y in range(16):
        for z in 'abc':
            if (x + 2 * y) % 6 == 5:
                continue
            e = {'X': x, 'Y': y, 'Z': z, 'compile_time': 100.0, 'benchmark_time': 10.0}
            if x >= 14 and y >= 14:
                e['time'] = 'CompilationFailedConfig'
            else:
                t = 0.01 * (1 + 3 * (abs(x - 11) + abs(y - 3) + 4 * (z != 'b')))
                e['time'], e['times'] = t, [t, t, t]
            cache['%d,%d,%s' % (x, y, z)] = e
json.dump({'device_name': 'Bowl', 'kernel_name': 'search_bowl',
           'tune_params_keys': ['X', 'Y', 'Z'],
           'tune_params': {'X': list(range(16)), 'Y': list(range(16)), 'Z': list('abc')},
           'objective': 'time', 'cache': cache}, open(sys.argv[1], 'w'))
PYEOF
sed 's/kernel: search_bowl/kernel: replay_bowl/' s_genetic.yaml >s_genr.yaml
check "  genetic on a replay of the exact bowl: best within 2 steps of the optimum (X=11 Y=3 Z=b)" \
    sh -c "\"$TF\" run -q s_genr.yaml -o s_genr.h5 --replay bowl_kt.json --workers 1 --speed instant &&
           $PY -c \"
import h5py
t = h5py.File('s_genr.h5')['kernels/search_bowl/results'][()]
assert len(t) == 40, len(t)
ok = [r for r in t if r['time_median'] == r['time_median'] and r['time_median'] > 0]
b = min(ok, key=lambda r: r['time_median'])
assert abs(int(b['X']) - 11) + abs(int(b['Y']) - 3) <= 2, (b['X'], b['Y'])
\""
for st in brute_force random; do
    "$TF" run -q -n 1 "s_$st.yaml" -o "s2_$st.h5" >"s2_$st.out" 2>&1 || true
    if search_rows "s2_$st.h5" 40 >"$TMP/out" 2>&1 && cmp -s "s_$st.h5.configs" "s2_$st.h5.configs"; then
        pass "$st: the same seed selects the same 40 configurations"
    else
        fail "$st: the same seed selected other configurations" "$TMP/out"
    fi
done

echo "-- a search killed mid-run resumes to its budget"
search_job s_kill genetic -e 's/budget: 40/budget: 120/' -e 's/^checkpoint: 1/checkpoint: 60/'
"$TF" run -n 1 s_kill.yaml -o "$PWD/s_kill.h5" >s_kill.h5.out 2>&1 &
RUN_PID=$!
if wait_results s_kill.h5 25 && pid=$(rank_pid 0 "$PWD/s_kill.h5"); then
    kill -KILL "$pid"; finish_rc
    n_before=$($PY -c "
import subprocess
print(subprocess.run(['$TF', 'status', 's_kill.h5'], capture_output=True, text=True).stdout.count('UNFINISHED'))")
    if "$TF" run -n 1 s_kill.yaml -o s_kill.h5 >s_kill.h5.resume 2>&1 &&
       grep -q "resuming run 0 .*: [1-9][0-9]* of 120 configurations are in the archive" s_kill.h5.resume &&
       contains s_kill.h5.resume "ended by: budget 1" &&
       search_rows s_kill.h5 120 >"$TMP/out" 2>&1 && [ "$n_before" -ge 1 ]; then
        pass "genetic SIGKILLed mid-search (coordinator), resumed: exactly 120 distinct valid rows"
    else
        cat "$TMP/out" >>s_kill.h5.resume; fail "genetic SIGKILL + resume" s_kill.h5.resume
    fi
else fail "genetic SIGKILL: no coordinator rank found" s_kill.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi

echo "-- patience and the time budget end a search early"
search_job s_pat local -e 's/budget: 40/budget: 600/' -e 's/  seed: 3/  seed: 3\n  patience: 15\n  noise: 0.05/'
if "$TF" run -n 1 s_pat.yaml -o s_pat.h5 >s_pat.out 2>&1 && contains s_pat.out "ended by: patience 1" &&
   n=$($PY -c "import h5py; print(len(h5py.File('s_pat.h5')['kernels/search_bowl/results']))") &&
   [ "$n" -lt 600 ]; then
    pass "local with patience 15: stopped after $n of 600, patience named"
else fail "local with patience: expected an early end by patience" s_pat.out; fi
search_job s_time random -e 's/budget: 40/budget: 600/' -e 's/  seed: 3/  seed: 3\n  time_budget: 2/'
t0=$(date +%s)
if "$TF" run -n 1 s_time.yaml -o s_time.h5 >s_time.out 2>&1 && contains s_time.out "time budget of 2 s is over" &&
   contains s_time.out "ended by: time_budget 1" && [ $(($(date +%s) - t0)) -lt 40 ] &&
   ! "$TF" status s_time.h5 | grep -q UNFINISHED; then
    pass "random with time_budget 2: stopped handing out work, run complete"
else fail "time_budget: expected an end by time_budget" s_time.out; fi

# A random search draws its sample up front: a budget it could not hold is
# refused at once (it looped forever past 2^62, aborted at 1e12).
printf '%s\n' 'name: s_huge' \
    "kernels: [{kernel: $ROOT/tests/fixtures/space_huge/kernel.yaml, problems: [half]}]" \
    'targets: [replay]' 'search: {strategy: random, budget: 4611686018427387904}' >s_huge.yaml
expect_fail "random with budget 2^62 on a space of 10^11: refused (exit 2)" 2 \
    timeout 60 "$TF" run s_huge.yaml -o s_huge.h5 --replay null: --workers 1
check "  at the budget's file:line:col, saying the most it draws, writing nothing" sh -c \
    "grep -q 's_huge.yaml:4:36: error: .*at most 67108864 configurations' '$TMP/last' && [ ! -e s_huge.h5 ]"

# A default the constraints exclude is never measured: the plan says so under
# its (kernel, problem, device) instead of leaving the summary's empty speedup
# unexplained. X=5 Y=0: (5 + 0) % 6 == 5.
mkdir -p bad_default
sed -e 's/^default: .*/default: {X: 5, Y: 0, Z: a}/' \
    -e "s|\.\./replay_small/|$ROOT/tests/fixtures/replay_small/|" \
    "$ROOT/tests/fixtures/replay_bowl/kernel.yaml" >bad_default/kernel.yaml
printf '%s\n' 'name: s_baddef' 'kernels: [{kernel: ./bad_default}]' 'targets: [replay]' \
    'search: {strategy: local, budget: 20, seed: 3}' >s_baddef.yaml
if "$TF" run s_baddef.yaml -o s_baddef.h5 --replay null: --workers 1 >s_baddef.out 2>&1 &&
   contains s_baddef.out "search_bowl base     the default (X=5 Y=0 Z=a) is not valid here"; then
    pass "an invalid default: the plan says it is not measured"
else fail "an invalid default: expected the plan to say so" s_baddef.out; fi

# term_and_wait AFTER SECONDS PATTERN: SIGTERM to the run $RUN_PID after AFTER
# seconds; 0 with its exit in RUN_RC if it ends within SECONDS, else 1 with it
# and every process whose command line holds PATTERN killed.
term_and_wait() {
    sleep "$1"
    kill -TERM "$RUN_PID" 2>/dev/null || true
    for _ in $(seq "$2"); do kill -0 "$RUN_PID" 2>/dev/null || break; sleep 1; done
    if kill -0 "$RUN_PID" 2>/dev/null; then
        kill -KILL "$RUN_PID" 2>/dev/null || true
        pkill -KILL -f "$3" 2>/dev/null || true
        return 1
    fi
    finish_rc
}

# An adaptive search of a huge space where 2^16 draws find nothing valid counts
# it first (with progress, stoppable), as a random search does: it used to walk
# the whole product for a proposal, deaf to SIGTERM.
printf '%s\n' 'name: s_sparse' \
    "kernels: [{kernel: $ROOT/tests/fixtures/space_huge/kernel.yaml, problems: [none]}]" \
    'targets: [replay]' 'search: {strategy: genetic, budget: 20}' >s_sparse.yaml
"$TF" run s_sparse.yaml -o s_sparse.h5 --replay null: --workers 1 >s_sparse.out 2>&1 &
RUN_PID=$!
if ! term_and_wait 3 30 s_sparse.yaml; then
    fail "genetic on a space of 10^11 with no valid draw: SIGTERM while counting" s_sparse.out
elif [ "$RUN_RC" -eq 75 ] && grep -q 'stopped by a signal while counting' s_sparse.out; then
    pass "genetic on a space of 10^11 with no valid draw: counted first, SIGTERM ends it (exit 75)"
else fail "genetic on a space of 10^11 with no valid draw: exit 75 while counting (got $RUN_RC)" s_sparse.out; fi

# SIGTERM while fast workers (the null replay) stream results and bayes keeps
# the coordinator busy: STOP is unasked for, and an earlier large WORK may not
# be received yet while the worker blocks sending its results; posting STOP
# must not wait for that send (it deadlocked the run in 2 of 3 tries before).
printf '%s\n' 'name: s_stop' \
    "kernels: [{kernel: $ROOT/tests/fixtures/space_huge/kernel.yaml, problems: [half]}]" \
    'targets: [replay]' 'search: {strategy: bayes, budget: 100000}' >s_stop.yaml
stop_ok=0
for try in 1 2 3; do
    rm -f s_stop.h5 s_stop.h5.journal
    "$TF" run s_stop.yaml -o s_stop.h5 --replay null: --workers 2 >s_stop.out 2>&1 &
    RUN_PID=$!
    term_and_wait 4 60 s_stop.yaml || { echo "      try $try: still running 60 s after SIGTERM" >>s_stop.out; break; }
    [ "$RUN_RC" -eq 75 ] || { echo "      try $try: exit $RUN_RC" >>s_stop.out; break; }
    stop_ok=$((stop_ok + 1))
done
if [ "$stop_ok" -eq 3 ]; then
    pass "SIGTERM amid fast results (bayes, null replay): exit 75 in each of 3 tries"
else fail "SIGTERM amid fast results: every try ends with exit 75" s_stop.out; fi

# Review S: a model computing its next proposals for minutes (options within
# their ranges: a refit on 288 results at 10000 fit steps) kept the coordinator
# from the time budget and from signals until it finished (a 3 s time budget
# ran 130 s). The strategies' stop hook ends that computation: the time budget
# ends the run in seconds, and so does SIGTERM (exit 75).
search_job s_slowfit bayes -e 's/budget: 40/time_budget: 2/' \
    -e 's/  seed: 3/  seed: 3\n  options: {init: 300, fit_train: 4096, max_train: 4096, fit_steps: 10000}/'
t0=$(date +%s)
if timeout 300 "$TF" run -n 1 s_slowfit.yaml -o s_slowfit.h5 --replay null: >s_slowfit.out 2>&1 &&
   contains s_slowfit.out "ended by: time_budget 1" && [ $(($(date +%s) - t0)) -lt 30 ]; then
    pass "bayes amid a minutes-long refit: the 2 s time budget ends the run in $(($(date +%s) - t0)) s"
else echo "after $(($(date +%s) - t0)) s" >>s_slowfit.out; fail "bayes amid a long refit: the time budget waits for it" s_slowfit.out; fi
sed -e 's/time_budget: 2/budget: 440/' s_slowfit.yaml >s_slowterm.yaml
"$TF" run -n 1 s_slowterm.yaml -o s_slowterm.h5 --replay null: >s_slowterm.out 2>&1 &
RUN_PID=$!
if ! term_and_wait 4 20 s_slowterm.yaml; then
    fail "bayes amid a long refit: still running 20 s after SIGTERM" s_slowterm.out
elif [ "$RUN_RC" -eq 75 ] && contains s_slowterm.out "run the same command again to resume it"; then
    pass "bayes amid a minutes-long refit: SIGTERM ends the run (exit 75)"
else fail "bayes amid a long refit: SIGTERM gives exit 75 (got $RUN_RC)" s_slowterm.out; fi
unset TUNEFARM_KERNEL_PATH
