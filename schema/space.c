/* space.c - enumeration and exact counting of valid configurations.
 *
 * The space is the Cartesian product of the parameters' value lists, indexed in
 * mixed radix with parameter 0 most significant, so increasing index is the
 * order of a depth-first walk that binds parameter 0, then 1, and so on. Each
 * constraint is attached to the deepest parameter it reads and evaluated the
 * moment that parameter is bound: a failing prefix discards its whole subtree.
 * Constraints that read no parameter (only sizes and device properties) are
 * evaluated once.
 *
 * The walk is memoised. Which values of level L are valid below a prefix
 * depends only on the prefix's values of the parameters that constraints at
 * level L or deeper read (the level's *context*), not on the whole prefix: in
 * a GEMM space the shared-memory constraint at the last levels does not care
 * about the k unroll chosen above them. So the valid values of a level are
 * computed once per (level, context) into a node - a sorted list of valid
 * digits, each with the node of the level below once known - and shared by
 * every prefix with that context: the walk is a decision diagram built
 * lazily, a node's count is computed once, and listing is a walk over nodes
 * that evaluates nothing it has seen. Three refinements:
 *   - the valid digits themselves depend only on what the level's own
 *     constraints read (its *local* key, part of the context); they are kept
 *     per (level, local key) as a filter that nodes differing elsewhere reuse;
 *   - a level that no deeper constraint reads leads every value of a node to
 *     the same node below: it is counted once and multiplied;
 *   - a level whose context holds every earlier parameter that has more than
 *     one value cannot share (each of its nodes would be met once): it keeps
 *     no nodes and evaluates into a scratch list each time, as the plain walk.
 * Levels past the last constraint have an empty context: one node each, all
 * values valid. The nodes live in growable arrays (nodes, edges) found through
 * an open-addressing table keyed by level and context; past a memory limit
 * (TF_SPACE_MEMO_BYTES) nothing more is kept and the walk evaluates what it
 * meets into per-level scratch lists, as a plain pruned depth-first walk
 * would, so a space whose contexts never repeat costs what it did, in bounded
 * memory.
 *
 * A cursor (tf_space_cursor) walks the diagram iteratively with an explicit
 * stack: it streams the valid indices in order, stops at a bound and goes on
 * later, and seeks to any index by one descent; tf_space_next keeps one per
 * space so its callers' loops (next from last + 1) stream instead of
 * restarting at the root. Random samples (tf_space_sample) draw from the space
 * with a splitmix64 stream; tf_space_random decides whether a space is small
 * enough to count first (TF_SPACE_EXACT_LIMIT) or is sampled by rejection
 * from the Cartesian product without a count.
 *
 * Building nodes, counting and sampling step a counter and, every 65536
 * steps, call the process's poll hook with the fraction done, so that a long
 * count shows progress and a signal can stop it (TF_ERR_INTERRUPTED). A node
 * evaluates every value of its level at once, so an evaluation error is
 * reported for the first prefix whose node meets it, possibly before the walk
 * has returned the valid values that precede it in that node. The error names
 * the constraint's file:line:col, the problem and the parameter values
 * (tf_kernel_constraint_error). */
#include "space.h"

#include "hash.h"
#include "parammap.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct space_level {
    int nconstraints;
    int *constraints;           /* indices into k->constraints, in file order */
    int nctx;                   /* the context: levels above this one that */
    int *ctx;                   /*   constraints here or deeper read, ascending */
    uint64_t *ctx_weight;       /* mixed-radix weight of each in the context key */
    int nlocal;                 /* the levels above this one that its own */
    int *local;                 /*   constraints read (a subset of the context) */
    uint64_t *local_weight;
    bool shared_child;          /* no deeper constraint reads this level: every
                                 * value of a node leads to the same node below */
    bool memo;                  /* two prefixes can share a node here: some level
                                 * above with several values is not in the context */
};

/* The valid digits of one level for the values its own constraints read (its
 * local key): nodes whose contexts differ only in what deeper levels read
 * share them instead of evaluating again. */
struct space_filter {
    uint64_t key;
    int32_t level;
    uint32_t first, n;          /* in filter_digits */
};

/* The valid digits of one level for one context. */
struct space_node {
    uint64_t key;               /* the context's mixed-radix value */
    uint64_t count;             /* valid configurations below it, once counted */
    uint32_t first, nvalid;     /* its edges: [first, first + nvalid) */
    int32_t level;
    bool counted;
};

#define NO_NODE (-1)

/* A polled activity: what, since when, how many steps. */
struct poll_state {
    const char *activity;       /* NULL: not polling */
    double started;
    uint64_t steps;
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

struct tf_space_cursor {
    struct tf_space *s;
    int depth;                  /* the level whose edge pos[depth] is next */
    int *digits;                /* digits bound above depth; all of the last returned */
    int32_t *node;              /* node of each level on the path, NO_NODE: scratch */
    uint32_t *pos;              /* next edge to take at each level */
    uint64_t *prefix;           /* index of digits[0..level) at each level */
    int32_t **scratch;          /* per level: the valid digits of an unmemoised node */
    uint32_t *nscratch;
    uint64_t position;          /* every valid index below it has been passed */
    bool pending;               /* a seek to `position` is still to be made */
    bool done;                  /* past the last configuration */
    struct poll_state poll;
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
    int *constraint_level;      /* per constraint: its level, -1 global, -2 not used */
    bool globally_valid;        /* constraints without parameters hold */
    struct tf_value *slots;
    struct tf_error *err;       /* where the walk reports an evaluation error */

