/* test_measure.c - statistics and the stopping rule of the measurement
 * protocol, driven by scripted sample sequences instead of a device. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../worker/measure.h"
#include "../../schema/status.h"

/* A scripted sample source: returns script[i] (the last value repeats),
 * failing with `fail_status` on launch number `fail_at` (1-based, 0 = never). */
struct script {
    const double *values;
    int count;
    int next;          /* timed samples taken */
    int untimed;       /* warm-up launches seen */
    int flushes;
    int fail_at;       /* counts all launches */
    int launches;
    int fail_status;
};

static int script_launch(void *ctx, double *seconds, struct tf_error *err)
{
    struct script *s = ctx;
    s->launches++;
    if (s->fail_at && s->launches == s->fail_at) {
        tf_error_set(err, TF_ERR_BACKEND, "scripted failure");
        return s->fail_status;
    }
    if (seconds == NULL) {
        s->untimed++;
        return TF_STATUS_OK;
    }
    *seconds = s->values[s->next < s->count ? s->next : s->count - 1];
    s->next++;
    return TF_STATUS_OK;
}

static int script_flush(void *ctx, struct tf_error *err)
{
    (void)err;
    ((struct script *)ctx)->flushes++;
    return 0;
}

static struct tf_measure settings(void)
{
    return (struct tf_measure){.warmup = 2, .min_samples = 10, .max_samples = 1000,
                               .min_time = 0.02, .max_time = 1.0, .max_noise = 0.005,
                               .timeout = 10, .flush_l2 = false};
}

static void test_median_odd_even(void **state)
{
    (void)state;
    const double odd[] = {5, 1, 3};
    const double even[] = {4, 1, 3, 2};
    struct tf_stats st;
    tf_stats_compute(odd, 3, &st);
    assert_true(st.median == 3.0);
    assert_true(st.min == 1.0);
    assert_true(st.mean == 3.0);
    assert_true(st.total == 9.0);
    tf_stats_compute(even, 4, &st);
    assert_true(st.median == 2.5);
    assert_true(st.min == 1.0);
    const double sorted[] = {1, 2, 10, 11};
    assert_true(tf_stats_median_sorted(sorted, 4) == 6.0);
    assert_true(tf_stats_median_sorted(sorted, 1) == 1.0);
    assert_true(isnan(tf_stats_median_sorted(sorted, 0)));
}

static void test_rsd(void **state)
{
    (void)state;
    /* mean 5, sample variance ((-3)^2+(-1)^2+1^2+3^2)/3 = 20/3 */
    const double v[] = {2, 4, 6, 8};
    struct tf_stats st;
    tf_stats_compute(v, 4, &st);
    assert_true(fabs(st.mean - 5.0) < 1e-12);
    assert_true(fabs(st.rsd - sqrt(20.0 / 3.0) / 5.0) < 1e-12);
    const double same[] = {7, 7, 7};
    tf_stats_compute(same, 3, &st);
    assert_true(st.rsd == 0.0);
    tf_stats_compute(v, 1, &st);
    assert_int_equal(st.n, 1);
    assert_true(st.rsd == 0.0);
    tf_stats_compute(v, 0, &st);
    assert_int_equal(st.n, 0);
    assert_true(isnan(st.median) && isnan(st.rsd));
}

/* Constant samples of 1 ms: quiet from the start, so min_samples and min_time decide. */
static void test_stops_on_noise_rule(void **state)
{
    (void)state;
    const double v[] = {0.001};
    struct script s = {.values = v, .count = 1};
    struct tf_sampler sm = {.launch = script_launch, .flush = script_flush, .ctx = &s};
    struct tf_measure m = settings();
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(s.untimed, 2);
    /* min_time 0.02 needs 20 samples of 1 ms (more than min_samples 10) */
    assert_int_equal(st.n, 20);
    assert_int_equal(s.flushes, 0);
    assert_true(fabs(st.median - 0.001) < 1e-15);
    assert_int_equal(st.noisy, 0); /* the rule stopped it: quiet */
    /* One launch at a time the warm-ups are untimed: the device time is the
     * samples' (it becomes the result's device_time). */
    assert_true(fabs(st.busy - 0.020) < 1e-12);

    m.min_time = 0.001; /* now min_samples decides */
    s.next = 0;
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(st.n, 10);
}

/* Noisy first samples, then quiet ones: it keeps sampling until rsd drops. */
static void test_noise_delays_stop(void **state)
{
    (void)state;
    double v[200];
    for (int i = 0; i < 200; i++)
        v[i] = i < 4 ? (i % 2 ? 0.002 : 0.001) : 0.0015;
    struct script s = {.values = v, .count = 200};
    struct tf_sampler sm = {.launch = script_launch, .ctx = &s};
    struct tf_measure m = settings();
    m.min_time = 0.0001;
    m.max_noise = 0.05;
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_true(st.n > 10);   /* at 10 samples rsd is ~0.14 */
    assert_true(st.rsd <= 0.05);
    assert_true(st.n < 200);
    assert_int_equal(st.noisy, 0); /* noisy at first, but the rule was met in the end */
    /* the stop is the first n where rsd <= max_noise: n - 1 samples were still too noisy */
    struct tf_stats before;
    tf_stats_compute(v, st.n - 1, &before);
    assert_true(before.rsd > 0.05);
}

