/* cuda_api.c - dlopen'ing the NVIDIA libraries: driver API, NVRTC, NVML.
 *
 * Each library is loaded at most once per process, under pthread_once, into a
 * static table of function pointers; the outcome (the table, or the reason it
 * cannot be used) is kept, so every later caller gets the same answer cheaply
 * and compile threads can race to the first call safely. Libraries are never
 * dlclose'd: the driver keeps threads and handlers alive for the life of the
 * process, and the tables point into them. A symbol is looked up under each of
 * its names in turn, newest first: cuda.h maps e.g. cuMemAlloc to the symbol
 * cuMemAlloc_v2 and cuEventElapsedTime to cuEventElapsedTime_v2 (CUDA 12.8+),
 * so we resolve what a program compiled against the header would call, and
 * fall back to the older symbol on older drivers. A missing symbol makes the
 * whole library unusable with a message naming it: a half-resolved table would
 * only fail later, far from the cause. */
#include "cuda_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One entry point: where it goes in the table and its symbol names, newest first. */
struct symbol {
    size_t offset;
    const char *names[3];
};

/* Resolve every symbol of `syms` from `lib` into `table`; -1 + err naming the first missing one. */
static int resolve(void *lib, const char *libname, const struct symbol *syms, size_t n,
                   void *table, struct tf_error *err)
{
    for (size_t i = 0; i < n; i++) {
        void *p = NULL;
        for (int j = 0; j < 3 && syms[i].names[j] && p == NULL; j++)
            p = dlsym(lib, syms[i].names[j]);
        if (p == NULL)
            return tf_error_set(err, TF_ERR_BACKEND, "%s has no symbol %s (library too old?)",
                                libname, syms[i].names[0]);
        /* POSIX guarantees object and function pointers share a representation here */
        memcpy((char *)table + syms[i].offset, &p, sizeof p);
    }
    return 0;
}

#define SYM(type, member, ...) {offsetof(struct type, member), {__VA_ARGS__}}

/* ---- driver ---- */

