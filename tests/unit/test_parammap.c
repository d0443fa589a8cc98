/* Tests for schema/parammap.c: configurations of one parameter space as
 * configurations of another. Parameters in another order map value for value
 * (every configuration checked by its values' texts); an enum "16" is an int
 * 16; a parameter `to` lacks is ignored, a value it lacks leaves the
 * configuration unmapped, an index past `from`'s end maps to nothing; a
 * parameter `to` has and `from` lacks, and two parameters of one name on
 * either side, are refused naming them; an exact map refuses other value sets
 * or parameter counts, saying which values; 70 parameters map like 3 (no
 * limit of 64); a Kernel Tuner cache's numbers (16.0) match a kernel's ints;
 * tf_config_cmp orders indices above 2^63 correctly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "schema/parammap.h"

static int64_t ints_a[] = {1, 2, 3}, ints_c[] = {8, 16};
static char *strs_b[] = {"x", "y"}, *strs_b_rev[] = {"y", "x"}, *strs_c[] = {"16", "8"};
static int64_t ints_a_rev[] = {3, 2, 1}, ints_a_short[] = {1, 3};

/* The value texts of configuration `x` of `p[0..n)`, "A=1 B=x", in name order of `order`. */
static void config_text(const struct tf_param *p, int n, uint64_t x, const char *const *order,
                        int norder, char *out, size_t cap)
{
    char v[80][32];
    for (int q = n - 1; q >= 0; q--) {
        tf_param_value_text(&p[q], (int)(x % (uint64_t)p[q].count), v[q], sizeof v[q]);
        x /= (uint64_t)p[q].count;
    }
    out[0] = '\0';
    for (int o = 0; o < norder; o++)
        for (int q = 0; q < n; q++)
            if (strcmp(p[q].name, order[o]) == 0) {
                size_t len = strlen(out);
                snprintf(out + len, cap - len, "%s=%s ", order[o], v[q]);
            }
}

static struct tf_parammap *map_of(const struct tf_param *a, int na, const struct tf_param *b,
                                  int nb, bool exact, struct tf_error *err)
{
    struct tf_parammap_space *from = tf_parammap_space_params(a, na, "space A");
    struct tf_parammap_space *to = tf_parammap_space_params(b, nb, "space B");
    struct tf_parammap *m = tf_parammap_create(from, to, exact, err);
    tf_parammap_space_destroy(from);
    tf_parammap_space_destroy(to);
    return m;
}

static void test_reordered(void **state)
{
    (void)state;
    const struct tf_param a[] = {{"A", TF_PARAM_INT, 3, ints_a, NULL},
                                 {"B", TF_PARAM_ENUM, 2, NULL, strs_b},
                                 {"C", TF_PARAM_INT, 2, ints_c, NULL}};
    const struct tf_param b[] = {{"C", TF_PARAM_ENUM, 2, NULL, strs_c},
                                 {"B", TF_PARAM_ENUM, 2, NULL, strs_b_rev},
                                 {"A", TF_PARAM_INT, 3, ints_a_rev, NULL}};
    static const char *const order[] = {"A", "B", "C"};
    struct tf_error err = {0};
    struct tf_parammap *m = map_of(a, 3, b, 3, true, &err);
    if (m == NULL)
        fail_msg("%s", err.message);
    bool seen[12] = {false};
    for (uint64_t x = 0; x < 12; x++) {
        uint64_t y = 99;
        assert_true(tf_parammap_apply(m, x, &y));
        assert_true(y < 12);
        assert_false(seen[y]);
        seen[y] = true;
        char tx[256], ty[256];
        config_text(a, 3, x, order, 3, tx, sizeof tx);
        config_text(b, 3, y, order, 3, ty, sizeof ty);
        assert_string_equal(tx, ty);
    }
    uint64_t y;
    assert_false(tf_parammap_apply(m, 12, &y)); /* past the end of `from` */
    assert_false(tf_parammap_apply(m, UINT64_MAX, &y));
    tf_parammap_destroy(m);
}

