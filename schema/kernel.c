/* kernel.c - load and validate a kernel file (kernels/NAME/kernel.yaml), and
 * the configuration helpers every other module uses.
 *
 * The loader reads the YAML through the job's bundle (so a worker rebuilds the
 * very same kernel from memory), walks the tree with the yamldoc helpers and
 * checks everything up front: names, types, value lists, sources, and every
 * expression, compiled against the kernel's symbol table. Sections are read in
 * a fixed order whatever the document order, because later ones depend on
 * earlier ones: problem sizes (constants, evaluated now) fix the size names,
 * parameters fix the symbol table, and only then are constraints, launch
 * geometry, arguments and metrics compiled and the default resolved for every
 * problem (its values may be expressions over the sizes). `time_s` and
 * `energy_j` are the last two slots, so the symbol table without them (for
 * everything but metrics) is simply the same array two shorter, and using
 * either in a constraint is "undefined name".
 * Every error is placed at file:line:column of the offending node; expression
 * errors add the expression's own column to the scalar's start.
 *
 * A configuration is a mixed-radix number over the parameters' value lists,
 * parameter 0 most significant; decode/encode/bind/format/defines all follow
 * that one convention. */
#include "kernel.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "defines.h"
#include "exchange.h"
#include "hash.h"
#include "result.h"
#include "yamldoc.h"

/* The limits of kernel.h are the archive's field widths; these two are visible. */
_Static_assert(sizeof ((struct tf_archive_problem *)0)->name == TF_PROBLEM_NAME_MAX + 1,
               "TF_PROBLEM_NAME_MAX must follow the archive's problem name field");

#define KERNEL_MAX_OPTIONS 64
/* Values one range may give a parameter: a list in YAML is bounded by the
 * document's node limit, a range only by this (8 MiB of int64 per parameter). */
#define KERNEL_MAX_RANGE_VALUES (1 << 20)

static const char *const kernel_keys[] = {
    "name",        "description", "language",  "source", "entry",   "options",
    "reference",   "problems",    "parameters", "constraints", "default", "launch",
    "arguments",   "verify",      "metrics",    "defines",    NULL};

/* Loader state: the document, the kernel under construction, where errors go. */
struct kload {
    struct tf_ydoc d;
    struct tf_kernel *k;
    struct tf_bundle *bundle;
    struct tf_error *err;
};

/* ---- small helpers ---------------------------------------------------------- */


/* The built-in columns of the archive's results table (schema/archive.md):
 * parameters and metrics are columns of the same table, so they may not take
 * these names (the archive would refuse to be written, after the run). */
static const char *const result_columns[] = {
    "run",          "device",       "problem",    "config",      "status",     "samples",
    "time_median",  "time_min",     "time_mean",  "time_rsd",    "compile_time",
    "device_time",  "registers",    "shared_bytes", "spill_bytes", "warnings",
    "first_warning", "sm_clock_mhz",
    "power_w",      "temperature_c", "energy_j",  "flushed_l2",  "throttled",  "phase",
    "timestamp",    "message",      "noisy",      "energy_status", NULL};

static bool is_result_column(const char *s)
{
    for (int i = 0; result_columns[i]; i++)
        if (strcmp(s, result_columns[i]) == 0)
            return true;
    return false;
}

/* -1 + an error at `n` if `s` is longer than `max` bytes, the width of the
 * archive field `field` that stores it. */
static int check_length(struct kload *L, const yaml_node_t *n, const char *what, const char *s,
                        size_t max, const char *field)
{
    size_t len = strlen(s);
    if (len <= max)
        return 0;
    return tf_ydoc_fail(&L->d, n, L->err, TF_ERR_SCHEMA,
                        "%s '%.40s...' is %zu bytes long; at most %zu fit %s: shorten it",
                        what, s, len, max, field);
}

static bool is_reserved_name(const char *s)
{
    if (strcmp(s, "time_s") == 0 || strcmp(s, "energy_j") == 0)
        return true;
    for (int p = 0; p < TF_DEVPROP_COUNT; p++)
        if (strcmp(s, tf_devprop_name(p)) == 0)
            return true;
    return false;
}

/* Compile the scalar `n` as an expression; NULL + located error on failure. */
static struct tf_expr *compile_node(struct kload *L, const yaml_node_t *n, const char *what,
                                    const struct tf_symtab *syms)
{
    char buf[96];
    int kind = tf_ydoc_kind(n);
    if (kind < 0 || kind == TF_YS_NULL) {
        tf_ydoc_fail(&L->d, n, L->err, TF_ERR_SCHEMA, "%s must be an expression, found %s",
                     what, tf_ydoc_describe(n, buf, sizeof buf));
        return NULL;
    }
    const char *text = tf_ydoc_text(n);
    struct tf_error e;
    tf_error_clear(&e);
    struct tf_expr *x = tf_expr_compile(text, syms, &e);
    if (x)
        return x;
    int line = tf_ydoc_line(n), col = tf_ydoc_column(n);
    bool one_line = n->start_mark.line == n->end_mark.line &&
                    n->data.scalar.style != YAML_LITERAL_SCALAR_STYLE &&
                    n->data.scalar.style != YAML_FOLDED_SCALAR_STYLE;
    if (one_line && e.column > 0)
        col = (int)n->start_mark.column + e.column + (tf_ydoc_quoted(n) ? 1 : 0);
    const char *hint = "";
    if (syms->count < L->k->nslots && strstr(e.message, "time_s"))
        hint = " (time_s, the measured time, is only available in metrics)";
    else if (syms->count < L->k->nslots && strstr(e.message, "energy_j"))
        hint = " (energy_j, the measured energy of a launch, is only available in metrics)";
    tf_error_at(L->err, e.code ? e.code : TF_ERR_SYNTAX, L->d.file, line, col, "in %s: %s%s",
                what, e.message, hint);
    return NULL;
}

/* Read the file at `rel_node` (relative to the kernel's folder) into the bundle. */
static int read_source(struct kload *L, const yaml_node_t *n, const char *key, const char *what,
                       char **path_out, const char **data_out)
{
    const char *rel;
    if (tf_ydoc_string(&L->d, n, key, &rel, L->err) != 0)
        return -1;
    char *path = tf_path_join(L->k->dir, rel);
    struct tf_error e;
    tf_error_clear(&e);
    const struct tf_bundle_file *f = tf_bundle_read(L->bundle, path, &e);
    if (f == NULL) {
        tf_ydoc_fail(&L->d, n, L->err, TF_ERR_IO,
                     "cannot read the %s: %s (paths are relative to the folder of %s)", what,
                     e.message, L->d.file);
        free(path);
        return -1;
    }
    *data_out = f->data;
    *path_out = path;
    return 0;
}

/* ---- sections ------------------------------------------------------------------ */

static int load_header(struct kload *L, yaml_node_t *root)
{
    struct tf_ydoc *d = &L->d;
    struct tf_kernel *k = L->k;
    const char *s;
    yaml_node_t *n;

    if (tf_ydoc_ident(d, tf_ydoc_get(d, root, "name"), "name", &s, L->err) != 0 ||
        check_length(L, tf_ydoc_get(d, root, "name"), "kernel name", s, TF_KERNEL_NAME_MAX,
                     "the archive's kernel column (/plan)") != 0)
        return -1;
    k->name = tf_xstrdup(s);
    if ((n = tf_ydoc_get(d, root, "description")) != NULL) {
        if (tf_ydoc_string(d, n, "description", &s, L->err) != 0)
            return -1;
        k->description = tf_xstrdup(s);
    } else {
        k->description = tf_xstrdup("");
    }
    n = tf_ydoc_get(d, root, "language");
    if (tf_ydoc_string(d, n, "language", &s, L->err) != 0)
        return -1;
    if (strcmp(s, "c") != 0 && strcmp(s, "cuda") != 0)
        return tf_ydoc_fail(d, n, L->err, TF_ERR_SCHEMA,
                            "'language' must be 'c' (host backend) or 'cuda' (CUDA and HIP "
                            "backends), found '%s'",
                            s);
    k->language = tf_xstrdup(s);
    if (read_source(L, tf_ydoc_get(d, root, "source"), "source", "kernel source",
                    &k->source_path, &k->source) != 0)
        return -1;
    if (tf_ydoc_ident(d, tf_ydoc_get(d, root, "entry"), "entry", &s, L->err) != 0)
        return -1;
    k->entry = tf_xstrdup(s);

    if ((n = tf_ydoc_get(d, root, "options")) != NULL) {
        if (tf_ydoc_expect_seq(d, n, "options", L->err) != 0)
            return -1;
        int count = tf_ydoc_seq_size(n);
        if (count > KERNEL_MAX_OPTIONS)
            return tf_ydoc_fail(d, n, L->err, TF_ERR_SCHEMA,
                                "'options' has %d flags; at most %d are allowed", count,
                                KERNEL_MAX_OPTIONS);
        k->options = tf_xcalloc((size_t)count, sizeof *k->options);
        for (int i = 0; i < count; i++) {
            yaml_node_t *item = tf_ydoc_seq_item(d, n, i);
            if (tf_ydoc_string(d, item, "options", &s, L->err) != 0)
                return -1;
            if (s[0] != '-')
                return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                    "compiler option '%s' must start with '-' (e.g. -O3)", s);
            k->options[k->option_count++] = tf_xstrdup(s);
        }
    }
    /* Headers under include paths are part of the job hash (bundle.c, "include paths"). */
    int bad;
    struct tf_error e = {0};
    if (tf_bundle_add_includes(L->bundle, k->file, k->options, k->option_count, k->language,
                               k->source_path, &bad, &e) != 0)
        return tf_ydoc_fail(d, bad >= 0 ? tf_ydoc_seq_item(d, n, bad)
                                        : tf_ydoc_get(d, root, "source"),
                            L->err, e.code, "%s", e.message);

    n = tf_ydoc_get(d, root, "reference");
    static const char *const ref_keys[] = {"source", "entry", "depends_on", "independent_of",
                                           NULL};
    if (tf_ydoc_expect_map(d, n, "reference", L->err) != 0 ||
        tf_ydoc_check_keys(d, n, "'reference'", ref_keys, L->err) != 0 ||
        tf_ydoc_require(d, n, "source", "'reference'",
                        "the C file of the trusted implementation, relative to this file",
                        L->err) != 0 ||
        tf_ydoc_require(d, n, "entry", "'reference'", "the name of the reference function",
                        L->err) != 0)
        return -1;
    if (read_source(L, tf_ydoc_get(d, n, "source"), "source", "reference source",
                    &k->ref_source_path, &k->ref_source) != 0)
        return -1;
    if (tf_ydoc_ident(d, tf_ydoc_get(d, n, "entry"), "entry", &s, L->err) != 0)
        return -1;
    k->ref_entry = tf_xstrdup(s);
    return 0;
}

