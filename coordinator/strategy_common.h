/* strategy_common.h - helpers the strategy tables share (neighbourhoods, ranking).
 *
 * Internal to coordinator/strategy_*.c. A neighbour changes one parameter:
 * an ordered (numeric) parameter moves to an adjacent value, within `reach`
 * steps; an enum parameter takes any other value. */
#ifndef TF_STRATEGY_COMMON_H
#define TF_STRATEGY_COMMON_H

#include "strategy.h"

/* The told results, ok ones first by time, then failures (arrival order):
 * a new array of indices into the history (*n of them). */
size_t *tf_rank_history(const struct tf_strategy_core *c, size_t *n);
/* A parameter's values' alignment: how many times 2 divides each, scaled to
 * [0, 1] over the values; a new array, or NULL when it says nothing the value
 * does not (fewer than three values, a value that is not a positive integer,
 * only powers of two, one alignment for all). GPU kernels are fast at sizes
 * that divide warps, banks and the problem: 32, 64, 128, 256 among 16..256 in
 * steps of 16, which a smooth function of log2(value) cannot single out. */
double *tf_alignment_coords(const double *values, int n);
/* Box-Cox's exponent for times whose logs are l[0..n), by maximum likelihood
 * over -3, -2.75, ..., 1 (the transform of t / min t is (x^lambda - 1) /
 * lambda, log x at 0): the power under which the times look most normal.
 * Negative for a heavy slow tail. 0 for fewer than three finite values or
 * all alike. */
double tf_boxcox_lambda(const double *l, size_t n);
/* That transform of t / t0 given lt = log t and l0 = log t0. */
double tf_boxcox(double lt, double l0, double lambda);
/* Room enough for any configuration's neighbours (the sum of the radices). */
int tf_neighbours_cap(const struct tf_strategy_core *c);
/* Neighbours of `config` (one parameter changed, see above) into `out` (cap),
 * in a fixed order; returns how many. */
int tf_neighbours(const struct tf_strategy_core *c, uint64_t config, int reach, uint64_t *out,
                  int cap);
/* True when the stop hook (tf_strategy_set_stop) says to stop now. */
bool tf_strategy_stop_requested(void);
/* Shuffle `a` of `n` with `rng` (Fisher-Yates). */
void tf_shuffle_u64(uint64_t *a, int n, struct tf_rng *rng);

#endif
