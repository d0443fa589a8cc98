/* backend_replay.c - the replay backend (see backend_replay.h).
 *
 * Loading: SOURCE is an HDF5 archive when it starts with HDF5's signature,
 * else a Kernel Tuner cache (gzip'd or plain JSON). For each job kernel a map
 * takes a job configuration index to SOURCE's: per SOURCE parameter, the job
 * parameter of the same name and, per job digit, SOURCE's digit of the same
 * value. An archive's rows of (kernel, problem) on its device class become a
 * sorted (configuration, row) table, the latest row of a configuration kept.
 *
 * The table entry `tf_backend_replay` makes the replay a backend like the
 * others for discovery (probe, device_count, describe); it has nothing to
 * compile or run, so the worker asks tf_replay_answer instead of its compile
 * pool and runner (worker.c), and those members only say so. */
#include "backend_replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../schema/archive.h"
#include "../schema/ktcache.h"
#include "../schema/status.h"
#include "backend.h"

#define REPLAY_MAX_WORKERS 4096

struct pmap {
    int job_param;      /* job parameter of this source parameter */
    int *digit;         /* job digit -> source digit */
};

struct arow {
    uint64_t config;    /* source index */
    const struct tf_result *r;
};

struct kmap {
    struct pmap *p;     /* per source parameter */
    int nsrc;
    uint64_t *src_count;
    /* archive: per kernel problem, sorted rows (NULL: the archive has no such problem) */
    struct arow **rows;
    size_t *nrows;
    int nproblems;
};

struct tf_replay {
    char *source;
    struct tf_ktcache *kt;
    struct tf_archive *ar;
    const struct tf_job *job;
    struct kmap *k;
    int nkernels;
    struct tf_device dev;
};

static struct tf_replay *active;
static double active_speed;

/* ---- matching ------------------------------------------------------------------------ */

/* Value `d` of job parameter `jp` as text ("16", "float4"). */
static void job_value(const struct tf_param *jp, int d, char *out, size_t cap)
{
    if (jp->kind == TF_PARAM_INT)
        snprintf(out, cap, "%lld", (long long)jp->ints[d]);
    else
        snprintf(out, cap, "%s", jp->strings[d]);
}

/* Source parameter `s` value `d` equals job parameter value `v` (text)? A
 * numeric Kernel Tuner value matches an integer of the same value (16.0 = 16). */
static int same_kt_value(const struct tf_ktcache_param *kp, int d, const struct tf_param *jp,
                         int jd)
{
    char v[128];
    job_value(jp, jd, v, sizeof v);
    if (strcmp(kp->text[d], v) == 0)
        return 1;
    return jp->kind == TF_PARAM_INT && kp->values && kp->values[d] == (double)jp->ints[jd];
}

static int param_count_src(const struct tf_replay *r, const struct tf_archive_kernel *ak, int s)
{
    return r->kt ? r->kt->params[s].count : ak->params[s].count;
}

static const char *param_name_src(const struct tf_replay *r, const struct tf_archive_kernel *ak,
                                  int s)
{
    return r->kt ? r->kt->params[s].name : ak->params[s].name;
}

static int same_value_src(const struct tf_replay *r, const struct tf_archive_kernel *ak, int s,
                          int d, const struct tf_param *jp, int jd)
{
    if (r->kt)
        return same_kt_value(&r->kt->params[s], d, jp, jd);
    char a[128], b[128];
    job_value(&ak->params[s], d, a, sizeof a);
    job_value(jp, jd, b, sizeof b);
    return strcmp(a, b) == 0;
}

/* The values of a parameter as text, for error messages. */
static void values_text(const struct tf_replay *r, const struct tf_archive_kernel *ak, int s,
                        const struct tf_param *jp, char *out, size_t cap)
{
    size_t used = 0;
    int n = jp ? jp->count : param_count_src(r, ak, s);
    out[0] = '\0';
    for (int d = 0; d < n && used + 2 < cap; d++) {
        char v[128];
        if (jp)
            job_value(jp, d, v, sizeof v);
        else if (r->kt)
            tf_strlcpy(v, r->kt->params[s].text[d], sizeof v);
        else
            job_value(&ak->params[s], d, v, sizeof v);
        int w = snprintf(out + used, cap - used, "%s%s", d ? ", " : "", v);
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
    }
}