    /* The memo: nodes, their edges, and the table that finds them. */
    struct space_node *nodes;
    uint32_t nnodes, cap_nodes;
    int32_t *edge_digit, *edge_child; /* child: node of the next level, or NO_NODE */
    uint32_t nedges, cap_edges;
    uint32_t *table;            /* node + 1, 0: empty */
    uint32_t table_size;        /* a power of two (0: none yet) */
    struct space_filter *filters; /* the local filters, in an open-addressing */
    uint32_t nfilters, filter_size; /*   table of filter_size (a power of two) */
    int32_t *filter_digits;
    uint32_t nfilter_digits, cap_filter_digits;
    size_t memo_limit;          /* bytes all of these may take */
    bool memo_full;

    /* The counting walk. */
    int *walk_digits;
    int *lo_digits, *hi_digits; /* bounds of the current count (hi inclusive) */
    int32_t **count_scratch;
    struct poll_state poll;     /* counting and sampling */
    struct tf_space_cursor *cursor; /* tf_space_next's */
};

/* The share of the index space before digits[0..level) + v at `level`. */
static double walk_fraction(const struct tf_space *s, const int *digits, int level, int v)
{
    double at = (double)v * (double)s->stride[level];
    for (int i = 0; i < level; i++)
        at += (double)digits[i] * (double)s->stride[i];
    return s->cartesian ? at / (double)s->cartesian : 1;
}

/* Ask the hook; -1 + err (TF_ERR_INTERRUPTED) if it says stop. */
static int poll_call(struct tf_space *s, const struct poll_state *ps, double fraction)
{
    double elapsed = monotonic_now() - ps->started;
    if (!poll_fn(poll_ctx, s->k->name, s->k->problems[s->problem].name, ps->activity, fraction,
                 elapsed))
        return 0;
    return tf_error_set(s->err, TF_ERR_INTERRUPTED,
                        "stopped by a signal while %s of kernel '%s', problem '%s' (%.0f%% "
                        "done after %.0f s); nothing of it was measured",
                        ps->activity, s->k->name, s->k->problems[s->problem].name,
                        100 * fraction, elapsed);
}

/* One step of a polled activity (none if ps is NULL or idle): every 65536
 * steps, ask the hook. `fraction` < 0: from the walk at digits/level/v. */
static inline int poll_step(struct tf_space *s, struct poll_state *ps, double fraction,
                            const int *digits, int level, int v)
{
    if (ps == NULL || ps->activity == NULL || poll_fn == NULL || (++ps->steps & 0xffff) != 0)
        return 0;
    return poll_call(s, ps, fraction >= 0 ? fraction : walk_fraction(s, digits, level, v));
}

/* Start polling `ps` for `activity` unless it already is; returns whether
 * this call started it (pass to poll_end). */
static bool poll_begin(struct poll_state *ps, const char *activity)
{
    if (ps->activity != NULL)
        return false;
    ps->activity = activity;
    ps->started = monotonic_now();
    ps->steps = 0;
    return true;
}

static void poll_end(struct poll_state *ps, bool began)
{
    if (began)
        ps->activity = NULL;
}

/* Deepest parameter `e` reads, or -1 if it reads none. */
static int constraint_level(const struct tf_kernel *k, const struct tf_expr *e)
{
    for (int p = k->nparams - 1; p >= 0; p--)
        if (tf_expr_uses_slot(e, p))
            return p;
    return -1;
}

static inline void space_bind(struct tf_space *s, int level, int digit)
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
        struct tf_error e;
        if (tf_expr_eval_bool(s->k->constraints[l->constraints[i]], s->slots, &ok, &e)) {
            return tf_kernel_constraint_error(s->k, l->constraints[i], s->problem, s->slots, &e,
                                              s->err);
        }
        if (!ok)
            return 0;
    }
    return 1;
}

/* ---- the memo ---- */

/* Keys that differ only in their last context digit (met one after the other
 * by a depth-first walk) land in neighbouring slots of one cache line. */
static inline uint32_t memo_hash(int level, uint64_t key)
{
    uint64_t z = (key >> 3) * 0x9e3779b97f4a7c15ull + (uint64_t)level * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 31)) * 0x94d049bb133111ebull;
    return (uint32_t)(z ^ (z >> 29)) * 8u + (uint32_t)(key & 7);
}

