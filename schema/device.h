/* device.h - what a worker announces about its device, and the properties
 * kernel constraints may read.
 *
 * A device class (the unit the coordinator schedules for) is the triple
 * backend + arch + name: two H100s share a class, an H100 and an A100 do not. */
#ifndef TF_DEVICE_H
#define TF_DEVICE_H

#include <stdint.h>

/* Device properties usable in expressions, in slot order. Never renumber. */
enum tf_devprop {
    TF_DEVPROP_MAX_THREADS,      /* max threads per block (host: 1) */
    TF_DEVPROP_MAX_SHARED,       /* default shared memory per block, bytes (host: L1d) */
    TF_DEVPROP_MAX_SHARED_OPTIN, /* opt-in shared memory per block, bytes */
    TF_DEVPROP_WARP_SIZE,        /* threads per warp / wavefront (host: 1) */
    TF_DEVPROP_SM_COUNT,         /* SMs / CUs (host: cores bound to the worker) */
    TF_DEVPROP_L2_BYTES,         /* last-level cache (host: L2 of its cores) */
    TF_DEVPROP_MAX_REGISTERS,    /* registers per block (host: 0) */
    TF_DEVPROP_SIMD_BYTES,       /* host: widest vector register, bytes; GPUs: 0 */
    TF_DEVPROP_MAX_SHARED_PER_SM, /* shared memory of one SM / CU, all its blocks together,
                                     bytes (host: L1d, as max_shared) */
    TF_DEVPROP_COUNT
};

/* Expression name of property `p` ("max_threads", ...). */
const char *tf_devprop_name(int p);

struct tf_device {
    char backend[16];        /* "host", "cuda", "hip" */
    char vendor[32];         /* "NVIDIA", "AMD", "GenuineIntel"... */
    char name[128];          /* marketing name, "NVIDIA H100 80GB HBM3" */
    char arch[32];           /* "sm_90", "gfx942", "x86_64-znver3" */
    char uuid[64];
    char pci_bus[32];        /* "0000:17:00.0", empty for host */
    char host[64];           /* hostname of the node */
    uint64_t memory_bytes;
    uint32_t compute_units;
    char driver_version[32];
    char runtime_version[32];
    char compiler_version[96];
    int64_t props[TF_DEVPROP_COUNT];
};

/* The kernel language a device's backend compiles: "c" for host, "cuda" for the
 * cuda and hip backends (one single source for both GPU vendors). */
const char *tf_device_language(const struct tf_device *d);
/* A nominal device of architecture `arch` ("sm_80", "sm_90", "gfx90a",
 * "gfx942"...), with the properties constraints read, for compiling ahead on a
 * machine that has no such device. 0, or -1 for an unknown architecture. */
int tf_device_for_arch(const char *arch, struct tf_device *out);
/* Comma-separated list of the architectures tf_device_for_arch knows. */
const char *tf_device_known_archs(void);
/* Write the class key "backend/arch/name" into `out`. */
void tf_device_class_key(const struct tf_device *d, char *out, int cap);

#endif
