/* test_report.c - the tables read from an archive (coordinator/report.c).
 *
 * An archive model is built by hand (archive_fixture.h): two H200s (one
 * device class), an MI300X (another), the fixture's gemm with rows on both
 * classes. The cross-class table must give each class's best configuration
 * with its time on every class and the ratio to that class's own best, say
 * `wrong_result` where the configuration failed on a class and `not
 * measured` where a class never ran it, and print nothing for a kernel that
 * only one class measured. The per-class summary must count the two H200s
 * as one class. The speedup over the default is over each problem's own
 * default, in the model and in an archive written and read back (what
 * `tunefarm query` shows). Output is captured with open_memstream and searched. */
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

#include "../../coordinator/report.h"
#include "../../schema/result.h"
#include "archive_fixture.h"

/* Append a row: `config` of problem `problem` on device `device`, median `ms`. */
static void add_row(struct tf_archive_kernel *ak, uint32_t device, uint32_t problem,
                    uint64_t config, int status, double ms)
{
    struct tf_archive_row row;
    memset(&row, 0, sizeof row);
    tf_result_init(&row.r, 0, problem, config, (uint8_t)status);
    row.run = 0;
    row.device = device;
    row.r.time_median = status == TF_STATUS_OK ? ms * 1e-3 : NAN;
    row.r.phase = 0;
    tf_archive_append(ak, &row);
}

struct model {
    struct test_kernel gemm, vecadd;
    struct tf_archive *a;
};

static struct tf_archive *make_cross_model(struct model *m)
{
    struct tf_error err = {0};
    make_gemm(&m->gemm);
    make_vecadd(&m->vecadd);
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H200", "GPU-0", "node1");
    struct tf_device h1 = make_device("cuda", "NVIDIA H200", "GPU-1", "node2");
    struct tf_device mi = make_device("hip", "AMD Instinct MI300X", "GPU-2", "node3");
    tf_strlcpy(mi.arch, "gfx942", sizeof mi.arch);
    assert_int_equal(tf_archive_add_device(a, &h0), 0);
    assert_int_equal(tf_archive_add_device(a, &h1), 1);
    assert_int_equal(tf_archive_add_device(a, &mi), 2);
    struct tf_archive_run run = make_run("cross", 1714560000.0, 1714560100.0);
    tf_archive_add_run(a, &run);

    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &m->gemm.k, &err);
    assert_non_null(ak);
    assert_int_equal(tf_archive_problem_for(ak, &m->gemm.k, 0), 0);
    assert_int_equal(tf_archive_problem_for(ak, &m->gemm.k, 1), 1);
    /* small: H200 best is config 3 (1 ms), MI300X best is config 7 (1.5 ms). */
    add_row(ak, 0, 0, 1, TF_STATUS_OK, 2.0);
    add_row(ak, 0, 0, 3, TF_STATUS_OK, 1.0);
    add_row(ak, 1, 0, 7, TF_STATUS_OK, 3.0);
    add_row(ak, 2, 0, 3, TF_STATUS_OK, 4.0);
    add_row(ak, 2, 0, 7, TF_STATUS_OK, 1.5);
    /* large: H200 best config 1, which is wrong on the MI300X; the MI300X
     * best, config 5, never ran on an H200. */
    add_row(ak, 0, 1, 1, TF_STATUS_OK, 10.0);
    add_row(ak, 2, 1, 1, TF_STATUS_WRONG_RESULT, 0);
    add_row(ak, 2, 1, 5, TF_STATUS_OK, 8.0);
    /* vecadd: one class only */
    struct tf_archive_kernel *av = tf_archive_kernel_for(a, &m->vecadd.k, &err);
    assert_non_null(av);
    tf_archive_problem_for(av, &m->vecadd.k, 0);
    add_row(av, 0, 0, 0, TF_STATUS_OK, 0.5);
    add_row(av, 1, 0, 2, TF_STATUS_OK, 0.25);
    m->a = a;
    return a;
}

static void destroy_model(struct model *m)
{
    tf_archive_destroy(m->a);
    tk_free(&m->gemm);
    tk_free(&m->vecadd);
}

/* The report of `fn` as a string (caller frees); *lines gets its return value. */
static char *capture(int (*fn)(const struct tf_archive *, int, const char *, FILE *),
                     const struct tf_archive *a, const char *kernel, int *lines)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    *lines = fn(a, -1, kernel, f);
    fclose(f);
    return text;
}

