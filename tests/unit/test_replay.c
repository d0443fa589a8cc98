/* Tests for worker/backend_replay.c: a replay answers each configuration of a
 * job's kernel from a Kernel Tuner cache (tests/unit/fixtures/ktcache_small,
 * parameters matched by name and value although the fixture kernel lists them
 * in another order) or a tunefarm archive, with the recorded status, times and
 * simulated cost; a configuration the source lacks is `invalid` ("not in the
 * replay source"); a kernel whose values differ is refused naming the
 * parameter; an archive of two device classes is refused, in one kernel or
 * across the job's kernels; 65 parameters are answered; a source naming a
 * parameter twice is refused; /runs keeps the replay source; and bench/strategy/convolution_milo/kernel.yaml's valid set is
 * exactly the A4000 cache's configurations (4,362; skipped without the
 * dataset). The MPI side (brute force, --workers 4, archive replay, refusal
 * exit codes) is fault scenario 80-replay. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "schema/archive.h"
#include "schema/bundle.h"
#include "schema/job.h"
#include "schema/ktcache.h"
#include "schema/space.h"
#include "schema/status.h"
#include "worker/backend_replay.h"
#include "tree.h"

#define SMALL "tests/unit/fixtures/ktcache_small.json.gz"

struct loaded {
    struct tf_bundle *bundle;
    struct tf_job *job;
};

/* Every file a test writes goes in one folder, removed whole after the group:
 * a test that fails half way does not leave its files in /tmp. */
static char tmp_dir[] = "/tmp/tf-test-replay-XXXXXX";

