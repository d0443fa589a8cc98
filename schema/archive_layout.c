/* archive_layout.c - the archive's tables: the columns of /devices, /runs, /plan,
 * and of each kernel's `problems` and `results`.
 *
 * Each builder describes one table as a column list (archive_table.h) that
 * the writer's pack and the reader's unpack callbacks both index, so the two
 * cannot disagree on a column. String columns are as wide as the model's
 * fields (sizeof of the struct member), so nothing is cut on the way. Columns
 * added after files were in use (runs.replay_source, the runs' job settings,
 * problems.default_config, results.noisy, energy_status, warnings and
 * first_warning) are behind a flag: always written, asked for by the reader
 * only where the file has them; tables added later (/plan, /sessions,
 * /session_devices, /run_kernels) are read only where present.
 * schema/archive.md specifies the same layout for users. */
#include "archive_layout.h"

#include <stdio.h>

/* `nprops`: how many device property columns, TF_DEVPROP_COUNT when writing;
 * archives written before max_shared_per_sm have one fewer (properties are
 * only ever added at the end, device.h). */
int tf_layout_devices(struct tf_table *t, const char *file, int nprops, struct tf_error *err)
{
    const struct tf_device *d = NULL;
    tf_table_init(t, file, "/devices");
    if (tf_table_add(t, "id", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "backend", TF_COL_STR, sizeof d->backend, err) < 0 ||
        tf_table_add(t, "vendor", TF_COL_STR, sizeof d->vendor, err) < 0 ||
        tf_table_add(t, "name", TF_COL_STR, sizeof d->name, err) < 0 ||
        tf_table_add(t, "arch", TF_COL_STR, sizeof d->arch, err) < 0 ||
        tf_table_add(t, "uuid", TF_COL_STR, sizeof d->uuid, err) < 0 ||
        tf_table_add(t, "pci_bus", TF_COL_STR, sizeof d->pci_bus, err) < 0 ||
        tf_table_add(t, "host", TF_COL_STR, sizeof d->host, err) < 0 ||
        tf_table_add(t, "memory_bytes", TF_COL_U64, 0, err) < 0 ||
        tf_table_add(t, "compute_units", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "driver_version", TF_COL_STR, sizeof d->driver_version, err) < 0 ||
        tf_table_add(t, "runtime_version", TF_COL_STR, sizeof d->runtime_version, err) < 0 ||
        tf_table_add(t, "compiler_version", TF_COL_STR, sizeof d->compiler_version, err) < 0)
        return -1;
    for (int p = 0; p < nprops; p++)
        if (tf_table_add(t, tf_devprop_name(p), TF_COL_I64, 0, err) < 0)
            return -1;
    return 0;
}

/* /runs. Columns added after files were in use are behind flags (written
 * always; read only where present, so older archives stay readable):
 * `with_replay` replay_source, `with_settings` the job's search and
 * measurement settings. */
int tf_layout_runs(struct tf_table *t, struct tf_runs_cols *c, const char *file, int with_replay,
                   int with_settings, struct tf_error *err)
{
    const struct tf_archive_run *r = NULL;
    tf_table_init(t, file, "/runs");
    c->replay = c->strategy = c->seed = c->budget = c->search = c->measure = c->screen = -1;
    if (tf_table_add(t, "id", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "job_name", TF_COL_STR, sizeof r->job_name, err) < 0 ||
        tf_table_add(t, "job_hash", TF_COL_STR, sizeof r->job_hash, err) < 0 ||
        tf_table_add(t, "start_unix", TF_COL_F64, 0, err) < 0 ||
        tf_table_add(t, "end_unix", TF_COL_F64, 0, err) < 0 ||
        tf_table_add(t, "start", TF_COL_STR, TF_ARCHIVE_ISO_LEN, err) < 0 ||
        tf_table_add(t, "end", TF_COL_STR, TF_ARCHIVE_ISO_LEN, err) < 0 ||
        tf_table_add(t, "command", TF_COL_STR, sizeof r->command, err) < 0 ||
        tf_table_add(t, "slurm_job_id", TF_COL_STR, sizeof r->slurm_job_id, err) < 0 ||
        tf_table_add(t, "ranks", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "tunefarm_version", TF_COL_STR, sizeof r->tunefarm_version, err) < 0)
        return -1;
    if (with_replay &&
        (c->replay = tf_table_add(t, "replay_source", TF_COL_STR, sizeof r->replay_source, err)) <
            0)
        return -1;
    if (with_settings &&
        ((c->strategy = tf_table_add(t, "search_strategy", TF_COL_STR, sizeof r->search_strategy,
                                     err)) < 0 ||
         (c->seed = tf_table_add(t, "search_seed", TF_COL_U64, 0, err)) < 0 ||
         (c->budget = tf_table_add(t, "search_budget", TF_COL_U64, 0, err)) < 0 ||
         (c->search = tf_table_add(t, "search", TF_COL_STR, sizeof r->search, err)) < 0 ||
         (c->measure = tf_table_add(t, "measure", TF_COL_STR, sizeof r->measure, err)) < 0 ||
         (c->screen = tf_table_add(t, "screen", TF_COL_STR, sizeof r->screen, err)) < 0))
        return -1;
    return 0;
}

