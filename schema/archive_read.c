/* archive_read.c - tf_archive_read: an HDF5 archive back into the model, checking everything.
 *
 * A missing, truncated, damaged or foreign file is an error that says so,
 * never a crash (tests/fuzz feeds it such files). The root attributes come
 * first (format, schema version, archive id); then each table is opened by
 * name and its columns found by NAME with the right class (archive_table.c),
 * so column order in the file does not matter. Unpack callbacks fill the
 * model block by block and check every cross reference as they go: ids equal
 * to the row index; a result's run, device, problem, configuration and status
 * in range; parameter columns that agree with the configuration index. Parts
 * older archives lack (runs.replay_source, the runs' job settings,
 * problems.default_config, results.noisy and results.energy_status, /plan,
 * /sessions, /session_devices, /run_kernels, archive_id, checkpoint) are read
 * where present. Kernels come back in the
 * order they were written, or by name for files that do not track it. */
#include "archive.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive_h5.h"
#include "archive_internal.h"
#include "archive_layout.h"
#include "status.h"

struct read_ctx {
    struct tf_archive *a;
    struct tf_archive_kernel *ak;
    struct tf_results_cols c;
    const char *path;
    int *digits;
    uint64_t cartesian;
    char **plan_names;   /* /plan's kernel column until plan_resolve */
    int nplan_names;
    int default_col;     /* problems' `default_config` column; -1: absent (older archive) */
    struct tf_runs_cols runs_cols; /* /runs' later columns; -1: absent (older archive) */
    char **rk_names;     /* /run_kernels' kernel column until run_kernels_resolve */
    int nrk_names;
};

static int check_id(const struct tf_table *t, const unsigned char *buf, uint64_t o, uint64_t i,
                    struct tf_error *err)
{
    uint32_t id;
    TF_GET(t, buf, o, 0, id);
    if ((uint64_t)id != i)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s row %llu has id %u (ids must "
                            "equal the row index)", t->file, t->what, (unsigned long long)i, id);
    return 0;
}

/* A zeroed array for the `n` rows of table `what`, or NULL and an error. Not
 * tf_xcalloc: a row count the file claims (tf_table_read checks that its
 * rows are stored, but a compressed file stores zeros cheaply) must be an
 * error that names the table, not an abort of status, query or merge. */
static void *rows_alloc(uint64_t n, size_t size, const char *path, const char *what,
                        struct tf_error *err)
{
    void *p = n < SIZE_MAX / size ? calloc((size_t)(n ? n : 1), size) : NULL;
    if (p == NULL)
        tf_error_set(err, TF_ERR_NOMEM, "%s: no memory for the %llu rows of %s (a damaged "
                     "file?)", path, (unsigned long long)n, what);
    return p;
}

static int devices_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > INT32_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /devices has %llu rows", rc->path,
                            (unsigned long long)n);
    rc->a->devices = rows_alloc(n, sizeof *rc->a->devices, rc->path, "/devices", err);
    if (rc->a->devices == NULL)
        return -1;
    rc->a->ndevices = (int)n;
    return 0;
}

static int devices_unpack(void *ctx, const struct tf_table *t, const unsigned char *buf,
                          uint64_t lo, uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_device *d = &rc->a->devices[i];
        uint64_t r = i - lo;
        if (check_id(t, buf, r, i, err) != 0)
            return -1;
        tf_table_get_str(t, buf, r, DEV_BACKEND, d->backend, sizeof d->backend);
        tf_table_get_str(t, buf, r, DEV_VENDOR, d->vendor, sizeof d->vendor);
        tf_table_get_str(t, buf, r, DEV_NAME, d->name, sizeof d->name);
        tf_table_get_str(t, buf, r, DEV_ARCH, d->arch, sizeof d->arch);
        tf_table_get_str(t, buf, r, DEV_UUID, d->uuid, sizeof d->uuid);
        tf_table_get_str(t, buf, r, DEV_PCI_BUS, d->pci_bus, sizeof d->pci_bus);
        tf_table_get_str(t, buf, r, DEV_HOST, d->host, sizeof d->host);
        TF_GET(t, buf, r, DEV_MEMORY, d->memory_bytes);
        TF_GET(t, buf, r, DEV_CUS, d->compute_units);
        tf_table_get_str(t, buf, r, DEV_DRIVER, d->driver_version, sizeof d->driver_version);
        tf_table_get_str(t, buf, r, DEV_RUNTIME, d->runtime_version, sizeof d->runtime_version);
        tf_table_get_str(t, buf, r, DEV_COMPILER, d->compiler_version, sizeof d->compiler_version);
        for (int p = 0; p < TF_DEVPROP_COUNT && DEV_PROP0 + p < t->n; p++)
            TF_GET(t, buf, r, DEV_PROP0 + p, d->props[p]);
        /* an archive from before the column: a multiprocessor holds at least
         * the shared memory one block may opt in to */
        if (DEV_PROP0 + TF_DEVPROP_MAX_SHARED_PER_SM >= t->n)
            d->props[TF_DEVPROP_MAX_SHARED_PER_SM] = d->props[TF_DEVPROP_MAX_SHARED_OPTIN];
    }
    return 0;
}

