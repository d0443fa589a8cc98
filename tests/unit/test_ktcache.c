/* Tests for schema/ktcache.c: a small hand-written Kernel Tuner cache (the real
 * format, gzip'd, tests/unit/fixtures/ktcache_small.json.gz) maps onto
 * mixed-radix indices, times and tunefarm statuses; the same file uncompressed
 * reads the same; damaged files (truncated gzip, bad JSON, a value outside its
 * parameter's list, a missing time) are refused with an error naming the file
 * and what was expected. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "schema/ktcache.h"
#include "schema/status.h"

#define SMALL "tests/unit/fixtures/ktcache_small.json.gz"

static char *slurp_gz(const char *path, size_t *len)
{
    gzFile f = gzopen(path, "rb");
    assert_non_null(f);
    char *buf = malloc(1 << 16);
    int n = gzread(f, buf, (1 << 16) - 1);
    assert_true(n > 0);
    gzclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void check_small(const struct tf_ktcache *c)
{
    assert_string_equal(c->device_name, "Test GPU");
    assert_string_equal(c->kernel_name, "convolution_kernel");
    assert_int_equal(c->nparams, 3);
    assert_string_equal(c->params[0].name, "block_size_x");
    assert_int_equal(c->params[0].count, 3);
    assert_non_null(c->params[0].values);
    assert_true(c->params[0].values[2] == 64);
    assert_null(c->params[2].values); /* strings: no numeric values */
    assert_string_equal(c->params[2].text[1], "col");
    assert_int_equal(c->cartesian, 12);
    assert_int_equal(c->nentries, 6);
    /* 16,2,col: digits 0,1,1 -> 0*4 + 1*2 + 1 = 3 */
    const struct tf_ktcache_entry *e = tf_ktcache_find(c, 3);
    assert_non_null(e);
    assert_int_equal(e->status, TF_STATUS_OK);
    assert_true(e->time_ms == 2.25 && e->compile_ms == 800.0 && e->benchmark_ms == 100.0);
    assert_null(e->failure);
    e = tf_ktcache_find(c, 4); /* 32,1,row */
    assert_int_equal(e->status, TF_STATUS_COMPILE_ERROR);
    assert_string_equal(e->failure, "CompilationFailedConfig");
    assert_true(e->compile_ms == 700.0);
    assert_int_equal(tf_ktcache_find(c, 6)->status, TF_STATUS_RUNTIME_ERROR);
    assert_int_equal(tf_ktcache_find(c, 11)->status, TF_STATUS_INVALID);
    assert_true(tf_ktcache_find(c, 9)->time_ms == 1.75);
    assert_null(tf_ktcache_find(c, 1)); /* not in the cache */
    assert_null(tf_ktcache_find(c, 12));
    for (size_t i = 1; i < c->nentries; i++)
        assert_true(c->entries[i - 1].index < c->entries[i].index);
    /* The lower bound of every index, against a walk. */
    for (uint64_t x = 0; x <= c->cartesian + 1; x++) {
        size_t want = 0;
        while (want < c->nentries && c->entries[want].index < x)
            want++;
        assert_int_equal(tf_ktcache_lower_bound(c, x), want);
    }
    assert_int_equal(tf_ktcache_lower_bound(c, UINT64_MAX), c->nentries);
}

static void test_load_small(void **state)
{
    (void)state;
    struct tf_error err = {0};
    struct tf_ktcache *c = tf_ktcache_load(SMALL, &err);
    if (!c)
        fail_msg("%s", err.message);
    check_small(c);
    tf_ktcache_destroy(c);
    tf_ktcache_destroy(NULL);
}

static void test_plain_json(void **state)
{
    (void)state;
    size_t len;
    char *text = slurp_gz(SMALL, &len);
    char path[] = "/tmp/tf_ktcache_plain_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, text, len);
    struct tf_error err = {0};
    struct tf_ktcache *c = tf_ktcache_load(path, &err);
    if (!c)
        fail_msg("%s", err.message);
    check_small(c);
    tf_ktcache_destroy(c);
    unlink(path);
    free(text);
}

static void test_status_map(void **state)
{
    (void)state;
    assert_int_equal(tf_ktcache_status_of(NULL), TF_STATUS_OK);
    assert_int_equal(tf_ktcache_status_of("InvalidConfig"), TF_STATUS_INVALID);
    assert_int_equal(tf_ktcache_status_of("CompilationFailedConfig"), TF_STATUS_COMPILE_ERROR);
    assert_int_equal(tf_ktcache_status_of("RuntimeFailedConfig"), TF_STATUS_RUNTIME_ERROR);
    assert_int_equal(tf_ktcache_status_of("SomethingNew"), TF_STATUS_RUNTIME_ERROR);
}

