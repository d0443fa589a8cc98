/* Tests for schema/exchange.c: floats as Python's repr() writes them (Kernel
 * Tuner keys its cache with str()), Kernel Tuner's timestamps read and written
 * back to the same text, the status mappings both ways, parameter values typed
 * as Kernel Tuner holds them, UTF-8 repair, and devices through JSON and back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "schema/exchange.h"
#include "schema/status.h"

static void check_float(double x, const char *want)
{
    char buf[64];
    tf_exchange_python_float(x, buf, sizeof buf);
    if (strcmp(buf, want) != 0)
        fail_msg("python repr of %.17g: got '%s', want '%s'", x, buf, want);
}

static void test_python_float(void **state)
{
    (void)state;
    /* Each checked against CPython 3.11's repr(). */
    check_float(0.1, "0.1");
    check_float(1.0, "1.0");
    check_float(-2.5, "-2.5");
    check_float(100.0, "100.0");
    check_float(123.456, "123.456");
    check_float(0.0001, "0.0001");
    check_float(1e-05, "1e-05");
    check_float(1.5e-07, "1.5e-07");
    check_float(1e15, "1000000000000000.0");
    check_float(1e16, "1e+16");
    check_float(1.2345e17, "1.2345e+17");
    check_float(0.30000000000000004, "0.30000000000000004");
    check_float(5e-324, "5e-324");
    check_float(1.7976931348623157e308, "1.7976931348623157e+308");
    check_float(3.8753279224038124, "3.8753279224038124");
    check_float(0.0, "0.0");
}

static void test_times(void **state)
{
    (void)state;
    double t;
    char buf[64];
    /* Kernel Tuner's text survives the trip through a double, microseconds included. */
    assert_int_equal(tf_exchange_parse_time("2023-12-22 09:54:05.502007+00:00", &t), 0);
    assert_true(t > 1703238845.5 && t < 1703238845.6);
    tf_exchange_python_time(t, buf, sizeof buf);
    assert_string_equal(buf, "2023-12-22 09:54:05.502007+00:00");
    assert_int_equal(tf_exchange_parse_time("2023-12-22T09:54:05Z", &t), 0);
    assert_true(t == 1703238845.0);
    tf_exchange_python_time(t, buf, sizeof buf);
    assert_string_equal(buf, "2023-12-22 09:54:05+00:00");
    tf_exchange_iso_time(t, buf, sizeof buf);
    assert_string_equal(buf, "2023-12-22T09:54:05Z");
    /* A zone is taken into account; none means UTC. */
    assert_int_equal(tf_exchange_parse_time("2023-12-22 11:54:05+02:00", &t), 0);
    assert_true(t == 1703238845.0);
    assert_int_equal(tf_exchange_parse_time("2023-12-22 09:54:05", &t), 0);
    assert_true(t == 1703238845.0);
    static const char *const bad[] = {"", "yesterday", "2023-13-01 00:00:00",
                                      "2023-12-22 09:54", "2023-12-22 09:54:05.", "2023-12-22 "
                                      "09:54:05 junk", "2023-12-22 25:00:00", NULL};
    for (int i = 0; bad[i]; i++)
        if (tf_exchange_parse_time(bad[i], &t) == 0)
            fail_msg("'%s' parsed as a time", bad[i]);
    tf_exchange_python_time(0, buf, sizeof buf);
    assert_string_equal(buf, "");
    /* At the limits: day 31, a leap second (the next minute's first), a zone
     * west of UTC, a fraction finer than microseconds rounded to them. */
    assert_int_equal(tf_exchange_parse_time("2023-12-31 09:54:05", &t), 0);
    assert_true(t == 1704016445.0);
    assert_int_equal(tf_exchange_parse_time("2016-12-31 23:59:60+00:00", &t), 0);
    assert_true(t == 1483228800.0);
    assert_int_not_equal(tf_exchange_parse_time("2016-12-31 23:59:61+00:00", &t), 0);
    assert_int_not_equal(tf_exchange_parse_time("2023-12-32 09:54:05", &t), 0);
    assert_int_equal(tf_exchange_parse_time("2023-12-22 04:54:05-05:00", &t), 0);
    assert_true(t == 1703238845.0);
    assert_int_equal(tf_exchange_parse_time("2023-12-22 09:54:05.1234567Z", &t), 0);
    assert_true(t == 1703238845.0 + 123457 / 1e6);
}

