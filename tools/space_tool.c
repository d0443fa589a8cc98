/* space_tool.c - `tunefarm space`: count, list and sample a kernel's space.
 *
 * An authoring tool: it loads one kernel file, picks a device by architecture
 * (the nominal devices of schema/device.c, the very table `tunefarm compile`
 * uses, or this machine's CPU as the host backend describes it), applies
 * --set overrides of its properties, and walks the space with schema/space:
 *
 *   --count   per problem, the Cartesian and valid counts and, per constraint,
 *             the configurations it is the first to reject in evaluation
 *             order and those it alone rejects. Both come from exact counts of
 *             spaces with subsets of the constraints (tf_space_create_subset):
 *             with c_1..c_K the constraints in evaluation order and V(S) the
 *             valid count under the set S, "first" of c_i is
 *             V(c_1..c_{i-1}) - V(c_1..c_i), so the firsts and the valid count
 *             add up to the Cartesian size; "alone" of c is V(all but c) -
 *             V(all), what dropping c would add. 2K + 1 counts per problem,
 *             each memoised, so this costs a few counts' time.
 *   --list    every valid configuration as CSV, streamed from a cursor: value
 *             texts are made once per parameter value and copied into a large
 *             output buffer, so printing costs about what walking does.
 *   --sample  N configurations uniformly without replacement: N distinct ranks
 *             drawn (Floyd's algorithm, splitmix64 seeded by --seed and the
 *             problem's name) and unranked by subtree counts (tf_space_unrank);
 *             a space of more than TF_SPACE_EXACT_LIMIT configurations is
 *             first sampled by rejection from the Cartesian product, which is
 *             uniform over the valid ones and needs no count (counting can
 *             take hours where constraints read every parameter).
 *
 * SIGINT and SIGTERM stop a long walk through the space's poll hook (progress
 * on stderr after a second, as `tunefarm run` shows while it counts); the
 * command then exits 75 with what it printed so far. */
#include "space_tool.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../schema/replace.h"
#include "../schema/bundle.h"
#include "../schema/device.h"
#include "../schema/hash.h"
#include "../schema/kernel.h"
#include "../schema/space.h"
#include "../worker/backend.h"

enum {
    EXIT_OK = 0,
    EXIT_WRITE = 1,
    EXIT_USAGE = 2,
    EXIT_INTERRUPTED = 75,
};

const char tf_space_tool_usage[] =
    "usage: tunefarm space KERNEL.yaml [--problem P]... [--arch ARCH] [--set NAME=VALUE]...\n"
    "                      [--count | --list | --sample N [--seed S]] [-q]\n"
    "\n"
    "Count, list or sample the configurations of a kernel's parameter space on a\n"
    "nominal device, without a device or a job. KERNEL.yaml may be the kernel's\n"
    "folder.\n"
    "\n"
    "options:\n"
    "  -p, --problem P   only problem P (repeatable; default: every problem)\n"
    "  -a, --arch ARCH   the device whose properties constraints read: a nominal\n"
    "                    GPU (sm_70, sm_80, sm_86, sm_89, sm_90, gfx90a, gfx942; the\n"
    "                    devices `tunefarm compile` uses, schema/kernel.md lists\n"
    "                    them) or `host`, this machine's CPU as a host worker sees\n"
    "                    it. Default: host for C kernels, sm_90 for GPU kernels\n"
    "  -s, --set N=V     override device property N (max_threads, max_shared,\n"
    "                    max_shared_optin, warp_size, sm_count, l2_bytes,\n"
    "                    max_registers, simd_bytes, max_shared_per_sm) with the\n"
    "                    integer V; repeatable\n"
    "  -c, --count       (the default) per problem: Cartesian and valid counts, and\n"
    "                    per constraint how many configurations it rejects\n"
    "                    `first` (it is the first to fail in evaluation order:\n"
    "                    constraints that read no parameter, then by the last\n"
    "                    parameter they read, ties in file order; the firsts and\n"
    "                    the valid count add up to the Cartesian size) and `alone`\n"
    "                    (no other constraint rejects them: dropping it would make\n"
    "                    them valid)\n"
    "  -l, --list        every valid configuration, CSV on stdout in index order:\n"
    "                    a header line of parameter names (with a leading\n"
    "                    `problem` column when several problems are listed), then\n"
    "                    one line of values each (enum values by name)\n"
    "  -n, --sample N    N valid configurations drawn uniformly without\n"
    "                    replacement (all of them if there are fewer), printed as\n"
    "                    --list prints, in index order; a space of more than 2^24\n"
    "                    configurations is sampled by rejection, without a count\n"
    "      --seed S      the sample's seed (default 1): the same seed, kernel and\n"
    "                    device draw the same sample\n"
    "  -q, --quiet       no progress lines on stderr\n"
    "  -h, --help        this text\n"
    "\n"
    "Long counts show progress on stderr after a second; SIGINT or SIGTERM stops.\n"
    "\n"
    "exit codes: 0 done; 1 output could not be written; 2 bad arguments, kernel\n"
    "file or a constraint that cannot be evaluated; 75 stopped by a signal.\n";

