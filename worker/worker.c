/* worker.c - the worker side of a run.
 *
 * A worker receives the job bundle, picks its device (GPUs first, the host
 * CPU last, by its index among the node's workers), announces it in HELLO and
 * then pulls work. Each slice is expanded into configurations (a range is
 * walked with the same pruned enumeration the coordinator counted with) and
 * every configuration is submitted to the compile pool at once, so compiling
 * runs ahead of measuring; the measuring loop takes configurations in order,
 * waits for its binary and hands it to the runner child, which owns the device.
 * It asks for the next slice while the current one still has a pool's worth of
 * configurations left, so neither the pool nor the device waits for the
 * coordinator. Results go back in batches (at most every second); while the
 * worker owes results a heartbeat thread speaks for it after every second of
 * silence (the batch waiting, else an empty RESULTS), so the coordinator can
 * tell a worker waiting minutes on a reference or a compile from a stopped
 * one. A failed variant is a result like any other: only a broken runner
 * stops the worker.
 * A worker is also a compile rank when the coordinator says so (COMPILE: its
 * own class has nothing left, or it was started with --compile-rank and has
 * no device): it compiles another class's future configurations into the
 * shared cache with a pool for that class's backend and architecture, and
 * those queue entries end without a result.
 * A replay worker (backend_replay.h: --replay) has no pool and no runner: it
 * answers each configuration from the replay source and keeps a simulated
 * clock, waiting the recorded compile + benchmark time divided by the speed
 * (at most REPLAY_MAX_WAIT for one configuration). Its device is replay-N, N
 * its index among the node's workers, so any number of them share no device.
 *
 * Where processes run (README "Where processes run"). A rank starts with the
 * CPUs its launcher, taskset or cgroup allow it (its affinity mask: mpirun's
 * --bind-to, srun's --cpu-bind, a Slurm cpuset); every process it starts
 * inherits its binding.
 * - GPU worker: binds itself to the cores near its GPU (hwloc by PCI bus id,
 *   within the allowed set: worker_bind_near_device) before it starts
 *   anything; its compile pool is one compiler process per such core, and its
 *   runner (the only process touching the GPU) runs there too.
 * - host worker: does not bind (the runner measures on whichever allowed CPU
 *   the kernel gives it); its pool is the allowed CPUs less one, at least one,
 *   the one left for the runner.
 * - compile rank (--compile-rank, or a worker whose own class is done): no
 *   runner; a pool per (backend, architecture) it compiles for, each of one
 *   process per allowed CPU (the device worker keeps its own pool's size). It
 *   stays off the cores the GPU workers need only if its launcher gives it the
 *   others (taskset, srun --cpu-bind): it does not bind itself. It runs at
 *   normal priority: the device workers wait on the cache marks of variants
 *   it compiles for them (plan.c shares their proposals), so an idle-priority
 *   compile rank starved by busy pools would stall a GPU.
 * - replay worker: no pool, no runner; unbound.
 * "Allowed CPUs" above means this rank's share of them where other ranks of
 * the node with pools may use the same CPUs (main.c gathers the node's masks;
 * tf_worker_cpu_share): two pools never fill one CPU twice over. A device
 * worker whose device the job does not target (the host worker of a
 * `targets: [cuda]` job) takes no share of CPUs a measuring pool holds, and
 * so compiles nothing there: one pool compiling a GPU's queue in the order it
 * is measured kept a deep adaptive tune's GPU busier than that pool and a
 * helper compiling the queue's back half on the same CPUs
 * (bench/results/pools-2026-11-27-h200.md).
 * `compile_jobs` in the job overrides every pool's size. A pool never has
 * more processes than that size; the size never exceeds the allowed CPUs
 * unless compile_jobs says so (tests/integration/run.sh checks it under
 * taskset). */
#include "worker.h"
#include "../schema/version.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>
#include <mpi.h>

#include "../schema/job.h"
#include "../schema/space.h"
#include "../schema/wire.h"
#include "backend.h"
#include "backend_replay.h"
#include "compile.h"
#include "runner.h"


#define WORKER_MAX_DEVICES 64
#define RESULTS_BATCH 64
#define RESULTS_MAX_DELAY 1.0
#define WORKER_MAX_SERVED 64 /* (class, kernel, problem) spaces a compile rank keeps */
#define WORKER_MAX_POOLS 8   /* (backend, arch) pools a compile rank keeps */
#define REPLAY_MAX_WAIT 3600.0 /* real seconds a replay worker waits for one configuration */
#define HEARTBEAT_INTERVAL 1.0 /* an owing worker silent this long sends an empty RESULTS */

/* The heartbeat: a thread that tells the coordinator the worker is alive while
 * its main thread waits on something long (a problem's reference, seconds
 * to minutes; a compile; a slow configuration; a replay's simulated clock).
 * Every MPI call of the worker is made under `mu` (MPI_THREAD_SERIALIZED). */
struct heartbeat {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    bool running;       /* the thread was started (MPI allows it) */
    bool stop;
    uint64_t unanswered; /* configurations queued to measure whose results are not in
                            the batch yet (compile-only entries owe nothing) */
    double last_sent;   /* when the worker last sent anything (worker_now) */
    /* The batch (worker.batch, nbatch, last_flush) is under `mu` too: the
     * heartbeat sends results that wait while the main thread is busy. */
    struct tf_buf buf;
};

struct pending {
    uint32_t kernel, problem, phase;
    uint64_t config;
    uint64_t ticket;
    struct tf_compile_pool *compile_only; /* a compile rank's entry: no measurement */
};

/* A compile rank's enumeration of another class's space. */
struct served_space {
    struct tf_device dev;
    uint32_t kernel, problem;
    struct tf_space *space;
};

/* A compile rank's pool for another class's backend and architecture. */
struct served_pool {
    char backend[16], arch[32];
    struct tf_compile_pool *pool;
};

struct worker {
    struct tf_job *job;
    struct tf_bundle *bundle;
    const struct tf_backend *backend;
    int ordinal;
    struct tf_device dev;
    struct tf_compile_pool *pool;
    struct tf_runner *runner;
    struct tf_space ***spaces;   /* [kernel][problem], created on first use */
    char **references;           /* per kernel: compiled reference path, or NULL */
    char **reference_errors;     /* per kernel: why the reference did not compile */
    bool *reference_storage;     /* per kernel: that was the node's full disk */
    struct pending *queue;
    size_t head, len, cap;
    struct tf_result batch[RESULTS_BATCH];
    uint32_t nbatch;
    double last_flush;
    double measure_seconds;      /* recent seconds a measurement takes (moving average;
                                    0: none yet) */
    double compile_seconds;      /* recent seconds a variant compiled here took (moving
                                    average; cache hits left out; 0: none yet) */
    bool compiling_ahead;        /* got a COMPILE slice: its class is done, it only
                                    compiles for others now */
    struct tf_buf buf;
    /* compile rank */
    const char *exe;
    int compile_threads;
    struct served_space served[WORKER_MAX_SERVED];
    int nserved;
    struct served_pool pools[WORKER_MAX_POOLS];
    int npools;
    uint64_t compiled_ahead;
    uint64_t measured_early;     /* measured before a variant queued ahead of it that was
                                    still compiling (worker_pick) */
    /* Configurations sent to the runner and not collected, oldest first
     * (worker_measure_next: the runner holds the next while it measures one). */
    struct in_flight {
        struct pending p;
        struct tf_compiled bin;
        double waited;           /* seconds it waited for its compile */
        double sent;             /* when it was sent (worker_now) */
    } flight[2];
    int nflight;
    uint64_t sent_behind;        /* sent while the runner still measured the one before */
    double last_collected;       /* when the runner's last answer was collected */
    /* replay */
    struct tf_replay *replay;    /* non-NULL: answer from it, compile and run nothing */
    double sim_start, sim_elapsed; /* wall time the worker started; simulated seconds spent */
    struct heartbeat hb;
};

