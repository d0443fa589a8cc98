/* backend_hip.c - AMD GPUs through the HIP runtime, hipRTC and ROCm SMI.
 *
 * The same code path as backend_cuda.c with AMD's calls, function for
 * function and in the same order. Nothing here links against ROCm: hip_api.c
 * dlopens libamdhip64, hipRTC (inside libamdhip64 up to ROCm 5, libhiprtc from
 * ROCm 6) and librocm_smi64 on first use, so a node without them still runs
 * the binary and probe() says why this backend is unusable. Compiling needs no
 * device: hipRTC turns the variant's CUDA-dialect source (with the HIP flavour
 * of the portability header handed over in memory as "tunefarm.h") into an
 * AMDGPU code object for the exact gfxXXX of the target, written to the
 * caller's path as hipRTC returns it (ROCm 5.2: a bare ELF; hipModuleLoadData
 * takes a clang offload bundle as well). The target is checked against the
 * list of the code object manager (comgr) first, because ROCm 5.2's hipRTC
 * aborts the process on a target it does not know (see hip_api.c).
 *
 * Running happens in the runner process only: open() selects the device,
 * creates a non-blocking stream, a start and an end event and a buffer whose
 * memset evicts the last-level cache, and a second stream on which
 * download_async copies outputs back while later samples run. Each launch is
 * checked against the device limits first, so an oversized block is an
 * `invalid` result rather than a runtime error; a timed launch is bracketed by
 * the two events on the stream, the flush memset queued before the start
 * event. AMD has no shared-memory opt-in: a block may use all the LDS the
 * device reports per block without asking. Faults the runtime reports
 * (illegal address, launch failure...) are `runtime_error` and mark the
 * context unhealthy, as on CUDA; note that by default ROCm's HSA runtime
 * aborts the whole process on a GPU memory fault before HIP can report it, so
 * on AMD such a variant usually shows as the runner dying, which the worker
 * records and recovers from in the same way. Telemetry comes from ROCm SMI
 * where it is present (clock, power, energy, temperature; no throttle flag),
 * read by a thread every 25 ms, as NVML is on NVIDIA.
 *
 * No AMD GPU was available to this project when this file was written: the
 * discovery, compile and probe paths are tested (tests/unit/test_hip.c, on
 * Debian's ROCm 5.2.3), the run path is compiled and reviewed only. */
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
#include "hip_api.h"
#include "portability.h"

/* A loaded variant. */
struct hip_function {
    tf_hip_module module;
    tf_hip_function fn;
    int static_shared;      /* bytes, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES; 0 if unknown */
};

struct tf_backend_ctx {
    const struct tf_hip_runtime *hip;
    int dev;                /* the HIP device id (hipDevice_t is the ordinal) */
    tf_hip_stream stream;
    tf_hip_event start, end;
    tf_hip_event batch_start[TF_MAX_BATCH], batch_end[TF_MAX_BATCH]; /* created on first use */
    int batch_events;       /* how many of each exist */
    int batch_queued;       /* launches queued by enqueue, not yet collected */
    void *flush_buf;
    size_t flush_words;
    unsigned int flush_value;
    int healthy;
    /* limits checked before every launch */
    int max_threads, max_block[3], max_grid[3], max_shared, max_shared_optin;
    /* Downloads that overlap the samples: a side stream that waits for
     * `copy_ready` (recorded on the main stream) and records `copy_done`. */
    tf_hip_stream copy_stream;
    tf_hip_event copy_ready, copy_done;
    int copies_queued;
    /* ROCm SMI, NULL where absent. A sampling thread reads it every
     * TELEMETRY_PERIOD_NS into `telemetry`, under `lock`: its sysfs reads take
     * milliseconds, which the measuring thread must not spend between configurations. */
    const struct tf_rocm_smi *smi;
    uint32_t smi_dev;
    pthread_t sampler;
    int sampler_running, sampler_stop;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct tf_telemetry telemetry;   /* the last ROCm SMI readings */
};

/* ---- errors ---- */

/* Faults after which the device can run nothing more in this process. */
static int is_sticky(tf_hip_error rc)
{
    switch (rc) {
    case TF_HIP_ERROR_ILLEGAL_ADDRESS:
    case TF_HIP_ERROR_LAUNCH_TIMEOUT:
    case TF_HIP_ERROR_ASSERT:
    case TF_HIP_ERROR_LAUNCH_FAILURE:
    case TF_HIP_ERROR_UNKNOWN:
    case TF_HIP_ERROR_RUNTIME_MEMORY:
    case TF_HIP_ERROR_RUNTIME_OTHER:
        return 1;
    default:
        return 0;
    }
}

/* Launch-time rejections of the configuration itself: the variant asks for
 * more than the device gives, nothing ran. */
static int is_configuration_error(tf_hip_error rc)
{
    return rc == TF_HIP_ERROR_INVALID_VALUE || rc == TF_HIP_ERROR_INVALID_CONFIGURATION ||
           rc == TF_HIP_ERROR_LAUNCH_OUT_OF_RESOURCES ||
           rc == TF_HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
}

/* Fill err with "what: hipErrorX (text)"; mark the context broken on a sticky error. */
static int hip_fail(struct tf_backend_ctx *ctx, tf_hip_error rc, struct tf_error *err,
                    const char *what)
{
    char text[256];
    tf_hip_error_text(rc, text, sizeof text);
    if (ctx && is_sticky(rc))
        ctx->healthy = 0;
    return tf_error_set(err, TF_ERR_BACKEND, "%s: %s", what, text);
}

/* The runtime, initialised on a node with an AMD GPU; NULL + err with the
 * reason it cannot be used. */
static const struct tf_hip_runtime *runtime_ready(struct tf_error *err)
{
    const struct tf_hip_runtime *hip = tf_hip_runtime_load(err);
    if (hip == NULL)
        return NULL;
    const tf_hip_error rc = hip->hipInit(0);
    if (rc == TF_HIP_ERROR_NO_DEVICE || rc == TF_HIP_ERROR_INVALID_DEVICE) {
        /* ROCm 5.2 answers hipInit with hipErrorInvalidDevice where there is
         * no GPU (no /dev/kfd, or none visible) */
        char text[128];
        tf_hip_error_text(rc, text, sizeof text);
        tf_error_set(err, TF_ERR_BACKEND, "no AMD GPU (%shipInit: %s)",
                     access("/dev/kfd", F_OK) != 0 ? "no /dev/kfd, the amdgpu driver is not "
                                                     "loaded; "
                                                   : "",
                     text);
        return NULL;
    }
    if (rc != TF_HIP_SUCCESS) {
        hip_fail(NULL, rc, err, "hipInit failed");
        return NULL;
    }
    return hip;
}

/* ---- discovery ---- */

