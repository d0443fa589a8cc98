/* runner.c - the runner process and the worker's handle on it.
 *
 * The worker rank never touches a device: it spawns `tunefarm __runner
 * BACKEND ORDINAL` with a Unix socket pair as the child's stdin and stdout
 * and talks to it in length-prefixed frames (u32 little-endian length, then a
 * payload written with the tf_buf helpers of schema/wire.h). A socket pair
 * rather than two pipes so the worker can write with MSG_NOSIGNAL: a runner
 * that died must show up as a status, not as a SIGPIPE that kills the rank.
 * Requests: INIT (the job bundle as a JOB message; the child loads the job and
 * opens the device, and answers with the job's measure timeout), SETUP (a
 * kernel and problem: allocate and fill the buffers, run the reference once),
 * MEASURE (one configuration: restore the buffers from their initial images,
 * the verified launch, then the samples, the outputs checked against the
 * reference while the first samples run) and QUIT. Every answer is
 * awaited with poll() and a deadline; past it the child is SIGKILLed and
 * reaped (timeout), and EOF means it died (crashed, with the signal's name).
 * The next request starts a new child lazily and replays INIT and SETUP.
 *
 * The child the worker spawns is a shield, not the runner: first thing, it
 * forks (shield_start). The shield keeps no channel, echoes the runner's
 * liveness checks, waits for the runner and ends as it ended (same exit
 * status, or the same signal raised again); the runner, its child in the same
 * process group, has PR_SET_PDEATHSIG(SIGKILL) and dies with it. So a
 * variant's getppid() names the shield, not the worker rank: kill(getppid(),
 * SIGKILL) (or any fatal signal) ends the shield and the runner, the worker
 * reads EOF and records that configuration crashed ("runner killed by signal
 * 9 (Killed), not by its worker ..."), and starts a new runner for the next.
 * After every variant the runner continues its shield (a SIGSTOP to it is
 * undone) and makes a round trip through it: a signal the variant queued for
 * its parent is handled before the shield can answer, so the runner ends
 * without replying and the kill is charged to that variant, not to the next
 * configuration. A variant that clears its parent-death signal is caught the
 * same way; the runner also restores that signal after every variant.
 * Limit: the worker rank is the shield's parent, with the same uid; a
 * variant that walks further up (/proc/PPID/stat of its parent, then kill)
 * still kills the worker rank, and the run ends with exit 1 (every resume
 * again). Only a different uid (or a PID namespace) would hide the rank.
 * SETUP and MEASURE answers end with an "exiting" byte: after a fault that
 * breaks the device context for good (CUDA's sticky errors, which only a new
 * process clears) the child replies, then exits with status 3, and the worker
 * reaps it so the next configuration gets a fresh runner, not a `crashed`.
 *
 * In the child, inputs come from splitmix64 seeded by (job seed, kernel,
 * problem, argument), so every runner on every node builds the same data
 * (floats in [-1, 1), ints in [0, 100), or the argument's own [LO, HI));
 * outputs are poisoned (NaN / 0x7fffffff) before the verified launch so that
 * an element a kernel forgets to write can never pass. The child keeps
 * private copies of its protocol descriptors and points fd 1 at stderr, so a
 * kernel that printf()s cannot corrupt the protocol stream.
 *
 * A variant is hostile until proven otherwise. Every buffer it sees sits
 * between two 4 KiB canaries (checked after the verified launch where launches
 * do not queue, and after the samples everywhere: a changed byte is that
 * variant's runtime_error naming the buffer, and the runner exits after
 * replying so that a clean one takes the next configuration); on the host each
 * buffer also ends at a PROT_NONE guard page, and a fault there while a
 * variant runs comes back (siglongjmp) as the same error. The inputs' initial
 * images and the reference's outputs live in their own read-only mappings.
 * The worker sends absolute paths, and the child returns to its folder after
 * every variant (a chdir() changes nothing for the next). The child leads its
 * own process group, led by its shield (the worker kills the group with it)
 * and is a child subreaper: after every variant it kills what the variant
 * forked, setsid() or not; what a variant fork()s has the runner's channel
 * closed (pthread_atfork), so a child left behind cannot hold the worker's EOF
 * back when the runner dies. A variant launches with its own copy of the
 * argument slots (largs), and after it the floating-point environment is
 * restored; an interval timer,
 * resource limit, signal action or signal mask it changed is put back and the
 * runner exits after replying (proc_state_restore), so the next configuration
 * gets a clean process. What a variant can still do: write into the runner's
 * own heap or stack far from its buffers (a canary or guard page sees only
 * contiguous overflows), leave a thread running (its crash may be charged to
 * the configuration after it), change state not listed above (cwd is
 * restored, descriptors inherited from the worker are closed at start;
 * descriptors it opens, affinity, priority are not), kill its worker rank by
 * walking up past the shield (see above), fork with a raw clone() (no atfork
 * handler: its child keeps the channel, and a runner killed meanwhile is a
 * timeout, still that configuration's), or leave a setsid() process behind
 * when it is itself killed (timeout/crash) before the runner can end it. */
#include "runner.h"

#include "channel.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <fenv.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../schema/job.h"
#include "../schema/kernel.h"
#include "../schema/status.h"
#include "../schema/wire.h"
#include "backend.h"
#include "measure.h"
#include "verify.h"

extern char **environ;

enum {
    REQ_INIT = 1,
    REQ_SETUP = 2,
    REQ_MEASURE = 3,
    REQ_QUIT = 4
};

#define INIT_DEADLINE 60.0
#define SETUP_DEADLINE_MIN 120.0
#define QUIT_GRACE 2.0
/* The runner's exit status after a fault that broke its device context. */
#define RUNNER_EXIT_UNHEALTHY 3

static void buf_reset(struct tf_buf *b)
{
    b->len = b->pos = 0;
}

/* ======================================================================
 * Worker side
 * ====================================================================== */

struct tf_runner {
    char *exe;
    char *backend;
    int ordinal;
    struct tf_buf job_msg;  /* the JOB message, replayed to every new child */
    pid_t pid;              /* -1: no child */
    int fd;
    double timeout;         /* the job's longest per-configuration timeout */
    int starts;
    int setup_valid;        /* the child has buffers for (setup_kernel, setup_problem) */
    uint32_t setup_kernel, setup_problem;
    char *setup_reference;
    double device_seconds;
    struct tf_buf buf;
};

/* Reap the child after EOF or a deadline and describe its end into `msg`.
 * `kill_first` (a deadline): SIGKILL the group at once. Otherwise (EOF, QUIT)
 * the leader is given QUIT_GRACE to exit by itself first, so that the shield
 * can pass on how its runner ended (a SIGKILL sent to the group right away
 * would race with it and turn every crash into "signal 9"). */
