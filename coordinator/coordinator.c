/* coordinator.c - rank 0 of a tuning run.
 *
 * It loads and validates the job (the search strategy and its options
 * against the registry here: the loader keeps them raw, as schema/ knows no
 * strategies; nothing is sent or written if that fails), checks the archive
 * it will extend, broadcasts the job bundle, collects each worker's HELLO,
 * groups devices into classes (backend/arch/name) and plans one task per
 * kernel x problem x class. Then it serves a pull loop: a worker's
 * REQUEST gets a slice sized from that worker's observed rate and what is left
 * for its class; RESULTS are checked, given their derived metrics and appended
 * to the journal beside the archive (one write per batch) and only then to
 * the in-memory archive, which is rewritten atomically every `checkpoint`
 * seconds and at the end, each time resetting the journal. A worker gets STOP
 * when its class has nothing left; the run ends when every worker has stopped
 * and delivered every result it owed. The loop polls and naps instead of
 * blocking so it never competes for the cores the workers measure on.
 *
 * A stalled worker (SIGSTOP, a hung node): every WORK slice is kept until
 * its results are in, and a worker that owes results and stays silent past
 * its bound has its slices handed to the other workers of its class, trimmed
 * to what is not recorded yet. Silence is not slowness: a live worker may wait
 * minutes on one thing (a large problem's CPU reference, up to the runner's
 * max(120 s, 10 x timeout); a compile, up to TUNEFARM_COMPILE_TIMEOUT,
 * default 120 s; a runner restart), so a
 * bound of timeouts per configuration took a slow reference for a stall and
 * had the work measured twice. A worker therefore beats: a thread of its own
 * sends an empty RESULTS after every second of silence while it owes results
 * (worker.c), and says so at once, so the bound of a beating worker is
 * STALL_SILENCE whatever it waits on. A worker whose MPI allows no second
 * thread never beats; its bound is the longest a live one can be silent
 * (worker_silence_bound: the worker's own limits, one configuration's worth).
 * The inbox is drained before any bound is checked, so a coordinator that
 * was busy itself (a checkpoint) does not blame the workers. The first answer
 * for a configuration is the one recorded (a set of what this run recorded):
 * a late or repeated answer is dropped, and said so, so the archive never
 * holds a configuration twice.
 *
 * Never losing a result: a rerun of the same job on the same archive first
 * replays the journal (what a killed coordinator had not checkpointed), then
 * resumes the job's last run if it is unfinished and its devices run the same
 * software (coordinator/session.h: else a new run starts, saying why): the
 * plan leaves out every configuration that run has a row for. Each invocation
 * that measures for a run is a session of it, recorded with what every device
 * ran with. A signal (SIGTERM, SIGINT, SIGUSR1,
 * counted by main) stops the dispatching; work in flight is waited for up to
 * the grace period, the archive is checkpointed and the run ends with
 * TF_EXIT_INTERRUPTED so a requeue script knows to resubmit. */
#include "coordinator.h"
#include "../schema/version.h"
#include "../schema/replace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "../schema/archive.h"
#include "../schema/job.h"
#include "../schema/parammap.h"
#include "../schema/wire.h"
#include "journal.h"
#include "plan.h"
#include "progress.h"
#include "report.h"
#include "session.h"
#include "strategy.h"


/* Seconds of work a slice should hold once a worker's rate is known. */
#define SLICE_TARGET_SECONDS 4.0
#define SLICE_FIRST 4

/* A WORK message a worker was given and has not answered in full: kept so
 * that its results can be matched to it and, if the worker stalls, it can be
 * handed to another worker of the class. */
struct slice {
    struct tf_work work;    /* work.list owned */
    int klass;
    uint64_t n;             /* configurations in it */
    uint64_t left;          /* results still owed by the worker holding it */
    uint32_t cursor;        /* list: where the next result is expected (they come in order) */
    int from;               /* re-queued: the stalled rank it was taken from */
    uint64_t from_left;     /* re-queued: what that rank still owed of it */
};

struct slices {
    struct slice *v;
    size_t n, cap;
};

struct worker_state {
    struct tf_device dev;
    bool has_device;
    int klass;              /* -1: not used by this job */
    uint32_t device_id;     /* row in the archive's /devices */
    bool stopped;           /* STOP sent, or to be sent (stop_pending) */
    bool stop_pending;      /* STOP waits for the outbox's earlier send to be received */
    bool finished;          /* stopped and owes no results */
    uint64_t outstanding;   /* configurations dispatched, results not yet received */
    uint64_t received;
    double first_work;      /* when its first slice went out */
    double measured_seconds; /* device time running variants (duty-cycle numerator) */
    bool parked;            /* asked for work while its class waits for a screening pass */
    char compilers[128];    /* backends it can compile for ("host,cuda"), from HELLO */
    uint64_t compiled_ahead; /* configurations handed to it as COMPILE slices */
    struct tf_wire_outbox outbox; /* WORK and STOP go out without blocking */
    struct slices held;     /* slices given, results still owed (sum of left = outstanding) */
    struct slices taken;    /* slices taken away when it stalled: late answers are matched
                               against these, and dropped if another worker answered first */
    double last_heard;      /* when it last sent anything (tf_now) */
    double deaf_at_heard;   /* the coordinator's deaf_seconds then */
    bool beats;             /* it sends heartbeats (an empty RESULTS): its bound is STALL_SILENCE */
    bool stalled;           /* silent past its bound: its slices went to other workers */
};

/* Results recorded this run, by (task, configuration, phase): the first
 * answer for a configuration is kept, a second one (a stalled worker's
 * late answer, or the answer of the worker its slice went to) is dropped.
 * The phase is a field of its own: folded into the configuration (config * 3
 * + phase) two keys met above 2^64 / 3. */
struct done_set {
    struct done_key { uint64_t config; uint32_t task; uint8_t phase, used; } *v;
    size_t n, cap;
};

struct coordinator {
    const struct tf_run_options *opt;
    struct tf_job *job;
    struct tf_bundle *bundle;
    const char *archive_path;
    struct tf_archive *archive;
    bool archive_is_new;                 /* created by this run (removed if it measures nothing) */
    struct tf_archive_kernel **akernels; /* per job kernel */
    uint32_t **aproblems;                /* per job kernel, per kernel problem: archive id */
    uint32_t run_id;
    uint32_t session;                    /* this invocation's row in the archive's sessions */
    bool resumed;                        /* run_id is an interrupted run this one continues */
    uint64_t resumed_results;            /* configurations it had measured already */
    struct tf_journal *journal;
    bool stopping;                       /* a signal came, or the journal failed: no more work */
    int signals_seen;                    /* signals acted on (coordinator_check_signals) */
    double stop_deadline;                /* give up on work in flight after this (tf_now) */
    bool journal_failed;                 /* results could not be journaled: the run fails */
    struct tf_error journal_err;
    int nworkers;                        /* ranks 1..nworkers */
    struct worker_state *workers;
    int nclasses;
    struct tf_device *classes;           /* representative device per class */
    struct tf_plan *plan;
    struct tf_progress progress;
    uint64_t done;
    uint64_t status_counts[TF_STATUS_COUNT];
    double compile_seconds;
    double compile_timeout;              /* seconds one compile may take on a worker */
    double last_checkpoint;
    struct tf_buf buf;
    struct slices requeue;               /* slices of stalled workers, for their classes */
    struct done_set recorded;
    uint64_t dropped;                    /* duplicate answers dropped */
    uint64_t requeued;                   /* configurations handed to another worker */
    /* TUNEFARM_PROFILE: where the coordinator's own time went */
    uint64_t checkpoints;
    double checkpoint_seconds;           /* archive writes + journal resets */
    double checkpoint_cost;              /* seconds the latest checkpoint took */
    double deaf_seconds;                 /* spent in checkpoints, reading no message: a
                                            worker blocked sending meanwhile is not silent */
    double journal_seconds;              /* tf_journal_append */
    uint64_t result_messages;            /* RESULTS messages that carried results */
};

static void coordinator_begin_stop(struct coordinator *c, double grace);
static uint64_t coordinator_in_flight(const struct coordinator *c);
static bool coordinator_compile_future(const struct coordinator *c, int src);
static int coordinator_on_request(struct coordinator *c, int src, struct tf_error *err);

/* Seconds a beating worker (see the header) may stay silent while it owes
 * results: it says something every second. */
#define STALL_SILENCE 10.0
/* For a worker that does not beat: the worker's own limits (worker/runner.c
 * SETUP_DEADLINE_MIN and INIT_DEADLINE, worker/worker.c REPLAY_MAX_WAIT;
 * mirrored here, as coordinator/ may not include worker/), and a margin. Its
 * compile deadline is no constant: both sides read TUNEFARM_COMPILE_TIMEOUT
 * (tf_job_compile_timeout, coordinator.compile_timeout), so a raised one
 * never has a live worker taken for a stalled one. (The runner's set-up is
 * no compile: the reference is compiled before, under the compile deadline.) */
#define WORKER_SETUP_MIN 120.0
#define WORKER_RUNNER_START 60.0
#define WORKER_REPLAY_MAX_WAIT 3600.0
#define STALL_MARGIN 10.0

static void slices_push(struct slices *s, const struct slice *x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 8;
        s->v = tf_xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = *x;
}

/* Remove element i (order is not kept). */
static void slices_take(struct slices *s, size_t i, struct slice *out)
{
    *out = s->v[i];
    s->v[i] = s->v[--s->n];
}

static void slices_free(struct slices *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].work.list);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* True if slice `s` holds the configuration of result `r`. A worker answers
 * a list in its order, so the place after the last match (the cursor) is
 * tried first and the list searched only for an answer out of order: a long
 * list costs one comparison per result, not its length. */
static bool slice_has(struct slice *s, const struct tf_result *r)
{
    const struct tf_work *w = &s->work;
    if (w->kernel != r->kernel || w->problem != r->problem || w->phase != r->phase)
        return false;
    if (w->nlist == 0)
        return r->config >= w->lo && r->config < w->hi;
    if (s->cursor < w->nlist && w->list[s->cursor] == r->config) {
        s->cursor++;
        return true;
    }
    for (uint32_t i = 0; i < w->nlist; i++)
        if (w->list[i] == r->config)
            return true;
    return false;
}

static size_t done_slot(const struct done_set *d, uint32_t task, uint64_t config, uint8_t phase)
{
    uint64_t h = (config ^ (uint64_t)task << 40 ^ (uint64_t)phase << 62) * 0x9E3779B97F4A7C15u;
    size_t i = (size_t)(h >> 20) & (d->cap - 1);
    while (d->v[i].used &&
           (d->v[i].config != config || d->v[i].task != task || d->v[i].phase != phase))
        i = (i + 1) & (d->cap - 1);
    return i;
}

/* True if (task, config, phase) was recorded this run. */
static bool done_has(const struct done_set *d, uint32_t task, uint64_t config, uint8_t phase)
{
    return d->cap > 0 && d->v[done_slot(d, task, config, phase)].used;
}

/* Add (task, config, phase); false if it was there already. */
static bool done_add(struct done_set *d, uint32_t task, uint64_t config, uint8_t phase)
{
    if (2 * (d->n + 1) > d->cap) {
        struct done_set g = {tf_xcalloc(d->cap ? 2 * d->cap : 1024, sizeof *g.v), 0,
                             d->cap ? 2 * d->cap : 1024};
        for (size_t i = 0; i < d->cap; i++)
            if (d->v[i].used) {
                g.v[done_slot(&g, d->v[i].task, d->v[i].config, d->v[i].phase)] = d->v[i];
                g.n++;
            }
        free(d->v);
        *d = g;
    }
    size_t i = done_slot(d, task, config, phase);
    if (d->v[i].used)
        return false;
    d->v[i] = (struct done_key){config, task, phase, 1};
    d->n++;
    return true;
}
/* Keep `r` as task t's best if it is ok and faster (for the progress line). */
static void task_offer_best(struct tf_task *t, const struct tf_result *r)
{
    if (r->status == TF_STATUS_OK && isfinite(r->time_median) &&
        !(t->best_time <= r->time_median)) {
        t->best_time = r->time_median;
        t->best_config = r->config;
    }
}

