#!/usr/bin/env bash
# Slurm tests: a real Slurm cluster on localhost (munged, slurmctld and two
# slurmd, two nodes on this host, all started here by slurm/local/cluster.sh
# with every file in $TMP), real sbatch submissions of the templates in slurm/,
# real tunefarm runs inside the jobs (mpirun under the Slurm allocation, or
# srun --mpi=pmix), real HDF5 archives.
#   - tune.sbatch: a host job completes; the run row records the Slurm job id;
#   - the checkpoint path: SIGUSR1 to the batch shell mid-run, tunefarm exits 75,
#     the template requeues the job, the requeued job resumes the same run, and
#     the archive ends with every configuration exactly once, in one run;
#   - array.sbatch: one array task per job file, one archive each (two job
#     files of one name: those tasks refuse, exit 2);
#   - hetjob.sbatch: a heterogeneous job, component 0 on one node (partition
#     nvidia), component 1 on the other (amd), one MPI job over both through
#     srun --het-group=0,1 --mpi=pmix: the run has every rank, and the workers
#     of both components measured;
#   - slurm/nightly.sh (what nightly.scrontab runs): three nights, each a
#     tuning job and a diff job after it; the diff job's state is the answer
#     (nothing to compare, no regression, a planted 8x regression: FAILED with
#     exit 1), its report kept beside the archive; a diff job after a job that
#     requeues itself waits for its end;
#   - nightly.scrontab installs (scrontab accepts its options and schedule).
# Without the packages or the rights to start the daemons, the cluster part
# prints "skip  slurm: <why>" (scripts/deps.sh test installs the packages).
. "$(dirname "$0")/../lib.sh"
cd "$TMP"
FIX="$ROOT/tests/fixtures"
CHECK="$PY $ROOT/tests/integration/check_archive.py"
SL="$ROOT/slurm"
CLUSTER="$SL/local/cluster.sh"
export SLURM_CONF="$TMP/slurm/slurm.conf"
export TUNEFARM="$TF" # the templates run this binary (sbatch exports the environment)
# A rank whose MPI_Finalize hangs leaves after 20 s (main.c), well inside the
# waits below; the hetjob check says so when it happened.
export TUNEFARM_FINALIZE_TIMEOUT=20
export PATH="$PATH:/usr/sbin:/sbin"

echo "-- templates"
for t in tune hetjob array diff; do
    check "$t.sbatch is valid bash" bash -n "$SL/$t.sbatch"
done
check "nightly.sh is valid bash" bash -n "$SL/nightly.sh"
# The checkpoint / requeue block is copied into every template (each stays
# self-contained): the copies must not drift apart.
block() { sed -n '/^# --- checkpoint, requeue, resume/,/^# ----------/p' "$SL/$1.sbatch"; }
same_blocks() {
    [ "$(block tune | wc -l)" -gt 20 ] &&
        [ "$(block tune)" = "$(block hetjob)" ] && [ "$(block tune)" = "$(block array)" ]
}
check "the checkpoint block is the same in every template" same_blocks
# diff.sbatch run by hand (no cluster needed) on an archive tunefarm cannot
# read: the report said the tuning job "did not finish a run" and sent people
# to its log; it must say the archive is unreadable, and why.
echo "not an archive" >unreadable.h5
expect_fail "diff.sbatch after a tuning job, on an unreadable archive: exit 2" 2 \
    bash "$SL/diff.sbatch" unreadable.h5 4242
check "  its report says the archive cannot be read, and why" sh -c \
    "grep -q 'nothing compared (exit 2)' unreadable.diff-latest.txt &&
     grep -q 'not an HDF5 file' unreadable.diff-latest.txt &&
     ! grep -q 'did not finish\\|measured no run' unreadable.diff-latest.txt"

echo "-- a two-node Slurm cluster on localhost"
trap '"$CLUSTER" stop "$TMP/slurm" >/dev/null 2>&1; rm -rf "$TMP"' EXIT
start=$(date +%s)
if ! "$CLUSTER" start "$TMP/slurm" >cluster.out 2>&1; then
    why=$(grep '^cluster: ' cluster.out | tail -n 1 | sed 's/^cluster: //')
    skip "slurm" "${why:-the local cluster did not start}"
    sed 's/^/      /' cluster.out | tail -n 12
    finish
    exit
