/* compile.h - the worker's compile pool: variants compiled ahead of the runner,
 * in N compiler processes (compiler.h), through the content-addressed cache (cache.h). */
#ifndef TF_COMPILE_H
#define TF_COMPILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../schema/error.h"
#include "../schema/kernel.h"
#include "../schema/result.h"
#include "backend.h"

struct tf_compiled {
    int status;                   /* TF_STATUS_OK or TF_STATUS_COMPILE_ERROR */
    char binary_path[4096];       /* the cached binary (valid if ok) */
    double compile_time;          /* seconds; 0 if it came from the cache */
    int cached;                   /* 1 if found in the cache (a good or a known-bad variant) */
    int32_t registers;            /* -1 unknown (always on the host) */
    int64_t shared_bytes, spill_bytes;
    int32_t warnings;             /* the compiler's warnings (ok only); -1 unknown */
    char first_warning[TF_WARNING_LEN]; /* the first of them, "" if none */
    char message[TF_MESSAGE_LEN]; /* first meaningful line of the compiler log if not ok */
    /* Not ok because the node's storage failed (a full disk or quota, a file
     * size limit: the cache's folder or TMPDIR), not because of the variant:
     * it never had its try, so it must not be archived as a compile_error. */
    int storage_trouble;
};

/* compiled: compiler runs; cached: cache hits (good or bad); failed: variants that
 * ended as compile_error; compile_seconds: sum of compiler run times;
 * wall_seconds_busy: wall time with at least one compile running (so
 * compile_seconds / wall_seconds_busy is the achieved parallelism). */
struct tf_compile_stats {
    uint64_t compiled, cached, failed;
    double compile_seconds;
    double wall_seconds_busy;
};

struct tf_compile_pool;

/* Start `nprocs` (>= 1) compile slots for `be` targeting `arch`, caching under
 * `cache_dir` (created if missing). Each slot compiles in its own child
 * `exe __compiler BE` (started on its first cache miss, restarted after a crash
 * or a timeout); `exe` NULL compiles in-process on the slots' threads instead.
 * A compile may take TUNEFARM_COMPILE_TIMEOUT seconds (tf_job_compile_timeout).
 * NULL + err on failure (including an `exe` that is not executable, and a
 * TUNEFARM_COMPILE_TIMEOUT or TUNEFARM_COMPILE_MEMORY that is not a number). */
struct tf_compile_pool *tf_compile_pool_create(const char *exe, const struct tf_backend *be,
                                               const char *arch, const char *cache_dir,
                                               int nprocs, struct tf_error *err);
/* Finish queued work, stop the children, join the threads, free; accepts NULL.
 * Unwaited results are dropped. */
void tf_compile_pool_destroy(struct tf_compile_pool *p);
/* Queue configuration `config` of `k` (which must outlive the wait) for its
 * problem 0; returns its ticket. Only for kernels whose binary does not depend
 * on the problem (no `defines:`); tf_compile_submit_for otherwise. */
uint64_t tf_compile_submit(struct tf_compile_pool *p, const struct tf_kernel *k, uint64_t config);
/* Queue configuration `config` of `k` for problem `problem` of `k`: the sizes
 * its `defines:` name are compiled in (kernel.md); returns its ticket. */
uint64_t tf_compile_submit_for(struct tf_compile_pool *p, const struct tf_kernel *k, int problem,
                               uint64_t config);
/* Jobs waiting for a compile slot, and slots compiling now, into *queued, *active. */
void tf_compile_pool_load(struct tf_compile_pool *p, int *queued, int *active);
/* Block until `ticket` is done and copy its result to `out`; each ticket is waited once. */
void tf_compile_wait(struct tf_compile_pool *p, uint64_t ticket, struct tf_compiled *out);
/* Block until one of `tickets` (n >= 1, each submitted and not yet waited) is done;
 * returns the index of the first done one in their order. Waits for none of them. */
int tf_compile_wait_any(struct tf_compile_pool *p, const uint64_t *tickets, int n);
/* The same without blocking: the index of the first done one, or -1 if none is done yet. */
int tf_compile_ready_any(struct tf_compile_pool *p, const uint64_t *tickets, int n);
/* Compile (or find cached) `k`'s host C reference with tf_backend_host, synchronously,
 * and write the .so path into `path` (cap bytes). On a cache miss it compiles in
 * a compiler process `exe __compiler host` of its own (in-process without an
 * `exe`), under the pool's deadline and memory limit, like a variant. -1 + err
 * if it does not compile (a timeout or running out of memory included, neither
 * cached); err->code is TF_ERR_IO only when the node's storage failed (a full
 * disk or quota, a file size limit: tf_compiled.storage_trouble), not the reference. */
int tf_compile_reference(struct tf_compile_pool *p, const struct tf_kernel *k, char *path,
                         size_t cap, struct tf_error *err);
/* A snapshot of the pool's counters. */
void tf_compile_get_stats(struct tf_compile_pool *p, struct tf_compile_stats *s);
/* Seconds one compile may take in a child before it is killed (default
 * TUNEFARM_COMPILE_TIMEOUT, tf_job_compile_timeout); applies to compiles that
 * start afterwards. */
void tf_compile_pool_set_deadline(struct tf_compile_pool *p, double seconds);
/* The pids of the compiler children alive now into `pids` (at most `cap`); returns how many. */
int tf_compile_pool_pids(struct tf_compile_pool *p, pid_t *pids, int cap);
/* Compiler children started so far: the slots' (restarts included) and the references'
 * (one a compiled reference); 0 while every lookup hit the cache. */
int tf_compile_pool_starts(struct tf_compile_pool *p);

/* The first meaningful line of a compiler log (the first containing "error",
 * else the first non-blank one) into `out` (cap bytes). */
void tf_compile_log_summary(const char *log, char *out, size_t cap);
/* The number of warnings in a compiler log (NULL: none): lines where the word
 * "warning" is followed by ':' or '#' (cc and clang "x.c:3:5: warning: ...",
 * NVRTC "x.cu(3): warning #177-D: ...", ptxas "ptxas warning : ..."), and the
 * first of those lines into `first` (cap bytes; "" if none). */
int tf_compile_log_warnings(const char *log, char *first, size_t cap);

#endif