static void test_statuses(void **state)
{
    (void)state;
    assert_null(tf_exchange_kt_failure(TF_STATUS_OK));
    assert_string_equal(tf_exchange_kt_failure(TF_STATUS_INVALID), "InvalidConfig");
    assert_string_equal(tf_exchange_kt_failure(TF_STATUS_COMPILE_ERROR), "CompilationFailedConfig");
    for (int s = TF_STATUS_LAUNCH_ERROR; s < TF_STATUS_COUNT; s++)
        assert_string_equal(tf_exchange_kt_failure(s), "RuntimeFailedConfig");
    assert_int_equal(tf_exchange_kt_status("InvalidConfig"), TF_STATUS_INVALID);
    assert_int_equal(tf_exchange_kt_status("CompilationFailedConfig"), TF_STATUS_COMPILE_ERROR);
    assert_int_equal(tf_exchange_kt_status("RuntimeFailedConfig"), TF_STATUS_RUNTIME_ERROR);
    assert_int_equal(tf_exchange_kt_status("ErrorConfig"), TF_STATUS_RUNTIME_ERROR);
    assert_int_equal(tf_exchange_kt_status("Exploded"), -1);
    /* T4: six of tunefarm's statuses go out and come back as themselves. */
    static const int same[] = {TF_STATUS_OK, TF_STATUS_INVALID, TF_STATUS_COMPILE_ERROR,
                               TF_STATUS_RUNTIME_ERROR, TF_STATUS_TIMEOUT, TF_STATUS_WRONG_RESULT};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++)
        assert_int_equal(tf_exchange_t4_status(tf_exchange_t4_invalidity(same[i])), same[i]);
    assert_string_equal(tf_exchange_t4_invalidity(TF_STATUS_CRASHED), "runtime");
    assert_string_equal(tf_exchange_t4_invalidity(TF_STATUS_LAUNCH_ERROR), "runtime");
    assert_string_equal(tf_exchange_t4_invalidity(TF_STATUS_WRONG_RESULT), "correctness");
    assert_int_equal(tf_exchange_t4_status("bogus"), -1);
}

static void check_value(const struct tf_param *p, int digit, const char *json_want,
                        const char *key_want)
{
    json_t *v = tf_exchange_param_json(p, digit);
    char *text = json_dumps(v, JSON_ENCODE_ANY);
    char key[64];
    tf_exchange_param_key(p, digit, key, sizeof key);
    if (strcmp(text, json_want) != 0 || strcmp(key, key_want) != 0)
        fail_msg("%s[%d]: JSON %s (want %s), key %s (want %s)", p->name, digit, text, json_want,
                 key, key_want);
    free(text);
    json_decref(v);
}