static int runs_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > INT32_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /runs has %llu rows", rc->path,
                            (unsigned long long)n);
    rc->a->runs = rows_alloc(n, sizeof *rc->a->runs, rc->path, "/runs", err);
    if (rc->a->runs == NULL)
        return -1;
    rc->a->nruns = (int)n;
    return 0;
}

static int plan_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > INT32_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /plan has %llu rows", rc->path,
                            (unsigned long long)n);
    rc->a->plans = rows_alloc(n, sizeof *rc->a->plans, rc->path, "/plan", err);
    rc->plan_names = rows_alloc(n, sizeof *rc->plan_names, rc->path, "/plan", err);
    if (rc->a->plans == NULL || rc->plan_names == NULL)
        return -1;
    rc->a->nplans = (int)n;
    return 0;
}

/* Kernel names are resolved once the kernels are read (plan_resolve). */
static int plan_unpack(void *ctx, const struct tf_table *t, const unsigned char *buf, uint64_t lo,
                       uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_archive_plan *p = &rc->a->plans[i];
        uint64_t r = i - lo;
        char name[129];
        TF_GET(t, buf, r, PLAN_RUN, p->run);
        tf_table_get_str(t, buf, r, PLAN_KERNEL, name, sizeof name);
        TF_GET(t, buf, r, PLAN_PROBLEM, p->problem);
        TF_GET(t, buf, r, PLAN_DEVICE, p->device);
        TF_GET(t, buf, r, PLAN_PLANNED, p->planned);
        p->kernel = UINT32_MAX;
        rc->plan_names[i] = tf_xstrdup(name);
        rc->nplan_names = (int)i + 1;
    }
    return 0;
}

static int plan_resolve(struct read_ctx *rc, struct tf_error *err)
{
    struct tf_archive *a = rc->a;
    for (int i = 0; i < a->nplans; i++) {
        struct tf_archive_plan *p = &a->plans[i];
        for (int k = 0; k < a->nkernels && p->kernel == UINT32_MAX; k++)
            if (strcmp(a->kernels[k].name, rc->plan_names[i]) == 0)
                p->kernel = (uint32_t)k;
        if (p->kernel == UINT32_MAX || p->run >= (uint32_t)a->nruns ||
            p->device >= (uint32_t)a->ndevices ||
            p->problem >= (uint32_t)a->kernels[p->kernel].nproblems)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: /plan row %d names a run, kernel, "
                                "problem or device the archive does not have (damaged file?)",
                                rc->path, i);
    }
    return 0;
}

static int runs_unpack(void *ctx, const struct tf_table *t, const unsigned char *buf, uint64_t lo,
                       uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_archive_run *run = &rc->a->runs[i];
        uint64_t r = i - lo;
        if (check_id(t, buf, r, i, err) != 0)
            return -1;
        tf_table_get_str(t, buf, r, RUN_JOB_NAME, run->job_name, sizeof run->job_name);
        tf_table_get_str(t, buf, r, RUN_JOB_HASH, run->job_hash, sizeof run->job_hash);
        TF_GET(t, buf, r, RUN_START_UNIX, run->start);
        TF_GET(t, buf, r, RUN_END_UNIX, run->end);
        tf_table_get_str(t, buf, r, RUN_COMMAND, run->command, sizeof run->command);
        tf_table_get_str(t, buf, r, RUN_SLURM, run->slurm_job_id, sizeof run->slurm_job_id);
        TF_GET(t, buf, r, RUN_RANKS, run->ranks);
        tf_table_get_str(t, buf, r, RUN_VERSION, run->tunefarm_version,
                         sizeof run->tunefarm_version);
        const struct tf_runs_cols *c = &rc->runs_cols;
        if (c->replay >= 0)
            tf_table_get_str(t, buf, r, c->replay, run->replay_source, sizeof run->replay_source);
        if (c->strategy >= 0) {
            tf_table_get_str(t, buf, r, c->strategy, run->search_strategy,
                             sizeof run->search_strategy);
            TF_GET(t, buf, r, c->seed, run->search_seed);
            TF_GET(t, buf, r, c->budget, run->search_budget);
            tf_table_get_str(t, buf, r, c->search, run->search, sizeof run->search);
            tf_table_get_str(t, buf, r, c->measure, run->measure, sizeof run->measure);
            tf_table_get_str(t, buf, r, c->screen, run->screen, sizeof run->screen);
        }
    }
    return 0;
}

static int sessions_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > INT32_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /sessions has %llu rows", rc->path,
                            (unsigned long long)n);
    rc->a->sessions = rows_alloc(n, sizeof *rc->a->sessions, rc->path, "/sessions", err);
    if (rc->a->sessions == NULL)
        return -1;
    rc->a->nsessions = (int)n;
    return 0;
}

