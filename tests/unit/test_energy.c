/* test_energy.c - the energy window (worker/energy.c) against simulated devices:
 * a device that draws a known power while it runs launches of a known length,
 * and a counter that shows the energy only as of its last update (every
 * `period` seconds, from some phase), as NVML's does. The window must find a
 * launch's energy within the bound it promises (about one batch against
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

/* A simulated device and its host, each with its own clock. The host starts
 * batches (`gap` seconds of its time each: its turn between batches), reads
 * the counter (`read_s` each) and waits for batches; the device runs the
 * queued batches in order, back to back, from when each was started, and
 * idles at `idle_w` when it has none. The device's clock never passes the
 * host's except while the host waits for it. Not queued (a host kernel),
 * a batch runs inside `start`. */
struct sim {
    double launch_s;   /* one launch */
    double power_w;    /* while launching */
    double idle_w;     /* while idle */
    double gap;        /* host seconds per batch started (enqueueing, its wake-up) */
    double period;     /* the counter's update period; 0: it never moves */
    double phase;      /* its first update, seconds after the start */
    int queued;
    double t;          /* device time now */
    double h;          /* host time now (>= t) */
    double energy;     /* true energy so far, J */
    double read_s;     /* host seconds a reading of the counter takes */
    double first_read_s; /* > 0: the first reading takes this instead (a cached answer) */
    double idle_s;     /* device seconds idle so far */
    struct {           /* batches started and not finished, oldest first */
        int n;         /* launches */
        int left;      /* of them not run yet */
        double ready;  /* host time it was started */
        int status;    /* TF_STATUS_RUNTIME_ERROR once a launch of it failed */
    } batch[2];
    int nbatches;
    int in_launch;      /* a launch is running */
    double into_launch; /* device seconds into it */
    int fault;          /* a launch failed: the device runs nothing more */
    int launches;      /* launches begun */
    int most_queued;   /* the most batches started and not finished at once */
    double sync_s;     /* not queued: the device seconds of the batch start ran */
    int fail_at;       /* a launch number that fails (1-based; 0 never) */
    int read_fail_at;  /* a reading that fails (1-based; 0 never) */
    int start_fail_at; /* a start that fails before queueing (1-based; 0 never): the
                          device drops every batch queued, as gpu_backend's enqueue does */
    int starts;
    int reads;
    int no_counter;
    double backwards_at; /* device time after which the counter drops by 1 kJ; 0 never */
    /* the counter's last update: when, and the true energy then */
    double last_update_t, last_update_e;
};

/* Advance the device `dt` seconds at `w` watts, noting every counter update passed. */
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

/* Run the device until time `until`, or (oldest) until its oldest batch is done. */
static void device_run(struct sim *s, double until, int oldest)
{
    for (;;) {
        if (oldest && (s->nbatches == 0 || s->batch[0].left == 0))
            return;
        int i = 0;
        while (i < s->nbatches && s->batch[i].left == 0)
            i++;
        if (s->fault || i == s->nbatches || s->batch[i].ready > s->t) {
            /* nothing to run (yet): idle until the next batch is started */
            double to = i < s->nbatches && !s->fault ? s->batch[i].ready : until;
            if (!oldest && to > until)
                to = until;
            if (to <= s->t) {
                if (oldest) /* the oldest batch can never finish: a broken device */
                    fail_msg("simulator: waiting for a batch that cannot run");
                return;
            }
            s->idle_s += to - s->t;
            advance(s, to - s->t, s->idle_w);
            continue;
        }
        if (!s->in_launch) { /* a launch begins */
            s->in_launch = 1;
            s->launches++;
            if (s->fail_at && s->launches == s->fail_at) {
                s->fault = 1; /* sticky, like an illegal address */
                s->in_launch = 0;
                for (int j = i; j < s->nbatches; j++) {
                    s->batch[j].status = TF_STATUS_RUNTIME_ERROR;
                    s->batch[j].left = 0;
                }
                continue;
            }
        }
        double dt = s->launch_s - s->into_launch;
        if (!oldest && s->t + dt > until)
            dt = until - s->t;
        if (dt <= 0)
            return;
        advance(s, dt, s->power_w);
        s->into_launch += dt;
        if (s->into_launch >= s->launch_s - 1e-15) {
            s->into_launch = 0;
            s->in_launch = 0;
            s->batch[i].left--;
        }
    }
}