static int32_t memo_find(const struct tf_space *s, int level, uint64_t key)
{
    if (s->table_size == 0)
        return NO_NODE;
    uint32_t mask = s->table_size - 1;
    for (uint32_t i = memo_hash(level, key) & mask;; i = (i + 1) & mask) {
        uint32_t t = s->table[i];
        if (t == 0)
            return NO_NODE;
        const struct space_node *nd = &s->nodes[t - 1];
        if (nd->key == key && nd->level == level)
            return (int32_t)(t - 1);
    }
}

static size_t memo_bytes(uint64_t nodes, uint64_t edges, uint64_t table, uint64_t filters,
                         uint64_t filter_digits)
{
    return (size_t)(nodes * sizeof(struct space_node) + edges * 2 * sizeof(int32_t) +
                    table * sizeof(uint32_t) + filters * sizeof(struct space_filter) +
                    filter_digits * sizeof(int32_t));
}

static size_t space_memo_bytes(const struct tf_space *s)
{
    return memo_bytes(s->cap_nodes, s->cap_edges, s->table_size, s->filter_size,
                      s->cap_filter_digits);
}

/* Make room for one more node of `nvalid` edges; false (and memo_full) past the limit. */
static bool memo_reserve(struct tf_space *s, uint32_t nvalid)
{
    if (s->memo_full)
        return false;
    uint64_t cap_nodes = s->cap_nodes, cap_edges = s->cap_edges, table = s->table_size;
    while (s->nnodes + 1 > cap_nodes)
        cap_nodes = cap_nodes ? 2 * cap_nodes : 256;
    while ((uint64_t)s->nedges + nvalid > cap_edges)
        cap_edges = cap_edges ? 2 * cap_edges : 1024;
    while (2 * ((uint64_t)s->nnodes + 1) > table)
        table = table ? 2 * table : 1024;
    if (cap_nodes >= INT32_MAX || cap_edges >= UINT32_MAX || table > UINT32_MAX / 2 + 1 ||
        memo_bytes(cap_nodes, cap_edges, table, s->filter_size, s->cap_filter_digits) >
            s->memo_limit) {
        s->memo_full = true;
        return false;
    }
    if (cap_nodes != s->cap_nodes) {
        s->nodes = tf_xrealloc(s->nodes, sizeof *s->nodes * cap_nodes);
        s->cap_nodes = (uint32_t)cap_nodes;
    }
    if (cap_edges != s->cap_edges) {
        s->edge_digit = tf_xrealloc(s->edge_digit, sizeof *s->edge_digit * cap_edges);
        s->edge_child = tf_xrealloc(s->edge_child, sizeof *s->edge_child * cap_edges);
        s->cap_edges = (uint32_t)cap_edges;
    }
    if (table != s->table_size) {
        free(s->table);
        s->table = tf_xcalloc(table, sizeof *s->table);
        s->table_size = (uint32_t)table;
        uint32_t mask = s->table_size - 1;
        for (uint32_t n = 0; n < s->nnodes; n++) {
            uint32_t i = memo_hash(s->nodes[n].level, s->nodes[n].key) & mask;
            while (s->table[i] != 0)
                i = (i + 1) & mask;
            s->table[i] = n + 1;
        }
    }
    return true;
}

/* The local filter of `level` for `key`, or NULL. */
static const struct space_filter *filter_find(const struct tf_space *s, int level, uint64_t key)
{
    if (s->filter_size == 0)
        return NULL;
    uint32_t mask = s->filter_size - 1;
    for (uint32_t i = memo_hash(level, key) & mask;; i = (i + 1) & mask) {
        const struct space_filter *f = &s->filters[i];
        if (f->level < 0)
            return NULL;
        if (f->key == key && f->level == level)
            return f;
    }
}

/* Remember `n` valid digits of `level` for local `key` (nothing past the limit). */
static void filter_add(struct tf_space *s, int level, uint64_t key, const int32_t *digits,
                       uint32_t n)
{
    if (s->memo_full)
        return;
    uint64_t size = s->filter_size, cap = s->cap_filter_digits;
    while (2 * ((uint64_t)s->nfilters + 1) > size)
        size = size ? 2 * size : 256;
    while ((uint64_t)s->nfilter_digits + n > cap)
        cap = cap ? 2 * cap : 1024;
    if (size > UINT32_MAX / 2 + 1 || cap >= UINT32_MAX ||
        memo_bytes(s->cap_nodes, s->cap_edges, s->table_size, size, cap) > s->memo_limit) {
        s->memo_full = true;
        return;
    }
    if (cap != s->cap_filter_digits) {
        s->filter_digits = tf_xrealloc(s->filter_digits, sizeof *s->filter_digits * cap);
        s->cap_filter_digits = (uint32_t)cap;
    }
    if (size != s->filter_size) {
        struct space_filter *old = s->filters;
        uint32_t old_size = s->filter_size;
        s->filters = tf_xmalloc(sizeof *s->filters * size);
        for (uint64_t i = 0; i < size; i++)
            s->filters[i].level = -1;
        s->filter_size = (uint32_t)size;
        for (uint32_t i = 0; i < old_size; i++) {
            if (old[i].level < 0)
                continue;
            uint32_t j = memo_hash(old[i].level, old[i].key) & (s->filter_size - 1);
            while (s->filters[j].level >= 0)
                j = (j + 1) & (s->filter_size - 1);
            s->filters[j] = old[i];
        }
        free(old);
    }
    uint32_t j = memo_hash(level, key) & (s->filter_size - 1);
    while (s->filters[j].level >= 0)
        j = (j + 1) & (s->filter_size - 1);
    s->filters[j] = (struct space_filter){key, level, s->nfilter_digits, n};
    if (n > 0) /* (the arrays are NULL until something is kept) */
        memcpy(s->filter_digits + s->nfilter_digits, digits, sizeof *digits * n);
    s->nfilter_digits += n;
    s->nfilters++;
}