/* The line of `text` that starts with `prefix` (a static copy), or fail. */
static const char *line_starting(const char *text, const char *prefix)
{
    static char line[1024];
    for (const char *at = text; at && *at; at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL) {
        if (strncmp(at, prefix, strlen(prefix)) == 0) {
            const char *end = strchr(at, '\n');
            const size_t n = end ? (size_t)(end - at) : strlen(at);
            memcpy(line, at, n < sizeof line - 1 ? n : sizeof line - 1);
            line[n < sizeof line - 1 ? n : sizeof line - 1] = '\0';
            return line;
        }
    }
    fail_msg("no line starting with '%s' in:\n%s", prefix, text);
    return NULL;
}

static void test_cross_table(void **state)
{
    (void)state;
    struct model m;
    int lines = 0;
    char *text = capture(tf_report_cross, make_cross_model(&m), NULL, &lines);
    /* gemm x {small, large} x 2 classes; vecadd (one class) prints nothing */
    assert_int_equal(lines, 4);
    assert_null(strstr(text, "vecadd"));
    /* small, H200's best (config 3): 1 ms there, 4 ms on the MI300X = 0.38x
     * of the MI300X's own best (1.5 ms) */
    const char *l = line_starting(text, "gemm       small    NVIDIA H200");
    assert_non_null(strstr(l, "1.000 ms (1.00x)"));
    assert_non_null(strstr(l, "4.000 ms (0.38x)"));
    /* MI300X's best (config 7): 3 ms on an H200 (0.33x of 1 ms), 1.5 ms at home */
    l = line_starting(text, "gemm       small    AMD Instinct MI300X");
    assert_non_null(strstr(l, "3.000 ms (0.33x)"));
    assert_non_null(strstr(l, "1.500 ms (1.00x)"));
    l = line_starting(text, "gemm       large    NVIDIA H200");
    assert_non_null(strstr(l, "10.000 ms (1.00x)"));
    assert_non_null(strstr(l, "wrong_result"));
    l = line_starting(text, "gemm       large    AMD Instinct MI300X");
    assert_non_null(strstr(l, "not measured"));
    assert_non_null(strstr(l, "8.000 ms (1.00x)"));
    /* the configurations are spelled out: config 3 = BM=16 BN=64 LAYOUT=col */
    assert_non_null(strstr(text, "best of NVIDIA H200: BM=16 BN=64 LAYOUT=col"));
    free(text);
    /* one kernel named: only its tables */
    text = capture(tf_report_cross, m.a, "vecadd", &lines);
    assert_int_equal(lines, 0);
    free(text);
    destroy_model(&m);
}

static void test_best_groups_classes(void **state)
{
    (void)state;
    struct model m;
    int lines = 0;
    char *text = capture(tf_report_best, make_cross_model(&m), "vecadd", &lines);
    /* two H200s are one class: one line, the faster of their rows, 2 ok of 2 */
    assert_int_equal(lines, 1);
    const char *l = line_starting(text, "vecadd");
    assert_non_null(strstr(l, "250.00 us"));
    assert_non_null(strstr(l, "2/2"));
    assert_non_null(strstr(l, "VEC=4"));
    free(text);
    destroy_model(&m);
}

/* gemm on one H200 with each problem's default measured: small's default
 * (config `small_default`) 2 ms, large's (config `large_default`) 40 ms; the
 * best is 1 ms on small and 10 ms on large. Each problem also has the other's
 * default measured, at other times, so a speedup taken over the wrong
 * problem's default shows. */
static struct tf_archive *make_default_model(struct test_kernel *gemm)
{
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H200", "GPU-0", "node1");
    tf_archive_add_device(a, &h0);
    struct tf_archive_run run = make_run("defaults", 1714560000.0, 1714560100.0);
    tf_archive_add_run(a, &run);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm->k, &err);
    assert_non_null(ak);
    assert_int_equal(tf_archive_problem_for(ak, &gemm->k, 0), 0);
    assert_int_equal(tf_archive_problem_for(ak, &gemm->k, 1), 1);
    add_row(ak, 0, 0, 1, TF_STATUS_OK, 2.0);  /* small: config 1 */
    add_row(ak, 0, 0, 3, TF_STATUS_OK, 1.0);  /* small: best */
    add_row(ak, 0, 0, 5, TF_STATUS_OK, 8.0);  /* small: config 5 */
    add_row(ak, 0, 1, 1, TF_STATUS_OK, 10.0); /* large: best, config 1 */
    add_row(ak, 0, 1, 5, TF_STATUS_OK, 40.0); /* large: config 5 */
    return a;
}

