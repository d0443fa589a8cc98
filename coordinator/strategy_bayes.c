/* strategy_bayes.c - Bayesian optimisation: a Gaussian process on log time, expected improvement.
 *
 * Features: each parameter with more than one value becomes one coordinate in
 * [0, 1]: log2 of its value when all values are positive numbers (tile and
 * block sizes act multiplicatively), the value itself otherwise, the value's
 * position for an enum. The model: a GP with a Matern 5/2 kernel of one
 * length scale over these coordinates, on standardised log(time); a failed
 * configuration counts as bad (the worst log time seen plus `fail_penalty`),
 * not as missing. The length scale and the noise are chosen from a small grid
 * by marginal likelihood at each refit. The numerics are LAPACK's (Cholesky
 * dpotrf, triangular solves dtrtrs) through LAPACKE.
 *
 * Candidates: every valid configuration when the space has at most
 * `enumerate` of them (enumerated once, through next_valid); otherwise a pool
 * of random valid ones plus the neighbours of the best results. Each ask
 * proposes the unseen candidates of highest expected improvement; pending
 * proposals are excluded, and, so that a batch does not pile onto one spot,
 * a candidate whose distance to a pending one is below `spread` (in the unit
 * feature space) waits for the next round while others remain.
 *
 * The model and its scores are a memo of the history (fitted lazily at the
 * first ask after new results, keyed by the number of results): they change
 * no proposal, so ask stays a function of seed and results. The training set
 * is at most `max_train` results (the best half and the latest half), which
 * bounds each refit for long searches. */
#include "strategy.h"
#include "strategy_common.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct bayes {
    int64_t init, enumerate, max_train;
    double spread, fail_penalty, xi;
    int dims;
    int map[TF_STRATEGY_MAX_PARAMS];          /* parameter -> dim (-1: single value) */
    double *feat[TF_STRATEGY_MAX_PARAMS];     /* per parameter: coordinate of each value */
    uint64_t *cands;                          /* enumerated valid set (or NULL) */
    size_t ncands;
    /* memo: scores of cands for history length `fitted_at` */
    size_t fitted_at;
    double *score;
};

static const struct tf_strategy_option_spec bayes_options[] = {
    {"init", "12", "random configurations before the model proposes"},
    {"enumerate", "200000", "score every valid configuration when there are at most this many"},
    {"max_train", "256", "results the model is fitted on at most (best half + latest half)"},
    {"spread", "0.1", "minimum distance of a batch proposal to a pending one (unit feature space)"},
    {"fail_penalty", "1.0", "a failure's log time above the worst measured one"},
    {"xi", "0.01", "exploration margin of expected improvement (standardised units)"},
    {NULL, NULL, NULL},
};

static void features(const struct bayes *b, const struct tf_strategy_core *core, uint64_t cfg,
                     double *x)
{
    int d[TF_STRATEGY_MAX_PARAMS];
    const struct tf_strategy_space *sp = tf_core_space(core);
    tf_core_decode(core, cfg, d);
    for (int p = 0; p < sp->nparams; p++)
        if (b->map[p] >= 0)
            x[b->map[p]] = b->feat[p][d[p]];
}

static int bayes_create(struct tf_strategy_core *core, void **state, struct tf_error *err)
{
    struct bayes *b = tf_xcalloc(1, sizeof *b);
    *state = b;
    const struct tf_strategy_space *sp = tf_core_space(core);
    if (tf_core_opt_int(core, "init", 2, 1 << 30, &b->init, err) ||
        tf_core_opt_int(core, "enumerate", 0, INT64_C(1) << 40, &b->enumerate, err) ||
        tf_core_opt_int(core, "max_train", 8, 4096, &b->max_train, err) ||
        tf_core_opt_double(core, "spread", 0, 10, &b->spread, err) ||
        tf_core_opt_double(core, "fail_penalty", 0, 100, &b->fail_penalty, err) ||
        tf_core_opt_double(core, "xi", 0, 10, &b->xi, err))
        return -1;
    for (int p = 0; p < sp->nparams; p++) {
        int r = sp->radix[p];
        b->map[p] = -1;
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
        b->score = tf_xmalloc((b->ncands ? b->ncands : 1) * sizeof *b->score);
        b->fitted_at = SIZE_MAX;
    }
    return 0;
}

static double matern52(double r2, double ls)
{
    double r = sqrt(r2) / ls, s5 = sqrt(5.0) * r;
    return (1 + s5 + 5.0 / 3.0 * r * r) * exp(-s5);
}

static double dist2(const double *a, const double *b, int d)
{
    double s = 0;
    for (int i = 0; i < d; i++)
        s += (a[i] - b[i]) * (a[i] - b[i]);
    return s;
}

