/* coordinator.c - rank 0 of a tuning run.
 *
 * It loads and validates the job (nothing is sent or written if that fails),
 * checks the archive it will extend, broadcasts the job bundle, collects each
 * worker's HELLO, groups devices into classes (backend/arch/name) and plans one
 * task per kernel x problem x class. Then it serves a pull loop: a worker's
 * REQUEST gets a slice sized from that worker's observed rate and what is left
 * for its class; RESULTS are checked, given their derived metrics and appended
 * to the in-memory archive, which is rewritten atomically every `checkpoint`
 * seconds and at the end. A worker gets STOP when its class has nothing left;
 * the run ends when every worker has stopped and delivered every result it
 * owed. The loop polls and naps instead of blocking so it never competes for
 * the cores the workers measure on. */
#include "coordinator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "../schema/archive.h"
#include "../schema/job.h"
#include "../schema/wire.h"
#include "plan.h"
#include "progress.h"
#include "report.h"

#ifndef TF_VERSION
#define TF_VERSION "0.1"
#endif

/* Seconds of work a slice should hold once a worker's rate is known. */
#define SLICE_TARGET_SECONDS 4.0
#define SLICE_FIRST 4

struct worker_state {
    struct tf_device dev;
    bool has_device;
    int klass;              /* -1: not used by this job */
    uint32_t device_id;     /* row in the archive's /devices */
    bool stopped;           /* STOP sent */
    bool finished;          /* stopped and owes no results */
    uint64_t outstanding;   /* configurations dispatched, results not yet received */
    uint64_t received;
    double first_work;      /* when its first slice went out */
    double measured_seconds; /* device time running variants (duty-cycle numerator) */
    bool parked;            /* asked for work while its class waits for a screening pass */
    char compilers[128];    /* backends it can compile for ("host,cuda"), from HELLO */
    uint64_t compiled_ahead; /* configurations handed to it as COMPILE slices */
    struct tf_wire_outbox outbox; /* WORK and STOP go out without blocking */
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
    int nworkers;                        /* ranks 1..nworkers */
    struct worker_state *workers;
    int nclasses;
    struct tf_device *classes;           /* representative device per class */
    struct tf_plan *plan;
    struct tf_progress progress;
    uint64_t done;
    uint64_t status_counts[TF_STATUS_COUNT];
    double compile_seconds;
    double last_checkpoint;
    struct tf_buf buf;
};

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

