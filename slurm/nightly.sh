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
#  2. slurm/diff.sbatch ARCHIVE TUNING_JOB_ID with --dependency=afterany on the
#     first: once the tuning job has ended, however it ended (a requeued job
#     has not ended yet), `tunefarm diff` compares the night's run with the run
#     of the job before it, if the tuning job finished its run (else exit 2,
#     saying what became of it), and keeps the report beside the archive
#     (ARCHIVE-without-.h5.diff-DATE-TIME.txt, and .diff-latest.txt naming the
#     newest). The diff job's state is the morning's answer: COMPLETED, no
#     regression; FAILED with exit 1, a regression; FAILED with exit 2, no
#     comparison could be made. Add --mail-type=FAIL --mail-user=... to
#     DIFF_SBATCH_ARGS to be mailed. A --chdir (-D) among the tuning job's
#     options is given to the diff job too: JOB and ARCHIVE are read there.
#
# Environment (read here; sbatch exports it to the jobs):
#   DIFF_SBATCH_ARGS    sbatch options of the diff job (partition, mail, ...)
#   TUNEFARM_DIFF_ARGS  more `tunefarm diff` options (e.g. --tolerance 5%)
#   TUNEFARM            the tunefarm binary (default: tunefarm on PATH)
set -eu
usage="usage: slurm/nightly.sh JOB.yaml ARCHIVE [SBATCH_OPTION...]"
if [ $# -lt 2 ]; then
    echo "$usage" >&2
    exit 2
fi
job=$1
archive=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
# The tuning job's working folder, for the diff job to read the same ARCHIVE.
chdir=
prev=
for a in "$@"; do
    case $prev in -D | --chdir) chdir=$a ;; esac
    case $a in --chdir=*) chdir=${a#--chdir=} ;; -D?*) chdir=${a#-D} ;; esac
    prev=$a
done
# --parsable prints "id" or "id;cluster".
tune=$(sbatch --parsable --job-name=tunefarm-nightly --dependency=singleton "$@" \
    "$here/tune.sbatch" "$job" "$archive")
tune=${tune%%;*}
# shellcheck disable=SC2086 # DIFF_SBATCH_ARGS is a word list
diffjob=$(sbatch --parsable --job-name=tunefarm-nightly-diff --dependency=afterany:"$tune" \
    ${chdir:+--chdir="$chdir"} ${DIFF_SBATCH_ARGS:-} "$here/diff.sbatch" "$archive" "$tune")
echo "tunefarm nightly: tuning job $tune ($job into $archive), then diff job ${diffjob%%;*}"
