/* ktcache.c - Kernel Tuner cache files into tunefarm configurations (ktcache.h).
 *
 * The whole file is inflated into memory (zlib's gz* reads plain files too),
 * parsed with jansson, and each cache entry located by its own parameter
 * values (not by splitting its key, whose number formatting is Python's). */
#include "ktcache.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <zlib.h>

#include "exchange.h"
#include "status.h"

static void sample_stats(struct tf_ktcache_entry *en, const json_t *times);

#define KT_MAX_BYTES ((size_t)1 << 32) /* refuse to inflate more than 4 GiB */

int tf_ktcache_status_of(const char *failure)
{
    if (!failure)
        return TF_STATUS_OK;
    if (strcmp(failure, "InvalidConfig") == 0)
        return TF_STATUS_INVALID;
    if (strcmp(failure, "CompilationFailedConfig") == 0)
        return TF_STATUS_COMPILE_ERROR;
    return TF_STATUS_RUNTIME_ERROR; /* RuntimeFailedConfig and any other failure */
}

/* `expected`: what the caller reads, for the errors (a replay is not given
 * a T4 file, an import is). */
static char *inflate_file(const char *path, const char *expected, size_t *len,
                          struct tf_error *err)
{
    /* A folder or a device would read as damaged gzip data: say what it is. */
    struct stat st;
    if (stat(path, &st) != 0) {
        tf_error_at(err, TF_ERR_IO, path, 0, 0, "cannot open the file: %s", strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        tf_error_at(err, TF_ERR_IO, path, 0, 0, "is %s, not a file: expected %s (plain or "
                    "gzip'd)",
                    S_ISDIR(st.st_mode) ? "a folder" : "a device, FIFO or socket", expected);
        return NULL;
    }
    gzFile f = gzopen(path, "rb");
    if (!f) {
        tf_error_at(err, TF_ERR_IO, path, 0, 0, "cannot open the file: %s", strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 20, n = 0;
    char *buf = tf_xmalloc(cap + 1);
    for (;;) {
        /* Kernel Tuner caches inflate 3-20 times; 1 KB of gzip'd zeros
         * inflates to 1 MB, and a JSON parser needs some 20 times the text:
         * past 64 MiB, more than 100 times the file is refused, not parsed. */
        if (n >= ((size_t)64 << 20) && n / 100 > (size_t)st.st_size) {
            tf_error_at(err, TF_ERR_IO, path, 0, 0,
                        "inflates more than 100 times its %lld bytes (past %zu bytes): a "
                        "compressed Kernel Tuner cache or T4 file inflates 3 to 20 times; "
                        "refused, not parsed",
                        (long long)st.st_size, n);
            goto fail;
        }
        if (n == cap) {
            if (cap >= KT_MAX_BYTES) {
                tf_error_at(err, TF_ERR_IO, path, 0, 0,
                            "inflates to more than 4 GiB: not a Kernel Tuner cache file");
                goto fail;
            }
            cap *= 2;
            buf = tf_xrealloc(buf, cap + 1);
        }
        unsigned want = (unsigned)(cap - n > (1u << 30) ? (1u << 30) : cap - n);
        int r = gzread(f, buf + n, want);
        if (r < 0) {
            int zerr;
            const char *msg = gzerror(f, &zerr);
            tf_error_at(err, TF_ERR_IO, path, 0, 0,
                        "damaged gzip data after %zu bytes (%s): expected a gzip'd (or plain) "
                        "Kernel Tuner cache file; fetch it again",
                        n, msg ? msg : "zlib error");
            goto fail;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    /* gzread returns 0 at a truncated stream too; gzerror tells which. */
    int zerr = Z_OK;
    const char *msg = gzerror(f, &zerr);
    if (zerr != Z_OK && zerr != Z_STREAM_END) {
        tf_error_at(err, TF_ERR_IO, path, 0, 0,
                    "damaged or truncated gzip data after %zu bytes (%s): fetch the file again",
                    n, msg ? msg : "zlib error");
        goto fail;
    }
    gzclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
fail:
    gzclose(f);
    free(buf);
    return NULL;
}

static int schema_err(struct tf_error *err, const char *path, const char *fmt, const char *a,
                      const char *b)
{
    char msg[700];
    snprintf(msg, sizeof msg, fmt, a, b);
    return tf_error_at(err, TF_ERR_SCHEMA, path, 0, 0, "%s", msg);
}

static char *value_text(const json_t *v)
{
    if (json_is_string(v))
        return tf_xstrdup(json_string_value(v));
    if (json_is_integer(v))
        return tf_xasprintf("%lld", (long long)json_integer_value(v));
    if (json_is_real(v))
        return tf_xasprintf("%.17g", json_real_value(v));
    if (json_is_true(v))
        return tf_xstrdup("true");
    if (json_is_false(v))
        return tf_xstrdup("false");
    return NULL;
}

/* `v` as Python's str() writes it, which is how Kernel Tuner spells it in a
 * cache key: 16, 0.5, 1.0, 1e-05, True, float4 (schema/exchange.h). */
static char *key_text(const json_t *v)
{
    char buf[64];
    if (json_is_real(v)) {
        tf_exchange_python_float(json_real_value(v), buf, sizeof buf);
        return tf_xstrdup(buf);
    }
    if (json_is_true(v))
        return tf_xstrdup("True");
    if (json_is_false(v))
        return tf_xstrdup("False");
    return value_text(v);
}

static int cmp_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_number(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The text of a value `p` lists twice (equal numbers, equal texts, or equal
 * cache-key spellings, which value_digit and the keys could not tell apart),
 * or NULL. Sorted copies: a hostile list may be long. */
static const char *repeated_value(const struct tf_ktcache_param *p)
{
    const size_t n = (size_t)p->count;
    const char *twice = NULL;
    char **t = tf_xmalloc(n * sizeof *t);
    for (int pass = 0; pass < 2 && !twice; pass++) {
        memcpy(t, pass ? p->key_text : p->text, n * sizeof *t);
        qsort(t, n, sizeof *t, cmp_text);
        for (size_t i = 1; i < n && !twice; i++)
            if (strcmp(t[i - 1], t[i]) == 0)
                for (size_t j = 0; j < n && !twice; j++) /* the listed spelling */
                    if (strcmp((pass ? p->key_text : p->text)[j], t[i]) == 0)
                        twice = p->text[j];
    }
    free(t);
    if (twice == NULL && p->values != NULL) {
        double *v = tf_xmalloc(n * sizeof *v);
        memcpy(v, p->values, n * sizeof *v);
        qsort(v, n, sizeof *v, cmp_number);
        for (size_t i = 1; i < n && !twice; i++)
            if (v[i - 1] == v[i])
                for (size_t j = 0; j < n && !twice; j++)
                    if (p->values[j] == v[i])
                        twice = p->text[j];
        free(v);
    }
    return twice;
}

/* Digit of value `v` in parameter `p`, or -1. */
static int value_digit(const struct tf_ktcache_param *p, const json_t *v)
{
    if (json_is_number(v) && p->values) {
        double x = json_number_value(v);
        for (int i = 0; i < p->count; i++)
            if (p->values[i] == x)
                return i;
        return -1;
    }
    char *t = value_text(v);
    int d = -1;
    for (int i = 0; t && i < p->count; i++)
        if (strcmp(p->text[i], t) == 0) {
            d = i;
            break;
        }
    free(t);
    return d;
}

static double opt_ms(const json_t *e, const char *key)
{
    const json_t *v = json_object_get(e, key);
    const double ms = json_is_number(v) ? json_number_value(v) : 0.0;
    return isfinite(ms) && ms >= 0 && ms < 1e12 ? ms : 0.0; /* negative or absurd: unknown (0) */
}

static int cmp_entry(const void *a, const void *b)
{
    uint64_t x = ((const struct tf_ktcache_entry *)a)->index;
    uint64_t y = ((const struct tf_ktcache_entry *)b)->index;
    return x < y ? -1 : x > y;
}

static const char *intern(struct tf_ktcache *c, const char *s)
{
    for (size_t i = 0; i < c->nfailure_names; i++)
        if (strcmp(c->failure_names[i], s) == 0)
            return c->failure_names[i];
    c->failure_names = tf_xrealloc(c->failure_names, (c->nfailure_names + 1) * sizeof(char *));
    return c->failure_names[c->nfailure_names++] = tf_xstrdup(s);
}

json_t *tf_ktcache_read_json(const char *path, const char *expected, struct tf_error *err)
{
    size_t len = 0;
    char *text = inflate_file(path, expected ? expected : "a Kernel Tuner cache file", &len, err);
    if (!text)
        return NULL;
    json_error_t je;
    /* A key twice in one object (two "cache"s, one configuration twice):
     * jansson would keep the last without a word, so part of the file would
     * be dropped; refused instead, with its line and column. */
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!root && strstr(je.text, "duplicate object key"))
        tf_error_at(err, TF_ERR_SYNTAX, path, je.line, je.column > 0 ? je.column : 1,
                    "%s: one object names a key twice; expected each key once (two "
                    "results of one configuration are two entries, never one key twice)",
                    je.text);
    else if (!root)
        /* jansson counts columns from 0 at a line's start (an error found
         * before the line's first character): ours start at 1. */
        tf_error_at(err, TF_ERR_SYNTAX, path, je.line, je.column > 0 ? je.column : 1,
                    "not valid JSON (%s): expected %s", je.text,
                    expected ? expected : "a Kernel Tuner cache file");
    return root;
}

struct tf_ktcache *tf_ktcache_load(const char *path, struct tf_error *err)
{
    json_t *root = tf_ktcache_read_json(path, NULL, err);
    if (!root)
        return NULL;
    struct tf_ktcache *c = tf_ktcache_from_json(root, path, err);
    json_decref(root);
    if (c)
        for (size_t i = 0; i < c->nentries; i++)
            c->entries[i].object = NULL; /* it pointed into `root` */
    return c;
}

struct tf_ktcache *tf_ktcache_from_json(const json_t *root, const char *path,
                                        struct tf_error *err)
{
    struct tf_ktcache *c = tf_xcalloc(1, sizeof *c);
    c->path = tf_xstrdup(path);
    if (!json_is_object(root)) {
        schema_err(err, path, "the top level is not an object: expected a Kernel Tuner cache "
                   "file (device_name, tune_params_keys, tune_params, cache)%s%s", "", "");
        goto fail;
    }
    const json_t *keys = json_object_get(root, "tune_params_keys");
    const json_t *params = json_object_get(root, "tune_params");
    const json_t *cache = json_object_get(root, "cache");
    /* The datasets ship T4 files beside the caches; one given here (a replay
     * source) would otherwise read as a cache with its keys missing. */
    if (keys == NULL && json_is_array(json_object_get(root, "results"))) {
        tf_error_at(err, TF_ERR_SCHEMA, path, 0, 0,
                    "is a T4 results file, not a Kernel Tuner cache: a replay reads a Kernel "
                    "Tuner cache or a tunefarm archive; give the cache the T4 file was made "
                    "from");
        goto fail;
    }
    if (!json_is_array(keys) || json_array_size(keys) == 0 || !json_is_object(params) ||
        !json_is_object(cache)) {
        schema_err(err, path, "missing or malformed '%s': expected a non-empty array "
                   "tune_params_keys, an object tune_params and an object cache%s",
                   !json_is_array(keys) || !json_array_size(keys) ? "tune_params_keys"
                   : !json_is_object(params) ? "tune_params" : "cache", "");
        goto fail;
    }
    const json_t *s;
    if ((s = json_object_get(root, "device_name")) && json_is_string(s))
        c->device_name = tf_xstrdup(json_string_value(s));
    if ((s = json_object_get(root, "kernel_name")) && json_is_string(s))
        c->kernel_name = tf_xstrdup(json_string_value(s));
    if ((s = json_object_get(root, "objective")) && json_is_string(s))
        c->objective = tf_xstrdup(json_string_value(s));

    c->nparams = (int)json_array_size(keys);
    c->params = tf_xcalloc((size_t)c->nparams, sizeof *c->params);
    c->cartesian = 1;
    for (int p = 0; p < c->nparams; p++) {
        const json_t *k = json_array_get(keys, (size_t)p);
        if (!json_is_string(k)) {
            schema_err(err, path, "tune_params_keys holds a non-string%s%s: expected "
                       "parameter names", "", "");
            goto fail;
        }
        struct tf_ktcache_param *tp = &c->params[p];
        tp->name = tf_xstrdup(json_string_value(k));
        const json_t *vals = json_object_get(params, tp->name);
        if (!json_is_array(vals) || json_array_size(vals) == 0) {
            schema_err(err, path, "tune_params has no list of values for parameter '%s'%s",
                       tp->name, "");
            goto fail;
        }
        tp->count = (int)json_array_size(vals);
        tp->text = tf_xcalloc((size_t)tp->count, sizeof *tp->text);
        tp->key_text = tf_xcalloc((size_t)tp->count, sizeof *tp->key_text);
        tp->values = tf_xcalloc((size_t)tp->count, sizeof *tp->values);
        for (int i = 0; i < tp->count; i++) {
            const json_t *v = json_array_get(vals, (size_t)i);
            tp->text[i] = value_text(v);
            tp->key_text[i] = key_text(v);
            if (!tp->text[i]) {
                schema_err(err, path, "parameter '%s' has a value that is not a number, a "
                           "string or a boolean%s", tp->name, "");
                goto fail;
            }
            if (json_is_number(v)) {
                if (tp->values)
                    tp->values[i] = json_number_value(v);
            } else {
                free(tp->values);
                tp->values = NULL;
            }
        }
        const char *twice = repeated_value(tp);
        if (twice != NULL) {
            schema_err(err, path, "parameter '%s' lists the value %s more than once: a "
                       "configuration's key would name two places; list each value once",
                       tp->name, twice);
            goto fail;
        }
        if (c->cartesian > UINT64_MAX / (uint64_t)tp->count) {
            schema_err(err, path, "the parameters' Cartesian product exceeds 2^64%s%s", "", "");
            goto fail;
        }
        c->cartesian *= (uint64_t)tp->count;
    }

    c->entries = tf_xcalloc(json_object_size(cache) ? json_object_size(cache) : 1,
                            sizeof *c->entries);
    const char *key;
    json_t *e;
    json_object_foreach((json_t *)cache, key, e) {
        if (!json_is_object(e)) {
            schema_err(err, path, "cache entry '%s' is not an object%s", key, "");
            goto fail;
        }
        uint64_t index = 0;
        for (int p = 0; p < c->nparams; p++) {
            const json_t *v = json_object_get(e, c->params[p].name);
            int d = v ? value_digit(&c->params[p], v) : -1;
            if (d < 0) {
                char what[300];
                snprintf(what, sizeof what, "cache entry '%s': parameter '%s'", key,
                         c->params[p].name);
                schema_err(err, path, "%s is missing or not one of its tune_params values%s",
                           what, "");
                goto fail;
            }
            index = index * (uint64_t)c->params[p].count + (uint64_t)d;
        }
        struct tf_ktcache_entry *en = &c->entries[c->nentries++];
        en->index = index;
        en->object = e;
        const json_t *t = json_object_get(e, "time");
        /* Not positive, or so small it is no time (1e-320 ms, a subnormal) */
        if (json_is_number(t) && !(json_number_value(t) > 0 && isnormal(json_number_value(t)))) {
            char v[64];
            snprintf(v, sizeof v, "%g", json_number_value(t));
            schema_err(err, path, "cache entry '%s' has time %s: expected a positive number of "
                       "milliseconds, or a failure name such as \"RuntimeFailedConfig\"", key, v);
            goto fail;
        }
        if (json_is_number(t) && isfinite(json_number_value(t))) {
            en->status = TF_STATUS_OK;
            en->time_ms = json_number_value(t);
        } else if (json_is_string(t)) {
            en->failure = intern(c, json_string_value(t));
            en->status = tf_ktcache_status_of(en->failure);
            en->time_ms = NAN;
        } else {
            schema_err(err, path, "cache entry '%s' %s (expected milliseconds or a failure "
                       "name such as \"CompilationFailedConfig\")", key,
                       t ? "has a 'time' that is neither a number nor a text" : "has no 'time'");
            goto fail;
        }
        sample_stats(en, json_object_get(e, "times"));
        en->compile_ms = opt_ms(e, "compile_time");
        en->benchmark_ms = opt_ms(e, "benchmark_time");
    }
    qsort(c->entries, c->nentries, sizeof *c->entries, cmp_entry);
    for (size_t i = 1; i < c->nentries; i++)
        if (c->entries[i].index == c->entries[i - 1].index) {
            const char *twin[2] = {"?", "?"};
            json_object_foreach((json_t *)cache, key, e)
                for (int k = 0; k < 2; k++)
                    if (e == c->entries[i - 1 + (size_t)k].object)
                        twin[k] = key;
            schema_err(err, path, "cache entries '%s' and '%s' describe the same configuration "
                       "(their parameters' values are equal): keep one", twin[0], twin[1]);
            goto fail;
        }
    return c;
fail:
    tf_ktcache_destroy(c);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Min, median and relative stddev of an entry's samples (`times`, ms), so a
 * replay reports the statistics a measurement would have; without samples
 * they fall back to the mean. */
static void sample_stats(struct tf_ktcache_entry *en, const json_t *times)
{
    en->min_ms = en->median_ms = en->time_ms;
    en->rsd = NAN;
    en->samples = 0;
    if (en->status != TF_STATUS_OK || !json_is_array(times) || json_array_size(times) == 0)
        return;
    size_t n = json_array_size(times);
    double *v = tf_xcalloc(n, sizeof *v), sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(times, i);
        if (!json_is_number(x) || !isfinite(json_number_value(x)) ||
            !(json_number_value(x) > 0)) {
            free(v); /* damaged samples (a time <= 0 among them): keep the mean only */
            return;
        }
        v[i] = json_number_value(x);
        sum += v[i];
    }
    if (!isfinite(sum)) {
        free(v); /* samples so large their sum overflows: keep the mean only */
        return;
    }
    qsort(v, n, sizeof *v, cmp_double);
    double mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        sq += (v[i] - mean) * (v[i] - mean);
    en->min_ms = v[0];
    en->median_ms = n % 2 ? v[n / 2] : 0.5 * v[n / 2 - 1] + 0.5 * v[n / 2];
    en->rsd = n > 1 && mean > 0 ? sqrt(sq / (double)(n - 1)) / mean : 0;
    en->samples = (int)n;
    free(v);
}

void tf_ktcache_destroy(struct tf_ktcache *c)
{
    if (!c)
        return;
    for (int p = 0; p < c->nparams; p++) {
        free(c->params[p].name);
        free(c->params[p].values);
        for (int i = 0; c->params[p].text && i < c->params[p].count; i++)
            free(c->params[p].text[i]);
        for (int i = 0; c->params[p].key_text && i < c->params[p].count; i++)
            free(c->params[p].key_text[i]);
        free(c->params[p].text);
        free(c->params[p].key_text);
    }
    for (size_t i = 0; i < c->nfailure_names; i++)
        free(c->failure_names[i]);
    free(c->failure_names);
    free(c->params);
    free(c->entries);
    free(c->path);
    free(c->device_name);
    free(c->kernel_name);
    free(c->objective);
    free(c);
}

size_t tf_ktcache_lower_bound(const struct tf_ktcache *c, uint64_t index)
{
    size_t lo = 0, hi = c->nentries;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->entries[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const struct tf_ktcache_entry *tf_ktcache_find(const struct tf_ktcache *c, uint64_t index)
{
    size_t at = tf_ktcache_lower_bound(c, index);
    return at < c->nentries && c->entries[at].index == index ? &c->entries[at] : NULL;
}