static int hip_probe(struct tf_error *err)
{
    const struct tf_hip_runtime *hip = runtime_ready(err);
    int n = 0;
    if (hip == NULL)
        return -1;
    tf_hip_error rc = hip->hipGetDeviceCount(&n);
    if (rc != TF_HIP_SUCCESS && rc != TF_HIP_ERROR_NO_DEVICE)
        return hip_fail(NULL, rc, err, "hipGetDeviceCount failed");
    if (n <= 0)
        return tf_error_set(err, TF_ERR_BACKEND, "no AMD GPU (the HIP runtime reports 0 devices)");
    return 0;
}

static int hip_device_count(void)
{
    const struct tf_hip_runtime *hip = runtime_ready(NULL);
    int n = 0;
    if (hip == NULL || hip->hipGetDeviceCount(&n) != TF_HIP_SUCCESS)
        return 0;
    return n;
}

/* The attributes a context needs, read once into `ctx` or a tf_device. */
static int get_attr(const struct tf_hip_runtime *hip, int dev, int attr, int *out,
                    struct tf_error *err)
{
    tf_hip_error rc = hip->hipDeviceGetAttribute(out, attr, dev);
    if (rc != TF_HIP_SUCCESS) {
        char what[64];
        snprintf(what, sizeof what, "hipDeviceGetAttribute(%d)", attr);
        return hip_fail(NULL, rc, err, what);
    }
    return 0;
}

/* The opt-in shared memory per block ("CUDA only" in HIP's header: a runtime
 * may answer 0 or refuse): AMD has no opt-in, so it is the default amount. */
static int shared_optin(const struct tf_hip_runtime *hip, int dev, int max_shared)
{
    int v = 0;
    if (hip->hipDeviceGetAttribute(&v, TF_HIP_ATTR_SHARED_MEM_PER_BLOCK_OPTIN, dev) !=
            TF_HIP_SUCCESS ||
        v < max_shared)
        v = max_shared;
    return v;
}

/* ROCm's UUID is the 16 characters after "GPU-" of its HSA agent's UUID (what
 * rocminfo and rocm-smi print); anything else is printed as hex like CUDA's. */
static void format_uuid(const tf_hip_uuid *u, char *out, size_t cap)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    int hex_text = 1, zero = 1;
    for (int i = 0; i < 16; i++) {
        hex_text &= (b[i] >= '0' && b[i] <= '9') || (b[i] >= 'a' && b[i] <= 'f') ||
                    (b[i] >= 'A' && b[i] <= 'F');
        zero &= b[i] == 0;
    }
    if (zero)
        out[0] = '\0';
    else if (hex_text)
        snprintf(out, cap, "GPU-%.16s", u->bytes);
    else
        snprintf(out, cap,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]);
}

/* "5.2.21153" for a HIP version number (HIP_VERSION: major * 10^7 + minor * 10^5 + patch). */
static void format_hip_version(int v, char *out, size_t cap)
{
    snprintf(out, cap, "%d.%d.%d", v / 10000000, v / 100000 % 100, v % 100000);
}

/* hipRTC's version as "hipRTC 5.2.21153 (comgr 2.4)", or "" when it cannot be loaded. */
static void hiprtc_version(char *out, size_t cap)
{
    const struct tf_hiprtc *rt = tf_hiprtc_load(NULL);
    size_t major = 0, minor = 0;
    out[0] = '\0';
    if (rt == NULL)
        return;
    if (rt->amd_comgr_get_version)
        rt->amd_comgr_get_version(&major, &minor);
    if (rt->amd_comgr_get_version)
        snprintf(out, cap, "hipRTC %s (comgr %zu.%zu)", rt->version[0] ? rt->version : "?", major,
                 minor);
    else
        snprintf(out, cap, "hipRTC %s", rt->version[0] ? rt->version : "?");
}

/* The amdgpu kernel driver's release ("6.8.5"), which is what changes under an
 * operator's feet; "" where the module has no version file (in-tree builds). */
