/* device.c - names of the device properties kernels may use in expressions,
 * the class key the coordinator groups workers by, and the comparisons of
 * what devices run with (software versions, clock and power settings). */
#include "device.h"

#include <stdio.h>
#include <string.h>

static const char *const devprop_names[TF_DEVPROP_COUNT] = {
    [TF_DEVPROP_MAX_THREADS] = "max_threads",
    [TF_DEVPROP_MAX_SHARED] = "max_shared",
    [TF_DEVPROP_MAX_SHARED_OPTIN] = "max_shared_optin",
    [TF_DEVPROP_WARP_SIZE] = "warp_size",
    [TF_DEVPROP_SM_COUNT] = "sm_count",
    [TF_DEVPROP_L2_BYTES] = "l2_bytes",
    [TF_DEVPROP_MAX_REGISTERS] = "max_registers",
    [TF_DEVPROP_SIMD_BYTES] = "simd_bytes",
    [TF_DEVPROP_MAX_SHARED_PER_SM] = "max_shared_per_sm",
};

const char *tf_devprop_name(int p)
{
    return p >= 0 && p < TF_DEVPROP_COUNT ? devprop_names[p] : "unknown";
}

int tf_device_same_software(const struct tf_device *a, const struct tf_device *b)
{
    return strcmp(a->driver_version, b->driver_version) == 0 &&
           strcmp(a->runtime_version, b->runtime_version) == 0 &&
           strcmp(a->compiler_version, b->compiler_version) == 0 &&
           strcmp(a->tunefarm_version, b->tunefarm_version) == 0;
}

int tf_device_same_settings(const struct tf_device *a, const struct tf_device *b)
{
    return a->clock_mhz == b->clock_mhz && a->memory_clock_mhz == b->memory_clock_mhz &&
           a->power_limit_w == b->power_limit_w && strcmp(a->clock_policy, b->clock_policy) == 0;
}

/* ", " between items; "-" for an unknown value. */
static int add_change(char *out, size_t cap, size_t *len, const char *what, const char *x,
                      const char *y)
{
    if (strcmp(x, y) == 0)
        return 0;
    int w = snprintf(out + *len, cap - *len, "%s%s %s -> %s", *len ? ", " : "", what,
                     x[0] ? x : "-", y[0] ? y : "-");
    if (w > 0)
        *len = (size_t)w >= cap - *len ? cap - 1 : *len + (size_t)w;
    return 1;
}

static void number_text(double v, const char *unit, char *out, size_t cap)
{
    if (v > 0)
        snprintf(out, cap, "%.0f %s", v, unit);
    else
        out[0] = '\0';
}

int tf_device_changes(const struct tf_device *x, const struct tf_device *y, char *out, size_t cap)
{
    size_t len = 0;
    int n = 0;
    char a[32], b[32];
    out[0] = '\0';
    n += add_change(out, cap, &len, "driver", x->driver_version, y->driver_version);
    n += add_change(out, cap, &len, "runtime", x->runtime_version, y->runtime_version);
    n += add_change(out, cap, &len, "compiler", x->compiler_version, y->compiler_version);
    n += add_change(out, cap, &len, "tunefarm", x->tunefarm_version, y->tunefarm_version);
    number_text(x->clock_mhz, "MHz", a, sizeof a);
    number_text(y->clock_mhz, "MHz", b, sizeof b);
    n += add_change(out, cap, &len, "clock", a, b);
    number_text(x->memory_clock_mhz, "MHz", a, sizeof a);
    number_text(y->memory_clock_mhz, "MHz", b, sizeof b);
    n += add_change(out, cap, &len, "memory clock", a, b);
    number_text(x->power_limit_w, "W", a, sizeof a);
    number_text(y->power_limit_w, "W", b, sizeof b);
    n += add_change(out, cap, &len, "power limit", a, b);
    n += add_change(out, cap, &len, "clock policy", x->clock_policy, y->clock_policy);
    return n;
}

void tf_device_class_key(const struct tf_device *d, char *out, int cap)
{
    snprintf(out, (size_t)cap, "%s/%s/%s", d->backend, d->arch, d->name);
}

const char *tf_device_language(const struct tf_device *d)
{
    /* A replay device answers for its source's device: GPU architectures (and a
     * Kernel Tuner cache's "gpu") run cuda-dialect kernels, a CPU's C kernels. */
    if (strcmp(d->backend, "replay") == 0)
        return strncmp(d->arch, "sm_", 3) == 0 || strncmp(d->arch, "gfx", 3) == 0 ||
                       strcmp(d->arch, "gpu") == 0
                   ? "cuda"
                   : "c";
    return strcmp(d->backend, "host") == 0 ? "c" : "cuda";
}

