/* export.c - an archive's rows out as CSV, JSON, T4 or a Kernel Tuner cache (export.h).
 *
 * Everything is read from the archive model (archive.h), never from the file,
 * so what is exported is what tunefarm reads. A row is selected by its
 * kernel, problem name, device (name, architecture or class key) and run.
 * CSV is written field by field with RFC 4180 quoting; numbers in the
 * shortest text that reads back exactly (NaN: an empty field, which pandas
 * reads as NaN). The three JSON formats are built as jansson trees and dumped
 * once. T4 and Kernel Tuner caches hold one entry per configuration of one
 * kernel, problem and device class: the selection is checked to be that, and
 * of several rows of a configuration the strict re-measurement (phase 2), a
 * single-phase row, a screening row, in that order, and then the latest
 * measured (timestamp) wins. Both carry a "tunefarm" object (the kernel's problem, size names,
 * parameter kinds, metrics and device) that tunefarm's import reads back and
 * other readers ignore. Files are written to PATH.tmp.PID and renamed. */
#include "export.h"
#include "version.h"
#include "replace.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exchange.h"
#include "status.h"


#define T4_SCHEMA_VERSION "1.0.0"

int tf_export_format_from_name(const char *name)
{
    static const char *const names[] = {[TF_EXPORT_CSV] = "csv", [TF_EXPORT_JSON] = "json",
                                        [TF_EXPORT_T4] = "t4", [TF_EXPORT_KTCACHE] = "kt-cache"};
    for (int i = 0; i < 4; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* ---------------------------------------------------------------- selection */

static bool device_selected(const struct tf_device *d, const char *want)
{
    if (want == NULL)
        return true;
    char key[256];
    tf_device_class_key(d, key, sizeof key);
    return strcmp(d->name, want) == 0 || strcmp(d->arch, want) == 0 || strcmp(key, want) == 0;
}

static bool kernel_selected(const struct tf_archive_kernel *ak, const struct tf_export_options *o)
{
    return o->kernel == NULL || strcmp(ak->name, o->kernel) == 0;
}

static bool row_selected(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                         const struct tf_archive_row *row, const struct tf_export_options *o)
{
    return (o->run < 0 || row->run == (uint32_t)o->run) &&
           (o->problem == NULL || strcmp(ak->problems[row->r.problem].name, o->problem) == 0) &&
           device_selected(&a->devices[row->device], o->device);
}

/* "a, b, c" of up to `n` names into out[cap]. */
static void list_names(char *out, size_t cap, const char *const *names, int n)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used + 1 < cap; i++) {
        bool dup = false;
        for (int j = 0; j < i && !dup; j++)
            dup = strcmp(names[i], names[j]) == 0;
        if (!dup)
            used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? ", " : "", names[i]);
    }
    if (used == 0)
        snprintf(out, cap, "none");
}

int tf_export_check(const struct tf_archive *a, const struct tf_export_options *o,
                    struct tf_error *err)
{
    char have[1024];
    const char *path = o->archive_path ? o->archive_path : "the archive";
    const char **names = tf_xcalloc((size_t)a->nkernels + (size_t)a->ndevices + 1, sizeof *names);
    int n = 0, rc = 0;
    if (o->kernel && tf_archive_find_kernel(a, o->kernel) == NULL) {
        for (int k = 0; k < a->nkernels; k++)
            names[n++] = a->kernels[k].name;
        list_names(have, sizeof have, names, n);
        rc = tf_error_set(err, TF_ERR_SCHEMA, "%s has no kernel '%s'; it has: %s", path,
                          o->kernel, have);
        goto done;
    }
    if (o->run >= a->nruns) {
        rc = tf_error_set(err, TF_ERR_SCHEMA, "%s has %d run(s), numbered from 0; --run %d "
                          "does not exist", path, a->nruns, o->run);
        goto done;
    }
    if (o->device) {
        bool found = false;
        for (int d = 0; d < a->ndevices && !found; d++)
            found = device_selected(&a->devices[d], o->device);
        if (!found) {
            for (int d = 0; d < a->ndevices; d++)
                names[n++] = a->devices[d].name;
            list_names(have, sizeof have, names, n);
            rc = tf_error_set(err, TF_ERR_SCHEMA, "%s has no device named '%s' (a name, an "
                              "architecture or a class backend/arch/name); its devices: %s",
                              path, o->device, have);
            goto done;
        }
    }
    if (o->problem) {
        bool found = false;
        size_t used = 0;
        have[0] = '\0';
        for (int k = 0; k < a->nkernels; k++) {
            const struct tf_archive_kernel *ak = &a->kernels[k];
            for (int p = 0; kernel_selected(ak, o) && p < ak->nproblems; p++) {
                found = found || strcmp(ak->problems[p].name, o->problem) == 0;
                if (used + 1 < sizeof have)
                    used += (size_t)snprintf(have + used, sizeof have - used, "%s%s/%s",
                                             used ? ", " : "", ak->name, ak->problems[p].name);
            }
        }
        if (!found)
            rc = tf_error_set(err, TF_ERR_SCHEMA, "%s has no problem '%s'%s%s; it has: %s",
                              path, o->problem, o->kernel ? " of kernel " : "",
                              o->kernel ? o->kernel : "", used ? have : "none");
    }
done:
    free(names);
    return rc;
}

/* ---------------------------------------------------------------- number text */

/* A double as the shortest text that reads back as it ("" for NaN). */
static void num_text(double x, char *out, size_t cap)
{
    if (isnan(x))
        out[0] = '\0';
    else
        tf_exchange_python_float(x, out, cap);
}

