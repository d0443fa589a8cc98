/* precompile.h - `tunefarm compile`: the variants a run would measure, compiled
 * ahead into the shared cache on any CPU, with no device. */
#ifndef TF_PRECOMPILE_H
#define TF_PRECOMPILE_H

#include <stdbool.h>
#include <stdint.h>

#include "../schema/device.h"
#include "../schema/error.h"
#include "../schema/job.h"

struct tf_precompile_options {
    const char *job_path;
    const char *archs;   /* comma-separated: "sm_90,sm_80" */
    int processes;       /* compiler processes; 0 = the online cores / node_ranks */
    bool quiet;          /* no progress */
    int rank, nranks;    /* this process's share: variant i goes to rank i % nranks */
    int node_ranks;      /* ranks on this node (default process count = cores / this) */
    const char *exe;     /* this binary, for the compiler processes */
};

/* Configurations per kernel and problem compiled ahead for an adaptive
 * search (genetic, local, bayes, hybrid) whose job has no budget: its own choices are
 * made during the run, and the whole space may be huge. */
#define TF_PRECOMPILE_ADAPTIVE_SAMPLE 256

/* Compile this rank's share of the variants of `o->job_path` for each
 * architecture (tf_precompile_variants). The strategy's name and options are
 * the caller's to check (tf_strategy_check_job, coordinator/: main.c).
 * Returns an exit code: 0 done (variants that do not compile are cached as
 * such), 1 the compiler is unusable here, 2 bad job or architecture. */
int tf_precompile(const struct tf_precompile_options *o);

/* How many configurations per kernel and problem are compiled ahead for
 * `job`: its budget (0: brute force's every valid configuration), for an
 * adaptive search without one TF_PRECOMPILE_ADAPTIVE_SAMPLE. */
uint64_t tf_precompile_sample_size(const struct tf_job *job);

/* The configurations of `jk` to compile ahead for a run of `job` on `dev`,
 * over its problems, ascending and distinct, into a new array *out of *n:
 * tf_space_random for a random search, the first `budget` valid ones in index
 * order for brute force (all without a budget). That is exactly what the plan
 * measures, unless the job has a warm start (search.warm_start) and a budget:
 * the run then measures other classes' best first, read from archives when it
 * starts, and a random search draws its own sample after them. For an
 * adaptive search, which decides during the run, the same draw as a random
 * search of tf_precompile_sample_size(job): the default configuration first,
 * then a sample seeded by the job's seed. 0, or -1 + err. */
int tf_precompile_variants(const struct tf_job *job, const struct tf_job_kernel *jk,
                           const struct tf_device *dev, uint64_t **out, uint64_t *n,
                           struct tf_error *err);

#endif
