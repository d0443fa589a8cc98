/* space.c - enumeration and exact counting of valid configurations.
 *
 * The space is the Cartesian product of the parameters' value lists, indexed in
 * mixed radix with parameter 0 most significant, so increasing index is the
 * order of a depth-first walk that binds parameter 0, then 1, and so on. Each
 * constraint is attached to the deepest parameter it reads and evaluated the
 * moment that parameter is bound: a failing prefix discards its whole subtree.
 * Constraints that read no parameter (only sizes and device properties) are
 * evaluated once. For counting, once the walk is past every constrained level
 * and strictly inside the [lo, hi) bounds, the rest of the subtree is all
 * valid and is counted by multiplication. Random samples (tf_space_sample)
 * draw from it with a splitmix64 stream; tf_space_random decides whether a
 * space is small enough to count first (TF_SPACE_EXACT_LIMIT) or is sampled
 * by rejection from the Cartesian product without a count.
 *
 * Counting and sampling step a counter at every node (or draw) and, every
 * 65536 steps, call the process's poll hook with the fraction done, so that a
 * long count shows progress and a signal can stop it (TF_ERR_INTERRUPTED).
 * An evaluation error names the constraint's file:line:col, the problem and
 * the parameter values (tf_kernel_constraint_error). */
#include "space.h"

#include "hash.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct space_level {
    int nconstraints;
    int *constraints;           /* indices into k->constraints */
};

static tf_space_poll_fn poll_fn;
static void *poll_ctx;

void tf_space_set_poll(tf_space_poll_fn fn, void *ctx)
{
    poll_fn = fn;
    poll_ctx = ctx;
}

static double monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct tf_space {
    const struct tf_kernel *k;
    int problem;
    int n;                      /* parameters */
    uint64_t cartesian;
    uint64_t *stride;           /* index weight of each level */
    int *radix;
    bool *suffix_free;          /* [n+1]: no constraint at this level or deeper */
    uint64_t *suffix_product;   /* [n+1]: product of radices from this level on */
    struct space_level *levels;
    bool globally_valid;        /* constraints without parameters hold */
    struct tf_value *slots;
    int *lo_digits, *hi_digits; /* bounds of the current walk (hi inclusive) */
    struct tf_error *err;       /* where the walk reports an evaluation error */
    int *cur;                   /* the digit bound at each level, for progress */
    int depth;                  /* the deepest level bound */
    uint64_t steps;             /* nodes visited or draws made while polling */
    const char *activity;       /* non-NULL while polling: what is being done */
    double started;             /* when that began (monotonic seconds) */
};

/* Start polling for `activity` unless a caller already is; returns whether
 * this call started it (pass to poll_end). */
static bool poll_begin(struct tf_space *s, const char *activity)
{
    if (s->activity != NULL)
        return false;
    s->activity = activity;
    s->started = monotonic_now();
    s->steps = 0;
    return true;
}

static void poll_end(struct tf_space *s, bool began)
{
    if (began)
        s->activity = NULL;
}

/* The share of the index space before the configuration being visited. */
static double walk_fraction(const struct tf_space *s)
{
    double at = 0;
    for (int i = 0; i <= s->depth && i < s->n; i++)
        at += (double)s->cur[i] * (double)s->stride[i];
    return s->cartesian ? at / (double)s->cartesian : 1;
}

/* One step of a polled walk: every 65536 steps, ask the hook. -1 + err
 * (TF_ERR_INTERRUPTED) if it says stop. `fraction` < 0: from the walk. */
static int poll_step(struct tf_space *s, double fraction)
{
    if (s->activity == NULL || poll_fn == NULL || (++s->steps & 0xffff) != 0)
        return 0;
    double f = fraction >= 0 ? fraction : walk_fraction(s);
    double elapsed = monotonic_now() - s->started;
    if (!poll_fn(poll_ctx, s->k->name, s->k->problems[s->problem].name, s->activity, f,
                 elapsed))
        return 0;
    return tf_error_set(s->err, TF_ERR_INTERRUPTED,
                        "stopped by a signal while %s of kernel '%s', problem '%s' (%.0f%% "
                        "done after %.0f s); nothing of it was measured",
                        s->activity, s->k->name, s->k->problems[s->problem].name, 100 * f,
                        elapsed);
}

