/* backend.h - the interface every device backend implements (IOR's aiori table).
 *
 * A backend is a const struct of function pointers with designated
 * initialisers, its functions static in one file (backend_host.c,
 * backend_cuda.c, backend_hip.c, backend_replay.c). The table is the static descriptor (name,
 * probe, discovery, compiling); `open` returns the live instance the runner
 * uses (a device context). Compiling needs no device and may run anywhere.
 *
 * Kernel ABI on every backend: the entry point receives `void **args`, one
 * pointer per kernel argument in kernel-file order, each pointing at the
 * scalar's value or at the buffer's (device) pointer - cuLaunchKernel's
 * kernelParams. A host kernel is `void entry(void **args)`. */
#ifndef TF_BACKEND_H
#define TF_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "../schema/device.h"
#include "../schema/error.h"

#define TF_BACKEND_VERSION 1
#define TF_MAX_DEFINES 64
#define TF_MAX_BATCH 256 /* launches one enqueue may queue */
#define TF_MAX_QUEUED_BATCHES 2 /* enqueued batches not yet collected, at most */

/* What to compile: one variant of one source. */
struct tf_compile_input {
    const char *kernel_name;
    const char *source;        /* source text */
    const char *source_name;   /* for compiler messages, e.g. "kernels/gemm/gemm.c" */
    const char *entry;
    const char *arch;          /* target architecture (device arch) */
    int ndefines;
    char *const *defines;      /* "-DNAME=VALUE" */
    int noptions;
    char *const *options;      /* the kernel's extra flags */
    const char *output_path;   /* where the binary goes (the caller renames it into the cache) */
};

/* What compiling produced, besides the binary file. */
struct tf_compile_output {
    int ok;                    /* 1: binary written; 0: compile_error (log holds why) */
    char *log;                 /* compiler messages (malloc'd, may be NULL) */
    int32_t registers;         /* -1 unknown */
    int64_t shared_bytes;      /* static shared memory, -1 unknown */
    int64_t spill_bytes;       /* -1 unknown */
};

struct tf_launch {
    uint32_t grid[3];
    uint32_t block[3];
    uint64_t shared_bytes;     /* dynamic shared memory */
};

struct tf_backend_ctx;         /* a backend's live device instance (opaque) */

/* Device telemetry at one instant (NVML on NVIDIA); NaN / -1 where unknown. */
struct tf_telemetry {
    double sm_clock_mhz;       /* current SM clock */
    double power_w;            /* board power draw */
    double energy_mj;          /* cumulative energy since the driver loaded, millijoules */
    double temperature_c;      /* GPU core temperature */
    int throttled;             /* 1: clocks held down (power, thermal...), 0: not, -1 unknown */
};

struct tf_backend {
    int version;               /* TF_BACKEND_VERSION */
    const char *name;          /* "host", "cuda", "hip" */
    const char *language;      /* kernel language it compiles: "c", "cuda" */

    /* Discovery (no device context). */
    int (*probe)(struct tf_error *err);   /* 0 if usable on this node; else err says why */
    int (*device_count)(void);
    int (*describe)(int ordinal, struct tf_device *out, struct tf_error *err);
    /* An identity string of the compiler (path + version) for cache keys. */
    const char *(*compiler_id)(void);

    /* Compiling: any CPU, no device. Non-zero only for failures of the
     * machinery (cannot spawn the compiler); a rejected variant is out->ok = 0. */
    int (*compile)(const struct tf_compile_input *in, struct tf_compile_output *out,
                   struct tf_error *err);

    /* Running (inside the runner process only). */
    int (*open)(int ordinal, struct tf_backend_ctx **ctx, struct tf_error *err);
    void (*close)(struct tf_backend_ctx *ctx);
    int (*load)(struct tf_backend_ctx *ctx, const char *binary_path, const char *entry,
                void **function, struct tf_error *err);
    void (*unload)(struct tf_backend_ctx *ctx, void *function);
    int (*alloc)(struct tf_backend_ctx *ctx, size_t bytes, void **ptr, struct tf_error *err);
    void (*release)(struct tf_backend_ctx *ctx, void *ptr);
    int (*upload)(struct tf_backend_ctx *ctx, void *dst, const void *host, size_t bytes,
                  struct tf_error *err);
    int (*download)(struct tf_backend_ctx *ctx, void *host, const void *src, size_t bytes,
                    struct tf_error *err);
    /* Launch once; if `seconds` is not NULL, time it with the device's clock.
     * Returns a status (enum tf_status): ok, invalid (exceeds a device limit),
     * launch_error or runtime_error, with err filled when not ok. */
    int (*launch)(struct tf_backend_ctx *ctx, void *function, const struct tf_launch *geometry,
                  void **args, double *seconds, struct tf_error *err);
    /* Evict the last-level cache (between samples when the job asks for it). */
    int (*flush_cache)(struct tf_backend_ctx *ctx, struct tf_error *err);

    /* Optional members (NULL where a backend has no such thing; callers check). */

    /* 0 if this node can compile for the backend, device or not (NVRTC loads,
     * say); else err says why. NULL: it cannot. A rank announces the backends
     * it can compile for, so the coordinator can use it as a compile rank. */
    int (*compiler_probe)(struct tf_error *err);

