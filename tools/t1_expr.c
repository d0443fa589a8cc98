/* t1_expr.c - Python expressions of T1 files into tunefarm's language (t1_expr.h).
 *
 * Three steps over one text. A lexer turns it into tokens (Python's numbers
 * with underscores and 0x/0o/0b, quoted strings without escapes, names, and
 * the operators; C's `&&`, `||`, `!`, `?` and `=` are refused with what
 * Python writes instead, since Kernel Tuner would refuse them too). A
 * recursive-descent parser, one function per level of Python's grammar
 * (conditional expression, or, and, not, comparison, | ^ &, shifts, + -,
 * * / // %, unary, **, calls and subscripts, atoms, list displays and
 * comprehensions), builds a tree. The printer walks the tree and returns for
 * each node its text in tunefarm's language with that text's precedence
 * level; a parent puts parentheses around a child whose level is below what
 * its position needs (the right operand of a left-associative operator needs
 * one more), so the printed expression groups exactly as the tree does,
 * whatever parentheses the Python had.
 *
 * Values (tf_t1_values) reuse the printer: each constant, range bound or
 * comprehension element is printed, compiled with schema/expr (the
 * comprehension's variable as slot 0) and evaluated, so `2**i`, `16*i` and
 * `//` give what they give everywhere else in tunefarm, which is what Python
 * gives for integers. */
#include "t1_expr.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/expr.h"
#include "../schema/yamldoc.h"

#define T1_MAX_TEXT 16384      /* bytes of Python */
#define T1_MAX_NEST 128        /* nested levels (two per parenthesis) */
#define T1_MAX_OUT 4096        /* schema/expr's limit on an expression's text */
#define T1_MAX_VALUES (1 << 20) /* schema/kernel's limit on one parameter's values */
#define T1_DUP_SCAN 1024        /* values checked for duplicates as they come */

/* ---- tokens ------------------------------------------------------------------ */

enum tok { TK_END, TK_NUM, TK_STR, TK_NAME, TK_OP };

/* Operators beyond single characters (which stand for themselves). */
enum {
    OP_POW = 256, OP_FLOORDIV, OP_EQ, OP_NE, OP_LE, OP_GE, OP_LSHIFT, OP_RSHIFT,
    OP_AND, OP_OR, OP_NOT, OP_IN, OP_NOTIN, OP_IS, OP_ISNOT,
};

struct token {
    enum tok kind;
    int op;
    int start, len;   /* byte offset and length in the text */
    bool is_float;
    int64_t ival;
    double fval;
    char *str;        /* TK_STR: the contents; TK_NAME: the name */
};

/* ---- tree -------------------------------------------------------------------- */

enum nkind {
    N_NUM, N_STR, N_NAME, N_TRUE, N_FALSE, N_NONE, N_UNARY, N_BIN, N_BOOLOP, N_NOT, N_CMP,
    N_IF, N_CALL, N_SUB, N_ATTR, N_TUPLE, N_LIST, N_COMP,
};

struct node {
    enum nkind kind;
    int col;             /* 1-based column of its first token, or of its operator */
    int op;              /* N_UNARY, N_BIN, N_BOOLOP */
    int n;               /* children */
    struct node **kid;   /* N_CALL: callee then arguments; N_COMP: element, iterable, conditions */
    int *ops;            /* N_CMP: the n - 1 operators */
    int *op_cols;        /* N_CMP: their columns */
    bool paren;          /* written in parentheses: printed in them too */
    bool is_float;       /* N_NUM */
    int64_t ival;
    double fval;
    char *text;          /* N_NAME, N_STR, N_ATTR (the attribute), N_COMP (the variable) */
};

struct parser {
    const char *src;
    struct token *toks;
    int ntoks, pos, depth;
    struct node **all;   /* every node, for freeing */
    int nall, capall;
    struct tf_error *err;
};

