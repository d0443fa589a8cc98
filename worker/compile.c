/* compile.c - the compile pool: a FIFO queue served by N compiler processes,
 * through the cache.
 *
 * The worker submits configurations as soon as it receives work and waits for
 * them in order as the runner becomes free, so compiling overlaps measuring.
 * Each job builds the variant's defines, computes its cache key and looks in
 * the cache: a good binary (.so/.cubin + .meta) or a known-bad variant (.err,
 * with .log holding the full compiler output) is answered without compiling.
 * On a miss the backend compiles into a temporary name in the cache folder and
 * the binary is renamed into place only when complete, so concurrent ranks on
 * a shared filesystem never load half a file. Before compiling, a job makes
 * the variant's in-progress mark (<key>.busy, O_EXCL); a job that finds a mark
 * waits for that compile's answer instead of repeating it - a compile rank
 * ahead of this one, or a rank on another node of a shared cache, is then
 * never paid twice (marks are kept fresh while their compile runs; see
 * "in-progress marks" below for staleness and failures). Machinery failures (the compiler
 * cannot be spawned, crashed or timed out) are reported as compile_error but never
 * cached: they say nothing about the variant. The compiling itself happens
 * in compiler processes (compiler.h), because in-process compilers such as
 * NVRTC serialise inside a process: each of the N threads owns one child,
 * spawned on the thread's first cache miss and respawned after it crashed or
 * was killed for overrunning the deadline, and shut down by the thread that
 * spawned it (the child's parent-death signal follows that thread). Without
 * an executable the threads call the backend in-process. A kernel's
 * reference compiles the same way, in a compiler process of its own under the
 * same deadline and memory limit (tf_compile_reference). Only the cache
 * lookup and the rename into place happen in the parent, so a child writes
 * nothing but a temporary file. Jobs live in one list from
 * submit until their ticket is waited; the condition variable `done` wakes
 * waiters, `work` wakes idle threads. Stats count compiler time and the wall
 * time during which any compile ran, which is what "compile parallelism" in a
 * run's summary is made of. */
#include "compile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../schema/bundle.h"
#include "../schema/hash.h"
#include "../schema/job.h"
#include "../schema/status.h"
#include "cache.h"
#include "compiler.h"

#ifndef TF_LIB_DIR /* the Makefile sets it from LIBDIR */
#define TF_LIB_DIR "/usr/local/lib/tunefarm"
#endif

struct compile_job {
    uint64_t ticket;
    const struct tf_kernel *kernel;
    int problem; /* whose sizes the kernel's `defines:` compile in */
    uint64_t config;
    int state; /* 0 queued, 1 running, 2 done */
    struct tf_compiled result;
    struct compile_job *next_queued;
    struct compile_job *next_all;
};

/* The digest of the files under a kernel's include paths as this node last
 * read them, and their stamp then (see "include paths" below). */
struct includes_memo {
    const struct tf_kernel *kernel;
    char digest[65]; /* "" when the kernel has no include paths */
    char *stamp;     /* tf_include_stamp taken before the digest; NULL: none to trust */
    double checked;  /* when the stamp was last found unchanged (now_seconds) */
};

/* An in-progress mark a compile owns (see "in-progress marks" below). */
struct mark {
    char path[4200];
    dev_t dev;
    ino_t ino;
};

/* One thread and its compiler process (NULL when compiling in-process). */
struct slot {
    struct tf_compile_pool *pool;
    pthread_t thread;
    struct tf_compiler *compiler; /* touched by the slot's thread only */
    pid_t pid;                    /* its child's pid or -1, under the pool's mutex */
    struct mark mark;             /* the mark its compile owns, if marked (pool's mutex) */
    int marked;
};