/* The host spends `dt` seconds; the device runs meanwhile. */
static void host_spend(struct sim *s, double dt)
{
    s->h += dt;
    device_run(s, s->h, 0);
}

/* Wait for the oldest batch: its launches' device seconds, its status. */
static int sim_wait_oldest(struct sim *s, double *seconds, struct tf_error *err)
{
    const int n = s->batch[0].n;
    device_run(s, 0, 1);
    if (s->t > s->h)
        s->h = s->t; /* the host waited for the device */
    const int status = s->batch[0].status;
    s->batch[0] = s->batch[1];
    s->nbatches--;
    *seconds = n * s->launch_s;
    if (status != TF_STATUS_OK) {
        s->nbatches = 0; /* the device lost the later batch with this one */
        tf_error_set(err, TF_ERR_BACKEND, "illegal address (simulated)");
    }
    return status;
}

static int sim_start(void *ctx, int n, struct tf_error *err)
{
    struct sim *s = ctx;
    if (s->nbatches == 2)
        fail_msg("a third batch started before the first finished");
    host_spend(s, s->gap);
    if (s->start_fail_at && ++s->starts == s->start_fail_at) {
        device_run(s, 0, 1); /* the stream drained */
        s->nbatches = 0;
        tf_error_set(err, TF_ERR_BACKEND, "event creation: out of memory (simulated)");
        return TF_STATUS_RUNTIME_ERROR;
    }
    s->batch[s->nbatches].n = s->batch[s->nbatches].left = n;
    s->batch[s->nbatches].ready = s->h;
    s->batch[s->nbatches].status = TF_STATUS_OK;
    s->nbatches++;
    if (s->nbatches > s->most_queued)
        s->most_queued = s->nbatches;
    if (s->queued)
        return TF_STATUS_OK;
    /* not queued: the launches run now (a failure is start's), finish only answers */
    return sim_wait_oldest(s, &s->sync_s, err);
}

static int sim_finish(void *ctx, double *seconds, struct tf_error *err)
{
    struct sim *s = ctx;
    if (!s->queued) {
        *seconds = s->sync_s;
        return TF_STATUS_OK;
    }
    if (s->nbatches == 0)
        fail_msg("finish with no batch started");
    return sim_wait_oldest(s, seconds, err);
}

static int sim_read(void *ctx, double *joules, struct tf_error *err)
{
    struct sim *s = ctx;
    s->reads++;
    if (s->no_counter)
        return tf_error_set(err, TF_ERR_BACKEND, "no NVML (simulated)"), 1;
    if (s->read_fail_at && s->reads == s->read_fail_at)
        return tf_error_set(err, TF_ERR_BACKEND, "NVML error 15 (simulated)");
    /* the counter as the reading begins; the device runs while it takes */
    *joules = s->last_update_t < 0 ? 0 : s->last_update_e;
    if (s->backwards_at > 0 && s->t > s->backwards_at)
        *joules -= 1000;
    host_spend(s, s->reads == 1 && s->first_read_s > 0 ? s->first_read_s : s->read_s);
    return 0;
}

static double sim_now(void *ctx)
{
    const struct sim *s = ctx;
    return s->h;
}

static struct sim gpu(double launch_s, double period, double phase)
{
    return (struct sim){.launch_s = launch_s, .power_w = 400, .idle_w = 80, .gap = 5e-6,
                        .period = period, .phase = phase, .queued = 1, .last_update_t = -1};
}

static int in_flight(const struct sim *s)
{
    return s->queued ? 2 : 1;
}

/* The window of `p` on the simulated device `s`: tf_energy_measure's status. */
static int sim_measure(struct sim *s, const struct tf_energy_plan *p, struct tf_energy_result *r,
                       struct tf_error *err)
{
    const struct tf_energy_ops ops = {sim_start, sim_finish, sim_read, sim_now, s, s->queued};
    return tf_energy_measure(p, &ops, r, err);
}

static struct tf_energy_plan plan(double window, double launch_s)
{
    return (struct tf_energy_plan){.window = window, .launch_s = launch_s, .batch_s = 0.005,
                                   .min_batches = 10, .limit_s = 2 * window + 0.5};
}

/* Measured, and within the promised bound of the truth: the energy between two
 * updates is the counter's, the launches between them are off by about one
 * batch at each end, of min_batches batches or more. `idle` is the share of
 * each batch's time the device waits for the host, whose energy the launches
 * carry (the window keeps the device busy so that it is small). */
