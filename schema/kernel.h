/* kernel.h - the kernel file (kernels/NAME/kernel.yaml): what can be tuned.
 *
 * A kernel is a source file and entry point, named problem sizes, parameters
 * (lists of ints or enum strings), constraints, launch geometry, arguments,
 * verification and derived metrics. The loader (libyaml) validates everything
 * up front: every expression is compiled, every name resolved, and every error
 * names file:line:column. schema/kernel.md is the user-facing spec.
 *
 * Expression slots (struct tf_symtab): parameters first, then problem sizes,
 * then device properties (enum tf_devprop), then `time_s` (metrics only). */
#ifndef TF_KERNEL_H
#define TF_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bundle.h"
#include "device.h"
#include "error.h"
#include "expr.h"

/* Names the archive stores in fixed-size fields (schema/archive.h, archive.c),
 * checked at load so that what is archived is what was written: the kernel
 * name in the /plan table's 128-byte column, a problem name in the problems
 * table's 64-byte column (63 and the NUL), an enum value in its parameter's
 * 32-byte results column. */
#define TF_KERNEL_NAME_MAX 128
#define TF_PROBLEM_NAME_MAX 63
#define TF_ENUM_VALUE_MAX 32

enum tf_param_kind { TF_PARAM_INT, TF_PARAM_ENUM };

struct tf_param {
    char *name;
    enum tf_param_kind kind;
    int count;          /* number of values, >= 1 */
    int64_t *ints;      /* TF_PARAM_INT: the values */
    char **strings;     /* TF_PARAM_ENUM: the values; slot value is the index */
};

enum tf_elem_type { TF_ELEM_I32, TF_ELEM_I64, TF_ELEM_F32, TF_ELEM_F64 };
enum tf_init { TF_INIT_RANDOM, TF_INIT_ZERO, TF_INIT_ONES, TF_INIT_POISON };
enum tf_arg_kind { TF_ARG_SCALAR, TF_ARG_BUFFER };

struct tf_arg {
    char *name;
    enum tf_arg_kind kind;
    enum tf_elem_type type;
    struct tf_expr *value; /* scalar: its value */
    struct tf_expr *size;  /* buffer: element count */
    enum tf_init init;     /* buffer: how inputs are filled (outputs default to poison) */
    bool init_range;       /* TF_INIT_RANDOM in [init_lo, init_hi) rather than the default
                              range (ints [0, 100), floats [-1, 1)); ints for int buffers */
    struct tf_value init_lo, init_hi;
    bool output;           /* buffer: compared against the reference */
};

struct tf_problem {
    char *name;
    int64_t *sizes; /* one per kernel size name, in tf_kernel.size_names order */
};

struct tf_kernel {
    char *name;
    char *description;
    char *file;          /* path of kernel.yaml, for messages */
    char *dir;           /* its folder */
    char *language;      /* "c" (host backend) or "cuda" (cuda/hip backends) */
    char *source_path;
    const char *source;  /* contents (owned by the bundle) */
    char *entry;
    char *ref_source_path; /* host C reference */
    const char *ref_source;
    char *ref_entry;
    int option_count;
    char **options;      /* extra compiler flags */

    int nparams;
    struct tf_param *params;
    int nsizes;
    char **size_names;
    int nproblems;
    struct tf_problem *problems;
    int nconstraints;
    struct tf_expr **constraints;
    int *constraint_lines, *constraint_columns; /* where each is in `file` (1-based) */
    struct tf_expr *grid[3], *block[3], *shared; /* NULL: 1 (grid/block) or 0 (shared) */
    int nargs;
    struct tf_arg *args;
    double rtol, atol;
    int nmetrics;
    char **metric_names;
    struct tf_expr **metrics;
    /* The configuration a user would write untuned (`default:`). A default value
     * may be an expression over the problem sizes (HEAD_DIM: D), so each problem
     * has its own: problem_defaults[p] is problem p's (nproblems entries, owned;
     * NULL when the file has no default). has_default is true, and default_index
     * that configuration, only when it is the same for every problem, so code
     * that ignores the problem never uses another problem's default. Read it
     * with tf_kernel_default_for. */
    bool has_default;
    uint64_t default_index;
    uint64_t *problem_defaults;

    /* Problem sizes compiled into every variant as -DNAME=value (`defines:`):
     * ndefine_sizes indices into size_names, in file order (all sizes for
     * `defines: all`). A variant's binary then depends on the problem. */
    int ndefine_sizes;
    int *define_sizes;
    /* The parameters the reference's outputs depend on (`reference.depends_on`,
     * indices into params, in file order): the reference runs once per distinct
     * combination of their values and is given them (kernel.md, References).
     * `reference.independent_of` lists those whose value changes nothing in the
     * expected outputs although arguments read them. An argument may read a
     * parameter only if it is in one of the two lists (checked at load). */
    int nref_depends;
    int *ref_depends;
    int nref_independent;
    int *ref_independent;

    int nslots;             /* nparams + nsizes + TF_DEVPROP_COUNT + 2 (time_s, energy_j) */
    struct tf_symbol *symbols;
    struct tf_symtab symtab;
    char source_hash[65];   /* SHA-256 of kernel.yaml, source and reference */
};