enum mode { MODE_COUNT, MODE_LIST, MODE_SAMPLE };

struct tool {
    const char *prog;
    bool quiet;
    enum mode mode;
    uint64_t sample;
    uint64_t seed;
    const struct tf_kernel *k;
    struct tf_device dev;
    int *problems;          /* selected problem indices */
    int nproblems;
};

/* ---- signals and progress ---- */

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

struct progress {
    bool quiet;
    double next_at, last_elapsed;
};

static bool tool_poll(void *ctx, const char *kernel, const char *problem, const char *activity,
                      double fraction, double elapsed)
{
    struct progress *p = ctx;
    if (stop_requested)
        return true;
    if (elapsed < p->last_elapsed || p->next_at == 0) /* a new walk */
        p->next_at = 1.0;
    p->last_elapsed = elapsed;
    if (!p->quiet && elapsed >= p->next_at) {
        fprintf(stderr, "tunefarm space: %s of %s/%s: %.3g%% after %.0f s (SIGTERM or Ctrl-C "
                        "stops)\n",
                activity, kernel, problem, 100 * fraction, elapsed);
        p->next_at = elapsed < 10 ? elapsed + 2 : elapsed + 10;
    }
    return false;
}

/* The exit code for a failed space call: 75 for a stop, 2 otherwise (printed). */
static int space_failure(const struct tool *t, const struct tf_error *err)
{
    if (err->code == TF_ERR_INTERRUPTED || stop_requested)
        return EXIT_INTERRUPTED; /* said once, by tf_space_tool_main */
    tf_error_print(err, t->prog, stderr);
    return EXIT_USAGE;
}

/* ---- the device ---- */

static int pick_device(struct tool *t, const char *arch, char **sets, int nsets)
{
    struct tf_error err = {0};
    if (arch == NULL)
        arch = strcmp(t->k->language, "c") == 0 ? "host" : "sm_90";
    if (strcmp(arch, "host") == 0) {
        if (tf_backend_host.describe(0, &t->dev, &err)) {
            tf_error_print(&err, t->prog, stderr);
            return -1;
        }
        tf_strlcpy(t->dev.arch, "host", sizeof t->dev.arch);
    } else if (tf_device_for_arch(arch, &t->dev) != 0) {
        fprintf(stderr, "%s: unknown architecture '%s': known are %s, host\n", t->prog, arch,
                tf_device_known_archs());
        return -1;
    }
    for (int i = 0; i < nsets; i++) {
        const char *eq = strchr(sets[i], '=');
        int p = TF_DEVPROP_COUNT;
        if (eq != NULL)
            for (p = 0; p < TF_DEVPROP_COUNT; p++)
                if (strlen(tf_devprop_name(p)) == (size_t)(eq - sets[i]) &&
                    strncmp(tf_devprop_name(p), sets[i], (size_t)(eq - sets[i])) == 0)
                    break;
        if (eq == NULL || p == TF_DEVPROP_COUNT) {
            char names[256] = "";
            size_t used = 0;
            for (int q = 0; q < TF_DEVPROP_COUNT; q++)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                         q ? ", " : "", tf_devprop_name(q));
            fprintf(stderr, "%s: --set wants NAME=VALUE with NAME one of %s; got '%s'\n",
                    t->prog, names, sets[i]);
            return -1;
        }
        char *end;
        errno = 0;
        long long v = strtoll(eq + 1, &end, 10); /* 010 is ten, as everywhere else */
        if (eq[1] == '\0' || *end != '\0' || errno != 0 || v < 0) {
            fprintf(stderr, "%s: --set %.*s wants a decimal integer of at least 0, got '%s'\n",
                    t->prog, (int)(eq - sets[i]), sets[i], eq + 1);
            return -1;
        }
        t->dev.props[p] = v;
    }
    return 0;
}