/* The class key of every device of `a` (new array, freed by the caller). */
static char (*archive_class_keys(const struct tf_archive *a))[256]
{
    char (*keys)[256] = tf_xcalloc((size_t)a->ndevices + 1, sizeof *keys);
    for (int d = 0; d < a->ndevices; d++)
        tf_device_class_key(&a->devices[d], keys[d], sizeof keys[d]);
    return keys;
}

static void coordinator_stop_all(int nranks)
{
    struct tf_buf b = {0};
    tf_wire_stop(&b);
    tf_wire_bcast(&b, NULL);
    (void)nranks;
    tf_buf_free(&b);
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A journal beside an archive that does not exist holds results of an
 * archive that was removed or moved (a bare or torn header, under 8 bytes,
 * is only the start of a run that died before its first checkpoint). */
static int journal_without_archive(const char *archive_path, struct tf_error *err)
{
    char jpath[4200];
    struct stat st;
    tf_journal_path(archive_path, jpath, sizeof jpath);
    if (file_exists(archive_path) || stat(jpath, &st) != 0 || st.st_size < 8)
        return 0;
    return tf_error_set(err, TF_ERR_SCHEMA,
                        "journal '%s' is there but its archive '%s' is not: the archive was "
                        "removed or moved away. Put it back, or move the journal away to go on "
                        "without it (its results would be measured again)",
                        jpath, archive_path);
}

/* Lock the archive's journal, load the archive to extend (or start one), fold
 * in the results its journal holds, and match the job's kernels to it. */
static int coordinator_open_archive(struct coordinator *c, struct tf_error *err)
{
    c->journal = tf_journal_open(c->archive_path, err);
    if (c->journal == NULL || journal_without_archive(c->archive_path, err) != 0)
        return -1;
    /* (tf_journal_open removed the temporaries killed writers left.) */
    if (file_exists(c->archive_path)) {
        c->archive = tf_archive_read(c->archive_path, err);
        if (c->archive == NULL) {
            size_t n = strlen(err->message);
            snprintf(err->message + n, sizeof err->message - n,
                     " (the run would extend this archive: give another with -o, or move it "
                     "away)");
            return -1;
        }
    } else {
        c->archive = tf_archive_create();
    }
    struct tf_journal_replay replay;
    if (tf_journal_replay(c->journal, c->archive_path, c->archive, &replay, err))
        return -1;
    /* An archive written before ids gets one now; its first checkpoint (in a
     * moment) stores it, and every journal from then on names it. */
    tf_archive_ensure_id(c->archive);
    if (replay.damaged_header && !c->opt->quiet)
        fprintf(stderr, "tunefarm: the journal of %s had a damaged header and no results "
                        "after it: ignored\n", c->archive_path);
    if (replay.old_format && !c->opt->quiet)
        fprintf(stderr, "tunefarm: read the journal of %s in the format of an older tunefarm "
                        "(no archive id); the archive gets an id now\n", c->archive_path);
    if (replay.records > 0)
        fprintf(stderr, "tunefarm: %llu results recovered from the journal of %s (a run was "
                        "stopped before its checkpoint)\n",
                (unsigned long long)replay.records, c->archive_path);
    if (replay.torn_bytes > 0 && !c->opt->quiet)
        fprintf(stderr, "tunefarm: dropped a torn record (%llu bytes) at the end of the "
                        "journal: the result it held will be measured again\n",
                (unsigned long long)replay.torn_bytes);
    c->akernels = tf_xcalloc((size_t)c->job->nkernels, sizeof *c->akernels);
    c->aproblems = tf_xcalloc((size_t)c->job->nkernels, sizeof *c->aproblems);
    for (int i = 0; i < c->job->nkernels; i++) {
        const struct tf_kernel *k = c->job->kernels[i].kernel;
        c->akernels[i] = tf_archive_kernel_for(c->archive, k, err);
        if (c->akernels[i] == NULL) {
            tf_strlcpy(err->file, c->archive_path, sizeof err->file);
            return -1;
        }
        c->aproblems[i] = tf_xcalloc((size_t)k->nproblems, sizeof **c->aproblems);
        for (int p = 0; p < c->job->kernels[i].nproblems; p++) {
            int kp = c->job->kernels[i].problems[p];
            c->aproblems[i][kp] = tf_archive_problem_for(c->akernels[i], k, kp);
        }
    }
    /* Adding a kernel may move the archive's kernel array: look them all up again. */
    for (int i = 0; i < c->job->nkernels; i++)
        c->akernels[i] = tf_archive_find_kernel(c->archive, c->job->kernels[i].kernel->name);
    return 0;
}

/* Receive one HELLO from every worker and group the targeted devices into classes. */
static int coordinator_gather(struct coordinator *c, struct tf_error *err)
{
    c->workers = tf_xcalloc((size_t)c->nworkers + 1, sizeof *c->workers);
    c->classes = tf_xcalloc((size_t)c->nworkers + 1, sizeof *c->classes);
    char (*keys)[256] = tf_xcalloc((size_t)c->nworkers + 1, sizeof *keys);
    /* Rank by rank: a worker's first message is its HELLO (MPI keeps the order
     * between two ranks), while a fast worker may already have sent REQUEST. */
    for (int src = 1; src <= c->nworkers; src++) {
        enum tf_msg_type type;
        if (tf_wire_recv(src, &c->buf, NULL, err) || tf_wire_open(&c->buf, &type, err))
            goto fail;
        if (type != TF_MSG_HELLO) {
            tf_error_set(err, TF_ERR_MPI, "rank %d sent message %d before HELLO", src, type);
            goto fail;
        }
        struct worker_state *w = &c->workers[src];
        if (tf_wire_get_hello(&c->buf, &w->dev, w->compilers, sizeof w->compilers, err))
            goto fail;
        w->last_heard = tf_now();
        w->deaf_at_heard = c->deaf_seconds;
        w->klass = -1;
        w->has_device = w->dev.backend[0] != '\0';
        if (!w->has_device) {
            if (w->compilers[0] == '\0')
                fprintf(stderr, "tunefarm: rank %d offers no device: %s\n", src, w->dev.name);
            continue;
        }
        char key[256];
        tf_device_class_key(&w->dev, key, sizeof key);
        if (!tf_job_targets_device(c->job, w->dev.backend, key) &&
            !(c->opt->replay_source && strcmp(w->dev.backend, "replay") == 0))
            continue;
        /* Same model, same properties: constraints read the properties, and every
         * worker of a class must enumerate the same configurations. */
        for (int k = 0; k < c->nclasses && w->klass < 0; k++)
            if (strcmp(keys[k], key) == 0 &&
                memcmp(c->classes[k].props, w->dev.props, sizeof w->dev.props) == 0)
                w->klass = k;
        if (w->klass < 0) {
            w->klass = c->nclasses;
            tf_strlcpy(keys[c->nclasses], key, sizeof keys[0]);
            c->classes[c->nclasses++] = w->dev;
        }
        w->device_id = tf_archive_add_device(c->archive, &w->dev);
    }
    free(keys);
    return 0;
fail:
    free(keys);
    return -1;
}

/* STOP to `rank`, without blocking. STOP is unasked for: the worker may be
 * blocked sending results to this rank while an earlier WORK to it (a large
 * one, past MPI's eager limit) is not received yet. Waiting for that send here
 * would deadlock both, so STOP then waits (stop_pending) and the loop, which
 * keeps receiving, posts it once the earlier send is through
 * (coordinator_flush_stops). */
static void coordinator_send_stop(struct coordinator *c, int rank)
{
    struct worker_state *w = &c->workers[rank];
    struct tf_error err;
    w->stopped = true;
    if (!tf_wire_outbox_test(&w->outbox)) {
        w->stop_pending = true;
        w->finished = false;
        return;
    }
    w->stop_pending = false;
    tf_wire_stop(&c->buf);
    if (tf_wire_post(&w->outbox, rank, &c->buf, &err))
        tf_error_print(&err, "tunefarm", stderr);
    w->finished = w->outstanding == 0;
}

/* Post the STOPs that waited for an earlier send (coordinator_send_stop). */
static void coordinator_flush_stops(struct coordinator *c)
{
    for (int i = 1; i <= c->nworkers; i++)
        if (c->workers[i].stop_pending)
            coordinator_send_stop(c, i);
}

static uint64_t slice_size(const struct coordinator *c, const struct worker_state *w)
{
    int peers = 0;
    for (int i = 1; i <= c->nworkers; i++)
        peers += c->workers[i].klass == w->klass;
    uint64_t left = tf_plan_undispatched(c->plan, w->klass);
    /* Leave work for every peer: at most half of a fair share of what is left. */
    uint64_t fair = left / (uint64_t)(2 * (peers ? peers : 1));
    uint64_t want = SLICE_FIRST;
    double elapsed = tf_now() - w->first_work;
    if (w->received > 0 && elapsed > 0) {
        const double rate = (double)w->received / elapsed;
        double seconds = SLICE_TARGET_SECONDS;
        /* No more than the time budget has left: what is handed out is
         * waited for after it (review S: a 3 s budget ran 7-13 s). */
        if (c->job->time_budget > 0) {
            const double left_s = c->job->time_budget - (tf_now() - c->progress.start);
            if (left_s < seconds)
                seconds = left_s > 0 ? left_s : 0;
        }
        want = (uint64_t)ceil(rate * seconds);
    }
    if (want > fair)
        want = fair;
    return want ? want : 1;
}

/* True if `w` lists backend `name` among those it can compile for. */
static bool can_compile_for(const struct worker_state *w, const char *name)
{
    const size_t n = strlen(name);
    for (const char *at = w->compilers; *at;) {
        const size_t len = strcspn(at, ",");
        if (len == n && strncmp(at, name, n) == 0)
            return true;
        at += len + (at[len] == ',');
    }
    return false;
}

/* True if rank `w` may compile for class `dev`: it has that backend's
 * compiler, and for host code either it is on the class's node or its CPU
 * and C compiler are the class's (a compile rank describes both in HELLO):
 * host binaries may be built for the CPU they run on (-march=native), and
 * the host cache key holds the compiler, the CPU model and a hash of its
 * feature flags, so a binary built for another CPU would only be wasted
 * work, never run. */
static bool compiles_for(const struct worker_state *w, const struct tf_device *dev)
{
    if (!can_compile_for(w, dev->backend))
        return false;
    if (strcmp(dev->backend, "host") != 0 || strcmp(dev->host, w->dev.host) == 0)
        return true;
    return strcmp(dev->name, w->dev.name) == 0 && strcmp(dev->vendor, w->dev.vendor) == 0 &&
           strcmp(dev->arch, w->dev.arch) == 0 &&
           strcmp(dev->compiler_version, w->dev.compiler_version) == 0;
}

/* Configurations per COMPILE slice: a few seconds of a compile pool. */
#define COMPILE_SLICE 16

/* Hand `src` a slice to compile ahead for a class that will measure it, if
 * there is one it can compile for (compiles_for: any GPU class, a host class
 * on its own node or on a node with the same CPU and compiler). Returns 1 if sent,
 * 0 if there is nothing for it, -1 + err on failure. */
static int coordinator_send_compile(struct coordinator *c, int src, struct tf_error *err)
{
    struct worker_state *w = &c->workers[src];
    for (int k = 0; k < c->nclasses; k++) {
        const struct tf_device *dev = &c->classes[k];
        if (k == w->klass || !compiles_for(w, dev))
            continue;
        struct tf_work work;
        int64_t n = tf_plan_next_compile_slice(c->plan, k, COMPILE_SLICE, &work, err);
        if (n < 0 && err->code == TF_ERR_INTERRUPTED)
            return 0; /* the run is stopping (coordinator_stop_hook): compile nothing ahead */
        if (n < 0)
            return -1;
        if (n == 0)
            continue;
        tf_wire_compile(&c->buf, dev, &work);
        free(work.list);
        w->compiled_ahead += (uint64_t)n;
        return tf_wire_post(&w->outbox, src, &c->buf, err) ? -1 : 1;
    }
    return 0;
}

/* Rank `src` has nothing of its own class left: a COMPILE slice for another
 * class if any needs one, else STOP. 0, or -1 + err if sending failed. */
static int coordinator_compile_or_stop(struct coordinator *c, int src, struct tf_error *err)
{
    int sent = coordinator_send_compile(c, src, err);
    if (sent < 0)
        return -1;
    if (sent == 0 && coordinator_compile_future(c, src))
        c->workers[src].parked = true; /* served again when results change a search */
    else if (sent == 0)
        coordinator_send_stop(c, src);
    return 0;
}

/* True if a worker of class `klass` other than `except` still owes results
 * (a slice it holds may yet have to be re-queued). */
static bool class_owes(const struct coordinator *c, int klass, int except)
{
    for (int i = 1; i <= c->nworkers; i++)
        if (i != except && c->workers[i].klass == klass && c->workers[i].held.n > 0)
            return true;
    return false;
}

/* Send slice `sl` (taken over: its list too) to rank `src` as WORK. */
static int coordinator_give(struct coordinator *c, int src, struct slice *sl, struct tf_error *err)
{
    struct worker_state *w = &c->workers[src];
    w->parked = false;
    if (w->outstanding == 0 && w->received == 0)
        w->first_work = tf_now();
    tf_wire_work(&c->buf, &sl->work);
    sl->left = sl->n;
    sl->cursor = 0;
    w->outstanding += sl->n;
    slices_push(&w->held, sl);
    return tf_wire_post(&w->outbox, src, &c->buf, err);
}

/* Cut re-queued slice `sl` down to the configurations no one has answered
 * (the stalled rank answered some before it went silent): a range becomes
 * the list of its valid configurations not recorded, a list keeps its
 * order. 0, or -1 + err. */
static int requeued_trim(struct coordinator *c, struct slice *sl, struct tf_error *err)
{
    struct tf_work *w = &sl->work;
    const struct tf_task *t = tf_plan_find(c->plan, (int)w->kernel, (int)w->problem, sl->klass);
    if (t == NULL)
        return tf_error_set(err, TF_ERR_MPI, "internal: a re-queued slice of no task");
    if (w->nlist == 0 && sl->n > UINT32_MAX)
        return 0; /* too long for a list: handed over whole, repeats dropped */
    const uint32_t task = (uint32_t)(t - c->plan->tasks);
    const uint8_t phase = (uint8_t)w->phase;
    uint64_t *keep = tf_xmalloc(sizeof *keep * (sl->n ? sl->n : 1)), n = 0;
    if (w->nlist > 0) {
        for (uint32_t i = 0; i < w->nlist; i++)
            if (!done_has(&c->recorded, task, w->list[i], phase))
                keep[n++] = w->list[i];
    } else {
        for (uint64_t idx = w->lo;; idx++) {
            int found = tf_space_next(t->space, idx, w->hi, &idx, err);
            if (found < 0) {
                free(keep);
                return -1;
            }
            if (found == 0)
                break;
            if (n == sl->n) { /* more valid ones than it was cut with: cannot be */
                free(keep);
                return tf_error_set(err, TF_ERR_MPI, "internal: a re-queued range holds "
                                    "more than its %llu configurations",
                                    (unsigned long long)sl->n);
            }
            if (!done_has(&c->recorded, task, idx, phase))
                keep[n++] = idx;
        }
    }
    free(w->list);
    w->list = keep;
    w->nlist = (uint32_t)n;
    w->lo = w->hi = 0;
    sl->n = n;
    sl->cursor = 0;
    return 0;
}

/* A re-queued slice of class `klass` from a rank other than `src`, if any,
 * cut down to what is not recorded yet (requeued_trim; one with nothing
 * left is dropped): 1 if *out holds one, 0 if none, -1 + err. */
static int coordinator_take_requeued(struct coordinator *c, int klass, int src,
                                     struct slice *out, struct tf_error *err)
{
    for (size_t i = 0; i < c->requeue.n;) {
        struct slice *sl = &c->requeue.v[i];
        if (sl->klass != klass || sl->from == src) {
            i++;
            continue;
        }
        slices_take(&c->requeue, i, out);
        if (requeued_trim(c, out, err)) {
            free(out->work.list);
            return -1;
        }
        if (out->n > 0)
            return 1;
        free(out->work.list); /* all answered before its rank went silent */
    }
    return 0;
}

/* The job's time budget (search.time_budget, counted from the start of the
 * serving loop; a resumed run gets it afresh): once over, no more work goes
 * out, what is in flight is still recorded, and the run is complete. */
static int coordinator_check_time(struct coordinator *c, struct tf_error *err)
{
    if (c->job->time_budget <= 0 || c->plan->time_up ||
        tf_now() - c->progress.start < c->job->time_budget)
        return 0;
    tf_plan_time_up(c->plan);
    if (!c->opt->quiet) {
        tf_progress_finish(&c->progress);
        fprintf(stderr, "tunefarm: time budget of %g s is over: no more work is handed out; "
                        "waiting for %llu configurations in flight\n",
                c->job->time_budget, (unsigned long long)coordinator_in_flight(c));
    }
    /* Ranks parked for future work have none now: they get STOP (or wait on
     * what is in flight). */
    for (int i = 1; i <= c->nworkers; i++)
        if (c->workers[i].parked) {
            c->workers[i].parked = false;
            if (coordinator_on_request(c, i, err))
                return -1;
        }
    return 0;
}

/* True if a class `src` could compile for may still get work (an adaptive
 * search gives a compile hint per state: a later hint may be new). */
static bool coordinator_compile_future(const struct coordinator *c, int src)
{
    const struct worker_state *w = &c->workers[src];
    for (int k = 0; k < c->nclasses; k++) {
        const struct tf_device *dev = &c->classes[k];
        if (k == w->klass || !compiles_for(w, dev))
            continue;
        for (int i = 0; i < c->plan->ntasks; i++) {
            const struct tf_task *t = &c->plan->tasks[i];
            if (t->klass == k && t->strat != NULL && t->phase != 2 && t->dispatched < t->total)
                return true;
        }
    }
    return false;
}

static int coordinator_on_request(struct coordinator *c, int src, struct tf_error *err)
{
    struct worker_state *w = &c->workers[src];
    if (w->stopped)
        return 0;
    if (c->stopping) {
        coordinator_send_stop(c, src);
        return 0;
    }
    if (!c->plan->time_up && coordinator_check_time(c, err))
        return -1;
    if (w->klass < 0) /* a compile rank */
        return coordinator_compile_or_stop(c, src, err);
    /* Work a stalled worker of this class held goes out first. */
    struct slice sl;
    const int requeued = coordinator_take_requeued(c, w->klass, src, &sl, err);
    if (requeued < 0)
        return -1;
    if (requeued) {
        c->requeued += sl.n;
        if (!c->opt->quiet)
            fprintf(stderr, "tunefarm: rank %d takes over %llu configurations of stalled rank "
                            "%d\n", src, (unsigned long long)sl.n, sl.from);
        return coordinator_give(c, src, &sl, err);
    }
    struct tf_work work;
    int64_t n = tf_plan_next_slice(c->plan, w->klass, slice_size(c, w), &work, err);
    if (n < 0 && err->code == TF_ERR_INTERRUPTED) {
        /* A search's model gave up (coordinator_stop_hook): the loop acts on
         * the signal or the time budget next and serves this rank then. */
        w->parked = true;
        return 0;
    }
    if (n < 0)
        return -1;
    if (n == 0) {
        /* A screening pass still running elsewhere will queue its top k: wait.
         * Done for good: compile ahead for the other classes, if any need it;
         * else wait while a peer owes results (its slices may be re-queued). */
        if (tf_plan_has_future(c->plan, w->klass)) {
            w->parked = true;
            return 0;
        }
        int sent = coordinator_send_compile(c, src, err);
        if (sent != 0)
            return sent < 0 ? -1 : 0;
        if (class_owes(c, w->klass, src)) {
            w->parked = true;
            return 0;
        }
        coordinator_send_stop(c, src);
        return 0;
    }
    sl = (struct slice){.work = work, .klass = w->klass, .n = (uint64_t)n, .from = 0};
    const struct tf_task *task = tf_plan_find(c->plan, (int)work.kernel, (int)work.problem,
                                              w->klass);
    const bool adaptive = task != NULL && task->strat != NULL && work.phase != 2;
    if (coordinator_give(c, src, &sl, err))
        return -1;
    /* New proposals of a search: a parked compile rank may share their
     * compiling now (tf_plan_next_compile_slice), not at the next results. */
    for (int i = 1; adaptive && i <= c->nworkers; i++)
        if (i != src && c->workers[i].parked && c->workers[i].klass < 0 &&
            coordinator_on_request(c, i, err))
            return -1;
    return 0;
}

/* The longest a live worker without a heartbeat can be silent while it owes
 * results: it sends what it has at least every second between
 * configurations, and one configuration may cost a reference compile and a
 * variant's compile, two runner starts, a problem's setup (its CPU
 * reference) and the measurement itself; a replay worker, its wait. */
static double worker_silence_bound(const struct coordinator *c, const struct worker_state *w)
{
    if (strcmp(w->dev.backend, "replay") == 0)
        return WORKER_REPLAY_MAX_WAIT + STALL_MARGIN;
    /* The longer of the two protocols' timeouts: a slice may be either. */
    const double timeout = c->job->top_k > 0 && c->job->screen.timeout > c->job->measure.timeout
                               ? c->job->screen.timeout
                               : c->job->measure.timeout;
    return 1.0 + 2 * c->compile_timeout + 2 * WORKER_RUNNER_START +
           fmax(WORKER_SETUP_MIN, 10 * timeout) + timeout + STALL_MARGIN;
}

/* Rank `src` has been silent past its bound while owing results (SIGSTOP, a
 * hung node): its slices go to the other workers of its class. It is not
 * given up on: if it answers after all, what it has not handed over is its
 * own again, and its late answers are kept where no other came first. */
static int coordinator_check_stalls(struct coordinator *c, struct tf_error *err)
{
    const double now = tf_now();
    bool moved = false;
    for (int i = 1; i <= c->nworkers; i++) {
        struct worker_state *w = &c->workers[i];
        if (w->stalled || w->held.n == 0 || w->stopped)
            continue;
        const double bound = w->beats ? STALL_SILENCE : worker_silence_bound(c, w);
        /* Seconds the coordinator spent checkpointing do not count: a worker
         * whose send waited on it meanwhile could not beat either (seen with
         * 10^7 results: a checkpoint of seconds, then a live rank taken for
         * stalled). */
        const double silent = now - w->last_heard - (c->deaf_seconds - w->deaf_at_heard);
        if (silent <= bound)
            continue;
        bool peers = false;
        for (int k = 1; k <= c->nworkers && !peers; k++)
            peers = k != i && c->workers[k].klass == w->klass && !c->workers[k].stalled;
        tf_progress_finish(&c->progress);
        fprintf(stderr, "tunefarm: rank %d has sent nothing for %.0f s while it owes %llu "
                        "results (bound: %g s, %s): %s; a late answer from it is kept only "
                        "where no other came first\n",
                i, silent, (unsigned long long)w->outstanding, bound,
                w->beats ? "its heartbeat stopped" : "the longest a worker without a "
                                                     "heartbeat waits",
                peers ? "its work goes to the other workers of its class"
                      : "no other worker of its class can take its work: waiting for it");
        w->stalled = true;
        while (w->held.n > 0) {
            struct slice sl, copy;
            slices_take(&w->held, w->held.n - 1, &sl);
            copy = sl;
            if (sl.work.nlist > 0) {
                copy.work.list = tf_xmalloc(sizeof *copy.work.list * sl.work.nlist);
                memcpy(copy.work.list, sl.work.list, sizeof *copy.work.list * sl.work.nlist);
            }
            slices_push(&w->taken, &copy);
            sl.from = i;
            sl.from_left = sl.left;
            slices_push(&c->requeue, &sl);
        }
        w->outstanding = 0;
        moved = true;
    }
    if (moved)
        for (int i = 1; i <= c->nworkers; i++)
            if (c->workers[i].parked && coordinator_on_request(c, i, err))
                return -1;
    return 0;
}

/* A stalled rank spoke again: the slices of it no one has taken yet are its
 * own again (it still holds them). */
static void coordinator_unstall(struct coordinator *c, int src)
{
    struct worker_state *w = &c->workers[src];
    w->last_heard = tf_now();
    w->deaf_at_heard = c->deaf_seconds;
    if (!w->stalled)
        return;
    w->stalled = false;
    uint64_t back = 0;
    for (size_t i = 0; i < c->requeue.n;) {
        if (c->requeue.v[i].from != src) {
            i++;
            continue;
        }
        struct slice sl;
        slices_take(&c->requeue, i, &sl);
        sl.left = sl.from_left;
        sl.from = 0;
        w->outstanding += sl.left;
        back += sl.left;
        slices_push(&w->held, &sl);
    }
    tf_progress_finish(&c->progress);
    fprintf(stderr, "tunefarm: rank %d answers again; %llu configurations no other rank took "
                    "are its own again\n", src, (unsigned long long)back);
}

/* Derived metrics of an ok result, from its median time and its energy per
 * launch (energy_j holds the samples' energy: samples x one launch's). */
static void coordinator_metrics(struct coordinator *c, const struct tf_kernel *k,
                                const struct tf_device *dev, struct tf_result *r)
{
    struct tf_value slots[k->nslots];
    tf_kernel_bind(k, r->config, (int)r->problem, dev, slots);
    slots[tf_kernel_time_slot(k)] = tf_float(r->time_median);
    slots[tf_kernel_energy_slot(k)] =
        tf_float(r->energy_status == TF_ENERGY_MEASURED && r->samples > 0
                     ? r->energy_j / r->samples
                     : NAN);
    for (int m = 0; m < k->nmetrics && m < TF_MAX_METRICS; m++) {
        struct tf_value v;
        r->metrics[m] = tf_expr_eval(k->metrics[m], slots, &v, NULL) == 0
                            ? tf_value_as_double(v)
                            : NAN;
    }
    (void)c;
}

/* The slice of `held` that holds `r`'s configuration, or -1. */
static ssize_t slice_find(struct slices *held, const struct tf_result *r)
{
    for (size_t i = 0; i < held->n; i++)
        if (slice_has(&held->v[i], r))
            return (ssize_t)i;
    return -1;
}

static int coordinator_on_results(struct coordinator *c, int src, struct tf_error *err)
{
    struct worker_state *w = &c->workers[src];
    struct tf_result *rs;
    uint32_t n;
    if (tf_wire_get_results(&c->buf, &rs, &n, err))
        return -1;
    coordinator_unstall(c, src);
    if (n == 0) { /* a heartbeat: alive, waiting on its reference, a compile or its device */
        w->beats = true;
        free(rs);
        return 0;
    }
    struct tf_task **tasks = tf_xcalloc(n ? n : 1, sizeof *tasks);
    struct tf_archive_row *rows = tf_xcalloc(n ? n : 1, sizeof *rows);
    uint32_t *kernels = tf_xcalloc(n ? n : 1, sizeof *kernels);
    struct tf_result **kept = tf_xcalloc(n ? n : 1, sizeof *kept);
    uint32_t m = 0, late = 0, again = 0;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        struct tf_result *r = &rs[i];
        struct tf_task *t = r->kernel < (uint32_t)c->job->nkernels
                                ? tf_plan_find(c->plan, (int)r->kernel, (int)r->problem, w->klass)
                                : NULL;
        /* A result must belong to work this rank was given: a slice it holds,
         * or one taken from it when it stalled (a late answer). */
        ssize_t h = t != NULL && r->config < tf_space_cartesian(t->space) ? slice_find(&w->held, r)
                                                                          : -1;
        bool was_taken = h < 0 && t != NULL && slice_find(&w->taken, r) >= 0;
        if (h < 0 && !was_taken) {
            rc = tf_error_set(err, TF_ERR_MPI,
                              "rank %d sent a result for a configuration it was not given "
                              "(kernel %u, problem %u, configuration %llu, phase %u)",
                              src, r->kernel, r->problem, (unsigned long long)r->config,
                              r->phase);
            break;
        }
        if (h >= 0) {
            struct slice *sl = &w->held.v[h];
            w->outstanding--;
            w->received++;
            if (--sl->left == 0) {
                struct slice gone;
                slices_take(&w->held, (size_t)h, &gone);
                free(gone.work.list);
            }
        }
        /* The first answer for a configuration is the one kept. */
        if (!done_add(&c->recorded, (uint32_t)(t - c->plan->tasks), r->config, r->phase)) {
            late += was_taken;
            again += !was_taken;
            continue;
        }
        /* Phase 2 starts only once phase 1 is all in. */
        if (r->phase != t->phase) {
            rc = tf_error_set(err, TF_ERR_MPI,
                              "rank %d sent a result of phase %u for kernel %u, problem %u, "
                              "configuration %llu, whose task is in phase %d",
                              src, r->phase, r->kernel, r->problem, (unsigned long long)r->config,
                              t->phase);
            break;
        }
        if (r->status == TF_STATUS_OK && isfinite(r->time_median))
            coordinator_metrics(c, c->job->kernels[r->kernel].kernel, &c->classes[w->klass], r);
        tasks[m] = t;
        kept[m] = r;
        rows[m] = (struct tf_archive_row){.run = c->run_id, .device = w->device_id, .r = *r};
        rows[m].r.problem = c->aproblems[r->kernel][r->problem];
        rows[m].r.kernel = 0;
        kernels[m] = (uint32_t)(c->akernels[r->kernel] - c->archive->kernels);
        m++;
    }
    if (rc == 0 && late + again > 0) {
        c->dropped += late + again;
        tf_progress_finish(&c->progress);
        fprintf(stderr, "tunefarm: rank %d answered for %u configuration%s that %s answered "
                        "first: dropped (the first answer is kept, never two rows)\n",
                src, late + again, late + again == 1 ? "" : "s",
                late ? "another rank (it was late: its work had gone to others)"
                     : "the rank it was taken from");
    }
    /* Journaled before counted: a batch the journal refuses (disk full) is not
     * recorded at all, and the run stops; a rerun measures it again. */
    bool keep = rc == 0 && !c->journal_failed;
    const double t0 = tf_now();
    c->result_messages++;
    if (keep && m > 0 &&
        tf_journal_append(c->journal, kernels, rows, m, &c->journal_err) != 0) {
        c->journal_failed = true;
        keep = false;
        tf_error_print(&c->journal_err, "tunefarm", stderr);
        fprintf(stderr, "tunefarm: stopping: results can no longer be saved; what was "
                        "journaled is safe, run the same command again once the journal "
                        "can be written\n");
        coordinator_begin_stop(c, 0);
    }
    c->journal_seconds += tf_now() - t0;
    for (uint32_t i = 0; i < m && keep; i++) {
        const struct tf_result *r = kept[i];
        struct tf_task *t = tasks[i];
        task_offer_best(t, r);
        tf_archive_append(&c->archive->kernels[kernels[i]], &rows[i]);
        tf_plan_record(c->plan, t, r);
        c->done++;
        c->status_counts[r->status]++;
        c->compile_seconds += r->compile_time;
        if (isfinite(r->device_time))
            w->measured_seconds += r->device_time;
        else if (r->status == TF_STATUS_OK && r->samples > 0 && isfinite(r->time_mean))
            w->measured_seconds += r->samples * r->time_mean;
    }
    free(rs);
    free(tasks);
    free(rows);
    free(kernels);
    free(kept);
    if (rc != 0)
        return rc;
    if (w->stopped && !w->stop_pending && w->outstanding == 0)
        w->finished = true;
    /* These results may have completed a screening pass, or the work a parked
     * rank waited on: serve whoever waits. */
    for (int i = 1; i <= c->nworkers; i++)
        if (c->workers[i].parked && coordinator_on_request(c, i, err))
            return -1;
    return 0;
}

