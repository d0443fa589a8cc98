/* strategy.h - search strategies: which configurations to measure next (ask/tell).
 *
 * A strategy is a const table (like worker/backend.h): version first, a name,
 * and create / ask / tell / likely_next / destroy, its functions static in one
 * file coordinator/strategy_NAME.c, found through the NULL-terminated registry
 * tf_strategies[]. Callers never use a table directly: they hold a
 * `struct tf_strategy` (strategy.c), which wraps one table's instance with what
 * every strategy needs and none should get wrong:
 *   - validity: every proposal is checked against the space (constraints and
 *     device limits) before it leaves; an invalid one is never proposed;
 *   - distinctness: a configuration told or pending (proposed, unanswered) is
 *     never proposed again;
 *   - budgets: `budget` (configurations), `patience` (results without an
 *     improvement beyond `noise`), and exhaustion of the valid space; the
 *     reason the search ended is reported (tf_strategy_stop_name);
 *   - determinism: the state is a function of the seed and the sequence of
 *     results told (configurations, times, statuses, in arrival order), not of
 *     whether asks happened between results; proposals are a function of that
 *     state, the pending set and the asks' sizes (ask(8) and ask(4) + ask(4)
 *     may differ). Each ask draws from a generator derived from (seed, results
 *     told, proposals made since the last result); tell draws from a stream
 *     that only tell advances; a table's ask does not change its state (it
 *     proposes into a scratch list). So a resumed run that replays its
 *     journaled results through tell, in journal order, continues exactly as
 *     the uninterrupted run would have from a point where nothing was pending
 *     (in-flight work lost by a crash is simply proposed afresh), given the
 *     same ask sizes and the same LAPACK results (bayes, hybrid);
 *   - warm start: a list of seeds (tf_strategy_seed: other devices' best,
 *     mapped here) is proposed before the table's own proposals, in order,
 *     each once; seeds are never told (their source times are not comparable);
 *   - transfer: results measured on other devices (tf_strategy_prior), which a
 *     model-based table may learn from, each source's times on their own
 *     scale (bayes and hybrid do; the others ignore them). Never told, never
 *     counted: the search's results are this device's alone.
 *
 * Asynchronous by design: ask may be called while earlier proposals are
 * unanswered (a farm of workers pulls at different times) and results are told
 * in any order. A failed configuration (compile_error, crashed, timeout, ...)
 * is told with its status and counts as bad (worse than every measured one).
 * Strategies see only schema/ (through struct tf_strategy_space), so they are
 * unit-testable without MPI. coordinator/strategy.md is the spec. */
#ifndef TF_STRATEGY_H
#define TF_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../schema/error.h"

#define TF_STRATEGY_VERSION 1
#define TF_STRATEGY_MAX_PARAMS 64

/* What a strategy sees of a space: mixed-radix digits (parameter 0 most
 * significant, as schema/space.h), each parameter's values as numbers where
 * they are ordered (for neighbourhoods and models), and a validity oracle. */
struct tf_strategy_space {
    int nparams;
    const int *radix;               /* value count per parameter, >= 1 */
    const double *const *values;    /* values[p][v]: numeric value; NULL row: enum (no order) */
    uint64_t cartesian;             /* product of radix */
    uint64_t valid_count;           /* number of valid configurations; 0 = unknown */
    /* Full validity check of one index (must be cheap: called per candidate). */
    int (*is_valid)(void *ctx, uint64_t index, bool *valid, struct tf_error *err);
    /* Optional: first valid index >= from and < hi into *next; 1 found, 0 none,
     * -1 error (tf_space_next). Lets random sampling stay correct in sparse spaces. */
    int (*next_valid)(void *ctx, uint64_t from, uint64_t hi, uint64_t *next,
                      struct tf_error *err);
    void *ctx;
};

struct tf_ktcache;
struct tf_space;
struct tf_kernel;
/* Views of the spaces tunefarm knows (freed with tf_strategy_space_free):
 * a Kernel Tuner cache, whose valid set is its entries that are not
 * InvalidConfig (a replay knows it up front), and a kernel's space on one
 * device (schema/space.h, `valid_count` 0 if not counted). */
struct tf_strategy_space *tf_strategy_space_ktcache(const struct tf_ktcache *c);
struct tf_strategy_space *tf_strategy_space_kernel(struct tf_space *s, const struct tf_kernel *k,
                                                   uint64_t valid_count);
void tf_strategy_space_free(struct tf_strategy_space *sp);

