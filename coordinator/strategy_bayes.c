/* strategy_bayes.c - Bayesian optimisation: a GP on warped log time, expected improvement.
 *
 * Features: each parameter with more than one value becomes one coordinate in
 * [0, 1]: log2 of its value when all values are positive numbers (tile and
 * block sizes act multiplicatively), the value itself otherwise, the value's
 * position for an enum. An integer parameter whose values are not all powers
 * of two gets a second coordinate, its alignment (how many times 2 divides the
 * value, tf_alignment_coords; option `align`): a GPU kernel is fast at sizes
 * that divide warps, banks and the problem, and a smooth function of log2
 * cannot single out 128 among 112, 128 and 144. The model: a GP with a Matern
 * 5/2 kernel with one length scale per coordinate (ARD: the parameters matter
 * very unequally; an alignment coordinate shares its parameter's, option
 * `tie`: a small budget's few results estimate fewer hyperparameters better,
 * bench/results/tie-2026-12-08.md), a signal and a noise variance, on the
 * standardised log time, warped (option `warp`) by the Box-Cox power under
 * which the training times look most normal (tf_boxcox_lambda). Run times
 * have a long slow tail; a negative power compresses it, so the model spends
 * its resolution on the fast end, where the search's answer is, not on how
 * slow the slow ones are.
 * A failed configuration counts as bad (the worst log time seen plus
 * `fail_penalty`, then warped: a negative power compresses the penalty with
 * the tail, so a failure sits just above the slowest result), not as missing. The hyperparameters maximise
 * the marginal likelihood (analytic gradient, iRprop- from a fixed start).
 * The numerics are LAPACK's (Cholesky dpotrf/dpotrs/dpotri, triangular solves
 * dtrtrs) through LAPACKE.
 *
 * Candidates: every valid configuration when the space has at most
 * `enumerate` of them (enumerated once, through next_valid); otherwise a pool
 * of random valid ones plus the neighbours of the best results. Each ask
 * proposes the unseen candidates of highest expected improvement. Pending
 * proposals (asked, not yet told) enter the model as fantasies at its mean
 * (the kriging believer): it is not moved, but its uncertainty around them
 * shrinks, so asynchronous workers are sent to different places; within one
 * batch, a candidate whose distance to a pending one is below `spread` waits
 * while others remain.
 *
 * Cost: the model is refitted (hyperparameters, factor, every candidate's
 * prediction) at base points of the history - each result up to 64 (every
 * 4th with transfer rows), then every 8th, then every 32nd after 256 - and
 * the results after the base
 * point and the fantasies enter by exact GP conditioning on the cached base
 * (a few milliseconds per ask; each extra's covariance with the candidates
 * computed once per base, struct extra_cols). The base is a memo of the history's first
 * results, the pending set a function of the proposals, so ask stays a
 * function of seed and the order of results. The training set is at most
 * `max_train` results (the best half and the latest half), the
 * hyperparameter fit's at most `fit_train`, each plus the transfer rows.
 *
 * Transfer (a warm start's other devices, tf_strategy_prior): up to `transfer`
 * of their results join the training set, each source's log times warped and
 * standardised on their own, with one more coordinate, 0 on this device and 1
 * on a source. Its length scale is fitted like the others: long where the
 * sources rank configurations as this device does, short where they do not.
 * With few results of its own, a device unlike the fleet is still misled
 * (bench/results/transfer-2026-12-06.md: A100). Candidates and fantasies are
 * this device's (coordinate 0); only its own results set the incumbent. With
 * transfer rows the model starts at the 4th result (base points every 4th). */
#include "strategy.h"
#include "strategy_common.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/hash.h"

/* The GP's hyperparameters, all in log space: a length scale per feature
 * dimension, then the signal variance, then the noise variance. */
#define MAX_DIMS (2 * TF_STRATEGY_MAX_PARAMS + 1) /* a value and an alignment per parameter, a source */
enum { HYP_SIGNAL = MAX_DIMS, HYP_NOISE, HYP_COUNT };

/* Pending proposals the model takes in as fantasies, at most. */
#define MAX_FANTASIES 64

/* A time's model value over a training set: its log (a failure: the worst
 * log time + fail_penalty), through the Box-Cox power `lambda` relative to the
 * set's fastest (l0; lambda 0 without `warp`), then standardised by mean and
 * sd. */
struct ystd {
    double mean, sd, fail, l0, lambda;
};

/* Configurations told or pending after a base point ("extras") and what an
 * ask needs of each, from the base alone: k(B, e), K_B^-1 k(B, e), and every
 * candidate's base posterior covariance with it,
 *   S_B(c, e) = k(c, e) - k(B, c)^T K_B^-1 k(B, e).
 * An extra stays one for several asks (told: until the next base point;
 * pending: until told), so each column is computed once per base instead of
 * once per ask: the O(m n) per extra and ask that dominated an ask's CPU
 * (bench/results/hostile-review-2026-12-07f-cpu.md, B). A column is a
 * function of the base and the configuration alone, so whether it was kept
 * never changes a proposal. */
struct extra_cols {
    size_t count, cap;          /* slots used, slots allocated (EXTRA_COLS at most) */
    uint64_t *cfg;              /* per slot: the configuration */
    uint64_t *stamp;            /* per slot: the ask that last used it */
    double *kb, *u;             /* per slot, n each: k(B, e), K_B^-1 k(B, e) */
    double *s;                  /* per slot, m each: S_B(c, e) */
    uint64_t held;              /* doubles held (counted in kc_held) */
};

/* Slots at most: more than an ask's extras can be (at most 31 told after a
 * base point, MAX_FANTASIES pending), so one ask's columns always fit. */
#define EXTRA_COLS 128

/* The model fitted at a base point of the history (a memo of its first `at`
 * results), with every candidate's prediction from it. */
