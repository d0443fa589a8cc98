/* best.c - `tunefarm best`: the best configuration per problem and device
 * class of one kernel, in the forms a build consumes.
 *
 * The best of a group (kernel, problem, device class, one run or all) is
 * tf_report_pick's, the very choice `tunefarm query` prints, and the macros
 * are tf_param_defines', the very function that gives a worker's compiler its
 * -D flags (tf_kernel_defines calls it): what a build gets is what was
 * measured, enum parameters included (NAME=index and NAME_value=1), then the
 * problem's sizes a kernel compiles in (`defines:`, the archive's
 * size_defines), as a worker adds them.
 *
 *   header  #defines selected by device class and problem. A build names the
 *           class with -DTUNEFARM_DEVICE_<CLASS> (Kernel Tuner's TARGET_<dev>
 *           habit) or lets the compiler's target choose: __CUDA_ARCH__ ==
 *           900 picks the first sm_90 class, __gfx90a__ the first gfx90a one,
 *           __x86_64__ / __aarch64__ (outside a GPU pass) the first host
 *           class of that machine. A problem is named with
 *           -DTUNEFARM_PROBLEM_<PROBLEM> unless there is only one. A
 *           selection that finds nothing is an #error naming the macros to
 *           define, except in the host pass of nvcc / hipcc (where device
 *           code's macros are not needed) or with TUNEFARM_BEST_OPTIONAL;
 *           TUNEFARM_BEST_<KERNEL>_FOUND says 1 or 0.
 *   json    every group with its class, configuration by name, the flags,
 *           time, spread, metrics, run, default time and speedup.
 *   make    one variable of flags per problem and class, and
 *           <KERNEL>_BEST_FLAGS picking one by $(TUNEFARM_PROBLEM) and
 *           $(TUNEFARM_DEVICE).
 *
 * Class and problem names become identifiers by keeping letters and digits
 * (upper-cased) and joining the rest with one '_'; two that meet get _2, _3.
 * Text from the archive that lands in C comments has its comment ends and
 * control characters defused. */
#include "best.h"
#include "../coordinator/journal.h"
#include "../schema/version.h"

#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "../coordinator/report.h"
#include "../schema/kernel.h"
#include "outfile.h"


#define BEST_MAX_DEFINES 512

const char tf_best_usage[] =
    "usage: tunefarm best ARCHIVE [--kernel K] [--problem P] [--run N]\n"
    "                     [--format header|json|make] [-o FILE]\n"
    "\n"
    "Write a kernel's best configuration per problem and device class, as\n"
    "`tunefarm query` chooses it (the lowest median time among ok results; the\n"
    "strict re-measurements where a search had two phases; results still in\n"
    "ARCHIVE.journal count too), in a form a build uses. The macros are exactly\n"
    "the -D flags tunefarm compiled the configuration with (an enum parameter:\n"
    "NAME=index and NAME_value=1; the problem's sizes a kernel's `defines:`\n"
    "compiles in, NAME=value).\n"
    "\n"
    "formats:\n"
    "  header (default)  a C header of #defines. Pick the device class with\n"
    "                    -DTUNEFARM_DEVICE_<CLASS>, or let the compiler's target\n"
    "                    pick: __CUDA_ARCH__ (sm_XX), __gfxXXX__ (AMD), or\n"
    "                    __x86_64__ / __aarch64__ for host classes; pick the\n"
    "                    problem with -DTUNEFARM_PROBLEM_<PROBLEM> (not needed\n"
    "                    when there is one). The header lists the names. A\n"
    "                    selection that finds nothing is an #error, except in\n"
    "                    nvcc's / hipcc's host pass or with\n"
    "                    -DTUNEFARM_BEST_OPTIONAL; TUNEFARM_BEST_<KERNEL>_FOUND\n"
    "                    is 1 when values were defined\n"
    "  json              every problem and class: configuration by name, flags,\n"
    "                    time, spread, metrics, run, default time and speedup\n"
    "  make              a Makefile fragment: <KERNEL>_BEST_<PROBLEM>_<CLASS> :=\n"
    "                    the flags, and <KERNEL>_BEST_FLAGS choosing one by\n"
    "                    $(TUNEFARM_PROBLEM) and $(TUNEFARM_DEVICE)\n"
    "\n"
    "options:\n"
    "  -k, --kernel K    the kernel (may be left out if the archive has one)\n"
    "  -p, --problem P   only problem P (default: every problem)\n"
    "  -r, --run N       only run N's results (default: every run)\n"
    "  -f, --format F    header, json or make (default: header)\n"
    "  -o, --output FILE write FILE (whole or not at all) instead of stdout\n"
    "  -h, --help        this text\n"
    "\n"
    "exit codes: 0 written; 1 the output could not be written; 2 bad arguments,\n"
    "unreadable archive, unknown kernel or problem, no results for the\n"
    "selection; 3 no configuration of the selection ran ok (nothing written).\n";

