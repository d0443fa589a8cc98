/* html_report.c - `tunefarm report`: an archive as one HTML page of charts.
 *
 * The page is self-contained: inline SVG (tools/svg.c) and one <style>, no
 * script, no font, no image, and a Content-Security-Policy of
 * default-src 'none', so it opens the same from a mail attachment, a CI
 * artefact or a laptop without network, and nothing in it can fetch or run
 * anything. Every text from the archive (kernel, problem, parameter and device
 * names, enum values, job names) is escaped: they are user strings.
 *
 * Per kernel, problem and device class (a group; the rows of the class's
 * devices, every run) the page shows:
 *   - the distribution of the ok times the search measured (screening and
 *     single-phase rows), on a log axis when they span more than 20x;
 *   - best-so-far against evaluations and against time since the run
 *     started, one staircase per run (the last six runs), in the order the
 *     results were measured (their timestamps; the archive's row order on
 *     ties), so how each search converged can be compared night to night;
 *   - the best against the problem's default configuration;
 *   - the trend over runs: each run's best (tf_report_pick of that run), a
 *     regression marked where a run's best is slower than the previous
 *     run's beyond the noise, by the rule of `tunefarm diff` (schema/diff.md):
 *     |tB / tA - 1| > max(3 sqrt(sA^2 + sB^2), 2%), s = the smaller of the
 *     row's time_rsd and (median - min) / median;
 *   - time against energy with its Pareto front (no other point is both
 *     faster and cheaper), where rows have energy_j (the rows the searches
 *     measured, as in the distribution);
 *   - failures by status: configurations by the status of their latest
 *     measurement.
 * and per kernel and problem measured on several classes, the cross-device
 * matrix: each class's best configuration timed on every class, as
 * `tunefarm query` prints it. The best, the default's time and a
 * configuration's time on a class are tf_report_pick / tf_report_config_time
 * (coordinator/report.c), so the page and `query` cannot disagree.
 *
 * Each group's rows are copied into a view of the kernel that holds only
 * them, so the per-run picks of the trend cost the group's rows, not the
 * archive's. */
#include "html_report.h"
#include "../coordinator/journal.h"
#include "../schema/version.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../coordinator/report.h"
#include "../schema/diff.h"
#include "outfile.h"
#include "svg.h"


#define CONVERGENCE_RUNS 6     /* staircases per convergence chart: the latest runs */
#define ENERGY_POINTS 4000     /* dots per energy chart beyond the front (evenly thinned) */
#define CHART_W 360
#define CHART_H 250

const char tf_html_report_usage[] =
    "usage: tunefarm report ARCHIVE [-o FILE.html] [--kernel K]\n"
    "\n"
    "Write one self-contained HTML page (inline SVG charts, no script, nothing\n"
    "loaded from the network) about an archive and the results still in its\n"
    "journal. Per kernel, problem and device\n"
    "class: the distribution of measured times; best-so-far against\n"
    "evaluations and against time, per run; the best against the default\n"
    "configuration; the best of each run, regressions marked (slower than the\n"
    "run before beyond the noise, the rule of `tunefarm diff`); time against\n"
    "energy with its Pareto front where energy was measured; configurations by\n"
    "status. Per kernel and problem measured on several device classes: each\n"
    "class's best configuration timed on the others. tools/report.md says what\n"
    "each chart shows.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE  write FILE (whole or not at all; default: stdout)\n"
    "  -k, --kernel K     only kernel K\n"
    "  -h, --help         this text\n"
    "\n"
    "exit codes: 0 written; 1 the output could not be written; 2 bad arguments,\n"
    "unreadable archive or unknown kernel.\n";

struct group {
    int p;                           /* problem index */
    char key[256];                   /* device class */
    const struct tf_device *dev;     /* one of its devices */
    int ndevices;                    /* devices of the class that have rows */
    struct tf_archive_kernel view;   /* the kernel, with only this group's rows */
    struct tf_report_pick pick;      /* over every run */
    uint64_t counts[TF_STATUS_COUNT], configs;
    int nruns;                       /* runs that measured the group */
    int last_regression;             /* the latest run's best slower than the one before: its
                                        run, else -1 */
    double last_change;              /* that run's best / the one before */
};

struct page {
    const struct tf_archive *a;
    FILE *out;
    FILE *notes;                     /* sentences for what has no chart, after the charts */
    struct tf_html_report_stats *stats;
};

/* ---- numbers and text ---- */

/* Seconds with a unit and `digits` significant digits ("250 us"). */
static void fmt_seconds_digits(double s, int digits, char *out, int cap)
{
    static const struct {
        double scale;
        const char *unit;
    } units[] = {{1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1, "s"}};
    int u = 0;
    while (u < 3 && fabs(s) >= units[u + 1].scale)
        u++;
    if (s == 0)
        snprintf(out, (size_t)cap, "0");
    else
        snprintf(out, (size_t)cap, "%.*g %s", fabs(s / units[u].scale) >= 1000 ? 12 : digits,
                 s / units[u].scale, units[u].unit); /* 2000 s, not 2e+03 s */
}

/* Seconds with three significant digits, for text. */
static void fmt_seconds(double s, char *out, int cap)
{
    fmt_seconds_digits(s, 3, out, cap);
}

static void fmt_joules(double j, int digits, char *out, int cap)
{
    snprintf(out, (size_t)cap, "%.*g J", fabs(j) >= 1000 ? 12 : digits, j);
}

static void fmt_count(double v, int digits, char *out, int cap)
{
    (void)digits;
    snprintf(out, (size_t)cap, "%.0f", v);
}

static void fmt_run(double v, int digits, char *out, int cap)
{
    (void)digits;
    snprintf(out, (size_t)cap, "run %.0f", v);
}

static void date_text(double t, char *out, size_t cap)
{
    time_t s = tf_archive_time_ok(t) ? (time_t)t : 0;
    struct tm tm;
    if (s > 0 && localtime_r(&s, &tm))
        strftime(out, cap, "%Y-%m-%d %H:%M", &tm);
    else
        tf_strlcpy(out, "-", cap);
}

/* The model name in a class key "backend/arch/name" (the name may hold '/'). */
static const char *class_name(const char *key)
{
    const char *s = strchr(key, '/');
    s = s ? strchr(s + 1, '/') : NULL;
    return s ? s + 1 : key;
}

/* The band a change from `then` to `now` must exceed to be beyond the noise:
 * `tunefarm diff`'s rule with its defaults (schema/diff.md), so the page and
 * the nightly diff call the same changes regressions. */
