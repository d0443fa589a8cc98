/* plan.h - what the coordinator hands out: one task per kernel x problem x
 * device class, each a brute-force cursor over the index space or a sampled
 * list (random strategy), cut into slices on demand. */
#ifndef TF_PLAN_H
#define TF_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "../schema/device.h"
#include "../schema/job.h"
#include "../schema/space.h"
#include "../schema/wire.h"

struct tf_task {
    int kernel;            /* job kernel index */
    int problem;           /* kernel problem index */
    int klass;             /* device class index */
    struct tf_space *space;
    uint64_t total;        /* valid configurations this task measures */
    uint64_t dispatched;   /* handed out in slices */
    uint64_t done;         /* results received */
    uint64_t cursor;       /* brute force: the next index to slice from */
    uint64_t ahead;        /* configurations handed to compile ranks (from 0; counts as
                              covered up to max(ahead, dispatched)) */
    uint64_t ahead_cursor; /* brute force: the index after the last compile slice */
    uint64_t *list;        /* random: the sampled configurations (ascending, but a resumed
                              run's finished ones first); phase 2: the top k */
    uint64_t nlist;
    uint64_t *skip;        /* brute force, resumed run: configurations already measured in
                              this phase, ascending; slices leave them out */
    uint64_t nskip;
    uint64_t valid;        /* valid configurations in the whole space */
    bool valid_estimated;  /* `valid` is an estimate (random search of a huge space,
                              sampled without a count) */
    double best_time;      /* lowest median so far (NaN: none yet), for progress */
    uint64_t best_config;
    int phase;             /* 0 only pass, 1 screening, 2 strict re-measure of the top k */
    uint64_t nscreened;    /* phase 1: ok results kept for ranking */
    struct tf_screened { uint64_t config; double median; } *screened;
};

struct tf_plan {
    int ntasks;
    struct tf_task *tasks;
    uint64_t total;        /* configurations to measure, both phases (phase 2 estimated) */
    uint32_t top_k;        /* the job's top_k (0: one phase) */
};

/* Plan `job` for `nclasses` device classes, class i represented by devices[i]
 * (its properties feed the constraints). Counts every space exactly for brute
 * force; samples the random strategy's configurations (the default
 * configuration first), counting only spaces up to TF_SPACE_EXACT_LIMIT
 * (tf_space_random). A stop requested through the space poll hook fails it
 * with TF_ERR_INTERRUPTED. */
struct tf_plan *tf_plan_create(const struct tf_job *job, int nclasses,
                               const struct tf_device *devices, struct tf_error *err);
/* Free; accepts NULL. */
void tf_plan_destroy(struct tf_plan *plan);
/* What task `t` sets out to measure: every configuration, plus the top k of a
 * screening pass (an estimate until the pass is in). */
uint64_t tf_plan_task_planned(const struct tf_plan *plan, const struct tf_task *t);
/* Cut the next slice of about `want` (>= 1) configurations for class `klass`
 * into *work (list owned by the caller afterwards). Returns the number of
 * configurations in it, 0 if the class has nothing left, -1 + err on failure. */
int64_t tf_plan_next_slice(struct tf_plan *plan, int klass, uint64_t want, struct tf_work *work,
                           struct tf_error *err);
/* Cut a slice of about `want` configurations that class `klass` will measure
 * but has not been handed yet, for a compile rank to compile into the shared
 * cache ahead of the class's workers: it starts where the earlier compile
 * slices or the measured slices, whichever are further, ended. Phase-2
 * re-measurements are never compiled ahead (they were compiled to be
 * screened). Returns its count, 0 if nothing is left to compile ahead. */
int64_t tf_plan_next_compile_slice(struct tf_plan *plan, int klass, uint64_t want,
                                   struct tf_work *work, struct tf_error *err);
/* Configurations not yet handed out for class `klass`. */
uint64_t tf_plan_undispatched(const struct tf_plan *plan, int klass);
/* True if class `klass` may still get work: something undispatched, or a
 * screening pass whose results are not all in (its top k will follow). */
bool tf_plan_has_future(const struct tf_plan *plan, int klass);
/* Count one result of task `t`: rank it if it is a screening result, and when
 * the screening pass is complete, queue its top k for strict re-measurement. */
void tf_plan_record(struct tf_plan *plan, struct tf_task *t, const struct tf_result *r);
/* Resume task `t` of an interrupted run: `done[0..n)` are the results the
 * archive already has for it (any order, duplicates and configurations outside
 * the task ignored). They are counted as measured, feed the screening ranking
 * as if just received, and are never handed out again. Call before the first
 * slice. Returns how many were taken, or -1 + err. */
int64_t tf_plan_resume(struct tf_plan *plan, struct tf_task *t, const struct tf_result *done,
                       uint64_t n, struct tf_error *err);
/* The task of (kernel, problem, class), or NULL. */
struct tf_task *tf_plan_find(struct tf_plan *plan, int kernel, int problem, int klass);

#endif
