/* job.c - load and validate a job file (jobs/NAME.yaml) and the kernels it names.
 *
 * The job file is read first, so it is always the bundle's first file; the
 * kernels follow in list order, each resolved to a kernel.yaml by a fixed
 * search (the job's folder, the sibling kernels/ library, TUNEFARM_KERNEL_PATH
 * as the coordinator saw it, then the installed library) and loaded with
 * tf_kernel_load through the same bundle. Resolution only asks the bundle
 * whether a file exists, so a worker holding a sealed bundle walks the same
 * search and lands on the same file. Scalar settings are validated against
 * their documented ranges with the offending node's line and column, and the
 * job's identity is the hash of the whole bundle once everything is loaded.
 * The search section is kept raw: the strategy's name and each option's name
 * and value with their positions. schema/ depends on nothing (DESIGN.md,
 * "Layout"), and the worker loads jobs with this same loader, so the strategy
 * registry is not consulted here: the loader knows only the two cheap paths
 * (brute_force, random; any other name is the adaptive path) and the checks
 * that need no strategy (types, ranges, budget rules). The coordinator checks
 * the name and the options against its strategies (tf_strategy_check_job)
 * before anything runs, with the positions kept here. search.warm_start's
 * archive paths are resolved against the job file's folder and kept with
 * their positions, never opened here (the coordinator's plan reads them). */
#include "job.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "yamldoc.h"

_Static_assert(sizeof ((struct tf_archive_run *)0)->job_name == TF_JOB_NAME_MAX + 1,
               "TF_JOB_NAME_MAX must follow the archive's job_name field");

#ifndef TF_KERNEL_DIR
#define TF_KERNEL_DIR "/usr/local/share/tunefarm/kernels"
#endif

static const char *const job_keys[] = {"name",    "description", "kernels",    "targets",
                                       "search",  "measure",     "screen",     "archive",    "cache",
                                       "checkpoint", "compile_jobs", NULL};

struct jload {
    struct tf_ydoc d;
    struct tf_job *job;
    struct tf_bundle *bundle;
    char *dir; /* the job file's folder */
    struct tf_error *err;
};


/* "~/x" -> "$HOME/x"; anything else copied. */
static char *expand_home(const char *p)
{
    const char *home = getenv("HOME");
    if (strncmp(p, "~/", 2) == 0 && home && home[0])
        return tf_xasprintf("%s/%s", home, p + 2);
    return tf_xstrdup(p);
}

static char *default_cache(void)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/') /* the XDG spec ignores relative values */
        return tf_xasprintf("%s/tunefarm", xdg);
    const char *home = getenv("HOME");
    if (home && home[0])
        return tf_xasprintf("%s/.cache/tunefarm", home);
    return tf_xstrdup(".tunefarm-cache");
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* ---- kernels ---------------------------------------------------------------------- */

/* Find the kernel.yaml for `name`; NULL + located error listing the folders tried. */
static char *resolve_kernel(struct jload *L, const yaml_node_t *n, const char *name)
{
    if (strchr(name, '/')) {
        char *base = tf_path_join(L->dir, name);
        char *file = has_suffix(base, ".yaml") || has_suffix(base, ".yml")
                         ? tf_xstrdup(base)
                         : tf_path_join(base, "kernel.yaml");
        free(base);
        if (tf_bundle_exists(L->bundle, file))
            return file;
        tf_ydoc_fail(&L->d, n, L->err, TF_ERR_IO,
                     "no kernel file at '%s' (a kernel given as a path is relative to the "
                     "job file's folder)",
                     file);
        free(file);
        return NULL;
    }
    /* Candidate folders in priority order; kernel_path is split on ':'. */
    int cap = 4, count = 0;
    char **dirs = tf_xcalloc((size_t)cap, sizeof *dirs);
    dirs[count++] = tf_xstrdup(L->dir);
    dirs[count++] = tf_path_join(L->dir, "../kernels");
    const char *kp = L->bundle->kernel_path ? L->bundle->kernel_path : "";
    while (*kp) {
        const char *colon = strchr(kp, ':');
        size_t len = colon ? (size_t)(colon - kp) : strlen(kp);
        if (len > 0) {
            if (count + 1 >= cap) {
                cap *= 2;
                dirs = tf_xrealloc(dirs, (size_t)cap * sizeof *dirs);
            }
            dirs[count++] = tf_xasprintf("%.*s", (int)len, kp);
        }
        kp += len + (colon ? 1 : 0);
    }
    if (count + 2 >= cap)
        dirs = tf_xrealloc(dirs, (size_t)(cap = count + 2) * sizeof *dirs);
    /* An installed tree found from the binary itself (make install PREFIX=...),
     * then the PREFIX the binary was built for. */
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            dirs[count++] = tf_xasprintf("%s/../share/tunefarm/kernels", exe);
        }
    }
    dirs[count++] = tf_xstrdup(TF_KERNEL_DIR);

    char *found = NULL;
    for (int i = 0; i < count && !found; i++) {
        char *folder = tf_path_join(dirs[i], name);
        char *file = tf_path_join(folder, "kernel.yaml");
        free(folder);
        if (tf_bundle_exists(L->bundle, file))
            found = file;
        else
            free(file);
    }
    if (!found) {
        char list[700] = "";
        size_t used = 0;
        for (int i = 0; i < count && used < sizeof list; i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                     dirs[i]);
        tf_ydoc_fail(&L->d, n, L->err, TF_ERR_SCHEMA,
                     "kernel '%s' not found: no %s/kernel.yaml in any of: %s (add a folder "
                     "with TUNEFARM_KERNEL_PATH, or give the kernel as a path like "
                     "./my_kernel)",
                     name, name, list);
    }
    for (int i = 0; i < count; i++)
        free(dirs[i]);
    free(dirs);
    return found;
}

