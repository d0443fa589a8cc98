/* archive_h5.c - the HDF5 plumbing under the archive: quiet errors, ids and attributes.
 *
 * HDF5 prints its whole error stack to stderr by default; each archive call
 * switches that off for its duration and reports through tf_error, with the
 * innermost HDF5 message folded into ours. Attributes are written as
 * little-endian numbers and fixed-length NUL-padded strings as wide as the
 * longest, and read tolerantly (scalar or 1-D; fixed or variable length,
 * ASCII or UTF-8, as h5py writes them) with class, shape and size checked
 * first, since a damaged or hostile file must give an error, not a crash or
 * an allocation without end. */
#include "archive_h5.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive_internal.h"

#define MAX_ATTR_ITEMS (1 << 24)   /* a hostile file must not make us allocate without end */

/* HDF5 prints its whole error stack to stderr by default; we report through tf_error. */
void tf_h5_quiet_begin(struct tf_h5_quiet *q)
{
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    H5Eclear2(H5E_DEFAULT);
}

void tf_h5_quiet_end(const struct tf_h5_quiet *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

static herr_t innermost_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0 && e->desc != NULL)
        tf_strlcpy(data, e->desc, 256);
    return 0;
}

/* Fill `err` with the formatted message plus HDF5's most specific complaint. */
int tf_h5_error(struct tf_error *err, const char *fmt, ...)
{
    char msg[768], detail[256] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_cb, detail);
    H5Eclear2(H5E_DEFAULT);
    /* A system call's failure reads "file write failed: time = ..., errno =
     * 28, error message = ..., buf = 0x..." (and is cut at 256 bytes): keep
     * what failed and say the errno in words ("No space left on device"). */
    const char *en = strstr(detail, "errno = ");
    const char *colon = strchr(detail, ':');
    if (en != NULL && colon != NULL && colon < en) {
        const int code = atoi(en + 8);
        if (code > 0)
            return tf_error_set(err, TF_ERR_HDF5, "%s: %.*s: %s", msg, (int)(colon - detail),
                                detail, strerror(code));
    }
    if (detail[0])
        return tf_error_set(err, TF_ERR_HDF5, "%s (HDF5: %s)", msg, detail);
    return tf_error_set(err, TF_ERR_HDF5, "%s", msg);
}

void tf_archive_no_atexit(void)
{
    H5dont_atexit();
}

void tf_h5_close(hid_t *id, herr_t (*fn)(hid_t))
{
    if (*id >= 0)
        fn(*id);
    *id = H5I_INVALID_HID;
}

static char *xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = tf_xmalloc(len + 1);
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

const char *tf_h5_class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_STRING: return "string";
    case H5T_ENUM: return "enum";
    case H5T_COMPOUND: return "compound";
    case H5T_ARRAY: return "array";
    case H5T_VLEN: return "variable-length";
    default: return "another type";
    }
}

static int attr_write(hid_t obj, const char *name, hid_t ftype, hid_t mtype, hid_t space,
                      const void *buf)
{
    hid_t at = H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    if (at < 0)
        return -1;
    herr_t rc = H5Awrite(at, mtype, buf);
    H5Aclose(at);
    return rc < 0 ? -1 : 0;
}

int tf_h5_attr_write_scalar(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *v)
{
    hid_t space = H5Screate(H5S_SCALAR);
    int rc = space < 0 ? -1 : attr_write(obj, name, ftype, mtype, space, v);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* Fixed-length NUL-padded strings, as wide as the longest; `scalar` for one string.
 * An empty list is a 0-length 1-D attribute. */
int tf_h5_attr_write_strings(hid_t obj, const char *name, const char *const *v, int n, int scalar)
{
    size_t width = 1;
    for (int i = 0; i < n; i++)
        if (strlen(v[i]) > width)
            width = strlen(v[i]);
    char *buf = tf_xcalloc((size_t)(n > 0 ? n : 1), width);
    for (int i = 0; i < n; i++)
        memcpy(buf + (size_t)i * width, v[i], strlen(v[i]));
    hsize_t dims[1] = {(hsize_t)n};
    hid_t type = H5Tcopy(H5T_C_S1);
    hid_t space = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, NULL);
    int rc = -1;
    if (type >= 0 && space >= 0 && H5Tset_size(type, width) >= 0 &&
        H5Tset_strpad(type, H5T_STR_NULLPAD) >= 0)
        rc = attr_write(obj, name, type, type, space, buf);
    if (type >= 0)
        H5Tclose(type);
    if (space >= 0)
        H5Sclose(space);
    free(buf);
    return rc;
}