/* Evaluate a problem size: a constant expression giving an integer >= 0. */
static int eval_size(struct kload *L, const yaml_node_t *n, const char *what, int64_t *out)
{
    static const struct tf_symtab none = {NULL, 0};
    struct tf_expr *x = compile_node(L, n, what, &none);
    if (x == NULL)
        return -1;
    struct tf_value dummy = tf_int(0), v;
    struct tf_error e;
    tf_error_clear(&e);
    int rc = tf_expr_eval(x, &dummy, &v, &e);
    tf_expr_destroy(x);
    if (rc != 0)
        return tf_ydoc_fail(&L->d, n, L->err, TF_ERR_EVAL, "in %s: %s", what, e.message);
    if (v.is_float) {
        /* Accept 1e6 and friends, but only when they are exact integers. */
        if (!(v.u.f >= 0 && v.u.f <= 9007199254740992.0) || v.u.f != (double)(int64_t)v.u.f)
            return tf_ydoc_fail(&L->d, n, L->err, TF_ERR_SCHEMA,
                                "%s must be a whole number >= 0, found %g", what, v.u.f);
        v = tf_int((int64_t)v.u.f);
    }
    if (v.u.i < 0)
        return tf_ydoc_fail(&L->d, n, L->err, TF_ERR_SCHEMA,
                            "%s must be >= 0, found %" PRId64, what, v.u.i);
    *out = v.u.i;
    return 0;
}

static int load_problems(struct kload *L, yaml_node_t *root)
{
    struct tf_ydoc *d = &L->d;
    struct tf_kernel *k = L->k;
    yaml_node_t *probs = tf_ydoc_get(d, root, "problems");
    if (tf_ydoc_expect_map(d, probs, "problems", L->err) != 0 ||
        tf_ydoc_check_keys(d, probs, "'problems'", NULL, L->err) != 0)
        return -1;
    int np = tf_ydoc_map_size(probs);
    if (np == 0)
        return tf_ydoc_fail(d, probs, L->err, TF_ERR_SCHEMA,
                            "'problems' is empty; define at least one, e.g. 'small: {N: 1024}'");
    k->problems = tf_xcalloc((size_t)np, sizeof *k->problems);

    /* The first problem fixes the size names and their order. */
    yaml_node_t *first = tf_ydoc_map_value(d, probs, 0);
    const char *first_name = tf_ydoc_text(tf_ydoc_map_key(d, probs, 0));
    char what[160];
    snprintf(what, sizeof what, "problem '%s'", first_name);
    if (tf_ydoc_expect_map(d, first, what, L->err) != 0 ||
        tf_ydoc_check_keys(d, first, what, NULL, L->err) != 0)
        return -1;
    int ns = tf_ydoc_map_size(first);
    k->size_names = tf_xcalloc((size_t)ns, sizeof *k->size_names);
    char list[512] = "";
    size_t used = 0;
    for (int i = 0; i < ns; i++) {
        yaml_node_t *kn = tf_ydoc_map_key(d, first, i);
        const char *s;
        if (tf_ydoc_ident(d, kn, "size name", &s, L->err) != 0)
            return -1;
        if (is_reserved_name(s))
            return tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                                "size name '%s' is reserved (a device property, time_s or "
                                "energy_j); rename it",
                                s);
        if (tf_expr_is_keyword(s))
            return tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                                "size name '%s' is a word of the expression language (and, or, "
                                "not), so no expression could read it; rename it",
                                s);
        /* the archive's problems table has these columns besides the sizes */
        if (strcmp(s, "id") == 0 || strcmp(s, "name") == 0 || strcmp(s, "default_config") == 0)
            return tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                                "size name '%s' is reserved (a column of the archive's problems "
                                "table); rename it",
                                s);
        k->size_names[k->nsizes++] = tf_xstrdup(s);
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", s);
    }

    for (int p = 0; p < np; p++) {
        yaml_node_t *kn = tf_ydoc_map_key(d, probs, p);
        yaml_node_t *sizes = tf_ydoc_map_value(d, probs, p);
        const char *pname;
        if (tf_ydoc_ident(d, kn, "problem name", &pname, L->err) != 0 ||
            check_length(L, kn, "problem name", pname, TF_PROBLEM_NAME_MAX,
                         "the archive's problem name column") != 0)
            return -1;
        snprintf(what, sizeof what, "problem '%s'", pname);
        if (tf_ydoc_expect_map(d, sizes, what, L->err) != 0 ||
            tf_ydoc_check_keys(d, sizes, what, NULL, L->err) != 0)
            return -1;
        struct tf_problem *pr = &k->problems[k->nproblems++];
        pr->name = tf_xstrdup(pname);
        pr->sizes = tf_xcalloc((size_t)(ns ? ns : 1), sizeof *pr->sizes);
        /* Extra sizes first: they point at a precise key. */
        for (int i = 0; i < tf_ydoc_map_size(sizes); i++) {
            yaml_node_t *sk = tf_ydoc_map_key(d, sizes, i);
            const char *sname = tf_ydoc_text(sk);
            int slot = -1;
            for (int j = 0; j < ns; j++)
                if (strcmp(k->size_names[j], sname) == 0)
                    slot = j;
            if (slot < 0)
                return tf_ydoc_fail(d, sk, L->err, TF_ERR_SCHEMA,
                                    "problem '%s' defines size '%s', which problem '%s' does "
                                    "not (every problem must define the same sizes: %s)",
                                    pname, sname, first_name, list);
            char swhat[256];
            snprintf(swhat, sizeof swhat, "size '%s' of problem '%s'", sname, pname);
            if (eval_size(L, tf_ydoc_map_value(d, sizes, i), swhat, &pr->sizes[slot]) != 0)
                return -1;
        }
        for (int j = 0; j < ns; j++)
            if (tf_ydoc_get_key(d, sizes, k->size_names[j]) == NULL)
                return tf_ydoc_fail(d, sizes, L->err, TF_ERR_SCHEMA,
                                    "problem '%s' has no size '%s' (every problem must define "
                                    "the same sizes: %s)",
                                    pname, k->size_names[j], list);
    }
    return 0;
}

/* Integer values written as a range, both ends included:
 *   {range: [FIRST, LAST]}        FIRST, FIRST+1, ..., LAST
 *   {range: [FIRST, LAST, STEP]}  FIRST, FIRST+STEP, ... up to LAST (LAST only if reached)
 *   {pow2: [FIRST, LAST]}         the powers of two from FIRST to LAST, both powers of two
 * One form only, so the values a parameter can take are read off one line;
 * pow2's ends are values, not exponents, and an end that is not a power of two
 * is refused, which catches [0, 6] written for 1..64. */
static int load_range(struct kload *L, yaml_node_t *vals, struct tf_param *pa)
{
    static const char *const range_keys[] = {"range", "pow2", NULL};
    struct tf_ydoc *d = &L->d;
    char what[200], buf[96];
    snprintf(what, sizeof what, "the range of parameter '%s'", pa->name);
    if (tf_ydoc_check_keys(d, vals, what, range_keys, L->err) != 0)
        return -1;
    if (tf_ydoc_map_size(vals) != 1)
        return tf_ydoc_fail(d, vals, L->err, TF_ERR_SCHEMA,
                            "parameter '%s' gives its values as a list ([64, 128]), as "
                            "{range: [FIRST, LAST]}, {range: [FIRST, LAST, STEP]} or "
                            "{pow2: [FIRST, LAST]}: one form, found %d keys",
                            pa->name, tf_ydoc_map_size(vals));
    const char *form = tf_ydoc_text(tf_ydoc_map_key(d, vals, 0));
    bool pow2 = strcmp(form, "pow2") == 0;
    yaml_node_t *list = tf_ydoc_map_value(d, vals, 0);
    snprintf(what, sizeof what, "%s of parameter '%s'", form, pa->name);
    if (tf_ydoc_expect_seq(d, list, what, L->err) != 0)
        return -1;
    int n = tf_ydoc_seq_size(list);
    if (pow2 ? n != 2 : n < 2 || n > 3)
        return tf_ydoc_fail(d, list, L->err, TF_ERR_SCHEMA,
                            pow2 ? "'pow2' of parameter '%s' takes [FIRST, LAST] (powers of two, "
                                   "both included), found %d values"
                                 : "'range' of parameter '%s' takes [FIRST, LAST] or [FIRST, "
                                   "LAST, STEP] (both ends included), found %d values",
                            pa->name, n);
    int64_t v[3] = {0, 0, 1};
    yaml_node_t *items[3] = {NULL, NULL, NULL};
    for (int i = 0; i < n; i++) {
        items[i] = tf_ydoc_seq_item(d, list, i);
        if (tf_ydoc_kind(items[i]) != TF_YS_INT)
            return tf_ydoc_fail(d, items[i], L->err, TF_ERR_SCHEMA,
                                "'%s' of parameter '%s' takes integers, found %s", form, pa->name,
                                tf_ydoc_describe(items[i], buf, sizeof buf));
        if (tf_ydoc_int(d, items[i], what, &v[i], L->err) != 0)
            return -1;
    }
    if (v[1] < v[0])
        return tf_ydoc_fail(d, items[1], L->err, TF_ERR_SCHEMA,
                            "'%s' of parameter '%s' runs from %" PRId64 " down to %" PRId64
                            ": LAST must be >= FIRST",
                            form, pa->name, v[0], v[1]);
    if (n == 3 && v[2] < 1)
        return tf_ydoc_fail(d, items[2], L->err, TF_ERR_SCHEMA,
                            "the step of parameter '%s' must be >= 1, found %" PRId64, pa->name,
                            v[2]);
    uint64_t count;
    if (pow2) {
        for (int i = 0; i < 2; i++)
            if (v[i] < 1 || (v[i] & (v[i] - 1)) != 0)
                return tf_ydoc_fail(d, items[i], L->err, TF_ERR_SCHEMA,
                                    "'pow2' of parameter '%s' lists the powers of two from FIRST "
                                    "to LAST, and %" PRId64 " is not one: give the values "
                                    "themselves ([1, 64] for 1, 2, 4, ..., 64), not exponents",
                                    pa->name, v[i]);
        count = (uint64_t)(__builtin_ctzll((unsigned long long)v[1]) -
                           __builtin_ctzll((unsigned long long)v[0])) + 1;
    } else {
        /* the span of two int64 fits a uint64; +1 only once it is known small */
        count = ((uint64_t)v[1] - (uint64_t)v[0]) / (uint64_t)v[2];
        if (count >= KERNEL_MAX_RANGE_VALUES)
            return tf_ydoc_fail(d, list, L->err, TF_ERR_SCHEMA,
                                "'range' of parameter '%s' gives more than %d values, the most "
                                "one parameter may have: narrow it or take a larger step",
                                pa->name, KERNEL_MAX_RANGE_VALUES);
        count++;
    }
    pa->kind = TF_PARAM_INT;
    pa->ints = tf_xcalloc((size_t)count, sizeof *pa->ints);
    for (uint64_t i = 0; i < count; i++)
        pa->ints[pa->count++] = pow2 ? v[0] << i : v[0] + (int64_t)i * v[2];
    return 0;
}