struct base {
    size_t at;                  /* SIZE_MAX: none */
    size_t n;                   /* training results */
    double *X, *L, *alpha;      /* n x max(dims, 1) features, Cholesky factor (lower), K^-1 y */
    struct ystd ys;
    const uint64_t *cands;      /* the enumerated valid set, or pool */
    uint64_t *pool;             /* owned: drawn for this base when not enumerated */
    size_t m;
    double *mu, *var;           /* per candidate, given the base */
    double *Kc;                 /* m x n: k(candidate, training), when it fits KC_MAX */
    double *Xc;                 /* m x max(dims, 1): the candidates' features, likewise */
    uint64_t kc_count;          /* Kc's and Xc's doubles (counted in kc_held) */
    double hyp[HYP_COUNT];      /* its hyperparameters */
    struct extra_cols cols;     /* the extras' columns seen at this base */
};

/* Doubles the candidates' kernel rows (and features) may take (64 MiB) in one search, and
 * in all of a run's searches together (256 MiB: a fleet job has a search per
 * kernel, problem and device class); beyond, each ask computes them again:
 * the very same values, so proposals never depend on it, only the CPU time. */
#define KC_MAX (UINT64_C(8) << 20)
#define KC_TOTAL_MAX (UINT64_C(32) << 20)

/* Doubles held by every search's cache (the coordinator is single-threaded). */
static uint64_t kc_held;

struct bayes {
    int64_t init, enumerate, max_train, fit_train, fit_steps, align, transfer, warp, tie;
    double spread, fail_penalty, xi;
    int dims;
    int task;                                 /* the source coordinate's dim (-1: no transfer) */
    int map[TF_STRATEGY_MAX_PARAMS];          /* parameter -> dim (-1: single value) */
    double *feat[TF_STRATEGY_MAX_PARAMS];     /* per parameter: coordinate of each value */
    int amap[TF_STRATEGY_MAX_PARAMS];         /* parameter -> its alignment's dim (-1: none) */
    double *afeat[TF_STRATEGY_MAX_PARAMS];    /* per parameter: alignment of each value */
    int lead[MAX_DIMS];                       /* per dim: the dim whose length it shares (-1: its own) */
    uint64_t *cands;                          /* enumerated valid set (or NULL) */
    size_t ncands;
    struct base base;
    uint64_t asks;                            /* asks scored: the extras' LRU clock */
};

static const struct tf_strategy_option_spec bayes_options[] = {
    {"init", "12", "random configurations before the model proposes"},
    {"enumerate", "20000", "score every valid configuration when there are at most this many"},
    {"max_train", "256", "results the model is fitted on at most (best half + latest half)"},
    {"spread", "0.1", "minimum distance of a batch proposal to a pending one (unit feature space)"},
    {"fail_penalty", "1.0", "a failure's log time above the worst measured one"},
    {"xi", "0.01", "exploration margin of expected improvement (standardised units)"},
    {"fit_steps", "100", "steps of the marginal-likelihood fit (length scales, signal, noise)"},
    {"fit_train", "128",
     "results that fit uses at most (best half + latest half of the training set; above "
     "max_train: all of it)"},
    {"align", "1", "1: an integer parameter's power-of-two alignment is a feature of its own"},
    {"transfer", "144", "other devices' results (warm start) the model also learns from, at most; 0: none"},
    {"warp", "1", "1: the model's output is the log time through a Box-Cox power fitted to the results; 0: the log time"},
    {"tie", "1", "1: a parameter's alignment coordinate shares its value coordinate's length scale (one weight per parameter to learn)"},
    {NULL, NULL, NULL},
};

/* Coordinates of the model's feature space: the parameters' (one constant
 * one when no parameter has two values), then the source coordinate. */
static int ndims(const struct bayes *b)
{
    return b->task >= 0 ? b->task + 1 : b->dims > 0 ? b->dims : 1;
}

/* A configuration's features on this device (source coordinate 0). */
static void features(const struct bayes *b, const struct tf_strategy_core *core, uint64_t cfg,
                     double *x)
{
    int d[TF_STRATEGY_MAX_PARAMS];
    const struct tf_strategy_space *sp = tf_core_space(core);
    x[0] = 0; /* no parameter with two values: one constant coordinate */
    if (b->task >= 0)
        x[b->task] = 0;
    tf_core_decode(core, cfg, d);
    for (int p = 0; p < sp->nparams; p++)
        if (b->map[p] >= 0) {
            x[b->map[p]] = b->feat[p][d[p]];
            if (b->amap[p] >= 0)
                x[b->amap[p]] = b->afeat[p][d[p]];
        }
}

static int bayes_create(struct tf_strategy_core *core, void **state, struct tf_error *err)
{
    struct bayes *b = tf_xcalloc(1, sizeof *b);
    *state = b;
    b->base.at = SIZE_MAX;
    b->task = -1;
    const struct tf_strategy_space *sp = tf_core_space(core);
    if (tf_core_opt_int(core, "init", 2, 1 << 30, &b->init, err) ||
        tf_core_opt_int(core, "enumerate", 0, INT64_C(1) << 22, &b->enumerate, err) ||
        tf_core_opt_int(core, "max_train", 8, 4096, &b->max_train, err) ||
        tf_core_opt_double(core, "spread", 0, 10, &b->spread, err) ||
        tf_core_opt_double(core, "fail_penalty", 0, 100, &b->fail_penalty, err) ||
        tf_core_opt_double(core, "xi", 0, 10, &b->xi, err) ||
        tf_core_opt_int(core, "fit_steps", 1, 10000, &b->fit_steps, err) ||
        tf_core_opt_int(core, "fit_train", 8, 4096, &b->fit_train, err) ||
        tf_core_opt_int(core, "align", 0, 1, &b->align, err) ||
        tf_core_opt_int(core, "transfer", 0, 1024, &b->transfer, err) ||
        tf_core_opt_int(core, "warp", 0, 1, &b->warp, err) ||
        tf_core_opt_int(core, "tie", 0, 1, &b->tie, err))
        return -1;
    for (int k = 0; k < MAX_DIMS; k++)
        b->lead[k] = -1;
    for (int p = 0; p < sp->nparams; p++) {
        int r = sp->radix[p];
        b->map[p] = b->amap[p] = -1;
        if (r < 2)
            continue;
        b->map[p] = b->dims++;
        b->feat[p] = tf_xmalloc((size_t)r * sizeof(double));
        bool positive = sp->values[p] != NULL;
        for (int v = 0; positive && v < r; v++)
            positive = sp->values[p][v] > 0;
        double lo = INFINITY, hi = -INFINITY;
        for (int v = 0; v < r; v++) {
            double f = !sp->values[p] ? v : positive ? log2(sp->values[p][v]) : sp->values[p][v];
            b->feat[p][v] = f;
            lo = fmin(lo, f);
            hi = fmax(hi, f);
        }
        for (int v = 0; v < r; v++)
            b->feat[p][v] = hi > lo ? (b->feat[p][v] - lo) / (hi - lo) : 0;
        if (b->align && sp->values[p] && (b->afeat[p] = tf_alignment_coords(sp->values[p], r))) {
            b->amap[p] = b->dims++;
            if (b->tie)
                b->lead[b->amap[p]] = b->map[p];
        }
    }
    if (sp->valid_count && sp->valid_count <= (uint64_t)b->enumerate && sp->next_valid) {
        b->cands = tf_xmalloc(sp->valid_count * sizeof *b->cands);
        uint64_t x = 0;
        while (b->ncands < sp->valid_count && x < sp->cartesian) {
            int r = sp->next_valid(sp->ctx, x, sp->cartesian, &x, err);
            if (r < 0)
                return -1;
            if (r == 0)
                break;
            b->cands[b->ncands++] = x++;
        }
    }
    return 0;
}

