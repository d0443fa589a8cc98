/* Tests for tools/t1_expr.c: Kernel Tuner's Python restrictions, argument sizes
 * and parameter values (T1 files) in tunefarm's expression language. Each
 * translation is checked as text (the grouping its parentheses give) and, for
 * the restrictions, compiled by schema/expr and evaluated against what Python
 * gives for the same values (written out below from python3). Untranslatable
 * input names its column and says what to write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "schema/expr.h"
#include "tools/t1_expr.h"

static const int64_t bx_values[] = {16, 32, 48, 64};
static const int64_t fw_values[] = {7, 15, 3};
static const int64_t small_values[] = {0, 1, 2, 3};
static const char *const loops[] = {"ikj", "kij"};

/* Parameters: block_size_x, block_size_y, tile, x, use_padding, use_shmem,
 * filter_width, filter_height, LOOP (enum), T (renamed T_). */
static const struct tf_t1_param params[] = {
    {.name = "block_size_x", .count = 4, .ints = bx_values},
    {.name = "block_size_y", .count = 4, .ints = small_values},
    {.name = "tile", .count = 4, .ints = small_values},
    {.name = "x", .count = 4, .ints = small_values},
    {.name = "use_padding", .count = 4, .ints = small_values},
    {.name = "use_shmem", .count = 4, .ints = small_values},
    {.name = "filter_width", .count = 3, .ints = fw_values},
    {.name = "filter_height", .count = 3, .ints = fw_values},
    {.name = "LOOP", .is_enum = true, .count = 2, .strings = loops},
    {.name = "T", .rename = "T_", .count = 4, .ints = small_values},
};
static const char *const sizes[] = {"problem_size_x", "problem_size_y"};

static const struct tf_t1_scope restriction = {
    .params = params, .nparams = 10, .sizes = sizes, .nsizes = 2};
static const struct tf_t1_scope size_scope = {
    .params = params, .nparams = 10, .sizes = sizes, .nsizes = 2, .params_as_lists = true,
    .numeric = true};

static void expect(const struct tf_t1_scope *scope, const char *py, const char *want)
{
    struct tf_error err = {0};
    char *got = tf_t1_translate(py, scope, &err);
    if (got == NULL)
        fail_msg("'%s' did not translate: column %d: %s", py, err.column, err.message);
    if (strcmp(got, want) != 0)
        fail_msg("'%s'\n   gave '%s'\n   want '%s'", py, got, want);
    free(got);
}

static void expect_error(const struct tf_t1_scope *scope, const char *py, int column,
                         const char *text)
{
    struct tf_error err = {0};
    char *got = tf_t1_translate(py, scope, &err);
    if (got != NULL)
        fail_msg("'%s' translated to '%s'; expected an error with '%s'", py, got, text);
    if (err.column != column || strstr(err.message, text) == NULL)
        fail_msg("'%s': column %d: %s\n   want column %d and '%s'", py, err.column, err.message,
                 column, text);
}

static void test_restrictions_of_the_convolution_file(void **state)
{
    (void)state;
    expect(&restriction, "use_padding==0 or block_size_x % 32 != 0",
           "use_padding == 0 or block_size_x % 32 != 0");
    expect(&restriction, "block_size_x*block_size_y<=1024", "block_size_x * block_size_y <= 1024");
    expect(&restriction, "use_padding==0 or use_shmem != 0", "use_padding == 0 or use_shmem != 0");
    /* parentheses around an operation are kept, once */
    expect(&restriction,
           "use_shmem == 0 or (((block_size_x*tile+(filter_width-1)))*((block_size_y*tile+"
           "(filter_height-1)))) < 12*1024",
           "use_shmem == 0 or ((block_size_x * tile + (filter_width - 1)) * (block_size_y * "
           "tile + (filter_height - 1))) < 12 * 1024");
}

