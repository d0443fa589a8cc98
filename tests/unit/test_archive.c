/* test_archive.c - unit tests of the HDF5 archive (schema/archive.c).
 *
 * Real HDF5 files in a private temporary folder: a full model is written and
 * read back field by field (NaNs included), then the reader is fed truncated,
 * foreign, non-HDF5 and hand-edited files, and the writer unwritable paths and
 * a rename that fails after the temporary file exists; per-problem defaults
 * round-trip, and an archive written before them (no `default_config` column)
 * still reads; so do per-run provenance (job settings, sessions, what each
 * device ran with, source hashes per run), its merge, an archive written
 * before it, and one without the `noisy` and `energy_status` columns.
 * Kernels are built by
 * hand (constraints compiled with the real expression compiler) so the tests
 * do not depend on the kernel.yaml loader. h5dump and read_archive.py, when
 * present, must accept the written file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <hdf5.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../schema/archive.h"
#include "../../schema/archive_table.h"
#include "../../schema/expr.h"
#include "../../schema/result.h"
#include "archive_fixture.h"

extern char **environ;

static char tmpdir[256];

/* ---------------------------------------------------------------- fixtures */

/* A model with 2 devices, 2 runs, gemm with 6 rows (ok and failed), vecadd with 0 rows. */
static struct tf_archive *make_model(struct test_kernel *gemm, struct test_kernel *vecadd)
{
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    struct tf_device d0 = make_device("cuda", "NVIDIA H100 80GB HBM3", "GPU-0000", "node1");
    struct tf_device d1 = make_device("hip", "AMD Instinct MI300X", "GPU-1111-xyz", "node2");
    assert_int_equal(tf_archive_add_device(a, &d0), 0);
    assert_int_equal(tf_archive_add_device(a, &d1), 1);
    struct tf_archive_run r0 = make_run("demo", 1714560000.5, 1714563600.25);
    struct tf_archive_run r1 = make_run("nightly", 1714646400.0, 0);
    assert_int_equal(tf_archive_add_run(a, &r0), 0);
    assert_int_equal(tf_archive_add_run(a, &r1), 1);

    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm->k, &err);
    if (ak == NULL)
        fail_msg("kernel_for gemm: %s", err.message);
    uint32_t small = tf_archive_problem_for(ak, &gemm->k, 0);
    uint32_t large = tf_archive_problem_for(ak, &gemm->k, 1);
    assert_int_equal(small, 0);
    assert_int_equal(large, 1);
    for (int i = 0; i < 6; i++) {
        struct tf_archive_row row;
        memset(&row, 0, sizeof row);
        row.run = (uint32_t)(i % 2);
        row.device = (uint32_t)(i / 3);
        int status = i == 2 ? TF_STATUS_COMPILE_ERROR : i == 4 ? TF_STATUS_TIMEOUT : TF_STATUS_OK;
        tf_result_init(&row.r, 0, i < 3 ? small : large, (uint64_t)(i * 2 + 1), status);
        if (status == TF_STATUS_OK) {
            row.r.samples = 10 + (uint32_t)i;
            row.r.time_median = 1e-4 * (i + 1);
            row.r.time_min = 0.9e-4 * (i + 1);
            row.r.time_mean = 1.1e-4 * (i + 1);
            row.r.time_rsd = 0.004;
            row.r.registers = 96;
            row.r.shared_bytes = 32768;
            row.r.spill_bytes = 0;
            row.r.sm_clock_mhz = 1980.0f;
            row.r.power_w = 612.5f;
            row.r.temperature_c = 61.0f;
            row.r.energy_j = i == 3 ? NAN : 0.061 * i;
            row.r.energy_status = (uint8_t)(i == 3 ? TF_ENERGY_NO_WINDOW : TF_ENERGY_MEASURED);
            row.r.noisy = (uint8_t)(i == 5);
            row.r.flushed_l2 = 1;
            row.r.throttled = (uint8_t)(i == 5);
            row.r.metrics[0] = 1234.5 * i;
        } else {
            tf_strlcpy(row.r.message, status == TF_STATUS_TIMEOUT ? "no answer in 10 s"
                                                                  : "error: identifier x undefined",
                       sizeof row.r.message);
        }
        row.r.compile_time = 0.25 * i;
        row.r.timestamp = 1714560000.0 + i;
        tf_archive_append(ak, &row);
    }
    struct tf_archive_kernel *vk = tf_archive_kernel_for(a, &vecadd->k, &err);
    if (vk == NULL)
        fail_msg("kernel_for vecadd: %s", err.message);
    assert_int_equal(tf_archive_problem_for(vk, &vecadd->k, 0), 0);
    /* What run 1 planned, and a checkpoint number: both must come back. */
    tf_archive_set_plan(a, &(struct tf_archive_plan){.run = 1, .kernel = 0, .problem = 1,
                                                     .device = 1, .planned = 1000});
    tf_archive_set_plan(a, &(struct tf_archive_plan){.run = 1, .kernel = 1, .problem = 0,
                                                     .device = 0, .planned = 3});
    tf_archive_set_plan(a, &(struct tf_archive_plan){.run = 1, .kernel = 0, .problem = 1,
                                                     .device = 1, .planned = 1200});
    /* Provenance: the job's settings on run 1, two sessions of it (resumed),
     * what each device ran with in each (a driver upgrade, a clock unknown in
     * the second), and the kernels' source hashes per run. */
    struct tf_archive_run *r = &a->runs[1];
    tf_strlcpy(r->search_strategy, "random", sizeof r->search_strategy);
    r->search_seed = 7;
    r->search_budget = 500;
    tf_strlcpy(r->search, "time_budget=0 patience=0 noise=0.005 top_k=8", sizeof r->search);
    tf_strlcpy(r->measure, "warmup=2 min_samples=10", sizeof r->measure);
    tf_strlcpy(r->screen, "warmup=1 min_samples=3", sizeof r->screen);
    struct tf_archive_session s = {.run = 1, .start = 1714646400.0, .end = 1714650000.5,
                                   .ranks = 3};
    tf_strlcpy(s.command, "tunefarm run jobs/nightly.yaml", sizeof s.command);
    tf_strlcpy(s.slurm_job_id, "100", sizeof s.slurm_job_id);
    tf_strlcpy(s.tunefarm_version, "0.1.0", sizeof s.tunefarm_version);
    tf_strlcpy(s.host, "login1", sizeof s.host);
    assert_int_equal(tf_archive_add_session(a, &s), 0);
    s.start = 1714732800.0;
    s.end = 0; /* killed */
    tf_strlcpy(s.slurm_job_id, "117", sizeof s.slurm_job_id);
    assert_int_equal(tf_archive_add_session(a, &s), 1);
    struct tf_device v = d0;
    tf_strlcpy(v.tunefarm_version, "0.1.0", sizeof v.tunefarm_version);
    v.clock_mhz = 1980;
    v.memory_clock_mhz = 2619;
    v.power_limit_w = 700;
    tf_archive_set_session_device(a, 0, 0, &v);
    tf_archive_set_session_device(a, 0, 1, &d1);
    tf_strlcpy(v.driver_version, "580.159.04", sizeof v.driver_version);
    v.clock_mhz = 0;
    tf_strlcpy(v.clock_policy, "manual", sizeof v.clock_policy);
    tf_archive_set_session_device(a, 1, 0, &v);
    tf_archive_set_run_kernel(a, 0, 0, gemm->k.source_hash);
    tf_archive_set_run_kernel(a, 1, 0, "1234");
    tf_archive_set_run_kernel(a, 1, 1, vecadd->k.source_hash);
    tf_archive_set_run_kernel(a, 1, 0, gemm->k.source_hash); /* replaces, in place */
    a->checkpoint = 41;
    return a;
}

static void path_in_tmp(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", tmpdir, name);
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tf_test_archive_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    return nftw(tmpdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* Number of entries in `dir` whose name contains ".tmp." */
static int count_temp_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (d == NULL)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strstr(e->d_name, ".tmp.") != NULL)
            n++;
    closedir(d);
    return n;
}

/* Spawn argv (PATH search); exit status, or -1 if it could not be started. */
static int spawn_wait(char *const argv[], int quiet)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (quiet) { /* stdout and stderr: a rejection we expect is not log noise */
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    }
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int on_path(const char *exe)
{
    const char *path = getenv("PATH");
    if (exe[0] == '/')
        return access(exe, X_OK) == 0;
    if (path == NULL)
        return 0;
    char *copy = strdup(path), *save = NULL;
    int found = 0;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char full[1024];
        snprintf(full, sizeof full, "%s/%s", d, exe);
        found = access(full, X_OK) == 0;
    }
    free(copy);
    return found;
}

/* ---------------------------------------------------------------- comparisons */

static int same_double(double x, double y)
{
    return (isnan(x) && isnan(y)) || x == y;
}