static double noise_band(const struct tf_result *then, const struct tf_result *now)
{
    struct tf_diff_options o;
    tf_diff_defaults(&o);
    double band = 0;
    tf_diff_beyond_noise(then->time_median,
                         tf_diff_spread(then->time_median, then->time_min, then->time_rsd),
                         now->time_median,
                         tf_diff_spread(now->time_median, now->time_min, now->time_rsd), &o, &band);
    return band;
}

/* ---- groups ---- */

static int row_order(const void *x, const void *y)
{
    const struct tf_archive_row *a = *(const struct tf_archive_row *const *)x;
    const struct tf_archive_row *b = *(const struct tf_archive_row *const *)y;
    if (a->run != b->run)
        return a->run < b->run ? -1 : 1;
    double ta = isfinite(a->r.timestamp) ? a->r.timestamp : 0;
    double tb = isfinite(b->r.timestamp) ? b->r.timestamp : 0;
    if (ta != tb)
        return ta < tb ? -1 : 1;
    return a < b ? -1 : a > b; /* the archive's order: rows are appended as they come */
}

struct config_status {
    uint64_t config;
    uint32_t run;
    uint64_t index;
    uint8_t status;
};

static int config_status_order(const void *x, const void *y)
{
    const struct config_status *a = x, *b = y;
    if (a->config != b->config)
        return a->config < b->config ? -1 : 1;
    if (a->run != b->run)
        return a->run < b->run ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Build group (problem p, class key) of kernel ak: its rows, pick, counts. */
static void group_make(const struct tf_archive *a, const struct tf_archive_kernel *ak, int p,
                       const char *key, struct group *g)
{
    memset(g, 0, sizeof *g);
    g->p = p;
    g->last_regression = -1;
    tf_strlcpy(g->key, key, sizeof g->key);
    bool *in = tf_xcalloc((size_t)a->ndevices + 1, sizeof *in);
    bool *used = tf_xcalloc((size_t)a->ndevices + 1, sizeof *used);
    for (int d = 0; d < a->ndevices; d++) {
        char k[256];
        tf_device_class_key(&a->devices[d], k, sizeof k);
        in[d] = strcmp(k, key) == 0;
    }
    g->view = *ak;
    g->view.nrows = 0;
    g->view.rows = NULL;
    uint64_t n = 0;
    for (uint64_t r = 0; r < ak->nrows; r++) {
        const struct tf_archive_row *row = &ak->rows[r];
        n += row->r.problem == (uint32_t)p && row->device < (uint32_t)a->ndevices &&
             in[row->device];
    }
    g->view.rows = tf_xmalloc((n ? n : 1) * sizeof *g->view.rows);
    g->view.cap = n;
    for (uint64_t r = 0; r < ak->nrows; r++) {
        const struct tf_archive_row *row = &ak->rows[r];
        if (row->r.problem == (uint32_t)p && row->device < (uint32_t)a->ndevices &&
            in[row->device]) {
            g->view.rows[g->view.nrows++] = *row;
            used[row->device] = true;
        }
    }
    for (int d = 0; d < a->ndevices; d++)
        g->ndevices += used[d];
    free(in);
    free(used);
    tf_report_pick(a, &g->view, (uint32_t)p, -1, key, &g->pick);
    g->dev = g->pick.device;

    /* configurations by the status of their latest measurement (screening or
     * only phase: a strict re-measurement is not another configuration) */
    struct config_status *v = tf_xmalloc((g->view.nrows ? g->view.nrows : 1) * sizeof *v);
    uint64_t nv = 0;
    for (uint64_t r = 0; r < g->view.nrows; r++) {
        const struct tf_archive_row *row = &g->view.rows[r];
        if (row->r.phase != 2)
            v[nv++] = (struct config_status){row->r.config, row->run, r, row->r.status};
    }
    qsort(v, nv, sizeof *v, config_status_order);
    for (uint64_t i = 0; i < nv; i++) {
        if (i + 1 < nv && v[i + 1].config == v[i].config)
            continue;
        g->configs++;
        if (v[i].status < TF_STATUS_COUNT)
            g->counts[v[i].status]++;
    }
    free(v);
}

static void group_free(struct group *g)
{
    free(g->view.rows);
    g->view.rows = NULL;
}

/* The runs that measured group g, in order of their start; returns how many. */
static int group_runs(const struct tf_archive *a, const struct group *g, int *runs)
{
    bool *seen = tf_xcalloc((size_t)a->nruns + 1, sizeof *seen);
    for (uint64_t r = 0; r < g->view.nrows; r++)
        if (g->view.rows[r].run < (uint32_t)a->nruns)
            seen[g->view.rows[r].run] = true;
    int n = 0;
    for (int r = 0; r < a->nruns; r++)
        if (seen[r])
            runs[n++] = r;
    free(seen);
    for (int i = 1; i < n; i++) /* insertion sort by start, stable */
        for (int j = i; j > 0 && a->runs[runs[j]].start < a->runs[runs[j - 1]].start; j--) {
            int t = runs[j];
            runs[j] = runs[j - 1];
            runs[j - 1] = t;
        }
    return n;
}

/* ---- charts ---- */

static void figure_begin(struct page *pg, struct tf_svg_chart *c, const char *title,
                         struct tf_svg_axis x, struct tf_svg_axis y)
{
    fputs("<figure>", pg->out);
    memset(c, 0, sizeof *c);
    c->x = x;
    c->y = y;
    tf_svg_begin(c, pg->out, CHART_W, CHART_H, title);
    pg->stats->charts++;
}

static void figure_end(struct page *pg, struct tf_svg_chart *c, const char *caption)
{
    tf_svg_end(c);
    fputs("<figcaption>", pg->out);
    fputs(caption, pg->out); /* our own text, may hold markup */
    fputs("</figcaption></figure>\n", pg->out);
}

static void chart_histogram(struct page *pg, const struct group *g)
{
    const struct tf_archive_kernel *v = &g->view;
    double lo = INFINITY, hi = -INFINITY;
    uint64_t n = 0;
    for (uint64_t r = 0; r < v->nrows; r++) {
        const struct tf_result *x = &v->rows[r].r;
        if (x->status != TF_STATUS_OK || x->phase == 2 || !(x->time_median > 0) ||
            !isfinite(x->time_median))
            continue;
        lo = fmin(lo, x->time_median);
        hi = fmax(hi, x->time_median);
        n++;
    }
    if (n == 0)
        return;
    struct tf_svg_axis xa = {.label = "median time per launch", .format = fmt_seconds_digits};
    struct tf_svg_axis ya = {.label = "results", .format = fmt_count, .integer = true};
    tf_svg_axis_fit(&xa, lo, hi, true);
    int nb = n < 16 ? 8 : n < 200 ? 16 : 30;
    uint64_t bins[30] = {0}, most = 0;
    double l0 = xa.log ? log10(lo) : lo, l1 = xa.log ? log10(hi) : hi;
    double w = (l1 - l0) / nb;
    for (uint64_t r = 0; r < v->nrows; r++) {
        const struct tf_result *x = &v->rows[r].r;
        if (x->status != TF_STATUS_OK || x->phase == 2 || !(x->time_median > 0) ||
            !isfinite(x->time_median))
            continue;
        double t = xa.log ? log10(x->time_median) : x->time_median;
        int b = w > 0 ? (int)((t - l0) / w) : 0;
        b = b < 0 ? 0 : b >= nb ? nb - 1 : b;
        if (++bins[b] > most)
            most = bins[b];
    }
    tf_svg_axis_fit(&ya, 0, (double)most, false);
    ya.lo = 0;
    if (w == 0) /* one value: one bar around it */
        w = xa.log ? 0.02 : (xa.hi - xa.lo) / 20;
    struct tf_svg_chart c;
    figure_begin(pg, &c, "distribution of measured times", xa, ya);
    for (int b = 0; b < nb; b++) {
        if (bins[b] == 0)
            continue;
        double e0 = l0 + w * b, e1 = l0 + w * (b + 1);
        if (xa.log) {
            e0 = pow(10, e0);
            e1 = pow(10, e1);
        }
        char tip[96], t0[24], t1[24];
        fmt_seconds(e0, t0, sizeof t0);
        fmt_seconds(e1, t1, sizeof t1);
        snprintf(tip, sizeof tip, "%s to %s: %" PRIu64 " results", t0, t1, bins[b]);
        tf_svg_bar(&c, e0, 0, e1, (double)bins[b], "#56B4E9", tip);
    }
    if (g->pick.best)
        tf_svg_vline(&c, g->pick.best->r.time_median, "#009E73", "best");
    if (isfinite(g->pick.default_time))
        tf_svg_vline(&c, g->pick.default_time, "#D55E00", "default");
    char cap[256];
    snprintf(cap, sizeof cap,
             "Distribution of the %" PRIu64 " ok times the searches measured (every run)%s. "
             "Dashed: the best%s and the default.",
             n, xa.log ? ", log scale" : "",
             g->pick.best && g->pick.best->r.phase == 2 ? " (a strict re-measurement)" : "");
    figure_end(pg, &c, cap);
}

/* Best-so-far per run against evaluations (by_time false) or seconds since
 * the run started (by_time true). */
static void chart_convergence(struct page *pg, const struct group *g, bool by_time)
{
    const struct tf_archive *a = pg->a;
    const struct tf_archive_kernel *v = &g->view;
    int *runs = tf_xmalloc(((size_t)a->nruns + 1) * sizeof *runs);
    int nr = group_runs(a, g, runs), first = nr > CONVERGENCE_RUNS ? nr - CONVERGENCE_RUNS : 0;
    const struct tf_archive_row **rows = tf_xmalloc((v->nrows + 1) * sizeof *rows);
    uint64_t n = 0;
    for (uint64_t r = 0; r < v->nrows; r++)
        if (v->rows[r].r.phase != 2)
            rows[n++] = &v->rows[r];
    qsort(rows, n, sizeof *rows, row_order);
    double *xs = tf_xmalloc((n + 1) * sizeof *xs), *ys = tf_xmalloc((n + 1) * sizeof *ys);
    double xmax = 1, ylo = INFINITY, yhi = -INFINITY;
    /* pass 0 sizes the axes, pass 1 draws */
    struct tf_svg_chart c;
    int drawn = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            if (!(ylo <= yhi))
                break;
            struct tf_svg_axis xa = {.label = by_time ? "time since the run started"
                                                      : "configurations evaluated",
                                     .format = by_time ? fmt_seconds_digits : fmt_count,
                                     .integer = !by_time};
            struct tf_svg_axis ya = {.label = "best time so far", .format = fmt_seconds_digits};
            tf_svg_axis_fit(&xa, by_time ? 0 : 1, xmax, !by_time); /* log past 20 */
            tf_svg_axis_fit(&ya, ylo, yhi, true);
            figure_begin(pg, &c, by_time ? "best so far against time" : "best so far against "
                                                                        "evaluations",
                         xa, ya);
        }
        for (int i = first; i < nr; i++) {
            const struct tf_archive_run *run = &a->runs[runs[i]];
            double t0 = INFINITY, best = NAN;
            int m = 0;
            for (uint64_t r = 0; r < n; r++)
                if (rows[r]->run == (uint32_t)runs[i] && isfinite(rows[r]->r.timestamp))
                    t0 = fmin(t0, rows[r]->r.timestamp);
            if (run->start > 0 && run->start < t0)
                t0 = run->start;
            for (uint64_t r = 0; r < n; r++) {
                const struct tf_archive_row *row = rows[r];
                if (row->run != (uint32_t)runs[i])
                    continue;
                if (row->r.status == TF_STATUS_OK && isfinite(row->r.time_median) &&
                    !(best <= row->r.time_median))
                    best = row->r.time_median;
                double x = by_time ? row->r.timestamp - t0 : (double)(m + 1);
                if (by_time && !isfinite(x))
                    continue;
                xs[m] = x;
                ys[m] = best;
                m++;
            }
            /* a staircase needs only its corners: where the best changes, and the end */
            int kept = 0;
            for (int j = 0; j < m; j++) {
                bool same = j > 0 && ((isnan(ys[j]) && isnan(ys[j - 1])) || ys[j] == ys[j - 1]);
                if (same && j < m - 1)
                    continue;
                xs[kept] = xs[j];
                ys[kept] = ys[j];
                kept++;
            }
            const int evaluations = m;
            m = kept;
            if (pass == 0) {
                for (int j = 0; j < m; j++)
                    if (isfinite(ys[j]) && ys[j] > 0) {
                        xmax = fmax(xmax, xs[j]);
                        ylo = fmin(ylo, ys[j]);
                        yhi = fmax(yhi, ys[j]);
                    }
                continue;
            }
            const char *colour = tf_svg_colour(i - first);
            char tip[160], when[32];
            date_text(run->start, when, sizeof when);
            snprintf(tip, sizeof tip, "run %d (%s): %d evaluations", runs[i], when, evaluations);
            tf_svg_line(&c, xs, ys, m, true, colour, 1.8, tip);
            if (m > 0)
                tf_svg_dot(&c, xs[m - 1], ys[m - 1], 3, colour, tip);
            char legend[64];
            snprintf(legend, sizeof legend, "run %d", runs[i]);
            tf_svg_legend(&c, i - first, colour, legend);
            drawn++;
        }
    }
    if (drawn) {
        char cap[320];
        snprintf(cap, sizeof cap,
                 "How the search converged: the best ok time so far, in the order results were "
                 "measured, against %s; %s%s.",
                 by_time ? "seconds since the run started (a replay's clock is simulated)"
                         : "the number of configurations evaluated (failures count)",
                 nr > CONVERGENCE_RUNS ? "the last runs of " : "every run, ",
                 nr > CONVERGENCE_RUNS ? "this group" : "one line each");
        figure_end(pg, &c, cap);
    }
    free(xs);
    free(ys);
    free(rows);
    free(runs);
}

