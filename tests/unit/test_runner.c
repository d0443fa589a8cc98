/* test_runner.c - the runner process against the fault fixture.
 *
 * This executable is its own runner: main() hands `__runner` to
 * tf_runner_main, and the tests spawn /proc/self/exe. Every MODE of
 * tests/fixtures/faulty is compiled with the real compiler and measured in a
 * real child process; after each fault a correct configuration must still
 * measure ok (the runner was restarted). A second group does the same with the
 * hostile variants of tests/fixtures/runner_hostile (writes past and before a
 * buffer, chdir(), forked children, scripted times, a stop in the middle),
 * compiled into a cache given by a relative path (the runner is the child of
 * the shield the test spawns: strays() does not count it). A third checks scalar
 * arguments per configuration (tests/fixtures/followup_scalar), a fourth
 * inputs filled in ranges of their own (tests/fixtures/init_range). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* The job `path`'s first kernel and problem, compiled into a fresh cache, a runner started. */
static int setup_job(void **state, const char *path)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct tf_error err = {0};
    strcpy(f->cache, "/tmp/tf-test-runner-XXXXXX");
    if (mkdtemp(f->cache) == NULL)
        return -1;
    f->bundle = tf_bundle_create();
    f->job = tf_job_load(path, f->bundle, &err);
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

static int setup(void **state) { return setup_job(state, "tests/fixtures/faulty.yaml"); }

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
    tf_compile_wait(f->pool, tf_compile_submit_for(f->pool, f->k, (int)f->problem, config), &c);
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

