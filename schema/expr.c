/* expr.c - compiler and stack machine for the expression language (expr.h).
 *
 * Compilation is three steps over a text of at most EXPR_MAX_TEXT bytes: a
 * lexer turns the whole text into a token array (stopping at the first bad
 * character with an error token, so the parser still reports errors in text
 * order); a recursive-descent parser, one function per grammar level, emits
 * bytecode directly while tracking the exact stack depth each instruction
 * leaves; names are resolved to slots and enum strings to indices on the way.
 * `&&`, `||` and `?:` become conditional jumps, back-patched through a list
 * threaded in the jump operands, so short-circuit needs no runtime support;
 * a comparison chain `a < b < c` likewise, with OP_CHAIN, which compares,
 * keeps the middle operand for the next link, and jumps out with 0 on false.
 * The words `and`, `or` and `not` are tokens, not names.
 * Operations whose operands are all constants are folded when the folding
 * cannot fail (a failing one, e.g. `1 // 0`, is left for evaluation so that a
 * guarded `N == 0 || 1 // 0` stays legal). Evaluation is one switch-dispatch
 * loop over the instructions on a fixed stack of EXPR_MAX_STACK values that
 * lives on the C stack: no allocation, no lookups, no host code. The
 * arithmetic is shared by the evaluator and the folder (always-inline
 * helpers), so both agree on every corner: int64 overflow is an error, `//`
 * and `%` floor like Python, `/` is real division. Every instruction keeps the
 * column of its token so evaluation errors point into the text. */
#include "expr.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_MAX_TEXT 4096 /* bytes of source text */
#define EXPR_MAX_STACK 64  /* values on the evaluation stack */
#define EXPR_MAX_NEST 64   /* nested parentheses, unary operators, calls, ?: branches */
#define EXPR_TEXT_IN_MSG 160 /* longest text quoted in an evaluation error */

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* ---- bytecode -------------------------------------------------------------- */

enum op {
    OP_CONST,     /* push k */
    OP_LOAD,      /* push slots[a] */
    OP_NEG,
    OP_NOT,
    OP_BOOL,      /* top := top != 0 */
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_FLOORDIV,
    OP_MOD,
    OP_POW,
    OP_EQ,
    OP_NE,
    OP_LT,
    OP_LE,
    OP_GT,
    OP_GE,
    OP_CALL,      /* fn, a = argc: pop argc values, push the result */
    OP_JUMP,      /* pc := a */
    OP_JUMP_FALSE,/* pop; if false pc := a */
    OP_AND_JUMP,  /* if top is false: top := 0, pc := a; else pop */
    OP_OR_JUMP,   /* if top is true: top := 1, pc := a; else pop */
    OP_CHAIN,     /* fn = a comparison op: x := pop, y := pop; if y fn x is false push 0 and
                     pc := a, else push x (a chain's middle operand, for the next link) */
    OP_END        /* the result is the only value left */
};

enum fn {
    FN_CEIL,
    FN_FLOOR,
    FN_ROUND,
    FN_MIN,
    FN_MAX,
    FN_ABS,
    FN_LOG2,
    FN_SQRT,
    FN_INT,
    FN_FLOAT,
    FN_COUNT
};

static const struct {
    const char *name;
    int min_args, max_args; /* max_args -1: no upper bound */
} functions[FN_COUNT] = {
    [FN_CEIL] = {"ceil", 1, 1},   [FN_FLOOR] = {"floor", 1, 1}, [FN_ROUND] = {"round", 1, 1},
    [FN_MIN] = {"min", 2, -1},    [FN_MAX] = {"max", 2, -1},    [FN_ABS] = {"abs", 1, 1},
    [FN_LOG2] = {"log2", 1, 1},   [FN_SQRT] = {"sqrt", 1, 1},   [FN_INT] = {"int", 1, 1},
    [FN_FLOAT] = {"float", 1, 1},
};

struct instr {
    uint8_t op;
    uint8_t fn;       /* OP_CALL: enum fn */
    uint16_t col;     /* 1-based column of the token, for evaluation errors */
    int32_t a;        /* OP_LOAD: slot; jumps: target; OP_CALL: argc */
    struct tf_value k; /* OP_CONST */
};

struct tf_expr {
    char *text;
    struct instr *code;
    int ncode;
    int max_stack;
    int nslots;   /* distinct slots read, sorted ascending in `slots` */
    int *slots;
};

/* Why an operation failed; the evaluator turns it into a message. */
enum fail { F_OK = 0, F_DIVZERO, F_OVERFLOW, F_FLOAT_OVERFLOW, F_DOMAIN, F_RANGE };

/* ---- arithmetic shared by evaluator and folder ----------------------------- */

static inline bool ipow_overflows(int64_t base, int64_t exp, int64_t *out)
{
    int64_t r = 1;
    while (exp > 0) {
        if ((exp & 1) && __builtin_mul_overflow(r, base, &r))
            return true;
        exp >>= 1;
        /* |base| >= 2 squared only if a higher bit still needs it, so an
         * overflow here is an overflow of the final result too. */
        if (exp > 0 && __builtin_mul_overflow(base, base, &base))
            return true;
    }
    *out = r;
    return false;
}

/* A double to int64 if it is integral-ranged; false for NaN and out of range. */
static inline bool double_to_int(double d, int64_t *out)
{
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return false;
    *out = (int64_t)d;
    return true;
}

/* Finish a real-valued operation: a non-finite result from finite inputs is an
 * error (overflow, or NaN from a domain error); non-finite inputs (a NaN time
 * handed in by the caller) propagate quietly. */
static ALWAYS_INLINE enum fail real_result(double z, double x, double y, struct tf_value *r)
{
    if (!isfinite(z) && isfinite(x) && isfinite(y))
        return isnan(z) ? F_DOMAIN : F_FLOAT_OVERFLOW;
    *r = tf_float(z);
    return F_OK;
}

