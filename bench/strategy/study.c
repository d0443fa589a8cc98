/* bench/strategy/study - offline study of search strategies on Kernel Tuner caches.
 *
 * usage: bench/strategy/study [-s STRAT[,STRAT...]] [-n SEEDS] [-b PCT[,PCT...]]
 *                             [-w WORKERS] [-o NAME=VALUE]... CACHE.json.gz...
 *
 * For each cache (a brute-forced space: every valid configuration measured),
 * each strategy and each budget (percent of the valid space, rounded up), runs
 * SEEDS searches (seeds 1..SEEDS) and prints the mean of (optimum time / best
 * time found) per cache and averaged, as a markdown table; also the simulated
 * wall time of the search. The replay answers each configuration with its
 * recorded time and status.
 *   -w 0   count-only: ask one, tell it, ask the next (sequential)
 *   -w N   N simulated workers (default 8): each pulls one configuration when
 *          free and spends its recorded compile + benchmark time on it; results
 *          are told in completion order, so the strategy is asked while earlier
 *          proposals are unanswered, as on a farm.
 * -o passes a search option to every strategy that declares it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/strategy.h"
#include "schema/ktcache.h"
#include "schema/status.h"

#define MAX_ITEMS 32

struct run_out {
    double best;      /* best time found (INFINITY if none) */
    double wall_s;    /* simulated wall time */
};

static int run_one(const struct tf_ktcache *kt, const struct tf_strategy_space *sp,
                   const char *strat, const struct tf_strategy_option *opts, int nopts,
                   uint64_t seed, uint64_t budget, int workers, struct run_out *out)
{
    struct tf_error err = {0};
    struct tf_search_limits lim = {.budget = budget};
    struct tf_strategy *s = tf_strategy_create(strat, sp, opts, nopts, seed, &lim, &err);
    if (!s) {
        tf_error_print(&err, "study", stderr);
        return -1;
    }
    out->best = INFINITY;
    int w = workers > 0 ? workers : 1;
    double *free_at = calloc((size_t)w, sizeof *free_at);
    uint64_t *job = calloc((size_t)w, sizeof *job);
    int *busy = calloc((size_t)w, sizeof *busy);
    double clock = 0;
    for (;;) {
        /* Every idle worker pulls. */
        for (int i = 0; i < w; i++)
            if (!busy[i]) {
                int got = 0;
                if (tf_strategy_ask(s, &job[i], 1, &got, &err)) {
                    tf_error_print(&err, "study", stderr);
                    goto fail;
                }
                if (got) {
                    const struct tf_ktcache_entry *e = tf_ktcache_find(kt, job[i]);
                    if (!e || e->status == TF_STATUS_INVALID) {
                        fprintf(stderr, "study: %s proposed an invalid configuration %llu\n",
                                strat, (unsigned long long)job[i]);
                        goto fail;
                    }
                    busy[i] = 1;
                    free_at[i] = clock + (e->compile_ms + e->benchmark_ms) / 1e3;
                }
            }
        /* The next to finish reports (lowest index on ties: deterministic). */
        int next = -1;
        for (int i = 0; i < w; i++)
            if (busy[i] && (next < 0 || free_at[i] < free_at[next]))
                next = i;
        if (next < 0)
            break;
        clock = free_at[next];
        busy[next] = 0;
        const struct tf_ktcache_entry *e = tf_ktcache_find(kt, job[next]);
        if (e->status == TF_STATUS_OK && e->time_ms < out->best)
            out->best = e->time_ms;
        if (tf_strategy_tell(s, job[next], e->time_ms, e->status, &err)) {
            tf_error_print(&err, "study", stderr);
            goto fail;
        }
    }
    out->wall_s = clock;
    free(free_at);
    free(job);
    free(busy);
    tf_strategy_destroy(s);
    return 0;
fail:
    free(free_at);
    free(job);
    free(busy);
    tf_strategy_destroy(s);
    return -1;
}

static int split(char *text, char **items, int max)
{
    int n = 0;
    for (char *t = strtok(text, ","); t && n < max; t = strtok(NULL, ","))
        items[n++] = t;
    return n;
}