static int load_parameters(struct kload *L, yaml_node_t *root)
{
    struct tf_ydoc *d = &L->d;
    struct tf_kernel *k = L->k;
    char buf[96];
    yaml_node_t *params = tf_ydoc_get(d, root, "parameters");
    if (tf_ydoc_expect_map(d, params, "parameters", L->err) != 0 ||
        tf_ydoc_check_keys(d, params, "'parameters'", NULL, L->err) != 0)
        return -1;
    int np = tf_ydoc_map_size(params);
    if (np == 0)
        return tf_ydoc_fail(d, params, L->err, TF_ERR_SCHEMA,
                            "'parameters' is empty; define at least one, e.g. 'BLOCK: [64, "
                            "128]'");
    k->params = tf_xcalloc((size_t)np, sizeof *k->params);
    /* The space so far: ranges make big value lists cheap to write, so a file
     * that could never be numbered is refused before it allocates more. */
    uint64_t space = 1;
    for (int p = 0; p < np; p++) {
        yaml_node_t *kn = tf_ydoc_map_key(d, params, p);
        yaml_node_t *vals = tf_ydoc_map_value(d, params, p);
        const char *name;
        if (tf_ydoc_ident(d, kn, "parameter name", &name, L->err) != 0)
            return -1;
        if (is_reserved_name(name))
            return tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                                "parameter name '%s' is reserved (a device property, "
                                "time_s or energy_j); rename it",
                                name);
        if (is_result_column(name))
            return tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                                "parameter name '%s' is reserved (a column of the archive's "
                                "results table); rename it",
                                name);
        if (tf_exchange_kt_key(name))
            return tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                                "parameter name '%s' is reserved (a key of the Kernel Tuner "
                                "cache and T4 files that tunefarm export writes); rename it",
                                name);
        if (tf_expr_is_keyword(name))
            return tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                                "parameter name '%s' is a word of the expression language (and, "
                                "or, not), so no expression could read it; rename it",
                                name);
        /* -DNAME=VALUE comes before every header: a name they use breaks them all */
        const char *why = tf_define_conflict(name, k->language);
        if (why)
            return tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                                "parameter name '%s' cannot be a compiler define (-D%s=...) of "
                                "a %s kernel: %s; rename it",
                                name, name, k->language, why);
        for (int s = 0; s < k->nsizes; s++)
            if (strcmp(k->size_names[s], name) == 0)
                return tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                                    "parameter '%s' has the name of a problem size; rename "
                                    "one of them",
                                    name);
        char what[160];
        snprintf(what, sizeof what, "parameter '%s'", name);
        if (vals && vals->type == YAML_MAPPING_NODE) {
            struct tf_param *pa = &k->params[k->nparams++];
            pa->name = tf_xstrdup(name);
            if (load_range(L, vals, pa) != 0)
                return -1;
            if (__builtin_mul_overflow(space, (uint64_t)pa->count, &space) ||
                space == UINT64_MAX)
                return tf_ydoc_fail(d, vals, L->err, TF_ERR_SCHEMA,
                                    "with parameter '%s' the parameter space has 2^64 or more "
                                    "configurations, too many to number; shorten the ranges",
                                    name);
            continue;
        }
        if (vals == NULL || vals->type != YAML_SEQUENCE_NODE)
            return tf_ydoc_fail(d, vals, L->err, TF_ERR_SCHEMA,
                                "parameter '%s' must be a list of values ([64, 128]) or a range "
                                "({range: [1, 10]}, {range: [32, 1024, 32]}, {pow2: [1, 64]}), "
                                "found %s",
                                name, tf_ydoc_describe(vals, buf, sizeof buf));
        int count = tf_ydoc_seq_size(vals);
        if (count == 0)
            return tf_ydoc_fail(d, vals, L->err, TF_ERR_SCHEMA,
                                "parameter '%s' has no values; list at least one", name);
        struct tf_param *pa = &k->params[k->nparams++];
        pa->name = tf_xstrdup(name);
        pa->kind = tf_ydoc_kind(tf_ydoc_seq_item(d, vals, 0)) == TF_YS_INT ? TF_PARAM_INT
                                                                          : TF_PARAM_ENUM;
        if (pa->kind == TF_PARAM_INT)
            pa->ints = tf_xcalloc((size_t)count, sizeof *pa->ints);
        else
            pa->strings = tf_xcalloc((size_t)count, sizeof *pa->strings);
        for (int i = 0; i < count; i++) {
            yaml_node_t *item = tf_ydoc_seq_item(d, vals, i);
            int kind = tf_ydoc_kind(item);
            if (pa->kind == TF_PARAM_INT) {
                if (kind != TF_YS_INT)
                    return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                        "parameter '%s' has integer values, but this one is "
                                        "%s (a parameter's values are all integers or all "
                                        "names)",
                                        name, tf_ydoc_describe(item, buf, sizeof buf));
                int64_t v;
                if (tf_ydoc_int(d, item, what, &v, L->err) != 0)
                    return -1;
                for (int j = 0; j < pa->count; j++)
                    if (pa->ints[j] == v)
                        return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                            "duplicate value %" PRId64
                                            " in parameter '%s' (each value must appear once)",
                                            v, name);
                pa->ints[pa->count++] = v;
            } else {
                const char *s = tf_ydoc_text(item);
                /* A plain true/false is a YAML boolean. As an enum name it would
                 * compile as its index (-DSHARED=0 for true), so `#if SHARED`
                 * would take the wrong branch; Kernel Tuner's True/False are 1/0. */
                if (kind == TF_YS_BOOL)
                    return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                        "parameter '%s' lists boolean %s: write 1 and 0 (an "
                                        "integer parameter, so that #if %s means what it "
                                        "says); quoted (\"%s\") it is an enum name, which "
                                        "compiles as its index",
                                        name, s, name, s);
                if (kind == TF_YS_INT || kind == TF_YS_FLOAT || kind == TF_YS_NULL ||
                    !tf_ydoc_is_ident(s) || strlen(s) != item->data.scalar.length)
                    return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                        "values of parameter '%s' must be all integers or all "
                                        "identifiers (like ikj or fast_path), found %s",
                                        name, tf_ydoc_describe(item, buf, sizeof buf));
                char vwhat[160], define[300];
                snprintf(define, sizeof define, "%s_%s", name, s);
                if ((why = tf_define_conflict(define, k->language)) != NULL)
                    return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                        "value '%s' of parameter '%s' makes the compiler define "
                                        "%s (-D%s=1), which a %s kernel cannot have: %s; "
                                        "rename the value or the parameter",
                                        s, name, define, define, k->language, why);
                snprintf(vwhat, sizeof vwhat, "value of parameter '%s'", name);
                if (check_length(L, item, vwhat, s, TF_ENUM_VALUE_MAX,
                                 "the parameter's column of the archive's results table") != 0)
                    return -1;
                for (int j = 0; j < pa->count; j++)
                    if (strcmp(pa->strings[j], s) == 0)
                        return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                            "duplicate value '%s' in parameter '%s' (each value "
                                            "must appear once)",
                                            s, name);
                pa->strings[pa->count++] = tf_xstrdup(s);
            }
        }
    }
    if (tf_kernel_cartesian(k) == UINT64_MAX)
        return tf_ydoc_fail(d, params, L->err, TF_ERR_SCHEMA,
                            "the parameter space has 2^64 or more configurations, too many to "
                            "number; shorten the value lists");
    return 0;
}

/* The symbol table: parameters, sizes, device properties, then the two that
 * only metrics read: time_s and energy_j (last). */
static void build_symtab(struct tf_kernel *k)
{
    k->nslots = k->nparams + k->nsizes + TF_DEVPROP_COUNT + TF_KERNEL_METRIC_ONLY_SLOTS;
    k->symbols = tf_xcalloc((size_t)k->nslots, sizeof *k->symbols);
    int n = 0;
    for (int i = 0; i < k->nparams; i++) {
        struct tf_symbol *s = &k->symbols[n];
        s->name = k->params[i].name;
        s->slot = n++;
        if (k->params[i].kind == TF_PARAM_ENUM) {
            s->enum_values = (const char *const *)k->params[i].strings;
            s->enum_count = k->params[i].count;
        }
    }
    for (int i = 0; i < k->nsizes; i++) {
        k->symbols[n].name = k->size_names[i];
        k->symbols[n].slot = n;
        n++;
    }
    for (int p = 0; p < TF_DEVPROP_COUNT; p++) {
        k->symbols[n].name = tf_devprop_name(p);
        k->symbols[n].slot = n;
        n++;
    }
    k->symbols[n].name = "time_s";
    k->symbols[n].slot = n;
    n++;
    k->symbols[n].name = "energy_j";
    k->symbols[n].slot = n;
    k->symtab.symbols = k->symbols;
    k->symtab.count = k->nslots;
}

static int load_constraints(struct kload *L, yaml_node_t *root, const struct tf_symtab *syms)
{
    struct tf_ydoc *d = &L->d;
    struct tf_kernel *k = L->k;
    yaml_node_t *n = tf_ydoc_get(d, root, "constraints");
    if (n == NULL)
        return 0;
    if (tf_ydoc_expect_seq(d, n, "constraints", L->err) != 0)
        return -1;
    int count = tf_ydoc_seq_size(n);
    k->constraints = tf_xcalloc((size_t)(count ? count : 1), sizeof *k->constraints);
    k->constraint_lines = tf_xcalloc((size_t)(count ? count : 1), sizeof *k->constraint_lines);
    k->constraint_columns = tf_xcalloc((size_t)(count ? count : 1), sizeof *k->constraint_columns);
    for (int i = 0; i < count; i++) {
        const yaml_node_t *item = tf_ydoc_seq_item(d, n, i);
        struct tf_expr *x = compile_node(L, item, "constraint", syms);
        if (x == NULL)
            return -1;
        /* Kept so that an evaluation error (while counting) points here. */
        k->constraint_lines[k->nconstraints] = tf_ydoc_line(item);
        k->constraint_columns[k->nconstraints] = tf_ydoc_column(item);
        k->constraints[k->nconstraints++] = x;
    }
    return 0;
}

