/* gpu_backend.h - the run path every GPU backend shares, over a table of vendor calls.
 *
 * The cuda and hip backends differ in how they find devices and compile
 * (NVRTC vs hipRTC), but running a variant is the same protocol on both: a
 * non-blocking stream, timing events around each sample, a memset that evicts
 * the last-level cache, launches checked against the device's limits first,
 * sticky faults that end the process, downloads that overlap later samples,
 * and a thread that samples telemetry. gpu_backend.c implements that protocol
 * once, as the run members of struct tf_backend; a vendor supplies only the
 * calls below (struct tf_gpu_vendor: a const table of thin wrappers, in
 * backend_cuda.c and backend_hip.c), so the AMD path, which no AMD GPU has yet
 * run, is the code the NVIDIA path exercises in all but those calls.
 *
 * Vendor calls return the vendor's own status code (CUresult, hipError_t:
 * 0 is success everywhere); the table also says which codes are sticky and
 * which are the configuration's fault, and how to print one. Handles are
 * opaque pointers the vendor casts to its own types; device pointers travel
 * as void * (a CUdeviceptr's 64 bits). */
#ifndef TF_GPU_BACKEND_H
#define TF_GPU_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

#define TF_GPU_VENDOR_VERSION 1

typedef struct tf_gpu_stream_st *tf_gpu_stream;
typedef struct tf_gpu_event_st *tf_gpu_event;
typedef struct tf_gpu_module_st *tf_gpu_module;
typedef struct tf_gpu_function_st *tf_gpu_function;

/* What an opened device allows per launch, checked before every launch, and
 * how much a memset must write to evict its last-level cache. */
struct tf_gpu_limits {
    int max_threads;          /* threads per block */
    int max_block[3];
    int max_grid[3];
    int max_shared;           /* shared memory per block without an opt-in */
    int max_shared_optin;     /* ... with it (== max_shared where there is none) */
    size_t flush_bytes;
};

enum tf_gpu_function_attribute {
    TF_GPU_FUNCTION_REGISTERS,     /* registers per thread */
    TF_GPU_FUNCTION_STATIC_SHARED, /* static shared memory, bytes */
    TF_GPU_FUNCTION_LOCAL_BYTES    /* local memory (spills, stack) per thread, bytes */
};

/* What an event is for (tf_gpu_vendor.event_create). Only an event the host
 * waits on sleeps the host (blocking sync): on an H100 a stream held about 28
 * launches with blocking events around each, and the host then blocked in
 * enqueue while the device ran the rest, leaving it to idle through the energy
 * counter's reading that followed (bench/results/energy-window-2026-11-28.md). */
enum tf_gpu_event_flags {
    TF_GPU_EVENT_TIMING = 1, /* it times (elapsed_ms); else it only orders */
    TF_GPU_EVENT_WAITED = 2  /* the host waits on it (event_synchronize) */
};

/* A vendor's calls. `device` is what device_open returned; every int return
 * is the vendor's status code, 0 on success. */
struct tf_gpu_vendor {
    int version;              /* TF_GPU_VENDOR_VERSION */
    const char *name;         /* "CUDA", "HIP": in messages */
    const char *sensor_name;  /* "NVML", "ROCm SMI": in messages */

    /* "CUDA_ERROR_X (text)" for `rc` into out (cap bytes). */
    void (*error_text)(int rc, char *out, size_t cap);
    /* 1 if after `rc` the process can run nothing more on the device. */
    int (*is_sticky)(int rc);
    /* 1 if `rc` from a launch means the configuration asks too much (nothing ran). */
    int (*is_configuration_error)(int rc);
    /* The runtime's "out of memory" code: an allocation that failed with it
     * is TF_ERR_NOMEM (the runner then frees the problems it kept set up). */
    int out_of_memory;

    /* Load and initialise the runtime, make device `ordinal` current in this
     * thread, fill `limits`. Non-zero (not a status) + err on failure, with
     * nothing left open. */
    int (*device_open)(int ordinal, void **device, struct tf_gpu_limits *limits,
                       struct tf_error *err);
    /* Release what device_open took; accepts NULL. */
    void (*device_close)(void *device);

