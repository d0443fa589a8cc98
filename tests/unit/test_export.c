/* test_export.c - an archive model out as CSV, JSON, T4 and a Kernel Tuner cache
 * (schema/export.c).
 *
 * The model is built by hand (archive_fixture.h): the fixture's gemm (BM, BN,
 * LAYOUT; sizes M, N, K; metric gflops) on two H100s of one class and an
 * A100, over two runs, with a compile error whose message holds a comma, a
 * quote and a byte that is not UTF-8, a configuration measured in both runs
 * and one measured in both phases; the fixture's vecadd beside it. The CSV is
 * split with a real quote-aware splitter and read by column name; the JSON
 * formats are parsed back with jansson. A T4 or Kernel Tuner file must hold one
 * entry per configuration, choosing the strict phase and then the latest run,
 * and refuse a selection of several kernels or device classes. Output files
 * appear whole or not at all. */
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
#include <sys/stat.h>
#include <unistd.h>

#include "../../schema/export.h"
#include "../../schema/result.h"
#include "archive_fixture.h"

struct model {
    struct test_kernel gemm, vecadd;
    struct tf_archive *a;
};

static void add_row(struct tf_archive_kernel *ak, uint32_t run, uint32_t device, uint32_t problem,
                    uint64_t config, int status, double ms, int phase)
{
    struct tf_archive_row row;
    memset(&row, 0, sizeof row);
    tf_result_init(&row.r, 0, problem, config, (uint8_t)status);
    row.run = run;
    row.device = device;
    row.r.phase = (uint8_t)phase;
    row.r.compile_time = 0.25;
    row.r.timestamp = 1714560000.0 + 100 * run + (double)config;
    if (status == TF_STATUS_OK) {
        row.r.time_median = ms * 1e-3;
        row.r.time_min = ms * 0.9e-3;
        row.r.time_mean = ms * 1.1e-3;
        row.r.time_rsd = 0.01;
        row.r.samples = 10;
        row.r.metrics[0] = 1000.0 / ms;
    }
    tf_archive_append(ak, &row);
}

static void make_model(struct model *m)
{
    struct tf_error err = {0};
    make_gemm(&m->gemm);
    make_vecadd(&m->vecadd);
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H100 80GB HBM3", "GPU-0", "node1");
    struct tf_device h1 = make_device("cuda", "NVIDIA H100 80GB HBM3", "GPU-1", "node2");
    struct tf_device a100 = make_device("cuda", "NVIDIA A100-PCIE-40GB", "GPU-2", "node3");
    tf_strlcpy(a100.arch, "sm_80", sizeof a100.arch);
    tf_archive_add_device(a, &h0);
    tf_archive_add_device(a, &h1);
    tf_archive_add_device(a, &a100);
    struct tf_archive_run r0 = make_run("nightly", 1714560000.0, 1714560050.0);
    struct tf_archive_run r1 = make_run("nightly", 1714560100.0, 1714560150.0);
    tf_archive_add_run(a, &r0);
    tf_archive_add_run(a, &r1);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &m->gemm.k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &m->gemm.k, 0); /* small */
    tf_archive_problem_for(ak, &m->gemm.k, 1); /* large */
    add_row(ak, 0, 0, 0, 0, TF_STATUS_OK, 2.0, 0);
    add_row(ak, 0, 0, 0, 1, TF_STATUS_COMPILE_ERROR, 0, 0);
    tf_strlcpy(ak->rows[1].r.message, "error: \"BM\", too big \xff", sizeof ak->rows[1].r.message);
    add_row(ak, 1, 1, 0, 0, TF_STATUS_OK, 3.0, 0);  /* config 0 again, later run */
    add_row(ak, 1, 1, 0, 2, TF_STATUS_OK, 5.0, 1);  /* screened... */
    add_row(ak, 1, 1, 0, 2, TF_STATUS_OK, 4.0, 2);  /* ...and re-measured */
    add_row(ak, 0, 2, 0, 0, TF_STATUS_OK, 6.0, 0);  /* the A100 */
    add_row(ak, 0, 0, 1, 3, TF_STATUS_OK, 7.0, 0);  /* problem large */
    struct tf_archive_kernel *av = tf_archive_kernel_for(a, &m->vecadd.k, &err);
    assert_non_null(av);
    tf_archive_problem_for(av, &m->vecadd.k, 0);
    add_row(av, 0, 0, 0, 2, TF_STATUS_OK, 0.5, 0);
    m->a = a;
}

