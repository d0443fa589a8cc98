/* test_diff.c - the comparison of two runs (schema/diff.c), over real archives.
 *
 * Archives are built by hand (archive_fixture.h), written to real HDF5 files
 * and read back before they are compared, as `tunefarm diff` reads them. The
 * noise rule is checked at its edges (the band, the spread that ignores high
 * outliers, unknown spreads); the choice of runs (the last one and the one of
 * its job before it, errors for what does not exist); and the report of two
 * nights of a job: a best that got slower, a previous best that fails now, a
 * class that got faster with configurations gained and lost, a kernel
 * measured on one night only, and the provenance that differs (job hash,
 * measurement settings, a kernel's source, a driver and a power limit, a run
 * resumed in two sessions). Then two nights that differ only within the noise
 * (no regression, no provenance), two-phase runs (times from the strict
 * re-measurements, a previous best that only got screened), and an
 * unfinished run (what it lacks is "not measured yet", not lost). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../coordinator/coordinator.h"
#include "../../coordinator/diffcmd.h"
#include "../../coordinator/report.h"
#include "../../schema/diff.h"
#include "../../schema/result.h"
#include "archive_fixture.h"

static char dir[] = "/tmp/tf_test_diff_XXXXXX";

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "%s/diff.h5", dir);
    unlink(cmd);
    snprintf(cmd, sizeof cmd, "%s/report.txt", dir);
    unlink(cmd);
    rmdir(dir);
    return 0;
}

/* Append an ok row (median `ms`, min `min_ms`, rsd) or a failed one. */
static void row(struct tf_archive_kernel *ak, uint32_t run, uint32_t device, uint32_t problem,
                uint64_t config, int status, double ms, double min_ms, double rsd, int phase)
{
    struct tf_archive_row r;
    memset(&r, 0, sizeof r);
    tf_result_init(&r.r, 0, problem, config, (uint8_t)status);
    r.run = run;
    r.device = device;
    r.r.phase = (uint8_t)phase;
    if (status == TF_STATUS_OK) {
        r.r.time_median = ms * 1e-3;
        r.r.time_min = min_ms * 1e-3;
        r.r.time_mean = ms * 1e-3;
        r.r.time_rsd = rsd;
        r.r.samples = 100;
    }
    tf_archive_append(ak, &r);
}

/* Write `a` to a real file, read it back, destroy `a`. */
static struct tf_archive *through_file(struct tf_archive *a)
{
    char path[128];
    struct tf_error err = {0};
    snprintf(path, sizeof path, "%s/diff.h5", dir);
    if (tf_archive_write(a, path, &err) != 0)
        fail_msg("write: %s", err.message);
    tf_archive_destroy(a);
    struct tf_archive *b = tf_archive_read(path, &err);
    if (b == NULL)
        fail_msg("read: %s", err.message);
    return b;
}

/* The report of runs ra -> rb of `a`, as a string (freed by the caller). */
static char *report(const struct tf_archive *a, int ra, int rb, const struct tf_diff_options *o,
                    struct tf_diff_summary *sum, int *regressions)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    *regressions = tf_diff_report(a, ra, rb, o, f, sum);
    fclose(f);
    return text;
}

/* The block of `text` for group `title` ("gemm/small on NVIDIA H100"), up to
 * the next blank line (a static copy), or fail. */
static const char *block(const char *text, const char *title)
{
    static char out[4096];
    const char *at = strstr(text, title);
    if (at == NULL)
        fail_msg("no block '%s' in:\n%s", title, text);
    const char *end = strstr(at, "\n\n");
    size_t n = end ? (size_t)(end - at) : strlen(at);
    if (n >= sizeof out)
        n = sizeof out - 1;
    memcpy(out, at, n);
    out[n] = '\0';
    return out;
}

#define assert_has(text, needle)                                                               \
    do {                                                                                       \
        if (strstr((text), (needle)) == NULL)                                                  \
            fail_msg("'%s' not in:\n%s", (needle), (text));                                    \
    } while (0)

static void test_noise_rule(void **state)
{
    (void)state;
    struct tf_diff_options o;
    tf_diff_defaults(&o);
    double band;
    /* spreads of 1% each: band 3 * sqrt(2) % = 4.24%; 5% counts, 4% does not */
    assert_int_equal(tf_diff_beyond_noise(1.0, 0.01, 1.05, 0.01, &o, &band), 1);
    assert_true(fabs(band - 0.0424264) < 1e-6);
    assert_int_equal(tf_diff_beyond_noise(1.0, 0.01, 1.04, 0.01, &o, &band), 0);
    assert_int_equal(tf_diff_beyond_noise(1.0, 0.01, 0.95, 0.01, &o, &band), 1); /* faster */
    /* tiny spreads: the tolerance (2%) is the floor */
    assert_int_equal(tf_diff_beyond_noise(1.0, 0.001, 1.019, 0.001, &o, &band), 0);
    assert_true(band == 0.02);
    assert_int_equal(tf_diff_beyond_noise(1.0, 0.001, 1.021, 0.001, &o, &band), 1);
    o.tolerance = 0.5;
    assert_int_equal(tf_diff_beyond_noise(1.0, 0, 1.4, 0, &o, &band), 0);
    assert_int_equal(tf_diff_beyond_noise(1.0, 0, 4.0, 0, &o, &band), 1);
    tf_diff_defaults(&o);
    /* no time, no verdict */
    assert_int_equal(tf_diff_beyond_noise(NAN, 0, 1.0, 0, &o, NULL), 0);
    assert_int_equal(tf_diff_beyond_noise(1.0, 0, 0, 0, &o, NULL), 0);

    /* The spread: rsd when samples are clean, (median - min) / median when a
     * few preempted samples blow the rsd up (as on a shared host), the other
     * one when one is unknown, 0 when both are. */
    assert_true(fabs(tf_diff_spread(1.0, 0.97, 0.01) - 0.01) < 1e-12);
    assert_true(fabs(tf_diff_spread(11.8e-6, 11.7e-6, 6.9) - 0.1 / 11.8) < 1e-9);
    assert_true(fabs(tf_diff_spread(1.0, NAN, 0.02) - 0.02) < 1e-12);
    assert_true(fabs(tf_diff_spread(1.0, 0.9, NAN) - 0.1) < 1e-12);
    assert_true(tf_diff_spread(NAN, NAN, NAN) == 0);
    assert_true(fabs(tf_diff_spread(1.0, 1.2, 0.03) - 0.03) < 1e-12); /* min > median: damaged */
}