/* "budget 2, patience 1": how many searches each reason ended (running ones
 * left out); "" if none has ended. */
static void coordinator_search_ends(const struct coordinator *c, char *out, size_t cap)
{
    out[0] = '\0';
    for (int r = TF_PLAN_BUDGET; r <= TF_PLAN_EXHAUSTED; r++) {
        int n = 0;
        for (int i = 0; i < c->plan->ntasks; i++)
            n += c->plan->tasks[i].stop == (enum tf_plan_stop)r;
        if (n > 0) {
            size_t len = strlen(out);
            snprintf(out + len, cap - len, "%s%s %d", len ? ", " : "",
                     tf_plan_stop_name((enum tf_plan_stop)r), n);
        }
    }
}

/* "best gemm/small on host: 1.23 ms | ended: budget 1" (the latest task with a
 * best; the reasons searches ended, once any has). */
static void coordinator_best_line(const struct coordinator *c, char *out, int cap)
{
    out[0] = '\0';
    for (int i = c->plan->ntasks - 1; i >= 0; i--) {
        const struct tf_task *t = &c->plan->tasks[i];
        if (!isfinite(t->best_time))
            continue;
        const struct tf_kernel *k = c->job->kernels[t->kernel].kernel;
        char tbuf[32];
        tf_format_seconds(t->best_time, tbuf, sizeof tbuf);
        snprintf(out, (size_t)cap, "best %s/%s on %s: %s", k->name, k->problems[t->problem].name,
                 c->classes[t->klass].name, tbuf);
        break;
    }
    char ends[160];
    coordinator_search_ends(c, ends, sizeof ends);
    if (ends[0]) {
        size_t len = strlen(out);
        snprintf(out + len, (size_t)cap - len, "%sended: %s", len ? " | " : "", ends);
    }
}