static void reap_child(struct tf_runner *r, int kill_first, char *msg, size_t cap)
{
    int st = 0;
    if (r->pid > 0) {
        int killed = 0; /* whether this worker sent a SIGKILL */
        /* The child leads its own process group (spawn_child): killing the
         * group ends the shield, the runner and whatever a variant forked,
         * which would otherwise outlive it, hold the run's output open and
         * ignore SIGTERM. */
        if (kill_first) {
            kill(-r->pid, SIGKILL);
            killed = 1;
        }
        /* Our end closed: a runner still reading sees EOF and ends itself. */
        if (r->fd >= 0)
            close(r->fd);
        r->fd = -1;
        /* A shield a variant stopped (kill(getppid(), SIGSTOP)) could not
         * reap its runner and exit: continue it (a no-op otherwise). */
        kill(r->pid, SIGCONT);
        /* EOF: the child is exiting; a short grace, then no mercy. */
        const double deadline = tf_channel_now() + QUIT_GRACE;
        pid_t w;
        while ((w = waitpid(r->pid, &st, WNOHANG)) == 0 && tf_channel_now() < deadline) {
            struct timespec ts = {0, 2 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (w == 0) {
            kill(-r->pid, SIGKILL);
            killed = 1;
            w = waitpid(r->pid, &st, 0);
        }
        /* A runner that exited by itself may leave group members behind. */
        kill(-r->pid, SIGKILL);
        if (msg) {
            if (w == r->pid && WIFSIGNALED(st))
                snprintf(msg, cap, "runner killed by signal %d (%s)%s", WTERMSIG(st),
                         strsignal(WTERMSIG(st)),
                         WTERMSIG(st) == SIGKILL && !killed
                             ? ", not by its worker (a variant killed it or its parent, or "
                               "the OOM killer did)"
                             : "");
            else if (w == r->pid && WIFEXITED(st))
                snprintf(msg, cap, "runner exited with status %d", WEXITSTATUS(st));
            else
                snprintf(msg, cap, "runner vanished");
        }
    }
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    r->pid = -1;
    r->setup_valid = 0;
}

static int spawn_child(struct tf_runner *r, struct tf_error *err)
{
    int sv[2] = {-1, -1};
    char ordinal[16];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return tf_error_set(err, TF_ERR_SYSTEM, "socketpair: %s", strerror(errno));
    snprintf(ordinal, sizeof ordinal, "%d", r->ordinal);
    char *argv[] = {r->exe, "__runner", r->backend, ordinal, NULL};
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
    posix_spawnattr_init(&attr);
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    /* Its own process group, set before it runs anything (no race with a
     * setpgid in the child): see reap_child. */
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    pid_t pid;
    int rc = posix_spawn(&pid, r->exe, &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    close(sv[1]);
    if (rc != 0) {
        close(sv[0]);
        return tf_error_set(err, TF_ERR_SYSTEM, "cannot start runner '%s': %s", r->exe,
                            strerror(rc));
    }
    r->pid = pid;
    r->fd = sv[0];
    r->starts++;
    r->setup_valid = 0;

    /* INIT: the child loads the job and opens the device. */
    char death[TF_MESSAGE_LEN] = "";
    buf_reset(&r->buf);
    tf_buf_put_u8(&r->buf, REQ_INIT);
    tf_buf_put_u64(&r->buf, r->job_msg.len);
    tf_buf_put_bytes(&r->buf, r->job_msg.data, r->job_msg.len);
    const double deadline = tf_channel_now() + INIT_DEADLINE;
    rc = tf_channel_write_frame(r->fd, &r->buf, deadline);
    if (rc == 0)
        rc = tf_channel_read_frame(r->fd, &r->buf, deadline);
    uint8_t ok = 0;
    char message[1024] = "";
    if (rc == 0 && (tf_buf_get_u8(&r->buf, &ok) || tf_buf_get_str(&r->buf, message, sizeof message) ||
                    tf_buf_get_f64(&r->buf, &r->timeout)))
        rc = -3; /* a malformed answer: the runner lives, and is killed */
    if (rc != 0) {
        reap_child(r, rc != -1, death, sizeof death);
        return tf_error_set(err, TF_ERR_SYSTEM, "runner did not start (%s): %s",
                            rc == -2 ? "no answer" : "no valid answer", death);
    }
    if (!ok) {
        reap_child(r, 1, NULL, 0);
        return tf_error_set(err, TF_ERR_BACKEND, "runner: %s", message);
    }
    return 0;
}

int tf_runner_start(const char *exe, const struct tf_bundle *bundle, const char *backend,
                    int ordinal, struct tf_runner **out, struct tf_error *err)
{
    struct tf_runner *r = tf_xcalloc(1, sizeof *r);
    r->exe = tf_xstrdup(exe);
    r->backend = tf_xstrdup(backend);
    r->ordinal = ordinal;
    r->pid = -1;
    r->fd = -1;
    tf_wire_job(&r->job_msg, bundle);
    if (spawn_child(r, err) != 0)
        goto fail;
    *out = r;
    return 0;
fail:
    tf_runner_destroy(r);
    *out = NULL;
    return -1;
}

static int prepare(struct tf_runner *r, uint32_t kernel, uint32_t problem, uint64_t config,
                   const char *reference, struct tf_result *out, struct tf_error *err);
static int measure(struct tf_runner *r, uint32_t kernel, uint32_t problem, uint32_t phase,
                   uint64_t config, const char *binary, const char *reference,
                   struct tf_result *out, struct tf_error *err);

/* After a failed exchange (rc -2: the deadline passed, -1: EOF, -3: a
 * malformed answer): timeout (kill) or crash (reap), into `out`. */
static void exchange_failed(struct tf_runner *r, int rc, const char *what, struct tf_result *out)
{
    char death[TF_MESSAGE_LEN] = "";
    if (rc == -2) {
        reap_child(r, 1, NULL, 0);
        out->status = TF_STATUS_TIMEOUT;
        snprintf(out->message, sizeof out->message,
                 "%s: no answer within %.3g s, runner killed", what,
                 strcmp(what, "measure") == 0 ? r->timeout : fmax(SETUP_DEADLINE_MIN, 10 * r->timeout));
    } else {
        reap_child(r, rc != -1, death, sizeof death); /* -1: EOF, it is ending */
        out->status = TF_STATUS_CRASHED;
        snprintf(out->message, sizeof out->message, "%s", death);
    }
}

/* `path` as an absolute path (malloc'd): relative ones are taken from the
 * worker's folder, which never changes, so that a variant that chdir()s in
 * the runner cannot make the next binary or reference unreachable. */
static char *absolute_path(const char *path)
{
    char cwd[PATH_MAX];
    if (path[0] == '/' || path[0] == '\0' || getcwd(cwd, sizeof cwd) == NULL)
        return tf_xstrdup(path);
    return tf_xasprintf("%s/%s", cwd, path);
}

/* Spawn the child if there is none; -1 + err (and `out` says why) if it cannot be. */
static int ensure_child(struct tf_runner *r, struct tf_result *out, struct tf_error *err)
{
    if (r->pid < 0 && spawn_child(r, err) != 0) {
        snprintf(out->message, sizeof out->message, "cannot restart runner: %.120s",
                 err->message);
        return -1;
    }
    return 0;
}

int tf_runner_prepare(struct tf_runner *r, uint32_t kernel, uint32_t problem, uint64_t config,
                      const char *reference_path, struct tf_result *out, struct tf_error *err)
{
    char *reference = absolute_path(reference_path);
    const int rc = prepare(r, kernel, problem, config, reference, out, err);
    free(reference);
    return rc;
}

static int prepare(struct tf_runner *r, uint32_t kernel, uint32_t problem, uint64_t config,
                   const char *reference, struct tf_result *out, struct tf_error *err)
{
    tf_result_init(out, kernel, problem, config, TF_STATUS_OK);
    if (r->setup_valid && r->setup_kernel == kernel && r->setup_problem == problem &&
        strcmp(r->setup_reference ? r->setup_reference : "", reference) == 0)
        return 0;
    out->status = TF_STATUS_CRASHED;
    if (ensure_child(r, out, err) != 0)
        return -1;
    r->setup_valid = 0; /* the child drops its old problem whatever happens next */
    buf_reset(&r->buf);
    tf_buf_put_u8(&r->buf, REQ_SETUP);
    tf_buf_put_u32(&r->buf, kernel);
    tf_buf_put_u32(&r->buf, problem);
    tf_buf_put_u64(&r->buf, config);
    tf_buf_put_str(&r->buf, reference);
    const double deadline = tf_channel_now() + fmax(SETUP_DEADLINE_MIN, 10 * r->timeout);
    int rc = tf_channel_write_frame(r->fd, &r->buf, deadline);
    if (rc == 0)
        rc = tf_channel_read_frame(r->fd, &r->buf, deadline);
    uint8_t status = 0, exiting = 0;
    if (rc == 0 && (tf_buf_get_u8(&r->buf, &status) ||
                    tf_buf_get_str(&r->buf, out->message, sizeof out->message) ||
                    tf_buf_get_u8(&r->buf, &exiting) || status >= TF_STATUS_COUNT))
        rc = -3; /* a malformed answer: the runner lives, and is killed */
    if (rc != 0) {
        exchange_failed(r, rc, "setup (buffers and reference)", out);
        return 0;
    }
    if (exiting)
        reap_child(r, 0, NULL, 0);
    out->status = status;
    if (status != TF_STATUS_OK)
        return 0;
    r->setup_valid = 1;
    r->setup_kernel = kernel;
    r->setup_problem = problem;
    free(r->setup_reference);
    r->setup_reference = tf_xstrdup(reference);
    return 0;
}

int tf_runner_measure(struct tf_runner *r, uint32_t kernel, uint32_t problem, uint32_t phase,
                      uint64_t config, const char *binary_path, const char *reference,
                      struct tf_result *out, struct tf_error *err)
{
    char *binary = absolute_path(binary_path);
    const int rc = measure(r, kernel, problem, phase, config, binary, reference, out, err);
    free(binary);
    return rc;
}

static int measure(struct tf_runner *r, uint32_t kernel, uint32_t problem, uint32_t phase,
                   uint64_t config, const char *binary, const char *reference,
                   struct tf_result *out, struct tf_error *err)
{
    if (tf_runner_prepare(r, kernel, problem, config, reference, out, err) != 0)
        return -1;
    if (out->status != TF_STATUS_OK)
        return 0;
    tf_result_init(out, kernel, problem, config, TF_STATUS_CRASHED);
    if (ensure_child(r, out, err) != 0)
        return -1;

    buf_reset(&r->buf);
    tf_buf_put_u8(&r->buf, REQ_MEASURE);
    tf_buf_put_u32(&r->buf, kernel);
    tf_buf_put_u32(&r->buf, problem);
    tf_buf_put_u64(&r->buf, config);
    tf_buf_put_u32(&r->buf, phase);
    tf_buf_put_str(&r->buf, binary);
    const double deadline = tf_channel_now() + r->timeout;
    int rc = tf_channel_write_frame(r->fd, &r->buf, deadline);
    if (rc == 0)
        rc = tf_channel_read_frame(r->fd, &r->buf, deadline);
    struct tf_result got;
    uint8_t exiting = 0;
    if (rc == 0 && (tf_buf_get_result(&r->buf, &got) || tf_buf_get_u8(&r->buf, &exiting) ||
                    got.config != config || got.kernel != kernel || got.problem != problem))
        rc = -3; /* a malformed answer: the runner lives, and is killed */
    if (rc != 0) {
        exchange_failed(r, rc, "measure", out);
        return 0;
    }
    *out = got;
    if (exiting) /* its device context is broken: the next request starts a new runner */
        reap_child(r, 0, NULL, 0);
    if (isfinite(got.device_time))
        r->device_seconds += got.device_time;
    return 0;
}

double tf_runner_device_seconds(const struct tf_runner *r)
{
    return r->device_seconds;
}

int tf_runner_starts(const struct tf_runner *r)
{
    return r->starts;
}

pid_t tf_runner_pid(const struct tf_runner *r)
{
    return r->pid;
}

void tf_runner_destroy(struct tf_runner *r)
{
    if (r == NULL)
        return;
    if (r->pid > 0) {
        buf_reset(&r->buf);
        tf_buf_put_u8(&r->buf, REQ_QUIT);
        tf_channel_write_frame(r->fd, &r->buf, tf_channel_now() + QUIT_GRACE);
        /* closing our end is the second signal: the child exits on EOF */
        close(r->fd);
        r->fd = -1;
        reap_child(r, 0, NULL, 0);
    }
    tf_buf_free(&r->buf);
    tf_buf_free(&r->job_msg);
    free(r->setup_reference);
    free(r->backend);
    free(r->exe);
    free(r);
}

/* ======================================================================
 * Child side
 * ====================================================================== */

/* The runner's parent: the shield (shield_start). 0 until then. */
static pid_t shield_pid;
/* The runner's channel descriptors and its end of the socket to the shield
 * (shield_alive), closed in every process a variant forks. */
static int channel_in = -1, channel_out = -1, shield_fd = -1;

union scalar {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
};

/* Bytes of canary before and after every buffer a variant sees (a multiple
 * of 256, so the buffer keeps the allocation's alignment on every device). */
#define GUARD_BYTES 4096

struct buffer {
    int64_t count;
    size_t bytes;
    void *init;      /* what the device buffer starts with (inputs: data; outputs: poison or
                        init); sealed: read-only once filled, no variant can change it */
    void *expected;  /* outputs: the reference's result, sealed likewise */
    void *got;       /* outputs: downloaded after the verified launch */
    int got_pinned;  /* got came from the backend's host_alloc */
    void *dev_base;  /* the allocation: GUARD_BYTES of canary, dev, GUARD_BYTES of canary */
    void *dev;       /* what the variant gets: dev_base + GUARD_BYTES, `bytes` long */
    void *dev_init;  /* a device-side copy of `init`, where the backend can copy (restores) */
    void *dev_snap;  /* outputs: the verified launch's result, copied on the device so the
                        download overlaps the samples (which overwrite dev) */
};

struct child {
    const struct tf_backend *be;
    struct tf_backend_ctx *ctx;
    struct tf_device dev;
    struct tf_bundle *bundle;
    struct tf_job *job;
    /* the current (kernel, problem) */
    int ready;
    uint32_t kernel, problem;
    const struct tf_kernel *k;
    char *reference;
    int sizes_vary;          /* a size expression reads a parameter */
    struct buffer *bufs;     /* nargs, scalars unused */
    union scalar *scalars;   /* nargs */
    void **args;             /* nargs: &scalars[i] or &bufs[i].dev */
    struct tf_value *slots;
    int downloads_queued;    /* download_async queued, download_wait still due */
    int damaged;             /* a variant wrote outside its buffers: end after replying */
    int cwd_fd;              /* the runner's folder, restored after every variant (-1: none) */
    /* What a variant is given: its own copy of every argument slot (scalar
     * values, buffer pointers) and of the array of pointers to them, filled
     * again before every launch from scalars/bufs, which it never sees: a
     * variant that writes through args (args[i] = ..., *(T **)args[i] += 1,
     * a scalar decremented in place) changes its own launch, never the
     * runner's view of its buffers or a later launch. */
    void **largs;
    union launch_slot {
        union scalar s;
        void *p;
    } *lslots;
};

/* ---- sealed memory: what no variant may change ---------------------------- */

/* Private anonymous pages for `bytes` (at least one page): the reference's
 * outputs and the buffers' initial images live there, away from the heap the
 * variants' buffers share, and are made read-only once filled (seal), so a
 * variant writing wild cannot turn them into every later variant's failure. */
static void *sealed_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        tf_die("cannot map %zu bytes: %s", bytes, strerror(errno));
    return p;
}

static void sealed_seal(void *p, size_t bytes)
{
    if (p && mprotect(p, bytes ? bytes : 1, PROT_READ) != 0)
        tf_die("cannot seal %zu bytes: %s", bytes, strerror(errno));
}

static void sealed_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes ? bytes : 1);
}