/* The rule at its limits, with numbers a double holds exactly: a change of
 * exactly the band is within the noise (the rule is |B/A - 1| > band), and a
 * median equal to its minimum has no spread below it, whatever the rsd. */
static void test_noise_rule_at_the_band(void **state)
{
    (void)state;
    struct tf_diff_options o;
    tf_diff_defaults(&o);
    o.tolerance = 0.5;
    double band;
    assert_int_equal(tf_diff_beyond_noise(1.0, 0, 1.5, 0, &o, &band), 0);
    assert_true(band == 0.5);
    assert_int_equal(tf_diff_beyond_noise(1.0, 0, 0.5, 0, &o, &band), 0);
    assert_int_equal(tf_diff_beyond_noise(1.0, 0, 1.5 + 1.0 / 1024, 0, &o, &band), 1);
    assert_true(tf_diff_spread(1.0, 1.0, 0.03) == 0);
    assert_true(tf_diff_spread(2e-3, 2e-3, NAN) == 0);
}

static void test_pick_runs(void **state)
{
    (void)state;
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    int ra = -1, rb = -1;
    assert_int_not_equal(tf_diff_pick_runs(a, &ra, &rb, &err), 0);
    assert_has(err.message, "no runs");
    struct tf_archive_run r = make_run("nightly", 1000.0, 2000.0);
    tf_archive_add_run(a, &r);                                 /* 0 */
    r = make_run("other", 3000.0, 4000.0);
    tf_archive_add_run(a, &r);                                 /* 1 */
    r = make_run("nightly", 5000.0, 6000.0);
    tf_archive_add_run(a, &r);                                 /* 2 */
    r = make_run("nightly", 4500.0, 4600.0);                   /* 3: merged in late */
    tf_archive_add_run(a, &r);
    r = make_run("nightly", 7000.0, 7100.0);
    tf_strlcpy(r.replay_source, "/data/kt.json", sizeof r.replay_source);
    tf_archive_add_run(a, &r);                                 /* 4: a replay */
    ra = rb = -1;
    assert_int_not_equal(tf_diff_pick_runs(a, &ra, &rb, &err), 0); /* B = 4: no earlier replay */
    assert_int_equal(rb, 4);
    assert_has(err.message, "run 4 (job 'nightly') has no earlier run of the same job");
    ra = -1;
    rb = 2;
    assert_int_equal(tf_diff_pick_runs(a, &ra, &rb, &err), 0);
    assert_int_equal(ra, 3); /* by start time, not by index */
    ra = -1;
    rb = 3;
    assert_int_equal(tf_diff_pick_runs(a, &ra, &rb, &err), 0);
    assert_int_equal(ra, 0);
    ra = 1;
    rb = 2;
    assert_int_equal(tf_diff_pick_runs(a, &ra, &rb, &err), 0); /* named: any two */
    ra = -1;
    rb = 9;
    assert_int_not_equal(tf_diff_pick_runs(a, &ra, &rb, &err), 0);
    assert_has(err.message, "run 9 does not exist: the archive has 5 runs (0..4");
    /* the count itself is past the end, for A as for B */
    ra = 5;
    rb = 2;
    assert_int_not_equal(tf_diff_pick_runs(a, &ra, &rb, &err), 0);
    assert_has(err.message, "run 5 does not exist: the archive has 5 runs (0..4");
    ra = 2;
    rb = 5;
    assert_int_not_equal(tf_diff_pick_runs(a, &ra, &rb, &err), 0);
    assert_has(err.message, "run 5 does not exist");
    ra = rb = 2;
    assert_int_not_equal(tf_diff_pick_runs(a, &ra, &rb, &err), 0);
    assert_has(err.message, "compared with itself");
    tf_archive_destroy(a);
}

/* The run of a Slurm job (what slurm/diff.sbatch compares after a night):
 * named by its run row or by a session that resumed it, the last started if
 * two name it, and refused when that run did not finish. */