int main(int argc, char **argv)
{
    char strat_text[512] = "random,brute_force", budget_text[128] = "0.5,1,2,5";
    int seeds = 25, workers = 8;
    struct tf_strategy_option opts[MAX_ITEMS];
    int nopts = 0;
    int a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (a + 1 >= argc)
            goto usage;
        if (strcmp(argv[a], "-s") == 0)
            snprintf(strat_text, sizeof strat_text, "%s", argv[++a]);
        else if (strcmp(argv[a], "-n") == 0)
            seeds = atoi(argv[++a]);
        else if (strcmp(argv[a], "-b") == 0)
            snprintf(budget_text, sizeof budget_text, "%s", argv[++a]);
        else if (strcmp(argv[a], "-w") == 0)
            workers = atoi(argv[++a]);
        else if (strcmp(argv[a], "-o") == 0 && nopts < MAX_ITEMS) {
            char *eq = strchr(argv[++a], '=');
            if (!eq)
                goto usage;
            *eq = 0;
            opts[nopts].name = argv[a];
            opts[nopts++].value = eq + 1;
        } else
            goto usage;
    }
    if (a >= argc || seeds < 1)
        goto usage;
    char *strats[MAX_ITEMS], *budgets[MAX_ITEMS];
    int nstrat = split(strat_text, strats, MAX_ITEMS);
    int nbud = split(budget_text, budgets, MAX_ITEMS);
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
    printf("seeds 1..%d, %s, mean of optimum time / best time found\n\n", seeds,
           workers > 0 ? "simulated workers" : "count-only (sequential)");
    if (workers > 0)
        printf("workers: %d\n\n", workers);
    printf("| strategy | budget |");
    for (int c = 0; c < ncache; c++) {
        const char *name = strrchr(argv[a + c], '/');
        name = name ? name + 1 : argv[a + c];
        char shortname[64];
        snprintf(shortname, sizeof shortname, "%s", name);
        char *dot = strchr(shortname, '.');
        if (dot)
            *dot = 0;
        printf(" %s |", shortname);
    }
    printf(" mean | sim. wall s |\n|---|---|");
    for (int c = 0; c <= ncache + 1; c++)
        printf("---|");
    printf("\n");
    double t0 = (double)clock() / CLOCKS_PER_SEC;
    for (int si = 0; si < nstrat; si++)
        for (int bi = 0; bi < nbud; bi++) {
            double pct = atof(budgets[bi]), sum = 0, wall = 0;
            printf("| %s | %s%% |", strats[si], budgets[bi]);
            for (int c = 0; c < ncache; c++) {
                uint64_t budget = (uint64_t)ceil(pct / 100.0 * (double)sp[c]->valid_count - 1e-9);
                double q = 0;
                for (int seed = 1; seed <= seeds; seed++) {
                    /* Options a strategy does not declare are dropped for it. */
                    struct tf_strategy_option mine[MAX_ITEMS];
                    int nmine = 0;
                    const struct tf_strategy_impl *impl = tf_strategy_find(strats[si]);
                    for (int o = 0; impl && o < nopts; o++)
                        for (const struct tf_strategy_option_spec *os = impl->options;
                             os && os->name; os++)
                            if (strcmp(os->name, opts[o].name) == 0)
                                mine[nmine++] = opts[o];
                    struct run_out r;
                    if (run_one(kt[c], sp[c], strats[si], mine, nmine, (uint64_t)seed, budget,
                                workers, &r))
                        return 1;
                    q += isfinite(r.best) ? opt[c] / r.best : 0;
                    wall += r.wall_s;
                }
                q /= seeds;
                sum += q;
                printf(" %.3f |", q);
            }
            printf(" **%.3f** | %.0f |\n", sum / ncache, wall / seeds / ncache);
            fflush(stdout);
        }
    fprintf(stderr, "study: %.1f s of CPU\n", (double)clock() / CLOCKS_PER_SEC - t0);
    for (int c = 0; c < ncache; c++) {
        tf_strategy_space_free(sp[c]);
        tf_ktcache_destroy(kt[c]);
    }
    free(kt);
    free(sp);
    free(opt);
    return 0;
usage:
    fprintf(stderr, "usage: %s [-s STRAT,...] [-n SEEDS] [-b PCT,...] [-w WORKERS] "
                    "[-o NAME=VALUE]... CACHE.json.gz...\n", argv[0]);
    return 2;
}
