/* runner_child.c - the runner process: buffers, the reference, one configuration at a time.
 *
 * It serves the worker's requests (runner.c) on the channel until it closes:
 * INIT loads the job and opens the device; SETUP builds a problem's buffers
 * and its expected outputs; MEASURE runs one configuration and answers its
 * result, then puts back what the variant changed of the process
 * (runner_shield.c). Inputs come from splitmix64 seeded by (job seed,
 * kernel, problem, argument), so every runner on every node builds the same
 * data (floats in [-1, 1), ints in [0, 100), or the argument's own [LO, HI));
 * outputs are poisoned (NaN / 0x7fffffff) before the verified launch
 * so that an element a kernel forgets to write can never pass. The runner
 * keeps private copies of its protocol descriptors and points fd 1 at
 * stderr, so a kernel that printf()s cannot corrupt the protocol stream. A
 * variant launches with its own copy of the argument slots (largs); its
 * buffers sit between canaries (runner_guard.c). The worker sends absolute
 * paths, and the runner returns to its folder after every variant (a chdir()
 * changes nothing for the next). Out of host memory for a problem's buffers,
 * their images or the reference's copies is that configuration's
 * runtime_error, never the runner's abort. After a fault that breaks the
 * device context the runner answers, then exits with RUNNER_EXIT_UNHEALTHY;
 * so it does after a variant damaged it (a guard hit, changed process state). */
#include "runner.h"

#include "channel.h"
#include "runner_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../schema/job.h"
#include "../schema/kernel.h"
#include "../schema/status.h"
#include "energy.h"
#include "measure.h"
#include "verify.h"

/* The runner's exit status after a fault that broke its device context. */
#define RUNNER_EXIT_UNHEALTHY 3

/* Out of host memory for `what` (a buffer's name): the configuration's
 * runtime_error, not the runner's crash. Returns the status. */
static int no_memory(struct tf_error *err, const char *what, const char *role, size_t bytes)
{
    tf_error_set(err, TF_ERR_NOMEM, "buffer '%s': no host memory for its %s (%zu bytes): %s",
                 what, role, bytes, strerror(errno ? errno : ENOMEM));
    return TF_STATUS_RUNTIME_ERROR;
}

static void fill_poison(enum tf_elem_type type, void *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        switch (type) {
        case TF_ELEM_I32: ((int32_t *)p)[i] = INT32_C(0x7fffffff); break;
        case TF_ELEM_I64: ((int64_t *)p)[i] = INT64_C(0x7fffffff7fffffff); break;
        case TF_ELEM_F32: ((float *)p)[i] = NAN; break;
        case TF_ELEM_F64: ((double *)p)[i] = NAN; break;
        }
}

/* Inputs: floats uniform in [-1, 1), ints in [0, 100); never all zero. */
static void fill_random(enum tf_elem_type type, void *p, int64_t n, uint64_t seed)
{
    uint64_t s = seed;
    int nonzero = 0;
    for (int64_t i = 0; i < n; i++) {
        const uint64_t x = tf_runner_splitmix64(&s);
        const double u = (double)(x >> 11) * 0x1.0p-53 * 2.0 - 1.0;
        switch (type) {
        case TF_ELEM_I32: ((int32_t *)p)[i] = (int32_t)(x % 100); nonzero |= x % 100 != 0; break;
        case TF_ELEM_I64: ((int64_t *)p)[i] = (int64_t)(x % 100); nonzero |= x % 100 != 0; break;
        case TF_ELEM_F32: ((float *)p)[i] = (float)u; nonzero |= (float)u != 0.0f; break;
        case TF_ELEM_F64: ((double *)p)[i] = u; nonzero |= u != 0.0; break;
        }
    }
    if (n > 0 && !nonzero) {
        switch (type) {
        case TF_ELEM_I32: ((int32_t *)p)[0] = 1; break;
        case TF_ELEM_I64: ((int64_t *)p)[0] = 1; break;
        case TF_ELEM_F32: ((float *)p)[0] = 1.0f; break;
        case TF_ELEM_F64: ((double *)p)[0] = 1.0; break;
        }
    }
}

/* Inputs with a range of their own (`init: {random: [LO, HI]}`): uniform in
 * [LO, HI) from the same splitmix64 stream. Integers are LO + x mod (HI - LO)
 * (the modulo bias is below 2^-40 for spans under 2^24); reals LO + (HI - LO)
 * * u, u in [0, 1) with 53 bits, then kept inside the range where rounding,
 * to double or to float, would reach HI or fall under LO (the loader made
 * sure a float32 exists in it). */
static void fill_random_range(enum tf_elem_type type, void *p, int64_t n, uint64_t seed,
                              struct tf_value lo, struct tf_value hi)
{
    uint64_t s = seed;
    if (type == TF_ELEM_I32 || type == TF_ELEM_I64) {
        const uint64_t span = (uint64_t)hi.u.i - (uint64_t)lo.u.i;
        for (int64_t i = 0; i < n; i++) {
            const int64_t v = (int64_t)((uint64_t)lo.u.i + tf_runner_splitmix64(&s) % span);
            if (type == TF_ELEM_I32)
                ((int32_t *)p)[i] = (int32_t)v;
            else
                ((int64_t *)p)[i] = v;
        }
        return;
    }
    const double a = tf_value_as_double(lo), b = tf_value_as_double(hi);
    for (int64_t i = 0; i < n; i++) {
        const double u = (double)(tf_runner_splitmix64(&s) >> 11) * 0x1.0p-53;
        double v = a + (b - a) * u;
        if (v >= b)
            v = nextafter(b, -INFINITY);
        if (v < a)
            v = a;
        if (type == TF_ELEM_F64) {
            ((double *)p)[i] = v;
            continue;
        }
        float f = (float)v;
        if ((double)f >= b)
            f = nextafterf(f, -INFINITY);
        if ((double)f < a)
            f = nextafterf(f, INFINITY);
        ((float *)p)[i] = f;
    }
}

static void fill_const(enum tf_elem_type type, void *p, int64_t n, int one)
{
    for (int64_t i = 0; i < n; i++)
        switch (type) {
        case TF_ELEM_I32: ((int32_t *)p)[i] = one; break;
        case TF_ELEM_I64: ((int64_t *)p)[i] = one; break;
        case TF_ELEM_F32: ((float *)p)[i] = (float)one; break;
        case TF_ELEM_F64: ((double *)p)[i] = one; break;
        }
}

static void free_buffers(struct runner_child *c)
{
    if (c->cur.bufs == NULL)
        return;
    for (int i = 0; i < c->cur.k->nargs; i++) {
        struct runner_buffer *b = &c->cur.bufs[i];
        if (b->dev_base)
            c->be->release(c->ctx, b->dev_base);
        if (b->dev_init)
            c->be->release(c->ctx, b->dev_init);
        if (b->dev_snap)
            c->be->release(c->ctx, b->dev_snap);
        if (b->dev_expected)
            c->be->release(c->ctx, b->dev_expected);
        tf_runner_sealed_free(b->init, b->bytes); /* (expected: its set's) */
        if (b->got_pinned)
            c->be->host_free(c->ctx, b->got);
        else
            free(b->got);
    }
    free(c->cur.bufs);
    c->cur.bufs = NULL;
    if (c->cur.guard_pinned)
        c->be->host_free(c->ctx, c->cur.guard_pinned);
    c->cur.guard_pinned = NULL;
}

static void sets_drop_all(struct runner_child *c);

static void reset_problem(struct runner_child *c)
{
    sets_drop_all(c);
    free_buffers(c);
    free(c->cur.scalars);
    free(c->cur.args);
    free(c->cur.largs);
    free(c->cur.lslots);
    free(c->cur.slots);
    free(c->cur.reference);
    c->cur.scalars = NULL;
    c->cur.args = NULL;
    c->cur.largs = NULL;
    c->cur.lslots = NULL;
    c->cur.slots = NULL;
    c->cur.reference = NULL;
    c->cur.ready = 0;
    c->cur.k = NULL;
}

static const char *scalar_type_name(enum tf_elem_type t)
{
    static const char *const names[] = {"int32", "int64", "float32", "float64"};
    return names[t];
}

/* Bind the slots of `config` and evaluate every scalar argument. A value the
 * argument's type cannot hold (N*BLOCK past 2^31 for an int32) is refused: the
 * load checks only the scalars that read nothing but problem sizes
 * (schema/kernel.c), and one that reads a parameter or a device property is
 * known only here; converted anyway it would reach the variant wrapped, and
 * that configuration would fail verification for a reason nobody sees. The
 * caller records the configuration `invalid`, like any other argument of it
 * that cannot be evaluated, and the run goes on. */
static int eval_scalars(struct runner_child *c, uint64_t config, struct tf_error *err)
{
    const struct tf_kernel *k = c->cur.k;
    tf_kernel_bind(k, config, (int)c->cur.problem, &c->dev, c->cur.slots);
    for (int i = 0; i < k->nargs; i++) {
        const struct tf_arg *a = &k->args[i];
        if (a->kind != TF_ARG_SCALAR)
            continue;
        struct tf_value v;
        char why[160];
        if (tf_expr_eval(a->value, c->cur.slots, &v, err) != 0)
            return tf_error_set(err, TF_ERR_EVAL, "argument '%s': %.900s", a->name,
                                err->message);
        if (!tf_scalar_fits(a->type, v, why, sizeof why))
            return tf_error_set(err, TF_ERR_EVAL,
                                "argument '%s' (%s scalar = %.200s) at this configuration: "
                                "%s; declare it 'scalar: %s' (and the kernel's parameter to "
                                "match) or leave such values out with a constraint",
                                a->name, scalar_type_name(a->type), tf_expr_text(a->value),
                                why, a->type == TF_ELEM_I32 ? "int64" : "float64");
        switch (a->type) {
        case TF_ELEM_I32: c->cur.scalars[i].i32 = (int32_t)(v.is_float ? (int64_t)v.u.f : v.u.i); break;
        case TF_ELEM_I64: c->cur.scalars[i].i64 = v.is_float ? (int64_t)v.u.f : v.u.i; break;
        case TF_ELEM_F32: c->cur.scalars[i].f32 = (float)tf_value_as_double(v); break;
        case TF_ELEM_F64: c->cur.scalars[i].f64 = tf_value_as_double(v); break;
        }
    }
    return 0;
}

