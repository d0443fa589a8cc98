/* report.c - summaries computed from the archive model.
 *
 * The end-of-run summary and `tunefarm query` are the same computation over
 * different rows (this run's, or all of an archive's), so both read the
 * archive model rather than any live coordinator state: what the table shows
 * is exactly what the file holds. Rows are grouped by kernel, problem and
 * device class (backend/arch/name: all H100s together); the best is the lowest
 * median time among `ok` rows (only the strict re-measurements where the group
 * has them: tf_report_pick, which `tunefarm best` and `tunefarm report` use
 * too), and the speedup compares it with the default configuration's time in
 * the same group. The default is the problem's
 * own (a kernel's default may follow the problem sizes), as the archive's
 * problems table records it. A configuration measured in several runs counts
 * once in `ok/total`, with the status of its latest measurement. Noisy rows
 * and missing energies are counted by tf_archive_quality_count, which
 * `tunefarm diff` uses too. */
#include "report.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../schema/exchange.h"

void tf_format_seconds(double s, char *out, int cap)
{
    if (!isfinite(s))
        snprintf(out, (size_t)cap, "-");
    else if (s < 1e-6)
        snprintf(out, (size_t)cap, "%.1f ns", s * 1e9);
    else if (s < 1e-3)
        snprintf(out, (size_t)cap, "%.2f us", s * 1e6);
    else if (s < 1.0)
        snprintf(out, (size_t)cap, "%.3f ms", s * 1e3);
    else
        snprintf(out, (size_t)cap, "%.3f s", s);
}

void tf_report_format_config(const struct tf_archive_kernel *ak, uint64_t config, char *out,
                             int cap)
{
    int used = 0;
    out[0] = '\0';
    /* Mixed radix, parameter 0 most significant: peel digits from the end. */
    int digits[ak->nparams > 0 ? ak->nparams : 1];
    for (int i = ak->nparams - 1; i >= 0; i--) {
        digits[i] = (int)(config % (uint64_t)ak->params[i].count);
        config /= (uint64_t)ak->params[i].count;
    }
    /* A parameter with one value is the same in every configuration (a size
     * pinned by a constraint, a switch not tuned here): it says nothing about
     * which one won, so it is left out, unless every parameter has one. */
    bool all_single = true;
    for (int i = 0; i < ak->nparams; i++)
        all_single &= ak->params[i].count == 1;
    for (int i = 0; i < ak->nparams && used < cap; i++) {
        const struct tf_param *p = &ak->params[i];
        if (p->count == 1 && !all_single)
            continue;
        const char *sep = used ? " " : "";
        int n = p->kind == TF_PARAM_INT
                    ? snprintf(out + used, (size_t)(cap - used), "%s%s=%lld", sep, p->name,
                               (long long)p->ints[digits[i]])
                    : snprintf(out + used, (size_t)(cap - used), "%s%s=%s", sep, p->name,
                               p->strings[digits[i]]);
        used += n;
    }
}

/* Widths of the kernel and problem columns: the longest name shown (at least
 * the headers' 10 and 8), so that long names (an imported "convolution_kernel",
 * "4096x4096") do not push the other columns out of line. */
static void name_widths(const struct tf_archive *a, const char *kernel, int *kw, int *pw)
{
    *kw = 10;
    *pw = 8;
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *ak = &a->kernels[k];
        if (kernel && strcmp(kernel, ak->name) != 0)
            continue;
        if ((int)strlen(ak->name) > *kw)
            *kw = (int)strlen(ak->name);
        for (int p = 0; p < ak->nproblems; p++)
            if ((int)strlen(ak->problems[p].name) > *pw)
                *pw = (int)strlen(ak->problems[p].name);
    }
}

/* A metric value without an exponent below a billion ("13640 GFLOP/s"). */
static void format_metric(double v, const char *name, char *out, size_t cap)
{
    if (fabs(v) >= 1000 && fabs(v) < 1e9)
        snprintf(out, cap, "%.0f %s", v, name);
    else
        snprintf(out, cap, "%.4g %s", v, name);
}