static void expect_within(struct sim *s, const struct tf_energy_plan *p, double idle_share)
{
    struct tf_energy_result r;
    struct tf_error err = {0};
    assert_int_equal(sim_measure(s, p, &r, &err), TF_STATUS_OK);
    if (r.status != TF_ENERGY_MEASURED)
        fail_msg("not measured: %s (%s)", tf_energy_status_name(r.status), r.why);
    const double truth = s->power_w * s->launch_s;
    const double bound = 1.0 / p->min_batches + idle_share + 1e-9;
    if (!(fabs(r.joules - truth) <= bound * truth))
        fail_msg("%.6g J a launch, truth %.6g J: off by %.2f%% (bound %.2f%%)", r.joules, truth,
                 100 * fabs(r.joules / truth - 1), 100 * bound);
    assert_true(r.window_s >= p->window);
    assert_true(r.launches >=
                (uint64_t)p->min_batches * (uint64_t)tf_energy_batch(p, s->read_s, in_flight(s)));
    assert_true(r.updates >= 2);
    /* every launch the window ran is device time (the duty cycle's numerator),
     * and it ran all it started: no batch is left on the device */
    assert_true(fabs(r.busy_s - s->launches * s->launch_s) < 1e-9);
    assert_int_equal(s->nbatches, 0);
    assert_int_equal(s->most_queued, in_flight(s));
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
        assert_int_equal(tf_energy_batch(&p, 0, 2), 1);
        expect_within(&s, &p, 0.01);
    }
    /* 20 ms updates, 40 us launches: batches of 5 ms / 40 us launches */
    struct sim s = gpu(40e-6, 0.02, 0.007);
    struct tf_energy_plan p = plan(0.1, s.launch_s);
    assert_in_range(tf_energy_batch(&p, 0, 2), 124, 125);
    expect_within(&s, &p, 0.01);
    /* launches shorter than 5 ms / 256: the batch is capped at TF_MAX_BATCH */
    s = gpu(1e-6, 0.02, 0.001);
    p = plan(0.1, s.launch_s);
    assert_int_equal(tf_energy_batch(&p, 0, 2), TF_MAX_BATCH);
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
    assert_int_equal(tf_energy_batch(&p, s.read_s, 2), 2); /* 6 ms against 5 ms */
    assert_int_equal(tf_energy_batch(&p, s.read_s, 1), 3); /* one at a time: 9 ms */
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
    assert_int_equal(tf_energy_batch(&p, s.first_read_s, 2), 1);
    expect_within(&s, &p, 0.01);
    const double slow_once = s.read_s - s.launch_s;
    if (!(s.idle_s - s.first_read_s <= (double)s.reads * s.gap + slow_once + 1e-9))
        fail_msg("the device idled %.3f ms beyond the first reading (%d readings)",
                 1e3 * (s.idle_s - s.first_read_s), s.reads);
    /* 0.7 s allowed, 10 batches: at most 35 ms a batch, 11 launches */
    assert_int_equal(tf_energy_batch(&p, 0.1, 2), 11);
    /* a fast reading changes nothing */
    assert_int_equal(tf_energy_batch(&p, 1e-4, 2), 1);
}

/* The default job's short kernels on a node whose every CPU compiles: the
 * host's turn between batches takes a millisecond (waking up, collecting,
 * enqueueing), NVML's reading another. With one batch queued at a time the
 * device waited out every turn (38 ms of a 412 ms window on an H100); with
 * two, it runs the second batch meanwhile and idles only before the first.
 * The energy stays within the bound, whatever the counter's phase. */