fi
pass "munged, slurmctld and two slurmd start; the nodes are idle ($(($(date +%s) - start)) s)"

. "$ROOT/tests/slurm/jobs.sh"
# wait_until SECONDS CMD...: poll CMD (every 0.2 s) until it succeeds.
wait_until() {
    local i tries=$(($1 * 5))
    shift
    for i in $(seq 1 "$tries"); do
        "$@" && return 0
        sleep 0.2
    done
    return 1
}
# measured ARCHIVE: how many configurations `tunefarm status` counts (archive + journal).
measured() { "$TF" status "$1" 2>/dev/null | sed -n 's/.* \([0-9][0-9]*\) of [0-9]* measured.*/\1/p' | head -n 1; }
# runs_check ARCHIVE KERNEL ROWS JOBID: ROWS rows, no configuration twice, all in
# the archive's only run, whose row records Slurm job JOBID.
runs_check() {
    $PY -c "
import sys, h5py, numpy as np
archive, kernel, rows, job = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
f = h5py.File(archive, 'r')
runs = f['runs'][()]
res = f['kernels/%s/results' % kernel][()]
jobs = [v.decode() for v in runs['slurm_job_id']]
run_ids = sorted(set(res['run'].tolist()))
configs = len(np.unique(res['config']))
print('runs: %d (Slurm job ids %s), rows: %d, distinct configurations: %d, run ids of the rows: %s'
      % (len(runs), jobs, len(res), configs, run_ids))
sys.exit(0 if len(runs) == 1 and jobs == [job] and len(res) == rows and configs == rows
         and run_ids == [int(runs['id'][0])] else 1)" "$@"
}
# ended_ok ID LOG: the job is COMPLETED with exit 0:0 (else show its log).
ended_ok() {
    local state code
    state=$(job_field "$1" JobState)
    code=$(job_field "$1" ExitCode)
    echo "job $1: $state, exit $code, restarts $(job_field "$1" Restarts)"
    [ "$state" = COMPLETED ] && [ "$code" = 0:0 ] || { cat "$2"; false; }
}
# dup_refused ID LOG TEXT: the job FAILED with exit 2:0 and LOG says TEXT.
dup_refused() {
    [ "$(job_field "$1" JobState)" = FAILED ] && [ "$(job_field "$1" ExitCode)" = 2:0 ] &&
        grep -qF "$3" "$2" || { cat "$2"; false; }
}
# job_ids JOB: the job id of JOB and of each of its heterogeneous components.
job_ids() { scontrol -o show job "$1" 2>/dev/null | grep -o 'JobId=[0-9]*' | cut -d= -f2 | sort -u; }
# stuck JOB: what a job still running past its test's wait is doing, to read
# in the test log: its steps, every process of the job's with the kernel
# function it sleeps in, the stack of each tunefarm process (gdb, where
# installed), and the slurmd log lines of its steps; then cancel it.
stuck() {
    local pid ids node
    echo "--- job $1 is still running; its steps:"
    squeue -h -s -j "$1" -o '%i %M %N' 2>&1 | head -n 6
    echo "--- its processes (pid ppid state wchan elapsed command):"
    ps -eo pid=,ppid=,stat=,wchan:24=,etime=,args= |
        grep -E 'slurmstepd|srun|tunefarm' | grep -v -E 'grep|ps -eo' | cut -c1-160 | head -n 20
    for pid in $(pgrep -f "^[^ ]*tunefarm run" | head -n 6); do
        if command -v gdb >/dev/null 2>&1; then
            echo "--- tunefarm pid $pid: its main thread's stack, then its threads:"
            timeout 20 gdb -p "$pid" -batch -ex 'bt 15' -ex 'info threads' 2>/dev/null |
                grep -E '^(#|[* ] +[0-9]+ +Thread)' | cut -c1-150 | head -n 30
        else
            echo "--- tunefarm pid $pid sleeps in $(cat "/proc/$pid/wchan" 2>/dev/null)"
        fi
    done
    # A heterogeneous job's components have job ids of their own.
    ids=$(job_ids "$1" | paste -sd'|')
    for node in "$TMP"/slurm/log/slurmd-*.log; do
        echo "--- $(basename "$node"), this job's lines:"
        grep -E "\[(${ids:-$1})(\.|\])|job (${ids:-$1})\b|StepId=(${ids:-$1})\." "$node" | tail -n 12
    done
    scancel "$1" 2>/dev/null || true
}
# job_ends NAME ID LOG [JOB]: check that job ID ended well (else show LOG);
# one still running past its wait ($state says so) is shown by `stuck` (JOB,
# the job id of an array task ID) and cancelled.
job_ends() {
    check "$1" ended_ok "$2" "$3"
    case "$state" in *-after-*) stuck "${4:-$2}" | sed 's/^/      /' ;; esac
}
SB=(sbatch --parsable --partition=local --gpus-per-node=0 --ntasks-per-node=2 --time=10)

