#!/usr/bin/env bash
# tests/integration/report.sh - `tunefarm best` and `tunefarm report` (issue 13
# items 5 and 6) on a real archive: the ranked fixture measured on this
# machine's CPU by a one-phase and a two-phase search, and the fault fixture.
# best: the header's values, compiled with cc, are the best configuration
# pandas finds in the archive (check_archive.py --print-best); the make
# fragment, through make, gives the same flags as the JSON, and the kernel's
# source compiles with them. report: the page of this archive and of
# tests/unit/report_fixture.h's (hostile names, a regression, energy) is
# loaded by a real headless chromium with no console message and no script,
# and its screenshot is checked (browser_check.py; its --canary proves the
# console check sees planted faults). Errors: exit codes and messages. Run
# alone, or sourced by run.sh (which has the harness loaded already).
report_alone=0
if ! declare -F check >/dev/null; then
    . "$(dirname "$0")/../lib.sh"
    report_alone=1
fi
REP="$TMP/report"
mkdir -p "$REP"
BROWSER="$PY $ROOT/tests/integration/browser_check.py"
REP_CHECK="$PY $ROOT/tests/integration/check_archive.py"

echo "-- tunefarm best and tunefarm report"
check "best --help" sh -c "\"$TF\" best --help | grep -q 'TUNEFARM_DEVICE_<CLASS>'"
check "report --help" sh -c "\"$TF\" help report | grep -q 'Pareto front'"

sed -e 's/^name: ranked/name: ranked_report/' "$ROOT/tests/fixtures/ranked.yaml" >"$REP/one.yaml"
sed -e 's/^name: ranked/name: ranked_report_two_phase/' \
    -e 's/^search: .*/search: {strategy: brute_force, top_k: 5}/' \
    -e 's|^measure: |screen: {warmup: 1, min_samples: 3, max_samples: 50, min_time: 0.003, max_time: 0.01, max_noise: 0.5}\nmeasure: |' \
    "$ROOT/tests/fixtures/ranked.yaml" >"$REP/two.yaml"
sed -i "s|kernel: ranked|kernel: $ROOT/tests/fixtures/ranked/kernel.yaml|" "$REP/one.yaml" "$REP/two.yaml"
if "$TF" run -q -n 1 "$REP/one.yaml" -o "$REP/a.h5" >"$REP/run.out" 2>&1 &&
    "$TF" run -q -n 1 "$REP/two.yaml" -o "$REP/a.h5" >>"$REP/run.out" 2>&1 &&
    "$TF" run -q -n 1 "$ROOT/tests/fixtures/faulty.yaml" -o "$REP/a.h5" >>"$REP/run.out" 2>&1; then
    pass "an archive of three real runs (one-phase, two-phase, failures)"
else
    fail "an archive of three real runs (one-phase, two-phase, failures)" "$REP/run.out"
fi

# best: the header against pandas' reading of the archive
best=$($REP_CHECK "$REP/a.h5" ranked --print-best 2>&1 || true)
check "best --format json" "$TF" best "$REP/a.h5" --kernel ranked --format json -o "$REP/best.json"
macro=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['best'][0]['device_macro'])" \
    "$REP/best.json" 2>/dev/null || echo none)
check "  names the configuration pandas finds best ($best)" $PY -c "
import json, sys
b = json.load(open(sys.argv[1]))['best']
assert len(b) == 1 and b[0]['found'], b
got = ' '.join('%s=%s' % kv for kv in b[0]['configuration'].items())
assert got == sys.argv[2], (got, sys.argv[2])" "$REP/best.json" "$best"
check "best --format header" "$TF" best "$REP/a.h5" --kernel ranked -o "$REP/ranked.h"
cat >"$REP/prog.c" <<'EOF'
#include <stdio.h>
int main(void)
{
#ifdef Z_a
    const char *z = "a";
#elif defined(Z_b)
    const char *z = "b";
#endif
    printf("X=%d Y=%d Z=%s\n", X, Y, z);
    return 0;
}
EOF
check "  compiles with cc -D$macro" cc -D"$macro" -include "$REP/ranked.h" "$REP/prog.c" \
    -o "$REP/prog"
