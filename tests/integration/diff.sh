#!/usr/bin/env bash
# Integration tests of `tunefarm diff` (issue 13 items 3 and 8): real runs of
# a host kernel (tests/fixtures/drift) appended night after night to one
# archive, real measurements. Two nights of the same code differ only within
# the noise (exit 0); a third night compiles the fixture with
# -DDRIFT_SLOWDOWN=8, which makes the previous best do 8 times its work (a
# planted regression, measured: exit 1, the report says which configuration,
# by how much, and that the kernel's source and the job changed); a fourth
# night without it is faster again (exit 0). The tolerance is 50% where an
# exit code is checked: the shared test machine moves a 10 us median by a few
# percent between runs, the planted change is 8x. The band is that 50% or, on a
# machine noisy enough, 3 x the nights' spread: at least 50%. (This check,
# with "band 50.0%" alone, failed once in CI at e40a963 with exit 0 on the
# line before; a wider band is the one way that fits. The output was not kept.) Bad input exits 2. Also
# `query` over repeated runs: each configuration counted once, and `--run N`
# names its run.
. "$(dirname "$0")/../lib.sh"
cd "$TMP"
cp -r "$ROOT/tests/fixtures/drift" "$ROOT/tests/fixtures/drift.yaml" .
night() { "$TF" run -q -n 1 drift.yaml -o nightly.h5 >"night$1.out" 2>&1; }

echo "-- diff: command line"
check "diff --help" "$TF" diff --help
check "help diff names the noise rule and the exit codes" sh -c \
    "\"$TF\" help diff | grep -qF 'max(3 x sqrt(s_A^2 + s_B^2), tolerance)' &&
     \"$TF\" help diff | grep -q '0 no regression; 1 a regression (also when standard output' &&
     \"$TF\" help diff | grep -q 'cannot be written); 2 bad arguments'"
expect_fail "diff without an archive exits 2" 2 "$TF" diff
expect_fail "diff of a missing archive exits 2" 2 "$TF" diff none.h5
check "  saying why" contains "$TMP/last" "none.h5"
expect_fail "an unknown option exits 2" 2 "$TF" diff --frobnicate nightly.h5
expect_fail "a tolerance that is not a number exits 2" 2 "$TF" diff --tolerance lots nightly.h5
check "  saying what it wants" contains "$TMP/last" "--tolerance wants a fraction or a percentage"

echo "-- two nights of the same code: no regression"
if night 1; then pass "night 1 ran"; else fail "night 1 ran" night1.out; fi
expect_fail "one run only: nothing to compare with (exit 2)" 2 "$TF" diff nightly.h5
check "  saying so" contains "$TMP/last" "run 0 (job 'drift') has no earlier run of the same job"
if night 2; then pass "night 2 ran"; else fail "night 2 ran" night2.out; fi
expect_fail "diff of nights 1 and 2: exit 0" 0 "$TF" diff --tolerance 50% nightly.h5
cp "$TMP/last" quiet.txt
check "  run A is night 1, run B night 2" sh -c \
    "grep -q \"A (then): run 0: job 'drift'\" quiet.txt && grep -q \"B (now):  run 1: job 'drift'\" quiet.txt"
check "  the same best, within the noise" sh -c \
    "grep -q 'best then: X=2 Y=0' quiet.txt && grep -q 'best now:  X=2 Y=0' quiet.txt &&
     grep -Eq 'within the noise \(band (5[0-9]|[6-9][0-9]|[1-9][0-9]{2,})\.[0-9]%\)' quiet.txt &&
     grep -q 'previous best now: the same configuration' quiet.txt"
check "  nothing differs in how the nights were made" contains quiet.txt \
    "none: the same job and settings, kernel sources, tunefarm, and on every device the same"
check "  every configuration in both, no status changed" sh -c \
    "grep -q 'configurations: 8 then, 8 now: 0 gained, 0 lost' quiet.txt && grep -q 'statuses: 0 changed' quiet.txt"