int tf_layout_sessions(struct tf_table *t, const char *file, struct tf_error *err)
{
    const struct tf_archive_session *s = NULL;
    tf_table_init(t, file, "/sessions");
    if (tf_table_add(t, "run", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "start_unix", TF_COL_F64, 0, err) < 0 ||
        tf_table_add(t, "end_unix", TF_COL_F64, 0, err) < 0 ||
        tf_table_add(t, "start", TF_COL_STR, TF_ARCHIVE_ISO_LEN, err) < 0 ||
        tf_table_add(t, "end", TF_COL_STR, TF_ARCHIVE_ISO_LEN, err) < 0 ||
        tf_table_add(t, "command", TF_COL_STR, sizeof s->command, err) < 0 ||
        tf_table_add(t, "slurm_job_id", TF_COL_STR, sizeof s->slurm_job_id, err) < 0 ||
        tf_table_add(t, "ranks", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "tunefarm_version", TF_COL_STR, sizeof s->tunefarm_version, err) < 0 ||
        tf_table_add(t, "host", TF_COL_STR, sizeof s->host, err) < 0)
        return -1;
    return 0;
}

int tf_layout_session_devices(struct tf_table *t, const char *file, struct tf_error *err)
{
    const struct tf_device *d = NULL;
    tf_table_init(t, file, "/session_devices");
    if (tf_table_add(t, "session", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "device", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "driver_version", TF_COL_STR, sizeof d->driver_version, err) < 0 ||
        tf_table_add(t, "runtime_version", TF_COL_STR, sizeof d->runtime_version, err) < 0 ||
        tf_table_add(t, "compiler_version", TF_COL_STR, sizeof d->compiler_version, err) < 0 ||
        tf_table_add(t, "tunefarm_version", TF_COL_STR, sizeof d->tunefarm_version, err) < 0 ||
        tf_table_add(t, "clock_mhz", TF_COL_F64, 0, err) < 0 ||
        tf_table_add(t, "memory_clock_mhz", TF_COL_F64, 0, err) < 0 ||
        tf_table_add(t, "power_limit_w", TF_COL_F64, 0, err) < 0 ||
        tf_table_add(t, "clock_policy", TF_COL_STR, sizeof d->clock_policy, err) < 0)
        return -1;
    return 0;
}

int tf_layout_run_kernels(struct tf_table *t, const char *file, struct tf_error *err)
{
    const struct tf_archive_run_kernel *k = NULL;
    tf_table_init(t, file, "/run_kernels");
    if (tf_table_add(t, "run", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "kernel", TF_COL_STR, 128, err) < 0 ||
        tf_table_add(t, "source_hash", TF_COL_STR, sizeof k->source_hash, err) < 0)
        return -1;
    return 0;
}

int tf_layout_plan(struct tf_table *t, const char *file, struct tf_error *err)
{
    tf_table_init(t, file, "/plan");
    if (tf_table_add(t, "run", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "kernel", TF_COL_STR, 128, err) < 0 ||
        tf_table_add(t, "problem", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "device", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "planned", TF_COL_U64, 0, err) < 0)
        return -1;
    return 0;
}