static void destroy_model(struct model *m)
{
    tf_archive_destroy(m->a);
    tk_free(&m->gemm);
    tk_free(&m->vecadd);
}

/* tf_export_write into a string (caller frees); *rc gets its return value. */
static char *export_text(const struct tf_archive *a, const struct tf_export_options *o, int *rc,
                         struct tf_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    *rc = tf_export_write(a, o, f, err);
    fclose(f);
    return text;
}

/* ---- a CSV reader: RFC 4180 fields of one record */

/* Split the record at *p into fields[] (strdup'd); advance *p past it; the count. */
static int csv_record(const char **p, char **fields, int max)
{
    int n = 0;
    const char *s = *p;
    for (;;) {
        char buf[2048];
        size_t len = 0;
        if (*s == '"') {
            for (s++; *s; s++) {
                if (*s == '"' && s[1] == '"')
                    buf[len++] = *s++;
                else if (*s == '"')
                    break;
                else
                    buf[len++] = *s;
            }
            s++; /* the closing quote */
        } else {
            while (*s && *s != ',' && *s != '\n')
                buf[len++] = *s++;
        }
        buf[len] = '\0';
        if (n < max)
            fields[n++] = strdup(buf);
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '\n')
            s++;
        break;
    }
    *p = s;
    return n;
}

struct csv {
    int ncols, nrows;
    char *head[128];
    char *cell[32][128];
};

static void csv_parse(const char *text, struct csv *c)
{
    memset(c, 0, sizeof *c);
    const char *p = text;
    c->ncols = csv_record(&p, c->head, 128);
    while (*p && c->nrows < 32) {
        int n = csv_record(&p, c->cell[c->nrows], 128);
        assert_int_equal(n, c->ncols); /* every record has every column */
        c->nrows++;
    }
}

static void csv_free(struct csv *c)
{
    for (int i = 0; i < c->ncols; i++)
        free(c->head[i]);
    for (int r = 0; r < c->nrows; r++)
        for (int i = 0; i < c->ncols; i++)
            free(c->cell[r][i]);
}

static const char *csv_get(const struct csv *c, int row, const char *col)
{
    for (int i = 0; i < c->ncols; i++)
        if (strcmp(c->head[i], col) == 0)
            return c->cell[row][i];
    fail_msg("no CSV column '%s'", col);
    return NULL;
}

static void test_csv(void **state)
{
    (void)state;
    struct model m;
    make_model(&m);
    struct tf_error err = {0};
    struct tf_export_options o = {.format = TF_EXPORT_CSV, .run = -1};
    int rc;
    char *text = export_text(m.a, &o, &rc, &err);
    assert_int_equal(rc, 0);
    struct csv c;
    csv_parse(text, &c);
    assert_int_equal(c.nrows, 8); /* every row of both kernels */
    /* Fixed columns, then sizes, config, parameters, measurements, metrics, message. */
    assert_string_equal(c.head[0], "kernel");
    assert_string_equal(c.head[c.ncols - 1], "message");
    assert_string_equal(csv_get(&c, 0, "device_name"), "NVIDIA H100 80GB HBM3");
    assert_string_equal(csv_get(&c, 0, "device_host"), "node1");
    assert_string_equal(csv_get(&c, 0, "device_arch"), "sm_90");
    assert_string_equal(csv_get(&c, 0, "run_start"), "2024-05-01T10:40:00Z");
    assert_string_equal(csv_get(&c, 0, "problem_name"), "small");
    assert_string_equal(csv_get(&c, 0, "M"), "64");
    assert_string_equal(csv_get(&c, 0, "BM"), "16");
    assert_string_equal(csv_get(&c, 0, "LAYOUT"), "row");
    assert_string_equal(csv_get(&c, 0, "status"), "ok");
    assert_string_equal(csv_get(&c, 0, "time_median"), "0.002");
    assert_string_equal(csv_get(&c, 0, "gflops"), "500.0");
    assert_string_equal(csv_get(&c, 0, "VEC"), ""); /* vecadd's column, not gemm's */
    /* The failure: status by name, times empty (NaN), the message quoted and made UTF-8. */
    assert_string_equal(csv_get(&c, 1, "status"), "compile_error");
    assert_string_equal(csv_get(&c, 1, "LAYOUT"), "col");
    assert_string_equal(csv_get(&c, 1, "time_median"), "");
    assert_string_equal(csv_get(&c, 1, "registers"), "-1");
    assert_string_equal(csv_get(&c, 1, "message"), "error: \"BM\", too big ?");
    assert_non_null(strstr(text, "\"error: \"\"BM\"\", too big ?\""));
    assert_string_equal(csv_get(&c, 4, "phase"), "2");
    assert_string_equal(csv_get(&c, 7, "kernel"), "vecadd");
    assert_string_equal(csv_get(&c, 7, "VEC"), "4");
    assert_string_equal(csv_get(&c, 7, "BM"), "");
    csv_free(&c);
    free(text);

    /* Selections: one kernel, one run, one device class, one problem. */
    static const struct {
        const char *kernel, *problem, *device;
        int run, rows;
    } sel[] = {{"gemm", NULL, NULL, 1, 3},
               {NULL, "large", NULL, -1, 1},
               {"gemm", NULL, "NVIDIA A100-PCIE-40GB", -1, 1},
               {"gemm", NULL, "sm_90", -1, 6},
               {NULL, NULL, "cuda/sm_90/NVIDIA H100 80GB HBM3", 0, 4}};
    for (size_t i = 0; i < sizeof sel / sizeof *sel; i++) {
        o = (struct tf_export_options){.format = TF_EXPORT_CSV, .kernel = sel[i].kernel,
                                       .problem = sel[i].problem, .device = sel[i].device,
                                       .run = sel[i].run};
        text = export_text(m.a, &o, &rc, &err);
        assert_int_equal(rc, 0);
        csv_parse(text, &c);
        if (c.nrows != sel[i].rows)
            fail_msg("selection %zu: %d rows, expected %d", i, c.nrows, sel[i].rows);
        csv_free(&c);
        free(text);
    }
    destroy_model(&m);
}

