/* plan.c - planning: tasks, exact counts, random samples and slices.
 *
 * Brute force hands out index ranges: a slice of S configurations is the range
 * from the cursor to just past the S-th valid index, found by walking the
 * space (which prunes invalid subtrees), so the coordinator knows exactly how
 * many results each slice owes. The random strategy draws `budget` distinct
 * valid configurations per (kernel, problem) (tf_space_sample: seeded by the
 * job's seed and the kernel and problem names, not the device class, so every
 * GPU model measures the same sample where it can; the default always in).
 * A space larger than TF_SPACE_EXACT_LIMIT is sampled by rejection without
 * an exact count (its number of valid configurations is then an estimate).
 * Counting and sampling poll the hook main.c sets (progress, signals).
 * A brute-force budget takes the first valid configurations in index order.
 * An adaptive strategy (genetic, local, bayes, hybrid: coordinator/strategy.h) has one
 * instance per task: a slice is a batch of its proposals (valid and new, the
 * wrapper guarantees it), each result is told to it as recorded (failures as
 * bad), and a compile slice is its likely_next hint (one per state of the
 * search: results told, proposals made). Every task ends for a reason
 * (tf_plan_stop): budget, the job's time budget, patience (the strategy's own,
 * or for brute force and random the same rule kept here), or exhaustion; a
 * task that ends early shrinks its total, and a screening pass then queues its
 * top k from what it measured.
 * A resumed run leaves out what its earlier part measured: brute-force slices
 * then become explicit lists that skip those configurations, a sampled list is
 * reordered so that its finished configurations come first, and an adaptive
 * search is told those results in the order they were recorded before it is
 * asked again (so it continues from the same state as if it had never stopped,
 * up to the work that was in flight).
 * An adaptive search proposes the kernel's default configuration first (valid
 * here), as a random sample holds it.
 * Warm start (job search.warm_start, tf_plan_warm_start): every task then has
 * a search (brute force and random too), seeded with the best configurations
 * of other device classes read from archives, mapped by parameter name and
 * value, valid here; they are proposed first (after the default) and never told.
 * Every search is also given up to PRIOR_PER results of each source class
 * (tf_strategy_prior: its fastest and a spread over the rest); a strategy
 * with a model (bayes, hybrid) learns how far they speak for this device,
 * the others ignore them. */
#include "plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../schema/parammap.h"

/* Results of each warm-start source class a model learns from
 * (tf_strategy_prior_ranks): its PRIOR_TOP fastest, the rest spread over its
 * ranking. Few of the fastest: the seeds already bring the source's best
 * here, and a model shown the top of each source steers a device unlike the
 * fleet into the fleet's region (bench/results/transfer-2026-12-06.md: A100
 * at 2% read 0.75 with 8 of 24, 0.80 with 2, 0.81 with the seeds alone).
 * Fixed, not a job setting: the strategy's `transfer` option caps how many
 * it uses. */
#define PRIOR_PER 24
#define PRIOR_TOP 2

/* The most configurations one ask proposes (tf_strategy_ask counts in int). */
#define ASK_MAX (1 << 20)

const char *tf_plan_stop_name(enum tf_plan_stop s)
{
    switch (s) {
    case TF_PLAN_RUNNING: return "running";
    case TF_PLAN_BUDGET: return "budget";
    case TF_PLAN_TIME_BUDGET: return "time_budget";
    case TF_PLAN_PATIENCE: return "patience";
    case TF_PLAN_EXHAUSTED: return "exhausted";
    }
    return "unknown";
}


/* FNV-1a, to derive a task's seed from names (not indices: the same kernel
 * and problem get the same search in any job that names them). */
static uint64_t name_hash(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return (h ^ '/') * 0x100000001b3ull;
}

/* The adaptive search of task `t`: its space counted (up to
 * TF_SPACE_EXACT_LIMIT, or at any size without a budget to end the search),
 * its total the budget or the valid count, one strategy instance. */
static int create_search(const struct tf_job *job, const struct tf_job_kernel *jk,
                         struct tf_task *t, struct tf_error *err)
{
    if (tf_space_cartesian(t->space) <= TF_SPACE_EXACT_LIMIT || job->budget == 0) {
        if (tf_space_count(t->space, 0, UINT64_MAX, &t->valid, err))
            return -1;
        t->total = job->budget && job->budget < t->valid ? job->budget : t->valid;
    } else {
        t->valid = 0; /* not counted: the budget ends the search (or exhaustion, found) */
        t->valid_estimated = true;
        t->total = job->budget;
        /* Unless valid configurations are so rare that 2^16 draws find none:
         * a search would then walk the whole product for each proposal
         * (hours, deaf to signals), so the space is counted after all, with
         * progress and stoppable, as a random search's is. None valid: the
         * search is exhausted before it starts. */
        struct tf_rng probe = {job->seed ^ 0x9e3779b97f4a7c15ULL ^ (uint64_t)t->problem};
        bool found = false, valid = false;
        for (int i = 0; i < (1 << 16) && !found; i++) {
            if (tf_space_is_valid(t->space, tf_rng_below(&probe, tf_space_cartesian(t->space)),
                                  &valid, err))
                return -1;
            found = valid;
        }
        if (!found) {
            if (tf_space_count(t->space, 0, UINT64_MAX, &t->valid, err))
                return -1;
            t->valid_estimated = false;
            t->total = job->budget < t->valid ? job->budget : t->valid;
        }
    }
    if (t->total == 0)
        return 0;
    const struct tf_kernel *k = jk->kernel;
    t->sview = tf_strategy_space_kernel(t->space, k, t->valid_estimated ? 0 : t->valid);
    if (t->sview == NULL)
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "kernel %s has %d parameters: strategy %s searches spaces of 1 to "
                            "%d parameters; use brute_force or random",
                            k->name, k->nparams, job->strategy_name, TF_STRATEGY_MAX_PARAMS);
    /* The options' texts belong to the job, which outlives the plan. */
    struct tf_strategy_option opts[64];
    int nopts = 0;
    for (int i = 0; i < job->noptions && nopts < 64; i++)
        opts[nopts++] = (struct tf_strategy_option){job->options[i].name, job->options[i].value};
    const struct tf_search_limits limits = {
        .budget = t->total, .patience = job->patience, .noise = job->noise};
    uint64_t seed = name_hash(name_hash(0xcbf29ce484222325ull ^ job->seed, k->name),
                              k->problems[t->problem].name);
    struct tf_error e;
    t->strat = tf_strategy_create(job->strategy_name, t->sview, opts, nopts, seed, &limits, &e);
    if (t->strat == NULL)
        return tf_error_set(err, e.code, "search of %s/%s: %s", k->name,
                            k->problems[t->problem].name, e.message);
    /* The kernel's default configuration is proposed first (if valid here), as
     * the random sample always holds it: the summary's speedup over the
     * untuned code needs it measured, and it is usually a sane start. */
    uint64_t def;
    size_t kept;
    if (tf_kernel_default_for(k, t->problem, &def) &&
        tf_strategy_seed(t->strat, &def, 1, &kept, err))
        return -1;
    return 0;
}

