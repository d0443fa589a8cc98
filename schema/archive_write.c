/* archive_write.c - tf_archive_write: the whole model into an HDF5 file, atomically.
 *
 * The model is validated first (archive_validate.c): a model that would not
 * read back is refused before anything is written. Then come the root
 * attributes, /devices, /runs, /sessions, /session_devices, /run_kernels,
 * /plan and one group per kernel (its parameter
 * space as attributes, `problems`, and `results` growable and compressed),
 * each table through its description (archive_layout.c) and a pack callback
 * that fills one block of rows from the model; a result's parameter columns
 * are derived from its configuration index. HDF5 builds the file in memory;
 * its image is written to "<path>.tmp.<pid>" (its folder created if needed),
 * fsync'ed, renamed over `path` (schema/replace.h: a symbolic link followed,
 * the old file's mode kept) and the folder is fsync'ed, so a reader (or a
 * crash) only ever sees the old or the new file; on failure the temporary
 * file is removed and `path` is as it was. The 1.8 file format keeps the
 * archive readable by every HDF5 >= 1.8 and h5py. */
#include "archive.h"
#include "replace.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "archive_h5.h"
#include "archive_internal.h"
#include "archive_layout.h"

static void iso_time(double unix_s, char *out, size_t cap)
{
    out[0] = '\0';
    if (!tf_archive_time_ok(unix_s))
        return;
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (gmtime_r(&t, &tm) != NULL)
        strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

struct results_pack {
    const struct tf_archive_kernel *ak;
    struct tf_results_cols c;
    int *digits;
};

static int devices_pack(void *ctx, const struct tf_table *t, unsigned char *buf, uint64_t lo,
                        uint64_t hi, struct tf_error *err)
{
    const struct tf_archive *a = ctx;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_device *d = &a->devices[i];
        uint64_t r = i - lo;
        TF_PUT(t, buf, r, DEV_ID, uint32_t, (uint32_t)i);
        tf_table_put_str(t, buf, r, DEV_BACKEND, d->backend);
        tf_table_put_str(t, buf, r, DEV_VENDOR, d->vendor);
        tf_table_put_str(t, buf, r, DEV_NAME, d->name);
        tf_table_put_str(t, buf, r, DEV_ARCH, d->arch);
        tf_table_put_str(t, buf, r, DEV_UUID, d->uuid);
        tf_table_put_str(t, buf, r, DEV_PCI_BUS, d->pci_bus);
        tf_table_put_str(t, buf, r, DEV_HOST, d->host);
        TF_PUT(t, buf, r, DEV_MEMORY, uint64_t, d->memory_bytes);
        TF_PUT(t, buf, r, DEV_CUS, uint32_t, d->compute_units);
        tf_table_put_str(t, buf, r, DEV_DRIVER, d->driver_version);
        tf_table_put_str(t, buf, r, DEV_RUNTIME, d->runtime_version);
        tf_table_put_str(t, buf, r, DEV_COMPILER, d->compiler_version);
        for (int p = 0; p < TF_DEVPROP_COUNT; p++)
            TF_PUT(t, buf, r, DEV_PROP0 + p, int64_t, d->props[p]);
    }
    return 0;
}

struct runs_pack {
    const struct tf_archive *a;
    struct tf_runs_cols c;
};