/* `data` in a new temporary file, its name into `path` (a mkstemp template). */
static void temp_file(char *path, const void *data, size_t len)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, data, len);
}

/* Load `data` from a temporary file; expect refusal with `code` and `needle` in the message. */
static void expect_refused(const void *data, size_t len, int code, const char *needle)
{
    char path[] = "/tmp/tf_ktcache_bad_XXXXXX";
    temp_file(path, data, len);
    struct tf_error err = {0};
    struct tf_ktcache *c = tf_ktcache_load(path, &err);
    if (c)
        fail_msg("a damaged cache (%s) loaded", needle);
    assert_int_equal(err.code, code);
    assert_string_equal(err.file, path);
    if (!strstr(err.message, needle))
        fail_msg("message '%s' does not say '%s'", err.message, needle);
    unlink(path);
}

static void test_damaged(void **state)
{
    (void)state;
    /* A truncated gzip stream. */
    FILE *f = fopen(SMALL, "rb");
    assert_non_null(f);
    unsigned char gz[4096];
    size_t n = fread(gz, 1, sizeof gz, f);
    fclose(f);
    assert_true(n > 100);
    expect_refused(gz, n / 2, TF_ERR_IO, "truncated gzip");
    /* Corrupted deflate data (the CRC or the stream breaks). */
    gz[n / 2] ^= 0xff;
    gz[n / 2 + 1] ^= 0xff;
    expect_refused(gz, n, TF_ERR_IO, "gzip");

    size_t len;
    char *text = slurp_gz(SMALL, &len);
    /* Cut JSON: a syntax error with a place. */
    expect_refused(text, len / 2, TF_ERR_SYNTAX, "not valid JSON");
    /* A value outside its parameter's list. */
    char *bad = strdup(text);
    char *at = strstr(bad, "\"block_size_x\": 64, \"tile_size_x\": 1");
    assert_non_null(at);
    memcpy(at, "\"block_size_x\": 65", 18);
    expect_refused(bad, len, TF_ERR_SCHEMA, "not one of its tune_params values");
    free(bad);
    /* A missing time. */
    bad = strdup(text);
    at = strstr(bad, "\"time\": 1.75");
    assert_non_null(at);
    memcpy(at, "\"tyme\"", 6);
    expect_refused(bad, len, TF_ERR_SCHEMA, "has no 'time'");
    free(bad);
    /* Not a cache at all. */
    expect_refused("[1, 2, 3]", 9, TF_ERR_SCHEMA, "expected a Kernel Tuner cache");
    expect_refused("{\"cache\": {}}", 13, TF_ERR_SCHEMA, "tune_params_keys");
    /* A T4 results file (the datasets ship them beside the caches): said so,
     * not "missing or malformed 'tune_params_keys'". */
    const char *t4 = "{\"schema_version\": \"1.0.0\", \"results\": [], \"metadata\": {}}";
    expect_refused(t4, strlen(t4), TF_ERR_SCHEMA, "is a T4 results file, not a Kernel Tuner cache");
    free(text);
    struct tf_error err = {0};
    assert_null(tf_ktcache_load("/nonexistent/cache.json.gz", &err));
    assert_int_equal(err.code, TF_ERR_IO);
}

