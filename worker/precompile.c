/* precompile.c - compiling ahead of measuring (`tunefarm compile`).
 *
 * For each architecture named, a nominal device of that architecture
 * (schema/device.c) stands in for the real one, so the constraints select the
 * same valid configurations and the random strategy draws the same sample a
 * run on that GPU model will: the same call the plan makes (tf_space_random,
 * seeded by the job, kernel and problem, never the device; a space above
 * TF_SPACE_EXACT_LIMIT sampled without a count). Brute force compiles every
 * valid configuration, or with a budget the first `budget` in index order,
 * as the plan hands them out. An adaptive strategy (genetic, local, bayes, hybrid)
 * decides what it measures from the results during the run, so nothing can
 * know it ahead: it gets the problem's default configuration and a seeded
 * random sample, `budget` configurations in all (TF_PRECOMPILE_ADAPTIVE_SAMPLE
 * without a budget), never the whole space, and the output says so; compile
 * ranks of the run compile the search's likely next proposals. A warm start
 * (search.warm_start) makes every strategy a search seeded with other
 * classes' best, read from archives when the run starts: without a budget the
 * run still measures every valid configuration (compiled here); with one,
 * brute force gets its first `budget` in index order (what the run measures
 * after its seeds) and random the adaptive draw, and the output says the
 * seeds are not among them. A variant's binary does not depend on the
 * problem unless the kernel compiles sizes in (`defines:`, one set per
 * problem then), so each kernel's configurations are
 * merged over its problems and compiled once, through the same compile pool
 * and content-hash cache a run uses: a later `tunefarm run` on a node that
 * shares the cache finds them and spends its device time measuring. Under
 * mpirun every rank takes every nranks-th variant; cache writes are atomic
 * renames, so ranks sharing a filesystem never see a partial binary. The
 * strategy's name and options are not checked here (that needs the
 * coordinator's registry; main.c checks them before calling tf_precompile). */
#include "precompile.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../schema/exchange.h"
#include "../schema/job.h"
#include "../schema/parammap.h"
#include "../schema/space.h"
#include "backend.h"
#include "compile.h"

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The first `limit` valid configurations of `s` in index order (all of them
 * for UINT64_MAX) into a new array *out of *n: walked, never counted, so a
 * budget on a huge space costs the budget, not the space. */
static int first_valid(struct tf_space *s, uint64_t limit, uint64_t **out, uint64_t *n,
                       struct tf_error *err)
{
    uint64_t cap = limit < 1024 ? (limit ? limit : 1) : 1024, count = 0, idx = 0;
    uint64_t *list = tf_xmalloc(sizeof *list * cap);
    while (count < limit) {
        int rc = tf_space_next(s, idx, UINT64_MAX, &idx, err);
        if (rc < 0) {
            free(list);
            return -1;
        }
        if (rc == 0)
            break;
        if (count == cap)
            list = tf_xrealloc(list, sizeof *list * (cap *= 2));
        list[count++] = idx++;
    }
    *out = list;
    *n = count;
    return 0;
}

uint64_t tf_precompile_sample_size(const struct tf_job *job)
{
    switch (job->strategy) {
    case TF_STRATEGY_BRUTE_FORCE: return job->budget; /* 0: every valid one */
    case TF_STRATEGY_RANDOM: return job->budget;
    case TF_STRATEGY_ADAPTIVE: break;
    }
    return job->budget ? job->budget : TF_PRECOMPILE_ADAPTIVE_SAMPLE;
}

/* The configurations of `jk` to compile for a run of `job` on `dev`, over all
 * of the job's problems of `jk`, ascending and distinct, into a new array.
 * Each problem's are chosen as the plan chooses them (coordinator/plan.c,
 * tf_plan_create) where the plan knows them up front: a random search through
 * tf_space_random with the job's budget and seed (a space above
 * TF_SPACE_EXACT_LIMIT sampled by rejection without a count, a smaller one
 * counted and sampled; every valid configuration when the budget holds them
 * all), brute force the first `budget` valid configurations in index order
 * (every one without a budget). Anything else would compile one set and
 * measure another. An adaptive search is not known up front: the same
 * tf_space_random draw (the default first, then a seeded sample) of
 * tf_precompile_sample_size configurations, a start the search is likely to
 * share (every strategy begins with random configurations) at the cost of
 * its budget, never a walk of the whole space. */
