/* archive_table.c - packed-row tables stored as HDF5 compound datasets, moved in blocks.
 *
 * A table is a list of columns (name, kind, byte offset in a packed row with
 * no padding). The same description builds the file compound type
 * (little-endian, portable), the memory compound type (native) and the cell
 * offsets TF_PUT/TF_GET use, so writer and reader cannot drift apart. Rows
 * move in blocks of at most BLOCK_ROWS (and 64 MiB) through one zeroed packed
 * buffer, which keeps memory flat for millions of rows. A growable table is
 * chunked (chunks of about 1 MiB, which fit HDF5's default chunk cache) with
 * shuffle + deflate. Reading checks by member NAME that every column exists
 * with the right class, then reads with our memory type, so column order in
 * the file does not matter and h5py-rewritten files still load. */
#include "archive_table.h"

#include <stdlib.h>
#include <string.h>

#include "archive_h5.h"
#include "result.h"
#include "status.h"

#define BLOCK_ROWS 16384           /* rows per H5Dread/H5Dwrite: bounds the packed buffer */
#define CHUNK_BYTES (1u << 20)     /* fits HDF5's default 1 MiB chunk cache */
#define CHUNK_ROWS_MAX 4096

void tf_table_init(struct tf_table *t, const char *file, const char *what)
{
    memset(t, 0, sizeof *t);
    t->file = file;
    tf_strlcpy(t->what, what, sizeof t->what);
}

void tf_table_free(struct tf_table *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->cols[i].name);
    free(t->cols);
    t->cols = NULL;
    t->n = 0;
}

/* Add a column; its index, or -1 (+err) for an empty or duplicate name, which
 * happens when a parameter, size or metric is named like a built-in column. */
int tf_table_add(struct tf_table *t, const char *name, enum tf_col_kind kind, size_t strsize,
                 struct tf_error *err)
{
    static const size_t sizes[] = {
        [TF_COL_U8] = 1,  [TF_COL_U32] = 4, [TF_COL_I32] = 4, [TF_COL_I64] = 8,   [TF_COL_U64] = 8,
        [TF_COL_F32] = 4, [TF_COL_F64] = 8, [TF_COL_STR] = 0, [TF_COL_STATUS] = 1,
        [TF_COL_ENERGY_STATUS] = 1};
    if (name[0] == '\0')
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s: empty column name", t->file,
                            t->what);
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->cols[i].name, name) == 0)
            return tf_error_set(err, TF_ERR_SCHEMA,
                                "%s: dataset %s: two columns named '%s' (a parameter, size or "
                                "metric name collides with another column; rename it)",
                                t->file, t->what, name);
    t->cols = tf_xrealloc(t->cols, (size_t)(t->n + 1) * sizeof *t->cols);
    struct tf_column *c = &t->cols[t->n];
    c->name = tf_xstrdup(name);
    c->kind = kind;
    c->size = kind == TF_COL_STR ? strsize : sizes[kind];
    c->offset = t->rowsize;
    t->rowsize += c->size;
    return t->n++;
}

/* A uint8 HDF5 enum whose member `v` is named name(v), for v < count. */
static hid_t enum_type(int file, int count, const char *(*name)(int))
{
    hid_t t = H5Tenum_create(file ? H5T_STD_U8LE : H5T_NATIVE_UINT8);
    for (int s = 0; s < count && t >= 0; s++) {
        uint8_t v = (uint8_t)s;
        if (H5Tenum_insert(t, name(s), &v) < 0) {
            H5Tclose(t);
            return H5I_INVALID_HID;
        }
    }
    return t;
}

static hid_t column_type(const struct tf_column *c, int file)
{
    hid_t t = H5I_INVALID_HID;
    switch (c->kind) {
    case TF_COL_U8: return H5Tcopy(file ? H5T_STD_U8LE : H5T_NATIVE_UINT8);
    case TF_COL_U32: return H5Tcopy(file ? H5T_STD_U32LE : H5T_NATIVE_UINT32);
    case TF_COL_I32: return H5Tcopy(file ? H5T_STD_I32LE : H5T_NATIVE_INT32);
    case TF_COL_I64: return H5Tcopy(file ? H5T_STD_I64LE : H5T_NATIVE_INT64);
    case TF_COL_U64: return H5Tcopy(file ? H5T_STD_U64LE : H5T_NATIVE_UINT64);
    case TF_COL_F32: return H5Tcopy(file ? H5T_IEEE_F32LE : H5T_NATIVE_FLOAT);
    case TF_COL_F64: return H5Tcopy(file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE);
    case TF_COL_STATUS: return enum_type(file, TF_STATUS_COUNT, tf_status_name);
    case TF_COL_ENERGY_STATUS:
        return enum_type(file, TF_ENERGY_COUNT, tf_energy_status_name);
    case TF_COL_STR:
        t = H5Tcopy(H5T_C_S1);
        if (t >= 0 && (H5Tset_size(t, c->size) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0)) {
            H5Tclose(t);
            t = H5I_INVALID_HID;
        }
        return t;
    }
    return H5I_INVALID_HID;
}