struct tf_compile_pool {
    const struct tf_backend *be;
    char *exe;          /* NULL: compile in-process */
    char *arch;
    char *cache_dir;
    int nslots;         /* threads running */
    struct slot *slots;
    double deadline;    /* seconds one compile may take in a child */
    uint64_t memory_limit; /* each compiler process's RLIMIT_DATA, 0: none */
    int starts;         /* compiler processes started */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    struct compile_job *queue_head, *queue_tail; /* FIFO of queued jobs */
    struct compile_job *all;                     /* every job not yet waited */
    uint64_t next_ticket;
    int stopping;
    int active;         /* compiles running now */
    double busy_since;  /* when active went 0 -> 1 */
    struct tf_compile_stats stats;
    pthread_t keeper;   /* mark_keeper */
    int keeper_running, keeper_stop;
    pthread_cond_t keeper_wake;
    struct includes_memo *includes; /* one per kernel compiled so far (under mu) */
    int nincludes;
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tf_compile_log_summary(const char *log, char *out, size_t cap)
{
    const char *first = NULL, *hit = NULL;
    for (const char *line = log; line && *line;) {
        size_t n = strcspn(line, "\n");
        int blank = 1;
        for (size_t i = 0; i < n; i++)
            if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
                blank = 0;
        if (!blank && first == NULL)
            first = line;
        for (size_t i = 0; !blank && i + 5 <= n; i++)
            if (strncasecmp(line + i, "error", 5) == 0) {
                hit = line;
                break;
            }
        if (hit)
            break;
        line += n;
        if (*line == '\n')
            line++;
    }
    const char *pick = hit ? hit : first;
    if (pick == NULL) {
        tf_strlcpy(out, "compiler failed without a message", cap);
        return;
    }
    size_t n = strcspn(pick, "\n\r");
    if (cap == 0)
        return;
    /* Cut to fit whole UTF-8 characters: a kernel's #error may be in any
     * script, and half a character would go on into the archive, the JSON
     * export and the terminal as invalid text. Back from the cut over the
     * continuation bytes (10xxxxxx) to the first byte of the character it
     * splits, and cut before that. */
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)pick[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(out, pick, n);
    out[n] = '\0';
}

int tf_compile_log_warnings(const char *log, char *first, size_t cap)
{
    int count = 0;
    if (cap > 0)
        first[0] = '\0';
    for (const char *line = log; line && *line;) {
        const size_t n = strcspn(line, "\n");
        int hit = 0;
        for (size_t i = 0; !hit && i + 7 <= n; i++) {
            if (strncasecmp(line + i, "warning", 7) != 0 ||
                (i > 0 && (isalnum((unsigned char)line[i - 1]) || line[i - 1] == '_')))
                continue;
            size_t j = i + 7;
            while (j < n && line[j] == ' ')
                j++;
            hit = j < n && (line[j] == ':' || line[j] == '#');
        }
        if (hit && count++ == 0 && cap > 0) {
            size_t len = n;
            while (len > 0 && line[len - 1] == '\r')
                len--;
            /* Cut to fit whole UTF-8 characters (cc quotes names with U+2018). */
            if (len > cap - 1) {
                len = cap - 1;
                while (len > 0 && ((unsigned char)line[len] & 0xC0) == 0x80)
                    len--;
            }
            snprintf(first, cap, "%.*s", (int)len, line);
        }
        line += n;
        if (*line == '\n')
            line++;
    }
    return count;
}

/* Everything one compile needs, for kernels and references alike. */
struct variant {
    const struct tf_backend *be;
    const char *cache_dir;
    struct tf_compile_input in;
    struct slot *slot; /* compile in its child; NULL: in-process */
    struct slot *home; /* the pool slot compiling it, whose keeper keeps its mark fresh */
    const struct tf_kernel *kernel; /* whose include paths it reads; NULL: none */
    const char *includes;           /* their digest ("" none), part of the cache key */
    struct tf_compile_pool *pool;   /* whose memo of them to check against (kernels) */
};

/* Compile `in` in the slot's child, started first if needed, publishing its
 * pid for tf_compile_pool_pids. Same contract as backend->compile, plus
 * *seconds, the compile time the child measured. */
static int slot_compile(struct slot *s, const struct tf_compile_input *in,
                        struct tf_compile_output *out, double *seconds, struct tf_error *err)
{
    struct tf_compile_pool *p = s->pool;
    const int before = tf_compiler_starts(s->compiler);
    const int started = tf_compiler_start(s->compiler, err);
    pthread_mutex_lock(&p->mu);
    p->starts += tf_compiler_starts(s->compiler) - before;
    s->pid = tf_compiler_pid(s->compiler);
    const double deadline = p->deadline;
    pthread_mutex_unlock(&p->mu);
    if (started != 0) {
        out->log = NULL;
        return -1;
    }
    const int rc = tf_compiler_compile(s->compiler, in, deadline, out, seconds, err);
    pthread_mutex_lock(&p->mu);
    s->pid = tf_compiler_pid(s->compiler); /* -1 after a crash or a timeout */
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* The line of compiler log `log` that says the node, not the code, is at
 * fault (a full disk or quota, a file size limit, no memory, a compiler stage
 * killed: gcc then exits 1 with "fatal error: Killed signal terminated program
 * cc1"), or NULL. Only the compiler's own lines count: not the lines of the
 * kernel's source it echoes under a diagnostic (" 96 | ...", "    |  ^~~"),
 * where the same words may be the kernel's text. */
static const char *environment_trouble(const char *log)
{
    /* "out of memory" too: under the pool's memory limit (compiler.h) a
     * compile that needs more fails that way, and the limit is not in the
     * cache key, so a verdict kept would outlive a raised limit. */
    static const char *const signs[] = {"No space left on device", "Disk quota exceeded",
                                        "File too large", "Cannot allocate memory",
                                        "virtual memory exhausted", "out of memory",
                                        "std::bad_alloc", "Too many open files",
                                        "Resource temporarily unavailable",
                                        "signal terminated program"};
    for (const char *line = log; line != NULL && *line != '\0';) {
        const size_t len = strcspn(line, "\n");
        const char *text = line + strspn(line, " \t");
        const char *bar = text + strspn(text, "0123456789");
        const bool echoed = *bar == '|' || (bar > text && bar[0] == ' ' && bar[1] == '|');
        for (size_t i = 0; !echoed && i < sizeof signs / sizeof *signs; i++) {
            const char *at = strstr(line, signs[i]);
            if (at != NULL && at < line + len)
                return line;
        }
        line += len;
        line += *line == '\n';
    }
    return NULL;
}

/* The suffix of a failure that is the node's, not the variant's; a waiter
 * reads it back from the failure note (mark_failure). */
#define NODE_TROUBLE " (not cached: the node's trouble)"
/* What of a message fits before that suffix, so that the suffix is whole. */
#define NODE_ROOM ((int)(TF_MESSAGE_LEN - sizeof NODE_TROUBLE))

/* True if `text` names a storage failure: a full disk or quota, a file size
 * limit. */
static bool storage_words(const char *text)
{
    return strstr(text, "No space left on device") != NULL ||
           strstr(text, "Disk quota exceeded") != NULL || strstr(text, "File too large") != NULL;
}

/* Free space (or a file size limit) below this is the node's trouble. No sane
 * binary needs 64 MiB, and a variant that fills a larger disk by itself (a
 * huge initialised array) has its space back once the compiler deletes its
 * output: it fails alone, as a compile_error, instead of stopping every run
 * that meets it (a kernel costs its own configuration and nothing else). */
#define NODE_SPACE_MIN (UINT64_C(64) << 20)

/* True if the filesystem holding `dir` has less than NODE_SPACE_MIN free. */
static bool space_short(const char *dir)
{
    struct statvfs fs;
    return dir != NULL && dir[0] != '\0' && statvfs(dir, &fs) == 0 &&
           (uint64_t)fs.f_bavail * fs.f_frsize < NODE_SPACE_MIN;
}

/* True if `text` (our own error, or a line the compiler itself wrote) says
 * the node's storage failed, so the variant has had no try: a full quota; a
 * full disk where the compile cache `cache_dir` or TMPDIR (the host
 * compiler's sources and temporaries) is still short of space; a file size
 * limit under NODE_SPACE_MIN. */
static bool storage_trouble(const char *text, const char *cache_dir)
{
    if (strstr(text, "Disk quota exceeded") != NULL)
        return true;
    if (strstr(text, "No space left on device") != NULL) {
        const char *tmp = getenv("TMPDIR");
        return space_short(cache_dir) || space_short(tmp != NULL && tmp[0] ? tmp : "/tmp");
    }
    struct rlimit fsize;
    return strstr(text, "File too large") != NULL && getrlimit(RLIMIT_FSIZE, &fsize) == 0 &&
           fsize.rlim_cur != RLIM_INFINITY && (uint64_t)fsize.rlim_cur < NODE_SPACE_MIN;
}

/* True if `text` ends with `suffix`. */
static bool ends_with(const char *text, const char *suffix)
{
    const size_t n = strlen(text), k = strlen(suffix);
    return n >= k && strcmp(text + n - k, suffix) == 0;
}

/* True if the cache file `path` may be trusted (its lstat into *st): a plain
 * file (not a link) that only this user (or root) can write
 * (tf_cache_only_mine), in a folder only this user can write. A binary in the
 * cache is loaded and run: anyone who could put one there could run code as
 * this user. */
static bool entry_trusted(const char *path, struct stat *st)
{
    if (lstat(path, st) != 0 || !S_ISREG(st->st_mode) || !tf_cache_only_mine(st))
        return false;
    char folder[4200];
    tf_strlcpy(folder, path, sizeof folder);
    char *slash = strrchr(folder, '/');
    if (slash != NULL)
        *slash = '\0';
    struct stat dir;
    return slash == NULL ||
           (lstat(folder, &dir) == 0 && S_ISDIR(dir.st_mode) && tf_cache_only_mine(&dir));
}

/* A cached answer for the variant whose files are `binary`, `meta` and `errf`:
 * a good binary (with its metadata) or a known-bad variant's message into
 * `out`; 0 if the cache has neither. */
static int cache_answer(const char *binary, const char *meta, const char *errf,
                        struct tf_compiled *out)
{
    /* An entry that cannot be trusted, or a binary of another size than its
     * .meta records (damaged, swapped), is a miss: compiled again, its file
     * replaced by the rename. */
    struct tf_cache_meta m = {.binary_size = -1};
    struct stat st;
    const bool trusted = entry_trusted(binary, &st) && access(binary, R_OK) == 0;
    if (trusted)
        tf_cache_read_meta(meta, &m); /* none: every field unknown, no size to compare */
    if (trusted && (m.binary_size < 0 || st.st_size == m.binary_size)) {
        out->status = TF_STATUS_OK;
        out->cached = 1;
        out->registers = m.registers;
        out->shared_bytes = m.shared_bytes;
        out->spill_bytes = m.spill_bytes;
        out->warnings = m.warnings;
        tf_strlcpy(out->first_warning, m.first_warning, sizeof out->first_warning);
        return 1;
    }
    if (entry_trusted(errf, &st) &&
        tf_cache_read_text(errf, out->message, sizeof out->message) == 0) {
        out->message[strcspn(out->message, "\n")] = '\0';
        out->cached = 1;
        out->binary_path[0] = '\0';
        return 1;
    }
    return 0;
}

/* ---- in-progress marks ----
 *
 * <key>.busy says "host pid" is compiling the variant now. Its owner's pool
 * touches it every MARK_REFRESH_SECONDS (mark_keeper), so a mark left
 * untouched for MARK_STALE_SECONDS has lost its owner (killed, its node down)
 * and is taken over; so is one whose owner, on this host, no longer exists.
 * A compile that fails for a machinery reason (crash, timeout) rewrites the
 * mark as "failed MESSAGE" and stops touching it: ranks waiting meanwhile take
 * that as their answer rather than each running into the same timeout in
 * turn, and the note ages out, so a later run tries again. */
#define MARK_REFRESH_SECONDS 5
#define MARK_STALE_SECONDS 30.0
#define MARK_POLL_MAX_NS 50000000L /* waiting polls back off from 5 ms to this */

/* 1 if the mark `busy` (as lstat saw it in `st`) has lost its owner. */
static int mark_stale(const char *busy, const struct stat *st)
{
    char text[320], host[256] = "", owner[256];
    long pid = 0;
    if (!S_ISREG(st->st_mode))
        return 1; /* not a mark of ours at all (a directory, a link) */
    /* Older than MARK_STALE_SECONDS, or touched more than that in the future
     * (a clock stepped back, a file server's clock ahead): no owner keeps it. */
    if (fabs(difftime(time(NULL), st->st_mtime)) > MARK_STALE_SECONDS)
        return 1;
    if (tf_cache_read_text(busy, text, sizeof text) != 0 ||
        sscanf(text, "%255s %ld", owner, &pid) != 2 || pid <= 0)
        return 0; /* being written, or a failure note: only its age counts */
    gethostname(host, sizeof host - 1);
    return strcmp(owner, host) == 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Remove the stale mark `busy` that lstat saw as `st`. It is first moved aside
 * under a name of our own: if what moved is not that mark (another waiter
 * took it over first and made a fresh one), the fresh one is put back.
 * 0: the path is free now; -1: the mark cannot be removed (a read-only cache). */
static int mark_take_over(const char *busy, const struct stat *st)
{
    char aside[4300];
    struct stat moved;
    tf_cache_temp_name(busy, aside, sizeof aside);
    if (rename(busy, aside) != 0)
        return errno == ENOENT ? 0 : -1;
    if (lstat(aside, &moved) == 0 && (moved.st_dev != st->st_dev || moved.st_ino != st->st_ino))
        if (link(aside, busy) != 0) {
            /* fails harmlessly if a newer mark exists: that one stands */
        }
    if (remove(aside) != 0 && errno != ENOENT)
        return -1;
    return 0;
}

/* A failure note in the mark `busy` as a compile_error answer in `out`; 0 if
 * the mark is an owner's "host pid" instead. */
static int mark_failure(const char *busy, struct tf_compiled *out)
{
    char text[TF_MESSAGE_LEN + 16];
    if (tf_cache_read_text(busy, text, sizeof text) != 0 || strncmp(text, "failed ", 7) != 0)
        return 0;
    text[strcspn(text, "\n")] = '\0';
    out->status = TF_STATUS_COMPILE_ERROR;
    out->binary_path[0] = '\0';
    tf_strlcpy(out->message, text + 7, sizeof out->message);
    /* The owner's storage failed: so does ours (the same cache, or a node
     * like it); the variant has had no try. */
    out->storage_trouble = ends_with(out->message, NODE_TROUBLE) && storage_words(out->message);
    return 1;
}

enum claim {
    CLAIM_OWNED,    /* we made the mark: compile, then release it */
    CLAIM_ANSWERED, /* another process compiled it (or failed to) meanwhile: `out` says */
    CLAIM_UNMARKED  /* no mark can be made (read-only or full cache): compile anyway */
};

/* Make the in-progress mark `busy` ("host pid") for a variant about to be
 * compiled, or, while another process holds it (a compile rank ahead of this
 * one, a rank on another node sharing the cache), wait for that compile's
 * answer instead of paying for the same compile twice. */
static enum claim claim_variant(const char *busy, const char *binary, const char *meta,
                                const char *errf, struct tf_compiled *out, struct mark *mine)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        int fd = open(busy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            char host[256] = "", line[320];
            struct stat st;
            gethostname(host, sizeof host - 1);
            int n = snprintf(line, sizeof line, "%s %ld\n", host, (long)getpid());
            int bad = write(fd, line, (size_t)n) != n || fstat(fd, &st) != 0;
            bad |= close(fd) != 0;
            if (bad) { /* a full disk: no mark, but no reason not to compile */
                unlink(busy);
                return CLAIM_UNMARKED;
            }
            tf_strlcpy(mine->path, busy, sizeof mine->path);
            mine->dev = st.st_dev;
            mine->ino = st.st_ino;
            /* It may have been answered between our lookup and the mark. */
            if (cache_answer(binary, meta, errf, out)) {
                unlink(busy);
                return CLAIM_ANSWERED;
            }
            return CLAIM_OWNED;
        }
        if (errno != EEXIST)
            return CLAIM_UNMARKED;
        struct timespec pause = {0, 5000000};
        struct stat st;
        while (lstat(busy, &st) == 0) {
            if (cache_answer(binary, meta, errf, out))
                return CLAIM_ANSWERED;
            if (mark_stale(busy, &st)) {
                if (mark_take_over(busy, &st) != 0)
                    return CLAIM_UNMARKED;
                break;
            }
            if (mark_failure(busy, out)) {
                if (!out->storage_trouble)
                    return CLAIM_ANSWERED;
                /* Its owner's disk was full (a note of a tunefarm that kept
                 * them): that says nothing of the variant, nor of our disk. */
                out->storage_trouble = 0;
                out->message[0] = '\0';
                return CLAIM_UNMARKED;
            }
            nanosleep(&pause, NULL);
            if ((pause.tv_nsec *= 2) > MARK_POLL_MAX_NS)
                pause.tv_nsec = MARK_POLL_MAX_NS;
        }
        if (cache_answer(binary, meta, errf, out))
            return CLAIM_ANSWERED;
    }
    return CLAIM_UNMARKED; /* contended past reason: compiling twice is only slower */
}

/* Remove our mark, if it is still ours (one taken over as stale is not). */
static void mark_release(const struct mark *mine)
{
    struct stat st;
    if (lstat(mine->path, &st) == 0 && st.st_dev == mine->dev && st.st_ino == mine->ino)
        unlink(mine->path);
}

/* Replace our mark by the failure note "failed MESSAGE" (tf_cache_write_file
 * renames it over the mark: a waiter reads either the mark or the whole note). */
static void mark_fail(const struct mark *mine, const char *message)
{
    char text[TF_MESSAGE_LEN + 16];
    struct stat st;
    if (lstat(mine->path, &st) != 0 || st.st_dev != mine->dev || st.st_ino != mine->ino)
        return;
    snprintf(text, sizeof text, "failed %s\n", message);
    if (tf_cache_write_file(mine->path, text, strlen(text), NULL) != 0)
        unlink(mine->path);
}

/* Have the pool's keeper touch `mine` while `home`'s compile runs (NULL: a
 * compile outside the slots, whose mark is not kept fresh). */
static void mark_keep(struct slot *home, const struct mark *mine)
{
    if (home == NULL)
        return;
    pthread_mutex_lock(&home->pool->mu);
    home->mark = *mine;
    home->marked = 1;
    pthread_mutex_unlock(&home->pool->mu);
}

static void mark_unkeep(struct slot *home)
{
    if (home == NULL)
        return;
    pthread_mutex_lock(&home->pool->mu);
    home->marked = 0;
    pthread_mutex_unlock(&home->pool->mu);
}

/* The pool's keeper thread: every MARK_REFRESH_SECONDS, touch the marks its
 * slots own, so other ranks know these compiles are alive. */
static void *mark_keeper(void *arg)
{
    struct tf_compile_pool *p = arg;
    struct mark *due = tf_xcalloc((size_t)p->nslots, sizeof *due);
    pthread_mutex_lock(&p->mu);
    while (!p->keeper_stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += MARK_REFRESH_SECONDS;
        pthread_cond_timedwait(&p->keeper_wake, &p->mu, &until);
        if (p->keeper_stop)
            break;
        int n = 0;
        for (int i = 0; i < p->nslots; i++)
            if (p->slots[i].marked)
                due[n++] = p->slots[i].mark;
        pthread_mutex_unlock(&p->mu); /* file system calls outside the lock */
        for (int i = 0; i < n; i++)
            utimensat(AT_FDCWD, due[i].path, NULL, AT_SYMLINK_NOFOLLOW);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    free(due);
    return NULL;
}

/* ---- include paths ----
 *
 * A kernel's compiles also read the files under its include paths (and, for
 * GPU kernels, its source's folder): schema/bundle.c's tf_include_manifest
 * lists them with their content hashes. Its digest is part of every cache key
 * of the kernel, read here, on the compiling node (the coordinator's copy of
 * the manifest is in the job hash; a node whose headers differ compiles, and
 * caches, under its own key). A header may be edited while a run compiles:
 * the variants compiled after the edit are then compiled, cached and measured
 * under the new headers' key (what the run measured before stays as it was).
 * To see an edit without hashing the whole tree for every variant, the pool
 * keeps each kernel's digest with the tree's stamp (tf_include_stamp: the
 * same walk, stat() only) taken just before it was hashed, and hashes again
 * only when the stamp differs or was racy (a file changed too recently for
 * its times to tell). Each variant's key takes the digest as the tree is
 * then (includes_now; a stamp found unchanged less than
 * INCLUDES_RECHECK_SECONDS ago is trusted without a look, so a large tree
 * costs a cache hit nothing: a stat() walk of 1000 files is milliseconds),
 * and after a compile that ran, the tree is always looked at again: if it
 * changed meanwhile, the compiler may have read headers the key does not
 * describe, so nothing is kept under that key and the variant is compiled
 * again under the new one (compile_config), up to INCLUDES_MAX_ATTEMPTS
 * times for a tree that keeps changing. */
#define INCLUDES_MAX_ATTEMPTS 4
#define INCLUDES_RECHECK_SECONDS 1.0

/* The digest of `k`'s include files now ("" when it has none) into `digest`;
 * -1 + a message into `why` when they cannot be read. */
static int includes_digest(const struct tf_kernel *k, char digest[65], char *why, size_t cap)
{
    char *text = NULL;
    int bad = -1;
    struct tf_error err = {0};
    digest[0] = '\0';
    if (tf_include_manifest(k->options, k->option_count, k->language, k->source_path, &text,
                            &bad, &err) != 0) {
        /* the loader's message without its folder prefix: it names option and folder */
        tf_strlcpy(why, err.message, cap);
        return -1;
    }
    if (text != NULL) {
        struct tf_sha256 h;
        tf_sha256_init(&h);
        tf_sha256_update_str(&h, text);
        tf_sha256_hex(&h, digest);
        free(text);
    }
    return 0;
}

/* The memo of `k` in `p` (under p->mu), made if there is none. */
static struct includes_memo *includes_memo(struct tf_compile_pool *p, const struct tf_kernel *k)
{
    for (int i = 0; i < p->nincludes; i++)
        if (p->includes[i].kernel == k)
            return &p->includes[i];
    p->includes = tf_xrealloc(p->includes, (size_t)(p->nincludes + 1) * sizeof *p->includes);
    struct includes_memo *m = &p->includes[p->nincludes++];
    memset(m, 0, sizeof *m);
    m->kernel = k;
    return m;
}

/* `k`'s include digest as its files are now, into `digest`: the pool's memo
 * while the tree's stamp has not changed (taken afresh if `look`, or if it
 * was last looked at INCLUDES_RECHECK_SECONDS ago), else hashed again
 * (outside the lock) and the memo updated. If the files cannot be read, -1
 * and `out` is that variant's compile_error saying why (the next variant
 * looks again). */
static int includes_now(struct tf_compile_pool *p, const struct tf_kernel *k, int look,
                        char digest[65], struct tf_compiled *out)
{
    char *stamp = NULL, why[TF_MESSAGE_LEN] = "";
    int racy = 0;
    struct tf_error err = {0};
    if (!look) {
        pthread_mutex_lock(&p->mu);
        const struct includes_memo *m = includes_memo(p, k);
        const int recent =
            m->stamp != NULL && now_seconds() - m->checked < INCLUDES_RECHECK_SECONDS;
        if (recent)
            tf_strlcpy(digest, m->digest, 65);
        pthread_mutex_unlock(&p->mu);
        if (recent)
            return 0;
    }
    const double looked = now_seconds();
    if (tf_include_stamp(k->options, k->option_count, k->language, k->source_path, &stamp,
                         &racy, &err) != 0) {
        tf_strlcpy(why, err.message, sizeof why);
        goto unreadable;
    }
    if (stamp == NULL) { /* no include paths */
        digest[0] = '\0';
        return 0;
    }
    pthread_mutex_lock(&p->mu);
    struct includes_memo *m = includes_memo(p, k);
    const int same = !racy && m->stamp != NULL && strcmp(m->stamp, stamp) == 0;
    if (same) {
        tf_strlcpy(digest, m->digest, 65);
        m->checked = looked;
    }
    pthread_mutex_unlock(&p->mu);
    if (same) {
        free(stamp);
        return 0;
    }
    /* Hashed after the stamp was taken: a change after the stamp shows up as
     * a new stamp next time, never as a digest trusted for older files. */
    if (includes_digest(k, digest, why, sizeof why) != 0) {
        free(stamp);
        goto unreadable;
    }
    pthread_mutex_lock(&p->mu);
    struct includes_memo *mine = includes_memo(p, k);
    free(mine->stamp);
    mine->stamp = racy ? NULL : stamp;
    mine->checked = looked;
    tf_strlcpy(mine->digest, digest, sizeof mine->digest);
    pthread_mutex_unlock(&p->mu);
    if (racy)
        free(stamp);
    return 0;
unreadable:
    memset(out, 0, sizeof *out);
    out->status = TF_STATUS_COMPILE_ERROR;
    out->registers = out->warnings = -1;
    out->shared_bytes = out->spill_bytes = -1;
    tf_strlcpy(out->message, why, sizeof out->message);
    return -1;
}

/* 1 if `v`'s include files no longer match the digest its key was made with
 * (or cannot be read any more). */
static int includes_changed(const struct variant *v)
{
    char now[65];
    struct tf_compiled ignored;
    if (v->pool == NULL || v->kernel == NULL || v->includes == NULL || v->includes[0] == '\0')
        return 0;
    return includes_now(v->pool, v->kernel, 1, now, &ignored) != 0 ||
           strcmp(now, v->includes) != 0;
}

/* Compile `v` through the cache into `out`. *ran_compiler tells the stats
 * apart. Returns 1, keeping nothing under `v`'s key, when `v`'s include files
 * changed while it compiled (the caller compiles it again under the new
 * key); 0 otherwise (`out` says how it went). */
static int compile_variant(const struct variant *v, struct tf_compiled *out, int *ran_compiler)
{
    int changed = 0;
    char key[65], meta[4200], errf[4200], logf[4200], busy[4200], tmp[4300];
    struct tf_error err = {0};
    struct tf_compile_output co = {0};
    struct tf_compile_input in = v->in;

    memset(out, 0, sizeof *out);
    out->status = TF_STATUS_COMPILE_ERROR;
    out->registers = out->warnings = -1;
    out->shared_bytes = out->spill_bytes = -1;
    *ran_compiler = 0;

    tf_cache_key(v->be, &in, v->includes, key);
    if (tf_cache_path(v->cache_dir, v->be->name, key, tf_cache_binary_ext(v->be->name),
                      out->binary_path, sizeof out->binary_path, &err) != 0 ||
        tf_cache_path(v->cache_dir, v->be->name, key, "meta", meta, sizeof meta, &err) != 0 ||
        tf_cache_path(v->cache_dir, v->be->name, key, "err", errf, sizeof errf, &err) != 0 ||
        tf_cache_path(v->cache_dir, v->be->name, key, "log", logf, sizeof logf, &err) != 0 ||
        tf_cache_path(v->cache_dir, v->be->name, key, "busy", busy, sizeof busy, &err) != 0) {
        snprintf(out->message, sizeof out->message, "compile cache: %.140s", err.message);
        out->binary_path[0] = '\0';
        return 0;
    }
    if (cache_answer(out->binary_path, meta, errf, out))
        return 0;
    struct mark mine;
    const enum claim claim = claim_variant(busy, out->binary_path, meta, errf, out, &mine);
    if (claim == CLAIM_ANSWERED)
        return 0;
    int owned = claim == CLAIM_OWNED;
    if (owned)
        mark_keep(v->home, &mine);

    tf_cache_temp_name(out->binary_path, tmp, sizeof tmp);
    in.output_path = tmp;
    *ran_compiler = 1;
    const double t0 = now_seconds();
    int rc;
    if (v->slot != NULL) {
        double child_seconds = 0.0;
        rc = slot_compile(v->slot, &in, &co, &child_seconds, &err);
        /* the child's own clock when it answered; what the parent waited otherwise */
        out->compile_time = rc == 0 ? child_seconds : now_seconds() - t0;
    } else {
        rc = v->be->compile(&in, &co, &err);
        out->compile_time = now_seconds() - t0;
    }
    if (rc != 0) {
        tf_compile_log_summary(err.message, out->message, sizeof out->message);
        /* Our own error (writing the source to TMPDIR, say): its errno. */
        if (storage_trouble(err.message, v->cache_dir)) {
            out->storage_trouble = 1;
            char said[TF_MESSAGE_LEN];
            tf_strlcpy(said, out->message, sizeof said);
            snprintf(out->message, sizeof out->message, "%.*s%s", NODE_ROOM, said, NODE_TROUBLE);
        }
        /* Tell the ranks waiting for it, then let the note age out; a full
         * disk leaves none (released at fail:), as below. */
        if (owned && !out->storage_trouble) {
            mark_unkeep(v->home);
            mark_fail(&mine, out->message);
            owned = 0;
        }
        goto fail;
    }
    if (includes_changed(v)) {
        /* The compiler may have read headers the key does not describe: keep
         * neither the binary nor a verdict under that key. */
        snprintf(out->message, sizeof out->message,
                 "kernel '%.40s': the files under its include paths kept changing while "
                 "it compiled (%d tries, nothing cached)",
                 v->kernel->name, INCLUDES_MAX_ATTEMPTS);
        changed = 1;
        goto fail;
    }
    if (co.ok) {
        out->registers = co.registers;
        out->shared_bytes = co.shared_bytes;
        out->spill_bytes = co.spill_bytes;
        out->warnings = tf_compile_log_warnings(co.log, out->first_warning,
                                                sizeof out->first_warning);
        struct stat built;
        chmod(tmp, 0755); /* the compiler's mode follows the umask: no one else writes it */
        int built_fd = open(tmp, O_RDONLY | O_CLOEXEC);
        /* on disk before it has its name (see tf_cache_write_file) */
        if (built_fd < 0 || fsync(built_fd) != 0 || fstat(built_fd, &built) != 0)
            built.st_size = -1;
        if (built_fd >= 0)
            close(built_fd);
        struct tf_cache_meta m = {co.registers, co.shared_bytes, co.spill_bytes, out->warnings,
                                  "", (int64_t)built.st_size};
        tf_strlcpy(m.first_warning, out->first_warning, sizeof m.first_warning);
        /* The whole log of a variant with warnings, beside it (the archive
         * keeps the first); losing it costs nothing but that. */
        if (out->warnings > 0)
            tf_cache_write_file(logf, co.log, strlen(co.log), NULL);
        /* metadata first: a binary without .meta reads as "unknown", never as wrong */
        if (tf_cache_write_meta(meta, &m, &err) != 0 ||
            rename(tmp, out->binary_path) != 0) {
            if (err.message[0] == '\0')
                tf_error_set(&err, TF_ERR_IO, "cannot rename into '%s': %s", out->binary_path,
                             strerror(errno));
            snprintf(out->message, sizeof out->message, "compile cache: %.140s", err.message);
            out->storage_trouble = storage_trouble(err.message, v->cache_dir);
            goto fail;
        }
        out->status = TF_STATUS_OK;
        if (owned) { /* after the rename: a waiter finds the binary */
            mark_unkeep(v->home);
            mark_release(&mine);
        }
        free(co.log);
        return 0;
    }
    tf_compile_log_summary(co.log ? co.log : "", out->message, sizeof out->message);
    const char *trouble = environment_trouble(co.log);
    if (trouble != NULL) {
        /* A full disk or quota, a file size limit: the node's trouble, which
         * passes. The variant fails this time (saying why), but no verdict
         * is kept: the next run compiles it again. */
        const int len = (int)strcspn(trouble, "\n") > NODE_ROOM ? NODE_ROOM
                                                                 : (int)strcspn(trouble, "\n");
        snprintf(out->message, sizeof out->message, "%.*s%s", len, trouble, NODE_TROUBLE);
        /* Only the compiler's own line counts (not the kernel's text). */
        char line[TF_MESSAGE_LEN];
        snprintf(line, sizeof line, "%.*s", len, trouble);
        out->storage_trouble = storage_trouble(line, v->cache_dir);
        /* A full disk leaves no note: a waiter (or the resumed run, within
         * the note's 30 s) would take our disk's state for the variant's. */
        if (owned && !out->storage_trouble) {
            mark_unkeep(v->home);
            mark_fail(&mine, out->message);
            owned = 0;
        }
        goto fail;
    }
    /* The full log first, then the .err that marks the variant known-bad. Failing
     * to cache a failure only costs a recompile next time. */
    if (co.log)
        tf_cache_write_file(logf, co.log, strlen(co.log), NULL);
    char line[TF_MESSAGE_LEN + 1];
    snprintf(line, sizeof line, "%s\n", out->message);
    tf_cache_write_file(errf, line, strlen(line), NULL);
fail:
    unlink(tmp);
    if (owned) { /* after the .err, if any: a waiter finds it, else compiles itself */
        mark_unkeep(v->home);
        mark_release(&mine);
    }
    out->binary_path[0] = '\0';
    free(co.log);
    return changed;
}

/* A compile that ran out of memory under the pool's limit `limit` (bytes, 0:
 * none): say which limit in `out`'s message, so that a kernel that needs more
 * knows what to raise. */
static void name_memory_limit(struct tf_compiled *out, uint64_t limit)
{
    const char *oom = out->message;
    if (out->status != TF_STATUS_COMPILE_ERROR || limit == 0 ||
        (strstr(oom, "out of memory") == NULL && strstr(oom, "memory exhausted") == NULL &&
         strstr(oom, "Cannot allocate memory") == NULL && strstr(oom, "bad_alloc") == NULL))
        return;
    /* The compiler's line (cut), then the hint whole, in place of the
     * generic "the node's trouble" (it was not kept either way). */
    static const char hint[] = " (not cached: over the limit of %llu MiB a compiler, "
                               "TUNEFARM_COMPILE_MEMORY)";
    int keep = (int)strlen(out->message);
    if (ends_with(out->message, NODE_TROUBLE))
        keep -= (int)strlen(NODE_TROUBLE);
    if (keep > (int)(TF_MESSAGE_LEN - sizeof hint - 8))
        keep = (int)(TF_MESSAGE_LEN - sizeof hint - 8);
    char said[TF_MESSAGE_LEN + 32];
    snprintf(said, sizeof said, "%.*s", keep, out->message);
    snprintf(said + strlen(said), sizeof said - strlen(said), hint,
             (unsigned long long)(limit >> 20));
    tf_strlcpy(out->message, said, sizeof out->message);
}

/* Compile configuration `config` of kernel `k` for problem `problem` (the
 * sizes its `defines:` name; any problem if none) with the pool's backend on
 * slot `s`. */
static void compile_config(struct slot *s, const struct tf_kernel *k, int problem,
                           uint64_t config, struct tf_compiled *out, int *ran_compiler)
{
    struct tf_compile_pool *p = s->pool;
    char *defines[TF_MAX_DEFINES], includes[65];
    *ran_compiler = 0;
    int ndefines = tf_kernel_defines(k, config, defines, TF_MAX_DEFINES);
    ndefines += tf_kernel_size_defines(k, problem, defines + ndefines, TF_MAX_DEFINES - ndefines);
    struct variant v = {
        .be = p->be,
        .cache_dir = p->cache_dir,
        .in = {.kernel_name = k->name,
               .source = k->source,
               .source_name = k->source_path,
               .entry = k->entry,
               .arch = p->arch,
               .ndefines = ndefines,
               .defines = defines,
               .noptions = k->option_count,
               .options = k->options},
        .slot = s->compiler ? s : NULL,
        .home = s,
        .kernel = k,
        .includes = includes,
        .pool = p,
    };
    double seconds = 0.0;
    for (int attempt = 1;; attempt++) {
        int ran = 0;
        if (includes_now(p, k, attempt > 1, includes, out) != 0)
            break;
        const int changed = compile_variant(&v, out, &ran);
        *ran_compiler |= ran;
        seconds += out->compile_time;
        out->compile_time = seconds;
        if (!changed || attempt == INCLUDES_MAX_ATTEMPTS)
            break; /* (the last one's message says the headers kept changing) */
    }
    name_memory_limit(out, p->memory_limit);
    for (int i = 0; i < ndefines; i++)
        free(defines[i]);
}

static void *compile_thread(void *arg)
{
    struct slot *s = arg;
    struct tf_compile_pool *p = s->pool;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->queue_head == NULL && !p->stopping)
            pthread_cond_wait(&p->work, &p->mu);
        struct compile_job *job = p->queue_head;
        if (job == NULL)
            break; /* stopping and nothing left */
        p->queue_head = job->next_queued;
        if (p->queue_head == NULL)
            p->queue_tail = NULL;
        job->state = 1;
        if (p->active++ == 0)
            p->busy_since = now_seconds();
        pthread_mutex_unlock(&p->mu);

        int ran = 0;
        compile_config(s, job->kernel, job->problem, job->config, &job->result, &ran);

        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            p->stats.wall_seconds_busy += now_seconds() - p->busy_since;
        if (ran) {
            p->stats.compiled++;
            p->stats.compile_seconds += job->result.compile_time;
        } else {
            p->stats.cached++;
        }
        if (job->result.status != TF_STATUS_OK)
            p->stats.failed++;
        job->state = 2;
        pthread_cond_broadcast(&p->done);
    }
    s->pid = -1;
    pthread_mutex_unlock(&p->mu);
    /* here, while the thread the child's parent-death signal follows still lives */
    tf_compiler_destroy(s->compiler);
    s->compiler = NULL;
    return NULL;
}

struct tf_compile_pool *tf_compile_pool_create(const char *exe, const struct tf_backend *be,
                                               const char *arch, const char *cache_dir,
                                               int nprocs, struct tf_error *err)
{
    char folder[4096];
    if (nprocs < 1) {
        tf_error_set(err, TF_ERR_SCHEMA, "compile pool needs at least 1 process, got %d", nprocs);
        return NULL;
    }
    /* Children start lazily: a missing executable must fail here, not per variant. */
    if (exe != NULL && access(exe, X_OK) != 0) {
        tf_error_set(err, TF_ERR_SYSTEM, "compiler executable '%.200s': %s", exe,
                     strerror(errno));
        return NULL;
    }
    /* Its compiler processes would each initialise the GPU driver (nocuda.c):
     * say so once, not once a child. */
    static int said_nocuda;
    char stub[PATH_MAX + 64];
    if (exe != NULL && strcmp(be->name, "cuda") == 0 && !said_nocuda++ &&
        tf_compiler_find_nocuda(exe, stub, sizeof stub) != 0)
        fprintf(stderr, "tunefarm: note: libtunefarm-nocuda.so is neither in build/ nor in "
                        "../lib/tunefarm beside %s nor in %s (run `make`, or `make install`): "
                        "every CUDA compiler process will initialise the GPU driver, which "
                        "serialises compiles on nodes with several GPUs (README \"Where "
                        "processes run\")\n", exe, TF_LIB_DIR);
    if (snprintf(folder, sizeof folder, "%s/%s", cache_dir, be->name) >= (int)sizeof folder) {
        tf_error_set(err, TF_ERR_IO, "compile cache path too long: '%.200s'", cache_dir);
        return NULL;
    }
    if (tf_mkdir_p(folder, err) != 0 || tf_cache_check_dir(cache_dir, err) != 0 ||
        tf_cache_check_dir(folder, err) != 0)
        return NULL;
    /* Each compiler process's memory (compiler.h says why): the slots' and
     * the one a kernel's reference compiles in (tf_compile_reference). */
    uint64_t memory_limit = 0;
    if (exe != NULL && tf_compiler_memory_limit(nprocs + 1, &memory_limit, err) != 0)
        return NULL;
    /* How long one compile may take (the coordinator waits as long). */
    double deadline = 0.0;
    if (tf_job_compile_timeout(&deadline, err) != 0)
        return NULL;

    struct tf_compile_pool *p = tf_xcalloc(1, sizeof *p);
    p->be = be;
    p->exe = exe ? tf_xstrdup(exe) : NULL;
    p->arch = tf_xstrdup(arch ? arch : "");
    p->cache_dir = tf_xstrdup(cache_dir);
    p->deadline = deadline;
    p->memory_limit = memory_limit;
    p->next_ticket = 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    pthread_cond_init(&p->keeper_wake, NULL);
    p->slots = tf_xcalloc((size_t)nprocs, sizeof *p->slots);
    for (int i = 0; i < nprocs; i++) {
        struct slot *s = &p->slots[i];
        s->pool = p;
        s->pid = -1;
        s->compiler = exe ? tf_compiler_create(exe, be->name) : NULL;
        if (s->compiler != NULL)
            tf_compiler_set_memory_limit(s->compiler, memory_limit);
        int rc = pthread_create(&s->thread, NULL, compile_thread, s);
        if (rc != 0) {
            tf_compiler_destroy(s->compiler);
            s->compiler = NULL;
            tf_error_set(err, TF_ERR_SYSTEM, "cannot start compile thread %d: %s", i,
                         strerror(rc));
            goto fail;
        }
        p->nslots++;
    }
    if (pthread_create(&p->keeper, NULL, mark_keeper, p) == 0)
        p->keeper_running = 1; /* else marks go stale after MARK_STALE_SECONDS: only slower */
    return p;
fail:
    tf_compile_pool_destroy(p);
    return NULL;
}

void tf_compile_pool_destroy(struct tf_compile_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nslots; i++)
        pthread_join(p->slots[i].thread, NULL);
    if (p->keeper_running) {
        pthread_mutex_lock(&p->mu);
        p->keeper_stop = 1;
        pthread_cond_signal(&p->keeper_wake);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->keeper, NULL);
    }
    for (struct compile_job *j = p->all, *next; j != NULL; j = next) {
        next = j->next_all;
        free(j);
    }
    for (int i = 0; i < p->nincludes; i++)
        free(p->includes[i].stamp);
    free(p->includes);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->keeper_wake);
    pthread_mutex_destroy(&p->mu);
    free(p->slots);
    free(p->exe);
    free(p->cache_dir);
    free(p->arch);
    free(p);
}