int tf_report_classes(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                      uint32_t problem, int run, char (*keys)[256], int max)
{
    int n = 0;
    for (uint64_t r = 0; r < ak->nrows; r++) {
        const struct tf_archive_row *row = &ak->rows[r];
        if (row->r.problem != problem || (run >= 0 && row->run != (uint32_t)run) ||
            row->device >= (uint32_t)a->ndevices)
            continue;
        char key[256];
        tf_device_class_key(&a->devices[row->device], key, sizeof key);
        int found = 0;
        for (int i = 0; i < n && !found; i++)
            found = strcmp(keys[i], key) == 0;
        if (!found && n < max)
            tf_strlcpy(keys[n++], key, sizeof keys[0]);
    }
    return n;
}

char (*tf_report_classes_all(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                             uint32_t problem, int run, int *n))[256]
{
    /* A class has at least one device: no archive has more classes. */
    char (*keys)[256] = tf_xcalloc((size_t)a->ndevices + 1, sizeof *keys);
    *n = tf_report_classes(a, ak, problem, run, keys, a->ndevices);
    return keys;
}

/* A best row of tf_report_best, for the compiler's notes after the table. */
struct best_note {
    const char *kernel, *problem, *device;
    const struct tf_archive_row *row;
};

/* The compiler's notes on the best configurations: registers per thread and
 * spilled bytes (GPU), warnings and the first of them; only when some best has
 * any of these known (a host run without warnings prints nothing). */
static void compiler_notes(const struct best_note *notes, int n, int kw, int pw, FILE *out)
{
    bool any = false;
    for (int i = 0; i < n; i++)
        any |= notes[i].row->r.registers >= 0 || notes[i].row->r.warnings > 0;
    if (!any)
        return;
    fprintf(out, "\nCompiler, best configurations: registers per thread, spilled bytes, warnings "
                 "(the first; all of them in the compile cache's <key>.log)\n");
    fprintf(out, "%-*s %-*s %-28s %-9s %-7s %s\n", kw, "kernel", pw, "problem", "device",
            "registers", "spills", "warnings");
    for (int i = 0; i < n; i++) {
        const struct tf_result *r = &notes[i].row->r;
        char regs[16] = "-", spills[24] = "-", warn[TF_WARNING_LEN + 16] = "-";
        if (r->registers >= 0)
            snprintf(regs, sizeof regs, "%d", (int)r->registers);
        if (r->spill_bytes >= 0)
            snprintf(spills, sizeof spills, "%lld", (long long)r->spill_bytes);
        /* The compiler's line quotes the kernel's source (a `#warning`'s
         * text): its control bytes must not reach a terminal as commands. */
        char shown[sizeof r->first_warning];
        tf_exchange_terminal(r->first_warning, shown, sizeof shown);
        if (r->warnings > 0)
            snprintf(warn, sizeof warn, "%d: %s", (int)r->warnings, shown);
        else if (r->warnings == 0)
            snprintf(warn, sizeof warn, "0");
        fprintf(out, "%-*s %-*s %-28.28s %-9s %-7s %s\n", kw, notes[i].kernel, pw,
                notes[i].problem, notes[i].device, regs, spills, warn);
    }
}

/* A row's configuration and status, to count each configuration once. */
struct config_status {
    uint64_t config;
    double when;  /* the row's timestamp (unix seconds), else its run's start; 0 unknown */
    uint32_t run;
    uint64_t row;
    uint8_t status;
};

/* By configuration, then by when it was measured: run numbers say nothing of
 * time once archives are merged (merge numbers runs in its arguments' order),
 * so the clock decides, and run and row order only break its ties. */
