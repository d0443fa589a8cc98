/* hip_api.c - dlopen'ing the AMD libraries: HIP runtime, hipRTC, comgr, ROCm SMI.
 *
 * Like cuda_api.c: each library is loaded at most once per process, under
 * pthread_once, into a static table of function pointers, and the outcome
 * (the table, or the reason it cannot be used) is kept for every later
 * caller. Libraries are never dlclose'd. A symbol is looked up under each of
 * its names in turn; a missing required symbol makes the whole library
 * unusable with a message naming it, a missing optional one leaves its
 * member NULL.
 *
 * Where hipRTC lives depends on the ROCm release: up to ROCm 5 its hiprtc*
 * functions are inside libamdhip64 (Debian's 5.2.3 is so), from ROCm 6 on
 * they are in libhiprtc.so.N beside it (.so.5 is tried too, for a 5.x build
 * configured to split it out). The separate library is tried first and the
 * runtime's symbols after. Comgr (the code object manager that hipRTC drives)
 * is looked up too, for one reason: given a target it does not know, ROCm
 * 5.2's hipRTC does not fail, it aborts the process (comgr's
 * amd_comgr_action_info_set_isa_name fails, hipRTC ignores that and frees a
 * dangling pointer in amd_comgr_destroy_action_info). backend_hip.c checks a
 * target against comgr's list first, so an unknown one is a compile error. */
#include "hip_api.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The hipDeviceProp_t offsets the declarations promise (LP64). */
_Static_assert(offsetof(struct tf_hip_prop_r0000, gcn_arch_name) == 396,
               "hipDeviceProp_tR0000.gcnArchName is at 396");
_Static_assert(offsetof(struct tf_hip_prop_r0600, gcn_arch_name) == 1160,
               "hipDeviceProp_tR0600.gcnArchName is at 1160");
_Static_assert(sizeof(struct tf_rsmi_frequencies_v5) == 264, "ROCm SMI 5 rsmi_frequencies_t");
_Static_assert(sizeof(struct tf_rsmi_frequencies_v6) == 280, "ROCm SMI 6 rsmi_frequencies_t");

/* One entry point: where it goes in the table, whether it may be missing, its
 * symbol names in order of preference. */
struct symbol {
    size_t offset;
    int optional;
    const char *names[3];
};

/* Resolve `syms` from `lib` into `table`; -1 + err naming the first missing required one. */
static int resolve(void *lib, const char *libname, const struct symbol *syms, size_t n,
                   void *table, struct tf_error *err)
{
    for (size_t i = 0; i < n; i++) {
        void *p = NULL;
        for (int j = 0; j < 3 && syms[i].names[j] && p == NULL; j++)
            p = dlsym(lib, syms[i].names[j]);
        if (p == NULL && !syms[i].optional)
            return tf_error_set(err, TF_ERR_BACKEND, "%s has no symbol %s (library too old?)",
                                libname, syms[i].names[0]);
        /* POSIX guarantees object and function pointers share a representation here */
        memcpy((char *)table + syms[i].offset, &p, sizeof p);
    }
    return 0;
}