/* ---- guards: canaries around every buffer, a fault handler for the pages ---- */

static unsigned char canary[GUARD_BYTES];  /* what every guard region holds */
static unsigned char guard_scratch[2 * GUARD_BYTES];

/* What the fault handler knows: the child whose buffers are guarded, whether
 * a variant is running, and where to go back to. */
static struct child *guard_child;
static volatile sig_atomic_t guard_armed;
static sigjmp_buf guard_jmp;
static volatile sig_atomic_t guard_arg;   /* the buffer whose guard was hit */
static volatile sig_atomic_t guard_after; /* 1 past the end, 0 before the start */
static volatile uintptr_t guard_distance; /* bytes between the buffer and the fault */
static uintptr_t guard_page_bytes;

/* SIGSEGV / SIGBUS while a variant runs: a fault just past (or before) one of
 * its buffers is an overflow into a guard page (the host backend puts one
 * after every buffer): go back to the runner with the buffer's name. Any other
 * fault is the variant's crash: the default action, and the worker records
 * `crashed` with the signal. */
static void guard_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    const struct child *c = guard_child;
    if (guard_armed && c != NULL && c->bufs != NULL && c->k != NULL) {
        const uintptr_t a = (uintptr_t)si->si_addr;
        const uintptr_t reach = GUARD_BYTES + 2 * guard_page_bytes;
        for (int i = 0; i < c->k->nargs; i++) {
            const struct buffer *b = &c->bufs[i];
            if (b->dev == NULL)
                continue;
            const uintptr_t start = (uintptr_t)b->dev, end = start + b->bytes;
            if ((a >= end && a - end < reach) || (a < start && start - a <= reach)) {
                guard_arg = i;
                guard_after = a >= end;
                guard_distance = a >= end ? a - end : start - a;
                guard_armed = 0;
                siglongjmp(guard_jmp, 1);
            }
        }
    }
    signal(sig, SIG_DFL); /* the faulting access runs again and ends the runner */
}

static void guard_install(struct child *c)
{
    static unsigned char altstack[64 * 1024];
    uint64_t st = UINT64_C(0x6775617264); /* "guard" */
    for (size_t i = 0; i < sizeof canary; i += 8) {
        st += UINT64_C(0x9E3779B97F4A7C15);
        uint64_t z = st;
        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        z ^= z >> 31;
        memcpy(canary + i, &z, 8);
    }
    long page = sysconf(_SC_PAGESIZE);
    guard_page_bytes = page > 0 ? (uintptr_t)page : 4096;
    guard_child = c;
    /* An alternate stack: the handler must run even if the variant's stack is gone. */
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = guard_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}

/* Fill the guard regions of `b` with the canary; 0 or -1 + err. */
static int guard_fill(const struct child *c, const struct buffer *b, struct tf_error *err)
{
    return c->be->upload(c->ctx, b->dev_base, canary, GUARD_BYTES, err) != 0 ||
                   c->be->upload(c->ctx, (char *)b->dev + b->bytes, canary, GUARD_BYTES, err) != 0
               ? -1
               : 0;
}

/* Check every buffer's guard regions after the variant ran. TF_STATUS_OK if
 * all still hold the canary; else runtime_error with err naming the buffer and
 * how far from it the first changed byte is (and c->damaged set: the variant
 * may have written further, into memory no canary watches, so this runner ends
 * after replying and a clean one takes the next configuration). */
static int guard_check(struct child *c, struct tf_error *err)
{
    const struct tf_kernel *k = c->k;
    for (int i = 0; i < k->nargs; i++) {
        const struct buffer *b = &c->bufs[i];
        if (k->args[i].kind != TF_ARG_BUFFER || b->dev == NULL)
            continue;
        if (c->be->download(c->ctx, guard_scratch, b->dev_base, GUARD_BYTES, err) != 0 ||
            c->be->download(c->ctx, guard_scratch + GUARD_BYTES, (char *)b->dev + b->bytes,
                            GUARD_BYTES, err) != 0)
            return TF_STATUS_RUNTIME_ERROR;
        size_t before = GUARD_BYTES, after = 0;
        while (before > 0 && guard_scratch[before - 1] == canary[before - 1])
            before--;
        while (after < GUARD_BYTES && guard_scratch[GUARD_BYTES + after] == canary[after])
            after++;
        if (after < GUARD_BYTES) {
            c->damaged = 1;
            tf_error_set(err, TF_ERR_EVAL,
                         "%s: wrote past its end (byte %zu after its %zu bytes changed; the "
                         "runner restarts)",
                         k->args[i].name, after + 1, b->bytes);
            return TF_STATUS_RUNTIME_ERROR;
        }
        if (before > 0) {
            c->damaged = 1;
            tf_error_set(err, TF_ERR_EVAL,
                         "%s: wrote before its start (byte %zu before it changed; the runner "
                         "restarts)",
                         k->args[i].name, GUARD_BYTES - before + 1);
            return TF_STATUS_RUNTIME_ERROR;
        }
    }
    return TF_STATUS_OK;
}

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *state)
{
    return mix64(*state += UINT64_C(0x9E3779B97F4A7C15));
}

static void fill_poison(enum tf_elem_type type, void *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        switch (type) {
        case TF_ELEM_I32: ((int32_t *)p)[i] = INT32_C(0x7fffffff); break;
        case TF_ELEM_I64: ((int64_t *)p)[i] = INT64_C(0x7fffffff7fffffff); break;
        case TF_ELEM_F32: ((float *)p)[i] = NAN; break;
        case TF_ELEM_F64: ((double *)p)[i] = NAN; break;
        }
}

/* Inputs: floats uniform in [-1, 1), ints in [0, 100); never all zero. */
static void fill_random(enum tf_elem_type type, void *p, int64_t n, uint64_t seed)
{
    uint64_t s = seed;
    int nonzero = 0;
    for (int64_t i = 0; i < n; i++) {
        const uint64_t x = splitmix64(&s);
        const double u = (double)(x >> 11) * 0x1.0p-53 * 2.0 - 1.0;
        switch (type) {
        case TF_ELEM_I32: ((int32_t *)p)[i] = (int32_t)(x % 100); nonzero |= x % 100 != 0; break;
        case TF_ELEM_I64: ((int64_t *)p)[i] = (int64_t)(x % 100); nonzero |= x % 100 != 0; break;
        case TF_ELEM_F32: ((float *)p)[i] = (float)u; nonzero |= (float)u != 0.0f; break;
        case TF_ELEM_F64: ((double *)p)[i] = u; nonzero |= u != 0.0; break;
        }
    }
    if (n > 0 && !nonzero) {
        switch (type) {
        case TF_ELEM_I32: ((int32_t *)p)[0] = 1; break;
        case TF_ELEM_I64: ((int64_t *)p)[0] = 1; break;
        case TF_ELEM_F32: ((float *)p)[0] = 1.0f; break;
        case TF_ELEM_F64: ((double *)p)[0] = 1.0; break;
        }
    }
}

