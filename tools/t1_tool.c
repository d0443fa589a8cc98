/* t1_tool.c - `tunefarm import-t1 FILE.json`: a kernel folder from a T1 file.
 *
 * T1 is the autotuning community's input format (schema in
 * ../shared/datasets/t4-schema/input-schema.json); Kernel Tuner reads it
 * (kernel_tuner.interface.tune_kernel_T1) and adds fields of its own, which
 * this reads as Kernel Tuner does: TuningParameters[].Default, and in
 * KernelSpecification ProblemSize, GridDivX/Y/Z, Arguments[].Output and
 * Arguments[].MemType. The import is one pass over the JSON (jansson) that
 * fills a plan of the kernel file, then the files are written, then loaded
 * back through schema/job and schema/kernel, so what is written is known to
 * load:
 *
 *   parameters   Values (a Python list, range(), a comprehension; t1_expr
 *                evaluates them) become a list, or {range:}/{pow2:} where the
 *                file generated them; names the loader refuses (a device
 *                property, a results column, a define that breaks the GPU
 *                compilers' headers: tf_kernel_param_name_conflict) get a '_'
 *                appended, and the copied source a `#define OLD NEW` after its
 *                last system #include, so the source keeps the T1 names;
 *   restrictions Conditions[].Expression through t1_expr, the Python kept as
 *                a comment above each where the text changed;
 *   sizes        ProblemSize [X, Y, Z] becomes one problem with sizes
 *                problem_size_x/y/z (ProblemSize[i] in expressions);
 *   launch       with ProblemSize, Kernel Tuner's rule, what tune_kernel_T1
 *                launches: grid_d = ceil(ProblemSize[d] / prod(GridDivD))
 *                (default divisor block_size_x/y/z when a parameter), block
 *                from LocalSize; without it the schema's GlobalSize (blocks
 *                for GlobalSizeType CUDA or Vulkan, threads for OpenCL);
 *   arguments    Vector -> buffer (float -> float32 ...), Scalar -> scalar
 *                with FillValue; outputs are AccessType WriteOnly/ReadWrite or
 *                Output; Constant 0/1 -> init zero/ones, Random -> random;
 *   search       Search.Name and Budget[0] -> job.yaml (Kernel Tuner's
 *                strategy names mapped to tunefarm's).
 *
 * What has no tunefarm meaning (an untranslatable restriction, a missing
 * source, no reference, constant memory, a fill from a file, an unknown
 * field) is reported with its JSON path, and file:line:col where the text
 * is found once in the file; then nothing is written, or with --partial the
 * rest is (restrictions left out as comments, a skeleton source or
 * reference), and the command exits 0. Notes say where the meaning changes
 * quietly (random inputs uniform, not normal). */
#include "t1_tool.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../schema/bundle.h"
#include "../schema/job.h"
#include "../schema/kernel.h"
#include "../schema/yamldoc.h"
#include "../worker/cache.h"
#include "outfile.h"
#include "t1_expr.h"

enum {
    EXIT_OK = 0,
    EXIT_WRITE = 1,
    EXIT_USAGE = 2,
};

#define T1_MAX_FILE (16 << 20)  /* bytes of JSON, and of a source */
#define T1_MAX_INCLUDES 64      /* local headers copied with the source */

const char tf_t1_tool_usage[] =
    "usage: tunefarm import-t1 FILE.json [-o DIR] [--source FILE] [--reference FILE.c[:ENTRY]]\n"
    "                          [--name NAME] [--rtol R] [--atol A] [--partial] [--force] [-q]\n"
    "\n"
    "Write a kernel folder from a T1 file (the autotuning community's input format,\n"
    "as Kernel Tuner reads it): DIR/kernel.yaml (parameters, restrictions translated\n"
    "from Python, problem size, launch geometry, arguments), DIR/job.yaml (the\n"
    "file's search and budget), the kernel source and its local headers, and the\n"
    "reference. The files are loaded back before the command ends. schema/kernel.md\n"
    "(\"From Kernel Tuner\") says what maps to what.\n"
    "\n"
    "What cannot be translated (a restriction with no tunefarm equivalent, a\n"
    "source that is not there, no reference, constant memory, an unknown field) is\n"
    "reported with its JSON path and file:line:col, and nothing is written.\n"
    "\n"
    "options:\n"
    "  -o, --output DIR      the folder to write (default: ./NAME)\n"
    "  -s, --source FILE     the kernel source, where the file's KernelFile is not\n"
    "                        found (datasets often leave it out) or to replace it\n"
    "  -r, --reference F[:E] host C reference (void E(void **args), schema/kernel.md)\n"
    "                        checking every variant; E defaults to KERNELNAME_reference.\n"
    "                        A T1 file has none of its own\n"
    "      --rtol R, --atol A  the verification's tolerances (schema/kernel.md's\n"
    "                        verify; default 1e-5 and 1e-6, the defaults of Kernel\n"
    "                        Tuner's own check): a T1 file has none, and a reduction\n"
    "                        in float32 (a GEMM's K) needs more\n"
    "  -n, --name NAME       the kernel's name (default: General.BenchmarkName, else\n"
    "                        the file's name)\n"
    "  -p, --partial         write what translates anyway: untranslated restrictions\n"
    "                        are left out (kept as comments: the space is larger), a\n"
    "                        missing source or reference becomes a skeleton that\n"
    "                        compiles (a run then reports wrong_result)\n"
    "  -f, --force           overwrite DIR's files (without it, any file it would write\n"
    "                        that exists stops it; a symbolic link always does)\n"
    "  -q, --quiet           no notes\n"
    "  -h, --help            this text\n"
    "\n"
    "exit codes: 0 written; 1 a file could not be written; 2 bad arguments, not a\n"
    "T1 file, something not translated (without --partial), or the written files\n"
    "do not load (they are removed then).\n";

/* ---- text ---------------------------------------------------------------------- */

struct sbuf {
    char *s;
    size_t len, cap;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->s = tf_xrealloc(b->s, b->cap);
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static char *sb_take(struct sbuf *b)
{
    char *s = b->s ? b->s : tf_xstrdup("");
    *b = (struct sbuf){0};
    return s;
}

static bool is_number_text(const char *s)
{
    if (*s == '-')
        s++;
    if (!*s)
        return false;
    for (; *s; s++)
        if (!(*s >= '0' && *s <= '9'))
            return false;
    return true;
}

/* `s` as one operand of * or /: a name or a number as it is, else in parentheses. */
static char *grouped(const char *s)
{
    if (tf_ydoc_is_ident(s) || (is_number_text(s) && *s != '-'))
        return tf_xstrdup(s);
    return tf_xasprintf("(%s)", s);
}

/* A YAML scalar for an expression or a name: plain where YAML reads it back as
 * the same text (in a flow collection too when `flow`), else single-quoted. */
static char *yaml_scalar(const char *s, bool flow)
{
    bool plain = *s && !strchr("-?:,[]{}#&*!|>'\"%@`", *s) && !strstr(s, ": ") &&
                 !strstr(s, " #") && s[strlen(s) - 1] != ' ' && s[strlen(s) - 1] != ':' &&
                 !strchr(s, '\n');
    if (plain && flow && strpbrk(s, ",[]{}"))
        plain = false;
    static const char *const special[] = {"true", "false", "null", "True", "False", "Null",
                                          "TRUE", "FALSE", "NULL", "~", "yes", "no", NULL};
    for (int i = 0; plain && special[i]; i++)
        if (strcmp(s, special[i]) == 0)
            plain = false;
    if (plain)
        return tf_xstrdup(s);
    struct sbuf b = {0};
    sb_printf(&b, "'");
    for (const char *p = s; *p; p++)
        sb_printf(&b, *p == '\'' ? "''" : "%c", *p);
    sb_printf(&b, "'");
    return sb_take(&b);
}

/* ---- the plan ------------------------------------------------------------------- */

enum sev { UNTRANSLATED, NOTE };

struct issue {
    enum sev sev;
    char *path;    /* JSON path */
    int line, col; /* in the T1 file; 0: not found there */
    char *msg;
};

struct param {
    char *name;           /* as the T1 file names it */
    char *out;            /* its name in kernel.yaml */
    struct tf_t1_values v;
    bool has_default;
    int64_t def_int;
    char *def_str;
};

struct constraint {
    char *py;             /* the Python */
    char *tf;             /* the translation; NULL if none */
    char *why;            /* why not */
};

struct arg {
    char *name;
    bool scalar, output;
    const char *type;     /* int32, int64, float32, float64 */
    char *expr;           /* a buffer's size, a scalar's value */
    const char *init;     /* zero, ones, random; NULL: the default */
    char *comment;        /* what did not translate, for kernel.yaml */
};

struct imp {
    const char *prog;
    const char *path;     /* the T1 file */
    char *text;           /* its contents */
    json_t *root;
    bool partial, quiet;
    struct issue *issues;
    int nissues, nuntranslated;

    char *name, *entry;
    struct param *params;
    int nparams;
    struct tf_t1_param *xparams; /* the translator's view of them */
    char *size_names[3];
    int64_t size_values[3];
    int nsizes;
    struct constraint *cons;
    int ncons;
    char *grid[3], *block[3], *shared;
    struct arg *args;
    int nargs;
    char **options;
    int noptions;

    const char *source_opt;   /* --source */
    char *source_in;          /* the source file found; NULL: a skeleton */
    char *source_name;        /* its name in the folder */
    char *source_text;        /* what is written there (aliases, extern "C" added) */
    char **inc_names, **inc_texts; /* its local headers: path in the folder, contents */
    int nincs;
    const char *reference_opt;
    double rtol, atol; /* --rtol / --atol, negative: not given (the loader's defaults) */
    char *ref_in, *ref_entry, *ref_name;

