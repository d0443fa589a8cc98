/* backend_cuda.c - NVIDIA GPUs through the driver API, NVRTC and NVML.
 *
 * Nothing here links against CUDA: cuda_api.c dlopens libcuda.so.1, libnvrtc
 * and libnvidia-ml.so.1 on first use, so a node without them still runs the
 * binary and probe() says why this backend is unusable. Compiling needs no
 * device: NVRTC turns the variant's source (with the portability header handed
 * over in memory as "tunefarm.h") into a CUBIN for the exact sm_XX of the
 * target, written to the caller's path. Running is gpu_backend.c's, the same
 * code as for AMD: this file gives it the driver calls (the vendor table at
 * the end). open() retains the device's primary context and makes it
 * current; a variant asking for more dynamic shared memory than the default
 * 48 KiB gets CUDA's opt-in; faults that poison the context (illegal address,
 * misaligned access, trap...) are the sticky ones. Telemetry comes from NVML
 * when it is present (clock, power, cumulative energy, temperature,
 * throttling), matched to the device by UUID. The runner's context and
 * events wait for the GPU asleep (blocking sync), and compare_image builds
 * gpu_backend.c's comparison kernels with NVRTC for the opened device. */
#include "backend.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../schema/status.h"
#include "cache.h"
#include "cuda_api.h"
#include "gpu_backend.h"
#include "portability.h"
#include "provenance.h"

/* ---- errors ---- */

/* Faults after which the context can run nothing more (CUDA's "sticky" errors). */
static int is_sticky(int rc)
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
static int is_configuration_error(int rc)
{
    return rc == TF_CUDA_ERROR_INVALID_VALUE || rc == TF_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ||
           rc == TF_CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE ||
           rc == TF_CUDA_ERROR_INVALID_CLUSTER_SIZE;
}