static int load_job_problems(struct jload *L, const yaml_node_t *pn, struct tf_job_kernel *jk)
{
    struct tf_ydoc *d = &L->d;
    const struct tf_kernel *k = jk->kernel;
    char buf[96];
    const char *text = tf_ydoc_text(pn);
    if (pn == NULL || (text && tf_ydoc_kind(pn) != TF_YS_NULL && strcmp(text, "all") == 0)) {
        jk->problems = tf_xcalloc((size_t)k->nproblems, sizeof *jk->problems);
        for (int i = 0; i < k->nproblems; i++)
            jk->problems[jk->nproblems++] = i;
        return 0;
    }
    char list[512] = "";
    size_t used = 0;
    for (int i = 0; i < k->nproblems && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                 k->problems[i].name);
    if (pn->type != YAML_SEQUENCE_NODE)
        return tf_ydoc_fail(d, pn, L->err, TF_ERR_SCHEMA,
                            "'problems' must be 'all' or a list of problem names like [%s], "
                            "found %s",
                            k->problems[0].name, tf_ydoc_describe(pn, buf, sizeof buf));
    int count = tf_ydoc_seq_size(pn);
    if (count == 0)
        return tf_ydoc_fail(d, pn, L->err, TF_ERR_SCHEMA,
                            "'problems' is empty; list problem names (%s) or write 'all'", list);
    jk->problems = tf_xcalloc((size_t)count, sizeof *jk->problems);
    for (int i = 0; i < count; i++) {
        yaml_node_t *item = tf_ydoc_seq_item(d, pn, i);
        const char *name;
        if (tf_ydoc_string(d, item, "problems", &name, L->err) != 0)
            return -1;
        int found = -1;
        for (int p = 0; p < k->nproblems && found < 0; p++)
            if (strcmp(k->problems[p].name, name) == 0)
                found = p;
        if (found < 0)
            return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                "kernel '%s' has no problem '%s' (its problems: %s)", k->name,
                                name, list);
        for (int j = 0; j < jk->nproblems; j++)
            if (jk->problems[j] == found)
                return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                    "problem '%s' is listed twice", name);
        jk->problems[jk->nproblems++] = found;
    }
    return 0;
}