/* ---- output ---- */

/* A large output buffer: lines are assembled in it and written in blocks. */
struct out {
    char *buf;
    size_t used, cap;
    bool failed;
};

static void out_flush(struct out *o)
{
    if (o->used && !o->failed && fwrite(o->buf, 1, o->used, stdout) != o->used)
        o->failed = true;
    o->used = 0;
}

static inline void out_put(struct out *o, const char *s, size_t n)
{
    if (o->used + n > o->cap)
        out_flush(o);
    if (n > o->cap) { /* a single huge field: straight through */
        if (!o->failed && fwrite(s, 1, n, stdout) != n)
            o->failed = true;
        return;
    }
    memcpy(o->buf + o->used, s, n);
    o->used += n;
}

/* The text of every value of every parameter, CSV-quoted where needed. */
struct value_texts {
    char ***text;
    size_t **len;
};

static char *csv_field(const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL)
        return tf_xstrdup(s);
    size_t n = strlen(s), j = 0;
    char *q = tf_xmalloc(2 * n + 3);
    q[j++] = '"';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            q[j++] = '"';
        q[j++] = s[i];
    }
    q[j++] = '"';
    q[j] = '\0';
    return q;
}

static void texts_init(struct value_texts *vt, const struct tf_kernel *k)
{
    vt->text = tf_xcalloc((size_t)k->nparams + 1, sizeof *vt->text);
    vt->len = tf_xcalloc((size_t)k->nparams + 1, sizeof *vt->len);
    for (int p = 0; p < k->nparams; p++) {
        const struct tf_param *pa = &k->params[p];
        vt->text[p] = tf_xcalloc((size_t)pa->count, sizeof **vt->text);
        vt->len[p] = tf_xcalloc((size_t)pa->count, sizeof **vt->len);
        for (int v = 0; v < pa->count; v++) {
            char num[32];
            if (pa->kind == TF_PARAM_INT)
                snprintf(num, sizeof num, "%" PRId64, pa->ints[v]);
            vt->text[p][v] = csv_field(pa->kind == TF_PARAM_INT ? num : pa->strings[v]);
            vt->len[p][v] = strlen(vt->text[p][v]);
        }
    }
}

static void texts_free(struct value_texts *vt, const struct tf_kernel *k)
{
    for (int p = 0; p < k->nparams; p++) {
        for (int v = 0; v < k->params[p].count; v++)
            free(vt->text[p][v]);
        free(vt->text[p]);
        free(vt->len[p]);
    }
    free(vt->text);
    free(vt->len);
}

/* The line being printed, kept between configurations: consecutive ones
 * differ mostly in their last parameters, so only the fields from the first
 * changed parameter on are written again. */
struct line {
    char *text;
    size_t *end;            /* end of each parameter's field (its comma included) */
    int *digits;            /* the configuration it holds */
    int valid_upto;         /* fields [0, valid_upto) are current */
};

static void line_init(struct line *l, const struct value_texts *vt, const struct tf_kernel *k,
                      size_t problem_len)
{
    size_t cap = problem_len + 2;
    for (int p = 0; p < k->nparams; p++) {
        size_t widest = 0;
        for (int v = 0; v < k->params[p].count; v++)
            widest = vt->len[p][v] > widest ? vt->len[p][v] : widest;
        cap += widest + 1;
    }
    l->text = tf_xmalloc(cap);
    l->end = tf_xcalloc((size_t)k->nparams + 1, sizeof *l->end);
    l->digits = tf_xcalloc((size_t)k->nparams + 1, sizeof *l->digits);
    l->valid_upto = 0;
}

