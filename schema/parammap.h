/* parammap.h - configurations of one parameter space as configurations of another.
 *
 * Two descriptions of the same tunable code may list their parameters in
 * another order and write their values another way (a Kernel Tuner cache's
 * 16.0 is a kernel's 16; an int 16 and an enum "16" are one value). A warm
 * start reads other devices' configurations from an archive into a job's
 * kernel (coordinator/plan.c); a replay answers a job's configurations from an
 * archive or a Kernel Tuner cache (worker/backend_replay.c). Both go through
 * a map from a `from` space to a `to` space: parameters are matched by name,
 * values by text, or by number where both sides have numbers (exact below
 * 2^53), and a configuration index of `from` (mixed radix, parameter 0 most
 * significant: schema/space.h) becomes the index of the same values in `to`.
 *
 * Rules: names must be distinct within each space (two parameters of one name
 * would make the match ambiguous: refused); every parameter of `to` must have
 * one of its name in `from` (else refused); a parameter of `from` that `to`
 * lacks is ignored (configurations that differ only in it map to one); a
 * value of `from` that `to` lacks leaves every configuration holding it
 * unmapped. An exact map (tf_parammap_create's `exact`) must also be one to
 * one and onto: the same names and the same value sets on both sides. Any
 * number of parameters; `to`'s Cartesian product must fit in 64 bits.
 *
 * Also here: tf_config_cmp, the qsort/bsearch order of configuration indices. */
#ifndef TF_PARAMMAP_H
#define TF_PARAMMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "kernel.h"
#include "ktcache.h"

/* A space's parameters as a map reads them: names, value texts and numbers. */
struct tf_parammap_space;
/* How configurations of one space map onto another. */
struct tf_parammap;

/* The parameters `p[0..n)` of a kernel or an archive kernel (copied), called
 * `label` in error messages ("kernel 'gemm' (kernels/gemm/kernel.yaml)"). */
struct tf_parammap_space *tf_parammap_space_params(const struct tf_param *p, int n,
                                                   const char *label);
/* The parameters of Kernel Tuner cache `c` (copied), called `label`. */
struct tf_parammap_space *tf_parammap_space_ktcache(const struct tf_ktcache *c,
                                                    const char *label);
/* Free; accepts NULL. */
void tf_parammap_space_destroy(struct tf_parammap_space *s);
/* How many parameters `s` has. */
int tf_parammap_space_nparams(const struct tf_parammap_space *s);

/* The map from `from` onto `to` (both may be destroyed afterwards). With
 * `exact`, refused unless one to one and onto. NULL + err naming both
 * labels, the parameter and the difference. */
struct tf_parammap *tf_parammap_create(const struct tf_parammap_space *from,
                                       const struct tf_parammap_space *to, bool exact,
                                       struct tf_error *err);
/* Free; accepts NULL. */
void tf_parammap_destroy(struct tf_parammap *m);
/* Configuration `x` of `from` as a configuration of `to` in *y: true, or
 * false if it does not map (a value `to` lacks, or `x` outside `from`). */
bool tf_parammap_apply(const struct tf_parammap *m, uint64_t x, uint64_t *y);

/* Value `d` of parameter `p` as text ("16", "float4"): how values are
 * written in messages and matched. */
void tf_param_value_text(const struct tf_param *p, int d, char *out, size_t cap);

/* qsort/bsearch comparison of two uint64_t configuration indices, ascending. */
int tf_config_cmp(const void *a, const void *b);

#endif