/* The node of `level` below the prefix digits[0..level): found, or built by
 * evaluating the level's constraints for each of its values. *id is the node,
 * or NO_NODE when the memo is full: then its valid digits are in `scratch`
 * (radix[level] long) and *nscratch. -1 on an evaluation error or a stop. */
static int node_get(struct tf_space *s, int level, const int *digits, int32_t *scratch,
                    uint32_t *nscratch, int32_t *id, struct poll_state *ps)
{
    const struct space_level *l = &s->levels[level];
    uint64_t key = 0;
    for (int i = 0; i < l->nctx; i++)
        key += (uint64_t)digits[l->ctx[i]] * l->ctx_weight[i];
    /* where no two prefixes share a node, a node is met once: not worth keeping */
    *id = NO_NODE;
    if (l->memo && (*id = memo_find(s, level, key)) != NO_NODE)
        return 0;
    uint32_t nv = 0;
    /* Its valid digits depend only on what its own constraints read. */
    bool filtered = l->nconstraints > 0 && l->nlocal < l->nctx;
    uint64_t local = 0;
    const struct space_filter *f = NULL;
    if (filtered) {
        for (int i = 0; i < l->nlocal; i++)
            local += (uint64_t)digits[l->local[i]] * l->local_weight[i];
        f = filter_find(s, level, local);
    }
    if (f != NULL) {
        nv = f->n;
        if (nv > 0)
            memcpy(scratch, s->filter_digits + f->first, sizeof *scratch * nv);
        if (poll_step(s, ps, -1, digits, level, 0))
            return -1;
    } else {
        for (int i = 0; i < l->nlocal; i++)
            space_bind(s, l->local[i], digits[l->local[i]]);
        for (int v = 0; v < s->radix[level]; v++) {
            /* the prefix's share, so that fractions grow along the walk */
            if (poll_step(s, ps, -1, digits, level, 0))
                return -1;
            if (l->nconstraints > 0) {
                space_bind(s, level, v);
                int holds = level_holds(s, level);
                if (holds < 0)
                    return -1;
                if (!holds)
                    continue;
            }
            scratch[nv++] = v;
        }
        if (filtered)
            filter_add(s, level, local, scratch, nv);
    }
    *nscratch = nv;
    if (!l->memo || !memo_reserve(s, nv))
        return 0;
    struct space_node *nd = &s->nodes[s->nnodes];
    *nd = (struct space_node){.key = key, .first = s->nedges, .nvalid = nv, .level = level};
    if (nv > 0)
        memcpy(s->edge_digit + s->nedges, scratch, sizeof *scratch * nv);
    for (uint32_t e = 0; e < nv; e++)
        s->edge_child[s->nedges + e] = NO_NODE;
    s->nedges += nv;
    uint32_t mask = s->table_size - 1, i = memo_hash(level, key) & mask;
    while (s->table[i] != 0)
        i = (i + 1) & mask;
    s->table[i] = s->nnodes + 1;
    *id = (int32_t)s->nnodes++;
    return 0;
}

/* The node below edge `e` of node `parent` (NO_NODE: a scratch parent), for
 * the prefix digits[0..level] (digits[level] that edge's digit); as node_get,
 * remembering the child in the edge. */
static int child_get(struct tf_space *s, int32_t parent, uint32_t e, int level,
                     const int *digits, int32_t *scratch, uint32_t *nscratch, int32_t *id,
                     struct poll_state *ps)
{
    if (parent != NO_NODE) {
        uint32_t at = s->nodes[parent].first + e;
        if ((*id = s->edge_child[at]) != NO_NODE)
            return 0;
        if (node_get(s, level + 1, digits, scratch, nscratch, id, ps))
            return -1;
        if (s->levels[level].shared_child && *id != NO_NODE) {
            const struct space_node *nd = &s->nodes[parent];
            for (uint32_t i = 0; i < nd->nvalid; i++)
                s->edge_child[nd->first + i] = *id;
        } else {
            s->edge_child[at] = *id;
        }
        return 0;
    }
    return node_get(s, level + 1, digits, scratch, nscratch, id, ps);
}

/* ---- create, destroy ---- */