/* "64, 128" or "ikj, kij": the values of `pa`, for messages. */
static void format_values(const struct tf_param *pa, char *list, size_t cap)
{
    size_t used = 0;
    list[0] = '\0';
    for (int j = 0; j < pa->count && used < cap; j++) {
        if (pa->kind == TF_PARAM_INT)
            used += (size_t)snprintf(list + used, cap - used, "%s%" PRId64, j ? ", " : "",
                                     pa->ints[j]);
        else
            used += (size_t)snprintf(list + used, cap - used, "%s%s", j ? ", " : "",
                                     pa->strings[j]);
    }
}

/* Problem `p`'s value of the default expression `x` (at node `v`) as an index
 * into the values of int parameter `pa`, with the problem's sizes in `slots`.
 * -1 + an error at `v` naming the problem, what the expression gave and the
 * values allowed. */
static int default_digit(struct kload *L, const yaml_node_t *v, const struct tf_param *pa,
                         const struct tf_expr *x, int p, const struct tf_value *slots,
                         int *digit)
{
    const char *pname = L->k->problems[p].name;
    char list[512], got[64];
    struct tf_value r;
    struct tf_error e;
    tf_error_clear(&e);
    if (tf_expr_eval(x, slots, &r, &e) != 0)
        return tf_ydoc_fail(&L->d, v, L->err, TF_ERR_EVAL,
                            "default for '%s' (%s) cannot be evaluated for problem '%s': %s",
                            pa->name, tf_expr_text(x), pname, e.message);
    /* `/` divides as real numbers: D / 2 gives 64.0, which means 64. The range
     * test comes first so that NaN and huge values are never cast. */
    bool whole = !r.is_float || (r.u.f >= -9007199254740992.0 && r.u.f <= 9007199254740992.0 &&
                                 r.u.f == (double)(int64_t)r.u.f);
    int64_t iv = !r.is_float ? r.u.i : whole ? (int64_t)r.u.f : 0;
    for (int j = 0; whole && j < pa->count; j++)
        if (pa->ints[j] == iv) {
            *digit = j;
            return 0;
        }
    if (r.is_float)
        snprintf(got, sizeof got, "%g", r.u.f);
    else
        snprintf(got, sizeof got, "%" PRId64, r.u.i);
    format_values(pa, list, sizeof list);
    return tf_ydoc_fail(&L->d, v, L->err, TF_ERR_SCHEMA,
                        "default for '%s' is %s, which gives %s for problem '%s', not one of "
                        "its values (%s)",
                        pa->name, tf_expr_text(x), got, pname, list);
}

/* The default configuration, resolved for every problem. A literal is the value
 * itself: a YAML integer for an int parameter, one of its names (plain or
 * quoted) for an enum parameter. Any other scalar given to an int parameter (a
 * name, an expression, a quoted or float scalar) is an expression over the
 * problem sizes, evaluated per problem, that must give one of the parameter's
 * values. An enum default is always a name, never an expression: a name like
 * `fast` would otherwise read as an undefined size, and expressions have no
 * string values to give. Sizes only, because the default is what a user would
 * write for a problem before any device is known, and other parameters' values
 * are themselves being chosen here. */
static int load_default(struct kload *L, yaml_node_t *root)
{
    struct tf_ydoc *d = &L->d;
    struct tf_kernel *k = L->k;
    char buf[96], list[512];
    yaml_node_t *n = tf_ydoc_get(d, root, "default");
    if (n == NULL)
        return 0;
    if (tf_ydoc_expect_map(d, n, "default", L->err) != 0)
        return -1;
    const char **names = tf_xcalloc((size_t)k->nparams + 1, sizeof *names);
    for (int i = 0; i < k->nparams; i++)
        names[i] = k->params[i].name;
    int rc = tf_ydoc_check_keys(d, n, "'default'", names, L->err);
    free(names);
    if (rc != 0)
        return -1;
    rc = -1;
    int *digits = tf_xcalloc((size_t)k->nparams, sizeof *digits);
    struct tf_expr **exprs = tf_xcalloc((size_t)k->nparams, sizeof *exprs);
    yaml_node_t **nodes = tf_xcalloc((size_t)k->nparams, sizeof *nodes);
    struct tf_value *slots = NULL;
    /* The kernel's own size symbols, so their slots are the kernel's and
     * tf_kernel_bind fills them for each problem. */
    const struct tf_symtab sizes_only = {k->symbols + k->nparams, k->nsizes};
    for (int i = 0; i < k->nparams; i++) {
        const struct tf_param *pa = &k->params[i];
        if (tf_ydoc_require(d, n, pa->name, "'default'",
                            "when 'default' is given it must set every parameter",
                            L->err) != 0)
            goto fail;
        yaml_node_t *v = nodes[i] = tf_ydoc_get(d, n, pa->name);
        const char *text = tf_ydoc_text(v);
        int kind = tf_ydoc_kind(v);
        if (pa->kind == TF_PARAM_INT && (kind == TF_YS_STRING || kind == TF_YS_FLOAT)) {
            char what[160];
            snprintf(what, sizeof what, "default for '%s'", pa->name);
            if ((exprs[i] = compile_node(L, v, what, &sizes_only)) == NULL) {
                size_t len = strlen(L->err->message);
                if (strstr(L->err->message, "undefined name"))
                    snprintf(L->err->message + len, sizeof L->err->message - len,
                             "; a default may read only the problem sizes");
                goto fail;
            }
            continue;
        }
        int found = -1;
        for (int j = 0; text && j < pa->count && found < 0; j++) {
            if (pa->kind == TF_PARAM_INT) {
                int64_t iv;
                if (kind == TF_YS_INT && tf_ydoc_int(d, v, pa->name, &iv, NULL) == 0 &&
                    iv == pa->ints[j])
                    found = j;
            } else if (strcmp(text, pa->strings[j]) == 0) {
                found = j;
            }
        }
        if (found < 0) {
            format_values(pa, list, sizeof list);
            tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                         "default for '%s' is %s, which is not one of its values (%s)%s",
                         pa->name, tf_ydoc_describe(v, buf, sizeof buf), list,
                         pa->kind == TF_PARAM_INT && kind != TF_YS_INT
                             ? " nor an expression over the problem sizes"
                             : "");
            goto fail;
        }
        digits[i] = found;
    }
    k->problem_defaults = tf_xcalloc((size_t)k->nproblems, sizeof *k->problem_defaults);
    slots = tf_xcalloc((size_t)k->nslots, sizeof *slots);
    for (int p = 0; p < k->nproblems; p++) {
        tf_kernel_bind(k, 0, p, NULL, slots);
        for (int i = 0; i < k->nparams; i++)
            if (exprs[i] && default_digit(L, nodes[i], &k->params[i], exprs[i], p, slots,
                                          &digits[i]) != 0)
                goto fail;
        k->problem_defaults[p] = tf_kernel_encode(k, digits);
    }
    /* Kernel-wide only when no problem differs: see tf_kernel.has_default. */
    k->has_default = true;
    for (int p = 1; p < k->nproblems; p++)
        if (k->problem_defaults[p] != k->problem_defaults[0])
            k->has_default = false;
    k->default_index = k->has_default ? k->problem_defaults[0] : 0;
    rc = 0;
fail:
    for (int i = 0; i < k->nparams; i++)
        tf_expr_destroy(exprs[i]);
    free(exprs);
    free(nodes);
    free(slots);
    free(digits);
    return rc;
}

static int load_dims(struct kload *L, yaml_node_t *launch, const char *key, struct tf_expr **out,
                     const struct tf_symtab *syms)
{
    struct tf_ydoc *d = &L->d;
    yaml_node_t *n = tf_ydoc_get(d, launch, key);
    if (n == NULL)
        return 0;
    char what[64];
    snprintf(what, sizeof what, "launch %s", key);
    if (tf_ydoc_expect_seq(d, n, what, L->err) != 0)
        return -1;
    int count = tf_ydoc_seq_size(n);
    if (count < 1 || count > 3)
        return tf_ydoc_fail(d, n, L->err, TF_ERR_SCHEMA,
                            "launch %s must list 1 to 3 expressions (x, y, z), found %d", key,
                            count);
    for (int i = 0; i < count; i++) {
        snprintf(what, sizeof what, "launch %s[%d]", key, i);
        if ((out[i] = compile_node(L, tf_ydoc_seq_item(d, n, i), what, syms)) == NULL)
            return -1;
    }
    return 0;
}

static int load_launch(struct kload *L, yaml_node_t *root, const struct tf_symtab *syms)
{
    struct tf_ydoc *d = &L->d;
    static const char *const launch_keys[] = {"grid", "block", "shared", NULL};
    yaml_node_t *n = tf_ydoc_get(d, root, "launch");
    if (n == NULL)
        return 0;
    if (tf_ydoc_expect_map(d, n, "launch", L->err) != 0 ||
        tf_ydoc_check_keys(d, n, "'launch'", launch_keys, L->err) != 0 ||
        load_dims(L, n, "grid", L->k->grid, syms) != 0 ||
        load_dims(L, n, "block", L->k->block, syms) != 0)
        return -1;
    yaml_node_t *sh = tf_ydoc_get(d, n, "shared");
    if (sh && (L->k->shared = compile_node(L, sh, "launch shared", syms)) == NULL)
        return -1;
    /* After the checks above, so a malformed launch says what is wrong with
     * it. A C kernel has no geometry: evaluated anyway, `grid: [0]` made
     * every configuration invalid without a position (review K). */
    if (L->k->language && strcmp(L->k->language, "c") == 0)
        return tf_ydoc_fail(d, n, L->err, TF_ERR_SCHEMA,
                            "'launch' is for GPU kernels (language cuda or hip): a C kernel's "
                            "entry is called once per launch, with no grid or block; remove "
                            "'launch'");
    return 0;
}

static int parse_elem_type(struct kload *L, const yaml_node_t *n, const char *key,
                           enum tf_elem_type *out)
{
    static const char *const names[] = {"int32", "int64", "float32", "float64"};
    const char *s;
    if (tf_ydoc_string(&L->d, n, key, &s, L->err) != 0)
        return -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (enum tf_elem_type)i;
            return 0;
        }
    return tf_ydoc_fail(&L->d, n, L->err, TF_ERR_SCHEMA,
                        "'%s' must be int32, int64, float32 or float64, found '%s'", key, s);
}

static const char *elem_type_name(enum tf_elem_type t)
{
    static const char *const names[] = {"int32", "int64", "float32", "float64"};
    return names[t];
}

/* A scalar whose value follows from the problem sizes alone (N, M * K) is
 * known now for every problem: one the type cannot hold (3e9 for an int32)
 * would reach the kernel wrapped or rounded, and every configuration would
 * fail verification for a reason nobody sees. Values that read parameters or
 * device properties are known only per configuration (the runner's
 * business). */
