/* bench/runner_overhead - what one configuration costs the runner around the variant.
 *
 * usage: bench/runner_overhead [N [JOB.yaml]]   (default 5000, bench/runner-overhead/job.yaml)
 * Compiles the job's first kernel at its default configuration once (a fresh
 * cache under /tmp), starts a host runner (this executable is its own runner,
 * like tests/unit/test_runner) and measures that configuration N times through
 * tf_runner_measure, as a worker does for N cached variants. The job asks for
 * one sample and no warm-up, so the time per configuration is mostly the
 * runner's protocol and isolation work (restores, guard checks, strays, the
 * shield's round trip, the process-state comparison). Prints the wall time per
 * configuration (mean, the median and the fastest of 20 batches) and the CPU
 * time per configuration of this process (the worker's side) and of the
 * runner and its shield (their rusage once reaped); run with
 * TUNEFARM_PROFILE=1 to have the runner print where its time in child_measure
 * went, and under `strace -c -f` for its system calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "schema/bundle.h"
#include "schema/job.h"
#include "schema/status.h"
#include "worker/backend.h"
#include "worker/compile.h"
#include "worker/runner.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_seconds(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void remove_cache(const char *dir)
{
    char *argv[] = {"rm", "-rf", (char *)dir, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        execvp("rm", argv);
        _exit(127);
    }
    int st;
    if (pid > 0)
        waitpid(pid, &st, 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "__runner") == 0)
        return tf_runner_main(argc, argv);
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: %s [N [JOB.yaml]]\n", argv[0]);
        return 0;
    }
    const long n = argc > 1 ? atol(argv[1]) : 5000;
    const char *job_path = argc > 2 ? argv[2] : "bench/runner-overhead/job.yaml";
    if (n < 20) {
        fprintf(stderr, "%s: N must be at least 20\n", argv[0]);
        return 2;
    }
    struct tf_error err = {0};
    struct tf_bundle *bundle = tf_bundle_create();
    struct tf_job *job = tf_job_load(job_path, bundle, &err);
    if (job == NULL) {
        tf_error_print(&err, "runner_overhead", stderr);
        return 2;
    }
    const struct tf_kernel *k = job->kernels[0].kernel;
    const uint32_t problem = (uint32_t)job->kernels[0].problems[0];
    char cache[] = "/tmp/tf-bench-overhead-XXXXXX", reference[4096];
    struct tf_device dev;
    if (mkdtemp(cache) == NULL || tf_backend_host.describe(0, &dev, &err) != 0)
        return 2;
    struct tf_compile_pool *pool =
        tf_compile_pool_create(NULL, &tf_backend_host, dev.arch, cache, 1, &err);
    struct tf_compiled c;
    struct tf_runner *r = NULL;
    if (pool == NULL || tf_compile_reference(pool, k, reference, sizeof reference, &err) != 0)
        goto fail;
    tf_compile_wait(pool, tf_compile_submit(pool, k, k->default_index), &c);
    if (c.status != TF_STATUS_OK) {
        fprintf(stderr, "runner_overhead: compile: %s\n", c.message);
        goto fail_quiet;
    }
    if (tf_runner_start("/proc/self/exe", bundle, "host", 0, &r, &err) != 0)
        goto fail;
    struct tf_result res;
    /* the problem's setup (buffers, reference) is not per configuration */
    if (tf_runner_measure(r, 0, problem, 0, k->default_index, c.binary_path, reference, &res,
                          &err) != 0)
        goto fail;
    enum { BATCHES = 20 };
    double batch[BATCHES], measured = 0.0;
    const long per = n / BATCHES;
    const double self0 = cpu_seconds(RUSAGE_SELF), children0 = cpu_seconds(RUSAGE_CHILDREN);
    const double t0 = now();
    for (int b = 0; b < BATCHES; b++) {
        const double tb = now();
        for (long i = 0; i < per; i++) {
            if (tf_runner_measure(r, 0, problem, 0, k->default_index, c.binary_path, reference,
                                  &res, &err) != 0)
                goto fail;
            if (res.status != TF_STATUS_OK) {
                fprintf(stderr, "runner_overhead: %s: %s\n", tf_status_name(res.status),
                        res.message);
                goto fail_quiet;
            }
            measured += res.time_median;
        }
        batch[b] = (now() - tb) / (double)per;
    }
    const double total = now() - t0;
    const double self = cpu_seconds(RUSAGE_SELF) - self0;
    const int starts = tf_runner_starts(r);
    tf_runner_destroy(r); /* reaped: the runner's and the shield's CPU time is ours to read */
    const double children = cpu_seconds(RUSAGE_CHILDREN) - children0;
    const double configs = (double)(per * BATCHES);
    qsort(batch, BATCHES, sizeof *batch, cmp_double);
    printf("runner_overhead: %ld configurations; wall per configuration: mean %.1f us, median "
           "batch %.1f us, fastest batch %.1f us (the variant's own sample %.1f us); CPU per "
           "configuration: worker %.1f us, runner + shield %.1f us; %d runner start(s)\n",
           per * BATCHES, total / configs * 1e6,
           (batch[BATCHES / 2 - 1] + batch[BATCHES / 2]) / 2 * 1e6, batch[0] * 1e6,
           measured / configs * 1e6, self / configs * 1e6, children / configs * 1e6, starts);
    tf_compile_pool_destroy(pool);
    tf_job_destroy(job);
    tf_bundle_destroy(bundle);
    remove_cache(cache);
    return 0;
fail:
    tf_error_print(&err, "runner_overhead", stderr);
fail_quiet:
    tf_runner_destroy(r);
    tf_compile_pool_destroy(pool);
    remove_cache(cache);
    return 1;
}
