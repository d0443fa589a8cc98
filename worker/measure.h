/* measure.h - the measurement protocol: warm-up, timed samples, stopping rule,
 * statistics. Device-independent: samples come from a callback, so the rule is
 * unit-tested with scripted sequences and runs unchanged on every backend. */
#ifndef TF_MEASURE_H
#define TF_MEASURE_H

#include <stdint.h>

#include "../schema/error.h"
#include "../schema/job.h"

/* Statistics of a set of samples (seconds). */
struct tf_stats {
    uint32_t n;
    double median, min, mean;
    double rsd;   /* sample standard deviation / mean; 0 when n < 2; NaN when n == 0 */
    double total; /* sum of the samples */
    double busy;  /* device time of every timed launch: warm-ups (when timed) and samples */
    int noisy;    /* tf_measure_run: 1 if max_time or max_samples ended the samples with
                     their spread still above max_noise (the rule was never met) */
};

/* Where samples come from. `launch` runs the kernel once and returns an enum
 * tf_status (TF_STATUS_OK or the failure, with err filled); with `seconds` NULL
 * the launch is a warm-up (untimed). `flush` (may be NULL) evicts the cache. */
struct tf_sampler {
    int (*launch)(void *ctx, double *seconds, struct tf_error *err);
    int (*flush)(void *ctx, struct tf_error *err);
    void *ctx;
    /* Optional pair: queue `n` (<= TF_MAX_BATCH) timed launches back to back,
     * flushing before each if `flush`, then wait and read their times. With
     * them, the device runs the warm-ups and samples without host round trips. */
    int (*enqueue)(void *ctx, int n, int flush, struct tf_error *err);
    int (*collect)(void *ctx, double *seconds, struct tf_error *err);
    /* Optional: host work to overlap with the first samples (the runner checks
     * the verified launch's output there). Returns a status; not ok ends the
     * protocol with that status. Called once, before the first sample without
     * enqueue, or while the first batch runs with it. */
    int (*overlap)(void *ctx, struct tf_error *err);
    /* Seconds one launch takes, if known (the verified launch's), else 0: the
     * first batch of a slow kernel then stays within max_time. */
    double estimate;
    /* What times the samples, for messages ("host timer (CLOCK_MONOTONIC)",
     * "cuda device timer"); NULL: "device timer". A sample that is NaN,
     * infinite or negative ends the protocol with runtime_error naming it. */
    const char *timer;
};

/* Compute the statistics of `n` samples into `out` (sorts a private copy). */
void tf_stats_compute(const double *samples, uint32_t n, struct tf_stats *out);
/* Median of `n` ascending-sorted values (mean of the middle two for even n; NaN if n == 0). */
double tf_stats_median_sorted(const double *sorted, uint32_t n);

/* Run the protocol of `m` (warmup, then samples until n >= min_samples &&
 * total >= min_time && rsd <= max_noise, or total >= max_time, or n >=
 * max_samples; flush before each sample if m->flush_l2). Returns the status:
 * TF_STATUS_OK with `out` filled (out->noisy set if a limit ended samples
 * whose rsd was still above max_noise), or the first failing launch's status
 * with err filled (out then holds the samples taken so far). */
int tf_measure_run(const struct tf_measure *m, const struct tf_sampler *s, struct tf_stats *out,
                   struct tf_error *err);

#endif
