/* import.c - Kernel Tuner caches and T4 results into archive models (import.h).
 *
 * A file is first read into a draft (kernel name, parameters, sizes,
 * metrics, device, one tf_result per configuration), then made an archive
 * model through archive.h's calls, which check that the kernel can be laid
 * out (names that collide with columns, enum values too long for theirs).
 * Parameters: a Kernel Tuner cache lists them (tune_params_keys,
 * tune_params); a T4 file does not, so they are gathered from the
 * configurations (numbers in ascending order, other values in order of
 * appearance). A parameter whose values are all JSON integers is an int
 * parameter; any other is an enum whose values are the texts Kernel Tuner
 * keys its cache with (Python's str(): "0.5", "True"), so that an export
 * gives back the same keys. Files tunefarm exported carry a "tunefarm" object
 * (schema/export.md) that gives back the kernel's exact shape, its problem
 * and its device. Metrics are the numeric keys of an entry that are neither
 * parameters nor Kernel Tuner's own (T4: measurements other than time and
 * tunefarm's), at most TF_MAX_METRICS, in order of appearance. */
#include "import.h"
#include "version.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exchange.h"
#include "hash.h"
#include "kernel.h"
#include "ktcache.h"
#include "result.h"


/* What a file says, before it becomes an archive model. */
struct draft {
    const char *path;
    bool t4;                  /* a T4 file (else a Kernel Tuner cache) */
    char kernel[TF_KERNEL_NAME_MAX + 1]; /* what a kernel file allows, and the NUL */
    char problem[TF_PROBLEM_NAME_MAX + 1];
    int nparams;
    struct tf_param *params;
    int nsizes;
    char **size_names;
    int64_t *sizes;
    int nmetrics;
    char *metric_names[TF_MAX_METRICS];
    struct tf_device device;
    char ***keys;             /* per parameter, each value's key text (digit_of), built once */
    uint64_t nrows, cap;
    struct tf_result *rows;   /* r.problem 0; r.kernel unused */
    double first, last;       /* timestamps of the earliest and latest row; 0 if none */
    char dropped[256];        /* metrics left out (more than TF_MAX_METRICS) */
};

static void draft_free(struct draft *d)
{
    for (int p = 0; d->keys && p < d->nparams; p++) {
        for (int v = 0; v < d->params[p].count; v++)
            free(d->keys[p][v]);
        free(d->keys[p]);
    }
    free(d->keys);
    for (int p = 0; p < d->nparams; p++) {
        free(d->params[p].name);
        free(d->params[p].ints);
        for (int v = 0; d->params[p].strings && v < d->params[p].count; v++)
            free(d->params[p].strings[v]);
        free(d->params[p].strings);
    }
    free(d->params);
    for (int s = 0; s < d->nsizes; s++)
        free(d->size_names[s]);
    free(d->size_names);
    free(d->sizes);
    for (int m = 0; m < d->nmetrics; m++)
        free(d->metric_names[m]);
    free(d->rows);
}

static int bad(struct tf_error *err, const struct draft *d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(struct tf_error *err, const struct draft *d, const char *fmt, ...)
{
    char msg[1000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tf_error_at(err, TF_ERR_SCHEMA, d->path, 0, 0, "%s", msg);
}

static struct tf_result *new_row(struct draft *d, uint64_t config)
{
    if (d->nrows == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 1024;
        d->rows = tf_xrealloc(d->rows, d->cap * sizeof *d->rows);
    }
    struct tf_result *r = &d->rows[d->nrows++];
    tf_result_init(r, 0, 0, config, TF_STATUS_OK);
    r->phase = 0;
    r->energy_status = TF_ENERGY_COUNT; /* the file did not say: to_archive decides */
    return r;
}

static void seen_time(struct draft *d, double t)
{
    if (!(t > 0))
        return;
    if (d->first == 0 || t < d->first)
        d->first = t;
    if (t > d->last)
        d->last = t;
}

/* A timestamp member `v` (a string, or Unix seconds): 0 and *t, NAN if absent. */
static int read_timestamp(const json_t *v, const char *where, struct draft *d, double *t,
                          struct tf_error *err)
{
    *t = NAN;
    if (v == NULL || json_is_null(v))
        return 0;
    if (json_is_number(v) && json_number_value(v) > 0) {
        *t = json_number_value(v);
    } else if (!json_is_string(v) || tf_exchange_parse_time(json_string_value(v), t) != 0) {
        return bad(err, d, "%s.timestamp: expected a time such as \"2023-12-22 "
                   "09:54:05.502007+00:00\"", where);
    }
    if (!tf_archive_time_ok(*t))
        return bad(err, d, "%s.timestamp: %.17g s after 1970 is not a date from 1970 to the year "
                   "9999%s", where, *t, *t > 0 ? " (milliseconds given for seconds?)" : "");
    seen_time(d, *t);
    return 0;
}

/* ---------------------------------------------------------------- parameters */

/* True if `s` is a whole number as JSON writes one ("-12"), into *v. */
static bool integer_text(const char *s, int64_t *v)
{
    const char *p = s + (*s == '-');
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] != '\0'))
        return false;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9')
            return false;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *v = x;
    return true;
}

/* Python's str() of a JSON value (how Kernel Tuner keys it), or false for a
 * value that is no parameter value (null, array, object). */
