/* exchange.c - translations shared by export and import (exchange.h).
 *
 * Status names: Kernel Tuner knows three failures (and ErrorConfig, their
 * base class), T4 six invalidity values; tunefarm has eight statuses, so the
 * way out loses detail (launch_error, crashed and wrong_result all become
 * RuntimeFailedConfig in a cache) and the way in is the table below read
 * backwards. Python's float repr is rebuilt from the shortest %.Ne that reads
 * back exactly, laid out with Python's rule (positional when the decimal
 * point falls within 16 digits, else an exponent). */
#include "exchange.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive.h"
#include "status.h"

const char *tf_exchange_kt_failure(int s)
{
    switch (s) {
    case TF_STATUS_OK:
        return NULL;
    case TF_STATUS_INVALID:
        return "InvalidConfig";
    case TF_STATUS_COMPILE_ERROR:
        return "CompilationFailedConfig";
    default: /* launch/runtime error, timeout, wrong result, crash: it ran and failed */
        return "RuntimeFailedConfig";
    }
}

int tf_exchange_kt_status(const char *name)
{
    if (strcmp(name, "InvalidConfig") == 0)
        return TF_STATUS_INVALID;
    if (strcmp(name, "CompilationFailedConfig") == 0)
        return TF_STATUS_COMPILE_ERROR;
    if (strcmp(name, "RuntimeFailedConfig") == 0 || strcmp(name, "ErrorConfig") == 0)
        return TF_STATUS_RUNTIME_ERROR;
    return -1;
}

static const struct {
    const char *name;
    int status;
} t4_invalidity[] = {
    {"correct", TF_STATUS_OK},          {"constraints", TF_STATUS_INVALID},
    {"compile", TF_STATUS_COMPILE_ERROR}, {"runtime", TF_STATUS_RUNTIME_ERROR},
    {"timeout", TF_STATUS_TIMEOUT},     {"correctness", TF_STATUS_WRONG_RESULT},
};

const char *tf_exchange_t4_invalidity(int s)
{
    switch (s) {
    case TF_STATUS_LAUNCH_ERROR:
    case TF_STATUS_CRASHED:
        return "runtime";
    default:
        for (size_t i = 0; i < sizeof t4_invalidity / sizeof t4_invalidity[0]; i++)
            if (t4_invalidity[i].status == s)
                return t4_invalidity[i].name;
        return "runtime";
    }
}

int tf_exchange_t4_status(const char *invalidity)
{
    for (size_t i = 0; i < sizeof t4_invalidity / sizeof t4_invalidity[0]; i++)
        if (strcmp(t4_invalidity[i].name, invalidity) == 0)
            return t4_invalidity[i].status;
    return -1;
}

const char *tf_exchange_t4_names(void)
{
    return "correct, constraints, compile, runtime, timeout, correctness";
}

bool tf_exchange_kt_key(const char *name)
{
    static const char *const own[] = {"time", "times", "compile_time", "verification_time",
                                      "benchmark_time", "strategy_time", "framework_time",
                                      "timestamp"};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        if (strcmp(own[i], name) == 0)
            return true;
    return false;
}

/* ---------------------------------------------------------------- times */

void tf_exchange_python_time(double unix_s, char *out, size_t cap)
{
    out[0] = '\0';
    if (!tf_archive_time_ok(unix_s))
        return;
    /* Whole microseconds, as Python keeps them; rounding once, here, makes
     * parse -> format give back the text read (a double near 1.7e9 s is exact
     * to a quarter of a microsecond). */
    long long us = llround(unix_s * 1e6);
    time_t t = (time_t)(us / 1000000);
    long frac = (long)(us % 1000000);
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL)
        return;
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%d %H:%M:%S", &tm);
    if (frac)
        snprintf(out, cap, "%s.%06ld+00:00", base, frac);
    else
        snprintf(out, cap, "%s+00:00", base);
}

void tf_exchange_iso_time(double unix_s, char *out, size_t cap)
{
    out[0] = '\0';
    if (!tf_archive_time_ok(unix_s))
        return;
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (gmtime_r(&t, &tm) != NULL)
        strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* `n` digits at *p into *v; advances *p. */
static int digits(const char **p, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9')
            return -1;
        *v = *v * 10 + (**p - '0');
    }
    return 0;
}

