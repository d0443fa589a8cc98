/* measure.c - the measurement protocol (nvbench's stopping rule, Triton's do_bench).
 *
 * The protocol runs a few untimed warm-up launches, then takes timed samples
 * until the noise rule is satisfied (at least min_samples samples, at least
 * min_time seconds of them, relative standard deviation at most max_noise), or
 * a hard limit is reached (max_time seconds of samples, or max_samples). The
 * running mean and variance use Welford's update so the rule is checked after
 * every sample in O(1); the samples themselves are kept (max_samples doubles)
 * because the median needs them. Time is the sum of the samples the device
 * reported, not wall time: the limits bound device work, the runner's deadline
 * bounds the rest; samples a limit ended while their spread was still above
 * max_noise are marked noisy. Launch failures in the middle end the protocol
 * with the launch's status: a variant that fails on its 40th launch is not "ok", and a
 * sample the timer reports as NaN, infinite or negative is runtime_error with
 * the timer named (a broken clock must never become a time).
 * Where the backend can queue launches (enqueue/collect), samples go in
 * batches: the warm-ups and the first min_samples in one queue, the caller's
 * overlap work (the runner's verification) done while the device runs them,
 * then batches sized to what the rule still needs; the rule is the same. */
#include "measure.h"

#include "backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/status.h"

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tf_stats_median_sorted(const double *sorted, uint32_t n)
{
    if (n == 0)
        return NAN;
    if (n % 2 == 1)
        return sorted[n / 2];
    return 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

void tf_stats_compute(const double *samples, uint32_t n, struct tf_stats *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n == 0) {
        out->median = out->min = out->mean = out->rsd = NAN;
        return;
    }
    double *sorted = tf_xmalloc(sizeof(double) * n);
    memcpy(sorted, samples, sizeof(double) * n);
    qsort(sorted, n, sizeof(double), cmp_double);
    out->median = tf_stats_median_sorted(sorted, n);
    out->min = sorted[0];
    free(sorted);

    /* Two passes: the mean first, then squared deviations, for accuracy. */
    double sum = 0.0;
    for (uint32_t i = 0; i < n; i++)
        sum += samples[i];
    out->total = sum;
    out->mean = sum / n;
    if (n < 2 || out->mean == 0.0) {
        out->rsd = 0.0;
        return;
    }
    double ss = 0.0;
    for (uint32_t i = 0; i < n; i++)
        ss += (samples[i] - out->mean) * (samples[i] - out->mean);
    out->rsd = sqrt(ss / (n - 1)) / out->mean;
}

/* Relative standard deviation from Welford's accumulators. */
static double running_rsd(uint32_t n, double mean, double m2)
{
    if (n < 2 || mean == 0.0)
        return 0.0;
    return sqrt(m2 / (n - 1)) / mean;
}

/* The samples so far, with Welford's running mean and variance. */
struct sample_set {
    double *v;
    uint32_t n, cap;
    double total, mean, m2;
};

/* Add one sample; -1 + err (naming `timer`) if the clock returned nonsense. */
static int sample_add(struct sample_set *s, double t, const char *timer, struct tf_error *err)
{
    if (!(t >= 0.0) || isinf(t)) /* a broken clock would poison every statistic */
        return tf_error_set(err, TF_ERR_BACKEND,
                            "the %s returned %g seconds for sample %u: not a time, the "
                            "configuration is not measured",
                            timer ? timer : "device timer", t, s->n + 1);
    if (s->n == s->cap)
        return 0;
    s->v[s->n++] = t;
    s->total += t;
    const double delta = t - s->mean;
    s->mean += delta / s->n;
    s->m2 += delta * (t - s->mean);
    return 0;
}

/* 1 when the protocol of `m` is satisfied by the samples so far. */
static int sample_done(const struct tf_measure *m, const struct sample_set *s)
{
    if (s->n >= s->cap || s->total >= m->max_time)
        return 1;
    return s->n >= (uint32_t)m->min_samples && s->total >= m->min_time &&
           running_rsd(s->n, s->mean, s->m2) <= m->max_noise;
}

/* How many samples the next batch should take: what min_samples and min_time
 * still need, half again as many while the noise is too high, never beyond
 * max_time (at the mean so far), max_samples or a batch. */
