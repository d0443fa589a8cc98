/* test_html_report.c - `tunefarm report` (tools/html_report.c, tools/svg.c).
 *
 * The page of report_fixture.h's archive (written to HDF5 and read back) must
 * be self-contained (no script, no URL it could fetch, the
 * Content-Security-Policy that forbids loading anything), escape every
 * hostile name, never write a number that is not finite into the SVG, mark
 * exactly the fixture's one regression (30% slower, 0.5% spread; the 0.2%
 * drifts are noise), draw a Pareto front with exactly the points no other
 * point dominates (counted here by brute force over the same rows), show
 * the cross-device matrix with the ratios query prints, and say where
 * nothing ran ok. The browser test of the same page is
 * tests/integration/report.sh. */
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
#include "../../tools/html_report.h"
#include "../../tools/svg.h"
#include "report_fixture.h"

static struct tf_archive *read_back(void)
{
    char path[] = "/tmp/tf-test-html.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct report_fixture f;
    struct tf_error err = {0};
    report_fixture_make(&f);
    if (tf_archive_write(f.a, path, &err) != 0)
        fail_msg("write: %s", err.message);
    report_fixture_free(&f);
    struct tf_archive *a = tf_archive_read(path, &err);
    if (a == NULL)
        fail_msg("read: %s", err.message);
    unlink(path);
    return a;
}

static char *page_of(const struct tf_archive *a, const char *kernel,
                     struct tf_html_report_stats *stats)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    tf_html_report_write(a, "results/<nightly>.h5", kernel, f, stats);
    fclose(f);
    return text;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* Points of the time-energy charts by brute force: rows the searches
 * measured (phase 0 / 1), ok, with time and energy; a point is on the front
 * if no other is at least as fast and as cheap and better in one. */
static int pareto_by_brute_force(const struct tf_archive *a)
{
    int total = 0;
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *ak = &a->kernels[k];
        for (int p = 0; p < ak->nproblems; p++) {
            char keys[8][256];
            int n = tf_report_classes(a, ak, (uint32_t)p, -1, keys, 8);
            for (int c = 0; c < n; c++) {
                for (uint64_t i = 0; i < ak->nrows; i++) {
                    const struct tf_archive_row *x = &ak->rows[i];
                    char key[256];
                    tf_device_class_key(&a->devices[x->device], key, sizeof key);
                    if (x->r.problem != (uint32_t)p || strcmp(key, keys[c]) != 0 ||
                        x->r.status != TF_STATUS_OK || x->r.phase == 2 ||
                        !isfinite(x->r.energy_j))
                        continue;
                    bool dominated = false;
                    for (uint64_t j = 0; j < ak->nrows && !dominated; j++) {
                        const struct tf_archive_row *y = &ak->rows[j];
                        tf_device_class_key(&a->devices[y->device], key, sizeof key);
                        if (j == i || y->r.problem != (uint32_t)p || strcmp(key, keys[c]) != 0 ||
                            y->r.status != TF_STATUS_OK || y->r.phase == 2 ||
                            !isfinite(y->r.energy_j))
                            continue;
                        dominated = y->r.time_median <= x->r.time_median &&
                                    y->r.energy_j <= x->r.energy_j &&
                                    (y->r.time_median < x->r.time_median ||
                                     y->r.energy_j < x->r.energy_j || j < i);
                    }
                    total += !dominated;
                }
            }
        }
    }
    return total;
}