int tf_precompile_variants(const struct tf_job *job, const struct tf_job_kernel *jk,
                           const struct tf_device *dev, uint64_t **out, uint64_t *n,
                           struct tf_error *err)
{
    uint64_t *all = NULL, count = 0, cap = 0;
    const uint64_t sample = tf_precompile_sample_size(job);
    *out = NULL;
    *n = 0;
    for (int p = 0; p < jk->nproblems; p++) {
        struct tf_space *s = tf_space_create(jk->kernel, jk->problems[p], dev, err);
        uint64_t valid = 0, *list = NULL, nlist = 0;
        bool estimated = false;
        if (s == NULL)
            goto fail_space;
        if (job->strategy == TF_STRATEGY_BRUTE_FORCE) {
            if (first_valid(s, sample ? sample : UINT64_MAX, &list, &nlist, err))
                goto fail_space;
        } else {
            if (tf_space_random(s, sample, job->seed, &list, &nlist, &valid, &estimated, err))
                goto fail_space;
            /* NULL: the sample holds every valid configuration. */
            if (list == NULL && first_valid(s, UINT64_MAX, &list, &nlist, err))
                goto fail_space;
        }
        if (count + nlist > cap) {
            cap = 2 * (count + nlist);
            all = tf_xrealloc(all, sizeof *all * cap);
        }
        memcpy(all + count, list, sizeof *list * nlist);
        count += nlist;
        free(list);
        tf_space_destroy(s);
        continue;
    fail_space:
        tf_space_destroy(s);
        free(all);
        return -1;
    }
    qsort(all, count, sizeof *all, tf_config_cmp);
    uint64_t unique = 0;
    for (uint64_t i = 0; i < count; i++)
        if (unique == 0 || all[unique - 1] != all[i])
            all[unique++] = all[i];
    *out = all;
    *n = unique;
    return 0;
}

/* What precompile_arch counts over its kernels. */
struct tally {
    uint64_t total, mine, failed, ok, kernels;
    char first_error[TF_MESSAGE_LEN];
};

/* Compile this rank's share of the variants of `jk` (its problems' valid
 * configurations, merged) through `pool`, adding to `t`; an exit code. The
 * binaries are those of jk's first problem: the same for all of them unless
 * the kernel has `defines:`, and then `jk` holds one problem. */
static int precompile_unit(const struct tf_precompile_options *o, const struct tf_job *job,
                           const struct tf_job_kernel *jk, const struct tf_device *dev,
                           struct tf_compile_pool *pool, int procs, const char *arch,
                           struct tally *t)
{
    struct tf_error err = {0};
    const int problem = jk->nproblems > 0 ? jk->problems[0] : 0;
    uint64_t *variants, n;
    if (tf_precompile_variants(job, jk, dev, &variants, &n, &err)) {
        tf_error_print(&err, "tunefarm compile", stderr);
        return 2;
    }
    t->total += n;
    /* This rank's share, submitted through a window of a few per process:
     * the pool's queue (and memory) stays small however large the space. */
    uint64_t nt = 0;
    for (uint64_t v = (uint64_t)o->rank; v < n; v += (uint64_t)o->nranks)
        nt++;
    const uint64_t window = 4 * (uint64_t)procs;
    uint64_t *tickets = tf_xmalloc(sizeof *tickets * window), submitted = 0;
    double last = mono_now();
    for (uint64_t i = 0; i < nt; i++) {
        while (submitted < nt && submitted < i + window) {
            uint64_t v = (uint64_t)o->rank + submitted * (uint64_t)o->nranks;
            tickets[submitted % window] =
                tf_compile_submit_for(pool, jk->kernel, problem, variants[v]);
            submitted++;
        }
        struct tf_compiled c;
        tf_compile_wait(pool, tickets[i % window], &c);
        if (c.status == TF_STATUS_OK) {
            t->ok++;
        } else {
            t->failed++;
            if (t->first_error[0] == '\0')
                snprintf(t->first_error, sizeof t->first_error, "%s", c.message);
        }
        if (!o->quiet && mono_now() - last >= 5.0) {
            last = mono_now();
            fprintf(stderr, "tunefarm compile: %s %s: %llu/%llu\n", arch, jk->kernel->name,
                    (unsigned long long)(i + 1), (unsigned long long)nt);
        }
    }
    t->mine += nt;
    free(tickets);
    free(variants);
    return 0;
}