struct tf_space *tf_space_create_subset(const struct tf_kernel *k, int problem,
                                        const struct tf_device *dev, const bool *use,
                                        struct tf_error *err)
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
    s->memo_limit = TF_SPACE_MEMO_BYTES;
    s->stride = tf_xcalloc((size_t)n + 1, sizeof *s->stride);
    s->radix = tf_xcalloc((size_t)n + 1, sizeof *s->radix);
    s->suffix_free = tf_xcalloc((size_t)n + 1, sizeof *s->suffix_free);
    s->suffix_product = tf_xcalloc((size_t)n + 1, sizeof *s->suffix_product);
    s->levels = tf_xcalloc((size_t)n + 1, sizeof *s->levels);
    s->constraint_level = tf_xcalloc((size_t)k->nconstraints + 1, sizeof *s->constraint_level);
    s->slots = tf_xcalloc((size_t)k->nslots, sizeof *s->slots);
    s->walk_digits = tf_xcalloc((size_t)n + 1, sizeof *s->walk_digits);
    s->lo_digits = tf_xcalloc((size_t)n + 1, sizeof *s->lo_digits);
    s->hi_digits = tf_xcalloc((size_t)n + 1, sizeof *s->hi_digits);
    s->count_scratch = tf_xcalloc((size_t)n + 1, sizeof *s->count_scratch);

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
    for (int i = 0; i < n; i++)
        s->count_scratch[i] = tf_xmalloc(sizeof **s->count_scratch * (size_t)s->radix[i]);

    tf_kernel_bind(k, 0, problem, dev, s->slots);
    s->globally_valid = true;
    for (int c = 0; c < k->nconstraints; c++) {
        const struct tf_expr *e = k->constraints[c];
        if (use != NULL && !use[c]) {
            s->constraint_level[c] = -2;
            continue;
        }
        int level = s->constraint_level[c] = constraint_level(k, e);
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
    /* Contexts: level L's is every parameter above L that a constraint at L or
     * deeper reads; its key is their digits in mixed radix (a product of
     * radices of some parameters, so below the Cartesian size). */
    bool *read = tf_xcalloc((size_t)n + 1, sizeof *read);
    for (int level = n - 1; level >= 0; level--) {
        struct space_level *l = &s->levels[level];
        l->shared_child = !read[level];
        l->local = tf_xcalloc((size_t)level + 1, sizeof *l->local);
        l->local_weight = tf_xcalloc((size_t)level + 1, sizeof *l->local_weight);
        for (int p = 0; p < level; p++) {
            bool mine = false;
            for (int i = 0; i < l->nconstraints; i++)
                mine |= tf_expr_uses_slot(k->constraints[l->constraints[i]], p);
            if (mine)
                l->local[l->nlocal++] = p;
            read[p] |= mine;
        }
        uint64_t lw = 1;
        for (int i = l->nlocal - 1; i >= 0; i--) {
            l->local_weight[i] = lw;
            lw *= (uint64_t)s->radix[l->local[i]];
        }
        l->ctx = tf_xcalloc((size_t)level + 1, sizeof *l->ctx);
        l->ctx_weight = tf_xcalloc((size_t)level + 1, sizeof *l->ctx_weight);
        for (int p = 0; p < level; p++)
            if (read[p])
                l->ctx[l->nctx++] = p;
        uint64_t w = 1;
        for (int i = l->nctx - 1; i >= 0; i--) {
            l->ctx_weight[i] = w;
            w *= (uint64_t)s->radix[l->ctx[i]];
        }
        /* shared nodes need a level above with several values outside the context */
        l->memo = false;
        for (int p = 0, i = 0; p < level; p++) {
            if (i < l->nctx && l->ctx[i] == p)
                i++;
            else if (s->radix[p] > 1)
                l->memo = true;
        }
    }
    free(read);
    return s;
fail:
    tf_space_destroy(s);
    return NULL;
}

struct tf_space *tf_space_create(const struct tf_kernel *k, int problem,
                                 const struct tf_device *dev, struct tf_error *err)
{
    return tf_space_create_subset(k, problem, dev, NULL, err);
}

void tf_space_destroy(struct tf_space *s)
{
    if (s == NULL)
        return;
    tf_space_cursor_destroy(s->cursor);
    for (int i = 0; i <= s->n; i++) {
        free(s->levels[i].constraints);
        free(s->levels[i].ctx);
        free(s->levels[i].ctx_weight);
        free(s->levels[i].local);
        free(s->levels[i].local_weight);
        free(s->count_scratch[i]);
    }
    free(s->levels);
    free(s->constraint_level);
    free(s->stride);
    free(s->radix);
    free(s->suffix_free);
    free(s->suffix_product);
    free(s->slots);
    free(s->walk_digits);
    free(s->lo_digits);
    free(s->hi_digits);
    free(s->count_scratch);
    free(s->nodes);
    free(s->edge_digit);
    free(s->edge_child);
    free(s->table);
    free(s->filters);
    free(s->filter_digits);
    free(s);
}

uint64_t tf_space_cartesian(const struct tf_space *s) { return s->cartesian; }

int tf_space_constraint_level(const struct tf_space *s, int c)
{
    return c >= 0 && c < s->k->nconstraints ? s->constraint_level[c] : -2;
}