static double worker_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* TUNEFARM_TRACE=PREFIX: each worker writes PREFIX.<pid>.csv, a line per
 * event of its feed, to tell why a device waits: `ask` (a request for work
 * sent), `work` (a slice arrived: n configurations), `measure` (one
 * configuration: how long the worker waited for its compile, then for the
 * runner), `ahead` (a compile rank's configuration built: the wait for it).
 * Each line has the seconds since the worker started, the queue's length and
 * its pool's queued and running compiles. A diagnostic (bench/trace_report.py
 * summarises it); the run never reads it. */
static FILE *worker_trace_file(void)
{
    static FILE *trace;
    static int opened;
    if (!opened) {
        opened = 1;
        const char *prefix = getenv("TUNEFARM_TRACE");
        if (prefix != NULL && prefix[0] != '\0') {
            char path[4200];
            snprintf(path, sizeof path, "%s.%ld.csv", prefix, (long)getpid());
            if ((trace = fopen(path, "we")) != NULL)
                fprintf(trace, "t,event,queue,pool_queued,pool_active,n,wait_s,measure_s\n");
        }
    }
    return trace;
}

static void worker_trace(const struct worker *w, struct tf_compile_pool *pool, const char *event,
                         long n, double wait_s, double measure_s)
{
    static double start;
    FILE *trace = worker_trace_file();
    if (trace == NULL)
        return;
    const double now = worker_now();
    if (start == 0)
        start = now;
    int queued = -1, active = -1;
    if (pool != NULL)
        tf_compile_pool_load(pool, &queued, &active);
    fprintf(trace, "%.4f,%s,%zu,%d,%d,%ld,%.4f,%.4f\n", now - start, event, w->len, queued,
            active, n, wait_s, measure_s);
}

static double worker_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tf_worker_devices(struct tf_device *devs, const char **backend_of, int *ordinal_of, int max,
                      char *why, int why_cap)
{
    int n = 0, used = 0;
    if (why && why_cap > 0)
        why[0] = '\0';
    const bool replay = tf_replay_active() != NULL;
    /* GPUs first: a node's GPU workers matter more than its CPU worker. */
    for (int pass = 0; pass < 2; pass++) {
        for (int b = 0; tf_backends[b] != NULL; b++) {
            const struct tf_backend *be = tf_backends[b];
            bool is_host = strcmp(be->name, "host") == 0;
            if (is_host != (pass == 1))
                continue;
            /* A replay run offers its replay devices only; any other run none of them. */
            if (replay != (be == &tf_backend_replay))
                continue;
            struct tf_error err = {0};
            if (be->probe(&err)) {
                if (why && used < why_cap)
                    used += snprintf(why + used, (size_t)(why_cap - used), "%s: %s\n", be->name,
                                     err.message);
                continue;
            }
            int count = be->device_count();
            for (int o = 0; o < count && n < max; o++) {
                if (be->describe(o, &devs[n], &err)) {
                    if (why && used < why_cap)
                        used += snprintf(why + used, (size_t)(why_cap - used), "%s %d: %s\n",
                                         be->name, o, err.message);
                    continue;
                }
                /* The worker's own version travels with its device: it compiles and
                 * measures, so it belongs to what the device ran with. */
                tf_strlcpy(devs[n].tunefarm_version, tf_version, sizeof devs[n].tunefarm_version);
                backend_of[n] = be->name;
                ordinal_of[n] = o;
                n++;
            }
        }
    }
    return n;
}

/* Send w->buf to the coordinator (under the heartbeat's lock). */
static int worker_send(struct worker *w, struct tf_error *err)
{
    pthread_mutex_lock(&w->hb.mu);
    int rc = tf_wire_send(0, &w->buf, err);
    w->hb.last_sent = worker_now();
    pthread_mutex_unlock(&w->hb.mu);
    return rc;
}

/* A message from the coordinator into w->buf if one is there: 1, 0 if none, -1 + err. */
static int worker_poll(struct worker *w, struct tf_error *err)
{
    pthread_mutex_lock(&w->hb.mu);
    int rc = tf_wire_poll(0, &w->buf, NULL, err);
    pthread_mutex_unlock(&w->hb.mu);
    return rc;
}

/* Wait for a message (tf_wire_recv's naps, 50 us to 2 ms: a blocking receive
 * would spin a core the device ranks measure on). 1, or -1 + err. */
static int worker_recv(struct worker *w, struct tf_error *err)
{
    long nap = 50000;
    for (;;) {
        int rc = worker_poll(w, err);
        if (rc != 0)
            return rc;
        nanosleep(&(struct timespec){0, nap}, NULL);
        if (nap < 2000000)
            nap *= 2;
    }
}

/* Send the batch of results into `b` (w->buf, or the heartbeat's own);
 * the caller holds w->hb.mu. */
static void worker_flush_locked(struct worker *w, struct tf_buf *b)
{
    struct tf_error err;
    if (w->nbatch == 0)
        return;
    tf_wire_results(b, w->batch, w->nbatch);
    if (tf_wire_send(0, b, &err))
        tf_die("%s", err.message); /* the coordinator is gone: nothing left to do */
    w->nbatch = 0;
    w->last_flush = w->hb.last_sent = worker_now();
}

static void worker_flush(struct worker *w)
{
    pthread_mutex_lock(&w->hb.mu);
    worker_flush_locked(w, &w->buf);
    pthread_mutex_unlock(&w->hb.mu);
}

/* Results still to come from this worker (under w->hb.mu). Once the last
 * one is sent it owes nothing and no beat follows, which the coordinator,
 * done with it, would leave unread. */
static bool worker_owes(const struct worker *w)
{
    return w->hb.unanswered > 0 || w->nbatch > 0;
}

/* Every second of silence while results are owed: the results waiting in
 * the batch (the main thread may be minutes into the next configuration),
 * else an empty RESULTS, "alive". */
static void *heartbeat_main(void *arg)
{
    struct worker *w = arg;
    struct heartbeat *hb = &w->hb;
    pthread_mutex_lock(&hb->mu);
    while (!hb->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)HEARTBEAT_INTERVAL;
        pthread_cond_timedwait(&hb->wake, &hb->mu, &until);
        if (hb->stop || !worker_owes(w) || worker_now() - hb->last_sent < HEARTBEAT_INTERVAL)
            continue;
        if (w->nbatch > 0) {
            worker_flush_locked(w, &hb->buf);
            continue;
        }
        struct tf_error err;
        tf_wire_results(&hb->buf, NULL, 0);
        if (tf_wire_send(0, &hb->buf, &err) == 0)
            hb->last_sent = worker_now();
    }
    pthread_mutex_unlock(&hb->mu);
    return NULL;
}

