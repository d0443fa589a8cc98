/* device.c - names of the device properties kernels may use in expressions,
 * and the class key the coordinator groups workers by. */
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
};

const char *tf_devprop_name(int p)
{
    return p >= 0 && p < TF_DEVPROP_COUNT ? devprop_names[p] : "unknown";
}

void tf_device_class_key(const struct tf_device *d, char *out, int cap)
{
    snprintf(out, (size_t)cap, "%s/%s/%s", d->backend, d->arch, d->name);
}

const char *tf_device_language(const struct tf_device *d)
{
    return strcmp(d->backend, "host") == 0 ? "c" : "cuda";
}
