/* archive_merge.c - tf_archive_merge: add one archive's model to another's.
 *
 * `tunefarm merge` folds archives (and their journals) into one with it.
 * Devices are deduplicated as tf_archive_add_device does, kernels matched by
 * name and shape, problems by (name, sizes), runs by identity (job hash,
 * start, command, Slurm id). A run `dst` has already gets only the rows it
 * lacks: the rows `dst` has of the shared runs are sorted by key (run,
 * device, problem, configuration, phase) and each row of `src` is looked up
 * there, so merging twice adds nothing and merging a run again after it was
 * resumed completes it. Sessions are matched by (run, start, command, Slurm
 * id), so a run's sessions come over once each, with what their devices ran
 * with; a run's kernel source hashes come with the run. Every kernel's shape
 * is compared before anything changes, so a mismatch leaves `dst` as it was. */
#include "archive.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "archive_internal.h"

/* The entry of `dst` for `src`'s kernel: the same shape, or a new copy (no rows). */
static struct tf_archive_kernel *kernel_like(struct tf_archive *dst,
                                             const struct tf_archive_kernel *src,
                                             struct tf_error *err)
{
    struct tf_archive_kernel *ak = tf_archive_find_kernel(dst, src->name);
    if (ak != NULL) {
        const struct tf_archive_shape shape = {src->nparams, src->params, src->nsizes,
                                               src->size_names, src->nmetrics, src->metric_names};
        return tf_archive_shape_compare(ak, &shape, err) != 0 ? NULL : ak;
    }
    const struct tf_archive_shape shape = {src->nparams, src->params, src->nsizes,
                                           src->size_names, src->nmetrics, src->metric_names};
    struct tf_archive_kernel nk = tf_archive_kernel_of_shape(src->name, &shape);
    tf_strlcpy(nk.source_hash, src->source_hash, sizeof nk.source_hash);
    nk.nconstraints = src->nconstraints;
    nk.constraints = tf_archive_strings_copy(src->constraints, src->nconstraints);
    nk.ndefine_sizes = src->ndefine_sizes;
    nk.define_sizes = tf_archive_strings_copy(src->define_sizes, src->ndefine_sizes);
    nk.has_default = src->has_default;
    nk.default_index = src->default_index;
    dst->kernels = tf_xrealloc(dst->kernels, (size_t)(dst->nkernels + 1) * sizeof *dst->kernels);
    dst->kernels[dst->nkernels] = nk;
    return &dst->kernels[dst->nkernels++];
}

static bool same_run(const struct tf_archive_run *x, const struct tf_archive_run *y)
{
    return strcmp(x->job_hash, y->job_hash) == 0 && x->start == y->start &&
           strcmp(x->command, y->command) == 0 && strcmp(x->slurm_job_id, y->slurm_job_id) == 0;
}

/* The session of `dst`'s run `run` that `s` is (same start, command, Slurm id), or -1. */
static int find_session(const struct tf_archive *dst, uint32_t run,
                        const struct tf_archive_session *s)
{
    for (int i = 0; i < dst->nsessions; i++) {
        const struct tf_archive_session *d = &dst->sessions[i];
        if (d->run == run && d->start == s->start && strcmp(d->command, s->command) == 0 &&
            strcmp(d->slurm_job_id, s->slurm_job_id) == 0)
            return i;
    }
    return -1;
}

/* `src`'s sessions and what their devices ran with, onto `dst`'s runs
 * (`runs`) and devices (`devices`): a session `dst` has already keeps its
 * row and gets a later end. */
static void merge_sessions(struct tf_archive *dst, const struct tf_archive *src,
                           const uint32_t *runs, const uint32_t *devices)
{
    uint32_t *sessions = tf_xcalloc((size_t)src->nsessions + 1, sizeof *sessions);
    for (int i = 0; i < src->nsessions; i++) {
        struct tf_archive_session s = src->sessions[i];
        s.run = runs[s.run];
        const int have = find_session(dst, s.run, &s);
        if (have < 0) {
            sessions[i] = tf_archive_add_session(dst, &s);
        } else {
            sessions[i] = (uint32_t)have;
            if (dst->sessions[have].end == 0)
                dst->sessions[have].end = s.end;
        }
    }
    for (int i = 0; i < src->nsession_devices; i++) {
        const struct tf_archive_session_device *sd = &src->session_devices[i];
        tf_archive_set_session_device(dst, sessions[sd->session], devices[sd->device], &sd->d);
    }
    free(sessions);
}

/* A result row's identity within an archive: a run measures a configuration
 * (in a phase) for a problem on a device once. */
struct row_key {
    uint32_t run, device, problem, phase;
    uint64_t config;
};

static int row_key_cmp(const void *x, const void *y)
{
    const struct row_key *a = x, *b = y;
#define CMP(f)                                                                                 \
    if (a->f != b->f)                                                                          \
        return a->f < b->f ? -1 : 1;
    CMP(run) CMP(device) CMP(problem) CMP(config) CMP(phase)
#undef CMP
    return 0;
}

static struct row_key key_of(const struct tf_archive_row *row)
{
    return (struct row_key){row->run, row->device, row->r.problem, row->r.phase, row->r.config};
}