    /* What the loaded `function` uses: registers per thread, static shared
     * memory and local memory (spills) per thread, bytes; -1 where unknown. */
    int (*function_info)(struct tf_backend_ctx *ctx, void *function, int32_t *registers,
                         int64_t *shared_bytes, int64_t *local_bytes, struct tf_error *err);
    /* Read the device's telemetry now into `t` (fields it cannot read are NaN / -1). */
    int (*telemetry)(struct tf_backend_ctx *ctx, struct tf_telemetry *t, struct tf_error *err);
    /* The device's cumulative energy counter now, in joules, read directly (not
     * the telemetry thread's last reading): 0; 1 if this device has no counter
     * (err says why: no NVML, not supported by the board, no readable RAPL);
     * -1 if this reading failed (err). Cheap enough for every few milliseconds
     * while launches run: the runner's energy window (energy.h). */
    int (*energy)(struct tf_backend_ctx *ctx, double *joules, struct tf_error *err);
    /* 0 once the context is broken (a sticky fault such as an illegal address):
     * nothing more can run in this process, so the runner exits after replying. */
    int (*healthy)(struct tf_backend_ctx *ctx);

    /* Optional: queue `count` (1..TF_MAX_BATCH) timed launches back to back on
     * the device, the cache flushed before each if `flush`, and return at once
     * (status as for launch). The device then runs samples without waiting for
     * the host, and the host may work meanwhile (the runner verifies there).
     * Up to TF_MAX_QUEUED_BATCHES batches may be queued at once, each behind
     * the one before, so the device need not wait for the host between them
     * (the energy window). After a failure no batch is queued any more. */
    int (*enqueue)(struct tf_backend_ctx *ctx, void *function, const struct tf_launch *geometry,
                   void **args, int count, int flush, struct tf_error *err);
    /* Optional, with enqueue: wait for the oldest queued batch and write each
     * of its launches' device time into seconds[i] (with none queued: ok at
     * once, nothing written). Returns a status; after a failure no batch is
     * queued any more. */
    int (*collect)(struct tf_backend_ctx *ctx, double *seconds, struct tf_error *err);
    /* Optional: copy `bytes` between device buffers, ordered before later launches
     * (buffers are restored from device-side images instead of re-uploaded). */
    int (*copy)(struct tf_backend_ctx *ctx, void *dst, const void *src, size_t bytes,
                struct tf_error *err);

    /* Optional quartet: downloads that overlap the device's later work. The
     * runner snapshots an output with copy, queues its download, queues the
     * samples, and waits only when it needs the bytes. host_alloc returns
     * page-locked host memory (what an asynchronous copy needs), host_free
     * accepts NULL. download_async queues a copy of device `src` into `host`
     * (from host_alloc), ordered after all work queued so far but on a side
     * queue, so the launches queued after it do not wait for it; download_wait
     * returns once every queued download has landed. */
    int (*host_alloc)(struct tf_backend_ctx *ctx, size_t bytes, void **ptr, struct tf_error *err);
    void (*host_free)(struct tf_backend_ctx *ctx, void *ptr);
    int (*download_async)(struct tf_backend_ctx *ctx, void *host, const void *src, size_t bytes,
                          struct tf_error *err);
    int (*download_wait)(struct tf_backend_ctx *ctx, struct tf_error *err);
    /* Optional trio, with the quartet: an output compared with its expected
     * values on the device, so that neither the output nor the comparison's
     * work reaches the host (a runner's CPU is the node compilers' CPU).
     * compare_available says whether this device can (1) or not (0: its
     * vendor has no comparison kernels, or they could not be built); where it
     * cannot, the runner sets nothing up for it. compare_queue queues, after the work queued so far, the comparison of
     * `count` elements of `type` (enum tf_elem_type) of device buffer `got`
     * with device buffer `expected` by tf_verify's rule (verify.h), and the
     * outcome's copy to the host behind it on the side queue, so that
     * download_wait waits for it too. `slot` (0 .. TF_COMPARE_SLOTS - 1)
     * tells the outputs of one launch apart. After download_wait,
     * compare_result gives a slot's outcome: how many elements failed, the
     * first that did (UINT64_MAX: none), and tf_verify_checksum of
     * `expected` as the device read it. compare_queue returns -1 + err where
     * the device cannot compare; the runner compares on the host then. */
    int (*compare_available)(struct tf_backend_ctx *ctx);
    int (*compare_queue)(struct tf_backend_ctx *ctx, int slot, int type, const void *got,
                         const void *expected, size_t count, double rtol, double atol,
                         struct tf_error *err);
    void (*compare_result)(struct tf_backend_ctx *ctx, int slot, uint64_t *bad, uint64_t *first,
                           uint64_t *checksum);
};

#define TF_COMPARE_SLOTS 16 /* outputs one launch may compare on the device */

/* The host CPU backend. */
extern const struct tf_backend tf_backend_host;
/* NVIDIA GPUs: driver API, NVRTC and NVML, all loaded at run time. */
extern const struct tf_backend tf_backend_cuda;
/* AMD GPUs: HIP runtime (hipRTC inside it on ROCm 5, libhiprtc beside it on
 * ROCm >= 6) and ROCm SMI, all loaded at run time. */
extern const struct tf_backend tf_backend_hip;

/* Replay: answers from an archive or a Kernel Tuner cache (backend_replay.h);
 * offers devices only while a replay source is active, and compiles and runs
 * nothing: workers ask tf_replay_answer instead. */
extern const struct tf_backend tf_backend_replay;

/* Every backend compiled in, NULL-terminated. */
extern const struct tf_backend *const tf_backends[];
/* The backend called `name`, or NULL. */
const struct tf_backend *tf_backend_find(const char *name);

#endif