static void test_param_values(void **state)
{
    (void)state;
    int64_t ints[] = {16, -3};
    char *reals[] = {"0.5", "1.0", "1e-05"}, *bools[] = {"True", "False"};
    char *mixed[] = {"float4", "2"}, *numbers[] = {"1", "2.5"};
    struct tf_param pi = {.name = "BS", .kind = TF_PARAM_INT, .count = 2, .ints = ints};
    struct tf_param pr = {.name = "F", .kind = TF_PARAM_ENUM, .count = 3, .strings = reals};
    struct tf_param pb = {.name = "B", .kind = TF_PARAM_ENUM, .count = 2, .strings = bools};
    struct tf_param pm = {.name = "T", .kind = TF_PARAM_ENUM, .count = 2, .strings = mixed};
    struct tf_param pn = {.name = "N", .kind = TF_PARAM_ENUM, .count = 2, .strings = numbers};
    check_value(&pi, 1, "-3", "-3");
    check_value(&pr, 0, "0.5", "0.5");
    check_value(&pr, 1, "1.0", "1.0");
    check_value(&pr, 2, "1.0000000000000001e-5", "1e-05");
    check_value(&pb, 0, "true", "True");
    check_value(&pm, 1, "\"2\"", "2"); /* one value is text: all stay text */
    check_value(&pn, 0, "1", "1");
    check_value(&pn, 1, "2.5", "2.5");
    /* Numbers not spelled as Python spells them stay text: "1.50" and "1.5"
     * would become one number, "-0" would come back as "0". */
    char *odd[] = {"1.50", "2"}, *zero[] = {"-0", "1"};
    struct tf_param po = {.name = "O", .kind = TF_PARAM_ENUM, .count = 2, .strings = odd};
    struct tf_param pz = {.name = "Z", .kind = TF_PARAM_ENUM, .count = 2, .strings = zero};
    check_value(&po, 0, "\"1.50\"", "1.50");
    check_value(&pz, 0, "\"-0\"", "-0");
    /* Two values of one number ("1" and "1.0", both spelled as Python spells
     * them) stay text: as numbers a reader could not tell them apart. */
    char *same[] = {"1", "1.0"};
    struct tf_param ps = {.name = "S", .kind = TF_PARAM_ENUM, .count = 2, .strings = same};
    check_value(&ps, 0, "\"1\"", "1");
    check_value(&ps, 1, "\"1.0\"", "1.0");
}

static void test_utf8(void **state)
{
    (void)state;
    char out[32];
    tf_exchange_utf8("caf\xc3\xa9 ok", out, sizeof out);
    assert_string_equal(out, "caf\xc3\xa9 ok");
    tf_exchange_utf8("bad \xff byte", out, sizeof out);
    assert_string_equal(out, "bad ? byte");
    tf_exchange_utf8("cut \xc3", out, sizeof out); /* a message cut mid-character */
    assert_string_equal(out, "cut ?");
    tf_exchange_utf8("\xed\xa0\x80", out, sizeof out); /* a surrogate: not UTF-8 */
    assert_string_equal(out, "???");
    /* RFC 3629 at its edges: overlong forms (2, 3 and 4 bytes) and code
     * points past U+10FFFF are not UTF-8; U+0080, U+0800, U+10000 and
     * U+10FFFF, the first or last of their lengths, are. */
    tf_exchange_utf8("\xc0\xaf|\xc1\xbf", out, sizeof out);
    assert_string_equal(out, "??|??");
    tf_exchange_utf8("\xe0\x80\xaf", out, sizeof out);
    assert_string_equal(out, "???");
    tf_exchange_utf8("\xf0\x8f\xbf\xbf", out, sizeof out);
    assert_string_equal(out, "????");
    tf_exchange_utf8("\xf4\x90\x80\x80", out, sizeof out);
    assert_string_equal(out, "????");
    tf_exchange_utf8("\xc2\x80\xe0\xa0\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", out, sizeof out);
    assert_string_equal(out, "\xc2\x80\xe0\xa0\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf");
    json_t *j = tf_exchange_jstr("x\xfe");
    assert_non_null(j);
    assert_string_equal(json_string_value(j), "x?");
    json_decref(j);
}

/* Text for a terminal: control characters (C0 but tab and newline, DEL, C1)
 * become '?' as bytes that are not UTF-8 do; the rest, and UTF-8 characters
 * whose bytes resemble C1 ones (U+00E9 is 0xc3 0xa9), are kept. The export
 * rule (tf_exchange_utf8) keeps control characters: JSON escapes them. */
static void test_terminal(void **state)
{
    (void)state;
    char out[64];
    tf_exchange_terminal("#error \"a \x1b[2J\x1b]0;t\x07 b\"", out, sizeof out);
    assert_string_equal(out, "#error \"a ?[2J?]0;t? b\"");
    tf_exchange_terminal("tab\tline\nend\r\x7f", out, sizeof out);
    assert_string_equal(out, "tab\tline\nend??");
    tf_exchange_terminal("csi \xc2\x9b" "31m, nbsp \xc2\xa0, caf\xc3\xa9, \xe2\x80\x98q\xe2\x80\x99",
                         out, sizeof out);
    assert_string_equal(out, "csi ?31m, nbsp \xc2\xa0, caf\xc3\xa9, \xe2\x80\x98q\xe2\x80\x99");
    tf_exchange_terminal("bad \xff\x9b cut \xc3", out, sizeof out);
    assert_string_equal(out, "bad ?? cut ?");
    tf_exchange_terminal("\x1b\x1b\x1b\x1b", out, 3); /* cut to fit, terminated */
    assert_string_equal(out, "??");
    tf_exchange_utf8("a\x1b", out, sizeof out);
    assert_string_equal(out, "a\x1b");
}

