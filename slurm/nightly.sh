#!/bin/bash
# slurm/nightly.sh - one night of the nightly retune: tune, then compare with the night before.
#
#   slurm/nightly.sh JOB.yaml ARCHIVE [SBATCH_OPTION...]
#
# What slurm/nightly.scrontab runs every night. It submits two jobs:
#  1. slurm/tune.sbatch JOB.yaml ARCHIVE, named tunefarm-nightly with
#     --dependency=singleton, so a night still running delays the next; the
#     options after ARCHIVE go to this sbatch (partition, time, GPUs). It
#     requeues itself on a checkpoint signal and resumes its run (tune.sbatch);
#  2. slurm/diff.sbatch ARCHIVE with --dependency=afterany on the first: once
#     the tuning job has ended, however it ended (a requeued job has not ended
#     yet), `tunefarm diff` compares the night's run with the run of the job
#     before it and keeps the report beside the archive
#     (ARCHIVE-without-.h5.diff-DATE.txt, and .diff-latest.txt naming the
#     newest). The diff job's state is the morning's answer: COMPLETED, no
#     regression; FAILED with exit 1, a regression; FAILED with exit 2, no
#     comparison could be made. Add --mail-type=FAIL --mail-user=... to
#     DIFF_SBATCH_ARGS to be mailed.
#
# Environment (read here; sbatch exports it to the jobs):
#   DIFF_SBATCH_ARGS    sbatch options of the diff job (partition, mail, ...)
#   TUNEFARM_DIFF_ARGS  more `tunefarm diff` options (e.g. --tolerance 5%)
#   TUNEFARM            the tunefarm binary (default: tunefarm on PATH)
set -eu
usage="usage: slurm/nightly.sh JOB.yaml ARCHIVE [SBATCH_OPTION...]"
job=${1:?$usage}
archive=${2:?$usage}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
# --parsable prints "id" or "id;cluster".
tune=$(sbatch --parsable --job-name=tunefarm-nightly --dependency=singleton "$@" \
    "$here/tune.sbatch" "$job" "$archive")
tune=${tune%%;*}
# shellcheck disable=SC2086 # DIFF_SBATCH_ARGS is a word list
diffjob=$(sbatch --parsable --job-name=tunefarm-nightly-diff --dependency=afterany:"$tune" \
    ${DIFF_SBATCH_ARGS:-} "$here/diff.sbatch" "$archive")
echo "tunefarm nightly: tuning job $tune ($job into $archive), then diff job ${diffjob%%;*}"