static void test_partial_and_refused(void **state)
{
    (void)state;
    struct tf_error err = {0};
    /* `from` has an extra parameter (ignored) and a value `to` lacks (2). */
    const struct tf_param a[] = {{"A", TF_PARAM_INT, 3, ints_a, NULL},
                                 {"B", TF_PARAM_ENUM, 2, NULL, strs_b}};
    const struct tf_param b[] = {{"A", TF_PARAM_INT, 2, ints_a_short, NULL}};
    struct tf_parammap *m = map_of(a, 2, b, 1, false, &err);
    assert_non_null(m);
    uint64_t y = 99;
    assert_true(tf_parammap_apply(m, 0, &y) && y == 0);  /* A=1 B=x */
    assert_true(tf_parammap_apply(m, 1, &y) && y == 0);  /* A=1 B=y: B ignored */
    assert_false(tf_parammap_apply(m, 2, &y));           /* A=2: not in `to` */
    assert_true(tf_parammap_apply(m, 5, &y) && y == 1);  /* A=3 B=y */
    tf_parammap_destroy(m);

    /* Exact: other value sets are refused, naming both. */
    assert_null(map_of(a, 1, b, 1, true, &err));
    assert_non_null(strstr(err.message, "parameter 'A' has the values [1, 3] in space B but "
                                        "[1, 2, 3] in space A"));
    /* Exact: an extra parameter is refused. */
    assert_null(map_of(a, 2, b, 1, true, &err));
    assert_non_null(strstr(err.message, "space A has 2 parameters, space B 1"));
    /* `to` has a parameter `from` lacks. */
    assert_null(map_of(b, 1, a, 2, false, &err));
    assert_non_null(strstr(err.message, "space B has parameter 'B', space A has none of that "
                                        "name"));
    /* Two parameters of one name, on either side: which is which? */
    const struct tf_param twice[] = {{"A", TF_PARAM_INT, 3, ints_a, NULL},
                                     {"A", TF_PARAM_INT, 2, ints_a_short, NULL}};
    assert_null(map_of(twice, 2, b, 1, false, &err));
    assert_non_null(strstr(err.message, "space A has two parameters named 'A'"));
    assert_null(map_of(b, 1, twice, 2, false, &err));
    assert_non_null(strstr(err.message, "space B has two parameters named 'A'"));
}

/* 70 parameters, every one but three with one value: no limit of 64. */
static void test_many_parameters(void **state)
{
    (void)state;
    enum { N = 70 };
    static int64_t one[] = {7};
    struct tf_param a[N], b[N];
    char names[N][8];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "P%d", i);
        a[i] = (struct tf_param){names[i], TF_PARAM_INT, 1, one, NULL};
    }
    a[3] = (struct tf_param){names[3], TF_PARAM_INT, 3, ints_a, NULL};
    a[40] = (struct tf_param){names[40], TF_PARAM_ENUM, 2, NULL, strs_b};
    a[69] = (struct tf_param){names[69], TF_PARAM_INT, 2, ints_c, NULL};
    for (int i = 0; i < N; i++)
        b[i] = a[N - 1 - i]; /* reversed */
    b[N - 1 - 40].strings = strs_b_rev;
    struct tf_error err = {0};
    struct tf_parammap *m = map_of(a, N, b, N, true, &err);
    if (m == NULL)
        fail_msg("%s", err.message);
    static const char *const order[] = {"P3", "P40", "P69"};
    for (uint64_t x = 0; x < 12; x++) {
        uint64_t y;
        assert_true(tf_parammap_apply(m, x, &y));
        char tx[256], ty[256];
        config_text(a, N, x, order, 3, tx, sizeof tx);
        config_text(b, N, y, order, 3, ty, sizeof ty);
        assert_string_equal(tx, ty);
    }
    tf_parammap_destroy(m);
}

/* A Kernel Tuner cache's values match a kernel's by number: its
 * block_size_x [16, 32, 64] is the kernel's [64, 32, 16]. */
static void test_ktcache_numbers(void **state)
{
    (void)state;
    struct tf_error err = {0};
    struct tf_ktcache *kt = tf_ktcache_load("tests/unit/fixtures/ktcache_small.json.gz", &err);
    if (kt == NULL)
        fail_msg("%s", err.message);
    static int64_t bsx[] = {64, 32, 16}, tile[] = {2, 1};
    static char *layout[] = {"col", "row"};
    const struct tf_param k[] = {{"layout", TF_PARAM_ENUM, 2, NULL, layout},
                                 {"tile_size_x", TF_PARAM_INT, 2, tile, NULL},
                                 {"block_size_x", TF_PARAM_INT, 3, bsx, NULL}};
    struct tf_parammap_space *from = tf_parammap_space_params(k, 3, "kernel 'small'");
    struct tf_parammap_space *to = tf_parammap_space_ktcache(kt, "the cache");
    assert_int_equal(tf_parammap_space_nparams(to), 3);
    struct tf_parammap *m = tf_parammap_create(from, to, true, &err);
    if (m == NULL)
        fail_msg("%s", err.message);
    /* layout=row (1), tile 1 (1), block 16 (2): 1*6 + 1*3 + 2 = 11 in the kernel;
     * the cache lists block_size_x [16, 32, 64], tile_size_x [1, 2], layout
     * [row, col] in that order: 16,1,row is digit 0,0,0 = 0. */
    uint64_t y = 99;
    assert_true(tf_parammap_apply(m, 11, &y));
    assert_int_equal(y, 0);
    tf_parammap_destroy(m);
    tf_parammap_space_destroy(from);
    tf_parammap_space_destroy(to);
    tf_ktcache_destroy(kt);
}