int tf_h5_attr_write_string(hid_t obj, const char *name, const char *v)
{
    return tf_h5_attr_write_strings(obj, name, &v, 1, 1);
}

int tf_h5_attr_write_i64s(hid_t obj, const char *name, const int64_t *v, int n)
{
    hsize_t dims[1] = {(hsize_t)n};
    hid_t space = H5Screate_simple(1, dims, NULL);
    int rc = space < 0 ? -1 : attr_write(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, space, v);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* Open attribute `name` of `obj`: 1 found (in *out), 0 absent, -1 error. */
int tf_h5_attr_open(hid_t obj, const char *objname, const char *name, int required, hid_t *out,
                    const char *file, struct tf_error *err)
{
    *out = H5I_INVALID_HID;
    htri_t ex = H5Aexists(obj, name);
    if (ex < 0)
        return tf_h5_error(err, "%s: cannot look up attribute '%s' of %s", file, name, objname);
    if (ex == 0) {
        if (required)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: %s has no attribute '%s'", file,
                                objname, name);
        return 0;
    }
    *out = H5Aopen(obj, name, H5P_DEFAULT);
    if (*out < 0)
        return tf_h5_error(err, "%s: cannot open attribute '%s' of %s", file, name, objname);
    return 1;
}

/* Element count of an attribute's dataspace (scalar 1, null 0, at most 1-D). */
static int attr_count(hid_t at, hid_t *space, hsize_t *n)
{
    *space = H5Aget_space(at);
    if (*space < 0)
        return -1;
    H5S_class_t cls = H5Sget_simple_extent_type(*space);
    if (cls == H5S_NULL) {
        *n = 0;
        return 0;
    }
    if (cls != H5S_SCALAR && H5Sget_simple_extent_ndims(*space) > 1)
        return -1;
    hssize_t np = H5Sget_simple_extent_npoints(*space);
    if (np < 0 || np > MAX_ATTR_ITEMS)
        return -1;
    *n = (hsize_t)np;
    return 0;
}

/* A string attribute (scalar or 1-D; fixed or variable length) as an array of
 * new strings. Absent and not required: *n = 0, returns 0. */
int tf_h5_attr_read_strings(hid_t obj, const char *objname, const char *name, int required,
                            char ***out, int *n, const char *file, struct tf_error *err)
{
    hid_t at = H5I_INVALID_HID, ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
    hid_t space = H5I_INVALID_HID;
    char *buf = NULL;
    char **vbuf = NULL;
    hsize_t count = 0;
    int rc = -1;
    *out = NULL;
    *n = 0;

    int found = tf_h5_attr_open(obj, objname, name, required, &at, file, err);
    if (found <= 0)
        return found;
    ftype = H5Aget_type(at);
    if (ftype < 0 || H5Tget_class(ftype) != H5T_STRING || attr_count(at, &space, &count) != 0) {
        H5Eclear2(H5E_DEFAULT);
        tf_error_set(err, TF_ERR_SCHEMA, "%s: attribute '%s' of %s is not a string or a 1-D "
                     "array of strings", file, name, objname);
        goto fail;
    }
    char **v = tf_xcalloc((size_t)(count > 0 ? count : 1), sizeof *v);
    *out = v;
    if (count == 0) {
        rc = 0;
        goto fail;
    }
    mtype = H5Tcopy(H5T_C_S1);
    /* HDF5 will not convert between ASCII and UTF-8; h5py writes UTF-8. */
    H5Tset_cset(mtype, H5Tget_cset(ftype));
    if (H5Tis_variable_str(ftype) > 0) {
        vbuf = tf_xcalloc((size_t)count, sizeof *vbuf);
        if (H5Tset_size(mtype, H5T_VARIABLE) < 0 || H5Aread(at, mtype, vbuf) < 0) {
            tf_h5_error(err, "%s: cannot read attribute '%s' of %s", file, name, objname);
            goto fail;
        }
        for (hsize_t i = 0; i < count; i++)
            v[i] = tf_xstrdup(vbuf[i] ? vbuf[i] : "");
        H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, vbuf);
    } else {
        size_t width = H5Tget_size(ftype);
        if (width == 0 || width > (1u << 20)) {
            tf_error_set(err, TF_ERR_SCHEMA, "%s: attribute '%s' of %s has strings of %zu bytes",
                         file, name, objname, width);
            goto fail;
        }
        buf = tf_xmalloc((size_t)count * width);
        if (H5Tset_size(mtype, width) < 0 || H5Tset_strpad(mtype, H5T_STR_NULLPAD) < 0 ||
            H5Aread(at, mtype, buf) < 0) {
            tf_h5_error(err, "%s: cannot read attribute '%s' of %s", file, name, objname);
            goto fail;
        }
        for (hsize_t i = 0; i < count; i++)
            v[i] = xstrndup(buf + i * width, width);
    }
    *n = (int)count;
    rc = 0;
