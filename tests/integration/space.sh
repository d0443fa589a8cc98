#!/usr/bin/env bash
# tests/integration/space.sh - `tunefarm space` (issue 14 item 5): counts,
# per-constraint rejections, listing and sampling of tests/fixtures/space_cmd
# checked against space_check.py's brute force over its own copy of the
# constraints, on several nominal devices and overridden properties; errors
# that name the choices; a signal during a long count exits 75. Run alone, or
# sourced by run.sh (which has the harness loaded already).
space_alone=0
if ! declare -F check >/dev/null; then
    . "$(dirname "$0")/../lib.sh"
    space_alone=1
fi
SPACE_FIX="$ROOT/tests/fixtures/space_cmd"
SPACE_CHECK="$PY $ROOT/tests/integration/space_check.py"

echo "-- tunefarm space: count, list and sample a space without a device"
check "space --help" "$TF" space --help
check "help space" sh -c "\"$TF\" help space | grep -q 'rejects'"
"$TF" space "$SPACE_FIX" --arch sm_90 >"$TMP/space.count" 2>&1 || true
check "counts and per-constraint rejections on sm_90 match a brute force" \
    $SPACE_CHECK count "$TMP/space.count" 1024,49152,32 small,wide,none
"$TF" space "$SPACE_FIX/kernel.yaml" --arch gfx90a --set max_shared=4096 --set max_threads=256 \
    -p wide -p none >"$TMP/space.count2" 2>&1 || true
check "  on gfx90a with max_shared and max_threads set, two problems" \
    $SPACE_CHECK count "$TMP/space.count2" 256,4096,64 wide,none
check "  the device line shows the overrides" sh -c \
    "grep -q '^device gfx90a: .*max_threads=256 max_shared=4096' '$TMP/space.count2'"
check "  a C kernel is counted on this machine's CPU by default" sh -c \
    "\"$TF\" space \"$SPACE_FIX\" | grep -q '^device host: .*max_threads=1 '"
"$TF" space "$SPACE_FIX" --arch sm_80 --list >"$TMP/space.list" 2>&1 || true
check "--list of every problem is the valid set, in index order" \
    $SPACE_CHECK list "$TMP/space.list" 1024,49152,32 small,wide,none
"$TF" space "$SPACE_FIX" --arch sm_80 --list -p small >"$TMP/space.list1" 2>&1 || true
check "  one problem: no problem column" $SPACE_CHECK list "$TMP/space.list1" 1024,49152,32 small
"$TF" space "$SPACE_FIX" --arch sm_90 -p small --sample 40 --seed 7 >"$TMP/space.s1" 2>&1 || true
"$TF" space "$SPACE_FIX" --arch sm_90 -p small --sample 40 --seed 7 >"$TMP/space.s2" 2>&1 || true
"$TF" space "$SPACE_FIX" --arch sm_90 -p small --sample 40 --seed 8 >"$TMP/space.s3" 2>&1 || true
check "--sample 40: distinct valid configurations in index order" \
    $SPACE_CHECK sample=40 "$TMP/space.s1" 1024,49152,32 small
check "  the same seed draws the same sample, another seed another" sh -c \
    "cmp -s '$TMP/space.s1' '$TMP/space.s2' && ! cmp -s '$TMP/space.s1' '$TMP/space.s3'"
"$TF" space "$SPACE_FIX" --arch sm_90 -p small -p wide --sample 100000 >"$TMP/space.s4" 2>&1 || true
check "  a sample larger than the space is all of it" \
    $SPACE_CHECK sample=100000 "$TMP/space.s4" 1024,49152,32 small,wide
# uniform: over 3000 draws of 10 among 352, every configuration is drawn
# about 85 times; a sampler that favours a region fails the chi-square test
check "  uniform: chi-square over 300 seeds of 10 draws" $PY -c "
import collections, subprocess, sys
seen = collections.Counter()
for seed in range(300):
    out = subprocess.run(['$TF', 'space', '$SPACE_FIX', '--arch', 'sm_90', '-p', 'small',
                          '--sample', '10', '--seed', str(seed)], capture_output=True,
                         text=True, check=True).stdout.splitlines()[1:]
    seen.update(out)
valid = subprocess.run(['$TF', 'space', '$SPACE_FIX', '--arch', 'sm_90', '-p', 'small',
                        '--list'], capture_output=True, text=True, check=True).stdout.splitlines()[1:]