/* Deepest parameter `e` reads, or -1 if it reads none. */
static int constraint_level(const struct tf_kernel *k, const struct tf_expr *e)
{
    for (int p = k->nparams - 1; p >= 0; p--)
        if (tf_expr_uses_slot(e, p))
            return p;
    return -1;
}

static void space_bind(struct tf_space *s, int level, int digit)
{
    const struct tf_param *p = &s->k->params[level];
    s->cur[level] = digit;
    s->depth = level;
    s->slots[level] = tf_int(p->kind == TF_PARAM_INT ? p->ints[digit] : digit);
}

/* 1 if every constraint of `level` holds, 0 if one fails, -1 on an evaluation error. */
static int level_holds(struct tf_space *s, int level)
{
    const struct space_level *l = &s->levels[level];
    for (int i = 0; i < l->nconstraints; i++) {
        bool ok;
        struct tf_error e;
        tf_error_clear(&e);
        if (tf_expr_eval_bool(s->k->constraints[l->constraints[i]], s->slots, &ok, &e))
            return tf_kernel_constraint_error(s->k, l->constraints[i], s->problem, s->slots, &e,
                                              s->err);
        if (!ok)
            return 0;
    }
    return 1;
}

struct tf_space *tf_space_create(const struct tf_kernel *k, int problem,
                                 const struct tf_device *dev, struct tf_error *err)
{
    if (problem < 0 || problem >= k->nproblems) {
        tf_error_set(err, TF_ERR_SCHEMA, "kernel '%s' has no problem #%d", k->name, problem);
        return NULL;
    }
    struct tf_space *s = tf_xcalloc(1, sizeof *s);
    int n = k->nparams;
    s->k = k;
    s->problem = problem;
    s->n = n;
    s->err = err;
    s->stride = tf_xcalloc((size_t)n + 1, sizeof *s->stride);
    s->radix = tf_xcalloc((size_t)n + 1, sizeof *s->radix);
    s->suffix_free = tf_xcalloc((size_t)n + 1, sizeof *s->suffix_free);
    s->suffix_product = tf_xcalloc((size_t)n + 1, sizeof *s->suffix_product);
    s->levels = tf_xcalloc((size_t)n + 1, sizeof *s->levels);
    s->slots = tf_xcalloc((size_t)k->nslots, sizeof *s->slots);
    s->lo_digits = tf_xcalloc((size_t)n + 1, sizeof *s->lo_digits);
    s->hi_digits = tf_xcalloc((size_t)n + 1, sizeof *s->hi_digits);
    s->cur = tf_xcalloc((size_t)n + 1, sizeof *s->cur);

    s->suffix_product[n] = 1;
    for (int i = n - 1; i >= 0; i--) {
        s->radix[i] = k->params[i].count;
        s->stride[i] = s->suffix_product[i + 1];
        if (__builtin_mul_overflow(s->suffix_product[i + 1], (uint64_t)s->radix[i],
                                   &s->suffix_product[i])) {
            tf_error_set(err, TF_ERR_SCHEMA,
                         "kernel '%s' has more than 2^64 configurations: split a parameter "
                         "list or fix some parameters",
                         k->name);
            goto fail;
        }
    }
    s->cartesian = s->suffix_product[0];

    tf_kernel_bind(k, 0, problem, dev, s->slots);
    s->globally_valid = true;
    for (int c = 0; c < k->nconstraints; c++) {
        const struct tf_expr *e = k->constraints[c];
        int level = constraint_level(k, e);
        if (level < 0) {
            bool ok;
            struct tf_error e2;
            tf_error_clear(&e2);
            if (tf_expr_eval_bool(e, s->slots, &ok, &e2)) {
                tf_kernel_constraint_error(k, c, problem, s->slots, &e2, err);
                goto fail;
            }
            s->globally_valid = s->globally_valid && ok;
            continue;
        }
        struct space_level *l = &s->levels[level];
        l->constraints = tf_xrealloc(l->constraints, sizeof *l->constraints *
                                                         (size_t)(l->nconstraints + 1));
        l->constraints[l->nconstraints++] = c;
    }
    s->suffix_free[n] = true;
    for (int i = n - 1; i >= 0; i--)
        s->suffix_free[i] = s->suffix_free[i + 1] && s->levels[i].nconstraints == 0;
    return s;
fail:
    tf_space_destroy(s);
    return NULL;
}