static const double hyp_lo[3] = {-4.6, -4.6, -13.8}; /* length 0.01, signal 0.01, noise 1e-6 */
static const double hyp_hi[3] = {4.6, 4.6, 0.0};     /* length 100, signal 100, noise 1 */

static double hyp_bound(int k, double v, bool upper)
{
    int c = k < HYP_SIGNAL ? 0 : k == HYP_SIGNAL ? 1 : 2;
    return upper ? fmin(v, hyp_hi[c]) : fmax(v, hyp_lo[c]);
}

/* Matern 5/2 with ARD: sf2 (1 + s + s^2/3) exp(-s), s = sqrt(5) r,
 * r^2 = sum_k (a_k - b_k)^2 / l_k^2 (inv_l2 holds 1 / l_k^2). */
static double matern52(const double *a, const double *b, int d, const double *inv_l2, double sf2,
                       double *r_out)
{
    double r2 = 0;
    for (int k = 0; k < d; k++)
        r2 += (a[k] - b[k]) * (a[k] - b[k]) * inv_l2[k];
    double r = sqrt(r2), s = sqrt(5.0) * r;
    if (r_out)
        *r_out = r;
    return sf2 * (1 + s + s * s / 3.0) * exp(-s);
}

/* a . b with four partial sums: the candidates' loop is bound by the adds'
 * latency otherwise. */
static double dot(const double *a, const double *b, size_t n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++)
        s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

static double dist2(const double *a, const double *b, int d)
{
    double s = 0;
    for (int i = 0; i < d; i++)
        s += (a[i] - b[i]) * (a[i] - b[i]);
    return s;
}

/* K = kernel matrix + noise on the diagonal, Cholesky-factored in place
 * (lower), alpha = K^-1 y; returns the log marginal likelihood, or -INFINITY
 * when K is not positive definite. */
static double gp_factor(size_t n, int d, const double *X, const double *y, const double *hyp,
                        double *K, double *alpha)
{
    double inv_l2[MAX_DIMS];
    for (int k = 0; k < d; k++)
        inv_l2[k] = exp(-2 * hyp[k]);
    double sf2 = exp(hyp[HYP_SIGNAL]), noise = exp(hyp[HYP_NOISE]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++)
            K[i * n + j] = K[j * n + i] =
                matern52(X + i * d, X + j * d, d, inv_l2, sf2, NULL) + (i == j ? noise : 0);
    if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, K, (lapack_int)n))
        return -INFINITY;
    memcpy(alpha, y, n * sizeof *y);
    LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, 1, K, (lapack_int)n, alpha, 1);
    double ll = 0;
    for (size_t i = 0; i < n; i++)
        ll -= 0.5 * y[i] * alpha[i] + log(K[i * n + i]);
    return ll;
}

/* Gradient of the log marginal likelihood in the hyperparameters, from the
 * factor and alpha of gp_factor (K is overwritten): 0.5 tr((a a^T - K^-1) dK). */
static void gp_gradient(size_t n, int d, const double *X, const double *hyp, double *K,
                        const double *alpha, double *grad)
{
    double inv_l2[MAX_DIMS];
    for (int k = 0; k < d; k++)
        inv_l2[k] = exp(-2 * hyp[k]);
    double sf2 = exp(hyp[HYP_SIGNAL]), noise = exp(hyp[HYP_NOISE]);
    LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, K, (lapack_int)n); /* lower: K^-1 */
    for (int k = 0; k < d; k++)
        grad[k] = 0;
    grad[HYP_SIGNAL] = grad[HYP_NOISE] = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++) {
            double w = alpha[i] * alpha[j] - K[i * n + j];
            double wt = i == j ? 0.5 * w : w; /* the symmetric pair counted once */
            if (i == j) {
                grad[HYP_SIGNAL] += wt * sf2;
                grad[HYP_NOISE] += wt * noise;
                continue;
            }
            double r, kv = matern52(X + i * d, X + j * d, d, inv_l2, sf2, &r);
            grad[HYP_SIGNAL] += wt * kv;
            /* dk/dlog l_k = sf2 (5/3) (1 + sqrt5 r) exp(-sqrt5 r) dx_k^2 / l_k^2 */
            double g = wt * sf2 * (5.0 / 3.0) * (1 + sqrt(5.0) * r) * exp(-sqrt(5.0) * r);
            const double *a = X + i * d, *b = X + j * d;
            for (int k = 0; k < d; k++)
                grad[k] += g * (a[k] - b[k]) * (a[k] - b[k]) * inv_l2[k];
        }
}

/* Hyperparameters by maximum marginal likelihood: iRprop- (sign-based steps,
 * robust without a line search) from a fixed start, so the result is a
 * function of the training data alone. A dim k with lead[k] >= 0 (lead NULL:
 * none) shares that dim's length scale: it is not a free hyperparameter, its
 * gradient adds to the leader's. 0, or 1 when the stop hook ended it (hyp is
 * then unusable). */
