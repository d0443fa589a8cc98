/* job.h - the job file (jobs/NAME.yaml): what to tune, where, how.
 *
 * A job names kernels (a library name or a folder) with the problems to tune,
 * targets (backends or device-class patterns), the search strategy and budget,
 * measurement settings, and where the archive and the compile cache live. The
 * loader reads every file through a struct tf_bundle so that the coordinator
 * (from disk) and the workers (from the JOB message) build the same job.
 * schema/job.md is the user-facing spec. */
#ifndef TF_JOB_H
#define TF_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "bundle.h"
#include "error.h"
#include "kernel.h"

/* The longest job name: the archive's /runs job_name field is 64 bytes with its NUL. */
#define TF_JOB_NAME_MAX 63

/* compile_jobs above this is refused at load: a compile job is a thread and a
 * compiler process per worker, and no machine has this many cores to feed. */
#define TF_JOB_MAX_COMPILE_JOBS 1024

/* How the plan picks configurations. Brute force and random keep their cheap
 * paths (index ranges; a sample drawn up front; with search.warm_start the
 * plan runs them as adaptive searches to seed them); any other search.strategy
 * name is the adaptive path (genetic, local, bayes, hybrid: asked as workers pull and
 * told every result, so what it measures is not known up front). The loader
 * does not know the strategy registry (schema/ depends on nothing): whether
 * the name is one, and its options, are checked on the coordinator side
 * (the coordinator's tf_strategy_check_job) before anything runs. */
enum tf_search_path { TF_STRATEGY_BRUTE_FORCE, TF_STRATEGY_RANDOM, TF_STRATEGY_ADAPTIVE };

/* One `name: value` of search.options, where it stands in the job file. */
struct tf_job_option {
    char *name;
    char *value;         /* the scalar's text (never NULL); the strategy parses it */
    int line, col;       /* 1-based, of the value */
    int name_line, name_col; /* 1-based, of the name */
};

/* One source of search.warm_start: an archive whose measured configurations
 * on other devices seed the search (coordinator/plan.c reads it). */
struct tf_job_warm {
    char *path;          /* the archive, relative paths resolved against the job file's
                            folder ("~/" expanded); NULL for `same` */
    bool same;           /* `same`: the run's own archive, its other device classes */
    int line, col;       /* 1-based, of the entry */
};

/* Default of search.warm_count: seeds per source device class. */
#define TF_JOB_WARM_COUNT 8

struct tf_measure {
    int warmup;          /* un-timed launches after the verified one (default 2) */
    int min_samples;     /* default 10 */
    int max_samples;     /* default 1000 */
    double min_time;     /* seconds of samples before the noise rule may stop (default 0.02) */
    double max_time;     /* seconds of samples at most (default 1.0) */
    double max_noise;    /* relative stddev that stops sampling (default 0.005) */
    double timeout;      /* seconds per configuration before the runner is killed (default 10) */
    bool flush_l2;       /* flush the last-level cache between samples (default false) */
    double energy_time;  /* seconds of back-to-back launches after the samples that a
                            launch's energy is measured over, between two updates of the
                            device's energy counter; 0: no energy (default 0.1; screen 0) */
};

struct tf_job_kernel {
    struct tf_kernel *kernel;
    int nproblems;
    int *problems;       /* indices into kernel->problems */
};

struct tf_job {
    char *name;
    char *file;
    int nkernels;
    struct tf_job_kernel *kernels;
    int ntargets;
    char **targets;      /* backend names or class globs ("host", "cuda", "NVIDIA H100*"); none = all */
    enum tf_search_path strategy;
    char *strategy_name; /* search.strategy as written (default "brute_force"); whether it
                            names a strategy is checked by the coordinator */
    int strategy_line, strategy_col; /* 1-based, of the search.strategy value; 0 = default */
    int budget_line, budget_col;     /* 1-based, of the search.budget value; 0 = none */
    int noptions;
    struct tf_job_option *options; /* search.options, raw: names and values unchecked here */
    uint64_t budget;     /* configurations per (kernel, problem, device class); 0 = every
                            valid one (required by random) */
    double time_budget;  /* seconds of wall time for the job's searches; 0 = none */
    uint64_t patience;   /* stop a search after this many results without improvement; 0 = off */
    double noise;        /* relative improvement that counts for patience (default 0.005) */
    uint64_t seed;
    int nwarm;           /* search.warm_start: archives whose best configurations on other */
    struct tf_job_warm *warm; /* devices are proposed first (none = a cold start) */
    uint32_t warm_count; /* search.warm_count: the best W of each source device class */
    struct tf_measure measure;  /* the strict protocol (final measurements) */
    uint32_t top_k;      /* > 0: two phases - screen every configuration with `screen`,
                            then re-measure the best top_k with `measure` */
    struct tf_measure screen;   /* the cheap screening protocol (used when top_k > 0) */
    char *archive;       /* default "results/<name>.h5", relative to the working directory */
    char *cache;         /* compile cache folder; default $XDG_CACHE_HOME/tunefarm */
    double checkpoint;   /* seconds between archive rewrites (default 10) */
    int compile_jobs;    /* compile pool size; 0 = the cores near the device;
                            at most TF_JOB_MAX_COMPILE_JOBS */
    char hash[65];       /* SHA-256 of the bundle: job identity */
};

/* Load and validate the job file `path`, and every kernel it names, through
 * `bundle` (unsealed: read from disk and recorded). NULL + `err` on failure.
 * The search strategy's name and options are kept as written (with their
 * positions), not checked against the strategies: a job that loads may still
 * be refused by the coordinator's tf_strategy_check_job. */
struct tf_job *tf_job_load(const char *path, struct tf_bundle *bundle, struct tf_error *err);
/* Free the job and its kernels; accepts NULL. */
void tf_job_destroy(struct tf_job *job);
/* True if a device of class key `class_key` and backend `backend` is one of the job's targets. */
bool tf_job_targets_device(const struct tf_job *job, const char *backend, const char *class_key);

/* Seconds one compile (a variant's, or a kernel's reference) may take before
 * its compiler is killed, when TUNEFARM_COMPILE_TIMEOUT does not say. */
#define TF_COMPILE_TIMEOUT_DEFAULT 120.0
/* The most TUNEFARM_COMPILE_TIMEOUT may say: a day (a compile that long is a hang). */
#define TF_COMPILE_TIMEOUT_MAX 86400.0
/* The compile deadline of this run into *seconds: TUNEFARM_COMPILE_TIMEOUT
 * (seconds, a number above 0, at most TF_COMPILE_TIMEOUT_MAX) if it is set,
 * else TF_COMPILE_TIMEOUT_DEFAULT. Workers kill compiles past it and the
 * coordinator waits that long for a silent worker's compile, so both read it
 * here. 0, or -1 + err (*seconds the default) when it is not such a number. */
int tf_job_compile_timeout(double *seconds, struct tf_error *err);
/* TUNEFARM_COMPILE_MEMORY (MiB of data each compiler process may allocate; 0:
 * no limit) into *mib, *set true, if it is set and not empty; else *set false.
 * Workers limit their compilers with it (worker/compiler.h) and the
 * coordinator refuses a bad value before anything runs, so both read it here.
 * 0, or -1 + err when it is not a whole number of MiB. */
int tf_job_compile_memory(uint64_t *mib, bool *set, struct tf_error *err);

#endif