static bool value_key(const json_t *v, char *out, size_t cap)
{
    if (json_is_integer(v))
        snprintf(out, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        tf_exchange_python_float(json_real_value(v), out, cap);
    else if (json_is_boolean(v))
        snprintf(out, cap, "%s", json_is_true(v) ? "True" : "False");
    else if (json_is_string(v))
        tf_exchange_utf8(json_string_value(v), out, cap);
    else
        return false;
    return true;
}

/* The digit of the value keyed `key` in `p`, or -1. */
static int digit_of(const struct tf_param *p, const char *key)
{
    char t[256];
    for (int v = 0; v < p->count; v++) {
        tf_exchange_param_key(p, v, t, sizeof t);
        if (strcmp(t, key) == 0)
            return v;
    }
    return -1;
}

/* The digit of the value keyed `key` in parameter `p` of the draft, or -1;
 * the key texts are made once (a T4 file repeats every value thousands of times). */
static int draft_digit(struct draft *d, int p, const char *key)
{
    if (d->keys == NULL) {
        d->keys = tf_xcalloc((size_t)d->nparams, sizeof *d->keys);
        for (int q = 0; q < d->nparams; q++) {
            d->keys[q] = tf_xcalloc((size_t)d->params[q].count, sizeof **d->keys);
            for (int v = 0; v < d->params[q].count; v++) {
                char t[256];
                tf_exchange_param_key(&d->params[q], v, t, sizeof t);
                d->keys[q][v] = tf_xstrdup(t);
            }
        }
    }
    for (int v = 0; v < d->params[p].count; v++)
        if (strcmp(d->keys[p][v], key) == 0)
            return v;
    return -1;
}

/* A parameter from value keys: int if every one is a JSON integer. Owns nothing of `keys`. */
static void param_from_keys(struct tf_param *p, const char *name, char *const *keys, int n)
{
    memset(p, 0, sizeof *p);
    p->name = tf_xstrdup(name);
    p->count = n;
    bool ints = true;
    int64_t x;
    for (int i = 0; i < n && ints; i++)
        ints = integer_text(keys[i], &x);
    p->kind = ints ? TF_PARAM_INT : TF_PARAM_ENUM;
    if (ints) {
        p->ints = tf_xcalloc((size_t)n, sizeof *p->ints);
        for (int i = 0; i < n; i++)
            integer_text(keys[i], &p->ints[i]);
    } else {
        p->strings = tf_xcalloc((size_t)n, sizeof *p->strings);
        for (int i = 0; i < n; i++)
            p->strings[i] = tf_xstrdup(keys[i]);
    }
}

/* The parameters of a "tunefarm" object (written by tunefarm's export):
 * [{name, kind: int|enum, values}]. */
static int params_from_ext(const json_t *list, struct draft *d, struct tf_error *err)
{
    if (!json_is_array(list) || json_array_size(list) == 0)
        return bad(err, d, "tunefarm.parameters: expected a non-empty list of {name, kind, "
                   "values}");
    d->nparams = (int)json_array_size(list);
    d->params = tf_xcalloc((size_t)d->nparams, sizeof *d->params);
    for (int p = 0; p < d->nparams; p++) {
        const json_t *e = json_array_get(list, (size_t)p);
        const json_t *name = json_object_get(e, "name"), *vals = json_object_get(e, "values");
        const char *kind = json_string_value(json_object_get(e, "kind"));
        if (!json_is_string(name) || !kind || (strcmp(kind, "int") && strcmp(kind, "enum")) ||
            !json_is_array(vals) || json_array_size(vals) == 0)
            return bad(err, d, "tunefarm.parameters[%d]: expected {name, kind: int or enum, "
                       "values: a non-empty list}", p);
        struct tf_param *pa = &d->params[p];
        pa->name = tf_xstrdup(json_string_value(name));
        pa->kind = strcmp(kind, "int") == 0 ? TF_PARAM_INT : TF_PARAM_ENUM;
        pa->count = (int)json_array_size(vals);
        if (pa->kind == TF_PARAM_INT)
            pa->ints = tf_xcalloc((size_t)pa->count, sizeof *pa->ints);
        else
            pa->strings = tf_xcalloc((size_t)pa->count, sizeof *pa->strings);
        for (int v = 0; v < pa->count; v++) {
            const json_t *x = json_array_get(vals, (size_t)v);
            if (pa->kind == TF_PARAM_INT && json_is_integer(x))
                pa->ints[v] = (int64_t)json_integer_value(x);
            else if (pa->kind == TF_PARAM_ENUM && json_is_string(x))
                pa->strings[v] = tf_xstrdup(json_string_value(x));
            else
                return bad(err, d, "tunefarm.parameters[%d].values[%d]: expected %s", p, v,
                           pa->kind == TF_PARAM_INT ? "a whole number" : "a string");
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- the "tunefarm" object */

static int ext_text(const json_t *ext, const char *key, char *out, size_t cap, struct draft *d,
                    struct tf_error *err)
{
    const json_t *v = json_object_get(ext, key);
    if (v == NULL)
        return 0;
    if (!json_is_string(v) || strlen(json_string_value(v)) >= cap || !json_string_value(v)[0])
        return bad(err, d, "tunefarm.%s: expected a non-empty string of at most %zu bytes", key,
                   cap - 1);
    tf_strlcpy(out, json_string_value(v), cap);
    return 0;
}

/* Kernel, problem, sizes, metric names and device of a file tunefarm wrote. */
static int read_ext(const json_t *ext, struct draft *d, struct tf_error *err)
{
    if (ext == NULL)
        return 0;
    if (!json_is_object(ext))
        return bad(err, d, "tunefarm: expected an object (what tunefarm's export writes)");
    if (ext_text(ext, "kernel", d->kernel, sizeof d->kernel, d, err) ||
        ext_text(ext, "problem", d->problem, sizeof d->problem, d, err))
        return -1;
    const json_t *names = json_object_get(ext, "size_names"), *sizes = json_object_get(ext, "sizes");
    if (names || sizes) {
        if (!json_is_array(names) || !json_is_array(sizes) ||
            json_array_size(names) != json_array_size(sizes))
            return bad(err, d, "tunefarm.size_names and tunefarm.sizes: expected two lists of "
                       "the same length");
        d->nsizes = (int)json_array_size(names);
        d->size_names = tf_xcalloc((size_t)d->nsizes + 1, sizeof *d->size_names);
        d->sizes = tf_xcalloc((size_t)d->nsizes + 1, sizeof *d->sizes);
        for (int s = 0; s < d->nsizes; s++) {
            const json_t *n = json_array_get(names, (size_t)s), *v = json_array_get(sizes, (size_t)s);
            if (!json_is_string(n) || !json_is_integer(v)) {
                d->nsizes = s;
                return bad(err, d, "tunefarm.size_names[%d] / sizes[%d]: expected a name and a "
                           "whole number", s, s);
            }
            d->size_names[s] = tf_xstrdup(json_string_value(n));
            d->sizes[s] = (int64_t)json_integer_value(v);
        }
    }
    const json_t *metrics = json_object_get(ext, "metric_names");
    if (metrics) {
        if (!json_is_array(metrics) || json_array_size(metrics) > TF_MAX_METRICS)
            return bad(err, d, "tunefarm.metric_names: expected a list of at most %d names",
                       TF_MAX_METRICS);
        for (size_t m = 0; m < json_array_size(metrics); m++) {
            const char *n = json_string_value(json_array_get(metrics, m));
            if (!n)
                return bad(err, d, "tunefarm.metric_names[%zu]: expected a name", m);
            d->metric_names[d->nmetrics++] = tf_xstrdup(n);
        }
    }
    const json_t *dev = json_object_get(ext, "device");
    if (dev && tf_exchange_device_from_json(dev, &d->device, d->path, "tunefarm.device", err))
        return -1;
    return 0;
}

/* ---------------------------------------------------------------- metrics */

/* Metric `name` is seen in an entry: add it if there is room, else say it was left out. */
static void metric_seen(struct draft *d, const char *name, bool fixed)
{
    for (int m = 0; m < d->nmetrics; m++)
        if (strcmp(d->metric_names[m], name) == 0)
            return;
    if (!fixed && d->nmetrics < TF_MAX_METRICS) {
        d->metric_names[d->nmetrics++] = tf_xstrdup(name);
        return;
    }
    if (strstr(d->dropped, name) == NULL) {
        size_t n = strlen(d->dropped);
        snprintf(d->dropped + n, sizeof d->dropped - n, "%s%s", n ? ", " : "", name);
    }
}

static int metric_index(const struct draft *d, const char *name)
{
    for (int m = 0; m < d->nmetrics; m++)
        if (strcmp(d->metric_names[m], name) == 0)
            return m;
    return -1;
}

static bool is_param(const struct draft *d, const char *name)
{
    for (int p = 0; p < d->nparams; p++)
        if (strcmp(d->params[p].name, name) == 0)
            return true;
    return false;
}

/* ---------------------------------------------------------------- samples */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, min, mean and relative stddev of `times` (in units of `scale`
 * seconds) into `r`; -1 if it is not a list of finite numbers. */
static int sample_stats(const json_t *times, double scale, struct tf_result *r, bool set_mean)
{
    size_t n = json_array_size(times);
    if (!json_is_array(times))
        return -1;
    if (n == 0)
        return 0;
    double *v = tf_xcalloc(n, sizeof *v), sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(times, i);
        if (!json_is_number(x) || !isfinite(json_number_value(x)) ||
            !(json_number_value(x) > 0)) {
            free(v);
            return -1;
        }
        v[i] = json_number_value(x) * scale;
        sum += v[i];
    }
    qsort(v, n, sizeof *v, cmp_double);
    double mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        sq += (v[i] - mean) * (v[i] - mean);
    r->time_min = v[0];
    r->time_median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    r->time_rsd = n > 1 && mean > 0 ? sqrt(sq / (double)(n - 1)) / mean : 0;
    r->samples = (uint32_t)n;
    if (set_mean)
        r->time_mean = mean;
    free(v);
    return 0;
}

/* ---------------------------------------------------------------- Kernel Tuner caches */

/* Sizes from Kernel Tuner's problem_size: a number, or a list of numbers. */
static int kt_sizes(const json_t *ps, struct draft *d, struct tf_error *err)
{
    if (ps == NULL || json_is_string(ps)) /* absent, or "callable" */
        return 0;
    if (json_is_integer(ps)) {
        d->nsizes = 1;
        d->size_names = tf_xcalloc(1, sizeof *d->size_names);
        d->sizes = tf_xcalloc(1, sizeof *d->sizes);
        d->size_names[0] = tf_xstrdup("problem_size");
        d->sizes[0] = (int64_t)json_integer_value(ps);
        return 0;
    }
    if (!json_is_array(ps))
        return bad(err, d, "problem_size: expected a whole number or a list of them");
    static const char *const axis[] = {"problem_size_x", "problem_size_y", "problem_size_z"};
    d->nsizes = (int)json_array_size(ps);
    d->size_names = tf_xcalloc((size_t)d->nsizes + 1, sizeof *d->size_names);
    d->sizes = tf_xcalloc((size_t)d->nsizes + 1, sizeof *d->sizes);
    for (int s = 0; s < d->nsizes; s++) {
        const json_t *v = json_array_get(ps, (size_t)s);
        d->size_names[s] = s < 3 ? tf_xstrdup(axis[s]) : tf_xasprintf("problem_size_%d", s);
        if (!json_is_integer(v))
            return bad(err, d, "problem_size[%d]: expected a whole number", s);
        d->sizes[s] = (int64_t)json_integer_value(v);
    }
    return 0;
}

/* The cache key of entry `index` ("16,1,2"), for messages. */
static void kt_key(const struct tf_ktcache *c, uint64_t index, char *out, size_t cap)
{
    int digits[256];
    int n = c->nparams < 256 ? c->nparams : 256;
    for (int p = n - 1; p >= 0; p--) {
        digits[p] = (int)(index % (uint64_t)c->params[p].count);
        index /= (uint64_t)c->params[p].count;
    }
    size_t used = 0;
    out[0] = '\0';
    for (int p = 0; p < n && used < cap; p++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s", p ? "," : "",
                                 c->params[p].key_text[digits[p]]);
}

/* The draft's parameters: the cache's, with the kinds of a "tunefarm" object
 * when there is one (it must list the same values). */
static int kt_params(const struct tf_ktcache *c, const json_t *ext_params, struct draft *d,
                     struct tf_error *err)
{
    if (ext_params) {
        if (params_from_ext(ext_params, d, err) != 0)
            return -1;
        bool same = d->nparams == c->nparams;
        for (int p = 0; same && p < c->nparams; p++) {
            same = strcmp(d->params[p].name, c->params[p].name) == 0 &&
                   d->params[p].count == c->params[p].count;
            for (int v = 0; same && v < c->params[p].count; v++)
                same = digit_of(&d->params[p], c->params[p].key_text[v]) == v;
        }
        if (!same)
            return bad(err, d, "tunefarm.parameters does not describe tune_params (names, "
                       "values and their order must agree)");
        return 0;
    }
    d->nparams = c->nparams;
    d->params = tf_xcalloc((size_t)c->nparams, sizeof *d->params);
    for (int p = 0; p < c->nparams; p++)
        param_from_keys(&d->params[p], c->params[p].name, c->params[p].key_text,
                        c->params[p].count);
    return 0;
}

static int read_kt(const json_t *root, struct draft *d, struct tf_error *err)
{
    struct tf_ktcache *c = tf_ktcache_from_json(root, d->path, err);
    if (c == NULL)
        return -1;
    int rc = -1;
    const json_t *ext = json_object_get(root, "tunefarm");
    if (read_ext(ext, d, err) != 0 ||
        kt_params(c, ext ? json_object_get(ext, "parameters") : NULL, d, err) != 0)
        goto done;
    if (!d->kernel[0] && c->kernel_name && c->kernel_name[0]) {
        if (strlen(c->kernel_name) >= sizeof d->kernel) {
            bad(err, d, "kernel_name is longer than %zu bytes", sizeof d->kernel - 1);
            goto done;
        }
        tf_strlcpy(d->kernel, c->kernel_name, sizeof d->kernel);
    }
    if (!d->device.name[0] && c->device_name) {
        if (strlen(c->device_name) >= sizeof d->device.name) {
            bad(err, d, "device_name is longer than %zu bytes", sizeof d->device.name - 1);
            goto done;
        }
        tf_strlcpy(d->device.name, c->device_name, sizeof d->device.name);
    }
    if (d->size_names == NULL && kt_sizes(json_object_get(root, "problem_size"), d, err) != 0)
        goto done;
    for (size_t i = 0; i < c->nfailure_names; i++)
        if (tf_exchange_kt_status(c->failure_names[i]) < 0) {
            bad(err, d, "a cache entry's time is \"%s\": expected milliseconds or one of "
                "Kernel Tuner's failures (InvalidConfig, CompilationFailedConfig, "
                "RuntimeFailedConfig, ErrorConfig)", c->failure_names[i]);
            goto done;
        }
    /* Metrics: a file tunefarm wrote names them; otherwise every numeric key
     * that is not Kernel Tuner's own, in order of appearance. */
    const bool fixed = ext && json_object_get(ext, "metric_names");
    for (size_t i = 0; i < c->nentries; i++) {
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)c->entries[i].object, k, v)
            if (json_is_number(v) && !tf_exchange_kt_key(k) && !is_param(d, k))
                metric_seen(d, k, fixed);
    }
    for (size_t i = 0; i < c->nentries; i++) {
        const struct tf_ktcache_entry *en = &c->entries[i];
        struct tf_result *r = new_row(d, en->index);
        char where[600], key[512];
        kt_key(c, en->index, key, sizeof key);
        snprintf(where, sizeof where, "cache[\"%s\"]", key);
        if (read_timestamp(json_object_get(en->object, "timestamp"), where, d, &r->timestamp,
                           err) != 0)
            goto done;
        r->status = (uint8_t)(en->failure ? tf_exchange_kt_status(en->failure) : TF_STATUS_OK);
        if (r->status == TF_STATUS_OK) {
            r->time_mean = en->time_ms * 1e-3;
            r->time_median = en->median_ms * 1e-3;
            r->time_min = en->min_ms * 1e-3;
            r->time_rsd = en->rsd;
            r->samples = (uint32_t)en->samples;
        } else {
            snprintf(r->message, sizeof r->message, "Kernel Tuner: %s", en->failure);
        }
        r->compile_time = en->compile_ms * 1e-3;
        r->device_time = en->benchmark_ms * 1e-3;
        for (int m = 0; m < d->nmetrics; m++) {
            const json_t *v = json_object_get(en->object, d->metric_names[m]);
            r->metrics[m] = json_is_number(v) ? json_number_value(v) : NAN;
        }
    }
    rc = 0;
done:
    tf_ktcache_destroy(c);
    return rc;
}

/* ---------------------------------------------------------------- T4 */

/* Gather each parameter's values from the configurations (no "tunefarm" object). */
static int t4_params(const json_t *results, struct draft *d, struct tf_error *err)
{
    const json_t *first = json_object_get(json_array_get(results, 0), "configuration");
    if (!json_is_object(first) || json_object_size(first) == 0)
        return bad(err, d, "results[0].configuration: expected an object of parameter values");
    d->nparams = (int)json_object_size(first);
    d->params = tf_xcalloc((size_t)d->nparams, sizeof *d->params);
    const char *name;
    const json_t *v;
    int p = 0;
    json_object_foreach((json_t *)first, name, v) {
        char **keys = NULL;
        double *nums = NULL;
        int n = 0;
        bool numeric = true;
        for (size_t i = 0; i < json_array_size(results); i++) {
            const json_t *x = json_object_get(
                json_object_get(json_array_get(results, i), "configuration"), name);
            char t[256];
            if (x == NULL)
                continue; /* said when the result is read */
            if (!value_key(x, t, sizeof t)) {
                for (int j = 0; j < n; j++)
                    free(keys[j]);
                free(keys);
                free(nums);
                d->nparams = p;
                return bad(err, d, "results[%zu].configuration.%s: expected a number, a string "
                           "or a boolean", i, name);
            }
            bool dup = false;
            for (int j = 0; j < n && !dup; j++)
                dup = strcmp(keys[j], t) == 0;
            if (dup)
                continue;
            keys = tf_xrealloc(keys, sizeof *keys * (size_t)(n + 1));
            nums = tf_xrealloc(nums, sizeof *nums * (size_t)(n + 1));
            keys[n] = tf_xstrdup(t);
            numeric = numeric && json_is_number(x);
            nums[n++] = json_is_number(x) ? json_number_value(x) : 0;
        }
        /* Numbers in ascending order (insertion sort: value lists are short). */
        for (int i = 1; numeric && i < n; i++)
            for (int j = i; j > 0 && nums[j - 1] > nums[j]; j--) {
                double tn = nums[j];
                nums[j] = nums[j - 1];
                nums[j - 1] = tn;
                char *tk = keys[j];
                keys[j] = keys[j - 1];
                keys[j - 1] = tk;
            }
        param_from_keys(&d->params[p++], name, keys, n);
        for (int j = 0; j < n; j++)
            free(keys[j]);
        free(keys);
        free(nums);
    }
    return 0;
}

static bool name_in(const char *n, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(names[i], n) == 0)
            return true;
    return false;
}