#define assert_same_double(x, y)                                                               \
    do {                                                                                       \
        if (!same_double((double)(x), (double)(y)))                                            \
            fail_msg("%s = %.17g but %s = %.17g", #x, (double)(x), #y, (double)(y));           \
    } while (0)

static void assert_archives_equal(const struct tf_archive *a, const struct tf_archive *b)
{
    assert_string_equal(a->id, b->id);
    assert_same_double(a->created, b->created);
    assert_string_equal(a->tunefarm_version, b->tunefarm_version);
    assert_int_equal(a->ndevices, b->ndevices);
    for (int i = 0; i < a->ndevices; i++) {
        const struct tf_device *x = &a->devices[i], *y = &b->devices[i];
        assert_string_equal(x->backend, y->backend);
        assert_string_equal(x->vendor, y->vendor);
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->arch, y->arch);
        assert_string_equal(x->uuid, y->uuid);
        assert_string_equal(x->pci_bus, y->pci_bus);
        assert_string_equal(x->host, y->host);
        assert_int_equal(x->memory_bytes, y->memory_bytes);
        assert_int_equal(x->compute_units, y->compute_units);
        assert_string_equal(x->driver_version, y->driver_version);
        assert_string_equal(x->runtime_version, y->runtime_version);
        assert_string_equal(x->compiler_version, y->compiler_version);
        for (int p = 0; p < TF_DEVPROP_COUNT; p++)
            assert_int_equal(x->props[p], y->props[p]);
    }
    assert_int_equal(a->nruns, b->nruns);
    for (int i = 0; i < a->nruns; i++) {
        const struct tf_archive_run *x = &a->runs[i], *y = &b->runs[i];
        assert_string_equal(x->job_name, y->job_name);
        assert_string_equal(x->job_hash, y->job_hash);
        assert_same_double(x->start, y->start);
        assert_same_double(x->end, y->end);
        assert_string_equal(x->command, y->command);
        assert_string_equal(x->slurm_job_id, y->slurm_job_id);
        assert_int_equal(x->ranks, y->ranks);
        assert_string_equal(x->tunefarm_version, y->tunefarm_version);
        assert_string_equal(x->replay_source, y->replay_source);
        assert_string_equal(x->search_strategy, y->search_strategy);
        assert_int_equal(x->search_seed, y->search_seed);
        assert_int_equal(x->search_budget, y->search_budget);
        assert_string_equal(x->search, y->search);
        assert_string_equal(x->measure, y->measure);
        assert_string_equal(x->screen, y->screen);
    }
    assert_int_equal(a->nsessions, b->nsessions);
    for (int i = 0; i < a->nsessions; i++) {
        const struct tf_archive_session *x = &a->sessions[i], *y = &b->sessions[i];
        assert_int_equal(x->run, y->run);
        assert_same_double(x->start, y->start);
        assert_same_double(x->end, y->end);
        assert_string_equal(x->command, y->command);
        assert_string_equal(x->slurm_job_id, y->slurm_job_id);
        assert_int_equal(x->ranks, y->ranks);
        assert_string_equal(x->tunefarm_version, y->tunefarm_version);
        assert_string_equal(x->host, y->host);
    }
    assert_int_equal(a->nsession_devices, b->nsession_devices);
    for (int i = 0; i < a->nsession_devices; i++) {
        const struct tf_archive_session_device *x = &a->session_devices[i];
        const struct tf_archive_session_device *y = &b->session_devices[i];
        assert_int_equal(x->session, y->session);
        assert_int_equal(x->device, y->device);
        assert_string_equal(x->d.name, y->d.name);
        assert_string_equal(x->d.uuid, y->d.uuid);
        assert_string_equal(x->d.driver_version, y->d.driver_version);
        assert_string_equal(x->d.runtime_version, y->d.runtime_version);
        assert_string_equal(x->d.compiler_version, y->d.compiler_version);
        assert_string_equal(x->d.tunefarm_version, y->d.tunefarm_version);
        assert_same_double(x->d.clock_mhz, y->d.clock_mhz);
        assert_same_double(x->d.memory_clock_mhz, y->d.memory_clock_mhz);
        assert_same_double(x->d.power_limit_w, y->d.power_limit_w);
        assert_string_equal(x->d.clock_policy, y->d.clock_policy);
    }
    assert_int_equal(a->nrun_kernels, b->nrun_kernels);
    for (int i = 0; i < a->nrun_kernels; i++) {
        assert_int_equal(a->run_kernels[i].run, b->run_kernels[i].run);
        assert_int_equal(a->run_kernels[i].kernel, b->run_kernels[i].kernel);
        assert_string_equal(a->run_kernels[i].source_hash, b->run_kernels[i].source_hash);
    }
    assert_int_equal(a->checkpoint, b->checkpoint);
    assert_int_equal(a->nplans, b->nplans);
    for (int i = 0; i < a->nplans; i++) {
        assert_int_equal(a->plans[i].run, b->plans[i].run);
        assert_int_equal(a->plans[i].kernel, b->plans[i].kernel);
        assert_int_equal(a->plans[i].problem, b->plans[i].problem);
        assert_int_equal(a->plans[i].device, b->plans[i].device);
        assert_int_equal(a->plans[i].planned, b->plans[i].planned);
    }
    assert_int_equal(a->nkernels, b->nkernels);
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *x = &a->kernels[k], *y = &b->kernels[k];
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->source_hash, y->source_hash);
        assert_int_equal(x->nparams, y->nparams);
        for (int i = 0; i < x->nparams; i++) {
            const struct tf_param *p = &x->params[i], *q = &y->params[i];
            assert_string_equal(p->name, q->name);
            assert_int_equal(p->kind, q->kind);
            assert_int_equal(p->count, q->count);
            for (int v = 0; v < p->count; v++) {
                if (p->kind == TF_PARAM_INT)
                    assert_int_equal(p->ints[v], q->ints[v]);
                else
                    assert_string_equal(p->strings[v], q->strings[v]);
            }
        }
        assert_int_equal(x->nsizes, y->nsizes);
        for (int i = 0; i < x->nsizes; i++)
            assert_string_equal(x->size_names[i], y->size_names[i]);
        assert_int_equal(x->nconstraints, y->nconstraints);
        for (int i = 0; i < x->nconstraints; i++)
            assert_string_equal(x->constraints[i], y->constraints[i]);
        assert_int_equal(x->nmetrics, y->nmetrics);
        for (int i = 0; i < x->nmetrics; i++)
            assert_string_equal(x->metric_names[i], y->metric_names[i]);
        assert_int_equal(x->has_default, y->has_default);
        if (x->has_default)
            assert_int_equal(x->default_index, y->default_index);
        assert_int_equal(x->nproblems, y->nproblems);
        for (int i = 0; i < x->nproblems; i++) {
            assert_string_equal(x->problems[i].name, y->problems[i].name);
            for (int s = 0; s < x->nsizes; s++)
                assert_int_equal(x->problems[i].sizes[s], y->problems[i].sizes[s]);
            assert_int_equal(x->problems[i].has_default, y->problems[i].has_default);
            if (x->problems[i].has_default)
                assert_int_equal(x->problems[i].default_index, y->problems[i].default_index);
        }
        assert_int_equal(x->nrows, y->nrows);
        for (uint64_t i = 0; i < x->nrows; i++) {
            const struct tf_archive_row *p = &x->rows[i], *q = &y->rows[i];
            assert_int_equal(p->run, q->run);
            assert_int_equal(p->device, q->device);
            assert_int_equal(p->r.problem, q->r.problem);
            assert_int_equal(p->r.config, q->r.config);
            assert_int_equal(p->r.status, q->r.status);
            assert_int_equal(p->r.flushed_l2, q->r.flushed_l2);
            assert_int_equal(p->r.throttled, q->r.throttled);
            assert_int_equal(p->r.noisy, q->r.noisy);
            assert_int_equal(p->r.energy_status, q->r.energy_status);
            assert_int_equal(p->r.samples, q->r.samples);
            assert_same_double(p->r.time_median, q->r.time_median);
            assert_same_double(p->r.time_min, q->r.time_min);
            assert_same_double(p->r.time_mean, q->r.time_mean);
            assert_same_double(p->r.time_rsd, q->r.time_rsd);
            assert_same_double(p->r.compile_time, q->r.compile_time);
            assert_int_equal(p->r.registers, q->r.registers);
            assert_int_equal(p->r.shared_bytes, q->r.shared_bytes);
            assert_int_equal(p->r.spill_bytes, q->r.spill_bytes);
            assert_int_equal(p->r.warnings, q->r.warnings);
            assert_string_equal(p->r.first_warning, q->r.first_warning);
            assert_same_double(p->r.sm_clock_mhz, q->r.sm_clock_mhz);
            assert_same_double(p->r.power_w, q->r.power_w);
            assert_same_double(p->r.temperature_c, q->r.temperature_c);
            assert_same_double(p->r.energy_j, q->r.energy_j);
            assert_same_double(p->r.timestamp, q->r.timestamp);
            for (int m = 0; m < x->nmetrics; m++)
                assert_same_double(p->r.metrics[m], q->r.metrics[m]);
            assert_string_equal(p->r.message, q->r.message);
        }
    }
}

static void write_ok(const struct tf_archive *a, const char *path)
{
    struct tf_error err = {0};
    if (tf_archive_write(a, path, &err) != 0)
        fail_msg("write %s: %s", path, err.message);
}

static struct tf_archive *read_ok(const char *path)
{
    struct tf_error err = {0};
    struct tf_archive *b = tf_archive_read(path, &err);
    if (b == NULL)
        fail_msg("read %s: %s", path, err.message);
    return b;
}

/* Read must fail with a message containing `needle`. */
static void read_fails(const char *path, const char *needle)
{
    struct tf_error err = {0};
    struct tf_archive *b = tf_archive_read(path, &err);
    if (b != NULL) {
        tf_archive_destroy(b);
        fail_msg("reading %s succeeded; expected an error with '%s'", path, needle);
    }
    if (strstr(err.message, needle) == NULL)
        fail_msg("error '%s' does not mention '%s'", err.message, needle);
}

/* ---------------------------------------------------------------- tests */

static void test_round_trip(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char path[512];
    path_in_tmp(path, sizeof path, "round.h5");
    write_ok(a, path);
    assert_int_equal(count_temp_files(tmpdir), 0);
    struct tf_archive *b = read_ok(path);
    assert_archives_equal(a, b);
    /* Spot checks that would catch a comparison that compares nothing. */
    assert_int_equal(b->nkernels, 2);
    assert_string_equal(b->kernels[0].name, "gemm");
    assert_int_equal(b->kernels[0].nrows, 6);
    assert_int_equal(b->kernels[1].nrows, 0);
    assert_int_equal(b->kernels[0].params[2].kind, TF_PARAM_ENUM);
    assert_string_equal(b->kernels[0].params[2].strings[1], "col");
    assert_string_equal(b->kernels[0].constraints[1], "LAYOUT == \"row\" || BM >= 32");
    assert_int_equal(b->kernels[1].nconstraints, 0);
    assert_false(b->kernels[1].has_default);
    assert_true(isnan(b->kernels[0].rows[2].r.time_median));
    assert_true(isnan(b->kernels[0].rows[2].r.metrics[0]));
    assert_true(isnan(b->kernels[0].rows[4].r.power_w));
    assert_int_equal(b->kernels[0].rows[4].r.status, TF_STATUS_TIMEOUT);
    assert_string_equal(b->kernels[0].rows[2].r.message, "error: identifier x undefined");
    assert_true(b->kernels[0].rows[5].r.time_median == 1e-4 * 6);
    assert_int_equal(b->kernels[0].rows[5].r.noisy, 1);
    assert_int_equal(b->kernels[0].rows[3].r.energy_status, TF_ENERGY_NO_WINDOW);
    assert_int_equal(b->kernels[0].rows[2].r.energy_status, TF_ENERGY_NOT_RUN); /* failed */
    assert_int_equal(b->checkpoint, 41);
    assert_int_equal(strlen(b->id), 32);
    assert_int_equal(b->nplans, 2); /* set_plan updated the first row in place */
    assert_int_equal(b->plans[0].planned, 1200);
    assert_int_equal(b->plans[1].kernel, 1);
    assert_int_equal(b->nsessions, 2);
    assert_int_equal(b->nsession_devices, 3);
    assert_string_equal(b->session_devices[2].d.driver_version, "580.159.04");
    assert_true(b->session_devices[2].d.clock_mhz == 0); /* unknown: NaN in the file */
    assert_true(b->session_devices[0].d.power_limit_w == 700);
    assert_int_equal(b->nrun_kernels, 3); /* set_run_kernel replaced in place */
    assert_string_equal(tf_archive_run_source_hash(b, 1, 0), gemm.k.source_hash);
    assert_null(tf_archive_run_source_hash(b, 0, 1));
    int count = 0;
    assert_int_equal(tf_archive_run_session(b, 1, 1, &count), 1);
    assert_int_equal(count, 2);
    assert_int_equal(tf_archive_run_session(b, 0, 0, &count), -1);
    assert_int_equal(count, 0);
    assert_string_equal(b->runs[1].screen, "warmup=1 min_samples=3");

    /* A model read back can be extended and rewritten over itself. */
    struct tf_error err = {0};
    struct tf_archive_kernel *ak = tf_archive_kernel_for(b, &gemm.k, &err);
    assert_non_null(ak);
    assert_ptr_equal(ak, &b->kernels[0]);
    tf_archive_append(ak, &b->kernels[0].rows[0]);
    write_ok(b, path);
    struct tf_archive *c = read_ok(path);
    assert_int_equal(c->kernels[0].nrows, 7);
    assert_archives_equal(b, c);

    tf_archive_destroy(c);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

static void test_empty_archive_and_mkdir(void **state)
{
    (void)state;
    struct tf_archive *a = tf_archive_create();
    char path[512];
    path_in_tmp(path, sizeof path, "deep/er/folder/empty.h5");
    write_ok(a, path);
    struct tf_archive *b = read_ok(path);
    assert_int_equal(b->ndevices, 0);
    assert_int_equal(b->nruns, 0);
    assert_int_equal(b->nkernels, 0);
    assert_same_double(a->created, b->created);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
}

/* More rows than one I/O block and many chunks: the block loop must not drop or shift rows. */
static void test_many_rows(void **state)
{
    (void)state;
    struct test_kernel gemm;
    make_gemm(&gemm);
    struct tf_archive *a = tf_archive_create();
    struct tf_device d = make_device("cuda", "H100", "GPU-1", "n1");
    struct tf_archive_run run = make_run("big", 1.0, 2.0);
    tf_archive_add_device(a, &d);
    tf_archive_add_run(a, &run);
    struct tf_error err = {0};
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm.k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &gemm.k, 0);
    const uint64_t n = 40000;
    for (uint64_t i = 0; i < n; i++) {
        struct tf_archive_row row = {0};
        tf_result_init(&row.r, 0, 0, i % 12, TF_STATUS_OK);
        row.r.time_median = (double)i;
        row.r.samples = (uint32_t)i;
        tf_archive_append(ak, &row);
    }
    char path[512];
    path_in_tmp(path, sizeof path, "many.h5");
    write_ok(a, path);
    struct tf_archive *b = read_ok(path);
    assert_int_equal(b->kernels[0].nrows, n);
    for (uint64_t i = 0; i < n; i++) {
        assert_int_equal(b->kernels[0].rows[i].r.samples, i);
        assert_int_equal(b->kernels[0].rows[i].r.config, i % 12);
        assert_true(b->kernels[0].rows[i].r.time_median == (double)i);
    }
    tf_archive_destroy(b);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

/* A value list past HDF5's 64 KiB compact attribute limit must still be stored. */
static void test_long_value_list(void **state)
{
    (void)state;
    struct test_kernel t;
    make_vecadd(&t);
    enum { N = 20000 };
    int64_t *values = calloc(N, sizeof *values);
    assert_non_null(values);
    for (int i = 0; i < N; i++)
        values[i] = 3 * (int64_t)i + 1;
    t.params[0].count = N;
    t.params[0].ints = values;
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &t.k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &t.k, 0);
    struct tf_device d = make_device("host", "cpu", "", "n1");
    struct tf_archive_run run = make_run("long", 1.0, 2.0);
    tf_archive_add_device(a, &d);
    tf_archive_add_run(a, &run);
    struct tf_archive_row row = {0};
    tf_result_init(&row.r, 0, 0, N - 1, TF_STATUS_INVALID);
    tf_archive_append(ak, &row);
    char path[512];
    path_in_tmp(path, sizeof path, "long.h5");
    write_ok(a, path);
    struct tf_archive *b = read_ok(path);
    assert_int_equal(b->kernels[0].params[0].count, N);
    assert_int_equal(b->kernels[0].params[0].ints[N - 1], 3 * (int64_t)(N - 1) + 1);
    assert_int_equal(b->kernels[0].rows[0].r.config, N - 1);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
    free(values);
}

