/* archive_internal.h - what the pieces of the archive module share about its model.
 *
 * Internal to schema/archive*.c; callers use archive.h. The module is split one
 * idea a file: archive.c the in-memory model (create, devices, runs, kernels,
 * problems, rows, plans), archive_merge.c one archive into another,
 * archive_validate.c what a model must satisfy to be written and read back,
 * archive_layout.c the tables of the file, archive_table.c packed-row tables
 * as HDF5 compound datasets, archive_h5.c HDF5 errors and attributes,
 * archive_write.c the atomic writer, archive_read.c the checking reader.
 * Declared here: the model helpers (archive.c) the others use, and the
 * validation (archive_validate.c). */
#ifndef TF_ARCHIVE_INTERNAL_H
#define TF_ARCHIVE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "archive.h"

/* Free `n` strings and the array; accepts NULL. */
void tf_archive_strings_free(char **v, int n);
/* A new array of new copies of `n` strings (one slot at least). */
char **tf_archive_strings_copy(char *const *v, int n);
/* True if `s` is an archive id: exactly 32 lowercase hex digits. */
bool tf_archive_valid_id(const char *s);
/* The value index of each parameter of configuration `index` into `digits`
 * (nparams): mixed radix, parameter 0 most significant (tf_kernel_decode's
 * convention). */
void tf_archive_decode(const struct tf_archive_kernel *ak, uint64_t index, int *digits);

/* What must agree for rows of one kernel to share a table: parameters (names,
 * kinds, values, order), size names and metric names. `k` is a view of a
 * kernel file or of another archive's entry. */
struct tf_archive_shape {
    int nparams;
    const struct tf_param *params;
    int nsizes;
    char *const *size_names;
    int nmetrics;
    char *const *metric_names;
};
/* 0 if `ak` has shape `k`: the same parameters (names, kinds, values), sizes
 * and metrics; else -1 and an error naming the first difference. */
int tf_archive_shape_compare(const struct tf_archive_kernel *ak, const struct tf_archive_shape *k,
                             struct tf_error *err);
/* A new entry named `name` with deep copies of `shape` (no provenance, no problems, no rows). */
struct tf_archive_kernel tf_archive_kernel_of_shape(const char *name,
                                                    const struct tf_archive_shape *shape);
/* Index of a problem named `name` (truncated as stored) with `sizes` in `ak`,
 * added, without a default, if new. */
uint32_t tf_archive_problem_like(struct tf_archive_kernel *ak, const char *name,
                                 const int64_t *sizes);

/* 0 if kernel entry `ak` can be laid out in the file and read back (a group
 * name, values, enum values that fit their column, at most TF_MAX_METRICS
 * metrics, no column name twice); else -1 (+err naming `file`). */
int tf_archive_kernel_validate(const struct tf_archive_kernel *ak, const char *file,
                               struct tf_error *err);
/* 0 if every kernel of `a` validates, kernel names are distinct and every
 * reference (plan rows, problem defaults, result rows) is in range; else -1
 * (+err naming `path`): the writer refuses such a model before writing. */
int tf_archive_model_validate(const struct tf_archive *a, const char *path,
                              struct tf_error *err);

#endif
