/* hip_api.h - the few HIP runtime, hipRTC, comgr and ROCm SMI declarations
 * tunefarm uses, and loaders that dlopen the AMD libraries at run time.
 *
 * The build never includes <hip/hip_runtime_api.h>, <hip/hiprtc.h> or
 * <rocm_smi/rocm_smi.h>: a CPU-only or NVIDIA node has no ROCm, and the same
 * binary must run there. Types are declared here with the ABI of the vendor
 * headers (handles are pointers, hipDevice_t is int, hipDeviceptr_t is void *).
 * Values are copied from Debian bookworm's libamdhip64-dev 5.2.3
 * (/usr/include/hip/hip_runtime_api.h, hiprtc.h) and librocm-smi-dev 5.2.3
 * (/usr/include/rocm_smi/rocm_smi.h), and compared with the ROCm 6/7 headers
 * (ROCm/rocm-systems include/hip/hip_runtime_api.h, hip_deprecated.h):
 * - hipError_t: every value below is the same in 5.2 and 6/7;
 * - hipDeviceAttribute_t: the CUDA-compatible block (0..9999) keeps the same
 *   numbering in 5.x, 6.x and 7.x for every attribute below - ROCm 6 renamed
 *   hipDeviceAttributeName / Uuid to Unused1 / Unused2 in place instead of
 *   renumbering. What did change is the AMD-specific block (GcnArch and
 *   GcnArchName became Unused4 / Unused5 in ROCm 6), so none of it is used:
 *   the architecture name comes from hipGetDeviceProperties, see below;
 * - hipDeviceProp_t: the layout did change. ROCm 6 added a new struct,
 *   hipDeviceProp_tR0600, behind the symbol hipGetDevicePropertiesR0600, and
 *   kept the ROCm 5 layout (hipDeviceProp_tR0000) behind the old symbol
 *   hipGetDeviceProperties. We resolve R0600 where it exists and the old symbol
 *   otherwise, and read only gcnArchName, at the offset of the matching layout;
 * - rsmi_frequencies_t: ROCm SMI 6 put a bool has_deep_sleep in front and made
 *   the list 33 entries long; the loader says which layout its library has. */
#ifndef TF_HIP_API_H
#define TF_HIP_API_H

#include <stddef.h>
#include <stdint.h>

#include "../schema/error.h"

/* ---- HIP runtime (hip_runtime_api.h) ---- */

typedef int tf_hip_error;                         /* hipError_t */
typedef int tf_hip_device;                        /* hipDevice_t */
typedef void *tf_hip_deviceptr;                   /* hipDeviceptr_t */
typedef struct tf_hip_mod_st *tf_hip_module;      /* hipModule_t */
typedef struct tf_hip_func_st *tf_hip_function;   /* hipFunction_t */
typedef struct tf_hip_stream_st *tf_hip_stream;   /* hipStream_t */
typedef struct tf_hip_event_st *tf_hip_event;     /* hipEvent_t */
typedef struct {
    char bytes[16];
} tf_hip_uuid;                                    /* hipUUID */

/* hipError_t values (hip_runtime_api.h:232-344 of 5.2.3). */
enum {
    TF_HIP_SUCCESS = 0,
    TF_HIP_ERROR_INVALID_VALUE = 1,
    TF_HIP_ERROR_OUT_OF_MEMORY = 2,
    TF_HIP_ERROR_NOT_INITIALIZED = 3,
    TF_HIP_ERROR_INVALID_CONFIGURATION = 9,
    TF_HIP_ERROR_INSUFFICIENT_DRIVER = 35,
    TF_HIP_ERROR_INVALID_DEVICE_FUNCTION = 98,
    TF_HIP_ERROR_NO_DEVICE = 100,
    TF_HIP_ERROR_INVALID_DEVICE = 101,
    TF_HIP_ERROR_INVALID_IMAGE = 200,
    TF_HIP_ERROR_NO_BINARY_FOR_GPU = 209,
    TF_HIP_ERROR_INVALID_KERNEL_FILE = 218,
    TF_HIP_ERROR_NOT_FOUND = 500,
    TF_HIP_ERROR_NOT_READY = 600,
    TF_HIP_ERROR_ILLEGAL_ADDRESS = 700,
    TF_HIP_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    TF_HIP_ERROR_LAUNCH_TIMEOUT = 702,
    TF_HIP_ERROR_ASSERT = 710,
    TF_HIP_ERROR_LAUNCH_FAILURE = 719,
    TF_HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
    TF_HIP_ERROR_NOT_SUPPORTED = 801,
    TF_HIP_ERROR_UNKNOWN = 999,
    TF_HIP_ERROR_RUNTIME_MEMORY = 1052,  /* an HSA runtime memory call failed */
    TF_HIP_ERROR_RUNTIME_OTHER = 1053    /* another HSA runtime call failed */
};