/* tunefarm's own text measurements in a T4 file it wrote ("status" has its own check). */
static bool t4_text_measurement(const char *n)
{
    static const char *const text[] = {"message", "first_warning", "energy_status"};
    return name_in(n, text, sizeof text / sizeof *text);
}

/* tunefarm's own measurements in a T4 file it wrote (not metrics). */
static bool t4_own_measurement(const char *n)
{
    static const char *const own[] = {"time", "status", "time_median", "time_min", "time_rsd",
                                      "samples", "energy_j", "power_w", "sm_clock_mhz",
                                      "temperature_c", "registers", "shared_bytes", "spill_bytes",
                                      "warnings", "noisy", "flushed_l2", "throttled", "phase"};
    return name_in(n, own, sizeof own / sizeof *own) || t4_text_measurement(n);
}

/* A measurement value that is a whole number from 0 to `max` (a JSON integer,
 * or a real without a fraction) into *out; false if it is none. */
static bool t4_whole(const json_t *v, int64_t max, int64_t *out)
{
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < 0 || x > max)
            return false;
        *out = (int64_t)x;
        return true;
    }
    double x = json_number_value(v);
    if (!(x >= 0 && x <= (double)max && x < 9223372036854775807.0 && x == floor(x)))
        return false;
    *out = (int64_t)x;
    return true;
}