static int gp_fit_hyper(size_t n, int d, const double *X, const double *y, const int *lead,
                        int iterations, double *hyp)
{
    int idx[MAX_DIMS + 2], m = 0;
    for (int k = 0; k < d; k++) {
        hyp[k] = 0; /* length 1 in the unit feature space */
        if (!lead || lead[k] < 0)
            idx[m++] = k;
    }
    hyp[HYP_SIGNAL] = 0, idx[m++] = HYP_SIGNAL;
    hyp[HYP_NOISE] = log(1e-2), idx[m++] = HYP_NOISE;
    double *K = tf_xmalloc(n * n * sizeof *K), *alpha = tf_xmalloc(n * sizeof *alpha);
    double grad[HYP_COUNT], prev[HYP_COUNT] = {0}, step[HYP_COUNT], best[HYP_COUNT];
    for (int i = 0; i < m; i++)
        step[idx[i]] = 0.1;
    memcpy(best, hyp, sizeof best);
    double best_ll = -INFINITY;
    int stopped = 0;
    for (int it = 0; it < iterations; it++) {
        /* A step costs a factorisation and an inverse: about n^3 / 3 flops
         * each, seconds at n = 4096, so the hook is asked at every one. */
        if (tf_strategy_stop_requested()) {
            stopped = 1;
            break;
        }
        double ll = gp_factor(n, d, X, y, hyp, K, alpha);
        if (!isfinite(ll)) {
            hyp[HYP_NOISE] = hyp_bound(HYP_NOISE, hyp[HYP_NOISE] + 1, true); /* regularise */
            continue;
        }
        if (ll > best_ll)
            best_ll = ll, memcpy(best, hyp, sizeof best);
        gp_gradient(n, d, X, hyp, K, alpha, grad);
        for (int k = 0; lead && k < d; k++)
            if (lead[k] >= 0)
                grad[lead[k]] += grad[k];
        for (int i = 0; i < m; i++) {
            int k = idx[i];
            double sign = grad[k] * prev[k];
            if (sign > 0)
                step[k] = fmin(step[k] * 1.2, 1.0);
            else if (sign < 0)
                step[k] = fmax(step[k] * 0.5, 1e-6), grad[k] = 0;
            double v = hyp[k] + (grad[k] > 0 ? step[k] : grad[k] < 0 ? -step[k] : 0);
            hyp[k] = hyp_bound(k, hyp_bound(k, v, true), false);
            prev[k] = grad[k];
        }
        for (int k = 0; lead && k < d; k++)
            if (lead[k] >= 0)
                hyp[k] = hyp[lead[k]];
    }
    memcpy(hyp, best, sizeof best);
    free(K);
    free(alpha);
    return stopped;
}

/* The training set among the first h results: all of them, or the best half
 * and the latest half (max_train in all). Returns how many, indices in use. */
static size_t training_set(const struct tf_strategy_core *core, size_t h, size_t max_train,
                           size_t *use)
{
    if (h <= max_train) {
        for (size_t i = 0; i < h; i++)
            use[i] = i;
        return h;
    }
    size_t nr, n = 0;
    size_t *rank = tf_rank_history(core, &nr);
    char *taken = tf_xcalloc(h, 1);
    for (size_t i = 0; i < nr && n < max_train / 2; i++)
        if (rank[i] < h)
            taken[rank[i]] = 1, use[n++] = rank[i];
    for (size_t i = h; i-- > 0 && n < max_train;)
        if (!taken[i])
            use[n++] = i;
    free(taken);
    free(rank);
    return n;
}

static double ystd_of(const struct ystd *s, double time)
{
    const double l = isfinite(time) ? log(time) : s->fail;
    return (tf_boxcox(l, s->l0, s->lambda) - s->mean) / s->sd;
}

/* The transform (l0, lambda) of log times l[0..n) (failures: -INFINITY or
 * INFINITY, skipped): the power fitted to them when `warp` is on, else the
 * log (lambda 0). */
static void warp_of(const struct bayes *b, const double *l, size_t n, struct ystd *s)
{
    double l0 = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(l[i]))
            l0 = fmin(l0, l[i]);
    s->l0 = isfinite(l0) ? l0 : 0;
    s->lambda = b->warp ? tf_boxcox_lambda(l, n) : 0;
}

/* v[0..n) -> (v - mean) / sd in place (sd 1 when there is no spread); the
 * mean and sd into *mean and *sd. */
static void standardise(double *v, size_t n, double *mean, double *sd)
{
    double sum = 0, var = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    *mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        var += (v[i] - *mean) * (v[i] - *mean);
    *sd = n > 1 && var > 0 ? sqrt(var / (double)(n - 1)) : 1;
    for (size_t i = 0; i < n; i++)
        v[i] = (v[i] - *mean) / *sd;
}

/* Features and model values of the results use[0..n): through the
 * transform (failure value, l0, lambda) fitted to these results, or `given`'s
 * (the hyperparameter fit's subset takes the whole training set's, so both
 * see one output shape), then standardised over these results. */
static struct ystd training_data(const struct bayes *b, const struct tf_strategy_core *core,
                                 const size_t *use, size_t n, const struct ystd *given,
                                 double *X, double *y)
{
    const uint64_t *cfg;
    const double *time;
    tf_core_history(core, &cfg, &time);
    int d = ndims(b);
    struct ystd raw = {0, 1, 0, 0, 0};
    if (given) {
        raw.fail = given->fail, raw.l0 = given->l0, raw.lambda = given->lambda;
    } else {
        double worst = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            y[i] = log(time[use[i]]); /* INFINITY for a failure */
            if (isfinite(y[i]))
                worst = fmax(worst, y[i]);
        }
        raw.fail = (isfinite(worst) ? worst : 0) + b->fail_penalty;
        warp_of(b, y, n, &raw);
    }
    struct ystd s = raw;
    for (size_t i = 0; i < n; i++) {
        features(b, core, cfg[use[i]], X + i * (size_t)d);
        y[i] = ystd_of(&raw, time[use[i]]);
    }
    standardise(y, n, &s.mean, &s.sd);
    return s;
}

