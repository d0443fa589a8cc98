/* bench/space - how fast tunefarm counts and enumerates a constrained space.
 *
 * usage: bench/space KERNEL.yaml [max_threads max_shared]
 * For each problem of the kernel, on a device with the given limits (default
 * an H100-like 1024 threads and 48 KiB of shared memory per block, 64 Ki
 * registers per block, 132 SMs), prints the Cartesian
 * size, the number of valid configurations, the time to count them exactly
 * (pruned walk with trailing-level multiplication), the time to enumerate them
 * one by one (pruned walk), and the time of the naive alternative - testing
 * every Cartesian configuration with all constraints - measured on a sample
 * of a million and extrapolated. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "schema/kernel.h"
#include "schema/space.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: %s KERNEL.yaml [max_threads max_shared]\n", argv[0]);
        return 2;
    }
    struct tf_error err = {0};
    struct tf_bundle *b = tf_bundle_create();
    struct tf_kernel *k = tf_kernel_load(argv[1], b, &err);
    if (k == NULL) {
        tf_error_print(&err, "bench/space", stderr);
        return 2;
    }
    struct tf_device dev = {.backend = "cuda", .name = "bench device"};
    dev.props[TF_DEVPROP_MAX_THREADS] = argc == 4 ? atoll(argv[2]) : 1024;
    dev.props[TF_DEVPROP_MAX_SHARED] = argc == 4 ? atoll(argv[3]) : 48 * 1024;
    dev.props[TF_DEVPROP_WARP_SIZE] = 32;
    dev.props[TF_DEVPROP_MAX_SHARED_OPTIN] = 232448;
    dev.props[TF_DEVPROP_MAX_REGISTERS] = 65536;
    dev.props[TF_DEVPROP_SM_COUNT] = 132;
    dev.props[TF_DEVPROP_L2_BYTES] = 50 * 1024 * 1024;
    printf("kernel %s: %d parameters, %d constraints; device max_threads=%lld max_shared=%lld\n",
           k->name, k->nparams, k->nconstraints, (long long)dev.props[TF_DEVPROP_MAX_THREADS],
           (long long)dev.props[TF_DEVPROP_MAX_SHARED]);
    printf("%-8s %12s %10s %12s %14s %16s %14s\n", "problem", "cartesian", "valid", "count (s)",
           "enumerate (s)", "valid/s enum", "naive est. (s)");
    int code = 0;
    for (int p = 0; p < k->nproblems; p++) {
        struct tf_space *s = tf_space_create(k, p, &dev, &err);
        if (s == NULL) {
            tf_error_print(&err, "bench/space", stderr);
            code = 1;
            break;
        }
        uint64_t cart = tf_space_cartesian(s), valid = 0, listed = 0, idx = 0;
        double t0 = now();
        if (tf_space_count(s, 0, UINT64_MAX, &valid, &err))
            code = 1;
        double t1 = now();
        while (tf_space_next(s, idx, UINT64_MAX, &idx, &err) == 1) {
            listed++;
            idx++;
        }
        double t2 = now();
        /* Naive: check every configuration in full; time a sample. */
        uint64_t sample = cart < 1000000 ? cart : 1000000, naive_valid = 0;
        struct tf_value slots[k->nslots];
        double t3 = now();
        for (uint64_t i = 0; i < sample; i++) {
            bool ok;
            tf_kernel_bind(k, i * (cart / sample), p, &dev, slots);
            tf_kernel_check(k, slots, &ok, &err);
            naive_valid += ok;
        }
        (void)naive_valid;
        double naive = (now() - t3) * (double)cart / (double)sample;
        if (listed != valid) {
            fprintf(stderr, "bench/space: count %llu != enumerated %llu\n",
                    (unsigned long long)valid, (unsigned long long)listed);
            code = 1;
        }
        printf("%-8s %12llu %10llu %12.4f %14.4f %16.0f %14.2f\n", k->problems[p].name,
               (unsigned long long)cart, (unsigned long long)valid, t1 - t0, t2 - t1,
               (t2 - t1) > 0 ? (double)listed / (t2 - t1) : 0.0, naive);
        tf_space_destroy(s);
    }
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
    return code;
}