/* hipDeviceAttribute_t values (hip_runtime_api.h:354-483 of 5.2.3, the numbers
 * its enum assigns, printed from it): the same in ROCm 5.x, 6.x and 7.x. */
enum {
    TF_HIP_ATTR_L2_CACHE_SIZE = 19,                /* hipDeviceAttributeL2CacheSize */
    TF_HIP_ATTR_MAX_BLOCK_DIM_X = 26,              /* hipDeviceAttributeMaxBlockDimX */
    TF_HIP_ATTR_MAX_BLOCK_DIM_Y = 27,
    TF_HIP_ATTR_MAX_BLOCK_DIM_Z = 28,
    TF_HIP_ATTR_MAX_GRID_DIM_X = 29,               /* hipDeviceAttributeMaxGridDimX */
    TF_HIP_ATTR_MAX_GRID_DIM_Y = 30,
    TF_HIP_ATTR_MAX_GRID_DIM_Z = 31,
    TF_HIP_ATTR_MAX_THREADS_PER_BLOCK = 56,        /* hipDeviceAttributeMaxThreadsPerBlock */
    TF_HIP_ATTR_MULTIPROCESSOR_COUNT = 63,         /* hipDeviceAttributeMultiprocessorCount */
    TF_HIP_ATTR_PCI_BUS_ID = 67,                   /* hipDeviceAttributePciBusId */
    TF_HIP_ATTR_PCI_DEVICE_ID = 68,                /* hipDeviceAttributePciDeviceId */
    TF_HIP_ATTR_PCI_DOMAIN_ID = 69,                /* hipDeviceAttributePciDomainID */
    TF_HIP_ATTR_MAX_REGISTERS_PER_BLOCK = 71,      /* hipDeviceAttributeMaxRegistersPerBlock */
    TF_HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 74,  /* hipDeviceAttributeMaxSharedMemoryPerBlock */
    TF_HIP_ATTR_SHARED_MEM_PER_BLOCK_OPTIN = 75,   /* hipDeviceAttributeSharedMemPerBlockOptin */
    TF_HIP_ATTR_SHARED_MEM_PER_MULTIPROCESSOR = 76, /* hipDeviceAttributeSharedMemPerMultiprocessor */
    TF_HIP_ATTR_WARP_SIZE = 87,                    /* hipDeviceAttributeWarpSize */
    /* AMD-specific: hipDeviceAttributeAmdSpecificBegin = 10000 is
     * ClockInstructionRate, then Arch (10001, "Unused" in later releases),
     * then MaxSharedMemoryPerMultiprocessor: the LDS of one CU. */
    TF_HIP_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 10002
};

/* hipFunction_attribute values (HIP_FUNC_ATTRIBUTE_*), as CUDA's. */
enum {
    TF_HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    TF_HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    TF_HIP_FUNC_ATTRIBUTE_NUM_REGS = 4
};

enum {
    TF_HIP_STREAM_NON_BLOCKING = 0x1, /* hipStreamNonBlocking */
    TF_HIP_EVENT_DEFAULT = 0x0,       /* hipEventDefault */
    TF_HIP_EVENT_DISABLE_TIMING = 0x2, /* hipEventDisableTiming */
    TF_HIP_HOST_MALLOC_DEFAULT = 0x0  /* hipHostMallocDefault */
};

/* The leading members of the two hipDeviceProp_t layouts, up to gcnArchName
 * (the only member read). R0000: ROCm 5, and the old symbol on ROCm >= 6;
 * offsetof(gcnArchName) is 396, as with the 5.2.3 header. R0600: 1160, as
 * with a member-by-member copy of ROCm 7's hipDeviceProp_tR0600.
 * In R0600 (ROCm >= 6) runs of same-typed members are folded into arrays,
 * the first and last member's names in the comment. */
struct tf_hip_prop_r0000 {
    char name[256];
    size_t total_global_mem, shared_mem_per_block;
    int regs_per_block, warp_size, max_threads_per_block, max_threads_dim[3], max_grid_size[3];
    int clock_rate, memory_clock_rate, memory_bus_width;
    size_t total_const_mem;
    int major, minor, multi_processor_count, l2_cache_size, max_threads_per_multi_processor;
    int compute_mode, clock_instruction_rate;
    unsigned int arch;                  /* hipDeviceArch_t: 17 one-bit fields */
    int concurrent_kernels, pci_domain_id, pci_bus_id, pci_device_id;
    size_t max_shared_memory_per_multi_processor;
    int is_multi_gpu_board, can_map_host_memory, gcn_arch;
    char gcn_arch_name[256];
};