static int next_batch(const struct tf_measure *m, const struct sample_set *s)
{
    double need = 1;
    if (s->n < (uint32_t)m->min_samples)
        need = m->min_samples - s->n;
    if (s->mean > 0 && s->total < m->min_time)
        need = fmax(need, ceil((m->min_time - s->total) / s->mean));
    if (running_rsd(s->n, s->mean, s->m2) > m->max_noise)
        need = fmax(need, s->n / 2.0);
    if (s->mean > 0)
        need = fmin(need, fmax(1, floor((m->max_time - s->total) / s->mean)));
    need = fmin(need, (double)(s->cap - s->n));
    need = fmin(need, TF_MAX_BATCH);
    return need < 1 ? 1 : (int)need;
}

/* The protocol with batches: the warm-ups and the first samples in one queue,
 * the overlap work while the device runs them, then batches until done. */
static int measure_batched(const struct tf_measure *m, const struct tf_sampler *s,
                           struct sample_set *set, double *busy, struct tf_error *err)
{
    double times[TF_MAX_BATCH];
    int warm = m->warmup < TF_MAX_BATCH / 2 ? m->warmup : TF_MAX_BATCH / 2;
    int first = m->min_samples < TF_MAX_BATCH - warm ? m->min_samples : TF_MAX_BATCH - warm;
    if ((uint32_t)first > set->cap)
        first = (int)set->cap;
    if (s->estimate > 0) { /* a slow kernel: no more than max_time allows, warm-ups last */
        const double fit = floor(m->max_time / s->estimate);
        const int budget = fit < 1 ? 1 : fit > TF_MAX_BATCH ? TF_MAX_BATCH : (int)fit;
        if (first > budget)
            first = budget;
        if (warm > budget - first)
            warm = budget - first;
    }
    int status = s->enqueue(s->ctx, warm + first, m->flush_l2, err);
    if (status != TF_STATUS_OK)
        return status;
    int overlap = s->overlap ? s->overlap(s->ctx, err) : TF_STATUS_OK;
    struct tf_error collect_err = {0};
    status = s->collect(s->ctx, times, &collect_err);
    if (overlap != TF_STATUS_OK)
        return overlap; /* its err stands; the batch was drained */
    if (status != TF_STATUS_OK) {
        *err = collect_err;
        return status;
    }
    for (int i = 0; i < warm + first; i++) {
        *busy += times[i];
        if (i >= warm && sample_add(set, times[i], s->timer, err) != 0)
            return TF_STATUS_RUNTIME_ERROR;
    }
    while (!sample_done(m, set)) {
        int n = next_batch(m, set);
        if ((status = s->enqueue(s->ctx, n, m->flush_l2, err)) != TF_STATUS_OK ||
            (status = s->collect(s->ctx, times, err)) != TF_STATUS_OK)
            return status;
        for (int i = 0; i < n; i++) {
            *busy += times[i];
            if (sample_add(set, times[i], s->timer, err) != 0)
                return TF_STATUS_RUNTIME_ERROR;
        }
    }
    return TF_STATUS_OK;
}

int tf_measure_run(const struct tf_measure *m, const struct tf_sampler *s, struct tf_stats *out,
                   struct tf_error *err)
{
    int status = TF_STATUS_OK;
    struct sample_set set = {0};
    set.cap = m->max_samples > 0 ? (uint32_t)m->max_samples : 1;
    set.v = tf_xmalloc(sizeof(double) * set.cap);
    double busy = 0.0;

    if (s->enqueue != NULL && s->collect != NULL) {
        status = measure_batched(m, s, &set, &busy, err);
        goto done;
    }
    if (s->overlap != NULL && (status = s->overlap(s->ctx, err)) != TF_STATUS_OK)
        goto done;
    for (int i = 0; i < m->warmup; i++) {
        status = s->launch(s->ctx, NULL, err);
        if (status != TF_STATUS_OK)
            goto done;
    }
    while (!sample_done(m, &set)) {
        if (m->flush_l2 && s->flush != NULL && s->flush(s->ctx, err) != 0) {
            status = TF_STATUS_RUNTIME_ERROR;
            goto done;
        }
        double t = 0.0;
        status = s->launch(s->ctx, &t, err);
        if (status != TF_STATUS_OK)
            goto done;
        if (sample_add(&set, t, s->timer, err) != 0) {
            status = TF_STATUS_RUNTIME_ERROR;
            goto done;
        }
        busy += t;
    }
done:
    tf_stats_compute(set.v, set.n, out);
    out->busy = busy;
    /* The rule stops only once rsd <= max_noise: above it, a limit ended the
     * samples, and the times are less certain than the job asked for. */
    out->noisy = status == TF_STATUS_OK && running_rsd(set.n, set.mean, set.m2) > m->max_noise;
    free(set.v);
    return status;
}