static void test_grouping_follows_the_tree(void **state)
{
    (void)state;
    expect(&restriction, "32 <= block_size_x * block_size_y <= 1024",
           "32 <= block_size_x * block_size_y <= 1024");
    expect(&restriction, "x - (tile - 1)", "x - (tile - 1)");
    expect(&restriction, "((x - tile)) - 1", "(x - tile) - 1");
    expect(&restriction, "((x)) + (2)", "x + 2");
    expect(&restriction, "x / (tile * 2)", "x / (tile * 2)");
    expect(&restriction, "-2 ** 2", "-2 ** 2");
    expect(&restriction, "(-2) ** x", "(-2) ** x");
    expect(&restriction, "x ** tile ** 2", "x ** tile ** 2");
    expect(&restriction, "(x ** tile) ** 2", "(x ** tile) ** 2");
    expect(&restriction, "2 ** -x", "2 ** -x");
    expect(&restriction, "- -x", "- -x");
    expect(&restriction, "not x == tile", "not x == tile");
    expect(&restriction, "(not x) + 1 > tile", "(not x) + 1 > tile");
    expect(&restriction, "(x < tile) == (tile < 2)", "(x < tile) == (tile < 2)");
    expect(&restriction, "x and (tile or T)", "x and (tile or T_)");
    expect(&restriction, "(x and tile) or T", "(x and tile) or T_");
    expect(&restriction, "x and tile or T", "x and tile or T_");
    expect(&restriction, "1_024 >= x * 0x10 + 0o7 + 0b1", "1024 >= x * 16 + 7 + 1");
    expect(&restriction, "x * 1.5e3 < 2.", "x * 1500.0 < 2.0");
}

static void test_python_constructs_rewritten(void **state)
{
    (void)state;
    expect(&restriction, "tile in (1, 2, 4)", "tile == 1 or tile == 2 or tile == 4");
    expect(&restriction, "x > 1 and tile in [1, 2]", "x > 1 and (tile == 1 or tile == 2)");
    expect(&restriction, "tile not in (3, 5) or x", "tile != 3 and tile != 5 or x");
    expect(&restriction, "tile not in [3]", "tile != 3");
    expect(&restriction, "tile in ()", "0");
    expect(&restriction, "x < tile in (1, 2)", "x < tile and (tile == 1 or tile == 2)");
    expect(&restriction, "tile in range(1, 4)", "1 <= tile < 4");
    expect(&restriction, "tile in range(0, 9, 2)", "0 <= tile < 9 and (tile - 0) % 2 == 0");
    expect(&restriction, "tile not in range(3)", "not (0 <= tile < 3)");
    expect(&restriction, "use_padding is 0 and x is not 2", "use_padding == 0 and x != 2");
    expect(&restriction, "use_padding == True or x == False", "use_padding == 1 or x == 0");
    expect(&restriction, "x > 2 if use_padding else True", "use_padding ? x > 2 : 1");
    expect(&restriction, "x if tile else 1 if T else 2", "tile ? x : T_ ? 1 : 2");
    expect(&restriction, "(x if tile else 2) * 3 > 1", "(tile ? x : 2) * 3 > 1");
    expect(&restriction, "1 << tile <= 8", "1 * 2 ** tile <= 8");
    expect(&restriction, "(x + 1) >> tile", "(x + 1) // 2 ** tile");
    expect(&restriction, "x + 1 >> tile", "(x + 1) // 2 ** tile");
    expect(&restriction, "math.ceil(x / 3) == np.floor(tile / 2)",
           "ceil(x / 3) == floor(tile / 2)");
    expect(&restriction, "numpy.log2(x) >= math.sqrt(tile)", "log2(x) >= sqrt(tile)");
    expect(&restriction, "pow(x, 2) + math.pow(tile, 2) < 9", "x ** 2 + float(tile) ** 2 < 9");
    expect(&restriction, "max(x, tile, 2) <= min([T, 3])", "max(x, tile, 2) <= min(T_, 3)");
    expect(&restriction, "int(x / 2) == abs(tile - 3)", "int(x / 2) == abs(tile - 3)");
    expect(&restriction, "bool(x) + bool(tile) == 1", "(x != 0) + (tile != 0) == 1");
    expect(&restriction, "sum([x, tile, 1]) < len((1, 2, 3))", "x + tile + 1 < 3");
    expect(&restriction, "T > 2", "T_ > 2");
    expect(&restriction, "x > 2 * math.pi", "x > 2 * 3.141592653589793");
    expect(&restriction, "ProblemSize[0] % block_size_x == 0",
           "problem_size_x % block_size_x == 0");
    expect(&restriction, "ProblemSize[-1] > 0", "problem_size_y > 0");
}