/* Two horizontal bars, default and best, or a sentence where there is no default. */
static void chart_default(struct page *pg, const struct group *g)
{
    const struct tf_archive_problem *pr = &g->view.problems[g->p];
    if (!pr->has_default) {
        fputs("<p class=\"note\">No default configuration: the kernel file names none.</p>\n",
              pg->notes);
        return;
    }
    if (!isfinite(g->pick.default_time) || g->pick.best == NULL) {
        const struct tf_archive_row *row = NULL;
        tf_report_config_time(pg->a, &g->view, (uint32_t)g->p, -1, g->key, pr->default_index,
                              &row);
        fputs("<p class=\"note\">The default configuration ", pg->notes);
        if (row)
            fprintf(pg->notes, "failed here: <span class=\"bad\">%s</span>.</p>\n",
                    tf_status_name(row->r.status));
        else
            fputs("was not measured here (the search did not propose it).</p>\n", pg->notes);
        return;
    }
    double best = g->pick.best->r.time_median, def = g->pick.default_time;
    struct tf_svg_axis xa = {.label = "median time per launch", .format = fmt_seconds_digits};
    struct tf_svg_axis ya = {.hidden = true};
    tf_svg_axis_fit(&xa, 0, fmax(best, def), false);
    xa.lo = 0;
    ya.lo = 0;
    ya.hi = 2;
    struct tf_svg_chart c;
    char t[32], text[96];
    figure_begin(pg, &c, "best against the default configuration", xa, ya);
    tf_svg_bar(&c, 0, 1.2, def, 1.8, "#D55E00", "default");
    tf_svg_bar(&c, 0, 0.2, best, 0.8, "#009E73", "best");
    const double values[2] = {def, best}, rows[2] = {1.5, 0.5};
    const char *names[2] = {"default", "best"};
    for (int i = 0; i < 2; i++) {
        /* inside a long bar, after a short one */
        bool inside = tf_svg_px(&c, values[i]) - tf_svg_px(&c, 0) > 120;
        fmt_seconds(values[i], t, sizeof t);
        snprintf(text, sizeof text, "%s: %s", names[i], t);
        tf_svg_text(&c, inside ? tf_svg_px(&c, 0) + 5 : tf_svg_px(&c, values[i]) + 5,
                    tf_svg_py(&c, rows[i]) + 4, "start", inside ? "#fff" : "#222", text);
    }
    char cap[160];
    snprintf(cap, sizeof cap, "The best is <b>%.2fx</b> %s than the problem's default "
                              "configuration.",
             def >= best ? def / best : best / def, def >= best ? "faster" : "slower");
    figure_end(pg, &c, cap);
}