static int fail(struct tf_error *err, enum tf_error_code code, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(struct tf_error *err, enum tf_error_code code, int col, const char *fmt, ...)
{
    char msg[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tf_error_at(err, code, NULL, 0, col, "%s", msg);
    return -1;
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }

/* A number at s[i]: Python's literal forms, underscores between digits. */
static int lex_number(const char *s, int i, struct token *t, struct tf_error *err)
{
    int e = i, base = 10;
    char clean[128];
    int n = 0;
    bool real = false;
    if (s[e] == '0' && (s[e + 1] == 'x' || s[e + 1] == 'X' || s[e + 1] == 'o' ||
                        s[e + 1] == 'O' || s[e + 1] == 'b' || s[e + 1] == 'B')) {
        char p = (char)(s[e + 1] | 0x20);
        base = p == 'x' ? 16 : p == 'o' ? 8 : 2;
        e += 2;
    }
    for (;; e++) {
        char c = s[e];
        bool digit = base == 16 ? (is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'))
                                : base == 10 ? is_digit(c) : (c >= '0' && c < '0' + base);
        if (c == '_') {
            /* Python: one underscore between digits (or right after 0x/0o/0b) */
            char next = s[e + 1];
            bool next_digit = base == 16 ? (is_digit(next) || ((next | 0x20) >= 'a' &&
                                                               (next | 0x20) <= 'f'))
                                         : base == 10 ? is_digit(next)
                                                      : (next >= '0' && next < '0' + base);
            char prev = s[e - 1];
            bool prev_digit = base == 16 ? (is_digit(prev) || ((prev | 0x20) >= 'a' &&
                                                               (prev | 0x20) <= 'f'))
                                         : base == 10 ? is_digit(prev)
                                                      : (prev >= '0' && prev < '0' + base);
            bool after_prefix = base != 10 && e == i + 2;
            if (!(prev_digit || after_prefix) || !next_digit)
                return fail(err, TF_ERR_SYNTAX, i + 1, "invalid number '%.*s': an underscore "
                            "goes between two digits", e - i + 2, s + i);
            continue;
        }
        if (base == 10 && c == '.' && !real) {
            real = true;
        } else if (base == 10 && (c == 'e' || c == 'E')) {
            real = true;
            if (n < (int)sizeof clean - 1)
                clean[n++] = c;
            e++;
            if (s[e] == '+' || s[e] == '-')
                clean[n++] = s[e++];
            if (!is_digit(s[e]))
                return fail(err, TF_ERR_SYNTAX, i + 1, "invalid number '%.*s'", e - i + 1, s + i);
            while (is_digit(s[e]) || s[e] == '_') {
                if (s[e] == '_' && !(is_digit(s[e - 1]) && is_digit(s[e + 1])))
                    return fail(err, TF_ERR_SYNTAX, i + 1, "invalid number '%.*s': an "
                                "underscore goes between two digits", e - i + 2, s + i);
                if (s[e] != '_' && n < (int)sizeof clean - 1)
                    clean[n++] = s[e];
                e++;
            }
            break;
        } else if (!digit) {
            break;
        }
        if (n >= (int)sizeof clean - 1)
            return fail(err, TF_ERR_SYNTAX, i + 1, "number too long");
        clean[n++] = c;
    }
    clean[n] = '\0';
    if (s[e] == 'j' || s[e] == 'J')
        return fail(err, TF_ERR_SCHEMA, i + 1, "complex numbers have no tunefarm equivalent");
    if (is_alnum(s[e]) || n == 0)
        return fail(err, TF_ERR_SYNTAX, i + 1, "invalid number '%.*s'", e - i + 1, s + i);
    if (!real && base == 10 && clean[0] == '0' && clean[strspn(clean, "0")] != '\0')
        return fail(err, TF_ERR_SYNTAX, i + 1, "invalid number '%.*s': Python 3 allows no "
                    "leading zero in a decimal integer%s%s%s",
                    e - i, s + i, strspn(clean, "01234567") == strlen(clean) ? " (0o" : "",
                    strspn(clean, "01234567") == strlen(clean) ? clean + strspn(clean, "0") : "",
                    strspn(clean, "01234567") == strlen(clean) ? " for octal)" : "");
    t->kind = TK_NUM;
    t->start = i;
    t->len = e - i;
    errno = 0;
    if (real) {
        t->is_float = true;
        t->fval = strtod(clean, NULL);
        if (!isfinite(t->fval))
            return fail(err, TF_ERR_SCHEMA, i + 1, "number '%.*s' is out of range", e - i, s + i);
    } else {
        unsigned long long v = strtoull(clean, NULL, base);
        if (errno == ERANGE || v > (unsigned long long)INT64_MAX)
            return fail(err, TF_ERR_SCHEMA, i + 1,
                        "integer '%.*s' does not fit in 64 bits (tunefarm's integers are int64)",
                        e - i, s + i);
        t->ival = (int64_t)v;
    }
    return 0;
}

static int lex(struct parser *P)
{
    const char *s = P->src;
    int len = (int)strlen(s);
    if (len > T1_MAX_TEXT)
        return fail(P->err, TF_ERR_SYNTAX, 1, "expression is %d bytes long; at most %d", len,
                    T1_MAX_TEXT);
    P->toks = tf_xcalloc((size_t)len + 1, sizeof *P->toks);
    int i = 0;
    for (;;) {
        while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
            i++;
        struct token *t = &P->toks[P->ntoks];
        t->start = i;
        if (s[i] == '\0') {
            t->kind = TK_END;
            P->ntoks++;
            return 0;
        }
        char c = s[i], d = s[i + 1];
        if (is_digit(c) || (c == '.' && is_digit(d))) {
            if (lex_number(s, i, t, P->err) != 0)
                return -1;
            i += t->len;
        } else if (c == '\'' || c == '"') {
            if (d == c && s[i + 2] == c)
                return fail(P->err, TF_ERR_SCHEMA, i + 1,
                            "triple-quoted strings are not supported");
            int e = i + 1;
            while (s[e] && s[e] != c) {
                if (s[e] == '\\')
                    return fail(P->err, TF_ERR_SCHEMA, e + 1,
                                "escapes in strings are not supported (tunefarm's strings have "
                                "none)");
                e++;
            }
            if (!s[e])
                return fail(P->err, TF_ERR_SYNTAX, i + 1, "string not closed: expected %c", c);
            t->kind = TK_STR;
            t->len = e + 1 - i;
            t->str = tf_xasprintf("%.*s", e - i - 1, s + i + 1);
            i = e + 1;
        } else if (is_alpha(c)) {
            int e = i;
            while (is_alnum(s[e]))
                e++;
            if (s[e] == '\'' || s[e] == '"')
                return fail(P->err, TF_ERR_SCHEMA, i + 1,
                            "string prefixes (%.*s'...') are not supported", e - i, s + i);
            t->start = i;
            t->len = e - i;
            t->str = tf_xasprintf("%.*s", e - i, s + i);
            static const struct { const char *w; int op; } words[] = {
                {"and", OP_AND}, {"or", OP_OR}, {"not", OP_NOT}, {"in", OP_IN}, {"is", OP_IS}};
            t->kind = TK_NAME;
            for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
                if (strcmp(t->str, words[w].w) == 0) {
                    t->kind = TK_OP;
                    t->op = words[w].op;
                }
            i = e;
        } else {
            static const struct { const char *s; int op; const char *why; } ops[] = {
                {"**", OP_POW, NULL}, {"//", OP_FLOORDIV, NULL}, {"==", OP_EQ, NULL},
                {"!=", OP_NE, NULL}, {"<=", OP_LE, NULL}, {">=", OP_GE, NULL},
                {"<<", OP_LSHIFT, NULL}, {">>", OP_RSHIFT, NULL},
                {"<>", 0, "'<>' is not Python 3: write '!='"},
                {"&&", 0, "'&&' is C, not Python: write 'and'"},
                {"||", 0, "'||' is C, not Python: write 'or'"},
                {":=", 0, "':=' (assignment) has no tunefarm equivalent"},
                {"!", 0, "'!' is C, not Python: write 'not'"},
                {"?", 0, "C's 'c ? a : b' is written 'a if c else b' in Python"},
                {"=", 0, "'=' assigns: compare with '=='"},
                {"+", '+', NULL}, {"-", '-', NULL}, {"*", '*', NULL}, {"/", '/', NULL},
                {"%", '%', NULL}, {"<", '<', NULL}, {">", '>', NULL}, {"(", '(', NULL},
                {")", ')', NULL}, {"[", '[', NULL}, {"]", ']', NULL}, {"{", '{', NULL},
                {"}", '}', NULL}, {",", ',', NULL}, {".", '.', NULL}, {"&", '&', NULL},
                {"|", '|', NULL}, {"^", '^', NULL}, {"~", '~', NULL}, {"@", '@', NULL},
                {":", ':', NULL}};
            size_t k;
            for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
                if (strncmp(s + i, ops[k].s, strlen(ops[k].s)) == 0)
                    break;
            if (k == sizeof ops / sizeof ops[0])
                return fail(P->err, TF_ERR_SYNTAX, i + 1, "unexpected character '%c'", c);
            if (ops[k].why)
                return fail(P->err, TF_ERR_SYNTAX, i + 1, "%s", ops[k].why);
            t->kind = TK_OP;
            t->op = ops[k].op;
            t->len = (int)strlen(ops[k].s);
            i += t->len;
        }
        P->ntoks++;
    }
}

/* ---- parser ------------------------------------------------------------------ */

static struct node *new_node(struct parser *P, enum nkind kind, int col)
{
    if (P->nall == P->capall) {
        P->capall = P->capall ? 2 * P->capall : 32;
        P->all = tf_xrealloc(P->all, (size_t)P->capall * sizeof *P->all);
    }
    struct node *n = tf_xcalloc(1, sizeof *n);
    n->kind = kind;
    n->col = col;
    return P->all[P->nall++] = n;
}

static void add_kid(struct node *n, struct node *k)
{
    n->kid = tf_xrealloc(n->kid, (size_t)(n->n + 1) * sizeof *n->kid);
    n->kid[n->n++] = k;
}

static void parser_free(struct parser *P)
{
    for (int i = 0; i < P->nall; i++) {
        free(P->all[i]->kid);
        free(P->all[i]->ops);
        free(P->all[i]->op_cols);
        free(P->all[i]->text);
        free(P->all[i]);
    }
    free(P->all);
    for (int i = 0; i < P->ntoks; i++)
        free(P->toks[i].str);
    free(P->toks);
}

static const struct token *peek(struct parser *P) { return &P->toks[P->pos]; }
static int col_of(const struct token *t) { return t->start + 1; }
static bool is_op(const struct token *t, int op) { return t->kind == TK_OP && t->op == op; }
static bool is_word(const struct token *t, const char *w)
{
    return t->kind == TK_NAME && strcmp(t->str, w) == 0;
}

static int unexpected(struct parser *P, const char *expected)
{
    const struct token *t = peek(P);
    char buf[64];
    if (t->kind == TK_END)
        return fail(P->err, TF_ERR_SYNTAX, col_of(t), "expected %s, found end of expression",
                    expected);
    snprintf(buf, sizeof buf, "%.*s", t->len > 40 ? 40 : t->len, P->src + t->start);
    return fail(P->err, TF_ERR_SYNTAX, col_of(t), "expected %s, found '%s'", expected, buf);
}

static int expect_op(struct parser *P, int op, const char *what)
{
    if (!is_op(peek(P), op))
        return unexpected(P, what);
    P->pos++;
    return 0;
}

static struct node *p_test(struct parser *P);
static struct node *p_or(struct parser *P);
static struct node *p_factor(struct parser *P);

static bool enter(struct parser *P)
{
    if (++P->depth > T1_MAX_NEST) {
        fail(P->err, TF_ERR_SYNTAX, col_of(peek(P)), "expression nested more than %d levels deep",
             T1_MAX_NEST);
        return false;
    }
    return true;
}

/* Elements up to `close` after an opening bracket already taken; a
 * comprehension when `for` follows the first element of a list. */
static struct node *p_display(struct parser *P, int close, int col)
{
    struct node *n = new_node(P, close == ']' ? N_LIST : N_TUPLE, col);
    bool comma = false;
    while (!is_op(peek(P), close)) {
        struct node *e = p_test(P);
        if (!e)
            return NULL;
        if (n->n == 0 && is_word(peek(P), "for")) {
            if (close != ']')
                return fail(P->err, TF_ERR_SCHEMA, col_of(peek(P)),
                            "generator expressions are not supported: write a list [...]"),
                       NULL;
            int fcol = col_of(peek(P));
            P->pos++;
            if (peek(P)->kind != TK_NAME)
                return unexpected(P, "a variable name after 'for'"), NULL;
            struct node *c = new_node(P, N_COMP, col);
            c->text = tf_xstrdup(peek(P)->str);
            P->pos++;
            if (!is_op(peek(P), OP_IN))
                return unexpected(P, "'in' (one variable per comprehension)"), NULL;
            P->pos++;
            struct node *it = p_or(P);
            if (!it)
                return NULL;
            add_kid(c, e);
            add_kid(c, it);
            while (is_word(peek(P), "if")) {
                P->pos++;
                struct node *cond = p_or(P);
                if (!cond)
                    return NULL;
                add_kid(c, cond);
            }
            if (is_word(peek(P), "for"))
                return fail(P->err, TF_ERR_SCHEMA, col_of(peek(P)),
                            "a comprehension with two 'for' clauses is not supported (the first "
                            "is at column %d)", fcol),
                       NULL;
            if (expect_op(P, ']', "']' to close the comprehension") != 0)
                return NULL;
            return c;
        }
        add_kid(n, e);
        if (!is_op(peek(P), ','))
            break;
        comma = true;
        P->pos++;
    }
    if (expect_op(P, close, close == ']' ? "',' or ']'" : "',' or ')'") != 0)
        return NULL;
    /* (x) is x; (x,) and () are tuples */
    if (close == ')' && n->n == 1 && !comma) {
        n->kid[0]->paren = true;
        return n->kid[0];
    }
    return n;
}

static struct node *p_atom(struct parser *P)
{
    const struct token *t = peek(P);
    int col = col_of(t);
    if (t->kind == TK_NUM) {
        struct node *n = new_node(P, N_NUM, col);
        n->is_float = t->is_float;
        n->ival = t->ival;
        n->fval = t->fval;
        P->pos++;
        return n;
    }
    if (t->kind == TK_STR) {
        struct node *n = new_node(P, N_STR, col);
        n->text = tf_xstrdup(t->str);
        P->pos++;
        while (peek(P)->kind == TK_STR) { /* "a" "b" is "ab" */
            char *joined = tf_xasprintf("%s%s", n->text, peek(P)->str);
            free(n->text);
            n->text = joined;
            P->pos++;
        }
        return n;
    }
    if (t->kind == TK_NAME) {
        static const char *const keywords[] = {"if", "else", "for", "lambda", "def", "yield",
                                               "await", "async", "del", "pass", "return",
                                               "import", "from", "as", "with", "while",
                                               "class", "global", "raise", "try", NULL};
        for (int k = 0; keywords[k]; k++)
            if (strcmp(t->str, keywords[k]) == 0) {
                if (strcmp(t->str, "lambda") == 0)
                    return fail(P->err, TF_ERR_SCHEMA, col,
                                "lambda has no tunefarm equivalent: write the restriction as an "
                                "expression over the parameters"),
                           NULL;
                return unexpected(P, "a number, a name, a string or '('"), NULL;
            }
        enum nkind k = strcmp(t->str, "True") == 0    ? N_TRUE
                       : strcmp(t->str, "False") == 0 ? N_FALSE
                       : strcmp(t->str, "None") == 0  ? N_NONE
                                                      : N_NAME;
        struct node *n = new_node(P, k, col);
        n->text = tf_xstrdup(t->str);
        P->pos++;
        return n;
    }
    if (is_op(t, '(') || is_op(t, '[')) {
        P->pos++;
        if (!enter(P))
            return NULL;
        struct node *n = p_display(P, is_op(t, '(') ? ')' : ']', col);
        P->depth--;
        return n;
    }
    if (is_op(t, '{'))
        return fail(P->err, TF_ERR_SCHEMA, col, "dicts and sets have no tunefarm equivalent"), NULL;
    return unexpected(P, "a number, a name, a string or '('"), NULL;
}

static struct node *p_primary(struct parser *P)
{
    struct node *n = p_atom(P);
    while (n) {
        const struct token *t = peek(P);
        if (is_op(t, '(')) {
            struct node *call = new_node(P, N_CALL, n->col);
            add_kid(call, n);
            P->pos++;
            if (!enter(P))
                return NULL;
            while (!is_op(peek(P), ')')) {
                if (is_op(peek(P), '*') || is_op(peek(P), OP_POW))
                    return fail(P->err, TF_ERR_SCHEMA, col_of(peek(P)),
                                "argument unpacking (*args, **kwargs) is not supported"),
                           NULL;
                if (peek(P)->kind == TK_NAME && P->toks[P->pos + 1].kind == TK_OP &&
                    P->toks[P->pos + 1].op == '=')
                    return fail(P->err, TF_ERR_SCHEMA, col_of(peek(P)),
                                "keyword arguments are not supported"),
                           NULL;
                struct node *a = p_test(P);
                if (!a)
                    return NULL;
                if (is_word(peek(P), "for"))
                    return fail(P->err, TF_ERR_SCHEMA, col_of(peek(P)),
                                "generator expressions are not supported: write a list [...]"),
                           NULL;
                add_kid(call, a);
                if (!is_op(peek(P), ','))
                    break;
                P->pos++;
            }
            P->depth--;
            if (expect_op(P, ')', "',' or ')' to close the call") != 0)
                return NULL;
            n = call;
        } else if (is_op(t, '[')) {
            struct node *sub = new_node(P, N_SUB, n->col);
            add_kid(sub, n);
            P->pos++;
            if (!enter(P))
                return NULL;
            struct node *i = p_test(P);
            P->depth--;
            if (!i)
                return NULL;
            if (is_op(peek(P), ':') || is_op(peek(P), ','))
                return fail(P->err, TF_ERR_SCHEMA, col_of(peek(P)),
                            "slices have no tunefarm equivalent"),
                       NULL;
            add_kid(sub, i);
            if (expect_op(P, ']', "']'") != 0)
                return NULL;
            n = sub;
        } else if (is_op(t, '.')) {
            P->pos++;
            if (peek(P)->kind != TK_NAME)
                return unexpected(P, "an attribute name after '.'"), NULL;
            struct node *a = new_node(P, N_ATTR, n->col);
            add_kid(a, n);
            a->text = tf_xstrdup(peek(P)->str);
            P->pos++;
            n = a;
        } else {
            break;
        }
    }
    return n;
}

static struct node *p_power(struct parser *P)
{
    struct node *base = p_primary(P);
    if (!base || !is_op(peek(P), OP_POW))
        return base;
    struct node *n = new_node(P, N_BIN, col_of(peek(P)));
    n->op = OP_POW;
    P->pos++;
    if (!enter(P))
        return NULL;
    struct node *e = p_factor(P); /* right-associative; -x allowed: 2 ** -1 */
    P->depth--;
    if (!e)
        return NULL;
    add_kid(n, base);
    add_kid(n, e);
    return n;
}

static struct node *p_factor(struct parser *P)
{
    const struct token *t = peek(P);
    if (is_op(t, '-') || is_op(t, '+') || is_op(t, '~')) {
        struct node *n = new_node(P, N_UNARY, col_of(t));
        n->op = t->op;
        P->pos++;
        if (!enter(P))
            return NULL;
        struct node *x = p_factor(P);
        P->depth--;
        if (!x)
            return NULL;
        add_kid(n, x);
        return n;
    }
    return p_power(P);
}

/* One left-associative binary level: operands from `next`, operators `ops`. */
static struct node *p_binary(struct parser *P, struct node *(*next)(struct parser *),
                             const int *ops)
{
    struct node *left = next(P);
    while (left) {
        const struct token *t = peek(P);
        int k;
        for (k = 0; ops[k]; k++)
            if (is_op(t, ops[k]))
                break;
        if (!ops[k])
            break;
        struct node *n = new_node(P, N_BIN, col_of(t));
        n->op = t->op;
        P->pos++;
        struct node *right = next(P);
        if (!right)
            return NULL;
        add_kid(n, left);
        add_kid(n, right);
        left = n;
    }
    return left;
}

static struct node *p_term(struct parser *P)
{
    static const int ops[] = {'*', '/', OP_FLOORDIV, '%', '@', 0};
    return p_binary(P, p_factor, ops);
}
static struct node *p_arith(struct parser *P)
{
    static const int ops[] = {'+', '-', 0};
    return p_binary(P, p_term, ops);
}
static struct node *p_shift(struct parser *P)
{
    static const int ops[] = {OP_LSHIFT, OP_RSHIFT, 0};
    return p_binary(P, p_arith, ops);
}
static struct node *p_band(struct parser *P)
{
    static const int ops[] = {'&', 0};
    return p_binary(P, p_shift, ops);
}
static struct node *p_bxor(struct parser *P)
{
    static const int ops[] = {'^', 0};
    return p_binary(P, p_band, ops);
}
static struct node *p_bor(struct parser *P)
{
    static const int ops[] = {'|', 0};
    return p_binary(P, p_bxor, ops);
}

/* The comparison operator at the cursor (taking `not in` and `is not` whole), or 0. */
static int take_cmp_op(struct parser *P)
{
    const struct token *t = peek(P);
    if (t->kind != TK_OP)
        return 0;
    switch (t->op) {
    case OP_EQ: case OP_NE: case OP_LE: case OP_GE: case '<': case '>': case OP_IN:
        P->pos++;
        return t->op;
    case OP_IS:
        P->pos++;
        if (is_op(peek(P), OP_NOT)) {
            P->pos++;
            return OP_ISNOT;
        }
        return OP_IS;
    case OP_NOT:
        if (P->toks[P->pos + 1].kind == TK_OP && P->toks[P->pos + 1].op == OP_IN) {
            P->pos += 2;
            return OP_NOTIN;
        }
        return 0;
    default:
        return 0;
    }
}

static struct node *p_cmp(struct parser *P)
{
    struct node *first = p_bor(P);
    if (!first)
        return NULL;
    int col = col_of(peek(P));
    int op = take_cmp_op(P);
    if (!op)
        return first;
    struct node *n = new_node(P, N_CMP, first->col);
    add_kid(n, first);
    while (op) {
        n->ops = tf_xrealloc(n->ops, (size_t)n->n * sizeof *n->ops);
        n->op_cols = tf_xrealloc(n->op_cols, (size_t)n->n * sizeof *n->op_cols);
        n->ops[n->n - 1] = op;
        n->op_cols[n->n - 1] = col;
        struct node *x = p_bor(P);
        if (!x)
            return NULL;
        add_kid(n, x);
        col = col_of(peek(P));
        op = take_cmp_op(P);
    }
    return n;
}

static struct node *p_not(struct parser *P)
{
    if (!is_op(peek(P), OP_NOT))
        return p_cmp(P);
    struct node *n = new_node(P, N_NOT, col_of(peek(P)));
    P->pos++;
    if (!enter(P))
        return NULL;
    struct node *x = p_not(P);
    P->depth--;
    if (!x)
        return NULL;
    add_kid(n, x);
    return n;
}

static struct node *p_boolop(struct parser *P, int op, struct node *(*next)(struct parser *))
{
    struct node *x = next(P);
    if (!x || !is_op(peek(P), op))
        return x;
    struct node *n = new_node(P, N_BOOLOP, x->col);
    n->op = op;
    add_kid(n, x);
    while (is_op(peek(P), op)) {
        P->pos++;
        struct node *y = next(P);
        if (!y)
            return NULL;
        add_kid(n, y);
    }
    return n;
}

static struct node *p_and(struct parser *P) { return p_boolop(P, OP_AND, p_not); }
static struct node *p_or(struct parser *P) { return p_boolop(P, OP_OR, p_and); }

static struct node *p_test(struct parser *P)
{
    if (!enter(P))
        return NULL;
    struct node *x = p_or(P);
    if (x && is_word(peek(P), "if")) {
        struct node *n = new_node(P, N_IF, x->col);
        P->pos++;
        struct node *c = p_or(P);
        if (!c)
            return NULL;
        if (!is_word(peek(P), "else"))
            return unexpected(P, "'else' (Python's conditional is 'A if COND else B')"), NULL;
        P->pos++;
        struct node *e = p_test(P);
        if (!e)
            return NULL;
        add_kid(n, c);
        add_kid(n, x);
        add_kid(n, e);
        x = n;
    }
    P->depth--;
    return x;
}

/* Parse the whole text: the tree, or NULL + err. */
static struct node *parse(struct parser *P, const char *text, struct tf_error *err)
{
    memset(P, 0, sizeof *P);
    P->src = text;
    P->err = err;
    if (lex(P) != 0)
        return NULL;
    if (peek(P)->kind == TK_END)
        return fail(err, TF_ERR_SYNTAX, 1, "empty expression"), NULL;
    struct node *root = p_test(P);
    if (root && peek(P)->kind != TK_END) {
        if (is_op(peek(P), ','))
            return fail(err, TF_ERR_SCHEMA, col_of(peek(P)),
                        "a tuple has no value here: write one expression"),
                   NULL;
        return unexpected(P, "an operator or the end of the expression"), NULL;
    }
    return root;
}

/* ---- printing in tunefarm's language ----------------------------------------- */

/* tunefarm's precedence levels (schema/expr.md's grammar), lowest first. */
enum { L_COND = 1, L_OR, L_AND, L_NOT, L_CMP, L_SUM, L_PROD, L_UNARY, L_POW, L_ATOM };

struct out {
    char *s;
    int level;
    bool boolish;   /* 0 or 1 in Python too (a comparison, not, True...) */
    bool valueop;   /* an and/or whose Python value is one of its operands */
};

struct printer {
    const struct tf_t1_scope *scope;
    struct tf_error *err;
};

static int print(struct printer *T, const struct node *n, struct out *o);

static struct out mk(char *s, int level, bool boolish)
{
    return (struct out){.s = s, .level = level, .boolish = boolish};
}

/* The child's text, parenthesised if its level is below `min`; frees it. */
static char *at(struct out *o, int min)
{
    char *s = o->s;
    o->s = NULL;
    if (o->level >= min)
        return s;
    char *p = tf_xasprintf("(%s)", s);
    free(s);
    return p;
}

static const struct tf_t1_param *find_param(const struct tf_t1_scope *sc, const char *name)
{
    for (int i = 0; i < sc->nparams; i++)
        if (strcmp(sc->params[i].name, name) == 0)
            return &sc->params[i];
    return NULL;
}

static const char *param_out(const struct tf_t1_param *p)
{
    return p->rename ? p->rename : p->name;
}

static char *fmt_int(int64_t v) { return tf_xasprintf("%" PRId64, v); }

/* The shortest text that reads back as `v`, always with a '.' or an exponent;
 * positional between 1e-4 and 1e16, as Python's repr() writes it. */
static char *fmt_float(double v)
{
    char buf[64];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    double a = fabs(v);
    if (strchr(buf, 'e') && a >= 1e-4 && a < 1e16) {
        int exp10 = (int)floor(log10(a));
        snprintf(buf, sizeof buf, "%.*f", p - 1 - exp10 > 0 ? p - 1 - exp10 : 0, v);
    }
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    return tf_xstrdup(buf);
}

/* Print `n` as an operand of arithmetic or a comparison: a number, not a
 * string, not an and/or whose Python value is an operand. */
static int operand(struct printer *T, const struct node *n, struct out *o)
{
    if (n->kind == N_STR)
        return fail(T->err, TF_ERR_SCHEMA, n->col,
                    "a string has no value here: a string is only compared with a string "
                    "parameter (P == \"x\")");
    if (print(T, n, o) != 0)
        return -1;
    if (o->valueop) {
        free(o->s);
        o->s = NULL; /* callers free what they collected */
        return fail(T->err, TF_ERR_SCHEMA, n->col,
                    "Python's 'and' / 'or' give one of their operands (2 or 3 is 2), tunefarm's "
                    "give 0 or 1: use them on truth values only (comparisons), or write "
                    "'C ? A : B'");
    }
    return 0;
}

static void free_outs(struct out *o, int n)
{
    for (int i = 0; i < n; i++)
        free(o[i].s);
    free(o);
}

static int unknown_name(struct printer *T, const struct node *n)
{
    const struct tf_t1_scope *sc = T->scope;
    const char *best = NULL;
    int bestd = 3;
    for (int i = 0; i < sc->nparams; i++) {
        int d = tf_ydoc_edit_distance(n->text, sc->params[i].name, 2);
        if (d < bestd) {
            bestd = d;
            best = sc->params[i].name;
        }
    }
    char known[256] = "";
    size_t len = 0;
    for (int i = 0; i < sc->nparams && len < sizeof known - 48; i++)
        len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                                sc->params[i].name);
    if (sc->nparams > 0 && len >= sizeof known - 48)
        snprintf(known + len, sizeof known - len, ", ...");
    if (sc->nsizes > 0)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%sProblemSize[i]",
                 sc->nparams ? ", " : "");
    if (strcmp(n->text, "ProblemSize") == 0)
        return fail(T->err, TF_ERR_SCHEMA, n->col,
                    sc->nsizes ? "write ProblemSize[0], [1] or [2]: the list has no value here"
                               : "the file gives no KernelSpecification.ProblemSize");
    if (best)
        return fail(T->err, TF_ERR_SCHEMA, n->col,
                    "unknown name '%s' (did you mean '%s'? known: %s)", n->text, best,
                    known[0] ? known : "none");
    return fail(T->err, TF_ERR_SCHEMA, n->col, "unknown name '%s' (known: %s)", n->text,
                known[0] ? known : "none");
}

/* An integer constant (a literal, maybe negated), for subscripts and steps. */
static bool const_int(const struct node *n, int64_t *v)
{
    if (n->kind == N_NUM && !n->is_float) {
        *v = n->ival;
        return true;
    }
    if (n->kind == N_UNARY && n->op == '-' && n->kid[0]->kind == N_NUM && !n->kid[0]->is_float) {
        *v = -n->kid[0]->ival;
        return true;
    }
    return false;
}

/* The integer values of parameter `n` when the scope binds parameters to
 * their lists (max(P), min(P), len(P), sum(P)); NULL + err otherwise. */
static const struct tf_t1_param *list_param(struct printer *T, const struct node *n,
                                            const char *fname)
{
    const struct tf_t1_param *p = n->kind == N_NAME ? find_param(T->scope, n->text) : NULL;
    if (!p || !T->scope->params_as_lists) {
        fail(T->err, TF_ERR_SCHEMA, n->col,
             "%s() of one value has no meaning here: give it two or more values, or a list",
             fname);
        return NULL;
    }
    if (p->is_enum || !p->ints) {
        fail(T->err, TF_ERR_SCHEMA, n->col, "%s() of '%s', whose values are not numbers", fname,
             p->name);
        return NULL;
    }
    return p;
}

/* Join the printed items of a list or tuple with `sep` at level `min`. */
static int print_items(struct printer *T, const struct node *list, const char *sep, int min,
                       char **joined)
{
    char *acc = NULL;
    for (int i = 0; i < list->n; i++) {
        struct out o;
        if (operand(T, list->kid[i], &o) != 0) {
            free(acc);
            return -1;
        }
        char *s = at(&o, min);
        char *next = acc ? tf_xasprintf("%s%s%s", acc, sep, s) : tf_xstrdup(s);
        free(acc);
        free(s);
        acc = next;
    }
    *joined = acc;
    return 0;
}

static int print_call(struct printer *T, const struct node *n, struct out *o)
{
    const struct node *callee = n->kid[0];
    const char *fname = NULL;
    bool module = false;
    if (callee->kind == N_NAME) {
        fname = callee->text;
        if (find_param(T->scope, fname))
            return fail(T->err, TF_ERR_SCHEMA, callee->col, "'%s' is a parameter, not a function",
                        fname);
    } else if (callee->kind == N_ATTR && callee->kid[0]->kind == N_NAME &&
               (strcmp(callee->kid[0]->text, "math") == 0 ||
                strcmp(callee->kid[0]->text, "np") == 0 ||
                strcmp(callee->kid[0]->text, "numpy") == 0)) {
        fname = callee->text;
        module = true;
    } else {
        return fail(T->err, TF_ERR_SCHEMA, callee->col,
                    "only functions by name (min, max, ...) and math.* can be called");
    }
    const int argc = n->n - 1;
    const struct node *const *args = (const struct node *const *)n->kid + 1;
    /* name, arguments (-1: one or more), what tunefarm calls it */
    static const struct { const char *py; bool mod; int argc; const char *tf; } same[] = {
        {"abs", false, 1, "abs"}, {"int", false, 1, "int"}, {"float", false, 1, "float"},
        {"ceil", true, 1, "ceil"}, {"floor", true, 1, "floor"}, {"sqrt", true, 1, "sqrt"},
        {"log2", true, 1, "log2"}, {"trunc", true, 1, "int"}, {"fabs", true, 1, "abs"},
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        if (strcmp(fname, same[i].py) != 0 || same[i].mod != module)
            continue;
        if (argc != same[i].argc)
            return fail(T->err, TF_ERR_SCHEMA, n->col, "%s() takes %d argument, got %d", fname,
                        same[i].argc, argc);
        struct out a;
        if (operand(T, args[0], &a) != 0)
            return -1;
        char *s = at(&a, L_COND);
        *o = mk(tf_xasprintf("%s(%s)", same[i].tf, s), L_ATOM, false);
        free(s);
        return 0;
    }
    if (module && strcmp(fname, "pow") == 0 && argc == 2) {
        struct out a, b;
        if (operand(T, args[0], &a) != 0)
            return -1;
        if (operand(T, args[1], &b) != 0) {
            free(a.s);
            return -1;
        }
        char *sa = at(&a, L_COND), *sb = at(&b, L_UNARY);
        *o = mk(tf_xasprintf("float(%s) ** %s", sa, sb), L_POW, false);
        free(sa);
        free(sb);
        return 0;
    }
    if (module)
        return fail(T->err, TF_ERR_SCHEMA, callee->col,
                    "%s.%s() has no tunefarm equivalent (known: ceil, floor, sqrt, log2, trunc, "
                    "fabs, pow)",
                    callee->kid[0]->text, fname);
    if (strcmp(fname, "pow") == 0) {
        if (argc != 2)
            return fail(T->err, TF_ERR_SCHEMA, n->col,
                        "pow() with %d arguments has no tunefarm equivalent (write a ** b)", argc);
        struct out a, b;
        if (operand(T, args[0], &a) != 0)
            return -1;
        if (operand(T, args[1], &b) != 0) {
            free(a.s);
            return -1;
        }
        char *sa = at(&a, L_ATOM), *sb = at(&b, L_UNARY);
        *o = mk(tf_xasprintf("%s ** %s", sa, sb), L_POW, false);
        free(sa);
        free(sb);
        return 0;
    }
    if (strcmp(fname, "bool") == 0 && argc == 1) {
        struct out a;
        if (operand(T, args[0], &a) != 0)
            return -1;
        char *s = at(&a, L_SUM);
        *o = mk(tf_xasprintf("%s != 0", s), L_CMP, true);
        free(s);
        return 0;
    }
    if (strcmp(fname, "round") == 0)
        return fail(T->err, TF_ERR_SCHEMA, n->col,
                    "round() has no exact tunefarm equivalent: Python rounds halves to even "
                    "(round(2.5) is 2), tunefarm away from zero; write floor(x + 0.5), ceil(x) "
                    "or int(x) for what you mean");
    bool is_min = strcmp(fname, "min") == 0, is_max = strcmp(fname, "max") == 0;
    bool is_len = strcmp(fname, "len") == 0, is_sum = strcmp(fname, "sum") == 0;
    if (!is_min && !is_max && !is_len && !is_sum)
        return fail(T->err, TF_ERR_SCHEMA, callee->col,
                    "unknown function '%s' (known: min, max, abs, int, float, pow, bool, len, "
                    "sum, math.ceil, math.floor, math.sqrt, math.log2)",
                    fname);
    if (argc == 0)
        return fail(T->err, TF_ERR_SCHEMA, n->col, "%s() needs an argument", fname);
    if ((is_min || is_max) && argc >= 2) {
        char *items = NULL;
        struct node fake = {.n = argc, .kid = (struct node **)args};
        if (print_items(T, &fake, ", ", L_COND, &items) != 0)
            return -1;
        *o = mk(tf_xasprintf("%s(%s)", fname, items), L_ATOM, false);
        free(items);
        return 0;
    }
    if (argc != 1)
        return fail(T->err, TF_ERR_SCHEMA, n->col, "%s() takes 1 argument here, got %d", fname,
                    argc);
    const struct node *a = args[0];
    if (a->kind == N_LIST || a->kind == N_TUPLE) {
        if (is_len) {
            *o = mk(fmt_int(a->n), L_ATOM, false);
            return 0;
        }
        if (a->n == 0)
            return is_sum ? (*o = mk(tf_xstrdup("0"), L_ATOM, false), 0)
                          : fail(T->err, TF_ERR_SCHEMA, a->col, "%s() of an empty list", fname);
        if (a->n == 1 && !is_sum)
            return operand(T, a->kid[0], o);
        char *items = NULL;
        if (print_items(T, a, is_sum ? " + " : ", ", is_sum ? L_PROD : L_COND, &items) != 0)
            return -1;
        if (is_sum)
            *o = mk(items, L_SUM, false);
        else {
            *o = mk(tf_xasprintf("%s(%s)", fname, items), L_ATOM, false);
            free(items);
        }
        return 0;
    }
    const struct tf_t1_param *p = list_param(T, a, fname);
    if (!p)
        return -1;
    int64_t v = is_len ? p->count : p->ints[0];
    for (int i = 1; i < p->count && !is_len; i++) {
        int64_t x = p->ints[i];
        if (is_min && x < v)
            v = x;
        else if (is_max && x > v)
            v = x;
        else if (is_sum && __builtin_add_overflow(v, x, &v))
            return fail(T->err, TF_ERR_SCHEMA, n->col, "sum(%s) overflows int64", p->name);
    }
    /* a negative number is a unary minus: (-4) ** 2, not -(4 ** 2) */
    *o = mk(fmt_int(v), v < 0 ? L_UNARY : L_ATOM, false);
    return 0;
}

/* One link `a OP b` of a comparison whose operands are printed as `sa` and
 * `sb` (nodes na, nb): the checks on strings, and the text. */
static bool is_enum_name(const struct printer *T, const struct node *n)
{
    const struct tf_t1_param *p = n->kind == N_NAME ? find_param(T->scope, n->text) : NULL;
    return p && p->is_enum;
}

static int check_string_link(struct printer *T, const struct node *na, const struct node *nb,
                             int op, int col)
{
    if (na->kind != N_STR && nb->kind != N_STR) {
        if (is_enum_name(T, na) || is_enum_name(T, nb))
            return fail(T->err, TF_ERR_SCHEMA, col,
                        "'%s' has string values: it is only compared with a string",
                        (is_enum_name(T, na) ? na : nb)->text);
        return 0;
    }
    const struct node *other = na->kind == N_STR ? nb : na;
    const struct tf_t1_param *p = other->kind == N_NAME ? find_param(T->scope, other->text) : NULL;
    if (other->kind == N_STR)
        return fail(T->err, TF_ERR_SCHEMA, col, "comparing two strings has no tunefarm equivalent");
    if (!p || !p->is_enum)
        return fail(T->err, TF_ERR_SCHEMA, col,
                    "a string is only compared with a string parameter, by name (P == \"x\")");
    if (op != OP_EQ && op != OP_NE && op != OP_IS && op != OP_ISNOT)
        return fail(T->err, TF_ERR_SCHEMA, col,
                    "a string parameter is only compared with == or != (its values have no order)");
    const struct node *str = na->kind == N_STR ? na : nb;
    for (int i = 0; p->strings && i < p->count; i++)
        if (strcmp(p->strings[i], str->text) == 0)
            return 0;
    if (p->strings) {
        char known[256] = "";
        size_t len = 0;
        for (int i = 0; i < p->count && len < sizeof known - 40; i++)
            len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                                    p->strings[i]);
        return fail(T->err, TF_ERR_SCHEMA, str->col, "'%s' is not a value of '%s' (its values: %s)",
                    str->text, p->name, known);
    }
    return 0;
}