    int (*stream_create)(void *device, tf_gpu_stream *stream);  /* non-blocking */
    int (*stream_destroy)(void *device, tf_gpu_stream stream);
    int (*stream_synchronize)(void *device, tf_gpu_stream stream);
    /* Later work on `stream` waits for `event` (recorded on another stream). */
    int (*stream_wait_event)(void *device, tf_gpu_stream stream, tf_gpu_event event);
    /* An event with `flags` of enum tf_gpu_event_flags: it can time, or only
     * order; the host sleeps in event_synchronize on it, or may spin. */
    int (*event_create)(void *device, tf_gpu_event *event, int flags);
    int (*event_destroy)(void *device, tf_gpu_event event);
    int (*event_record)(void *device, tf_gpu_event event, tf_gpu_stream stream);
    int (*event_synchronize)(void *device, tf_gpu_event event);
    int (*event_elapsed_ms)(void *device, float *ms, tf_gpu_event start, tf_gpu_event end);

    int (*module_load)(void *device, tf_gpu_module *module, const void *image);
    int (*module_unload)(void *device, tf_gpu_module module);
    int (*module_function)(void *device, tf_gpu_function *function, tf_gpu_module module,
                           const char *entry);
    int (*function_attribute)(void *device, int *value, enum tf_gpu_function_attribute what,
                              tf_gpu_function function);
    /* Optional: let `function` use `bytes` of dynamic shared memory above the
     * default limit (CUDA's opt-in). NULL where blocks get it all unasked. */
    int (*function_allow_shared)(void *device, tf_gpu_function function, int bytes);
    int (*launch)(void *device, tf_gpu_function function, const struct tf_launch *geometry,
                  tf_gpu_stream stream, void **args);

    int (*mem_alloc)(void *device, void **ptr, size_t bytes);
    int (*mem_free)(void *device, void *ptr);
    int (*copy_to_device)(void *device, void *dst, const void *src, size_t bytes,
                          tf_gpu_stream stream);
    int (*copy_to_host)(void *device, void *dst, const void *src, size_t bytes,
                        tf_gpu_stream stream);
    int (*copy_on_device)(void *device, void *dst, const void *src, size_t bytes,
                          tf_gpu_stream stream);
    int (*fill_words)(void *device, void *dst, unsigned value, size_t words,
                      tf_gpu_stream stream);
    int (*host_alloc)(void *device, void **ptr, size_t bytes); /* page-locked */
    int (*host_free)(void *device, void *ptr);

    /* Optional telemetry: a sensor for the opened device, or NULL where the
     * vendor's management library is absent or does not know the device. */
    void *(*sensor_open)(void *device);
    /* One reading into `t` (NaN / -1 for what it cannot read); may take milliseconds. */
    void (*sensor_read)(void *sensor, struct tf_telemetry *t);
    /* Optional: the cumulative energy counter alone, joules: 0; 1 if the device
     * has none (not supported); -1 if the reading failed. `why` (cap bytes) says
     * what the management library answered when not 0. */
    int (*sensor_energy)(void *sensor, double *joules, char *why, size_t cap);
    void (*sensor_close)(void *sensor); /* accepts NULL */

    /* Optional: `source` (gpu_backend.c's comparison kernels, trusted code)
     * compiled for the opened device: a binary module_load takes, malloc'd,
     * the caller's to free; NULL + err where it cannot be made. NULL member:
     * outputs are compared on the host. */
    void *(*compare_image)(void *device, const char *source, struct tf_error *err);
};

/* Open device `ordinal` through vendor `v` as a backend's live instance (the
 * backend's `open` member calls this with its table). */
int tf_gpu_open(const struct tf_gpu_vendor *v, int ordinal, struct tf_backend_ctx **ctx,
                struct tf_error *err);
/* The other run members, the same for every vendor (the instance knows its vendor). */
void tf_gpu_close(struct tf_backend_ctx *ctx);
int tf_gpu_load(struct tf_backend_ctx *ctx, const char *binary_path, const char *entry,
                void **function, struct tf_error *err);