static int sessions_unpack(void *ctx, const struct tf_table *t, const unsigned char *buf,
                           uint64_t lo, uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_archive_session *s = &rc->a->sessions[i];
        uint64_t r = i - lo;
        TF_GET(t, buf, r, SES_RUN, s->run);
        TF_GET(t, buf, r, SES_START_UNIX, s->start);
        TF_GET(t, buf, r, SES_END_UNIX, s->end);
        tf_table_get_str(t, buf, r, SES_COMMAND, s->command, sizeof s->command);
        tf_table_get_str(t, buf, r, SES_SLURM, s->slurm_job_id, sizeof s->slurm_job_id);
        TF_GET(t, buf, r, SES_RANKS, s->ranks);
        tf_table_get_str(t, buf, r, SES_VERSION, s->tunefarm_version, sizeof s->tunefarm_version);
        tf_table_get_str(t, buf, r, SES_HOST, s->host, sizeof s->host);
        if (s->run >= (uint32_t)rc->a->nruns)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s row %llu: column 'run' is "
                                "out of range", t->file, t->what, (unsigned long long)i);
    }
    return 0;
}

static int session_devices_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > INT32_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /session_devices has %llu rows", rc->path,
                            (unsigned long long)n);
    rc->a->session_devices = rows_alloc(n, sizeof *rc->a->session_devices, rc->path,
                                        "/session_devices", err);
    if (rc->a->session_devices == NULL)
        return -1;
    rc->a->nsession_devices = (int)n;
    return 0;
}

/* NaN (unknown, in the file) is 0 in the model; so is a negative value. */
static double known_or_zero(double v)
{
    return v > 0 && isfinite(v) ? v : 0;
}

static int session_devices_unpack(void *ctx, const struct tf_table *t, const unsigned char *buf,
                                  uint64_t lo, uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_archive_session_device *sd = &rc->a->session_devices[i];
        uint64_t r = i - lo;
        TF_GET(t, buf, r, SD_SESSION, sd->session);
        TF_GET(t, buf, r, SD_DEVICE, sd->device);
        if (sd->session >= (uint32_t)rc->a->nsessions || sd->device >= (uint32_t)rc->a->ndevices)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s row %llu: column '%s' is "
                                "out of range", t->file, t->what, (unsigned long long)i,
                                sd->session >= (uint32_t)rc->a->nsessions ? "session"
                                                                           : "device");
        /* The device as described in that session: its identity from /devices. */
        struct tf_device *d = &sd->d;
        *d = rc->a->devices[sd->device];
        tf_table_get_str(t, buf, r, SD_DRIVER, d->driver_version, sizeof d->driver_version);
        tf_table_get_str(t, buf, r, SD_RUNTIME, d->runtime_version, sizeof d->runtime_version);
        tf_table_get_str(t, buf, r, SD_COMPILER, d->compiler_version, sizeof d->compiler_version);
        tf_table_get_str(t, buf, r, SD_VERSION, d->tunefarm_version, sizeof d->tunefarm_version);
        TF_GET(t, buf, r, SD_CLOCK, d->clock_mhz);
        TF_GET(t, buf, r, SD_MEMORY_CLOCK, d->memory_clock_mhz);
        TF_GET(t, buf, r, SD_POWER_LIMIT, d->power_limit_w);
        d->clock_mhz = known_or_zero(d->clock_mhz);
        d->memory_clock_mhz = known_or_zero(d->memory_clock_mhz);
        d->power_limit_w = known_or_zero(d->power_limit_w);
        tf_table_get_str(t, buf, r, SD_CLOCK_POLICY, d->clock_policy, sizeof d->clock_policy);
    }
    return 0;
}

static int run_kernels_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > INT32_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /run_kernels has %llu rows", rc->path,
                            (unsigned long long)n);
    rc->a->run_kernels = rows_alloc(n, sizeof *rc->a->run_kernels, rc->path, "/run_kernels",
                                    err);
    rc->rk_names = rows_alloc(n, sizeof *rc->rk_names, rc->path, "/run_kernels", err);
    if (rc->a->run_kernels == NULL || rc->rk_names == NULL)
        return -1;
    rc->a->nrun_kernels = (int)n;
    return 0;
}

/* Kernel names are resolved once the kernels are read (run_kernels_resolve). */
static int run_kernels_unpack(void *ctx, const struct tf_table *t, const unsigned char *buf,
                              uint64_t lo, uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_archive_run_kernel *rk = &rc->a->run_kernels[i];
        uint64_t r = i - lo;
        char name[129];
        TF_GET(t, buf, r, RK_RUN, rk->run);
        tf_table_get_str(t, buf, r, RK_KERNEL, name, sizeof name);
        tf_table_get_str(t, buf, r, RK_SOURCE_HASH, rk->source_hash, sizeof rk->source_hash);
        rk->kernel = UINT32_MAX;
        rc->rk_names[i] = tf_xstrdup(name);
        rc->nrk_names = (int)i + 1;
    }
    return 0;
}

