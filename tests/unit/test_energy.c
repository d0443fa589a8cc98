/* test_energy.c - the energy window (worker/energy.c) against simulated devices:
 * a device that draws a known power while it runs launches of a known length,
 * and a counter that shows the energy only as of its last update (every
 * `period` seconds, from some phase), as NVML's does. The window must find a
 * launch's energy within the bound it promises (one batch against
 * min_batches of them), for GPU-like (queued) and host-like (synchronous)
 * launches, fast and slow ones; and say why when it cannot: no counter, a
 * failed or backward reading, a counter that never moves, launches too long
 * for the time allowed. A launch that fails in the window is the result. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../schema/result.h"
#include "../../schema/status.h"
#include "../../worker/backend.h"
#include "../../worker/energy.h"

/* A simulated device. Time is the device's: launches run back to back; a
 * queued batch has started (not run) when the counter is read, a
 * synchronous one has run. The host overhead per batch is `gap` seconds of
 * idle device at `idle_w`. */
struct sim {
    double launch_s;   /* one launch */
    double power_w;    /* while launching */
    double idle_w;     /* while idle */
    double gap;        /* idle seconds between batches (the host's round trip) */
    double period;     /* the counter's update period; 0: it never moves */
    double phase;      /* its first update, seconds after the start */
    int queued;
    double t;          /* device time now */
    double energy;     /* true energy so far, J */
    double read_s;     /* seconds a reading of the counter takes (the host's; a queued
                          batch runs meanwhile, the device idles past its end) */
    double first_read_s; /* > 0: the first reading takes this instead (a cached answer) */
    double host_behind;  /* how far the host's clock is behind the device's: a reading
                            ended while the batch it overlapped still ran */
    double idle_s;     /* device seconds idle so far */
    int pending;       /* launches of the batch started */
    int ran_early;     /* the pending queued batch ran during a reading */
    int early_status;  /* and its status */
    struct tf_error early_err;
    int launches;      /* launches run */
    int fail_at;       /* a launch number that fails (1-based; 0 never) */
    int read_fail_at;  /* a reading that fails (1-based; 0 never) */
    int reads;
    int no_counter;
    double backwards_at; /* device time after which the counter drops by 1 kJ; 0 never */
    /* the true energy at each update, indexed by update number */
    double last_update_t, last_update_e;
};

/* Advance `dt` seconds at `w` watts, noting every counter update passed. */
static void advance(struct sim *s, double dt, double w)
{
    while (s->period > 0) {
        double next = s->last_update_t < 0 ? s->phase : s->last_update_t + s->period;
        if (next > s->t + dt)
            break;
        s->last_update_e = s->energy + (next - s->t) * w;
        dt -= next - s->t;
        s->energy = s->last_update_e;
        s->t = next;
        s->last_update_t = next;
    }
    s->energy += dt * w;
    s->t += dt;
}

static int sim_run(struct sim *s, int n, struct tf_error *err)
{
    for (int i = 0; i < n; i++) {
        s->launches++;
        if (s->fail_at && s->launches == s->fail_at) {
            tf_error_set(err, TF_ERR_BACKEND, "illegal address (simulated)");
            return TF_STATUS_RUNTIME_ERROR;
        }
        advance(s, s->launch_s, s->power_w);
    }
    return TF_STATUS_OK;
}

static void sim_idle(struct sim *s, double dt)
{
    advance(s, dt, s->idle_w);
    s->idle_s += dt;
}

static int sim_start(void *ctx, int n, struct tf_error *err)
{
    struct sim *s = ctx;
    sim_idle(s, s->gap);
    s->pending = n;
    return s->queued ? TF_STATUS_OK : sim_run(s, n, err);
}

static int sim_finish(void *ctx, double *seconds, struct tf_error *err)
{
    struct sim *s = ctx;
    const int n = s->pending;
    s->pending = 0;
    *seconds = n * s->launch_s;
    s->host_behind = 0; /* it waited for the batch */
    if (s->queued && s->ran_early) {
        s->ran_early = 0;
        if (s->early_status != TF_STATUS_OK)
            *err = s->early_err;
        return s->early_status;
    }
    return s->queued ? sim_run(s, n, err) : TF_STATUS_OK;
}

/* The reading's duration: a queued batch runs meanwhile (the value read is
 * the counter's as the reading began); the device idles for what is left. */
