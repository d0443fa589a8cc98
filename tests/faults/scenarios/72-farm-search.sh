# tests/faults/scenarios/72-farm-search.sh - sourced by tests/faults/run.sh
# (its helpers at hand). Adaptive searches at farm scale (review M): a job of
# several kernels x problems, each with its own search, over several replay
# workers answering from the null source. What `tunefarm status` says of a
# finished run whose searches ended before their budget (patience): nothing
# remains (it said "218 remain" of a run that had ended).

# farm_kernel NAME PROBLEMS: a replay-only kernel (never compiled: the null
# source answers it) of 32 x 32 x 3 configurations with PROBLEMS problems.
farm_kernel() {
    mkdir -p "$1"
    {
        echo "name: $1"; echo "language: cuda"
        echo "source: $ROOT/tests/fixtures/replay_small/placeholder.cu"
        echo "entry: convolution_kernel"
        echo "reference: {source: $ROOT/tests/fixtures/replay_small/placeholder.c, entry: small_reference}"
        echo "problems:"
        for i in $(seq "$2"); do echo "  p$i: {N: $((32 * i))}"; done
        echo "parameters:"
        echo "  X: [$(seq -s ', ' 0 31)]"
        echo "  Y: [$(seq -s ', ' 0 31)]"
        echo "  Z: [a, b, c]"
        echo "constraints: ['(X + 2 * Y) % 6 != 5']"
        echo "default: {X: 0, Y: 0, Z: a}"
        echo "launch: {grid: [1], block: [N]}"
        echo "arguments: [{name: out, buffer: float32, size: N, output: true}]"
    } >"$1/kernel.yaml"
}
farm_kernel fa 4
farm_kernel fb 2

# farm_job NAME SEARCH: the two kernels (6 searches) with search SEARCH (a
# flow mapping's inside).
farm_job() {
    printf '%s\n' "name: $1" 'kernels: [{kernel: ./fa}, {kernel: ./fb}]' 'targets: [replay]' \
        "search: {$2}" 'checkpoint: 1' >"$1.yaml"
}

echo "-- adaptive searches at farm scale (6 searches, null replay)"
farm_job f_pat 'strategy: local, seed: 5, budget: 300, patience: 60, top_k: 5'
if "$TF" run f_pat.yaml -o f_pat.h5 --replay null: --workers 4 >f_pat.out 2>&1 &&
   contains f_pat.out "ended by: patience 6"; then
    "$TF" status f_pat.h5 >f_pat.status 2>&1 || true
    check "patience ended 6 searches: status says the run finished, nothing remains" sh -c \
        "grep -q 'Run 0: .*finished' f_pat.status && ! grep -q 'remain' f_pat.status &&
         [ \$(grep -c 'its search ended before the 305 planned' f_pat.status) -eq 6 ]"
else fail "local with patience over 6 searches: expected exit 0, ended by patience" f_pat.out; fi

# A time budget shared by 6 searches: served in the plan's order, the first
# took it all and four measured nothing while the summary said the time budget
# ended them (review M: 1304, 320, 0, 0, 0, 0). Least-dispatched first, each
# search measures some.
farm_job f_time 'strategy: local, seed: 5, budget: 3000, time_budget: 3'
if "$TF" run f_time.yaml -o f_time.h5 --replay null: --workers 4 --speed 0.2 >f_time.out 2>&1 &&
   contains f_time.out "ended by: time_budget 6"; then
    check "time_budget 3 over 6 searches: every search measured some" $PY -c "
import h5py, collections
f = h5py.File('f_time.h5')
n = collections.Counter()
for k in ('fa', 'fb'):
    for r in f['kernels/' + k + '/results'][()]:
        n[(k, int(r['problem']))] += 1
print(sorted(n.items()))
assert len(n) == 6 and min(n.values()) > 0, n"
else fail "local with time_budget over 6 searches: expected exit 0, ended by time_budget" f_time.out; fi