/* How many transfer results join the training set: the first `transfer`
 * given (the plan lists every source's fastest first). */
static size_t transfer_rows(const struct bayes *b, const struct tf_strategy_core *core)
{
    const uint64_t *cfg;
    const double *time;
    const int *src;
    const size_t n = tf_core_prior(core, &cfg, &time, &src);
    return n < (size_t)b->transfer ? n : (size_t)b->transfer;
}

/* The first np transfer results as training rows: features with the source
 * coordinate 1, log times through the source's own transform (warp_of) and
 * standardised per source over these rows (a source's times are comparable
 * only with each other). */
static void prior_data(const struct bayes *b, const struct tf_strategy_core *core, size_t np,
                       double *X, double *y)
{
    const uint64_t *cfg;
    const double *time;
    const int *src;
    tf_core_prior(core, &cfg, &time, &src);
    const int d = ndims(b);
    for (size_t i = 0; i < np; i++) {
        features(b, core, cfg[i], X + i * (size_t)d);
        X[i * (size_t)d + b->task] = 1;
    }
    char *done = tf_xcalloc(np ? np : 1, 1);
    double *l = tf_xmalloc((np ? np : 1) * sizeof *l);
    size_t *rows = tf_xmalloc((np ? np : 1) * sizeof *rows);
    for (size_t i = 0; i < np; i++) {
        if (done[i])
            continue;
        size_t k = 0;
        for (size_t j = i; j < np; j++)
            if (src[j] == src[i])
                rows[k] = j, l[k++] = log(time[j]), done[j] = 1;
        struct ystd w;
        warp_of(b, l, k, &w);
        for (size_t r = 0; r < k; r++)
            l[r] = tf_boxcox(l[r], w.l0, w.lambda);
        standardise(l, k, &w.mean, &w.sd);
        for (size_t r = 0; r < k; r++)
            y[rows[r]] = l[r];
    }
    free(rows);
    free(l);
    free(done);
}

/* Where the model is refitted (hyperparameters and factor): at every history
 * length up to 64 (every 4th with transfer results, which make each fit
 * several times dearer), then every 8 results up to 256, then every 32;
 * results after that point enter by conditioning (see the file's comment).
 * A function of the history length alone. */
static size_t base_point(size_t nh, bool transfer)
{
    size_t step = nh < 64 ? (transfer ? 4 : 1) : nh < 256 ? 8 : 32;
    return nh - nh % step;
}

/* Forget every extra's column (a new base, or the search's end). */
static void cols_clear(struct extra_cols *x)
{
    free(x->cfg);
    free(x->stamp);
    free(x->kb);
    free(x->u);
    free(x->s);
    kc_held -= x->held;
    *x = (struct extra_cols){0};
}

static void base_clear(struct base *m)
{
    free(m->X);
    free(m->L);
    free(m->alpha);
    free(m->mu);
    free(m->var);
    free(m->pool);
    free(m->Kc);
    free(m->Xc);
    kc_held -= m->kc_count;
    cols_clear(&m->cols);
    *m = (struct base){.at = SIZE_MAX};
}

/* Candidate c's features: the base's copy, or computed into `spare`. */
static const double *candidate_features(const struct bayes *b, const struct tf_strategy_core *core,
                                        const struct base *m, size_t c, double *spare)
{
    if (m->Xc)
        return m->Xc + c * (size_t)ndims(b);
    features(b, core, m->cands[c], spare);
    return spare;
}

/* The model on the first h results: hyperparameters, factor, candidates and
 * their predictions. 0, -1 when it cannot be fitted (m->m stays 0), or 1 when
 * the stop hook ended it (the base is then cleared: the next ask builds it). */