static void test_best_vs_problem_default(void **state)
{
    (void)state;
    struct test_kernel gemm;
    make_gemm(&gemm);
    static const uint64_t per_problem[] = {1, 5}; /* small -> 1, large -> 5 */
    tk_defaults(&gemm, per_problem);
    struct tf_archive *a = make_default_model(&gemm);
    int lines = 0;
    char *text = capture(tf_report_best, a, "gemm", &lines);
    assert_int_equal(lines, 2);
    /* small: best 1 ms, its default (config 1) 2 ms; not config 5's 8 ms */
    assert_non_null(strstr(line_starting(text, "gemm       small"), " 2.00x "));
    /* large: best 10 ms, its default (config 5) 40 ms; not config 1, the best itself */
    assert_non_null(strstr(line_starting(text, "gemm       large"), " 4.00x "));
    free(text);

    /* The same through the archive file, as `tunefarm query` reads it. */
    char dir[] = "/tmp/tf_test_report_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/query.h5", dir);
    struct tf_error err = {0};
    if (tf_archive_write(a, path, &err) != 0)
        fail_msg("write: %s", err.message);
    struct tf_archive *b = tf_archive_read(path, &err);
    if (b == NULL)
        fail_msg("read: %s", err.message);
    text = capture(tf_report_best, b, NULL, &lines);
    assert_int_equal(lines, 2);
    assert_non_null(strstr(line_starting(text, "gemm       small"), " 2.00x "));
    assert_non_null(strstr(line_starting(text, "gemm       large"), " 4.00x "));
    free(text);
    tf_archive_destroy(b);
    unlink(path);
    rmdir(dir);
    tf_archive_destroy(a);
    tk_free(&gemm);

    /* A literal (kernel-wide) default, config 5: the speedup over it on both. */
    make_gemm(&gemm);
    a = make_default_model(&gemm);
    text = capture(tf_report_best, a, "gemm", &lines);
    assert_non_null(strstr(line_starting(text, "gemm       small"), " 8.00x "));
    assert_non_null(strstr(line_starting(text, "gemm       large"), " 4.00x "));
    free(text);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

/* Issue 14 item 1: a parameter with one value (a size pinned by a
 * constraint) is not printed in the best configuration (summary, query and
 * the cross-class lines); the others are, in order. A kernel whose every
 * parameter has one value shows them all. */
static void test_single_valued_parameters_hidden(void **state)
{
    (void)state;
    struct test_kernel t;
    memset(&t, 0, sizeof t);
    t.k.name = "pinned";
    static const int64_t one[] = {4096}, block[] = {64, 128}, also_one[] = {1};
    tk_param_int(&t, "NX_AGAIN", 1, one);
    tk_param_int(&t, "BLOCK", 2, block);
    tk_param_int(&t, "VEC", 1, also_one);
    t.size_names[0] = "NX";
    t.k.nsizes = 1;
    t.k.size_names = t.size_names;
    tk_problem(&t, "only", (const int64_t[]){4096});
    memset(t.k.source_hash, 'c', 64);
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H200", "GPU-0", "node1");
    struct tf_device mi = make_device("hip", "AMD Instinct MI300X", "GPU-2", "node3");
    tf_archive_add_device(a, &h0);
    tf_archive_add_device(a, &mi);
    struct tf_archive_run run = make_run("pinned", 1714560000.0, 1714560100.0);
    tf_archive_add_run(a, &run);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &t.k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &t.k, 0);
    add_row(ak, 0, 0, 0, TF_STATUS_OK, 2.0);
    add_row(ak, 0, 0, 1, TF_STATUS_OK, 1.0); /* BLOCK=128 */
    add_row(ak, 1, 0, 0, TF_STATUS_OK, 1.0); /* BLOCK=64 on the MI300X */
    int lines = 0;
    char *text = capture(tf_report_best, a, "pinned", &lines);
    const char *l = line_starting(text, "pinned");
    assert_non_null(strstr(l, "BLOCK=128"));
    assert_null(strstr(l, "NX_AGAIN"));
    assert_null(strstr(l, "VEC"));
    free(text);
    text = capture(tf_report_cross, a, "pinned", &lines);
    assert_non_null(strstr(text, "best of NVIDIA H200: BLOCK=128\n"));
    assert_non_null(strstr(text, "best of AMD Instinct MI300X: BLOCK=64\n"));
    free(text);
    char cfg[128];
    tf_report_format_config(ak, 1, cfg, sizeof cfg);
    assert_string_equal(cfg, "BLOCK=128");
    tf_archive_destroy(a);
    tk_free(&t);

    /* every parameter single-valued: all shown */
    memset(&t, 0, sizeof t);
    t.k.name = "fixed";
    tk_param_int(&t, "NX_AGAIN", 1, one);
    tk_param_int(&t, "VEC", 1, also_one);
    t.size_names[0] = "NX";
    t.k.nsizes = 1;
    t.k.size_names = t.size_names;
    tk_problem(&t, "only", (const int64_t[]){4096});
    a = tf_archive_create();
    ak = tf_archive_kernel_for(a, &t.k, &err);
    assert_non_null(ak);
    tf_report_format_config(ak, 0, cfg, sizeof cfg);
    assert_string_equal(cfg, "NX_AGAIN=4096 VEC=1");
    tf_archive_destroy(a);
    tk_free(&t);
}