static int runs_pack(void *ctx, const struct tf_table *t, unsigned char *buf, uint64_t lo,
                     uint64_t hi, struct tf_error *err)
{
    const struct runs_pack *rp = ctx;
    const struct tf_runs_cols *c = &rp->c;
    char iso[TF_ARCHIVE_ISO_LEN];
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_archive_run *run = &rp->a->runs[i];
        uint64_t r = i - lo;
        TF_PUT(t, buf, r, RUN_ID, uint32_t, (uint32_t)i);
        tf_table_put_str(t, buf, r, RUN_JOB_NAME, run->job_name);
        tf_table_put_str(t, buf, r, RUN_JOB_HASH, run->job_hash);
        TF_PUT(t, buf, r, RUN_START_UNIX, double, run->start);
        TF_PUT(t, buf, r, RUN_END_UNIX, double, run->end);
        iso_time(run->start, iso, sizeof iso);
        tf_table_put_str(t, buf, r, RUN_START, iso);
        iso_time(run->end, iso, sizeof iso);
        tf_table_put_str(t, buf, r, RUN_END, iso);
        tf_table_put_str(t, buf, r, RUN_COMMAND, run->command);
        tf_table_put_str(t, buf, r, RUN_SLURM, run->slurm_job_id);
        TF_PUT(t, buf, r, RUN_RANKS, uint32_t, run->ranks);
        tf_table_put_str(t, buf, r, RUN_VERSION, run->tunefarm_version);
        tf_table_put_str(t, buf, r, c->replay, run->replay_source);
        tf_table_put_str(t, buf, r, c->strategy, run->search_strategy);
        TF_PUT(t, buf, r, c->seed, uint64_t, run->search_seed);
        TF_PUT(t, buf, r, c->budget, uint64_t, run->search_budget);
        tf_table_put_str(t, buf, r, c->search, run->search);
        tf_table_put_str(t, buf, r, c->measure, run->measure);
        tf_table_put_str(t, buf, r, c->screen, run->screen);
    }
    return 0;
}

static int sessions_pack(void *ctx, const struct tf_table *t, unsigned char *buf, uint64_t lo,
                         uint64_t hi, struct tf_error *err)
{
    const struct tf_archive *a = ctx;
    char iso[TF_ARCHIVE_ISO_LEN];
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_archive_session *s = &a->sessions[i];
        uint64_t r = i - lo;
        TF_PUT(t, buf, r, SES_RUN, uint32_t, s->run);
        TF_PUT(t, buf, r, SES_START_UNIX, double, s->start);
        TF_PUT(t, buf, r, SES_END_UNIX, double, s->end);
        iso_time(s->start, iso, sizeof iso);
        tf_table_put_str(t, buf, r, SES_START, iso);
        iso_time(s->end, iso, sizeof iso);
        tf_table_put_str(t, buf, r, SES_END, iso);
        tf_table_put_str(t, buf, r, SES_COMMAND, s->command);
        tf_table_put_str(t, buf, r, SES_SLURM, s->slurm_job_id);
        TF_PUT(t, buf, r, SES_RANKS, uint32_t, s->ranks);
        tf_table_put_str(t, buf, r, SES_VERSION, s->tunefarm_version);
        tf_table_put_str(t, buf, r, SES_HOST, s->host);
    }
    return 0;
}

/* The model says 0 for a clock or power it does not know; the file, like every
 * float column of the archive, NaN. */
static double unknown_nan(double v)
{
    return v > 0 ? v : NAN;
}

static int session_devices_pack(void *ctx, const struct tf_table *t, unsigned char *buf,
                                uint64_t lo, uint64_t hi, struct tf_error *err)
{
    const struct tf_archive *a = ctx;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_archive_session_device *sd = &a->session_devices[i];
        uint64_t r = i - lo;
        TF_PUT(t, buf, r, SD_SESSION, uint32_t, sd->session);
        TF_PUT(t, buf, r, SD_DEVICE, uint32_t, sd->device);
        tf_table_put_str(t, buf, r, SD_DRIVER, sd->d.driver_version);
        tf_table_put_str(t, buf, r, SD_RUNTIME, sd->d.runtime_version);
        tf_table_put_str(t, buf, r, SD_COMPILER, sd->d.compiler_version);
        tf_table_put_str(t, buf, r, SD_VERSION, sd->d.tunefarm_version);
        TF_PUT(t, buf, r, SD_CLOCK, double, unknown_nan(sd->d.clock_mhz));
        TF_PUT(t, buf, r, SD_MEMORY_CLOCK, double, unknown_nan(sd->d.memory_clock_mhz));
        TF_PUT(t, buf, r, SD_POWER_LIMIT, double, unknown_nan(sd->d.power_limit_w));
        tf_table_put_str(t, buf, r, SD_CLOCK_POLICY, sd->d.clock_policy);
    }
    return 0;
}

static int run_kernels_pack(void *ctx, const struct tf_table *t, unsigned char *buf, uint64_t lo,
                            uint64_t hi, struct tf_error *err)
{
    const struct tf_archive *a = ctx;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_archive_run_kernel *rk = &a->run_kernels[i];
        uint64_t r = i - lo;
        TF_PUT(t, buf, r, RK_RUN, uint32_t, rk->run);
        tf_table_put_str(t, buf, r, RK_KERNEL, a->kernels[rk->kernel].name);
        tf_table_put_str(t, buf, r, RK_SOURCE_HASH, rk->source_hash);
    }
    return 0;
}