static void test_enum_parameters(void **state)
{
    (void)state;
    expect(&restriction, "LOOP == \"ikj\" or x > 1", "LOOP == \"ikj\" or x > 1");
    expect(&restriction, "'kij' != LOOP", "\"kij\" != LOOP");
    expect(&restriction, "LOOP in ('ikj', 'kij')", "LOOP == \"ikj\" or LOOP == \"kij\"");
    expect(&restriction, "LOOP is 'ikj'", "LOOP == \"ikj\"");
    /* tunefarm's enum comparisons do not chain: split into links */
    expect(&restriction, "\"ikj\" == LOOP != 'kij'", "\"ikj\" == LOOP and LOOP != \"kij\"");
    expect_error(&restriction, "x == 'ikj'", 3, "only compared with a string parameter");
    expect_error(&restriction, "LOOP < 'ikj'", 6, "only compared with == or !=");
    expect_error(&restriction, "'a' == 'b'", 5, "two strings");
    expect_error(&restriction, "LOOP == 'jik'", 9,
                 "'jik' is not a value of 'LOOP' (its values: ikj, kij)");
    expect_error(&restriction, "LOOP in ('ikj', 'ijk')", 17, "'ijk' is not a value of 'LOOP'");
    expect_error(&restriction, "LOOP", 1, "'LOOP' has string values");
    expect_error(&restriction, "LOOP == x", 6, "'LOOP' has string values");
    expect_error(&restriction, "LOOP in (1, 2)", 6, "'LOOP' has string values");
    expect_error(&restriction, "'abc'", 1, "a string has no value here");
}

static void test_argument_sizes(void **state)
{
    (void)state;
    expect(&size_scope, "ProblemSize[0]*ProblemSize[1]", "problem_size_x * problem_size_y");
    expect(&size_scope,
           "(ProblemSize[0]+max(filter_width)-1) * (ProblemSize[1]+max(filter_height)-1)",
           "(problem_size_x + 15 - 1) * (problem_size_y + 15 - 1)");
    expect(&size_scope, "min(filter_width) * len(block_size_x) + sum(filter_height)",
           "3 * 4 + 25");
    expect(&size_scope, "max(ProblemSize[0], 1024)", "max(problem_size_x, 1024)");
    expect(&size_scope, "4096", "4096");
    expect_error(&size_scope, "ProblemSize[0] * filter_width", 18,
                 "binds 'filter_width' to its list of values");
    expect_error(&size_scope, "max(LOOP)", 5, "whose values are not numbers");
    expect_error(&size_scope, "ProblemSize[2]", 13, "index 0 to 1");
    expect_error(&size_scope, "ProblemSize", 1, "write ProblemSize[0]");
    expect_error(&size_scope, "ProblemSize[0] or 4", 1, "give one of their operands");
    const struct tf_t1_scope none = {.params = params, .nparams = 10, .numeric = true};
    expect_error(&none, "ProblemSize[0]", 1, "no KernelSpecification.ProblemSize");
    expect_error(&restriction, "max(x) > 1", 5, "of one value has no meaning here");
}

