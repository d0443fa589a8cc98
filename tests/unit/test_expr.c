/* test_expr.c - unit tests of the expression language (schema/expr.c).
 *
 * Every value test runs twice: once with names, which the evaluator reads from
 * slots at run time, and once with the names replaced by their literal
 * values, which the compiler folds; both must agree, so the folder and the
 * stack machine cannot drift apart. Error tests check the code, the column
 * and the words of the message, since users fix their kernel files from them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../schema/expr.h"

enum {
    S_TILE_X, S_TILE_Y, S_M, S_N, S_K, S_A, S_B, S_C, S_F, S_Z, S_BIG, S_SMALL,
    S_LOOP, S_X, S_BM, S_BN, S_L2, S_TIME, S_COUNT
};

static const char *const loop_values[] = {"ikj", "kij"};

static const struct tf_symbol symbols[] = {
    {"TILE_X", S_TILE_X, NULL, 0}, {"TILE_Y", S_TILE_Y, NULL, 0}, {"M", S_M, NULL, 0},
    {"N", S_N, NULL, 0},           {"K", S_K, NULL, 0},           {"A", S_A, NULL, 0},
    {"B", S_B, NULL, 0},           {"C", S_C, NULL, 0},           {"F", S_F, NULL, 0},
    {"Z", S_Z, NULL, 0},           {"BIG", S_BIG, NULL, 0},       {"SMALL", S_SMALL, NULL, 0},
    {"LOOP", S_LOOP, loop_values, 2}, {"X", S_X, NULL, 0},       {"BM", S_BM, NULL, 0},
    {"BN", S_BN, NULL, 0},         {"l2_bytes", S_L2, NULL, 0},   {"time_s", S_TIME, NULL, 0},
};

static const struct tf_symtab symtab = {symbols, (int)(sizeof symbols / sizeof symbols[0])};

static void base_slots(struct tf_value *s)
{
    s[S_TILE_X] = tf_int(16);
    s[S_TILE_Y] = tf_int(8);
    s[S_M] = tf_int(1024);
    s[S_N] = tf_int(512);
    s[S_K] = tf_int(256);
    s[S_A] = tf_int(7);
    s[S_B] = tf_int(-2);
    s[S_C] = tf_int(3);
    s[S_F] = tf_float(2.5);
    s[S_Z] = tf_int(0);
    s[S_BIG] = tf_int(INT64_MAX);
    s[S_SMALL] = tf_int(INT64_MIN);
    s[S_LOOP] = tf_int(1); /* "kij" */
    s[S_X] = tf_float(NAN);
    s[S_BM] = tf_int(64);
    s[S_BN] = tf_int(32);
    s[S_L2] = tf_int(1 << 20);
    s[S_TIME] = tf_float(1e-3);
}

/* Replace the names A B C F Z M N by their base values in parentheses, so the
 * compiler sees constants only. Function names and others stay. */
static void substitute(const char *in, char *out, size_t cap)
{
    static const struct { const char *name, *value; } subst[] = {
        {"A", "(7)"}, {"B", "(-2)"}, {"C", "(3)"}, {"F", "(2.5)"}, {"Z", "(0)"},
        {"M", "(1024)"}, {"N", "(512)"},
    };
    size_t o = 0;
    for (size_t i = 0; in[i];) {
        if ((in[i] >= 'A' && in[i] <= 'Z') || (in[i] >= 'a' && in[i] <= 'z') || in[i] == '_') {
            size_t j = i;
            while ((in[j] >= 'A' && in[j] <= 'Z') || (in[j] >= 'a' && in[j] <= 'z') ||
                   (in[j] >= '0' && in[j] <= '9') || in[j] == '_')
                j++;
            const char *rep = NULL;
            for (size_t k = 0; k < sizeof subst / sizeof subst[0]; k++)
                if (strlen(subst[k].name) == j - i && memcmp(subst[k].name, in + i, j - i) == 0)
                    rep = subst[k].value;
            if (rep == NULL) {
                memcpy(out + o, in + i, j - i);
                o += j - i;
            } else {
                memcpy(out + o, rep, strlen(rep));
                o += strlen(rep);
            }
            i = j;
        } else {
            out[o++] = in[i++];
        }
        assert_true(o < cap - 16);
    }
    out[o] = '\0';
}

/* Compile and evaluate `text` with base slots; the expression must succeed. */
static struct tf_value eval_text(const char *text, const struct tf_value *slots)
{
    struct tf_error err = {0};
    struct tf_expr *e = tf_expr_compile(text, &symtab, &err);
    if (e == NULL)
        fail_msg("compile '%s': %s (column %d)", text, err.message, err.column);
    struct tf_value v = tf_int(-12345);
    if (tf_expr_eval(e, slots, &v, &err) != 0)
        fail_msg("eval '%s': %s", text, err.message);
    tf_expr_destroy(e);
    return v;
}

/* Compile `text` (must succeed) and evaluate it; the evaluation must fail with
 * TF_ERR_EVAL and a message containing `needle`. */
static void expect_eval_error(const char *text, const struct tf_value *slots, const char *needle)
{
    struct tf_error err = {0};
    struct tf_expr *e = tf_expr_compile(text, &symtab, &err);
    if (e == NULL)
        fail_msg("compile '%s': %s", text, err.message);
    struct tf_value v;
    if (tf_expr_eval(e, slots, &v, &err) == 0)
        fail_msg("'%s' evaluated without error", text);
    assert_int_equal(err.code, TF_ERR_EVAL);
    if (strstr(err.message, needle) == NULL)
        fail_msg("'%s': message '%s' lacks '%s'", text, err.message, needle);
    tf_expr_destroy(e);
}