static char *quote_string(const char *s)
{
    return strchr(s, '"') ? tf_xasprintf("'%s'", s) : tf_xasprintf("\"%s\"", s);
}

/* The printed operand of a comparison: strings quoted, else operand(). */
static int cmp_operand(struct printer *T, const struct node *n, struct out *o)
{
    if (n->kind == N_STR) {
        *o = mk(quote_string(n->text), L_ATOM, false);
        return 0;
    }
    if (is_enum_name(T, n)) { /* its links were checked: a string on the other side */
        const struct tf_t1_param *p = find_param(T->scope, n->text);
        *o = mk(tf_xstrdup(param_out(p)), L_ATOM, false);
        return 0;
    }
    if (n->kind == N_LIST || n->kind == N_TUPLE || n->kind == N_COMP)
        return fail(T->err, TF_ERR_SCHEMA, n->col,
                    "a list has no value here: a list or tuple is only the right side of 'in'");
    if (n->kind == N_NONE)
        return fail(T->err, TF_ERR_SCHEMA, n->col, "None has no tunefarm equivalent");
    return operand(T, n, o);
}

static const char *cmp_text(int op)
{
    switch (op) {
    case OP_EQ: case OP_IS: return "==";
    case OP_NE: case OP_ISNOT: return "!=";
    case OP_LE: return "<=";
    case OP_GE: return ">=";
    case '<': return "<";
    default: return ">";
    }
}