struct best_class {
    char key[256];                 /* backend/arch/name */
    const struct tf_device *dev;   /* a device of the class */
    char id[160];                  /* TUNEFARM_DEVICE_<id> */
    char cond[200];                /* the compiler-target test that picks it, or "" */
    int gpu;                       /* cond tests a GPU device pass */
};

struct best_group {
    int problem;
    int cls;
    struct tf_report_pick pick;
};

struct best {
    const struct tf_archive *a;
    const struct tf_archive_kernel *ak;
    const char *path;
    int run;
    char kid[128];                 /* the kernel as an identifier */
    int nclasses;
    struct best_class *classes;    /* at most one per device of the archive */
    int nproblems;
    int *problems;                 /* problem indices with rows */
    char (*pids)[96];              /* TUNEFARM_PROBLEM_<pid> */
    int ngroups;
    struct best_group *groups;
};

/* `in` as an identifier part: letters and digits upper-cased, every other run
 * of characters one '_', none at either end ("X" if nothing is left). */
static void make_ident(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    bool sep = false;
    for (const unsigned char *p = (const unsigned char *)in; *p && n + 2 < cap; p++) {
        if (isalnum(*p) && *p < 128) {
            if (sep && n > 0)
                out[n++] = '_';
            out[n++] = (char)toupper(*p);
            sep = false;
        } else {
            sep = true;
        }
    }
    if (n == 0)
        out[n++] = 'X';
    out[n] = '\0';
}

/* Make the n ids at ids, ids + stride, ... (each of capacity cap) distinct:
 * the second of a name gets _2, the third _3. */
static void distinct_idents(char *ids, size_t stride, size_t cap, int n)
{
    for (int i = 1; i < n; i++) {
        char *id = ids + (size_t)i * stride;
        char base[200];
        tf_strlcpy(base, id, sizeof base);
        for (int suffix = 2;; suffix++) {
            bool clash = false;
            for (int j = 0; j < i && !clash; j++)
                clash = strcmp(ids + (size_t)j * stride, id) == 0;
            if (!clash)
                break;
            snprintf(id, cap, "%.*s_%d", (int)cap - 12, base, suffix);
        }
    }
}

/* `in` made safe inside a C comment: no comment end, no line break or other
 * control character (a user's kernel or device name is text). */
static void comment_safe(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < cap; p++) {
        char c = *p;
        if ((unsigned char)c < 32 || c == 127)
            c = ' ';
        if (c == '/' && n > 0 && out[n - 1] == '*')
            c = '|';
        if (c == '*' && p[1] == '/')
            c = '+';
        out[n++] = c;
    }
    out[n] = '\0';
}