/* Which budget ended each search, after the statuses in the summary. */
static void coordinator_print_searches(const struct coordinator *c)
{
    const struct tf_job *job = c->job;
    char ends[160];
    coordinator_search_ends(c, ends, sizeof ends);
    printf("Search: %s", job->strategy_name);
    for (int i = 0; i < job->noptions; i++)
        printf("%s%s=%s", i ? " " : " (", job->options[i].name, job->options[i].value);
    printf("%s, seed %llu", job->noptions ? ")" : "", (unsigned long long)job->seed);
    if (job->budget)
        printf(", budget %llu", (unsigned long long)job->budget);
    if (job->time_budget > 0)
        printf(", time budget %g s", job->time_budget);
    if (job->patience)
        printf(", patience %llu (noise %g)", (unsigned long long)job->patience, job->noise);
    if (job->top_k)
        printf(", top %u re-measured", job->top_k);
    printf("; ended by: %s\n", ends[0] ? ends : "nothing (interrupted)");
    for (int i = 0; i < c->plan->ntasks && c->plan->ntasks <= 32; i++) {
        const struct tf_task *t = &c->plan->tasks[i];
        const struct tf_kernel *k = c->job->kernels[t->kernel].kernel;
        printf("  %-10s %-8s %-28.28s %s\n", k->name, k->problems[t->problem].name,
               c->classes[t->klass].name, tf_plan_stop_name(t->stop));
    }
}

/* Write the archive as checkpoint n+1, then start the journal afresh after it
 * (a crash between the two leaves a journal naming checkpoint n: ignored). */