/* Inputs with a range of their own (`init: {random: [LO, HI]}`): uniform in
 * [LO, HI) from the same splitmix64 stream. Integers are LO + x mod (HI - LO)
 * (the modulo bias is below 2^-40 for spans under 2^24); reals LO + (HI - LO)
 * * u, u in [0, 1) with 53 bits, then kept inside the range where rounding,
 * to double or to float, would reach HI or fall under LO (the loader made
 * sure a float32 exists in it). */
static void fill_random_range(enum tf_elem_type type, void *p, int64_t n, uint64_t seed,
                              struct tf_value lo, struct tf_value hi)
{
    uint64_t s = seed;
    if (type == TF_ELEM_I32 || type == TF_ELEM_I64) {
        const uint64_t span = (uint64_t)hi.u.i - (uint64_t)lo.u.i;
        for (int64_t i = 0; i < n; i++) {
            const int64_t v = (int64_t)((uint64_t)lo.u.i + splitmix64(&s) % span);
            if (type == TF_ELEM_I32)
                ((int32_t *)p)[i] = (int32_t)v;
            else
                ((int64_t *)p)[i] = v;
        }
        return;
    }
    const double a = tf_value_as_double(lo), b = tf_value_as_double(hi);
    for (int64_t i = 0; i < n; i++) {
        const double u = (double)(splitmix64(&s) >> 11) * 0x1.0p-53;
        double v = a + (b - a) * u;
        if (v >= b)
            v = nextafter(b, -INFINITY);
        if (v < a)
            v = a;
        if (type == TF_ELEM_F64) {
            ((double *)p)[i] = v;
            continue;
        }
        float f = (float)v;
        if ((double)f >= b)
            f = nextafterf(f, -INFINITY);
        if ((double)f < a)
            f = nextafterf(f, INFINITY);
        ((float *)p)[i] = f;
    }
}

static void fill_const(enum tf_elem_type type, void *p, int64_t n, int one)
{
    for (int64_t i = 0; i < n; i++)
        switch (type) {
        case TF_ELEM_I32: ((int32_t *)p)[i] = one; break;
        case TF_ELEM_I64: ((int64_t *)p)[i] = one; break;
        case TF_ELEM_F32: ((float *)p)[i] = (float)one; break;
        case TF_ELEM_F64: ((double *)p)[i] = one; break;
        }
}

static void free_buffers(struct child *c)
{
    if (c->bufs == NULL)
        return;
    for (int i = 0; i < c->k->nargs; i++) {
        struct buffer *b = &c->bufs[i];
        if (b->dev_base)
            c->be->release(c->ctx, b->dev_base);
        if (b->dev_init)
            c->be->release(c->ctx, b->dev_init);
        if (b->dev_snap)
            c->be->release(c->ctx, b->dev_snap);
        sealed_free(b->init, b->bytes);
        sealed_free(b->expected, b->bytes);
        if (b->got_pinned)
            c->be->host_free(c->ctx, b->got);
        else
            free(b->got);
    }
    free(c->bufs);
    c->bufs = NULL;
}

static void reset_problem(struct child *c)
{
    free_buffers(c);
    free(c->scalars);
    free(c->args);
    free(c->largs);
    free(c->lslots);
    free(c->slots);
    free(c->reference);
    c->scalars = NULL;
    c->args = NULL;
    c->largs = NULL;
    c->lslots = NULL;
    c->slots = NULL;
    c->reference = NULL;
    c->ready = 0;
    c->k = NULL;
}

static const char *scalar_type_name(enum tf_elem_type t)
{
    static const char *const names[] = {"int32", "int64", "float32", "float64"};
    return names[t];
}

/* Bind the slots of `config` and evaluate every scalar argument. A value the
 * argument's type cannot hold (N*BLOCK past 2^31 for an int32) is refused: the
 * load checks only the scalars that read nothing but problem sizes
 * (schema/kernel.c), and one that reads a parameter or a device property is
 * known only here; converted anyway it would reach the variant wrapped, and
 * that configuration would fail verification for a reason nobody sees. The
 * caller records the configuration `invalid`, like any other argument of it
 * that cannot be evaluated, and the run goes on. */
static int eval_scalars(struct child *c, uint64_t config, struct tf_error *err)
{
    const struct tf_kernel *k = c->k;
    tf_kernel_bind(k, config, (int)c->problem, &c->dev, c->slots);
    for (int i = 0; i < k->nargs; i++) {
        const struct tf_arg *a = &k->args[i];
        if (a->kind != TF_ARG_SCALAR)
            continue;
        struct tf_value v;
        char why[160];
        if (tf_expr_eval(a->value, c->slots, &v, err) != 0)
            return tf_error_set(err, TF_ERR_EVAL, "argument '%s': %.900s", a->name,
                                err->message);
        if (!tf_scalar_fits(a->type, v, why, sizeof why))
            return tf_error_set(err, TF_ERR_EVAL,
                                "argument '%s' (%s scalar = %.200s) at this configuration: "
                                "%s; declare it 'scalar: %s' (and the kernel's parameter to "
                                "match) or leave such values out with a constraint",
                                a->name, scalar_type_name(a->type), tf_expr_text(a->value),
                                why, a->type == TF_ELEM_I32 ? "int64" : "float64");
        switch (a->type) {
        case TF_ELEM_I32: c->scalars[i].i32 = (int32_t)(v.is_float ? (int64_t)v.u.f : v.u.i); break;
        case TF_ELEM_I64: c->scalars[i].i64 = v.is_float ? (int64_t)v.u.f : v.u.i; break;
        case TF_ELEM_F32: c->scalars[i].f32 = (float)tf_value_as_double(v); break;
        case TF_ELEM_F64: c->scalars[i].f64 = tf_value_as_double(v); break;
        }
    }
    return 0;
}

/* Buffer sizes of `config` into counts[]; -1 + err if one cannot be evaluated or is absurd. */
static int eval_sizes(struct child *c, uint64_t config, int64_t *counts, struct tf_error *err)
{
    const struct tf_kernel *k = c->k;
    tf_kernel_bind(k, config, (int)c->problem, &c->dev, c->slots);
    for (int i = 0; i < k->nargs; i++) {
        const struct tf_arg *a = &k->args[i];
        counts[i] = 0;
        if (a->kind != TF_ARG_BUFFER)
            continue;
        struct tf_value v;
        if (tf_expr_eval(a->size, c->slots, &v, err) != 0)
            return tf_error_set(err, TF_ERR_EVAL, "size of '%s': %.900s", a->name, err->message);
        if (v.is_float && v.u.f != floor(v.u.f))
            return tf_error_set(err, TF_ERR_EVAL, "size of '%s' is %g, not a whole number",
                                a->name, v.u.f);
        const int64_t n = v.is_float ? (int64_t)v.u.f : v.u.i;
        const uint64_t limit = c->dev.memory_bytes ? c->dev.memory_bytes : UINT64_MAX;
        if (n < 0 || (uint64_t)n > limit / tf_elem_size(a->type))
            return tf_error_set(err, TF_ERR_EVAL,
                                "size of '%s' is %lld elements, beyond the device's memory",
                                a->name, (long long)n);
        counts[i] = n;
    }
    return 0;
}

/* 1 if the backend can download outputs while the samples run. */
static int can_overlap_downloads(const struct child *c)
{
    return c->be->copy && c->be->host_alloc && c->be->host_free && c->be->download_async &&
           c->be->download_wait;
}

/* Wait for the downloads queued by child_measure, if any; a status. */
static int wait_downloads(struct child *c, struct tf_error *err)
{
    if (!c->downloads_queued)
        return TF_STATUS_OK;
    c->downloads_queued = 0;
    return c->be->download_wait(c->ctx, err) == 0 ? TF_STATUS_OK : TF_STATUS_RUNTIME_ERROR;
}

/* (Re)build every buffer for `config`: inputs, device memory, the reference's
 * expected outputs. Returns a status; err says why when not ok. */
static int build_buffers(struct child *c, uint64_t config, const int64_t *counts,
                         struct tf_error *err)
{
    const struct tf_kernel *k = c->k;
    void **ref_args = tf_xcalloc((size_t)k->nargs, sizeof *ref_args);
    void **ref_ptrs = tf_xcalloc((size_t)k->nargs, sizeof *ref_ptrs);
    void *ref_fn = NULL;
    int status = TF_STATUS_RUNTIME_ERROR;