void tf_space_set_memo_limit(struct tf_space *s, size_t bytes)
{
    s->memo_limit = bytes;
    s->memo_full = space_memo_bytes(s) > bytes;
}

size_t tf_space_memo_bytes(const struct tf_space *s) { return space_memo_bytes(s); }

static void space_digits(const struct tf_space *s, uint64_t index, int *digits)
{
    for (int i = 0; i < s->n; i++) {
        digits[i] = (int)(index / s->stride[i]);
        index %= s->stride[i];
    }
}

/* ---- counting ---- */

/* Valid configurations below the prefix digits[0..level) whose node is *id
 * (NO_NODE: not known yet; set when it is memoised). */
static int count_node(struct tf_space *s, int level, int *digits, int32_t *id, uint64_t *out)
{
    if (s->suffix_free[level]) {
        *out = s->suffix_product[level];
        return 0;
    }
    int32_t *scratch = s->count_scratch[level];
    uint32_t nv = 0;
    if (*id == NO_NODE && node_get(s, level, digits, scratch, &nv, id, &s->poll))
        return -1;
    int32_t self = *id;
    if (self != NO_NODE) {
        if (s->nodes[self].counted) {
            *out = s->nodes[self].count;
            return 0;
        }
        nv = s->nodes[self].nvalid;
    }
    uint64_t total = 0;
    /* every value leads to the same node below: count it once */
    uint32_t walk = nv > 0 && s->levels[level].shared_child ? 1 : nv;
    if (level == s->n - 1) {
        total = nv;
    } else {
        for (uint32_t e = 0; e < walk; e++) {
            /* the arrays may move while the children are built: index, never hold */
            int32_t child = NO_NODE;
            if (self != NO_NODE) {
                uint32_t at = s->nodes[self].first + e;
                digits[level] = s->edge_digit[at];
                child = s->edge_child[at];
            } else {
                digits[level] = scratch[e];
            }
            uint64_t sub;
            if (count_node(s, level + 1, digits, &child, &sub))
                return -1;
            if (self != NO_NODE && child != NO_NODE)
                s->edge_child[s->nodes[self].first + e] = child;
            total += walk < nv ? sub * nv : sub;
        }
    }
    if (self != NO_NODE) {
        s->nodes[self].count = total;
        s->nodes[self].counted = true;
    }
    *out = total;
    return 0;
}

/* Count valid completions below `level`, within the bounds where still tight. */
static int count_walk(struct tf_space *s, int level, int *digits, bool tight_lo, bool tight_hi,
                      uint64_t *out)
{
    int32_t *scratch = s->count_scratch[level], id;
    uint32_t nv;
    if (node_get(s, level, digits, scratch, &nv, &id, &s->poll))
        return -1;
    if (id != NO_NODE)
        nv = s->nodes[id].nvalid;
    int vmin = tight_lo ? s->lo_digits[level] : 0;
    int vmax = tight_hi ? s->hi_digits[level] : s->radix[level] - 1;
    uint64_t total = 0;
    for (uint32_t e = 0; e < nv; e++) {
        int v = id != NO_NODE ? s->edge_digit[s->nodes[id].first + e] : scratch[e];
        if (v < vmin)
            continue;
        if (v > vmax)
            break;
        if (level == s->n - 1) {
            total++;
            continue;
        }
        digits[level] = v;
        bool tl = tight_lo && v == vmin, th = tight_hi && v == vmax;
        uint64_t sub;
        if (!tl && !th) {
            int32_t child = id != NO_NODE ? s->edge_child[s->nodes[id].first + e] : NO_NODE;
            if (count_node(s, level + 1, digits, &child, &sub))
                return -1;
            if (id != NO_NODE && child != NO_NODE)
                s->edge_child[s->nodes[id].first + e] = child;
        } else if (count_walk(s, level + 1, digits, tl, th, &sub)) {
            return -1;
        }
        total += sub;
    }
    *out = total;
    return 0;
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
    bool began = poll_begin(&s->poll, "counting the valid configurations");
    int rc = lo == 0 && hi == s->cartesian
                 ? count_node(s, 0, s->walk_digits, &(int32_t){NO_NODE}, count)
                 : count_walk(s, 0, s->walk_digits, true, true, count);
    poll_end(&s->poll, began);
    if (rc)
        *count = 0;
    return rc;
}

/* Valid configurations below edge `e` of the node of `level` (`id`, or the
 * scratch list when NO_NODE), digits[level] being that edge's digit. */
static int count_edge(struct tf_space *s, int level, int32_t id, uint32_t e, int *digits,
                      uint64_t *out)
{
    if (level == s->n - 1) {
        *out = 1;
        return 0;
    }
    int32_t child = id != NO_NODE ? s->edge_child[s->nodes[id].first + e] : NO_NODE;
    if (count_node(s, level + 1, digits, &child, out))
        return -1;
    if (id != NO_NODE && child != NO_NODE)
        s->edge_child[s->nodes[id].first + e] = child;
    return 0;
}

