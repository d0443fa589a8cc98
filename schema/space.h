/* space.h - enumerating the valid configurations of a kernel for one problem
 * on one device.
 *
 * A configuration is its mixed-radix index (parameter 0 most significant), so
 * index order is enumeration order. Each constraint is attached to the level of
 * the last parameter it reads; a depth-first walk binds parameters one by one
 * and evaluates each constraint as soon as its parameters are bound, so an
 * invalid prefix prunes its whole subtree instead of being tested leaf by leaf.
 * Counting also multiplies out trailing levels that no constraint reads.
 * Long walks call a poll hook (progress, and a way to stop on a signal). */
#ifndef TF_SPACE_H
#define TF_SPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "device.h"
#include "error.h"
#include "expr.h"
#include "kernel.h"

struct tf_space; /* a kernel + problem + device, with constraints by level */

/* Spaces of at most this many configurations (the Cartesian product) are
 * counted exactly before a random sample is drawn; larger ones are sampled by
 * rejection straight from the product, and counted only if rejection cannot
 * fill the budget (schema/job.md). Counting 2^24 leaves takes about a second
 * where no constraint prunes. */
#define TF_SPACE_EXACT_LIMIT (UINT64_C(1) << 24)

/* Called now and then (every 65536 steps) while a space is counted or
 * sampled: the kernel and problem, what is being done, the fraction done
 * (0..1) and the seconds since it began. Returns true to stop: the call in
 * progress then fails with TF_ERR_INTERRUPTED. One hook per process (NULL:
 * none); tf_space_next alone never calls it. */
typedef bool (*tf_space_poll_fn)(void *ctx, const char *kernel, const char *problem,
                                 const char *activity, double fraction, double elapsed);
void tf_space_set_poll(tf_space_poll_fn fn, void *ctx);

/* Prepare enumeration of `k` for problem `problem` on `dev` (NULL: properties 0). */
struct tf_space *tf_space_create(const struct tf_kernel *k, int problem,
                                 const struct tf_device *dev, struct tf_error *err);
/* Free; accepts NULL. */
void tf_space_destroy(struct tf_space *s);
/* Number of valid configurations with index in [lo, hi). -1 + err on an evaluation error. */
int tf_space_count(struct tf_space *s, uint64_t lo, uint64_t hi, uint64_t *count,
                   struct tf_error *err);
/* The first valid index >= `from` and < `hi` into *next; returns 1 if found, 0 if
 * none, -1 + err on an evaluation error. */
int tf_space_next(struct tf_space *s, uint64_t from, uint64_t hi, uint64_t *next,
                  struct tf_error *err);
/* True if configuration `index` satisfies every constraint (a full check). */
int tf_space_is_valid(struct tf_space *s, uint64_t index, bool *valid, struct tf_error *err);
/* Draw `budget` distinct valid configurations (`valid` > budget of them exist)
 * into a new ascending array *out of *n: a stream seeded by `seed` and the
 * kernel and problem names (not the device, so every GPU model samples alike
 * where it can), this problem's default (tf_kernel_default_for) first when it
 * is valid. Dense spaces are sampled by rejection, sparse ones by drawing ranks
 * and walking once. */
int tf_space_sample(struct tf_space *s, uint64_t valid, uint64_t budget, uint64_t seed,
                    uint64_t **out, uint64_t *n, struct tf_error *err);
/* The configurations a random search with `budget` measures: *out (new,
 * ascending, *n of them), or *out NULL and *n = *valid when every valid
 * configuration fits the budget. *valid is the number of valid
 * configurations, exact unless *estimated (a space larger than
 * TF_SPACE_EXACT_LIMIT sampled by rejection: the fraction of valid draws
 * times the Cartesian size). Deterministic for a given seed, space and device:
 * a resumed run and `tunefarm compile` draw the same sample. */
int tf_space_random(struct tf_space *s, uint64_t budget, uint64_t seed, uint64_t **out,
                    uint64_t *n, uint64_t *valid, bool *estimated, struct tf_error *err);
/* The Cartesian size (product of the value counts). */
uint64_t tf_space_cartesian(const struct tf_space *s);

#endif