static int coordinator_save(struct coordinator *c, struct tf_error *err)
{
    const double t0 = tf_now();
    c->last_checkpoint = t0;
    c->archive->checkpoint++;
    if (tf_archive_write(c->archive, c->archive_path, err) != 0) {
        c->archive->checkpoint--;
        return -1;
    }
    const int rc = tf_journal_reset(c->journal, c->archive, c->job->hash, err);
    c->checkpoints++;
    c->checkpoint_cost = tf_now() - t0;
    c->checkpoint_seconds += c->checkpoint_cost;
    c->deaf_seconds += c->checkpoint_cost;
    c->last_checkpoint = tf_now();
    return rc;
}

/* Checkpoint the run; a `complete` one gets its end time (an unfinished run,
 * end 0, is what a rerun resumes). */
static int coordinator_checkpoint(struct coordinator *c, bool complete, struct tf_error *err)
{
    struct tf_archive_run *run = &c->archive->runs[c->run_id];
    if (complete)
        run->end = tf_wall_now();
    if (coordinator_save(c, err) != 0) {
        run->end = 0;
        return -1;
    }
    return 0;
}

/* No more work goes out: STOP every worker (each finishes what it holds) and
 * wait for what is in flight until `grace` seconds from now. */
static void coordinator_begin_stop(struct coordinator *c, double grace)
{
    if (c->stopping)
        return;
    c->stopping = true;
    c->stop_deadline = tf_now() + grace;
    for (int i = 1; i <= c->nworkers; i++) {
        c->workers[i].parked = false;
        if (!c->workers[i].stopped)
            coordinator_send_stop(c, i);
    }
}

static uint64_t coordinator_in_flight(const struct coordinator *c)
{
    uint64_t n = 0;
    for (int i = 1; i <= c->nworkers; i++)
        n += c->workers[i].outstanding;
    return n;
}

/* Act on signals counted by main: the first stops the dispatching, the next
 * one stops waiting. Returns 1 if the run must end now, else 0. */
static int coordinator_check_signals(struct coordinator *c)
{
    int got = c->opt->interrupts ? (int)*c->opt->interrupts : 0;
    if (got > c->signals_seen) {
        c->signals_seen = got;
        tf_progress_finish(&c->progress);
        if (c->stopping) {
            fprintf(stderr, "tunefarm: signal again: stopping now, %llu configurations in "
                            "flight are left for the next run\n",
                    (unsigned long long)coordinator_in_flight(c));
            return 1;
        }
        fprintf(stderr, "tunefarm: signal: no more work is handed out; waiting up to %g s for "
                        "%llu configurations in flight, then checkpointing (signal again to "
                        "stop at once)\n",
                c->opt->grace, (unsigned long long)coordinator_in_flight(c));
        coordinator_begin_stop(c, c->opt->grace);
    }
    if (c->stopping && tf_now() > c->stop_deadline) {
        tf_progress_finish(&c->progress);
        fprintf(stderr, "tunefarm: %s: %llu configurations in flight are left for the next "
                        "run\n",
                c->journal_failed ? "results cannot be journaled" : "grace period over",
                (unsigned long long)coordinator_in_flight(c));
        return 1;
    }
    return 0;
}

/* A checkpoint rewrites the whole archive (temporary file + rename), so its
 * cost grows with the rows held: at the job's interval, a run of millions of
 * results would spend most of its time rewriting (10^6 results, checkpoint 2 s:
 * 29 of 36 s). The interval therefore stretches to CHECKPOINT_SPACING times
 * what the latest checkpoint took, keeping checkpoints to about a tenth of
 * the coordinator's time. Nothing is less safe for it: a result counts once
 * it is in the journal, which only grows longer between checkpoints. */
#define CHECKPOINT_SPACING 10.0

static double coordinator_checkpoint_interval(const struct coordinator *c)
{
    return fmax(c->job->checkpoint, CHECKPOINT_SPACING * c->checkpoint_cost);
}

/* The strategies' stop hook (tf_strategy_set_stop) while the loop runs: a
 * model computing its next proposals gives up when a signal came that the
 * loop has not acted on yet, the run is stopping, or the time budget is over,
 * so the loop acts on it now rather than after the computation (review S:
 * fit_steps 10000 kept a 3 s time budget waiting 130 s). */
static bool coordinator_stop_hook(void *ctx)
{
    const struct coordinator *c = ctx;
    if (c->stopping || c->plan->time_up)
        return true;
    if (c->opt->interrupts && (int)*c->opt->interrupts > c->signals_seen)
        return true;
    return c->job->time_budget > 0 && tf_now() - c->progress.start >= c->job->time_budget;
}

/* Serve until every worker is done (0), a signal or the grace period ends the
 * run with work in flight (1), or on failure (-1 + err). */
static int coordinator_loop(struct coordinator *c, struct tf_error *err)
{
    long nap = 0;
    for (;;) {
        if (coordinator_check_signals(c))
            return 1;
        if (coordinator_check_time(c, err))
            return -1;
        coordinator_flush_stops(c);
        /* A rank still silent once every other one is done and none of its
         * work waits for a taker owes nothing: STOP goes out to it (without
         * blocking), and the run ends without it. */
        bool others_done = c->requeue.n == 0;
        for (int i = 1; i <= c->nworkers && others_done; i++)
            others_done = c->workers[i].finished || c->workers[i].stalled;
        for (int i = 1; i <= c->nworkers && others_done; i++)
            if (c->workers[i].stalled && !c->workers[i].stopped) {
                tf_progress_finish(&c->progress);
                fprintf(stderr, "tunefarm: rank %d is still silent and owes nothing: the run "
                                "ends without it\n", i);
                /* An earlier send to it may never complete (a dead rank on
                 * another node): posting STOP must not wait for it. */
                tf_wire_outbox_abandon(&c->workers[i].outbox);
                coordinator_send_stop(c, i);
            }
        int active = 0;
        for (int i = 1; i <= c->nworkers; i++)
            active += !c->workers[i].finished;
        if (active == 0)
            return 0;
        int src;
        int rc = tf_wire_poll(-1, &c->buf, &src, err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            /* Nothing waiting: whoever is silent now is silent (a busy
             * coordinator had not read what the workers sent meanwhile). */
            if (coordinator_check_stalls(c, err))
                return -1;
            char best[256];
            coordinator_best_line(c, best, sizeof best);
            tf_progress_update(&c->progress, c->done - c->resumed_results,
                               c->plan->total - c->resumed_results, best, false);
            if (tf_now() - c->last_checkpoint >= coordinator_checkpoint_interval(c) &&
                coordinator_checkpoint(c, false, err)) {
                tf_error_print(err, "tunefarm: warning: checkpoint failed", stderr);
                c->last_checkpoint = tf_now();
            }
            /* Short naps while stopping, so the grace period is kept to the letter. */
            nap = nap ? (nap < 2000000 && !c->stopping ? nap * 2 : nap) : 20000;
            struct timespec ts = {0, nap};
            nanosleep(&ts, NULL);
            continue;
        }
        nap = 0;
        enum tf_msg_type type;
        if (src < 1 || src > c->nworkers || tf_wire_open(&c->buf, &type, err))
            return -1;
        switch (type) {
        case TF_MSG_REQUEST:
            coordinator_unstall(c, src);
            if (coordinator_on_request(c, src, err))
                return -1;
            break;
        case TF_MSG_RESULTS:
            if (coordinator_on_results(c, src, err))
                return -1;
            break;
        default:
            return tf_error_set(err, TF_ERR_MPI, "rank %d sent unexpected message type %d", src,
                                type);
        }
    }
}

/* Free everything. After a broken run (`broken`), sends still in flight are
 * left to MPI_Abort: waiting for a worker that no longer listens would hang.
 * So is a send to a rank still silent at the end (stalled: dead, under
 * `mpirun --enable-recovery`): across nodes its STOP never completes. */
static void coordinator_destroy(struct coordinator *c, bool broken)
{
    for (int i = 1; c->workers && i <= c->nworkers && !broken; i++) {
        struct tf_error err;
        if (c->workers[i].stalled)
            tf_wire_outbox_abandon(&c->workers[i].outbox);
        else if (tf_wire_outbox_close(&c->workers[i].outbox, &err) == 0)
            tf_buf_free(&c->workers[i].outbox.buf);
    }
    for (int i = 1; c->workers && i <= c->nworkers; i++) {
        slices_free(&c->workers[i].held);
        slices_free(&c->workers[i].taken);
    }
    slices_free(&c->requeue);
    free(c->recorded.v);
    if (c->aproblems)
        for (int i = 0; c->job && i < c->job->nkernels; i++)
            free(c->aproblems[i]);
    free(c->aproblems);
    free(c->akernels);
    tf_plan_destroy(c->plan);
    tf_journal_close(c->journal);
    tf_archive_destroy(c->archive);
    tf_job_destroy(c->job);
    tf_bundle_destroy(c->bundle);
    free(c->workers);
    free(c->classes);
    tf_buf_free(&c->buf);
}

/* Device duty cycle per class: time the devices ran variants / wall time, per device. */
static void coordinator_print_duty(const struct coordinator *c, double wall)
{
    for (int k = 0; k < c->nclasses; k++) {
        double measured = 0;
        int n = 0;
        for (int i = 1; i <= c->nworkers; i++)
            if (c->workers[i].klass == k) {
                measured += c->workers[i].measured_seconds;
                n++;
            }
        /* A replay's times are the source's, on a simulated clock: against
         * this machine's wall they would read 800%. */
        if (n > 0 && c->opt->replay_source)
            printf("Recorded time on %s (replay, %d simulated device%s): %.2f s running "
                   "variants per device\n",
                   c->classes[k].name, n, n > 1 ? "s" : "", measured / n);
        else if (n > 0 && wall > 0)
            printf("Duty cycle on %s (%s, %d device%s): %.1f%% (%.2f s running variants per device)\n",
                   c->classes[k].name, c->classes[k].backend, n, n > 1 ? "s" : "",
                   100.0 * measured / (n * wall), measured / n);
    }
}

static void coordinator_print_plan(const struct coordinator *c)
{
    if (c->opt->quiet)
        return;
    fprintf(stderr, "tunefarm: job '%s': %d kernel(s), %d device class(es), %d worker(s), "
                    "%llu configurations to measure\n",
            c->job->name, c->job->nkernels, c->nclasses, c->nworkers,
            (unsigned long long)c->plan->total);
    for (int j = 0; j < c->job->nkernels; j++) {
        bool planned = false;
        for (int i = 0; i < c->plan->ntasks && !planned; i++)
            planned = c->plan->tasks[i].kernel == j;
        if (!planned)
            fprintf(stderr, "  %-10s skipped: no device here runs %s kernels\n",
                    c->job->kernels[j].kernel->name, c->job->kernels[j].kernel->language);
    }
    if (c->job->strategy == TF_STRATEGY_ADAPTIVE)
        fprintf(stderr, "  search: %s, at most the counts below (patience or the time budget "
                        "may end a search sooner)\n", c->job->strategy_name);
    for (int i = 0; i < c->plan->ntasks; i++) {
        const struct tf_task *t = &c->plan->tasks[i];
        const struct tf_kernel *k = c->job->kernels[t->kernel].kernel;
        char valid[64];
        if (t->valid_estimated && t->valid == 0)
            snprintf(valid, sizeof valid, "an uncounted number of");
        else
            snprintf(valid, sizeof valid, "%s%llu", t->valid_estimated ? "about " : "",
                     (unsigned long long)t->valid);
        fprintf(stderr, "  %-10s %-8s %-28.28s %10llu of %s valid (%llu in the Cartesian "
                        "product)\n",
                k->name, k->problems[t->problem].name, c->classes[t->klass].name,
                (unsigned long long)t->total, valid,
                (unsigned long long)tf_space_cartesian(t->space));
        /* A default the constraints or the device's limits exclude is never
         * measured: say so here, or the summary's empty speedup is a riddle. */
        uint64_t def;
        bool def_valid = true;
        struct tf_error e;
        if (tf_kernel_default_for(k, t->problem, &def) &&
            tf_space_is_valid(t->space, def, &def_valid, &e) == 0 && !def_valid) {
            char text[256];
            tf_kernel_format_config(k, def, text, sizeof text);
            fprintf(stderr, "  %-10s %-8s the default (%s) is not valid here (a constraint or "
                            "a limit of the device excludes it): it is not measured, and the "
                            "summary has no speedup over it\n",
                    k->name, k->problems[t->problem].name, text);
        }
        if (c->job->nwarm > 0) {
            fprintf(stderr, "  %-10s %-8s warm start: %llu configurations from %d device "
                            "class(es) first",
                    k->name, k->problems[t->problem].name, (unsigned long long)t->nseeds,
                    t->nsources);
            if (t->nprior > 0)
                fprintf(stderr, "; the model learns from %llu of their results",
                        (unsigned long long)t->nprior);
            fputc('\n', stderr);
        }
    }
}