#define SYM(type, member, ...) {offsetof(struct type, member), 0, {__VA_ARGS__}}
#define OPT(type, member, ...) {offsetof(struct type, member), 1, {__VA_ARGS__}}
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* dlopen the first of `names` that loads, by the search path, then each under
 * $ROCM_PATH/lib and /opt/rocm/lib (ROCm's own packages install there, outside
 * the loader's path); the name that loaded into `used`. NULL if none. */
static void *open_first(const char *const *names, size_t n, char *used, size_t cap)
{
    const char *rocm = getenv("ROCM_PATH");
    const char *dirs[] = {NULL, rocm && rocm[0] ? rocm : NULL, "/opt/rocm"};
    for (size_t d = 0; d < COUNT(dirs); d++) {
        if (d > 0 && dirs[d] == NULL)
            continue;
        for (size_t i = 0; i < n; i++) {
            char path[PATH_MAX];
            if (d == 0)
                snprintf(path, sizeof path, "%s", names[i]);
            else
                snprintf(path, sizeof path, "%s/lib/%s", dirs[d], names[i]);
            void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (lib) {
                tf_strlcpy(used, path, cap);
                return lib;
            }
        }
    }
    return NULL;
}

/* ---- HIP runtime ---- */

static const char *const runtime_names[] = {
    "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so",
};

static const struct symbol runtime_symbols[] = {
    SYM(tf_hip_runtime, hipGetErrorName, "hipGetErrorName"),
    SYM(tf_hip_runtime, hipGetErrorString, "hipGetErrorString"),
    SYM(tf_hip_runtime, hipInit, "hipInit"),
    SYM(tf_hip_runtime, hipDriverGetVersion, "hipDriverGetVersion"),
    SYM(tf_hip_runtime, hipRuntimeGetVersion, "hipRuntimeGetVersion"),
    SYM(tf_hip_runtime, hipGetDeviceCount, "hipGetDeviceCount"),
    SYM(tf_hip_runtime, hipDeviceGet, "hipDeviceGet"),
    SYM(tf_hip_runtime, hipDeviceGetName, "hipDeviceGetName"),
    SYM(tf_hip_runtime, hipDeviceGetAttribute, "hipDeviceGetAttribute"),
    SYM(tf_hip_runtime, hipDeviceTotalMem, "hipDeviceTotalMem"),
    SYM(tf_hip_runtime, hipDeviceGetPCIBusId, "hipDeviceGetPCIBusId"),
    OPT(tf_hip_runtime, hipDeviceGetUuid, "hipDeviceGetUuid"),
    SYM(tf_hip_runtime, hipGetDeviceProperties, "hipGetDevicePropertiesR0600",
        "hipGetDeviceProperties"),
    SYM(tf_hip_runtime, hipSetDevice, "hipSetDevice"),
    SYM(tf_hip_runtime, hipDeviceSynchronize, "hipDeviceSynchronize"),
    SYM(tf_hip_runtime, hipStreamCreateWithFlags, "hipStreamCreateWithFlags"),
    SYM(tf_hip_runtime, hipStreamDestroy, "hipStreamDestroy"),
    SYM(tf_hip_runtime, hipStreamSynchronize, "hipStreamSynchronize"),
    SYM(tf_hip_runtime, hipStreamWaitEvent, "hipStreamWaitEvent"),
    SYM(tf_hip_runtime, hipEventCreateWithFlags, "hipEventCreateWithFlags"),
    SYM(tf_hip_runtime, hipEventDestroy, "hipEventDestroy"),
    SYM(tf_hip_runtime, hipEventRecord, "hipEventRecord"),
    SYM(tf_hip_runtime, hipEventSynchronize, "hipEventSynchronize"),
    SYM(tf_hip_runtime, hipEventElapsedTime, "hipEventElapsedTime"),
    SYM(tf_hip_runtime, hipModuleLoadData, "hipModuleLoadData"),
    SYM(tf_hip_runtime, hipModuleUnload, "hipModuleUnload"),
    SYM(tf_hip_runtime, hipModuleGetFunction, "hipModuleGetFunction"),
    SYM(tf_hip_runtime, hipFuncGetAttribute, "hipFuncGetAttribute"),
    SYM(tf_hip_runtime, hipModuleLaunchKernel, "hipModuleLaunchKernel"),
    SYM(tf_hip_runtime, hipMalloc, "hipMalloc"),
    SYM(tf_hip_runtime, hipFree, "hipFree"),
    SYM(tf_hip_runtime, hipMemcpyHtoDAsync, "hipMemcpyHtoDAsync"),
    SYM(tf_hip_runtime, hipMemcpyDtoHAsync, "hipMemcpyDtoHAsync"),
    SYM(tf_hip_runtime, hipMemcpyDtoDAsync, "hipMemcpyDtoDAsync"),
    SYM(tf_hip_runtime, hipMemsetD32Async, "hipMemsetD32Async"),
    SYM(tf_hip_runtime, hipHostMalloc, "hipHostMalloc", "hipHostAlloc"),
    SYM(tf_hip_runtime, hipHostFree, "hipHostFree"),
};

static pthread_once_t runtime_once = PTHREAD_ONCE_INIT;
static struct tf_hip_runtime runtime;
static int runtime_ok;
static struct tf_error runtime_err;

static void runtime_init(void)
{
    void *lib = open_first(runtime_names, COUNT(runtime_names), runtime.path, sizeof runtime.path);
    if (lib == NULL) {
        tf_error_set(&runtime_err, TF_ERR_BACKEND,
                     "no libamdhip64 (the HIP runtime: libamdhip64.so.7/.6/.5 not found by the "
                     "loader, under $ROCM_PATH/lib or /opt/rocm/lib)");
        return;
    }
    if (resolve(lib, runtime.path, runtime_symbols, COUNT(runtime_symbols), &runtime,
                &runtime_err) != 0)
        return;
    runtime.props_r0600 = dlsym(lib, "hipGetDevicePropertiesR0600") != NULL;
    /* hipRuntimeGetVersion reports the version compiled into the library
     * (5.x); 6.x may initialise HIP first, harmless here: every caller of
     * this loader is about to hipInit anyway. */
    if (runtime.hipRuntimeGetVersion(&runtime.version) != TF_HIP_SUCCESS)
        runtime.version = 0;
    /* The attribute numbers and error codes above are ROCm 5+ ones. */
    if (runtime.version > 0 && runtime.version < 50000000) {
        tf_error_set(&runtime_err, TF_ERR_BACKEND,
                     "%s is HIP %d.%d, older than ROCm 5 (not supported)", runtime.path,
                     runtime.version / 10000000, runtime.version / 100000 % 100);
        return;
    }
    runtime_ok = 1;
}

const struct tf_hip_runtime *tf_hip_runtime_load(struct tf_error *err)
{
    pthread_once(&runtime_once, runtime_init);
    if (!runtime_ok) {
        if (err)
            *err = runtime_err;
        return NULL;
    }
    return &runtime;
}

/* ---- hipRTC and comgr ---- */

static const struct symbol hiprtc_symbols[] = {
    SYM(tf_hiprtc, hiprtcGetErrorString, "hiprtcGetErrorString"),
    SYM(tf_hiprtc, hiprtcCreateProgram, "hiprtcCreateProgram"),
    SYM(tf_hiprtc, hiprtcDestroyProgram, "hiprtcDestroyProgram"),
    SYM(tf_hiprtc, hiprtcCompileProgram, "hiprtcCompileProgram"),
    SYM(tf_hiprtc, hiprtcGetProgramLogSize, "hiprtcGetProgramLogSize"),
    SYM(tf_hiprtc, hiprtcGetProgramLog, "hiprtcGetProgramLog"),
    SYM(tf_hiprtc, hiprtcGetCodeSize, "hiprtcGetCodeSize"),
    SYM(tf_hiprtc, hiprtcGetCode, "hiprtcGetCode"),
};

static const struct symbol comgr_symbols[] = {
    SYM(tf_hiprtc, amd_comgr_get_version, "amd_comgr_get_version"),
    SYM(tf_hiprtc, amd_comgr_get_isa_count, "amd_comgr_get_isa_count"),
    SYM(tf_hiprtc, amd_comgr_get_isa_name, "amd_comgr_get_isa_name"),
};

static pthread_once_t hiprtc_once = PTHREAD_ONCE_INIT;
static struct tf_hiprtc hiprtc;
static int hiprtc_ok;
static struct tf_error hiprtc_err;

/* The release in the real file name of the library holding `symbol`
 * (".../libamdhip64.so.5.2.21153" gives "5.2.21153"), or "" if it has none:
 * hiprtcVersion cannot serve, ROCm 5.2's returns a constant 9.0. */
static void library_version(const void *symbol, char *out, size_t cap)
{
    Dl_info info;
    char real[PATH_MAX];
    out[0] = '\0';
    if (dladdr(symbol, &info) == 0 || info.dli_fname == NULL ||
        realpath(info.dli_fname, real) == NULL)
        return;
    const char *so = strstr(real, ".so.");
    if (so && strchr(so + 4, '.'))
        tf_strlcpy(out, so + 4, cap);
}

/* The comgr that `lib` uses: among its dependencies (ROCm 5 links it), else by
 * its sonames (ROCm 6 may load it lazily). Leaves the members NULL if absent. */
static void comgr_init(void *lib)
{
    static const char *const names[] = {"libamd_comgr.so.3", "libamd_comgr.so.2",
                                        "libamd_comgr.so"};
    struct tf_hiprtc found = {0};
    char used[PATH_MAX];
    if (resolve(lib, "hipRTC", comgr_symbols, COUNT(comgr_symbols), &found, NULL) != 0) {
        void *comgr = open_first(names, COUNT(names), used, sizeof used);
        if (comgr == NULL ||
            resolve(comgr, used, comgr_symbols, COUNT(comgr_symbols), &found, NULL) != 0)
            return;
    }
    hiprtc.amd_comgr_get_version = found.amd_comgr_get_version;
    hiprtc.amd_comgr_get_isa_count = found.amd_comgr_get_isa_count;
    hiprtc.amd_comgr_get_isa_name = found.amd_comgr_get_isa_name;
}

static void hiprtc_init(void)
{
    static const char *const names[] = {"libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so.5",
                                        "libhiprtc.so"};
    const char *env = getenv("TF_HIPRTC_PATH");
    void *lib = NULL;
    if (env && env[0]) {
        lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL) {
            const char *why = dlerror();
            tf_error_set(&hiprtc_err, TF_ERR_BACKEND, "TF_HIPRTC_PATH: cannot load '%s': %s", env,
                         why ? why : "dlopen failed");
            return;
        }
        tf_strlcpy(hiprtc.path, env, sizeof hiprtc.path);
    }
    if (lib == NULL)
        lib = open_first(names, COUNT(names), hiprtc.path, sizeof hiprtc.path);
    if (lib == NULL) {
        /* ROCm 5: inside the runtime. Its own table need not load for this
         * (compiling needs none of the runtime's functions), only the file. */
        lib = open_first(runtime_names, COUNT(runtime_names), hiprtc.path, sizeof hiprtc.path);
        if (lib == NULL || dlsym(lib, "hiprtcCompileProgram") == NULL) {
            tf_error_set(&hiprtc_err, TF_ERR_BACKEND,
                         "no hipRTC (libhiprtc.so.7/.6/.5 not found, %s; set TF_HIPRTC_PATH)",
                         lib ? "and libamdhip64 has no hiprtc symbols" : "nor libamdhip64");
            return;
        }
    }
    if (resolve(lib, hiprtc.path, hiprtc_symbols, COUNT(hiprtc_symbols), &hiprtc, &hiprtc_err) !=
        0)
        return;
    library_version((const void *)(uintptr_t)hiprtc.hiprtcCompileProgram, hiprtc.version,
                    sizeof hiprtc.version);
    comgr_init(lib);
    hiprtc_ok = 1;
}