static void test_device_json(void **state)
{
    (void)state;
    struct tf_device d, back;
    memset(&d, 0, sizeof d);
    memset(&back, 0, sizeof back);
    strcpy(d.backend, "cuda");
    strcpy(d.vendor, "NVIDIA");
    strcpy(d.name, "NVIDIA H100 80GB HBM3");
    strcpy(d.arch, "sm_90");
    strcpy(d.host, "gpu07");
    d.memory_bytes = 85899345920ull;
    d.compute_units = 132;
    strcpy(d.driver_version, "580.159.04");
    for (int p = 0; p < TF_DEVPROP_COUNT; p++)
        d.props[p] = 100 + p;
    json_t *j = tf_exchange_device_json(&d);
    struct tf_error err = {0};
    assert_int_equal(tf_exchange_device_from_json(j, &back, "f.json", "device", &err), 0);
    assert_memory_equal(&d, &back, sizeof d);
    json_object_set_new(j, "memory_bytes", json_string("lots"));
    assert_int_not_equal(tf_exchange_device_from_json(j, &back, "f.json", "device", &err), 0);
    assert_non_null(strstr(err.message, "device.memory_bytes"));
    json_decref(j);
    j = json_pack("{s:s}", "name", "a name much longer than the field can hold, which is one "
                  "hundred and twenty-eight bytes wide, so this one, at well over that length, "
                  "is refused");
    assert_int_not_equal(tf_exchange_device_from_json(j, &back, "f.json", "device", &err), 0);
    assert_non_null(strstr(err.message, "at most 127 bytes"));
    json_decref(j);
    /* At the limits: a name of 127 bytes fits, 128 do not (not cut short);
     * compute units up to 2^32 - 1 (not wrapped); memory 0 or more. */
    char name[129];
    memset(name, 'n', 128);
    name[128] = '\0';
    j = json_pack("{s:s}", "name", name);
    assert_int_not_equal(tf_exchange_device_from_json(j, &back, "f.json", "device", &err), 0);
    assert_non_null(strstr(err.message, "device.name: expected a string of at most 127 bytes"));
    json_decref(j);
    name[127] = '\0';
    j = json_pack("{s:s, s:I, s:I}", "name", name, "compute_units", (json_int_t)UINT32_MAX,
                  "memory_bytes", (json_int_t)0);
    assert_int_equal(tf_exchange_device_from_json(j, &back, "f.json", "device", &err), 0);
    assert_string_equal(back.name, name);
    assert_true(back.compute_units == UINT32_MAX);
    assert_true(back.memory_bytes == 0);
    json_decref(j);
    j = json_pack("{s:I}", "compute_units", (json_int_t)UINT32_MAX + 1);
    assert_int_not_equal(tf_exchange_device_from_json(j, &back, "f.json", "device", &err), 0);
    assert_non_null(strstr(err.message, "device.compute_units: too large"));
    json_decref(j);
    j = json_pack("{s:I}", "memory_bytes", (json_int_t)-1);
    assert_int_not_equal(tf_exchange_device_from_json(j, &back, "f.json", "device", &err), 0);
    assert_non_null(strstr(err.message, "device.memory_bytes: expected a whole number, 0 or more"));
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_python_float), cmocka_unit_test(test_times),
        cmocka_unit_test(test_statuses),     cmocka_unit_test(test_param_values),
        cmocka_unit_test(test_utf8),         cmocka_unit_test(test_terminal),
        cmocka_unit_test(test_device_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
