# tests/faults/scenarios/82-replay-ranks.sh - sourced by tests/faults/run.sh
# (its helpers at hand). Replay workers and ranks (review of 2026-11-25):
# 65 replay workers on one node are 65 distinct devices, none warned of as
# sharing one (a node's replay devices stopped at 64: the 65th reused
# replay-0); a source that only a worker rank cannot read is named by that
# rank, with its host (only rank 0 spoke: the run ended with exit 2 and no
# word); a --speed that would put a recorded millisecond past a quarter of an
# hour (below 1e-6) is refused (1e-300 made a worker sleep for a time_t it
# could not hold, spinning on EINVAL for ever).
export TUNEFARM_KERNEL_PATH="$ROOT/tests/fixtures"
SMALL_KT="$ROOT/tests/unit/fixtures/ktcache_small.json.gz"
REPLAY_JOB="$ROOT/tests/fixtures/replay_small.yaml"

echo "-- replay: many workers on one node, a source one rank cannot read, --speed bounds"
check "--workers 65: a replay run of 65 workers" sh -c \
    "\"$TF\" run -q \"$REPLAY_JOB\" -o rw65.h5 --replay \"$SMALL_KT\" --workers 65 >rw65.out 2>&1"
check "  65 devices, each its own (uuid), none said to share one" sh -c "
    ! grep -q 'disturb each other' rw65.out && $PY -c \"
import h5py
d = h5py.File('rw65.h5')['devices'][()]
assert len(d) == 65 and len(set(x['uuid'] for x in d)) == 65, (len(d), sorted(set(x['uuid'] for x in d)))
\""

# MPMD: rank 0 reads the cache, rank 1 is given a path it cannot read.
expect_fail "a source rank 1 cannot read: exit 2" 2 mpirun --oversubscribe \
    -np 1 "$TF" run -q "$REPLAY_JOB" -o rbad.h5 --replay "$SMALL_KT" : \
    -np 1 "$TF" run -q "$REPLAY_JOB" -o rbad.h5 --replay "$TMP/no-such-cache.json.gz"
check "  rank 1 says why, naming itself, its host and the path" \
    grep -q "rank 1 on $(hostname).*no-such-cache.json.gz: cannot read the replay source" "$TMP/last"
check "  and nothing is written" sh -c "[ ! -e rbad.h5 ] && [ ! -e rbad.h5.journal ]"
# Every rank fails alike (a mismatch): said once, by rank 0.
expect_fail "a source no rank can read, under mpirun: exit 2" 2 mpirun -np 3 --oversubscribe \
    "$TF" run -q "$REPLAY_JOB" -o rbad.h5 --replay "$TMP/no-such-cache.json.gz"
check "  said once" sh -c "[ \$(grep -c 'cannot read the replay source' \"$TMP/last\") -eq 1 ]"

expect_fail "--speed 1e-300 is refused (exit 2), not slept on" 2 timeout 30 \
    "$TF" run -q "$REPLAY_JOB" -o rslow.h5 --replay "$SMALL_KT" --speed 1e-300
check "  saying the range" contains "$TMP/last" "1e-6 to 1e9"
check "  run --help says the range" sh -c "\"$TF\" run --help | grep -q 'second, 1e-6 to'"
expect_fail "--speed '' (an unset variable) is refused (exit 2), not read as instant" 2 \
    timeout 30 "$TF" run -q "$REPLAY_JOB" -o rempty.h5 --replay "$SMALL_KT" --speed ''
check "  saying what it wants" contains "$TMP/last" "--speed wants simulated seconds"

# A worker rank SIGKILLed mid-run under `mpirun --enable-recovery` (Open MPI
# keeps the other ranks alive): the coordinator hands its slice to the other
# workers within the run (DESIGN "Failure model"), every configuration ends up
# measured exactly once, and every rank leaves: the workers used to wait
# forever for the dead one in the closing barrier (main.c finalize_bounded:
# rank 0's DONE now bounds that wait by TUNEFARM_FINALIZE_TIMEOUT). MPI_Abort
# would not do: under --enable-recovery mpirun kept the other ranks alive.
echo "-- a worker killed under mpirun --enable-recovery: its work handed over, every rank leaves"
rec=$TMP/rec
mkdir -p "$rec"
printf 'int scale(float *x) { (void)x; return 0; }\n' >"$rec/k.c"
{
    echo "name: scale"; echo "language: c"; echo "source: k.c"; echo "entry: scale"
    echo "reference: {source: k.c, entry: scale}"; echo "problems: {one: {N: 1}}"
    echo "parameters:"; for i in 1 2 3; do echo "  P$i: {range: [0, 9]}"; done
    echo "arguments:"; echo "  - {name: x, buffer: float32, size: N, output: true}"
} >"$rec/kernel.yaml"
printf 'name: scale\nkernels:\n  - {kernel: ./kernel.yaml, problems: [one]}\ntargets: [replay]\nsearch: {strategy: brute_force}\ncheckpoint: 1\n' >"$rec/job.yaml"
# 1000 configurations at 50-100 ms each over 5 workers: ~15 s; the kill at 150.
(cd "$rec" && TUNEFARM_FINALIZE_TIMEOUT=10 exec timeout 120 mpirun --enable-recovery --oversubscribe \
    -np 6 "$TF" run job.yaml -o "$rec/a.h5" -q --replay null: --speed 0.02 >out 2>&1) &
rec_pid=$!
if wait_results "$rec/a.h5" 150 && victim=$(rank_pid 3 "$rec/a.h5"); then
    kill -KILL "$victim"
    rec_rc=0
    wait "$rec_pid" || rec_rc=$?
    check "the run completes and mpirun exits 0 (not held by the dead rank)" sh -c \
        "[ $rec_rc -eq 0 ] || { echo 'exit $rec_rc'; cat $rec/out; false; }"
    check "  every rank leaves on its own once the run is saved (the finalize timeout after DONE)" \
        sh -c "[ \$(grep -c 'MPI_Finalize has not returned after 10 s; exiting without it' '$rec/out') -eq 5 ]"
    check "  the dead worker's configurations were handed to the others" \
        grep -qE "Stalled workers: [1-9][0-9]* configurations handed to other workers" "$rec/out"
    check "  1000 rows, each once, all ok, one run" $PY "$ROOT/tests/integration/check_archive.py" \
        "$rec/a.h5" scale --rows 1000 --unique --all-ok --runs 1
else
    kill "$rec_pid" 2>/dev/null; wait "$rec_pid" 2>/dev/null
    fail "a worker of the --enable-recovery run could not be found mid-run" "$rec/out"
fi
