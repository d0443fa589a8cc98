/* test_loader.c - unit tests of the YAML loaders: bundle, yamldoc, kernel, job.
 *
 * Real files through real libyaml: the shipped gemm kernel and the fixtures in
 * tests/unit/fixtures must load with the expected model; every file in the
 * broken-file table (tests/unit/broken) must fail with the expected
 * file:line:column and message. Defaults: a default that follows the problem
 * sizes resolves per problem, literals behave as before, and a default that
 * gives an unlisted value for some problem is refused naming it. Also: the
 * configuration helpers (mixed-radix
 * round trip, saturation, defines, binding), the sealed-bundle reload that
 * workers do, target matching, and a truncation sweep for crash-freedom.
 * Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../schema/archive.h"
#include "../../schema/bundle.h"
#include "../../schema/defines.h"
#include "../../schema/hash.h"
#include "../../schema/job.h"
#include "../../schema/kernel.h"
#include "../../schema/yamldoc.h"

/* cmocka 1.1.5 has only assert_float_equal, which rounds to float. */
#ifndef assert_double_equal
#define assert_double_equal(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))
#endif

#define FIX "tests/unit/fixtures/"
#define BROKEN "tests/unit/broken/"

static struct tf_kernel *load_kernel(const char *path, struct tf_bundle **bout,
                                     struct tf_error *err)
{
    struct tf_bundle *b = tf_bundle_create();
    tf_error_clear(err);
    struct tf_kernel *k = tf_kernel_load(path, b, err);
    if (k == NULL)
        fprintf(stderr, "unexpected: %s:%d:%d: %s\n", err->file, err->line, err->column,
                err->message);
    *bout = b;
    return k;
}

static int param_index(const struct tf_kernel *k, const char *name)
{
    for (int i = 0; i < k->nparams; i++)
        if (strcmp(k->params[i].name, name) == 0)
            return i;
    return -1;
}

/* ---- the shipped gemm kernel ---------------------------------------------------------- */

