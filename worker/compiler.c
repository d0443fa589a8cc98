/* compiler.c - compiler child processes: the child's loop and the pool's handle.
 *
 * NVRTC and hipRTC compile in the calling process and serialise inside it
 * (16 threads reach 2.6x one thread on an H200 host, 16 processes 11.4x), so
 * every slot of the compile pool owns a persistent child `exe __compiler
 * BACKEND`, spawned on its first request so that a run served wholly from the
 * cache starts none. Parent and child share a Unix socket pair on the child's
 * stdin and stdout and exchange length-prefixed frames (u32 little-endian
 * length, then a payload written with the tf_buf helpers of schema/wire.h),
 * like the runner: a socket so the parent writes with MSG_NOSIGNAL and a dead
 * child shows up as EOF, never as a SIGPIPE. A request carries the whole
 * tf_compile_input (the output path is a temporary name in the cache: the
 * cache lookup and the atomic rename stay in the parent); the reply carries
 * the tf_compile_output and the compile time measured in the child. Every
 * reply is awaited with poll() and a deadline: past it the child is killed
 * (compiler timed out), and EOF means it died (compiler process crashed).
 * Each child leads its own process group so that killing it also kills the
 * tools it spawned (the host backend's cc), and it dies with its parent
 * (PR_SET_PDEATHSIG). In the child, fd 1 points at stderr so that anything a
 * compiler library prints cannot corrupt the channel. Each child gets a
 * folder of its own as TMPDIR, removed when it ends (private_tmpdir). */
#include "compiler.h"

#include "channel.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../schema/job.h"
#include "../schema/wire.h"

#ifndef TF_LIB_DIR /* the Makefile sets it from LIBDIR */
#define TF_LIB_DIR "/usr/local/lib/tunefarm"
#endif

extern char **environ;

enum { REQ_COMPILE = 1 };

/* How long a child that saw its channel close may take to exit by itself. */
#define QUIT_GRACE 2.0

/* ---- the request and the reply ---- */

static void put_strings(struct tf_buf *b, int n, char *const *v)
{
    tf_buf_put_u32(b, (uint32_t)(n > 0 ? n : 0));
    for (int i = 0; i < n; i++)
        tf_buf_put_str(b, v[i]);
}

/* A decoded request: the input points into `strings`, which the decoder owns. */
struct request {
    struct tf_compile_input in;
    char *strings[6 + 2 * TF_MAX_DEFINES];
    int nstrings;
    char *defines[TF_MAX_DEFINES];
    char *options[TF_MAX_DEFINES];
};

static char *get_string(struct tf_buf *b, struct request *r)
{
    char *s = tf_buf_get_strdup(b);
    if (s != NULL)
        r->strings[r->nstrings++] = s;
    return s;
}

/* Decode a string list of at most TF_MAX_DEFINES into `v`; -1 if malformed. */
static int get_strings(struct tf_buf *b, struct request *r, char **v, int *n)
{
    uint32_t count;
    if (tf_buf_get_u32(b, &count) || count > TF_MAX_DEFINES)
        return -1;
    for (uint32_t i = 0; i < count; i++)
        if ((v[i] = get_string(b, r)) == NULL)
            return -1;
    *n = (int)count;
    return 0;
}

static void request_free(struct request *r)
{
    for (int i = 0; i < r->nstrings; i++)
        free(r->strings[i]);
    r->nstrings = 0;
}

static int request_decode(struct tf_buf *b, struct request *r)
{
    struct tf_compile_input *in = &r->in;
    memset(r, 0, sizeof *r);
    if ((in->kernel_name = get_string(b, r)) == NULL || (in->source = get_string(b, r)) == NULL ||
        (in->source_name = get_string(b, r)) == NULL || (in->entry = get_string(b, r)) == NULL ||
        (in->arch = get_string(b, r)) == NULL ||
        get_strings(b, r, r->defines, &in->ndefines) != 0 ||
        get_strings(b, r, r->options, &in->noptions) != 0 ||
        (in->output_path = get_string(b, r)) == NULL || b->pos != b->len)
        return -1;
    in->defines = r->defines;
    in->options = r->options;
    return 0;
}

/* ======================================================================
 * Parent side
 * ====================================================================== */