static int run_kernels_resolve(struct read_ctx *rc, struct tf_error *err)
{
    struct tf_archive *a = rc->a;
    for (int i = 0; i < a->nrun_kernels; i++) {
        struct tf_archive_run_kernel *rk = &a->run_kernels[i];
        for (int k = 0; k < a->nkernels && rk->kernel == UINT32_MAX; k++)
            if (strcmp(a->kernels[k].name, rc->rk_names[i]) == 0)
                rk->kernel = (uint32_t)k;
        if (rk->kernel == UINT32_MAX || rk->run >= (uint32_t)a->nruns)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: /run_kernels row %d names a run or "
                                "kernel the archive does not have (damaged file?)",
                                rc->path, i);
    }
    return 0;
}

static int problems_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > INT32_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /kernels/%s/problems has %llu rows",
                            rc->path, rc->ak->name, (unsigned long long)n);
    rc->ak->problems = rows_alloc(n, sizeof *rc->ak->problems, rc->path, "a kernel's problems",
                                  err);
    if (rc->ak->problems == NULL)
        return -1;
    rc->ak->nproblems = (int)n;
    for (uint64_t i = 0; i < n; i++)
        if ((rc->ak->problems[i].sizes = rows_alloc((uint64_t)rc->ak->nsizes, sizeof(int64_t),
                                                    rc->path, "a kernel's problems",
                                                    err)) == NULL)
            return -1;
    return 0;
}

static int problems_unpack(void *ctx, const struct tf_table *t, const unsigned char *buf,
                           uint64_t lo, uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_archive_problem *p = &rc->ak->problems[i];
        if (check_id(t, buf, i - lo, i, err) != 0)
            return -1;
        tf_table_get_str(t, buf, i - lo, 1, p->name, sizeof p->name);
        for (int s = 0; s < rc->ak->nsizes; s++)
            TF_GET(t, buf, i - lo, 2 + s, p->sizes[s]);
        if (rc->default_col < 0) {
            /* An older archive: its one default held for every problem. */
            p->has_default = rc->ak->has_default;
            p->default_index = rc->ak->has_default ? rc->ak->default_index : 0;
            continue;
        }
        uint64_t def;
        TF_GET(t, buf, i - lo, rc->default_col, def);
        if (def != TF_ARCHIVE_NO_DEFAULT && def >= rc->cartesian)
            return tf_error_set(err, TF_ERR_SCHEMA,
                                "%s: dataset %s row %llu: column 'default_config' (%llu) is out "
                                "of range: the space has %llu configurations, and %llu means "
                                "none",
                                t->file, t->what, (unsigned long long)i, (unsigned long long)def,
                                (unsigned long long)rc->cartesian,
                                (unsigned long long)TF_ARCHIVE_NO_DEFAULT);
        p->has_default = def != TF_ARCHIVE_NO_DEFAULT;
        p->default_index = p->has_default ? def : 0;
    }
    return 0;
}

static int results_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > SIZE_MAX / sizeof(struct tf_archive_row))
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /kernels/%s/results has %llu rows",
                            rc->path, rc->ak->name, (unsigned long long)n);
    /* Not tf_xmalloc: a hostile row count must be an error, not an abort. */
    rc->ak->rows = malloc((size_t)(n ? n : 1) * sizeof *rc->ak->rows);
    if (rc->ak->rows == NULL)
        return tf_error_set(err, TF_ERR_NOMEM, "%s: no memory for the %llu rows of "
                            "/kernels/%s/results", rc->path, (unsigned long long)n, rc->ak->name);
    rc->ak->nrows = rc->ak->cap = n;
    return 0;
}