static void test_run_of_slurm_job(void **state)
{
    (void)state;
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    struct tf_archive_run r = make_run("nightly", 1000.0, 2000.0);
    tf_strlcpy(r.slurm_job_id, "100", sizeof r.slurm_job_id);
    tf_archive_add_run(a, &r);                                 /* 0: job 100, finished */
    r = make_run("nightly", 3000.0, 0.0);
    tf_strlcpy(r.slurm_job_id, "101", sizeof r.slurm_job_id);
    tf_archive_add_run(a, &r);                                 /* 1: job 101, killed */
    r = make_run("nightly", 5000.0, 9000.0);
    tf_strlcpy(r.slurm_job_id, "102", sizeof r.slurm_job_id);
    tf_archive_add_run(a, &r);                                 /* 2: job 102 ... */
    struct tf_archive_session s = {.run = 2, .start = 5000.0, .end = 0};
    tf_strlcpy(s.slurm_job_id, "102", sizeof s.slurm_job_id);
    tf_archive_add_session(a, &s);
    s.start = 8000.0;
    s.end = 9000.0;
    tf_strlcpy(s.slurm_job_id, "1030", sizeof s.slurm_job_id); /* ... resumed by job 1030 */
    tf_archive_add_session(a, &s);
    r = make_run("nightly", 500.0, 600.0);
    tf_strlcpy(r.slurm_job_id, "100", sizeof r.slurm_job_id);
    tf_archive_add_run(a, &r);                                 /* 3: job 100 too, earlier */
    a = through_file(a);

    int run = -1;
    assert_int_equal(tf_diff_run_of_slurm_job(a, "100", &run, &err), 0);
    assert_int_equal(run, 0); /* the later of its two runs */
    assert_int_equal(tf_diff_run_of_slurm_job(a, "1030", &run, &err), 0);
    assert_int_equal(run, 2); /* by the session that resumed it */
    assert_int_equal(tf_diff_run_of_slurm_job(a, "102", &run, &err), 0);
    assert_int_equal(run, 2);
    run = -1;
    assert_int_not_equal(tf_diff_run_of_slurm_job(a, "101", &run, &err), 0);
    assert_int_equal(run, -1);
    assert_has(err.message, "run 1, which Slurm job 101 measured, did not finish");
    assert_int_not_equal(tf_diff_run_of_slurm_job(a, "10", &run, &err), 0); /* no prefix match */
    assert_has(err.message, "Slurm job 10 measured no run in this archive");
    /* Then B is that run and A the run of its job before it. */
    int ra = -1, rb = -1;
    assert_int_equal(tf_diff_run_of_slurm_job(a, "1030", &rb, &err), 0);
    assert_int_equal(tf_diff_pick_runs(a, &ra, &rb, &err), 0);
    assert_int_equal(ra, 1);
    tf_archive_destroy(a);
}

/* Two nights of a job on two H100s (one class) and an MI300X. */
static struct tf_archive *two_nights(struct test_kernel *gemm, struct test_kernel *vecadd)
{
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H100", "GPU-0", "node1");
    struct tf_device h1 = make_device("cuda", "NVIDIA H100", "GPU-1", "node1");
    struct tf_device mi = make_device("hip", "AMD Instinct MI300X", "GPU-2", "node2");
    tf_strlcpy(mi.arch, "gfx942", sizeof mi.arch);
    tf_archive_add_device(a, &h0);
    tf_archive_add_device(a, &h1);
    tf_archive_add_device(a, &mi);
    struct tf_archive_run r0 = make_run("nightly", 1714520000.0, 1714530000.0);
    struct tf_archive_run r1 = make_run("nightly", 1714606400.0, 1714616400.0);
    tf_strlcpy(r0.measure, "warmup=2 max_noise=0.005", sizeof r0.measure);
    tf_strlcpy(r1.measure, "warmup=2 max_noise=0.01", sizeof r1.measure);
    tf_strlcpy(r0.search_strategy, "brute_force", sizeof r0.search_strategy);
    tf_strlcpy(r1.search_strategy, "brute_force", sizeof r1.search_strategy);
    r1.job_hash[0] = 'e';
    tf_archive_add_run(a, &r0);
    tf_archive_add_run(a, &r1);
    /* Sessions: night 1 in one, night 2 resumed once; GPU-0's driver and power
     * limit changed between the nights, the MI300X's not. */
    struct tf_archive_session s = {.run = 0, .start = 1714520000.0, .end = 1714530000.0};
    tf_strlcpy(s.host, "login1", sizeof s.host);
    tf_archive_add_session(a, &s);
    s.run = 1;
    s.start = 1714606400.0;
    s.end = 0;
    tf_strlcpy(s.slurm_job_id, "100", sizeof s.slurm_job_id);
    tf_archive_add_session(a, &s);
    s.start = 1714610000.0;
    s.end = 1714616400.0;
    tf_strlcpy(s.slurm_job_id, "100", sizeof s.slurm_job_id);
    tf_archive_add_session(a, &s);
    h0.power_limit_w = 700;
    tf_archive_set_session_device(a, 0, 0, &h0);
    tf_archive_set_session_device(a, 0, 2, &mi);
    tf_strlcpy(h0.driver_version, "580.159.04", sizeof h0.driver_version);
    h0.power_limit_w = 600;
    tf_archive_set_session_device(a, 1, 0, &h0);
    tf_archive_set_session_device(a, 1, 2, &mi);
    tf_archive_set_session_device(a, 2, 0, &h0);
    tf_archive_set_session_device(a, 2, 1, &h1); /* a second H100 joined on the resume */
    tf_archive_set_session_device(a, 2, 2, &mi);

    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm->k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &gemm->k, 0); /* small: 0 */
    tf_archive_problem_for(ak, &gemm->k, 1); /* large: 1 */
    tf_archive_set_run_kernel(a, 0, 0, gemm->k.source_hash);
    tf_archive_set_run_kernel(a, 1, 0, "cafe0000cafe0000");
    /* H100 small: best config 3 at 1.0 ms (clean: spread 0.5%), 1.5 ms now. */
    row(ak, 0, 0, 0, 3, TF_STATUS_OK, 1.0, 0.995, 0.005, 0);
    row(ak, 0, 1, 0, 5, TF_STATUS_OK, 2.0, 1.99, 0.005, 0);
    row(ak, 1, 1, 0, 3, TF_STATUS_OK, 1.5, 1.49, 0.005, 0);
    row(ak, 1, 0, 0, 5, TF_STATUS_OK, 2.01, 2.0, 0.005, 0);
    /* H100 large: best config 1 (10 ms) is wrong now; config 5 as fast as it was. */
    row(ak, 0, 0, 1, 1, TF_STATUS_OK, 10.0, 9.95, 0.005, 0);
    row(ak, 0, 0, 1, 5, TF_STATUS_OK, 10.1, 10.05, 0.005, 0);
    row(ak, 1, 0, 1, 1, TF_STATUS_WRONG_RESULT, 0, 0, 0, 0);
    row(ak, 1, 0, 1, 5, TF_STATUS_OK, 10.12, 10.07, 0.005, 0);
    /* MI300X small: config 7 faster (1.5 -> 1.2 ms), 9 gained, 11 lost,
     * 1 compile_error -> ok (a fix, not a regression). */
    row(ak, 0, 2, 0, 7, TF_STATUS_OK, 1.5, 1.49, 0.004, 0);
    row(ak, 0, 2, 0, 11, TF_STATUS_OK, 3.0, 2.99, 0.004, 0);
    row(ak, 0, 2, 0, 1, TF_STATUS_COMPILE_ERROR, 0, 0, 0, 0);
    row(ak, 1, 2, 0, 7, TF_STATUS_OK, 1.2, 1.19, 0.004, 0);
    row(ak, 1, 2, 0, 9, TF_STATUS_OK, 2.5, 2.49, 0.004, 0);
    row(ak, 1, 2, 0, 1, TF_STATUS_OK, 2.2, 2.19, 0.004, 0);
    /* vecadd: measured on night 2 only. */
    struct tf_archive_kernel *vk = tf_archive_kernel_for(a, &vecadd->k, &err);
    assert_non_null(vk);
    tf_archive_problem_for(vk, &vecadd->k, 0);
    row(vk, 1, 0, 0, 2, TF_STATUS_OK, 0.3, 0.29, 0.01, 0);
    return a;
}