struct tf_compiler {
    char *exe;
    char *backend;
    pid_t pid; /* -1: no child */
    int fd;
    int starts;
    uint64_t memory_limit; /* RLIMIT_DATA of the children, 0: none */
    char *tmpdir;          /* the running child's own TMPDIR, NULL: none */
    struct tf_buf buf;
};

struct tf_compiler *tf_compiler_create(const char *exe, const char *backend)
{
    struct tf_compiler *c = tf_xcalloc(1, sizeof *c);
    c->exe = tf_xstrdup(exe);
    c->backend = tf_xstrdup(backend);
    c->pid = -1;
    c->fd = -1;
    return c;
}

/* nftw's visit for remove_tmpdir: remove what it is given, deepest first. */
static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* Remove the child's TMPDIR and whatever its compile left there. */
static void remove_tmpdir(struct tf_compiler *c)
{
    if (c->tmpdir == NULL)
        return;
    nftw(c->tmpdir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(c->tmpdir);
    c->tmpdir = NULL;
}

/* End the child: close its channel, give it `grace` seconds to exit by itself
 * (0: none), SIGKILL its process group (the child and any compiler it left
 * running) and reap it. How it ended goes into `msg` if not NULL. */
static void stop_child(struct tf_compiler *c, double grace, char *msg, size_t cap)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    if (c->pid <= 0) {
        remove_tmpdir(c);
        return;
    }
    /* WNOWAIT: the child stays unreaped until its group is killed, so the pid,
     * which is the group's id, cannot have been reused by then. */
    const double deadline = tf_channel_now() + grace;
    for (;;) {
        siginfo_t si = {0};
        if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != 0 ||
            tf_channel_now() >= deadline)
            break;
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(-c->pid, SIGKILL);
    int st = 0;
    pid_t w;
    while ((w = waitpid(c->pid, &st, 0)) < 0 && errno == EINTR)
        ;
    if (msg) {
        if (w == c->pid && WIFSIGNALED(st))
            snprintf(msg, cap, "compiler process crashed (signal %d)", WTERMSIG(st));
        else if (w == c->pid && WIFEXITED(st))
            snprintf(msg, cap, "compiler process exited with status %d", WEXITSTATUS(st));
        else
            snprintf(msg, cap, "compiler process vanished");
    }
    c->pid = -1;
    remove_tmpdir(c); /* its group is killed: nothing of it writes there any more */
}

void tf_compiler_set_memory_limit(struct tf_compiler *c, uint64_t bytes)
{
    c->memory_limit = bytes;
}

/* AddressSanitizer maps terabytes of shadow memory privately, which
 * RLIMIT_DATA counts: a sanitized compiler child could not start under any
 * limit ("Failed to mmap"). Such builds (`make sanitize`) run without one. */
#if defined(__SANITIZE_ADDRESS__)
#define COMPILER_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COMPILER_UNDER_ASAN 1
#endif
#endif

int tf_compiler_memory_limit(int nprocs, uint64_t *bytes, struct tf_error *err)
{
#ifdef COMPILER_UNDER_ASAN
    const bool limited = false;
#else
    const bool limited = true;
#endif
    uint64_t mib;
    bool set;
    *bytes = 0;
    if (tf_job_compile_memory(&mib, &set, err) != 0)
        return -1;
    if (set) {
        *bytes = limited ? mib << 20 : 0;
        return 0;
    }
    if (!limited)
        return 0;
    /* Half the node for all of the pool's compilers together: the other
     * half stays with the runner (its buffers, its reference), the
     * coordinator and the system, whatever the kernel's source does. */
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t share = 0;
    if (pages > 0 && page > 0)
        share = (uint64_t)pages * (uint64_t)page / 2 / (uint64_t)(nprocs > 0 ? nprocs : 1);
    *bytes = share > TF_COMPILER_MEMORY_MIN ? share : TF_COMPILER_MEMORY_MIN;
    return 0;
}

void tf_compiler_destroy(struct tf_compiler *c)
{
    if (c == NULL)
        return;
    stop_child(c, QUIT_GRACE, NULL, 0);
    tf_buf_free(&c->buf);
    free(c->backend);
    free(c->exe);
    free(c);
}

