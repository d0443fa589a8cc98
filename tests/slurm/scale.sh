#!/usr/bin/env bash
# Scale tests on the local two-node Slurm cluster (slurm/local/cluster.sh,
# partition `all` spans both nodes; each node has this host's CPUs, so 64
# ranks are started with srun --overcommit). Real sbatch jobs, one MPI job
# over both nodes through srun --mpi=pmix, real archives:
#   - 64 ranks (a coordinator, 63 replay workers on two nodes, `--replay null:`):
#     10^5 configurations, every one measured exactly once, all ok, by
#     workers on both nodes; results/s printed;
#   - a worker rank SIGKILLed mid-run, then the coordinator SIGKILLed mid-run
#     (`--speed 0.01`: 100-200 ms a configuration): Slurm's PMIx plugin ends
#     the whole step when any rank dies, the template's checkpoint block
#     (copied from slurm/hetjob.sbatch) requeues the job because the archive's
#     run is UNFINISHED, and the requeued job resumes it: in the end every
#     configuration exactly once, all ok, one run, one requeue;
#   - a compile rank on node 1 (--compile-rank) and a host worker on node 0
#     sharing one cache folder: the compile rank compiles variants the worker
#     then finds in the cache, and compiles plus cache hits add up to the
#     variants in the cache: none was compiled twice (in-progress marks).
#     A compile rank gets host work of another node when its CPU and C
#     compiler are that class's (coordinator.c compiles_for: the host cache
#     key holds both), as the two nodes of this host are.
# `make check-scale`; about 2 minutes on two cores. Without the packages or
# the rights to start the daemons it prints "skip  scale: <why>".
. "$(dirname "$0")/../lib.sh"
cd "$TMP"
SL="$ROOT/slurm"
CLUSTER="$SL/local/cluster.sh"
export SLURM_CONF="$TMP/slurm/slurm.conf"
export TUNEFARM="$TF"
export TUNEFARM_FINALIZE_TIMEOUT=20
export PATH="$PATH:/usr/sbin:/sbin"
RANKS=${SCALE_RANKS:-64}

echo "-- a two-node Slurm cluster on localhost"
trap '"$CLUSTER" stop "$TMP/slurm" >/dev/null 2>&1; rm -rf "$TMP"' EXIT
if ! "$CLUSTER" start "$TMP/slurm" >cluster.out 2>&1; then
    why=$(grep '^cluster: ' cluster.out | tail -n 1 | sed 's/^cluster: //')
    skip "scale" "${why:-the local cluster did not start}"
    finish
    exit
fi
node0=$(sinfo -h -p nvidia -o %N)
node1=$(sinfo -h -p amd -o %N)
pass "the cluster is up: partition all = $(sinfo -h -p all -o %N)"
if [ "$(srun --partition=amd --time=1 hostname 2>&1)" != "$node1" ]; then
    skip "scale" "node $node1 does not have its own host name (no UTS namespace: see slurm/local/cluster.sh)"
    finish
    exit
fi

. "$ROOT/tests/slurm/jobs.sh"
measured() { "$TF" status "$1" 2>/dev/null | sed -n 's/.* \([0-9][0-9]*\) of [0-9]* measured.*/\1/p' | head -n 1; }
# rank_pid RANK JOBID: the pid of that rank of the job's tunefarm run (both
# nodes' processes are this host's; the rank is in the task's environment).
rank_pid() {
    local p
    for p in $(pgrep -f "^$TF run "); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
            grep -qx "SLURM_PROCID=$1" && tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
            grep -qx "SLURM_JOB_ID=$2" && { echo "$p"; return 0; }
    done
    return 1
}