static int group_setup(void **state)
{
    (void)state;
    return mkdtemp(tmp_dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    remove_tree(tmp_dir);
    return 0;
}

/* A new empty file in that folder, tmp_dir/STEM-XXXXXX: its name into out,
 * its descriptor returned (the caller closes it). */
static int tmp_file(char *out, size_t cap, const char *stem)
{
    snprintf(out, cap, "%s/%s-XXXXXX", tmp_dir, stem);
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    return fd;
}

static struct loaded load_job(const char *path)
{
    struct tf_error err = {0};
    struct loaded l = {tf_bundle_create(), NULL};
    l.job = tf_job_load(path, l.bundle, &err);
    if (l.job == NULL)
        fail_msg("%s: %s", path, err.message);
    return l;
}

static void unload(struct loaded *l)
{
    tf_job_destroy(l->job);
    tf_bundle_destroy(l->bundle);
}

/* Job index of (layout, tile_size_x, block_size_x) in replay_small's order:
 * layout [col, row], tile_size_x [2, 1], block_size_x [64, 32, 16]. */
static uint64_t small_index(const char *layout, int tile, int bsx)
{
    uint64_t l = strcmp(layout, "col") == 0 ? 0 : 1, t = tile == 2 ? 0 : 1;
    uint64_t b = bsx == 64 ? 0 : bsx == 32 ? 1 : 2;
    return l * 6 + t * 3 + b;
}

/* The replay of `source` for `job`; the test fails with the loader's message
 * when it cannot be opened. */
static struct tf_replay *replay_or_fail(const char *source, const struct tf_job *job)
{
    struct tf_error err = {0};
    struct tf_replay *r = tf_replay_open(source, job, &err);
    if (r == NULL)
        fail_msg("%s", err.message);
    return r;
}

static void test_ktcache_answers(void **state)
{
    (void)state;
    struct loaded l = load_job("tests/fixtures/replay_small.yaml");
    struct tf_replay *r = replay_or_fail(SMALL, l.job);
    struct tf_result res;
    double cost;

    tf_replay_answer(r, 0, 0, small_index("row", 1, 16), &res, &cost);
    assert_int_equal(res.status, TF_STATUS_OK);
    assert_true(res.time_mean == 3.5e-3 && res.time_median == 3.5e-3 && res.time_min == 3.5e-3);
    assert_int_equal(res.samples, 2);
    assert_true(res.time_rsd == 0);
    assert_true(res.compile_time == 0.9005 && res.device_time == 0.12025);
    assert_true(cost > 1.02074 && cost < 1.02076);
    assert_int_equal(res.config, small_index("row", 1, 16));

    tf_replay_answer(r, 0, 0, small_index("col", 1, 64), &res, &cost); /* the optimum */
    assert_int_equal(res.status, TF_STATUS_OK);
    assert_true(res.time_median == 1.75e-3);
    tf_replay_answer(r, 0, 0, small_index("col", 2, 16), &res, &cost);
    assert_true(res.status == TF_STATUS_OK && res.time_median == 2.25e-3);

    tf_replay_answer(r, 0, 0, small_index("row", 1, 32), &res, &cost);
    assert_int_equal(res.status, TF_STATUS_COMPILE_ERROR);
    assert_non_null(strstr(res.message, "CompilationFailedConfig"));
    assert_true(cost == 0.7); /* a failed compile still costs its compile time */
    tf_replay_answer(r, 0, 0, small_index("row", 2, 32), &res, &cost);
    assert_int_equal(res.status, TF_STATUS_RUNTIME_ERROR);
    tf_replay_answer(r, 0, 0, small_index("col", 2, 64), &res, &cost);
    assert_int_equal(res.status, TF_STATUS_INVALID);
    assert_non_null(strstr(res.message, "InvalidConfig"));
    tf_replay_answer(r, 0, 0, small_index("col", 1, 16), &res, &cost); /* not recorded */
    assert_int_equal(res.status, TF_STATUS_INVALID);
    assert_string_equal(res.message, "not in the replay source");
    assert_true(cost == 0);

    struct tf_device dev;
    tf_replay_device(r, 3, &dev);
    assert_string_equal(dev.backend, "replay");
    assert_string_equal(dev.name, "Test GPU");
    assert_string_equal(dev.uuid, "replay-3");
    tf_replay_destroy(r);
    unload(&l);
}

static void test_mismatch_refused(void **state)
{
    (void)state;
    struct loaded l = load_job("tests/fixtures/replay_mismatch.yaml");
    struct tf_error err = {0};
    assert_null(tf_replay_open(SMALL, l.job, &err));
    assert_non_null(strstr(err.message, "parameter 'block_size_x' has the values [16, 32, 64] "
                                        "in the replay source but [64, 32, 128]"));
    assert_null(tf_replay_open("tests/unit/fixtures/no-such-cache.json", l.job, &err));
    assert_non_null(strstr(err.message, "cannot read the replay source"));
    /* A folder: what a replay reads (the import's wording offered T4 files). */
    assert_null(tf_replay_open("tests/unit/fixtures", l.job, &err));
    if (strstr(err.message, "is a folder: expected a tunefarm archive or a Kernel Tuner "
                            "cache file") == NULL)
        fail_msg("%s", err.message);
    unload(&l);
}

/* An archive of replay_small's kernel: `rows` rows, each (config, status,
 * median, device name) with `device_time`; written to `path`. */
struct row_spec {
    uint64_t config;
    int status;
    double median;
    const char *device;
};

static void write_archive_dt(const char *path, const struct tf_kernel *k,
                             const struct row_spec *rows, int n, double device_time)
{
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    struct tf_archive_run run = {.start = 1, .end = 2, .ranks = 2};
    tf_strlcpy(run.job_name, "src", sizeof run.job_name);
    tf_strlcpy(run.replay_source, "/data/earlier.json.gz", sizeof run.replay_source);
    uint32_t run_id = tf_archive_add_run(a, &run);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, k, &err);
    assert_non_null(ak);
    uint32_t prob = tf_archive_problem_for(ak, k, 0);
    for (int i = 0; i < n; i++) {
        struct tf_device d = {0};
        tf_strlcpy(d.backend, "cuda", sizeof d.backend);
        tf_strlcpy(d.arch, "sm_90", sizeof d.arch);
        tf_strlcpy(d.name, rows[i].device, sizeof d.name);
        struct tf_archive_row row = {.run = run_id, .device = tf_archive_add_device(a, &d)};
        tf_result_init(&row.r, 0, prob, rows[i].config, rows[i].status);
        row.r.time_median = row.r.time_min = row.r.time_mean = rows[i].median;
        row.r.samples = 10;
        row.r.compile_time = 0.5;
        row.r.device_time = device_time;
        tf_archive_append(ak, &row);
    }
    if (tf_archive_write(a, path, &err))
        fail_msg("%s", err.message);
    tf_archive_destroy(a);
}

