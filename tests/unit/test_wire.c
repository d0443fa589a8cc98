/* Tests for schema/wire.c: every message round-trips field for field, and a
 * message cut at any length, with a foreign magic, another version or trailing
 * bytes is rejected with an error instead of being misread. Cut messages are
 * decoded from heap copies of exactly their size, so that under the sanitizer
 * build an over-read is a report, not a silent read of the rest of the message. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "schema/wire.h"

static struct tf_device sample_device(void)
{
    struct tf_device d = {0};
    strcpy(d.backend, "cuda");
    strcpy(d.vendor, "NVIDIA");
    strcpy(d.name, "NVIDIA H100 80GB HBM3");
    strcpy(d.arch, "sm_90");
    strcpy(d.uuid, "GPU-1234");
    strcpy(d.pci_bus, "0000:17:00.0");
    strcpy(d.host, "node042");
    d.memory_bytes = 85899345920ull;
    d.compute_units = 132;
    strcpy(d.driver_version, "580.159.04");
    strcpy(d.runtime_version, "CUDA 13.0");
    strcpy(d.compiler_version, "NVRTC 13.0");
    strcpy(d.tunefarm_version, "40e1511");
    d.clock_mhz = 1980;
    d.memory_clock_mhz = 2619;
    d.power_limit_w = 700.5;
    strcpy(d.clock_policy, "manual");
    for (int i = 0; i < TF_DEVPROP_COUNT; i++)
        d.props[i] = 1000 + i;
    return d;
}

static void test_hello_round_trip(void **state)
{
    (void)state;
    struct tf_buf b = {0};
    struct tf_device d = sample_device(), back;
    struct tf_error err;
    enum tf_msg_type type;
    char compilers[32];
    tf_wire_hello(&b, &d, "host,cuda");
    assert_int_equal(tf_wire_open(&b, &type, &err), 0);
    assert_int_equal(type, TF_MSG_HELLO);
    assert_int_equal(tf_wire_get_hello(&b, &back, compilers, sizeof compilers, &err), 0);
    assert_memory_equal(&d, &back, sizeof d);
    assert_string_equal(compilers, "host,cuda");
    /* a list longer than the caller's buffer is refused, not cut */
    tf_wire_hello(&b, &d, "host,cuda,hip,and,many,more,backends,than,fit");
    assert_int_equal(tf_wire_open(&b, &type, &err), 0);
    assert_int_not_equal(tf_wire_get_hello(&b, &back, compilers, sizeof compilers, &err), 0);
    tf_buf_free(&b);
}

static void test_compile_round_trip(void **state)
{
    (void)state;
    struct tf_buf b = {0};
    struct tf_device d = sample_device(), back;
    struct tf_error err;
    enum tf_msg_type type;
    uint64_t list[] = {3, 5, 8};
    struct tf_work w = {.kernel = 2, .problem = 1, .lo = 7, .hi = 99, .nlist = 3, .list = list};
    struct tf_work got;
    tf_wire_compile(&b, &d, &w);
    assert_int_equal(tf_wire_open(&b, &type, &err), 0);
    assert_int_equal(type, TF_MSG_COMPILE);
    assert_int_equal(tf_wire_get_compile(&b, &back, &got, &err), 0);
    assert_memory_equal(&d, &back, sizeof d);
    assert_int_equal(got.kernel, 2);
    assert_int_equal(got.problem, 1);
    assert_int_equal(got.lo, 7);
    assert_int_equal(got.hi, 99);
    assert_int_equal(got.nlist, 3);
    assert_memory_equal(got.list, list, sizeof list);
    free(got.list);
    tf_buf_free(&b);
}