static void amdgpu_version(char *out, size_t cap)
{
    FILE *f = fopen("/sys/module/amdgpu/version", "re");
    out[0] = '\0';
    if (f == NULL)
        return;
    if (fgets(out, (int)cap, f) == NULL)
        out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

static int hip_describe(int ordinal, struct tf_device *out, struct tf_error *err)
{
    const struct tf_hip_runtime *hip = runtime_ready(err);
    tf_hip_device dev;
    tf_hip_error rc;
    int version = 0, v = 0;

    memset(out, 0, sizeof *out);
    if (hip == NULL)
        return -1;
    if ((rc = hip->hipDeviceGet(&dev, ordinal)) != TF_HIP_SUCCESS) {
        char what[64];
        snprintf(what, sizeof what, "hipDeviceGet(%d)", ordinal);
        return hip_fail(NULL, rc, err, what);
    }
    tf_strlcpy(out->backend, "hip", sizeof out->backend);
    tf_strlcpy(out->vendor, "AMD", sizeof out->vendor);
    if ((rc = hip->hipDeviceGetName(out->name, (int)sizeof out->name, dev)) != TF_HIP_SUCCESS)
        return hip_fail(NULL, rc, err, "hipDeviceGetName");
    /* "gfx90a:sramecc+:xnack-": the target without its features, which is
     * what --offload-arch and the nominal devices name */
    union tf_hip_props *props = tf_xcalloc(1, sizeof *props);
    rc = hip->hipGetDeviceProperties(props, ordinal);
    if (rc == TF_HIP_SUCCESS)
        tf_strlcpy(out->arch, hip->props_r0600 ? props->r0600.gcn_arch_name
                                               : props->r0000.gcn_arch_name,
                   sizeof out->arch);
    free(props);
    if (rc != TF_HIP_SUCCESS)
        return hip_fail(NULL, rc, err, "hipGetDeviceProperties");
    out->arch[strcspn(out->arch, ":")] = '\0';
    if (strncmp(out->arch, "gfx", 3) != 0)
        return tf_error_set(err, TF_ERR_BACKEND, "device %d reports architecture '%s', not gfx*",
                            ordinal, out->arch);

    tf_hip_uuid uuid;
    if (hip->hipDeviceGetUuid && hip->hipDeviceGetUuid(&uuid, dev) == TF_HIP_SUCCESS)
        format_uuid(&uuid, out->uuid, sizeof out->uuid);
    if ((rc = hip->hipDeviceGetPCIBusId(out->pci_bus, (int)sizeof out->pci_bus, ordinal)) !=
        TF_HIP_SUCCESS)
        return hip_fail(NULL, rc, err, "hipDeviceGetPCIBusId");
    gethostname(out->host, sizeof out->host - 1);
    size_t total = 0;
    if ((rc = hip->hipDeviceTotalMem(&total, dev)) != TF_HIP_SUCCESS)
        return hip_fail(NULL, rc, err, "hipDeviceTotalMem");
    out->memory_bytes = total;

    /* driver_version: the HIP version the runtime implements ("6.2.41133");
     * runtime_version: the amdgpu kernel driver's release, as cuda puts the
     * NVIDIA driver's release there. */
    if ((rc = hip->hipDriverGetVersion(&version)) != TF_HIP_SUCCESS)
        return hip_fail(NULL, rc, err, "hipDriverGetVersion");
    format_hip_version(version, out->driver_version, sizeof out->driver_version);
    amdgpu_version(out->runtime_version, sizeof out->runtime_version);
    hiprtc_version(out->compiler_version, sizeof out->compiler_version);

    static const struct {
        int prop, attr;
    } attrs[] = {
        {TF_DEVPROP_MAX_THREADS, TF_HIP_ATTR_MAX_THREADS_PER_BLOCK},
        {TF_DEVPROP_MAX_SHARED, TF_HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK},
        {TF_DEVPROP_WARP_SIZE, TF_HIP_ATTR_WARP_SIZE},    /* 64 on CDNA, 32 on RDNA */
        {TF_DEVPROP_SM_COUNT, TF_HIP_ATTR_MULTIPROCESSOR_COUNT},
        {TF_DEVPROP_L2_BYTES, TF_HIP_ATTR_L2_CACHE_SIZE},
        {TF_DEVPROP_MAX_REGISTERS, TF_HIP_ATTR_MAX_REGISTERS_PER_BLOCK},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        if (get_attr(hip, ordinal, attrs[i].attr, &v, err) != 0)
            return -1;
        out->props[attrs[i].prop] = v;
    }
    out->props[TF_DEVPROP_MAX_SHARED_OPTIN] =
        shared_optin(hip, ordinal, (int)out->props[TF_DEVPROP_MAX_SHARED]);
    out->props[TF_DEVPROP_SIMD_BYTES] = 0;
    out->compute_units = (uint32_t)out->props[TF_DEVPROP_SM_COUNT];
    return 0;
}

static pthread_once_t ident_once = PTHREAD_ONCE_INIT;
static char ident[512];

static void ident_init(void)
{
    struct tf_error err = {0};
    const struct tf_hiprtc *rt = tf_hiprtc_load(&err);
    char version[96];
    if (rt == NULL) {
        snprintf(ident, sizeof ident, "hiprtc unavailable: %.400s", err.message);
        return;
    }
    hiprtc_version(version, sizeof version);
    snprintf(ident, sizeof ident, "%s | %s", rt->path, version);
}

/* The hipRTC library, its release and comgr's (which carries the device
 * libraries): a new ROCm means new cache entries. */
static const char *hip_compiler_id(void)
{
    pthread_once(&ident_once, ident_init);
    return ident;
}

/* ---- compiling ---- */

/* This node can compile for AMD GPUs when hipRTC loads, GPU or not. */
static int hip_compiler_probe(struct tf_error *err)
{
    return tf_hiprtc_load(err) != NULL ? 0 : -1;
}

/* Is `arch` an AMD target "gfx<hex digits>", optionally with target features
 * (":sramecc+", ":xnack-"), that --offload-arch accepts? */
static int valid_arch(const char *arch)
{
    if (arch == NULL || strncmp(arch, "gfx", 3) != 0)
        return 0;
    const char *p = arch + 3;
    size_t digits = strspn(p, "0123456789abcdef");
    if (digits < 3 || digits > 4)
        return 0;
    for (p += digits; *p; ) {
        size_t n;
        if (strncmp(p, ":sramecc", 8) == 0)
            n = 8;
        else if (strncmp(p, ":xnack", 6) == 0)
            n = 6;
        else
            return 0;
        if (p[n] != '+' && p[n] != '-')
            return 0;
        p += n + 1;
    }
    return 1;
}

/* NULL if comgr knows the target `arch` (or cannot be asked), else a log
 * saying it does not and which targets it knows (malloc'd). */
static char *unknown_target(const struct tf_hiprtc *rt, const char *arch)
{
    static const char prefix[] = "amdgcn-amd-amdhsa--";
    const size_t base = strcspn(arch, ":");
    size_t count = 0, major = 0, minor = 0;
    if (rt->amd_comgr_get_isa_count == NULL ||
        rt->amd_comgr_get_isa_count(&count) != TF_COMGR_STATUS_SUCCESS)
        return NULL;
    char *known = tf_xcalloc(1, count * 24 + 1);
    for (size_t i = 0; i < count; i++) {
        const char *name = NULL;
        if (rt->amd_comgr_get_isa_name(i, &name) != TF_COMGR_STATUS_SUCCESS || name == NULL)
            continue;
        if (strncmp(name, prefix, sizeof prefix - 1) == 0)
            name += sizeof prefix - 1;
        /* an entry may carry target features too ("gfx90a:xnack+") */
        const size_t name_base = strcspn(name, ":");
        if (name_base == base && strncmp(name, arch, base) == 0) {
            free(known);
            return NULL;
        }
        if (name[name_base] == '\0' && name_base < 20)
            strcat(strcat(known, known[0] ? " " : ""), name);
    }
    rt->amd_comgr_get_version(&major, &minor);
    char *log = tf_xasprintf("error: this hipRTC cannot compile for %.*s: its code object "
                             "manager (comgr %zu.%zu) knows only %s",
                             (int)base, arch, major, minor, known);
    free(known);
    return log;
}

/* `log` with comgr's name of the source put back to `name`: ROCm 5.2's hipRTC
 * ignores the program's name, and its messages say
 * "/tmp/comgr-df2aea/input/CompileSource:4:28: error: ...". Takes `log`. */
static char *name_source(char *log, const char *name)
{
    static const char comgr_name[] = "CompileSource";
    if (log == NULL || name == NULL || strstr(log, comgr_name) == NULL)
        return log;
    size_t cap = strlen(log) + 1, len = 0;
    for (const char *p = log; (p = strstr(p, comgr_name)) != NULL; p += sizeof comgr_name - 1)
        cap += strlen(name);
    char *out = tf_xmalloc(cap);
    const char *p = log, *hit;
    while ((hit = strstr(p, comgr_name)) != NULL) {
        /* the path starts after the last blank or line start before it */
        const char *start = hit;
        while (start > p && start[-1] != '\n' && start[-1] != ' ' && start[-1] != '\t')
            start--;
        const int is_path = start[0] == '/';
        memcpy(out + len, p, (size_t)(start - p));
        len += (size_t)(start - p);
        const char *put = is_path ? name : start;
        const size_t n = is_path ? strlen(name) : (size_t)(hit - start) + sizeof comgr_name - 1;
        memcpy(out + len, put, n);
        len += n;
        p = hit + sizeof comgr_name - 1;
    }
    memcpy(out + len, p, strlen(p) + 1);
    free(log);
    return out;
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

static int hip_compile(const struct tf_compile_input *in, struct tf_compile_output *out,
                       struct tf_error *err)
{
    const struct tf_hiprtc *rt;
    tf_hiprtc_program prog = NULL;
    const char **options = NULL;
    char arch_option[64];
    char *log = NULL, *code = NULL;
    size_t log_size = 0, code_size = 0;
    int rc = -1;

    out->ok = 0;
    out->log = NULL;
    /* Registers and spills are only known once the runtime loads the code
     * object: the runner asks function_info() then. */
    out->registers = -1;
    out->shared_bytes = out->spill_bytes = -1;

    if ((rt = tf_hiprtc_load(err)) == NULL)
        return -1;
    if (!valid_arch(in->arch)) {
        out->log = tf_xasprintf("error: '%s' is not an AMD GPU architecture of the form gfx90a",
                                in->arch ? in->arch : "(none)");
        return 0;
    }
    /* before hipRTC sees it: an unknown target aborts ROCm 5.2's hipRTC */
    if ((out->log = unknown_target(rt, in->arch)) != NULL)
        return 0;
    const char *header = tf_portability_header("hip");
    const char *header_name = "tunefarm.h";
    tf_hiprtc_result hrc = rt->hiprtcCreateProgram(
        &prog, in->source, in->source_name ? in->source_name : "kernel.cu", header ? 1 : 0,
        header ? &header : NULL, header ? &header_name : NULL);
    if (hrc != TF_HIPRTC_SUCCESS) {
        prog = NULL;
        tf_error_set(err, TF_ERR_BACKEND, "hiprtcCreateProgram: %s", rt->hiprtcGetErrorString(hrc));
        goto fail;
    }

    int n = 0;
    options = tf_xcalloc((size_t)(in->ndefines + in->noptions + 4), sizeof *options);
    snprintf(arch_option, sizeof arch_option, "--offload-arch=%s", in->arch);
    options[n++] = arch_option;
    options[n++] = "-std=c++17";
    for (int i = 0; i < in->ndefines; i++)
        options[n++] = in->defines[i];
    for (int i = 0; i < in->noptions; i++)
        options[n++] = in->options[i];

    hrc = rt->hiprtcCompileProgram(prog, n, options);
    if (rt->hiprtcGetProgramLogSize(prog, &log_size) == TF_HIPRTC_SUCCESS && log_size > 1) {
        log = tf_xmalloc(log_size + 1);
        if (rt->hiprtcGetProgramLog(prog, log) != TF_HIPRTC_SUCCESS)
            log[0] = '\0';
        log[log_size] = '\0';
        log = name_source(log, in->source_name ? in->source_name : "kernel.cu");
    }
    if (hrc == TF_HIPRTC_ERROR_COMPILATION || hrc == TF_HIPRTC_ERROR_INVALID_OPTION) {
        /* the variant (or the kernel's options) is wrong: a result, not a failure */
        if (log == NULL || log[0] == '\0') {
            free(log);
            log = tf_xasprintf("error: hipRTC: %s", rt->hiprtcGetErrorString(hrc));
        }
        out->log = log;
        log = NULL;
        rc = 0;
        goto fail;
    }
    if (hrc != TF_HIPRTC_SUCCESS) {
        tf_error_set(err, TF_ERR_BACKEND, "hiprtcCompileProgram: %s",
                     rt->hiprtcGetErrorString(hrc));
        goto fail;
    }
    hrc = rt->hiprtcGetCodeSize(prog, &code_size);
    if (hrc != TF_HIPRTC_SUCCESS || code_size == 0) {
        tf_error_set(err, TF_ERR_BACKEND, "hipRTC produced no code object for %s: %s", in->arch,
                     hrc != TF_HIPRTC_SUCCESS ? rt->hiprtcGetErrorString(hrc) : "empty");
        goto fail;
    }
    code = tf_xmalloc(code_size);
    if ((hrc = rt->hiprtcGetCode(prog, code)) != TF_HIPRTC_SUCCESS) {
        tf_error_set(err, TF_ERR_BACKEND, "hiprtcGetCode: %s", rt->hiprtcGetErrorString(hrc));
        goto fail;
    }
    if (write_file(in->output_path, code, code_size, err) != 0)
        goto fail;
    out->ok = 1;
    out->log = log; /* warnings, if any */
    log = NULL;
    rc = 0;
fail:
    if (prog)
        rt->hiprtcDestroyProgram(&prog);
    free(options);
    free(log);
    free(code);
    return rc;
}

/* ---- telemetry ---- */

/* How often the sampling thread reads ROCm SMI. Its counters move every few
 * tens of milliseconds anyway; a reading (sysfs files) costs about a
 * millisecond of this thread's time. */
#define TELEMETRY_PERIOD_NS 25000000L

/* The current SCLK in MHz from a rsmi_dev_gpu_clk_freq_get answer; NaN if the
 * answer does not make sense in the layout we expect. */
static double current_clock(const union tf_rsmi_frequencies *f, int v6)
{
    const uint32_t n = v6 ? f->v6.num_supported : f->v5.num_supported;
    const uint32_t cur = v6 ? f->v6.current : f->v5.current;
    const uint32_t max = v6 ? 33 : 32;
    if (n == 0 || n > max || cur >= n)
        return NAN;
    const uint64_t hz = v6 ? f->v6.frequency[cur] : f->v5.frequency[cur];
    return hz > 0 && hz < UINT64_C(100000000000) ? (double)hz * 1e-6 : NAN;
}

/* One reading of every ROCm SMI value into `t` (NaN / -1 where one fails:
 * MI300 reports no average power but a current one, no edge temperature but
 * a junction one). ROCm SMI has no simple throttle flag (it hides in
 * gpu_metrics, whose layout changes with every table revision): -1. */
static void telemetry_read(const struct tf_backend_ctx *ctx, struct tf_telemetry *t)
{
    const struct tf_rocm_smi *smi = ctx->smi;
    const uint32_t d = ctx->smi_dev;
    uint64_t u = 0, stamp = 0;
    int64_t millidegrees = 0;
    float resolution = 0;
    int type = 0;
    union tf_rsmi_frequencies f;
    t->sm_clock_mhz = t->power_w = t->energy_mj = t->temperature_c = NAN;
    t->throttled = -1;
    memset(&f, 0, sizeof f);
    if (smi->rsmi_dev_gpu_clk_freq_get(d, TF_RSMI_CLK_TYPE_SYS, &f) == TF_RSMI_STATUS_SUCCESS)
        t->sm_clock_mhz = current_clock(&f, smi->frequencies_v6);
    if ((smi->rsmi_dev_power_get &&
         smi->rsmi_dev_power_get(d, &u, &type) == TF_RSMI_STATUS_SUCCESS) ||
        smi->rsmi_dev_power_ave_get(d, 0, &u) == TF_RSMI_STATUS_SUCCESS)
        t->power_w = (double)u * 1e-6; /* microwatts */
    if (smi->rsmi_dev_energy_count_get(d, &u, &resolution, &stamp) == TF_RSMI_STATUS_SUCCESS)
        t->energy_mj = (double)u * resolution * 1e-3; /* counts of `resolution` microjoules */
    if (smi->rsmi_dev_temp_metric_get(d, TF_RSMI_TEMP_TYPE_JUNCTION, TF_RSMI_TEMP_CURRENT,
                                      &millidegrees) == TF_RSMI_STATUS_SUCCESS ||
        smi->rsmi_dev_temp_metric_get(d, TF_RSMI_TEMP_TYPE_EDGE, TF_RSMI_TEMP_CURRENT,
                                      &millidegrees) == TF_RSMI_STATUS_SUCCESS)
        t->temperature_c = (double)millidegrees * 1e-3;
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

/* A first reading now, then the thread (without ROCm SMI: nothing). Without a
 * thread (pthread_create failed) the first reading just stays. */
static void telemetry_start(struct tf_backend_ctx *ctx)
{
    if (ctx->smi == NULL)
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

/* ---- running ---- */

static void hip_close(struct tf_backend_ctx *ctx)
{
    if (ctx == NULL)
        return;
    const struct tf_hip_runtime *hip = ctx->hip;
    telemetry_stop(ctx);
    if (hip) {
        /* On a broken device these fail; the process is about to exit anyway. */
        if (ctx->stream)
            hip->hipStreamSynchronize(ctx->stream);
        if (ctx->copy_stream) {
            hip->hipStreamSynchronize(ctx->copy_stream);
            hip->hipStreamDestroy(ctx->copy_stream);
        }
        if (ctx->copy_ready)
            hip->hipEventDestroy(ctx->copy_ready);
        if (ctx->copy_done)
            hip->hipEventDestroy(ctx->copy_done);
        if (ctx->flush_buf)
            hip->hipFree(ctx->flush_buf);
        if (ctx->start)
            hip->hipEventDestroy(ctx->start);
        if (ctx->end)
            hip->hipEventDestroy(ctx->end);
        for (int i = 0; i < ctx->batch_events; i++) {
            hip->hipEventDestroy(ctx->batch_start[i]);
            hip->hipEventDestroy(ctx->batch_end[i]);
        }
        if (ctx->stream)
            hip->hipStreamDestroy(ctx->stream);
    }
    pthread_cond_destroy(&ctx->wake);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

/* The bytes to write to evict the last-level cache: the L2, or on MI300
 * (gfx94x) its 256 MiB Infinity Cache behind the L2, which no HIP attribute
 * reports and which would otherwise serve the next sample warm. */
static size_t flush_bytes(const struct tf_hip_runtime *hip, int dev, int l2)
{
    size_t bytes = l2 > 0 ? (size_t)l2 : (size_t)64 << 20;
    union tf_hip_props *props = tf_xcalloc(1, sizeof *props);
    if (hip->hipGetDeviceProperties(props, dev) == TF_HIP_SUCCESS) {
        const char *arch =
            hip->props_r0600 ? props->r0600.gcn_arch_name : props->r0000.gcn_arch_name;
        if (strncmp(arch, "gfx94", 5) == 0 && bytes < (size_t)256 << 20)
            bytes = (size_t)256 << 20;
    }
    free(props);
    return bytes;
}

/* The ROCm SMI index of HIP device `dev`, matched by PCI domain, bus and
 * device (ROCm SMI numbers devices its own way); -1 if none matches. */
static int smi_index(const struct tf_rocm_smi *smi, const struct tf_hip_runtime *hip, int dev)
{
    int domain = 0, bus = 0, device = 0;
    uint32_t n = 0;
    if (hip->hipDeviceGetAttribute(&domain, TF_HIP_ATTR_PCI_DOMAIN_ID, dev) != TF_HIP_SUCCESS ||
        hip->hipDeviceGetAttribute(&bus, TF_HIP_ATTR_PCI_BUS_ID, dev) != TF_HIP_SUCCESS ||
        hip->hipDeviceGetAttribute(&device, TF_HIP_ATTR_PCI_DEVICE_ID, dev) != TF_HIP_SUCCESS ||
        smi->rsmi_num_monitor_devices(&n) != TF_RSMI_STATUS_SUCCESS)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t bdfid = 0;
        /* BDFID: domain << 32 | (ROCm 6: partition << 28) | bus << 8 | device << 3 | function */
        if (smi->rsmi_dev_pci_id_get(i, &bdfid) == TF_RSMI_STATUS_SUCCESS &&
            (bdfid >> 32) == (uint64_t)(unsigned)domain &&
            ((bdfid >> 8) & 0xff) == (uint64_t)(unsigned)bus &&
            ((bdfid >> 3) & 0x1f) == (uint64_t)(unsigned)device)
            return (int)i;
    }
    return -1;
}

static int hip_open(int ordinal, struct tf_backend_ctx **out, struct tf_error *err)
{
    struct tf_backend_ctx *ctx = tf_xcalloc(1, sizeof *ctx);
    tf_hip_error rc;
    int l2 = 0;

    pthread_mutex_init(&ctx->lock, NULL);
    pthread_cond_init(&ctx->wake, NULL);

    *out = NULL;
    ctx->healthy = 1;
    if ((ctx->hip = runtime_ready(err)) == NULL)
        goto fail;
    const struct tf_hip_runtime *hip = ctx->hip;
    tf_hip_device dev;
    if ((rc = hip->hipDeviceGet(&dev, ordinal)) != TF_HIP_SUCCESS) {
        hip_fail(NULL, rc, err, "hipDeviceGet");
        goto fail;
    }
    ctx->dev = ordinal;
    static const int limit_attrs[] = {
        TF_HIP_ATTR_MAX_THREADS_PER_BLOCK,
        TF_HIP_ATTR_MAX_BLOCK_DIM_X, TF_HIP_ATTR_MAX_BLOCK_DIM_Y,
        TF_HIP_ATTR_MAX_BLOCK_DIM_Z, TF_HIP_ATTR_MAX_GRID_DIM_X,
        TF_HIP_ATTR_MAX_GRID_DIM_Y, TF_HIP_ATTR_MAX_GRID_DIM_Z,
        TF_HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK,
        TF_HIP_ATTR_L2_CACHE_SIZE,
    };
    int *const limit_dst[] = {
        &ctx->max_threads, &ctx->max_block[0], &ctx->max_block[1], &ctx->max_block[2],
        &ctx->max_grid[0], &ctx->max_grid[1], &ctx->max_grid[2], &ctx->max_shared, &l2,
    };
    for (size_t i = 0; i < sizeof limit_attrs / sizeof limit_attrs[0]; i++)
        if (get_attr(hip, ctx->dev, limit_attrs[i], limit_dst[i], err) != 0)
            goto fail;
    ctx->max_shared_optin = shared_optin(hip, ctx->dev, ctx->max_shared);
    /* HIP has no explicit contexts: the device's primary one becomes current. */
    if ((rc = hip->hipSetDevice(ctx->dev)) != TF_HIP_SUCCESS) {
        hip_fail(NULL, rc, err, "hipSetDevice");
        goto fail;
    }
    if ((rc = hip->hipStreamCreateWithFlags(&ctx->stream, TF_HIP_STREAM_NON_BLOCKING)) !=
        TF_HIP_SUCCESS) {
        ctx->stream = NULL;
        hip_fail(NULL, rc, err, "hipStreamCreateWithFlags");
        goto fail;
    }
    if ((rc = hip->hipEventCreateWithFlags(&ctx->start, TF_HIP_EVENT_DEFAULT)) != TF_HIP_SUCCESS) {
        ctx->start = NULL;
        hip_fail(NULL, rc, err, "hipEventCreateWithFlags");
        goto fail;
    }
    if ((rc = hip->hipEventCreateWithFlags(&ctx->end, TF_HIP_EVENT_DEFAULT)) != TF_HIP_SUCCESS) {
        ctx->end = NULL;
        hip_fail(NULL, rc, err, "hipEventCreateWithFlags");
        goto fail;
    }
    if ((rc = hip->hipStreamCreateWithFlags(&ctx->copy_stream, TF_HIP_STREAM_NON_BLOCKING)) !=
        TF_HIP_SUCCESS) {
        ctx->copy_stream = NULL;
        hip_fail(NULL, rc, err, "hipStreamCreateWithFlags");
        goto fail;
    }
    if ((rc = hip->hipEventCreateWithFlags(&ctx->copy_ready, TF_HIP_EVENT_DISABLE_TIMING)) !=
        TF_HIP_SUCCESS) {
        ctx->copy_ready = NULL;
        hip_fail(NULL, rc, err, "hipEventCreateWithFlags");
        goto fail;
    }
    if ((rc = hip->hipEventCreateWithFlags(&ctx->copy_done, TF_HIP_EVENT_DISABLE_TIMING)) !=
        TF_HIP_SUCCESS) {
        ctx->copy_done = NULL;
        hip_fail(NULL, rc, err, "hipEventCreateWithFlags");
        goto fail;
    }
    ctx->flush_words = flush_bytes(hip, ctx->dev, l2) / 4;
    if ((rc = hip->hipMalloc(&ctx->flush_buf, ctx->flush_words * 4)) != TF_HIP_SUCCESS) {
        ctx->flush_buf = NULL;
        hip_fail(NULL, rc, err, "hipMalloc (cache flush buffer)");
        goto fail;
    }

    /* ROCm SMI is optional: without it results carry no telemetry. */
    ctx->smi = tf_rocm_smi_load(NULL);
    if (ctx->smi) {
        const int index = smi_index(ctx->smi, hip, ctx->dev);
        if (index < 0)
            ctx->smi = NULL;
        else
            ctx->smi_dev = (uint32_t)index;
    }
    telemetry_start(ctx);
    *out = ctx;
    return 0;
fail:
    hip_close(ctx);
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

static int hip_load(struct tf_backend_ctx *ctx, const char *binary_path, const char *entry,
                    void **function, struct tf_error *err)
{
    const struct tf_hip_runtime *hip = ctx->hip;
    struct hip_function *f = tf_xcalloc(1, sizeof *f);
    char *image = NULL;
    tf_hip_error rc;

    if (!ctx->healthy) {
        tf_error_set(err, TF_ERR_BACKEND, "the HIP device is unusable after an earlier fault");
        goto fail;
    }
    if (read_file(binary_path, &image, err) != 0)
        goto fail;
    if ((rc = hip->hipModuleLoadData(&f->module, image)) != TF_HIP_SUCCESS) {
        f->module = NULL;
        hip_fail(ctx, rc, err, "hipModuleLoadData");
        goto fail;
    }
    if ((rc = hip->hipModuleGetFunction(&f->fn, f->module, entry)) != TF_HIP_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "entry point '%.100s' (declare it extern \"C\" __global__)",
                 entry);
        hip_fail(ctx, rc, err, what);
        goto fail;
    }
    /* Unlike cuFuncGetAttribute this may be unsupported by a runtime: then the
     * geometry check counts the dynamic shared memory only, and the runtime
     * still refuses a launch over the limit (an `invalid` result too). */
    if (hip->hipFuncGetAttribute(&f->static_shared, TF_HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                 f->fn) != TF_HIP_SUCCESS ||
        f->static_shared < 0)
        f->static_shared = 0;
    free(image);
    *function = f;
    return 0;
fail:
    if (f->module)
        hip->hipModuleUnload(f->module);
    free(f);
    free(image);
    *function = NULL;
    return -1;
}

static void hip_unload(struct tf_backend_ctx *ctx, void *function)
{
    struct hip_function *f = function;
    if (f == NULL)
        return;
    if (f->module)
        ctx->hip->hipModuleUnload(f->module);
    free(f);
}

static int hip_alloc(struct tf_backend_ctx *ctx, size_t bytes, void **ptr, struct tf_error *err)
{
    void *p = NULL;
    /* an empty buffer still needs a valid, distinct address */
    tf_hip_error rc = ctx->hip->hipMalloc(&p, bytes ? bytes : 256);
    if (rc != TF_HIP_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "hipMalloc(%zu bytes)", bytes);
        return hip_fail(ctx, rc, err, what);
    }
    /* The runner passes &ptr as the kernel parameter: the device pointer
     * itself, exactly what the kernel's pointer argument expects. */
    *ptr = p;
    return 0;
}

static void hip_release(struct tf_backend_ctx *ctx, void *ptr)
{
    if (ptr)
        ctx->hip->hipFree(ptr);
}

/* Copies go through our stream and wait for it: the synchronous hipMemcpy*
 * run on the null stream, which does not order with a non-blocking one. */
static int hip_upload(struct tf_backend_ctx *ctx, void *dst, const void *host, size_t bytes,
                      struct tf_error *err)
{
    tf_hip_error rc = ctx->hip->hipMemcpyHtoDAsync(dst, host, bytes, ctx->stream);
    if (rc == TF_HIP_SUCCESS)
        rc = ctx->hip->hipStreamSynchronize(ctx->stream);
    return rc == TF_HIP_SUCCESS ? 0 : hip_fail(ctx, rc, err, "hipMemcpyHtoDAsync");
}

static int hip_download(struct tf_backend_ctx *ctx, void *host, const void *src, size_t bytes,
                        struct tf_error *err)
{
    tf_hip_error rc = ctx->hip->hipMemcpyDtoHAsync(host, (tf_hip_deviceptr)(uintptr_t)src, bytes,
                                                   ctx->stream);
    if (rc == TF_HIP_SUCCESS)
        rc = ctx->hip->hipStreamSynchronize(ctx->stream);
    return rc == TF_HIP_SUCCESS ? 0 : hip_fail(ctx, rc, err, "hipMemcpyDtoHAsync");
}

/* TF_STATUS_INVALID + err if `g` exceeds a limit of the device for `f`, else OK. */
static int check_geometry(const struct tf_backend_ctx *ctx, const struct hip_function *f,
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

/* Geometry within the device's limits. Returns a status. (CUDA also raises
 * the dynamic shared memory opt-in here; AMD has none to raise.) */
static int launch_prepare(struct tf_backend_ctx *ctx, struct hip_function *f,
                          const struct tf_launch *g, struct tf_error *err)
{
    return check_geometry(ctx, f, g, err);
}

/* The status of a failed hipModuleLaunchKernel. */
static int launch_failed(struct tf_backend_ctx *ctx, tf_hip_error rc, struct tf_error *err)
{
    hip_fail(ctx, rc, err, "hipModuleLaunchKernel");
    if (is_sticky(rc))
        return TF_STATUS_RUNTIME_ERROR; /* an earlier fault surfaced */
    return is_configuration_error(rc) ? TF_STATUS_INVALID : TF_STATUS_LAUNCH_ERROR;
}

static int hip_launch(struct tf_backend_ctx *ctx, void *function, const struct tf_launch *g,
                      void **args, double *seconds, struct tf_error *err)
{
    const struct tf_hip_runtime *hip = ctx->hip;
    struct hip_function *f = function;
    tf_hip_error rc;

    if (!ctx->healthy) {
        tf_error_set(err, TF_ERR_BACKEND, "the HIP device is unusable after an earlier fault");
        return TF_STATUS_RUNTIME_ERROR;
    }
    int status = launch_prepare(ctx, f, g, err);
    if (status != TF_STATUS_OK)
        return status;
    if (seconds && (rc = hip->hipEventRecord(ctx->start, ctx->stream)) != TF_HIP_SUCCESS) {
        hip_fail(ctx, rc, err, "hipEventRecord");
        return TF_STATUS_RUNTIME_ERROR;
    }
    rc = hip->hipModuleLaunchKernel(f->fn, g->grid[0], g->grid[1], g->grid[2], g->block[0],
                                    g->block[1], g->block[2], (unsigned int)g->shared_bytes,
                                    ctx->stream, args, NULL);
    if (rc != TF_HIP_SUCCESS)
        return launch_failed(ctx, rc, err);
    if (seconds) {
        float ms = 0;
        if ((rc = hip->hipEventRecord(ctx->end, ctx->stream)) != TF_HIP_SUCCESS ||
            (rc = hip->hipEventSynchronize(ctx->end)) != TF_HIP_SUCCESS ||
            (rc = hip->hipEventElapsedTime(&ms, ctx->start, ctx->end)) != TF_HIP_SUCCESS) {
            /* whatever failed after the kernel was queued, it failed while running */
            hip_fail(ctx, rc, err, "kernel");
            ctx->healthy = 0;
            return TF_STATUS_RUNTIME_ERROR;
        }
        *seconds = (double)ms * 1e-3;
    } else if ((rc = hip->hipStreamSynchronize(ctx->stream)) != TF_HIP_SUCCESS) {
        hip_fail(ctx, rc, err, "kernel");
        ctx->healthy = 0;
        return TF_STATUS_RUNTIME_ERROR;
    }
    return TF_STATUS_OK;
}

/* A failure while queueing: drain what was queued, report, runtime_error. */
static int batch_failed(struct tf_backend_ctx *ctx, tf_hip_error rc, struct tf_error *err,
                        const char *what)
{
    ctx->batch_queued = 0;
    ctx->hip->hipStreamSynchronize(ctx->stream);
    hip_fail(ctx, rc, err, what);
    return TF_STATUS_RUNTIME_ERROR;
}

static int hip_enqueue(struct tf_backend_ctx *ctx, void *function, const struct tf_launch *g,
                       void **args, int count, int flush, struct tf_error *err)
{
    const struct tf_hip_runtime *hip = ctx->hip;
    struct hip_function *f = function;
    tf_hip_error rc;
    if (!ctx->healthy) {
        tf_error_set(err, TF_ERR_BACKEND, "the HIP device is unusable after an earlier fault");
        return TF_STATUS_RUNTIME_ERROR;
    }
    if (count < 1 || count > TF_MAX_BATCH || ctx->batch_queued)
        tf_die("hip_enqueue: %d launches with %d queued", count, ctx->batch_queued);
    int status = launch_prepare(ctx, f, g, err);
    if (status != TF_STATUS_OK)
        return status;
    for (; ctx->batch_events < count; ctx->batch_events++) {
        int i = ctx->batch_events;
        if ((rc = hip->hipEventCreateWithFlags(&ctx->batch_start[i], TF_HIP_EVENT_DEFAULT)) !=
            TF_HIP_SUCCESS)
            return batch_failed(ctx, rc, err, "hipEventCreateWithFlags");
        if ((rc = hip->hipEventCreateWithFlags(&ctx->batch_end[i], TF_HIP_EVENT_DEFAULT)) !=
            TF_HIP_SUCCESS) {
            hip->hipEventDestroy(ctx->batch_start[i]);
            return batch_failed(ctx, rc, err, "hipEventCreateWithFlags");
        }
    }
    for (int i = 0; i < count; i++) {
        /* The flush runs between the samples, outside their events. */
        if (flush && (rc = hip->hipMemsetD32Async(ctx->flush_buf, (int)++ctx->flush_value,
                                                  ctx->flush_words, ctx->stream)) !=
                         TF_HIP_SUCCESS)
            return batch_failed(ctx, rc, err, "hipMemsetD32Async (cache flush)");
        if ((rc = hip->hipEventRecord(ctx->batch_start[i], ctx->stream)) != TF_HIP_SUCCESS)
            return batch_failed(ctx, rc, err, "hipEventRecord");
        rc = hip->hipModuleLaunchKernel(f->fn, g->grid[0], g->grid[1], g->grid[2], g->block[0],
                                        g->block[1], g->block[2], (unsigned int)g->shared_bytes,
                                        ctx->stream, args, NULL);
        if (rc != TF_HIP_SUCCESS) {
            ctx->batch_queued = 0;
            hip->hipStreamSynchronize(ctx->stream);
            return launch_failed(ctx, rc, err);
        }
        if ((rc = hip->hipEventRecord(ctx->batch_end[i], ctx->stream)) != TF_HIP_SUCCESS)
            return batch_failed(ctx, rc, err, "hipEventRecord");
        ctx->batch_queued = i + 1;
    }
    return TF_STATUS_OK;
}

static int hip_collect(struct tf_backend_ctx *ctx, double *seconds, struct tf_error *err)
{
    const struct tf_hip_runtime *hip = ctx->hip;
    const int n = ctx->batch_queued;
    tf_hip_error rc;
    ctx->batch_queued = 0;
    if (n > 0 && (rc = hip->hipEventSynchronize(ctx->batch_end[n - 1])) != TF_HIP_SUCCESS) {
        hip_fail(ctx, rc, err, "kernel");
        ctx->healthy = 0;
        return TF_STATUS_RUNTIME_ERROR;
    }
    for (int i = 0; i < n; i++) {
        float ms = 0;
        if ((rc = hip->hipEventElapsedTime(&ms, ctx->batch_start[i], ctx->batch_end[i])) !=
            TF_HIP_SUCCESS) {
            hip_fail(ctx, rc, err, "hipEventElapsedTime");
            return TF_STATUS_RUNTIME_ERROR;
        }
        seconds[i] = (double)ms * 1e-3;
    }
    return TF_STATUS_OK;
}

static int hip_copy(struct tf_backend_ctx *ctx, void *dst, const void *src, size_t bytes,
                    struct tf_error *err)
{
    tf_hip_error rc = ctx->hip->hipMemcpyDtoDAsync(dst, (tf_hip_deviceptr)(uintptr_t)src, bytes,
                                                   ctx->stream);
    return rc == TF_HIP_SUCCESS ? 0 : hip_fail(ctx, rc, err, "hipMemcpyDtoDAsync");
}

/* Page-locked host memory: a download into pageable memory is a staged,
 * synchronous copy whatever the API's name says. */
static int hip_host_alloc(struct tf_backend_ctx *ctx, size_t bytes, void **ptr,
                          struct tf_error *err)
{
    tf_hip_error rc = ctx->hip->hipHostMalloc(ptr, bytes ? bytes : 1, TF_HIP_HOST_MALLOC_DEFAULT);
    if (rc != TF_HIP_SUCCESS) {
        *ptr = NULL;
        char what[96];
        snprintf(what, sizeof what, "hipHostMalloc(%zu bytes)", bytes);
        return hip_fail(ctx, rc, err, what);
    }
    return 0;
}

static void hip_host_free(struct tf_backend_ctx *ctx, void *ptr)
{
    if (ptr)
        ctx->hip->hipHostFree(ptr);
}

/* The copy stream waits for what the main stream has queued so far (an event
 * recorded there), then copies while the main stream goes on with the samples.
 * The copy stream runs in order: its last `copy_done` covers every copy. */
static int hip_download_async(struct tf_backend_ctx *ctx, void *host, const void *src,
                              size_t bytes, struct tf_error *err)
{
    const struct tf_hip_runtime *hip = ctx->hip;
    tf_hip_error rc;
    if ((rc = hip->hipEventRecord(ctx->copy_ready, ctx->stream)) != TF_HIP_SUCCESS)
        return hip_fail(ctx, rc, err, "hipEventRecord");
    if ((rc = hip->hipStreamWaitEvent(ctx->copy_stream, ctx->copy_ready, 0)) != TF_HIP_SUCCESS)
        return hip_fail(ctx, rc, err, "hipStreamWaitEvent");
    if ((rc = hip->hipMemcpyDtoHAsync(host, (tf_hip_deviceptr)(uintptr_t)src, bytes,
                                      ctx->copy_stream)) != TF_HIP_SUCCESS)
        return hip_fail(ctx, rc, err, "hipMemcpyDtoHAsync");
    if ((rc = hip->hipEventRecord(ctx->copy_done, ctx->copy_stream)) != TF_HIP_SUCCESS)
        return hip_fail(ctx, rc, err, "hipEventRecord");
    ctx->copies_queued = 1;
    return 0;
}

static int hip_download_wait(struct tf_backend_ctx *ctx, struct tf_error *err)
{
    if (!ctx->copies_queued)
        return 0;
    ctx->copies_queued = 0;
    tf_hip_error rc = ctx->hip->hipEventSynchronize(ctx->copy_done);
    if (rc != TF_HIP_SUCCESS) {
        hip_fail(ctx, rc, err, "hipMemcpyDtoHAsync");
        ctx->healthy = 0; /* the copy waited on the kernel: its fault surfaced here */
        return -1;
    }
    return 0;
}

static int hip_flush_cache(struct tf_backend_ctx *ctx, struct tf_error *err)
{
    /* A new value each time, so no layer can skip a write as redundant. */
    tf_hip_error rc = ctx->hip->hipMemsetD32Async(ctx->flush_buf, (int)++ctx->flush_value,
                                                  ctx->flush_words, ctx->stream);
    return rc == TF_HIP_SUCCESS ? 0 : hip_fail(ctx, rc, err, "hipMemsetD32Async (cache flush)");
}

static int hip_function_info(struct tf_backend_ctx *ctx, void *function, int32_t *registers,
                             int64_t *shared_bytes, int64_t *local_bytes, struct tf_error *err)
{
    const struct tf_hip_runtime *hip = ctx->hip;
    struct hip_function *f = function;
    int regs = -1, shared = -1, local = -1;
    tf_hip_error rc;
    *registers = -1;
    *shared_bytes = *local_bytes = -1;
    /* NUM_REGS: vector registers per thread (what limits occupancy on AMD);
     * LOCAL_SIZE_BYTES: the private segment (spills and stack) per thread */
    if ((rc = hip->hipFuncGetAttribute(&regs, TF_HIP_FUNC_ATTRIBUTE_NUM_REGS, f->fn)) !=
            TF_HIP_SUCCESS ||
        (rc = hip->hipFuncGetAttribute(&shared, TF_HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                       f->fn)) != TF_HIP_SUCCESS ||
        (rc = hip->hipFuncGetAttribute(&local, TF_HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f->fn)) !=
            TF_HIP_SUCCESS)
        return hip_fail(ctx, rc, err, "hipFuncGetAttribute");
    *registers = regs;
    *shared_bytes = shared;
    *local_bytes = local;
    return 0;
}

static int hip_telemetry(struct tf_backend_ctx *ctx, struct tf_telemetry *t, struct tf_error *err)
{
    if (ctx->smi == NULL) {
        t->sm_clock_mhz = t->power_w = t->energy_mj = t->temperature_c = NAN;
        t->throttled = -1;
        return tf_error_set(err, TF_ERR_BACKEND, "no ROCm SMI: telemetry unavailable");
    }
    pthread_mutex_lock(&ctx->lock);
    *t = ctx->telemetry;
    pthread_mutex_unlock(&ctx->lock);
    return 0;
}

static int hip_healthy(struct tf_backend_ctx *ctx)
{
    return ctx != NULL && ctx->healthy;
}

const struct tf_backend tf_backend_hip = {
    .version = TF_BACKEND_VERSION,
    .name = "hip",
    .language = "cuda", /* the same single-source kernels, through the HIP header */
    .probe = hip_probe,
    .device_count = hip_device_count,
    .describe = hip_describe,
    .compiler_id = hip_compiler_id,
    .compile = hip_compile,
    .compiler_probe = hip_compiler_probe,
    .open = hip_open,
    .close = hip_close,
    .load = hip_load,
    .unload = hip_unload,
    .alloc = hip_alloc,
    .release = hip_release,
    .upload = hip_upload,
    .download = hip_download,
    .launch = hip_launch,
    .flush_cache = hip_flush_cache,
    .function_info = hip_function_info,
    .telemetry = hip_telemetry,
    .healthy = hip_healthy,
    .enqueue = hip_enqueue,
    .collect = hip_collect,
    .copy = hip_copy,
    .host_alloc = hip_host_alloc,
    .host_free = hip_host_free,
    .download_async = hip_download_async,
    .download_wait = hip_download_wait,
};
