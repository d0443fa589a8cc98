/* diff.h - what changed between two runs of an archive (`tunefarm diff`).
 *
 * Per kernel, problem and device class (backend/arch/name) measured by both
 * runs: the best configuration then and now with their times and the ratio,
 * the previous best's time now, configurations whose status changed, and
 * configurations gained or lost; and, for the two runs, the provenance that
 * differs (job, job settings, kernel sources, tunefarm, and per device its
 * driver, runtime, compiler, clock and power settings, hosts), the sessions
 * of a resumed run, and whether a run is unfinished.
 *
 * The noise rule: a median time that went from tA to tB changed beyond the
 * noise when |tB / tA - 1| > max(K * sqrt(sA^2 + sB^2), tolerance), K = 3 and
 * tolerance 2% unless told otherwise, where s is the spread of each
 * measurement's samples as the archive stores it: the smaller of its
 * relative standard deviation (time_rsd) and (median - min) / median (an
 * unknown one is left out; both unknown, 0). The rsd alone fails on the
 * host: a few samples preempted for milliseconds make it 300% while the
 * median, the time compared, moves by 1% (measured on a shared 2-core VM);
 * (median - min) / median ignores high outliers and is 2 to 3 standard
 * deviations for well-behaved samples, so the smaller of the two is the
 * spread of the bulk of the samples either way. K * sqrt(...) is three
 * standard deviations of the difference of two single samples, not of two
 * means: the samples of one run do not see what moves between runs (clocks,
 * temperature, neighbours), so the standard error of the mean would call
 * every night's drift a change; the tolerance is the smallest change an
 * operator wants to hear about.
 *
 * A regression (tf_diff_report's return says how many groups have one) is:
 * the best now slower than the best then beyond the noise; the previous best
 * slower now beyond the noise, or failing now; or any configuration ok then
 * and failing now (compile_error, launch_error, runtime_error, timeout,
 * wrong_result, crashed; `invalid` means the constraints changed, not that the
 * code broke). A group measured by one run only is listed, not a regression.
 * With two phases, times are compared between strict re-measurements (phase
 * 2) when a run has them, statuses between screening rows; schema/diff.md
 * says all of it for users. */
#ifndef TF_DIFF_H
#define TF_DIFF_H

#include <stdbool.h>
#include <stdio.h>

#include "archive.h"
#include "error.h"

struct tf_diff_options {
    double tolerance;    /* relative change below which nothing counts (default 0.02) */
    double sigmas;       /* K of the noise rule (default 3) */
    int examples;        /* configurations listed per kind of change (default 5) */
};

/* What a comparison found. */
struct tf_diff_summary {
    int groups;          /* kernel x problem x class measured by both runs */
    int only_a, only_b;  /* measured by one run only */
    int regressions;     /* groups with at least one regression */
    int slower_best;     /* groups whose best got slower beyond the noise */
    int slower_previous; /* groups whose previous best got slower beyond the noise */
    int failing_previous; /* groups whose previous best fails now */
    int broken;          /* configurations ok then, failing now */
    int faster_best;     /* groups whose best got faster beyond the noise */
    int provenance;      /* lines of provenance that differ */
    uint64_t noisy_a, noisy_b; /* ok rows of the compared groups marked noisy, in A and B */
};

/* The defaults: tolerance 2%, 3 sigmas, 5 examples. */
void tf_diff_defaults(struct tf_diff_options *o);
/* The spread of one measurement (a fraction): the smaller of `rsd` and
 * (median - min) / median, leaving out one that is unknown (NaN, negative);
 * 0 if both are. */
double tf_diff_spread(double median, double min, double rsd);
/* 1 if a time that went from `ta` (spread `sa`) to `tb` (spread `sb`)
 * changed beyond the noise under `o`, 0 if not; the band (the relative
 * change that would count) into *band when not NULL. */
int tf_diff_beyond_noise(double ta, double sa, double tb, double sb,
                         const struct tf_diff_options *o, double *band);
/* The runs to compare when the user named `*b` (-1: none) and `*a` (-1: none):
 * B defaults to the run that started last, A to the run of the same job (name
 * and replay source) that started last before B. 0, or -1 (+err saying what
 * is missing: an archive without runs, a run out of range, no earlier run of
 * B's job). */
int tf_diff_pick_runs(const struct tf_archive *a, int *run_a, int *run_b, struct tf_error *err);
/* The run that Slurm job `job_id` measured (its run row or one of its
 * sessions names the job), the one that started last if several did, into
 * *run when it finished. -1 + err when no run names the job, or when its run
 * did not finish (killed, still running, or cut short and not resumed): a
 * nightly diff must then compare nothing rather than yesterday's pair or a
 * half-measured night. */
int tf_diff_run_of_slurm_job(const struct tf_archive *a, const char *job_id, int *run,
                             struct tf_error *err);
/* Write the comparison of run `ra` with run `rb` of `a` to `out`, and its
 * counts into `sum`. Returns the number of groups with a regression. */
int tf_diff_report(const struct tf_archive *a, int ra, int rb, const struct tf_diff_options *o,
                   FILE *out, struct tf_diff_summary *sum);

#endif
