/* runner.c - the worker's handle on its runner process.
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
 * SETUP and MEASURE answers end with an "exiting" byte: after a fault that
 * breaks the device context for good (CUDA's sticky errors, which only a new
 * process clears), or a variant that damaged the runner, the child replies,
 * then exits, and the worker reaps it so the next configuration gets a fresh
 * runner, not a `crashed`.
 *
 * A fresh runner need not run the reference again: each set of the
 * reference's outputs a runner computes comes back with the SETUP or MEASURE
 * answer that computed it, as a sealed memfd (a descriptor sent after the
 * frame, SCM_RIGHTS) with its key, a text naming the buffer sizes and the
 * reference.depends_on values they are for; the worker keeps the current
 * problem's sets (bounded, the least recently received dropped first) and
 * offers them all with the next SETUP of the same kernel, problem and
 * reference (runner_child.c, "the reference's outputs", says when a runner
 * uses one).
 *
 * The process the worker spawns is the runner's shield, not the runner
 * (runner_shield.c): it leads its own process group, and the runner is its
 * child in that group, so killing the group ends the shield, the runner and
 * whatever a variant forked; a variant that kills its parent kills the
 * shield, and the worker reads EOF and records that configuration crashed.
 * The other files: runner_child.c (the runner), runner_shield.c (the shield,
 * strays, process state), runner_guard.c (canaries, guard pages, sealed
 * memory); runner_internal.h says what they share. */
#include "runner.h"

#include "channel.h"
#include "runner_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define INIT_DEADLINE 60.0
#define SETUP_DEADLINE_MIN 120.0
#define QUIT_GRACE 2.0

struct tf_runner {
    char *exe;
    char *cwd;              /* the worker's folder (absolute_path), "" if unknown */
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
    /* The reference's outputs as earlier runners computed them, for the
     * last few (kernel, problem, reference) this worker measured: sealed
     * memfds and their keys, in the runner's words (see "the reference's
     * outputs" below). Kept across runners, so a runner started again
     * computes no reference of a problem it comes back to. */
    struct expected_memfd {
        int fd;
        char *key;
        size_t bytes;
        uint32_t kernel, problem;
        char *reference;
        uint64_t used;      /* when last received or offered (the clock below) */
    } expected[RUNNER_WORKER_EXPECTED_MAX];
    int nexpected;
    uint64_t expected_clock;
    /* MEASURE requests sent (or to be sent) whose answers the worker has not
     * collected, oldest first: see "two requests in flight" below. */
    struct runner_sent {
        uint32_t kernel, problem, phase;
        uint64_t config;
        char *binary, *reference; /* absolute (absolute_path) */
        enum { REQUEST_UNSENT, REQUEST_SENT, REQUEST_DONE } state;
        struct tf_result result;  /* REQUEST_DONE: the answer */
    } requests[2];
    int nrequests;
};

int tf_runner_fd_send(int sock, int fd)
{
    char byte = 'F';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.space,
                       .msg_controllen = sizeof u.space};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof fd);
    ssize_t k;
    do
        k = sendmsg(sock, &m, MSG_NOSIGNAL);
    while (k < 0 && errno == EINTR);
    return k == 1 ? 0 : -1;
}

int tf_runner_fd_recv(int sock, double deadline, int *fd)
{
    *fd = -1;
    for (;;) {
        int ms = -1;
        if (deadline >= 0) {
            const double left = deadline - tf_channel_now();
            ms = left <= 0 ? 0 : (int)(left * 1000.0) + 1;
        }
        struct pollfd p = {.fd = sock, .events = POLLIN};
        const int rc = poll(&p, 1, ms);
        if (rc > 0)
            break;
        if (rc == 0)
            return -2;
        if (errno != EINTR)
            return -1;
    }
    char byte;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(4 * sizeof(int))];
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.space,
                       .msg_controllen = sizeof u.space};
    ssize_t k;
    do
        k = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    while (k < 0 && errno == EINTR);
    if (k != 1)
        return -1;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h != NULL; h = CMSG_NXTHDR(&m, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
            continue;
        const size_t n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int got;
            memcpy(&got, CMSG_DATA(h) + i * sizeof(int), sizeof got);
            if (*fd < 0)
                *fd = got;
            else
                close(got); /* one was sent: more is not ours to keep */
        }
    }
    return *fd >= 0 ? 0 : -1;
}

/* Forget entry `i` of the reference's outputs the worker keeps (closing its memfd). */
static void expected_remove(struct tf_runner *r, int i)
{
    close(r->expected[i].fd);
    free(r->expected[i].key);
    free(r->expected[i].reference);
    r->expected[i] = r->expected[--r->nexpected];
}