static void test_gemm_loads(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_error err;
    struct tf_kernel *k = load_kernel("kernels/gemm/kernel.yaml", &b, &err);
    assert_non_null(k);
    assert_string_equal(k->name, "gemm");
    assert_string_equal(k->language, "c");
    assert_string_equal(k->entry, "gemm");
    assert_string_equal(k->ref_entry, "gemm_reference");
    assert_string_equal(k->source_path, "kernels/gemm/gemm.c");
    assert_string_equal(k->ref_source_path, "kernels/gemm/reference.c");
    assert_non_null(strstr(k->source, "void gemm(void **args)"));
    assert_non_null(strstr(k->ref_source, "gemm_reference"));
    assert_int_equal(k->option_count, 3);
    assert_string_equal(k->options[1], "-march=native");

    static const char *names[] = {"BM", "BN", "BK", "UNROLL", "VEC", "LOOP"};
    static const int counts[] = {5, 5, 5, 3, 4, 2};
    assert_int_equal(k->nparams, 6);
    for (int i = 0; i < 6; i++) {
        assert_string_equal(k->params[i].name, names[i]);
        assert_int_equal(k->params[i].count, counts[i]);
        assert_int_equal(k->params[i].kind, i == 5 ? TF_PARAM_ENUM : TF_PARAM_INT);
    }
    assert_int_equal(k->params[0].ints[4], 128);
    assert_string_equal(k->params[5].strings[1], "kij");
    assert_int_equal(tf_kernel_cartesian(k), 5 * 5 * 5 * 3 * 4 * 2);

    assert_int_equal(k->nsizes, 3);
    assert_string_equal(k->size_names[0], "M");
    assert_string_equal(k->size_names[2], "K");
    assert_int_equal(k->nproblems, 2);
    assert_string_equal(k->problems[1].name, "medium");
    assert_int_equal(k->problems[1].sizes[1], 512);
    assert_int_equal(k->nconstraints, 5);
    assert_int_equal(k->nargs, 6);
    assert_int_equal(k->args[0].kind, TF_ARG_SCALAR);
    assert_int_equal(k->args[0].type, TF_ELEM_I32);
    assert_int_equal(k->args[3].kind, TF_ARG_BUFFER);
    assert_int_equal(k->args[3].init, TF_INIT_RANDOM);
    assert_false(k->args[3].output);
    assert_true(k->args[5].output);
    assert_int_equal(k->args[5].init, TF_INIT_POISON);
    assert_double_equal(k->rtol, 1e-4, 1e-12);
    assert_double_equal(k->atol, 1e-4, 1e-12);
    assert_int_equal(k->nmetrics, 1);
    assert_string_equal(k->metric_names[0], "gflops");
    assert_null(k->grid[0]);
    assert_int_equal(k->nslots, 6 + 3 + TF_DEVPROP_COUNT + 2); /* + time_s, energy_j */
    assert_int_equal(strlen(k->source_hash), 64);

    /* default: {BM: 8, BN: 16, BK: 16, UNROLL: 1, VEC: 1, LOOP: ikj} = first of each list. */
    assert_true(k->has_default);
    int digits[6];
    tf_kernel_decode(k, k->default_index, digits);
    for (int i = 0; i < 6; i++)
        assert_int_equal(digits[i], 0);
    char buf[128];
    tf_kernel_format_config(k, k->default_index, buf, sizeof buf);
    assert_string_equal(buf, "BM=8 BN=16 BK=16 UNROLL=1 VEC=1 LOOP=ikj");

    /* A config away from the default: BM=32 BN=64 BK=16 UNROLL=4 VEC=8 LOOP=kij. */
    int want[6] = {2, 2, 0, 2, 2, 1};
    uint64_t idx = tf_kernel_encode(k, want);
    tf_kernel_format_config(k, idx, buf, sizeof buf);
    assert_string_equal(buf, "BM=32 BN=64 BK=16 UNROLL=4 VEC=8 LOOP=kij");
    char *defs[16];
    int n = tf_kernel_defines(k, idx, defs, 16);
    static const char *expect[] = {"-DBM=32",  "-DBN=64", "-DBK=16",     "-DUNROLL=4",
                                   "-DVEC=8",  "-DLOOP=1", "-DLOOP_kij=1"};
    assert_int_equal(n, 7);
    for (int i = 0; i < n; i++) {
        assert_string_equal(defs[i], expect[i]);
        free(defs[i]);
    }
    /* A short output array is filled, never overrun. */
    n = tf_kernel_defines(k, idx, defs, 3);
    assert_int_equal(n, 3);
    assert_string_equal(defs[2], "-DBK=16");
    for (int i = 0; i < n; i++)
        free(defs[i]);
    /* A tiny format buffer truncates safely. */
    tf_kernel_format_config(k, idx, buf, 8);
    assert_string_equal(buf, "BM=32 B");

    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

static void test_gemm_bind_check_metric(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_error err;
    struct tf_kernel *k = load_kernel("kernels/gemm/kernel.yaml", &b, &err);
    assert_non_null(k);
    struct tf_value *slots = calloc((size_t)k->nslots, sizeof *slots);
    struct tf_device dev;
    memset(&dev, 0, sizeof dev);
    dev.props[TF_DEVPROP_L2_BYTES] = 256 * 1024;
    dev.props[TF_DEVPROP_MAX_SHARED] = 48 * 1024;

    bool valid = false;
    tf_kernel_bind(k, k->default_index, 0, &dev, slots);
    assert_int_equal(slots[0].u.i, 8);
    assert_int_equal(slots[5].u.i, 0); /* enum: the index */
    assert_int_equal(slots[tf_kernel_size_slot(k, 0)].u.i, 256);
    assert_int_equal(slots[tf_kernel_devprop_slot(k, TF_DEVPROP_L2_BYTES)].u.i, 256 * 1024);
    assert_int_equal(tf_kernel_check(k, slots, &valid, &err), 0);
    assert_true(valid);

    /* Same config, no device: max_shared = l2_bytes = 0 fail the cache constraints. */
    tf_kernel_bind(k, k->default_index, 0, NULL, slots);
    assert_int_equal(tf_kernel_check(k, slots, &valid, &err), 0);
    assert_false(valid);

    /* BM=128 BN=256 BK=256: the C block, 128*256*4 = 128 KiB, exceeds 48 KiB. */
    int big[6] = {4, 4, 4, 0, 0, 0};
    tf_kernel_bind(k, tf_kernel_encode(k, big), 0, &dev, slots);
    assert_int_equal(tf_kernel_check(k, slots, &valid, &err), 0);
    assert_false(valid);

    /* gflops = 2 M N K / time_s / 1e9 with M = N = K = 256, time_s = 1 ms. */
    tf_kernel_bind(k, k->default_index, 0, &dev, slots);
    slots[tf_kernel_time_slot(k)] = tf_float(1e-3);
    struct tf_value v;
    assert_int_equal(tf_expr_eval(k->metrics[0], slots, &v, &err), 0);
    assert_double_equal(tf_value_as_double(v), 2.0 * 256 * 256 * 256 / 1e-3 / 1e9, 1e-9);

    free(slots);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* ---- fixtures ------------------------------------------------------------------------- */

static void test_tiny_kernel(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_error err;
    struct tf_kernel *k = load_kernel(FIX "kernels/tiny/kernel.yaml", &b, &err);
    assert_non_null(k);
    /* default {UNROLL: 2, MODE: fused}: digits (1, 1) over radices (4, 2) -> 3. */
    assert_true(k->has_default);
    assert_int_equal(k->default_index, 3);
    assert_int_equal(param_index(k, "MODE"), 1);
    assert_int_equal(k->params[1].kind, TF_PARAM_ENUM);
    assert_int_equal(k->problems[1].sizes[0], 4096); /* N: 2 ** 12, evaluated at load */
    assert_int_equal(k->args[3].init, TF_INIT_ONES);   /* explicit init on an output */
    assert_true(k->args[3].output);
    assert_double_equal(k->rtol, 1e-6, 1e-15);
    assert_double_equal(k->atol, 1e-6, 1e-15); /* default */
    /* The enum constraint: MODE == "fused" || UNROLL <= 4. */
    struct tf_value slots[64];
    bool valid;
    int d[2] = {3, 0}; /* UNROLL=8 MODE=plain */
    tf_kernel_bind(k, tf_kernel_encode(k, d), 0, NULL, slots);
    assert_int_equal(tf_kernel_check(k, slots, &valid, &err), 0);
    assert_false(valid);
    d[1] = 1; /* UNROLL=8 MODE=fused */
    tf_kernel_bind(k, tf_kernel_encode(k, d), 0, NULL, slots);
    assert_int_equal(tf_kernel_check(k, slots, &valid, &err), 0);
    assert_true(valid);
    char *defs[4];
    int n = tf_kernel_defines(k, tf_kernel_encode(k, d), defs, 4);
    assert_int_equal(n, 3);
    assert_string_equal(defs[0], "-DUNROLL=8");
    assert_string_equal(defs[1], "-DMODE=1");
    assert_string_equal(defs[2], "-DMODE_fused=1");
    for (int i = 0; i < n; i++)
        free(defs[i]);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

static void test_tiny_job(void **state)
{
    (void)state;
    setenv("HOME", "/home/tester", 1);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    struct tf_bundle *b = tf_bundle_create();
    struct tf_error err;
    tf_error_clear(&err);
    struct tf_job *job = tf_job_load(FIX "jobs/tiny.yaml", b, &err);
    if (!job)
        fprintf(stderr, "%s:%d:%d: %s\n", err.file, err.line, err.column, err.message);
    assert_non_null(job);
    assert_string_equal(job->name, "tiny_job");
    assert_int_equal(job->nkernels, 1);
    assert_string_equal(job->kernels[0].kernel->name, "tiny");
    /* Found through <jobdir>/../kernels. */
    assert_string_equal(job->kernels[0].kernel->file, FIX "jobs/../kernels/tiny/kernel.yaml");
    assert_int_equal(job->kernels[0].nproblems, 1);
    assert_int_equal(job->kernels[0].problems[0], 1);
    assert_int_equal(job->strategy, TF_STRATEGY_RANDOM);
    assert_int_equal(job->budget, 5);
    assert_int_equal(job->seed, 7);
    assert_int_equal(job->measure.warmup, 1);
    assert_int_equal(job->measure.min_samples, 3);
    assert_int_equal(job->measure.max_samples, 50);
    assert_double_equal(job->measure.min_time, 0.01, 1e-12);
    assert_double_equal(job->measure.max_time, 0.5, 1e-12);
    assert_double_equal(job->measure.max_noise, 0.005, 1e-12); /* default kept */
    assert_double_equal(job->measure.timeout, 10.0, 1e-12);
    assert_true(job->measure.flush_l2);
    assert_string_equal(job->archive, "/home/tester/out/tiny.h5");
    assert_string_equal(job->cache, "/xdg/tunefarm");
    assert_double_equal(job->checkpoint, 2.5, 1e-12);
    assert_int_equal(job->compile_jobs, 4);
    assert_int_equal(job->ntargets, 2);
    /* The job file first, then kernel.yaml, source, reference. */
    assert_int_equal(b->count, 4);
    assert_string_equal(b->files[0].path, FIX "jobs/tiny.yaml");
    char hash[65];
    tf_bundle_hash(b, hash);
    assert_string_equal(job->hash, hash);

    assert_true(tf_job_targets_device(job, "host", "host/x86_64/AMD EPYC 9654"));
    assert_true(tf_job_targets_device(job, "cuda", "cuda/sm_90/NVIDIA H100 80GB HBM3"));
    assert_false(tf_job_targets_device(job, "cuda", "cuda/sm_80/NVIDIA A100-SXM4-80GB"));
    assert_false(tf_job_targets_device(job, "hip", "hip/gfx942/AMD Instinct MI300X"));
    tf_job_destroy(job);
    tf_bundle_destroy(b);
}

/* Copy the file `from` to `to`. */
static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* The hash of `job_path` as loaded from the folder `cwd` (NULL: here). */
static void job_hash_from(const char *cwd, const char *job_path, char out[65])
{
    char here[4096];
    assert_non_null(getcwd(here, sizeof here));
    if (cwd != NULL)
        assert_int_equal(chdir(cwd), 0);
    struct tf_bundle *b = tf_bundle_create();
    struct tf_error err = {0};
    struct tf_job *job = tf_job_load(job_path, b, &err);
    if (job == NULL)
        fail_msg("%s: %s", job_path, err.message);
    memcpy(out, job->hash, 65);
    tf_job_destroy(job);
    tf_bundle_destroy(b);
    assert_int_equal(chdir(here), 0);
}

/* One job, however its path is typed: `run job.yaml`, `run ./job.yaml`,
 * `run $PWD/job.yaml` and `cd jobs && run job.yaml` resume one another (the
 * job hash once held the paths as typed). heat_cuda is a CUDA kernel: its
 * source folder's manifest (bundle.c, include paths) is part of the hash. */
static void test_job_hash_ignores_how_the_path_is_typed(void **state)
{
    (void)state;
    static const char *const jobs[] = {"tests/unit/fixtures/jobs/tiny.yaml",
                                       "tests/fixtures/heat_cuda.yaml"};
    char here[4096];
    assert_non_null(getcwd(here, sizeof here));
    char first[2][65];
    for (int j = 0; j < 2; j++) {
        char dotted[4200], absolute[8400], dir[4200];
        snprintf(dotted, sizeof dotted, "./%s", jobs[j]);
        snprintf(absolute, sizeof absolute, "%s/%s", here, jobs[j]);
        snprintf(dir, sizeof dir, "%s", jobs[j]);
        *strrchr(dir, '/') = '\0';
        char h[65];
        job_hash_from(NULL, jobs[j], first[j]);
        job_hash_from(NULL, dotted, h);
        assert_string_equal(h, first[j]);
        job_hash_from(NULL, absolute, h);
        assert_string_equal(h, first[j]);
        job_hash_from(dir, strrchr(jobs[j], '/') + 1, h);
        assert_string_equal(h, first[j]);
        job_hash_from("/", absolute + 1, h); /* from the root, relative */
        assert_string_equal(h, first[j]);
    }
    assert_string_not_equal(first[0], first[1]);

    /* A kernel beside its job (`kernel: ./kernel.yaml`, sources named from
     * there): from outside the folder its files are DIR/./kernel.yaml, from
     * inside ./kernel.yaml and ranked.c. */
    char dir[] = "/tmp/tf_test_hash_XXXXXX";
    assert_non_null(mkdtemp(dir));
    static const char *const names[] = {"kernel.yaml", "ranked.c", "job.yaml"};
    char paths[3][4200];
    for (int i = 0; i < 3; i++)
        snprintf(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
    copy_file("tests/fixtures/ranked/kernel.yaml", paths[0]);
    copy_file("tests/fixtures/ranked/ranked.c", paths[1]);
    FILE *f = fopen(paths[2], "w");
    assert_non_null(f);
    fputs("name: beside\nkernels:\n  - {kernel: ./kernel.yaml}\n", f);
    assert_int_equal(fclose(f), 0);
    char job[4200], dotted[4200], h[65], beside[65];
    snprintf(job, sizeof job, "%s/job.yaml", dir);
    snprintf(dotted, sizeof dotted, "%s/./job.yaml", dir);
    job_hash_from(NULL, job, beside);
    job_hash_from(NULL, dotted, h);
    assert_string_equal(h, beside);
    job_hash_from(dir, "job.yaml", h);
    assert_string_equal(h, beside);
    job_hash_from(dir, "./job.yaml", h);
    assert_string_equal(h, beside);
    job_hash_from("/", job + 1, h);
    assert_string_equal(h, beside);
    for (int i = 0; i < 3; i++)
        assert_int_equal(unlink(paths[i]), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* tf_path_clean: the spelling a path is hashed and compared in. */
static void test_path_clean(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"a/./b//c/", "a/b/c"}, {"./x", "x"},       {".", "."},         {"./", "."},
        {"//x", "/x"},          {"/", "/"},         {"/./a/.", "/a"},   {"../k/./x", "../k/x"},
        {"a/../b", "a/../b"},   {"", "."},          {"a//", "a"},       {"/.//./", "/"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        tf_path_clean(cases[i][0], out, sizeof out);
        assert_string_equal(out, cases[i][1]);
    }
}

static void test_minimal_job_defaults(void **state)
{
    (void)state;
    setenv("HOME", "/home/tester", 1);
    unsetenv("XDG_CACHE_HOME");
    struct tf_bundle *b = tf_bundle_create();
    struct tf_error err;
    tf_error_clear(&err);
    struct tf_job *job = tf_job_load(FIX "jobs/minimal.yaml", b, &err);
    assert_non_null(job);
    assert_int_equal(job->strategy, TF_STRATEGY_BRUTE_FORCE);
    assert_int_equal(job->budget, 0);
    assert_int_equal(job->seed, 1);
    assert_int_equal(job->measure.warmup, 2);
    assert_int_equal(job->measure.min_samples, 10);
    assert_int_equal(job->measure.max_samples, 1000);
    assert_double_equal(job->measure.min_time, 0.02, 1e-12);
    assert_double_equal(job->measure.max_time, 1.0, 1e-12);
    assert_double_equal(job->measure.max_noise, 0.005, 1e-12);
    assert_false(job->measure.flush_l2);
    assert_double_equal(job->measure.energy_time, 0.1, 1e-12); /* an energy window */
    assert_double_equal(job->screen.energy_time, 0, 1e-12);    /* screening: none */
    assert_string_equal(job->archive, "results/minimal.h5");
    assert_string_equal(job->cache, "/home/tester/.cache/tunefarm");
    assert_double_equal(job->checkpoint, 10.0, 1e-12);
    assert_int_equal(job->compile_jobs, 0);
    assert_int_equal(job->ntargets, 0);
    assert_int_equal(job->kernels[0].nproblems, 2); /* problems default to all */
    assert_true(tf_job_targets_device(job, "hip", "hip/gfx942/AMD Instinct MI300X"));
    tf_job_destroy(job);
    tf_bundle_destroy(b);
}

/* A worker rebuilds the job from a sealed copy of the bundle, with no disk access. */
static void test_sealed_reload(void **state)
{
    (void)state;
    struct tf_bundle *b = tf_bundle_create();
    struct tf_error err;
    tf_error_clear(&err);
    struct tf_job *job = tf_job_load(FIX "jobs/tiny.yaml", b, &err);
    assert_non_null(job);

    struct tf_bundle *w = tf_bundle_create();
    w->sealed = true;
    free(w->kernel_path);
    w->kernel_path = strdup(b->kernel_path);
    for (int i = 0; i < b->count; i++)
        tf_bundle_add(w, b->files[i].path, b->files[i].data, b->files[i].size);
    struct tf_job *again = tf_job_load(w->files[0].path, w, &err);
    assert_non_null(again);
    assert_string_equal(again->hash, job->hash);
    assert_string_equal(again->kernels[0].kernel->source_hash,
                        job->kernels[0].kernel->source_hash);
    assert_int_equal(w->count, b->count); /* nothing new was read */
    tf_job_destroy(again);

    /* Without the reference source the sealed load must fail, not go to disk. */
    struct tf_bundle *partial = tf_bundle_create();
    partial->sealed = true;
    for (int i = 0; i < b->count - 1; i++)
        tf_bundle_add(partial, b->files[i].path, b->files[i].data, b->files[i].size);
    tf_error_clear(&err);
    assert_null(tf_job_load(partial->files[0].path, partial, &err));
    assert_non_null(strstr(err.message, "not part of the job bundle"));
    assert_string_equal(err.file, FIX "jobs/../kernels/tiny/kernel.yaml");

    tf_bundle_destroy(partial);
    tf_bundle_destroy(w);
    tf_job_destroy(job);
    tf_bundle_destroy(b);
}

static void test_kernel_path_resolution(void **state)
{
    (void)state;
    /* From tests/unit/broken, 'nosuch_kernel' is not found unless a kernel path has it;
     * here the path names a folder with 'tiny', and a job naming 'tiny' resolves. */
    struct tf_bundle *b = tf_bundle_create();
    free(b->kernel_path);
    b->kernel_path = strdup("/nonexistent:" FIX "kernels");
    const char *text = "name: via_path\nkernels: [tiny]\n";
    tf_bundle_add(b, BROKEN "via_path.yaml", text, strlen(text));
    struct tf_error err;
    tf_error_clear(&err);
    struct tf_job *job = tf_job_load(BROKEN "via_path.yaml", b, &err);
    assert_non_null(job);
    assert_string_equal(job->kernels[0].kernel->file, FIX "kernels/tiny/kernel.yaml");
    tf_job_destroy(job);
    tf_bundle_destroy(b);
}

static void test_targets_by_name(void **state)
{
    (void)state;
    char *targets[] = {"NVIDIA A100*"};
    struct tf_job job;
    memset(&job, 0, sizeof job);
    job.ntargets = 1;
    job.targets = targets;
    assert_true(tf_job_targets_device(&job, "cuda", "cuda/sm_80/NVIDIA A100-SXM4-80GB"));
    assert_false(tf_job_targets_device(&job, "cuda", "cuda/sm_90/NVIDIA H100"));
    /* The name part is after the second '/', even if the name has one. */
    targets[0] = "Radeon Pro W7900/x";
    assert_true(tf_job_targets_device(&job, "hip", "hip/gfx1100/Radeon Pro W7900/x"));
    targets[0] = "hip";
    assert_true(tf_job_targets_device(&job, "hip", "hip/gfx1100/Radeon"));
    assert_false(tf_job_targets_device(&job, "cuda", "cuda/sm_90/NVIDIA H100"));
    assert_false(tf_job_targets_device(&job, "host", "host/x86_64/hipster CPU"));
    /* The architecture alone, exactly or as a glob. */
    targets[0] = "gfx942";
    assert_true(tf_job_targets_device(&job, "hip", "hip/gfx942/AMD Instinct MI300X"));
    assert_false(tf_job_targets_device(&job, "hip", "hip/gfx90a/AMD Instinct MI250X"));
    assert_false(tf_job_targets_device(&job, "hip", "hip/gfx9420/x"));
    targets[0] = "sm_8*";
    assert_true(tf_job_targets_device(&job, "cuda", "cuda/sm_80/NVIDIA A100-SXM4-80GB"));
    assert_true(tf_job_targets_device(&job, "cuda", "cuda/sm_86/NVIDIA RTX A6000"));
    assert_false(tf_job_targets_device(&job, "cuda", "cuda/sm_90/NVIDIA H100"));
}

/* ---- configuration helpers ------------------------------------------------------------ */

static void test_encode_decode_roundtrip(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_error err;
    struct tf_kernel *k = load_kernel("kernels/gemm/kernel.yaml", &b, &err);
    assert_non_null(k);
    uint64_t n = tf_kernel_cartesian(k);
    int digits[6];
    uint64_t seen_last = 0;
    for (uint64_t i = 0; i < n; i++) {
        tf_kernel_decode(k, i, digits);
        for (int p = 0; p < 6; p++) {
            assert_true(digits[p] >= 0);
            assert_true(digits[p] < k->params[p].count);
        }
        assert_int_equal(tf_kernel_encode(k, digits), i);
        seen_last = i;
    }
    assert_int_equal(seen_last, n - 1);
    /* Parameter 0 is the most significant digit; the last one the least. */
    tf_kernel_decode(k, 1, digits);
    assert_int_equal(digits[5], 1);
    assert_int_equal(digits[0], 0);
    tf_kernel_decode(k, n - 1, digits);
    assert_int_equal(digits[0], 4);
    tf_kernel_decode(k, n / 5, digits);
    assert_int_equal(digits[0], 1);
    assert_int_equal(digits[5], 0);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

static void test_cartesian_saturates(void **state)
{
    (void)state;
    struct tf_param params[5];
    memset(params, 0, sizeof params);
    struct tf_kernel k;
    memset(&k, 0, sizeof k);
    k.params = params;
    for (int i = 0; i < 5; i++)
        params[i].count = 1 << 16;
    k.nparams = 3; /* 2^48 fits */
    assert_int_equal(tf_kernel_cartesian(&k), UINT64_C(1) << 48);
    k.nparams = 4; /* 2^64 does not */
    assert_true(tf_kernel_cartesian(&k) == UINT64_MAX);
    k.nparams = 5;
    assert_true(tf_kernel_cartesian(&k) == UINT64_MAX);
    params[0].count = 3; /* 3 * 2^48 */
    k.nparams = 4;
    assert_int_equal(tf_kernel_cartesian(&k), UINT64_C(3) << 48);
    /* A product that reaches UINT64_MAX / c exactly before the last factor
     * still fits: (2^63 - 1) * 2 = 2^64 - 2, one below the saturated value. */
    static const int factors[] = {49, 73, 127, 337, 92737, 649657, 2}; /* 2^63 - 1, then 2 */
    struct tf_param exact[7];
    memset(exact, 0, sizeof exact);
    for (int i = 0; i < 7; i++)
        exact[i].count = factors[i];
    k.params = exact;
    k.nparams = 7;
    assert_true(tf_kernel_cartesian(&k) == UINT64_MAX - 1);
    k.nparams = 6;
    assert_true(tf_kernel_cartesian(&k) == (uint64_t)INT64_MAX);
    k.params = params;
    k.nparams = 0;
    assert_int_equal(tf_kernel_cartesian(&k), 1);
}

/* ---- defaults ------------------------------------------------------------------------- */

/* The default of problem `p` as "P1=v1 P2=v2 ..." (a static buffer), or fail. */
static const char *default_text(const struct tf_kernel *k, int p)
{
    static char buf[256];
    uint64_t def = UINT64_MAX;
    if (!tf_kernel_default_for(k, p, &def))
        fail_msg("%s: problem %d has no default", k->name, p);
    assert_true(def < tf_kernel_cartesian(k));
    tf_kernel_format_config(k, def, buf, sizeof buf);
    return buf;
}

static void test_default_per_problem(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_error err;
    struct tf_kernel *k = load_kernel(FIX "kernels/perproblem/kernel.yaml", &b, &err);
    assert_non_null(k);
    /* UNROLL = N / 512: 2 for one (N 1024), 8 for two (N 4096), 4 for three (N 2048). */
    assert_string_equal(default_text(k, 0), "UNROLL=2 BLOCK=64 VEC=4 MODE=fused");
    assert_string_equal(default_text(k, 1), "UNROLL=8 BLOCK=64 VEC=4 MODE=fused");
    assert_string_equal(default_text(k, 2), "UNROLL=4 BLOCK=64 VEC=4 MODE=fused");
    /* It differs between problems: no kernel-wide default for code that ignores them. */
    assert_false(k->has_default);
    uint64_t def;
    assert_false(tf_kernel_default_for(k, 3, &def));
    assert_false(tf_kernel_default_for(k, -1, &def));
    /* Each problem's default satisfies the constraint N % UNROLL == 0 there. */
    struct tf_value slots[64];
    for (int p = 0; p < k->nproblems; p++) {
        bool valid = false;
        assert_true(tf_kernel_default_for(k, p, &def));
        tf_kernel_bind(k, def, p, NULL, slots);
        assert_int_equal(tf_kernel_check(k, slots, &valid, &err), 0);
        assert_true(valid);
    }
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* The tiny fixture with `default_line` for its default (empty: none), loaded
 * from memory next to tiny's sources. NULL + err if it does not load. */
static struct tf_kernel *load_tiny_with(const char *default_line, struct tf_bundle **bout,
                                        struct tf_error *err)
{
    char text[1024];
    snprintf(text, sizeof text,
             "name: tiny\nlanguage: c\nsource: tiny.c\nentry: saxpy\n"
             "reference: {source: reference.c, entry: saxpy_reference}\n"
             "problems:\n  one: {N: 1024}\n  two: {N: 2 ** 12}\n"
             "parameters:\n  UNROLL: [1, 2, 4, 8]\n  MODE: [plain, fused]\n"
             "%s\n"
             "arguments:\n  - {name: N, scalar: int32, value: N}\n"
             "  - {name: y, buffer: float32, size: N, output: true}\n",
             default_line);
    struct tf_bundle *b = tf_bundle_create();
    tf_bundle_add(b, FIX "kernels/tiny/variant.yaml", text, strlen(text));
    tf_error_clear(err);
    *bout = b;
    return tf_kernel_load(FIX "kernels/tiny/variant.yaml", b, err);
}

static void test_default_literals_and_agreement(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_error err;
    uint64_t def;
    /* Literals, as before: kernel-wide, and every problem's default is that one. */
    struct tf_kernel *k = load_kernel(FIX "kernels/tiny/kernel.yaml", &b, &err);
    assert_non_null(k);
    assert_true(k->has_default);
    assert_int_equal(k->default_index, 3); /* UNROLL 2 (digit 1), MODE fused (digit 1) */
    for (int p = 0; p < k->nproblems; p++) {
        assert_true(tf_kernel_default_for(k, p, &def));
        assert_int_equal(def, 3);
    }
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    /* Expressions that agree on every problem are a kernel-wide default too
     * (quoted: a comma would end the value in a flow mapping). */
    k = load_tiny_with("default: {UNROLL: \"min(N, 2)\", MODE: fused}", &b, &err);
    assert_non_null(k);
    assert_true(k->has_default);
    assert_int_equal(k->default_index, 3);
    assert_true(tf_kernel_default_for(k, 1, &def));
    assert_int_equal(def, 3);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    /* No default at all: none for any problem. */
    k = load_tiny_with("", &b, &err);
    assert_non_null(k);
    assert_false(k->has_default);
    assert_null(k->problem_defaults);
    assert_false(tf_kernel_default_for(k, 0, &def));
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    /* An enum default is a name, never an expression. */
    k = load_tiny_with("default: {UNROLL: 2, MODE: \"N > 1\"}", &b, &err);
    assert_null(k);
    assert_int_equal(err.line, 12);
    assert_non_null(strstr(err.message, "default for 'MODE' is string 'N > 1', which is not "
                                        "one of its values (plain, fused)"));
    tf_bundle_destroy(b);

    /* An integer literal is a literal: an unlisted one is not read as an expression. */
    k = load_tiny_with("default: {UNROLL: 3, MODE: fused}", &b, &err);
    assert_null(k);
    assert_non_null(strstr(err.message, "default for 'UNROLL' is integer 3, which is not one "
                                        "of its values (1, 2, 4, 8)"));
    tf_bundle_destroy(b);

    /* Expressions read sizes only, not other parameters. */
    k = load_tiny_with("default: {UNROLL: MODE + 1, MODE: fused}", &b, &err);
    assert_null(k);
    assert_non_null(strstr(err.message, "undefined name 'MODE' (known: N); a default may read "
                                        "only the problem sizes"));
    tf_bundle_destroy(b);

    /* A value that is not whole is never a listed integer (1.024 is not 1); the
     * problem is named. */
    k = load_tiny_with("default: {UNROLL: N / 1000, MODE: fused}", &b, &err);
    assert_null(k);
    assert_non_null(strstr(err.message, "default for 'UNROLL' is N / 1000, which gives 1.024 "
                                        "for problem 'one', not one of its values (1, 2, 4, 8)"));
    assert_int_equal(err.line, 12);
    assert_int_equal(err.column, 19);
    tf_bundle_destroy(b);
}

/* ---- names and values the archive must hold whole ------------------------------------- */

/* Load `text` as a kernel file next to tiny's sources (in memory). */
static struct tf_kernel *load_text(const char *text, struct tf_bundle **bout,
                                   struct tf_error *err)
{
    struct tf_bundle *b = tf_bundle_create();
    tf_bundle_add(b, FIX "kernels/tiny/variant.yaml", text, strlen(text));
    tf_error_clear(err);
    *bout = b;
    return tf_kernel_load(FIX "kernels/tiny/variant.yaml", b, err);
}

/* A tiny kernel with the given name, problem name, enum value, extra
 * parameter line, N, argument type and value, metric line. */
static char *tiny_text(const char *name, const char *problem, const char *value,
                       const char *param_line, const char *n, const char *type,
                       const char *arg_value, const char *metric_line)
{
    return tf_xasprintf("name: %s\nlanguage: c\nsource: tiny.c\nentry: saxpy\n"
                        "reference: {source: reference.c, entry: saxpy_reference}\n"
                        "problems:\n  %s: {N: %s}\n"
                        "parameters:\n  UNROLL: [1, 2]\n  MODE: [plain, %s]\n%s"
                        "arguments:\n  - {name: N, scalar: %s, value: %s}\n"
                        "  - {name: y, buffer: float32, size: 64, output: true}\n"
                        "metrics:\n%s",
                        name, problem, n, value, param_line, type, arg_value, metric_line);
}

/* `text` (taken) with `keys` added to its flow mapping `reference: {...}`. */
static char *with_reference_keys(char *text, const char *keys)
{
    const char *at = strstr(text, "entry: saxpy_reference}");
    assert_non_null(at);
    const int head = (int)(at - text) + (int)strlen("entry: saxpy_reference");
    char *out = tf_xasprintf("%.*s%s%s", head, text, keys, text + head);
    free(text);
    return out;
}

static char *repeat(char c, int n)
{
    char *s = tf_xmalloc((size_t)n + 1);
    memset(s, c, (size_t)n);
    s[n] = '\0';
    return s;
}

/* Load must fail at line:col with `needle` in the message. */
static void expect_kernel_error(char *text, int line, int col, const char *needle)
{
    struct tf_bundle *b;
    struct tf_error err;
    struct tf_kernel *k = load_text(text, &b, &err);
    if (k != NULL)
        fail_msg("loaded, expected '%s' at %d:%d", needle, line, col);
    if (err.line != line || err.column != col || strstr(err.message, needle) == NULL)
        fail_msg("got %d:%d '%s', expected %d:%d '...%s...'", err.line, err.column,
                 err.message, line, col, needle);
    assert_string_equal(err.file, FIX "kernels/tiny/variant.yaml");
    tf_bundle_destroy(b);
    free(text);
}

static struct tf_kernel *expect_kernel_loads(char *text, struct tf_bundle **b)
{
    struct tf_error err;
    struct tf_kernel *k = load_text(text, b, &err);
    if (k == NULL)
        fail_msg("did not load: %d:%d %s", err.line, err.column, err.message);
    free(text);
    return k;
}

/* Write an archive with kernel `k` and a plan row for it, read it back: the
 * kernel the plan row names must come back as the kernel, whole. Returns 0,
 * or -1 (+ err) where the archive cannot be written or read. */
static int archive_round_trip(const struct tf_kernel *k, struct tf_error *err)
{
    char path[] = "/tmp/tf_test_loader_XXXXXX.h5";
    int fd = mkstemps(path, 3);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    struct tf_archive *a = tf_archive_create();
    struct tf_device dev = {0};
    strcpy(dev.backend, "host");
    strcpy(dev.name, "test cpu");
    uint32_t d = tf_archive_add_device(a, &dev);
    struct tf_archive_run run = {.start = 1, .ranks = 2};
    strcpy(run.job_name, "names");
    uint32_t r = tf_archive_add_run(a, &run);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, k, err);
    int rc = -1;
    if (ak == NULL)
        goto out;
    uint32_t p = tf_archive_problem_for(ak, k, 0);
    struct tf_archive_plan plan = {.run = r, .kernel = 0, .problem = p, .device = d, .planned = 4};
    tf_archive_set_plan(a, &plan);
    if (tf_archive_write(a, path, err) != 0)
        goto out;
    struct tf_archive *back = tf_archive_read(path, err);
    if (back == NULL)
        goto out;
    assert_int_equal(back->nkernels, 1);
    assert_string_equal(back->kernels[0].name, k->name);
    assert_string_equal(back->kernels[0].problems[0].name, k->problems[0].name);
    assert_int_equal(back->nplans, 1);
    assert_int_equal(back->plans[0].kernel, 0);
    tf_archive_destroy(back);
    rc = 0;
out:
    tf_archive_destroy(a);
    unlink(path);
    return rc;
}

/* Issue 11 item 5: a 129-character kernel name loaded, and the archive's
 * 128-byte /plan column cut it: the file could no longer be read (query,
 * status and run exit 2). Every name that lands in a fixed-size archive
 * field is checked at load, with its place and its limit; the longest
 * accepted names survive an archive round trip whole. */
static void test_archived_name_limits(void **state)
{
    (void)state;
    char *k128 = repeat('k', 128), *k129 = repeat('k', 129);
    char *p63 = repeat('p', 63), *p64 = repeat('p', 64);
    char *v32 = repeat('v', 32), *v33 = repeat('v', 33);
    const char *m = "  gbs: N / time_s\n";
    struct tf_bundle *b;
    struct tf_error err;

    /* At the limits: loads, and the archive holds every name whole. */
    struct tf_kernel *k = expect_kernel_loads(tiny_text(k128, p63, v32, "", "64", "int32", "N", m), &b);
    if (archive_round_trip(k, &err) != 0)
        fail_msg("round trip at the limits: %s", err.message);
    /* One past the kernel name's limit is what the archive cannot hold: the
     * check is what keeps such a kernel out of it. */
    free(k->name);
    k->name = tf_xstrdup(k129);
    tf_error_clear(&err);
    assert_int_equal(archive_round_trip(k, &err), -1);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    /* One past: refused where the name is written. */
    expect_kernel_error(tiny_text(k129, "one", "fused", "", "64", "int32", "N", m), 1, 7,
                        "kernel name 'kkkk");
    expect_kernel_error(tiny_text(k129, "one", "fused", "", "64", "int32", "N", m), 1, 7,
                        "is 129 bytes long; at most 128 fit the archive's kernel column "
                        "(/plan): shorten it");
    expect_kernel_error(tiny_text("tiny", p64, "fused", "", "64", "int32", "N", m), 7, 3,
                        "is 64 bytes long; at most 63 fit the archive's problem name column");
    expect_kernel_error(tiny_text("tiny", "one", v33, "", "64", "int32", "N", m), 10, 17,
                        "value of parameter 'MODE' 'vvvv");
    expect_kernel_error(tiny_text("tiny", "one", v33, "", "64", "int32", "N", m), 10, 17,
                        "is 33 bytes long; at most 32 fit the parameter's column");
    /* Parameters and metrics are columns of the results table: no built-in names. */
    expect_kernel_error(tiny_text("tiny", "one", "fused", "  status: [1, 2]\n", "64", "int32",
                                  "N", m),
                        11, 3, "parameter name 'status' is reserved (a column of the archive's "
                               "results table)");
    expect_kernel_error(tiny_text("tiny", "one", "fused", "", "64", "int32", "N",
                                  "  samples: N / time_s\n"),
                        15, 3, "metric name 'samples' is reserved");
    expect_kernel_error(tiny_text("tiny", "one", "fused", "", "64", "int32", "N",
                                  "  UNROLL: N / time_s\n"),
                        15, 3, "metric 'UNROLL' has the name of a parameter");

    /* The job name goes into /runs.job_name (64 bytes). */
    char *job = tf_xasprintf("name: %s\nkernels: [tiny]\n", p63);
    b = tf_bundle_create();
    tf_bundle_add(b, FIX "jobs/names.yaml", job, strlen(job));
    struct tf_job *j = tf_job_load(FIX "jobs/names.yaml", b, &err);
    assert_non_null(j);
    tf_job_destroy(j);
    tf_bundle_destroy(b);
    free(job);
    job = tf_xasprintf("name: %s\nkernels: [tiny]\n", p64);
    b = tf_bundle_create();
    tf_bundle_add(b, FIX "jobs/names.yaml", job, strlen(job));
    tf_error_clear(&err);
    assert_null(tf_job_load(FIX "jobs/names.yaml", b, &err));
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 7);
    assert_non_null(strstr(err.message, "is 64 bytes long; at most 63 fit the archive's "
                                        "job_name column"));
    tf_bundle_destroy(b);
    free(job);
    free(k128); free(k129); free(p63); free(p64); free(v32); free(v33);
}

/* Issue 13 item 7: metrics may read the energy of one launch, `energy_j`
 * (GFLOP/J), beside time_s; nothing else may (it is measured), and no
 * parameter, size or metric may take its name or the new results columns'. */
static void test_energy_in_metrics(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_error err;
    struct tf_kernel *k = expect_kernel_loads(
        tiny_text("tiny", "one", "fused", "", "64", "int32", "N",
                  "  n_per_s: N / time_s\n  n_per_j: N / energy_j\n"),
        &b);
    struct tf_value *slots = calloc((size_t)k->nslots, sizeof *slots);
    tf_kernel_bind(k, 0, 0, NULL, slots);
    assert_true(isnan(slots[tf_kernel_energy_slot(k)].u.f)); /* unknown until measured */
    slots[tf_kernel_time_slot(k)] = tf_float(2e-3);
    slots[tf_kernel_energy_slot(k)] = tf_float(0.5);
    struct tf_value v;
    assert_int_equal(tf_expr_eval(k->metrics[0], slots, &v, &err), 0);
    assert_double_equal(tf_value_as_double(v), 64 / 2e-3, 1e-6);
    assert_int_equal(tf_expr_eval(k->metrics[1], slots, &v, &err), 0);
    assert_double_equal(tf_value_as_double(v), 64 / 0.5, 1e-9);
    free(slots);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    /* value: N is at line 12, column 37 of tiny_text's file. */
    expect_kernel_error(tiny_text("tiny", "one", "fused", "", "64", "int32", "energy_j * 2",
                                  "  n_per_s: N / time_s\n"),
                        12, 37, "only available in metrics");
    expect_kernel_error(tiny_text("tiny", "one", "fused", "  noisy: [1, 2]\n", "64", "int32",
                                  "N", "  n_per_s: N / time_s\n"),
                        11, 3, "parameter name 'noisy' is reserved (a column of the archive's "
                               "results table)");
    expect_kernel_error(tiny_text("tiny", "one", "fused", "  energy_j: [1, 2]\n", "64", "int32",
                                  "N", "  n_per_s: N / time_s\n"),
                        11, 3, "parameter name 'energy_j' is reserved (a device property, "
                               "time_s or energy_j)");
    expect_kernel_error(tiny_text("tiny", "one", "fused", "", "64", "int32", "N",
                                  "  energy_status: N / time_s\n"),
                        15, 3, "metric name 'energy_status' is reserved");
    /* Kernel Tuner's and T4's own keys: an export would write the metric over them. */
    expect_kernel_error(tiny_text("tiny", "one", "fused", "", "64", "int32", "N",
                                  "  time: N / time_s\n"),
                        15, 3, "metric name 'time' is reserved (a key of the Kernel Tuner cache "
                               "and T4 files that tunefarm export writes)");
    expect_kernel_error(tiny_text("tiny", "one", "fused", "", "64", "int32", "N",
                                  "  benchmark_time: N / time_s\n"),
                        15, 3, "metric name 'benchmark_time' is reserved");
    expect_kernel_error(tiny_text("tiny", "one", "fused", "  times: [1, 2]\n", "64", "int32",
                                  "N", "  n_per_s: N / time_s\n"),
                        11, 3, "parameter name 'times' is reserved (a key of the Kernel Tuner");
}

/* Issue 11 item 12: a size of 3e9 passed as an int32 scalar wrapped silently
 * and every configuration failed verification. A scalar that follows from
 * the sizes is checked for every problem at load, at its value. */
static void test_scalar_ranges(void **state)
{
    (void)state;
    const char *m = "  gbs: N / time_s\n";
    struct tf_bundle *b;
    /* value: N is at line 13, column 38 of tiny_text's file. */
    expect_kernel_error(tiny_text("tiny", "big", "fused", "", "3e9", "int32", "N", m), 12, 37,
                        "value of argument 'N' (N) for problem 'big': 3000000000 is outside "
                        "int32's range -2147483648..2147483647; declare it 'scalar: int64'");
    expect_kernel_error(tiny_text("tiny", "big", "fused", "", "2 ** 31", "int32", "N", m), 12,
                        37, "2147483648 is outside int32's range");
    expect_kernel_error(tiny_text("tiny", "big", "fused", "", "64", "int32", "-N * 2 ** 25 - 1",
                                  m),
                        12, 37, "-2147483649 is outside int32's range");
    struct tf_kernel *k = expect_kernel_loads(
        tiny_text("tiny", "edge", "fused", "", "2147483647", "int32", "N", m), &b);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
    k = expect_kernel_loads(tiny_text("tiny", "big", "fused", "", "3e9", "int64", "N", m), &b);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
    /* Other narrowing: a fraction to an integer, int64 from a huge real,
     * integers a float cannot hold exactly. */
    expect_kernel_error(tiny_text("tiny", "one", "fused", "", "64", "int32", "N / 3", m), 12,
                        37, "21.333333333333332 is not a whole number, which int32 needs");
    expect_kernel_error(tiny_text("tiny", "one", "fused", "", "64", "int64", "N * 1e18", m),
                        12, 37, "is outside int64's range");
    expect_kernel_error(tiny_text("tiny", "one", "fused", "", "2 ** 24 + 1", "float32", "N", m),
                        12, 39, "16777217 is an integer float32 cannot hold exactly");
    expect_kernel_error(tiny_text("tiny", "one", "fused", "", "64", "float32", "N * 1e38", m),
                        12, 39, "is outside float32's range");
    k = expect_kernel_loads(tiny_text("tiny", "one", "fused", "", "2 ** 30", "float32", "N", m),
                            &b);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
    /* An evaluation error of a sizes-only scalar is a load error too. */
    expect_kernel_error(tiny_text("tiny", "one", "fused", "", "64", "int32", "N // (N - 64)",
                                  m),
                        12, 37, "value of argument 'N' (N // (N - 64)) cannot be evaluated for "
                                "problem 'one': division by zero");
    /* A value that reads a parameter is known per configuration only (and
     * must say how the reference relates to it: test_reference_params). */
    k = expect_kernel_loads(
        with_reference_keys(tiny_text("tiny", "one", "fused", "", "64", "int32",
                                      "UNROLL * 2 ** 31", m),
                            ", independent_of: [UNROLL]"),
        &b);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    char why[160];
    assert_true(tf_scalar_fits(TF_ELEM_I32, tf_int(INT32_MIN), why, sizeof why));
    assert_false(tf_scalar_fits(TF_ELEM_I32, tf_int((int64_t)INT32_MIN - 1), why, sizeof why));
    assert_true(tf_scalar_fits(TF_ELEM_I32, tf_float(512.0), why, sizeof why));
    assert_false(tf_scalar_fits(TF_ELEM_I64, tf_float(9223372036854775808.0), why, sizeof why));
    assert_true(tf_scalar_fits(TF_ELEM_I64, tf_float(-9223372036854775808.0), why, sizeof why));
    assert_true(tf_scalar_fits(TF_ELEM_I64, tf_int(INT64_MIN), why, sizeof why));
    assert_false(tf_scalar_fits(TF_ELEM_F64, tf_float(NAN), why, sizeof why));
    assert_true(tf_scalar_fits(TF_ELEM_F64, tf_int(INT64_MIN), why, sizeof why)); /* -2^63 */
    assert_false(tf_scalar_fits(TF_ELEM_F64, tf_int(INT64_MAX), why, sizeof why));
    assert_true(tf_scalar_fits(TF_ELEM_F32, tf_float(2.5), why, sizeof why));
}

/* A kernel file of `language` with problem sizes `sizes` ("N: 64"), the
 * parameter lines `params` (each "  NAME: ...\n", the first at line 9) and
 * `extra` lines after the arguments; tiny's sources. */
static char *params_text(const char *language, const char *sizes, const char *params,
                         const char *extra)
{
    return tf_xasprintf("name: ranged\nlanguage: %s\nsource: tiny.c\nentry: saxpy\n"
                        "reference: {source: reference.c, entry: saxpy_reference}\n"
                        "problems:\n  one: {%s}\n"
                        "parameters:\n%s"
                        "arguments:\n  - {name: y, buffer: float32, size: 64, output: true}\n%s",
                        language, sizes, params, extra);
}

/* The values of the only parameter of `params`, which must load. */
static void expect_values(const char *params, const int64_t *want, int n)
{
    struct tf_bundle *b;
    struct tf_kernel *k = expect_kernel_loads(params_text("c", "N: 64", params, ""), &b);
    assert_int_equal(k->params[0].kind, TF_PARAM_INT);
    if (k->params[0].count != n)
        fail_msg("%s: %d values, want %d", params, k->params[0].count, n);
    for (int i = 0; i < n; i++)
        if (k->params[0].ints[i] != want[i])
            fail_msg("%s: value %d is %lld, want %lld", params, i,
                     (long long)k->params[0].ints[i], (long long)want[i]);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* Issue 14 item 6: a parameter's values as a range, both ends included. */
static void test_parameter_ranges(void **state)
{
    (void)state;
    static const int64_t one_to_ten[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    expect_values("  B: {range: [1, 10]}\n", one_to_ten, 10);
    static const int64_t by3[] = {0, 3, 6, 9}; /* 10 is not reached */
    expect_values("  B: {range: [0, 10, 3]}\n", by3, 4);
    static const int64_t neg[] = {-4, 0, 4};
    expect_values("  B: {range: [-4, 4, 4]}\n", neg, 3);
    static const int64_t five[] = {5};
    expect_values("  B: {range: [5, 5]}\n", five, 1);
    static const int64_t pow2[] = {1, 2, 4, 8, 16, 32, 64};
    expect_values("  B: {pow2: [1, 64]}\n", pow2, 7);
    static const int64_t pow2b[] = {16, 32, 64};
    expect_values("  B:\n    pow2: [16, 64]\n", pow2b, 3);
    int64_t by32[32];
    for (int i = 0; i < 32; i++)
        by32[i] = 32 * (i + 1);
    expect_values("  B: {range: [32, 1024, 32]}\n", by32, 32);
    int64_t all_pow2[63];
    for (int i = 0; i < 63; i++)
        all_pow2[i] = (int64_t)1 << i;
    expect_values("  B: {pow2: [1, 4611686018427387904]}\n", all_pow2, 63);

    /* A range is a list like any other: defaults, constraints, defines, enums beside it. */
    struct tf_bundle *b;
    struct tf_kernel *k = expect_kernel_loads(
        params_text("c", "N: 64",
                    "  BX: {pow2: [1, 1024]}\n  BY: {range: [1, 4]}\n  MODE: [plain, fused]\n",
                    "constraints:\n  - 32 <= BX * BY <= 1024 and not MODE == \"plain\"\n"
                    "default: {BX: 64, BY: 2, MODE: fused}\n"),
        &b);
    assert_int_equal(tf_kernel_cartesian(k), 11 * 4 * 2);
    assert_true(k->has_default);
    int digits[3];
    tf_kernel_decode(k, k->default_index, digits);
    assert_int_equal(k->params[0].ints[digits[0]], 64);
    assert_int_equal(k->params[1].ints[digits[1]], 2);
    struct tf_value slots[64];
    struct tf_error err;
    bool valid;
    int count = 0;
    for (uint64_t c = 0; c < tf_kernel_cartesian(k); c++) {
        tf_kernel_bind(k, c, 0, NULL, slots);
        assert_int_equal(tf_kernel_check(k, slots, &valid, &err), 0);
        count += valid;
    }
    /* MODE fused, and BX * BY in [32, 1024]: BY=1: 32..1024 (6), BY=2: 16..512 (6),
     * BY=3: 16..256 (5), BY=4: 8..256 (6) */
    assert_int_equal(count, 6 + 6 + 5 + 6);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    /* Errors name the range, at its place. */
    expect_kernel_error(params_text("c", "N: 64", "  B: {range: [10, 1]}\n", ""), 9, 19,
                        "'range' of parameter 'B' runs from 10 down to 1: LAST must be >= FIRST");
    expect_kernel_error(params_text("c", "N: 64", "  B: {range: [1, 10, 0]}\n", ""), 9, 22,
                        "the step of parameter 'B' must be >= 1, found 0");
    expect_kernel_error(params_text("c", "N: 64", "  B: {range: [1, 10, -2]}\n", ""), 9, 22,
                        "must be >= 1, found -2");
    expect_kernel_error(params_text("c", "N: 64", "  B: {pow2: [0, 6]}\n", ""), 9, 14,
                        "'pow2' of parameter 'B' lists the powers of two from FIRST to LAST, and "
                        "0 is not one: give the values themselves ([1, 64] for 1, 2, 4, ..., 64), "
                        "not exponents");
    expect_kernel_error(params_text("c", "N: 64", "  B: {pow2: [1, 6]}\n", ""), 9, 17,
                        "6 is not one");
    expect_kernel_error(params_text("c", "N: 64", "  B: {pow2: [1, 2, 4]}\n", ""), 9, 13,
                        "'pow2' of parameter 'B' takes [FIRST, LAST] (powers of two, both "
                        "included), found 3 values");
    expect_kernel_error(params_text("c", "N: 64", "  B: {range: [1]}\n", ""), 9, 14,
                        "'range' of parameter 'B' takes [FIRST, LAST] or [FIRST, LAST, STEP] "
                        "(both ends included), found 1 values");
    expect_kernel_error(params_text("c", "N: 64", "  B: {range: [1, 2.5]}\n", ""), 9, 18,
                        "'range' of parameter 'B' takes integers, found");
    expect_kernel_error(params_text("c", "N: 64", "  B: {range: 10}\n", ""), 9, 14,
                        "'range of parameter 'B'' must be a list");
    expect_kernel_error(params_text("c", "N: 64", "  B: {rnage: [1, 2]}\n", ""), 9, 7,
                        "did you mean 'range'?");
    expect_kernel_error(params_text("c", "N: 64", "  B: {range: [1, 2], pow2: [1, 2]}\n", ""), 9,
                        6, "one form, found 2 keys");
    expect_kernel_error(params_text("c", "N: 64", "  B: {range: [0, 2000000]}\n", ""), 9, 14,
                        "'range' of parameter 'B' gives more than 1048576 values, the most one "
                        "parameter may have");
    expect_kernel_error(params_text("c", "N: 64",
                                    "  B: {range: [-9223372036854775808, 9223372036854775807]}\n",
                                    ""),
                        9, 14, "gives more than 1048576 values");
    /* ranges make huge spaces cheap to write: refused at the range that overflows */
    expect_kernel_error(params_text("c", "N: 64",
                                    "  A: {range: [0, 1000000]}\n  B: {range: [0, 1000000]}\n"
                                    "  C: {range: [0, 1000000]}\n  D: {range: [0, 1000000]}\n"
                                    "  E: {range: [0, 1000000]}\n",
                                    ""),
                        12, 6,
                        "with parameter 'D' the parameter space has 2^64 or more configurations");
    expect_kernel_error(params_text("c", "N: 64", "  B: 5\n", ""), 9, 6,
                        "parameter 'B' must be a list of values ([64, 128]) or a range ({range: "
                        "[1, 10]}, {range: [32, 1024, 32]}, {pow2: [1, 64]}), found");
    /* The most values a range may give is 2^20, both ends included: exactly
     * that many load, one more is refused. */
    struct tf_kernel *full =
        expect_kernel_loads(params_text("c", "N: 64", "  B: {range: [1, 1048576]}\n", ""), &b);
    assert_int_equal(full->params[0].count, 1048576);
    assert_int_equal(full->params[0].ints[1048575], 1048576);
    tf_kernel_destroy(full);
    tf_bundle_destroy(b);
    expect_kernel_error(params_text("c", "N: 64", "  B: {range: [0, 1048576]}\n", ""), 9, 14,
                        "'range' of parameter 'B' gives more than 1048576 values");
    /* a default outside the range is refused as for a list */
    expect_kernel_error(params_text("c", "N: 64", "  B: {range: [1, 4]}\n", "default: {B: 5}\n"),
                        12, 14, "default for 'B' is integer 5, which is not one of its values "
                                "(1, 2, 3, 4)");
}

/* A value listed twice is refused wherever the two stand, also side by side
 * at the end of the list (broken/kernel_duplicate_value has them apart). */
static void test_duplicate_values_side_by_side(void **state)
{
    (void)state;
    expect_kernel_error(params_text("c", "N: 64", "  B: [1, 2, 2]\n", ""), 9, 13,
                        "duplicate value 2 in parameter 'B'");
    expect_kernel_error(params_text("c", "N: 64", "  B: [4, 4]\n", ""), 9, 10,
                        "duplicate value 4 in parameter 'B'");
    expect_kernel_error(params_text("c", "N: 64", "  L: [ikj, kij, kij]\n", ""), 9, 17,
                        "duplicate value 'kij' in parameter 'L'");
}

/* and, or, not are words of the expression language: nothing can be named so. */
static void test_keyword_names(void **state)
{
    (void)state;
    expect_kernel_error(params_text("c", "N: 64", "  and: [1, 2]\n", ""), 9, 3,
                        "parameter name 'and' is a word of the expression language (and, or, "
                        "not), so no expression could read it; rename it");
    expect_kernel_error(params_text("c", "N: 64", "  B: [1]\n  not: [1, 2]\n", ""), 10, 3,
                        "parameter name 'not' is a word");
    expect_kernel_error(params_text("c", "or: 64", "  B: [1]\n", ""), 7, 9,
                        "size name 'or' is a word of the expression language");
    /* a name that only starts like one is fine */
    struct tf_bundle *b;
    struct tf_kernel *k = expect_kernel_loads(
        params_text("c", "order: 64", "  android: [1, 2]\n", "constraints: [android <= order]\n"),
        &b);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* Issue 14 item 4: a parameter is -DNAME=VALUE before every header, so a name
 * the compiler's headers use (T, a template parameter of NVRTC's builtin
 * headers) is refused at its place, naming the reason. */
static void test_define_names(void **state)
{
    (void)state;
    expect_kernel_error(params_text("cuda", "N: 64", "  T: [1, 2]\n", ""), 9, 3,
                        "parameter name 'T' cannot be a compiler define (-DT=...) of a cuda "
                        "kernel: the CUDA headers NVRTC includes in every compile use it as an "
                        "identifier");
    expect_kernel_error(params_text("cuda", "N: 64", "  BX: [1]\n  width: [1, 2]\n", ""), 10, 3,
                        "parameter name 'width' cannot be a compiler define");
    expect_kernel_error(params_text("cuda", "N: 64", "  warpSize: [32]\n", ""), 9, 3,
                        "use it as an identifier");
    expect_kernel_error(params_text("cuda", "N: 64", "  class: [1]\n", ""), 9, 3,
                        "it is a C++ keyword (CUDA kernels are compiled as C++)");
    expect_kernel_error(params_text("c", "N: 64", "  int: [1]\n", ""), 9, 3,
                        "parameter name 'int' cannot be a compiler define (-Dint=...) of a c "
                        "kernel: it is a keyword of C and C++");
    expect_kernel_error(params_text("c", "N: 64", "  __TILE: [1]\n", ""), 9, 3,
                        "reserved to the compiler and its headers");
    expect_kernel_error(params_text("cuda", "N: 64", "  _Tile: [1]\n", ""), 9, 3,
                        "reserved to the compiler and its headers");
    expect_kernel_error(params_text("c", "N: 64", "  defined: [1]\n", ""), 9, 3,
                        "'defined' is an operator of the preprocessor");
    static const char *const toolkit[] = {"cudaStream_t", "CUDA_ARCH", "CU_X", "CUstream",
                                          "cuda_x", "cuda2"};
    for (size_t i = 0; i < sizeof toolkit / sizeof toolkit[0]; i++) {
        char line[64];
        snprintf(line, sizeof line, "  %s: [1]\n", toolkit[i]);
        expect_kernel_error(params_text("cuda", "N: 64", line, ""), 9, 3,
                            "belong to the CUDA toolkit");
    }
    /* hipRTC's headers: a CUDA kernel is one source for NVIDIA and AMD */
    expect_kernel_error(params_text("cuda", "N: 64", "  U: [1]\n", ""), 9, 3,
                        "parameter name 'U' cannot be a compiler define (-DU=...) of a cuda "
                        "kernel: the HIP headers hipRTC includes in every compile for AMD GPUs "
                        "use it as an identifier");
    expect_kernel_error(params_text("cuda", "N: 64", "  lane: [1]\n", ""), 9, 3,
                        "the HIP headers hipRTC includes");
    expect_kernel_error(params_text("cuda", "N: 64", "  hipStream_t: [1]\n", ""), 9, 3,
                        "names that begin with hip or HIP belong to the HIP toolkit");
    expect_kernel_error(params_text("cuda", "N: 64", "  HIP_X: [1]\n", ""), 9, 3,
                        "belong to the HIP toolkit");
    expect_kernel_error(params_text("cuda", "N: 64", "  TF_WARP: [1]\n", ""), 9, 3,
                        "belong to the portability header tunefarm.h");
    expect_kernel_error(params_text("cuda", "N: 64", "  tf_x: [1]\n", ""), 9, 3,
                        "belong to the portability header");
    /* an enum also defines NAME_value: tf with value x defines tf_x */
    expect_kernel_error(params_text("cuda", "N: 64", "  tf: [x, y]\n", ""), 9, 8,
                        "value 'x' of parameter 'tf' makes the compiler define tf_x (-Dtf_x=1), "
                        "which a cuda kernel cannot have: names that begin with TF_ or tf_ "
                        "belong to the portability header tunefarm.h; rename the value or the "
                        "parameter");

    /* what the compilers' headers do not use is fine: the capital letters but
     * T (NVRTC) and B F R U V (hipRTC), the usual names, and for a host kernel
     * the CUDA names too */
    char params[2048] = "";
    int n = 0;
    for (char c = 'A'; c <= 'Z'; c++)
        if (!strchr("TBFRUVN", c)) {
            snprintf(params + strlen(params), sizeof params - strlen(params), "  %c: [1]\n", c);
            n++;
        }
    strcat(params, "  BLOCK_SIZE_X: [1]\n  TILE: [1]\n  CUSTOM: [1]\n  cudax: [1]\n"
                   "  cuda: [1]\n  CU: [1]\n  tile_x: [1]\n  hip: [1]\n  hipx: [1]\n"
                   "  MODE: [plain, fused]\n");
    struct tf_bundle *b;
    struct tf_kernel *k = expect_kernel_loads(params_text("cuda", "N: 64", params, ""), &b);
    assert_int_equal(k->nparams, n + 10);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
    k = expect_kernel_loads(params_text("c", "N: 64",
                                        "  T: [1]\n  x: [1]\n  width: [1]\n  class: [1]\n"
                                        "  U: [1]\n  lane: [1]\n  hipStream_t: [1]\n",
                                        ""),
                            &b);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* The tables of schema/defines.c are scripts/compiler_names.py's output
 * (NVRTC, then hipRTC): every name in them is refused for CUDA and allowed
 * for C, and each is in strcmp order, which the lookup (bsearch) relies on. */
static int check_define_table(const char *text, const char *table)
{
    const char *at = strstr(text, table);
    assert_non_null(at);
    const char *end = strstr(at, "\n};");
    assert_non_null(end);
    char prev[128] = "";
    int n = 0;
    for (const char *q = strchr(at, '"'); q && q < end; q = strchr(q + 1, '"')) {
        const char *close = strchr(q + 1, '"');
        assert_non_null(close);
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(close - q - 1), q + 1);
        if (strcmp(prev, name) >= 0)
            fail_msg("%s not sorted: '%s' after '%s'", table, name, prev);
        if (tf_define_conflict(name, "cuda") == NULL)
            fail_msg("'%s' is in %s but allowed", name, table);
        if (tf_define_conflict(name, "c") != NULL)
            fail_msg("'%s' is refused for a host kernel", name);
        snprintf(prev, sizeof prev, "%s", name);
        n++;
        q = close;
    }
    return n;
}

static void test_define_table(void **state)
{
    (void)state;
    FILE *f = fopen("schema/defines.c", "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    assert_int_equal(check_define_table(text, "nvrtc_names[] = {"), 448);
    assert_int_equal(check_define_table(text, "hiprtc_names[] = {"), 57);
    assert_null(tf_define_conflict("N", "cuda"));
    assert_null(tf_define_conflict("BLOCK", "cuda"));
    assert_non_null(tf_define_conflict("T", "cuda"));
    assert_null(tf_define_conflict("T", "c"));
}

/* defines.c's prefix rules at the ends of their character ranges: '_' and
 * 'Z' is reserved (as '_' and 'A' is), "cuda" and '9' is the toolkit's (as
 * '0' is), "CU" and 'a' is (as 'z' is); one past each range is not. */
static void test_define_rules_at_their_edges(void **state)
{
    (void)state;
    static const char *const refused_everywhere[] = {"_A", "_Z", "_Zoom", "__", "__a"};
    for (size_t i = 0; i < sizeof refused_everywhere / sizeof refused_everywhere[0]; i++) {
        if (tf_define_conflict(refused_everywhere[i], "c") == NULL)
            fail_msg("'%s' allowed for a host kernel", refused_everywhere[i]);
        if (tf_define_conflict(refused_everywhere[i], "cuda") == NULL)
            fail_msg("'%s' allowed for a cuda kernel", refused_everywhere[i]);
    }
    static const char *const refused_cuda[] = {"cuda0x", "cuda9x", "cudaA", "cudaZ", "cuda_x",
                                               "CUarray", "CUa", "CUz", "CU_X", "CUDA",
                                               "hip0", "hip9", "hipA", "hipZ", "hip_",
                                               "TF_X", "tf_x"};
    for (size_t i = 0; i < sizeof refused_cuda / sizeof refused_cuda[0]; i++) {
        if (tf_define_conflict(refused_cuda[i], "cuda") == NULL)
            fail_msg("'%s' allowed for a cuda kernel", refused_cuda[i]);
        if (tf_define_conflict(refused_cuda[i], "c") != NULL)
            fail_msg("'%s' refused for a host kernel", refused_cuda[i]);
    }
    static const char *const allowed[] = {"_a", "_z", "_0", "cudax", "CUX", "CU0", "hipx",
                                          "TFX", "tfx"};
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        if (tf_define_conflict(allowed[i], "cuda") != NULL)
            fail_msg("'%s' refused for a cuda kernel: %s", allowed[i],
                     tf_define_conflict(allowed[i], "cuda"));
        assert_null(tf_define_conflict(allowed[i], "c"));
    }
}

/* A kernel whose input x is a `type` buffer with `init: INIT` (line 11). */
static char *init_text(const char *type, const char *init)
{
    return tf_xasprintf("name: ranged\nlanguage: c\nsource: tiny.c\nentry: saxpy\n"
                        "reference: {source: reference.c, entry: saxpy_reference}\n"
                        "problems:\n  one: {N: 64}\nparameters:\n  B: [1]\narguments:\n"
                        "  - {name: x, buffer: %s, size: 64, init: %s}\n"
                        "  - {name: y, buffer: float32, size: 64, output: true}\n",
                        type, init);
}

/* The column of init's value in init_text(type, ...), plus `plus`. */
static int init_col(const char *type, int plus)
{
    return (int)(strlen("  - {name: x, buffer: ") + strlen(type) + strlen(", size: 64, init: ")) +
           1 + plus;
}

/* Issue 14 item 7: init: {random: [LO, HI]}, values in [LO, HI). */
static void test_init_random_range(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_kernel *k = expect_kernel_loads(init_text("float32", "{random: [324, 325]}"), &b);
    const struct tf_arg *x = &k->args[0];
    assert_int_equal(x->init, TF_INIT_RANDOM);
    assert_true(x->init_range);
    assert_false(x->init_lo.is_float);
    assert_int_equal(x->init_lo.u.i, 324);
    assert_int_equal(x->init_hi.u.i, 325);
    assert_false(k->args[1].init_range); /* an output without init: poison */
    assert_int_equal(k->args[1].init, TF_INIT_POISON);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
    k = expect_kernel_loads(init_text("float64", "{random: [-0.5, 1e-3]}"), &b);
    assert_true(k->args[0].init_lo.is_float);
    assert_double_equal(k->args[0].init_lo.u.f, -0.5, 0);
    assert_double_equal(k->args[0].init_hi.u.f, 1e-3, 0);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
    k = expect_kernel_loads(init_text("int32", "{random: [-2147483648, 2147483648]}"), &b);
    assert_int_equal(k->args[0].init_lo.u.i, INT32_MIN);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
    k = expect_kernel_loads(init_text("int64", "random"), &b); /* the default range */
    assert_int_equal(k->args[0].init, TF_INIT_RANDOM);
    assert_false(k->args[0].init_range);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
    k = expect_kernel_loads(init_text("float32", "{random: [324, 324.00005]}"), &b);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    expect_kernel_error(init_text("float32", "{random: [1, 1]}"), 11, init_col("float32", 13),
                        "the random range of argument 'x' is [LO, HI) with HI > LO, found [1, 1]");
    expect_kernel_error(init_text("int64", "{random: [5, -5]}"), 11, init_col("int64", 13),
                        "with HI > LO, found [5, -5]");
    expect_kernel_error(init_text("int32", "{random: [1.5, 2]}"), 11, init_col("int32", 10),
                        "the random range of int32 buffer 'x' takes integers, found");
    expect_kernel_error(init_text("float32", "{random: [a, 2]}"), 11, init_col("float32", 10),
                        "the random range of float32 buffer 'x' takes numbers, found");
    expect_kernel_error(init_text("int32", "{random: [0, 2147483649]}"), 11,
                        init_col("int32", 9),
                        "the random range of int32 buffer 'x' reaches outside int32 "
                        "(-2147483648 up to 2147483648, HI excluded): declare it int64");
    expect_kernel_error(init_text("float32", "{random: [0.1, 0.10000000001]}"), 11,
                        init_col("float32", 9),
                        "the random range of float32 buffer 'x' holds no float32 value");
    expect_kernel_error(init_text("float32", "{random: [1e39, 2e39]}"), 11,
                        init_col("float32", 9), "holds no float32 value");
    expect_kernel_error(init_text("float64", "{random: [-1e308, 1e308]}"), 11,
                        init_col("float64", 9), "is too wide: HI - LO overflows");
    expect_kernel_error(init_text("float64", "{random: [.nan, 1]}"), 11, init_col("float64", 10),
                        "must be finite");
    expect_kernel_error(init_text("float32", "{random: [1, 2, 3]}"), 11, init_col("float32", 9),
                        "the random range of argument 'x' is [LO, HI] (LO included, HI not), "
                        "found 3 values");
    expect_kernel_error(init_text("float32", "{rand: [1, 2]}"), 11, init_col("float32", 1),
                        "did you mean 'random'?");
    expect_kernel_error(init_text("float32", "{random: 5}"), 11, init_col("float32", 9),
                        "must be a list");
    expect_kernel_error(init_text("float32", "bogus"), 11, init_col("float32", 0),
                        "'init' must be random, zero, ones or {random: [LO, HI]}, found 'bogus'");
}

/* Issue 14 item 7: max_shared_per_sm, the shared memory of one
 * multiprocessor, is a device property constraints read; `tunefarm compile`
 * takes it from the nominal device of each architecture. */
static void test_shared_per_sm(void **state)
{
    (void)state;
    assert_string_equal(tf_devprop_name(TF_DEVPROP_MAX_SHARED_PER_SM), "max_shared_per_sm");
    static const struct {
        const char *arch;
        int64_t per_sm;
    } nominal[] = {{"sm_70", 96 << 10},  {"sm_80", 164 << 10}, {"sm_86", 100 << 10},
                   {"sm_89", 100 << 10}, {"sm_90", 228 << 10}, {"gfx90a", 64 << 10},
                   {"gfx942", 64 << 10}};
    for (size_t i = 0; i < sizeof nominal / sizeof nominal[0]; i++) {
        struct tf_device dev;
        assert_int_equal(tf_device_for_arch(nominal[i].arch, &dev), 0);
        assert_int_equal(dev.props[TF_DEVPROP_MAX_SHARED_PER_SM], nominal[i].per_sm);
        assert_true(dev.props[TF_DEVPROP_MAX_SHARED_PER_SM] >=
                    dev.props[TF_DEVPROP_MAX_SHARED_OPTIN]);
    }
    /* two blocks of BX KiB of shared memory each must fit one SM */
    struct tf_bundle *b;
    struct tf_kernel *k = expect_kernel_loads(
        params_text("cuda", "N: 64", "  BX: {range: [16, 256, 16]}\n",
                    "constraints: [2 * BX * 1024 <= max_shared_per_sm]\n"),
        &b);
    struct tf_device dev;
    struct tf_value slots[64];
    struct tf_error err;
    int counts[2] = {0, 0};
    const char *archs[2] = {"sm_90", "gfx942"};
    for (int a = 0; a < 2; a++) {
        assert_int_equal(tf_device_for_arch(archs[a], &dev), 0);
        for (uint64_t c = 0; c < tf_kernel_cartesian(k); c++) {
            bool valid;
            tf_kernel_bind(k, c, 0, &dev, slots);
            assert_int_equal(tf_kernel_check(k, slots, &valid, &err), 0);
            counts[a] += valid;
        }
    }
    assert_int_equal(counts[0], 7); /* BX 16..112: 2 * 112 KiB <= 228 KiB */
    assert_int_equal(counts[1], 2); /* BX 16, 32: 2 * 32 KiB <= 64 KiB */
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* Issue 11 item 13: compile_jobs: 100000 tried ~32k threads per worker and
 * ended in "no worker offers a device"; it is refused at load, at its value. */
static void test_compile_jobs_cap(void **state)
{
    (void)state;
    const char *texts[] = {"name: cj\nkernels: [tiny]\ncompile_jobs: 100000\n",
                           "name: cj\nkernels: [tiny]\ncompile_jobs: 1024\n",
                           "name: cj\nkernels: [tiny]\ncompile_jobs: -1\n"};
    for (int i = 0; i < 3; i++) {
        struct tf_bundle *b = tf_bundle_create();
        struct tf_error err;
        tf_error_clear(&err);
        tf_bundle_add(b, FIX "jobs/cj.yaml", texts[i], strlen(texts[i]));
        struct tf_job *j = tf_job_load(FIX "jobs/cj.yaml", b, &err);
        if (i == 1) {
            assert_non_null(j);
            assert_int_equal(j->compile_jobs, 1024);
        } else {
            assert_null(j);
            assert_int_equal(err.line, 3);
            assert_int_equal(err.column, 15);
            assert_non_null(strstr(err.message, "'compile_jobs' (compiler processes per worker) "
                                                "must be between 0 and 1024"));
        }
        tf_job_destroy(j);
        tf_bundle_destroy(b);
    }
}

/* A job of `rest` after "name: bounds\nkernels: [tiny]\n", loaded from the
 * fixtures' jobs folder: the job, or NULL and *err. */
static struct tf_job *bounds_job(const char *rest, struct tf_error *err)
{
    char *text = tf_xasprintf("name: bounds\nkernels: [tiny]\n%s", rest);
    struct tf_bundle *b = tf_bundle_create();
    tf_error_clear(err);
    tf_bundle_add(b, FIX "jobs/bounds.yaml", text, strlen(text));
    struct tf_job *j = tf_job_load(FIX "jobs/bounds.yaml", b, err);
    tf_bundle_destroy(b);
    free(text);
    return j;
}

/* The job's documented ranges, at both ends: a value at the bound is taken,
 * one past it refused at its line:col. */
static void test_job_setting_bounds(void **state)
{
    (void)state;
    static const struct {
        const char *rest;
        int line, col;       /* 0: must load */
        const char *message;
    } cases[] = {
        {"search: {budget: 1}\n", 0, 0, NULL},
        {"search: {budget: 0}\n", 3, 18, "'budget' (configurations per kernel, problem and "
                                         "device class) must be > 0, found 0"},
        {"search: {top_k: 1000000}\n", 0, 0, NULL},
        {"search: {top_k: 1000001}\n", 3, 17, "'top_k' (how many screened configurations to "
                                              "re-measure strictly) must be between 1 and "
                                              "1000000, found 1000001"},
        {"search: {time_budget: 1e9}\n", 0, 0, NULL},
        {"search: {time_budget: 1000000001}\n", 3, 23,
         "'time_budget' must be > 0 and at most 1e+09, found 1000000001"},
        {"search: {patience: 3, noise: 1}\n", 0, 0, NULL},
        {"search: {patience: 3, noise: 1.5}\n", 3, 30, "'noise' must be >= 0 and at most 1"},
        /* the deadline must exceed max_time + energy_time: equal is too short */
        {"measure: {max_time: 1, energy_time: 0, timeout: 1}\n", 3, 49,
         "'timeout' (1 s) must exceed 'max_time' (1 s)"},
        {"measure: {max_time: 1, energy_time: 0.5, timeout: 1.5}\n", 3, 51,
         "'timeout' (1.5 s) must exceed 'max_time' + 'energy_time' (1 s + 0.5 s)"},
        {"measure: {max_time: 1, energy_time: 0.5, timeout: 1.6}\n", 0, 0, NULL},
        /* min_time may equal max_time */
        {"measure: {min_time: 1, max_time: 1}\n", 0, 0, NULL},
        {"measure: {min_time: 1.5, max_time: 1}\n", 3, 36,
         "'min_time' (1.5 s) must be <= 'max_time' (1 s)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct tf_error err;
        struct tf_job *j = bounds_job(cases[i].rest, &err);
        if (cases[i].line == 0) {
            if (j == NULL)
                fail_msg("'%s' refused: %d:%d %s", cases[i].rest, err.line, err.column,
                         err.message);
        } else if (j != NULL) {
            fail_msg("'%s' loaded", cases[i].rest);
        } else if (err.line != cases[i].line || err.column != cases[i].col ||
                   strstr(err.message, cases[i].message) == NULL) {
            fail_msg("'%s': got %d:%d '%s', expected %d:%d '...%s...'", cases[i].rest, err.line,
                     err.column, err.message, cases[i].line, cases[i].col, cases[i].message);
        }
        tf_job_destroy(j);
    }
    struct tf_error err;
    struct tf_job *j = bounds_job("search: {top_k: 1000000}\n", &err);
    assert_non_null(j);
    assert_int_equal(j->top_k, 1000000);
    tf_job_destroy(j);
}

/* The screening pass keeps measure's deadline and cache flushing unless
 * `screen` says otherwise (its other defaults are its own, cheaper ones). */
static void test_screen_inherits_measure(void **state)
{
    (void)state;
    struct tf_error err;
    struct tf_job *j =
        bounds_job("search: {top_k: 2}\nmeasure: {timeout: 30, flush_l2: true}\n", &err);
    if (j == NULL)
        fail_msg("%d:%d %s", err.line, err.column, err.message);
    assert_double_equal(j->measure.timeout, 30, 1e-12);
    assert_double_equal(j->screen.timeout, 30, 1e-12);
    assert_true(j->screen.flush_l2);
    assert_int_equal(j->screen.min_samples, 3);
    tf_job_destroy(j);
    j = bounds_job("search: {top_k: 2}\nmeasure: {timeout: 30}\nscreen: {timeout: 5}\n", &err);
    assert_non_null(j);
    assert_double_equal(j->screen.timeout, 5, 1e-12);
    tf_job_destroy(j);
}

/* Two kernel files of one kernel name are one kernel listed twice: the
 * archive keys its tables by the name, so their results would mix. */
static void test_job_kernel_name_twice(void **state)
{
    (void)state;
    unsetenv("TUNEFARM_KERNEL_PATH");
    struct tf_bundle *src = tf_bundle_create();
    struct tf_error err;
    static const char *const files[] = {"kernel.yaml", "tiny.c", "reference.c"};
    struct tf_bundle *b = tf_bundle_create();
    for (int i = 0; i < 3; i++) {
        char from[256], to[256];
        snprintf(from, sizeof from, FIX "kernels/tiny/%s", files[i]);
        snprintf(to, sizeof to, FIX "jobs/tiny_twin/%s", files[i]);
        const struct tf_bundle_file *f = tf_bundle_read(src, from, &err);
        assert_non_null(f);
        tf_bundle_add(b, to, f->data, f->size);
    }
    const char *text = "name: twins\nkernels:\n  - tiny\n  - tiny_twin/kernel.yaml\n";
    tf_bundle_add(b, FIX "jobs/twins.yaml", text, strlen(text));
    tf_error_clear(&err);
    struct tf_job *j = tf_job_load(FIX "jobs/twins.yaml", b, &err);
    if (j != NULL)
        fail_msg("two kernels named 'tiny' loaded");
    assert_string_equal(err.file, FIX "jobs/twins.yaml");
    assert_int_equal(err.line, 4);
    assert_int_equal(err.column, 5);
    if (strstr(err.message, "kernel 'tiny' is listed twice (first at line 3)") == NULL)
        fail_msg("%s:%d:%d: %s", err.file, err.line, err.column, err.message);
    tf_bundle_destroy(b);
    tf_bundle_destroy(src);
}

/* TUNEFARM_COMPILE_TIMEOUT, which the workers' compile deadline and the
 * coordinator's patience with a silent worker both read: unset or empty the
 * default, a positive number of seconds up to a day taken, anything else
 * refused naming the variable and its value (the default kept). */
static void test_compile_timeout(void **state)
{
    (void)state;
    struct tf_error err;
    double t = 0;
    unsetenv("TUNEFARM_COMPILE_TIMEOUT");
    assert_int_equal(tf_job_compile_timeout(&t, &err), 0);
    assert_double_equal(t, TF_COMPILE_TIMEOUT_DEFAULT, 0);
    setenv("TUNEFARM_COMPILE_TIMEOUT", "", 1);
    assert_int_equal(tf_job_compile_timeout(&t, &err), 0);
    assert_double_equal(t, TF_COMPILE_TIMEOUT_DEFAULT, 0);
    static const struct {
        const char *text;
        double seconds;
    } good[] = {{"2", 2}, {"0.5", 0.5}, {"600", 600}, {"86400", 86400}, {"1e3", 1000}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        setenv("TUNEFARM_COMPILE_TIMEOUT", good[i].text, 1);
        assert_int_equal(tf_job_compile_timeout(&t, &err), 0);
        assert_double_equal(t, good[i].seconds, 1e-12);
    }
    static const char *const bad[] = {"0", "-1", "soon", "2s", "2 ", "nan", "inf", "86401",
                                      "1e400"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("TUNEFARM_COMPILE_TIMEOUT", bad[i], 1);
        tf_error_clear(&err);
        t = 0;
        assert_int_not_equal(tf_job_compile_timeout(&t, &err), 0);
        assert_double_equal(t, TF_COMPILE_TIMEOUT_DEFAULT, 0);
        char want[64];
        snprintf(want, sizeof want, "TUNEFARM_COMPILE_TIMEOUT='%s': not a number of seconds",
                 bad[i]);
        if (strstr(err.message, want) == NULL)
            fail_msg("'%s': %s", bad[i], err.message);
    }
    unsetenv("TUNEFARM_COMPILE_TIMEOUT");
}

/* ---- issue 14: sizes compiled in, the reference's parameters ---------------------------- */

/* A kernel like a port needs it: two sizes, STEPS the reference depends on,
 * WORK it does not; `defines_line` and `reference_extra` vary per case. */
static char *port_text(const char *defines_line, const char *reference_extra)
{
    return tf_xasprintf("name: port\nlanguage: c\nsource: tiny.c\nentry: saxpy\n"
                        "%s"
                        "reference: {source: reference.c, entry: saxpy_reference%s}\n"
                        "problems:\n  small: {NX: 1000, NY: 8}\n  large: {NX: 5000, NY: 16}\n"
                        "parameters:\n  STEPS: [1, 2, 4]\n  WORK: [10, 20]\n  PIPE: [one, two]\n"
                        "arguments:\n"
                        "  - {name: y, buffer: float32, size: NX * NY, output: true}\n"
                        "  - {name: steps, scalar: int32, value: STEPS}\n"
                        "  - {name: work, scalar: int64, value: NX * WORK}\n",
                        defines_line, reference_extra);
}

/* Item 1: `defines:` lists sizes (or `all`) and each variant gets them for its
 * problem after the parameters' defines. */
static void test_size_defines(void **state)
{
    (void)state;
    struct tf_bundle *b;
    const char *both = ", depends_on: [STEPS], independent_of: [WORK]";
    struct tf_kernel *k = expect_kernel_loads(port_text("defines: [NY]\n", both), &b);
    assert_int_equal(k->ndefine_sizes, 1);
    char *defs[8];
    assert_int_equal(tf_kernel_size_defines(k, 0, defs, 8), 1);
    assert_string_equal(defs[0], "-DNY=8");
    free(defs[0]);
    assert_int_equal(tf_kernel_size_defines(k, 1, defs, 8), 1);
    assert_string_equal(defs[0], "-DNY=16");
    free(defs[0]);
    assert_int_equal(tf_kernel_size_defines(k, 2, defs, 8), 0); /* no such problem */
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    k = expect_kernel_loads(port_text("defines: all\n", both), &b);
    assert_int_equal(tf_kernel_size_defines(k, 1, defs, 8), 2);
    assert_string_equal(defs[0], "-DNX=5000");
    assert_string_equal(defs[1], "-DNY=16");
    free(defs[0]);
    free(defs[1]);
    assert_int_equal(tf_kernel_size_defines(k, 1, defs, 1), 1); /* never past max */
    free(defs[0]);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    /* without `defines:` nothing, as before */
    k = expect_kernel_loads(port_text("", both), &b);
    assert_int_equal(tf_kernel_size_defines(k, 0, defs, 8), 0);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    expect_kernel_error(port_text("defines: [NZ]\n", both), 5, 11,
                        "'defines' names 'NZ', which is not a problem size (sizes: NX, NY)");
    expect_kernel_error(port_text("defines: [STEPS]\n", both), 5, 11,
                        "not a problem size (sizes: NX, NY); parameters are always defined, "
                        "list only sizes");
    expect_kernel_error(port_text("defines: [NX, NY, NX]\n", both), 5, 19,
                        "'defines' names size 'NX' twice");
    expect_kernel_error(port_text("defines: {NX: 1}\n", both), 5, 10,
                        "'defines' must be a list of problem sizes to compile in (e.g. [NX]) "
                        "or 'all', found a mapping");
    expect_kernel_error(port_text("defines: everything\n", both), 5, 10,
                        "or 'all', found string 'everything'");
    expect_kernel_error(port_text("defines: [\"N-X\"]\n", both), 5, 11, "defines item");

    /* a defined size obeys the parameters' rule of names (schema/defines.h),
     * and may not be an enum value's define; undefined, it may be anything */
    static const char sized[] = "name: sized\nlanguage: c\nsource: tiny.c\nentry: saxpy\n%s"
                                "reference: {source: reference.c, entry: saxpy_reference}\n"
                                "problems:\n  one: {_N: 8, PIPE_two: 2}\n"
                                "parameters:\n  PIPE: [one, two]\n"
                                "arguments:\n  - {name: y, buffer: float32, size: 64, "
                                "output: true}\n";
    k = expect_kernel_loads(tf_xasprintf(sized, ""), &b);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
    expect_kernel_error(tf_xasprintf(sized, "defines: [_N]\n"), 5, 11,
                        "size '_N' cannot be a compiler define (-D_N=...) of a c kernel: ");
    expect_kernel_error(tf_xasprintf(sized, "defines: all\n"), 5, 10,
                        "size '_N' cannot be a compiler define");
    expect_kernel_error(tf_xasprintf(sized, "defines: [PIPE_two]\n"), 5, 11,
                        "size 'PIPE_two' would be defined twice: value 'two' of enum parameter "
                        "'PIPE' defines PIPE_two=1 too");
}

/* Items 2 and 3: an argument that reads a parameter needs the reference to
 * say how it relates to it; depends_on gives the reference those values,
 * after the sizes, at the indices its TF_REF_ defines name. */
static void test_reference_params(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_kernel *k = expect_kernel_loads(
        port_text("", ", depends_on: [STEPS, PIPE], independent_of: [WORK]"), &b);
    assert_int_equal(k->nref_depends, 2);
    assert_int_equal(k->ref_depends[0], param_index(k, "STEPS"));
    assert_int_equal(k->ref_depends[1], param_index(k, "PIPE"));
    assert_int_equal(k->nref_independent, 1);
    char *defs[8];
    assert_int_equal(tf_kernel_reference_defines(k, defs, 8), 4);
    /* three arguments, then NX, NY, then STEPS, PIPE */
    assert_string_equal(defs[0], "-DTF_REF_NX=3");
    assert_string_equal(defs[1], "-DTF_REF_NY=4");
    assert_string_equal(defs[2], "-DTF_REF_STEPS=5");
    assert_string_equal(defs[3], "-DTF_REF_PIPE=6");
    for (int i = 0; i < 4; i++)
        free(defs[i]);
    /* the values a configuration gives them: STEPS=4, PIPE=two (index 1) */
    struct tf_value *slots = tf_xcalloc((size_t)k->nslots, sizeof *slots);
    int digits[3] = {2, 0, 1};
    tf_kernel_bind(k, tf_kernel_encode(k, digits), 0, NULL, slots);
    int64_t values[2];
    tf_kernel_reference_values(k, slots, values);
    assert_int_equal(values[0], 4);
    assert_int_equal(values[1], 1);
    free(slots);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    /* the sizes are there for every reference, declared or not */
    k = expect_kernel_loads(port_text("", ", independent_of: [STEPS, WORK]"), &b);
    assert_int_equal(k->nref_depends, 0);
    assert_int_equal(tf_kernel_reference_defines(k, defs, 8), 2);
    assert_string_equal(defs[1], "-DTF_REF_NY=4");
    free(defs[0]);
    free(defs[1]);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);

    /* `steps` reads STEPS, which neither list names: refused at its value */
    expect_kernel_error(port_text("", ", independent_of: [WORK]"), 15, 41,
                        "argument 'steps' reads parameter 'STEPS', but the reference does not "
                        "say whether its outputs depend on it");
    expect_kernel_error(port_text("", ", independent_of: [WORK]"), 15, 41,
                        "'depends_on: [STEPS]' (the reference runs once per value of STEPS and "
                        "is given it) or, if the expected outputs are the same whatever its "
                        "value, 'independent_of: [STEPS]'");
    expect_kernel_error(port_text("", ", depends_on: [STEPS]"), 16, 40,
                        "argument 'work' reads parameter 'WORK'");
    expect_kernel_error(port_text("", ", depends_on: [STEPS, NX], independent_of: [WORK]"), 5,
                        78, "reference depends_on names 'NX', which is not a parameter "
                            "(parameters: STEPS, WORK, PIPE)");
    expect_kernel_error(port_text("", ", depends_on: [STEPS, STEPS], independent_of: [WORK]"),
                        5, 78, "reference depends_on names parameter 'STEPS' twice");
    expect_kernel_error(port_text("", ", depends_on: [STEPS, WORK], independent_of: [WORK]"),
                        5, 102, "parameter 'WORK' is in both depends_on and independent_of");
    expect_kernel_error(port_text("", ", depends_on: STEPS, independent_of: [WORK]"), 5, 70,
                        "'reference depends_on' must be a list");
    expect_kernel_error(port_text("", ", depend_on: [STEPS]"), 5, 58,
                        "did you mean 'depends_on'?");
}

/* ---- the broken-file table -------------------------------------------------------------- */

struct broken_case {
    const char *path;     /* under tests/unit/broken/ */
    const char *where;    /* expected "file:line:col" */
    const char *message;  /* expected substring */
};

#define K(dir) BROKEN dir "/kernel.yaml"
static const struct broken_case broken_cases[] = {
    /* YAML itself */
    {K("kernel_yaml_syntax"), K("kernel_yaml_syntax") ":10:7",
     "invalid YAML: mapping values are not allowed in this context"},
    {BROKEN "job_tab.yaml", BROKEN "job_tab.yaml:2:1", "invalid YAML: found a tab character"},
    {BROKEN "job_bad_utf8.yaml", BROKEN "job_bad_utf8.yaml:3:15", "UTF-8"},
    {K("kernel_alias"), K("kernel_alias") ":8:8", "aliases are not supported (found '*p')"},
    {BROKEN "job_alias.yaml", BROKEN "job_alias.yaml:2:14", "aliases are not supported"},
    {BROKEN "job_not_mapping.yaml", BROKEN "job_not_mapping.yaml:1:1",
     "top level must be a mapping of keys ('name: ...'), found a list"},
    {BROKEN "job_empty.yaml", BROKEN "job_empty.yaml:1:1", "the file is empty"},
    {BROKEN "job_two_documents.yaml", BROKEN "job_two_documents.yaml:4:1",
     "exactly one document"},
    {BROKEN "job_deep.yaml", BROKEN "job_deep.yaml:2:73", "nested more than 64 levels"},
    {BROKEN "job_many_nodes.yaml", BROKEN "job_many_nodes.yaml:2:29996",
     "more than 10000 nodes"},
    /* kernel files */
    {K("kernel_unknown_key"), K("kernel_unknown_key") ":8:1",
     "unknown key 'paramters' in kernel file; did you mean 'parameters'? (expected one of: "
     "name, description, language,"},
    {K("kernel_dup_key"), K("kernel_dup_key") ":13:1",
     "duplicate key 'entry' in kernel file (first given at line 4)"},
    {K("kernel_wrong_type"), K("kernel_wrong_type") ":13:16",
     "'rtol' must be a number, found string 'tight'"},
    {K("kernel_bad_language"), K("kernel_bad_language") ":2:11",
     "'language' must be 'c' (host backend) or 'cuda'"},
    {K("kernel_constraint_undefined"), K("kernel_constraint_undefined") ":12:9",
     "in constraint: undefined name 'BX'"},
    {K("kernel_quoted_constraint"), K("kernel_quoted_constraint") ":11:15",
     "undefined name 'nope'"},
    {K("kernel_time_in_constraint"), K("kernel_time_in_constraint") ":10:15",
     "only available in metrics"},
    {K("kernel_energy_in_constraint"), K("kernel_energy_in_constraint") ":10:15",
     "energy_j, the measured energy of a launch, is only available in metrics"},
    {K("kernel_metric_undefined"), K("kernel_metric_undefined") ":14:16",
     "in metric 'gbs': undefined name 'time'"},
    {K("kernel_empty_param"), K("kernel_empty_param") ":10:6", "parameter 'C' has no values"},
    {K("kernel_missing_entry"), K("kernel_missing_entry") ":2:1",
     "kernel file has no 'entry' (the name of the function to tune)"},
    {K("kernel_duplicate_value"), K("kernel_duplicate_value") ":9:16",
     "duplicate value 2 in parameter 'B'"},
    {K("kernel_mixed_param"), K("kernel_mixed_param") ":9:10",
     "parameter 'B' has integer values, but this one is string 'two'"},
    {K("kernel_problem_missing_size"), K("kernel_problem_missing_size") ":8:8",
     "problem 'two' has no size 'M'"},
    {K("kernel_problem_extra_size"), K("kernel_problem_extra_size") ":8:17",
     "problem 'two' defines size 'M', which problem 'one' does not"},
    {K("kernel_negative_size"), K("kernel_negative_size") ":7:12",
     "size 'N' of problem 'one' must be >= 0, found -36"},
    {K("kernel_missing_source"), K("kernel_missing_source") ":3:9",
     "cannot read the kernel source: cannot open "
     "'tests/unit/broken/kernel_missing_source/nosuch.c'"},
    {K("kernel_no_output"), K("kernel_no_output") ":11:3", "no argument is an output buffer"},
    {K("kernel_bad_default"), K("kernel_bad_default") ":11:20",
     "default for 'L' is string 'jik', which is not one of its values (ikj, kij)"},
    {K("kernel_default_not_listed"), K("kernel_default_not_listed") ":12:14",
     "default for 'B' is N // 32, which gives 3 for problem 'odd', not one of its values "
     "(1, 2, 4)"},
    {K("kernel_default_reads_devprop"), K("kernel_default_reads_devprop") ":12:13",
     "in default for 'B': undefined name 'max_threads' (known: N); a default may read only "
     "the problem sizes"},
    {K("kernel_default_eval_error"), K("kernel_default_eval_error") ":12:22",
     "default for 'B' (128 // (N - 64)) cannot be evaluated for problem 'exact': "},
    {K("kernel_default_null"), K("kernel_default_null") ":11:14",
     "default for 'B' is an empty value, which is not one of its values (1, 2, 4) nor an "
     "expression over the problem sizes"},
    {K("kernel_param_reserved"), K("kernel_param_reserved") ":10:3",
     "parameter name 'warp_size' is reserved"},
    {K("kernel_size_reserved"), K("kernel_size_reserved") ":7:16",
     "size name 'default_config' is reserved (a column of the archive's problems table)"},
    {K("kernel_param_is_size"), K("kernel_param_is_size") ":9:3",
     "parameter 'N' has the name of a problem size"},
    {K("kernel_too_many_metrics"), K("kernel_too_many_metrics") ":13:35",
     "at most 4 are supported"},
    {K("kernel_launch_dims"), K("kernel_launch_dims") ":10:16",
     "launch grid must list 1 to 3 expressions"},
    /* Review K: a C kernel's launch was evaluated, grid [0] made every
     * configuration invalid with no position. */
    {K("kernel_c_launch"), K("kernel_c_launch") ":10:9",
     "'launch' is for GPU kernels (language cuda or hip): a C kernel's entry is called once"},
    {K("kernel_space_too_big"), K("kernel_space_too_big") ":9:3", "2^64 or more"},
    /* YAML's true/false are booleans, not names: as enum values true would be index 0 */
    {K("kernel_bool_param"), K("kernel_bool_param") ":10:12",
     "parameter 'SHARED' lists boolean true: write 1 and 0 (an integer parameter, so that "
     "#if SHARED means what it says)"},
    /* a size that reads only problem sizes is known at load, as a scalar's value is */
    {K("kernel_buffer_size_negative"), K("kernel_buffer_size_negative") ":13:38",
     "size of buffer 'y' (N - 32) for problem 'two' is -16 elements; a size must be a whole "
     "number >= 0"},
    {K("kernel_buffer_size_overflow"), K("kernel_buffer_size_overflow") ":12:38",
     "size of buffer 'y' (N * 2 ** 60) cannot be evaluated for problem 'one': integer "
     "overflow"},
    /* job files */
    {BROKEN "job_bad_budget.yaml", BROKEN "job_bad_budget.yaml:6:11",
     "'budget' must be an integer, found string 'ten'"},
    {BROKEN "job_unknown_problem.yaml", BROKEN "job_unknown_problem.yaml:4:21",
     "kernel 'tiny' has no problem 'huge' (its problems: one, two)"},
    {BROKEN "job_unknown_kernel.yaml", BROKEN "job_unknown_kernel.yaml:3:14",
     "kernel 'nosuch_kernel' not found: no nosuch_kernel/kernel.yaml in any of: "
     "tests/unit/broken, tests/unit/broken/../kernels, "},
    /* (job_bad_strategy.yaml, strategy genetic, and job_budget_brute_force.yaml
     * are valid jobs since adaptive strategies and brute-force budgets came;
     * strategy names and options are checked by the coordinator now:
     * tests/unit/test_strategy.c, test_check_job_search.) */
    {BROKEN "job_random_no_budget.yaml", BROKEN "job_random_no_budget.yaml:5:3",
     "strategy 'random' needs a 'budget'"},
    {BROKEN "job_bad_measure.yaml", BROKEN "job_bad_measure.yaml:6:14",
     "'max_noise' is a relative standard deviation and must be between 0 and 1"},
    {BROKEN "job_energy_time.yaml", BROKEN "job_energy_time.yaml:6:16",
     "'energy_time' must be a number of seconds from 0 (no energy) to 60, found -0.5"},
    {BROKEN "job_energy_deadline.yaml", BROKEN "job_energy_deadline.yaml:4:49",
     "'timeout' (2.5 s) must exceed 'max_time' + 'energy_time' (1 s + 2 s)"},
    {BROKEN "job_min_gt_max_samples.yaml", BROKEN "job_min_gt_max_samples.yaml:4:41",
     "'max_samples' (10) must be >= 'min_samples' (20)"},
    {BROKEN "job_min_samples_zero.yaml", BROKEN "job_min_samples_zero.yaml:4:24",
     "'min_samples' must be between 1 and"},
    {BROKEN "job_bad_checkpoint.yaml", BROKEN "job_bad_checkpoint.yaml:4:13",
     "'checkpoint' must be a number of seconds > 0, found -1"},
    {BROKEN "job_typo_key.yaml", BROKEN "job_typo_key.yaml:4:1",
     "unknown key 'serach' in job file; did you mean 'search'?"},
    {BROKEN "job_missing_kernels.yaml", BROKEN "job_missing_kernels.yaml:2:1",
     "job file has no 'kernels'"},
    {BROKEN "job_kernels_empty.yaml", BROKEN "job_kernels_empty.yaml:2:10",
     "'kernels' is empty"},
    {BROKEN "job_bad_name.yaml", BROKEN "job_bad_name.yaml:1:7",
     "'name' must be an identifier"},
    {BROKEN "job_duplicate_kernel.yaml", BROKEN "job_duplicate_kernel.yaml:5:13",
     "kernel 'tiny' is listed twice (first at line 3)"},
    /* an error inside a kernel is reported in the kernel file, not the job */
    {BROKEN "job_broken_kernel.yaml", K("kernel_unknown_key") ":8:1",
     "unknown key 'paramters'"},
    {BROKEN "no_such_job.yaml", BROKEN "no_such_job.yaml:0:0",
     "cannot open 'tests/unit/broken/no_such_job.yaml'"},
};

/* The loader keeps search.strategy as written, with its position, and picks
 * the path from the name alone (schema/ knows no strategy registry; the
 * coordinator checks the name: test_strategy.c, test_check_job_search). */
static void test_job_search_raw(void **state)
{
    (void)state;
    unsetenv("TUNEFARM_KERNEL_PATH");
    struct tf_bundle *b = tf_bundle_create();
    struct tf_error err;
    tf_error_clear(&err);
    struct tf_job *job = tf_job_load(BROKEN "job_bad_strategy.yaml", b, &err);
    if (!job)
        fail_msg("%s:%d:%d: %s", err.file, err.line, err.column, err.message);
    assert_int_equal(job->strategy, TF_STRATEGY_ADAPTIVE);
    assert_string_equal(job->strategy_name, "genetic");
    assert_int_equal(job->strategy_line, 4);
    assert_int_equal(job->strategy_col, 20);
    tf_job_destroy(job);
    tf_bundle_destroy(b);
    /* The default: brute force, no position. */
    b = tf_bundle_create();
    job = tf_job_load(FIX "jobs/minimal.yaml", b, &err);
    assert_non_null(job);
    assert_string_equal(job->strategy_name, "brute_force");
    assert_int_equal(job->strategy_line, 0);
    tf_job_destroy(job);
    tf_bundle_destroy(b);
}

static void test_broken_files(void **state)
{
    (void)state;
    unsetenv("TUNEFARM_KERNEL_PATH");
    int failures = 0;
    for (size_t i = 0; i < sizeof broken_cases / sizeof broken_cases[0]; i++) {
        const struct broken_case *c = &broken_cases[i];
        struct tf_bundle *b = tf_bundle_create();
        struct tf_error err;
        tf_error_clear(&err);
        bool is_kernel = strstr(c->path, "/kernel.yaml") != NULL;
        void *obj = is_kernel ? (void *)tf_kernel_load(c->path, b, &err)
                              : (void *)tf_job_load(c->path, b, &err);
        char where[700];
        snprintf(where, sizeof where, "%s:%d:%d", err.file, err.line, err.column);
        if (obj != NULL) {
            fprintf(stderr, "FAIL %s: loaded, expected an error\n", c->path);
            failures++;
            if (is_kernel)
                tf_kernel_destroy(obj);
            else
                tf_job_destroy(obj);
        } else if (strcmp(where, c->where) != 0 || !strstr(err.message, c->message) ||
                   err.code == TF_ERR_NONE) {
            fprintf(stderr, "FAIL %s:\n  got      %s: %s\n  expected %s: ...%s...\n", c->path,
                    where, err.message, c->where, c->message);
            failures++;
        }
        tf_bundle_destroy(b);
    }
    assert_int_equal(failures, 0);
}

/* ---- hostile input ---------------------------------------------------------------------- */

/* Every prefix of a real kernel file must load or fail cleanly, never crash. */
static void test_truncation_sweep(void **state)
{
    (void)state;
    struct tf_bundle *src = tf_bundle_create();
    struct tf_error err;
    const struct tf_bundle_file *f = tf_bundle_read(src, "kernels/gemm/kernel.yaml", &err);
    assert_non_null(f);
    const char *yaml = f->data;
    size_t size = f->size;
    const char *c_src = tf_bundle_read(src, "kernels/gemm/gemm.c", &err)->data;
    const char *r_src = tf_bundle_read(src, "kernels/gemm/reference.c", &err)->data;
    int loaded = 0, failed = 0;
    for (size_t n = 0; n <= size; n += 3) {
        struct tf_bundle *b = tf_bundle_create();
        b->sealed = true;
        tf_bundle_add(b, "k/kernel.yaml", yaml, n);
        tf_bundle_add(b, "k/gemm.c", c_src, strlen(c_src));
        tf_bundle_add(b, "k/reference.c", r_src, strlen(r_src));
        tf_error_clear(&err);
        struct tf_kernel *k = tf_kernel_load("k/kernel.yaml", b, &err);
        if (k) {
            loaded++;
        } else {
            failed++;
            /* A failure always says something, located in the file. */
            assert_true(err.message[0] != '\0');
            assert_string_equal(err.file, "k/kernel.yaml");
            assert_true(err.line >= 1);
        }
        tf_kernel_destroy(k);
        tf_bundle_destroy(b);
    }
    assert_true(failed > 0);
    assert_true(loaded >= 1); /* the whole file, at least */
    tf_bundle_destroy(src);
}

/* ---- yamldoc scalars ------------------------------------------------------------------- */

static void test_ydoc_scalars(void **state)
{
    (void)state;
    const char *text = "a: 10\nb: '10'\nc: 1e-4\nd: ten\ne: ~\nf: true\ng: 0x1F\nh: .5\n"
                       "i: 99999999999999999999\nj: -7\nk: \"x\"\n";
    struct tf_ydoc d;
    struct tf_error err;
    tf_error_clear(&err);
    assert_int_equal(tf_ydoc_load(&d, "mem.yaml", text, strlen(text), &err), 0);
    yaml_node_t *root = tf_ydoc_root(&d);
    assert_int_equal(tf_ydoc_kind(tf_ydoc_get(&d, root, "a")), TF_YS_INT);
    assert_int_equal(tf_ydoc_kind(tf_ydoc_get(&d, root, "b")), TF_YS_STRING);
    assert_int_equal(tf_ydoc_kind(tf_ydoc_get(&d, root, "c")), TF_YS_FLOAT);
    assert_int_equal(tf_ydoc_kind(tf_ydoc_get(&d, root, "d")), TF_YS_STRING);
    assert_int_equal(tf_ydoc_kind(tf_ydoc_get(&d, root, "e")), TF_YS_NULL);
    assert_int_equal(tf_ydoc_kind(tf_ydoc_get(&d, root, "f")), TF_YS_BOOL);
    assert_int_equal(tf_ydoc_kind(tf_ydoc_get(&d, root, "h")), TF_YS_FLOAT);
    assert_int_equal(tf_ydoc_kind(root), -1);
    int64_t i;
    double x;
    bool flag;
    const char *s;
    assert_int_equal(tf_ydoc_int(&d, tf_ydoc_get(&d, root, "g"), "g", &i, &err), 0);
    assert_int_equal(i, 31);
    assert_int_equal(tf_ydoc_int(&d, tf_ydoc_get(&d, root, "j"), "j", &i, &err), 0);
    assert_int_equal(i, -7);
    assert_int_equal(tf_ydoc_number(&d, tf_ydoc_get(&d, root, "c"), "c", &x, &err), 0);
    assert_double_equal(x, 1e-4, 1e-18);
    assert_int_equal(tf_ydoc_bool(&d, tf_ydoc_get(&d, root, "f"), "f", &flag, &err), 0);
    assert_true(flag);
    assert_int_equal(tf_ydoc_string(&d, tf_ydoc_get(&d, root, "k"), "k", &s, &err), 0);
    assert_string_equal(s, "x");
    /* Failures name the key, the expectation and what was found, at the value. */
    assert_int_equal(tf_ydoc_int(&d, tf_ydoc_get(&d, root, "b"), "b", &i, &err), -1);
    assert_string_equal(err.message, "'b' must be an integer, found string '10'");
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 4);
    assert_int_equal(tf_ydoc_int(&d, tf_ydoc_get(&d, root, "i"), "i", &i, &err), -1);
    assert_non_null(strstr(err.message, "out of range"));
    assert_int_equal(tf_ydoc_string(&d, tf_ydoc_get(&d, root, "e"), "e", &s, &err), -1);
    assert_non_null(strstr(err.message, "must be a string, found null"));
    assert_int_equal(tf_ydoc_bool(&d, tf_ydoc_get(&d, root, "a"), "a", &flag, &err), -1);
    assert_non_null(strstr(err.message, "must be true or false, found integer 10"));
    assert_int_equal(tf_ydoc_expect_seq(&d, root, "root", &err), -1);
    assert_non_null(strstr(err.message, "'root' must be a list, found a mapping"));
    assert_null(tf_ydoc_get(&d, root, "zz"));
    assert_null(tf_ydoc_map_value(&d, root, 99));
    assert_null(tf_ydoc_seq_item(&d, root, 0));
    tf_ydoc_free(&d);
    tf_ydoc_free(&d); /* idempotent */

    assert_int_equal(tf_ydoc_edit_distance("paramters", "parameters", 2), 1);
    assert_int_equal(tf_ydoc_edit_distance("kitten", "sitting", 5), 3);
    assert_int_equal(tf_ydoc_edit_distance("abc", "xyz", 2), 3); /* capped at cap + 1 */
    assert_true(tf_ydoc_is_ident("_a9"));
    assert_false(tf_ydoc_is_ident("9a"));
    assert_false(tf_ydoc_is_ident(""));
    assert_false(tf_ydoc_is_ident("a-b"));
}

/* yamldoc at its edges: an identifier of 255 bytes is taken and one of 256
 * refused; 0o17 is 15 (octal, not decimal 17); "1e" (an exponent without
 * digits) is text, not the number 1; -.inf is minus infinity; "1.5e+3" and
 * ".5E-1" are floats. */
static void test_ydoc_edges(void **state)
{
    (void)state;
    char long_ok[256], long_bad[257];
    memset(long_ok, 'a', 255);
    long_ok[255] = '\0';
    memset(long_bad, 'b', 256);
    long_bad[256] = '\0';
    char *text = tf_xasprintf("o: 0o17\ne: 1e\nm: -.inf\np: +.inf\nf: 1.5e+3\ng: .5E-1\n"
                              "x: 1e+\nok: %s\nbad: %s\n", long_ok, long_bad);
    struct tf_ydoc d;
    struct tf_error err;
    tf_error_clear(&err);
    assert_int_equal(tf_ydoc_load(&d, "mem.yaml", text, strlen(text), &err), 0);
    yaml_node_t *root = tf_ydoc_root(&d);
    int64_t i;
    double x;
    const char *s;
    assert_int_equal(tf_ydoc_int(&d, tf_ydoc_get(&d, root, "o"), "o", &i, &err), 0);
    assert_int_equal(i, 15);
    assert_int_equal(tf_ydoc_kind(tf_ydoc_get(&d, root, "e")), TF_YS_STRING);
    assert_int_equal(tf_ydoc_kind(tf_ydoc_get(&d, root, "x")), TF_YS_STRING);
    assert_int_equal(tf_ydoc_number(&d, tf_ydoc_get(&d, root, "e"), "e", &x, &err), -1);
    assert_non_null(strstr(err.message, "'e' must be a number, found"));
    assert_int_equal(tf_ydoc_number(&d, tf_ydoc_get(&d, root, "m"), "m", &x, &err), 0);
    assert_true(isinf(x) && x < 0);
    assert_int_equal(tf_ydoc_number(&d, tf_ydoc_get(&d, root, "p"), "p", &x, &err), 0);
    assert_true(isinf(x) && x > 0);
    assert_int_equal(tf_ydoc_number(&d, tf_ydoc_get(&d, root, "f"), "f", &x, &err), 0);
    assert_double_equal(x, 1500, 0);
    assert_int_equal(tf_ydoc_number(&d, tf_ydoc_get(&d, root, "g"), "g", &x, &err), 0);
    assert_double_equal(x, 0.05, 1e-17);
    assert_int_equal(tf_ydoc_ident(&d, tf_ydoc_get(&d, root, "ok"), "ok", &s, &err), 0);
    assert_int_equal(strlen(s), 255);
    assert_int_equal(tf_ydoc_ident(&d, tf_ydoc_get(&d, root, "bad"), "bad", &s, &err), -1);
    assert_non_null(strstr(err.message, "'bad' is 256 bytes long: at most 255"));
    tf_ydoc_free(&d);
    free(text);
}

/* schema/hash.c is SHA-256 (the archive's job_hash of an imported file is
 * compared with sha256sum's): FIPS 180-2's vectors, one of them 56 bytes (the
 * padding then takes a second block), 55 and 64 bytes, and a million 'a's fed
 * unevenly. */
static void test_sha256_vectors(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        /* 55 bytes: the padding fits the block; 64: a block of its own */
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"}};
    char hex[65];
    struct tf_sha256 h;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tf_sha256_init(&h);
        tf_sha256_update(&h, cases[i][0], strlen(cases[i][0]));
        tf_sha256_hex(&h, hex);
        assert_string_equal(hex, cases[i][1]);
    }
    char a[1000];
    memset(a, 'a', sizeof a);
    tf_sha256_init(&h);
    for (size_t done = 0, step = 1; done < 1000000; done += step, step = step % 997 + 1) {
        if (done + step > 1000000)
            step = 1000000 - done;
        tf_sha256_update(&h, a, step);
    }
    tf_sha256_hex(&h, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* update_str hashes the terminator too: "abc" and its NUL. */
    char with_nul[65];
    tf_sha256_init(&h);
    tf_sha256_update(&h, "abc", 4);
    tf_sha256_hex(&h, with_nul);
    tf_sha256_init(&h);
    tf_sha256_update_str(&h, "abc");
    tf_sha256_hex(&h, hex);
    assert_string_equal(hex, with_nul);
}

/* The bundle hash's separations: a file's size is hashed, so ("a": "b",
 * "c": "d") is not ("a": "b" "c\0" "d"); a file beside the job's folder whose
 * name begins with the folder's ("/d/bc" next to "/d/b") keeps its full path
 * (it is not "/x.c"). tf_path_clean fills its buffer exactly; tf_path_dir of
 * a file in the root is "/". */
static void test_bundle_hash_separations(void **state)
{
    (void)state;
    char h1[65], h2[65];
    struct tf_bundle *p1 = tf_bundle_create(), *p2 = tf_bundle_create();
    tf_bundle_add(p1, "a", "b", 1);
    tf_bundle_add(p1, "c", "d", 1);
    tf_bundle_add(p2, "a", "bc\0d", 4);
    tf_bundle_hash(p1, h1);
    tf_bundle_hash(p2, h2);
    assert_string_not_equal(h1, h2);
    tf_bundle_destroy(p1);
    tf_bundle_destroy(p2);

    p1 = tf_bundle_create();
    p2 = tf_bundle_create();
    tf_bundle_add(p1, "/d/b/job.yaml", "name: j\n", 8);
    tf_bundle_add(p1, "/d/bc/x.c", "int x;\n", 7);
    tf_bundle_add(p2, "/d/b/job.yaml", "name: j\n", 8);
    tf_bundle_add(p2, "/x.c", "int x;\n", 7);
    tf_bundle_hash(p1, h1);
    tf_bundle_hash(p2, h2);
    assert_string_not_equal(h1, h2);
    tf_bundle_destroy(p1);
    tf_bundle_destroy(p2);

    char out[4];
    tf_path_clean("abc", out, sizeof out);
    assert_string_equal(out, "abc");
    tf_path_clean("/ab", out, sizeof out);
    assert_string_equal(out, "/ab");
    tf_path_clean("a/bc", out, sizeof out); /* one byte short: cut after "a" */
    assert_string_equal(out, "a");
    static const char *const dirs[][2] = {
        {"/x", "/"}, {"x", "."}, {"a/b", "a"}, {"/a/b", "/a"}};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char *dir = tf_path_dir(dirs[i][0]);
        assert_string_equal(dir, dirs[i][1]);
        free(dir);
    }
}

/* ---- bundle ----------------------------------------------------------------------------- */

static void test_bundle(void **state)
{
    (void)state;
    struct tf_error err;
    struct tf_bundle *b = tf_bundle_create();
    tf_error_clear(&err);
    assert_null(tf_bundle_read(b, "tests/unit/fixtures", &err)); /* a folder */
    assert_non_null(strstr(err.message, "not a regular file"));
    assert_false(tf_bundle_exists(b, "tests/unit/fixtures"));
    assert_true(tf_bundle_exists(b, FIX "jobs/tiny.yaml"));
    assert_int_equal(b->count, 0);

    tf_bundle_add(b, "a", "one", 3);
    tf_bundle_add(b, "b", "two", 3);
    char h1[65], h2[65], h3[65];
    tf_bundle_hash(b, h1);
    const struct tf_bundle_file *f = tf_bundle_read(b, "a", &err);
    assert_non_null(f);
    assert_int_equal(f->size, 3);
    assert_string_equal(f->data, "one");
    tf_bundle_add(b, "a", "uno!", 4); /* replace keeps the position */
    assert_int_equal(b->count, 2);
    assert_string_equal(b->files[0].path, "a");
    assert_string_equal(b->files[0].data, "uno!");
    tf_bundle_hash(b, h2);
    assert_string_not_equal(h1, h2);

    /* Order is part of the identity. */
    struct tf_bundle *r = tf_bundle_create();
    tf_bundle_add(r, "b", "two", 3);
    tf_bundle_add(r, "a", "uno!", 4);
    tf_bundle_hash(r, h3);
    assert_string_not_equal(h2, h3);
    /* Path/content boundaries matter: ("ab","c") differs from ("a","bc"). */
    struct tf_bundle *p1 = tf_bundle_create(), *p2 = tf_bundle_create();
    tf_bundle_add(p1, "ab", "c", 1);
    tf_bundle_add(p2, "a", "bc", 2);
    tf_bundle_hash(p1, h1);
    tf_bundle_hash(p2, h2);
    assert_string_not_equal(h1, h2);

    /* Sealed: no disk. */
    r->sealed = true;
    assert_false(tf_bundle_exists(r, FIX "jobs/tiny.yaml"));
    assert_null(tf_bundle_read(r, FIX "jobs/tiny.yaml", &err));
    assert_non_null(strstr(err.message, "not part of the job bundle"));

    /* Over 16 MiB is refused. */
    char path[] = "/tmp/tf_test_loader_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 16 * 1024 * 1024 + 1), 0);
    close(fd);
    assert_null(tf_bundle_read(b, path, &err));
    assert_non_null(strstr(err.message, "larger than 16 MiB"));
    unlink(path);

    setenv("TUNEFARM_KERNEL_PATH", "/x:/y", 1);
    struct tf_bundle *e = tf_bundle_create();
    assert_string_equal(e->kernel_path, "/x:/y");
    unsetenv("TUNEFARM_KERNEL_PATH");
    struct tf_bundle *e2 = tf_bundle_create();
    assert_string_equal(e2->kernel_path, "");

    tf_bundle_destroy(NULL);
    tf_bundle_destroy(e);
    tf_bundle_destroy(e2);
    tf_bundle_destroy(p1);
    tf_bundle_destroy(p2);
    tf_bundle_destroy(r);
    tf_bundle_destroy(b);
    tf_kernel_destroy(NULL);
    tf_job_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_loads),
        cmocka_unit_test(test_gemm_bind_check_metric),
        cmocka_unit_test(test_tiny_kernel),
        cmocka_unit_test(test_tiny_job),
        cmocka_unit_test(test_job_hash_ignores_how_the_path_is_typed),
        cmocka_unit_test(test_path_clean),
        cmocka_unit_test(test_default_per_problem),
        cmocka_unit_test(test_default_literals_and_agreement),
        cmocka_unit_test(test_minimal_job_defaults),
        cmocka_unit_test(test_sealed_reload),
        cmocka_unit_test(test_kernel_path_resolution),
        cmocka_unit_test(test_targets_by_name),
        cmocka_unit_test(test_encode_decode_roundtrip),
        cmocka_unit_test(test_cartesian_saturates),
        cmocka_unit_test(test_archived_name_limits),
        cmocka_unit_test(test_scalar_ranges),
        cmocka_unit_test(test_parameter_ranges),
        cmocka_unit_test(test_keyword_names),
        cmocka_unit_test(test_define_names),
        cmocka_unit_test(test_define_table),
        cmocka_unit_test(test_define_rules_at_their_edges),
        cmocka_unit_test(test_init_random_range),
        cmocka_unit_test(test_shared_per_sm),
        cmocka_unit_test(test_energy_in_metrics),
        cmocka_unit_test(test_compile_jobs_cap),
        cmocka_unit_test(test_compile_timeout),
        cmocka_unit_test(test_job_search_raw),
        cmocka_unit_test(test_broken_files),
        cmocka_unit_test(test_duplicate_values_side_by_side),
        cmocka_unit_test(test_job_setting_bounds),
        cmocka_unit_test(test_screen_inherits_measure),
        cmocka_unit_test(test_job_kernel_name_twice),
        cmocka_unit_test(test_truncation_sweep),
        cmocka_unit_test(test_ydoc_scalars),
        cmocka_unit_test(test_ydoc_edges),
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_bundle),
        cmocka_unit_test(test_bundle_hash_separations),
        cmocka_unit_test(test_size_defines),
        cmocka_unit_test(test_reference_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