/* Start the heartbeat thread if MPI lets a second thread send, and say so
 * with a first beat: the coordinator then holds this worker to the short
 * bound of a beating one (coordinator.c). */
static void heartbeat_start(struct worker *w)
{
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    w->hb.stop = false;
    w->hb.last_sent = worker_now();
    if (level < MPI_THREAD_SERIALIZED ||
        pthread_create(&w->hb.thread, NULL, heartbeat_main, w) != 0)
        return;
    w->hb.running = true;
    struct tf_error err;
    pthread_mutex_lock(&w->hb.mu);
    tf_wire_results(&w->hb.buf, NULL, 0);
    if (tf_wire_send(0, &w->hb.buf, &err) == 0)
        w->hb.last_sent = worker_now();
    pthread_mutex_unlock(&w->hb.mu);
}

static void heartbeat_stop(struct worker *w)
{
    if (!w->hb.running)
        return;
    pthread_mutex_lock(&w->hb.mu);
    w->hb.stop = true;
    pthread_cond_signal(&w->hb.wake);
    pthread_mutex_unlock(&w->hb.mu);
    pthread_join(w->hb.thread, NULL);
    w->hb.running = false;
}

static void worker_emit(struct worker *w, const struct tf_result *r)
{
    pthread_mutex_lock(&w->hb.mu);
    w->hb.unanswered--;
    w->batch[w->nbatch++] = *r;
    if (w->nbatch == RESULTS_BATCH || worker_now() - w->last_flush >= RESULTS_MAX_DELAY)
        worker_flush_locked(w, &w->buf);
    pthread_mutex_unlock(&w->hb.mu);
}

/* Queue `config` and submit its compile: to `pool` for a compile rank's entry
 * (no measurement follows), else to the worker's own pool. */
static void worker_push(struct worker *w, uint32_t kernel, uint32_t problem, uint32_t phase,
                        uint64_t config, struct tf_compile_pool *pool)
{
    if (w->len == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        struct pending *q = tf_xmalloc(sizeof *q * cap);
        for (size_t i = 0; i < w->len; i++)
            q[i] = w->queue[(w->head + i) % w->cap];
        free(w->queue);
        w->queue = q;
        w->head = 0;
        w->cap = cap;
    }
    struct pending *p = &w->queue[(w->head + w->len++) % w->cap];
    p->kernel = kernel;
    p->problem = problem;
    p->phase = phase;
    p->config = config;
    p->compile_only = pool;
    p->ticket = w->replay ? 0
                          : tf_compile_submit_for(pool ? pool : w->pool,
                                                  w->job->kernels[kernel].kernel, (int)problem,
                                                  config);
    if (pool == NULL) {
        pthread_mutex_lock(&w->hb.mu);
        w->hb.unanswered++;
        pthread_mutex_unlock(&w->hb.mu);
    }
}

/* Expand a slice into queued configurations; their compiles start now. */
static int worker_on_work(struct worker *w, struct tf_error *err)
{
    struct tf_work work;
    if (tf_wire_get_work(&w->buf, &work, err))
        return -1;
    int rc = -1;
    if (work.kernel >= (uint32_t)w->job->nkernels) {
        tf_error_set(err, TF_ERR_MPI, "WORK names kernel %u of %d", work.kernel,
                     w->job->nkernels);
        goto out;
    }
    const struct tf_kernel *k = w->job->kernels[work.kernel].kernel;
    if (work.problem >= (uint32_t)k->nproblems) {
        tf_error_set(err, TF_ERR_MPI, "WORK names problem %u of %d", work.problem, k->nproblems);
        goto out;
    }
    if (work.nlist > 0) {
        for (uint32_t i = 0; i < work.nlist; i++)
            worker_push(w, work.kernel, work.problem, work.phase, work.list[i], NULL);
        worker_trace(w, w->pool, "work", (long)work.nlist, 0, 0);
        rc = 0;
        goto out;
    }
    struct tf_space **slot = &w->spaces[work.kernel][work.problem];
    if (*slot == NULL && (*slot = tf_space_create(k, (int)work.problem, &w->dev, err)) == NULL)
        goto out;
    uint64_t idx = work.lo;
    for (;;) {
        int found = tf_space_next(*slot, idx, work.hi, &idx, err);
        if (found < 0)
            goto out;
        if (found == 0)
            break;
        worker_push(w, work.kernel, work.problem, work.phase, idx, NULL);
        idx++;
    }
    rc = 0;
out:
    free(work.list);
    return rc;
}

/* The compile rank's pool for `dev`'s backend and architecture, created on
 * first use; NULL + err if this node cannot compile for it. */
static struct tf_compile_pool *worker_served_pool(struct worker *w, const struct tf_device *dev,
                                                  struct tf_error *err)
{
    for (int i = 0; i < w->npools; i++)
        if (strcmp(w->pools[i].backend, dev->backend) == 0 &&
            strcmp(w->pools[i].arch, dev->arch) == 0)
            return w->pools[i].pool;
    const struct tf_backend *be = tf_backend_find(dev->backend);
    if (be == NULL) {
        tf_error_set(err, TF_ERR_MPI, "COMPILE for unknown backend '%s'", dev->backend);
        return NULL;
    }
    if (w->npools == WORKER_MAX_POOLS) {
        tf_error_set(err, TF_ERR_MPI, "COMPILE for more than %d architectures", WORKER_MAX_POOLS);
        return NULL;
    }
    struct tf_compile_pool *pool = tf_compile_pool_create(w->exe, be, dev->arch, w->job->cache,
                                                          w->compile_threads, err);
    if (pool == NULL)
        return NULL;
    struct served_pool *sp = &w->pools[w->npools++];
    tf_strlcpy(sp->backend, dev->backend, sizeof sp->backend);
    tf_strlcpy(sp->arch, dev->arch, sizeof sp->arch);
    sp->pool = pool;
    return pool;
}

/* The compile rank's space of (kernel, problem) on a device like `dev`. */
static struct tf_space *worker_served_space(struct worker *w, const struct tf_device *dev,
                                            uint32_t kernel, uint32_t problem,
                                            struct tf_error *err)
{
    for (int i = 0; i < w->nserved; i++) {
        struct served_space *s = &w->served[i];
        if (s->kernel == kernel && s->problem == problem &&
            memcmp(&s->dev, dev, sizeof *dev) == 0)
            return s->space;
    }
    if (w->nserved == WORKER_MAX_SERVED) { /* forget the oldest */
        tf_space_destroy(w->served[0].space);
        memmove(w->served, w->served + 1, sizeof w->served[0] * (WORKER_MAX_SERVED - 1));
        w->nserved--;
    }
    struct tf_space *space =
        tf_space_create(w->job->kernels[kernel].kernel, (int)problem, dev, err);
    if (space == NULL)
        return NULL;
    w->served[w->nserved++] = (struct served_space){*dev, kernel, problem, space};
    return space;
}