struct tf_hip_prop_r0600 {
    char name[256];
    char uuid[16], luid[8];
    unsigned int luid_device_node_mask;
    size_t total_global_mem, shared_mem_per_block;
    int regs_per_block, warp_size;
    size_t mem_pitch;
    int max_threads_per_block, max_threads_dim[3], max_grid_size[3], clock_rate;
    size_t total_const_mem;
    int major, minor;
    size_t texture_alignment, texture_pitch_alignment;
    int ints_a[46];   /* deviceOverlap .. maxSurfaceCubemapLayered[2] */
    size_t surface_alignment;
    int ints_b[16];   /* concurrentKernels .. localL1CacheSupported */
    size_t shared_mem_per_multiprocessor;
    int ints_c[12];   /* regsPerMultiprocessor .. cooperativeMultiDeviceLaunch */
    size_t shared_mem_per_block_optin;
    int ints_d[4];    /* pageableMemoryAccessUsesHostPageTables .. accessPolicyMaxWindowSize */
    size_t reserved_shared_mem_per_block;
    int ints_e[108];  /* hostRegisterSupported .. unifiedFunctionPointers, reserved[63],
                         hipReserved[32] */
    char gcn_arch_name[256];
};

/* What hipGetDeviceProperties* writes into: either layout, with room to spare
 * for the members after gcnArchName (R0000 is 792 bytes, R0600 1472). */
union tf_hip_props {
    struct tf_hip_prop_r0000 r0000;
    struct tf_hip_prop_r0600 r0600;
    unsigned char room[4096];
};

/* The runtime entry points we call, resolved once by tf_hip_runtime_load().
 * Members are named after the API function. */
struct tf_hip_runtime {
    char path[256];                   /* the library that loaded */
    int version;                      /* hipRuntimeGetVersion: 50221153 is 5.2.21153 */
    int props_r0600;                  /* 1: get_device_properties is ...R0600 */
    const char *(*hipGetErrorName)(tf_hip_error error);
    const char *(*hipGetErrorString)(tf_hip_error error);
    tf_hip_error (*hipInit)(unsigned int flags);
    tf_hip_error (*hipDriverGetVersion)(int *version);
    tf_hip_error (*hipRuntimeGetVersion)(int *version);
    tf_hip_error (*hipGetDeviceCount)(int *count);
    tf_hip_error (*hipDeviceGet)(tf_hip_device *device, int ordinal);
    tf_hip_error (*hipDeviceGetName)(char *name, int len, tf_hip_device dev);
    tf_hip_error (*hipDeviceGetAttribute)(int *value, int attr, int device);
    tf_hip_error (*hipDeviceTotalMem)(size_t *bytes, tf_hip_device dev);
    tf_hip_error (*hipDeviceGetPCIBusId)(char *bus_id, int len, int device);
    /* hipDeviceGetUuid appeared in ROCm 5.1: NULL where the library lacks it */
    tf_hip_error (*hipDeviceGetUuid)(tf_hip_uuid *uuid, tf_hip_device dev);
    /* hipGetDevicePropertiesR0600 (ROCm >= 6), else hipGetDeviceProperties */
    tf_hip_error (*hipGetDeviceProperties)(union tf_hip_props *props, int device);
    tf_hip_error (*hipSetDevice)(int device);
    tf_hip_error (*hipDeviceSynchronize)(void);
    tf_hip_error (*hipStreamCreateWithFlags)(tf_hip_stream *stream, unsigned int flags);
    tf_hip_error (*hipStreamDestroy)(tf_hip_stream stream);
    tf_hip_error (*hipStreamSynchronize)(tf_hip_stream stream);
    tf_hip_error (*hipStreamWaitEvent)(tf_hip_stream stream, tf_hip_event event,
                                       unsigned int flags);
    tf_hip_error (*hipEventCreateWithFlags)(tf_hip_event *event, unsigned int flags);
    tf_hip_error (*hipEventDestroy)(tf_hip_event event);
    tf_hip_error (*hipEventRecord)(tf_hip_event event, tf_hip_stream stream);
    tf_hip_error (*hipEventSynchronize)(tf_hip_event event);
    tf_hip_error (*hipEventElapsedTime)(float *ms, tf_hip_event start, tf_hip_event end);
    tf_hip_error (*hipModuleLoadData)(tf_hip_module *module, const void *image);
    tf_hip_error (*hipModuleUnload)(tf_hip_module module);
    tf_hip_error (*hipModuleGetFunction)(tf_hip_function *fn, tf_hip_module module,
                                         const char *name);
    tf_hip_error (*hipFuncGetAttribute)(int *value, int attrib, tf_hip_function fn);
    tf_hip_error (*hipModuleLaunchKernel)(tf_hip_function fn, unsigned int gx, unsigned int gy,
                                          unsigned int gz, unsigned int bx, unsigned int by,
                                          unsigned int bz, unsigned int shared_bytes,
                                          tf_hip_stream stream, void **params, void **extra);
    tf_hip_error (*hipMalloc)(void **ptr, size_t bytes);
    tf_hip_error (*hipFree)(void *ptr);
    /* the header's src is a non-const void *; the ABI is the same */
    tf_hip_error (*hipMemcpyHtoDAsync)(tf_hip_deviceptr dst, const void *src, size_t bytes,
                                       tf_hip_stream stream);
    tf_hip_error (*hipMemcpyDtoHAsync)(void *dst, tf_hip_deviceptr src, size_t bytes,
                                       tf_hip_stream stream);
    tf_hip_error (*hipMemcpyDtoDAsync)(tf_hip_deviceptr dst, tf_hip_deviceptr src, size_t bytes,
                                       tf_hip_stream stream);
    tf_hip_error (*hipMemsetD32Async)(tf_hip_deviceptr dst, int value, size_t count,
                                      tf_hip_stream stream);
    /* hipHostMalloc, or hipHostAlloc (same signature) where a release drops the former */
    tf_hip_error (*hipHostMalloc)(void **ptr, size_t bytes, unsigned int flags);
    tf_hip_error (*hipHostFree)(void *ptr);
};