# The job: one kernel of DIGITS ten-valued parameters (10^DIGITS
# configurations, all valid), answered by the null replay source.
mkjob() { # DIR DIGITS
    mkdir -p "$1"
    printf 'int scale(float *x) { (void)x; return 0; }\n' >"$1/k.c"
    {
        echo "name: scale"; echo "language: c"; echo "source: k.c"; echo "entry: scale"
        echo "reference: {source: k.c, entry: scale}"; echo "problems: {one: {N: 1}}"
        echo "parameters:"
        for i in $(seq 1 "$2"); do echo "  P$i: {range: [0, 9]}"; done
        echo "arguments:"; echo "  - {name: x, buffer: float32, size: N, output: true}"
    } >"$1/kernel.yaml"
    printf 'name: scale\nkernels:\n  - {kernel: ./kernel.yaml, problems: [one]}\ntargets: [replay]\nsearch: {strategy: brute_force}\ncheckpoint: 2\n' >"$1/job.yaml"
}
# The batch script: RANKS tasks over both nodes, one MPI job through srun,
# inside the templates' checkpoint / requeue block (copied from hetjob.sbatch,
# as is: the test checks the block itself). PMIX_MCA_gds=hash: see hetjob.sbatch.
{
    echo '#!/bin/bash'
    echo 'set -u'
    echo 'echo "scale: Slurm job $SLURM_JOB_ID (start $((${SLURM_RESTART_COUNT:-0} + 1))) on $SLURM_JOB_NODELIST, $SLURM_NTASKS tasks" >&2'
    sed -n '/^# --- checkpoint, requeue, resume/,/^# ----------/p' "$SL/hetjob.sbatch"
    echo 'export PMIX_MCA_gds=${PMIX_MCA_gds:-hash}'
    echo 'tf_archive=a.h5'
    echo 'start=$(date +%s.%N)'
    echo 'tf_checkpointed srun --mpi=pmix --overcommit "$TUNEFARM" run job.yaml -o a.h5 -q --replay null: "$@"'
    echo 'rc=$?'
    echo 'echo "scale: srun ended with $rc after $(echo "$(date +%s.%N) - $start" | bc) s" >&2'
    echo 'exit $rc'
} >scale.sbatch
chmod +x scale.sbatch
SB=(sbatch --parsable --partition=all --nodes=2 --ntasks="$RANKS" --overcommit --time=10
    --requeue --open-mode=append)

# once ARCHIVE ROWS: ROWS rows, each configuration once, all ok, in one run of
# RANKS ranks; rows measured by workers on both nodes (device hosts).
once() {
    $PY -c "
import sys, h5py, numpy as np
archive, rows, ranks, node0, node1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
f = h5py.File(archive, 'r')
runs, devices = f['runs'][()], f['devices'][()]
res = f['kernels/scale/results'][()]
names = {v: k for k, v in h5py.check_enum_dtype(res.dtype['status']).items()}
host = {int(d['id']): d['host'].decode() for d in devices}
hosts = {}
for d in res['device'].tolist():
    hosts[host[d]] = hosts.get(host[d], 0) + 1
ok = sum(1 for s in res['status'].tolist() if names[int(s)] == 'ok')
print('runs %d (ranks %s), rows %d, distinct %d, ok %d, rows per worker host %s'
      % (len(runs), [int(r) for r in runs['ranks']], len(res), len(np.unique(res['config'])), ok, hosts))
sys.exit(0 if len(runs) == 1 and [int(r) for r in runs['ranks']] == [ranks] and len(res) == rows
         and len(np.unique(res['config'])) == rows and ok == rows and set(hosts) == {node0, node1} else 1)
" "$@" "$RANKS" "$node0" "$node1"
}

echo "-- $RANKS ranks over $node0 and $node1: every configuration exactly once"
mkjob once 5
jid=$("${SB[@]}" --chdir="$TMP/once" --output="$TMP/once/job.out" scale.sbatch 2>once/sbatch.err) || true
if [ -z "$jid" ]; then
    fail "sbatch accepts the $RANKS-rank job" once/sbatch.err
else
    state=$(wait_done "$jid" 240)
    check "the $RANKS-rank job $jid completes ($state)" sh -c "[ '$state' = COMPLETED ] || { cat once/job.out; false; }"
    check "10^5 configurations, each once, all ok, one run of $RANKS ranks, workers on both nodes" \
        once once/a.h5 100000
    line=$(grep "^Job 'scale'" once/job.out | head -n 1)
    echo "      $line; $(grep 'srun ended' once/job.out)"
fi

# killed NAME RANK: a run of 10^4 configurations at --speed 0.01 (about 25 s
# with 63 workers), rank RANK SIGKILLed once 1000 are measured; the job must be
# requeued once, resume the run and complete with every configuration once.
killed() {
    local name=$1 rank=$2 dir=$1 pid n before
    mkjob "$dir" 4
    jid=$("${SB[@]}" --chdir="$TMP/$dir" --output="$TMP/$dir/job.out" scale.sbatch --speed 0.01 \
        2>"$dir/sbatch.err") || true
    [ -n "$jid" ] || { fail "$name: sbatch accepts the job" "$dir/sbatch.err"; return; }
    for _ in $(seq 1 600); do
        n=$(measured "$dir/a.h5"); [ "${n:-0}" -ge 1000 ] && break
        sleep 0.2
    done
    pid=$(rank_pid "$rank" "$jid") || { fail "$name: rank $rank of job $jid found (${n:-0} measured)" "$dir/job.out"; return; }
    kill -KILL "$pid"
    pass "$name: rank $rank (pid $pid) SIGKILLed with ${n:-0} of 10000 measured"
    state=$(wait_done "$jid" 240)
    check "  the job is requeued once and completes ($state, restarts $(job_field "$jid" Restarts))" \
        sh -c "[ '$state' = COMPLETED ] && [ '$(job_field "$jid" Restarts)' = 1 ] || { cat '$dir/job.out'; false; }"
    check "  Slurm ended the step, the template requeued it: the run was unfinished" \
        grep -q "the launcher died (status [0-9]*) with the run in a.h5 unfinished" "$dir/job.out"
    # The resumed session's summary counts what it measured itself.
    after=$(sed -n "s/^Job 'scale': \([0-9]*\) configurations in .*/\1/p" "$dir/job.out" | tail -n 1)
    check "  the requeued job resumed the run: it measured ${after:-?}, the $((10000 - ${after:-10000})) recorded before the kill were not repeated" \
        test "${after:-0}" -gt 0 -a "${after:-10000}" -lt 10000
    check "  10^4 configurations, each once, all ok, in one run" once "$dir/a.h5" 10000
    echo "      $name: $(grep "^Job 'scale'" "$dir/job.out" | tail -n 1); $(grep 'srun ended' "$dir/job.out" | paste -sd';')"
}
echo "-- a worker killed mid-run"
killed worker 40
echo "-- the coordinator killed mid-run"
killed coordinator 0