    char *strategy;
    int64_t budget;
    double time_budget;
    char *device_name;
};

/* ---- issues --------------------------------------------------------------------- */

struct loc {
    int line, col;
};

static struct loc loc_at(const struct imp *I, const char *p)
{
    struct loc l = {1, 1};
    for (const char *q = I->text; q < p; q++) {
        if (*q == '\n') {
            l.line++;
            l.col = 1;
        } else {
            l.col++;
        }
    }
    return l;
}

/* Where the JSON string `value` is in the file, `offset` bytes into it, if
 * it appears there once (jansson keeps no positions). */
static struct loc locate_string(const struct imp *I, const char *value, int offset)
{
    json_t *j = json_string(value);
    char *enc = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    struct loc l = {0, 0};
    if (enc) {
        const char *first = strstr(I->text, enc);
        if (first && !strstr(first + 1, enc)) {
            /* the offset holds while the encoding has no escape before it */
            bool plain =
                (size_t)offset + 1 <= strlen(enc) && !memchr(enc + 1, '\\', (size_t)offset);
            l = loc_at(I, first + 1 + (plain ? offset : 0));
        }
        free(enc);
    }
    return l;
}

/* Where the key `key` ("key" then ':') is in the file, if it appears there once. */
static struct loc locate_key(const struct imp *I, const char *key)
{
    char *needle = tf_xasprintf("\"%s\"", key);
    const char *found = NULL;
    int count = 0;
    for (const char *p = strstr(I->text, needle); p; p = strstr(p + 1, needle)) {
        const char *q = p + strlen(needle);
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
            q++;
        if (*q == ':') {
            found = p;
            count++;
        }
    }
    free(needle);
    return count == 1 ? loc_at(I, found + 1) : (struct loc){0, 0};
}

static void add_issue(struct imp *I, enum sev sev, const char *path, struct loc l,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void add_issue(struct imp *I, enum sev sev, const char *path, struct loc l,
                      const char *fmt, ...)
{
    I->issues = tf_xrealloc(I->issues, (size_t)(I->nissues + 1) * sizeof *I->issues);
    struct issue *is = &I->issues[I->nissues++];
    va_list ap;
    va_start(ap, fmt);
    char buf[2048];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    *is = (struct issue){.sev = sev, .path = tf_xstrdup(path), .line = l.line, .col = l.col,
                         .msg = tf_xstrdup(buf)};
    if (sev == UNTRANSLATED)
        I->nuntranslated++;
}

static const struct loc NOWHERE = {0, 0};

static void print_issue(const struct imp *I, const struct issue *is, FILE *out)
{
    const char *kind = is->sev == NOTE ? "note" : I->partial ? "warning" : "error";
    if (is->line > 0)
        fprintf(out, "%s:%d:%d: %s: %s: %s\n", I->path, is->line, is->col, kind, is->path,
                is->msg);
    else
        fprintf(out, "%s: %s: %s: %s\n", I->path, kind, is->path, is->msg);
}

/* A file that is not a T1 file: no --partial helps. Prints; returns -1. */
static int malformed(const struct imp *I, const char *path, struct loc l, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int malformed(const struct imp *I, const char *path, struct loc l, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (l.line > 0)
        fprintf(stderr, "%s: %s:%d:%d: error: %s: %s\n", I->prog, I->path, l.line, l.col, path,
                buf);
    else
        fprintf(stderr, "%s: %s: error: %s: %s\n", I->prog, I->path, path, buf);
    return -1;
}

/* Unknown fields of `obj` (at `path`): not translated, since what they mean is unknown. */
static void check_keys(struct imp *I, const json_t *obj, const char *path,
                       const char *const *known)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value) {
        int k;
        for (k = 0; known[k]; k++)
            if (strcmp(key, known[k]) == 0)
                break;
        if (known[k])
            continue;
        const char *best = NULL;
        int bestd = 3;
        struct sbuf all = {0};
        for (k = 0; known[k]; k++) {
            int d = tf_ydoc_edit_distance(key, known[k], 2);
            if (d < bestd) {
                bestd = d;
                best = known[k];
            }
            sb_printf(&all, "%s%s", k ? ", " : "", known[k]);
        }
        char *p = tf_xasprintf("%s.%s", path, key);
        char hint[160] = "";
        if (best)
            snprintf(hint, sizeof hint, " (did you mean '%s'?)", best);
        add_issue(I, UNTRANSLATED, p, locate_key(I, key),
                  "unknown field '%s'%s: what it means is unknown here, so it is not "
                  "translated (known: %s)",
                  key, hint, all.s);
        free(all.s);
        free(p);
    }
}

/* A string member, or NULL (and -1 via *bad when present but not a string). */
static const char *get_string(const struct imp *I, const json_t *obj, const char *key,
                              const char *path, bool required, int *bad)
{
    const json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        if (required) {
            malformed(I, path, NOWHERE, "'%s' is missing (the T1 schema requires it)", key);
            *bad = -1;
        }
        return NULL;
    }
    if (!json_is_string(v)) {
        malformed(I, path, locate_key(I, key), "'%s' must be a string", key);
        *bad = -1;
        return NULL;
    }
    return json_string_value(v);
}

/* A translation failure of `text` (at JSON path `path`) as an issue. */
static void translate_issue(struct imp *I, const char *path, const char *text,
                            const struct tf_error *err)
{
    add_issue(I, UNTRANSLATED, path, locate_string(I, text, err->column - 1),
              "'%s': column %d: %s", text, err->column, err->message);
}

static struct tf_t1_scope scope_of(const struct imp *I)
{
    return (struct tf_t1_scope){.params = I->xparams,
                                .nparams = I->nparams,
                                .sizes = (const char *const *)I->size_names,
                                .nsizes = I->nsizes};
}

/* ---- parameters ------------------------------------------------------------------ */

static int read_default(struct imp *I, struct param *p, const json_t *d, const char *path)
{
    if (p->v.is_enum) {
        if (json_is_string(d))
            for (int i = 0; i < p->v.count; i++)
                if (strcmp(p->v.strings[i], json_string_value(d)) == 0) {
                    p->has_default = true;
                    p->def_str = p->v.strings[i];
                    return 0;
                }
    } else {
        double x = json_is_integer(d) ? (double)json_integer_value(d)
                   : json_is_real(d)  ? json_real_value(d)
                   : json_is_true(d)  ? 1
                   : json_is_false(d) ? 0
                                      : NAN;
        for (int i = 0; i < p->v.count; i++)
            /* an integer compared as one (2^53 + 1 is no double) */
            if (json_is_integer(d) ? p->v.ints[i] == (int64_t)json_integer_value(d)
                                   : (double)p->v.ints[i] == x) {
                p->has_default = true;
                p->def_int = p->v.ints[i];
                return 0;
            }
    }
    char *text = json_dumps(d, JSON_ENCODE_ANY);
    add_issue(I, NOTE, path, NOWHERE,
              "%s is not one of the parameter's values: the kernel gets no default "
              "configuration",
              text ? text : "the default");
    free(text);
    return -1;
}

/* A name the loader takes for a parameter of this kernel: `name`, or with '_'
 * appended until it is free (not refused, not another parameter's). */
static char *free_name(const struct imp *I, const char *name, int upto)
{
    char *n = tf_xstrdup(name);
    for (;;) {
        char *plain = yaml_scalar(n, false); /* null, yes, ~: a YAML key of their own */
        bool taken = tf_kernel_param_name_conflict(n, "cuda") != NULL || strcmp(plain, n) != 0;
        free(plain);
        for (int i = 0; i < upto && !taken; i++)
            taken = strcmp(I->params[i].out, n) == 0;
        for (int i = 0; i < I->nparams && !taken; i++)
            taken = i >= upto && strcmp(I->params[i].name, n) == 0 && strcmp(name, n) != 0;
        if (!taken)
            return n;
        char *m = tf_xasprintf("%s_", n);
        free(n);
        n = m;
    }
}

static int read_params(struct imp *I, const json_t *space)
{
    static const char *const param_keys[] = {"Name", "Type", "Values", "Default", NULL};
    const json_t *list = json_object_get(space, "TuningParameters");
    if (!json_is_array(list) || json_array_size(list) == 0)
        return malformed(I, "ConfigurationSpace.TuningParameters",
                         locate_key(I, "TuningParameters"),
                         "expected a non-empty array of parameters ({Name, Type, Values})");
    I->nparams = (int)json_array_size(list);
    I->params = tf_xcalloc((size_t)I->nparams, sizeof *I->params);
    I->xparams = tf_xcalloc((size_t)I->nparams, sizeof *I->xparams);
    for (int i = 0; i < I->nparams; i++) {
        const json_t *p = json_array_get(list, (size_t)i);
        char path[96];
        snprintf(path, sizeof path, "ConfigurationSpace.TuningParameters[%d]", i);
        if (!json_is_object(p))
            return malformed(I, path, NOWHERE, "expected an object {Name, Type, Values}");
        check_keys(I, p, path, param_keys);
        int bad = 0;
        const char *name = get_string(I, p, "Name", path, true, &bad);
        const char *type = get_string(I, p, "Type", path, false, &bad);
        if (bad)
            return -1;
        if (!tf_ydoc_is_ident(name))
            return malformed(I, path, locate_string(I, name, 0),
                             "parameter name '%s' is not an identifier: Kernel Tuner defines it "
                             "in the source, so it must be one",
                             name);
        if (strlen(name) > 255)
            return malformed(I, path, locate_string(I, name, 0),
                             "parameter name '%.40s...' is %zu bytes long: an archive keeps "
                             "names of at most 255 bytes", name, strlen(name));
        for (int j = 0; j < i; j++)
            if (strcmp(I->params[j].name, name) == 0)
                return malformed(I, path, NOWHERE, "parameter '%s' is defined twice", name);
        struct param *pa = &I->params[i];
        pa->name = tf_xstrdup(name);
        const json_t *values = json_object_get(p, "Values");
        char vpath[128];
        snprintf(vpath, sizeof vpath, "%s.Values", path);
        char *vtext = NULL;
        if (json_is_string(values))
            vtext = tf_xstrdup(json_string_value(values));
        else if (json_is_array(values)) /* a JSON list instead of Python's text: read alike */
            vtext = json_dumps(values, JSON_ENCODE_ANY);
        if (!vtext)
            return malformed(I, vpath, locate_key(I, "Values"),
                             "expected the values as a string (\"[1, 2, 4]\", \"range(1, 9)\")");
        struct tf_error err = {0};
        if (tf_t1_values(vtext, &pa->v, &err) != 0) {
            struct loc l =
                json_is_string(values) ? locate_string(I, vtext, err.column - 1) : NOWHERE;
            malformed(I, vpath, l, "'%s': column %d: %s (a parameter's values must translate: "
                      "the space depends on them)",
                      vtext, err.column, err.message);
            free(vtext);
            return -1;
        }
        if (pa->v.had_bools)
            add_issue(I, NOTE, vpath, NOWHERE,
                      "True and False became 1 and 0 (Kernel Tuner would define them as "
                      "True and False in the source)");
        if (pa->v.had_floats)
            add_issue(I, NOTE, vpath, NOWHERE, "whole floats became integers (16.0 is 16)");
        if (pa->v.is_enum) {
            for (int k = 0; k < pa->v.count; k++)
                if (!tf_ydoc_is_ident(pa->v.strings[k]) ||
                    strlen(pa->v.strings[k]) > TF_ENUM_VALUE_MAX) {
                    malformed(I, vpath, locate_string(I, vtext, 0),
                              "value '%s' is not an identifier of at most %d bytes: tunefarm's "
                              "string values are names",
                              pa->v.strings[k], TF_ENUM_VALUE_MAX);
                    free(vtext);
                    return -1;
                }
            add_issue(I, NOTE, path,
                      NOWHERE,
                      "string parameter '%s': tunefarm defines %s=<index> and %s_<value>=1, "
                      "where Kernel Tuner pasted the value itself into the source",
                      name, name, name);
        }
        if (type && !pa->v.is_enum && strcmp(type, "string") == 0)
            add_issue(I, NOTE, path, NOWHERE, "Type is string but the values are numbers");
        free(vtext);
        const json_t *d = json_object_get(p, "Default");
        if (d) {
            char dpath[128];
            snprintf(dpath, sizeof dpath, "%s.Default", path);
            read_default(I, pa, d, dpath);
        }
    }
    /* Renames, once every T1 name is known (a new name must not take another's). */
    for (int i = 0; i < I->nparams; i++) {
        struct param *pa = &I->params[i];
        pa->out = free_name(I, pa->name, i);
        const char *why = tf_kernel_param_name_conflict(pa->name, "cuda");
        if (strcmp(pa->out, pa->name) != 0) {
            char path[96];
            snprintf(path, sizeof path, "ConfigurationSpace.TuningParameters[%d].Name", i);
            add_issue(I, NOTE, path, locate_string(I, pa->name, 0),
                      "parameter '%s' is '%s' in kernel.yaml (-D%s=...; the source gets #define "
                      "%s %s): tunefarm refuses the name '%s': %s",
                      pa->name, pa->out, pa->out, pa->name, pa->out, pa->name,
                      why ? why : "a word YAML reads as no name (null, yes, ~)");
        }
        I->xparams[i] = (struct tf_t1_param){.name = pa->name,
                                             .rename = pa->out,
                                             .is_enum = pa->v.is_enum,
                                             .count = pa->v.count,
                                             .ints = pa->v.ints,
                                             .strings = (const char *const *)pa->v.strings};
    }
    return 0;
}

/* ---- problem size and restrictions ---------------------------------------------- */

