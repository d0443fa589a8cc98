/* test_measure.c - statistics and the stopping rule of the measurement
 * protocol, driven by scripted sample sequences instead of a device. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
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
    struct tf_sampler sm = {script_launch, script_flush, &s};
    struct tf_measure m = settings();
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(s.untimed, 2);
    /* min_time 0.02 needs 20 samples of 1 ms (more than min_samples 10) */
    assert_int_equal(st.n, 20);
    assert_int_equal(s.flushes, 0);
    assert_true(fabs(st.median - 0.001) < 1e-15);

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
    struct tf_sampler sm = {script_launch, NULL, &s};
    struct tf_measure m = settings();
    m.min_time = 0.0001;
    m.max_noise = 0.05;
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_true(st.n > 10);   /* at 10 samples rsd is ~0.14 */
    assert_true(st.rsd <= 0.05);
    assert_true(st.n < 200);
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
    struct tf_sampler sm = {script_launch, script_flush, &s};
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
}

static void test_max_samples(void **state)
{
    (void)state;
    const double v[] = {1e-9, 3e-9};
    struct script s = {.values = v, .count = 2};
    struct tf_sampler sm = {script_launch, NULL, &s};
    struct tf_measure m = settings();
    m.max_samples = 25;
    struct tf_stats st;
    struct tf_error err = {0};
    /* after the script ends the last value repeats: rsd shrinks but min_time is never reached */
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_OK);
    assert_int_equal(st.n, 25);
}

static void test_failure_mid_way(void **state)
{
    (void)state;
    const double v[] = {0.001};
    struct script s = {.values = v, .count = 1, .fail_at = 6,
                       .fail_status = TF_STATUS_RUNTIME_ERROR};
    struct tf_sampler sm = {script_launch, NULL, &s};
    struct tf_measure m = settings();
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_RUNTIME_ERROR);
    assert_string_equal(err.message, "scripted failure");
    assert_int_equal(st.n, 3); /* 2 warm-ups + 3 samples, the 6th launch failed */

    s = (struct script){.values = v, .count = 1, .fail_at = 1, .fail_status = TF_STATUS_TIMEOUT};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_TIMEOUT);
    assert_int_equal(st.n, 0);
}

static void test_bad_timer(void **state)
{
    (void)state;
    const double v[] = {0.001, -1.0};
    struct script s = {.values = v, .count = 2};
    struct tf_sampler sm = {script_launch, NULL, &s};
    struct tf_measure m = settings();
    struct tf_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_measure_run(&m, &sm, &st, &err), TF_STATUS_RUNTIME_ERROR);
    assert_non_null(strstr(err.message, "timer"));
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
