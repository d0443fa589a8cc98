/* report_fixture.h - an archive whose best configurations, regressions and
 * Pareto fronts are known by construction, for the tests of `tunefarm best`
 * (test_best.c) and `tunefarm report` (test_html_report.c, and through
 * tests/integration/report_fixture.c the browser test in report.sh).
 *
 * Kernel gemm (archive_fixture.h: BM {16,32,64} x BN {32,64} x LAYOUT
 * {row,col}, 12 configurations, index = (BM_i * 2 + BN_i) * 2 + LAYOUT_i,
 * default 5) on three device classes, two problems, three runs (nights):
 *
 *   class                                     small: best        large: best
 *   cuda/sm_90/NVIDIA H100 80GB HBM3 (2 GPUs)  7  1.0 ms          4  100 ms
 *   hip/gfx90a:sramecc+:xnack-/AMD Instinct    2  2.0 ms          9  150 ms
 *   host/x86_64/AMD EPYC 7763                  10 5.0 ms          1  500 ms
 *
 * times grow by 0.1 ms (10 ms, 1 ms, 50 ms) per index away from the best.
 * Config 11 is a compile_error on the H100s, 0 a wrong_result on the
 * MI250X, 3 a timeout on the host. Night 2 (run 1) searched the H100s'
 * small problem in two phases: every configuration screened 10% faster than
 * the truth (phase 1), then 6, 7, 8 re-measured strictly (phase 2); the
 * best must stay the strict/single-phase 1.0 ms of config 7, never the
 * screened 0.9 ms. Night 3 (run 2) is 30% slower on the H100s' small
 * problem with a 0.5% spread: the one regression; every other group drifts
 * by 0.2% a night, inside the noise. GPU rows carry energy (time x a power
 * that depends on the configuration), the host's none.
 *
 * A second kernel is hostile text (its name has no slash: it names an HDF5
 * group): its name, a parameter name, enum values,
 * a problem name, a device name and a job name hold markup, quotes and
 * comment ends; its problem "allfail" has no ok result. */
#ifndef TF_TEST_REPORT_FIXTURE_H
#define TF_TEST_REPORT_FIXTURE_H

#include <math.h>
#include <stdlib.h>

#include "archive_fixture.h"

#define RF_T0 1764028800.0 /* 2025-11-25 00:00 UTC, night 1 */
#define RF_EVIL_KERNEL "x<h2><script>alert('k')<\\script>\"&*"
#define RF_EVIL_DEVICE "GPU \"<b>&'</b> */ <script>alert(2)</script>"

struct report_fixture {
    struct test_kernel gemm, evil;
    struct tf_archive *a;
};

/* The fixture's time in ms of configuration c on class cls (0 H100, 1 MI250X,
 * 2 host) for problem p (0 small, 1 large), before the night's factor. */
static inline double rf_time_ms(int cls, int p, int c)
{
    static const int best[3][2] = {{7, 4}, {2, 9}, {10, 1}};
    static const double base[3][2] = {{1.0, 100}, {2.0, 150}, {5.0, 500}};
    static const double step[3][2] = {{0.1, 10}, {0.1, 10}, {1, 50}};
    return base[cls][p] + step[cls][p] * abs(c - best[cls][p]);
}

/* The status the fixture gives configuration c on class cls. */
static inline int rf_status(int cls, int c)
{
    if (cls == 0 && c == 11)
        return TF_STATUS_COMPILE_ERROR;
    if (cls == 1 && c == 0)
        return TF_STATUS_WRONG_RESULT;
    if (cls == 2 && c == 3)
        return TF_STATUS_TIMEOUT;
    return TF_STATUS_OK;
}

static inline void rf_row(struct tf_archive_kernel *ak, uint32_t run, uint32_t device,
                          uint32_t problem, uint64_t config, int status, double ms, int phase,
                          double power_w, double when)
{
    struct tf_archive_row row;
    memset(&row, 0, sizeof row);
    tf_result_init(&row.r, 0, problem, config, status);
    row.run = run;
    row.device = device;
    row.r.phase = (uint8_t)phase;
    row.r.timestamp = when;
    if (status == TF_STATUS_OK) {
        row.r.time_median = ms * 1e-3;
        row.r.time_min = ms * 1e-3 * 0.996;
        row.r.time_mean = ms * 1e-3 * 1.001;
        row.r.time_rsd = phase == 1 ? 0.05 : 0.005;
        row.r.samples = 20;
        row.r.energy_j = power_w > 0 ? ms * 1e-3 * power_w : NAN;
        row.r.metrics[0] = 1.0 / (ms * 1e-3);
    } else {
        tf_strlcpy(row.r.message, "<error> & \"quotes\"", sizeof row.r.message);
    }
    tf_archive_append(ak, &row);
}

