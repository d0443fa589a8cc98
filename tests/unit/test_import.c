/* test_import.c - Kernel Tuner caches and T4 files into archive models (schema/import.c).
 *
 * Real files: the gzip'd Kernel Tuner cache fixture (tests/unit/fixtures) and
 * small caches and T4 files written here, with what real files have (failures
 * of each kind, samples, timestamps, a GFLOP/s metric) and what they may have
 * (float, boolean and string parameters, a single problem size, times in
 * seconds). The model must hold the file's parameters and values, one row per
 * configuration with its status, times in seconds (mean; median, min and
 * spread from the samples), compile and benchmark times and metrics; the
 * device and run the file stands for. Importing an exported file gives back
 * the same kernel and rows (the round trip), and tunefarm's own columns that
 * T4 has no place for (shared and spill bytes, warnings, noisy, energy
 * status, throttled, flushed_l2, phase) come back from its T4 export with the
 * values a hand-built archive gave them. Damaged and hostile files
 * (truncated, wrong types, unknown statuses, values outside the lists, two
 * entries of one configuration, no device, no kernel name) are refused with
 * the file, the place and what was expected. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../../schema/export.h"
#include "../../schema/hash.h"
#include "../../schema/import.h"
#include "archive_fixture.h"
#include "tree.h"

#define SMALL "tests/unit/fixtures/ktcache_small.json.gz"

static char dir[] = "/tmp/tf-import-XXXXXX";

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

/* The folder and whatever is left in it: each test removes its own files, but
 * one that fails half way does not get there. */
static int teardown(void **state)
{
    (void)state;
    remove_tree(dir);
    return 0;
}

