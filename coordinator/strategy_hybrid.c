/* strategy_hybrid.c - local search and Bayesian optimisation taking turns on one history.
 *
 * One proposal in `every` (2: every other one) is bayes's (the highest
 * expected improvement of the GP, see strategy_bayes.c), the others local's
 * (an unseen neighbour of the best results, see strategy_local.c); both read
 * the same results, so each exploits what the other found: the model jumps
 * between basins that a local chain would need many steps to cross, and local
 * search refines what the model points at. A batch asks each once for its
 * share (the model's ask scores every candidate, so it is not asked once per
 * proposal); when local has nothing to propose, the model fills in. */
#include "strategy.h"
#include "strategy_common.h"

#include <stdlib.h>

extern const struct tf_strategy_impl tf_strategy_local;
extern const struct tf_strategy_impl tf_strategy_bayes;

struct hybrid {
    void *local, *bayes;
    int64_t init, every;
};

static const struct tf_strategy_option_spec hybrid_options[] = {
    {"init", "12", "random configurations before the two take turns"},
    {"every", "2", "one proposal in `every` is the model's, the others local's"},
    {"chains", "16", "local: how many of the best results are expanded at once"},
    {"reach", "2", "local: steps along an ordered parameter's values a move may take"},
    {"perturb", "3", "local: parameters a kick changes when every chain is at a local optimum"},
    {"enumerate", "20000", "bayes: score every valid configuration when there are at most this many"},
    {"max_train", "256", "bayes: results the model is fitted on at most"},
    {"spread", "0.1", "bayes: minimum distance of a batch proposal to a pending one"},
    {"fail_penalty", "1.0", "bayes: a failure's log time above the worst measured one"},
    {"xi", "0.01", "bayes: exploration margin of expected improvement"},
    {"fit_steps", "100", "bayes: steps of the marginal-likelihood fit"},
    {"fit_train", "128", "bayes: results that fit uses at most"},
    {"align", "1", "bayes: an integer parameter's power-of-two alignment is a feature of its own"},
    {"transfer", "144", "bayes: other devices' results (warm start) the model also learns from, at most; 0: none"},
    {"warp", "1", "bayes: 1: the model's output is the log time through a Box-Cox power fitted to the results; 0: the log time"},
    {"tie", "1", "bayes: 1: a parameter's alignment coordinate shares its value coordinate's length scale"},
    {NULL, NULL, NULL},
};

static void hybrid_destroy(void *state)
{
    struct hybrid *h = state;
    if (!h)
        return;
    if (h->local)
        tf_strategy_local.destroy(h->local);
    if (h->bayes)
        tf_strategy_bayes.destroy(h->bayes);
    free(h);
}

static int hybrid_create(struct tf_strategy_core *core, void **state, struct tf_error *err)
{
    struct hybrid *h = tf_xcalloc(1, sizeof *h);
    *state = h;
    if (tf_core_opt_int(core, "init", 2, 1 << 30, &h->init, err) ||
        tf_core_opt_int(core, "every", 1, 1 << 20, &h->every, err) ||
        tf_strategy_local.create(core, &h->local, err) ||
        tf_strategy_bayes.create(core, &h->bayes, err))
        return -1;
    return 0;
}

static int hybrid_ask(void *state, struct tf_strategy_core *core, struct tf_rng *rng,
                      struct tf_propose *p, struct tf_error *err)
{
    struct hybrid *h = state;
    uint64_t done = tf_core_proposed(core);
    if (done < (uint64_t)h->init)
        return 0; /* random start, filled by the core */
    /* The model's turns among the next `room` proposals, asked of it in one
     * call (each of its asks scores every candidate), then local's. */
    int room = tf_propose_room(p), model = 0;
    for (int k = 0; k < room; k++)
        model += (done + (uint64_t)k - (uint64_t)h->init) % (uint64_t)h->every == 0;
    if (tf_propose_some(p, model, &tf_strategy_bayes, h->bayes, core, rng, err) ||
        tf_propose_some(p, tf_propose_room(p), &tf_strategy_local, h->local, core, rng, err))
        return -1;
    /* Local out of neighbours and kicks: the model fills in. */
    if (tf_propose_room(p) > 0 &&
        tf_propose_some(p, tf_propose_room(p), &tf_strategy_bayes, h->bayes, core, rng, err))
        return -1;
    return 0;
}

static void hybrid_tell(void *state, struct tf_strategy_core *core, uint64_t config, double time,
                        int status, struct tf_rng *rng)
{
    struct hybrid *h = state;
    tf_strategy_local.tell(h->local, core, config, time, status, rng);
    tf_strategy_bayes.tell(h->bayes, core, config, time, status, rng);
}

const struct tf_strategy_impl tf_strategy_hybrid = {
    .version = TF_STRATEGY_VERSION,
    .name = "hybrid",
    .good_for = "small budgets (up to ~5% of the space) when each measurement is expensive: "
                "local search and a GP model taking turns",
    .options = hybrid_options,
    .create = hybrid_create,
    .ask = hybrid_ask,
    .tell = hybrid_tell,
    .destroy = hybrid_destroy,
};
