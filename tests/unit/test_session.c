/* test_session.c - what a run records about how it was made (coordinator/session.c).
 *
 * The job's settings become the run row's text and columns; a session row
 * names this process (host, version, Slurm id from the environment); and the
 * resume rule: an unfinished run goes on only where every device of a class
 * it measured runs the same driver, runtime, compiler and tunefarm versions
 * as in one of its sessions, and the coordinator is the run's version. A
 * changed clock or power limit does not stop a resume (it is recorded); a
 * class the run never measured on has nothing to compare; a run of an older
 * archive (no session devices) is compared by version only. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../coordinator/session.h"
#include "archive_fixture.h"

static void test_run_settings(void **state)
{
    (void)state;
    struct tf_job job;
    memset(&job, 0, sizeof job);
    struct tf_job_option opts[2] = {{.name = "population", .value = "24"},
                                    {.name = "mutation", .value = "0.1"}};
    job.strategy_name = "genetic";
    job.seed = 7;
    job.budget = 500;
    job.noise = 0.005;
    job.patience = 50;
    job.noptions = 2;
    job.options = opts;
    job.warm_count = 8;
    job.measure = (struct tf_measure){.warmup = 2, .min_samples = 10, .max_samples = 1000,
                                      .min_time = 0.02, .max_time = 1.0, .max_noise = 0.005,
                                      .timeout = 10, .flush_l2 = true, .energy_time = 0.1};
    job.screen = (struct tf_measure){.warmup = 1, .min_samples = 3, .max_samples = 10,
                                     .min_time = 0, .max_time = 0.1, .max_noise = 0.05,
                                     .timeout = 10};
    struct tf_archive_run run;
    memset(&run, 0, sizeof run);
    tf_session_run_settings(&run, &job);
    assert_string_equal(run.search_strategy, "genetic");
    assert_int_equal(run.search_seed, 7);
    assert_int_equal(run.search_budget, 500);
    assert_non_null(strstr(run.search, "patience=50"));
    assert_non_null(strstr(run.search, "options.population=24 options.mutation=0.1"));
    assert_string_equal(run.measure, "warmup=2 min_samples=10 max_samples=1000 min_time=0.02 "
                                     "max_time=1 max_noise=0.005 timeout=10 flush_l2=1 "
                                     "energy_time=0.1");
    assert_string_equal(run.screen, ""); /* one phase: no screening protocol */
    job.top_k = 8;
    tf_session_run_settings(&run, &job);
    assert_non_null(strstr(run.search, "top_k=8"));
    assert_non_null(strstr(run.screen, "max_noise=0.05"));
}

static void test_begin(void **state)
{
    (void)state;
    struct tf_archive *a = tf_archive_create();
    struct tf_archive_run r = make_run("nightly", 1714560000.0, 0);
    tf_archive_add_run(a, &r);
    setenv("SLURM_JOB_ID", "4711", 1);
    assert_int_equal(tf_session_begin(a, 0, "tunefarm run jobs/nightly.yaml", 5), 0);
    unsetenv("SLURM_JOB_ID");
    assert_int_equal(tf_session_begin(a, 0, NULL, 3), 1);
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    assert_int_equal(a->nsessions, 2);
    assert_string_equal(a->sessions[0].slurm_job_id, "4711");
    assert_string_equal(a->sessions[0].command, "tunefarm run jobs/nightly.yaml");
    assert_string_equal(a->sessions[0].host, host);
    assert_int_equal(a->sessions[0].ranks, 5);
    assert_true(a->sessions[0].start > 1.7e9 && a->sessions[0].end == 0);
    assert_string_equal(a->sessions[1].slurm_job_id, "");
    assert_string_equal(a->sessions[1].tunefarm_version, a->sessions[0].tunefarm_version);
    tf_archive_destroy(a);
}