# A bare number of 1 or more is a percentage written without its '%' (review
# D): "--tolerance 5" read as 500% made every night pass, whatever got slower.
expect_fail "--tolerance 5 (500% as a fraction) exits 2" 2 "$TF" diff --tolerance 5 nightly.h5
check "  saying which was meant" contains "$TMP/last" "write 5% for a percentage"
expect_fail "--tolerance 150% still counts (exit 0)" 0 "$TF" diff --tolerance 150% nightly.h5
expect_fail "--run 7: no such run (exit 2)" 2 "$TF" diff --run 7 nightly.h5
check "  saying how many there are" contains "$TMP/last" "run 7 does not exist: the archive has 2 runs"
expect_fail "--run 1 --run 1: a run with itself (exit 2)" 2 "$TF" diff --run 1 --run 1 nightly.h5
# --slurm-job (slurm/diff.sbatch's choice; tests/slurm/run.sh runs it under
# Slurm): these nights ran outside Slurm, so no run is any job's.
expect_fail "--slurm-job 5: no run of that job (exit 2)" 2 "$TF" diff --slurm-job 5 nightly.h5
check "  saying so" contains "$TMP/last" "Slurm job 5 measured no run in this archive"
expect_fail "--slurm-job '' (an unset variable) exits 2" 2 "$TF" diff --slurm-job '' nightly.h5
check "  saying what it wants" contains "$TMP/last" "--slurm-job wants a Slurm job id"
expect_fail "--slurm-job with two --run exits 2" 2 \
    "$TF" diff --slurm-job 5 --run 0 --run 1 nightly.h5
check "  saying that it names run B" contains "$TMP/last" "--slurm-job names run B"

echo "-- query over repeated runs"
check "query counts each configuration once over both nights (8/8, not 16/16)" sh -c \
    "\"$TF\" query nightly.h5 | grep -q '^drift .* 8/8 '"
check "query --run 1 names its run" sh -c \
    "\"$TF\" query --run 1 nightly.h5 | grep -q \"^run 1: job 'drift', job hash [0-9a-f]\\{12\\}, started \""
# A nightly script's unset $RUN: strtol read '' as run 0, and query printed run 0.
expect_fail "query --run '' (an unset variable) exits 2, not run 0" 2 "$TF" query --run '' nightly.h5
check "  saying what it wants" contains "$TMP/last" "--run wants one run number"
expect_fail "query --run ' 1' exits 2" 2 "$TF" query --run ' 1' nightly.h5
expect_fail "query --run 1 --run 0 exits 2 (not the last one silently)" 2 \
    "$TF" query --run 1 --run 0 nightly.h5
# A job with a CUDA kernel and host targets: the archive gets an entry for
# vecadd_cuda, which nothing here can run, without rows.
cat >mixed.yaml <<EOF
name: mixed
kernels:
  - kernel: drift
  - kernel: $ROOT/kernels/vecadd_cuda
targets: [host]
search: {strategy: brute_force}
measure: {warmup: 2, min_samples: 10, max_samples: 2000, min_time: 0.01, max_time: 0.05, max_noise: 0.02, timeout: 5}
checkpoint: 1
EOF
check "a job whose CUDA kernel no host can run" "$TF" run -q -n 1 mixed.yaml -o mixed.h5
check "  leaves an entry without rows in the archive" "$PY" -c "
import h5py; k = h5py.File('mixed.h5')['kernels']
assert sorted(k) == ['drift', 'vecadd_cuda'] and len(k['vecadd_cuda/results']) == 0, list(k)"
check "  which query does not count as a kernel of the archive" sh -c \
    "\"$TF\" query mixed.h5 | grep -q '1 run(s), 1 device(s), 1 kernel(s)'"
check "  nor status" sh -c "\"$TF\" status mixed.h5 | grep -q '1 device, 1 kernel$'"

echo "-- night 3: the previous best made 8 times slower (-DDRIFT_SLOWDOWN=8)"
sed -i 's/^options: \[-O1\]$/options: [-O1, -DDRIFT_SLOWDOWN=8]/' drift/kernel.yaml
check "the fixture now compiles the slowdown in" grep -q 'DRIFT_SLOWDOWN=8' drift/kernel.yaml
if night 3; then pass "night 3 ran"; else fail "night 3 ran" night3.out; fi
expect_fail "diff of nights 2 and 3: a regression, exit 1" 1 \
    "$TF" diff --tolerance 50% -o report3.txt nightly.h5