/* The environment a compiler child starts with: the parent's, with every GPU
 * hidden from the CUDA driver (CUDA_VISIBLE_DEVICES empty). NVRTC 13 calls
 * cuInit when it compiles (to reach the driver's compute cache), and on a
 * node with GPUs each cuInit retains every GPU under the driver's global
 * locks: 64 compilers on a 4-GPU H200 node spent half their time waiting
 * there (in uvm_gpu_retain_by_uuid, os_acquire_rwlock), and `compile -j 64`
 * made no more variants/s than -j 32 (bench/results/cores-2026-11-27-h200x4.md).
 * A compiler never needs a device. The array is new; its strings are
 * environ's or static: free the array only. */
char **tf_compiler_environment(char *const *env)
{
    static char hide[] = "CUDA_VISIBLE_DEVICES=";
    size_t n = 0;
    while (env != NULL && env[n] != NULL)
        n++;
    char **out = tf_xcalloc(n + 2, sizeof *out);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(env[i], hide, sizeof hide - 1) != 0)
            out[m++] = env[i];
    out[m++] = hide;
    out[m] = NULL;
    return out;
}

/* A new folder of the child's own for its TMPDIR: the host backend writes
 * each variant's source there and cc its temporaries, and a compile killed at
 * its deadline (with its process group) cannot clean up after itself: each
 * timeout left a folder with the source and cc1's output in the node's TMPDIR.
 * stop_child removes the folder once the group is dead. NULL if it cannot be
 * made (a full TMPDIR): the child then shares the worker's. */
static char *private_tmpdir(void)
{
    const char *tmp = getenv("TMPDIR");
    /* A short name: it lengthens every path of the compile, which messages
     * quote (a full disk's "cannot write 'PATH': No space left on device"
     * must keep its reason within a result's message). */
    char *dir = tf_xasprintf("%s/tf-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) != NULL)
        return dir;
    free(dir);
    return NULL;
}

/* `env` (tf_compiler_environment's, freed here) with TMPDIR set to `tmpdir`
 * (a "TMPDIR=..." string the caller keeps alive), or `env` itself if NULL. */
static char **with_tmpdir(char **env, char *tmpdir)
{
    if (tmpdir == NULL)
        return env;
    size_t n = 0;
    while (env[n] != NULL)
        n++;
    char **out = tf_xcalloc(n + 2, sizeof *out);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(env[i], "TMPDIR=", 7) != 0)
            out[m++] = env[i];
    out[m++] = tmpdir;
    out[m] = NULL;
    free(env);
    return out;
}

int tf_compiler_start(struct tf_compiler *c, struct tf_error *err)
{
    int sv[2] = {-1, -1};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none;

    if (c->pid > 0)
        return 0;
    /* CLOEXEC: a sibling slot's child must not inherit this channel, or this
     * child would never see EOF when the parent closes its end. */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return tf_error_set(err, TF_ERR_SYSTEM, "socketpair: %s", strerror(errno));
    char limit[32];
    snprintf(limit, sizeof limit, "%llu", (unsigned long long)c->memory_limit);
    char *argv[] = {c->exe, "__compiler", c->backend, c->memory_limit > 0 ? limit : NULL, NULL};
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
    posix_spawnattr_init(&attr);
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    pid_t pid;
    c->tmpdir = private_tmpdir();
    char *tmpdir_env = c->tmpdir ? tf_xasprintf("TMPDIR=%s", c->tmpdir) : NULL;
    char **env = with_tmpdir(tf_compiler_environment(environ), tmpdir_env);
    int rc = posix_spawn(&pid, c->exe, &fa, &attr, argv, env);
    free(env);
    free(tmpdir_env);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    close(sv[1]);
    if (rc != 0) {
        close(sv[0]);
        remove_tmpdir(c);
        return tf_error_set(err, TF_ERR_SYSTEM, "cannot start compiler process '%s': %s",
                            c->exe, strerror(rc));
    }
    c->pid = pid;
    c->fd = sv[0];
    c->starts++;
    return 0;
}

int tf_compiler_compile(struct tf_compiler *c, const struct tf_compile_input *in, double deadline,
                        struct tf_compile_output *out, double *seconds, struct tf_error *err)
{
    out->ok = 0;
    out->log = NULL;
    out->registers = -1;
    out->shared_bytes = out->spill_bytes = -1;
    *seconds = 0.0;
    if (in->ndefines > TF_MAX_DEFINES || in->noptions > TF_MAX_DEFINES)
        return tf_error_set(err, TF_ERR_SCHEMA, "more than %d defines or options",
                            TF_MAX_DEFINES);
    if (tf_compiler_start(c, err) != 0)
        return -1;

