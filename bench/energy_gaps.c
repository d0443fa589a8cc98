/* bench/energy_gaps - where an energy window's GPU idles, on the device itself.
 *
 * usage: bench/energy_gaps [BATCHES]   (default 30; a CUDA device and NVML needed)
 * Compiles a small kernel whose length is set by its argument (a chain of
 * FMAs), picks arguments for launches of about 20, 70, 300 and 2900 us, and
 * for each runs BATCHES batches of about 15 ms of launches back to back the
 * way the runner's energy window does (worker/energy.c), four ways: one
 * batch queued at a time or two, each with or without a reading of the
 * energy counter (NVML) per batch. Prints per batch the host's wall time,
 * the device time of its launches (their events), the difference (the GPU
 * idle, the first batch's start included), and the host's time in enqueue
 * and in the readings. This is the experiment behind
 * bench/results/energy-window-2026-11-28.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "schema/status.h"
#include "worker/backend.h"
#include "worker/measure.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *kernel_source =
    "extern \"C\" __global__ void busy(float *x, int n) {\n"
    "    float v = x[blockIdx.x * blockDim.x + threadIdx.x];\n"
    "    for (int i = 0; i < n; i++) v = v * 0.999f + 0.5f;\n"
    "    x[blockIdx.x * blockDim.x + threadIdx.x] = v;\n"
    "}\n";

struct bench {
    const struct tf_backend *be;
    struct tf_backend_ctx *ctx;
    void *fn, *x;
    struct tf_launch geo;
};

static void die_if(int failed, const char *what, const struct tf_error *err)
{
    if (failed) {
        fprintf(stderr, "energy_gaps: %s: %s\n", what, err->message);
        exit(1);
    }
}

/* One launch's device seconds with loop length n (the median of 5). */
static double launch_seconds(struct bench *b, int n)
{
    void *args[] = {&b->x, &n};
    double t[5];
    struct tf_error err = {0};
    for (int i = 0; i < 5; i++)
        die_if(b->be->launch(b->ctx, b->fn, &b->geo, args, &t[i], &err) != TF_STATUS_OK, "launch",
               &err);
    struct tf_stats st;
    tf_stats_compute(t, 5, &st);
    return st.median;
}

/* Loop length n for launches of about `seconds`. */
static int calibrate(struct bench *b, double seconds)
{
    int n = 1000;
    for (int round = 0; round < 6; round++) {
        const double t = launch_seconds(b, n);
        const double scaled = (double)n * seconds / t;
        n = scaled < 1 ? 1 : scaled > 2e9 ? 2000000000 : (int)scaled;
    }
    return n;
}

/* `batches` batches of `per` launches, `depth` queued at once, a counter
 * reading per batch if `read`. */
static void run_mode(struct bench *b, int n, int per, int batches, int depth, int read,
                     double launch_s)
{
    void *args[] = {&b->x, &n};
    double times[TF_MAX_BATCH];
    struct tf_error err = {0};
    double device = 0, in_enqueue = 0, in_read = 0;
    int started = 0, finished = 0;
    const double t0 = now();
    while (finished < batches) {
        while (started < batches && started - finished < depth) {
            const double e0 = now();
            die_if(b->be->enqueue(b->ctx, b->fn, &b->geo, args, per, 0, &err) != TF_STATUS_OK,
                   "enqueue", &err);
            in_enqueue += now() - e0;
            started++;
        }
        if (read) {
            double joules = 0;
            const double r0 = now();
            die_if(b->be->energy(b->ctx, &joules, &err) != 0, "energy", &err);
            in_read += now() - r0;
        }
        die_if(b->be->collect(b->ctx, times, &err) != TF_STATUS_OK, "collect", &err);
        for (int i = 0; i < per; i++)
            device += times[i];
        finished++;
    }
    const double wall = now() - t0;
    printf("launch %7.1f us  batch %3d launches (%5.2f ms)  queued %d  reading %-3s  "
           "per batch (ms): wall %6.3f  device %6.3f  idle %6.3f  enqueue %6.3f  reading %6.3f\n",
           launch_s * 1e6, per, per * launch_s * 1e3, depth, read ? "yes" : "no",
           1e3 * wall / batches, 1e3 * device / batches, 1e3 * (wall - device) / batches,
           1e3 * in_enqueue / batches, read ? 1e3 * in_read / batches : 0.0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const int batches = argc > 1 ? atoi(argv[1]) : 30;
    struct bench b = {.be = &tf_backend_cuda,
                      .geo = {.grid = {132, 1, 1}, .block = {256, 1, 1}}};
    struct tf_error err = {0};
    struct tf_device d;
    die_if(b.be->describe(0, &d, &err) != 0, "describe", &err);
    char path[] = "/tmp/tf-energy-gaps-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    struct tf_compile_input in = {.kernel_name = "busy", .source = kernel_source,
                                  .source_name = "busy.cu", .entry = "busy", .arch = d.arch,
                                  .output_path = path};
    struct tf_compile_output out = {0};
    die_if(b.be->compile(&in, &out, &err) != 0, "compile", &err);
    if (!out.ok) {
        fprintf(stderr, "energy_gaps: the kernel does not compile:\n%s\n",
                out.log ? out.log : "(no log)");
        return 1;
    }
    free(out.log);
    die_if(b.be->open(0, &b.ctx, &err) != 0, "open", &err);
    die_if(b.be->load(b.ctx, path, "busy", &b.fn, &err) != 0, "load", &err);
    unlink(path);
    die_if(b.be->alloc(b.ctx, 132 * 256 * sizeof(float), &b.x, &err) != 0, "alloc", &err);
    if (b.be->energy == NULL) {
        fprintf(stderr, "energy_gaps: no energy counter\n");
        return 1;
    }
    double j = 0;
    if (b.be->energy(b.ctx, &j, &err) != 0) {
        fprintf(stderr, "energy_gaps: %s\n", err.message);
        return 1;
    }
    printf("energy_gaps: %s (%s), %d batches each\n", d.name, d.arch, batches);
    const double lengths[] = {20e-6, 70e-6, 300e-6, 2.9e-3};
    for (int l = 0; l < 4; l++) {
        const int n = calibrate(&b, lengths[l]);
        const double launch_s = launch_seconds(&b, n);
        int per = (int)(15e-3 / launch_s);
        per = per < 1 ? 1 : per > TF_MAX_BATCH ? TF_MAX_BATCH : per;
        for (int depth = 1; depth <= 2; depth++)
            for (int read = 0; read <= 1; read++)
                run_mode(&b, n, per, batches, depth, read, launch_s);
    }
    b.be->release(b.ctx, b.x);
    b.be->unload(b.ctx, b.fn);
    b.be->close(b.ctx);
    return 0;
}