int tf_space_unrank(struct tf_space *s, uint64_t rank, uint64_t *index, struct tf_error *err)
{
    s->err = err;
    if (!s->globally_valid)
        return 0;
    if (s->n == 0) {
        *index = 0;
        return rank == 0;
    }
    bool began = poll_begin(&s->poll, "sampling the valid configurations");
    int rc = 0;
    uint64_t at = 0;
    int *digits = s->walk_digits;
    for (int level = 0; level < s->n; level++) {
        int32_t id;
        uint32_t nv;
        int32_t *scratch = s->count_scratch[level];
        if (node_get(s, level, digits, scratch, &nv, &id, &s->poll)) {
            rc = -1;
            goto out;
        }
        if (id != NO_NODE)
            nv = s->nodes[id].nvalid;
        uint32_t e = 0;
        for (; e < nv; e++) {
            digits[level] = id != NO_NODE ? s->edge_digit[s->nodes[id].first + e] : scratch[e];
            uint64_t sub;
            if (count_edge(s, level, id, e, digits, &sub)) {
                rc = -1;
                goto out;
            }
            if (rank < sub)
                break;
            rank -= sub;
        }
        if (e == nv) /* past the last valid configuration */
            goto out;
        at += (uint64_t)digits[level] * s->stride[level];
    }
    *index = at;
    rc = 1;
out:
    poll_end(&s->poll, began);
    return rc;
}

/* ---- the cursor ---- */

struct tf_space_cursor *tf_space_cursor_create(struct tf_space *s, uint64_t from,
                                               const char *activity)
{
    struct tf_space_cursor *c = tf_xcalloc(1, sizeof *c);
    int n = s->n;
    c->s = s;
    c->digits = tf_xcalloc((size_t)n + 1, sizeof *c->digits);
    c->node = tf_xcalloc((size_t)n + 1, sizeof *c->node);
    c->pos = tf_xcalloc((size_t)n + 1, sizeof *c->pos);
    c->prefix = tf_xcalloc((size_t)n + 1, sizeof *c->prefix);
    c->scratch = tf_xcalloc((size_t)n + 1, sizeof *c->scratch);
    c->nscratch = tf_xcalloc((size_t)n + 1, sizeof *c->nscratch);
    for (int i = 0; i < n; i++)
        c->scratch[i] = tf_xmalloc(sizeof **c->scratch * (size_t)s->radix[i]);
    c->poll.activity = activity;
    c->poll.started = monotonic_now();
    tf_space_cursor_seek(c, from);
    return c;
}

void tf_space_cursor_destroy(struct tf_space_cursor *c)
{
    if (c == NULL)
        return;
    for (int i = 0; i < c->s->n; i++)
        free(c->scratch[i]);
    free(c->scratch);
    free(c->nscratch);
    free(c->digits);
    free(c->node);
    free(c->pos);
    free(c->prefix);
    free(c);
}

void tf_space_cursor_seek(struct tf_space_cursor *c, uint64_t from)
{
    c->position = from < c->s->cartesian ? from : c->s->cartesian;
    c->pending = true;
    c->done = false;
}

uint64_t tf_space_cursor_position(const struct tf_space_cursor *c) { return c->position; }

const int *tf_space_cursor_digits(const struct tf_space_cursor *c) { return c->digits; }

/* The node (or scratch) of `level` on the cursor's path, into *n edges and their digits. */
static inline const int32_t *cursor_edges(const struct tf_space_cursor *c, int level,
                                          uint32_t *n)
{
    const struct tf_space *s = c->s;
    int32_t id = c->node[level];
    if (id == NO_NODE) {
        *n = c->nscratch[level];
        return c->scratch[level];
    }
    *n = s->nodes[id].nvalid;
    /* A space with no valid configuration has no edge array at all. */
    return *n ? s->edge_digit + s->nodes[id].first : NULL;
}

/* Make level+1's node the one below the edge the cursor takes at `level`. */
static int cursor_descend(struct tf_space_cursor *c, int level, int digit)
{
    struct tf_space *s = c->s;
    struct poll_state *ps = c->poll.activity ? &c->poll : &s->poll;
    c->digits[level] = digit;
    c->prefix[level + 1] = c->prefix[level] + (uint64_t)digit * s->stride[level];
    if (child_get(s, c->node[level], c->pos[level], level, c->digits, c->scratch[level + 1],
                  &c->nscratch[level + 1], &c->node[level + 1], ps))
        return -1;
    c->pos[level + 1] = 0;
    c->depth = level + 1;
    return 0;
}

/* First edge of `n` (ascending digits) whose digit is >= d. */
static uint32_t edge_lower_bound(const int32_t *digits, uint32_t n, int d)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (digits[mid] < d)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Descend to c->position: every level on the way takes the edge of the
 * position's digit while there is one, then stops at the first edge past it. */