static int load_kernels(struct jload *L, yaml_node_t *root)
{
    struct tf_ydoc *d = &L->d;
    struct tf_job *job = L->job;
    static const char *const item_keys[] = {"kernel", "problems", NULL};
    yaml_node_t *n = tf_ydoc_get(d, root, "kernels");
    if (tf_ydoc_expect_seq(d, n, "kernels", L->err) != 0)
        return -1;
    int count = tf_ydoc_seq_size(n);
    if (count == 0)
        return tf_ydoc_fail(d, n, L->err, TF_ERR_SCHEMA,
                            "'kernels' is empty; list at least one, e.g. '- kernel: gemm'");
    job->kernels = tf_xcalloc((size_t)count, sizeof *job->kernels);
    /* Where each kernel came from, to report duplicates at both places. */
    int *lines = tf_xcalloc((size_t)count, sizeof *lines);
    for (int i = 0; i < count; i++) {
        yaml_node_t *item = tf_ydoc_seq_item(d, n, i);
        yaml_node_t *kn = item, *pn = NULL;
        /* A bare scalar is shorthand for {kernel: X}. */
        if (item && item->type == YAML_MAPPING_NODE) {
            if (tf_ydoc_check_keys(d, item, "kernels item", item_keys, L->err) != 0 ||
                tf_ydoc_require(d, item, "kernel", "kernels item",
                                "a kernel name from the library or a folder path",
                                L->err) != 0)
                goto fail;
            kn = tf_ydoc_get(d, item, "kernel");
            pn = tf_ydoc_get(d, item, "problems");
        }
        const char *name;
        if (tf_ydoc_string(d, kn, "kernel", &name, L->err) != 0)
            goto fail;
        char *file = resolve_kernel(L, kn, name);
        if (file == NULL)
            goto fail;
        struct tf_kernel *k = tf_kernel_load(file, L->bundle, L->err);
        free(file);
        if (k == NULL)
            goto fail;
        struct tf_job_kernel *jk = &job->kernels[job->nkernels++];
        jk->kernel = k;
        lines[i] = tf_ydoc_line(kn);
        for (int j = 0; j + 1 < job->nkernels; j++) {
            const struct tf_kernel *o = job->kernels[j].kernel;
            if (strcmp(o->file, k->file) == 0 || strcmp(o->name, k->name) == 0) {
                tf_ydoc_fail(d, kn, L->err, TF_ERR_SCHEMA,
                             "kernel '%s' is listed twice (first at line %d); list it once "
                             "with all its problems",
                             k->name, lines[j]);
                goto fail;
            }
        }
        if (load_job_problems(L, pn, jk) != 0)
            goto fail;
    }
    free(lines);
    return 0;
fail:
    free(lines);
    return -1;
}

/* ---- settings --------------------------------------------------------------------- */

static int load_targets(struct jload *L, yaml_node_t *root)
{
    struct tf_ydoc *d = &L->d;
    yaml_node_t *n = tf_ydoc_get(d, root, "targets");
    if (n == NULL)
        return 0;
    if (tf_ydoc_expect_seq(d, n, "targets", L->err) != 0)
        return -1;
    int count = tf_ydoc_seq_size(n);
    L->job->targets = tf_xcalloc((size_t)(count ? count : 1), sizeof *L->job->targets);
    for (int i = 0; i < count; i++) {
        yaml_node_t *item = tf_ydoc_seq_item(d, n, i);
        const char *s;
        if (tf_ydoc_string(d, item, "targets", &s, L->err) != 0)
            return -1;
        L->job->targets[L->job->ntargets++] = tf_xstrdup(s);
    }
    return 0;
}

/* search.options: a map of scalars, kept as written with their positions.
 * Whether each name is one of the strategy's options and each value one it
 * accepts is the strategy's to say (tf_strategy_check_job); here only the
 * type: every option is a number, so an empty value, a quoted one or a list is
 * refused. */
static int load_options(struct jload *L, yaml_node_t *n)
{
    struct tf_ydoc *d = &L->d;
    struct tf_job *job = L->job;
    if (tf_ydoc_expect_map(d, n, "options", L->err) != 0 ||
        tf_ydoc_check_keys(d, n, "'search.options'", (const char *const[]){NULL}, L->err) != 0)
        return -1;
    const int m = tf_ydoc_map_size(n);
    job->options = tf_xcalloc((size_t)(m > 0 ? m : 1), sizeof *job->options);
    for (int i = 0; i < m; i++) {
        yaml_node_t *k = tf_ydoc_map_key(d, n, i), *v = tf_ydoc_map_value(d, n, i);
        const char *name = tf_ydoc_text(k);
        const char *text = tf_ydoc_text(v);
        char what[160];
        /* A quoted value is text, refused as budget: '10' is; read as a
         * number it would pass ('8', even ' 8'). */
        if (text == NULL || tf_ydoc_kind(v) == TF_YS_NULL || tf_ydoc_quoted(v))
            return tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                                "option '%s' of strategy %s must be a number, found %s", name,
                                job->strategy_name, tf_ydoc_describe(v, what, sizeof what));
        struct tf_job_option *o = &job->options[job->noptions++];
        o->name = tf_xstrdup(name);
        o->value = tf_xstrdup(text);
        o->line = tf_ydoc_line(v);
        o->col = tf_ydoc_column(v);
        o->name_line = tf_ydoc_line(k);
        o->name_col = tf_ydoc_column(k);
    }
    return 0;
}

/* search.warm_start: an archive path or `same`, or a list of them. Paths are
 * resolved against the job file's folder here (like kernel paths) but not
 * opened: workers load this job too and never read them; the coordinator's
 * plan does (tf_plan_warm_start), naming this entry's line:col if it cannot. */
