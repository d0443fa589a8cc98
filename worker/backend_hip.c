/* backend_hip.c - AMD GPUs through the HIP runtime, hipRTC and ROCm SMI.
 *
 * Nothing here links against ROCm: hip_api.c dlopens libamdhip64, hipRTC
 * (inside libamdhip64 up to ROCm 5, libhiprtc from ROCm 6) and librocm_smi64
 * on first use, so a node without them still runs the binary and probe() says
 * why this backend is unusable. Compiling needs no device: hipRTC turns the
 * variant's CUDA-dialect source (with the HIP flavour of the portability
 * header handed over in memory as "tunefarm.h") into an AMDGPU code object for
 * the exact gfxXXX of the target, written to the caller's path as hipRTC
 * returns it (ROCm 5.2: a bare ELF; hipModuleLoadData takes a clang offload
 * bundle as well). The target is checked against the list of the code object
 * manager (comgr) first, because ROCm 5.2's hipRTC aborts the process on a
 * target it does not know (see hip_api.c).
 *
 * Running is gpu_backend.c's, the very code that runs NVIDIA GPUs: this file
 * gives it HIP's calls (the vendor table at the end). open() makes the device
 * current (HIP has no explicit contexts); AMD has no shared-memory opt-in, a
 * block may use all the LDS the device reports per block without asking; the
 * cache flush also covers MI300's Infinity Cache. Faults the runtime reports
 * (illegal address, launch failure...) are the sticky ones, as on CUDA; note
 * that by default ROCm's HSA runtime aborts the whole process on a GPU memory
 * fault before HIP can report it, so on AMD such a variant usually shows as
 * the runner dying, which the worker records and recovers from in the same
 * way. Telemetry comes from ROCm SMI where it is present (clock, power,
 * energy, temperature; no throttle flag), matched to the device by PCI address.
 *
 * No AMD GPU was available to this project when this file was written: the
 * discovery, compile and probe paths are tested (tests/unit/test_hip.c, on
 * Debian's ROCm 5.2.3), and the run path is gpu_backend.c, tested on NVIDIA
 * GPUs; the HIP calls below are compiled and reviewed only. */
#include "backend.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../schema/status.h"
#include "cache.h"
#include "gpu_backend.h"
#include "hip_api.h"
#include "portability.h"
#include "provenance.h"

/* ---- errors ---- */

/* Faults after which the device can run nothing more in this process. */
static int is_sticky(int rc)
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
static int is_configuration_error(int rc)
{
    return rc == TF_HIP_ERROR_INVALID_VALUE || rc == TF_HIP_ERROR_INVALID_CONFIGURATION ||
           rc == TF_HIP_ERROR_LAUNCH_OUT_OF_RESOURCES ||
           rc == TF_HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
}