/* Alternating samples never get quiet: max_time stops it. */
static void test_max_time(void **state)
{
    (void)state;
    double v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = i % 2 ? 0.01 : 0.03;
    struct script s = {.values = v, .count = 1000};
    struct tf_sampler sm = {.launch = script_launch, .flush = script_flush, .ctx = &s};
    struct tf_measure m = settings();
    m.max_time = 0.2;
    m.flush_l2 = true;
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(st.n, 10); /* 5 pairs of 0.04 = 0.2 */
    assert_true(fabs(st.total - 0.2) < 1e-12);
    assert_true(st.min == 0.01);
    assert_true(fabs(st.median - 0.02) < 1e-12);
    assert_int_equal(s.flushes, 10);
    /* rsd ~0.53 when max_time ended it: marked noisy (issue 13 item 7) */
    assert_true(st.rsd > m.max_noise);
    assert_int_equal(st.noisy, 1);
    /* the same samples under a max_noise they meet: the rule stops them, not noisy */
    m.max_noise = 0.6;
    s.next = 0;
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(st.n, 10); /* min_samples */
    assert_int_equal(st.noisy, 0);
}

static void test_max_samples(void **state)
{
    (void)state;
    const double v[] = {1e-9, 3e-9};
    struct script s = {.values = v, .count = 2};
    struct tf_sampler sm = {.launch = script_launch, .ctx = &s};
    struct tf_measure m = settings();
    m.max_samples = 25;
    struct tf_stats st;
    struct tf_error err = {0};
    /* after the script ends the last value repeats: rsd shrinks but min_time is never reached */
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(st.n, 25);
    /* max_samples ended it with rsd (~0.08) above max_noise: noisy as well */
    assert_true(st.rsd > m.max_noise);
    assert_int_equal(st.noisy, 1);
    /* quiet samples that a limit ends (min_time unreachable) are not noisy */
    const double quiet[] = {1e-9};
    s = (struct script){.values = quiet, .count = 1};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(st.n, 25);
    assert_int_equal(st.noisy, 0);
}

static void test_failure_mid_way(void **state)
{
    (void)state;
    const double v[] = {0.001};
    struct script s = {.values = v, .count = 1, .fail_at = 6,
                       .fail_status = TF_STATUS_RUNTIME_ERROR};
    struct tf_sampler sm = {.launch = script_launch, .ctx = &s};
    struct tf_measure m = settings();
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_RUNTIME_ERROR);
    assert_string_equal(err.message, "scripted failure");
    assert_int_equal(st.n, 3); /* 2 warm-ups + 3 samples, the 6th launch failed */
    assert_int_equal(st.noisy, 0); /* a failure is not a noisy measurement */

    s = (struct script){.values = v, .count = 1, .fail_at = 1, .fail_status = TF_STATUS_TIMEOUT};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_TIMEOUT);
    assert_int_equal(st.n, 0);

    /* The samples before the failure were noisy (rsd ~0.5): still not marked
     * noisy, a failed measurement is not a measurement (the constant samples
     * above could not tell). */
    const double spread[] = {0.001, 0.003, 0.001, 0.003};
    s = (struct script){.values = spread, .count = 4, .fail_at = 6,
                        .fail_status = TF_STATUS_RUNTIME_ERROR};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_RUNTIME_ERROR);
    assert_int_equal(st.n, 3);
    assert_true(st.rsd > m.max_noise);
    assert_int_equal(st.noisy, 0);
}

static void test_bad_timer(void **state)
{
    (void)state;
    const double v[] = {0.001, -1.0};
    struct script s = {.values = v, .count = 2};
    struct tf_sampler sm = {.launch = script_launch, .ctx = &s};
    struct tf_measure m = settings();
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_RUNTIME_ERROR);
    assert_non_null(strstr(err.message, "timer"));
}

/* A scripted batch source: enqueue records the batch, collect serves the next
 * values of the script (the warm-ups too: a batch times everything it runs). */
struct batches {
    struct script s;
    int queued;
    int enqueues, collects, overlaps, largest;
    int overlap_status;
    int collects_at_overlap; /* collects done when overlap ran */
};