/* `x in LIST` (or not in) as a disjunction (conjunction) of comparisons. */
static int print_in(struct printer *T, const struct node *x, const char *sx,
                    const struct node *list, int op, int col, struct out *o)
{
    const bool neg = op == OP_NOTIN;
    if (list->kind == N_CALL && list->kid[0]->kind == N_NAME &&
        strcmp(list->kid[0]->text, "range") == 0 && list->n >= 2 && list->n <= 4) {
        /* x in range(a, b[, s]): a <= x < b (and (x - a) % s == 0) */
        if (x->kind == N_STR || is_enum_name(T, x))
            return fail(T->err, TF_ERR_SCHEMA, col, "a string is never in a range");
        struct out a = {0}, b = {0};
        int64_t step = 1;
        if (list->n == 2) {
            a = mk(tf_xstrdup("0"), L_ATOM, false);
            if (operand(T, list->kid[1], &b) != 0)
                return free(a.s), -1;
        } else {
            if (operand(T, list->kid[1], &a) != 0)
                return -1;
            if (operand(T, list->kid[2], &b) != 0)
                return free(a.s), -1;
            if (list->n == 4 && (!const_int(list->kid[3], &step) || step < 1)) {
                free(a.s);
                free(b.s);
                return fail(T->err, TF_ERR_SCHEMA, list->kid[3]->col,
                            "'in range(...)' needs a positive integer step written as a number");
            }
        }
        char *sa = at(&a, L_SUM), *sb = at(&b, L_SUM);
        char *r = step == 1 ? tf_xasprintf("%s <= %s < %s", sa, sx, sb)
                            : tf_xasprintf("%s <= %s < %s and (%s - %s) %% %" PRId64 " == 0", sa,
                                           sx, sb, sx, sa, step);
        free(sa);
        free(sb);
        if (neg) {
            char *nr = tf_xasprintf("not (%s)", r);
            free(r);
            *o = mk(nr, L_NOT, true);
        } else {
            *o = mk(r, step == 1 ? L_CMP : L_AND, true);
        }
        return 0;
    }
    if (list->kind != N_LIST && list->kind != N_TUPLE)
        return fail(T->err, TF_ERR_SCHEMA, col,
                    "'%s' needs a list or tuple written out ((1, 2, 4)) or range(...) on its "
                    "right",
                    neg ? "not in" : "in");
    if (list->n == 0) {
        *o = mk(tf_xstrdup(neg ? "1" : "0"), L_ATOM, true);
        return 0;
    }
    char *acc = NULL;
    for (int i = 0; i < list->n; i++) {
        if (check_string_link(T, x, list->kid[i], OP_EQ, col) != 0) {
            free(acc);
            return -1;
        }
        struct out e;
        if (cmp_operand(T, list->kid[i], &e) != 0) {
            free(acc);
            return -1;
        }
        char *se = at(&e, L_SUM);
        char *link = tf_xasprintf("%s %s %s", sx, neg ? "!=" : "==", se);
        free(se);
        char *next = acc ? tf_xasprintf("%s %s %s", acc, neg ? "and" : "or", link) : link;
        if (acc) {
            free(acc);
            free(link);
        }
        acc = next;
    }
    *o = mk(acc, list->n == 1 ? L_CMP : neg ? L_AND : L_OR, true);
    return 0;
}

