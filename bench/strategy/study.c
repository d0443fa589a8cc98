/* bench/strategy/study - offline study of search strategies on Kernel Tuner caches.
 *
 * usage: bench/strategy/study [-s STRAT[,STRAT...]] [-n SEEDS] [-b PCT[,PCT...]]
 *                             [-w WORKERS] [-t SECONDS[,SECONDS...]] [-f FIRST] [--se]
 *                             [-o NAME=VALUE]... [--per-seed FILE] CACHE.json.gz...
 *
 * For each cache (a brute-forced space: every valid configuration measured),
 * each strategy and each budget (percent of the valid space, rounded up), runs
 * SEEDS searches (seeds FIRST..FIRST+SEEDS-1; FIRST is 1 unless -f) and prints
 * the mean of (optimum time / best time found) per cache and averaged, as a
 * markdown table; also the simulated wall time of the search. The replay
 * answers each configuration with its recorded time and status.
 *   -w 0   count-only: ask one, tell it, ask the next (sequential)
 *   -w N   N simulated workers (default 8): each pulls one configuration when
 *          free and spends its recorded compile + benchmark time on it; results
 *          are told in completion order, so the strategy is asked while earlier
 *          proposals are unanswered, as on a farm.
 *   -B N   each simulated worker asks for N configurations at a time (a farm's
 *          slice; default 1) and measures them in order, each result told as it
 *          completes;
 *   -A N   ... and asks for the next N while it still has N queued (default 0:
 *          when its queue is empty), as a device worker asks ahead so the next
 *          slice compiles meanwhile (worker.c). Both with -w N only.
 *   -t     time budgets instead of count budgets: the search runs on the
 *          simulated clock until SECONDS (a farm's budget is wall time, not a
 *          count); only results complete by then count. With -w 0 the one
 *          simulated worker spends the recorded times too.
 *   -f N   first seed N: a study of seeds its defaults were not tuned on
 *   --se   also the standard error of each mean over seeds (per cache; for the
 *          average over caches, from the per-cache variances), to tell a
 *          difference from the seeds' luck.
 *   --warm-others  each cache's searches first propose the --warm-count W
 *          fastest configurations of every other cache given, interleaved by
 *          rank: a fleet job's `warm_start: same`, one device left out at a
 *          time (--warm-from CACHE: one source for all).
 *   --prior N  with a warm start, each source also passes N of its results
 *          to the strategy (tf_strategy_prior: its --prior-top T fastest, the
 *          rest spread over its ranks, as the plan does; bayes and hybrid
 *          learn from them). Default 24 and 2, the plan's; 0: the seeds
 *          alone (records before 2026-12-06).
 *   --per-seed FILE  also writes one line per search to FILE (tab-separated:
 *          strategy, budget, cache, seed, quality, then name=value of the best
 *          configuration found): a mean hides whether every seed falls a little
 *          short or some stay in another region of the space (quality tables;
 *          not with --evals or --pairs).
 * -o passes a search option to every strategy that declares it. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/strategy.h"
#include "schema/ktcache.h"
#include "schema/status.h"

#define MAX_ITEMS 32

/* The farm's slicing (-B, -A): the same for every run of the study. */
static int slice_size = 1, slice_ahead = 0;

struct run_out {
    double best;      /* best time found (INFINITY if none) */
    double wall_s;    /* simulated wall time */
    uint64_t evals;   /* results told when the best first reached `goal` (0: never) */
    uint64_t told;    /* results told in all */
    uint64_t best_cfg; /* the configuration of `best` */
};

/* The value index of each parameter of configuration `x` (the cache's
 * mixed-radix index, the last parameter varying fastest) into digit[]. */
static void decode(const struct tf_ktcache *kt, uint64_t x, int *digit)
{
    for (int p = kt->nparams - 1; p >= 0; p--) {
        digit[p] = (int)(x % (uint64_t)kt->params[p].count);
        x /= (uint64_t)kt->params[p].count;
    }
}

/* Two cache entries by time, then by their place in the cache (a stable,
 * deterministic order on ties). */