static void test_two_nights(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    make_gemm(&gemm);
    make_vecadd(&vecadd);
    struct tf_archive *a = through_file(two_nights(&gemm, &vecadd));
    struct tf_diff_options o;
    tf_diff_defaults(&o);
    struct tf_diff_summary sum;
    int regressions;
    char *text = report(a, 0, 1, &o, &sum, &regressions);

    assert_int_equal(regressions, 2);
    assert_int_equal(sum.regressions, 2);
    assert_int_equal(sum.groups, 3);
    assert_int_equal(sum.only_b, 1);
    assert_int_equal(sum.only_a, 0);
    assert_int_equal(sum.slower_best, 1);
    assert_int_equal(sum.failing_previous, 1);
    assert_int_equal(sum.broken, 1);
    assert_int_equal(sum.faster_best, 1);

    /* Provenance: what made the nights differ. */
    const char *p = block(text, "Provenance that differs:");
    assert_has(p, "job hash (the job file, its kernels' files and sources): ffffffffffff -> "
                  "efffffffffff");
    assert_has(p, "measurement: warmup=2 max_noise=0.005 -> warmup=2 max_noise=0.01");
    assert_has(p, "kernel gemm source (kernel.yaml, source, reference): aaaaaaaaaaaa -> "
                  "cafe0000cafe");
    assert_has(p, "NVIDIA H100 on node1: driver 550.54.15 -> 580.159.04, power limit 700 W -> "
                  "600 W");
    /* GPU-1 joined on the resume: compared with the class's device in run 0 */
    assert_has(p, "NVIDIA H100 on node1: in run 1, not in run 0; against NVIDIA H100 on node1 "
                  "there: power limit 700 W -> -");
    assert_has(p, "run B (1) was resumed: measured in 2 sessions:");
    assert_has(p, "(Slurm job 100)");
    assert_true(strstr(p, "AMD Instinct MI300X on node2") == NULL); /* unchanged */
    assert_int_equal(sum.provenance, 6);

    /* H100 small: the best got 1.5x slower; the two H100s are one class. */
    const char *b = block(text, "gemm/small on NVIDIA H100");
    assert_has(b, "best then: BM=16 BN=64 LAYOUT=col");
    assert_has(b, "1.000 ms (spread 0.5%)");
    assert_has(b, "1.50x, SLOWER beyond the noise (band 2.1%)");
    assert_has(b, "previous best now: the same configuration");
    /* H100 large: the previous best fails now; the new best is within the noise. */
    b = block(text, "gemm/large on NVIDIA H100");
    assert_has(b, "previous best now: wrong_result  REGRESSION: it fails now");
    assert_has(b, "1.01x, within the noise");
    assert_has(b, "statuses: 1 changed, 1 ok then and failing now: REGRESSION");
    assert_has(b, "BM=16 BN=32 LAYOUT=col: ok -> wrong_result");
    /* MI300X: faster, gained and lost, a compile error fixed. */
    b = block(text, "gemm/small on AMD Instinct MI300X");
    assert_has(b, "0.80x, faster beyond the noise");
    assert_has(b, "statuses: 1 changed\n");
    assert_has(b, "compile_error -> ok");
    assert_has(b, "configurations: 3 then, 3 now: 1 gained, 1 lost");
    assert_has(b, "gained: BM=64 BN=32 LAYOUT=col (ok)");
    assert_has(b, "lost:   BM=64 BN=64 LAYOUT=col (ok)");
    assert_true(strstr(b, "REGRESSION") == NULL);
    assert_has(text, "vecadd/n1m on NVIDIA H100 (cuda/sm_90/NVIDIA H100): measured in run 1 only");
    free(text);

    /* A wide tolerance hides the 1.5x, never a configuration that fails now. */
    o.tolerance = 0.6;
    text = report(a, 0, 1, &o, &sum, &regressions);
    assert_int_equal(sum.slower_best, 0);
    assert_int_equal(regressions, 1);
    free(text);

    /* Backwards (1 -> 0) the slowdown is a speedup and the failure a fix. */
    tf_diff_defaults(&o);
    text = report(a, 1, 0, &o, &sum, &regressions);
    assert_int_equal(sum.slower_best, 1); /* the MI300X's 1.2 -> 1.5 ms */
    assert_int_equal(sum.broken, 1);      /* its config 1: ok -> compile_error */
    assert_int_equal(sum.failing_previous, 0);
    assert_int_equal(sum.only_a, 1);
    free(text);
    tf_archive_destroy(a);
    tk_free(&gemm);
    tk_free(&vecadd);
}