/* Fit on the history and fill score[] (expected improvement) for cands[0..m). */
static int fit_and_score(struct bayes *b, const struct tf_strategy_core *core,
                         const uint64_t *cands, size_t m, double *score)
{
    const uint64_t *cfg;
    const double *time;
    size_t nh = tf_core_history(core, &cfg, &time);
    size_t nr;
    size_t *rank = tf_rank_history(core, &nr);
    /* Training set: all, or the best half + the latest half. */
    size_t n = nh;
    size_t *use = tf_xmalloc((nh ? nh : 1) * sizeof *use);
    if (nh <= (size_t)b->max_train) {
        for (size_t i = 0; i < nh; i++)
            use[i] = i;
    } else {
        char *taken = tf_xcalloc(nh, 1);
        n = 0;
        for (size_t i = 0; i < (size_t)b->max_train / 2; i++)
            taken[rank[i]] = 1, use[n++] = rank[i];
        for (size_t i = nh; i-- > 0 && n < (size_t)b->max_train;)
            if (!taken[i])
                use[n++] = i;
        free(taken);
    }
    int d = b->dims > 0 ? b->dims : 1;
    double *X = tf_xcalloc(n * (size_t)d, sizeof *X), *y = tf_xmalloc(n * sizeof *y);
    double worst = -INFINITY, best = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(time[use[i]])) {
            worst = fmax(worst, log(time[use[i]]));
            best = fmin(best, log(time[use[i]]));
        }
    if (!isfinite(worst))
        worst = best = 0;
    double mean = 0, var = 0;
    for (size_t i = 0; i < n; i++) {
        features(b, core, cfg[use[i]], X + i * (size_t)d);
        y[i] = isfinite(time[use[i]]) ? log(time[use[i]]) : worst + b->fail_penalty;
        mean += y[i];
    }
    mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        var += (y[i] - mean) * (y[i] - mean);
    double sd = n > 1 && var > 0 ? sqrt(var / (double)(n - 1)) : 1;
    for (size_t i = 0; i < n; i++)
        y[i] = (y[i] - mean) / sd;
    double ybest = (best - mean) / sd;

    /* Hyperparameters by marginal likelihood over a small grid. */
    static const double ls_grid[] = {0.15, 0.25, 0.4, 0.6, 1.0};
    static const double noise_grid[] = {1e-3, 3e-2};
    double *K = tf_xmalloc(n * n * sizeof *K), *alpha = tf_xmalloc(n * sizeof *alpha);
    double best_ll = -INFINITY, ls = 0.4, noise = 1e-3;
    int rc = -1;
    for (int pass = 0; pass < 2; pass++)
        for (size_t gi = 0; gi < sizeof ls_grid / sizeof *ls_grid; gi++)
            for (size_t gj = 0; gj < sizeof noise_grid / sizeof *noise_grid; gj++) {
                double l = pass ? ls : ls_grid[gi], nz = pass ? noise : noise_grid[gj];
                for (size_t i = 0; i < n; i++)
                    for (size_t j = 0; j <= i; j++)
                        K[i * n + j] = K[j * n + i] =
                            matern52(dist2(X + i * d, X + j * d, d), l) + (i == j ? nz : 0);
                if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, K, (lapack_int)n))
                    continue;
                memcpy(alpha, y, n * sizeof *y);
                LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, 1, K, (lapack_int)n, alpha,
                               1);
                if (pass) {
                    rc = 0; /* K holds the chosen factor */
                    goto fitted;
                }
                double ll = 0;
                for (size_t i = 0; i < n; i++)
                    ll -= 0.5 * y[i] * alpha[i] + log(K[i * n + i]);
                if (ll > best_ll) {
                    best_ll = ll;
                    ls = l;
                    noise = nz;
                }
                if (pass == 0 && gi + 1 == sizeof ls_grid / sizeof *ls_grid &&
                    gj + 1 == sizeof noise_grid / sizeof *noise_grid && !isfinite(best_ll))
                    goto fitted; /* nothing factored: rc stays -1 */
            }