/* One `name: value` of the job's search.options (strings; each strategy parses its own). */
struct tf_strategy_option {
    const char *name;
    const char *value;
};

/* An option a strategy accepts, for validation and documentation. */
struct tf_strategy_option_spec {
    const char *name;
    const char *def;                /* default, as text */
    const char *help;
};

/* Why a search stopped (or not). */
enum tf_strategy_stop {
    TF_STOP_NONE = 0,               /* still searching */
    TF_STOP_BUDGET,                 /* `budget` configurations proposed */
    TF_STOP_PATIENCE,               /* `patience` results without improvement beyond noise */
    TF_STOP_EXHAUSTED               /* every valid configuration proposed */
};
const char *tf_strategy_stop_name(enum tf_strategy_stop s);

/* A small deterministic generator (splitmix64), shared by all strategies. */
struct tf_rng {
    uint64_t s;
};
uint64_t tf_rng_next(struct tf_rng *r);
uint64_t tf_rng_below(struct tf_rng *r, uint64_t n); /* uniform in [0, n), n > 0 */
double tf_rng_unit(struct tf_rng *r);                /* uniform in [0, 1) */

struct tf_strategy;      /* a live search: one table's instance + the shared core */
struct tf_strategy_core; /* what the tables see of it (below) */
struct tf_propose;       /* the scratch list an ask fills */

struct tf_strategy_impl {
    int version;                    /* TF_STRATEGY_VERSION */
    const char *name;               /* job's search.strategy */
    const char *good_for;           /* one line for docs and `help` */
    const struct tf_strategy_option_spec *options; /* NULL-name terminated */
    /* Make the instance state (*state). Options are read with tf_core_opt_*. */
    int (*create)(struct tf_strategy_core *core, void **state, struct tf_error *err);
    /* Propose into `p` (tf_propose_add) up to tf_propose_room(p) configurations.
     * Must not change `state`: all randomness from `rng`. Proposing fewer is
     * allowed; the core fills the rest with random unseen valid configurations. */
    int (*ask)(void *state, struct tf_strategy_core *core, struct tf_rng *rng,
               struct tf_propose *p, struct tf_error *err);
    /* A result arrived: `time` (ms or any unit, lower is better) when status
     * is ok; a failure otherwise (time ignored). `rng` is the tell stream. */
    void (*tell)(void *state, struct tf_strategy_core *core, uint64_t config, double time,
                 int status, struct tf_rng *rng);
    /* Optional: what the next asks will probably propose (compile-ahead). NULL:
     * the core calls ask with the next ask's generator without committing. */
    int (*likely_next)(void *state, struct tf_strategy_core *core, struct tf_rng *rng,
                       struct tf_propose *p, struct tf_error *err);
    void (*destroy)(void *state);
};

/* The registry, NULL-terminated, and lookup by name (NULL if none). */
extern const struct tf_strategy_impl *const tf_strategies[];
const struct tf_strategy_impl *tf_strategy_find(const char *name);
/* The registry for people (`tunefarm help strategies`): each strategy's name,
 * what it is good for, its options with their defaults and help. */
void tf_strategy_help(FILE *out);

struct tf_job;
/* The job's search section against the registry: search.strategy one of its
 * names, each search.options name one of that strategy's and each value one
 * it accepts (the strategy's own parser says, by creating it with that option
 * alone over a two-configuration space). The loader (schema/job.c) keeps the
 * section raw, with positions, because schema/ cannot know the strategies;
 * this is where it is checked, on rank 0 before anything runs (coordinator.c,
 * and tf_plan_create for any other caller) and by `tunefarm compile` (main.c).
 * Errors are TF_ERR_SCHEMA at job->file:line:col of the offending name or
 * value, listing the valid names. 0, or -1 + err. */
int tf_strategy_check_job(const struct tf_job *job, struct tf_error *err);

/* Search settings that are not a strategy's own. */
struct tf_search_limits {
    uint64_t budget;                /* configurations to propose; 0 = the whole valid space */
    uint64_t patience;              /* stop after this many results without improvement; 0 = off */
    double noise;                   /* relative improvement that counts (e.g. 0.005) */
};

/* A search of `space` with strategy `name`. `space` (and what it points at) must
 * outlive the search. Unknown option names and bad values are errors naming
 * the option and what is expected. */