/* ---- hipRTC (hiprtc.h) ---- */

typedef int tf_hiprtc_result;                        /* hiprtcResult */
typedef struct tf_hiprtc_prog_st *tf_hiprtc_program; /* hiprtcProgram */

enum {
    TF_HIPRTC_SUCCESS = 0,             /* hiprtc.h:53 */
    TF_HIPRTC_ERROR_INVALID_OPTION = 5, /* hiprtc.h:58 */
    TF_HIPRTC_ERROR_COMPILATION = 6    /* hiprtc.h:59 */
};

enum {
    TF_COMGR_STATUS_SUCCESS = 0        /* amd_comgr_status_t AMD_COMGR_STATUS_SUCCESS */
};

struct tf_hiprtc {
    char path[256];                  /* the library the hiprtc* symbols came from */
    char version[32];                /* "5.2.21153", from that library's file name */
    const char *(*hiprtcGetErrorString)(tf_hiprtc_result result);
    tf_hiprtc_result (*hiprtcCreateProgram)(tf_hiprtc_program *prog, const char *src,
                                            const char *name, int nheaders,
                                            const char *const *headers,
                                            const char *const *include_names);
    tf_hiprtc_result (*hiprtcDestroyProgram)(tf_hiprtc_program *prog);
    tf_hiprtc_result (*hiprtcCompileProgram)(tf_hiprtc_program prog, int noptions,
                                             const char *const *options);
    tf_hiprtc_result (*hiprtcGetProgramLogSize)(tf_hiprtc_program prog, size_t *size);
    tf_hiprtc_result (*hiprtcGetProgramLog)(tf_hiprtc_program prog, char *log);
    tf_hiprtc_result (*hiprtcGetCodeSize)(tf_hiprtc_program prog, size_t *size);
    tf_hiprtc_result (*hiprtcGetCode)(tf_hiprtc_program prog, char *code);
    /* The code object manager (amd_comgr.h) hipRTC compiles through: its list
     * of targets. NULL where comgr cannot be found (see tf_hiprtc_load). */
    void (*amd_comgr_get_version)(size_t *major, size_t *minor);
    int (*amd_comgr_get_isa_count)(size_t *count);
    int (*amd_comgr_get_isa_name)(size_t index, const char **name);
};

/* ---- ROCm SMI (rocm_smi.h) ---- */

typedef int tf_rsmi_status;            /* rsmi_status_t */