/* `text` into dir/NAME; the path into out. */
static const char *put(const char *name, const char *text, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", dir, name);
    FILE *f = fopen(out, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return out;
}

static const struct tf_import_options none = {0};

static const struct tf_archive_row *row_of(const struct tf_archive_kernel *ak, uint64_t config)
{
    for (uint64_t i = 0; i < ak->nrows; i++)
        if (ak->rows[i].r.config == config)
            return &ak->rows[i];
    fail_msg("no row of configuration %llu", (unsigned long long)config);
    return NULL;
}

static void test_kt_fixture(void **state)
{
    (void)state;
    struct tf_error err = {0};
    struct tf_import_info info;
    struct tf_archive *a = tf_import_file(SMALL, &none, &info, &err);
    if (a == NULL)
        fail_msg("%s", err.message);
    assert_string_equal(info.format, "Kernel Tuner cache");
    assert_int_equal(info.rows, 6);
    assert_int_equal(info.by_status[TF_STATUS_OK], 3);
    assert_int_equal(info.by_status[TF_STATUS_COMPILE_ERROR], 1);
    assert_int_equal(info.by_status[TF_STATUS_RUNTIME_ERROR], 1);
    assert_int_equal(info.by_status[TF_STATUS_INVALID], 1);
    assert_int_equal(a->nkernels, 1);
    assert_int_equal(a->ndevices, 1);
    assert_int_equal(a->nruns, 1);
    const struct tf_archive_kernel *ak = &a->kernels[0];
    assert_string_equal(ak->name, "convolution_kernel");
    assert_int_equal(ak->nparams, 3);
    assert_int_equal(ak->params[0].kind, TF_PARAM_INT);
    assert_int_equal(ak->params[0].ints[2], 64);
    assert_int_equal(ak->params[2].kind, TF_PARAM_ENUM);
    assert_string_equal(ak->params[2].strings[1], "col");
    assert_int_equal(ak->nsizes, 2);
    assert_string_equal(ak->size_names[1], "problem_size_y");
    assert_string_equal(ak->problems[0].name, "64x64");
    assert_int_equal(ak->problems[0].sizes[0], 64);
    assert_int_equal(ak->nmetrics, 1);
    assert_string_equal(ak->metric_names[0], "GFLOP/s");
    const struct tf_device *d = &a->devices[0];
    assert_string_equal(d->name, "Test GPU");
    assert_string_equal(d->backend, "import"); /* no vendor in the name, none given */
    /* 16,1,row: index 0; samples [3.5, 3.5]; 900.5 ms compiling, 120.25 benchmarking. */
    const struct tf_result *r = &row_of(ak, 0)->r;
    assert_int_equal(r->status, TF_STATUS_OK);
    assert_true(r->time_mean == 3.5e-3 && r->time_median == 3.5e-3 && r->time_min == 3.5e-3);
    assert_true(r->time_rsd == 0 && r->samples == 2);
    assert_true(fabs(r->compile_time - 0.9005) < 1e-15 && fabs(r->device_time - 0.12025) < 1e-15);
    assert_true(r->metrics[0] == 10.0);
    assert_true(fabs(r->timestamp - 1703238845.502007) < 1e-6);
    assert_string_equal(r->message, "");
    /* 32,1,row: index 4, a compile error with its compile time and no times. */
    r = &row_of(ak, 4)->r;
    assert_int_equal(r->status, TF_STATUS_COMPILE_ERROR);
    assert_true(isnan(r->time_median) && isnan(r->metrics[0]));
    assert_true(fabs(r->compile_time - 0.7) < 1e-15);
    assert_string_equal(r->message, "Kernel Tuner: CompilationFailedConfig");
    assert_int_equal(row_of(ak, 6)->r.status, TF_STATUS_RUNTIME_ERROR);
    assert_int_equal(row_of(ak, 11)->r.status, TF_STATUS_INVALID);
    /* The run: the file's content hash, its first and last timestamps. */
    const struct tf_archive_run *run = &a->runs[0];
    assert_string_equal(run->job_name, "import:ktcache_small.json.gz");
    assert_true(fabs(run->start - 1703238845.502007) < 1e-6);
    assert_true(fabs(run->end - 1703238850.502007) < 1e-6);
    assert_non_null(strstr(run->command, "tunefarm import /"));
    FILE *f = fopen(SMALL, "rb");
    unsigned char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    struct tf_sha256 h;
    char hex[65];
    tf_sha256_init(&h);
    tf_sha256_update(&h, buf, n);
    tf_sha256_hex(&h, hex);
    assert_string_equal(run->job_hash, hex);
    tf_archive_destroy(a);

    /* Options name the device, its architecture and vendor, kernel and problem. */
    struct tf_import_options o = {.device = "AMD Instinct MI250X", .arch = "gfx90a",
                                  .kernel = "conv", .problem = "small"};
    a = tf_import_file(SMALL, &o, &info, &err);
    assert_non_null(a);
    assert_string_equal(a->devices[0].name, "AMD Instinct MI250X");
    assert_string_equal(a->devices[0].vendor, "AMD");
    assert_string_equal(a->devices[0].backend, "hip");
    assert_string_equal(a->devices[0].arch, "gfx90a");
    assert_string_equal(a->kernels[0].name, "conv");
    assert_string_equal(a->kernels[0].problems[0].name, "small");
    tf_archive_destroy(a);
}

/* Parameters of other types, a single problem size, extra metrics. */
static const char kt_types[] =
    "{\"device_name\": \"NVIDIA RTX A4000\", \"kernel_name\": \"k\", \"problem_size\": 1000,\n"
    " \"tune_params_keys\": [\"f\", \"b\", \"t\"],\n"
    " \"tune_params\": {\"f\": [0.5, 1.0], \"b\": [true, false], \"t\": [\"float\", \"half\"]},\n"
    " \"objective\": \"time\", \"cache\": {\n"
    "  \"0.5,True,float\": {\"f\": 0.5, \"b\": true, \"t\": \"float\", \"time\": 2.0, \"times\": "
    "[1.0, 2.0, 3.0], \"compile_time\": 10, \"benchmark_time\": 5, \"GFLOP/s\": 1.5, "
    "\"power\": 200, \"note\": \"warm\", \"timestamp\": \"2024-01-02 03:04:05+00:00\"},\n"
    "  \"1.0,False,half\": {\"f\": 1.0, \"b\": false, \"t\": \"half\", \"time\": "
    "\"RuntimeFailedConfig\", \"compile_time\": 11, \"benchmark_time\": 0.5, "
    "\"timestamp\": \"2024-01-02 03:04:09+00:00\"}}}\n";

static void test_kt_types(void **state)
{
    (void)state;
    char path[256], out[256];
    struct tf_error err = {0};
    struct tf_import_info info;
    struct tf_archive *a = tf_import_file(put("types.json", kt_types, path, sizeof path), &none,
                                          &info, &err);
    if (a == NULL)
        fail_msg("%s", err.message);
    const struct tf_archive_kernel *ak = &a->kernels[0];
    assert_int_equal(ak->params[0].kind, TF_PARAM_ENUM);
    assert_string_equal(ak->params[0].strings[0], "0.5");
    assert_string_equal(ak->params[0].strings[1], "1.0");
    assert_string_equal(ak->params[1].strings[0], "True");
    assert_string_equal(ak->nsizes == 1 ? ak->size_names[0] : "?", "problem_size");
    assert_string_equal(ak->problems[0].name, "1000");
    assert_int_equal(ak->nmetrics, 2);
    assert_string_equal(ak->metric_names[1], "power");
    assert_string_equal(a->devices[0].vendor, "NVIDIA");
    assert_string_equal(a->devices[0].backend, "cuda");
    const struct tf_result *r = &row_of(ak, 0)->r;
    assert_true(r->time_mean == 2e-3 && r->time_median == 2e-3 && r->time_min == 1e-3);
    assert_true(fabs(r->time_rsd - 0.5) < 1e-12 && r->samples == 3);
    assert_true(r->metrics[1] == 200);
    /* 1.0,False,half: digits 1,1,1 */
    assert_int_equal(row_of(ak, 7)->r.status, TF_STATUS_RUNTIME_ERROR);
    assert_true(fabs(row_of(ak, 7)->r.device_time - 0.5e-3) < 1e-18);

    /* Round trip: the export holds the same keys, values and times. */
    struct tf_export_options o = {.format = TF_EXPORT_KTCACHE, .run = -1};
    assert_int_equal(tf_export_to_path(a, &o, put("types_out.json", "", out, sizeof out), &err),
                     0);
    json_t *orig = json_loads(kt_types, 0, NULL), *back = json_load_file(out, 0, NULL);
    assert_non_null(back);
    assert_true(json_equal(json_object_get(orig, "tune_params"),
                           json_object_get(back, "tune_params")));
    assert_true(json_equal(json_object_get(orig, "problem_size"),
                           json_object_get(back, "problem_size")));
    json_t *oc = json_object_get(orig, "cache"), *bc = json_object_get(back, "cache");
    assert_int_equal(json_object_size(bc), 2);
    const char *key;
    json_t *e;
    json_object_foreach(oc, key, e) {
        json_t *b = json_object_get(bc, key);
        if (b == NULL)
            fail_msg("key '%s' lost", key);
        json_t *t = json_object_get(e, "time"), *u = json_object_get(b, "time");
        if (json_is_string(t))
            assert_string_equal(json_string_value(t), json_string_value(u));
        else
            assert_true(fabs(json_number_value(t) - json_number_value(u)) < 1e-12);
        assert_true(json_equal(json_object_get(e, "b"), json_object_get(b, "b")));
        assert_true(fabs(json_number_value(json_object_get(e, "compile_time")) -
                         json_number_value(json_object_get(b, "compile_time"))) < 1e-12);
        assert_string_equal(json_string_value(json_object_get(e, "timestamp")),
                            json_string_value(json_object_get(b, "timestamp")));
    }
    json_decref(orig);
    json_decref(back);
    /* ...and reads back as the same kernel and rows. */
    struct tf_archive *a2 = tf_import_file(out, &none, &info, &err);
    assert_non_null(a2);
    const struct tf_archive_kernel *ak2 = &a2->kernels[0];
    assert_int_equal(ak2->nrows, ak->nrows);
    assert_int_equal(ak2->params[0].kind, TF_PARAM_ENUM);
    assert_string_equal(ak2->params[0].strings[1], "1.0");
    for (uint64_t i = 0; i < ak->nrows; i++) {
        assert_int_equal(ak2->rows[i].r.config, ak->rows[i].r.config);
        assert_int_equal(ak2->rows[i].r.status, ak->rows[i].r.status);
        assert_true(ak->rows[i].r.status != TF_STATUS_OK ||
                    fabs(ak2->rows[i].r.time_mean - ak->rows[i].r.time_mean) < 1e-15);
    }
    tf_archive_destroy(a2);
    tf_archive_destroy(a);
    unlink(path);
    unlink(out);
}

static const char t4_file[] =
    "{\"schema_version\": \"1.0.0\", \"metadata\": {\"timeunit\": \"seconds\"}, \"results\": [\n"
    " {\"timestamp\": \"2024-01-02 03:04:05+00:00\", \"configuration\": {\"bx\": 64, \"mode\": "
    "\"fast\"}, \"times\": {\"compilation_time\": 0.5, \"runtimes\": [0.001, 0.003]}, "
    "\"invalidity\": \"correct\", \"correctness\": 1, \"measurements\": [{\"name\": \"time\", "
    "\"value\": 2, \"unit\": \"ms\"}, {\"name\": \"GFLOP/s\", \"value\": 7, \"unit\": \"\"}]},\n"
    " {\"configuration\": {\"bx\": 16, \"mode\": \"fast\"}, \"times\": {\"compilation\": 0.25}, "
    "\"invalidity\": \"correct\", \"correctness\": 1, \"measurements\": [{\"name\": \"time\", "
    "\"value\": 0.004, \"unit\": \"\"}]},\n"
    " {\"configuration\": {\"bx\": 16, \"mode\": \"safe\"}, \"times\": {}, \"invalidity\": "
    "\"timeout\", \"correctness\": 0},\n"
    " {\"configuration\": {\"bx\": 64, \"mode\": \"safe\"}, \"times\": {}, \"invalidity\": "
    "\"runtime\", \"correctness\": 0, \"measurements\": [{\"name\": \"status\", \"value\": "
    "\"crashed\", \"unit\": \"\"}]}]}\n";

static void test_t4(void **state)
{
    (void)state;
    char path[256], out[256], meta[300];
    struct tf_error err = {0};
    struct tf_import_info info;
    put("t4.json", t4_file, path, sizeof path);
    struct tf_archive *a = tf_import_file(path, &none, &info, &err);
    assert_null(a);
    assert_non_null(strstr(err.message, "--kernel"));
    /* Named kernel, no device: T4 has no device field, so the error must not
     * speak of Kernel Tuner's device_name (review D). */
    struct tf_import_options k_only = {.kernel = "k"};
    assert_null(tf_import_file(path, &k_only, &info, &err));
    assert_non_null(strstr(err.message, "give --device NAME"));
    assert_non_null(strstr(err.message, "T4 has no device field"));
    assert_null(strstr(err.message, "device_name"));
    struct tf_import_options o = {.kernel = "k", .device = "Test GPU", .vendor = "Acme"};
    a = tf_import_file(path, &o, &info, &err);
    if (a == NULL)
        fail_msg("%s", err.message);
    assert_string_equal(info.format, "T4");
    const struct tf_archive_kernel *ak = &a->kernels[0];
    /* Values from the configurations: numbers ascending, strings as they came. */
    assert_int_equal(ak->params[0].kind, TF_PARAM_INT);
    assert_int_equal(ak->params[0].ints[0], 16);
    assert_string_equal(ak->params[1].strings[0], "fast");
    assert_string_equal(ak->problems[0].name, "default");
    assert_string_equal(a->devices[0].backend, "import");
    assert_string_equal(a->devices[0].vendor, "Acme");
    /* 64,fast (index 2): mean from the "time" measurement (its own unit), the
     * rest from the runtimes (the file's unit: seconds). */
    const struct tf_result *r = &row_of(ak, 2)->r;
    assert_true(r->time_mean == 2e-3 && fabs(r->time_median - 2e-3) < 1e-15 &&
                r->time_min == 1e-3);
    assert_true(r->samples == 2 && r->compile_time == 0.5 && r->metrics[0] == 7);
    assert_true(fabs(r->time_rsd - sqrt(2) / 2) < 1e-12); /* samples 1 and 3 ms: sd sqrt(2) */
    r = &row_of(ak, 0)->r; /* 16,fast: no samples: the mean stands for all */
    assert_true(r->time_mean == 0.004 && r->time_median == 0.004 && isnan(r->time_rsd));
    assert_true(r->compile_time == 0.25); /* Kernel Tuner's "compilation" */
    assert_int_equal(row_of(ak, 1)->r.status, TF_STATUS_TIMEOUT);
    assert_int_equal(row_of(ak, 3)->r.status, TF_STATUS_CRASHED); /* tunefarm's own status */

    /* Round trip through tunefarm's T4: the same kernel shape, statuses and times. */
    struct tf_export_options eo = {.format = TF_EXPORT_T4, .run = -1};
    assert_int_equal(tf_export_to_path(a, &eo, put("t4_out.json", "", out, sizeof out), &err), 0);
    struct tf_archive *b = tf_import_file(out, &none, &info, &err);
    if (b == NULL)
        fail_msg("%s", err.message);
    const struct tf_archive_kernel *bk = &b->kernels[0];
    assert_string_equal(bk->name, "k"); /* from the file's tunefarm metadata */
    assert_string_equal(b->devices[0].vendor, "Acme");
    assert_int_equal(bk->nrows, 4);
    for (uint64_t i = 0; i < 4; i++) {
        const struct tf_result *x = &ak->rows[i].r, *y = &bk->rows[i].r;
        assert_int_equal(x->config, y->config);
        assert_int_equal(x->status, y->status);
        if (x->status == TF_STATUS_OK)
            assert_true(fabs(x->time_mean - y->time_mean) < 1e-15 &&
                        fabs(x->time_median - y->time_median) < 1e-15 &&
                        fabs(x->time_min - y->time_min) < 1e-15 && x->samples == y->samples);
        assert_true(fabs(x->compile_time - y->compile_time) < 1e-15);
    }
    tf_archive_destroy(b);
    tf_archive_destroy(a);
    tf_export_metadata_path(out, meta, sizeof meta);
    unlink(meta);
    unlink(out);
    unlink(path);
}

/* One row of the hand-built archive for test_t4_columns. */
static void add_row(struct tf_archive_kernel *ak, uint64_t config, int status, int energy_status,
                    double energy_j, int64_t shared, int64_t spill, int warnings,
                    const char *first_warning, int noisy, int throttled, int flushed, int phase)
{
    struct tf_archive_row row;
    memset(&row, 0, sizeof row);
    tf_result_init(&row.r, 0, 0, config, status);
    row.r.timestamp = 1714560000.0 + (double)config;
    row.r.compile_time = 0.125;
    if (status == TF_STATUS_OK) {
        row.r.time_median = 2e-3;
        row.r.time_min = 1.5e-3;
        row.r.time_mean = 2.5e-3;
        row.r.time_rsd = 0.02;
        row.r.samples = 20;
    } else {
        tf_strlcpy(row.r.message, "error: too many resources", sizeof row.r.message);
    }
    row.r.energy_status = (uint8_t)energy_status;
    row.r.energy_j = energy_j;
    row.r.registers = 40;
    row.r.shared_bytes = shared;
    row.r.spill_bytes = spill;
    row.r.warnings = warnings;
    tf_strlcpy(row.r.first_warning, first_warning, sizeof row.r.first_warning);
    row.r.noisy = (uint8_t)noisy;
    row.r.throttled = (uint8_t)throttled;
    row.r.flushed_l2 = (uint8_t)flushed;
    row.r.phase = (uint8_t)phase;
    tf_archive_append(ak, &row);
}

/* Export T4, import it: every column T4 carries as a tunefarm measurement
 * comes back as it was, none of them at its default. */
static void test_t4_columns(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    make_gemm(&gemm);
    struct tf_archive *a = tf_archive_create();
    struct tf_device dev = make_device("cuda", "NVIDIA H100 80GB HBM3", "GPU-0", "node1");
    struct tf_archive_run run = make_run("nightly", 1714560000.0, 1714560050.0);
    tf_archive_add_device(a, &dev);
    tf_archive_add_run(a, &run);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm.k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &gemm.k, 0);
    add_row(ak, 1, TF_STATUS_OK, TF_ENERGY_OFF, NAN, 49152, 96, 3,
            "warning: variable 'x' set but not used", 1, 1, 1, 2);
    add_row(ak, 2, TF_STATUS_OK, TF_ENERGY_MEASURED, 1.5, 0, 0, 0, "", 0, 0, 1, 1);
    add_row(ak, 3, TF_STATUS_OK, TF_ENERGY_NO_WINDOW, NAN, 1024, 8, 1, "warning: \"a\", b", 1,
            0, 0, 0);
    add_row(ak, 4, TF_STATUS_OK, TF_ENERGY_UNKNOWN, 2.5, 4096, 0, 2, "w", 0, 1, 0, 1);
    add_row(ak, 5, TF_STATUS_COMPILE_ERROR, TF_ENERGY_NO_COUNTER, NAN, 65536, 512, 7,
            "warning: spilling", 0, 0, 1, 0);
    add_row(ak, 6, TF_STATUS_RUNTIME_ERROR, TF_ENERGY_COUNTER_ERROR, NAN, -1, -1, -1, "", 0, 0,
            0, 0);

    char out[256], meta[300];
    struct tf_export_options eo = {.format = TF_EXPORT_T4, .run = -1};
    assert_int_equal(tf_export_to_path(a, &eo, put("cols.json", "", out, sizeof out), &err), 0);
    struct tf_import_info info;
    struct tf_archive *b = tf_import_file(out, &none, &info, &err);
    if (b == NULL)
        fail_msg("%s", err.message);
    const struct tf_archive_kernel *bk = &b->kernels[0];
    assert_int_equal(bk->nrows, ak->nrows);
    for (uint64_t i = 0; i < ak->nrows; i++) {
        const struct tf_result *x = &ak->rows[i].r, *y = &row_of(bk, x->config)->r;
        assert_int_equal(y->status, x->status);
        assert_int_equal(y->shared_bytes, x->shared_bytes);
        assert_int_equal(y->spill_bytes, x->spill_bytes);
        assert_int_equal(y->warnings, x->warnings);
        assert_string_equal(y->first_warning, x->first_warning);
        assert_int_equal(y->noisy, x->noisy);
        assert_int_equal(y->throttled, x->throttled);
        assert_int_equal(y->flushed_l2, x->flushed_l2);
        assert_int_equal(y->phase, x->phase);
        assert_string_equal(tf_energy_status_name(y->energy_status),
                            tf_energy_status_name(x->energy_status));
        assert_true(isnan(x->energy_j) ? isnan(y->energy_j) : y->energy_j == x->energy_j);
        assert_int_equal(y->registers, x->registers);
        assert_string_equal(y->message, x->message);
    }
    /* The file says them as measurements with their units. */
    json_t *doc = json_load_file(out, 0, NULL);
    assert_non_null(doc);
    json_t *ms = json_object_get(json_array_get(json_object_get(doc, "results"), 0),
                                 "measurements");
    int seen = 0;
    for (size_t k = 0; k < json_array_size(ms); k++) {
        json_t *m = json_array_get(ms, k);
        const char *n = json_string_value(json_object_get(m, "name"));
        const char *u = json_string_value(json_object_get(m, "unit"));
        json_t *v = json_object_get(m, "value");
        if (strcmp(n, "shared_bytes") == 0 || strcmp(n, "spill_bytes") == 0)
            seen += json_is_integer(v) && strcmp(u, "B") == 0;
        else if (strcmp(n, "noisy") == 0 || strcmp(n, "throttled") == 0 ||
                 strcmp(n, "flushed_l2") == 0)
            seen += json_is_integer(v) && json_integer_value(v) == 1;
        else if (strcmp(n, "energy_status") == 0)
            seen += strcmp(json_string_value(v), "off") == 0;
        else if (strcmp(n, "first_warning") == 0 || strcmp(n, "warnings") == 0)
            seen++;
    }
    assert_int_equal(seen, 8);
    json_decref(doc);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tf_export_metadata_path(out, meta, sizeof meta);
    unlink(meta);
    unlink(out);
}