/* Fill err with "what: CUDA_ERROR_X (text)"; returns -1. */
static int cuda_fail(tf_cu_result rc, struct tf_error *err, const char *what)
{
    char text[256];
    tf_cuda_error_text(rc, text, sizeof text);
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
        cuda_fail(rc, err, "cuInit failed");
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
        return cuda_fail(rc, err, "cuDeviceGetCount failed");
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

/* One device attribute, for a tf_device or the limits of an opened device. */
static int get_attr(const struct tf_cuda_driver *cu, tf_cu_device dev, int attr, int *out,
                    struct tf_error *err)
{
    tf_cu_result rc = cu->cuDeviceGetAttribute(out, attr, dev);
    if (rc != TF_CUDA_SUCCESS) {
        char what[64];
        snprintf(what, sizeof what, "cuDeviceGetAttribute(%d)", attr);
        return cuda_fail(rc, err, what);
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
        return cuda_fail(rc, err, what);
    }
    tf_strlcpy(out->backend, "cuda", sizeof out->backend);
    tf_strlcpy(out->vendor, "NVIDIA", sizeof out->vendor);
    if ((rc = cu->cuDeviceGetName(out->name, (int)sizeof out->name, dev)) != TF_CUDA_SUCCESS)
        return cuda_fail(rc, err, "cuDeviceGetName");
    if (get_attr(cu, dev, TF_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major, err) ||
        get_attr(cu, dev, TF_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor, err))
        return -1;
    snprintf(out->arch, sizeof out->arch, "sm_%d%d", major, minor);

    tf_cu_uuid uuid;
    if ((rc = cu->cuDeviceGetUuid(&uuid, dev)) != TF_CUDA_SUCCESS)
        return cuda_fail(rc, err, "cuDeviceGetUuid");
    format_uuid(&uuid, out->uuid, sizeof out->uuid);
    if ((rc = cu->cuDeviceGetPCIBusId(out->pci_bus, (int)sizeof out->pci_bus, dev)) !=
        TF_CUDA_SUCCESS)
        return cuda_fail(rc, err, "cuDeviceGetPCIBusId");
    gethostname(out->host, sizeof out->host - 1);
    size_t total = 0;
    if ((rc = cu->cuDeviceTotalMem(&total, dev)) != TF_CUDA_SUCCESS)
        return cuda_fail(rc, err, "cuDeviceTotalMem");
    out->memory_bytes = total;

    /* driver_version: the driver release (NVML, "580.159.04"; the kernel module's
     * /proc file where NVML is missing), which is what changes under an
     * operator's feet; runtime_version: the CUDA version that driver implements
     * ("CUDA 13.0"; tunefarm has no CUDA runtime, the driver API is its runtime). */
    if ((rc = cu->cuDriverGetVersion(&version)) != TF_CUDA_SUCCESS)
        return cuda_fail(rc, err, "cuDriverGetVersion");
    snprintf(out->runtime_version, sizeof out->runtime_version, "CUDA %d.%d", version / 1000,
             version % 1000 / 10);
    const struct tf_nvml *nvml = tf_nvml_load(NULL);
    if (nvml == NULL || nvml->nvmlSystemGetDriverVersion(out->driver_version,
                                                         (unsigned)sizeof out->driver_version) !=
                            TF_NVML_SUCCESS)
        tf_provenance_nvidia_version("/proc", out->driver_version, sizeof out->driver_version);
    nvrtc_version(out->compiler_version, sizeof out->compiler_version);
    /* The settings an admin changes: application clocks (nvidia-smi -ac) and the
     * enforced power limit (nvidia-smi -pl); 0 where the board does not say. */
    tf_nvml_device handle = NULL;
    unsigned int u = 0;
    if (nvml && nvml->nvmlDeviceGetHandleByUUID(out->uuid, &handle) == TF_NVML_SUCCESS &&
        handle != NULL) {
        if (nvml->nvmlDeviceGetApplicationsClock(handle, TF_NVML_CLOCK_SM, &u) == TF_NVML_SUCCESS)
            out->clock_mhz = u;
        if (nvml->nvmlDeviceGetApplicationsClock(handle, TF_NVML_CLOCK_MEM, &u) ==
            TF_NVML_SUCCESS)
            out->memory_clock_mhz = u;
        if (nvml->nvmlDeviceGetEnforcedPowerLimit(handle, &u) == TF_NVML_SUCCESS)
            out->power_limit_w = u * 1e-3;
    }

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
        {TF_DEVPROP_MAX_SHARED_PER_SM, TF_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
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

/* The options of every variant's compile after the architecture (ptxas
 * reports each entry's registers, shared memory and spills into the log, no
 * device needed; the binary is the same). In the identity too, so that a
 * tunefarm that compiles differently misses an older one's binaries in a
 * shared cache instead of reusing them; so is the -minimal first try. */
static const char *const cuda_fixed_options[] = {"-std=c++17", "--ptxas-options=-v"};
#define CUDA_NFIXED (sizeof cuda_fixed_options / sizeof cuda_fixed_options[0])

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
    size_t at = (size_t)snprintf(ident, sizeof ident, "%s | %s | options", nv->path, version);
    for (size_t i = 0; i < CUDA_NFIXED && at < sizeof ident; i++)
        at += (size_t)snprintf(ident + at, sizeof ident - at, " %s", cuda_fixed_options[i]);
    if (at < sizeof ident)
        snprintf(ident + at, sizeof ident - at, " (-minimal first)");
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

/* What ptxas said of `entry` (--ptxas-options=-v, in the program log):
 * "Compiling entry function 'ENTRY' for 'sm_90'", then "N bytes stack frame,
 * N bytes spill stores, N bytes spill loads" and "Used N registers, ...
 * N bytes smem" before the next entry. Fields it did not find stay -1. */
static void ptxas_info(const char *log, const char *entry, struct tf_compile_output *out)
{
    char head[320];
    snprintf(head, sizeof head, "Compiling entry function '%s'", entry);
    const char *at = log ? strstr(log, head) : NULL;
    if (at == NULL)
        return;
    at += strlen(head);
    const char *end = strstr(at, "Compiling entry function '");
    for (const char *line = at; *line && (end == NULL || line < end);) {
        const size_t n = strcspn(line, "\n");
        char text[512];
        snprintf(text, sizeof text, "%.*s", (int)(n < sizeof text - 1 ? n : sizeof text - 1),
                 line);
        const char *p;
        long long v;
        if ((p = strstr(text, "Used ")) && sscanf(p, "Used %lld registers", &v) == 1)
            out->registers = (int32_t)v;
        if ((p = strstr(text, " bytes smem")) != NULL) {
            while (p > text && p[-1] >= '0' && p[-1] <= '9')
                p--;
            if (sscanf(p, "%lld bytes smem", &v) == 1)
                out->shared_bytes = v;
        }
        if ((p = strstr(text, "bytes spill stores")) != NULL) {
            const char *q = strstr(text, "stack frame, ");
            if (q && sscanf(q, "stack frame, %lld bytes spill stores", &v) == 1)
                out->spill_bytes = v;
        }
        line += n;
        if (*line == '\n')
            line++;
    }
}

/* ---- NVRTC's -minimal ----
 *
 * NVRTC 12.4+ takes -minimal: the program then sees no texture or surface
 * functions, no device runtime (cudaMalloc and kin), no launches from device
 * code and no runtime API types (cudaError_t...). Kernels rarely use any of
 * them, and leaving their declarations out saves the front end a part of every
 * compile (bench/results/compile-cpu-2026-11-27-h200.md); the CUBIN is the same
 * byte for byte. A kernel that does use them fails under -minimal, so a
 * compile error there is never the answer: the variant is compiled again
 * without it, and that compile's result and log are the variant's. A source
 * that compiled only without it is remembered (a hash of its text, per
 * process) and never tried with -minimal again, so such a kernel pays one
 * extra compile per compiler process, and a variant with a real error two.
 * The other way round, a source that declares a name the full language
 * also declares (its own cudaStream_t, say) compiles under -minimal only:
 * NVRTC older than 12.4 rejects it, as it did before. */

#define MINIMAL_FULL_MAX 64

static pthread_mutex_t minimal_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t minimal_full[MINIMAL_FULL_MAX]; /* sources that need the full language */
static int minimal_full_count, minimal_full_next;

/* FNV-1a of a source text. */
static uint64_t source_hash(const char *text)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

/* Does NVRTC know -minimal (12.4 and later)? */
static int nvrtc_has_minimal(const struct tf_nvrtc *nv)
{
    int major = 0, minor = 0;
    if (nv->nvrtcVersion(&major, &minor) != TF_NVRTC_SUCCESS)
        return 0;
    return major > 12 || (major == 12 && minor >= 4);
}

/* Is -minimal worth trying on this source: NVRTC has it and the source has
 * not needed the full language in this process? */
static int minimal_worth_trying(const struct tf_nvrtc *nv, uint64_t hash)
{
    if (!nvrtc_has_minimal(nv))
        return 0;
    int found = 0;
    pthread_mutex_lock(&minimal_mu);
    for (int i = 0; i < minimal_full_count && !found; i++)
        found = minimal_full[i] == hash;
    pthread_mutex_unlock(&minimal_mu);
    return !found;
}

static void minimal_remember_full(uint64_t hash)
{
    pthread_mutex_lock(&minimal_mu);
    minimal_full[minimal_full_next] = hash;
    minimal_full_next = (minimal_full_next + 1) % MINIMAL_FULL_MAX;
    if (minimal_full_count < MINIMAL_FULL_MAX)
        minimal_full_count++;
    pthread_mutex_unlock(&minimal_mu);
}

/* One NVRTC compile of `in` with `options`: its result code, its log (NULL
 * when empty, the caller's to free) and, on success, the program (the
 * caller's to destroy). A failure of NVRTC itself fills `err`. */
static tf_nvrtc_result nvrtc_compile_once(const struct tf_nvrtc *nv,
                                          const struct tf_compile_input *in, int noptions,
                                          const char **options, tf_nvrtc_program *prog_out,
                                          char **log_out, struct tf_error *err)
{
    tf_nvrtc_program prog = NULL;
    size_t log_size = 0;
    const char *header = tf_portability_header("cuda");
    const char *header_name = "tunefarm.h";

    *prog_out = NULL;
    *log_out = NULL;
    tf_nvrtc_result nrc = nv->nvrtcCreateProgram(
        &prog, in->source, in->source_name ? in->source_name : "kernel.cu", header ? 1 : 0,
        header ? &header : NULL, header ? &header_name : NULL);
    if (nrc != TF_NVRTC_SUCCESS) {
        tf_error_set(err, TF_ERR_BACKEND, "nvrtcCreateProgram: %s", nv->nvrtcGetErrorString(nrc));
        return nrc;
    }
    nrc = nv->nvrtcCompileProgram(prog, noptions, options);
    if (nv->nvrtcGetProgramLogSize(prog, &log_size) == TF_NVRTC_SUCCESS && log_size > 1) {
        char *log = tf_xmalloc(log_size + 1);
        if (nv->nvrtcGetProgramLog(prog, log) != TF_NVRTC_SUCCESS)
            log[0] = '\0';
        log[log_size] = '\0';
        *log_out = log;
    }
    if (nrc == TF_NVRTC_SUCCESS)
        *prog_out = prog;
    else
        nv->nvrtcDestroyProgram(&prog);
    if (nrc != TF_NVRTC_SUCCESS && nrc != TF_NVRTC_ERROR_COMPILATION &&
        nrc != TF_NVRTC_ERROR_INVALID_OPTION)
        tf_error_set(err, TF_ERR_BACKEND, "nvrtcCompileProgram: %s", nv->nvrtcGetErrorString(nrc));
    return nrc;
}

/* The CUBIN of a compiled program, malloc'd into *cubin (*size bytes): 0, or
 * -1 + err naming `what` (nothing to free). */
static int program_cubin(const struct tf_nvrtc *nv, tf_nvrtc_program prog, const char *what,
                         char **cubin, size_t *size, struct tf_error *err)
{
    tf_nvrtc_result nrc = nv->nvrtcGetCUBINSize(prog, size);
    *cubin = NULL;
    if (nrc == TF_NVRTC_SUCCESS && *size > 0 &&
        (nrc = nv->nvrtcGetCUBIN(prog, *cubin = tf_xmalloc(*size))) == TF_NVRTC_SUCCESS)
        return 0;
    free(*cubin);
    *cubin = NULL;
    return tf_error_set(err, TF_ERR_BACKEND, "NVRTC produced no CUBIN for %s: %s", what,
                        nrc != TF_NVRTC_SUCCESS ? nv->nvrtcGetErrorString(nrc) : "empty");
}

static int cuda_compile(const struct tf_compile_input *in, struct tf_compile_output *out,
                        struct tf_error *err)
{
    const struct tf_nvrtc *nv;
    tf_nvrtc_program prog = NULL;
    const char **options = NULL;
    char arch_option[64];
    char *log = NULL, *cubin = NULL;
    size_t cubin_size = 0;
    int rc = -1;

    out->ok = 0;
    out->log = NULL;
    /* Registers, static shared memory and spills: what ptxas says (-v), or
     * -1; the runner asks function_info() again once the driver loads it. */
    out->registers = -1;
    out->shared_bytes = out->spill_bytes = -1;

    if ((nv = tf_nvrtc_load(err)) == NULL)
        return -1;
    if (!valid_arch(in->arch)) {
        out->log = tf_xasprintf("error: '%s' is not an NVIDIA architecture of the form sm_90",
                                in->arch ? in->arch : "(none)");
        return 0;
    }

    int n = 0;
    options = tf_xcalloc((size_t)in->ndefines + (size_t)in->noptions + CUDA_NFIXED + 3,
                         sizeof *options);
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s", in->arch);
    options[n++] = arch_option;
    for (size_t i = 0; i < CUDA_NFIXED; i++)
        options[n++] = cuda_fixed_options[i];
    for (int i = 0; i < in->ndefines; i++)
        options[n++] = in->defines[i];
    for (int i = 0; i < in->noptions; i++)
        options[n++] = in->options[i];

    const uint64_t hash = source_hash(in->source);
    tf_nvrtc_result nrc = TF_NVRTC_ERROR_COMPILATION;
    const int tried_minimal = minimal_worth_trying(nv, hash);
    if (tried_minimal) {
        options[n] = "-minimal";
        nrc = nvrtc_compile_once(nv, in, n + 1, options, &prog, &log, err);
        if (nrc == TF_NVRTC_ERROR_COMPILATION || nrc == TF_NVRTC_ERROR_INVALID_OPTION) {
            free(log); /* (the full language's log is the variant's) */
            log = NULL;
            nrc = TF_NVRTC_ERROR_COMPILATION;
        } else if (nrc != TF_NVRTC_SUCCESS) {
            goto fail;
        }
    }
    if (nrc == TF_NVRTC_ERROR_COMPILATION) {
        nrc = nvrtc_compile_once(nv, in, n, options, &prog, &log, err);
        if (nrc == TF_NVRTC_SUCCESS && tried_minimal)
            minimal_remember_full(hash);
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
    if (nrc != TF_NVRTC_SUCCESS)
        goto fail;
    if (program_cubin(nv, prog, in->arch, &cubin, &cubin_size, err) != 0)
        goto fail;
    if (tf_cache_write_file(in->output_path, cubin, cubin_size, err) != 0)
        goto fail;
    out->ok = 1;
    ptxas_info(log, in->entry, out);
    out->log = log; /* warnings, if any, and ptxas' report */
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

/* ---- the vendor calls gpu_backend.c runs variants with ---- */

/* An opened device: the driver, the device and its retained primary context. */
struct cuda_device {
    const struct tf_cuda_driver *cu;
    tf_cu_device dev;
    tf_cu_context context;
};

static void cuda_error_text(int rc, char *out, size_t cap)
{
    tf_cuda_error_text(rc, out, cap);
}

static void cuda_device_close(void *device)
{
    struct cuda_device *d = device;
    if (d == NULL)
        return;
    if (d->context) {
        d->cu->cuCtxSetCurrent(NULL);
        d->cu->cuDevicePrimaryCtxRelease(d->dev);
    }
    free(d);
}

static int cuda_device_open(int ordinal, void **device, struct tf_gpu_limits *lim,
                            struct tf_error *err)
{
    struct cuda_device *d = tf_xcalloc(1, sizeof *d);
    tf_cu_result rc;
    int l2 = 0;

    *device = NULL;
    if ((d->cu = driver_ready(err)) == NULL)
        goto fail;
    const struct tf_cuda_driver *cu = d->cu;
    if ((rc = cu->cuDeviceGet(&d->dev, ordinal)) != TF_CUDA_SUCCESS) {
        cuda_fail(rc, err, "cuDeviceGet");
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
        &lim->max_threads, &lim->max_block[0], &lim->max_block[1], &lim->max_block[2],
        &lim->max_grid[0], &lim->max_grid[1], &lim->max_grid[2], &lim->max_shared,
        &lim->max_shared_optin, &l2,
    };
    for (size_t i = 0; i < sizeof limit_attrs / sizeof limit_attrs[0]; i++)
        if (get_attr(cu, d->dev, limit_attrs[i], limit_dst[i], err) != 0)
            goto fail;
    lim->flush_bytes = l2 > 0 ? (size_t)l2 : (size_t)64 << 20;
    /* Wait for the GPU asleep, not spinning: by default the driver spins a
     * core through every wait (most of a runner's life), and that core is
     * one the node's compilers need (bench/results/compile-cpu-2026-11-27-h200.md).
     * Timings come from device events, so they do not change; a wait ends
     * some microseconds later. Set before the context is retained; should
     * the driver refuse, the runner only spins as it did. */
    (void)cu->cuDevicePrimaryCtxSetFlags(d->dev, TF_CU_CTX_SCHED_BLOCKING_SYNC);
    if ((rc = cu->cuDevicePrimaryCtxRetain(&d->context, d->dev)) != TF_CUDA_SUCCESS) {
        d->context = NULL;
        cuda_fail(rc, err, "cuDevicePrimaryCtxRetain");
        goto fail;
    }
    if ((rc = cu->cuCtxSetCurrent(d->context)) != TF_CUDA_SUCCESS) {
        cuda_fail(rc, err, "cuCtxSetCurrent");
        goto fail;
    }
    *device = d;
    return 0;
fail:
    cuda_device_close(d);
    return -1;
}

/* The handles gpu_backend.c holds are the driver's, cast. */
#define CU(device) (((struct cuda_device *)(device))->cu)
#define DPTR(p) ((tf_cu_deviceptr)(uintptr_t)(p))

static int cuda_stream_create(void *device, tf_gpu_stream *stream)
{
    return CU(device)->cuStreamCreate((tf_cu_stream *)stream, TF_CU_STREAM_NON_BLOCKING);
}

static int cuda_stream_destroy(void *device, tf_gpu_stream stream)
{
    return CU(device)->cuStreamDestroy((tf_cu_stream)stream);
}

static int cuda_stream_synchronize(void *device, tf_gpu_stream stream)
{
    return CU(device)->cuStreamSynchronize((tf_cu_stream)stream);
}

static int cuda_stream_wait_event(void *device, tf_gpu_stream stream, tf_gpu_event event)
{
    return CU(device)->cuStreamWaitEvent((tf_cu_stream)stream, (tf_cu_event)event, 0);
}

static int cuda_event_create(void *device, tf_gpu_event *event, int flags)
{
    /* One the host waits on blocks, like the context (cuda_device_open says
     * why); the others do not, so that the stream holds many of them. */
    return CU(device)->cuEventCreate(
        (tf_cu_event *)event,
        (flags & TF_GPU_EVENT_WAITED ? TF_CU_EVENT_BLOCKING_SYNC : 0) |
            (flags & TF_GPU_EVENT_TIMING ? TF_CU_EVENT_DEFAULT : TF_CU_EVENT_DISABLE_TIMING));
}

static int cuda_event_destroy(void *device, tf_gpu_event event)
{
    return CU(device)->cuEventDestroy((tf_cu_event)event);
}

static int cuda_event_record(void *device, tf_gpu_event event, tf_gpu_stream stream)
{
    return CU(device)->cuEventRecord((tf_cu_event)event, (tf_cu_stream)stream);
}

static int cuda_event_synchronize(void *device, tf_gpu_event event)
{
    return CU(device)->cuEventSynchronize((tf_cu_event)event);
}

static int cuda_event_elapsed_ms(void *device, float *ms, tf_gpu_event start, tf_gpu_event end)
{
    return CU(device)->cuEventElapsedTime(ms, (tf_cu_event)start, (tf_cu_event)end);
}

static int cuda_module_load(void *device, tf_gpu_module *module, const void *image)
{
    return CU(device)->cuModuleLoadData((tf_cu_module *)module, image);
}

static int cuda_module_unload(void *device, tf_gpu_module module)
{
    return CU(device)->cuModuleUnload((tf_cu_module)module);
}

static int cuda_module_function(void *device, tf_gpu_function *function, tf_gpu_module module,
                                const char *entry)
{
    return CU(device)->cuModuleGetFunction((tf_cu_function *)function, (tf_cu_module)module,
                                           entry);
}

static int cuda_function_attribute(void *device, int *value, enum tf_gpu_function_attribute what,
                                   tf_gpu_function function)
{
    static const int attr[] = {
        [TF_GPU_FUNCTION_REGISTERS] = TF_CU_FUNC_ATTRIBUTE_NUM_REGS,
        [TF_GPU_FUNCTION_STATIC_SHARED] = TF_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
        [TF_GPU_FUNCTION_LOCAL_BYTES] = TF_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
    };
    return CU(device)->cuFuncGetAttribute(value, attr[what], (tf_cu_function)function);
}

/* Above 48 KiB a block's dynamic shared memory must be asked for, per function. */
static int cuda_function_allow_shared(void *device, tf_gpu_function function, int bytes)
{
    return CU(device)->cuFuncSetAttribute(
        (tf_cu_function)function, TF_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
}

static int cuda_launch(void *device, tf_gpu_function function, const struct tf_launch *g,
                       tf_gpu_stream stream, void **args)
{
    return CU(device)->cuLaunchKernel((tf_cu_function)function, g->grid[0], g->grid[1],
                                      g->grid[2], g->block[0], g->block[1], g->block[2],
                                      (unsigned int)g->shared_bytes, (tf_cu_stream)stream, args,
                                      NULL);
}

static int cuda_mem_alloc(void *device, void **ptr, size_t bytes)
{
    tf_cu_deviceptr p = 0;
    tf_cu_result rc = CU(device)->cuMemAlloc(&p, bytes);
    *ptr = (void *)(uintptr_t)p;
    return rc;
}

static int cuda_mem_free(void *device, void *ptr)
{
    return CU(device)->cuMemFree(DPTR(ptr));
}

static int cuda_copy_to_device(void *device, void *dst, const void *src, size_t bytes,
                               tf_gpu_stream stream)
{
    return CU(device)->cuMemcpyHtoDAsync(DPTR(dst), src, bytes, (tf_cu_stream)stream);
}

static int cuda_copy_to_host(void *device, void *dst, const void *src, size_t bytes,
                             tf_gpu_stream stream)
{
    return CU(device)->cuMemcpyDtoHAsync(dst, DPTR(src), bytes, (tf_cu_stream)stream);
}

static int cuda_copy_on_device(void *device, void *dst, const void *src, size_t bytes,
                               tf_gpu_stream stream)
{
    return CU(device)->cuMemcpyDtoDAsync(DPTR(dst), DPTR(src), bytes, (tf_cu_stream)stream);
}

static int cuda_fill_words(void *device, void *dst, unsigned value, size_t words,
                           tf_gpu_stream stream)
{
    return CU(device)->cuMemsetD32Async(DPTR(dst), value, words, (tf_cu_stream)stream);
}

static int cuda_host_alloc(void *device, void **ptr, size_t bytes)
{
    return CU(device)->cuMemHostAlloc(ptr, bytes, 0);
}

static int cuda_host_free(void *device, void *ptr)
{
    return CU(device)->cuMemFreeHost(ptr);
}

/* NVML's handle for the device, found by UUID (NVML numbers devices its own way). */
struct cuda_sensor {
    const struct tf_nvml *nvml;
    tf_nvml_device dev;
};

static void *cuda_sensor_open(void *device)
{
    const struct cuda_device *d = device;
    const struct tf_nvml *nvml = tf_nvml_load(NULL);
    tf_nvml_device handle = NULL;
    tf_cu_uuid uuid;
    char text[64];
    if (nvml == NULL || d->cu->cuDeviceGetUuid(&uuid, d->dev) != TF_CUDA_SUCCESS)
        return NULL;
    format_uuid(&uuid, text, sizeof text);
    if (nvml->nvmlDeviceGetHandleByUUID(text, &handle) != TF_NVML_SUCCESS || handle == NULL)
        return NULL;
    struct cuda_sensor *s = tf_xcalloc(1, sizeof *s);
    s->nvml = nvml;
    s->dev = handle;
    return s;
}

/* One reading of every NVML value into `t` (NaN / -1 where one fails: a board
 * without an energy counter still reports its clock). */
static void cuda_sensor_read(void *sensor, struct tf_telemetry *t)
{
    const struct cuda_sensor *s = sensor;
    const struct tf_nvml *nv = s->nvml;
    unsigned int u = 0;
    unsigned long long ull = 0;
    t->sm_clock_mhz = t->power_w = t->energy_mj = t->temperature_c = NAN;
    t->throttled = -1;
    if (nv->nvmlDeviceGetClockInfo(s->dev, TF_NVML_CLOCK_SM, &u) == TF_NVML_SUCCESS)
        t->sm_clock_mhz = u;
    if (nv->nvmlDeviceGetPowerUsage(s->dev, &u) == TF_NVML_SUCCESS)
        t->power_w = u * 1e-3;
    if (nv->nvmlDeviceGetTotalEnergyConsumption(s->dev, &ull) == TF_NVML_SUCCESS)
        t->energy_mj = (double)ull;
    if (nv->nvmlDeviceGetTemperature(s->dev, TF_NVML_TEMPERATURE_GPU, &u) == TF_NVML_SUCCESS)
        t->temperature_c = u;
    if (nv->nvmlDeviceGetCurrentClocksEventReasons(s->dev, &ull) == TF_NVML_SUCCESS)
        t->throttled = (ull & ~(TF_NVML_CLOCKS_EVENT_REASON_GPU_IDLE |
                                TF_NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS)) != 0;
}

/* NVML's total energy since the driver loaded (Volta and later), read now.
 * NVML updates it every 20-100 ms on recent boards: energy.c copes. */
static int cuda_sensor_energy(void *sensor, double *joules, char *why, size_t cap)
{
    const struct cuda_sensor *s = sensor;
    unsigned long long mj = 0;
    const tf_nvml_return rc = s->nvml->nvmlDeviceGetTotalEnergyConsumption(s->dev, &mj);
    if (rc == TF_NVML_SUCCESS) {
        *joules = (double)mj * 1e-3;
        return 0;
    }
    if (rc == TF_NVML_ERROR_NOT_SUPPORTED) {
        snprintf(why, cap, "nvmlDeviceGetTotalEnergyConsumption is not supported on this "
                           "device (NVML_ERROR_NOT_SUPPORTED; Volta and later have it)");
        return 1;
    }
    snprintf(why, cap, "nvmlDeviceGetTotalEnergyConsumption failed (NVML error %d)", rc);
    return -1;
}

/* The comparison kernels (gpu_backend.c's source) as a CUBIN for the opened
 * device's SM, compiled by NVRTC (once per runner: at device open).
 * --fmad=false keeps the tolerance arithmetic what the host's is
 * (gpu_backend.c says why). */
static void *cuda_compare_image(void *device, const char *source, struct tf_error *err)
{
    struct cuda_device *d = device;
    const struct tf_nvrtc *nv;
    int major = 0, minor = 0;
    if (get_attr(d->cu, d->dev, TF_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major, err) ||
        get_attr(d->cu, d->dev, TF_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor, err))
        return NULL;
    if ((nv = tf_nvrtc_load(err)) == NULL)
        return NULL;
    char arch[64], *log = NULL, *cubin = NULL;
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
    const char *options[] = {arch, "-std=c++17", "--fmad=false", "-minimal"};
    const struct tf_compile_input in = {.source = source, .source_name = "tunefarm-compare.cu"};
    tf_nvrtc_program prog = NULL;
    size_t size = 0;
    const tf_nvrtc_result nrc = nvrtc_compile_once(nv, &in, nvrtc_has_minimal(nv) ? 4 : 3,
                                                   options, &prog, &log, err);
    if (nrc == TF_NVRTC_ERROR_COMPILATION || nrc == TF_NVRTC_ERROR_INVALID_OPTION)
        tf_error_set(err, TF_ERR_BACKEND, "NVRTC could not compile the comparison kernels: %.300s",
                     log ? log : nv->nvrtcGetErrorString(nrc));
    else if (nrc == TF_NVRTC_SUCCESS)
        program_cubin(nv, prog, "the comparison kernels", &cubin, &size, err);
    if (prog)
        nv->nvrtcDestroyProgram(&prog);
    free(log);
    return cubin;
}

static const struct tf_gpu_vendor cuda_vendor = {
    .version = TF_GPU_VENDOR_VERSION,
    .name = "CUDA",
    .sensor_name = "NVML",
    .error_text = cuda_error_text,
    .is_sticky = is_sticky,
    .is_configuration_error = is_configuration_error,
    .out_of_memory = TF_CUDA_ERROR_OUT_OF_MEMORY,
    .device_open = cuda_device_open,
    .device_close = cuda_device_close,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_synchronize = cuda_stream_synchronize,
    .stream_wait_event = cuda_stream_wait_event,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_synchronize = cuda_event_synchronize,
    .event_elapsed_ms = cuda_event_elapsed_ms,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .module_function = cuda_module_function,
    .function_attribute = cuda_function_attribute,
    .function_allow_shared = cuda_function_allow_shared,
    .launch = cuda_launch,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .copy_to_device = cuda_copy_to_device,
    .copy_to_host = cuda_copy_to_host,
    .copy_on_device = cuda_copy_on_device,
    .fill_words = cuda_fill_words,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .sensor_open = cuda_sensor_open,
    .sensor_read = cuda_sensor_read,
    .sensor_energy = cuda_sensor_energy,
    .sensor_close = free,
    .compare_image = cuda_compare_image,
};

static int cuda_open(int ordinal, struct tf_backend_ctx **ctx, struct tf_error *err)
{
    return tf_gpu_open(&cuda_vendor, ordinal, ctx, err);
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
    TF_GPU_RUN_MEMBERS,
};
