/* archive_h5.h - the HDF5 plumbing under the archive: quiet errors, ids, attributes.
 *
 * Internal to schema/archive*.c. Each archive call silences HDF5's automatic
 * error printing for its duration and reports through `struct tf_error`, with
 * HDF5's innermost complaint folded in (tf_h5_error). Attribute writers return
 * 0 or -1 and leave the message to the caller, which knows what it was
 * writing; attribute readers name `file`, the object and the attribute in
 * their error, and check class, shape and size, since a damaged file must
 * give an error, never a crash. */
#ifndef TF_ARCHIVE_H5_H
#define TF_ARCHIVE_H5_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* HDF5's automatic error handler, saved while an archive call runs. */
struct tf_h5_quiet {
    H5E_auto2_t func;
    void *data;
};

/* Save HDF5's automatic error handler in `q`, switch it off, clear the error stack. */
void tf_h5_quiet_begin(struct tf_h5_quiet *q);
/* Give back the handler tf_h5_quiet_begin saved. */
void tf_h5_quiet_end(const struct tf_h5_quiet *q);
/* Fill `err` with the formatted message plus HDF5's most specific complaint,
 * clear HDF5's error stack; returns -1. */
int tf_h5_error(struct tf_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Close `*id` with `fn` if it is open, and mark it closed (safe to call twice). */
void tf_h5_close(hid_t *id, herr_t (*fn)(hid_t));
/* "integer", "float", "string", ... for messages. */
const char *tf_h5_class_name(H5T_class_t c);

/* Scalar attribute `name` of `obj`, file type `ftype`, from `v` of memory type `mtype`: 0 or -1. */
int tf_h5_attr_write_scalar(hid_t obj, const char *name, hid_t ftype, hid_t mtype,
                            const void *v);
/* Fixed-length NUL-padded strings, as wide as the longest; `scalar` for one
 * string. An empty list is a 0-length 1-D attribute. 0 or -1. */
int tf_h5_attr_write_strings(hid_t obj, const char *name, const char *const *v, int n,
                             int scalar);
/* One string as a scalar attribute: 0 or -1. */
int tf_h5_attr_write_string(hid_t obj, const char *name, const char *v);
/* `n` int64 values as a 1-D little-endian attribute: 0 or -1. */
int tf_h5_attr_write_i64s(hid_t obj, const char *name, const int64_t *v, int n);

/* Open attribute `name` of `obj` (called `objname` in messages): 1 found (in
 * *out, to close), 0 absent and not `required`, -1 error (+err). */
int tf_h5_attr_open(hid_t obj, const char *objname, const char *name, int required, hid_t *out,
                    const char *file, struct tf_error *err);
/* A string attribute (scalar or 1-D; fixed or variable length) as a new array
 * of *n new strings. Absent and not required: *out NULL, *n = 0, returns 0. */
int tf_h5_attr_read_strings(hid_t obj, const char *objname, const char *name, int required,
                            char ***out, int *n, const char *file, struct tf_error *err);
/* A required attribute of one string (scalar or 1-element) into `out` of `cap`
 * bytes; longer is an error. */
int tf_h5_attr_read_string(hid_t obj, const char *objname, const char *name, char *out,
                           size_t cap, const char *file, struct tf_error *err);
/* A numeric attribute of class `cls` (scalar or one element) converted to
 * `mtype` into `out`: 1 read, 0 absent and not `required`, -1 error. */
int tf_h5_attr_read_number(hid_t obj, const char *objname, const char *name, int required,
                           H5T_class_t cls, hid_t mtype, void *out, const char *file,
                           struct tf_error *err);
/* A required 1-D integer attribute as a new int64 array of *n values. */
int tf_h5_attr_read_i64s(hid_t obj, const char *objname, const char *name, int64_t **out,
                         int *n, const char *file, struct tf_error *err);

#endif