/* The same, each row with a device time of 0.25 s. */
static void write_archive(const char *path, const struct tf_kernel *k, const struct row_spec *rows,
                          int n)
{
    write_archive_dt(path, k, rows, n, 0.25);
}

static void test_archive_source(void **state)
{
    (void)state;
    struct loaded l = load_job("tests/fixtures/replay_small.yaml");
    const struct tf_kernel *k = l.job->kernels[0].kernel;
    char path[256];
    close(tmp_file(path, sizeof path, "archive"));
    const struct row_spec rows[] = {
        {3, TF_STATUS_OK, 1e-3, "Fake H100"},
        {5, TF_STATUS_COMPILE_ERROR, 0, "Fake H100"},
        {3, TF_STATUS_OK, 2e-3, "Fake H100"}, /* a later run: this one counts */
    };
    write_archive(path, k, rows, 3);
    struct tf_error err = {0};
    struct tf_replay *r = replay_or_fail(path, l.job);
    struct tf_result res;
    double cost;
    tf_replay_answer(r, 0, 0, 3, &res, &cost);
    assert_int_equal(res.status, TF_STATUS_OK);
    assert_true(res.time_median == 2e-3 && res.samples == 10);
    assert_true(cost == 0.75);
    tf_replay_answer(r, 0, 0, 5, &res, &cost);
    assert_int_equal(res.status, TF_STATUS_COMPILE_ERROR);
    tf_replay_answer(r, 0, 0, 0, &res, &cost);
    assert_string_equal(res.message, "not in the replay source");
    struct tf_device dev;
    tf_replay_device(r, 0, &dev);
    assert_string_equal(dev.name, "Fake H100");
    assert_string_equal(dev.arch, "sm_90");
    assert_string_equal(dev.backend, "replay");
    tf_replay_destroy(r);

    /* /runs keeps the replay source. */
    struct tf_archive *a = tf_archive_read(path, &err);
    assert_non_null(a);
    assert_string_equal(a->runs[0].replay_source, "/data/earlier.json.gz");
    tf_archive_destroy(a);

    /* Two device classes: which one would the replay be? Refused. */
    const struct row_spec two[] = {{3, TF_STATUS_OK, 1e-3, "Fake H100"},
                                   {4, TF_STATUS_OK, 1e-3, "Fake A100"}};
    write_archive(path, k, two, 2);
    assert_null(tf_replay_open(path, l.job, &err));
    assert_non_null(strstr(err.message, "two device classes"));

    /* A problem of that name with no sizes (an archive imported from a T4
     * file, which names none): the refusal says so, not "measured with ,". */
    struct tf_kernel bare = *k;
    bare.nsizes = 0;
    write_archive(path, &bare, rows, 1);
    assert_null(tf_replay_open(path, l.job, &err));
    if (strstr(err.message, "problem 'small' was measured with no sizes, the job's has N=64") == NULL)
        fail_msg("%s", err.message);
    /* ... and names the way out: renaming the job's problem would leave every
     * configuration "not in the replay source"; the cache itself replays. */
    if (strstr(err.message, "give --replay the Kernel Tuner cache itself") == NULL)
        fail_msg("no advice for an imported archive: %s", err.message);
    unlink(path);
    unload(&l);
}