static void test_json(void **state)
{
    (void)state;
    struct model m;
    make_model(&m);
    struct tf_error err = {0};
    struct tf_export_options o = {.format = TF_EXPORT_JSON, .kernel = "gemm", .run = 1,
                                  .archive_path = "x.h5"};
    int rc;
    char *text = export_text(m.a, &o, &rc, &err);
    assert_int_equal(rc, 0);
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    if (doc == NULL)
        fail_msg("not JSON: %s at %d:%d", je.text, je.line, je.column);
    assert_string_equal(json_string_value(json_object_get(doc, "format")), "tunefarm-export");
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "archive"),
                                                          "archive_id")), m.a->id);
    /* Only what the selected rows refer to: run 1 and the second H100. */
    json_t *runs = json_object_get(doc, "runs"), *devices = json_object_get(doc, "devices");
    assert_int_equal(json_array_size(runs), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "id")), 1);
    assert_int_equal(json_array_size(devices), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(devices, 0), "uuid")),
                        "GPU-1");
    json_t *kernels = json_object_get(doc, "kernels");
    assert_int_equal(json_array_size(kernels), 1);
    json_t *k = json_array_get(kernels, 0);
    json_t *params = json_object_get(k, "parameters");
    assert_int_equal(json_array_size(params), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(params, 2), "kind")),
                        "enum");
    assert_int_equal(json_array_size(json_object_get(k, "problems")), 2);
    json_t *results = json_object_get(k, "results");
    assert_int_equal(json_array_size(results), 3);
    json_t *r = json_array_get(results, 2); /* config 2, phase 2: BM 16, BN 64, LAYOUT row */
    assert_int_equal(json_integer_value(json_object_get(r, "config")), 2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "parameters"), "BN")),
                     64);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "parameters"),
                                                          "LAYOUT")), "row");
    assert_string_equal(json_string_value(json_object_get(r, "status")), "ok");
    assert_true(json_real_value(json_object_get(r, "time_median")) == 4.0e-3);
    assert_true(json_is_null(json_object_get(r, "energy_j"))); /* NaN */
    assert_true(json_real_value(json_object_get(json_object_get(r, "metrics"), "gflops")) == 250.0);
    json_decref(doc);
    free(text);
    destroy_model(&m);
}