/* Compile must fail with `code` at `column` and a message containing `needle`. */
static void expect_compile_error(const char *text, enum tf_error_code code, int column,
                                 const char *needle)
{
    struct tf_error err = {0};
    struct tf_expr *e = tf_expr_compile(text, &symtab, &err);
    if (e != NULL)
        fail_msg("'%s' compiled", text);
    if ((int)err.code != (int)code || err.column != column || strstr(err.message, needle) == NULL)
        fail_msg("'%s': got code %d column %d '%s', want code %d column %d containing '%s'", text,
                 err.code, err.column, err.message, code, column, needle);
    assert_int_equal(err.line, 0);
    assert_string_equal(err.file, "");
}

struct value_case {
    const char *text;
    bool is_float;
    int64_t i;
    double f;
};

#define I(t, v) {t, false, (v), 0}
#define R(t, v) {t, true, 0, (v)}

static void check_value(const char *text, struct tf_value v, const struct value_case *c)
{
    if (v.is_float != c->is_float)
        fail_msg("'%s': got a %s, want a %s", text, v.is_float ? "float" : "int",
                 c->is_float ? "float" : "int");
    if (c->is_float) {
        if (!(fabs(v.u.f - c->f) <= 1e-12 * fabs(c->f)))
            fail_msg("'%s': got %.17g, want %.17g", text, v.u.f, c->f);
    } else if (v.u.i != c->i) {
        fail_msg("'%s': got %lld, want %lld", text, (long long)v.u.i, (long long)c->i);
    }
}

/* Run a table both with slots and with constants folded at compile time. */
static void run_table(const struct value_case *cases, size_t n)
{
    struct tf_value slots[S_COUNT];
    base_slots(slots);
    for (size_t k = 0; k < n; k++) {
        char folded[512];
        check_value(cases[k].text, eval_text(cases[k].text, slots), &cases[k]);
        substitute(cases[k].text, folded, sizeof folded);
        check_value(folded, eval_text(folded, slots), &cases[k]);
    }
}

/* Base values: A=7 B=-2 C=3 F=2.5 Z=0 M=1024 N=512. */
static void test_arithmetic_and_precedence(void **state)
{
    (void)state;
    static const struct value_case cases[] = {
        I("1 + 2 * 3", 7),
        I("A + B * C", 1),
        I("(A + B) * C", 15),
        I("A - B - C", 6),             /* left associative */
        I("A * B + C * A", 7),
        I("M // A % C", 2),            /* (1024 // 7) % 3 = 146 % 3 */
        I("-A + C", -4),
        I("- -A", 7),
        I("+A", 7),
        I("-A ** 2", -49),             /* ** binds tighter than unary minus */
        I("(-A) ** 2", 49),
        I("2 ** C ** 2", 512),         /* right associative */
        I("2 ** -B", 4),
        R("A + F", 9.5),
        R("F * 2", 5.0),
        R("A - F * B", 12.0),
        I("0x1F + 1", 32),
        I("0X10", 16),
        R("1e-3 * 1000", 1.0),
        R("2.5", 2.5),
        R(".5 + A", 7.5),
        I("A + B * C == 1", 1),        /* arithmetic binds tighter than comparison */
        I("A > C && C > B", 1),
        I("A > C && C < B || Z == 0", 1),
        I("!Z + 1", 2),                /* ! is unary: (!Z) + 1 */
        I("!A == 0", 1),               /* (!A) == 0 */
        I("1 ? 2 : 3 + 4", 2),
        I("Z ? 2 : 3 + 4", 7),
        I("M * N * 4", 2097152),
        I("9223372036854775807", INT64_MAX),
        I("-9223372036854775807 - 1", INT64_MIN),
    };
    run_table(cases, sizeof cases / sizeof cases[0]);
}

static void test_integer_and_real_division(void **state)
{
    (void)state;
    static const struct value_case cases[] = {
        R("A / 2", 3.5),      /* / is always real */
        R("M / 4", 256.0),
        I("A // 2", 3),
        R("F // 1", 2.0),
        R("7.0 // 2", 3.0),
        R("A / F", 2.8),
        I("M % 3", 1),
        R("F % 1", 0.5),
        I("ceil(M / 3)", 342), /* ceil(N / TILE) means what it says */
        I("M // 3", 341),
    };
    run_table(cases, sizeof cases / sizeof cases[0]);
}

static void test_floor_division_of_negatives(void **state)
{
    (void)state;
    static const struct value_case cases[] = {
        I("-A // 2", -4), I("-A % 2", 1),  I("A // -2", -4), I("A % -2", -1),
        I("-A // -2", 3), I("-A % -2", -1), I("-6 // 3", -2), I("-6 % 3", 0),
        I("B // 4", -1),  I("B % 4", 2),
        R("-7.5 // 2", -4.0), R("-7.5 % 2", 0.5), R("7.5 % -2", -0.5),
        I("-9223372036854775807 - 1 % -1", -INT64_MAX), /* % binds tighter: 1 % -1 is 0 */
        I("(-9223372036854775807 - 1) % -1", 0),
    };
    run_table(cases, sizeof cases / sizeof cases[0]);
}

static void test_power(void **state)
{
    (void)state;
    static const struct value_case cases[] = {
        I("2 ** 10", 1024),
        I("2 ** 62", INT64_C(1) << 62),
        I("(-2) ** 63", INT64_MIN),
        I("0 ** 0", 1),
        I("1 ** 1000000000000", 1),
        I("(-1) ** 1000000000001", -1),
        R("2 ** -1", 0.5),
        R("2.0 ** 3", 8.0),
        R("4 ** 0.5", 2.0),
        I("C ** 3", 27),
    };
    run_table(cases, sizeof cases / sizeof cases[0]);

    struct tf_value s[S_COUNT];
    base_slots(s);
    expect_eval_error("2 ** 63", s, "integer overflow in '2 ** 63' at column 3: 2 ** 63");
    expect_eval_error("C ** 40", s, "integer overflow");
    expect_eval_error("(-3) ** 41", s, "integer overflow");
    expect_eval_error("Z ** -1", s, "division by zero");
    expect_eval_error("(-8) ** 0.5", s, "not a real number");
    expect_eval_error("10.0 ** 400", s, "floating-point overflow");
}

