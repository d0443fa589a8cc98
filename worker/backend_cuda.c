/* backend_cuda.c - NVIDIA GPUs through the driver API, NVRTC and NVML.
 *
 * Nothing here links against CUDA: cuda_api.c dlopens libcuda.so.1, libnvrtc
 * and libnvidia-ml.so.1 on first use, so a node without them still runs the
 * binary and probe() says why this backend is unusable. Compiling needs no
 * device: NVRTC turns the variant's source (with the portability header handed
 * over in memory as "tunefarm.h") into a CUBIN for the exact sm_XX of the
 * target, written to the caller's path. Running happens in the runner process
 * only: open() retains the device's primary context, creates a non-blocking
 * stream, a start and an end event and an L2-sized buffer whose memset evicts
 * the cache. Each launch is checked against the device limits first, so an
 * oversized block is an `invalid` result rather than a driver error; a timed
 * launch is bracketed by the two events on the stream (the flush memset, when
 * asked, is queued before the start event, so it is never timed). Faults that
 * poison the context (illegal address, misaligned access, trap...) are
 * `runtime_error` and mark the context unhealthy: CUDA offers no recovery
 * short of a new process, so the runner replies and exits, and the worker
 * starts a fresh one for the next variant. Outputs are downloaded on a side
 * stream into page-locked memory, so the samples queued after a download run
 * while it lands. Telemetry comes from NVML when it is present (clock, power,
 * cumulative energy, temperature, throttling), read by a thread every 25 ms:
 * a reading costs milliseconds the GPU would otherwise wait through. */
#include "backend.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../schema/status.h"
#include "cuda_api.h"
#include "portability.h"

/* A loaded variant. */
struct cuda_function {
    tf_cu_module module;
    tf_cu_function fn;
    int static_shared;      /* bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES */
    int dynamic_limit;      /* the MAX_DYNAMIC_SHARED_SIZE_BYTES we set, 0: default */
};

struct tf_backend_ctx {
    const struct tf_cuda_driver *cu;
    tf_cu_device dev;
    tf_cu_context context;
    tf_cu_stream stream;
    tf_cu_event start, end;
    tf_cu_event batch_start[TF_MAX_BATCH], batch_end[TF_MAX_BATCH]; /* created on first use */
    int batch_events;       /* how many of each exist */
    int batch_queued;       /* launches queued by enqueue, not yet collected */
    tf_cu_deviceptr flush_buf;
    size_t flush_words;
    unsigned int flush_value;
    int healthy;
    /* limits checked before every launch */
    int max_threads, max_block[3], max_grid[3], max_shared, max_shared_optin;
    /* Downloads that overlap the samples: a side stream that waits for
     * `copy_ready` (recorded on the main stream) and records `copy_done`. */
    tf_cu_stream copy_stream;
    tf_cu_event copy_ready, copy_done;
    int copies_queued;
    /* NVML, NULL where absent. A sampling thread reads it every
     * TELEMETRY_PERIOD_NS into `telemetry`, under `lock`: NVML calls take
     * milliseconds, which the measuring thread must not spend between configurations. */
    const struct tf_nvml *nvml;
    tf_nvml_device nvml_dev;
    pthread_t sampler;
    int sampler_running, sampler_stop;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct tf_telemetry telemetry;   /* the last NVML readings */
};

/* ---- errors ---- */

/* Faults after which the context can run nothing more (CUDA's "sticky" errors). */
static int is_sticky(tf_cu_result rc)
{
    switch (rc) {
    case TF_CUDA_ERROR_ILLEGAL_ADDRESS:
    case TF_CUDA_ERROR_LAUNCH_TIMEOUT:
    case TF_CUDA_ERROR_ASSERT:
    case TF_CUDA_ERROR_HARDWARE_STACK_ERROR:
    case TF_CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case TF_CUDA_ERROR_MISALIGNED_ADDRESS:
    case TF_CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case TF_CUDA_ERROR_INVALID_PC:
    case TF_CUDA_ERROR_LAUNCH_FAILED:
    case TF_CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case TF_CUDA_ERROR_UNKNOWN:
        return 1;
    default:
        return 0;
    }
}

/* Launch-time rejections of the configuration itself: the variant asks for
 * more than the device gives, nothing ran. */
static int is_configuration_error(tf_cu_result rc)
{
    return rc == TF_CUDA_ERROR_INVALID_VALUE || rc == TF_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ||
           rc == TF_CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE ||
           rc == TF_CUDA_ERROR_INVALID_CLUSTER_SIZE;
}

/* Fill err with "what: CUDA_ERROR_X (text)"; mark the context broken on a sticky error. */
static int cuda_fail(struct tf_backend_ctx *ctx, tf_cu_result rc, struct tf_error *err,
                     const char *what)
{
    char text[256];
    tf_cuda_error_text(rc, text, sizeof text);
    if (ctx && is_sticky(rc))
        ctx->healthy = 0;
    return tf_error_set(err, TF_ERR_BACKEND, "%s: %s", what, text);
}

/* The driver, initialised; NULL + err with the reason it cannot be used. */
static const struct tf_cuda_driver *driver_ready(struct tf_error *err)
{
    const struct tf_cuda_driver *cu = tf_cuda_driver_load(err);
    if (cu == NULL)
        return NULL;
    const tf_cu_result rc = cu->cuInit(0);
    if (rc != TF_CUDA_SUCCESS) {
        cuda_fail(NULL, rc, err, "cuInit failed");
        return NULL;
    }
    return cu;
}

/* ---- discovery ---- */

static int cuda_probe(struct tf_error *err)
{
    const struct tf_cuda_driver *cu = driver_ready(err);
    int n = 0;
    if (cu == NULL)
        return -1;
    tf_cu_result rc = cu->cuDeviceGetCount(&n);
    if (rc != TF_CUDA_SUCCESS)
        return cuda_fail(NULL, rc, err, "cuDeviceGetCount failed");
    if (n <= 0)
        return tf_error_set(err, TF_ERR_BACKEND, "no NVIDIA GPU (the driver reports 0 devices)");
    return 0;
}