/* A double, or null when not finite (JSON has no NaN). */
static json_t *jnum(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* o[key] = v, with `key` made valid UTF-8 (an archive read from a foreign
 * file may hold any bytes; jansson would drop the member). */
static void jset(json_t *o, const char *key, json_t *v)
{
    char k[512];
    tf_exchange_utf8(key, k, sizeof k);
    json_object_set_new_nocheck(o, k, v);
}

#define jstr tf_exchange_jstr

/* A time in seconds as milliseconds, or null. */
static json_t *jms(double s)
{
    return jnum(s * 1e3);
}

/* ---------------------------------------------------------------- CSV */

static void csv_field(FILE *out, const char *raw, bool first)
{
    char s[1024]; /* the widest archive string is 512 bytes (runs.command) */
    tf_exchange_utf8(raw, s, sizeof s); /* pandas reads UTF-8 */
    if (!first)
        fputc(',', out);
    if (strpbrk(s, ",\"\r\n") == NULL && s[0] != ' ' && (s[0] == '\0' || s[strlen(s) - 1] != ' ')) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (const char *c = s; *c; c++) {
        if (*c == '"')
            fputc('"', out);
        fputc(*c, out);
    }
    fputc('"', out);
}

static void csv_num(FILE *out, double x)
{
    char t[40];
    num_text(x, t, sizeof t);
    csv_field(out, t, false);
}

static void csv_int(FILE *out, long long x)
{
    char t[32];
    snprintf(t, sizeof t, "%lld", x);
    csv_field(out, t, false);
}

/* The fixed columns, in order; parameters, sizes and metrics are placed as marked. */
static const char *const csv_head[] = {"kernel", "run", "run_start", "job_name", "device",
                                       "device_name", "device_arch", "device_vendor",
                                       "device_backend", "device_host", "problem",
                                       "problem_name"};
static const char *const csv_tail[] = {
    "status", "phase", "samples", "time_median", "time_min", "time_mean", "time_rsd",
    "noisy", "compile_time", "device_time", "registers", "shared_bytes", "spill_bytes",
    "warnings", "first_warning", "sm_clock_mhz", "power_w", "temperature_c", "energy_j",
    "energy_status", "flushed_l2", "throttled", "timestamp"};

/* The union of the selected kernels' kernel-specific columns: sizes, then
 * parameters, then metrics. A name that a fixed column (or a column of
 * another kind) has already is prefixed with its kind ("size_N"). */
struct csv_cols {
    int n;
    char **names;
    int *kind;    /* 0 size, 1 parameter, 2 metric */
    char **src;   /* the name in the kernel */
};

static bool csv_fixed(const char *name)
{
    for (size_t i = 0; i < sizeof csv_head / sizeof *csv_head; i++)
        if (strcmp(csv_head[i], name) == 0)
            return true;
    for (size_t i = 0; i < sizeof csv_tail / sizeof *csv_tail; i++)
        if (strcmp(csv_tail[i], name) == 0)
            return true;
    return strcmp(name, "config") == 0 || strcmp(name, "message") == 0;
}

static void csv_cols_add(struct csv_cols *c, const char *name, int kind)
{
    for (int i = 0; i < c->n; i++)
        if (c->kind[i] == kind && strcmp(c->src[i], name) == 0)
            return;
    static const char *const prefix[] = {"size_", "param_", "metric_"};
    /* A name taken (a fixed column, or an earlier one's) gets its kind's
     * prefix, then the prefix again until it is free: the parameters
     * "param_kernel" and "kernel" become param_kernel and param_param_kernel. */
    char *col = tf_xstrdup(name);
    for (;;) {
        bool taken = csv_fixed(col);
        for (int i = 0; i < c->n && !taken; i++)
            taken = strcmp(c->names[i], col) == 0;
        if (!taken)
            break;
        char *longer = tf_xasprintf("%s%s", prefix[kind], col);
        free(col);
        col = longer;
    }
    c->names = tf_xrealloc(c->names, sizeof *c->names * (size_t)(c->n + 1));
    c->kind = tf_xrealloc(c->kind, sizeof *c->kind * (size_t)(c->n + 1));
    c->src = tf_xrealloc(c->src, sizeof *c->src * (size_t)(c->n + 1));
    c->names[c->n] = col;
    c->kind[c->n] = kind;
    c->src[c->n] = tf_xstrdup(name);
    c->n++;
}

static void csv_cols_free(struct csv_cols *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->names[i]);
        free(c->src[i]);
    }
    free(c->names);
    free(c->kind);
    free(c->src);
}

