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
 * draw from it with a splitmix64 stream. */
#include "space.h"

#include "hash.h"

#include <stdlib.h>
#include <string.h>

struct space_level {
    int nconstraints;
    const struct tf_expr **constraints;
};

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
};

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
    s->slots[level] = tf_int(p->kind == TF_PARAM_INT ? p->ints[digit] : digit);
}

/* 1 if every constraint of `level` holds, 0 if one fails, -1 on an evaluation error. */
static int level_holds(struct tf_space *s, int level)
{
    const struct space_level *l = &s->levels[level];
    for (int i = 0; i < l->nconstraints; i++) {
        bool ok;
        if (tf_expr_eval_bool(l->constraints[i], s->slots, &ok, s->err))
            return -1;
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
            if (tf_expr_eval_bool(e, s->slots, &ok, err))
                goto fail;
            s->globally_valid = s->globally_valid && ok;
            continue;
        }
        struct space_level *l = &s->levels[level];
        l->constraints = tf_xrealloc(l->constraints, sizeof *l->constraints *
                                                         (size_t)(l->nconstraints + 1));
        l->constraints[l->nconstraints++] = e;
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
    int64_t c = count_walk(s, 0, true, true);
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
            if (tf_space_is_valid(s, idx, &valid, err))
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
    *out = list;
    *n = nlist;
    return 0;
fail:
    free(set.slots);
    free(list);
    return -1;
}