/* Each run's best; regressions marked. */
static void chart_trend(struct page *pg, struct group *g)
{
    const struct tf_archive *a = pg->a;
    int *runs = tf_xmalloc(((size_t)a->nruns + 1) * sizeof *runs);
    int nr = group_runs(a, g, runs);
    g->nruns = nr;
    double *xs = tf_xmalloc(((size_t)nr + 1) * sizeof *xs);
    double *ys = tf_xmalloc(((size_t)nr + 1) * sizeof *ys);
    const struct tf_archive_row **best = tf_xcalloc((size_t)nr + 1, sizeof *best);
    double lo = INFINITY, hi = -INFINITY;
    int m = 0;
    for (int i = 0; i < nr; i++) {
        struct tf_report_pick pick;
        tf_report_pick(a, &g->view, (uint32_t)g->p, runs[i], g->key, &pick);
        if (pick.best == NULL)
            continue;
        best[m] = pick.best;
        xs[m] = runs[i];
        ys[m] = pick.best->r.time_median;
        lo = fmin(lo, ys[m]);
        hi = fmax(hi, ys[m]);
        m++;
    }
    if (nr < 2 || m == 0) {
        fprintf(pg->notes, "<p class=\"note\">Trend over runs: %s.</p>\n",
                nr < 2 ? "one run measured this group" : "no run has an ok result");
        goto done;
    }
    struct tf_svg_axis xa = {.label = "run (in order of start)", .format = fmt_run,
                             .integer = true};
    struct tf_svg_axis ya = {.label = "best time of the run", .format = fmt_seconds_digits};
    double x0 = xs[0], x1 = xs[m - 1];
    for (int i = 0; i < m; i++) {
        x0 = fmin(x0, xs[i]);
        x1 = fmax(x1, xs[i]);
    }
    tf_svg_axis_fit(&xa, x0, x1, false);
    tf_svg_axis_fit(&ya, lo, hi, true);
    struct tf_svg_chart c;
    figure_begin(pg, &c, "best of each run", xa, ya);
    tf_svg_line(&c, xs, ys, m, false, "#0072B2", 1.5, NULL);
    int regressions = 0;
    for (int i = 0; i < m; i++) {
        char tip[200], t[32], when[32];
        fmt_seconds(ys[i], t, sizeof t);
        date_text(a->runs[(int)xs[i]].start, when, sizeof when);
        bool regressed = false;
        double change = NAN, band = NAN;
        if (i > 0) {
            change = ys[i] / ys[i - 1];
            band = noise_band(&best[i - 1]->r, &best[i]->r);
            regressed = change - 1 > band;
        }
        if (regressed)
            snprintf(tip, sizeof tip, "run %.0f (%s): %s, REGRESSION: %.1f%% slower than run "
                                      "%.0f (noise band %.1f%%)",
                     xs[i], when, t, (change - 1) * 100, xs[i - 1], band * 100);
        else
            snprintf(tip, sizeof tip, "run %.0f (%s): %s", xs[i], when, t);
        tf_svg_dot(&c, xs[i], ys[i], regressed ? 6 : 3.5, regressed ? "#D00000" : "#0072B2",
                   tip);
        if (regressed) {
            char label[32];
            snprintf(label, sizeof label, "+%.0f%%", (change - 1) * 100);
            tf_svg_text(&c, tf_svg_px(&c, xs[i]), tf_svg_py(&c, ys[i]) - 9, "middle",
                        "#D00000", label);
            regressions++;
            pg->stats->regressions++;
            if (i == m - 1) {
                g->last_regression = (int)xs[i];
                g->last_change = change;
            }
        }
    }
    char cap[400];
    snprintf(cap, sizeof cap,
             "The best of each run that measured this group. <span class=\"bad\">Red</span>: "
             "a regression, slower than the run before beyond the noise "
             "(|t<sub>B</sub>/t<sub>A</sub> &minus; 1| &gt; max(3&middot;&radic;(s<sub>A</sub>"
             "<sup>2</sup>+s<sub>B</sub><sup>2</sup>), 2%%), as <code>tunefarm diff</code> "
             "decides). %d regression%s.",
             regressions, regressions == 1 ? "" : "s");
    figure_end(pg, &c, cap);
done:
    free(xs);
    free(ys);
    free(best);
    free(runs);
}