static int config_status_cmp(const void *x, const void *y)
{
    const struct config_status *a = x, *b = y;
    if (a->config != b->config)
        return a->config < b->config ? -1 : 1;
    if (a->when != b->when)
        return a->when < b->when ? -1 : 1;
    if (a->run != b->run)
        return a->run < b->run ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

/* When `row` was measured: its timestamp, else its run's start, else 0. */
static double row_when(const struct tf_archive *a, const struct tf_archive_row *row)
{
    if (isfinite(row->r.timestamp) && row->r.timestamp > 0)
        return row->r.timestamp;
    if (row->run < (uint32_t)a->nruns && isfinite(a->runs[row->run].start) &&
        a->runs[row->run].start > 0)
        return a->runs[row->run].start;
    return 0;
}

/* Count `v[0..n)` by status, each configuration once with the status of its
 * latest measurement (by its timestamp; see config_status_cmp): a
 * configuration that failed last week and is ok tonight counts as ok, in
 * whatever order the archives holding the two were merged. Returns the
 * configurations. */
static uint64_t count_configs(struct config_status *v, uint64_t n, uint64_t *counts)
{
    uint64_t total = 0;
    qsort(v, n, sizeof *v, config_status_cmp);
    for (uint64_t i = 0; i < n; i++) {
        if (i + 1 < n && v[i + 1].config == v[i].config)
            continue; /* a later measurement of it follows */
        total++;
        if (v[i].status < TF_STATUS_COUNT)
            counts[v[i].status]++;
    }
    return total;
}

int tf_report_kernels_with_rows(const struct tf_archive *a)
{
    int n = 0;
    for (int k = 0; k < a->nkernels; k++)
        n += a->kernels[k].nrows > 0;
    return n;
}

void tf_report_run_line(const struct tf_archive *a, int run, FILE *out)
{
    const struct tf_archive_run *r = &a->runs[run];
    char start[32] = "-", end[32] = "-";
    time_t t;
    struct tm tm;
    if (tf_archive_time_ok(r->start) && (t = (time_t)r->start, localtime_r(&t, &tm)))
        strftime(start, sizeof start, "%Y-%m-%d %H:%M:%S", &tm);
    if (tf_archive_time_ok(r->end) && (t = (time_t)r->end, localtime_r(&t, &tm)))
        strftime(end, sizeof end, "%Y-%m-%d %H:%M:%S", &tm);
    fprintf(out, "run %d: job '%s', job hash %.12s, started %s, %s%s", run, r->job_name,
            r->job_hash, start, r->end > 0 ? "finished " : "UNFINISHED", r->end > 0 ? end : "");
    if (r->slurm_job_id[0])
        fprintf(out, ", Slurm job %s", r->slurm_job_id);
    if (r->replay_source[0])
        fprintf(out, ", a replay of %s", r->replay_source);
    fputc('\n', out);
}

int tf_report_best(const struct tf_archive *a, int run, const char *kernel, FILE *out)
{
    int lines = 0, kw, pw, nnotes = 0;
    struct best_note *notes = NULL;
    name_widths(a, kernel, &kw, &pw);
    fprintf(out, "%-*s %-*s %-28s %-11s %-16s %-8s %-9s %-5s %s\n", kw, "kernel", pw,
            "problem", "device", "best time", "metric", "speedup", "ok/total", "noisy",
            "best configuration  [failures]");
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *ak = &a->kernels[k];
        if (kernel && strcmp(kernel, ak->name) != 0)
            continue;
        for (int p = 0; p < ak->nproblems; p++) {
            int nclasses;
            char (*keys)[256] = tf_report_classes_all(a, ak, (uint32_t)p, run, &nclasses);
            struct config_status *seen =
                tf_xmalloc(sizeof *seen * (ak->nrows ? ak->nrows : 1));
            for (int c = 0; c < nclasses; c++) {
                uint64_t counts[TF_STATUS_COUNT] = {0}, total = 0, nseen = 0;
                struct tf_report_pick pick;
                tf_report_pick(a, ak, (uint32_t)p, run, keys[c], &pick);
                const struct tf_archive_row *best = pick.best;
                const double default_time = pick.default_time;
                const struct tf_device *dev = pick.device;
                for (uint64_t r = 0; r < ak->nrows; r++) {
                    const struct tf_archive_row *row = &ak->rows[r];
                    if (row->r.problem != (uint32_t)p ||
                        (run >= 0 && row->run != (uint32_t)run) ||
                        row->device >= (uint32_t)a->ndevices)
                        continue;
                    char key[256];
                    tf_device_class_key(&a->devices[row->device], key, sizeof key);
                    if (strcmp(key, keys[c]) != 0)
                        continue;
                    if (row->r.phase != 2) /* its re-measurement is not another one */
                        seen[nseen++] = (struct config_status){
                            row->r.config, row_when(a, row), row->run, r, row->r.status};
                }
                total = count_configs(seen, nseen, counts);
                char tbuf[32] = "-", mbuf[48] = "-", sbuf[16] = "-", cfg[512] = "-";
                char devname[160], okbuf[48], failures[256] = "";
                if (best) {
                    tf_format_seconds(best->r.time_median, tbuf, sizeof tbuf);
                    if (ak->nmetrics > 0 && isfinite(best->r.metrics[0]))
                        format_metric(best->r.metrics[0], ak->metric_names[0], mbuf,
                                      sizeof mbuf);
                    if (isfinite(default_time))
                        snprintf(sbuf, sizeof sbuf, "%.2fx", default_time / best->r.time_median);
                    tf_report_format_config(ak, best->r.config, cfg, sizeof cfg);
                }
                snprintf(devname, sizeof devname, "%s", dev ? dev->name : "?");
                snprintf(okbuf, sizeof okbuf, "%llu/%llu", (unsigned long long)counts[0],
                         (unsigned long long)total);
                struct tf_archive_quality q = {0};
                tf_archive_quality_count(a, ak, run, (uint32_t)p, keys[c], &q);
                int used = 0;
                for (int s = 1; s < TF_STATUS_COUNT; s++)
                    if (counts[s] && used < (int)sizeof failures)
                        used += snprintf(failures + used, sizeof failures - (size_t)used,
                                         "%s%s %llu", used ? ", " : "  [", tf_status_name(s),
                                         (unsigned long long)counts[s]);
                if (used && used < (int)sizeof failures - 1)
                    strcat(failures, "]");
                fprintf(out, "%-*s %-*s %-28.28s %-11s %-16s %-8s %-9s %-5llu %s%s\n", kw,
                        ak->name, pw, ak->problems[p].name, devname, tbuf, mbuf, sbuf, okbuf,
                        (unsigned long long)q.noisy, cfg, failures);
                lines++;
                if (best) {
                    notes = tf_xrealloc(notes, (size_t)(nnotes + 1) * sizeof *notes);
                    notes[nnotes++] = (struct best_note){ak->name, ak->problems[p].name,
                                                         dev ? dev->name : "?", best};
                }
            }
            free(seen);
            free(keys);
        }
    }
    compiler_notes(notes, nnotes, kw, pw, out);
    free(notes);
    return lines;
}