/* COMPILE: queue a slice of another class's configurations for compiling only. */
static int worker_on_compile(struct worker *w, struct tf_error *err)
{
    struct tf_device dev;
    struct tf_work work;
    if (tf_wire_get_compile(&w->buf, &dev, &work, err))
        return -1;
    w->compiling_ahead = true;
    int rc = -1;
    if (work.kernel >= (uint32_t)w->job->nkernels ||
        work.problem >= (uint32_t)w->job->kernels[work.kernel].kernel->nproblems) {
        tf_error_set(err, TF_ERR_MPI, "COMPILE names kernel %u problem %u", work.kernel,
                     work.problem);
        goto out;
    }
    struct tf_compile_pool *pool = worker_served_pool(w, &dev, err);
    if (pool == NULL) {
        /* Compiling ahead is a help, not a duty: the device ranks compile what
         * this rank cannot. Say so, drop the slice, keep serving. */
        fprintf(stderr, "tunefarm: compile rank: cannot compile for %s %s, slice skipped: %s\n",
                dev.backend, dev.arch, err->message);
        rc = 0;
        goto out;
    }
    if (work.nlist > 0) {
        for (uint32_t i = 0; i < work.nlist; i++)
            worker_push(w, work.kernel, work.problem, 0, work.list[i], pool);
        worker_trace(w, pool, "compile", (long)work.nlist, 0, 0);
        rc = 0;
        goto out;
    }
    struct tf_space *space = worker_served_space(w, &dev, work.kernel, work.problem, err);
    if (space == NULL)
        goto out;
    for (uint64_t idx = work.lo;; idx++) {
        int found = tf_space_next(space, idx, work.hi, &idx, err);
        if (found < 0)
            goto out;
        if (found == 0)
            break;
        worker_push(w, work.kernel, work.problem, 0, idx, pool);
    }
    rc = 0;
out:
    free(work.list);
    return rc;
}

static const char *worker_reference(struct worker *w, uint32_t kernel)
{
    if (w->references[kernel] == NULL && w->reference_errors[kernel] == NULL) {
        char path[PATH_MAX];
        struct tf_error err = {0};
        if (tf_compile_reference(w->pool, w->job->kernels[kernel].kernel, path, sizeof path,
                                 &err) == 0) {
            w->references[kernel] = tf_xstrdup(path);
        } else {
            w->reference_errors[kernel] = tf_xstrdup(err.message);
            w->reference_storage[kernel] = err.code == TF_ERR_IO; /* the node's full disk */
        }
    }
    return w->references[kernel];
}

/* Fold `x` into the moving average *avg (0: none yet, *avg becomes x). */
static void worker_average(double *avg, double x)
{
    *avg = *avg > 0 ? 0.9 * *avg + 0.1 * x : x;
}

/* How far past the head worker_pick looks for a compiled variant. The pool
 * compiles in queue order with one process per CPU, so what can be done
 * early lies within a few pools' width of the head. */
#define PICK_WINDOW 64

/* The queue position to measure next: the head, unless its variant is still
 * compiling; then the first of the next PICK_WINDOW entries of the head's
 * kernel and problem (set up in the runner already: no new set-up) whose
 * variant is done, waiting for whichever finishes first. Compile times
 * differ by several times from variant to variant, so a GPU that waited for
 * the head's compile idled while later ones were ready (sgemm 4096^3 with
 * `local` on an H200: 2.3 ms of 34 per configuration). Results may arrive in
 * any order (DESIGN.md, and every strategy is told them so). Without `block`,
 * -1 where none of them is done yet. */
static long worker_pick(struct worker *w, int block)
{
    const struct pending *head = &w->queue[w->head];
    uint64_t tickets[PICK_WINDOW];
    size_t where[PICK_WINDOW];
    int n = 0;
    for (size_t i = 0; i < w->len && i < PICK_WINDOW; i++) {
        const struct pending *q = &w->queue[(w->head + i) % w->cap];
        if (q->compile_only || q->kernel != head->kernel || q->problem != head->problem)
            continue;
        tickets[n] = q->ticket;
        where[n++] = i;
    }
    const int got = block ? tf_compile_wait_any(w->pool, tickets, n)
                          : tf_compile_ready_any(w->pool, tickets, n);
    if (got < 0)
        return -1;
    if (where[got] > 0)
        w->measured_early++;
    return (long)where[got];
}

/* Take the entry `at` places past the head out of the queue. */
static struct pending worker_take(struct worker *w, size_t at)
{
    struct pending p = w->queue[(w->head + at) % w->cap];
    for (size_t i = at; i > 0; i--) /* the ones before it move up, in order */
        w->queue[(w->head + i) % w->cap] = w->queue[(w->head + i - 1) % w->cap];
    w->head = (w->head + 1) % w->cap;
    w->len--;
    return p;
}

/* A compile rank's entry: compiled into the shared cache for another class. */
static void worker_ahead_done(struct worker *w, struct pending p)
{
    struct tf_compiled bin;
    const double waited = worker_now();
    tf_compile_wait(p.compile_only, p.ticket, &bin);
    w->compiled_ahead++;
    worker_trace(w, p.compile_only, "ahead", 1, worker_now() - waited, 0);
}

/* A replayed configuration: answered from the replay's source. */
static void worker_replay_next(struct worker *w, struct pending p)
{
    struct tf_result r;
    double cost;
    tf_replay_answer(w->replay, p.kernel, p.problem, p.config, &r, &cost);
    r.phase = (uint8_t)p.phase;
    w->sim_elapsed += cost;
    double speed = tf_replay_speed();
    if (speed > 0) { /* the simulated clock, scaled: wait until it is due */
        double due = w->sim_start + w->sim_elapsed / speed, now = worker_wall();
        if (due > now) {
            /* At most REPLAY_MAX_WAIT for one configuration (the clock then
             * runs ahead of the wall; a recorded time of 1e300 s would
             * not fit a time_t); interrupted sleeps go on, failed ones end. */
            double s = due - now < REPLAY_MAX_WAIT ? due - now : REPLAY_MAX_WAIT;
            struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
        }
    }
    r.timestamp = w->sim_start + w->sim_elapsed;
    worker_emit(w, &r);
    /* On a simulated clock, at once: the strategy hears results in
     * simulated-time order. Instant answers go in batches like measured
     * ones (one message per result held the coordinator to it). */
    if (speed > 0)
        worker_flush(w);
}

/* Fill the compile side of `r`, the result of `p` compiled as `bin` after
 * `waited` seconds for it and `measured` seconds of measuring, and emit it. */