struct energy_point {
    double t, e;
    uint64_t config;
};

static int energy_order(const void *x, const void *y)
{
    const struct energy_point *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->e < b->e ? -1 : a->e > b->e;
}

static void chart_energy(struct page *pg, const struct group *g)
{
    const struct tf_archive_kernel *v = &g->view;
    struct energy_point *pts = tf_xmalloc((v->nrows + 1) * sizeof *pts);
    uint64_t n = 0;
    for (uint64_t r = 0; r < v->nrows; r++) {
        const struct tf_result *x = &v->rows[r].r;
        if (x->status == TF_STATUS_OK && x->phase != 2 && isfinite(x->time_median) &&
            x->time_median > 0 && isfinite(x->energy_j) && x->energy_j > 0 && x->samples > 0)
            /* the column holds the energy of all timed launches (archive.md): one
             * launch's is what its time compares with */
            pts[n++] = (struct energy_point){x->time_median, x->energy_j / x->samples, x->config};
    }
    if (n == 0) {
        free(pts);
        return;
    }
    qsort(pts, n, sizeof *pts, energy_order);
    /* the front: in order of time, each point cheaper than every faster one */
    bool *front = tf_xcalloc(n, sizeof *front);
    double tlo = INFINITY, thi = -INFINITY, elo = INFINITY, ehi = -INFINITY, emin = INFINITY;
    double *fx = tf_xmalloc(n * sizeof *fx), *fy = tf_xmalloc(n * sizeof *fy);
    int nf = 0;
    for (uint64_t i = 0; i < n; i++) {
        tlo = fmin(tlo, pts[i].t);
        thi = fmax(thi, pts[i].t);
        elo = fmin(elo, pts[i].e);
        ehi = fmax(ehi, pts[i].e);
        if (pts[i].e < emin) {
            emin = pts[i].e;
            front[i] = true;
            fx[nf] = pts[i].t;
            fy[nf] = pts[i].e;
            nf++;
        }
    }
    struct tf_svg_axis xa = {.label = "median time per launch", .format = fmt_seconds_digits};
    struct tf_svg_axis ya = {.label = "energy per launch", .format = fmt_joules};
    tf_svg_axis_fit(&xa, tlo, thi, true);
    tf_svg_axis_fit(&ya, elo, ehi, true);
    struct tf_svg_chart c;
    figure_begin(pg, &c, "time against energy", xa, ya);
    uint64_t stride = n > ENERGY_POINTS ? (n + ENERGY_POINTS - 1) / ENERGY_POINTS : 1;
    for (uint64_t i = 0; i < n; i += stride)
        if (!front[i])
            tf_svg_dot(&c, pts[i].t, pts[i].e, 2, "#9ab", NULL);
    tf_svg_line(&c, fx, fy, nf, true, "#D55E00", 1.5, NULL);
    for (uint64_t i = 0; i < n; i++)
        if (front[i]) {
            char tip[700], t[32], cfg[512];
            fmt_seconds(pts[i].t, t, sizeof t);
            tf_report_format_config(v, pts[i].config, cfg, sizeof cfg);
            snprintf(tip, sizeof tip, "%s, %.4g J: %s", t, pts[i].e, cfg);
            tf_svg_dot(&c, pts[i].t, pts[i].e, 3.5, "#D55E00", tip);
        }
    pg->stats->pareto_points += nf;
    char cap[300];
    snprintf(cap, sizeof cap,
             "Time against energy of the %" PRIu64 " ok results the searches measured with an "
             "energy reading%s. "
             "Orange: the Pareto front (%d configuration%s no other result is both faster and "
             "cheaper than).",
             n, stride > 1 ? " (thinned evenly for drawing; the front is complete)" : "", nf,
             nf == 1 ? "" : "s");
    figure_end(pg, &c, cap);
    free(fx);
    free(fy);
    free(front);
    free(pts);
}

