/* test_runner.c - the runner process against the fault fixture.
 *
 * This executable is its own runner: main() hands `__runner` to
 * tf_runner_main, and the tests spawn /proc/self/exe. Every MODE of
 * tests/fixtures/faulty is compiled with the real compiler and measured in a
 * real child process; after each fault a correct configuration must still
 * measure ok (the runner was restarted). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../schema/bundle.h"
#include "../../schema/job.h"
#include "../../schema/status.h"
#include "../../worker/backend.h"
#include "../../worker/compile.h"
#include "../../worker/runner.h"
#include "tree.h"

struct fixture {
    char cache[64];
    struct tf_bundle *bundle;
    struct tf_job *job;
    const struct tf_kernel *k;
    uint32_t problem;
    struct tf_compile_pool *pool;
    char reference[4096];
    struct tf_runner *runner;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct tf_error err = {0};
    strcpy(f->cache, "/tmp/tf-test-runner-XXXXXX");
    if (mkdtemp(f->cache) == NULL)
        return -1;
    f->bundle = tf_bundle_create();
    f->job = tf_job_load("tests/fixtures/faulty.yaml", f->bundle, &err);
    if (f->job == NULL) {
        tf_error_print(&err, "test_runner", stderr);
        return -1;
    }
    f->k = f->job->kernels[0].kernel;
    f->problem = (uint32_t)f->job->kernels[0].problems[0];
    struct tf_device dev;
    if (tf_backend_host.describe(0, &dev, &err) != 0)
        return -1;
    f->pool = tf_compile_pool_create(NULL, &tf_backend_host, dev.arch, f->cache, 2, &err);
    if (f->pool == NULL ||
        tf_compile_reference(f->pool, f->k, f->reference, sizeof f->reference, &err) != 0) {
        tf_error_print(&err, "test_runner", stderr);
        return -1;
    }
    if (tf_runner_start("/proc/self/exe", f->bundle, "host", 0, &f->runner, &err) != 0) {
        tf_error_print(&err, "test_runner", stderr);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    tf_runner_destroy(f->runner);
    /* every child was reaped: none is left to wait for */
    int leftover = waitpid(-1, NULL, WNOHANG);
    const int wait_errno = errno;
    tf_compile_pool_destroy(f->pool);
    tf_job_destroy(f->job);
    tf_bundle_destroy(f->bundle);
    remove_tree(f->cache);
    free(f);
    if (leftover != -1 || wait_errno != ECHILD) {
        fprintf(stderr, "a runner child was left behind (waitpid: %d)\n", leftover);
        return -1;
    }
    return 0;
}

/* Configuration of MODE index `mode`, WIDTH index `width`. */
static uint64_t config_of(const struct tf_kernel *k, int mode, int width)
{
    int digits[2] = {mode, width};
    return tf_kernel_encode(k, digits);
}

/* Compile and measure like a worker does: compile errors never reach the runner. */
static void run_config(struct fixture *f, uint64_t config, struct tf_result *out)
{
    struct tf_compiled c;
    struct tf_error err = {0};
    tf_compile_wait(f->pool, tf_compile_submit(f->pool, f->k, config), &c);
    if (c.status != TF_STATUS_OK) {
        tf_result_init(out, 0, f->problem, config, c.status);
        tf_strlcpy(out->message, c.message, sizeof out->message);
        return;
    }
    assert_int_equal(tf_runner_measure(f->runner, 0, f->problem, 0, config, c.binary_path,
                                       f->reference, out, &err),
                     0);
    assert_int_equal(out->config, config);
}

static void expect_ok(struct fixture *f, uint64_t config)
{
    struct tf_result r;
    run_config(f, config, &r);
    if (r.status != TF_STATUS_OK)
        fprintf(stderr, "config %llu: %s: %s\n", (unsigned long long)config,
                tf_status_name(r.status), r.message);
    assert_int_equal(r.status, TF_STATUS_OK);
    assert_true(r.samples >= (uint32_t)f->job->measure.min_samples);
    assert_true(r.time_median > 0.0 && r.time_min <= r.time_median);
    assert_true(r.time_mean > 0.0 && r.time_rsd >= 0.0);
    assert_string_equal(r.message, "");
    assert_true(r.timestamp > 1.6e9);
}

static void test_mode0_ok(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(f->job->measure.min_samples, 3);
    for (int w = 0; w < 3; w++)
        expect_ok(f, config_of(f->k, 0, w));
    assert_true(tf_runner_device_seconds(f->runner) > 0.0);
    assert_int_equal(tf_runner_starts(f->runner), 1);
}

static void test_mode1_compile_error(void **state)
{
    struct fixture *f = *state;
    struct tf_result r;
    run_config(f, config_of(f->k, 1, 0), &r);
    assert_int_equal(r.status, TF_STATUS_COMPILE_ERROR);
    assert_non_null(strstr(r.message, "deliberate compile error"));
    assert_non_null(strstr(r.message, "faulty.c:"));
    expect_ok(f, config_of(f->k, 0, 1));
}

static void test_mode2_crashed(void **state)
{
    struct fixture *f = *state;
    struct tf_result r;
    const int starts = tf_runner_starts(f->runner);
    run_config(f, config_of(f->k, 2, 0), &r);
    assert_int_equal(r.status, TF_STATUS_CRASHED);
    assert_non_null(strstr(r.message, "runner killed by signal 11"));
    assert_true(isnan(r.time_median));
    expect_ok(f, config_of(f->k, 0, 2));
    assert_int_equal(tf_runner_starts(f->runner), starts + 1);
}

