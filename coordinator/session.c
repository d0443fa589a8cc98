/* session.c - what a run records about how it was made, session by session.
 *
 * The job's settings are written into the run row as "key=value" text (the
 * strategy, seed and budget also as columns of their own), so a reader sees
 * what the job hash stands for without the job file. A session row is added
 * by every invocation that measures for a run; the coordinator then records
 * each of its devices' versions and settings for that session. Resuming is
 * refused where the software differs: for each device of this invocation
 * whose class the run measured on, some device of that class in one of the
 * run's sessions must have had the same driver, runtime, compiler and
 * tunefarm versions; the coordinator's version must be the run's. Clock and
 * power settings may differ (they are recorded per session and reported). */
#include "session.h"
#include "../schema/version.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"


/* Append printf-style text to `out` (`len` bytes used), never past `cap`. */
static void add(char *out, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add(char *out, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (w > 0)
        *len = (size_t)w >= cap - *len ? cap - 1 : *len + (size_t)w;
}

static void measure_text(const struct tf_measure *m, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    add(out, cap, &len,
        "warmup=%d min_samples=%d max_samples=%d min_time=%g max_time=%g max_noise=%g "
        "timeout=%g flush_l2=%d energy_time=%g",
        m->warmup, m->min_samples, m->max_samples, m->min_time, m->max_time, m->max_noise,
        m->timeout, m->flush_l2 ? 1 : 0, m->energy_time);
}

void tf_session_run_settings(struct tf_archive_run *run, const struct tf_job *job)
{
    size_t len = 0;
    tf_strlcpy(run->search_strategy, job->strategy_name ? job->strategy_name : "brute_force",
               sizeof run->search_strategy);
    run->search_seed = job->seed;
    run->search_budget = job->budget;
    run->search[0] = '\0';
    add(run->search, sizeof run->search, &len,
        "time_budget=%g patience=%llu noise=%g top_k=%u warm_start=%d warm_count=%u",
        job->time_budget, (unsigned long long)job->patience, job->noise, job->top_k, job->nwarm,
        job->warm_count);
    for (int i = 0; i < job->noptions; i++)
        add(run->search, sizeof run->search, &len, " options.%s=%s", job->options[i].name,
            job->options[i].value);
    measure_text(&job->measure, run->measure, sizeof run->measure);
    if (job->top_k > 0)
        measure_text(&job->screen, run->screen, sizeof run->screen);
    else
        run->screen[0] = '\0';
}

uint32_t tf_session_begin(struct tf_archive *a, uint32_t run, const char *command,
                          uint32_t ranks)
{
    struct tf_archive_session s;
    memset(&s, 0, sizeof s);
    s.run = run;
    s.start = tf_wall_now();
    tf_strlcpy(s.command, command ? command : "", sizeof s.command);
    const char *slurm = getenv("SLURM_JOB_ID");
    tf_strlcpy(s.slurm_job_id, slurm ? slurm : "", sizeof s.slurm_job_id);
    s.ranks = ranks;
    tf_strlcpy(s.tunefarm_version, tf_version, sizeof s.tunefarm_version);
    if (gethostname(s.host, sizeof s.host - 1) != 0)
        s.host[0] = '\0';
    return tf_archive_add_session(a, &s);
}

int tf_session_may_resume(const struct tf_archive *a, uint32_t run, const char *version,
                          const struct tf_device *devs, int n, char *why, size_t cap)
{
    why[0] = '\0';
    if (strcmp(a->runs[run].tunefarm_version, version) != 0) {
        snprintf(why, cap, "this is tunefarm %s; run %u was measured with tunefarm %s", version,
                 run, a->runs[run].tunefarm_version);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        char key[256], other[256];
        tf_device_class_key(&devs[i], key, sizeof key);
        const struct tf_device *latest = NULL;
        int same = 0;
        for (int j = 0; j < a->nsession_devices && !same; j++) {
            const struct tf_archive_session_device *sd = &a->session_devices[j];
            if (a->sessions[sd->session].run != run)
                continue;
            tf_device_class_key(&sd->d, other, sizeof other);
            if (strcmp(key, other) != 0)
                continue;
            same = tf_device_same_software(&sd->d, &devs[i]);
            latest = &sd->d;
        }
        if (latest != NULL && !same) {
            char changes[512];
            tf_device_changes(latest, &devs[i], changes, sizeof changes);
            snprintf(why, cap, "%s on %s: %s since run %u measured", devs[i].name, devs[i].host,
                     changes, run);
            return 0;
        }
    }
    return 1;
}

static void local_time(double unix_seconds, char *out, size_t cap)
{
    time_t t = tf_archive_time_ok(unix_seconds) ? (time_t)unix_seconds : 0;
    struct tm tm;
    if (t == 0 || localtime_r(&t, &tm) == NULL)
        tf_strlcpy(out, "-", cap);
    else
        strftime(out, cap, "%Y-%m-%d %H:%M:%S", &tm);
}

void tf_session_print(const struct tf_archive *a, uint32_t run, const char *indent, FILE *out)
{
    int count = 0;
    tf_archive_run_session(a, run, 0, &count);
    if (count < 2)
        return;
    fprintf(out, "%smeasured in %d sessions (resumed %d time%s):\n", indent, count, count - 1,
            count == 2 ? "" : "s");
    for (int k = 0; k < count; k++) {
        const int i = tf_archive_run_session(a, run, k, NULL);
        const struct tf_archive_session *s = &a->sessions[i];
        char start[32], end[32];
        local_time(s->start, start, sizeof start);
        local_time(s->end, end, sizeof end);
        fprintf(out, "%s  session %d: %s to %s", indent, k + 1, start,
                s->end > 0 ? end : "(killed, or still running)");
        if (s->slurm_job_id[0])
            fprintf(out, ", Slurm job %s", s->slurm_job_id);
        fprintf(out, ", on %s, tunefarm %s\n", s->host[0] ? s->host : "?", s->tunefarm_version);
        if (k == 0)
            continue;
        /* What changed on each device since the session before. */
        const int prev = tf_archive_run_session(a, run, k - 1, NULL);
        for (int j = 0; j < a->nsession_devices; j++) {
            const struct tf_archive_session_device *now = &a->session_devices[j];
            if (now->session != (uint32_t)i)
                continue;
            for (int q = 0; q < a->nsession_devices; q++) {
                const struct tf_archive_session_device *then = &a->session_devices[q];
                char changes[512];
                if (then->session != (uint32_t)prev || then->device != now->device ||
                    tf_device_changes(&then->d, &now->d, changes, sizeof changes) == 0)
                    continue;
                fprintf(out, "%s    %s on %s changed: %s\n", indent, now->d.name, now->d.host,
                        changes);
            }
        }
    }
}
