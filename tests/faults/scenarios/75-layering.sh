# tests/faults/scenarios/75-layering.sh - sourced by tests/faults/run.sh (its
# helpers at hand). The search section is loaded raw (schema/ knows no
# strategies) and checked on rank 0 (tf_strategy_check_job): a bad strategy
# name, option name or option value still stops `tunefarm run` with exit 2 and
# file:line:col before anything is measured or written, and `tunefarm compile`
# likewise.
export TUNEFARM_KERNEL_PATH="$ROOT/tests/fixtures"
LAYER_JOB="$ROOT/tests/fixtures/search_bowl.yaml"

echo "-- a bad search strategy or option is refused before anything runs"
for c in "name|s/strategy: genetic/strategy: annealing/|:9:13: error: 'strategy' must be one of brute_force, random, genetic, local, bayes, hybrid, found 'annealing'" \
         "option|s/population: 8/popsize: 8/|:10:13: error: unknown option 'popsize' of strategy genetic: expected population, mutation, reach" \
         "value|s/population: 8/population: 1/|:10:25: error: search option 'population' of strategy genetic is '1': expected an integer from 2"; do
    what=${c%%|*}; rest=${c#*|}; edit=${rest%%|*}; msg=${rest#*|}
    sed -e "$edit" "$LAYER_JOB" >"l_$what.yaml"
    expect_fail "bad strategy $what: run exits 2" 2 "$TF" run -q -n 1 "l_$what.yaml" -o "l_$what.h5"
    check "  naming l_$what.yaml$msg" contains "$TMP/last" "l_$what.yaml$msg"
    check "  and writing nothing" sh -c "[ ! -e l_$what.h5 ] && [ ! -e l_$what.h5.journal ]"
done
expect_fail "bad strategy value: compile exits 2" 2 "$TF" compile l_value.yaml --arch sm_90
check "  with the same file:line:col" contains "$TMP/last" "l_value.yaml:10:25: error: search option 'population'"
unset TUNEFARM_KERNEL_PATH