    free_buffers(c);
    c->bufs = tf_xcalloc((size_t)k->nargs, sizeof *c->bufs);
    for (int i = 0; i < k->nargs; i++) {
        const struct tf_arg *a = &k->args[i];
        struct buffer *b = &c->bufs[i];
        c->args[i] = &c->scalars[i];
        if (a->kind != TF_ARG_BUFFER) {
            ref_args[i] = &c->scalars[i];
            continue;
        }
        b->count = counts[i];
        b->bytes = (size_t)counts[i] * tf_elem_size(a->type);
        b->init = sealed_alloc(b->bytes);
        const uint64_t seed = mix64(mix64(mix64(mix64(c->job->seed) ^ c->kernel) ^ c->problem) ^
                                    (uint64_t)i);
        switch (a->init) {
        case TF_INIT_RANDOM:
            if (a->init_range)
                fill_random_range(a->type, b->init, b->count, seed, a->init_lo, a->init_hi);
            else
                fill_random(a->type, b->init, b->count, seed);
            break;
        case TF_INIT_ZERO: fill_const(a->type, b->init, b->count, 0); break;
        case TF_INIT_ONES: fill_const(a->type, b->init, b->count, 1); break;
        case TF_INIT_POISON: fill_poison(a->type, b->init, b->count); break;
        }
        sealed_seal(b->init, b->bytes);
        if (b->bytes > SIZE_MAX - 2 * GUARD_BYTES) {
            tf_error_set(err, TF_ERR_NOMEM, "buffer '%s' of %zu bytes is too large", a->name,
                         b->bytes);
            goto fail;
        }
        if (c->be->alloc(c->ctx, b->bytes + 2 * GUARD_BYTES, &b->dev_base, err) != 0)
            goto fail;
        b->dev = (char *)b->dev_base + GUARD_BYTES;
        if (guard_fill(c, b, err) != 0)
            goto fail;
        /* Each configuration starts from `init`: keep it on the device when a
         * device-side copy is possible (much faster than uploading it again). */
        if (c->be->copy) {
            struct tf_error spare = {0};
            if (c->be->alloc(c->ctx, b->bytes, &b->dev_init, &spare) != 0)
                b->dev_init = NULL; /* no room for the image: upload each time instead */
            else if (c->be->upload(c->ctx, b->dev_init, b->init, b->bytes, err) != 0)
                goto fail;
        }
        c->args[i] = &b->dev;
        /* The reference gets private copies: it may write any of them. */
        ref_ptrs[i] = sealed_alloc(b->bytes);
        memcpy(ref_ptrs[i], b->init, b->bytes);
        ref_args[i] = &ref_ptrs[i];
        if (a->output && can_overlap_downloads(c)) {
            /* Without room for either, the download is the synchronous one. */
            struct tf_error spare = {0};
            if (c->be->host_alloc(c->ctx, b->bytes, &b->got, &spare) == 0)
                b->got_pinned = 1;
            if (b->got_pinned && c->be->alloc(c->ctx, b->bytes, &b->dev_snap, &spare) != 0)
                b->dev_snap = NULL;
        }
        if (a->output && b->got == NULL)
            b->got = tf_xmalloc(b->bytes);
    }
    if (eval_scalars(c, config, err) != 0) {
        status = TF_STATUS_INVALID;
        goto fail;
    }
    if (tf_backend_host.load(NULL, c->reference, k->ref_entry, &ref_fn, err) != 0) {
        status = TF_STATUS_LAUNCH_ERROR;
        tf_error_set(err, TF_ERR_BACKEND, "reference: %.900s", err->message);
        goto fail;
    }
    const struct tf_launch none = {{1, 1, 1}, {1, 1, 1}, 0};
    status = tf_backend_host.launch(NULL, ref_fn, &none, ref_args, NULL, err);
    if (status != TF_STATUS_OK)
        goto fail;
    for (int i = 0; i < k->nargs; i++)
        if (k->args[i].kind == TF_ARG_BUFFER && k->args[i].output) {
            c->bufs[i].expected = ref_ptrs[i];
            sealed_seal(ref_ptrs[i], c->bufs[i].bytes);
            ref_ptrs[i] = NULL;
        }
    status = TF_STATUS_OK;
fail:
    /* The reference stays loaded for the runner's life: an OpenMP reference
     * leaves libgomp's idle thread pool behind, and unloading the library that
     * brought libgomp in would pull the code from under those threads. */
    (void)ref_fn;
    for (int i = 0; i < k->nargs; i++)
        sealed_free(ref_ptrs[i], c->bufs[i].bytes);
    free(ref_ptrs);
    free(ref_args);
    if (status != TF_STATUS_OK)
        free_buffers(c);
    return status;
}

/* SETUP: make (kernel, problem) current, with buffers sized for `config`. */
static int child_setup(struct child *c, uint32_t kernel, uint32_t problem, uint64_t config,
                       const char *reference, struct tf_error *err)
{
    reset_problem(c);
    if (kernel >= (uint32_t)c->job->nkernels ||
        problem >= (uint32_t)c->job->kernels[kernel].kernel->nproblems) {
        tf_error_set(err, TF_ERR_SCHEMA, "no kernel %u / problem %u in this job", kernel, problem);
        return TF_STATUS_RUNTIME_ERROR;
    }
    const struct tf_kernel *k = c->job->kernels[kernel].kernel;
    c->k = k;
    c->kernel = kernel;
    c->problem = problem;
    c->reference = tf_xstrdup(reference);
    c->scalars = tf_xcalloc((size_t)k->nargs, sizeof *c->scalars);
    c->args = tf_xcalloc((size_t)k->nargs, sizeof *c->args);
    c->largs = tf_xcalloc((size_t)k->nargs, sizeof *c->largs);
    c->lslots = tf_xcalloc((size_t)k->nargs, sizeof *c->lslots);
    c->slots = tf_xcalloc((size_t)k->nslots, sizeof *c->slots);
    c->sizes_vary = 0;
    for (int i = 0; i < k->nargs; i++)
        for (int p = 0; k->args[i].kind == TF_ARG_BUFFER && p < k->nparams; p++)
            if (tf_expr_uses_slot(k->args[i].size, p))
                c->sizes_vary = 1;
    int64_t *counts = tf_xcalloc((size_t)k->nargs, sizeof *counts);
    int status = TF_STATUS_INVALID;
    if (eval_sizes(c, config, counts, err) == 0)
        status = build_buffers(c, config, counts, err);
    free(counts);
    if (status == TF_STATUS_OK)
        c->ready = 1;
    return status;
}

/* The argument array for one launch, filled afresh (see child.largs). */
static void **launch_args(struct child *c)
{
    for (int i = 0; i < c->k->nargs; i++) {
        if (c->k->args[i].kind == TF_ARG_BUFFER)
            c->lslots[i].p = c->bufs[i].dev;
        else
            c->lslots[i].s = c->scalars[i];
        c->largs[i] = &c->lslots[i];
    }
    return c->largs;
}

struct sample_ctx {
    struct child *c;
    void *fn;
    const struct tf_launch *geo;
    struct tf_result *res; /* where verification writes its message */
};

static int sample_launch(void *ctx, double *seconds, struct tf_error *err)
{
    struct sample_ctx *s = ctx;
    return s->c->be->launch(s->c->ctx, s->fn, s->geo, launch_args(s->c), seconds, err);
}

static int sample_flush(void *ctx, struct tf_error *err)
{
    struct sample_ctx *s = ctx;
    return s->c->be->flush_cache(s->c->ctx, err);
}

static int sample_enqueue(void *ctx, int n, int flush, struct tf_error *err)
{
    struct sample_ctx *s = ctx;
    return s->c->be->enqueue(s->c->ctx, s->fn, s->geo, launch_args(s->c), n, flush, err);
}

static int sample_collect(void *ctx, double *seconds, struct tf_error *err)
{
    struct sample_ctx *s = ctx;
    return s->c->be->collect(s->c->ctx, seconds, err);
}

/* Compare every output of the verified launch (downloaded before the samples
 * were queued) with the reference, while the device runs the first samples. */
static int sample_verify(void *ctx, struct tf_error *err)
{
    struct sample_ctx *s = ctx;
    const struct tf_kernel *k = s->c->k;
    const int landed = wait_downloads(s->c, err);
    if (landed != TF_STATUS_OK)
        return landed;
    for (int i = 0; i < k->nargs; i++) {
        const struct tf_arg *a = &k->args[i];
        const struct buffer *b = &s->c->bufs[i];
        if (a->kind != TF_ARG_BUFFER || !a->output)
            continue;
        int status = tf_verify(a->name, a->type, b->got, b->expected, (size_t)b->count, k->rtol,
                               k->atol, s->res->message, sizeof s->res->message);
        if (status != TF_STATUS_OK) {
            tf_error_set(err, TF_ERR_EVAL, "%s", s->res->message);
            return status;
        }
    }
    return TF_STATUS_OK;
}

/* Evaluate launch geometry: a NULL expression is 1 (grid, block) or 0 (shared). */
static int eval_geometry(struct child *c, struct tf_launch *geo, struct tf_error *err)
{
    const struct tf_kernel *k = c->k;
    for (int d = 0; d < 7; d++) {
        const struct tf_expr *e = d < 3 ? k->grid[d] : d < 6 ? k->block[d - 3] : k->shared;
        const char *what = d < 3 ? "grid" : d < 6 ? "block" : "shared";
        int64_t v = d < 6 ? 1 : 0;
        if (e) {
            struct tf_value val;
            if (tf_expr_eval(e, c->slots, &val, err) != 0)
                return tf_error_set(err, TF_ERR_EVAL, "%s: %.900s", what, err->message);
            v = val.is_float ? (int64_t)ceil(val.u.f) : val.u.i;
        }
        if (d < 6 && (v < 1 || v > UINT32_MAX))
            return tf_error_set(err, TF_ERR_EVAL, "%s[%d] = %lld is out of range", what, d % 3,
                                (long long)v);
        if (d == 6 && v < 0)
            return tf_error_set(err, TF_ERR_EVAL, "shared = %lld is negative", (long long)v);
        if (d < 3)
            geo->grid[d] = (uint32_t)v;
        else if (d < 6)
            geo->block[d - 3] = (uint32_t)v;
        else
            geo->shared_bytes = (uint64_t)v;
    }
    return 0;
}

static double unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Telemetry now into `t`; 1 if the backend has any, else 0. A failed
 * reading is not a failed measurement: its fields just stay unknown. */