static int plan_pack(void *ctx, const struct tf_table *t, unsigned char *buf, uint64_t lo,
                     uint64_t hi, struct tf_error *err)
{
    const struct tf_archive *a = ctx;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_archive_plan *p = &a->plans[i];
        uint64_t r = i - lo;
        TF_PUT(t, buf, r, PLAN_RUN, uint32_t, p->run);
        tf_table_put_str(t, buf, r, PLAN_KERNEL, a->kernels[p->kernel].name);
        TF_PUT(t, buf, r, PLAN_PROBLEM, uint32_t, p->problem);
        TF_PUT(t, buf, r, PLAN_DEVICE, uint32_t, p->device);
        TF_PUT(t, buf, r, PLAN_PLANNED, uint64_t, p->planned);
    }
    return 0;
}

static int problems_pack(void *ctx, const struct tf_table *t, unsigned char *buf, uint64_t lo,
                         uint64_t hi, struct tf_error *err)
{
    const struct tf_archive_kernel *ak = ctx;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_archive_problem *p = &ak->problems[i];
        TF_PUT(t, buf, i - lo, 0, uint32_t, (uint32_t)i);
        tf_table_put_str(t, buf, i - lo, 1, p->name);
        for (int s = 0; s < ak->nsizes; s++)
            TF_PUT(t, buf, i - lo, 2 + s, int64_t, p->sizes[s]);
        TF_PUT(t, buf, i - lo, 2 + ak->nsizes, uint64_t,
               p->has_default ? p->default_index : TF_ARCHIVE_NO_DEFAULT);
    }
    return 0;
}

static int results_pack(void *ctx, const struct tf_table *t, unsigned char *buf, uint64_t lo,
                        uint64_t hi, struct tf_error *err)
{
    struct results_pack *rp = ctx;
    const struct tf_archive_kernel *ak = rp->ak;
    const struct tf_results_cols *c = &rp->c;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_archive_row *row = &ak->rows[i];
        const struct tf_result *r = &row->r;
        uint64_t o = i - lo;
        TF_PUT(t, buf, o, c->run, uint32_t, row->run);
        TF_PUT(t, buf, o, c->device, uint32_t, row->device);
        TF_PUT(t, buf, o, c->problem, uint32_t, r->problem);
        TF_PUT(t, buf, o, c->config, uint64_t, r->config);
        tf_archive_decode(ak, r->config, rp->digits);
        for (int p = 0; p < ak->nparams; p++) {
            const struct tf_param *pa = &ak->params[p];
            if (pa->kind == TF_PARAM_INT)
                TF_PUT(t, buf, o, c->param0 + p, int64_t, pa->ints[rp->digits[p]]);
            else
                tf_table_put_str(t, buf, o, c->param0 + p, pa->strings[rp->digits[p]]);
        }
        TF_PUT(t, buf, o, c->status, uint8_t, r->status);
        TF_PUT(t, buf, o, c->samples, uint32_t, r->samples);
        TF_PUT(t, buf, o, c->time_median, double, r->time_median);
        TF_PUT(t, buf, o, c->time_min, double, r->time_min);
        TF_PUT(t, buf, o, c->time_mean, double, r->time_mean);
        TF_PUT(t, buf, o, c->time_rsd, double, r->time_rsd);
        TF_PUT(t, buf, o, c->noisy, uint8_t, r->noisy);
        TF_PUT(t, buf, o, c->compile_time, double, r->compile_time);
        TF_PUT(t, buf, o, c->device_time, double, r->device_time);
        TF_PUT(t, buf, o, c->registers, int32_t, r->registers);
        TF_PUT(t, buf, o, c->shared_bytes, int64_t, r->shared_bytes);
        TF_PUT(t, buf, o, c->spill_bytes, int64_t, r->spill_bytes);
        TF_PUT(t, buf, o, c->warnings, int32_t, r->warnings);
        tf_table_put_str(t, buf, o, c->first_warning, r->first_warning);
        TF_PUT(t, buf, o, c->sm_clock, float, r->sm_clock_mhz);
        TF_PUT(t, buf, o, c->power, float, r->power_w);
        TF_PUT(t, buf, o, c->temperature, float, r->temperature_c);
        TF_PUT(t, buf, o, c->energy, double, r->energy_j);
        TF_PUT(t, buf, o, c->energy_status, uint8_t, r->energy_status);
        TF_PUT(t, buf, o, c->flushed_l2, uint8_t, r->flushed_l2);
        TF_PUT(t, buf, o, c->throttled, uint8_t, r->throttled);
        TF_PUT(t, buf, o, c->phase, uint8_t, r->phase);
        TF_PUT(t, buf, o, c->timestamp, double, r->timestamp);
        for (int m = 0; m < ak->nmetrics; m++)
            TF_PUT(t, buf, o, c->metric0 + m, double, r->metrics[m]);
        tf_table_put_str(t, buf, o, c->message, r->message);
    }
    return 0;
}

