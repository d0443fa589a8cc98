/* strategy.c - the strategy registry and the core every search shares.
 *
 * The core wraps one strategy table's instance (strategy.h) and owns what
 * must hold for all of them: every proposal is valid and new (a map of
 * configurations told or pending), budgets and patience, and determinism.
 * Determinism comes from where randomness is drawn: an ask's generator is
 * derived from (seed, results told, proposals since the last result), a tell's
 * from a stream only tells advance, and a table's ask proposes into a scratch
 * list without changing its state; so the state after a sequence of results is
 * the same whether or not asks happened in between, which is what lets a
 * resumed run replay its journal through tell and continue identically. */
#include "strategy.h"
#include "strategy_common.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/job.h"
#include "../schema/kernel.h"
#include "../schema/ktcache.h"
#include "../schema/space.h"
#include "../schema/status.h"
#include "../schema/yamldoc.h"

extern const struct tf_strategy_impl tf_strategy_brute_force;
extern const struct tf_strategy_impl tf_strategy_random;
extern const struct tf_strategy_impl tf_strategy_genetic;
extern const struct tf_strategy_impl tf_strategy_local;
extern const struct tf_strategy_impl tf_strategy_bayes;
extern const struct tf_strategy_impl tf_strategy_hybrid;

const struct tf_strategy_impl *const tf_strategies[] = {
    &tf_strategy_brute_force, &tf_strategy_random, &tf_strategy_genetic, &tf_strategy_local,
    &tf_strategy_bayes,       &tf_strategy_hybrid,  NULL,
};

const struct tf_strategy_impl *tf_strategy_find(const char *name)
{
    for (int i = 0; name && tf_strategies[i]; i++)
        if (strcmp(tf_strategies[i]->name, name) == 0)
            return tf_strategies[i];
    return NULL;
}

/* "a, b, c": the registry's names, or one strategy's option names. */
static void strategy_names(char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; tf_strategies[i]; i++) {
        strncat(out, i ? ", " : "", cap - strlen(out) - 1);
        strncat(out, tf_strategies[i]->name, cap - strlen(out) - 1);
    }
}

static void option_names(const struct tf_strategy_impl *impl, char *out, size_t cap)
{
    out[0] = '\0';
    for (const struct tf_strategy_option_spec *o = impl->options; o && o->name; o++) {
        strncat(out, out[0] ? ", " : "", cap - strlen(out) - 1);
        strncat(out, o->name, cap - strlen(out) - 1);
    }
}

static int probe_valid(void *ctx, uint64_t index, bool *valid, struct tf_error *err)
{
    (void)ctx, (void)index, (void)err;
    *valid = true;
    return 0;
}

int tf_strategy_check_job(const struct tf_job *job, struct tf_error *err)
{
    const struct tf_strategy_impl *impl = tf_strategy_find(job->strategy_name);
    if (impl == NULL) {
        char known[512];
        strategy_names(known, sizeof known);
        const char *best = NULL;
        int best_d = INT_MAX;
        for (int i = 0; job->strategy_name && tf_strategies[i]; i++)
            tf_ydoc_nearer(job->strategy_name, tf_strategies[i]->name, &best, &best_d);
        return tf_error_at(err, TF_ERR_SCHEMA, job->file, job->strategy_line,
                           job->strategy_col, "'strategy' must be one of %s, found '%s'%s%s%s",
                           known, job->strategy_name, best ? "; did you mean '" : "",
                           best ? best : "", best ? "'?" : "");
    }
    char known[512];
    option_names(impl, known, sizeof known);
    /* Each value alone, over the smallest space a strategy accepts: the
     * message is the strategy's own, the position the value's. */
    static const int radix[1] = {2};
    static const double *const values[1] = {NULL};
    const struct tf_strategy_space probe = {.nparams = 1, .radix = radix, .values = values,
                                            .cartesian = 2, .valid_count = 2,
                                            .is_valid = probe_valid};
    for (int i = 0; i < job->noptions; i++) {
        const struct tf_job_option *o = &job->options[i];
        bool declared = false;
        for (const struct tf_strategy_option_spec *spec = impl->options; spec && spec->name;
             spec++)
            declared = declared || strcmp(spec->name, o->name) == 0;
        if (!declared) {
            const char *best = NULL;
            int best_d = INT_MAX;
            for (const struct tf_strategy_option_spec *spec = impl->options; spec && spec->name;
                 spec++)
                tf_ydoc_nearer(o->name, spec->name, &best, &best_d);
            return tf_error_at(err, TF_ERR_SCHEMA, job->file, o->name_line, o->name_col,
                               "unknown option '%s' of strategy %s%s%s%s: expected %s", o->name,
                               impl->name, best ? " (did you mean '" : "", best ? best : "",
                               best ? "'?)" : "",
                               known[0] ? known : "no options (remove 'options')");
        }
        const struct tf_strategy_option one = {o->name, o->value};
        struct tf_error e;
        struct tf_strategy *st = tf_strategy_create(impl->name, &probe, &one, 1, 1, NULL, &e);
        if (st == NULL)
            return tf_error_at(err, TF_ERR_SCHEMA, job->file, o->line, o->col, "%s", e.message);
        tf_strategy_destroy(st);
    }
    return 0;
}

/* `text`, the cursor at column `col`, wrapped at word boundaries before column
 * 79 onto lines indented by `indent` spaces; ends the line. */
static void print_wrapped(FILE *out, const char *text, int col, int indent)
{
    bool first = true; /* no space before a line's first word */
    while (*text) {
        size_t w = strcspn(text, " ");
        if (!first && col + 1 + (int)w > 78) {
            col = fprintf(out, "\n%*s", indent, "") - 1;
            first = true;
        }
        col += fprintf(out, "%s%.*s", first ? "" : " ", (int)w, text);
        first = false;
        text += w;
        text += strspn(text, " ");
    }
    fputc('\n', out);
}