void tf_gpu_unload(struct tf_backend_ctx *ctx, void *function);
int tf_gpu_alloc(struct tf_backend_ctx *ctx, size_t bytes, void **ptr, struct tf_error *err);
void tf_gpu_release(struct tf_backend_ctx *ctx, void *ptr);
int tf_gpu_upload(struct tf_backend_ctx *ctx, void *dst, const void *host, size_t bytes,
                  struct tf_error *err);
int tf_gpu_download(struct tf_backend_ctx *ctx, void *host, const void *src, size_t bytes,
                    struct tf_error *err);
int tf_gpu_launch(struct tf_backend_ctx *ctx, void *function, const struct tf_launch *geometry,
                  void **args, double *seconds, struct tf_error *err);
int tf_gpu_flush_cache(struct tf_backend_ctx *ctx, struct tf_error *err);
int tf_gpu_function_info(struct tf_backend_ctx *ctx, void *function, int32_t *registers,
                         int64_t *shared_bytes, int64_t *local_bytes, struct tf_error *err);
int tf_gpu_telemetry(struct tf_backend_ctx *ctx, struct tf_telemetry *t, struct tf_error *err);
int tf_gpu_energy(struct tf_backend_ctx *ctx, double *joules, struct tf_error *err);
int tf_gpu_healthy(struct tf_backend_ctx *ctx);
int tf_gpu_enqueue(struct tf_backend_ctx *ctx, void *function, const struct tf_launch *geometry,
                   void **args, int count, int flush, struct tf_error *err);
int tf_gpu_collect(struct tf_backend_ctx *ctx, double *seconds, struct tf_error *err);
int tf_gpu_copy(struct tf_backend_ctx *ctx, void *dst, const void *src, size_t bytes,
                struct tf_error *err);
int tf_gpu_host_alloc(struct tf_backend_ctx *ctx, size_t bytes, void **ptr,
                      struct tf_error *err);
void tf_gpu_host_free(struct tf_backend_ctx *ctx, void *ptr);
int tf_gpu_download_async(struct tf_backend_ctx *ctx, void *host, const void *src, size_t bytes,
                          struct tf_error *err);
int tf_gpu_download_wait(struct tf_backend_ctx *ctx, struct tf_error *err);
int tf_gpu_compare_queue(struct tf_backend_ctx *ctx, int slot, int type, const void *got,
                         const void *expected, size_t count, double rtol, double atol,
                         struct tf_error *err);
int tf_gpu_compare_available(struct tf_backend_ctx *ctx);
/* The comparison kernels' source (CUDA C++; what compare_image is given). */
const char *tf_gpu_compare_source(void);
void tf_gpu_compare_result(struct tf_backend_ctx *ctx, int slot, uint64_t *bad, uint64_t *first,
                           uint64_t *checksum);

/* The run members of a GPU backend's table (after its own .open). */
#define TF_GPU_RUN_MEMBERS                                                                   \
    .close = tf_gpu_close, .load = tf_gpu_load, .unload = tf_gpu_unload,                     \
    .alloc = tf_gpu_alloc, .release = tf_gpu_release, .upload = tf_gpu_upload,               \
    .download = tf_gpu_download, .launch = tf_gpu_launch, .flush_cache = tf_gpu_flush_cache, \
    .function_info = tf_gpu_function_info, .telemetry = tf_gpu_telemetry,                    \
    .energy = tf_gpu_energy, .healthy = tf_gpu_healthy, .enqueue = tf_gpu_enqueue,            \
    .collect = tf_gpu_collect, .copy = tf_gpu_copy, .host_alloc = tf_gpu_host_alloc,         \
    .host_free = tf_gpu_host_free,                                                           \
    .download_async = tf_gpu_download_async, .download_wait = tf_gpu_download_wait,         \
    .compare_available = tf_gpu_compare_available, .compare_queue = tf_gpu_compare_queue,     \
    .compare_result = tf_gpu_compare_result

#endif