/* Load the archive to extend (or start one) and match the job's kernels to it. */
static int coordinator_open_archive(struct coordinator *c, struct tf_error *err)
{
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
        w->klass = -1;
        w->has_device = w->dev.backend[0] != '\0';
        if (!w->has_device) {
            if (w->compilers[0] == '\0')
                fprintf(stderr, "tunefarm: rank %d offers no device: %s\n", src, w->dev.name);
            continue;
        }
        char key[256];
        tf_device_class_key(&w->dev, key, sizeof key);
        if (!tf_job_targets_device(c->job, w->dev.backend, key))
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

static void coordinator_send_stop(struct coordinator *c, int rank)
{
    struct tf_error err;
    tf_wire_stop(&c->buf);
    if (tf_wire_post(&c->workers[rank].outbox, rank, &c->buf, &err))
        tf_error_print(&err, "tunefarm", stderr);
    c->workers[rank].stopped = true;
    c->workers[rank].finished = c->workers[rank].outstanding == 0;
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
    if (w->received > 0 && elapsed > 0)
        want = (uint64_t)ceil((double)w->received / elapsed * SLICE_TARGET_SECONDS);
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

/* Configurations per COMPILE slice: a few seconds of a compile pool. */
#define COMPILE_SLICE 16

/* Hand `src` a slice to compile ahead for a class that will measure it, if
 * there is one it can compile for: any GPU class, or a host class on its own
 * node (host binaries are built for the CPU they run on). Returns 1 if sent,
 * 0 if there is nothing for it, -1 + err on failure. */
static int coordinator_send_compile(struct coordinator *c, int src, struct tf_error *err)
{
    struct worker_state *w = &c->workers[src];
    for (int k = 0; k < c->nclasses; k++) {
        const struct tf_device *dev = &c->classes[k];
        if (k == w->klass || !can_compile_for(w, dev->backend) ||
            (strcmp(dev->backend, "host") == 0 && strcmp(dev->host, w->dev.host) != 0))
            continue;
        struct tf_work work;
        int64_t n = tf_plan_next_compile_slice(c->plan, k, COMPILE_SLICE, &work, err);
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

static int coordinator_on_request(struct coordinator *c, int src, struct tf_error *err)
{
    struct worker_state *w = &c->workers[src];
    if (w->stopped)
        return 0;
    if (w->klass < 0) {
        int sent = coordinator_send_compile(c, src, err);
        if (sent < 0)
            return -1;
        if (sent == 0)
            coordinator_send_stop(c, src);
        return 0;
    }
    struct tf_work work;
    int64_t n = tf_plan_next_slice(c->plan, w->klass, slice_size(c, w), &work, err);
    if (n < 0)
        return -1;
    if (n == 0) {
        /* A screening pass still running elsewhere will queue its top k: wait.
         * Done for good: compile ahead for the other classes, if any need it. */
        if (tf_plan_has_future(c->plan, w->klass)) {
            w->parked = true;
            return 0;
        }
        int sent = coordinator_send_compile(c, src, err);
        if (sent < 0)
            return -1;
        if (sent == 0)
            coordinator_send_stop(c, src);
        return 0;
    }
    w->parked = false;
    if (w->outstanding == 0 && w->received == 0)
        w->first_work = tf_now();
    tf_wire_work(&c->buf, &work);
    free(work.list);
    w->outstanding += (uint64_t)n;
    return tf_wire_post(&w->outbox, src, &c->buf, err);
}

/* Derived metrics of an ok result, from its median time. */
static void coordinator_metrics(struct coordinator *c, const struct tf_kernel *k,
                                const struct tf_device *dev, struct tf_result *r)
{
    struct tf_value slots[k->nslots];
    tf_kernel_bind(k, r->config, (int)r->problem, dev, slots);
    slots[tf_kernel_time_slot(k)] = tf_float(r->time_median);
    for (int m = 0; m < k->nmetrics && m < TF_MAX_METRICS; m++) {
        struct tf_value v;
        r->metrics[m] = tf_expr_eval(k->metrics[m], slots, &v, NULL) == 0
                            ? tf_value_as_double(v)
                            : NAN;
    }
    (void)c;
}

static int coordinator_on_results(struct coordinator *c, int src, struct tf_error *err)
{
    struct worker_state *w = &c->workers[src];
    struct tf_result *rs;
    uint32_t n;
    if (tf_wire_get_results(&c->buf, &rs, &n, err))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        struct tf_result *r = &rs[i];
        struct tf_task *t = r->kernel < (uint32_t)c->job->nkernels
                                ? tf_plan_find(c->plan, (int)r->kernel, (int)r->problem, w->klass)
                                : NULL;
        /* A result must belong to work this class was given: its task, in the
         * task's current phase (phase 2 starts only once phase 1 is all in). */
        if (t == NULL || r->config >= tf_space_cartesian(t->space) || w->outstanding == 0 ||
            r->phase != t->phase) {
            free(rs);
            return tf_error_set(err, TF_ERR_MPI,
                                "rank %d sent a result for a configuration it was not given "
                                "(kernel %u, problem %u, configuration %llu, phase %u)",
                                src, r->kernel, r->problem, (unsigned long long)r->config,
                                r->phase);
        }
        const struct tf_kernel *k = c->job->kernels[r->kernel].kernel;
        if (r->status == TF_STATUS_OK && isfinite(r->time_median)) {
            coordinator_metrics(c, k, &c->classes[w->klass], r);
            if (!(t->best_time <= r->time_median)) {
                t->best_time = r->time_median;
                t->best_config = r->config;
            }
        }
        struct tf_archive_row row = {.run = c->run_id, .device = w->device_id, .r = *r};
        row.r.problem = c->aproblems[r->kernel][r->problem];
        row.r.kernel = 0;
        tf_archive_append(c->akernels[r->kernel], &row);
        tf_plan_record(c->plan, t, r);
        w->outstanding--;
        w->received++;
        c->done++;
        c->status_counts[r->status]++;
        c->compile_seconds += r->compile_time;
        if (isfinite(r->device_time))
            w->measured_seconds += r->device_time;
        else if (r->status == TF_STATUS_OK && r->samples > 0 && isfinite(r->time_mean))
            w->measured_seconds += r->samples * r->time_mean;
    }
    free(rs);
    if (w->stopped && w->outstanding == 0)
        w->finished = true;
    /* These results may have completed a screening pass: serve whoever waits. */
    for (int i = 1; i <= c->nworkers; i++)
        if (c->workers[i].parked && coordinator_on_request(c, i, err))
            return -1;
    return 0;
}

/* "gemm/small on host: best 1.23 ms (27.3 gflops)" for the latest task with a best. */
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
        return;
    }
}

static int coordinator_checkpoint(struct coordinator *c, bool final, struct tf_error *err)
{
    if (final)
        c->archive->runs[c->run_id].end = tf_wall_now();
    c->last_checkpoint = tf_now();
    return tf_archive_write(c->archive, c->archive_path, err);
}

static int coordinator_loop(struct coordinator *c, struct tf_error *err)
{
    long nap = 0;
    for (;;) {
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
            char best[256];
            coordinator_best_line(c, best, sizeof best);
            tf_progress_update(&c->progress, c->done, c->plan->total, best, false);
            if (tf_now() - c->last_checkpoint >= c->job->checkpoint &&
                coordinator_checkpoint(c, false, err)) {
                tf_error_print(err, "tunefarm: warning: checkpoint failed", stderr);
                c->last_checkpoint = tf_now();
            }
            nap = nap ? (nap < 2000000 ? nap * 2 : nap) : 20000;
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
 * left to MPI_Abort: waiting for a worker that no longer listens would hang. */
static void coordinator_destroy(struct coordinator *c, bool broken)
{
    for (int i = 1; c->workers && i <= c->nworkers && !broken; i++) {
        struct tf_error err;
        if (tf_wire_outbox_close(&c->workers[i].outbox, &err) == 0)
            tf_buf_free(&c->workers[i].outbox.buf);
    }
    if (c->aproblems)
        for (int i = 0; c->job && i < c->job->nkernels; i++)
            free(c->aproblems[i]);
    free(c->aproblems);
    free(c->akernels);
    tf_plan_destroy(c->plan);
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
        if (n > 0 && wall > 0)
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
    for (int i = 0; i < c->plan->ntasks; i++) {
        const struct tf_task *t = &c->plan->tasks[i];
        const struct tf_kernel *k = c->job->kernels[t->kernel].kernel;
        fprintf(stderr, "  %-10s %-8s %-28.28s %10llu of %llu valid (%llu in the Cartesian "
                        "product)\n",
                k->name, k->problems[t->problem].name, c->classes[t->klass].name,
                (unsigned long long)t->total, (unsigned long long)t->valid,
                (unsigned long long)tf_space_cartesian(t->space));
    }
}

int tf_coordinator_run(const struct tf_run_options *opt)
{
    struct coordinator c = {.opt = opt};
    struct tf_error err = {0};
    int nranks, code = TF_EXIT_FAILURE;
    bool started = false;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    c.nworkers = nranks - 1;

    /* Validation: a bad job or archive stops every rank before anything is written. */
    c.bundle = tf_bundle_create();
    c.job = tf_job_load(opt->job_path, c.bundle, &err);
    if (c.job == NULL) {
        code = TF_EXIT_USAGE;
        goto fail_stop;
    }
    c.archive_path = opt->archive ? opt->archive : c.job->archive;
    /* Write it once now: an archive path that cannot be written is refused
     * before any device time is spent, not found out at the end. */
    c.archive_is_new = !file_exists(c.archive_path);
    if (coordinator_open_archive(&c, &err) ||
        tf_archive_write(c.archive, c.archive_path, &err)) {
        code = TF_EXIT_USAGE;
        goto fail_stop;
    }
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
    c.plan = tf_plan_create(c.job, c.nclasses, c.classes, &err);
    if (c.plan == NULL) {
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
    struct tf_archive_run run = {.start = tf_wall_now(), .ranks = (uint32_t)nranks};
    tf_strlcpy(run.job_name, c.job->name, sizeof run.job_name);
    tf_strlcpy(run.job_hash, c.job->hash, sizeof run.job_hash);
    tf_strlcpy(run.command, opt->command_line ? opt->command_line : "", sizeof run.command);
    const char *slurm = getenv("SLURM_JOB_ID");
    tf_strlcpy(run.slurm_job_id, slurm ? slurm : "", sizeof run.slurm_job_id);
    tf_strlcpy(run.tunefarm_version, TF_VERSION, sizeof run.tunefarm_version);
    c.run_id = tf_archive_add_run(c.archive, &run);
    coordinator_print_plan(&c);

    tf_progress_init(&c.progress, opt->quiet);
    c.last_checkpoint = tf_now();
    if (coordinator_loop(&c, &err)) {
        tf_progress_finish(&c.progress);
        /* Keep what was measured: one last write before reporting the failure. */
        struct tf_error werr;
        if (coordinator_checkpoint(&c, true, &werr) == 0)
            fprintf(stderr, "tunefarm: %llu results saved in %s\n",
                    (unsigned long long)c.done, c.archive_path);
        goto fail;
    }
    tf_progress_update(&c.progress, c.done, c.plan->total, NULL, true);
    tf_progress_finish(&c.progress);
    if (coordinator_checkpoint(&c, true, &err))
        goto fail;

    double wall = tf_now() - c.progress.start;
    printf("\nJob '%s': %llu configurations in %.1f s (%.2f/s); archive %s\n", c.job->name,
           (unsigned long long)c.done, wall, wall > 0 ? (double)c.done / wall : 0,
           c.archive_path);
    printf("Compile: %.1f s of compiler time, %.1fx parallel over the run\n", c.compile_seconds,
           wall > 0 ? c.compile_seconds / wall : 0);
    coordinator_print_duty(&c, wall);
    uint64_t ahead = 0;
    int compile_ranks = 0;
    for (int i = 1; i <= c.nworkers; i++) {
        ahead += c.workers[i].compiled_ahead;
        compile_ranks += c.workers[i].compiled_ahead > 0;
    }
    if (ahead > 0)
        printf("Compile ranks: %d rank%s compiled %llu configurations ahead of the device ranks\n",
               compile_ranks, compile_ranks == 1 ? "" : "s", (unsigned long long)ahead);
    printf("Statuses:");
    for (int s = 0; s < TF_STATUS_COUNT; s++)
        if (c.status_counts[s])
            printf(" %s %llu", tf_status_name(s), (unsigned long long)c.status_counts[s]);
    printf("\n\n");
    tf_report_best(c.archive, (int)c.run_id, NULL, stdout);
    tf_report_cross(c.archive, (int)c.run_id, NULL, stdout);
    fflush(stdout);
    coordinator_destroy(&c, false);
    return TF_EXIT_OK;

fail_stop:
    if (!started)
        coordinator_stop_all(nranks);
fail:
    tf_error_print(&err, "tunefarm", stderr);
    /* Refused before measuring anything: leave no empty archive behind. */
    if (c.archive_is_new && c.done == 0 && code != TF_EXIT_FAILURE)
        unlink(c.archive_path);
    /* A broken run ends in MPI_Abort (main.c): sending STOP could block on a
     * worker that is itself blocked sending to us. Otherwise say goodbye. */
    if (started && c.workers && code != TF_EXIT_FAILURE)
        for (int i = 1; i <= c.nworkers; i++)
            if (!c.workers[i].stopped)
                coordinator_send_stop(&c, i);
    coordinator_destroy(&c, code == TF_EXIT_FAILURE);
    return code;
}