void tf_strategy_help(FILE *out)
{
    fputs("Search strategies: the job's search.strategy, each with its search.options\n"
          "(schema/job.md says which to use when, with measured numbers; a job with a\n"
          "value out of an option's range is refused with its file:line:col).\n",
          out);
    for (int i = 0; tf_strategies[i]; i++) {
        const struct tf_strategy_impl *impl = tf_strategies[i];
        fprintf(out, "\n%s\n  ", impl->name);
        print_wrapped(out, impl->good_for, 2, 2);
        if (!impl->options || !impl->options[0].name) {
            fputs("  options: none\n", out);
            continue;
        }
        fputs("  options (default):\n", out);
        for (const struct tf_strategy_option_spec *o = impl->options; o->name; o++) {
            /* the help at column 26, or on the next line after a long name */
            int col = fprintf(out, "    %s (%s)", o->name, o->def);
            if (col < 26) {
                col += fprintf(out, "%*s", 26 - col, "");
            } else {
                fprintf(out, "\n%26s", "");
                col = 26;
            }
            print_wrapped(out, o->help, col, 26);
        }
    }
}

const char *tf_strategy_stop_name(enum tf_strategy_stop s)
{
    switch (s) {
    case TF_STOP_NONE: return "none";
    case TF_STOP_BUDGET: return "budget";
    case TF_STOP_PATIENCE: return "patience";
    case TF_STOP_EXHAUSTED: return "exhausted";
    }
    return "unknown";
}

/* ---- generator ----------------------------------------------------------- */