static bool is_ident(const char *s, size_t len)
{
    if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (size_t i = 1; i < len; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return false;
    return true;
}

/* `flag` is "-DNAME=INTEGER" with NAME a C identifier (*name_len its length,
 * *body the integer): the shape every flag of tf_param_defines has when the
 * parameter's values are sane. An enum value is text that an imported file
 * chose (-DP_<value>=1): one holding '=', a line break or a shell character
 * would put lines of its own into the header, or commands into a make
 * recipe, so such a flag is left out of both, never escaped. */
static bool define_ok(const char *flag, size_t *name_len, const char **body)
{
    const char *eq = strrchr(flag, '=');
    if (strncmp(flag, "-D", 2) != 0 || eq == NULL || !is_ident(flag + 2, (size_t)(eq - flag - 2)))
        return false;
    const char *v = eq + 1 + (eq[1] == '-');
    if (*v == '\0' || strspn(v, "0123456789") != strlen(v))
        return false;
    *name_len = (size_t)(eq - flag - 2);
    *body = eq + 1;
    return true;
}

/* The preprocessor test that picks class `d` by the compiler's target, into
 * `out` ("" if none does); *gpu = 1 for a GPU device pass. */
static void arch_condition(const struct tf_device *d, char *out, size_t cap, int *gpu)
{
    const char *arch = d->arch;
    out[0] = '\0';
    *gpu = 0;
    if (strncmp(arch, "sm_", 3) == 0 && isdigit((unsigned char)arch[3])) {
        long v = strtol(arch + 3, NULL, 10); /* sm_90a is __CUDA_ARCH__ 900 too */
        if (v > 0 && v < 10000) {
            snprintf(out, cap, "defined(__CUDA_ARCH__) && __CUDA_ARCH__ == %ld", v * 10);
            *gpu = 1;
        }
    } else if (strncmp(arch, "gfx", 3) == 0 && isalnum((unsigned char)arch[3])) {
        size_t n = strcspn(arch, ":"); /* gfx90a:sramecc+:xnack- is __gfx90a__ */
        if (is_ident(arch, n)) {
            snprintf(out, cap, "defined(__%.*s__)", (int)n, arch);
            *gpu = 1;
        }
    } else if (strcmp(d->backend, "host") == 0 ||
               (strcmp(d->backend, "replay") == 0 && strncmp(arch, "x86_64", 6) == 0) ||
               (strcmp(d->backend, "replay") == 0 && strncmp(arch, "aarch64", 7) == 0)) {
        const char *m = strncmp(arch, "x86_64", 6) == 0    ? "__x86_64__"
                        : strncmp(arch, "aarch64", 7) == 0 ? "__aarch64__"
                                                           : NULL;
        if (m)
            snprintf(out, cap,
                     "defined(%s) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)",
                     m);
    }
}

static void best_free(struct best *b)
{
    free(b->problems);
    free(b->pids);
    free(b->groups);
    free(b->classes);
}

/* Collect the groups of `ak` (problem `problem` or all, run `run` or all). */
static void best_collect(struct best *b, const struct tf_archive *a, const char *path,
                         const struct tf_archive_kernel *ak, int problem, int run)
{
    memset(b, 0, sizeof *b);
    b->a = a;
    b->ak = ak;
    b->path = path;
    b->run = run;
    make_ident(ak->name, b->kid, sizeof b->kid);
    b->problems = tf_xcalloc((size_t)ak->nproblems + 1, sizeof *b->problems);
    b->pids = tf_xcalloc((size_t)ak->nproblems + 1, sizeof *b->pids);
    b->classes = tf_xcalloc((size_t)a->ndevices + 1, sizeof *b->classes);
    b->groups = tf_xcalloc((size_t)ak->nproblems * ((size_t)a->ndevices + 1) + 1,
                           sizeof *b->groups);
    for (int p = 0; p < ak->nproblems; p++) {
        if (problem >= 0 && p != problem)
            continue;
        int n;
        char (*keys)[256] = tf_report_classes_all(a, ak, (uint32_t)p, run, &n);
        if (n == 0) {
            free(keys);
            continue;
        }
        make_ident(ak->problems[p].name, b->pids[b->nproblems], sizeof b->pids[0]);
        b->problems[b->nproblems++] = p;
        for (int i = 0; i < n; i++) {
            int c = 0;
            while (c < b->nclasses && strcmp(b->classes[c].key, keys[i]) != 0)
                c++;
            if (c == b->nclasses) {
                tf_strlcpy(b->classes[c].key, keys[i], sizeof b->classes[c].key);
                b->nclasses++;
            }
            struct best_group *g = &b->groups[b->ngroups++];
            g->problem = p;
            g->cls = c;
            tf_report_pick(a, ak, (uint32_t)p, run, keys[i], &g->pick);
            if (b->classes[c].dev == NULL)
                b->classes[c].dev = g->pick.device;
        }
        free(keys);
    }
    for (int c = 0; c < b->nclasses; c++) {
        struct best_class *cl = &b->classes[c];
        make_ident(cl->key, cl->id, sizeof cl->id);
        if (cl->dev)
            arch_condition(cl->dev, cl->cond, sizeof cl->cond, &cl->gpu);
        for (int e = 0; e < c && cl->cond[0]; e++) /* the first class of a target takes it */
            if (strcmp(b->classes[e].cond, cl->cond) == 0)
                cl->cond[0] = '\0';
    }
    distinct_idents(b->classes[0].id, sizeof(struct best_class), sizeof b->classes[0].id,
                    b->nclasses);
    distinct_idents(b->pids[0], sizeof b->pids[0], sizeof b->pids[0], b->nproblems);
}

/* The flags of the configuration of `row` (tf_param_defines), then the
 * sizes of its problem the kernel compiles in (its `defines:`, as a worker
 * adds them: tf_kernel_size_defines); the caller frees them with free_defines. */
static int defines_of(const struct tf_archive_kernel *ak, const struct tf_archive_row *row,
                      char **out)
{
    int n = tf_param_defines(ak->params, ak->nparams, row->r.config, out, BEST_MAX_DEFINES);
    for (int i = 0; i < ak->ndefine_sizes && n < BEST_MAX_DEFINES; i++)
        for (int z = 0; z < ak->nsizes; z++)
            if (strcmp(ak->define_sizes[i], ak->size_names[z]) == 0 &&
                row->r.problem < (uint32_t)ak->nproblems)
                out[n++] = tf_xasprintf("-D%s=%" PRId64, ak->size_names[z],
                                        ak->problems[row->r.problem].sizes[z]);
    return n;
}

static void free_defines(char **d, int n)
{
    for (int i = 0; i < n; i++)
        free(d[i]);
}

static void iso_time(double t, char *out, size_t cap)
{
    time_t s = tf_archive_time_ok(t) ? (time_t)t : 0;
    struct tm tm;
    if (s > 0 && gmtime_r(&s, &tm))
        strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
    else
        tf_strlcpy(out, "-", cap);
}

/* "M=64 N=64 K=64" for problem `p`. */
static void problem_sizes(const struct tf_archive_kernel *ak, int p, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < ak->nsizes && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s=%" PRId64, i ? " " : "", ak->size_names[i],
                              ak->problems[p].sizes[i]);
}

