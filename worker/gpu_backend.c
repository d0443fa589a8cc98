/* gpu_backend.c - running variants on a GPU, once for every vendor (see gpu_backend.h).
 *
 * This is the runner-side half of the cuda and hip backends; the vendor's
 * table (backend_cuda.c, backend_hip.c) supplies the calls. open() has the
 * vendor make the device current and report its limits, then creates a
 * non-blocking stream, a start and an end event and a buffer whose memset
 * evicts the last-level cache. Each launch is checked against the limits
 * first, so an oversized block is an `invalid` result rather than a driver
 * error; where the vendor has a shared-memory opt-in (CUDA) it is raised as a
 * variant needs it. A timed launch is bracketed by the two events on the
 * stream, and a flush, when asked, is queued before the start event, so it is
 * never timed. Faults that poison the context (illegal address, trap...) are
 * `runtime_error` and mark the instance unhealthy: neither vendor offers a
 * recovery short of a new process, so the runner replies and exits, and the
 * worker starts a fresh one for the next variant. Outputs are downloaded on a
 * side stream into page-locked memory, so the samples queued after a download
 * run while it lands. Telemetry comes from the vendor's sensor (NVML, ROCm
 * SMI) when there is one, read by a thread every 25 ms: a reading costs
 * milliseconds the GPU would otherwise wait through. The energy counter alone
 * is also read directly, on the measuring thread, for the runner's energy
 * window (energy.h), which reads it while a queued batch runs. Where the
 * vendor can build them (compare_image), outputs are compared with the
 * expected values on the device ("outputs compared on the device"). */
#include "gpu_backend.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../schema/kernel.h"
#include "../schema/status.h"

/* A loaded variant. */
struct gpu_function {
    tf_gpu_module module;
    tf_gpu_function fn;
    int static_shared;      /* bytes; 0 where the vendor cannot say */
    int dynamic_limit;      /* the dynamic shared memory opted in so far, 0: default */
};

struct tf_backend_ctx {
    const struct tf_gpu_vendor *v;
    void *device;           /* the vendor's, from device_open; NULL until it succeeded */
    struct tf_gpu_limits limits;
    tf_gpu_stream stream;
    tf_gpu_event start, end;
    /* Batches queued by enqueue and not yet collected, oldest first from
     * `batch_head`: TF_MAX_QUEUED_BATCHES slots of events, created on first use. */
    tf_gpu_event batch_start[TF_MAX_QUEUED_BATCHES][TF_MAX_BATCH];
    tf_gpu_event batch_end[TF_MAX_QUEUED_BATCHES][TF_MAX_BATCH];
    tf_gpu_event batch_done[TF_MAX_QUEUED_BATCHES]; /* after each slot's batch: waited on */
    int batch_events[TF_MAX_QUEUED_BATCHES]; /* how many of each slot's exist */
    int batch_queued[TF_MAX_QUEUED_BATCHES]; /* launches queued in each slot */
    int batch_head;         /* the slot of the oldest queued batch */
    int batches;            /* batches queued */
    void *flush_buf;
    size_t flush_words;
    unsigned int flush_value;
    int healthy;
    /* Downloads that overlap the samples: a side stream that waits for
     * `copy_ready` (recorded on the main stream) and records `copy_done`. */
    tf_gpu_stream copy_stream;
    tf_gpu_event copy_ready, copy_done;
    int copies_queued;
    /* The vendor's sensor, NULL where there is none. A sampling thread reads
     * it every TELEMETRY_PERIOD_NS into `telemetry`, under `lock`: a reading
     * takes milliseconds, which the measuring thread must not spend between
     * configurations. */
    void *sensor;
    pthread_t sampler;
    int sampler_running, sampler_stop;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct tf_telemetry telemetry;   /* the last readings */
    /* The device comparison (tf_gpu_compare_queue): its kernels, loaded when
     * the device is opened, and each slot's outcome, three words on the device
     * and their copy in page-locked memory. compare_ok: all of it is there;
     * if not, compare_why says why. */
    int compare_ok;
    struct tf_error compare_why;
    tf_gpu_module compare_module;
    tf_gpu_function compare_fn[4];  /* by enum tf_elem_type */
    uint64_t *compare_dev, *compare_host;
    /* The GPU's own timeline (TUNEFARM_PROFILE): `config_start` is recorded
     * before each timed launch (a configuration's verified launch), and
     * `last_end` names the event that ended the last collected batch. From
     * them, at the next timed launch: how long the GPU spent on the previous
     * configuration from its verified launch to its last sample (`span`; of
     * which `kernels` in timed launches) and how long it then sat idle
     * (`between`). Inside the span, each collected batch is placed on it
     * (times from `config_start`): the gap before the first batch (`settle`:
     * the host's wake-up after the verified launch, the comparison queued),
     * the gaps before later batches (`rebatch`: the host's turn between
     * batches, the energy window's included) and the gaps between the
     * launches of a batch (`inbatch`). The events are complete by then, so
     * reading them costs no wait. */
    int timeline;
    tf_gpu_event config_start, last_end;
    int timeline_open;      /* a configuration's span has started */
    int between_pending;    /* a span closed: the next launch measures the idle gap */
    int batches_open;       /* batches collected in the open span */
    float open_end_ms;      /* where the open span's last GPU work ended (from config_start) */
    double span_ms, kernels_ms, between_ms, open_kernels_ms, settle_ms, rebatch_ms, inbatch_ms;
    long spans, gaps;
};

/* ---- errors ---- */

/* Fill err with "what: <vendor's error>"; mark the instance broken on a sticky error. */
static int gpu_fail(struct tf_backend_ctx *ctx, int rc, struct tf_error *err, const char *what)
{
    char text[256];
    ctx->v->error_text(rc, text, sizeof text);
    if (ctx->v->is_sticky(rc))
        ctx->healthy = 0;
    return tf_error_set(err, TF_ERR_BACKEND, "%s: %s", what, text);
}

/* A fault that surfaced once the kernel was queued: it failed while running. */
static int gpu_fault(struct tf_backend_ctx *ctx, int rc, struct tf_error *err, const char *what)
{
    gpu_fail(ctx, rc, err, what);
    ctx->healthy = 0;
    return TF_STATUS_RUNTIME_ERROR;
}

