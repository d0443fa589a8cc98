/* backend_replay.c - the replay backend (see backend_replay.h).
 *
 * Loading: SOURCE is an HDF5 archive when it starts with HDF5's signature,
 * else a Kernel Tuner cache (gzip'd or plain JSON). For each job kernel an
 * exact parameter map (schema/parammap.h: the same names and value sets, any
 * number of parameters, no name twice on either side) takes a job
 * configuration index to SOURCE's. An archive's rows of (kernel, problem)
 * become a sorted (configuration, row) table, the latest row of a
 * configuration kept; every row of every job kernel must be of one device
 * class, the replay's device (the first row's), so no answer is labelled with
 * another class's device.
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
#include <sys/stat.h>
#include <unistd.h>

#include "../schema/replace.h"
#include "../schema/archive.h"
#include "../schema/ktcache.h"
#include "../schema/parammap.h"
#include "../schema/status.h"
#include "backend.h"

/* An archive row of a source configuration. */
struct arow {
    uint64_t config;    /* source index */
    const struct tf_result *r;
};

/* How one job kernel is answered. */
struct kmap {
    struct tf_parammap *map; /* job configuration -> source configuration (exact) */
    /* archive: per kernel problem, sorted rows (NULL: the archive has no such problem) */
    struct arow **rows;
    size_t *nrows;
    int nproblems;
};

struct tf_replay {
    char *source;
    bool null;            /* SOURCE `null:`: the synthetic answer for every configuration */
    struct tf_ktcache *kt;
    struct tf_archive *ar;
    const struct tf_job *job;
    struct kmap *k;
    int nkernels;
    struct tf_device dev;
    /* archive: the one device class every answer comes from, and the first
     * job kernel with a row of it (for the message refusing a second class) */
    char klass[256];
    const char *klass_kernel;
};

static struct tf_replay *active;
static double active_speed;

/* ---- matching ------------------------------------------------------------------------ */

static int cmp_arow(const void *a, const void *b)
{
    const struct arow *x = a, *y = b;
    return (x->config > y->config) - (x->config < y->config);
}

/* Kernel `ki`'s parameter map onto the source's: the same names and values
 * (tf_parammap_create, exact); -1 + err naming the mismatch. */
static int map_params(struct tf_replay *r, int ki, const struct tf_archive_kernel *ak,
                      struct tf_error *err)
{
    const struct tf_kernel *k = r->job->kernels[ki].kernel;
    const int nsrc = r->kt ? r->kt->nparams : ak->nparams;
    if (nsrc != k->nparams)
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "%s: kernel '%s' (%s) has %d parameters, the replay source %d: "
                            "the kernel must describe the source's parameters (same names "
                            "and values)", r->source, k->name, k->file, k->nparams, nsrc);
    char label[600];
    snprintf(label, sizeof label, "kernel '%s' (%s)", k->name, k->file);
    struct tf_parammap_space *job = tf_parammap_space_params(k->params, k->nparams, label);
    struct tf_parammap_space *src =
        r->kt ? tf_parammap_space_ktcache(r->kt, "the replay source")
              : tf_parammap_space_params(ak->params, ak->nparams, "the replay source");
    struct tf_error e = {0};
    r->k[ki].map = tf_parammap_create(job, src, true, &e);
    tf_parammap_space_destroy(job);
    tf_parammap_space_destroy(src);
    if (r->k[ki].map == NULL)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: %s: the kernel must describe the "
                            "source's parameters (same names and values)", r->source,
                            e.message);
    return 0;
}

/* Every row of archive kernel `ak` (job kernel `ki`) is of the replay's one
 * device class: the first row met sets it, for every kernel. -1 + err if not. */