int tf_exchange_parse_time(const char *s, double *unix_s)
{
    int y, mo, d, h, mi, sec;
    const char *p = s;
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
        digits(&p, 2, &d) || (*p != ' ' && *p != 'T') || !*p++ || digits(&p, 2, &h) ||
        *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' || digits(&p, 2, &sec))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return -1;
    double frac = 0;
    if (*p == '.') {
        double scale = 0.1;
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    long offset = 0;
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, oh, om;
        if (digits(&p, 2, &oh) || (*p == ':' && !*p++) || digits(&p, 2, &om) || oh > 23 ||
            om > 59)
            return -1;
        offset = sign * (oh * 3600L + om * 60L);
    }
    if (*p != '\0')
        return -1;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
                    .tm_min = mi, .tm_sec = sec};
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    /* Whole seconds plus a fraction rounded to microseconds: the nearest double. */
    *unix_s = (double)(t - offset) + round(frac * 1e6) / 1e6;
    return 0;
}

/* ---------------------------------------------------------------- numbers */

void tf_exchange_python_float(double x, char *out, size_t cap)
{
    if (isnan(x)) {
        snprintf(out, cap, "nan");
        return;
    }
    if (isinf(x)) {
        snprintf(out, cap, "%sinf", x < 0 ? "-" : "");
        return;
    }
    if (x == 0) {
        snprintf(out, cap, "%s", signbit(x) ? "-0.0" : "0.0");
        return;
    }
    char e[40];
    for (int prec = 0; prec < 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec, x);
        if (strtod(e, NULL) == x)
            break;
    }
    /* e: "-d.ddde+XX": the digits without the point, and the exponent. */
    char dig[24];
    int nd = 0, exp10 = 0;
    const char *p = e;
    int neg = *p == '-';
    if (neg)
        p++;
    for (; *p && *p != 'e'; p++)
        if (*p != '.' && nd < (int)sizeof dig - 1)
            dig[nd++] = *p;
    if (*p == 'e')
        exp10 = atoi(p + 1);
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    dig[nd] = '\0';
    const int decpt = exp10 + 1; /* x = 0.DIGITS * 10^decpt */
    size_t n = 0;