static int cmp_arow(const void *a, const void *b)
{
    const struct arow *x = a, *y = b;
    return (x->config > y->config) - (x->config < y->config);
}

/* Build kernel `ki`'s map; -1 + err naming the mismatch. */
static int map_kernel(struct tf_replay *r, int ki, struct tf_error *err)
{
    const struct tf_kernel *k = r->job->kernels[ki].kernel;
    struct kmap *m = &r->k[ki];
    const struct tf_archive_kernel *ak = NULL;
    if (r->ar) {
        ak = tf_archive_find_kernel(r->ar, k->name);
        if (ak == NULL)
            return tf_error_set(err, TF_ERR_SCHEMA,
                                "%s: replay source has no kernel '%s' (job kernel file %s); "
                                "replay an archive that measured it", r->source, k->name,
                                k->file);
    }
    m->nsrc = r->kt ? r->kt->nparams : ak->nparams;
    if (m->nsrc != k->nparams) {
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "%s: kernel '%s' (%s) has %d parameters, the replay source %d: "
                            "the kernel must describe the source's parameters (same names "
                            "and values)", r->source, k->name, k->file, k->nparams, m->nsrc);
    }
    m->p = tf_xcalloc((size_t)m->nsrc, sizeof *m->p);
    m->src_count = tf_xcalloc((size_t)m->nsrc, sizeof *m->src_count);
    for (int s = 0; s < m->nsrc; s++) {
        const char *name = param_name_src(r, ak, s);
        int j = -1;
        for (int q = 0; q < k->nparams && j < 0; q++)
            if (strcmp(k->params[q].name, name) == 0)
                j = q;
        if (j < 0)
            return tf_error_set(err, TF_ERR_SCHEMA,
                                "%s: the replay source has parameter '%s', kernel '%s' (%s) "
                                "has none of that name: the kernel must describe the source's "
                                "parameters (same names and values)",
                                r->source, name, k->name, k->file);
        const struct tf_param *jp = &k->params[j];
        int ns = param_count_src(r, ak, s);
        m->p[s].job_param = j;
        m->src_count[s] = (uint64_t)ns;
        m->p[s].digit = tf_xcalloc((size_t)jp->count, sizeof *m->p[s].digit);
        bool ok = jp->count == ns;
        for (int jd = 0; jd < jp->count && ok; jd++) {
            int found = -1;
            for (int d = 0; d < ns && found < 0; d++)
                if (same_value_src(r, ak, s, d, jp, jd))
                    found = d;
            m->p[s].digit[jd] = found;
            ok = found >= 0;
        }
        if (!ok) {
            char a[512], b[512];
            values_text(r, ak, s, NULL, a, sizeof a);
            values_text(r, ak, s, jp, b, sizeof b);
            return tf_error_set(err, TF_ERR_SCHEMA,
                                "%s: parameter '%s' has the values [%s] in the replay source "
                                "but [%s] in kernel '%s' (%s): the kernel must list the "
                                "source's values", r->source, name, a, b, k->name, k->file);
        }
    }
    if (r->ar == NULL)
        return 0;
    /* An archive: the rows of each problem on the source's device class. */
    m->nproblems = k->nproblems;
    m->rows = tf_xcalloc((size_t)k->nproblems, sizeof *m->rows);
    m->nrows = tf_xcalloc((size_t)k->nproblems, sizeof *m->nrows);
    char cls[256] = "", key[256];
    for (uint64_t i = 0; i < ak->nrows; i++) {
        tf_device_class_key(&r->ar->devices[ak->rows[i].device], key, sizeof key);
        if (cls[0] == '\0')
            tf_strlcpy(cls, key, sizeof cls);
        else if (strcmp(cls, key) != 0)
            return tf_error_set(err, TF_ERR_SCHEMA,
                                "%s: kernel '%s' was measured on two device classes (%s and "
                                "%s); a replay answers as one device: extract one class's "
                                "runs into an archive of their own", r->source, k->name, cls,
                                key);
        if (r->dev.name[0] == '\0')
            r->dev = r->ar->devices[ak->rows[i].device];
    }
    for (int p = 0; p < k->nproblems; p++) {
        int ap = -1;
        for (int q = 0; q < ak->nproblems && ap < 0; q++)
            if (strcmp(ak->problems[q].name, k->problems[p].name) == 0)
                ap = q;
        if (ap < 0)
            continue; /* every configuration of it is "not in the replay source" */
        struct arow *rows = tf_xcalloc(ak->nrows ? ak->nrows : 1, sizeof *rows);
        size_t n = 0;
        for (uint64_t i = 0; i < ak->nrows; i++)
            if (ak->rows[i].r.problem == (uint32_t)ap)
                rows[n++] = (struct arow){ak->rows[i].r.config, &ak->rows[i].r};
        /* Several rows of one configuration (runs appended to the archive): the
         * latest in the archive (highest address) wins; qsort is not stable. */
        qsort(rows, n, sizeof *rows, cmp_arow);
        size_t w = 0;
        for (size_t i = 0; i < n; i++) {
            if (w > 0 && rows[w - 1].config == rows[i].config) {
                if (rows[i].r > rows[w - 1].r) /* later in the archive */
                    rows[w - 1] = rows[i];
                continue;
            }
            rows[w++] = rows[i];
        }
        m->rows[p] = rows;
        m->nrows[p] = w;
    }
    return 0;
}