/* Load and validate `path` (a kernel.yaml) through `bundle`. NULL + `err` on failure. */
struct tf_kernel *tf_kernel_load(const char *path, struct tf_bundle *bundle, struct tf_error *err);
/* Free; accepts NULL. */
void tf_kernel_destroy(struct tf_kernel *k);

/* Slot helpers. */
static inline int tf_kernel_size_slot(const struct tf_kernel *k, int i) { return k->nparams + i; }
static inline int tf_kernel_devprop_slot(const struct tf_kernel *k, int p) { return k->nparams + k->nsizes + p; }
static inline int tf_kernel_time_slot(const struct tf_kernel *k) { return k->nparams + k->nsizes + TF_DEVPROP_COUNT; }
/* Metrics only, like time_s: one launch's energy in joules (NaN where not measured). */
static inline int tf_kernel_energy_slot(const struct tf_kernel *k) { return tf_kernel_time_slot(k) + 1; }
/* The symbols every expression but a metric may read: all but time_s and energy_j. */
#define TF_KERNEL_METRIC_ONLY_SLOTS 2

/* The default configuration of problem `problem` into *index; false if it has none
 * (no `default:`, or `problem` out of range). A kernel built by hand without
 * problem_defaults falls back to has_default / default_index. */
bool tf_kernel_default_for(const struct tf_kernel *k, int problem, uint64_t *index);
/* Number of configurations in the Cartesian product (saturates at UINT64_MAX). */
uint64_t tf_kernel_cartesian(const struct tf_kernel *k);
/* Split `index` into one value index per parameter (mixed radix, parameter 0 most significant). */
void tf_kernel_decode(const struct tf_kernel *k, uint64_t index, int *digits);
/* Inverse of tf_kernel_decode. */
uint64_t tf_kernel_encode(const struct tf_kernel *k, const int *digits);
/* Fill `slots` (k->nslots long): parameters from `index`, sizes from problem
 * `problem`, device properties from `dev` (NULL: all zero), time_s = 0,
 * energy_j = NaN. */
void tf_kernel_bind(const struct tf_kernel *k, uint64_t index, int problem,
                    const struct tf_device *dev, struct tf_value *slots);
/* Check every constraint for a bound slot array; *valid false if one fails.
 * -1 with `err` if a constraint cannot be evaluated. */
int tf_kernel_check(const struct tf_kernel *k, const struct tf_value *slots, bool *valid,
                    struct tf_error *err);
/* Fill `err` for constraint `c` of `k` that failed to evaluate (`cause`) on the
 * configuration bound in `slots` for `problem`: file:line:col of the
 * constraint, the configuration, and what to do. Returns -1. */
int tf_kernel_constraint_error(const struct tf_kernel *k, int c, int problem,
                               const struct tf_value *slots, const struct tf_error *cause,
                               struct tf_error *err);
/* True if `v` converts to a scalar argument of type `type` without changing
 * (int32 and int64: a whole number in range; float32 and float64: finite, in
 * range, and an integer exactly representable). Otherwise false and why into
 * `why` ("3000000000 is outside int32's range -2147483648..2147483647"). */
bool tf_scalar_fits(enum tf_elem_type type, struct tf_value v, char *why, size_t cap);
/* Write "P1=v1 P2=v2 ..." for configuration `index` into `out`. */
void tf_kernel_format_config(const struct tf_kernel *k, uint64_t index, char *out, int cap);
/* Write the compiler defines of configuration `index` as "-DNAME=VALUE" strings
 * (enum values also define NAME_value=1); returns how many were written (<= max). */
int tf_kernel_defines(const struct tf_kernel *k, uint64_t index, char **out, int max);
/* Write the defines of problem `problem`'s sizes that the kernel asks for
 * (`defines:`) as "-DNAME=VALUE" strings; returns how many (<= max; 0 for a
 * kernel without `defines:` or a problem out of range). A variant is compiled
 * with these after tf_kernel_defines'. */
int tf_kernel_size_defines(const struct tf_kernel *k, int problem, char **out, int max);
/* Write the defines the reference is compiled with, "-DTF_REF_NAME=I": the
 * index I into the reference's argument array of each size and each parameter
 * of reference.depends_on (kernel.md, References); returns how many (<= max). */
int tf_kernel_reference_defines(const struct tf_kernel *k, char **out, int max);
/* The parameters of reference.depends_on as bound in `slots` (an int
 * parameter's value, an enum's index) into values[nref_depends]. */
void tf_kernel_reference_values(const struct tf_kernel *k, const struct tf_value *slots,
                                int64_t *values);
/* The same for configuration `index` of the parameters `params[0..nparams)`
 * (an archived kernel's): tf_kernel_defines is this over the kernel's
 * parameters, so `tunefarm best` gives exactly the flags a worker compiled. */
int tf_param_defines(const struct tf_param *params, int nparams, uint64_t index, char **out,
                     int max);

/* Why no parameter of a kernel in `language` ("c" or "cuda") can be called
 * `name`, whatever else the file names: a device property or time_s, a
 * results column, a word of the expression language, or a compiler define
 * that breaks (tf_define_conflict); NULL when one can. The loader refuses
 * these names; a tool that writes kernel files (import-t1) renames them. */
const char *tf_kernel_param_name_conflict(const char *name, const char *language);

#endif