    struct tf_buf *b = &c->buf;
    b->len = b->pos = 0;
    tf_buf_put_u8(b, REQ_COMPILE);
    tf_buf_put_str(b, in->kernel_name);
    tf_buf_put_str(b, in->source);
    tf_buf_put_str(b, in->source_name);
    tf_buf_put_str(b, in->entry);
    tf_buf_put_str(b, in->arch);
    put_strings(b, in->ndefines, in->defines);
    put_strings(b, in->noptions, in->options);
    tf_buf_put_str(b, in->output_path);

    const double until = tf_channel_now() + deadline;
    int rc = tf_channel_write_frame(c->fd, b, until);
    if (rc == 0)
        rc = tf_channel_read_frame(c->fd, b, until);
    uint8_t failed = 1, ok = 0, has_log = 0;
    uint32_t registers = 0;
    uint64_t shared = 0, spills = 0;
    char message[TF_MESSAGE_LEN] = "";
    if (rc == 0 &&
        (tf_buf_get_u8(b, &failed) || tf_buf_get_str(b, message, sizeof message) ||
         tf_buf_get_u8(b, &ok) || tf_buf_get_u8(b, &has_log) ||
         (has_log && (out->log = tf_buf_get_strdup(b)) == NULL) ||
         tf_buf_get_u32(b, &registers) || tf_buf_get_u64(b, &shared) ||
         tf_buf_get_u64(b, &spills) || tf_buf_get_f64(b, seconds) || b->pos != b->len))
        rc = -3;
    if (rc != 0) {
        char death[128];
        free(out->log);
        out->log = NULL;
        /* EOF: the child is dying, give it a moment so its status names the signal. */
        stop_child(c, rc == -1 ? QUIT_GRACE : 0.0, death, sizeof death);
        if (rc == -2)
            return tf_error_set(err, TF_ERR_BACKEND,
                                "compiler timed out (no answer within %.3g s, "
                                "TUNEFARM_COMPILE_TIMEOUT), process killed",
                                deadline);
        if (rc == -3)
            return tf_error_set(err, TF_ERR_BACKEND, "compiler process sent a malformed reply");
        return tf_error_set(err, TF_ERR_BACKEND, "%s", death);
    }
    if (failed) {
        free(out->log);
        out->log = NULL;
        return tf_error_set(err, TF_ERR_BACKEND, "%s", message);
    }
    out->ok = ok;
    out->registers = (int32_t)registers;
    out->shared_bytes = (int64_t)shared;
    out->spill_bytes = (int64_t)spills;
    return 0;
}

pid_t tf_compiler_pid(const struct tf_compiler *c)
{
    return c->pid;
}

int tf_compiler_starts(const struct tf_compiler *c)
{
    return c->starts;
}

/* ======================================================================
 * Child side
 * ====================================================================== */

/* Compile one decoded request with `be` and encode the reply into `rep`. */
static void serve_one(const struct tf_backend *be, const struct tf_compile_input *in,
                      struct tf_buf *rep)
{
    struct tf_compile_output co = {.registers = -1, .shared_bytes = -1, .spill_bytes = -1};
    struct tf_error err = {0};
    const double t0 = tf_channel_now();
    const int rc = be->compile(in, &co, &err);
    const double seconds = tf_channel_now() - t0;
    tf_buf_put_u8(rep, (uint8_t)(rc != 0));
    tf_buf_put_str(rep, rc != 0 ? err.message : "");
    tf_buf_put_u8(rep, (uint8_t)(rc == 0 && co.ok));
    tf_buf_put_u8(rep, (uint8_t)(rc == 0 && co.log != NULL));
    if (rc == 0 && co.log != NULL)
        tf_buf_put_str(rep, co.log);
    tf_buf_put_u32(rep, (uint32_t)co.registers);
    tf_buf_put_u64(rep, (uint64_t)co.shared_bytes);
    tf_buf_put_u64(rep, (uint64_t)co.spill_bytes);
    tf_buf_put_f64(rep, seconds);
    free(co.log);
}