/* Buffer sizes of `config` into counts[]; -1 + err if one cannot be evaluated or is absurd. */
static int eval_sizes(struct runner_child *c, uint64_t config, int64_t *counts,
                      struct tf_error *err)
{
    const struct tf_kernel *k = c->cur.k;
    tf_kernel_bind(k, config, (int)c->cur.problem, &c->dev, c->cur.slots);
    for (int i = 0; i < k->nargs; i++) {
        const struct tf_arg *a = &k->args[i];
        counts[i] = 0;
        if (a->kind != TF_ARG_BUFFER)
            continue;
        struct tf_value v;
        if (tf_expr_eval(a->size, c->cur.slots, &v, err) != 0)
            return tf_error_set(err, TF_ERR_EVAL, "size of '%s': %.900s", a->name, err->message);
        if (v.is_float && v.u.f != floor(v.u.f))
            return tf_error_set(err, TF_ERR_EVAL, "size of '%s' is %g, not a whole number",
                                a->name, v.u.f);
        if (v.is_float ? v.u.f < 0 : v.u.i < 0)
            return tf_error_set(err, TF_ERR_EVAL,
                                "size of '%s' is %.17g elements: a size must be >= 0", a->name,
                                tf_value_as_double(v));
        /* 2^63 and beyond is no int64_t: the cast would be undefined (it
         * gave INT64_MIN), and no memory is that large anyway. */
        if (v.is_float && v.u.f >= 9223372036854775808.0)
            return tf_error_set(err, TF_ERR_EVAL,
                                "size of '%s' is %g elements, beyond the device's memory",
                                a->name, v.u.f);
        const int64_t n = v.is_float ? (int64_t)v.u.f : v.u.i;
        const uint64_t limit = c->dev.memory_bytes ? c->dev.memory_bytes : UINT64_MAX;
        if ((uint64_t)n > limit / tf_elem_size(a->type))
            return tf_error_set(err, TF_ERR_EVAL,
                                "size of '%s' is %lld elements, beyond the device's memory",
                                a->name, (long long)n);
        counts[i] = n;
    }
    return 0;
}

/* 1 if the device can compare outputs (backend.h, compare_available) and the
 * current kernel has no more outputs than it has slots for. */
static int compare_slots_fit(const struct runner_child *c)
{
    if (c->be->compare_available == NULL || c->be->compare_queue == NULL ||
        c->be->compare_result == NULL || !c->be->compare_available(c->ctx))
        return 0;
    int outputs = 0;
    for (int i = 0; i < c->cur.k->nargs; i++)
        outputs += c->cur.k->args[i].kind == TF_ARG_BUFFER && c->cur.k->args[i].output;
    return outputs <= TF_COMPARE_SLOTS;
}

/* 1 if the backend can download outputs while the samples run. */
static int can_overlap_downloads(const struct runner_child *c)
{
    return c->be->copy && c->be->host_alloc && c->be->host_free && c->be->download_async &&
           c->be->download_wait;
}

/* Wait for the downloads queued by tf_runner_child_measure, if any; a status. */
static int wait_downloads(struct runner_child *c, struct tf_error *err)
{
    if (!c->downloads_queued)
        return TF_STATUS_OK;
    c->downloads_queued = 0;
    return c->be->download_wait(c->ctx, err) == 0 ? TF_STATUS_OK : TF_STATUS_RUNTIME_ERROR;
}

/* Where a runner's time goes, per phase, when TUNEFARM_PROFILE is set: printed
 * to stderr when it exits (the overhead a duty cycle below 100% is made of).
 * Besides the phases of a configuration: `verify` (comparing the outputs,
 * inside the samples when they overlap), `device` (the results' device time),
 * `after` (putting the process back, unloading the binary, the shield's
 * answer) and `idle` (from an answer to the next request: the worker's
 * turn, and its wait for a compiled binary). */
static struct {
    int on;
    long configs, setups, kept; /* set-ups, and those answered from kept problems */
    double setup, load, restore, verify_launch, download, measure, telemetry, total;
    double verify, device, after, idle;
    double setup_cpu; /* CPU seconds of set-ups (a reference may run on every core) */
    long compared_on_device, compared_on_host, compare_damaged; /* outputs, by who decided */
    double measured_at, replied_at; /* when the last configuration's phases, answer ended */
    long energy_windows, energy_reads; /* energy windows run, counter readings in them */
    double energy_wall, energy_busy, energy_read; /* their seconds: wall, device, reading */
    long strict_configs;            /* configurations measured under `measure` (not screened) */
    double strict_total, strict_device; /* their seconds, as `total` and `device` */
} profile;