static void test_mode3_timeout(void **state)
{
    struct fixture *f = *state;
    struct tf_result r;
    const int starts = tf_runner_starts(f->runner);
    const double t0 = now();
    run_config(f, config_of(f->k, 3, 1), &r);
    const double took = now() - t0;
    assert_int_equal(r.status, TF_STATUS_TIMEOUT);
    assert_non_null(strstr(r.message, "runner killed"));
    /* the deadline is the job's timeout (2 s), not more, not much less */
    assert_true(took >= 1.9 && took < 6.0);
    expect_ok(f, config_of(f->k, 0, 0));
    assert_int_equal(tf_runner_starts(f->runner), starts + 1);
}

static void test_mode4_wrong_result(void **state)
{
    struct fixture *f = *state;
    struct tf_result r;
    run_config(f, config_of(f->k, 4, 2), &r);
    assert_int_equal(r.status, TF_STATUS_WRONG_RESULT);
    assert_non_null(strstr(r.message, "y[7] = "));
    assert_true(isnan(r.time_median));
    expect_ok(f, config_of(f->k, 0, 1));
}

static void test_mode5_nan(void **state)
{
    struct fixture *f = *state;
    struct tf_result r;
    const int starts = tf_runner_starts(f->runner);
    run_config(f, config_of(f->k, 5, 0), &r);
    assert_int_equal(r.status, TF_STATUS_WRONG_RESULT);
    assert_non_null(strstr(r.message, "y[0] = "));
    assert_non_null(strstr(r.message, "nan")); /* x86 prints 0/0 as -nan */
    assert_non_null(strstr(r.message, "(1024 of 1024 wrong)"));
    expect_ok(f, config_of(f->k, 0, 0));
    /* a wrong result is data, not a fault: the runner lives on */
    assert_int_equal(tf_runner_starts(f->runner), starts);
}

/* All modes in a row, the way a brute-force slice reaches a worker. */
static void test_every_config(void **state)
{
    struct fixture *f = *state;
    static const int expected[6] = {TF_STATUS_OK,      TF_STATUS_COMPILE_ERROR,
                                    TF_STATUS_CRASHED, TF_STATUS_TIMEOUT,
                                    TF_STATUS_WRONG_RESULT, TF_STATUS_WRONG_RESULT};
    for (int mode = 0; mode < 6; mode++) {
        /* one WIDTH for the slow timeout mode keeps the test short */
        for (int w = 0; w < (mode == 3 ? 1 : 3); w++) {
            struct tf_result r;
            run_config(f, config_of(f->k, mode, w), &r);
            if (r.status != expected[mode])
                fprintf(stderr, "MODE %d WIDTH#%d: %s: %s\n", mode, w, tf_status_name(r.status),
                        r.message);
            assert_int_equal(r.status, expected[mode]);
        }
    }
    expect_ok(f, config_of(f->k, 0, 0));
}

/* A binary that is not there is a launch_error, and the runner survives it. */
static void test_launch_error(void **state)
{
    struct fixture *f = *state;
    struct tf_result r;
    struct tf_error err = {0};
    const int starts = tf_runner_starts(f->runner);
    assert_int_equal(tf_runner_measure(f->runner, 0, f->problem, 0, config_of(f->k, 0, 0),
                                       "/nonexistent/variant.so", f->reference, &r, &err),
                     0);
    assert_int_equal(r.status, TF_STATUS_LAUNCH_ERROR);
    assert_non_null(strstr(r.message, "dlopen"));
    /* a reference that cannot be loaded fails the setup, not the runner */
    assert_int_equal(tf_runner_measure(f->runner, 0, f->problem, 0, config_of(f->k, 0, 0),
                                       "/nonexistent/variant.so", "/nonexistent/ref.so", &r,
                                       &err),
                     0);
    assert_int_equal(r.status, TF_STATUS_LAUNCH_ERROR);
    assert_non_null(strstr(r.message, "reference"));
    expect_ok(f, config_of(f->k, 0, 0));
    assert_int_equal(tf_runner_starts(f->runner), starts);
}

static void test_start_failures(void **state)
{
    struct fixture *f = *state;
    struct tf_runner *r = NULL;
    struct tf_error err = {0};
    assert_int_not_equal(tf_runner_start("/nonexistent/tunefarm", f->bundle, "host", 0, &r, &err),
                         0);
    assert_null(r);
    assert_non_null(strstr(err.message, "/nonexistent/tunefarm"));
    assert_int_not_equal(tf_runner_start("/proc/self/exe", f->bundle, "nosuch", 0, &r, &err), 0);
    assert_non_null(strstr(err.message, "nosuch"));
    assert_int_not_equal(tf_runner_start("/proc/self/exe", f->bundle, "host", 3, &r, &err), 0);
    assert_non_null(strstr(err.message, "one device"));
    tf_runner_destroy(NULL);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "__runner") == 0)
        return tf_runner_main(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mode0_ok),
        cmocka_unit_test(test_mode1_compile_error),
        cmocka_unit_test(test_mode2_crashed),
        cmocka_unit_test(test_mode3_timeout),
        cmocka_unit_test(test_mode4_wrong_result),
        cmocka_unit_test(test_mode5_nan),
        cmocka_unit_test(test_launch_error),
        cmocka_unit_test(test_start_failures),
        cmocka_unit_test(test_every_config),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