void tf_space_destroy(struct tf_space *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i <= s->n; i++)
        free(s->levels[i].constraints);
    free(s->levels);
    free(s->stride);
    free(s->radix);
    free(s->suffix_free);
    free(s->suffix_product);
    free(s->slots);
    free(s->lo_digits);
    free(s->hi_digits);
    free(s->cur);
    free(s);
}

uint64_t tf_space_cartesian(const struct tf_space *s) { return s->cartesian; }

static void space_digits(const struct tf_space *s, uint64_t index, int *digits)
{
    for (int i = 0; i < s->n; i++) {
        digits[i] = (int)(index / s->stride[i]);
        index %= s->stride[i];
    }
}

/* Count valid completions below `level`, within the bounds where still tight. */
static int64_t count_walk(struct tf_space *s, int level, bool tight_lo, bool tight_hi)
{
    int vmin = tight_lo ? s->lo_digits[level] : 0;
    int vmax = tight_hi ? s->hi_digits[level] : s->radix[level] - 1;
    int64_t total = 0;
    for (int v = vmin; v <= vmax; v++) {
        space_bind(s, level, v);
        if (poll_step(s, -1))
            return -1;
        int holds = level_holds(s, level);
        if (holds < 0)
            return -1;
        if (!holds)
            continue;
        if (level == s->n - 1) {
            total++;
            continue;
        }
        bool tl = tight_lo && v == vmin, th = tight_hi && v == vmax;
        if (!tl && !th && s->suffix_free[level + 1]) {
            total += (int64_t)s->suffix_product[level + 1];
            continue;
        }
        int64_t sub = count_walk(s, level + 1, tl, th);
        if (sub < 0)
            return -1;
        total += sub;
    }
    return total;
}

int tf_space_count(struct tf_space *s, uint64_t lo, uint64_t hi, uint64_t *count,
                   struct tf_error *err)
{
    s->err = err;
    *count = 0;
    if (hi > s->cartesian)
        hi = s->cartesian;
    if (lo >= hi || !s->globally_valid)
        return 0;
    if (s->n == 0) {
        *count = 1;
        return 0;
    }
    space_digits(s, lo, s->lo_digits);
    space_digits(s, hi - 1, s->hi_digits);
    bool began = poll_begin(s, "counting the valid configurations");
    int64_t c = count_walk(s, 0, true, true);
    poll_end(s, began);
    if (c < 0)
        return -1;
    *count = (uint64_t)c;
    return 0;
}