/* ---- open / close ---------------------------------------------------------------------- */

static int is_hdf5(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char head[8];
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, sig, sizeof sig) == 0;
}

struct tf_replay *tf_replay_open(const char *source, const struct tf_job *job,
                                 struct tf_error *err)
{
    struct tf_replay *r = tf_xcalloc(1, sizeof *r);
    r->source = tf_xstrdup(source);
    r->job = job;
    if (access(source, R_OK) != 0) {
        tf_error_set(err, TF_ERR_IO, "%s: cannot read the replay source (expected a tunefarm "
                     "archive or a Kernel Tuner cache file)", source);
        goto fail;
    }
    if (is_hdf5(source)) {
        if ((r->ar = tf_archive_read(source, err)) == NULL)
            goto fail;
    } else if ((r->kt = tf_ktcache_load(source, err)) == NULL) {
        goto fail;
    }
    if (r->kt) {
        /* A Kernel Tuner cache names its GPU only: the class is that name. The
         * properties constraints may read are nominal (the cache's own
         * InvalidConfig entries carry the device's real limits). */
        char file_name[128];
        const char *name = r->kt->device_name;
        if (name == NULL || name[0] == '\0') { /* some caches leave it empty: MI250X.json.gz */
            const char *base = strrchr(source, '/');
            tf_strlcpy(file_name, base ? base + 1 : source, sizeof file_name);
            char *dot = strchr(file_name, '.');
            if (dot && dot != file_name)
                *dot = '\0';
            name = file_name;
        }
        tf_strlcpy(r->dev.name, name, sizeof r->dev.name);
        tf_strlcpy(r->dev.vendor, strstr(name, "NVIDIA") || strstr(name, "GeForce") ? "NVIDIA"
                                  : strstr(name, "AMD") || strstr(name, "Radeon") ||
                                            strstr(name, "Instinct")
                                      ? "AMD"
                                      : "",
                   sizeof r->dev.vendor);
        tf_strlcpy(r->dev.arch, "gpu", sizeof r->dev.arch);
        int64_t nominal[TF_DEVPROP_COUNT] = {
            [TF_DEVPROP_MAX_THREADS] = 1024, [TF_DEVPROP_MAX_SHARED] = 65536,
            [TF_DEVPROP_MAX_SHARED_OPTIN] = 65536, [TF_DEVPROP_WARP_SIZE] = 32,
            [TF_DEVPROP_SM_COUNT] = 1, [TF_DEVPROP_L2_BYTES] = 1 << 20,
            [TF_DEVPROP_MAX_REGISTERS] = 65536, [TF_DEVPROP_SIMD_BYTES] = 0};
        memcpy(r->dev.props, nominal, sizeof nominal);
    }
    r->nkernels = job->nkernels;
    r->k = tf_xcalloc((size_t)job->nkernels, sizeof *r->k);
    for (int i = 0; i < job->nkernels; i++)
        if (map_kernel(r, i, err))
            goto fail;
    return r;
fail:
    tf_replay_destroy(r);
    return NULL;
}