fitted:
    if (rc == 0) {
        /* Predict in blocks: V = L^-1 K*, mean = K*^T alpha, var = k** - |V|^2. */
        const size_t block = 512;
        double *Ks = tf_xmalloc(n * block * sizeof *Ks);
        double xc[TF_STRATEGY_MAX_PARAMS];
        for (size_t c0 = 0; c0 < m; c0 += block) {
            size_t mb = m - c0 < block ? m - c0 : block;
            for (size_t c = 0; c < mb; c++) {
                features(b, core, cands[c0 + c], xc);
                for (size_t i = 0; i < n; i++)
                    Ks[i * mb + c] = matern52(dist2(X + i * d, xc, d), ls);
            }
            double *mu = tf_xcalloc(mb, sizeof *mu);
            for (size_t i = 0; i < n; i++)
                for (size_t c = 0; c < mb; c++)
                    mu[c] += Ks[i * mb + c] * alpha[i];
            LAPACKE_dtrtrs(LAPACK_ROW_MAJOR, 'L', 'N', 'N', (lapack_int)n, (lapack_int)mb, K,
                           (lapack_int)n, Ks, (lapack_int)mb);
            for (size_t c = 0; c < mb; c++) {
                double v = 1.0 + noise;
                for (size_t i = 0; i < n; i++)
                    v -= Ks[i * mb + c] * Ks[i * mb + c];
                double s = sqrt(fmax(v, 1e-12));
                double z = (ybest - mu[c] - b->xi) / s;
                double ei = (ybest - mu[c] - b->xi) * 0.5 * erfc(-z / sqrt(2.0)) +
                            s * exp(-0.5 * z * z) / sqrt(2 * M_PI);
                score[c0 + c] = ei;
            }
            free(mu);
        }
        free(Ks);
    }
    free(K);
    free(alpha);
    free(X);
    free(y);
    free(use);
    free(rank);
    return rc;
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
    (void)err;
    struct bayes *b = state;
    const struct tf_strategy_space *sp = tf_core_space(core);
    const uint64_t *cfg;
    const double *time;
    size_t nh = tf_core_history(core, &cfg, &time);
    if (tf_core_proposed(core) < (uint64_t)b->init || nh < 2)
        return 0; /* random start, filled by the core */
    uint64_t *cands = b->cands, *pool = NULL;
    size_t m = b->ncands;
    double *score = b->score;
    if (!cands) {
        /* A pool: random valid ones and the neighbours of the best results. */
        size_t cap = 2048 + 16 * 64;
        pool = tf_xmalloc(cap * sizeof *pool);
        m = 0;
        size_t nr;
        size_t *rank = tf_rank_history(core, &nr);
        int ncap = 0;
        for (int q = 0; q < sp->nparams; q++)
            ncap += sp->radix[q];
        uint64_t *nb = tf_xmalloc((size_t)ncap * sizeof *nb);
        for (size_t i = 0; i < nr && i < 16 && isfinite(time[rank[i]]); i++) {
            int k = tf_neighbours(core, cfg[rank[i]], 2, nb, ncap);
            for (int j = 0; j < k && m < cap; j++)
                if (!tf_core_seen(core, nb[j]) && tf_core_valid(core, nb[j]))
                    pool[m++] = nb[j];
        }
        free(nb);
        free(rank);
        for (int tries = 0; tries < 2048 && m < cap; tries++) {
            uint64_t x;
            if (!tf_core_random_unseen(core, rng, NULL, &x))
                break;
            pool[m++] = x;
        }
        cands = pool;
        score = tf_xmalloc((m ? m : 1) * sizeof *score);
        if (fit_and_score(b, core, cands, m, score))
            m = 0; /* the model could not be fitted: the core fills at random */
    } else if (b->fitted_at != nh) {
        if (fit_and_score(b, core, cands, m, score))
            m = 0;
        else
            b->fitted_at = nh; /* memo of the history: changes no proposal */
    }
    if (m) {
        size_t *idx = tf_xmalloc(m * sizeof *idx);
        for (size_t i = 0; i < m; i++)
            idx[i] = i;
        tf_bayes_sort_key = score;
        qsort(idx, m, sizeof *idx, cmp_score);
        /* Pending proposals: spread the batch away from them. */
        int d = b->dims > 0 ? b->dims : 1;
        size_t npend = 0, cpend = 64;
        double *pend = tf_xmalloc(cpend * (size_t)d * sizeof *pend);
        for (size_t i = 0; i < m; i++)
            if (tf_core_seen(core, cands[i]) && !tf_core_told_time(core, cands[i], &(double){0})) {
                if (npend == cpend) {
                    cpend *= 2;
                    pend = tf_xrealloc(pend, cpend * (size_t)d * sizeof *pend);
                }
                features(b, core, cands[i], pend + npend++ * (size_t)d);
            }
        double xc[TF_STRATEGY_MAX_PARAMS];
        for (int pass = 0; pass < 2 && tf_propose_room(p) > 0; pass++)
            for (size_t k = 0; k < m && tf_propose_room(p) > 0; k++) {
                uint64_t x = cands[idx[k]];
                if (tf_core_seen(core, x) || tf_propose_has(p, x))
                    continue;
                if (pass == 0 && b->spread > 0) {
                    features(b, core, x, xc);
                    bool near = false;
                    for (size_t j = 0; j < npend && !near; j++)
                        near = dist2(xc, pend + j * (size_t)d, d) < b->spread * b->spread;
                    if (near)
                        continue;
                }
                if (tf_propose_add(p, x) && npend < cpend) {
                    features(b, core, x, pend + npend++ * (size_t)d);
                }
            }
        free(pend);
        free(idx);
    }
    if (pool) {
        free(pool);
        free(score);
    }
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
        free(b->feat[p]);
    free(b->cands);
    free(b->score);
    free(b);
}

const struct tf_strategy_impl tf_strategy_bayes = {
    .version = TF_STRATEGY_VERSION,
    .name = "bayes",
    .good_for = "the smallest budgets (tens to a few hundred measurements) when each "
                "measurement is expensive; the model costs milliseconds per proposal",
    .options = bayes_options,
    .create = bayes_create,
    .ask = bayes_ask,
    .tell = bayes_tell,
    .destroy = bayes_destroy,
};