static const char *group_note(const struct best_group *g)
{
    return g->pick.best ? "" : "nothing ran ok";
}

/* ---- header ---- */

static void write_header(const struct best *b, FILE *out)
{
    const struct tf_archive_kernel *ak = b->ak;
    char text[600], name[300], created[32], which[48] = "";
    iso_time((double)time(NULL), created, sizeof created);
    comment_safe(ak->name, name, sizeof name);
    comment_safe(b->path, text, sizeof text);
    if (b->run >= 0)
        snprintf(which, sizeof which, " (run %d only)", b->run);
    fprintf(out,
            "/* The best configurations of kernel '%s' measured in %s%s,\n"
            " * written by `tunefarm best` (tunefarm %s) at %s. Regenerate, do not edit.\n"
            " *\n"
            " * Per problem and device class, the configuration `tunefarm query` reports\n"
            " * (lowest median time among ok results; strict re-measurements decide where\n"
            " * a search had two phases). Its macros are the -D flags tunefarm compiled it\n"
            " * with.\n"
            " *\n"
            " * Device class: define one of these, or let the compiler's target choose:\n",
            name, text, which, tf_version, created);
    for (int c = 0; c < b->nclasses; c++) {
        comment_safe(b->classes[c].key, text, sizeof text);
        fprintf(out, " *   TUNEFARM_DEVICE_%s\n *       %s%s%s%s\n", b->classes[c].id, text,
                b->classes[c].cond[0] ? " (or " : "", b->classes[c].cond,
                b->classes[c].cond[0] ? ")" : "");
    }
    fprintf(out, " * Problem: %s\n",
            b->nproblems == 1 ? "only one, chosen without a macro (or define it):"
                              : "define one of these:");
    for (int i = 0; i < b->nproblems; i++) {
        char sizes[300], pname[200];
        problem_sizes(ak, b->problems[i], sizes, sizeof sizes);
        comment_safe(sizes, text, sizeof text);
        comment_safe(ak->problems[b->problems[i]].name, pname, sizeof pname);
        fprintf(out, " *   TUNEFARM_PROBLEM_%s   %s: %s\n", b->pids[i], pname, text);
    }
    fprintf(out,
            " * e.g.  cc -DTUNEFARM_DEVICE_%s%s%s -include this.h ...\n"
            " * Nothing selected: #error, except in nvcc's / hipcc's host pass or with\n"
            " * TUNEFARM_BEST_OPTIONAL defined; TUNEFARM_BEST_%s_FOUND is then 0. */\n",
            b->nclasses ? b->classes[0].id : "X", b->nproblems > 1 ? " -DTUNEFARM_PROBLEM_" : "",
            b->nproblems > 1 ? b->pids[0] : "", b->kid);
    fprintf(out, "#ifndef TUNEFARM_BEST_%s_H\n#define TUNEFARM_BEST_%s_H\n\n", b->kid, b->kid);

    /* the class: named first, then by target (GPU device passes before the host) */
    const char *kw = "#if";
    for (int c = 0; c < b->nclasses; c++) {
        fprintf(out, "%s defined(TUNEFARM_DEVICE_%s)\n#define TUNEFARM_BEST_%s_CLASS %d\n", kw,
                b->classes[c].id, b->kid, c + 1);
        kw = "#elif";
    }
    for (int pass = 1; pass >= 0; pass--)
        for (int c = 0; c < b->nclasses; c++) {
            if (!b->classes[c].cond[0] || b->classes[c].gpu != pass)
                continue;
            fprintf(out, "%s %s\n#define TUNEFARM_BEST_%s_CLASS %d\n", kw, b->classes[c].cond,
                    b->kid, c + 1);
        }
    if (b->nclasses)
        fprintf(out, "#endif\n\n");

    /* the problem */
    kw = "#if";
    for (int i = 0; i < b->nproblems; i++) {
        fprintf(out, "%s defined(TUNEFARM_PROBLEM_%s)\n#define TUNEFARM_BEST_%s_PROBLEM %d\n", kw,
                b->pids[i], b->kid, i + 1);
        kw = "#elif";
    }
    if (b->nproblems == 1)
        fprintf(out, "#else\n#define TUNEFARM_BEST_%s_PROBLEM 1\n", b->kid);
    if (b->nproblems)
        fprintf(out, "#endif\n\n");

    /* the values */
    fprintf(out,
            "#if !defined(TUNEFARM_BEST_%s_CLASS) || !defined(TUNEFARM_BEST_%s_PROBLEM)\n"
            "#define TUNEFARM_BEST_%s_FOUND 0\n",
            b->kid, b->kid, b->kid);
    for (int gi = 0; gi < b->ngroups; gi++) {
        const struct best_group *g = &b->groups[gi];
        if (g->pick.best == NULL)
            continue;
        int pi = 0;
        while (b->problems[pi] != g->problem)
            pi++;
        const struct tf_archive_row *row = g->pick.best;
        char t[32], pname[200], when[32] = "-";
        tf_format_seconds(row->r.time_median, t, sizeof t);
        comment_safe(ak->problems[g->problem].name, pname, sizeof pname);
        comment_safe(b->classes[g->cls].key, text, sizeof text);
        if (row->run < (uint32_t)b->a->nruns)
            iso_time(b->a->runs[row->run].start, when, sizeof when);
        fprintf(out,
                "#elif TUNEFARM_BEST_%s_PROBLEM == %d && TUNEFARM_BEST_%s_CLASS == %d\n"
                "/* %s on %s: %s (run %u of %s%s)",
                b->kid, pi + 1, b->kid, g->cls + 1, pname, text, t, row->run, when,
                row->r.phase == 2 ? ", strict re-measurement" : "");
        if (isfinite(g->pick.default_time))
            fprintf(out, ", %.2fx the default", g->pick.default_time / row->r.time_median);
        fprintf(out, " */\n#define TUNEFARM_BEST_%s_FOUND 1\n", b->kid);
        char *defs[BEST_MAX_DEFINES];
        int n = defines_of(ak, row, defs);
        for (int i = 0; i < n; i++) {
            size_t len;
            const char *body;
            if (define_ok(defs[i], &len, &body)) {
                fprintf(out, "#define %.*s %s\n", (int)len, defs[i] + 2, body);
            } else {
                comment_safe(defs[i], text, sizeof text);
                fprintf(out, "/* left out, not -DNAME=INTEGER with a C macro name: %s */\n", text);
                fprintf(stderr, "tunefarm best: warning: %s is not -DNAME=INTEGER with a C macro "
                                "name (an enum value that is not one); the header leaves it out\n",
                        text);
            }
        }
        free_defines(defs, n);
    }
    fprintf(out, "#else\n#define TUNEFARM_BEST_%s_FOUND 0\n#endif\n\n", b->kid);

    /* nothing found: say what to define */
    fprintf(out,
            "#if !TUNEFARM_BEST_%s_FOUND && !defined(TUNEFARM_BEST_OPTIONAL) && \\\n"
            "    !((defined(__CUDACC__) && !defined(__CUDA_ARCH__)) || \\\n"
            "      (defined(__HIPCC__) && !defined(__HIP_DEVICE_COMPILE__)))\n"
            "#if !defined(TUNEFARM_BEST_%s_CLASS)\n"
            "#error \"tunefarm best (%s): no device class selected: define one of the "
            "TUNEFARM_DEVICE_ macros listed at the top of this header\"\n"
            "#elif !defined(TUNEFARM_BEST_%s_PROBLEM)\n"
            "#error \"tunefarm best (%s): no problem selected: define one of the "
            "TUNEFARM_PROBLEM_ macros listed at the top of this header\"\n"
            "#else\n"
            "#error \"tunefarm best (%s): no configuration ran ok for this problem on this "
            "device class\"\n"
            "#endif\n"
            "#endif\n\n#endif\n",
            b->kid, b->kid, b->kid, b->kid, b->kid, b->kid);
}