static int cursor_settle(struct tf_space_cursor *c)
{
    struct tf_space *s = c->s;
    struct poll_state *ps = c->poll.activity ? &c->poll : &s->poll;
    c->pending = false;
    if (c->position >= s->cartesian || !s->globally_valid || s->n == 0) {
        /* no parameters: the one configuration, index 0 */
        c->done = !(s->n == 0 && s->globally_valid && c->position == 0);
        if (c->done)
            c->position = s->cartesian;
        return 0;
    }
    int target[s->n];
    space_digits(s, c->position, target);
    c->prefix[0] = 0;
    c->depth = 0;
    if (node_get(s, 0, c->digits, c->scratch[0], &c->nscratch[0], &c->node[0], ps))
        return -1;
    for (int level = 0;; level++) {
        uint32_t n;
        const int32_t *dig = cursor_edges(c, level, &n);
        uint32_t e = edge_lower_bound(dig, n, target[level]);
        c->pos[level] = e;
        c->depth = level;
        if (e == n || dig[e] != target[level] || level == s->n - 1)
            return 0;
        if (cursor_descend(c, level, target[level]))
            return -1;
    }
}

int tf_space_cursor_next(struct tf_space_cursor *c, uint64_t hi, uint64_t *index,
                         struct tf_error *err)
{
    struct tf_space *s = c->s;
    s->err = err;
    if (hi > s->cartesian)
        hi = s->cartesian;
    if (c->pending && cursor_settle(c))
        return -1;
    if (c->done)
        return 0;
    if (s->n == 0) {
        if (hi == 0)
            return 0;
        *index = 0;
        c->position = 1;
        c->done = true;
        return 1;
    }
    const int last = s->n - 1;
    struct poll_state *ps = c->poll.activity ? &c->poll : &s->poll;
    for (;;) {
        int level = c->depth;
        uint32_t n;
        const int32_t *dig = cursor_edges(c, level, &n);
        if (c->pos[level] >= n) { /* this node is done: back up */
            if (level == 0) {
                c->done = true;
                c->position = s->cartesian;
                return 0;
            }
            c->depth = level - 1;
            c->pos[level - 1]++;
            continue;
        }
        int d = dig[c->pos[level]];
        uint64_t base = c->prefix[level] + (uint64_t)d * s->stride[level];
        if (base >= hi) { /* every later index is past the range: resume here */
            c->position = base > c->position ? base : c->position;
            return 0;
        }
        if (level == last) {
            c->digits[level] = d;
            c->pos[level]++;
            c->position = base + 1;
            *index = base;
            return 1;
        }
        if (poll_step(s, ps, (double)base / (double)s->cartesian, NULL, 0, 0) ||
            cursor_descend(c, level, d))
            return -1;
    }
}

int tf_space_next(struct tf_space *s, uint64_t from, uint64_t hi, uint64_t *next,
                  struct tf_error *err)
{
    s->err = err;
    if (hi > s->cartesian)
        hi = s->cartesian;
    if (from >= hi || !s->globally_valid)
        return 0;
    /* Callers loop on next(last + 1): the space's own cursor then just goes on. */
    if (s->cursor == NULL)
        s->cursor = tf_space_cursor_create(s, from, NULL);
    else if (tf_space_cursor_position(s->cursor) != from || s->cursor->done)
        tf_space_cursor_seek(s->cursor, from);
    int rc = tf_space_cursor_next(s->cursor, hi, next, err);
    if (rc < 0) /* the error may be met again: start afresh next time */
        tf_space_cursor_seek(s->cursor, from);
    return rc;
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
    bool began = poll_begin(&s->poll, "sampling the valid configurations");
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
            if (poll_step(s, &s->poll, (double)nlist / (double)budget, NULL, 0, 0) ||
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
        qsort(ranks, nranks, sizeof *ranks, tf_config_cmp);
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
    qsort(list, nlist, sizeof *list, tf_config_cmp);
    poll_end(&s->poll, began);
    *out = list;
    *n = nlist;
    return 0;
fail:
    poll_end(&s->poll, began);
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
    bool valid, began = poll_begin(&s->poll, "sampling the valid configurations");
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
        if (poll_step(s, &s->poll, (double)nlist / (double)budget, NULL, 0, 0) ||
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
    qsort(list, nlist, sizeof *list, tf_config_cmp);
    double estimate = (double)hits / (double)draws * (double)s->cartesian;
    *valid_out = estimate < (double)nlist ? nlist : estimate >= 1.8e19 ? s->cartesian
                                                                       : (uint64_t)estimate;
    *out = list;
    *n = nlist;
    list = NULL;
    rc = 0;
out:
    poll_end(&s->poll, began);
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
    /* The sample is drawn up front and held (8 bytes a configuration, twice
     * over while drawing): past 2^26 configurations that is gigabytes, and
     * no run measures so many. A smaller space is enumerated whole instead. */
    if (budget > TF_SPACE_SAMPLE_MAX && s->cartesian > TF_SPACE_SAMPLE_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "a random search of %s / %s with budget %llu: the sample is drawn "
                            "up front, at most %llu configurations (a run that long would take "
                            "days); give search.budget up to that, with time_budget to end it "
                            "earlier",
                            s->k->name, s->k->problems[s->problem].name,
                            (unsigned long long)budget,
                            (unsigned long long)TF_SPACE_SAMPLE_MAX);
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