/* An exact map is onto: a `to` with a value more ([1, 2, 3] for [1, 3]) is
 * refused, though every value of `from` finds its own. */
static void test_exact_refuses_more_values(void **state)
{
    (void)state;
    struct tf_error err = {0};
    const struct tf_param few[] = {{"A", TF_PARAM_INT, 2, ints_a_short, NULL}};
    const struct tf_param more[] = {{"A", TF_PARAM_INT, 3, ints_a, NULL}};
    assert_null(map_of(few, 1, more, 1, true, &err));
    assert_non_null(strstr(err.message, "parameter 'A' has the values [1, 2, 3] in space B but "
                                        "[1, 3] in space A"));
    struct tf_parammap *m = map_of(few, 1, more, 1, false, &err); /* not exact: fine */
    assert_non_null(m);
    uint64_t y = 99;
    assert_true(tf_parammap_apply(m, 1, &y) && y == 2);
    tf_parammap_destroy(m);
}

/* `to`'s Cartesian product at the 64-bit limit: 16 x (2^60 - 1) = 2^64 - 16
 * configurations fit (the place value 2^60 - 1 before the last factor is
 * UINT64_MAX / 16 itself), and its last configuration maps; 2^64 are refused. */
static void test_largest_space(void **state)
{
    (void)state;
    enum { N = 14 };
    static const int counts[N] = {16, 3, 3, 5, 5, 7, 11, 13, 31, 41, 61, 151, 331, 1321};
    static int64_t values[1321];
    for (int v = 0; v < 1321; v++)
        values[v] = v;
    struct tf_param p[N];
    char names[N][8];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "P%d", i);
        p[i] = (struct tf_param){names[i], TF_PARAM_INT, counts[i], values, NULL};
    }
    struct tf_error err = {0};
    struct tf_parammap *m = map_of(p, N, p, N, true, &err);
    if (m == NULL)
        fail_msg("2^64 - 16 configurations refused: %s", err.message);
    uint64_t y = 0;
    assert_true(tf_parammap_apply(m, UINT64_MAX - 16, &y));
    assert_true(y == UINT64_MAX - 16);
    assert_false(tf_parammap_apply(m, UINT64_MAX - 15, &y)); /* past the end */
    tf_parammap_destroy(m);
    p[0].count = 17; /* 17 x (2^60 - 1) > 2^64 */
    assert_null(map_of(p, N, p, N, true, &err));
    assert_non_null(strstr(err.message, "space B has 2^64 or more configurations"));
}

/* Values are one by number only where a double holds them exactly: below
 * 2^53. An int 2^53 + 1 becomes the double 2^53, so with 2^53 itself taken
 * as exact, a job's value 9007199254740993 was answered by a replay source's
 * 9007199254740992 (and an exact map of [2^53, 2^53 + 1] onto the same two
 * values was refused: both found the first). Texts still match at any size. */
static void test_numbers_past_2_53(void **state)
{
    (void)state;
    static int64_t two53[] = {9007199254740992}, two53_1[] = {9007199254740993},
                   both[] = {9007199254740992, 9007199254740993};
    const struct tf_param job[] = {{"N", TF_PARAM_INT, 1, two53_1, NULL}};
    const struct tf_param source[] = {{"N", TF_PARAM_INT, 1, two53, NULL}};
    struct tf_error err = {0};
    struct tf_parammap *m = map_of(job, 1, source, 1, false, &err);
    assert_non_null(m);
    uint64_t y = 99;
    assert_false(tf_parammap_apply(m, 0, &y)); /* 2^53 + 1: not in the source */
    tf_parammap_destroy(m);
    const struct tf_param a[] = {{"N", TF_PARAM_INT, 2, both, NULL}};
    m = map_of(a, 1, a, 1, true, &err);
    if (m == NULL)
        fail_msg("%s", err.message);
    assert_true(tf_parammap_apply(m, 0, &y) && y == 0);
    assert_true(tf_parammap_apply(m, 1, &y) && y == 1);
    tf_parammap_destroy(m);
}

static void test_config_cmp(void **state)
{
    (void)state;
    uint64_t v[] = {UINT64_MAX, 0, (uint64_t)1 << 63, 5, ((uint64_t)1 << 63) - 1};
    qsort(v, 5, sizeof *v, tf_config_cmp);
    assert_true(v[0] == 0 && v[1] == 5 && v[2] == ((uint64_t)1 << 63) - 1 &&
                v[3] == (uint64_t)1 << 63 && v[4] == UINT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reordered),
        cmocka_unit_test(test_partial_and_refused),
        cmocka_unit_test(test_many_parameters),
        cmocka_unit_test(test_ktcache_numbers),
        cmocka_unit_test(test_config_cmp),
        cmocka_unit_test(test_exact_refuses_more_values),
        cmocka_unit_test(test_largest_space),
        cmocka_unit_test(test_numbers_past_2_53),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