static void test_untranslatable_named_with_column(void **state)
{
    (void)state;
    expect_error(&restriction, "x & 1 == 0", 3, "'&' (bitwise and) has no tunefarm equivalent");
    expect_error(&restriction, "x | tile", 3, "bitwise or");
    expect_error(&restriction, "x ^ tile", 3, "exclusive or");
    expect_error(&restriction, "~x", 1, "bitwise not");
    expect_error(&restriction, "x && tile", 3, "'&&' is C, not Python: write 'and'");
    /* numbers as Python 3 reads them: no leading zero, one underscore between digits */
    expect(&restriction, "x > 1_000 + 0x_1f + 00 + 0.50 + 0o17", "x > 1000 + 31 + 0 + 0.5 + 15");
    expect_error(&restriction, "x > 010", 5, "no leading zero in a decimal integer");
    expect_error(&restriction, "x > 1__0", 5, "an underscore goes between two digits");
    expect_error(&restriction, "x > 1_", 5, "an underscore goes between two digits");
    expect_error(&restriction, "x > 1._5", 5, "an underscore goes between two digits");
    expect_error(&restriction, "x > 1e1_", 5, "an underscore goes between two digits");
    expect_error(&restriction, "x > 1e1__0", 5, "an underscore goes between two digits");
    expect_error(&restriction, "x > 09", 5, "no leading zero in a decimal integer");
    expect(&restriction, "x > 1_0.5_5 + 1_0e1_0", "x > 10.55 + 100000000000.0");
    expect_error(&restriction, "!x", 1, "write 'not'");
    expect_error(&restriction, "x = 1", 3, "compare with '=='");
    expect_error(&restriction, "x ? 1 : 2", 3, "'a if c else b'");
    expect_error(&restriction, "round(x / 2) > 1", 1, "rounds halves to even");
    expect_error(&restriction, "foo(x) > 1", 1, "unknown function 'foo'");
    expect_error(&restriction, "math.gcd(x, 2) > 1", 1, "math.gcd() has no tunefarm equivalent");
    expect_error(&restriction, "tile(2)", 1, "is a parameter, not a function");
    expect_error(&restriction, "blok_size_x > 2", 1,
                 "unknown name 'blok_size_x' (did you mean 'block_size_x'?");
    expect_error(&restriction, "(x or 2) * 3 > 1", 2, "give one of their operands");
    expect_error(&restriction, "(x or 2) > 3 * 1", 2, "give one of their operands");
    expect_error(&restriction, "x is None", 3, "None has no tunefarm equivalent");
    expect_error(&restriction, "x >", 4, "found end of expression");
    expect_error(&restriction, "(x > 1", 7, "',' or ')'");
    expect_error(&restriction, "x > 1 tile", 7, "expected an operator or the end");
    expect_error(&restriction, "lambda p: p['x'] > 1", 1, "lambda");
    expect_error(&restriction, "x in tile", 3, "needs a list or tuple written out");
    /* Python refuses range()'s step 0 (ValueError); tunefarm would compute % 0 */
    expect_error(&restriction, "x in range(0, 8, 0)", 18, "needs a positive integer step");
    expect_error(&restriction, "x[0] > 1", 1, "only ProblemSize[i]");
    expect_error(&restriction, "'a\\n' == LOOP", 3, "escapes");
    expect_error(&restriction, "x > 99999999999999999999", 5, "does not fit in 64 bits");
    expect_error(&restriction, "1j > x", 1, "complex");
    expect_error(&restriction, "1J > x", 1, "complex"); /* Python takes either case */
    /* Python 3's own number errors, at their edges */
    expect(&restriction, "x > 9223372036854775807", "x > 9223372036854775807"); /* INT64_MAX */
    expect_error(&restriction, "x > 0o18", 5, "invalid number");
    expect_error(&restriction, "x > 0b12", 5, "invalid number");
    expect_error(&restriction, "x > 1abc", 5, "invalid number");
    expect(&restriction, "x > 1e-3 + 2E+1", "x > 0.001 + 20.0");
    expect_error(&restriction, "x > 1, tile", 6, "a tuple has no value here");
    expect_error(&restriction, "", 1, "empty expression");
    char deep[300];
    memset(deep, '(', 200);
    strcpy(deep + 200, "x");
    expect_error(&restriction, deep, 65, "nested more than");
    /* the T1 parser's own limit: 128 levels, 127 unary minuses over x and the
     * expression's own; 128 minuses are one too many */
    memset(deep, '-', 128);
    deep[128] = 'x';
    deep[129] = '\0';
    expect_error(&restriction, deep, 129, "nested more than 128 levels");
    /* what is translated must also parse as schema/expr (64 levels): 63
     * minuses over x do, and the translation compiles as kernel.yaml's loader
     * would compile it; 64 are refused here, at the T1 expression, not later
     * by the loader at a line of kernel.yaml */
    memset(deep, '-', 63);
    deep[63] = 'x';
    deep[64] = '\0';
    struct tf_error err = {0};
    char *got = tf_t1_translate(deep, &restriction, &err);
    if (got == NULL)
        fail_msg("63 minuses: column %d: %s", err.column, err.message);
    const struct tf_symbol x_sym = {.name = "x", .slot = 0};
    const struct tf_symtab x_tab = {.symbols = &x_sym, .count = 1};
    struct tf_expr *compiled = tf_expr_compile(got, &x_tab, &err);
    if (compiled == NULL)
        fail_msg("63 minuses' translation: column %d: %s", err.column, err.message);
    tf_expr_destroy(compiled);
    free(got);
    memset(deep, '-', 64);
    deep[64] = 'x';
    deep[65] = '\0';
    expect_error(&restriction, deep, 1, "its translation is not a tunefarm expression: "
                                        "expression nested too deeply");
    /* the longest input, 16384 bytes, is read; one byte more is not */
    char *wide = malloc(16386);
    assert_non_null(wide);
    memset(wide, ' ', 16385);
    wide[0] = 'x';
    wide[16384] = '\0';
    expect(&restriction, wide, "x");
    wide[16384] = ' ';
    wide[16385] = '\0';
    expect_error(&restriction, wide, 1, "at most 16384");
    free(wide);
}