static int check_scalar(struct kload *L, const yaml_node_t *v, const struct tf_arg *a)
{
    const struct tf_kernel *k = L->k;
    for (int s = 0; s < k->nslots; s++)
        if (tf_expr_uses_slot(a->value, s) &&
            (s < k->nparams || s >= k->nparams + k->nsizes))
            return 0;
    struct tf_value *slots = tf_xcalloc((size_t)k->nslots, sizeof *slots);
    int rc = 0;
    for (int p = 0; p < k->nproblems && rc == 0; p++) {
        struct tf_value r;
        struct tf_error e;
        char why[160];
        tf_error_clear(&e);
        tf_kernel_bind(k, 0, p, NULL, slots);
        if (tf_expr_eval(a->value, slots, &r, &e) != 0)
            rc = tf_ydoc_fail(&L->d, v, L->err, TF_ERR_EVAL,
                              "value of argument '%s' (%s) cannot be evaluated for problem "
                              "'%s': %s",
                              a->name, tf_expr_text(a->value), k->problems[p].name, e.message);
        else if (!tf_scalar_fits(a->type, r, why, sizeof why))
            rc = tf_ydoc_fail(&L->d, v, L->err, TF_ERR_SCHEMA,
                              "value of argument '%s' (%s) for problem '%s': %s; declare it "
                              "'scalar: %s' (and the kernel's parameter to match) or use "
                              "smaller sizes",
                              a->name, tf_expr_text(a->value), k->problems[p].name, why,
                              a->type == TF_ELEM_I32 ? "int64" : "float64");
    }
    free(slots);
    return rc;
}

/* A buffer's size that reads only problem sizes is known now, per problem, as
 * a scalar's value is (check_scalar): one that cannot be evaluated, is not a
 * whole number >= 0 or whose bytes overflow would otherwise make every
 * configuration of that problem `invalid` at run time, with no place in the
 * file to fix. Sizes that read parameters or device properties are checked
 * per configuration by the runner. */
static int check_size(struct kload *L, const yaml_node_t *v, const struct tf_arg *a)
{
    const struct tf_kernel *k = L->k;
    for (int s = 0; s < k->nslots; s++)
        if (tf_expr_uses_slot(a->size, s) && (s < k->nparams || s >= k->nparams + k->nsizes))
            return 0;
    struct tf_value *slots = tf_xcalloc((size_t)k->nslots, sizeof *slots);
    const int elem = a->type == TF_ELEM_I32 || a->type == TF_ELEM_F32 ? 4 : 8;
    const double limit = (double)INT64_MAX / elem;
    int rc = 0;
    for (int p = 0; p < k->nproblems && rc == 0; p++) {
        struct tf_value r;
        struct tf_error e;
        tf_error_clear(&e);
        tf_kernel_bind(k, 0, p, NULL, slots);
        if (tf_expr_eval(a->size, slots, &r, &e) != 0)
            rc = tf_ydoc_fail(&L->d, v, L->err, TF_ERR_EVAL,
                              "size of buffer '%s' (%s) cannot be evaluated for problem '%s': "
                              "%s",
                              a->name, tf_expr_text(a->size), k->problems[p].name, e.message);
        else if (r.is_float ? !(r.u.f >= 0 && r.u.f == floor(r.u.f)) : r.u.i < 0)
            rc = tf_ydoc_fail(&L->d, v, L->err, TF_ERR_SCHEMA,
                              "size of buffer '%s' (%s) for problem '%s' is %.17g elements; a "
                              "size must be a whole number >= 0",
                              a->name, tf_expr_text(a->size), k->problems[p].name,
                              tf_value_as_double(r));
        else if (tf_value_as_double(r) > limit)
            rc = tf_ydoc_fail(&L->d, v, L->err, TF_ERR_SCHEMA,
                              "size of buffer '%s' (%s) for problem '%s' is %.17g elements, "
                              "more bytes than any memory holds; use smaller sizes",
                              a->name, tf_expr_text(a->size), k->problems[p].name,
                              tf_value_as_double(r));
    }
    free(slots);
    return rc;
}

/* `init: {random: [LO, HI]}`: uniform in [LO, HI), HI excluded as in most
 * random APIs (numpy's uniform and integers), so [324, 325) is a float just
 * above 324 and an int32 [-5, 5) one of -5..4. Integer buffers take integer
 * bounds; the range must hold a value of the buffer's type, which for float32
 * means a float32 at or above LO and below HI. */
static int load_init_range(struct kload *L, yaml_node_t *in, struct tf_arg *a)
{
    static const char *const init_keys[] = {"random", NULL};
    struct tf_ydoc *d = &L->d;
    char what[160], buf[96];
    snprintf(what, sizeof what, "'init' of argument '%s'", a->name);
    if (tf_ydoc_check_keys(d, in, what, init_keys, L->err) != 0)
        return -1;
    yaml_node_t *list = tf_ydoc_get(d, in, "random");
    if (list == NULL)
        return tf_ydoc_fail(d, in, L->err, TF_ERR_SCHEMA,
                            "'init' of argument '%s' as a mapping is {random: [LO, HI]} (values "
                            "from LO up to, not including, HI)",
                            a->name);
    snprintf(what, sizeof what, "random range of argument '%s'", a->name);
    if (tf_ydoc_expect_seq(d, list, what, L->err) != 0)
        return -1;
    if (tf_ydoc_seq_size(list) != 2)
        return tf_ydoc_fail(d, list, L->err, TF_ERR_SCHEMA,
                            "the random range of argument '%s' is [LO, HI] (LO included, HI "
                            "not), found %d values",
                            a->name, tf_ydoc_seq_size(list));
    const bool ints = a->type == TF_ELEM_I32 || a->type == TF_ELEM_I64;
    struct tf_value v[2];
    yaml_node_t *items[2];
    for (int i = 0; i < 2; i++) {
        items[i] = tf_ydoc_seq_item(d, list, i);
        int kind = tf_ydoc_kind(items[i]);
        if (kind != TF_YS_INT && (ints || kind != TF_YS_FLOAT))
            return tf_ydoc_fail(d, items[i], L->err, TF_ERR_SCHEMA,
                                "the random range of %s buffer '%s' takes %s, found %s",
                                elem_type_name(a->type), a->name,
                                ints ? "integers" : "numbers",
                                tf_ydoc_describe(items[i], buf, sizeof buf));
        if (kind == TF_YS_INT) {
            int64_t x;
            if (tf_ydoc_int(d, items[i], what, &x, L->err) != 0)
                return -1;
            v[i] = tf_int(x);
        } else {
            double x;
            if (tf_ydoc_number(d, items[i], what, &x, L->err) != 0)
                return -1;
            if (!isfinite(x))
                return tf_ydoc_fail(d, items[i], L->err, TF_ERR_SCHEMA,
                                    "the random range of argument '%s' must be finite, found %g",
                                    a->name, x);
            v[i] = tf_float(x);
        }
    }
    const double lo = tf_value_as_double(v[0]), hi = tf_value_as_double(v[1]);
    if (ints ? v[1].u.i <= v[0].u.i : !(hi > lo))
        return tf_ydoc_fail(d, items[1], L->err, TF_ERR_SCHEMA,
                            "the random range of argument '%s' is [LO, HI) with HI > LO, found "
                            "[%s, %s]",
                            a->name, tf_ydoc_text(items[0]), tf_ydoc_text(items[1]));
    if (a->type == TF_ELEM_I32 && (v[0].u.i < INT32_MIN || v[1].u.i - 1 > INT32_MAX))
        return tf_ydoc_fail(d, list, L->err, TF_ERR_SCHEMA,
                            "the random range of int32 buffer '%s' reaches outside int32 "
                            "(-2147483648 up to 2147483648, HI excluded): declare it int64",
                            a->name);
    if (a->type == TF_ELEM_F32) {
        /* the least float32 >= LO must exist and be below HI */
        float f = (float)lo;
        if (isfinite(f) && (double)f < lo)
            f = nextafterf(f, INFINITY);
        if (!isfinite(f) || (double)f >= hi)
            return tf_ydoc_fail(d, list, L->err, TF_ERR_SCHEMA,
                                "the random range of float32 buffer '%s' holds no float32 value "
                                "(the range is too narrow or outside float32): widen it or "
                                "declare it float64",
                                a->name);
    }
    if (!ints && !isfinite(hi - lo))
        return tf_ydoc_fail(d, list, L->err, TF_ERR_SCHEMA,
                            "the random range of argument '%s' is too wide: HI - LO overflows",
                            a->name);
    a->init = TF_INIT_RANDOM;
    a->init_range = true;
    a->init_lo = v[0];
    a->init_hi = v[1];
    return 0;
}

