/* cuda_api.h - the few CUDA driver, NVRTC and NVML declarations tunefarm uses,
 * and loaders that dlopen the vendor libraries at run time.
 *
 * The build never includes <cuda.h>, <nvrtc.h> or <nvml.h>: a CPU-only node
 * has no toolkit, and the same binary must run there. Types are declared here
 * with the ABI of the vendor headers (opaque handles are pointers, CUdevice is
 * int, CUdeviceptr is unsigned long long on 64-bit hosts); enum values are
 * copied from /usr/local/cuda/include/cuda.h and nvrtc.h of CUDA 13.0 (line
 * numbers in comments) and from the public NVML API reference. Every value we
 * use has existed unchanged since CUDA 11, so older drivers read them the same. */
#ifndef TF_CUDA_API_H
#define TF_CUDA_API_H

#include <stddef.h>

#include "../schema/error.h"

/* ---- CUDA driver API (cuda.h) ---- */

typedef int tf_cu_result;                 /* CUresult */
typedef int tf_cu_device;                 /* CUdevice (cuda.h:280) */
typedef unsigned long long tf_cu_deviceptr; /* CUdeviceptr_v2 on 64-bit hosts (cuda.h:274) */
typedef struct tf_cu_ctx_st *tf_cu_context;   /* CUcontext */
typedef struct tf_cu_mod_st *tf_cu_module;    /* CUmodule */
typedef struct tf_cu_func_st *tf_cu_function; /* CUfunction */
typedef struct tf_cu_stream_st *tf_cu_stream; /* CUstream */
typedef struct tf_cu_event_st *tf_cu_event;   /* CUevent */
typedef struct {
    unsigned char bytes[16];
} tf_cu_uuid;                             /* CUuuid (cuda.h:317) */

/* CUresult values (cuda.h:2520-3178). */
enum {
    TF_CUDA_SUCCESS = 0,
    TF_CUDA_ERROR_INVALID_VALUE = 1,               /* cuda.h:2523 */
    TF_CUDA_ERROR_OUT_OF_MEMORY = 2,               /* cuda.h:2529 */
    TF_CUDA_ERROR_NOT_INITIALIZED = 3,             /* cuda.h:2535 */
    TF_CUDA_ERROR_STUB_LIBRARY = 34,               /* cuda.h:2576 */
    TF_CUDA_ERROR_NO_DEVICE = 100,                 /* cuda.h:2597 */
    TF_CUDA_ERROR_INVALID_DEVICE = 101,            /* cuda.h:2604 */
    TF_CUDA_ERROR_INVALID_IMAGE = 200,             /* cuda.h:2615 */
    TF_CUDA_ERROR_NO_BINARY_FOR_GPU = 209,         /* cuda.h:2665 */
    TF_CUDA_ERROR_NOT_FOUND = 500,                 /* cuda.h:2820 */
    TF_CUDA_ERROR_NOT_READY = 600,                 /* cuda.h:2828 */
    TF_CUDA_ERROR_ILLEGAL_ADDRESS = 700,           /* cuda.h:2837 */
    TF_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,   /* cuda.h:2848 */
    TF_CUDA_ERROR_LAUNCH_TIMEOUT = 702,            /* cuda.h:2858 */
    TF_CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING = 703, /* cuda.h:2864 */
    TF_CUDA_ERROR_ASSERT = 710,                    /* cuda.h:2899 */
    TF_CUDA_ERROR_HARDWARE_STACK_ERROR = 714,      /* cuda.h:2927 */
    TF_CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,       /* cuda.h:2935 */
    TF_CUDA_ERROR_MISALIGNED_ADDRESS = 716,        /* cuda.h:2944 */
    TF_CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,     /* cuda.h:2955 */
    TF_CUDA_ERROR_INVALID_PC = 718,                /* cuda.h:2963 */
    TF_CUDA_ERROR_LAUNCH_FAILED = 719,             /* cuda.h:2974 */
    TF_CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720, /* cuda.h:2983 */
    TF_CUDA_ERROR_TENSOR_MEMORY_LEAK = 721,        /* cuda.h:2991 */
    TF_CUDA_ERROR_NOT_SUPPORTED = 801,             /* cuda.h:3002 */
    TF_CUDA_ERROR_INVALID_CLUSTER_SIZE = 912,      /* cuda.h:3149 */
    TF_CUDA_ERROR_UNKNOWN = 999                    /* cuda.h:3178 */
};