echo "-- slurm/tune.sbatch: a host job through sbatch"
# The template as written, but for what this cluster lacks (on the command line:
# the partition, no GPUs, two tasks for its two CPUs).
mkdir -p a
jid=$("${SB[@]}" --chdir="$TMP/a" --output="$TMP/a/job.out" "$SL/tune.sbatch" \
    "$FIX/ranked.yaml" a.h5 2>a/sbatch.err) || true
if [ -z "$jid" ]; then
    fail "sbatch accepts tune.sbatch" a/sbatch.err
else
    pass "sbatch accepts tune.sbatch (job $jid)"
    state=$(wait_done "$jid" 120)
    job_ends "the job completes ($state)" "$jid" a/job.out
    check "38 rows, each configuration once, all ok" $CHECK a/a.h5 ranked --rows 38 --unique --all-ok --runs 1
    check "the run row records Slurm job $jid" runs_check a/a.h5 ranked 38 "$jid"
    check "tunefarm status names the Slurm job" sh -c "\"$TF\" status a/a.h5 | grep -q 'Slurm job $jid'"
fi

echo "-- scancel is not undone: a cancelled job that exits 75 is not requeued"
# The templates' block around a launcher that checkpoints (exit 75, a second
# later) on the signal, as srun and its ranks do on scancel's SIGTERM. Slurm
# accepts `scontrol requeue` even for a cancelled job: the block must not ask
# (it did until 2026-12-06, and the job ran again).
mkdir -p k
{
    printf '#!/bin/bash\n#SBATCH --requeue\n#SBATCH --open-mode=append\n'
    block tune
    # shellcheck disable=SC2016
    printf 'tf_checkpointed sh -c %s\nexit $?\n' "'trap \"sleep 1; exit 75\" USR1 TERM; sleep 120 & wait'"
} >k/cancel.sbatch
kjid=$(sbatch --parsable --partition=local --time=5 --chdir="$TMP/k" --output="$TMP/k/cancel.out" \
    k/cancel.sbatch 2>k/sbatch.err) || true