static int read_telemetry(struct child *c, struct tf_telemetry *t)
{
    struct tf_error err = {0};
    if (c->be->telemetry == NULL)
        return 0;
    return c->be->telemetry(c->ctx, t, &err) == 0;
}

/* Result telemetry from readings before (may be NULL) and after the samples:
 * the energy the samples used, the clock, power and temperature at their end,
 * throttled if the device said so at either end. */
static void apply_telemetry(struct tf_result *res, const struct tf_telemetry *before,
                            const struct tf_telemetry *after)
{
    res->sm_clock_mhz = (float)after->sm_clock_mhz;
    res->power_w = (float)after->power_w;
    res->temperature_c = (float)after->temperature_c;
    /* NVML's counter ticks coarsely (tens of ms): a phase shorter than a tick
     * reads 0, which is "too short to tell", not "free" - keep it unknown. */
    if (before && isfinite(before->energy_mj) && isfinite(after->energy_mj) &&
        after->energy_mj > before->energy_mj)
        res->energy_j = (after->energy_mj - before->energy_mj) * 1e-3;
    res->throttled = (uint8_t)(after->throttled == 1 || (before && before->throttled == 1));
}

/* Where a runner's time goes, per phase, when TUNEFARM_PROFILE is set: printed
 * to stderr when it exits (the overhead a duty cycle below 100% is made of). */
static struct {
    int on;
    long configs;
    double setup, load, restore, verify_launch, download, measure, telemetry, total;
} profile;

static void profile_report(void)
{
    if (!profile.on || profile.configs == 0)
        return;
    const double k = 1e3 / (double)profile.configs;
    fprintf(stderr,
            "tunefarm runner profile: %ld configurations, per configuration (ms): total %.3f = "
            "load %.3f + restore %.3f + verified launch %.3f + download %.3f + samples and "
            "verification %.3f + telemetry %.3f + other; setup %.3f s in all\n",
            profile.configs, profile.total * k, profile.load * k, profile.restore * k,
            profile.verify_launch * k, profile.download * k, profile.measure * k,
            profile.telemetry * k, profile.setup);
}

/* Add the time since *mark to *slot and move the mark. */
static void profile_lap(double *slot, double *mark)
{
    if (!profile.on)
        return;
    const double now = tf_channel_now();
    *slot += now - *mark;
    *mark = now;
}

/* MEASURE one configuration into `res`. */
static void child_measure(struct child *c, uint32_t kernel, uint32_t problem, uint32_t phase,
                          uint64_t config, const char *binary, struct tf_result *res)
{
    /* The screening pass of a two-phase search uses the cheap protocol. */
    const struct tf_measure *protocol = phase == 1 ? &c->job->screen : &c->job->measure;
    const double started = profile.on ? tf_channel_now() : 0;
    double mark = started, ignored = 0;
    struct tf_error err = {0};
    void *fn = NULL;
    int status;
    tf_result_init(res, kernel, problem, config, TF_STATUS_RUNTIME_ERROR);
    if (!c->ready || c->kernel != kernel || c->problem != problem) {
        tf_error_set(&err, TF_ERR_SYSTEM, "measure before setup of kernel %u problem %u", kernel,
                     problem);
        goto done;
    }
    const struct tf_kernel *k = c->k;
    if (c->sizes_vary) {
        int64_t *counts = tf_xcalloc((size_t)k->nargs, sizeof *counts);
        int changed = 0;
        status = TF_STATUS_INVALID;
        if (eval_sizes(c, config, counts, &err) == 0) {
            for (int i = 0; i < k->nargs; i++)
                changed |= c->bufs == NULL || counts[i] != c->bufs[i].count;
            status = changed ? build_buffers(c, config, counts, &err) : TF_STATUS_OK;
        }
        free(counts);
        if (status != TF_STATUS_OK) { /* bufs are gone: the next config rebuilds them */
            res->status = (uint8_t)status;
            goto done;
        }
    }
    struct tf_launch geo;
    if (eval_scalars(c, config, &err) != 0 || eval_geometry(c, &geo, &err) != 0) {
        res->status = TF_STATUS_INVALID;
        goto done;
    }
    profile_lap(&ignored, &mark);
    if (c->be->load(c->ctx, binary, k->entry, &fn, &err) != 0) {
        fn = NULL;
        res->status = TF_STATUS_LAUNCH_ERROR;
        goto done;
    }
    profile_lap(&profile.load, &mark);
    /* Only the loaded binary knows its resources on a GPU (NVRTC does not say). */
    if (c->be->function_info) {
        int32_t regs;
        int64_t shared, local;
        struct tf_error info_err = {0};
        if (c->be->function_info(c->ctx, fn, &regs, &shared, &local, &info_err) == 0) {
            res->registers = regs;
            res->shared_bytes = shared >= 0 ? shared + (int64_t)geo.shared_bytes : -1;
            res->spill_bytes = local;
        }
    }
    /* Fresh inputs and poisoned outputs every time (init never changes: downloads
     * go to `got`): an earlier variant may have scribbled on the device copies. */
    for (int i = 0; i < k->nargs; i++) {
        struct buffer *b = &c->bufs[i];
        if (k->args[i].kind != TF_ARG_BUFFER)
            continue;
        if ((b->dev_init ? c->be->copy(c->ctx, b->dev, b->dev_init, b->bytes, &err)
                         : c->be->upload(c->ctx, b->dev, b->init, b->bytes, &err)) != 0) {
            res->status = TF_STATUS_RUNTIME_ERROR;
            goto done;
        }
    }
    profile_lap(&profile.restore, &mark);
    double verified_seconds = 0.0;
    status = c->be->launch(c->ctx, fn, &geo, launch_args(c), &verified_seconds, &err);
    profile_lap(&profile.verify_launch, &mark);
    if (status != TF_STATUS_OK) {
        res->status = (uint8_t)status;
        goto done;
    }
    /* An overflow is this variant's failure, found before its output is
     * judged: what it wrote past its end is not a wrong result. Where launches
     * queue (GPUs) the check after the samples does it, and saves a round trip. */
    if (c->be->enqueue == NULL && (status = guard_check(c, &err)) != TF_STATUS_OK) {
        res->status = (uint8_t)status;
        goto done;
    }
    for (int i = 0; i < k->nargs; i++) {
        const struct tf_arg *a = &k->args[i];
        struct buffer *b = &c->bufs[i];
        if (a->kind != TF_ARG_BUFFER || !a->output)
            continue;
        /* A snapshot first where there is one: the samples overwrite dev. */
        const int failed =
            b->dev_snap ? c->be->copy(c->ctx, b->dev_snap, b->dev, b->bytes, &err) != 0 ||
                              c->be->download_async(c->ctx, b->got, b->dev_snap, b->bytes,
                                                    &err) != 0
                        : c->be->download(c->ctx, b->got, b->dev, b->bytes, &err) != 0;
        c->downloads_queued |= b->dev_snap != NULL;
        if (failed) {
            wait_downloads(c, &(struct tf_error){0});
            res->status = TF_STATUS_RUNTIME_ERROR;
            goto done;
        }
    }

    /* The outputs are compared (sample_verify) while the device runs the first
     * samples, where the backend can queue them; a wrong result discards them. */
    struct sample_ctx sc = {c, fn, &geo, res};
    char timer[64];
    snprintf(timer, sizeof timer, "%s timer%s", c->be->name,
             strcmp(c->be->name, "host") == 0 ? " (CLOCK_MONOTONIC)" : " (device events)");
    struct tf_sampler sampler = {sample_launch, sample_flush, &sc,          NULL,
                                 NULL,          sample_verify, verified_seconds, timer};
    if (c->be->enqueue && c->be->collect) {
        sampler.enqueue = sample_enqueue;
        sampler.collect = sample_collect;
    }
    profile_lap(&profile.download, &mark);
    struct tf_stats st;
    struct tf_telemetry before, after;
    const int have_before = read_telemetry(c, &before);
    profile_lap(&profile.telemetry, &mark);
    status = tf_measure_run(protocol, &sampler, &st, &err);
    /* Verification waited for the downloads, unless the samples failed first:
     * `got` and the snapshots are reused, so nothing may still be landing. */
    wait_downloads(c, &(struct tf_error){0});
    /* The samples ran the variant again: the guards once more (an overflow
     * that only some launches make). A failed launch may have broken the
     * device context, where nothing can be read back: not then. */
    if (status == TF_STATUS_OK || status == TF_STATUS_WRONG_RESULT) {
        struct tf_error guard_err = {0};
        if (guard_check(c, &guard_err) != TF_STATUS_OK) {
            status = TF_STATUS_RUNTIME_ERROR;
            err = guard_err;
            tf_strlcpy(res->message, guard_err.message, sizeof res->message);
        }
    }
    profile_lap(&profile.measure, &mark);
    if (status == TF_STATUS_WRONG_RESULT) {
        res->status = (uint8_t)status;
        res->device_time = verified_seconds + st.busy;
        res->timestamp = unix_now();
        c->be->unload(c->ctx, fn);
        return;
    }
    if (read_telemetry(c, &after))
        apply_telemetry(res, have_before ? &before : NULL, &after);
    profile_lap(&profile.telemetry, &mark);
    if (profile.on) {
        profile.configs++;
        profile.total += tf_channel_now() - started;
    }
    res->status = (uint8_t)status;
    res->samples = st.n;
    res->device_time = verified_seconds + st.busy;
    res->flushed_l2 = protocol->flush_l2;
    if (status == TF_STATUS_OK) {
        res->time_median = st.median;
        res->time_min = st.min;
        res->time_mean = st.mean;
        res->time_rsd = st.rsd;
    }
done:
    if (fn)
        c->be->unload(c->ctx, fn);
    res->timestamp = unix_now();
    if (res->status != TF_STATUS_OK && res->message[0] == '\0')
        tf_strlcpy(res->message, err.message[0] ? err.message : tf_status_name(res->status),
                   sizeof res->message);
}