static void worker_finish(struct worker *w, struct pending p, const struct tf_compiled *bin,
                          struct tf_result *r, double waited, double measured)
{
    worker_trace(w, w->pool, "measure", 1, waited, measured);
    r->kernel = p.kernel;
    r->problem = p.problem;
    r->phase = (uint8_t)p.phase;
    r->config = p.config;
    r->compile_time = bin->compile_time;
    if (bin->compile_time > 0) /* cache hits say nothing of a compile's time */
        worker_average(&w->compile_seconds, bin->compile_time);
    /* What the runner read off the loaded binary first; the compiler's report
     * (ptxas: the same registers and spills) where it read nothing. Shared
     * memory only from the runner: it adds the launch's dynamic shared memory
     * to the static amount, which is all the compiler knows. */
    if (r->registers < 0)
        r->registers = bin->registers;
    if (r->spill_bytes < 0)
        r->spill_bytes = bin->spill_bytes;
    r->warnings = bin->status == TF_STATUS_OK ? bin->warnings : -1;
    tf_strlcpy(r->first_warning, bin->status == TF_STATUS_OK ? bin->first_warning : "",
               sizeof r->first_warning);
    if (r->timestamp == 0)
        r->timestamp = worker_wall();
    worker_emit(w, r);
}

/* Start measuring `p`, whose variant is compiled (its ticket done), after
 * `waited` seconds for it: sent to the runner (set up for its problem, or
 * `setup` says why not; NULL: set up already; `ref` is its kernel's
 * reference, NULL if it did not compile), or answered at once where the
 * runner need not see it. */
static int worker_start(struct worker *w, struct pending p, const char *ref,
                        const struct tf_result *setup, double waited, struct tf_error *err)
{
    struct tf_compiled bin;
    struct tf_result r;
    tf_compile_wait(w->pool, p.ticket, &bin); /* (done: at once) */
    if (bin.status != TF_STATUS_OK && bin.storage_trouble) {
        /* A full disk is the node's, not the variant's: archived as a
         * compile_error it ended the run "finished" with every configuration
         * failed and exit 0, and a rerun never measured them. Ending the run
         * instead keeps it unfinished: the journal holds what was measured,
         * and the same command resumes with this configuration. */
        return tf_error_set(err, TF_ERR_IO,
                            "cannot compile kernel '%s' (configuration %llu): %s. Nothing of it "
                            "was recorded: free space (the compile cache '%s', TMPDIR) or raise "
                            "the file size limit, then run the same command again to resume",
                            w->job->kernels[p.kernel].kernel->name,
                            (unsigned long long)p.config, bin.message, w->job->cache);
    }
    if (bin.status == TF_STATUS_OK && ref == NULL && w->reference_storage[p.kernel])
        return tf_error_set(err, TF_ERR_IO,
                            "%s. Nothing of kernel '%s' was recorded: free space (the compile "
                            "cache '%s', TMPDIR) or raise the file size limit, then run the "
                            "same command again to resume",
                            w->reference_errors[p.kernel], w->job->kernels[p.kernel].kernel->name,
                            w->job->cache);
    if (bin.status != TF_STATUS_OK) {
        tf_result_init(&r, p.kernel, p.problem, p.config, TF_STATUS_COMPILE_ERROR);
        tf_strlcpy(r.message, bin.message, sizeof r.message);
    } else if (ref == NULL) {
        tf_result_init(&r, p.kernel, p.problem, p.config, TF_STATUS_LAUNCH_ERROR);
        snprintf(r.message, sizeof r.message, "reference did not compile: %s",
                 w->reference_errors[p.kernel]);
    } else if (setup != NULL && setup->status != TF_STATUS_OK) {
        r = *setup; /* the problem cannot be set up: this configuration's result says why */
    } else {
        if (w->nflight > 0)
            w->sent_behind++;
        struct in_flight *f = &w->flight[w->nflight++];
        *f = (struct in_flight){.p = p, .bin = bin, .waited = waited, .sent = worker_now()};
        if (tf_runner_send(w->runner, p.kernel, p.problem, p.phase, p.config, bin.binary_path,
                           ref, &r, err) == 0)
            return 0;
        w->nflight--;
        return -1;
    }
    worker_finish(w, p, &bin, &r, waited, 0);
    return 0;
}

/* Collect the runner's answer for the oldest configuration in flight. */
static int worker_collect(struct worker *w, struct tf_error *err)
{
    struct tf_result r;
    const int rc = tf_runner_collect(w->runner, &r, err);
    const struct in_flight f = w->flight[0];
    w->flight[0] = w->flight[1];
    w->nflight--;
    if (rc != 0)
        return -1;
    /* Its measuring began when it was sent, or when the one ahead was answered. */
    const double now = worker_now(), began = fmax(f.sent, w->last_collected);
    w->last_collected = now;
    worker_average(&w->measure_seconds, now - began);
    worker_finish(w, f.p, &f.bin, &r, f.waited, now - began);
    return 0;
}

/* Compile-wait and measure the next configuration of the queue (worker_pick).
 * With one in flight, the next one of the same problem whose variant is
 * compiled already is sent behind it (the runner starts it as soon as it has
 * answered: runner.c, "two requests in flight"), then the first collected;
 * a variant still compiling is not waited for then, so as not to hold up the
 * answer in hand (the next call waits for it with nothing in flight). */
static int worker_measure_next(struct worker *w, struct tf_error *err)
{
    struct pending p = w->queue[w->head];
    if (w->nflight > 0) {
        const char *ref = p.compile_only || w->replay ? NULL : worker_reference(w, p.kernel);
        if (ref != NULL && tf_runner_can_send(w->runner, p.kernel, p.problem, ref)) {
            const long at = worker_pick(w, 0);
            if (at >= 0 && worker_start(w, worker_take(w, (size_t)at), ref, NULL, 0, err))
                return -1;
        }
        return worker_collect(w, err);
    }
    if (p.compile_only || w->replay) {
        worker_take(w, 0);
        if (p.compile_only)
            worker_ahead_done(w, p);
        else
            worker_replay_next(w, p);
        return 0;
    }
    /* A new problem's buffers and reference (seconds, for a large GEMM) are
     * set up while the pool still compiles its variants. */
    const char *ref = worker_reference(w, p.kernel);
    struct tf_result setup;
    tf_result_init(&setup, p.kernel, p.problem, p.config, TF_STATUS_OK);
    if (ref && tf_runner_prepare(w->runner, p.kernel, p.problem, p.config, ref, &setup, err))
        return -1;
    const double waited = worker_now();
    p = worker_take(w, (size_t)worker_pick(w, 1));
    const double picked = worker_now();
    return worker_start(w, p, ref, &setup, picked - waited, err);
}

/* When a device worker asks for more, its queue should still cover the
 * compile of the next slice's first variants, which wait behind what the pool
 * still holds: QUEUE_AHEAD_COMPILES times a variant's recent compile time, in
 * measurements, at most QUEUE_AHEAD_SECONDS of them. With only a pool's worth
 * queued, an adaptive search's GPU waited at every slice for its first
 * compiles (its proposals cannot be compiled before they are made): sgemm
 * 4096^3, genetic, one H200, 91 s and 46% duty; a cover of 2 compile times
 * (0.8 s) gave 74 s, of 2 s 64 s, of 5 compile times 58-60 s
 * (bench/results/search-duty-2026-11-27-h200.md).
 * Tied to the compile time, not a fixed span, so that a fast kernel whose
 * variants come from the cache (or compile in milliseconds) does not take its
 * whole search up front, leaving an adaptive strategy, its patience and the
 * time budget nothing to decide (tests/faults 70-search). */