struct hostile {
    const char *name, *text, *expect;
    bool line; /* a JSON syntax error: line and column known */
};

/* A T4 file of two correct results, the second's measurements its time and `M`. */
#define T4_SECOND(M)                                                                           \
    "{\"results\": [{\"configuration\": {\"a\": 1}, \"times\": {}, \"invalidity\": "            \
    "\"correct\", \"measurements\": [{\"name\": \"time\", \"value\": 1}]}, {\"configuration\": " \
    "{\"a\": 2}, \"times\": {}, \"invalidity\": \"correct\", \"measurements\": [{\"name\": "     \
    "\"time\", \"value\": 1}, " M "]}]}"

static void test_hostile(void **state)
{
    (void)state;
    static const struct hostile cases[] = {
        {"cut.json", "{\"device_name\": \"x\", \"tune_params_keys\": [\"a\"],\n \"cache\": {\"1\":",
         "not valid JSON", true},
        {"array.json", "[1, 2, 3]", "neither a Kernel Tuner cache", false},
        {"params.json", "{\"device_name\": \"x\", \"tune_params_keys\": [\"a\"], \"tune_params\": "
         "[1], \"cache\": {}}", "tune_params", false},
        {"timearr.json", "{\"device_name\": \"x\", \"kernel_name\": \"k\", \"tune_params_keys\": "
         "[\"a\"], \"tune_params\": {\"a\": [1]}, \"cache\": {\"1\": {\"a\": 1, \"time\": [1]}}}",
         "has a 'time' that is neither a number nor a text", false},
        {"twokeys.json", "{\"device_name\": \"x\", \"kernel_name\": \"k\", \"tune_params_keys\": "
         "[\"a\"], \"tune_params\": {\"a\": [1]}, \"cache\": {\"1\": {\"a\": 1, \"time\": 1}, "
         "\"01\": {\"a\": 1, \"time\": 2}}}",
         "describe the same configuration (their parameters' values are equal): keep one", false},
        {"weird.json", "{\"device_name\": \"x\", \"kernel_name\": \"k\", \"tune_params_keys\": "
         "[\"a\"], \"tune_params\": {\"a\": [1]}, \"cache\": {\"1\": {\"a\": 1, \"time\": "
         "\"WeirdConfig\"}}}", "\"WeirdConfig\": expected milliseconds or one of Kernel Tuner's "
         "failures", false},
        {"outside.json", "{\"device_name\": \"x\", \"kernel_name\": \"k\", \"tune_params_keys\": "
         "[\"a\"], \"tune_params\": {\"a\": [1]}, \"cache\": {\"2\": {\"a\": 2, \"time\": 1}}}",
         "not one of its tune_params values", false},
        {"stamp.json", "{\"device_name\": \"x\", \"kernel_name\": \"k\", \"tune_params_keys\": "
         "[\"a\"], \"tune_params\": {\"a\": [1]}, \"cache\": {\"1\": {\"a\": 1, \"time\": 1, "
         "\"timestamp\": \"soon\"}}}", "cache[\"1\"].timestamp", false},
        {"nodevice.json", "{\"kernel_name\": \"k\", \"tune_params_keys\": [\"a\"], "
         "\"tune_params\": {\"a\": [1]}, \"cache\": {\"1\": {\"a\": 1, \"time\": 1}}}",
         "give --device NAME", false},
        {"status.json", "{\"device_name\": \"x\", \"kernel_name\": \"k\", \"tune_params_keys\": "
         "[\"status\"], \"tune_params\": {\"status\": [1]}, \"cache\": {\"1\": {\"status\": 1, "
         "\"time\": 1}}}", "status", false},
        {"long.json", "{\"device_name\": \"x\", \"kernel_name\": \"k\", \"tune_params_keys\": "
         "[\"a\"], \"tune_params\": {\"a\": [\"a-value-far-longer-than-thirty-two-bytes\"]}, "
         "\"cache\": {\"x\": {\"a\": \"a-value-far-longer-than-thirty-two-bytes\", \"time\": 1}}}",
         "longer than 32 bytes", false},
        {"empty.json", "{\"device_name\": \"x\", \"kernel_name\": \"k\", \"tune_params_keys\": "
         "[\"a\"], \"tune_params\": {\"a\": [1]}, \"cache\": {}}", "holds no results", false},
        {"inv.json", "{\"results\": [{\"configuration\": {\"a\": 1}, \"times\": {}, "
         "\"invalidity\": \"bogus\", \"correctness\": 1}]}", "results[0].invalidity: \"bogus\": "
         "expected one of correct, constraints", false},
        {"st.json", "{\"results\": [{\"configuration\": {\"a\": 1}, \"times\": {}, "
         "\"invalidity\": \"runtime\", \"correctness\": 0, \"measurements\": [{\"name\": "
         "\"status\", \"value\": \"exploded\"}]}]}", "\"exploded\" is not a tunefarm status",
         false},
        {"missing.json", "{\"results\": [{\"configuration\": {\"a\": 1, \"b\": 2}, \"times\": {}, "
         "\"invalidity\": \"compile\"}, {\"configuration\": {\"a\": 1}, \"times\": {}, "
         "\"invalidity\": \"compile\"}]}", "results[1].configuration.b: missing", false},
        {"dup.json", "{\"results\": [{\"configuration\": {\"a\": 1}, \"times\": {}, "
         "\"invalidity\": \"compile\"}, {\"configuration\": {\"a\": 1}, \"times\": {}, "
         "\"invalidity\": \"runtime\"}]}", "two results describe the same configuration", false},
        {"runtimes.json", "{\"results\": [{\"configuration\": {\"a\": 1}, \"times\": "
         "{\"runtimes\": [1, \"x\"]}, \"invalidity\": \"correct\"}]}",
         "results[0].times.runtimes: expected a list of positive numbers", false},
        {"notime.json", "{\"results\": [{\"configuration\": {\"a\": 1}, \"times\": {}, "
         "\"invalidity\": \"correct\"}]}", "a correct result without a time", false},
        {"unit.json", "{\"metadata\": {\"timeunit\": \"fortnights\"}, \"results\": "
         "[{\"configuration\": {\"a\": 1}, \"times\": {}, \"invalidity\": \"compile\"}]}",
         "metadata.timeunit is \"fortnights\"", false},
        {"version.json", "{\"schema_version\": \"2.0.0\", \"results\": []}", "schema 1.x", false},
        {"types.json", "{\"results\": [{\"configuration\": {\"a\": [1]}, \"times\": {}, "
         "\"invalidity\": \"compile\"}]}", "results[0].configuration.a: expected a number", false},
        /* tunefarm's own columns: the measurement, its place and what was expected */
        {"es_type.json", T4_SECOND("{\"name\": \"energy_status\", \"value\": 3}"),
         "results[1].measurements[1]: energy_status must be a string", false},
        {"es_name.json", T4_SECOND("{\"name\": \"energy_status\", \"value\": \"warm\"}"),
         "results[1].measurements[1]: energy_status \"warm\" is not a tunefarm energy status",
         false},
        {"es_measured.json", T4_SECOND("{\"name\": \"energy_status\", \"value\": "
                                       "\"measured\"}"),
         "results[1]: energy_status is \"measured\" but there is no energy_j", false},
        {"es_energy.json", T4_SECOND("{\"name\": \"energy_j\", \"value\": 2}, {\"name\": "
                                     "\"energy_status\", \"value\": \"off\"}"),
         "results[1]: an energy_j measurement, but energy_status is \"off\"", false},
        {"fw_type.json", T4_SECOND("{\"name\": \"first_warning\", \"value\": 1}"),
         "results[1].measurements[1]: first_warning must be a string", false},
        {"noisy.json", T4_SECOND("{\"name\": \"noisy\", \"value\": 2}"),
         "results[1].measurements[1]: noisy must be 0 or 1", false},
        {"throttled.json", T4_SECOND("{\"name\": \"throttled\", \"value\": \"yes\"}"),
         "results[1].measurements[1]: throttled must be a number", false},
        {"phase.json", T4_SECOND("{\"name\": \"phase\", \"value\": 3}"),
         "results[1].measurements[1]: phase must be 0, 1 or 2", false},
        {"shared.json", T4_SECOND("{\"name\": \"shared_bytes\", \"value\": 1.5, \"unit\": "
                                  "\"B\"}"),
         "results[1].measurements[1]: shared_bytes must be a whole number of bytes", false},
        {"spill_unit.json", T4_SECOND("{\"name\": \"spill_bytes\", \"value\": 2, \"unit\": "
                                      "\"KiB\"}"),
         "results[1].measurements[1].unit is \"KiB\": expected \"B\" or \"\" for spill_bytes",
         false},
        {"warnings.json", T4_SECOND("{\"name\": \"warnings\", \"value\": -1}"),
         "results[1].measurements[1]: warnings must be a whole number", false},
        /* a correct result's time must be above 0 (a median of 0 means unknown) */
        {"time0.json", T4_SECOND("{\"name\": \"time\", \"value\": 0}"),
         "results[1].measurements[1]: time is 0: a run time must be a positive number", false},
        /* tunefarm.parameters must list tune_params' values in their order: the
         * digits of every configuration are read from it */
        {"order.json", "{\"device_name\": \"x\", \"kernel_name\": \"k\", \"tune_params_keys\": "
         "[\"a\"], \"tune_params\": {\"a\": [1, 2]}, \"cache\": {\"1\": {\"a\": 1, \"time\": 1}}, "
         "\"tunefarm\": {\"parameters\": [{\"name\": \"a\", \"kind\": \"int\", \"values\": [2, 1]}]}}",
         "tunefarm.parameters does not describe tune_params", false},
    };
    struct tf_import_options o = {.kernel = "k", .device = "d"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[256];
        struct tf_error err = {0};
        struct tf_import_info info;
        put(cases[i].name, cases[i].text, path, sizeof path);
        /* nodevice.json must be refused for want of a device: no options there */
        const bool bare = strcmp(cases[i].name, "nodevice.json") == 0;
        struct tf_archive *a = tf_import_file(path, bare ? &none : &o, &info, &err);
        if (a != NULL)
            fail_msg("%s was imported", cases[i].name);
        if (strstr(err.message, cases[i].expect) == NULL || strcmp(err.file, path) != 0 ||
            (cases[i].line && err.line <= 0))
            fail_msg("%s: got \"%s\" (at %s:%d:%d); expected \"%s\"", cases[i].name,
                     err.message, err.file, err.line, err.column, cases[i].expect);
        unlink(path);
    }
}