uint64_t tf_compile_submit(struct tf_compile_pool *p, const struct tf_kernel *k, uint64_t config)
{
    return tf_compile_submit_for(p, k, 0, config);
}

uint64_t tf_compile_submit_for(struct tf_compile_pool *p, const struct tf_kernel *k, int problem,
                               uint64_t config)
{
    struct compile_job *job = tf_xcalloc(1, sizeof *job);
    job->kernel = k;
    job->problem = problem;
    job->config = config;
    pthread_mutex_lock(&p->mu);
    job->ticket = p->next_ticket++;
    job->next_all = p->all;
    p->all = job;
    if (p->queue_tail)
        p->queue_tail->next_queued = job;
    else
        p->queue_head = job;
    p->queue_tail = job;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return job->ticket;
}

void tf_compile_pool_load(struct tf_compile_pool *p, int *queued, int *active)
{
    pthread_mutex_lock(&p->mu);
    int n = 0;
    for (const struct compile_job *job = p->queue_head; job; job = job->next_queued)
        n++;
    *queued = n;
    *active = p->active;
    pthread_mutex_unlock(&p->mu);
}

void tf_compile_wait(struct tf_compile_pool *p, uint64_t ticket, struct tf_compiled *out)
{
    pthread_mutex_lock(&p->mu);
    struct compile_job **link = &p->all;
    while (*link && (*link)->ticket != ticket)
        link = &(*link)->next_all;
    struct compile_job *job = *link;
    if (job == NULL)
        tf_die("compile ticket %llu was never submitted or was already waited",
               (unsigned long long)ticket);
    while (job->state != 2)
        pthread_cond_wait(&p->done, &p->mu);
    *link = job->next_all;
    pthread_mutex_unlock(&p->mu);
    *out = job->result;
    free(job);
}