static void maybe_top_k(struct tf_plan *plan, struct tf_task *t);

struct tf_plan *tf_plan_create(const struct tf_job *job, int nclasses,
                               const struct tf_device *devices, struct tf_error *err)
{
    /* The loader keeps the search section raw (schema/ does not know the
     * strategies): a plan is only made of a checked one. The coordinator has
     * checked it already, right after loading; other callers get the same
     * positioned error here. */
    if (tf_strategy_check_job(job, err))
        return NULL;
    struct tf_plan *plan = tf_xcalloc(1, sizeof *plan);
    plan->top_k = job->top_k;
    plan->time_shared = job->time_budget > 0;
    plan->patience = job->patience;
    plan->noise = job->noise;
    int n = 0;
    for (int i = 0; i < job->nkernels; i++)
        n += job->kernels[i].nproblems;
    plan->tasks = tf_xcalloc((size_t)(n * nclasses) + 1, sizeof *plan->tasks);
    plan->order = tf_xcalloc((size_t)(n * nclasses) + 1, sizeof *plan->order);
    plan->nclasses = nclasses;
    plan->class_keys = tf_xcalloc((size_t)nclasses + 1, sizeof *plan->class_keys);
    for (int c = 0; c < nclasses; c++)
        tf_device_class_key(&devices[c], plan->class_keys[c], sizeof plan->class_keys[c]);
    for (int c = 0; c < nclasses; c++) {
        for (int i = 0; i < job->nkernels; i++) {
            const struct tf_job_kernel *jk = &job->kernels[i];
            /* A C kernel runs on host workers, a CUDA/HIP kernel on GPU workers. */
            if (!tf_device_runs(&devices[c], jk->kernel->language))
                continue;
            for (int j = 0; j < jk->nproblems; j++) {
                struct tf_task *t = &plan->tasks[plan->ntasks++];
                t->kernel = i;
                t->problem = jk->problems[j];
                t->klass = c;
                t->space = tf_space_create(jk->kernel, t->problem, &devices[c], err);
                if (t->space == NULL)
                    goto fail;
                t->best_time = NAN;
                t->patience_ref = NAN;
                t->hint_mark = UINT64_MAX;
                t->phase = job->top_k > 0 ? 1 : 0;
                /* A random search of a huge space samples it without counting
                 * it (tf_space_random); brute force needs the exact count. */
                /* A warm start needs a search to seed: every strategy takes
                 * the adaptive path then (brute_force and random are tables too). */
                if (job->strategy == TF_STRATEGY_RANDOM && job->nwarm == 0) {
                    if (tf_space_random(t->space, job->budget, job->seed, &t->list, &t->nlist,
                                        &t->valid, &t->valid_estimated, err)) {
                        /* A budget it cannot draw: refused at the budget's place. */
                        if (err->code == TF_ERR_SCHEMA && err->line == 0 && job->budget_line) {
                            char msg[sizeof err->message];
                            tf_strlcpy(msg, err->message, sizeof msg);
                            tf_error_at(err, TF_ERR_SCHEMA, job->file, job->budget_line,
                                        job->budget_col, "%s", msg);
                        }
                        goto fail;
                    }
                    t->total = t->list != NULL ? t->nlist : t->valid;
                } else if (job->strategy == TF_STRATEGY_ADAPTIVE || job->nwarm > 0) {
                    if (create_search(job, jk, t, err))
                        goto fail;
                } else {
                    if (tf_space_count(t->space, 0, UINT64_MAX, &t->valid, err))
                        goto fail;
                    t->total = job->budget && job->budget < t->valid ? job->budget : t->valid;
                }
                if (t->total == 0) {
                    t->stop = TF_PLAN_EXHAUSTED; /* nothing valid: nothing to search */
                    /* No result will ever come to move a screening pass on to
                     * its (empty) top k: end it here, or the task is never
                     * complete and the run reads as interrupted (exit 75). */
                    maybe_top_k(plan, t);
                }
                plan->total += tf_plan_task_planned(plan, t);
            }
        }
    }
    return plan;
fail:
    tf_plan_destroy(plan);
    return NULL;
}

void tf_plan_destroy(struct tf_plan *plan)
{
    if (plan == NULL)
        return;
    for (int i = 0; i < plan->ntasks; i++) {
        tf_strategy_destroy(plan->tasks[i].strat);
        tf_strategy_space_free(plan->tasks[i].sview);
        tf_space_destroy(plan->tasks[i].space);
        free(plan->tasks[i].list);
        free(plan->tasks[i].skip);
        free(plan->tasks[i].screened);
        free(plan->tasks[i].shared);
    }
    free(plan->order);
    free(plan->tasks);
    free(plan->class_keys);
    free(plan);
}

/* ---- warm start ------------------------------------------------------------ */

/* A configuration and its position (where it was recorded, or ranked): sorted
 * by configuration, first position first, to keep each one's first; then
 * back by position. */
struct at {
    uint64_t config;
    uint64_t pos;
};