bool tf_device_runs(const struct tf_device *d, const char *language)
{
    if (strcmp(d->backend, "replay") == 0 && strcmp(d->arch, "null") == 0)
        return true;
    return strcmp(language, tf_device_language(d)) == 0;
}

/* One representative model per architecture (public spec sheets); the real
 * device's own properties are used whenever the run has one. per_sm is the
 * shared memory of one multiprocessor (CUDA's "maximum amount of shared
 * memory per SM": 96, 164, 100, 100 and 228 KiB for compute capability 7.0,
 * 8.0, 8.6, 8.9 and 9.0; the 64 KiB LDS of a CDNA compute unit). `tunefarm
 * compile` and `tunefarm space` read this table; schema/kernel.md shows it
 * (keep the two in step). */
static const struct {
    const char *arch, *backend, *vendor, *name;
    int64_t max_threads, max_shared, max_shared_optin, warp, units, l2, registers, per_sm;
} nominal[] = {
    {"sm_70", "cuda", "NVIDIA", "NVIDIA V100 (nominal)",
     1024, 49152, 98304, 32, 80, 6 << 20, 65536, 98304},
    {"sm_80", "cuda", "NVIDIA", "NVIDIA A100 (nominal)",
     1024, 49152, 166912, 32, 108, 40 << 20, 65536, 167936},
    {"sm_86", "cuda", "NVIDIA", "NVIDIA A10 (nominal)",
     1024, 49152, 101376, 32, 72, 6 << 20, 65536, 102400},
    {"sm_89", "cuda", "NVIDIA", "NVIDIA L40S (nominal)",
     1024, 49152, 101376, 32, 142, 96 << 20, 65536, 102400},
    {"sm_90", "cuda", "NVIDIA", "NVIDIA H100 (nominal)",
     1024, 49152, 232448, 32, 132, 50 << 20, 65536, 233472},
    {"gfx90a", "hip", "AMD", "AMD Instinct MI250X (nominal)",
     1024, 65536, 65536, 64, 110, 8 << 20, 65536, 65536},
    {"gfx942", "hip", "AMD", "AMD Instinct MI300X (nominal)",
     1024, 65536, 65536, 64, 304, 4 << 20, 65536, 65536},
};

int tf_device_for_arch(const char *arch, struct tf_device *out)
{
    for (size_t i = 0; i < sizeof nominal / sizeof nominal[0]; i++) {
        if (strcmp(nominal[i].arch, arch) != 0)
            continue;
        memset(out, 0, sizeof *out);
        snprintf(out->backend, sizeof out->backend, "%s", nominal[i].backend);
        snprintf(out->vendor, sizeof out->vendor, "%s", nominal[i].vendor);
        snprintf(out->name, sizeof out->name, "%s", nominal[i].name);
        snprintf(out->arch, sizeof out->arch, "%s", arch);
        out->compute_units = (uint32_t)nominal[i].units;
        out->props[TF_DEVPROP_MAX_THREADS] = nominal[i].max_threads;
        out->props[TF_DEVPROP_MAX_SHARED] = nominal[i].max_shared;
        out->props[TF_DEVPROP_MAX_SHARED_OPTIN] = nominal[i].max_shared_optin;
        out->props[TF_DEVPROP_WARP_SIZE] = nominal[i].warp;
        out->props[TF_DEVPROP_SM_COUNT] = nominal[i].units;
        out->props[TF_DEVPROP_L2_BYTES] = nominal[i].l2;
        out->props[TF_DEVPROP_MAX_REGISTERS] = nominal[i].registers;
        out->props[TF_DEVPROP_MAX_SHARED_PER_SM] = nominal[i].per_sm;
        return 0;
    }
    return -1;
}

int tf_device_nominal_count(void) { return (int)(sizeof nominal / sizeof nominal[0]); }

const char *tf_device_nominal_arch(int i)
{
    return i >= 0 && i < tf_device_nominal_count() ? nominal[i].arch : NULL;
}

const char *tf_device_known_archs(void)
{
    /* from the table, so that the list cannot drift from it */
    static char list[256];
    if (list[0] == '\0') {
        size_t used = 0;
        for (int i = 0; i < tf_device_nominal_count(); i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                     nominal[i].arch);
    }
    return list;
}
