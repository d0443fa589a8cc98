/* gen_wire.c - write seed messages for fuzz_wire with the real encoders.
 *
 *   build/fuzz/gen_wire OUTDIR JOB.yaml...
 *
 * One file per message: HELLO (a nominal sm_90 device, and a host device),
 * JOB (each job given, loaded from disk as the coordinator does), REQUEST,
 * WORK (a range and an index list), COMPILE, RESULTS (ok and failed records)
 * and STOP. `make fuzz-corpus-wire` regenerates tests/fuzz/corpus/wire/. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/job.h"
#include "schema/wire.h"

static void save(const char *dir, const char *name, const struct tf_buf *b)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(b->data, 1, b->len, f) != b->len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUTDIR [JOB.yaml...]\n", argv[0]);
        return 2;
    }
    const char *out = argv[1];
    struct tf_buf b = {0};
    struct tf_device gpu, host;
    memset(&host, 0, sizeof host);
    if (tf_device_for_arch("sm_90", &gpu) != 0)
        return 1;
    strcpy(gpu.uuid, "GPU-0123");
    strcpy(gpu.host, "node1");
    strcpy(host.backend, "host");
    strcpy(host.vendor, "GenuineIntel");
    strcpy(host.name, "Intel(R) Xeon(R) Processor");
    strcpy(host.arch, "x86_64");
    host.props[TF_DEVPROP_MAX_THREADS] = 1;
    host.props[TF_DEVPROP_MAX_SHARED] = 49152;
    tf_wire_hello(&b, &gpu, "cuda,hip");
    save(out, "hello_gpu", &b);
    tf_wire_hello(&b, &host, "host");
    save(out, "hello_host", &b);
    tf_wire_request(&b);
    save(out, "request", &b);
    tf_wire_stop(&b);
    save(out, "stop", &b);
    struct tf_work w = {.kernel = 0, .problem = 1, .phase = 0, .lo = 100, .hi = 400};
    tf_wire_work(&b, &w);
    save(out, "work_range", &b);
    uint64_t list[] = {3, 17, 99, 2999};
    w = (struct tf_work){.kernel = 1, .problem = 0, .phase = 2, .nlist = 4, .list = list};
    tf_wire_work(&b, &w);
    save(out, "work_list", &b);
    tf_wire_compile(&b, &gpu, &w);
    save(out, "compile", &b);
    struct tf_result r[3];
    tf_result_init(&r[0], 0, 0, 42, TF_STATUS_OK);
    r[0].time_median = r[0].time_min = r[0].time_mean = 1.5e-4;
    r[0].time_rsd = 0.003;
    r[0].samples = 12;
    r[0].noisy = 1;
    r[0].energy_status = TF_ENERGY_MEASURED;
    r[0].energy_j = 0.75;
    tf_result_init(&r[1], 0, 1, 7, TF_STATUS_COMPILE_ERROR);
    strcpy(r[1].message, "error: 'BM' undeclared");
    tf_result_init(&r[2], 1, 0, 9, TF_STATUS_TIMEOUT);
    tf_wire_results(&b, r, 3);
    save(out, "results", &b);
    tf_wire_results(&b, r, 0);
    save(out, "results_empty", &b);
    for (int i = 2; i < argc; i++) {
        struct tf_bundle *bundle = tf_bundle_create();
        struct tf_error err = {0};
        struct tf_job *job = tf_job_load(argv[i], bundle, &err);
        if (job == NULL) {
            tf_error_print(&err, "gen_wire", stderr);
            return 1;
        }
        tf_wire_job(&b, bundle);
        char name[64];
        snprintf(name, sizeof name, "job_%s", job->name);
        save(out, name, &b);
        tf_job_destroy(job);
        tf_bundle_destroy(bundle);
    }
    tf_buf_free(&b);
    return 0;
}