static void test_results_round_trip(void **state)
{
    (void)state;
    struct tf_result r[3];
    for (int i = 0; i < 3; i++) {
        tf_result_init(&r[i], (uint32_t)i, 2, 1000000007ull * (uint64_t)i, i * 3);
        r[i].samples = 17;
        r[i].time_median = 1.5e-3 * (i + 1);
        r[i].registers = 96;
        r[i].shared_bytes = 49152;
        r[i].warnings = i - 1; /* -1 (unknown), 0, 1 */
        if (i == 2)
            tf_strlcpy(r[i].first_warning, "k.cu(2): warning #177-D: variable \"x\" unused",
                       sizeof r[i].first_warning);
        r[i].metrics[0] = 123.5;
        r[i].noisy = (uint8_t)(i == 1);
        r[i].energy_status = (uint8_t)(i == 0 ? TF_ENERGY_MEASURED : TF_ENERGY_NO_WINDOW);
        r[i].energy_j = i == 0 ? 0.25 : NAN;
        snprintf(r[i].message, sizeof r[i].message, "message %d", i);
    }
    struct tf_buf b = {0};
    struct tf_error err;
    enum tf_msg_type type;
    tf_wire_results(&b, r, 3);
    assert_int_equal(tf_wire_open(&b, &type, &err), 0);
    assert_int_equal(type, TF_MSG_RESULTS);
    struct tf_result *back;
    uint32_t n;
    assert_int_equal(tf_wire_get_results(&b, &back, &n, &err), 0);
    assert_int_equal(n, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(back[i].config, r[i].config);
        assert_int_equal(back[i].status, r[i].status);
        assert_int_equal(back[i].registers, 96);
        assert_int_equal(back[i].shared_bytes, 49152);
        assert_true(back[i].time_median == r[i].time_median);
        assert_true(isnan(back[i].time_min));
        assert_true(isnan(back[i].power_w));
        assert_string_equal(back[i].message, r[i].message);
        assert_int_equal(back[i].noisy, i == 1);
        assert_int_equal(back[i].energy_status, r[i].energy_status);
        assert_true(i == 0 ? back[i].energy_j == 0.25 : isnan(back[i].energy_j));
        assert_int_equal(back[i].warnings, i - 1);
        assert_string_equal(back[i].first_warning, r[i].first_warning);
    }
    free(back);
    tf_buf_free(&b);
}

/* A result as wire version 2 encoded it (a journal record of a tunefarm
 * before noisy and energy_status): the current encoding less its last two
 * bytes. It decodes as version 2, not as the current version, and its new
 * fields read as "not noisy" and "unknown" (not_run for a failure). */
static void test_result_v2(void **state)
{
    (void)state;
    struct tf_result r, back;
    tf_result_init(&r, 1, 2, 77, TF_STATUS_OK);
    r.time_median = 1e-3;
    r.noisy = 1;
    r.energy_status = TF_ENERGY_MEASURED;
    struct tf_buf b = {0};
    tf_buf_put_result(&b, &r);
    b.len -= 2 + 8; /* cut the fields versions 3 and 4 appended (an empty first_warning) */
    assert_int_not_equal(tf_buf_get_result(&b, &back), 0);
    b.pos = 0;
    assert_int_equal(tf_buf_get_result_v2(&b, &back), 0);
    assert_int_equal(b.pos, b.len);
    assert_int_equal(back.config, 77);
    assert_true(back.time_median == 1e-3);
    assert_int_equal(back.noisy, 0);
    assert_int_equal(back.energy_status, TF_ENERGY_UNKNOWN);
    tf_buf_free(&b);
    tf_result_init(&r, 1, 2, 78, TF_STATUS_CRASHED);
    tf_buf_put_result(&b, &r);
    b.len -= 2 + 8;
    assert_int_equal(tf_buf_get_result_v2(&b, &back), 0);
    assert_int_equal(back.energy_status, TF_ENERGY_NOT_RUN);
    tf_buf_free(&b);
}

static void test_work_and_job_round_trip(void **state)
{
    (void)state;
    uint64_t list[] = {3, 99, 1ull << 40};
    struct tf_work w = {.kernel = 1, .problem = 2, .nlist = 3, .list = list};
    struct tf_buf b = {0};
    struct tf_error err;
    enum tf_msg_type type;
    tf_wire_work(&b, &w);
    struct tf_work back;
    assert_int_equal(tf_wire_open(&b, &type, &err), 0);
    assert_int_equal(type, TF_MSG_WORK);
    assert_int_equal(tf_wire_get_work(&b, &back, &err), 0);
    assert_int_equal(back.nlist, 3);
    assert_memory_equal(back.list, list, sizeof list);
    free(back.list);

    struct tf_bundle *bundle = tf_bundle_create();
    tf_bundle_add(bundle, "jobs/x.yaml", "name: x\n", 8);
    tf_bundle_add(bundle, "kernels/k/k.c", "int x;\0binary", 13);
    tf_wire_job(&b, bundle);
    assert_int_equal(tf_wire_open(&b, &type, &err), 0);
    struct tf_bundle *copy = tf_wire_get_job(&b, &err);
    assert_non_null(copy);
    assert_true(copy->sealed);
    assert_int_equal(copy->count, 2);
    assert_string_equal(copy->files[0].path, "jobs/x.yaml");
    assert_int_equal(copy->files[1].size, 13);
    assert_memory_equal(copy->files[1].data, "int x;\0binary", 13);
    char h1[65], h2[65];
    tf_bundle_hash(bundle, h1);
    tf_bundle_hash(copy, h2);
    assert_string_equal(h1, h2);
    tf_bundle_destroy(copy);
    tf_bundle_destroy(bundle);
    tf_buf_free(&b);
}