void tf_replay_destroy(struct tf_replay *r)
{
    if (r == NULL)
        return;
    if (active == r)
        active = NULL;
    for (int i = 0; r->k && i < r->nkernels; i++) {
        for (int s = 0; r->k[i].p && s < r->k[i].nsrc; s++)
            free(r->k[i].p[s].digit);
        free(r->k[i].p);
        free(r->k[i].src_count);
        for (int p = 0; r->k[i].rows && p < r->k[i].nproblems; p++)
            free(r->k[i].rows[p]);
        free(r->k[i].rows);
        free(r->k[i].nrows);
    }
    free(r->k);
    tf_ktcache_destroy(r->kt);
    tf_archive_destroy(r->ar);
    free(r->source);
    free(r);
}

void tf_replay_device(const struct tf_replay *r, int ordinal, struct tf_device *out)
{
    *out = r->dev;
    tf_strlcpy(out->backend, "replay", sizeof out->backend);
    snprintf(out->uuid, sizeof out->uuid, "replay-%d", ordinal);
    out->pci_bus[0] = '\0'; /* nothing to bind near */
    out->host[0] = '\0';
    gethostname(out->host, sizeof out->host - 1);
}

/* ---- answers --------------------------------------------------------------------------- */

static int src_index(const struct tf_replay *r, uint32_t kernel, uint64_t config, uint64_t *out)
{
    const struct tf_kernel *k = r->job->kernels[kernel].kernel;
    const struct kmap *m = &r->k[kernel];
    int digits[64];
    if (k->nparams > 64)
        return -1;
    for (int q = k->nparams - 1; q >= 0; q--) {
        digits[q] = (int)(config % (uint64_t)k->params[q].count);
        config /= (uint64_t)k->params[q].count;
    }
    uint64_t idx = 0;
    for (int s = 0; s < m->nsrc; s++)
        idx = idx * m->src_count[s] + (uint64_t)m->p[s].digit[digits[m->p[s].job_param]];
    *out = idx;
    return 0;
}

static double or_zero(double x)
{
    return isfinite(x) && x > 0 ? x : 0;
}

void tf_replay_answer(const struct tf_replay *r, uint32_t kernel, uint32_t problem,
                      uint64_t config, struct tf_result *out, double *cost_s)
{
    uint64_t idx = 0;
    *cost_s = 0;
    if (kernel >= (uint32_t)r->nkernels || src_index(r, kernel, config, &idx) != 0)
        goto missing;
    if (r->kt) {
        const struct tf_ktcache_entry *e = tf_ktcache_find(r->kt, idx);
        if (e == NULL)
            goto missing;
        tf_result_init(out, kernel, problem, config, e->status);
        if (e->status == TF_STATUS_OK) {
            out->energy_status = TF_ENERGY_NOT_IN_SOURCE; /* a cache has times only */
            out->time_mean = e->time_ms / 1e3;
            out->time_median = e->median_ms / 1e3;
            out->time_min = e->min_ms / 1e3;
            out->time_rsd = e->rsd;
            out->samples = (uint32_t)e->samples;
        } else {
            snprintf(out->message, sizeof out->message, "Kernel Tuner: %s", e->failure);
        }
        out->compile_time = e->compile_ms / 1e3;
        out->device_time = e->benchmark_ms / 1e3;
        *cost_s = or_zero(e->compile_ms / 1e3) + or_zero(e->benchmark_ms / 1e3);
        return;
    }
    const struct kmap *m = &r->k[kernel];
    if (problem >= (uint32_t)m->nproblems || m->rows[problem] == NULL)
        goto missing;
    size_t lo = 0, hi = m->nrows[problem];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->rows[problem][mid].config < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == m->nrows[problem] || m->rows[problem][lo].config != idx)
        goto missing;
    *out = *m->rows[problem][lo].r;
    out->kernel = kernel;
    out->problem = problem;
    out->config = config;
    double run = isfinite(out->device_time)                       ? out->device_time
                 : isfinite(out->time_mean) && out->samples > 0 ? out->time_mean * out->samples
                                                                  : 0;
    *cost_s = or_zero(out->compile_time) + or_zero(run);
    return;