/* Forget all of them. */
static void expected_drop(struct tf_runner *r)
{
    while (r->nexpected > 0)
        expected_remove(r, r->nexpected - 1);
}

/* 1 if entry `e` holds outputs of (kernel, problem, reference). */
static int expected_of(const struct expected_memfd *e, uint32_t kernel, uint32_t problem,
                       const char *reference)
{
    return e->kernel == kernel && e->problem == problem && strcmp(e->reference, reference) == 0;
}

/* Keep memfd `fd` of outputs with key `key` (both taken) for (kernel,
 * problem, reference), replacing one of the same key. The least recently
 * used go while there are more than the bounds: a problem's own
 * (RUNNER_EXPECTED_MAX_SETS, what one SETUP can offer) and all of them
 * (RUNNER_WORKER_EXPECTED_MAX, RUNNER_WORKER_EXPECTED_BYTES besides this one). */
static void expected_keep(struct tf_runner *r, uint32_t kernel, uint32_t problem,
                          const char *reference, int fd, char *key)
{
    struct stat st;
    for (int i = 0; i < r->nexpected; i++)
        if (expected_of(&r->expected[i], kernel, problem, reference) &&
            strcmp(r->expected[i].key, key) == 0) {
            expected_remove(r, i);
            break;
        }
    for (;;) {
        int mine = 0, oldest = -1, oldest_mine = -1;
        size_t bytes = 0;
        for (int i = 0; i < r->nexpected; i++) {
            const struct expected_memfd *e = &r->expected[i];
            bytes += e->bytes;
            if (oldest < 0 || e->used < r->expected[oldest].used)
                oldest = i;
            if (expected_of(e, kernel, problem, reference)) {
                mine++;
                if (oldest_mine < 0 || e->used < r->expected[oldest_mine].used)
                    oldest_mine = i;
            }
        }
        if (mine >= RUNNER_EXPECTED_MAX_SETS)
            expected_remove(r, oldest_mine);
        else if (r->nexpected >= RUNNER_WORKER_EXPECTED_MAX ||
                 (r->nexpected > 0 && bytes > RUNNER_WORKER_EXPECTED_BYTES))
            expected_remove(r, oldest);
        else
            break;
    }
    r->expected[r->nexpected++] = (struct expected_memfd){
        .fd = fd,
        .key = key,
        .bytes = fstat(fd, &st) == 0 ? (size_t)st.st_size : 0,
        .kernel = kernel,
        .problem = problem,
        .reference = tf_xstrdup(reference),
        .used = ++r->expected_clock,
    };
}

/* Read the count and keys of the sets a SETUP or MEASURE answer announces
 * (the runner's put_fresh), then their memfds, and keep them for (kernel,
 * problem, reference). The frame is in r->buf. 0, -1 (EOF, no descriptor),
 * -2 (deadline) or -3 (malformed). */
static int expected_receive(struct tf_runner *r, uint32_t kernel, uint32_t problem,
                            const char *reference, double deadline)
{
    uint32_t n = 0;
    if (tf_buf_get_u32(&r->buf, &n) || n > RUNNER_EXPECTED_MAX_SETS)
        return -3;
    char *keys[RUNNER_EXPECTED_MAX_SETS] = {0};
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++)
        if ((keys[i] = tf_buf_get_strdup(&r->buf)) == NULL)
            rc = -3;
    uint32_t i = 0;
    for (; i < n && rc == 0; i++) {
        int fd;
        if ((rc = tf_runner_fd_recv(r->fd, deadline, &fd)) == 0) {
            expected_keep(r, kernel, problem, reference, fd, keys[i]);
            keys[i] = NULL;
        }
    }
    for (i = 0; i < n; i++)
        free(keys[i]);
    return rc;
}

/* 1 once the process `pid` (our child) has ended, without reaping it: while
 * it is a zombie its pid, and so its process group's id, cannot be given to
 * another process. `block`: wait for that. */
static int child_ended(pid_t pid, int block)
{
    siginfo_t si;
    for (;;) {
        memset(&si, 0, sizeof si);
        const int rc = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
        if (rc == 0)
            return si.si_pid == pid;
        if (errno != EINTR)
            return 1; /* not our child any more (ECHILD): nothing to wait for */
    }
}

