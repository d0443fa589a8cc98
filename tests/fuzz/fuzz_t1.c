/* fuzz_t1.c - libFuzzer target: Kernel Tuner's Python expressions in tunefarm's
 * language (tools/t1_expr.h, `tunefarm import-t1`).
 *
 * The input is a Python expression (cut at its first NUL). It is translated
 * as a restriction and as an argument size over parameters shaped like a T1
 * file's (integers, a string parameter, a renamed one, ProblemSize[0..1]),
 * and read as a parameter's Values. Checks: a failure always says why, at a
 * column inside the text (or just past it); a translation is a tunefarm
 * expression, which schema/expr compiles against the same names (unless it
 * only exceeds the language's nesting or stack limits) and evaluates
 * deterministically; values that are read are at least one, distinct and of
 * one kind. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "schema/expr.h"
#include "tools/t1_expr.h"

static const int64_t bx[] = {16, 32, 64};
static const int64_t small[] = {0, 1, 2, 4};
static const char *const loops[] = {"ikj", "kij"};
static const struct tf_t1_param params[] = {
    {.name = "block_size_x", .count = 3, .ints = bx},
    {.name = "tile", .count = 4, .ints = small},
    {.name = "x", .count = 4, .ints = small},
    {.name = "T", .rename = "T_", .count = 4, .ints = small},
    {.name = "LOOP", .is_enum = true, .count = 2, .strings = loops},
};
static const char *const sizes[] = {"problem_size_x", "problem_size_y"};
static const struct tf_symbol symbols[] = {
    {"block_size_x", 0, NULL, 0}, {"tile", 1, NULL, 0},          {"x", 2, NULL, 0},
    {"T_", 3, NULL, 0},           {"LOOP", 4, loops, 2},         {"problem_size_x", 5, NULL, 0},
    {"problem_size_y", 6, NULL, 0},
};
static const struct tf_symtab symtab = {symbols, 7};
static const struct tf_value slots[7] = {
    {.u.i = 32}, {.u.i = 2}, {.u.i = 0}, {.u.i = 4}, {.u.i = 1}, {.u.i = 4096}, {.u.i = 7}};

static void check_translation(const char *text, const struct tf_t1_scope *scope)
{
    struct tf_error err = {0};
    char *out = tf_t1_translate(text, scope, &err);
    if (out == NULL) {
        if (err.code == TF_ERR_NONE || err.message[0] == '\0' || err.column < 1 ||
            (size_t)err.column > strlen(text) + 1)
            FUZZ_ABORT(); /* a failure says why, and where */
        return;
    }
    struct tf_error cerr = {0};
    struct tf_expr *e = tf_expr_compile(out, &symtab, &cerr);
    if (e == NULL) {
        /* only the language's limits may refuse what the translator printed */
        if (cerr.code != TF_ERR_SYNTAX ||
            (!strstr(cerr.message, "nest") && !strstr(cerr.message, "stack") &&
             !strstr(cerr.message, "bytes")))
            FUZZ_ABORT();
    } else {
        struct tf_value v1, v2;
        struct tf_error e1 = {0}, e2 = {0};
        int r1 = tf_expr_eval(e, slots, &v1, &e1), r2 = tf_expr_eval(e, slots, &v2, &e2);
        if (r1 != r2 || (r1 == 0 && (v1.is_float != v2.is_float ||
                                     (!v1.is_float && v1.u.i != v2.u.i))))
            FUZZ_ABORT();
        tf_expr_destroy(e);
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = tf_xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    const struct tf_t1_scope restriction = {
        .params = params, .nparams = 5, .sizes = sizes, .nsizes = 2};
    const struct tf_t1_scope size_scope = {.params = params, .nparams = 5, .sizes = sizes,
                                           .nsizes = 2, .params_as_lists = true,
                                           .numeric = true};
    check_translation(text, &restriction);
    check_translation(text, &size_scope);
    struct tf_t1_values v;
    struct tf_error err = {0};
    if (tf_t1_values(text, &v, &err) == 0) {
        if (v.count < 1 || (v.is_enum ? v.strings == NULL : v.ints == NULL))
            FUZZ_ABORT();
        for (int i = 0; i < v.count; i++)
            for (int j = i + 1; j < v.count && j < i + 64; j++)
                if (v.is_enum ? strcmp(v.strings[i], v.strings[j]) == 0
                              : v.ints[i] == v.ints[j])
                    FUZZ_ABORT(); /* distinct */
        tf_t1_values_free(&v);
    } else if (err.message[0] == '\0') {
        FUZZ_ABORT();
    }
    free(text);
    return 0;
}
