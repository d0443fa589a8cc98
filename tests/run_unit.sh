#!/usr/bin/env bash
# Run every unit test binary given as argument; sum cmocka's counts and close
# with "N passed, N failed". A binary that crashes counts as one failure, and
# so does one that runs past UNIT_TIMEOUT seconds (default 900: the slowest,
# test_strategy under the sanitizers, takes a few minutes), so that a test
# that hangs fails the run instead of hanging it.
set -u
limit=${UNIT_TIMEOUT:-900}
# The community's reference data for the tests that replay it (see tests/lib.sh).
if [ -z "${TUNEFARM_DATASETS:-}" ]; then
    root=$(cd "$(dirname "$0")/.." && pwd)
    for d in "$root/../shared/datasets" \
        "$(git -C "$root" config --get remote.origin.url 2>/dev/null || true)/../shared/datasets"; do
        if [ -d "$d/benchmark_hub" ]; then export TUNEFARM_DATASETS=$(cd "$d" && pwd); break; fi
    done
fi
passed=0
failed=0
for t in "$@"; do
    out=$(mktemp)
    timeout --kill-after=10 "$limit" "$t" >"$out" 2>&1
    rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "timed out after $limit s (UNIT_TIMEOUT)" >>"$out"
    fi
    # a binary may run several groups (cmocka_run_group_tests): each closes with its count
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | awk '{ s += $1 } END { if (NR) print s }')
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | awk '{ s += $1 } END { if (NR) print s }')
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    if [ "$rc" -ne 0 ] && [ -z "$f" ]; then failed=$((failed + 1)); fi
    if [ "$rc" -ne 0 ]; then
        echo "== $t FAILED (exit $rc)"; cat "$out"
    else
        echo "== $t: ${p:-0} passed"
        grep -E '^(skipped|bench|note):' "$out" || true
    fi
    rm -f "$out"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
