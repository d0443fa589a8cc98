/* nocuda.c - libtunefarm-nocuda.so, the CUDA driver as a compiler process sees it:
 * no device.
 *
 * NVRTC 13 opens the driver by name (dlopen "libcuda.so.1") and calls cuInit
 * inside nvrtcCompileProgram, to reach the driver's compute cache. On a node
 * with GPUs every cuInit takes the driver's global locks, even with
 * CUDA_VISIBLE_DEVICES empty: 64 compiler processes on a 4-GPU H200 node
 * waited there half their time, so `compile -j 64` made no more variants/s
 * than -j 32 (bench/results/cores-2026-11-27-h200x4.md). A compiler process
 * never needs a device, and tunefarm caches compiled variants itself. So a
 * CUDA compiler process loads this library first (compiler.c); its SONAME is
 * libcuda.so.1, and the dynamic loader answers a later dlopen of that name
 * with the library already loaded: NVRTC finds a driver without devices and
 * compiles as it does on a machine without a driver. Built as a shared object
 * on its own, never linked into tunefarm or into a process that runs kernels. */

/* The driver's signatures (cuda.h), with its enum and handles as int. */
int cuInit(unsigned int flags);
int cuDriverGetVersion(int *version);
int cuGetExportTable(const void **table, const void *id);

enum { NOCUDA_ERROR_NO_DEVICE = 100 }; /* CUDA_ERROR_NO_DEVICE */

int cuInit(unsigned int flags)
{
    (void)flags;
    return NOCUDA_ERROR_NO_DEVICE;
}

int cuDriverGetVersion(int *version)
{
    if (version != 0)
        *version = 0;
    return NOCUDA_ERROR_NO_DEVICE;
}

int cuGetExportTable(const void **table, const void *id)
{
    (void)id;
    if (table != 0)
        *table = 0;
    return NOCUDA_ERROR_NO_DEVICE;
}