/* Reap the child after EOF or a deadline and describe its end into `msg`.
 * `kill_first` (a deadline): SIGKILL the group at once. Otherwise (EOF, QUIT)
 * the leader is given QUIT_GRACE to exit by itself first, so that the shield
 * can pass on how its runner ended (a SIGKILL sent to the group right away
 * would race with it and turn every crash into "signal 9"). What is left of
 * the group is killed before the leader is reaped (child_ended), never after:
 * a reaped leader's group id could already be a stranger's. */
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
        int ended;
        while (!(ended = child_ended(r->pid, 0)) && tf_channel_now() < deadline) {
            struct timespec ts = {0, 2 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (!ended) {
            kill(-r->pid, SIGKILL);
            killed = 1;
            child_ended(r->pid, 1);
        }
        /* A runner that exited by itself may leave group members behind; the
         * leader, not reaped yet, still holds the group's id. */
        kill(-r->pid, SIGKILL);
        pid_t w;
        while ((w = waitpid(r->pid, &st, 0)) < 0 && errno == EINTR)
            ;
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
    tf_runner_buf_reset(&r->buf);
    tf_buf_put_u8(&r->buf, RUNNER_REQ_INIT);
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
    char cwd[PATH_MAX];
    r->exe = tf_xstrdup(exe);
    r->cwd = tf_xstrdup(getcwd(cwd, sizeof cwd) ? cwd : "");
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
        /* A setup runs no variant, only tunefarm's code and the reference's:
         * say so, or a reference that exits looks like the variant's crash. */
        snprintf(out->message, sizeof out->message, "%s%s%s",
                 strcmp(what, "measure") == 0 ? "" : what,
                 strcmp(what, "measure") == 0 ? "" : ": ", death);
    }
}

/* `path` as an absolute path (malloc'd): relative ones are taken from the
 * worker's folder, which never changes (read once, at tf_runner_start), so
 * that a variant that chdir()s in the runner cannot make the next binary or
 * reference unreachable. */
