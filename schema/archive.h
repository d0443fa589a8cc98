/* archive.h - the HDF5 result archive: an in-memory model, a writer and a reader.
 *
 * The archive is one self-describing HDF5 file (layout in schema/archive.md):
 * root attributes, /devices, /runs, and per kernel /kernels/NAME with its
 * parameter space as attributes, a `problems` table and a `results` table
 * (chunked, compressed, growable compound dataset, one row per measured
 * configuration). The coordinator keeps the model in memory, appends rows as
 * results arrive and rewrites the file atomically (temporary file in the same
 * folder, fsync, rename) at checkpoints, so a reader never sees a torn file. */
#ifndef TF_ARCHIVE_H
#define TF_ARCHIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "device.h"
#include "error.h"
#include "kernel.h"
#include "result.h"

/* True if `unix_s` is a time an archive's dates can say: after 1970 and
 * before the year 10000 (an ISO date's four digits). Anything else (0, NaN,
 * 1e300 from a hostile file) is no date: converting it to time_t would be
 * undefined, and formatting it nonsense. */
static inline bool tf_archive_time_ok(double unix_s)
{
    return unix_s > 0 && unix_s < 253402300800.0;
}

#define TF_ARCHIVE_FORMAT "tunefarm-archive"
#define TF_ARCHIVE_SCHEMA_VERSION 1

struct tf_archive_run {
    char job_name[64];
    char job_hash[65];
    double start, end;        /* unix seconds; end 0 while running */
    char command[512];
    char slurm_job_id[32];    /* empty outside Slurm */
    uint32_t ranks;
    char tunefarm_version[32];
    char replay_source[512];  /* a replay (worker/backend_replay.h): the source archive or
                                 Kernel Tuner cache it answered from; "" for a measured run
                                 (and for every run of an archive older than the column) */
    /* The job's search and measurement settings (tf_archive_run_settings); ""
     * and 0 in runs of archives older than these columns. */
    char search_strategy[32];
    uint64_t search_seed;
    uint64_t search_budget;   /* configurations per kernel, problem and class; 0: all */
    char search[256];         /* the other search settings, "key=value ..." */
    char measure[256];        /* the strict measurement protocol, "key=value ..." */
    char screen[256];         /* the screening protocol of a two-phase search; "" for one */
};

/* One invocation of `tunefarm run` that measured for a run: the one that
 * started it and each that resumed it. A run of more than one session was
 * measured at more than one time (an interrupted night resumed the next). */
struct tf_archive_session {
    uint32_t run;
    double start;             /* unix seconds */
    double end;               /* when it stopped, finished or interrupted by a signal;
                                 0 if it was killed (or is still running) */
    char command[512];
    char slurm_job_id[32];
    uint32_t ranks;
    char tunefarm_version[32]; /* of its coordinator */
    char host[64];            /* its coordinator's host */
};

/* What a device ran with in one session: the device as its worker described
 * it then (d: identity from /devices, versions and clock/power settings from
 * /session_devices). */
struct tf_archive_session_device {
    uint32_t session;         /* index into sessions */
    uint32_t device;          /* index into devices */
    struct tf_device d;
};

/* A kernel's source hash as a run measured it (the kernel's attribute holds
 * only the latest). */
struct tf_archive_run_kernel {
    uint32_t run;
    uint32_t kernel;          /* index into kernels */
    char source_hash[65];
};

/* What a run set out to measure for one (kernel, problem, device class): the
 * device is one of the class's devices. `tunefarm status` subtracts what the
 * run has measured to say what remains. */
struct tf_archive_plan {
    uint32_t run;
    uint32_t kernel;          /* index into kernels */
    uint32_t problem;         /* the kernel's problem id */
    uint32_t device;          /* index into devices */
    uint64_t planned;         /* configurations (both phases; the second one estimated) */
};

struct tf_archive_problem {
    char name[64];
    int64_t *sizes;           /* one per kernel size name */
    int has_default;          /* the kernel's default for this problem is known */
    uint64_t default_index;   /* that configuration (the `default_config` column) */
};