static void line_free(struct line *l)
{
    free(l->text);
    free(l->end);
    free(l->digits);
}

/* One CSV line: the problem column (when `problem` is not NULL), then the values. */
static inline void put_config(struct out *o, struct line *l, const struct value_texts *vt,
                              int nparams, const char *problem, size_t problem_len,
                              const int *digits)
{
    int p = 0;
    while (p < l->valid_upto && l->digits[p] == digits[p])
        p++;
    size_t at = p > 0 ? l->end[p - 1] : 0;
    if (p == 0 && problem != NULL) {
        memcpy(l->text, problem, problem_len);
        l->text[problem_len] = ',';
        at = problem_len + 1;
    }
    for (; p < nparams; p++) {
        size_t n = vt->len[p][digits[p]];
        memcpy(l->text + at, vt->text[p][digits[p]], n);
        at += n;
        l->text[at++] = p + 1 < nparams ? ',' : '\n';
        l->end[p] = at;
        l->digits[p] = digits[p];
    }
    l->valid_upto = nparams;
    out_put(o, l->text, at);
}

/* ---- the modes ---- */

/* Constraint indices sorted by evaluation order (insertion sort: a handful). */
static void evaluation_order(const struct tf_space *s, int nc, int *order)
{
    for (int i = 0; i < nc; i++) {
        int c = i, j = i;
        while (j > 0 && tf_space_constraint_level(s, order[j - 1]) >
                            tf_space_constraint_level(s, c)) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = c;
    }
}

/* The valid count of problem `p` with the constraints use[] keeps. */
static int count_subset(const struct tool *t, int p, const bool *use, uint64_t *count,
                        struct tf_error *err)
{
    struct tf_space *s = tf_space_create_subset(t->k, p, &t->dev, use, err);
    if (s == NULL)
        return -1;
    int rc = tf_space_count(s, 0, UINT64_MAX, count, err);
    tf_space_destroy(s);
    return rc;
}