static int cmp_at_config(const void *a, const void *b)
{
    const struct at *x = a, *y = b;
    if (x->config != y->config)
        return x->config < y->config ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_at_pos(const void *a, const void *b)
{
    const struct at *x = a, *y = b;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

struct ranked {
    uint64_t config;
    double time;
};

static int cmp_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->config < y->config ? -1 : x->config > y->config;
}

static int cmp_key(const void *a, const void *b) { return strcmp(a, b); }

/* How an archive kernel's configurations map onto kernel `k`'s space, by
 * parameter name and value (schema/parammap.h: an archive parameter k lacks
 * is ignored, a value k lacks maps nowhere); NULL when a parameter of k is
 * missing from the archive or a name is there twice (nothing maps). */
static struct tf_parammap *archive_map(const struct tf_archive_kernel *ak,
                                       const struct tf_kernel *k)
{
    struct tf_parammap_space *from = tf_parammap_space_params(ak->params, ak->nparams, "archive");
    struct tf_parammap_space *to = tf_parammap_space_params(k->params, k->nparams, "kernel");
    struct tf_error ignored;
    struct tf_parammap *m = tf_parammap_create(from, to, false, &ignored);
    tf_parammap_space_destroy(from);
    tf_parammap_space_destroy(to);
    return m;
}

/* One source class's results for a transfer: mapped configurations and
 * their times there. */
struct prior_list {
    uint64_t *cfg;
    double *time;
    size_t n;
};

/* One source class's seeds for task `t` (its `count` fastest valid here,
 * into *list, *n of them) and its transfer results (*pl: at most PRIOR_PER
 * of its distinct mapped configurations, valid here or not). *list,
 * pl->cfg and pl->time are new arrays the caller frees, on error too. */
static int class_seeds(const struct tf_task *t, const struct tf_archive_kernel *ak,
                       uint32_t problem, const char *key, char (*keys)[256], uint32_t count,
                       const struct tf_parammap *m, int64_t exclude_run, uint64_t **list,
                       uint64_t *n, struct prior_list *pl, struct tf_error *err)
{
    struct ranked *r = tf_xmalloc(sizeof *r * (ak->nrows ? ak->nrows : 1));
    uint64_t nr = 0;
    for (uint64_t i = 0; i < ak->nrows; i++) {
        const struct tf_archive_row *row = &ak->rows[i];
        if (row->r.problem != problem || !tf_strategy_time_ok(row->r.status, row->r.time_median) ||
            (int64_t)row->run == exclude_run || strcmp(keys[row->device], key) != 0)
            continue;
        r[nr++] = (struct ranked){row->r.config, row->r.time_median};
    }
    qsort(r, nr, sizeof *r, cmp_ranked);
    /* Mapped here, in rank order; a configuration measured twice (phases,
     * runs) counts at its best (its first rank), and two that map to one
     * here once: sorted by configuration to keep each one's first, then
     * back in rank order (count may be 100000: no pairwise search). */
    struct at *mapped = tf_xmalloc(sizeof *mapped * (nr ? nr : 1));
    uint64_t nm = 0, distinct = 0;
    for (uint64_t i = 0; i < nr; i++) {
        uint64_t y;
        if (tf_parammap_apply(m, r[i].config, &y) && y < tf_space_cartesian(t->space))
            mapped[nm++] = (struct at){y, i};
    }
    qsort(mapped, nm, sizeof *mapped, cmp_at_config);
    for (uint64_t i = 0; i < nm; i++)
        if (distinct == 0 || mapped[distinct - 1].config != mapped[i].config)
            mapped[distinct++] = mapped[i];
    qsort(mapped, distinct, sizeof *mapped, cmp_at_pos);
    size_t pick[PRIOR_PER];
    pl->n = tf_strategy_prior_ranks((size_t)distinct, PRIOR_PER, PRIOR_TOP, pick);
    pl->cfg = tf_xmalloc(sizeof *pl->cfg * (pl->n ? pl->n : 1));
    pl->time = tf_xmalloc(sizeof *pl->time * (pl->n ? pl->n : 1));
    for (size_t i = 0; i < pl->n; i++) {
        pl->cfg[i] = mapped[pick[i]].config;
        pl->time[i] = r[mapped[pick[i]].pos].time;
    }
    free(r);
    *list = tf_xmalloc(sizeof **list * (count ? count : 1));
    *n = 0;
    for (uint64_t i = 0; i < distinct && *n < count; i++) {
        bool valid = false;
        if (tf_space_is_valid(t->space, mapped[i].config, &valid, err)) {
            free(mapped);
            return -1;
        }
        if (valid)
            (*list)[(*n)++] = mapped[i].config;
    }
    free(mapped);
    return 0;
}

int tf_plan_warm_start(struct tf_plan *plan, const struct tf_job *job,
                       const struct tf_archive *same_archive, int64_t exclude_run,
                       const char *own_path, struct tf_error *err)
{
    if (job->nwarm == 0)
        return 0;
    int rc = -1;
    const struct tf_archive **src = tf_xcalloc((size_t)job->nwarm, sizeof *src);
    struct tf_archive **owned = tf_xcalloc((size_t)job->nwarm, sizeof *owned);
    bool *same = tf_xcalloc((size_t)job->nwarm, sizeof *same);
    struct stat own, *at = tf_xcalloc((size_t)job->nwarm, sizeof *at);
    bool *found = tf_xcalloc((size_t)job->nwarm, sizeof *found);
    const bool have_own = own_path != NULL && stat(own_path, &own) == 0;
    for (int w = 0; w < job->nwarm; w++) {
        /* The run's own archive named by its path is `same`: read as another
         * archive, a resumed run would learn from its own results as if
         * another device had measured them. */
        found[w] = !job->warm[w].same && stat(job->warm[w].path, &at[w]) == 0;
        same[w] = job->warm[w].same || (have_own && found[w] && at[w].st_dev == own.st_dev &&
                                        at[w].st_ino == own.st_ino);
        /* One archive named twice (the loader refuses the same text twice;
         * these are two names of one file) would seed each class twice. */
        for (int v = 0; v < w; v++) {
            const bool twice = (same[v] && same[w]) ||
                               (found[v] && found[w] && at[v].st_dev == at[w].st_dev &&
                                at[v].st_ino == at[w].st_ino);
            if (!twice)
                continue;
            tf_error_at(err, TF_ERR_SCHEMA, job->file, job->warm[w].line, job->warm[w].col,
                        "'warm_start' names one archive twice: entries %d ('%s') and %d "
                        "('%s') are both %s; remove one of them",
                        v + 1, job->warm[v].same ? "same" : job->warm[v].path, w + 1,
                        job->warm[w].same ? "same" : job->warm[w].path,
                        same[w] ? "this run's own archive" : "the same file");
            goto out;
        }
        if (same[w]) {
            src[w] = same_archive;
            continue;
        }
        struct tf_error e;
        owned[w] = tf_archive_read(job->warm[w].path, &e);
        if (owned[w] == NULL) {
            tf_error_at(err, e.code, job->file, job->warm[w].line, job->warm[w].col,
                        "warm_start archive '%s' cannot be read: %s (paths are relative to the "
                        "job file's folder; give an existing tunefarm archive, or remove it)",
                        job->warm[w].path, e.message);
            goto out;
        }
        src[w] = owned[w];
    }
    for (int i = 0; i < plan->ntasks; i++) {
        struct tf_task *t = &plan->tasks[i];
        if (t->strat == NULL)
            continue;
        const struct tf_kernel *k = job->kernels[t->kernel].kernel;
        const char *pname = k->problems[t->problem].name;
        uint64_t **lists = NULL, *lens = NULL;
        char (*list_keys)[256] = NULL; /* each list's device class */
        struct prior_list *priors = NULL;
        int nl = 0;
        bool bad = false;
        for (int w = 0; w < job->nwarm && !bad; w++) {
            const struct tf_archive *a = src[w];
            const struct tf_archive_kernel *ak = a ? tf_archive_find_kernel(a, k->name) : NULL;
            int problem = -1;
            for (int p = 0; ak && p < ak->nproblems && problem < 0; p++)
                if (strcmp(ak->problems[p].name, pname) == 0)
                    problem = p;
            struct tf_parammap *m = problem >= 0 ? archive_map(ak, k) : NULL;
            if (m == NULL)
                continue; /* no such kernel, problem or parameters there: nothing to take */
            /* Its device classes, in key order (deterministic whatever the
             * device table's order), the task's own left out for `same`. */
            char (*keys)[256] = tf_xcalloc((size_t)a->ndevices + 1, sizeof *keys);
            char (*classes)[256] = tf_xcalloc((size_t)a->ndevices + 1, sizeof *classes);
            int nc = 0;
            for (int d = 0; d < a->ndevices; d++)
                tf_device_class_key(&a->devices[d], keys[d], sizeof keys[d]);
            for (int d = 0; d < a->ndevices; d++) {
                bool seen = same[w] && strcmp(keys[d], plan->class_keys[t->klass]) == 0;
                for (int c = 0; c < nc && !seen; c++)
                    seen = strcmp(classes[c], keys[d]) == 0;
                if (!seen)
                    tf_strlcpy(classes[nc++], keys[d], sizeof classes[0]);
            }
            qsort(classes, (size_t)nc, sizeof *classes, cmp_key);
            for (int c = 0; c < nc && !bad; c++) {
                lists = tf_xrealloc(lists, sizeof *lists * (size_t)(nl + 1));
                lens = tf_xrealloc(lens, sizeof *lens * (size_t)(nl + 1));
                priors = tf_xrealloc(priors, sizeof *priors * (size_t)(nl + 1));
                list_keys = tf_xrealloc(list_keys, sizeof *list_keys * (size_t)(nl + 1));
                tf_strlcpy(list_keys[nl], classes[c], sizeof list_keys[nl]);
                priors[nl] = (struct prior_list){0};
                lists[nl] = NULL;
                if (class_seeds(t, ak, (uint32_t)problem, classes[c], keys, job->warm_count,
                                m, same[w] ? exclude_run : -1, &lists[nl],
                                &lens[nl], &priors[nl], err))
                    bad = true;
                nl++;
            }
            free(keys);
            free(classes);
            tf_parammap_destroy(m);
        }
        /* Interleaved by rank: every source class's best first. */
        uint64_t total = 0;
        int nsources = 0; /* device classes, one class from two archives counted once */
        for (int l = 0; l < nl; l++) {
            total += lens[l];
            bool counted = lens[l] == 0;
            for (int e = 0; e < l && !counted; e++)
                counted = lens[e] > 0 && strcmp(list_keys[e], list_keys[l]) == 0;
            nsources += !counted;
        }
        /* The default configuration first (create_search seeded it alone;
         * seeding again replaces that list), then the warm seeds: a budget
         * that the seeds fill still measures it, for the summary's speedup
         * over the untuned code. Not counted as a warm seed. */
        uint64_t *seeds = tf_xmalloc(sizeof *seeds * (total + 1)), ns = 0;
        if (tf_kernel_default_for(k, t->problem, &seeds[0]))
            ns++;
        const uint64_t first_warm = ns;
        for (uint64_t rank = 0; ns < first_warm + total; rank++)
            for (int l = 0; l < nl; l++)
                if (rank < lens[l])
                    seeds[ns++] = lists[l][rank];
        /* The transfer results, interleaved by rank like the seeds (a
         * strategy that uses fewer keeps every source's fastest), each
         * source class by its place in the list. */
        size_t np_all = 0, np = 0;
        for (int l = 0; l < nl; l++)
            np_all += priors[l].n;
        uint64_t *pcfg = tf_xmalloc(sizeof *pcfg * (np_all + 1));
        double *ptime = tf_xmalloc(sizeof *ptime * (np_all + 1));
        int *psrc = tf_xmalloc(sizeof *psrc * (np_all + 1));
        for (size_t rank = 0; np < np_all; rank++)
            for (int l = 0; l < nl; l++)
                if (rank < priors[l].n) {
                    pcfg[np] = priors[l].cfg[rank];
                    ptime[np] = priors[l].time[rank];
                    psrc[np++] = l;
                }
        size_t pkept = 0;
        if (!bad)
            tf_strategy_prior(t->strat, pcfg, ptime, psrc, np, &pkept);
        free(pcfg);
        free(ptime);
        free(psrc);
        for (int l = 0; l < nl; l++) {
            free(lists[l]);
            free(priors[l].cfg);
            free(priors[l].time);
        }
        free(lists);
        free(lens);
        free(list_keys);
        free(priors);
        size_t kept = 0, all = 0;
        /* Twice: first the warm seeds alone, to count those that are valid here. */
        if (!bad && (tf_strategy_seed(t->strat, seeds + first_warm, (size_t)(ns - first_warm),
                                      &kept, err) ||
                     tf_strategy_seed(t->strat, seeds, (size_t)ns, &all, err)))
            bad = true;
        free(seeds);
        if (bad)
            goto out;
        t->nseeds = kept;
        t->nsources = nsources;
        t->nprior = tf_strategy_prior_used(t->strat);
    }
    rc = 0;
out:
    for (int w = 0; w < job->nwarm; w++)
        tf_archive_destroy(owned[w]);
    free(owned);
    free(same);
    free(at);
    free(found);
    free(src);
    return rc;
}

uint64_t tf_plan_task_planned(const struct tf_plan *plan, const struct tf_task *t)
{
    if (t->phase != 1 || plan->time_up)
        return t->total;
    return t->total + (t->total < plan->top_k ? t->total : plan->top_k);
}

uint64_t tf_plan_undispatched(const struct tf_plan *plan, int klass)
{
    uint64_t n = 0;
    for (int i = 0; i < plan->ntasks; i++)
        if (plan->tasks[i].klass == klass)
            n += plan->tasks[i].total - plan->tasks[i].dispatched;
    return n;
}

struct tf_task *tf_plan_find(struct tf_plan *plan, int kernel, int problem, int klass)
{
    for (int i = 0; i < plan->ntasks; i++) {
        struct tf_task *t = &plan->tasks[i];
        if (t->kernel == kernel && t->problem == problem && t->klass == klass)
            return t;
    }
    return NULL;
}

/* Cut `n` configurations of `t` into *work starting `done` configurations in
 * (list) or at index *cursor (brute force: the range ends just past the n-th
 * valid index, or at the space's end if `to_end`; *cursor moves there). */
static int cut_slice(const struct tf_task *t, uint64_t done, uint64_t *cursor, uint64_t n,
                     bool to_end, struct tf_work *work, struct tf_error *err)
{
    work->kernel = (uint32_t)t->kernel;
    work->problem = (uint32_t)t->problem;
    if (t->list != NULL) {
        work->nlist = (uint32_t)n;
        work->list = tf_xmalloc(sizeof *work->list * n);
        memcpy(work->list, t->list + done, sizeof *work->list * n);
        return 0;
    }
    uint64_t idx = *cursor, last = 0;
    if (t->nskip > 0) {
        /* Resumed: the next n valid configurations not measured yet, as a list. */
        work->list = tf_xmalloc(sizeof *work->list * n);
        for (uint64_t k = 0; k < n;) {
            int rc = tf_space_next(t->space, idx, UINT64_MAX, &last, err);
            if (rc <= 0) {
                free(work->list);
                work->list = NULL;
                return rc < 0 ? -1
                              : tf_error_set(err, TF_ERR_EVAL,
                                             "internal: fewer valid configurations than counted");
            }
            idx = last + 1;
            if (!bsearch(&last, t->skip, t->nskip, sizeof *t->skip, tf_config_cmp))
                work->list[k++] = last;
        }
        work->nlist = (uint32_t)n;
        *cursor = idx;
        return 0;
    }
    for (uint64_t k = 0; k < n; k++) {
        int rc = tf_space_next(t->space, idx, UINT64_MAX, &last, err);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return tf_error_set(err, TF_ERR_EVAL,
                                "internal: fewer valid configurations than counted");
        idx = last + 1;
    }
    work->lo = *cursor;
    work->hi = to_end ? tf_space_cartesian(t->space) : idx;
    *cursor = work->hi;
    return 0;
}

/* Task `t` hands out nothing more than `total` (<= its total) for `reason`
 * (kept if it already has one); a screening pass whose results are all in
 * goes on to its top k. */
static void end_task(struct tf_plan *plan, struct tf_task *t, uint64_t total,
                     enum tf_plan_stop reason);

/* The reason a task that handed out its whole total ended. */
static enum tf_plan_stop total_reason(const struct tf_task *t)
{
    return t->valid_estimated || t->total < t->valid ? TF_PLAN_BUDGET : TF_PLAN_EXHAUSTED;
}

static enum tf_plan_stop strategy_reason(const struct tf_strategy *s)
{
    switch (tf_strategy_stopped(s)) {
    case TF_STOP_PATIENCE: return TF_PLAN_PATIENCE;
    case TF_STOP_EXHAUSTED: return TF_PLAN_EXHAUSTED;
    default: return TF_PLAN_BUDGET;
    }
}

/* The fewest proposals of an adaptive search allowed out unanswered (see
 * tf_plan_next_slice): a device worker's compile pool needs a few to work on. */
#define IN_FLIGHT_MIN 8

/* At most this many shared proposals wait for a compile rank: older ones
 * are dropped (their device workers' own pools compile them). */
#define SHARED_MAX 4096

/* Committed proposals list[0..n) of t, handed to a device worker: compile
 * ranks may take their back half, last first (tf_plan_next_compile_slice). */
static void share_back_half(struct tf_task *t, const uint64_t *list, int n)
{
    const size_t add = (size_t)(n - n / 2);
    if (t->shared_head > 0 && t->nshared + add > t->shared_cap) { /* compact */
        memmove(t->shared, t->shared + t->shared_head,
                sizeof *t->shared * (t->nshared - t->shared_head));
        t->nshared -= t->shared_head;
        t->shared_head = 0;
    }
    if (t->nshared + add > t->shared_cap) {
        t->shared_cap = 2 * (t->nshared + add);
        t->shared = tf_xrealloc(t->shared, sizeof *t->shared * t->shared_cap);
    }
    for (int k = n - 1; k >= n / 2; k--)
        t->shared[t->nshared++] = list[k];
    if (t->nshared - t->shared_head > SHARED_MAX)
        t->shared_head = t->nshared - SHARED_MAX;
}

/* A batch of `n` proposals of t's adaptive search into *work; fewer (0 at
 * the end) once the search has stopped, which ends the task there. */
static int64_t ask_slice(struct tf_plan *plan, struct tf_task *t, uint64_t n,
                         struct tf_work *work, struct tf_error *err)
{
    int want = n > ASK_MAX ? ASK_MAX : (int)n, got = 0;
    uint64_t *list = tf_xmalloc(sizeof *list * (size_t)want);
    if (tf_strategy_ask(t->strat, list, want, &got, err)) {
        free(list);
        return -1;
    }
    if (got < want)
        end_task(plan, t, t->dispatched + (uint64_t)got, strategy_reason(t->strat));
    if (got == 0) {
        free(list);
        return 0;
    }
    share_back_half(t, list, got);
    work->kernel = (uint32_t)t->kernel;
    work->problem = (uint32_t)t->problem;
    work->list = list;
    work->nlist = (uint32_t)got;
    return got;
}

/* How many of a screening (or only) pass's configurations may be out
 * unanswered once the job has `patience`: a search may end after that many
 * results without an improvement, and what is handed out beyond is measured
 * after its end (review S: patience 3 with one instant worker ended by the
 * rule after 6 results but measured 549, an eighth of the valid space).
 * UINT64_MAX without patience. */
static uint64_t patience_cap(const struct tf_plan *plan)
{
    if (plan->patience == 0)
        return UINT64_MAX;
    return plan->patience > IN_FLIGHT_MIN ? plan->patience : IN_FLIGHT_MIN;
}

/* The order a class's tasks are served in, into order[] (their count): the
 * plan's, or with a time budget the least-dispatched first (ties in the
 * plan's order). Served in the plan's order, a time budget went almost all
 * to the first searches and later ones measured nothing while the summary
 * said the time budget ended them (review M: 6 searches, 4 workers, 3 s:
 * 1304, 320, 0, 0, 0, 0). The price is locality: a worker moves between
 * problems, each once needing its buffers and reference. */
static int serving_order(const struct tf_plan *plan, int klass, int *order)
{
    int n = 0;
    for (int i = 0; i < plan->ntasks; i++) {
        if (plan->tasks[i].klass != klass)
            continue;
        int at = n++;
        /* Insertion: stable, and the lists are short (tasks of one class). */
        while (plan->time_shared && at > 0 &&
               plan->tasks[order[at - 1]].dispatched > plan->tasks[i].dispatched) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = i;
    }
    return n;
}

int64_t tf_plan_next_slice(struct tf_plan *plan, int klass, uint64_t want, struct tf_work *work,
                           struct tf_error *err)
{
    memset(work, 0, sizeof *work);
    if (want == 0)
        want = 1;
    const int norder = serving_order(plan, klass, plan->order);
    for (int o = 0; o < norder; o++) {
        struct tf_task *t = &plan->tasks[plan->order[o]];
        if (t->strat != NULL && t->phase != 2 && t->dispatched < t->total) {
            /* An adaptive search decides from results: at most an eighth of
             * its budget (at least IN_FLIGHT_MIN) is out unanswered, or its
             * later proposals would be made nearly blind. Replayed on the six
             * convolution caches (bench/strategy/study -w 1 -B/-A, 50 seeds):
             * an eighth to a seventh of a 5% budget in flight cost local
             * nothing and genetic 0.01 of the optimum; 30% cost 0.02-0.03;
             * at 2%, 36% cost 0.01-0.05 and 73% 0.07-0.09. A worker refused
             * here waits (parked) for results. */
            uint64_t cap = t->total / 8 > IN_FLIGHT_MIN ? t->total / 8 : IN_FLIGHT_MIN;
            if (cap > patience_cap(plan))
                cap = patience_cap(plan);
            const uint64_t out = t->dispatched > t->done ? t->dispatched - t->done : 0;
            if (out >= cap)
                continue;
            uint64_t left = t->total - t->dispatched;
            if (left > cap - out)
                left = cap - out;
            int64_t got = ask_slice(plan, t, want < left ? want : left, work, err);
            if (got < 0)
                return -1;
            if (got > 0) {
                work->phase = (uint32_t)t->phase;
                t->dispatched += (uint64_t)got;
                if (t->dispatched == t->total && t->stop == TF_PLAN_RUNNING)
                    t->stop = total_reason(t);
                return got;
            }
            /* The search stopped: the task ended here (its top k may follow). */
        }
        if (t->dispatched == t->total)
            continue;
        uint64_t left = t->total - t->dispatched, n = want < left ? want : left;
        if (t->phase != 2 && patience_cap(plan) != UINT64_MAX) {
            /* Brute force and random with patience: the same bound. */
            const uint64_t out = t->dispatched > t->done ? t->dispatched - t->done : 0;
            if (out >= patience_cap(plan))
                continue;
            if (n > patience_cap(plan) - out)
                n = patience_cap(plan) - out;
        }
        /* The last slice of the whole valid set runs to the end of the space,
         * so nothing is left behind; a budget's last slice ends at its last. */
        bool to_end = t->dispatched + n == t->total && t->total == t->valid;
        if (cut_slice(t, t->dispatched, &t->cursor, n, to_end, work, err))
            return -1;
        work->phase = (uint32_t)t->phase;
        t->dispatched += n;
        if (t->dispatched == t->total && t->phase != 2 && t->stop == TF_PLAN_RUNNING)
            t->stop = total_reason(t);
        return (int64_t)n;
    }
    return 0;
}

int64_t tf_plan_next_compile_slice(struct tf_plan *plan, int klass, uint64_t want,
                                   struct tf_work *work, struct tf_error *err)
{
    memset(work, 0, sizeof *work);
    if (want == 0)
        want = 1;
    for (int i = 0; i < plan->ntasks; i++) {
        struct tf_task *t = &plan->tasks[i];
        if (t->klass != klass || t->phase == 2)
            continue;
        if (t->strat != NULL && t->shared_head < t->nshared) {
            /* The back halves of the slices device workers got, each from its
             * end: a worker's own pool compiles from the front, so the two
             * pools meet near the middle, and what a compile rank builds here
             * is certain to be measured (a hint below may not be). An adaptive
             * search hands out a few seconds of proposals at a time, all
             * decided then; without this, the device worker's pool alone
             * compiled them (seen: 1,214 of 1,530 on one H200, its compile
             * rank's hints used 316 times of 1,326). Oldest slice first: it
             * is measured first. */
            size_t n = t->nshared - t->shared_head;
            if (n > want)
                n = (size_t)want;
            uint64_t *list = tf_xmalloc(sizeof *list * n);
            memcpy(list, t->shared + t->shared_head, sizeof *list * n);
            t->shared_head += n;
            plan->shared += n;
            work->kernel = (uint32_t)t->kernel;
            work->problem = (uint32_t)t->problem;
            work->list = list;
            work->nlist = (uint32_t)n;
            return (int64_t)n;
        }
        if (t->strat != NULL) {
            /* What the next asks will probably propose, once per state of the
             * search (a compile rank asking again before anything changed
             * would get the same hint). */
            const uint64_t mark = tf_strategy_proposed(t->strat) << 32 ^
                                  tf_strategy_told(t->strat);
            if (t->dispatched == t->total || mark == t->hint_mark)
                continue;
            uint64_t left = t->total - t->dispatched;
            int n = (int)(want < left ? want : left), got = 0;
            if (n > ASK_MAX)
                n = ASK_MAX;
            uint64_t *list = tf_xmalloc(sizeof *list * (size_t)n);
            if (tf_strategy_likely_next(t->strat, list, n, &got, err)) {
                free(list);
                return -1;
            }
            t->hint_mark = mark;
            if (got == 0) {
                free(list);
                continue;
            }
            work->kernel = (uint32_t)t->kernel;
            work->problem = (uint32_t)t->problem;
            work->list = list;
            work->nlist = (uint32_t)got;
            return got;
        }
        /* Compile slices never overlap the measured ones: the workers' own
         * pools compile those. */
        if (t->ahead < t->dispatched) {
            t->ahead = t->dispatched;
            t->ahead_cursor = t->cursor;
        }
        if (t->ahead == t->total)
            continue;
        uint64_t left = t->total - t->ahead, n = want < left ? want : left;
        if (cut_slice(t, t->ahead, &t->ahead_cursor, n, false, work, err))
            return -1;
        t->ahead += n;
        return (int64_t)n;
    }
    return 0;
}

bool tf_plan_has_future(const struct tf_plan *plan, int klass)
{
    for (int i = 0; i < plan->ntasks; i++) {
        const struct tf_task *t = &plan->tasks[i];
        if (t->klass == klass &&
            (t->dispatched < t->total || (t->phase == 1 && t->done < t->total)))
            return true;
    }
    return false;
}

/* Fastest first; equal medians (whole nanoseconds) in configuration order, so
 * the top k do not depend on the order results arrived in. */
static int cmp_screened(const void *a, const void *b)
{
    const struct tf_screened *x = a, *y = b;
    if (x->median != y->median)
        return x->median < y->median ? -1 : 1;
    return x->config < y->config ? -1 : x->config > y->config;
}

/* Screening complete: the k fastest, in index order, are measured again strictly. */
static void start_top_k(struct tf_plan *plan, struct tf_task *t)
{
    uint64_t estimate = t->total < plan->top_k ? t->total : plan->top_k;
    uint64_t k = t->nscreened < plan->top_k ? t->nscreened : plan->top_k;
    if (t->nscreened > 0) /* none when every screened one failed: screened is NULL */
        qsort(t->screened, t->nscreened, sizeof *t->screened, cmp_screened);
    free(t->list);
    t->list = tf_xmalloc(sizeof *t->list * (k ? k : 1));
    for (uint64_t i = 0; i < k; i++)
        t->list[i] = t->screened[i].config;
    qsort(t->list, k, sizeof *t->list, tf_config_cmp);
    free(t->screened);
    t->screened = NULL;
    t->nscreened = 0;
    free(t->skip);
    t->skip = NULL;
    t->nskip = 0;
    t->nlist = t->total = k;
    t->dispatched = t->done = 0;
    t->phase = 2;
    plan->total -= estimate - k;
}

/* A screening pass with everything handed out and in goes on to its top k
 * (not once the time budget is over: that is new work). */
static void maybe_top_k(struct tf_plan *plan, struct tf_task *t)
{
    if (t->phase == 1 && t->done >= t->total && t->dispatched >= t->total && !plan->time_up)
        start_top_k(plan, t);
}

static void end_task(struct tf_plan *plan, struct tf_task *t, uint64_t total,
                     enum tf_plan_stop reason)
{
    if (total < t->total) {
        uint64_t before = tf_plan_task_planned(plan, t);
        t->total = total;
        plan->total = plan->total - before + tf_plan_task_planned(plan, t);
    }
    if (t->stop == TF_PLAN_RUNNING)
        t->stop = reason;
    maybe_top_k(plan, t);
}

void tf_plan_record(struct tf_plan *plan, struct tf_task *t, const struct tf_result *r)
{
    t->done++;
    if (t->phase == 2)
        return;
    const bool ok = tf_strategy_time_ok(r->status, r->time_median);
    if (t->strat != NULL) {
        /* A failure is told as bad (status non-zero), never left out. */
        struct tf_error e;
        if (tf_strategy_tell(t->strat, r->config, ok ? r->time_median : INFINITY,
                             ok ? 0 : (r->status ? (int)r->status : 1), &e))
            tf_error_print(&e, "tunefarm: warning", stderr); /* the space's validity check failed
                                                               (outside the space: checked before) */
        if (t->stop == TF_PLAN_RUNNING && tf_strategy_stopped(t->strat) == TF_STOP_PATIENCE)
            end_task(plan, t, t->dispatched, TF_PLAN_PATIENCE);
    } else if (plan->patience > 0 && t->stop == TF_PLAN_RUNNING) {
        /* The strategy core's rule (strategy.h), for the cheap paths. */
        if (ok && (isnan(t->patience_ref) || r->time_median < t->patience_ref * (1 - plan->noise))) {
            t->patience_ref = r->time_median;
            t->since_improve = 0;
        } else if (++t->since_improve >= plan->patience) {
            end_task(plan, t, t->dispatched, TF_PLAN_PATIENCE);
        }
    }
    if (t->phase != 1)
        return;
    if (ok) {
        if ((t->nscreened & (t->nscreened - 1)) == 0) /* grow at powers of two */
            t->screened = tf_xrealloc(t->screened,
                                      sizeof *t->screened * (t->nscreened ? 2 * t->nscreened : 1));
        t->screened[t->nscreened++] = (struct tf_screened){r->config, r->time_median};
    }
    maybe_top_k(plan, t);
}

void tf_plan_time_up(struct tf_plan *plan)
{
    /* What each task sets out to measure drops to what it handed out, and a
     * screening pass's top k is no longer planned. */
    for (int i = 0; i < plan->ntasks; i++) {
        struct tf_task *t = &plan->tasks[i];
        plan->total -= tf_plan_task_planned(plan, t);
        if (t->dispatched < t->total || (t->phase == 1 && t->stop == TF_PLAN_RUNNING)) {
            if (t->phase == 2 || t->stop == TF_PLAN_RUNNING)
                t->stop = TF_PLAN_TIME_BUDGET;
            t->total = t->dispatched;
        }
    }
    plan->time_up = true;
    for (int i = 0; i < plan->ntasks; i++)
        plan->total += tf_plan_task_planned(plan, &plan->tasks[i]);
}

bool tf_plan_task_complete(const struct tf_plan *plan, const struct tf_task *t)
{
    return t->done >= t->total && t->dispatched >= t->total && (t->phase != 1 || plan->time_up);
}

/* Move the configurations of t->list found in sorted `seen[0..n)` to its front
 * (both parts stay ascending); returns how many were found. */
static uint64_t list_done_first(struct tf_task *t, const uint64_t *seen, uint64_t n)
{
    uint64_t *front = tf_xmalloc(sizeof *front * (t->nlist ? t->nlist : 1));
    uint64_t *back = tf_xmalloc(sizeof *back * (t->nlist ? t->nlist : 1));
    uint64_t nf = 0, nb = 0;
    for (uint64_t i = 0; i < t->nlist; i++) {
        if (bsearch(&t->list[i], seen, n, sizeof *seen, tf_config_cmp))
            front[nf++] = t->list[i];
        else
            back[nb++] = t->list[i];
    }
    memcpy(t->list, front, sizeof *front * nf);
    memcpy(t->list + nf, back, sizeof *back * nb);
    free(front);
    free(back);
    return nf;
}

/* Take the results of `done` that belong to t's current phase: the first one
 * per configuration, each one t measures, recorded in the order of `done`
 * (the order they were recorded in: an adaptive search and patience see them
 * as they first arrived). */
static int64_t resume_phase(struct tf_plan *plan, struct tf_task *t, const struct tf_result *done,
                            uint64_t n, struct tf_error *err)
{
    struct at *mine = tf_xmalloc(sizeof *mine * (n ? n : 1));
    uint64_t *configs = tf_xmalloc(sizeof *configs * (n ? n : 1));
    uint64_t m = 0, taken = 0;
    for (uint64_t i = 0; i < n; i++)
        if (done[i].phase == t->phase)
            mine[m++] = (struct at){done[i].config, i};
    qsort(mine, m, sizeof *mine, cmp_at_config);
    for (uint64_t i = 0; i < m; i++) {
        uint64_t c = mine[i].config;
        if (taken > 0 && configs[taken - 1] == c)
            continue;
        bool ok;
        if (t->list != NULL)
            ok = bsearch(&c, t->list, t->nlist, sizeof *t->list, tf_config_cmp) != NULL;
        else if (c >= tf_space_cartesian(t->space))
            ok = false;
        else if (tf_space_is_valid(t->space, c, &ok, err) != 0)
            goto fail;
        if (!ok)
            continue;
        configs[taken] = c;
        mine[taken++] = mine[i];
    }
    /* Never more than the task measures (a budget): the first recorded count. */
    qsort(mine, taken, sizeof *mine, cmp_at_pos);
    if (taken > t->total - t->dispatched) {
        taken = t->total - t->dispatched;
        for (uint64_t i = 0; i < taken; i++)
            configs[i] = mine[i].config;
        qsort(configs, taken, sizeof *configs, tf_config_cmp);
    }
    if (taken == 0)
        goto out;
    if (t->strat != NULL && t->phase != 2) {
        /* The search itself knows what it was told: nothing to skip here. */
    } else if (t->list != NULL) {
        /* A random or top-k list can be out of order only here; sort to search it. */
        qsort(t->list, t->nlist, sizeof *t->list, tf_config_cmp);
        list_done_first(t, configs, taken);
    } else {
        t->skip = configs;
        t->nskip = taken;
        configs = NULL;
    }
    t->dispatched += taken;
    if (t->dispatched == t->total && t->phase != 2 && t->stop == TF_PLAN_RUNNING)
        t->stop = total_reason(t);
    for (uint64_t i = 0; i < taken; i++)
        tf_plan_record(plan, t, &done[mine[i].pos]); /* may complete screening: phase 2 begins */
out:
    free(mine);
    free(configs);
    return (int64_t)taken;
fail:
    free(mine);
    free(configs);
    return -1;
}

int64_t tf_plan_resume(struct tf_plan *plan, struct tf_task *t, const struct tf_result *done,
                       uint64_t n, struct tf_error *err)
{
    int64_t first = resume_phase(plan, t, done, n, err);
    if (first < 0 || t->phase != 2)
        return first;
    /* The screening pass was complete: its top k may be partly re-measured too. */
    int64_t second = resume_phase(plan, t, done, n, err);
    return second < 0 ? -1 : first + second;
}