/* ---- JSON ---- */

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *param_value(const struct tf_param *p, int digit)
{
    return p->kind == TF_PARAM_INT ? json_integer((json_int_t)p->ints[digit])
                                   : json_string(p->strings[digit]);
}

static json_t *group_json(const struct best *b, const struct best_group *g)
{
    const struct tf_archive_kernel *ak = b->ak;
    const struct best_class *cl = &b->classes[g->cls];
    json_t *o = json_object();
    json_object_set_new(o, "problem", json_string(ak->problems[g->problem].name));
    json_t *sizes = json_object();
    for (int i = 0; i < ak->nsizes; i++)
        json_object_set_new(sizes, ak->size_names[i],
                            json_integer((json_int_t)ak->problems[g->problem].sizes[i]));
    json_object_set_new(o, "sizes", sizes);
    json_object_set_new(o, "device_class", json_string(cl->key));
    if (cl->dev) {
        json_object_set_new(o, "backend", json_string(cl->dev->backend));
        json_object_set_new(o, "arch", json_string(cl->dev->arch));
        json_object_set_new(o, "device", json_string(cl->dev->name));
        json_object_set_new(o, "vendor", json_string(cl->dev->vendor));
    }
    char macro[200];
    snprintf(macro, sizeof macro, "TUNEFARM_DEVICE_%s", cl->id);
    json_object_set_new(o, "device_macro", json_string(macro));
    const struct tf_archive_row *row = g->pick.best;
    json_object_set_new(o, "found", json_boolean(row != NULL));
    if (row == NULL)
        return o;
    json_object_set_new(o, "config_index", row->r.config <= (uint64_t)INT64_MAX
                                               ? json_integer((json_int_t)row->r.config)
                                               : json_null());
    json_t *cfg = json_object();
    uint64_t rest = row->r.config;
    int digits[ak->nparams > 0 ? ak->nparams : 1];
    for (int i = ak->nparams - 1; i >= 0; i--) {
        digits[i] = (int)(rest % (uint64_t)ak->params[i].count);
        rest /= (uint64_t)ak->params[i].count;
    }
    for (int i = 0; i < ak->nparams; i++)
        json_object_set_new(cfg, ak->params[i].name, param_value(&ak->params[i], digits[i]));
    json_object_set_new(o, "configuration", cfg);
    json_t *flags = json_array();
    char *defs[BEST_MAX_DEFINES];
    int n = defines_of(ak, row, defs);
    for (int i = 0; i < n; i++)
        json_array_append_new(flags, json_string(defs[i]));
    free_defines(defs, n);
    json_object_set_new(o, "defines", flags);
    json_object_set_new(o, "time_s", jnum(row->r.time_median));
    json_object_set_new(o, "time_min_s", jnum(row->r.time_min));
    json_object_set_new(o, "time_rsd", jnum(row->r.time_rsd));
    json_object_set_new(o, "samples", json_integer(row->r.samples));
    json_object_set_new(o, "phase", json_integer(row->r.phase));
    json_t *metrics = json_object();
    for (int i = 0; i < ak->nmetrics && i < TF_MAX_METRICS; i++)
        json_object_set_new(metrics, ak->metric_names[i], jnum(row->r.metrics[i]));
    json_object_set_new(o, "metrics", metrics);
    json_object_set_new(o, "energy_j", jnum(row->r.energy_j));
    json_object_set_new(o, "run", json_integer(row->run));
    if (row->run < (uint32_t)b->a->nruns) {
        char when[32];
        iso_time(b->a->runs[row->run].start, when, sizeof when);
        json_object_set_new(o, "run_start", json_string(when));
        json_object_set_new(o, "job", json_string(b->a->runs[row->run].job_name));
    }
    json_object_set_new(o, "default_time_s", jnum(g->pick.default_time));
    json_object_set_new(o, "speedup_over_default",
                        jnum(g->pick.default_time / row->r.time_median));
    return o;
}