static int load_warm(struct jload *L, yaml_node_t *n)
{
    struct tf_ydoc *d = &L->d;
    struct tf_job *job = L->job;
    const bool list = n->type == YAML_SEQUENCE_NODE;
    const int count = list ? tf_ydoc_seq_size(n) : 1;
    if (list && count == 0)
        return tf_ydoc_fail(d, n, L->err, TF_ERR_SCHEMA,
                            "'warm_start' is empty: list archives (paths relative to the job "
                            "file) or 'same', or remove it");
    job->warm = tf_xcalloc((size_t)count, sizeof *job->warm);
    for (int i = 0; i < count; i++) {
        yaml_node_t *item = list ? tf_ydoc_seq_item(d, n, i) : n;
        const char *s;
        char what[160];
        if (item == NULL || tf_ydoc_text(item) == NULL || tf_ydoc_kind(item) == TF_YS_NULL ||
            tf_ydoc_text(item)[0] == '\0')
            return tf_ydoc_fail(d, item ? item : n, L->err, TF_ERR_SCHEMA,
                                "'warm_start' entries must be archive paths (relative to the job "
                                "file's folder) or 'same' (this archive's other device "
                                "classes), found %s",
                                item ? tf_ydoc_describe(item, what, sizeof what) : "nothing");
        if (tf_ydoc_string(d, item, "warm_start", &s, L->err) != 0)
            return -1;
        struct tf_job_warm w = {.line = tf_ydoc_line(item), .col = tf_ydoc_column(item)};
        if (strcmp(s, "same") == 0) {
            w.same = true;
        } else {
            char *home = expand_home(s);
            w.path = tf_path_join(L->dir, home);
            free(home);
        }
        for (int j = 0; j < job->nwarm; j++)
            if (job->warm[j].same == w.same &&
                (w.same || strcmp(job->warm[j].path, w.path) == 0)) {
                free(w.path);
                return tf_ydoc_fail(d, item, L->err, TF_ERR_SCHEMA,
                                    "'warm_start' names '%s' twice (first at line %d): list "
                                    "each source once",
                                    s, job->warm[j].line);
            }
        job->warm[job->nwarm++] = w;
    }
    return 0;
}

/* A number > 0 (or >= 0 with `zero`), at most `hi`. */
static int read_positive(struct jload *L, yaml_node_t *v, const char *key, bool zero, double hi,
                         double *out)
{
    if (tf_ydoc_number(&L->d, v, key, out, L->err) != 0)
        return -1;
    if (!(zero ? *out >= 0 : *out > 0) || !(*out <= hi))
        return tf_ydoc_fail(&L->d, v, L->err, TF_ERR_SCHEMA,
                            "'%s' must be %s and at most %g, found %s", key,
                            zero ? ">= 0" : "> 0", hi, (const char *)v->data.scalar.value);
    return 0;
}

