/* provenance.h - what a device runs with, read from the files Linux offers.
 *
 * The backends fill a device's versions and settings (schema/device.h) from
 * their vendor libraries where those say it (NVML, HIP); the rest comes from
 * here: the host's cpufreq governor and clock ceiling and its RAPL package
 * power limits, the amdgpu module's version, DPM performance level and power
 * cap, the NVIDIA kernel module's version (when NVML is absent) and the ROCm
 * release. Every reader takes the root of the tree it reads ("/sys",
 * "/proc", "/opt/rocm"), so the unit tests point it at a folder they wrote; a
 * file that is missing or unreadable leaves its field unknown ("" or 0),
 * never an error: provenance must not stop a measurement. */
#ifndef TF_PROVENANCE_H
#define TF_PROVENANCE_H

#include <stddef.h>

#include "../schema/device.h"

/* Host settings of CPUs `cpus[0..ncpus)` under `sys` ("/sys"): clock_policy
 * (the cpufreq governor; "mixed" when the CPUs differ), clock_mhz (the lowest
 * scaling_max_freq) and power_limit_w (constraint 0 of every RAPL package zone
 * under sys/class/powercap, summed). */
void tf_provenance_host(const char *sys, const int *cpus, int ncpus, struct tf_device *d);
/* The CPUs this process may run on into `cpus` (at most `max`); their count. */
int tf_provenance_own_cpus(int *cpus, int max);
/* AMD GPU settings of the device at PCI address `pci_bus` ("0000:c1:00.0")
 * under `sys`: clock_policy (power_dpm_force_performance_level) and
 * power_limit_w (hwmon power1_cap, microwatts). */
void tf_provenance_amdgpu(const char *sys, const char *pci_bus, struct tf_device *d);
/* The amdgpu module's version (sys/module/amdgpu/version) into `out`; 0, or
 * -1 (out "") where the module has none (a driver built into the kernel). */
int tf_provenance_amdgpu_version(const char *sys, char *out, size_t cap);
/* The NVIDIA kernel module's version from proc/driver/nvidia/version
 * ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  ...") into
 * `out`; 0, or -1 (out "") if there is none. */
int tf_provenance_nvidia_version(const char *proc, char *out, size_t cap);
/* The ROCm release from ROOT/.info/version ("6.2.0-66" -> "6.2.0") into
 * `out`; 0, or -1 (out ""). */
int tf_provenance_rocm_version(const char *root, char *out, size_t cap);

#endif