static void sim_read_takes(struct sim *s)
{
    const double took = s->reads == 1 && s->first_read_s > 0 ? s->first_read_s : s->read_s;
    double left = took;
    if (s->queued && s->pending > 0 && !s->ran_early) {
        const double t0 = s->t;
        s->early_status = sim_run(s, s->pending, &s->early_err);
        s->ran_early = 1;
        left -= s->t - t0;
    }
    if (left > 0)
        sim_idle(s, left);
    s->host_behind = left < 0 ? -left : 0; /* the host read faster than the batch ran */
}

static int sim_read(void *ctx, double *joules, struct tf_error *err)
{
    struct sim *s = ctx;
    s->reads++;
    if (s->no_counter)
        return tf_error_set(err, TF_ERR_BACKEND, "no NVML (simulated)"), 1;
    if (s->read_fail_at && s->reads == s->read_fail_at)
        return tf_error_set(err, TF_ERR_BACKEND, "NVML error 15 (simulated)");
    *joules = s->last_update_t < 0 ? 0 : s->last_update_e;
    if (s->backwards_at > 0 && s->t > s->backwards_at)
        *joules -= 1000;
    sim_read_takes(s);
    return 0;
}

static double sim_now(void *ctx)
{
    const struct sim *s = ctx;
    return s->t - s->host_behind;
}

static struct sim gpu(double launch_s, double period, double phase)
{
    return (struct sim){.launch_s = launch_s, .power_w = 400, .idle_w = 80, .gap = 5e-6,
                        .period = period, .phase = phase, .queued = 1, .last_update_t = -1};
}

static struct tf_energy_ops ops_of(struct sim *s)
{
    return (struct tf_energy_ops){sim_start, sim_finish, sim_read, sim_now, s, s->queued};
}

static struct tf_energy_plan plan(double window, double launch_s)
{
    return (struct tf_energy_plan){.window = window, .launch_s = launch_s, .batch_s = 0.005,
                                   .min_batches = 10, .limit_s = 2 * window + 0.5};
}

/* Measured, and within the promised bound of the truth: the energy between two
 * updates is the counter's, the launches between them are off by under one
 * batch at each end, of min_batches batches or more. `idle` is the share of
 * each batch's time the device waits for the host, whose energy the launches
 * carry (the window keeps the device busy so that it is small). */
static void expect_within(struct sim *s, const struct tf_energy_plan *p, double idle_share)
{
    struct tf_energy_ops ops = ops_of(s);
    struct tf_energy_result r;
    struct tf_error err = {0};
    assert_int_equal(tf_energy_measure(p, &ops, &r, &err), TF_STATUS_OK);
    if (r.status != TF_ENERGY_MEASURED)
        fail_msg("not measured: %s (%s)", tf_energy_status_name(r.status), r.why);
    const double truth = s->power_w * s->launch_s;
    const double bound = 1.0 / p->min_batches + idle_share + 1e-9;
    if (!(fabs(r.joules - truth) <= bound * truth))
        fail_msg("%.6g J a launch, truth %.6g J: off by %.2f%% (bound %.2f%%)", r.joules, truth,
                 100 * fabs(r.joules / truth - 1), 100 * bound);
    assert_true(r.window_s >= p->window);
    assert_true(r.launches >= (uint64_t)p->min_batches * (uint64_t)tf_energy_batch(p, s->read_s));
    assert_true(r.updates >= 2);
    /* every launch the window ran is device time (the duty cycle's numerator) */
    assert_true(fabs(r.busy_s - s->launches * s->launch_s) < 1e-9);
}

/* sgemm 4096^3 on an H100: 2.7 ms launches, NVML updating every 100 ms
 * (the 14% of rows without energy came from samples shorter than that). */
static void test_gpu_slow_counter(void **state)
{
    (void)state;
    const double phases[] = {0.0004, 0.013, 0.05, 0.0999};
    for (int i = 0; i < 4; i++) {
        struct sim s = gpu(2.7e-3, 0.1, phases[i]);
        struct tf_energy_plan p = plan(0.1, s.launch_s);
        assert_int_equal(tf_energy_batch(&p, 0), 1);
        expect_within(&s, &p, 0.01);
    }
    /* 20 ms updates, 40 us launches: batches of 5 ms / 40 us launches */
    struct sim s = gpu(40e-6, 0.02, 0.007);
    struct tf_energy_plan p = plan(0.1, s.launch_s);
    assert_in_range(tf_energy_batch(&p, 0), 124, 125);
    expect_within(&s, &p, 0.01);
    /* launches shorter than 5 ms / 256: the batch is capped at TF_MAX_BATCH */
    s = gpu(1e-6, 0.02, 0.001);
    p = plan(0.1, s.launch_s);
    assert_int_equal(tf_energy_batch(&p, 0), TF_MAX_BATCH);
    expect_within(&s, &p, 0.01);
}