/* Issue 14 item 8: `query` (and the run's summary) show the compiler's
 * registers, spills and warnings of each best configuration, after the
 * table; nothing when the compiler said nothing of them. */
static void test_compiler_notes_for_the_best(void **state)
{
    (void)state;
    struct model m;
    int lines = 0;
    char *text = capture(tf_report_best, make_cross_model(&m), "gemm", &lines);
    assert_null(strstr(text, "Compiler"));
    assert_int_equal(lines, 4); /* small and large, each on two classes: table lines only */
    free(text);
    /* a host compiler that warned of nothing (0, not unknown) says nothing either */
    for (uint64_t r = 0; r < m.a->kernels[0].nrows; r++)
        m.a->kernels[0].rows[r].r.warnings = 0;
    text = capture(tf_report_best, m.a, "gemm", &lines);
    assert_null(strstr(text, "Compiler"));
    free(text);
    /* small's H200 best is config 3 (row 1); another row of it has no warnings */
    struct tf_archive_kernel *ak = &m.a->kernels[0];
    ak->rows[1].r.registers = 40;
    ak->rows[1].r.spill_bytes = 0;
    ak->rows[1].r.warnings = 2;
    tf_strlcpy(ak->rows[1].r.first_warning, "gemm.cu(12): warning #177-D: variable \"t\"",
               sizeof ak->rows[1].r.first_warning);
    ak->rows[0].r.warnings = 0;
    text = capture(tf_report_best, m.a, "gemm", &lines);
    assert_int_equal(lines, 4);
    assert_non_null(strstr(text, "\nCompiler, best configurations: registers per thread"));
    const char *notes = strstr(text, "\nCompiler") + 1; /* the rows below the table */
    const char *l = line_starting(notes, "gemm       small    NVIDIA H200");
    assert_non_null(strstr(l, " 40 "));
    assert_non_null(strstr(l, "2: gemm.cu(12): warning #177-D: variable \"t\""));
    free(text);
    destroy_model(&m);
}

/* The first warning quotes the kernel's source (a `#warning`'s text, its
 * author's): the run's summary and `query` print its control bytes as '?',
 * never as escape sequences to the terminal (tf_exchange_terminal). */
static void test_compiler_notes_control_bytes(void **state)
{
    (void)state;
    struct model m;
    int lines = 0;
    make_cross_model(&m);
    struct tf_archive_kernel *ak = &m.a->kernels[0];
    ak->rows[1].r.warnings = 1;
    tf_strlcpy(ak->rows[1].r.first_warning,
               "k.c:3:2: warning: #warning \"a \x1b[2J\x1b]0;t\x07 b\" [-Wcpp]",
               sizeof ak->rows[1].r.first_warning);
    char *text = capture(tf_report_best, m.a, "gemm", &lines);
    assert_non_null(strstr(text, "1: k.c:3:2: warning: #warning \"a ?[2J?]0;t? b\" [-Wcpp]"));
    for (const char *p = text; *p; p++)
        assert_true((unsigned char)*p >= 0x20 || *p == '\n' || *p == '\t');
    free(text);
    destroy_model(&m);
}