struct tf_archive_row {
    uint32_t run;             /* index into runs */
    uint32_t device;          /* index into devices */
    struct tf_result r;       /* r.problem is the archive problem index; r.kernel unused */
};

struct tf_archive_kernel {
    char *name;
    char source_hash[65];
    int nparams;
    struct tf_param *params;  /* deep copies: names, kinds, values */
    int nsizes;
    char **size_names;
    int nconstraints;
    char **constraints;       /* constraint texts */
    int ndefine_sizes;        /* the sizes the kernel compiles in (`defines:`), by name, */
    char **define_sizes;      /* as of the latest kernel file (`size_defines` attribute) */
    int nmetrics;
    char **metric_names;
    int has_default;          /* a default that is the same for every problem (the */
    uint64_t default_index;   /* `default_index` attribute); per problem: problems[] */
    int nproblems;
    struct tf_archive_problem *problems;
    uint64_t nrows, cap;
    struct tf_archive_row *rows;
};

/* An archive id: 32 lowercase hex digits (128 random bits) and a NUL. */
#define TF_ARCHIVE_ID_LEN 33

struct tf_archive {
    char id[TF_ARCHIVE_ID_LEN]; /* random, given at creation, never changes: the journal
                                   names it (coordinator/journal.h). "" for an archive
                                   written before ids, until tf_archive_ensure_id */
    double created;           /* unix seconds */
    uint64_t checkpoint;      /* bumped by each coordinator checkpoint: pairs the file
                                 with its journal (coordinator/journal.h); 0 if never */
    char tunefarm_version[32];
    int ndevices;
    struct tf_device *devices;
    int nruns;
    struct tf_archive_run *runs;
    int nkernels;
    struct tf_archive_kernel *kernels;
    int nplans;
    struct tf_archive_plan *plans;   /* /plan: one row per run x kernel x problem x class */
    int nsessions;
    struct tf_archive_session *sessions; /* /sessions, in the order they started */
    int nsession_devices;
    struct tf_archive_session_device *session_devices; /* /session_devices */
    int nrun_kernels;
    struct tf_archive_run_kernel *run_kernels; /* /run_kernels */
};

/* New empty archive model, with a new id. */
struct tf_archive *tf_archive_create(void);
/* Give `a` a new random id if it has none (read from an archive written before
 * ids): the next write stores it. Returns 1 if it made one, 0 if `a` had one. */
int tf_archive_ensure_id(struct tf_archive *a);
/* Free; accepts NULL. */
void tf_archive_destroy(struct tf_archive *a);
/* Call first in a program that writes archives, before any HDF5 call: the
 * library then does not close files at exit. A file whose close failed (a full
 * disk) stays in HDF5's tables, and 1.10's exit handler then crashes or prints
 * "infinite loop closing library"; tunefarm closes every file it opens itself. */
void tf_archive_no_atexit(void);
/* Read the whole file `path`. A missing, truncated or foreign file is an error
 * that says so (NULL + err), never a crash. */
struct tf_archive *tf_archive_read(const char *path, struct tf_error *err);
/* Write the whole model to `path` atomically (path.tmp.PID, fsync, rename). */
int tf_archive_write(const struct tf_archive *a, const char *path, struct tf_error *err);

/* Index of device `d` in the archive (same backend, name, arch, uuid and host), added if new. */
uint32_t tf_archive_add_device(struct tf_archive *a, const struct tf_device *d);
/* Append a run; returns its index. */
uint32_t tf_archive_add_run(struct tf_archive *a, const struct tf_archive_run *run);
/* Append a session of run `s->run`; returns its index. */
uint32_t tf_archive_add_session(struct tf_archive *a, const struct tf_archive_session *s);
/* Record (or replace) what device `device` ran with in session `session`: `d`'s
 * versions and settings. */
void tf_archive_set_session_device(struct tf_archive *a, uint32_t session, uint32_t device,
                                   const struct tf_device *d);