/* Decode a message of any type; 0 if accepted. */
static int decode_any(struct tf_buf *b)
{
    struct tf_error err;
    enum tf_msg_type type;
    if (tf_wire_open(b, &type, &err))
        return -1;
    switch (type) {
    case TF_MSG_HELLO: {
        struct tf_device d;
        char compilers[64];
        return tf_wire_get_hello(b, &d, compilers, sizeof compilers, &err);
    }
    case TF_MSG_COMPILE: {
        struct tf_device d;
        struct tf_work w;
        int rc = tf_wire_get_compile(b, &d, &w, &err);
        if (rc == 0)
            free(w.list);
        return rc;
    }
    case TF_MSG_RESULTS: {
        struct tf_result *r;
        uint32_t n;
        int rc = tf_wire_get_results(b, &r, &n, &err);
        free(r);
        return rc;
    }
    case TF_MSG_WORK: {
        struct tf_work w;
        int rc = tf_wire_get_work(b, &w, &err);
        free(w.list);
        return rc;
    }
    case TF_MSG_JOB: {
        struct tf_bundle *bundle = tf_wire_get_job(b, &err);
        tf_bundle_destroy(bundle);
        return bundle ? 0 : -1;
    }
    default:
        return 0;
    }
}

/* Decode the first `cut` bytes of `msg` (its declared payload length fixed to
 * match if `fix_length`), from a heap copy of exactly `cut` bytes: a decoder
 * that reads past the end of what it was given then reads past the end of an
 * allocation, which the sanitizer build (make sanitize) reports. Cutting only
 * the length of the full buffer would let such a read land in the rest of the
 * message, unnoticed (issue 11, item 23). 0 if accepted. */
static int decode_cut(const struct tf_buf *msg, size_t cut, int fix_length)
{
    assert_true(cut <= msg->len);
    unsigned char *copy = malloc(cut);
    assert_true(copy != NULL || cut == 0);
    if (cut > 0)
        memcpy(copy, msg->data, cut);
    if (fix_length && cut >= TF_WIRE_HEADER) {
        const uint32_t n = (uint32_t)(cut - TF_WIRE_HEADER);
        for (int i = 0; i < 4; i++)
            copy[12 + i] = (unsigned char)(n >> (8 * i));
    }
    struct tf_buf b = {.data = copy, .len = cut, .cap = cut};
    const int rc = decode_any(&b);
    free(copy);
    return rc;
}