static int load_search(struct jload *L, yaml_node_t *root)
{
    struct tf_ydoc *d = &L->d;
    struct tf_job *job = L->job;
    static const char *const keys[] = {"strategy",   "options",    "budget", "time_budget",
                                       "patience",   "noise",      "seed",   "top_k",
                                       "warm_start", "warm_count", NULL};
    job->strategy = TF_STRATEGY_BRUTE_FORCE;
    job->strategy_name = tf_xstrdup("brute_force");
    job->top_k = 0;
    job->budget = 0;
    job->time_budget = 0;
    job->patience = 0;
    job->noise = 0.005;
    job->seed = 1;
    job->warm_count = TF_JOB_WARM_COUNT;
    yaml_node_t *n = tf_ydoc_get(d, root, "search");
    if (n == NULL)
        return 0;
    if (tf_ydoc_expect_map(d, n, "search", L->err) != 0 ||
        tf_ydoc_check_keys(d, n, "'search'", keys, L->err) != 0)
        return -1;
    yaml_node_t *v;
    const char *s;
    if ((v = tf_ydoc_get(d, n, "strategy")) != NULL) {
        if (tf_ydoc_string(d, v, "strategy", &s, L->err) != 0)
            return -1;
        /* Any name but the two cheap paths' is an adaptive strategy's; the
         * coordinator says whether it is one (tf_strategy_check_job). */
        free(job->strategy_name);
        job->strategy_name = tf_xstrdup(s);
        job->strategy_line = tf_ydoc_line(v);
        job->strategy_col = tf_ydoc_column(v);
        job->strategy = strcmp(s, "brute_force") == 0 ? TF_STRATEGY_BRUTE_FORCE
                        : strcmp(s, "random") == 0    ? TF_STRATEGY_RANDOM
                                                      : TF_STRATEGY_ADAPTIVE;
    }
    if ((v = tf_ydoc_get(d, n, "options")) != NULL && load_options(L, v) != 0)
        return -1;
    int64_t i;
    if ((v = tf_ydoc_get(d, n, "budget")) != NULL) {
        if (tf_ydoc_int(d, v, "budget", &i, L->err) != 0)
            return -1;
        if (i <= 0)
            return tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                                "'budget' (configurations per kernel, problem and device "
                                "class) must be > 0, found %" PRId64, i);
        job->budget = (uint64_t)i;
        job->budget_line = tf_ydoc_line(v);
        job->budget_col = tf_ydoc_column(v);
    } else if (job->strategy == TF_STRATEGY_RANDOM) {
        return tf_ydoc_fail(d, n, L->err, TF_ERR_SCHEMA,
                            "strategy 'random' needs a 'budget' (how many configurations to "
                            "measure per kernel, problem and device class)");
    }
    if ((v = tf_ydoc_get(d, n, "time_budget")) != NULL &&
        read_positive(L, v, "time_budget", false, 1e9, &job->time_budget) != 0)
        return -1;
    if ((v = tf_ydoc_get(d, n, "patience")) != NULL) {
        if (tf_ydoc_int(d, v, "patience", &i, L->err) != 0)
            return -1;
        if (i < 1)
            return tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                                "'patience' (results without an improvement before a search "
                                "stops) must be >= 1, found %" PRId64, i);
        job->patience = (uint64_t)i;
    }
    if ((v = tf_ydoc_get(d, n, "noise")) != NULL) {
        if (read_positive(L, v, "noise", true, 1, &job->noise) != 0)
            return -1;
        if (job->patience == 0)
            return tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                                "'noise' is only used with 'patience' (the improvement that "
                                "resets it): set 'patience' or remove 'noise'");
    }
    if ((v = tf_ydoc_get(d, n, "seed")) != NULL) {
        if (tf_ydoc_int(d, v, "seed", &i, L->err) != 0)
            return -1;
        if (i < 0)
            return tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                                "'seed' must be >= 0, found %" PRId64, i);
        job->seed = (uint64_t)i;
    }
    if ((v = tf_ydoc_get(d, n, "top_k")) != NULL) {
        if (tf_ydoc_int(d, v, "top_k", &i, L->err) != 0)
            return -1;
        if (i < 1 || i > 1000000)
            return tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                                "'top_k' (how many screened configurations to re-measure "
                                "strictly) must be between 1 and 1000000, found %" PRId64,
                                i);
        job->top_k = (uint32_t)i;
    }
    if ((v = tf_ydoc_get(d, n, "warm_start")) != NULL && load_warm(L, v) != 0)
        return -1;
    if ((v = tf_ydoc_get(d, n, "warm_count")) != NULL) {
        if (tf_ydoc_int(d, v, "warm_count", &i, L->err) != 0)
            return -1;
        if (i < 1 || i > 100000)
            return tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                                "'warm_count' (best configurations proposed first from each "
                                "source device class) must be between 1 and 100000, found "
                                "%" PRId64, i);
        if (job->nwarm == 0)
            return tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                                "'warm_count' is only used with 'warm_start' (the archives to "
                                "start from): set 'warm_start' or remove 'warm_count'");
        job->warm_count = (uint32_t)i;
    }
    return 0;
}

/* An int setting in [lo, INT_MAX]. */
static int read_int(struct jload *L, const yaml_node_t *v, const char *key, int64_t lo,
                    int *out)
{
    int64_t i;
    if (tf_ydoc_int(&L->d, v, key, &i, L->err) != 0)
        return -1;
    if (i < lo || i > INT_MAX)
        return tf_ydoc_fail(&L->d, v, L->err, TF_ERR_SCHEMA,
                            "'%s' must be between %" PRId64 " and %d, found %" PRId64, key, lo,
                            INT_MAX, i);
    *out = (int)i;
    return 0;
}

/* A finite number of seconds > 0. */
static int read_seconds(struct jload *L, const yaml_node_t *v, const char *key, double *out)
{
    if (tf_ydoc_number(&L->d, v, key, out, L->err) != 0)
        return -1;
    if (!(*out > 0 && *out < 1e12))
        return tf_ydoc_fail(&L->d, v, L->err, TF_ERR_SCHEMA,
                            "'%s' must be a number of seconds > 0, found %s", key,
                            tf_ydoc_text(v));
    return 0;
}

/* Read the measurement settings under `key` (measure or screen) over `*m`,
 * which holds the defaults. */