int tf_archive_merge(struct tf_archive *dst, const struct tf_archive *src,
                     struct tf_archive_merge_stats *stats, struct tf_error *err)
{
    memset(stats, 0, sizeof *stats);
    /* Check every kernel first: a mismatch leaves `dst` as it was. */
    for (int k = 0; k < src->nkernels; k++) {
        const struct tf_archive_kernel *ak = tf_archive_find_kernel(dst, src->kernels[k].name);
        const struct tf_archive_kernel *sk = &src->kernels[k];
        const struct tf_archive_shape shape = {sk->nparams, sk->params, sk->nsizes,
                                               sk->size_names, sk->nmetrics, sk->metric_names};
        if (ak != NULL && tf_archive_shape_compare(ak, &shape, err) != 0)
            return -1;
    }
    uint32_t *devices = tf_xcalloc((size_t)src->ndevices + 1, sizeof *devices);
    uint32_t *runs = tf_xcalloc((size_t)src->nruns + 1, sizeof *runs);
    /* A run `dst` has already (the same run merged before, maybe while it was
     * unfinished): it gets the rows it lacks, and the end src has for it. */
    bool *present = tf_xcalloc((size_t)src->nruns + 1, sizeof *present);
    for (int d = 0; d < src->ndevices; d++)
        devices[d] = tf_archive_add_device(dst, &src->devices[d]);
    for (int r = 0; r < src->nruns; r++) {
        for (int q = 0; q < dst->nruns && !present[r]; q++)
            if (same_run(&dst->runs[q], &src->runs[r])) {
                present[r] = true;
                runs[r] = (uint32_t)q;
            }
        if (present[r]) {
            stats->runs_present++;
            struct tf_archive_run *dr = &dst->runs[runs[r]];
            if (dr->end == 0 && src->runs[r].end > 0) {
                dr->end = src->runs[r].end;
                stats->runs_finished++;
            }
        } else {
            runs[r] = tf_archive_add_run(dst, &src->runs[r]);
            stats->runs++;
        }
    }
    for (int k = 0; k < src->nkernels; k++) {
        const struct tf_archive_kernel *sk = &src->kernels[k];
        struct tf_archive_kernel *ak = kernel_like(dst, sk, err);
        if (ak == NULL) { /* checked above: cannot happen */
            free(devices);
            free(runs);
            free(present);
            return -1;
        }
        const uint32_t kernel = (uint32_t)(ak - dst->kernels);
        uint32_t *problems = tf_xcalloc((size_t)sk->nproblems + 1, sizeof *problems);
        for (int p = 0; p < sk->nproblems; p++) {
            problems[p] = tf_archive_problem_like(ak, sk->problems[p].name, sk->problems[p].sizes);
            /* `dst` keeps its own default for a problem it has; one it lacks comes
             * from `src` (kernel shapes agree, so the index means the same). */
            struct tf_archive_problem *dp = &ak->problems[problems[p]];
            if (!dp->has_default && sk->problems[p].has_default) {
                dp->has_default = 1;
                dp->default_index = sk->problems[p].default_index;
            }
        }
        /* The rows `dst` has of the runs it shares with `src`, sorted, to look
         * up which rows of those runs it lacks. */
        bool *shared = tf_xcalloc((size_t)dst->nruns + 1, sizeof *shared);
        for (int r = 0; r < src->nruns; r++)
            shared[runs[r]] = present[r];
        struct row_key *have = tf_xmalloc(sizeof *have * (ak->nrows ? ak->nrows : 1));
        uint64_t nhave = 0;
        for (uint64_t i = 0; i < ak->nrows; i++)
            if (shared[ak->rows[i].run])
                have[nhave++] = key_of(&ak->rows[i]);
        qsort(have, nhave, sizeof *have, row_key_cmp);
        free(shared);
        for (uint64_t i = 0; i < sk->nrows; i++) {
            struct tf_archive_row row = sk->rows[i];
            const bool extends = present[row.run];
            row.run = runs[row.run];
            row.device = devices[row.device];
            row.r.problem = problems[row.r.problem];
            if (extends) {
                const struct row_key key = key_of(&row);
                if (bsearch(&key, have, nhave, sizeof *have, row_key_cmp) != NULL)
                    continue;
                stats->rows_to_present++;
            }
            tf_archive_append(ak, &row);
            stats->rows++;
        }
        free(have);
        for (int i = 0; i < src->nplans; i++) {
            const struct tf_archive_plan *sp = &src->plans[i];
            if (sp->kernel != (uint32_t)k)
                continue;
            struct tf_archive_plan np = {runs[sp->run], kernel, problems[sp->problem],
                                         devices[sp->device], sp->planned};
            tf_archive_set_plan(dst, &np);
        }
        for (int i = 0; i < src->nrun_kernels; i++) {
            const struct tf_archive_run_kernel *rk = &src->run_kernels[i];
            if (rk->kernel == (uint32_t)k &&
                tf_archive_run_source_hash(dst, runs[rk->run], kernel) == NULL)
                tf_archive_set_run_kernel(dst, runs[rk->run], kernel, rk->source_hash);
        }
        free(problems);
    }
    merge_sessions(dst, src, runs, devices);
    free(devices);
    free(runs);
    free(present);
    return 0;
}