/* Fill err with "what: hipErrorX (text)"; returns -1. */
static int hip_fail(tf_hip_error rc, struct tf_error *err, const char *what)
{
    char text[256];
    tf_hip_error_text(rc, text, sizeof text);
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
        hip_fail(rc, err, "hipInit failed");
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
        return hip_fail(rc, err, "hipGetDeviceCount failed");
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

/* One device attribute, for a tf_device or the limits of an opened device. */
static int get_attr(const struct tf_hip_runtime *hip, int dev, int attr, int *out,
                    struct tf_error *err)
{
    tf_hip_error rc = hip->hipDeviceGetAttribute(out, attr, dev);
    if (rc != TF_HIP_SUCCESS) {
        char what[64];
        snprintf(what, sizeof what, "hipDeviceGetAttribute(%d)", attr);
        return hip_fail(rc, err, what);
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

/* The LDS of one CU: the AMD-specific attribute, else the CUDA-compatible one
 * (documented "CUDA only" in older ROCm), else the per-block opt-in, which a
 * CU holds at least (one block's LDS never exceeds its CU's). */
static int64_t shared_per_cu(const struct tf_hip_runtime *hip, int dev, int64_t optin)
{
    static const int attrs[] = {TF_HIP_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                                TF_HIP_ATTR_SHARED_MEM_PER_MULTIPROCESSOR};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int v = 0;
        if (hip->hipDeviceGetAttribute(&v, attrs[i], dev) == TF_HIP_SUCCESS && v >= optin)
            return v;
    }
    return optin;
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
        return hip_fail(rc, err, what);
    }
    tf_strlcpy(out->backend, "hip", sizeof out->backend);
    tf_strlcpy(out->vendor, "AMD", sizeof out->vendor);
    if ((rc = hip->hipDeviceGetName(out->name, (int)sizeof out->name, dev)) != TF_HIP_SUCCESS)
        return hip_fail(rc, err, "hipDeviceGetName");
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
        return hip_fail(rc, err, "hipGetDeviceProperties");
    out->arch[strcspn(out->arch, ":")] = '\0';
    if (strncmp(out->arch, "gfx", 3) != 0)
        return tf_error_set(err, TF_ERR_BACKEND, "device %d reports architecture '%s', not gfx*",
                            ordinal, out->arch);

    tf_hip_uuid uuid;
    if (hip->hipDeviceGetUuid && hip->hipDeviceGetUuid(&uuid, dev) == TF_HIP_SUCCESS)
        format_uuid(&uuid, out->uuid, sizeof out->uuid);
    if ((rc = hip->hipDeviceGetPCIBusId(out->pci_bus, (int)sizeof out->pci_bus, ordinal)) !=
        TF_HIP_SUCCESS)
        return hip_fail(rc, err, "hipDeviceGetPCIBusId");
    gethostname(out->host, sizeof out->host - 1);
    size_t total = 0;
    if ((rc = hip->hipDeviceTotalMem(&total, dev)) != TF_HIP_SUCCESS)
        return hip_fail(rc, err, "hipDeviceTotalMem");
    out->memory_bytes = total;

    /* driver_version: the amdgpu kernel driver's release ("6.8.5"), which is what
     * changes under an operator's feet; an amdgpu built into the kernel has no
     * version of its own and goes with the kernel's release ("linux 6.8.0-45").
     * runtime_version: the HIP version the runtime implements and the ROCm
     * release it came with ("HIP 6.2.41133 (ROCm 6.2.0)"). */
    if ((rc = hip->hipDriverGetVersion(&version)) != TF_HIP_SUCCESS)
        return hip_fail(rc, err, "hipDriverGetVersion");
    char text[160], hipv[32], rocm[32];
    if (tf_provenance_amdgpu_version("/sys", out->driver_version, sizeof out->driver_version)) {
        struct utsname u;
        if (uname(&u) == 0) {
            snprintf(text, sizeof text, "linux %s", u.release);
            tf_strlcpy(out->driver_version, text, sizeof out->driver_version);
        }
    }
    const char *root = getenv("ROCM_PATH");
    format_hip_version(version, hipv, sizeof hipv);
    if (tf_provenance_rocm_version(root && root[0] ? root : "/opt/rocm", rocm, sizeof rocm) == 0)
        snprintf(text, sizeof text, "HIP %s (ROCm %s)", hipv, rocm);
    else
        snprintf(text, sizeof text, "HIP %s", hipv);
    tf_strlcpy(out->runtime_version, text, sizeof out->runtime_version);
    hiprtc_version(out->compiler_version, sizeof out->compiler_version);
    tf_provenance_amdgpu("/sys", out->pci_bus, out);

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
    out->props[TF_DEVPROP_MAX_SHARED_PER_SM] =
        shared_per_cu(hip, ordinal, out->props[TF_DEVPROP_MAX_SHARED_OPTIN]);
    out->props[TF_DEVPROP_SIMD_BYTES] = 0;
    out->compute_units = (uint32_t)out->props[TF_DEVPROP_SM_COUNT];
    return 0;
}

/* The options of every variant's compile after the architecture (and the
 * source's folder as -I): in the identity too, so that a tunefarm that
 * compiles differently misses an older one's binaries in a shared cache
 * instead of reusing them. */
static const char *const hip_fixed_options[] = {"-std=c++17"};
#define HIP_NFIXED (sizeof hip_fixed_options / sizeof hip_fixed_options[0])

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
    size_t at = (size_t)snprintf(ident, sizeof ident, "%s | %s | options", rt->path, version);
    for (size_t i = 0; i < HIP_NFIXED && at < sizeof ident; i++)
        at += (size_t)snprintf(ident + at, sizeof ident - at, " %s", hip_fixed_options[i]);
    if (at < sizeof ident)
        snprintf(ident + at, sizeof ident - at, " -I<the source's folder>");
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

static int hip_compile(const struct tf_compile_input *in, struct tf_compile_output *out,
                       struct tf_error *err)
{
    const struct tf_hiprtc *rt;
    tf_hiprtc_program prog = NULL;
    const char **options = NULL;
    char arch_option[64];
    char *log = NULL, *code = NULL, *include_option = NULL;
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
    options = tf_xcalloc((size_t)in->ndefines + (size_t)in->noptions + HIP_NFIXED + 3,
                         sizeof *options);
    snprintf(arch_option, sizeof arch_option, "--offload-arch=%s", in->arch);
    options[n++] = arch_option;
    for (size_t i = 0; i < HIP_NFIXED; i++)
        options[n++] = hip_fixed_options[i];
    /* A kernel's own headers beside its source (#include "helper.h"): NVRTC
     * looks in the source's folder by its name, hipRTC only where -I says. */
    const char *slash = in->source_name ? strrchr(in->source_name, '/') : NULL;
    if (slash != NULL) {
        include_option = tf_xasprintf("-I%.*s", (int)(slash - in->source_name), in->source_name);
        options[n++] = include_option;
    }
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
    if (tf_cache_write_file(in->output_path, code, code_size, err) != 0)
        goto fail;
    out->ok = 1;
    out->log = log; /* warnings, if any */
    log = NULL;
    rc = 0;
fail:
    if (prog)
        rt->hiprtcDestroyProgram(&prog);
    free(options);
    free(include_option);
    free(log);
    free(code);
    return rc;
}

/* ---- the vendor calls gpu_backend.c runs variants with ---- */

/* An opened device: the runtime and the device id (hipDevice_t is the ordinal). */
struct hip_device {
    const struct tf_hip_runtime *hip;
    int dev;
};

static void hip_error_text(int rc, char *out, size_t cap)
{
    tf_hip_error_text(rc, out, cap);
}

/* HIP's primary context belongs to the process: nothing to release. */
static void hip_device_close(void *device)
{
    free(device);
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

static int hip_device_open(int ordinal, void **device, struct tf_gpu_limits *lim,
                           struct tf_error *err)
{
    struct hip_device *d = tf_xcalloc(1, sizeof *d);
    tf_hip_error rc;
    tf_hip_device handle;
    int l2 = 0;

    *device = NULL;
    if ((d->hip = runtime_ready(err)) == NULL)
        goto fail;
    const struct tf_hip_runtime *hip = d->hip;
    if ((rc = hip->hipDeviceGet(&handle, ordinal)) != TF_HIP_SUCCESS) {
        hip_fail(rc, err, "hipDeviceGet");
        goto fail;
    }
    d->dev = ordinal;
    static const int limit_attrs[] = {
        TF_HIP_ATTR_MAX_THREADS_PER_BLOCK,
        TF_HIP_ATTR_MAX_BLOCK_DIM_X, TF_HIP_ATTR_MAX_BLOCK_DIM_Y,
        TF_HIP_ATTR_MAX_BLOCK_DIM_Z, TF_HIP_ATTR_MAX_GRID_DIM_X,
        TF_HIP_ATTR_MAX_GRID_DIM_Y, TF_HIP_ATTR_MAX_GRID_DIM_Z,
        TF_HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK,
        TF_HIP_ATTR_L2_CACHE_SIZE,
    };
    int *const limit_dst[] = {
        &lim->max_threads, &lim->max_block[0], &lim->max_block[1], &lim->max_block[2],
        &lim->max_grid[0], &lim->max_grid[1], &lim->max_grid[2], &lim->max_shared, &l2,
    };
    for (size_t i = 0; i < sizeof limit_attrs / sizeof limit_attrs[0]; i++)
        if (get_attr(hip, d->dev, limit_attrs[i], limit_dst[i], err) != 0)
            goto fail;
    lim->max_shared_optin = shared_optin(hip, d->dev, lim->max_shared);
    lim->flush_bytes = flush_bytes(hip, d->dev, l2);
    /* HIP has no explicit contexts: the device's primary one becomes current. */
    if ((rc = hip->hipSetDevice(d->dev)) != TF_HIP_SUCCESS) {
        hip_fail(rc, err, "hipSetDevice");
        goto fail;
    }
    *device = d;
    return 0;
fail:
    hip_device_close(d);
    return -1;
}

/* The handles gpu_backend.c holds are the runtime's, cast. */
#define HIP(device) (((struct hip_device *)(device))->hip)

static int hip_stream_create(void *device, tf_gpu_stream *stream)
{
    return HIP(device)->hipStreamCreateWithFlags((tf_hip_stream *)stream,
                                                 TF_HIP_STREAM_NON_BLOCKING);
}

static int hip_stream_destroy(void *device, tf_gpu_stream stream)
{
    return HIP(device)->hipStreamDestroy((tf_hip_stream)stream);
}

static int hip_stream_synchronize(void *device, tf_gpu_stream stream)
{
    return HIP(device)->hipStreamSynchronize((tf_hip_stream)stream);
}

static int hip_stream_wait_event(void *device, tf_gpu_stream stream, tf_gpu_event event)
{
    return HIP(device)->hipStreamWaitEvent((tf_hip_stream)stream, (tf_hip_event)event, 0);
}

static int hip_event_create(void *device, tf_gpu_event *event, int flags)
{
    /* (this backend asks HIP for no blocking sync: TF_GPU_EVENT_WAITED changes nothing) */
    return HIP(device)->hipEventCreateWithFlags(
        (tf_hip_event *)event,
        flags & TF_GPU_EVENT_TIMING ? TF_HIP_EVENT_DEFAULT : TF_HIP_EVENT_DISABLE_TIMING);
}

static int hip_event_destroy(void *device, tf_gpu_event event)
{
    return HIP(device)->hipEventDestroy((tf_hip_event)event);
}

static int hip_event_record(void *device, tf_gpu_event event, tf_gpu_stream stream)
{
    return HIP(device)->hipEventRecord((tf_hip_event)event, (tf_hip_stream)stream);
}

static int hip_event_synchronize(void *device, tf_gpu_event event)
{
    return HIP(device)->hipEventSynchronize((tf_hip_event)event);
}

static int hip_event_elapsed_ms(void *device, float *ms, tf_gpu_event start, tf_gpu_event end)
{
    return HIP(device)->hipEventElapsedTime(ms, (tf_hip_event)start, (tf_hip_event)end);
}

static int hip_module_load(void *device, tf_gpu_module *module, const void *image)
{
    return HIP(device)->hipModuleLoadData((tf_hip_module *)module, image);
}

static int hip_module_unload(void *device, tf_gpu_module module)
{
    return HIP(device)->hipModuleUnload((tf_hip_module)module);
}

static int hip_module_function(void *device, tf_gpu_function *function, tf_gpu_module module,
                               const char *entry)
{
    return HIP(device)->hipModuleGetFunction((tf_hip_function *)function, (tf_hip_module)module,
                                             entry);
}

/* NUM_REGS: vector registers per thread (what limits occupancy on AMD);
 * LOCAL_SIZE_BYTES: the private segment (spills and stack) per thread. */
static int hip_function_attribute(void *device, int *value, enum tf_gpu_function_attribute what,
                                  tf_gpu_function function)
{
    static const int attr[] = {
        [TF_GPU_FUNCTION_REGISTERS] = TF_HIP_FUNC_ATTRIBUTE_NUM_REGS,
        [TF_GPU_FUNCTION_STATIC_SHARED] = TF_HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
        [TF_GPU_FUNCTION_LOCAL_BYTES] = TF_HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
    };
    return HIP(device)->hipFuncGetAttribute(value, attr[what], (tf_hip_function)function);
}

static int hip_launch(void *device, tf_gpu_function function, const struct tf_launch *g,
                      tf_gpu_stream stream, void **args)
{
    return HIP(device)->hipModuleLaunchKernel((tf_hip_function)function, g->grid[0], g->grid[1],
                                              g->grid[2], g->block[0], g->block[1], g->block[2],
                                              (unsigned int)g->shared_bytes,
                                              (tf_hip_stream)stream, args, NULL);
}

static int hip_mem_alloc(void *device, void **ptr, size_t bytes)
{
    return HIP(device)->hipMalloc(ptr, bytes);
}

static int hip_mem_free(void *device, void *ptr)
{
    return HIP(device)->hipFree(ptr);
}

/* hipDeviceptr_t is a void *: device pointers pass as they are. */
static int hip_copy_to_device(void *device, void *dst, const void *src, size_t bytes,
                              tf_gpu_stream stream)
{
    return HIP(device)->hipMemcpyHtoDAsync(dst, src, bytes, (tf_hip_stream)stream);
}

static int hip_copy_to_host(void *device, void *dst, const void *src, size_t bytes,
                            tf_gpu_stream stream)
{
    return HIP(device)->hipMemcpyDtoHAsync(dst, (tf_hip_deviceptr)(uintptr_t)src, bytes,
                                           (tf_hip_stream)stream);
}

static int hip_copy_on_device(void *device, void *dst, const void *src, size_t bytes,
                              tf_gpu_stream stream)
{
    return HIP(device)->hipMemcpyDtoDAsync(dst, (tf_hip_deviceptr)(uintptr_t)src, bytes,
                                           (tf_hip_stream)stream);
}

static int hip_fill_words(void *device, void *dst, unsigned value, size_t words,
                          tf_gpu_stream stream)
{
    return HIP(device)->hipMemsetD32Async(dst, (int)value, words, (tf_hip_stream)stream);
}

static int hip_host_alloc(void *device, void **ptr, size_t bytes)
{
    return HIP(device)->hipHostMalloc(ptr, bytes, TF_HIP_HOST_MALLOC_DEFAULT);
}

static int hip_host_free(void *device, void *ptr)
{
    return HIP(device)->hipHostFree(ptr);
}

/* ROCm SMI's index for the device. */
struct hip_sensor {
    const struct tf_rocm_smi *smi;
    uint32_t dev;
};

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

static void *hip_sensor_open(void *device)
{
    const struct hip_device *d = device;
    const struct tf_rocm_smi *smi = tf_rocm_smi_load(NULL);
    if (smi == NULL)
        return NULL;
    const int index = smi_index(smi, d->hip, d->dev);
    if (index < 0)
        return NULL;
    struct hip_sensor *s = tf_xcalloc(1, sizeof *s);
    s->smi = smi;
    s->dev = (uint32_t)index;
    return s;
}

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
static void hip_sensor_read(void *sensor, struct tf_telemetry *t)
{
    const struct hip_sensor *s = sensor;
    const struct tf_rocm_smi *smi = s->smi;
    const uint32_t d = s->dev;
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

/* ROCm SMI's energy accumulator, in counts of `resolution` microjoules, read now. */
static int hip_sensor_energy(void *sensor, double *joules, char *why, size_t cap)
{
    const struct hip_sensor *s = sensor;
    uint64_t count = 0, stamp = 0;
    float resolution = 0;
    const tf_rsmi_status rc = s->smi->rsmi_dev_energy_count_get(s->dev, &count, &resolution,
                                                                &stamp);
    if (rc == TF_RSMI_STATUS_SUCCESS && resolution > 0) {
        *joules = (double)count * resolution * 1e-6;
        return 0;
    }
    if (rc == TF_RSMI_STATUS_NOT_SUPPORTED) {
        snprintf(why, cap, "rsmi_dev_energy_count_get is not supported on this device");
        return 1;
    }
    snprintf(why, cap, "rsmi_dev_energy_count_get failed (ROCm SMI status %d, resolution %g)",
             rc, (double)resolution);
    return -1;
}

static const struct tf_gpu_vendor hip_vendor = {
    .version = TF_GPU_VENDOR_VERSION,
    .name = "HIP",
    .sensor_name = "ROCm SMI",
    .error_text = hip_error_text,
    .is_sticky = is_sticky,
    .is_configuration_error = is_configuration_error,
    .out_of_memory = TF_HIP_ERROR_OUT_OF_MEMORY,
    .device_open = hip_device_open,
    .device_close = hip_device_close,
    .stream_create = hip_stream_create,
    .stream_destroy = hip_stream_destroy,
    .stream_synchronize = hip_stream_synchronize,
    .stream_wait_event = hip_stream_wait_event,
    .event_create = hip_event_create,
    .event_destroy = hip_event_destroy,
    .event_record = hip_event_record,
    .event_synchronize = hip_event_synchronize,
    .event_elapsed_ms = hip_event_elapsed_ms,
    .module_load = hip_module_load,
    .module_unload = hip_module_unload,
    .module_function = hip_module_function,
    .function_attribute = hip_function_attribute,
    .function_allow_shared = NULL, /* no opt-in on AMD */
    .launch = hip_launch,
    .mem_alloc = hip_mem_alloc,
    .mem_free = hip_mem_free,
    .copy_to_device = hip_copy_to_device,
    .copy_to_host = hip_copy_to_host,
    .copy_on_device = hip_copy_on_device,
    .fill_words = hip_fill_words,
    .host_alloc = hip_host_alloc,
    .host_free = hip_host_free,
    .sensor_open = hip_sensor_open,
    .sensor_read = hip_sensor_read,
    .sensor_energy = hip_sensor_energy,
    .sensor_close = free,
};

static int hip_open(int ordinal, struct tf_backend_ctx **ctx, struct tf_error *err)
{
    return tf_gpu_open(&hip_vendor, ordinal, ctx, err);
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
    TF_GPU_RUN_MEMBERS,
};