static void test_may_resume(void **state)
{
    (void)state;
    char why[640];
    struct tf_archive *a = tf_archive_create();
    struct tf_device h100 = make_device("cuda", "NVIDIA H100", "GPU-0", "gpu01");
    tf_strlcpy(h100.driver_version, "580.65.06", sizeof h100.driver_version);
    tf_strlcpy(h100.tunefarm_version, "1.0", sizeof h100.tunefarm_version);
    h100.power_limit_w = 700;
    tf_archive_add_device(a, &h100);
    struct tf_archive_run r = make_run("nightly", 1714560000.0, 0);
    tf_strlcpy(r.tunefarm_version, "1.0", sizeof r.tunefarm_version);
    tf_archive_add_run(a, &r);
    /* An older archive: no sessions, so only the version says anything. */
    assert_int_equal(tf_session_may_resume(a, 0, "1.0", &h100, 1, why, sizeof why), 1);
    assert_int_equal(tf_session_may_resume(a, 0, "1.1", &h100, 1, why, sizeof why), 0);
    assert_non_null(strstr(why, "this is tunefarm 1.1; run 0 was measured with tunefarm 1.0"));

    const uint32_t s = tf_session_begin(a, 0, "tunefarm run", 2);
    tf_archive_set_session_device(a, s, 0, &h100);
    assert_int_equal(tf_session_may_resume(a, 0, "1.0", &h100, 1, why, sizeof why), 1);
    assert_string_equal(why, "");

    /* Another H100 (another node) with the same software resumes; with another driver not. */
    struct tf_device other = make_device("cuda", "NVIDIA H100", "GPU-7", "gpu02");
    tf_strlcpy(other.driver_version, "580.65.06", sizeof other.driver_version);
    tf_strlcpy(other.tunefarm_version, "1.0", sizeof other.tunefarm_version);
    other.props[0] = h100.props[0];
    assert_int_equal(tf_session_may_resume(a, 0, "1.0", &other, 1, why, sizeof why), 1);
    struct tf_device upgraded = h100;
    tf_strlcpy(upgraded.driver_version, "580.159.04", sizeof upgraded.driver_version);
    struct tf_device both[2] = {other, upgraded};
    assert_int_equal(tf_session_may_resume(a, 0, "1.0", both, 2, why, sizeof why), 0);
    assert_non_null(strstr(why, "NVIDIA H100 on gpu01: driver 580.65.06 -> 580.159.04"));
    struct tf_device compiler = h100;
    tf_strlcpy(compiler.compiler_version, "NVRTC 13.1", sizeof compiler.compiler_version);
    assert_int_equal(tf_session_may_resume(a, 0, "1.0", &compiler, 1, why, sizeof why), 0);
    assert_non_null(strstr(why, "compiler NVRTC 12.4.99 -> NVRTC 13.1"));

    /* Settings may change: recorded per session, not a reason for a new run. */
    struct tf_device capped = h100;
    capped.power_limit_w = 500;
    assert_int_equal(tf_session_may_resume(a, 0, "1.0", &capped, 1, why, sizeof why), 1);
    char changes[256];
    assert_int_equal(tf_device_changes(&h100, &capped, changes, sizeof changes), 1);
    assert_string_equal(changes, "power limit 700 W -> 500 W");

    /* A class the run never measured on: nothing to compare. */
    struct tf_device mi = make_device("hip", "AMD Instinct MI300X", "GPU-9", "amd01");
    tf_strlcpy(mi.arch, "gfx942", sizeof mi.arch);
    tf_strlcpy(mi.driver_version, "6.8.5", sizeof mi.driver_version);
    assert_int_equal(tf_session_may_resume(a, 0, "1.0", &mi, 1, why, sizeof why), 1);
    tf_archive_destroy(a);
}

/* The resume rule's "one of its sessions" and "the run's": a device that
 * matches the run's first session resumes although a later session of the
 * run had another driver; a session of another run does not count (run 1
 * measured with the new driver, run 0 did not). And status names a change
 * of a device only against that device: two H100s at 700 W and 600 W, both
 * unchanged, print no change. */