static int mode_count(const struct tool *t)
{
    const struct tf_kernel *k = t->k;
    int nc = k->nconstraints;
    printf("kernel %s (%s): %d parameters, %d constraints\n", k->name, k->file, k->nparams, nc);
    printf("device %s: %s;", t->dev.arch, t->dev.name);
    for (int p = 0; p < TF_DEVPROP_COUNT; p++)
        printf(" %s=%lld", tf_devprop_name(p), (long long)t->dev.props[p]);
    printf("\n");
    bool *use = tf_xcalloc((size_t)nc + 1, sizeof *use);
    int *order = tf_xcalloc((size_t)nc + 1, sizeof *order);
    uint64_t *first = tf_xcalloc((size_t)nc + 1, sizeof *first);
    uint64_t *alone = tf_xcalloc((size_t)nc + 1, sizeof *alone);
    int code = EXIT_OK;
    struct tf_error err = {0};
    for (int i = 0; i < t->nproblems && code == EXIT_OK; i++) {
        int p = t->problems[i];
        struct tf_space *s = tf_space_create(k, p, &t->dev, &err);
        uint64_t valid = 0;
        if (s == NULL || tf_space_count(s, 0, UINT64_MAX, &valid, &err)) {
            tf_space_destroy(s);
            code = space_failure(t, &err);
            break;
        }
        uint64_t cart = tf_space_cartesian(s);
        evaluation_order(s, nc, order);
        int levels[nc > 0 ? nc : 1];
        for (int c = 0; c < nc; c++)
            levels[c] = tf_space_constraint_level(s, c);
        tf_space_destroy(s);
        /* firsts: counts under growing prefixes of the evaluation order */
        uint64_t before = cart;
        for (int c = 0; c < nc; c++)
            use[c] = false;
        for (int j = 0; j < nc && code == EXIT_OK; j++) {
            use[order[j]] = true;
            uint64_t now = valid;
            if (j + 1 < nc && count_subset(t, p, use, &now, &err))
                code = space_failure(t, &err);
            first[order[j]] = before - now;
            before = now;
        }
        /* alone: counts without one constraint each */
        for (int c = 0; c < nc && code == EXIT_OK; c++) {
            for (int d = 0; d < nc; d++)
                use[d] = d != c;
            uint64_t without;
            if (count_subset(t, p, use, &without, &err))
                code = space_failure(t, &err);
            else
                alone[c] = without - valid;
        }
        if (code != EXIT_OK)
            break;
        printf("\nproblem %s (", k->problems[p].name);
        for (int z = 0; z < k->nsizes; z++)
            printf("%s%s=%" PRId64, z ? " " : "", k->size_names[z], k->problems[p].sizes[z]);
        printf("): %" PRIu64 " configurations, %" PRIu64 " valid (%.3g%%)\n", cart, valid,
               cart ? 100.0 * (double)valid / (double)cart : 0.0);
        if (nc == 0) {
            printf("  no constraints\n");
            continue;
        }
        printf("  %14s %14s  %-9s %-14s %s\n", "rejects first", "rejects alone", "line:col",
               "evaluated at", "constraint");
        for (int j = 0; j < nc; j++) {
            int c = order[j];
            char at[16];
            snprintf(at, sizeof at, "%d:%d", k->constraint_lines ? k->constraint_lines[c] : 0,
                     k->constraint_columns ? k->constraint_columns[c] : 0);
            printf("  %14" PRIu64 " %14" PRIu64 "  %-9s %-14s %s\n", first[c], alone[c], at,
                   levels[c] < 0 ? "(no parameter)" : k->params[levels[c]].name,
                   tf_expr_text(k->constraints[c]));
        }
        uint64_t rejected = cart - valid;
        printf("  %14" PRIu64 " rejected in all (+ %" PRIu64 " valid = %" PRIu64 ")\n", rejected,
               valid, cart);
    }
    free(use);
    free(order);
    free(first);
    free(alone);
    if (code == EXIT_OK && fflush(stdout) != 0)
        code = EXIT_WRITE;
    return code;
}

/* splitmix64 (as schema/space.c's sampler). */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
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

/* `n` distinct ranks below `valid`, uniformly (Floyd), ascending, into a new array. */
static uint64_t *draw_ranks(uint64_t n, uint64_t valid, uint64_t seed)
{
    uint64_t cap = 1;
    while (cap < 2 * n + 2)
        cap <<= 1;
    uint64_t *set = tf_xcalloc(cap, sizeof *set), *ranks = tf_xmalloc(sizeof *ranks * n);
    uint64_t m = 0, rng = seed;
    for (uint64_t j = valid - n; j < valid; j++) {
        uint64_t r = rng_below(&rng, j + 1), pick = r;
        for (int pass = 0; pass < 2; pass++) {
            uint64_t i = ((pick + 1) * 0x9e3779b97f4a7c15ull) & (cap - 1);
            while (set[i] != 0 && set[i] != pick + 1)
                i = (i + 1) & (cap - 1);
            if (set[i] == 0) {
                set[i] = pick + 1;
                ranks[m++] = pick;
                break;
            }
            pick = j; /* r was drawn before: take j, which cannot have been */
        }
    }
    free(set);
    qsort(ranks, m, sizeof *ranks, cmp_u64);
    return ranks;
}

#define SAMPLE_MAX (UINT64_C(1) << 27)

/* Draws made at most by rejection before a sample falls back to counting. */
#define REJECTION_DRAWS (UINT64_C(1) << 22)

/* t->sample distinct valid configurations of a huge space, drawn uniformly
 * from the Cartesian product and kept if valid (uniform over the valid ones),
 * ascending, into a new array *out: 0; 1 if REJECTION_DRAWS + 16 per
 * configuration wanted did not find them (too rare: count instead); -1 + err. */
