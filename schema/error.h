/* error.h - the error context every fallible call fills (libyaml's habit).
 *
 * A fallible function takes a `struct tf_error *` as its last argument, fills it
 * on failure and returns non-zero. The message says what was expected, what was
 * found and what to do; `file`, `line` and `column` (1-based, 0 = unknown) point
 * at the input that caused it. `die()` is only for broken invariants. */
#ifndef TF_ERROR_H
#define TF_ERROR_H

#include <stddef.h>

enum tf_error_code {
    TF_ERR_NONE = 0,
    TF_ERR_IO,        /* a file could not be read or written */
    TF_ERR_SYNTAX,    /* YAML or expression syntax */
    TF_ERR_SCHEMA,    /* well-formed input that breaks the contract */
    TF_ERR_EVAL,      /* an expression failed at evaluation time */
    TF_ERR_HDF5,      /* the HDF5 library refused an operation */
    TF_ERR_MPI,       /* an MPI call failed or a peer sent garbage */
    TF_ERR_BACKEND,   /* a vendor runtime or compiler failed */
    TF_ERR_SYSTEM,    /* fork/spawn/pipe/signal and friends */
    TF_ERR_NOMEM,
    TF_ERR_INTERRUPTED /* stopped on request (a signal) before it finished */
};

struct tf_error {
    enum tf_error_code code;
    char file[512];
    int line, column;
    char message[1024];
};

/* Fill `err` (if not NULL) with code and printf-style message; returns -1. */
int tf_error_set(struct tf_error *err, enum tf_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* As tf_error_set, with a location; `file` may be NULL. Returns -1. */
int tf_error_at(struct tf_error *err, enum tf_error_code code, const char *file, int line,
                int column, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Reset `err` to "no error". */
void tf_error_clear(struct tf_error *err);
/* Write "file:line:col: error: message" (or "error: message") to `out`, a newline after. */
void tf_error_print(const struct tf_error *err, const char *prog, void *out /* FILE* */);
/* Print "tunefarm: internal error: ..." with the source location and abort. */
_Noreturn void tf_die_at(const char *src, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define tf_die(...) tf_die_at(__FILE__, __LINE__, __VA_ARGS__)

/* Allocation that dies on exhaustion: a farm that cannot allocate a few bytes is broken. */
void *tf_xmalloc(size_t n);
void *tf_xcalloc(size_t n, size_t size);
void *tf_xrealloc(void *p, size_t n);
char *tf_xstrdup(const char *s);
/* printf into a new string. */
char *tf_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Copy `src` into `dst` of capacity `cap`, always NUL-terminated, truncating. */
void tf_strlcpy(char *dst, const char *src, size_t cap);

#endif