/* The translations mean what Python means: each restriction, evaluated by
 * schema/expr over every (x, tile) in 0..3 x 0..3, against Python's truth
 * table (bit i*4+j is `expr` at x=i, tile=j, from python3). */
static void test_translations_evaluate_like_python(void **state)
{
    (void)state;
    static const struct { const char *py; unsigned truth; } cases[] = {
        /* python3: sum(bool(eval(e, {'x': i, 'tile': j})) << (i * 4 + j)
         *              for i in range(4) for j in range(4)) */
        {"x in (1, 2) or tile not in [0, 3]", 0x6ff6},
        {"x < tile in (1, 2, 3)", 0x08ce},
        {"not x == tile and x != 3", 0x0bde},
        {"tile if x else 1 if tile else 0", 0xeeee},
        {"x // 2 ** tile == 1 or (x >> tile) == 3", 0x3210},
        {"x - 2 ** tile > -3 and x % (tile + 1) == 0", 0x5313},
        {"0 <= x - tile < 2", 0xc631},
        {"x is 2 or tile is not 1", 0xdfdd},
        {"(x if tile else 3) == 3", 0xf111},
        {"math.trunc(x / 2 - tile) == 0", 0x6231}, /* toward zero: trunc(-0.5) is 0 */
        {"pow(x, tile) ** 2 == 64", 0x0800}, /* (x ** tile) ** 2, not x ** tile ** 2 */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct tf_error err = {0};
        char *text = tf_t1_translate(cases[c].py, &restriction, &err);
        assert_non_null(text);
        struct tf_symbol syms[] = {{.name = "x", .slot = 0}, {.name = "tile", .slot = 1}};
        struct tf_symtab tab = {syms, 2};
        struct tf_expr *e = tf_expr_compile(text, &tab, &err);
        if (!e)
            fail_msg("'%s' -> '%s' does not compile: %s", cases[c].py, text, err.message);
        unsigned truth = 0;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                struct tf_value slots[2] = {tf_int(i), tf_int(j)};
                bool b = false;
                assert_int_equal(tf_expr_eval_bool(e, slots, &b, &err), 0);
                truth |= (unsigned)b << (i * 4 + j);
            }
        if (truth != cases[c].truth)
            fail_msg("'%s' -> '%s': truth table 0x%04x, Python's 0x%04x", cases[c].py, text,
                     truth, cases[c].truth);
        tf_expr_destroy(e);
        free(text);
    }
}

static void expect_ints(const char *py, bool generated, const int64_t *want, int n)
{
    struct tf_t1_values v;
    struct tf_error err = {0};
    if (tf_t1_values(py, &v, &err) != 0)
        fail_msg("values '%s': column %d: %s", py, err.column, err.message);
    assert_false(v.is_enum);
    assert_int_equal(v.generated, generated);
    assert_int_equal(v.count, n);
    for (int i = 0; i < n; i++)
        if (v.ints[i] != want[i])
            fail_msg("values '%s': [%d] is %lld, want %lld", py, i, (long long)v.ints[i],
                     (long long)want[i]);
    tf_t1_values_free(&v);
}