/* Times as the files give them: a T4 file without metadata.timeunit is in
 * milliseconds; a time_median or time_min of 0 is unknown and falls back to
 * the mean; a Kernel Tuner entry's median and minimum come from its samples,
 * not from its mean. */
static void test_times_and_defaults(void **state)
{
    (void)state;
    char path[256];
    struct tf_error err = {0};
    struct tf_import_info info;
    struct tf_import_options o = {.kernel = "k", .device = "d"};
    const char *t4 = "{\"results\": [{\"configuration\": {\"a\": 1}, \"times\": {}, "
                     "\"invalidity\": \"correct\", \"measurements\": [{\"name\": \"time\", "
                     "\"value\": 2, \"unit\": \"\"}, {\"name\": \"time_median\", \"value\": 0}, "
                     "{\"name\": \"time_min\", \"value\": 0}]}]}";
    struct tf_archive *a = tf_import_file(put("units.json", t4, path, sizeof path), &o, &info, &err);
    if (a == NULL)
        fail_msg("%s", err.message);
    const struct tf_result *r = &row_of(&a->kernels[0], 0)->r;
    assert_true(fabs(r->time_mean - 2e-3) < 1e-15);
    assert_true(fabs(r->time_median - 2e-3) < 1e-15);
    assert_true(fabs(r->time_min - 2e-3) < 1e-15);
    tf_archive_destroy(a);
    unlink(path);

    const char *kt = "{\"device_name\": \"x\", \"kernel_name\": \"k\", \"tune_params_keys\": "
                     "[\"a\"], \"tune_params\": {\"a\": [1]}, \"cache\": {\"1\": {\"a\": 1, "
                     "\"time\": 3.0, \"times\": [6.0, 1.0, 2.0]}}}";
    a = tf_import_file(put("median.json", kt, path, sizeof path), &none, &info, &err);
    if (a == NULL)
        fail_msg("%s", err.message);
    r = &row_of(&a->kernels[0], 0)->r;
    assert_true(fabs(r->time_mean - 3e-3) < 1e-15);
    assert_true(fabs(r->time_median - 2e-3) < 1e-15);
    assert_true(fabs(r->time_min - 1e-3) < 1e-15);
    assert_int_equal(r->samples, 3);
    tf_archive_destroy(a);
    unlink(path);
}