/* One architecture: returns an exit code as tf_precompile. */
static int precompile_arch(const struct tf_precompile_options *o, const struct tf_job *job,
                           const char *arch)
{
    struct tf_device dev;
    struct tf_error err = {0};
    if (strcmp(arch, "host") == 0) {
        /* This machine's CPU, as its host worker describes it: the same
         * architecture (hence cache keys) and properties a run here uses. */
        if (tf_backend_host.describe(0, &dev, &err) != 0) {
            tf_error_print(&err, "tunefarm compile", stderr);
            return 1;
        }
    } else if (tf_device_for_arch(arch, &dev)) {
        fprintf(stderr, "tunefarm compile: unknown architecture '%s' (known: %s, host)\n", arch,
                tf_device_known_archs());
        return 2;
    }
    const struct tf_backend *be = tf_backend_find(dev.backend);
    if (be == NULL) {
        fprintf(stderr, "tunefarm compile: the %s backend is not in this build yet: cannot "
                        "compile for %s\n", dev.backend, arch);
        return 2;
    }
    /* Nothing of the job runs on this architecture (host kernels and --arch
     * sm_90, say): said, or "0 variants" would read as "all cached". Not an
     * error: one --arch list may serve jobs of several kinds. */
    int runnable = 0;
    for (int i = 0; i < job->nkernels; i++)
        runnable += tf_device_runs(&dev, job->kernels[i].kernel->language);
    if (runnable == 0) {
        fprintf(stderr, "tunefarm compile: warning: no kernel of %s runs on %s (its kernels' "
                        "languages are for other devices): nothing compiled for it\n",
                o->job_path, arch);
        return 0;
    }
    /* By default the node's cores, shared among the node's ranks. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int node_ranks = o->node_ranks > 0 ? o->node_ranks : 1;
    int procs = o->processes > 0 ? o->processes : (int)(cores > 0 ? cores : 1) / node_ranks;
    if (procs < 1)
        procs = 1;
    struct tf_compile_pool *pool =
        tf_compile_pool_create(o->exe, be, dev.arch, job->cache, procs, &err);
    if (pool == NULL) {
        tf_error_print(&err, "tunefarm compile", stderr);
        return 1;
    }
    const double start = mono_now();
    struct tally t = {0};
    int code = 0;
    for (int i = 0; i < job->nkernels && code == 0; i++) {
        const struct tf_job_kernel *all = &job->kernels[i];
        if (!tf_device_runs(&dev, all->kernel->language))
            continue;
        t.kernels++;
        /* A kernel that compiles sizes in (`defines:`) has binaries per
         * problem: one unit per problem. Otherwise one for all its problems. */
        if (all->kernel->ndefine_sizes == 0) {
            code = precompile_unit(o, job, all, &dev, pool, procs, arch, &t);
            continue;
        }
        for (int p = 0; p < all->nproblems && code == 0; p++) {
            const struct tf_job_kernel one = {all->kernel, 1, &all->problems[p]};
            code = precompile_unit(o, job, &one, &dev, pool, procs, arch, &t);
        }
    }
    struct tf_compile_stats st;
    tf_compile_get_stats(pool, &st);
    tf_compile_pool_destroy(pool);
    if (code != 0)
        return code;
    const double wall = mono_now() - start;
    printf("tunefarm compile: %s: %llu variants of %llu kernel(s)", arch,
           (unsigned long long)t.total, (unsigned long long)t.kernels);
    if (o->nranks > 1)
        printf(", %llu of them on rank %d of %d", (unsigned long long)t.mine, o->rank,
               o->nranks);
    printf(": %llu compiled now, %llu from the cache, %llu do not compile; %.1f s with %d "
           "compiler processes (%.1f variants/s)\n",
           (unsigned long long)st.compiled,
           (unsigned long long)st.cached, (unsigned long long)t.failed, wall, procs,
           wall > 0 ? (double)t.mine / wall : 0.0);
    if (t.mine > 0 && t.ok == 0) {
        /* The compiler's line quotes the kernel's source (an `#error`'s text):
         * its escape bytes must not reach the terminal as commands. */
        char shown[sizeof t.first_error];
        tf_exchange_terminal(t.first_error, shown, sizeof shown);
        fprintf(stderr, "tunefarm compile: no variant compiled for %s: %s\n", arch, shown);
        return 1;
    }
    return 0;
}