/* A cache entry whose samples differ: the replay's mean is Kernel Tuner's
 * "time", its median and minimum the samples' (times [1, 2, 6] ms, time
 * 3 ms); an archive row without a device time costs its mean times its
 * samples (10 x 1 ms) plus its compile time; a problem of the job's name
 * measured at another size (N=32, the job's N=64) is refused, not answered. */
static void test_statistics_cost_and_sizes(void **state)
{
    (void)state;
    struct loaded l = load_job("tests/fixtures/replay_small.yaml");
    char path[256];
    int fd = tmp_file(path, sizeof path, "archive");
    static const char cache[] =
        "{\"device_name\": \"Test GPU\", \"kernel_name\": \"convolution_kernel\",\n"
        "\"problem_size\": [64, 64],\n"
        "\"tune_params_keys\": [\"block_size_x\", \"tile_size_x\", \"layout\"],\n"
        "\"tune_params\": {\"block_size_x\": [16, 32, 64], \"tile_size_x\": [1, 2], "
        "\"layout\": [\"row\", \"col\"]},\n"
        "\"objective\": \"time\",\n"
        "\"cache\": {\n"
        "\"32,2,col\": {\"block_size_x\": 32, \"tile_size_x\": 2, \"layout\": \"col\", "
        "\"time\": 3.0, \"times\": [6.0, 1.0, 2.0], \"compile_time\": 100.0, "
        "\"verification_time\": 0, \"benchmark_time\": 20.0, \"strategy_time\": 0, "
        "\"framework_time\": 1.0, \"timestamp\": \"2023-12-22 09:54:05.502007+00:00\"}\n"
        "}}\n";
    assert_int_equal(write(fd, cache, sizeof cache - 1), (ssize_t)(sizeof cache - 1));
    close(fd);
    struct tf_error err = {0};
    struct tf_replay *r = replay_or_fail(path, l.job);
    struct tf_result res;
    double cost;
    tf_replay_answer(r, 0, 0, small_index("col", 2, 32), &res, &cost);
    assert_int_equal(res.status, TF_STATUS_OK);
    assert_true(res.time_mean == 3e-3);
    assert_true(res.time_median == 2e-3);
    assert_true(res.time_min == 1e-3);
    assert_int_equal(res.samples, 3);
    tf_replay_destroy(r);

    const struct tf_kernel *k = l.job->kernels[0].kernel;
    const struct row_spec rows[] = {{3, TF_STATUS_OK, 1e-3, "Fake H100"}};
    write_archive_dt(path, k, rows, 1, NAN); /* no device time recorded */
    r = replay_or_fail(path, l.job);
    tf_replay_answer(r, 0, 0, 3, &res, &cost);
    assert_int_equal(res.status, TF_STATUS_OK);
    assert_true(fabs(cost - (0.5 + 10 * 1e-3)) < 1e-12);
    tf_replay_destroy(r);

    /* The same problem name at N=32. */
    assert_int_equal(k->nsizes, 1);
    struct tf_kernel other = *k;
    struct tf_problem prob = k->problems[0];
    int64_t size = 32;
    prob.sizes = &size;
    other.problems = &prob;
    write_archive(path, &other, rows, 1);
    assert_null(tf_replay_open(path, l.job, &err));
    if (strstr(err.message, "problem 'small' was measured with N=32, the job's has N=64") == NULL)
        fail_msg("%s", err.message);
    unlink(path);
    unload(&l);
}

/* A job given as text, as if it were tests/fixtures/NAME.yaml (its kernels
 * found beside it, or in `kernel_files`: path, text pairs, NULL-ended). */