/* The one group of gemm/small on the H100 class, as a Kernel Tuner cache. */
static void test_ktcache(void **state)
{
    (void)state;
    struct model m;
    make_model(&m);
    struct tf_error err = {0};
    struct tf_export_options o = {.format = TF_EXPORT_KTCACHE, .run = -1};
    int rc;
    char *text = export_text(m.a, &o, &rc, &err);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err.message, "several kernels: gemm and vecadd: choose one with --kernel"));
    free(text);
    o.kernel = "gemm";
    text = export_text(m.a, &o, &rc, &err);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err.message, "several problems: small and large"));
    free(text);
    o.problem = "small";
    text = export_text(m.a, &o, &rc, &err);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err.message, "several device classes"));
    assert_non_null(strstr(err.message, "--device"));
    free(text);
    o.device = "NVIDIA H100 80GB HBM3";
    text = export_text(m.a, &o, &rc, &err);
    assert_int_equal(rc, 0);
    /* Kernel Tuner tells a closed cache by its last characters. */
    size_t len = strlen(text);
    assert_true(len > 4 && strcmp(text + len - 4, "}}}\n") == 0);
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "device_name")),
                        "NVIDIA H100 80GB HBM3");
    assert_string_equal(json_string_value(json_object_get(doc, "kernel_name")), "gemm");
    json_t *ps = json_object_get(doc, "problem_size");
    assert_int_equal(json_array_size(ps), 3);
    assert_int_equal(json_integer_value(json_array_get(ps, 0)), 64);
    json_t *layout = json_object_get(json_object_get(doc, "tune_params"), "LAYOUT");
    assert_string_equal(json_string_value(json_array_get(layout, 1)), "col");
    json_t *cache = json_object_get(doc, "cache");
    assert_int_equal(json_object_size(cache), 3); /* configs 0, 1, 2: one entry each */
    /* Config 0 ran in both runs: the later run (3 ms median, 3.3 ms mean) is kept. */
    json_t *e0 = json_object_get(cache, "16,32,row");
    assert_non_null(e0);
    assert_true(fabs(json_real_value(json_object_get(e0, "time")) - 3.3) < 1e-12);
    assert_true(fabs(json_real_value(json_object_get(e0, "compile_time")) - 250) < 1e-12);
    assert_string_equal(json_string_value(json_object_get(e0, "timestamp")),
                        "2024-05-01 10:41:40+00:00");
    assert_true(json_real_value(json_object_get(e0, "gflops")) == 1000.0 / 3.0);
    /* The failure as Kernel Tuner names it. */
    assert_string_equal(json_string_value(json_object_get(json_object_get(cache, "16,32,col"),
                                                          "time")), "CompilationFailedConfig");
    /* Config 2 was screened and re-measured: the strict phase is kept. */
    json_t *e2 = json_object_get(cache, "16,64,row");
    assert_true(fabs(json_real_value(json_object_get(e2, "time")) - 4.4) < 1e-12);
    json_t *ext = json_object_get(doc, "tunefarm");
    assert_string_equal(json_string_value(json_object_get(ext, "problem")), "small");
    assert_string_equal(json_string_value(json_object_get(json_object_get(ext, "device"), "host")),
                        "node1");
    json_decref(doc);
    free(text);
    /* Nothing selected: nothing to write. */
    o.run = 1;
    o.device = "NVIDIA A100-PCIE-40GB";
    text = export_text(m.a, &o, &rc, &err);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err.message, "no result rows"));
    free(text);
    destroy_model(&m);
}

/* The row of a configuration a file keeps among several (the module's
 * comment: strict over single over screening, then the later timestamp, a
 * missing one the oldest, then the later run), the Kernel Tuner name of a
 * failure, a single size not named problem_size, and a CSV field with a
 * leading space. The "pick" kernel: V in 1..4, size N. */