static int write_json(const struct best *b, FILE *out)
{
    const struct tf_archive_kernel *ak = b->ak;
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string("tunefarm-best"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "archive", json_string(b->path));
    json_object_set_new(root, "kernel", json_string(ak->name));
    json_object_set_new(root, "run", b->run >= 0 ? json_integer(b->run) : json_null());
    json_t *params = json_array();
    for (int i = 0; i < ak->nparams; i++) {
        json_t *p = json_object();
        json_object_set_new(p, "name", json_string(ak->params[i].name));
        json_t *vals = json_array();
        for (int v = 0; v < ak->params[i].count; v++)
            json_array_append_new(vals, param_value(&ak->params[i], v));
        json_object_set_new(p, "values", vals);
        json_array_append_new(params, p);
    }
    json_object_set_new(root, "parameters", params);
    json_t *best = json_array();
    for (int gi = 0; gi < b->ngroups; gi++)
        json_array_append_new(best, group_json(b, &b->groups[gi]));
    json_object_set_new(root, "best", best);
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(root);
    return rc;
}

/* ---- make ---- */

static void write_make(const struct best *b, FILE *out)
{
    const struct tf_archive_kernel *ak = b->ak;
    char text[600], name[300];
    comment_safe(ak->name, name, sizeof name);
    for (char *p = name; *p; p++)
        if (*p == '#')
            *p = ' ';
    comment_safe(b->path, text, sizeof text);
    for (char *p = text; *p; p++)
        if (*p == '#')
            *p = ' ';
    fprintf(out,
            "# The best configurations of kernel '%s' measured in %s, as the -D\n"
            "# flags tunefarm compiled them with (tunefarm best --format make, tunefarm %s).\n"
            "# Choose with TUNEFARM_PROBLEM and TUNEFARM_DEVICE, e.g.\n"
            "#   include this.mk\n"
            "#   CFLAGS += $(%s_BEST_FLAGS)\n"
            "#   make TUNEFARM_PROBLEM=%s TUNEFARM_DEVICE=%s\n",
            name, text, tf_version, b->kid, b->nproblems ? b->pids[0] : "P",
            b->nclasses ? b->classes[0].id : "CLASS");
    for (int gi = 0; gi < b->ngroups; gi++) {
        const struct best_group *g = &b->groups[gi];
        int pi = 0;
        while (b->problems[pi] != g->problem)
            pi++;
        char key[300];
        comment_safe(b->classes[g->cls].key, key, sizeof key);
        for (char *p = key; *p; p++)
            if (*p == '#')
                *p = ' ';
        fprintf(out, "\n# problem %s on %s", b->pids[pi], key);
        if (g->pick.best == NULL) {
            fprintf(out, ": %s\n", group_note(g));
            continue;
        }
        char t[32];
        tf_format_seconds(g->pick.best->r.time_median, t, sizeof t);
        fprintf(out, ": %s\n%s_BEST_%s_%s :=", t, b->kid, b->pids[pi], b->classes[g->cls].id);
        char *defs[BEST_MAX_DEFINES];
        int n = defines_of(ak, g->pick.best, defs);
        for (int i = 0; i < n; i++) {
            size_t len;
            const char *body;
            if (define_ok(defs[i], &len, &body)) /* letters, digits, _ - =: nothing make or sh reads */
                fprintf(out, " %s", defs[i]);
            else {
                comment_safe(defs[i], text, sizeof text); /* no control characters on a terminal */
                fprintf(stderr, "tunefarm best: warning: %s is not -DNAME=INTEGER with a C macro "
                                "name (an enum value that is not one); the make fragment leaves it "
                                "out\n", text);
            }
        }
        free_defines(defs, n);
        fputc('\n', out);
    }
    fputc('\n', out);
    if (b->nproblems == 1)
        fprintf(out, "TUNEFARM_PROBLEM ?= %s\n", b->pids[0]);
    if (b->nclasses == 1)
        fprintf(out, "TUNEFARM_DEVICE ?= %s\n", b->classes[0].id);
    fprintf(out, "%s_BEST_FLAGS = $(%s_BEST_$(TUNEFARM_PROBLEM)_$(TUNEFARM_DEVICE))\n", b->kid,
            b->kid);
}