/* Binary operator `op` on a and b into *r, which is written only on success. */
static ALWAYS_INLINE enum fail binary(int op, struct tf_value a, struct tf_value b,
                                      struct tf_value *r)
{
    if (!a.is_float && !b.is_float) {
        int64_t x = a.u.i, y = b.u.i, z;
        switch (op) {
        case OP_ADD:
            if (__builtin_add_overflow(x, y, &z))
                return F_OVERFLOW;
            break;
        case OP_SUB:
            if (__builtin_sub_overflow(x, y, &z))
                return F_OVERFLOW;
            break;
        case OP_MUL:
            if (__builtin_mul_overflow(x, y, &z))
                return F_OVERFLOW;
            break;
        case OP_DIV:
            if (y == 0)
                return F_DIVZERO;
            *r = tf_float((double)x / (double)y);
            return F_OK;
        case OP_FLOORDIV:
            if (y == 0)
                return F_DIVZERO;
            if (x == INT64_MIN && y == -1)
                return F_OVERFLOW;
            z = x / y;
            if (x % y != 0 && ((x < 0) != (y < 0)))
                z--;
            break;
        case OP_MOD:
            if (y == 0)
                return F_DIVZERO;
            if (y == -1) { /* INT64_MIN % -1 is undefined behaviour in C */
                z = 0;
                break;
            }
            z = x % y;
            if (z != 0 && ((z < 0) != (y < 0)))
                z += y;
            break;
        case OP_POW:
            if (y < 0)
                goto real; /* 2 ** -1 is 0.5, not 0 */
            if (ipow_overflows(x, y, &z))
                return F_OVERFLOW;
            break;
        case OP_EQ: z = x == y; break;
        case OP_NE: z = x != y; break;
        case OP_LT: z = x < y; break;
        case OP_LE: z = x <= y; break;
        case OP_GT: z = x > y; break;
        case OP_GE: z = x >= y; break;
        default: tf_die("bad binary opcode %d", op);
        }
        *r = tf_int(z);
        return F_OK;
    }
real:;
    double x = tf_value_as_double(a), y = tf_value_as_double(b), z;
    switch (op) {
    case OP_ADD: z = x + y; break;
    case OP_SUB: z = x - y; break;
    case OP_MUL: z = x * y; break;
    case OP_DIV:
        if (y == 0)
            return F_DIVZERO;
        z = x / y;
        break;
    case OP_FLOORDIV:
        if (y == 0)
            return F_DIVZERO;
        z = floor(x / y);
        break;
    case OP_MOD:
        if (y == 0)
            return F_DIVZERO;
        z = fmod(x, y);
        if (z != 0 && ((z < 0) != (y < 0)))
            z += y;
        break;
    case OP_POW:
        if (x == 0 && y < 0)
            return F_DIVZERO;
        z = pow(x, y);
        break;
    case OP_EQ: *r = tf_int(x == y); return F_OK;
    case OP_NE: *r = tf_int(x != y); return F_OK;
    case OP_LT: *r = tf_int(x < y); return F_OK;
    case OP_LE: *r = tf_int(x <= y); return F_OK;
    case OP_GT: *r = tf_int(x > y); return F_OK;
    case OP_GE: *r = tf_int(x >= y); return F_OK;
    default: tf_die("bad binary opcode %d", op);
    }
    return real_result(z, x, y, r);
}

static ALWAYS_INLINE bool truthy(struct tf_value v)
{
    return v.is_float ? v.u.f != 0 : v.u.i != 0;
}

static ALWAYS_INLINE enum fail unary(int op, struct tf_value a, struct tf_value *r)
{
    switch (op) {
    case OP_NEG:
        if (a.is_float) {
            *r = tf_float(-a.u.f);
        } else {
            if (a.u.i == INT64_MIN)
                return F_OVERFLOW;
            *r = tf_int(-a.u.i);
        }
        return F_OK;
    case OP_NOT: *r = tf_int(!truthy(a)); return F_OK;
    case OP_BOOL: *r = tf_int(truthy(a)); return F_OK;
    default: tf_die("bad unary opcode %d", op);
    }
}

/* Function `fn` of args[0..argc) into *r, written only on success. */
static enum fail call(int fn, const struct tf_value *args, int argc, struct tf_value *r)
{
    struct tf_value a = args[0];
    double d = tf_value_as_double(a);
    int64_t i;
    switch (fn) {
    case FN_CEIL:
    case FN_FLOOR:
    case FN_ROUND:
    case FN_INT:
        if (!a.is_float) {
            *r = a;
            return F_OK;
        }
        d = fn == FN_CEIL ? ceil(d) : fn == FN_FLOOR ? floor(d) : fn == FN_ROUND ? round(d)
                                                                                : trunc(d);
        if (!double_to_int(d, &i))
            return F_RANGE;
        *r = tf_int(i);
        return F_OK;
    case FN_MIN:
    case FN_MAX: {
        bool any_float = false;
        for (int k = 0; k < argc; k++)
            any_float |= args[k].is_float;
        if (any_float) {
            double best = d;
            for (int k = 1; k < argc; k++) {
                double v = tf_value_as_double(args[k]);
                if (fn == FN_MIN ? v < best : v > best)
                    best = v;
            }
            *r = tf_float(best);
        } else {
            int64_t best = a.u.i;
            for (int k = 1; k < argc; k++)
                if (fn == FN_MIN ? args[k].u.i < best : args[k].u.i > best)
                    best = args[k].u.i;
            *r = tf_int(best);
        }
        return F_OK;
    }
    case FN_ABS:
        if (a.is_float) {
            *r = tf_float(fabs(d));
            return F_OK;
        }
        if (a.u.i == INT64_MIN)
            return F_OVERFLOW;
        *r = tf_int(a.u.i < 0 ? -a.u.i : a.u.i);
        return F_OK;
    case FN_LOG2:
        if (d <= 0)
            return F_DOMAIN;
        *r = tf_float(log2(d));
        return F_OK;
    case FN_SQRT:
        if (d < 0)
            return F_DOMAIN;
        *r = tf_float(sqrt(d));
        return F_OK;
    case FN_FLOAT:
        *r = tf_float(d);
        return F_OK;
    default: tf_die("bad function id %d", fn);
    }
}

/* ---- lexer ----------------------------------------------------------------- */

enum tok_type {
    T_END, T_ERROR, T_INT, T_FLOAT, T_NAME, T_STRING,
    T_LPAREN, T_RPAREN, T_COMMA, T_QUESTION, T_COLON,
    T_PLUS, T_MINUS, T_STAR, T_POW, T_SLASH, T_DSLASH, T_PERCENT,
    T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_AND, T_OR, T_NOT,
    T_NOT_WORD /* `not`: Python's precedence, below the comparisons (`!` is C's) */
};

struct token {
    enum tok_type type;
    int pos, len;        /* byte offset and length in the text */
    struct tf_value num; /* T_INT, T_FLOAT */
};

struct parser {
    const char *text;
    const struct tf_symtab *syms;
    struct tf_error *err;
    struct token *toks;
    int ntoks, i;
    char lex_msg[256]; /* message of the T_ERROR token, if any */
    struct instr *code;
    int ncode, cap;
    int depth, max_depth; /* evaluation stack after the last emitted instruction */
    int nest;
    int barrier; /* latest jump target: folding must not reach below it */
};

