/* device.h - what a worker announces about its device, and the properties
 * kernel constraints may read.
 *
 * A device class (the unit the coordinator schedules for) is the triple
 * backend + arch + name: two H100s share a class, an H100 and an A100 do not. */
#ifndef TF_DEVICE_H
#define TF_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
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
    /* What the device runs with, read when its worker starts. These change under
     * a device (a driver upgrade, a new toolkit, clocks set by an admin), so a
     * run records them per session and device (archive /session_devices);
     * /devices keeps the values first seen. Numbers: 0 when unknown. */
    char driver_version[32];   /* the kernel driver: NVIDIA "580.159.04", amdgpu "6.8.5",
                                  host: the Linux release */
    char runtime_version[32];  /* "CUDA 13.0" (the driver API's version), "HIP 6.2.41133
                                  (ROCm 6.2.0)", host "glibc 2.36" */
    char compiler_version[96]; /* "NVRTC 13.0", "hipRTC ...", host: `cc --version` line 1 */
    char tunefarm_version[32]; /* of the worker that describes the device */
    double clock_mhz;          /* configured core clock: NVIDIA application SM clock,
                                  host cpufreq scaling_max_freq (the lowest of the
                                  worker's CPUs); AMD: 0 */
    double memory_clock_mhz;   /* NVIDIA application memory clock; others 0 */
    double power_limit_w;      /* NVIDIA enforced power limit, AMD hwmon power1_cap,
                                  host RAPL package limits (summed) */
    char clock_policy[32];     /* host cpufreq governor ("performance", "mixed" when
                                  the worker's CPUs differ), AMD DPM performance level
                                  ("auto", "high", "manual"); NVIDIA "" */
    int64_t props[TF_DEVPROP_COUNT];
};

/* 1 if `a` and `b` run the same software: driver, runtime, compiler and
 * tunefarm versions. A run resumes only on devices where this holds. */
int tf_device_same_software(const struct tf_device *a, const struct tf_device *b);
/* 1 if `a` and `b` have the same clock and power settings (clocks, power
 * limit, clock policy). */
int tf_device_same_settings(const struct tf_device *a, const struct tf_device *b);

/* The kernel language a device's backend compiles: "c" for host, "cuda" for the
 * cuda and hip backends (one single source for both GPU vendors). */
const char *tf_device_language(const struct tf_device *d);
/* Whether `d` runs kernels of `language` ("c", "cuda"): its language, or any
 * for the null replay device (`--replay null:` answers every kernel). */
bool tf_device_runs(const struct tf_device *d, const char *language);
/* A nominal device of architecture `arch` ("sm_80", "sm_90", "gfx90a",
 * "gfx942"...), with the properties constraints read, for compiling ahead on a
 * machine that has no such device. 0, or -1 for an unknown architecture. */
int tf_device_for_arch(const char *arch, struct tf_device *out);
/* How many architectures tf_device_for_arch knows, and the i-th one's name
 * (NULL past the end). */
int tf_device_nominal_count(void);
const char *tf_device_nominal_arch(int i);
/* Comma-separated list of the architectures tf_device_for_arch knows. */
const char *tf_device_known_archs(void);
/* What differs between `x` and `y` (a device, or a device class, at two
 * times) as "driver 580.65.06 -> 580.159.04, power limit 700 W -> 600 W" into
 * `out` ("" if nothing): versions first, then settings. Returns the number of
 * differences. */
int tf_device_changes(const struct tf_device *x, const struct tf_device *y, char *out, size_t cap);
/* Write the class key "backend/arch/name" into `out`. */
void tf_device_class_key(const struct tf_device *d, char *out, int cap);

#endif