static int print_cmp(struct printer *T, const struct node *n, struct out *o)
{
    const int links = n->n - 1;
    bool split = false;
    for (int i = 0; i < links; i++)
        if (n->ops[i] == OP_IN || n->ops[i] == OP_NOTIN ||
            (links > 1 && (n->kid[i]->kind == N_STR || n->kid[i + 1]->kind == N_STR)))
            split = true;
    for (int i = 0; i < links; i++) {
        const struct node *r = n->kid[i + 1];
        if ((n->ops[i] == OP_IS || n->ops[i] == OP_ISNOT) &&
            (r->kind == N_NONE || n->kid[i]->kind == N_NONE))
            return fail(T->err, TF_ERR_SCHEMA, n->op_cols[i], "None has no tunefarm equivalent");
        if (n->ops[i] != OP_IN && n->ops[i] != OP_NOTIN &&
            check_string_link(T, n->kid[i], r, n->ops[i], n->op_cols[i]) != 0)
            return -1;
    }
    /* Operands, except the right sides of `in` (lists, printed per element). */
    struct out *ops = tf_xcalloc((size_t)n->n, sizeof *ops);
    for (int i = 0; i < n->n; i++) {
        if (i > 0 && (n->ops[i - 1] == OP_IN || n->ops[i - 1] == OP_NOTIN))
            continue;
        if (cmp_operand(T, n->kid[i], &ops[i]) != 0) {
            free_outs(ops, n->n);
            return -1;
        }
        ops[i].s = at(&ops[i], L_SUM);
    }
    char *acc = NULL;
    if (!split) {
        acc = tf_xstrdup(ops[0].s);
        for (int i = 0; i < links; i++) {
            char *next = tf_xasprintf("%s %s %s", acc, cmp_text(n->ops[i]), ops[i + 1].s);
            free(acc);
            acc = next;
        }
        free_outs(ops, n->n);
        *o = mk(acc, L_CMP, true);
        return 0;
    }
    int pieces = 0;
    int level = L_ATOM;
    for (int i = 0; i < links; i++) {
        struct out piece;
        if (n->ops[i] == OP_IN || n->ops[i] == OP_NOTIN) {
            if (i + 1 < links) { /* `x in (1, 2) < y`: the list would be compared */
                free(acc);
                free_outs(ops, n->n);
                return fail(T->err, TF_ERR_SCHEMA, n->op_cols[i + 1],
                            "a list has no value here: a list or tuple is only the right side "
                            "of 'in'");
            }
            if (print_in(T, n->kid[i], ops[i].s, n->kid[i + 1], n->ops[i], n->op_cols[i],
                         &piece) != 0) {
                free(acc);
                free_outs(ops, n->n);
                return -1;
            }
        } else {
            piece = mk(tf_xasprintf("%s %s %s", ops[i].s, cmp_text(n->ops[i]), ops[i + 1].s),
                       L_CMP, true);
        }
        level = piece.level;
        char *s = at(&piece, links > 1 ? L_NOT : L_COND);
        char *next = acc ? tf_xasprintf("%s and %s", acc, s) : tf_xstrdup(s);
        free(acc);
        free(s);
        acc = next;
        pieces++;
    }
    free_outs(ops, n->n);
    *o = mk(acc, pieces > 1 ? L_AND : level, true);
    return 0;
}

