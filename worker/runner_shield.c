/* runner_shield.c - what keeps a variant from harming the worker or the next variant.
 *
 * The process the worker spawns is a shield, not the runner: first thing, it
 * forks (tf_runner_shield_start). The shield keeps no channel, echoes the
 * runner's liveness checks, waits for the runner and ends as it ended (same
 * exit status, or the same signal raised again); the runner, its child in
 * the same process group, has PR_SET_PDEATHSIG(SIGKILL) and dies with it. So
 * a variant's getppid() names the shield, not the worker rank:
 * kill(getppid(), SIGKILL) (or any fatal signal) ends the shield and the
 * runner, the worker reads EOF and records that configuration crashed
 * ("runner killed by signal 9 (Killed), not by its worker ..."), and starts a
 * new runner for the next. After every variant the runner continues its
 * shield (a SIGSTOP to it is undone) and makes a round trip through it: a
 * signal the variant queued for its parent is handled before the shield can
 * answer, so the runner ends without replying and the kill is charged to
 * that variant, not to the next configuration. A variant that clears its
 * parent-death signal is caught the same way; the runner also restores that
 * signal after every variant, once the shield has answered
 * (tf_runner_shield_rearm). Limit: the worker rank is the shield's parent,
 * with the same uid; a variant that walks further up (/proc/PPID/stat of its
 * parent, then kill) still kills the worker rank, and the run ends with exit
 * 1 (every resume again). Only a different uid (or a PID namespace) would
 * hide the rank.
 *
 * The runner closes the descriptors it inherited from the worker, and is a
 * child subreaper: after every variant it kills what the variant forked,
 * setsid() or not (tf_runner_end_strays); what a variant fork()s has the
 * runner's channel closed (pthread_atfork), so a child left behind cannot
 * hold the worker's EOF back when the runner dies. After every variant the
 * floating-point environment is restored; an interval timer, resource limit,
 * signal action or signal mask it changed is put back and the runner exits
 * after replying (tf_runner_proc_state_restore), so the next configuration
 * gets a clean process. What a variant can still do: leave a thread running
 * (its crash may be charged to the configuration after it), change state
 * not listed above (cwd is restored by the runner; descriptors it opens,
 * affinity, priority are not), kill its worker rank by walking up past the
 * shield (see above), fork with a raw clone() (no atfork handler: its child
 * keeps the channel, and a runner killed meanwhile is a timeout, still that
 * configuration's), or leave a setsid() process behind when it is itself
 * killed (timeout/crash) before the runner can end it, or read the runner's
 * channel: the worker's next request may wait there while a variant runs
 * (runner.c, "two requests in flight"), and a variant that takes it leaves the
 * runner waiting: the configuration whose request it took, not the variant's,
 * is charged the timeout. */
#include "runner_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fenv.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* The runner's parent: the shield (tf_runner_shield_start). 0 until then. */
static pid_t shield_pid;
/* The runner's channel descriptors and its end of the socket to the shield
 * (tf_runner_shield_ping), closed in every process a variant forks. */
static int channel_in = -1, channel_out = -1, shield_fd = -1;

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
void tf_runner_end_strays(void)
{
    pid_t pids[256];
    siginfo_t si;
    /* No child at all (what almost every variant leaves): nothing to list.
     * Any process a variant left has the runner as parent - its own children,
     * or, as the runner is their subreaper, orphans further down - and its
     * parent is a child too; children of every thread count (waitid waits
     * for the whole thread group's). */
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD)
        return;
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

void tf_runner_proc_state_take(struct runner_proc_state *ps)
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
const char *tf_runner_proc_state_restore(const struct runner_proc_state *ps)
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


/* (Close every descriptor but 0-2 and the channel:) what the
 * worker rank had open without O_CLOEXEC (Open MPI's sockets to mpirun and
 * the other ranks among them) is no variant's business; a variant writing to
 * stray descriptors once hung the whole run's MPI_Finalize. */
void tf_runner_close_inherited(int in, int out)
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

/* In the shield: echo what the runner sends on `ping` (shield_ping) until
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
int tf_runner_shield_start(int in, int out)
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
 * through it (a token sent, read back), in two halves so that the runner's
 * own work after a variant (tf_runner_proc_state_restore) overlaps the answer.
 * A signal a variant (or what it forked: tf_runner_end_strays ended all that by
 * then) sent its parent was queued before the token, and the shield handles
 * it before it can answer, so a variant that killed the shield is seen here,
 * before the runner replies, not by the configuration after it (the runner's
 * parent-death signal comes a moment later and would otherwise lose that
 * race). A stopped shield (kill(getppid(), SIGSTOP)) is continued first:
 * stopping it harms no one. shield_ping sends the token: 1 sent; 0 the shield
 * is gone; -1 cannot tell (the variant closed or replaced the descriptor: the
 * runner's channel is then likely gone too). */
static uint64_t shield_token;

int tf_runner_shield_rearm(void)
{
    /* The runner must die with its shield (tf_runner_shield_start): a variant that
     * cleared the parent-death signal leaves a runner the worker's kill of
     * the shield alone would not end. Only once the shield has answered
     * (tf_runner_shield_pong): re-armed while a shield the variant killed is
     * still exiting, the signal would kill this runner before it could say
     * which configuration did it (seen in the fault matrix under load). */
    int pdeath = 0;
    if (shield_pid > 0 && (prctl(PR_GET_PDEATHSIG, &pdeath) != 0 || pdeath != SIGKILL)) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        return 1;
    }
    return 0;
}

int tf_runner_shield_ping(void)
{
    unsigned char want[8], b[256];
    if (shield_fd < 0)
        return -1;
    kill(shield_pid, SIGCONT);
    shield_token++;
    memcpy(want, &shield_token, sizeof want);
    while (recv(shield_fd, b, sizeof b, MSG_DONTWAIT) > 0) /* stale echoes */
        ;
    if (send(shield_fd, want, sizeof want, MSG_NOSIGNAL) != (ssize_t)sizeof want)
        return errno == EPIPE || errno == ECONNRESET ? 0 : -1;
    return 1;
}

/* The other half: wait for the echo of the token shield_ping sent (`pinged`:
 * what it returned). 0: gone; 1: there; -1: cannot tell. */
int tf_runner_shield_pong(int pinged)
{
    unsigned char want[8], win[8] = {0}, b[256];
    size_t have = 0;
    if (pinged != 1)
        return pinged;
    memcpy(want, &shield_token, sizeof want);
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