check "  stdout is the summary line naming the report" contains "$TMP/last" \
    "nightly.h5: runs 1 -> 2: 1 group compared, 1 with a regression; report report3.txt"
# A failure prints the report's best lines, to tell a disturbed measurement from a
# wrong diff. (Until the fixture's busy work became a register chain, one Zen 4 ran
# its loop at 1, 2 or 4 cycles a step depending on the code around it, and this read
# 13-15x.)
check "  the report: the previous best slower beyond the noise" sh -c \
    "grep -q 'best then: X=2 Y=0' report3.txt &&
     grep -Eq 'previous best now: .*  [5-9][.][0-9]{2}x, SLOWER beyond the noise' report3.txt ||
     { grep -E 'best (then|now)|previous best' report3.txt; exit 1; }"
# (whether the new best is also slower than the old one beyond the noise depends on
# the neighbours' times on a loaded machine: the line above checks the regression)
check "  the best now is another configuration" sh -c \
    "grep -Eq 'best now:  X=[0-9]+ Y=[0-9]+ ' report3.txt && ! grep -q 'best now:  X=2 Y=0 ' report3.txt"
check "  provenance: the kernel's source and the job changed" sh -c \
    "grep -q 'kernel drift source (kernel.yaml, source, reference): [0-9a-f]\\{12\\} -> [0-9a-f]\\{12\\}' report3.txt &&
     grep -q '^  job hash (the job file' report3.txt"
check "  it ends with the exit code" contains report3.txt "Exit 1: a regression"
check "  no temporary report is left" sh -c "! ls report3.txt.tmp.* 2>/dev/null"
expect_fail "night 1 against night 3, named: exit 1" 1 "$TF" diff --tolerance 50% --run 0 --run 2 nightly.h5
expect_fail "a report that cannot be written: exit 2" 2 "$TF" diff -o /proc/no/report.txt nightly.h5
check "  saying so" contains "$TMP/last" "cannot write '/proc/no/report.txt'"

echo "-- night 4: the slowdown removed"
sed -i 's/^options: \[-O1, -DDRIFT_SLOWDOWN=8\]$/options: [-O1]/' drift/kernel.yaml
if night 4; then pass "night 4 ran"; else fail "night 4 ran" night4.out; fi
expect_fail "diff of nights 3 and 4: exit 0" 0 "$TF" diff --tolerance 50% nightly.h5
check "  the best is faster beyond the noise, none slower" sh -c \
    "grep -q 'faster beyond the noise' '$TMP/last' && ! grep -q 'SLOWER' '$TMP/last' &&
     grep -q 'best faster: 1' '$TMP/last'"
check "  --run 3 alone compares night 4 with night 3" sh -c \
    "\"$TF\" diff --tolerance 50% --run 3 nightly.h5 | grep -q 'A (then): run 2: '"
check "h5py reads the archive with its provenance tables" \
    "$PY" "$ROOT/tests/integration/read_archive.py" nightly.h5

echo "-- an archive's own text never drives the terminal"
# A device name with ESC sequences (an imported file's, a hand edit): status,
# query and diff print it with its control bytes as '?', on stdout and in -o.
cp nightly.h5 esc.h5
"$PY" -c "
import h5py
with h5py.File('esc.h5', 'r+') as f:
    d = f['devices']
    row = d[0]
    row['name'] = b'Evil \x1b[2J\x1b]0;owned\x07CPU'
    d[0] = row
"
for cmd in status query diff; do
    "$TF" $cmd esc.h5 >"esc-$cmd.txt" 2>&1 || true
    check "$cmd: the name is shown, its ESC and BEL as '?'" sh -c \
        "grep -qF 'Evil ?[2J?]0;owned?CPU' esc-$cmd.txt && ! LC_ALL=C tr -d '\n\t' <esc-$cmd.txt | LC_ALL=C grep -q '[[:cntrl:]]'"
done
"$TF" diff -o esc-report.txt esc.h5 >/dev/null 2>&1 || true
check "diff -o: the report file too" sh -c \
    "grep -qF 'Evil ?[2J?]0;owned?CPU' esc-report.txt && ! LC_ALL=C tr -d '\n\t' <esc-report.txt | LC_ALL=C grep -q '[[:cntrl:]]'"

finish