/* sgemm 4096^3 on an H200 whose NVML reading takes 5 ms, longer than a 5 ms
 * batch of 3 ms launches (one): batches then cover two readings, so the
 * device runs while the counter is read; after the first reading (before any
 * launch) it idles only for the host's gaps. And a reading too slow to
 * cover: batches no longer than lets min_batches of them fill half the limit. */
static void test_gpu_slow_reading(void **state)
{
    (void)state;
    struct sim s = gpu(3e-3, 0.1, 0.013);
    s.read_s = 5e-3;
    struct tf_energy_plan p = plan(0.1, s.launch_s);
    assert_int_equal(tf_energy_batch(&p, s.read_s), 3); /* 9 ms against 5 ms */
    expect_within(&s, &p, 0.01);
    const double gaps = (double)s.reads * s.gap;
    if (!(s.idle_s - s.read_s <= gaps + 1e-9))
        fail_msg("the device idled %.3f ms beyond the first reading and the gaps (%.3f ms) "
                 "over %.3f ms", 1e3 * (s.idle_s - s.read_s - gaps), 1e3 * gaps, 1e3 * s.t);
    /* The first reading answered from a cache (0.5 ms), the others 5 ms: the
     * batches grow after the first slow one, which alone leaves the device
     * idle (5 - 3 ms); the bound holds for the longest batch. */
    s = gpu(3e-3, 0.1, 0.013);
    s.read_s = 5e-3;
    s.first_read_s = 0.5e-3;
    assert_int_equal(tf_energy_batch(&p, s.first_read_s), 1);
    expect_within(&s, &p, 0.01);
    const double slow_once = s.read_s - s.launch_s;
    if (!(s.idle_s - s.first_read_s <= (double)s.reads * s.gap + slow_once + 1e-9))
        fail_msg("the device idled %.3f ms beyond the first reading (%d readings)",
                 1e3 * (s.idle_s - s.first_read_s), s.reads);
    /* 0.7 s allowed, 10 batches: at most 35 ms a batch, 11 launches */
    assert_int_equal(tf_energy_batch(&p, 0.1), 11);
    /* a fast reading changes nothing */
    assert_int_equal(tf_energy_batch(&p, 1e-4), 1);
}

/* A host kernel with RAPL: synchronous launches, a counter every millisecond. */
static void test_host_fast_counter(void **state)
{
    (void)state;
    struct sim s = gpu(0.3e-3, 0.001, 0.0002);
    s.queued = 0;
    s.power_w = 95;
    s.idle_w = 20;
    struct tf_energy_plan p = plan(0.05, s.launch_s);
    expect_within(&s, &p, 0.01);
}

/* A counter that updates between every pair of readings (RAPL at fine
 * grain): the window is still whole launches and the energy still right. */
static void test_counter_moving_every_reading(void **state)
{
    (void)state;
    struct sim s = gpu(1e-3, 1e-4, 0);
    struct tf_energy_plan p = plan(0.02, s.launch_s);
    expect_within(&s, &p, 0.01);
}

static void test_no_counter(void **state)
{
    (void)state;
    struct sim s = gpu(2.7e-3, 0.1, 0.01);
    s.no_counter = 1;
    struct tf_energy_plan p = plan(0.1, s.launch_s);
    struct tf_energy_ops ops = ops_of(&s);
    struct tf_energy_result r;
    struct tf_error err = {0};
    assert_int_equal(tf_energy_measure(&p, &ops, &r, &err), TF_STATUS_OK);
    assert_int_equal(r.status, TF_ENERGY_NO_COUNTER);
    assert_true(isnan(r.joules));
    assert_string_equal(r.why, "no NVML (simulated)");
    assert_int_equal(s.launches, 0); /* nothing ran for nothing */
    assert_true(r.busy_s == 0);
}