static int load_argument(struct kload *L, yaml_node_t *n, struct tf_arg *a,
                         const struct tf_symtab *syms)
{
    struct tf_ydoc *d = &L->d;
    static const char *const scalar_keys[] = {"name", "scalar", "value", NULL};
    static const char *const buffer_keys[] = {"name", "buffer", "size", "init", "output", NULL};
    if (tf_ydoc_expect_map(d, n, "arguments item", L->err) != 0)
        return -1;
    bool is_scalar = tf_ydoc_get_key(d, n, "scalar") != NULL;
    bool is_buffer = tf_ydoc_get_key(d, n, "buffer") != NULL;
    if (is_scalar && is_buffer)
        return tf_ydoc_fail(d, tf_ydoc_get_key(d, n, "buffer"), L->err, TF_ERR_SCHEMA,
                            "an argument is either 'scalar: TYPE' or 'buffer: TYPE', not both");
    if (!is_scalar && !is_buffer)
        return tf_ydoc_fail(d, n, L->err, TF_ERR_SCHEMA,
                            "argument has neither 'scalar: TYPE' nor 'buffer: TYPE' (TYPE is "
                            "int32, int64, float32 or float64)");
    const char *what = is_scalar ? "scalar argument" : "buffer argument";
    if (tf_ydoc_check_keys(d, n, what, is_scalar ? scalar_keys : buffer_keys, L->err) != 0 ||
        tf_ydoc_require(d, n, "name", what, "the parameter name in the kernel's signature",
                        L->err) != 0)
        return -1;
    const char *name;
    if (tf_ydoc_ident(d, tf_ydoc_get(d, n, "name"), "name", &name, L->err) != 0)
        return -1;
    for (int i = 0; i < L->k->nargs; i++)
        if (strcmp(L->k->args[i].name, name) == 0)
            return tf_ydoc_fail(d, tf_ydoc_get(d, n, "name"), L->err, TF_ERR_SCHEMA,
                                "duplicate argument name '%s'", name);
    a->name = tf_xstrdup(name);
    char xwhat[160];
    if (is_scalar) {
        a->kind = TF_ARG_SCALAR;
        if (parse_elem_type(L, tf_ydoc_get(d, n, "scalar"), "scalar", &a->type) != 0 ||
            tf_ydoc_require(d, n, "value", what, "an expression giving its value", L->err) != 0)
            return -1;
        snprintf(xwhat, sizeof xwhat, "value of argument '%s'", name);
        if ((a->value = compile_node(L, tf_ydoc_get(d, n, "value"), xwhat, syms)) == NULL)
            return -1;
        return check_scalar(L, tf_ydoc_get(d, n, "value"), a);
    }
    a->kind = TF_ARG_BUFFER;
    if (parse_elem_type(L, tf_ydoc_get(d, n, "buffer"), "buffer", &a->type) != 0 ||
        tf_ydoc_require(d, n, "size", what, "an expression giving its element count",
                        L->err) != 0)
        return -1;
    snprintf(xwhat, sizeof xwhat, "size of argument '%s'", name);
    if ((a->size = compile_node(L, tf_ydoc_get(d, n, "size"), xwhat, syms)) == NULL ||
        check_size(L, tf_ydoc_get(d, n, "size"), a) != 0)
        return -1;
    yaml_node_t *o = tf_ydoc_get(d, n, "output");
    if (o && tf_ydoc_bool(d, o, "output", &a->output, L->err) != 0)
        return -1;
    a->init = a->output ? TF_INIT_POISON : TF_INIT_RANDOM;
    yaml_node_t *in = tf_ydoc_get(d, n, "init");
    if (in && in->type == YAML_MAPPING_NODE)
        return load_init_range(L, in, a);
    if (in) {
        const char *s;
        if (tf_ydoc_string(d, in, "init", &s, L->err) != 0)
            return -1;
        if (strcmp(s, "random") == 0)
            a->init = TF_INIT_RANDOM;
        else if (strcmp(s, "zero") == 0)
            a->init = TF_INIT_ZERO;
        else if (strcmp(s, "ones") == 0)
            a->init = TF_INIT_ONES;
        else
            return tf_ydoc_fail(d, in, L->err, TF_ERR_SCHEMA,
                                "'init' must be random, zero, ones or {random: [LO, HI]}, found "
                                "'%s'",
                                s);
    }
    return 0;
}

static int load_arguments(struct kload *L, yaml_node_t *root, const struct tf_symtab *syms)
{
    struct tf_ydoc *d = &L->d;
    struct tf_kernel *k = L->k;
    yaml_node_t *n = tf_ydoc_get(d, root, "arguments");
    if (tf_ydoc_expect_seq(d, n, "arguments", L->err) != 0)
        return -1;
    int count = tf_ydoc_seq_size(n);
    k->args = tf_xcalloc((size_t)(count ? count : 1), sizeof *k->args);
    bool has_output = false;
    for (int i = 0; i < count; i++) {
        /* Count the slot before filling it, so destroy frees a half-built argument. */
        struct tf_arg *a = &k->args[k->nargs];
        if (load_argument(L, tf_ydoc_seq_item(d, n, i), a, syms) != 0) {
            k->nargs++;
            return -1;
        }
        k->nargs++;
        has_output |= a->kind == TF_ARG_BUFFER && a->output;
    }
    if (!has_output)
        return tf_ydoc_fail(d, n, L->err, TF_ERR_SCHEMA,
                            "no argument is an output buffer; mark the buffer the kernel "
                            "writes with 'output: true' so results can be verified");
    return 0;
}

static int load_verify(struct kload *L, yaml_node_t *root)
{
    struct tf_ydoc *d = &L->d;
    static const char *const verify_keys[] = {"rtol", "atol", NULL};
    L->k->rtol = 1e-5;
    L->k->atol = 1e-6;
    yaml_node_t *n = tf_ydoc_get(d, root, "verify");
    if (n == NULL)
        return 0;
    if (tf_ydoc_expect_map(d, n, "verify", L->err) != 0 ||
        tf_ydoc_check_keys(d, n, "'verify'", verify_keys, L->err) != 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        yaml_node_t *v = tf_ydoc_get(d, n, verify_keys[i]);
        double *dst = i == 0 ? &L->k->rtol : &L->k->atol;
        if (v == NULL)
            continue;
        if (tf_ydoc_number(d, v, verify_keys[i], dst, L->err) != 0)
            return -1;
        if (!(*dst >= 0 && *dst < 1e300))
            return tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                                "'%s' must be a finite number >= 0, found %g", verify_keys[i],
                                *dst);
    }
    return 0;
}

/* ---- problem sizes as defines, the reference's parameters ------------------- */

/* "N, M, K": the size names, for messages. */
static void format_sizes(const struct tf_kernel *k, char *list, size_t cap)
{
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < k->nsizes && used < cap; i++)
        used += (size_t)snprintf(list + used, cap - used, "%s%s", i ? ", " : "",
                                 k->size_names[i]);
}

/* -1 + an error at `n` if size `name` cannot be a compiler define: a name the
 * language or the compiler's headers use (the parameters' rule, defines.h), or
 * the NAME_value define of an enum parameter's value. */
static int check_size_define(struct kload *L, const yaml_node_t *n, const char *name)
{
    const struct tf_kernel *k = L->k;
    const char *why = tf_define_conflict(name, k->language);
    if (why)
        return tf_ydoc_fail(&L->d, n, L->err, TF_ERR_SCHEMA,
                            "size '%s' cannot be a compiler define (-D%s=...) of a %s kernel: "
                            "%s; rename it, or leave it out of 'defines'",
                            name, name, k->language, why);
    for (int p = 0; p < k->nparams; p++) {
        const struct tf_param *pa = &k->params[p];
        const size_t len = strlen(pa->name);
        for (int v = 0; pa->kind == TF_PARAM_ENUM && v < pa->count; v++)
            if (strncmp(name, pa->name, len) == 0 && name[len] == '_' &&
                strcmp(name + len + 1, pa->strings[v]) == 0)
                return tf_ydoc_fail(&L->d, n, L->err, TF_ERR_SCHEMA,
                                    "size '%s' would be defined twice: value '%s' of enum "
                                    "parameter '%s' defines %s=1 too; rename one of them",
                                    name, pa->strings[v], pa->name, name);
    }
    return 0;
}

/* `defines:` - the problem sizes every variant is compiled with, as
 * -DNAME=value beside the parameters' defines: a list of size names, or `all`.
 * Sizes and parameters never share a name (load_parameters), so the defines
 * cannot collide; they make a variant's binary depend on the problem. */
static int load_defines(struct kload *L, yaml_node_t *root)
{
    struct tf_ydoc *d = &L->d;
    struct tf_kernel *k = L->k;
    char buf[96], list[512];
    yaml_node_t *n = tf_ydoc_get(d, root, "defines");
    if (n == NULL)
        return 0;
    format_sizes(k, list, sizeof list);
    k->define_sizes = tf_xcalloc((size_t)(k->nsizes ? k->nsizes : 1), sizeof *k->define_sizes);
    if (n->type == YAML_SCALAR_NODE && !tf_ydoc_quoted(n) && strcmp(tf_ydoc_text(n), "all") == 0) {
        for (int i = 0; i < k->nsizes; i++) {
            if (check_size_define(L, n, k->size_names[i]) != 0)
                return -1;
            k->define_sizes[k->ndefine_sizes++] = i;
        }
        return 0;
    }
    if (n->type != YAML_SEQUENCE_NODE)
        return tf_ydoc_fail(d, n, L->err, TF_ERR_SCHEMA,
                            "'defines' must be a list of problem sizes to compile in (e.g. "
                            "[%s]) or 'all', found %s",
                            k->nsizes ? k->size_names[0] : "N", tf_ydoc_describe(n, buf, sizeof buf));
    for (int i = 0; i < tf_ydoc_seq_size(n); i++) {
        yaml_node_t *item = tf_ydoc_seq_item(d, n, i);
        const char *name;
        if (tf_ydoc_ident(d, item, "defines item", &name, L->err) != 0)
            return -1;
        int found = -1;
        for (int s = 0; s < k->nsizes; s++)
            if (strcmp(k->size_names[s], name) == 0)
                found = s;
        if (found < 0) {
            bool param = false;
            for (int p = 0; p < k->nparams; p++)
                param |= strcmp(k->params[p].name, name) == 0;
            return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                "'defines' names '%s', which is not a problem size (sizes: "
                                "%s)%s",
                                name, list,
                                param ? "; parameters are always defined, list only sizes"
                                      : "");
        }
        for (int j = 0; j < k->ndefine_sizes; j++)
            if (k->define_sizes[j] == found)
                return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                    "'defines' names size '%s' twice", name);
        if (check_size_define(L, item, name) != 0)
            return -1;
        k->define_sizes[k->ndefine_sizes++] = found;
    }
    return 0;
}

/* A list of parameter names under `reference` (`key`) into *out (indices). */
static int load_param_list(struct kload *L, yaml_node_t *ref, const char *key, int **out,
                           int *count)
{
    struct tf_ydoc *d = &L->d;
    struct tf_kernel *k = L->k;
    char what[64], list[1024];
    yaml_node_t *n = tf_ydoc_get(d, ref, key);
    *out = tf_xcalloc((size_t)k->nparams, sizeof **out);
    *count = 0;
    if (n == NULL)
        return 0;
    snprintf(what, sizeof what, "reference %s", key);
    if (tf_ydoc_expect_seq(d, n, what, L->err) != 0)
        return -1;
    size_t used = 0;
    list[0] = '\0';
    for (int p = 0; p < k->nparams && used < sizeof list; p++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", p ? ", " : "",
                                 k->params[p].name);
    for (int i = 0; i < tf_ydoc_seq_size(n); i++) {
        yaml_node_t *item = tf_ydoc_seq_item(d, n, i);
        const char *name;
        if (tf_ydoc_ident(d, item, what, &name, L->err) != 0)
            return -1;
        int found = -1;
        for (int p = 0; p < k->nparams; p++)
            if (strcmp(k->params[p].name, name) == 0)
                found = p;
        if (found < 0)
            return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                "reference %s names '%s', which is not a parameter "
                                "(parameters: %.900s)",
                                key, name, list);
        for (int j = 0; j < *count; j++)
            if ((*out)[j] == found)
                return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                    "reference %s names parameter '%s' twice", key, name);
        (*out)[(*count)++] = found;
    }
    return 0;
}