/* A kernel name as long as a kernel file may have it (TF_KERNEL_NAME_MAX bytes,
 * what the archive's /plan column holds) imports, from the file and from
 * --kernel; one byte more is refused with the limit named. Export writes such a
 * name, so import must take it back. */
static void test_kernel_name_length(void **state)
{
    (void)state;
    char path[256], name[TF_KERNEL_NAME_MAX + 2], text[1024];
    struct tf_error err = {0};
    struct tf_import_info info;
    for (int extra = 0; extra <= 1; extra++) {
        memset(name, 'k', sizeof name);
        name[TF_KERNEL_NAME_MAX + extra] = '\0';
        snprintf(text, sizeof text,
                 "{\"device_name\": \"x\", \"kernel_name\": \"%s\", \"tune_params_keys\": "
                 "[\"a\"], \"tune_params\": {\"a\": [1]}, \"cache\": {\"1\": {\"a\": 1, "
                 "\"time\": 3.0}}}",
                 name);
        put("name.json", text, path, sizeof path);
        struct tf_archive *a = tf_import_file(path, &none, &info, &err);
        struct tf_import_options o = {.kernel = name};
        struct tf_archive *b = tf_import_file(path, &o, &info, &err);
        if (extra == 0) {
            if (a == NULL || b == NULL)
                fail_msg("a %d-byte kernel name: %s", TF_KERNEL_NAME_MAX, err.message);
            assert_string_equal(a->kernels[0].name, name);
            assert_string_equal(b->kernels[0].name, name);
        } else {
            assert_null(a);
            assert_null(b);
            char limit[32];
            snprintf(limit, sizeof limit, "%d bytes", TF_KERNEL_NAME_MAX);
            assert_non_null(strstr(err.message, limit));
        }
        tf_archive_destroy(a);
        tf_archive_destroy(b);
        unlink(path);
    }
}

