/* test_verify.c - output verification: tolerances, NaN/Inf, exact integers,
 * and the message that names the first bad element. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../worker/verify.h"
#include "../../schema/status.h"

static void test_tolerances(void **state)
{
    (void)state;
    char msg[160];
    const float ref[] = {1.0f, 100.0f, 0.0f};
    /* allowed: atol 1e-3 + rtol 1e-2 * |ref| -> 0.011, 1.001, 0.001 */
    const float ok[] = {1.0105f, 100.9f, -0.0009f};
    assert_int_equal(tf_verify("y", TF_ELEM_F32, ok, ref, 3, 1e-2, 1e-3, msg, sizeof msg),
                     TF_STATUS_OK);
    assert_string_equal(msg, "");
    const float bad[] = {1.0f, 101.1f, 0.0f};
    assert_int_equal(tf_verify("y", TF_ELEM_F32, bad, ref, 3, 1e-2, 1e-3, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    assert_non_null(strstr(msg, "y[1]"));
    const float bad_abs[] = {1.0f, 100.0f, 0.0011f};
    assert_int_equal(tf_verify("y", TF_ELEM_F32, bad_abs, ref, 3, 1e-2, 1e-3, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    /* rtol is relative to the reference, not to the output */
    const double dref[] = {1.0};
    const double dgot[] = {1.5};
    assert_int_equal(tf_verify("d", TF_ELEM_F64, dgot, dref, 1, 0.4, 0.0, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    assert_int_equal(tf_verify("d", TF_ELEM_F64, dgot, dref, 1, 0.5, 0.0, msg, sizeof msg),
                     TF_STATUS_OK);
}

static void test_nan_inf_never_pass(void **state)
{
    (void)state;
    char msg[160];
    const double ref[] = {1.0, 2.0};
    const double nan_got[] = {1.0, NAN};
    assert_int_equal(tf_verify("C", TF_ELEM_F64, nan_got, ref, 2, 1e9, 1e9, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    assert_non_null(strstr(msg, "C[1]"));
    assert_non_null(strstr(msg, "nan"));
    const double inf_got[] = {INFINITY, 2.0};
    assert_int_equal(tf_verify("C", TF_ELEM_F64, inf_got, ref, 2, 1e9, 1e9, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    /* NaN == NaN in the reference is not agreement */
    const float fnan[] = {NAN};
    assert_int_equal(tf_verify("C", TF_ELEM_F32, fnan, fnan, 1, 1.0, 1.0, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    const float finf[] = {INFINITY};
    assert_int_equal(tf_verify("C", TF_ELEM_F32, finf, finf, 1, 1.0, 1.0, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
}

/* An infinite reference is never met: with rtol > 0 the bound atol + rtol*|ref|
 * is infinite too, so only the |ref| <= max term rejects a finite output. */
static void test_infinite_reference(void **state)
{
    (void)state;
    char msg[160];
    const double dref[] = {2.0, INFINITY}, dgot[] = {2.0, 1.0};
    assert_int_equal(tf_verify("C", TF_ELEM_F64, dgot, dref, 2, 1e-6, 1e-6, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    assert_non_null(strstr(msg, "C[1] = 1, expected inf (1 of 2 wrong)"));
    const float fref[] = {INFINITY}, fgot[] = {1.0f};
    assert_int_equal(tf_verify("C", TF_ELEM_F32, fgot, fref, 1, 1e-6, 1e-6, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    /* -INFINITY against 0, both ways round */
    const double dninf[] = {-INFINITY}, dzero[] = {0.0};
    assert_int_equal(tf_verify("C", TF_ELEM_F64, dzero, dninf, 1, 1e-6, 1e-6, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    assert_non_null(strstr(msg, "expected -inf"));
    assert_int_equal(tf_verify("C", TF_ELEM_F64, dninf, dzero, 1, 1e-6, 1e-6, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    const float fninf[] = {-INFINITY}, fzero[] = {0.0f};
    assert_int_equal(tf_verify("C", TF_ELEM_F32, fzero, fninf, 1, 1e-6, 1e-6, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    assert_int_equal(tf_verify("C", TF_ELEM_F32, fninf, fzero, 1, 1e-6, 1e-6, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
}

static void test_ints_exact(void **state)
{
    (void)state;
    char msg[160];
    const int32_t ref[] = {5, 6, 7, 8};
    const int32_t off[] = {5, 6, 8, 9};
    /* huge tolerances do not apply to integers */
    assert_int_equal(tf_verify("h", TF_ELEM_I32, off, ref, 4, 1.0, 10.0, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    assert_string_equal(msg, "h[2] = 8, expected 7 (2 of 4 wrong)");
    assert_int_equal(tf_verify("h", TF_ELEM_I32, ref, ref, 4, 0, 0, msg, sizeof msg),
                     TF_STATUS_OK);
    const int64_t big_ref[] = {INT64_C(1) << 60};
    const int64_t big_got[] = {(INT64_C(1) << 60) + 1}; /* equal as doubles, not as ints */
    assert_int_equal(tf_verify("g", TF_ELEM_I64, big_got, big_ref, 1, 0, 0, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    assert_non_null(strstr(msg, "g[0] = 1152921504606846977"));
}

static void test_first_bad_index_message(void **state)
{
    (void)state;
    char msg[160];
    float ref[100], got[100];
    for (int i = 0; i < 100; i++)
        ref[i] = got[i] = (float)i;
    got[41] = 3.5f;
    got[97] = -1.0f;
    assert_int_equal(tf_verify("out", TF_ELEM_F32, got, ref, 100, 1e-5, 1e-6, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    assert_string_equal(msg, "out[41] = 3.5, expected 41 (2 of 100 wrong)");
    /* a short buffer truncates, never overflows */
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    assert_int_equal(tf_verify("out", TF_ELEM_F32, got, ref, 100, 1e-5, 1e-6, tiny, sizeof tiny),
                     TF_STATUS_WRONG_RESULT);
    assert_int_equal(strlen(tiny), 7);
    /* zero elements always pass */
    assert_int_equal(tf_verify("out", TF_ELEM_F32, got, ref, 0, 0, 0, msg, sizeof msg),
                     TF_STATUS_OK);
    /* An element exactly at the tolerance (|1.5 - 1| = rtol * |1|) passes, so
     * the first bad one named is the one after it, for floats and doubles:
     * the count and the search for the first must apply the same rule. */
    const float fref[] = {1, 1, 1, 1}, fgot[] = {1.5f, 1, 3, 1};
    assert_int_equal(tf_verify("f", TF_ELEM_F32, fgot, fref, 4, 0.5, 0, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    assert_string_equal(msg, "f[2] = 3, expected 1 (1 of 4 wrong)");
    const double dref[] = {1, 1, 1, 1}, dgot[] = {1.5, 1, 3, 1};
    assert_int_equal(tf_verify("d", TF_ELEM_F64, dgot, dref, 4, 0.5, 0, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    assert_string_equal(msg, "d[2] = 3, expected 1 (1 of 4 wrong)");
}

/* The checksum the device comparison checks its expected copy with
 * (verify.h): by hand for three words, then a changed, a moved and a swapped
 * word, a constant added to every element and two neighbours moved in
 * opposite directions all change it. */
static uint64_t weight(uint64_t j) /* SplitMix64's finaliser, odd (verify.c) */
{
    j += 0x9e3779b97f4a7c15ull;
    j = (j ^ (j >> 30)) * 0xbf58476d1ce4e5b9ull;
    j = (j ^ (j >> 27)) * 0x94d049bb133111ebull;
    return (j ^ (j >> 31)) | 1;
}

static void test_checksum(void **state)
{
    (void)state;
    const uint32_t w[3] = {1, 2, 3};
    assert_true(tf_verify_checksum(w, sizeof w) == 1 * weight(0) + 2 * weight(1) + 3 * weight(2));
    assert_true((weight(0) & 1) && (weight(1) & 1) && weight(0) != weight(1));
    assert_int_equal(tf_verify_checksum(w, 0), 0);
    enum { N = 1 << 16 };
    static int32_t v[N];
    for (int i = 0; i < N; i++)
        v[i] = i * 7 - 1000;
    const uint64_t base = tf_verify_checksum(v, sizeof v);
    v[700] ^= 1 << 20; /* changed */
    assert_true(tf_verify_checksum(v, sizeof v) != base);
    v[700] ^= 1 << 20;
    assert_true(tf_verify_checksum(v, sizeof v) == base);
    const int32_t t = v[3]; /* swapped */
    v[3] = v[4];
    v[4] = t;
    assert_true(tf_verify_checksum(v, sizeof v) != base);
    v[4] = v[3];
    v[3] = t;
    memmove(v + 1, v, 9 * sizeof *v); /* moved: ten words shifted by one */
    assert_true(tf_verify_checksum(v, sizeof v) != base);
    memmove(v, v + 1, 9 * sizeof *v);
    v[9] = 9 * 7 - 1000;
    assert_true(tf_verify_checksum(v, sizeof v) == base);
    v[10] += 3, v[11] -= 1; /* cancelled each other with weights 2j + 1 */
    assert_true(tf_verify_checksum(v, sizeof v) != base);
    v[10] -= 3, v[11] += 1;
    for (int i = 0; i < N; i++) /* a constant added everywhere: so did those */
        v[i] += 65536;
    assert_true(tf_verify_checksum(v, sizeof v) != base);
    /* a double is two words, low first (little-endian), as the device reads it */
    const double d = 1.5;
    uint32_t halves[2];
    memcpy(halves, &d, sizeof d);
    assert_true(tf_verify_checksum(&d, sizeof d) ==
                (uint64_t)halves[0] * weight(0) + (uint64_t)halves[1] * weight(1));
}

/* A large output is compared in pieces on threads (verify.c): the message
 * still names the first bad element of the whole output and counts all of
 * them, whichever pieces they fall in, for every element type. */
static void test_pieces_report_the_whole_output(void **state)
{
    (void)state;
    const size_t n = ((size_t)5 << 20) + 3; /* 4 pieces, the last one longer */
    float *ref = malloc(n * sizeof *ref), *got = malloc(n * sizeof *got);
    int64_t *iref = malloc(n * sizeof *iref), *igot = malloc(n * sizeof *igot);
    assert_non_null(ref);
    assert_non_null(got);
    assert_non_null(iref);
    assert_non_null(igot);
    for (size_t i = 0; i < n; i++) {
        ref[i] = got[i] = (float)(i % 1000);
        iref[i] = igot[i] = (int64_t)i;
    }
    char msg[160];
    assert_int_equal(tf_verify("C", TF_ELEM_F32, got, ref, n, 1e-5, 1e-6, msg, sizeof msg),
                     TF_STATUS_OK);
    /* bad elements in the third piece, then the second, then the last one's tail */
    const size_t bad[] = {3 * ((size_t)5 << 20) / 4 - 7, ((size_t)5 << 20) / 2 + 11, n - 1};
    for (size_t b = 0; b < 3; b++) {
        got[bad[b]] = -2.0f;
        igot[bad[b]] = -5;
    }
    assert_int_equal(tf_verify("C", TF_ELEM_F32, got, ref, n, 1e-5, 1e-6, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    char want[160];
    snprintf(want, sizeof want, "C[%zu] = -2, expected %g (3 of %zu wrong)", bad[1],
             (double)ref[bad[1]], n);
    assert_string_equal(msg, want);
    assert_int_equal(tf_verify("I", TF_ELEM_I64, igot, iref, n, 0, 0, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    snprintf(want, sizeof want, "I[%zu] = -5, expected %zu (3 of %zu wrong)", bad[1], bad[1], n);
    assert_string_equal(msg, want);
    free(ref);
    free(got);
    free(iref);
    free(igot);
}

static void test_elem_size(void **state)
{
    (void)state;
    assert_int_equal(tf_elem_size(TF_ELEM_I32), 4);
    assert_int_equal(tf_elem_size(TF_ELEM_I64), 8);
    assert_int_equal(tf_elem_size(TF_ELEM_F32), 4);
    assert_int_equal(tf_elem_size(TF_ELEM_F64), 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tolerances),
        cmocka_unit_test(test_nan_inf_never_pass),
        cmocka_unit_test(test_infinite_reference),
        cmocka_unit_test(test_ints_exact),
        cmocka_unit_test(test_first_bad_index_message),
        cmocka_unit_test(test_pieces_report_the_whole_output),
        cmocka_unit_test(test_checksum),
        cmocka_unit_test(test_elem_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