/* Seconds per unit of measurement `m` (its own unit, else the file's). */
static int t4_unit(const json_t *m, double file_unit, const char *where, struct draft *d,
                   double *scale, struct tf_error *err)
{
    const char *u = json_string_value(json_object_get(m, "unit"));
    *scale = file_unit;
    if (u && u[0] && (*scale = tf_exchange_time_unit(u)) == 0)
        return bad(err, d, "%s.unit is \"%s\": expected a time unit (s, ms, us, ns) or \"\"",
                   where, u);
    return 0;
}

static int t4_result(const json_t *res, size_t i, double unit, struct draft *d,
                     struct tf_error *err)
{
    char where[64];
    snprintf(where, sizeof where, "results[%zu]", i);
    const json_t *conf = json_object_get(res, "configuration");
    if (!json_is_object(res) || !json_is_object(conf))
        return bad(err, d, "%s: expected an object with a configuration object", where);
    uint64_t index = 0;
    for (int p = 0; p < d->nparams; p++) {
        const json_t *x = json_object_get(conf, d->params[p].name);
        char t[256];
        int digit = x && value_key(x, t, sizeof t) ? draft_digit(d, p, t) : -1;
        if (digit < 0)
            return bad(err, d, "%s.configuration.%s: %s", where, d->params[p].name,
                       x ? "not one of the parameter's values (tunefarm.parameters)"
                         : "missing: every configuration must give every parameter");
        index = index * (uint64_t)d->params[p].count + (uint64_t)digit;
    }
    if (json_object_size(conf) != (size_t)d->nparams)
        return bad(err, d, "%s.configuration: has %zu parameters, expected %d (those of "
                   "results[0])", where, json_object_size(conf), d->nparams);
    struct tf_result *r = new_row(d, index);
    const char *inv = json_string_value(json_object_get(res, "invalidity"));
    int status = inv ? tf_exchange_t4_status(inv) : -1;
    if (status < 0)
        return bad(err, d, "%s.invalidity: %s%s%s: expected one of %s", where,
                   inv ? "\"" : "missing", inv ? inv : "", inv ? "\"" : "",
                   tf_exchange_t4_names());
    r->status = (uint8_t)status;
    if (read_timestamp(json_object_get(res, "timestamp"), where, d, &r->timestamp, err) != 0)
        return -1;
    const json_t *times = json_object_get(res, "times");
    if (times != NULL && !json_is_object(times))
        return bad(err, d, "%s.times: expected an object", where);
    const json_t *comp = json_object_get(times, "compilation_time");
    if (comp == NULL)
        comp = json_object_get(times, "compilation"); /* Kernel Tuner 1.5's name */
    const json_t *bench = json_object_get(times, "benchmark");
    if ((comp && !json_is_number(comp)) || (bench && !json_is_number(bench)))
        return bad(err, d, "%s.times: compilation_time and benchmark must be numbers", where);
    r->compile_time = comp ? json_number_value(comp) * unit : 0;
    r->device_time = bench ? json_number_value(bench) * unit : NAN;
    const json_t *runtimes = json_object_get(times, "runtimes");
    const json_t *ms = json_object_get(res, "measurements");
    if (ms != NULL && !json_is_array(ms))
        return bad(err, d, "%s.measurements: expected a list", where);
    bool have_time = false;
    const char *failure = NULL;
    for (size_t k = 0; k < json_array_size(ms); k++) {
        const json_t *m = json_array_get(ms, k), *v = json_object_get(m, "value");
        const char *name = json_string_value(json_object_get(m, "name"));
        char mw[160];
        snprintf(mw, sizeof mw, "%s.measurements[%zu]", where, k);
        if (!json_is_object(m) || name == NULL || v == NULL)
            return bad(err, d, "%s: expected {name, value, unit}", mw);
        if (json_is_null(v))
            continue; /* unknown */
        double scale;
        if (strcmp(name, "status") == 0) {
            const char *sn = json_string_value(v);
            int s = sn ? tf_status_from_name(sn) : -1;
            if (s < 0)
                return bad(err, d, "%s: status \"%s\" is not a tunefarm status (ok, invalid, "
                           "compile_error, launch_error, runtime_error, timeout, wrong_result, "
                           "crashed)", mw, sn ? sn : "?");
            r->status = (uint8_t)s;
        } else if (t4_text_measurement(name)) {
            const char *tv = json_string_value(v);
            int es;
            if (tv == NULL)
                return bad(err, d, "%s: %s must be a string", mw, name);
            if (strcmp(name, "message") == 0) {
                tf_strlcpy(r->message, tv, sizeof r->message);
            } else if (strcmp(name, "first_warning") == 0) {
                tf_strlcpy(r->first_warning, tv, sizeof r->first_warning);
            } else if ((es = tf_energy_status_from_name(tv)) >= 0) {
                r->energy_status = (uint8_t)es;
            } else {
                return bad(err, d, "%s: energy_status \"%s\" is not a tunefarm energy status "
                           "(measured, unknown, not_run, off, no_counter, counter_error, "
                           "no_window, not_in_source)", mw, tv);
            }
        } else if (strcmp(name, "time") == 0 && json_is_string(v)) {
            failure = json_string_value(v);
            if (tf_exchange_kt_status(failure) < 0)
                return bad(err, d, "%s: time \"%s\" is neither a number nor one of Kernel "
                           "Tuner's failures (InvalidConfig, CompilationFailedConfig, "
                           "RuntimeFailedConfig, ErrorConfig)", mw, failure);
        } else if (!json_is_number(v)) {
            if (t4_own_measurement(name))
                return bad(err, d, "%s: %s must be a number", mw, name);
            continue; /* a text or list measurement: not kept */
        } else if (strcmp(name, "time") == 0 || strcmp(name, "time_median") == 0 ||
                   strcmp(name, "time_min") == 0) {
            if (t4_unit(m, unit, mw, d, &scale, err) != 0)
                return -1;
            double x = json_number_value(v) * scale;
            /* time_median and time_min may be 0: not known (tunefarm's own
             * export writes that for a result without samples). */
            if (strcmp(name, "time") == 0 ? !(x > 0) : !(x >= 0))
                return bad(err, d, "%s: %s is %g: a run time must be a positive number (a "
                           "failed configuration has a status, and time a failure's name)",
                           mw, name, json_number_value(v));
            if (strcmp(name, "time") == 0) {
                r->time_mean = x;
                have_time = true;
            } else if (strcmp(name, "time_median") == 0) {
                r->time_median = x > 0 ? x : NAN; /* 0: unknown, taken from the mean below */
            } else {
                r->time_min = x > 0 ? x : NAN;
            }
        } else if (strcmp(name, "time_rsd") == 0) {
            r->time_rsd = json_number_value(v);
            if (!(r->time_rsd >= 0) || !isfinite(r->time_rsd))
                return bad(err, d, "%s: time_rsd is %g: a relative standard deviation is a "
                           "number, 0 or more", mw, r->time_rsd);
        } else if (strcmp(name, "samples") == 0) {
            int64_t x;
            if (!t4_whole(v, UINT32_MAX, &x))
                return bad(err, d, "%s: samples must be a whole number from 0 to %u", mw,
                           (unsigned)UINT32_MAX);
            r->samples = (uint32_t)x;
        } else if (strcmp(name, "energy_j") == 0) {
            r->energy_j = json_number_value(v);
        } else if (strcmp(name, "power_w") == 0) {
            r->power_w = (float)json_number_value(v);
        } else if (strcmp(name, "sm_clock_mhz") == 0) {
            r->sm_clock_mhz = (float)json_number_value(v);
        } else if (strcmp(name, "temperature_c") == 0) {
            r->temperature_c = (float)json_number_value(v);
        } else if (strcmp(name, "registers") == 0) {
            int64_t x;
            if (!t4_whole(v, INT32_MAX, &x))
                return bad(err, d, "%s: registers must be a whole number, 0 or more", mw);
            r->registers = (int32_t)x;
        } else if (strcmp(name, "shared_bytes") == 0 || strcmp(name, "spill_bytes") == 0) {
            const char *u = json_string_value(json_object_get(m, "unit"));
            int64_t x;
            if (u && u[0] && strcmp(u, "B") != 0)
                return bad(err, d, "%s.unit is \"%s\": expected \"B\" or \"\" for %s", mw, u,
                           name);
            if (!t4_whole(v, INT64_MAX, &x))
                return bad(err, d, "%s: %s must be a whole number of bytes, 0 or more", mw, name);
            if (strcmp(name, "shared_bytes") == 0)
                r->shared_bytes = x;
            else
                r->spill_bytes = x;
        } else if (strcmp(name, "warnings") == 0) {
            int64_t x;
            if (!t4_whole(v, INT32_MAX, &x))
                return bad(err, d, "%s: warnings must be a whole number, 0 or more", mw);
            r->warnings = (int32_t)x;
        } else if (strcmp(name, "noisy") == 0 || strcmp(name, "flushed_l2") == 0 ||
                   strcmp(name, "throttled") == 0) {
            uint8_t *flag = strcmp(name, "noisy") == 0        ? &r->noisy
                            : strcmp(name, "flushed_l2") == 0 ? &r->flushed_l2
                                                              : &r->throttled;
            int64_t x;
            if (!t4_whole(v, 1, &x))
                return bad(err, d, "%s: %s must be 0 or 1", mw, name);
            *flag = (uint8_t)x;
        } else if (strcmp(name, "phase") == 0) {
            int64_t x;
            if (!t4_whole(v, 2, &x))
                return bad(err, d, "%s: phase must be 0, 1 or 2", mw);
            r->phase = (uint8_t)x;
        } else {
            int mi = metric_index(d, name);
            if (mi >= 0)
                r->metrics[mi] = json_number_value(v);
        }
    }
    if (runtimes != NULL && sample_stats(runtimes, unit, r, !have_time) != 0)
        return bad(err, d, "%s.times.runtimes: expected a list of positive numbers (run "
                   "times)", where);
    /* energy_j is there exactly when energy_status is measured (schema/archive.md),
     * but for rows of archives older than energy_status, which say unknown. */
    const int es = r->energy_status;
    if (es == TF_ENERGY_MEASURED && !isfinite(r->energy_j))
        return bad(err, d, "%s: energy_status is \"measured\" but there is no energy_j "
                   "measurement", where);
    if (es != TF_ENERGY_COUNT && es != TF_ENERGY_MEASURED && es != TF_ENERGY_UNKNOWN &&
        isfinite(r->energy_j))
        return bad(err, d, "%s: an energy_j measurement, but energy_status is \"%s\" "
                   "(expected \"measured\")", where, tf_energy_status_name(es));
    have_time = have_time || r->samples > 0;
    if (failure && !r->message[0])
        snprintf(r->message, sizeof r->message, "Kernel Tuner: %s", failure);
    if (r->status != TF_STATUS_OK) { /* times of a failure mean nothing (schema/archive.md) */
        r->time_mean = r->time_median = r->time_min = r->time_rsd = NAN;
        r->samples = 0;
        return 0;
    }
    if (!have_time)
        return bad(err, d, "%s: a correct result without a time: expected a \"time\" "
                   "measurement or times.runtimes", where);
    /* Without samples (or tunefarm's statistics) the mean stands for all. */
    if (isnan(r->time_median))
        r->time_median = r->time_mean;
    if (isnan(r->time_min))
        r->time_min = r->time_mean;
    return 0;
}