static int index_of(char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* The value index of each parameter of `config`: mixed radix, parameter 0
 * most significant (schema/archive.md). */
static void decode(const struct tf_archive_kernel *ak, uint64_t config, int *digits)
{
    for (int i = ak->nparams - 1; i >= 0; i--) {
        digits[i] = (int)(config % (uint64_t)ak->params[i].count);
        config /= (uint64_t)ak->params[i].count;
    }
}

static int param_index(const struct tf_archive_kernel *ak, const char *name)
{
    for (int i = 0; i < ak->nparams; i++)
        if (strcmp(ak->params[i].name, name) == 0)
            return i;
    return -1;
}

static void csv_row(FILE *out, const struct tf_archive *a, const struct tf_archive_kernel *ak,
                    const struct tf_archive_row *row, const struct csv_cols *cols, int *digits)
{
    const struct tf_archive_run *run = &a->runs[row->run];
    const struct tf_device *d = &a->devices[row->device];
    const struct tf_archive_problem *pr = &ak->problems[row->r.problem];
    const struct tf_result *r = &row->r;
    char t[64];
    csv_field(out, ak->name, true);
    csv_int(out, row->run);
    tf_exchange_iso_time(run->start, t, sizeof t);
    csv_field(out, t, false);
    csv_field(out, run->job_name, false);
    csv_int(out, row->device);
    csv_field(out, d->name, false);
    csv_field(out, d->arch, false);
    csv_field(out, d->vendor, false);
    csv_field(out, d->backend, false);
    csv_field(out, d->host, false);
    csv_int(out, r->problem);
    csv_field(out, pr->name, false);
    decode(ak, r->config, digits);
    for (int c = 0; c < cols->n; c++) {
        if (cols->kind[c] != 0)
            continue;
        int s = index_of(ak->size_names, ak->nsizes, cols->src[c]);
        if (s < 0)
            csv_field(out, "", false);
        else
            csv_int(out, pr->sizes[s]);
    }
    snprintf(t, sizeof t, "%llu", (unsigned long long)r->config);
    csv_field(out, t, false);
    for (int c = 0; c < cols->n; c++) {
        if (cols->kind[c] != 1)
            continue;
        int p = param_index(ak, cols->src[c]);
        if (p < 0)
            csv_field(out, "", false);
        else if (ak->params[p].kind == TF_PARAM_INT)
            csv_int(out, ak->params[p].ints[digits[p]]);
        else
            csv_field(out, ak->params[p].strings[digits[p]], false);
    }
    csv_field(out, tf_status_name(r->status), false);
    csv_int(out, r->phase);
    csv_int(out, r->samples);
    csv_num(out, r->time_median);
    csv_num(out, r->time_min);
    csv_num(out, r->time_mean);
    csv_num(out, r->time_rsd);
    csv_int(out, r->noisy);
    csv_num(out, r->compile_time);
    csv_num(out, r->device_time);
    csv_int(out, r->registers);
    csv_int(out, r->shared_bytes);
    csv_int(out, r->spill_bytes);
    csv_int(out, r->warnings);
    csv_field(out, r->first_warning, false);
    csv_num(out, r->sm_clock_mhz);
    csv_num(out, r->power_w);
    csv_num(out, r->temperature_c);
    csv_num(out, r->energy_j);
    csv_field(out, tf_energy_status_name(r->energy_status), false);
    csv_int(out, r->flushed_l2);
    csv_int(out, r->throttled);
    csv_num(out, r->timestamp);
    for (int c = 0; c < cols->n; c++) {
        if (cols->kind[c] != 2)
            continue;
        int m = index_of(ak->metric_names, ak->nmetrics, cols->src[c]);
        if (m < 0)
            csv_field(out, "", false);
        else
            csv_num(out, r->metrics[m]);
    }
    csv_field(out, r->message, false);
    fputc('\n', out);
}

static int write_csv(const struct tf_archive *a, const struct tf_export_options *o, FILE *out)
{
    struct csv_cols cols = {0};
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *ak = &a->kernels[k];
        if (!kernel_selected(ak, o))
            continue;
        for (int i = 0; i < ak->nsizes; i++)
            csv_cols_add(&cols, ak->size_names[i], 0);
        for (int i = 0; i < ak->nparams; i++)
            csv_cols_add(&cols, ak->params[i].name, 1);
        for (int i = 0; i < ak->nmetrics; i++)
            csv_cols_add(&cols, ak->metric_names[i], 2);
    }
    for (size_t i = 0; i < sizeof csv_head / sizeof *csv_head; i++)
        csv_field(out, csv_head[i], i == 0);
    for (int kind = 0; kind < 3; kind++) {
        if (kind == 1)
            csv_field(out, "config", false);
        if (kind == 2)
            for (size_t i = 0; i < sizeof csv_tail / sizeof *csv_tail; i++)
                csv_field(out, csv_tail[i], false);
        for (int c = 0; c < cols.n; c++)
            if (cols.kind[c] == kind)
                csv_field(out, cols.names[c], false);
    }
    csv_field(out, "message", false);
    fputc('\n', out);
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *ak = &a->kernels[k];
        if (!kernel_selected(ak, o))
            continue;
        int *digits = tf_xcalloc((size_t)ak->nparams + 1, sizeof *digits);
        for (uint64_t i = 0; i < ak->nrows; i++)
            if (row_selected(a, ak, &ak->rows[i], o))
                csv_row(out, a, ak, &ak->rows[i], &cols, digits);
        free(digits);
    }
    csv_cols_free(&cols);
    return 0;
}

/* ---------------------------------------------------------------- JSON (the archive) */

static json_t *string_array(char *const *v, int n)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, jstr(v[i]));
    return arr;
}

static json_t *param_values_json(const struct tf_param *p)
{
    json_t *vals = json_array();
    for (int v = 0; v < p->count; v++)
        json_array_append_new(vals, p->kind == TF_PARAM_INT
                                        ? json_integer((json_int_t)p->ints[v])
                                        : jstr(p->strings[v]));
    return vals;
}

/* The configuration of `config` as {name: value} (int parameters as numbers,
 * enum parameters as their strings, or typed as Kernel Tuner would if `typed`). */
static json_t *config_json(const struct tf_archive_kernel *ak, uint64_t config, int *digits,
                           bool typed)
{
    json_t *o = json_object();
    decode(ak, config, digits);
    for (int p = 0; p < ak->nparams; p++) {
        const struct tf_param *pa = &ak->params[p];
        jset(o, pa->name,
             typed ? tf_exchange_param_json(pa, digits[p])
             : pa->kind == TF_PARAM_INT ? json_integer((json_int_t)pa->ints[digits[p]])
                                        : jstr(pa->strings[digits[p]]));
    }
    return o;
}

