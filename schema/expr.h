/* expr.h - the small, safe expression language of kernel and job files.
 *
 * Constraints, problem sizes, launch geometry, argument values and derived
 * metrics are all written in it. Grammar (lowest precedence first):
 *   cond    := or ('?' cond ':' cond)?
 *   or      := and (('||'|'or') and)*  and := not (('&&'|'and') not)*
 *   not     := 'not' not | cmp          (Python's `not`: `not A == B` is `not (A == B)`)
 *   cmp     := sum (('=='|'!='|'<'|'<='|'>'|'>=') sum)*   (chains as in Python)
 *   sum     := prod (('+'|'-') prod)*   prod := unary (('*'|'/'|'//'|'%') unary)*
 *   unary   := ('-'|'+'|'!') unary | power        power := atom ('**' unary)?
 *   atom    := INT | FLOAT | NAME | NAME '(' args ')' | '(' cond ')' | STRING
 * Values are 64-bit integers or doubles. `/` always divides as real numbers
 * (ceil(N / TILE) means what it says); `//` and `%` are integer floor division
 * and modulo (an error on zero). Integer + - * overflow is an error.
 * Functions: ceil floor round min max abs log2 sqrt int float.
 * A STRING literal is allowed only as an operand of == or != whose other side
 * is an enum parameter: it compiles to that value's index.
 * Names are resolved at compile time against a symbol table to slots, so
 * evaluation is a loop over bytecode with no lookups; it never runs host code.
 * '!' is a unary operator (C precedence: `!a == b` is `(!a) == b`). A chain
 * `a < b <= c` is `a < b && b <= c` with b evaluated once, as in Python.
 * Limits: 4096 bytes of text, 64 nesting levels, 64 stack values.
 * A compiled expression is immutable: evaluate it from any number of threads.
 * schema/expr.md is the user-facing spec. */
#ifndef TF_EXPR_H
#define TF_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

struct tf_value {
    bool is_float;
    union {
        int64_t i;
        double f;
    } u;
};

/* A symbol: a name bound to a slot of the value array passed to tf_expr_eval.
 * `enum_values` (NULL if none) lists the strings of an enum parameter, whose
 * slot then holds the index of the chosen string. */
struct tf_symbol {
    const char *name;
    int slot;
    const char *const *enum_values;
    int enum_count;
};

struct tf_symtab {
    const struct tf_symbol *symbols;
    int count;
};

struct tf_expr; /* opaque compiled bytecode */

/* Compile `text` (not NULL) against `syms` (NULL: no names). On error returns
 * NULL and fills `err`: TF_ERR_SYNTAX or TF_ERR_SCHEMA (unknown name or
 * function, arity, misused string), err->column the 1-based byte column inside
 * `text`, err->line 0 and err->file "" for the caller to fill in. */
struct tf_expr *tf_expr_compile(const char *text, const struct tf_symtab *syms,
                                struct tf_error *err);
/* Free a compiled expression; accepts NULL. */
void tf_expr_destroy(struct tf_expr *e);
/* Evaluate with slot values `slots` (at least tf_expr_max_slot + 1 of them);
 * returns 0 and sets *out, or -1 with `err` (TF_ERR_EVAL: division by zero,
 * overflow, log2 of a non-positive number...). Never allocates. */
int tf_expr_eval(const struct tf_expr *e, const struct tf_value *slots, struct tf_value *out,
                 struct tf_error *err);
/* Evaluate as a truth value (non-zero number = true); -1 on evaluation error. */
int tf_expr_eval_bool(const struct tf_expr *e, const struct tf_value *slots, bool *out,
                      struct tf_error *err);
/* Highest slot the expression reads, or -1 if it reads none. */
int tf_expr_max_slot(const struct tf_expr *e);
/* True if the expression reads slot `slot`. */
bool tf_expr_uses_slot(const struct tf_expr *e, int slot);
/* The source text it was compiled from. */
const char *tf_expr_text(const struct tf_expr *e);
/* True if `name` is a word of the language (and, or, not), which no symbol
 * can be called since the lexer reads it as an operator. */
bool tf_expr_is_keyword(const char *name);

/* Value helpers. */
static inline struct tf_value tf_int(int64_t i) { return (struct tf_value){.is_float = false, .u.i = i}; }
static inline struct tf_value tf_float(double f) { return (struct tf_value){.is_float = true, .u.f = f}; }
static inline double tf_value_as_double(struct tf_value v) { return v.is_float ? v.u.f : (double)v.u.i; }

#endif