static int print_node(struct printer *T, const struct node *n, struct out *o);

/* Print `n`; the parentheses the Python had around an operation are kept (once),
 * so the translation groups visibly as the restriction did. */
static int print(struct printer *T, const struct node *n, struct out *o)
{
    if (print_node(T, n, o) != 0)
        return -1;
    if (n->paren && o->level < L_ATOM) {
        char *s = tf_xasprintf("(%s)", o->s);
        free(o->s);
        o->s = s;
        o->level = L_ATOM;
    }
    return 0;
}

static int print_node(struct printer *T, const struct node *n, struct out *o)
{
    const struct tf_t1_scope *sc = T->scope;
    *o = (struct out){0};
    switch (n->kind) {
    case N_NUM:
        *o = mk(n->is_float ? fmt_float(n->fval) : fmt_int(n->ival), L_ATOM, false);
        return 0;
    case N_TRUE:
    case N_FALSE:
        *o = mk(tf_xstrdup(n->kind == N_TRUE ? "1" : "0"), L_ATOM, true);
        return 0;
    case N_NONE:
        return fail(T->err, TF_ERR_SCHEMA, n->col, "None has no tunefarm equivalent");
    case N_STR:
        return fail(T->err, TF_ERR_SCHEMA, n->col,
                    "a string has no value here: a string is only compared with a string "
                    "parameter (P == \"x\")");
    case N_NAME: {
        if (sc->local && strcmp(n->text, sc->local) == 0) {
            *o = mk(tf_xstrdup(n->text), L_ATOM, false);
            return 0;
        }
        const struct tf_t1_param *p = find_param(sc, n->text);
        if (!p)
            return unknown_name(T, n);
        if (p->is_enum)
            return fail(T->err, TF_ERR_SCHEMA, n->col,
                        "'%s' has string values: it is only compared with a string (%s == "
                        "\"value\")",
                        p->name, p->name);
        if (sc->params_as_lists)
            return fail(T->err, TF_ERR_SCHEMA, n->col,
                        "Kernel Tuner binds '%s' to its list of values here (an argument's "
                        "size): write max(%s), min(%s) or len(%s)",
                        p->name, p->name, p->name, p->name);
        *o = mk(tf_xstrdup(param_out(p)), L_ATOM, false);
        return 0;
    }
    case N_SUB: {
        const struct node *base = n->kid[0];
        int64_t i;
        if (base->kind != N_NAME || strcmp(base->text, "ProblemSize") != 0)
            return fail(T->err, TF_ERR_SCHEMA, n->col,
                        "only ProblemSize[i] can be subscripted (tunefarm has no lists)");
        if (sc->nsizes == 0)
            return fail(T->err, TF_ERR_SCHEMA, base->col,
                        "the file gives no KernelSpecification.ProblemSize");
        if (!const_int(n->kid[1], &i))
            return fail(T->err, TF_ERR_SCHEMA, n->kid[1]->col,
                        "ProblemSize's index must be a number (0 to %d)", sc->nsizes - 1);
        if (i < 0)
            i += sc->nsizes;
        if (i < 0 || i >= sc->nsizes)
            return fail(T->err, TF_ERR_SCHEMA, n->kid[1]->col,
                        "ProblemSize has %d entr%s: index 0 to %d", sc->nsizes,
                        sc->nsizes == 1 ? "y" : "ies", sc->nsizes - 1);
        *o = mk(tf_xstrdup(sc->sizes[i]), L_ATOM, false);
        return 0;
    }
    case N_ATTR:
        if (n->kid[0]->kind == N_NAME &&
            (strcmp(n->kid[0]->text, "math") == 0 || strcmp(n->kid[0]->text, "np") == 0 ||
             strcmp(n->kid[0]->text, "numpy") == 0)) {
            if (strcmp(n->text, "pi") == 0) {
                *o = mk(fmt_float(M_PI), L_ATOM, false);
                return 0;
            }
            if (strcmp(n->text, "e") == 0) {
                *o = mk(fmt_float(M_E), L_ATOM, false);
                return 0;
            }
        }
        return fail(T->err, TF_ERR_SCHEMA, n->col,
                    "attributes have no tunefarm equivalent (known: math.pi, math.e)");
    case N_TUPLE:
    case N_LIST:
        return fail(T->err, TF_ERR_SCHEMA, n->col,
                    "a list has no value here: a list or tuple is only the right side of 'in' or "
                    "the argument of min, max, len or sum");
    case N_COMP:
        return fail(T->err, TF_ERR_SCHEMA, n->col, "a comprehension has no value here");
    case N_CALL:
        return print_call(T, n, o);
    case N_UNARY: {
        if (n->op == '~')
            return fail(T->err, TF_ERR_SCHEMA, n->col,
                        "'~' (bitwise not) has no tunefarm equivalent: write 'not X' for a truth "
                        "value, or -X - 1");
        struct out x;
        if (operand(T, n->kid[0], &x) != 0)
            return -1;
        char *s = at(&x, L_UNARY);
        *o = mk(tf_xasprintf("%c%s%s", n->op, (s[0] == '-' || s[0] == '+') ? " " : "", s),
                L_UNARY, false);
        free(s);
        return 0;
    }
    case N_BIN: {
        const char *bitwise = n->op == '&' ? "'&' (bitwise and)"
                              : n->op == '|' ? "'|' (bitwise or)"
                              : n->op == '^' ? "'^' (bitwise exclusive or)"
                                             : NULL;
        if (bitwise)
            return fail(T->err, TF_ERR_SCHEMA, n->col,
                        "%s has no tunefarm equivalent: write 'and' / 'or' / '!=' for truth "
                        "values, or arithmetic (X %% 2 ** n for the low bits)",
                        bitwise);
        if (n->op == '@')
            return fail(T->err, TF_ERR_SCHEMA, n->col,
                        "'@' (matrix product) has no tunefarm equivalent");
        struct out a, b;
        if (operand(T, n->kid[0], &a) != 0)
            return -1;
        if (operand(T, n->kid[1], &b) != 0) {
            free(a.s);
            return -1;
        }
        char *sa, *sb, *s;
        int level;
        switch (n->op) {
        case OP_POW:
            sa = at(&a, L_ATOM);
            sb = at(&b, L_UNARY);
            s = tf_xasprintf("%s ** %s", sa, sb);
            level = L_POW;
            break;
        case OP_LSHIFT:
        case OP_RSHIFT:
            sa = at(&a, L_PROD);
            sb = at(&b, L_UNARY);
            s = tf_xasprintf("%s %s 2 ** %s", sa, n->op == OP_LSHIFT ? "*" : "//", sb);
            level = L_PROD;
            break;
        case '+':
        case '-':
            sa = at(&a, L_SUM);
            sb = at(&b, L_PROD);
            s = tf_xasprintf("%s %c %s", sa, n->op, sb);
            level = L_SUM;
            break;
        default:
            sa = at(&a, L_PROD);
            sb = at(&b, L_UNARY);
            s = tf_xasprintf("%s %s %s", sa, n->op == OP_FLOORDIV ? "//" : n->op == '*' ? "*"
                                             : n->op == '/' ? "/" : "%", sb);
            level = L_PROD;
            break;
        }
        free(sa);
        free(sb);
        *o = mk(s, level, false);
        return 0;
    }
    case N_BOOLOP: {
        const bool and_ = n->op == OP_AND;
        char *acc = NULL;
        bool boolish = true;
        for (int i = 0; i < n->n; i++) {
            struct out x;
            if (n->kid[i]->kind == N_STR || n->kid[i]->kind == N_NONE) {
                free(acc);
                return fail(T->err, TF_ERR_SCHEMA, n->kid[i]->col,
                            "%s has no truth value in tunefarm",
                            n->kid[i]->kind == N_STR ? "a string" : "None");
            }
            if (print(T, n->kid[i], &x) != 0) {
                free(acc);
                return -1;
            }
            boolish &= x.boolish;
            char *s = at(&x, and_ ? L_NOT : L_AND);
            char *next = acc ? tf_xasprintf("%s %s %s", acc, and_ ? "and" : "or", s)
                             : tf_xstrdup(s);
            free(acc);
            free(s);
            acc = next;
        }
        *o = mk(acc, and_ ? L_AND : L_OR, true);
        o->valueop = !boolish;
        return 0;
    }
    case N_NOT: {
        struct out x;
        if (n->kid[0]->kind == N_STR)
            return fail(T->err, TF_ERR_SCHEMA, n->kid[0]->col,
                        "a string has no truth value in tunefarm");
        if (print(T, n->kid[0], &x) != 0)
            return -1;
        char *s = at(&x, L_NOT);
        *o = mk(tf_xasprintf("not %s", s), L_NOT, true);
        free(s);
        return 0;
    }
    case N_CMP:
        return print_cmp(T, n, o);
    case N_IF: {
        struct out c, a, b;
        if (print(T, n->kid[0], &c) != 0)
            return -1;
        if (print(T, n->kid[1], &a) != 0) {
            free(c.s);
            return -1;
        }
        if (print(T, n->kid[2], &b) != 0) {
            free(c.s);
            free(a.s);
            return -1;
        }
        bool boolish = a.boolish && b.boolish, valueop = a.valueop || b.valueop;
        char *sc_ = at(&c, L_OR), *sa = at(&a, L_COND), *sb = at(&b, L_COND);
        *o = mk(tf_xasprintf("%s ? %s : %s", sc_, sa, sb), L_COND, boolish);
        o->valueop = valueop;
        free(sc_);
        free(sa);
        free(sb);
        return 0;
    }
    }
    return fail(T->err, TF_ERR_SCHEMA, n->col, "unsupported expression");
}

