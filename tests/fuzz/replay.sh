#!/usr/bin/env bash
# Replay every corpus through its replay binary (tests/fuzz/replay.c linked with
# a target, built by `make fuzz-replay` with gcc + ASan + UBSan) and close with
# "N passed, N failed" like tests/run_unit.sh.
#   tests/fuzz/replay.sh BUILD_DIR TARGET...
# replays BUILD_DIR/replay_TARGET on tests/fuzz/corpus/TARGET (plus
# tests/fuzz/findings/TARGET when present: fixed reproducers stay fixed).
# A binary that crashes, reports a sanitizer error or leaks counts as one
# failure; its output is shown.
set -u
dir=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
passed=0
failed=0
for t in "$@"; do
    out=$(mktemp)
    inputs=("$here/corpus/$t")
    [ -d "$here/findings/$t" ] && inputs+=("$here/findings/$t")
    "$dir/replay_$t" -q "${inputs[@]}" >"$out" 2>&1
    rc=$?
    p=$(sed -n 's/^\([0-9]*\) passed, [0-9]* failed$/\1/p' "$out" | tail -n 1)
    f=$(sed -n 's/^[0-9]* passed, \([0-9]*\) failed$/\1/p' "$out" | tail -n 1)
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    if [ "$rc" -ne 0 ] && [ -z "$f" -o "${f:-0}" = 0 ]; then failed=$((failed + 1)); fi
    if [ "$rc" -ne 0 ]; then
        echo "== fuzz replay $t FAILED (exit $rc)"
        # -q hides the per-input lines; rerun verbosely to name the input that broke.
        "$dir/replay_$t" "${inputs[@]}" 2>&1 | tail -n 60
        echo "== (the last 'replay:' line above names the input that failed)"
    else
        echo "== fuzz replay $t: ${p:-0} inputs passed"
    fi
    rm -f "$out"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