static int draw_by_rejection(const struct tool *t, struct tf_space *s, uint64_t seed,
                             uint64_t **out, struct tf_error *err)
{
    uint64_t n = t->sample, cap = 1, got = 0, rng = seed, cart = tf_space_cartesian(s);
    while (cap < 2 * n + 2)
        cap <<= 1;
    uint64_t *set = tf_xcalloc(cap, sizeof *set), *list = tf_xmalloc(sizeof *list * (n + 1));
    const uint64_t limit = REJECTION_DRAWS + 16 * n;
    int rc = 1;
    for (uint64_t draw = 0; got < n && draw < limit; draw++) {
        if ((draw & 0xffff) == 0 && stop_requested) {
            rc = tf_error_set(err, TF_ERR_INTERRUPTED, "stopped by a signal");
            goto out;
        }
        uint64_t idx = rng_below(&rng, cart);
        bool valid;
        if (tf_space_is_valid(s, idx, &valid, err)) {
            rc = -1;
            goto out;
        }
        if (!valid)
            continue;
        uint64_t i = ((idx + 1) * 0x9e3779b97f4a7c15ull) & (cap - 1);
        while (set[i] != 0 && set[i] != idx + 1)
            i = (i + 1) & (cap - 1);
        if (set[i] == 0) {
            set[i] = idx + 1;
            list[got++] = idx;
        }
    }
    if (got == n) {
        qsort(list, n, sizeof *list, cmp_u64);
        *out = list;
        list = NULL;
        rc = 0;
    }
out:
    free(set);
    free(list);
    return rc;
}

/* The valid configurations of problem p (--list), or a sample of them
 * (--sample), into `o`. Returns an exit code. */
static int list_problem(const struct tool *t, int p, bool with_problem,
                        const struct value_texts *vt, struct out *o)
{
    const struct tf_kernel *k = t->k;
    struct tf_error err = {0};
    char *pname = with_problem ? csv_field(k->problems[p].name) : NULL;
    size_t plen = pname ? strlen(pname) : 0;
    struct line line;
    line_init(&line, vt, k, plen);
    int *digits = tf_xcalloc((size_t)k->nparams + 1, sizeof *digits);
    struct tf_space_cursor *c = NULL;
    uint64_t *ranks = NULL, valid;
    int code = EXIT_OK, rc = 0;
    struct tf_space *s = tf_space_create(k, p, &t->dev, &err);
    if (s == NULL) {
        code = space_failure(t, &err);
        goto out;
    }
    if (t->mode == MODE_SAMPLE) {
        /* the seed and the problem's name: problems draw independently */
        struct tf_sha256 h;
        char hex[65];
        tf_sha256_init(&h);
        tf_sha256_update_str(&h, k->problems[p].name);
        tf_sha256_hex(&h, hex);
        uint64_t seed = t->seed ^ strtoull(hex + 48, NULL, 16);
        /* A huge space is not counted first (that can take hours where the
         * constraints read every parameter): drawn by rejection instead. */
        if (tf_space_cartesian(s) > TF_SPACE_EXACT_LIMIT) {
            rc = draw_by_rejection(t, s, seed, &ranks, &err);
            if (rc < 0) {
                code = space_failure(t, &err);
                goto out;
            }
            if (rc == 0) { /* ranks holds the configurations themselves */
                for (uint64_t r = 0; r < t->sample && !o->failed; r++) {
                    tf_kernel_decode(k, ranks[r], digits);
                    put_config(o, &line, vt, k->nparams, pname, plen, digits);
                }
                goto out;
            }
            rc = 0; /* too rare for rejection: count, then unrank */
        }
        if (tf_space_count(s, 0, UINT64_MAX, &valid, &err)) {
            code = space_failure(t, &err);
            goto out;
        }
        if (t->sample < valid) {
            ranks = draw_ranks(t->sample, valid, seed);
            for (uint64_t r = 0; r < t->sample && !o->failed; r++) {
                uint64_t index;
                if ((rc = tf_space_unrank(s, ranks[r], &index, &err)) < 0)
                    break;
                if (stop_requested)
                    break;
                tf_kernel_decode(k, index, digits);
                put_config(o, &line, vt, k->nparams, pname, plen, digits);
            }
            goto done;
        }
        /* All of them (valid <= N): in a huge space unranked too, in index
         * order: a walk would visit every prefix, and a space the count
         * factors at once can hold few valid configurations among 2^64.
         * Below that, the cursor's walk is the faster (no count per item). */
        for (uint64_t r = 0; tf_space_cartesian(s) > TF_SPACE_EXACT_LIMIT && r < valid &&
                             !o->failed; r++) {
            uint64_t index;
            if ((rc = tf_space_unrank(s, r, &index, &err)) < 0 || stop_requested)
                break;
            tf_kernel_decode(k, index, digits);
            put_config(o, &line, vt, k->nparams, pname, plen, digits);
        }
        if (tf_space_cartesian(s) > TF_SPACE_EXACT_LIMIT)
            goto done;
    }
    c = tf_space_cursor_create(s, 0, "listing the valid configurations");
    uint64_t index, n = 0;
    while ((rc = tf_space_cursor_next(c, UINT64_MAX, &index, &err)) == 1) {
        put_config(o, &line, vt, k->nparams, pname, plen, tf_space_cursor_digits(c));
        if ((++n & 0xffff) == 0 && (stop_requested || o->failed))
            break;
    }
done:
    if (rc < 0)
        code = space_failure(t, &err);
    else if (stop_requested)
        code = EXIT_INTERRUPTED;
out:
    tf_space_cursor_destroy(c);
    tf_space_destroy(s);
    free(ranks);
    free(digits);
    line_free(&line);
    free(pname);
    return code;
}

