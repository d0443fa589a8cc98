/* Tests for schema/space.c and coordinator/plan.c: counting and enumeration of
 * constrained spaces against a brute-force filter of the Cartesian product,
 * range bounds, slices covering every valid configuration exactly once, and
 * random samples (distinct, valid, default included, reproducible), and with
 * a default that follows the problem, each problem's own default sampled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "coordinator/plan.h"
#include "schema/job.h"
#include "schema/kernel.h"
#include "schema/space.h"

static struct tf_kernel *load_fixture(struct tf_bundle **b)
{
    struct tf_error err = {0};
    *b = tf_bundle_create();
    struct tf_kernel *k = tf_kernel_load("tests/unit/space/kernel.yaml", *b, &err);
    if (k == NULL)
        fail_msg("fixture did not load: %s:%d:%d: %s", err.file, err.line, err.column,
                 err.message);
    return k;
}

static struct tf_device fixture_device(int64_t max_threads)
{
    struct tf_device d = {0};
    strcpy(d.backend, "host");
    d.props[TF_DEVPROP_MAX_THREADS] = max_threads;
    return d;
}

/* The reference: test every configuration of the Cartesian product. */
static uint64_t brute_count(const struct tf_kernel *k, int problem, const struct tf_device *d,
                            uint64_t lo, uint64_t hi, uint64_t *list)
{
    struct tf_value slots[k->nslots];
    uint64_t n = 0;
    for (uint64_t i = lo; i < hi; i++) {
        bool ok;
        struct tf_error err;
        tf_kernel_bind(k, i, problem, d, slots);
        assert_int_equal(tf_kernel_check(k, slots, &ok, &err), 0);
        if (ok) {
            if (list)
                list[n] = i;
            n++;
        }
    }
    return n;
}