static void test_resume_sessions_and_devices(void **state)
{
    (void)state;
    char why[640];
    struct tf_archive *a = tf_archive_create();
    struct tf_device old = make_device("cuda", "NVIDIA H100", "GPU-0", "gpu01");
    tf_strlcpy(old.driver_version, "580.65.06", sizeof old.driver_version);
    tf_strlcpy(old.tunefarm_version, "1.0", sizeof old.tunefarm_version);
    struct tf_device new = old;
    tf_strlcpy(new.driver_version, "580.159.04", sizeof new.driver_version);
    tf_archive_add_device(a, &old);
    struct tf_archive_run r = make_run("nightly", 1714560000.0, 0);
    tf_strlcpy(r.tunefarm_version, "1.0", sizeof r.tunefarm_version);
    tf_archive_add_run(a, &r);
    uint32_t s0 = tf_session_begin(a, 0, "tunefarm run", 2);
    tf_archive_set_session_device(a, s0, 0, &old);
    uint32_t s1 = tf_session_begin(a, 0, "tunefarm run", 2);
    tf_archive_set_session_device(a, s1, 0, &new);
    assert_int_equal(tf_session_may_resume(a, 0, "1.0", &old, 1, why, sizeof why), 1);
    assert_int_equal(tf_session_may_resume(a, 0, "1.0", &new, 1, why, sizeof why), 1);
    tf_archive_destroy(a);

    a = tf_archive_create();
    tf_archive_add_device(a, &old);
    tf_archive_add_run(a, &r);
    struct tf_archive_run r1 = make_run("other", 1714570000.0, 0);
    tf_strlcpy(r1.tunefarm_version, "1.0", sizeof r1.tunefarm_version);
    tf_archive_add_run(a, &r1);
    s0 = tf_session_begin(a, 0, "tunefarm run", 2);
    tf_archive_set_session_device(a, s0, 0, &old);
    s1 = tf_session_begin(a, 1, "tunefarm run", 2);
    tf_archive_set_session_device(a, s1, 0, &new);
    assert_int_equal(tf_session_may_resume(a, 0, "1.0", &new, 1, why, sizeof why), 0);
    assert_non_null(strstr(why, "driver 580.65.06 -> 580.159.04 since run 0 measured"));
    assert_int_equal(tf_session_may_resume(a, 1, "1.0", &new, 1, why, sizeof why), 1);
    tf_archive_destroy(a);

    a = tf_archive_create();
    struct tf_device h0 = make_device("cuda", "NVIDIA H100", "GPU-0", "gpu01");
    struct tf_device h1 = make_device("cuda", "NVIDIA H100", "GPU-1", "gpu01");
    h0.power_limit_w = 700;
    h1.power_limit_w = 600;
    tf_archive_add_device(a, &h0);
    tf_archive_add_device(a, &h1);
    tf_archive_add_run(a, &r);
    for (int k = 0; k < 2; k++) {
        uint32_t s = tf_session_begin(a, 0, "tunefarm run", 2);
        tf_archive_set_session_device(a, s, 0, &h0);
        tf_archive_set_session_device(a, s, 1, &h1);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    tf_session_print(a, 0, "  ", out);
    fclose(out);
    assert_non_null(strstr(text, "  measured in 2 sessions (resumed 1 time):\n"));
    if (strstr(text, "changed") != NULL)
        fail_msg("a change between two devices, not sessions:\n%s", text);
    free(text);
    tf_archive_destroy(a);
}

/* status's lines: nothing for a run of one session; for a resumed run one
 * line per session, how it ended, and what changed on a device between two. */
static void test_print(void **state)
{
    (void)state;
    struct tf_archive *a = tf_archive_create();
    struct tf_device h = make_device("cuda", "NVIDIA H100", "GPU-0", "gpu01");
    h.power_limit_w = 700;
    tf_archive_add_device(a, &h);
    struct tf_archive_run r = make_run("nightly", 1714560000.0, 0);
    tf_archive_add_run(a, &r);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    uint32_t s0 = tf_session_begin(a, 0, "tunefarm run", 2);
    a->sessions[s0].end = a->sessions[s0].start + 3600;
    tf_archive_set_session_device(a, s0, 0, &h);
    tf_session_print(a, 0, "  ", out);
    fflush(out);
    assert_int_equal(len, 0);
    setenv("SLURM_JOB_ID", "117", 1);
    uint32_t s1 = tf_session_begin(a, 0, "tunefarm run", 2);
    unsetenv("SLURM_JOB_ID");
    h.power_limit_w = 600;
    tf_archive_set_session_device(a, s1, 0, &h);
    tf_session_print(a, 0, "  ", out);
    fclose(out);
    assert_non_null(strstr(text, "  measured in 2 sessions (resumed 1 time):\n"));
    assert_non_null(strstr(text, "  session 1: "));
    assert_non_null(strstr(text, "  session 2: "));
    assert_non_null(strstr(text, "(killed, or still running), Slurm job 117"));
    assert_non_null(strstr(text, "NVIDIA H100 on gpu01 changed: power limit 700 W -> 600 W"));
    free(text);
    tf_archive_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_settings),
        cmocka_unit_test(test_begin),
        cmocka_unit_test(test_may_resume),
        cmocka_unit_test(test_resume_sessions_and_devices),
        cmocka_unit_test(test_print),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