/* The compound type of the packed row: file (little-endian) or memory (native). */
static hid_t table_type(const struct tf_table *t, int file)
{
    hid_t ct = H5Tcreate(H5T_COMPOUND, t->rowsize);
    if (ct < 0)
        return ct;
    for (int i = 0; i < t->n; i++) {
        hid_t mt = column_type(&t->cols[i], file);
        herr_t rc = mt < 0 ? -1 : H5Tinsert(ct, t->cols[i].name, t->cols[i].offset, mt);
        if (mt >= 0)
            H5Tclose(mt);
        if (rc < 0) {
            H5Tclose(ct);
            return H5I_INVALID_HID;
        }
    }
    return ct;
}

static unsigned char *cell(const struct tf_table *t, const unsigned char *buf, uint64_t row,
                           int col)
{
    return (unsigned char *)buf + row * t->rowsize + t->cols[col].offset;
}

void tf_table_put_num(const struct tf_table *t, unsigned char *buf, uint64_t row, int col,
                      const void *v, size_t size)
{
    if (t->cols[col].kind == TF_COL_STR || t->cols[col].size != size)
        tf_die("archive column '%s' packed with a value of %zu bytes", t->cols[col].name, size);
    memcpy(cell(t, buf, row, col), v, size);
}

void tf_table_get_num(const struct tf_table *t, const unsigned char *buf, uint64_t row, int col,
                      void *v, size_t size)
{
    if (t->cols[col].kind == TF_COL_STR || t->cols[col].size != size)
        tf_die("archive column '%s' unpacked into %zu bytes", t->cols[col].name, size);
    memcpy(v, cell(t, buf, row, col), size);
}

/* NUL-padded: the packed buffer is zeroed, so only the bytes of `s` are copied. */
void tf_table_put_str(const struct tf_table *t, unsigned char *buf, uint64_t row, int col,
                      const char *s)
{
    if (t->cols[col].kind != TF_COL_STR)
        tf_die("archive column '%s' is not a string", t->cols[col].name);
    memcpy(cell(t, buf, row, col), s, strnlen(s, t->cols[col].size));
}

void tf_table_get_str(const struct tf_table *t, const unsigned char *buf, uint64_t row, int col,
                      char *dst, size_t cap)
{
    if (t->cols[col].kind != TF_COL_STR)
        tf_die("archive column '%s' is not a string", t->cols[col].name);
    size_t n = strnlen((const char *)cell(t, buf, row, col), t->cols[col].size);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, cell(t, buf, row, col), n);
    dst[n] = '\0';
}

static uint64_t block_rows(const struct tf_table *t)
{
    uint64_t n = (64u << 20) / (t->rowsize ? t->rowsize : 1);
    return n < 1 ? 1 : n > BLOCK_ROWS ? BLOCK_ROWS : n;
}

/* Create dataset `name` under `loc` with `nrows` rows filled by `pack`, block by block.
 * `growable`: chunked, shuffle + deflate 4, unlimited maximum size. */