/* CUdevice_attribute values (cuda.h:724-825). */
enum {
    TF_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,        /* cuda.h:724 */
    TF_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,              /* cuda.h:725 */
    TF_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,              /* cuda.h:726 */
    TF_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,              /* cuda.h:727 */
    TF_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,               /* cuda.h:728 */
    TF_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,               /* cuda.h:729 */
    TF_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,               /* cuda.h:730 */
    TF_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,  /* cuda.h:731 */
    TF_CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,                   /* cuda.h:734 */
    TF_CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,     /* cuda.h:736 */
    TF_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,        /* cuda.h:741 */
    TF_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,               /* cuda.h:766 */
    TF_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,    /* cuda.h:803 */
    TF_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,    /* cuda.h:804 */
    TF_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81, /* cuda.h:809 */
    TF_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97 /* cuda.h:825 */
};

/* CUfunction_attribute values (cuda.h:933-994). */
enum {
    TF_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,              /* cuda.h:940 */
    TF_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,               /* cuda.h:951 */
    TF_CU_FUNC_ATTRIBUTE_NUM_REGS = 4,                       /* cuda.h:956 */
    TF_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8   /* cuda.h:994 */
};

enum {
    TF_CU_STREAM_NON_BLOCKING = 0x1, /* CUstream_flags, cuda.h:429 */
    TF_CU_EVENT_DEFAULT = 0x0,       /* CUevent_flags, cuda.h:456 */
    TF_CU_EVENT_DISABLE_TIMING = 0x2, /* CUevent_flags, cuda.h:458 */
    TF_CU_EVENT_BLOCKING_SYNC = 0x1, /* cuda.h:457 */
    TF_CU_CTX_SCHED_BLOCKING_SYNC = 0x4 /* CUctx_flags */
};

/* The driver entry points we call, resolved once by tf_cuda_driver_load().
 * Members are named after the API function; where cuda.h maps a name to a
 * versioned symbol (#define cuMemAlloc cuMemAlloc_v2, cuda.h:89-172) the
 * loader resolves that versioned symbol, which is what a program compiled
 * against cuda.h would call. */