static void test_overflow_errors(void **state)
{
    (void)state;
    struct tf_value s[S_COUNT];
    base_slots(s);
    expect_eval_error("BIG + 1", s, "integer overflow in 'BIG + 1' at column 5: "
                                    "9223372036854775807 + 1");
    expect_eval_error("SMALL - 1", s, "integer overflow");
    expect_eval_error("BIG * 2", s, "integer overflow");
    expect_eval_error("-SMALL", s, "integer overflow");
    expect_eval_error("abs(SMALL)", s, "integer overflow");
    expect_eval_error("SMALL // -1", s, "integer overflow");
    expect_eval_error("1e300 * 1e300 + A", s, "floating-point overflow");
    /* Folding never turns a run-time error into a compile error. */
    expect_eval_error("9223372036854775807 + 1", s, "integer overflow");
    /* Mixed with a float, the same sum is real and fine. */
    struct tf_value v = eval_text("BIG + 1.0", s);
    assert_true(v.is_float);
    assert_true(v.u.f == 9223372036854775808.0);
}

/* The runner says which argument or launch dimension an evaluation error is
 * about by setting the error again with its own message as the argument
 * (runner_child.c: "size of '%s': %.900s", a->name, err->message). The message
 * must come out whole, not overwritten while it was being read. */
static void test_error_prefixed_with_its_own_message(void **state)
{
    (void)state;
    struct tf_value s[S_COUNT];
    base_slots(s);
    struct tf_error err = {0};
    struct tf_expr *e = tf_expr_compile("BIG * 2", &symtab, &err);
    assert_non_null(e);
    struct tf_value v;
    assert_int_equal(tf_expr_eval(e, s, &v, &err), -1);
    tf_error_set(&err, TF_ERR_EVAL, "size of '%s': %.900s", "x", err.message);
    assert_string_equal(err.message, "size of 'x': integer overflow in 'BIG * 2' at column 5: "
                                     "9223372036854775807 * 2");
    tf_error_at(&err, TF_ERR_EVAL, "k.yaml", 3, 4, "%s: %.900s", "grid", err.message);
    assert_string_equal(err.message, "grid: size of 'x': integer overflow in 'BIG * 2' at "
                                     "column 5: 9223372036854775807 * 2");
    tf_expr_destroy(e);
}

static void test_division_by_zero_errors(void **state)
{
    (void)state;
    struct tf_value s[S_COUNT];
    base_slots(s);
    expect_eval_error("M // Z", s, "division by zero in 'M // Z' at column 3: 1024 // 0");
    expect_eval_error("M % Z", s, "division by zero");
    expect_eval_error("M / Z", s, "division by zero");
    expect_eval_error("F / 0.0", s, "division by zero");
    expect_eval_error("F % 0", s, "division by zero");
    expect_eval_error("1 // 0", s, "division by zero"); /* constant: still an eval error */
}

static void test_comparisons_logic_short_circuit(void **state)
{
    (void)state;
    static const struct value_case cases[] = {
        I("A == 7", 1),  I("A != 7", 0),  I("A < 7", 0),  I("A <= 7", 1),
        I("A > F", 1),   I("A >= 7.0", 1), I("2 == 2.0", 1), I("F < 3", 1),
        I("3 && 5", 1),  I("3 && 0", 0),  I("0 || 0.0", 0), I("Z || 4", 1),
        I("F && 1", 1),  I("!Z", 1),      I("!A", 0),     I("!F", 0),   I("!0.0", 1),
        I("A && B && C", 1), I("A && Z && C", 0), I("Z || Z || C", 1), I("Z || Z || Z", 0),
        I("(A && 0) + 1", 1), I("(Z || 2) * 5", 5),
        /* a false left operand of && gives the int 0, not itself (a float 0.0) */
        I("0.0 && A", 0), I("F - F && A", 0),
    };
    run_table(cases, sizeof cases / sizeof cases[0]);

    /* The right operand must not run when the left decides. */
    struct tf_value s[S_COUNT];
    base_slots(s);
    s[S_N] = tf_int(0);
    struct tf_value v = eval_text("N == 0 || M / N > 1", s);
    assert_false(v.is_float);
    assert_int_equal(v.u.i, 1);
    v = eval_text("N != 0 && M / N > 1", s);
    assert_int_equal(v.u.i, 0);
    v = eval_text("N != 0 && M // N > 1 && M % N == 0 || 7", s);
    assert_int_equal(v.u.i, 1);
    /* ...but must run when the left does not decide. */
    expect_eval_error("N == 1 || M / N > 1", s, "division by zero");
    expect_eval_error("N == 0 && M / N > 1", s, "division by zero");
}

/* Comparisons exactly at the boundary, where real operands meet: shipped
 * constraints compare floats (`BK*BN*4 <= l2_bytes / 2`), and a `<=` that
 * behaved like `<` would drop every boundary configuration without a word.
 * Each case runs with slots and folded, and through tf_expr_eval_bool as the
 * space does. Base values: F=2.5 M=1024 BM=64 BN=32. */
static void test_float_comparison_boundaries(void **state)
{
    (void)state;
    static const struct value_case cases[] = {
        /* a float slot against a float literal, equal */
        I("F <= 2.5", 1), I("F < 2.5", 0), I("F >= 2.5", 1), I("F > 2.5", 0),
        I("F == 2.5", 1), I("F != 2.5", 0),
        I("2.5 >= F", 1), I("2.5 > F", 0), I("2.5 <= F", 1), I("2.5 < F", 0),
        /* real division giving a whole number, against an integer */
        I("M / 2 <= 512", 1), I("M / 2 < 512", 0), I("M / 2 >= 512", 1), I("M / 2 > 512", 0),
        I("512 >= M / 2", 1), I("512 < M / 2", 0),
        /* one step either side stays right */
        I("M / 2 <= 511", 0), I("M / 2 < 513", 1), I("F <= 2.4999999", 0), I("F >= 2.5000001", 0),
        /* the shipped shape: integer product against real half of a size */
        I("BM * BN * 4 <= 16384 / 2", 1), I("BM * BN * 4 < 16384 / 2", 0),
        I("BM * BN * 4 >= 16384 / 2", 1), I("BM * BN * 4 > 16384 / 2", 0),
    };
    run_table(cases, sizeof cases / sizeof cases[0]);
    struct tf_value s[S_COUNT];
    base_slots(s);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct tf_error err = {0};
        struct tf_expr *e = tf_expr_compile(cases[k].text, &symtab, &err);
        assert_non_null(e);
        bool b = !cases[k].i;
        assert_int_equal(tf_expr_eval_bool(e, s, &b, &err), 0);
        if (b != (cases[k].i != 0))
            fail_msg("'%s' as a constraint: got %s", cases[k].text, b ? "true" : "false");
        tf_expr_destroy(e);
    }
}