static void test_row_choice_and_edges(void **state)
{
    (void)state;
    struct test_kernel t;
    memset(&t, 0, sizeof t);
    t.k.name = "pick";
    static const int64_t v[] = {1, 2, 3, 4};
    tk_param_int(&t, "V", 4, v);
    t.size_names[0] = "N";
    t.k.nsizes = 1;
    t.k.size_names = t.size_names;
    tk_problem(&t, "one", (const int64_t[]){1024});
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H100 80GB HBM3", "GPU-0", "node1");
    tf_archive_add_device(a, &h0);
    struct tf_archive_run r0 = make_run("nightly", 1714560000.0, 1714560050.0);
    struct tf_archive_run r1 = make_run("nightly", 1714560100.0, 1714560150.0);
    tf_archive_add_run(a, &r0);
    tf_archive_add_run(a, &r1);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &t.k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &t.k, 0);
    const double t0 = 1714560000.0;
    /* V=1: strict (phase 2), older, against single-phase, newer: strict wins */
    add_row(ak, 1, 0, 0, 0, TF_STATUS_OK, 4.0, 2);
    ak->rows[ak->nrows - 1].r.timestamp = t0;
    add_row(ak, 0, 0, 0, 0, TF_STATUS_OK, 5.0, 0);
    ak->rows[ak->nrows - 1].r.timestamp = t0 + 500;
    /* V=2: no timestamp (NaN) reads as the oldest */
    add_row(ak, 1, 0, 0, 1, TF_STATUS_OK, 7.0, 0);
    ak->rows[ak->nrows - 1].r.timestamp = NAN;
    add_row(ak, 0, 0, 0, 1, TF_STATUS_OK, 6.0, 0);
    ak->rows[ak->nrows - 1].r.timestamp = t0;
    tf_strlcpy(ak->rows[ak->nrows - 1].r.message, " padded", sizeof ak->rows[0].r.message);
    /* V=3: the same phase and time: the later run wins */
    add_row(ak, 1, 0, 0, 2, TF_STATUS_OK, 9.0, 0);
    ak->rows[ak->nrows - 1].r.timestamp = t0;
    add_row(ak, 0, 0, 0, 2, TF_STATUS_OK, 8.0, 0);
    ak->rows[ak->nrows - 1].r.timestamp = t0;
    /* V=4: a timeout whose message names another status's Kernel Tuner failure */
    add_row(ak, 0, 0, 0, 3, TF_STATUS_TIMEOUT, 0, 0);
    tf_strlcpy(ak->rows[ak->nrows - 1].r.message, "Kernel Tuner: CompilationFailedConfig",
               sizeof ak->rows[0].r.message);

    struct tf_export_options o = {.format = TF_EXPORT_KTCACHE, .run = -1};
    int rc;
    char *text = export_text(a, &o, &rc, &err);
    if (rc != 0)
        fail_msg("%s", err.message);
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    json_t *cache = json_object_get(doc, "cache");
    assert_int_equal(json_object_size(cache), 4);
    assert_true(fabs(json_real_value(json_object_get(json_object_get(cache, "1"), "time")) - 4.4) <
                1e-12);
    assert_true(fabs(json_real_value(json_object_get(json_object_get(cache, "2"), "time")) - 6.6) <
                1e-12);
    assert_true(fabs(json_real_value(json_object_get(json_object_get(cache, "3"), "time")) - 9.9) <
                1e-12);
    assert_string_equal(json_string_value(json_object_get(json_object_get(cache, "4"), "time")),
                        "RuntimeFailedConfig");
    /* one size named N: a list, as for several (a bare number is Kernel Tuner's
     * own problem_size, which import names so) */
    json_t *ps = json_object_get(doc, "problem_size");
    assert_true(json_is_array(ps));
    assert_int_equal(json_array_size(ps), 1);
    assert_int_equal(json_integer_value(json_array_get(ps, 0)), 1024);
    json_decref(doc);
    free(text);

    /* CSV: a field with a leading space is quoted, so readers that trim keep it */
    o.format = TF_EXPORT_CSV;
    text = export_text(a, &o, &rc, &err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(text, ",\" padded\""));
    free(text);
    tf_archive_destroy(a);
    tk_free(&t);
}

static json_t *measurement(json_t *res, const char *name)
{
    json_t *ms = json_object_get(res, "measurements");
    for (size_t i = 0; i < json_array_size(ms); i++)
        if (strcmp(json_string_value(json_object_get(json_array_get(ms, i), "name")), name) == 0)
            return json_object_get(json_array_get(ms, i), "value");
    return NULL;
}

static void test_t4(void **state)
{
    (void)state;
    struct model m;
    make_model(&m);
    struct tf_error err = {0};
    struct tf_export_options o = {.format = TF_EXPORT_T4, .kernel = "gemm", .problem = "small",
                                  .device = "sm_90", .run = -1};
    int rc;
    char *text = export_text(m.a, &o, &rc, &err);
    assert_int_equal(rc, 0);
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "schema_version")), "1.0.0");
    json_t *results = json_object_get(doc, "results");
    assert_int_equal(json_array_size(results), 3);
    json_t *r1 = json_array_get(results, 1);
    assert_string_equal(json_string_value(json_object_get(r1, "invalidity")), "compile");
    assert_int_equal(json_integer_value(json_object_get(r1, "correctness")), 0);
    assert_string_equal(json_string_value(measurement(r1, "status")), "compile_error");
    assert_string_equal(json_string_value(measurement(r1, "time")), "CompilationFailedConfig");
    json_t *r0 = json_array_get(results, 0);
    assert_string_equal(json_string_value(json_object_get(r0, "invalidity")), "correct");
    assert_true(fabs(json_real_value(measurement(r0, "time")) - 3.3) < 1e-12);
    assert_true(fabs(json_real_value(measurement(r0, "time_median")) - 3.0) < 1e-12);
    assert_true(json_real_value(json_object_get(json_object_get(r0, "times"),
                                                "compilation_time")) == 250.0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r0, "configuration"),
                                                        "BM")), 16);
    json_decref(doc);
    free(text);
    /* The metadata document: the two H100s the rows came from. */
    char *meta = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&meta, &len);
    assert_int_equal(tf_export_t4_metadata(m.a, &o, f, &err), 0);
    fclose(f);
    doc = json_loads(meta, 0, NULL);
    assert_non_null(doc);
    json_t *hw = json_object_get(json_object_get(json_object_get(doc, "metadata"), "hardware"),
                                 "hardware_description");
    assert_int_equal(json_array_size(hw), 2);
    json_decref(doc);
    free(meta);
    destroy_model(&m);
}