static struct loaded load_job_text(const char *text, const char *const *kernel_files)
{
    static const char path[] = "tests/fixtures/replay_text.yaml";
    struct tf_error err = {0};
    struct loaded l = {tf_bundle_create(), NULL};
    tf_bundle_add(l.bundle, path, text, strlen(text));
    for (int i = 0; kernel_files && kernel_files[i]; i += 2)
        tf_bundle_add(l.bundle, kernel_files[i], kernel_files[i + 1], strlen(kernel_files[i + 1]));
    l.job = tf_job_load(path, l.bundle, &err);
    if (l.job == NULL)
        fail_msg("%s:%d:%d: %s", err.file, err.line, err.column, err.message);
    return l;
}

/* Two job kernels, each measured on one class, but not the same one: the
 * replay would announce the first kernel's device and answer the second with
 * another device's times. Refused; one class for both is answered. */
static void test_one_class_across_kernels(void **state)
{
    (void)state;
    struct loaded l = load_job_text("name: two\nkernels: [replay_small, replay_mismatch]\n"
                                    "targets: [replay]\n", NULL);
    assert_int_equal(l.job->nkernels, 2);
    char path[256];
    close(tmp_file(path, sizeof path, "archive"));
    for (int same = 0; same < 2; same++) {
        struct tf_error err = {0};
        struct tf_archive *a = tf_archive_create();
        struct tf_archive_run run = {.start = 1, .end = 2, .ranks = 2};
        tf_strlcpy(run.job_name, "src", sizeof run.job_name);
        uint32_t run_id = tf_archive_add_run(a, &run);
        for (int ki = 0; ki < 2; ki++) {
            const struct tf_kernel *k = l.job->kernels[ki].kernel;
            struct tf_archive_kernel *ak = tf_archive_kernel_for(a, k, &err);
            assert_non_null(ak);
            struct tf_device d = {0};
            tf_strlcpy(d.backend, "cuda", sizeof d.backend);
            tf_strlcpy(d.arch, ki == 0 || same ? "sm_90" : "sm_80", sizeof d.arch);
            tf_strlcpy(d.name, ki == 0 || same ? "Fake H100" : "Fake A100", sizeof d.name);
            struct tf_archive_row row = {.run = run_id, .device = tf_archive_add_device(a, &d)};
            tf_result_init(&row.r, 0, tf_archive_problem_for(ak, k, 0), 1, TF_STATUS_OK);
            row.r.time_median = row.r.time_min = row.r.time_mean = 1e-3;
            row.r.samples = 10;
            tf_archive_append(ak, &row);
        }
        if (tf_archive_write(a, path, &err))
            fail_msg("%s", err.message);
        tf_archive_destroy(a);
        struct tf_replay *r = tf_replay_open(path, l.job, &err);
        if (same) {
            if (r == NULL)
                fail_msg("%s", err.message);
            struct tf_result res;
            double cost;
            tf_replay_answer(r, 1, 0, 1, &res, &cost);
            assert_int_equal(res.status, TF_STATUS_OK);
        } else {
            assert_null(r);
            if (!strstr(err.message, "kernel 'replay_mismatch' was measured on two device "
                                     "classes") || !strstr(err.message, "in kernel 'replay_small'"))
                fail_msg("%s", err.message);
        }
        tf_replay_destroy(r);
    }
    unlink(path);
    unload(&l);
}

/* More than 64 parameters are answered like 3 (they were all "not in the
 * replay source"). */