static void test_ternary(void **state)
{
    (void)state;
    static const struct value_case cases[] = {
        I("A > 0 ? 10 : 20", 10),
        I("A < 0 ? 10 : 20", 20),
        I("Z ? 1 : A ? 2 : 3", 2),        /* right associative */
        I("Z ? 1 : Z ? 2 : 3", 3),
        I("A ? Z ? 1 : 2 : 3", 2),
        I("(A ? 1 : 2) * 3", 3),          /* the else constant must not fold with 3 */
        I("(Z ? 1 : 2) * 3", 6),
        I("(A ? 1 : 2) + (Z ? 10 : 20)", 21),
        R("A ? F : 1", 2.5),
        I("Z != 0 ? M // Z : -1", -1),    /* the branch not taken is not evaluated */
        I("min(A ? 4 : 5, Z ? 6 : 7)", 4),
    };
    run_table(cases, sizeof cases / sizeof cases[0]);
}

static void test_functions(void **state)
{
    (void)state;
    static const struct value_case cases[] = {
        I("ceil(A / 2)", 4),   I("floor(-A / 2)", -4), I("round(2.5)", 3),
        I("round(-F)", -3),    I("round(2.4)", 2),     I("ceil(A)", 7),
        I("floor(M)", 1024),   I("min(3, 1, 2)", 1),   I("max(3, 1, 2)", 3),
        I("min(A, B)", -2),    R("max(1, F)", 2.5),    R("min(1, F)", 1.0),
        I("abs(B)", 2),        R("abs(-F)", 2.5),      R("log2(M)", 10.0),
        R("log2(0.5)", -1.0),  R("sqrt(16)", 4.0),     I("int(-3.7)", -3),
        I("int(A)", 7),        I("int(F * 2)", 5),     R("float(A)", 7.0),
        I("min(max(A, C), 5)", 5), I("ceil(log2(M + 1))", 11),
        /* a float first and ints after: still compared as reals (not the float's bits) */
        R("max(F, 1)", 2.5),   R("min(F, 10)", 2.5),   R("max(F, A, 1)", 7.0),
        /* the lowest int64 is a real that converts exactly */
        I("int(-(2.0 ** 63))", INT64_MIN), I("floor(-(2.0 ** 63))", INT64_MIN),
    };
    run_table(cases, sizeof cases / sizeof cases[0]);

    struct tf_value s[S_COUNT];
    base_slots(s);
    expect_eval_error("ceil(F * 1e300)", s, "does not fit in a 64-bit integer");
    expect_eval_error("int(1e19)", s, "does not fit in a 64-bit integer");
    /* 2^63 itself is one past INT64_MAX: the bound is exclusive */
    expect_eval_error("int(2.0 ** 63)", s, "does not fit in a 64-bit integer");
    expect_eval_error("ceil(9223372036854775808.0)", s, "does not fit in a 64-bit integer");
    expect_eval_error("log2(Z)", s, "log2 of a non-positive number in 'log2(Z)' at column 1: "
                                    "log2(0)");
    expect_eval_error("log2(B)", s, "log2 of a non-positive number");
    expect_eval_error("sqrt(B)", s, "square root of a negative number");

    expect_compile_error("ceil(1, 2)", TF_ERR_SCHEMA, 1, "function 'ceil' takes 1 argument, got 2");
    expect_compile_error("A + sqrt()", TF_ERR_SCHEMA, 5, "function 'sqrt' takes 1 argument, got 0");
    expect_compile_error("min(A)", TF_ERR_SCHEMA, 1, "function 'min' takes at least 2 arguments");
    expect_compile_error("M * pow(2, 3)", TF_ERR_SCHEMA, 5, "unknown function 'pow' (known: ceil");
    expect_compile_error("ceil + 1", TF_ERR_SCHEMA, 1, "'ceil' is a function");
}

static void test_enum_strings(void **state)
{
    (void)state;
    struct tf_value s[S_COUNT];
    base_slots(s); /* LOOP = 1, "kij" */
    assert_int_equal(eval_text("LOOP == \"kij\"", s).u.i, 1);
    assert_int_equal(eval_text("LOOP == 'ikj'", s).u.i, 0);
    assert_int_equal(eval_text("LOOP != 'ikj'", s).u.i, 1);
    assert_int_equal(eval_text("'kij' == LOOP", s).u.i, 1);
    assert_int_equal(eval_text("\"ikj\" != LOOP && A > 0", s).u.i, 1);
    assert_int_equal(eval_text("A > 0 && LOOP == 'ikj' || M == 1024", s).u.i, 1);
    assert_int_equal(eval_text("LOOP == 'ikj' ? 10 : 20", s).u.i, 20);
    s[S_LOOP] = tf_int(0);
    assert_int_equal(eval_text("LOOP == 'ikj' ? 10 : 20", s).u.i, 10);

    expect_compile_error("LOOP == 'jik'", TF_ERR_SCHEMA, 9,
                         "'jik' is not a value of 'LOOP' (allowed: ikj, kij)");
    expect_compile_error("'jik' != LOOP", TF_ERR_SCHEMA, 1, "allowed: ikj, kij");
    expect_compile_error("M == 'ikj'", TF_ERR_SCHEMA, 6, "'M' is not an enum parameter");
    expect_compile_error("'ikj' == M", TF_ERR_SCHEMA, 1, "'M' is not an enum parameter");
    expect_compile_error("'ikj'", TF_ERR_SCHEMA, 1, "only be compared with == or !=");
    expect_compile_error("LOOP < 'ikj'", TF_ERR_SCHEMA, 8, "only be compared with == or !=");
    expect_compile_error("LOOP == 'ikj' + 1", TF_ERR_SCHEMA, 9, "not allowed here");
    expect_compile_error("'ikj' == LOOP + 1", TF_ERR_SCHEMA, 1, "not allowed here");
    expect_compile_error("(LOOP) == 'ikj'", TF_ERR_SCHEMA, 11, "not allowed here");
    expect_compile_error("min('a', 2)", TF_ERR_SCHEMA, 5, "not allowed here");
    expect_compile_error("A + \"x\"", TF_ERR_SCHEMA, 5, "not allowed here");
}