struct tf_cuda_driver {
    tf_cu_result (*cuGetErrorName)(tf_cu_result error, const char **str);
    tf_cu_result (*cuGetErrorString)(tf_cu_result error, const char **str);
    tf_cu_result (*cuInit)(unsigned int flags);
    tf_cu_result (*cuDriverGetVersion)(int *version);
    tf_cu_result (*cuDeviceGetCount)(int *count);
    tf_cu_result (*cuDeviceGet)(tf_cu_device *device, int ordinal);
    tf_cu_result (*cuDeviceGetName)(char *name, int len, tf_cu_device dev);
    tf_cu_result (*cuDeviceGetAttribute)(int *value, int attrib, tf_cu_device dev);
    tf_cu_result (*cuDeviceTotalMem)(size_t *bytes, tf_cu_device dev);         /* _v2 */
    tf_cu_result (*cuDeviceGetUuid)(tf_cu_uuid *uuid, tf_cu_device dev);       /* _v2 if any */
    tf_cu_result (*cuDeviceGetPCIBusId)(char *bus_id, int len, tf_cu_device dev);
    tf_cu_result (*cuDevicePrimaryCtxRetain)(tf_cu_context *ctx, tf_cu_device dev);
    tf_cu_result (*cuDevicePrimaryCtxRelease)(tf_cu_device dev);              /* _v2 */
    tf_cu_result (*cuDevicePrimaryCtxSetFlags)(tf_cu_device dev, unsigned int flags); /* _v2 */
    tf_cu_result (*cuCtxSetCurrent)(tf_cu_context ctx);
    tf_cu_result (*cuCtxSynchronize)(void);
    tf_cu_result (*cuStreamCreate)(tf_cu_stream *stream, unsigned int flags);
    tf_cu_result (*cuStreamDestroy)(tf_cu_stream stream);                     /* _v2 */
    tf_cu_result (*cuStreamSynchronize)(tf_cu_stream stream);
    tf_cu_result (*cuEventCreate)(tf_cu_event *event, unsigned int flags);
    tf_cu_result (*cuEventDestroy)(tf_cu_event event);                        /* _v2 */
    tf_cu_result (*cuEventRecord)(tf_cu_event event, tf_cu_stream stream);
    tf_cu_result (*cuEventSynchronize)(tf_cu_event event);
    tf_cu_result (*cuEventElapsedTime)(float *ms, tf_cu_event start, tf_cu_event end);
    tf_cu_result (*cuModuleLoadData)(tf_cu_module *module, const void *image);
    tf_cu_result (*cuModuleUnload)(tf_cu_module module);
    tf_cu_result (*cuModuleGetFunction)(tf_cu_function *fn, tf_cu_module module,
                                        const char *name);
    tf_cu_result (*cuFuncGetAttribute)(int *value, int attrib, tf_cu_function fn);
    tf_cu_result (*cuFuncSetAttribute)(tf_cu_function fn, int attrib, int value);
    tf_cu_result (*cuLaunchKernel)(tf_cu_function fn, unsigned int gx, unsigned int gy,
                                   unsigned int gz, unsigned int bx, unsigned int by,
                                   unsigned int bz, unsigned int shared_bytes,
                                   tf_cu_stream stream, void **params, void **extra);
    tf_cu_result (*cuMemAlloc)(tf_cu_deviceptr *ptr, size_t bytes);           /* _v2 */
    tf_cu_result (*cuMemFree)(tf_cu_deviceptr ptr);                           /* _v2 */
    tf_cu_result (*cuMemcpyHtoDAsync)(tf_cu_deviceptr dst, const void *src, size_t bytes,
                                      tf_cu_stream stream);                     /* _v2 */
    tf_cu_result (*cuMemcpyDtoHAsync)(void *dst, tf_cu_deviceptr src, size_t bytes,
                                      tf_cu_stream stream);                     /* _v2 */
    tf_cu_result (*cuMemsetD32Async)(tf_cu_deviceptr dst, unsigned int value, size_t count,
                                     tf_cu_stream stream);
    tf_cu_result (*cuMemcpyDtoDAsync)(tf_cu_deviceptr dst, tf_cu_deviceptr src, size_t bytes,
                                      tf_cu_stream stream);                     /* _v2 */
    tf_cu_result (*cuMemHostAlloc)(void **ptr, size_t bytes, unsigned int flags);
    tf_cu_result (*cuMemFreeHost)(void *ptr);
    tf_cu_result (*cuStreamWaitEvent)(tf_cu_stream stream, tf_cu_event event, unsigned int flags);
};

/* ---- NVRTC (nvrtc.h) ---- */

typedef int tf_nvrtc_result;                    /* nvrtcResult */
typedef struct tf_nvrtc_prog_st *tf_nvrtc_program; /* nvrtcProgram */

enum {
    TF_NVRTC_SUCCESS = 0,            /* nvrtc.h:42 */
    TF_NVRTC_ERROR_INVALID_OPTION = 5, /* nvrtc.h:47 */
    TF_NVRTC_ERROR_COMPILATION = 6   /* nvrtc.h:48 */
};

struct tf_nvrtc {
    char path[256];                  /* the library name that loaded, for identities */
    const char *(*nvrtcGetErrorString)(tf_nvrtc_result result);
    tf_nvrtc_result (*nvrtcVersion)(int *major, int *minor);
    tf_nvrtc_result (*nvrtcCreateProgram)(tf_nvrtc_program *prog, const char *src,
                                          const char *name, int nheaders,
                                          const char *const *headers,
                                          const char *const *include_names);
    tf_nvrtc_result (*nvrtcDestroyProgram)(tf_nvrtc_program *prog);
    tf_nvrtc_result (*nvrtcCompileProgram)(tf_nvrtc_program prog, int noptions,
                                           const char *const *options);
    tf_nvrtc_result (*nvrtcGetProgramLogSize)(tf_nvrtc_program prog, size_t *size);
    tf_nvrtc_result (*nvrtcGetProgramLog)(tf_nvrtc_program prog, char *log);
    tf_nvrtc_result (*nvrtcGetCUBINSize)(tf_nvrtc_program prog, size_t *size);
    tf_nvrtc_result (*nvrtcGetCUBIN)(tf_nvrtc_program prog, char *cubin);
};