struct tf_strategy *tf_strategy_create(const char *name, const struct tf_strategy_space *space,
                                       const struct tf_strategy_option *opts, int nopts,
                                       uint64_t seed, const struct tf_search_limits *limits,
                                       struct tf_error *err);
void tf_strategy_destroy(struct tf_strategy *s);
/* Up to `n` new configurations into `out` (*got of them): valid, never proposed
 * before, never told. *got < n only when the search has stopped (budget,
 * patience, exhausted: tf_strategy_stopped). -1 + err TF_ERR_INTERRUPTED when
 * the stop hook (tf_strategy_set_stop) ended it: the search is as before. */
int tf_strategy_ask(struct tf_strategy *s, uint64_t *out, int n, int *got, struct tf_error *err);
/* The stop hook: a long model computation (bayes's and hybrid's fit and
 * predictions, O(fit_steps * fit_train^3) a refit with extreme options) asks
 * it between steps, and when it says true the ask fails with
 * TF_ERR_INTERRUPTED, proposing nothing and changing nothing. So a signal or
 * the job's time budget ends a run in seconds, not after the computation.
 * One hook per process (NULL: never stop); a replay of the same results
 * without it proposes the same. */
typedef bool (*tf_strategy_stop_fn)(void *ctx);
void tf_strategy_set_stop(tf_strategy_stop_fn fn, void *ctx);
/* A result for `config` (a proposed one, or any valid one when replaying a
 * journal or warm-starting). Told twice: the second is ignored; so is a
 * configuration that is not valid here (it was never this search's: it would
 * count against the valid set). A non-zero status, or a time that is not
 * finite and positive, counts as a failure. Once `patience` has stopped the
 * search it stays stopped, whatever arrives after. -1 + err if the space's
 * validity check failed or `config` is outside the space. */
int tf_strategy_tell(struct tf_strategy *s, uint64_t config, double time, int status,
                     struct tf_error *err);
/* Whether a result counts as measured: status ok (0) and a finite time > 0.
 * The plan applies the same rule to what it screens and seeds from. */
bool tf_strategy_time_ok(int status, double time);
/* Up to `n` configurations the next asks will probably propose, without
 * committing (a compile-ahead hint; may differ once results arrive). */
int tf_strategy_likely_next(struct tf_strategy *s, uint64_t *out, int n, int *got,
                            struct tf_error *err);
/* Warm start: `configs[0..n)` (e.g. the best configurations measured on other
 * devices, mapped onto this space) are proposed before anything the strategy
 * itself proposes, in this order, each once. Nothing is told: a seed informs
 * the strategy only through its result measured here (times on another
 * device are not comparable). Seeds outside the space, invalid here or listed
 * twice are dropped now (*kept: how many remain); seeds count against the
 * budget like any proposal; a seed already told or pending is skipped, so a
 * resumed run proposes the seeds it has not measured yet, first. Replaces an
 * earlier list. 0, or -1 + err if the space's validity check failed. */
int tf_strategy_seed(struct tf_strategy *s, const uint64_t *configs, size_t n, size_t *kept,
                     struct tf_error *err);
size_t tf_strategy_seed_count(const struct tf_strategy *s);
/* Transfer: results measured elsewhere, for a table whose model can learn
 * how far they speak for this device (bayes, hybrid; the others ignore
 * them): configs[i] mapped onto this space (it need not be valid here: a
 * model needs only its parameters' values), times[i] its time on source
 * source[i] (any int id; times are comparable only within one source, lower
 * is better). Never told, proposed only if the table wants it, never
 * counted. An entry outside the space or with a time that is not positive
 * and finite is dropped, and so is a repeat of a (source, configuration)
 * pair (*kept: how many remain). The arrays are copied. Set before the first
 * ask: the model is a function of them, and a resumed run sets the same list
 * again. Replaces an earlier list. */
void tf_strategy_prior(struct tf_strategy *s, const uint64_t *configs, const double *times,
                       const int *source, size_t n, size_t *kept);
/* How many transfer results the search holds (tf_strategy_prior's *kept). */
size_t tf_strategy_prior_count(const struct tf_strategy *s);
/* How many of them its table learns from: at most its option `transfer`
 * (the first ones given); 0 for a table without that option. */
size_t tf_strategy_prior_used(const struct tf_strategy *s);
/* Which of a source's n results (ranked fastest first) a transfer passes, at
 * most `per`: its `top` fastest (top <= per), then the rest spread evenly
 * over the ranks below (the whole range of times, not only the best). Rank
 * positions, ascending, into out[0..per); returns how many. The plan and the
 * study choose with it alike. */
