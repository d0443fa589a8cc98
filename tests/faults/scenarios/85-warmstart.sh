# tests/faults/scenarios/85-warmstart.sh - sourced by tests/faults/run.sh (its
# helpers at hand). Warm start (issue 12 item 5): a random search of the bowl
# fixture makes a source archive; a second job, on a kernel of the same name
# whose space lists the values in another order and lacks X < 4
# (tests/fixtures/warm_bowl), names that archive in search.warm_start. Its
# first result must be the kernel's default, the next the source's best
# configurations that exist here (mapped by parameter name and value), and it
# must end within its budget,
# distinct and valid. A warm_start archive that cannot be read is refused
# with the job file's line:col before anything is measured.
export TUNEFARM_KERNEL_PATH="$ROOT/tests/fixtures"
WARM_W=5

echo "-- warm start from another archive"
sed -e 's/strategy: genetic/strategy: random/' -e '/options:/d' -e 's/budget: 40/budget: 80/' \
    "$ROOT/tests/fixtures/search_bowl.yaml" >w_src.yaml
mkdir -p w_dst
cat >w_dst/warm.yaml <<EOF
name: warm_bowl
kernels:
  - kernel: $ROOT/tests/fixtures/warm_bowl
targets: [host]
search:
  strategy: local
  budget: 30
  seed: 5
  warm_start: [../w_src.h5]
  warm_count: $WARM_W
measure: {warmup: 1, min_samples: 3, max_samples: 50, min_time: 0.001, max_time: 0.02, max_noise: 0.5, timeout: 5}
checkpoint: 1
EOF
# w_check.py SRC DST W: DST's first result is the kernel's default (measured
# first, so that a budget the seeds fill still has it), the next W are SRC's
# best that exist here, and DST holds 30 distinct configurations, all valid here.
cat >w_check.py <<'PYEOF'
import h5py, sys
src, dst, w = sys.argv[1], sys.argv[2], int(sys.argv[3])
def rows(path):
    t = h5py.File(path)['kernels/search_bowl/results'][()]
    names = {v: k for k, v in h5py.check_enum_dtype(t.dtype['status']).items()}
    z = lambda v: v.decode() if isinstance(v, bytes) else str(v)
    return [((int(r['X']), int(r['Y']), z(r['Z'])), names[int(r['status'])], float(r['time_median']))
            for r in t]
s, d = rows(src), rows(dst)
# The source's best, by its time there, that exist in warm_bowl's space (X >= 4).
ok = sorted((r for r in s if r[1] == 'ok'), key=lambda r: (r[2], r[0]))
want = [r[0] for r in ok if r[0][0] >= 4][:w]
first = [r[0] for r in d[1:w + 1]]
print('default:', d[0][0], '\nsource best here:', want, '\nnext measured:', first)
assert d[0][0] == (4, 0, 'a'), ('the default is not measured first', d[0][0])
assert len(want) == w, 'the source archive has too few usable rows'
assert sorted(first) == sorted(want), 'the first results are not the source best'
assert len(d) == 30, ('budget', len(d))
assert len({r[0] for r in d}) == 30, 'a configuration measured twice'
for (x, y, _), st, _ in d:
    assert x >= 4 and (x + 2 * y) % 6 != 5, ('invalid here', x, y)
PYEOF
if "$TF" run -q -n 1 w_src.yaml -o w_src.h5 >w_src.out 2>&1 &&
   "$TF" run -n 1 w_dst/warm.yaml -o w_dst.h5 >w_dst.out 2>&1 &&
   contains w_dst.out "warm start: $WARM_W configurations from 1 device class(es) first" &&
   contains w_dst.out "ended by: budget 1" &&
   $PY w_check.py w_src.h5 w_dst.h5 "$WARM_W" >"$TMP/out" 2>&1
then
    pass "local with warm_start: the first $WARM_W results are the source's best (mapped by value), 30 distinct valid"
else
    cat w_src.out w_dst.out >>"$TMP/out" 2>/dev/null || true; fail "warm start from an archive" "$TMP/out"
fi