static void chart_failures(struct page *pg, const struct group *g)
{
    int present[TF_STATUS_COUNT], np = 0;
    uint64_t most = 1;
    for (int s = 0; s < TF_STATUS_COUNT; s++)
        if (g->counts[s]) {
            present[np++] = s;
            most = g->counts[s] > most ? g->counts[s] : most;
        }
    if (np == 0)
        return;
    struct tf_svg_axis xa = {.label = "configurations", .format = fmt_count, .integer = true};
    struct tf_svg_axis ya = {.hidden = true};
    tf_svg_axis_fit(&xa, 0, (double)most, false);
    xa.lo = 0;
    ya.lo = 0;
    ya.hi = np;
    struct tf_svg_chart c = {.left = 104, .right = 12, .top = 14, .bottom = 40};
    fputs("<figure>", pg->out);
    c.x = xa;
    c.y = ya;
    tf_svg_begin(&c, pg->out, CHART_W, CHART_H, "configurations by status");
    pg->stats->charts++;
    for (int i = 0; i < np; i++) {
        int s = present[i];
        double y0 = np - i - 0.8, y1 = np - i - 0.2;
        const char *colour = s == TF_STATUS_OK        ? "#009E73"
                             : s == TF_STATUS_INVALID ? "#999999"
                                                      : "#D55E00";
        char tip[64], label[48];
        snprintf(tip, sizeof tip, "%s: %" PRIu64, tf_status_name(s), g->counts[s]);
        tf_svg_bar(&c, 0, y0, (double)g->counts[s], y1, colour, tip);
        tf_svg_text(&c, c.left - 4, tf_svg_py(&c, (y0 + y1) / 2) + 4, "end", "#222",
                    tf_status_name(s));
        snprintf(label, sizeof label, "%" PRIu64, g->counts[s]);
        tf_svg_text(&c, tf_svg_px(&c, (double)g->counts[s]) + (g->counts[s] * 2 > most ? -4 : 4),
                    tf_svg_py(&c, (y0 + y1) / 2) + 4, g->counts[s] * 2 > most ? "end" : "start",
                    g->counts[s] * 2 > most ? "#fff" : "#222", label);
    }
    char cap[200];
    snprintf(cap, sizeof cap,
             "The %" PRIu64 " configurations measured, by the status of their latest "
             "measurement (a failure is a result: schema/archive.md lists the statuses).",
             g->configs);
    figure_end(pg, &c, cap);
}

/* ---- tables ---- */

static void cross_matrix(struct page *pg, const struct tf_archive_kernel *ak, struct group *gs,
                         int n)
{
    FILE *o = pg->out;
    fputs("<h4>Across device classes</h4>\n<table class=\"cross\"><tr><th>best configuration "
          "of &darr; &nbsp; timed on &rarr;</th>",
          o);
    for (int d = 0; d < n; d++) {
        fputs("<th>", o);
        tf_html_escape(o, class_name(gs[d].key));
        fputs("</th>", o);
    }
    fputs("</tr>\n", o);
    for (int c = 0; c < n; c++) {
        const struct tf_archive_row *own = gs[c].pick.best;
        char cfg[512] = "-";
        if (own)
            tf_report_format_config(ak, own->r.config, cfg, sizeof cfg);
        fputs("<tr><th title=\"", o);
        tf_html_escape(o, cfg);
        fputs("\">", o);
        tf_html_escape(o, class_name(gs[c].key));
        fputs("</th>", o);
        for (int d = 0; d < n; d++) {
            if (own == NULL) {
                fputs("<td class=\"na\">nothing ran ok</td>", o);
                continue;
            }
            const struct tf_archive_row *row = NULL;
            double t = tf_report_config_time(pg->a, &gs[d].view, (uint32_t)gs[d].p, -1,
                                             gs[d].key, own->r.config, &row);
            const struct tf_archive_row *theirs = gs[d].pick.best;
            if (isfinite(t) && theirs) {
                double ratio = theirs->r.time_median / t;
                char ts[32];
                fmt_seconds(t, ts, sizeof ts);
                fprintf(o, "<td class=\"%s\">%s <b>%.2fx</b></td>",
                        ratio >= 0.98 ? "good" : ratio >= 0.8 ? "fair" : "poor", ts, ratio);
            } else if (row) {
                fprintf(o, "<td class=\"fail\">%s</td>", tf_status_name(row->r.status));
            } else {
                fputs("<td class=\"na\">not measured</td>", o);
            }
        }
        fputs("</tr>\n", o);
    }
    fputs("</table>\n<p class=\"note\">Each row: a class's best configuration (hover for it), "
          "its time on each class and that class's own best time / this (1.00x: as good as "
          "the best found there). As <code>tunefarm query</code> prints it.</p>\n",
          o);
}

static void summary_row(FILE *o, const struct tf_archive_kernel *ak, const struct group *g,
                        const char *anchor)
{
    char t[32] = "-", speed[32] = "-", metric[64] = "-";
    if (g->pick.best) {
        fmt_seconds(g->pick.best->r.time_median, t, sizeof t);
        if (isfinite(g->pick.default_time))
            snprintf(speed, sizeof speed, "%.2fx", g->pick.default_time / g->pick.best->r.time_median);
        if (ak->nmetrics > 0 && isfinite(g->pick.best->r.metrics[0]))
            snprintf(metric, sizeof metric, "%.4g ", g->pick.best->r.metrics[0]);
    }
    fprintf(o, "<tr><td><a href=\"#%s\">", anchor);
    tf_html_escape(o, ak->name);
    fputs("</a></td><td>", o);
    tf_html_escape(o, ak->problems[g->p].name);
    fputs("</td><td>", o);
    tf_html_escape(o, class_name(g->key));
    fprintf(o, "</td><td class=\"num\">%s</td><td class=\"num\">", t);
    if (strcmp(metric, "-") != 0) {
        fputs(metric, o);
        tf_html_escape(o, ak->metric_names[0]);
    } else {
        fputs("-", o);
    }
    fprintf(o, "</td><td class=\"num\">%s</td><td class=\"num\">%" PRIu64 " / %" PRIu64
               "</td><td class=\"num\">%d</td><td>",
            speed, g->counts[TF_STATUS_OK], g->configs, g->nruns);
    if (g->last_regression >= 0)
        fprintf(o, "<span class=\"bad\">run %d: %.1f%% slower</span>", g->last_regression,
                (g->last_change - 1) * 100);
    else
        fputs(g->nruns > 1 ? "no regression" : "-", o);
    fputs("</td></tr>\n", o);
}

static void runs_table(struct page *pg)
{
    const struct tf_archive *a = pg->a;
    FILE *o = pg->out;
    fprintf(o, "<details><summary id=\"runs\">Runs (%d)</summary>\n", a->nruns);
    fputs("<table><tr><th>run</th><th>job</th><th>job hash</th>"
          "<th>started</th><th>ended</th><th>Slurm job</th><th>tunefarm</th><th>results</th>"
          "<th>replay of</th></tr>\n",
          o);
    for (int r = 0; r < a->nruns; r++) {
        const struct tf_archive_run *run = &a->runs[r];
        uint64_t rows = 0;
        for (int k = 0; k < a->nkernels; k++)
            for (uint64_t i = 0; i < a->kernels[k].nrows; i++)
                rows += a->kernels[k].rows[i].run == (uint32_t)r;
        char start[32], end[32];
        date_text(run->start, start, sizeof start);
        date_text(run->end, end, sizeof end);
        fprintf(o, "<tr><td class=\"num\">%d</td><td>", r);
        tf_html_escape(o, run->job_name);
        fputs("</td><td><code>", o);
        char hash[13];
        tf_strlcpy(hash, run->job_hash, sizeof hash); /* hex, but read from a file: escaped */
        tf_html_escape(o, hash);
        fprintf(o, "</code></td><td>%s</td><td>%s</td><td>", start,
                run->end > 0 ? end : "<span class=\"bad\">unfinished</span>");
        tf_html_escape(o, run->slurm_job_id);
        fputs("</td><td>", o);
        tf_html_escape(o, run->tunefarm_version);
        fprintf(o, "</td><td class=\"num\">%" PRIu64 "</td><td>", rows);
        tf_html_escape(o, run->replay_source);
        fputs("</td></tr>\n", o);
    }
    fputs("</table></details>\n", o);
}