/* ---- NVML (nvml.h; values from the NVML API reference) ---- */

typedef int tf_nvml_return;                        /* nvmlReturn_t */
typedef struct tf_nvml_device_st *tf_nvml_device;  /* nvmlDevice_t */

enum {
    TF_NVML_SUCCESS = 0,                /* nvmlReturn_t NVML_SUCCESS */
    TF_NVML_ERROR_NOT_SUPPORTED = 3,    /* nvmlReturn_t NVML_ERROR_NOT_SUPPORTED */
    TF_NVML_CLOCK_SM = 1,               /* nvmlClockType_t NVML_CLOCK_SM */
    TF_NVML_CLOCK_MEM = 2,              /* nvmlClockType_t NVML_CLOCK_MEM */
    TF_NVML_TEMPERATURE_GPU = 0         /* nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU */
};

/* nvmlClocksEventReasons bits (formerly ClocksThrottleReasons). */
#define TF_NVML_CLOCKS_EVENT_REASON_GPU_IDLE 0x1ULL           /* nvmlClocksEventReasonGpuIdle */
#define TF_NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS 0x2ULL /* ...ApplicationsClocksSetting */

struct tf_nvml {
    tf_nvml_return (*nvmlInit)(void);                                         /* nvmlInit_v2 */
    tf_nvml_return (*nvmlShutdown)(void);
    tf_nvml_return (*nvmlSystemGetDriverVersion)(char *version, unsigned int len);
    tf_nvml_return (*nvmlDeviceGetHandleByUUID)(const char *uuid, tf_nvml_device *device);
    tf_nvml_return (*nvmlDeviceGetClockInfo)(tf_nvml_device device, int type,
                                             unsigned int *mhz);
    tf_nvml_return (*nvmlDeviceGetPowerUsage)(tf_nvml_device device, unsigned int *milliwatts);
    tf_nvml_return (*nvmlDeviceGetTotalEnergyConsumption)(tf_nvml_device device,
                                                          unsigned long long *millijoules);
    tf_nvml_return (*nvmlDeviceGetTemperature)(tf_nvml_device device, int sensor,
                                               unsigned int *celsius);
    /* nvmlDeviceGetCurrentClocksEventReasons, or the older ...ThrottleReasons */
    tf_nvml_return (*nvmlDeviceGetCurrentClocksEventReasons)(tf_nvml_device device,
                                                             unsigned long long *reasons);
    /* The clock an application runs at (set by `nvidia-smi -ac`), MHz. */
    tf_nvml_return (*nvmlDeviceGetApplicationsClock)(tf_nvml_device device, int type,
                                                     unsigned int *mhz);
    /* The power limit the board enforces, milliwatts. */
    tf_nvml_return (*nvmlDeviceGetEnforcedPowerLimit)(tf_nvml_device device,
                                                      unsigned int *milliwatts);
};

/* The driver API from libcuda.so.1, loaded once per process (thread-safe) and
 * never unloaded; NULL + err ("no NVIDIA driver (libcuda.so.1 not found)", or
 * the missing symbol) where it cannot be used. */
const struct tf_cuda_driver *tf_cuda_driver_load(struct tf_error *err);
/* NVRTC: $TF_NVRTC_PATH if set, else libnvrtc.so.13/.12/.11/libnvrtc.so by the
 * loader's search path, then the same names under /usr/local/cuda/lib64/.
 * Loaded once, never unloaded; NULL + err when none loads. */
const struct tf_nvrtc *tf_nvrtc_load(struct tf_error *err);
/* NVML from libnvidia-ml.so.1, loaded and nvmlInit'ed once; NULL + err when
 * absent (telemetry is then unknown, never an error of a measurement). */
const struct tf_nvml *tf_nvml_load(struct tf_error *err);

/* "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)" for
 * `rc` into out (cap bytes); works before or without a loaded driver. */
void tf_cuda_error_text(tf_cu_result rc, char *out, size_t cap);

#endif
