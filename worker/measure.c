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
 * bounds the rest. Launch failures in the middle end the protocol with the
 * launch's status: a variant that fails on its 40th launch is not "ok". */
#include "measure.h"

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

int tf_measure_run(const struct tf_measure *m, const struct tf_sampler *s, struct tf_stats *out,
                   struct tf_error *err)
{
    int status = TF_STATUS_OK;
    const uint32_t cap = m->max_samples > 0 ? (uint32_t)m->max_samples : 1;
    double *samples = tf_xmalloc(sizeof(double) * cap);
    uint32_t n = 0;
    double total = 0.0, mean = 0.0, m2 = 0.0;

    for (int i = 0; i < m->warmup; i++) {
        status = s->launch(s->ctx, NULL, err);
        if (status != TF_STATUS_OK)
            goto done;
    }
    for (;;) {
        if (m->flush_l2 && s->flush != NULL && s->flush(s->ctx, err) != 0) {
            status = TF_STATUS_RUNTIME_ERROR;
            goto done;
        }
        double t = 0.0;
        status = s->launch(s->ctx, &t, err);
        if (status != TF_STATUS_OK)
            goto done;
        if (!(t >= 0.0) || isinf(t)) { /* a broken clock would poison every statistic */
            tf_error_set(err, TF_ERR_BACKEND, "device timer returned %g seconds", t);
            status = TF_STATUS_RUNTIME_ERROR;
            goto done;
        }
        samples[n++] = t;
        total += t;
        const double delta = t - mean;
        mean += delta / n;
        m2 += delta * (t - mean);

        if (n >= cap || total >= m->max_time)
            break;
        if (n >= (uint32_t)m->min_samples && total >= m->min_time &&
            running_rsd(n, mean, m2) <= m->max_noise)
            break;
    }
done:
    tf_stats_compute(samples, n, out);
    free(samples);
    return status;
}