int tf_report_quality(const struct tf_archive *a, int run, const char *kernel, FILE *out)
{
    struct tf_archive_quality q = {0};
    for (int k = 0; k < a->nkernels; k++)
        if (kernel == NULL || strcmp(kernel, a->kernels[k].name) == 0)
            tf_archive_quality_count(a, &a->kernels[k], run, UINT32_MAX, NULL, &q);
    if (q.ok == 0)
        return 0;
    fprintf(out, "Noisy: %llu of %llu ok results stayed above max_noise at max_time (or "
                 "max_samples)%s\n",
            (unsigned long long)q.noisy, (unsigned long long)q.ok,
            q.noisy ? ": marked in the archive's `noisy` column, time_rsd says by how much" : "");
    fprintf(out, "Energy: measured for %llu of %llu ok results",
            (unsigned long long)q.energy[TF_ENERGY_MEASURED], (unsigned long long)q.ok);
    const char *sep = "; without: ";
    for (int e = 0; e < TF_ENERGY_COUNT; e++)
        if (e != TF_ENERGY_MEASURED && q.energy[e]) {
            fprintf(out, "%s%s %llu", sep, tf_energy_status_name(e),
                    (unsigned long long)q.energy[e]);
            sep = ", ";
        }
    fprintf(out, "\n");
    return 2;
}