static void devices_table(struct page *pg)
{
    const struct tf_archive *a = pg->a;
    FILE *o = pg->out;
    fprintf(o, "<details><summary id=\"devices\">Devices (%d)</summary>\n", a->ndevices);
    fputs("<table><tr><th>device</th><th>backend</th>"
          "<th>arch</th><th>vendor</th><th>host</th><th>driver</th><th>runtime</th>"
          "<th>compiler</th></tr>\n",
          o);
    for (int d = 0; d < a->ndevices; d++) {
        const struct tf_device *v = &a->devices[d];
        const char *cells[] = {v->name, v->backend, v->arch, v->vendor, v->host,
                               v->driver_version, v->runtime_version, v->compiler_version};
        fputs("<tr>", o);
        for (size_t i = 0; i < sizeof cells / sizeof *cells; i++) {
            fputs("<td>", o);
            tf_html_escape(o, cells[i]);
            fputs("</td>", o);
        }
        fputs("</tr>\n", o);
    }
    fputs("</table></details>\n", o);
}

static const char page_style[] =
    "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",sans-serif;margin:24px auto;"
    "padding:0 16px;color:#222;max-width:1240px;background:#fff}\n"
    "h1{font-size:24px;margin-bottom:4px}h2{font-size:19px;border-bottom:2px solid #ddd;"
    "margin-top:34px;padding-bottom:3px}h3{font-size:16px;margin-top:26px;color:#0b4f86}"
    "h4{font-size:14px;margin:18px 0 6px}\n"
    "table{border-collapse:collapse;font-size:13px;margin:6px 0}td,th{border:1px solid #ddd;"
    "padding:3px 7px;text-align:left;vertical-align:top}th{background:#f3f5f7}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.good{background:#d9f2d9}td.fair{background:#fff3c4}td.poor{background:#f8d0c8}"
    "td.fail{background:#f3c0c0;color:#800}td.na{background:#eee;color:#777}\n"
    ".charts{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0;border:1px solid #e3e3e3;"
    "padding:6px;background:#fcfcfc;border-radius:4px}figcaption{font-size:12px;color:#555;"
    "max-width:360px;margin-top:4px}\n"
    ".bad{color:#c00000;font-weight:bold}.note{color:#666}.cfg{font-family:ui-monospace,"
    "monospace;font-size:12.5px;background:#f3f5f7;padding:1px 5px;border-radius:3px}"
    "code{font-size:12.5px}summary{font-size:16px;font-weight:bold;margin:14px 0 4px;"
    "cursor:pointer}\n";