/* Issue 14 item 1: configurations are printed as the summaries print them,
 * without the parameters of a single value. */
static void test_single_valued_parameters_hidden(void **state)
{
    (void)state;
    struct test_kernel t;
    memset(&t, 0, sizeof t);
    t.k.name = "pinned";
    static const int64_t pinned[] = {4096}, blocks[] = {64, 128};
    tk_param_int(&t, "NX_AGAIN", 1, pinned);
    tk_param_int(&t, "BLOCK", 2, blocks);
    t.size_names[0] = "NX";
    t.k.nsizes = 1;
    t.k.size_names = t.size_names;
    tk_problem(&t, "only", (const int64_t[]){4096});
    memset(t.k.source_hash, 'c', 64);
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H100", "GPU-0", "node1");
    tf_archive_add_device(a, &h0);
    struct tf_archive_run r0 = make_run("nightly", 1714520000.0, 1714530000.0);
    struct tf_archive_run r1 = make_run("nightly", 1714606400.0, 1714616400.0);
    tf_archive_add_run(a, &r0);
    tf_archive_add_run(a, &r1);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &t.k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &t.k, 0);
    row(ak, 0, 0, 0, 0, TF_STATUS_OK, 1.0, 0.99, 0.005, 0); /* BLOCK=64 best then */
    row(ak, 0, 0, 0, 1, TF_STATUS_OK, 2.0, 1.99, 0.005, 0);
    row(ak, 1, 0, 0, 0, TF_STATUS_OK, 3.0, 2.99, 0.005, 0);
    row(ak, 1, 0, 0, 1, TF_STATUS_OK, 1.5, 1.49, 0.005, 0); /* BLOCK=128 best now */
    a = through_file(a);
    struct tf_diff_options o;
    tf_diff_defaults(&o);
    struct tf_diff_summary sum;
    int regressions;
    char *text = report(a, 0, 1, &o, &sum, &regressions);
    const char *b = block(text, "pinned/only on NVIDIA H100");
    assert_has(b, "best then: BLOCK=64 ");
    assert_has(b, "best now:  BLOCK=128 ");
    assert_true(strstr(text, "NX_AGAIN") == NULL);
    free(text);
    tf_archive_destroy(a);
    tk_free(&t);
}

/* Two nights of job "nightly" made the same way on one host (device 0, a
 * session each, the same gemm source), with gemm's first problem and no rows
 * yet: `*ak` takes them. The caller frees the archive and `gemm`. */
static struct tf_archive *host_nights(struct test_kernel *gemm, struct tf_archive_kernel **ak)
{
    struct tf_error err = {0};
    make_gemm(gemm);
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("host", "AMD EPYC", "", "vm");
    tf_archive_add_device(a, &h0);
    for (uint32_t run = 0; run < 2; run++) {
        struct tf_archive_run r = make_run("nightly", 1000.0 + 2000 * run, 2000.0 + 2000 * run);
        tf_archive_add_run(a, &r);
        struct tf_archive_session s = {.run = run, .start = r.start};
        tf_archive_add_session(a, &s);
        tf_archive_set_session_device(a, run, 0, &h0);
        tf_archive_set_run_kernel(a, run, 0, gemm->k.source_hash);
    }
    *ak = tf_archive_kernel_for(a, &gemm->k, &err);
    if (*ak == NULL)
        fail_msg("kernel: %s", err.message);
    tf_archive_problem_for(*ak, &gemm->k, 0);
    return a;
}