/* The pids of this process's children (every thread's), at most `cap`; -1 if
 * the kernel cannot list them (no /proc/PID/task/TID/children). */
static int list_children(pid_t *out, int cap)
{
    DIR *tasks = opendir("/proc/self/task");
    if (tasks == NULL)
        return -1;
    int n = 0, listed = 0;
    struct dirent *e;
    while ((e = readdir(tasks)) != NULL && n < cap) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/children", e->d_name);
        FILE *f = fopen(path, "re");
        if (f == NULL)
            continue;
        listed = 1;
        long pid;
        while (n < cap && fscanf(f, "%ld", &pid) == 1)
            out[n++] = (pid_t)pid;
        fclose(f);
    }
    closedir(tasks);
    return listed ? n : -1;
}

/* End every process a variant left behind. The runner starts no process of
 * its own, so each child is a variant's; as a child subreaper (set at start)
 * the runner also inherits what those children started, setsid() or not, once
 * its parent is gone. Kill and reap until none is left (bounded: a fork bomb
 * still ends with the runner's process group when the worker ends it). */
static void end_strays(void)
{
    pid_t pids[256];
    for (int round = 0; round < 64; round++) {
        const int n = list_children(pids, 256);
        if (n <= 0)
            break;
        for (int i = 0; i < n; i++)
            kill(pids[i], SIGKILL);
        for (int i = 0; i < n; i++)
            waitpid(pids[i], NULL, 0);
    }
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

/* The process state a variant could change and leave behind for the next
 * ones (an interval timer whose SIGALRM kills the runner in an innocent
 * variant, RLIMIT_NOFILE lowered so no later dlopen succeeds, the guard
 * handler replaced, signals blocked, floating-point traps or rounding).
 * Taken before the first variant after a SETUP, compared after each. */
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000 /* the kernel's flag glibc sets on every action (x86, arm) */
#endif

struct proc_state {
    struct rlimit lim[RLIM_NLIMITS];
    struct sigaction act[NSIG];
    sigset_t mask;
    fenv_t fenv;
};

static void proc_state_take(struct proc_state *ps)
{
    memset(ps, 0, sizeof *ps);
    for (int r = 0; r < RLIM_NLIMITS; r++)
        getrlimit((__rlimit_resource_t)r, &ps->lim[r]);
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, NULL, &ps->act[sig]);
    sigprocmask(SIG_SETMASK, NULL, &ps->mask);
    fegetenv(&ps->fenv);
}

/* Put back what a variant changed of `ps`; returns what it found changed
 * (a name, "" if nothing). The floating-point environment is simply
 * restored; anything else changed means the process cannot be trusted to be
 * as it was (a timer may already be due, a hard limit cannot be raised
 * again), and the caller ends the runner after replying. */
static const char *proc_state_restore(const struct proc_state *ps)
{
    const char *changed = "";
    fesetenv(&ps->fenv);
    static const int timers[] = {ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF};
    for (size_t t = 0; t < sizeof timers / sizeof *timers; t++) {
        struct itimerval it;
        if (getitimer(timers[t], &it) == 0 &&
            (it.it_value.tv_sec || it.it_value.tv_usec || it.it_interval.tv_sec ||
             it.it_interval.tv_usec)) {
            const struct itimerval off = {{0, 0}, {0, 0}};
            setitimer(timers[t], &off, NULL);
            changed = "an interval timer";
        }
    }
    for (int r = 0; r < RLIM_NLIMITS; r++) {
        struct rlimit now;
        if (getrlimit((__rlimit_resource_t)r, &now) == 0 &&
            (now.rlim_cur != ps->lim[r].rlim_cur || now.rlim_max != ps->lim[r].rlim_max)) {
            setrlimit((__rlimit_resource_t)r, &ps->lim[r]);
            changed = "a resource limit";
        }
    }
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction now;
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &now) != 0)
            continue;
        if (now.sa_handler != ps->act[sig].sa_handler ||
            (now.sa_flags & ~SA_RESTORER) != (ps->act[sig].sa_flags & ~SA_RESTORER)) {
            sigaction(sig, &ps->act[sig], NULL);
            changed = "a signal handler";
        }
    }
    /* The runner must die with its shield (shield_start): a variant that
     * cleared the parent-death signal leaves a runner the worker's kill of
     * the shield alone would not end. */
    int pdeath = 0;
    if (shield_pid > 0 && (prctl(PR_GET_PDEATHSIG, &pdeath) != 0 || pdeath != SIGKILL)) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        changed = "the parent-death signal";
    }
    sigset_t mask;
    sigprocmask(SIG_SETMASK, NULL, &mask);
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(&mask, sig) != sigismember(&ps->mask, sig)) {
            sigprocmask(SIG_SETMASK, &ps->mask, NULL);
            changed = "the signal mask";
            break;
        }
    return changed;
}

/* MEASURE with the guard pages armed: a fault in one is the variant's
 * runtime_error naming the buffer (the runner then ends: see guard_check). */
static void guarded_measure(struct child *c, uint32_t kernel, uint32_t problem, uint32_t phase,
                            uint64_t config, const char *binary, struct tf_result *res)
{
    if (sigsetjmp(guard_jmp, 1) == 0) {
        guard_armed = 1;
        child_measure(c, kernel, problem, phase, config, binary, res);
        guard_armed = 0;
        return;
    }
    /* Back from guard_signal: the variant was stopped in the middle. */
    const struct tf_arg *a = &c->k->args[guard_arg];
    tf_result_init(res, kernel, problem, config, TF_STATUS_RUNTIME_ERROR);
    snprintf(res->message, sizeof res->message,
             "%s: %s (a fault %zu bytes %s it, in the guard page beyond its canary; the "
             "runner restarts)",
             a->name, guard_after ? "wrote past its end" : "wrote before its start",
             (size_t)guard_distance, guard_after ? "after" : "before");
    res->timestamp = unix_now();
    c->damaged = 1;
}

/* INIT: load the job from the bundle message, open the device. */
static int child_init(struct child *c, struct tf_buf *req, const char *backend, int ordinal,
                      struct tf_error *err)
{
    uint64_t n;
    struct tf_buf msg = {0};
    enum tf_msg_type type;
    if (tf_buf_get_u64(req, &n) || n > req->len - req->pos)
        return tf_error_set(err, TF_ERR_SYSTEM, "malformed INIT request");
    tf_buf_put_bytes(&msg, req->data + req->pos, (size_t)n);
    int rc = -1;
    if (tf_wire_open(&msg, &type, err) != 0)
        goto done;
    if (type != TF_MSG_JOB) {
        tf_error_set(err, TF_ERR_SYSTEM, "INIT carries message type %d, not JOB", (int)type);
        goto done;
    }
    c->bundle = tf_wire_get_job(&msg, err);
    if (c->bundle == NULL)
        goto done;
    if (c->bundle->count < 1) {
        tf_error_set(err, TF_ERR_SCHEMA, "the job bundle is empty");
        goto done;
    }
    c->job = tf_job_load(c->bundle->files[0].path, c->bundle, err);
    if (c->job == NULL)
        goto done;
    c->be = tf_backend_find(backend);
    if (c->be == NULL) {
        tf_error_set(err, TF_ERR_BACKEND, "no backend named '%s' in this build", backend);
        goto done;
    }
    if (c->be->describe(ordinal, &c->dev, err) != 0 || c->be->open(ordinal, &c->ctx, err) != 0)
        goto done;
    rc = 0;
done:
    tf_buf_free(&msg);
    return rc;
}

/* Close every descriptor but 0-2 and the channel (`in`, `out`): what the
 * worker rank had open without O_CLOEXEC (Open MPI's sockets to mpirun and
 * the other ranks among them) is no variant's business; a variant writing to
 * stray descriptors once hung the whole run's MPI_Finalize. */
static void close_inherited(int in, int out)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return;
    int fds[1024], n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 1024) {
        const int fd = atoi(e->d_name);
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd > 2 && fd != in && fd != out &&
            fd != dirfd(d))
            fds[n++] = fd;
    }
    closedir(d);
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

/* ---- the shield ------------------------------------------------------------ */

/* pthread_atfork's child handler in the runner: what a variant fork()s gets
 * no channel. Otherwise a child it left behind would hold the worker's EOF
 * back after the runner died (a variant that kills the shield and forks would
 * wait out its whole deadline as a timeout), or could write into the stream. */
static void channel_close_in_child(void)
{
    const int fds[3] = {channel_in, channel_out, shield_fd};
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    channel_in = channel_out = shield_fd = -1;
}

/* SIGCHLD in the shield: only to interrupt its ppoll. */
static void shield_sigchld(int sig)
{
    (void)sig;
}

/* In the shield: echo what the runner sends on `ping` (shield_alive) until
 * the runner ends, then end as it ended (its exit status, or the signal that
 * killed it, raised again), so the worker sees the runner's end when it reaps
 * the shield. Never returns. */
static _Noreturn void shield_wait(pid_t runner, int ping)
{
    sigset_t chld, during;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &during);
    sigdelset(&during, SIGCHLD); /* SIGCHLD arrives only inside ppoll: no lost wake-up */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = shield_sigchld;
    sigaction(SIGCHLD, &sa, NULL);
    int st = 0;
    for (;;) {
        const pid_t w = waitpid(runner, &st, WNOHANG);
        if (w == runner)
            break;
        if (w < 0 && errno != EINTR)
            _exit(1);
        struct pollfd p = {.fd = ping, .events = POLLIN};
        if (ppoll(&p, ping >= 0 ? 1 : 0, NULL, &during) > 0) {
            unsigned char b[256];
            const ssize_t k = read(ping, b, sizeof b);
            if (k > 0)
                (void)!send(ping, b, (size_t)k, MSG_NOSIGNAL | MSG_DONTWAIT);
            else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
                close(ping); /* the runner is ending: only its exit is left to wait for */
                ping = -1;
            }
        }
    }
    if (WIFEXITED(st))
        _exit(WEXITSTATUS(st));
    const int sig = WTERMSIG(st);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig); /* a signal whose default action does not kill */
}