static int read_problem(struct imp *I, const json_t *spec)
{
    const json_t *ps = json_object_get(spec, "ProblemSize");
    if (!ps)
        return 0;
    const char *path = "KernelSpecification.ProblemSize";
    int n = json_is_array(ps) ? (int)json_array_size(ps) : 1;
    if (n < 1 || n > 3)
        return malformed(I, path, locate_key(I, "ProblemSize"),
                         "expected 1 to 3 sizes, found %d", n);
    static const char *const base[] = {"problem_size_x", "problem_size_y", "problem_size_z"};
    for (int i = 0; i < n; i++) {
        const json_t *v = json_is_array(ps) ? json_array_get(ps, (size_t)i) : ps;
        double x = json_is_integer(v) ? (double)json_integer_value(v)
                   : json_is_real(v)  ? json_real_value(v)
                                      : NAN;
        if (!(x >= 0 && x == floor(x) && x < 9.2e18))
            return malformed(I, path, locate_key(I, "ProblemSize"),
                             "size %d must be a whole number >= 0 (a size that depends on the "
                             "parameters is not supported)",
                             i);
        I->size_values[i] = (int64_t)x;
        /* a size name must not be a parameter's */
        char *name = tf_xstrdup(base[i]);
        for (int p = 0; p < I->nparams; p++)
            if (strcmp(I->params[p].out, name) == 0) {
                char *m = tf_xasprintf("%s_", name);
                free(name);
                name = m;
                p = -1;
            }
        I->size_names[i] = name;
    }
    I->nsizes = n;
    return 0;
}

static int read_conditions(struct imp *I, const json_t *space)
{
    static const char *const cond_keys[] = {"Parameters", "Expression", NULL};
    const json_t *list = json_object_get(space, "Conditions");
    if (!list)
        return 0;
    if (!json_is_array(list))
        return malformed(I, "ConfigurationSpace.Conditions", locate_key(I, "Conditions"),
                         "expected an array of {Parameters, Expression}");
    I->ncons = (int)json_array_size(list);
    I->cons = tf_xcalloc((size_t)I->ncons + 1, sizeof *I->cons);
    struct tf_t1_scope scope = scope_of(I);
    for (int i = 0; i < I->ncons; i++) {
        const json_t *c = json_array_get(list, (size_t)i);
        char path[96], epath[128];
        snprintf(path, sizeof path, "ConfigurationSpace.Conditions[%d]", i);
        snprintf(epath, sizeof epath, "%s.Expression", path);
        if (!json_is_object(c))
            return malformed(I, path, NOWHERE, "expected an object {Parameters, Expression}");
        check_keys(I, c, path, cond_keys);
        int bad = 0;
        const json_t *e = json_object_get(c, "Expression");
        if (e && !json_is_string(e)) {
            I->cons[i].py = json_dumps(e, JSON_ENCODE_ANY);
            I->cons[i].why = tf_xstrdup("not a string: Kernel Tuner reads only Python text here");
            add_issue(I, UNTRANSLATED, epath, NOWHERE, "%s", I->cons[i].why);
            continue;
        }
        const char *py = get_string(I, c, "Expression", path, true, &bad);
        if (bad)
            return -1;
        I->cons[i].py = tf_xstrdup(py);
        struct tf_error err = {0};
        I->cons[i].tf = tf_t1_translate(py, &scope, &err);
        if (!I->cons[i].tf) {
            I->cons[i].why = tf_xasprintf("column %d: %s", err.column, err.message);
            translate_issue(I, epath, py, &err);
        }
        const json_t *names = json_object_get(c, "Parameters");
        for (size_t k = 0; json_is_array(names) && k < json_array_size(names); k++) {
            const char *nm = json_string_value(json_array_get(names, k));
            bool known = false;
            for (int p = 0; nm && p < I->nparams; p++)
                known |= strcmp(I->params[p].name, nm) == 0;
            if (!known)
                add_issue(I, NOTE, path, NOWHERE,
                          "Parameters names '%s', which is not a tuning parameter",
                          nm ? nm : "(not a string)");
        }
    }
    return 0;
}

/* ---- launch ---------------------------------------------------------------------- */

/* Translate the geometry expression `v` (a string or a number) at `path`;
 * NULL after an issue. */
static char *geometry(struct imp *I, const json_t *v, const char *path)
{
    if (json_is_integer(v))
        return tf_xasprintf("%" PRId64, (int64_t)json_integer_value(v));
    if (!json_is_string(v)) {
        add_issue(I, UNTRANSLATED, path, NOWHERE, "expected an expression as a string");
        return NULL;
    }
    struct tf_t1_scope scope = scope_of(I);
    scope.numeric = true;
    struct tf_error err = {0};
    char *t = tf_t1_translate(json_string_value(v), &scope, &err);
    if (!t)
        translate_issue(I, path, json_string_value(v), &err);
    return t;
}

/* A divisor of Kernel Tuner's grid rule: it int()s each one. */
static char *int_factor(char *t)
{
    bool maybe_float = strstr(t, " / ") || strstr(t, "sqrt(") || strstr(t, "log2(") ||
                       strstr(t, "float(") || strstr(t, "**") || strchr(t, '.');
    char *r = maybe_float ? tf_xasprintf("int(%s)", t) : grouped(t);
    free(t);
    return r;
}

static void read_launch(struct imp *I, const json_t *spec)
{
    static const char *const dims[] = {"X", "Y", "Z"};
    static const char *const kt_blocks[] = {"block_size_x", "block_size_y", "block_size_z"};
    static const char *const size_keys[] = {"X", "Y", "Z", NULL};
    const json_t *local = json_object_get(spec, "LocalSize");
    const json_t *global = json_object_get(spec, "GlobalSize");
    if (local && json_is_object(local))
        check_keys(I, local, "KernelSpecification.LocalSize", size_keys);
    if (global && json_is_object(global))
        check_keys(I, global, "KernelSpecification.GlobalSize", size_keys);
    /* the block */
    for (int d = 0; d < 3; d++) {
        char path[96];
        snprintf(path, sizeof path, "KernelSpecification.LocalSize.%s", dims[d]);
        const json_t *v = json_is_object(local) ? json_object_get(local, dims[d]) : NULL;
        const struct param *kt = NULL;
        for (int p = 0; p < I->nparams; p++)
            if (strcmp(I->params[p].name, kt_blocks[d]) == 0)
                kt = &I->params[p];
        char *ktb = kt ? tf_xstrdup(kt->out) : tf_xstrdup(d == 0 ? "256" : "1");
        if (v) {
            I->block[d] = geometry(I, v, path);
            if (I->block[d] && I->nsizes > 0 && strcmp(I->block[d], ktb) != 0)
                add_issue(I, NOTE, path, NOWHERE,
                          "the block is %s here; Kernel Tuner's tune_kernel_T1 ignores LocalSize "
                          "and launches %s (block_size_%c, else %s)",
                          I->block[d], ktb, "xyz"[d], d == 0 ? "256" : "1");
            free(ktb);
        } else {
            I->block[d] = ktb; /* Kernel Tuner's default */
        }
    }
    if (I->nsizes > 0) {
        /* Kernel Tuner's rule: ceil(problem size / product of GridDiv), what it runs */
        static const char *const divs[] = {"GridDivX", "GridDivY", "GridDivZ"};
        for (int d = 0; d < I->nsizes; d++) {
            const json_t *div = json_object_get(spec, divs[d]);
            struct sbuf prod = {0};
            bool ok = true;
            if (div && json_is_array(div) && json_array_size(div) > 0) {
                for (size_t k = 0; k < json_array_size(div); k++) {
                    char path[96];
                    snprintf(path, sizeof path, "KernelSpecification.%s[%zu]", divs[d], k);
                    char *t = geometry(I, json_array_get(div, k), path);
                    if (!t) {
                        ok = false;
                        continue;
                    }
                    t = int_factor(t);
                    sb_printf(&prod, "%s%s", prod.len ? " * " : "", t);
                    free(t);
                }
            } else if (div && !json_is_array(div)) {
                char path[96];
                snprintf(path, sizeof path, "KernelSpecification.%s", divs[d]);
                add_issue(I, UNTRANSLATED, path, locate_key(I, divs[d]),
                          "expected a list of expressions whose product divides the problem "
                          "size");
                ok = false;
            } else {
                for (int p = 0; p < I->nparams; p++)
                    if (strcmp(I->params[p].name, kt_blocks[d]) == 0)
                        sb_printf(&prod, "%s", I->params[p].out);
            }
            char *divisor = sb_take(&prod);
            if (!ok) {
                I->grid[d] = NULL;
            } else if (!*divisor || strcmp(divisor, "1") == 0) {
                I->grid[d] = tf_xstrdup(I->size_names[d]);
            } else {
                char *g = grouped(divisor);
                I->grid[d] = tf_xasprintf("ceil(%s / %s)", I->size_names[d], g);
                free(g);
            }
            free(divisor);
        }
        if (global)
            add_issue(I, NOTE, "KernelSpecification.GlobalSize", NOWHERE,
                      "not used: with ProblemSize the grid follows Kernel Tuner's rule, "
                      "ceil(ProblemSize / product of GridDiv), which is what tune_kernel_T1 "
                      "launches");
    } else {
        const char *type = json_string_value(json_object_get(spec, "GlobalSizeType"));
        bool blocks = type && (strcmp(type, "CUDA") == 0 || strcmp(type, "Vulkan") == 0);
        if (!type)
            add_issue(I, NOTE, "KernelSpecification.GlobalSizeType", NOWHERE,
                      "absent: GlobalSize is read as OpenCL's, in threads (grid = GlobalSize / "
                      "LocalSize)");
        if (!json_is_object(global)) {
            add_issue(I, UNTRANSLATED, "KernelSpecification.GlobalSize", NOWHERE,
                      "missing, and no ProblemSize: the launch grid is unknown");
        } else {
            for (int d = 0; d < 3; d++) {
                char path[96];
                snprintf(path, sizeof path, "KernelSpecification.GlobalSize.%s", dims[d]);
                const json_t *v = json_object_get(global, dims[d]);
                if (!v) {
                    I->grid[d] = tf_xstrdup("1");
                    continue;
                }
                char *g = geometry(I, v, path);
                if (g && !blocks && I->block[d] && strcmp(I->block[d], "1") != 0) {
                    char *a = grouped(g), *b = grouped(I->block[d]);
                    free(g);
                    g = tf_xasprintf("ceil(%s / %s)", a, b);
                    free(a);
                    free(b);
                }
                I->grid[d] = g;
            }
        }
    }
    const json_t *shm = json_object_get(spec, "SharedMemory");
    if (shm && json_is_integer(shm) && json_integer_value(shm) > 0)
        I->shared = tf_xasprintf("%" PRId64, (int64_t)json_integer_value(shm));
    else if (shm && !json_is_integer(shm))
        add_issue(I, UNTRANSLATED, "KernelSpecification.SharedMemory",
                  locate_key(I, "SharedMemory"),
                  "expected a number of bytes");
}

/* ---- arguments ------------------------------------------------------------------- */