const struct tf_hiprtc *tf_hiprtc_load(struct tf_error *err)
{
    pthread_once(&hiprtc_once, hiprtc_init);
    if (!hiprtc_ok) {
        if (err)
            *err = hiprtc_err;
        return NULL;
    }
    return &hiprtc;
}

/* ---- ROCm SMI ---- */

static const struct symbol rsmi_symbols[] = {
    SYM(tf_rocm_smi, rsmi_init, "rsmi_init"),
    SYM(tf_rocm_smi, rsmi_version_get, "rsmi_version_get"),
    SYM(tf_rocm_smi, rsmi_status_string, "rsmi_status_string"),
    SYM(tf_rocm_smi, rsmi_num_monitor_devices, "rsmi_num_monitor_devices"),
    SYM(tf_rocm_smi, rsmi_dev_pci_id_get, "rsmi_dev_pci_id_get"),
    SYM(tf_rocm_smi, rsmi_dev_gpu_clk_freq_get, "rsmi_dev_gpu_clk_freq_get"),
    SYM(tf_rocm_smi, rsmi_dev_power_ave_get, "rsmi_dev_power_ave_get"),
    OPT(tf_rocm_smi, rsmi_dev_power_get, "rsmi_dev_power_get"),
    SYM(tf_rocm_smi, rsmi_dev_energy_count_get, "rsmi_dev_energy_count_get"),
    SYM(tf_rocm_smi, rsmi_dev_temp_metric_get, "rsmi_dev_temp_metric_get"),
};