static int write_kernel(hid_t kernels, const struct tf_archive_kernel *ak, const char *path,
                        struct tf_error *err)
{
    hid_t g = H5I_INVALID_HID;
    struct tf_table t;
    struct results_pack rp;
    int rc = -1;
    memset(&t, 0, sizeof t);
    memset(&rp, 0, sizeof rp);

    g = H5Gcreate2(kernels, ak->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) {
        tf_h5_error(err, "%s: cannot create group /kernels/%s", path, ak->name);
        goto fail;
    }
    const char **pnames = tf_xcalloc((size_t)ak->nparams + 1, sizeof *pnames);
    for (int i = 0; i < ak->nparams; i++)
        pnames[i] = ak->params[i].name;
    const char *failed = NULL;
    if (tf_h5_attr_write_string(g, "source_hash", ak->source_hash) != 0)
        failed = "source_hash";
    else if (tf_h5_attr_write_strings(g, "parameter_names", pnames, ak->nparams, 0) != 0)
        failed = "parameter_names";
    else if (tf_h5_attr_write_strings(g, "size_names", (const char *const *)ak->size_names,
                                      ak->nsizes, 0) != 0)
        failed = "size_names";
    else if (tf_h5_attr_write_strings(g, "constraints", (const char *const *)ak->constraints,
                                      ak->nconstraints, 0) != 0)
        failed = "constraints";
    else if (tf_h5_attr_write_strings(g, "metric_names", (const char *const *)ak->metric_names,
                                      ak->nmetrics, 0) != 0)
        failed = "metric_names";
    else if (ak->ndefine_sizes > 0 &&
             tf_h5_attr_write_strings(g, "size_defines", (const char *const *)ak->define_sizes,
                                      ak->ndefine_sizes, 0) != 0)
        failed = "size_defines";
    else if (ak->has_default && tf_h5_attr_write_scalar(g, "default_index", H5T_STD_U64LE,
                                                        H5T_NATIVE_UINT64, &ak->default_index) != 0)
        failed = "default_index";
    free(pnames);
    for (int i = 0; failed == NULL && i < ak->nparams; i++) {
        const struct tf_param *p = &ak->params[i];
        char name[320];
        snprintf(name, sizeof name, "values:%s", p->name);
        int r =
            p->kind == TF_PARAM_INT
                ? tf_h5_attr_write_i64s(g, name, p->ints, p->count)
                : tf_h5_attr_write_strings(g, name, (const char *const *)p->strings, p->count, 0);
        if (r != 0)
            failed = p->name;
    }
    if (failed) {
        tf_h5_error(err, "%s: cannot write attribute '%s' of /kernels/%s", path, failed, ak->name);
        goto fail;
    }
    if (tf_layout_problems(&t, ak, path, 1, err) != 0 ||
        tf_table_write(g, "problems", &t, (uint64_t)ak->nproblems, 0, problems_pack, (void *)ak,
                       err) != 0)
        goto fail;
    tf_table_free(&t);
    rp.ak = ak;
    rp.digits = tf_xcalloc((size_t)ak->nparams + 1, sizeof *rp.digits);
    if (tf_layout_results(&t, &rp.c, ak, path, TF_RESULTS_ALL, err) != 0 ||
        tf_table_write(g, "results", &t, ak->nrows, 1, results_pack, &rp, err) != 0)
        goto fail;
    rc = 0;
fail:
    free(rp.digits);
    tf_table_free(&t);
    tf_h5_close(&g, H5Gclose);
    return rc;
}

