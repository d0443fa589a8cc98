/* strategy_brute_force.c - every valid configuration, in index order.
 *
 * Proposes the lowest valid index not yet seen. The cursor is a memo (the
 * lowest index below which everything valid has been seen): it changes no
 * proposal, only skips work, so ask stays a function of the seen set. The
 * space's next_valid (tf_space_next) skips invalid regions without testing
 * them one by one. */
#include "strategy.h"

#include <stdlib.h>

struct brute {
    uint64_t cursor;
};

static int brute_create(struct tf_strategy_core *core, void **state, struct tf_error *err)
{
    (void)core;
    (void)err;
    *state = tf_xcalloc(1, sizeof(struct brute));
    return 0;
}

static int brute_ask(void *state, struct tf_strategy_core *core, struct tf_rng *rng,
                     struct tf_propose *p, struct tf_error *err)
{
    (void)rng;
    struct brute *b = state;
    const struct tf_strategy_space *sp = tf_core_space(core);
    uint64_t x = b->cursor;
    bool contiguous = true; /* everything valid below x is seen */
    while (tf_propose_room(p) > 0 && x < sp->cartesian) {
        if (sp->next_valid) {
            struct tf_error e;
            tf_error_clear(&e);
            int r = sp->next_valid(sp->ctx, x, sp->cartesian, &x, &e);
            if (r < 0) { /* the space's check failed: the search cannot go on in order */
                if (err)
                    *err = e;
                return -1;
            }
            if (r == 0)
                break; /* none left */
        }
        if (!tf_core_seen(core, x)) {
            if (tf_propose_add(p, x))
                contiguous = false;
            else if (contiguous && tf_core_valid(core, x))
                contiguous = false; /* valid and unseen yet refused: keep the cursor here */
        }
        if (contiguous)
            b->cursor = x + 1;
        x++;
    }
    return 0;
}

static void brute_tell(void *state, struct tf_strategy_core *core, uint64_t config,
                       double time, int status, struct tf_rng *rng)
{
    (void)state, (void)core, (void)config, (void)time, (void)status, (void)rng;
}

static void brute_destroy(void *state) { free(state); }

const struct tf_strategy_impl tf_strategy_brute_force = {
    .version = TF_STRATEGY_VERSION,
    .name = "brute_force",
    .good_for = "spaces small enough to measure whole; the reference every other strategy is "
                "judged against",
    .options = NULL,
    .create = brute_create,
    .ask = brute_ask,
    .tell = brute_tell,
    .destroy = brute_destroy,
};