static const char *elem_type(const char *t1, const char **ctype)
{
    static const struct { const char *t1, *tf, *c; } map[] = {
        {"float", "float32", "float"}, {"double", "float64", "double"},
        {"int32", "int32", "int"},     {"int64", "int64", "long long"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (t1 && strcmp(t1, map[i].t1) == 0) {
            *ctype = map[i].c;
            return map[i].tf;
        }
    *ctype = NULL;
    return NULL;
}

static const char *ctype_of(const char *tf)
{
    return strcmp(tf, "float32") == 0   ? "float"
           : strcmp(tf, "float64") == 0 ? "double"
           : strcmp(tf, "int32") == 0   ? "int"
                                        : "long long";
}

static char *number_text(const json_t *v)
{
    if (json_is_integer(v))
        return tf_xasprintf("%" PRId64, (int64_t)json_integer_value(v));
    if (json_is_real(v)) {
        double x = json_real_value(v);
        char buf[64];
        for (int p = 1; p <= 17; p++) {
            snprintf(buf, sizeof buf, "%.*g", p, x);
            if (strtod(buf, NULL) == x)
                break;
        }
        if (!strpbrk(buf, ".en"))
            strcat(buf, ".0");
        return tf_xstrdup(buf);
    }
    if (json_is_boolean(v))
        return tf_xstrdup(json_is_true(v) ? "1" : "0");
    return NULL;
}

static void read_argument(struct imp *I, const json_t *a, int i, struct arg *out)
{
    static const char *const arg_keys[] = {
        "Name",       "Type",       "Size",       "TypeSize", "FillType", "FillValue",
        "DataSource", "RandomSeed", "AccessType", "MemoryType", "Output", "MemType", NULL};
    char path[96], sub[128];
    snprintf(path, sizeof path, "KernelSpecification.Arguments[%d]", i);
    check_keys(I, a, path, arg_keys);
    struct sbuf comment = {0};
    const char *name = json_string_value(json_object_get(a, "Name"));
    if (name && tf_ydoc_is_ident(name))
        out->name = tf_xstrdup(name);
    else
        out->name = tf_xasprintf("arg%d", i);
    for (int j = 0; j < i; j++)
        if (strcmp(I->args[j].name, out->name) == 0) {
            char *m = tf_xasprintf("%s_%d", out->name, i);
            free(out->name);
            out->name = m;
        }
    const char *mem = json_string_value(json_object_get(a, "MemoryType"));
    const char *type = json_string_value(json_object_get(a, "Type"));
    const char *access = json_string_value(json_object_get(a, "AccessType"));
    const char *memtype = json_string_value(json_object_get(a, "MemType"));
    const char *fill = json_string_value(json_object_get(a, "FillType"));
    const json_t *fv = json_object_get(a, "FillValue");
    const char *ctype;
    out->type = elem_type(type, &ctype);
    if (!out->type) {
        snprintf(sub, sizeof sub, "%s.Type", path);
        add_issue(I, UNTRANSLATED, sub, NOWHERE,
                  "type '%s' has no tunefarm equivalent (float, double, int32 and int64 do)",
                  type ? type : "(none)");
        sb_printf(&comment, "NOT TRANSLATED: type %s; ", type ? type : "(none)");
        out->type = "float32";
    }
    out->scalar = mem && strcmp(mem, "Scalar") == 0;
    if (out->scalar) {
        out->expr = fv ? number_text(fv) : NULL;
        if (!out->expr) {
            snprintf(sub, sizeof sub, "%s.FillValue", path);
            add_issue(I, UNTRANSLATED, sub, NOWHERE,
                      "a scalar argument needs its value as a number in FillValue");
            sb_printf(&comment, "NOT TRANSLATED: no FillValue; ");
            out->expr = tf_xstrdup("0");
        } else if (out->type[0] == 'i') {
            /* an integer scalar: a whole number in the type's range */
            double x = json_number_value(fv);
            double lim = strcmp(out->type, "int32") == 0 ? 2147483648.0 : 9223372036854775808.0;
            if (json_is_real(fv) && (x != floor(x) || x < -lim || x >= lim)) {
                snprintf(sub, sizeof sub, "%s.FillValue", path);
                add_issue(I, UNTRANSLATED, sub, NOWHERE,
                          "%s is not a whole number in %s's range", out->expr, out->type);
                sb_printf(&comment, "NOT TRANSLATED: FillValue %s; ", out->expr);
                free(out->expr);
                out->expr = tf_xstrdup("0");
            } else if (json_is_real(fv)) {
                free(out->expr);
                out->expr = tf_xasprintf("%.0f", x);
            } else if (json_is_integer(fv) && strcmp(out->type, "int32") == 0 &&
                       (json_integer_value(fv) < INT32_MIN || json_integer_value(fv) > INT32_MAX)) {
                snprintf(sub, sizeof sub, "%s.FillValue", path);
                add_issue(I, UNTRANSLATED, sub, NOWHERE, "%s does not fit int32 (declare the "
                          "argument int64)", out->expr);
                sb_printf(&comment, "NOT TRANSLATED: FillValue %s; ", out->expr);
                free(out->expr);
                out->expr = tf_xstrdup("0");
            }
        }
        if (comment.len >= 2)
            comment.s[comment.len -= 2] = '\0';
        out->comment = comment.len ? sb_take(&comment) : (free(comment.s), NULL);
        return;
    }
    if (!mem || strcmp(mem, "Vector") != 0) {
        snprintf(sub, sizeof sub, "%s.MemoryType", path);
        add_issue(I, UNTRANSLATED, sub, NOWHERE,
                  "MemoryType '%s' has no tunefarm equivalent: tunefarm passes buffers (Vector) "
                  "and scalars (Scalar) as kernel arguments",
                  mem ? mem : "(none)");
        sb_printf(&comment, "NOT TRANSLATED: MemoryType %s; ", mem ? mem : "(none)");
    }
    if (memtype && strcmp(memtype, "Constant") == 0) {
        snprintf(sub, sizeof sub, "%s.MemType", path);
        add_issue(I, UNTRANSLATED, sub, locate_key(I, "MemType"),
                  "'%s' is constant memory (a __constant__ symbol Kernel Tuner fills by name): "
                  "tunefarm passes every buffer as a kernel argument, so the source must take "
                  "'%s' as a pointer parameter in this position",
                  out->name, out->name);
        sb_printf(&comment, "NOT TRANSLATED: constant memory (a __constant__ symbol); ");
    }
    const json_t *size = json_object_get(a, "Size");
    snprintf(sub, sizeof sub, "%s.Size", path);
    if (json_is_integer(size) && json_integer_value(size) < 0) {
        add_issue(I, UNTRANSLATED, sub, locate_key(I, "Size"),
                  "%" PRId64 " elements: a buffer holds 0 or more",
                  (int64_t)json_integer_value(size));
    } else if (json_is_integer(size)) {
        out->expr = tf_xasprintf("%" PRId64, (int64_t)json_integer_value(size));
    } else if (json_is_string(size)) {
        struct tf_t1_scope scope = scope_of(I);
        scope.params_as_lists = true;
        scope.numeric = true;
        struct tf_error err = {0};
        out->expr = tf_t1_translate(json_string_value(size), &scope, &err);
        if (!out->expr)
            translate_issue(I, sub, json_string_value(size), &err);
    } else {
        add_issue(I, UNTRANSLATED, sub, NOWHERE, "a buffer needs its element count in Size");
    }
    if (!out->expr) {
        sb_printf(&comment, "NOT TRANSLATED: size; ");
        out->expr = tf_xstrdup("1");
    }
    const json_t *flag = json_object_get(a, "Output");
    const bool writes =
        access && (strcmp(access, "WriteOnly") == 0 || strcmp(access, "ReadWrite") == 0);
    out->output = writes || (flag && (json_is_true(flag) ||
                                      (json_is_integer(flag) && json_integer_value(flag) != 0)));
    bool reads = !out->output || (access && strcmp(access, "ReadWrite") == 0);
    if (reads) {
        snprintf(sub, sizeof sub, "%s.FillType", path);
        double x = json_is_number(fv) ? json_number_value(fv) : NAN;
        if (!fill || strcmp(fill, "Random") == 0) {
            out->init = NULL; /* tunefarm's random is the default of an input */
            if (out->output)
                out->init = "random";
        } else if (strcmp(fill, "Constant") == 0 && (x == 0 || x == 1)) {
            out->init = x == 0 ? "zero" : "ones";
        } else {
            add_issue(I, UNTRANSLATED, sub, NOWHERE,
                      "%s%s%s has no tunefarm equivalent (tunefarm fills inputs with random "
                      "values, zeros or ones)",
                      fill, strcmp(fill, "Constant") == 0 ? " " : "",
                      strcmp(fill, "Constant") == 0 ? (fv ? "other than 0 and 1" : "without a "
                                                                                    "FillValue")
                                                    : "");
            sb_printf(&comment, "NOT TRANSLATED: FillType %s (random instead); ", fill);
            if (out->output)
                out->init = "random";
        }
    }
    if (comment.len >= 2)
        comment.s[comment.len -= 2] = '\0'; /* the last "; " */
    out->comment = comment.len ? sb_take(&comment) : (free(comment.s), NULL);
}

static int read_arguments(struct imp *I, const json_t *spec)
{
    const json_t *list = json_object_get(spec, "Arguments");
    if (!json_is_array(list) || json_array_size(list) == 0)
        return malformed(I, "KernelSpecification.Arguments", locate_key(I, "Arguments"),
                         "the kernel's arguments are not given (an array of {Name, Type, "
                         "MemoryType, ...}): tunefarm needs them to launch the kernel and check "
                         "its outputs");
    I->nargs = (int)json_array_size(list);
    I->args = tf_xcalloc((size_t)I->nargs, sizeof *I->args);
    bool any_output = false, random = false, seed = false;
    for (int i = 0; i < I->nargs; i++) {
        const json_t *a = json_array_get(list, (size_t)i);
        if (!json_is_object(a)) {
            char path[96];
            snprintf(path, sizeof path, "KernelSpecification.Arguments[%d]", i);
            add_issue(I, UNTRANSLATED, path, NOWHERE, "expected an object");
            I->args[i] = (struct arg){.name = tf_xasprintf("arg%d", i), .type = "float32",
                                      .expr = tf_xstrdup("1")};
            continue;
        }
        read_argument(I, a, i, &I->args[i]);
        any_output |= !I->args[i].scalar && I->args[i].output;
        const char *fill = json_string_value(json_object_get(a, "FillType"));
        random |= fill && strcmp(fill, "Random") == 0 && !I->args[i].scalar;
        seed |= json_object_get(a, "RandomSeed") != NULL;
    }
    if (random)
        add_issue(I, NOTE, "KernelSpecification.Arguments", NOWHERE,
                  "Random inputs are uniform in [-1, 1) (floats) or [0, 100) (integers) here; "
                  "Kernel Tuner draws floats from a normal distribution");
    if (seed)
        add_issue(I, NOTE, "KernelSpecification.Arguments", NOWHERE,
                  "RandomSeed is not used: inputs come from the job's seed");
    if (!any_output) {
        add_issue(I, UNTRANSLATED, "KernelSpecification.Arguments", NOWHERE,
                  "no argument is an output (AccessType WriteOnly or ReadWrite, or Output: 1): "
                  "tunefarm verifies the outputs");
        for (int i = 0; i < I->nargs; i++)
            if (!I->args[i].scalar) {
                I->args[i].output = true;
                char *c = tf_xasprintf("%s%sNOT TRANSLATED: marked an output by guess",
                                       I->args[i].comment ? I->args[i].comment : "",
                                       I->args[i].comment ? "; " : "");
                free(I->args[i].comment);
                I->args[i].comment = c;
                break;
            }
    }
    return 0;
}

/* ---- source and reference ----------------------------------------------------------- */

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *read_text(const char *path, struct tf_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tf_error_set(err, TF_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    struct sbuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (b.len + n > T1_MAX_FILE) {
            fclose(f);
            free(b.s);
            tf_error_set(err, TF_ERR_IO, "'%s' is larger than %d MiB", path, T1_MAX_FILE >> 20);
            return NULL;
        }
        sb_printf(&b, "%.*s", (int)n, chunk);
        if (memchr(chunk, '\0', n)) {
            fclose(f);
            free(b.s);
            tf_error_set(err, TF_ERR_IO, "'%s' is not a text file", path);
            return NULL;
        }
    }
    bool failed = ferror(f);
    fclose(f);
    if (failed) {
        free(b.s);
        tf_error_set(err, TF_ERR_IO, "cannot read '%s'", path);
        return NULL;
    }
    return sb_take(&b);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* KernelFile where Kernel Tuner looks: as given (from the working directory),
 * next to the T1 file, then one folder up. */
static void find_source(struct imp *I, const json_t *spec)
{
    int bad = 0;
    const char *kf = get_string(I, spec, "KernelFile", "KernelSpecification", false, &bad);
    if (I->source_opt) {
        I->source_in = tf_xstrdup(I->source_opt);
        I->source_name = tf_xstrdup(base_name(I->source_opt));
        return;
    }
    if (!kf) {
        add_issue(I, UNTRANSLATED, "KernelSpecification.KernelFile", NOWHERE,
                  "no kernel source is named: pass --source FILE");
        I->source_name = tf_xasprintf("%s.cu", I->entry);
        return;
    }
    char *dir = tf_path_dir(I->path);
    char *updir = tf_path_join(dir, "..");
    char *cands[3] = {tf_xstrdup(kf), tf_path_join(dir, kf), tf_path_join(updir, kf)};
    for (int i = 0; i < 3 && !I->source_in; i++)
        if (is_file(cands[i]))
            I->source_in = tf_xstrdup(cands[i]);
    I->source_name = tf_xstrdup(base_name(kf));
    if (!I->source_in)
        add_issue(I, UNTRANSLATED, "KernelSpecification.KernelFile", locate_string(I, kf, 0),
                  "the kernel source '%s' is not there (looked for %s, %s and %s; datasets often "
                  "leave the source out): pass --source FILE",
                  kf, cands[0], cands[1], cands[2]);
    for (int i = 0; i < 3; i++)
        free(cands[i]);
    free(dir);
    free(updir);
}

/* The signature of the entry point as C parameters ("float *out, const int n"). */
static char *signature(const struct imp *I)
{
    struct sbuf b = {0};
    for (int i = 0; i < I->nargs; i++) {
        const struct arg *a = &I->args[i];
        sb_printf(&b, "%s%s%s %s%s", i ? ", " : "", a->scalar || a->output ? "" : "const ",
                  ctype_of(a->type), a->scalar ? "" : "*", a->name);
    }
    return sb_take(&b);
}

static char *skeleton_source(const struct imp *I)
{
    struct sbuf b = {0};
    char *sig = signature(I);
    sb_printf(&b,
              "/* SKELETON written by tunefarm import-t1: the T1 file\n"
              " *   %s\n"
              " * names no source that was found. Replace this file with the kernel (or run\n"
              " * import-t1 again with --source FILE). It compiles, so `tunefarm space` and\n"
              " * `tunefarm compile` work; a run finds the outputs unwritten (wrong_result).\n"
              " * Parameters arrive as defines:",
              I->path);
    for (int p = 0; p < I->nparams; p++)
        sb_printf(&b, "%s%s", p % 6 ? ", " : p ? ",\n *   " : "\n *   ", I->params[p].name);
    sb_printf(&b, ". */\n#include \"tunefarm.h\"\n\nTF_GLOBAL void %s(%s)\n{\n", I->entry, sig);
    for (int i = 0; i < I->nargs; i++)
        sb_printf(&b, "    (void)%s;\n", I->args[i].name);
    sb_printf(&b, "}\n");
    free(sig);
    return sb_take(&b);
}

static char *skeleton_reference(const struct imp *I)
{
    struct sbuf b = {0};
    sb_printf(&b,
              "/* SKELETON reference written by tunefarm import-t1: the T1 file\n"
              " *   %s\n"
              " * has no reference. tunefarm checks every variant against this host C\n"
              " * function (schema/kernel.md, References): compute the expected outputs from\n"
              " * the inputs here. Until it does, every configuration is wrong_result. */\n"
              "void %s(void **args);\n\nvoid %s(void **args)\n{\n",
              I->path, I->ref_entry, I->ref_entry);
    for (int i = 0; i < I->nargs; i++) {
        const struct arg *a = &I->args[i];
        const char *c = ctype_of(a->type);
        if (a->scalar)
            sb_printf(&b, "    const %s %s = *(const %s *)args[%d];\n", c, a->name, c, i);
        else
            sb_printf(&b, "    %s%s *%s = *(%s%s **)args[%d];\n", a->output ? "" : "const ", c,
                      a->name, a->output ? "" : "const ", c, i);
    }
    for (int i = 0; i < I->nargs; i++)
        sb_printf(&b, "    (void)%s;\n", I->args[i].name);
    sb_printf(&b, "}\n");
    return sb_take(&b);
}

/* Where a line of `src` starting at `line` is `#include` followed by `*what`
 * ('<' or '"'): the text after the keyword, or NULL. */
static const char *include_of(const char *line)
{
    const char *q = line;
    while (*q == ' ' || *q == '\t')
        q++;
    if (*q != '#')
        return NULL;
    q++;
    while (*q == ' ' || *q == '\t')
        q++;
    if (strncmp(q, "include", 7) != 0)
        return NULL;
    q += 7;
    while (*q == ' ' || *q == '\t')
        q++;
    return q;
}

/* The source as it is written into the folder: after its last system
 * #include (<...> or tunefarm.h), so that no header sees them, `#define OLD
 * NEW` for each renamed parameter (the code keeps the T1 names), and, where
 * the text has no extern "C", the rest wrapped in `extern "C" { }` as Kernel
 * Tuner wraps such a source (pycuda's convention): tunefarm looks the entry
 * up unmangled. */
static char *prepare_source(struct imp *I, const char *src)
{
    struct sbuf defs = {0};
    for (int p = 0; p < I->nparams; p++)
        if (strcmp(I->params[p].name, I->params[p].out) != 0)
            sb_printf(&defs, "#define %s %s\n", I->params[p].name, I->params[p].out);
    const bool wrap = strstr(src, "extern \"C\"") == NULL && strstr(src, "TF_GLOBAL") == NULL &&
                      strstr(src, "TF_EXTERN_C") == NULL;
    if (!defs.len && !wrap)
        return tf_xstrdup(src);
    const char *after = src; /* the start of the line after the last system include */
    for (const char *line = src; *line;) {
        const char *end = strchr(line, '\n');
        const char *next = end ? end + 1 : line + strlen(line);
        const char *q = include_of(line);
        if (q && (*q == '<' || strncmp(q, "\"tunefarm.h\"", 12) == 0))
            after = next;
        line = next;
    }
    struct sbuf b = {0};
    sb_printf(&b, "%.*s", (int)(after - src), src);
    if (after > src && after[-1] != '\n')
        sb_printf(&b, "\n");
    if (defs.len)
        sb_printf(&b,
                  "/* tunefarm import-t1: these parameters are compiled under other names (a\n"
                  " * define named as in the T1 file would break the compiler's headers); the\n"
                  " * code below keeps the T1 names. */\n%s",
                  defs.s);
    if (wrap) {
        sb_printf(&b, "/* tunefarm import-t1: extern \"C\" as Kernel Tuner adds it (to the "
                      "end) */\nextern \"C\" {\n");
        add_issue(I, NOTE, "KernelSpecification.KernelFile", NOWHERE,
                  "the source has no extern \"C\": wrapped in extern \"C\" { } after its system "
                  "#includes, as Kernel Tuner does, so that the entry '%s' is found unmangled",
                  I->entry);
    }
    sb_printf(&b, "%s", after);
    if (wrap)
        sb_printf(&b, "%s} /* extern \"C\" (tunefarm import-t1) */\n",
                  b.len && b.s[b.len - 1] != '\n' ? "\n" : "");
    free(defs.s);
    return sb_take(&b);
}

/* The local headers `src` includes ("x.h": relative, no ..), found in
 * `src_dir`, with theirs, into I->inc_names / inc_texts (`prefix` is their
 * folder inside the kernel's). */
static void collect_includes(struct imp *I, const char *src, const char *src_dir,
                             const char *prefix)
{
    for (const char *line = src; *line;) {
        const char *end = strchr(line, '\n');
        const char *next = end ? end + 1 : line + strlen(line);
        const char *q = include_of(line);
        const char *close = q && *q == '"' ? memchr(q + 1, '"', (size_t)(next - q - 1)) : NULL;
        line = next;
        if (!close)
            continue;
        char *name = tf_xasprintf("%.*s", (int)(close - q - 1), q + 1);
        char *from = tf_path_join(src_dir, name);
        char *to = tf_path_join(prefix, name);
        bool seen = strcmp(name, "tunefarm.h") == 0 || strcmp(to, I->source_name) == 0;
        for (int i = 0; i < I->nincs && !seen; i++)
            seen = strcmp(I->inc_names[i], to) == 0;
        if (seen) {
        } else if (name[0] == '/' || strstr(name, "..")) {
            add_issue(I, NOTE, "KernelSpecification.KernelFile", NOWHERE,
                      "the source includes \"%s\", outside its folder: not copied (give it "
                      "with -I in CompilerOptions)",
                      name);
        } else if (!is_file(from)) {
            add_issue(I, NOTE, "KernelSpecification.KernelFile", NOWHERE,
                      "the source includes \"%s\", which is not next to it: not copied", name);
        } else if (I->nincs >= T1_MAX_INCLUDES) {
            add_issue(I, NOTE, "KernelSpecification.KernelFile", NOWHERE,
                      "more than %d local headers: \"%s\" not copied", T1_MAX_INCLUDES, name);
        } else {
            struct tf_error err = {0};
            char *text = read_text(from, &err);
            if (!text) {
                add_issue(I, UNTRANSLATED, "KernelSpecification.KernelFile", NOWHERE, "%s",
                          err.message);
            } else {
                I->inc_names = tf_xrealloc(I->inc_names, (size_t)(I->nincs + 1) * sizeof(char *));
                I->inc_texts = tf_xrealloc(I->inc_texts, (size_t)(I->nincs + 1) * sizeof(char *));
                I->inc_names[I->nincs] = tf_xstrdup(to);
                I->inc_texts[I->nincs++] = text;
                char *sub_dir = tf_path_dir(from), *sub_prefix = tf_path_dir(to);
                collect_includes(I, text, sub_dir, sub_prefix);
                free(sub_dir);
                free(sub_prefix);
            }
        }
        free(name);
        free(from);
        free(to);
    }
}

/* The source and its headers, read now so that what they need is reported
 * with the rest: a skeleton where there is no source. */
static void read_source(struct imp *I)
{
    if (!I->source_in) {
        I->source_text = skeleton_source(I);
        return;
    }
    struct tf_error err = {0};
    char *src = read_text(I->source_in, &err);
    if (!src) {
        add_issue(I, UNTRANSLATED, "KernelSpecification.KernelFile", NOWHERE, "%s", err.message);
        I->source_text = skeleton_source(I);
        return;
    }
    if (!strstr(src, I->entry))
        add_issue(I, UNTRANSLATED, "KernelSpecification.KernelName", NOWHERE,
                  "'%s' does not appear in %s: no entry point of that name", I->entry,
                  I->source_in);
    I->source_text = prepare_source(I, src);
    char *dir = tf_path_dir(I->source_in);
    collect_includes(I, src, dir, ".");
    free(dir);
    free(src);
}

/* ---- search ------------------------------------------------------------------------- */

static void read_search(struct imp *I)
{
    static const char *const search_keys[] = {"Name", "Attributes", NULL};
    static const char *const budget_keys[] = {"Type", "BudgetValue", NULL};
    static const struct { const char *kt, *tf; } names[] = {
        {"brute_force", "brute_force"},    {"random_sample", "random"},
        {"genetic_algorithm", "genetic"},  {"greedy_ils", "local"},
        {"greedy_mls", "local"},           {"ordered_greedy_mls", "local"},
        {"mls", "local"},                  {"bayes_opt", "bayes"},
    };
    const json_t *search = json_object_get(I->root, "Search");
    const char *kt = NULL;
    if (json_is_object(search)) {
        check_keys(I, search, "Search", search_keys);
        kt = json_string_value(json_object_get(search, "Name"));
        const json_t *attrs = json_object_get(search, "Attributes");
        if (json_is_array(attrs) && json_array_size(attrs) > 0)
            add_issue(I, NOTE, "Search.Attributes", NOWHERE,
                      "Kernel Tuner's strategy options are not carried over (job.yaml's "
                      "search.options are tunefarm's, schema/job.md)");
    }
    I->strategy = tf_xstrdup("brute_force");
    bool named = false;
    for (size_t i = 0; kt && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(kt, names[i].kt) == 0) {
            free(I->strategy);
            I->strategy = tf_xstrdup(names[i].tf);
            named = true;
        }
    const json_t *budget = json_object_get(I->root, "Budget");
    if (json_is_array(budget) && json_array_size(budget) > 0) {
        const json_t *b = json_array_get(budget, 0);
        if (json_is_object(b))
            check_keys(I, b, "Budget[0]", budget_keys);
        const char *type = json_string_value(json_object_get(b, "Type"));
        double v = json_number_value(json_object_get(b, "BudgetValue"));
        if (type && strcmp(type, "ConfigurationCount") == 0 && v >= 1)
            I->budget = (int64_t)v;
        else if (type && strcmp(type, "TuningDuration") == 0 && v > 0)
            I->time_budget = v;
        else
            add_issue(I, NOTE, "Budget[0]", NOWHERE,
                      "%s is not carried over (tunefarm's budgets are a configuration count or "
                      "seconds)",
                      type ? type : "this budget");
        if (json_array_size(budget) > 1)
            add_issue(I, NOTE, "Budget", NOWHERE,
                      "only the first budget is used, as Kernel Tuner does");
    }
    if (kt && !named) {
        free(I->strategy);
        I->strategy = tf_xstrdup(I->budget > 0 ? "random" : "brute_force");
        add_issue(I, NOTE, "Search.Name", NOWHERE,
                  "Kernel Tuner's '%s' has no tunefarm counterpart: job.yaml searches with %s "
                  "(tunefarm's are brute_force, random, genetic, local, bayes, hybrid)",
                  kt, I->strategy);
    }
    if (strcmp(I->strategy, "random") == 0 && I->budget == 0) {
        free(I->strategy);
        I->strategy = tf_xstrdup("brute_force");
        add_issue(I, NOTE, "Search.Name", NOWHERE,
                  "a random search needs a configuration count (Budget): job.yaml searches "
                  "by brute force");
    }
    const json_t *dev = json_object_get(json_object_get(I->root, "KernelSpecification"), "Device");
    const char *dn = json_string_value(json_object_get(dev, "Name"));
    if (dn)
        I->device_name = tf_xstrdup(dn);
}

/* ---- writing ------------------------------------------------------------------------ */

static void put_values(struct sbuf *y, const struct param *p)
{
    const struct tf_t1_values *v = &p->v;
    if (v->is_enum) {
        sb_printf(y, "[");
        for (int i = 0; i < v->count; i++)
            sb_printf(y, "%s'%s'", i ? ", " : "", v->strings[i]);
        sb_printf(y, "]");
        return;
    }
    if (v->generated && v->count >= 3) {
        bool pow2 = v->ints[0] >= 1 && (v->ints[0] & (v->ints[0] - 1)) == 0;
        for (int i = 1; i < v->count && pow2; i++)
            pow2 = v->ints[i - 1] <= INT64_MAX / 2 && v->ints[i] == 2 * v->ints[i - 1];
        if (pow2) {
            sb_printf(y, "{pow2: [%" PRId64 ", %" PRId64 "]}", v->ints[0], v->ints[v->count - 1]);
            return;
        }
        int64_t step, d;
        bool range = !__builtin_sub_overflow(v->ints[1], v->ints[0], &step) && step >= 1;
        for (int i = 2; i < v->count && range; i++) /* differences past int64: a list */
            range = !__builtin_sub_overflow(v->ints[i], v->ints[i - 1], &d) && d == step;
        if (range) {
            if (step == 1)
                sb_printf(y, "{range: [%" PRId64 ", %" PRId64 "]}", v->ints[0],
                          v->ints[v->count - 1]);
            else
                sb_printf(y, "{range: [%" PRId64 ", %" PRId64 ", %" PRId64 "]}", v->ints[0],
                          v->ints[v->count - 1], step);
            return;
        }
    }
    sb_printf(y, "[");
    for (int i = 0; i < v->count; i++)
        sb_printf(y, "%s%" PRId64, i ? ", " : "", v->ints[i]);
    sb_printf(y, "]");
}

/* Comment lines from `text` (one issue message per line). */
/* `text` with every control character (a line break above all) a space: a
 * T1 file's text in a YAML comment must not end the comment and go on as
 * YAML of its own. Freed by the caller. */
static char *comment_safe(const char *text)
{
    char *s = tf_xstrdup(text ? text : "");
    for (char *p = s; *p; p++)
        if ((unsigned char)*p < 32 || *p == 127)
            *p = ' ';
    return s;
}

static void put_comment(struct sbuf *y, const char *indent, const char *text)
{
    /* wrap at about 88 columns on spaces */
    char *safe = comment_safe(text);
    const char *p = safe;
    while (*p) {
        size_t room = 88 - strlen(indent) - 2, len = strlen(p);
        size_t cut = len;
        if (len > room) {
            cut = room;
            while (cut > 20 && p[cut] != ' ')
                cut--;
            if (cut <= 20)
                cut = room;
        }
        sb_printf(y, "%s# %.*s\n", indent, (int)cut, p);
        p += cut;
        while (*p == ' ')
            p++;
    }
    free(safe);
}

static bool same_ignoring_space(const char *a, const char *b)
{
    for (;;) {
        while (*a == ' ' || *a == '\t' || *a == '\n')
            a++;
        while (*b == ' ' || *b == '\t' || *b == '\n')
            b++;
        if (*a != *b)
            return false;
        if (!*a)
            return true;
        a++;
        b++;
    }
}

static void put_geometry(struct sbuf *y, const char *key, char *const *dims, int max_dims)
{
    int n = max_dims;
    while (n > 1 && dims[n - 1] && strcmp(dims[n - 1], "1") == 0)
        n--;
    sb_printf(y, "  %s:\n", key);
    for (int d = 0; d < n; d++) {
        if (!dims[d]) {
            sb_printf(y, "    - 1   # NOT TRANSLATED (see the note above)\n");
            continue;
        }
        char *s = yaml_scalar(dims[d], false);
        sb_printf(y, "    - %s\n", s);
        free(s);
    }
}

static char *kernel_yaml(struct imp *I)
{
    struct sbuf y = {0};
    char *head = tf_xasprintf("Written by `tunefarm import-t1` from %s, a T1 file (Kernel "
                              "Tuner's input format); schema/kernel.md, \"From Kernel Tuner\", "
                              "says what maps to what.",
                              I->path);
    put_comment(&y, "", head);
    free(head);
    for (int i = 0; i < I->nissues; i++) {
        const struct issue *is = &I->issues[i];
        char *line = tf_xasprintf("%s %s: %s", is->sev == NOTE ? "note:" : "NOT TRANSLATED:",
                                  is->path, is->msg);
        put_comment(&y, "", line);
        free(line);
    }
    char *desc = yaml_scalar(I->path, false), *kname = yaml_scalar(I->name, false);
    sb_printf(&y, "name: %s\ndescription: imported from %s\nlanguage: cuda\n", kname, desc);
    free(desc);
    free(kname);
    char *src = yaml_scalar(I->source_name, false), *entry = yaml_scalar(I->entry, false);
    sb_printf(&y, "source: %s\nentry: %s\n", src, entry);
    free(src);
    free(entry);
    sb_printf(&y, "# Kernel Tuner defines kernel_tuner in every compile\noptions: [");
    for (int i = 0; i < I->noptions; i++) {
        char *o = yaml_scalar(I->options[i], true);
        sb_printf(&y, "%s%s", i ? ", " : "", o);
        free(o);
    }
    sb_printf(&y, "]\n");
    char *ref = yaml_scalar(I->ref_name, false);
    sb_printf(&y, "reference:\n  source: %s\n  entry: %s\n", ref, I->ref_entry);
    free(ref);
    if (I->rtol >= 0 || I->atol >= 0) {
        sb_printf(&y, "verify: {");
        if (I->rtol >= 0)
            sb_printf(&y, "rtol: %.17g%s", I->rtol, I->atol >= 0 ? ", " : "");
        if (I->atol >= 0)
            sb_printf(&y, "atol: %.17g", I->atol);
        sb_printf(&y, "}\n");
    }
    sb_printf(&y, "problems:\n");
    if (I->nsizes == 0) {
        sb_printf(&y, "  t1: {}   # the T1 file gives no ProblemSize\n");
    } else {
        sb_printf(&y, "  p");
        for (int i = 0; i < I->nsizes; i++)
            sb_printf(&y, "%s%" PRId64, i ? "x" : "", I->size_values[i]);
        sb_printf(&y, ": {");
        for (int i = 0; i < I->nsizes; i++)
            sb_printf(&y, "%s%s: %" PRId64, i ? ", " : "", I->size_names[i], I->size_values[i]);
        sb_printf(&y, "}\n");
    }
    sb_printf(&y, "parameters:\n");
    for (int p = 0; p < I->nparams; p++) {
        sb_printf(&y, "  %s: ", I->params[p].out);
        put_values(&y, &I->params[p]);
        sb_printf(&y, "\n");
    }
    if (I->ncons > 0) {
        sb_printf(&y, "constraints:\n");
        for (int c = 0; c < I->ncons; c++) {
            const struct constraint *k = &I->cons[c];
            if (!k->tf) {
                char *line = tf_xasprintf("NOT TRANSLATED (Conditions[%d]): %s", c, k->why);
                put_comment(&y, "  ", line);
                free(line);
                char *py = comment_safe(k->py);
                sb_printf(&y, "  # - %s\n", py);
                free(py);
                continue;
            }
            if (!same_ignoring_space(k->py, k->tf)) {
                char *py = comment_safe(k->py);
                sb_printf(&y, "  # T1: %s\n", py);
                free(py);
            }
            char *s = yaml_scalar(k->tf, false);
            sb_printf(&y, "  - %s\n", s);
            free(s);
        }
    }
    bool all_defaults = I->nparams > 0;
    for (int p = 0; p < I->nparams; p++)
        all_defaults &= I->params[p].has_default;
    if (all_defaults) {
        sb_printf(&y, "default:\n");
        for (int p = 0; p < I->nparams; p++) {
            if (I->params[p].v.is_enum)
                sb_printf(&y, "  %s: '%s'\n", I->params[p].out, I->params[p].def_str);
            else
                sb_printf(&y, "  %s: %" PRId64 "\n", I->params[p].out, I->params[p].def_int);
        }
    }
    sb_printf(&y, "launch:\n");
    put_geometry(&y, "grid", I->grid, I->nsizes > 0 ? I->nsizes : 3);
    put_geometry(&y, "block", I->block, 3);
    if (I->shared)
        sb_printf(&y, "  shared: %s\n", I->shared);
    sb_printf(&y, "arguments:\n");
    for (int i = 0; i < I->nargs; i++) {
        const struct arg *a = &I->args[i];
        if (a->comment)
            put_comment(&y, "  ", a->comment);
        char *e = yaml_scalar(a->expr, true), *an = yaml_scalar(a->name, true);
        if (a->scalar)
            sb_printf(&y, "  - {name: %s, scalar: %s, value: %s}\n", an, a->type, e);
        else
            sb_printf(&y, "  - {name: %s, buffer: %s, size: %s%s%s%s}\n", an, a->type, e,
                      a->init ? ", init: " : "", a->init ? a->init : "",
                      a->output ? ", output: true" : "");
        free(e);
        free(an);
    }
    return sb_take(&y);
}

static char *job_yaml(const struct imp *I)
{
    struct sbuf y = {0};
    char *head = tf_xasprintf("Written by `tunefarm import-t1` from %s: tune the kernel in "
                              "this folder (tunefarm run job.yaml; tunefarm compile job.yaml "
                              "--arch sm_90).",
                              I->path);
    put_comment(&y, "", head);
    free(head);
    if (I->device_name) {
        char *dev = comment_safe(I->device_name);
        sb_printf(&y, "# The T1 file names the device '%s': add `targets: [...]` (schema/job.md)\n"
                      "# to tune on some devices only.\n",
                  dev);
        free(dev);
    }
    /* a job name is at most 63 bytes (schema/job.md); a kernel's may be longer */
    char *short_name = tf_xasprintf("%.63s", I->name), *jname = yaml_scalar(short_name, false);
    sb_printf(&y, "name: %s\nkernels:\n  - kernel: ./kernel.yaml\nsearch:\n  strategy: %s\n",
              jname, I->strategy);
    free(jname);
    free(short_name);
    if (I->budget > 0)
        sb_printf(&y, "  budget: %" PRId64 "\n", I->budget);
    if (I->time_budget > 0)
        sb_printf(&y, "  time_budget: %g\n", I->time_budget);
    return sb_take(&y);
}

static int write_file(const char *dir, const char *name, const char *text, struct tf_error *err)
{
    char *path = tf_path_join(dir, name);
    char *pdir = tf_path_dir(path);
    int rc = tf_mkdir_p(pdir, err);
    free(pdir);
    struct tf_outfile o = {0};
    if (rc == 0 && tf_outfile_open(&o, path, err) == 0) {
        if (fputs(text, o.f) == EOF) {
            tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
            tf_outfile_abort(&o);
            rc = -1;
        } else {
            rc = tf_outfile_commit(&o, err);
        }
    } else {
        rc = -1;
    }
    free(path);
    return rc;
}

/* ---- the command ---------------------------------------------------------------------- */

static char *default_name(const struct imp *I)
{
    const char *bn = json_string_value(json_object_get(json_object_get(I->root, "General"),
                                                       "BenchmarkName"));
    char *n;
    if (bn && tf_ydoc_is_ident(bn) && strlen(bn) <= TF_KERNEL_NAME_MAX) {
        n = tf_xstrdup(bn);
    } else {
        n = tf_xstrdup(base_name(I->path));
        char *dot = strstr(n, ".json");
        if (dot)
            *dot = '\0';
        size_t len = strlen(n);
        if (len > 3 && (strcmp(n + len - 3, ".T1") == 0 || strcmp(n + len - 3, "_T1") == 0))
            n[len - 3] = '\0';
        for (char *p = n; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || *p == '_'))
                *p = '_';
        if (!tf_ydoc_is_ident(n)) {
            char *m = tf_xasprintf("k_%s", n);
            free(n);
            n = m;
        }
        if (strlen(n) > TF_KERNEL_NAME_MAX)
            n[TF_KERNEL_NAME_MAX] = '\0';
    }
    return n;
}

static void read_options(struct imp *I, const json_t *spec)
{
    const json_t *opts = json_object_get(spec, "CompilerOptions");
    I->options = tf_xcalloc(json_is_array(opts) ? json_array_size(opts) + 1 : 1, sizeof(char *));
    I->options[I->noptions++] = tf_xstrdup("-Dkernel_tuner=1");
    for (size_t i = 0; json_is_array(opts) && i < json_array_size(opts); i++) {
        const char *o = json_string_value(json_array_get(opts, i));
        char path[96];
        snprintf(path, sizeof path, "KernelSpecification.CompilerOptions[%zu]", i);
        if (!o || o[0] != '-') {
            add_issue(I, UNTRANSLATED, path, NOWHERE, "a compiler option must start with '-'");
        } else if (strncmp(o, "-std=", 5) == 0 || strncmp(o, "--std=", 6) == 0) {
            add_issue(I, NOTE, path, NOWHERE,
                      "'%s' dropped: tunefarm compiles CUDA as C++17 (-std=c++17)", o);
        } else {
            I->options[I->noptions++] = tf_xstrdup(o);
        }
    }
}

static void imp_free(struct imp *I)
{
    for (int i = 0; i < I->nissues; i++) {
        free(I->issues[i].path);
        free(I->issues[i].msg);
    }
    free(I->issues);
    for (int p = 0; p < I->nparams; p++) {
        free(I->params[p].name);
        free(I->params[p].out);
        tf_t1_values_free(&I->params[p].v);
    }
    free(I->params);
    free(I->xparams);
    for (int i = 0; i < 3; i++) {
        free(I->size_names[i]);
        free(I->grid[i]);
        free(I->block[i]);
    }
    free(I->shared);
    for (int c = 0; c < I->ncons; c++) {
        free(I->cons[c].py);
        free(I->cons[c].tf);
        free(I->cons[c].why);
    }
    free(I->cons);
    for (int i = 0; i < I->nargs; i++) {
        free(I->args[i].name);
        free(I->args[i].expr);
        free(I->args[i].comment);
    }
    free(I->args);
    for (int i = 0; i < I->noptions; i++)
        free(I->options[i]);
    free(I->options);
    free(I->name);
    free(I->entry);
    free(I->source_in);
    free(I->source_name);
    free(I->source_text);
    for (int i = 0; i < I->nincs; i++) {
        free(I->inc_names[i]);
        free(I->inc_texts[i]);
    }
    free(I->inc_names);
    free(I->inc_texts);
    free(I->ref_in);
    free(I->ref_entry);
    free(I->ref_name);
    free(I->strategy);
    free(I->device_name);
    json_decref(I->root);
    free(I->text);
}

/* Read and translate the T1 file into the plan. 0, or -1 after printing why
 * the file is not a T1 file. */
static int read_t1(struct imp *I, const char *name_opt)
{
    static const char *const top_keys[] = {"ConfigurationSpace", "KernelSpecification", "Search",
                                           "Budget", "General", NULL};
    static const char *const space_keys[] = {"TuningParameters", "Conditions", NULL};
    static const char *const general_keys[] = {"FormatVersion", "LoggingLevel", "TimeUnit",
                                               "OutputFile", "OutputFormat", "BenchmarkName",
                                               NULL};
    static const char *const spec_keys[] = {
        "Device",         "Language",     "CompilerOptions", "Profiling",  "KernelName",
        "KernelFile",     "GlobalSizeType", "SharedMemory",  "SimulationInput", "GlobalSize",
        "LocalSize",      "Arguments",    "ReferenceArguments", "BenchmarkName", "GridDivX",
        "GridDivY",       "GridDivZ",     "ProblemSize",     "Stream",     NULL};
    struct tf_error err = {0};
    struct stat st;
    if (stat(I->path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > T1_MAX_FILE) {
        fprintf(stderr, "%s: %s: error: larger than %d MiB: not a T1 file\n", I->prog, I->path,
                T1_MAX_FILE >> 20);
        return -1;
    }
    if ((I->text = read_text(I->path, &err)) == NULL) {
        fprintf(stderr, "%s: %s: error: %s\n", I->prog, I->path, err.message);
        return -1;
    }
    json_error_t je;
    I->root = json_loadb(I->text, strlen(I->text), JSON_REJECT_DUPLICATES, &je);
    if (!I->root) {
        fprintf(stderr, "%s: %s:%d:%d: error: not valid JSON (%s): expected a T1 file (Kernel "
                        "Tuner's input format)\n",
                I->prog, I->path, je.line, je.column > 0 ? je.column : 1, je.text);
        return -1;
    }
    if (!json_is_object(I->root))
        return malformed(I, "(top level)", NOWHERE,
                         "expected an object {ConfigurationSpace, KernelSpecification, ...}");
    check_keys(I, I->root, "(top level)", top_keys);
    const json_t *general = json_object_get(I->root, "General");
    if (json_is_object(general))
        check_keys(I, general, "General", general_keys);
    const json_t *space = json_object_get(I->root, "ConfigurationSpace");
    const json_t *spec = json_object_get(I->root, "KernelSpecification");
    if (!json_is_object(space))
        return malformed(I, "ConfigurationSpace", NOWHERE,
                         "missing or not an object: not a T1 file (it needs ConfigurationSpace "
                         "and KernelSpecification)");
    if (!json_is_object(spec))
        return malformed(I, "KernelSpecification", NOWHERE,
                         "missing or not an object: not a T1 file (it needs ConfigurationSpace "
                         "and KernelSpecification)");
    check_keys(I, space, "ConfigurationSpace", space_keys);
    check_keys(I, spec, "KernelSpecification", spec_keys);
    int bad = 0;
    const char *lang = get_string(I, spec, "Language", "KernelSpecification", true, &bad);
    const char *kname = get_string(I, spec, "KernelName", "KernelSpecification", true, &bad);
    if (bad)
        return -1;
    if (strcmp(lang, "CUDA") != 0)
        return malformed(I, "KernelSpecification.Language", locate_string(I, lang, 0),
                         "'%s': tunefarm tunes CUDA kernels (on NVIDIA GPUs, and on AMD GPUs "
                         "through hipRTC) and host C; port the kernel to CUDA first",
                         lang);
    if (!tf_ydoc_is_ident(kname))
        return malformed(I, "KernelSpecification.KernelName", locate_string(I, kname, 0),
                         "'%s' is not an identifier", kname);
    I->entry = tf_xstrdup(kname);
    if (name_opt)
        I->name = tf_xstrdup(name_opt);
    else
        I->name = default_name(I);
    if (read_params(I, space) != 0 || read_problem(I, spec) != 0 ||
        read_conditions(I, space) != 0)
        return -1;
    read_launch(I, spec);
    if (read_arguments(I, spec) != 0)
        return -1;
    read_options(I, spec);
    find_source(I, spec);
    read_source(I);
    const json_t *refs = json_object_get(spec, "ReferenceArguments");
    if (json_is_array(refs) && json_array_size(refs) > 0 && !I->reference_opt)
        add_issue(I, UNTRANSLATED, "KernelSpecification.ReferenceArguments",
                  locate_key(I, "ReferenceArguments"),
                  "expected outputs given as data are not supported: tunefarm checks every "
                  "variant against a host C reference (--reference FILE.c)");
    else if (json_is_array(refs) && json_array_size(refs) > 0)
        add_issue(I, NOTE, "KernelSpecification.ReferenceArguments", NOWHERE,
                  "not used: --reference computes the expected outputs");
    const char *sim = json_string_value(json_object_get(spec, "SimulationInput"));
    if (sim)
        add_issue(I, NOTE, "KernelSpecification.SimulationInput", NOWHERE,
                  "'%s' is a Kernel Tuner cache: `tunefarm import ARCHIVE %s` reads it into an "
                  "archive",
                  sim, sim);
    if (!I->reference_opt) {
        add_issue(I, UNTRANSLATED, "KernelSpecification", NOWHERE,
                  "a T1 file has no reference, and tunefarm checks every variant's outputs "
                  "against one (host C, void %s_reference(void **args)): pass --reference "
                  "FILE.c[:ENTRY]",
                  I->entry);
    }
    read_search(I);
    return 0;
}

/* True if `name` is a file the import writes other than the reference:
 * kernel.yaml, job.yaml, the source or one of its local headers. */
static bool written_name(const struct imp *I, const char *name)
{
    bool taken = strcmp(name, "kernel.yaml") == 0 || strcmp(name, "job.yaml") == 0 ||
                 strcmp(name, I->source_name) == 0;
    for (int i = 0; i < I->nincs && !taken; i++)
        taken = strcmp(name, I->inc_names[i]) == 0;
    return taken;
}

/* The reference's file name: `want`, or tunefarm_reference.c (then _2, _3,
 * ...) where the import writes another file of that name. */
static char *free_reference_name(const struct imp *I, const char *want)
{
    char *n = tf_xstrdup(want);
    for (int i = 1; written_name(I, n); i++) {
        free(n);
        n = i == 1 ? tf_xstrdup("tunefarm_reference.c") : tf_xasprintf("tunefarm_reference_%d.c", i);
    }
    return n;
}

/* Every file the import writes has a name of its own: the T1 file's
 * KernelFile (or a header it includes) named kernel.yaml or job.yaml, or two
 * headers of one name, would be written over each other. */
static int check_output_names(const struct imp *I)
{
    const char *own[] = {"kernel.yaml", "job.yaml"};
    for (int i = -1; i < I->nincs; i++) {
        const char *n = i < 0 ? I->source_name : I->inc_names[i];
        bool clash = false;
        for (int k = 0; k < 2; k++)
            clash |= strcmp(n, own[k]) == 0;
        if (i >= 0)
            clash |= strcmp(n, I->source_name) == 0;
        for (int j = 0; j < i; j++)
            clash |= strcmp(n, I->inc_names[j]) == 0;
        if (clash) {
            fprintf(stderr, "%s: %s: the %s '%s' would be written over another file of that "
                            "name in the output folder (kernel.yaml, job.yaml, the source and "
                            "its headers each need their own); rename it\n",
                    I->prog, I->path, i < 0 ? "KernelFile" : "included header", n);
            return -1;
        }
    }
    return 0;
}

static int parse_reference(struct imp *I)
{
    if (check_output_names(I) != 0)
        return -1;
    if (!I->reference_opt) {
        I->ref_entry = tf_xasprintf("%s_reference", I->entry);
        I->ref_name = free_reference_name(I, "reference.c");
        return 0;
    }
    const char *colon = strrchr(I->reference_opt, ':');
    if (colon && tf_ydoc_is_ident(colon + 1)) {
        I->ref_in = tf_xasprintf("%.*s", (int)(colon - I->reference_opt), I->reference_opt);
        I->ref_entry = tf_xstrdup(colon + 1);
    } else {
        I->ref_in = tf_xstrdup(I->reference_opt);
        I->ref_entry = tf_xasprintf("%s_reference", I->entry);
    }
    if (!is_file(I->ref_in)) {
        fprintf(stderr, "%s: --reference: '%s' is not a file\n", I->prog, I->ref_in);
        return -1;
    }
    I->ref_name = free_reference_name(I, base_name(I->ref_in));
    return 0;
}

static int write_folder(struct imp *I, const char *dir)
{
    struct tf_error err = {0};
    int rc;
    if (tf_mkdir_p(dir, &err) != 0)
        goto fail;
    /* the source and its local headers, as read_source made them */
    if (write_file(dir, I->source_name, I->source_text, &err) != 0)
        goto fail;
    for (int i = 0; i < I->nincs; i++)
        if (write_file(dir, I->inc_names[i], I->inc_texts[i], &err) != 0)
            goto fail;
    if (I->ref_in) {
        char *ref = read_text(I->ref_in, &err);
        if (!ref || write_file(dir, I->ref_name, ref, &err) != 0) {
            free(ref);
            goto fail;
        }
        free(ref);
    } else {
        char *ref = skeleton_reference(I);
        rc = write_file(dir, I->ref_name, ref, &err);
        free(ref);
        if (rc != 0)
            goto fail;
    }
    char *k = kernel_yaml(I);
    rc = write_file(dir, "kernel.yaml", k, &err);
    free(k);
    if (rc != 0)
        goto fail;
    char *j = job_yaml(I);
    rc = write_file(dir, "job.yaml", j, &err);
    free(j);
    if (rc != 0)
        goto fail;
    return 0;
fail:
    tf_error_print(&err, I->prog, stderr);
    return -1;
}

/* 0 if import-t1 may write DIR/`name`: no folder on the way to it inside DIR
 * (a header's "sub/x.h") and not the file itself a symbolic link, and the file
 * absent unless `force`; else -1, saying why. */
static int check_target(const struct imp *I, const char *dir, const char *name, bool force)
{
    static const char link_why[] = "is a symbolic link; import-t1 writes plain files only: "
                                   "remove it, or -o another folder";
    char *path = tf_path_join(dir, name);
    struct stat st;
    const char *why = NULL;
    for (char *slash = path + strlen(path) - strlen(name); (slash = strchr(slash, '/')); slash++) {
        *slash = '\0';
        if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
            why = link_why; /* `path` stays cut there: it names the link */
            break;
        }
        *slash = '/';
    }
    if (!why && lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode))
            why = link_why;
        else if (!S_ISREG(st.st_mode))
            why = "is not a file; import-t1 writes plain files only: remove it, or -o another "
                  "folder";
        else if (!force)
            why = "exists; pass --force to overwrite the folder's files, or -o another folder";
    }
    if (why)
        fprintf(stderr, "%s: %s %s\n", I->prog, path, why);
    free(path);
    return why ? -1 : 0;
}