static int mode_list(const struct tool *t)
{
    const struct tf_kernel *k = t->k;
    struct value_texts vt;
    texts_init(&vt, k);
    struct out o = {tf_xmalloc(1 << 20), 0, 1 << 20, false};
    bool with_problem = t->nproblems > 1;
    if (with_problem)
        out_put(&o, "problem,", 8);
    for (int p = 0; p < k->nparams; p++) {
        char *name = csv_field(k->params[p].name);
        out_put(&o, name, strlen(name));
        out_put(&o, p + 1 < k->nparams ? "," : "\n", 1);
        free(name);
    }
    if (k->nparams == 0)
        out_put(&o, "\n", 1);
    int code = EXIT_OK;
    for (int i = 0; i < t->nproblems && code == EXIT_OK && !o.failed; i++)
        code = list_problem(t, t->problems[i], with_problem, &vt, &o);
    out_flush(&o);
    if (fflush(stdout) != 0)
        o.failed = true;
    if (o.failed && code == EXIT_OK) {
        fprintf(stderr, "%s: cannot write the output: %s\n", t->prog, strerror(errno));
        code = EXIT_WRITE;
    }
    free(o.buf);
    texts_free(&vt, k);
    return code;
}

/* ---- the command ---- */

static int parse_u64(const char *prog, const char *what, const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (text[0] == '\0' || text[0] == '-' || *end != '\0' || errno != 0) {
        fprintf(stderr, "%s: %s wants a non-negative integer, got '%s'\n", prog, what, text);
        return -1;
    }
    *out = v;
    return 0;
}