int tf_table_write(hid_t loc, const char *name, const struct tf_table *t, uint64_t nrows,
                   int growable, tf_pack_fn pack, void *ctx, struct tf_error *err)
{
    hid_t ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID, space = H5I_INVALID_HID;
    hid_t dcpl = H5I_INVALID_HID, dset = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
    unsigned char *buf = NULL;
    int rc = -1;
    hsize_t dims[1] = {nrows}, maxdims[1] = {H5S_UNLIMITED};

    ftype = table_type(t, 1);
    mtype = table_type(t, 0);
    space = H5Screate_simple(1, dims, growable ? maxdims : NULL);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (ftype < 0 || mtype < 0 || space < 0 || dcpl < 0) {
        tf_h5_error(err, "%s: cannot build the type of dataset %s", t->file, t->what);
        goto fail;
    }
    if (growable) {
        hsize_t chunk[1] = {CHUNK_BYTES / t->rowsize};
        if (chunk[0] > CHUNK_ROWS_MAX)
            chunk[0] = CHUNK_ROWS_MAX;
        if (nrows > 0 && chunk[0] > nrows)
            chunk[0] = nrows;
        if (chunk[0] < 1)
            chunk[0] = 1;
        if (H5Pset_chunk(dcpl, 1, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 ||
            H5Pset_deflate(dcpl, 4) < 0) {
            tf_h5_error(err, "%s: cannot set chunking/compression of dataset %s", t->file, t->what);
            goto fail;
        }
    }
    dset = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dset < 0) {
        tf_h5_error(err, "%s: cannot create dataset %s", t->file, t->what);
        goto fail;
    }
    uint64_t block = block_rows(t);
    if (nrows > 0)
        buf = tf_xmalloc((size_t)(nrows < block ? nrows : block) * t->rowsize);
    for (uint64_t lo = 0; lo < nrows; lo += block) {
        uint64_t hi = nrows - lo < block ? nrows : lo + block;
        hsize_t start[1] = {lo}, count[1] = {hi - lo};
        memset(buf, 0, (size_t)(hi - lo) * t->rowsize);
        if (pack(ctx, t, buf, lo, hi, err) != 0)
            goto fail;
        mspace = H5Screate_simple(1, count, NULL);
        if (mspace < 0 || H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Dwrite(dset, mtype, mspace, space, H5P_DEFAULT, buf) < 0) {
            tf_h5_error(err, "%s: cannot write rows %llu..%llu of dataset %s", t->file,
                        (unsigned long long)lo, (unsigned long long)hi - 1, t->what);
            goto fail;
        }
        tf_h5_close(&mspace, H5Sclose);
    }
    rc = 0;
fail:
    free(buf);
    tf_h5_close(&mspace, H5Sclose);
    tf_h5_close(&dset, H5Dclose);
    tf_h5_close(&dcpl, H5Pclose);
    tf_h5_close(&space, H5Sclose);
    tf_h5_close(&mtype, H5Tclose);
    tf_h5_close(&ftype, H5Tclose);
    return rc;
}

static H5T_class_t kind_class(enum tf_col_kind k)
{
    switch (k) {
    case TF_COL_F32:
    case TF_COL_F64: return H5T_FLOAT;
    case TF_COL_STR: return H5T_STRING;
    case TF_COL_STATUS:
    case TF_COL_ENERGY_STATUS: return H5T_ENUM;
    default: return H5T_INTEGER;
    }
}

/* 1 if dataset `name` under `loc` is a table with a column `column`, else 0 (a
 * missing or odd dataset is tf_table_read's to report). For optional columns. */
int tf_table_has_column(hid_t loc, const char *name, const char *column)
{
    int found = 0;
    hid_t dset = H5I_INVALID_HID, ftype = H5I_INVALID_HID;
    if (H5Lexists(loc, name, H5P_DEFAULT) > 0 && (dset = H5Dopen2(loc, name, H5P_DEFAULT)) >= 0 &&
        (ftype = H5Dget_type(dset)) >= 0 && H5Tget_class(ftype) == H5T_COMPOUND)
        found = H5Tget_member_index(ftype, column) >= 0;
    H5Eclear2(H5E_DEFAULT);
    tf_h5_close(&ftype, H5Tclose);
    tf_h5_close(&dset, H5Dclose);
    return found;
}

/* 0 if dataset `dset` stores its `nrows` rows of `rowsize` bytes; else an
 * error. A dataset's extent costs nothing: a file of a few kilobytes can
 * claim 2^31 devices in chunks never written (read back as fill values),
 * and reading it allocated and walked every claimed row (status, query,
 * merge aborted out of memory). tunefarm writes every row it declares, and
 * so does any writer of whole tables; a layout this cannot check (external
 * or virtual storage) is let through to the reader's own checks. */
static int rows_stored(hid_t dset, uint64_t nrows, size_t rowsize, const struct tf_table *t,
                       struct tf_error *err)
{
    hid_t dcpl = H5Dget_create_plist(dset), space = H5I_INVALID_HID;
    uint64_t stored = nrows; /* unknown: assume whole */
    if (dcpl < 0) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    const H5D_layout_t layout = H5Pget_layout(dcpl);
    hsize_t chunk[1] = {0}, nchunks = 0;
    if (H5Pget_external_count(dcpl) > 0) {
        /* external raw data: not checked here */
    } else if (layout == H5D_CHUNKED) {
        space = H5Dget_space(dset);
        if (H5Pget_chunk(dcpl, 1, chunk) == 1 && space >= 0 &&
            H5Dget_num_chunks(dset, space, &nchunks) >= 0)
            stored = chunk[0] != 0 && nchunks > UINT64_MAX / chunk[0] ? UINT64_MAX
                                                                      : nchunks * chunk[0];
    } else if (layout == H5D_CONTIGUOUS && rowsize > 0) {
        stored = H5Dget_storage_size(dset) / rowsize;
    }
    H5Eclear2(H5E_DEFAULT);
    tf_h5_close(&space, H5Sclose);
    H5Pclose(dcpl);
    if (stored >= nrows)
        return 0;
    return tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s claims %llu rows but stores at most "
                        "%llu of them (a damaged or edited file): not read",
                        t->file, t->what, (unsigned long long)nrows, (unsigned long long)stored);
}