static json_t *row_json(const struct tf_archive_kernel *ak, const struct tf_archive_row *row,
                        int *digits)
{
    const struct tf_result *r = &row->r;
    json_t *metrics = json_object();
    for (int m = 0; m < ak->nmetrics; m++)
        jset(metrics, ak->metric_names[m], jnum(r->metrics[m]));
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:o, s:s, s:i, s:I}", "run", (json_int_t)row->run,
                          "device", (json_int_t)row->device, "problem", (json_int_t)r->problem,
                          "config", (json_int_t)r->config,
                          "parameters", config_json(ak, r->config, digits, false), "status",
                          tf_status_name(r->status), "phase", (int)r->phase, "samples",
                          (json_int_t)r->samples);
    json_object_set_new(o, "time_median", jnum(r->time_median));
    json_object_set_new(o, "time_min", jnum(r->time_min));
    json_object_set_new(o, "time_mean", jnum(r->time_mean));
    json_object_set_new(o, "time_rsd", jnum(r->time_rsd));
    json_object_set_new(o, "noisy", json_boolean(r->noisy));
    json_object_set_new(o, "compile_time", jnum(r->compile_time));
    json_object_set_new(o, "device_time", jnum(r->device_time));
    json_object_set_new(o, "registers", json_integer(r->registers));
    json_object_set_new(o, "shared_bytes", json_integer((json_int_t)r->shared_bytes));
    json_object_set_new(o, "spill_bytes", json_integer((json_int_t)r->spill_bytes));
    json_object_set_new(o, "warnings", json_integer(r->warnings));
    json_object_set_new(o, "first_warning", jstr(r->first_warning));
    json_object_set_new(o, "sm_clock_mhz", jnum(r->sm_clock_mhz));
    json_object_set_new(o, "power_w", jnum(r->power_w));
    json_object_set_new(o, "temperature_c", jnum(r->temperature_c));
    json_object_set_new(o, "energy_j", jnum(r->energy_j));
    json_object_set_new(o, "energy_status", json_string(tf_energy_status_name(r->energy_status)));
    json_object_set_new(o, "flushed_l2", json_boolean(r->flushed_l2));
    json_object_set_new(o, "throttled", json_boolean(r->throttled));
    json_object_set_new(o, "timestamp", jnum(r->timestamp));
    json_object_set_new(o, "metrics", metrics);
    json_object_set_new(o, "message", jstr(r->message));
    return o;
}

static json_t *run_json(const struct tf_archive_run *run, int id)
{
    char start[40], end[40];
    tf_exchange_iso_time(run->start, start, sizeof start);
    tf_exchange_iso_time(run->end, end, sizeof end);
    return json_pack("{s:i, s:o, s:o, s:s, s:f, s:s, s:f, s:o, s:o, s:I, s:o, s:o}", "id", id,
                     "job_name", jstr(run->job_name), "job_hash", jstr(run->job_hash), "start",
                     start, "start_unix", run->start, "end", end, "end_unix", run->end,
                     "command", jstr(run->command), "slurm_job_id", jstr(run->slurm_job_id),
                     "ranks", (json_int_t)run->ranks, "tunefarm_version",
                     jstr(run->tunefarm_version), "replay_source", jstr(run->replay_source));
}

static json_t *kernel_json(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                           const struct tf_export_options *o, bool *used_runs, bool *used_devices)
{
    json_t *params = json_array(), *problems = json_array(), *results = json_array();
    for (int p = 0; p < ak->nparams; p++)
        json_array_append_new(params, json_pack("{s:o, s:s, s:o}", "name",
                                                jstr(ak->params[p].name), "kind",
                                                ak->params[p].kind == TF_PARAM_INT ? "int" : "enum",
                                                "values", param_values_json(&ak->params[p])));
    for (int p = 0; p < ak->nproblems; p++) {
        const struct tf_archive_problem *pr = &ak->problems[p];
        if (o->problem && strcmp(pr->name, o->problem) != 0)
            continue;
        json_t *sizes = json_object();
        for (int s = 0; s < ak->nsizes; s++)
            jset(sizes, ak->size_names[s], json_integer((json_int_t)pr->sizes[s]));
        json_array_append_new(problems, json_pack("{s:i, s:o, s:o, s:o}", "id", p, "name",
                                                  jstr(pr->name), "sizes", sizes, "default_config",
                                                  pr->has_default
                                                      ? json_integer((json_int_t)pr->default_index)
                                                      : json_null()));
    }
    int *digits = tf_xcalloc((size_t)ak->nparams + 1, sizeof *digits);
    for (uint64_t i = 0; i < ak->nrows; i++) {
        const struct tf_archive_row *row = &ak->rows[i];
        if (!row_selected(a, ak, row, o))
            continue;
        used_runs[row->run] = used_devices[row->device] = true;
        json_array_append_new(results, row_json(ak, row, digits));
    }
    free(digits);
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "name", jstr(ak->name),
                     "source_hash", jstr(ak->source_hash), "parameters", params, "size_names",
                     string_array(ak->size_names, ak->nsizes), "constraints",
                     string_array(ak->constraints, ak->nconstraints), "metric_names",
                     string_array(ak->metric_names, ak->nmetrics), "default_index",
                     ak->has_default ? json_integer((json_int_t)ak->default_index) : json_null(),
                     "problems", problems, "results", results);
}


/* "tunefarm VERSION", for the exports' exported_by. */
static const char *tf_exported_by(void)
{
    static char text[64];
    snprintf(text, sizeof text, "tunefarm %s", tf_version);
    return text;
}