static void test_kernel_for_mismatch(void **state)
{
    (void)state;
    struct test_kernel gemm, other;
    make_gemm(&gemm);
    struct tf_archive *a = tf_archive_create();
    struct tf_error err = {0};
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm.k, &err);
    assert_non_null(ak);
    assert_int_equal(a->nkernels, 1);

    /* The same kernel file: the same entry, provenance refreshed. */
    memset(gemm.k.source_hash, 'c', 64);
    assert_ptr_equal(tf_archive_kernel_for(a, &gemm.k, &err), ak);
    assert_int_equal(ak->source_hash[0], 'c');
    assert_int_equal(a->nkernels, 1);

    /* An extra parameter. */
    make_gemm(&other);
    static const int64_t bk[] = {8, 16};
    tk_param_int(&other, "BK", 2, bk);
    assert_null(tf_archive_kernel_for(a, &other.k, &err));
    assert_string_equal(err.message,
                        "archive kernel 'gemm' has parameters BM,BN,LAYOUT but the one being added "
                        "has BM,BN,LAYOUT,BK: use another archive or a new kernel name");
    tk_free(&other);

    /* Other values. */
    make_gemm(&other);
    other.ints[0][2] = 128;
    assert_null(tf_archive_kernel_for(a, &other.k, &err));
    assert_non_null(strstr(err.message, "parameter BM with values 16,32,64 but the one being added "
                                        "has 16,32,128"));
    tk_free(&other);

    /* An int parameter that became an enum. */
    make_gemm(&other);
    static const char *const bns[] = {"a", "b"};
    other.k.nparams = 1;
    tk_param_enum(&other, "BN", 2, bns);
    tk_param_enum(&other, "LAYOUT", 2, (const char *const[]){"row", "col"});
    assert_null(tf_archive_kernel_for(a, &other.k, &err));
    assert_non_null(strstr(err.message, "parameter BN of kind int but the one being added has enum"));
    tk_free(&other);

    /* Other sizes, other metrics. */
    make_gemm(&other);
    other.k.nsizes = 2;
    assert_null(tf_archive_kernel_for(a, &other.k, &err));
    assert_non_null(strstr(err.message, "problem sizes M,N,K but the one being added has M,N"));
    tk_free(&other);
    make_gemm(&other);
    other.k.nmetrics = 0;
    assert_null(tf_archive_kernel_for(a, &other.k, &err));
    assert_non_null(strstr(err.message, "metrics gflops but the one being added has (none)"));
    tk_free(&other);

    assert_int_equal(a->nkernels, 1);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

/* Names that cannot become columns or groups are refused when the kernel enters the archive. */
static void test_kernel_for_bad_names(void **state)
{
    (void)state;
    struct test_kernel t;
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();

    make_vecadd(&t);
    t.params[0].name = "status";
    assert_null(tf_archive_kernel_for(a, &t.k, &err));
    assert_non_null(strstr(err.message, "two columns named 'status'"));

    make_vecadd(&t);
    t.k.name = "a/b";
    assert_null(tf_archive_kernel_for(a, &t.k, &err));
    assert_non_null(strstr(err.message, "cannot name an archive group"));

    make_vecadd(&t);
    tk_param_enum(&t, "ALGO", 1, (const char *const[]){"a_value_that_is_longer_than_32_bytes"});
    assert_null(tf_archive_kernel_for(a, &t.k, &err));
    assert_non_null(strstr(err.message, "longer than 32 bytes"));

    assert_int_equal(a->nkernels, 0);
    tf_archive_destroy(a);
}

static void test_device_dedupe(void **state)
{
    (void)state;
    struct tf_archive *a = tf_archive_create();
    struct tf_device d0 = make_device("cuda", "H100", "GPU-A", "node1");
    struct tf_device d0_again = d0;
    d0_again.compute_units = 7; /* not part of the identity */
    tf_strlcpy(d0_again.driver_version, "999", sizeof d0_again.driver_version);
    struct tf_device other_uuid = make_device("cuda", "H100", "GPU-B", "node1");
    struct tf_device other_host = make_device("cuda", "H100", "GPU-A", "node2");
    struct tf_device other_backend = make_device("hip", "H100", "GPU-A", "node1");
    assert_int_equal(tf_archive_add_device(a, &d0), 0);
    assert_int_equal(tf_archive_add_device(a, &d0_again), 0);
    assert_int_equal(tf_archive_add_device(a, &other_uuid), 1);
    assert_int_equal(tf_archive_add_device(a, &other_host), 2);
    assert_int_equal(tf_archive_add_device(a, &other_backend), 3);
    assert_int_equal(tf_archive_add_device(a, &other_uuid), 1);
    assert_int_equal(a->ndevices, 4);
    assert_int_equal(a->devices[0].compute_units, 132);
    tf_archive_destroy(a);
}

static void test_problem_for(void **state)
{
    (void)state;
    struct test_kernel gemm, moved;
    make_gemm(&gemm);
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm.k, &err);
    assert_int_equal(tf_archive_problem_for(ak, &gemm.k, 1), 0);
    assert_int_equal(tf_archive_problem_for(ak, &gemm.k, 0), 1);
    assert_int_equal(tf_archive_problem_for(ak, &gemm.k, 1), 0);
    /* "small" with other sizes is another problem; the old rows keep their sizes. */
    make_gemm(&moved);
    moved.sizes[0][2] = 128;
    assert_int_equal(tf_archive_problem_for(ak, &moved.k, 0), 2);
    assert_int_equal(ak->nproblems, 3);
    assert_string_equal(ak->problems[2].name, "small");
    assert_int_equal(ak->problems[2].sizes[2], 128);
    assert_int_equal(ak->problems[1].sizes[2], 64);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&moved);
}

static void test_truncated(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char path[512];
    path_in_tmp(path, sizeof path, "truncated.h5");
    write_ok(a, path);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 1000);
    assert_int_equal(truncate(path, st.st_size / 2), 0);
    struct tf_error err = {0};
    assert_null(tf_archive_read(path, &err));
    assert_true(err.code != TF_ERR_NONE);
    assert_non_null(strstr(err.message, path));
    /* Cut in the very first bytes too: not even the signature is whole. */
    assert_int_equal(truncate(path, 5), 0);
    read_fails(path, "not an HDF5 file");
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

