/* fuzz_expr.c - libFuzzer target: the expression compiler and evaluator (schema/expr.h).
 *
 * The input is the expression text (cut at its first NUL, as the loaders pass
 * C strings). It is compiled against a symbol table shaped like a kernel's:
 * integer parameters, an enum parameter, problem sizes, device properties and
 * time_s; an expression that compiles is evaluated with several slot sets
 * (ordinary values, zeros, negatives, int64 extremes, floats, NaN and
 * infinities) as a number and as a truth value. Checks: a failure always says
 * why, a compiled expression never reads a slot beyond its table, and
 * evaluation is deterministic (the same slots give the same result twice). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "schema/expr.h"

static const char *const loop_values[] = {"ikj", "kij", "ijk"};
static const char *const mode_values[] = {"fast"};

static const struct tf_symbol symbols[] = {
    {"BM", 0, NULL, 0},        {"BN", 1, NULL, 0},          {"VEC", 2, NULL, 0},
    {"LOOP", 3, loop_values, 3}, {"MODE", 4, mode_values, 1}, {"M", 5, NULL, 0},
    {"N", 6, NULL, 0},         {"K", 7, NULL, 0},           {"max_threads", 8, NULL, 0},
    {"max_shared", 9, NULL, 0}, {"warp_size", 10, NULL, 0}, {"l2_bytes", 11, NULL, 0},
    {"time_s", 12, NULL, 0},
};
#define NSLOTS 13
static const struct tf_symtab symtab = {symbols, NSLOTS};

#define I(x) {.is_float = false, .u.i = (x)}
#define F(x) {.is_float = true, .u.f = (x)}
static const struct tf_value slot_sets[][NSLOTS] = {
    {I(64), I(128), I(4), I(1), I(0), I(4096), I(4096), I(4096), I(1024), I(49152), I(32),
     I(50331648), F(1.5e-3)},
    {I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), F(0.0)},
    {I(-1), I(-7), I(-3), I(2), I(0), I(-1), I(3), I(-5), I(1), I(-1), I(-2), I(7), F(-0.0)},
    {I(INT64_MAX), I(INT64_MIN), I(INT64_MAX), I(1), I(0), I(INT64_MIN), I(-1), I(2),
     I(INT64_MAX), I(1), I(INT64_MIN), I(3), F(INFINITY)},
    {F(0.5), F(-2.5), F(1e308), I(0), I(0), F(NAN), F(-INFINITY), F(3.0), F(1e-300), F(2.0),
     F(-1e308), F(4.0), F(NAN)},
};
#define NSETS (sizeof slot_sets / sizeof slot_sets[0])

static int same_value(struct tf_value a, struct tf_value b)
{
    if (a.is_float != b.is_float)
        return 0;
    if (!a.is_float)
        return a.u.i == b.u.i;
    return (isnan(a.u.f) && isnan(b.u.f)) || memcmp(&a.u.f, &b.u.f, sizeof a.u.f) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = tf_xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    struct tf_error err = {0};
    struct tf_expr *e = tf_expr_compile(text, &symtab, &err);
    if (e == NULL) {
        if (err.code == TF_ERR_NONE || err.message[0] == '\0')
            FUZZ_ABORT(); /* a failure must say why */
        free(text);
        return 0;
    }
    if (tf_expr_max_slot(e) >= NSLOTS || strcmp(tf_expr_text(e), text) != 0)
        FUZZ_ABORT();
    for (int s = 0; s < NSLOTS; s++)
        (void)tf_expr_uses_slot(e, s);
    for (size_t k = 0; k < NSETS; k++) {
        struct tf_value v1, v2;
        struct tf_error e1 = {0}, e2 = {0};
        int r1 = tf_expr_eval(e, slot_sets[k], &v1, &e1);
        int r2 = tf_expr_eval(e, slot_sets[k], &v2, &e2);
        if (r1 != r2 || (r1 == 0 && !same_value(v1, v2)))
            FUZZ_ABORT(); /* evaluation is a pure function of the slots */
        if (r1 != 0 && (e1.code != TF_ERR_EVAL || e1.message[0] == '\0'))
            FUZZ_ABORT();
        bool b;
        (void)tf_expr_eval_bool(e, slot_sets[k], &b, &e1);
    }
    /* Also without a symbol table: names must then be refused, never crash. */
    struct tf_expr *bare = tf_expr_compile(text, NULL, &err);
    tf_expr_destroy(bare);
    tf_expr_destroy(e);
    free(text);
    return 0;
}