/* runtime_error + err if an earlier fault left the instance unusable, else OK. */
static int check_healthy(const struct tf_backend_ctx *ctx, struct tf_error *err)
{
    if (ctx->healthy)
        return TF_STATUS_OK;
    tf_error_set(err, TF_ERR_BACKEND, "the %s device is unusable after an earlier fault",
                 ctx->v->name);
    return TF_STATUS_RUNTIME_ERROR;
}

/* ---- telemetry ---- */

/* How often the sampling thread reads the sensor. Its counters move every few
 * tens of milliseconds anyway; a reading costs about 1 ms of this thread's time. */
#define TELEMETRY_PERIOD_NS 25000000L

/* The sampling thread: a reading every period until telemetry_stop. */
static void *telemetry_thread(void *arg)
{
    struct tf_backend_ctx *ctx = arg;
    pthread_mutex_lock(&ctx->lock);
    while (!ctx->sampler_stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += TELEMETRY_PERIOD_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&ctx->wake, &ctx->lock, &until);
        if (ctx->sampler_stop)
            break;
        pthread_mutex_unlock(&ctx->lock);
        struct tf_telemetry t;
        ctx->v->sensor_read(ctx->sensor, &t);
        pthread_mutex_lock(&ctx->lock);
        ctx->telemetry = t;
    }
    pthread_mutex_unlock(&ctx->lock);
    return NULL;
}

/* A first reading now, then the thread (without a sensor: nothing). Without a
 * thread (pthread_create failed) the first reading just stays. */
static void telemetry_start(struct tf_backend_ctx *ctx)
{
    if (ctx->sensor == NULL)
        return;
    ctx->v->sensor_read(ctx->sensor, &ctx->telemetry);
    ctx->sampler_running = pthread_create(&ctx->sampler, NULL, telemetry_thread, ctx) == 0;
    if (ctx->sampler_running) /* named for the runner profile's CPU by thread */
        pthread_setname_np(ctx->sampler, "tf-telemetry");
}

static void telemetry_stop(struct tf_backend_ctx *ctx)
{
    if (!ctx->sampler_running)
        return;
    pthread_mutex_lock(&ctx->lock);
    ctx->sampler_stop = 1;
    pthread_cond_signal(&ctx->wake);
    pthread_mutex_unlock(&ctx->lock);
    pthread_join(ctx->sampler, NULL);
    ctx->sampler_running = 0;
}

/* The GPU's timeline (struct tf_backend_ctx): before a timed launch, close
 * the previous configuration's span at the end of its last batch. */
static void timeline_close_span(struct tf_backend_ctx *ctx)
{
    float ms = 0;
    if (!ctx->timeline_open)
        return;
    ctx->timeline_open = 0;
    if (ctx->last_end == NULL ||
        ctx->v->event_elapsed_ms(ctx->device, &ms, ctx->config_start, ctx->last_end) != 0)
        return; /* no batch since its launch (a failure): no span */
    ctx->span_ms += ms;
    ctx->kernels_ms += ctx->open_kernels_ms;
    ctx->spans++;
    ctx->between_pending = 1;
}

/* After a timed launch completed: the idle time since the previous
 * configuration's last batch, and a new span with this launch's `ms`. */
static void timeline_open_span(struct tf_backend_ctx *ctx, float ms)
{
    float verified_end = 0;
    float idle = 0;
    if (ctx->between_pending && ctx->last_end != NULL &&
        ctx->v->event_elapsed_ms(ctx->device, &idle, ctx->last_end, ctx->config_start) == 0) {
        ctx->between_ms += idle;
        ctx->gaps++;
    }
    ctx->between_pending = 0;
    ctx->last_end = NULL;
    ctx->timeline_open = 1;
    ctx->batches_open = 0;
    ctx->open_end_ms =
        ctx->v->event_elapsed_ms(ctx->device, &verified_end, ctx->config_start, ctx->end) == 0
            ? verified_end
            : ms;
    ctx->open_kernels_ms = ms;
}

/* A batch of `n` launches collected in the open span (`kernels` ms of them):
 * where it sits on the span's timeline. */
static void timeline_place_batch(struct tf_backend_ctx *ctx, int slot, int n, double kernels)
{
    float first = 0, last = 0;
    if (ctx->v->event_elapsed_ms(ctx->device, &first, ctx->config_start,
                                 ctx->batch_start[slot][0]) ||
        ctx->v->event_elapsed_ms(ctx->device, &last, ctx->config_start,
                                 ctx->batch_end[slot][n - 1]))
        return;
    *(ctx->batches_open++ == 0 ? &ctx->settle_ms : &ctx->rebatch_ms) += first - ctx->open_end_ms;
    ctx->inbatch_ms += (last - first) - kernels;
    ctx->open_end_ms = last;
}

/* At close (the stream drained): the last span, then the profile line. */
static void timeline_report(struct tf_backend_ctx *ctx)
{
    if (ctx->timeline)
        timeline_close_span(ctx);
    if (ctx->spans == 0)
        return;
    fprintf(stderr,
            "tunefarm gpu profile: %ld configurations, per configuration (ms) on the GPU's "
            "clock: from the verified launch to the last sample %.3f, of which timed launches "
            "%.3f and the rest %.3f (before the first batch of samples %.3f, before later "
            "batches %.3f, within batches %.3f); "
            "then until the next verified launch (the guard check, the restore, idle) %.3f "
            "(%ld gaps)\n",
            ctx->spans, ctx->span_ms / (double)ctx->spans, ctx->kernels_ms / (double)ctx->spans,
            (ctx->span_ms - ctx->kernels_ms) / (double)ctx->spans,
            ctx->settle_ms / (double)ctx->spans, ctx->rebatch_ms / (double)ctx->spans,
            ctx->inbatch_ms / (double)ctx->spans,
            ctx->gaps ? ctx->between_ms / (double)ctx->gaps : 0.0, ctx->gaps);
}

/* ---- the instance ---- */

