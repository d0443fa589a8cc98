/* gpu_fixture.h - a GPU runner on a real device for the backends' unit tests
 * (test_cuda.c, test_hip.c): the job loaded, its reference compiled, a compile
 * pool and a runner of the backend started; measure() compiles and times one
 * configuration as a worker does. Tests that need a device call have_device()
 * first, which prints "skipped: no device (why)" once where there is none.
 * compile_library() compiles every CUDA-language kernel of the library for an
 * architecture, no device needed.
 * Include after cmocka.h and the worker headers. */
#ifndef TF_TEST_GPU_FIXTURE_H
#define TF_TEST_GPU_FIXTURE_H

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tree.h"

#define MAX_SAMPLED 8 /* sampled configurations per kernel, besides the default */

struct device_fixture {
    const struct tf_backend *be;
    char cache[64];
    struct tf_device dev;
    struct tf_bundle *bundle;
    struct tf_job *job;
    const struct tf_kernel *k;
    uint32_t problem;
    struct tf_compile_pool *pool;
    char reference[4096];
    struct tf_runner *runner;
};

static int have_device(const struct tf_backend *be)
{
    static int said;
    struct tf_error err = {0};
    if (be->probe(&err) == 0)
        return 1;
    if (!said++)
        printf("skipped: no device (%s)\n", err.message);
    return 0;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* The default and a seeded sample of valid configurations of every CUDA-language
 * kernel of the library on `dev`, each compiled for `arch` by `compile`, which
 * must return `expect` (the target the test reads back from the binary). */
static void compile_library(const struct tf_device *dev, const char *arch, int expect,
                            int (*compile)(const struct tf_kernel *, uint64_t, const char *))
{
    glob_t g;
    assert_int_equal(glob("kernels/*/kernel.yaml", 0, NULL, &g), 0);
    int cuda_kernels = 0, saw_vecadd = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct tf_error err = {0};
        struct tf_bundle *b = tf_bundle_create();
        struct tf_kernel *k = tf_kernel_load(g.gl_pathv[i], b, &err);
        if (k == NULL)
            tf_error_print(&err, g.gl_pathv[i], stderr);
        assert_non_null(k); /* every library kernel loads */
        if (strcmp(k->language, "cuda") != 0) {
            tf_kernel_destroy(k);
            tf_bundle_destroy(b);
            continue;
        }
        cuda_kernels++;
        saw_vecadd |= strcmp(k->name, "vecadd_cuda") == 0;
        uint64_t configs[MAX_SAMPLED + 1];
        int n = 0;
        /* problem 0's default: the space sampled below is problem 0's */
        const bool has_default = tf_kernel_default_for(k, 0, &configs[0]);
        n += has_default;
        /* seeded: the same variants every run, so a failure reproduces */
        struct tf_space *s = tf_space_create(k, 0, dev, &err);
        assert_non_null(s);
        const uint64_t total = tf_space_cartesian(s);
        uint64_t seed = 20261121;
        for (int tries = 0; tries < 64 && n < MAX_SAMPLED + (has_default ? 1 : 0); tries++) {
            uint64_t next;
            const uint64_t from = splitmix(&seed) % total;
            int found = tf_space_next(s, from, total, &next, &err);
            if (found == 0)
                found = tf_space_next(s, 0, from, &next, &err); /* wrap around */
            assert_true(found >= 0);
            if (found == 0)
                break; /* no valid configuration on this device at all */
            int dup = 0;
            for (int j = 0; j < n; j++)
                dup |= configs[j] == next;
            if (!dup)
                configs[n++] = next;
        }
        tf_space_destroy(s);
        for (int j = 0; j < n; j++)
            assert_int_equal(compile(k, configs[j], arch), expect);
        printf("note: %s: %d configuration(s) compiled for %s\n", k->name, n, arch);
        tf_kernel_destroy(k);
        tf_bundle_destroy(b);
    }
    globfree(&g);
    assert_true(cuda_kernels >= 1);
    assert_true(saw_vecadd);
}

/* Load `job_path`, compile its first kernel's reference, start a runner of
 * backend `be` on its device 0. */
static struct device_fixture *device_start(const struct tf_backend *be, const char *job_path)
{
    struct device_fixture *f = calloc(1, sizeof *f);
    struct tf_error err = {0};
    f->be = be;
    snprintf(f->cache, sizeof f->cache, "/tmp/tf-test-%s-XXXXXX", be->name);
    assert_non_null(mkdtemp(f->cache));
    assert_int_equal(be->describe(0, &f->dev, &err), 0);
    f->bundle = tf_bundle_create();
    f->job = tf_job_load(job_path, f->bundle, &err);
    if (f->job == NULL)
        tf_error_print(&err, be->name, stderr);
    assert_non_null(f->job);
    f->k = f->job->kernels[0].kernel;
    f->problem = (uint32_t)f->job->kernels[0].problems[0];
    f->pool = tf_compile_pool_create(NULL, be, f->dev.arch, f->cache, 2, &err);
    if (f->pool == NULL ||
        tf_compile_reference(f->pool, f->k, f->reference, sizeof f->reference, &err) != 0)
        tf_error_print(&err, be->name, stderr);
    assert_non_null(f->pool);
    assert_true(f->reference[0] != '\0');
    if (tf_runner_start("/proc/self/exe", f->bundle, be->name, 0, &f->runner, &err) != 0)
        tf_error_print(&err, be->name, stderr);
    assert_non_null(f->runner);
    return f;
}

static void device_stop(struct device_fixture *f)
{
    tf_runner_destroy(f->runner);
    /* every runner child was reaped */
    const int leftover = waitpid(-1, NULL, WNOHANG);
    const int wait_errno = errno;
    tf_compile_pool_destroy(f->pool);
    tf_job_destroy(f->job);
    tf_bundle_destroy(f->bundle);
    remove_tree(f->cache);
    free(f);
    assert_int_equal(leftover, -1);
    assert_int_equal(wait_errno, ECHILD);
}

/* Compile (pool) and measure `config` like a worker does. */
static void measure(struct device_fixture *f, uint32_t problem, uint64_t config,
                    struct tf_result *out)
{
    struct tf_compiled c;
    struct tf_error err = {0};
    tf_compile_wait(f->pool, tf_compile_submit(f->pool, f->k, config), &c);
    if (c.status != TF_STATUS_OK)
        fprintf(stderr, "config %llu does not compile: %s\n", (unsigned long long)config,
                c.message);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_int_equal(tf_runner_measure(f->runner, 0, problem, 0, config, c.binary_path,
                                       f->reference, out, &err),
                     0);
    assert_int_equal(out->config, config);
}

static void expect_ok(struct device_fixture *f, uint32_t problem, uint64_t config)
{
    struct tf_result r;
    measure(f, problem, config, &r);
    if (r.status != TF_STATUS_OK)
        fprintf(stderr, "config %llu: %s: %s\n", (unsigned long long)config,
                tf_status_name(r.status), r.message);
    assert_int_equal(r.status, TF_STATUS_OK);
    assert_true(r.samples >= (uint32_t)f->job->measure.min_samples);
    assert_true(r.time_median > 0.0 && r.time_median < 1.0);
    assert_true(r.time_min <= r.time_median);
    /* resources come from the loaded CUBIN */
    assert_true(r.registers > 0 && r.registers <= 255);
    assert_true(r.shared_bytes >= 0);
    assert_true(r.spill_bytes >= 0);
}

#endif