size_t tf_strategy_prior_ranks(size_t n, size_t per, size_t top, size_t *out);
enum tf_strategy_stop tf_strategy_stopped(const struct tf_strategy *s);
uint64_t tf_strategy_proposed(const struct tf_strategy *s); /* proposals made (incl. told-only) */
uint64_t tf_strategy_told(const struct tf_strategy *s);
/* Best told so far: 1 and *config, *time if any result was ok; 0 otherwise. */
int tf_strategy_best(const struct tf_strategy *s, uint64_t *config, double *time);
const char *tf_strategy_name(const struct tf_strategy *s);

/* ---- for the tables (strategy_*.c) ---------------------------------------- */

const struct tf_strategy_space *tf_core_space(const struct tf_strategy_core *c);
uint64_t tf_core_seed(const struct tf_strategy_core *c);
/* Configurations proposed or told so far (pending included). */
uint64_t tf_core_proposed(const struct tf_strategy_core *c);
/* An option's value, parsed; the default from the spec when absent. -1 + err
 * when the text is not what is expected (the message names the option). */
int tf_core_opt_int(struct tf_strategy_core *c, const char *name, int64_t lo, int64_t hi,
                    int64_t *out, struct tf_error *err);
int tf_core_opt_double(struct tf_strategy_core *c, const char *name, double lo, double hi,
                       double *out, struct tf_error *err);
/* Told or pending. */
bool tf_core_seen(const struct tf_strategy_core *c, uint64_t config);
/* Pending (proposed, not yet told): the smallest cap of them, ascending, into
 * out; returns how many there are (cap 0: just the count). */
size_t tf_core_pending(const struct tf_strategy_core *c, uint64_t *out, size_t cap);
/* Told: 1 and *time (INFINITY for a failure); 0 if not told. */
int tf_core_told_time(const struct tf_strategy_core *c, uint64_t config, double *time);
/* The results told, in arrival order (times INFINITY for failures). */
size_t tf_core_history(const struct tf_strategy_core *c, const uint64_t **configs,
                       const double **times);
/* The transfer results (tf_strategy_prior), in the order given: *configs,
 * *times and *source point at n of them (NULL when none), owned by the search
 * and valid until the next tf_strategy_prior or its destroy. */
size_t tf_core_prior(const struct tf_strategy_core *c, const uint64_t **configs,
                     const double **times, const int **source);
/* Valid? (the space's check; errors count as invalid and are kept for the caller). */
bool tf_core_valid(struct tf_strategy_core *c, uint64_t config);
/* A uniformly random valid configuration not seen and not in `p` (rejection
 * sampling; in sparse spaces a random start and the next valid unseen one).
 * 1 found, 0 none left. */
int tf_core_random_unseen(struct tf_strategy_core *c, struct tf_rng *rng,
                          const struct tf_propose *p, uint64_t *out);
/* The same, seen or not: a uniformly random valid configuration. */
int tf_core_random_valid(struct tf_strategy_core *c, struct tf_rng *rng, uint64_t *out);
/* Mixed-radix digits of `config` and back. */
void tf_core_decode(const struct tf_strategy_core *c, uint64_t config, int *digits);
/* An ordered (numeric) parameter's values by value, whatever order the job
 * lists them in: the rank of value index v, and the value index at a rank
 * (clamped to 0..radix-1). For an enum, the index itself. Steps "along an
 * ordered parameter's values" (local, genetic) move by rank. */
int tf_core_value_rank(const struct tf_strategy_core *c, int param, int v);
int tf_core_value_at(const struct tf_strategy_core *c, int param, int rank);
uint64_t tf_core_encode(const struct tf_strategy_core *c, const int *digits);

/* The scratch list of one ask: tf_propose_add checks validity, seen and
 * duplicates; returns 1 if taken, 0 if refused (and why does not matter). */
int tf_propose_add(struct tf_propose *p, uint64_t config);
int tf_propose_room(const struct tf_propose *p);   /* how many more it takes */
bool tf_propose_has(const struct tf_propose *p, uint64_t config);
/* At most n proposals into p from another table's ask (state: its instance),
 * in one call: how a strategy delegates to others. Its ask's return value. */
int tf_propose_some(struct tf_propose *p, int n, const struct tf_strategy_impl *impl,
                    void *state, struct tf_strategy_core *core, struct tf_rng *rng,
                    struct tf_error *err);

#endif