static void test_values(void **state)
{
    (void)state;
    expect_ints("[16, 32, 48]", false, (const int64_t[]){16, 32, 48}, 3);
    expect_ints("(1, -2)", false, (const int64_t[]){1, -2}, 2);
    expect_ints("range(32, 129, 32)", true, (const int64_t[]){32, 64, 96, 128}, 4);
    expect_ints("list(range(3))", true, (const int64_t[]){0, 1, 2}, 3);
    expect_ints("range(4, 0, -2)", true, (const int64_t[]){4, 2}, 2);
    expect_ints("[2**i for i in range(7)]", true, (const int64_t[]){1, 2, 4, 8, 16, 32, 64}, 7);
    expect_ints("[16*i for i in range(1,9) if i % 2 == 0]", true,
                (const int64_t[]){32, 64, 96, 128}, 4);
    expect_ints("[i // 2 for i in [2, 4, 8]]", true, (const int64_t[]){1, 2, 4}, 3);
    /* several conditions all hold, and stop at the first that does not (python3) */
    expect_ints("[i for i in range(8) if i > 2 if i % 2 == 0]", true, (const int64_t[]){4, 6}, 2);
    expect_ints("[6 // i for i in range(4) if i > 0 if 6 % i == 0]", true,
                (const int64_t[]){6, 3, 2}, 3);
    expect_ints("5", false, (const int64_t[]){5}, 1);
    expect_ints("[4 * 8, 2 ** 10]", false, (const int64_t[]){32, 1024}, 2);

    struct tf_t1_values v;
    struct tf_error err = {0};
    assert_int_equal(tf_t1_values("[True, False]", &v, &err), 0);
    assert_true(v.had_bools);
    assert_int_equal(v.count, 2);
    assert_int_equal(v.ints[0], 1);
    assert_int_equal(v.ints[1], 0);
    tf_t1_values_free(&v);
    assert_int_equal(tf_t1_values("[1.0, 2.0]", &v, &err), 0);
    assert_true(v.had_floats);
    assert_int_equal(v.ints[1], 2);
    tf_t1_values_free(&v);
    assert_int_equal(tf_t1_values("['ikj', \"kij\"]", &v, &err), 0);
    assert_true(v.is_enum);
    assert_int_equal(v.count, 2);
    assert_string_equal(v.strings[1], "kij");
    tf_t1_values_free(&v);

    static const struct { const char *py; int column; const char *text; } bad[] = {
        {"[0.5, 1]", 2, "not a whole number"},
        {"[1, 2, 1]", 8, "appears twice"},
        {"[i % 2000 for i in range(3000)]", 1, "value 0 appears twice"},
        {"[]", 1, "no values"},
        {"[1, 'a']", 5, "a string among number values"},
        {"range(0, 10, 0)", 14, "must not be zero"},
        {"range(0, 2000000)", 1, "at most 1048576"},
        {"[x for x in y]", 13, "over range(...) or a written-out list"},
        {"[x * z for x in range(3)]", 6, "unknown name 'z'"},
        {"[1, 2", 6, "',' or ']'"},
        {"[i for i in range(3) for j in range(2)]", 22, "two 'for' clauses"},
        /* the checks of string values: duplicates, and a number after strings */
        {"['a', 'b', 'a']", 12, "value 'a' appears twice"},
        {"['a', 1]", 7, "a number among string values"},
        /* a whole float past int64 (Python keeps it; it does not fit an integer value) */
        {"[1e19]", 2, "not a whole number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        if (tf_t1_values(bad[i].py, &v, &err) == 0)
            fail_msg("values '%s' were accepted", bad[i].py);
        if (err.column != bad[i].column || strstr(err.message, bad[i].text) == NULL)
            fail_msg("values '%s': column %d: %s\n   want column %d and '%s'", bad[i].py,
                     err.column, err.message, bad[i].column, bad[i].text);
    }
}

/* min/max/sum of a parameter's values print as a number; a negative one is a
 * unary minus in tunefarm's grammar, so under ** it needs its parentheses:
 * python3 gives min([-4, 2]) ** 2 == 16 and sum([-4, 2]) ** 2 == 4, while
 * tunefarm reads -4 ** 2 as -(4 ** 2). */
static void test_negative_list_values_under_a_power(void **state)
{
    (void)state;
    static const int64_t offsets[] = {-4, 2};
    const struct tf_t1_param offset[] = {{.name = "offset", .count = 2, .ints = offsets}};
    const struct tf_t1_scope scope = {
        .params = offset, .nparams = 1, .params_as_lists = true, .numeric = true};
    static const struct { const char *py, *text; int64_t python; } cases[] = {
        {"min(offset) ** 2", "(-4) ** 2", 16},
        {"sum(offset) ** 2", "(-2) ** 2", 4},
        {"10 - min(offset)", "10 - -4", 14},
        {"min(offset) * 3", "-4 * 3", -12},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        expect(&scope, cases[c].py, cases[c].text);
        struct tf_error err = {0};
        struct tf_symtab tab = {0};
        struct tf_expr *e = tf_expr_compile(cases[c].text, &tab, &err);
        assert_non_null(e);
        struct tf_value v;
        assert_int_equal(tf_expr_eval(e, NULL, &v, &err), 0);
        assert_false(v.is_float);
        if (v.u.i != cases[c].python)
            fail_msg("'%s' -> '%s' is %lld, Python's %lld", cases[c].py, cases[c].text,
                     (long long)v.u.i, (long long)cases[c].python);
        tf_expr_destroy(e);
    }
}

/* The limits themselves: a range of exactly 2^20 values fits (schema/kernel's
 * limit), one more does not. */
static void test_values_at_the_limit(void **state)
{
    (void)state;
    struct tf_t1_values v;
    struct tf_error err = {0};
    assert_int_equal(tf_t1_values("range(1048576)", &v, &err), 0);
    assert_int_equal(v.count, 1048576);
    assert_int_equal(v.ints[1048575], 1048575);
    tf_t1_values_free(&v);
    assert_int_not_equal(tf_t1_values("range(1048577)", &v, &err), 0);
    assert_non_null(strstr(err.message, "at most 1048576"));
}

/* schema/expr holds 4096 bytes: a translation of exactly 4096 bytes is kept (and
 * compiles), one of 4097 is refused. "1111" and 1023 times "+1" print as
 * "1111" and 1023 times " + 1": 4 + 4 * 1023 = 4096 bytes. */
static void test_translation_length_limit(void **state)
{
    (void)state;
    char py[8 + 2 * 1023];
    for (int extra = 0; extra <= 1; extra++) {
        size_t len = (size_t)sprintf(py, "%s", extra ? "11111" : "1111");
        for (int i = 0; i < 1023; i++)
            len += (size_t)sprintf(py + len, "+1");
        struct tf_error err = {0};
        char *got = tf_t1_translate(py, &size_scope, &err);
        if (extra) {
            assert_null(got);
            assert_non_null(strstr(err.message, "at most 4096"));
            continue;
        }
        if (!got)
            fail_msg("4096 bytes refused: %s", err.message);
        assert_int_equal(strlen(got), 4096);
        struct tf_symtab tab = {0};
        struct tf_expr *e = tf_expr_compile(got, &tab, &err);
        if (!e)
            fail_msg("the 4096-byte translation does not compile: %s", err.message);
        tf_expr_destroy(e);
        free(got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restrictions_of_the_convolution_file),
        cmocka_unit_test(test_grouping_follows_the_tree),
        cmocka_unit_test(test_python_constructs_rewritten),
        cmocka_unit_test(test_enum_parameters),
        cmocka_unit_test(test_argument_sizes),
        cmocka_unit_test(test_negative_list_values_under_a_power),
        cmocka_unit_test(test_untranslatable_named_with_column),
        cmocka_unit_test(test_translations_evaluate_like_python),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_values_at_the_limit),
        cmocka_unit_test(test_translation_length_limit),
    };
    return cmocka_run_group_tests_name("t1", tests, NULL, NULL);
}