static bool is_ident_start(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_ident_char(char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Lex a number at text[pos]; fills *t or sets p->lex_msg and returns -1. */
static int lex_number(struct parser *p, int pos, struct token *t)
{
    const char *s = p->text;
    int e = pos;
    bool real = false;
    t->pos = pos;
    if (s[e] == '0' && (s[e + 1] == 'x' || s[e + 1] == 'X')) {
        e += 2;
        uint64_t v = 0;
        int digits = 0;
        for (int h; (h = hex_value(s[e])) >= 0; e++, digits++) {
            if (v > (uint64_t)INT64_MAX >> 4)
                v = UINT64_MAX; /* saturate; reported below */
            else
                v = v << 4 | (uint64_t)h;
        }
        if (digits == 0 || is_ident_char(s[e]) || s[e] == '.')
            goto invalid;
        if (v > (uint64_t)INT64_MAX) {
            snprintf(p->lex_msg, sizeof p->lex_msg,
                     "integer literal '%.*s' does not fit in a 64-bit integer", e - pos, s + pos);
            return -1;
        }
        t->type = T_INT;
        t->len = e - pos;
        t->num = tf_int((int64_t)v);
        return 0;
    }
    while (is_digit(s[e]))
        e++;
    if (s[e] == '.') {
        real = true;
        e++;
        while (is_digit(s[e]))
            e++;
    }
    if (s[e] == 'e' || s[e] == 'E') {
        real = true;
        e++;
        if (s[e] == '+' || s[e] == '-')
            e++;
        if (!is_digit(s[e]))
            goto invalid;
        while (is_digit(s[e]))
            e++;
    }
    if (is_ident_char(s[e]) || s[e] == '.')
        goto invalid;
    t->len = e - pos;
    if (real) {
        /* strtod obeys LC_NUMERIC; the language always means '.', whatever
         * locale the embedding program set. */
        char buf[EXPR_MAX_TEXT + 1];
        memcpy(buf, s + pos, (size_t)(e - pos));
        buf[e - pos] = '\0';
        locale_t c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
        if (c_locale == (locale_t)0)
            tf_die("cannot create the C locale");
        double d = strtod_l(buf, NULL, c_locale);
        freelocale(c_locale);
        if (!isfinite(d)) {
            snprintf(p->lex_msg, sizeof p->lex_msg, "number '%.40s' is too large for a double", buf);
            return -1;
        }
        t->type = T_FLOAT;
        t->num = tf_float(d);
        return 0;
    }
    int64_t v = 0;
    for (int k = pos; k < e; k++) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[k] - '0', &v)) {
            snprintf(p->lex_msg, sizeof p->lex_msg,
                     "integer literal '%.*s' does not fit in a 64-bit integer (max %" PRId64 ")",
                     e - pos, s + pos, INT64_MAX);
            return -1;
        }
    }
    t->type = T_INT;
    t->num = tf_int(v);
    return 0;
invalid:
    while (is_ident_char(s[e]) || s[e] == '.')
        e++;
    snprintf(p->lex_msg, sizeof p->lex_msg, "invalid number '%.*s'", e - pos > 40 ? 40 : e - pos,
             s + pos);
    return -1;
}

/* Tokenize the whole text. A lexical error becomes a final T_ERROR token so
 * that an earlier syntax error is still reported first. */