/* Fork the shield off, first thing: this process (the one the worker
 * spawned, leader of its process group, with the worker as its parent and
 * PR_SET_PDEATHSIG set by tf_channel_child_open) keeps no channel and only
 * waits (shield_wait); its child, in the same process group, becomes the
 * runner and dies with it (PR_SET_PDEATHSIG). A variant's getppid() is then
 * the shield. 0 in the runner, -1 if it cannot start. */
static int shield_start(int in, int out)
{
    const pid_t shield = getpid();
    int ping[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ping) != 0) {
        fprintf(stderr, "tunefarm runner: socketpair: %s\n", strerror(errno));
        return -1;
    }
    /* No core file of the shield, whatever kills it (a variant may). */
    const struct rlimit no_core = {0, 0};
    struct rlimit core;
    getrlimit(RLIMIT_CORE, &core);
    setrlimit(RLIMIT_CORE, &no_core);
    const pid_t runner = fork();
    if (runner < 0) {
        fprintf(stderr, "tunefarm runner: cannot fork: %s\n", strerror(errno));
        return -1;
    }
    if (runner > 0) {
        close(in);
        close(out);
        close(ping[1]);
        shield_wait(runner, ping[0]);
    }
    setrlimit(RLIMIT_CORE, &core); /* the runner's own, as it was */
    close(ping[0]);
    /* A shield already gone (killed between fork and prctl) is a runner
     * with no one to end it: stop here, the worker sees EOF. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != shield)
        return -1;
    shield_pid = shield;
    shield_fd = ping[1];
    channel_in = in;
    channel_out = out;
    if (pthread_atfork(NULL, NULL, channel_close_in_child) != 0)
        return -1;
    return 0;
}

/* Whether the shield is still there, asked after every variant: a round trip
 * through it (a token sent, read back). A signal a variant sent its parent
 * was queued before its kill() returned, and the shield handles it before it
 * can answer, so a variant that killed the shield is seen here, before the
 * runner replies, not by the configuration after it (the runner's parent-death
 * signal comes a moment later and would otherwise lose that race). A stopped
 * shield (kill(getppid(), SIGSTOP)) is continued first: stopping it harms no
 * one. 0: gone; 1: there; -1: cannot tell (the variant closed or replaced the
 * descriptor: the runner's channel is then likely gone too). */
static int shield_alive(void)
{
    static uint64_t token;
    unsigned char want[8], win[8] = {0}, b[256];
    size_t have = 0;
    if (shield_fd < 0)
        return -1;
    kill(shield_pid, SIGCONT);
    token++;
    memcpy(want, &token, sizeof want);
    while (recv(shield_fd, b, sizeof b, MSG_DONTWAIT) > 0) /* stale echoes */
        ;
    if (send(shield_fd, want, sizeof want, MSG_NOSIGNAL) != (ssize_t)sizeof want)
        return errno == EPIPE || errno == ECONNRESET ? 0 : -1;
    for (;;) {
        const ssize_t k = recv(shield_fd, b, sizeof b, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k == 0 || (k < 0 && errno == ECONNRESET))
            return 0;
        if (k < 0)
            return -1;
        for (ssize_t i = 0; i < k; i++) {
            memmove(win, win + 1, sizeof win - 1);
            win[sizeof win - 1] = b[i];
            if (++have >= sizeof win && memcmp(win, want, sizeof win) == 0)
                return 1;
        }
    }
}

int tf_runner_main(int argc, char **argv)
{
    if (argc < 4 || strcmp(argv[1], "__runner") != 0) {
        fprintf(stderr, "usage: %s __runner BACKEND ORDINAL (internal: started by a worker)\n",
                argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_DFL);
    int in, out;
    if (tf_channel_child_open(&in, &out) != 0)
        return 1;
    close_inherited(in, out);
    if (shield_start(in, out) != 0)
        return 1;
    profile.on = getenv("TUNEFARM_PROFILE") != NULL;
    /* Orphans of a variant's children come to us (end_strays). */
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    const char *backend = argv[2];
    const int ordinal = atoi(argv[3]);
    struct child c = {0};
    c.cwd_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    guard_install(&c);
    struct tf_buf req = {0}, rep = {0};
    int initialized = 0, rc = 0, exit_after_reply = 0;
    static struct proc_state state; /* what no variant may leave changed (proc_state_take) */
    int state_taken = 0;

    while (tf_channel_read_frame(in, &req, -1) == 0) {
        uint8_t type;
        struct tf_error err = {0};
        if (tf_buf_get_u8(&req, &type) != 0)
            break;
        buf_reset(&rep);
        if (type == REQ_QUIT)
            break;
        if (type == REQ_INIT) {
            const int ok = !initialized && child_init(&c, &req, backend, ordinal, &err) == 0;
            if (initialized)
                tf_error_set(&err, TF_ERR_SYSTEM, "runner initialized twice");
            initialized |= ok;
            tf_buf_put_u8(&rep, (uint8_t)ok);
            tf_buf_put_str(&rep, ok ? "" : err.message);
            /* One deadline for both protocols: the longer of the two timeouts. */
            tf_buf_put_f64(&rep, ok ? fmax(c.job->measure.timeout, c.job->screen.timeout) : 0.0);
        } else if (initialized && type == REQ_SETUP) {
            uint32_t kernel, problem;
            uint64_t config;
            char *reference = NULL;
            int status = TF_STATUS_RUNTIME_ERROR;
            if (tf_buf_get_u32(&req, &kernel) || tf_buf_get_u32(&req, &problem) ||
                tf_buf_get_u64(&req, &config) || (reference = tf_buf_get_strdup(&req)) == NULL)
                tf_error_set(&err, TF_ERR_SYSTEM, "malformed SETUP request");
            else {
                const double setup_started = tf_channel_now();
                status = child_setup(&c, kernel, problem, config, reference, &err);
                state_taken = 0; /* the reference may have set up what it needs */
                profile.setup += tf_channel_now() - setup_started;
            }
            free(reference);
            tf_buf_put_u8(&rep, (uint8_t)status);
            char message[TF_MESSAGE_LEN];
            tf_strlcpy(message, status == TF_STATUS_OK ? "" : err.message, sizeof message);
            tf_buf_put_str(&rep, message);
            if (status != TF_STATUS_OK && c.be->healthy && !c.be->healthy(c.ctx))
                exit_after_reply = 1;
            tf_buf_put_u8(&rep, (uint8_t)exit_after_reply);
        } else if (initialized && type == REQ_MEASURE) {
            uint32_t kernel, problem, phase;
            uint64_t config;
            char *binary = NULL;
            struct tf_result res;
            if (tf_buf_get_u32(&req, &kernel) || tf_buf_get_u32(&req, &problem) ||
                tf_buf_get_u64(&req, &config) || tf_buf_get_u32(&req, &phase) ||
                (binary = tf_buf_get_strdup(&req)) == NULL) {
                rc = 1;
                break;
            }
            if (!state_taken) {
                proc_state_take(&state);
                state_taken = 1;
            }
            guarded_measure(&c, kernel, problem, phase, config, binary, &res);
            res.phase = (uint8_t)phase;
            free(binary);
            /* What a variant may have changed of the process, put back: its
             * folder (a chdir() must not break the next load), its children. */
            if (c.cwd_fd >= 0 && fchdir(c.cwd_fd) != 0)
                fprintf(stderr, "tunefarm runner: cannot return to its folder: %s\n",
                        strerror(errno));
            end_strays();
            if (shield_alive() == 0) {
                /* The variant killed the runner's parent (or the shield died
                 * under it): no answer, so that the worker records this
                 * configuration crashed (EOF), not the next one. */
                fprintf(stderr,
                        "tunefarm runner: configuration %llu killed the runner's parent (its "
                        "shield); the runner ends\n",
                        (unsigned long long)config);
                _exit(1);
            }
            const char *changed = proc_state_restore(&state);
            if (changed[0] != '\0') {
                /* The variant's own result stands; a clean runner takes the next. */
                fprintf(stderr,
                        "tunefarm runner: configuration %llu changed %s of the runner; "
                        "it restarts\n",
                        (unsigned long long)config, changed);
                c.damaged = 1;
            }
            if (c.damaged)
                exit_after_reply = 1;
            tf_buf_put_result(&rep, &res);
            /* A fault that broke the device context (CUDA's sticky errors) leaves
             * nothing usable in this process: say so, reply, exit. */
            if (res.status != TF_STATUS_OK && c.be->healthy && !c.be->healthy(c.ctx))
                exit_after_reply = 1;
            tf_buf_put_u8(&rep, (uint8_t)exit_after_reply);
        } else {
            fprintf(stderr, "tunefarm runner: unexpected request %d\n", type);
            rc = 1;
            break;
        }
        if (tf_channel_write_frame(out, &rep, -1) != 0)
            break;
        if (exit_after_reply) {
            rc = RUNNER_EXIT_UNHEALTHY;
            break;
        }
    }
    guard_child = NULL;
    end_strays();
    if (c.cwd_fd >= 0)
        close(c.cwd_fd);
    if (c.k)
        reset_problem(&c);
    if (c.ctx)
        c.be->close(c.ctx);
    tf_job_destroy(c.job);
    tf_bundle_destroy(c.bundle);
    tf_buf_free(&req);
    tf_buf_free(&rep);
    close(in);
    close(out);
    profile_report();
    return rc;
}