#define PUT(...) n += (size_t)snprintf(out + (n < cap ? n : cap), n < cap ? cap - n : 0, __VA_ARGS__)
    if (neg)
        PUT("-");
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            PUT("0.");
            for (int i = 0; i < -decpt; i++)
                PUT("0");
            PUT("%s", dig);
        } else if (decpt >= nd) {
            PUT("%s", dig);
            for (int i = nd; i < decpt; i++)
                PUT("0");
            PUT(".0");
        } else {
            PUT("%.*s.%s", decpt, dig, dig + decpt);
        }
    } else {
        PUT("%c", dig[0]);
        if (nd > 1)
            PUT(".%s", dig + 1);
        PUT("e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    }
#undef PUT
}

double tf_exchange_time_unit(const char *unit)
{
    static const struct {
        const char *name;
        double seconds;
    } units[] = {{"s", 1},           {"seconds", 1},       {"second", 1},
                 {"ms", 1e-3},       {"milliseconds", 1e-3}, {"miliseconds", 1e-3},
                 {"us", 1e-6},       {"microseconds", 1e-6}, {"ns", 1e-9},
                 {"nanoseconds", 1e-9}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(units[i].name, unit) == 0)
            return units[i].seconds;
    return 0;
}

/* ---------------------------------------------------------------- parameter values */

/* A JSON number literal: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; *integer
 * says it has neither fraction nor exponent. */
static int json_number_literal(const char *s, int *integer)
{
    const char *p = s;
    *integer = 1;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return 0;
    if (*p == '.') {
        *integer = 0;
        if (*++p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        *integer = 0;
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

/* How an enum parameter's values are typed outside tunefarm. */
enum value_kind { KIND_STRING, KIND_NUMBER, KIND_BOOL };

/* True if `v` is a number spelled as Python's str() spells it ("16", "0.5",
 * "1e-05"; not "1.50", "-0", "1E5"): written as that number, it comes back as
 * the same text, and two such values never become one number. */
static int canonical_number(const char *v)
{
    int integer;
    char t[64];
    if (!json_number_literal(v, &integer))
        return 0;
    errno = 0;
    if (integer) {
        long long x = strtoll(v, NULL, 10);
        if (errno != 0)
            return 0;
        snprintf(t, sizeof t, "%lld", x);
    } else {
        double x = strtod(v, NULL);
        if (!isfinite(x))
            return 0;
        tf_exchange_python_float(x, t, sizeof t);
    }
    return strcmp(t, v) == 0;
}

static enum value_kind enum_kind_of(const struct tf_param *p);

/* enum_kind_of, remembered for the last value list asked: an export asks it
 * for every value of every row, and the answer compares all pairs of values.
 * Single-threaded callers (export, import). */
static enum value_kind enum_kind(const struct tf_param *p)
{
    /* The values' text hashed (FNV-1a): a parameter freed and another made
     * at its address is not taken for it. */
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < p->count; i++)
        for (const char *c = p->strings[i];; c++) {
            h = (h ^ (unsigned char)*c) * 1099511628211ULL;
            if (*c == '\0')
                break;
        }
    static uint64_t memo_hash;
    static int memo_count = -1;
    static enum value_kind memo_kind;
    if (h != memo_hash || p->count != memo_count) {
        memo_kind = enum_kind_of(p);
        memo_hash = h;
        memo_count = p->count;
    }
    return memo_kind;
}

static enum value_kind enum_kind_of(const struct tf_param *p)
{
    int numbers = 1, bools = 1;
    for (int i = 0; i < p->count; i++) {
        const char *v = p->strings[i];
        numbers = numbers && canonical_number(v);
        bools = bools && (strcmp(v, "True") == 0 || strcmp(v, "False") == 0);
    }
    /* Numbers only if no two are equal ("1" and "1.0", "-0.0" and "0.0"):
     * as numbers a reader could not tell them apart (and tunefarm's import
     * refuses a value listed twice), as strings it can. */
    for (int i = 0; numbers && i < p->count; i++)
        for (int j = 0; numbers && j < i; j++)
            numbers = strtod(p->strings[i], NULL) != strtod(p->strings[j], NULL);
    return numbers ? KIND_NUMBER : bools ? KIND_BOOL : KIND_STRING;
}

json_t *tf_exchange_param_json(const struct tf_param *p, int digit)
{
    if (p->kind == TF_PARAM_INT)
        return json_integer((json_int_t)p->ints[digit]);
    const char *v = p->strings[digit];
    int integer;
    switch (enum_kind(p)) {
    case KIND_NUMBER:
        json_number_literal(v, &integer);
        if (integer) {
            char *end;
            long long x = strtoll(v, &end, 10);
            if (*end == '\0')
                return json_integer((json_int_t)x);
        }
        return json_real(strtod(v, NULL));
    case KIND_BOOL:
        return json_boolean(strcmp(v, "True") == 0);
    default:
        return json_string(v);
    }
}

void tf_exchange_param_key(const struct tf_param *p, int digit, char *out, size_t cap)
{
    json_t *v = tf_exchange_param_json(p, digit);
    if (json_is_integer(v))
        snprintf(out, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        tf_exchange_python_float(json_real_value(v), out, cap);
    else if (json_is_boolean(v))
        snprintf(out, cap, "%s", json_is_true(v) ? "True" : "False");
    else
        snprintf(out, cap, "%s", json_string_value(v));
    json_decref(v);
}

/* ---------------------------------------------------------------- strings */

/* Length of the valid UTF-8 sequence at `p` (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0. */
static int utf8_len(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    int n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
            : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 3 && p[0] == 0xed && p[1] > 0x9f) ||
        (n == 4 && p[0] == 0xf0 && p[1] < 0x90) || (n == 4 && p[0] == 0xf4 && p[1] > 0x8f))
        return 0;
    return n;
}

/* `s` into out[cap], cut at a character boundary, with a '?' for each byte
 * that is not part of valid UTF-8 and, with `controls`, for each control
 * character but tab and newline (C0, DEL, C1). */
static void repair(const char *s, char *out, size_t cap, bool controls)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (*p) {
        int len = utf8_len(p);
        /* C1 controls (U+0080..U+009F: 0xc2 0x80..0x9f) as well as C0 and DEL:
         * some terminals take U+009B for CSI, as ESC [. */
        const bool control = len == 1 ? (*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f
                                      : len == 2 && p[0] == 0xc2 && p[1] < 0xa0;
        if (len == 0 || (controls && control)) {
            if (n + 1 >= cap)
                break;
            out[n++] = '?';
            p += len ? len : 1;
            continue;
        }
        if (n + (size_t)len >= cap)
            break;
        memcpy(out + n, p, (size_t)len);
        n += (size_t)len;
        p += len;
    }
    if (cap > 0)
        out[n] = '\0';
}

void tf_exchange_utf8(const char *s, char *out, size_t cap)
{
    repair(s, out, cap, false);
}

void tf_exchange_terminal(const char *s, char *out, size_t cap)
{
    repair(s, out, cap, true);
}

int tf_exchange_terminal_write(const char *text, FILE *out)
{
    /* Each byte repaired is one '?' and the rest is copied: never longer. */
    const size_t n = strlen(text) + 1;
    char *shown = tf_xmalloc(n);
    tf_exchange_terminal(text, shown, n);
    const int rc = fputs(shown, out) == EOF ? -1 : 0;
    free(shown);
    return rc;
}

json_t *tf_exchange_jstr(const char *s)
{
    if (s == NULL)
        return json_null();
    size_t cap = strlen(s) * 3 + 1;
    char *u = tf_xmalloc(cap);
    tf_exchange_utf8(s, u, cap);
    json_t *j = json_string(u);
    free(u);
    return j;
}

/* ---------------------------------------------------------------- devices */

json_t *tf_exchange_device_json(const struct tf_device *d)
{
    json_t *props = json_object();
    for (int p = 0; p < TF_DEVPROP_COUNT; p++)
        json_object_set_new(props, tf_devprop_name(p), json_integer((json_int_t)d->props[p]));
    json_t *o = json_object();
    json_object_set_new(o, "backend", tf_exchange_jstr(d->backend));
    json_object_set_new(o, "vendor", tf_exchange_jstr(d->vendor));
    json_object_set_new(o, "name", tf_exchange_jstr(d->name));
    json_object_set_new(o, "arch", tf_exchange_jstr(d->arch));
    json_object_set_new(o, "uuid", tf_exchange_jstr(d->uuid));
    json_object_set_new(o, "pci_bus", tf_exchange_jstr(d->pci_bus));
    json_object_set_new(o, "host", tf_exchange_jstr(d->host));
    json_object_set_new(o, "memory_bytes", json_integer((json_int_t)d->memory_bytes));
    json_object_set_new(o, "compute_units", json_integer((json_int_t)d->compute_units));
    json_object_set_new(o, "driver_version", tf_exchange_jstr(d->driver_version));
    json_object_set_new(o, "runtime_version", tf_exchange_jstr(d->runtime_version));
    json_object_set_new(o, "compiler_version", tf_exchange_jstr(d->compiler_version));
    json_object_set_new(o, "properties", props);
    return o;
}

static int device_string(const json_t *o, const char *key, char *field, size_t cap,
                         const char *file, const char *where, struct tf_error *err)
{
    const json_t *v = json_object_get(o, key);
    if (v == NULL)
        return 0;
    if (!json_is_string(v) || strlen(json_string_value(v)) >= cap)
        return tf_error_at(err, TF_ERR_SCHEMA, file, 0, 0,
                           "%s.%s: expected a string of at most %zu bytes", where, key,
                           cap - 1);
    tf_strlcpy(field, json_string_value(v), cap);
    return 0;
}

static int device_count(const json_t *o, const char *key, int64_t *out, const char *file,
                        const char *where, struct tf_error *err)
{
    const json_t *v = json_object_get(o, key);
    if (v == NULL)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return tf_error_at(err, TF_ERR_SCHEMA, file, 0, 0,
                           "%s.%s: expected a whole number, 0 or more", where, key);
    *out = (int64_t)json_integer_value(v);
    return 0;
}

int tf_exchange_device_from_json(const json_t *o, struct tf_device *d, const char *file,
                                 const char *where, struct tf_error *err)
{
    if (!json_is_object(o))
        return tf_error_at(err, TF_ERR_SCHEMA, file, 0, 0, "%s: expected an object", where);
#define STR(f) device_string(o, #f, d->f, sizeof d->f, file, where, err)
    if (STR(backend) || STR(vendor) || STR(name) || STR(arch) || STR(uuid) || STR(pci_bus) ||
        STR(host) || STR(driver_version) || STR(runtime_version) || STR(compiler_version))
        return -1;
#undef STR
    int64_t mem = (int64_t)d->memory_bytes, cus = d->compute_units;
    if (device_count(o, "memory_bytes", &mem, file, where, err) ||
        device_count(o, "compute_units", &cus, file, where, err))
        return -1;
    if (cus > UINT32_MAX)
        return tf_error_at(err, TF_ERR_SCHEMA, file, 0, 0, "%s.compute_units: too large",
                           where);
    d->memory_bytes = (uint64_t)mem;
    d->compute_units = (uint32_t)cus;
    const json_t *props = json_object_get(o, "properties");
    if (props != NULL && !json_is_object(props))
        return tf_error_at(err, TF_ERR_SCHEMA, file, 0, 0,
                           "%s.properties: expected an object of device properties", where);
    for (int p = 0; props && p < TF_DEVPROP_COUNT; p++) {
        const json_t *v = json_object_get(props, tf_devprop_name(p));
        if (v == NULL)
            continue;
        if (!json_is_integer(v))
            return tf_error_at(err, TF_ERR_SCHEMA, file, 0, 0,
                               "%s.properties.%s: expected a whole number", where,
                               tf_devprop_name(p));
        d->props[p] = (int64_t)json_integer_value(v);
    }
    return 0;
}