#define QUEUE_AHEAD_COMPILES 5.0
#define QUEUE_AHEAD_SECONDS 2.0

/* How short the queue gets before the worker asks for more: `low_water`, or
 * the compile cover above if that is more. */
static size_t worker_low_water(const struct worker *w, int low_water)
{
    size_t water = low_water > 0 ? (size_t)low_water : 0;
    if (w->measure_seconds > 0 && w->compile_seconds > 0 && !w->compiling_ahead) {
        const double cover =
            fmin(QUEUE_AHEAD_COMPILES * w->compile_seconds, QUEUE_AHEAD_SECONDS);
        const double ahead = ceil(cover / w->measure_seconds);
        if (ahead > (double)water)
            water = ahead < 1e6 ? (size_t)ahead : 1000000;
    }
    return water;
}

static int worker_serve(struct worker *w, int low_water, struct tf_error *err)
{
    bool stopped = false, requested = false;
    for (;;) {
        if (!stopped && !requested && w->len <= worker_low_water(w, low_water)) {
            tf_wire_request(&w->buf);
            if (worker_send(w, err))
                return -1;
            requested = true;
            worker_trace(w, w->pool, "ask", 0, 0, 0);
        }
        int rc;
        if (w->len == 0 && w->nflight == 0 && !stopped) {
            worker_flush(w);
            rc = worker_recv(w, err);
        } else {
            rc = worker_poll(w, err);
        }
        if (rc < 0)
            return -1;
        if (rc > 0) {
            enum tf_msg_type type;
            if (tf_wire_open(&w->buf, &type, err))
                return -1;
            if (type == TF_MSG_WORK) {
                if (worker_on_work(w, err))
                    return -1;
                requested = false;
            } else if (type == TF_MSG_COMPILE) {
                if (worker_on_compile(w, err))
                    return -1;
                requested = false;
            } else if (type == TF_MSG_STOP) {
                stopped = true;
            } else {
                return tf_error_set(err, TF_ERR_MPI, "unexpected message type %d from rank 0",
                                    type);
            }
            continue;
        }
        if (w->len > 0) {
            if (worker_measure_next(w, err))
                return -1;
        } else if (w->nflight > 0) {
            if (worker_collect(w, err))
                return -1;
        } else if (stopped) {
            worker_flush(w);
            return 0;
        }
        pthread_mutex_lock(&w->hb.mu);
        const bool due = worker_now() - w->last_flush >= RESULTS_MAX_DELAY;
        pthread_mutex_unlock(&w->hb.mu);
        if (due)
            worker_flush(w);
    }
}

/* Pull and serve until STOP (0), or -1 + err; the heartbeat beats meanwhile. */
static int worker_loop(struct worker *w, int low_water, struct tf_error *err)
{
    w->last_flush = worker_now();
    heartbeat_start(w);
    const int rc = worker_serve(w, low_water, err);
    heartbeat_stop(w);
    return rc;
}

static void worker_destroy(struct worker *w)
{
    tf_runner_destroy(w->runner);
    tf_compile_pool_destroy(w->pool);
    for (int i = 0; i < w->npools; i++)
        tf_compile_pool_destroy(w->pools[i].pool);
    for (int i = 0; i < w->nserved; i++)
        tf_space_destroy(w->served[i].space);
    if (w->job) {
        for (int i = 0; i < w->job->nkernels; i++) {
            for (int p = 0; w->spaces && p < w->job->kernels[i].kernel->nproblems; p++)
                tf_space_destroy(w->spaces[i][p]);
            if (w->spaces)
                free(w->spaces[i]);
            if (w->references)
                free(w->references[i]);
            if (w->reference_errors)
                free(w->reference_errors[i]);
        }
    }
    free(w->spaces);
    free(w->references);
    free(w->reference_errors);
    free(w->reference_storage);
    free(w->queue);
    tf_job_destroy(w->job);
    tf_bundle_destroy(w->bundle);
    tf_buf_free(&w->buf);
    tf_buf_free(&w->hb.buf);
    pthread_cond_destroy(&w->hb.wake);
    pthread_mutex_destroy(&w->hb.mu);
}

/* The cpuset of the cores nearest PCI device `bus` ("0000:17:00.0"): hwloc's PCI
 * objects where the topology has them, else the kernel's local_cpulist. */
static int worker_near_cpuset(hwloc_topology_t topo, const char *bus, hwloc_bitmap_t set)
{
    hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topo, bus);
    hwloc_obj_t near = pci ? hwloc_get_non_io_ancestor_obj(topo, pci) : NULL;
    if (near && near->cpuset) {
        hwloc_bitmap_copy(set, near->cpuset);
        return 0;
    }
    char path[256], list[4096];
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/local_cpulist", bus);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int ok = fgets(list, sizeof list, f) != NULL;
    fclose(f);
    return ok && hwloc_bitmap_list_sscanf(set, list) == 0 && !hwloc_bitmap_iszero(set) ? 0 : -1;
}

/* Bind this process (and so the runner and compilers it starts) to the cores
 * nearest its GPU, and return how many cores that is (0 if unknown or host). */
static int worker_bind_near_device(hwloc_topology_t topo, const struct tf_device *dev)
{
    if (topo == NULL || dev->pci_bus[0] == '\0')
        return 0;
    int cores = 0;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (worker_near_cpuset(topo, dev->pci_bus, set) == 0) {
        hwloc_bitmap_and(set, set, hwloc_topology_get_allowed_cpuset(topo));
        cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, set, HWLOC_OBJ_CORE);
        if (cores > 0 && hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0)
            fprintf(stderr, "tunefarm: worker: cannot bind to the cores near %s (%s); "
                            "running unbound\n", dev->pci_bus, strerror(errno));
    }
    hwloc_bitmap_free(set);
    return cores;
}

/* The node's topology with its PCI devices (to find a GPU's cores), loaded;
 * NULL where hwloc cannot (workers then run unbound, shares unnarrowed). The
 * caller destroys it. */
static hwloc_topology_t worker_topology_load(void)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return NULL;
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return NULL;
    }
    return topo;
}

/* The backends this node can compile for, "host,cuda" (for HELLO). */
static void worker_compilers(char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int b = 0; tf_backends[b] != NULL; b++) {
        struct tf_error err = {0};
        const struct tf_backend *be = tf_backends[b];
        if (be->compiler_probe == NULL || be->compiler_probe(&err) != 0)
            continue;
        int n = snprintf(out + used, cap - used, "%s%s", used ? "," : "", be->name);
        if (n < 0 || (size_t)n >= cap - used) {
            out[used] = '\0';
            return;
        }
        used += (size_t)n;
    }
}

/* Announce "no device" with the reason, then wait for STOP. */
static int worker_decline(struct worker *w, const char *why)
{
    struct tf_device none = {0};
    struct tf_error err;
    tf_strlcpy(none.name, why, sizeof none.name);
    tf_wire_hello(&w->buf, &none, "");
    if (tf_wire_send(0, &w->buf, &err))
        return 1;
    enum tf_msg_type type;
    while (tf_wire_recv(0, &w->buf, NULL, &err) == 0 && tf_wire_open(&w->buf, &type, &err) == 0 &&
           type != TF_MSG_STOP)
        ;
    return 0;
}