static int load_measure(struct jload *L, yaml_node_t *root, const char *key,
                        struct tf_measure *m)
{
    struct tf_ydoc *d = &L->d;
    static const char *const keys[] = {"warmup",   "min_samples", "max_samples",
                                       "min_time", "max_time",    "max_noise",
                                       "timeout",  "flush_l2",    "energy_time",
                                       NULL};
    char where[32];
    snprintf(where, sizeof where, "'%s'", key);
    yaml_node_t *n = tf_ydoc_get(d, root, key);
    if (n == NULL)
        return 0;
    if (tf_ydoc_expect_map(d, n, key, L->err) != 0 ||
        tf_ydoc_check_keys(d, n, where, keys, L->err) != 0)
        return -1;
    yaml_node_t *v;
    if ((v = tf_ydoc_get(d, n, "warmup")) && read_int(L, v, "warmup", 0, &m->warmup) != 0)
        return -1;
    if ((v = tf_ydoc_get(d, n, "min_samples")) &&
        read_int(L, v, "min_samples", 1, &m->min_samples) != 0)
        return -1;
    if ((v = tf_ydoc_get(d, n, "max_samples")) &&
        read_int(L, v, "max_samples", 1, &m->max_samples) != 0)
        return -1;
    if ((v = tf_ydoc_get(d, n, "min_time")) && read_seconds(L, v, "min_time", &m->min_time) != 0)
        return -1;
    if ((v = tf_ydoc_get(d, n, "max_time")) && read_seconds(L, v, "max_time", &m->max_time) != 0)
        return -1;
    if ((v = tf_ydoc_get(d, n, "timeout")) && read_seconds(L, v, "timeout", &m->timeout) != 0)
        return -1;
    if ((v = tf_ydoc_get(d, n, "max_noise")) != NULL) {
        if (tf_ydoc_number(d, v, "max_noise", &m->max_noise, L->err) != 0)
            return -1;
        if (!(m->max_noise > 0 && m->max_noise < 1))
            return tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                                "'max_noise' is a relative standard deviation and must be "
                                "between 0 and 1 (0.005 = 0.5%%), found %s",
                                tf_ydoc_text(v));
    }
    if ((v = tf_ydoc_get(d, n, "flush_l2")) && tf_ydoc_bool(d, v, "flush_l2", &m->flush_l2,
                                                            L->err) != 0)
        return -1;
    if ((v = tf_ydoc_get(d, n, "energy_time")) != NULL) {
        if (tf_ydoc_number(d, v, "energy_time", &m->energy_time, L->err) != 0)
            return -1;
        if (!(m->energy_time >= 0 && m->energy_time <= 60))
            return tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                                "'energy_time' must be a number of seconds from 0 (no energy) "
                                "to 60, found %s",
                                tf_ydoc_text(v));
    }
    /* Point cross-field errors at whichever of the two the user wrote. */
    if (m->max_samples < m->min_samples) {
        v = tf_ydoc_get(d, n, "max_samples");
        return tf_ydoc_fail(d, v ? v : tf_ydoc_get(d, n, "min_samples"), L->err, TF_ERR_SCHEMA,
                            "'max_samples' (%d) must be >= 'min_samples' (%d)", m->max_samples,
                            m->min_samples);
    }
    if (m->timeout <= m->max_time + m->energy_time) {
        v = tf_ydoc_get(d, n, "timeout");
        if (m->energy_time > 0)
            return tf_ydoc_fail(d, v ? v : tf_ydoc_get(d, n, "energy_time"), L->err,
                                TF_ERR_SCHEMA,
                                "'timeout' (%g s) must exceed 'max_time' + 'energy_time' "
                                "(%g s + %g s): the deadline covers loading, the verified "
                                "launch, every sample and the energy window",
                                m->timeout, m->max_time, m->energy_time);
        return tf_ydoc_fail(d, v ? v : tf_ydoc_get(d, n, "max_time"), L->err, TF_ERR_SCHEMA,
                            "'timeout' (%g s) must exceed 'max_time' (%g s): the deadline "
                            "covers loading, the verified launch and every sample",
                            m->timeout, m->max_time);
    }
    if (m->min_time > m->max_time) {
        v = tf_ydoc_get(d, n, "max_time");
        return tf_ydoc_fail(d, v ? v : tf_ydoc_get(d, n, "min_time"), L->err, TF_ERR_SCHEMA,
                            "'min_time' (%g s) must be <= 'max_time' (%g s)", m->min_time,
                            m->max_time);
    }
    return 0;
}

/* The strict protocol under `measure`, and the screening one under `screen`,
 * whose defaults are cheap (a few samples, loose noise) but keep measure's
 * timeout and cache flushing. */