uint64_t tf_rng_next(struct tf_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t tf_rng_below(struct tf_rng *r, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = tf_rng_next(r);
    while (x >= limit);
    return x % n;
}

double tf_rng_unit(struct tf_rng *r)
{
    return (double)(tf_rng_next(r) >> 11) * 0x1.0p-53;
}

static uint64_t mix3(uint64_t a, uint64_t b, uint64_t c)
{
    struct tf_rng r = {a ^ 0x5851f42d4c957f2dull};
    uint64_t x = tf_rng_next(&r);
    r.s ^= b * 0xd6e8feb86659fd93ull;
    x ^= tf_rng_next(&r);
    r.s ^= c * 0xa0761d6478bd642full;
    return x ^ tf_rng_next(&r);
}

/* ---- configuration map: index -> time (NaN = pending) --------------------- */

#define EMPTY UINT64_MAX /* never a configuration: indices are < cartesian <= UINT64_MAX */

struct cmap {
    uint64_t *keys;
    double *vals;
    size_t cap, n; /* cap a power of two */
};

static size_t cmap_slot(const struct cmap *m, uint64_t k)
{
    uint64_t h = k * 0x9e3779b97f4a7c15ull;
    size_t i = (size_t)(h ^ (h >> 29)) & (m->cap - 1);
    while (m->keys[i] != EMPTY && m->keys[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static void cmap_grow(struct cmap *m)
{
    struct cmap g = {.cap = m->cap ? m->cap * 2 : 256};
    g.keys = tf_xmalloc(g.cap * sizeof *g.keys);
    g.vals = tf_xmalloc(g.cap * sizeof *g.vals);
    memset(g.keys, 0xff, g.cap * sizeof *g.keys);
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] != EMPTY) {
            size_t j = cmap_slot(&g, m->keys[i]);
            g.keys[j] = m->keys[i];
            g.vals[j] = m->vals[i];
            g.n++;
        }
    free(m->keys);
    free(m->vals);
    *m = g;
}

static double *cmap_find(const struct cmap *m, uint64_t k)
{
    if (!m->cap)
        return NULL;
    size_t i = cmap_slot(m, k);
    return m->keys[i] == k ? &m->vals[i] : NULL;
}

static void cmap_put(struct cmap *m, uint64_t k, double v)
{
    if ((m->n + 1) * 2 > m->cap)
        cmap_grow(m);
    size_t i = cmap_slot(m, k);
    if (m->keys[i] == EMPTY) {
        m->keys[i] = k;
        m->n++;
    }
    m->vals[i] = v;
}

/* ---- the core ------------------------------------------------------------ */

struct tf_strategy_core {
    const struct tf_strategy_space *space;
    struct tf_strategy_option *opts; /* a copy: the caller's need not outlive create */
    int nopts;
    const struct tf_strategy_impl *impl;
    uint64_t seed;
    struct cmap seen;            /* told (time / INFINITY) or pending (NaN) */
    uint64_t *hist_cfg;          /* results in arrival order */
    double *hist_time;
    size_t nhist, caphist;
    uint64_t proposed;           /* distinct configurations proposed or told */
    uint64_t since_tell;         /* proposals since the last result (ask generator) */
    int err_set;                 /* the space's validity check failed */
    struct tf_error err;
    uint64_t *prior_cfg;         /* transfer: other devices' results (tf_strategy_prior) */
    double *prior_time;
    int *prior_source;
    size_t nprior;
    int *vrank[TF_STRATEGY_MAX_PARAMS]; /* ordered parameter: value index -> rank by value */
    int *vat[TF_STRATEGY_MAX_PARAMS];   /* and rank -> value index (NULL: enum, the identity) */
};

struct tf_strategy {
    struct tf_strategy_core core;
    void *state;
    struct tf_search_limits limits;
    struct tf_rng tell_rng;
    bool have_best;
    uint64_t best_cfg;
    double best_time;
    bool have_ref;
    double patience_ref;         /* best time at the last improvement beyond noise */
    uint64_t since_improve;
    bool patience_hit;           /* patience ended the search: it stays ended */
    bool exhausted;
    uint64_t *seeds;             /* warm start: valid configurations proposed first, in order */
    size_t nseeds;
};

struct tf_propose {
    struct tf_strategy_core *core;
    uint64_t *items;
    int n, cap;
    struct cmap in; /* items as a set once there are many: an ask of 10^5 stays linear */
};

/* Items held in a list alone up to this many; a set from there on. */
#define PROPOSE_LINEAR 64

/* Append `config` to `p` (room and novelty checked by the caller). */
static void propose_push(struct tf_propose *p, uint64_t config)
{
    p->items[p->n++] = config;
    if (p->n > PROPOSE_LINEAR) {
        if (p->in.n == 0) /* the list so far joins the set */
            for (int i = 0; i < p->n - 1; i++)
                cmap_put(&p->in, p->items[i], 0);
        cmap_put(&p->in, config, 0);
    }
}

static void propose_free(struct tf_propose *p)
{
    free(p->in.keys);
    free(p->in.vals);
    p->in = (struct cmap){0};
}

int tf_propose_some(struct tf_propose *p, int n, const struct tf_strategy_impl *impl,
                    void *state, struct tf_strategy_core *core, struct tf_rng *rng,
                    struct tf_error *err)
{
    if (n <= 0 || p->n >= p->cap)
        return 0;
    int cap = p->cap;
    p->cap = p->n + n < cap ? p->n + n : cap;
    int rc = impl->ask(state, core, rng, p, err);
    p->cap = cap;
    return rc;
}

const struct tf_strategy_space *tf_core_space(const struct tf_strategy_core *c) { return c->space; }
uint64_t tf_core_seed(const struct tf_strategy_core *c) { return c->seed; }
uint64_t tf_core_proposed(const struct tf_strategy_core *c) { return c->proposed; }

static const struct tf_strategy_option_spec *opt_spec(const struct tf_strategy_core *c,
                                                      const char *name)
{
    for (const struct tf_strategy_option_spec *o = c->impl->options; o && o->name; o++)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

static const char *opt_text(const struct tf_strategy_core *c, const char *name)
{
    for (int i = 0; i < c->nopts; i++)
        if (strcmp(c->opts[i].name, name) == 0)
            return c->opts[i].value;
    const struct tf_strategy_option_spec *o = opt_spec(c, name);
    if (!o)
        tf_die("strategy %s reads option '%s' it does not declare", c->impl->name, name);
    return o->def;
}

int tf_core_opt_int(struct tf_strategy_core *c, const char *name, int64_t lo, int64_t hi,
                    int64_t *out, struct tf_error *err)
{
    const char *t = opt_text(c, name);
    char *end;
    long long v = strtoll(t, &end, 10);
    if (end == t || *end || v < lo || v > hi)
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "search option '%s' of strategy %s is '%s': expected an integer "
                            "from %lld to %lld",
                            name, c->impl->name, t, (long long)lo, (long long)hi);
    *out = v;
    return 0;
}

int tf_core_opt_double(struct tf_strategy_core *c, const char *name, double lo, double hi,
                       double *out, struct tf_error *err)
{
    const char *t = opt_text(c, name);
    char *end;
    double v = strtod(t, &end);
    if (end == t || *end || !(v >= lo && v <= hi))
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "search option '%s' of strategy %s is '%s': expected a number "
                            "from %g to %g",
                            name, c->impl->name, t, lo, hi);
    *out = v;
    return 0;
}

bool tf_core_seen(const struct tf_strategy_core *c, uint64_t config)
{
    return cmap_find(&c->seen, config) != NULL;
}

int tf_core_told_time(const struct tf_strategy_core *c, uint64_t config, double *time)
{
    double *v = cmap_find(&c->seen, config);
    if (!v || isnan(*v))
        return 0;
    *time = *v;
    return 1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

size_t tf_core_pending(const struct tf_strategy_core *c, uint64_t *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < c->seen.cap; i++)
        n += c->seen.keys[i] != EMPTY && isnan(c->seen.vals[i]);
    if (!cap || !n)
        return n;
    /* All of them sorted, then the smallest cap: independent of the map's layout. */
    uint64_t *all = tf_xmalloc(n * sizeof *all);
    size_t k = 0;
    for (size_t i = 0; i < c->seen.cap; i++)
        if (c->seen.keys[i] != EMPTY && isnan(c->seen.vals[i]))
            all[k++] = c->seen.keys[i];
    qsort(all, n, sizeof *all, cmp_u64);
    memcpy(out, all, (n < cap ? n : cap) * sizeof *out);
    free(all);
    return n;
}

size_t tf_core_history(const struct tf_strategy_core *c, const uint64_t **configs,
                       const double **times)
{
    *configs = c->hist_cfg;
    *times = c->hist_time;
    return c->nhist;
}

bool tf_core_valid(struct tf_strategy_core *c, uint64_t config)
{
    if (config >= c->space->cartesian)
        return false;
    bool valid = false;
    struct tf_error e;
    tf_error_clear(&e);
    if (c->space->is_valid(c->space->ctx, config, &valid, &e)) {
        if (!c->err_set) {
            c->err = e;
            c->err_set = 1;
        }
        return false;
    }
    return valid;
}

static const double *rank_values; /* qsort has no context; single-threaded */

static int cmp_value_index(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (rank_values[x] != rank_values[y])
        return rank_values[x] < rank_values[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* The ordered parameters' value ranks (tf_core_value_rank), made once. */
static void value_ranks(struct tf_strategy_core *c)
{
    const struct tf_strategy_space *sp = c->space;
    for (int p = 0; p < sp->nparams; p++) {
        int r = sp->radix[p];
        if (!sp->values[p] || r < 2)
            continue;
        c->vat[p] = tf_xmalloc((size_t)r * sizeof(int));
        c->vrank[p] = tf_xmalloc((size_t)r * sizeof(int));
        for (int v = 0; v < r; v++)
            c->vat[p][v] = v;
        rank_values = sp->values[p];
        qsort(c->vat[p], (size_t)r, sizeof(int), cmp_value_index);
        for (int k = 0; k < r; k++)
            c->vrank[p][c->vat[p][k]] = k;
    }
}

int tf_core_value_rank(const struct tf_strategy_core *c, int param, int v)
{
    return c->vrank[param] ? c->vrank[param][v] : v;
}

int tf_core_value_at(const struct tf_strategy_core *c, int param, int rank)
{
    int r = c->space->radix[param];
    rank = rank < 0 ? 0 : rank >= r ? r - 1 : rank;
    return c->vat[param] ? c->vat[param][rank] : rank;
}

void tf_core_decode(const struct tf_strategy_core *c, uint64_t config, int *digits)
{
    for (int p = c->space->nparams - 1; p >= 0; p--) {
        digits[p] = (int)(config % (uint64_t)c->space->radix[p]);
        config /= (uint64_t)c->space->radix[p];
    }
}

uint64_t tf_core_encode(const struct tf_strategy_core *c, const int *digits)
{
    uint64_t x = 0;
    for (int p = 0; p < c->space->nparams; p++)
        x = x * (uint64_t)c->space->radix[p] + (uint64_t)digits[p];
    return x;
}

bool tf_propose_has(const struct tf_propose *p, uint64_t config)
{
    if (p->n > PROPOSE_LINEAR)
        return cmap_find(&p->in, config) != NULL;
    for (int i = 0; i < p->n; i++)
        if (p->items[i] == config)
            return true;
    return false;
}

int tf_propose_room(const struct tf_propose *p) { return p->cap - p->n; }

int tf_propose_add(struct tf_propose *p, uint64_t config)
{
    if (p->n >= p->cap || tf_core_seen(p->core, config) || tf_propose_has(p, config) ||
        !tf_core_valid(p->core, config))
        return 0;
    propose_push(p, config);
    return 1;
}

/* Unused: valid, and (when unseen_only) neither seen nor in p. */
static bool usable(struct tf_strategy_core *c, const struct tf_propose *p, bool unseen_only,
                   uint64_t x)
{
    return (!unseen_only || (!tf_core_seen(c, x) && !(p && tf_propose_has(p, x)))) &&
           tf_core_valid(c, x);
}

/* tf_core_random_unseen, and (unseen_only false) tf_core_random_valid. */
static int random_pick(struct tf_strategy_core *c, struct tf_rng *rng, const struct tf_propose *p,
                       bool unseen_only, uint64_t *out)
{
    const struct tf_strategy_space *sp = c->space;
    uint64_t taken = unseen_only ? c->seen.n + (uint64_t)(p ? p->n : 0) : 0;
    if (sp->valid_count && taken >= sp->valid_count)
        return 0;
    /* Rejection sampling: uniform over the valid unseen ones while they are not rare. */
    for (int tries = 0; tries < 256; tries++) {
        uint64_t x = tf_rng_below(rng, sp->cartesian);
        if (usable(c, p, unseen_only, x)) {
            *out = x;
            return 1;
        }
    }
    /* Rare (sparse space, or nearly exhausted): from a random start, the next
     * valid unseen one, wrapping once. Slightly favours configurations after
     * long invalid runs, never loops forever, never misses one. */
    uint64_t start = tf_rng_below(rng, sp->cartesian);
    for (int pass = 0; pass < 2; pass++) {
        uint64_t from = pass ? 0 : start, hi = pass ? start : sp->cartesian;
        while (from < hi) {
            uint64_t x = from;
            if (sp->next_valid) {
                struct tf_error e;
                int r = sp->next_valid(sp->ctx, from, hi, &x, &e);
                if (r < 0) {
                    if (!c->err_set) {
                        c->err = e;
                        c->err_set = 1;
                    }
                    return 0;
                }
                if (r == 0)
                    break;
                if (!unseen_only || (!tf_core_seen(c, x) && !(p && tf_propose_has(p, x)))) {
                    *out = x;
                    return 1;
                }
            } else if (usable(c, p, unseen_only, x)) {
                *out = x;
                return 1;
            }
            from = x + 1;
        }
    }
    return 0;
}

int tf_core_random_unseen(struct tf_strategy_core *c, struct tf_rng *rng,
                          const struct tf_propose *p, uint64_t *out)
{
    return random_pick(c, rng, p, true, out);
}

int tf_core_random_valid(struct tf_strategy_core *c, struct tf_rng *rng, uint64_t *out)
{
    return random_pick(c, rng, NULL, false, out);
}

/* ---- the search ---------------------------------------------------------- */

struct tf_strategy *tf_strategy_create(const char *name, const struct tf_strategy_space *space,
                                       const struct tf_strategy_option *opts, int nopts,
                                       uint64_t seed, const struct tf_search_limits *limits,
                                       struct tf_error *err)
{
    const struct tf_strategy_impl *impl = tf_strategy_find(name);
    if (!impl) {
        char known[512];
        strategy_names(known, sizeof known);
        tf_error_set(err, TF_ERR_SCHEMA, "unknown search strategy '%s': expected one of %s",
                     name ? name : "(null)", known);
        return NULL;
    }
    if (impl->version != TF_STRATEGY_VERSION)
        tf_die("strategy %s has table version %d, expected %d", impl->name, impl->version,
               TF_STRATEGY_VERSION);
    if (space->nparams < 1 || space->nparams > TF_STRATEGY_MAX_PARAMS || space->cartesian == 0) {
        tf_error_set(err, TF_ERR_SCHEMA, "strategy %s: a space of %d parameters and %llu "
                     "configurations cannot be searched (expected 1 to %d parameters)",
                     impl->name, space->nparams, (unsigned long long)space->cartesian,
                     TF_STRATEGY_MAX_PARAMS);
        return NULL;
    }
    struct tf_strategy *s = tf_xcalloc(1, sizeof *s);
    s->core.space = space;
    s->core.opts = tf_xcalloc((size_t)(nopts > 0 ? nopts : 1), sizeof *s->core.opts);
    for (int i = 0; i < nopts; i++)
        s->core.opts[s->core.nopts++] = (struct tf_strategy_option){
            tf_xstrdup(opts[i].name), tf_xstrdup(opts[i].value)};
    s->core.impl = impl;
    s->core.seed = seed;
    value_ranks(&s->core);
    s->tell_rng.s = mix3(seed, 0x7e11, 0);
    if (limits)
        s->limits = *limits;
    for (int i = 0; i < nopts; i++)
        if (!opt_spec(&s->core, opts[i].name)) {
            char known[512];
            option_names(impl, known, sizeof known);
            tf_error_set(err, TF_ERR_SCHEMA,
                         "search option '%s' is not one of strategy %s's: expected %s",
                         opts[i].name, impl->name, known[0] ? known : "no options");
            goto fail;
        }
    if (impl->create(&s->core, &s->state, err))
        goto fail;
    return s;
fail:
    tf_strategy_destroy(s);
    return NULL;
}

void tf_strategy_destroy(struct tf_strategy *s)
{
    if (!s)
        return;
    if (s->core.impl && s->state)
        s->core.impl->destroy(s->state);
    for (int i = 0; i < s->core.nopts; i++) {
        free((char *)s->core.opts[i].name);
        free((char *)s->core.opts[i].value);
    }
    free(s->core.opts);
    free(s->core.seen.keys);
    free(s->core.seen.vals);
    free(s->core.hist_cfg);
    free(s->core.hist_time);
    free(s->seeds);
    free(s->core.prior_cfg);
    free(s->core.prior_time);
    free(s->core.prior_source);
    for (int p = 0; p < TF_STRATEGY_MAX_PARAMS; p++) {
        free(s->core.vrank[p]);
        free(s->core.vat[p]);
    }
    free(s);
}

int tf_strategy_seed(struct tf_strategy *s, const uint64_t *configs, size_t n, size_t *kept,
                     struct tf_error *err)
{
    free(s->seeds);
    s->seeds = tf_xmalloc((n ? n : 1) * sizeof *s->seeds);
    s->nseeds = 0;
    *kept = 0;
    /* Listed ones, in a map: with warm_count up to 10^5 seeds a source class,
     * over a large space, a pairwise check was quadratic in the distinct seeds. */
    struct cmap listed = {0};
    for (size_t i = 0; i < n; i++) {
        const uint64_t x = configs[i];
        /* Checked once here, not at every ask: a seed that is outside the
         * space, invalid here (constraints, device limits) or listed twice
         * never enters the list. */
        if (x == EMPTY || cmap_find(&listed, x) != NULL || !tf_core_valid(&s->core, x))
            continue;
        cmap_put(&listed, x, 0.0);
        s->seeds[s->nseeds++] = x;
    }
    free(listed.keys);
    free(listed.vals);
    if (s->core.err_set) {
        if (err)
            *err = s->core.err;
        s->core.err_set = 0;
        s->nseeds = 0;
        return -1;
    }
    *kept = s->nseeds;
    return 0;
}

size_t tf_strategy_seed_count(const struct tf_strategy *s) { return s->nseeds; }

/* A transfer entry's place, for finding repeats: by source, configuration,
 * then position (the first of a repeat is kept). */
struct prior_at {
    int source;
    uint64_t config;
    size_t pos;
};

static int cmp_prior_at(const void *a, const void *b)
{
    const struct prior_at *x = a, *y = b;
    if (x->source != y->source)
        return x->source < y->source ? -1 : 1;
    if (x->config != y->config)
        return x->config < y->config ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

void tf_strategy_prior(struct tf_strategy *s, const uint64_t *configs, const double *times,
                       const int *source, size_t n, size_t *kept)
{
    struct tf_strategy_core *c = &s->core;
    free(c->prior_cfg);
    free(c->prior_time);
    free(c->prior_source);
    c->prior_cfg = tf_xmalloc((n ? n : 1) * sizeof *c->prior_cfg);
    c->prior_time = tf_xmalloc((n ? n : 1) * sizeof *c->prior_time);
    c->prior_source = tf_xmalloc((n ? n : 1) * sizeof *c->prior_source);
    c->nprior = 0;
    /* Repeats of a (source, configuration) pair by sorting (a source may pass
     * thousands): every one after the first is dropped. */
    struct prior_at *at = tf_xmalloc((n ? n : 1) * sizeof *at);
    char *drop = tf_xcalloc(n ? n : 1, 1);
    size_t na = 0;
    for (size_t i = 0; i < n; i++) {
        /* unusable ones first, so a repeat of one is not taken for a repeat */
        drop[i] = configs[i] >= c->space->cartesian || !(times[i] > 0) || !isfinite(times[i]);
        if (!drop[i])
            at[na++] = (struct prior_at){source[i], configs[i], i};
    }
    qsort(at, na, sizeof *at, cmp_prior_at);
    for (size_t i = 1; i < na; i++)
        if (at[i].source == at[i - 1].source && at[i].config == at[i - 1].config)
            drop[at[i].pos] = 1;
    free(at);
    for (size_t i = 0; i < n; i++) {
        if (drop[i])
            continue;
        c->prior_cfg[c->nprior] = configs[i];
        c->prior_time[c->nprior] = times[i];
        c->prior_source[c->nprior++] = source[i];
    }
    free(drop);
    *kept = c->nprior;
}

size_t tf_strategy_prior_count(const struct tf_strategy *s) { return s->core.nprior; }

size_t tf_strategy_prior_used(const struct tf_strategy *s)
{
    if (!opt_spec(&s->core, "transfer"))
        return 0;
    /* checked when the strategy was created: a number in the option's range */
    const long long cap = strtoll(opt_text(&s->core, "transfer"), NULL, 10);
    return cap <= 0 ? 0 : (size_t)cap < s->core.nprior ? (size_t)cap : s->core.nprior;
}

size_t tf_core_prior(const struct tf_strategy_core *c, const uint64_t **configs,
                     const double **times, const int **source)
{
    *configs = c->nprior ? c->prior_cfg : NULL;
    *times = c->nprior ? c->prior_time : NULL;
    *source = c->nprior ? c->prior_source : NULL;
    return c->nprior;
}

size_t tf_strategy_prior_ranks(size_t n, size_t per, size_t top, size_t *out)
{
    if (n <= per) {
        for (size_t i = 0; i < n; i++)
            out[i] = i;
        return n;
    }
    size_t k = 0;
    top = top < per ? top : per;
    for (; k < top; k++)
        out[k] = k;
    /* per - top more at the middles of equal slices of the ranks below */
    const size_t rest = n - top, m = per - top;
    for (size_t j = 0; j < m; j++)
        out[k++] = top + (size_t)(((double)j + 0.5) * (double)rest / (double)m);
    return k;
}

static void update_stop(struct tf_strategy *s)
{
    const struct tf_strategy_space *sp = s->core.space;
    if (sp->valid_count && s->core.proposed >= sp->valid_count)
        s->exhausted = true;
}

enum tf_strategy_stop tf_strategy_stopped(const struct tf_strategy *s)
{
    /* Exhaustion first: a budget of the whole valid set that was spent ended
     * with the space, which is what a user should read. */
    if (s->exhausted)
        return TF_STOP_EXHAUSTED;
    if (s->limits.budget && s->core.proposed >= s->limits.budget)
        return TF_STOP_BUDGET;
    if (s->patience_hit)
        return TF_STOP_PATIENCE;
    return TF_STOP_NONE;
}

/* Fill `p` with the warm-start seeds not seen yet (in their order), then
 * through the table, then with random unseen valid ones. Which seeds go is a
 * function of what was told or is pending, not of a cursor, so a resumed run
 * (its journal told) proposes exactly the seeds not yet measured, first. */
static int propose(struct tf_strategy *s, struct tf_propose *p, uint64_t extra, bool hint,
                   struct tf_error *err)
{
    struct tf_rng rng = {mix3(s->core.seed, s->core.nhist, s->core.since_tell + extra)};
    const struct tf_strategy_impl *impl = s->core.impl;
    for (size_t i = 0; i < s->nseeds && p->n < p->cap; i++)
        if (!tf_core_seen(&s->core, s->seeds[i]) && !tf_propose_has(p, s->seeds[i]))
            propose_push(p, s->seeds[i]);
    int rc = hint && impl->likely_next ? impl->likely_next(s->state, &s->core, &rng, p, err)
                                       : impl->ask(s->state, &s->core, &rng, p, err);
    if (rc)
        return rc;
    while (p->n < p->cap) {
        uint64_t x;
        if (!tf_core_random_unseen(&s->core, &rng, p, &x))
            break;
        propose_push(p, x);
    }
    if (s->core.err_set) {
        if (err)
            *err = s->core.err;
        s->core.err_set = 0;
        return -1;
    }
    return 0;
}

static tf_strategy_stop_fn stop_fn;
static void *stop_ctx;

void tf_strategy_set_stop(tf_strategy_stop_fn fn, void *ctx)
{
    stop_fn = fn;
    stop_ctx = ctx;
}

bool tf_strategy_stop_requested(void) { return stop_fn != NULL && stop_fn(stop_ctx); }

static int room_for(const struct tf_strategy *s, int n)
{
    if (tf_strategy_stopped(s) != TF_STOP_NONE || n <= 0)
        return 0;
    if (s->limits.budget && s->limits.budget - s->core.proposed < (uint64_t)n)
        n = (int)(s->limits.budget - s->core.proposed);
    return n;
}

int tf_strategy_ask(struct tf_strategy *s, uint64_t *out, int n, int *got, struct tf_error *err)
{
    *got = 0;
    struct tf_propose p = {.core = &s->core, .items = out, .cap = room_for(s, n)};
    if (p.cap == 0)
        return 0;
    const int rc = propose(s, &p, 0, false, err);
    propose_free(&p);
    if (rc)
        return -1;
    for (int i = 0; i < p.n; i++)
        cmap_put(&s->core.seen, out[i], NAN);
    s->core.proposed += (uint64_t)p.n;
    s->core.since_tell += (uint64_t)p.n;
    if (p.n < p.cap)
        s->exhausted = true; /* nothing valid and unseen is left */
    update_stop(s);
    *got = p.n;
    return 0;
}

int tf_strategy_likely_next(struct tf_strategy *s, uint64_t *out, int n, int *got,
                            struct tf_error *err)
{
    *got = 0;
    struct tf_propose p = {.core = &s->core, .items = out, .cap = room_for(s, n)};
    if (p.cap == 0)
        return 0;
    const int rc = propose(s, &p, 0, true, err);
    propose_free(&p);
    if (rc)
        return -1;
    *got = p.n;
    return 0;
}

int tf_strategy_tell(struct tf_strategy *s, uint64_t config, double time, int status,
                     struct tf_error *err)
{
    struct tf_strategy_core *c = &s->core;
    if (config >= c->space->cartesian)
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "strategy %s told configuration %llu, outside the space of %llu",
                            c->impl->name, (unsigned long long)config,
                            (unsigned long long)c->space->cartesian);
    double *v = cmap_find(&c->seen, config);
    if (v && !isnan(*v))
        return 0; /* told before (a duplicate record): the first counts */
    if (!v && !tf_core_valid(c, config)) {
        /* Never this search's (a result of another space or device, replayed):
         * counted, it would stand for a valid configuration never proposed. */
        if (!c->err_set)
            return 0;
        if (err)
            *err = c->err;
        c->err_set = 0;
        return -1;
    }
    bool ok = tf_strategy_time_ok(status, time);
    double t = ok ? time : INFINITY;
    if (!v)
        c->proposed++; /* a replayed or warm-start result this instance never proposed */
    cmap_put(&c->seen, config, t);
    if (c->nhist == c->caphist) {
        c->caphist = c->caphist ? c->caphist * 2 : 256;
        c->hist_cfg = tf_xrealloc(c->hist_cfg, c->caphist * sizeof *c->hist_cfg);
        c->hist_time = tf_xrealloc(c->hist_time, c->caphist * sizeof *c->hist_time);
    }
    c->hist_cfg[c->nhist] = config;
    c->hist_time[c->nhist] = t;
    c->nhist++;
    c->since_tell = 0;
    if (ok && (!s->have_best || t < s->best_time)) {
        s->have_best = true;
        s->best_cfg = config;
        s->best_time = t;
    }
    /* Patience: an improvement counts when it beats the reference by more than the noise. */
    if (ok && (!s->have_ref || t < s->patience_ref * (1.0 - s->limits.noise))) {
        s->have_ref = true;
        s->patience_ref = t;
        s->since_improve = 0;
    } else {
        s->since_improve++;
    }
    if (s->limits.patience && s->since_improve >= s->limits.patience)
        s->patience_hit = true;
    s->core.impl->tell(s->state, c, config, t, ok ? 0 : (status ? status : 1), &s->tell_rng);
    update_stop(s);
    return 0;
}

bool tf_strategy_time_ok(int status, double time)
{
    return status == 0 && isfinite(time) && time > 0; /* a time of 0 measured nothing */
}

uint64_t tf_strategy_proposed(const struct tf_strategy *s) { return s->core.proposed; }
uint64_t tf_strategy_told(const struct tf_strategy *s) { return s->core.nhist; }
const char *tf_strategy_name(const struct tf_strategy *s) { return s->core.impl->name; }

int tf_strategy_best(const struct tf_strategy *s, uint64_t *config, double *time)
{
    if (!s->have_best)
        return 0;
    *config = s->best_cfg;
    *time = s->best_time;
    return 1;
}

/* ---- space views --------------------------------------------------------- */

struct view {
    struct tf_strategy_space sp; /* first: the view is freed through it */
    int radix[TF_STRATEGY_MAX_PARAMS];
    const double *rows[TF_STRATEGY_MAX_PARAMS];
    double *owned[TF_STRATEGY_MAX_PARAMS];
    const struct tf_ktcache *kt;
    struct tf_space *space;
};

static int kt_valid(void *ctx, uint64_t index, bool *valid, struct tf_error *err)
{
    (void)err;
    const struct tf_ktcache_entry *e = tf_ktcache_find(((struct view *)ctx)->kt, index);
    *valid = e && e->status != TF_STATUS_INVALID;
    return 0;
}

static int kt_next(void *ctx, uint64_t from, uint64_t hi, uint64_t *next, struct tf_error *err)
{
    (void)err;
    const struct tf_ktcache *c = ((struct view *)ctx)->kt;
    size_t lo = 0, up = c->nentries;
    while (lo < up) {
        size_t mid = lo + (up - lo) / 2;
        if (c->entries[mid].index < from)
            lo = mid + 1;
        else
            up = mid;
    }
    for (; lo < c->nentries && c->entries[lo].index < hi; lo++)
        if (c->entries[lo].status != TF_STATUS_INVALID) {
            *next = c->entries[lo].index;
            return 1;
        }
    return 0;
}

struct tf_strategy_space *tf_strategy_space_ktcache(const struct tf_ktcache *c)
{
    if (c->nparams > TF_STRATEGY_MAX_PARAMS)
        return NULL;
    struct view *v = tf_xcalloc(1, sizeof *v);
    v->kt = c;
    v->sp.nparams = c->nparams;
    v->sp.radix = v->radix;
    v->sp.values = v->rows;
    v->sp.cartesian = c->cartesian;
    for (int p = 0; p < c->nparams; p++) {
        v->radix[p] = c->params[p].count;
        v->rows[p] = c->params[p].values;
    }
    for (size_t i = 0; i < c->nentries; i++)
        v->sp.valid_count += c->entries[i].status != TF_STATUS_INVALID;
    v->sp.is_valid = kt_valid;
    v->sp.next_valid = kt_next;
    v->sp.ctx = v;
    return &v->sp;
}

static int space_valid(void *ctx, uint64_t index, bool *valid, struct tf_error *err)
{
    return tf_space_is_valid(((struct view *)ctx)->space, index, valid, err);
}

static int space_next(void *ctx, uint64_t from, uint64_t hi, uint64_t *next, struct tf_error *err)
{
    return tf_space_next(((struct view *)ctx)->space, from, hi, next, err);
}

struct tf_strategy_space *tf_strategy_space_kernel(struct tf_space *s, const struct tf_kernel *k,
                                                   uint64_t valid_count)
{
    if (k->nparams > TF_STRATEGY_MAX_PARAMS || k->nparams < 1)
        return NULL;
    struct view *v = tf_xcalloc(1, sizeof *v);
    v->space = s;
    v->sp.nparams = k->nparams;
    v->sp.radix = v->radix;
    v->sp.values = v->rows;
    v->sp.cartesian = tf_space_cartesian(s);
    v->sp.valid_count = valid_count;
    for (int p = 0; p < k->nparams; p++) {
        v->radix[p] = k->params[p].count;
        if (k->params[p].kind == TF_PARAM_INT) {
            v->owned[p] = tf_xmalloc((size_t)k->params[p].count * sizeof(double));
            for (int i = 0; i < k->params[p].count; i++)
                v->owned[p][i] = (double)k->params[p].ints[i];
            v->rows[p] = v->owned[p];
        }
    }
    v->sp.is_valid = space_valid;
    v->sp.next_valid = space_next;
    v->sp.ctx = v;
    return &v->sp;
}

void tf_strategy_space_free(struct tf_strategy_space *sp)
{
    if (!sp)
        return;
    struct view *v = (struct view *)sp;
    for (int p = 0; p < TF_STRATEGY_MAX_PARAMS; p++)
        free(v->owned[p]);
    free(v);
}

/* ---- shared helpers (strategy_common.h) ------------------------------------ */

static const double *rank_times; /* qsort has no context argument; single-threaded use */

static int cmp_rank(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double tx = rank_times[x], ty = rank_times[y];
    if (tx != ty)
        return tx < ty ? -1 : 1; /* INFINITY (failures) last */
    return x < y ? -1 : x > y;   /* stable: arrival order */
}

size_t *tf_rank_history(const struct tf_strategy_core *c, size_t *n)
{
    size_t *idx = tf_xmalloc((c->nhist ? c->nhist : 1) * sizeof *idx);
    for (size_t i = 0; i < c->nhist; i++)
        idx[i] = i;
    rank_times = c->hist_time;
    qsort(idx, c->nhist, sizeof *idx, cmp_rank);
    *n = c->nhist;
    return idx;
}

/* Trailing zero bits of a positive integer: how many times 2 divides it. */
static int twos(double v)
{
    int k = 0;
    for (uint64_t u = (uint64_t)v; u && !(u & 1) && k < 63; u >>= 1)
        k++;
    return k;
}

double *tf_alignment_coords(const double *values, int n)
{
    if (!values || n < 3)
        return NULL;
    bool powers = true;
    int lo = 64, hi = 0;
    for (int v = 0; v < n; v++) {
        double x = values[v];
        if (!(x >= 1 && x < 0x1p62 && x == floor(x)))
            return NULL;
        int k = twos(x);
        powers = powers && x == ldexp(1, k);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    if (powers || hi == lo)
        return NULL; /* the log2 coordinate already, or nothing */
    double *a = tf_xmalloc((size_t)n * sizeof *a);
    for (int v = 0; v < n; v++)
        a[v] = (double)(twos(values[v]) - lo) / (hi - lo);
    return a;
}

double tf_boxcox(double lt, double l0, double lambda)
{
    return lambda == 0 ? lt - l0 : expm1(lambda * (lt - l0)) / lambda;
}

/* The profile log-likelihood of a normal fit after the transform:
 * -n/2 log(variance) + (lambda - 1) sum(log x), the second term being the
 * Jacobian (Box and Cox 1964). A grid, not a solver: the search needs the
 * shape, and a grid makes the result an exact function of the data. */
double tf_boxcox_lambda(const double *l, size_t n)
{
    size_t k = 0;
    double l0 = INFINITY, sum_x = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(l[i]))
            l0 = fmin(l0, l[i]), k++;
    if (k < 3)
        return 0;
    double *x = tf_xmalloc(k * sizeof *x), *z = tf_xmalloc(k * sizeof *z);
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(l[i]))
            x[k++] = l[i], sum_x += l[i] - l0;
    double best = 0, best_ll = -INFINITY;
    for (int g = -12; g <= 4; g++) {
        const double lambda = g / 4.0;
        double mean = 0, var = 0;
        for (size_t i = 0; i < k; i++)
            mean += z[i] = tf_boxcox(x[i], l0, lambda);
        mean /= (double)k;
        for (size_t i = 0; i < k; i++)
            var += (z[i] - mean) * (z[i] - mean);
        if (!(var > 0)) {
            best = 0; /* all alike */
            break;
        }
        const double ll = -0.5 * (double)k * log(var / (double)k) + (lambda - 1) * sum_x;
        if (ll > best_ll)
            best_ll = ll, best = lambda;
    }
    free(z);
    free(x);
    return best;
}

int tf_neighbours_cap(const struct tf_strategy_core *c)
{
    int cap = 0;
    for (int q = 0; q < c->space->nparams; q++)
        cap += c->space->radix[q];
    return cap;
}

int tf_neighbours(const struct tf_strategy_core *c, uint64_t config, int reach, uint64_t *out,
                  int cap)
{
    const struct tf_strategy_space *sp = c->space;
    int d[TF_STRATEGY_MAX_PARAMS], n = 0;
    tf_core_decode(c, config, d);
    for (int p = 0; p < sp->nparams; p++) {
        int r = sp->radix[p], keep = d[p];
        if (r < 2)
            continue;
        for (int v = 0; v < r; v++) {
            if (v == keep || (sp->values[p] && abs(tf_core_value_rank(c, p, v) -
                                                   tf_core_value_rank(c, p, keep)) > reach))
                continue;
            if (n == cap)
                return n;
            d[p] = v;
            out[n++] = tf_core_encode(c, d);
        }
        d[p] = keep;
    }
    return n;
}

void tf_shuffle_u64(uint64_t *a, int n, struct tf_rng *rng)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)tf_rng_below(rng, (uint64_t)i + 1);
        uint64_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}
