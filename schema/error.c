/* error.c - the error context and the few allocation helpers everything uses.
 *
 * Errors are values: a fallible call fills a struct tf_error and returns -1 or
 * NULL, and the caller decides whether to report, record or propagate. Memory
 * exhaustion is the one exception: it is treated as a broken invariant and
 * dies, because no caller can do anything sensible about it. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void error_vset(struct tf_error *err, enum tf_error_code code, const char *fmt,
                       va_list ap)
{
    /* Into a copy first: callers prefix an error with its own message
     * ("size of '%s': %s", name, err->message), and vsnprintf may not read
     * what it writes (it came out as "size of 'x': size of 'x': low in ..."). */
    char message[sizeof err->message];
    vsnprintf(message, sizeof message, fmt, ap);
    memcpy(err->message, message, sizeof message);
    err->code = code;
}

int tf_error_set(struct tf_error *err, enum tf_error_code code, const char *fmt, ...)
{
    if (err == NULL)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, code, fmt, ap);
    va_end(ap);
    err->file[0] = '\0';
    err->line = err->column = 0;
    return -1;
}

int tf_error_at(struct tf_error *err, enum tf_error_code code, const char *file, int line,
                int column, const char *fmt, ...)
{
    if (err == NULL)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, code, fmt, ap);
    va_end(ap);
    tf_strlcpy(err->file, file ? file : "", sizeof err->file);
    err->line = line;
    err->column = column;
    return -1;
}

void tf_error_clear(struct tf_error *err)
{
    if (err == NULL)
        return;
    memset(err, 0, sizeof *err);
}

void tf_error_print(const struct tf_error *err, const char *prog, void *out)
{
    FILE *f = out ? out : stderr;
    if (prog)
        fprintf(f, "%s: ", prog);
    if (err->file[0] && err->line > 0)
        fprintf(f, "%s:%d:%d: ", err->file, err->line, err->column);
    else if (err->file[0])
        fprintf(f, "%s: ", err->file);
    fprintf(f, "error: %s\n", err->message[0] ? err->message : "unknown error");
}

_Noreturn void tf_die_at(const char *src, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "tunefarm: internal error at %s:%d: ", src, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

void *tf_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        tf_die("out of memory allocating %zu bytes", n);
    return p;
}

void *tf_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL)
        tf_die("out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

void *tf_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        tf_die("out of memory reallocating %zu bytes", n);
    return q;
}

char *tf_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = tf_xmalloc(n);
    memcpy(d, s, n);
    return d;
}

char *tf_xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        tf_die("vsnprintf failed on \"%s\"", fmt);
    char *s = tf_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void tf_strlcpy(char *dst, const char *src, size_t cap)
{
    if (cap == 0)
        return;
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}