/* The files of `dir` write_folder writes, in the order it writes them: a new
 * array of `*n` names (the array to free, not its strings). */
static const char **folder_files(const struct imp *I, int *n)
{
    const char **names = tf_xcalloc((size_t)I->nincs + 4, sizeof *names);
    *n = 0;
    names[(*n)++] = I->source_name;
    for (int i = 0; i < I->nincs; i++)
        names[(*n)++] = I->inc_names[i];
    names[(*n)++] = I->ref_name;
    names[(*n)++] = "kernel.yaml";
    names[(*n)++] = "job.yaml";
    return names;
}

/* Remove what write_folder made in `dir` that was not there before
 * (`existed[i]` for folder_files' names; `dir_existed` for the folder):
 * the files, then the folders they were in, deepest first, where empty. */
static void remove_written(const struct imp *I, const char *dir, const bool *existed,
                           bool dir_existed)
{
    int n;
    const char **names = folder_files(I, &n);
    for (int i = n - 1; i >= 0; i--) {
        if (existed[i])
            continue;
        char *path = tf_path_join(dir, names[i]);
        unlink(path);
        /* a header's folders (include/x.h), where nothing else is there */
        for (char *slash = strrchr(path, '/'); slash != NULL && slash > path + strlen(dir);
             slash = strrchr(path, '/')) {
            *slash = '\0';
            if (rmdir(path) != 0)
                break;
        }
        free(path);
    }
    if (!dir_existed)
        rmdir(dir);
    free(names);
}