static int batch_enqueue(void *ctx, int n, int flush, struct tf_error *err)
{
    (void)err;
    struct batches *b = ctx;
    assert_int_equal(b->queued, 0); /* never two batches in flight */
    assert_true(n >= 1);
    b->queued = n;
    b->enqueues++;
    if (n > b->largest)
        b->largest = n;
    b->s.flushes += flush ? n : 0;
    return TF_STATUS_OK;
}

static int batch_collect(void *ctx, double *seconds, struct tf_error *err)
{
    (void)err;
    struct batches *b = ctx;
    for (int i = 0; i < b->queued; i++) {
        seconds[i] = b->s.values[b->s.next < b->s.count ? b->s.next : b->s.count - 1];
        b->s.next++;
    }
    b->queued = 0;
    b->collects++;
    return TF_STATUS_OK;
}

static int batch_overlap(void *ctx, struct tf_error *err)
{
    struct batches *b = ctx;
    b->overlaps++;
    b->collects_at_overlap = b->collects;
    if (b->overlap_status != TF_STATUS_OK)
        tf_error_set(err, TF_ERR_EVAL, "scripted wrong result");
    return b->overlap_status;
}

static int no_launch(void *ctx, double *seconds, struct tf_error *err)
{
    (void)ctx, (void)seconds, (void)err;
    fail_msg("the batched protocol must not launch one by one");
    return TF_STATUS_RUNTIME_ERROR;
}

/* Batched: the same stopping rule as one launch at a time, the warm-ups in the
 * first batch with the overlap work running while it is in flight. */
static void test_batched_same_rule(void **state)
{
    (void)state;
    const double v[] = {0.001};
    struct batches b = {.s = {.values = v, .count = 1}};
    struct tf_sampler sm = {no_launch, NULL, &b, batch_enqueue, batch_collect, batch_overlap, 0, NULL};
    struct tf_measure m = settings();
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(st.n, 20);          /* min_time 0.02 of 1 ms samples, as unbatched */
    assert_int_equal(b.overlaps, 1);
    assert_int_equal(b.collects_at_overlap, 0); /* ran while the first batch was queued */
    assert_int_equal(b.enqueues, 2);     /* warm-ups + 10, then the 10 min_time needs */
    assert_true(fabs(st.busy - 0.022) < 1e-12); /* 2 warm-ups + 20 samples */
    assert_true(fabs(st.total - 0.020) < 1e-12);

    m.flush_l2 = true;
    m.max_samples = 15;
    memset(&b, 0, sizeof b);
    b.s = (struct script){.values = v, .count = 1};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(st.n, 15);          /* max_samples caps the batches */
    assert_true(b.largest <= 12);
    assert_int_equal(b.s.flushes, 2 + 15);
}

/* A slow kernel (0.4 s a launch, max_time 1 s): the first batch holds what
 * max_time allows, not warm-ups + min_samples (12 launches, ~5 s). */
static void test_batched_slow_kernel(void **state)
{
    (void)state;
    const double v[] = {0.4};
    struct batches b = {.s = {.values = v, .count = 1}};
    struct tf_sampler sm = {no_launch, NULL, &b, batch_enqueue, batch_collect, batch_overlap, 0.4, NULL};
    struct tf_measure m = settings();
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_true(b.largest <= 2);
    assert_true(st.n >= 2 && st.n <= 3);  /* stops at max_time, as unbatched would */
    assert_true(st.busy <= 1.2 + 1e-9);
}

/* A long run of fast samples is cut into batches no larger than TF_MAX_BATCH,
 * and a failed verification drains the first batch and ends the protocol. */
static void test_batched_limits_and_wrong_result(void **state)
{
    (void)state;
    const double v[] = {0x1p-20}; /* ~1 us, and sums of it are exact */
    struct batches b = {.s = {.values = v, .count = 1}};
    struct tf_sampler sm = {no_launch, NULL, &b, batch_enqueue, batch_collect, batch_overlap, 0, NULL};
    struct tf_measure m = settings(); /* min_time 0.02 needs ceil(0.02 * 2^20) = 20972 */
    m.max_samples = 100000;
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(st.n, 20972);
    assert_int_equal(b.largest, 256);

    memset(&b, 0, sizeof b);
    b.s = (struct script){.values = v, .count = 1};
    b.overlap_status = TF_STATUS_WRONG_RESULT;
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_WRONG_RESULT);
    assert_int_equal(b.enqueues, 1);
    assert_int_equal(b.collects, 1); /* drained, not left in flight */
    assert_int_equal(b.queued, 0);
    assert_non_null(strstr(err.message, "scripted wrong result"));
}

/* A timer that returns NaN (a broken event pair, say) is runtime_error naming
 * the timer, one launch at a time and batched; never a time. */