static void lex(struct parser *p)
{
    const char *s = p->text;
    int n = 0, pos = 0;
    for (;;) {
        while (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r')
            pos++;
        struct token *t = &p->toks[n++];
        memset(t, 0, sizeof *t);
        t->pos = pos;
        t->len = 1;
        char c = s[pos], c1 = c ? s[pos + 1] : '\0';
        if (c == '\0') {
            t->type = T_END;
            t->len = 0;
            break;
        }
        if (is_digit(c) || (c == '.' && is_digit(c1))) {
            if (lex_number(p, pos, t) != 0) {
                t->type = T_ERROR;
                break;
            }
            pos += t->len;
            continue;
        }
        if (is_ident_start(c)) {
            int e = pos;
            while (is_ident_char(s[e]))
                e++;
            t->type = T_NAME;
            t->len = e - pos;
            /* and, or, not: the words Python restrictions are written with */
            if (t->len == 3 && memcmp(s + pos, "and", 3) == 0)
                t->type = T_AND;
            else if (t->len == 2 && memcmp(s + pos, "or", 2) == 0)
                t->type = T_OR;
            else if (t->len == 3 && memcmp(s + pos, "not", 3) == 0)
                t->type = T_NOT_WORD;
            pos = e;
            continue;
        }
        if (c == '"' || c == '\'') {
            const char *close = strchr(s + pos + 1, c);
            if (close == NULL) {
                snprintf(p->lex_msg, sizeof p->lex_msg,
                         "unterminated string: no closing %c for the %c at column %d", c, c,
                         pos + 1);
                t->type = T_ERROR;
                break;
            }
            t->type = T_STRING;
            t->len = (int)(close - (s + pos)) + 1;
            pos += t->len;
            continue;
        }
        int two = 0;
        switch (c) {
        case '(': t->type = T_LPAREN; break;
        case ')': t->type = T_RPAREN; break;
        case ',': t->type = T_COMMA; break;
        case '?': t->type = T_QUESTION; break;
        case ':': t->type = T_COLON; break;
        case '+': t->type = T_PLUS; break;
        case '-': t->type = T_MINUS; break;
        case '%': t->type = T_PERCENT; break;
        case '*': two = c1 == '*'; t->type = two ? T_POW : T_STAR; break;
        case '/': two = c1 == '/'; t->type = two ? T_DSLASH : T_SLASH; break;
        case '<': two = c1 == '='; t->type = two ? T_LE : T_LT; break;
        case '>': two = c1 == '='; t->type = two ? T_GE : T_GT; break;
        case '!': two = c1 == '='; t->type = two ? T_NE : T_NOT; break;
        case '=': two = c1 == '='; t->type = T_EQ; break;
        case '&': two = c1 == '&'; t->type = T_AND; break;
        case '|': two = c1 == '|'; t->type = T_OR; break;
        default: t->type = T_ERROR; break;
        }
        if (t->type != T_ERROR && !two && (c == '=' || c == '&' || c == '|')) {
            snprintf(p->lex_msg, sizeof p->lex_msg, "unexpected '%c' (did you mean '%c%c'?)", c,
                     c, c);
            t->type = T_ERROR;
        }
        /* Operators of other languages, named with what to write instead. */
        const char *other = NULL;
        if ((c == '=' || c == '!') && c1 == '=' && s[pos + 2] == '=')
            other = c == '=' ? "'===' is not an operator here: write '=='"
                             : "'!==' is not an operator here: write '!='";
        else if (c == '<' && c1 == '>')
            other = "'<>' is not an operator here: write '!='";
        else if ((c == '<' && c1 == '<') || (c == '>' && c1 == '>'))
            other = c == '<' ? "shifts are not supported: write X * 2 ** n instead of X << n"
                             : "shifts are not supported: write X // 2 ** n instead of X >> n";
        else if (c == '^')
            other = "'^' is not supported: write '**' for a power (and '!=' for the exclusive "
                    "or of two truth values)";
        else if (c == '~')
            other = "'~' (bitwise not) is not supported: write 'not X' or '!X' for a truth value";
        if (other) {
            snprintf(p->lex_msg, sizeof p->lex_msg, "%s", other);
            t->type = T_ERROR;
        }
        if (t->type == T_ERROR) {
            if (p->lex_msg[0] == '\0') {
                if (c > ' ' && c < 127)
                    snprintf(p->lex_msg, sizeof p->lex_msg, "unexpected character '%c'", c);
                else
                    snprintf(p->lex_msg, sizeof p->lex_msg, "unexpected byte 0x%02X",
                             (unsigned)(unsigned char)c);
            }
            break;
        }
        t->len = two ? 2 : 1;
        pos += t->len;
    }
    p->ntoks = n;
}

/* ---- parser helpers -------------------------------------------------------- */

static const struct token *peek(const struct parser *p, int ahead)
{
    int k = p->i + ahead;
    return &p->toks[k < p->ntoks ? k : p->ntoks - 1];
}

static const struct token *cur(const struct parser *p) { return peek(p, 0); }

static int col_of(const struct token *t) { return t->pos + 1; }

static bool tok_is(const struct token *t, const struct parser *p, const char *word)
{
    return t->type == T_NAME && (size_t)t->len == strlen(word) &&
           memcmp(p->text + t->pos, word, (size_t)t->len) == 0;
}

/* "end of expression", "name 'N'", "number 12", "'*'"... for messages. */
static const char *tok_describe(const struct parser *p, const struct token *t, char *buf,
                                size_t cap)
{
    int len = t->len > 40 ? 40 : t->len;
    const char *s = p->text + t->pos;
    switch (t->type) {
    case T_END: snprintf(buf, cap, "end of expression"); break;
    case T_NAME: snprintf(buf, cap, "name '%.*s'", len, s); break;
    case T_INT:
    case T_FLOAT: snprintf(buf, cap, "number %.*s", len, s); break;
    case T_STRING: snprintf(buf, cap, "string %.*s", len, s); break;
    default: snprintf(buf, cap, "'%.*s'", len, s); break;
    }
    return buf;
}

/* Words of Python that this language spells otherwise, explained where one
 * stops the parse ("found name 'is'..."): "" for any other token. */
static const char *word_hint(const struct parser *p, const struct token *t)
{
    if (tok_is(t, p, "is"))
        return " ('is' is Python's identity test: compare numbers with '==', and write '!=' "
               "for 'is not')";
    if (tok_is(t, p, "in"))
        return " (membership 'in' is not supported: write X == 1 || X == 2 for X in (1, 2))";
    if (tok_is(t, p, "if") || tok_is(t, p, "else"))
        return " (Python's 'A if COND else B' is written 'COND ? A : B' here)";
    if (t->type == T_NOT_WORD && peek(p, 1)->type == T_NAME && tok_is(peek(p, 1), p, "in"))
        return " ('not in' is not supported: write X != 1 && X != 2 for X not in (1, 2))";
    return "";
}

/* Record a compile error at token `t` (printf-style); returns -1. */
static int fail_at(struct parser *p, enum tf_error_code code, const struct token *t,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail_at(struct parser *p, enum tf_error_code code, const struct token *t,
                   const char *fmt, ...)
{
    char msg[sizeof p->err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tf_error_at(p->err, code, NULL, 0, col_of(t), "%s", msg);
}

/* The parser reached a T_ERROR token: report the lexer's message. */
static int fail_lex(struct parser *p, const struct token *t)
{
    return fail_at(p, TF_ERR_SYNTAX, t, "%s", p->lex_msg);
}

static int stack_effect(const struct instr *in)
{
    switch (in->op) {
    case OP_CONST:
    case OP_LOAD: return 1;
    case OP_NEG:
    case OP_NOT:
    case OP_BOOL:
    case OP_JUMP:
    case OP_END: return 0;
    case OP_CALL: return 1 - in->a;
    default: return -1; /* binary operators, conditional jumps (fall-through path) */
    }
}

static int emit(struct parser *p, int op, int fn, int a, struct tf_value k, const struct token *t)
{
    if (p->ncode == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 32;
        p->code = tf_xrealloc(p->code, (size_t)p->cap * sizeof *p->code);
    }
    struct instr *in = &p->code[p->ncode];
    *in = (struct instr){.op = (uint8_t)op, .fn = (uint8_t)fn, .col = (uint16_t)col_of(t),
                         .a = a, .k = k};
    p->depth += stack_effect(in);
    if (p->depth > p->max_depth)
        p->max_depth = p->depth;
    if (p->max_depth > EXPR_MAX_STACK)
        return fail_at(p, TF_ERR_SYNTAX, t,
                       "expression too deep: it needs more than %d values on the evaluation "
                       "stack (too many nested operands or arguments); simplify it",
                       EXPR_MAX_STACK);
    return p->ncode++;
}

/* The last `n` instructions are constants no jump lands between: foldable. */
static bool tail_is_const(const struct parser *p, int n)
{
    if (p->ncode - n < p->barrier)
        return false;
    for (int k = p->ncode - n; k < p->ncode; k++)
        if (p->code[k].op != OP_CONST)
            return false;
    return true;
}

/* Replace the last `n` constants by `v` (the stack high-water mark is kept:
 * it was really needed before folding and over-estimating is harmless). */
static void replace_tail(struct parser *p, int n, struct tf_value v)
{
    p->ncode -= n - 1;
    p->depth -= n - 1;
    p->code[p->ncode - 1].k = v;
}

static int emit_unary(struct parser *p, int op, const struct token *t)
{
    struct tf_value r;
    if (tail_is_const(p, 1) && unary(op, p->code[p->ncode - 1].k, &r) == F_OK) {
        replace_tail(p, 1, r);
        return 0;
    }
    return emit(p, op, 0, 0, tf_int(0), t) < 0 ? -1 : 0;
}

static int emit_binary(struct parser *p, int op, const struct token *t)
{
    struct tf_value r;
    if (tail_is_const(p, 2) &&
        binary(op, p->code[p->ncode - 2].k, p->code[p->ncode - 1].k, &r) == F_OK) {
        replace_tail(p, 2, r);
        return 0;
    }
    return emit(p, op, 0, 0, tf_int(0), t) < 0 ? -1 : 0;
}

static int emit_call(struct parser *p, int fn, int argc, const struct token *t)
{
    struct tf_value args[EXPR_MAX_STACK], r;
    if (argc <= EXPR_MAX_STACK && tail_is_const(p, argc)) {
        for (int k = 0; k < argc; k++)
            args[k] = p->code[p->ncode - argc + k].k;
        if (call(fn, args, argc, &r) == F_OK) {
            replace_tail(p, argc, r);
            return 0;
        }
    }
    return emit(p, OP_CALL, fn, argc, tf_int(0), t) < 0 ? -1 : 0;
}

/* Emit a forward jump chained into the patch list *head (-1: empty). */
static int emit_jump(struct parser *p, int op, int *head, const struct token *t)
{
    int pc = emit(p, op, 0, *head, tf_int(0), t);
    if (pc < 0)
        return -1;
    *head = pc;
    return 0;
}

/* Point every jump of the list at the next instruction. */
static void place_label(struct parser *p, int head)
{
    while (head >= 0) {
        int next = p->code[head].a;
        p->code[head].a = p->ncode;
        head = next;
    }
    p->barrier = p->ncode;
}

static const struct tf_symbol *find_symbol(const struct parser *p, const struct token *t)
{
    if (p->syms == NULL)
        return NULL;
    for (int k = 0; k < p->syms->count; k++) {
        const struct tf_symbol *s = &p->syms->symbols[k];
        if ((size_t)t->len == strlen(s->name) &&
            memcmp(s->name, p->text + t->pos, (size_t)t->len) == 0)
            return s;
    }
    return NULL;
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

/* Case-insensitive edit distance, capped at 64-byte names (then "far"). */
static int edit_distance(const char *a, int la, const char *b, int lb)
{
    if (la > 64 || lb > 64)
        return 1000;
    int row[65];
    for (int j = 0; j <= lb; j++)
        row[j] = j;
    for (int i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (lower(a[i - 1]) != lower(b[j - 1]));
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static int undefined_name(struct parser *p, const struct token *t)
{
    const char *name = p->text + t->pos;
    char known[400] = "", hint[200] = "";
    size_t used = 0;
    int best = 1000;
    const char *best_name = NULL;
    int count = p->syms ? p->syms->count : 0;
    for (int k = 0; k < count; k++) {
        const char *s = p->syms->symbols[k].name;
        int d = edit_distance(name, t->len, s, (int)strlen(s));
        if (d < best) {
            best = d;
            best_name = s;
        }
        if (k < 8 && used < sizeof known)
            used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", k ? ", " : "", s);
    }
    if (count > 8 && used < sizeof known)
        snprintf(known + used, sizeof known - used, ", ...");
    if (best_name && best <= (t->len >= 6 ? 2 : 1))
        snprintf(hint, sizeof hint, "did you mean '%s'? ", best_name);
    for (int f = 0; f < FN_COUNT; f++)
        if (tok_is(t, p, functions[f].name))
            snprintf(hint, sizeof hint, "'%s' is a function: call it as %s(...); ",
                     functions[f].name, functions[f].name);
    if (tok_is(t, p, "True") || tok_is(t, p, "False") || tok_is(t, p, "true") ||
        tok_is(t, p, "false"))
        snprintf(hint, sizeof hint, "truth values are numbers here: write 1 for true, 0 for "
                                    "false; ");
    if (count == 0)
        return fail_at(p, TF_ERR_SCHEMA, t, "undefined name '%.*s' (%sno names are defined here)",
                       t->len, name, hint);
    return fail_at(p, TF_ERR_SCHEMA, t, "undefined name '%.*s' (%sknown: %s)", t->len, name, hint,
                   known);
}

/* A string literal where the grammar does not allow one. */
static int string_misuse(struct parser *p, const struct token *t)
{
    const struct token *other = NULL;
    if (p->i >= 2 && (p->toks[p->i - 1].type == T_EQ || p->toks[p->i - 1].type == T_NE))
        other = &p->toks[p->i - 2];
    else if ((peek(p, 1)->type == T_EQ || peek(p, 1)->type == T_NE))
        other = peek(p, 2);
    if (other && other->type == T_NAME) {
        const struct tf_symbol *s = find_symbol(p, other);
        if (s && s->enum_values == NULL)
            return fail_at(p, TF_ERR_SCHEMA, t,
                           "'%s' is not an enum parameter, so it cannot be compared with the "
                           "string %.*s",
                           s->name, t->len > 40 ? 40 : t->len, p->text + t->pos);
    }
    return fail_at(p, TF_ERR_SCHEMA, t,
                   "string %.*s is not allowed here: a string may only be compared with == or "
                   "!= directly to an enum parameter (e.g. LOOP == \"ikj\")",
                   t->len > 40 ? 40 : t->len, p->text + t->pos);
}

/* The index of string token `t` among the values of enum symbol `s`. */
static int enum_index(struct parser *p, const struct tf_symbol *s, const struct token *t)
{
    const char *str = p->text + t->pos + 1;
    int len = t->len - 2;
    for (int k = 0; k < s->enum_count; k++)
        if ((size_t)len == strlen(s->enum_values[k]) &&
            memcmp(s->enum_values[k], str, (size_t)len) == 0)
            return k;
    char allowed[400] = "";
    size_t used = 0;
    for (int k = 0; k < s->enum_count && used < sizeof allowed; k++)
        used += (size_t)snprintf(allowed + used, sizeof allowed - used, "%s%s", k ? ", " : "",
                                 s->enum_values[k]);
    return fail_at(p, TF_ERR_SCHEMA, t, "'%.*s' is not a value of '%s' (allowed: %s)",
                   len > 60 ? 60 : len, str, s->name, allowed);
}

static bool is_arith(enum tok_type t)
{
    return t == T_PLUS || t == T_MINUS || t == T_STAR || t == T_SLASH || t == T_DSLASH ||
           t == T_PERCENT || t == T_POW || t == T_LPAREN;
}

static bool is_cmp(enum tok_type t)
{
    return t == T_EQ || t == T_NE || t == T_LT || t == T_LE || t == T_GT || t == T_GE;
}

static int cmp_op(enum tok_type t)
{
    switch (t) {
    case T_EQ: return OP_EQ;
    case T_NE: return OP_NE;
    case T_LT: return OP_LT;
    case T_LE: return OP_LE;
    case T_GT: return OP_GT;
    default: return OP_GE;
    }
}

static const struct tf_symbol *enum_symbol(const struct parser *p, const struct token *t)
{
    if (t->type != T_NAME)
        return NULL;
    const struct tf_symbol *s = find_symbol(p, t);
    return s && s->enum_values ? s : NULL;
}

static int nest_enter(struct parser *p, const struct token *t)
{
    if (++p->nest > EXPR_MAX_NEST)
        return fail_at(p, TF_ERR_SYNTAX, t,
                       "expression nested too deeply (more than %d levels of parentheses, "
                       "unary operators, calls and ?:)",
                       EXPR_MAX_NEST);
    return 0;
}

/* ---- grammar --------------------------------------------------------------- */

static int parse_cond(struct parser *p);

static int parse_call(struct parser *p)
{
    const struct token *name = cur(p);
    int fn = -1;
    for (int f = 0; f < FN_COUNT; f++)
        if (tok_is(name, p, functions[f].name))
            fn = f;
    if (fn < 0) {
        char known[200] = "";
        size_t used = 0;
        for (int f = 0; f < FN_COUNT; f++)
            used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", f ? ", " : "",
                                     functions[f].name);
        return fail_at(p, TF_ERR_SCHEMA, name, "unknown function '%.*s' (known: %s)%s",
                       name->len > 60 ? 60 : name->len, p->text + name->pos, known,
                       tok_is(name, p, "pow") ? "; write a ** b for pow(a, b)" : "");
    }
    const struct token *open = peek(p, 1);
    p->i += 2;
    int argc = 0;
    if (cur(p)->type != T_RPAREN) {
        for (;;) {
            if (parse_cond(p))
                return -1;
            argc++;
            const struct token *t = cur(p);
            if (t->type == T_COMMA) {
                p->i++;
                continue;
            }
            if (t->type == T_RPAREN)
                break;
            if (t->type == T_ERROR)
                return fail_lex(p, t);
            char what[64];
            return fail_at(p, TF_ERR_SYNTAX, t,
                           "expected ',' or ')' in the call to '%s' opened at column %d, "
                           "found %s%s",
                           functions[fn].name, col_of(open), tok_describe(p, t, what, sizeof what),
                           word_hint(p, t));
        }
    }
    p->i++; /* ')' */
    int lo = functions[fn].min_args, hi = functions[fn].max_args;
    if (argc < lo || (hi >= 0 && argc > hi)) {
        if (hi < 0)
            return fail_at(p, TF_ERR_SCHEMA, name,
                           "function '%s' takes at least %d arguments, got %d",
                           functions[fn].name, lo, argc);
        return fail_at(p, TF_ERR_SCHEMA, name, "function '%s' takes %d argument%s, got %d",
                       functions[fn].name, lo, lo == 1 ? "" : "s", argc);
    }
    return emit_call(p, fn, argc, name);
}

static int parse_atom(struct parser *p)
{
    const struct token *t = cur(p);
    char what[64];
    switch (t->type) {
    case T_INT:
    case T_FLOAT:
        p->i++;
        return emit(p, OP_CONST, 0, 0, t->num, t) < 0 ? -1 : 0;
    case T_NAME: {
        if (peek(p, 1)->type == T_LPAREN)
            return parse_call(p);
        const struct tf_symbol *s = find_symbol(p, t);
        if (s == NULL)
            return undefined_name(p, t);
        if (s->slot < 0)
            tf_die("symbol '%s' has negative slot %d", s->name, s->slot);
        p->i++;
        return emit(p, OP_LOAD, 0, s->slot, tf_int(0), t) < 0 ? -1 : 0;
    }
    case T_LPAREN: {
        p->i++;
        if (parse_cond(p))
            return -1;
        const struct token *close = cur(p);
        if (close->type == T_RPAREN) {
            p->i++;
            return 0;
        }
        if (close->type == T_ERROR)
            return fail_lex(p, close);
        return fail_at(p, TF_ERR_SYNTAX, close,
                       "expected ')' to close '(' at column %d, found %s%s", col_of(t),
                       tok_describe(p, close, what, sizeof what), word_hint(p, close));
    }
    case T_STRING: return string_misuse(p, t);
    case T_ERROR: return fail_lex(p, t);
    case T_NOT_WORD:
        /* as in Python, `not` negates a whole comparison: 1 + not A, A == not B
         * and -not A are errors there too */
        return fail_at(p, TF_ERR_SYNTAX, t,
                       "'not' applies to a whole comparison (as in Python), so it cannot be "
                       "an operand here: write (not X), or !X for C's unary negation");
    default:
        return fail_at(p, TF_ERR_SYNTAX, t,
                       "unexpected %s: expected a number, a name, a function call or '('",
                       tok_describe(p, t, what, sizeof what));
    }
}

static int parse_unary(struct parser *p);

static int parse_power(struct parser *p)
{
    if (parse_atom(p))
        return -1;
    const struct token *t = cur(p);
    if (t->type != T_POW)
        return 0;
    p->i++;
    if (nest_enter(p, t) || parse_unary(p))
        return -1;
    p->nest--;
    return emit_binary(p, OP_POW, t);
}

static int parse_unary(struct parser *p)
{
    const struct token *t = cur(p);
    if (t->type != T_MINUS && t->type != T_PLUS && t->type != T_NOT)
        return parse_power(p);
    p->i++;
    if (nest_enter(p, t) || parse_unary(p))
        return -1;
    p->nest--;
    if (t->type == T_PLUS)
        return 0; /* identity, also on ints: no conversion */
    return emit_unary(p, t->type == T_MINUS ? OP_NEG : OP_NOT, t);
}

static int parse_prod(struct parser *p)
{
    if (parse_unary(p))
        return -1;
    for (;;) {
        const struct token *t = cur(p);
        int op;
        switch (t->type) {
        case T_STAR: op = OP_MUL; break;
        case T_SLASH: op = OP_DIV; break;
        case T_DSLASH: op = OP_FLOORDIV; break;
        case T_PERCENT: op = OP_MOD; break;
        default: return 0;
        }
        p->i++;
        if (parse_unary(p) || emit_binary(p, op, t))
            return -1;
    }
}

static int parse_sum(struct parser *p)
{
    if (parse_prod(p))
        return -1;
    for (;;) {
        const struct token *t = cur(p);
        if (t->type != T_PLUS && t->type != T_MINUS)
            return 0;
        p->i++;
        if (parse_prod(p) || emit_binary(p, t->type == T_PLUS ? OP_ADD : OP_SUB, t))
            return -1;
    }
}

/* `ENUM == "value"` or `"value" == ENUM`, recognised by lookahead because
 * the string must be the whole operand: returns 1 if handled, 0 if not, -1. */
static int parse_enum_compare(struct parser *p)
{
    const struct token *t0 = cur(p), *t1, *t2, *t3;
    if (t0->type != T_NAME && t0->type != T_STRING)
        return 0;
    t1 = peek(p, 1);
    if (t1->type != T_EQ && t1->type != T_NE)
        return 0;
    t2 = peek(p, 2);
    t3 = t2->type == T_END ? t2 : peek(p, 3);
    const struct tf_symbol *s;
    const struct token *str, *name;
    if (t0->type == T_NAME && t2->type == T_STRING && (s = enum_symbol(p, t0)) != NULL) {
        name = t0;
        str = t2;
        if (is_arith(t3->type)) { /* ENUM == "x" + 1: the string is an operand of '+' */
            p->i += 2;
            return string_misuse(p, str);
        }
    } else if (t0->type == T_STRING && (s = enum_symbol(p, t2)) != NULL &&
               !is_arith(t3->type)) {
        name = t2;
        str = t0;
    } else {
        return 0;
    }
    int idx = enum_index(p, s, str);
    if (idx < 0)
        return -1;
    if (name == t0) {
        if (emit(p, OP_LOAD, 0, s->slot, tf_int(0), name) < 0 ||
            emit(p, OP_CONST, 0, 0, tf_int(idx), str) < 0)
            return -1;
    } else {
        if (emit(p, OP_CONST, 0, 0, tf_int(idx), str) < 0 ||
            emit(p, OP_LOAD, 0, s->slot, tf_int(0), name) < 0)
            return -1;
    }
    p->i += 3;
    return emit_binary(p, cmp_op(t1->type), t1) < 0 ? -1 : 1;
}

/* One link of a comparison chain: `a < b` with `b < ...` to come. Two
 * constants that compare true fold into the middle one; anything else is an
 * OP_CHAIN chained into the patch list *head, jumping to the chain's end with
 * 0 when the link is false. */
static int emit_chain(struct parser *p, int op, int *head, const struct token *t)
{
    struct tf_value r;
    if (tail_is_const(p, 2) &&
        binary(op, p->code[p->ncode - 2].k, p->code[p->ncode - 1].k, &r) == F_OK && truthy(r)) {
        replace_tail(p, 2, p->code[p->ncode - 1].k);
        return 0;
    }
    int pc = emit(p, OP_CHAIN, op, *head, tf_int(0), t);
    if (pc < 0)
        return -1;
    *head = pc;
    return 0;
}

/* cmp := sum (CMP sum)*. A chain means what it means in Python (and in Kernel
 * Tuner's restrictions): `a < b <= c` is `a < b && b <= c` with b evaluated
 * once, stopping at the first false link. */
static int parse_cmp(struct parser *p)
{
    int handled = parse_enum_compare(p);
    if (handled < 0)
        return -1;
    if (handled) {
        const struct token *t = cur(p);
        if (is_cmp(t->type))
            return fail_at(p, TF_ERR_SYNTAX, t,
                           "a comparison with an enum string does not chain: write "
                           "'LOOP == \"ikj\" && ...' instead");
        return 0;
    }
    if (parse_sum(p))
        return -1;
    const struct token *t = cur(p);
    if (!is_cmp(t->type))
        return 0;
    int patches = -1;
    for (;;) {
        p->i++;
        if (parse_sum(p))
            return -1;
        const struct token *next = cur(p);
        if (!is_cmp(next->type))
            break;
        if (emit_chain(p, cmp_op(t->type), &patches, t))
            return -1;
        t = next;
    }
    if (emit_binary(p, cmp_op(t->type), t))
        return -1;
    if (patches >= 0)
        place_label(p, patches);
    return 0;
}

/* not := 'not' not | cmp: Python's `not`, looser than the comparisons, so
 * `not A == B` is `not (A == B)`; C's `!` stays a unary operator. */
static int parse_not(struct parser *p)
{
    const struct token *t = cur(p);
    if (t->type != T_NOT_WORD)
        return parse_cmp(p);
    p->i++;
    if (nest_enter(p, t) || parse_not(p))
        return -1;
    p->nest--;
    return emit_unary(p, OP_NOT, t);
}

/* and := not ('&&' not)*  and  or := and ('||' and)*, sharing the shape
 * (`and` and `or` lex as '&&' and '||'). */
static int parse_logic(struct parser *p, bool is_or)
{
    if (is_or ? parse_logic(p, false) : parse_not(p))
        return -1;
    enum tok_type tt = is_or ? T_OR : T_AND;
    if (cur(p)->type != tt)
        return 0;
    int patches = -1;
    const struct token *t = NULL;
    while (cur(p)->type == tt) {
        t = cur(p);
        if (emit_jump(p, is_or ? OP_OR_JUMP : OP_AND_JUMP, &patches, t))
            return -1;
        p->i++;
        if (is_or ? parse_logic(p, false) : parse_not(p))
            return -1;
    }
    if (emit_unary(p, OP_BOOL, t))
        return -1;
    place_label(p, patches);
    return 0;
}

static int parse_cond(struct parser *p)
{
    if (nest_enter(p, cur(p)) || parse_logic(p, true))
        return -1;
    const struct token *q = cur(p);
    if (q->type == T_QUESTION) {
        int to_else = -1, to_end = -1;
        p->i++;
        if (emit_jump(p, OP_JUMP_FALSE, &to_else, q) || parse_cond(p) ||
            emit_jump(p, OP_JUMP, &to_end, q))
            return -1;
        const struct token *colon = cur(p);
        if (colon->type != T_COLON) {
            char what[64];
            if (colon->type == T_ERROR)
                return fail_lex(p, colon);
            return fail_at(p, TF_ERR_SYNTAX, colon,
                           "expected ':' for the '?' at column %d, found %s%s", col_of(q),
                           tok_describe(p, colon, what, sizeof what), word_hint(p, colon));
        }
        p->i++;
        place_label(p, to_else);
        p->depth--; /* the else branch starts without the then branch's value */
        if (parse_cond(p))
            return -1;
        place_label(p, to_end);
    }
    p->nest--;
    return 0;
}

/* ---- public API ------------------------------------------------------------ */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

struct tf_expr *tf_expr_compile(const char *text, const struct tf_symtab *syms,
                                struct tf_error *err)
{
    if (text == NULL)
        tf_die("tf_expr_compile: NULL text");
    struct tf_expr *e = NULL;
    struct parser p = {.text = text, .syms = syms, .err = err};
    size_t len = strlen(text);
    if (len > EXPR_MAX_TEXT) {
        tf_error_at(err, TF_ERR_SYNTAX, NULL, 0, EXPR_MAX_TEXT + 1,
                    "expression too long: %zu characters, the limit is %d", len, EXPR_MAX_TEXT);
        goto fail;
    }
    p.toks = tf_xcalloc(len + 2, sizeof *p.toks); /* at most one token per byte, plus END */
    lex(&p);
    if (parse_cond(&p))
        goto fail;
    const struct token *t = cur(&p);
    if (t->type == T_ERROR) {
        fail_lex(&p, t);
        goto fail;
    }
    if (t->type != T_END) {
        char what[64];
        const char *hint = word_hint(&p, t);
        fail_at(&p, TF_ERR_SYNTAX, t, "unexpected %s after a complete expression%s",
                tok_describe(&p, t, what, sizeof what), hint[0] ? hint : " (missing operator?)");
        goto fail;
    }
    if (emit(&p, OP_END, 0, 0, tf_int(0), t) < 0)
        goto fail;
    if (p.depth != 1)
        tf_die("expression '%s' leaves %d values on the stack", text, p.depth);

    e = tf_xcalloc(1, sizeof *e);
    e->text = tf_xstrdup(text);
    e->code = tf_xrealloc(p.code, (size_t)p.ncode * sizeof *p.code);
    p.code = NULL;
    e->ncode = p.ncode;
    e->max_stack = p.max_depth;
    e->slots = tf_xmalloc((size_t)e->ncode * sizeof *e->slots);
    for (int k = 0; k < e->ncode; k++)
        if (e->code[k].op == OP_LOAD)
            e->slots[e->nslots++] = e->code[k].a;
    qsort(e->slots, (size_t)e->nslots, sizeof *e->slots, cmp_int);
    int uniq = 0;
    for (int k = 0; k < e->nslots; k++)
        if (uniq == 0 || e->slots[uniq - 1] != e->slots[k])
            e->slots[uniq++] = e->slots[k];
    e->nslots = uniq;
    free(p.toks);
    return e;
fail:
    free(p.toks);
    free(p.code);
    return NULL;
}

void tf_expr_destroy(struct tf_expr *e)
{
    if (e == NULL)
        return;
    free(e->text);
    free(e->code);
    free(e->slots);
    free(e);
}

static void format_value(struct tf_value v, char *buf, size_t cap)
{
    if (!v.is_float) {
        snprintf(buf, cap, "%" PRId64, v.u.i);
        return;
    }
    /* The shortest of 15 or 17 digits that reads back exactly: 2.5e+300, not
     * 2.5000000000000001e+300. */
    snprintf(buf, cap, "%.15g", v.u.f);
    if (strtod(buf, NULL) != v.u.f)
        snprintf(buf, cap, "%.17g", v.u.f);
    if (strspn(buf, "-0123456789") == strlen(buf))
        snprintf(buf + strlen(buf), cap - strlen(buf), ".0"); /* show it is a float */
}

static const char *op_symbol(int op)
{
    static const char *const names[] = {
        [OP_NEG] = "-",   [OP_NOT] = "!",   [OP_ADD] = "+",  [OP_SUB] = "-",
        [OP_MUL] = "*",   [OP_DIV] = "/",   [OP_FLOORDIV] = "//", [OP_MOD] = "%",
        [OP_POW] = "**",
    };
    return op < (int)(sizeof names / sizeof names[0]) && names[op] ? names[op] : "?";
}

/* Build the TF_ERR_EVAL message for instruction `in` failing with `f` on
 * operands args[0..nargs). Only snprintf: no allocation on this path either. */
static int eval_fail(const struct tf_expr *e, const struct instr *in, enum fail f,
                     const struct tf_value *args, int nargs, struct tf_error *err)
{
    char what[256], v0[40], v1[40];
    size_t used = 0;
    if (in->op == OP_CALL) {
        used += (size_t)snprintf(what, sizeof what, "%s(", functions[in->fn].name);
        for (int k = 0; k < nargs && used < sizeof what; k++) {
            format_value(args[k], v0, sizeof v0);
            used += (size_t)snprintf(what + used, sizeof what - used, "%s%s", k ? ", " : "", v0);
        }
        if (used < sizeof what)
            snprintf(what + used, sizeof what - used, ")");
    } else if (nargs == 1) {
        format_value(args[0], v0, sizeof v0);
        snprintf(what, sizeof what, "%s(%s)", op_symbol(in->op), v0);
    } else {
        format_value(args[0], v0, sizeof v0);
        format_value(args[1], v1, sizeof v1);
        bool p0 = v0[0] == '-', p1 = v1[0] == '-'; /* (-8) ** 0.5, not -8 ** 0.5 */
        snprintf(what, sizeof what, "%s%s%s %s %s%s%s", p0 ? "(" : "", v0, p0 ? ")" : "",
                 op_symbol(in->op), p1 ? "(" : "", v1, p1 ? ")" : "");
    }
    const char *kind;
    switch (f) {
    case F_DIVZERO: kind = "division by zero"; break;
    case F_OVERFLOW: kind = "integer overflow"; break;
    case F_FLOAT_OVERFLOW: kind = "floating-point overflow"; break;
    case F_RANGE: kind = "result does not fit in a 64-bit integer"; break;
    default:
        kind = in->op == OP_CALL && in->fn == FN_LOG2   ? "log2 of a non-positive number"
               : in->op == OP_CALL && in->fn == FN_SQRT ? "square root of a negative number"
                                                        : "result is not a real number";
        break;
    }
    size_t tlen = strlen(e->text);
    return tf_error_set(err, TF_ERR_EVAL, "%s in '%.*s%s' at column %d: %s", kind,
                        EXPR_TEXT_IN_MSG, e->text, tlen > EXPR_TEXT_IN_MSG ? "..." : "",
                        (int)in->col, what);
}

int tf_expr_eval(const struct tf_expr *e, const struct tf_value *slots, struct tf_value *out,
                 struct tf_error *err)
{
    struct tf_value st[EXPR_MAX_STACK];
    struct tf_value *sp = st; /* next free */
    const struct instr *code = e->code, *in = code;
    enum fail f;
    for (;; in++) {
        switch (in->op) {
        case OP_CONST: *sp++ = in->k; break;
        case OP_LOAD: *sp++ = slots[in->a]; break;
#define UNARY(OP)                                                                                 \
    case OP:                                                                                      \
        if ((f = unary(OP, sp[-1], &sp[-1])) != F_OK)                                             \
            return eval_fail(e, in, f, sp - 1, 1, err);                                           \
        break;
        UNARY(OP_NEG)
        UNARY(OP_NOT)
        UNARY(OP_BOOL)
#undef UNARY
#define BINARY(OP)                                                                                \
    case OP:                                                                                      \
        if ((f = binary(OP, sp[-2], sp[-1], &sp[-2])) != F_OK)                                    \
            return eval_fail(e, in, f, sp - 2, 2, err);                                           \
        sp--;                                                                                     \
        break;
        BINARY(OP_ADD)
        BINARY(OP_SUB)
        BINARY(OP_MUL)
        BINARY(OP_DIV)
        BINARY(OP_FLOORDIV)
        BINARY(OP_MOD)
        BINARY(OP_POW)
        BINARY(OP_EQ)
        BINARY(OP_NE)
        BINARY(OP_LT)
        BINARY(OP_LE)
        BINARY(OP_GT)
        BINARY(OP_GE)
#undef BINARY
        case OP_CALL:
            if ((f = call(in->fn, sp - in->a, in->a, &sp[-in->a])) != F_OK)
                return eval_fail(e, in, f, sp - in->a, in->a, err);
            sp -= in->a - 1;
            break;
        case OP_JUMP: in = code + in->a - 1; break;
        case OP_JUMP_FALSE:
            if (!truthy(*--sp))
                in = code + in->a - 1;
            break;
        case OP_AND_JUMP:
            if (!truthy(sp[-1])) {
                sp[-1] = tf_int(0);
                in = code + in->a - 1;
            } else {
                sp--;
            }
            break;
        case OP_OR_JUMP:
            if (truthy(sp[-1])) {
                sp[-1] = tf_int(1);
                in = code + in->a - 1;
            } else {
                sp--;
            }
            break;
        case OP_CHAIN: {
            struct tf_value r;
            if ((f = binary(in->fn, sp[-2], sp[-1], &r)) != F_OK)
                return eval_fail(e, in, f, sp - 2, 2, err);
            sp--;
            if (truthy(r)) {
                sp[-1] = sp[0]; /* the middle operand, for the next link */
            } else {
                sp[-1] = tf_int(0);
                in = code + in->a - 1;
            }
            break;
        }
        case OP_END: *out = st[0]; return 0;
        default: tf_die("bad opcode %d in '%s'", in->op, e->text);
        }
    }
}

int tf_expr_eval_bool(const struct tf_expr *e, const struct tf_value *slots, bool *out,
                      struct tf_error *err)
{
    struct tf_value v;
    if (tf_expr_eval(e, slots, &v, err) != 0)
        return -1;
    *out = truthy(v);
    return 0;
}

int tf_expr_max_slot(const struct tf_expr *e)
{
    return e->nslots ? e->slots[e->nslots - 1] : -1;
}

bool tf_expr_uses_slot(const struct tf_expr *e, int slot)
{
    return bsearch(&slot, e->slots, (size_t)e->nslots, sizeof *e->slots, cmp_int) != NULL;
}

const char *tf_expr_text(const struct tf_expr *e) { return e->text; }

bool tf_expr_is_keyword(const char *name)
{
    return strcmp(name, "and") == 0 || strcmp(name, "or") == 0 || strcmp(name, "not") == 0;
}