static pthread_once_t rsmi_once = PTHREAD_ONCE_INIT;
static struct tf_rocm_smi rsmi;
static int rsmi_ok;
static struct tf_error rsmi_err;

static void rsmi_init_once(void)
{
    /* ROCm's sonames (.so.5: ROCm 5, .so.6: 6.0, .so.7: 6.1 and later) and
     * Debian's (.so.1, packaging ROCm SMI 5.x). */
    static const char *const names[] = {"librocm_smi64.so.7", "librocm_smi64.so.6",
                                        "librocm_smi64.so.5", "librocm_smi64.so.1",
                                        "librocm_smi64.so"};
    char used[PATH_MAX];
    void *lib = open_first(names, COUNT(names), used, sizeof used);
    if (lib == NULL) {
        tf_error_set(&rsmi_err, TF_ERR_BACKEND,
                     "no ROCm SMI (librocm_smi64.so.7/.6/.5/.1 not found)");
        return;
    }
    if (resolve(lib, used, rsmi_symbols, COUNT(rsmi_symbols), &rsmi, &rsmi_err) != 0)
        return;
    /* The frequency list's layout follows ROCm SMI's major version. Debian
     * renumbers it (its 5.2.3 says 1.0.0 and is librocm_smi64.so.1), so the
     * soname decides where it carries the major, the reported version otherwise. */
    const char *so = strstr(used, ".so.");
    if (so && so[4] >= '0' && so[4] <= '9') {
        rsmi.frequencies_v6 = atoi(so + 4) >= 6;
    } else {
        tf_rsmi_version v = {0, 0, 0, NULL};
        rsmi.frequencies_v6 = rsmi.rsmi_version_get(&v) == TF_RSMI_STATUS_SUCCESS && v.major >= 6;
    }
    const tf_rsmi_status rc = rsmi.rsmi_init(0);
    if (rc != TF_RSMI_STATUS_SUCCESS) {
        const char *text = NULL;
        if (rsmi.rsmi_status_string(rc, &text) != TF_RSMI_STATUS_SUCCESS || text == NULL)
            text = "unknown";
        tf_error_set(&rsmi_err, TF_ERR_BACKEND, "rsmi_init failed (ROCm SMI status %d: %s)", rc,
                     text);
        return;
    }
    rsmi_ok = 1;
}

const struct tf_rocm_smi *tf_rocm_smi_load(struct tf_error *err)
{
    pthread_once(&rsmi_once, rsmi_init_once);
    if (!rsmi_ok) {
        if (err)
            *err = rsmi_err;
        return NULL;
    }
    return &rsmi;
}

void tf_hip_error_text(tf_hip_error rc, char *out, size_t cap)
{
    const char *name = NULL, *text = NULL;
    const struct tf_hip_runtime *h = tf_hip_runtime_load(NULL);
    if (h) {
        name = h->hipGetErrorName(rc);
        text = h->hipGetErrorString(rc);
    }
    /* ROCm 5.2 answers both with the name: say it once */
    if (name && text && strcmp(name, text) != 0)
        snprintf(out, cap, "%s (%s)", name, text);
    else if (name)
        snprintf(out, cap, "%s", name);
    else
        snprintf(out, cap, "HIP error %d", rc);
}