echo "-- warm start with a model: bayes also learns from the source's results"
# The plan passes each source class's results (its 2 fastest, 22 spread over
# the rest: 24 of the source's distinct configurations that map here) to a
# strategy that learns from them (tf_strategy_prior); the seeds still come
# first, and the search ends within its budget.
sed -e 's/strategy: local/strategy: bayes/' w_dst/warm.yaml >w_dst/warm_bayes.yaml
if "$TF" run -n 1 w_dst/warm_bayes.yaml -o w_bayes.h5 >w_bayes.out 2>&1 &&
   contains w_bayes.out "warm start: $WARM_W configurations from 1 device class(es) first; the model learns from 24 of their results" &&
   contains w_bayes.out "ended by: budget 1" &&
   $PY w_check.py w_src.h5 w_bayes.h5 "$WARM_W" >"$TMP/out" 2>&1
then
    pass "bayes with warm_start: learns from 24 source results, the seeds first, 30 distinct"
else
    cat w_bayes.out >>"$TMP/out" 2>/dev/null || true; fail "warm start with a model" "$TMP/out"
fi

echo "-- warm seeds that fill the budget still leave the default measured"
# Review S: the default came after the seeds, so warm_count >= budget never
# measured it and the summary's speedup over the untuned code read '-'.
sed -e 's/strategy: local/strategy: brute_force/' -e 's/budget: 30/budget: 3/' w_dst/warm.yaml >w_dst/warm_full.yaml
if "$TF" run -n 1 w_dst/warm_full.yaml -o w_full.h5 >w_full.out 2>&1 &&
   contains w_full.out "ended by: budget 1" &&
   $PY - w_full.h5 >"$TMP/out" 2>&1 <<'PYEOF'
import h5py, sys
t = h5py.File(sys.argv[1])['kernels/search_bowl/results'][()]
got = [(int(r['X']), int(r['Y']), r['Z'].decode() if isinstance(r['Z'], bytes) else str(r['Z'])) for r in t]
print(got)
assert len(got) == 3, ('budget', len(got))
assert got[0] == (4, 0, 'a'), ('the default is not measured first', got)
PYEOF
then
    # The summary's row: its speedup column holds a number (it read '-').
    if grep -Eq '^search_bowl +base .* [0-9.]+x +3/3 ' w_full.out; then
        pass "brute force, budget 3, warm_count $WARM_W: the default first, then 2 seeds, a speedup"
    else
        fail "budget filled by warm seeds: the summary has no speedup" w_full.out
    fi
else
    cat w_full.out >>"$TMP/out" 2>/dev/null || true; fail "warm seeds filling the budget" "$TMP/out"
fi