void tf_html_report_write(const struct tf_archive *a, const char *archive_path,
                          const char *kernel, FILE *out, struct tf_html_report_stats *stats)
{
    struct tf_html_report_stats local;
    if (stats == NULL)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    /* The body first (into memory), so the summary at the top can tell what
     * the charts found. */
    char *body = NULL, *summary = NULL;
    size_t body_len = 0, summary_len = 0;
    FILE *bo = open_memstream(&body, &body_len), *so = open_memstream(&summary, &summary_len);
    if (bo == NULL || so == NULL)
        tf_die("open_memstream failed");
    struct page pg = {.a = a, .out = bo, .stats = stats};
    uint64_t total_rows = 0;
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *ak = &a->kernels[k];
        total_rows += ak->nrows;
        if ((kernel && strcmp(kernel, ak->name) != 0) || ak->nrows == 0)
            continue;
        stats->kernels++;
        fprintf(bo, "<h2 id=\"k%d\">Kernel ", k);
        tf_html_escape(bo, ak->name);
        fputs("</h2>\n<p>Parameters: ", bo);
        for (int i = 0; i < ak->nparams; i++) {
            const struct tf_param *pa = &ak->params[i];
            fputs(i ? "; " : "", bo);
            fputs("<b>", bo);
            tf_html_escape(bo, pa->name);
            fputs("</b> ", bo);
            for (int v = 0; v < pa->count && v < 16; v++) {
                char num[32];
                if (pa->kind == TF_PARAM_INT) {
                    snprintf(num, sizeof num, "%" PRId64, pa->ints[v]);
                    fputs(v ? ", " : "", bo);
                    fputs(num, bo);
                } else {
                    fputs(v ? ", " : "", bo);
                    tf_html_escape(bo, pa->strings[v]);
                }
            }
            if (pa->count > 16)
                fprintf(bo, " &hellip; (%d values)", pa->count);
        }
        fputs(".</p>\n", bo);
        for (int p = 0; p < ak->nproblems; p++) {
            int n;
            char (*keys)[256] = tf_report_classes_all(a, ak, (uint32_t)p, -1, &n);
            if (n == 0) {
                free(keys);
                continue;
            }
            struct group *gs = tf_xcalloc((size_t)n, sizeof *gs);
            for (int c = 0; c < n; c++)
                group_make(a, ak, p, keys[c], &gs[c]);
            fprintf(bo, "<h3 id=\"k%dp%d\">", k, p);
            tf_html_escape(bo, ak->name);
            fputs(" / ", bo);
            tf_html_escape(bo, ak->problems[p].name);
            fputs(" <span class=\"note\">", bo);
            for (int i = 0; i < ak->nsizes; i++) {
                fputs(i ? " " : "", bo);
                tf_html_escape(bo, ak->size_names[i]);
                fprintf(bo, "=%" PRId64, ak->problems[p].sizes[i]);
            }
            fputs("</span></h3>\n", bo);
            if (n > 1)
                cross_matrix(&pg, ak, gs, n);
            for (int c = 0; c < n; c++) {
                struct group *g = &gs[c];
                char anchor[48];
                snprintf(anchor, sizeof anchor, "k%dp%dc%d", k, p, c);
                fprintf(bo, "<h4 id=\"%s\">", anchor);
                tf_html_escape(bo, class_name(g->key));
                fputs(" <span class=\"note\">", bo);
                tf_html_escape(bo, g->key);
                fprintf(bo, ", %d device%s</span></h4>\n", g->ndevices,
                        g->ndevices == 1 ? "" : "s");
                if (g->pick.best) {
                    char cfg[512], t[32];
                    tf_report_format_config(ak, g->pick.best->r.config, cfg, sizeof cfg);
                    fmt_seconds(g->pick.best->r.time_median, t, sizeof t);
                    fprintf(bo, "<p>Best: <b>%s</b> (run %u%s) <span class=\"cfg\">", t,
                            g->pick.best->run,
                            g->pick.best->r.phase == 2 ? ", strict re-measurement" : "");
                    tf_html_escape(bo, cfg);
                    fputs("</span></p>\n", bo);
                } else {
                    fputs("<p class=\"bad\">No configuration ran ok.</p>\n", bo);
                }
                char *notes = NULL;
                size_t notes_len = 0;
                pg.notes = open_memstream(&notes, &notes_len);
                if (pg.notes == NULL)
                    tf_die("open_memstream failed");
                fputs("<div class=\"charts\">\n", bo);
                chart_histogram(&pg, g);
                chart_convergence(&pg, g, false);
                chart_convergence(&pg, g, true);
                chart_default(&pg, g);
                chart_trend(&pg, g);
                chart_energy(&pg, g);
                chart_failures(&pg, g);
                fputs("</div>\n", bo);
                fclose(pg.notes);
                fwrite(notes, 1, notes_len, bo);
                free(notes);
                summary_row(so, ak, g, anchor);
                stats->groups++;
            }
            for (int c = 0; c < n; c++)
                group_free(&gs[c]);
            free(gs);
            free(keys);
        }
    }
    fclose(bo);
    fclose(so);

    /* the page */
    int classes = 0;
    for (int d = 0; d < a->ndevices; d++) {
        char key[256], other[256];
        tf_device_class_key(&a->devices[d], key, sizeof key);
        bool first = true;
        for (int e = 0; e < d && first; e++) {
            tf_device_class_key(&a->devices[e], other, sizeof other);
            first = strcmp(key, other) != 0;
        }
        classes += first;
    }
    char now[32];
    date_text((double)time(NULL), now, sizeof now);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
          out);
    fprintf(out, "<meta name=\"generator\" content=\"tunefarm %s\">\n<title>tunefarm report: ",
            tf_version);
    tf_html_escape(out, archive_path);
    fprintf(out, "</title>\n<style>\n%s</style></head><body>\n<h1>tunefarm report</h1>\n<p>"
                 "Archive <code>",
            page_style);
    tf_html_escape(out, archive_path);
    fprintf(out,
            "</code>: %d run%s, %d device%s in %d class%s, %d kernel%s shown, %" PRIu64
            " results. Written %s by tunefarm %s.</p>\n",
            a->nruns, a->nruns == 1 ? "" : "s", a->ndevices, a->ndevices == 1 ? "" : "s",
            classes, classes == 1 ? "" : "es", stats->kernels, stats->kernels == 1 ? "" : "s",
            total_rows, now, tf_version);
    fputs("<h2 id=\"summary\">Summary</h2>\n<table><tr><th>kernel</th><th>problem</th>"
          "<th>device class</th><th>best time</th><th>metric</th><th>vs default</th>"
          "<th>ok / configurations</th><th>runs</th><th>trend</th></tr>\n",
          out);
    fwrite(summary, 1, summary_len, out);
    fprintf(out, "</table>\n<p class=\"note\">%d regression%s marked in the trends. The best is "
                 "the lowest median time among ok results (strict re-measurements decide where "
                 "a search had two phases), as <code>tunefarm query</code> reports it.</p>\n",
            stats->regressions, stats->regressions == 1 ? "" : "s");
    pg.out = out;
    runs_table(&pg);
    devices_table(&pg);
    fwrite(body, 1, body_len, out);
    fputs("</body></html>\n", out);
    free(body);
    free(summary);
}

int tf_html_report_main(int argc, char **argv)
{
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"kernel", required_argument, NULL, 'k'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *output = NULL, *kernel = NULL;
    int c;
    optind = 2;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:k:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'k':
            kernel = optarg;
            break;
        case 'h':
            fputs(tf_html_report_usage, stdout);
            return 0;
        case ':':
            fprintf(stderr, "tunefarm report: %s needs a value\n\n%s", argv[optind - 1],
                    tf_html_report_usage);
            return 2;
        default:
            fprintf(stderr, "tunefarm report: unknown option '%s'\n\n%s", argv[optind - 1],
                    tf_html_report_usage);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "tunefarm report: expected one archive, got %d arguments\n\n%s",
                argc - optind, tf_html_report_usage);
        return 2;
    }
    const char *path = argv[optind];
    struct tf_error err = {0};
    /* With the results still in its journal, as query and export read it. */
    struct tf_journal_replay replay;
    struct tf_archive *a = tf_journal_read_archive(path, &replay, &err);
    if (a == NULL) {
        tf_error_print(&err, "tunefarm report", stderr);
        return 2;
    }
    if (kernel && tf_archive_find_kernel(a, kernel) == NULL) {
        fprintf(stderr, "tunefarm report: %s has no kernel '%s'; its kernels:", path, kernel);
        for (int k = 0; k < a->nkernels; k++)
            fprintf(stderr, " %s", a->kernels[k].name);
        fputc('\n', stderr);
        tf_archive_destroy(a);
        return 2;
    }
    struct tf_outfile o;
    if (tf_outfile_open(&o, output, &err) != 0) {
        tf_error_print(&err, "tunefarm report", stderr);
        tf_archive_destroy(a);
        return 1;
    }
    struct tf_html_report_stats stats;
    tf_html_report_write(a, path, kernel, o.f, &stats);
    tf_archive_destroy(a);
    if (tf_outfile_commit(&o, &err) != 0) {
        tf_error_print(&err, "tunefarm report", stderr);
        return 1;
    }
    if (output)
        fprintf(stderr,
                "tunefarm report: wrote %s: %d kernel(s), %d group(s), %d chart(s), %d "
                "regression(s) marked\n",
                output, stats.kernels, stats.groups, stats.charts, stats.regressions);
    return 0;
}