static int cmp_entry_time(const void *a, const void *b)
{
    const struct tf_ktcache_entry *x = *(const struct tf_ktcache_entry *const *)a,
                                  *y = *(const struct tf_ktcache_entry *const *)b;
    if (x->time_ms != y->time_ms)
        return x->time_ms < y->time_ms ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* A mapped configuration and its rank, to find repeats. */
struct ranked_at {
    uint64_t cfg;
    size_t rank;
};

static int cmp_ranked_at(const void *a, const void *b)
{
    const struct ranked_at *x = a, *y = b;
    if (x->cfg != y->cfg)
        return x->cfg < y->cfg ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* `src`'s measured configurations mapped onto `dst` by parameter name and
 * value text, fastest first: new arrays *cfg (dst indices) and *time (times
 * on src), n of them. A configuration with a value dst lacks is left out; one
 * need not be valid in dst. Two that map to one configuration (src has a
 * parameter dst lacks) count once, at the faster, as the plan does. */
static size_t ranked_mapped(const struct tf_ktcache *src, const struct tf_ktcache *dst,
                            uint64_t **cfg, double **time)
{
    size_t n = 0;
    *cfg = calloc(src->nentries + 1, sizeof **cfg);
    *time = calloc(src->nentries + 1, sizeof **time);
    int from[TF_STRATEGY_MAX_PARAMS];      /* dst parameter -> src parameter */
    int *vmap[TF_STRATEGY_MAX_PARAMS] = {0}; /* src digit -> dst digit (-1: none) */
    bool ok = dst->nparams <= TF_STRATEGY_MAX_PARAMS;
    for (int q = 0; ok && q < dst->nparams; q++) {
        from[q] = -1;
        for (int r = 0; r < src->nparams; r++)
            if (strcmp(src->params[r].name, dst->params[q].name) == 0)
                from[q] = r;
        if (from[q] < 0) {
            ok = false; /* a parameter the source does not set: nothing maps */
            break;
        }
        const struct tf_ktcache_param *a = &src->params[from[q]], *b = &dst->params[q];
        vmap[q] = malloc(sizeof(int) * (size_t)a->count);
        for (int i = 0; i < a->count; i++) {
            vmap[q][i] = -1;
            for (int j = 0; j < b->count; j++)
                if (strcmp(a->text[i], b->text[j]) == 0)
                    vmap[q][i] = j;
        }
    }
    size_t m = 0;
    const struct tf_ktcache_entry **ok_e = malloc(sizeof *ok_e * (src->nentries + 1));
    for (size_t i = 0; ok && i < src->nentries; i++)
        if (src->entries[i].status == TF_STATUS_OK)
            ok_e[m++] = &src->entries[i];
    qsort(ok_e, m, sizeof *ok_e, cmp_entry_time);
    for (size_t i = 0; i < m; i++) {
        int sd[TF_STRATEGY_MAX_PARAMS];
        decode(src, ok_e[i]->index, sd);
        uint64_t y = 0;
        bool mapped = true;
        for (int q = 0; q < dst->nparams && mapped; q++) {
            int d = vmap[q][sd[from[q]]];
            mapped = d >= 0;
            y = y * (uint64_t)dst->params[q].count + (uint64_t)(d < 0 ? 0 : d);
        }
        if (mapped) {
            (*cfg)[n] = y;
            (*time)[n++] = ok_e[i]->time_ms;
        }
    }
    free(ok_e);
    struct ranked_at *at = malloc(sizeof *at * (n + 1));
    char *repeat = calloc(n + 1, 1);
    for (size_t i = 0; i < n; i++)
        at[i] = (struct ranked_at){(*cfg)[i], i};
    qsort(at, n, sizeof *at, cmp_ranked_at);
    for (size_t i = 1; i < n; i++)
        if (at[i].cfg == at[i - 1].cfg)
            repeat[at[i].rank] = 1;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (!repeat[i]) {
            (*cfg)[kept] = (*cfg)[i];
            (*time)[kept++] = (*time)[i];
        }
    n = kept;
    free(at);
    free(repeat);
    for (int q = 0; q < TF_STRATEGY_MAX_PARAMS; q++)
        free(vmap[q]);
    return n;
}

/* Warm-start seeds for a search of `dst`: the `count` fastest configurations
 * of `src` (by their time there) that exist and are valid in `dst`; their
 * times on `src` are never told. A new array (*n of them). */
static uint64_t *warm_seeds(const struct tf_ktcache *src, const struct tf_ktcache *dst, int count,
                            size_t *n)
{
    uint64_t *cfg;
    double *time;
    size_t m = ranked_mapped(src, dst, &cfg, &time);
    uint64_t *out = calloc((size_t)count + 1, sizeof *out);
    *n = 0;
    for (size_t i = 0; i < m && *n < (size_t)count; i++) {
        const struct tf_ktcache_entry *e = tf_ktcache_find(dst, cfg[i]);
        if (e && e->status != TF_STATUS_INVALID)
            out[(*n)++] = cfg[i];
    }
    free(cfg);
    free(time);
    return out;
}

/* A warm start's transfer results for one target (tf_strategy_prior). */
struct prior {
    uint64_t *cfg;
    double *time;
    int *source;
    size_t n;
};

/* The transfer results for a search of `dst` from src[0..ns) (ids[k]: the
 * source's id): `per` of each (tf_strategy_prior_ranks), interleaved by rank
 * as the plan does. */
static struct prior make_prior(const struct tf_ktcache *const *src, const int *ids, int ns,
                               const struct tf_ktcache *dst, int per, int top)
{
    struct prior p = {0};
    size_t cap = (size_t)per * (size_t)ns + 1;
    p.cfg = calloc(cap, sizeof *p.cfg);
    p.time = calloc(cap, sizeof *p.time);
    p.source = calloc(cap, sizeof *p.source);
    size_t *pick = calloc((size_t)per * (size_t)ns + 1, sizeof *pick), *npick = calloc((size_t)ns + 1, sizeof *npick);
    uint64_t **cfg = calloc((size_t)ns + 1, sizeof *cfg);
    double **time = calloc((size_t)ns + 1, sizeof *time);
    for (int k = 0; k < ns; k++) {
        size_t m = ranked_mapped(src[k], dst, &cfg[k], &time[k]);
        npick[k] = tf_strategy_prior_ranks(m, (size_t)per, (size_t)top,
                                           pick + (size_t)k * (size_t)per);
    }
    for (size_t r = 0; r < (size_t)per; r++)
        for (int k = 0; k < ns; k++)
            if (r < npick[k]) {
                size_t i = pick[(size_t)k * (size_t)per + r];
                p.cfg[p.n] = cfg[k][i];
                p.time[p.n] = time[k][i];
                p.source[p.n++] = ids[k];
            }
    for (int k = 0; k < ns; k++)
        free(cfg[k]), free(time[k]);
    free(cfg);
    free(time);
    free(pick);
    free(npick);
    return p;
}

static void prior_free(struct prior *p)
{
    free(p->cfg);
    free(p->time);
    free(p->source);
    *p = (struct prior){0};
}

/* Warm-start seeds for cache `t` from every other cache of `kt`, as a job's
 * `warm_start: same` takes the archive's other device classes
 * (tf_plan_warm_start): each source's `count` fastest valid here, interleaved
 * by rank (every source's best first); a configuration two sources share is
 * left to tf_strategy_seed, which keeps its first. A new array (*n). Unlike
 * the plan: the sources come in command-line order (the plan's is by class
 * key), a seed is valid when its cache entry is not invalid, and the kernel's
 * default configuration is not put before the seeds (a cache has none). */
static uint64_t *others_seeds(struct tf_ktcache *const *kt, int ncache, int t, int count,
                              size_t *n)
{
    uint64_t *out = calloc((size_t)count * (size_t)ncache + 1, sizeof *out);
    uint64_t **lists = calloc((size_t)ncache, sizeof *lists);
    size_t *lens = calloc((size_t)ncache, sizeof *lens);
    *n = 0;
    for (int c = 0; c < ncache; c++)
        if (c != t)
            lists[c] = warm_seeds(kt[c], kt[t], count, &lens[c]);
    for (size_t rank = 0; rank < (size_t)count; rank++)
        for (int c = 0; c < ncache; c++)
            if (rank < lens[c])
                out[(*n)++] = lists[c][rank];
    for (int c = 0; c < ncache; c++)
        free(lists[c]);
    free(lists);
    free(lens);
    return out;
}

static int run_one(const struct tf_ktcache *kt, const struct tf_strategy_space *sp,
                   const char *strat, const struct tf_strategy_option *opts, int nopts,
                   uint64_t seed, uint64_t budget, double time_budget, int workers,
                   const uint64_t *seeds, size_t nseeds, const struct prior *prior, double goal,
                   struct run_out *out)
{
    struct tf_error err = {0};
    struct tf_search_limits lim = {.budget = budget};
    struct tf_strategy *s = tf_strategy_create(strat, sp, opts, nopts, seed, &lim, &err);
    if (!s) {
        tf_error_print(&err, "study", stderr);
        return -1;
    }
    size_t kept;
    if (nseeds && tf_strategy_seed(s, seeds, nseeds, &kept, &err)) {
        tf_error_print(&err, "study", stderr);
        tf_strategy_destroy(s);
        return -1;
    }
    if (prior && prior->n)
        tf_strategy_prior(s, prior->cfg, prior->time, prior->source, prior->n, &kept);
    out->best = INFINITY;
    out->best_cfg = 0;
    out->evals = 0;
    int w = workers > 0 ? workers : 1;
    const int per = slice_size + slice_ahead; /* the most a worker holds */
    double *free_at = calloc((size_t)w, sizeof *free_at);
    uint64_t *queue = calloc((size_t)w * (size_t)per, sizeof *queue);
    int *len = calloc((size_t)w, sizeof *len);
    int *busy = calloc((size_t)w, sizeof *busy);
    double clock = 0;
    for (;;) {
        /* Every worker short of work pulls a slice; an idle one starts its next. */
        for (int i = 0; i < w; i++) {
            uint64_t *q = queue + (size_t)i * (size_t)per;
            if (len[i] <= slice_ahead) {
                int got = 0;
                if (tf_strategy_ask(s, q + len[i], slice_size, &got, &err)) {
                    tf_error_print(&err, "study", stderr);
                    goto fail;
                }
                for (int k = len[i]; k < len[i] + got; k++) {
                    const struct tf_ktcache_entry *e = tf_ktcache_find(kt, q[k]);
                    if (!e || e->status == TF_STATUS_INVALID) {
                        fprintf(stderr, "study: %s proposed an invalid configuration %llu\n",
                                strat, (unsigned long long)q[k]);
                        goto fail;
                    }
                }
                len[i] += got;
            }
            if (!busy[i] && len[i] > 0) {
                const struct tf_ktcache_entry *e = tf_ktcache_find(kt, q[0]);
                busy[i] = 1;
                free_at[i] = clock + (e->compile_ms + e->benchmark_ms) / 1e3;
            }
        }
        /* The next to finish reports (lowest index on ties: deterministic). */
        int next = -1;
        for (int i = 0; i < w; i++)
            if (busy[i] && (next < 0 || free_at[i] < free_at[next]))
                next = i;
        if (next < 0 || (time_budget > 0 && free_at[next] > time_budget))
            break; /* done, or the time budget ends before the next result */
        clock = free_at[next];
        busy[next] = 0;
        uint64_t *q = queue + (size_t)next * (size_t)per;
        const uint64_t done = q[0];
        memmove(q, q + 1, sizeof *q * (size_t)--len[next]);
        const struct tf_ktcache_entry *e = tf_ktcache_find(kt, done);
        if (e->status == TF_STATUS_OK && e->time_ms < out->best)
            out->best = e->time_ms, out->best_cfg = done;
        if (out->evals == 0 && out->best <= goal)
            out->evals = tf_strategy_told(s) + 1; /* this result is the (told + 1)-th */
        if (tf_strategy_tell(s, done, e->time_ms, e->status, &err)) {
            tf_error_print(&err, "study", stderr);
            goto fail;
        }
    }
    out->wall_s = clock;
    out->told = tf_strategy_told(s);
    free(free_at);
    free(queue);
    free(len);
    free(busy);
    tf_strategy_destroy(s);
    return 0;
fail:
    free(free_at);
    free(queue);
    free(len);
    free(busy);
    tf_strategy_destroy(s);
    return -1;
}

/* One --per-seed line: the search's quality and its best configuration. */
static void per_seed_line(FILE *f, const char *strat, const char *budget, bool timed,
                          const char *cache, int seed, double quality,
                          const struct tf_ktcache *kt, const struct run_out *r)
{
    fprintf(f, "%s\t%s%s\t%s\t%d\t%.4f", strat, budget, timed ? "s" : "%", cache, seed,
            quality);
    if (isfinite(r->best)) {
        int digit[TF_STRATEGY_MAX_PARAMS];
        decode(kt, r->best_cfg, digit);
        for (int p = 0; p < kt->nparams; p++)
            if (kt->params[p].count > 1)
                fprintf(f, "\t%s=%s", kt->params[p].name, kt->params[p].text[digit[p]]);
    }
    fputc('\n', f);
}

static void usage_print(FILE *f, const char *argv0)
{
    fprintf(f,
            "usage: %s [-s STRAT,...] [-n SEEDS] [-b PCT,... | -t SECONDS,...] [-w WORKERS]\n"
            "          [-B SLICE] [-A AHEAD] [-f FIRST_SEED] [--se]\n"
            "          [-o NAME=VALUE]...\n"
            "          [--warm-from CACHE | --warm-others] [--warm-count W] [--prior N]\n"
            "          [--prior-top T]\n"
            "          [--evals | --pairs] [--per-seed FILE]\n"
            "          [--goal 0.95] [--cap PCT] [--quality-at PCT] CACHE.json.gz...\n"
            "What each option does: the comment at the top of bench/strategy/study.c.\n",
            argv0);
}

static int split(char *text, char **items, int max)
{
    int n = 0;
    for (char *t = strtok(text, ","); t && n < max; t = strtok(NULL, ","))
        items[n++] = t;
    return n;
}

/* "A100" from ".../A100.json.gz". */
static void short_name(const char *path, char *out, size_t cap)
{
    const char *name = strrchr(path, '/');
    snprintf(out, cap, "%s", name ? name + 1 : path);
    char *dot = strchr(out, '.');
    if (dot)
        *dot = 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Evaluations-to-goal statistics over seeds first..first+n-1. */
struct evstat {
    double mean, median, quality; /* quality: mean optimum / best at the quality budget */
    int reached;
};

/* Runs `n` seeds of `strat` on cache `kt` (optimum `opt`) seeded with
 * `seeds`: evaluations until the best is within `goal` of the optimum's speed
 * (capped at `cap` configurations, which counts when never reached), and the
 * mean quality at `qbudget` configurations. */
static int ev_runs(const struct tf_ktcache *kt, const struct tf_strategy_space *sp,
                   const char *strat, const struct tf_strategy_option *opts, int nopts, int n,
                   int first, int workers, const uint64_t *seeds, size_t nseeds,
                   const struct prior *prior, double opt, double goal, uint64_t cap,
                   uint64_t qbudget, struct evstat *st)
{
    uint64_t *ev = calloc((size_t)n, sizeof *ev);
    double sum = 0, q = 0;
    st->reached = 0;
    for (int i = 0; i < n; i++) {
        uint64_t seed = (uint64_t)first + (uint64_t)i;
        struct run_out r;
        if (run_one(kt, sp, strat, opts, nopts, seed, cap, 0, workers, seeds, nseeds, prior,
                    opt / goal, &r))
            return -1;
        ev[i] = r.evals ? r.evals : cap;
        st->reached += r.evals != 0;
        sum += (double)ev[i];
        if (run_one(kt, sp, strat, opts, nopts, seed, qbudget, 0, workers, seeds, nseeds, prior,
                    0, &r))
            return -1;
        q += isfinite(r.best) ? opt / r.best : 0;
    }
    qsort(ev, (size_t)n, sizeof *ev, cmp_u64);
    st->mean = sum / n;
    st->median = n % 2 ? (double)ev[n / 2] : ((double)ev[n / 2 - 1] + (double)ev[n / 2]) / 2;
    st->quality = q / n;
    free(ev);
    return 0;
}

int main(int argc, char **argv)
{
    char strat_text[512] = "random,brute_force", budget_text[128] = "0.5,1,2,5";
    int seeds = 25, first = 1, workers = 8, warm_count = 8, prior_per = 24, prior_top = 2;
    bool show_se = false; /* --se; with one seed there is no standard error to show */
    const char *warm_from = NULL, *per_seed_path = NULL;
    bool pairs = false, evals = false, timed = false, others = false;
    double goal = 0.95, cap_pct = 20, q_pct = 2;
    struct tf_strategy_option opts[MAX_ITEMS];
    int nopts = 0;
    int a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (strcmp(argv[a], "-h") == 0 || strcmp(argv[a], "--help") == 0) {
            usage_print(stdout, argv[0]);
            return 0;
        }
        if (strcmp(argv[a], "--pairs") == 0) {
            pairs = evals = true;
            continue;
        }
        if (strcmp(argv[a], "--evals") == 0) {
            evals = true;
            continue;
        }
        if (strcmp(argv[a], "--warm-others") == 0) {
            others = true;
            continue;
        }
        if (strcmp(argv[a], "--se") == 0) {
            show_se = true;
            continue;
        }
        if (a + 1 >= argc) {
            fprintf(stderr, "study: '%s' is not an option, or it is missing its value\n", argv[a]);
            goto usage;
        }
        if (strcmp(argv[a], "-s") == 0)
            snprintf(strat_text, sizeof strat_text, "%s", argv[++a]);
        else if (strcmp(argv[a], "-n") == 0)
            seeds = atoi(argv[++a]);
        else if (strcmp(argv[a], "-f") == 0)
            first = atoi(argv[++a]);
        else if (strcmp(argv[a], "-b") == 0)
            snprintf(budget_text, sizeof budget_text, "%s", argv[++a]);
        else if (strcmp(argv[a], "-t") == 0) {
            snprintf(budget_text, sizeof budget_text, "%s", argv[++a]);
            timed = true;
        } else if (strcmp(argv[a], "-w") == 0)
            workers = atoi(argv[++a]);
        else if (strcmp(argv[a], "-B") == 0)
            slice_size = atoi(argv[++a]);
        else if (strcmp(argv[a], "-A") == 0)
            slice_ahead = atoi(argv[++a]);
        else if (strcmp(argv[a], "--per-seed") == 0)
            per_seed_path = argv[++a];
        else if (strcmp(argv[a], "--warm-from") == 0)
            warm_from = argv[++a];
        else if (strcmp(argv[a], "--warm-count") == 0)
            warm_count = atoi(argv[++a]);
        else if (strcmp(argv[a], "--prior") == 0)
            prior_per = atoi(argv[++a]);
        else if (strcmp(argv[a], "--prior-top") == 0)
            prior_top = atoi(argv[++a]);
        else if (strcmp(argv[a], "--goal") == 0)
            goal = atof(argv[++a]);
        else if (strcmp(argv[a], "--cap") == 0)
            cap_pct = atof(argv[++a]);
        else if (strcmp(argv[a], "--quality-at") == 0)
            q_pct = atof(argv[++a]);
        else if (strcmp(argv[a], "-o") == 0 && nopts < MAX_ITEMS) {
            char *eq = strchr(argv[++a], '=');
            if (!eq) {
                fprintf(stderr, "study: -o takes NAME=VALUE, not '%s'\n", argv[a]);
                goto usage;
            }
            *eq = 0;
            opts[nopts].name = argv[a];
            opts[nopts++].value = eq + 1;
        } else {
            if (strcmp(argv[a], "-o") == 0)
                fprintf(stderr, "study: at most %d -o options\n", MAX_ITEMS);
            else
                fprintf(stderr, "study: unknown option '%s'\n", argv[a]);
            goto usage;
        }
    }
    show_se = show_se && seeds > 1;
    /* Say which rule a command line breaks, then the usage. */
    const char *why = a >= argc                        ? "no cache given"
                      : seeds < 1 || first < 1         ? "-n and -f must be >= 1"
                      : warm_count < 1                 ? "--warm-count must be >= 1"
                      : prior_per < 0 || prior_top < 0 ? "--prior and --prior-top must be >= 0"
                      : !(goal > 0 && goal <= 1)       ? "--goal must be in (0, 1]"
                      : evals && !pairs && !warm_from
                          ? "--evals measures a warm start: it needs --warm-from CACHE (or use "
                            "--pairs for every ordered pair of the caches)"
                      : timed && evals ? "--evals and --pairs count evaluations: not with -t"
                      : others && (warm_from || evals)
                          ? "--warm-others goes with neither --warm-from nor --evals/--pairs"
                          : NULL;
    if (why) {
        fprintf(stderr, "study: %s\n", why);
        goto usage;
    }
    char *strats[MAX_ITEMS], *budgets[MAX_ITEMS];
    int nstrat = split(strat_text, strats, MAX_ITEMS);
    int nbud = split(budget_text, budgets, MAX_ITEMS);
    if (slice_size < 1 || slice_ahead < 0 || (workers == 0 && (slice_size > 1 || slice_ahead))) {
        fprintf(stderr, "study: -B must be >= 1 and -A >= 0, both with -w N (N > 0)\n");
        return 2;
    }
    if (per_seed_path && evals) {
        fprintf(stderr, "study: --per-seed writes the quality tables' searches; it does not go "
                        "with --evals or --pairs\n");
        return 2;
    }
    int ncache = argc - a;
    struct tf_ktcache **kt = calloc((size_t)ncache, sizeof *kt);
    struct tf_strategy_space **sp = calloc((size_t)ncache, sizeof *sp);
    double *opt = calloc((size_t)ncache, sizeof *opt);
    for (int c = 0; c < ncache; c++) {
        struct tf_error err = {0};
        kt[c] = tf_ktcache_load(argv[a + c], &err);
        if (!kt[c]) {
            tf_error_print(&err, "study", stderr);
            return 1;
        }
        sp[c] = tf_strategy_space_ktcache(kt[c]);
        opt[c] = INFINITY;
        for (size_t i = 0; i < kt[c]->nentries; i++)
            if (kt[c]->entries[i].status == TF_STATUS_OK && kt[c]->entries[i].time_ms < opt[c])
                opt[c] = kt[c]->entries[i].time_ms;
    }
    struct tf_ktcache *warm = NULL;
    if (warm_from) {
        struct tf_error err = {0};
        warm = tf_ktcache_load(warm_from, &err);
        if (!warm) {
            tf_error_print(&err, "study", stderr);
            return 1;
        }
    }
    /* Opened once the caches have loaded: a bad cache leaves no empty file. */
    FILE *per_seed = NULL;
    if (per_seed_path && !(per_seed = fopen(per_seed_path, "w"))) {
        fprintf(stderr, "study: %s: cannot write: %s\n", per_seed_path, strerror(errno));
        return 1;
    }
    /* Options a strategy does not declare are dropped for it. */
    struct tf_strategy_option mine[MAX_ITEMS][MAX_ITEMS];
    int nmine[MAX_ITEMS] = {0};
    for (int si = 0; si < nstrat; si++) {
        const struct tf_strategy_impl *impl = tf_strategy_find(strats[si]);
        for (int o = 0; impl && o < nopts; o++)
            for (const struct tf_strategy_option_spec *os = impl->options; os && os->name; os++)
                if (strcmp(os->name, opts[o].name) == 0)
                    mine[si][nmine[si]++] = opts[o];
    }
    double t0 = (double)clock() / CLOCKS_PER_SEC;
    if (evals) {
        /* Warm start vs cold: evaluations until the best is within `goal` of
         * the target's optimum speed, per (source, target) pair. */
        printf("seeds %d..%d, %s, evaluations (results, in completion order) until the best "
               "is >= %.2f of the target's optimum speed; cap %.3g%% of the valid space "
               "(counted as the cap when never reached); warm start: the %d fastest "
               "configurations of the source that are valid on the target, proposed first; "
               "quality (optimum / best) at %.3g%%\n\n",
               first, first + seeds - 1,
               workers > 0 ? "simulated workers" : "count-only (sequential)", goal, cap_pct,
               warm_count, q_pct);
        if (workers > 0)
            printf("workers: %d, slices of %d, the next asked with %d queued\n\n", workers,
                   slice_size, slice_ahead);
        printf("| strategy | source -> target | cold mean | cold median | cold reached | warm "
               "mean | warm median | warm reached | cold q@%.3g%% | warm q@%.3g%% |\n",
               q_pct, q_pct);
        printf("|---|---|---|---|---|---|---|---|---|---|\n");
        int nsrc = pairs ? ncache : 1;
        for (int si = 0; si < nstrat; si++)
            for (int t = 0; t < ncache; t++) {
                uint64_t cap = (uint64_t)ceil(cap_pct / 100.0 * (double)sp[t]->valid_count - 1e-9);
                uint64_t qb = (uint64_t)ceil(q_pct / 100.0 * (double)sp[t]->valid_count - 1e-9);
                struct evstat cold;
                if (ev_runs(kt[t], sp[t], strats[si], mine[si], nmine[si], seeds, first, workers,
                            NULL, 0, NULL, opt[t], goal, cap, qb, &cold))
                    return 1;
                char tn[64], sn[64];
                short_name(argv[a + t], tn, sizeof tn);
                for (int src = 0; src < nsrc; src++) {
                    if (pairs && src == t)
                        continue;
                    const struct tf_ktcache *from = pairs ? kt[src] : warm;
                    short_name(pairs ? argv[a + src] : warm_from, sn, sizeof sn);
                    size_t ns;
                    uint64_t *sd = warm_seeds(from, kt[t], warm_count, &ns);
                    const int zero = 0;
                    struct prior pr = prior_per ? make_prior(&from, &zero, 1, kt[t], prior_per, prior_top)
                                                : (struct prior){0};
                    struct evstat w;
                    if (ev_runs(kt[t], sp[t], strats[si], mine[si], nmine[si], seeds, first,
                                workers, sd, ns, &pr, opt[t], goal, cap, qb, &w))
                        return 1;
                    free(sd);
                    prior_free(&pr);
                    printf("| %s | %s -> %s | %.1f | %.1f | %d/%d | %.1f | %.1f | %d/%d | %.3f "
                           "| %.3f |\n",
                           strats[si], sn, tn, cold.mean, cold.median, cold.reached, seeds,
                           w.mean, w.median, w.reached, seeds, cold.quality, w.quality);
                    fflush(stdout);
                }
            }
        fprintf(stderr, "study: %.1f s of CPU\n", (double)clock() / CLOCKS_PER_SEC - t0);
        goto out;
    }
    printf("seeds %d..%d, %s, mean of optimum time / best time found%s\n\n", first,
           first + seeds - 1, workers > 0 ? "simulated workers" : "count-only (sequential)",
           show_se ? " (± its standard error over seeds)" : "");
    if (workers > 0)
        printf("workers: %d, slices of %d, the next asked with %d queued\n\n", workers,
               slice_size, slice_ahead);
    if (timed)
        printf("time budgets: simulated seconds of wall time (each configuration costs its "
               "recorded compile + benchmark time); the budget column says how many results "
               "came in by then (mean over seeds and caches)\n\n");
    if (warm) {
        char sn[64];
        short_name(warm_from, sn, sizeof sn);
        printf("warm start from %s: its %d fastest configurations valid here, first\n\n", sn,
               warm_count);
    }
    if (others)
        printf("warm start from the other caches: each one's %d fastest configurations valid "
               "here, interleaved by rank, first (a job's `warm_start: same`)\n\n",
               warm_count);
    if ((warm || others) && prior_per)
        printf("transfer: each source also passes %d of its results (its %d fastest, the rest "
               "spread over its ranks)\n\n",
               prior_per, prior_top < prior_per ? prior_top : prior_per);
    printf("| strategy | budget |");
    for (int c = 0; c < ncache; c++) {
        char shortname[64];
        short_name(argv[a + c], shortname, sizeof shortname);
        printf(" %s |", shortname);
    }
    printf(timed ? " mean | results in the budget |\n|---|---|" : " mean | sim. wall s |\n|---|---|");
    for (int c = 0; c <= ncache + 1; c++)
        printf("---|");
    printf("\n");
    /* Each cache's warm-start seeds, once: they depend on the caches alone. */
    uint64_t **wsd = calloc((size_t)ncache, sizeof *wsd);
    size_t *wns = calloc((size_t)ncache, sizeof *wns);
    /* ... and their transfer results: every other cache (its index as its
     * id), or the --warm-from one. */
    struct prior *wpr = calloc((size_t)ncache, sizeof *wpr);
    const struct tf_ktcache **srcs = calloc((size_t)ncache + 1, sizeof *srcs);
    int *ids = calloc((size_t)ncache + 1, sizeof *ids);
    for (int c = 0; c < ncache; c++) {
        wsd[c] = warm     ? warm_seeds(warm, kt[c], warm_count, &wns[c])
                 : others ? others_seeds(kt, ncache, c, warm_count, &wns[c])
                          : NULL;
        int ns = 0;
        if (warm)
            srcs[ns++] = warm;
        for (int o = 0; others && o < ncache; o++)
            if (o != c)
                ids[ns] = o, srcs[ns++] = kt[o];
        if (ns && prior_per)
            wpr[c] = make_prior(srcs, ids, ns, kt[c], prior_per, prior_top);
    }
    free(srcs);
    free(ids);
    for (int si = 0; si < nstrat; si++)
        for (int bi = 0; bi < nbud; bi++) {
            double pct = atof(budgets[bi]), sum = 0, wall = 0, told = 0, var_sum = 0;
            printf("| %s | %s%s |", strats[si], budgets[bi], timed ? " s" : "%");
            for (int c = 0; c < ncache; c++) {
                uint64_t budget = timed ? 0
                                        : (uint64_t)ceil(pct / 100.0 * (double)sp[c]->valid_count - 1e-9);
                double q = 0, qq = 0;
                for (int i = 0; i < seeds; i++) {
                    struct run_out r;
                    if (run_one(kt[c], sp[c], strats[si], mine[si], nmine[si],
                                (uint64_t)first + (uint64_t)i, budget, timed ? pct : 0, workers,
                                wsd[c], wns[c], &wpr[c], 0, &r))
                        return 1;
                    double qi = isfinite(r.best) ? opt[c] / r.best : 0;
                    if (per_seed) {
                        char cn[64];
                        short_name(argv[a + c], cn, sizeof cn);
                        per_seed_line(per_seed, strats[si], budgets[bi], timed, cn, first + i, qi,
                                      kt[c], &r);
                    }
                    q += qi;
                    qq += qi * qi;
                    wall += r.wall_s;
                    told += (double)r.told;
                }
                q /= seeds;
                /* the variance of the mean over seeds (sample variance / n) */
                double var = seeds > 1 ? fmax(0, qq - seeds * q * q) / (seeds - 1) / seeds : 0;
                var_sum += var;
                sum += q;
                if (show_se)
                    printf(" %.3f ± %.3f |", q, sqrt(var));
                else
                    printf(" %.3f |", q);
            }
            if (show_se)
                printf(" **%.3f** ± %.3f", sum / ncache, sqrt(var_sum) / ncache);
            else
                printf(" **%.3f**", sum / ncache);
            if (timed)
                printf(" | %.0f results |\n", told / seeds / ncache);
            else
                printf(" | %.0f |\n", wall / seeds / ncache);
            fflush(stdout);
        }
    fprintf(stderr, "study: %.1f s of CPU\n", (double)clock() / CLOCKS_PER_SEC - t0);
    if (per_seed && fclose(per_seed)) {
        fprintf(stderr, "study: %s: %s\n", per_seed_path, strerror(errno));
        return 1;
    }
    for (int c = 0; c < ncache; c++)
        free(wsd[c]), prior_free(&wpr[c]);
    free(wsd);
    free(wpr);
    free(wns);
out:
    for (int c = 0; c < ncache; c++) {
        tf_strategy_space_free(sp[c]);
        tf_ktcache_destroy(kt[c]);
    }
    tf_ktcache_destroy(warm);
    free(kt);
    free(sp);
    free(opt);
    return 0;
usage:
    usage_print(stderr, argv[0]);
    return 2;
}