/* The job's last run in this archive if it did not finish (-1: none, or --fresh).
 * A replay and a measured run of the same job (or replays of two sources) are
 * different runs: one never resumes the other. */
/* The last run of `a` whose job hash (or, with job_name, job name) and replay
 * source (NULL: any) match, among the unfinished ones only if `unfinished`,
 * or -1. Last by start time, then by number: merge numbers runs in its
 * arguments' order, so a merged archive's numbers say nothing of which run
 * came after which. */
static int job_last_run(const struct tf_archive *a, const char *job_hash, const char *job_name,
                        const char *source, bool unfinished)
{
    int last = -1;
    for (int r = 0; r < a->nruns; r++) {
        const struct tf_archive_run *run = &a->runs[r];
        if ((job_hash && strcmp(run->job_hash, job_hash) != 0) ||
            (job_name && strcmp(run->job_name, job_name) != 0) ||
            (source && strcmp(run->replay_source, source) != 0) || (unfinished && run->end > 0))
            continue;
        if (last < 0 || !(run->start < a->runs[last].start))
            last = r;
    }
    return last;
}

static int coordinator_find_resumable(const struct coordinator *c)
{
    if (c->opt->fresh)
        return -1;
    const char *source = c->opt->replay_source ? c->opt->replay_source : "";
    const int r = job_last_run(c->archive, c->job->hash, NULL, source, false);
    return r >= 0 && c->archive->runs[r].end == 0 ? r : -1;
}

/* With no run to resume: a line when the job's last run here (same name, same
 * replay source) is unfinished but of other files, so a user who expected a
 * resume learns why a new run starts. */
static void coordinator_note_changed(const struct coordinator *c)
{
    if (c->opt->fresh || c->opt->quiet)
        return;
    const char *source = c->opt->replay_source ? c->opt->replay_source : "";
    const int r = job_last_run(c->archive, NULL, c->job->name, source, false);
    if (r >= 0 && c->archive->runs[r].end == 0) {
        const struct tf_archive_run *run = &c->archive->runs[r];
        fprintf(stderr,
                "tunefarm: not resuming unfinished run %d of job '%s': the job's files "
                "changed since (hash %.12s, now %.12s: the job file, a kernel file, a "
                "source, or a file in a CUDA/HIP kernel's folder). A new run starts; run %d "
                "stays unfinished\n",
                r, run->job_name, run->job_hash, c->job->hash, r);
    }
}

/* Record in the archive what each task sets out to measure (for `tunefarm
 * status`). Call before resuming; a resumed run keeps the plan rows it has,
 * and gets rows for device classes it did not have before. */
static void coordinator_record_plan(struct coordinator *c)
{
    char (*keys)[256] = archive_class_keys(c->archive);
    for (int i = 0; i < c->plan->ntasks; i++) {
        const struct tf_task *t = &c->plan->tasks[i];
        const uint32_t kernel = (uint32_t)(c->akernels[t->kernel] - c->archive->kernels);
        const uint32_t problem = c->aproblems[t->kernel][t->problem];
        char key[256];
        tf_device_class_key(&c->classes[t->klass], key, sizeof key);
        bool planned = false;
        for (int p = 0; p < c->archive->nplans && !planned; p++) {
            const struct tf_archive_plan *q = &c->archive->plans[p];
            planned = q->run == c->run_id && q->kernel == kernel && q->problem == problem &&
                      strcmp(keys[q->device], key) == 0;
        }
        if (planned)
            continue;
        int w = 1;
        while (w <= c->nworkers && c->workers[w].klass != t->klass)
            w++;
        struct tf_archive_plan p = {
            .run = c->run_id,
            .kernel = kernel,
            .problem = problem,
            .device = c->workers[w].device_id,
            .planned = tf_plan_task_planned(c->plan, t),
        };
        tf_archive_set_plan(c->archive, &p);
    }
    free(keys);
}

/* Open this invocation's session of run c->run_id: its row, what each of its
 * devices runs with, and the kernels' source hashes as this run measures them. */
static void coordinator_begin_session(struct coordinator *c, int nranks)
{
    c->session = tf_session_begin(c->archive, c->run_id, c->opt->command_line, (uint32_t)nranks);
    for (int i = 1; i <= c->nworkers; i++)
        if (c->workers[i].klass >= 0)
            tf_archive_set_session_device(c->archive, c->session, c->workers[i].device_id,
                                          &c->workers[i].dev);
    for (int k = 0; k < c->job->nkernels; k++)
        tf_archive_set_run_kernel(c->archive, c->run_id,
                                  (uint32_t)(c->akernels[k] - c->archive->kernels),
                                  c->job->kernels[k].kernel->source_hash);
}

/* Whether the unfinished run `resume` may go on here (tf_session_may_resume);
 * -1 and a line saying why when it may not: a new run starts, and that one
 * stays unfinished. */
static int coordinator_check_resume(const struct coordinator *c, int resume)
{
    if (resume < 0)
        return resume;
    struct tf_device *devs = tf_xcalloc((size_t)c->nworkers + 1, sizeof *devs);
    int n = 0;
    char why[640];
    for (int i = 1; i <= c->nworkers; i++)
        if (c->workers[i].klass >= 0)
            devs[n++] = c->workers[i].dev;
    const int ok = tf_session_may_resume(c->archive, (uint32_t)resume, tf_version, devs, n, why,
                                         sizeof why);
    free(devs);
    if (ok)
        return resume;
    fprintf(stderr, "tunefarm: not resuming unfinished run %d of job '%s': %s. A new run starts; "
                    "run %d stays unfinished (a run is measured with one software stack)\n",
            resume, c->job->name, why, resume);
    return -1;
}

/* Hand the plan what run c->run_id measured before it was interrupted: the
 * rows of each task's kernel and problem from a device of the task's class. */
static int coordinator_resume(struct coordinator *c, struct tf_error *err)
{
    const struct tf_archive *a = c->archive;
    char (*keys)[256] = archive_class_keys(a);
    int rc = 0;
    for (int i = 0; i < c->plan->ntasks && rc == 0; i++) {
        struct tf_task *t = &c->plan->tasks[i];
        const struct tf_archive_kernel *ak = c->akernels[t->kernel];
        const uint32_t problem = c->aproblems[t->kernel][t->problem];
        char key[256];
        tf_device_class_key(&c->classes[t->klass], key, sizeof key);
        struct tf_result *done = tf_xmalloc(sizeof *done * (ak->nrows ? ak->nrows : 1));
        uint64_t n = 0;
        for (uint64_t r = 0; r < ak->nrows; r++) {
            const struct tf_archive_row *row = &ak->rows[r];
            if (row->run == c->run_id && row->r.problem == problem &&
                strcmp(keys[row->device], key) == 0)
                done[n++] = row->r;
        }
        int64_t taken = tf_plan_resume(c->plan, t, done, n, err);
        if (taken < 0) {
            rc = -1;
        } else {
            c->resumed_results += (uint64_t)taken;
            for (uint64_t r = 0; r < n; r++)
                task_offer_best(t, &done[r]);
        }
        free(done);
    }
    free(keys);
    c->done = c->resumed_results;
    return rc;
}

/* True when every task has measured everything, both phases. */
static bool coordinator_complete(const struct coordinator *c)
{
    for (int i = 0; i < c->plan->ntasks; i++) {
        if (!tf_plan_task_complete(c->plan, &c->plan->tasks[i]))
            return false;
    }
    return true;
}

static void coordinator_print_summary(const struct coordinator *c, double wall)
{
    const uint64_t fresh = c->done - c->resumed_results;
    printf("\nJob '%s': %llu configurations in %.1f s (%.2f/s); archive %s\n", c->job->name,
           (unsigned long long)fresh, wall, wall > 0 ? (double)fresh / wall : 0, c->archive_path);
    if (c->resumed)
        printf("Resumed run %u: %llu configurations were measured before, %llu now\n",
               c->run_id, (unsigned long long)c->resumed_results, (unsigned long long)fresh);
    uint64_t ahead = 0;
    int compile_ranks = 0;
    for (int i = 1; i <= c->nworkers; i++) {
        ahead += c->workers[i].compiled_ahead;
        compile_ranks += c->workers[i].compiled_ahead > 0;
    }
    /* Results carry the compile time of the rank that measured them; what a
     * compile rank compiled is a cache hit there, and its time is not here. */
    if (c->opt->replay_source)
        printf("Compile: %.1f s of recorded compiler time (the source's, simulated)\n",
               c->compile_seconds);
    else
        printf("Compile: %.1f s of compiler time%s, %.1fx parallel over the run\n",
               c->compile_seconds,
               ahead > 0 ? " on the measuring ranks (compile ranks' not counted)" : "",
               wall > 0 ? c->compile_seconds / wall : 0);
    coordinator_print_duty(c, wall);
    if (ahead > 0)
        printf("Compile ranks: %d rank%s got %llu configurations to compile ahead of the device "
               "ranks (%llu of them proposals a device rank held)\n",
               compile_ranks, compile_ranks == 1 ? "" : "s", (unsigned long long)ahead,
               (unsigned long long)c->plan->shared);
    printf("Statuses:");
    for (int s = 0; s < TF_STATUS_COUNT; s++)
        if (c->status_counts[s])
            printf(" %s %llu", tf_status_name(s), (unsigned long long)c->status_counts[s]);
    printf("\n");
    if (c->requeued > 0 || c->dropped > 0)
        printf("Stalled workers: %llu configurations handed to other workers, %llu late or "
               "repeated answers dropped\n",
               (unsigned long long)c->requeued, (unsigned long long)c->dropped);
    tf_report_quality(c->archive, (int)c->run_id, NULL, stdout);
    coordinator_print_searches(c);
    printf("\n");
    tf_report_best(c->archive, (int)c->run_id, NULL, stdout);
    tf_report_cross(c->archive, (int)c->run_id, NULL, stdout);
    fflush(stdout);
}

/* TUNEFARM_PROFILE=1: the coordinator's own cost, on stderr (bench/coordinator/
 * capacity.sh reads it): results/s over the serving time, messages per
 * result, time in the journal and in checkpoints, and this process's peak
 * resident memory (rank 0 alone; the workers are other processes). */