static void test_many_parameters(void **state)
{
    (void)state;
    enum { N = 65 };
    char kernel[8192];
    int used = snprintf(kernel, sizeof kernel,
                        "name: replay_wide\nlanguage: c\nsource: placeholder.c\n"
                        "entry: wide\nreference: {source: placeholder.c, entry: wide_ref}\n"
                        "problems:\n  p: {N: 64}\nparameters:\n");
    for (int i = 0; i < N; i++)
        used += snprintf(kernel + used, sizeof kernel - (size_t)used, "  P%d: [%s]\n", i,
                         i == 10 || i == 64 ? "1, 2" : "7");
    snprintf(kernel + used, sizeof kernel - (size_t)used,
             "arguments:\n  - {name: out, buffer: float32, size: N, output: true}\n");
    static const char *files[] = {"tests/fixtures/replay_wide/kernel.yaml", NULL,
                                  "tests/fixtures/replay_wide/placeholder.c", "\n", NULL};
    files[1] = kernel;
    struct loaded l = load_job_text("name: wide\nkernels: [replay_wide]\ntargets: [replay]\n",
                                    files);
    const struct tf_kernel *k = l.job->kernels[0].kernel;
    assert_int_equal(k->nparams, N);
    char path[256];
    close(tmp_file(path, sizeof path, "archive"));
    const struct row_spec rows[] = {{3, TF_STATUS_OK, 1e-3, "Fake H100"},
                                    {1, TF_STATUS_OK, 2e-3, "Fake H100"}};
    write_archive(path, k, rows, 2);
    struct tf_replay *r = replay_or_fail(path, l.job);
    struct tf_result res;
    double cost;
    tf_replay_answer(r, 0, 0, 3, &res, &cost);
    if (res.status != TF_STATUS_OK)
        fail_msg("configuration 3 of %d parameters: %s", N, res.message);
    assert_true(res.time_median == 1e-3);
    tf_replay_answer(r, 0, 0, 1, &res, &cost);
    assert_true(res.status == TF_STATUS_OK && res.time_median == 2e-3);
    tf_replay_destroy(r);
    unlink(path);
    unload(&l);
}

/* A Kernel Tuner cache naming block_size_x twice (and no tile_size_x): it
 * matched both to the job's block_size_x and left tile_size_x unmapped. */
static void test_parameter_named_twice(void **state)
{
    (void)state;
    static const char twice[] =
        "{\"device_name\": \"Test GPU\", \"kernel_name\": \"k\", \"objective\": \"time\",\n"
        "\"tune_params_keys\": [\"block_size_x\", \"block_size_x\", \"layout\"],\n"
        "\"tune_params\": {\"block_size_x\": [16, 32, 64], \"layout\": [\"row\", \"col\"]},\n"
        "\"cache\": {\"16,16,row\": {\"block_size_x\": 16, \"layout\": \"row\", \"time\": 1.0,\n"
        "  \"compile_time\": 1, \"benchmark_time\": 1}}}\n";
    char kt[256];
    int fd = tmp_file(kt, sizeof kt, "kt");
    assert_int_equal(write(fd, twice, sizeof twice - 1), (ssize_t)(sizeof twice - 1));
    close(fd);
    struct loaded l = load_job("tests/fixtures/replay_small.yaml");
    struct tf_error err = {0};
    struct tf_replay *r = tf_replay_open(kt, l.job, &err);
    if (r != NULL)
        fail_msg("a source with two parameters named block_size_x was taken");
    if (!strstr(err.message, "the replay source has two parameters named 'block_size_x'"))
        fail_msg("%s", err.message);
    unlink(kt);
    unload(&l);
}