static int base_build(struct bayes *b, struct tf_strategy_core *core, size_t h)
{
    struct base *m = &b->base;
    base_clear(m);
    m->at = h;
    const uint64_t *cfg;
    const double *time;
    tf_core_history(core, &cfg, &time);
    /* The transfer rows first, then this device's results. */
    const size_t np = transfer_rows(b, core);
    b->task = np ? (b->dims > 0 ? b->dims : 1) : -1;
    int d = ndims(b);
    size_t *use = tf_xmalloc(h * sizeof *use);
    size_t nt = training_set(core, h, (size_t)b->max_train, use);
    m->n = np + nt;
    m->X = tf_xmalloc(m->n * (size_t)d * sizeof *m->X);
    double *y = tf_xmalloc(m->n * sizeof *y);
    prior_data(b, core, np, m->X, y);
    m->ys = training_data(b, core, use, nt, NULL, m->X + np * (size_t)d, y + np);
    /* The hyperparameters from a smaller set when the training set is large:
     * each fit step costs a factorisation and an inverse. */
    int stopped = 0;
    if (nt <= (size_t)b->fit_train) {
        stopped = gp_fit_hyper(m->n, d, m->X, y, b->lead, (int)b->fit_steps, m->hyp);
    } else {
        size_t nf = training_set(core, h, (size_t)b->fit_train, use);
        double *Xf = tf_xmalloc((np + nf) * (size_t)d * sizeof *Xf);
        double *yf = tf_xmalloc((np + nf) * sizeof *yf);
        memcpy(Xf, m->X, np * (size_t)d * sizeof *Xf);
        memcpy(yf, y, np * sizeof *yf);
        training_data(b, core, use, nf, &m->ys, Xf + np * (size_t)d, yf + np);
        stopped = gp_fit_hyper(np + nf, d, Xf, yf, b->lead, (int)b->fit_steps, m->hyp);
        free(Xf);
        free(yf);
    }
    free(use);
    if (stopped) {
        free(y);
        base_clear(m);
        return 1;
    }
    m->L = tf_xmalloc(m->n * m->n * sizeof *m->L);
    m->alpha = tf_xmalloc(m->n * sizeof *m->alpha);
    /* Fitted on fewer results, the hyperparameters may not factor all of
     * them: more noise, as the fit itself does. */
    int bumps = 0;
    while (!isfinite(gp_factor(m->n, d, m->X, y, m->hyp, m->L, m->alpha))) {
        if (++bumps > 4 || m->hyp[HYP_NOISE] >= hyp_hi[2]) {
            free(y);
            return -1;
        }
        m->hyp[HYP_NOISE] = hyp_bound(HYP_NOISE, m->hyp[HYP_NOISE] + 2.3, true);
    }
    free(y);
    /* Candidates: the enumerated valid set, or a pool drawn for this base. */
    if (b->cands) {
        m->cands = b->cands;
        m->m = b->ncands;
    } else {
        size_t cap = 2048 + 16 * 64;
        m->pool = tf_xmalloc(cap * sizeof *m->pool);
        size_t nr;
        size_t *rank = tf_rank_history(core, &nr);
        int ncap = tf_neighbours_cap(core);
        uint64_t *nb = tf_xmalloc((size_t)ncap * sizeof *nb);
        for (size_t i = 0, k = 0; i < nr && k < 16 && isfinite(time[rank[i]]); i++) {
            if (rank[i] >= h)
                continue; /* the base sees the first h results only */
            k++;
            int c = tf_neighbours(core, cfg[rank[i]], 2, nb, ncap);
            for (int j = 0; j < c && m->m < cap; j++)
                if (tf_core_valid(core, nb[j]))
                    m->pool[m->m++] = nb[j];
        }
        free(nb);
        free(rank);
        /* Its own stream, from the seed and h, and seen or not (scoring skips
         * the seen): the pool is a function of the seed and the first h
         * results, not of what happened to be pending when it was drawn. */
        struct tf_rng rng = {tf_core_seed(core) ^ (h * 0x9e3779b97f4a7c15ull)};
        for (int tries = 0; tries < 2048 && m->m < cap; tries++) {
            uint64_t x;
            if (!tf_core_random_valid(core, &rng, &x))
                break;
            m->pool[m->m++] = x;
        }
        m->cands = m->pool;
    }
    /* Predictions in blocks: V = L^-1 K*, mean = K*^T alpha, var = k** - |V|^2. */
    double inv_l2[MAX_DIMS];
    for (int k = 0; k < d; k++)
        inv_l2[k] = exp(-2 * m->hyp[k]);
    double sf2 = exp(m->hyp[HYP_SIGNAL]), noise = exp(m->hyp[HYP_NOISE]);
    size_t n = m->n;
    m->mu = tf_xcalloc(m->m ? m->m : 1, sizeof *m->mu);
    m->var = tf_xmalloc((m->m ? m->m : 1) * sizeof *m->var);
    const uint64_t kc = (uint64_t)m->m * n;
    if (kc <= KC_MAX && kc_held + kc <= KC_TOTAL_MAX) {
        m->Kc = tf_xmalloc((m->m ? m->m : 1) * n * sizeof *m->Kc);
        m->kc_count = kc;
        kc_held += kc;
    }
    /* Each extra's column and each ask's batch need the candidates' features
     * again: decoding a configuration costs about what a kernel value does. */
    const uint64_t xc_count = (uint64_t)m->m * (uint64_t)d;
    if (xc_count <= KC_MAX && kc_held + xc_count <= KC_TOTAL_MAX) {
        m->Xc = tf_xmalloc((m->m ? m->m : 1) * (size_t)d * sizeof *m->Xc);
        m->kc_count += xc_count;
        kc_held += xc_count;
    }
    const size_t block = 512;
    double *Ks = tf_xmalloc(n * block * sizeof *Ks);
    double xc_one[MAX_DIMS];
    for (size_t c0 = 0; c0 < m->m; c0 += block) {
        /* A block costs about n^2 * 512 flops: seconds with 4096 results. */
        if (tf_strategy_stop_requested()) {
            free(Ks);
            base_clear(m);
            return 1;
        }
        size_t mb = m->m - c0 < block ? m->m - c0 : block;
        for (size_t c = 0; c < mb; c++) {
            double *xc = m->Xc ? m->Xc + (c0 + c) * (size_t)d : xc_one;
            features(b, core, m->cands[c0 + c], xc);
            for (size_t i = 0; i < n; i++)
                Ks[i * mb + c] = matern52(m->X + i * d, xc, d, inv_l2, sf2, NULL);
        }
        for (size_t i = 0; i < n; i++)
            for (size_t c = 0; c < mb; c++) {
                m->mu[c0 + c] += Ks[i * mb + c] * m->alpha[i];
                if (m->Kc)
                    m->Kc[(c0 + c) * n + i] = Ks[i * mb + c];
            }
        LAPACKE_dtrtrs(LAPACK_ROW_MAJOR, 'L', 'N', 'N', (lapack_int)n, (lapack_int)mb, m->L,
                       (lapack_int)n, Ks, (lapack_int)mb);
        for (size_t c = 0; c < mb; c++) {
            double v = sf2 + noise;
            for (size_t i = 0; i < n; i++)
                v -= Ks[i * mb + c] * Ks[i * mb + c];
            m->var[c0 + c] = v;
        }
    }
    free(Ks);
    return 0;
}

/* The slots are allocated at the first extra of a base: EXTRA_COLS if the
 * run's cache budget has room for them, else only `need` (this ask's extras),
 * each recomputed at the next ask. */
static void cols_alloc(struct extra_cols *x, size_t n, size_t m, size_t need)
{
    const uint64_t per = (uint64_t)m + 2 * (uint64_t)n;
    size_t cap = EXTRA_COLS;
    if (per * cap > KC_MAX || kc_held + per * cap > KC_TOTAL_MAX)
        cap = need ? need : 1;
    else
        x->held = per * cap, kc_held += x->held;
    x->cap = cap;
    x->cfg = tf_xmalloc(cap * sizeof *x->cfg);
    x->stamp = tf_xmalloc(cap * sizeof *x->stamp);
    x->kb = tf_xmalloc(cap * (n ? n : 1) * sizeof *x->kb);
    x->u = tf_xmalloc(cap * (n ? n : 1) * sizeof *x->u);
    x->s = tf_xmalloc(cap * (m ? m : 1) * sizeof *x->s);
}