static void test_gpu_busy_host(void **state)
{
    (void)state;
    const double gaps[] = {0.2e-3, 1e-3, 2.5e-3};
    const double phases[] = {0.0004, 0.031, 0.077};
    for (int g = 0; g < 3; g++)
        for (int i = 0; i < 3; i++) {
            struct sim s = gpu(70e-6, 0.1, phases[i]);
            s.gap = gaps[g];
            s.read_s = 1e-3;
            struct tf_energy_plan p = plan(0.4, s.launch_s);
            expect_within(&s, &p, 0.01);
            /* idle: the first reading and the first turn, before any launch */
            const double before = s.read_s + s.gap;
            if (!(s.idle_s <= before + 1e-9))
                fail_msg("turns of %.1f ms: the device idled %.3f ms of %.3f ms, %.3f ms "
                         "beyond the first reading and turn",
                         1e3 * s.gap, 1e3 * s.idle_s, 1e3 * s.t, 1e3 * (s.idle_s - before));
        }
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
    struct tf_energy_result r;
    struct tf_error err = {0};
    assert_int_equal(sim_measure(&s, &p, &r, &err), TF_STATUS_OK);
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
    struct tf_energy_result r;
    struct tf_error err = {0};
    assert_int_equal(sim_measure(&s, &p, &r, &err), TF_STATUS_OK);
    assert_int_equal(r.status, TF_ENERGY_COUNTER_ERROR);
    assert_non_null(strstr(r.why, "NVML error 15 (simulated)"));
    assert_true(isnan(r.joules));
    assert_true(r.busy_s > 0); /* what ran is still device time */
    /* the batch still queued was waited for, and counted */
    assert_int_equal(s.nbatches, 0);
    assert_true(fabs(r.busy_s - s.launches * s.launch_s) < 1e-9);

    /* the first reading fails: nothing runs */
    s = gpu(2.7e-3, 0.1, 0.01);
    s.read_fail_at = 1;
    assert_int_equal(sim_measure(&s, &p, &r, &err), TF_STATUS_OK);
    assert_int_equal(r.status, TF_ENERGY_COUNTER_ERROR);
    assert_int_equal(s.launches, 0);

    /* a counter that goes backwards (a driver reload): an error, not a negative energy */
    s = gpu(2.7e-3, 0.02, 0.01);
    s.backwards_at = 0.05;
    assert_int_equal(sim_measure(&s, &p, &r, &err), TF_STATUS_OK);
    assert_int_equal(r.status, TF_ENERGY_COUNTER_ERROR);
    assert_non_null(strstr(r.why, "went backwards"));
    assert_int_equal(s.nbatches, 0);
    assert_true(fabs(r.busy_s - s.launches * s.launch_s) < 1e-9);
}

/* A counter that never moves (a board that reports a constant), or moves
 * once: no window, said so, in the time allowed and not longer. */
static void test_counter_stuck(void **state)
{
    (void)state;
    struct sim s = gpu(2.7e-3, 0, 0);
    struct tf_energy_plan p = plan(0.1, s.launch_s);
    struct tf_energy_result r;
    struct tf_error err = {0};
    assert_int_equal(sim_measure(&s, &p, &r, &err), TF_STATUS_OK);
    assert_int_equal(r.status, TF_ENERGY_NO_WINDOW);
    assert_true(isnan(r.joules));
    assert_int_equal(r.updates, 0);
    assert_non_null(strstr(r.why, "moved 0 times"));
    /* stopped at the limit, where two batches (of one launch) may be queued */
    assert_int_equal(tf_energy_batch(&p, s.read_s, 2), 1);
    assert_true(s.t <= p.limit_s + 2 * s.launch_s + 1e-9);
    assert_true(fabs(r.busy_s - s.launches * s.launch_s) < 1e-9);
    assert_int_equal(s.nbatches, 0);

    /* one update only (a period longer than the time allowed) */
    s = gpu(2.7e-3, 5.0, 0.2);
    assert_int_equal(sim_measure(&s, &p, &r, &err), TF_STATUS_OK);
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
    struct tf_energy_result r;
    struct tf_error err = {0};
    assert_int_equal(sim_measure(&s, &p, &r, &err), TF_STATUS_OK);
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
        struct tf_energy_result r;
        struct tf_error err = {0};
        assert_int_equal(sim_measure(&s, &p, &r, &err), TF_STATUS_RUNTIME_ERROR);
        assert_string_equal(err.message, "illegal address (simulated)");
        assert_true(isnan(r.joules));
        assert_int_equal(s.nbatches, 0);
    }
    /* queueing fails with a batch queued (the 6th start): the device dropped
     * both, and the window neither waits for nor counts the lost one */
    struct sim s = gpu(2.7e-3, 0.1, 0.01);
    s.start_fail_at = 6;
    struct tf_energy_plan p = plan(0.1, s.launch_s);
    struct tf_energy_result r;
    struct tf_error err = {0};
    assert_int_equal(sim_measure(&s, &p, &r, &err), TF_STATUS_RUNTIME_ERROR);
    assert_non_null(strstr(err.message, "event creation"));
    assert_int_equal(s.starts, 6);
    assert_int_equal(s.nbatches, 0);
    assert_true(isnan(r.joules));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_slow_counter),
        cmocka_unit_test(test_gpu_slow_reading),
        cmocka_unit_test(test_gpu_busy_host),
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