static void test_nan_timer(void **state)
{
    (void)state;
    const double v[] = {0.001, 0.001, NAN};
    struct script s = {.values = v, .count = 3};
    struct tf_sampler sm = {.launch = script_launch, .ctx = &s, .timer = "scripted timer"};
    struct tf_measure m = settings();
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_RUNTIME_ERROR);
    assert_non_null(strstr(err.message, "the scripted timer returned nan seconds for sample 3"));
    assert_int_equal(st.n, 2);

    struct batches *b = calloc(1, sizeof *b);
    b->s = (struct script){.values = v, .count = 3};
    struct tf_sampler bm = {.launch = no_launch, .ctx = b, .enqueue = batch_enqueue,
                            .collect = batch_collect, .timer = "scripted timer"};
    m.warmup = 0;
    memset(&err, 0, sizeof err);
    assert_int_equal(tf_measure_run(&m, &bm, &st, &err), TF_STATUS_RUNTIME_ERROR);
    assert_non_null(strstr(err.message, "scripted timer returned nan"));
    /* unnamed, it is the device timer */
    b->s = (struct script){.values = v, .count = 3};
    bm.timer = NULL;
    assert_int_equal(tf_measure_run(&m, &bm, &st, &err), TF_STATUS_RUNTIME_ERROR);
    assert_non_null(strstr(err.message, "device timer returned nan"));
    free(b);
}

/* The rule is "rsd at most max_noise": samples whose rsd equals max_noise
 * exactly stop it, quiet. Samples 1 s and 3 s: Welford's mean 2, m2 2, rsd
 * sqrt(2) / 2, the same bits as max_noise below; a third sample (100 s)
 * would be taken if the bound were strict. */
static void test_noise_bound_is_inclusive(void **state)
{
    (void)state;
    const double v[] = {1.0, 3.0, 100.0};
    struct script s = {.values = v, .count = 3};
    struct tf_sampler sm = {.launch = script_launch, .ctx = &s};
    struct tf_measure m = settings();
    m.warmup = 0;
    m.min_samples = 2;
    m.min_time = 1e-6;
    m.max_time = 1000;
    m.max_noise = sqrt(2.0) / 2.0;
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(st.n, 2);
    assert_int_equal(st.noisy, 0);
}

/* Batched and noisy for ever: each batch grows by half the samples so far
 * (up to TF_MAX_BATCH), so 4000 samples take a few dozen round trips to the
 * device, not one per sample (the reason batches exist). */
static void test_batched_noise_grows_batches(void **state)
{
    (void)state;
    double alternating[64]; /* ~1 and ~2 us (rsd ~0.33); the last one repeats after */
    for (int i = 0; i < 64; i++)
        alternating[i] = i % 2 ? 0x1p-19 : 0x1p-20;
    struct batches b = {.s = {.values = alternating, .count = 64}};
    struct tf_sampler sm = {no_launch, NULL, &b, batch_enqueue, batch_collect, NULL, 0, NULL};
    struct tf_measure m = settings();
    m.warmup = 0;
    m.min_time = 1e-9;
    m.max_samples = 4000;
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(st.n, 4000);
    assert_int_equal(st.noisy, 1);
    if (b.enqueues > 40)
        fail_msg("%d round trips for %u noisy samples", b.enqueues, st.n);
}

/* Samples of 1, 3, 2 ms through the whole protocol: the median is the middle
 * one (2), the minimum the smallest (1), the mean neither. */
static void test_median_and_min_of_protocol(void **state)
{
    (void)state;
    const double v[] = {0.001, 0.003, 0.002};
    struct script s = {.values = v, .count = 3};
    struct tf_sampler sm = {.launch = script_launch, .ctx = &s};
    struct tf_measure m = settings();
    m.min_samples = 3;
    m.max_samples = 3;
    m.min_time = 1e-6;
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(st.n, 3);
    assert_true(st.median == 0.002);
    assert_true(st.min == 0.001);
    assert_true(fabs(st.mean - 0.002) < 1e-15);
    const double w[] = {0.001, 0.005, 0.002}; /* mean 2.67 ms: median is not the mean */
    s = (struct script){.values = w, .count = 3};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_true(st.median == 0.002 && st.min == 0.001 && st.mean > 0.0026);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_odd_even),
        cmocka_unit_test(test_rsd),
        cmocka_unit_test(test_stops_on_noise_rule),
        cmocka_unit_test(test_noise_delays_stop),
        cmocka_unit_test(test_max_time),
        cmocka_unit_test(test_max_samples),
        cmocka_unit_test(test_failure_mid_way),
        cmocka_unit_test(test_bad_timer),
        cmocka_unit_test(test_batched_same_rule),
        cmocka_unit_test(test_batched_slow_kernel),
        cmocka_unit_test(test_batched_limits_and_wrong_result),
        cmocka_unit_test(test_nan_timer),
        cmocka_unit_test(test_median_and_min_of_protocol),
        cmocka_unit_test(test_noise_bound_is_inclusive),
        cmocka_unit_test(test_batched_noise_grows_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
