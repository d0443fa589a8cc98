/* channel.c - framed messages between a worker and its child processes.
 *
 * The runner and the compiler children talk to their worker over a socket
 * pair: each message is a u32 length and that many bytes (encoded with the
 * tf_buf helpers of schema/wire.h). Every read and write waits with poll()
 * against an absolute deadline, so a hung child turns into a -2 the caller
 * can act on (kill it, record a timeout) instead of a blocked worker. A
 * deadline measures the time this process was running: a worker stopped
 * (SIGSTOP, a suspended job) and continued past it looks at the channel once
 * more before it calls it passed, and the time it spent stopped is added to
 * the deadline, so a child that answered, or was stopped as long, is never
 * recorded as a timeout for it. Writes
 * use MSG_NOSIGNAL so a dead child is an error, not a SIGPIPE. Frames are read
 * in chunks, so a hostile length costs no allocation beyond what arrives. */
#include "channel.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

double tf_channel_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Waits with a deadline poll in slices this long: a slice that took much
 * longer than asked measures how long this process was not running. */
#define CHANNEL_SLICE_MS 100
/* Lost time below this is scheduling noise, not a stop. */
#define CHANNEL_STOPPED_SLACK 0.25

/* Wait until `fd` is ready for `events` or *deadline (< 0: none) passes.
 * Returns 1 ready, 0 timed out, -1 error. The fd is always polled at least
 * once, even past the deadline, and time this process spent stopped (SIGSTOP,
 * a suspended job) moves *deadline later by as much. */
static int wait_fd(int fd, short events, double *deadline)
{
    for (;;) {
        int ms = -1;
        double left = 0;
        if (*deadline >= 0) {
            left = *deadline - tf_channel_now();
            ms = left <= 0                         ? 0
                 : left * 1000.0 > CHANNEL_SLICE_MS ? CHANNEL_SLICE_MS
                                                    : (int)(left * 1000.0) + 1;
        }
        const double before = tf_channel_now();
        struct pollfd p = {.fd = fd, .events = events};
        int rc = poll(&p, 1, ms);
        if (rc > 0)
            return 1;
        if (rc < 0 && errno != EINTR)
            return -1;
        if (*deadline < 0)
            continue;
        const double lost = tf_channel_now() - before - ms * 1e-3;
        if (lost > CHANNEL_STOPPED_SLACK) {
            *deadline += lost;
            continue;
        }
        if (rc == 0 && left <= 0)
            return 0;
    }
}

static int write_all(int fd, const void *data, size_t n, double *deadline)
{
    const unsigned char *p = data;
    while (n > 0) {
        int w = wait_fd(fd, POLLOUT, deadline);
        if (w <= 0)
            return w == 0 ? -2 : -1;
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && errno == ENOTSOCK) /* a child run by hand with pipes */
            k = write(fd, p, n);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int tf_channel_write_frame(int fd, const struct tf_buf *b, double deadline)
{
    unsigned char hdr[4];
    const uint32_t n = (uint32_t)b->len;
    for (int i = 0; i < 4; i++)
        hdr[i] = (unsigned char)(n >> (8 * i));
    int rc = write_all(fd, hdr, 4, &deadline);
    return rc ? rc : write_all(fd, b->data, b->len, &deadline);
}

/* Read exactly n bytes; 0 ok, -1 EOF or error, -2 deadline. */
static int read_all(int fd, void *data, size_t n, double *deadline)
{
    unsigned char *p = data;
    while (n > 0) {
        int w = wait_fd(fd, POLLIN, deadline);
        if (w <= 0)
            return w == 0 ? -2 : -1;
        ssize_t k = read(fd, p, n);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int tf_channel_read_frame(int fd, struct tf_buf *b, double deadline)
{
    unsigned char hdr[4];
    int rc = read_all(fd, hdr, 4, &deadline);
    if (rc)
        return rc;
    const uint32_t n = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
                       (uint32_t)hdr[3] << 24;
    if (n > TF_CHANNEL_FRAME_MAX)
        return -1;
    b->len = b->pos = 0;
    unsigned char chunk[65536];
    for (uint32_t got = 0; got < n;) {
        const size_t want = n - got < sizeof chunk ? n - got : sizeof chunk;
        rc = read_all(fd, chunk, want, &deadline);
        if (rc)
            return rc;
        tf_buf_put_bytes(b, chunk, want);
        got += (uint32_t)want;
    }
    return 0;
}

int tf_channel_child_open(int *in, int *out)
{
    /* Only the worker ends a runner or compiler (SIGKILL): a Ctrl-C, or a
     * checkpoint signal sent to a whole Slurm step, must not turn the variant
     * in hand into a crash. Ignored dispositions also pass to the compilers
     * this process starts. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGUSR1, SIG_IGN);
    /* Dies with the worker. (A runner's process stays as its shield, and
     * the runner it forks dies with that in turn: runner_shield.c.) */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        return -1;
    *in = fcntl(0, F_DUPFD_CLOEXEC, 3);
    *out = fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (*in < 0 || *out < 0)
        return -1;
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    dup2(2, 1);
    return 0;
}