static int write_contents(hid_t f, const struct tf_archive *a, const char *path,
                          struct tf_error *err)
{
    hid_t gcpl = H5I_INVALID_HID, kernels = H5I_INVALID_HID;
    struct tf_table t;
    int rc = -1;
    memset(&t, 0, sizeof t);

    char iso[TF_ARCHIVE_ISO_LEN];
    int32_t version = TF_ARCHIVE_SCHEMA_VERSION;
    iso_time(a->created, iso, sizeof iso);
    if (tf_h5_attr_write_string(f, "format", TF_ARCHIVE_FORMAT) != 0 ||
        tf_h5_attr_write_scalar(f, "schema_version", H5T_STD_I32LE, H5T_NATIVE_INT32, &version) !=
            0 ||
        tf_h5_attr_write_string(f, "created", iso) != 0 ||
        tf_h5_attr_write_scalar(f, "created_unix", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                                &a->created) != 0 ||
        tf_h5_attr_write_string(f, "tunefarm_version", a->tunefarm_version) != 0 ||
        tf_h5_attr_write_scalar(f, "checkpoint", H5T_STD_U64LE, H5T_NATIVE_UINT64,
                                &a->checkpoint) != 0 ||
        (a->id[0] != '\0' && tf_h5_attr_write_string(f, "archive_id", a->id) != 0)) {
        tf_h5_error(err, "%s: cannot write the root attributes", path);
        goto fail;
    }
    if (tf_layout_devices(&t, path, TF_DEVPROP_COUNT, err) != 0 ||
        tf_table_write(f, "devices", &t, (uint64_t)a->ndevices, 0, devices_pack, (void *)a, err) !=
            0)
        goto fail;
    tf_table_free(&t);
    struct runs_pack rp = {.a = a};
    if (tf_layout_runs(&t, &rp.c, path, 1, 1, err) != 0 ||
        tf_table_write(f, "runs", &t, (uint64_t)a->nruns, 0, runs_pack, &rp, err) != 0)
        goto fail;
    tf_table_free(&t);
    if (tf_layout_sessions(&t, path, err) != 0 ||
        tf_table_write(f, "sessions", &t, (uint64_t)a->nsessions, 0, sessions_pack, (void *)a,
                       err) != 0)
        goto fail;
    tf_table_free(&t);
    if (tf_layout_session_devices(&t, path, err) != 0 ||
        tf_table_write(f, "session_devices", &t, (uint64_t)a->nsession_devices, 0,
                       session_devices_pack, (void *)a, err) != 0)
        goto fail;
    tf_table_free(&t);
    if (tf_layout_run_kernels(&t, path, err) != 0 ||
        tf_table_write(f, "run_kernels", &t, (uint64_t)a->nrun_kernels, 0, run_kernels_pack,
                       (void *)a, err) != 0)
        goto fail;
    tf_table_free(&t);
    if (tf_layout_plan(&t, path, err) != 0 ||
        tf_table_write(f, "plan", &t, (uint64_t)a->nplans, 0, plan_pack, (void *)a, err) != 0)
        goto fail;
    tf_table_free(&t);
    /* Creation order lets the reader give back kernels in the model's order. */
    gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (gcpl < 0 ||
        H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0 ||
        (kernels = H5Gcreate2(f, "kernels", H5P_DEFAULT, gcpl, H5P_DEFAULT)) < 0) {
        tf_h5_error(err, "%s: cannot create group /kernels", path);
        goto fail;
    }
    for (int k = 0; k < a->nkernels; k++)
        if (write_kernel(kernels, &a->kernels[k], path, err) != 0)
            goto fail;
    rc = 0;
fail:
    tf_table_free(&t);
    tf_h5_close(&kernels, H5Gclose);
    tf_h5_close(&gcpl, H5Pclose);
    return rc;
}