static int results_unpack(void *ctx, const struct tf_table *t, const unsigned char *buf,
                          uint64_t lo, uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    const struct tf_archive_kernel *ak = rc->ak;
    const struct tf_results_cols *c = &rc->c;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_archive_row *row = &rc->ak->rows[i];
        struct tf_result *r = &row->r;
        uint64_t o = i - lo;
        memset(row, 0, sizeof *row);
        TF_GET(t, buf, o, c->run, row->run);
        TF_GET(t, buf, o, c->device, row->device);
        TF_GET(t, buf, o, c->problem, r->problem);
        TF_GET(t, buf, o, c->config, r->config);
        TF_GET(t, buf, o, c->status, r->status);
        TF_GET(t, buf, o, c->samples, r->samples);
        TF_GET(t, buf, o, c->time_median, r->time_median);
        TF_GET(t, buf, o, c->time_min, r->time_min);
        TF_GET(t, buf, o, c->time_mean, r->time_mean);
        TF_GET(t, buf, o, c->time_rsd, r->time_rsd);
        if (c->noisy >= 0) /* older archives lack it: not marked */
            TF_GET(t, buf, o, c->noisy, r->noisy);
        TF_GET(t, buf, o, c->compile_time, r->compile_time);
        TF_GET(t, buf, o, c->device_time, r->device_time);
        TF_GET(t, buf, o, c->registers, r->registers);
        TF_GET(t, buf, o, c->shared_bytes, r->shared_bytes);
        TF_GET(t, buf, o, c->spill_bytes, r->spill_bytes);
        r->warnings = -1; /* unknown in archives written before the column */
        if (c->warnings >= 0) {
            TF_GET(t, buf, o, c->warnings, r->warnings);
            tf_table_get_str(t, buf, o, c->first_warning, r->first_warning,
                             sizeof r->first_warning);
        }
        TF_GET(t, buf, o, c->sm_clock, r->sm_clock_mhz);
        TF_GET(t, buf, o, c->power, r->power_w);
        TF_GET(t, buf, o, c->temperature, r->temperature_c);
        TF_GET(t, buf, o, c->energy, r->energy_j);
        r->energy_status = TF_ENERGY_UNKNOWN; /* older archives lack it: rows do not say */
        if (c->energy_status >= 0)
            TF_GET(t, buf, o, c->energy_status, r->energy_status);
        TF_GET(t, buf, o, c->flushed_l2, r->flushed_l2);
        TF_GET(t, buf, o, c->throttled, r->throttled);
        TF_GET(t, buf, o, c->phase, r->phase);
        TF_GET(t, buf, o, c->timestamp, r->timestamp);
        for (int m = 0; m < TF_MAX_METRICS; m++)
            r->metrics[m] = NAN;
        for (int m = 0; m < ak->nmetrics; m++)
            TF_GET(t, buf, o, c->metric0 + m, r->metrics[m]);
        tf_table_get_str(t, buf, o, c->message, r->message, sizeof r->message);

        if (r->noisy > 1)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s row %llu: column 'noisy' "
                                "is %u; expected 0 or 1", t->file, t->what,
                                (unsigned long long)i, (unsigned)r->noisy);
        const char *bad = row->run >= (uint32_t)rc->a->nruns        ? "run"
                          : row->device >= (uint32_t)rc->a->ndevices ? "device"
                          : r->problem >= (uint32_t)ak->nproblems    ? "problem"
                          : r->config >= rc->cartesian               ? "config"
                          : r->status >= TF_STATUS_COUNT             ? "status"
                          : r->energy_status >= TF_ENERGY_COUNT      ? "energy_status"
                                                                     : NULL;
        if (bad)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s row %llu: column '%s' is "
                                "out of range", t->file, t->what, (unsigned long long)i, bad);
        /* The parameter columns are derived from `config`; disagreement means the
         * file was edited or damaged, and rows would silently mean two things. */
        tf_archive_decode(ak, r->config, rc->digits);
        for (int p = 0; p < ak->nparams; p++) {
            const struct tf_param *pa = &ak->params[p];
            int same;
            if (pa->kind == TF_PARAM_INT) {
                int64_t v;
                TF_GET(t, buf, o, c->param0 + p, v);
                same = v == pa->ints[rc->digits[p]];
            } else {
                char s[TF_ARCHIVE_ENUM_LEN + 1];
                tf_table_get_str(t, buf, o, c->param0 + p, s, sizeof s);
                same = strcmp(s, pa->strings[rc->digits[p]]) == 0;
            }
            if (!same)
                return tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s row %llu: column '%s' "
                                    "disagrees with config %llu", t->file, t->what,
                                    (unsigned long long)i, pa->name,
                                    (unsigned long long)r->config);
        }
    }
    return 0;
}

static int read_kernel(hid_t kernels, const char *name, struct tf_archive *a, const char *path,
                       struct tf_error *err)
{
    hid_t g = H5I_INVALID_HID;
    struct tf_table t;
    struct read_ctx rc;
    char objname[320];
    char **pnames = NULL;
    int npnames = 0, ret = -1;
    memset(&t, 0, sizeof t);
    memset(&rc, 0, sizeof rc);
    snprintf(objname, sizeof objname, "/kernels/%s", name);

    /* Owned by the archive from here on, so `a`'s destroy frees a half-read kernel. */
    a->kernels = tf_xrealloc(a->kernels, (size_t)(a->nkernels + 1) * sizeof *a->kernels);
    struct tf_archive_kernel *ak = &a->kernels[a->nkernels++];
    memset(ak, 0, sizeof *ak);
    ak->name = tf_xstrdup(name);