static char *absolute_path(const struct tf_runner *r, const char *path)
{
    if (path[0] == '/' || path[0] == '\0' || r->cwd[0] == '\0')
        return tf_xstrdup(path);
    return tf_xasprintf("%s/%s", r->cwd, path);
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
    if (r->nrequests > 0)
        tf_die("tf_runner_prepare: %d requests in flight (tf_runner_collect first)",
               r->nrequests);
    char *reference = absolute_path(r, reference_path);
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
    r->setup_valid = 0; /* the child's current problem changes whatever happens next */
    /* The reference's outputs earlier runners computed for this problem go
     * with the request (the descriptors right after it). */
    int offer[RUNNER_EXPECTED_MAX_SETS], noffer = 0;
    for (int i = 0; i < r->nexpected && noffer < RUNNER_EXPECTED_MAX_SETS; i++)
        if (expected_of(&r->expected[i], kernel, problem, reference)) {
            offer[noffer++] = i;
            r->expected[i].used = ++r->expected_clock;
        }
    tf_runner_buf_reset(&r->buf);
    tf_buf_put_u8(&r->buf, RUNNER_REQ_SETUP);
    tf_buf_put_u32(&r->buf, kernel);
    tf_buf_put_u32(&r->buf, problem);
    tf_buf_put_u64(&r->buf, config);
    tf_buf_put_str(&r->buf, reference);
    tf_buf_put_u32(&r->buf, (uint32_t)noffer);
    for (int i = 0; i < noffer; i++)
        tf_buf_put_str(&r->buf, r->expected[offer[i]].key);
    const double deadline = tf_channel_now() + fmax(SETUP_DEADLINE_MIN, 10 * r->timeout);
    int rc = tf_channel_write_frame(r->fd, &r->buf, deadline);
    for (int i = 0; rc == 0 && i < noffer; i++)
        if (tf_runner_fd_send(r->fd, r->expected[offer[i]].fd) != 0)
            rc = -1;
    if (rc == 0)
        rc = tf_channel_read_frame(r->fd, &r->buf, deadline);
    uint8_t status = 0, exiting = 0;
    if (rc == 0 && (tf_buf_get_u8(&r->buf, &status) ||
                    tf_buf_get_str(&r->buf, out->message, sizeof out->message) ||
                    tf_buf_get_u8(&r->buf, &exiting) || status >= TF_STATUS_COUNT))
        rc = -3; /* a malformed answer: the runner lives, and is killed */
    if (rc == 0) /* what the runner computed: their memfds follow */
        rc = expected_receive(r, kernel, problem, reference, deadline);
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

/* Two requests in flight. The runner serves its socket in order, one frame
 * at a time, and answers a MEASURE only after it has put its process back
 * (runner_child.c, serve_measure). So the worker may send the next MEASURE
 * of the same problem while the runner still measures the one before: it
 * waits in the socket, and the runner starts it as soon as it has answered,
 * without waiting for the worker to wake up, read the answer and choose
 * (about 1 ms a configuration under a node's full compile load, 3% of an
 * sgemm 4096^3 tune's GPU time). Failures stay with their configuration: a
 * request whose runner died or was killed before it answered the one ahead
 * (that one crashed, timed out, or asked for a fresh runner), or whose frame
 * could not be written, is sent again, to a new runner, when its answer is
 * collected. A timeout runs from when the worker starts waiting for the
 * answer, never before the runner can have started it. */

/* Write request `q`'s MEASURE frame: tf_channel_write_frame's 0, -1 or -2. */
static int request_write(struct tf_runner *r, const struct runner_sent *q)
{
    tf_runner_buf_reset(&r->buf);
    tf_buf_put_u8(&r->buf, RUNNER_REQ_MEASURE);
    tf_buf_put_u32(&r->buf, q->kernel);
    tf_buf_put_u32(&r->buf, q->problem);
    tf_buf_put_u64(&r->buf, q->config);
    tf_buf_put_u32(&r->buf, q->phase);
    tf_buf_put_str(&r->buf, q->binary);
    return tf_channel_write_frame(r->fd, &r->buf, tf_channel_now() + r->timeout);
}

/* Send request `q` to the runner: the problem set up first if it is not, then
 * the MEASURE frame. Its result is known at once (REQUEST_DONE) where no
 * runner need see it (the problem cannot be set up) or the send failed.
 * -1 + err only if no runner can be (re)started. */
static int request_send(struct tf_runner *r, struct runner_sent *q, struct tf_error *err)
{
    if (prepare(r, q->kernel, q->problem, q->config, q->reference, &q->result, err) != 0)
        return -1;
    if (q->result.status != TF_STATUS_OK) {
        q->state = REQUEST_DONE;
        return 0;
    }
    tf_result_init(&q->result, q->kernel, q->problem, q->config, TF_STATUS_CRASHED);
    if (ensure_child(r, &q->result, err) != 0)
        return -1;
    const int rc = request_write(r, q);
    if (rc != 0) {
        exchange_failed(r, rc, "measure", &q->result);
        q->state = REQUEST_DONE;
        return 0;
    }
    q->state = REQUEST_SENT;
    return 0;
}

/* Read the answer of request `q`, sent and the oldest one the runner holds,
 * into q->result (REQUEST_DONE). */
static void request_answer(struct tf_runner *r, struct runner_sent *q)
{
    /* From now: the runner started it no later than this (a worker that
     * did other work meanwhile, or was stopped, owes the runner that time). */
    double deadline = tf_channel_now() + r->timeout;
    int rc = tf_channel_read_frame(r->fd, &r->buf, deadline);
    uint8_t kind = RUNNER_ANSWER_RESULT;
    if (rc == 0 && tf_buf_get_u8(&r->buf, &kind) == 0 && kind == RUNNER_ANSWER_REFERENCE) {
        /* The reference runs first (new reference.depends_on values, new
         * buffer sizes): a SETUP's time for it, then the configuration's. */
        deadline = tf_channel_now() + fmax(SETUP_DEADLINE_MIN, 10 * r->timeout) + r->timeout;
        kind = 0xff;
        rc = tf_channel_read_frame(r->fd, &r->buf, deadline);
        if (rc == 0 && tf_buf_get_u8(&r->buf, &kind) != 0)
            kind = 0xff;
    }
    struct tf_result got;
    uint8_t exiting = 0;
    if (rc == 0 && (kind != RUNNER_ANSWER_RESULT || tf_buf_get_result(&r->buf, &got) ||
                    tf_buf_get_u8(&r->buf, &exiting) || got.config != q->config ||
                    got.kernel != q->kernel || got.problem != q->problem))
        rc = -3; /* a malformed answer: the runner lives, and is killed */
    if (rc == 0) /* outputs the runner computed for this configuration's key */
        rc = expected_receive(r, q->kernel, q->problem, r->setup_reference, deadline);
    q->state = REQUEST_DONE;
    if (rc != 0) {
        exchange_failed(r, rc, "measure", &q->result);
        return;
    }
    q->result = got;
    if (exiting) /* its device context is broken: the next request starts a new runner */
        reap_child(r, 0, NULL, 0);
    if (isfinite(got.device_time))
        r->device_seconds += got.device_time;
}

int tf_runner_pending(const struct tf_runner *r)
{
    return r->nrequests;
}

int tf_runner_can_send(const struct tf_runner *r, uint32_t kernel, uint32_t problem,
                       const char *reference)
{
    if (r->nrequests == 0)
        return 1;
    if (r->nrequests > 1)
        return 0;
    const struct runner_sent *ahead = &r->requests[0];
    char *ref = absolute_path(r, reference);
    /* Behind a request the runner holds, for the problem it has set up: the
     * runner takes it next with no SETUP (which must not pass an answer). */
    const int ok = ahead->state == REQUEST_SENT && r->pid > 0 && r->setup_valid &&
                   ahead->kernel == kernel && ahead->problem == problem &&
                   r->setup_kernel == kernel && r->setup_problem == problem &&
                   strcmp(r->setup_reference ? r->setup_reference : "", ref) == 0 &&
                   strcmp(ahead->reference, ref) == 0;
    free(ref);
    return ok;
}

int tf_runner_send(struct tf_runner *r, uint32_t kernel, uint32_t problem, uint32_t phase,
                   uint64_t config, const char *binary_path, const char *reference,
                   struct tf_result *out, struct tf_error *err)
{
    if (!tf_runner_can_send(r, kernel, problem, reference))
        tf_die("tf_runner_send: configuration %llu cannot be sent now (tf_runner_can_send)",
               (unsigned long long)config);
    struct runner_sent *q = &r->requests[r->nrequests++];
    *q = (struct runner_sent){.kernel = kernel, .problem = problem, .phase = phase,
                              .config = config, .binary = absolute_path(r, binary_path),
                              .reference = absolute_path(r, reference)};
    tf_result_init(&q->result, kernel, problem, config, TF_STATUS_CRASHED);
    if (r->nrequests == 1) {
        if (request_send(r, q, err) == 0)
            return 0;
        *out = q->result; /* no runner: dropped, and the caller stops */
        free(q->binary);
        free(q->reference);
        r->nrequests--;
        return -1;
    }
    /* Behind one: only the frame (the problem is set up). A failed write
     * leaves it to be sent again, to a fresh runner (tf_runner_collect). */
    q->state = request_write(r, q) == 0 ? REQUEST_SENT : REQUEST_UNSENT;
    return 0;
}

int tf_runner_collect(struct tf_runner *r, struct tf_result *out, struct tf_error *err)
{
    if (r->nrequests == 0)
        tf_die("tf_runner_collect: no request in flight");
    struct runner_sent *q = &r->requests[0];
    int rc = 0;
    if (q->state == REQUEST_UNSENT)
        rc = request_send(r, q, err); /* -1: no runner; q->result says so */
    if (rc == 0 && q->state == REQUEST_SENT)
        request_answer(r, q);
    *out = q->result;
    free(q->binary);
    free(q->reference);
    r->requests[0] = r->requests[1];
    if (--r->nrequests > 0) {
        struct runner_sent *next = &r->requests[0];
        if (next->state == REQUEST_SENT && r->pid < 0)
            next->state = REQUEST_UNSENT; /* its runner is gone, and the frame with it */
        else if (next->state == REQUEST_UNSENT && r->pid > 0)
            /* Its frame could not be written (the runner died after it answered,
             * or a part of it was left in its input): a fresh runner takes it. */
            reap_child(r, 1, NULL, 0);
    }
    return rc;
}

int tf_runner_measure(struct tf_runner *r, uint32_t kernel, uint32_t problem, uint32_t phase,
                      uint64_t config, const char *binary_path, const char *reference,
                      struct tf_result *out, struct tf_error *err)
{
    if (r->nrequests > 0)
        tf_die("tf_runner_measure: %d requests in flight (tf_runner_collect first)",
               r->nrequests);
    if (tf_runner_send(r, kernel, problem, phase, config, binary_path, reference, out, err))
        return -1;
    return tf_runner_collect(r, out, err);
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
    if (r->nrequests > 0 && r->pid > 0) /* (a worker that fails): not after them */
        reap_child(r, 1, NULL, 0);
    for (int i = 0; i < r->nrequests; i++) {
        free(r->requests[i].binary);
        free(r->requests[i].reference);
    }
    if (r->pid > 0) {
        tf_runner_buf_reset(&r->buf);
        tf_buf_put_u8(&r->buf, RUNNER_REQ_QUIT);
        tf_channel_write_frame(r->fd, &r->buf, tf_channel_now() + QUIT_GRACE);
        /* closing our end is the second signal: the child exits on EOF */
        close(r->fd);
        r->fd = -1;
        reap_child(r, 0, NULL, 0);
    }
    expected_drop(r);
    tf_buf_free(&r->buf);
    tf_buf_free(&r->job_msg);
    free(r->setup_reference);
    free(r->backend);
    free(r->cwd);
    free(r->exe);
    free(r);
}
