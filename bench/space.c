/* bench/space - how fast tunefarm counts and lists a constrained space.
 *
 * usage: bench/space [-r REPEAT] [-p PROBLEM] [-a ARCH] KERNEL.yaml [max_threads max_shared]
 * For each problem of the kernel (or PROBLEM), on the nominal device of ARCH
 * (default sm_90: 1024 threads and 48 KiB of shared memory per block, 64 Ki
 * registers, 132 SMs; the two numbers override those limits), prints the
 * Cartesian size, the number of valid configurations, and the best of REPEAT
 * (default 3) timings, each on a fresh space (nothing memoised before):
 *   count      tf_space_count over the whole space;
 *   list       a cursor (tf_space_cursor_next) over every valid configuration;
 *   plain      the same two with the memo off (tf_space_set_memo_limit 0): the
 *              pruned depth-first walk without sharing, for comparison;
 * and the memo's size after listing. Listing checks that it returns the
 * counted number of configurations, in increasing order. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schema/kernel.h"
#include "schema/space.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds to count (list = false) or list the space of problem p on a fresh
 * space; *n what was counted or listed. -1 on an error. */
static double timed(const struct tf_kernel *k, int p, const struct tf_device *dev, bool list,
                    size_t memo, uint64_t *n, size_t *memo_used)
{
    struct tf_error err = {0};
    double t0 = now();
    struct tf_space *s = tf_space_create(k, p, dev, &err);
    if (s == NULL) {
        tf_error_print(&err, "bench/space", stderr);
        return -1;
    }
    tf_space_set_memo_limit(s, memo);
    *n = 0;
    if (!list) {
        if (tf_space_count(s, 0, UINT64_MAX, n, &err)) {
            tf_error_print(&err, "bench/space", stderr);
            tf_space_destroy(s);
            return -1;
        }
    } else {
        struct tf_space_cursor *c = tf_space_cursor_create(s, 0, NULL);
        uint64_t idx, last = 0;
        int rc;
        while ((rc = tf_space_cursor_next(c, UINT64_MAX, &idx, &err)) == 1) {
            if (*n > 0 && idx <= last) {
                fprintf(stderr, "bench/space: listed %llu after %llu\n", (unsigned long long)idx,
                        (unsigned long long)last);
                rc = -1;
                break;
            }
            last = idx;
            ++*n;
        }
        tf_space_cursor_destroy(c);
        if (rc < 0) {
            tf_error_print(&err, "bench/space", stderr);
            tf_space_destroy(s);
            return -1;
        }
    }
    double t = now() - t0;
    if (memo_used)
        *memo_used = tf_space_memo_bytes(s);
    tf_space_destroy(s);
    return t;
}

int main(int argc, char **argv)
{
    int repeat = 3, c;
    const char *problem = NULL, *arch = "sm_90";
    while ((c = getopt(argc, argv, "r:p:a:")) != -1) {
        if (c == 'r')
            repeat = atoi(optarg) > 0 ? atoi(optarg) : 1;
        else if (c == 'p')
            problem = optarg;
        else if (c == 'a')
            arch = optarg;
        else
            optind = argc + 1;
    }
    if (optind > argc || (argc - optind != 1 && argc - optind != 3)) {
        fprintf(stderr, "usage: %s [-r REPEAT] [-p PROBLEM] [-a ARCH] KERNEL.yaml "
                        "[max_threads max_shared]\n", argv[0]);
        return 2;
    }
    struct tf_device dev;
    if (tf_device_for_arch(arch, &dev) != 0) {
        fprintf(stderr, "bench/space: unknown architecture %s (known: %s)\n", arch,
                tf_device_known_archs());
        return 2;
    }
    if (argc - optind == 3) {
        dev.props[TF_DEVPROP_MAX_THREADS] = atoll(argv[optind + 1]);
        dev.props[TF_DEVPROP_MAX_SHARED] = atoll(argv[optind + 2]);
    }
    struct tf_error err = {0};
    struct tf_bundle *b = tf_bundle_create();
    struct tf_kernel *k = tf_kernel_load(argv[optind], b, &err);
    if (k == NULL) {
        tf_error_print(&err, "bench/space", stderr);
        return 2;
    }
    printf("kernel %s: %d parameters, %d constraints; device %s max_threads=%lld "
           "max_shared=%lld; best of %d\n",
           k->name, k->nparams, k->nconstraints, arch,
           (long long)dev.props[TF_DEVPROP_MAX_THREADS],
           (long long)dev.props[TF_DEVPROP_MAX_SHARED], repeat);
    printf("%-8s %12s %10s %10s %10s %12s %11s %11s %9s\n", "problem", "cartesian", "valid",
           "count (s)", "list (s)", "listed/s", "plain cnt", "plain list", "memo MiB");
    int code = 0, matched = 0;
    for (int p = 0; p < k->nproblems; p++) {
        if (problem && strcmp(problem, k->problems[p].name) != 0)
            continue;
        matched++;
        double best[4] = {1e300, 1e300, 1e300, 1e300};
        uint64_t n[4] = {0};
        size_t memo = 0;
        for (int r = 0; r < repeat && code == 0; r++)
            for (int m = 0; m < 4; m++) {
                double t = timed(k, p, &dev, m & 1, m < 2 ? TF_SPACE_MEMO_BYTES : 0, &n[m],
                                 m == 1 ? &memo : NULL);
                if (t < 0) {
                    code = 1;
                    break;
                }
                best[m] = t < best[m] ? t : best[m];
            }
        if (code)
            break;
        if (n[1] != n[0] || n[2] != n[0] || n[3] != n[0]) {
            fprintf(stderr, "bench/space: counted %llu, listed %llu, plain %llu / %llu\n",
                    (unsigned long long)n[0], (unsigned long long)n[1],
                    (unsigned long long)n[2], (unsigned long long)n[3]);
            code = 1;
        }
        uint64_t cart = tf_kernel_cartesian(k);
        printf("%-8s %12llu %10llu %10.6f %10.6f %12.0f %11.6f %11.6f %9.1f\n",
               k->problems[p].name, (unsigned long long)cart, (unsigned long long)n[0], best[0],
               best[1], best[1] > 0 ? (double)n[1] / best[1] : 0.0, best[2], best[3],
               (double)memo / (1024.0 * 1024.0));
        fflush(stdout);
    }
    if (problem && matched == 0) {
        fprintf(stderr, "bench/space: no problem '%s'\n", problem);
        code = 2;
    }
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
    return code;
}