/* tf_compile_wait_any (block) and tf_compile_ready_any (not: -1 when none is done). */
static int compile_any(struct tf_compile_pool *p, const uint64_t *tickets, int n, int block)
{
    if (n < 1)
        tf_die("tf_compile_wait_any: %d tickets", n);
    uint64_t lo = tickets[0], hi = tickets[0]; /* (tickets grow: most jobs are outside) */
    for (int i = 1; i < n; i++) {
        lo = tickets[i] < lo ? tickets[i] : lo;
        hi = tickets[i] > hi ? tickets[i] : hi;
    }
    pthread_mutex_lock(&p->mu);
    for (;;) {
        /* One pass over the unwaited jobs, then the first done in the caller's order. */
        int first = n, seen = 0;
        for (struct compile_job *job = p->all; job; job = job->next_all) {
            if (job->ticket < lo || job->ticket > hi)
                continue;
            for (int i = 0; i < first; i++)
                if (job->ticket == tickets[i]) {
                    seen++;
                    if (job->state == 2)
                        first = i;
                    break;
                }
        }
        if (first < n) {
            pthread_mutex_unlock(&p->mu);
            return first;
        }
        if (seen < n)
            tf_die("tf_compile_wait_any: a ticket was never submitted or was already waited");
        if (!block) {
            pthread_mutex_unlock(&p->mu);
            return -1;
        }
        pthread_cond_wait(&p->done, &p->mu);
    }
}