static void test_check(void **state)
{
    (void)state;
    struct model m;
    make_model(&m);
    struct tf_error err = {0};
    struct tf_export_options o = {.format = TF_EXPORT_CSV, .kernel = "nope", .run = -1,
                                  .archive_path = "a.h5"};
    assert_int_not_equal(tf_export_check(m.a, &o, &err), 0);
    assert_string_equal(err.message, "a.h5 has no kernel 'nope'; it has: gemm, vecadd");
    o = (struct tf_export_options){.format = TF_EXPORT_CSV, .run = 2, .archive_path = "a.h5"};
    assert_int_not_equal(tf_export_check(m.a, &o, &err), 0);
    assert_non_null(strstr(err.message, "has 2 run(s)"));
    o = (struct tf_export_options){.format = TF_EXPORT_CSV, .run = -1, .device = "MI300X"};
    assert_int_not_equal(tf_export_check(m.a, &o, &err), 0);
    assert_non_null(strstr(err.message, "NVIDIA H100 80GB HBM3, NVIDIA A100-PCIE-40GB"));
    o = (struct tf_export_options){.format = TF_EXPORT_CSV, .run = -1, .kernel = "vecadd",
                                   .problem = "small"};
    assert_int_not_equal(tf_export_check(m.a, &o, &err), 0);
    assert_non_null(strstr(err.message, "it has: vecadd/n1m"));
    assert_int_equal(tf_export_format_from_name("kt-cache"), TF_EXPORT_KTCACHE);
    assert_int_equal(tf_export_format_from_name("xml"), -1);
    destroy_model(&m);
}

static void test_to_path(void **state)
{
    (void)state;
    struct model m;
    make_model(&m);
    struct tf_error err = {0};
    char dir[] = "/tmp/tf-export-XXXXXX", path[256], meta[300], tmp[300];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/gemm.json", dir);
    struct tf_export_options o = {.format = TF_EXPORT_T4, .kernel = "gemm", .problem = "small",
                                  .device = "sm_90", .run = -1};
    assert_int_equal(tf_export_to_path(m.a, &o, path, &err), 0);
    tf_export_metadata_path(path, meta, sizeof meta);
    snprintf(tmp, sizeof tmp, "%s/gemm.metadata.json", dir);
    assert_string_equal(meta, tmp);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(stat(meta, &st), 0);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    assert_int_not_equal(stat(tmp, &st), 0); /* renamed, nothing left behind */
    /* A selection the format cannot hold: the old file stays as it was. */
    off_t before = (stat(path, &st), st.st_size);
    o.device = NULL;
    assert_int_not_equal(tf_export_to_path(m.a, &o, path, &err), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, before);
    assert_int_not_equal(stat(tmp, &st), 0);
    /* A folder that does not exist: an I/O error, nothing created. */
    snprintf(path, sizeof path, "%s/missing/x.csv", dir);
    o = (struct tf_export_options){.format = TF_EXPORT_CSV, .run = -1};
    assert_int_not_equal(tf_export_to_path(m.a, &o, path, &err), 0);
    assert_int_equal(err.code, TF_ERR_IO);
    tf_export_metadata_path("results", meta, sizeof meta);
    assert_string_equal(meta, "results.metadata.json");
    snprintf(path, sizeof path, "%s/gemm.json", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/gemm.metadata.json", dir);
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
    destroy_model(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv),   cmocka_unit_test(test_json),  cmocka_unit_test(test_ktcache),
        cmocka_unit_test(test_t4),    cmocka_unit_test(test_check), cmocka_unit_test(test_to_path),
        cmocka_unit_test(test_row_choice_and_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