/* The model name in a class key "backend/arch/name" (the name may hold '/'). */
static const char *class_name(const char *key)
{
    const char *slash = strchr(key, '/');
    slash = slash ? strchr(slash + 1, '/') : NULL;
    return slash ? slash + 1 : key;
}

int tf_report_cross(const struct tf_archive *a, int run, const char *kernel, FILE *out)
{
    int lines = 0, kw, pw;
    name_widths(a, kernel, &kw, &pw);
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *ak = &a->kernels[k];
        if (kernel && strcmp(kernel, ak->name) != 0)
            continue;
        for (int p = 0; p < ak->nproblems; p++) {
            int n;
            char (*keys)[256] = tf_report_classes_all(a, ak, (uint32_t)p, run, &n);
            if (n < 2) {
                free(keys);
                continue;
            }
            double *own = tf_xcalloc((size_t)n, sizeof *own);
            uint64_t *best_config = tf_xcalloc((size_t)n, sizeof *best_config);
            const char **names = tf_xcalloc((size_t)n, sizeof *names);
            for (int c = 0; c < n; c++) {
                struct tf_report_pick pick;
                tf_report_pick(a, ak, (uint32_t)p, run, keys[c], &pick);
                own[c] = pick.best ? pick.best->r.time_median : NAN;
                best_config[c] = pick.best ? pick.best->r.config : UINT64_MAX;
                names[c] = class_name(keys[c]);
            }
            if (lines == 0)
                fprintf(out, "\nAcross device classes: each class's best configuration, timed on "
                             "every class (x: that class's own best time / this)\n");
            fprintf(out, "%-*s %-*s %-26s", kw, "kernel", pw, "problem", "best configuration of");
            for (int d = 0; d < n; d++)
                fprintf(out, "  %-24.24s", names[d]);
            fprintf(out, "\n");
            for (int c = 0; c < n; c++) {
                fprintf(out, "%-*s %-*s %-26.26s", kw, ak->name, pw, ak->problems[p].name,
                        names[c]);
                for (int d = 0; d < n; d++) {
                    char cell[64] = "-", t[32];
                    const struct tf_archive_row *row = NULL;
                    const double time =
                        best_config[c] == UINT64_MAX
                            ? NAN
                            : tf_report_config_time(a, ak, (uint32_t)p, run, keys[d],
                                                    best_config[c], &row);
                    if (isfinite(time)) {
                        tf_format_seconds(time, t, sizeof t);
                        snprintf(cell, sizeof cell, "%s (%.2fx)", t, own[d] / time);
                    } else if (best_config[c] != UINT64_MAX) {
                        snprintf(cell, sizeof cell, "%s",
                                 row ? tf_status_name(row->r.status) : "not measured");
                    }
                    fprintf(out, "  %-24s", cell);
                }
                fprintf(out, "\n");
                lines++;
            }
            for (int c = 0; c < n; c++) {
                char cfg[512] = "-";
                if (best_config[c] != UINT64_MAX)
                    tf_report_format_config(ak, best_config[c], cfg, sizeof cfg);
                fprintf(out, "  best of %s: %s\n", names[c], cfg);
            }
            free(own);
            free(best_config);
            free(names);
            free(keys);
        }
    }
    return lines;
}