/* 0 when the translation `text` parses as a tunefarm expression, else -1 +
 * `err` at the T1 expression's first column. schema/expr has limits of its own
 * that the T1 parser's do not mirror (64 levels of parentheses, unary operators,
 * calls and ?:, where a Python expression may nest 127 unary operators): its
 * syntax error is named here, at the T1 file's expression, rather than by
 * kernel.yaml's loader, at a line of a file the user never wrote. Only syntax
 * errors count: names and enum strings are the kernel loader's to check, and
 * every name the scope knows is bound so that it does not stop the parse. */
static int check_parses(const char *text, const struct tf_t1_scope *scope,
                        struct tf_error *err)
{
    int n = scope->nparams + scope->nsizes + (scope->local ? 1 : 0), k = 0;
    struct tf_symbol *syms = tf_xcalloc((size_t)n + 1, sizeof *syms);
    for (int i = 0; i < scope->nparams; i++, k++) {
        const struct tf_t1_param *p = &scope->params[i];
        syms[k] = (struct tf_symbol){.name = p->rename ? p->rename : p->name, .slot = k};
        if (p->is_enum && p->strings)
            syms[k].enum_values = p->strings, syms[k].enum_count = p->count;
    }
    for (int i = 0; i < scope->nsizes; i++, k++)
        syms[k] = (struct tf_symbol){.name = scope->sizes[i], .slot = k};
    if (scope->local)
        syms[k] = (struct tf_symbol){.name = scope->local, .slot = k};
    struct tf_symtab tab = {.symbols = syms, .count = n};
    struct tf_error cerr = {0};
    struct tf_expr *e = tf_expr_compile(text, &tab, &cerr);
    int rc = 0;
    if (!e && cerr.code == TF_ERR_SYNTAX)
        rc = fail(err, TF_ERR_SCHEMA, 1,
                  "its translation is not a tunefarm expression: %s; write it more simply",
                  cerr.message);
    tf_expr_destroy(e);
    free(syms);
    return rc;
}

static char *print_root(const struct node *root, const struct tf_t1_scope *scope,
                        struct tf_error *err)
{
    struct printer T = {.scope = scope, .err = err};
    struct out o;
    /* operand() refuses a bare string and an and/or used for its value; print() a string */
    if (scope->numeric ? operand(&T, root, &o) : print(&T, root, &o))
        return NULL;
    if (strlen(o.s) > T1_MAX_OUT) {
        fail(err, TF_ERR_SCHEMA, 1,
             "the translation is %zu bytes long; tunefarm's expressions hold at most %d",
             strlen(o.s), T1_MAX_OUT);
        free(o.s);
        return NULL;
    }
    if (check_parses(o.s, scope, err) != 0) {
        free(o.s);
        return NULL;
    }
    return o.s;
}

char *tf_t1_translate(const char *text, const struct tf_t1_scope *scope, struct tf_error *err)
{
    struct parser P;
    struct node *root = parse(&P, text, err);
    char *out = root ? print_root(root, scope, err) : NULL;
    parser_free(&P);
    return out;
}

/* ---- values ------------------------------------------------------------------ */

struct vctx {
    struct tf_t1_values *v;
    struct tf_error *err;
};

static int add_int(struct vctx *V, int64_t x, int col)
{
    struct tf_t1_values *v = V->v;
    if (v->count > 0 && v->is_enum)
        return fail(V->err, TF_ERR_SCHEMA, col,
                    "a number among string values: one kind per parameter");
    if (v->count >= T1_MAX_VALUES)
        return fail(V->err, TF_ERR_SCHEMA, col, "more than %d values", T1_MAX_VALUES);
    /* the first values are checked here, to name the element; the rest by
     * sorting once at the end (check_distinct), a range can have a million */
    for (int i = 0; i < v->count && v->count < T1_DUP_SCAN; i++)
        if (v->ints[i] == x)
            return fail(V->err, TF_ERR_SCHEMA, col,
                        "value %" PRId64 " appears twice (tunefarm's values are distinct)", x);
    if ((v->count & (v->count - 1)) == 0)
        v->ints = tf_xrealloc(v->ints, (size_t)(v->count ? 2 * v->count : 1) * sizeof *v->ints);
    v->ints[v->count++] = x;
    return 0;
}

static int add_value(struct vctx *V, struct tf_value x, int col)
{
    if (!x.is_float)
        return add_int(V, x.u.i, col);
    double f = x.u.f;
    if (f != floor(f) || fabs(f) >= 9.2e18)
        return fail(V->err, TF_ERR_SCHEMA, col,
                    "value %g is not a whole number: tunefarm's parameters are integers or names "
                    "(scale it, or make the values names and map them in the source)", f);
    V->v->had_floats = true;
    return add_int(V, (int64_t)f, col);
}

static int add_string(struct vctx *V, const char *s, int col)
{
    struct tf_t1_values *v = V->v;
    if (v->count > 0 && !v->is_enum)
        return fail(V->err, TF_ERR_SCHEMA, col,
                    "a string among number values: one kind per parameter");
    v->is_enum = true;
    for (int i = 0; i < v->count && v->count < T1_DUP_SCAN; i++)
        if (strcmp(v->strings[i], s) == 0)
            return fail(V->err, TF_ERR_SCHEMA, col,
                        "value '%s' appears twice (tunefarm's values are distinct)", s);
    if ((v->count & (v->count - 1)) == 0)
        v->strings =
            tf_xrealloc(v->strings, (size_t)(v->count ? 2 * v->count : 1) * sizeof(char *));
    v->strings[v->count++] = tf_xstrdup(s);
    return 0;
}