assert set(seen) <= set(valid)
e = 3000 / len(valid)
chi2 = sum((seen[v] - e) ** 2 / e for v in valid)
# 351 degrees of freedom: mean 351, sd 26.5; 480 is beyond 4.8 sd
print('chi2', chi2, 'configurations drawn', len(seen), 'of', len(valid))
sys.exit(0 if chi2 < 480 else 1)
"
# a sample of a 10^11-configuration space is drawn without counting it
t0=$(date +%s)
"$TF" space "$ROOT/tests/fixtures/space_huge" -p half --sample 20 --seed 4 >"$TMP/space.h1" 2>&1 || true
t1=$(date +%s)
check "--sample 20 of 10^11 configurations: in seconds, valid, distinct, ascending" $PY -c "
lines = open('$TMP/space.h1').read().splitlines()
assert lines[0] == ','.join('P%d' % i for i in range(11)), lines[0]
rows = [tuple(int(v) for v in l.split(',')) for l in lines[1:]]
assert len(rows) == 20 and len(set(rows)) == 20, rows
assert all(sum(r) % 2 == 0 for r in rows), rows
assert rows == sorted(rows), rows
assert $t1 - $t0 < 20
"
expect_fail "unknown problem exits 2" 2 "$TF" space "$SPACE_FIX" -p huge
check "  naming the problems" contains "$TMP/last" "has no problem 'huge': its problems are small, wide, none"
expect_fail "unknown architecture exits 2" 2 "$TF" space "$SPACE_FIX" --arch sm_99
check "  listing the known ones" contains "$TMP/last" "known are sm_70, sm_80, sm_86, sm_89, sm_90, gfx90a, gfx942, host"
expect_fail "unknown property in --set exits 2" 2 "$TF" space "$SPACE_FIX" --set max_smem=1
check "  naming the properties" contains "$TMP/last" "max_threads, max_shared, max_shared_optin"
expect_fail "a --set value that is not an integer exits 2" 2 "$TF" space "$SPACE_FIX" --set max_shared=lots
expect_fail "two modes exit 2" 2 "$TF" space "$SPACE_FIX" --list --count
expect_fail "a missing kernel file exits 2" 2 "$TF" space "$TMP/nowhere.yaml"
printf 'name: broken\nlanguage: c\nsource: space_cmd.c\nentry: space_cmd\nreference: {source: space_cmd.c, entry: space_cmd}\nproblems:\n  p: {N: 1}\nparameters:\n  A: [0, 1]\nconstraints:\n  - N %% A == 0\narguments:\n  - {name: out, buffer: float32, size: 1, output: true}\n' >"$TMP/space_bad.yaml"
cp "$SPACE_FIX/space_cmd.c" "$TMP/"
expect_fail "a constraint that cannot be evaluated exits 2" 2 "$TF" space "$TMP/space_bad.yaml"
check "  with its file:line:col" contains "$TMP/last" "space_bad.yaml:11:5"

# Problem `none` of space_huge: only the deepest level can tell that nothing
# is valid, and the sum reads every parameter, so the count takes hours.
"$TF" space "$ROOT/tests/fixtures/space_huge" -p none >"$TMP/space.huge" 2>&1 &
space_pid=$!
for i in $(seq 100); do
    contains "$TMP/space.huge" "counting the valid configurations of space_huge/none" && break
    sleep 0.1
done
space_rc=0
kill -TERM "$space_pid" 2>/dev/null || true
wait "$space_pid" || space_rc=$?
if [ "$space_rc" -eq 75 ] && contains "$TMP/space.huge" "counting the valid configurations of space_huge/none" &&
    contains "$TMP/space.huge" "stopped by a signal"; then
    pass "SIGTERM during a count of 10^11 configurations: progress shown, exit 75"
else
    echo "      exit $space_rc" >>"$TMP/space.huge"
    fail "SIGTERM during a count of 10^11 configurations: progress shown, exit 75" "$TMP/space.huge"
fi

# Close to 2^64 configurations, none valid, which the count factors at once:
# --sample unranks what there is instead of walking every prefix.
mkdir -p "$TMP/near"
printf 'void k(void **a) { (void)a; }\n' >"$TMP/near/k.c"
printf '%s\n' 'name: near' 'language: c' 'source: k.c' 'entry: k' 'reference: {source: k.c, entry: k}' \
    'problems:' '  p: {N: 1}' 'parameters:' '  PA: {range: [1, 65536]}' '  PB: {range: [1, 65536]}' \
    '  PC: {range: [1, 65536]}' '  PD: {range: [1, 65535]}' 'constraints:' '  - PD < 0' \
    'arguments:' '  - {name: out, buffer: float32, size: N, output: true}' \
    >"$TMP/near/kernel.yaml"
check "--sample 3 of 1.8e19 configurations, none valid: the header alone, at once" sh -c \
    "timeout 20 \"$TF\" space \"$TMP/near\" --sample 3 >\"$TMP/near.out\" 2>&1 && [ \"\$(cat \"$TMP/near.out\")\" = PA,PB,PC,PD ]"

[ "$space_alone" -eq 0 ] || finish