int tf_compile_wait_any(struct tf_compile_pool *p, const uint64_t *tickets, int n)
{
    return compile_any(p, tickets, n, 1);
}

int tf_compile_ready_any(struct tf_compile_pool *p, const uint64_t *tickets, int n)
{
    return compile_any(p, tickets, n, 0);
}

int tf_compile_reference(struct tf_compile_pool *p, const struct tf_kernel *k, char *path,
                         size_t cap, struct tf_error *err)
{
    /* References are plain C for the host whatever the pool's backend: the
     * kernel's flags may be nvcc-style, so only fixed, portable ones. OpenMP
     * lets a reference parallelise itself over the worker's cores: a 4096^3
     * GEMM in double is seconds on 16 cores instead of half a minute on one.
     * -O3 -march=native vectorises it for this CPU (the host backend's cache
     * key names the CPU): 2048^3 went from 1.83 s to 0.51 s on 2 cores, and a
     * GPU waits for the reference at the start of every problem. No FMA
     * contraction, so a reference is the same bits on every CPU. */
    static char opt_o3[] = "-O3", opt_native[] = "-march=native",
                opt_contract[] = "-ffp-contract=off", opt_omp[] = "-fopenmp";
    char *options[] = {opt_o3, opt_native, opt_contract, opt_omp};
    /* Where the sizes and the depends_on parameters sit in its argument
     * array (TF_REF_NAME, kernel.md "References"). */
    char *defines[TF_MAX_DEFINES];
    const int ndefines = tf_kernel_reference_defines(k, defines, TF_MAX_DEFINES);
    struct variant v = {
        .be = &tf_backend_host,
        .cache_dir = p->cache_dir,
        .in = {.kernel_name = k->name,
               .source = k->ref_source,
               .source_name = k->ref_source_path,
               .entry = k->ref_entry,
               .arch = "reference",
               .ndefines = ndefines,
               .defines = defines,
               .noptions = (int)(sizeof options / sizeof options[0]),
               .options = options},
    };
    struct tf_compiled out;
    int ran = 0;
    if (k->ref_source == NULL || k->ref_entry == NULL) {
        for (int i = 0; i < ndefines; i++)
            free(defines[i]);
        return tf_error_set(err, TF_ERR_SCHEMA, "kernel '%s' has no reference", k->name);
    }
    /* A reference is the kernel's code as much as its variants are: its
     * compile may hang (an include of a FIFO) or allocate without end
     * (#include "/dev/zero"). So it compiles the way they do, in a compiler
     * process `exe __compiler host` of its own: under the pool's memory limit
     * (RLIMIT_DATA, set by that process on itself before it compiles, so that
     * cc, cc1, as and ld inherit it with no window in between) and the pool's
     * deadline, past which its whole process group (the tools included) is
     * killed. Compiled in the worker, the host backend's own timeout killed
     * the cc driver alone and left cc1 running, and nothing limited its
     * memory. (Starting cc in a process group of its own, killed as one,
     * would still leave the limit to set: posix_spawn cannot, and setting it
     * on the worker around the spawn would bind the worker's other threads
     * meanwhile. One mechanism, the compiler process, covers both, as it does
     * for the variants.) The process is started on a cache miss only, and
     * lives for this one compile: a reference compiles once a kernel, and a
     * process of this call's own is shared with no other thread and outlives
     * none (a compiler process dies with the thread that started it,
     * PR_SET_PDEATHSIG). A pool without an executable (tests and benches
     * only) compiles in-process, as it does its variants. */
    struct slot own = {.pool = p, .pid = -1};
    if (p->exe != NULL) {
        own.compiler = tf_compiler_create(p->exe, tf_backend_host.name);
        tf_compiler_set_memory_limit(own.compiler, p->memory_limit);
        v.slot = &own;
    }
    compile_variant(&v, &out, &ran);
    tf_compiler_destroy(own.compiler);
    name_memory_limit(&out, p->memory_limit);
    for (int i = 0; i < ndefines; i++)
        free(defines[i]);
    if (out.status != TF_STATUS_OK && out.storage_trouble)
        return tf_error_set(err, TF_ERR_IO, "reference of kernel '%s' cannot be compiled: %s",
                            k->name, out.message);
    if (out.status != TF_STATUS_OK)
        return tf_error_at(err, TF_ERR_BACKEND, k->ref_source_path, 0, 0,
                           "reference of kernel '%s' does not compile: %s", k->name,
                           out.message);
    if (strlen(out.binary_path) >= cap)
        return tf_error_set(err, TF_ERR_BACKEND, "reference path too long: %s",
                            out.binary_path);
    tf_strlcpy(path, out.binary_path, cap);
    return 0;
}

void tf_compile_get_stats(struct tf_compile_pool *p, struct tf_compile_stats *s)
{
    pthread_mutex_lock(&p->mu);
    *s = p->stats;
    if (p->active > 0) /* count the ongoing busy stretch too */
        s->wall_seconds_busy += now_seconds() - p->busy_since;
    pthread_mutex_unlock(&p->mu);
}

void tf_compile_pool_set_deadline(struct tf_compile_pool *p, double seconds)
{
    pthread_mutex_lock(&p->mu);
    p->deadline = seconds;
    pthread_mutex_unlock(&p->mu);
}

int tf_compile_pool_pids(struct tf_compile_pool *p, pid_t *pids, int cap)
{
    int n = 0;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < p->nslots; i++)
        if (p->slots[i].pid > 0 && n < cap)
            pids[n++] = p->slots[i].pid;
    pthread_mutex_unlock(&p->mu);
    return n;
}

int tf_compile_pool_starts(struct tf_compile_pool *p)
{
    pthread_mutex_lock(&p->mu);
    const int n = p->starts;
    pthread_mutex_unlock(&p->mu);
    return n;
}