int tf_space_tool_main(int argc, char **argv)
{
    static const struct option longopts[] = {{"problem", required_argument, NULL, 'p'},
                                             {"arch", required_argument, NULL, 'a'},
                                             {"set", required_argument, NULL, 's'},
                                             {"count", no_argument, NULL, 'c'},
                                             {"list", no_argument, NULL, 'l'},
                                             {"sample", required_argument, NULL, 'n'},
                                             {"seed", required_argument, NULL, 'S'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct tool t = {.prog = "tunefarm space", .mode = MODE_COUNT, .seed = 1};
    bool seed_given = false;
    const char *arch = NULL;
    char **sets = tf_xcalloc((size_t)argc + 1, sizeof *sets), **names =
                                                                  tf_xcalloc((size_t)argc + 1,
                                                                             sizeof *names);
    int nsets = 0, nnames = 0, nmodes = 0, code = EXIT_USAGE, c;
    struct tf_bundle *b = NULL;
    struct tf_kernel *k = NULL;
    char *path = NULL;
    optind = 2;
    while ((c = getopt_long(argc, argv, "p:a:s:cln:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            names[nnames++] = optarg;
            break;
        case 'a':
            arch = optarg;
            break;
        case 's':
            sets[nsets++] = optarg;
            break;
        case 'c':
            t.mode = MODE_COUNT;
            nmodes++;
            break;
        case 'l':
            t.mode = MODE_LIST;
            nmodes++;
            break;
        case 'n':
            t.mode = MODE_SAMPLE;
            nmodes++;
            if (parse_u64(t.prog, "--sample", optarg, &t.sample))
                goto out;
            if (t.sample > SAMPLE_MAX) {
                fprintf(stderr, "%s: --sample takes at most %" PRIu64 " (use --list for all)\n",
                        t.prog, SAMPLE_MAX);
                goto out;
            }
            break;
        case 'S':
            if (parse_u64(t.prog, "--seed", optarg, &t.seed))
                goto out;
            seed_given = true;
            break;
        case 'q':
            t.quiet = true;
            break;
        case 'h':
            fputs(tf_space_tool_usage, stdout);
            code = EXIT_OK;
            goto out;
        default:
            fputs(tf_space_tool_usage, stderr);
            goto out;
        }
    }
    if (optind != argc - 1 || nmodes > 1) {
        fprintf(stderr, "%s: expected one kernel file%s\n\n%s", t.prog,
                nmodes > 1 ? " and at most one of --count, --list, --sample" : "",
                tf_space_tool_usage);
        goto out;
    }
    if (seed_given && t.mode != MODE_SAMPLE) {
        fprintf(stderr, "%s: --seed chooses a --sample: give --sample N too, or drop --seed\n",
                t.prog);
        goto out;
    }
    struct stat st;
    path = stat(argv[optind], &st) == 0 && S_ISDIR(st.st_mode)
               ? tf_path_join(argv[optind], "kernel.yaml")
               : tf_xstrdup(argv[optind]);
    struct tf_error err = {0};
    b = tf_bundle_create();
    if (tf_replace_is_hdf5(path)) {
        fprintf(stderr, "%s: %s is an HDF5 file (an archive?), not a kernel file: `tunefarm "
                        "space` reads a kernel.yaml (`tunefarm query` reads archives)\n",
                t.prog, path);
        goto out;
    }
    if ((k = tf_kernel_load(path, b, &err)) == NULL) {
        tf_error_print(&err, t.prog, stderr);
        if (strstr(err.message, "unknown key 'kernels' in kernel file") != NULL)
            fprintf(stderr, "%s: %s looks like a job file: give one of the kernel files it "
                            "names (its kernels' `kernel:`)\n", t.prog, path);
        goto out;
    }
    t.k = k;
    t.problems = tf_xcalloc((size_t)k->nproblems + (size_t)nnames + 1, sizeof *t.problems);
    for (int i = 0; i < nnames; i++) {
        int found = -1;
        for (int p = 0; p < k->nproblems && found < 0; p++)
            if (strcmp(k->problems[p].name, names[i]) == 0)
                found = p;
        if (found < 0) {
            char list[1024] = "";
            size_t used = 0;
            for (int p = 0; p < k->nproblems && used < sizeof list; p++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", p ? ", " : "",
                                         k->problems[p].name);
            fprintf(stderr, "%s: kernel '%s' has no problem '%s': its problems are %s\n", t.prog,
                    k->name, names[i], list);
            goto out;
        }
        t.problems[t.nproblems++] = found;
    }
    if (nnames == 0)
        for (int p = 0; p < k->nproblems; p++)
            t.problems[t.nproblems++] = p;
    if (pick_device(&t, arch, sets, nsets))
        goto out;

    struct progress prog = {.quiet = t.quiet};
    struct sigaction sa = {.sa_handler = on_stop}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    tf_space_set_poll(tool_poll, &prog);
    code = t.mode == MODE_COUNT ? mode_count(&t) : mode_list(&t);
    if (code == EXIT_INTERRUPTED)
        fprintf(stderr, "%s: stopped by a signal (what was printed is incomplete)\n", t.prog);
    tf_space_set_poll(NULL, NULL);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
out:
    free(t.problems);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
    free(path);
    free(sets);
    free(names);
    return code;
}