/* The convolution_milo kernel file's valid set is the cache's exactly. */
static void test_convolution_milo_valid_set(void **state)
{
    (void)state;
    static const char *const caches[] = {
        "../shared/datasets/benchmark_hub/convolution_milo/A4000.json.gz",
        "../../shared/datasets/benchmark_hub/convolution_milo/A4000.json.gz", NULL};
    const char *cache = NULL;
    char from_env[4096];
    const char *datasets = getenv("TUNEFARM_DATASETS"); /* tests/run_unit.sh finds them */
    if (datasets && *datasets &&
        snprintf(from_env, sizeof from_env, "%s/benchmark_hub/convolution_milo/A4000.json.gz",
                 datasets) < (int)sizeof from_env &&
        access(from_env, R_OK) == 0)
        cache = from_env;
    for (int i = 0; caches[i] && cache == NULL; i++)
        if (access(caches[i], R_OK) == 0)
            cache = caches[i];
    if (cache == NULL) {
        print_message("skipped: no convolution_milo dataset beside the repository\n");
        skip();
    }
    struct loaded l = load_job("bench/strategy/convolution_milo/replay.yaml");
    struct tf_error err = {0};
    struct tf_replay *r = replay_or_fail(cache, l.job);
    struct tf_ktcache *kt = tf_ktcache_load(cache, &err);
    assert_non_null(kt);
    size_t recorded = 0;
    for (size_t i = 0; i < kt->nentries; i++)
        recorded += kt->entries[i].status != TF_STATUS_INVALID;
    struct tf_device dev;
    tf_replay_device(r, 0, &dev);
    struct tf_space *s = tf_space_create(l.job->kernels[0].kernel, 0, &dev, &err);
    assert_non_null(s);
    uint64_t idx = 0, valid = 0, hi = tf_space_cartesian(s);
    while (tf_space_next(s, idx, hi, &idx, &err) == 1) {
        struct tf_result res;
        double cost;
        tf_replay_answer(r, 0, 0, idx, &res, &cost);
        /* every valid configuration is recorded, and not as InvalidConfig */
        if (res.status == TF_STATUS_INVALID)
            fail_msg("valid configuration %llu: %s", (unsigned long long)idx, res.message);
        valid++;
        idx++;
    }
    /* The map is one-to-one, so equal counts mean equal sets. */
    assert_int_equal(valid, recorded);
    assert_int_equal(valid, 4362);
    tf_space_destroy(s);
    tf_ktcache_destroy(kt);
    tf_replay_destroy(r);
    unload(&l);
}

/* The null source: only its exact name selects it (a file of another name
 * that does not exist is refused), and it answers every configuration of
 * any kernel ok, with a time in [1, 2) ms fixed by the configuration. */
static void test_null_source(void **state)
{
    (void)state;
    struct loaded l = load_job("tests/fixtures/replay_small.yaml");
    struct tf_error err = {0};
    assert_null(tf_replay_open("null", l.job, &err));
    assert_null(tf_replay_open("null:x", l.job, &err));
    struct tf_replay *r = replay_or_fail(TF_REPLAY_NULL, l.job);
    struct tf_result a, b;
    double cost;
    bool differ = false;
    for (uint64_t i = 0; i < 12; i++) {
        tf_replay_answer(r, 0, 0, i, &a, &cost);
        assert_int_equal(a.status, TF_STATUS_OK);
        assert_int_equal(a.config, i);
        assert_true(a.time_median >= 1e-3 && a.time_median < 2e-3);
        /* its simulated cost is its time: --speed stretches a null run */
        assert_true(a.time_min == a.time_median && a.samples == 1 && cost == a.time_median);
        tf_replay_answer(r, 0, 0, i, &b, &cost);
        assert_true(a.time_median == b.time_median);
        tf_replay_answer(r, 0, 0, i + 1, &b, &cost);
        differ = differ || a.time_median != b.time_median;
    }
    assert_true(differ);
    struct tf_device dev;
    tf_replay_device(r, 5, &dev);
    assert_string_equal(dev.backend, "replay");
    assert_string_equal(dev.name, "null");
    assert_string_equal(dev.uuid, "replay-5");
    tf_replay_destroy(r);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ktcache_answers),
        cmocka_unit_test(test_mismatch_refused),
        cmocka_unit_test(test_archive_source),
        cmocka_unit_test(test_statistics_cost_and_sizes),
        cmocka_unit_test(test_one_class_across_kernels),
        cmocka_unit_test(test_many_parameters),
        cmocka_unit_test(test_parameter_named_twice),
        cmocka_unit_test(test_convolution_milo_valid_set),
        cmocka_unit_test(test_null_source),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