running() { [ "$(job_field "$kjid" JobState)" = RUNNING ]; }
if [ -n "$kjid" ] && wait_until 30 running; then
    sleep 1
    scancel "$kjid"
    sleep 8
    check "scancel: the job stays CANCELLED, no restart, and its log says why" sh -c "
        [ \"\$(scontrol -o show job $kjid | tr ' ' '\n' | sed -n 's/^JobState=//p')\" = CANCELLED ] &&
        [ \"\$(scontrol -o show job $kjid | tr ' ' '\n' | sed -n 's/^Restarts=//p')\" = 0 ] &&
        grep -q 'stopped by SIGTERM (scancel, preemption' k/cancel.out || { cat k/cancel.out; exit 1; }"
else
    fail "scancel: the job starts" k/sbatch.err
    [ -n "$kjid" ] && scancel "$kjid" 2>/dev/null
fi

echo "-- checkpoint signal mid-run: exit 75, requeue, resume"
# Measuring is slowed (min_time 0.2 s: about 10 s for the 38 configurations) so
# that the signal lands mid-run. It goes to the batch shell only, as
# --signal=B:USR1@N does before the time limit; the template forwards it.
mkdir -p b && cp -r "$FIX/ranked" b/ && sed \
    -e 's/^name: ranked/name: ranked_requeue/' -e 's/min_time: 0.02/min_time: 0.2/' \
    -e 's/max_time: 0.1/max_time: 0.3/' "$FIX/ranked.yaml" >b/job.yaml
has_some() { n=$(measured b/b.h5); [ "${n:-0}" -ge 4 ]; }
restarted() { [ "$(job_field "$jid" Restarts)" = 1 ]; }
# The template says this only when tunefarm exited with 75.
requeued() { wait_until 60 restarted && grep -q "interrupted; requeueing Slurm job $jid" b/job.out ||
    { cat b/job.out; false; }; }
partial() { echo "$left of 38 measured"; [ -n "$left" ] && [ "$left" -ge 4 ] && [ "$left" -lt 38 ]; }
jid=$("${SB[@]}" --chdir="$TMP/b" --output="$TMP/b/job.out" "$SL/tune.sbatch" \
    job.yaml b.h5 2>b/sbatch.err) || true
# What slurm/nightly.sh does: a diff job to run once the tuning job has ended.
# A requeued job has not ended: the diff must wait for the resumed run.
djid=""
[ -n "$jid" ] && djid=$(sbatch --parsable --partition=local --time=5 --dependency=afterany:"$jid" \
    --chdir="$TMP/b" --output="$TMP/b/diff.out" "$SL/diff.sbatch" b.h5 2>b/dsbatch.err) || true
if [ -z "$jid" ]; then
    fail "sbatch accepts the requeue job" b/sbatch.err
elif ! wait_until 90 has_some; then
    fail "the run measures before the signal" b/job.out
else
    scancel --batch --signal=USR1 "$jid"
    pass "the run measures ($n of 38 done): SIGUSR1 to the batch shell of job $jid"
    check "the run checkpoints and exits 75; the template requeues the job" requeued
    left=$(measured b/b.h5)
    check "while requeued, the archive holds the unfinished run ($left of 38)" partial
    state=$(wait_done "$jid" 120)
    job_ends "the requeued job completes ($state)" "$jid" b/job.out
    check "it resumed the run instead of starting over" contains b/job.out "resuming run"
    check "38 rows, no configuration twice, all in one run of Slurm job $jid" \
        runs_check b/b.h5 ranked 38 "$jid"
    check "every row ok" $CHECK b/b.h5 ranked --rows 38 --unique --all-ok
    check "tunefarm status: 38 of 38, nothing left" sh -c "\"$TF\" status b/b.h5 | grep -q '38 of 38 measured'"
    # diff_after: the diff job ran, and started once the requeued job had ended.
    diff_after() {
        local started ended
        started=$(job_field "$djid" StartTime) ended=$(job_field "$jid" EndTime)
        echo "diff job $djid started $started; tuning job $jid ended $ended"
        [ -n "$started" ] && [ -n "$ended" ] && ! [[ $started < $ended ]]
    }
    if [ -z "$djid" ]; then
        fail "sbatch accepts diff.sbatch after the requeue job" b/dsbatch.err
    else
        state=$(wait_done "$djid" 60)
        job_ends "its diff job (afterany) completes ($state): the first run, nothing to compare" \
            "$djid" b/diff.out
        check "  it waited for the requeued job's end, not its first stop" diff_after
        check "  its report, beside the archive, says there is nothing to compare yet" \
            grep -q 'nothing to compare yet' b/b.diff-latest.txt
    fi
fi

echo "-- slurm/nightly.sh: four nights, each tuned then compared with the night before"
# As slurm/nightly.scrontab runs it, but for what this cluster lacks (the
# tuning job's partition, GPUs, tasks; the diff job's partition). The drift
# fixture: night 3 compiles its best 8 times slower (tests/integration/diff.sh
# does the same without Slurm). Tolerance 50%: a shared machine, an 8x change.
# Night 4's job file names a kernel that is not there: the tuning job fails,
# and the diff job must say so (exit 2), not compare nights 2 and 3 again.
mkdir -p n && cp -r "$FIX/drift" "$FIX/drift.yaml" n/
# night N: submit a night; the ids of its tuning and diff jobs in $tj and $dj.
night() {
    (cd n && DIFF_SBATCH_ARGS="--partition=local --time=5 --output=$TMP/n/diff-$1.out" \
        TUNEFARM_DIFF_ARGS="--tolerance 50%" "$SL/nightly.sh" drift.yaml n.h5 \
        --partition=local --gpus-per-node=0 --ntasks-per-node=2 --time=10 \
        --output="$TMP/n/tune-$1.out") >"n/submit-$1.out" 2>&1
    tj=$(sed -n 's/^tunefarm nightly: tuning job \([0-9]*\) .*/\1/p' "n/submit-$1.out")
    dj=$(sed -n 's/.* then diff job \([0-9]*\)$/\1/p' "n/submit-$1.out")
    [ -n "$tj" ] && [ -n "$dj" ]
}
# diff_exit ID CODE: the diff job ended with exit CODE (COMPLETED for 0, FAILED else).
diff_exit() {
    local s c
    s=$(job_field "$1" JobState) c=$(job_field "$1" ExitCode)
    echo "diff job $1: $s, exit $c"
    if [ "$2" = 0 ]; then [ "$s" = COMPLETED ] && [ "$c" = 0:0 ]; else [ "$s" = FAILED ] && [ "$c" = "$2:0" ]; fi
}
for i in 1 2 3 4; do
    [ "$i" = 3 ] && sed -i 's/^options: \[-O1\]$/options: [-O1, -DDRIFT_SLOWDOWN=8]/' n/drift/kernel.yaml
    [ "$i" = 4 ] && sed -i 's/^  - kernel: drift$/  - kernel: drift_typo/' n/drift.yaml
    if ! night "$i"; then
        fail "night $i: slurm/nightly.sh submits a tuning job and a diff job" "n/submit-$i.out"
        break
    fi
    pass "night $i: slurm/nightly.sh submits tuning job $tj and diff job $dj after it"
    state=$(wait_done "$tj" 120)
    if [ "$i" = 4 ]; then
        check "  the tuning job fails ($state): no kernel drift_typo" sh -c \
            "[ \"$(job_field "$tj" JobState)\" = FAILED ] && grep -q drift_typo n/tune-4.out"
    else
        job_ends "  the tuning job completes ($state)" "$tj" "n/tune-$i.out"
    fi
    state=$(wait_done "$dj" 60)
    case $i in
    1) check "  the diff job completes: nothing to compare on the first night" diff_exit "$dj" 0
       check "  its report says so, beside the archive" grep -q 'nothing to compare yet' n/n.diff-latest.txt ;;
    2) check "  the diff job completes: no regression (exit 0)" diff_exit "$dj" 0
       check "  its report compares night 2 with night 1" sh -c \
           "grep -q 'B (now):  run 1' n/n.diff-latest.txt && grep -q 'Exit 0: no regression' n/n.diff-latest.txt" ;;
    3) check "  the diff job FAILS with exit 1: a regression" diff_exit "$dj" 1
       check "  its report names the slower previous best and the changed source" sh -c \
           "grep -q 'SLOWER beyond the noise' n/n.diff-latest.txt &&
            grep -q 'kernel drift source' n/n.diff-latest.txt && grep -q 'Exit 1: a regression' n/n.diff-latest.txt" ;;
    4) check "  the diff job FAILS with exit 2: the night has no run to compare" diff_exit "$dj" 2
       check "  its report names the tuning job, and the latest link is it" sh -c \
           "grep -q 'nothing compared (exit 2)' n/n.diff-latest.txt &&
            grep -Eq 'Slurm job $tj (measured no run|measured, did not finish)' n/n.diff-latest.txt &&
            grep -q 'tuning job $tj: JobState=FAILED' n/n.diff-latest.txt &&
            ! grep -q 'no regression' n/n.diff-latest.txt" ;;
    esac