/* Compile `config` (it must compile) and send it to the runner. */
static void send_config(struct fixture *f, uint64_t config)
{
    struct tf_compiled c;
    struct tf_result r;
    struct tf_error err = {0};
    tf_compile_wait(f->pool, tf_compile_submit_for(f->pool, f->k, (int)f->problem, config), &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_int_equal(tf_runner_send(f->runner, 0, f->problem, 0, config, c.binary_path,
                                     f->reference, &r, &err),
                     0);
}

/* Collect the oldest answer: it must be `config`'s, with `status`. */
static void collect_expect(struct fixture *f, uint64_t config, int status)
{
    struct tf_result r;
    struct tf_error err = {0};
    assert_int_equal(tf_runner_collect(f->runner, &r, &err), 0);
    if (r.config != config || r.status != status)
        fail_msg("collected configuration %llu %s (%s), expected %llu %s",
                 (unsigned long long)r.config, tf_status_name(r.status), r.message,
                 (unsigned long long)config, tf_status_name(status));
    if (status == TF_STATUS_OK)
        assert_true(r.samples >= (uint32_t)f->job->measure.min_samples && r.time_median > 0);
}

/* Two requests in flight (runner.c): the second waits in the runner's socket
 * and is answered after the first, in order. A fault of the first (crash,
 * timeout) is the first's alone: the second, whose frame died with that
 * runner, is sent again to a new one and measured ok; a wrong result keeps
 * the runner, and the second is measured by it. */
static void test_two_in_flight(void **state)
{
    struct fixture *f = *state;
    const uint64_t ok0 = config_of(f->k, 0, 0), ok1 = config_of(f->k, 0, 1),
                   ok2 = config_of(f->k, 0, 2), crash = config_of(f->k, 2, 0),
                   hang = config_of(f->k, 3, 1), wrong = config_of(f->k, 4, 2);
    const int starts = tf_runner_starts(f->runner);
    assert_int_equal(tf_runner_pending(f->runner), 0);
    send_config(f, ok0);
    /* behind it: the same problem and reference only */
    assert_false(tf_runner_can_send(f->runner, 0, f->problem, "/nonexistent/ref.so"));
    assert_true(tf_runner_can_send(f->runner, 0, f->problem, f->reference));
    send_config(f, crash);
    assert_int_equal(tf_runner_pending(f->runner), 2);
    assert_false(tf_runner_can_send(f->runner, 0, f->problem, f->reference)); /* two at most */
    collect_expect(f, ok0, TF_STATUS_OK);
    send_config(f, ok1); /* behind the crash */
    collect_expect(f, crash, TF_STATUS_CRASHED);
    collect_expect(f, ok1, TF_STATUS_OK);
    assert_int_equal(tf_runner_starts(f->runner), starts + 1);
    /* a hang: the one behind it is not charged for it, nor for its timeout */
    send_config(f, hang);
    send_config(f, ok2);
    const double t0 = now();
    collect_expect(f, hang, TF_STATUS_TIMEOUT);
    assert_true(now() - t0 >= 1.9);
    collect_expect(f, ok2, TF_STATUS_OK);
    assert_int_equal(tf_runner_starts(f->runner), starts + 2);
    /* a wrong result is data: the same runner measures the one behind it */
    send_config(f, wrong);
    send_config(f, ok0);
    collect_expect(f, wrong, TF_STATUS_WRONG_RESULT);
    collect_expect(f, ok0, TF_STATUS_OK);
    assert_int_equal(tf_runner_starts(f->runner), starts + 2);
    assert_int_equal(tf_runner_pending(f->runner), 0);
    /* sent and never collected: destroying the runner does not wait for them */
    send_config(f, hang);
    send_config(f, ok1);
    const double t1 = now();
    tf_runner_destroy(f->runner);
    assert_true(now() - t1 < 1.5);
    struct tf_error err = {0};
    assert_int_equal(tf_runner_start("/proc/self/exe", f->bundle, "host", 0, &f->runner, &err), 0);
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

/* ---- the hostile fixture ------------------------------------------------- */

static int hostile_cwd = -1; /* the folder the tests started in */
static char hostile_mark[64]; /* TF_TEST_HOSTILE=<our pid>: in every descendant's environment */
static char hostile_reference_log[128]; /* TF_TEST_REFERENCE_LOG: a line per reference run */

static int setup_hostile(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct tf_error err = {0};
    f->bundle = tf_bundle_create();
    f->job = tf_job_load("tests/fixtures/runner_hostile/job.yaml", f->bundle, &err);
    if (f->job == NULL) {
        tf_error_print(&err, "test_runner", stderr);
        return -1;
    }
    f->k = f->job->kernels[0].kernel;
    f->problem = (uint32_t)f->job->kernels[0].problems[0];
    /* A relative cache, as `cache: relcache` gives: binaries are relative paths. */
    hostile_cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (hostile_cwd < 0 || chdir("/tmp") != 0)
        return -1;
    strcpy(f->cache, "tf-test-hostile-XXXXXX");
    if (mkdtemp(f->cache) == NULL)
        return -1;
    snprintf(hostile_mark, sizeof hostile_mark, "%ld", (long)getpid());
    setenv("TF_TEST_HOSTILE", hostile_mark, 1);
    /* every run of the reference (in any runner) appends a line there */
    snprintf(hostile_reference_log, sizeof hostile_reference_log, "/tmp/%s/reference.log",
             f->cache);
    setenv("TF_TEST_REFERENCE_LOG", hostile_reference_log, 1);
    struct tf_device dev;
    if (tf_backend_host.describe(0, &dev, &err) != 0)
        return -1;
    f->pool = tf_compile_pool_create(NULL, &tf_backend_host, dev.arch, f->cache, 2, &err);
    if (f->pool == NULL ||
        tf_compile_reference(f->pool, f->k, f->reference, sizeof f->reference, &err) != 0 ||
        tf_runner_start("/proc/self/exe", f->bundle, "host", 0, &f->runner, &err) != 0) {
        tf_error_print(&err, "test_runner", stderr);
        return -1;
    }
    assert_true(f->reference[0] != '/'); /* the point of the relative cache */
    *state = f;
    return 0;
}

static int teardown_hostile(void **state)
{
    struct fixture *f = *state;
    const int rc = teardown(state);
    if (hostile_cwd >= 0) {
        if (fchdir(hostile_cwd) != 0)
            return -1;
        close(hostile_cwd);
    }
    (void)f;
    return rc;
}

static uint64_t hostile_config(const struct tf_kernel *k, int mode)
{
    int digits[2] = {0, mode};
    return tf_kernel_encode(k, digits);
}

/* The parent of process `pid` (0 if it cannot be read). */
static pid_t parent_of(long pid)
{
    char path[64], stat[512] = "";
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return 0;
    if (fgets(stat, sizeof stat, f) == NULL)
        stat[0] = '\0';
    fclose(f);
    const char *paren = strrchr(stat, ')');
    long ppid = 0;
    return paren && sscanf(paren + 1, " %*c %ld", &ppid) == 1 ? (pid_t)ppid : 0;
}

/* Processes other than us, `runner` (the shield the worker spawned) and the
 * shield's child (the runner proper) with our mark in their environment:
 * what a variant forked and left behind. */
static int strays(pid_t runner)
{
    char want[96];
    snprintf(want, sizeof want, "TF_TEST_HOSTILE=%s", hostile_mark);
    DIR *d = opendir("/proc");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        const long pid = strtol(e->d_name, NULL, 10);
        if (pid <= 0 || pid == (long)getpid() || pid == (long)runner ||
            (runner > 0 && parent_of(pid) == runner))
            continue;
        char path[64], env[65536];
        snprintf(path, sizeof path, "/proc/%ld/environ", pid);
        FILE *fp = fopen(path, "re");
        if (fp == NULL)
            continue;
        const size_t len = fread(env, 1, sizeof env - 1, fp);
        fclose(fp);
        for (size_t at = 0; at < len; at += strlen(env + at) + 1) {
            env[len] = '\0';
            if (strcmp(env + at, want) == 0) {
                /* a zombie still has an entry, but nothing runs: not a stray */
                char stat[512] = "";
                snprintf(path, sizeof path, "/proc/%ld/stat", pid);
                FILE *sf = fopen(path, "re");
                if (sf) {
                    if (fgets(stat, sizeof stat, sf) == NULL)
                        stat[0] = '\0';
                    fclose(sf);
                }
                const char *paren = strrchr(stat, ')');
                if (paren == NULL || paren[2] != 'Z')
                    n++;
                break;
            }
        }
    }
    if (d)
        closedir(d);
    return n;
}

/* strays(), given up to 2 s for killed processes to be gone. */
static int strays_settled(pid_t runner)
{
    int n = strays(runner);
    for (int i = 0; i < 200 && n > 0; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        n = strays(runner);
    }
    return n;
}

/* Writes past (16, 1, 4 floats) and before a buffer: that variant's
 * runtime_error naming the buffer, and the next configurations are ok (before
 * the fix they became wrong_result: the overflow reached the reference's copy). */
static void test_overflow_is_the_variants_failure(void **state)
{
    struct fixture *f = *state;
    static const struct {
        int mode;
        const char *says;
    } cases[] = {
        {1, "y: wrote past its end (byte 1 after its 4000 bytes changed"},
        {2, "y: wrote past its end (byte 1 after its 4000 bytes changed"},
        {3, "y: wrote past its end (byte 1 after its 4000 bytes changed"},
        {4, "y: wrote before its start (byte 1 before it changed"},
        {5, "y: wrote past its end (a fault"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct tf_result r;
        const int starts = tf_runner_starts(f->runner);
        run_config(f, hostile_config(f->k, cases[i].mode), &r);
        if (r.status != TF_STATUS_RUNTIME_ERROR || !strstr(r.message, cases[i].says))
            fprintf(stderr, "MODE %d: %s: %s\n", cases[i].mode, tf_status_name(r.status),
                    r.message);
        assert_int_equal(r.status, TF_STATUS_RUNTIME_ERROR);
        assert_non_null(strstr(r.message, cases[i].says));
        assert_true(isnan(r.time_median));
        /* every innocent variant after it is ok, in a fresh runner */
        for (int again = 0; again < 2; again++)
            expect_ok(f, hostile_config(f->k, again ? 7 : 0));
        assert_int_equal(tf_runner_starts(f->runner), starts + 1);
    }
    /* the guard page is behind the runaway loop's fault */
    struct tf_result r;
    run_config(f, hostile_config(f->k, 5), &r);
    assert_non_null(strstr(r.message, "in the guard page"));
}

/* A runaway store on a thread the variant started (MODE 14) faults in y's
 * guard page on that thread: the runner cannot unwind it to its own stack
 * (review 2026-11-25, H3: it used to siglongjmp there, running the runner on
 * the variant thread's stack - the status came out right by luck, and the
 * runner then saw its own state "changed"), so the runner dies of the fault:
 * crashed, signal 11, and the configurations after it are ok in a fresh one. */
static void test_guard_fault_on_a_variants_thread(void **state)
{
    struct fixture *f = *state;
    expect_ok(f, hostile_config(f->k, 0));
    for (int round = 0; round < 2; round++) {
        const int starts = tf_runner_starts(f->runner);
        struct tf_result r;
        run_config(f, hostile_config(f->k, 14), &r);
        if (r.status != TF_STATUS_CRASHED || !strstr(r.message, "signal 11"))
            fprintf(stderr, "MODE 14: %s: %s\n", tf_status_name(r.status), r.message);
        assert_int_equal(r.status, TF_STATUS_CRASHED);
        assert_non_null(strstr(r.message, "signal 11"));
        for (int again = 0; again < 3; again++)
            expect_ok(f, hostile_config(f->k, again == 1 ? 7 : 0));
        assert_int_equal(tf_runner_starts(f->runner), starts + 1);
    }
}

/* A runaway read past the input x (MODE 15) is reported as a read, not as a
 * write (review 2026-11-25, M8: it said "x: wrote past its end"). */
static void test_read_past_an_input(void **state)
{
    struct fixture *f = *state;
    struct tf_result r;
    run_config(f, hostile_config(f->k, 15), &r);
    if (r.status != TF_STATUS_RUNTIME_ERROR || !strstr(r.message, "x: read past its end (a fault"))
        fprintf(stderr, "MODE 15: %s: %s\n", tf_status_name(r.status), r.message);
    assert_int_equal(r.status, TF_STATUS_RUNTIME_ERROR);
    assert_non_null(strstr(r.message, "x: read past its end (a fault"));
    assert_non_null(strstr(r.message, "in the guard page"));
    expect_ok(f, hostile_config(f->k, 0));
}

/* Lines in the reference's log: how often it ran so far. */
static int reference_runs(void)
{
    FILE *fp = fopen(hostile_reference_log, "re");
    int n = 0;
    for (int ch; fp && (ch = fgetc(fp)) != EOF;)
        n += ch == '\n';
    if (fp)
        fclose(fp);
    return n;
}

/* A runner replaced after a damaging variant gets the reference's outputs
 * from the worker (the first runner's sealed memfd) instead of computing the
 * reference again (review 2026-11-25, M9: every restart ran it once more), and
 * verifies against them (the innocent variants are ok only if those outputs
 * are a * x: the poison or zeros would be wrong_result). Another problem runs
 * its own reference once; coming back to the first computes that one again
 * (the worker keeps only the current problem's). */
static void test_restart_keeps_the_reference(void **state)
{
    struct fixture *f = *state;
    expect_ok(f, hostile_config(f->k, 0));
    const int runs = reference_runs(), starts = tf_runner_starts(f->runner);
    assert_true(runs >= 1);
    for (int round = 0; round < 3; round++) {
        struct tf_result r;
        run_config(f, hostile_config(f->k, 2), &r); /* one float past y: the runner restarts */
        assert_int_equal(r.status, TF_STATUS_RUNTIME_ERROR);
        expect_ok(f, hostile_config(f->k, 0));
        run_config(f, hostile_config(f->k, 6), &r); /* a restart needs no chdir() */
        assert_int_equal(r.status, TF_STATUS_OK);
    }
    assert_int_equal(tf_runner_starts(f->runner), starts + 3);
    if (reference_runs() != runs)
        fprintf(stderr, "the reference ran %d times for 3 restarts\n", reference_runs() - runs);
    assert_int_equal(reference_runs(), runs);
    struct tf_result r;
    /* another problem: its reference runs; back: the first one's again */
    int digits[2] = {0, 12};
    const uint64_t slow_config = tf_kernel_encode(f->k, digits);
    struct tf_compiled c;
    struct tf_error err = {0};
    tf_compile_wait(f->pool, tf_compile_submit(f->pool, f->k, slow_config), &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_int_equal(tf_runner_prepare(f->runner, 0, 1 /* slow */, slow_config, f->reference,
                                       &r, &err),
                     0);
    assert_int_equal(r.status, TF_STATUS_OK);
    assert_int_equal(reference_runs(), runs + 1);
    /* back and forth: the runner kept both problems set up (runner_child.c,
     * "problems kept set up"), so neither reference runs again */
    for (int round = 0; round < 3; round++) {
        expect_ok(f, hostile_config(f->k, 0));
        assert_int_equal(tf_runner_prepare(f->runner, 0, 1, slow_config, f->reference, &r, &err),
                         0);
        assert_int_equal(r.status, TF_STATUS_OK);
    }
    assert_int_equal(reference_runs(), runs + 1);
    assert_int_equal(tf_runner_starts(f->runner), starts + 3);
    /* a restart loses what the runner kept, not the outputs its worker kept
     * of both problems: neither reference runs again */
    run_config(f, hostile_config(f->k, 2), &r);
    assert_int_equal(r.status, TF_STATUS_RUNTIME_ERROR);
    expect_ok(f, hostile_config(f->k, 0));
    assert_int_equal(tf_runner_starts(f->runner), starts + 4);
    assert_int_equal(tf_runner_prepare(f->runner, 0, 1, slow_config, f->reference, &r, &err), 0);
    assert_int_equal(r.status, TF_STATUS_OK);
    expect_ok(f, hostile_config(f->k, 0));
    assert_int_equal(reference_runs(), runs + 1);
}

/* A problem whose buffers do not fit the runner's memory (4 GB each; the
 * runner is started with 1 GiB of address space) is that configuration's
 * runtime_error saying so (review 2026-11-25, L15: the runner died in
 * tf_die, SIGABRT, crashed "internal error"), and the runner goes on with a
 * problem that fits. */
static void test_out_of_memory_is_runtime_error(void **state)
{
    struct fixture *f = *state;
#ifdef __SANITIZE_ADDRESS__
    skip(); /* ASan's shadow memory alone needs more address space than 1 GiB */
#endif
    struct tf_error err = {0};
    struct tf_runner *small = NULL;
    struct rlimit as, low;
    assert_int_equal(getrlimit(RLIMIT_AS, &as), 0);
    low = as;
    low.rlim_cur = (rlim_t)1 << 30;
    assert_int_equal(setrlimit(RLIMIT_AS, &low), 0); /* inherited by the runner only: */
    const int started = tf_runner_start("/proc/self/exe", f->bundle, "host", 0, &small, &err);
    assert_int_equal(setrlimit(RLIMIT_AS, &as), 0); /* put back at once */
    if (started != 0)
        fail_msg("runner with 1 GiB: %s", err.message);
    struct tf_compiled c;
    struct tf_result r;
    const uint64_t config = hostile_config(f->k, 0);
    tf_compile_wait(f->pool, tf_compile_submit(f->pool, f->k, config), &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    const int starts = tf_runner_starts(small);
    assert_int_equal(tf_runner_measure(small, 0, 3 /* huge */, 0, config, c.binary_path,
                                       f->reference, &r, &err),
                     0);
    if (r.status != TF_STATUS_RUNTIME_ERROR || !strstr(r.message, "no host memory"))
        fprintf(stderr, "huge: %s: %s\n", tf_status_name(r.status), r.message);
    assert_int_equal(r.status, TF_STATUS_RUNTIME_ERROR);
    assert_non_null(strstr(r.message, "buffer 'x': no host memory"));
    assert_int_equal(tf_runner_measure(small, 0, f->problem, 0, config, c.binary_path,
                                       f->reference, &r, &err),
                     0);
    assert_int_equal(r.status, TF_STATUS_OK);
    assert_int_equal(tf_runner_starts(small), starts); /* the same runner */
    tf_runner_destroy(small);
}

/* A variant that chdir()s: it is ok, and so is every variant after it that
 * needs the runner's folder (MODE 7) or its binary found by path (MODE 8). */
static void test_chdir_changes_nothing(void **state)
{
    struct fixture *f = *state;
    expect_ok(f, hostile_config(f->k, 0)); /* a runner ended by the last test restarts here */
    const int starts = tf_runner_starts(f->runner);
    for (int rep = 0; rep < 2; rep++) {
        expect_ok(f, hostile_config(f->k, 6));
        expect_ok(f, hostile_config(f->k, 7));
        expect_ok(f, hostile_config(f->k, 0));
    }
    assert_int_equal(tf_runner_starts(f->runner), starts);
}

/* Binaries from a relative cache are loaded by absolute path. */
static void test_binaries_loaded_by_absolute_path(void **state)
{
    struct fixture *f = *state;
    expect_ok(f, hostile_config(f->k, 8));
}

/* A variant that forks a sleeping child at every launch, directly or through
 * setsid() and a grandchild: ok, quickly, and nothing it started outlives it. */
static void test_forked_children_end_with_the_variant(void **state)
{
    struct fixture *f = *state;
    for (int mode = 9; mode <= 10; mode++) {
        const double t0 = now();
        expect_ok(f, hostile_config(f->k, mode));
        assert_true(now() - t0 < 20.0);
        const int left = strays_settled(tf_runner_pid(f->runner));
        if (left)
            fprintf(stderr, "MODE %d left %d processes running\n", mode, left);
        assert_int_equal(left, 0);
        expect_ok(f, hostile_config(f->k, 0));
    }
}

/* A variant that forks a sleeping child and then hangs: timeout, and the
 * child ends with the runner the worker killed (the runner's process group). */
static void test_hang_with_a_child(void **state)
{
    struct fixture *f = *state;
    int digits[2] = {0, 13};
    const uint64_t config = tf_kernel_encode(f->k, digits);
    struct tf_compiled c;
    struct tf_error err = {0};
    struct tf_result r;
    tf_compile_wait(f->pool, tf_compile_submit(f->pool, f->k, config), &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_int_equal(tf_runner_measure(f->runner, 0, 2 /* hang */, 0, config, c.binary_path,
                                       f->reference, &r, &err),
                     0);
    assert_int_equal(r.status, TF_STATUS_TIMEOUT);
    assert_int_equal(strays_settled(-1), 0);
    expect_ok(f, hostile_config(f->k, 0));
}

/* Samples of 20, 100 and 40 ms (MODE 11, long enough that a busy machine's
 * preemptions of a few ms do not blur them): the result's median is the middle one,
 * its min the smallest. A busy machine can only make a sample longer, so the
 * bounds are one-sided with room, and a disturbed attempt is measured again. */
static void test_median_and_min_reach_the_result(void **state)
{
    struct fixture *f = *state;
    struct tf_result r;
    int good = 0;
    for (int attempt = 0; attempt < 3 && !good; attempt++) {
        run_config(f, hostile_config(f->k, 11), &r);
        assert_int_equal(r.status, TF_STATUS_OK);
        assert_int_equal(r.samples, 3);
        good = r.time_min >= 0.019 && r.time_min < 0.035 && r.time_median >= 0.039 &&
               r.time_median < 0.095 && r.time_mean > r.time_median;
        if (!good)
            fprintf(stderr, "attempt %d: min %g median %g mean %g\n", attempt, r.time_min,
                    r.time_median, r.time_mean);
    }
    assert_true(good);
}

/* The hostile kernel's `slow` configuration (1 s of a 2 s timeout), compiled
 * into *c, its problem set up in the runner (so that a stop falls on the
 * measurement); returns the configuration. */
static uint64_t slow_config_ready(struct fixture *f, struct tf_compiled *c)
{
    int digits[2] = {0, 12};
    const uint64_t config = tf_kernel_encode(f->k, digits);
    struct tf_error err = {0};
    struct tf_result r;
    tf_compile_wait(f->pool, tf_compile_submit(f->pool, f->k, config), c);
    assert_int_equal(c->status, TF_STATUS_OK);
    assert_int_equal(tf_runner_prepare(f->runner, 0, 1 /* slow */, config, f->reference, &r, &err),
                     0);
    assert_int_equal(r.status, TF_STATUS_OK);
    return config;
}

/* A process that, `after_ms` from now, stops the test (the worker) and the
 * runner's group for 3 s, then continues both; its pid (waitpid it). */
static pid_t stop_both_later(struct fixture *f, long after_ms)
{
    const pid_t runner = tf_runner_pid(f->runner), me = getpid();
    const pid_t stopper = fork();
    assert_true(stopper >= 0);
    if (stopper == 0) {
        struct timespec at = {after_ms / 1000, after_ms % 1000 * 1000 * 1000}, stop = {3, 0};
        nanosleep(&at, NULL);
        kill(-runner, SIGSTOP);
        kill(me, SIGSTOP);
        nanosleep(&stop, NULL);
        kill(-runner, SIGCONT);
        kill(me, SIGCONT);
        _exit(0);
    }
    return stopper;
}

/* The stopped configuration's result: ok, and the stop really fell on it. */
static void expect_ok_through_stop(pid_t stopper, const struct tf_result *r, double took)
{
    int st;
    assert_int_equal(waitpid(stopper, &st, 0), stopper);
    if (r->status != TF_STATUS_OK)
        fprintf(stderr, "stopped configuration: %s: %s\n", tf_status_name(r->status), r->message);
    assert_int_equal(r->status, TF_STATUS_OK);
    assert_true(took > 3.0);
}

/* Stop the test (the worker) and the runner for 3 s in the middle of a
 * configuration that needs 1 s of a 2 s timeout (a suspended job): once
 * continued it is ok, not a timeout - its deadline counts running time. */
static void test_stopped_and_continued(void **state)
{
    struct fixture *f = *state;
    struct tf_compiled c;
    struct tf_error err = {0};
    struct tf_result r;
    const uint64_t config = slow_config_ready(f, &c);
    const pid_t stopper = stop_both_later(f, 400);
    const double t0 = now();
    assert_int_equal(tf_runner_measure(f->runner, 0, 1, 0, config, c.binary_path, f->reference,
                                       &r, &err),
                     0);
    expect_ok_through_stop(stopper, &r, now() - t0);
    /* (a sample the stop fell in is long: measuring through a stop is the
     * suspender's business, the status is ours) */
    assert_true(r.samples >= 1 && r.time_min >= 0.19);
}

/* The same stop, but while the configuration waits in the runner and the
 * worker is busy elsewhere, not waiting for its answer (tf_runner_send, then
 * other work, then tf_runner_collect): a 3 s stop of both, beside a 2 s
 * timeout, is still nobody's timeout. */
static void test_stopped_between_send_and_collect(void **state)
{
    struct fixture *f = *state;
    struct tf_compiled c;
    struct tf_error err = {0};
    struct tf_result r;
    const uint64_t config = slow_config_ready(f, &c);
    assert_int_equal(tf_runner_send(f->runner, 0, 1, 0, config, c.binary_path, f->reference, &r,
                                     &err),
                     0);
    const pid_t stopper = stop_both_later(f, 200);
    const double t0 = now();
    struct timespec busy = {0, 500 * 1000 * 1000}; /* the worker's other work */
    while (nanosleep(&busy, &busy) != 0 && errno == EINTR)
        ;
    assert_int_equal(tf_runner_collect(f->runner, &r, &err), 0);
    expect_ok_through_stop(stopper, &r, now() - t0);
}

/* ---- scalars checked per configuration (issue 11 item 12) ---------------- */

static int setup_scalar(void **state)
{
    return setup_job(state, "tests/fixtures/followup_scalar.yaml");
}

static uint64_t block_config(const struct tf_kernel *k, int64_t block)
{
    for (int d = 0; d < k->params[0].count; d++)
        if (k->params[0].ints[d] == block)
            return tf_kernel_encode(k, &d);
    fail_msg("no BLOCK %lld in the fixture", (long long)block);
    return 0;
}

/* One BLOCK of a per-configuration check: the message an invalid result
 * must hold, or NULL for an ok one. */
struct block_case {
    int64_t block;
    const char *says;
};

/* Run each BLOCK of `order` in turn on one runner: each `says` one is
 * invalid, its message holding `what` and that text, and has no time; each
 * other is ok. */
static void run_block_cases(struct fixture *f, const char *what, const struct block_case *order,
                            size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const uint64_t config = block_config(f->k, order[i].block);
        if (order[i].says == NULL) {
            expect_ok(f, config);
            continue;
        }
        struct tf_result r;
        run_config(f, config, &r);
        if (r.status != TF_STATUS_INVALID || !strstr(r.message, what) ||
            !strstr(r.message, order[i].says) || !isnan(r.time_median))
            fail_msg("BLOCK %lld: %s: '%s', expected invalid: '%s' ... '%s'",
                     (long long)order[i].block, tf_status_name(r.status), r.message, what,
                     order[i].says);
    }
}

/* The int32 `total` = N * BLOCK past 2^31 (BLOCK 3000000: 3072000000, BLOCK
 * 4194304: 2^32) makes that configuration invalid, saying why, whether it is
 * the first the runner sees (checked while its buffers and reference are set
 * up) or a later one (checked before its launch); the configurations after
 * each are ok. Unchecked, both reached the variant wrapped: wrong_result. */
static void test_scalar_out_of_range_is_that_configs_failure(void **state)
{
    static const struct block_case order[] = {
        {3000000, "3072000000 is outside int32's range -2147483648..2147483647"},
        {1, NULL},
        {4194304, "4294967296 is outside int32's range -2147483648..2147483647"},
        {2, NULL},
        {4, NULL},
    };
    run_block_cases(*state, "argument 'total' (int32 scalar = N * BLOCK)", order,
                    sizeof order / sizeof order[0]);
}

/* A buffer size that reads a parameter is checked per configuration: one
 * past int64's range (a float: converted anyway, undefined behaviour, it read
 * "-9223372036854775808 elements") and a negative one make that
 * configuration invalid, saying the size as it is; the others are ok. */
static int setup_sizes(void **state)
{
    return setup_job(state, "tests/fixtures/followup_sizes.yaml");
}

static void test_size_out_of_range_is_that_configs_failure(void **state)
{
    static const struct block_case order[] = {
        {3000000, "3.072e+24 elements, beyond the device's memory"},
        {1, NULL},
        {2, "-5 elements: a size must be >= 0"},
        {4, NULL},
    };
    run_block_cases(*state, "size of 'pad' is ", order, sizeof order / sizeof order[0]);
}

/* ---- a reference that depends on parameters (issue 14 item 2) ------------ */

static char heat_reference_log[128]; /* TF_TEST_REFERENCE_LOG of the heat reference */

static int setup_heat(void **state)
{
    snprintf(heat_reference_log, sizeof heat_reference_log, "/tmp/tf-test-heat-%ld.log",
             (long)getpid());
    unlink(heat_reference_log);
    setenv("TF_TEST_REFERENCE_LOG", heat_reference_log, 1);
    return setup_job(state, "tests/fixtures/heat_runner.yaml");
}

/* 20 values of STEPS (tests/fixtures/heat_many). */
static int setup_heat_many(void **state)
{
    snprintf(heat_reference_log, sizeof heat_reference_log, "/tmp/tf-test-heat-%ld.log",
             (long)getpid());
    unlink(heat_reference_log);
    setenv("TF_TEST_REFERENCE_LOG", heat_reference_log, 1);
    return setup_job(state, "tests/fixtures/heat_many.yaml");
}

/* The same, with every run of the reference 1.5 s long (in the runner's environment). */
static int setup_heat_slow(void **state)
{
    setenv("TF_TEST_REFERENCE_SLEEP_MS", "1500", 1);
    return setup_heat(state);
}

static int teardown_heat(void **state)
{
    unsetenv("TF_TEST_REFERENCE_LOG");
    unsetenv("TF_TEST_REFERENCE_SLEEP_MS");
    unlink(heat_reference_log);
    return teardown(state);
}

/* The reference's runs so far, for STEPS `steps` (0: any). */
static int heat_runs(int steps)
{
    FILE *fp = fopen(heat_reference_log, "re");
    int n = 0;
    long long nx, s;
    while (fp && fscanf(fp, "%lld %lld", &nx, &s) == 2)
        n += steps == 0 || s == steps;
    if (fp)
        fclose(fp);
    return n;
}

/* Configuration BLOCK index `block`, STEPS index `steps` of the heat kernel. */
static uint64_t heat_config(const struct tf_kernel *k, int block, int steps)
{
    int digits[3] = {block, steps, 0};
    return tf_kernel_encode(k, digits);
}

/* STEPS changes from one configuration to the next, back and forth: every
 * one is ok (its output checked against the reference of its own STEPS:
 * against another's it is wrong_result), and the reference ran once per
 * value of STEPS, not once per change. A runner killed between two
 * configurations costs the one in flight; the next runner is offered the
 * worker's sets and computes none again. */
static void test_reference_per_depends_on_value(void **state)
{
    struct fixture *f = *state;
    static const int order[][2] = {{0, 0}, {0, 1}, {1, 0}, {0, 2}, {2, 1}, {1, 2}, {2, 0}};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        expect_ok(f, heat_config(f->k, order[i][0], order[i][1]));
    if (heat_runs(0) != 3)
        fprintf(stderr, "the reference ran %d times for 3 values of STEPS\n", heat_runs(0));
    assert_int_equal(heat_runs(1), 1);
    assert_int_equal(heat_runs(2), 1);
    assert_int_equal(heat_runs(4), 1);

    const int starts = tf_runner_starts(f->runner);
    assert_int_equal(kill(-tf_runner_pid(f->runner), SIGKILL), 0);
    struct tf_result r;
    run_config(f, heat_config(f->k, 1, 1), &r);
    assert_int_equal(r.status, TF_STATUS_CRASHED);
    for (int steps = 2; steps >= 0; steps--)
        expect_ok(f, heat_config(f->k, 2, steps));
    assert_int_equal(tf_runner_starts(f->runner), starts + 1);
    assert_int_equal(heat_runs(0), 3);
}

/* More values of STEPS (20) than sets a runner keeps (16): STEPS 1 to 20 runs
 * the reference 20 times, and 20 back to 1 finds the 16 most recent (20 to 5)
 * and computes 4 to 1 again: 24 in all. Every configuration is ok meanwhile,
 * so the set in use is never the one dropped, whatever slot it moved to. */
static void test_sets_beyond_the_bound(void **state)
{
    struct fixture *f = *state;
    for (int s = 0; s < 20; s++)
        expect_ok(f, heat_config(f->k, 0, s));
    assert_int_equal(heat_runs(0), 20);
    for (int s = 19; s >= 0; s--)
        expect_ok(f, heat_config(f->k, 0, s));
    if (heat_runs(0) != 24)
        fprintf(stderr, "the reference ran %d times\n", heat_runs(0));
    assert_int_equal(heat_runs(0), 24);
    assert_int_equal(heat_runs(4), 2);
    assert_int_equal(heat_runs(5), 1);
    assert_int_equal(tf_runner_starts(f->runner), 1);
}

/* A reference that runs in the middle of a MEASURE (a new STEPS) and takes
 * longer than the configuration's timeout (1 s here) does not make that
 * configuration a timeout: the runner says it runs the reference, and the
 * worker waits a SETUP's time for it. */
static void test_slow_reference_is_not_a_timeout(void **state)
{
    struct fixture *f = *state;
    expect_ok(f, heat_config(f->k, 0, 0)); /* (its reference ran in the SETUP) */
    const double t0 = now();
    expect_ok(f, heat_config(f->k, 0, 1));
    assert_true(now() - t0 >= 1.5);
    assert_int_equal(heat_runs(2), 1);
}

/* The heat reference with a wild write for STEPS 2 (its second value). */
static int setup_heat_crash(void **state)
{
    setenv("TF_TEST_REFERENCE_CRASH", "2", 1);
    return setup_heat(state);
}

static int teardown_heat_crash(void **state)
{
    unsetenv("TF_TEST_REFERENCE_CRASH");
    return teardown_heat(state);
}

/* A reference that faults is the kernel file's bug, not the configuration's:
 * launch_error naming the reference, whether it ran in a MEASURE (a new STEPS
 * on a runner set up for another) or in the SETUP of a new runner; not
 * `crashed` with "runner killed by signal 11", which blamed every variant.
 * The configurations whose reference runs stay ok. */
static void test_crashing_reference_is_named(void **state)
{
    struct fixture *f = *state;
    expect_ok(f, heat_config(f->k, 0, 0));
    for (int i = 0; i < 2; i++) { /* a MEASURE's reference, then a SETUP's */
        struct tf_result r;
        run_config(f, heat_config(f->k, 0, 1), &r);
        if (r.status != TF_STATUS_LAUNCH_ERROR)
            fprintf(stderr, "STEPS 2: %s: %s\n", tf_status_name(r.status), r.message);
        assert_int_equal(r.status, TF_STATUS_LAUNCH_ERROR);
        assert_non_null(strstr(r.message, "reference heat_reference() crashed (SIGSEGV)"));
    }
    expect_ok(f, heat_config(f->k, 1, 0));
    expect_ok(f, heat_config(f->k, 0, 2));
}

/* The heat reference exiting for STEPS 1 (its first value). */
static int setup_heat_exit(void **state)
{
    setenv("TF_TEST_REFERENCE_EXIT", "1", 1);
    return setup_heat(state);
}

static int teardown_heat_exit(void **state)
{
    unsetenv("TF_TEST_REFERENCE_EXIT");
    return teardown_heat(state);
}

/* A runner that ends during a SETUP ran no variant: the message says it was
 * the setup (buffers and reference), not just "runner exited with status 3"
 * as if the configuration had. */
static void test_runner_ending_in_setup_says_so(void **state)
{
    struct fixture *f = *state;
    struct tf_result r;
    run_config(f, heat_config(f->k, 0, 0), &r);
    if (r.status != TF_STATUS_CRASHED)
        fprintf(stderr, "STEPS 1: %s: %s\n", tf_status_name(r.status), r.message);
    assert_int_equal(r.status, TF_STATUS_CRASHED);
    assert_string_equal(r.message, "setup (buffers and reference): runner exited with status 3");
    expect_ok(f, heat_config(f->k, 0, 1));
}

/* ---- inputs in their own ranges (issue 14 item 7) ------------------------- */

static int setup_init_range(void **state)
{
    return setup_job(state, "tests/fixtures/init_range.yaml");
}

/* tests/fixtures/init_range checks, in the variant, that every input lies in
 * the range its `init` gives (float32 [324, 325), float64 [-1e-3, 1e-3),
 * int32 [-5, 5), int64 [10^12, 10^12 + 3), float32 default [-1, 1)), that the
 * ints reach both ends (HI excluded) and x spreads over its range; the
 * reference says what a correct fill gives, so a fill outside its range is
 * wrong_result. Twice: the seed is deterministic, a fresh runner fills the same. */
static void test_init_random_range(void **state)
{
    struct fixture *f = *state;
    expect_ok(f, 0);
    expect_ok(f, 0);
    const struct tf_arg *x = &f->k->args[1], *k = &f->k->args[3], *d = &f->k->args[5];
    assert_true(x->init_range);
    assert_true(x->init_lo.is_float == false && x->init_lo.u.i == 324);
    assert_int_equal(k->init_hi.u.i, 5);
    assert_false(d->init_range);
    assert_int_equal(d->init, TF_INIT_RANDOM);
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
        cmocka_unit_test(test_two_in_flight),
    };
    const struct CMUnitTest hostile[] = {
        cmocka_unit_test(test_overflow_is_the_variants_failure),
        cmocka_unit_test(test_guard_fault_on_a_variants_thread),
        cmocka_unit_test(test_read_past_an_input),
        cmocka_unit_test(test_restart_keeps_the_reference),
        cmocka_unit_test(test_out_of_memory_is_runtime_error),
        cmocka_unit_test(test_chdir_changes_nothing),
        cmocka_unit_test(test_binaries_loaded_by_absolute_path),
        cmocka_unit_test(test_forked_children_end_with_the_variant),
        cmocka_unit_test(test_hang_with_a_child),
        cmocka_unit_test(test_median_and_min_reach_the_result),
        cmocka_unit_test(test_stopped_and_continued),
        cmocka_unit_test(test_stopped_between_send_and_collect),
    };
    const struct CMUnitTest scalars[] = {
        cmocka_unit_test(test_scalar_out_of_range_is_that_configs_failure),
    };
    const struct CMUnitTest sizes[] = {
        cmocka_unit_test(test_size_out_of_range_is_that_configs_failure),
    };
    const struct CMUnitTest depends[] = {
        cmocka_unit_test_setup_teardown(test_reference_per_depends_on_value, setup_heat,
                                        teardown_heat),
        cmocka_unit_test_setup_teardown(test_crashing_reference_is_named, setup_heat_crash,
                                        teardown_heat_crash),
        cmocka_unit_test_setup_teardown(test_runner_ending_in_setup_says_so, setup_heat_exit,
                                        teardown_heat_exit),
        cmocka_unit_test_setup_teardown(test_slow_reference_is_not_a_timeout, setup_heat_slow,
                                        teardown_heat),
        cmocka_unit_test_setup_teardown(test_sets_beyond_the_bound, setup_heat_many,
                                        teardown_heat),
    };
    const struct CMUnitTest ranges[] = {
        cmocka_unit_test(test_init_random_range),
    };
    int failed = cmocka_run_group_tests(tests, setup, teardown);
    failed += cmocka_run_group_tests_name("a reference that depends on parameters", depends,
                                          NULL, NULL);
    failed += cmocka_run_group_tests_name("inputs in their own ranges", ranges,
                                          setup_init_range, teardown);
    failed += cmocka_run_group_tests_name("scalars checked per configuration", scalars,
                                          setup_scalar, teardown);
    failed += cmocka_run_group_tests_name("buffer sizes checked per configuration", sizes,
                                          setup_sizes, teardown);
    return failed + cmocka_run_group_tests_name("hostile variants", hostile, setup_hostile,
                                                teardown_hostile);
}