static json_t *archive_json(const struct tf_archive *a, const struct tf_export_options *o)
{
    bool *used_runs = tf_xcalloc((size_t)a->nruns + 1, sizeof *used_runs);
    bool *used_devices = tf_xcalloc((size_t)a->ndevices + 1, sizeof *used_devices);
    json_t *kernels = json_array(), *runs = json_array(), *devices = json_array();
    json_t *plan = json_array();
    for (int k = 0; k < a->nkernels; k++)
        if (kernel_selected(&a->kernels[k], o))
            json_array_append_new(kernels,
                                  kernel_json(a, &a->kernels[k], o, used_runs, used_devices));
    for (int i = 0; i < a->nplans; i++) {
        const struct tf_archive_plan *p = &a->plans[i];
        const struct tf_archive_kernel *ak = &a->kernels[p->kernel];
        if (!kernel_selected(ak, o) || (o->run >= 0 && p->run != (uint32_t)o->run) ||
            (o->problem && strcmp(ak->problems[p->problem].name, o->problem) != 0) ||
            !device_selected(&a->devices[p->device], o->device))
            continue;
        used_runs[p->run] = used_devices[p->device] = true;
        json_array_append_new(plan, json_pack("{s:I, s:o, s:I, s:I, s:I}", "run",
                                              (json_int_t)p->run, "kernel", jstr(ak->name), "problem",
                                              (json_int_t)p->problem, "device",
                                              (json_int_t)p->device, "planned",
                                              (json_int_t)p->planned));
    }
    for (int r = 0; r < a->nruns; r++)
        if (used_runs[r])
            json_array_append_new(runs, run_json(&a->runs[r], r));
    for (int d = 0; d < a->ndevices; d++)
        if (used_devices[d]) {
            json_t *dj = tf_exchange_device_json(&a->devices[d]);
            json_object_set_new(dj, "id", json_integer(d));
            json_array_append_new(devices, dj);
        }
    free(used_runs);
    free(used_devices);
    char created[40];
    tf_exchange_iso_time(a->created, created, sizeof created);
    json_t *sel = json_pack("{s:o, s:o, s:o, s:o}", "kernel",
                            jstr(o->kernel), "problem", jstr(o->problem), "device",
                            jstr(o->device), "run",
                            o->run >= 0 ? json_integer(o->run) : json_null());
    json_t *meta = json_pack("{s:s, s:i, s:o, s:s, s:f, s:o, s:I}", "format", TF_ARCHIVE_FORMAT,
                             "schema_version", TF_ARCHIVE_SCHEMA_VERSION, "archive_id",
                             jstr(a->id), "created", created, "created_unix", a->created,
                             "tunefarm_version", jstr(a->tunefarm_version), "checkpoint",
                             (json_int_t)a->checkpoint);
    return json_pack("{s:s, s:i, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "format",
                     "tunefarm-export", "version", 1, "exported_by", tf_exported_by(),
                     "source", jstr(o->archive_path),
                     "selection", sel, "archive", meta, "devices", devices, "runs", runs,
                     "plan", plan, "kernels", kernels);
}

/* ---------------------------------------------------------------- one kernel, problem, class */

/* The rows a T4 or Kernel Tuner file holds: one per configuration. */
struct group {
    const struct tf_archive_kernel *ak;
    uint32_t problem;
    const struct tf_device *device; /* one device of the class */
    uint64_t n;
    const struct tf_archive_row **rows; /* by configuration */
};

/* Which of two rows of one configuration a file keeps: strict over single over
 * screening, then the later timestamp (run numbers follow merge order, not
 * time), then the later run. */
static int phase_rank(int phase)
{
    return phase == 2 ? 2 : phase == 0 ? 1 : 0;
}

static int row_order(const void *x, const void *y)
{
    const struct tf_archive_row *a = *(const struct tf_archive_row *const *)x;
    const struct tf_archive_row *b = *(const struct tf_archive_row *const *)y;
    if (a->r.config != b->r.config)
        return a->r.config < b->r.config ? -1 : 1;
    int pa = phase_rank(a->r.phase), pb = phase_rank(b->r.phase);
    if (pa != pb)
        return pa > pb ? -1 : 1;
    /* A missing time (NaN) reads as the oldest: the order stays total. */
    const double ta = isfinite(a->r.timestamp) ? a->r.timestamp : -INFINITY;
    const double tb = isfinite(b->r.timestamp) ? b->r.timestamp : -INFINITY;
    if (ta != tb)
        return ta > tb ? -1 : 1;
    return (a->run < b->run) - (a->run > b->run);
}

static void group_free(struct group *g)
{
    free(g->rows);
    memset(g, 0, sizeof *g);
}

static int group_of(const struct tf_archive *a, const struct tf_export_options *o, struct group *g,
                    const char *format, struct tf_error *err)
{
    memset(g, 0, sizeof *g);
    /* The first kernel, problem and class seen, and a second one of each if any:
     * the message names the widest difference (kernel, then problem, then class). */
    const struct tf_archive_kernel *k2 = NULL;
    int p2 = -1;
    char key[256] = "", key2[256] = "", other[256], what[700];
    uint64_t nrows = 0;
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *ak = &a->kernels[k];
        if (!kernel_selected(ak, o))
            continue;
        for (uint64_t i = 0; i < ak->nrows; i++) {
            const struct tf_archive_row *row = &ak->rows[i];
            if (!row_selected(a, ak, row, o))
                continue;
            tf_device_class_key(&a->devices[row->device], other, sizeof other);
            if (g->ak == NULL) {
                g->ak = ak;
                g->problem = row->r.problem;
                g->device = &a->devices[row->device];
                tf_strlcpy(key, other, sizeof key);
            }
            if (ak != g->ak && k2 == NULL)
                k2 = ak;
            if (ak == g->ak && row->r.problem != g->problem && p2 < 0)
                p2 = (int)row->r.problem;
            if (strcmp(key, other) != 0 && !key2[0])
                tf_strlcpy(key2, other, sizeof key2);
            nrows++;
        }
    }
    if (g->ak == NULL)
        return tf_error_set(err, TF_ERR_SCHEMA, "the selection holds no result rows: nothing "
                            "to write as %s (check --kernel, --problem, --device and --run)",
                            format);
    const char *differs = k2 ? "kernels" : p2 >= 0 ? "problems" : key2[0] ? "device classes" : NULL;
    if (differs) {
        const struct tf_archive_problem *pr = g->ak->problems;
        if (k2)
            snprintf(what, sizeof what, "%s and %s: choose one with --kernel", g->ak->name,
                     k2->name);
        else if (p2 >= 0)
            snprintf(what, sizeof what, "%s and %s%s: choose one with --problem",
                     pr[g->problem].name, pr[p2].name,
                     strcmp(pr[g->problem].name, pr[p2].name) == 0
                         ? " (the same name with other sizes: choose a run with --run)" : "");
        else
            snprintf(what, sizeof what, "%s and %s: choose one with --device NAME", key, key2);
        memset(g, 0, sizeof *g);
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "a %s file holds one kernel, problem and device class, but the "
                            "selection has rows of several %s: %s", format, differs, what);
    }
    const struct tf_archive_row **all = tf_xcalloc(nrows, sizeof *all);
    uint64_t n = 0;
    for (uint64_t i = 0; i < g->ak->nrows; i++)
        if (row_selected(a, g->ak, &g->ak->rows[i], o))
            all[n++] = &g->ak->rows[i];
    qsort(all, n, sizeof *all, row_order);
    g->rows = tf_xcalloc(n, sizeof *g->rows);
    for (uint64_t i = 0; i < n; i++)
        if (i == 0 || all[i]->r.config != all[i - 1]->r.config)
            g->rows[g->n++] = all[i];
    free(all);
    return 0;
}

