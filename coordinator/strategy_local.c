/* strategy_local.c - greedy iterated local search, best first, many chains at once.
 *
 * After `init` random configurations, each proposal is an unseen valid
 * neighbour (one parameter moved by up to `reach` steps of its ordered values,
 * or an enum changed) of the best result told so far whose neighbourhood is
 * not exhausted, looking at the `chains` best results: with many workers, the
 * neighbourhoods of the best few are explored in parallel (a chain per
 * starting point), and when a result improves on them the next asks move
 * there at once (greedy, first improvement, asynchronous). When all of them
 * are local optima, an iterated-local-search kick: the best configuration with
 * `perturb` parameters set at random, a new chain from there. No state besides
 * the history: proposals are a function of the results told. */
#include "strategy.h"
#include "strategy_common.h"

#include <math.h>
#include <stdlib.h>

struct local {
    int64_t init, chains, reach, perturb;
};

static const struct tf_strategy_option_spec local_options[] = {
    {"init", "8", "random configurations before the local moves"},
    {"chains", "16", "how many of the best results are expanded at once"},
    {"reach", "2", "steps along an ordered parameter's values a move may take"},
    {"perturb", "3", "parameters a kick changes when every chain is at a local optimum"},
    {NULL, NULL, NULL},
};

static int local_create(struct tf_strategy_core *core, void **state, struct tf_error *err)
{
    struct local *l = tf_xcalloc(1, sizeof *l);
    *state = l;
    if (tf_core_opt_int(core, "init", 1, 1 << 30, &l->init, err) ||
        tf_core_opt_int(core, "chains", 1, 1 << 20, &l->chains, err) ||
        tf_core_opt_int(core, "reach", 1, 1 << 20, &l->reach, err) ||
        tf_core_opt_int(core, "perturb", 1, TF_STRATEGY_MAX_PARAMS, &l->perturb, err))
        return -1;
    return 0;
}

static int local_ask(void *state, struct tf_strategy_core *core, struct tf_rng *rng,
                     struct tf_propose *p, struct tf_error *err)
{
    (void)err;
    const struct local *l = state;
    const struct tf_strategy_space *sp = tf_core_space(core);
    if (tf_core_proposed(core) < (uint64_t)l->init)
        return 0; /* the core fills with random ones */
    const uint64_t *cfg;
    const double *time;
    tf_core_history(core, &cfg, &time);
    size_t n;
    size_t *rank = tf_rank_history(core, &n);
    int cap = tf_neighbours_cap(core);
    uint64_t *nb = tf_xmalloc((size_t)cap * sizeof *nb);
    for (size_t i = 0; i < n && i < (size_t)l->chains && tf_propose_room(p) > 0; i++) {
        if (time[rank[i]] == INFINITY)
            break; /* failures are no place to start from */
        int m = tf_neighbours(core, cfg[rank[i]], (int)l->reach, nb, cap);
        tf_shuffle_u64(nb, m, rng);
        for (int j = 0; j < m && tf_propose_room(p) > 0; j++)
            tf_propose_add(p, nb[j]);
    }
    /* Every chain at a local optimum: kick from the best. */
    int d[TF_STRATEGY_MAX_PARAMS];
    for (int tries = 0; n > 0 && tries < 64 && tf_propose_room(p) > 0; tries++) {
        tf_core_decode(core, cfg[rank[0]], d);
        for (int k = 0; k < l->perturb; k++) {
            int q = (int)tf_rng_below(rng, (uint64_t)sp->nparams);
            d[q] = (int)tf_rng_below(rng, (uint64_t)sp->radix[q]);
        }
        tf_propose_add(p, tf_core_encode(core, d));
    }
    free(nb);
    free(rank);
    return 0;
}

static void local_tell(void *state, struct tf_strategy_core *core, uint64_t config, double time,
                       int status, struct tf_rng *rng)
{
    (void)state, (void)core, (void)config, (void)time, (void)status, (void)rng;
}

static void local_destroy(void *state) { free(state); }

const struct tf_strategy_impl tf_strategy_local = {
    .version = TF_STRATEGY_VERSION,
    .name = "local",
    .good_for = "small budgets on spaces where good configurations have good neighbours (most "
                "tile/block spaces); parallel chains keep every worker busy",
    .options = local_options,
    .create = local_create,
    .ask = local_ask,
    .tell = local_tell,
    .destroy = local_destroy,
};