static int load_measures(struct jload *L, yaml_node_t *root)
{
    struct tf_job *job = L->job;
    job->measure = (struct tf_measure){.warmup = 2,
                                       .min_samples = 10,
                                       .max_samples = 1000,
                                       .min_time = 0.02,
                                       .max_time = 1.0,
                                       .max_noise = 0.005,
                                       .timeout = 10.0,
                                       .flush_l2 = false,
                                       .energy_time = 0.1};
    if (load_measure(L, root, "measure", &job->measure) != 0)
        return -1;
    job->screen = (struct tf_measure){.warmup = 1,
                                      .min_samples = 3,
                                      .max_samples = 10,
                                      .min_time = 0.001,
                                      .max_time = 0.05,
                                      .max_noise = 0.05,
                                      .timeout = job->measure.timeout,
                                      .flush_l2 = job->measure.flush_l2,
                                      .energy_time = 0};
    if (load_measure(L, root, "screen", &job->screen) != 0)
        return -1;
    yaml_node_t *v = tf_ydoc_get(&L->d, root, "screen");
    if (v != NULL && job->top_k == 0)
        return tf_ydoc_fail(&L->d, v, L->err, TF_ERR_SCHEMA,
                            "'screen' is only used with two phases: set 'top_k' under "
                            "'search' (how many screened configurations to re-measure)");
    return 0;
}

static int load_paths(struct jload *L, yaml_node_t *root)
{
    struct tf_ydoc *d = &L->d;
    struct tf_job *job = L->job;
    yaml_node_t *v;
    const char *s;
    if ((v = tf_ydoc_get(d, root, "archive")) != NULL) {
        if (tf_ydoc_string(d, v, "archive", &s, L->err) != 0)
            return -1;
        job->archive = expand_home(s);
    } else {
        job->archive = tf_xasprintf("results/%s.h5", job->name);
    }
    if ((v = tf_ydoc_get(d, root, "cache")) != NULL) {
        if (tf_ydoc_string(d, v, "cache", &s, L->err) != 0)
            return -1;
        job->cache = expand_home(s);
    } else {
        job->cache = default_cache();
    }
    job->checkpoint = 10.0;
    if ((v = tf_ydoc_get(d, root, "checkpoint")) &&
        read_seconds(L, v, "checkpoint", &job->checkpoint) != 0)
        return -1;
    job->compile_jobs = 0;
    if ((v = tf_ydoc_get(d, root, "compile_jobs")) != NULL) {
        int64_t i;
        if (tf_ydoc_int(d, v, "compile_jobs", &i, L->err) != 0)
            return -1;
        /* Each job is a thread and a compiler process per worker rank: tens of
         * thousands exhaust the process table long before they compile faster. */
        if (i < 0 || i > TF_JOB_MAX_COMPILE_JOBS)
            return tf_ydoc_fail(d, v, L->err, TF_ERR_SCHEMA,
                                "'compile_jobs' (compiler processes per worker) must be between "
                                "0 and %d, found %" PRId64 "; use 0 for one per core near the "
                                "device, or a number up to the cores you have",
                                TF_JOB_MAX_COMPILE_JOBS, i);
        job->compile_jobs = (int)i;
    }
    return 0;
}

/* ---- load / destroy / targets ------------------------------------------------------- */

struct tf_job *tf_job_load(const char *path, struct tf_bundle *bundle, struct tf_error *err)
{
    struct jload L = {.bundle = bundle, .err = err};
    /* Read before anything else: the job file must be the bundle's first file. */
    const struct tf_bundle_file *f = tf_bundle_read(bundle, path, err);
    if (f == NULL)
        return NULL;
    const char *text = f->data;
    size_t size = f->size;
    struct tf_job *job = L.job = tf_xcalloc(1, sizeof *job);
    job->file = tf_xstrdup(path);
    L.dir = tf_path_dir(path);
    if (tf_ydoc_load(&L.d, job->file, text, size, err) != 0)
        goto fail;
    yaml_node_t *root = tf_ydoc_root(&L.d);
    if (tf_ydoc_check_keys(&L.d, root, "job file", job_keys, err) != 0 ||
        tf_ydoc_require(&L.d, root, "name", "job file",
                        "the job's name; it names the archive and the run", err) != 0 ||
        tf_ydoc_require(&L.d, root, "kernels", "job file",
                        "the kernels to tune, e.g. '- kernel: gemm'", err) != 0)
        goto fail;
    const char *s;
    if (tf_ydoc_ident(&L.d, tf_ydoc_get(&L.d, root, "name"), "name", &s, err) != 0)
        goto fail;
    /* The archive's /runs table keeps the job name in a fixed-size field. */
    if (strlen(s) > TF_JOB_NAME_MAX) {
        tf_ydoc_fail(&L.d, tf_ydoc_get(&L.d, root, "name"), err, TF_ERR_SCHEMA,
                     "job name '%.40s...' is %zu bytes long; at most %d fit the archive's "
                     "job_name column (/runs): shorten it",
                     s, strlen(s), TF_JOB_NAME_MAX);
        goto fail;
    }
    job->name = tf_xstrdup(s);
    yaml_node_t *desc = tf_ydoc_get(&L.d, root, "description");
    if (desc && tf_ydoc_string(&L.d, desc, "description", &s, err) != 0)
        goto fail;
    /* Settings before kernels: a typo in the job is reported without loading kernels. */
    if (load_targets(&L, root) != 0 || load_search(&L, root) != 0 ||
        load_measures(&L, root) != 0 || load_paths(&L, root) != 0 || load_kernels(&L, root) != 0)
        goto fail;
    tf_bundle_hash(bundle, job->hash);
    tf_ydoc_free(&L.d);
    free(L.dir);
    return job;
fail:
    tf_ydoc_free(&L.d);
    free(L.dir);
    tf_job_destroy(job);
    return NULL;
}