    g = H5Gopen2(kernels, name, H5P_DEFAULT);
    if (g < 0) {
        tf_h5_error(err, "%s: cannot open group %s", path, objname);
        goto fail;
    }
    if (tf_h5_attr_read_string(g, objname, "source_hash", ak->source_hash, sizeof ak->source_hash,
                               path, err) != 0 ||
        tf_h5_attr_read_strings(g, objname, "parameter_names", 1, &pnames, &npnames, path, err) !=
            0 ||
        tf_h5_attr_read_strings(g, objname, "size_names", 1, &ak->size_names, &ak->nsizes, path,
                                err) != 0 ||
        tf_h5_attr_read_strings(g, objname, "constraints", 0, &ak->constraints, &ak->nconstraints,
                                path, err) != 0 ||
        tf_h5_attr_read_strings(g, objname, "metric_names", 1, &ak->metric_names, &ak->nmetrics,
                                path, err) != 0 ||
        tf_h5_attr_read_strings(g, objname, "size_defines", 0, &ak->define_sizes,
                                &ak->ndefine_sizes, path, err) != 0)
        goto fail;
    for (int i = 0; i < ak->ndefine_sizes; i++) {
        int known = 0;
        for (int z = 0; z < ak->nsizes; z++)
            known |= strcmp(ak->define_sizes[i], ak->size_names[z]) == 0;
        if (!known) {
            tf_error_set(err, TF_ERR_SCHEMA, "%s: %s: size_defines names '%.64s', which is not "
                         "one of its size_names", path, objname, ak->define_sizes[i]);
            goto fail;
        }
    }
    int has = tf_h5_attr_read_number(g, objname, "default_index", 0, H5T_INTEGER, H5T_NATIVE_UINT64,
                                     &ak->default_index, path, err);
    if (has < 0)
        goto fail;
    ak->has_default = has;

    ak->params = tf_xcalloc((size_t)npnames + 1, sizeof *ak->params);
    for (int i = 0; i < npnames; i++) {
        struct tf_param *p = &ak->params[i];
        char an[320];
        hid_t at = H5I_INVALID_HID, at_type = H5I_INVALID_HID;
        p->name = tf_xstrdup(pnames[i]);
        ak->nparams = i + 1;
        for (int j = 0; j < i; j++)
            if (strcmp(pnames[j], pnames[i]) == 0) {
                tf_error_set(err, TF_ERR_SCHEMA, "%s: %s names parameter '%s' twice", path,
                             objname, pnames[i]);
                goto fail;
            }
        snprintf(an, sizeof an, "values:%s", pnames[i]);
        if (tf_h5_attr_open(g, objname, an, 1, &at, path, err) <= 0)
            goto fail;
        at_type = H5Aget_type(at);
        H5T_class_t cls = at_type < 0 ? H5T_NO_CLASS : H5Tget_class(at_type);
        tf_h5_close(&at_type, H5Tclose);
        tf_h5_close(&at, H5Aclose);
        if (cls == H5T_INTEGER) {
            p->kind = TF_PARAM_INT;
            if (tf_h5_attr_read_i64s(g, objname, an, &p->ints, &p->count, path, err) != 0)
                goto fail;
        } else if (cls == H5T_STRING) {
            p->kind = TF_PARAM_ENUM;
            if (tf_h5_attr_read_strings(g, objname, an, 1, &p->strings, &p->count, path, err) != 0)
                goto fail;
        } else {
            tf_error_set(err, TF_ERR_SCHEMA,
                         "%s: attribute '%s' of %s is %s; expected integers "
                         "(int parameter) or strings (enum parameter)",
                         path, an, objname, tf_h5_class_name(cls));
            goto fail;
        }
    }
    if (tf_archive_kernel_validate(ak, path, err) != 0)
        goto fail;
    if (ak->has_default && ak->default_index >= tf_archive_cartesian(ak)) {
        tf_error_set(err, TF_ERR_SCHEMA, "%s: %s default_index %llu is out of range", path,
                     objname, (unsigned long long)ak->default_index);
        goto fail;
    }

    rc.a = a;
    rc.ak = ak;
    rc.path = path;
    rc.cartesian = tf_archive_cartesian(ak);
    rc.digits = tf_xcalloc((size_t)ak->nparams + 1, sizeof *rc.digits);
    /* An older archive whose kernel has a size named default_config has that
     * column without the per-problem defaults: it is theirs, read as a size. */
    int with_default = tf_table_has_column(g, "problems", "default_config");
    for (int z = 0; z < ak->nsizes && with_default; z++)
        if (strcmp(ak->size_names[z], "default_config") == 0)
            with_default = 0;
    if (tf_layout_problems(&t, ak, path, with_default, err) != 0)
        goto fail;
    rc.default_col = with_default ? 2 + ak->nsizes : -1;
    if (tf_table_read(g, "problems", &t, problems_sized, problems_unpack, &rc, err) != 0)
        goto fail;
    tf_table_free(&t);
    /* Columns added later are read where the file has them. (A parameter or
     * metric of an older archive named like one was refused above, by
     * tf_archive_kernel_validate, with the advice to rename it.) */
    unsigned optional = 0;
    if (tf_table_has_column(g, "results", "noisy"))
        optional |= TF_RESULTS_NOISY;
    if (tf_table_has_column(g, "results", "energy_status"))
        optional |= TF_RESULTS_ENERGY_STATUS;
    if (tf_table_has_column(g, "results", "warnings") &&
        tf_table_has_column(g, "results", "first_warning"))
        optional |= TF_RESULTS_WARNINGS;
    if (tf_layout_results(&t, &rc.c, ak, path, optional, err) != 0 ||
        tf_table_read(g, "results", &t, results_sized, results_unpack, &rc, err) != 0)
        goto fail;
    ret = 0;
fail:
    free(rc.digits);
    tf_archive_strings_free(pnames, npnames);
    tf_table_free(&t);
    tf_h5_close(&g, H5Gclose);
    return ret;
}