static int read_t4(const json_t *root, struct draft *d, struct tf_error *err)
{
    const json_t *results = json_object_get(root, "results");
    const char *version = json_string_value(json_object_get(root, "schema_version"));
    if (version && strncmp(version, "1.", 2) != 0)
        return bad(err, d, "schema_version is \"%s\": this tunefarm reads T4 results of "
                   "schema 1.x", version);
    if (!json_is_array(results) || json_array_size(results) == 0)
        return bad(err, d, "results: expected a non-empty list of results");
    const json_t *meta = json_object_get(root, "metadata");
    if (meta != NULL && !json_is_object(meta))
        return bad(err, d, "metadata: expected an object");
    const char *tu = json_string_value(json_object_get(meta, "timeunit"));
    double unit = tu ? tf_exchange_time_unit(tu) : 1e-3;
    if (unit == 0)
        return bad(err, d, "metadata.timeunit is \"%s\": expected seconds, milliseconds, "
                   "microseconds or nanoseconds", tu);
    const json_t *ext = json_object_get(meta, "tunefarm");
    if (read_ext(ext, d, err) != 0)
        return -1;
    const json_t *ext_params = ext ? json_object_get(ext, "parameters") : NULL;
    if ((ext_params ? params_from_ext(ext_params, d, err) : t4_params(results, d, err)) != 0)
        return -1;
    const bool fixed = ext && json_object_get(ext, "metric_names");
    for (size_t i = 0; i < json_array_size(results); i++) {
        const json_t *ms = json_object_get(json_array_get(results, i), "measurements");
        for (size_t k = 0; k < json_array_size(ms); k++) {
            const json_t *m = json_array_get(ms, k);
            const char *name = json_string_value(json_object_get(m, "name"));
            if (name && json_is_number(json_object_get(m, "value")) && !t4_own_measurement(name))
                metric_seen(d, name, fixed);
        }
    }
    for (size_t i = 0; i < json_array_size(results); i++)
        if (t4_result(json_array_get(results, i), i, unit, d, err) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- the model */

static int cmp_row(const void *a, const void *b)
{
    uint64_t x = ((const struct tf_result *)a)->config, y = ((const struct tf_result *)b)->config;
    return (x > y) - (x < y);
}

/* "NVIDIA" or "AMD" when the name says so; "" otherwise. */
static const char *vendor_of(const char *name)
{
    if (strstr(name, "NVIDIA") || strstr(name, "GeForce") || strstr(name, "Tesla") ||
        strstr(name, "Quadro"))
        return "NVIDIA";
    if (strstr(name, "AMD") || strstr(name, "Radeon") || strstr(name, "Instinct"))
        return "AMD";
    return "";
}

static int option(char *field, size_t cap, const char *value, const char *what, struct draft *d,
                  struct tf_error *err)
{
    if (value == NULL)
        return 0;
    if (strlen(value) >= cap)
        return bad(err, d, "--%s '%s' is longer than %zu bytes", what, value, cap - 1);
    tf_strlcpy(field, value, cap);
    return 0;
}

/* The device: the file's, what the options say instead, a vendor guessed from
 * the name and a backend from the vendor. */
static int settle_device(struct draft *d, const struct tf_import_options *o, struct tf_error *err)
{
    struct tf_device *dev = &d->device;
    if (option(dev->name, sizeof dev->name, o->device, "device", d, err) ||
        option(dev->arch, sizeof dev->arch, o->arch, "arch", d, err) ||
        option(dev->vendor, sizeof dev->vendor, o->vendor, "vendor", d, err))
        return -1;
    if (!dev->name[0])
        return bad(err, d, "the file names no device (%s): give --device NAME, and --arch "
                   "and --vendor if you know them",
                   d->t4 ? "T4 has no device field, and the file has no tunefarm.device "
                           "of a tunefarm export"
                         : "its device_name is empty or missing");
    /* A device class is "backend/arch/name" (the name may hold '/'): a '/'
     * in the arch would make two devices of different arches one class. */
    if (strchr(dev->arch, '/'))
        return bad(err, d, "the device's arch '%s' holds '/', which separates the parts of a "
                   "device class (backend/arch/name): give --arch without it", dev->arch);
    if (strchr(dev->backend, '/'))
        return bad(err, d, "the device's backend '%s' holds '/', which separates the parts of "
                   "a device class (backend/arch/name): the file's tunefarm.device.backend "
                   "must not hold one", dev->backend);
    if (!dev->vendor[0])
        tf_strlcpy(dev->vendor, vendor_of(dev->name), sizeof dev->vendor);
    if (!dev->backend[0])
        tf_strlcpy(dev->backend,
                   strcmp(dev->vendor, "NVIDIA") == 0 ? "cuda"
                   : strcmp(dev->vendor, "AMD") == 0  ? "hip"
                                                      : "import",
                   sizeof dev->backend);
    return 0;
}

/* SHA-256 of the file's bytes as stored: the import run's job hash. */
static int file_hash(const char *path, char out[65], struct tf_error *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return tf_error_at(err, TF_ERR_IO, path, 0, 0, "cannot read the file: %s",
                           strerror(errno));
    struct tf_sha256 h;
    tf_sha256_init(&h);
    unsigned char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        tf_sha256_update(&h, buf, n);
    int failed = ferror(f);
    fclose(f);
    if (failed)
        return tf_error_at(err, TF_ERR_IO, path, 0, 0, "cannot read the file");
    tf_sha256_hex(&h, out);
    return 0;
}

/* The run that stands for the file: named after it, hashed by its content,
 * from its earliest to its latest timestamp (the file's time if it has none). */
static int import_run(const struct draft *d, const struct tf_import_options *o,
                      struct tf_archive_run *run, struct tf_error *err)
{
    memset(run, 0, sizeof *run);
    if (file_hash(d->path, run->job_hash, err) != 0)
        return -1;
    const char *base = strrchr(d->path, '/');
    snprintf(run->job_name, sizeof run->job_name, "import:%s", base ? base + 1 : d->path);
    char *real = realpath(d->path, NULL);
    snprintf(run->command, sizeof run->command, "tunefarm import%s%s%s%s%s%s%s%s%s%s %s",
             o->device ? " --device " : "", o->device ? o->device : "",
             o->arch ? " --arch " : "", o->arch ? o->arch : "",
             o->vendor ? " --vendor " : "", o->vendor ? o->vendor : "",
             o->kernel ? " --kernel " : "", o->kernel ? o->kernel : "",
             o->problem ? " --problem " : "", o->problem ? o->problem : "",
             real ? real : d->path);
    free(real);
    struct stat st;
    double mtime = stat(d->path, &st) == 0 ? (double)st.st_mtime : 1;
    run->start = d->first > 0 ? d->first : mtime;
    run->end = d->last > 0 ? d->last : run->start;
    run->ranks = 0;
    tf_strlcpy(run->tunefarm_version, tf_version, sizeof run->tunefarm_version);
    return 0;
}

static struct tf_archive *to_archive(struct draft *d, const struct tf_import_options *o,
                                     struct tf_error *err)
{
    if (o->kernel && option(d->kernel, sizeof d->kernel, o->kernel, "kernel", d, err))
        return NULL;
    if (!d->kernel[0]) {
        bad(err, d, "the file names no kernel (T4 results carry no kernel name): give "
            "--kernel NAME");
        return NULL;
    }
    if (o->problem && option(d->problem, sizeof d->problem, o->problem, "problem", d, err))
        return NULL;
    if (!d->problem[0]) {
        size_t used = 0;
        for (int s = 0; s < d->nsizes && used < sizeof d->problem; s++)
            used += (size_t)snprintf(d->problem + used, sizeof d->problem - used, "%s%lld",
                                     s ? "x" : "", (long long)d->sizes[s]);
        if (!d->problem[0])
            tf_strlcpy(d->problem, "default", sizeof d->problem);
    }
    if (settle_device(d, o, err) != 0)
        return NULL;
    if (d->nrows == 0) {
        bad(err, d, "the file holds no results: nothing to import");
        return NULL;
    }
    qsort(d->rows, d->nrows, sizeof *d->rows, cmp_row);
    for (uint64_t i = 1; i < d->nrows; i++)
        if (d->rows[i].config == d->rows[i - 1].config) {
            bad(err, d, "two results describe the same configuration (index %llu): expected "
                "one per configuration", (unsigned long long)d->rows[i].config);
            return NULL;
        }
    struct tf_archive_run run;
    if (import_run(d, o, &run, err) != 0)
        return NULL;

    struct tf_problem problem = {d->problem, d->sizes};
    struct tf_kernel k;
    memset(&k, 0, sizeof k);
    k.name = d->kernel;
    k.nparams = d->nparams;
    k.params = d->params;
    k.nsizes = d->nsizes;
    k.size_names = d->size_names;
    k.nproblems = 1;
    k.problems = &problem;
    k.nmetrics = d->nmetrics;
    k.metric_names = d->metric_names;
    struct tf_archive *a = tf_archive_create();
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &k, err);
    if (ak == NULL) {
        char msg[sizeof err->message];
        tf_strlcpy(msg, err->message, sizeof msg);
        tf_error_at(err, TF_ERR_SCHEMA, d->path, 0, 0, "%s", msg);
        tf_archive_destroy(a);
        return NULL;
    }
    struct tf_archive_row row = {.run = tf_archive_add_run(a, &run),
                                 .device = tf_archive_add_device(a, &d->device)};
    const uint32_t p = tf_archive_problem_for(ak, &k, 0);
    for (uint64_t i = 0; i < d->nrows; i++) {
        row.r = d->rows[i];
        row.r.problem = p;
        if (!(row.r.timestamp > 0))
            row.r.timestamp = run.start;
        /* The file's energy_status (tunefarm's T4 says it); else an energy comes
         * only with the file's own number: never a silent NaN. */
        if (row.r.energy_status == TF_ENERGY_COUNT)
            row.r.energy_status = (uint8_t)(row.r.status != TF_STATUS_OK ? TF_ENERGY_NOT_RUN
                                            : isfinite(row.r.energy_j)  ? TF_ENERGY_MEASURED
                                                                         : TF_ENERGY_NOT_IN_SOURCE);
        tf_archive_append(ak, &row);
    }
    return a;
}

struct tf_archive *tf_import_file(const char *path, const struct tf_import_options *o,
                                  struct tf_import_info *info, struct tf_error *err)
{
    struct draft d;
    memset(&d, 0, sizeof d);
    d.path = path;
    memset(info, 0, sizeof *info);
    struct tf_archive *a = NULL;
    json_t *root = tf_ktcache_read_json(path, "a Kernel Tuner cache file or a T4 results file",
                                        err);
    if (root == NULL)
        return NULL;
    int rc;
    if (json_is_object(root) && json_object_get(root, "cache") &&
        json_object_get(root, "tune_params_keys")) {
        info->format = "Kernel Tuner cache";
        rc = read_kt(root, &d, err);
    } else if (json_is_object(root) && json_object_get(root, "results")) {
        info->format = "T4";
        d.t4 = true;
        rc = read_t4(root, &d, err);
    } else {
        rc = bad(err, &d, "neither a Kernel Tuner cache (an object with tune_params_keys, "
                 "tune_params and cache) nor a T4 results file (an object with schema_version "
                 "and results)");
    }
    if (d.sizes == NULL)
        d.sizes = tf_xcalloc(1, sizeof *d.sizes); /* no sizes: still an array */
    if (rc == 0)
        a = to_archive(&d, o, err);
    if (a != NULL) {
        info->rows = d.nrows;
        for (uint64_t i = 0; i < d.nrows; i++)
            info->by_status[d.rows[i].status < TF_STATUS_COUNT ? d.rows[i].status : 0]++;
        if (d.dropped[0])
            snprintf(info->note, sizeof info->note, "left out (an archive kernel has at most "
                     "%d metrics): %s", TF_MAX_METRICS, d.dropped);
    }
    json_decref(root);
    draft_free(&d);
    return a;
}