/* First valid index in the subtree below `level` (>= the lower bound while tight). */
static int next_walk(struct tf_space *s, int level, bool tight, uint64_t prefix, uint64_t hi,
                     uint64_t *out)
{
    int vmin = tight ? s->lo_digits[level] : 0;
    for (int v = vmin; v < s->radix[level]; v++) {
        uint64_t base = prefix + (uint64_t)v * s->stride[level];
        if (base >= hi)
            return 0; /* every later index is past the range */
        space_bind(s, level, v);
        if (poll_step(s, -1))
            return -1;
        int holds = level_holds(s, level);
        if (holds < 0)
            return -1;
        if (!holds)
            continue;
        if (level == s->n - 1) {
            *out = base;
            return 1;
        }
        int rc = next_walk(s, level + 1, tight && v == vmin, base, hi, out);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int tf_space_next(struct tf_space *s, uint64_t from, uint64_t hi, uint64_t *next,
                  struct tf_error *err)
{
    s->err = err;
    if (hi > s->cartesian)
        hi = s->cartesian;
    if (from >= hi || !s->globally_valid)
        return 0;
    if (s->n == 0) {
        *next = 0;
        return 1;
    }
    space_digits(s, from, s->lo_digits);
    return next_walk(s, 0, true, 0, hi, next);
}

int tf_space_is_valid(struct tf_space *s, uint64_t index, bool *valid, struct tf_error *err)
{
    s->err = err;
    *valid = false;
    if (index >= s->cartesian || !s->globally_valid)
        return 0;
    int digits[s->n > 0 ? s->n : 1];
    space_digits(s, index, digits);
    for (int level = 0; level < s->n; level++) {
        space_bind(s, level, digits[level]);
        int holds = level_holds(s, level);
        if (holds < 0)
            return -1;
        if (!holds)
            return 0;
    }
    *valid = true;
    return 0;
}

/* splitmix64: tiny, seedable, good enough to pick configurations. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0, without modulo bias. */
static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = rng_next(s);
    while (x >= limit);
    return x % n;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Open-addressing set of uint64 (capacity a power of two, twice the budget). */
struct u64_set {
    uint64_t *slots;
    uint64_t mask;
};

static bool set_insert(struct u64_set *set, uint64_t v)
{
    uint64_t key = v + 1; /* 0 marks an empty slot */
    for (uint64_t i = (key * 0x9e3779b97f4a7c15ull) & set->mask;; i = (i + 1) & set->mask) {
        if (set->slots[i] == key)
            return false;
        if (set->slots[i] == 0) {
            set->slots[i] = key;
            return true;
        }
    }
}

static uint64_t sample_seed(uint64_t seed, const struct tf_kernel *k, int problem)
{
    struct tf_sha256 h;
    char hex[65];
    tf_sha256_init(&h);
    tf_sha256_update_str(&h, k->name);
    tf_sha256_update_str(&h, k->problems[problem].name);
    tf_sha256_hex(&h, hex);
    return seed ^ strtoull(hex + 48, NULL, 16);
}

int tf_space_sample(struct tf_space *s, uint64_t valid_count, uint64_t budget, uint64_t seed,
                    uint64_t **out, uint64_t *n, struct tf_error *err)
{
    const struct tf_kernel *k = s->k;
    uint64_t cart = s->cartesian, nlist = 0;
    uint64_t rng = sample_seed(seed, k, s->problem);
    uint64_t cap = 1;
    while (cap < 2 * budget + 2)
        cap <<= 1;
    struct u64_set set = {tf_xcalloc(cap, sizeof *set.slots), cap - 1};
    uint64_t *list = tf_xmalloc(sizeof *list * (budget ? budget : 1));
    bool valid;
    bool began = poll_begin(s, "sampling the valid configurations");
    s->err = err;
    *out = NULL;
    *n = 0;
    if (budget >= valid_count) {
        tf_error_set(err, TF_ERR_EVAL, "internal: sampling %llu of %llu configurations",
                     (unsigned long long)budget, (unsigned long long)valid_count);
        goto fail;
    }
    /* This problem's default: with a default that follows the sizes, another
     * problem's may well be invalid here. */
    uint64_t def;
    if (tf_kernel_default_for(k, s->problem, &def)) {
        if (tf_space_is_valid(s, def, &valid, err))
            goto fail;
        if (valid) {
            set_insert(&set, def);
            list[nlist++] = def;
        }
    }
    if ((double)valid_count / (double)cart >= 1e-3) {
        /* Dense: rejection sampling, about budget * cart / valid draws. */
        while (nlist < budget) {
            uint64_t idx = rng_below(&rng, cart);
            if (poll_step(s, (double)nlist / (double)budget) ||
                tf_space_is_valid(s, idx, &valid, err))
                goto fail;
            if (valid && set_insert(&set, idx))
                list[nlist++] = idx;
        }
    } else {
        /* Sparse: pick distinct ranks among the valid ones, then one walk. */
        uint64_t need = budget - nlist, nranks = 0;
        uint64_t *ranks = tf_xmalloc(sizeof *ranks * (need ? need : 1));
        struct u64_set rset = {tf_xcalloc(cap, sizeof *rset.slots), cap - 1};
        while (nranks < need) {
            uint64_t r = rng_below(&rng, valid_count);
            if (set_insert(&rset, r))
                ranks[nranks++] = r;
        }
        free(rset.slots);
        qsort(ranks, nranks, sizeof *ranks, cmp_u64);
        /* One walk over the valid configurations, taking those at the drawn ranks;
         * a second walk tops the sample up if a rank hit the default again. */
        uint64_t idx = 0, at = 0;
        for (uint64_t rank = 0; at < nranks || nlist < budget; rank++) {
            int rc = tf_space_next(s, idx, cart, &idx, err);
            if (rc < 0) {
                free(ranks);
                goto fail;
            }
            if (rc == 0) { /* end of the space: top-up pass from the start */
                idx = 0;
                at = nranks;
                continue;
            }
            bool take = at < nranks ? ranks[at] == rank : true;
            if (take && set_insert(&set, idx))
                list[nlist++] = idx;
            if (at < nranks && ranks[at] == rank)
                at++;
            idx++;
        }
        free(ranks);
    }
    free(set.slots);
    qsort(list, nlist, sizeof *list, cmp_u64);
    poll_end(s, began);
    *out = list;
    *n = nlist;
    return 0;
fail:
    poll_end(s, began);
    free(set.slots);
    free(list);
    return -1;
}

/* Rejection draws from a huge space, before the caller would count it. */
#define SPACE_DRAW_LIMIT (UINT64_C(1) << 22)
/* Draws made at least, for the estimate of the valid fraction. */
#define SPACE_ESTIMATE_DRAWS 1024

/* Draw `budget` distinct valid configurations of a huge space by rejection
 * from its Cartesian product (uniform over the valid ones), this problem's
 * default first when valid, with no count. Returns 0 with *out, *n and the
 * estimate *valid; 1 if SPACE_DRAW_LIMIT + 16 * budget draws did not fill the
 * budget (valid configurations are too rare: the caller counts them); -1 on
 * an evaluation error or a stop. */
static int sample_huge(struct tf_space *s, uint64_t budget, uint64_t seed, uint64_t **out,
                       uint64_t *n, uint64_t *valid_out, struct tf_error *err)
{
    const struct tf_kernel *k = s->k;
    uint64_t rng = sample_seed(seed, k, s->problem), nlist = 0, draws = 0, hits = 0;
    uint64_t cap = 1;
    while (cap < 2 * budget + 2)
        cap <<= 1;
    struct u64_set set = {tf_xcalloc(cap, sizeof *set.slots), cap - 1};
    uint64_t *list = tf_xmalloc(sizeof *list * (budget ? budget : 1));
    const uint64_t limit = SPACE_DRAW_LIMIT + 16 * budget;
    bool valid, began = poll_begin(s, "sampling the valid configurations");
    int rc = -1;
    uint64_t def;
    if (tf_kernel_default_for(k, s->problem, &def)) {
        if (tf_space_is_valid(s, def, &valid, err))
            goto out;
        if (valid) {
            set_insert(&set, def);
            list[nlist++] = def;
        }
    }
    while ((nlist < budget || draws < SPACE_ESTIMATE_DRAWS) && draws < limit) {
        uint64_t idx = rng_below(&rng, s->cartesian);
        draws++;
        if (poll_step(s, (double)nlist / (double)budget) ||
            tf_space_is_valid(s, idx, &valid, err))
            goto out;
        if (!valid)
            continue;
        hits++;
        if (nlist < budget && set_insert(&set, idx))
            list[nlist++] = idx;
    }
    if (nlist < budget) {
        rc = 1;
        goto out;
    }
    qsort(list, nlist, sizeof *list, cmp_u64);
    double estimate = (double)hits / (double)draws * (double)s->cartesian;
    *valid_out = estimate < (double)nlist ? nlist : estimate >= 1.8e19 ? s->cartesian
                                                                       : (uint64_t)estimate;
    *out = list;
    *n = nlist;
    list = NULL;
    rc = 0;
out:
    poll_end(s, began);
    free(set.slots);
    free(list);
    return rc;
}

int tf_space_random(struct tf_space *s, uint64_t budget, uint64_t seed, uint64_t **out,
                    uint64_t *n, uint64_t *valid, bool *estimated, struct tf_error *err)
{
    *out = NULL;
    *n = 0;
    *valid = 0;
    *estimated = false;
    s->err = err;
    if (budget == 0)
        return tf_error_set(err, TF_ERR_SCHEMA, "internal: a random search with budget 0");
    /* A huge space is not counted first: counting can take hours where the
     * constraints prune little, and a sample of a few configurations does not
     * need the count. Only a space whose valid configurations are too rare
     * for rejection is counted after all (with progress, and stoppable). */
    if (s->cartesian > TF_SPACE_EXACT_LIMIT && s->globally_valid) {
        int rc = sample_huge(s, budget, seed, out, n, valid, err);
        if (rc <= 0) {
            *estimated = rc == 0;
            return rc;
        }
    }
    if (tf_space_count(s, 0, UINT64_MAX, valid, err))
        return -1;
    if (*valid <= budget) {
        *n = *valid; /* every valid configuration: the caller enumerates them */
        return 0;
    }
    return tf_space_sample(s, *valid, budget, seed, out, n, err);
}