/* CPU seconds this process has used, user and system, all its threads. */
static double runner_cpu_seconds(void)
{
    struct rusage ru;
    if (!profile.on || getrusage(RUSAGE_SELF, &ru) != 0) /* only the profile reads it */
        return 0.0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* ---- the reference's outputs, kept across runners ----
 *
 * Computing the reference is the slow part of a SETUP (a CPU GEMM takes
 * seconds), and a runner is replaced after every variant that damaged it or
 * changed its state. So the reference's outputs are written into a memfd,
 * sealed once computed (F_SEAL_WRITE: no mapping of it can become writable
 * again, which mprotect alone would allow), and the runner hands that memfd
 * to its worker after its answer (SCM_RIGHTS, one byte after the frame, per
 * memfd). Each set of outputs has a key, a text the runner makes: the kernel,
 * the problem, every buffer's size and the values of the parameters the
 * reference depends on (reference.depends_on). The worker keeps the sets of
 * its last few problems with their keys (at most RUNNER_EXPECTED_MAX_SETS a
 * problem; RUNNER_WORKER_EXPECTED_* in all) and offers a problem's with every
 * SETUP of the same kernel, problem and reference; a runner maps one
 * instead of running the reference when a configuration needs its key and the
 * memfd is sealed and as long as the buffers' layout says. The outputs are
 * then exactly the ones the first runner compared every variant with, so a
 * restart changes nothing but its cost.
 *
 * A runner keeps the sets of the current problem too (expected_set, under the
 * same bounds, the one in use never dropped): a configuration whose key
 * differs from the set in use - other depends_on values, other buffer sizes -
 * selects the set of its key, mapping an offered one or running the
 * reference (with that configuration's scalars, sizes and depends_on values)
 * when there is none. So the reference runs once per distinct key however the
 * configurations are ordered. A key without depends_on values is the one
 * SETUP's configuration made: the reference of a kernel that declares nothing
 * runs once per problem (and buffer sizes), as before. The worker's memfds are
 * the pages the runner maps, so they cost no memory while a runner lives.
 * Where memfd_create is missing the outputs go to sealed anonymous pages, and
 * every runner runs the reference for itself. */

#define EXPECTED_SEALS (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)

/* Bytes of the mapping of `b`'s expected outputs (a mapping is never empty). */
static size_t expected_span(const struct runner_buffer *b)
{
    return b->bytes ? b->bytes : 1;
}

/* Where each output's expected values sit in the memfd (off[i], page
 * aligned, in argument order); returns its length. */
static size_t expected_layout(const struct runner_child *c, size_t *off)
{
    const long page_size = sysconf(_SC_PAGESIZE);
    const size_t page = page_size > 0 ? (size_t)page_size : 4096;
    size_t total = 0;
    for (int i = 0; i < c->cur.k->nargs; i++) {
        off[i] = 0;
        if (c->cur.k->args[i].kind != TF_ARG_BUFFER || !c->cur.k->args[i].output)
            continue;
        off[i] = total;
        total += (expected_span(&c->cur.bufs[i]) + page - 1) / page * page;
    }
    return total;
}

/* The key of the expected outputs the configuration bound in c->cur.slots needs
 * (malloc'd): the buffers' sizes now and the values of the reference's
 * depends_on parameters. */
static char *expected_key(const struct runner_child *c)
{
    const struct tf_kernel *k = c->cur.k;
    struct tf_buf t = {0};
    char item[64];
    int n = snprintf(item, sizeof item, "kernel %u problem %u sizes", c->cur.kernel, c->cur.problem);
    tf_buf_put_bytes(&t, item, (size_t)n);
    for (int i = 0; i < k->nargs; i++) {
        n = snprintf(item, sizeof item, " %lld", (long long)c->cur.bufs[i].count);
        tf_buf_put_bytes(&t, item, (size_t)n);
    }
    if (k->nref_depends > 0) {
        int64_t *values = tf_xcalloc((size_t)k->nref_depends, sizeof *values);
        tf_kernel_reference_values(k, c->cur.slots, values);
        tf_buf_put_bytes(&t, " depends", 8);
        for (int j = 0; j < k->nref_depends; j++) {
            n = snprintf(item, sizeof item, " %lld", (long long)values[j]);
            tf_buf_put_bytes(&t, item, (size_t)n);
        }
        free(values);
    }
    tf_buf_put_bytes(&t, "", 1);
    return (char *)t.data;
}

/* Unmap set `i`'s outputs (or close its offered memfd) and remove it. */
static void set_drop(struct runner_child *c, int i)
{
    struct expected_set *e = &c->cur.sets[i];
    for (int a = 0; e->maps && a < c->cur.k->nargs; a++)
        tf_runner_sealed_free(e->maps[a], e->bytes[a]);
    if (e->fd >= 0)
        close(e->fd);
    free(e->maps);
    free(e->bytes);
    free(e->sums);
    free(e->key);
    const int last = --c->cur.nsets;
    if (c->cur.current_set == i)
        c->cur.current_set = -1;
    else if (c->cur.current_set == last) /* the last one moves into slot i */
        c->cur.current_set = i;
    if (i != last)
        c->cur.sets[i] = c->cur.sets[last];
}

/* Every set of the current problem, dropped (the buffers' `expected` with them). */
static void sets_drop_all(struct runner_child *c)
{
    while (c->cur.nsets > 0)
        set_drop(c, c->cur.nsets - 1);
    free(c->cur.sets);
    c->cur.sets = NULL;
    c->cur.current_set = -1;
    for (int i = 0; c->cur.bufs && c->cur.k && i < c->cur.k->nargs; i++)
        c->cur.bufs[i].expected = NULL;
}

/* A new, empty set with key `key` (taken), returned by index. */
static int set_add(struct runner_child *c, char *key, int fd)
{
    c->cur.sets = tf_xrealloc(c->cur.sets, (size_t)(c->cur.nsets + 1) * sizeof *c->cur.sets);
    struct expected_set *e = &c->cur.sets[c->cur.nsets];
    memset(e, 0, sizeof *e);
    e->key = key;
    e->fd = fd;
    e->id = ++c->set_ids;
    e->maps = tf_xcalloc((size_t)c->cur.k->nargs, sizeof *e->maps);
    e->bytes = tf_xcalloc((size_t)c->cur.k->nargs, sizeof *e->bytes);
    return c->cur.nsets++;
}

/* Drop the least recently used sets other than the one in use while there
 * are more than the bounds allow. */
static void sets_trim(struct runner_child *c)
{
    for (;;) {
        size_t bytes = 0;
        int oldest = -1;
        for (int i = 0; i < c->cur.nsets; i++) {
            if (i == c->cur.current_set)
                continue;
            bytes += c->cur.sets[i].total;
            if (oldest < 0 || c->cur.sets[i].used < c->cur.sets[oldest].used)
                oldest = i;
        }
        if (oldest < 0 ||
            (c->cur.nsets <= RUNNER_EXPECTED_MAX_SETS && bytes <= RUNNER_EXPECTED_MAX_BYTES))
            return;
        set_drop(c, oldest);
    }
}

/* Map the outputs of set `i`, a memfd an earlier runner made that the worker
 * offered, if it fits the buffers as built now: sealed against writes, as
 * long as their layout (its key, which names their sizes, matched already).
 * 0 if every output is mapped from it; -1: nothing is (the caller drops it). */
static int set_adopt(struct runner_child *c, int i)
{
    const struct tf_kernel *k = c->cur.k;
    struct expected_set *e = &c->cur.sets[i];
    size_t *off = tf_xcalloc((size_t)k->nargs, sizeof *off);
    const size_t total = expected_layout(c, off);
    struct stat st;
    const int seals = fcntl(e->fd, F_GET_SEALS);
    int ok = fstat(e->fd, &st) == 0 && (uint64_t)st.st_size == (uint64_t)total && seals >= 0 &&
             (seals & EXPECTED_SEALS) == EXPECTED_SEALS;
    for (int a = 0; ok && a < k->nargs; a++) {
        const struct runner_buffer *b = &c->cur.bufs[a];
        if (k->args[a].kind != TF_ARG_BUFFER || !k->args[a].output)
            continue;
        void *p = mmap(NULL, expected_span(b), PROT_READ, MAP_SHARED, e->fd, (off_t)off[a]);
        if (p == MAP_FAILED) {
            ok = 0;
        } else {
            e->maps[a] = p;
            e->bytes[a] = b->bytes;
            e->total += b->bytes;
        }
    }
    free(off);
    if (!ok)
        return -1;
    close(e->fd);
    e->fd = -1;
    return 0;
}

/* Run the reference on private copies of the inputs, for the configuration
 * bound in c->cur.slots (its scalars in c->cur.scalars), into a new set with key
 * `key` (taken), read-only: in a sealed memfd where there is one (queued for
 * the worker: c->fresh_fds), else in sealed anonymous pages. The reference's
 * arguments are the kernel's, then a pointer to each problem size and to each
 * depends_on value (int64_t), then NULL (kernel.md, References). A status and
 * the set's index in *set; err says why when not ok. */
static int run_reference(struct runner_child *c, char *key, int *set, struct tf_error *err)
{
    const struct tf_kernel *k = c->cur.k;
    const int nref = k->nargs + k->nsizes + k->nref_depends;
    void **ref_args = tf_xcalloc((size_t)nref + 1, sizeof *ref_args);
    void **ref_ptrs = tf_xcalloc((size_t)k->nargs, sizeof *ref_ptrs);
    int64_t *values = tf_xcalloc((size_t)(k->nsizes + k->nref_depends + 1), sizeof *values);
    size_t *off = tf_xcalloc((size_t)k->nargs, sizeof *off);
    void *ref_fn = NULL;
    int status = TF_STATUS_RUNTIME_ERROR;
    const int i = *set = set_add(c, key, -1);
    int fd = memfd_create("tunefarm-expected", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    const size_t total = expected_layout(c, off);
    if (fd >= 0 && ftruncate(fd, (off_t)total) != 0) {
        close(fd); /* anonymous pages will do */
        fd = -1;
    }
    for (int s = 0; s < k->nsizes; s++) {
        values[s] = k->problems[c->cur.problem].sizes[s];
        ref_args[k->nargs + s] = &values[s];
    }
    tf_kernel_reference_values(k, c->cur.slots, values + k->nsizes);
    for (int j = 0; j < k->nref_depends; j++)
        ref_args[k->nargs + k->nsizes + j] = &values[k->nsizes + j];
    for (int a = 0; a < k->nargs; a++) {
        const struct tf_arg *arg = &k->args[a];
        const struct runner_buffer *b = &c->cur.bufs[a];
        if (arg->kind != TF_ARG_BUFFER) {
            ref_args[a] = &c->cur.scalars[a];
            continue;
        }
        /* The reference gets private copies: it may write any of them. */
        if (arg->output && fd >= 0) {
            ref_ptrs[a] = mmap(NULL, expected_span(b), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                               (off_t)off[a]);
            if (ref_ptrs[a] == MAP_FAILED)
                ref_ptrs[a] = NULL;
        } else {
            ref_ptrs[a] = tf_runner_sealed_alloc(b->bytes);
        }
        if (ref_ptrs[a] == NULL) {
            status = no_memory(err, arg->name, "reference's copy", b->bytes);
            goto out;
        }
        memcpy(ref_ptrs[a], b->init, b->bytes);
        ref_args[a] = &ref_ptrs[a];
    }
    if (tf_backend_host.load(NULL, c->cur.reference, k->ref_entry, &ref_fn, err) != 0) {
        status = TF_STATUS_LAUNCH_ERROR;
        tf_error_set(err, TF_ERR_BACKEND, "reference: %.900s", err->message);
        goto out;
    }
    status = tf_runner_guarded_reference(c, ref_fn, ref_args, err);
    if (status != TF_STATUS_OK)
        goto out;
    /* The outputs, read-only from here on. In the memfd: its writable
     * mappings go first (a seal against writes needs none left), then each
     * output is mapped again, read-only. */
    int sealed = 0;
    if (fd >= 0) {
        for (int a = 0; a < k->nargs; a++)
            if (k->args[a].kind == TF_ARG_BUFFER && k->args[a].output) {
                tf_runner_sealed_free(ref_ptrs[a], c->cur.bufs[a].bytes);
                ref_ptrs[a] = NULL;
            }
        sealed = fcntl(fd, F_ADD_SEALS, EXPECTED_SEALS | F_SEAL_SEAL) == 0;
    }
    struct expected_set *e = &c->cur.sets[i];
    for (int a = 0; a < k->nargs; a++) {
        const struct runner_buffer *b = &c->cur.bufs[a];
        if (k->args[a].kind != TF_ARG_BUFFER || !k->args[a].output)
            continue;
        e->bytes[a] = b->bytes;
        e->total += b->bytes;
        if (fd < 0) {
            e->maps[a] = ref_ptrs[a];
            ref_ptrs[a] = NULL;
            tf_runner_sealed_seal(e->maps[a], b->bytes);
            continue;
        }
        e->maps[a] = mmap(NULL, expected_span(b), PROT_READ, MAP_SHARED, fd, (off_t)off[a]);
        if (e->maps[a] == MAP_FAILED) {
            e->maps[a] = NULL;
            status = no_memory(err, k->args[a].name, "reference's outputs", b->bytes);
            goto out;
        }
    }
    if (sealed) { /* what the worker keeps for the next runner */
        c->fresh_fds = tf_xrealloc(c->fresh_fds, (size_t)(c->nfresh + 1) * sizeof *c->fresh_fds);
        c->fresh_keys =
            tf_xrealloc(c->fresh_keys, (size_t)(c->nfresh + 1) * sizeof *c->fresh_keys);
        c->fresh_fds[c->nfresh] = fd;
        c->fresh_keys[c->nfresh++] = tf_xstrdup(e->key);
        fd = -1;
    }
    status = TF_STATUS_OK;
out:
    /* The reference stays loaded for the runner's life: an OpenMP reference
     * leaves libgomp's idle thread pool behind, and unloading the library that
     * brought libgomp in would pull the code from under those threads. (Its
     * handle is kept, so that a leak checker sees it is not lost.) */
    if (ref_fn != NULL) {
        c->loaded_references = tf_xrealloc(c->loaded_references,
                                           (size_t)(c->nloaded_references + 1) * sizeof(void *));
        c->loaded_references[c->nloaded_references++] = ref_fn;
    }
    for (int a = 0; a < k->nargs; a++)
        tf_runner_sealed_free(ref_ptrs[a], c->cur.bufs[a].bytes);
    if (fd >= 0)
        close(fd);
    if (status != TF_STATUS_OK) {
        set_drop(c, i);
        *set = -1;
    }
    free(off);
    free(values);
    free(ref_ptrs);
    free(ref_args);
    return status;
}

/* Close the memfds computed here that the worker was not given (their
 * mappings stay). */
static void fresh_forget(struct runner_child *c)
{
    for (int i = 0; i < c->nfresh; i++) {
        close(c->fresh_fds[i]);
        free(c->fresh_keys[i]);
    }
    c->nfresh = 0;
}

/* Point the buffers' `expected` at the outputs the configuration bound in
 * c->cur.slots needs (its key): the set in use, another set this runner has, an
 * offered memfd mapped now, or the reference run now. *ran (if not NULL) is
 * set when the reference ran. A status; err says why when not ok. */
static int expected_select(struct runner_child *c, int *ran, struct tf_error *err)
{
    const struct tf_kernel *k = c->cur.k;
    char *key = expected_key(c);
    int i = -1;
    for (int j = 0; j < c->cur.nsets && i < 0; j++)
        if (strcmp(c->cur.sets[j].key, key) == 0)
            i = j;
    if (i >= 0 && i == c->cur.current_set) {
        free(key);
        c->cur.sets[i].used = ++c->set_clock;
        return TF_STATUS_OK;
    }
    if (i >= 0 && c->cur.sets[i].fd >= 0 && set_adopt(c, i) != 0) {
        set_drop(c, i); /* not what it says: compute it */
        i = -1;
    }
    if (i >= 0) {
        free(key);
    } else {
        if (c->notify_out >= 0) { /* the worker waits longer for this answer */
            struct tf_buf b = {0};
            tf_buf_put_u8(&b, RUNNER_ANSWER_REFERENCE);
            tf_channel_write_frame(c->notify_out, &b, -1);
            tf_buf_free(&b);
            c->notify_out = -1;
        }
        const int status = run_reference(c, key, &i, err);
        if (ran)
            *ran = 1;
        if (status != TF_STATUS_OK)
            return status;
    }
    c->cur.current_set = i;
    c->cur.sets[i].used = ++c->set_clock;
    for (int a = 0; a < k->nargs; a++)
        c->cur.bufs[a].expected = c->cur.sets[i].maps[a];
    sets_trim(c);
    return TF_STATUS_OK;
}

/* (Re)build every buffer for `config`: inputs and device memory, and its
 * scalars (the expected outputs are expected_select's). Returns a status;
 * err says why when not ok. */
static int build_buffers(struct runner_child *c, uint64_t config, const int64_t *counts,
                         struct tf_error *err)
{
    const struct tf_kernel *k = c->cur.k;
    const int compare_here = compare_slots_fit(c);
    int status = TF_STATUS_RUNTIME_ERROR;

    free_buffers(c);
    c->cur.current_set = -1; /* new buffers: a set is selected for them */
    c->cur.bufs = tf_xcalloc((size_t)k->nargs, sizeof *c->cur.bufs);
    for (int i = 0; i < k->nargs; i++) {
        const struct tf_arg *a = &k->args[i];
        struct runner_buffer *b = &c->cur.bufs[i];
        c->cur.args[i] = &c->cur.scalars[i];
        if (a->kind != TF_ARG_BUFFER)
            continue;
        b->count = counts[i];
        b->bytes = (size_t)counts[i] * tf_elem_size(a->type);
        if (b->bytes > SIZE_MAX - 2 * RUNNER_GUARD_BYTES) {
            tf_error_set(err, TF_ERR_NOMEM, "buffer '%s' of %zu bytes is too large", a->name,
                         b->bytes);
            goto fail;
        }
        b->init = tf_runner_sealed_alloc(b->bytes);
        if (b->init == NULL) {
            status = no_memory(err, a->name, "initial image", b->bytes);
            goto fail;
        }
        const uint64_t seed =
            tf_mix64(tf_mix64(tf_mix64(tf_mix64(c->job->seed) ^ c->cur.kernel) ^ c->cur.problem) ^
                     (uint64_t)i);
        switch (a->init) {
        case TF_INIT_RANDOM:
            if (a->init_range)
                fill_random_range(a->type, b->init, b->count, seed, a->init_lo, a->init_hi);
            else
                fill_random(a->type, b->init, b->count, seed);
            break;
        case TF_INIT_ZERO: fill_const(a->type, b->init, b->count, 0); break;
        case TF_INIT_ONES: fill_const(a->type, b->init, b->count, 1); break;
        case TF_INIT_POISON: fill_poison(a->type, b->init, b->count); break;
        }
        tf_runner_sealed_seal(b->init, b->bytes);
        if (c->be->alloc(c->ctx, b->bytes + 2 * RUNNER_GUARD_BYTES, &b->dev_base, err) != 0)
            goto fail;
        b->dev = (char *)b->dev_base + RUNNER_GUARD_BYTES;
        if (tf_runner_guard_fill(c, b, err) != 0)
            goto fail;
        /* Each configuration starts from `init`: keep it on the device when a
         * device-side copy is possible (much faster than uploading it again). */
        if (c->be->copy) {
            struct tf_error spare = {0};
            if (c->be->alloc(c->ctx, b->bytes, &b->dev_init, &spare) != 0)
                b->dev_init = NULL; /* no room for the image: upload each time instead */
            else if (c->be->upload(c->ctx, b->dev_init, b->init, b->bytes, err) != 0)
                goto fail;
        }
        c->cur.args[i] = &b->dev;
        if (a->output && can_overlap_downloads(c)) {
            /* Without room for either, the download is the synchronous one. */
            struct tf_error spare = {0};
            if (c->be->host_alloc(c->ctx, b->bytes, &b->got, &spare) == 0)
                b->got_pinned = 1;
            if (b->got_pinned && c->be->alloc(c->ctx, b->bytes, &b->dev_snap, &spare) != 0)
                b->dev_snap = NULL;
            /* Without room, or where the device cannot, compared on the host. */
            if (b->dev_snap && compare_here &&
                c->be->alloc(c->ctx, b->bytes, &b->dev_expected, &spare) != 0)
                b->dev_expected = NULL;
        }
        if (a->output && b->got == NULL && (b->got = malloc(b->bytes ? b->bytes : 1)) == NULL) {
            status = no_memory(err, a->name, "downloaded results", b->bytes);
            goto fail;
        }
    }
    if (can_overlap_downloads(c)) { /* tf_runner_guard_check queues its downloads there */
        size_t nbuffers = 0;
        struct tf_error spare = {0};
        for (int i = 0; i < k->nargs; i++)
            nbuffers += k->args[i].kind == TF_ARG_BUFFER;
        void *room = NULL;
        if (nbuffers > 0 &&
            c->be->host_alloc(c->ctx, 2 * RUNNER_GUARD_BYTES * nbuffers, &room, &spare) == 0)
            c->cur.guard_pinned = room;
    }
    if (eval_scalars(c, config, err) != 0) {
        status = TF_STATUS_INVALID;
        goto fail;
    }
    return TF_STATUS_OK;
fail:
    free_buffers(c);
    return status;
}

/* ---- problems kept set up ----
 *
 * A worker moves between problems: an adaptive search keeps only part of
 * its budget in flight (coordinator/plan.c), so a GPU worker of a job with
 * several problems measures a few of one, then a few of the next. Building a
 * problem again costs its inputs, uploads and often its reference (a CPU
 * GEMM of 4096^3 takes seconds): on jobs/default.yaml, 14.7 s of a 161 s run
 * (bench/results/search-duty-2026-11-27-h200.md). So a SETUP keeps the
 * problem it replaces, within RUNNER_KEPT_* (least recently used dropped
 * first), and one for a kept problem makes it current again. Its device
 * images are uploaded again from the sealed host copies and its guards
 * filled again: a variant of another problem may have written anywhere on
 * the device, and it must cost only its own configuration. */

/* Bytes `p` holds on the device (buffers with their guards, images,
 * snapshots) and on the host (images, downloads, expected outputs). */
static void problem_footprint(const struct runner_problem *p, uint64_t *device, uint64_t *host)
{
    *device = *host = 0;
    for (int i = 0; p->bufs != NULL && p->k != NULL && i < p->k->nargs; i++) {
        const struct runner_buffer *b = &p->bufs[i];
        if (b->dev_base)
            *device += b->bytes + 2 * RUNNER_GUARD_BYTES;
        if (b->dev_init)
            *device += b->bytes;
        if (b->dev_snap)
            *device += b->bytes;
        if (b->dev_expected)
            *device += b->bytes;
        if (b->init)
            *host += b->bytes;
        if (b->got)
            *host += b->bytes;
    }
    for (int i = 0; i < p->nsets; i++)
        *host += p->sets[i].total;
}

/* Free kept problem `i` (it leaves the list). */
static void kept_drop(struct runner_child *c, int i)
{
    const struct runner_problem cur = c->cur;
    c->cur = c->kept[i];
    reset_problem(c);
    c->cur = cur;
    c->kept[i] = c->kept[--c->nkept];
}

static void kept_drop_all(struct runner_child *c)
{
    while (c->nkept > 0)
        kept_drop(c, c->nkept - 1);
}

/* Drop the least recently used kept problems while there are more, or they
 * hold more memory, than RUNNER_KEPT_* allow. */
static void kept_trim(struct runner_child *c)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const uint64_t ram = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    const uint64_t host_limit = ram > 0 ? ram / RUNNER_KEPT_HOST_SHARE : (uint64_t)1 << 28;
    /* The host backend's device memory is the host's: one limit for both. */
    const int on_host = strcmp(c->be->name, "host") == 0;
    const uint64_t device_limit =
        on_host ? host_limit
                : c->dev.memory_bytes > 0 ? c->dev.memory_bytes / RUNNER_KEPT_DEVICE_SHARE
                                          : (uint64_t)1 << 30;
    for (;;) {
        uint64_t device = 0, host = 0;
        int oldest = -1;
        for (int i = 0; i < c->nkept; i++) {
            uint64_t d, h;
            problem_footprint(&c->kept[i], &d, &h);
            device += d;
            host += h;
            if (oldest < 0 || c->kept[i].used < c->kept[oldest].used)
                oldest = i;
        }
        if (on_host) {
            host += device;
            device = 0;
        }
        if (oldest < 0 || (c->nkept <= RUNNER_KEPT_MAX && device <= device_limit &&
                           host <= host_limit))
            return;
        kept_drop(c, oldest);
    }
}

/* The current problem joins the kept ones if it is set up (else it is freed). */
static void keep_current(struct runner_child *c)
{
    if (!c->cur.ready || c->cur.bufs == NULL || c->cur.current_set < 0) {
        reset_problem(c);
        return;
    }
    c->cur.used = ++c->set_clock;
    c->kept = tf_xrealloc(c->kept, (size_t)(c->nkept + 1) * sizeof *c->kept);
    c->kept[c->nkept++] = c->cur;
    memset(&c->cur, 0, sizeof c->cur);
    c->cur.current_set = -1;
    kept_trim(c);
}

/* Kept problem `i` becomes current: its device images uploaded again from
 * the sealed host copies, its guards filled again. A status (not ok: the
 * caller frees it). */
static int kept_restore(struct runner_child *c, int i, struct tf_error *err)
{
    c->cur = c->kept[i];
    c->kept[i] = c->kept[--c->nkept];
    for (int a = 0; a < c->cur.k->nargs; a++) {
        struct runner_buffer *b = &c->cur.bufs[a];
        if (c->cur.k->args[a].kind != TF_ARG_BUFFER)
            continue;
        if (b->dev_init != NULL && c->be->upload(c->ctx, b->dev_init, b->init, b->bytes, err) != 0)
            return TF_STATUS_RUNTIME_ERROR;
        if (tf_runner_guard_fill(c, b, err) != 0)
            return TF_STATUS_RUNTIME_ERROR;
    }
    profile.kept++;
    return TF_STATUS_OK;
}

/* The sets the worker offered with a SETUP of a kept problem: those it
 * already has are closed, the others join its sets (mapped when selected). */
static void kept_offered(struct runner_child *c, int noffered, int *offered, char **keys)
{
    for (int i = 0; i < noffered; i++) {
        int known = 0;
        for (int s = 0; s < c->cur.nsets && !known; s++)
            known = strcmp(c->cur.sets[s].key, keys[i]) == 0;
        if (known) {
            close(offered[i]);
            free(keys[i]);
        } else {
            set_add(c, keys[i], offered[i]);
        }
    }
    sets_trim(c);
}

static int problem_build(struct runner_child *c, uint32_t kernel, uint32_t problem,
                         uint64_t config, const char *reference, int noffered, int *offered,
                         char **keys, struct tf_error *err);

/* SETUP: make (kernel, problem) current, with buffers sized for `config` and
 * its expected outputs; `offered` memfds (with their `keys`, all taken) are
 * the sets the worker kept of this problem. */
static int child_setup(struct runner_child *c, uint32_t kernel, uint32_t problem, uint64_t config,
                       const char *reference, int noffered, int *offered, char **keys,
                       struct tf_error *err)
{
    keep_current(c);
    for (int i = 0; i < c->nkept; i++) {
        const struct runner_problem *p = &c->kept[i];
        if (p->kernel != kernel || p->problem != problem || strcmp(p->reference, reference) != 0)
            continue;
        const int status = kept_restore(c, i, err);
        if (status == TF_STATUS_OK) {
            kept_offered(c, noffered, offered, keys);
            return status;
        }
        reset_problem(c); /* rebuilt below, from nothing */
        break;
    }
    int status = problem_build(c, kernel, problem, config, reference, noffered, offered, keys,
                               err);
    if (status == TF_STATUS_RUNTIME_ERROR && err->code == TF_ERR_NOMEM && c->nkept > 0) {
        /* Out of memory with other problems kept: the current one comes first. */
        kept_drop_all(c);
        struct tf_error again = {0};
        status = problem_build(c, kernel, problem, config, reference, 0, NULL, NULL, &again);
        *err = again;
    }
    return status;
}

/* Build (kernel, problem) from nothing as the current problem (see child_setup). */
static int problem_build(struct runner_child *c, uint32_t kernel, uint32_t problem,
                         uint64_t config, const char *reference, int noffered, int *offered,
                         char **keys, struct tf_error *err)
{
    reset_problem(c);
    if (kernel >= (uint32_t)c->job->nkernels ||
        problem >= (uint32_t)c->job->kernels[kernel].kernel->nproblems) {
        for (int i = 0; i < noffered; i++) {
            close(offered[i]);
            free(keys[i]);
        }
        tf_error_set(err, TF_ERR_SCHEMA, "no kernel %u / problem %u in this job", kernel, problem);
        return TF_STATUS_RUNTIME_ERROR;
    }
    const struct tf_kernel *k = c->job->kernels[kernel].kernel;
    c->cur.k = k;
    c->cur.kernel = kernel;
    c->cur.problem = problem;
    c->cur.reference = tf_xstrdup(reference);
    for (int i = 0; i < noffered; i++)
        set_add(c, keys[i], offered[i]);
    c->cur.scalars = tf_xcalloc((size_t)k->nargs, sizeof *c->cur.scalars);
    c->cur.args = tf_xcalloc((size_t)k->nargs, sizeof *c->cur.args);
    c->cur.largs = tf_xcalloc((size_t)k->nargs, sizeof *c->cur.largs);
    c->cur.lslots = tf_xcalloc((size_t)k->nargs, sizeof *c->cur.lslots);
    c->cur.slots = tf_xcalloc((size_t)k->nslots, sizeof *c->cur.slots);
    c->cur.sizes_vary = 0;
    for (int i = 0; i < k->nargs; i++)
        for (int p = 0; k->args[i].kind == TF_ARG_BUFFER && p < k->nparams; p++)
            if (tf_expr_uses_slot(k->args[i].size, p))
                c->cur.sizes_vary = 1;
    int64_t *counts = tf_xcalloc((size_t)k->nargs, sizeof *counts);
    int status = TF_STATUS_INVALID;
    if (eval_sizes(c, config, counts, err) == 0)
        status = build_buffers(c, config, counts, err);
    if (status == TF_STATUS_OK)
        status = expected_select(c, NULL, err);
    free(counts);
    if (status == TF_STATUS_OK)
        c->cur.ready = 1;
    return status;
}

/* The argument array for one launch, filled afresh (see child.largs). */
static void **launch_args(struct runner_child *c)
{
    for (int i = 0; i < c->cur.k->nargs; i++) {
        if (c->cur.k->args[i].kind == TF_ARG_BUFFER)
            c->cur.lslots[i].p = c->cur.bufs[i].dev;
        else
            c->cur.lslots[i].s = c->cur.scalars[i];
        c->cur.largs[i] = &c->cur.lslots[i];
    }
    return c->cur.largs;
}

struct sample_ctx {
    struct runner_child *c;
    void *fn;
    const struct tf_launch *geo;
    struct tf_result *res; /* where verification writes its message */
};

static int sample_launch(void *ctx, double *seconds, struct tf_error *err)
{
    struct sample_ctx *s = ctx;
    return s->c->be->launch(s->c->ctx, s->fn, s->geo, launch_args(s->c), seconds, err);
}

static int sample_flush(void *ctx, struct tf_error *err)
{
    struct sample_ctx *s = ctx;
    return s->c->be->flush_cache(s->c->ctx, err);
}

static int sample_enqueue(void *ctx, int n, int flush, struct tf_error *err)
{
    struct sample_ctx *s = ctx;
    return s->c->be->enqueue(s->c->ctx, s->fn, s->geo, launch_args(s->c), n, flush, err);
}

static int sample_collect(void *ctx, double *seconds, struct tf_error *err)
{
    struct sample_ctx *s = ctx;
    return s->c->be->collect(s->c->ctx, seconds, err);
}

/* The energy window's launches (energy.h): queued on the device where the
 * backend can (the counter is then read while they run, two batches deep),
 * else run here. */
struct energy_ctx {
    struct sample_ctx *s;
    int queued[TF_MAX_QUEUED_BATCHES]; /* launches of each batch enqueued, oldest first */
    int batches;                       /* batches enqueued, to collect */
    double ran;            /* device seconds of launches run without a queue */
};

static int energy_start(void *ctx, int n, struct tf_error *err)
{
    struct energy_ctx *e = ctx;
    struct runner_child *c = e->s->c;
    if (c->be->enqueue && c->be->collect) {
        const int status =
            c->be->enqueue(c->ctx, e->s->fn, e->s->geo, launch_args(c), n, 0, err);
        if (status != TF_STATUS_OK) {
            e->batches = 0; /* the backend dropped every queued batch */
            return status;
        }
        e->queued[e->batches++] = n;
        return TF_STATUS_OK;
    }
    e->ran = 0;
    for (int i = 0; i < n; i++) {
        double t = 0;
        const int status = c->be->launch(c->ctx, e->s->fn, e->s->geo, launch_args(c), &t, err);
        if (status != TF_STATUS_OK)
            return status;
        e->ran += t;
    }
    return TF_STATUS_OK;
}

static int energy_finish(void *ctx, double *seconds, struct tf_error *err)
{
    struct energy_ctx *e = ctx;
    struct runner_child *c = e->s->c;
    *seconds = 0;
    if (e->batches == 0) {
        *seconds = e->ran;
        return TF_STATUS_OK;
    }
    double times[TF_MAX_BATCH];
    const int n = e->queued[0];
    for (int i = 1; i < e->batches; i++)
        e->queued[i - 1] = e->queued[i];
    e->batches--;
    const int status = c->be->collect(c->ctx, times, err);
    if (status != TF_STATUS_OK) {
        e->batches = 0;
        return status;
    }
    for (int i = 0; i < n; i++)
        *seconds += times[i];
    return status;
}

static int energy_read(void *ctx, double *joules, struct tf_error *err)
{
    struct energy_ctx *e = ctx;
    const double t0 = profile.on ? tf_channel_now() : 0;
    const int rc = e->s->c->be->energy(e->s->c->ctx, joules, err);
    if (profile.on) {
        profile.energy_reads++;
        profile.energy_read += tf_channel_now() - t0;
    }
    return rc;
}

static double energy_now(void *ctx)
{
    (void)ctx;
    return tf_channel_now();
}

/* Device seconds per batch of the energy window: small against the update
 * period of NVML's counter (20-100 ms), long against a counter reading
 * (under a millisecond), which the device does not wait for. */
#define ENERGY_BATCH_S 0.005
/* Batches between the two updates, at least: each end is attributed to the
 * launches done when the update was seen, late by about one batch. */
#define ENERGY_MIN_BATCHES 10

/* Why energy went missing, per status, for the profile report (stderr when
 * TUNEFARM_PROFILE is set): the archive keeps only the status. */
static struct {
    long count[TF_ENERGY_COUNT];
    char why[TF_ENERGY_COUNT][256];
} energy_log;

/* The energy of one launch of the variant measured by `sc`, after its
 * samples `st` under `protocol`, into `res` (energy_status, energy_j as the
 * samples' energy); `started` is when this configuration's deadline began.
 * Returns a status: not ok if a launch of the window failed (err). */
static int measure_energy(struct sample_ctx *sc, const struct tf_measure *protocol,
                          const struct tf_stats *st, double started, struct tf_result *res,
                          struct tf_error *err)
{
    struct runner_child *c = sc->c;
    if (!(protocol->energy_time > 0)) {
        res->energy_status = TF_ENERGY_OFF;
        return TF_STATUS_OK;
    }
    if (c->be->energy == NULL) {
        res->energy_status = TF_ENERGY_NO_COUNTER;
        snprintf(energy_log.why[TF_ENERGY_NO_COUNTER], sizeof energy_log.why[0],
                 "the %s backend reads no energy counter", c->be->name);
        energy_log.count[TF_ENERGY_NO_COUNTER]++;
        return TF_STATUS_OK;
    }
    /* What is left of the deadline, half of it at most: the window must never
     * turn a measured configuration into a timeout. */
    const double left = protocol->timeout - (tf_channel_now() - started);
    const struct tf_energy_plan plan = {.window = protocol->energy_time,
                                        .launch_s = st->median,
                                        .batch_s = ENERGY_BATCH_S,
                                        .min_batches = ENERGY_MIN_BATCHES,
                                        .limit_s = fmin(2 * protocol->energy_time + 0.5,
                                                        0.5 * left)};
    struct energy_ctx ec = {.s = sc};
    const struct tf_energy_ops ops = {energy_start, energy_finish, energy_read, energy_now, &ec,
                                      c->be->enqueue && c->be->collect};
    struct tf_energy_result en;
    const double t0 = profile.on ? tf_channel_now() : 0;
    const int status = tf_energy_measure(&plan, &ops, &en, err);
    if (profile.on) {
        profile.energy_windows++;
        profile.energy_wall += tf_channel_now() - t0;
        profile.energy_busy += en.busy_s;
    }
    res->device_time += en.busy_s;
    if (status != TF_STATUS_OK)
        return status;
    res->energy_status = (uint8_t)en.status;
    if (en.status == TF_ENERGY_MEASURED)
        res->energy_j = en.joules * (double)st->n;
    else
        tf_strlcpy(energy_log.why[en.status], en.why, sizeof energy_log.why[0]);
    energy_log.count[en.status]++;
    return TF_STATUS_OK;
}

/* Compare every output of the verified launch with the reference, while the
 * device runs the first samples: the device's outcome where it compared them
 * (compare_on_device), else the outputs downloaded behind the verified launch. */
static int sample_verify_outputs(struct sample_ctx *s, const struct tf_kernel *k,
                                 struct tf_error *err);

static int sample_verify(void *ctx, struct tf_error *err)
{
    struct sample_ctx *s = ctx;
    const struct tf_kernel *k = s->c->cur.k;
    const double started = tf_channel_now();
    const int status = sample_verify_outputs(s, k, err);
    profile.verify += tf_channel_now() - started;
    return status;
}

static int sample_verify_outputs(struct sample_ctx *s, const struct tf_kernel *k,
                                 struct tf_error *err)
{
    struct runner_child *c = s->c;
    const int landed = wait_downloads(c, err);
    if (landed != TF_STATUS_OK)
        return landed;
    const struct expected_set *set = &c->cur.sets[c->cur.current_set];
    for (int i = 0, slot = 0; i < k->nargs; i++) {
        const struct tf_arg *a = &k->args[i];
        struct runner_buffer *b = &c->cur.bufs[i];
        if (a->kind != TF_ARG_BUFFER || !a->output)
            continue;
        if (c->compared_on_device) {
            uint64_t bad, first, sum;
            c->be->compare_result(c->ctx, slot++, &bad, &first, &sum);
            if (sum != set->sums[i]) {
                b->dev_expected_set = 0; /* changed on the device: upload it again */
                profile.compare_damaged++;
            } else if (bad == 0) {
                profile.compared_on_device++;
                continue;
            }
            /* The host decides, and writes the message: the snapshot is
             * intact (the samples write dev). Behind the queued samples. */
            profile.compared_on_host++;
            if (c->be->download(c->ctx, b->got, b->dev_snap, b->bytes, err) != 0)
                return TF_STATUS_RUNTIME_ERROR;
        } else {
            profile.compared_on_host++;
        }
        int status = tf_verify(a->name, a->type, b->got, b->expected, (size_t)b->count, k->rtol,
                               k->atol, s->res->message, sizeof s->res->message);
        if (status != TF_STATUS_OK) {
            tf_error_set(err, TF_ERR_EVAL, "%s", s->res->message);
            return status;
        }
    }
    return TF_STATUS_OK;
}

/* Evaluate launch geometry: a NULL expression is 1 (grid, block) or 0 (shared). */
static int eval_geometry(struct runner_child *c, struct tf_launch *geo, struct tf_error *err)
{
    const struct tf_kernel *k = c->cur.k;
    for (int d = 0; d < 7; d++) {
        const struct tf_expr *e = d < 3 ? k->grid[d] : d < 6 ? k->block[d - 3] : k->shared;
        const char *what = d < 3 ? "grid" : d < 6 ? "block" : "shared";
        int64_t v = d < 6 ? 1 : 0;
        if (e) {
            struct tf_value val;
            if (tf_expr_eval(e, c->cur.slots, &val, err) != 0)
                return tf_error_set(err, TF_ERR_EVAL, "%s: %.900s", what, err->message);
            /* Out of int64's range (or NaN) is out of every range below;
             * cast, it would be undefined behaviour. */
            if (val.is_float && !(fabs(val.u.f) < 9223372036854775808.0))
                return d < 6 ? tf_error_set(err, TF_ERR_EVAL, "%s[%d] = %g is out of range",
                                            what, d % 3, val.u.f)
                             : tf_error_set(err, TF_ERR_EVAL, "shared = %g is out of range",
                                            val.u.f);
            v = val.is_float ? (int64_t)ceil(val.u.f) : val.u.i;
        }
        if (d < 6 && (v < 1 || v > UINT32_MAX))
            return tf_error_set(err, TF_ERR_EVAL, "%s[%d] = %lld is out of range", what, d % 3,
                                (long long)v);
        if (d == 6 && v < 0)
            return tf_error_set(err, TF_ERR_EVAL, "shared = %lld is negative", (long long)v);
        if (d < 3)
            geo->grid[d] = (uint32_t)v;
        else if (d < 6)
            geo->block[d - 3] = (uint32_t)v;
        else
            geo->shared_bytes = (uint64_t)v;
    }
    return 0;
}

/* Telemetry now into `t`; 1 if the backend has any, else 0. A failed
 * reading is not a failed measurement: its fields just stay unknown. */
static int read_telemetry(struct runner_child *c, struct tf_telemetry *t)
{
    struct tf_error err = {0};
    if (c->be->telemetry == NULL)
        return 0;
    return c->be->telemetry(c->ctx, t, &err) == 0;
}

/* Result telemetry from readings before (may be NULL) and after the samples:
 * the clock, power and temperature at their end, throttled if the device
 * said so at either end. */
static void apply_telemetry(struct tf_result *res, const struct tf_telemetry *before,
                            const struct tf_telemetry *after)
{
    res->sm_clock_mhz = (float)after->sm_clock_mhz;
    res->power_w = (float)after->power_w;
    res->temperature_c = (float)after->temperature_c;
    /* (Energy is not the counter's difference around the samples: they are
     * often shorter than its update period. measure_energy has its window.) */
    res->throttled = (uint8_t)(after->throttled == 1 || (before && before->throttled == 1));
}

/* The runner's threads by CPU time over its life (set-ups included), the
 * busiest first, into one profile line: which of its own, the driver's or
 * OpenMP's threads take the CPUs the compilers need (/proc/self/task). */
static void profile_threads(void)
{
    enum { MAX_THREADS = 64, SHOWN = 6 };
    struct thread_cpu {
        char name[32];
        double cpu;
    } t[MAX_THREADS];
    int n = 0;
    DIR *dir = opendir("/proc/self/task");
    if (dir == NULL)
        return;
    const double tick = (double)sysconf(_SC_CLK_TCK);
    for (struct dirent *e; n < MAX_THREADS && (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], stat[1024];
        snprintf(path, sizeof path, "/proc/self/task/%.200s/stat", e->d_name);
        const int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        const ssize_t len = read(fd, stat, sizeof stat - 1);
        close(fd);
        if (len <= 0)
            continue;
        stat[len] = '\0';
        /* "tid (comm) state ..." - comm may hold spaces and ')': the last ')' ends it */
        char *open_paren = strchr(stat, '('), *close_paren = strrchr(stat, ')');
        unsigned long utime = 0, stime = 0;
        if (open_paren == NULL || close_paren == NULL || close_paren < open_paren ||
            sscanf(close_paren + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                   &stime) != 2)
            continue;
        const size_t name_len = (size_t)(close_paren - open_paren - 1);
        if (strtol(e->d_name, NULL, 10) == (long)getpid()) /* the measuring thread */
            tf_strlcpy(t[n].name, "main", sizeof t[n].name);
        else /* others keep the process's name unless named (tf-telemetry) */
            snprintf(t[n].name, sizeof t[n].name, "%.*s", (int)(name_len < 31 ? name_len : 31),
                     open_paren + 1);
        t[n++].cpu = (double)(utime + stime) / tick;
    }
    closedir(dir);
    char line[512];
    int used = snprintf(line, sizeof line, "tunefarm runner profile: CPU s by thread over its "
                                           "life (%d threads):", n);
    for (int shown = 0; shown < SHOWN && shown < n; shown++) {
        int best = shown;
        for (int i = shown + 1; i < n; i++)
            if (t[i].cpu > t[best].cpu)
                best = i;
        const struct thread_cpu swap = t[shown];
        t[shown] = t[best];
        t[best] = swap;
        if (used > 0 && (size_t)used < sizeof line)
            used += snprintf(line + used, sizeof line - (size_t)used, "%s %s %.2f",
                             shown ? "," : "", t[shown].name, t[shown].cpu);
    }
    fprintf(stderr, "%s\n", line);
}

static void profile_report(void)
{
    if (!profile.on || profile.configs == 0)
        return;
    const double k = 1e3 / (double)profile.configs;
    fprintf(stderr,
            "tunefarm runner profile: %ld configurations, per configuration (ms): total %.3f = "
            "load %.3f + restore %.3f + verified launch %.3f + download %.3f + samples and "
            "verification %.3f + telemetry %.3f + other; setup %.3f s in all (%ld set-ups, %ld "
            "of them problems kept set up)\n",
            profile.configs, profile.total * k, profile.load * k, profile.restore * k,
            profile.verify_launch * k, profile.download * k, profile.measure * k,
            profile.telemetry * k, profile.setup, profile.setups, profile.kept);
    fprintf(stderr,
            "tunefarm runner profile: per configuration (ms): device time %.3f, comparing the "
            "outputs %.3f (within the samples), then putting the process back %.3f, waiting "
            "for the next request %.3f; the runner's CPU time %.3f (its comparing threads "
            "included, set-ups not); outputs compared on the device %ld, on the host %ld "
            "(%ld of them because the device's expected copy had changed)\n",
            profile.device * k, profile.verify * k, profile.after * k, profile.idle * k,
            (runner_cpu_seconds() - profile.setup_cpu) * k, profile.compared_on_device,
            profile.compared_on_host, profile.compare_damaged);
    if (profile.strict_configs > 0)
        fprintf(stderr,
                "tunefarm runner profile: %ld of them under the strict protocol (`measure`), "
                "per configuration (ms): total %.3f, device time %.3f\n",
                profile.strict_configs, 1e3 * profile.strict_total / (double)profile.strict_configs,
                1e3 * profile.strict_device / (double)profile.strict_configs);
    if (profile.energy_windows > 0)
        fprintf(stderr,
                "tunefarm runner profile: %ld energy windows, per window (ms): wall %.3f, device "
                "time %.3f; %.1f counter readings of %.3f ms each\n",
                profile.energy_windows, 1e3 * profile.energy_wall / (double)profile.energy_windows,
                1e3 * profile.energy_busy / (double)profile.energy_windows,
                (double)profile.energy_reads / (double)profile.energy_windows,
                profile.energy_reads ? 1e3 * profile.energy_read / (double)profile.energy_reads
                                     : 0.0);
    profile_threads();
    for (int e = 0; e < TF_ENERGY_COUNT; e++)
        if (energy_log.count[e])
            fprintf(stderr, "tunefarm runner energy: %ld %s%s%s\n", energy_log.count[e],
                    tf_energy_status_name(e), energy_log.why[e][0] ? ": " : "",
                    energy_log.why[e]);
}

/* Add the time since *mark to *slot and move the mark. */
static void profile_lap(double *slot, double *mark)
{
    if (!profile.on)
        return;
    const double now = tf_channel_now();
    *slot += now - *mark;
    *mark = now;
}

/* A configuration of a kernel whose buffer sizes read its parameters: the
 * buffers rebuilt if its sizes differ (their expected outputs are selected
 * afterwards, by key). A status. */
static int resize_buffers(struct runner_child *c, uint64_t config, struct tf_error *err)
{
    const struct tf_kernel *k = c->cur.k;
    int64_t *counts = tf_xcalloc((size_t)k->nargs, sizeof *counts);
    int changed = 0, status = TF_STATUS_INVALID;
    if (eval_sizes(c, config, counts, err) == 0) {
        for (int i = 0; i < k->nargs; i++)
            changed |= c->cur.bufs == NULL || counts[i] != c->cur.bufs[i].count;
        status = changed ? build_buffers(c, config, counts, err) : TF_STATUS_OK;
    }
    free(counts);
    return status;
}

/* Before a MEASURE, outside the variant's guarded run: the buffers and the
 * expected outputs of `config` - resized if its buffer sizes differ, and the
 * set of its key selected (the reference runs if this runner has none: its
 * depends_on values or sizes are new here). *ran is set if the reference ran.
 * A status; err says why when not ok (that configuration's result). */
static int config_prepare(struct runner_child *c, uint32_t kernel, uint32_t problem,
                          uint64_t config, int *ran, struct tf_error *err)
{
    if (!c->cur.ready || c->cur.kernel != kernel || c->cur.problem != problem)
        return TF_STATUS_RUNTIME_ERROR; /* tf_runner_child_measure says why */
    int status;
    if (c->cur.sizes_vary && (status = resize_buffers(c, config, err)) != TF_STATUS_OK)
        return status; /* bufs are gone: the next config rebuilds them */
    if (!c->cur.sizes_vary && c->cur.k->nref_depends == 0)
        return TF_STATUS_OK; /* one key for the whole problem, selected by SETUP */
    if (eval_scalars(c, config, err) != 0)
        return TF_STATUS_INVALID;
    const double started = tf_channel_now(), cpu_started = runner_cpu_seconds();
    status = expected_select(c, ran, err);
    profile.setup += tf_channel_now() - started;
    profile.setup_cpu += runner_cpu_seconds() - cpu_started;
    return status;
}

/* Only the loaded binary knows its resources on a GPU (NVRTC does not say):
 * registers, shared and spilled bytes into `res`, where the backend tells. */
static void read_function_info(struct runner_child *c, void *fn, const struct tf_launch *geo,
                               struct tf_result *res)
{
    int32_t regs;
    int64_t shared, local;
    struct tf_error info_err = {0};
    if (c->be->function_info &&
        c->be->function_info(c->ctx, fn, &regs, &shared, &local, &info_err) == 0) {
        res->registers = regs;
        res->shared_bytes = shared >= 0 ? shared + (int64_t)geo->shared_bytes : -1;
        res->spill_bytes = local;
    }
}

/* Fresh inputs and poisoned outputs every time (init never changes:
 * downloads go to `got`): an earlier variant may have scribbled on the
 * device copies. 0 or -1 + err. */
static int restore_buffers(struct runner_child *c, struct tf_error *err)
{
    for (int i = 0; i < c->cur.k->nargs; i++) {
        struct runner_buffer *b = &c->cur.bufs[i];
        if (c->cur.k->args[i].kind != TF_ARG_BUFFER)
            continue;
        if ((b->dev_init ? c->be->copy(c->ctx, b->dev, b->dev_init, b->bytes, err)
                         : c->be->upload(c->ctx, b->dev, b->init, b->bytes, err)) != 0)
            return -1;
    }
    return 0;
}

/* The device comparison of every output of the verified launch, queued
 * (backend.h, compare_queue): 1, or 0 where an output cannot be compared
 * there (no device copy of its expected values: build_buffers made none
 * where the device cannot compare or lacked room; a call that failed), and
 * then the host compares them all. The expected
 * values are uploaded when the device does not hold the current set's, and
 * each output is snapshotted too: should the device's outcome not settle it
 * (a failure, whose message the host writes, or a checksum that says the
 * device copy was changed), the host compares the snapshot. */
static int compare_on_device(struct runner_child *c)
{
    const struct tf_kernel *k = c->cur.k;
    struct expected_set *set = &c->cur.sets[c->cur.current_set];
    struct tf_error spare = {0};
    int outputs = 0;
    for (int i = 0; i < k->nargs; i++) {
        const struct runner_buffer *b = &c->cur.bufs[i];
        if (k->args[i].kind != TF_ARG_BUFFER || !k->args[i].output)
            continue;
        if (b->dev_expected == NULL || b->expected == NULL)
            return 0;
        outputs++;
    }
    if (outputs == 0)
        return 0;
    if (set->sums == NULL) { /* once per set: its mappings are sealed */
        set->sums = tf_xcalloc((size_t)k->nargs, sizeof *set->sums);
        for (int i = 0; i < k->nargs; i++)
            if (set->maps[i] != NULL)
                set->sums[i] = tf_verify_checksum(set->maps[i], c->cur.bufs[i].bytes);
    }
    for (int i = 0, slot = 0; i < k->nargs; i++) {
        struct runner_buffer *b = &c->cur.bufs[i];
        if (k->args[i].kind != TF_ARG_BUFFER || !k->args[i].output)
            continue;
        if (b->dev_expected_set != set->id) {
            b->dev_expected_set = 0;
            if (c->be->upload(c->ctx, b->dev_expected, b->expected, b->bytes, &spare) != 0)
                return 0;
            b->dev_expected_set = set->id;
        }
        const int queued =
            c->be->copy(c->ctx, b->dev_snap, b->dev, b->bytes, &spare) == 0 &&
            c->be->compare_queue(c->ctx, slot++, k->args[i].type, b->dev, b->dev_expected,
                                 (size_t)b->count, k->rtol, k->atol, &spare) == 0;
        c->downloads_queued = 1; /* (what was queued lands before the host's turn) */
        if (!queued)
            return 0;
    }
    c->compared_on_device = 1;
    return 1;
}

/* The verified launch's outputs into `got`: queued behind a device-side
 * snapshot where there is one (the samples overwrite dev), else downloaded
 * now. 0 or -1 + err (nothing left landing). */
static int download_outputs(struct runner_child *c, struct tf_error *err)
{
    c->compared_on_device = 0;
    if (compare_on_device(c))
        return 0;
    if (wait_downloads(c, err) != TF_STATUS_OK) /* a half-queued comparison */
        return -1;
    for (int i = 0; i < c->cur.k->nargs; i++) {
        const struct tf_arg *a = &c->cur.k->args[i];
        struct runner_buffer *b = &c->cur.bufs[i];
        if (a->kind != TF_ARG_BUFFER || !a->output)
            continue;
        const int failed =
            b->dev_snap ? c->be->copy(c->ctx, b->dev_snap, b->dev, b->bytes, err) != 0 ||
                              c->be->download_async(c->ctx, b->got, b->dev_snap, b->bytes,
                                                    err) != 0
                        : c->be->download(c->ctx, b->got, b->dev, b->bytes, err) != 0;
        c->downloads_queued |= b->dev_snap != NULL;
        if (failed) {
            wait_downloads(c, &(struct tf_error){0});
            return -1;
        }
    }
    return 0;
}

void tf_runner_child_measure(struct runner_child *c, uint32_t kernel, uint32_t problem,
                             uint32_t phase, uint64_t config, const char *binary,
                             struct tf_result *res)
{
    /* The screening pass of a two-phase search uses the cheap protocol. */
    const struct tf_measure *protocol = phase == 1 ? &c->job->screen : &c->job->measure;
    const double started = tf_channel_now();
    double mark = started, ignored = 0;
    struct tf_error err = {0};
    void *fn = NULL;
    int status;
    tf_result_init(res, kernel, problem, config, TF_STATUS_RUNTIME_ERROR);
    if (!c->cur.ready || c->cur.kernel != kernel || c->cur.problem != problem) {
        tf_error_set(&err, TF_ERR_SYSTEM, "measure before setup of kernel %u problem %u", kernel,
                     problem);
        goto done;
    }
    const struct tf_kernel *k = c->cur.k;
    if (c->cur.bufs == NULL || c->cur.current_set < 0) {
        tf_error_set(&err, TF_ERR_SYSTEM, "measure without buffers or expected outputs");
        goto done;
    }
    struct tf_launch geo;
    if (eval_scalars(c, config, &err) != 0 || eval_geometry(c, &geo, &err) != 0) {
        res->status = TF_STATUS_INVALID;
        goto done;
    }
    profile_lap(&ignored, &mark);
    if (c->be->load(c->ctx, binary, k->entry, &fn, &err) != 0) {
        fn = NULL;
        res->status = TF_STATUS_LAUNCH_ERROR;
        goto done;
    }
    profile_lap(&profile.load, &mark);
    read_function_info(c, fn, &geo, res);
    if (restore_buffers(c, &err) != 0) {
        res->status = TF_STATUS_RUNTIME_ERROR;
        goto done;
    }
    profile_lap(&profile.restore, &mark);
    double verified_seconds = 0.0;
    status = c->be->launch(c->ctx, fn, &geo, launch_args(c), &verified_seconds, &err);
    profile_lap(&profile.verify_launch, &mark);
    if (status != TF_STATUS_OK) {
        res->status = (uint8_t)status;
        goto done;
    }
    /* An overflow is this variant's failure, found before its output is
     * judged: what it wrote past its end is not a wrong result. Where launches
     * queue (GPUs) the check after the samples does it, and saves a round trip. */
    if (c->be->enqueue == NULL && (status = tf_runner_guard_check(c, &err)) != TF_STATUS_OK) {
        res->status = (uint8_t)status;
        goto done;
    }
    if (download_outputs(c, &err) != 0) {
        res->status = TF_STATUS_RUNTIME_ERROR;
        goto done;
    }

    /* The outputs are compared (sample_verify) while the device runs the first
     * samples, where the backend can queue them; a wrong result discards them. */
    struct sample_ctx sc = {c, fn, &geo, res};
    char timer[64];
    snprintf(timer, sizeof timer, "%s timer%s", c->be->name,
             strcmp(c->be->name, "host") == 0 ? " (CLOCK_MONOTONIC)" : " (device events)");
    struct tf_sampler sampler = {sample_launch, sample_flush, &sc,          NULL,
                                 NULL,          sample_verify, verified_seconds, timer};
    if (c->be->enqueue && c->be->collect) {
        sampler.enqueue = sample_enqueue;
        sampler.collect = sample_collect;
    }
    profile_lap(&profile.download, &mark);
    struct tf_stats st;
    struct tf_telemetry before, after;
    const int have_before = read_telemetry(c, &before);
    profile_lap(&profile.telemetry, &mark);
    status = tf_measure_run(protocol, &sampler, &st, &err);
    /* Verification waited for the downloads, unless the samples failed first:
     * `got` and the snapshots are reused, so nothing may still be landing. */
    wait_downloads(c, &(struct tf_error){0});
    /* Then the energy of one launch, over a window of its own (the guards
     * below cover its launches too). */
    res->device_time = 0;
    if (status == TF_STATUS_OK)
        status = measure_energy(&sc, protocol, &st, started, res, &err);
    /* The samples ran the variant again: the guards once more (an overflow
     * that only some launches make). A failed launch may have broken the
     * device context, where nothing can be read back: not then. */
    if (status == TF_STATUS_OK || status == TF_STATUS_WRONG_RESULT) {
        struct tf_error guard_err = {0};
        if (tf_runner_guard_check(c, &guard_err) != TF_STATUS_OK) {
            status = TF_STATUS_RUNTIME_ERROR;
            err = guard_err;
            tf_strlcpy(res->message, guard_err.message, sizeof res->message);
        }
    }
    profile_lap(&profile.measure, &mark);
    if (status == TF_STATUS_WRONG_RESULT) {
        res->status = (uint8_t)status;
        res->device_time = verified_seconds + st.busy;
        res->energy_status = TF_ENERGY_NOT_RUN;
        res->timestamp = tf_runner_unix_now();
        c->be->unload(c->ctx, fn);
        return;
    }
    if (read_telemetry(c, &after))
        apply_telemetry(res, have_before ? &before : NULL, &after);
    profile_lap(&profile.telemetry, &mark);
    if (profile.on) {
        profile.configs++;
        profile.measured_at = tf_channel_now();
        profile.total += profile.measured_at - started;
    }
    res->status = (uint8_t)status;
    res->samples = st.n;
    res->device_time += verified_seconds + st.busy; /* (+ the energy window's) */
    profile.device += res->device_time;
    if (profile.on && protocol == &c->job->measure) {
        profile.strict_configs++;
        profile.strict_total += profile.measured_at - started;
        profile.strict_device += res->device_time;
    }
    res->flushed_l2 = protocol->flush_l2;
    if (status == TF_STATUS_OK) {
        res->time_median = st.median;
        res->time_min = st.min;
        res->time_mean = st.mean;
        res->time_rsd = st.rsd;
        res->noisy = (uint8_t)st.noisy;
    } else {
        res->energy_j = NAN;
        res->energy_status = TF_ENERGY_NOT_RUN;
    }
done:
    if (fn)
        c->be->unload(c->ctx, fn);
    res->timestamp = tf_runner_unix_now();
    if (res->status != TF_STATUS_OK && res->message[0] == '\0')
        tf_strlcpy(res->message, err.message[0] ? err.message : tf_status_name(res->status),
                   sizeof res->message);
}

/* INIT: load the job from the bundle message, open the device. */
static int child_init(struct runner_child *c, struct tf_buf *req, const char *backend, int ordinal,
                      struct tf_error *err)
{
    uint64_t n;
    struct tf_buf msg = {0};
    enum tf_msg_type type;
    if (tf_buf_get_u64(req, &n) || n > req->len - req->pos)
        return tf_error_set(err, TF_ERR_SYSTEM, "malformed INIT request");
    tf_buf_put_bytes(&msg, req->data + req->pos, (size_t)n);
    int rc = -1;
    if (tf_wire_open(&msg, &type, err) != 0)
        goto done;
    if (type != TF_MSG_JOB) {
        tf_error_set(err, TF_ERR_SYSTEM, "INIT carries message type %d, not JOB", (int)type);
        goto done;
    }
    c->bundle = tf_wire_get_job(&msg, err);
    if (c->bundle == NULL)
        goto done;
    if (c->bundle->count < 1) {
        tf_error_set(err, TF_ERR_SCHEMA, "the job bundle is empty");
        goto done;
    }
    c->job = tf_job_load(c->bundle->files[0].path, c->bundle, err);
    if (c->job == NULL)
        goto done;
    c->be = tf_backend_find(backend);
    if (c->be == NULL) {
        tf_error_set(err, TF_ERR_BACKEND, "no backend named '%s' in this build", backend);
        goto done;
    }
    if (c->be->describe(ordinal, &c->dev, err) != 0 || c->be->open(ordinal, &c->ctx, err) != 0)
        goto done;
    rc = 0;
done:
    tf_buf_free(&msg);
    return rc;
}


/* What the runner keeps between requests. */
struct serve {
    struct runner_child c;
    int in, out;
    int initialized;
    int exit_after_reply; /* the answer's "exiting" byte: end after it */
    struct runner_proc_state state; /* what no variant may leave changed */
    int state_taken;      /* state is the one to compare with (taken after the SETUP) */
};

/* The sets of expected outputs computed for this answer (c->fresh_*): their
 * count and keys into `rep`; their memfds follow the frame (serve_fresh_send). */
static void put_fresh(const struct runner_child *c, struct tf_buf *rep)
{
    tf_buf_put_u32(rep, (uint32_t)c->nfresh);
    for (int i = 0; i < c->nfresh; i++)
        tf_buf_put_str(rep, c->fresh_keys[i]);
}

/* SETUP (`req` after its type) into the answer `rep`; -1 if the request is
 * malformed (descriptors may follow it: the stream cannot be trusted). */
static int serve_setup(struct serve *s, struct tf_buf *req, struct tf_buf *rep)
{
    struct runner_child *c = &s->c;
    struct tf_error err = {0};
    uint32_t kernel, problem, noffered = 0;
    uint64_t config;
    char *reference = NULL;
    int rc = 0;
    if (tf_buf_get_u32(req, &kernel) || tf_buf_get_u32(req, &problem) ||
        tf_buf_get_u64(req, &config) || (reference = tf_buf_get_strdup(req)) == NULL ||
        tf_buf_get_u32(req, &noffered) || noffered > RUNNER_EXPECTED_MAX_SETS)
        rc = -1;
    if (rc != 0)
        noffered = 0;
    int *offered = tf_xcalloc(noffered + 1, sizeof *offered);
    char **keys = tf_xcalloc(noffered + 1, sizeof *keys);
    for (uint32_t i = 0; i < noffered; i++)
        offered[i] = -1;
    for (uint32_t i = 0; rc == 0 && i < noffered; i++)
        if ((keys[i] = tf_buf_get_strdup(req)) == NULL)
            rc = -1;
    for (uint32_t i = 0; rc == 0 && i < noffered; i++)
        if (tf_runner_fd_recv(s->in, -1, &offered[i]) != 0)
            rc = -1;
    if (rc != 0) {
        for (uint32_t i = 0; i < noffered; i++) {
            if (offered[i] >= 0)
                close(offered[i]);
            free(keys[i]);
        }
        free(offered);
        free(keys);
        free(reference);
        fprintf(stderr, "tunefarm runner: malformed SETUP request\n");
        return -1;
    }
    const double setup_started = tf_channel_now(), setup_cpu_started = runner_cpu_seconds();
    const int status =
        child_setup(c, kernel, problem, config, reference, (int)noffered, offered, keys, &err);
    free(offered);
    free(keys);
    s->state_taken = 0; /* the reference may have set up what it needs */
    profile.setup += tf_channel_now() - setup_started;
    profile.setup_cpu += runner_cpu_seconds() - setup_cpu_started;
    profile.setups++;
    free(reference);
    tf_buf_put_u8(rep, (uint8_t)status);
    char message[TF_MESSAGE_LEN];
    tf_strlcpy(message, status == TF_STATUS_OK ? "" : err.message, sizeof message);
    tf_buf_put_str(rep, message);
    if (status != TF_STATUS_OK && c->be->healthy && !c->be->healthy(c->ctx))
        s->exit_after_reply = 1;
    if (c->damaged) /* the reference faulted (tf_runner_guarded_reference) */
        s->exit_after_reply = 1;
    tf_buf_put_u8(rep, (uint8_t)s->exit_after_reply);
    put_fresh(c, rep);
    return 0;
}

/* MEASURE (`req` after its type) into the answer `rep`, and put back what
 * the variant changed of the process; -1 if the request is malformed. */
static int serve_measure(struct serve *s, struct tf_buf *req, struct tf_buf *rep)
{
    struct runner_child *c = &s->c;
    uint32_t kernel, problem, phase;
    uint64_t config;
    char *binary = NULL;
    struct tf_result res;
    if (tf_buf_get_u32(req, &kernel) || tf_buf_get_u32(req, &problem) ||
        tf_buf_get_u64(req, &config) || tf_buf_get_u32(req, &phase) ||
        (binary = tf_buf_get_strdup(req)) == NULL)
        return -1;
    /* This configuration's buffers and expected outputs, before the process
     * state is taken: a reference that runs now may set up what it needs. */
    struct tf_error prep_err = {0};
    int ran = 0;
    c->notify_out = s->out;
    const int prepared = config_prepare(c, kernel, problem, config, &ran, &prep_err);
    c->notify_out = -1;
    if (ran)
        s->state_taken = 0;
    if (!s->state_taken) {
        tf_runner_proc_state_take(&s->state);
        s->state_taken = 1;
    }
    if (prepared == TF_STATUS_OK) {
        tf_runner_guarded_measure(c, kernel, problem, phase, config, binary, &res);
    } else {
        tf_result_init(&res, kernel, problem, config, prepared);
        tf_strlcpy(res.message, prep_err.message[0] ? prep_err.message : tf_status_name(prepared),
                   sizeof res.message);
        res.timestamp = tf_runner_unix_now();
    }
    res.phase = (uint8_t)phase;
    free(binary);
    /* What a variant may have changed of the process, put back: its folder
     * (a chdir() must not break the next load), its children, then the rest
     * while the shield answers the token that asks whether it still lives. */
    if (c->cwd_fd >= 0 && fchdir(c->cwd_fd) != 0)
        fprintf(stderr, "tunefarm runner: cannot return to its folder: %s\n", strerror(errno));
    tf_runner_end_strays();
    const int pinged = tf_runner_shield_ping();
    const char *changed = tf_runner_proc_state_restore(&s->state);
    if (tf_runner_shield_pong(pinged) == 0) {
        /* The variant killed the runner's parent (or the shield died under
         * it): no answer, so that the worker records this configuration
         * crashed (EOF), not the next one. */
        fprintf(stderr,
                "tunefarm runner: configuration %llu killed the runner's parent (its shield); "
                "the runner ends\n",
                (unsigned long long)config);
        _exit(1);
    }
    if (tf_runner_shield_rearm() && changed[0] == '\0')
        changed = "the parent-death signal";
    if (changed[0] != '\0') {
        /* The variant's own result stands; a clean runner takes the next. */
        fprintf(stderr,
                "tunefarm runner: configuration %llu changed %s of the runner; it restarts\n",
                (unsigned long long)config, changed);
        c->damaged = 1;
    }
    if (c->damaged)
        s->exit_after_reply = 1;
    if (profile.on && profile.measured_at > 0) {
        profile.after += tf_channel_now() - profile.measured_at;
        profile.measured_at = 0;
    }
    tf_buf_put_u8(rep, RUNNER_ANSWER_RESULT);
    tf_buf_put_result(rep, &res);
    /* A fault that broke the device context (CUDA's sticky errors) leaves
     * nothing usable in this process: say so, reply, exit. */
    if (res.status != TF_STATUS_OK && c->be->healthy && !c->be->healthy(c->ctx))
        s->exit_after_reply = 1;
    tf_buf_put_u8(rep, (uint8_t)s->exit_after_reply);
    put_fresh(c, rep);
    return 0;
}

/* Send the memfds put_fresh announced, after the answer's frame; 0 or -1. The
 * worker has them then: this runner closes its own (the mappings stay). */
static int serve_fresh_send(struct serve *s)
{
    struct runner_child *c = &s->c;
    int rc = 0;
    for (int i = 0; i < c->nfresh && rc == 0; i++)
        rc = tf_runner_fd_send(s->out, c->fresh_fds[i]);
    fresh_forget(c);
    return rc;
}

int tf_runner_main(int argc, char **argv)
{
    if (argc < 4 || strcmp(argv[1], "__runner") != 0) {
        fprintf(stderr, "usage: %s __runner BACKEND ORDINAL (internal: started by a worker)\n",
                argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_DFL);
    static struct serve s; /* (the process state is large: not on the stack) */
    if (tf_channel_child_open(&s.in, &s.out) != 0)
        return 1;
    tf_runner_close_inherited(s.in, s.out);
    if (tf_runner_shield_start(s.in, s.out) != 0)
        return 1;
    profile.on = getenv("TUNEFARM_PROFILE") != NULL;
    /* Orphans of a variant's children come to us (tf_runner_end_strays). */
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    const char *backend = argv[2];
    const int ordinal = atoi(argv[3]);
    struct runner_child *c = &s.c;
    c->cur.current_set = -1;
    c->notify_out = -1;
    c->cwd_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    tf_runner_guard_install(c);
    struct tf_buf req = {0}, rep = {0};
    int rc = 0;

    while (tf_channel_read_frame(s.in, &req, -1) == 0) {
        uint8_t type;
        struct tf_error err = {0};
        if (tf_buf_get_u8(&req, &type) != 0)
            break;
        if (profile.on && profile.replied_at > 0 && type == RUNNER_REQ_MEASURE)
            profile.idle += tf_channel_now() - profile.replied_at;
        profile.replied_at = 0;
        tf_runner_buf_reset(&rep);
        if (type == RUNNER_REQ_QUIT)
            break;
        if (type == RUNNER_REQ_INIT) {
            const int ok = !s.initialized && child_init(c, &req, backend, ordinal, &err) == 0;
            if (s.initialized)
                tf_error_set(&err, TF_ERR_SYSTEM, "runner initialized twice");
            s.initialized |= ok;
            tf_buf_put_u8(&rep, (uint8_t)ok);
            tf_buf_put_str(&rep, ok ? "" : err.message);
            /* One deadline for both protocols: the longer of the two timeouts. */
            tf_buf_put_f64(&rep, ok ? fmax(c->job->measure.timeout, c->job->screen.timeout) : 0.0);
        } else if (!s.initialized ||
                   (type == RUNNER_REQ_SETUP ? serve_setup(&s, &req, &rep)
                    : type == RUNNER_REQ_MEASURE ? serve_measure(&s, &req, &rep)
                                                 : -1) != 0) {
            fprintf(stderr, "tunefarm runner: unexpected or malformed request %d\n", type);
            rc = 1;
            break;
        }
        if (tf_channel_write_frame(s.out, &rep, -1) != 0)
            break;
        if ((type == RUNNER_REQ_SETUP || type == RUNNER_REQ_MEASURE) && serve_fresh_send(&s) != 0)
            break;
        if (profile.on && type == RUNNER_REQ_MEASURE)
            profile.replied_at = tf_channel_now();
        if (s.exit_after_reply) {
            rc = RUNNER_EXIT_UNHEALTHY;
            break;
        }
    }
    tf_runner_guard_forget();
    tf_runner_end_strays();
    fresh_forget(c);
    free(c->fresh_fds);
    free(c->fresh_keys);
    if (c->cwd_fd >= 0)
        close(c->cwd_fd);
    if (c->cur.k)
        reset_problem(c);
    kept_drop_all(c);
    free(c->kept);
    if (c->ctx)
        c->be->close(c->ctx);
    tf_job_destroy(c->job);
    tf_bundle_destroy(c->bundle);
    tf_buf_free(&req);
    tf_buf_free(&rep);
    close(s.in);
    close(s.out);
    profile_report();
    return rc;
}