echo "-- a warm_start archive that cannot be read"
sed -e 's|\[../w_src.h5\]|[../w_src.h5, ../nowhere.h5]|' w_dst/warm.yaml >w_dst/bad.yaml
rc=0; "$TF" run -n 1 w_dst/bad.yaml -o w_bad.h5 >w_bad.out 2>&1 || rc=$?
# Rows measured: none when no archive was made; an archive that cannot be
# read is an error here (it prints no number), not "0".
n=$($PY -c "
import h5py, os
if not os.path.exists('w_bad.h5'):
    print(0)
else:
    f = h5py.File('w_bad.h5', 'r')
    print(len(f['kernels/search_bowl/results']) if 'kernels/search_bowl' in f else 0)" 2>>w_bad.out) || true
if [ "$rc" -eq 2 ] && [ "$n" = 0 ] &&
   grep -q "w_dst/bad.yaml:9:[0-9]*: .*warm_start archive '.*w_dst/../nowhere.h5' cannot be read" w_bad.out; then
    pass "an unreadable warm_start archive: exit 2 at the job file's line:col, nothing measured"
else
    echo "exit $rc" >>w_bad.out; fail "unreadable warm_start archive" w_bad.out
fi

# Review S: a damaged source archive's error spoke of "its journal", the
# recovery text of a run's own archive; a source archive has none.
head -c 3000 w_src.h5 >w_trunc.h5
sed -e 's|\[../w_src.h5\]|[../w_trunc.h5]|' w_dst/warm.yaml >w_dst/trunc.yaml
expect_fail "a truncated warm_start archive: refused (exit 2)" 2 "$TF" run -n 1 w_dst/trunc.yaml -o w_trunc_out.h5
check "  'restore it from a copy', no journal it does not have" sh -c \
    "grep -q 'w_trunc.h5.* the file is damaged: restore it from a copy' '$TMP/last' && ! grep -q journal '$TMP/last'"

echo "-- a warm_start path naming the run's own archive is \`same\`"
# Read as another archive, a second run (and a resumed one) would take its own
# device class's results as another device's.
cp w_src.h5 w_own.h5
sed -e 's/budget: 80/budget: 10\n  warm_start: [w_own.h5]\n  warm_count: 3/' w_src.yaml >w_own.yaml
if "$TF" run -n 1 w_own.yaml -o w_own.h5 >w_own.out 2>&1 &&
   contains w_own.out "warm start: 0 configurations from 0 device class(es) first"; then
    pass "warm_start: [its own archive]: its own class left out, as for \`same\` (0 seeds)"
else fail "warm_start naming the run's own archive: read as \`same\`" w_own.out; fi

echo "-- one archive named twice, and one class from two archives"
# Review S: [same, <the run's own archive>] and two names of one file were
# read twice (the loader refuses only the same text twice); a class found in
# two archives (a copy) was counted as two in the plan line.
cp w_src.h5 w_twice.h5
sed -e 's/budget: 80/budget: 10\n  warm_start: [same, w_twice.h5]\n  warm_count: 3/' w_src.yaml >w_twice.yaml
expect_fail "warm_start: [same, its own archive]: refused (exit 2)" 2 "$TF" run -n 1 w_twice.yaml -o w_twice.h5
check "  at the second entry's line:col, naming both" sh -c \
    "grep -q \"w_twice.yaml:[0-9]*:[0-9]*: .*'warm_start' names one archive twice: entries 1 ('same') and 2 ('w_twice.h5') are both this run's own archive\" '$TMP/last'"
ln -sf w_src.h5 w_link.h5
sed -e 's|\[../w_src.h5\]|[../w_src.h5, ../w_link.h5]|' w_dst/warm.yaml >w_dst/link.yaml
expect_fail "warm_start: two names of one file: refused (exit 2)" 2 "$TF" run -n 1 w_dst/link.yaml -o w_link_out.h5
check "  saying both entries are the same file" sh -c \
    "grep -q \"w_dst/link.yaml:9:[0-9]*: .*'warm_start' names one archive twice: entries 1 ('.*w_src.h5') and 2 ('.*w_link.h5') are both the same file\" '$TMP/last'"
cp w_src.h5 w_copy.h5
sed -e 's|\[../w_src.h5\]|[../w_src.h5, ../w_copy.h5]|' w_dst/warm.yaml >w_dst/copy.yaml
check "a class in two archives (a copy) counts once: 'from 1 device class(es)'" sh -c \
    "\"$TF\" run -n 1 w_dst/copy.yaml -o w_copy_out.h5 >w_copy.out 2>&1 &&
     grep -q 'warm start: $WARM_W configurations from 1 device class(es) first' w_copy.out"

echo "-- tunefarm compile of a warm start says what it leaves out"
# Review L13: with a budget, the run's first configurations are other classes'
# best, read when it starts; `tunefarm compile` compiles the first `budget` in
# index order (brute force) and said nothing of the seeds it leaves out.
sed 's/strategy: local/strategy: brute_force/' w_dst/warm.yaml >w_dst/warm_bf.yaml
check "compile of a warm-started brute force with a budget: exit 0" sh -c \
    "\"$TF\" compile w_dst/warm_bf.yaml --arch sm_90 >w_compile.out 2>&1"
check "  saying the seeds are not among what it compiles" sh -c "
    grep -q 'search.warm_start: the run first proposes the best configurations of other device classes' w_compile.out &&
    grep -q 'this compiles the first .budget. valid configurations in index order, not those seeds' w_compile.out"
unset TUNEFARM_KERNEL_PATH