check "  and defines that configuration" sh -c "[ \"\$('$REP/prog')\" = '$best' ]"
if [ "$(uname -m)" = x86_64 ] || [ "$(uname -m)" = aarch64 ]; then
    check "  this CPU's class without a macro" sh -c "cc -include '$REP/ranked.h' '$REP/prog.c' \
        -o '$REP/prog2' && [ \"\$('$REP/prog2')\" = '$best' ]"
fi
check "best --format make" "$TF" best "$REP/a.h5" --kernel ranked --format make -o "$REP/ranked.mk"
printf 'include %s\nprint:\n\t@echo $(RANKED_BEST_FLAGS)\n' "$REP/ranked.mk" >"$REP/use.mk"
flags=$(make -s -f "$REP/use.mk" print 2>/dev/null || true)
want=$($PY -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))['best'][0]['defines']))" \
    "$REP/best.json" 2>/dev/null || echo none)
check "  make's flags are the JSON's defines ($flags)" sh -c "[ -n '$flags' ] && [ '$flags' = '$want' ]"
check "  the kernel compiles with them" sh -c "cc -c $flags -fPIC \
    '$ROOT/tests/fixtures/ranked/ranked.c' -o '$REP/ranked.o'"
expect_fail "best: several kernels, none named: exit 2" 2 "$TF" best "$REP/a.h5"
check "  naming them" contains "$TMP/last" "name one with --kernel: ranked faulty"
expect_fail "best --kernel '' (an unset variable): exit 2" 2 "$TF" best "$REP/a.h5" --kernel ''
check "  as a kernel that is not there, not 'several kernels'" \
    contains "$TMP/last" "has no kernel ''; its kernels: ranked faulty"
expect_fail "best: unknown format: exit 2" 2 "$TF" best "$REP/a.h5" -k ranked -f yaml
expect_fail "best: no archive: exit 2" 2 "$TF" best "$REP/none.h5" -k ranked
expect_fail "best: unwritable output: exit 1" 1 "$TF" best "$REP/a.h5" -k ranked -o /proc/no/x.h

# report: the real archive and the fixture in a real browser
check "report of the real archive" "$TF" report "$REP/a.h5" -o "$REP/a.html"
check "  query and the page agree on the best" sh -c "\"$TF\" query '$REP/a.h5' | grep -q '$best' \
    && grep -q '$best' '$REP/a.html'"
make -s -C "$ROOT" tests/integration/report_fixture >/dev/null 2>&1 || true
check "report of the fixture archive (hostile names, regression, energy)" sh -c \
    "'$ROOT/tests/integration/report_fixture' '$REP/f.h5' && \"$TF\" report '$REP/f.h5' \
     -o '$REP/f.html' 2>'$REP/f.err' && grep -q '1 regression(s) marked' '$REP/f.err'"
for page in a f; do
    rc=0
    extra=""
    [ $page = f ] && extra=--canary
    $BROWSER "$REP/$page.html" "$REP/$page.png" --title-prefix "tunefarm report: " $extra \
        >"$REP/browser.out" 2>&1 || rc=$?
    if [ $rc -eq 77 ]; then
        skip "chromium loads the $page page" "$(cat "$REP/browser.out")"
        echo "$(cat "$REP/browser.out")"
    elif [ $rc -eq 0 ]; then
        pass "chromium loads the $page page: $(sed -n 's/^browser_check: [^:]*: //p' "$REP/browser.out")"
    else
        fail "chromium loads the $page page" "$REP/browser.out"
    fi
done
expect_fail "report: no archive: exit 2" 2 "$TF" report "$REP/none.h5" -o "$REP/x.html"
expect_fail "report: unknown kernel: exit 2" 2 "$TF" report "$REP/a.h5" -k nope -o "$REP/x.html"
check "  naming the kernels" contains "$TMP/last" "its kernels: ranked faulty"
expect_fail "report: unwritable output: exit 1" 1 "$TF" report "$REP/a.h5" -o /proc/no/x.html
check "  nothing left behind" sh -c "[ ! -e '$REP/x.html' ] && ! ls '$REP'/*.tmp.* 2>/dev/null"

if [ "$report_alone" = 1 ]; then
    finish
fi