echo "-- a compile rank on $node1 fills the cache a worker on $node0 reads"
# ranked (38 host C variants), slowed (min_time 0.2 s) so the compile rank
# runs ahead of the worker; the cache in one folder both nodes see.
mkdir -p comp && cp -r "$ROOT/tests/fixtures/ranked" comp/ && sed \
    -e 's/min_time: 0.02/min_time: 0.2/' -e 's/max_time: 0.1/max_time: 0.3/' \
    -e "s|^archive: .*|archive: c.h5\ncache: $TMP/comp/shared-cache|" "$ROOT/tests/fixtures/ranked.yaml" >comp/job.yaml
cat >comp/multi.conf <<EOF
0-1 $TF run job.yaml
2 $TF run job.yaml --compile-rank
EOF
cat >comp/job.sh <<'EOF'
#!/bin/bash
export PMIX_MCA_gds=hash TUNEFARM_PROFILE=1
srun --mpi=pmix --overcommit --multi-prog multi.conf
EOF
chmod +x comp/job.sh
# tasks 0 and 1 (coordinator, host worker) on node 0; task 2 on node 1
jid=$(sbatch --parsable --partition=all --nodes=2 --ntasks=3 --ntasks-per-node=2 --overcommit \
    --time=10 --chdir="$TMP/comp" --output="$TMP/comp/job.out" comp/job.sh 2>comp/sbatch.err) || true
if [ -z "$jid" ]; then
    fail "sbatch accepts the compile-rank job" comp/sbatch.err
else
    state=$(wait_done "$jid" 180)
    check "the job completes ($state)" sh -c "[ '$state' = COMPLETED ] || { cat comp/job.out; false; }"
    rank_line=$(grep "compile rank on " comp/job.out | head -n 1)
    worker_line=$(grep "tunefarm profile: worker 0 on" comp/job.out | head -n 1)
    echo "      $rank_line"
    echo "      $worker_line"
    ahead=$(echo "$rank_line" | sed -n 's/.*(\([0-9]*\) compiled here.*/\1/p')
    rank_hits=$(echo "$rank_line" | sed -n 's/.*, \([0-9]*\) found in the cache.*/\1/p')
    w_compiled=$(echo "$worker_line" | sed -n 's/.*: \([0-9]*\) variants compiled here.*/\1/p')
    w_hits=$(echo "$worker_line" | sed -n 's/.*here, \([0-9]*\) found in the cache.*/\1/p')
    check "  the compile rank ran on $node1" contains comp/job.out "compile rank on $node1:"
    check "  the worker ran on $node0" contains comp/job.out "tunefarm profile: worker 0 on $node0:"
    check "  the compile rank compiled variants (${ahead:-?}) the worker found in the cache (${w_hits:-?})" \
        test "${ahead:-0}" -ge 1 -a "${w_hits:-0}" -ge 1
    # Every variant is in the cache once (a binary or a known-bad .err); a
    # variant compiled by both would be counted twice in the compiles. The
    # cache also holds the kernel's reference, which the worker compiles itself
    # (outside its pool's counts): one more entry.
    variants=$(find comp/shared-cache -name '*.so' -o -name '*.err' | wc -l)
    check "  no variant compiled twice: ${ahead:-?} (compile rank) + ${w_compiled:-?} (worker) compiles + 1 reference = $variants entries in the cache" \
        test "$((${ahead:-0} + ${w_compiled:-0} + 1))" -eq "$variants"
    check "  no in-progress mark left behind" sh -c "! find comp/shared-cache -name '*.busy' | grep -q ."
    check "  38 rows, each once, all ok" $PY "$ROOT/tests/integration/check_archive.py" comp/c.h5 ranked \
        --rows 38 --unique --all-ok --runs 1
fi

check "the cluster stops" "$CLUSTER" stop "$TMP/slurm"
finish