/* Runs that repeat configurations (a nightly archive): `ok/total` counts each
 * configuration once, with its latest status; one run alone counts its own.
 * A kernel without rows is not a kernel of the archive's results, and a run
 * is named by its job, hash and dates. */
static void test_repeated_runs(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    struct tf_error err = {0};
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H200", "GPU-0", "node1");
    tf_archive_add_device(a, &h0);
    struct tf_archive_run r0 = make_run("nightly", 1714560000.0, 1714563600.0);
    struct tf_archive_run r1 = make_run("nightly", 1714646400.0, 0);
    tf_archive_add_run(a, &r0);
    tf_archive_add_run(a, &r1);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm.k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &gemm.k, 0);
    assert_non_null(tf_archive_kernel_for(a, &vecadd.k, &err)); /* no rows */
    ak = tf_archive_find_kernel(a, "gemm");
    static const struct {
        uint32_t run;
        uint64_t config;
        int status;
    } rows[] = {{0, 1, TF_STATUS_WRONG_RESULT}, {0, 3, TF_STATUS_OK}, {0, 5, TF_STATUS_OK},
                {1, 1, TF_STATUS_OK},           {1, 3, TF_STATUS_OK}, {1, 5, TF_STATUS_TIMEOUT}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        add_row(ak, 0, 0, rows[i].config, rows[i].status, 1.0 + (double)i);
        ak->rows[ak->nrows - 1].run = rows[i].run;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tf_report_best(a, -1, NULL, f);
    tf_report_best(a, 0, NULL, f);
    tf_report_run_line(a, 1, f);
    fclose(f);
    /* every run: 3 configurations (not 6 rows), 2 ok: config 5 timed out last */
    const char *all = strstr(text, "gemm ");
    assert_non_null(all);
    assert_non_null(strstr(line_starting(all, "gemm"), " 2/3 "));
    assert_non_null(strstr(line_starting(all, "gemm"), "[timeout 1]"));
    /* run 0 alone: its own 3, config 1 wrong there */
    const char *one = strstr(all + 1, "gemm ");
    assert_non_null(one);
    assert_non_null(strstr(line_starting(one, "gemm"), " 2/3 "));
    assert_non_null(strstr(line_starting(one, "gemm"), "[wrong_result 1]"));
    assert_non_null(strstr(text, "run 1: job 'nightly', job hash ffffffffffff, started "));
    assert_non_null(strstr(text, "UNFINISHED"));
    assert_int_equal(tf_report_kernels_with_rows(a), 1);
    assert_int_equal(a->nkernels, 2);
    free(text);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* Merged archives number runs in the merge's argument order, not in time:
 * `merge b.h5 new.h5 old.h5` makes last week's run 1 and tonight's run 0. A
 * configuration's latest status is the one measured last (the rows'
 * timestamps, else their runs' starts), so both merge orders count alike:
 * config 1 failed to compile last week and is ok tonight. */
static void test_latest_is_by_time_not_run_number(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    make_gemm(&gemm);
    for (int order = 0; order < 2; order++) {
        struct tf_archive *a = tf_archive_create();
        struct tf_device h0 = make_device("cuda", "NVIDIA H200", "GPU-0", "node1");
        tf_archive_add_device(a, &h0);
        const double week_ago = 1714560000.0, tonight = week_ago + 7 * 86400.0;
        struct tf_archive_run old_run = make_run("nightly", week_ago, week_ago + 3600);
        struct tf_archive_run new_run = make_run("nightly", tonight, tonight + 3600);
        tf_archive_add_run(a, order == 0 ? &old_run : &new_run);
        tf_archive_add_run(a, order == 0 ? &new_run : &old_run);
        const uint32_t old_id = order == 0 ? 0 : 1, new_id = 1 - old_id;
        struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm.k, &err);
        assert_non_null(ak);
        tf_archive_problem_for(ak, &gemm.k, 0);
        add_row(ak, 0, 0, 1, TF_STATUS_COMPILE_ERROR, 0);
        ak->rows[ak->nrows - 1].run = old_id;
        ak->rows[ak->nrows - 1].r.timestamp = week_ago + 60;
        add_row(ak, 0, 0, 3, TF_STATUS_OK, 2.0);
        ak->rows[ak->nrows - 1].run = old_id; /* no timestamp: its run's start */
        add_row(ak, 0, 0, 1, TF_STATUS_OK, 1.0);
        ak->rows[ak->nrows - 1].run = new_id;
        ak->rows[ak->nrows - 1].r.timestamp = tonight + 60;
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        tf_report_best(a, -1, NULL, f);
        fclose(f);
        const char *line = line_starting(strstr(text, "gemm "), "gemm");
        assert_non_null(line);
        assert_non_null(strstr(line, " 2/2 "));     /* both ok: config 1's latest is ok */
        assert_null(strstr(line, "compile_error")); /* last week's failure is not current */
        free(text);
        tf_archive_destroy(a);
    }
    tk_free(&gemm);
}

