/* strategy_random.c - uniform random sampling without replacement.
 *
 * Each proposal is a uniformly drawn valid configuration not yet seen:
 * rejection sampling over the Cartesian product while valid ones are not rare,
 * then (sparse spaces, or a nearly exhausted one) the next valid unseen index
 * after a random start (tf_core_random_unseen). No state: the ask generator
 * (seed, results told, proposals since) makes it deterministic. */
#include "strategy.h"

static int random_create(struct tf_strategy_core *core, void **state, struct tf_error *err)
{
    (void)core;
    (void)err;
    *state = NULL;
    return 0;
}

static int random_ask(void *state, struct tf_strategy_core *core, struct tf_rng *rng,
                      struct tf_propose *p, struct tf_error *err)
{
    (void)state;
    (void)err;
    uint64_t x;
    while (tf_propose_room(p) > 0 && tf_core_random_unseen(core, rng, p, &x))
        tf_propose_add(p, x);
    return 0;
}

static void random_tell(void *state, struct tf_strategy_core *core, uint64_t config,
                        double time, int status, struct tf_rng *rng)
{
    (void)state, (void)core, (void)config, (void)time, (void)status, (void)rng;
}

static void random_destroy(void *state) { (void)state; }

const struct tf_strategy_impl tf_strategy_random = {
    .version = TF_STRATEGY_VERSION,
    .name = "random",
    .good_for = "a baseline, an unbiased sample for a dataset or a cost model, and any space "
                "where nothing is known; sparse-safe",
    .options = NULL,
    .create = random_create,
    .ask = random_ask,
    .tell = random_tell,
    .destroy = random_destroy,
};