int tf_best_write(const struct tf_archive *a, const char *archive_path,
                  const struct tf_archive_kernel *ak, int problem, int run,
                  enum tf_best_format format, FILE *out)
{
    struct best b;
    best_collect(&b, a, archive_path, ak, problem, run);
    int found = 0;
    for (int gi = 0; gi < b.ngroups; gi++) {
        if (b.groups[gi].pick.best) {
            found++;
            continue;
        }
        fprintf(stderr, "tunefarm best: %s / %s on %s: no configuration ran ok\n", ak->name,
                ak->problems[b.groups[gi].problem].name, b.classes[b.groups[gi].cls].key);
    }
    if (format == TF_BEST_HEADER)
        write_header(&b, out);
    else if (format == TF_BEST_JSON)
        write_json(&b, out);
    else
        write_make(&b, out);
    best_free(&b);
    return found;
}

int tf_best_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"kernel", required_argument, NULL, 'k'}, {"problem", required_argument, NULL, 'p'},
        {"run", required_argument, NULL, 'r'},    {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *kernel = NULL, *problem = NULL, *output = NULL;
    enum tf_best_format format = TF_BEST_HEADER;
    int run = -1, c;
    optind = 2;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":k:p:r:f:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'k':
            kernel = optarg;
            break;
        case 'p':
            problem = optarg;
            break;
        case 'r': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end || v < 0 || v > INT_MAX) {
                fprintf(stderr, "tunefarm best: --run wants a run number (0, 1, ...), got '%s'\n",
                        optarg);
                return 2;
            }
            run = (int)v;
            break;
        }
        case 'f':
            if (strcmp(optarg, "header") == 0)
                format = TF_BEST_HEADER;
            else if (strcmp(optarg, "json") == 0)
                format = TF_BEST_JSON;
            else if (strcmp(optarg, "make") == 0)
                format = TF_BEST_MAKE;
            else {
                fprintf(stderr, "tunefarm best: --format is header, json or make, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            fputs(tf_best_usage, stdout);
            return 0;
        case ':':
            fprintf(stderr, "tunefarm best: %s needs a value\n\n%s", argv[optind - 1],
                    tf_best_usage);
            return 2;
        default:
            fprintf(stderr, "tunefarm best: unknown option '%s'\n\n%s", argv[optind - 1],
                    tf_best_usage);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "tunefarm best: expected one archive, got %d arguments\n\n%s",
                argc - optind, tf_best_usage);
        return 2;
    }
    const char *path = argv[optind];
    struct tf_error err = {0};
    /* With the results still in its journal, as query and export read it. */
    struct tf_journal_replay replay;
    struct tf_archive *a = tf_journal_read_archive(path, &replay, &err);
    if (a == NULL) {
        tf_error_print(&err, "tunefarm best", stderr);
        return 2;
    }
    int rc = 2;
    const struct tf_archive_kernel *ak = NULL;
    if (run >= a->nruns) {
        fprintf(stderr, "tunefarm best: %s has %d run(s) (0 to %d); there is no run %d\n", path,
                a->nruns, a->nruns - 1, run);
        goto done;
    }
    bool several = false; /* no --kernel, and more than one kernel has results */
    if (kernel) {
        ak = tf_archive_find_kernel(a, kernel);
    } else {
        for (int k = 0; k < a->nkernels; k++)
            if (a->kernels[k].nrows > 0) {
                if (ak) {
                    ak = NULL;
                    several = true;
                    break;
                }
                ak = &a->kernels[k];
            }
    }
    if (ak == NULL) {
        /* --kernel '' (an unset variable) is a kernel name that is not there. */
        if (kernel)
            fprintf(stderr, "tunefarm best: %s has no kernel '%s'; its kernels:", path, kernel);
        else
            fprintf(stderr, "tunefarm best: %s has %s; name one with --kernel:", path,
                    several ? "several kernels" : "no kernel with results");
        for (int k = 0; k < a->nkernels; k++)
            fprintf(stderr, " %s", a->kernels[k].name);
        fputc('\n', stderr);
        goto done;
    }
    int p = -1;
    if (problem) {
        for (int i = 0; i < ak->nproblems && p < 0; i++)
            if (strcmp(ak->problems[i].name, problem) == 0)
                p = i;
        if (p < 0) {
            fprintf(stderr, "tunefarm best: kernel '%s' has no problem '%s'; its problems:",
                    ak->name, problem);
            for (int i = 0; i < ak->nproblems; i++)
                fprintf(stderr, " %s", ak->problems[i].name);
            fputc('\n', stderr);
            goto done;
        }
    }
    /* Decide before writing anything: a build must not pick up an empty file. */
    {
        struct best b;
        best_collect(&b, a, path, ak, p, run);
        int groups = b.ngroups, found = 0;
        for (int gi = 0; gi < b.ngroups; gi++)
            found += b.groups[gi].pick.best != NULL;
        best_free(&b);
        if (groups == 0) {
            fprintf(stderr, "tunefarm best: %s has no results of kernel '%s'%s%s%s\n", path,
                    ak->name, problem ? " for problem " : "", problem ? problem : "",
                    run >= 0 ? " in that run" : "");
            goto done;
        }
        if (found == 0) {
            fprintf(stderr, "tunefarm best: no configuration of kernel '%s' ran ok%s; nothing "
                            "written\n", ak->name, run >= 0 ? " in that run" : "");
            rc = 3;
            goto done;
        }
    }
    struct tf_outfile o;
    if (tf_outfile_open(&o, output, &err) != 0) {
        tf_error_print(&err, "tunefarm best", stderr);
        rc = 1;
        goto done;
    }
    tf_best_write(a, path, ak, p, run, format, o.f);
    if (tf_outfile_commit(&o, &err) != 0) {
        tf_error_print(&err, "tunefarm best", stderr);
        rc = 1;
        goto done;
    }
    rc = 0;
done:
    tf_archive_destroy(a);
    return rc;
}