/* Issue 13 item 7: the noisy rows of each kernel x problem x class in their
 * own column of the summary, and the two closing lines: noisy rows, and which
 * ok rows have their energy (the others by reason). */
static void test_noise_and_energy_counted(void **state)
{
    (void)state;
    struct model m;
    struct tf_archive *a = make_cross_model(&m);
    struct tf_archive_kernel *ak = &a->kernels[0];
    /* every ok row measured its energy, but: gemm small on the H200s: config
     * 1 noisy; on the MI300X both noisy, one without a counter */
    for (uint64_t i = 0; i < ak->nrows; i++)
        if (ak->rows[i].r.status == TF_STATUS_OK) {
            ak->rows[i].r.energy_status = TF_ENERGY_MEASURED;
            ak->rows[i].r.energy_j = 1.0;
        }
    ak->rows[0].r.noisy = 1;
    ak->rows[3].r.noisy = 1;
    ak->rows[4].r.noisy = 1;
    ak->rows[4].r.energy_status = TF_ENERGY_NO_COUNTER;
    int lines = 0;
    char *text = capture(tf_report_best, a, "gemm", &lines);
    assert_non_null(strstr(text, "ok/total  noisy best configuration"));
    const char *l = line_starting(text, "gemm       small    NVIDIA H200");
    assert_non_null(strstr(l, " 3/3       1     "));
    l = line_starting(text, "gemm       small    AMD Instinct MI300X");
    assert_non_null(strstr(l, " 2/2       2     "));
    l = line_starting(text, "gemm       large    NVIDIA H200");
    assert_non_null(strstr(l, " 1/1       0     "));
    free(text);

    text = capture(tf_report_quality, a, NULL, &lines);
    assert_int_equal(lines, 2);
    /* 9 ok rows: 7 of gemm, 2 of vecadd (whose energy nobody said: unknown) */
    assert_non_null(strstr(line_starting(text, "Noisy: "), "Noisy: 3 of 9 ok results stayed "
                                                           "above max_noise at max_time"));
    assert_string_equal(line_starting(text, "Energy: "),
                        "Energy: measured for 6 of 9 ok results; without: unknown 2, "
                        "no_counter 1");
    free(text);
    text = capture(tf_report_quality, a, "vecadd", &lines);
    assert_non_null(strstr(text, "Noisy: 0 of 2 ok results"));
    free(text);
    /* nothing ok: nothing said */
    struct tf_archive *empty = tf_archive_create();
    text = capture(tf_report_quality, empty, NULL, &lines);
    assert_int_equal(lines, 0);
    assert_string_equal(text, "");
    free(text);
    tf_archive_destroy(empty);
    destroy_model(&m);
}

/* The metric column has no exponent below a billion: 999999999 as written,
 * a billion itself as 1e+09. */
static void test_metric_at_a_billion(void **state)
{
    (void)state;
    struct model m;
    int lines = 0;
    make_cross_model(&m);
    struct tf_archive_kernel *ak = &m.a->kernels[0];
    ak->rows[1].r.metrics[0] = 999999999.0; /* small's H200 best */
    char *text = capture(tf_report_best, m.a, "gemm", &lines);
    assert_non_null(strstr(line_starting(text, "gemm       small    NVIDIA H200"),
                           " 999999999 gflops "));
    free(text);
    ak->rows[1].r.metrics[0] = 1e9;
    text = capture(tf_report_best, m.a, "gemm", &lines);
    assert_non_null(strstr(line_starting(text, "gemm       small    NVIDIA H200"), " 1e+09 gflops "));
    free(text);
    destroy_model(&m);
}

/* When a row was measured, for "the status of its latest measurement": a
 * timestamp of 0 is unknown, so its run's start stands in (tonight's row
 * without one is still tonight's, later than last week's timeout). */