static void test_counter_errors(void **state)
{
    (void)state;
    /* the 5th reading fails */
    struct sim s = gpu(2.7e-3, 0.1, 0.01);
    s.read_fail_at = 5;
    struct tf_energy_plan p = plan(0.1, s.launch_s);
    struct tf_energy_ops ops = ops_of(&s);
    struct tf_energy_result r;
    struct tf_error err = {0};
    assert_int_equal(tf_energy_measure(&p, &ops, &r, &err), TF_STATUS_OK);
    assert_int_equal(r.status, TF_ENERGY_COUNTER_ERROR);
    assert_non_null(strstr(r.why, "NVML error 15 (simulated)"));
    assert_true(isnan(r.joules));
    assert_true(r.busy_s > 0); /* what ran is still device time */

    /* the first reading fails: nothing runs */
    s = gpu(2.7e-3, 0.1, 0.01);
    s.read_fail_at = 1;
    ops = ops_of(&s);
    assert_int_equal(tf_energy_measure(&p, &ops, &r, &err), TF_STATUS_OK);
    assert_int_equal(r.status, TF_ENERGY_COUNTER_ERROR);
    assert_int_equal(s.launches, 0);

    /* a counter that goes backwards (a driver reload): an error, not a negative energy */
    s = gpu(2.7e-3, 0.02, 0.01);
    s.backwards_at = 0.05;
    ops = ops_of(&s);
    assert_int_equal(tf_energy_measure(&p, &ops, &r, &err), TF_STATUS_OK);
    assert_int_equal(r.status, TF_ENERGY_COUNTER_ERROR);
    assert_non_null(strstr(r.why, "went backwards"));
}

/* A counter that never moves (a board that reports a constant), or moves
 * once: no window, said so, in the time allowed and not longer. */
static void test_counter_stuck(void **state)
{
    (void)state;
    struct sim s = gpu(2.7e-3, 0, 0);
    struct tf_energy_plan p = plan(0.1, s.launch_s);
    struct tf_energy_ops ops = ops_of(&s);
    struct tf_energy_result r;
    struct tf_error err = {0};
    assert_int_equal(tf_energy_measure(&p, &ops, &r, &err), TF_STATUS_OK);
    assert_int_equal(r.status, TF_ENERGY_NO_WINDOW);
    assert_true(isnan(r.joules));
    assert_int_equal(r.updates, 0);
    assert_non_null(strstr(r.why, "moved 0 times"));
    assert_true(s.t <= p.limit_s + s.launch_s + 1e-9); /* stopped at the limit */
    assert_true(fabs(r.busy_s - s.launches * s.launch_s) < 1e-9);

    /* one update only (a period longer than the time allowed) */
    s = gpu(2.7e-3, 5.0, 0.2);
    ops = ops_of(&s);
    assert_int_equal(tf_energy_measure(&p, &ops, &r, &err), TF_STATUS_OK);
    assert_int_equal(r.status, TF_ENERGY_NO_WINDOW);
    assert_int_equal(r.updates, 1);
    assert_non_null(strstr(r.why, "moved 1 time over"));
}

/* Launches so long that min_batches of them cannot fit the time allowed:
 * no window, and none is run (it would only burn the deadline). */
static void test_slow_launches(void **state)
{
    (void)state;
    struct sim s = gpu(0.3, 0.1, 0.01);
    struct tf_energy_plan p = plan(0.1, s.launch_s); /* 10 x 0.3 s > 0.7 s allowed */
    struct tf_energy_ops ops = ops_of(&s);
    struct tf_energy_result r;
    struct tf_error err = {0};
    assert_int_equal(tf_energy_measure(&p, &ops, &r, &err), TF_STATUS_OK);
    assert_int_equal(r.status, TF_ENERGY_NO_WINDOW);
    assert_non_null(strstr(r.why, "does not fit"));
    assert_int_equal(s.launches, 0);
    /* with the time for it, a slow kernel is measured (10 launches of 50 ms) */
    s = gpu(0.05, 0.1, 0.01);
    p = plan(0.1, s.launch_s);
    p.limit_s = 3;
    expect_within(&s, &p, 0.01);
}

/* A launch that fails in the window is the configuration's failure. */
static void test_launch_fails_in_window(void **state)
{
    (void)state;
    for (int queued = 0; queued <= 1; queued++) {
        struct sim s = gpu(2.7e-3, 0.1, 0.01);
        s.queued = queued;
        s.fail_at = 7;
        struct tf_energy_plan p = plan(0.1, s.launch_s);
        struct tf_energy_ops ops = ops_of(&s);
        struct tf_energy_result r;
        struct tf_error err = {0};
        assert_int_equal(tf_energy_measure(&p, &ops, &r, &err), TF_STATUS_RUNTIME_ERROR);
        assert_string_equal(err.message, "illegal address (simulated)");
        assert_true(isnan(r.joules));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_slow_counter),
        cmocka_unit_test(test_gpu_slow_reading),
        cmocka_unit_test(test_host_fast_counter),
        cmocka_unit_test(test_counter_moving_every_reading),
        cmocka_unit_test(test_no_counter),
        cmocka_unit_test(test_counter_errors),
        cmocka_unit_test(test_counter_stuck),
        cmocka_unit_test(test_slow_launches),
        cmocka_unit_test(test_launch_fails_in_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