static int cuda_device_count(void)
{
    const struct tf_cuda_driver *cu = driver_ready(NULL);
    int n = 0;
    if (cu == NULL || cu->cuDeviceGetCount(&n) != TF_CUDA_SUCCESS)
        return 0;
    return n;
}

/* The attributes a context needs, read once into `ctx` or a tf_device. */
static int get_attr(const struct tf_cuda_driver *cu, tf_cu_device dev, int attr, int *out,
                    struct tf_error *err)
{
    tf_cu_result rc = cu->cuDeviceGetAttribute(out, attr, dev);
    if (rc != TF_CUDA_SUCCESS) {
        char what[64];
        snprintf(what, sizeof what, "cuDeviceGetAttribute(%d)", attr);
        return cuda_fail(NULL, rc, err, what);
    }
    return 0;
}

static void format_uuid(const tf_cu_uuid *u, char *out, size_t cap)
{
    const unsigned char *b = u->bytes;
    snprintf(out, cap,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* NVRTC's version as "NVRTC 13.0", or "" when NVRTC cannot be loaded. */
static void nvrtc_version(char *out, size_t cap)
{
    const struct tf_nvrtc *nv = tf_nvrtc_load(NULL);
    int major = 0, minor = 0;
    out[0] = '\0';
    if (nv && nv->nvrtcVersion(&major, &minor) == TF_NVRTC_SUCCESS)
        snprintf(out, cap, "NVRTC %d.%d", major, minor);
}

static int cuda_describe(int ordinal, struct tf_device *out, struct tf_error *err)
{
    const struct tf_cuda_driver *cu = driver_ready(err);
    tf_cu_device dev;
    tf_cu_result rc;
    int major = 0, minor = 0, version = 0, v = 0;

    memset(out, 0, sizeof *out);
    if (cu == NULL)
        return -1;
    if ((rc = cu->cuDeviceGet(&dev, ordinal)) != TF_CUDA_SUCCESS) {
        char what[64];
        snprintf(what, sizeof what, "cuDeviceGet(%d)", ordinal);
        return cuda_fail(NULL, rc, err, what);
    }
    tf_strlcpy(out->backend, "cuda", sizeof out->backend);
    tf_strlcpy(out->vendor, "NVIDIA", sizeof out->vendor);
    if ((rc = cu->cuDeviceGetName(out->name, (int)sizeof out->name, dev)) != TF_CUDA_SUCCESS)
        return cuda_fail(NULL, rc, err, "cuDeviceGetName");
    if (get_attr(cu, dev, TF_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major, err) ||
        get_attr(cu, dev, TF_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor, err))
        return -1;
    snprintf(out->arch, sizeof out->arch, "sm_%d%d", major, minor);

    tf_cu_uuid uuid;
    if ((rc = cu->cuDeviceGetUuid(&uuid, dev)) != TF_CUDA_SUCCESS)
        return cuda_fail(NULL, rc, err, "cuDeviceGetUuid");
    format_uuid(&uuid, out->uuid, sizeof out->uuid);
    if ((rc = cu->cuDeviceGetPCIBusId(out->pci_bus, (int)sizeof out->pci_bus, dev)) !=
        TF_CUDA_SUCCESS)
        return cuda_fail(NULL, rc, err, "cuDeviceGetPCIBusId");
    gethostname(out->host, sizeof out->host - 1);
    size_t total = 0;
    if ((rc = cu->cuDeviceTotalMem(&total, dev)) != TF_CUDA_SUCCESS)
        return cuda_fail(NULL, rc, err, "cuDeviceTotalMem");
    out->memory_bytes = total;

    /* driver_version: the CUDA version the driver implements (13000 -> "13.0");
     * runtime_version: the driver release itself (NVML, "580.65.06"), which is
     * what changes under an operator's feet - there is no CUDA runtime here. */
    if ((rc = cu->cuDriverGetVersion(&version)) != TF_CUDA_SUCCESS)
        return cuda_fail(NULL, rc, err, "cuDriverGetVersion");
    snprintf(out->driver_version, sizeof out->driver_version, "%d.%d", version / 1000,
             version % 1000 / 10);
    const struct tf_nvml *nvml = tf_nvml_load(NULL);
    if (nvml == NULL || nvml->nvmlSystemGetDriverVersion(out->runtime_version,
                                                         (unsigned)sizeof out->runtime_version) !=
                            TF_NVML_SUCCESS)
        out->runtime_version[0] = '\0';
    nvrtc_version(out->compiler_version, sizeof out->compiler_version);

    static const struct {
        int prop, attr;
    } props[] = {
        {TF_DEVPROP_MAX_THREADS, TF_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
        {TF_DEVPROP_MAX_SHARED, TF_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
        {TF_DEVPROP_MAX_SHARED_OPTIN, TF_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
        {TF_DEVPROP_WARP_SIZE, TF_CU_DEVICE_ATTRIBUTE_WARP_SIZE},
        {TF_DEVPROP_SM_COUNT, TF_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
        {TF_DEVPROP_L2_BYTES, TF_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
        {TF_DEVPROP_MAX_REGISTERS, TF_CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
    };
    for (size_t i = 0; i < sizeof props / sizeof props[0]; i++) {
        if (get_attr(cu, dev, props[i].attr, &v, err) != 0)
            return -1;
        out->props[props[i].prop] = v;
    }
    out->props[TF_DEVPROP_SIMD_BYTES] = 0;
    out->compute_units = (uint32_t)out->props[TF_DEVPROP_SM_COUNT];
    return 0;
}

static pthread_once_t ident_once = PTHREAD_ONCE_INIT;
static char ident[512];

static void ident_init(void)
{
    struct tf_error err = {0};
    const struct tf_nvrtc *nv = tf_nvrtc_load(&err);
    char version[64];
    if (nv == NULL) {
        snprintf(ident, sizeof ident, "nvrtc unavailable: %.400s", err.message);
        return;
    }
    nvrtc_version(version, sizeof version);
    snprintf(ident, sizeof ident, "%s | %s", nv->path, version);
}

/* The NVRTC library and version: a new toolkit means new cache entries. */
static const char *cuda_compiler_id(void)
{
    pthread_once(&ident_once, ident_init);
    return ident;
}

/* ---- compiling ---- */

/* Is `arch` a real architecture "sm_<digits>[a|f]" that NVRTC can make a CUBIN for? */
static int cuda_compiler_probe(struct tf_error *err)
{
    return tf_nvrtc_load(err) != NULL ? 0 : -1;
}

static int valid_arch(const char *arch)
{
    if (arch == NULL || strncmp(arch, "sm_", 3) != 0)
        return 0;
    const char *p = arch + 3;
    size_t digits = strspn(p, "0123456789");
    if (digits < 2 || digits > 3)
        return 0;
    p += digits;
    return p[0] == '\0' || ((p[0] == 'a' || p[0] == 'f') && p[1] == '\0');
}

static int write_file(const char *path, const void *data, size_t n, struct tf_error *err)
{
    FILE *f = fopen(path, "wbe");
    if (f == NULL)
        return tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    const int bad = fwrite(data, 1, n, f) != n;
    if (fclose(f) != 0 || bad) {
        unlink(path);
        return tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    }
    return 0;
}

static int cuda_compile(const struct tf_compile_input *in, struct tf_compile_output *out,
                        struct tf_error *err)
{
    const struct tf_nvrtc *nv;
    tf_nvrtc_program prog = NULL;
    const char **options = NULL;
    char arch_option[64];
    char *log = NULL, *cubin = NULL;
    size_t log_size = 0, cubin_size = 0;
    int rc = -1;

    out->ok = 0;
    out->log = NULL;
    /* Registers and spills are only known once the driver loads the CUBIN:
     * the runner asks function_info() then. */
    out->registers = -1;
    out->shared_bytes = out->spill_bytes = -1;

    if ((nv = tf_nvrtc_load(err)) == NULL)
        return -1;
    if (!valid_arch(in->arch)) {
        out->log = tf_xasprintf("error: '%s' is not an NVIDIA architecture of the form sm_90",
                                in->arch ? in->arch : "(none)");
        return 0;
    }
    const char *header = tf_portability_header("cuda");
    const char *header_name = "tunefarm.h";
    tf_nvrtc_result nrc = nv->nvrtcCreateProgram(
        &prog, in->source, in->source_name ? in->source_name : "kernel.cu", header ? 1 : 0,
        header ? &header : NULL, header ? &header_name : NULL);
    if (nrc != TF_NVRTC_SUCCESS) {
        prog = NULL;
        tf_error_set(err, TF_ERR_BACKEND, "nvrtcCreateProgram: %s", nv->nvrtcGetErrorString(nrc));
        goto fail;
    }

    int n = 0;
    options = tf_xcalloc((size_t)(in->ndefines + in->noptions + 4), sizeof *options);
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s", in->arch);
    options[n++] = arch_option;
    options[n++] = "-std=c++17";
    for (int i = 0; i < in->ndefines; i++)
        options[n++] = in->defines[i];
    for (int i = 0; i < in->noptions; i++)
        options[n++] = in->options[i];

    nrc = nv->nvrtcCompileProgram(prog, n, options);
    if (nv->nvrtcGetProgramLogSize(prog, &log_size) == TF_NVRTC_SUCCESS && log_size > 1) {
        log = tf_xmalloc(log_size + 1);
        if (nv->nvrtcGetProgramLog(prog, log) != TF_NVRTC_SUCCESS)
            log[0] = '\0';
        log[log_size] = '\0';
    }
    if (nrc == TF_NVRTC_ERROR_COMPILATION || nrc == TF_NVRTC_ERROR_INVALID_OPTION) {
        /* the variant (or the kernel's options) is wrong: a result, not a failure */
        if (log == NULL || log[0] == '\0') {
            free(log);
            log = tf_xasprintf("error: NVRTC: %s", nv->nvrtcGetErrorString(nrc));
        }
        out->log = log;
        log = NULL;
        rc = 0;
        goto fail;
    }
    if (nrc != TF_NVRTC_SUCCESS) {
        tf_error_set(err, TF_ERR_BACKEND, "nvrtcCompileProgram: %s", nv->nvrtcGetErrorString(nrc));
        goto fail;
    }
    nrc = nv->nvrtcGetCUBINSize(prog, &cubin_size);
    if (nrc != TF_NVRTC_SUCCESS || cubin_size == 0) {
        tf_error_set(err, TF_ERR_BACKEND, "NVRTC produced no CUBIN for %s: %s", in->arch,
                     nrc != TF_NVRTC_SUCCESS ? nv->nvrtcGetErrorString(nrc) : "empty");
        goto fail;
    }
    cubin = tf_xmalloc(cubin_size);
    if ((nrc = nv->nvrtcGetCUBIN(prog, cubin)) != TF_NVRTC_SUCCESS) {
        tf_error_set(err, TF_ERR_BACKEND, "nvrtcGetCUBIN: %s", nv->nvrtcGetErrorString(nrc));
        goto fail;
    }
    if (write_file(in->output_path, cubin, cubin_size, err) != 0)
        goto fail;
    out->ok = 1;
    out->log = log; /* warnings, if any */
    log = NULL;
    rc = 0;
fail:
    if (prog)
        nv->nvrtcDestroyProgram(&prog);
    free(options);
    free(log);
    free(cubin);
    return rc;
}

/* ---- running ---- */

/* ---- telemetry ---- */

/* How often the sampling thread reads NVML. Its counters move every few tens
 * of milliseconds anyway; a reading costs about 1 ms of this thread's time. */
#define TELEMETRY_PERIOD_NS 25000000L

/* One reading of every NVML value into `t` (NaN / -1 where one fails: a board
 * without an energy counter still reports its clock). */
static void telemetry_read(const struct tf_backend_ctx *ctx, struct tf_telemetry *t)
{
    const struct tf_nvml *nv = ctx->nvml;
    unsigned int u = 0;
    unsigned long long ull = 0;
    t->sm_clock_mhz = t->power_w = t->energy_mj = t->temperature_c = NAN;
    t->throttled = -1;
    if (nv->nvmlDeviceGetClockInfo(ctx->nvml_dev, TF_NVML_CLOCK_SM, &u) == TF_NVML_SUCCESS)
        t->sm_clock_mhz = u;
    if (nv->nvmlDeviceGetPowerUsage(ctx->nvml_dev, &u) == TF_NVML_SUCCESS)
        t->power_w = u * 1e-3;
    if (nv->nvmlDeviceGetTotalEnergyConsumption(ctx->nvml_dev, &ull) == TF_NVML_SUCCESS)
        t->energy_mj = (double)ull;
    if (nv->nvmlDeviceGetTemperature(ctx->nvml_dev, TF_NVML_TEMPERATURE_GPU, &u) ==
        TF_NVML_SUCCESS)
        t->temperature_c = u;
    if (nv->nvmlDeviceGetCurrentClocksEventReasons(ctx->nvml_dev, &ull) == TF_NVML_SUCCESS)
        t->throttled = (ull & ~(TF_NVML_CLOCKS_EVENT_REASON_GPU_IDLE |
                                TF_NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS)) != 0;
}

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
        telemetry_read(ctx, &t);
        pthread_mutex_lock(&ctx->lock);
        ctx->telemetry = t;
    }
    pthread_mutex_unlock(&ctx->lock);
    return NULL;
}

/* A first reading now, then the thread (without NVML: nothing). Without a
 * thread (pthread_create failed) the first reading just stays. */
static void telemetry_start(struct tf_backend_ctx *ctx)
{
    if (ctx->nvml == NULL)
        return;
    telemetry_read(ctx, &ctx->telemetry);
    ctx->sampler_running = pthread_create(&ctx->sampler, NULL, telemetry_thread, ctx) == 0;
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

static void cuda_close(struct tf_backend_ctx *ctx)
{
    if (ctx == NULL)
        return;
    const struct tf_cuda_driver *cu = ctx->cu;
    telemetry_stop(ctx);
    if (ctx->context) {
        /* On a broken context these fail; the process is about to exit anyway. */
        if (ctx->stream)
            cu->cuStreamSynchronize(ctx->stream);
        if (ctx->copy_stream) {
            cu->cuStreamSynchronize(ctx->copy_stream);
            cu->cuStreamDestroy(ctx->copy_stream);
        }
        if (ctx->copy_ready)
            cu->cuEventDestroy(ctx->copy_ready);
        if (ctx->copy_done)
            cu->cuEventDestroy(ctx->copy_done);
        if (ctx->flush_buf)
            cu->cuMemFree(ctx->flush_buf);
        if (ctx->start)
            cu->cuEventDestroy(ctx->start);
        if (ctx->end)
            cu->cuEventDestroy(ctx->end);
        for (int i = 0; i < ctx->batch_events; i++) {
            cu->cuEventDestroy(ctx->batch_start[i]);
            cu->cuEventDestroy(ctx->batch_end[i]);
        }
        if (ctx->stream)
            cu->cuStreamDestroy(ctx->stream);
        cu->cuCtxSetCurrent(NULL);
        cu->cuDevicePrimaryCtxRelease(ctx->dev);
    }
    pthread_cond_destroy(&ctx->wake);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

static int cuda_open(int ordinal, struct tf_backend_ctx **out, struct tf_error *err)
{
    struct tf_backend_ctx *ctx = tf_xcalloc(1, sizeof *ctx);
    tf_cu_result rc;
    int l2 = 0;

    pthread_mutex_init(&ctx->lock, NULL);
    pthread_cond_init(&ctx->wake, NULL);

    *out = NULL;
    ctx->healthy = 1;
    if ((ctx->cu = driver_ready(err)) == NULL)
        goto fail;
    const struct tf_cuda_driver *cu = ctx->cu;
    if ((rc = cu->cuDeviceGet(&ctx->dev, ordinal)) != TF_CUDA_SUCCESS) {
        cuda_fail(NULL, rc, err, "cuDeviceGet");
        goto fail;
    }
    static const int limit_attrs[] = {
        TF_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        TF_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, TF_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
        TF_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, TF_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
        TF_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, TF_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
        TF_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        TF_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        TF_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
    };
    int *const limit_dst[] = {
        &ctx->max_threads, &ctx->max_block[0], &ctx->max_block[1], &ctx->max_block[2],
        &ctx->max_grid[0], &ctx->max_grid[1], &ctx->max_grid[2], &ctx->max_shared,
        &ctx->max_shared_optin, &l2,
    };
    for (size_t i = 0; i < sizeof limit_attrs / sizeof limit_attrs[0]; i++)
        if (get_attr(cu, ctx->dev, limit_attrs[i], limit_dst[i], err) != 0)
            goto fail;
    if ((rc = cu->cuDevicePrimaryCtxRetain(&ctx->context, ctx->dev)) != TF_CUDA_SUCCESS) {
        ctx->context = NULL;
        cuda_fail(NULL, rc, err, "cuDevicePrimaryCtxRetain");
        goto fail;
    }
    if ((rc = cu->cuCtxSetCurrent(ctx->context)) != TF_CUDA_SUCCESS) {
        cuda_fail(NULL, rc, err, "cuCtxSetCurrent");
        goto fail;
    }
    if ((rc = cu->cuStreamCreate(&ctx->stream, TF_CU_STREAM_NON_BLOCKING)) != TF_CUDA_SUCCESS) {
        ctx->stream = NULL;
        cuda_fail(NULL, rc, err, "cuStreamCreate");
        goto fail;
    }
    if ((rc = cu->cuEventCreate(&ctx->start, TF_CU_EVENT_DEFAULT)) != TF_CUDA_SUCCESS) {
        ctx->start = NULL;
        cuda_fail(NULL, rc, err, "cuEventCreate");
        goto fail;
    }
    if ((rc = cu->cuEventCreate(&ctx->end, TF_CU_EVENT_DEFAULT)) != TF_CUDA_SUCCESS) {
        ctx->end = NULL;
        cuda_fail(NULL, rc, err, "cuEventCreate");
        goto fail;
    }
    if ((rc = cu->cuStreamCreate(&ctx->copy_stream, TF_CU_STREAM_NON_BLOCKING)) !=
        TF_CUDA_SUCCESS) {
        ctx->copy_stream = NULL;
        cuda_fail(NULL, rc, err, "cuStreamCreate");
        goto fail;
    }
    if ((rc = cu->cuEventCreate(&ctx->copy_ready, TF_CU_EVENT_DISABLE_TIMING)) !=
        TF_CUDA_SUCCESS) {
        ctx->copy_ready = NULL;
        cuda_fail(NULL, rc, err, "cuEventCreate");
        goto fail;
    }
    if ((rc = cu->cuEventCreate(&ctx->copy_done, TF_CU_EVENT_DISABLE_TIMING)) !=
        TF_CUDA_SUCCESS) {
        ctx->copy_done = NULL;
        cuda_fail(NULL, rc, err, "cuEventCreate");
        goto fail;
    }
    ctx->flush_words = (l2 > 0 ? (size_t)l2 : (size_t)64 << 20) / 4;
    if ((rc = cu->cuMemAlloc(&ctx->flush_buf, ctx->flush_words * 4)) != TF_CUDA_SUCCESS) {
        ctx->flush_buf = 0;
        cuda_fail(NULL, rc, err, "cuMemAlloc (L2 flush buffer)");
        goto fail;
    }

    /* NVML is optional: without it results carry no telemetry. */
    ctx->nvml = tf_nvml_load(NULL);
    if (ctx->nvml) {
        tf_cu_uuid uuid;
        char text[64];
        if (cu->cuDeviceGetUuid(&uuid, ctx->dev) == TF_CUDA_SUCCESS) {
            format_uuid(&uuid, text, sizeof text);
            if (ctx->nvml->nvmlDeviceGetHandleByUUID(text, &ctx->nvml_dev) != TF_NVML_SUCCESS)
                ctx->nvml_dev = NULL;
        }
        if (ctx->nvml_dev == NULL)
            ctx->nvml = NULL;
    }
    telemetry_start(ctx);
    *out = ctx;
    return 0;
fail:
    cuda_close(ctx);
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

static int cuda_load(struct tf_backend_ctx *ctx, const char *binary_path, const char *entry,
                     void **function, struct tf_error *err)
{
    const struct tf_cuda_driver *cu = ctx->cu;
    struct cuda_function *f = tf_xcalloc(1, sizeof *f);
    char *image = NULL;
    tf_cu_result rc;

    if (!ctx->healthy) {
        tf_error_set(err, TF_ERR_BACKEND, "the CUDA context is unusable after an earlier fault");
        goto fail;
    }
    if (read_file(binary_path, &image, err) != 0)
        goto fail;
    if ((rc = cu->cuModuleLoadData(&f->module, image)) != TF_CUDA_SUCCESS) {
        f->module = NULL;
        cuda_fail(ctx, rc, err, "cuModuleLoadData");
        goto fail;
    }
    if ((rc = cu->cuModuleGetFunction(&f->fn, f->module, entry)) != TF_CUDA_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "entry point '%.100s' (declare it extern \"C\" __global__)",
                 entry);
        cuda_fail(ctx, rc, err, what);
        goto fail;
    }
    if ((rc = cu->cuFuncGetAttribute(&f->static_shared, TF_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                     f->fn)) != TF_CUDA_SUCCESS) {
        cuda_fail(ctx, rc, err, "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
        goto fail;
    }
    free(image);
    *function = f;
    return 0;
fail:
    if (f->module)
        cu->cuModuleUnload(f->module);
    free(f);
    free(image);
    *function = NULL;
    return -1;
}

static void cuda_unload(struct tf_backend_ctx *ctx, void *function)
{
    struct cuda_function *f = function;
    if (f == NULL)
        return;
    if (f->module)
        ctx->cu->cuModuleUnload(f->module);
    free(f);
}

static int cuda_alloc(struct tf_backend_ctx *ctx, size_t bytes, void **ptr, struct tf_error *err)
{
    tf_cu_deviceptr p = 0;
    /* cuMemAlloc refuses 0 bytes; an empty buffer still needs a valid address */
    tf_cu_result rc = ctx->cu->cuMemAlloc(&p, bytes ? bytes : 256);
    if (rc != TF_CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cuMemAlloc(%zu bytes)", bytes);
        return cuda_fail(ctx, rc, err, what);
    }
    /* The runner passes &ptr as the kernel parameter: the void * holds the
     * CUdeviceptr's 64 bits, exactly what the kernel's pointer argument expects. */
    *ptr = (void *)(uintptr_t)p;
    return 0;
}

static void cuda_release(struct tf_backend_ctx *ctx, void *ptr)
{
    if (ptr)
        ctx->cu->cuMemFree((tf_cu_deviceptr)(uintptr_t)ptr);
}

/* Copies go through our stream and wait for it. The synchronous cuMemcpy*
 * run on the legacy stream, which does not order with a non-blocking one,
 * and from pageable memory cuMemcpyHtoD may return before its DMA lands: a
 * kernel queued right after could read the previous variant's data. */
static int cuda_upload(struct tf_backend_ctx *ctx, void *dst, const void *host, size_t bytes,
                       struct tf_error *err)
{
    tf_cu_result rc =
        ctx->cu->cuMemcpyHtoDAsync((tf_cu_deviceptr)(uintptr_t)dst, host, bytes, ctx->stream);
    if (rc == TF_CUDA_SUCCESS)
        rc = ctx->cu->cuStreamSynchronize(ctx->stream);
    return rc == TF_CUDA_SUCCESS ? 0 : cuda_fail(ctx, rc, err, "cuMemcpyHtoDAsync");
}

static int cuda_download(struct tf_backend_ctx *ctx, void *host, const void *src, size_t bytes,
                         struct tf_error *err)
{
    tf_cu_result rc =
        ctx->cu->cuMemcpyDtoHAsync(host, (tf_cu_deviceptr)(uintptr_t)src, bytes, ctx->stream);
    if (rc == TF_CUDA_SUCCESS)
        rc = ctx->cu->cuStreamSynchronize(ctx->stream);
    return rc == TF_CUDA_SUCCESS ? 0 : cuda_fail(ctx, rc, err, "cuMemcpyDtoHAsync");
}

/* TF_STATUS_INVALID + err if `g` exceeds a limit of the device for `f`, else OK. */
static int check_geometry(const struct tf_backend_ctx *ctx, const struct cuda_function *f,
                          const struct tf_launch *g, struct tf_error *err)
{
    static const char axis[] = "xyz";
    const uint64_t threads = (uint64_t)g->block[0] * g->block[1] * g->block[2];
    if (threads > (uint64_t)ctx->max_threads) {
        tf_error_set(err, TF_ERR_BACKEND,
                     "block of %llu threads exceeds the device's %d threads per block",
                     (unsigned long long)threads, ctx->max_threads);
        return TF_STATUS_INVALID;
    }
    for (int d = 0; d < 3; d++) {
        if (g->block[d] > (uint32_t)ctx->max_block[d]) {
            tf_error_set(err, TF_ERR_BACKEND, "block.%c = %u exceeds the device's %d", axis[d],
                         g->block[d], ctx->max_block[d]);
            return TF_STATUS_INVALID;
        }
        if (g->grid[d] > (uint32_t)ctx->max_grid[d]) {
            tf_error_set(err, TF_ERR_BACKEND, "grid.%c = %u exceeds the device's %d", axis[d],
                         g->grid[d], ctx->max_grid[d]);
            return TF_STATUS_INVALID;
        }
    }
    if (g->shared_bytes + (uint64_t)f->static_shared > (uint64_t)ctx->max_shared_optin) {
        tf_error_set(err, TF_ERR_BACKEND,
                     "%llu bytes of dynamic + %d of static shared memory exceed the device's "
                     "%d per block",
                     (unsigned long long)g->shared_bytes, f->static_shared,
                     ctx->max_shared_optin);
        return TF_STATUS_INVALID;
    }
    return TF_STATUS_OK;
}

/* Geometry within the device's limits, and the opt-in above the default 48 KiB
 * of dynamic shared memory. Returns a status. */
static int launch_prepare(struct tf_backend_ctx *ctx, struct cuda_function *f,
                          const struct tf_launch *g, struct tf_error *err)
{
    int status = check_geometry(ctx, f, g, err);
    if (status != TF_STATUS_OK)
        return status;
    const int dynamic = (int)g->shared_bytes;
    if (dynamic + f->static_shared > ctx->max_shared && dynamic > f->dynamic_limit) {
        tf_cu_result rc = ctx->cu->cuFuncSetAttribute(
            f->fn, TF_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic);
        if (rc != TF_CUDA_SUCCESS) {
            cuda_fail(ctx, rc, err, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
            return is_sticky(rc) ? TF_STATUS_RUNTIME_ERROR : TF_STATUS_INVALID;
        }
        f->dynamic_limit = dynamic;
    }
    return TF_STATUS_OK;
}

/* The status of a failed cuLaunchKernel. */
static int launch_failed(struct tf_backend_ctx *ctx, tf_cu_result rc, struct tf_error *err)
{
    cuda_fail(ctx, rc, err, "cuLaunchKernel");
    if (is_sticky(rc))
        return TF_STATUS_RUNTIME_ERROR; /* an earlier fault surfaced */
    return is_configuration_error(rc) ? TF_STATUS_INVALID : TF_STATUS_LAUNCH_ERROR;
}

static int cuda_launch(struct tf_backend_ctx *ctx, void *function, const struct tf_launch *g,
                       void **args, double *seconds, struct tf_error *err)
{
    const struct tf_cuda_driver *cu = ctx->cu;
    struct cuda_function *f = function;
    tf_cu_result rc;

    if (!ctx->healthy) {
        tf_error_set(err, TF_ERR_BACKEND, "the CUDA context is unusable after an earlier fault");
        return TF_STATUS_RUNTIME_ERROR;
    }
    int status = launch_prepare(ctx, f, g, err);
    if (status != TF_STATUS_OK)
        return status;
    if (seconds && (rc = cu->cuEventRecord(ctx->start, ctx->stream)) != TF_CUDA_SUCCESS) {
        cuda_fail(ctx, rc, err, "cuEventRecord");
        return TF_STATUS_RUNTIME_ERROR;
    }
    rc = cu->cuLaunchKernel(f->fn, g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1],
                            g->block[2], (unsigned int)g->shared_bytes, ctx->stream, args, NULL);
    if (rc != TF_CUDA_SUCCESS)
        return launch_failed(ctx, rc, err);
    if (seconds) {
        float ms = 0;
        if ((rc = cu->cuEventRecord(ctx->end, ctx->stream)) != TF_CUDA_SUCCESS ||
            (rc = cu->cuEventSynchronize(ctx->end)) != TF_CUDA_SUCCESS ||
            (rc = cu->cuEventElapsedTime(&ms, ctx->start, ctx->end)) != TF_CUDA_SUCCESS) {
            /* whatever failed after the kernel was queued, it failed while running */
            cuda_fail(ctx, rc, err, "kernel");
            ctx->healthy = 0;
            return TF_STATUS_RUNTIME_ERROR;
        }
        *seconds = (double)ms * 1e-3;
    } else if ((rc = cu->cuStreamSynchronize(ctx->stream)) != TF_CUDA_SUCCESS) {
        cuda_fail(ctx, rc, err, "kernel");
        ctx->healthy = 0;
        return TF_STATUS_RUNTIME_ERROR;
    }
    return TF_STATUS_OK;
}

/* A failure while queueing: drain what was queued, report, runtime_error. */
static int batch_failed(struct tf_backend_ctx *ctx, tf_cu_result rc, struct tf_error *err,
                        const char *what)
{
    ctx->batch_queued = 0;
    ctx->cu->cuStreamSynchronize(ctx->stream);
    cuda_fail(ctx, rc, err, what);
    return TF_STATUS_RUNTIME_ERROR;
}

static int cuda_enqueue(struct tf_backend_ctx *ctx, void *function, const struct tf_launch *g,
                        void **args, int count, int flush, struct tf_error *err)
{
    const struct tf_cuda_driver *cu = ctx->cu;
    struct cuda_function *f = function;
    tf_cu_result rc;
    if (!ctx->healthy) {
        tf_error_set(err, TF_ERR_BACKEND, "the CUDA context is unusable after an earlier fault");
        return TF_STATUS_RUNTIME_ERROR;
    }
    if (count < 1 || count > TF_MAX_BATCH || ctx->batch_queued)
        tf_die("cuda_enqueue: %d launches with %d queued", count, ctx->batch_queued);
    int status = launch_prepare(ctx, f, g, err);
    if (status != TF_STATUS_OK)
        return status;
    for (; ctx->batch_events < count; ctx->batch_events++) {
        int i = ctx->batch_events;
        if ((rc = cu->cuEventCreate(&ctx->batch_start[i], 0)) != TF_CUDA_SUCCESS)
            return batch_failed(ctx, rc, err, "cuEventCreate");
        if ((rc = cu->cuEventCreate(&ctx->batch_end[i], 0)) != TF_CUDA_SUCCESS) {
            cu->cuEventDestroy(ctx->batch_start[i]);
            return batch_failed(ctx, rc, err, "cuEventCreate");
        }
    }
    for (int i = 0; i < count; i++) {
        /* The flush runs between the samples, outside their events. */
        if (flush && (rc = cu->cuMemsetD32Async(ctx->flush_buf, ++ctx->flush_value,
                                                ctx->flush_words, ctx->stream)) != TF_CUDA_SUCCESS)
            return batch_failed(ctx, rc, err, "cuMemsetD32Async (L2 flush)");
        if ((rc = cu->cuEventRecord(ctx->batch_start[i], ctx->stream)) != TF_CUDA_SUCCESS)
            return batch_failed(ctx, rc, err, "cuEventRecord");
        rc = cu->cuLaunchKernel(f->fn, g->grid[0], g->grid[1], g->grid[2], g->block[0],
                                g->block[1], g->block[2], (unsigned int)g->shared_bytes,
                                ctx->stream, args, NULL);
        if (rc != TF_CUDA_SUCCESS) {
            ctx->batch_queued = 0;
            cu->cuStreamSynchronize(ctx->stream);
            return launch_failed(ctx, rc, err);
        }
        if ((rc = cu->cuEventRecord(ctx->batch_end[i], ctx->stream)) != TF_CUDA_SUCCESS)
            return batch_failed(ctx, rc, err, "cuEventRecord");
        ctx->batch_queued = i + 1;
    }
    return TF_STATUS_OK;
}

static int cuda_collect(struct tf_backend_ctx *ctx, double *seconds, struct tf_error *err)
{
    const struct tf_cuda_driver *cu = ctx->cu;
    const int n = ctx->batch_queued;
    tf_cu_result rc;
    ctx->batch_queued = 0;
    if (n > 0 && (rc = cu->cuEventSynchronize(ctx->batch_end[n - 1])) != TF_CUDA_SUCCESS) {
        cuda_fail(ctx, rc, err, "kernel");
        ctx->healthy = 0;
        return TF_STATUS_RUNTIME_ERROR;
    }
    for (int i = 0; i < n; i++) {
        float ms = 0;
        if ((rc = cu->cuEventElapsedTime(&ms, ctx->batch_start[i], ctx->batch_end[i])) !=
            TF_CUDA_SUCCESS) {
            cuda_fail(ctx, rc, err, "cuEventElapsedTime");
            return TF_STATUS_RUNTIME_ERROR;
        }
        seconds[i] = (double)ms * 1e-3;
    }
    return TF_STATUS_OK;
}

static int cuda_copy(struct tf_backend_ctx *ctx, void *dst, const void *src, size_t bytes,
                     struct tf_error *err)
{
    tf_cu_result rc = ctx->cu->cuMemcpyDtoDAsync((tf_cu_deviceptr)(uintptr_t)dst,
                                                 (tf_cu_deviceptr)(uintptr_t)src, bytes,
                                                 ctx->stream);
    return rc == TF_CUDA_SUCCESS ? 0 : cuda_fail(ctx, rc, err, "cuMemcpyDtoDAsync");
}

/* Page-locked host memory: a download into pageable memory is a staged,
 * synchronous copy whatever the API's name says. */
static int cuda_host_alloc(struct tf_backend_ctx *ctx, size_t bytes, void **ptr,
                           struct tf_error *err)
{
    tf_cu_result rc = ctx->cu->cuMemHostAlloc(ptr, bytes ? bytes : 1, 0);
    if (rc != TF_CUDA_SUCCESS) {
        *ptr = NULL;
        char what[96];
        snprintf(what, sizeof what, "cuMemHostAlloc(%zu bytes)", bytes);
        return cuda_fail(ctx, rc, err, what);
    }
    return 0;
}

static void cuda_host_free(struct tf_backend_ctx *ctx, void *ptr)
{
    if (ptr)
        ctx->cu->cuMemFreeHost(ptr);
}

/* The copy stream waits for what the main stream has queued so far (an event
 * recorded there), then copies while the main stream goes on with the samples. */
static int cuda_download_async(struct tf_backend_ctx *ctx, void *host, const void *src,
                               size_t bytes, struct tf_error *err)
{
    const struct tf_cuda_driver *cu = ctx->cu;
    tf_cu_result rc;
    if ((rc = cu->cuEventRecord(ctx->copy_ready, ctx->stream)) != TF_CUDA_SUCCESS)
        return cuda_fail(ctx, rc, err, "cuEventRecord");
    if ((rc = cu->cuStreamWaitEvent(ctx->copy_stream, ctx->copy_ready, 0)) != TF_CUDA_SUCCESS)
        return cuda_fail(ctx, rc, err, "cuStreamWaitEvent");
    if ((rc = cu->cuMemcpyDtoHAsync(host, (tf_cu_deviceptr)(uintptr_t)src, bytes,
                                    ctx->copy_stream)) != TF_CUDA_SUCCESS)
        return cuda_fail(ctx, rc, err, "cuMemcpyDtoHAsync");
    if ((rc = cu->cuEventRecord(ctx->copy_done, ctx->copy_stream)) != TF_CUDA_SUCCESS)
        return cuda_fail(ctx, rc, err, "cuEventRecord");
    ctx->copies_queued = 1;
    return 0;
}

static int cuda_download_wait(struct tf_backend_ctx *ctx, struct tf_error *err)
{
    if (!ctx->copies_queued)
        return 0;
    ctx->copies_queued = 0;
    tf_cu_result rc = ctx->cu->cuEventSynchronize(ctx->copy_done);
    if (rc != TF_CUDA_SUCCESS) {
        cuda_fail(ctx, rc, err, "cuMemcpyDtoHAsync");
        ctx->healthy = 0; /* the copy waited on the kernel: its fault surfaced here */
        return -1;
    }
    return 0;
}

static int cuda_flush_cache(struct tf_backend_ctx *ctx, struct tf_error *err)
{
    /* A new value each time, so no layer can skip a write as redundant. */
    tf_cu_result rc = ctx->cu->cuMemsetD32Async(ctx->flush_buf, ++ctx->flush_value,
                                                ctx->flush_words, ctx->stream);
    return rc == TF_CUDA_SUCCESS ? 0 : cuda_fail(ctx, rc, err, "cuMemsetD32Async (L2 flush)");
}

static int cuda_function_info(struct tf_backend_ctx *ctx, void *function, int32_t *registers,
                              int64_t *shared_bytes, int64_t *local_bytes, struct tf_error *err)
{
    const struct tf_cuda_driver *cu = ctx->cu;
    struct cuda_function *f = function;
    int regs = -1, shared = -1, local = -1;
    tf_cu_result rc;
    *registers = -1;
    *shared_bytes = *local_bytes = -1;
    if ((rc = cu->cuFuncGetAttribute(&regs, TF_CU_FUNC_ATTRIBUTE_NUM_REGS, f->fn)) !=
            TF_CUDA_SUCCESS ||
        (rc = cu->cuFuncGetAttribute(&shared, TF_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f->fn)) !=
            TF_CUDA_SUCCESS ||
        (rc = cu->cuFuncGetAttribute(&local, TF_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f->fn)) !=
            TF_CUDA_SUCCESS)
        return cuda_fail(ctx, rc, err, "cuFuncGetAttribute");
    *registers = regs;
    *shared_bytes = shared;
    *local_bytes = local;
    return 0;
}

static int cuda_telemetry(struct tf_backend_ctx *ctx, struct tf_telemetry *t, struct tf_error *err)
{
    if (ctx->nvml == NULL) {
        t->sm_clock_mhz = t->power_w = t->energy_mj = t->temperature_c = NAN;
        t->throttled = -1;
        return tf_error_set(err, TF_ERR_BACKEND, "no NVML: telemetry unavailable");
    }
    pthread_mutex_lock(&ctx->lock);
    *t = ctx->telemetry;
    pthread_mutex_unlock(&ctx->lock);
    return 0;
}

static int cuda_healthy(struct tf_backend_ctx *ctx)
{
    return ctx != NULL && ctx->healthy;
}

const struct tf_backend tf_backend_cuda = {
    .version = TF_BACKEND_VERSION,
    .name = "cuda",
    .language = "cuda",
    .probe = cuda_probe,
    .device_count = cuda_device_count,
    .describe = cuda_describe,
    .compiler_id = cuda_compiler_id,
    .compile = cuda_compile,
    .compiler_probe = cuda_compiler_probe,
    .open = cuda_open,
    .close = cuda_close,
    .load = cuda_load,
    .unload = cuda_unload,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .upload = cuda_upload,
    .download = cuda_download,
    .launch = cuda_launch,
    .flush_cache = cuda_flush_cache,
    .function_info = cuda_function_info,
    .telemetry = cuda_telemetry,
    .healthy = cuda_healthy,
    .enqueue = cuda_enqueue,
    .collect = cuda_collect,
    .copy = cuda_copy,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .download_async = cuda_download_async,
    .download_wait = cuda_download_wait,
};