static void test_truncated_and_foreign_messages(void **state)
{
    (void)state;
    struct tf_buf msgs[5] = {{0}};
    struct tf_device d = sample_device();
    struct tf_result r;
    tf_result_init(&r, 0, 0, 5, TF_STATUS_OK);
    uint64_t list[] = {1, 2};
    struct tf_work w = {.nlist = 2, .list = list};
    struct tf_bundle *bundle = tf_bundle_create();
    tf_bundle_add(bundle, "a.yaml", "abc", 3);
    tf_wire_hello(&msgs[0], &d, "host");
    tf_wire_results(&msgs[1], &r, 1);
    tf_wire_work(&msgs[2], &w);
    tf_wire_job(&msgs[3], bundle);
    tf_wire_compile(&msgs[4], &d, &w);
    tf_bundle_destroy(bundle);
    for (int m = 0; m < 5; m++) {
        size_t full = msgs[m].len;
        assert_int_equal(decode_any(&msgs[m]), 0);
        /* Cut anywhere: the header's length no longer matches. */
        for (size_t cut = 0; cut < full; cut++)
            assert_int_not_equal(decode_cut(&msgs[m], cut, 0), 0);
        /* Cut the payload but fix the declared length: the decoder must notice. */
        for (size_t cut = TF_WIRE_HEADER; cut < full; cut++)
            assert_int_not_equal(decode_cut(&msgs[m], cut, 1), 0);
        tf_buf_free(&msgs[m]);
    }

    /* Values out of range in a well-formed message are refused too. */
    struct tf_result bad;
    tf_result_init(&bad, 0, 0, 1, TF_STATUS_COUNT);
    struct tf_buf b = {0};
    struct tf_error err;
    enum tf_msg_type type;
    tf_wire_results(&b, &bad, 1);
    assert_int_not_equal(decode_any(&b), 0);
    tf_result_init(&bad, 0, 0, 1, TF_STATUS_OK);
    bad.phase = 3;
    tf_wire_results(&b, &bad, 1);
    assert_int_not_equal(decode_any(&b), 0);
    bad.phase = 2;
    tf_wire_results(&b, &bad, 1);
    assert_int_equal(decode_any(&b), 0);
    bad.noisy = 2; /* a flag is 0 or 1 */
    tf_wire_results(&b, &bad, 1);
    assert_int_not_equal(decode_any(&b), 0);
    bad.noisy = 1;
    bad.energy_status = TF_ENERGY_COUNT;
    tf_wire_results(&b, &bad, 1);
    assert_int_not_equal(decode_any(&b), 0);
    bad.energy_status = TF_ENERGY_COUNT - 1;
    tf_wire_results(&b, &bad, 1);
    assert_int_equal(decode_any(&b), 0);

    tf_wire_request(&b);
    b.data[0] ^= 0xff; /* foreign magic */
    assert_int_not_equal(tf_wire_open(&b, &type, &err), 0);
    assert_non_null(strstr(err.message, "not a tunefarm message"));
    tf_wire_request(&b);
    b.data[4] = 99; /* another version */
    assert_int_not_equal(tf_wire_open(&b, &type, &err), 0);
    assert_non_null(strstr(err.message, "wire version 99"));
    tf_wire_hello(&b, &d, "");
    tf_buf_put_u8(&b, 0); /* a trailing byte, length fixed up */
    uint32_t n = (uint32_t)(b.len - TF_WIRE_HEADER);
    for (int i = 0; i < 4; i++)
        b.data[12 + i] = (unsigned char)(n >> (8 * i));
    assert_int_equal(tf_wire_open(&b, &type, &err), 0);
    struct tf_device back;
    char compilers[8];
    assert_int_not_equal(tf_wire_get_hello(&b, &back, compilers, sizeof compilers, &err), 0);
    assert_non_null(strstr(err.message, "trailing"));
    tf_buf_free(&b);
}

/* The encoding itself, byte for byte: little-endian integers, doubles by
 * their IEEE bits, strings as a u32 length and the bytes (wire.c's header).
 * Journals keep results in it across builds, and ranks of different builds
 * must agree: a round trip alone would pass with any byte order. */
static void test_encoding_bytes(void **state)
{
    (void)state;
    struct tf_buf b = {0};
    tf_buf_put_u32(&b, 0x01020304u);
    tf_buf_put_u64(&b, 0x0102030405060708ull);
    tf_buf_put_f64(&b, 1.0); /* 0x3ff0000000000000 */
    tf_buf_put_str(&b, "ab");
    const unsigned char want[] = {4, 3, 2, 1, 8, 7, 6, 5, 4, 3, 2, 1,
                                  0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 2, 0, 0, 0, 'a', 'b'};
    assert_int_equal(b.len, sizeof want);
    assert_memory_equal(b.data, want, sizeof want);
    /* and bytes written by another build decode to the same values */
    struct tf_buf in = {.data = (unsigned char *)want, .len = sizeof want, .cap = sizeof want};
    uint32_t u32;
    uint64_t u64;
    double f64;
    char str[3];
    assert_int_equal(tf_buf_get_u32(&in, &u32), 0);
    assert_int_equal(tf_buf_get_u64(&in, &u64), 0);
    assert_int_equal(tf_buf_get_f64(&in, &f64), 0);
    assert_int_equal(tf_buf_get_str(&in, str, sizeof str), 0);
    assert_true(u32 == 0x01020304u && u64 == 0x0102030405060708ull && f64 == 1.0);
    assert_string_equal(str, "ab");
    assert_int_equal(in.pos, in.len);
    tf_buf_free(&b);
}