static int read_kernels(hid_t f, struct tf_archive *a, const char *path, struct tf_error *err)
{
    hid_t kernels = H5I_INVALID_HID;
    H5G_info_t info;
    int rc = -1;
    if (H5Lexists(f, "kernels", H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: archive has no group /kernels", path);
    }
    kernels = H5Gopen2(f, "kernels", H5P_DEFAULT);
    if (kernels < 0 || H5Gget_info(kernels, &info) < 0) {
        tf_h5_error(err, "%s: cannot open group /kernels", path);
        goto fail;
    }
    /* Our files track creation order; a file rewritten by other tools may not. */
    H5_index_t order = H5_INDEX_CRT_ORDER;
    if (info.nlinks > 0 &&
        H5Lget_name_by_idx(kernels, ".", order, H5_ITER_INC, 0, NULL, 0, H5P_DEFAULT) < 0) {
        H5Eclear2(H5E_DEFAULT);
        order = H5_INDEX_NAME;
    }
    for (hsize_t i = 0; i < info.nlinks; i++) {
        char name[256];
        ssize_t n = H5Lget_name_by_idx(kernels, ".", order, H5_ITER_INC, i, name, sizeof name,
                                       H5P_DEFAULT);
        if (n < 0 || (size_t)n >= sizeof name) {
            tf_h5_error(err, "%s: cannot read the name of kernel %llu under /kernels", path,
                        (unsigned long long)i);
            goto fail;
        }
        if (read_kernel(kernels, name, a, path, err) != 0)
            goto fail;
    }
    rc = 0;
fail:
    tf_h5_close(&kernels, H5Gclose);
    return rc;
}

static int read_root(hid_t f, struct tf_archive *a, const char *path, struct tf_error *err)
{
    char format[64];
    htri_t ex = H5Aexists(f, "format");
    if (ex < 0)
        return tf_h5_error(err, "%s: cannot read the root attributes (damaged file?)", path);
    if (ex == 0) {
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "%s is an HDF5 file but not a tunefarm archive (no 'format' attribute)",
                            path);
    }
    if (tf_h5_attr_read_string(f, "/", "format", format, sizeof format, path, err) != 0) {
        char why[sizeof err->message];
        tf_strlcpy(why, err ? err->message : "", sizeof why);
        return tf_error_set(err, TF_ERR_SCHEMA, "%s is an HDF5 file but not a tunefarm archive "
                            "(unreadable 'format' attribute: %s)", path, why);
    }
    if (strcmp(format, TF_ARCHIVE_FORMAT) != 0)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s is an HDF5 file but not a tunefarm archive "
                            "(format is '%s')", path, format);
    int32_t version = 0;
    if (tf_h5_attr_read_number(f, "/", "schema_version", 1, H5T_INTEGER, H5T_NATIVE_INT32, &version,
                               path, err) < 0)
        return -1;
    if (version < 1 || version > TF_ARCHIVE_SCHEMA_VERSION)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s has archive schema version %d; this tunefarm "
                            "reads version %d%s", path, (int)version, TF_ARCHIVE_SCHEMA_VERSION,
                            version > TF_ARCHIVE_SCHEMA_VERSION ? " (use a newer tunefarm)" : "");
    if (tf_h5_attr_read_number(f, "/", "created_unix", 1, H5T_FLOAT, H5T_NATIVE_DOUBLE, &a->created,
                               path, err) < 0 ||
        tf_h5_attr_read_string(f, "/", "tunefarm_version", a->tunefarm_version,
                               sizeof a->tunefarm_version, path, err) != 0 ||
        tf_h5_attr_read_number(f, "/", "checkpoint", 0, H5T_INTEGER, H5T_NATIVE_UINT64,
                               &a->checkpoint, path, err) < 0)
        return -1;
    /* Optional: archives written before ids have none (a->id stays ""). */
    htri_t has_id = H5Aexists(f, "archive_id");
    if (has_id < 0)
        return tf_h5_error(err, "%s: cannot read the root attributes (damaged file?)", path);
    if (has_id > 0) {
        char id[64];
        if (tf_h5_attr_read_string(f, "/", "archive_id", id, sizeof id, path, err) != 0)
            return -1;
        if (!tf_archive_valid_id(id))
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: root attribute 'archive_id' is '%s', "
                                "expected 32 lowercase hex digits (a damaged or hand-edited "
                                "file)", path, id);
        tf_strlcpy(a->id, id, sizeof a->id);
    }
    return 0;
}

struct tf_archive *tf_archive_read(const char *path, struct tf_error *err)
{
    struct tf_h5_quiet q;
    struct tf_archive *a = NULL;
    struct tf_table t;
    struct read_ctx rc;
    hid_t fapl = H5I_INVALID_HID, f = H5I_INVALID_HID;
    int ok = 0;
    memset(&t, 0, sizeof t);
    memset(&rc, 0, sizeof rc);