void tf_gpu_close(struct tf_backend_ctx *ctx)
{
    if (ctx == NULL)
        return;
    const struct tf_gpu_vendor *v = ctx->v;
    void *d = ctx->device;
    telemetry_stop(ctx);
    if (ctx->sensor && v->sensor_close)
        v->sensor_close(ctx->sensor);
    if (d) {
        /* On a broken context these fail; the process is about to exit anyway. */
        if (ctx->stream)
            v->stream_synchronize(d, ctx->stream);
        timeline_report(ctx);
        if (ctx->copy_stream) {
            v->stream_synchronize(d, ctx->copy_stream);
            v->stream_destroy(d, ctx->copy_stream);
        }
        if (ctx->copy_ready)
            v->event_destroy(d, ctx->copy_ready);
        if (ctx->copy_done)
            v->event_destroy(d, ctx->copy_done);
        if (ctx->flush_buf)
            v->mem_free(d, ctx->flush_buf);
        if (ctx->compare_module)
            v->module_unload(d, ctx->compare_module);
        if (ctx->compare_dev)
            v->mem_free(d, ctx->compare_dev);
        if (ctx->compare_host)
            v->host_free(d, ctx->compare_host);
        if (ctx->start)
            v->event_destroy(d, ctx->start);
        if (ctx->end)
            v->event_destroy(d, ctx->end);
        if (ctx->config_start)
            v->event_destroy(d, ctx->config_start);
        for (int slot = 0; slot < TF_MAX_QUEUED_BATCHES; slot++) {
            for (int i = 0; i < ctx->batch_events[slot]; i++) {
                v->event_destroy(d, ctx->batch_start[slot][i]);
                v->event_destroy(d, ctx->batch_end[slot][i]);
            }
            if (ctx->batch_done[slot])
                v->event_destroy(d, ctx->batch_done[slot]);
        }
        if (ctx->stream)
            v->stream_destroy(d, ctx->stream);
        v->device_close(d);
    }
    pthread_cond_destroy(&ctx->wake);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

static void compare_load(struct tf_backend_ctx *ctx);

int tf_gpu_open(const struct tf_gpu_vendor *v, int ordinal, struct tf_backend_ctx **out,
                struct tf_error *err)
{
    struct tf_backend_ctx *ctx = tf_xcalloc(1, sizeof *ctx);
    int rc;

    if (v->version != TF_GPU_VENDOR_VERSION)
        tf_die("GPU vendor table '%s' has version %d, not %d", v->name, v->version,
               TF_GPU_VENDOR_VERSION);
    pthread_mutex_init(&ctx->lock, NULL);
    pthread_cond_init(&ctx->wake, NULL);
    ctx->v = v;
    ctx->healthy = 1;
    *out = NULL;
    if (v->device_open(ordinal, &ctx->device, &ctx->limits, err) != 0) {
        ctx->device = NULL;
        goto fail;
    }
    void *d = ctx->device;
    /* Each handle stays NULL unless its creation succeeded, so close() can
     * release exactly what exists. */
    struct {
        tf_gpu_stream *stream;
        tf_gpu_event *event;
        int flags;
    } const make[] = {
        {&ctx->stream, NULL, 0},
        {NULL, &ctx->start, TF_GPU_EVENT_TIMING},
        {NULL, &ctx->end, TF_GPU_EVENT_TIMING | TF_GPU_EVENT_WAITED},
        {&ctx->copy_stream, NULL, 0},
        {NULL, &ctx->copy_ready, 0},
        {NULL, &ctx->copy_done, TF_GPU_EVENT_WAITED},
    };
    for (size_t i = 0; i < sizeof make / sizeof make[0]; i++) {
        if (make[i].stream)
            rc = v->stream_create(d, make[i].stream);
        else
            rc = v->event_create(d, make[i].event, make[i].flags);
        if (rc != 0) {
            if (make[i].stream)
                *make[i].stream = NULL;
            else
                *make[i].event = NULL;
            gpu_fail(ctx, rc, err, make[i].stream ? "stream creation" : "event creation");
            goto fail;
        }
    }
    if (getenv("TUNEFARM_PROFILE") != NULL) {
        if (v->event_create(d, &ctx->config_start, TF_GPU_EVENT_TIMING) == 0)
            ctx->timeline = 1;
        else
            ctx->config_start = NULL; /* no timeline, nothing else lost */
    }
    ctx->flush_words = ctx->limits.flush_bytes / 4;
    if ((rc = v->mem_alloc(d, &ctx->flush_buf, ctx->flush_words * 4)) != 0) {
        ctx->flush_buf = NULL;
        gpu_fail(ctx, rc, err, "allocating the cache flush buffer");
        goto fail;
    }
    /* Telemetry is optional: without a sensor results carry none. */
    ctx->sensor = v->sensor_open ? v->sensor_open(d) : NULL;
    telemetry_start(ctx);
    /* The comparison kernels now, not at the first comparison: building them
     * loads the compiler into this process, which changes its signal actions
     * and limits, and the runner restarts after any configuration that
     * changed them (runner_shield.c). Without them outputs are compared on
     * the host (compare_why says why). */
    compare_load(ctx);
    *out = ctx;
    return 0;
fail:
    tf_gpu_close(ctx);
    return -1;
}

static int read_file(const char *path, char **data, struct tf_error *err)
{
    FILE *f = fopen(path, "rbe");
    size_t len = 0, cap = 1 << 16;
    char *buf = NULL;
    if (f == NULL)
        return tf_error_set(err, TF_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    buf = tf_xmalloc(cap);
    for (;;) {
        size_t k = fread(buf + len, 1, cap - len, f);
        len += k;
        if (len < cap)
            break;
        cap *= 2;
        buf = tf_xrealloc(buf, cap);
    }
    const int bad = ferror(f);
    fclose(f);
    if (bad || len == 0) {
        free(buf);
        return tf_error_set(err, TF_ERR_IO, "cannot read '%s': %s", path,
                            bad ? strerror(errno) : "empty file");
    }
    *data = buf;
    return 0;
}

int tf_gpu_load(struct tf_backend_ctx *ctx, const char *binary_path, const char *entry,
                void **function, struct tf_error *err)
{
    const struct tf_gpu_vendor *v = ctx->v;
    struct gpu_function *f = tf_xcalloc(1, sizeof *f);
    char *image = NULL;
    int rc;

    if (check_healthy(ctx, err) != TF_STATUS_OK)
        goto fail;
    if (read_file(binary_path, &image, err) != 0)
        goto fail;
    if ((rc = v->module_load(ctx->device, &f->module, image)) != 0) {
        f->module = NULL;
        gpu_fail(ctx, rc, err, "loading the module");
        goto fail;
    }
    if ((rc = v->module_function(ctx->device, &f->fn, f->module, entry)) != 0) {
        char what[160];
        snprintf(what, sizeof what, "entry point '%.100s' (declare it extern \"C\" __global__)",
                 entry);
        gpu_fail(ctx, rc, err, what);
        goto fail;
    }
    /* Some HIP runtimes cannot say: the geometry check then counts the dynamic
     * shared memory only, and the runtime still refuses a launch over the
     * limit (an `invalid` result too). A sticky fault surfacing here is one. */
    if ((rc = v->function_attribute(ctx->device, &f->static_shared,
                                    TF_GPU_FUNCTION_STATIC_SHARED, f->fn)) != 0 &&
        v->is_sticky(rc)) {
        gpu_fail(ctx, rc, err, "reading the function's static shared memory");
        goto fail;
    }
    if (rc != 0 || f->static_shared < 0)
        f->static_shared = 0;
    free(image);
    *function = f;
    return 0;
fail:
    if (f->module)
        v->module_unload(ctx->device, f->module);
    free(f);
    free(image);
    *function = NULL;
    return -1;
}

void tf_gpu_unload(struct tf_backend_ctx *ctx, void *function)
{
    struct gpu_function *f = function;
    if (f == NULL)
        return;
    if (f->module)
        ctx->v->module_unload(ctx->device, f->module);
    free(f);
}

int tf_gpu_alloc(struct tf_backend_ctx *ctx, size_t bytes, void **ptr, struct tf_error *err)
{
    /* The runtimes refuse 0 bytes; an empty buffer still needs a valid,
     * distinct address. The runner passes &ptr as the kernel parameter: the
     * device pointer's 64 bits, exactly what the kernel's argument expects. */
    int rc = ctx->v->mem_alloc(ctx->device, ptr, bytes ? bytes : 256);
    if (rc != 0) {
        *ptr = NULL;
        char what[96];
        snprintf(what, sizeof what, "allocating %zu bytes of device memory", bytes);
        gpu_fail(ctx, rc, err, what);
        if (rc == ctx->v->out_of_memory)
            err->code = TF_ERR_NOMEM;
        return -1;
    }
    return 0;
}

void tf_gpu_release(struct tf_backend_ctx *ctx, void *ptr)
{
    if (ptr)
        ctx->v->mem_free(ctx->device, ptr);
}

/* Copies go through our stream and wait for it. The synchronous copies run
 * on the legacy / null stream, which does not order with a non-blocking one,
 * and from pageable memory a copy to the device may return before its DMA
 * lands: a kernel queued right after could read the previous variant's data. */
int tf_gpu_upload(struct tf_backend_ctx *ctx, void *dst, const void *host, size_t bytes,
                  struct tf_error *err)
{
    int rc = ctx->v->copy_to_device(ctx->device, dst, host, bytes, ctx->stream);
    if (rc == 0)
        rc = ctx->v->stream_synchronize(ctx->device, ctx->stream);
    return rc == 0 ? 0 : gpu_fail(ctx, rc, err, "upload");
}

int tf_gpu_download(struct tf_backend_ctx *ctx, void *host, const void *src, size_t bytes,
                    struct tf_error *err)
{
    int rc = ctx->v->copy_to_host(ctx->device, host, src, bytes, ctx->stream);
    if (rc == 0)
        rc = ctx->v->stream_synchronize(ctx->device, ctx->stream);
    return rc == 0 ? 0 : gpu_fail(ctx, rc, err, "download");
}

/* ---- launching ---- */

/* TF_STATUS_INVALID + err if `g` exceeds a limit of the device for `f`, else OK. */
static int check_geometry(const struct tf_backend_ctx *ctx, const struct gpu_function *f,
                          const struct tf_launch *g, struct tf_error *err)
{
    static const char axis[] = "xyz";
    const struct tf_gpu_limits *lim = &ctx->limits;
    const uint64_t threads = (uint64_t)g->block[0] * g->block[1] * g->block[2];
    if (threads > (uint64_t)lim->max_threads) {
        tf_error_set(err, TF_ERR_BACKEND,
                     "block of %llu threads exceeds the device's %d threads per block",
                     (unsigned long long)threads, lim->max_threads);
        return TF_STATUS_INVALID;
    }
    for (int d = 0; d < 3; d++) {
        if (g->block[d] > (uint32_t)lim->max_block[d]) {
            tf_error_set(err, TF_ERR_BACKEND, "block.%c = %u exceeds the device's %d", axis[d],
                         g->block[d], lim->max_block[d]);
            return TF_STATUS_INVALID;
        }
        if (g->grid[d] > (uint32_t)lim->max_grid[d]) {
            tf_error_set(err, TF_ERR_BACKEND, "grid.%c = %u exceeds the device's %d", axis[d],
                         g->grid[d], lim->max_grid[d]);
            return TF_STATUS_INVALID;
        }
    }
    if (g->shared_bytes + (uint64_t)f->static_shared > (uint64_t)lim->max_shared_optin) {
        tf_error_set(err, TF_ERR_BACKEND,
                     "%llu bytes of dynamic + %d of static shared memory exceed the device's "
                     "%d per block",
                     (unsigned long long)g->shared_bytes, f->static_shared,
                     lim->max_shared_optin);
        return TF_STATUS_INVALID;
    }
    return TF_STATUS_OK;
}

/* Healthy, geometry within the device's limits, and (where the vendor has
 * one) the opt-in above the default dynamic shared memory. Returns a status. */
static int launch_prepare(struct tf_backend_ctx *ctx, struct gpu_function *f,
                          const struct tf_launch *g, struct tf_error *err)
{
    int status = check_healthy(ctx, err);
    if (status == TF_STATUS_OK)
        status = check_geometry(ctx, f, g, err);
    if (status != TF_STATUS_OK)
        return status;
    const int dynamic = (int)g->shared_bytes;
    if (ctx->v->function_allow_shared && dynamic + f->static_shared > ctx->limits.max_shared &&
        dynamic > f->dynamic_limit) {
        int rc = ctx->v->function_allow_shared(ctx->device, f->fn, dynamic);
        if (rc != 0) {
            gpu_fail(ctx, rc, err, "opting in to more dynamic shared memory");
            return ctx->v->is_sticky(rc) ? TF_STATUS_RUNTIME_ERROR : TF_STATUS_INVALID;
        }
        f->dynamic_limit = dynamic;
    }
    return TF_STATUS_OK;
}

/* The status of a failed launch call. */
static int launch_failed(struct tf_backend_ctx *ctx, int rc, struct tf_error *err)
{
    gpu_fail(ctx, rc, err, "kernel launch");
    if (ctx->v->is_sticky(rc))
        return TF_STATUS_RUNTIME_ERROR; /* an earlier fault surfaced */
    return ctx->v->is_configuration_error(rc) ? TF_STATUS_INVALID : TF_STATUS_LAUNCH_ERROR;
}

int tf_gpu_launch(struct tf_backend_ctx *ctx, void *function, const struct tf_launch *g,
                  void **args, double *seconds, struct tf_error *err)
{
    const struct tf_gpu_vendor *v = ctx->v;
    void *d = ctx->device;
    struct gpu_function *f = function;
    int rc;

    int status = launch_prepare(ctx, f, g, err);
    if (status != TF_STATUS_OK)
        return status;
    const int timeline = seconds && ctx->timeline;
    if (timeline)
        timeline_close_span(ctx);
    if (timeline && v->event_record(d, ctx->config_start, ctx->stream) != 0)
        ctx->timeline = 0;
    if (seconds && (rc = v->event_record(d, ctx->start, ctx->stream)) != 0) {
        gpu_fail(ctx, rc, err, "recording an event");
        return TF_STATUS_RUNTIME_ERROR;
    }
    if ((rc = v->launch(d, f->fn, g, ctx->stream, args)) != 0)
        return launch_failed(ctx, rc, err);
    if (seconds) {
        float ms = 0;
        if ((rc = v->event_record(d, ctx->end, ctx->stream)) != 0 ||
            (rc = v->event_synchronize(d, ctx->end)) != 0 ||
            (rc = v->event_elapsed_ms(d, &ms, ctx->start, ctx->end)) != 0)
            return gpu_fault(ctx, rc, err, "kernel");
        *seconds = (double)ms * 1e-3;
        if (timeline && ctx->timeline)
            timeline_open_span(ctx, ms);
    } else if ((rc = v->stream_synchronize(d, ctx->stream)) != 0) {
        return gpu_fault(ctx, rc, err, "kernel");
    }
    return TF_STATUS_OK;
}

/* After a failure: let the stream drain what was queued, and forget every
 * batch (backend.h: a failed enqueue or collect leaves none queued). */
static void batches_drop(struct tf_backend_ctx *ctx)
{
    ctx->v->stream_synchronize(ctx->device, ctx->stream);
    memset(ctx->batch_queued, 0, sizeof ctx->batch_queued);
    ctx->batch_head = ctx->batches = 0;
}

/* A failure while queueing or collecting: drop the batches, report, runtime_error. */
static int batch_failed(struct tf_backend_ctx *ctx, int rc, struct tf_error *err,
                        const char *what)
{
    batches_drop(ctx);
    gpu_fail(ctx, rc, err, what);
    return TF_STATUS_RUNTIME_ERROR;
}

int tf_gpu_enqueue(struct tf_backend_ctx *ctx, void *function, const struct tf_launch *g,
                   void **args, int count, int flush, struct tf_error *err)
{
    const struct tf_gpu_vendor *v = ctx->v;
    void *d = ctx->device;
    struct gpu_function *f = function;
    int rc;

    if (count < 1 || count > TF_MAX_BATCH || ctx->batches == TF_MAX_QUEUED_BATCHES)
        tf_die("tf_gpu_enqueue: %d launches with %d batches queued", count, ctx->batches);
    int status = launch_prepare(ctx, f, g, err);
    if (status != TF_STATUS_OK) {
        if (ctx->batches > 0)
            batches_drop(ctx);
        return status;
    }
    const int slot = (ctx->batch_head + ctx->batches) % TF_MAX_QUEUED_BATCHES;
    tf_gpu_event *starts = ctx->batch_start[slot], *ends = ctx->batch_end[slot];
    if (ctx->batch_done[slot] == NULL &&
        (rc = v->event_create(d, &ctx->batch_done[slot], TF_GPU_EVENT_WAITED)) != 0) {
        ctx->batch_done[slot] = NULL;
        return batch_failed(ctx, rc, err, "event creation");
    }
    for (; ctx->batch_events[slot] < count; ctx->batch_events[slot]++) {
        int i = ctx->batch_events[slot];
        if ((rc = v->event_create(d, &starts[i], TF_GPU_EVENT_TIMING)) != 0)
            return batch_failed(ctx, rc, err, "event creation");
        if ((rc = v->event_create(d, &ends[i], TF_GPU_EVENT_TIMING)) != 0) {
            v->event_destroy(d, starts[i]);
            return batch_failed(ctx, rc, err, "event creation");
        }
    }
    ctx->batches++;
    for (int i = 0; i < count; i++) {
        /* The flush runs between the samples, outside their events. */
        if (flush && (rc = v->fill_words(d, ctx->flush_buf, ++ctx->flush_value,
                                         ctx->flush_words, ctx->stream)) != 0)
            return batch_failed(ctx, rc, err, "cache flush");
        if ((rc = v->event_record(d, starts[i], ctx->stream)) != 0)
            return batch_failed(ctx, rc, err, "recording an event");
        if ((rc = v->launch(d, f->fn, g, ctx->stream, args)) != 0) {
            batches_drop(ctx);
            return launch_failed(ctx, rc, err);
        }
        if ((rc = v->event_record(d, ends[i], ctx->stream)) != 0)
            return batch_failed(ctx, rc, err, "recording an event");
        ctx->batch_queued[slot] = i + 1;
    }
    if ((rc = v->event_record(d, ctx->batch_done[slot], ctx->stream)) != 0)
        return batch_failed(ctx, rc, err, "recording an event");
    return TF_STATUS_OK;
}

int tf_gpu_collect(struct tf_backend_ctx *ctx, double *seconds, struct tf_error *err)
{
    const struct tf_gpu_vendor *v = ctx->v;
    if (ctx->batches == 0)
        return TF_STATUS_OK;
    const int slot = ctx->batch_head;
    const int n = ctx->batch_queued[slot];
    const tf_gpu_event *starts = ctx->batch_start[slot], *ends = ctx->batch_end[slot];
    double batch_ms = 0;
    int rc;
    ctx->batch_queued[slot] = 0;
    ctx->batch_head = (slot + 1) % TF_MAX_QUEUED_BATCHES;
    ctx->batches--;
    if (n > 0 && (rc = v->event_synchronize(ctx->device, ctx->batch_done[slot])) != 0) {
        batches_drop(ctx); /* a fault: the later batch is lost with it */
        return gpu_fault(ctx, rc, err, "kernel");
    }
    for (int i = 0; i < n; i++) {
        float ms = 0;
        if ((rc = v->event_elapsed_ms(ctx->device, &ms, starts[i], ends[i])) != 0)
            return batch_failed(ctx, rc, err, "reading a sample's time");
        seconds[i] = (double)ms * 1e-3;
        batch_ms += ms;
        if (ctx->timeline_open)
            ctx->open_kernels_ms += ms;
    }
    if (n > 0 && ctx->timeline_open)
        timeline_place_batch(ctx, slot, n, batch_ms);
    if (n > 0) /* the last GPU work of this configuration so far */
        ctx->last_end = ends[n - 1];
    return TF_STATUS_OK;
}

int tf_gpu_flush_cache(struct tf_backend_ctx *ctx, struct tf_error *err)
{
    /* A new value each time, so no layer can skip a write as redundant. */
    int rc = ctx->v->fill_words(ctx->device, ctx->flush_buf, ++ctx->flush_value,
                                ctx->flush_words, ctx->stream);
    return rc == 0 ? 0 : gpu_fail(ctx, rc, err, "cache flush");
}

/* ---- copies ---- */

int tf_gpu_copy(struct tf_backend_ctx *ctx, void *dst, const void *src, size_t bytes,
                struct tf_error *err)
{
    int rc = ctx->v->copy_on_device(ctx->device, dst, src, bytes, ctx->stream);
    return rc == 0 ? 0 : gpu_fail(ctx, rc, err, "device-to-device copy");
}

/* Page-locked host memory: a download into pageable memory is a staged,
 * synchronous copy whatever the API's name says. */
int tf_gpu_host_alloc(struct tf_backend_ctx *ctx, size_t bytes, void **ptr,
                      struct tf_error *err)
{
    int rc = ctx->v->host_alloc(ctx->device, ptr, bytes ? bytes : 1);
    if (rc != 0) {
        *ptr = NULL;
        char what[96];
        snprintf(what, sizeof what, "allocating %zu bytes of page-locked memory", bytes);
        return gpu_fail(ctx, rc, err, what);
    }
    return 0;
}

void tf_gpu_host_free(struct tf_backend_ctx *ctx, void *ptr)
{
    if (ptr)
        ctx->v->host_free(ctx->device, ptr);
}

/* The copy stream waits for what the main stream has queued so far (an event
 * recorded there), then copies while the main stream goes on with the samples.
 * The copy stream runs in order: its last `copy_done` covers every copy. */
int tf_gpu_download_async(struct tf_backend_ctx *ctx, void *host, const void *src, size_t bytes,
                          struct tf_error *err)
{
    const struct tf_gpu_vendor *v = ctx->v;
    void *d = ctx->device;
    int rc;
    if ((rc = v->event_record(d, ctx->copy_ready, ctx->stream)) != 0)
        return gpu_fail(ctx, rc, err, "recording an event");
    if ((rc = v->stream_wait_event(d, ctx->copy_stream, ctx->copy_ready)) != 0)
        return gpu_fail(ctx, rc, err, "ordering the copy stream");
    if ((rc = v->copy_to_host(d, host, src, bytes, ctx->copy_stream)) != 0)
        return gpu_fail(ctx, rc, err, "download");
    if ((rc = v->event_record(d, ctx->copy_done, ctx->copy_stream)) != 0)
        return gpu_fail(ctx, rc, err, "recording an event");
    ctx->copies_queued = 1;
    return 0;
}

int tf_gpu_download_wait(struct tf_backend_ctx *ctx, struct tf_error *err)
{
    if (!ctx->copies_queued)
        return 0;
    ctx->copies_queued = 0;
    int rc = ctx->v->event_synchronize(ctx->device, ctx->copy_done);
    if (rc != 0) {
        /* the copy waited on the kernel: its fault surfaced here */
        gpu_fault(ctx, rc, err, "download");
        return -1;
    }
    return 0;
}

/* ---- what a variant uses, and the device's state ---- */

int tf_gpu_function_info(struct tf_backend_ctx *ctx, void *function, int32_t *registers,
                         int64_t *shared_bytes, int64_t *local_bytes, struct tf_error *err)
{
    const struct tf_gpu_vendor *v = ctx->v;
    struct gpu_function *f = function;
    int regs = -1, shared = -1, local = -1, rc;
    *registers = -1;
    *shared_bytes = *local_bytes = -1;
    if ((rc = v->function_attribute(ctx->device, &regs, TF_GPU_FUNCTION_REGISTERS, f->fn)) != 0 ||
        (rc = v->function_attribute(ctx->device, &shared, TF_GPU_FUNCTION_STATIC_SHARED,
                                    f->fn)) != 0 ||
        (rc = v->function_attribute(ctx->device, &local, TF_GPU_FUNCTION_LOCAL_BYTES, f->fn)) !=
            0)
        return gpu_fail(ctx, rc, err, "reading the function's attributes");
    *registers = regs;
    *shared_bytes = shared;
    *local_bytes = local;
    return 0;
}

int tf_gpu_telemetry(struct tf_backend_ctx *ctx, struct tf_telemetry *t, struct tf_error *err)
{
    if (ctx->sensor == NULL) {
        t->sm_clock_mhz = t->power_w = t->energy_mj = t->temperature_c = NAN;
        t->throttled = -1;
        return tf_error_set(err, TF_ERR_BACKEND, "no %s: telemetry unavailable",
                            ctx->v->sensor_name);
    }
    pthread_mutex_lock(&ctx->lock);
    *t = ctx->telemetry;
    pthread_mutex_unlock(&ctx->lock);
    return 0;
}

/* Read on the calling (measuring) thread, not through the telemetry thread's
 * 25 ms readings: the energy window needs the counter as it is now. */
int tf_gpu_energy(struct tf_backend_ctx *ctx, double *joules, struct tf_error *err)
{
    if (ctx->sensor == NULL) {
        tf_error_set(err, TF_ERR_BACKEND, "no %s for this device: no energy counter",
                     ctx->v->sensor_name);
        return 1;
    }
    if (ctx->v->sensor_energy == NULL) {
        tf_error_set(err, TF_ERR_BACKEND, "tunefarm reads no energy counter through %s",
                     ctx->v->sensor_name);
        return 1;
    }
    char why[128] = "";
    const int rc = ctx->v->sensor_energy(ctx->sensor, joules, why, sizeof why);
    if (rc != 0)
        tf_error_set(err, TF_ERR_BACKEND, "%s energy counter: %s", ctx->v->sensor_name, why);
    return rc;
}

int tf_gpu_healthy(struct tf_backend_ctx *ctx)
{
    return ctx != NULL && ctx->healthy;
}

/* ---- outputs compared on the device ----
 *
 * Comparing a 4096^2 output on the host costs a 64 MiB download and tens of
 * milliseconds of CPU per configuration, on the CPUs the node's compilers
 * need (bench/results/compile-cpu-2026-11-27-h200.md); the device reads the
 * two buffers in microseconds. One kernel per element type applies
 * tf_verify's rule element by element, in the same arithmetic: float in
 * float, double in double, no contraction into fused multiply-adds
 * (--fmad=false), so an element on the edge of the tolerance passes or fails
 * as on the host. Each thread counts its failures, keeps its first, and sums
 * the expected words times their weights (tf_verify_checksum's); a warp
 * reduces them and one lane adds them to the slot's three words. The runner
 * compares the checksum with the one of the sealed host copy the expected
 * buffer was uploaded from: a variant that wrote into that buffer is caught,
 * and the host comparison decides. Written for NVRTC (the only vendor with
 * compare_image so far). */
static const char compare_source[] =
    "typedef unsigned long long tf_u64;\n"
    "typedef unsigned int tf_u32;\n"
    "__device__ __forceinline__ tf_u64 tf_weight(tf_u64 j) {\n"
    "    j += 0x9e3779b97f4a7c15ull;\n"
    "    j = (j ^ (j >> 30)) * 0xbf58476d1ce4e5b9ull;\n"
    "    j = (j ^ (j >> 27)) * 0x94d049bb133111ebull;\n"
    "    return (j ^ (j >> 31)) | 1;\n"
    "}\n"
    "__device__ __forceinline__ void tf_compare_reduce(tf_u64 bad, tf_u64 first, tf_u64 sum,\n"
    "                                                  tf_u64 *out) {\n"
    "    for (int o = 16; o > 0; o >>= 1) {\n"
    "        bad += __shfl_down_sync(0xffffffffu, bad, o);\n"
    "        const tf_u64 f = __shfl_down_sync(0xffffffffu, first, o);\n"
    "        first = f < first ? f : first;\n"
    "        sum += __shfl_down_sync(0xffffffffu, sum, o);\n"
    "    }\n"
    "    if ((threadIdx.x & 31) == 0) {\n"
    "        if (bad) { atomicAdd(&out[0], bad); atomicMin(&out[1], first); }\n"
    "        atomicAdd(&out[2], sum);\n"
    "    }\n"
    "}\n"
    "#define TF_COMPARE_REAL(NAME, T, ABS, BITS, MAX, WORDS)                              \\\n"
    "extern \"C\" __global__ void NAME(const T *g, const T *e, tf_u64 n, T at, T rt,     \\\n"
    "                                tf_u64 *out) {                                     \\\n"
    "    tf_u64 bad = 0, first = ~0ull, sum = 0;                                        \\\n"
    "    const tf_u64 step = (tf_u64)gridDim.x * blockDim.x;                            \\\n"
    "    for (tf_u64 i = (tf_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) { \\\n"
    "        const T gv = g[i], ev = e[i];                                              \\\n"
    "        const bool ok = (ABS(gv - ev) <= at + rt * ABS(ev)) & (ABS(ev) <= (MAX));  \\\n"
    "        if (!ok) { bad++; first = i < first ? i : first; }                         \\\n"
    "        WORDS(BITS(ev), i);                                                        \\\n"
    "    }                                                                              \\\n"
    "    tf_compare_reduce(bad, first, sum, out);                                       \\\n"
    "}\n"
    "#define TF_COMPARE_INT(NAME, T, BITS, WORDS)                                        \\\n"
    "extern \"C\" __global__ void NAME(const T *g, const T *e, tf_u64 n, double at,      \\\n"
    "                                double rt, tf_u64 *out) {                          \\\n"
    "    tf_u64 bad = 0, first = ~0ull, sum = 0;                                        \\\n"
    "    const tf_u64 step = (tf_u64)gridDim.x * blockDim.x;                            \\\n"
    "    for (tf_u64 i = (tf_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) { \\\n"
    "        const T gv = g[i], ev = e[i];                                              \\\n"
    "        if (gv != ev) { bad++; first = i < first ? i : first; }                    \\\n"
    "        WORDS(BITS(ev), i);                                                        \\\n"
    "    }                                                                              \\\n"
    "    tf_compare_reduce(bad, first, sum, out);                                       \\\n"
    "}\n"
    "#define TF_ONE_WORD(w, i) sum += (tf_u64)(tf_u32)(w) * tf_weight(i)\n"
    "#define TF_TWO_WORDS(w, i) sum += (tf_u64)(tf_u32)(w) * tf_weight(2 * (i)) + \\\n"
    "                                  (tf_u64)(tf_u32)((tf_u64)(w) >> 32) * tf_weight(2 * (i) + 1)\n"
    "#define TF_SAME(v) (v)\n"
    "TF_COMPARE_REAL(tf_compare_f32, float, fabsf, __float_as_uint, 3.402823466e+38f,\n"
    "                TF_ONE_WORD)\n"
    "TF_COMPARE_REAL(tf_compare_f64, double, fabs, __double_as_longlong,\n"
    "                1.7976931348623157e+308, TF_TWO_WORDS)\n"
    "TF_COMPARE_INT(tf_compare_i32, int, TF_SAME, TF_ONE_WORD)\n"
    "TF_COMPARE_INT(tf_compare_i64, long long, TF_SAME, TF_TWO_WORDS)\n";

const char *tf_gpu_compare_source(void)
{
    return compare_source;
}

/* Entry names by enum tf_elem_type (I32, I64, F32, F64). */
static const char *const compare_entries[4] = {"tf_compare_i32", "tf_compare_i64",
                                               "tf_compare_f32", "tf_compare_f64"};

/* Build and load the comparison kernels and allocate the slots, once, when
 * the device is opened: compare_ok, or compare_why says why not. What was
 * made before a failure is freed by tf_gpu_close. */
static void compare_load(struct tf_backend_ctx *ctx)
{
    const struct tf_gpu_vendor *v = ctx->v;
    void *d = ctx->device;
    struct tf_error *why = &ctx->compare_why;
    const size_t slots_bytes = 3 * TF_COMPARE_SLOTS * sizeof(uint64_t);
    void *image = NULL;
    int rc = 0;
    if (v->compare_image == NULL) {
        tf_error_set(why, TF_ERR_BACKEND, "%s compares outputs on the host", v->name);
        return;
    }
    if ((image = v->compare_image(d, compare_source, why)) == NULL)
        return;
    rc = v->module_load(d, &ctx->compare_module, image);
    free(image); /* (the module has its own copy) */
    if (rc != 0) {
        ctx->compare_module = NULL;
        gpu_fail(ctx, rc, why, "loading the comparison kernels");
        return;
    }
    for (int i = 0; i < 4; i++)
        if ((rc = v->module_function(d, &ctx->compare_fn[i], ctx->compare_module,
                                     compare_entries[i])) != 0) {
            gpu_fail(ctx, rc, why, "finding a comparison kernel");
            return;
        }
    if ((rc = v->mem_alloc(d, (void **)&ctx->compare_dev, slots_bytes)) != 0) {
        ctx->compare_dev = NULL;
        gpu_fail(ctx, rc, why, "allocating the comparison's outcome");
        return;
    }
    if ((rc = v->host_alloc(d, (void **)&ctx->compare_host, slots_bytes)) != 0) {
        ctx->compare_host = NULL;
        gpu_fail(ctx, rc, why, "allocating the comparison's outcome");
        return;
    }
    ctx->compare_ok = 1;
}

int tf_gpu_compare_queue(struct tf_backend_ctx *ctx, int slot, int type, const void *got,
                         const void *expected, size_t count, double rtol, double atol,
                         struct tf_error *err)
{
    const struct tf_gpu_vendor *v = ctx->v;
    void *d = ctx->device;
    if (slot < 0 || slot >= TF_COMPARE_SLOTS || type < 0 || type > 3)
        return tf_error_set(err, TF_ERR_SYSTEM, "comparison slot %d or type %d out of range",
                            slot, type);
    if (check_healthy(ctx, err) != 0)
        return -1;
    if (!ctx->compare_ok) {
        *err = ctx->compare_why;
        return -1;
    }
    uint64_t *out = ctx->compare_dev + 3 * slot;
    int rc;
    /* bad = 0, first = UINT64_MAX, checksum = 0 */
    if ((rc = v->fill_words(d, out, 0, 6, ctx->stream)) != 0 ||
        (rc = v->fill_words(d, out + 1, 0xffffffffu, 2, ctx->stream)) != 0)
        return gpu_fail(ctx, rc, err, "clearing the comparison's outcome");
    if (count > 0) {
        const size_t blocks = (count + 255) / 256;
        const struct tf_launch g = {{blocks < 2048 ? (uint32_t)blocks : 2048, 1, 1}, {256, 1, 1}, 0};
        void *gp = (void *)(uintptr_t)got, *ep = (void *)(uintptr_t)expected;
        unsigned long long n = count;
        float at32 = (float)atol, rt32 = (float)rtol;
        double at64 = atol, rt64 = rtol;
        const int single = type == TF_ELEM_F32;
        void *args[] = {&gp, &ep, &n, single ? (void *)&at32 : (void *)&at64,
                        single ? (void *)&rt32 : (void *)&rt64, &out};
        if ((rc = v->launch(d, ctx->compare_fn[type], &g, ctx->stream, args)) != 0)
            return gpu_fail(ctx, rc, err, "comparing an output");
    }
    return tf_gpu_download_async(ctx, ctx->compare_host + 3 * slot, out, 3 * sizeof(uint64_t),
                                 err);
}

int tf_gpu_compare_available(struct tf_backend_ctx *ctx)
{
    return ctx->compare_ok;
}

void tf_gpu_compare_result(struct tf_backend_ctx *ctx, int slot, uint64_t *bad, uint64_t *first,
                           uint64_t *checksum)
{
    const uint64_t *r = ctx->compare_host + 3 * slot;
    *bad = r[0];
    *first = r[1];
    *checksum = r[2];
}