static void test_page_is_self_contained_and_escaped(void **state)
{
    (void)state;
    struct tf_archive *a = read_back();
    struct tf_html_report_stats st;
    char *page = page_of(a, NULL, &st);
    assert_true(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    assert_non_null(strstr(page, "<meta http-equiv=\"Content-Security-Policy\" "
                                 "content=\"default-src 'none'; style-src 'unsafe-inline'\">"));
    /* nothing that runs or loads */
    assert_int_equal(count(page, "<script"), 0);
    assert_int_equal(count(page, "<img"), 0);
    assert_int_equal(count(page, " src=\""), 0); /* an attribute; the text "src=x" is escaped */
    assert_int_equal(count(page, "href=\"http"), 0);
    assert_int_equal(count(page, "url("), 0);
    assert_int_equal(count(page, "https:"), 0);
    /* the only http: is the SVG namespace, once per chart */
    assert_int_equal(count(page, "http:"), count(page, "xmlns=\"http://www.w3.org/2000/svg\""));
    assert_int_equal(count(page, "<svg "), st.charts);
    assert_int_equal(count(page, "</svg>"), st.charts);
    /* hostile text arrives as text */
    assert_non_null(strstr(page, "x&lt;h2&gt;&lt;script&gt;alert(&#39;k&#39;)&lt;\\script&gt;"
                                 "&quot;&amp;*"));
    assert_non_null(strstr(page, "&lt;img src=x onerror=alert(1)&gt;"));
    assert_non_null(strstr(page, "&lt;/td&gt;&lt;script&gt;alert(3)&lt;/script&gt;"));
    assert_non_null(strstr(page, "<title>tunefarm report: results/&lt;nightly&gt;.h5</title>"));
    /* no number that is not one */
    assert_int_equal(count(page, "nan"), 0);
    assert_int_equal(count(page, "inf\""), 0);
    assert_int_equal(count(page, "=\"-"), 0); /* no negative coordinate or size */
    free(page);
    tf_archive_destroy(a);
}

static void test_page_shows_what_the_archive_holds(void **state)
{
    (void)state;
    struct tf_archive *a = read_back();
    struct tf_html_report_stats st;
    char *page = page_of(a, NULL, &st);
    assert_int_equal(st.kernels, 2);
    assert_int_equal(st.groups, 3 * 2 + 2);
    /* the one regression: night 3 of the H100s' small problem */
    assert_int_equal(st.regressions, 1);
    assert_non_null(strstr(page, "<span class=\"bad\">run 2: 29.7% slower</span>"));
    assert_non_null(strstr(page, "REGRESSION: 29.7% slower than run 1"));
    assert_int_equal(count(page, "no regression"), 5);
    /* the Pareto fronts */
    assert_int_equal(st.pareto_points, pareto_by_brute_force(a));
    assert_true(st.pareto_points > 2 * 4); /* not one point a group */
    /* the host rows have no energy: no energy chart there (4 GPU groups + the hostile one) */
    assert_int_equal(count(page, "<title>time against energy</title>"), 5);
    /* the cross-device matrix, as query computes it */
    assert_int_equal(count(page, "<h4>Across device classes</h4>"), 2);
    assert_non_null(strstr(page, "<td class=\"fair\">2.5 ms <b>0.80x</b></td>"));
    assert_non_null(strstr(page, "<td class=\"poor\">1.5 ms <b>0.67x</b></td>"));
    assert_non_null(strstr(page, "<td class=\"good\">1 ms <b>1.00x</b></td>"));
    /* best and default */
    assert_non_null(strstr(page, "Best: <b>1 ms</b> (run 0) <span class=\"cfg\">BM=32 BN=64 "
                                 "LAYOUT=col</span>"));
    assert_non_null(strstr(page, "The best is <b>1.20x</b> faster"));
    /* the summary's "vs default": default 5 at 1.2 ms / best 7 at 1.0 ms */
    assert_non_null(strstr(page, "</td><td class=\"num\">1.20x</td>"));
    /* two H100s are one class; MI250X, EPYC and the hostile sm_80 one each */
    assert_non_null(strstr(page, "5 devices in 4 classes"));
    assert_non_null(strstr(page, "<p class=\"bad\">No configuration ran ok.</p>"));
    /* the hostile kernel names no default: its two problems say so */
    assert_int_equal(count(page, "No default configuration: the kernel file names none."), 2);
    /* failures by status */
    assert_non_null(strstr(page, "<title>compile_error: 1</title>"));
    assert_non_null(strstr(page, "<title>crashed: 12</title>"));
    /* convergence: one staircase per night of a group */
    assert_non_null(strstr(page, "run 2 (2025-11-27"));
    free(page);

    /* one kernel only */
    page = page_of(a, "gemm", &st);
    assert_int_equal(st.kernels, 1);
    assert_int_equal(st.groups, 6);
    assert_int_equal(count(page, "alert("), 2); /* the runs and devices tables still list all */
    free(page);
    tf_archive_destroy(a);
}

static void test_escape_and_svg_numbers(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tf_html_escape(f, "<a href=\"x\">&'\x01</a>");
    fflush(f);
    assert_string_equal(text, "&lt;a href=&quot;x&quot;&gt;&amp;&#39; &lt;/a&gt;");
    /* UTF-8 kept whole (2, 3 and 4 bytes); what is not UTF-8 (Latin-1, a stray
     * continuation byte, a cut sequence, an overlong '/', a surrogate) and DEL not */
    rewind(f);
    tf_html_escape(f, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\xe9|\x80|\xe2\x82|\xc0\xaf|"
                      "\xed\xa0\x80|\x7f.");
    fflush(f);
    assert_string_equal(text, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|&#xFFFD;|&#xFFFD;|"
                              "&#xFFFD;&#xFFFD;|&#xFFFD;&#xFFFD;|&#xFFFD;&#xFFFD;&#xFFFD;| .");
    rewind(f);
    /* a chart fed NaN, infinities and non-positive values on a log axis */
    struct tf_svg_chart c;
    memset(&c, 0, sizeof c);
    c.x.label = "x";
    c.y.label = "y";
    tf_svg_axis_fit(&c.x, 1e-6, 1e-2, true);
    tf_svg_axis_fit(&c.y, NAN, INFINITY, true);
    assert_true(c.x.log);
    tf_svg_begin(&c, f, 300, 200, "t");
    const double xs[] = {NAN, 1e-5, -1, 0, INFINITY, 1e-3}, ys[] = {1, NAN, 0.5, 0.5, 1, 0.7};
    tf_svg_line(&c, xs, ys, 6, true, "#000", 1, NULL);
    tf_svg_dot(&c, NAN, 1, 2, "#000", "<tip>");
    tf_svg_dot(&c, 1e-3, 0.5, 2, "#000", "<tip>");
    tf_svg_vline(&c, -5, "#000", "neg");
    tf_svg_bar(&c, 1e-4, 0, INFINITY, 1, "#000", NULL);
    tf_svg_end(&c);
    fclose(f);
    assert_null(strstr(text, "nan"));
    assert_null(strstr(text, "inf"));
    assert_null(strstr(text, "neg"));
    assert_non_null(strstr(text, "<title>&lt;tip&gt;</title></circle>"));
    assert_int_equal(count(text, "<circle"), 1);
    assert_int_equal(count(text, "<polyline"), 1);
    free(text);
}

/* A small archive whose group is known by construction: gemm's small problem
 * on one H100, three runs, and two kernels beside it that the page treats
 * apart (vecadd, no rows; "wide", parameters of 16 and 17 values).
 *   run 0: every configuration ok, config c at 1.0 + 0.1 |c - 7| ms, config 0
 *          at 2.0 ms; power 200 W for config 7, 100 W for config 0 (the same
 *          energy as 7, twice as slow: dominated), 300 W for the others;
 *   run 1: the same, 30% slower: a regression;
 *   run 2: two phases: every configuration screened 10% faster (config 3
 *          timed out there), then 7 re-measured at 1.0 ms and 4 timed out in
 *          its re-measurement. Its best (the strict 1.0 ms) is faster than
 *          run 1's: the latest run did not regress.
 * An MI250X (another class) ran config 2 at 0.98 ms and 7 at 1.0 ms in run 0:
 * the H100s' best (7) reaches 0.98 / 1.0 = 0.98 (exact in binary) of its best;
 * the default (5) failed there. */
struct small_archive {
    struct test_kernel gemm, vecadd, wide;
    struct tf_archive *a;
};

static void small_archive_make(struct small_archive *s)
{
    static const int64_t sixteen[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    static const int64_t seventeen[17] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    struct tf_error err = {0};
    memset(s, 0, sizeof *s);
    make_gemm(&s->gemm);
    make_vecadd(&s->vecadd);
    struct test_kernel *w = &s->wide;
    w->k.name = "wide";
    tk_param_int(w, "W", 1, sixteen);
    tk_param_int(w, "X", 1, seventeen);
    w->params[0].count = 16; /* test_kernel's storage holds 8; these arrays outlive it */
    w->params[0].ints = (int64_t *)sixteen;
    w->params[1].count = 17;
    w->params[1].ints = (int64_t *)seventeen;
    w->size_names[0] = "N";
    w->k.nsizes = 1;
    w->k.size_names = w->size_names;
    tk_problem(w, "p", (const int64_t[]){64});
    memset(w->k.source_hash, 'd', 64);

    s->a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H100 80GB HBM3", "GPU-0", "node1");
    struct tf_device mi = make_device("hip", "AMD Instinct MI250X", "GPU-2", "node3");
    tf_strlcpy(mi.arch, "gfx90a", sizeof mi.arch);
    tf_archive_add_device(s->a, &h0);
    tf_archive_add_device(s->a, &mi);
    for (int night = 0; night < 3; night++) {
        struct tf_archive_run run = make_run("nightly", RF_T0 + 86400.0 * night,
                                             RF_T0 + 86400.0 * night + 3600);
        tf_archive_add_run(s->a, &run);
    }
    struct tf_archive_kernel *ak = tf_archive_kernel_for(s->a, &s->gemm.k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &s->gemm.k, 0);
    for (uint32_t night = 0; night < 3; night++) {
        double when = RF_T0 + 86400.0 * night + 10;
        for (int c = 0; c < 12; c++) {
            double ms = c == 0 ? 2.0 : 1.0 + 0.1 * abs(c - 7);
            double power = c == 7 ? 200 : c == 0 ? 100 : 300;
            ms *= night == 1 ? 1.3 : night == 2 ? 0.9 : 1.0;
            int status = night == 2 && c == 3 ? TF_STATUS_TIMEOUT : TF_STATUS_OK;
            rf_row(ak, night, 0, 0, (uint64_t)c, status, ms, night == 2 ? 1 : 0, power,
                   when + c);
        }
    }
    rf_row(ak, 2, 0, 0, 7, TF_STATUS_OK, 1.0, 2, 200, RF_T0 + 2 * 86400.0 + 100);
    rf_row(ak, 2, 0, 0, 4, TF_STATUS_TIMEOUT, 0, 2, 0, RF_T0 + 2 * 86400.0 + 101);
    rf_row(ak, 0, 1, 0, 2, TF_STATUS_OK, 0.98, 0, 0, RF_T0 + 30);
    rf_row(ak, 0, 1, 0, 7, TF_STATUS_OK, 1.0, 0, 0, RF_T0 + 31);
    rf_row(ak, 0, 1, 0, 5, TF_STATUS_RUNTIME_ERROR, 0, 0, 0, RF_T0 + 32);
    assert_non_null(tf_archive_kernel_for(s->a, &s->vecadd.k, &err));
    struct tf_archive_kernel *aw = tf_archive_kernel_for(s->a, &w->k, &err);
    if (aw == NULL)
        fail_msg("wide: %s", err.message);
    tf_archive_problem_for(aw, &w->k, 0);
    rf_row(aw, 0, 0, 0, 0, TF_STATUS_OK, 1.0, 0, 0, RF_T0 + 20);
}

static void small_archive_free(struct small_archive *s)
{
    tf_archive_destroy(s->a);
    tk_free(&s->gemm);
    tk_free(&s->vecadd);
    tk_free(&s->wide);
}

static void test_page_of_a_small_archive(void **state)
{
    (void)state;
    struct small_archive s;
    small_archive_make(&s);
    struct tf_html_report_stats st;
    char *page = page_of(s.a, NULL, &st);
    /* a kernel without results is not shown; the one with results is */
    assert_int_equal(st.kernels, 2);
    assert_null(strstr(page, "Kernel vecadd"));
    assert_non_null(strstr(page, "2 devices in 2 classes, 2 kernels shown"));
    /* 0.98 of the other class's best is still "good" (the boundary is >= 0.98) */
    assert_non_null(strstr(page, "<td class=\"good\">1 ms <b>0.98x</b></td>"));
    /* 16 values are listed whole; past 16 the list is cut */
    char want[256];
    size_t len = (size_t)snprintf(want, sizeof want, "<b>W</b> ");
    for (int v = 0; v < 16; v++)
        len += (size_t)snprintf(want + len, sizeof want - len, "%s%d", v ? ", " : "", v);
    snprintf(want + len, sizeof want - len, "; <b>X</b> ");
    assert_non_null(strstr(page, want));
    assert_non_null(strstr(page, ", 15 &hellip; (17 values).</p>"));
    /* run 1 regressed, run 2 (the latest) did not: the chart marks one, the
     * summary's trend (the latest run's) says none */
    assert_int_equal(st.regressions, 1);
    assert_non_null(strstr(page, "REGRESSION: 30.0% slower than run 0"));
    assert_int_equal(count(page, "no regression"), 1);
    assert_null(strstr(page, "% slower</span>"));
    /* configurations by their latest measurement that is not a strict
     * re-measurement: config 3 timed out last (ok before), config 4's
     * re-measurement timed out but its screening was ok: 11 of 12 ok */
    assert_non_null(strstr(page, "<td class=\"num\">11 / 12</td>"));
    assert_non_null(strstr(page, "<title>timeout: 1</title>"));
    /* the energy chart: the searches' ok rows with energy (no strict row),
     * a front as brute force finds it (config 0's tie in energy is behind 7),
     * energies per launch (the column holds 20 launches') */
    int ok = 0;
    const struct tf_archive_kernel *ak = &s.a->kernels[0];
    for (uint64_t r = 0; r < ak->nrows; r++)
        ok += ak->rows[r].r.status == TF_STATUS_OK && ak->rows[r].r.phase != 2 &&
              isfinite(ak->rows[r].r.energy_j);
    assert_int_equal(ok, 35);
    snprintf(want, sizeof want, "Time against energy of the %d ok results", ok);
    assert_non_null(strstr(page, want));
    assert_int_equal(st.pareto_points, pareto_by_brute_force(s.a));
    assert_int_equal(st.pareto_points, 1);
    assert_non_null(strstr(page, "<title>900 us, 0.009 J: BM=32 BN=64 LAYOUT=col</title>"));
    /* the histograms: ok times of the searches (no strict row), 35 on the H100s,
     * 2 on the MI250X and wide's 1, every one in a bar (the slowest too) */
    assert_non_null(strstr(page, "Distribution of the 35 ok times"));
    int in_bars = 0;
    for (const char *p = strstr(page, " results</title>"); p; p = strstr(p + 1, " results</title>")) {
        const char *q = p;
        while (q > page && q[-1] >= '0' && q[-1] <= '9')
            q--;
        in_bars += atoi(q);
    }
    assert_int_equal(in_bars, 35 + 2 + 1);
    /* the default failed on the MI250X */
    assert_non_null(strstr(page, "The default configuration failed here: "
                                 "<span class=\"bad\">runtime_error</span>."));
    /* a staircase ends at the last evaluation (12), not at the last improvement
     * (config 7, the 8th): run 0's line ends level, after its last step down */
    const char *tip = strstr(page, "): 12 evaluations</title></polyline>");
    assert_non_null(tip);
    const char *pts = tip;
    while (pts > page && strncmp(pts, "points=\"", 8) != 0)
        pts--;
    double px[256], py[256];
    int np = 0;
    for (const char *q = pts + 8; *q != '"' && np < 256; np++) {
        char *end;
        px[np] = strtod(q, &end);
        assert_int_equal(*end, ',');
        py[np] = strtod(end + 1, &end);
        q = end;
        while (*q == ' ')
            q++;
    }
    assert_true(np >= 3);
    int prev = np - 2;
    while (prev > 0 && px[prev] == px[np - 1])
        prev--;
    assert_true(px[prev] < px[np - 1]);
    assert_true(py[prev] == py[np - 1]);
    free(page);
    small_archive_free(&s);
}

/* gemm on one H100. Problem small: config 7 at 1.0 ms in each of 7 runs, one
 * more than a convergence chart draws (the latest 6). Problem large, one
 * two-phase run: the default (5) screened at 0.95 ms and was not re-measured;
 * 7 screened at 0.9 ms and re-measured strictly at 1.0 ms, which decides the
 * best: the best is then slower than the default, and the page says so. */
static void test_seven_runs_and_a_default_faster_than_the_best(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    make_gemm(&gemm);
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H100 80GB HBM3", "GPU-0", "node1");
    tf_archive_add_device(a, &h0);
    for (int night = 0; night < 7; night++) {
        struct tf_archive_run run = make_run("nightly", RF_T0 + 86400.0 * night,
                                             RF_T0 + 86400.0 * night + 3600);
        tf_archive_add_run(a, &run);
    }
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm.k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &gemm.k, 0);
    tf_archive_problem_for(ak, &gemm.k, 1);
    for (uint32_t night = 0; night < 7; night++)
        rf_row(ak, night, 0, 0, 7, TF_STATUS_OK, 1.0, 0, 0, RF_T0 + 86400.0 * night + 10);
    const double t6 = RF_T0 + 6 * 86400.0 + 100;
    rf_row(ak, 6, 0, 1, 5, TF_STATUS_OK, 0.95, 1, 0, t6);
    rf_row(ak, 6, 0, 1, 7, TF_STATUS_OK, 0.9, 1, 0, t6 + 1);
    rf_row(ak, 6, 0, 1, 7, TF_STATUS_OK, 1.0, 2, 0, t6 + 2);
    struct tf_html_report_stats st;
    char *page = page_of(a, NULL, &st);
    /* both convergence charts of the small problem: runs 1 to 6 in the legend, not 0
     * (run 6 is in the large problem's two as well) */
    assert_int_equal(count(page, "fill=\"#222\">run 6</text>"), 2 + 2);
    assert_int_equal(count(page, "fill=\"#222\">run 1</text>"), 2);
    assert_int_equal(count(page, "fill=\"#222\">run 0</text>"), 0);
    assert_int_equal(count(page, "the last runs of this group"), 2);
    /* 1.0 / 0.95 = 1.053 */
    assert_non_null(strstr(page, "The best is <b>1.05x</b> slower than the problem's default"));
    free(page);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

static char *escaped(const char *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    tf_html_escape(f, s);
    fclose(f);
    return text;
}

/* UTF-8 at the edges of each length: the first and last code points kept,
 * what is one past them (an overlong 3-byte form, past U+10FFFF, a lead byte
 * over 0xF4) replaced byte by byte; tab and newline stay, as the header says. */
static void test_escape_utf8_edges(void **state)
{
    (void)state;
    static const struct { const char *in, *out; } cases[] = {
        {"\xe0\xa0\x80|\xf0\x90\x80\x80|\xf4\x8f\xbf\xbf",
         "\xe0\xa0\x80|\xf0\x90\x80\x80|\xf4\x8f\xbf\xbf"}, /* U+0800, U+10000, U+10FFFF */
        {"\xe0\x80\xaf", "&#xFFFD;&#xFFFD;&#xFFFD;"},             /* '/' in 3 bytes */
        {"\xf4\x90\x80\x80", "&#xFFFD;&#xFFFD;&#xFFFD;&#xFFFD;"}, /* U+110000 */
        {"\xf8\x90\x80\x80", "&#xFFFD;&#xFFFD;&#xFFFD;&#xFFFD;"}, /* 0xF8 leads nothing */
        {"a\tb\nc", "a\tb\nc"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = escaped(cases[i].in);
        assert_string_equal(got, cases[i].out);
        free(got);
    }
}

/* Attribute `name` of the first `tag` in text (NAN if none). */
static double attr(const char *text, const char *tag, const char *name)
{
    const char *p = strstr(text, tag);
    char key[16];
    snprintf(key, sizeof key, " %s=\"", name);
    p = p ? strstr(p, key) : NULL;
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

/* The tick labels of a chart with one visible (x) axis: the texts drawn at
 * the ticks ("middle" anchored, grey), into labels[]; returns how many. */
static int tick_labels(const char *text, char labels[][32], int max)
{
    int n = 0;
    const char *mark = "text-anchor=\"middle\" fill=\"#444\">";
    for (const char *p = strstr(text, mark); p && n < max; p = strstr(p + 1, mark)) {
        const char *b = p + strlen(mark), *e = strstr(b, "</text>");
        assert_non_null(e);
        snprintf(labels[n++], 32, "%.*s", (int)(e - b), b);
    }
    return n;
}

/* A chart of width 300 (plot x 72..288) and height 200 (plot y 14..160) over
 * fixed axes, into a memory stream. */
static FILE *chart_open(struct tf_svg_chart *c, char **text, size_t *len, double xlo,
                        double xhi, bool integer)
{
    memset(c, 0, sizeof *c);
    c->x.lo = xlo;
    c->x.hi = xhi;
    c->x.integer = integer;
    c->y.lo = 0;
    c->y.hi = 1;
    c->y.hidden = true;
    FILE *f = open_memstream(text, len);
    assert_non_null(f);
    tf_svg_begin(c, f, 300, 200, "t");
    return f;
}

static void test_svg_axes(void **state)
{
    (void)state;
    /* the palette of 8 cycles */
    assert_string_equal(tf_svg_colour(7), "#000000");
    assert_string_equal(tf_svg_colour(8), tf_svg_colour(0));
    /* log only past a ratio of 20, never from 0 */
    struct tf_svg_axis ax;
    memset(&ax, 0, sizeof ax);
    tf_svg_axis_fit(&ax, 1, 20, true);
    assert_false(ax.log);
    tf_svg_axis_fit(&ax, 1, 21, true);
    assert_true(ax.log);
    tf_svg_axis_fit(&ax, 0, 100, true);
    assert_false(ax.log);
    assert_true(isfinite(ax.lo) && isfinite(ax.hi) && ax.lo < 0 && ax.hi > 100);
    /* one negative value: a band around it, in order */
    tf_svg_axis_fit(&ax, -5, -5, false);
    assert_true(ax.lo < -5 && ax.hi > -5);

    char *text = NULL;
    size_t len = 0;
    struct tf_svg_chart c;
    /* an integer axis of 0..2 has ticks at 0, 1 and 2 only (a linear one would add halves) */
    FILE *f = chart_open(&c, &text, &len, 0, 2, true);
    tf_svg_end(&c);
    fclose(f);
    char labels[64][32];
    int n = tick_labels(text, labels, 64);
    assert_int_equal(n, 3);
    assert_string_equal(labels[0], "0");
    assert_string_equal(labels[1], "1");
    assert_string_equal(labels[2], "2");
    free(text);
    /* ticks 5e-5 apart near 1: the labels get the digits that tell them apart */
    f = chart_open(&c, &text, &len, 1.0001, 1.0003, false);
    tf_svg_end(&c);
    fclose(f);
    n = tick_labels(text, labels, 64);
    assert_true(n >= 3);
    for (int i = 1; i < n; i++)
        if (strcmp(labels[i], labels[i - 1]) == 0)
            fail_msg("ticks %d and %d both read '%s'", i - 1, i, labels[i]);
    free(text);
}

static void test_svg_marks(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    struct tf_svg_chart c;
    /* an outlier is clamped to the plot's right edge (x = 300 - 12) */
    assert_true(fabs(tf_svg_px(&(struct tf_svg_chart){.width = 300, .left = 72, .right = 12,
                                                       .x = {.lo = 0, .hi = 1}},
                               1e9) - 288) < 1e-9);
    /* a staircase holds each value until the next x: (0,0) (1,0) (1,1), three points */
    FILE *f = chart_open(&c, &text, &len, 0, 1, false);
    tf_svg_line(&c, (const double[]){0, 1}, (const double[]){0, 1}, 2, true, "#000", 1, NULL);
    tf_svg_end(&c);
    fclose(f);
    assert_non_null(strstr(text, "points=\"72.0,160.0 288.0,160.0 288.0,14.0\""));
    free(text);
    /* a bar from y 0.25 to 0.75 starts at the pixel of 0.75 (y grows down) and is
     * half the plot (146 / 2) high */
    f = chart_open(&c, &text, &len, 0, 1, false);
    tf_svg_bar(&c, 0, 0.25, 1, 0.75, "#000", NULL);
    /* a dot whose y is not a number is not drawn */
    tf_svg_dot(&c, 0.5, NAN, 2, "#000", NULL);
    tf_svg_end(&c);
    fclose(f);
    const char *bar = strstr(text, "<rect x=\"72.0\"");
    bar = bar ? strstr(bar + 1, "<rect ") : NULL; /* the first rect is the frame */
    assert_non_null(bar);
    assert_true(fabs(attr(bar, "<rect", "y") - (160 - 0.75 * 146)) < 0.06);
    assert_true(fabs(attr(bar, "<rect", "height") - 73) < 0.06);
    assert_null(strstr(text, "<circle"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page_is_self_contained_and_escaped),
        cmocka_unit_test(test_page_shows_what_the_archive_holds),
        cmocka_unit_test(test_escape_and_svg_numbers),
        cmocka_unit_test(test_page_of_a_small_archive),
        cmocka_unit_test(test_seven_runs_and_a_default_faster_than_the_best),
        cmocka_unit_test(test_escape_utf8_edges),
        cmocka_unit_test(test_svg_axes),
        cmocka_unit_test(test_svg_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
