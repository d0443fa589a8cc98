#!/usr/bin/env bash
# Run every unit test binary given as argument; sum cmocka's counts and close
# with "N passed, N failed". A binary that crashes counts as one failure.
set -u
passed=0
failed=0
for t in "$@"; do
    out=$(mktemp)
    "$t" >"$out" 2>&1
    rc=$?
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
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