static void test_count_matches_brute_force(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_kernel *k = load_fixture(&b);
    uint64_t cart = tf_kernel_cartesian(k);
    assert_int_equal(cart, 6 * 5 * 3 * 7 * 3 * 2);
    int64_t threads[] = {4, 8, 1024};
    for (int p = 0; p < k->nproblems; p++)
        for (int t = 0; t < 3; t++) {
            struct tf_device d = fixture_device(threads[t]);
            struct tf_error err = {0};
            struct tf_space *s = tf_space_create(k, p, &d, &err);
            assert_non_null(s);
            uint64_t expect = brute_count(k, p, &d, 0, cart, NULL), got = 0;
            assert_int_equal(tf_space_count(s, 0, UINT64_MAX, &got, &err), 0);
            assert_int_equal(got, expect);
            if (strcmp(k->problems[p].name, "empty") == 0)
                assert_int_equal(got, 0);
            else
                assert_true(got > 0 && got < cart);
            tf_space_destroy(s);
        }
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

static void test_ranges_and_enumeration(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_kernel *k = load_fixture(&b);
    uint64_t cart = tf_kernel_cartesian(k);
    struct tf_device d = fixture_device(8);
    struct tf_error err = {0};
    struct tf_space *s = tf_space_create(k, 0, &d, &err);
    assert_non_null(s);
    uint64_t *expect = calloc(cart, sizeof *expect);
    uint64_t n = brute_count(k, 0, &d, 0, cart, expect);

    /* Enumeration yields exactly the valid indices, in order. */
    uint64_t idx = 0, i = 0;
    while (tf_space_next(s, idx, cart, &idx, &err) == 1) {
        assert_true(i < n);
        assert_int_equal(idx, expect[i]);
        i++;
        idx++;
    }
    assert_int_equal(i, n);

    /* Arbitrary sub-ranges count like the brute force over the same range. */
    uint64_t seed = 12345;
    for (int trial = 0; trial < 300; trial++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t lo = (seed >> 33) % cart;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t hi = lo + (seed >> 33) % (cart - lo + 1);
        uint64_t got;
        assert_int_equal(tf_space_count(s, lo, hi, &got, &err), 0);
        assert_int_equal(got, brute_count(k, 0, &d, lo, hi, NULL));
        uint64_t first;
        int found = tf_space_next(s, lo, hi, &first, &err);
        uint64_t j = 0;
        while (j < n && expect[j] < lo)
            j++;
        if (j < n && expect[j] < hi) {
            assert_int_equal(found, 1);
            assert_int_equal(first, expect[j]);
        } else {
            assert_int_equal(found, 0);
        }
    }
    free(expect);
    tf_space_destroy(s);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

static void test_globally_empty_space(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_kernel *k = load_fixture(&b);
    /* "N > 0" reads no parameter: it is checked once and empties the space. */
    struct tf_device d = fixture_device(8);
    struct tf_error err = {0};
    struct tf_space *s = tf_space_create(k, 2, &d, &err);
    assert_non_null(s);
    uint64_t next = 0;
    assert_int_equal(tf_space_next(s, 0, UINT64_MAX, &next, &err), 0);
    tf_space_destroy(s);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* Write `text` (with KERNEL replaced by the fixture's absolute folder) as a job
 * file in a temporary folder and load it. */
static struct tf_job *load_job(const char *text, struct tf_bundle **b)
{
    char dir[] = "/tmp/tf_test_space_XXXXXX", path[4200], cwd[4096], body[8192];
    assert_non_null(mkdtemp(dir));
    assert_non_null(getcwd(cwd, sizeof cwd));
    const char *at = strstr(text, "KERNEL");
    assert_non_null(at);
    snprintf(body, sizeof body, "%.*s%s/tests/unit/space%s", (int)(at - text), text, cwd, at + 6);
    snprintf(path, sizeof path, "%s/job.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(body, f);
    fclose(f);
    struct tf_error err = {0};
    *b = tf_bundle_create();
    struct tf_job *job = tf_job_load(path, *b, &err);
    unlink(path);
    rmdir(dir);
    if (job == NULL)
        fail_msg("job did not load: %s:%d:%d: %s", err.file, err.line, err.column, err.message);
    return job;
}

static void test_slices_cover_every_valid_configuration_once(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_job *job = load_job("name: slices\nkernels:\n  - kernel: KERNEL\n    problems: [p1, p2]\n",
                                  &b);
    struct tf_device d = fixture_device(8);
    struct tf_error err = {0};
    struct tf_plan *plan = tf_plan_create(job, 1, &d, &err);
    assert_non_null(plan);
    const struct tf_kernel *k = job->kernels[0].kernel;
    uint64_t cart = tf_kernel_cartesian(k);
    for (int t = 0; t < plan->ntasks; t++) {
        struct tf_task *task = &plan->tasks[t];
        assert_int_equal(task->total, brute_count(k, task->problem, &d, 0, cart, NULL));
    }
    /* Slices of varying size; recount each with the space. */
    uint64_t want = 1, handed = 0;
    for (;;) {
        struct tf_work w;
        int64_t n = tf_plan_next_slice(plan, 0, want, &w, &err);
        assert_true(n >= 0);
        if (n == 0)
            break;
        assert_int_equal(w.nlist, 0);
        struct tf_task *task = tf_plan_find(plan, (int)w.kernel, (int)w.problem, 0);
        uint64_t inside;
        assert_int_equal(tf_space_count(task->space, w.lo, w.hi, &inside, &err), 0);
        assert_int_equal(inside, (uint64_t)n);
        handed += (uint64_t)n;
        want = want * 3 % 17 + 1;
    }
    assert_int_equal(handed, plan->total);
    for (int t = 0; t < plan->ntasks; t++)
        assert_int_equal(plan->tasks[t].cursor, cart);
    tf_plan_destroy(plan);
    tf_job_destroy(job);
    tf_bundle_destroy(b);
}

/* Every valid configuration of a task, marked per index as compiled ahead (1)
 * or measured (2), as slices are cut in an interleaving of both kinds. */
static void mark_slice(struct tf_plan *plan, const struct tf_work *w, uint8_t **marks,
                       uint8_t bit)
{
    struct tf_task *task = tf_plan_find(plan, (int)w->kernel, (int)w->problem, 0);
    struct tf_error err = {0};
    uint64_t idx = w->lo, at;
    for (;;) {
        int rc = tf_space_next(task->space, idx, w->hi, &at, &err);
        assert_true(rc >= 0);
        if (rc == 0)
            break;
        /* nothing is compiled ahead twice, nor after it was handed out to measure */
        assert_int_equal(marks[w->problem][at] & bit, 0);
        if (bit == 1)
            assert_int_equal(marks[w->problem][at] & 2, 0);
        marks[w->problem][at] |= bit;
        idx = at + 1;
    }
}

static void test_compile_slices_run_ahead(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_job *job = load_job("name: ahead\nkernels:\n  - kernel: KERNEL\n    problems: [p1, p2]\n",
                                  &b);
    struct tf_device d = fixture_device(8);
    struct tf_error err = {0};
    struct tf_plan *plan = tf_plan_create(job, 1, &d, &err);
    assert_non_null(plan);
    const uint64_t cart = tf_kernel_cartesian(job->kernels[0].kernel);
    uint8_t *marks[2] = {tf_xcalloc(cart, 1), tf_xcalloc(cart, 1)};
    uint64_t measured = 0, ahead = 0, step = 0;
    for (;;) {
        struct tf_work w;
        /* two compile slices per measured one: compile ranks run ahead */
        for (int c = 0; c < 2; c++) {
            int64_t n = tf_plan_next_compile_slice(plan, 0, 3 + step % 5, &w, &err);
            assert_true(n >= 0);
            if (n > 0) {
                mark_slice(plan, &w, marks, 1);
                ahead += (uint64_t)n;
            }
        }
        int64_t n = tf_plan_next_slice(plan, 0, 1 + step % 4, &w, &err);
        assert_true(n >= 0);
        if (n == 0)
            break;
        mark_slice(plan, &w, marks, 2);
        measured += (uint64_t)n;
        step++;
    }
    assert_int_equal(measured, plan->total);
    assert_true(ahead > plan->total / 2); /* most of the space was compiled ahead */
    assert_true(ahead <= plan->total);
    /* once everything is handed out there is nothing to compile ahead */
    struct tf_work w;
    assert_int_equal(tf_plan_next_compile_slice(plan, 0, 10, &w, &err), 0);
    /* every configuration compiled ahead was then measured */
    for (int p = 0; p < 2; p++)
        for (uint64_t i = 0; i < cart; i++)
            assert_true(marks[p][i] != 1);
    free(marks[0]);
    free(marks[1]);
    tf_plan_destroy(plan);
    tf_job_destroy(job);
    tf_bundle_destroy(b);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Two plans of the same job text, each loaded on its own (load_job), for one
 * fixture device with 8 threads: a random sample must come out the same. */
struct twin_plans {
    struct tf_bundle *b[2];
    struct tf_job *j[2];
    struct tf_plan *p[2];
};

/* Load `text` twice and plan each; fails the test if a plan is refused. The
 * seconds the first plan took go to *took (if not NULL). */
static void twin_plans_create(struct twin_plans *tw, const char *text, double *took)
{
    struct tf_device d = fixture_device(8);
    for (int i = 0; i < 2; i++) {
        struct tf_error err = {0};
        tw->j[i] = load_job(text, &tw->b[i]);
        const double t0 = now_s();
        tw->p[i] = tf_plan_create(tw->j[i], 1, &d, &err);
        if (i == 0 && took)
            *took = now_s() - t0;
        if (tw->p[i] == NULL)
            fail_msg("plan %d: %s", i, err.message);
    }
}

static void twin_plans_destroy(struct twin_plans *tw)
{
    for (int i = 0; i < 2; i++) {
        tf_plan_destroy(tw->p[i]);
        tf_job_destroy(tw->j[i]);
        tf_bundle_destroy(tw->b[i]);
    }
}

/* The sample of `t` (its list): every configuration valid, sorted (hence
 * distinct), `def` among them, and the same list as `again`'s. */
static void expect_sample(const struct tf_task *t, const struct tf_task *again, uint64_t def)
{
    struct tf_error err = {0};
    bool has_default = false;
    assert_int_equal(t->nlist, again->nlist);
    for (uint64_t i = 0; i < t->nlist; i++) {
        bool valid = false;
        assert_int_equal(tf_space_is_valid(t->space, t->list[i], &valid, &err), 0);
        assert_true(valid);
        if (i > 0)
            assert_true(t->list[i] > t->list[i - 1]);
        has_default |= t->list[i] == def;
        assert_int_equal(t->list[i], again->list[i]); /* reproducible */
    }
    assert_true(has_default);
}

static void test_random_sample(void **state)
{
    (void)state;
    const char *text = "name: sample\nkernels:\n  - kernel: KERNEL\n    problems: [p1]\n"
                       "search: {strategy: random, budget: 25, seed: 7}\n";
    struct twin_plans tw;
    twin_plans_create(&tw, text, NULL);
    struct tf_error err = {0};
    struct tf_task *t = &tw.p[0]->tasks[0];
    const struct tf_kernel *k = tw.j[0]->kernels[0].kernel;
    assert_int_equal(t->total, 25);
    expect_sample(t, &tw.p[1]->tasks[0], k->default_index);
    struct tf_work w;
    assert_int_equal(tf_plan_next_slice(tw.p[0], 0, 10, &w, &err), 10);
    assert_int_equal(w.nlist, 10);
    assert_memory_equal(w.list, t->list, 10 * sizeof *w.list);
    free(w.list);
    twin_plans_destroy(&tw);
}

/* A default that follows the problem (space/per_problem: A is N // 32): each
 * problem's sample holds that problem's own default, never only problem 0's. */
static void test_random_sample_per_problem_default(void **state)
{
    (void)state;
    const char *text = "name: sample\nkernels:\n  - kernel: KERNEL/per_problem\n"
                       "    problems: [p1, p2]\n"
                       "search: {strategy: random, budget: 25, seed: 7}\n";
    struct tf_bundle *b;
    struct tf_job *job = load_job(text, &b);
    struct tf_device d = fixture_device(8);
    struct tf_error err = {0};
    struct tf_plan *plan = tf_plan_create(job, 1, &d, &err);
    assert_non_null(plan);
    const struct tf_kernel *k = job->kernels[0].kernel;
    assert_false(k->has_default); /* A=2 for p1, A=3 for p2 */
    assert_int_equal(plan->ntasks, 2);
    uint64_t defaults[2];
    for (int t = 0; t < plan->ntasks; t++) {
        struct tf_task *task = &plan->tasks[t];
        assert_int_equal(task->total, 25);
        assert_true(tf_kernel_default_for(k, task->problem, &defaults[t]));
        bool valid = false;
        assert_int_equal(tf_space_is_valid(task->space, defaults[t], &valid, &err), 0);
        assert_true(valid);
        bool found = false;
        for (uint64_t i = 0; i < task->nlist; i++)
            found |= task->list[i] == defaults[t];
        if (!found)
            fail_msg("problem %s: its default %llu is not in the sample",
                     k->problems[task->problem].name, (unsigned long long)defaults[t]);
    }
    assert_true(defaults[0] != defaults[1]);
    int digits[6];
    tf_kernel_decode(k, defaults[1], digits);
    assert_int_equal(k->params[0].ints[digits[0]], 3); /* p2: A = 96 // 32 */
    tf_plan_destroy(plan);
    tf_job_destroy(job);
    tf_bundle_destroy(b);
}

/* Issue 11 item 22: the sparse branch of tf_space_sample (valid fraction
 * below 1e-3) had no test. space/sparse: 32 valid (A == B == C) of 32768,
 * budget 10: the sample is valid, distinct, holds the default, is not the
 * first ten valid configurations, and is the same for the same seed. */
static void test_random_sample_sparse(void **state)
{
    (void)state;
    const char *text = "name: sparse\nkernels:\n  - kernel: KERNEL/sparse\n"
                       "search: {strategy: random, budget: 10, seed: 11}\n";
    struct twin_plans tw;
    twin_plans_create(&tw, text, NULL);
    struct tf_error err = {0};
    const struct tf_kernel *k = tw.j[0]->kernels[0].kernel;
    struct tf_task *t = &tw.p[0]->tasks[0];
    assert_int_equal(tf_kernel_cartesian(k), 32768);
    assert_int_equal(t->valid, 32);
    assert_false(t->valid_estimated);
    assert_true((double)t->valid / 32768.0 < 1e-3); /* the sparse branch */
    assert_int_equal(t->total, 10);
    assert_int_equal(t->nlist, 10);
    uint64_t def, first_ten[10], idx = 0;
    assert_true(tf_kernel_default_for(k, 0, &def));
    for (int i = 0; i < 10; i++) {
        assert_int_equal(tf_space_next(t->space, idx, UINT64_MAX, &first_ten[i], &err), 1);
        idx = first_ten[i] + 1;
    }
    expect_sample(t, &tw.p[1]->tasks[0], def);
    for (uint64_t i = 0; i < t->nlist; i++) {
        int digits[3];
        tf_kernel_decode(k, t->list[i], digits);
        assert_int_equal(digits[0], digits[1]); /* valid here: A == B == C */
        assert_int_equal(digits[1], digits[2]);
    }
    assert_memory_not_equal(t->list, first_ten, sizeof first_ten);
    twin_plans_destroy(&tw);
}

/* Issue 11 item 7: a random search of 10^11 configurations (budget 10)
 * counted the whole space first: ten minutes at 99% CPU. Now it is sampled by
 * rejection without a count, in well under a second, uniform over the valid
 * configurations (about half here), the default included, reproducible. */
static void test_random_huge_space_without_count(void **state)
{
    (void)state;
    const char *text = "name: huge\nkernels:\n  - kernel: KERNEL/huge\n    problems: [near]\n"
                       "search: {strategy: random, budget: 10, seed: 3}\n";
    struct twin_plans tw;
    double took = 0;
    twin_plans_create(&tw, text, &took);
    assert_true(took < 5.0);
    struct tf_task *t = &tw.p[0]->tasks[0];
    const struct tf_kernel *k = tw.j[0]->kernels[0].kernel;
    assert_true(tf_space_cartesian(t->space) == UINT64_C(100000000000));
    assert_true(t->valid_estimated);
    assert_true(t->valid > UINT64_C(40000000000) && t->valid < UINT64_C(60000000000));
    assert_int_equal(t->total, 10);
    assert_int_equal(t->nlist, 10);
    uint64_t def;
    assert_true(tf_kernel_default_for(k, t->problem, &def));
    expect_sample(t, &tw.p[1]->tasks[0], def);
    twin_plans_destroy(&tw);
}

struct poll_record {
    int calls, stop_at;
    double last_fraction;
    bool monotonic;
    char activity[128];
};

static bool record_poll(void *ctx, const char *kernel, const char *problem, const char *activity,
                        double fraction, double elapsed)
{
    struct poll_record *r = ctx;
    (void)kernel;
    (void)problem;
    (void)elapsed;
    r->monotonic &= fraction >= r->last_fraction && fraction <= 1;
    r->last_fraction = fraction;
    snprintf(r->activity, sizeof r->activity, "%s", activity);
    return ++r->calls >= r->stop_at;
}

/* Issue 11 item 7: counting polls a hook (main.c's shows progress and stops
 * on a signal): the count of a huge space stops when the hook says so, with
 * TF_ERR_INTERRUPTED, and a random search whose valid configurations are too
 * rare for rejection falls back to a count that stops the same way. */
static void test_count_polls_and_stops(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_job *job = load_job("name: huge\nkernels:\n  - kernel: KERNEL/huge\n", &b);
    const struct tf_kernel *k = job->kernels[0].kernel;
    struct tf_device d = fixture_device(8);
    struct tf_error err = {0};
    struct poll_record rec = {.stop_at = 5, .monotonic = true};
    tf_space_set_poll(record_poll, &rec);
    struct tf_space *s = tf_space_create(k, 0, &d, &err);
    assert_non_null(s);
    uint64_t count = 0;
    double t0 = now_s();
    assert_int_equal(tf_space_count(s, 0, UINT64_MAX, &count, &err), -1);
    assert_true(now_s() - t0 < 5.0);
    assert_int_equal(err.code, TF_ERR_INTERRUPTED);
    assert_non_null(strstr(err.message, "stopped by a signal while counting the valid "
                                        "configurations of kernel 'spacetest_huge', problem "
                                        "'near'"));
    assert_int_equal(rec.calls, 5);
    assert_true(rec.monotonic);
    assert_true(rec.last_fraction > 0);
    tf_space_destroy(s);

    /* Brute force counts: the plan fails with the stop, nothing planned. */
    rec = (struct poll_record){.stop_at = 3, .monotonic = true};
    assert_null(tf_plan_create(job, 1, &d, &err));
    assert_int_equal(err.code, TF_ERR_INTERRUPTED);
    tf_job_destroy(job);
    tf_bundle_destroy(b);

    /* Random, one valid configuration in 10^11: rejection gives up, the count
     * that follows is stopped too. */
    job = load_job("name: rare\nkernels:\n  - kernel: KERNEL/huge\n    problems: [rare]\n"
                   "search: {strategy: random, budget: 10}\n", &b);
    rec = (struct poll_record){.stop_at = 1000000, .monotonic = true};
    tf_space_set_poll(record_poll, &rec);
    rec.stop_at = 4194304 / 65536 + 16 + 4; /* past the rejection draws, into the count */
    t0 = now_s();
    assert_null(tf_plan_create(job, 1, &d, &err));
    assert_true(now_s() - t0 < 30.0);
    assert_int_equal(err.code, TF_ERR_INTERRUPTED);
    assert_string_equal(rec.activity, "counting the valid configurations");
    tf_space_set_poll(NULL, NULL);
    tf_job_destroy(job);
    tf_bundle_destroy(b);
}

/* Issue 11 item 15: a constraint that divides by zero while the space is
 * counted said only "division by zero"; it now names the constraint's
 * file:line:col, the problem and the parameter values. */
static void test_constraint_error_location(void **state)
{
    (void)state;
    const char *text = "name: divzero\nlanguage: c\nsource: space.c\nentry: space_kernel\n"
                       "reference: {source: space.c, entry: space_reference}\n"
                       "problems:\n  p1: {N: 64}\n"
                       "parameters:\n  A: [1, 2, 3]\n  B: [4, 8]\n"
                       "constraints:\n  - A <= 3\n  - N % (A - 2) == 0 || B == 8\n"
                       "arguments:\n  - {name: N, scalar: int32, value: N}\n"
                       "  - {name: out, buffer: float32, size: N, output: true}\n";
    struct tf_bundle *b = tf_bundle_create();
    tf_bundle_add(b, "tests/unit/space/divzero.yaml", text, strlen(text));
    struct tf_error err = {0};
    struct tf_kernel *k = tf_kernel_load("tests/unit/space/divzero.yaml", b, &err);
    if (k == NULL)
        fail_msg("%s", err.message);
    struct tf_device d = fixture_device(8);
    struct tf_space *s = tf_space_create(k, 0, &d, &err);
    assert_non_null(s);
    uint64_t count;
    tf_error_clear(&err);
    assert_int_equal(tf_space_count(s, 0, UINT64_MAX, &count, &err), -1);
    assert_int_equal(err.code, TF_ERR_EVAL);
    assert_string_equal(err.file, "tests/unit/space/divzero.yaml");
    assert_int_equal(err.line, 13);
    assert_int_equal(err.column, 5);
    if (!strstr(err.message, "constraint 'N % (A - 2) == 0 || B == 8' cannot be evaluated for "
                             "problem 'p1' at A=2 B=4: division by zero"))
        fail_msg("message: %s", err.message);
    /* The same from a full check of one configuration, and from enumeration. */
    bool valid;
    tf_error_clear(&err);
    assert_int_equal(tf_space_is_valid(s, 2, &valid, &err), -1); /* A=2 B=4 */
    assert_int_equal(err.line, 13);
    uint64_t next;
    tf_error_clear(&err);
    assert_int_equal(tf_space_next(s, 0, UINT64_MAX, &next, &err), 1); /* A=1 is fine */
    assert_int_equal(tf_space_next(s, 2, UINT64_MAX, &next, &err), -1); /* A=2 B=4 */
    assert_int_equal(err.line, 13);
    struct tf_value slots[k->nslots];
    tf_kernel_bind(k, 2, 0, &d, slots);
    tf_error_clear(&err);
    assert_int_equal(tf_kernel_check(k, slots, &valid, &err), -1);
    assert_int_equal(err.line, 13);
    assert_int_equal(err.column, 5);
    tf_space_destroy(s);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* Configurations of a slice, range or list, into out (returns how many). */
static uint64_t slice_configs(struct tf_plan *plan, const struct tf_work *w, uint64_t *out)
{
    if (w->nlist > 0) {
        memcpy(out, w->list, w->nlist * sizeof *out);
        return w->nlist;
    }
    struct tf_task *task = tf_plan_find(plan, (int)w->kernel, (int)w->problem, 0);
    struct tf_error err = {0};
    uint64_t idx = w->lo, at, n = 0;
    while (tf_space_next(task->space, idx, w->hi, &at, &err) == 1) {
        out[n++] = at;
        idx = at + 1;
    }
    return n;
}

/* A resumed plan hands out exactly what the interrupted run had not measured:
 * results it had (with a duplicate and a configuration outside the space)
 * are skipped by measured and compile-ahead slices alike. */
static void test_resume_skips_measured(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_job *job = load_job("name: resume\nkernels:\n  - kernel: KERNEL\n    problems: [p1, p2]\n",
                                  &b);
    struct tf_device d = fixture_device(8);
    struct tf_error err = {0};
    const uint64_t cart = tf_kernel_cartesian(job->kernels[0].kernel);
    uint8_t *seen[2] = {tf_xcalloc(cart, 1), tf_xcalloc(cart, 1)};
    uint64_t *configs = tf_xmalloc(cart * sizeof *configs);

    /* The first run: a few slices, every other configuration of them measured. */
    struct tf_plan *first = tf_plan_create(job, 1, &d, &err);
    assert_non_null(first);
    struct tf_result *done[2] = {tf_xcalloc(cart + 2, sizeof **done),
                                 tf_xcalloc(cart + 2, sizeof **done)};
    uint64_t ndone[2] = {0, 0}, total = first->total;
    for (int i = 0; i < 5; i++) {
        struct tf_work w;
        assert_true(tf_plan_next_slice(first, 0, 7, &w, &err) > 0);
        uint64_t n = slice_configs(first, &w, configs);
        free(w.list);
        for (uint64_t j = 0; j < n; j += 2) {
            tf_result_init(&done[w.problem][ndone[w.problem]++], 0, w.problem, configs[j],
                           TF_STATUS_OK);
            seen[w.problem][configs[j]] = 1;
        }
    }
    tf_plan_destroy(first);
    uint64_t measured = ndone[0] + ndone[1];
    assert_true(measured > 5);
    done[0][ndone[0]] = done[0][0]; /* measured twice: counts once */
    tf_result_init(&done[0][ndone[0] + 1], 0, 0, cart + 5, TF_STATUS_OK); /* not in the space */

    /* The resumed run. */
    struct tf_plan *plan = tf_plan_create(job, 1, &d, &err);
    assert_non_null(plan);
    for (int t = 0; t < plan->ntasks; t++) {
        struct tf_task *task = &plan->tasks[t];
        uint64_t n = ndone[task->problem] + (task->problem == 0 ? 2 : 0);
        assert_int_equal(tf_plan_resume(plan, task, done[task->problem], n, &err),
                         (int64_t)ndone[task->problem]);
        assert_int_equal(task->done, ndone[task->problem]);
    }
    assert_int_equal(tf_plan_undispatched(plan, 0), total - measured);
    uint64_t handed = 0, ahead = 0;
    for (int step = 0;; step++) {
        struct tf_work w;
        int64_t c = tf_plan_next_compile_slice(plan, 0, 2 + step % 3, &w, &err);
        assert_true(c >= 0);
        if (c > 0) {
            uint64_t n = slice_configs(plan, &w, configs);
            assert_int_equal(n, (uint64_t)c);
            for (uint64_t j = 0; j < n; j++)
                assert_false(seen[w.problem][configs[j]] & 1); /* never one measured before */
            ahead += n;
            free(w.list);
        }
        int64_t n = tf_plan_next_slice(plan, 0, 1 + step % 5, &w, &err);
        assert_true(n >= 0);
        if (n == 0)
            break;
        assert_int_equal(slice_configs(plan, &w, configs), (uint64_t)n);
        for (int64_t j = 0; j < n; j++) {
            assert_int_equal(seen[w.problem][configs[j]], 0); /* each once, none measured */
            seen[w.problem][configs[j]] = 2;
        }
        handed += (uint64_t)n;
        free(w.list);
    }
    assert_int_equal(handed, total - measured);
    assert_true(ahead > 0);
    /* Together, the two parts are every valid configuration. */
    for (int t = 0; t < plan->ntasks; t++) {
        struct tf_task *task = &plan->tasks[t];
        uint64_t count = 0;
        for (uint64_t i = 0; i < cart; i++)
            count += seen[task->problem][i] != 0;
        assert_int_equal(count, task->valid);
    }
    tf_plan_destroy(plan);
    free(done[0]);
    free(done[1]);
    free(seen[0]);
    free(seen[1]);
    free(configs);
    tf_job_destroy(job);
    tf_bundle_destroy(b);
}

/* A two-phase task whose screening pass was complete resumes in phase 2 with
 * the top k of the screening results it had, minus those re-measured already. */
static void test_resume_two_phase(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_job *job = load_job("name: resume2\nkernels:\n  - kernel: KERNEL\n    problems: [p1]\n"
                                  "search: {strategy: random, budget: 20, seed: 3, top_k: 4}\n",
                                  &b);
    struct tf_device d = fixture_device(8);
    struct tf_error err = {0};
    struct tf_plan *plan = tf_plan_create(job, 1, &d, &err);
    assert_non_null(plan);
    struct tf_task *t = &plan->tasks[0];
    assert_int_equal(t->phase, 1);
    assert_int_equal(t->total, 20);
    /* Screening results: the median falls with the list position, so the top 4
     * are the last four; plus the strict re-measurement of one of them. */
    struct tf_result done[21];
    for (int i = 0; i < 20; i++) {
        tf_result_init(&done[i], 0, 0, t->list[i], TF_STATUS_OK);
        done[i].phase = 1;
        done[i].time_median = 1.0 - 0.01 * i;
    }
    const uint64_t top[4] = {t->list[16], t->list[17], t->list[18], t->list[19]};
    tf_result_init(&done[20], 0, 0, top[2], TF_STATUS_OK);
    done[20].phase = 2;
    done[20].time_median = 0.5;
    assert_int_equal(tf_plan_resume(plan, t, done, 21, &err), 21);
    assert_int_equal(t->phase, 2);
    assert_int_equal(t->total, 4);
    assert_int_equal(t->done, 1);
    /* The three top-k configurations not re-measured yet, and nothing else. */
    struct tf_work w;
    assert_int_equal(tf_plan_next_slice(plan, 0, 10, &w, &err), 3);
    assert_int_equal(w.phase, 2);
    for (uint32_t i = 0; i < w.nlist; i++) {
        assert_true(w.list[i] != top[2]);
        assert_true(w.list[i] == top[0] || w.list[i] == top[1] || w.list[i] == top[3]);
    }
    free(w.list);
    assert_int_equal(tf_plan_next_slice(plan, 0, 10, &w, &err), 0);
    tf_plan_destroy(plan);
    tf_job_destroy(job);
    tf_bundle_destroy(b);
}

/* Screening ties at the k-th place go to the lower configuration index,
 * whatever order the results arrived in (the top k must not depend on which
 * worker reported first). */
static void test_top_k_ties_by_configuration(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_job *job = load_job("name: ties\nkernels:\n  - kernel: KERNEL\n    problems: [p1]\n"
                                  "search: {strategy: random, budget: 10, seed: 3, top_k: 3}\n",
                                  &b);
    struct tf_device d = fixture_device(8);
    struct tf_error err = {0};
    struct tf_plan *plan = tf_plan_create(job, 1, &d, &err);
    assert_non_null(plan);
    struct tf_task *t = &plan->tasks[0];
    assert_int_equal(t->nlist, 10);
    uint64_t configs[10];
    memcpy(configs, t->list, sizeof configs);
    /* Hand the whole screening pass out first, as the coordinator does before
     * any of it can come back. */
    struct tf_work w = {0};
    assert_int_equal(tf_plan_next_slice(plan, 0, 10, &w, &err), 10);
    free(w.list);
    /* The list is ascending. Medians: configs[0] fastest, then configs[1..9] all
     * equal: the top 3 are configs[0], configs[1] and configs[2]. */
    for (int i = 9; i >= 0; i--) { /* in reverse order, as a slow worker might */
        struct tf_result r;
        tf_result_init(&r, 0, 0, configs[i], TF_STATUS_OK);
        r.phase = 1;
        r.time_median = i == 0 ? 1e-6 : 2e-6;
        tf_plan_record(plan, t, &r);
    }
    assert_int_equal(t->phase, 2);
    assert_int_equal(t->nlist, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(t->list[i], configs[i]);
    tf_plan_destroy(plan);
    tf_job_destroy(job);
    tf_bundle_destroy(b);
}


/* ---- the cursor (issue 14 item 10) ---- */

/* Spaces with constraints at every depth: on the first parameter, reading
 * sizes, reading a parameter far above (so the memo's context spans free
 * levels), an enum, a free level in the middle and at the end, none at all,
 * one parameter, and a leaf that rejects most. Each is "parameters" and
 * "constraints" YAML blocks for kernel_text. */
static const char *const cursor_spaces[][2] = {
    {"  A: [1, 2, 3, 4, 5, 6, 7, 8]\n  B: [1, 2, 4, 8, 16]\n  C: [0, 1, 2, 3, 4, 5]\n"
     "  D: [1, 2, 3, 4]\n  E: [0, 1]\n  F: [1, 2, 3]\n",
     "  - A != 5\n  - A * B <= 32\n  - (C + D) % 3 != 1\n  - N % (A * D) == 0\n"
     "  - E == 0 || B >= 4\n  - F != 2 || A % 2 == 0\n"},
    {"  A: [1, 2, 3, 4]\n  FREE1: [0, 1, 2]\n  FREE2: [0, 1]\n  Z: [1, 2, 3, 4, 5, 6, 7]\n",
     "  - (A + Z) % 3 == 0 || Z == 7\n"},
    {"  MODE: [fast, safe, wide]\n  X: [1, 2, 4, 8, 16, 32]\n  Y: [1, 2, 4, 8, 16, 32]\n"
     "  T: [0, 1, 2]\n",
     "  - MODE != \"wide\" || X * Y >= 64\n  - X * Y <= max_threads\n"
     "  - MODE == \"safe\" || X <= Y\n"},
    {"  P: [1, 2, 3]\n  Q: [4, 5]\n  R: [6, 7, 8, 9]\n", "  - N > 0\n"},
    {"  ONLY: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n", "  - ONLY % 3 != 0\n"},
    {"  U: [0, 1, 2, 3, 4, 5, 6, 7]\n  V: [0, 1, 2, 3, 4, 5, 6, 7]\n  W: [0, 1, 2, 3, 4, 5, 6, 7]\n",
     "  - (U * 64 + V * 8 + W) % 37 == 5\n"},
};

static struct tf_kernel *kernel_text(const char *params, const char *constraints,
                                     struct tf_bundle **b)
{
    char text[4096];
    snprintf(text, sizeof text,
             "name: cursor\nlanguage: c\nsource: space.c\nentry: space_kernel\n"
             "reference: {source: space.c, entry: space_reference}\n"
             "problems:\n  p1: {N: 24}\n  p2: {N: 7}\n"
             "parameters:\n%sconstraints:\n%s"
             "arguments:\n  - {name: N, scalar: int32, value: N}\n"
             "  - {name: out, buffer: float32, size: N, output: true}\n",
             params, constraints);
    *b = tf_bundle_create();
    tf_bundle_add(*b, "tests/unit/space/cursor.yaml", text, strlen(text));
    struct tf_error err = {0};
    struct tf_kernel *k = tf_kernel_load("tests/unit/space/cursor.yaml", *b, &err);
    if (k == NULL)
        fail_msg("%s:%d:%d: %s", err.file, err.line, err.column, err.message);
    return k;
}

/* Every valid index from `from` on, by a fresh cursor, into out; how many. */
static uint64_t cursor_list(const struct tf_kernel *k, struct tf_space *s, uint64_t from,
                            uint64_t *out)
{
    struct tf_error err = {0};
    struct tf_space_cursor *c = tf_space_cursor_create(s, from, NULL);
    uint64_t n = 0, idx;
    int rc;
    while ((rc = tf_space_cursor_next(c, UINT64_MAX, &idx, &err)) == 1) {
        /* the digits are the index's */
        int digits[k->nparams];
        tf_kernel_decode(k, idx, digits);
        assert_memory_equal(tf_space_cursor_digits(c), digits, sizeof digits);
        out[n++] = idx;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(tf_space_cursor_position(c), tf_space_cartesian(s));
    tf_space_cursor_destroy(c);
    return n;
}

/* Memo sizes under test: the default, none (a plain pruned walk), a few nodes. */
static const size_t memo_limits[] = {TF_SPACE_MEMO_BYTES, 0, 6000};

static void check_cursor_space(const struct tf_kernel *k, int problem, const struct tf_device *d)
{
    uint64_t cart = tf_kernel_cartesian(k);
    uint64_t *expect = calloc(cart + 1, sizeof *expect), *got = calloc(cart + 1, sizeof *got);
    uint64_t n = brute_count(k, problem, d, 0, cart, expect);
    for (size_t m = 0; m < sizeof memo_limits / sizeof memo_limits[0]; m++) {
        struct tf_error err = {0};
        struct tf_space *s = tf_space_create(k, problem, d, &err);
        assert_non_null(s);
        tf_space_set_memo_limit(s, memo_limits[m]);
        /* The same set in the same order as the brute-force filter. */
        assert_int_equal(cursor_list(k, s, 0, got), n);
        for (uint64_t i = 0; i < n; i++)
            assert_int_equal(got[i], expect[i]);
        uint64_t count;
        assert_int_equal(tf_space_count(s, 0, UINT64_MAX, &count, &err), 0);
        assert_int_equal(count, n);
        if (memo_limits[m] == 0)
            assert_int_equal(tf_space_memo_bytes(s), 0);
        else if (memo_limits[m] < TF_SPACE_MEMO_BYTES)
            assert_true(tf_space_memo_bytes(s) <= memo_limits[m]);
        /* Resume: stop after j configurations, keep only the position, and a
         * new cursor goes on with exactly the rest. */
        for (uint64_t j = 0; j <= n; j += n / 7 + 1) {
            struct tf_space_cursor *c = tf_space_cursor_create(s, 0, NULL);
            uint64_t idx;
            for (uint64_t i = 0; i < j; i++) {
                assert_int_equal(tf_space_cursor_next(c, UINT64_MAX, &idx, &err), 1);
                assert_int_equal(idx, expect[i]);
            }
            uint64_t saved = tf_space_cursor_position(c);
            tf_space_cursor_destroy(c);
            assert_int_equal(cursor_list(k, s, saved, got), n - j);
            for (uint64_t i = j; i < n; i++)
                assert_int_equal(got[i - j], expect[i]);
        }
        /* Seek anywhere; bounded calls stop at the bound and go on past it. */
        uint64_t seed = 99 + m;
        struct tf_space_cursor *c = tf_space_cursor_create(s, 0, NULL);
        for (int trial = 0; trial < 200; trial++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t from = (seed >> 33) % (cart + 1);
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t hi = from + (seed >> 33) % (cart / 4 + 2);
            tf_space_cursor_seek(c, from);
            uint64_t j = 0, idx;
            while (j < n && expect[j] < from)
                j++;
            for (;;) {
                int rc = tf_space_cursor_next(c, hi, &idx, &err);
                assert_true(rc >= 0);
                if (rc == 0)
                    break;
                assert_true(j < n && idx == expect[j] && idx < hi);
                j++;
            }
            assert_true(j == n || expect[j] >= hi);
            assert_true(tf_space_cursor_position(c) >= (hi < cart ? hi : cart) ||
                        tf_space_cursor_position(c) == cart);
            if (j < n) { /* past the bound: the next one */
                assert_int_equal(tf_space_cursor_next(c, UINT64_MAX, &idx, &err), 1);
                assert_int_equal(idx, expect[j]);
            } else {
                assert_int_equal(tf_space_cursor_next(c, UINT64_MAX, &idx, &err), 0);
            }
            /* tf_space_next agrees, streaming or not */
            uint64_t next;
            int found = tf_space_next(s, from, UINT64_MAX, &next, &err);
            uint64_t k0 = 0;
            while (k0 < n && expect[k0] < from)
                k0++;
            assert_int_equal(found, k0 < n);
            if (found)
                assert_int_equal(next, expect[k0]);
            /* and sub-range counts */
            uint64_t inside, lo = from < cart ? from : cart;
            assert_int_equal(tf_space_count(s, lo, hi, &inside, &err), 0);
            assert_int_equal(inside, brute_count(k, problem, d, lo, hi < cart ? hi : cart, NULL));
        }
        tf_space_cursor_destroy(c);
        /* unranking: rank r is the r-th valid index, none past the last */
        for (uint64_t r = 0; r < n; r++) {
            uint64_t at;
            assert_int_equal(tf_space_unrank(s, r, &at, &err), 1);
            assert_int_equal(at, expect[r]);
        }
        uint64_t past;
        assert_int_equal(tf_space_unrank(s, n, &past, &err), 0);
        /* tf_space_next over the whole space, as its callers loop */
        uint64_t idx = 0, i = 0;
        while (tf_space_next(s, idx, cart, &idx, &err) == 1) {
            assert_true(i < n);
            assert_int_equal(idx, expect[i]);
            i++;
            idx++;
        }
        assert_int_equal(i, n);
        tf_space_destroy(s);
    }
    free(expect);
    free(got);
}

static void test_cursor_matches_brute_force(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cursor_spaces / sizeof cursor_spaces[0]; i++) {
        struct tf_bundle *b;
        struct tf_kernel *k = kernel_text(cursor_spaces[i][0], cursor_spaces[i][1], &b);
        int64_t threads[] = {8, 1024};
        for (int p = 0; p < k->nproblems; p++)
            for (int t = 0; t < 2; t++) {
                struct tf_device d = fixture_device(threads[t]);
                check_cursor_space(k, p, &d);
            }
        tf_kernel_destroy(k);
        tf_bundle_destroy(b);
    }
    /* and the fixture of the tests above, on its three problems */
    struct tf_bundle *b;
    struct tf_kernel *k = load_fixture(&b);
    for (int p = 0; p < k->nproblems; p++) {
        struct tf_device d = fixture_device(8);
        check_cursor_space(k, p, &d);
    }
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* A space without the constraints use[] leaves out counts like a brute force
 * that checks only the others; evaluation levels are the last parameter read. */
static void test_constraint_subsets(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_kernel *k = kernel_text(cursor_spaces[0][0], cursor_spaces[0][1], &b);
    struct tf_device d = fixture_device(8);
    uint64_t cart = tf_kernel_cartesian(k);
    int nc = k->nconstraints;
    const int levels[] = {0, 1, 3, 3, 4, 5};
    assert_int_equal(nc, 6);
    for (unsigned mask = 0; mask < (1u << nc); mask += 5) {
        bool use[6];
        for (int c = 0; c < nc; c++)
            use[c] = mask >> c & 1;
        struct tf_error err = {0};
        struct tf_space *s = tf_space_create_subset(k, 0, &d, use, &err);
        assert_non_null(s);
        uint64_t expect = 0, got;
        struct tf_value slots[k->nslots];
        for (uint64_t i = 0; i < cart; i++) {
            tf_kernel_bind(k, i, 0, &d, slots);
            bool ok = true;
            for (int c = 0; c < nc && ok; c++)
                if (use[c])
                    assert_int_equal(tf_expr_eval_bool(k->constraints[c], slots, &ok, &err), 0);
            expect += ok;
        }
        assert_int_equal(tf_space_count(s, 0, UINT64_MAX, &got, &err), 0);
        assert_int_equal(got, expect);
        for (int c = 0; c < nc; c++)
            assert_int_equal(tf_space_constraint_level(s, c), use[c] ? levels[c] : -2);
        tf_space_destroy(s);
    }
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* Constraints that read no parameter are all checked: one that fails empties
 * the space even when a later one holds (the last does not decide alone). */
static void test_global_constraints_all_hold(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_kernel *k = kernel_text(cursor_spaces[3][0], "  - N > 100\n  - N > 0\n", &b);
    struct tf_device d = fixture_device(8);
    for (int p = 0; p < k->nproblems; p++) { /* N = 24 and N = 7: N > 100 fails */
        struct tf_error err = {0};
        struct tf_space *s = tf_space_create(k, p, &d, &err);
        assert_non_null(s);
        uint64_t count = 99, next;
        assert_int_equal(tf_space_count(s, 0, UINT64_MAX, &count, &err), 0);
        assert_int_equal(count, 0);
        assert_int_equal(tf_space_next(s, 0, UINT64_MAX, &next, &err), 0);
        bool valid = true;
        assert_int_equal(tf_space_is_valid(s, 0, &valid, &err), 0);
        assert_false(valid);
        tf_space_destroy(s);
    }
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* The edges of the calls a brute-force comparison never reaches: the index
 * just past the last configuration is no configuration (tf_space_is_valid
 * must not decode it into a digit past its parameter's list), and a random
 * search whose budget equals the valid count takes them all instead of
 * sampling budget of budget (which tf_space_sample refuses). */
static void test_space_edges(void **state)
{
    (void)state;
    struct tf_bundle *b;
    struct tf_kernel *k = kernel_text(cursor_spaces[3][0], cursor_spaces[3][1], &b);
    struct tf_device d = fixture_device(8);
    struct tf_error err = {0};
    struct tf_space *s = tf_space_create(k, 0, &d, &err);
    assert_non_null(s);
    const uint64_t cart = tf_space_cartesian(s); /* 3 * 2 * 4, all valid */
    assert_int_equal(cart, 24);
    bool valid = false;
    assert_int_equal(tf_space_is_valid(s, cart - 1, &valid, &err), 0);
    assert_true(valid);
    assert_int_equal(tf_space_is_valid(s, cart, &valid, &err), 0);
    assert_false(valid);

    uint64_t *out = NULL, n = 0, nvalid = 0;
    bool estimated = true;
    if (tf_space_random(s, cart, 7, &out, &n, &nvalid, &estimated, &err) != 0)
        fail_msg("budget = valid count: %s", err.message);
    assert_null(out); /* every valid configuration: the caller enumerates them */
    assert_int_equal(n, cart);
    assert_int_equal(nvalid, cart);
    assert_false(estimated);
    /* one less: a sample of distinct valid configurations */
    assert_int_equal(tf_space_random(s, cart - 1, 7, &out, &n, &nvalid, &estimated, &err), 0);
    assert_non_null(out);
    assert_int_equal(n, cart - 1);
    for (uint64_t i = 1; i < n; i++)
        assert_true(out[i - 1] < out[i]);
    free(out);
    tf_space_destroy(s);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_matches_brute_force),
        cmocka_unit_test(test_ranges_and_enumeration),
        cmocka_unit_test(test_globally_empty_space),
        cmocka_unit_test(test_slices_cover_every_valid_configuration_once),
        cmocka_unit_test(test_random_sample),
        cmocka_unit_test(test_random_sample_per_problem_default),
        cmocka_unit_test(test_random_sample_sparse),
        cmocka_unit_test(test_random_huge_space_without_count),
        cmocka_unit_test(test_count_polls_and_stops),
        cmocka_unit_test(test_constraint_error_location),
        cmocka_unit_test(test_compile_slices_run_ahead),
        cmocka_unit_test(test_resume_skips_measured),
        cmocka_unit_test(test_resume_two_phase),
        cmocka_unit_test(test_top_k_ties_by_configuration),
        cmocka_unit_test(test_cursor_matches_brute_force),
        cmocka_unit_test(test_constraint_subsets),
        cmocka_unit_test(test_global_constraints_all_hold),
        cmocka_unit_test(test_space_edges),
    };
    return cmocka_run_group_tests_name("space", tests, NULL, NULL);
}