int tf_compiler_find_nocuda(const char *exe, char *path, size_t cap)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", exe != NULL ? exe : "");
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    /* the source tree (./tunefarm beside build/), an installed tree
     * (bin/../lib/tunefarm, wherever DESTDIR put it), the configured LIBDIR */
    char dirs[3][PATH_MAX + 32];
    snprintf(dirs[0], sizeof dirs[0], "%s/build", dir);
    snprintf(dirs[1], sizeof dirs[1], "%s/../lib/tunefarm", dir);
    snprintf(dirs[2], sizeof dirs[2], "%s", TF_LIB_DIR);
    for (int i = 0; i < 3; i++) {
        snprintf(path, cap, "%s/libtunefarm-nocuda.so", dirs[i]);
        if (access(path, R_OK) == 0)
            return 0;
    }
    return -1;
}

int tf_compiler_hide_driver(const char *exe)
{
    char path[PATH_MAX + 64];
    return tf_compiler_find_nocuda(exe, path, sizeof path) == 0 &&
                   dlopen(path, RTLD_NOW | RTLD_LOCAL) != NULL
               ? 0
               : -1;
}

int tf_compiler_serve(const struct tf_backend *be)
{
    int in, out;
    if (tf_channel_child_open(&in, &out) != 0)
        return 1;
    /* Compiling is background work beside the device's: at a lower priority
     * the runner's CPU reference (all cores, while the pool starts on every
     * core) and its launches get the CPU first. The compilers it starts
     * inherit the niceness. */
    errno = 0;
    if (nice(5) == -1 && errno != 0)
        fprintf(stderr, "tunefarm compiler: nice: %s (compiling at normal priority)\n",
                strerror(errno));

    struct tf_buf req = {0}, rep = {0};
    int rc = 0;
    while (tf_channel_read_frame(in, &req, -1) == 0) {
        uint8_t type;
        struct request r = {.nstrings = 0};
        if (tf_buf_get_u8(&req, &type) != 0 || type != REQ_COMPILE ||
            request_decode(&req, &r) != 0) {
            request_free(&r);
            fprintf(stderr, "tunefarm compiler: malformed request\n");
            rc = 1;
            break;
        }
        rep.len = rep.pos = 0;
        serve_one(be, &r.in, &rep);
        request_free(&r);
        if (tf_channel_write_frame(out, &rep, -1) != 0)
            break;
    }
    tf_buf_free(&req);
    tf_buf_free(&rep);
    close(in);
    close(out);
    return rc;
}

int tf_compiler_main(int argc, char **argv)
{
    if (argc < 3 || strcmp(argv[1], "__compiler") != 0) {
        fprintf(stderr, "usage: %s __compiler BACKEND (internal: started by a worker)\n",
                argc > 0 ? argv[0] : "tunefarm");
        return 2;
    }
    const struct tf_backend *be = tf_backend_find(argv[2]);
    if (be == NULL) {
        fprintf(stderr, "tunefarm compiler: no backend named '%s' in this build\n", argv[2]);
        return 2;
    }
    /* The pool's memory limit (tf_compiler_set_memory_limit), before any
     * compiler runs: RLIMIT_DATA counts the heap and private anonymous
     * mappings (Linux >= 4.7), not the libraries mapped from files, so NVRTC's
     * and the compilers' code costs nothing of it. cc, cc1, as and ld inherit it. */
    if (argc > 3) {
        char *end = NULL;
        errno = 0;
        const unsigned long long bytes = strtoull(argv[3], &end, 10);
        struct rlimit lim;
        if (errno != 0 || end == argv[3] || *end != '\0' || getrlimit(RLIMIT_DATA, &lim) != 0) {
            fprintf(stderr, "tunefarm compiler: bad memory limit '%s'\n", argv[3]);
            return 2;
        }
        /* never above the hard limit we were given (that would fail) */
        if (lim.rlim_max == RLIM_INFINITY || bytes < (unsigned long long)lim.rlim_max)
            lim.rlim_cur = (rlim_t)bytes;
        else
            lim.rlim_cur = lim.rlim_max;
        if (setrlimit(RLIMIT_DATA, &lim) != 0)
            fprintf(stderr, "tunefarm compiler: cannot limit its memory: %s\n", strerror(errno));
    }
    /* Before NVRTC first opens the driver (nocuda.c says why); argv[0] is the
     * executable the pool started. Without the library NVRTC still finds no
     * device (CUDA_VISIBLE_DEVICES), only more slowly where there are GPUs:
     * the pool says so once (compile.c). */
    if (strcmp(be->name, "cuda") == 0)
        tf_compiler_hide_driver(argv[0]);
    return tf_compiler_serve(be);
}
