# tests/slurm/jobs.sh - sourced by tests/slurm/run.sh and scale.sh: reading
# and waiting on Slurm jobs of the local test cluster.

# job_field ID FIELD: one field of `scontrol show job` (JobState, ExitCode, Restarts).
job_field() { scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }
# wait_done ID SECONDS: wait until the job has ended; print its state.
wait_done() {
    local i state=""
    for i in $(seq 1 $(($2 * 5))); do
        state=$(job_field "$1" JobState)
        case "$state" in
        COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
            echo "$state"
            return 0
            ;;
        esac
        sleep 0.2
    done
    echo "${state:-unknown}-after-${2}s"
}
