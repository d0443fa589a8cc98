/* strategy_genetic.c - a steady-state genetic algorithm, refilled asynchronously.
 *
 * The population is the `population` best results told so far (a steady
 * state: no generations, so no worker waits for one to end). Each proposal is
 * a child of two parents chosen by tournaments of two: uniform crossover, then
 * each gene mutated with probability `mutation` (an ordered parameter moves up
 * to `reach` steps, an enum takes any value). A child that is invalid
 * (constraints, device limits) or already seen is discarded and bred again, so
 * only valid new configurations leave; after `population` random ones have
 * been proposed breeding starts. No state besides the history. */
#include "strategy.h"
#include "strategy_common.h"

#include <math.h>
#include <stdlib.h>

struct genetic {
    int64_t population, reach;
    double mutation;
};

static const struct tf_strategy_option_spec genetic_options[] = {
    {"population", "16", "how many of the best results breed (also the random start)"},
    {"mutation", "0.15", "probability that a gene mutates"},
    {"reach", "2", "steps along an ordered parameter's values a mutation may take"},
    {NULL, NULL, NULL},
};

static int genetic_create(struct tf_strategy_core *core, void **state, struct tf_error *err)
{
    struct genetic *g = tf_xcalloc(1, sizeof *g);
    *state = g;
    if (tf_core_opt_int(core, "population", 2, 1 << 20, &g->population, err) ||
        tf_core_opt_double(core, "mutation", 0, 1, &g->mutation, err) ||
        tf_core_opt_int(core, "reach", 1, 1 << 20, &g->reach, err))
        return -1;
    return 0;
}

static int genetic_ask(void *state, struct tf_strategy_core *core, struct tf_rng *rng,
                       struct tf_propose *p, struct tf_error *err)
{
    (void)err;
    const struct genetic *g = state;
    const struct tf_strategy_space *sp = tf_core_space(core);
    const uint64_t *cfg;
    const double *time;
    size_t told = tf_core_history(core, &cfg, &time);
    if (tf_core_proposed(core) < (uint64_t)g->population || told < 2)
        return 0; /* random start, filled by the core */
    size_t n;
    size_t *rank = tf_rank_history(core, &n);
    size_t pop = n < (size_t)g->population ? n : (size_t)g->population;
    int a[TF_STRATEGY_MAX_PARAMS], b[TF_STRATEGY_MAX_PARAMS];
    /* up to 200 tries per configuration asked for (a child may be invalid or seen) */
    const long max_tries = 200L * tf_propose_room(p);
    for (long tries = 0; tries < max_tries && tf_propose_room(p) > 0; tries++) {
        /* Tournaments of two among the population (lower rank wins). */
        size_t x = tf_rng_below(rng, pop), y = tf_rng_below(rng, pop);
        size_t u = tf_rng_below(rng, pop), v = tf_rng_below(rng, pop);
        tf_core_decode(core, cfg[rank[x < y ? x : y]], a);
        tf_core_decode(core, cfg[rank[u < v ? u : v]], b);
        for (int q = 0; q < sp->nparams; q++) {
            if (tf_rng_next(rng) & 1)
                a[q] = b[q];
            if (sp->radix[q] > 1 && tf_rng_unit(rng) < g->mutation) {
                if (sp->values[q]) { /* steps along the values' order, not the list's */
                    int step = 1 + (int)tf_rng_below(rng, (uint64_t)g->reach);
                    int nr = tf_core_value_rank(core, q, a[q]) +
                             ((tf_rng_next(rng) & 1) ? step : -step);
                    a[q] = tf_core_value_at(core, q, nr);
                } else {
                    a[q] = (int)tf_rng_below(rng, (uint64_t)sp->radix[q]);
                }
            }
        }
        tf_propose_add(p, tf_core_encode(core, a));
    }
    free(rank);
    return 0;
}

static void genetic_tell(void *state, struct tf_strategy_core *core, uint64_t config,
                         double time, int status, struct tf_rng *rng)
{
    (void)state, (void)core, (void)config, (void)time, (void)status, (void)rng;
}

static void genetic_destroy(void *state) { free(state); }

const struct tf_strategy_impl tf_strategy_genetic = {
    .version = TF_STRATEGY_VERSION,
    .name = "genetic",
    .good_for = "rugged spaces with interacting parameters and medium budgets; robust, "
                "never waits for a generation",
    .options = genetic_options,
    .create = genetic_create,
    .ask = genetic_ask,
    .tell = genetic_tell,
    .destroy = genetic_destroy,
};
