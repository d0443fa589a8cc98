/* archive.c - the archive's in-memory model: devices, runs, sessions, kernels, problems,
 * rows, plans.
 *
 * The coordinator keeps the whole archive as a plain C model and rewrites the
 * file from it at every checkpoint (archive_write.c); the reader builds the
 * same model back (archive_read.c). Here are the calls that build it. An
 * archive id is 128 random bits given at creation. A device is found by
 * (backend, name, arch, uuid, host) or added. A kernel entry is keyed by name
 * and keeps its shape (parameters with their values, size names, metric
 * names), since its rows' configuration indices and columns mean that shape;
 * its provenance (source hash, constraint texts, default) follows the newest
 * kernel file. A problem is keyed by (name, sizes), so rows keep meaning the
 * sizes they ran with. Rows are appended to a doubling array, and counted
 * for what they say of their own quality (noisy, energy) by whoever reports
 * on them. Provenance is kept per run and session (what each device ran
 * with, each kernel's source hash per run), since a device row and a
 * kernel's attributes hold only the values first seen and the latest. The
 * other pieces
 * of the module are listed in archive_internal.h; the layout is specified for
 * users in schema/archive.md. */
#include "archive.h"
#include "version.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "archive_internal.h"
#include "expr.h"

/* The Makefile may pass the real version; archives then record it. */

/* "a,b,c" (or "(none)") into `out`, truncated with "..." when long. */
static void join_names(char *out, size_t cap, const char *const *names, int n)
{
    size_t len = 0;
    out[0] = '\0';
    if (n == 0) {
        tf_strlcpy(out, "(none)", cap);
        return;
    }
    for (int i = 0; i < n; i++) {
        int w = snprintf(out + len, cap - len, "%s%s", i ? "," : "", names[i]);
        if (w < 0 || (size_t)w >= cap - len) {
            if (cap > 4)
                memcpy(out + cap - 4, "...", 4);
            return;
        }
        len += (size_t)w;
    }
}

/* "16,32,64" or "row,col" for a parameter's values. */
static void join_values(char *out, size_t cap, const struct tf_param *p)
{
    if (p->kind == TF_PARAM_ENUM) {
        join_names(out, cap, (const char *const *)p->strings, p->count);
        return;
    }
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < p->count; i++) {
        int w = snprintf(out + len, cap - len, "%s%lld", i ? "," : "", (long long)p->ints[i]);
        if (w < 0 || (size_t)w >= cap - len) {
            if (cap > 4)
                memcpy(out + cap - 4, "...", 4);
            return;
        }
        len += (size_t)w;
    }
}

static void param_free(struct tf_param *p)
{
    free(p->name);
    free(p->ints);
    if (p->strings)
        for (int i = 0; i < p->count; i++)
            free(p->strings[i]);
    free(p->strings);
}

static void param_copy(struct tf_param *dst, const struct tf_param *src)
{
    memset(dst, 0, sizeof *dst);
    dst->name = tf_xstrdup(src->name);
    dst->kind = src->kind;
    dst->count = src->count;
    if (src->kind == TF_PARAM_INT) {
        dst->ints = tf_xcalloc((size_t)src->count, sizeof *dst->ints);
        memcpy(dst->ints, src->ints, (size_t)src->count * sizeof *dst->ints);
    } else {
        dst->strings = tf_xcalloc((size_t)src->count, sizeof *dst->strings);
        for (int i = 0; i < src->count; i++)
            dst->strings[i] = tf_xstrdup(src->strings[i]);
    }
}

void tf_archive_strings_free(char **v, int n)
{
    if (v)
        for (int i = 0; i < n; i++)
            free(v[i]);
    free(v);
}

char **tf_archive_strings_copy(char *const *v, int n)
{
    char **d = tf_xcalloc((size_t)(n > 0 ? n : 1), sizeof *d);
    for (int i = 0; i < n; i++)
        d[i] = tf_xstrdup(v[i]);
    return d;
}

static void kernel_free(struct tf_archive_kernel *k)
{
    free(k->name);
    if (k->params)
        for (int i = 0; i < k->nparams; i++)
            param_free(&k->params[i]);
    free(k->params);
    tf_archive_strings_free(k->size_names, k->nsizes);
    tf_archive_strings_free(k->constraints, k->nconstraints);
    tf_archive_strings_free(k->define_sizes, k->ndefine_sizes);
    tf_archive_strings_free(k->metric_names, k->nmetrics);
    if (k->problems)
        for (int i = 0; i < k->nproblems; i++)
            free(k->problems[i].sizes);
    free(k->problems);
    free(k->rows);
    memset(k, 0, sizeof *k);
}

