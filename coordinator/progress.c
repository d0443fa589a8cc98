/* progress.c - progress on stderr for long runs.
 *
 * On a terminal the line is rewritten in place every second; in a log file (a
 * Slurm job's output) a full line is appended every ten seconds so the log
 * stays readable. The rate is the overall configurations per second since
 * the progress started (tf_progress_init), which is what an ETA over a long
 * queue needs. */
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double tf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double tf_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tf_progress_init(struct tf_progress *p, bool quiet)
{
    p->start = p->last = tf_now();
    p->tty = isatty(STDERR_FILENO);
    p->quiet = quiet;
    p->dirty = false;
}

static void format_duration(double s, char *out, size_t cap)
{
    if (s < 0 || s > 1e7)
        snprintf(out, cap, "?");
    else if (s < 60)
        snprintf(out, cap, "%.0fs", s);
    else if (s < 3600)
        snprintf(out, cap, "%dm%02ds", (int)s / 60, (int)s % 60);
    else
        snprintf(out, cap, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

void tf_progress_update(struct tf_progress *p, uint64_t done, uint64_t total, const char *best,
                        bool force)
{
    double now = tf_now();
    if (p->quiet || (!force && now - p->last < (p->tty ? 1.0 : 10.0)))
        return;
    p->last = now;
    double elapsed = now - p->start, rate = elapsed > 0 ? (double)done / elapsed : 0;
    char eta[32], el[32];
    format_duration(rate > 0 ? (double)(total - done) / rate : -1, eta, sizeof eta);
    format_duration(elapsed, el, sizeof el);
    fprintf(stderr, "%s[%6s] %llu/%llu configurations (%.0f%%), %.2f/s, ETA %s%s%s%s",
            p->tty ? "\r\033[K" : "", el, (unsigned long long)done, (unsigned long long)total,
            total ? 100.0 * (double)done / (double)total : 100.0, rate, eta,
            best && best[0] ? " | " : "", best ? best : "", p->tty ? "" : "\n");
    p->dirty = p->tty;
    fflush(stderr);
}

void tf_progress_finish(struct tf_progress *p)
{
    if (p->dirty)
        fputc('\n', stderr);
    p->dirty = false;
}