/* Record (or replace) kernel `kernel`'s source hash as run `run` measured it. */
void tf_archive_set_run_kernel(struct tf_archive *a, uint32_t run, uint32_t kernel,
                               const char *source_hash);
/* Kernel `kernel`'s source hash in run `run`; NULL if the archive does not say
 * (runs of archives older than /run_kernels). */
const char *tf_archive_run_source_hash(const struct tf_archive *a, uint32_t run, uint32_t kernel);
/* Index of run `run`'s `nth` session (0 the first) in sessions, -1 if it has
 * no such session; how many sessions the run has in *count if not NULL. */
int tf_archive_run_session(const struct tf_archive *a, uint32_t run, int nth, int *count);
/* The archive entry for kernel `k`, created if new. An existing entry with other
 * parameters, sizes or metrics is an error (NULL + err naming the difference). */
struct tf_archive_kernel *tf_archive_kernel_for(struct tf_archive *a, const struct tf_kernel *k,
                                                struct tf_error *err);
/* Index of problem `p` of `k` in `ak`, added if new; its default becomes `k`'s
 * default for `p` (tf_kernel_default_for), none if `k` has none. */
uint32_t tf_archive_problem_for(struct tf_archive_kernel *ak, const struct tf_kernel *k, int p);
/* Append one row. */
void tf_archive_append(struct tf_archive_kernel *ak, const struct tf_archive_row *row);
/* Record (or update) what run `p->run` plans to measure for its kernel, problem, device. */
void tf_archive_set_plan(struct tf_archive *a, const struct tf_archive_plan *p);
/* What tf_archive_merge did. */
struct tf_archive_merge_stats {
    int runs;            /* runs added */
    int runs_present;    /* runs `dst` had already (same job hash, start, command, Slurm id) */
    int runs_finished;   /* of those, runs unfinished in `dst` that `src` has finished */
    uint64_t rows;       /* rows added, in all */
    uint64_t rows_to_present; /* of those, rows added to runs `dst` had already */
};
/* Add everything `src` holds to `dst`: devices (deduplicated), runs not in
 * `dst` yet with their rows and plans, kernels and problems as needed (a
 * problem's default from `src` where `dst` has none for it). A run `dst` has
 * already (same identity: job hash, start, command, Slurm id) gets the rows of
 * `src` it lacks (keyed by device, problem, configuration and phase), `src`'s
 * plan rows, and `src`'s end time if `dst` has it unfinished: merging a run
 * again after it was resumed completes it, and merging twice adds nothing. A
 * kernel whose parameters, sizes or metrics differ between the two is an error
 * naming the difference, and `dst` is left as it was. */
int tf_archive_merge(struct tf_archive *dst, const struct tf_archive *src,
                     struct tf_archive_merge_stats *stats, struct tf_error *err);
/* Configurations in `ak`'s space: the product of the value counts, saturating
 * like tf_kernel_cartesian (public: the journal checks records against it). */
uint64_t tf_archive_cartesian(const struct tf_archive_kernel *ak);
/* Find a kernel entry by name (NULL if none). */
struct tf_archive_kernel *tf_archive_find_kernel(const struct tf_archive *a, const char *name);

/* What a set of ok rows says about its own measurements. */
struct tf_archive_quality {
    uint64_t ok;                      /* ok rows counted */
    uint64_t noisy;                   /* of those, marked noisy: their spread stayed above
                                         max_noise when max_time (or max_samples) ended them */
    uint64_t energy[TF_ENERGY_COUNT]; /* of those, by energy_status (measured: with energy) */
};
/* Add to `q` the ok rows of kernel `ak` (an entry of `a`) of run `run` (every
 * run if negative), of problem `problem` (every problem if UINT32_MAX) and on
 * devices of class `class_key` (tf_device_class_key; every class if NULL).
 * The run summary, `tunefarm query` and `tunefarm diff` count with it. */
void tf_archive_quality_count(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                              int run, uint32_t problem, const char *class_key,
                              struct tf_archive_quality *q);

#endif