static inline struct tf_archive *report_fixture_make(struct report_fixture *f)
{
    struct tf_error err = {0};
    memset(f, 0, sizeof *f);
    make_gemm(&f->gemm);
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H100 80GB HBM3", "GPU-0", "node1");
    struct tf_device h1 = make_device("cuda", "NVIDIA H100 80GB HBM3", "GPU-1", "node2");
    struct tf_device mi = make_device("hip", "AMD Instinct MI250X", "GPU-2", "node3");
    tf_strlcpy(mi.arch, "gfx90a:sramecc+:xnack-", sizeof mi.arch);
    tf_strlcpy(mi.vendor, "AMD", sizeof mi.vendor);
    struct tf_device cpu = make_device("host", "AMD EPYC 7763", "cpu", "node1");
    tf_strlcpy(cpu.arch, "x86_64", sizeof cpu.arch);
    tf_strlcpy(cpu.vendor, "AuthenticAMD", sizeof cpu.vendor);
    struct tf_device evil = make_device("cuda", RF_EVIL_DEVICE, "GPU-9", "h<i>\"'");
    tf_strlcpy(evil.arch, "sm_80", sizeof evil.arch);
    tf_archive_add_device(a, &h0);
    tf_archive_add_device(a, &h1);
    tf_archive_add_device(a, &mi);
    tf_archive_add_device(a, &cpu);
    tf_archive_add_device(a, &evil);
    for (int night = 0; night < 3; night++) {
        struct tf_archive_run run = make_run("nightly", RF_T0 + 86400.0 * night,
                                             RF_T0 + 86400.0 * night + 3600);
        tf_archive_add_run(a, &run);
    }
    struct tf_archive_run hostile = make_run("</td><script>alert(3)</script>", RF_T0 + 4 * 86400.0,
                                             RF_T0 + 4 * 86400.0 + 60);
    tf_archive_add_run(a, &hostile);

    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &f->gemm.k, &err);
    if (ak == NULL)
        fail_msg("gemm: %s", err.message);
    tf_archive_problem_for(ak, &f->gemm.k, 0);
    tf_archive_problem_for(ak, &f->gemm.k, 1);
    static const uint32_t class_devices[3][2] = {{0, 1}, {2, 2}, {3, 3}};
    for (uint32_t night = 0; night < 3; night++) {
        double start = RF_T0 + 86400.0 * night;
        for (int cls = 0; cls < 3; cls++)
            for (int p = 0; p < 2; p++) {
                double factor = 1.0 + 0.002 * night, when = start + 10 + 100 * (cls * 2 + p);
                if (night == 2 && cls == 0 && p == 0)
                    factor = 1.3;
                bool two_phase = night == 1 && cls == 0 && p == 0;
                for (int c = 0; c < 12; c++) {
                    double ms = rf_time_ms(cls, p, c) * factor;
                    double power = cls == 2 ? 0 : 100 + 15 * ((c * 5) % 12);
                    uint32_t dev = class_devices[cls][c % 2];
                    rf_row(ak, night, dev, (uint32_t)p, (uint64_t)c, rf_status(cls, c),
                           two_phase ? ms * 0.9 : ms, two_phase ? 1 : 0, power, when + c * 0.5);
                }
                if (two_phase)
                    for (int c = 6; c <= 8; c++)
                        rf_row(ak, night, 0, (uint32_t)p, (uint64_t)c, TF_STATUS_OK,
                               rf_time_ms(cls, p, c) * factor, 2, 100 + 15 * ((c * 5) % 12),
                               when + 20 + c);
            }
    }

    /* the hostile kernel */
    struct test_kernel *t = &f->evil;
    memset(t, 0, sizeof *t);
    t->k.name = RF_EVIL_KERNEL;
    static const int64_t v[] = {1, 2};
    static const char *const modes[] = {"<img src=x onerror=alert(1)>", "a*/b", "ok"};
    tk_param_int(t, "V", 2, v);
    tk_param_int(t, "W\"<b>", 2, v);
    tk_param_enum(t, "MODE", 3, modes);
    t->size_names[0] = "N";
    t->k.nsizes = 1;
    t->k.size_names = t->size_names;
    tk_problem(t, "p<script>alert(4)</script>", (const int64_t[]){64});
    tk_problem(t, "allfail", (const int64_t[]){128});
    memset(t->k.source_hash, 'c', 64);
    struct tf_archive_kernel *ae = tf_archive_kernel_for(a, &t->k, &err);
    if (ae == NULL)
        fail_msg("evil: %s", err.message);
    tf_archive_problem_for(ae, &t->k, 0);
    tf_archive_problem_for(ae, &t->k, 1);
    for (uint64_t c = 0; c < 12; c++) {
        rf_row(ae, 3, 4, 0, c, c == 5 ? TF_STATUS_RUNTIME_ERROR : TF_STATUS_OK, 1.0 + (double)c,
               0, 200, RF_T0 + 4 * 86400.0 + 1 + (double)c);
        rf_row(ae, 3, 4, 1, c, TF_STATUS_CRASHED, 0, 0, 0, RF_T0 + 4 * 86400.0 + 20);
    }
    f->a = a;
    return a;
}

static inline void report_fixture_free(struct report_fixture *f)
{
    tf_archive_destroy(f->a);
    tk_free(&f->gemm);
    tk_free(&f->evil);
}

#endif