missing:
    tf_result_init(out, kernel, problem, config, TF_STATUS_INVALID);
    tf_strlcpy(out->message, "not in the replay source", sizeof out->message);
}

/* ---- the backend table ----------------------------------------------------------------- */

void tf_replay_set_active(struct tf_replay *r, double speed)
{
    active = r;
    active_speed = speed;
}

struct tf_replay *tf_replay_active(void)
{
    return active;
}

double tf_replay_speed(void)
{
    return active_speed;
}

static int replay_probe(struct tf_error *err)
{
    if (active)
        return 0;
    return tf_error_set(err, TF_ERR_BACKEND, "no replay source (tunefarm run JOB --replay "
                        "SOURCE)");
}

static int replay_device_count(void)
{
    return active ? REPLAY_MAX_WORKERS : 0; /* one simulated device per worker */
}

static int replay_describe(int ordinal, struct tf_device *out, struct tf_error *err)
{
    if (active == NULL)
        return replay_probe(err);
    tf_replay_device(active, ordinal, out);
    return 0;
}

static const char *replay_compiler_id(void)
{
    return "replay";
}

static int replay_nothing(struct tf_error *err)
{
    return tf_error_set(err, TF_ERR_BACKEND, "the replay backend answers from its source; it "
                        "compiles and runs nothing");
}

static int replay_compile(const struct tf_compile_input *in, struct tf_compile_output *out,
                          struct tf_error *err)
{
    (void)in;
    out->ok = 0;
    return replay_nothing(err);
}

static int replay_open(int ordinal, struct tf_backend_ctx **ctx, struct tf_error *err)
{
    (void)ordinal;
    *ctx = NULL;
    return replay_nothing(err);
}

static void replay_close(struct tf_backend_ctx *ctx)
{
    (void)ctx;
}

static int replay_load(struct tf_backend_ctx *ctx, const char *binary_path, const char *entry,
                       void **function, struct tf_error *err)
{
    (void)ctx, (void)binary_path, (void)entry, (void)function;
    return replay_nothing(err);
}

static void replay_unload(struct tf_backend_ctx *ctx, void *function)
{
    (void)ctx, (void)function;
}

static int replay_alloc(struct tf_backend_ctx *ctx, size_t bytes, void **ptr,
                        struct tf_error *err)
{
    (void)ctx, (void)bytes, (void)ptr;
    return replay_nothing(err);
}

static void replay_release(struct tf_backend_ctx *ctx, void *ptr)
{
    (void)ctx, (void)ptr;
}

static int replay_copy_io(struct tf_backend_ctx *ctx, void *a, const void *b, size_t bytes,
                          struct tf_error *err)
{
    (void)ctx, (void)a, (void)b, (void)bytes;
    return replay_nothing(err);
}

static int replay_launch(struct tf_backend_ctx *ctx, void *function,
                         const struct tf_launch *geometry, void **args, double *seconds,
                         struct tf_error *err)
{
    (void)ctx, (void)function, (void)geometry, (void)args, (void)seconds;
    replay_nothing(err);
    return TF_STATUS_LAUNCH_ERROR;
}

static int replay_flush(struct tf_backend_ctx *ctx, struct tf_error *err)
{
    (void)ctx;
    return replay_nothing(err);
}

const struct tf_backend tf_backend_replay = {
    .version = TF_BACKEND_VERSION,
    .name = "replay",
    .language = "any",
    .probe = replay_probe,
    .device_count = replay_device_count,
    .describe = replay_describe,
    .compiler_id = replay_compiler_id,
    .compile = replay_compile,
    .open = replay_open,
    .close = replay_close,
    .load = replay_load,
    .unload = replay_unload,
    .alloc = replay_alloc,
    .release = replay_release,
    .upload = replay_copy_io,
    .download = replay_copy_io,
    .launch = replay_launch,
    .flush_cache = replay_flush,
};