static void test_undefined_name(void **state)
{
    (void)state;
    expect_compile_error("TILEX * 2", TF_ERR_SCHEMA, 1,
                         "undefined name 'TILEX' (did you mean 'TILE_X'? known: TILE_X, TILE_Y, "
                         "M, N, K, A, B, C, ...)");
    expect_compile_error("M % TILE_X == 0 && N % tile_y == 0", TF_ERR_SCHEMA, 24,
                         "undefined name 'tile_y' (did you mean 'TILE_Y'?");
    expect_compile_error("M + zzz", TF_ERR_SCHEMA, 5, "undefined name 'zzz' (known:");

    /* No symbol table at all: constants only. */
    struct tf_error err = {0};
    struct tf_expr *e = tf_expr_compile("2 * 3", NULL, &err);
    assert_non_null(e);
    struct tf_value v;
    assert_int_equal(tf_expr_eval(e, NULL, &v, &err), 0);
    assert_int_equal(v.u.i, 6);
    tf_expr_destroy(e);
    assert_null(tf_expr_compile("x + 1", NULL, &err));
    assert_int_equal(err.code, TF_ERR_SCHEMA);
    assert_non_null(strstr(err.message, "no names are defined"));
}

static void test_syntax_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int column;
        const char *needle;
    } cases[] = {
        {"", 1, "unexpected end of expression: expected a number"},
        {"   ", 4, "unexpected end of expression"},
        {"1 +", 4, "unexpected end of expression"},
        {"(1 + 2", 7, "expected ')' to close '(' at column 1, found end of expression"},
        {"A * (1 + (2 * 3)", 17, "expected ')' to close '(' at column 5, found end of expression"},
        {"1 + * 2", 5, "unexpected '*'"},
        {"M N", 3, "unexpected name 'N' after a complete expression"},
        {"1 + 2)", 6, "unexpected ')' after a complete expression"},
        {"()", 2, "unexpected ')'"},
        {"1 = 2", 3, "unexpected '=' (did you mean '=='?)"},
        {"M & N", 3, "did you mean '&&'?"},
        {"M | N", 3, "did you mean '||'?"},
        {"min(1, 2", 9, "expected ',' or ')' in the call to 'min' opened at column 4, found end"},
        {"min(1 2)", 7, "expected ',' or ')'"},
        {"A ? 1", 6, "expected ':' for the '?' at column 3, found end of expression"},
        {"A ? 1 ; 2", 7, "unexpected character ';'"},
        {"12abc", 1, "invalid number '12abc'"},
        {"M + 1.2.3", 5, "invalid number '1.2.3'"},
        {"0x", 1, "invalid number"},
        {"0x1G", 1, "invalid number"},
        {"1e+", 1, "invalid number"},
        {"99999999999999999999", 1, "does not fit in a 64-bit integer"},
        {"0x8000000000000000", 1, "does not fit in a 64-bit integer"},
        {"1e999", 1, "too large for a double"},
        {"M @ 2", 3, "unexpected character '@'"},
        {"M + 'abc", 5, "unterminated string"},
        {"* 2 @", 1, "unexpected '*'"},       /* the earlier error wins */
        {"M\t+\t\xc3\xa9", 5, "unexpected byte 0xC3"},
        {"min(1,)", 7, "unexpected ')'"},
        {"A ?: 1", 4, "unexpected ':'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        expect_compile_error(cases[k].text, TF_ERR_SYNTAX, cases[k].column, cases[k].needle);
}

/* `and`, `or`, `not`: the words of Python restrictions. `and` and `or` are
 * `&&` and `||`; `not` has Python's precedence, below the comparisons, so it
 * negates a whole comparison where C's `!` negates its operand. Base values:
 * A=7 B=-2 C=3 Z=0. */
static void test_python_words(void **state)
{
    (void)state;
    static const struct value_case cases[] = {
        I("A == 7 and B == -2", 1), I("A == 7 and B == 2", 0), I("Z or A", 1),
        I("Z or Z", 0),             I("not Z", 1),             I("not A", 0),
        I("not not A", 1),          I("not Z and A", 1),       I("not (Z or Z)", 1),
        I("Z or not Z", 1),         I("A or B and Z", 1),      I("(A or B) and Z", 0),
        I("A && B or Z", 1),        I("A and B && C || Z", 1), I("A == 7 and not B == 0", 1),
        /* not C == 5 is not (3 == 5); !C == 5 is (!3) == 5 */
        I("not C == 5", 1),         I("!C == 5", 0),
        I("not C < 5", 0),          I("!C < 5", 1),
        I("(not A) + 1", 1),        I("not A ? 4 : 5", 5),
    };
    run_table(cases, sizeof cases / sizeof cases[0]);

    /* short-circuit, as && and || */
    struct tf_value s[S_COUNT];
    base_slots(s);
    assert_int_equal(eval_text("Z == 0 or M // Z > 1", s).u.i, 1);
    assert_int_equal(eval_text("Z != 0 and M // Z > 1", s).u.i, 0);
    expect_eval_error("Z == 1 or M // Z > 1", s, "division by zero");

    /* words are not names */
    assert_true(tf_expr_is_keyword("and"));
    assert_true(tf_expr_is_keyword("or"));
    assert_true(tf_expr_is_keyword("not"));
    assert_false(tf_expr_is_keyword("AND"));
    assert_false(tf_expr_is_keyword("nota"));
    assert_false(tf_expr_is_keyword("order"));
    /* names that start like a word stay names */
    static const struct tf_symbol words[] = {{"order", 0, NULL, 0}, {"notes", 1, NULL, 0},
                                             {"android", 2, NULL, 0}};
    static const struct tf_symtab wt = {words, 3};
    struct tf_error err = {0};
    struct tf_expr *e = tf_expr_compile("order and notes or not android", &wt, &err);
    assert_non_null(e);
    struct tf_value ws[3] = {tf_int(1), tf_int(0), tf_int(0)}, v;
    assert_int_equal(tf_expr_eval(e, ws, &v, &err), 0);
    assert_int_equal(v.u.i, 1); /* (1 and 0) or (not 0) */
    assert_int_equal(tf_expr_max_slot(e), 2);
    tf_expr_destroy(e);

    expect_compile_error("1 + not A", TF_ERR_SYNTAX, 5,
                         "'not' applies to a whole comparison (as in Python)");
    expect_compile_error("A == not B", TF_ERR_SYNTAX, 6, "write (not X), or !X");
    expect_compile_error("-not A", TF_ERR_SYNTAX, 2, "'not' applies to a whole comparison");
    expect_compile_error("A and", TF_ERR_SYNTAX, 6, "unexpected end of expression");
    expect_compile_error("or A", TF_ERR_SYNTAX, 1, "unexpected 'or'");
}

/* Comparison chains mean what they mean in Python and in Kernel Tuner's
 * restrictions: a < b <= c is a < b && b <= c, b evaluated once, stopping at
 * the first false link. Base values: A=7 B=-2 C=3 F=2.5 Z=0 M=1024 N=512. */
static void test_comparison_chains(void **state)
{
    (void)state;
    static const struct value_case cases[] = {
        I("1 < A < 10", 1),          I("1 < A < 5", 0),          I("A < 1 < 10", 0),
        I("1 <= A <= 7", 1),         I("1 <= A <= 7 <= 7", 1),    I("1 <= A <= 7 < 7", 0),
        I("32 <= M * N <= 1024", 0), I("32 <= M // N <= 1024", 0), I("1 <= M // N <= 2", 1),
        /* Python's meaning, not C's: (A == 7) == 7 would be 0 */
        I("A == 7 == 7", 1),         I("C < A > B", 1),           I("C < A > 8", 0),
        I("A != C != 3", 0),         I("F < A <= 7.0", 1),        I("B < F < C", 1),
        I("1 < 2 < 3", 1),           I("3 < 2 < 1", 0),           I("2 < 3 < 1", 0),
        I("1 < 2 < A", 1),           I("3 < 2 < A", 0),
        I("1 < A < 10 && B < 0", 1), I("1 < A < 5 || C == 3", 1), I("(1 < A < 5) + 1", 1),
        I("1 < A < 10 ? 4 : 5", 4),  I("not 1 < A < 10", 0),      I("1 < A < 10 and 0 < C < 2", 0),
    };
    run_table(cases, sizeof cases / sizeof cases[0]);

    struct tf_value s[S_COUNT];
    base_slots(s);
    /* a false link stops the chain: the rest is not evaluated */
    struct tf_value v = eval_text("Z > 1 < M // Z", s);
    assert_false(v.is_float);
    assert_int_equal(v.u.i, 0);
    assert_int_equal(eval_text("A < 1 < M // Z < 2", s).u.i, 0);
    /* a true link goes on to the next one */
    expect_eval_error("Z < 1 < M // Z", s, "division by zero in 'Z < 1 < M // Z' at column 11");
    /* the middle operand is evaluated once: an error in it is reported once, at its place */
    expect_eval_error("1 < M // Z < 3", s, "division by zero in '1 < M // Z < 3' at column 7");
    /* chains read every slot they name */
    struct tf_error err = {0};
    struct tf_expr *e = tf_expr_compile("TILE_X <= M * N <= K", &symtab, &err);
    assert_non_null(e);
    assert_true(tf_expr_uses_slot(e, S_TILE_X));
    assert_true(tf_expr_uses_slot(e, S_M));
    assert_true(tf_expr_uses_slot(e, S_N));
    assert_true(tf_expr_uses_slot(e, S_K));
    s[S_K] = tf_int(INT64_MAX);
    assert_int_equal(tf_expr_eval(e, s, &v, &err), 0);
    assert_int_equal(v.u.i, 1);
    s[S_K] = tf_int(1024 * 512 - 1);
    assert_int_equal(tf_expr_eval(e, s, &v, &err), 0);
    assert_int_equal(v.u.i, 0);
    tf_expr_destroy(e);

    /* an enum comparison is a whole operand, so it does not chain */
    expect_compile_error("LOOP == 'ikj' == 1", TF_ERR_SYNTAX, 15,
                         "a comparison with an enum string does not chain");
    expect_compile_error("1 < LOOP == 'ikj'", TF_ERR_SCHEMA, 13, "string 'ikj' is not allowed");
}

/* What people write from Python (and other languages) that is not this
 * language: the error names the operator and what to write. */
static void test_foreign_operators(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        enum tf_error_code code;
        int column;
        const char *needle;
    } cases[] = {
        {"A is 7", TF_ERR_SYNTAX, 3, "'is' is Python's identity test: compare numbers with '=='"},
        {"(A is not 7)", TF_ERR_SYNTAX, 4,
         "expected ')' to close '(' at column 1, found name 'is' ('is'"},
        {"A in (1, 2)", TF_ERR_SYNTAX, 3,
         "membership 'in' is not supported: write X == 1 || X == 2"},
        {"A not in (1, 2)", TF_ERR_SYNTAX, 3, "'not in' is not supported"},
        {"4 if A else 5", TF_ERR_SYNTAX, 3, "'A if COND else B' is written 'COND ? A : B'"},
        {"A ? 4 else 5", TF_ERR_SYNTAX, 7,
         "expected ':' for the '?' at column 3, found name 'else' (Python's"},
        {"min(A if A else 1, 2)", TF_ERR_SYNTAX, 7,
         "in the call to 'min' opened at column 4, found name 'if' (Python's"},
        {"A ^ 2", TF_ERR_SYNTAX, 3, "'^' is not supported: write '**' for a power"},
        {"A << 2", TF_ERR_SYNTAX, 3, "shifts are not supported: write X * 2 ** n"},
        {"A >> 2", TF_ERR_SYNTAX, 3, "write X // 2 ** n"},
        {"A <> 2", TF_ERR_SYNTAX, 3, "'<>' is not an operator here: write '!='"},
        {"A === 7", TF_ERR_SYNTAX, 3, "'===' is not an operator here: write '=='"},
        {"A !== 7", TF_ERR_SYNTAX, 3, "'!==' is not an operator here: write '!='"},
        {"~A", TF_ERR_SYNTAX, 1, "'~' (bitwise not) is not supported"},
        {"A == True", TF_ERR_SCHEMA, 6, "truth values are numbers here: write 1 for true"},
        {"pow(A, 2)", TF_ERR_SCHEMA, 1,
         "unknown function 'pow' (known: ceil, floor, round, min, max, abs, log2, sqrt, int, "
         "float); write a ** b for pow(a, b)"},
        {"A B", TF_ERR_SYNTAX, 3,
         "unexpected name 'B' after a complete expression (missing operator?)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        expect_compile_error(cases[k].text, cases[k].code, cases[k].column, cases[k].needle);
}

static void test_slots(void **state)
{
    (void)state;
    struct tf_error err = {0};
    struct tf_expr *e = tf_expr_compile("M * M + N > K ? TILE_Y : 0", &symtab, &err);
    assert_non_null(e);
    assert_int_equal(tf_expr_max_slot(e), S_K);
    assert_true(tf_expr_uses_slot(e, S_M));
    assert_true(tf_expr_uses_slot(e, S_N));
    assert_true(tf_expr_uses_slot(e, S_K));
    assert_true(tf_expr_uses_slot(e, S_TILE_Y));
    assert_false(tf_expr_uses_slot(e, S_TILE_X));
    assert_false(tf_expr_uses_slot(e, S_A));
    assert_false(tf_expr_uses_slot(e, -1));
    assert_false(tf_expr_uses_slot(e, 1000));
    assert_string_equal(tf_expr_text(e), "M * M + N > K ? TILE_Y : 0");
    tf_expr_destroy(e);

    e = tf_expr_compile("LOOP == 'ikj' && time_s > 0", &symtab, &err);
    assert_non_null(e);
    assert_int_equal(tf_expr_max_slot(e), S_TIME);
    assert_true(tf_expr_uses_slot(e, S_LOOP));
    assert_false(tf_expr_uses_slot(e, S_M));
    tf_expr_destroy(e);

    e = tf_expr_compile("1 + 2 * max(3, 4)", &symtab, &err);
    assert_non_null(e);
    assert_int_equal(tf_expr_max_slot(e), -1);
    assert_false(tf_expr_uses_slot(e, 0));
    struct tf_value v;
    assert_int_equal(tf_expr_eval(e, NULL, &v, &err), 0); /* reads no slots */
    assert_int_equal(v.u.i, 9);
    tf_expr_destroy(e);
    tf_expr_destroy(NULL);
}

static char *repeat(const char *head, int n, const char *mid, const char *tail, int m)
{
    size_t len = strlen(head) * (size_t)n + strlen(mid) + strlen(tail) * (size_t)m + 1;
    char *s = malloc(len);
    assert_non_null(s);
    s[0] = '\0';
    for (int k = 0; k < n; k++)
        strcat(s, head);
    strcat(s, mid);
    for (int k = 0; k < m; k++)
        strcat(s, tail);
    return s;
}

static void test_deep_nesting(void **state)
{
    (void)state;
    struct tf_value s[S_COUNT];
    base_slots(s);

    /* Reasonable depth works: 1 + (1 + (... (A) ...)) with 40 levels. */
    char *ok = repeat("1 + (", 40, "A", ")", 40);
    struct tf_value v = eval_text(ok, s);
    assert_int_equal(v.u.i, 47);
    free(ok);

    struct tf_error err = {0};
    char *deep = repeat("(", 100, "1", ")", 100);
    assert_null(tf_expr_compile(deep, &symtab, &err));
    assert_int_equal(err.code, TF_ERR_SYNTAX);
    assert_non_null(strstr(err.message, "nested too deeply"));
    free(deep);

    /* Hostile: thousands of '(' or '-' must fail cleanly, not overflow the C stack. */
    deep = repeat("(", 4000, "", "", 0);
    assert_null(tf_expr_compile(deep, &symtab, &err));
    assert_non_null(strstr(err.message, "nested too deeply"));
    free(deep);
    deep = repeat("-", 4000, "1", "", 0);
    assert_null(tf_expr_compile(deep, &symtab, &err));
    assert_non_null(strstr(err.message, "nested too deeply"));
    free(deep);
    deep = repeat("2 ** ", 800, "1", "", 0);
    assert_null(tf_expr_compile(deep, &symtab, &err));
    assert_non_null(strstr(err.message, "nested too deeply"));
    free(deep);

    /* Wide rather than deep: a call with 100 arguments needs 100 stack slots. */
    char *wide = repeat("A, ", 99, "min(", "", 0);
    char *call = malloc(strlen(wide) + 8);
    assert_non_null(call);
    sprintf(call, "min(%.*sA)", (int)(strlen(wide) - 4), wide); /* drop the trailing "min(" */
    assert_null(tf_expr_compile(call, &symtab, &err));
    assert_int_equal(err.code, TF_ERR_SYNTAX);
    assert_non_null(strstr(err.message, "evaluation stack"));
    free(wide);
    free(call);

    /* Exactly at the limit: 64 names as arguments need 64 stack slots, which
     * the evaluator's stack has; one more must be refused at compile time, or
     * evaluation would write past the end of that stack. */
    for (int nargs = 64; nargs <= 65; nargs++) {
        char *args = repeat("A, ", nargs - 1, "A", "", 0);
        char *text = malloc(strlen(args) + 8);
        assert_non_null(text);
        sprintf(text, "max(%s)", args);
        if (nargs == 64) {
            v = eval_text(text, s);
            assert_int_equal(v.u.i, 7);
        } else {
            assert_null(tf_expr_compile(text, &symtab, &err));
            assert_int_equal(err.code, TF_ERR_SYNTAX);
            assert_non_null(strstr(err.message, "evaluation stack"));
        }
        free(args);
        free(text);
    }

    /* Long flat chains are fine (stack depth 2)... */
    char *chain = repeat("A + ", 500, "A", "", 0);
    v = eval_text(chain, s);
    assert_int_equal(v.u.i, 7 * 501);
    free(chain);
    /* ...up to the text limit. */
    char *big = repeat("1+", 2100, "1", "", 0);
    assert_null(tf_expr_compile(big, &symtab, &err));
    assert_int_equal(err.code, TF_ERR_SYNTAX);
    assert_non_null(strstr(err.message, "too long"));
    free(big);
}

static void test_eval_bool_and_nan(void **state)
{
    (void)state;
    struct tf_value s[S_COUNT];
    base_slots(s);
    struct tf_error err = {0};
    bool b = false;
    struct tf_expr *e = tf_expr_compile("F - 2", &symtab, &err);
    assert_non_null(e);
    assert_int_equal(tf_expr_eval_bool(e, s, &b, &err), 0);
    assert_true(b);
    s[S_F] = tf_float(2.0);
    assert_int_equal(tf_expr_eval_bool(e, s, &b, &err), 0);
    assert_false(b);
    tf_expr_destroy(e);

    e = tf_expr_compile("M // Z > 0", &symtab, &err);
    assert_non_null(e);
    b = true;
    assert_int_equal(tf_expr_eval_bool(e, s, &b, &err), -1);
    assert_int_equal(err.code, TF_ERR_EVAL);
    tf_expr_destroy(e);

    /* A NaN handed in by the caller (a failed timing) propagates: no error. */
    struct tf_value v = eval_text("2.0 * M / X / 1e9", s);
    assert_true(v.is_float);
    assert_true(isnan(v.u.f));
}

static void test_kernel_file_examples(void **state)
{
    (void)state;
    struct tf_value s[S_COUNT];
    base_slots(s);
    /* From kernels/gemm/kernel.yaml, with M=1024 N=512 K=256 BM=64 BN=32. */
    assert_int_equal(eval_text("M % BM == 0 && N % BN == 0 && K % BN == 0", s).u.i, 1);
    assert_int_equal(eval_text("(K * BN + BM * BN) * 4 <= l2_bytes", s).u.i, 1);
    s[S_BN] = tf_int(48);
    assert_int_equal(eval_text("M % BM == 0 && N % BN == 0", s).u.i, 0);
    struct tf_value v = eval_text("2.0 * M * N * K / time_s / 1e9", s);
    assert_true(v.is_float);
    assert_true(fabs(v.u.f - 2.0 * 1024 * 512 * 256 / 1e-3 / 1e9) < 1e-6);
    /* Launch geometry. */
    v = eval_text("ceil(M / TILE_X) * ceil(N / TILE_Y)", s);
    assert_false(v.is_float);
    assert_int_equal(v.u.i, 64 * 64);
}

static void test_throughput(void **state)
{
    (void)state;
    struct tf_value s[S_COUNT];
    base_slots(s);
    struct tf_error err = {0};
    struct tf_expr *e = tf_expr_compile("M % BM == 0 && N % BN == 0 && (K * BN + BM * BN) * 4 "
                                        "<= l2_bytes",
                                        &symtab, &err);
    assert_non_null(e);
    const long n = 5000000;
    long valid = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long k = 0; k < n; k++) {
        bool ok;
        s[S_BM] = tf_int(8 << (k & 3));
        if (tf_expr_eval_bool(e, s, &ok, &err) != 0)
            fail_msg("eval: %s", err.message);
        valid += ok;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    assert_int_equal(valid, n); /* every BM in 8..64 divides 1024 and fits */
    printf("[ INFO     ] 3-term constraint: %.1f M evaluations/s (%ld in %.3f s)\n",
           (double)n / sec / 1e6, n, sec);
    tf_expr_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arithmetic_and_precedence),
        cmocka_unit_test(test_integer_and_real_division),
        cmocka_unit_test(test_floor_division_of_negatives),
        cmocka_unit_test(test_power),
        cmocka_unit_test(test_overflow_errors),
        cmocka_unit_test(test_error_prefixed_with_its_own_message),
        cmocka_unit_test(test_division_by_zero_errors),
        cmocka_unit_test(test_comparisons_logic_short_circuit),
        cmocka_unit_test(test_float_comparison_boundaries),
        cmocka_unit_test(test_ternary),
        cmocka_unit_test(test_functions),
        cmocka_unit_test(test_enum_strings),
        cmocka_unit_test(test_undefined_name),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_python_words),
        cmocka_unit_test(test_comparison_chains),
        cmocka_unit_test(test_foreign_operators),
        cmocka_unit_test(test_slots),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_eval_bool_and_nan),
        cmocka_unit_test(test_kernel_file_examples),
        cmocka_unit_test(test_throughput),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