/* The slot of extra `cfg` at the base, its column computed if it has none:
 * a free slot, or the one least recently used by an ask before this one
 * (`stamp`; this ask's own extras are never evicted, EXTRA_COLS exceeding
 * any ask's extras). */
static size_t cols_get(const struct bayes *b, const struct tf_strategy_core *core,
                       struct extra_cols *x, uint64_t cfg, uint64_t stamp)
{
    for (size_t k = 0; k < x->count; k++)
        if (x->cfg[k] == cfg) {
            x->stamp[k] = stamp;
            return k;
        }
    size_t k = x->count;
    if (k == x->cap) {
        k = SIZE_MAX;
        for (size_t j = 0; j < x->count; j++)
            if (x->stamp[j] != stamp && (k == SIZE_MAX || x->stamp[j] < x->stamp[k]))
                k = j;
        if (k == SIZE_MAX)
            tf_die("bayes: more extras in one ask than %zu column slots", x->cap);
    } else {
        x->count++;
    }
    const struct base *m = &b->base;
    const int d = ndims(b);
    const size_t n = m->n;
    double inv_l2[MAX_DIMS];
    for (int j = 0; j < d; j++)
        inv_l2[j] = exp(-2 * m->hyp[j]);
    const double sf2 = exp(m->hyp[HYP_SIGNAL]);
    double xe[MAX_DIMS];
    features(b, core, cfg, xe);
    double *kb = x->kb + k * n, *u = x->u + k * n, *col = x->s + k * m->m;
    for (size_t i = 0; i < n; i++)
        kb[i] = u[i] = matern52(m->X + i * d, xe, d, inv_l2, sf2, NULL);
    LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, 1, m->L, (lapack_int)n, u, 1);
    double *kcb = m->Kc ? NULL : tf_xmalloc((n ? n : 1) * sizeof *kcb); /* k(training, c) */
    double xc_one[MAX_DIMS];
    for (size_t c = 0; c < m->m; c++) {
        const double *xc = candidate_features(b, core, m, c, xc_one);
        const double *kr = m->Kc ? m->Kc + c * n : kcb;
        if (!m->Kc)
            for (size_t i = 0; i < n; i++)
                kcb[i] = matern52(m->X + i * d, xc, d, inv_l2, sf2, NULL);
        col[c] = matern52(xc, xe, d, inv_l2, sf2, NULL) - dot(kr, u, n);
    }
    free(kcb);
    x->cfg[k] = cfg;
    x->stamp[k] = stamp;
    return k;
}

/* Expected improvement of every unseen candidate, given the base, the results
 * told after it (told[0..nt), their times) and the pending proposals
 * (pend[0..np), fantasies at the model's mean: the kriging believer). Exact GP
 * conditioning on the extras E = told + pending:
 *   mean(c) = mean_B(c) + S(c,T) S(T,T)^-1 (y_T - mean_B(T))
 *   var(c)  = var_B(c) - S(c,E) S(E,E)^-1 S(E,c)
 * with S the base's posterior covariance (+ noise on E's diagonal); S(c, e)
 * comes from the extras' columns (struct extra_cols). A believer's value is
 * its mean, so pending ones change variances only.
 * score[c] = -INFINITY for seen candidates. When S(E,E) is not positive
 * definite, the pending ones are left out, then the told ones too. */
static void score_extras(struct bayes *b, const struct tf_strategy_core *core,
                         const uint64_t *told, const double *told_time, size_t nt,
                         const uint64_t *pend, size_t np, double ybest, double *score)
{
    struct base *m = &b->base;
    struct extra_cols *x = &m->cols;
    const int d = ndims(b);
    const size_t n = m->n;
    const double noise = exp(m->hyp[HYP_NOISE]), sf2 = exp(m->hyp[HYP_SIGNAL]);
    size_t ne = nt + np;
    if (ne && !x->cap)
        cols_alloc(x, n, m->m, ne);
    const uint64_t stamp = ++b->asks;
    size_t *slot = tf_xmalloc((ne ? ne : 1) * sizeof *slot);
    for (size_t e = 0; e < ne; e++)
        slot[e] = cols_get(b, core, x, e < nt ? told[e] : pend[e - nt], stamp);
    double *S = tf_xmalloc((ne ? ne * ne : 1) * sizeof *S);
    double *beta = tf_xmalloc((nt ? nt : 1) * sizeof *beta);
    /* beta = y_T - mean_B(T) */
    for (size_t e = 0; e < nt; e++)
        beta[e] = ystd_of(&m->ys, told_time[e]) - dot(x->kb + slot[e] * n, m->alpha, n);
    double inv_l2[MAX_DIMS];
    for (int j = 0; j < d; j++)
        inv_l2[j] = exp(-2 * m->hyp[j]);
    double *XE = tf_xmalloc((ne ? ne : 1) * (size_t)d * sizeof *XE);
    for (size_t e = 0; e < ne; e++)
        features(b, core, x->cfg[slot[e]], XE + e * (size_t)d);
    while (ne) {
        for (size_t e = 0; e < ne; e++)
            for (size_t f = 0; f <= e; f++)
                S[e * ne + f] = matern52(XE + e * (size_t)d, XE + f * (size_t)d, d, inv_l2, sf2,
                                         NULL) -
                                dot(x->kb + slot[e] * n, x->u + slot[f] * n, n) +
                                (e == f ? noise : 0);
        if (!LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)ne, S, (lapack_int)ne))
            break;
        /* Not positive definite (cancellation, with hyperparameters at their
         * bounds): without the fantasies, then without any extras (the base
         * alone). */
        ne = ne > nt ? nt : 0;
        nt = nt < ne ? nt : ne;
    }
    if (nt) /* beta = S(T,T)^-1 r_T: the leading block of the factor */
        LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', (lapack_int)nt, 1, S, (lapack_int)ne, beta, 1);
    double *w = tf_xmalloc((ne ? ne : 1) * sizeof *w);
    for (size_t c = 0; c < m->m; c++) {
        if (tf_core_seen(core, m->cands[c])) {
            score[c] = -INFINITY;
            continue;
        }
        double mu = m->mu[c], var = m->var[c];
        for (size_t e = 0; e < ne; e++)
            w[e] = x->s[slot[e] * m->m + c];
        for (size_t e = 0; e < nt; e++)
            mu += w[e] * beta[e];
        /* forward solve L_E w' = w, var -= |w'|^2 */
        for (size_t e = 0; e < ne; e++) {
            for (size_t f = 0; f < e; f++)
                w[e] -= S[e * ne + f] * w[f];
            w[e] /= S[e * ne + e];
            var -= w[e] * w[e];
        }
        double s = sqrt(fmax(var, 1e-12));
        double z = (ybest - mu - b->xi) / s;
        score[c] = (ybest - mu - b->xi) * 0.5 * erfc(-z / sqrt(2.0)) +
                   s * exp(-0.5 * z * z) / sqrt(2 * M_PI);
    }
    free(w);
    free(XE);
    free(S);
    free(beta);
    free(slot);
    if (!x->held)
        cols_clear(x); /* no room in the run's budget: this ask's alone */
}