/* The "tunefarm" object of T4 and Kernel Tuner files: what import needs to
 * give the kernel back its shape and the device its description. */
static json_t *group_extension(const struct tf_archive *a, const struct group *g)
{
    const struct tf_archive_kernel *ak = g->ak;
    const struct tf_archive_problem *pr = &ak->problems[g->problem];
    json_t *params = json_array(), *sizes = json_array();
    for (int p = 0; p < ak->nparams; p++)
        json_array_append_new(params, json_pack("{s:o, s:s, s:o}", "name",
                                                jstr(ak->params[p].name), "kind",
                                                ak->params[p].kind == TF_PARAM_INT ? "int" : "enum",
                                                "values", param_values_json(&ak->params[p])));
    for (int s = 0; s < ak->nsizes; s++)
        json_array_append_new(sizes, json_integer((json_int_t)pr->sizes[s]));
    return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "exported_by",
                     tf_exported_by(), "archive_id", jstr(a->id), "kernel", jstr(ak->name),
                     "problem", jstr(pr->name), "size_names", string_array(ak->size_names, ak->nsizes), "sizes",
                     sizes, "parameters", params, "metric_names",
                     string_array(ak->metric_names, ak->nmetrics), "device",
                     tf_exchange_device_json(g->device));
}

/* Kernel Tuner's problem_size: the only size as a number, several as a list. */
static json_t *problem_size_json(const struct group *g)
{
    const struct tf_archive_kernel *ak = g->ak;
    const int64_t *sizes = ak->problems[g->problem].sizes;
    if (ak->nsizes == 1 && strcmp(ak->size_names[0], "problem_size") == 0)
        return json_integer((json_int_t)sizes[0]);
    json_t *arr = json_array();
    for (int s = 0; s < ak->nsizes; s++)
        json_array_append_new(arr, json_integer((json_int_t)sizes[s]));
    return arr;
}

/* The Kernel Tuner failure name of a row: the one it was imported with
 * ("Kernel Tuner: X" in its message), else its status's. */
static const char *kt_failure_of(const struct tf_result *r, char *buf, size_t cap)
{
    static const char prefix[] = "Kernel Tuner: ";
    if (strncmp(r->message, prefix, sizeof prefix - 1) == 0 &&
        tf_exchange_kt_status(r->message + sizeof prefix - 1) == (int)r->status) {
        tf_strlcpy(buf, r->message + sizeof prefix - 1, cap);
        return buf;
    }
    return tf_exchange_kt_failure(r->status);
}

static json_t *ktcache_json(const struct tf_archive *a, const struct group *g)
{
    const struct tf_archive_kernel *ak = g->ak;
    json_t *keys = json_array(), *params = json_object(), *cache = json_object();
    for (int p = 0; p < ak->nparams; p++) {
        json_t *vals = json_array();
        for (int v = 0; v < ak->params[p].count; v++)
            json_array_append_new(vals, tf_exchange_param_json(&ak->params[p], v));
        json_array_append_new(keys, jstr(ak->params[p].name));
        jset(params, ak->params[p].name, vals);
    }
    int *digits = tf_xcalloc((size_t)ak->nparams + 1, sizeof *digits);
    for (uint64_t i = 0; i < g->n; i++) {
        const struct tf_result *r = &g->rows[i]->r;
        json_t *e = config_json(ak, r->config, digits, true);
        char key[4096], t[64];
        size_t used = 0;
        for (int p = 0; p < ak->nparams && used < sizeof key; p++) {
            tf_exchange_param_key(&ak->params[p], digits[p], t, sizeof t);
            used += (size_t)snprintf(key + used, sizeof key - used, "%s%s", p ? "," : "", t);
        }
        char fbuf[64];
        const char *failure = r->status == TF_STATUS_OK ? NULL : kt_failure_of(r, fbuf, sizeof fbuf);
        json_object_set_new(e, "time", failure ? json_string(failure) : jms(r->time_mean));
        json_object_set_new(e, "compile_time", json_real(isfinite(r->compile_time)
                                                             ? r->compile_time * 1e3 : 0));
        /* tunefarm counts its verified launch in device_time (benchmark_time here). */
        json_object_set_new(e, "verification_time", json_real(0));
        json_object_set_new(e, "benchmark_time", json_real(isfinite(r->device_time)
                                                               ? r->device_time * 1e3 : 0));
        /* A metric never takes the place of a key Kernel Tuner reads (an
         * archive from before kernel files were refused such names, or a T4
         * import's measurement "benchmark_time"): left out. */
        for (int m = 0; m < ak->nmetrics; m++)
            if (isfinite(r->metrics[m]) && !json_object_get(e, ak->metric_names[m]) &&
                !tf_exchange_kt_key(ak->metric_names[m]))
                jset(e, ak->metric_names[m], json_real(r->metrics[m]));
        tf_exchange_python_time(r->timestamp, t, sizeof t);
        if (t[0])
            json_object_set_new(e, "timestamp", json_string(t));
        jset(cache, key, e);
    }
    free(digits);
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o}", "device_name",
                     jstr(g->device->name), "kernel_name", jstr(ak->name), "problem_size", problem_size_json(g),
                     "tune_params_keys", keys, "tune_params", params, "objective", "time",
                     "cache", cache, "tunefarm", group_extension(a, g));
}

/* True if `list` holds a measurement called `name`. */
static bool measurement_named(const json_t *list, const char *name)
{
    for (size_t i = 0; i < json_array_size(list); i++)
        if (strcmp(json_string_value(json_object_get(json_array_get(list, i), "name")), name) == 0)
            return true;
    return false;
}

