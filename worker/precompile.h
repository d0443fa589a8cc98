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

/* Compile this rank's share of every variant of `o->job_path` for each
 * architecture. Returns an exit code: 0 done (variants that do not compile are
 * cached as such), 1 the compiler is unusable here, 2 bad job or architecture. */
int tf_precompile(const struct tf_precompile_options *o);

/* The configurations of `jk` a run of `job` on `dev` measures, over its
 * problems, ascending and distinct, into a new array *out of *n: chosen as the
 * plan chooses them (tf_space_random for a random search). 0, or -1 + err. */
int tf_precompile_variants(const struct tf_job *job, const struct tf_job_kernel *jk,
                           const struct tf_device *dev, uint64_t **out, uint64_t *n,
                           struct tf_error *err);

#endif