/* in[d] = device d is of class `key`; the caller frees it. Classes are
 * compared once per device, not once per row. */
static bool *class_devices(const struct tf_archive *a, const char *key)
{
    bool *in = tf_xcalloc(a->ndevices > 0 ? (size_t)a->ndevices : 1, sizeof *in);
    for (int d = 0; d < a->ndevices; d++) {
        char k[256];
        tf_device_class_key(&a->devices[d], k, sizeof k);
        in[d] = strcmp(k, key) == 0;
    }
    return in;
}

/* Row `row` belongs to the group (problem, run, the devices in[]). */
static bool in_group(const struct tf_archive *a, const struct tf_archive_row *row,
                     uint32_t problem, int run, const bool *in)
{
    return row->r.problem == problem && (run < 0 || row->run == (uint32_t)run) &&
           row->device < (uint32_t)a->ndevices && in[row->device];
}

/* The fastest ok median of `config` in the group among its strict and
 * single-phase rows (the rows a best is chosen from), else among its
 * screening rows. */
static double config_time(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                          uint32_t problem, int run, const bool *in, uint64_t config,
                          const struct tf_archive_row **found)
{
    const struct tf_archive_row *by_phase[3] = {NULL, NULL, NULL}, *failed = NULL;
    for (uint64_t r = 0; r < ak->nrows; r++) {
        const struct tf_archive_row *row = &ak->rows[r];
        if (row->r.config != config || !in_group(a, row, problem, run, in))
            continue;
        if (!tf_result_timed(&row->r)) {
            if (failed == NULL && row->r.status != TF_STATUS_OK)
                failed = row;
            continue;
        }
        const struct tf_archive_row **slot = &by_phase[row->r.phase <= 2 ? row->r.phase : 1];
        if (*slot == NULL || row->r.time_median < (*slot)->r.time_median)
            *slot = row;
    }
    const struct tf_archive_row *ok = by_phase[0];
    if (by_phase[2] && (ok == NULL || by_phase[2]->r.time_median < ok->r.time_median))
        ok = by_phase[2];
    if (ok == NULL)
        ok = by_phase[1];
    if (found)
        *found = ok ? ok : failed;
    return ok ? ok->r.time_median : NAN;
}

double tf_report_config_time(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                             uint32_t problem, int run, const char *class_key, uint64_t config,
                             const struct tf_archive_row **row)
{
    bool *in = class_devices(a, class_key);
    double t = config_time(a, ak, problem, run, in, config, row);
    free(in);
    return t;
}

void tf_report_pick(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                    uint32_t problem, int run, const char *class_key, struct tf_report_pick *out)
{
    bool *in = class_devices(a, class_key);
    memset(out, 0, sizeof *out);
    out->default_time = NAN;
    /* With two phases, the strict re-measurements (phase 2) decide the best;
     * screening rows (phase 1) use a cheaper protocol and only count. */
    for (uint64_t r = 0; r < ak->nrows && !out->strict; r++)
        out->strict = ak->rows[r].r.phase == 2 && in_group(a, &ak->rows[r], problem, run, in);
    for (uint64_t r = 0; r < ak->nrows; r++) {
        const struct tf_archive_row *row = &ak->rows[r];
        if (!in_group(a, row, problem, run, in))
            continue;
        if (out->device == NULL)
            out->device = &a->devices[row->device];
        if (!tf_result_timed(&row->r) || (out->strict && row->r.phase == 1))
            continue;
        if (out->best == NULL || row->r.time_median < out->best->r.time_median)
            out->best = row;
    }
    const struct tf_archive_problem *pr =
        problem < (uint32_t)ak->nproblems ? &ak->problems[problem] : NULL;
    if (pr && pr->has_default) /* screened only, if it missed the top k */
        out->default_time = config_time(a, ak, problem, run, in, pr->default_index, NULL);
    free(in);
}