static const struct symbol driver_symbols[] = {
    SYM(tf_cuda_driver, cuGetErrorName, "cuGetErrorName"),
    SYM(tf_cuda_driver, cuGetErrorString, "cuGetErrorString"),
    SYM(tf_cuda_driver, cuInit, "cuInit"),
    SYM(tf_cuda_driver, cuDriverGetVersion, "cuDriverGetVersion"),
    SYM(tf_cuda_driver, cuDeviceGetCount, "cuDeviceGetCount"),
    SYM(tf_cuda_driver, cuDeviceGet, "cuDeviceGet"),
    SYM(tf_cuda_driver, cuDeviceGetName, "cuDeviceGetName"),
    SYM(tf_cuda_driver, cuDeviceGetAttribute, "cuDeviceGetAttribute"),
    SYM(tf_cuda_driver, cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
    SYM(tf_cuda_driver, cuDeviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid"),
    SYM(tf_cuda_driver, cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId"),
    SYM(tf_cuda_driver, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    SYM(tf_cuda_driver, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    SYM(tf_cuda_driver, cuDevicePrimaryCtxSetFlags, "cuDevicePrimaryCtxSetFlags_v2",
        "cuDevicePrimaryCtxSetFlags"),
    SYM(tf_cuda_driver, cuCtxSetCurrent, "cuCtxSetCurrent"),
    SYM(tf_cuda_driver, cuCtxSynchronize, "cuCtxSynchronize"),
    SYM(tf_cuda_driver, cuStreamCreate, "cuStreamCreate"),
    SYM(tf_cuda_driver, cuStreamDestroy, "cuStreamDestroy_v2"),
    SYM(tf_cuda_driver, cuStreamSynchronize, "cuStreamSynchronize"),
    SYM(tf_cuda_driver, cuEventCreate, "cuEventCreate"),
    SYM(tf_cuda_driver, cuEventDestroy, "cuEventDestroy_v2"),
    SYM(tf_cuda_driver, cuEventRecord, "cuEventRecord"),
    SYM(tf_cuda_driver, cuEventSynchronize, "cuEventSynchronize"),
    SYM(tf_cuda_driver, cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    SYM(tf_cuda_driver, cuModuleLoadData, "cuModuleLoadData"),
    SYM(tf_cuda_driver, cuModuleUnload, "cuModuleUnload"),
    SYM(tf_cuda_driver, cuModuleGetFunction, "cuModuleGetFunction"),
    SYM(tf_cuda_driver, cuFuncGetAttribute, "cuFuncGetAttribute"),
    SYM(tf_cuda_driver, cuFuncSetAttribute, "cuFuncSetAttribute"),
    SYM(tf_cuda_driver, cuLaunchKernel, "cuLaunchKernel"),
    SYM(tf_cuda_driver, cuMemAlloc, "cuMemAlloc_v2"),
    SYM(tf_cuda_driver, cuMemFree, "cuMemFree_v2"),
    SYM(tf_cuda_driver, cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
    SYM(tf_cuda_driver, cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
    SYM(tf_cuda_driver, cuMemsetD32Async, "cuMemsetD32Async"),
    SYM(tf_cuda_driver, cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
    SYM(tf_cuda_driver, cuMemHostAlloc, "cuMemHostAlloc"),
    SYM(tf_cuda_driver, cuMemFreeHost, "cuMemFreeHost"),
    SYM(tf_cuda_driver, cuStreamWaitEvent, "cuStreamWaitEvent"),
};

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static struct tf_cuda_driver driver;
static int driver_ok;
static struct tf_error driver_err;

static void driver_init(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *why = dlerror();
        tf_error_set(&driver_err, TF_ERR_BACKEND, "no NVIDIA driver (libcuda.so.1 not found: %s)",
                     why ? why : "dlopen failed");
        return;
    }
    if (resolve(lib, "libcuda.so.1", driver_symbols,
                sizeof driver_symbols / sizeof driver_symbols[0], &driver, &driver_err) != 0)
        return;
    driver_ok = 1;
}

const struct tf_cuda_driver *tf_cuda_driver_load(struct tf_error *err)
{
    pthread_once(&driver_once, driver_init);
    if (!driver_ok) {
        if (err)
            *err = driver_err;
        return NULL;
    }
    return &driver;
}

/* ---- NVRTC ---- */

static const struct symbol nvrtc_symbols[] = {
    SYM(tf_nvrtc, nvrtcGetErrorString, "nvrtcGetErrorString"),
    SYM(tf_nvrtc, nvrtcVersion, "nvrtcVersion"),
    SYM(tf_nvrtc, nvrtcCreateProgram, "nvrtcCreateProgram"),
    SYM(tf_nvrtc, nvrtcDestroyProgram, "nvrtcDestroyProgram"),
    SYM(tf_nvrtc, nvrtcCompileProgram, "nvrtcCompileProgram"),
    SYM(tf_nvrtc, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize"),
    SYM(tf_nvrtc, nvrtcGetProgramLog, "nvrtcGetProgramLog"),
    SYM(tf_nvrtc, nvrtcGetCUBINSize, "nvrtcGetCUBINSize"),
    SYM(tf_nvrtc, nvrtcGetCUBIN, "nvrtcGetCUBIN"),
};

static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;
static struct tf_nvrtc nvrtc;
static int nvrtc_ok;
static struct tf_error nvrtc_err;

static void nvrtc_init(void)
{
    /* Newest first: a node with several toolkits compiles with the newest NVRTC
     * it has (the cache key carries its version, so mixing never collides). */
    static const char *const names[] = {
        "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11", "libnvrtc.so",
        "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12",
        "/usr/local/cuda/lib64/libnvrtc.so.11", "/usr/local/cuda/lib64/libnvrtc.so",
    };
    const char *env = getenv("TF_NVRTC_PATH");
    void *lib = NULL;
    const char *name = NULL;
    if (env && env[0]) {
        lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        name = env;
        if (lib == NULL) {
            const char *why = dlerror();
            tf_error_set(&nvrtc_err, TF_ERR_BACKEND, "TF_NVRTC_PATH: cannot load '%s': %s", env,
                         why ? why : "dlopen failed");
            return;
        }
    }
    for (size_t i = 0; lib == NULL && i < sizeof names / sizeof names[0]; i++) {
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        name = names[i];
    }
    if (lib == NULL) {
        tf_error_set(&nvrtc_err, TF_ERR_BACKEND,
                     "no NVRTC (libnvrtc.so.13/.12/.11 not found, nor under /usr/local/cuda/lib64; "
                     "set TF_NVRTC_PATH)");
        return;
    }
    tf_strlcpy(nvrtc.path, name, sizeof nvrtc.path);
    if (resolve(lib, name, nvrtc_symbols, sizeof nvrtc_symbols / sizeof nvrtc_symbols[0], &nvrtc,
                &nvrtc_err) != 0)
        return;
    nvrtc_ok = 1;
}

const struct tf_nvrtc *tf_nvrtc_load(struct tf_error *err)
{
    pthread_once(&nvrtc_once, nvrtc_init);
    if (!nvrtc_ok) {
        if (err)
            *err = nvrtc_err;
        return NULL;
    }
    return &nvrtc;
}

/* ---- NVML ---- */

static const struct symbol nvml_symbols[] = {
    SYM(tf_nvml, nvmlInit, "nvmlInit_v2"),
    SYM(tf_nvml, nvmlShutdown, "nvmlShutdown"),
    SYM(tf_nvml, nvmlSystemGetDriverVersion, "nvmlSystemGetDriverVersion"),
    SYM(tf_nvml, nvmlDeviceGetHandleByUUID, "nvmlDeviceGetHandleByUUID"),
    SYM(tf_nvml, nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo"),
    SYM(tf_nvml, nvmlDeviceGetPowerUsage, "nvmlDeviceGetPowerUsage"),
    SYM(tf_nvml, nvmlDeviceGetTotalEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption"),
    SYM(tf_nvml, nvmlDeviceGetTemperature, "nvmlDeviceGetTemperature"),
    SYM(tf_nvml, nvmlDeviceGetCurrentClocksEventReasons,
        "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"),
    SYM(tf_nvml, nvmlDeviceGetApplicationsClock, "nvmlDeviceGetApplicationsClock"),
    SYM(tf_nvml, nvmlDeviceGetEnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit"),
};

static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;
static struct tf_nvml nvml;
static int nvml_ok;
static struct tf_error nvml_err;

static void nvml_init(void)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *why = dlerror();
        tf_error_set(&nvml_err, TF_ERR_BACKEND, "no NVML (libnvidia-ml.so.1 not found: %s)",
                     why ? why : "dlopen failed");
        return;
    }
    if (resolve(lib, "libnvidia-ml.so.1", nvml_symbols,
                sizeof nvml_symbols / sizeof nvml_symbols[0], &nvml, &nvml_err) != 0)
        return;
    const tf_nvml_return rc = nvml.nvmlInit();
    if (rc != TF_NVML_SUCCESS) {
        tf_error_set(&nvml_err, TF_ERR_BACKEND, "nvmlInit failed (NVML error %d)", rc);
        return;
    }
    nvml_ok = 1;
}

const struct tf_nvml *tf_nvml_load(struct tf_error *err)
{
    pthread_once(&nvml_once, nvml_init);
    if (!nvml_ok) {
        if (err)
            *err = nvml_err;
        return NULL;
    }
    return &nvml;
}

void tf_cuda_error_text(tf_cu_result rc, char *out, size_t cap)
{
    const char *name = NULL, *text = NULL;
    const struct tf_cuda_driver *d = tf_cuda_driver_load(NULL);
    if (d) {
        if (d->cuGetErrorName(rc, &name) != TF_CUDA_SUCCESS)
            name = NULL;
        if (d->cuGetErrorString(rc, &text) != TF_CUDA_SUCCESS)
            text = NULL;
    }
    if (name && text)
        snprintf(out, cap, "%s (%s)", name, text);
    else if (name)
        snprintf(out, cap, "%s", name);
    else
        snprintf(out, cap, "CUDA error %d", rc);
}