void tf_job_destroy(struct tf_job *job)
{
    if (job == NULL)
        return;
    for (int i = 0; i < job->nkernels; i++) {
        tf_kernel_destroy(job->kernels[i].kernel);
        free(job->kernels[i].problems);
    }
    free(job->kernels);
    for (int i = 0; i < job->ntargets; i++)
        free(job->targets[i]);
    free(job->targets);
    for (int i = 0; i < job->noptions; i++) {
        free(job->options[i].name);
        free(job->options[i].value);
    }
    free(job->options);
    for (int i = 0; i < job->nwarm; i++)
        free(job->warm[i].path);
    free(job->warm);
    free(job->strategy_name);
    free(job->name);
    free(job->file);
    free(job->archive);
    free(job->cache);
    free(job);
}

bool tf_job_targets_device(const struct tf_job *job, const char *backend, const char *class_key)
{
    if (job->ntargets == 0)
        return true;
    /* "backend/arch/name": the name may itself contain '/', so split only twice. */
    const char *arch = strchr(class_key, '/'), *name = NULL;
    char arch_only[64] = "";
    if (arch) {
        arch++;
        name = strchr(arch, '/');
        const size_t len = name ? (size_t)(name - arch) : strlen(arch);
        if (len < sizeof arch_only) {
            memcpy(arch_only, arch, len);
            arch_only[len] = '\0';
        }
    }
    if (name)
        name++;
    for (int i = 0; i < job->ntargets; i++) {
        const char *t = job->targets[i];
        if (strcmp(t, backend) == 0 || fnmatch(t, class_key, 0) == 0 ||
            (arch_only[0] && fnmatch(t, arch_only, 0) == 0) || (name && fnmatch(t, name, 0) == 0))
            return true;
    }
    return false;
}

int tf_job_compile_timeout(double *seconds, struct tf_error *err)
{
    const char *env = getenv("TUNEFARM_COMPILE_TIMEOUT");
    *seconds = TF_COMPILE_TIMEOUT_DEFAULT;
    if (env == NULL || env[0] == '\0')
        return 0;
    char *end = NULL;
    errno = 0;
    const double v = strtod(env, &end);
    /* isfinite: strtod takes "nan" and "inf"; the upper bound keeps every
     * deadline (now + this) and the coordinator's bound a sane number. */
    if (errno != 0 || end == env || *end != '\0' || !isfinite(v) || v <= 0 ||
        v > TF_COMPILE_TIMEOUT_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "TUNEFARM_COMPILE_TIMEOUT='%.40s': not a number of seconds above 0 "
                            "and at most %.0f (unset: %.0f)",
                            env, TF_COMPILE_TIMEOUT_MAX, TF_COMPILE_TIMEOUT_DEFAULT);
    *seconds = v;
    return 0;
}

int tf_job_compile_memory(uint64_t *mib, bool *set, struct tf_error *err)
{
    const char *env = getenv("TUNEFARM_COMPILE_MEMORY");
    *mib = 0;
    *set = false;
    if (env == NULL || env[0] == '\0')
        return 0;
    char *end = NULL;
    errno = 0;
    const unsigned long long v = strtoull(env, &end, 10);
    /* strtoull takes "-1" as 2^64 - 1; the shift to bytes must not overflow */
    if (errno != 0 || end == env || *end != '\0' || env[0] == '-' || v > (UINT64_MAX >> 20))
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "TUNEFARM_COMPILE_MEMORY='%.40s': not a size in MiB (0: no limit)",
                            env);
    *mib = v;
    *set = true;
    return 0;
}
