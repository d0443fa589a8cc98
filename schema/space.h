/* space.h - enumerating the valid configurations of a kernel for one problem
 * on one device.
 *
 * A configuration is its mixed-radix index (parameter 0 most significant), so
 * index order is enumeration order. Each constraint is attached to the level of
 * the last parameter it reads; a depth-first walk binds parameters one by one
 * and evaluates each constraint as soon as its parameters are bound, so an
 * invalid prefix prunes its whole subtree instead of being tested leaf by leaf.
 * The walk is memoised (space.c): the valid values of a level are computed
 * once per combination of the earlier values that constraints there or deeper
 * read, so counting and listing evaluate each such combination once, and
 * trailing levels that no constraint reads are multiplied out. A cursor
 * streams the valid indices in order and resumes from any index.
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
 * where the memo cannot share (constraints that read every parameter). */
#define TF_SPACE_EXACT_LIMIT (UINT64_C(1) << 24)
/* A random search's sample, drawn up front, has at most this many
 * configurations (tf_space_random refuses more). */
#define TF_SPACE_SAMPLE_MAX (UINT64_C(1) << 26)

/* The memory one space's memo may take by default (tf_space_set_memo_limit);
 * past it, walks evaluate what the memo does not hold, as a plain pruned walk. */
#define TF_SPACE_MEMO_BYTES ((size_t)64 << 20)

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
/* As tf_space_create, with only the constraints c for which use[c] is true
 * (use NULL: all of them); `tunefarm space` counts with subsets to say what
 * each constraint removes. */
struct tf_space *tf_space_create_subset(const struct tf_kernel *k, int problem,
                                        const struct tf_device *dev, const bool *use,
                                        struct tf_error *err);
/* Free (its cursors must be destroyed first, tf_space_next's excepted); accepts NULL. */
void tf_space_destroy(struct tf_space *s);
/* The level at which constraint c is evaluated: the position of the last
 * parameter it reads; -1 if it reads none (evaluated once, first); -2 if the
 * space does not use it. Evaluation order is by level, then file order. */
int tf_space_constraint_level(const struct tf_space *s, int c);
/* Cap the memo at `bytes` (0: no memo, a plain pruned walk; the tests use it). */
void tf_space_set_memo_limit(struct tf_space *s, size_t bytes);
/* Bytes the memo holds now. */
size_t tf_space_memo_bytes(const struct tf_space *s);
/* Number of valid configurations with index in [lo, hi). -1 + err on an evaluation error. */
int tf_space_count(struct tf_space *s, uint64_t lo, uint64_t hi, uint64_t *count,
                   struct tf_error *err);
/* The first valid index >= `from` and < `hi` into *next; returns 1 if found, 0 if
 * none, -1 + err on an evaluation error. Streams: a call with `from` one past
 * the index the previous call returned goes on from there (the space keeps a
 * cursor) instead of descending from the root. */
int tf_space_next(struct tf_space *s, uint64_t from, uint64_t hi, uint64_t *next,
                  struct tf_error *err);

/* A depth-first cursor over the valid configurations of a space, in index
 * order. Its whole state is its position: an index such that every valid
 * index below it (and at or above where it started) has been returned, so a
 * walk saved as that number resumes exactly with tf_space_cursor_seek or a
 * new cursor. Several cursors may walk one space (one thread at a time). */
struct tf_space_cursor;
/* A cursor at `from`. `activity` non-NULL: its walks call the poll hook with
 * that text ("listing the valid configurations") and the position's share;
 * NULL: only while the space is counting or sampling. Never fails. */
struct tf_space_cursor *tf_space_cursor_create(struct tf_space *s, uint64_t from,
                                               const char *activity);
/* Free; accepts NULL. */
void tf_space_cursor_destroy(struct tf_space_cursor *c);
/* The next valid index below `hi` into *index: 1; 0 if there is none below
 * `hi` (the cursor then stays at the first index it has not passed, so a
 * later call with a larger `hi` goes on) or none at all; -1 + err on an
 * evaluation error or a stop (seek before going on). */
int tf_space_cursor_next(struct tf_space_cursor *c, uint64_t hi, uint64_t *index,
                         struct tf_error *err);
/* Move to `from` (the next call returns the first valid index >= from). */
void tf_space_cursor_seek(struct tf_space_cursor *c, uint64_t from);
/* Where the cursor stands: save it to resume the walk later. */
uint64_t tf_space_cursor_position(const struct tf_space_cursor *c);
/* The value index of each parameter in the configuration last returned. */
const int *tf_space_cursor_digits(const struct tf_space_cursor *c);
/* The valid configuration of rank `rank` (0-based, in index order) into
 * *index: 1; 0 if there are not that many; -1 + err on an evaluation error or
 * a stop. Descends by subtree counts (memoised), so drawing ranks uniformly
 * draws configurations uniformly at the cost of a few node visits each. */
int tf_space_unrank(struct tf_space *s, uint64_t rank, uint64_t *index, struct tf_error *err);
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
