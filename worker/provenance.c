/* provenance.c - what a device runs with, read from the files Linux offers.
 *
 * Small readers of sysfs and procfs files, each rooted at a folder given by
 * the caller (tests use their own). A value is the file's first line; a
 * missing or unreadable file leaves the field unknown. The host's settings
 * are per CPU in sysfs: the governor is reported as one word when every CPU
 * of the worker agrees and "mixed" when not, and the clock as the lowest
 * ceiling among them, the one that binds a kernel spread over all of them.
 * RAPL exposes a power limit per package zone (constraint 0 is the long-term
 * limit); the node's limit is their sum. */
#include "provenance.h"

#include <ctype.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/error.h"

/* The first line of `path` into `out` (no newline); 0, or -1 (out ""). */
static int first_line(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "re");
    out[0] = '\0';
    if (f == NULL)
        return -1;
    if (fgets(out, (int)cap, f) == NULL)
        out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
    return out[0] ? 0 : -1;
}

/* The first line of `path` as a non-negative number; -1 if none. */
static double number_in(const char *path)
{
    char line[64], *end;
    if (first_line(path, line, sizeof line) != 0)
        return -1;
    double v = strtod(line, &end);
    return end != line && v >= 0 ? v : -1;
}

int tf_provenance_own_cpus(int *cpus, int max)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    return n;
}

void tf_provenance_host(const char *sys, const int *cpus, int ncpus, struct tf_device *d)
{
    char path[4096], governor[32];
    double lowest = -1;
    d->clock_policy[0] = '\0';
    for (int i = 0; i < ncpus; i++) {
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cpufreq/scaling_governor", sys,
                 cpus[i]);
        if (first_line(path, governor, sizeof governor) == 0) {
            if (d->clock_policy[0] == '\0')
                tf_strlcpy(d->clock_policy, governor, sizeof d->clock_policy);
            else if (strcmp(d->clock_policy, governor) != 0)
                tf_strlcpy(d->clock_policy, "mixed", sizeof d->clock_policy);
        }
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cpufreq/scaling_max_freq", sys,
                 cpus[i]);
        const double khz = number_in(path);
        if (khz > 0 && (lowest < 0 || khz < lowest))
            lowest = khz;
    }
    d->clock_mhz = lowest > 0 ? lowest / 1000.0 : 0;

    /* Top-level RAPL zones are intel-rapl:N (sub-zones have a second colon);
     * AMD CPUs use the same names. Only package zones: psys covers them. */
    double watts = 0;
    snprintf(path, sizeof path, "%s/class/powercap", sys);
    DIR *dir = opendir(path);
    struct dirent *e;
    while (dir && (e = readdir(dir)) != NULL) {
        const char *colon = strchr(e->d_name, ':');
        if (strncmp(e->d_name, "intel-rapl:", 11) != 0 || colon == NULL ||
            strchr(colon + 1, ':') != NULL)
            continue;
        char name[64];
        snprintf(path, sizeof path, "%s/class/powercap/%s/name", sys, e->d_name);
        if (first_line(path, name, sizeof name) != 0 || strncmp(name, "package", 7) != 0)
            continue;
        snprintf(path, sizeof path, "%s/class/powercap/%s/constraint_0_power_limit_uw", sys,
                 e->d_name);
        const double uw = number_in(path);
        if (uw > 0)
            watts += uw * 1e-6;
    }
    if (dir)
        closedir(dir);
    d->power_limit_w = watts;
}

void tf_provenance_amdgpu(const char *sys, const char *pci_bus, struct tf_device *d)
{
    char bus[64], path[4096];
    /* sysfs names PCI devices in lower case; HIP may answer in upper case. */
    tf_strlcpy(bus, pci_bus, sizeof bus);
    for (char *p = bus; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    d->clock_policy[0] = '\0';
    d->power_limit_w = 0;
    if (bus[0] == '\0' || strchr(bus, '/') != NULL)
        return;
    snprintf(path, sizeof path, "%s/bus/pci/devices/%s/power_dpm_force_performance_level", sys,
             bus);
    first_line(path, d->clock_policy, sizeof d->clock_policy);
    snprintf(path, sizeof path, "%s/bus/pci/devices/%s/hwmon", sys, bus);
    DIR *dir = opendir(path);
    struct dirent *e;
    while (dir && (e = readdir(dir)) != NULL && d->power_limit_w == 0) {
        if (strncmp(e->d_name, "hwmon", 5) != 0)
            continue;
        snprintf(path, sizeof path, "%s/bus/pci/devices/%s/hwmon/%s/power1_cap", sys, bus,
                 e->d_name);
        const double uw = number_in(path);
        if (uw > 0)
            d->power_limit_w = uw * 1e-6;
    }
    if (dir)
        closedir(dir);
}

int tf_provenance_amdgpu_version(const char *sys, char *out, size_t cap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/module/amdgpu/version", sys);
    return first_line(path, out, cap);
}

int tf_provenance_nvidia_version(const char *proc, char *out, size_t cap)
{
    char path[4096], line[512];
    out[0] = '\0';
    snprintf(path, sizeof path, "%s/driver/nvidia/version", proc);
    if (first_line(path, line, sizeof line) != 0)
        return -1;
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul ..." (the
     * open modules say "NVIDIA UNIX Open Kernel Module for x86_64  580.65.06 ..."):
     * the first word made of digits and dots after "Module". */
    const char *p = strstr(line, "Module");
    if (p == NULL)
        return -1;
    for (p += 6; *p; p++) {
        if (!isdigit((unsigned char)*p) || (p[-1] != ' ' && p[-1] != '\t'))
            continue;
        size_t n = strspn(p, "0123456789.");
        if (memchr(p, '.', n) == NULL)
            continue;
        if (n >= cap)
            n = cap - 1;
        memcpy(out, p, n);
        out[n] = '\0';
        return 0;
    }
    return -1;
}

int tf_provenance_rocm_version(const char *root, char *out, size_t cap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/.info/version", root);
    if (first_line(path, out, cap) != 0)
        return -1;
    out[strcspn(out, "-")] = '\0'; /* "6.2.0-66": the build number says nothing more */
    return out[0] ? 0 : -1;
}