/* Compile `n` (printed with `local` as slot 0, no parameters) for evaluation. */
static struct tf_expr *compile_const(const struct node *n, const char *local, bool truth,
                                     struct tf_error *err)
{
    struct tf_t1_scope scope = {.local = local, .numeric = !truth};
    char *text = print_root(n, &scope, err);
    if (!text)
        return NULL;
    struct tf_symbol sym = {.name = local, .slot = 0};
    struct tf_symtab tab = {.symbols = &sym, .count = local ? 1 : 0};
    struct tf_error cerr = {0};
    struct tf_expr *e = tf_expr_compile(text, &tab, &cerr);
    if (!e)
        fail(err, cerr.code, n->col, "%s (in '%s')", cerr.message, text);
    free(text);
    return e;
}

static int eval_const(const struct node *n, const char *local, const struct tf_value *slot,
                      struct tf_value *out, struct tf_error *err)
{
    struct tf_expr *e = compile_const(n, local, false, err);
    if (!e)
        return -1;
    struct tf_error eerr = {0};
    int rc = tf_expr_eval(e, slot, out, &eerr);
    if (rc != 0)
        fail(err, TF_ERR_SCHEMA, n->col, "%s", eerr.message);
    tf_expr_destroy(e);
    return rc;
}

/* An integer constant expression (range bounds). */
static int eval_int(const struct node *n, int64_t *out, struct tf_error *err)
{
    struct tf_value v;
    if (eval_const(n, NULL, NULL, &v, err) != 0)
        return -1;
    if (v.is_float)
        return fail(err, TF_ERR_SCHEMA, n->col, "range() takes integers, not %g", v.u.f);
    *out = v.u.i;
    return 0;
}

/* The integers of range(a[, b[, s]]) into *out (malloc'd). */
static int range_values(const struct node *call, int64_t **out, int *count, struct tf_error *err)
{
    int argc = call->n - 1;
    if (argc < 1 || argc > 3)
        return fail(err, TF_ERR_SCHEMA, call->col, "range() takes 1 to 3 arguments, got %d", argc);
    int64_t a = 0, b, s = 1;
    if (argc == 1) {
        if (eval_int(call->kid[1], &b, err) != 0)
            return -1;
    } else {
        if (eval_int(call->kid[1], &a, err) != 0 || eval_int(call->kid[2], &b, err) != 0 ||
            (argc == 3 && eval_int(call->kid[3], &s, err) != 0))
            return -1;
    }
    if (s == 0)
        return fail(err, TF_ERR_SCHEMA, call->kid[3]->col, "range() step must not be zero");
    /* the count from the unsigned span, which cannot overflow */
    uint64_t span = 0, step = s > 0 ? (uint64_t)s : -(uint64_t)s;
    if (s > 0 && b > a)
        span = (uint64_t)b - (uint64_t)a;
    else if (s < 0 && b < a)
        span = (uint64_t)a - (uint64_t)b;
    uint64_t un = span / step + (span % step != 0);
    int64_t n = un > T1_MAX_VALUES ? T1_MAX_VALUES + 1 : (int64_t)un;
    if (n > T1_MAX_VALUES)
        return fail(err, TF_ERR_SCHEMA, call->col, "range() gives %" PRIu64 " values; at most %d",
                    un, T1_MAX_VALUES);
    *out = tf_xmalloc((size_t)(n ? n : 1) * sizeof **out);
    for (int64_t i = 0; i < n; i++)
        (*out)[i] = a + i * s;
    *count = (int)n;
    return 0;
}

static bool is_call(const struct node *n, const char *name)
{
    return n->kind == N_CALL && n->kid[0]->kind == N_NAME && strcmp(n->kid[0]->text, name) == 0;
}

static int list_element(struct vctx *V, const struct node *e)
{
    if (e->kind == N_STR)
        return add_string(V, e->text, e->col);
    if (e->kind == N_TRUE || e->kind == N_FALSE) {
        V->v->had_bools = true;
        return add_int(V, e->kind == N_TRUE, e->col);
    }
    struct tf_value x;
    if (eval_const(e, NULL, NULL, &x, V->err) != 0)
        return -1;
    return add_value(V, x, e->col);
}

static int comprehension(struct vctx *V, const struct node *c)
{
    const struct node *elt = c->kid[0], *it = c->kid[1];
    const char *var = c->text;
    int64_t *items = NULL;
    int count = 0;
    if (is_call(it, "range")) {
        if (range_values(it, &items, &count, V->err) != 0)
            return -1;
    } else if (it->kind == N_LIST || it->kind == N_TUPLE) {
        items = tf_xmalloc((size_t)(it->n ? it->n : 1) * sizeof *items);
        for (int i = 0; i < it->n; i++, count++) {
            struct tf_value x;
            if (eval_const(it->kid[i], NULL, NULL, &x, V->err) != 0) {
                free(items);
                return -1;
            }
            if (x.is_float) {
                free(items);
                return fail(V->err, TF_ERR_SCHEMA, it->kid[i]->col,
                            "a comprehension over numbers that are not integers");
            }
            items[i] = x.u.i;
        }
    } else {
        return fail(V->err, TF_ERR_SCHEMA, it->col,
                    "a comprehension over range(...) or a written-out list only");
    }
    if (elt->kind == N_STR) {
        free(items);
        return fail(V->err, TF_ERR_SCHEMA, elt->col, "a comprehension of strings is not supported");
    }
    int rc = -1;
    int nconds = c->n - 2;
    struct tf_expr *e = compile_const(elt, var, false, V->err);
    struct tf_expr **conds = tf_xcalloc((size_t)(nconds ? nconds : 1), sizeof *conds);
    if (!e)
        goto out;
    for (int k = 0; k < nconds; k++)
        if ((conds[k] = compile_const(c->kid[2 + k], var, true, V->err)) == NULL)
            goto out;
    for (int i = 0; i < count; i++) {
        struct tf_value slot = tf_int(items[i]), x;
        struct tf_error eerr = {0};
        bool keep = true;
        for (int k = 0; k < nconds && keep; k++)
            if (tf_expr_eval_bool(conds[k], &slot, &keep, &eerr) != 0) {
                fail(V->err, TF_ERR_SCHEMA, c->kid[2 + k]->col, "%s (%s = %" PRId64 ")",
                     eerr.message, var, items[i]);
                goto out;
            }
        if (!keep)
            continue;
        if (tf_expr_eval(e, &slot, &x, &eerr) != 0) {
            fail(V->err, TF_ERR_SCHEMA, elt->col, "%s (%s = %" PRId64 ")", eerr.message, var,
                 items[i]);
            goto out;
        }
        if (add_value(V, x, elt->col) != 0)
            goto out;
    }
    rc = 0;
out:
    for (int k = 0; k < nconds; k++)
        tf_expr_destroy(conds[k]);
    free(conds);
    tf_expr_destroy(e);
    free(items);
    return rc;
}

static int cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The values past the first T1_DUP_SCAN are distinct: one sort of a copy. */
static int check_distinct(const struct tf_t1_values *v, int col, struct tf_error *err)
{
    if (v->count < T1_DUP_SCAN)
        return 0;
    size_t n = (size_t)v->count, size = v->is_enum ? sizeof(char *) : sizeof(int64_t);
    void *copy = tf_xmalloc(n * size);
    memcpy(copy, v->is_enum ? (void *)v->strings : (void *)v->ints, n * size);
    qsort(copy, n, size, v->is_enum ? cmp_str : cmp_int64);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++) {
        if (v->is_enum && strcmp(((char **)copy)[i], ((char **)copy)[i - 1]) == 0)
            rc = fail(err, TF_ERR_SCHEMA, col,
                      "value '%s' appears twice (tunefarm's values are distinct)",
                      ((char **)copy)[i]);
        else if (!v->is_enum && ((int64_t *)copy)[i] == ((int64_t *)copy)[i - 1])
            rc = fail(err, TF_ERR_SCHEMA, col,
                      "value %" PRId64 " appears twice (tunefarm's values are distinct)",
                      ((int64_t *)copy)[i]);
    }
    free(copy);
    return rc;
}

int tf_t1_values(const char *text, struct tf_t1_values *out, struct tf_error *err)
{
    memset(out, 0, sizeof *out);
    struct parser P;
    struct node *root = parse(&P, text, err);
    struct vctx V = {.v = out, .err = err};
    int rc = -1;
    if (!root)
        goto done;
    if ((is_call(root, "list") || is_call(root, "tuple")) && root->n == 2)
        root = root->kid[1];
    if (root->kind == N_LIST || root->kind == N_TUPLE) {
        for (int i = 0; i < root->n; i++)
            if (list_element(&V, root->kid[i]) != 0)
                goto done;
    } else if (is_call(root, "range")) {
        int64_t *items = NULL;
        int count = 0;
        if (range_values(root, &items, &count, err) != 0)
            goto done;
        out->generated = true;
        for (int i = 0; i < count; i++)
            if (add_int(&V, items[i], root->col) != 0) {
                free(items);
                goto done;
            }
        free(items);
    } else if (root->kind == N_COMP) {
        out->generated = true;
        if (comprehension(&V, root) != 0)
            goto done;
    } else if (list_element(&V, root) != 0) {
        goto done;
    }
    if (out->count == 0) {
        fail(err, TF_ERR_SCHEMA, 1, "no values (a parameter needs at least one)");
        goto done;
    }
    if (check_distinct(out, root->col, err) != 0)
        goto done;
    rc = 0;
done:
    parser_free(&P);
    if (rc != 0)
        tf_t1_values_free(out);
    return rc;
}

void tf_t1_values_free(struct tf_t1_values *v)
{
    for (int i = 0; v->strings && i < v->count; i++)
        free(v->strings[i]);
    free(v->strings);
    free(v->ints);
    memset(v, 0, sizeof *v);
}