/* Read dataset `name` under `loc`: check that every column of `t` exists (by name)
 * with the right class, call `sized` with the row count, then `unpack` per block. */
int tf_table_read(hid_t loc, const char *name, const struct tf_table *t, tf_sized_fn sized,
                  tf_unpack_fn unpack, void *ctx, struct tf_error *err)
{
    hid_t dset = H5I_INVALID_HID, ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
    hid_t space = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
    unsigned char *buf = NULL;
    int rc = -1;

    htri_t exists = H5Lexists(loc, name, H5P_DEFAULT);
    if (exists <= 0) {
        tf_error_set(err, TF_ERR_SCHEMA, "%s: archive has no dataset %s", t->file, t->what);
        H5Eclear2(H5E_DEFAULT);
        goto fail;
    }
    dset = H5Dopen2(loc, name, H5P_DEFAULT);
    if (dset < 0) {
        tf_h5_error(err, "%s: cannot open dataset %s", t->file, t->what);
        goto fail;
    }
    ftype = H5Dget_type(dset);
    if (ftype < 0 || H5Tget_class(ftype) != H5T_COMPOUND) {
        tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s is not a table (compound dataset)",
                     t->file, t->what);
        goto fail;
    }
    for (int i = 0; i < t->n; i++) {
        int idx = H5Tget_member_index(ftype, t->cols[i].name);
        if (idx < 0) {
            H5Eclear2(H5E_DEFAULT);
            tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s has no column '%s'", t->file,
                         t->what, t->cols[i].name);
            goto fail;
        }
        H5T_class_t cls = H5Tget_member_class(ftype, (unsigned)idx);
        if (cls != kind_class(t->cols[i].kind)) {
            tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s column '%s' is %s, expected %s",
                         t->file, t->what, t->cols[i].name, tf_h5_class_name(cls),
                         tf_h5_class_name(kind_class(t->cols[i].kind)));
            goto fail;
        }
    }
    space = H5Dget_space(dset);
    hsize_t dims[1] = {0};
    if (space < 0 || H5Sget_simple_extent_ndims(space) != 1 ||
        H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
        H5Eclear2(H5E_DEFAULT);
        tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s is not one-dimensional", t->file,
                     t->what);
        goto fail;
    }
    uint64_t nrows = dims[0];
    if (rows_stored(dset, nrows, H5Tget_size(ftype), t, err) != 0 || sized(ctx, nrows, err) != 0)
        goto fail;
    mtype = table_type(t, 0);
    if (mtype < 0) {
        tf_h5_error(err, "%s: cannot build the type of dataset %s", t->file, t->what);
        goto fail;
    }
    uint64_t block = block_rows(t);
    if (nrows > 0)
        buf = tf_xmalloc((size_t)(nrows < block ? nrows : block) * t->rowsize);
    for (uint64_t lo = 0; lo < nrows; lo += block) {
        uint64_t hi = nrows - lo < block ? nrows : lo + block;
        hsize_t start[1] = {lo}, count[1] = {hi - lo};
        mspace = H5Screate_simple(1, count, NULL);
        if (mspace < 0 || H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Dread(dset, mtype, mspace, space, H5P_DEFAULT, buf) < 0) {
            tf_h5_error(err, "%s: cannot read rows %llu..%llu of dataset %s (damaged file?)",
                        t->file, (unsigned long long)lo, (unsigned long long)hi - 1, t->what);
            goto fail;
        }
        tf_h5_close(&mspace, H5Sclose);
        if (unpack(ctx, t, buf, lo, hi, err) != 0)
            goto fail;
    }
    rc = 0;
fail:
    free(buf);
    tf_h5_close(&mspace, H5Sclose);
    tf_h5_close(&space, H5Sclose);
    tf_h5_close(&mtype, H5Tclose);
    tf_h5_close(&ftype, H5Tclose);
    tf_h5_close(&dset, H5Dclose);
    return rc;
}