done
check "one report per night beside the archive, the latest linked" sh -c \
    "[ \$(ls n/n.diff-2*.txt | wc -l) -ge 1 ] && [ -L n/n.diff-latest.txt ]"
check "  and the nightly page beside it (tunefarm report)" sh -c \
    "grep -q '<svg' n/n.report.html"

echo "-- slurm/array.sbatch: one array task per job file"
mkdir -p c && cp -r "$FIX/ranked" c/
for s in 1 2; do
    sed -e "s/^name: ranked/name: ranked_array$s/" \
        -e "s/^search: .*/search: {strategy: random, budget: 6, seed: $s}/" "$FIX/ranked.yaml" >c/task$s.yaml
done
# Tasks 2 and 3: two job files of one name, which would share an archive.
mkdir -p c/d1 c/d2 && cp c/task1.yaml c/d1/dup.yaml && cp c/task2.yaml c/d2/dup.yaml
jid=$(ARCHIVE_DIR="$TMP/c/results" sbatch --parsable --partition=local --gpus-per-node=0 \
    --cpus-per-task=1 --time=10 --array=0-3 --chdir="$TMP/c" --output="$TMP/c/task-%a.out" \
    "$SL/array.sbatch" task1.yaml task2.yaml d1/dup.yaml d2/dup.yaml 2>c/sbatch.err) || true