/* mkdir -p of the folder that will hold `path`; the folder's name into `dir`. */
static int make_parent(const char *path, char *dir, size_t cap, struct tf_error *err)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        tf_strlcpy(dir, ".", cap);
        return 0;
    }
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= cap)
        return tf_error_set(err, TF_ERR_IO, "archive path '%s' is too long", path);
    memcpy(dir, path, n);
    dir[n] = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
                int e = errno;
                tf_error_set(err, TF_ERR_IO, "cannot create folder '%s' for archive '%s': %s", dir,
                             path, strerror(e));
                *p = saved;
                return -1;
            }
            *p = saved;
            if (saved == '\0')
                break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return tf_error_set(err, TF_ERR_IO, "cannot use '%s' as the folder of archive '%s': %s",
                            dir, path, errno ? strerror(errno) : "not a folder");
    return 0;
}

/* Bob Jenkins' lookup3 hashlittle(), the checksum of HDF5's version 2
 * superblock (the HDF5 file format specification, "Checksum"). */
static uint32_t lookup3(const unsigned char *k, size_t length)
{
#define ROT(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
    uint32_t a, b, c;
    a = b = c = 0xdeadbeef + (uint32_t)length;
    while (length > 12) {
        a += k[0] + ((uint32_t)k[1] << 8) + ((uint32_t)k[2] << 16) + ((uint32_t)k[3] << 24);
        b += k[4] + ((uint32_t)k[5] << 8) + ((uint32_t)k[6] << 16) + ((uint32_t)k[7] << 24);
        c += k[8] + ((uint32_t)k[9] << 8) + ((uint32_t)k[10] << 16) + ((uint32_t)k[11] << 24);
        a -= c, a ^= ROT(c, 4), c += b;
        b -= a, b ^= ROT(a, 6), a += c;
        c -= b, c ^= ROT(b, 8), b += a;
        a -= c, a ^= ROT(c, 16), c += b;
        b -= a, b ^= ROT(a, 19), a += c;
        c -= b, c ^= ROT(b, 4), b += a;
        length -= 12, k += 12;
    }
    if (length == 0)
        return c;
    unsigned char t[12] = {0};
    memcpy(t, k, length);
    a += t[0] + ((uint32_t)t[1] << 8) + ((uint32_t)t[2] << 16) + ((uint32_t)t[3] << 24);
    b += t[4] + ((uint32_t)t[5] << 8) + ((uint32_t)t[6] << 16) + ((uint32_t)t[7] << 24);
    c += t[8] + ((uint32_t)t[9] << 8) + ((uint32_t)t[10] << 16) + ((uint32_t)t[11] << 24);
    c ^= b, c -= ROT(b, 14);
    a ^= c, a -= ROT(c, 11);
    b ^= a, b -= ROT(a, 25);
    c ^= b, c -= ROT(b, 16);
    a ^= c, a -= ROT(c, 4);
    b ^= a, b -= ROT(a, 14);
    c ^= b, c -= ROT(b, 24);
#undef ROT
    return c;
}

/* HDF5 1.10's H5Fget_file_image clears the "open for writing" flag in the
 * image's version 2/3 superblock but keeps the checksum computed with it set,
 * and the image then fails to open ("incorrect metadata checksum"): checksum
 * the superblock again (signature, 4 bytes, four addresses, then the sum). */
static void superblock_resum(unsigned char *image, size_t size)
{
    if (size < 12 || (image[8] != 2 && image[8] != 3))
        return;
    const size_t n = 12 + 4 * (size_t)image[9];
    if (image[9] == 0 || image[9] > 16 || n + 4 > size)
        return;
    const uint32_t sum = lookup3(image, n);
    for (int i = 0; i < 4; i++)
        image[n + (size_t)i] = (unsigned char)(sum >> (8 * i));
}


static int fsync_path(const char *p, int is_dir, struct tf_error *err)
{
    int fd = open(p, O_RDONLY | O_CLOEXEC | (is_dir ? O_DIRECTORY : 0));
    if (fd < 0)
        return tf_error_set(err, TF_ERR_IO, "cannot open '%s' to sync it: %s", p, strerror(errno));
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    /* Some filesystems cannot sync a folder; the rename is then as durable as they allow. */
    if (rc != 0 && !(is_dir && (e == EINVAL || e == EROFS)))
        return tf_error_set(err, TF_ERR_IO, "cannot sync '%s': %s", p, strerror(e));
    return 0;
}