int tf_precompile(const struct tf_precompile_options *o)
{
    struct tf_error err = {0};
    struct tf_bundle *bundle = tf_bundle_create();
    struct tf_job *job = tf_job_load(o->job_path, bundle, &err);
    int code = 0;
    /* The compilers' settings from the environment are input too: a bad
     * one is exit 2 with the job's errors, as `run` refuses it (review D),
     * not 1 ("the compiler is unusable here") from the first pool. */
    uint64_t memory_mib;
    bool memory_set;
    double timeout;
    if (job == NULL || tf_job_compile_memory(&memory_mib, &memory_set, &err) != 0 ||
        tf_job_compile_timeout(&timeout, &err) != 0) {
        tf_error_print(&err, "tunefarm compile", stderr);
        tf_job_destroy(job);
        tf_bundle_destroy(bundle);
        return 2;
    }
    /* An adaptive search chooses during the run: say what was compiled
     * instead, once (rank 0), so nobody expects a cache-only run. */
    if (job->strategy == TF_STRATEGY_ADAPTIVE && o->rank == 0)
        printf("tunefarm compile: strategy %s is adaptive: it decides what to measure from "
               "the results during the run, so this compiles the default configuration and a "
               "seeded random sample, %llu configurations per kernel and problem (%s); the "
               "run compiles the rest as the search proposes them\n",
               job->strategy_name, (unsigned long long)tf_precompile_sample_size(job),
               job->budget ? "the job's budget" : "no budget: a fixed sample");
    /* A warm start proposes other device classes' best first, read from
     * archives when the run starts: with a budget those seeds displace part
     * of what is compiled here (without one, every valid configuration is
     * measured, and compiled). Say so rather than let a cache look complete. */
    if (job->nwarm > 0 && job->budget > 0 && o->rank == 0)
        printf("tunefarm compile: search.warm_start: the run first proposes the best "
               "configurations of other device classes (up to %u per class, read from the "
               "warm_start archives when it starts), then %s; this compiles %s, not those "
               "seeds: the run compiles what it lacks as it goes\n",
               job->warm_count,
               job->strategy == TF_STRATEGY_BRUTE_FORCE ? "valid ones in index order"
                                                        : "what its search proposes",
               job->strategy == TF_STRATEGY_BRUTE_FORCE
                   ? "the first `budget` valid configurations in index order"
                   : "the default configuration and a seeded random sample of `budget`");
    char *archs = tf_xstrdup(o->archs), *save = NULL;
    for (char *a = strtok_r(archs, ",", &save); a != NULL && code == 0;
         a = strtok_r(NULL, ",", &save))
        code = precompile_arch(o, job, a);
    free(archs);
    tf_job_destroy(job);
    tf_bundle_destroy(bundle);
    return code;
}