if [ -z "$jid" ]; then
    fail "sbatch accepts array.sbatch" c/sbatch.err
else
    pass "sbatch accepts array.sbatch (array job $jid, tasks 0 to 3)"
    for i in 0 1; do
        state=$(wait_done "${jid}_$i" 90)
        tid=$(scontrol -o show job "${jid}_$i" 2>/dev/null | tr ' ' '\n' | sed -n 's/^JobId=//p' | head -n 1)
        job_ends "array task $i completes ($state)" "${jid}_$i" "c/task-$i.out" "$tid"
        check "  its own archive c/results/task$((i + 1)).h5: 6 rows, one run, of job $tid" \
            runs_check "c/results/task$((i + 1)).h5" ranked 6 "$tid"
    done
    for i in 2 3; do
        state=$(wait_done "${jid}_$i" 60)
        check "array task $i (d$((i - 1))/dup.yaml) refuses ($state): exit 2, naming d$((4 - i))/dup.yaml" \
            dup_refused "${jid}_$i" "c/task-$i.out" "d$((4 - i))/dup.yaml would both write $TMP/c/results/dup.h5"
    done
    check "  and neither writes an archive" test ! -e c/results/dup.h5
fi

echo "-- slurm/hetjob.sbatch: one MPI job over two components' nodes"
# The template as written (its partitions nvidia and amd are this cluster's two
# nodes; launcher srun --het-group=0,1 --mpi=pmix) but for what the cluster
# lacks, per component on the command line: options before ':' override
# component 0's #SBATCH lines, those after it component 1's (without ':' they
# would apply to both). No GPUs; component 0 two tasks (the coordinator and a
# worker), component 1 one (a worker); 10 minutes.
node0=$(sinfo -h -p nvidia -o %N)
node1=$(sinfo -h -p amd -o %N)
# het_check ARCHIVE: the run has 3 ranks (only both components together have
# 3 tasks), and the workers on both nodes measured: each device row names the
# host its worker ran on, node 1's its own (cluster.sh gives it its name).
het_check() {
    $PY -c "
import sys, h5py
archive, node0, node1 = sys.argv[1:4]
f = h5py.File(archive, 'r')
runs, devices = f['runs'][()], f['devices'][()]
res = f['kernels/ranked/results'][()]
host = {int(d['id']): d['host'].decode() for d in devices}
rows = {}
for d in res['device'].tolist():
    rows[host[d]] = rows.get(host[d], 0) + 1
print('ranks: %s, rows per worker host: %s' % ([int(r) for r in runs['ranks']], rows))
sys.exit(0 if [int(r) for r in runs['ranks']] == [3] and set(rows) == {node0, node1} else 1)" "$1" "$node0" "$node1"
}
if [ "$(srun --partition=amd --time=1 hostname 2>&1)" != "$node1" ]; then
    # Without its own host name, node 1's PMIx server and Open MPI take it for
    # node 0 (wrong local ranks, clashing shared memory): no run to check.
    skip "slurm/hetjob.sbatch" "node $node1 does not have its own host name (no UTS namespace: see slurm/local/cluster.sh)"