/* Test hook: TUNEFARM_TEST_CHECKPOINT_PAUSE=SECONDS sleeps while the temporary
 * file is half written (contents handed to HDF5, not yet flushed), so the fault
 * tests can SIGKILL a coordinator in the middle of a checkpoint for certain. */
static void test_pause(void)
{
    const char *v = getenv("TUNEFARM_TEST_CHECKPOINT_PAUSE");
    double s = v ? strtod(v, NULL) : 0;
    if (s > 0 && s < 3600) {
        struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
}

int tf_archive_write(const struct tf_archive *a, const char *path, struct tf_error *err)
{
    struct tf_h5_quiet q;
    hid_t fapl = H5I_INVALID_HID, f = H5I_INVALID_HID;
    char dir[4096];
    const char *tmp = NULL;
    void *image = NULL;
    int rc = -1, created = 0, fd = -1;

    struct tf_replace r;
    if (tf_archive_model_validate(a, path, err) != 0 ||
        make_parent(path, dir, sizeof dir, err) != 0 ||
        tf_replace_plan(&r, path, TF_REPLACE_ARCHIVE, err) != 0)
        return -1;
    /* The folder to sync is the real file's (a symbolic link's target's). */
    if (make_parent(r.target, dir, sizeof dir, err) != 0) {
        tf_replace_discard(&r);
        return -1;
    }
    tmp = r.tmp;
    /* Create it ourselves first: errno says "Permission denied" far better than HDF5. */
    fd = tf_replace_open(&r, path, err);
    if (fd < 0) {
        tf_replace_discard(&r);
        return -1;
    }
    created = 1;

    tf_h5_quiet_begin(&q);
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* In memory (the core driver, no backing store), then written by us: a
     * full disk or a quota is our write's errno, and HDF5 never holds a file
     * whose close failed (1.10 cannot drop one: it stays open, its space
     * held, and the library's exit handler crashes on it). STRONG: closing
     * the file on a failure path also closes whatever is left open. 1.8
     * format: readable by every h5py/HDF5 of the last decade, yet allows
     * large attributes (long value lists) and link creation order. */
    if (fapl < 0 || H5Pset_fapl_core(fapl, (size_t)1 << 20, 0) < 0 ||
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18) < 0) {
        tf_h5_error(err, "%s: cannot set up HDF5 file access", tmp);
        goto fail;
    }
    f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (f < 0) {
        tf_h5_error(err, "cannot create HDF5 file '%s'", tmp);
        goto fail;
    }
    if (write_contents(f, a, path, err) != 0)
        goto fail;
    test_pause();
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) {
        tf_h5_error(err, "%s: cannot flush", tmp);
        goto fail;
    }
    const ssize_t size = H5Fget_file_image(f, NULL, 0);
    if (size <= 0 || H5Fget_file_image(f, image = tf_xmalloc((size_t)size), (size_t)size) != size) {
        tf_h5_error(err, "%s: cannot take the file's image", tmp);
        goto fail;
    }
    herr_t closed = H5Fclose(f);
    f = H5I_INVALID_HID;
    if (closed < 0) {
        tf_h5_error(err, "%s: cannot close", tmp);
        goto fail;
    }
    superblock_resum(image, (size_t)size);
    if (tf_write_all(fd, image, (size_t)size) != 0 || fsync(fd) != 0) {
        tf_error_set(err, TF_ERR_IO, "cannot write archive '%s': %s; it was left as it was", path,
                     strerror(errno));
        goto fail;
    }
    const int closed_fd = close(fd);
    fd = -1;
    if (closed_fd != 0) {
        tf_error_set(err, TF_ERR_IO, "cannot write archive '%s': %s; it was left as it was", path,
                     strerror(errno));
        goto fail;
    }
    created = 0; /* finish removes the temporary itself on failure */
    if (tf_replace_finish(&r, path, err) != 0)
        goto fail;
    if (fsync_path(dir, 1, err) != 0)
        goto fail;
    rc = 0;
fail:
    tf_h5_close(&f, H5Fclose);
    tf_h5_close(&fapl, H5Pclose);
    free(image);
    if (fd >= 0)
        close(fd);
    if (created)
        unlink(tmp);
    tf_replace_discard(&r);
    tf_h5_quiet_end(&q);
    return rc;
}
