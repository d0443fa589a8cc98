/* t1_expr.h - the Python expressions of Kernel Tuner's T1 files, in tunefarm's
 * expression language (for `tunefarm import-t1`, tools/t1_tool.c).
 *
 * A T1 file writes its restrictions, argument sizes, launch geometry and
 * parameter values as Python expressions (Kernel Tuner eval()s them). Most
 * of Python's arithmetic and logic means the same in schema/expr.md (`and`
 * `or` `not`, chained comparisons, `**`, `//`, `%`, real `/`); the rest is
 * rewritten: `x in (1, 2)` to `(x == 1 or x == 2)`, `is` to `==`, `a if c
 * else b` to `c ? a : b`, True / False to 1 / 0, `x << n` to `x * 2 ** n`,
 * math.ceil to ceil, `max(P)` of a parameter bound to its list of values
 * (Kernel Tuner's argument sizes) to its largest value, `ProblemSize[i]` to
 * a size name. What has no equivalent (bitwise & | ^ ~, round()'s halves to
 * even, an unknown function or name, `or` used for its operand's value) is an
 * error naming the column and what to write. The expression is parsed into a
 * tree first (Python's grammar and precedence), then printed in tunefarm's
 * with the parentheses its precedence needs, so the tree, not the spelling,
 * carries over. */
#ifndef TF_T1_EXPR_H
#define TF_T1_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "../schema/error.h"

/* A tuning parameter as expressions see it. */
struct tf_t1_param {
    const char *name;     /* as the T1 file writes it */
    const char *rename;   /* its name in kernel.yaml; NULL: the same */
    bool is_enum;         /* string values */
    int count;            /* values */
    const int64_t *ints;  /* the values of an integer parameter (max(P), min(P), len(P)) */
    const char *const *strings; /* the values of a string parameter (NULL: not checked) */
};

/* What the names of one expression mean. */
struct tf_t1_scope {
    const struct tf_t1_param *params;
    int nparams;
    const char *const *sizes; /* ProblemSize[i] is sizes[i], i < nsizes */
    int nsizes;
    /* Kernel Tuner evaluates argument sizes with every parameter bound to its
     * list of values: there a parameter appears only as max(P), min(P) or len(P). */
    bool params_as_lists;
    /* The value is used as a number (sizes, geometry), not as a truth value:
     * `a or b` there would give Python's operand, not 0 or 1. */
    bool numeric;
    const char *local;        /* a comprehension's variable, or NULL */
};

/* Translate the Python expression `text` for `scope`. Returns a new string in
 * tunefarm's language, or NULL + `err`: TF_ERR_SYNTAX for text that is not a
 * Python expression, TF_ERR_SCHEMA for one without a tunefarm equivalent;
 * err->column is the 1-based byte column in `text`, err->line 0. */
char *tf_t1_translate(const char *text, const struct tf_t1_scope *scope, struct tf_error *err);

/* A parameter's values, from the T1 `Values` string. */
struct tf_t1_values {
    bool is_enum;          /* strings (else integers) */
    bool generated;        /* written as range(...) or a comprehension, not as a list */
    bool had_bools;        /* True / False became 1 / 0 */
    bool had_floats;       /* whole floats (16.0) became integers */
    int count;
    int64_t *ints;
    char **strings;
};

/* Evaluate `text` as Kernel Tuner does (a list or tuple of constants, a single
 * constant, range(...), list(range(...)), or [EXPR for V in range(...)/LIST
 * if COND]) into `out` (free with tf_t1_values_free). 0, or -1 + err as for
 * tf_t1_translate (a value that is not an integer, a whole float, a boolean
 * or a string, mixed kinds, no values, more than 1,048,576). */
int tf_t1_values(const char *text, struct tf_t1_values *out, struct tf_error *err);
/* Free what tf_t1_values filled; accepts a zeroed struct. */
void tf_t1_values_free(struct tf_t1_values *v);

#endif