static int check_class(struct tf_replay *r, int ki, const struct tf_archive_kernel *ak,
                       struct tf_error *err)
{
    const char *name = r->job->kernels[ki].kernel->name;
    char key[256];
    for (uint64_t i = 0; i < ak->nrows; i++) {
        const struct tf_device *d = &r->ar->devices[ak->rows[i].device];
        tf_device_class_key(d, key, sizeof key);
        if (r->klass[0] == '\0') {
            tf_strlcpy(r->klass, key, sizeof r->klass);
            r->klass_kernel = name;
            r->dev = *d;
        } else if (strcmp(r->klass, key) != 0) {
            return tf_error_set(err, TF_ERR_SCHEMA,
                                "%s: kernel '%s' was measured on two device classes (%s, in "
                                "kernel '%s', and %s); a replay answers as one device: extract "
                                "one class's runs into an archive of their own",
                                r->source, name, r->klass, r->klass_kernel, key);
        }
    }
    return 0;
}

/* "N=64 M=8" of `n` sizes into `out`. */
static void sizes_text(char *const *names, const int64_t *sizes, int n, char *out, size_t cap)
{
    /* An archive imported from a T4 file has a problem with no sizes. */
    snprintf(out, cap, "%s", n > 0 ? "" : "no sizes");
    for (int s = 0; s < n; s++) {
        size_t u = strlen(out);
        snprintf(out + u, cap - u, "%s%s=%lld", s ? " " : "", names[s], (long long)sizes[s]);
    }
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
    if (map_params(r, ki, ak, err))
        return -1;
    if (r->ar == NULL)
        return 0;
    /* An archive: the rows of each problem on the source's device class. */
    if (check_class(r, ki, ak, err))
        return -1;
    m->nproblems = k->nproblems;
    m->rows = tf_xcalloc((size_t)k->nproblems, sizeof *m->rows);
    m->nrows = tf_xcalloc((size_t)k->nproblems, sizeof *m->nrows);
    for (int p = 0; p < k->nproblems; p++) {
        /* The archive's problem of this name and these sizes (an archive
         * keeps a problem whose sizes changed under its name as another). */
        int ap = -1, named = -1;
        for (int q = 0; q < ak->nproblems && ap < 0; q++) {
            if (strcmp(ak->problems[q].name, k->problems[p].name) != 0)
                continue;
            named = q;
            bool same = ak->nsizes == k->nsizes;
            for (int s = 0; same && s < k->nsizes; s++) {
                int as = 0;
                while (as < ak->nsizes && strcmp(ak->size_names[as], k->size_names[s]) != 0)
                    as++;
                same = as < ak->nsizes && ak->problems[q].sizes[as] == k->problems[p].sizes[s];
            }
            if (same)
                ap = q;
        }
        if (ap < 0 && named >= 0) {
            char theirs[160], ours[160];
            sizes_text(k->size_names, k->problems[p].sizes, k->nsizes, ours, sizeof ours);
            sizes_text(ak->size_names, ak->problems[named].sizes, ak->nsizes, theirs,
                       sizeof theirs);
            /* No size name in common: the archive's names are another tool's
             * (`tunefarm import` keeps a cache's problem_size_x, a T4 file has
             * none), and renaming the job's problem would only leave every
             * configuration "not in the replay source" (review S). */
            bool common = false;
            for (int s = 0; s < k->nsizes && !common; s++)
                for (int as = 0; as < ak->nsizes && !common; as++)
                    common = strcmp(ak->size_names[as], k->size_names[s]) == 0;
            return tf_error_set(err, TF_ERR_SCHEMA,
                                "%s: kernel '%s' problem '%s' was measured with %s, the job's "
                                "has %s: a replay answers only the sizes measured (%s)",
                                r->source, k->name, k->problems[p].name, theirs, ours,
                                common || k->nsizes == 0
                                    ? "rename the job's problem, or replay an archive that "
                                      "measured these sizes"
                                    : "its sizes are named otherwise, as by `tunefarm import` "
                                      "from a Kernel Tuner cache or T4 file: give --replay the "
                                      "Kernel Tuner cache itself, which the job's sizes need not "
                                      "match by name");
        }
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


struct tf_replay *tf_replay_open(const char *source, const struct tf_job *job,
                                 struct tf_error *err)
{
    struct tf_replay *r = tf_xcalloc(1, sizeof *r);
    r->source = tf_xstrdup(source);
    r->job = job;
    if (strcmp(source, TF_REPLAY_NULL) == 0) {
        /* No source to read or match: every job kernel is answered as it is. */
        r->null = true;
        tf_strlcpy(r->dev.name, "null", sizeof r->dev.name);
        tf_strlcpy(r->dev.arch, "null", sizeof r->dev.arch);
        r->dev.props[TF_DEVPROP_MAX_THREADS] = 1024;
        r->dev.props[TF_DEVPROP_MAX_SHARED] = 65536;
        r->dev.props[TF_DEVPROP_MAX_SHARED_OPTIN] = 65536;
        r->dev.props[TF_DEVPROP_WARP_SIZE] = 32;
        r->dev.props[TF_DEVPROP_SM_COUNT] = 1;
        r->dev.props[TF_DEVPROP_L2_BYTES] = 1 << 20;
        r->dev.props[TF_DEVPROP_MAX_REGISTERS] = 65536;
        r->dev.props[TF_DEVPROP_MAX_SHARED_PER_SM] = 65536;
        r->nkernels = job->nkernels;
        return r;
    }
    if (access(source, R_OK) != 0) {
        tf_error_set(err, TF_ERR_IO, "%s: cannot read the replay source (expected a tunefarm "
                     "archive or a Kernel Tuner cache file)", source);
        goto fail;
    }
    struct stat st;
    if (stat(source, &st) == 0 && S_ISDIR(st.st_mode)) {
        tf_error_set(err, TF_ERR_IO, "%s: is a folder: expected a tunefarm archive or a Kernel "
                     "Tuner cache file", source);
        goto fail;
    }
    if (tf_replace_is_hdf5(source)) {
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
            [TF_DEVPROP_MAX_REGISTERS] = 65536, [TF_DEVPROP_SIMD_BYTES] = 0,
            [TF_DEVPROP_MAX_SHARED_PER_SM] = 65536};
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
        tf_parammap_destroy(r->k[i].map);
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

static double or_zero(double x)
{
    return isfinite(x) && x > 0 ? x : 0;
}

void tf_replay_answer(const struct tf_replay *r, uint32_t kernel, uint32_t problem,
                      uint64_t config, struct tf_result *out, double *cost_s)
{
    uint64_t idx = 0;
    *cost_s = 0;
    if (r->null) {
        /* A time from 1 to 2 ms that depends on nothing but the configuration
         * (splitmix64 of it), so a search has a landscape and reruns agree. */
        uint64_t h = config + 0x9E3779B97F4A7C15u;
        h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9u;
        h = (h ^ (h >> 27)) * 0x94D049BB133111EBu;
        h ^= h >> 31;
        tf_result_init(out, kernel, problem, config, TF_STATUS_OK);
        out->time_median = out->time_mean = out->time_min = 1e-3 * (1.0 + (double)(h % 1000000) / 1e6);
        out->time_rsd = 0;
        out->samples = 1;
        out->compile_time = 0;
        out->device_time = out->time_median;
        /* Its simulated cost is that time, so `--speed` stretches a null run
         * like any other (--speed 0.01: 100-200 ms a configuration), e.g. to
         * kill ranks mid-run in tests/slurm/scale.sh; instant by default. */
        *cost_s = out->device_time;
        return;
    }
    if (kernel >= (uint32_t)r->nkernels || !tf_parammap_apply(r->k[kernel].map, config, &idx))
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
    const struct arow key = {idx, NULL};
    const struct arow *row = bsearch(&key, m->rows[problem], m->nrows[problem], sizeof key, cmp_arow);
    if (row == NULL)
        goto missing;
    *out = *row->r;
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

/* One replay device: each worker describes it with its own ordinal (worker.c
 * asks tf_replay_device directly, so a node's workers have no limit). */
static int replay_device_count(void)
{
    return active ? 1 : 0;
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