static bool in_list(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* `reference.depends_on` and `reference.independent_of`, then the rule they
 * serve: the reference runs once per problem (once per value of depends_on),
 * so a scalar argument that reads any other parameter would hand the variants
 * values the reference never saw, and every configuration but the first kind
 * would fail verification without saying why. Such an argument is refused
 * here unless its parameter is declared: depends_on (the reference runs again
 * for each of its values) or independent_of (its value changes nothing the
 * reference computes, e.g. an amount of work). Buffer sizes may read
 * parameters freely: the reference already runs again for other sizes. */
static int load_reference_params(struct kload *L, yaml_node_t *root)
{
    struct tf_ydoc *d = &L->d;
    struct tf_kernel *k = L->k;
    yaml_node_t *ref = tf_ydoc_get(d, root, "reference");
    if (load_param_list(L, ref, "depends_on", &k->ref_depends, &k->nref_depends) != 0 ||
        load_param_list(L, ref, "independent_of", &k->ref_independent, &k->nref_independent) !=
            0)
        return -1;
    yaml_node_t *indep = tf_ydoc_get(d, ref, "independent_of");
    for (int i = 0; i < k->nref_independent; i++)
        if (in_list(k->ref_depends, k->nref_depends, k->ref_independent[i]))
            return tf_ydoc_fail(d, tf_ydoc_seq_item(d, indep, i), L->err, TF_ERR_SCHEMA,
                                "parameter '%s' is in both depends_on and independent_of of "
                                "the reference; keep it in one",
                                k->params[k->ref_independent[i]].name);
    yaml_node_t *args = tf_ydoc_get(d, root, "arguments");
    for (int a = 0; a < k->nargs; a++) {
        const struct tf_arg *arg = &k->args[a];
        if (arg->kind != TF_ARG_SCALAR)
            continue;
        for (int p = 0; p < k->nparams; p++) {
            if (!tf_expr_uses_slot(arg->value, p) ||
                in_list(k->ref_depends, k->nref_depends, p) ||
                in_list(k->ref_independent, k->nref_independent, p))
                continue;
            const char *pn = k->params[p].name;
            return tf_ydoc_fail(
                d, tf_ydoc_get(d, tf_ydoc_seq_item(d, args, a), "value"), L->err, TF_ERR_SCHEMA,
                "argument '%s' reads parameter '%s', but the reference does not say whether "
                "its outputs depend on it: it runs once per problem, so every configuration "
                "with another %s would be checked against outputs computed for one value. "
                "Declare it under 'reference': 'depends_on: [%s]' (the reference runs once "
                "per value of %s and is given it) or, if the expected outputs are the same "
                "whatever its value, 'independent_of: [%s]'",
                arg->name, pn, pn, pn, pn, pn);
        }
    }
    return 0;
}

static int load_metrics(struct kload *L, yaml_node_t *root)
{
    struct tf_ydoc *d = &L->d;
    struct tf_kernel *k = L->k;
    yaml_node_t *n = tf_ydoc_get(d, root, "metrics");
    if (n == NULL)
        return 0;
    if (tf_ydoc_expect_map(d, n, "metrics", L->err) != 0 ||
        tf_ydoc_check_keys(d, n, "'metrics'", NULL, L->err) != 0)
        return -1;
    int count = tf_ydoc_map_size(n);
    if (count > TF_MAX_METRICS)
        return tf_ydoc_fail(d, tf_ydoc_map_key(d, n, TF_MAX_METRICS), L->err, TF_ERR_SCHEMA,
                            "too many metrics: at most %d are supported", TF_MAX_METRICS);
    k->metric_names = tf_xcalloc((size_t)(count ? count : 1), sizeof *k->metric_names);
    k->metrics = tf_xcalloc((size_t)(count ? count : 1), sizeof *k->metrics);
    for (int i = 0; i < count; i++) {
        const char *name;
        yaml_node_t *kn = tf_ydoc_map_key(d, n, i);
        if (tf_ydoc_ident(d, kn, "metric name", &name, L->err) != 0)
            return -1;
        /* Metrics are columns of the results table, beside the parameters. */
        if (is_result_column(name))
            return tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                                "metric name '%s' is reserved (a column of the archive's "
                                "results table); rename it",
                                name);
        if (tf_exchange_kt_key(name))
            return tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                                "metric name '%s' is reserved (a key of the Kernel Tuner cache "
                                "and T4 files that tunefarm export writes); rename it",
                                name);
        for (int p = 0; p < k->nparams; p++)
            if (strcmp(k->params[p].name, name) == 0)
                return tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                                    "metric '%s' has the name of a parameter (both are columns "
                                    "of the archive's results table); rename one of them",
                                    name);
        char what[160];
        snprintf(what, sizeof what, "metric '%s'", name);
        struct tf_expr *x = compile_node(L, tf_ydoc_map_value(d, n, i), what, &k->symtab);
        if (x == NULL)
            return -1;
        k->metric_names[k->nmetrics] = tf_xstrdup(name);
        k->metrics[k->nmetrics++] = x;
    }
    return 0;
}

static void hash_blob(struct tf_sha256 *h, const char *data)
{
    size_t n = data ? strlen(data) : 0;
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)((uint64_t)n >> (8 * i));
    tf_sha256_update(h, len, sizeof len);
    tf_sha256_update(h, data ? data : "", n);
}

/* ---- load / destroy ----------------------------------------------------------- */

struct tf_kernel *tf_kernel_load(const char *path, struct tf_bundle *bundle, struct tf_error *err)
{
    struct kload L = {.bundle = bundle, .err = err};
    struct tf_kernel *k = L.k = tf_xcalloc(1, sizeof *k);
    k->file = tf_xstrdup(path);
    k->dir = tf_path_dir(path);

    const struct tf_bundle_file *f = tf_bundle_read(bundle, path, err);
    if (f == NULL)
        goto fail;
    const char *text = f->data; /* the bundle keeps it; f may move on the next read */
    size_t size = f->size;
    if (tf_ydoc_load(&L.d, k->file, text, size, err) != 0)
        goto fail;
    yaml_node_t *root = tf_ydoc_root(&L.d);
    if (tf_ydoc_check_keys(&L.d, root, "kernel file", kernel_keys, err) != 0)
        goto fail;
    static const struct {
        const char *key, *hint;
    } required[] = {
        {"name", "the kernel's name, e.g. 'name: gemm'"},
        {"language", "'c' for the host backend or 'cuda' for the CUDA and HIP backends"},
        {"source", "the kernel source file, relative to this file"},
        {"entry", "the name of the function to tune"},
        {"reference", "the trusted implementation results are checked against: {source, "
                      "entry}"},
        {"problems", "named problem sizes, e.g. 'small: {N: 1024}'"},
        {"parameters", "the tunable parameters and their values, e.g. 'BLOCK: [64, 128]'"},
        {"arguments", "the kernel's arguments in call order"},
    };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (tf_ydoc_require(&L.d, root, required[i].key, "kernel file", required[i].hint, err) !=
            0)
            goto fail;

    if (load_header(&L, root) != 0 || load_problems(&L, root) != 0 ||
        load_parameters(&L, root) != 0)
        goto fail;
    build_symtab(k);
    /* Everything but metrics is compiled without time_s and energy_j (the last slots). */
    struct tf_symtab no_time = {k->symbols, k->nslots - TF_KERNEL_METRIC_ONLY_SLOTS};
    if (load_constraints(&L, root, &no_time) != 0 || load_default(&L, root) != 0 ||
        load_launch(&L, root, &no_time) != 0 || load_arguments(&L, root, &no_time) != 0 ||
        load_verify(&L, root) != 0 || load_metrics(&L, root) != 0)
        goto fail;
    if (load_defines(&L, root) != 0 || load_reference_params(&L, root) != 0)
        goto fail;

    struct tf_sha256 h;
    tf_sha256_init(&h);
    hash_blob(&h, text);
    hash_blob(&h, k->source);
    hash_blob(&h, k->ref_source);
    tf_sha256_hex(&h, k->source_hash);

    tf_ydoc_free(&L.d);
    return k;
fail:
    tf_ydoc_free(&L.d);
    tf_kernel_destroy(k);
    return NULL;
}

void tf_kernel_destroy(struct tf_kernel *k)
{
    if (k == NULL)
        return;
    free(k->name);
    free(k->description);
    free(k->file);
    free(k->dir);
    free(k->language);
    free(k->source_path);
    free(k->entry);
    free(k->ref_source_path);
    free(k->ref_entry);
    for (int i = 0; i < k->option_count; i++)
        free(k->options[i]);
    free(k->options);
    for (int i = 0; i < k->nparams; i++) {
        struct tf_param *pa = &k->params[i];
        free(pa->name);
        free(pa->ints);
        if (pa->strings)
            for (int j = 0; j < pa->count; j++)
                free(pa->strings[j]);
        free(pa->strings);
    }
    free(k->params);
    for (int i = 0; i < k->nsizes; i++)
        free(k->size_names[i]);
    free(k->size_names);
    for (int i = 0; i < k->nproblems; i++) {
        free(k->problems[i].name);
        free(k->problems[i].sizes);
    }
    free(k->problems);
    for (int i = 0; i < k->nconstraints; i++)
        tf_expr_destroy(k->constraints[i]);
    free(k->constraints);
    free(k->constraint_lines);
    free(k->constraint_columns);
    for (int i = 0; i < 3; i++) {
        tf_expr_destroy(k->grid[i]);
        tf_expr_destroy(k->block[i]);
    }
    tf_expr_destroy(k->shared);
    for (int i = 0; i < k->nargs; i++) {
        free(k->args[i].name);
        tf_expr_destroy(k->args[i].value);
        tf_expr_destroy(k->args[i].size);
    }
    free(k->args);
    for (int i = 0; i < k->nmetrics; i++) {
        free(k->metric_names[i]);
        tf_expr_destroy(k->metrics[i]);
    }
    free(k->metric_names);
    free(k->metrics);
    free(k->problem_defaults);
    free(k->define_sizes);
    free(k->ref_depends);
    free(k->ref_independent);
    free(k->symbols);
    free(k);
}

/* ---- configurations ------------------------------------------------------------ */

uint64_t tf_kernel_cartesian(const struct tf_kernel *k)
{
    uint64_t n = 1;
    for (int i = 0; i < k->nparams; i++) {
        uint64_t c = (uint64_t)k->params[i].count;
        if (c == 0)
            return 0;
        if (n > UINT64_MAX / c)
            return UINT64_MAX;
        n *= c;
    }
    return n;
}

void tf_kernel_decode(const struct tf_kernel *k, uint64_t index, int *digits)
{
    for (int i = k->nparams - 1; i >= 0; i--) {
        uint64_t c = (uint64_t)k->params[i].count;
        digits[i] = (int)(index % c);
        index /= c;
    }
}

uint64_t tf_kernel_encode(const struct tf_kernel *k, const int *digits)
{
    uint64_t index = 0;
    for (int i = 0; i < k->nparams; i++)
        index = index * (uint64_t)k->params[i].count + (uint64_t)digits[i];
    return index;
}