int tf_t1_tool_main(int argc, char **argv)
{
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"source", required_argument, NULL, 's'},
                                             {"reference", required_argument, NULL, 'r'},
                                             {"name", required_argument, NULL, 'n'},
                                             {"rtol", required_argument, NULL, 'R'},
                                             {"atol", required_argument, NULL, 'A'},
                                             {"partial", no_argument, NULL, 'p'},
                                             {"force", no_argument, NULL, 'f'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct imp I = {.prog = "tunefarm import-t1", .rtol = -1, .atol = -1};
    const char *out_dir = NULL, *name_opt = NULL;
    bool force = false;
    int c;
    optind = 2;
    while ((c = getopt_long(argc, argv, "o:s:r:n:pfqh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': out_dir = optarg; break;
        case 's': I.source_opt = optarg; break;
        case 'r': I.reference_opt = optarg; break;
        case 'n': name_opt = optarg; break;
        case 'R':
        case 'A': {
            char *end = NULL;
            const double v = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(v >= 0 && v < 1e30)) {
                fprintf(stderr, "%s: --%s '%s': expected a number >= 0\n", I.prog,
                        c == 'R' ? "rtol" : "atol", optarg);
                return EXIT_USAGE;
            }
            *(c == 'R' ? &I.rtol : &I.atol) = v;
            break;
        }
        case 'p': I.partial = true; break;
        case 'f': force = true; break;
        case 'q': I.quiet = true; break;
        case 'h': fputs(tf_t1_tool_usage, stdout); return EXIT_OK;
        default: fputs(tf_t1_tool_usage, stderr); return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "%s: expected one T1 file\n\n%s", I.prog, tf_t1_tool_usage);
        return EXIT_USAGE;
    }
    I.path = argv[optind];
    if (name_opt && (!tf_ydoc_is_ident(name_opt) || strlen(name_opt) > TF_KERNEL_NAME_MAX)) {
        fprintf(stderr, "%s: --name '%s' is not an identifier of at most %d bytes\n", I.prog,
                name_opt, TF_KERNEL_NAME_MAX);
        return EXIT_USAGE;
    }
    if (I.source_opt && !is_file(I.source_opt)) {
        fprintf(stderr, "%s: --source: '%s' is not a file\n", I.prog, I.source_opt);
        return EXIT_USAGE;
    }
    int code = EXIT_USAGE;
    char *dir = NULL;
    if (read_t1(&I, name_opt) != 0 || parse_reference(&I) != 0)
        goto done;
    dir = out_dir ? tf_xstrdup(out_dir) : tf_path_join(".", I.name);
    for (int i = 0; i < I.nissues; i++)
        if (I.issues[i].sev == UNTRANSLATED || !I.quiet)
            print_issue(&I, &I.issues[i], stderr);
    if (I.nuntranslated > 0 && !I.partial) {
        fprintf(stderr,
                "%s: %d item%s not translated; nothing written. Fix %s, or pass --partial to "
                "write the rest (each left out is a comment in kernel.yaml)\n",
                I.prog, I.nuntranslated, I.nuntranslated == 1 ? "" : "s", I.path);
        goto done;
    }
    /* Every file it would write: none may be a link (written through, it
     * would replace a file outside the folder), and none may exist without
     * --force. And which are there now, so that a folder that does not load
     * leaves none of its files behind (what --force overwrote stays so). */
    int nfiles;
    const char **files = folder_files(&I, &nfiles);
    bool *existed = tf_xcalloc((size_t)nfiles, sizeof *existed);
    struct stat st;
    for (int i = 0; i < nfiles; i++) {
        if (check_target(&I, dir, files[i], force)) {
            free(files);
            free(existed);
            goto done;
        }
        char *path = tf_path_join(dir, files[i]);
        existed[i] = lstat(path, &st) == 0;
        free(path);
    }
    free(files);
    const bool dir_existed = stat(dir, &st) == 0;
    if (write_folder(&I, dir) != 0) {
        free(existed);
        code = EXIT_WRITE;
        goto done;
    }
    /* What was written loads: the job, and through it the kernel. */
    struct tf_bundle *b = tf_bundle_create();
    char *jpath = tf_path_join(dir, "job.yaml");
    struct tf_error err = {0};
    struct tf_job *job = tf_job_load(jpath, b, &err);
    if (!job) {
        tf_error_print(&err, I.prog, stderr);
        /* The T1 file's values can be what does not load (a Size of -5, of
         * 2**70): no half-usable folder is left for `tunefarm run` to meet. */
        remove_written(&I, dir, existed, dir_existed);
        fprintf(stderr, "%s: the kernel written from %s does not load (above); the files were "
                        "removed. Fix the T1 value it names (kernel.md says what each key of "
                        "kernel.yaml takes); if the T1 file is right, this is import-t1's "
                        "fault: please report it with the T1 file\n",
                I.prog, I.path);
    } else {
        const struct tf_kernel *k = job->kernels[0].kernel;
        printf("wrote %s: kernel %s, %d parameters (%" PRIu64 " configurations), %d of %d "
               "restrictions, %d arguments%s\n",
               dir, k->name, k->nparams, tf_kernel_cartesian(k), k->nconstraints, I.ncons,
               k->nargs,
               I.nuntranslated ? "; NOT TRANSLATED items are comments in kernel.yaml" : "");
        printf("  tunefarm space %s            count its valid configurations\n", dir);
        printf("  tunefarm compile %s/job.yaml --arch sm_90   compile them ahead\n", dir);
        printf("  tunefarm run %s/job.yaml      tune it\n", dir);
        code = EXIT_OK;
    }
    tf_job_destroy(job);
    tf_bundle_destroy(b);
    free(jpath);
    free(existed);
done:
    free(dir);
    imp_free(&I);
    return code;
}