/* Strings against the reader's buffer: one that fills it with its
 * terminator fits, one a byte longer is refused (its terminator would land
 * past the buffer); a length beyond the message is refused by both readers,
 * the allocating one too. */
static void test_string_bounds(void **state)
{
    (void)state;
    struct tf_buf b = {0};
    char out[4];
    tf_buf_put_str(&b, "abc");
    assert_int_equal(tf_buf_get_str(&b, out, sizeof out), 0);
    assert_string_equal(out, "abc");
    b.len = b.pos = 0;
    tf_buf_put_str(&b, "abcd");
    struct {
        char out[4];
        char guard; /* where a terminator past out[] would land */
    } g = {.guard = 'G'};
    assert_int_not_equal(tf_buf_get_str(&b, g.out, sizeof g.out), 0);
    assert_int_equal(g.guard, 'G');
    /* a length of 5 with 3 bytes after it */
    b.len = b.pos = 0;
    tf_buf_put_u32(&b, 5);
    tf_buf_put_bytes(&b, "abc", 3);
    assert_int_not_equal(tf_buf_get_str(&b, out, sizeof out), 0);
    b.pos = 0;
    assert_null(tf_buf_get_strdup(&b));
    tf_buf_free(&b);
}

/* A peer of a newer tunefarm may send more device properties than this one
 * knows: ours are kept, the rest are skipped (consumed, not written past the
 * array), and the message still decodes to its end. */
static void test_device_with_more_properties(void **state)
{
    (void)state;
    struct tf_device d = sample_device();
    struct tf_buf b = {0};
    tf_buf_put_device(&b, &d);
    /* the property count precedes the properties, the message's last field */
    const size_t at = b.len - 8 * (size_t)TF_DEVPROP_COUNT - 4;
    const uint32_t more = TF_DEVPROP_COUNT + 2;
    for (int i = 0; i < 4; i++)
        b.data[at + (size_t)i] = (unsigned char)(more >> (8 * i));
    tf_buf_put_u64(&b, 0x1111);
    tf_buf_put_u64(&b, 0x2222);
    struct {
        struct tf_device d;
        int64_t guard; /* where a property past props[] would land */
    } back = {.guard = -7};
    assert_int_equal(tf_buf_get_device(&b, &back.d), 0);
    assert_int_equal(b.pos, b.len);
    assert_memory_equal(&back.d, &d, sizeof d);
    assert_int_equal(back.guard, -7);
    tf_buf_free(&b);
}

/* The header's payload length must match: a message with bytes its header
 * does not declare is refused at open, even one no decoder reads (REQUEST,
 * STOP), and so is one declaring more than it has. */
static void test_declared_length(void **state)
{
    (void)state;
    struct tf_buf b = {0};
    struct tf_error err;
    enum tf_msg_type type;
    tf_wire_request(&b);
    assert_int_equal(tf_wire_open(&b, &type, &err), 0);
    assert_int_equal(type, TF_MSG_REQUEST);
    tf_buf_put_u8(&b, 0); /* declared 0 payload bytes, has 1 */
    assert_int_not_equal(tf_wire_open(&b, &type, &err), 0);
    assert_non_null(strstr(err.message, "declares 0 payload bytes but has 1"));
    tf_wire_stop(&b);
    b.data[12] = 4; /* declares 4, has 0 */
    assert_int_not_equal(tf_wire_open(&b, &type, &err), 0);
    assert_non_null(strstr(err.message, "declares 4 payload bytes but has 0"));
    tf_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hello_round_trip),
        cmocka_unit_test(test_compile_round_trip),
        cmocka_unit_test(test_results_round_trip),
        cmocka_unit_test(test_result_v2),
        cmocka_unit_test(test_work_and_job_round_trip),
        cmocka_unit_test(test_truncated_and_foreign_messages),
        cmocka_unit_test(test_encoding_bytes),
        cmocka_unit_test(test_string_bounds),
        cmocka_unit_test(test_device_with_more_properties),
        cmocka_unit_test(test_declared_length),
    };
    return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