bool tf_kernel_default_for(const struct tf_kernel *k, int problem, uint64_t *index)
{
    if (problem < 0 || problem >= k->nproblems)
        return false;
    if (k->problem_defaults != NULL) {
        *index = k->problem_defaults[problem];
        return true;
    }
    if (k->has_default)
        *index = k->default_index;
    return k->has_default;
}

/* Digits on the stack for the usual handful of parameters, the heap beyond. */
#define KERNEL_STACK_DIGITS 32

static int *digits_for(const struct tf_kernel *k, uint64_t index, int *stack)
{
    int *digits = k->nparams <= KERNEL_STACK_DIGITS
                      ? stack
                      : tf_xmalloc((size_t)k->nparams * sizeof *digits);
    tf_kernel_decode(k, index, digits);
    return digits;
}

static void digits_free(int *digits, int *stack)
{
    if (digits != stack)
        free(digits);
}

void tf_kernel_bind(const struct tf_kernel *k, uint64_t index, int problem,
                    const struct tf_device *dev, struct tf_value *slots)
{
    int stack[KERNEL_STACK_DIGITS];
    int *digits = digits_for(k, index, stack);
    for (int i = 0; i < k->nparams; i++) {
        const struct tf_param *pa = &k->params[i];
        slots[i] = pa->kind == TF_PARAM_INT ? tf_int(pa->ints[digits[i]]) : tf_int(digits[i]);
    }
    digits_free(digits, stack);
    for (int i = 0; i < k->nsizes; i++)
        slots[tf_kernel_size_slot(k, i)] =
            tf_int(problem >= 0 && problem < k->nproblems ? k->problems[problem].sizes[i] : 0);
    for (int p = 0; p < TF_DEVPROP_COUNT; p++)
        slots[tf_kernel_devprop_slot(k, p)] = tf_int(dev ? dev->props[p] : 0);
    slots[tf_kernel_time_slot(k)] = tf_float(0.0);
    slots[tf_kernel_energy_slot(k)] = tf_float(NAN);
}

int tf_kernel_check(const struct tf_kernel *k, const struct tf_value *slots, bool *valid,
                    struct tf_error *err)
{
    *valid = true;
    for (int i = 0; i < k->nconstraints; i++) {
        bool ok;
        struct tf_error e;
        tf_error_clear(&e);
        if (tf_expr_eval_bool(k->constraints[i], slots, &ok, &e) != 0)
            return tf_kernel_constraint_error(k, i, -1, slots, &e, err);
        if (!ok) {
            *valid = false;
            return 0;
        }
    }
    return 0;
}

void tf_kernel_format_config(const struct tf_kernel *k, uint64_t index, char *out, int cap)
{
    if (cap <= 0)
        return;
    out[0] = '\0';
    int stack[KERNEL_STACK_DIGITS];
    int *digits = digits_for(k, index, stack);
    size_t used = 0;
    for (int i = 0; i < k->nparams && used < (size_t)cap; i++) {
        const struct tf_param *pa = &k->params[i];
        int n;
        if (pa->kind == TF_PARAM_INT)
            n = snprintf(out + used, (size_t)cap - used, "%s%s=%" PRId64, i ? " " : "", pa->name,
                         pa->ints[digits[i]]);
        else
            n = snprintf(out + used, (size_t)cap - used, "%s%s=%s", i ? " " : "", pa->name,
                         pa->strings[digits[i]]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    digits_free(digits, stack);
}

int tf_param_defines(const struct tf_param *params, int nparams, uint64_t index, char **out,
                     int max)
{
    int stack[KERNEL_STACK_DIGITS];
    int *digits =
        nparams <= KERNEL_STACK_DIGITS ? stack : tf_xmalloc((size_t)nparams * sizeof *digits);
    for (int i = nparams - 1; i >= 0; i--) { /* as tf_kernel_decode */
        digits[i] = (int)(index % (uint64_t)params[i].count);
        index /= (uint64_t)params[i].count;
    }
    int n = 0;
    for (int i = 0; i < nparams && n < max; i++) {
        const struct tf_param *pa = &params[i];
        if (pa->kind == TF_PARAM_INT) {
            out[n++] = tf_xasprintf("-D%s=%" PRId64, pa->name, pa->ints[digits[i]]);
        } else {
            /* The index for #if arithmetic, the flag for #ifdef readability. */
            out[n++] = tf_xasprintf("-D%s=%d", pa->name, digits[i]);
            if (n < max)
                out[n++] = tf_xasprintf("-D%s_%s=1", pa->name, pa->strings[digits[i]]);
        }
    }
    digits_free(digits, stack);
    return n;
}

int tf_kernel_defines(const struct tf_kernel *k, uint64_t index, char **out, int max)
{
    return tf_param_defines(k->params, k->nparams, index, out, max);
}

int tf_kernel_constraint_error(const struct tf_kernel *k, int c, int problem,
                               const struct tf_value *slots, const struct tf_error *cause,
                               struct tf_error *err)
{
    /* The configuration as the slots hold it (values, not an index: the
     * slots may hold a partly bound configuration, as while counting). */
    char config[512] = "";
    size_t used = 0;
    for (int i = 0; i < k->nparams && used < sizeof config; i++) {
        if (!tf_expr_uses_slot(k->constraints[c], i))
            continue;
        const struct tf_param *pa = &k->params[i];
        int64_t v = slots[i].u.i;
        if (pa->kind == TF_PARAM_ENUM && v >= 0 && v < pa->count)
            used += (size_t)snprintf(config + used, sizeof config - used, "%s%s=%s",
                                     used ? " " : "", pa->name, pa->strings[v]);
        else
            used += (size_t)snprintf(config + used, sizeof config - used, "%s%s=%" PRId64,
                                     used ? " " : "", pa->name, v);
    }
    char where[200] = "";
    if (problem >= 0 && problem < k->nproblems)
        snprintf(where, sizeof where, " for problem '%.63s'", k->problems[problem].name);
    int line = k->constraint_lines ? k->constraint_lines[c] : 0;
    int column = k->constraint_columns ? k->constraint_columns[c] : 0;
    return tf_error_at(err, TF_ERR_EVAL, k->file, line, column,
                       "constraint '%.200s' cannot be evaluated%s%s%s: %.300s; guard the "
                       "failing part (e.g. 'D != 0 && N %% D == 0': && and || stop early)",
                       tf_expr_text(k->constraints[c]), where, config[0] ? " at " : "", config,
                       cause->message);
}

bool tf_scalar_fits(enum tf_elem_type type, struct tf_value v, char *why, size_t cap)
{
    char text[64];
    if (v.is_float)
        snprintf(text, sizeof text, "%.17g", v.u.f);
    else
        snprintf(text, sizeof text, "%" PRId64, v.u.i);
    const char *name = elem_type_name(type);
    if (v.is_float && !isfinite(v.u.f)) {
        snprintf(why, cap, "%s is not a finite number", text);
        return false;
    }
    switch (type) {
    case TF_ELEM_I32:
    case TF_ELEM_I64: {
        const double lo = type == TF_ELEM_I32 ? (double)INT32_MIN : -9223372036854775808.0;
        const double hi_excl = type == TF_ELEM_I32 ? 2147483648.0 : 9223372036854775808.0;
        if (v.is_float && v.u.f != floor(v.u.f)) {
            snprintf(why, cap, "%s is not a whole number, which %s needs", text, name);
            return false;
        }
        bool in = v.is_float ? v.u.f >= lo && v.u.f < hi_excl
                             : type == TF_ELEM_I64 || (v.u.i >= INT32_MIN && v.u.i <= INT32_MAX);
        if (!in) {
            snprintf(why, cap, "%s is outside %s's range %s", text, name,
                     type == TF_ELEM_I32 ? "-2147483648..2147483647"
                                         : "-9223372036854775808..9223372036854775807");
            return false;
        }
        return true;
    }
    case TF_ELEM_F32:
    case TF_ELEM_F64: {
        const double max = type == TF_ELEM_F32 ? (double)FLT_MAX : DBL_MAX;
        double x = tf_value_as_double(v);
        if (fabs(x) > max) {
            snprintf(why, cap, "%s is outside %s's range", text, name);
            return false;
        }
        /* An integer (a size, usually) must arrive as itself, not its
         * neighbour: exact when its odd part fits the significand. */
        if (!v.is_float) {
            uint64_t m = v.u.i < 0 ? 0 - (uint64_t)v.u.i : (uint64_t)v.u.i;
            while (m != 0 && (m & 1) == 0)
                m >>= 1;
            const int bits = type == TF_ELEM_F32 ? 24 : 53;
            if (m >= (UINT64_C(1) << bits)) {
                snprintf(why, cap, "%s is an integer %s cannot hold exactly (%d-bit significand)",
                         text, name, bits);
                return false;
            }
        }
        return true;
    }
    }
    snprintf(why, cap, "unknown type");
    return false;
}

int tf_kernel_size_defines(const struct tf_kernel *k, int problem, char **out, int max)
{
    int n = 0;
    if (problem < 0 || problem >= k->nproblems)
        return 0;
    for (int i = 0; i < k->ndefine_sizes && n < max; i++) {
        const int s = k->define_sizes[i];
        out[n++] = tf_xasprintf("-D%s=%" PRId64, k->size_names[s], k->problems[problem].sizes[s]);
    }
    return n;
}

int tf_kernel_reference_defines(const struct tf_kernel *k, char **out, int max)
{
    /* The layout of the reference's argument array: the kernel's arguments,
     * then the sizes, then the depends_on parameters (runner_child.c). */
    int n = 0;
    for (int i = 0; i < k->nsizes && n < max; i++)
        out[n++] = tf_xasprintf("-DTF_REF_%s=%d", k->size_names[i], k->nargs + i);
    for (int j = 0; j < k->nref_depends && n < max; j++)
        out[n++] = tf_xasprintf("-DTF_REF_%s=%d", k->params[k->ref_depends[j]].name,
                                k->nargs + k->nsizes + j);
    return n;
}

void tf_kernel_reference_values(const struct tf_kernel *k, const struct tf_value *slots,
                                int64_t *values)
{
    for (int j = 0; j < k->nref_depends; j++)
        values[j] = slots[k->ref_depends[j]].u.i; /* parameters are ints (enums: the index) */
}

const char *tf_kernel_param_name_conflict(const char *name, const char *language)
{
    if (is_reserved_name(name))
        return "it is reserved (a device property or time_s)";
    if (is_result_column(name))
        return "it is reserved (a column of the archive's results table)";
    if (tf_exchange_kt_key(name))
        return "it is reserved (a key of the Kernel Tuner cache and T4 files tunefarm writes)";
    if (tf_expr_is_keyword(name))
        return "it is a word of the expression language (and, or, not)";
    return tf_define_conflict(name, language);
}