static void measurement(json_t *list, const char *name, json_t *value, const char *unit)
{
    if (json_is_null(value)) { /* unknown (NaN): left out */
        json_decref(value);
        return;
    }
    json_array_append_new(list, json_pack("{s:o, s:o, s:s}", "name", jstr(name), "value", value,
                                          "unit", unit));
}

static json_t *t4_json(const struct tf_archive *a, const struct group *g)
{
    const struct tf_archive_kernel *ak = g->ak;
    json_t *results = json_array();
    int *digits = tf_xcalloc((size_t)ak->nparams + 1, sizeof *digits);
    for (uint64_t i = 0; i < g->n; i++) {
        const struct tf_result *r = &g->rows[i]->r;
        const bool ok = r->status == TF_STATUS_OK;
        json_t *times = json_object(), *ms = json_array(), *res = json_object();
        char t[64], fbuf[64];
        tf_exchange_python_time(r->timestamp, t, sizeof t);
        if (t[0])
            json_object_set_new(res, "timestamp", json_string(t));
        json_object_set_new(res, "configuration", config_json(ak, r->config, digits, true));
        /* The schema's name and the one Kernel Tuner 1.5 writes. */
        const double compile = isfinite(r->compile_time) ? r->compile_time * 1e3 : 0;
        json_object_set_new(times, "compilation_time", json_real(compile));
        json_object_set_new(times, "compilation", json_real(compile));
        if (isfinite(r->device_time))
            json_object_set_new(times, "benchmark", json_real(r->device_time * 1e3));
        json_object_set_new(times, "runtimes", json_array()); /* samples are not kept */
        json_object_set_new(res, "times", times);
        json_object_set_new(res, "invalidity", json_string(tf_exchange_t4_invalidity(r->status)));
        json_object_set_new(res, "correctness", json_integer(ok ? 1 : 0));
        measurement(ms, "time", ok ? jms(r->time_mean) : json_string(kt_failure_of(r, fbuf, sizeof fbuf)),
                    "ms");
        measurement(ms, "status", json_string(tf_status_name(r->status)), "");
        if (ok) {
            measurement(ms, "time_median", jms(r->time_median), "ms");
            measurement(ms, "time_min", jms(r->time_min), "ms");
            measurement(ms, "time_rsd", jnum(r->time_rsd), "");
            measurement(ms, "samples", json_integer((json_int_t)r->samples), "");
        }
        if (isfinite(r->energy_j))
            measurement(ms, "energy_j", json_real(r->energy_j), "J");
        if (isfinite(r->power_w))
            measurement(ms, "power_w", json_real(r->power_w), "W");
        if (isfinite(r->sm_clock_mhz))
            measurement(ms, "sm_clock_mhz", json_real(r->sm_clock_mhz), "MHz");
        if (isfinite(r->temperature_c))
            measurement(ms, "temperature_c", json_real(r->temperature_c), "C");
        if (r->registers >= 0)
            measurement(ms, "registers", json_integer(r->registers), "");
        if (r->shared_bytes >= 0)
            measurement(ms, "shared_bytes", json_integer((json_int_t)r->shared_bytes), "B");
        if (r->spill_bytes >= 0)
            measurement(ms, "spill_bytes", json_integer((json_int_t)r->spill_bytes), "B");
        if (r->warnings >= 0)
            measurement(ms, "warnings", json_integer(r->warnings), "");
        if (r->first_warning[0])
            measurement(ms, "first_warning", jstr(r->first_warning), "");
        /* Always known. Flags as 0/1: the schema's values are numbers, strings or lists. */
        measurement(ms, "noisy", json_integer(r->noisy), "");
        measurement(ms, "flushed_l2", json_integer(r->flushed_l2), "");
        measurement(ms, "throttled", json_integer(r->throttled), "");
        measurement(ms, "phase", json_integer(r->phase), "");
        measurement(ms, "energy_status", json_string(tf_energy_status_name(r->energy_status)), "");
        if (r->message[0])
            measurement(ms, "message", jstr(r->message), "");
        /* Metrics last, each only if no measurement above has its name
         * ("time", always written: an archive from before kernel files were
         * refused that name): a reader takes the last of two. */
        for (int m = 0; m < ak->nmetrics; m++)
            if (isfinite(r->metrics[m]) && !measurement_named(ms, ak->metric_names[m]))
                measurement(ms, ak->metric_names[m], json_real(r->metrics[m]), "");
        json_object_set_new(res, "measurements", ms);
        json_object_set_new(res, "objectives", json_pack("[s]", "time"));
        json_array_append_new(results, res);
    }
    free(digits);
    json_t *meta = json_pack("{s:s, s:o}", "timeunit", "milliseconds", "tunefarm",
                             group_extension(a, g));
    return json_pack("{s:s, s:o, s:o}", "schema_version", T4_SCHEMA_VERSION, "metadata", meta,
                     "results", results);
}

/* ---------------------------------------------------------------- output */

static int dump(json_t *doc, FILE *out, size_t flags, struct tf_error *err)
{
    if (doc == NULL)
        return tf_error_set(err, TF_ERR_NOMEM, "cannot build the JSON document");
    int rc = json_dumpf(doc, out, flags | JSON_REAL_PRECISION(17));
    json_decref(doc);
    if (rc != 0 || fputc('\n', out) == EOF)
        return tf_error_set(err, TF_ERR_IO, "cannot write the output: %s", strerror(errno));
    return 0;
}