static void test_unknown_timestamp_is_its_runs_start(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    make_gemm(&gemm);
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H200", "GPU-0", "node1");
    tf_archive_add_device(a, &h0);
    const double week_ago = 1714560000.0, tonight = week_ago + 7 * 86400.0;
    struct tf_archive_run old_run = make_run("nightly", week_ago, week_ago + 3600);
    struct tf_archive_run new_run = make_run("nightly", tonight, tonight + 3600);
    tf_archive_add_run(a, &old_run);
    tf_archive_add_run(a, &new_run);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm.k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &gemm.k, 0);
    add_row(ak, 0, 0, 1, TF_STATUS_TIMEOUT, 0);
    ak->rows[ak->nrows - 1].r.timestamp = week_ago + 60;
    add_row(ak, 0, 0, 1, TF_STATUS_OK, 1.0);
    ak->rows[ak->nrows - 1].run = 1;
    ak->rows[ak->nrows - 1].r.timestamp = 0; /* unknown */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tf_report_best(a, -1, NULL, f);
    fclose(f);
    const char *line = line_starting(strstr(text, "gemm "), "gemm");
    assert_non_null(strstr(line, " 1/1 "));
    assert_null(strstr(line, "timeout"));
    free(text);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

/* Two phases in `ok/total` and in a configuration's time: a strict
 * re-measurement is not another measurement of the configuration (its
 * screening row's status counts, even when the re-measurement timed out),
 * and over several runs a configuration's time is the fastest of its strict
 * and single-phase rows. */
static void test_strict_rows_in_counts_and_times(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    make_gemm(&gemm);
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H200", "GPU-0", "node1");
    tf_archive_add_device(a, &h0);
    struct tf_archive_run r0 = make_run("nightly", 1714560000.0, 1714563600.0);
    struct tf_archive_run r1 = make_run("deep", 1714646400.0, 1714650000.0);
    tf_archive_add_run(a, &r0);
    tf_archive_add_run(a, &r1);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm.k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &gemm.k, 0);
    /* run 1, two phases: 3 and 5 screened ok; 3's re-measurement timed out */
    static const struct {
        uint64_t config;
        int status, phase;
        double ms, when;
    } rows[] = {{3, TF_STATUS_OK, 1, 0.9, 100}, {5, TF_STATUS_OK, 1, 1.1, 101},
                {3, TF_STATUS_TIMEOUT, 2, 0, 200}, {5, TF_STATUS_OK, 2, 2.0, 201}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        add_row(ak, 0, 0, rows[i].config, rows[i].status, rows[i].ms);
        struct tf_archive_row *row = &ak->rows[ak->nrows - 1];
        row->run = 1;
        row->r.phase = (uint8_t)rows[i].phase;
        row->r.timestamp = 1714646400.0 + rows[i].when;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tf_report_best(a, 1, NULL, f);
    fclose(f);
    const char *line = line_starting(strstr(text, "gemm "), "gemm");
    assert_non_null(strstr(line, " 2/2 "));
    assert_null(strstr(line, "timeout"));
    free(text);
    /* run 0, one phase: 5 at 1 ms; over both runs 5's time is that, not the
     * 2 ms of its strict re-measurement in run 1 */
    add_row(ak, 0, 0, 5, TF_STATUS_OK, 1.0);
    char key[256];
    tf_device_class_key(&h0, key, sizeof key);
    const struct tf_archive_row *found = NULL;
    const double t = tf_report_config_time(a, ak, 0, -1, key, 5, &found);
    assert_true(t == 1e-3);
    assert_non_null(found);
    assert_int_equal(found->run, 0);
    assert_true(tf_report_config_time(a, ak, 0, 1, key, 5, NULL) == 2e-3); /* run 1 alone */
    tf_archive_destroy(a);
    tk_free(&gemm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cross_table),
        cmocka_unit_test(test_best_groups_classes),
        cmocka_unit_test(test_best_vs_problem_default),
        cmocka_unit_test(test_single_valued_parameters_hidden),
        cmocka_unit_test(test_compiler_notes_for_the_best),
        cmocka_unit_test(test_compiler_notes_control_bytes),
        cmocka_unit_test(test_repeated_runs),
        cmocka_unit_test(test_latest_is_by_time_not_run_number),
        cmocka_unit_test(test_noise_and_energy_counted),
        cmocka_unit_test(test_metric_at_a_billion),
        cmocka_unit_test(test_unknown_timestamp_is_its_runs_start),
        cmocka_unit_test(test_strict_rows_in_counts_and_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