fail:
    if (rc != 0 && *out) {
        tf_archive_strings_free(*out, (int)count);
        *out = NULL;
    }
    free(buf);
    free(vbuf);
    tf_h5_close(&mtype, H5Tclose);
    tf_h5_close(&space, H5Sclose);
    tf_h5_close(&ftype, H5Tclose);
    tf_h5_close(&at, H5Aclose);
    return rc;
}

/* One string (scalar or 1-element) into `out`. */
int tf_h5_attr_read_string(hid_t obj, const char *objname, const char *name, char *out, size_t cap,
                           const char *file, struct tf_error *err)
{
    char **v = NULL;
    int n = 0;
    if (tf_h5_attr_read_strings(obj, objname, name, 1, &v, &n, file, err) != 0)
        return -1;
    int rc = 0;
    if (n != 1)
        rc = tf_error_set(err, TF_ERR_SCHEMA, "%s: attribute '%s' of %s should hold one string",
                          file, name, objname);
    else if (strlen(v[0]) >= cap)
        rc = tf_error_set(err, TF_ERR_SCHEMA, "%s: attribute '%s' of %s is longer than %zu bytes",
                          file, name, objname, cap - 1);
    else
        tf_strlcpy(out, v[0], cap);
    tf_archive_strings_free(v, n);
    return rc;
}

/* A numeric attribute (scalar or one element) converted to `mtype`: 1 read, 0 absent. */
int tf_h5_attr_read_number(hid_t obj, const char *objname, const char *name, int required,
                           H5T_class_t cls, hid_t mtype, void *out, const char *file,
                           struct tf_error *err)
{
    hid_t at = H5I_INVALID_HID, ftype = H5I_INVALID_HID, space = H5I_INVALID_HID;
    hsize_t count = 0;
    int rc = -1;
    int found = tf_h5_attr_open(obj, objname, name, required, &at, file, err);
    if (found <= 0)
        return found;
    ftype = H5Aget_type(at);
    if (ftype < 0 || H5Tget_class(ftype) != cls || attr_count(at, &space, &count) != 0 ||
        count != 1) {
        H5Eclear2(H5E_DEFAULT);
        tf_error_set(err, TF_ERR_SCHEMA, "%s: attribute '%s' of %s should be one %s", file, name,
                     objname, tf_h5_class_name(cls));
        goto fail;
    }
    if (H5Aread(at, mtype, out) < 0) {
        tf_h5_error(err, "%s: cannot read attribute '%s' of %s", file, name, objname);
        goto fail;
    }
    rc = 1;
fail:
    tf_h5_close(&space, H5Sclose);
    tf_h5_close(&ftype, H5Tclose);
    tf_h5_close(&at, H5Aclose);
    return rc;
}

/* A required 1-D integer attribute as a new int64 array. */
int tf_h5_attr_read_i64s(hid_t obj, const char *objname, const char *name, int64_t **out, int *n,
                         const char *file, struct tf_error *err)
{
    hid_t at = H5I_INVALID_HID, ftype = H5I_INVALID_HID, space = H5I_INVALID_HID;
    hsize_t count = 0;
    int rc = -1;
    *out = NULL;
    *n = 0;
    if (tf_h5_attr_open(obj, objname, name, 1, &at, file, err) <= 0)
        return -1;
    ftype = H5Aget_type(at);
    if (ftype < 0 || H5Tget_class(ftype) != H5T_INTEGER || attr_count(at, &space, &count) != 0) {
        H5Eclear2(H5E_DEFAULT);
        tf_error_set(err, TF_ERR_SCHEMA, "%s: attribute '%s' of %s should be an integer array",
                     file, name, objname);
        goto fail;
    }
    *out = tf_xcalloc((size_t)(count > 0 ? count : 1), sizeof **out);
    if (count > 0 && H5Aread(at, H5T_NATIVE_INT64, *out) < 0) {
        tf_h5_error(err, "%s: cannot read attribute '%s' of %s", file, name, objname);
        free(*out);
        *out = NULL;
        goto fail;
    }
    *n = (int)count;
    rc = 0;
fail:
    tf_h5_close(&space, H5Sclose);
    tf_h5_close(&ftype, H5Tclose);
    tf_h5_close(&at, H5Aclose);
    return rc;
}