static void test_foreign_hdf5(void **state)
{
    (void)state;
    char path[512];
    path_in_tmp(path, sizeof path, "foreign.h5");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    hsize_t dims[1] = {4};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t ds = H5Dcreate2(f, "data", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int v[4] = {1, 2, 3, 4};
    assert_true(H5Dwrite(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Fclose(f);
    read_fails(path, "is an HDF5 file but not a tunefarm archive (no 'format' attribute)");
}

static void test_not_hdf5_and_missing(void **state)
{
    (void)state;
    char path[512];
    path_in_tmp(path, sizeof path, "text.h5");
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    for (int i = 0; i < 200; i++)
        fputs("this is not an archive\n", fp);
    fclose(fp);
    read_fails(path, "is not an HDF5 file");
    path_in_tmp(path, sizeof path, "does-not-exist.h5");
    read_fails(path, "No such file or directory");
    read_fails(tmpdir, "not a regular file");
}

static void test_unwritable(void **state)
{
    (void)state;
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    char file[512], path[512], sub[1100];

    assert_int_equal(tf_archive_write(a, "/proc/forbidden/x.h5", &err), -1);
    assert_non_null(strstr(err.message, "/proc/forbidden"));

    path_in_tmp(file, sizeof file, "plain-file");
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    snprintf(sub, sizeof sub, "%s/sub/x.h5", file);
    assert_int_equal(tf_archive_write(a, sub, &err), -1);
    assert_non_null(strstr(err.message, "cannot create folder"));
    assert_non_null(strstr(err.message, "Not a directory"));

    /* A folder as the target is refused before anything is written. */
    path_in_tmp(path, sizeof path, "target-dir");
    assert_int_equal(mkdir(path, 0777), 0);
    snprintf(sub, sizeof sub, "%s/keep", path);
    fp = fopen(sub, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(count_temp_files(tmpdir), 0);
    assert_int_equal(tf_archive_write(a, path, &err), -1);
    assert_non_null(strstr(err.message, "is a folder"));
    assert_int_equal(count_temp_files(tmpdir), 0);
    assert_int_equal(access(sub, F_OK), 0);
    tf_archive_destroy(a);
}

/* The write fails late, after HDF5 built the file (a full disk, a quota; here
 * a file size limit, EFBIG): the message says so in words, the temporary is
 * gone and the old archive is byte for byte as it was, with its mode. In a
 * child: the limit and SIGXFSZ's disposition are process-wide. */
static void test_write_fails_late(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char path[512];
    path_in_tmp(path, sizeof path, "late.h5");
    write_ok(a, path);
    assert_int_equal(chmod(path, 0600), 0);
    struct stat before;
    assert_int_equal(stat(path, &before), 0);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char *old = malloc((size_t)before.st_size);
    assert_int_equal(fread(old, 1, (size_t)before.st_size, fp), (size_t)before.st_size);
    fclose(fp);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct tf_error err = {0};
        struct rlimit lim = {4096, 4096}; /* the archive is larger */
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
            _exit(10);
        if (tf_archive_write(a, path, &err) != -1)
            _exit(11);
        if (strstr(err.message, "File too large") == NULL ||
            strstr(err.message, "left as it was") == NULL) {
            fprintf(stderr, "message: %s\n", err.message);
            _exit(12);
        }
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(count_temp_files(tmpdir), 0);
    struct stat after;
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(after.st_size, before.st_size);
    assert_int_equal(after.st_mode & 07777, 0600);
    fp = fopen(path, "rb");
    assert_non_null(fp);
    char *now = malloc((size_t)after.st_size);
    assert_int_equal(fread(now, 1, (size_t)after.st_size, fp), (size_t)after.st_size);
    fclose(fp);
    assert_memory_equal(old, now, (size_t)after.st_size);
    free(old);
    free(now);
    /* A rewrite that succeeds keeps the mode too. */
    write_ok(a, path);
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(after.st_mode & 07777, 0600);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* An archive path that is a symbolic link: the file it names is replaced and
 * the link stays; a FIFO is refused (an archive is a file). */
static void test_write_through_link(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char real[512], link[512], fifo[512];
    path_in_tmp(real, sizeof real, "real.h5");
    path_in_tmp(link, sizeof link, "link.h5");
    path_in_tmp(fifo, sizeof fifo, "fifo.h5");
    write_ok(a, real);
    assert_int_equal(symlink("real.h5", link), 0);
    write_ok(a, link);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    struct tf_archive *b = read_ok(real);
    assert_archives_equal(a, b);
    tf_archive_destroy(b);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    struct tf_error err = {0};
    assert_int_equal(tf_archive_write(a, fifo, &err), -1);
    assert_non_null(strstr(err.message, "not a file"));
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(count_temp_files(tmpdir), 0);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* An inconsistent model is refused before anything is written: the old file stays. */
static void test_invalid_model_keeps_old_file(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char path[512];
    path_in_tmp(path, sizeof path, "keep.h5");
    write_ok(a, path);
    a->kernels[0].rows[3].device = 7;
    struct tf_error err = {0};
    assert_int_equal(tf_archive_write(a, path, &err), -1);
    assert_non_null(strstr(err.message, "out-of-range device"));
    assert_int_equal(count_temp_files(tmpdir), 0);
    struct tf_archive *b = read_ok(path);
    assert_int_equal(b->kernels[0].rows[3].device, 1);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* Overwrite one member of one row of `dataset` in place (HDF5 partial compound write). */
static void poke_table(const char *path, const char *dataset, const char *column, hid_t mtype,
                       const void *value, hsize_t row)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t ds = H5Dopen2(f, dataset, H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t ct = H5Tcreate(H5T_COMPOUND, H5Tget_size(mtype));
    H5Tinsert(ct, column, 0, mtype);
    hid_t fs = H5Dget_space(ds);
    hsize_t start[1] = {row}, count[1] = {1};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(1, count, NULL);
    assert_true(H5Dwrite(ds, ct, ms, fs, H5P_DEFAULT, value) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Tclose(ct);
    H5Dclose(ds);
    H5Fclose(f);
}

static void poke_results(const char *path, const char *column, hid_t mtype, const void *value,
                         hsize_t row)
{
    poke_table(path, "/kernels/gemm/results", column, mtype, value, row);
}

/* Write `value` into `column` of `dataset` at `row` in the column's own file
 * type: no conversion, so an enum column can be given a value none of its
 * members has, and a string column exactly its bytes. */
static void poke_raw(const char *path, const char *dataset, const char *column,
                     const void *value, hsize_t row)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t ds = H5Dopen2(f, dataset, H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t ft = H5Dget_type(ds);
    int idx = H5Tget_member_index(ft, column);
    assert_true(idx >= 0);
    hid_t mt = H5Tget_member_type(ft, (unsigned)idx);
    H5Tclose(ft);
    H5Dclose(ds);
    H5Fclose(f);
    poke_table(path, dataset, column, mt, value, row);
    H5Tclose(mt);
}

/* Cross references one past their end, edited into a valid file: each is
 * refused with the table, row and column (the checks are '>=' against a
 * count, and a count itself is out of range). */
static void test_edited_references_at_the_bound(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd); /* 2 runs, 2 devices, 2 gemm problems */
    char path[512];
    path_in_tmp(path, sizeof path, "bound.h5");

    write_ok(a, path);
    uint32_t two = 2;
    poke_results(path, "run", H5T_NATIVE_UINT32, &two, 1);
    read_fails(path, "dataset /kernels/gemm/results row 1: column 'run' is out of range");

    write_ok(a, path);
    poke_results(path, "device", H5T_NATIVE_UINT32, &two, 1);
    read_fails(path, "dataset /kernels/gemm/results row 1: column 'device' is out of range");

    write_ok(a, path);
    poke_results(path, "problem", H5T_NATIVE_UINT32, &two, 1);
    read_fails(path, "dataset /kernels/gemm/results row 1: column 'problem' is out of range");

    write_ok(a, path);
    uint8_t status = TF_STATUS_COUNT;
    poke_raw(path, "/kernels/gemm/results", "status", &status, 1);
    read_fails(path, "dataset /kernels/gemm/results row 1: column 'status' is out of range");

    write_ok(a, path);
    uint8_t energy_status = TF_ENERGY_COUNT;
    poke_raw(path, "/kernels/gemm/results", "energy_status", &energy_status, 1);
    read_fails(path, "dataset /kernels/gemm/results row 1: column 'energy_status' is out of "
                     "range");

    /* an enum parameter's column must agree with the configuration too
     * (row 0 is config 1: LAYOUT col) */
    write_ok(a, path);
    char layout[64]; /* at least the column's width (TF_ARCHIVE_ENUM_LEN) */
    memset(layout, 0, sizeof layout);
    strcpy(layout, "row");
    poke_raw(path, "/kernels/gemm/results", "LAYOUT", layout, 0);
    read_fails(path, "row 0: column 'LAYOUT' disagrees with config 1");

    /* ids equal the row index */
    write_ok(a, path);
    uint32_t one = 1;
    poke_table(path, "/runs", "id", H5T_NATIVE_UINT32, &one, 0);
    read_fails(path, "row 0 has id 1 (ids must equal the row index)");

    /* a plan row's run */
    write_ok(a, path);
    poke_table(path, "/plan", "run", H5T_NATIVE_UINT32, &two, 0);
    read_fails(path, "/plan row 0 names a run, kernel, problem or device the archive does not "
                     "have");

    /* each of them at the last valid value reads */
    write_ok(a, path);
    poke_results(path, "run", H5T_NATIVE_UINT32, &one, 0);
    poke_results(path, "problem", H5T_NATIVE_UINT32, &one, 0);
    struct tf_archive *b = read_ok(path);
    assert_int_equal(b->kernels[0].rows[0].run, 1);
    assert_int_equal(b->kernels[0].rows[0].r.problem, 1);
    tf_archive_destroy(b);

    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

static void test_hand_edited_files(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char path[512];
    path_in_tmp(path, sizeof path, "edited.h5");

    write_ok(a, path);
    uint32_t dev = 99;
    poke_results(path, "device", H5T_NATIVE_UINT32, &dev, 1);
    read_fails(path, "dataset /kernels/gemm/results row 1: column 'device' is out of range");

    write_ok(a, path);
    int64_t bm = 48;
    poke_results(path, "BM", H5T_NATIVE_INT64, &bm, 4);
    read_fails(path, "row 4: column 'BM' disagrees with config");

    write_ok(a, path);
    uint64_t config = 12; /* gemm has 12 configurations: 0..11 */
    poke_results(path, "config", H5T_NATIVE_UINT64, &config, 0);
    read_fails(path, "column 'config' is out of range");

    write_ok(a, path);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t at = H5Aopen(f, "schema_version", H5P_DEFAULT);
    int32_t v = 2;
    assert_true(H5Awrite(at, H5T_NATIVE_INT32, &v) >= 0);
    H5Aclose(at);
    H5Fclose(f);
    read_fails(path, "schema version 2");

    /* Version 0 never existed: refused as unknown, like any version but 1. */
    write_ok(a, path);
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    at = H5Aopen(f, "schema_version", H5P_DEFAULT);
    v = 0;
    assert_true(H5Awrite(at, H5T_NATIVE_INT32, &v) >= 0);
    H5Aclose(at);
    H5Fclose(f);
    read_fails(path, "has archive schema version 0; this tunefarm reads version 1");

    /* An archive id that is not 32 hex digits. */
    write_ok(a, path);
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Adelete(f, "archive_id") >= 0);
    hid_t st = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    assert_true(H5Tset_size(st, 8) >= 0);
    at = H5Acreate2(f, "archive_id", st, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(at >= 0 && H5Awrite(at, st, "NOTHEX!!") >= 0);
    H5Aclose(at);
    H5Sclose(sp);
    H5Tclose(st);
    H5Fclose(f);
    read_fails(path, "root attribute 'archive_id' is 'NOTHEX!!', expected 32 lowercase hex digits");

    write_ok(a, path);
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Ldelete(f, "/kernels/gemm/problems", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    read_fails(path, "no dataset /kernels/gemm/problems");

    write_ok(a, path);
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "/kernels/gemm", H5P_DEFAULT);
    assert_true(H5Adelete(g, "values:LAYOUT") >= 0);
    H5Gclose(g);
    H5Fclose(f);
    read_fails(path, "/kernels/gemm has no attribute 'values:LAYOUT'");

    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* Replace dataset `name` of `path` by a chunked copy of its rows whose extent
 * claims `n` rows: the chunks past the copied rows are never written, so the
 * file stays a few kilobytes. */
static void claim_rows(const char *path, const char *name, hsize_t n)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t type = H5Dget_type(d), space = H5Dget_space(d);
    hsize_t rows = 0;
    assert_true(H5Sget_simple_extent_dims(space, &rows, NULL) == 1 && rows > 0);
    unsigned char *buf = malloc(rows * H5Tget_size(type));
    assert_true(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    H5Sclose(space);
    H5Dclose(d);
    assert_true(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
    hsize_t chunk = 64, unlimited = H5S_UNLIMITED;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    assert_true(H5Pset_chunk(dcpl, 1, &chunk) >= 0);
    space = H5Screate_simple(1, &rows, &unlimited);
    d = H5Dcreate2(f, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    assert_true(d >= 0 && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    assert_true(H5Dset_extent(d, &n) >= 0);
    free(buf);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Tclose(type);
    H5Dclose(d);
    H5Fclose(f);
}

static int table_pack_zeros(void *ctx, const struct tf_table *t, unsigned char *buf,
                            uint64_t lo, uint64_t hi, struct tf_error *err)
{
    (void)ctx, (void)t, (void)buf, (void)lo, (void)hi, (void)err;
    return 0; /* the buffer comes zeroed */
}

static int table_sized(void *ctx, uint64_t nrows, struct tf_error *err)
{
    (void)err;
    *(uint64_t *)ctx = nrows;
    return 0;
}

static int table_unpack_nothing(void *ctx, const struct tf_table *t, const unsigned char *buf,
                                uint64_t lo, uint64_t hi, struct tf_error *err)
{
    (void)ctx, (void)t, (void)buf, (void)lo, (void)hi, (void)err;
    return 0;
}

/* tf_table_read of dataset `name` fails naming `needle`. */
static void table_read_fails(hid_t f, const char *name, const struct tf_table *t,
                             const char *needle)
{
    struct tf_error err = {0};
    uint64_t n = 0;
    if (tf_table_read(f, name, t, table_sized, table_unpack_nothing, &n, &err) == 0)
        fail_msg("dataset %s was read (%llu rows); expected '%s'", name, (unsigned long long)n,
                 needle);
    if (strstr(err.message, needle) == NULL)
        fail_msg("dataset %s: '%s'; expected '%s'", name, err.message, needle);
}

/* schema/archive_table.c's own rules, below the archive model (whose names and
 * strings never reach them): a column needs a name; a string longer than its
 * column is cut to it, leaving the next column whole, and read back into a
 * smaller buffer cut to that; a reader refuses a dataset that is not a table,
 * a column of another class (h5py can rewrite one), and a contiguous dataset
 * that claims rows it never stored (fill values would be read as rows). */
static void test_table_rules(void **state)
{
    (void)state;
    struct tf_error err = {0};
    struct tf_table t, other;
    tf_table_init(&t, "table.h5", "/t");
    assert_int_equal(tf_table_add(&t, "", TF_COL_U8, 0, &err), -1);
    assert_non_null(strstr(err.message, "empty column name"));
    assert_int_equal(tf_table_add(&t, "s", TF_COL_STR, 4, &err), 0);
    assert_int_equal(tf_table_add(&t, "u", TF_COL_U8, 0, &err), 1);
    assert_int_equal(t.rowsize, 5);
    unsigned char buf[16] = {0};
    const uint8_t seven = 7;
    uint8_t got = 0;
    tf_table_put_num(&t, buf, 0, 1, &seven, 1);
    tf_table_put_str(&t, buf, 0, 0, "abcdefgh");
    tf_table_get_num(&t, buf, 0, 1, &got, 1);
    assert_int_equal(got, 7);
    assert_int_equal(buf[5], 0); /* row 1 untouched */
    char dst[8];
    tf_table_get_str(&t, buf, 0, 0, dst, sizeof dst);
    assert_string_equal(dst, "abcd");
    memset(dst, 'z', sizeof dst);
    tf_table_get_str(&t, buf, 0, 0, dst, 3);
    assert_string_equal(dst, "ab");
    assert_int_equal(dst[3], 'z');

    char path[512];
    path_in_tmp(path, sizeof path, "table.h5");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_int_equal(tf_table_write(f, "t", &t, 3, 0, table_pack_zeros, NULL, &err), 0);
    uint64_t n = 0;
    assert_int_equal(tf_table_read(f, "t", &t, table_sized, table_unpack_nothing, &n, &err), 0);
    assert_int_equal(n, 3);
    /* "u" read as a float column */
    tf_table_init(&other, "table.h5", "/t");
    assert_int_equal(tf_table_add(&other, "s", TF_COL_STR, 4, &err), 0);
    assert_int_equal(tf_table_add(&other, "u", TF_COL_F64, 0, &err), 1);
    table_read_fails(f, "t", &other, "column 'u' is");
    tf_table_free(&other);
    /* a plain array of 3 ints */
    hsize_t three = 3, thousand = 1000;
    hid_t space = H5Screate_simple(1, &three, NULL);
    hid_t d = H5Dcreate2(f, "plain", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    H5Dclose(d);
    H5Sclose(space);
    table_read_fails(f, "plain", &t, "is not a table");
    /* the table's own type, 1000 rows declared, nothing written (contiguous) */
    d = H5Dopen2(f, "t", H5P_DEFAULT);
    hid_t type = H5Dget_type(d);
    H5Dclose(d);
    space = H5Screate_simple(1, &thousand, NULL);
    d = H5Dcreate2(f, "claims", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    H5Dclose(d);
    H5Sclose(space);
    H5Tclose(type);
    table_read_fails(f, "claims", &t, "claims 1000 rows but stores at most 0");
    H5Fclose(f);
    unlink(path);
    tf_table_free(&t);
}

/* A table whose extent claims rows its file does not store (2^31 - 1 devices,
 * sessions or plan rows in a file of kilobytes) is refused, saying so: it
 * aborted every reader (tf_xcalloc of 2^31 x 704 bytes: exit 134). */
static void test_claimed_rows_not_stored(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char path[512];
    path_in_tmp(path, sizeof path, "claims.h5");
    const char *tables[] = {"/devices", "/runs", "/kernels/gemm/problems",
                            "/kernels/gemm/results"};
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        write_ok(a, path);
        claim_rows(path, tables[i], (hsize_t)INT32_MAX);
        read_fails(path, "rows but stores at most");
    }
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

static void test_external_readers(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char path[512];
    path_in_tmp(path, sizeof path, "external.h5");
    write_ok(a, path);
    if (on_path("h5dump")) {
        char *argv[] = {"h5dump", "-H", path, NULL};
        assert_int_equal(spawn_wait(argv, 1), 0);
    } else {
        print_message("skipped: h5dump not found on PATH\n");
    }
    const char *script = "tests/integration/read_archive.py";
    if (access("/usr/bin/python3", X_OK) == 0 && access(script, R_OK) == 0) {
        char *argv[] = {"/usr/bin/python3", (char *)script, path, NULL};
        assert_int_equal(spawn_wait(argv, 0), 0);
        /* ... and it must reject what is not an archive. */
        char bad[512];
        path_in_tmp(bad, sizeof bad, "foreign-for-python.h5");
        hid_t f = H5Fcreate(bad, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        H5Fclose(f);
        char *argv2[] = {"/usr/bin/python3", (char *)script, bad, NULL};
        assert_int_not_equal(spawn_wait(argv2, 1), 0);

        /* A copy rewritten by h5py: columns in reverse order, UTF-8 variable-length
         * string attributes, no link creation order. Our reader must still load it. */
        static const char rewrite[] =
            "import sys, h5py, numpy as np\n"
            "src = h5py.File(sys.argv[1], 'r'); dst = h5py.File(sys.argv[2], 'w')\n"
            "def rev(ds):\n"
            "    a = ds[()]; names = list(ds.dtype.names)[::-1]\n"
            "    out = np.empty(a.shape, np.dtype([(n, ds.dtype[n]) for n in names]))\n"
            "    for n in names: out[n] = a[n]\n"
            "    return out\n"
            "def attrs(s, d):\n"
            "    for k, v in s.attrs.items():\n"
            "        if isinstance(v, bytes): d.attrs[k] = v.decode()\n"
            "        elif isinstance(v, np.ndarray) and v.dtype.kind == 'S':\n"
            "            d.attrs.create(k, [x.decode() for x in v], dtype=h5py.string_dtype())\n"
            "        else: d.attrs[k] = v\n"
            "attrs(src, dst)\n"
            "for t in ('devices', 'runs', 'plan', 'sessions', 'session_devices', 'run_kernels'): dst.create_dataset(t, data=rev(src[t]))\n"
            "for name in sorted(src['kernels'], reverse=True):\n"
            "    s = src['kernels'][name]; g = dst.create_group('kernels/' + name); attrs(s, g)\n"
            "    g.create_dataset('problems', data=rev(s['problems']))\n"
            "    g.create_dataset('results', data=rev(s['results']), maxshape=(None,), chunks=True)\n";
        char copy[512];
        path_in_tmp(copy, sizeof copy, "rewritten.h5");
        char *argv3[] = {"/usr/bin/python3", "-c", (char *)rewrite, path, copy, NULL};
        assert_int_equal(spawn_wait(argv3, 0), 0);
        struct tf_archive *b = read_ok(copy);
        /* Without creation order kernels come back by name, which here is the same order. */
        assert_archives_equal(a, b);
        tf_archive_destroy(b);
    } else {
        print_message("skipped: /usr/bin/python3 or %s not found (run from the repo root)\n",
                      script);
    }
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* ---------------------------------------------------------------- per-problem defaults */

/* The `default_config` column of /kernels/NAME/problems as written, into out[]
 * (at most `max` rows); the number of rows. */
static int problem_default_column(const char *path, const char *kernel, uint64_t *out, int max)
{
    char name[256];
    snprintf(name, sizeof name, "/kernels/%s/problems", kernel);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t sp = H5Dget_space(ds);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(sp, &n, NULL);
    assert_true(n <= (hsize_t)max);
    hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(uint64_t));
    H5Tinsert(ct, "default_config", 0, H5T_NATIVE_UINT64);
    assert_true(H5Dread(ds, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
    H5Tclose(ct);
    H5Sclose(sp);
    H5Dclose(ds);
    H5Fclose(f);
    return (int)n;
}

/* Rewrite table `name` without the columns `drop[0..ndrop)` (each must be
 * there), as an archive written before they existed has it. */
static void drop_columns(const char *path, const char *name, const char *const *drop, int ndrop)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t ft = H5Dget_type(ds), sp = H5Dget_space(ds);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(sp, &n, NULL);
    /* The old row type: every member but the dropped ones, packed. */
    int members = H5Tget_nmembers(ft), kept = 0;
    size_t size = 0;
    for (int pass = 0; pass < 2; pass++) {
        hid_t old = pass == 1 ? H5Tcreate(H5T_COMPOUND, size) : H5I_INVALID_HID;
        size = 0;
        for (int i = 0; i < members; i++) {
            char *m = H5Tget_member_name(ft, (unsigned)i);
            hid_t mt = H5Tget_member_type(ft, (unsigned)i);
            int dropped = 0;
            for (int d = 0; d < ndrop; d++)
                dropped |= strcmp(m, drop[d]) == 0;
            if (!dropped) {
                if (pass == 1)
                    H5Tinsert(old, m, size, mt);
                size += H5Tget_size(mt);
            }
            H5Tclose(mt);
            H5free_memory(m);
        }
        if (pass == 0)
            continue;
        kept = H5Tget_nmembers(old);
        assert_int_equal(kept, members - ndrop); /* it had every column */
        unsigned char *rows = calloc((size_t)n + 1, size);
        assert_true(H5Dread(ds, old, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0);
        H5Dclose(ds);
        assert_true(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
        /* contiguous, fixed size: a results table's unlimited size would need chunks */
        hid_t fixed = H5Screate_simple(1, &n, NULL);
        ds = H5Dcreate2(f, name, old, fixed, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Sclose(fixed);
        assert_true(ds >= 0);
        assert_true(H5Dwrite(ds, old, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0);
        free(rows);
        H5Tclose(old);
    }
    H5Dclose(ds);
    H5Sclose(sp);
    H5Tclose(ft);
    H5Fclose(f);
}

/* Rewrite /kernels/NAME/problems without its `default_config` column, as an
 * archive written before per-problem defaults has it. */
static void drop_problem_defaults(const char *path, const char *kernel)
{
    char name[256];
    static const char *const col[] = {"default_config"};
    snprintf(name, sizeof name, "/kernels/%s/problems", kernel);
    drop_columns(path, name, col, 1);
}

/* True if the group of `kernel` has attribute `attr`. */
static int kernel_has_attr(const char *path, const char *kernel, const char *attr)
{
    char name[256];
    snprintf(name, sizeof name, "/kernels/%s", kernel);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gopen2(f, name, H5P_DEFAULT);
    assert_true(g >= 0);
    int has = H5Aexists(g, attr) > 0;
    H5Gclose(g);
    H5Fclose(f);
    return has;
}

/* gemm whose default follows the problem: small -> config 2, large -> config 9. */
static const uint64_t gemm_defaults[] = {2, 9};

static void test_problem_defaults_round_trip(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    tk_defaults(&gemm, gemm_defaults);
    assert_false(gemm.k.has_default); /* no kernel-wide default */
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    const struct tf_archive_kernel *ak = &a->kernels[0];
    /* problem_for took each problem's own default from the kernel */
    assert_true(ak->problems[0].has_default);
    assert_int_equal(ak->problems[0].default_index, 2);
    assert_true(ak->problems[1].has_default);
    assert_int_equal(ak->problems[1].default_index, 9);
    assert_false(ak->has_default);
    assert_false(a->kernels[1].problems[0].has_default);

    char path[512];
    path_in_tmp(path, sizeof path, "per-problem.h5");
    write_ok(a, path);
    /* In the file: the column, UINT64_MAX for none, and no kernel-wide attribute. */
    uint64_t col[4];
    assert_int_equal(problem_default_column(path, "gemm", col, 4), 2);
    assert_int_equal(col[0], 2);
    assert_int_equal(col[1], 9);
    assert_int_equal(problem_default_column(path, "vecadd", col, 4), 1);
    assert_true(col[0] == UINT64_MAX);
    assert_false(kernel_has_attr(path, "gemm", "default_index"));
    struct tf_archive *b = read_ok(path);
    assert_archives_equal(a, b);
    assert_int_equal(b->kernels[0].problems[1].default_index, 9);
    assert_false(b->kernels[1].problems[0].has_default);

    /* A literal default is still kernel-wide: attribute and column agree. */
    struct test_kernel lit;
    make_gemm(&lit);
    struct tf_archive *c = make_model(&lit, &vecadd);
    write_ok(c, path);
    assert_true(kernel_has_attr(path, "gemm", "default_index"));
    assert_int_equal(problem_default_column(path, "gemm", col, 4), 2);
    assert_int_equal(col[0], 5);
    assert_int_equal(col[1], 5);

    tf_archive_destroy(c);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
    tk_free(&lit);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* An archive written before per-problem defaults: the kernel's one
 * `default_index` holds for every problem; without it, none has a default. */
static void test_archive_without_problem_defaults(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm); /* literal default: config 5 */
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char path[512];
    path_in_tmp(path, sizeof path, "old-layout.h5");
    write_ok(a, path);
    drop_problem_defaults(path, "gemm");
    drop_problem_defaults(path, "vecadd");
    struct tf_archive *b = read_ok(path);
    assert_true(b->kernels[0].has_default);
    for (int p = 0; p < 2; p++) {
        assert_true(b->kernels[0].problems[p].has_default);
        assert_int_equal(b->kernels[0].problems[p].default_index, 5);
    }
    assert_false(b->kernels[1].problems[0].has_default);
    assert_archives_equal(a, b);
    /* Rewritten by this version, it gains the column. */
    write_ok(b, path);
    uint64_t col[4];
    assert_int_equal(problem_default_column(path, "gemm", col, 4), 2);
    assert_int_equal(col[1], 5);

    /* Old and without the kernel's attribute: no problem has a default. */
    drop_problem_defaults(path, "gemm");
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "/kernels/gemm", H5P_DEFAULT);
    assert_true(H5Adelete(g, "default_index") >= 0);
    H5Gclose(g);
    H5Fclose(f);
    struct tf_archive *c = read_ok(path);
    assert_false(c->kernels[0].has_default);
    assert_false(c->kernels[0].problems[0].has_default);
    assert_false(c->kernels[0].problems[1].has_default);

    tf_archive_destroy(c);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* Rewrite dataset `name` without the columns `drop` (NULL-terminated), as an
 * archive written before them has it. */
static void drop_dataset_columns(const char *path, const char *name, const char *const *drop)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t ft = H5Dget_type(ds), sp = H5Dget_space(ds);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(sp, &n, NULL);
    const int members = H5Tget_nmembers(ft);
    size_t size = 0;
    for (int pass = 0; pass < 2; pass++) {
        hid_t old = pass ? H5Tcreate(H5T_COMPOUND, size) : -1;
        size_t at = 0;
        int kept = 0;
        for (int i = 0; i < members; i++) {
            char *m = H5Tget_member_name(ft, (unsigned)i);
            hid_t mt = H5Tget_member_type(ft, (unsigned)i);
            int dropped = 0;
            for (int d = 0; drop[d]; d++)
                dropped |= strcmp(m, drop[d]) == 0;
            if (!dropped) {
                if (pass)
                    H5Tinsert(old, m, at, mt);
                at += H5Tget_size(mt);
                kept++;
            }
            H5Tclose(mt);
            H5free_memory(m);
        }
        size = at;
        if (!pass)
            continue;
        int ndrop = 0;
        while (drop[ndrop])
            ndrop++;
        assert_int_equal(kept, members - ndrop); /* it had every one of them */
        unsigned char *rows = calloc((size_t)n + 1, size);
        assert_true(H5Dread(ds, old, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0);
        hid_t dcpl = H5Dget_create_plist(ds); /* chunked, growable as written */
        H5Dclose(ds);
        assert_true(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
        ds = H5Dcreate2(f, name, old, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        H5Pclose(dcpl);
        assert_true(ds >= 0);
        assert_true(H5Dwrite(ds, old, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0);
        free(rows);
        H5Tclose(old);
    }
    H5Dclose(ds);
    H5Sclose(sp);
    H5Tclose(ft);
    H5Fclose(f);
}

/* Issue 14 item 8: the compiler's warnings of each row (a count and the first
 * one) are columns of the results table, read back as written; an archive
 * written before them reads -1 and "" (unknown) and gains the columns when
 * rewritten. */
static void test_warnings_columns(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    struct tf_archive_kernel *ak = &a->kernels[0];
    assert_true(ak->nrows >= 3);
    ak->rows[0].r.warnings = 2;
    tf_strlcpy(ak->rows[0].r.first_warning,
               "gemm.c:12:9: warning: unused variable 'x' [-Wunused-variable]",
               sizeof ak->rows[0].r.first_warning);
    ak->rows[1].r.warnings = 0;
    char path[512];
    path_in_tmp(path, sizeof path, "warnings.h5");
    write_ok(a, path);
    struct tf_archive *b = read_ok(path);
    assert_archives_equal(a, b);
    assert_int_equal(b->kernels[0].rows[0].r.warnings, 2);
    assert_string_equal(b->kernels[0].rows[0].r.first_warning,
                        "gemm.c:12:9: warning: unused variable 'x' [-Wunused-variable]");
    assert_int_equal(b->kernels[0].rows[1].r.warnings, 0);
    assert_int_equal(b->kernels[0].rows[2].r.warnings, -1);
    tf_archive_destroy(b);

    static const char *const columns[] = {"warnings", "first_warning", NULL};
    drop_dataset_columns(path, "/kernels/gemm/results", columns);
    drop_dataset_columns(path, "/kernels/vecadd/results", columns);
    b = read_ok(path);
    assert_int_equal(b->kernels[0].nrows, ak->nrows);
    for (uint64_t i = 0; i < b->kernels[0].nrows; i++) {
        assert_int_equal(b->kernels[0].rows[i].r.warnings, -1);
        assert_string_equal(b->kernels[0].rows[i].r.first_warning, "");
        assert_int_equal(b->kernels[0].rows[i].r.config, ak->rows[i].r.config);
    }
    write_ok(b, path);
    struct tf_archive *c = read_ok(path);
    assert_archives_equal(b, c);
    tf_archive_destroy(c);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* Issue 14 item 7: max_shared_per_sm came after archives were written with
 * one column per older property. Such an archive (the committed fuzz seed
 * tests/fuzz/corpus/archive/ranked.h5) still reads, the property taken as
 * the per-block opt-in; rewritten, it gains the column and keeps the value. */
static void test_archive_without_shared_per_sm(void **state)
{
    (void)state;
    const char *old = "tests/fuzz/corpus/archive/ranked.h5";
    hid_t f = H5Fopen(old, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t d = H5Dopen2(f, "devices", H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    assert_true(H5Tget_member_index(t, "max_shared_optin") >= 0);
    assert_true(H5Tget_member_index(t, "max_shared_per_sm") < 0); /* written before it */
    H5Tclose(t);
    H5Dclose(d);
    H5Fclose(f);
    struct tf_archive *a = read_ok(old);
    assert_true(a->ndevices >= 1);
    const int64_t optin = a->devices[0].props[TF_DEVPROP_MAX_SHARED_OPTIN];
    assert_true(optin > 0);
    assert_int_equal(a->devices[0].props[TF_DEVPROP_MAX_SHARED_PER_SM], optin);
    char path[512];
    path_in_tmp(path, sizeof path, "with-per-sm.h5");
    a->devices[0].props[TF_DEVPROP_MAX_SHARED_PER_SM] = 233472;
    write_ok(a, path);
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    d = H5Dopen2(f, "devices", H5P_DEFAULT);
    t = H5Dget_type(d);
    assert_true(H5Tget_member_index(t, "max_shared_per_sm") >= 0);
    H5Tclose(t);
    H5Dclose(d);
    H5Fclose(f);
    struct tf_archive *b = read_ok(path);
    assert_int_equal(b->devices[0].props[TF_DEVPROP_MAX_SHARED_PER_SM], 233472);
    assert_int_equal(b->devices[0].props[TF_DEVPROP_MAX_SHARED_OPTIN], optin);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
}

/* Rewrite table `name` without its column `column` (drop_columns of one). */
static void drop_column(const char *path, const char *name, const char *column)
{
    const char *const drop[] = {column};
    drop_columns(path, name, drop, 1);
}

/* ---------------------------------------------------------------- noise and energy */

/* The results columns `noisy` and `energy_status` (issue 13 item 7): an
 * archive written before them reads with no row noisy and every energy
 * status unknown, and gains them when this version rewrites it. A `noisy`
 * that is not 0 or 1 is a hand-edited file. */
static void test_archive_without_noise_and_energy(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char path[512];
    path_in_tmp(path, sizeof path, "before-noise.h5");
    write_ok(a, path);
    drop_column(path, "/kernels/gemm/results", "noisy");
    drop_column(path, "/kernels/gemm/results", "energy_status");
    struct tf_archive *b = read_ok(path);
    const struct tf_archive_kernel *ak = &b->kernels[0];
    assert_int_equal(ak->nrows, 6);
    for (uint64_t i = 0; i < ak->nrows; i++) {
        assert_int_equal(ak->rows[i].r.noisy, 0);
        assert_int_equal(ak->rows[i].r.energy_status, TF_ENERGY_UNKNOWN);
    }
    assert_true(ak->rows[1].r.energy_j == 0.061); /* the values stay */
    /* one column without the other reads too */
    write_ok(a, path);
    drop_column(path, "/kernels/gemm/results", "noisy");
    tf_archive_destroy(b);
    b = read_ok(path);
    assert_int_equal(b->kernels[0].rows[5].r.noisy, 0);
    assert_int_equal(b->kernels[0].rows[3].r.energy_status, TF_ENERGY_NO_WINDOW);
    /* rewritten by this version, it has both again */
    write_ok(b, path);
    tf_archive_destroy(b);
    b = read_ok(path);
    assert_int_equal(b->kernels[0].rows[3].r.energy_status, TF_ENERGY_NO_WINDOW);
    tf_archive_destroy(b);

    write_ok(a, path);
    const uint8_t two = 2;
    poke_results(path, "noisy", H5T_NATIVE_UINT8, &two, 4);
    read_fails(path, "dataset /kernels/gemm/results row 4: column 'noisy' is 2; expected 0 or 1");

    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* tf_archive_quality_count: the ok rows of one run, problem and device class
 * (or all of them), how many are noisy, how many have their energy. */
static void test_quality_count(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    const struct tf_archive_kernel *ak = &a->kernels[0];
    /* rows: 0 ok run 0 dev 0 small; 1 ok run 1 dev 0 small; 2 compile_error;
     * 3 ok run 1 dev 1 large (no_window); 4 timeout; 5 ok run 1 dev 1 large, noisy */
    struct tf_archive_quality q = {0};
    tf_archive_quality_count(a, ak, -1, UINT32_MAX, NULL, &q);
    assert_int_equal(q.ok, 4);
    assert_int_equal(q.noisy, 1);
    assert_int_equal(q.energy[TF_ENERGY_MEASURED], 3);
    assert_int_equal(q.energy[TF_ENERGY_NO_WINDOW], 1);
    assert_int_equal(q.energy[TF_ENERGY_NOT_RUN], 0); /* failures are not counted */

    memset(&q, 0, sizeof q);
    tf_archive_quality_count(a, ak, 1, UINT32_MAX, NULL, &q);
    assert_int_equal(q.ok, 3);
    char key[256];
    tf_device_class_key(&a->devices[1], key, sizeof key);
    memset(&q, 0, sizeof q);
    tf_archive_quality_count(a, ak, 1, 1, key, &q);
    assert_int_equal(q.ok, 2);
    assert_int_equal(q.noisy, 1);
    /* it adds to what `q` holds: the diff sums classes that way */
    tf_device_class_key(&a->devices[0], key, sizeof key);
    tf_archive_quality_count(a, ak, -1, 0, key, &q);
    assert_int_equal(q.ok, 4);
    memset(&q, 0, sizeof q);
    tf_archive_quality_count(a, ak, 0, 1, NULL, &q); /* run 0 measured nothing of large */
    assert_int_equal(q.ok, 0);

    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* A per-problem default outside the space: refused on read (a hand-edited
 * file) and before writing (an inconsistent model). */
static void test_bad_problem_default(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    tk_defaults(&gemm, gemm_defaults);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char path[512];
    path_in_tmp(path, sizeof path, "bad-default.h5");
    write_ok(a, path);
    uint64_t config = 12; /* gemm has 12 configurations: 0..11 */
    poke_table(path, "/kernels/gemm/problems", "default_config", H5T_NATIVE_UINT64, &config, 1);
    read_fails(path, "dataset /kernels/gemm/problems row 1: column 'default_config' (12) is out "
                     "of range");
    config = 11; /* the last configuration is fine */
    poke_table(path, "/kernels/gemm/problems", "default_config", H5T_NATIVE_UINT64, &config, 1);
    struct tf_archive *b = read_ok(path);
    assert_int_equal(b->kernels[0].problems[1].default_index, 11);
    tf_archive_destroy(b);

    a->kernels[0].problems[0].default_index = 12;
    struct tf_error err = {0};
    assert_int_equal(tf_archive_write(a, path, &err), -1);
    assert_non_null(strstr(err.message, "problem 0 has an out-of-range default 12"));
    assert_int_equal(count_temp_files(tmpdir), 0);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* A problem's default follows the newest kernel file that has the problem;
 * merging keeps `dst`'s and fills in what it lacks from `src`. */
static void test_problem_defaults_update_and_merge(void **state)
{
    (void)state;
    struct test_kernel lit, per, vecadd;
    make_gemm(&lit); /* kernel-wide 5 */
    make_gemm(&per);
    tk_defaults(&per, gemm_defaults);
    make_vecadd(&vecadd);
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &lit.k, &err);
    assert_non_null(ak);
    assert_int_equal(tf_archive_problem_for(ak, &lit.k, 0), 0);
    assert_int_equal(tf_archive_problem_for(ak, &lit.k, 1), 1);
    assert_int_equal(ak->problems[1].default_index, 5);
    /* The kernel file now follows the sizes; a run of "large" only. */
    assert_ptr_equal(tf_archive_kernel_for(a, &per.k, &err), ak);
    assert_false(ak->has_default);
    assert_int_equal(tf_archive_problem_for(ak, &per.k, 1), 1);
    assert_int_equal(ak->problems[1].default_index, 9);
    assert_int_equal(ak->problems[0].default_index, 5); /* not run: keeps its own */

    /* Merge into an archive that has "small" without a default and "large" with 3. */
    struct tf_archive *m = tf_archive_create();
    struct tf_archive_kernel *mk = tf_archive_kernel_for(m, &vecadd.k, &err);
    assert_non_null(mk);
    struct test_kernel none;
    make_gemm(&none);
    none.k.has_default = false;
    mk = tf_archive_kernel_for(m, &none.k, &err);
    assert_non_null(mk);
    tf_archive_problem_for(mk, &none.k, 0);
    tf_archive_problem_for(mk, &none.k, 1);
    mk->problems[1].has_default = 1;
    mk->problems[1].default_index = 3;
    struct tf_archive_merge_stats st;
    assert_int_equal(tf_archive_merge(m, a, &st, &err), 0);
    mk = tf_archive_find_kernel(m, "gemm");
    assert_true(mk->problems[0].has_default);
    assert_int_equal(mk->problems[0].default_index, 5); /* filled in from a */
    assert_int_equal(mk->problems[1].default_index, 3); /* m's own */

    tf_archive_destroy(m);
    tf_archive_destroy(a);
    tk_free(&none);
    tk_free(&lit);
    tk_free(&per);
    tk_free(&vecadd);
}

/* Merging: into an empty archive gives an equal one; twice adds nothing;
 * a second archive's runs get new ids, shared devices and problems are
 * matched; a kernel of another shape is refused and changes nothing. */
static void test_merge(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    struct tf_archive *m = tf_archive_create();
    assert_string_not_equal(m->id, a->id); /* every archive its own */
    m->created = a->created;
    struct tf_archive_merge_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_archive_merge(m, a, &st, &err), 0);
    tf_strlcpy(m->id, a->id, sizeof m->id);
    assert_int_equal(st.runs, 2);
    assert_int_equal(st.rows, 6);
    m->checkpoint = a->checkpoint;
    assert_archives_equal(a, m);
    assert_int_equal(tf_archive_merge(m, a, &st, &err), 0);
    assert_int_equal(st.runs, 0);
    assert_int_equal(st.runs_present, 2);
    assert_int_equal(st.rows, 0);
    assert_int_equal(m->kernels[0].nrows, 6);

    /* Another archive: one run of its own on a known device and a new one. */
    struct tf_archive *b = tf_archive_create();
    struct tf_device known = make_device("hip", "AMD Instinct MI300X", "GPU-1111-xyz", "node2");
    struct tf_device other = make_device("cuda", "NVIDIA A100", "GPU-2222", "node3");
    tf_archive_add_device(b, &other);
    tf_archive_add_device(b, &known);
    struct tf_archive_run run = make_run("array-7", 1714700000.0, 1714700100.0);
    tf_archive_add_run(b, &run);
    struct tf_archive_kernel *bk = tf_archive_kernel_for(b, &gemm.k, &err);
    assert_non_null(bk);
    uint32_t large = tf_archive_problem_for(bk, &gemm.k, 1); /* problem 0 in b */
    assert_int_equal(large, 0);
    struct tf_archive_row row = {.run = 0, .device = 1};
    tf_result_init(&row.r, 0, large, 3, TF_STATUS_OK);
    row.r.time_median = 2e-4;
    tf_archive_append(bk, &row);
    assert_int_equal(tf_archive_merge(m, b, &st, &err), 0);
    assert_int_equal(st.runs, 1);
    assert_int_equal(m->nruns, 3);
    assert_int_equal(m->ndevices, 3);       /* the MI300X matched, the A100 added */
    const struct tf_archive_row *got = &m->kernels[0].rows[6];
    assert_int_equal(got->run, 2);
    assert_int_equal(got->device, 1);       /* the MI300X's id in m */
    assert_int_equal(got->r.problem, 1);    /* "large" in m */
    assert_int_equal(got->r.config, 3);

    /* gemm with another value list: refused, nothing added. Its run and
     * device are its own (m has neither), so 'nothing added' holds only if
     * the kernels are checked before anything is added. */
    struct tf_archive *c = tf_archive_create();
    struct test_kernel gemm2;
    make_gemm(&gemm2);
    gemm2.ints[0][2] = 128;
    struct tf_archive_kernel *ck = tf_archive_kernel_for(c, &gemm2.k, &err);
    assert_non_null(ck);
    struct tf_device third = make_device("cuda", "NVIDIA L40S", "GPU-3333", "node4");
    tf_archive_add_device(c, &third);
    struct tf_archive_run crun = make_run("refused", 1714800000.0, 1714800100.0);
    tf_archive_add_run(c, &crun);
    struct tf_archive_row crow = {.run = 0, .device = 0};
    tf_result_init(&crow.r, 0, tf_archive_problem_for(ck, &gemm2.k, 0), 1, TF_STATUS_OK);
    tf_archive_append(ck, &crow);
    const uint64_t mrows = m->kernels[0].nrows;
    assert_int_not_equal(tf_archive_merge(m, c, &st, &err), 0);
    assert_non_null(strstr(err.message, "BM"));
    assert_int_equal(m->nruns, 3);
    assert_int_equal(m->ndevices, 3);
    assert_int_equal(m->kernels[0].nrows, mrows);

    tf_archive_destroy(c);
    tf_archive_destroy(b);
    tf_archive_destroy(m);
    tf_archive_destroy(a);
    tk_free(&gemm2);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* Ids: every new archive gets its own, it survives a round trip; an archive
 * written before ids reads back without one, and gets one when asked. */
static void test_archive_ids(void **state)
{
    (void)state;
    struct tf_archive *a = tf_archive_create(), *b = tf_archive_create();
    assert_int_equal(strlen(a->id), 32);
    assert_int_equal(strspn(a->id, "0123456789abcdef"), 32);
    assert_string_not_equal(a->id, b->id);
    char path[512];
    path_in_tmp(path, sizeof path, "ids.h5");
    a->id[0] = '\0'; /* as written by a tunefarm before ids */
    write_ok(a, path);
    struct tf_archive *c = read_ok(path);
    assert_string_equal(c->id, "");
    assert_int_equal(tf_archive_ensure_id(c), 1);
    assert_int_equal(strlen(c->id), 32);
    char id[TF_ARCHIVE_ID_LEN];
    tf_strlcpy(id, c->id, sizeof id);
    assert_int_equal(tf_archive_ensure_id(c), 0);
    assert_string_equal(c->id, id);
    write_ok(c, path);
    struct tf_archive *d = read_ok(path);
    assert_string_equal(d->id, id);
    tf_archive_destroy(d);
    tf_archive_destroy(c);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
}

/* A run merged while unfinished, merged again after it went on: the rows the
 * output lacks are added to that run (not a new one), its end is taken, and
 * a third merge adds nothing. */
static void test_merge_extends_run(void **state)
{
    (void)state;
    struct test_kernel gemm;
    make_gemm(&gemm);
    struct tf_error err = {0};
    struct tf_archive *src = tf_archive_create();
    struct tf_device d = make_device("host", "CPU", "cpu-0", "node1");
    tf_archive_add_device(src, &d);
    struct tf_archive_run run = make_run("demo", 1714560000.0, 0);
    tf_archive_add_run(src, &run);
    struct tf_archive_kernel *sk = tf_archive_kernel_for(src, &gemm.k, &err);
    assert_non_null(sk);
    tf_archive_problem_for(sk, &gemm.k, 0);
    for (uint64_t i = 0; i < 5; i++) {
        struct tf_archive_row row = {.run = 0, .device = 0};
        tf_result_init(&row.r, 0, 0, i, TF_STATUS_OK);
        row.r.phase = (uint8_t)(i == 4); /* config 4 in phase 1 ... */
        tf_archive_append(sk, &row);
    }
    sk->nrows = 3; /* interrupted after 3 rows */
    struct tf_archive *m = tf_archive_create();
    struct tf_archive_merge_stats st;
    assert_int_equal(tf_archive_merge(m, src, &st, &err), 0);
    assert_int_equal(st.runs, 1);
    assert_int_equal(st.rows, 3);
    assert_true(m->runs[0].end == 0);

    /* Resumed in the source: two more rows, and finished. */
    sk->nrows = 5;
    src->runs[0].end = 1714563600.0;
    struct tf_archive_row again = {.run = 0, .device = 0};
    tf_result_init(&again.r, 0, 0, 4, TF_STATUS_OK); /* ... and again in phase 0: its own row */
    tf_archive_append(sk, &again);
    assert_int_equal(tf_archive_merge(m, src, &st, &err), 0);
    assert_int_equal(st.runs, 0);
    assert_int_equal(st.runs_present, 1);
    assert_int_equal(st.runs_finished, 1);
    assert_int_equal(st.rows, 3);
    assert_int_equal(st.rows_to_present, 3);
    assert_int_equal(m->nruns, 1);
    assert_true(m->runs[0].end == 1714563600.0);
    assert_int_equal(m->kernels[0].nrows, 6);
    for (uint64_t i = 0; i < 6; i++)
        assert_int_equal(m->kernels[0].rows[i].run, 0);

    assert_int_equal(tf_archive_merge(m, src, &st, &err), 0);
    assert_int_equal(st.rows, 0);
    assert_int_equal(st.runs_finished, 0);
    assert_int_equal(m->kernels[0].nrows, 6);
    tf_archive_destroy(m);
    tf_archive_destroy(src);
    tk_free(&gemm);
}

/* An archive written before per-run provenance: no /sessions,
 * /session_devices, /run_kernels, no job settings in /runs. It reads, with
 * none of them, and a rewrite adds them (empty). */
static void test_archive_without_provenance(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char path[512];
    path_in_tmp(path, sizeof path, "before-provenance.h5");
    write_ok(a, path);
    static const char *const settings[] = {"search_strategy", "search_seed", "search_budget",
                                           "search", "measure", "screen"};
    drop_columns(path, "/runs", settings, 6);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_true(H5Ldelete(f, "/sessions", H5P_DEFAULT) >= 0);
    assert_true(H5Ldelete(f, "/session_devices", H5P_DEFAULT) >= 0);
    assert_true(H5Ldelete(f, "/run_kernels", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    struct tf_archive *b = read_ok(path);
    assert_int_equal(b->nruns, 2);
    assert_string_equal(b->runs[1].search_strategy, "");
    assert_int_equal(b->runs[1].search_seed, 0);
    assert_string_equal(b->runs[1].measure, "");
    assert_string_equal(b->runs[1].job_name, "nightly"); /* the rest is there */
    assert_int_equal(b->nsessions, 0);
    assert_int_equal(b->nsession_devices, 0);
    assert_int_equal(b->nrun_kernels, 0);
    assert_null(tf_archive_run_source_hash(b, 1, 0));
    assert_int_equal(b->kernels[0].nrows, 6);
    write_ok(b, path);
    struct tf_archive *c = read_ok(path);
    assert_archives_equal(b, c);
    tf_archive_destroy(c);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* Damaged provenance tables are refused with the table and column named. */
static void test_bad_provenance(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    char path[512];
    path_in_tmp(path, sizeof path, "bad-provenance.h5");
    write_ok(a, path);
    uint32_t bad = 9;
    poke_table(path, "/session_devices", "device", H5T_NATIVE_UINT32, &bad, 1);
    read_fails(path, "dataset /session_devices row 1: column 'device' is out of range");
    write_ok(a, path);
    poke_table(path, "/sessions", "run", H5T_NATIVE_UINT32, &bad, 0);
    read_fails(path, "dataset /sessions row 0: column 'run' is out of range");
    write_ok(a, path);
    poke_table(path, "/run_kernels", "run", H5T_NATIVE_UINT32, &bad, 2);
    read_fails(path, "/run_kernels row 2 names a run or kernel the archive does not have");
    /* and the writer refuses such a model */
    a->session_devices[0].session = 5;
    struct tf_error err = {0};
    assert_int_equal(tf_archive_write(a, path, &err), -1);
    assert_non_null(strstr(err.message, "session device row 0 is out of range"));
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* Merging carries sessions, what their devices ran with and the runs' source
 * hashes, onto the output's ids; merging again adds no session twice, and a
 * session added to a run since (a resume) comes over on its own. */
static void test_merge_provenance(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    struct tf_archive *m = tf_archive_create();
    /* m knows the MI300X already, under another id */
    struct tf_device mi = make_device("hip", "AMD Instinct MI300X", "GPU-1111-xyz", "node2");
    assert_int_equal(tf_archive_add_device(m, &mi), 0);
    struct tf_archive_merge_stats st;
    struct tf_error err = {0};
    assert_int_equal(tf_archive_merge(m, a, &st, &err), 0);
    assert_int_equal(m->nsessions, 2);
    assert_int_equal(m->nsession_devices, 3);
    assert_int_equal(m->session_devices[1].device, 0); /* the MI300X: m's device 0 */
    assert_int_equal(m->session_devices[0].device, 1); /* the H100: new in m */
    assert_string_equal(m->session_devices[2].d.driver_version, "580.159.04");
    assert_int_equal(m->nrun_kernels, 3);
    assert_string_equal(tf_archive_run_source_hash(m, 1, 1), vecadd.k.source_hash);
    assert_int_equal(tf_archive_merge(m, a, &st, &err), 0);
    assert_int_equal(m->nsessions, 2);
    assert_int_equal(m->nsession_devices, 3);
    assert_int_equal(m->nrun_kernels, 3);
    /* run 1 resumed once more in a, and its killed session 1 got an end after all */
    a->sessions[1].end = 1714740000.0;
    struct tf_archive_session s3 = a->sessions[1];
    s3.start = 1714819200.0;
    tf_strlcpy(s3.slurm_job_id, "130", sizeof s3.slurm_job_id);
    tf_archive_add_session(a, &s3);
    assert_int_equal(tf_archive_merge(m, a, &st, &err), 0);
    assert_int_equal(m->nsessions, 3);
    assert_int_equal(m->sessions[2].run, 1);
    assert_string_equal(m->sessions[2].slurm_job_id, "130");
    assert_true(m->sessions[1].end == 1714740000.0);
    tf_archive_destroy(m);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* What the merge keys on: a run's Slurm job id is part of its identity (an
 * array job's tasks can share job, start second and command), a result's
 * phase part of a row's (a screened configuration re-measured strictly is a
 * second row), and a session's known end is not taken back by an older copy
 * that has none. */
static void test_merge_identities(void **state)
{
    (void)state;
    struct test_kernel gemm;
    make_gemm(&gemm);
    struct tf_error err = {0};
    struct tf_archive *src = tf_archive_create();
    struct tf_device d = make_device("host", "CPU", "cpu-0", "node1");
    tf_archive_add_device(src, &d);
    struct tf_archive_run run = make_run("demo", 1714560000.0, 1714563600.0); /* Slurm 4242 */
    tf_archive_add_run(src, &run);
    struct tf_archive_kernel *sk = tf_archive_kernel_for(src, &gemm.k, &err);
    assert_non_null(sk);
    tf_archive_problem_for(sk, &gemm.k, 0);
    struct tf_archive_row row = {.run = 0, .device = 0};
    tf_result_init(&row.r, 0, 0, 4, TF_STATUS_OK);
    row.r.phase = 1; /* screened */
    tf_archive_append(sk, &row);
    struct tf_archive_session s = {.run = 0, .start = 1714560000.0, .end = 1714563600.0};
    tf_strlcpy(s.command, "tunefarm run jobs/demo.yaml", sizeof s.command);
    tf_strlcpy(s.slurm_job_id, "4242", sizeof s.slurm_job_id);
    tf_archive_add_session(src, &s);

    struct tf_archive *m = tf_archive_create();
    struct tf_archive_merge_stats st;
    assert_int_equal(tf_archive_merge(m, src, &st, &err), 0);
    assert_int_equal(m->kernels[0].nrows, 1);

    /* The run went on: config 4 re-measured in phase 2, in the same run. The
     * copy merged now is older about the session (no end yet). */
    row.r.phase = 2;
    tf_archive_append(sk, &row);
    src->sessions[0].end = 0;
    assert_int_equal(tf_archive_merge(m, src, &st, &err), 0);
    assert_int_equal(st.runs_present, 1);
    assert_int_equal(st.rows, 1);
    assert_int_equal(st.rows_to_present, 1);
    assert_int_equal(m->kernels[0].nrows, 2);
    assert_int_equal(m->kernels[0].rows[1].r.phase, 2);
    assert_int_equal(m->nsessions, 1);
    assert_true(m->sessions[0].end == 1714563600.0);

    /* The same job, start and command under another Slurm job id: another run. */
    struct tf_archive *twin = tf_archive_create();
    tf_archive_add_device(twin, &d);
    struct tf_archive_run other = run;
    tf_strlcpy(other.slurm_job_id, "4243", sizeof other.slurm_job_id);
    tf_archive_add_run(twin, &other);
    struct tf_archive_kernel *tk = tf_archive_kernel_for(twin, &gemm.k, &err);
    assert_non_null(tk);
    tf_archive_problem_for(tk, &gemm.k, 0);
    tf_archive_append(tk, &row); /* config 4, phase 2: the same key but for the run */
    assert_int_equal(tf_archive_merge(m, twin, &st, &err), 0);
    assert_int_equal(st.runs, 1);
    assert_int_equal(m->nruns, 2);
    assert_int_equal(m->kernels[0].nrows, 3);
    assert_int_equal(m->kernels[0].rows[2].run, 1);

    tf_archive_destroy(twin);
    tf_archive_destroy(m);
    tf_archive_destroy(src);
    tk_free(&gemm);
}

/* The value of float64 `column` of `dataset` at `row`, as the file has it. */
static double peek_double(const char *path, const char *dataset, const char *column, hsize_t row)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t ds = H5Dopen2(f, dataset, H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(double));
    H5Tinsert(ct, column, 0, H5T_NATIVE_DOUBLE);
    hid_t fs = H5Dget_space(ds);
    hsize_t start[1] = {row}, count[1] = {1};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(1, count, NULL);
    double v = -1;
    assert_true(H5Dread(ds, ct, ms, fs, H5P_DEFAULT, &v) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Tclose(ct);
    H5Dclose(ds);
    H5Fclose(f);
    return v;
}

/* A result's flags each in their own column (make_model has noisy and
 * throttled on the same row, so a swap went unseen), and a clock the model
 * does not know (0) is NaN in the file, as every unknown float of the
 * archive is for h5py and other readers. */
static void test_flags_and_unknown_clocks_in_the_file(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd);
    struct tf_archive_row *row = &a->kernels[0].rows[1];
    row->r.noisy = 0;
    row->r.throttled = 1;
    row->r.flushed_l2 = 0;
    row = &a->kernels[0].rows[5];
    row->r.noisy = 1;
    row->r.throttled = 0;
    char path[512];
    path_in_tmp(path, sizeof path, "flags.h5");
    write_ok(a, path);
    struct tf_archive *b = read_ok(path);
    const struct tf_result *r1 = &b->kernels[0].rows[1].r, *r5 = &b->kernels[0].rows[5].r;
    assert_int_equal(r1->noisy, 0);
    assert_int_equal(r1->throttled, 1);
    assert_int_equal(r1->flushed_l2, 0);
    assert_int_equal(r5->noisy, 1);
    assert_int_equal(r5->throttled, 0);
    assert_int_equal(r5->flushed_l2, 1);
    tf_archive_destroy(b);
    /* session device 2 (session 1, device 0): clock unknown, memory clock and
     * power limit known */
    assert_true(a->session_devices[2].d.clock_mhz == 0);
    assert_true(isnan(peek_double(path, "/session_devices", "clock_mhz", 2)));
    assert_true(peek_double(path, "/session_devices", "memory_clock_mhz", 2) == 2619);
    assert_true(peek_double(path, "/session_devices", "power_limit_w", 2) == 700);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* tf_archive_write refuses `a` with a message containing `needle`. */
static void write_fails(const struct tf_archive *a, const char *path, const char *needle)
{
    struct tf_error err = {0};
    if (tf_archive_write(a, path, &err) == 0)
        fail_msg("writing %s succeeded; expected an error with '%s'", path, needle);
    if (strstr(err.message, needle) == NULL)
        fail_msg("error '%s' does not mention '%s'", err.message, needle);
}

/* The writer's model checks (archive_validate.c) at each count itself: a
 * reference equal to the number of runs, sessions, devices, configurations
 * or statuses is refused before anything is written (it would not read
 * back); so are two kernels of one name. A kernel name of 255 bytes, the
 * archive's limit, is written and read; 256 is refused. */
static void test_model_references_at_the_bound(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = make_model(&gemm, &vecadd); /* 2 runs, 2 sessions, 12 configs */
    char path[512];
    path_in_tmp(path, sizeof path, "model-bound.h5");
    assert_int_equal(a->nruns, 2);
    assert_int_equal(a->nsessions, 2);

    a->plans[0].run = 2;
    write_fails(a, path, "plan row 0 is out of range");
    a->plans[0].run = 1;
    a->sessions[0].run = 2;
    write_fails(a, path, "session 0 names run 2, which is out of range");
    a->sessions[0].run = 1;
    a->session_devices[0].session = 2;
    write_fails(a, path, "session device row 0 is out of range");
    a->session_devices[0].session = 0;
    a->run_kernels[0].run = 2;
    write_fails(a, path, "run kernel row 0 is out of range");
    a->run_kernels[0].run = 0;
    struct tf_archive_row *row = &a->kernels[0].rows[0];
    row->run = 2;
    write_fails(a, path, "kernel 'gemm' row 0 has an out-of-range run");
    row->run = 0;
    row->r.config = 12;
    write_fails(a, path, "kernel 'gemm' row 0 has an out-of-range config");
    row->r.config = 11;
    row->r.status = TF_STATUS_COUNT;
    write_fails(a, path, "kernel 'gemm' row 0 has an out-of-range status");
    row->r.status = TF_STATUS_COUNT - 1;
    assert_int_equal(access(path, F_OK), -1); /* nothing was written */
    write_ok(a, path);                        /* each at its last valid value */
    struct tf_archive *b = read_ok(path);
    assert_int_equal(b->kernels[0].rows[0].r.config, 11);
    assert_int_equal(b->kernels[0].rows[0].r.status, TF_STATUS_COUNT - 1);
    tf_archive_destroy(b);

    assert_true(strlen(a->kernels[1].name) >= strlen("gemm"));
    strcpy(a->kernels[1].name, "gemm");
    write_fails(a, path, "two archive kernels named 'gemm'");
    strcpy(a->kernels[1].name, "vecadd");
    tf_archive_destroy(a);

    char name[300];
    memset(name, 'k', 256);
    name[255] = '\0';
    struct test_kernel t;
    struct tf_error err = {0};
    make_vecadd(&t);
    t.k.name = name;
    a = tf_archive_create();
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &t.k, &err);
    if (ak == NULL)
        fail_msg("a kernel name of 255 bytes: %s", err.message);
    tf_archive_problem_for(ak, &t.k, 0);
    write_ok(a, path);
    b = read_ok(path);
    assert_int_equal(strlen(b->kernels[0].name), 255);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
    name[255] = 'k';
    name[256] = '\0';
    a = tf_archive_create();
    assert_null(tf_archive_kernel_for(a, &t.k, &err));
    assert_non_null(strstr(err.message, "kernel name 'kkkk"));
    assert_non_null(strstr(err.message, "is 256 bytes long"));
    tf_archive_destroy(a);
    tk_free(&t);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* The result record (schema/result.c): "nothing known" at first, the
 * energy statuses' names both ways and "unknown" past their end (an index
 * one past the table was read from beyond it), and a time is a time only
 * when ok, positive and finite. */
static void test_result_record(void **state)
{
    (void)state;
    struct tf_result r;
    tf_result_init(&r, 1, 2, 3, TF_STATUS_OK);
    assert_true(isnan(r.time_median) && isnan(r.energy_j) && isnan(r.metrics[TF_MAX_METRICS - 1]));
    assert_int_equal(r.registers, -1);
    assert_int_equal(r.energy_status, TF_ENERGY_UNKNOWN);
    tf_result_init(&r, 1, 2, 3, TF_STATUS_TIMEOUT);
    assert_int_equal(r.energy_status, TF_ENERGY_NOT_RUN);
    for (int e = 0; e < TF_ENERGY_COUNT; e++)
        assert_int_equal(tf_energy_status_from_name(tf_energy_status_name(e)), e);
    assert_string_equal(tf_energy_status_name(TF_ENERGY_COUNT), "unknown");
    assert_string_equal(tf_energy_status_name(-1), "unknown");
    assert_int_equal(tf_energy_status_from_name("not_in_source"), TF_ENERGY_NOT_IN_SOURCE);
    assert_int_equal(tf_energy_status_from_name("Measured"), -1);

    tf_result_init(&r, 0, 0, 0, TF_STATUS_OK);
    assert_false(tf_result_timed(&r)); /* NaN */
    r.time_median = 1e-6;
    assert_true(tf_result_timed(&r));
    r.time_median = INFINITY;
    assert_false(tf_result_timed(&r));
    r.time_median = 0;
    assert_false(tf_result_timed(&r));
    r.time_median = 1e-6;
    r.status = TF_STATUS_WRONG_RESULT;
    assert_false(tf_result_timed(&r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_flags_and_unknown_clocks_in_the_file),
        cmocka_unit_test(test_model_references_at_the_bound),
        cmocka_unit_test(test_result_record),
        cmocka_unit_test(test_empty_archive_and_mkdir),
        cmocka_unit_test(test_many_rows),
        cmocka_unit_test(test_long_value_list),
        cmocka_unit_test(test_kernel_for_mismatch),
        cmocka_unit_test(test_kernel_for_bad_names),
        cmocka_unit_test(test_device_dedupe),
        cmocka_unit_test(test_problem_for),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_foreign_hdf5),
        cmocka_unit_test(test_not_hdf5_and_missing),
        cmocka_unit_test(test_unwritable),
        cmocka_unit_test(test_write_fails_late),
        cmocka_unit_test(test_write_through_link),
        cmocka_unit_test(test_invalid_model_keeps_old_file),
        cmocka_unit_test(test_hand_edited_files),
        cmocka_unit_test(test_claimed_rows_not_stored),
        cmocka_unit_test(test_table_rules),
        cmocka_unit_test(test_external_readers),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_archive_ids),
        cmocka_unit_test(test_merge_extends_run),
        cmocka_unit_test(test_problem_defaults_round_trip),
        cmocka_unit_test(test_archive_without_problem_defaults),
        cmocka_unit_test(test_warnings_columns),
        cmocka_unit_test(test_archive_without_shared_per_sm),
        cmocka_unit_test(test_bad_problem_default),
        cmocka_unit_test(test_archive_without_noise_and_energy),
        cmocka_unit_test(test_quality_count),
        cmocka_unit_test(test_problem_defaults_update_and_merge),
        cmocka_unit_test(test_archive_without_provenance),
        cmocka_unit_test(test_bad_provenance),
        cmocka_unit_test(test_merge_provenance),
        cmocka_unit_test(test_merge_identities),
        cmocka_unit_test(test_edited_references_at_the_bound),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
