/* archive_layout.h - the archive's tables: the columns of /devices, /runs, /plan,
 * /sessions, /session_devices, /run_kernels, and of each kernel's `problems`
 * and `results`.
 *
 * Internal to schema/archive*.c. One builder per table gives the column list
 * (archive_table.h) that the writer packs and the reader unpacks. The enums
 * name the column indices of the fixed tables; a kernel's results columns
 * depend on its parameters and metrics, so tf_layout_results reports their
 * indices in a struct tf_results_cols. The same layout is specified for users
 * in schema/archive.md: a change here is a change of that document. */
#ifndef TF_ARCHIVE_LAYOUT_H
#define TF_ARCHIVE_LAYOUT_H

#include <stdint.h>

#include "archive.h"
#include "archive_table.h"

#define TF_ARCHIVE_ENUM_LEN 32     /* bytes of an enum parameter's results column */
#define TF_ARCHIVE_NAME_LEN 255    /* bytes of a kernel, parameter, size or metric name at most:
                                      attribute names and exports' keys are built from them */
#define TF_ARCHIVE_ISO_LEN 32      /* "2024-05-01T12:34:56Z" and room to spare */

/* A problem without a default: no configuration has this index, since a space
 * must have fewer than 2^64 - 1 configurations (schema/kernel.md). */
#define TF_ARCHIVE_NO_DEFAULT UINT64_MAX

/* Columns of /devices; then one int64 column per device property (device.h). */
enum {
    DEV_ID, DEV_BACKEND, DEV_VENDOR, DEV_NAME, DEV_ARCH, DEV_UUID, DEV_PCI_BUS, DEV_HOST,
    DEV_MEMORY, DEV_CUS, DEV_DRIVER, DEV_RUNTIME, DEV_COMPILER, DEV_PROP0
};
/* The /devices table of `file` into `t`: 0, or -1 (+err). */
int tf_layout_devices(struct tf_table *t, const char *file, int nprops, struct tf_error *err);

/* Columns of /runs that every archive has. */
enum {
    RUN_ID, RUN_JOB_NAME, RUN_JOB_HASH, RUN_START_UNIX, RUN_END_UNIX, RUN_START, RUN_END,
    RUN_COMMAND, RUN_SLURM, RUN_RANKS, RUN_VERSION
};
/* Indices of the /runs columns added later; -1 where left out. */
struct tf_runs_cols {
    int replay;                                    /* replay_source */
    int strategy, seed, budget, search, measure, screen; /* the job's settings */
};
/* The /runs table into `t`, with replay_source if `with_replay` and the
 * job's settings if `with_settings` (written always; read only where
 * present), their indices into `c`. 0, or -1 (+err). */
int tf_layout_runs(struct tf_table *t, struct tf_runs_cols *c, const char *file, int with_replay,
                   int with_settings, struct tf_error *err);

/* Columns of /sessions. */
enum {
    SES_RUN, SES_START_UNIX, SES_END_UNIX, SES_START, SES_END, SES_COMMAND, SES_SLURM, SES_RANKS,
    SES_VERSION, SES_HOST
};
/* The /sessions table into `t`: 0, or -1 (+err). */
int tf_layout_sessions(struct tf_table *t, const char *file, struct tf_error *err);

/* Columns of /session_devices. */
enum {
    SD_SESSION, SD_DEVICE, SD_DRIVER, SD_RUNTIME, SD_COMPILER, SD_VERSION, SD_CLOCK,
    SD_MEMORY_CLOCK, SD_POWER_LIMIT, SD_CLOCK_POLICY
};
/* The /session_devices table into `t`: 0, or -1 (+err). */
int tf_layout_session_devices(struct tf_table *t, const char *file, struct tf_error *err);

/* Columns of /run_kernels. */
enum { RK_RUN, RK_KERNEL, RK_SOURCE_HASH };
/* The /run_kernels table into `t`: 0, or -1 (+err). */
int tf_layout_run_kernels(struct tf_table *t, const char *file, struct tf_error *err);

/* Columns of /plan. */
enum { PLAN_RUN, PLAN_KERNEL, PLAN_PROBLEM, PLAN_DEVICE, PLAN_PLANNED };
/* The /plan table into `t`: 0, or -1 (+err). */
int tf_layout_plan(struct tf_table *t, const char *file, struct tf_error *err);

/* /kernels/NAME/problems of `ak` into `t`: id, name, one int64 column per size
 * (size i is column 2 + i), then `default_config` (column 2 + nsizes) if
 * `with_default`. 0, or -1 (+err: a size named like another column). */
int tf_layout_problems(struct tf_table *t, const struct tf_archive_kernel *ak, const char *file,
                       int with_default, struct tf_error *err);

/* Column indices of a kernel's results table; -1 for an optional column left out. */
struct tf_results_cols {
    int run, device, problem, config, param0, status, samples, time_median, time_min,
        time_mean, time_rsd, noisy, compile_time, device_time, registers, shared_bytes,
        spill_bytes, warnings, first_warning, sm_clock, power, temperature, energy,
        energy_status, flushed_l2, throttled, phase, timestamp, metric0, message;
};
/* Results columns added after files were in use: the writer writes them all
 * (TF_RESULTS_ALL), the reader asks for those the file has; the indices of
 * those left out are -1. */
enum {
    TF_RESULTS_NOISY = 1,          /* `noisy`, after time_rsd */
    TF_RESULTS_ENERGY_STATUS = 2,  /* `energy_status`, after energy_j */
    TF_RESULTS_WARNINGS = 4,       /* `warnings` and `first_warning`, after spill_bytes */
    TF_RESULTS_ALL = 7
};
/* /kernels/NAME/results of `ak` into `t`, with the optional columns in
 * `optional` (TF_RESULTS_*), its column indices into `c`: 0, or -1 (+err: a
 * parameter or metric named like another column). */
int tf_layout_results(struct tf_table *t, struct tf_results_cols *c,
                      const struct tf_archive_kernel *ak, const char *file, unsigned optional,
                      struct tf_error *err);

#endif