/* 128 random bits as 32 hex digits. getrandom(2) first; if the kernel lacks
 * it, /dev/urandom; failing both, time, pid and address bits (an id needs to
 * be unique between archives, not secret). */
static void new_id(char out[TF_ARCHIVE_ID_LEN])
{
    unsigned char bits[16];
    size_t got = 0;
    while (got < sizeof bits) {
        ssize_t k = getrandom(bits + got, sizeof bits - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    if (got < sizeof bits) {
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        ssize_t k = fd >= 0 ? read(fd, bits, sizeof bits) : -1;
        if (fd >= 0)
            close(fd);
        if (k != (ssize_t)sizeof bits) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t x = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^
                         (uint64_t)getpid() << 40 ^ (uint64_t)(uintptr_t)out;
            for (size_t i = 0; i < sizeof bits; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                bits[i] = (unsigned char)x;
            }
        }
    }
    for (size_t i = 0; i < sizeof bits; i++)
        snprintf(out + 2 * i, 3, "%02x", bits[i]);
}

/* True if `s` is an archive id: exactly 32 lowercase hex digits. */
bool tf_archive_valid_id(const char *s)
{
    return strlen(s) == TF_ARCHIVE_ID_LEN - 1 &&
           strspn(s, "0123456789abcdef") == TF_ARCHIVE_ID_LEN - 1;
}

struct tf_archive *tf_archive_create(void)
{
    struct tf_archive *a = tf_xcalloc(1, sizeof *a);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    a->created = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    tf_strlcpy(a->tunefarm_version, tf_version, sizeof a->tunefarm_version);
    new_id(a->id);
    return a;
}

int tf_archive_ensure_id(struct tf_archive *a)
{
    if (a->id[0] != '\0')
        return 0;
    new_id(a->id);
    return 1;
}

void tf_archive_destroy(struct tf_archive *a)
{
    if (a == NULL)
        return;
    free(a->devices);
    free(a->runs);
    free(a->plans);
    free(a->sessions);
    free(a->session_devices);
    free(a->run_kernels);
    if (a->kernels)
        for (int i = 0; i < a->nkernels; i++)
            kernel_free(&a->kernels[i]);
    free(a->kernels);
    free(a);
}

static int same_field(const char *x, const char *y, size_t cap)
{
    return strncmp(x, y, cap) == 0;
}

uint32_t tf_archive_add_device(struct tf_archive *a, const struct tf_device *d)
{
    for (int i = 0; i < a->ndevices; i++) {
        const struct tf_device *e = &a->devices[i];
        if (same_field(e->backend, d->backend, sizeof e->backend) &&
            same_field(e->name, d->name, sizeof e->name) &&
            same_field(e->arch, d->arch, sizeof e->arch) &&
            same_field(e->uuid, d->uuid, sizeof e->uuid) &&
            same_field(e->host, d->host, sizeof e->host))
            return (uint32_t)i;
    }
    a->devices = tf_xrealloc(a->devices, (size_t)(a->ndevices + 1) * sizeof *a->devices);
    a->devices[a->ndevices] = *d;
    return (uint32_t)a->ndevices++;
}

uint32_t tf_archive_add_run(struct tf_archive *a, const struct tf_archive_run *run)
{
    a->runs = tf_xrealloc(a->runs, (size_t)(a->nruns + 1) * sizeof *a->runs);
    a->runs[a->nruns] = *run;
    return (uint32_t)a->nruns++;
}

uint32_t tf_archive_add_session(struct tf_archive *a, const struct tf_archive_session *s)
{
    a->sessions = tf_xrealloc(a->sessions, (size_t)(a->nsessions + 1) * sizeof *a->sessions);
    a->sessions[a->nsessions] = *s;
    return (uint32_t)a->nsessions++;
}

void tf_archive_set_session_device(struct tf_archive *a, uint32_t session, uint32_t device,
                                   const struct tf_device *d)
{
    struct tf_archive_session_device *sd = NULL;
    for (int i = 0; i < a->nsession_devices && sd == NULL; i++)
        if (a->session_devices[i].session == session && a->session_devices[i].device == device)
            sd = &a->session_devices[i];
    if (sd == NULL) {
        a->session_devices = tf_xrealloc(a->session_devices, (size_t)(a->nsession_devices + 1) *
                                                                 sizeof *a->session_devices);
        sd = &a->session_devices[a->nsession_devices++];
    }
    sd->session = session;
    sd->device = device;
    sd->d = *d;
}

void tf_archive_set_run_kernel(struct tf_archive *a, uint32_t run, uint32_t kernel,
                               const char *source_hash)
{
    struct tf_archive_run_kernel *rk = NULL;
    for (int i = 0; i < a->nrun_kernels && rk == NULL; i++)
        if (a->run_kernels[i].run == run && a->run_kernels[i].kernel == kernel)
            rk = &a->run_kernels[i];
    if (rk == NULL) {
        a->run_kernels = tf_xrealloc(a->run_kernels,
                                     (size_t)(a->nrun_kernels + 1) * sizeof *a->run_kernels);
        rk = &a->run_kernels[a->nrun_kernels++];
    }
    rk->run = run;
    rk->kernel = kernel;
    tf_strlcpy(rk->source_hash, source_hash, sizeof rk->source_hash);
}

const char *tf_archive_run_source_hash(const struct tf_archive *a, uint32_t run, uint32_t kernel)
{
    for (int i = 0; i < a->nrun_kernels; i++)
        if (a->run_kernels[i].run == run && a->run_kernels[i].kernel == kernel)
            return a->run_kernels[i].source_hash;
    return NULL;
}

int tf_archive_run_session(const struct tf_archive *a, uint32_t run, int nth, int *count)
{
    int seen = 0, found = -1;
    for (int i = 0; i < a->nsessions; i++)
        if (a->sessions[i].run == run) {
            if (seen == nth)
                found = i;
            seen++;
        }
    if (count)
        *count = seen;
    return found;
}

struct tf_archive_kernel *tf_archive_find_kernel(const struct tf_archive *a, const char *name)
{
    for (int i = 0; i < a->nkernels; i++)
        if (strcmp(a->kernels[i].name, name) == 0)
            return &a->kernels[i];
    return NULL;
}

void tf_archive_quality_count(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                              int run, uint32_t problem, const char *class_key,
                              struct tf_archive_quality *q)
{
    for (uint64_t i = 0; i < ak->nrows; i++) {
        const struct tf_archive_row *row = &ak->rows[i];
        if (row->r.status != TF_STATUS_OK || (run >= 0 && row->run != (uint32_t)run) ||
            (problem != UINT32_MAX && row->r.problem != problem) ||
            row->device >= (uint32_t)a->ndevices)
            continue;
        if (class_key) {
            char key[256];
            tf_device_class_key(&a->devices[row->device], key, sizeof key);
            if (strcmp(key, class_key) != 0)
                continue;
        }
        q->ok++;
        q->noisy += row->r.noisy != 0;
        q->energy[row->r.energy_status < TF_ENERGY_COUNT ? row->r.energy_status
                                                         : TF_ENERGY_UNKNOWN]++;
    }
}

/* Product of the value counts, saturating like tf_kernel_cartesian. */
uint64_t tf_archive_cartesian(const struct tf_archive_kernel *ak)
{
    uint64_t n = 1;
    for (int i = 0; i < ak->nparams; i++) {
        uint64_t c = (uint64_t)ak->params[i].count;
        if (c != 0 && n > UINT64_MAX / c)
            return UINT64_MAX;
        n *= c;
    }
    return n;
}

/* Mixed radix, parameter 0 most significant (tf_kernel_decode's convention). */
void tf_archive_decode(const struct tf_archive_kernel *ak, uint64_t index, int *digits)
{
    for (int i = ak->nparams - 1; i >= 0; i--) {
        uint64_t c = (uint64_t)ak->params[i].count;
        digits[i] = (int)(index % c);
        index /= c;
    }
}

void tf_archive_set_plan(struct tf_archive *a, const struct tf_archive_plan *p)
{
    for (int i = 0; i < a->nplans; i++) {
        struct tf_archive_plan *q = &a->plans[i];
        if (q->run == p->run && q->kernel == p->kernel && q->problem == p->problem &&
            q->device == p->device) {
            q->planned = p->planned;
            return;
        }
    }
    a->plans = tf_xrealloc(a->plans, sizeof *a->plans * (size_t)(a->nplans + 1));
    a->plans[a->nplans++] = *p;
}

/* ---------------------------------------------------------------- kernel_for / problem_for */

static int kernel_mismatch(struct tf_error *err, const char *name, const char *what,
                           const char *had, const char *has)
{
    return tf_error_set(err, TF_ERR_SCHEMA,
                        "archive kernel '%s' has %s %s but the one being added has %s: use another "
                        "archive or a new kernel name", name, what, had, has);
}

static int names_equal(char *const *x, int nx, char *const *y, int ny)
{
    if (nx != ny)
        return 0;
    for (int i = 0; i < nx; i++)
        if (strcmp(x[i], y[i]) != 0)
            return 0;
    return 1;
}

int tf_archive_shape_compare(const struct tf_archive_kernel *ak, const struct tf_archive_shape *k,
                             struct tf_error *err)
{
    char had[512], has[512];
    int same = ak->nparams == k->nparams;
    for (int i = 0; same && i < k->nparams; i++)
        same = strcmp(ak->params[i].name, k->params[i].name) == 0;
    if (!same) {
        const char **x = tf_xcalloc((size_t)ak->nparams + 1, sizeof *x);
        const char **y = tf_xcalloc((size_t)k->nparams + 1, sizeof *y);
        for (int i = 0; i < ak->nparams; i++)
            x[i] = ak->params[i].name;
        for (int i = 0; i < k->nparams; i++)
            y[i] = k->params[i].name;
        join_names(had, sizeof had, x, ak->nparams);
        join_names(has, sizeof has, y, k->nparams);
        free(x);
        free(y);
        return kernel_mismatch(err, ak->name, "parameters", had, has);
    }
    for (int i = 0; i < k->nparams; i++) {
        const struct tf_param *p = &ak->params[i], *q = &k->params[i];
        char what[320];
        if (p->kind != q->kind) {
            snprintf(what, sizeof what, "parameter %s of kind", p->name);
            return kernel_mismatch(err, ak->name, what, p->kind == TF_PARAM_INT ? "int" : "enum",
                                   q->kind == TF_PARAM_INT ? "int" : "enum");
        }
        int eq = p->count == q->count;
        for (int v = 0; eq && v < p->count; v++)
            eq = p->kind == TF_PARAM_INT ? p->ints[v] == q->ints[v]
                                         : strcmp(p->strings[v], q->strings[v]) == 0;
        if (!eq) {
            snprintf(what, sizeof what, "parameter %s with values", p->name);
            join_values(had, sizeof had, p);
            join_values(has, sizeof has, q);
            return kernel_mismatch(err, ak->name, what, had, has);
        }
    }
    if (!names_equal(ak->size_names, ak->nsizes, k->size_names, k->nsizes)) {
        join_names(had, sizeof had, (const char *const *)ak->size_names, ak->nsizes);
        join_names(has, sizeof has, (const char *const *)k->size_names, k->nsizes);
        return kernel_mismatch(err, ak->name, "problem sizes", had, has);
    }
    if (!names_equal(ak->metric_names, ak->nmetrics, k->metric_names, k->nmetrics)) {
        join_names(had, sizeof had, (const char *const *)ak->metric_names, ak->nmetrics);
        join_names(has, sizeof has, (const char *const *)k->metric_names, k->nmetrics);
        return kernel_mismatch(err, ak->name, "metrics", had, has);
    }
    return 0;
}

static struct tf_archive_shape shape_of_kernel(const struct tf_kernel *k)
{
    return (struct tf_archive_shape){k->nparams, k->params, k->nsizes, k->size_names,
                                     k->nmetrics, k->metric_names};
}

/* A new entry named `name` with deep copies of `shape` (no provenance, no problems, no rows). */
struct tf_archive_kernel tf_archive_kernel_of_shape(const char *name,
                                                    const struct tf_archive_shape *shape)
{
    struct tf_archive_kernel nk;
    memset(&nk, 0, sizeof nk);
    nk.name = tf_xstrdup(name);
    nk.nparams = shape->nparams;
    nk.params = tf_xcalloc((size_t)(shape->nparams > 0 ? shape->nparams : 1), sizeof *nk.params);
    for (int i = 0; i < shape->nparams; i++)
        param_copy(&nk.params[i], &shape->params[i]);
    nk.nsizes = shape->nsizes;
    nk.size_names = tf_archive_strings_copy(shape->size_names, shape->nsizes);
    nk.nmetrics = shape->nmetrics;
    nk.metric_names = tf_archive_strings_copy(shape->metric_names, shape->nmetrics);
    return nk;
}

/* The parts a kernel file may change without invalidating archived rows. */
static void kernel_take_provenance(struct tf_archive_kernel *ak, const struct tf_kernel *k)
{
    tf_strlcpy(ak->source_hash, k->source_hash, sizeof ak->source_hash);
    tf_archive_strings_free(ak->constraints, ak->nconstraints);
    ak->nconstraints = k->nconstraints;
    ak->constraints = tf_xcalloc((size_t)(k->nconstraints > 0 ? k->nconstraints : 1),
                                 sizeof *ak->constraints);
    for (int i = 0; i < k->nconstraints; i++)
        ak->constraints[i] = tf_xstrdup(tf_expr_text(k->constraints[i]));
    tf_archive_strings_free(ak->define_sizes, ak->ndefine_sizes);
    ak->ndefine_sizes = k->ndefine_sizes;
    ak->define_sizes = tf_xcalloc((size_t)(k->ndefine_sizes > 0 ? k->ndefine_sizes : 1),
                                  sizeof *ak->define_sizes);
    for (int i = 0; i < k->ndefine_sizes; i++)
        ak->define_sizes[i] = tf_xstrdup(k->size_names[k->define_sizes[i]]);
    ak->has_default = k->has_default;
    ak->default_index = k->has_default ? k->default_index : 0;
}

/* An existing entry keeps its rows; its source hash, constraint texts and default
 * follow the newest kernel file (runs record the job hash of every measurement). */
struct tf_archive_kernel *tf_archive_kernel_for(struct tf_archive *a, const struct tf_kernel *k,
                                                struct tf_error *err)
{
    struct tf_archive_kernel *ak = tf_archive_find_kernel(a, k->name);
    if (ak != NULL) {
        const struct tf_archive_shape shape = shape_of_kernel(k);
        if (tf_archive_shape_compare(ak, &shape, err) != 0)
            return NULL;
        kernel_take_provenance(ak, k);
        return ak;
    }
    const struct tf_archive_shape shape = shape_of_kernel(k);
    struct tf_archive_kernel nk = tf_archive_kernel_of_shape(k->name, &shape);
    kernel_take_provenance(&nk, k);
    if (tf_archive_kernel_validate(&nk, "archive", err) != 0) {
        kernel_free(&nk);
        return NULL;
    }
    a->kernels = tf_xrealloc(a->kernels, (size_t)(a->nkernels + 1) * sizeof *a->kernels);
    a->kernels[a->nkernels] = nk;
    return &a->kernels[a->nkernels++];
}

/* Problems are keyed by (name, sizes): a problem whose sizes changed under the
 * same name gets a new entry, so old rows keep meaning the sizes they ran with. */
/* Index of a problem named `name` (truncated as stored) with `sizes` in `ak`,
 * added if new. */
uint32_t tf_archive_problem_like(struct tf_archive_kernel *ak, const char *name,
                                 const int64_t *sizes)
{
    char stored[sizeof ak->problems[0].name];
    tf_strlcpy(stored, name, sizeof stored);
    for (int i = 0; i < ak->nproblems; i++) {
        int same = strcmp(ak->problems[i].name, stored) == 0;
        for (int s = 0; same && s < ak->nsizes; s++)
            same = ak->problems[i].sizes[s] == sizes[s];
        if (same)
            return (uint32_t)i;
    }
    ak->problems = tf_xrealloc(ak->problems, (size_t)(ak->nproblems + 1) * sizeof *ak->problems);
    struct tf_archive_problem *np = &ak->problems[ak->nproblems];
    memset(np, 0, sizeof *np); /* no default until the caller gives one */
    memcpy(np->name, stored, sizeof stored);
    np->sizes = tf_xcalloc((size_t)(ak->nsizes > 0 ? ak->nsizes : 1), sizeof *np->sizes);
    memcpy(np->sizes, sizes, (size_t)ak->nsizes * sizeof *sizes);
    return (uint32_t)ak->nproblems++;
}

/* Like the source hash, a problem's default follows the newest kernel file that
 * has the problem; rows of problems it no longer lists keep theirs. */
uint32_t tf_archive_problem_for(struct tf_archive_kernel *ak, const struct tf_kernel *k, int p)
{
    if (p < 0 || p >= k->nproblems || k->nsizes != ak->nsizes)
        tf_die("tf_archive_problem_for: problem %d of kernel '%s' out of range", p, k->name);
    uint32_t i = tf_archive_problem_like(ak, k->problems[p].name, k->problems[p].sizes);
    struct tf_archive_problem *ap = &ak->problems[i];
    uint64_t def = 0;
    ap->has_default = tf_kernel_default_for(k, p, &def);
    ap->default_index = ap->has_default ? def : 0;
    return i;
}

void tf_archive_append(struct tf_archive_kernel *ak, const struct tf_archive_row *row)
{
    struct tf_archive_row copy = *row; /* `row` may point into ak->rows, which may move */
    if (ak->nrows == ak->cap) {
        ak->cap = ak->cap ? ak->cap * 2 : 256;
        ak->rows = tf_xrealloc(ak->rows, (size_t)ak->cap * sizeof *ak->rows);
    }
    ak->rows[ak->nrows++] = copy;
}