/* An archive kernel holds TF_MAX_METRICS metrics: the first ones seen are
 * kept, the rest named in the note, never written past the end. */
static void test_metrics_past_the_limit(void **state)
{
    (void)state;
    char path[256];
    struct tf_error err = {0};
    struct tf_import_info info;
    const char *kt = "{\"device_name\": \"x\", \"kernel_name\": \"k\", \"tune_params_keys\": "
                     "[\"a\"], \"tune_params\": {\"a\": [1]}, \"cache\": {\"1\": {\"a\": 1, "
                     "\"time\": 3.0, \"m1\": 1, \"m2\": 2, \"m3\": 3, \"m4\": 4, \"m5\": 5}}}";
    struct tf_archive *a = tf_import_file(put("metrics.json", kt, path, sizeof path), &none, &info,
                                          &err);
    if (a == NULL)
        fail_msg("%s", err.message);
    const struct tf_archive_kernel *ak = &a->kernels[0];
    assert_int_equal(ak->nmetrics, TF_MAX_METRICS);
    assert_string_equal(ak->metric_names[TF_MAX_METRICS - 1], "m4");
    assert_true(row_of(ak, 0)->r.metrics[TF_MAX_METRICS - 1] == 4);
    assert_non_null(strstr(info.note, "m5"));
    assert_string_equal(a->devices[0].name, "x");
    tf_archive_destroy(a);
    unlink(path);
}

/* A gzip'd file cut short is refused, not read as far as it goes. */
static void test_truncated_gzip(void **state)
{
    (void)state;
    FILE *f = fopen(SMALL, "rb");
    unsigned char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    char path[256];
    snprintf(path, sizeof path, "%s/cut.json.gz", dir);
    f = fopen(path, "wb");
    fwrite(buf, 1, n / 2, f);
    fclose(f);
    struct tf_error err = {0};
    struct tf_import_info info;
    assert_null(tf_import_file(path, &none, &info, &err));
    assert_non_null(strstr(err.message, "truncated"));
    assert_string_equal(err.file, path);
    unlink(path);
    assert_null(tf_import_file("/no/such/file.json", &none, &info, &err));
    assert_int_equal(err.code, TF_ERR_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kt_fixture), cmocka_unit_test(test_kt_types),
        cmocka_unit_test(test_t4),         cmocka_unit_test(test_t4_columns),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_truncated_gzip),
        cmocka_unit_test(test_times_and_defaults),
        cmocka_unit_test(test_metrics_past_the_limit),
        cmocka_unit_test(test_kernel_name_length),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