    struct stat st;
    if (stat(path, &st) != 0) {
        tf_error_set(err, TF_ERR_IO, "cannot open archive %s: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        tf_error_set(err, TF_ERR_IO, "archive %s is not a regular file", path);
        return NULL;
    }
    tf_h5_quiet_begin(&q);
    htri_t is = H5Fis_hdf5(path);
    if (is <= 0) {
        H5Eclear2(H5E_DEFAULT);
        tf_error_set(err, TF_ERR_SCHEMA, "%s is not an HDF5 file (so not a tunefarm archive)",
                     path);
        goto fail;
    }
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        tf_h5_error(err, "%s: cannot set up HDF5 file access", path);
        goto fail;
    }
    f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    if (f < 0) {
        tf_h5_error(err, "cannot open archive %s: truncated or damaged HDF5 file", path);
        goto fail;
    }
    a = tf_xcalloc(1, sizeof *a);
    rc.a = a;
    rc.path = path;
    if (read_root(f, a, path, err) != 0)
        goto fail;
    if (tf_layout_devices(&t, path,
                          tf_table_has_column(f, "devices",
                                              tf_devprop_name(TF_DEVPROP_MAX_SHARED_PER_SM))
                              ? TF_DEVPROP_COUNT
                              : TF_DEVPROP_MAX_SHARED_PER_SM,
                          err) != 0 ||
        tf_table_read(f, "devices", &t, devices_sized, devices_unpack, &rc, err) != 0)
        goto fail;
    tf_table_free(&t);
    if (tf_layout_runs(&t, &rc.runs_cols, path, tf_table_has_column(f, "runs", "replay_source"),
                       tf_table_has_column(f, "runs", "search_strategy"), err) != 0 ||
        tf_table_read(f, "runs", &t, runs_sized, runs_unpack, &rc, err) != 0)
        goto fail;
    tf_table_free(&t);
    /* /sessions, /session_devices and /run_kernels came with per-run provenance:
     * older archives lack them. */
    if (H5Lexists(f, "sessions", H5P_DEFAULT) > 0 &&
        (tf_layout_sessions(&t, path, err) != 0 ||
         tf_table_read(f, "sessions", &t, sessions_sized, sessions_unpack, &rc, err) != 0))
        goto fail;
    tf_table_free(&t);
    if (H5Lexists(f, "session_devices", H5P_DEFAULT) > 0 &&
        (tf_layout_session_devices(&t, path, err) != 0 ||
         tf_table_read(f, "session_devices", &t, session_devices_sized, session_devices_unpack,
                       &rc, err) != 0))
        goto fail;
    tf_table_free(&t);
    if (read_kernels(f, a, path, err) != 0)
        goto fail;
    if (H5Lexists(f, "run_kernels", H5P_DEFAULT) > 0 &&
        (tf_layout_run_kernels(&t, path, err) != 0 ||
         tf_table_read(f, "run_kernels", &t, run_kernels_sized, run_kernels_unpack, &rc, err) !=
             0 ||
         run_kernels_resolve(&rc, err) != 0))
        goto fail;
    tf_table_free(&t);
    /* /plan came with `tunefarm status`: older archives lack it. */
    htri_t has_plan = H5Lexists(f, "plan", H5P_DEFAULT);
    if (has_plan > 0 && (tf_layout_plan(&t, path, err) != 0 ||
                         tf_table_read(f, "plan", &t, plan_sized, plan_unpack, &rc, err) != 0 ||
                         plan_resolve(&rc, err) != 0))
        goto fail;
    H5Eclear2(H5E_DEFAULT);
    ok = 1;
fail:
    for (int i = 0; i < rc.nplan_names; i++)
        free(rc.plan_names[i]);
    free(rc.plan_names);
    for (int i = 0; i < rc.nrk_names; i++)
        free(rc.rk_names[i]);
    free(rc.rk_names);
    tf_table_free(&t);
    tf_h5_close(&f, H5Fclose);
    tf_h5_close(&fapl, H5Pclose);
    tf_h5_quiet_end(&q);
    if (!ok) {
        /* HDF5 could not read what should be there: say what to do. */
        const size_t len = strlen(err->message);
        if (err->code == TF_ERR_HDF5 && strstr(err->message, "unable to lock file") != NULL)
            snprintf(err->message + len, sizeof err->message - len,
                     "; another program (h5py?) holds the file open for writing: close it "
                     "and try again");
        else if (err->code == TF_ERR_HDF5) {
            /* The journal only where there is one: a source archive (a
             * warm start's, a merge's input) has none to speak of. */
            char journal[4200];
            struct stat jst;
            snprintf(journal, sizeof journal, "%s.journal", path);
            const bool has_journal = stat(journal, &jst) == 0;
            snprintf(err->message + len, sizeof err->message - len,
                     "; the file is damaged: restore it from a copy%s%s%s",
                     has_journal ? " (its journal, " : "", has_journal ? journal : "",
                     has_journal ? ", keeps the results since the last checkpoint)" : "");
        }
        tf_archive_destroy(a);
        return NULL;
    }
    return a;
}