static void coordinator_print_profile(const struct coordinator *c, double wall)
{
    const char *v = getenv("TUNEFARM_PROFILE");
    if (v == NULL || v[0] == '\0' || strcmp(v, "0") == 0)
        return;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const uint64_t fresh = c->done - c->resumed_results;
    fprintf(stderr, "tunefarm profile: coordinator: %llu results in %.2f s (%.0f results/s), "
                    "%llu RESULTS messages (%.1f results each), journal %.2f s, %llu "
                    "checkpoints %.2f s, cpu %.2f s user %.2f s sys, peak RSS %ld MiB, "
                    "%d workers\n",
            (unsigned long long)fresh, wall, wall > 0 ? (double)fresh / wall : 0,
            (unsigned long long)c->result_messages,
            c->result_messages ? (double)fresh / (double)c->result_messages : 0,
            c->journal_seconds, (unsigned long long)c->checkpoints, c->checkpoint_seconds,
            (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
            (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss / 1024,
            c->nworkers);
}

int tf_coordinator_run(const struct tf_run_options *opt, bool *abort_others)
{
    struct coordinator c = {.opt = opt};
    struct tf_error err = {0};
    int nranks, code = TF_EXIT_FAILURE, resume = -1;
    bool started = false;
    *abort_others = false;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    c.nworkers = nranks - 1;

    /* Validation: a bad job or archive stops every rank before anything is written. */
    c.bundle = tf_bundle_create();
    c.job = tf_job_load(opt->job_path, c.bundle, &err);
    /* The loader keeps search.strategy and search.options as written (the
     * workers load with it too, and schema/ knows no strategies): they are
     * checked here, against the registry, before the archive is touched. */
    if (c.job == NULL || tf_strategy_check_job(c.job, &err)) {
        code = TF_EXIT_USAGE;
        goto fail_stop;
    }
    /* The workers' compile deadline, which bounds a silent worker's silence:
     * a value they would refuse is refused here, before anything runs. */
    if (tf_job_compile_timeout(&c.compile_timeout, &err) != 0) {
        code = TF_EXIT_USAGE;
        goto fail_stop;
    }
    /* Likewise the compilers' memory limit: every worker would refuse its
     * device over it, and the run would end as "no worker offers a device"
     * (exit 3), which a requeue script reads as the wrong node. */
    uint64_t memory_mib;
    bool memory_set;
    if (tf_job_compile_memory(&memory_mib, &memory_set, &err) != 0) {
        code = TF_EXIT_USAGE;
        goto fail_stop;
    }
    c.archive_path = opt->archive ? opt->archive : c.job->archive;
    /* Write it once now (with what the journal held): an archive path that
     * cannot be written is refused before any device time is spent. */
    c.archive_is_new = !file_exists(c.archive_path);
    if (coordinator_open_archive(&c, &err) || coordinator_save(&c, &err)) {
        code = TF_EXIT_USAGE;
        goto fail_stop;
    }
    resume = coordinator_find_resumable(&c);
    if (resume < 0)
        coordinator_note_changed(&c);
    if (c.nworkers < 1) {
        tf_error_set(&err, TF_ERR_MPI,
                     "no worker ranks: run `tunefarm run` without a launcher, or with "
                     "`mpirun -np N` where N >= 2");
        code = TF_EXIT_USAGE;
        goto fail_stop;
    }
    tf_wire_job(&c.buf, c.bundle);
    if (tf_wire_bcast(&c.buf, &err))
        goto fail;
    started = true;
    if (coordinator_gather(&c, &err))
        goto fail;
    /* Ranks with nothing to measure go now, unless they can compile ahead
     * for the others: those ask (REQUEST) and get COMPILE slices or STOP. */
    for (int i = 1; i <= c.nworkers; i++)
        if (c.workers[i].klass < 0 && c.workers[i].compilers[0] == '\0')
            coordinator_send_stop(&c, i);
    if (c.nclasses == 0) {
        tf_error_set(&err, TF_ERR_SCHEMA,
                     "no worker offers a device that job '%s' targets (see `tunefarm devices`)",
                     c.job->name);
        code = TF_EXIT_NO_DEVICE;
        goto fail;
    }
    resume = coordinator_check_resume(&c, resume);
    c.plan = tf_plan_create(c.job, c.nclasses, c.classes, &err);
    /* Warm start: other devices' best, proposed first (the run being resumed
     * is not a source of its own seeds). */
    if (c.plan == NULL || tf_plan_warm_start(c.plan, c.job, c.archive, resume, c.archive_path, &err)) {
        code = TF_EXIT_USAGE;
        goto fail;
    }
    if (c.plan->ntasks == 0) {
        tf_error_set(&err, TF_ERR_SCHEMA,
                     "no device here can run a kernel of job '%s': C kernels need a host "
                     "worker, CUDA kernels an NVIDIA or AMD GPU worker",
                     c.job->name);
        code = TF_EXIT_NO_DEVICE;
        goto fail;
    }
    if (resume >= 0) {
        c.run_id = (uint32_t)resume;
        c.resumed = true;
        coordinator_record_plan(&c); /* classes the run did not have before */
        coordinator_begin_session(&c, nranks);
        if (coordinator_resume(&c, &err))
            goto fail;
    } else {
        struct tf_archive_run run = {.start = tf_wall_now(), .ranks = (uint32_t)nranks};
        tf_strlcpy(run.job_name, c.job->name, sizeof run.job_name);
        tf_strlcpy(run.job_hash, c.job->hash, sizeof run.job_hash);
        tf_strlcpy(run.command, opt->command_line ? opt->command_line : "", sizeof run.command);
        const char *slurm = getenv("SLURM_JOB_ID");
        tf_strlcpy(run.slurm_job_id, slurm ? slurm : "", sizeof run.slurm_job_id);
        tf_strlcpy(run.tunefarm_version, tf_version, sizeof run.tunefarm_version);
        tf_strlcpy(run.replay_source, opt->replay_source ? opt->replay_source : "",
                   sizeof run.replay_source);
        tf_session_run_settings(&run, c.job);
        c.run_id = tf_archive_add_run(c.archive, &run);
        coordinator_record_plan(&c);
        coordinator_begin_session(&c, nranks);
    }
    coordinator_print_plan(&c);
    if (c.resumed && !opt->quiet)
        fprintf(stderr, "tunefarm: resuming run %u of job '%s' (%s): %llu of %llu "
                        "configurations are in the archive already (--fresh starts over)\n",
                c.run_id, c.job->name, c.archive->runs[c.run_id].command,
                (unsigned long long)c.resumed_results, (unsigned long long)c.plan->total);
    /* The run row, its devices and plan are in the file before any result is
     * journaled: journal records point at them. */
    if (coordinator_save(&c, &err))
        goto fail;

    tf_progress_init(&c.progress, opt->quiet);
    c.last_checkpoint = tf_now();
    tf_strategy_set_stop(coordinator_stop_hook, &c);
    int loop = coordinator_loop(&c, &err);
    tf_strategy_set_stop(NULL, NULL);
    tf_progress_finish(&c.progress);
    if (loop < 0) {
        /* Keep what was measured: one last write before reporting the failure. */
        struct tf_error werr;
        c.archive->sessions[c.session].end = tf_wall_now();
        if (coordinator_checkpoint(&c, false, &werr) == 0)
            fprintf(stderr, "tunefarm: %llu results saved in %s\n",
                    (unsigned long long)c.done, c.archive_path);
        goto fail;
    }
    if (loop == 0) {
        char best[256];
        coordinator_best_line(&c, best, sizeof best);
        tf_progress_update(&c.progress, c.done - c.resumed_results,
                           c.plan->total - c.resumed_results, best, true);
    }
    tf_progress_finish(&c.progress);
    const bool complete = loop == 0 && coordinator_complete(&c);
    c.archive->sessions[c.session].end = tf_wall_now();
    if (coordinator_checkpoint(&c, complete, &err)) {
        tf_error_print(&err, "tunefarm", stderr);
        tf_error_set(&err, TF_ERR_IO, "the final checkpoint failed; every result is in the "
                     "journal %s: run the same command again once %s can be written",
                     tf_journal_file(c.journal), c.archive_path);
        *abort_others = loop != 0;
        goto fail;
    }
    coordinator_print_summary(&c, tf_now() - c.progress.start);
    coordinator_print_profile(&c, tf_now() - c.progress.start);
    if (c.journal_failed) {
        err = c.journal_err;
        *abort_others = loop != 0;
        goto fail;
    }
    if (!complete) {
        printf("Interrupted: run %u has %llu of %llu configurations; run the same command "
               "again to resume it (exit %d)\n",
               c.run_id, (unsigned long long)c.done, (unsigned long long)c.plan->total,
               TF_EXIT_INTERRUPTED);
        fflush(stdout);
        *abort_others = loop != 0;
        coordinator_destroy(&c, loop != 0);
        return TF_EXIT_INTERRUPTED;
    }
    /* Everything is in the archive: the journal (a bare header) can go. */
    unlink(tf_journal_file(c.journal));
    coordinator_destroy(&c, false);
    return TF_EXIT_OK;

fail_stop:
    if (!started)
        coordinator_stop_all(nranks);
fail:
    tf_error_print(&err, "tunefarm", stderr);
    /* Refused before measuring anything: leave no empty archive behind (the
     * file; a symbolic link of the user's is not ours to remove). */
    struct stat lst;
    if (c.archive_is_new && c.done == 0 && code != TF_EXIT_FAILURE &&
        lstat(c.archive_path, &lst) == 0 && !S_ISLNK(lst.st_mode))
        unlink(c.archive_path);
    /* Nor a journal this run created and appended nothing to (an archive
     * path that is not writable, say): one that was there before, or that
     * holds a result, stays. */
    if (tf_journal_created(c.journal))
        unlink(tf_journal_file(c.journal));
    /* A broken run ends in MPI_Abort (main.c): sending STOP could block on a
     * worker that is itself blocked sending to us. Otherwise say goodbye. */
    if (started && c.workers && code != TF_EXIT_FAILURE && !*abort_others)
        for (int i = 1; i <= c.nworkers; i++)
            if (!c.workers[i].stopped)
                coordinator_send_stop(&c, i);
    if (code == TF_EXIT_FAILURE)
        *abort_others = true;
    coordinator_destroy(&c, *abort_others);
    return code;
}

static void format_time(double unix_seconds, char *out, size_t cap)
{
    time_t t = tf_archive_time_ok(unix_seconds) ? (time_t)unix_seconds : 0;
    struct tm tm;
    if (t == 0 || localtime_r(&t, &tm) == NULL)
        tf_strlcpy(out, "-", cap);
    else
        strftime(out, cap, "%Y-%m-%d %H:%M:%S", &tm);
}

/* A configuration and phase of a row (never folded into one number: config
 * * 3 + phase wraps above 2^64 / 3). */
struct config_phase {
    uint64_t config;
    uint8_t phase;
};

static int cmp_config_phase(const void *a, const void *b)
{
    const struct config_phase *x = a, *y = b;
    if (x->config != y->config)
        return x->config < y->config ? -1 : 1;
    return (x->phase > y->phase) - (x->phase < y->phase);
}

/* One line per (kernel, problem, class) of run `run`: measured (distinct
 * configuration and phase) by status, and against its plan what remains.
 * A `finished` run has nothing left: its plan row is what it set out to
 * measure (the budget), and a search that patience, the time budget or a
 * smaller valid space ended sooner fell short of it without anything
 * remaining (review M: a finished run said "218 remain"). */
static void status_run(const struct tf_archive *a, uint32_t run, bool finished,
                       char (*keys)[256], FILE *out)
{
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *ak = &a->kernels[k];
        for (int p = 0; p < ak->nproblems; p++) {
            for (int d = 0; d < a->ndevices; d++) {
                /* One line per class: skip d if an earlier device shares its class. */
                bool seen = false;
                for (int e = 0; e < d && !seen; e++)
                    seen = strcmp(keys[e], keys[d]) == 0;
                if (seen)
                    continue;
                uint64_t n = 0, counts[TF_STATUS_COUNT] = {0};
                struct config_phase *ids = tf_xmalloc(sizeof *ids * (ak->nrows ? ak->nrows : 1));
                for (uint64_t r = 0; r < ak->nrows; r++) {
                    const struct tf_archive_row *row = &ak->rows[r];
                    if (row->run != run || row->r.problem != (uint32_t)p ||
                        strcmp(keys[row->device], keys[d]) != 0)
                        continue;
                    ids[n++] = (struct config_phase){row->r.config, row->r.phase};
                    counts[row->r.status]++;
                }
                qsort(ids, n, sizeof *ids, cmp_config_phase);
                uint64_t distinct = 0;
                for (uint64_t i = 0; i < n; i++)
                    distinct += i == 0 || cmp_config_phase(&ids[i], &ids[i - 1]) != 0;
                free(ids);
                const struct tf_archive_plan *plan = NULL;
                for (int i = 0; i < a->nplans && plan == NULL; i++)
                    if (a->plans[i].run == run && a->plans[i].kernel == (uint32_t)k &&
                        a->plans[i].problem == (uint32_t)p &&
                        strcmp(keys[a->plans[i].device], keys[d]) == 0)
                        plan = &a->plans[i];
                if (n == 0 && plan == NULL)
                    continue;
                fprintf(out, "  %s/%s on %s: %llu", ak->name, ak->problems[p].name,
                        a->devices[d].name, (unsigned long long)distinct);
                const bool short_ended = plan && plan->planned > distinct && finished;
                if (plan && !short_ended)
                    fprintf(out, " of %llu", (unsigned long long)plan->planned);
                fprintf(out, " measured");
                const char *sep = " (";
                for (int s = 0; s < TF_STATUS_COUNT; s++)
                    if (counts[s]) {
                        fprintf(out, "%s%s %llu", sep, tf_status_name(s),
                                (unsigned long long)counts[s]);
                        sep = ", ";
                    }
                fprintf(out, "%s", n ? ")" : "");
                if (short_ended)
                    fprintf(out, "; its search ended before the %llu planned",
                            (unsigned long long)plan->planned);
                else if (plan && plan->planned > distinct)
                    fprintf(out, ", %llu remain", (unsigned long long)(plan->planned - distinct));
                if (n > distinct)
                    fprintf(out, "; %llu rows repeat a configuration", (unsigned long long)(n - distinct));
                fputc('\n', out);
            }
        }
    }
}

int tf_coordinator_status(const char *archive_path, FILE *out)
{
    struct tf_error err = {0};
    struct tf_journal_replay replay;
    struct tf_archive *a = tf_journal_read_archive(archive_path, &replay, &err);
    if (a == NULL) {
        tf_error_print(&err, "tunefarm status", stderr);
        return TF_EXIT_USAGE;
    }
    fprintf(out, "Archive %s: checkpoint %llu, %d run%s, %d device%s, %d kernel%s\n",
            archive_path, (unsigned long long)a->checkpoint, a->nruns, a->nruns == 1 ? "" : "s",
            a->ndevices, a->ndevices == 1 ? "" : "s", tf_report_kernels_with_rows(a),
            tf_report_kernels_with_rows(a) == 1 ? "" : "s");
    char jpath[4200];
    tf_journal_path(archive_path, jpath, sizeof jpath);
    if (replay.records > 0)
        fprintf(out, "Journal %s: %llu results not checkpointed yet (counted below: a run is "
                     "going on, or was killed and the next run folds them in)\n",
                jpath, (unsigned long long)replay.records);
    if (replay.torn_bytes > 0)
        fprintf(out, "Journal %s: a torn record of %llu bytes at its end (a crash mid-write; "
                     "dropped)\n", jpath, (unsigned long long)replay.torn_bytes);
    /* A run holding the journal's lock is going on: its run (the last
     * unfinished one) is not waiting for a resume. */
    bool live = false;
    struct tf_journal *held = NULL;
    struct tf_error lock_err = {0};
    if (tf_journal_open_read(archive_path, &held, &live, &lock_err) == 0)
        tf_journal_close(held);
    /* The run holding the journal: the last unfinished run of the job its
     * header names (a resume takes the job's last run of its replay source,
     * which the header does not name; a run of another source that finished
     * since does not hide it). A merge or an import holding the lock names
     * no job. */
    const int running =
        live && replay.job_hash[0] ? job_last_run(a, replay.job_hash, NULL, NULL, true) : -1;
    char (*keys)[256] = archive_class_keys(a);
    for (int r = 0; r < a->nruns; r++) {
        const struct tf_archive_run *run = &a->runs[r];
        char start[32], end[32];
        format_time(run->start, start, sizeof start);
        format_time(run->end, end, sizeof end);
        fprintf(out, "\nRun %d: job '%s' (%.12s), started %s, ", r, run->job_name,
                run->job_hash, start);
        if (run->end > 0)
            fprintf(out, "finished %s", end);
        else if (r == running)
            fprintf(out, "STILL RUNNING (its journal is locked by the run)");
        else if (job_last_run(a, run->job_hash, NULL, run->replay_source, false) != r)
            fprintf(out, "UNFINISHED, and a later run of the same job files followed it: it "
                         "will not be resumed");
        else
            fprintf(out, "UNFINISHED: run the same job on this archive to resume it");
        if (run->slurm_job_id[0])
            fprintf(out, "; Slurm job %s", run->slurm_job_id);
        fprintf(out, "\n  command: %s\n", run->command);
        tf_session_print(a, (uint32_t)r, "  ", out);
        status_run(a, (uint32_t)r, run->end > 0, keys, out);
    }
    free(keys);
    tf_archive_destroy(a);
    return TF_EXIT_OK;
}

/* Rows per run of `a` (new array of a->nruns + 1). */
static uint64_t *rows_per_run(const struct tf_archive *a)
{
    uint64_t *n = tf_xcalloc((size_t)a->nruns + 1, sizeof *n);
    for (int k = 0; k < a->nkernels; k++)
        for (uint64_t i = 0; i < a->kernels[k].nrows; i++)
            n[a->kernels[k].rows[i].run]++;
    return n;
}

/* What merging `in_path` did to `out`, runs 0..nbefore-1 of which it had
 * before with before[r] rows and ended[r] set: runs added, rows added to runs
 * it had, and what is still unfinished (merge again once it is finished). */
static void merge_report(FILE *rep, const char *in_path, const struct tf_archive *in,
                         const struct tf_archive *out, int nbefore, const uint64_t *before,
                         const bool *ended, const struct tf_archive_merge_stats *st, int live)
{
    fprintf(rep, "%s: %d run%s, %llu rows added", in_path, st->runs, st->runs == 1 ? "" : "s",
           (unsigned long long)(st->rows - st->rows_to_present));
    if (st->runs_present > st->runs_finished && st->rows_to_present == 0)
        fprintf(rep, " (runs already in the output skipped)");
    fprintf(rep, "\n");
    uint64_t *after = rows_per_run(out);
    for (int r = 0; r < nbefore; r++) {
        const bool finished = !ended[r] && out->runs[r].end > 0;
        if (after[r] == before[r] && !finished)
            continue;
        fprintf(rep, "%s: %llu rows added to run %d (job '%s'), %s\n", in_path,
               (unsigned long long)(after[r] - before[r]), r, out->runs[r].job_name,
               finished ? "now finished" : "still unfinished");
    }
    /* Runs that were not finished in the input: say what the output has of them. */
    for (int r = 0; r < in->nruns; r++) {
        if (in->runs[r].end > 0)
            continue;
        fprintf(rep, "%s: run %d (job '%s') is %s: the output has what it measured so far; merge "
               "again once it %s to add the rest\n",
               in_path, r, in->runs[r].job_name,
               r == live ? "STILL RUNNING (its journal is locked by the run)" : "unfinished",
               r == live ? "has ended" : "is resumed and finished");
    }
    free(after);
}

int tf_coordinator_merge(const char *out_path, char *const *inputs, int n, bool quiet)
{
    struct tf_error err = {0};
    struct tf_archive *out = NULL, *in = NULL;
    struct tf_journal *in_journal = NULL;
    struct tf_journal_image *image = NULL;
    struct tf_journal_replay replay;
    uint64_t *before = NULL;
    bool *ended = NULL;
    int code = TF_EXIT_USAGE;
    /* What was merged is said once OUT is written: lines printed before a
     * failed write would report a merge that did not happen. */
    char *report = NULL;
    size_t report_len = 0;
    FILE *rep = open_memstream(&report, &report_len);
    if (rep == NULL)
        tf_die("out of memory");
    /* The lock keeps a run (or another merge) from writing OUT meanwhile. */
    struct tf_journal *journal = tf_journal_open(out_path, &err);
    const bool is_new = !file_exists(out_path);
    if (journal == NULL) {
        code = TF_EXIT_FAILURE; /* OUT cannot be written now; it is as it was */
        goto fail;
    }
    if (journal_without_archive(out_path, &err) != 0)
        goto fail;
    out = is_new ? tf_archive_create() : tf_archive_read(out_path, &err);
    if (out == NULL || tf_journal_replay(journal, out_path, out, &replay, &err) != 0)
        goto fail;
    tf_archive_ensure_id(out);
    for (int i = 0; i < n; i++) {
        if (tf_same_file(inputs[i], out_path)) {
            tf_error_set(&err, TF_ERR_SCHEMA, "%s is the output archive: it cannot be merged "
                         "into itself", inputs[i]);
            goto fail;
        }
        /* A shared lock on the input's journal: no run starts on it while it is
         * read. A run that holds it is live: what it has so far is merged. Its
         * journal is read before its archive: a checkpoint between the two
         * leaves records the archive holds already (stale, skipped), where
         * the other order met a journal ahead of its archive and refused it. */
        bool live = false;
        memset(&replay, 0, sizeof replay); /* the input's, not OUT's */
        if (tf_journal_open_read(inputs[i], &in_journal, &live, &err) != 0 ||
            (in_journal != NULL && tf_journal_read(in_journal, inputs[i], &image, &err) != 0))
            goto fail;
        tf_journal_test_pause();
        in = tf_archive_read(inputs[i], &err);
        if (in == NULL ||
            (image != NULL && tf_journal_replay_image(image, inputs[i], in, &replay, &err) != 0))
            goto fail;
        tf_journal_image_destroy(image);
        image = NULL;
        const int nbefore = out->nruns;
        before = rows_per_run(out);
        ended = tf_xcalloc((size_t)nbefore + 1, sizeof *ended);
        for (int r = 0; r < nbefore; r++)
            ended[r] = out->runs[r].end > 0;
        struct tf_archive_merge_stats st;
        if (tf_archive_merge(out, in, &st, &err) != 0) {
            size_t len = strlen(err.message);
            snprintf(err.message + len, sizeof err.message - len, " (merging %s into %s)",
                     inputs[i], out_path);
            goto fail;
        }
        /* The input's run that holds its journal: its job's last run. */
        const int running =
            live && replay.job_hash[0] ? job_last_run(in, replay.job_hash, NULL, NULL, true) : -1;
        if (!quiet)
            merge_report(rep, inputs[i], in, out, nbefore, before, ended, &st, running);
        free(before);
        free(ended);
        before = NULL;
        ended = NULL;
        tf_archive_destroy(in);
        in = NULL;
        /* What was read is in `out` now: a run may go on with the input. */
        tf_journal_close(in_journal);
        in_journal = NULL;
    }
    out->checkpoint++;
    if (tf_archive_write(out, out_path, &err) != 0 ||
        tf_journal_reset(journal, out, NULL, &err) != 0) {
        code = TF_EXIT_FAILURE;
        goto fail;
    }
    if (!quiet)
        fprintf(rep, "%s: %d runs, %d devices, %d kernels\n", out_path, out->nruns,
                out->ndevices, out->nkernels);
    fclose(rep);
    fwrite(report, 1, report_len, stdout);
    free(report);
    unlink(tf_journal_file(journal)); /* everything is in the archive */
    tf_journal_close(journal);
    tf_archive_destroy(out);
    return TF_EXIT_OK;
fail:
    fclose(rep);
    free(report);
    tf_error_print(&err, "tunefarm merge", stderr);
    if (tf_journal_created(journal))
        unlink(tf_journal_file(journal));
    free(before);
    free(ended);
    tf_journal_image_destroy(image);
    tf_journal_close(in_journal);
    tf_journal_close(journal);
    tf_archive_destroy(in);
    tf_archive_destroy(out);
    return code;
}
