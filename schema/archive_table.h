/* archive_table.h - packed-row tables stored as HDF5 compound datasets.
 *
 * Internal to schema/archive*.c. A table is described once as a list of
 * columns (name, kind, byte offset in a packed row); that description gives
 * the file type, the memory type and the cell offsets, so what the writer
 * packs is what the reader unpacks. Rows travel in blocks through a zeroed
 * packed buffer: tf_table_write calls `pack` to fill each block, tf_table_read
 * calls `sized` once with the row count, then `unpack` per block. Cells are
 * reached with TF_PUT/TF_GET (numbers: the value's size must be the column's,
 * or the program dies, since that is a bug) and tf_table_put_str/get_str. */
#ifndef TF_ARCHIVE_TABLE_H
#define TF_ARCHIVE_TABLE_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum tf_col_kind {
    TF_COL_U8, TF_COL_U32, TF_COL_I32, TF_COL_I64, TF_COL_U64, TF_COL_F32, TF_COL_F64,
    TF_COL_STR, TF_COL_STATUS, /* uint8 HDF5 enum of the status names (status.h) */
    TF_COL_ENERGY_STATUS       /* uint8 HDF5 enum of the energy status names (result.h) */
};

struct tf_column {
    char *name;
    enum tf_col_kind kind;
    size_t size, offset;
};

struct tf_table {
    const char *file;   /* for messages */
    char what[320];     /* dataset path, for messages */
    int n;
    struct tf_column *cols;
    size_t rowsize;     /* packed: no padding, members are memcpy'd */
};

/* Fill `[lo, hi)` of the model into rows 0.. of the zeroed block `buf`. */
typedef int (*tf_pack_fn)(void *ctx, const struct tf_table *t, unsigned char *buf, uint64_t lo,
                          uint64_t hi, struct tf_error *err);
/* Take rows 0.. of `buf` as rows `[lo, hi)` of the dataset. */
typedef int (*tf_unpack_fn)(void *ctx, const struct tf_table *t, const unsigned char *buf,
                            uint64_t lo, uint64_t hi, struct tf_error *err);
/* The dataset has `nrows` rows: make room before the first unpack. */
typedef int (*tf_sized_fn)(void *ctx, uint64_t nrows, struct tf_error *err);

/* An empty table; `file` (kept by pointer) and `what` (the dataset path) name it in messages. */
void tf_table_init(struct tf_table *t, const char *file, const char *what);
/* Free the columns; the table is empty again. */
void tf_table_free(struct tf_table *t);
/* Add a column (`strsize`: the width of a TF_COL_STR); its index, or -1 (+err)
 * for an empty or duplicate name, which happens when a parameter, size or
 * metric is named like a built-in column. */
int tf_table_add(struct tf_table *t, const char *name, enum tf_col_kind kind, size_t strsize,
                 struct tf_error *err);

/* Copy the `size` bytes at `v` into numeric cell (row, col) of `buf`; dies if
 * `size` is not the column's. */
void tf_table_put_num(const struct tf_table *t, unsigned char *buf, uint64_t row, int col,
                      const void *v, size_t size);
/* Copy numeric cell (row, col) of `buf` into the `size` bytes at `v`; dies if
 * `size` is not the column's. */
void tf_table_get_num(const struct tf_table *t, const unsigned char *buf, uint64_t row, int col,
                      void *v, size_t size);
/* Store `val` converted to `type` in numeric cell (row, col). */
#define TF_PUT(t, buf, row, col, type, val)                                                    \
    do {                                                                                       \
        type put_v_ = (val);                                                                   \
        tf_table_put_num((t), (buf), (row), (col), &put_v_, sizeof put_v_);                    \
    } while (0)
/* Load numeric cell (row, col) into the lvalue `dst`, which must have the column's size. */
#define TF_GET(t, buf, row, col, dst)                                                          \
    tf_table_get_num((t), (buf), (row), (col), &(dst), sizeof(dst))
/* `s` into string cell (row, col), truncated to the column's width. */
void tf_table_put_str(const struct tf_table *t, unsigned char *buf, uint64_t row, int col,
                      const char *s);
/* String cell (row, col) into `dst` of `cap` bytes, NUL-terminated, truncated. */
void tf_table_get_str(const struct tf_table *t, const unsigned char *buf, uint64_t row, int col,
                      char *dst, size_t cap);

/* Create dataset `name` under `loc` with `nrows` rows filled by `pack`, block by block.
 * `growable`: chunked, shuffle + deflate 4, unlimited maximum size. */
int tf_table_write(hid_t loc, const char *name, const struct tf_table *t, uint64_t nrows,
                   int growable, tf_pack_fn pack, void *ctx, struct tf_error *err);
/* 1 if dataset `name` under `loc` is a table with a column `column`, else 0 (a
 * missing or odd dataset is tf_table_read's to report). For optional columns. */
int tf_table_has_column(hid_t loc, const char *name, const char *column);
/* Read dataset `name` under `loc`: check that every column of `t` exists (by
 * name) with the right class, call `sized` with the row count, then `unpack`
 * per block. */
int tf_table_read(hid_t loc, const char *name, const struct tf_table *t, tf_sized_fn sized,
                  tf_unpack_fn unpack, void *ctx, struct tf_error *err);

#endif