int tf_export_write(const struct tf_archive *a, const struct tf_export_options *o, FILE *out,
                    struct tf_error *err)
{
    if (tf_export_check(a, o, err) != 0)
        return -1;
    struct group g;
    int rc;
    switch (o->format) {
    case TF_EXPORT_CSV:
        rc = write_csv(a, o, out);
        break;
    case TF_EXPORT_JSON:
        rc = dump(archive_json(a, o), out, JSON_INDENT(1), err);
        break;
    case TF_EXPORT_T4:
        if (group_of(a, o, &g, "T4", err) != 0)
            return -1;
        rc = dump(t4_json(a, &g), out, JSON_INDENT(1), err);
        group_free(&g);
        break;
    case TF_EXPORT_KTCACHE:
        if (group_of(a, o, &g, "Kernel Tuner cache", err) != 0)
            return -1;
        /* Compact: Kernel Tuner checks a cache is closed by its last three
         * characters ("}}}" or "}\n}"), which a compact dump ends with. */
        rc = dump(ktcache_json(a, &g), out, JSON_COMPACT, err);
        group_free(&g);
        break;
    default:
        return tf_error_set(err, TF_ERR_SCHEMA, "unknown export format %d", (int)o->format);
    }
    if (rc == 0 && (fflush(out) != 0 || ferror(out)))
        rc = tf_error_set(err, TF_ERR_IO, "cannot write the output: %s", strerror(errno));
    return rc;
}

int tf_export_t4_metadata(const struct tf_archive *a, const struct tf_export_options *o,
                          FILE *out, struct tf_error *err)
{
    struct group g;
    if (tf_export_check(a, o, err) != 0 || group_of(a, o, &g, "T4", err) != 0)
        return -1;
    json_t *hw = json_array(), *query = json_object(), *req = json_array();
    /* Every device of the class the rows were measured on, and the tunefarm
     * versions of the runs that measured them. */
    bool *dev = tf_xcalloc((size_t)a->ndevices + 1, sizeof *dev);
    bool *run = tf_xcalloc((size_t)a->nruns + 1, sizeof *run);
    for (uint64_t i = 0; i < g.n; i++)
        dev[g.rows[i]->device] = run[g.rows[i]->run] = true;
    for (int d = 0; d < a->ndevices; d++)
        if (dev[d]) {
            const struct tf_device *x = &a->devices[d];
            json_array_append_new(hw, json_pack("{s:s, s:o, s:o, s:o, s:o, s:I}", "class",
                                                "display", "vendor", jstr(x->vendor), "product",
                                                jstr(x->name), "handle", jstr(x->pci_bus), "host",
                                                jstr(x->host), "size",
                                                (json_int_t)x->memory_bytes));
            char id[32];
            snprintf(id, sizeof id, "%d", d);
            json_object_set_new(query, id, tf_exchange_device_json(x));
        }
    for (int r = 0; r < a->nruns; r++) {
        bool seen = false;
        for (int q = 0; q < r && !seen; q++)
            seen = run[q] && strcmp(a->runs[q].tunefarm_version, a->runs[r].tunefarm_version) == 0;
        if (run[r] && !seen) {
            char v[64];
            snprintf(v, sizeof v, "tunefarm==%s", a->runs[r].tunefarm_version);
            json_array_append_new(req, jstr(v));
        }
    }
    free(dev);
    free(run);
    group_free(&g);
    json_t *doc = json_pack("{s:s, s:{s:{s:s, s:o}, s:{s:{s:o}, s:o}}}", "schema_version",
                            T4_SCHEMA_VERSION, "metadata", "hardware", "operating_system",
                            "Linux", "hardware_description", hw, "environment", "device_query",
                            "tunefarm", query, "requirements", req);
    int rc = dump(doc, out, JSON_INDENT(1), err);
    if (rc == 0 && (fflush(out) != 0 || ferror(out)))
        rc = tf_error_set(err, TF_ERR_IO, "cannot write the output: %s", strerror(errno));
    return rc;
}

void tf_export_metadata_path(const char *path, char *out, size_t cap)
{
    size_t n = strlen(path);
    if (n > 5 && strcmp(path + n - 5, ".json") == 0)
        snprintf(out, cap, "%.*s.metadata.json", (int)(n - 5), path);
    else
        snprintf(out, cap, "%s.metadata.json", path);
}

/* Write one file atomically with `write_fn` (replace.h: where it goes). */
static int write_atomic(const char *path, const struct tf_archive *a,
                        const struct tf_export_options *o,
                        int (*write_fn)(const struct tf_archive *, const struct tf_export_options *,
                                        FILE *, struct tf_error *),
                        struct tf_error *err)
{
    struct tf_replace r;
    if (tf_replace_plan(&r, path, TF_REPLACE_TEXT, err) != 0)
        return -1;
    int fd = tf_replace_open(&r, path, err);
    if (fd < 0) {
        tf_replace_discard(&r);
        return -1;
    }
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        tf_replace_discard(&r);
        return tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    }
    int rc = write_fn(a, o, f, err);
    /* fsync: a file's only (a pipe or device written in place refuses it) */
    if (rc == 0 && (fflush(f) != 0 || ferror(f) || (r.tmp != NULL && fsync(fileno(f)) != 0)))
        rc = tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    if (fclose(f) != 0 && rc == 0)
        rc = tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    if (rc == 0)
        rc = tf_replace_finish(&r, path, err);
    tf_replace_discard(&r);
    return rc;
}

int tf_export_to_path(const struct tf_archive *a, const struct tf_export_options *o,
                      const char *path, struct tf_error *err)
{
    if (tf_export_check(a, o, err) != 0)
        return -1;
    if (o->format == TF_EXPORT_T4) {
        /* Two files: a device or a pipe cannot hold the second one beside it. */
        struct tf_replace r;
        if (tf_replace_plan(&r, path, TF_REPLACE_TEXT, err) != 0)
            return -1;
        const bool in_place = r.tmp == NULL;
        tf_replace_discard(&r);
        if (in_place)
            return tf_error_set(err, TF_ERR_IO,
                                "cannot write T4 to '%s': T4 is two files (results and "
                                "NAME.metadata.json beside them), so -o must name a file",
                                path);
        /* The metadata first: on failure no results file stands without it. */
        char meta[4200];
        tf_export_metadata_path(path, meta, sizeof meta);
        if (write_atomic(meta, a, o, tf_export_t4_metadata, err) != 0)
            return -1;
    }
    return write_atomic(path, a, o, tf_export_write, err);
}