/* Problems: id, name, one int64 column per size (size i is column 2 + i), then
 * `default_config` (column 2 + nsizes) unless `with_default` is 0: archives
 * written before per-problem defaults lack it, and the reader asks for it only
 * where it is. */
int tf_layout_problems(struct tf_table *t, const struct tf_archive_kernel *ak, const char *file,
                       int with_default, struct tf_error *err)
{
    char what[320];
    snprintf(what, sizeof what, "/kernels/%s/problems", ak->name);
    tf_table_init(t, file, what);
    if (tf_table_add(t, "id", TF_COL_U32, 0, err) < 0 ||
        tf_table_add(t, "name", TF_COL_STR, sizeof ak->problems[0].name, err) < 0)
        return -1;
    for (int i = 0; i < ak->nsizes; i++)
        if (tf_table_add(t, ak->size_names[i], TF_COL_I64, 0, err) < 0)
            return -1;
    if (with_default && tf_table_add(t, "default_config", TF_COL_U64, 0, err) < 0)
        return -1;
    return 0;
}

int tf_layout_results(struct tf_table *t, struct tf_results_cols *c,
                      const struct tf_archive_kernel *ak, const char *file, unsigned optional,
                      struct tf_error *err)
{
    char what[320];
    snprintf(what, sizeof what, "/kernels/%s/results", ak->name);
    tf_table_init(t, file, what);
#define ADD(field, name, kind)                                                                 \
    if ((c->field = tf_table_add(t, name, kind, 0, err)) < 0)                                  \
        return -1;
    ADD(run, "run", TF_COL_U32)
    ADD(device, "device", TF_COL_U32)
    ADD(problem, "problem", TF_COL_U32)
    ADD(config, "config", TF_COL_U64)
    c->param0 = t->n;
    for (int i = 0; i < ak->nparams; i++)
        if (tf_table_add(t, ak->params[i].name,
                         ak->params[i].kind == TF_PARAM_INT ? TF_COL_I64 : TF_COL_STR,
                         TF_ARCHIVE_ENUM_LEN, err) < 0)
            return -1;
    ADD(status, "status", TF_COL_STATUS)
    ADD(samples, "samples", TF_COL_U32)
    ADD(time_median, "time_median", TF_COL_F64)
    ADD(time_min, "time_min", TF_COL_F64)
    ADD(time_mean, "time_mean", TF_COL_F64)
    ADD(time_rsd, "time_rsd", TF_COL_F64)
    c->noisy = -1;
    if (optional & TF_RESULTS_NOISY)
        ADD(noisy, "noisy", TF_COL_U8)
    ADD(compile_time, "compile_time", TF_COL_F64)
    ADD(device_time, "device_time", TF_COL_F64)
    ADD(registers, "registers", TF_COL_I32)
    ADD(shared_bytes, "shared_bytes", TF_COL_I64)
    ADD(spill_bytes, "spill_bytes", TF_COL_I64)
    c->warnings = c->first_warning = -1;
    if (optional & TF_RESULTS_WARNINGS) {
        ADD(warnings, "warnings", TF_COL_I32)
        if ((c->first_warning = tf_table_add(t, "first_warning", TF_COL_STR, TF_WARNING_LEN,
                                             err)) < 0)
            return -1;
    }
    ADD(sm_clock, "sm_clock_mhz", TF_COL_F32)
    ADD(power, "power_w", TF_COL_F32)
    ADD(temperature, "temperature_c", TF_COL_F32)
    ADD(energy, "energy_j", TF_COL_F64)
    c->energy_status = -1;
    if (optional & TF_RESULTS_ENERGY_STATUS)
        ADD(energy_status, "energy_status", TF_COL_ENERGY_STATUS)
    ADD(flushed_l2, "flushed_l2", TF_COL_U8)
    ADD(throttled, "throttled", TF_COL_U8)
    ADD(phase, "phase", TF_COL_U8)
    ADD(timestamp, "timestamp", TF_COL_F64)
    c->metric0 = t->n;
    for (int m = 0; m < ak->nmetrics; m++)
        if (tf_table_add(t, ak->metric_names[m], TF_COL_F64, 0, err) < 0)
            return -1;
    if ((c->message = tf_table_add(t, "message", TF_COL_STR, TF_MESSAGE_LEN, err)) < 0)
        return -1;
#undef ADD
    return 0;
}
