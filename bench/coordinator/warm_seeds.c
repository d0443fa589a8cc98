/* bench/coordinator/warm_seeds - how long a warm start takes to pick its seeds.
 *
 * usage: bench/coordinator/warm_seeds [ROWS [COUNT]]
 * A random search of tests/fixtures/followup_huge (problem dense, 1.28 * 10^8
 * valid configurations) warm-started from an archive of ROWS ok results
 * (default 100000, distinct random valid configurations) measured on another
 * device class, taking COUNT seeds per class (default ROWS, search.warm_count
 * allows 100000). Prints the time of tf_plan_warm_start (rank, map,
 * de-duplicate, validate) and the seeds kept. Run from the repository root. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/plan.h"
#include "schema/archive.h"
#include "schema/bundle.h"
#include "schema/job.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const long rows = argc > 1 ? atol(argv[1]) : 100000;
    const long count = argc > 2 ? atol(argv[2]) : rows;
    if (rows < 1 || count < 1 || count > 100000) {
        fprintf(stderr, "usage: %s [ROWS [COUNT (1..100000)]]\n", argv[0]);
        return 2;
    }
    char text[512];
    snprintf(text, sizeof text,
             "name: warm_seeds\nkernels:\n  - kernel: ../../tests/fixtures/followup_huge\n"
             "    problems: [dense]\ntargets: [host]\nsearch: {strategy: random, budget: "
             "200000, seed: 3, warm_start: [same], warm_count: %ld}\n", count);
    struct tf_error err = {0};
    struct tf_bundle *b = tf_bundle_create();
    tf_bundle_add(b, "bench/coordinator/warm_seeds.yaml", text, strlen(text));
    struct tf_job *job = tf_job_load("bench/coordinator/warm_seeds.yaml", b, &err);
    if (job == NULL) {
        tf_error_print(&err, "warm_seeds", stderr);
        return 2;
    }
    struct tf_device dev = {.backend = "host", .arch = "x86_64", .name = "bench host"};
    struct tf_plan *plan = tf_plan_create(job, 1, &dev, &err);
    if (plan == NULL) {
        tf_error_print(&err, "warm_seeds", stderr);
        return 2;
    }
    struct tf_task *t = &plan->tasks[0];
    /* The source: ROWS distinct valid configurations, ok, on another class. */
    struct tf_archive *a = tf_archive_create();
    struct tf_device other = {.backend = "cuda", .arch = "sm_90", .name = "Other GPU"};
    const uint32_t d = tf_archive_add_device(a, &other);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, job->kernels[0].kernel, &err);
    const uint32_t prob = tf_archive_problem_for(ak, job->kernels[0].kernel, job->kernels[0].problems[0]);
    uint64_t x = 12345, made = 0;
    while (made < (uint64_t)rows) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const uint64_t c = (x >> 11) % tf_space_cartesian(t->space);
        bool valid;
        if (tf_space_is_valid(t->space, c, &valid, &err) || !valid)
            continue;
        struct tf_archive_row r = {.device = d};
        tf_result_init(&r.r, 0, prob, c, TF_STATUS_OK);
        r.r.time_median = 1e-6 * (double)(1 + (x >> 40) % 100000);
        tf_archive_append(ak, &r);
        made++;
    }
    const double t0 = now();
    if (tf_plan_warm_start(plan, job, a, -1, NULL, &err)) {
        tf_error_print(&err, "warm_seeds", stderr);
        return 1;
    }
    const double s = now() - t0;
    printf("warm start: %ld source rows, warm_count %ld: %llu seeds kept in %.3f s\n", rows,
           count, (unsigned long long)t->nseeds, s);
    tf_archive_destroy(a);
    tf_plan_destroy(plan);
    tf_job_destroy(job);
    tf_bundle_destroy(b);
    return 0;
}