static int cmp_hashed(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b, hx = tf_mix64(x), hy = tf_mix64(y);
    if (hx != hy)
        return hx < hy ? -1 : 1;
    return x < y ? -1 : x > y;
}

static const double *tf_bayes_sort_key; /* qsort has no context; single-threaded */

static int cmp_score(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double sx = tf_bayes_sort_key[x], sy = tf_bayes_sort_key[y];
    if (sx != sy)
        return sx > sy ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int bayes_ask(void *state, struct tf_strategy_core *core, struct tf_rng *rng,
                     struct tf_propose *p, struct tf_error *err)
{
    (void)rng;
    struct bayes *b = state;
    const uint64_t *cfg;
    const double *time;
    size_t nh = tf_core_history(core, &cfg, &time);
    if (tf_core_proposed(core) < (uint64_t)b->init || nh < 2)
        return 0; /* random start, filled by the core */
    size_t h = base_point(nh, transfer_rows(b, core) > 0);
    if (h < 2)
        return 0; /* with transfer rows, the model starts at the 4th result */
    if (b->base.at != h) {
        const int built = base_build(b, core, h);
        if (built > 0)
            return tf_error_set(err, TF_ERR_INTERRUPTED,
                                "stopped while the model was fitted on %zu results", h);
        if (built < 0)
            return 0; /* the model could not be fitted: the core fills at random */
    }
    struct base *m = &b->base;
    if (!m->m)
        return 0;
    size_t npend = tf_core_pending(core, NULL, 0);
    uint64_t *pending = tf_xmalloc((npend ? npend : 1) * sizeof *pending);
    tf_core_pending(core, pending, npend);
    double ybest = INFINITY;
    for (size_t i = 0; i < nh; i++)
        ybest = fmin(ybest, ystd_of(&m->ys, time[i]));
    double *score = tf_xmalloc(m->m * sizeof *score);
    /* At most MAX_FANTASIES of them, a spread-out subset (by a hash of the
     * configuration, not the lowest indices), the same for the same set. */
    size_t nfant = npend < MAX_FANTASIES ? npend : MAX_FANTASIES;
    uint64_t *fant = tf_xmalloc((npend ? npend : 1) * sizeof *fant);
    memcpy(fant, pending, npend * sizeof *fant);
    if (npend > nfant)
        qsort(fant, npend, sizeof *fant, cmp_hashed);
    score_extras(b, core, cfg + h, time + h, nh - h, fant, nfant, ybest, score);
    size_t *idx = tf_xmalloc(m->m * sizeof *idx), ns = 0;
    for (size_t i = 0; i < m->m; i++)
        if (score[i] > -INFINITY)
            idx[ns++] = i;
    tf_bayes_sort_key = score;
    qsort(idx, ns, sizeof *idx, cmp_score);
    /* A batch keeps `spread` away from pending proposals while others remain. */
    int d = ndims(b);
    size_t cpend = npend + (size_t)tf_propose_room(p);
    double *pend = tf_xmalloc((cpend ? cpend : 1) * (size_t)d * sizeof *pend);
    for (size_t i = 0; i < npend; i++)
        features(b, core, pending[i], pend + i * (size_t)d);
    double xc_one[MAX_DIMS];
    for (int pass = 0; pass < 2 && tf_propose_room(p) > 0; pass++)
        for (size_t k = 0; k < ns && tf_propose_room(p) > 0; k++) {
            uint64_t x = m->cands[idx[k]];
            if (tf_propose_has(p, x))
                continue;
            if (pass == 0 && b->spread > 0) {
                const double *xc = candidate_features(b, core, m, idx[k], xc_one);
                bool near = false;
                for (size_t j = 0; j < npend && !near; j++)
                    near = dist2(xc, pend + j * (size_t)d, d) < b->spread * b->spread;
                if (near)
                    continue;
            }
            if (tf_propose_add(p, x) && npend < cpend)
                features(b, core, x, pend + npend++ * (size_t)d);
        }
    free(pend);
    free(idx);
    free(score);
    free(fant);
    free(pending);
    return 0;
}

static void bayes_tell(void *state, struct tf_strategy_core *core, uint64_t config, double time,
                       int status, struct tf_rng *rng)
{
    (void)state, (void)core, (void)config, (void)time, (void)status, (void)rng;
}

static void bayes_destroy(void *state)
{
    struct bayes *b = state;
    if (!b)
        return;
    for (int p = 0; p < TF_STRATEGY_MAX_PARAMS; p++)
        free(b->feat[p]), free(b->afeat[p]);
    base_clear(&b->base);
    free(b->cands);
    free(b);
}

const struct tf_strategy_impl tf_strategy_bayes = {
    .version = TF_STRATEGY_VERSION,
    .name = "bayes",
    .good_for = "small budgets (up to ~5% of the space) when each measurement is expensive: "
                "a GP model alone, the best measured from 2% of the space; about 10-15 ms of "
                "coordinator CPU per proposal (more with a warm start's transfer rows)",
    .options = bayes_options,
    .create = bayes_create,
    .ask = bayes_ask,
    .tell = bayes_tell,
    .destroy = bayes_destroy,
};