/* The CPUs this process may run on: its affinity mask, which taskset, a
 * cgroup cpuset, srun's --cpu-bind or mpirun's binding narrow (the node's
 * online count, used before, ignores them: a compile rank allowed one of
 * this machine's two CPUs sized its pools for two). */
static int worker_allowed_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int tf_worker_cpu_share(const unsigned char *masks, size_t mask_bytes, const int *pools, int n,
                        int me)
{
    const unsigned char *mine = masks + (size_t)me * mask_bytes;
    double share = 0.0;
    for (size_t cpu = 0; cpu < mask_bytes * 8; cpu++) {
        const unsigned char bit = (unsigned char)(1u << (cpu % 8));
        if (!(mine[cpu / 8] & bit))
            continue;
        int own = 0, helpers = 0;
        for (int r = 0; r < n; r++) {
            const bool holds = (masks[(size_t)r * mask_bytes + cpu / 8] & bit) != 0;
            own += holds && pools[r] == TF_POOL_OWN;
            helpers += holds && pools[r] == TF_POOL_HELPER;
        }
        if (pools[me] == TF_POOL_HELPER)
            share += own > 0 ? 0.0 : 1.0 / helpers;
        else
            share += 1.0 / (own > 0 ? own : 1);
    }
    const int rounded = (int)(share + 0.5);
    return rounded > 0 || pools[me] == TF_POOL_HELPER ? rounded : 1;
}

void tf_worker_node_pools(const struct tf_worker_node *node, const struct tf_job *job,
                          const struct tf_device *devs, int ndev, int *pools)
{
    for (int i = 0; i < node->n; i++) {
        pools[i] = node->role[i] == TF_NODE_NONE ? TF_POOL_NONE : TF_POOL_OWN;
        if (node->role[i] != TF_NODE_DEVICE || devs == NULL || ndev <= 0)
            continue;
        /* Every worker of a node lists the same devices (unless its launcher
         * hides some from it: then this guess only sizes pools less well). */
        const struct tf_device *d = &devs[node->device_index[i] % ndev];
        char key[256];
        tf_device_class_key(d, key, sizeof key);
        if (!tf_job_targets_device(job, d->backend, key))
            pools[i] = TF_POOL_HELPER;
    }
}

/* The node's masks as its ranks will run: main.c gathered them before each
 * GPU worker binds itself to the cores near its GPU (worker_bind_near_device),
 * so a GPU worker's mask is narrowed here the same way, where that leaves it
 * any CPU. Else a helper on a two-socket node would count the GPU worker on
 * both sockets and leave the far one idle. Returns a malloc'd copy. */
static unsigned char *worker_bound_masks(const struct tf_worker_node *node, hwloc_topology_t topo,
                                         const struct tf_device *devs, int ndev)
{
    const size_t bytes = (size_t)node->n * node->mask_bytes;
    unsigned char *masks = tf_xmalloc(bytes);
    memcpy(masks, node->masks, bytes);
    if (topo == NULL || devs == NULL || ndev <= 0)
        return masks;
    hwloc_bitmap_t near = hwloc_bitmap_alloc();
    for (int i = 0; i < node->n; i++) {
        if (node->role[i] != TF_NODE_DEVICE)
            continue;
        const struct tf_device *d = &devs[node->device_index[i] % ndev];
        if (d->pci_bus[0] == '\0' || worker_near_cpuset(topo, d->pci_bus, near) != 0)
            continue;
        unsigned char *mask = masks + (size_t)i * node->mask_bytes;
        int left = 0;
        for (size_t cpu = 0; cpu < node->mask_bytes * 8; cpu++)
            left += (mask[cpu / 8] >> (cpu % 8) & 1) && hwloc_bitmap_isset(near, (unsigned)cpu);
        for (size_t cpu = 0; left > 0 && cpu < node->mask_bytes * 8; cpu++)
            if (!hwloc_bitmap_isset(near, (unsigned)cpu))
                mask[cpu / 8] &= (unsigned char)~(1u << (cpu % 8));
    }
    hwloc_bitmap_free(near);
    return masks;
}

/* This rank's share of its node's CPUs for compiling (tf_worker_cpu_share);
 * -1 where nothing is known of the node (every allowed CPU is its own). */
static int worker_node_share(const struct tf_worker_node *node, const struct tf_job *job,
                             hwloc_topology_t topo, const struct tf_device *devs, int ndev)
{
    if (node == NULL || node->n <= 0 || node->masks == NULL)
        return -1;
    int *pools = tf_xcalloc((size_t)node->n, sizeof *pools);
    tf_worker_node_pools(node, job, devs, ndev, pools);
    unsigned char *masks = worker_bound_masks(node, topo, devs, ndev);
    const int share = tf_worker_cpu_share(masks, node->mask_bytes, pools, node->n, node->me);
    free(masks);
    free(pools);
    return share;
}