/* Review 2026-12-07: numbers no measurement gives. */
static void test_implausible(void **state)
{
    (void)state;
    /* A time so small it is no time (a subnormal): refused. */
    const char *tiny = "{\"device_name\": \"G\", \"kernel_name\": \"k\", \"tune_params_keys\": [\"a\"], "
                       "\"tune_params\": {\"a\": [1]}, \"cache\": {\"1\": {\"a\": 1, \"time\": 1e-320}}}";
    expect_refused(tiny, strlen(tiny), TF_ERR_SCHEMA, "has time");
    /* Negative or absurd compile and benchmark times: unknown (0); samples whose
     * sum overflows: the mean only (no infinite median). */
    const char *odd = "{\"device_name\": \"G\", \"kernel_name\": \"k\", \"tune_params_keys\": [\"a\"], "
                      "\"tune_params\": {\"a\": [1, 2]}, \"cache\": {"
                      "\"1\": {\"a\": 1, \"time\": 2.0, \"compile_time\": -5e297, \"benchmark_time\": -1},"
                      "\"2\": {\"a\": 2, \"time\": 1e308, \"times\": [1e308, 1.5e308], \"compile_time\": 1e300}}}";
    char path[] = "/tmp/tf_ktcache_odd_XXXXXX";
    temp_file(path, odd, strlen(odd));
    struct tf_error err = {0};
    struct tf_ktcache *c = tf_ktcache_load(path, &err);
    if (c == NULL)
        fail_msg("%s", err.message);
    assert_int_equal(c->nentries, 2);
    for (size_t i = 0; i < c->nentries; i++) {
        const struct tf_ktcache_entry *e = &c->entries[i];
        assert_true(e->compile_ms == 0.0 && e->benchmark_ms == 0.0);
        assert_true(isfinite(e->median_ms) && isfinite(e->min_ms));
    }
    tf_ktcache_destroy(c);
    unlink(path);
    /* A gzip bomb: 80 MB of zeros in a file of some 80 KB is refused before parsing. */
    char bomb[] = "/tmp/tf_ktcache_bomb_XXXXXX";
    int fd = mkstemp(bomb);
    assert_true(fd >= 0);
    gzFile gz = gzdopen(fd, "wb9");
    assert_non_null(gz);
    gzputs(gz, "{\"device_name\": \"G\", \"pad\": \"");
    static char zeros[1 << 20];
    memset(zeros, '0', sizeof zeros);
    for (int i = 0; i < 80; i++)
        assert_int_equal(gzwrite(gz, zeros, sizeof zeros), (int)sizeof zeros);
    gzputs(gz, "\"}");
    assert_int_equal(gzclose(gz), Z_OK);
    memset(&err, 0, sizeof err);
    assert_null(tf_ktcache_load(bomb, &err));
    if (!strstr(err.message, "inflates more than 100 times"))
        fail_msg("%s", err.message);
    unlink(bomb);
}

/* An entry's samples, as Kernel Tuner writes them (in run order, not
 * sorted): the minimum is the smallest and the median of an even count the
 * mean of the middle two. */
static void test_sample_statistics(void **state)
{
    (void)state;
    const char *text =
        "{\"device_name\": \"G\", \"kernel_name\": \"k\", \"tune_params_keys\": [\"a\"], "
        "\"tune_params\": {\"a\": [1, 2]}, \"cache\": {"
        "\"1\": {\"a\": 1, \"time\": 2.5, \"times\": [4.0, 1.0, 3.0, 2.0]},"
        "\"2\": {\"a\": 2, \"time\": 2.0, \"times\": [3.0, 1.0, 2.0]}}}";
    char path[] = "/tmp/tf_ktcache_samples_XXXXXX";
    temp_file(path, text, strlen(text));
    struct tf_error err = {0};
    struct tf_ktcache *c = tf_ktcache_load(path, &err);
    if (c == NULL)
        fail_msg("%s", err.message);
    const struct tf_ktcache_entry *even = tf_ktcache_find(c, 0), *odd = tf_ktcache_find(c, 1);
    assert_non_null(even);
    assert_non_null(odd);
    assert_int_equal(even->samples, 4);
    assert_true(even->min_ms == 1.0);
    assert_true(even->median_ms == 2.5);
    assert_int_equal(odd->samples, 3);
    assert_true(odd->min_ms == 1.0);
    assert_true(odd->median_ms == 2.0);
    tf_ktcache_destroy(c);
    unlink(path);
}

/* Two values that print differently but make the same cache key (Python's
 * str(): True for the boolean and for the text "True") would name one key
 * for two configurations: refused, as equal texts are. */
static void test_values_of_one_key(void **state)
{
    (void)state;
    const char *text =
        "{\"device_name\": \"G\", \"kernel_name\": \"k\", \"tune_params_keys\": [\"a\"], "
        "\"tune_params\": {\"a\": [true, \"True\"]}, \"cache\": {"
        "\"True\": {\"a\": true, \"time\": 1.0}}}";
    expect_refused(text, strlen(text), TF_ERR_SCHEMA, "lists the value");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_small),
        cmocka_unit_test(test_plain_json),
        cmocka_unit_test(test_status_map),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_implausible),
        cmocka_unit_test(test_sample_statistics),
        cmocka_unit_test(test_values_of_one_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
