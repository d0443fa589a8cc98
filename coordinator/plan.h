/* plan.h - what the coordinator hands out: one task per kernel x problem x
 * device class, each a brute-force cursor over the index space, a sampled
 * list (random strategy) or an adaptive search (coordinator/strategy.h:
 * genetic, local, bayes, hybrid) asked for a batch when a worker pulls and told every
 * result; cut into slices on demand. Every task ends for a reason
 * (tf_plan_stop_name): its budget, the job's time budget, patience, or the
 * valid space exhausted. */
#ifndef TF_PLAN_H
#define TF_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "../schema/archive.h"
#include "../schema/device.h"
#include "../schema/job.h"
#include "../schema/space.h"
#include "../schema/wire.h"
#include "strategy.h"

/* Why a task hands out nothing more (TF_PLAN_RUNNING: it still may). */
enum tf_plan_stop {
    TF_PLAN_RUNNING = 0,
    TF_PLAN_BUDGET,        /* search.budget configurations handed out */
    TF_PLAN_TIME_BUDGET,   /* search.time_budget seconds passed (tf_plan_time_up) */
    TF_PLAN_PATIENCE,      /* search.patience results without improvement */
    TF_PLAN_EXHAUSTED      /* every valid configuration handed out */
};
const char *tf_plan_stop_name(enum tf_plan_stop s);

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
    enum tf_plan_stop stop; /* why phases 0/1 hand out nothing more (RUNNING: they may) */
    /* Adaptive search (job strategy genetic, local, bayes, hybrid) in phases 0 and 1:
     * slices are its proposals, results are told to it; NULL otherwise. */
    struct tf_strategy *strat;
    struct tf_strategy_space *sview;
    uint64_t hint_mark;    /* adaptive: the state (results told + proposed) of the last
                              compile-ahead hint, so a state gives one hint */
    uint64_t *shared;      /* adaptive: the back halves of the slices of proposals handed
                              to device workers, each last first, oldest slice first,
                              that no compile rank has taken yet: share[head..n) */
    size_t nshared, shared_head, shared_cap;
    /* Patience of the cheap paths (brute force, random): results without an
     * improvement of more than the job's noise over patience_ref. */
    uint64_t since_improve;
    double patience_ref;   /* NaN: no ok result yet */
    uint64_t nseeds;       /* warm start: configurations proposed first (tf_plan_warm_start) */
    int nsources;          /* warm start: source device classes they came from */
    uint64_t nprior;       /* warm start: their results the strategy's model learns from
                              (tf_strategy_prior_used; 0 when it has no model) */
    uint64_t nscreened;    /* phase 1: ok results kept for ranking */
    struct tf_screened { uint64_t config; double median; } *screened;
};

struct tf_plan {
    int ntasks;
    struct tf_task *tasks;
    uint64_t total;        /* configurations to measure, both phases (phase 2 estimated) */
    uint32_t top_k;        /* the job's top_k (0: one phase) */
    uint64_t patience;     /* the job's search.patience (0: off) and noise */
    double noise;
    bool time_up;          /* the job's time budget ended the searches */
    bool time_shared;      /* the job has a time budget: tasks are served least-served first */
    int *order;            /* scratch: tf_plan_next_slice's serving order (ntasks) */
    uint64_t shared;       /* adaptive proposals compile ranks took from device workers'
                              slices (tf_plan_next_compile_slice), for the summary */
    int nclasses;
    char (*class_keys)[256]; /* class i's key (tf_device_class_key of its device) */
};

/* Plan `job` for `nclasses` device classes, class i represented by devices[i]
 * (its properties feed the constraints). Counts every space exactly for brute
 * force (a budget takes the first valid configurations in index order);
 * samples the random strategy's configurations (the default configuration
 * first), counting only spaces up to TF_SPACE_EXACT_LIMIT (tf_space_random);
 * an adaptive strategy gets one instance per task (seeded by the job's seed and
 * the kernel and problem names), its space counted up to TF_SPACE_EXACT_LIMIT
 * (above it, with a budget, the count is left unknown). A stop requested
 * through the space poll hook fails it with TF_ERR_INTERRUPTED. The job's
 * strategy name and options are checked first (tf_strategy_check_job: the
 * loader keeps them raw), failing with their file:line:col. */
struct tf_plan *tf_plan_create(const struct tf_job *job, int nclasses,
                               const struct tf_device *devices, struct tf_error *err);
/* Free; accepts NULL. */
void tf_plan_destroy(struct tf_plan *plan);
/* Warm start (job search.warm_start): seed each task's search with the best
 * configurations measured elsewhere. Sources are the job's archives (read
 * here; every device class in them) and, for `same`, `same_archive` (the
 * run's own archive, may be NULL: no rows), its device classes other than the
 * task's. Per source device class: the rows of the task's kernel (by name) and
 * problem (by name) that are ok, each configuration's best median there,
 * fastest first, mapped onto the task's space by parameter name and value;
 * a configuration with a value that does not exist here, a parameter missing,
 * or invalid here (constraints, this class's device limits) is skipped; the
 * first `warm_count` that remain. The lists are interleaved by rank (every
 * source's best, then every source's second...) and given to the task's
 * search as seeds (tf_strategy_seed): proposed first, never told. With
 * warm_start every task has a search (brute_force and random included: they
 * then take the adaptive path). An archive that cannot be read is an error at
 * its warm_start entry's file:line:col. Rows of run `exclude_run` of
 * `same_archive` (the run being resumed; -1: none) are not sources, so a
 * resumed run gets the seeds its first part got; a warm_start path that is
 * `own_path` (the run's own archive, the same file; NULL: none) counts as
 * `same`. Call once, before
 * tf_plan_resume. */
int tf_plan_warm_start(struct tf_plan *plan, const struct tf_job *job,
                       const struct tf_archive *same_archive, int64_t exclude_run,
                       const char *own_path, struct tf_error *err);
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
/* The job's time budget is over: no task hands out anything more (work in
 * flight is still recorded; a screening pass does not go on to its top k).
 * Tasks still running end with TF_PLAN_TIME_BUDGET. */
void tf_plan_time_up(struct tf_plan *plan);
/* True when task `t` has nothing more to hand out and every result it owes is in. */
bool tf_plan_task_complete(const struct tf_plan *plan, const struct tf_task *t);
/* Configurations not yet handed out for class `klass`. */
uint64_t tf_plan_undispatched(const struct tf_plan *plan, int klass);
/* True if class `klass` may still get work: something undispatched, or a
 * screening pass whose results are not all in (its top k will follow). */
bool tf_plan_has_future(const struct tf_plan *plan, int klass);
/* Count one result of task `t`: tell it to an adaptive search (a failure as
 * bad), count it for patience, rank it if it is a screening result, and when
 * the screening pass is complete, queue its top k for strict re-measurement. */
void tf_plan_record(struct tf_plan *plan, struct tf_task *t, const struct tf_result *r);
/* Resume task `t` of an interrupted run: `done[0..n)` are the results the
 * archive already has for it, in the order they were recorded (duplicates and
 * configurations outside the task ignored: the first of a configuration
 * counts). They are counted as measured, told to an adaptive search and fed to
 * patience and the screening ranking in that order, as if just received, and
 * are never handed out again. Call before the first slice. Returns how many
 * were taken, or -1 + err. */
int64_t tf_plan_resume(struct tf_plan *plan, struct tf_task *t, const struct tf_result *done,
                       uint64_t n, struct tf_error *err);
/* The task of (kernel, problem, class), or NULL. */
struct tf_task *tf_plan_find(struct tf_plan *plan, int kernel, int problem, int klass);

#endif
