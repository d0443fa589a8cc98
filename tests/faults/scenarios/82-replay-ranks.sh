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