else
    # srun_left_behind JOB: every task of the job's step has exited and each
    # component's step daemon is done ("done with job" in both slurmd logs,
    # no tunefarm rank left), yet srun still waits. Slurm 22.05.8's srun did
    # this here, with stacks and logs to show it (session notes of 2026-11-21):
    # rarely in this suite run alone, in two of five whole `make test` runs
    # (this test's first CI run among them). A defect of srun's: the run itself
    # is done, so "the job completes" is then a skip, not a pass, with what
    # srun looked like; everything the run wrote is still checked.
    srun_left_behind() {
        local c steps=0
        pgrep -f "^[^ ]*tunefarm run" >/dev/null && return 1
        pgrep -f "srun --het-group=0,1" >/dev/null || return 1
        for c in $(job_ids "$1"); do
            grep -qh "\[$c\.0\] done with job" "$TMP"/slurm/log/slurmd-*.log && steps=$((steps + 1))
        done
        [ "$steps" -eq 2 ]
    }
    mkdir -p h && cp -r "$FIX/ranked" "$FIX/ranked.yaml" h/
    jid=$(sbatch --parsable --chdir="$TMP/h" --output="$TMP/h/job.out" --gpus-per-node=0 \
        --ntasks-per-node=2 --time=10 : --gpus-per-node=0 --ntasks-per-node=1 --time=10 \
        "$SL/hetjob.sbatch" ranked.yaml h.h5 2>h/sbatch.err) || true
    if [ -z "$jid" ]; then
        fail "sbatch accepts hetjob.sbatch" h/sbatch.err
    else
        pass "sbatch accepts hetjob.sbatch (heterogeneous job $jid: ${jid}+0 in nvidia, ${jid}+1 in amd)"
        state=$(wait_done "$jid" 120)
        if [[ $state == *-after-* ]] && srun_left_behind "$jid"; then
            skip "the job completes" "every rank and both step daemons ended, but srun did not (Slurm 22.05.8; see srun_left_behind); what it looked like:"
            stuck "$jid" | sed 's/^/      /'
        else
            job_ends "the job completes ($state)" "$jid" h/job.out
            check "  component 1 completes too" ended_ok "${jid}+1" h/job.out
        fi
        if grep -q "MPI_Finalize has not returned" h/job.out; then
            echo "note  some ranks' MPI_Finalize hung; the finalize timeout ended them:"
            grep "MPI_Finalize has not returned" h/job.out | sed 's/^/      /'
        fi
        check "  the template ran on both components' nodes" contains h/job.out "NVIDIA: $node0, AMD: $node1"
        check "38 rows, each configuration once, all ok" $CHECK h/h.h5 ranked --rows 38 --unique --all-ok --runs 1
        check "  one run, of Slurm job $jid" runs_check h/h.h5 ranked 38 "$jid"
        check "one MPI job of 3 ranks; the workers on $node0 and on $node1 both measured" het_check h/h.h5
    fi
fi

echo "-- slurm/nightly.scrontab"
# As written but for what this cluster lacks (partition, folder). Where Slurm
# has scrontab it installs the file (checking its options and schedule) and
# queues the cron job; Debian's slurm-client has no scrontab, so there its
# #SCRON options are checked by sbatch --test-only and its schedule by form.
sed -e 's/--partition=cpu/--partition=local/' -e "s|/srv/tunefarm|$TMP|g" \
    "$SL/nightly.scrontab" >nightly.scrontab
scron_installs() {
    scrontab nightly.scrontab && scrontab -l | grep -q '^30 1 \* \* \* slurm/nightly.sh ' &&
        squeue -h -n tunefarm-nightly-submit -o '%T %r' | grep -q 'PENDING BeginTime'
}
scron_options() {
    local opts
    opts=$(sed -n 's/^#SCRON //p' nightly.scrontab | tr '\n' ' ')
    echo "options: $opts"
    # shellcheck disable=SC2086
    sbatch --test-only $opts --wrap=true 2>&1 | tee /dev/stderr | grep -q 'to start at' &&
        grep -Eq '^([0-9*/,-]+ ){5}slurm/nightly\.sh jobs/nightly\.yaml results/nightly\.h5 ' nightly.scrontab
}
if command -v scrontab >/dev/null 2>&1; then
    check "scrontab installs it; its cron job waits for 01:30" scron_installs
    scrontab -r >/dev/null 2>&1 || true
else
    check "its #SCRON options pass sbatch --test-only; one cron line (no scrontab here)" scron_options
fi

start=$(date +%s)
check "the cluster stops (jobs cancelled, daemons ended)" "$CLUSTER" stop "$TMP/slurm"
echo "      stopped in $(($(date +%s) - start)) s"
finish