/* Two nights that differ within the noise, made the same way. */
static void test_quiet_nights(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_archive_kernel *ak;
    struct tf_archive *a = host_nights(&gemm, &ak);
    /* a host's samples: rsd 300% from preempted samples, the bulk within 1% */
    row(ak, 0, 0, 0, 3, TF_STATUS_OK, 0.0118, 0.0117, 3.0, 0);
    row(ak, 1, 0, 0, 3, TF_STATUS_OK, 0.0121, 0.0119, 4.5, 0);
    row(ak, 0, 0, 0, 1, TF_STATUS_TIMEOUT, 0, 0, 0, 0);
    row(ak, 1, 0, 0, 1, TF_STATUS_TIMEOUT, 0, 0, 0, 0);
    a = through_file(a);
    struct tf_diff_options o;
    tf_diff_defaults(&o);
    struct tf_diff_summary sum;
    int regressions;
    char *text = report(a, 0, 1, &o, &sum, &regressions);
    assert_int_equal(regressions, 0);
    assert_int_equal(sum.groups, 1);
    assert_int_equal(sum.provenance, 0);
    assert_has(text, "none: the same job and settings, kernel sources, tunefarm");
    assert_has(text, "1.03x, within the noise (band 5.6%)");
    assert_has(text, "statuses: 0 changed");
    free(text);
    /* The same 3% as a clean GPU measures it (spread 0.2%): beyond the noise. */
    a->kernels[0].rows[0].r.time_rsd = 0.002;
    a->kernels[0].rows[1].r.time_rsd = 0.002;
    text = report(a, 0, 1, &o, &sum, &regressions);
    assert_int_equal(regressions, 1);
    assert_has(text, "1.03x, SLOWER beyond the noise (band 2.0%)");
    /* the best is the previous best, slower: counted as such, not as faster */
    assert_int_equal(sum.slower_best, 1);
    assert_int_equal(sum.slower_previous, 1);
    assert_has(text, "(best slower: 1, previous best slower: 1, previous best failing: 0");
    assert_has(text, "noisy: 0 of 1 ok rows then, 0 of 1 now; energy measured: 0 then, 0 now");
    free(text);
    /* Tonight's row stayed noisy and has its energy (issue 13 item 7): said
     * per group and in the summary. */
    a->kernels[0].rows[1].r.noisy = 1;
    a->kernels[0].rows[1].r.energy_status = TF_ENERGY_MEASURED;
    text = report(a, 0, 1, &o, &sum, &regressions);
    assert_has(text, "noisy: 0 of 1 ok rows then, 1 of 1 now; energy measured: 0 then, 1 now");
    assert_has(text, "noisy ok rows: 0 then, 1 now");
    assert_int_equal(sum.noisy_b, 1);
    free(text);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

/* An ok row whose median is 0 or negative (nothing tunefarm measures or
 * imports: an edited or foreign archive) is no time: it became the best of
 * its night, and an 8x slower night read "infx, within the noise", exit 0.
 * The best of diff and of query (tf_report_pick) ignore it. */
static void test_times_not_positive(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_archive_kernel *ak;
    struct tf_archive *a = host_nights(&gemm, &ak);
    row(ak, 0, 0, 0, 3, TF_STATUS_OK, 0.010, 0.010, 0.001, 0);
    row(ak, 1, 0, 0, 3, TF_STATUS_OK, 0.080, 0.080, 0.001, 0); /* 8x slower */
    row(ak, 0, 0, 0, 5, TF_STATUS_OK, 0, 0, 0.001, 0);         /* 0 s then */
    row(ak, 1, 0, 0, 5, TF_STATUS_OK, -0.5, -0.5, 0.001, 0);   /* negative now */
    a = through_file(a);
    struct tf_diff_options o;
    tf_diff_defaults(&o);
    struct tf_diff_summary sum;
    int regressions;
    char *text = report(a, 0, 1, &o, &sum, &regressions);
    assert_int_equal(regressions, 1);
    assert_has(text, "8.00x, SLOWER beyond the noise");
    if (strstr(text, "0.0 ns") != NULL || strstr(text, "-500") != NULL)
        fail_msg("a time <= 0 shown as a best:\n%s", text);
    free(text);
    char key[256];
    tf_device_class_key(&a->devices[0], key, sizeof key);
    for (int run = 0; run < 2; run++) {
        struct tf_report_pick pick;
        tf_report_pick(a, &a->kernels[0], 0, run, key, &pick);
        assert_non_null(pick.best);
        assert_int_equal(pick.best->r.config, 3);
    }
    tf_archive_destroy(a);
    tk_free(&gemm);
}

/* A run with several rows of one configuration in a group (two devices of a
 * class, a re-measurement): its time is the fastest ok median. And a previous
 * best that is invalid now (a device limit or constraint that changed) is
 * not a configuration that broke: only a failure status is a regression. */
static void test_rows_of_one_configuration(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_archive_kernel *ak;
    struct tf_archive *a = host_nights(&gemm, &ak);
    row(ak, 0, 0, 0, 3, TF_STATUS_OK, 2.0, 1.99, 0.002, 0);
    row(ak, 0, 0, 0, 3, TF_STATUS_OK, 1.0, 0.999, 0.002, 0); /* the same one, faster */
    row(ak, 0, 0, 0, 3, TF_STATUS_OK, 3.0, 2.99, 0.002, 0);
    row(ak, 1, 0, 0, 3, TF_STATUS_OK, 1.0, 0.999, 0.002, 0);
    a = through_file(a);
    struct tf_diff_options o;
    tf_diff_defaults(&o);
    struct tf_diff_summary sum;
    int regressions;
    char *text = report(a, 0, 1, &o, &sum, &regressions);
    const char *b = block(text, "gemm/small on AMD EPYC");
    assert_has(b, "1.000 ms (spread 0.1%)\n  best now:");
    assert_has(b, "1.00x, within the noise");
    assert_has(b, "configurations: 1 then, 1 now: 0 gained, 0 lost");
    assert_int_equal(regressions, 0);
    assert_int_equal(sum.faster_best, 0);
    free(text);
    tf_archive_destroy(a);
    tk_free(&gemm);

    a = host_nights(&gemm, &ak);
    row(ak, 0, 0, 0, 3, TF_STATUS_OK, 1.0, 0.999, 0.002, 0);
    row(ak, 0, 0, 0, 5, TF_STATUS_OK, 1.2, 1.199, 0.002, 0);
    row(ak, 1, 0, 0, 3, TF_STATUS_INVALID, 0, 0, 0, 0);
    row(ak, 1, 0, 0, 5, TF_STATUS_OK, 1.0, 0.999, 0.002, 0);
    a = through_file(a);
    text = report(a, 0, 1, &o, &sum, &regressions);
    b = block(text, "gemm/small on AMD EPYC");
    assert_has(b, "previous best now: invalid\n");
    assert_has(b, "statuses: 1 changed\n");
    assert_int_equal(regressions, 0);
    assert_int_equal(sum.failing_previous, 0);
    assert_int_equal(sum.broken, 0);
    free(text);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

/* The examples of a list stop at --examples: 3 changed statuses with 2
 * examples show 2 and "... and 1 more"; 3 gained show 2. */
static void test_examples_limit(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_archive_kernel *ak;
    struct tf_archive *a = host_nights(&gemm, &ak);
    for (uint64_t c = 0; c < 3; c++) {
        row(ak, 0, 0, 0, c, TF_STATUS_OK, 1.0 + (double)c, 1.0 + (double)c, 0.002, 0);
        row(ak, 1, 0, 0, c, TF_STATUS_COMPILE_ERROR, 0, 0, 0, 0);
        row(ak, 1, 0, 0, 8 + c, TF_STATUS_OK, 1.0, 0.999, 0.002, 0); /* gained */
    }
    a = through_file(a);
    struct tf_diff_options o;
    tf_diff_defaults(&o);
    o.examples = 2;
    struct tf_diff_summary sum;
    int regressions;
    char *text = report(a, 0, 1, &o, &sum, &regressions);
    const char *b = block(text, "gemm/small on AMD EPYC");
    assert_has(b, "statuses: 3 changed, 3 ok then and failing now: REGRESSION\n"
                  "    BM=16 BN=32 LAYOUT=row: ok -> compile_error\n"
                  "    BM=16 BN=32 LAYOUT=col: ok -> compile_error\n"
                  "    ... and 1 more\n"
                  "  configurations: 3 then, 6 now: 3 gained, 0 lost\n"
                  "    gained: BM=64 BN=32 LAYOUT=row (ok)\n"
                  "    gained: BM=64 BN=32 LAYOUT=col (ok)\n"
                  "  noisy:");
    free(text);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

/* Two phases: times from the strict re-measurements; a previous best that
 * only got screened now; an unfinished run. */
static void test_two_phases_and_unfinished(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    make_gemm(&gemm);
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H100", "GPU-0", "node1");
    tf_archive_add_device(a, &h0);
    struct tf_archive_run r = make_run("deep", 1000.0, 2000.0);
    tf_archive_add_run(a, &r);
    r = make_run("deep", 3000.0, 0); /* interrupted */
    tf_archive_add_run(a, &r);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm.k, &err);
    tf_archive_problem_for(ak, &gemm.k, 0);
    /* night 1: screened 3, 5, 7; 3 and 5 re-measured, 3 best (1.0 ms strict,
     * 0.6 ms screened: the screening protocol is not comparable) */
    row(ak, 0, 0, 0, 3, TF_STATUS_OK, 0.6, 0.55, 0.05, 1);
    row(ak, 0, 0, 0, 5, TF_STATUS_OK, 0.7, 0.65, 0.05, 1);
    row(ak, 0, 0, 0, 7, TF_STATUS_OK, 0.9, 0.85, 0.05, 1);
    row(ak, 0, 0, 0, 3, TF_STATUS_OK, 1.0, 0.998, 0.002, 2);
    row(ak, 0, 0, 0, 5, TF_STATUS_OK, 1.1, 1.098, 0.002, 2);
    /* night 2 (unfinished): 3 screened slower and not re-measured, 5 re-measured */
    row(ak, 1, 0, 0, 3, TF_STATUS_OK, 0.9, 0.85, 0.05, 1);
    row(ak, 1, 0, 0, 5, TF_STATUS_OK, 0.7, 0.65, 0.05, 1);
    row(ak, 1, 0, 0, 5, TF_STATUS_OK, 1.1, 1.099, 0.002, 2);
    a = through_file(a);
    struct tf_diff_options o;
    tf_diff_defaults(&o);
    struct tf_diff_summary sum;
    int regressions;
    char *text = report(a, 0, 1, &o, &sum, &regressions);
    const char *b = block(text, "gemm/small on NVIDIA H100");
    assert_has(b, "best then: BM=16 BN=64 LAYOUT=col");
    assert_has(b, "1.000 ms");                        /* strict, not the 0.6 ms screening */
    assert_has(b, "best now:  BM=32 BN=32 LAYOUT=col"); /* config 5 */
    assert_has(b, "1.10x, SLOWER beyond the noise");
    assert_has(b, "previous best now: 900.00 us (spread 5%), screening only");
    assert_has(b, "not yet: BM=32 BN=64 LAYOUT=col (ok)");
    assert_has(b, "configurations: 3 then, 2 now: 0 gained, 1 not measured yet (run unfinished)");
    assert_has(text, "UNFINISHED (killed or interrupted: compared as far as it got)");
    assert_int_equal(sum.slower_best, 1);
    assert_int_equal(regressions, 1);
    free(text);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

/* A configuration's status in a two-phase run is its screening row's
 * (diff.c's header): a strict re-measurement that timed out leaves an ok
 * screening status, not a configuration that broke since a one-phase run. */
static void test_status_of_a_two_phase_run(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_archive_kernel *ak;
    struct tf_archive *a = host_nights(&gemm, &ak);
    row(ak, 0, 0, 0, 3, TF_STATUS_OK, 1.0, 0.999, 0.002, 0);
    row(ak, 0, 0, 0, 5, TF_STATUS_OK, 2.0, 1.999, 0.002, 0);
    row(ak, 1, 0, 0, 3, TF_STATUS_OK, 1.0, 0.999, 0.002, 1);
    row(ak, 1, 0, 0, 5, TF_STATUS_OK, 2.0, 1.999, 0.002, 1);
    row(ak, 1, 0, 0, 3, TF_STATUS_OK, 1.0, 0.999, 0.002, 2);
    row(ak, 1, 0, 0, 5, TF_STATUS_TIMEOUT, 0, 0, 0, 2);
    a = through_file(a);
    struct tf_diff_options o;
    tf_diff_defaults(&o);
    struct tf_diff_summary sum;
    int regressions;
    char *text = report(a, 0, 1, &o, &sum, &regressions);
    const char *b = block(text, "gemm/small on AMD EPYC");
    assert_has(b, "statuses: 0 changed\n");
    assert_int_equal(sum.broken, 0);
    assert_int_equal(regressions, 0);
    free(text);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

/* `tunefarm diff ARCHIVE OPTIONS... -o dir/report.txt` on the archive
 * through_file left in dir (coordinator/diffcmd.c): its exit code; `report`
 * (a static copy) gets the report file's text, "" if none was written. */
static int diff_command(const char **report, const char *o1, const char *o2, const char *o3,
                        const char *o4)
{
    static char text[16384];
    char archive[128], out[128];
    snprintf(archive, sizeof archive, "%s/diff.h5", dir);
    snprintf(out, sizeof out, "%s/report.txt", dir);
    unlink(out);
    const char *args[] = {"tunefarm", "diff", "-o", out, o1, o2, o3, o4};
    char *argv[10];
    int argc = 0;
    for (size_t i = 0; i < sizeof args / sizeof *args; i++)
        if (args[i] != NULL)
            argv[argc++] = (char *)args[i];
    argv[argc++] = archive;
    argv[argc] = NULL;
    const int rc = tf_diff_command(argc, argv);
    text[0] = '\0';
    FILE *f = fopen(out, "r");
    if (f != NULL) {
        text[fread(text, 1, sizeof text - 1, f)] = '\0';
        fclose(f);
    }
    *report = text;
    return rc;
}

/* The command line of `tunefarm diff` at its limits: --tolerance refuses a
 * bare 1 (100% with its '%' left out, as "5" is) and 1000% (the bound is
 * below 10), and takes what lies just inside them; a third --run is refused
 * (there is room for two); a --run beside --slurm-job names run A. */
static void test_diff_command_line(void **state)
{
    (void)state;
    struct tf_archive *a = tf_archive_create();
    struct tf_device h0 = make_device("host", "AMD EPYC", "", "vm");
    tf_archive_add_device(a, &h0);
    for (int run = 0; run < 3; run++) {
        struct tf_archive_run r = make_run("nightly", 1000.0 + 2000 * run, 2000.0 + 2000 * run);
        tf_strlcpy(r.slurm_job_id, run == 2 ? "77" : "", sizeof r.slurm_job_id);
        tf_archive_add_run(a, &r);
    }
    tf_archive_destroy(through_file(a)); /* leaves dir/diff.h5 */
    const char *text;
    assert_int_equal(diff_command(&text, "--tolerance", "1", NULL, NULL), TF_EXIT_USAGE);
    assert_string_equal(text, "");
    assert_int_equal(diff_command(&text, "--tolerance", "1000%", NULL, NULL), TF_EXIT_USAGE);
    assert_int_equal(diff_command(&text, "--tolerance", "0.999", NULL, NULL), TF_EXIT_OK);
    assert_has(text, "max(3 x sqrt(s_A^2 + s_B^2), 99.9%)");
    assert_int_equal(diff_command(&text, "--tolerance", "999%", NULL, NULL), TF_EXIT_OK);
    assert_has(text, "max(3 x sqrt(s_A^2 + s_B^2), 999%)");
    assert_int_equal(diff_command(&text, "--run", "0", "--run", "1"), TF_EXIT_OK);
    assert_has(text, "A (then): run 0:");
    const char *three[] = {"tunefarm", "diff", "--run", "0", "--run", "1", "--run", "2", NULL};
    char *argv[10];
    for (int i = 0; i < 9; i++)
        argv[i] = (char *)three[i];
    char archive[128];
    snprintf(archive, sizeof archive, "%s/diff.h5", dir);
    argv[8] = archive;
    argv[9] = NULL;
    assert_int_equal(tf_diff_command(9, argv), TF_EXIT_USAGE);
    assert_int_equal(diff_command(&text, "--slurm-job", "77", NULL, NULL), TF_EXIT_OK);
    assert_has(text, "A (then): run 1:");
    assert_has(text, "B (now):  run 2:");
    assert_int_equal(diff_command(&text, "--slurm-job", "77", "--run", "0"), TF_EXIT_OK);
    assert_has(text, "A (then): run 0:");
    assert_has(text, "B (now):  run 2:");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_noise_rule),
        cmocka_unit_test(test_pick_runs),
        cmocka_unit_test(test_run_of_slurm_job),
        cmocka_unit_test(test_two_nights),
        cmocka_unit_test(test_single_valued_parameters_hidden),
        cmocka_unit_test(test_quiet_nights),
        cmocka_unit_test(test_two_phases_and_unfinished),
        cmocka_unit_test(test_times_not_positive),
        cmocka_unit_test(test_noise_rule_at_the_band),
        cmocka_unit_test(test_rows_of_one_configuration),
        cmocka_unit_test(test_examples_limit),
        cmocka_unit_test(test_status_of_a_two_phase_run),
        cmocka_unit_test(test_diff_command_line),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