enum {
    TF_RSMI_STATUS_SUCCESS = 0,        /* rocm_smi.h:86 */
    TF_RSMI_STATUS_NOT_SUPPORTED = 2,  /* rsmi_status_t RSMI_STATUS_NOT_SUPPORTED */
    TF_RSMI_CLK_TYPE_SYS = 0,          /* rsmi_clk_type_t, rocm_smi.h:337 */
    TF_RSMI_TEMP_CURRENT = 0,          /* rsmi_temperature_metric_t, rocm_smi.h:361 */
    TF_RSMI_TEMP_TYPE_EDGE = 0,        /* rsmi_temperature_type_t, rocm_smi.h:408 */
    TF_RSMI_TEMP_TYPE_JUNCTION = 1     /* rocm_smi.h:409 */
};

/* rsmi_frequencies_t up to ROCm SMI 5 (rocm_smi.h:685-701 of 5.2.3). */
struct tf_rsmi_frequencies_v5 {
    uint32_t num_supported, current;
    uint64_t frequency[32];
};

/* rsmi_frequencies_t from ROCm SMI 6 on. */
struct tf_rsmi_frequencies_v6 {
    _Bool has_deep_sleep;
    uint32_t num_supported, current;
    uint64_t frequency[33];
};

/* What rsmi_dev_gpu_clk_freq_get writes into: either layout, with room to spare. */
union tf_rsmi_frequencies {
    struct tf_rsmi_frequencies_v5 v5;
    struct tf_rsmi_frequencies_v6 v6;
    unsigned char room[512];
};

typedef struct {
    uint32_t major, minor, patch;
    const char *build;
} tf_rsmi_version;                     /* rsmi_version_t, rocm_smi.h:731 */

struct tf_rocm_smi {
    int frequencies_v6;                /* 1: rsmi_frequencies_t has has_deep_sleep */
    tf_rsmi_status (*rsmi_init)(uint64_t flags);
    tf_rsmi_status (*rsmi_version_get)(tf_rsmi_version *version);
    tf_rsmi_status (*rsmi_status_string)(tf_rsmi_status status, const char **text);
    tf_rsmi_status (*rsmi_num_monitor_devices)(uint32_t *count);
    tf_rsmi_status (*rsmi_dev_pci_id_get)(uint32_t dev, uint64_t *bdfid);
    tf_rsmi_status (*rsmi_dev_gpu_clk_freq_get)(uint32_t dev, int clk_type,
                                               union tf_rsmi_frequencies *f);
    tf_rsmi_status (*rsmi_dev_power_ave_get)(uint32_t dev, uint32_t sensor, uint64_t *microwatts);
    /* rsmi_dev_power_get (newer releases; what MI300 reports through): NULL if absent */
    tf_rsmi_status (*rsmi_dev_power_get)(uint32_t dev, uint64_t *microwatts, int *type);
    tf_rsmi_status (*rsmi_dev_energy_count_get)(uint32_t dev, uint64_t *count, float *resolution,
                                               uint64_t *timestamp);
    tf_rsmi_status (*rsmi_dev_temp_metric_get)(uint32_t dev, uint32_t sensor, int metric,
                                              int64_t *millidegrees);
};

/* The HIP runtime: libamdhip64.so.7/.6/.5/.so by the loader's search path, then
 * under $ROCM_PATH/lib and /opt/rocm/lib. Loaded once per process (thread-safe)
 * and never unloaded; NULL + err ("no libamdhip64 (...)", a missing symbol, or
 * a runtime older than ROCm 5) where it cannot be used. hipInit is the
 * caller's (the version check may start the runtime on ROCm 6, no more). */
const struct tf_hip_runtime *tf_hip_runtime_load(struct tf_error *err);
/* hipRTC: $TF_HIPRTC_PATH if set, else libhiprtc.so.7/.6/.5/.so by the
 * search path, $ROCM_PATH/lib and /opt/rocm/lib, else the hiprtc* symbols of
 * libamdhip64 itself (ROCm 5). Comgr is found through that library's
 * dependencies, else as libamd_comgr.so.3/.2. Loaded once; NULL + err when no
 * hipRTC loads. */
const struct tf_hiprtc *tf_hiprtc_load(struct tf_error *err);
/* ROCm SMI: librocm_smi64.so.7/.6/.5/.1 (Debian's soname)/.so, then under
 * $ROCM_PATH/lib and /opt/rocm/lib, loaded and rsmi_init'ed once; NULL + err
 * when absent or when it finds no GPU (telemetry is then unknown, never an
 * error of a measurement). rsmi_init prints to stderr on a node without GPUs:
 * call this only where a device was opened. */
const struct tf_rocm_smi *tf_rocm_smi_load(struct tf_error *err);

/* "hipErrorIllegalAddress (an illegal memory access was encountered)" for `rc`
 * into out (cap bytes); works before or without a loaded runtime. */
void tf_hip_error_text(tf_hip_error rc, char *out, size_t cap);

#endif