int tf_worker_run(const char *exe, const struct tf_worker_node *node)
{
    struct worker w = {0};
    struct tf_error err = {0};
    enum tf_msg_type type;
    int code = 1;
    char compilers[128];
    const int local_index = node ? node->device_index[node->me] : 0;
    const int compile_rank = node && node->role[node->me] == TF_NODE_COMPILE;
    const int allowed = worker_allowed_cpus();
    /* The CPUs this rank's pool may fill: its share of the node when other
     * ranks' pools may use the same CPUs (mpirun --bind-to none: a GPU worker
     * and a compile rank each sized to all 64 CPUs of a node put 128
     * compilers on them), else all it is allowed. The share needs the job
     * (which devices it targets), so it is known once the job is here. */
    int cores = allowed;
    w.exe = exe;
    pthread_mutex_init(&w.hb.mu, NULL);
    pthread_cond_init(&w.hb.wake, NULL);
    if (tf_wire_bcast(&w.buf, &err) || tf_wire_open(&w.buf, &type, &err))
        goto fail;
    if (type == TF_MSG_STOP) { /* the coordinator rejected the job: it said why */
        worker_destroy(&w);
        return 0;
    }
    w.bundle = tf_wire_get_job(&w.buf, &err);
    if (w.bundle != NULL && w.bundle->count < 1)
        tf_error_set(&err, TF_ERR_MPI, "JOB message carries no files");
    if (w.bundle == NULL || w.bundle->count < 1 ||
        (w.job = tf_job_load(w.bundle->files[0].path, w.bundle, &err)) == NULL) {
        code = worker_decline(&w, err.message);
        worker_destroy(&w);
        return code;
    }

    w.spaces = tf_xcalloc((size_t)w.job->nkernels, sizeof *w.spaces);
    w.references = tf_xcalloc((size_t)w.job->nkernels, sizeof *w.references);
    w.reference_errors = tf_xcalloc((size_t)w.job->nkernels, sizeof *w.reference_errors);
    w.reference_storage = tf_xcalloc((size_t)w.job->nkernels, sizeof *w.reference_storage);
    for (int i = 0; i < w.job->nkernels; i++)
        w.spaces[i] = tf_xcalloc((size_t)w.job->kernels[i].kernel->nproblems, sizeof **w.spaces);
    worker_compilers(compilers, sizeof compilers);

    if (compile_rank) { /* no device: every core compiles for the device ranks */
        const int share = worker_node_share(node, w.job, NULL, NULL, 0);
        if (share > 0 && share < allowed)
            cores = share;
        if (compilers[0] == '\0') {
            code = worker_decline(&w, "compile rank without a compiler (see `tunefarm devices`)");
            worker_destroy(&w);
            return code;
        }
        w.compile_threads = w.job->compile_jobs > 0 ? w.job->compile_jobs : cores;
        /* No device (backend ""), but where it can compile host code it
         * describes its CPU and C compiler: the coordinator then gives it
         * host work of workers on other nodes whose CPU and compiler are the
         * same (their cache keys are the same: backend_host.c). */
        struct tf_device none = {0};
        struct tf_error herr = {0};
        if (strstr(compilers, "host") == NULL || tf_backend_host.describe(0, &none, &herr) != 0) {
            memset(&none, 0, sizeof none);
            tf_strlcpy(none.name, "compile rank", sizeof none.name);
        }
        none.backend[0] = '\0';
        gethostname(none.host, sizeof none.host - 1);
        tf_wire_hello(&w.buf, &none, compilers);
        if (tf_wire_send(0, &w.buf, &err) || worker_loop(&w, w.compile_threads, &err))
            goto fail;
        /* Its pools' own counts: what it compiled and what it found in the
         * cache (compiled by a device rank or another compile rank, maybe on
         * another node of a shared cache): tests/slurm/scale.sh adds them up
         * against the cache to show no variant was compiled twice. */
        struct tf_compile_stats total = {0};
        for (int i = 0; i < w.npools; i++) {
            struct tf_compile_stats st;
            tf_compile_get_stats(w.pools[i].pool, &st);
            total.compiled += st.compiled;
            total.cached += st.cached;
        }
        fprintf(stderr, "tunefarm: compile rank on %s: %llu configurations compiled ahead "
                        "(%llu compiled here, %llu found in the cache; pools of %d compiler "
                        "processes; %d CPUs allowed%s)\n",
                none.host, (unsigned long long)w.compiled_ahead,
                (unsigned long long)total.compiled, (unsigned long long)total.cached,
                w.compile_threads, allowed,
                cores < allowed ? ", shared with the node's other pools" : "");
        worker_destroy(&w);
        return 0;
    }

    if (tf_replay_active() != NULL) {
        /* Each replay worker is a simulated device of its own, replay-N after
         * its index among the node's workers: no device to share, no limit. */
        w.replay = tf_replay_active();
        tf_replay_device(w.replay, local_index, &w.dev);
        w.backend = &tf_backend_replay;
        w.ordinal = local_index;
        w.sim_start = worker_wall();
        tf_wire_hello(&w.buf, &w.dev, ""); /* compiles for no one */
        /* Few configurations ahead: a strategy's asks stay fine-grained. */
        if (tf_wire_send(0, &w.buf, &err) || worker_loop(&w, 1, &err))
            goto fail;
        worker_destroy(&w);
        return 0;
    }
    struct tf_device devs[WORKER_MAX_DEVICES];
    const char *backend_of[WORKER_MAX_DEVICES];
    int ordinal_of[WORKER_MAX_DEVICES];
    char why[1024];
    int n = tf_worker_devices(devs, backend_of, ordinal_of, WORKER_MAX_DEVICES, why, sizeof why);
    if (n == 0) {
        code = worker_decline(&w, why);
        worker_destroy(&w);
        return code;
    }
    int pick = local_index % n;
    if (local_index >= n)
        fprintf(stderr, "tunefarm: worker %d shares %s %d (%s) with another worker on this "
                        "node: their timings will disturb each other (start one worker per "
                        "device)\n", local_index, backend_of[pick], ordinal_of[pick],
                devs[pick].name);
    w.dev = devs[pick];
    w.backend = tf_backend_find(backend_of[pick]);
    w.ordinal = ordinal_of[pick];
    /* Loaded once, for the shares and the binding, and only where a GPU has cores near it. */
    int gpus = 0;
    for (int i = 0; i < n; i++)
        gpus += devs[i].pci_bus[0] != '\0';
    hwloc_topology_t topo = gpus > 0 ? worker_topology_load() : NULL;
    const int share = worker_node_share(node, w.job, topo, devs, n);
    if (share >= 0 && share < allowed)
        cores = share;
    if (share == 0) /* a helper beside measuring pools: it compiles nothing */
        compilers[0] = '\0';

    /* A GPU worker compiles on the cores nearest its GPU; the host worker
     * measures on a core, so it leaves that one to the runner. */
    int near = worker_bind_near_device(topo, &w.dev);
    if (topo)
        hwloc_topology_destroy(topo);
    int threads = w.job->compile_jobs > 0 ? w.job->compile_jobs
                  : near > 0              ? (near < cores ? near : cores)
                                          : (cores > 2 ? cores - 1 : 1);
    if (share == 0 || threads < 1) /* a helper that compiles nothing: a pool that starts none */
        threads = 1;
    if (getenv("TUNEFARM_PROFILE") != NULL)
        fprintf(stderr, "tunefarm profile: worker %d (%s %s): a pool of %d compiler processes; "
                        "%d CPUs allowed%s%s\n", local_index, w.dev.backend, w.dev.name, threads,
                near > 0 ? near : allowed, near > 0 ? " (near its device, bound)" : "",
                share == 0  ? " (the job does not target it, and measuring pools hold its CPUs: "
                              "it compiles nothing)"
                : cores < allowed ? " (its share of the node's CPUs)"
                                  : "");
    w.pool = tf_compile_pool_create(exe, w.backend, w.dev.arch, w.job->cache, threads, &err);
    if (w.pool == NULL || tf_runner_start(exe, w.bundle, w.backend->name, w.ordinal, &w.runner, &err)) {
        char msg[sizeof err.message + 64];
        snprintf(msg, sizeof msg, "%s device %d unusable: %s", w.backend->name, w.ordinal,
                 err.message);
        code = worker_decline(&w, msg);
        worker_destroy(&w);
        return code;
    }
    w.compile_threads = threads;
    tf_wire_hello(&w.buf, &w.dev, compilers);
    if (tf_wire_send(0, &w.buf, &err) || worker_loop(&w, threads > 2 ? threads : 2, &err))
        goto fail;
    if (getenv("TUNEFARM_PROFILE") != NULL) { /* its own pool: compiled here, or found cached */
        struct tf_compile_stats st;
        tf_compile_get_stats(w.pool, &st);
        fprintf(stderr, "tunefarm profile: worker %d on %s: %llu variants compiled here, %llu "
                        "found in the cache; %llu measured while one queued before them was "
                        "still compiling; %llu sent to the runner while it measured the one "
                        "before\n", local_index, w.dev.host,
                (unsigned long long)st.compiled, (unsigned long long)st.cached,
                (unsigned long long)w.measured_early, (unsigned long long)w.sent_behind);
    }
    worker_destroy(&w);
    return 0;
fail:
    tf_error_print(&err, "tunefarm: worker", stderr);
    worker_destroy(&w);
    return code;
}
