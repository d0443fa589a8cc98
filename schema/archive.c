/* archive.c - the HDF5 result archive: in-memory model, atomic writer, checking reader.
 *
 * The coordinator keeps the whole archive as a plain C model (devices, runs,
 * kernels with their problems and result rows) and rewrites the file from it
 * at every checkpoint. Every table is described once as a list of columns
 * (name, kind, byte offset in a packed row); the same description builds the
 * file compound type (little-endian, portable), the memory compound type
 * (native) and the packing code, so writer and reader cannot drift apart.
 * Rows are moved in blocks of BLOCK_ROWS through a packed buffer, which keeps
 * memory flat for millions of rows. Reading opens each table, checks by member
 * NAME that every column exists with the right class (so column order in the
 * file does not matter and h5py-rewritten files still load), reads with our
 * memory type and validates every cross reference. Writing goes to
 * "<path>.tmp.<pid>", is flushed, closed and fsync'ed, renamed over `path` and
 * the folder is fsync'ed, so a reader (or a crash) only ever sees the old or
 * the new file. HDF5's automatic error printing is switched off for the
 * duration of each call; its innermost error message is folded into ours.
 * The layout is specified for users in schema/archive.md. */
#include "archive.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "expr.h"
#include "status.h"

/* The Makefile may pass the real version; archives then record it. */
#ifndef TF_VERSION
#define TF_VERSION "0.1.0"
#endif

#define ENUM_VALUE_LEN 32          /* bytes of an enum parameter's results column */
#define ISO_LEN 32                 /* "2024-05-01T12:34:56Z" and room to spare */
#define BLOCK_ROWS 16384           /* rows per H5Dread/H5Dwrite: bounds the packed buffer */
#define CHUNK_BYTES (1u << 20)     /* fits HDF5's default 1 MiB chunk cache */
#define CHUNK_ROWS_MAX 4096
#define MAX_ATTR_ITEMS (1 << 24)   /* a hostile file must not make us allocate without end */

/* ---------------------------------------------------------------- errors */

struct hdf5_quiet {
    H5E_auto2_t func;
    void *data;
};

/* HDF5 prints its whole error stack to stderr by default; we report through tf_error. */
static void hdf5_quiet_begin(struct hdf5_quiet *q)
{
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    H5Eclear2(H5E_DEFAULT);
}

static void hdf5_quiet_end(const struct hdf5_quiet *q)
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
static int hdf5_error(struct tf_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int hdf5_error(struct tf_error *err, const char *fmt, ...)
{
    char msg[768], detail[256] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_cb, detail);
    H5Eclear2(H5E_DEFAULT);
    if (detail[0])
        return tf_error_set(err, TF_ERR_HDF5, "%s (HDF5: %s)", msg, detail);
    return tf_error_set(err, TF_ERR_HDF5, "%s", msg);
}

static void close_id(hid_t *id, herr_t (*fn)(hid_t))
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

/* "a,b,c" (or "(none)") into `out`, truncated with "..." when long. */
static void join_names(char *out, size_t cap, const char *const *names, int n)
{
    size_t len = 0;
    out[0] = '\0';
    if (n == 0) {
        tf_strlcpy(out, "(none)", cap);
        return;
    }
    for (int i = 0; i < n; i++) {
        int w = snprintf(out + len, cap - len, "%s%s", i ? "," : "", names[i]);
        if (w < 0 || (size_t)w >= cap - len) {
            if (cap > 4)
                memcpy(out + cap - 4, "...", 4);
            return;
        }
        len += (size_t)w;
    }
}

/* "16,32,64" or "row,col" for a parameter's values. */
static void join_values(char *out, size_t cap, const struct tf_param *p)
{
    if (p->kind == TF_PARAM_ENUM) {
        join_names(out, cap, (const char *const *)p->strings, p->count);
        return;
    }
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < p->count; i++) {
        int w = snprintf(out + len, cap - len, "%s%lld", i ? "," : "", (long long)p->ints[i]);
        if (w < 0 || (size_t)w >= cap - len) {
            if (cap > 4)
                memcpy(out + cap - 4, "...", 4);
            return;
        }
        len += (size_t)w;
    }
}

static void iso_time(double unix_s, char *out, size_t cap)
{
    out[0] = '\0';
    if (!(unix_s > 0) || !isfinite(unix_s))
        return;
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (gmtime_r(&t, &tm) != NULL)
        strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---------------------------------------------------------------- model */

static void param_free(struct tf_param *p)
{
    free(p->name);
    free(p->ints);
    if (p->strings)
        for (int i = 0; i < p->count; i++)
            free(p->strings[i]);
    free(p->strings);
}

static void param_copy(struct tf_param *dst, const struct tf_param *src)
{
    memset(dst, 0, sizeof *dst);
    dst->name = tf_xstrdup(src->name);
    dst->kind = src->kind;
    dst->count = src->count;
    if (src->kind == TF_PARAM_INT) {
        dst->ints = tf_xcalloc((size_t)src->count, sizeof *dst->ints);
        memcpy(dst->ints, src->ints, (size_t)src->count * sizeof *dst->ints);
    } else {
        dst->strings = tf_xcalloc((size_t)src->count, sizeof *dst->strings);
        for (int i = 0; i < src->count; i++)
            dst->strings[i] = tf_xstrdup(src->strings[i]);
    }
}

static void strings_free(char **v, int n)
{
    if (v)
        for (int i = 0; i < n; i++)
            free(v[i]);
    free(v);
}

static char **strings_copy(char *const *v, int n)
{
    char **d = tf_xcalloc((size_t)(n > 0 ? n : 1), sizeof *d);
    for (int i = 0; i < n; i++)
        d[i] = tf_xstrdup(v[i]);
    return d;
}

static void kernel_free(struct tf_archive_kernel *k)
{
    free(k->name);
    if (k->params)
        for (int i = 0; i < k->nparams; i++)
            param_free(&k->params[i]);
    free(k->params);
    strings_free(k->size_names, k->nsizes);
    strings_free(k->constraints, k->nconstraints);
    strings_free(k->metric_names, k->nmetrics);
    if (k->problems)
        for (int i = 0; i < k->nproblems; i++)
            free(k->problems[i].sizes);
    free(k->problems);
    free(k->rows);
    memset(k, 0, sizeof *k);
}

/* 128 random bits as 32 hex digits. getrandom(2) first; if the kernel lacks
 * it, /dev/urandom; failing both, time, pid and address bits (an id needs to
 * be unique between archives, not secret). */
static void new_id(char out[TF_ARCHIVE_ID_LEN])
{
    unsigned char bits[16];
    size_t got = 0;
    while (got < sizeof bits) {
        ssize_t k = getrandom(bits + got, sizeof bits - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    if (got < sizeof bits) {
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        ssize_t k = fd >= 0 ? read(fd, bits, sizeof bits) : -1;
        if (fd >= 0)
            close(fd);
        if (k != (ssize_t)sizeof bits) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t x = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^
                         (uint64_t)getpid() << 40 ^ (uint64_t)(uintptr_t)out;
            for (size_t i = 0; i < sizeof bits; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                bits[i] = (unsigned char)x;
            }
        }
    }
    for (size_t i = 0; i < sizeof bits; i++)
        snprintf(out + 2 * i, 3, "%02x", bits[i]);
}

/* True if `s` is an archive id: exactly 32 lowercase hex digits. */
static bool valid_id(const char *s)
{
    return strlen(s) == TF_ARCHIVE_ID_LEN - 1 &&
           strspn(s, "0123456789abcdef") == TF_ARCHIVE_ID_LEN - 1;
}

struct tf_archive *tf_archive_create(void)
{
    struct tf_archive *a = tf_xcalloc(1, sizeof *a);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    a->created = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    tf_strlcpy(a->tunefarm_version, TF_VERSION, sizeof a->tunefarm_version);
    new_id(a->id);
    return a;
}

int tf_archive_ensure_id(struct tf_archive *a)
{
    if (a->id[0] != '\0')
        return 0;
    new_id(a->id);
    return 1;
}

void tf_archive_destroy(struct tf_archive *a)
{
    if (a == NULL)
        return;
    free(a->devices);
    free(a->runs);
    free(a->plans);
    if (a->kernels)
        for (int i = 0; i < a->nkernels; i++)
            kernel_free(&a->kernels[i]);
    free(a->kernels);
    free(a);
}

static int same_field(const char *x, const char *y, size_t cap)
{
    return strncmp(x, y, cap) == 0;
}

uint32_t tf_archive_add_device(struct tf_archive *a, const struct tf_device *d)
{
    for (int i = 0; i < a->ndevices; i++) {
        const struct tf_device *e = &a->devices[i];
        if (same_field(e->backend, d->backend, sizeof e->backend) &&
            same_field(e->name, d->name, sizeof e->name) &&
            same_field(e->arch, d->arch, sizeof e->arch) &&
            same_field(e->uuid, d->uuid, sizeof e->uuid) &&
            same_field(e->host, d->host, sizeof e->host))
            return (uint32_t)i;
    }
    a->devices = tf_xrealloc(a->devices, (size_t)(a->ndevices + 1) * sizeof *a->devices);
    a->devices[a->ndevices] = *d;
    return (uint32_t)a->ndevices++;
}

uint32_t tf_archive_add_run(struct tf_archive *a, const struct tf_archive_run *run)
{
    a->runs = tf_xrealloc(a->runs, (size_t)(a->nruns + 1) * sizeof *a->runs);
    a->runs[a->nruns] = *run;
    return (uint32_t)a->nruns++;
}

struct tf_archive_kernel *tf_archive_find_kernel(const struct tf_archive *a, const char *name)
{
    for (int i = 0; i < a->nkernels; i++)
        if (strcmp(a->kernels[i].name, name) == 0)
            return &a->kernels[i];
    return NULL;
}

/* Product of the value counts, saturating like tf_kernel_cartesian. */
static uint64_t kernel_cartesian(const struct tf_archive_kernel *ak)
{
    uint64_t n = 1;
    for (int i = 0; i < ak->nparams; i++) {
        uint64_t c = (uint64_t)ak->params[i].count;
        if (c != 0 && n > UINT64_MAX / c)
            return UINT64_MAX;
        n *= c;
    }
    return n;
}

/* Mixed radix, parameter 0 most significant (tf_kernel_decode's convention). */
static void kernel_decode(const struct tf_archive_kernel *ak, uint64_t index, int *digits)
{
    for (int i = ak->nparams - 1; i >= 0; i--) {
        uint64_t c = (uint64_t)ak->params[i].count;
        digits[i] = (int)(index % c);
        index /= c;
    }
}

/* ---------------------------------------------------------------- tables */

enum col_kind { COL_U8, COL_U32, COL_I32, COL_I64, COL_U64, COL_F32, COL_F64, COL_STR, COL_STATUS };

struct column {
    char *name;
    enum col_kind kind;
    size_t size, offset;
};

struct table {
    const char *file;   /* for messages */
    char what[320];     /* dataset path, for messages */
    int n;
    struct column *cols;
    size_t rowsize;     /* packed: no padding, members are memcpy'd */
};

static void table_init(struct table *t, const char *file, const char *what)
{
    memset(t, 0, sizeof *t);
    t->file = file;
    tf_strlcpy(t->what, what, sizeof t->what);
}

static void table_free(struct table *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->cols[i].name);
    free(t->cols);
    t->cols = NULL;
    t->n = 0;
}

/* Add a column; its index, or -1 (+err) for an empty or duplicate name, which
 * happens when a parameter, size or metric is named like a built-in column. */
static int table_add(struct table *t, const char *name, enum col_kind kind, size_t strsize,
                     struct tf_error *err)
{
    static const size_t sizes[] = {[COL_U8] = 1, [COL_U32] = 4, [COL_I32] = 4, [COL_I64] = 8,
                                   [COL_U64] = 8, [COL_F32] = 4, [COL_F64] = 8, [COL_STR] = 0,
                                   [COL_STATUS] = 1};
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
    struct column *c = &t->cols[t->n];
    c->name = tf_xstrdup(name);
    c->kind = kind;
    c->size = kind == COL_STR ? strsize : sizes[kind];
    c->offset = t->rowsize;
    t->rowsize += c->size;
    return t->n++;
}

static hid_t status_type(int file)
{
    hid_t t = H5Tenum_create(file ? H5T_STD_U8LE : H5T_NATIVE_UINT8);
    for (int s = 0; s < TF_STATUS_COUNT && t >= 0; s++) {
        uint8_t v = (uint8_t)s;
        if (H5Tenum_insert(t, tf_status_name(s), &v) < 0) {
            H5Tclose(t);
            return H5I_INVALID_HID;
        }
    }
    return t;
}

static hid_t column_type(const struct column *c, int file)
{
    hid_t t = H5I_INVALID_HID;
    switch (c->kind) {
    case COL_U8: return H5Tcopy(file ? H5T_STD_U8LE : H5T_NATIVE_UINT8);
    case COL_U32: return H5Tcopy(file ? H5T_STD_U32LE : H5T_NATIVE_UINT32);
    case COL_I32: return H5Tcopy(file ? H5T_STD_I32LE : H5T_NATIVE_INT32);
    case COL_I64: return H5Tcopy(file ? H5T_STD_I64LE : H5T_NATIVE_INT64);
    case COL_U64: return H5Tcopy(file ? H5T_STD_U64LE : H5T_NATIVE_UINT64);
    case COL_F32: return H5Tcopy(file ? H5T_IEEE_F32LE : H5T_NATIVE_FLOAT);
    case COL_F64: return H5Tcopy(file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE);
    case COL_STATUS: return status_type(file);
    case COL_STR:
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
static hid_t table_type(const struct table *t, int file)
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

static unsigned char *cell(const struct table *t, const unsigned char *buf, uint64_t row, int col)
{
    return (unsigned char *)buf + row * t->rowsize + t->cols[col].offset;
}

static void put_num(const struct table *t, unsigned char *buf, uint64_t row, int col,
                    const void *v, size_t size)
{
    if (t->cols[col].kind == COL_STR || t->cols[col].size != size)
        tf_die("archive column '%s' packed with a value of %zu bytes", t->cols[col].name, size);
    memcpy(cell(t, buf, row, col), v, size);
}

static void get_num(const struct table *t, const unsigned char *buf, uint64_t row, int col,
                    void *v, size_t size)
{
    if (t->cols[col].kind == COL_STR || t->cols[col].size != size)
        tf_die("archive column '%s' unpacked into %zu bytes", t->cols[col].name, size);
    memcpy(v, cell(t, buf, row, col), size);
}

#define PUT(t, buf, row, col, type, val)                                                       \
    do {                                                                                       \
        type put_v_ = (val);                                                                   \
        put_num((t), (buf), (row), (col), &put_v_, sizeof put_v_);                             \
    } while (0)
#define GET(t, buf, row, col, dst) get_num((t), (buf), (row), (col), &(dst), sizeof(dst))

/* NUL-padded: the packed buffer is zeroed, so only the bytes of `s` are copied. */
static void put_str(const struct table *t, unsigned char *buf, uint64_t row, int col,
                    const char *s)
{
    if (t->cols[col].kind != COL_STR)
        tf_die("archive column '%s' is not a string", t->cols[col].name);
    memcpy(cell(t, buf, row, col), s, strnlen(s, t->cols[col].size));
}

static void get_str(const struct table *t, const unsigned char *buf, uint64_t row, int col,
                    char *dst, size_t cap)
{
    if (t->cols[col].kind != COL_STR)
        tf_die("archive column '%s' is not a string", t->cols[col].name);
    size_t n = strnlen((const char *)cell(t, buf, row, col), t->cols[col].size);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, cell(t, buf, row, col), n);
    dst[n] = '\0';
}

typedef int (*pack_fn)(void *ctx, const struct table *t, unsigned char *buf, uint64_t lo,
                       uint64_t hi, struct tf_error *err);
typedef int (*unpack_fn)(void *ctx, const struct table *t, const unsigned char *buf,
                         uint64_t lo, uint64_t hi, struct tf_error *err);
typedef int (*sized_fn)(void *ctx, uint64_t nrows, struct tf_error *err);

static uint64_t block_rows(const struct table *t)
{
    uint64_t n = (64u << 20) / (t->rowsize ? t->rowsize : 1);
    return n < 1 ? 1 : n > BLOCK_ROWS ? BLOCK_ROWS : n;
}

/* Create dataset `name` under `loc` with `nrows` rows filled by `pack`, block by block.
 * `growable`: chunked, shuffle + deflate 4, unlimited maximum size. */
static int table_write(hid_t loc, const char *name, const struct table *t, uint64_t nrows,
                       int growable, pack_fn pack, void *ctx, struct tf_error *err)
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
        hdf5_error(err, "%s: cannot build the type of dataset %s", t->file, t->what);
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
            hdf5_error(err, "%s: cannot set chunking/compression of dataset %s", t->file,
                       t->what);
            goto fail;
        }
    }
    dset = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dset < 0) {
        hdf5_error(err, "%s: cannot create dataset %s", t->file, t->what);
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
            hdf5_error(err, "%s: cannot write rows %llu..%llu of dataset %s", t->file,
                       (unsigned long long)lo, (unsigned long long)hi - 1, t->what);
            goto fail;
        }
        close_id(&mspace, H5Sclose);
    }
    rc = 0;
fail:
    free(buf);
    close_id(&mspace, H5Sclose);
    close_id(&dset, H5Dclose);
    close_id(&dcpl, H5Pclose);
    close_id(&space, H5Sclose);
    close_id(&mtype, H5Tclose);
    close_id(&ftype, H5Tclose);
    return rc;
}

static const char *class_name(H5T_class_t c)
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

static H5T_class_t kind_class(enum col_kind k)
{
    switch (k) {
    case COL_F32:
    case COL_F64: return H5T_FLOAT;
    case COL_STR: return H5T_STRING;
    case COL_STATUS: return H5T_ENUM;
    default: return H5T_INTEGER;
    }
}

/* 1 if dataset `name` under `loc` is a table with a column `column`, else 0 (a
 * missing or odd dataset is table_read's to report). For optional columns. */
static int dataset_has_column(hid_t loc, const char *name, const char *column)
{
    int found = 0;
    hid_t dset = H5I_INVALID_HID, ftype = H5I_INVALID_HID;
    if (H5Lexists(loc, name, H5P_DEFAULT) > 0 && (dset = H5Dopen2(loc, name, H5P_DEFAULT)) >= 0 &&
        (ftype = H5Dget_type(dset)) >= 0 && H5Tget_class(ftype) == H5T_COMPOUND)
        found = H5Tget_member_index(ftype, column) >= 0;
    H5Eclear2(H5E_DEFAULT);
    close_id(&ftype, H5Tclose);
    close_id(&dset, H5Dclose);
    return found;
}

/* Read dataset `name` under `loc`: check that every column of `t` exists (by name)
 * with the right class, call `sized` with the row count, then `unpack` per block. */
static int table_read(hid_t loc, const char *name, const struct table *t, sized_fn sized,
                      unpack_fn unpack, void *ctx, struct tf_error *err)
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
        hdf5_error(err, "%s: cannot open dataset %s", t->file, t->what);
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
                         t->file, t->what, t->cols[i].name, class_name(cls),
                         class_name(kind_class(t->cols[i].kind)));
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
    if (sized(ctx, nrows, err) != 0)
        goto fail;
    mtype = table_type(t, 0);
    if (mtype < 0) {
        hdf5_error(err, "%s: cannot build the type of dataset %s", t->file, t->what);
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
            hdf5_error(err, "%s: cannot read rows %llu..%llu of dataset %s (damaged file?)",
                       t->file, (unsigned long long)lo, (unsigned long long)hi - 1, t->what);
            goto fail;
        }
        close_id(&mspace, H5Sclose);
        if (unpack(ctx, t, buf, lo, hi, err) != 0)
            goto fail;
    }
    rc = 0;
fail:
    free(buf);
    close_id(&mspace, H5Sclose);
    close_id(&space, H5Sclose);
    close_id(&mtype, H5Tclose);
    close_id(&ftype, H5Tclose);
    close_id(&dset, H5Dclose);
    return rc;
}

/* ---------------------------------------------------------------- table layouts */

enum {
    DEV_ID, DEV_BACKEND, DEV_VENDOR, DEV_NAME, DEV_ARCH, DEV_UUID, DEV_PCI_BUS, DEV_HOST,
    DEV_MEMORY, DEV_CUS, DEV_DRIVER, DEV_RUNTIME, DEV_COMPILER, DEV_PROP0
};

/* /devices; `nprops`: how many device property columns, TF_DEVPROP_COUNT
 * when writing; archives written before max_shared_per_sm have one fewer
 * (the properties are only ever added at the end, device.h). */
static int devices_table(struct table *t, const char *file, int nprops, struct tf_error *err)
{
    const struct tf_device *d = NULL;
    table_init(t, file, "/devices");
    if (table_add(t, "id", COL_U32, 0, err) < 0 ||
        table_add(t, "backend", COL_STR, sizeof d->backend, err) < 0 ||
        table_add(t, "vendor", COL_STR, sizeof d->vendor, err) < 0 ||
        table_add(t, "name", COL_STR, sizeof d->name, err) < 0 ||
        table_add(t, "arch", COL_STR, sizeof d->arch, err) < 0 ||
        table_add(t, "uuid", COL_STR, sizeof d->uuid, err) < 0 ||
        table_add(t, "pci_bus", COL_STR, sizeof d->pci_bus, err) < 0 ||
        table_add(t, "host", COL_STR, sizeof d->host, err) < 0 ||
        table_add(t, "memory_bytes", COL_U64, 0, err) < 0 ||
        table_add(t, "compute_units", COL_U32, 0, err) < 0 ||
        table_add(t, "driver_version", COL_STR, sizeof d->driver_version, err) < 0 ||
        table_add(t, "runtime_version", COL_STR, sizeof d->runtime_version, err) < 0 ||
        table_add(t, "compiler_version", COL_STR, sizeof d->compiler_version, err) < 0)
        return -1;
    for (int p = 0; p < nprops; p++)
        if (table_add(t, tf_devprop_name(p), COL_I64, 0, err) < 0)
            return -1;
    return 0;
}

enum {
    RUN_ID, RUN_JOB_NAME, RUN_JOB_HASH, RUN_START_UNIX, RUN_END_UNIX, RUN_START, RUN_END,
    RUN_COMMAND, RUN_SLURM, RUN_RANKS, RUN_VERSION, RUN_REPLAY
};

/* /runs; `with_replay`: with the replay_source column (written always; read
 * only where present, so archives written before it stay readable). */
static int runs_table(struct table *t, const char *file, int with_replay, struct tf_error *err)
{
    const struct tf_archive_run *r = NULL;
    table_init(t, file, "/runs");
    if (table_add(t, "id", COL_U32, 0, err) < 0 ||
        table_add(t, "job_name", COL_STR, sizeof r->job_name, err) < 0 ||
        table_add(t, "job_hash", COL_STR, sizeof r->job_hash, err) < 0 ||
        table_add(t, "start_unix", COL_F64, 0, err) < 0 ||
        table_add(t, "end_unix", COL_F64, 0, err) < 0 ||
        table_add(t, "start", COL_STR, ISO_LEN, err) < 0 ||
        table_add(t, "end", COL_STR, ISO_LEN, err) < 0 ||
        table_add(t, "command", COL_STR, sizeof r->command, err) < 0 ||
        table_add(t, "slurm_job_id", COL_STR, sizeof r->slurm_job_id, err) < 0 ||
        table_add(t, "ranks", COL_U32, 0, err) < 0 ||
        table_add(t, "tunefarm_version", COL_STR, sizeof r->tunefarm_version, err) < 0 ||
        (with_replay &&
         table_add(t, "replay_source", COL_STR, sizeof r->replay_source, err) < 0))
        return -1;
    return 0;
}

enum { PLAN_RUN, PLAN_KERNEL, PLAN_PROBLEM, PLAN_DEVICE, PLAN_PLANNED };

static int plan_table(struct table *t, const char *file, struct tf_error *err)
{
    table_init(t, file, "/plan");
    if (table_add(t, "run", COL_U32, 0, err) < 0 ||
        table_add(t, "kernel", COL_STR, 128, err) < 0 ||
        table_add(t, "problem", COL_U32, 0, err) < 0 ||
        table_add(t, "device", COL_U32, 0, err) < 0 ||
        table_add(t, "planned", COL_U64, 0, err) < 0)
        return -1;
    return 0;
}

/* A problem without a default: no configuration has this index, since a space
 * must have fewer than 2^64 - 1 configurations (schema/kernel.md). */
#define NO_DEFAULT UINT64_MAX

/* Problems: id, name, one int64 column per size (size i is column 2 + i), then
 * `default_config` (column 2 + nsizes) unless `with_default` is 0: archives
 * written before per-problem defaults lack it, and the reader asks for it only
 * where it is. */
static int problems_table(struct table *t, const struct tf_archive_kernel *ak, const char *file,
                          int with_default, struct tf_error *err)
{
    char what[320];
    snprintf(what, sizeof what, "/kernels/%s/problems", ak->name);
    table_init(t, file, what);
    if (table_add(t, "id", COL_U32, 0, err) < 0 ||
        table_add(t, "name", COL_STR, sizeof ak->problems[0].name, err) < 0)
        return -1;
    for (int i = 0; i < ak->nsizes; i++)
        if (table_add(t, ak->size_names[i], COL_I64, 0, err) < 0)
            return -1;
    if (with_default && table_add(t, "default_config", COL_U64, 0, err) < 0)
        return -1;
    return 0;
}

struct results_cols {
    int run, device, problem, config, param0, status, samples, time_median, time_min,
        time_mean, time_rsd, compile_time, device_time, registers, shared_bytes, spill_bytes, sm_clock,
        power, temperature, energy, flushed_l2, throttled, phase, timestamp, metric0, message;
};

static int results_table(struct table *t, struct results_cols *c,
                         const struct tf_archive_kernel *ak, const char *file,
                         struct tf_error *err)
{
    char what[320];
    snprintf(what, sizeof what, "/kernels/%s/results", ak->name);
    table_init(t, file, what);
#define ADD(field, name, kind)                                                                 \
    if ((c->field = table_add(t, name, kind, 0, err)) < 0)                                     \
        return -1;
    ADD(run, "run", COL_U32)
    ADD(device, "device", COL_U32)
    ADD(problem, "problem", COL_U32)
    ADD(config, "config", COL_U64)
    c->param0 = t->n;
    for (int i = 0; i < ak->nparams; i++)
        if (table_add(t, ak->params[i].name,
                      ak->params[i].kind == TF_PARAM_INT ? COL_I64 : COL_STR, ENUM_VALUE_LEN,
                      err) < 0)
            return -1;
    ADD(status, "status", COL_STATUS)
    ADD(samples, "samples", COL_U32)
    ADD(time_median, "time_median", COL_F64)
    ADD(time_min, "time_min", COL_F64)
    ADD(time_mean, "time_mean", COL_F64)
    ADD(time_rsd, "time_rsd", COL_F64)
    ADD(compile_time, "compile_time", COL_F64)
    ADD(device_time, "device_time", COL_F64)
    ADD(registers, "registers", COL_I32)
    ADD(shared_bytes, "shared_bytes", COL_I64)
    ADD(spill_bytes, "spill_bytes", COL_I64)
    ADD(sm_clock, "sm_clock_mhz", COL_F32)
    ADD(power, "power_w", COL_F32)
    ADD(temperature, "temperature_c", COL_F32)
    ADD(energy, "energy_j", COL_F64)
    ADD(flushed_l2, "flushed_l2", COL_U8)
    ADD(throttled, "throttled", COL_U8)
    ADD(phase, "phase", COL_U8)
    ADD(timestamp, "timestamp", COL_F64)
    c->metric0 = t->n;
    for (int m = 0; m < ak->nmetrics; m++)
        if (table_add(t, ak->metric_names[m], COL_F64, 0, err) < 0)
            return -1;
    if ((c->message = table_add(t, "message", COL_STR, TF_MESSAGE_LEN, err)) < 0)
        return -1;
#undef ADD
    return 0;
}

/* ---------------------------------------------------------------- validation */

/* Everything about a kernel entry that the layout needs, shared by kernel_for,
 * the writer (never write what we cannot read) and the reader. */
static int kernel_validate(const struct tf_archive_kernel *ak, const char *file,
                           struct tf_error *err)
{
    if (ak->name == NULL || ak->name[0] == '\0' || strchr(ak->name, '/') != NULL ||
        strcmp(ak->name, ".") == 0 || strcmp(ak->name, "..") == 0)
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "%s: kernel name '%s' cannot name an archive group (no '/', not "
                            "empty, not '.' or '..')", file, ak->name ? ak->name : "");
    if (ak->nparams < 0 || ak->nsizes < 0 || ak->nconstraints < 0 || ak->nmetrics < 0)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: kernel '%s' has negative counts", file,
                            ak->name);
    if (ak->nmetrics > TF_MAX_METRICS)
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "%s: kernel '%s' has %d metrics; at most %d are archived", file,
                            ak->name, ak->nmetrics, TF_MAX_METRICS);
    for (int i = 0; i < ak->nparams; i++) {
        const struct tf_param *p = &ak->params[i];
        if (p->count < 1)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: kernel '%s' parameter '%s' has no values",
                                file, ak->name, p->name);
        if (p->kind == TF_PARAM_ENUM)
            for (int v = 0; v < p->count; v++)
                if (strlen(p->strings[v]) > ENUM_VALUE_LEN)
                    return tf_error_set(err, TF_ERR_SCHEMA,
                                        "%s: kernel '%s' parameter '%s' value '%s' is longer "
                                        "than %d bytes, the width of its results column",
                                        file, ak->name, p->name, p->strings[v], ENUM_VALUE_LEN);
    }
    struct table t;
    struct results_cols c;
    int rc = results_table(&t, &c, ak, file, err);
    table_free(&t);
    if (rc == 0) {
        rc = problems_table(&t, ak, file, 1, err);
        table_free(&t);
    }
    return rc;
}

static int model_validate(const struct tf_archive *a, const char *path, struct tf_error *err)
{
    for (int i = 0; i < a->nplans; i++) {
        const struct tf_archive_plan *p = &a->plans[i];
        if (p->run >= (uint32_t)a->nruns || p->kernel >= (uint32_t)a->nkernels ||
            p->device >= (uint32_t)a->ndevices ||
            p->problem >= (uint32_t)a->kernels[p->kernel].nproblems)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: plan row %d is out of range (not "
                                "written; the archive model is inconsistent)", path, i);
    }
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *ak = &a->kernels[k];
        if (kernel_validate(ak, path, err) != 0)
            return -1;
        for (int j = 0; j < k; j++)
            if (strcmp(a->kernels[j].name, ak->name) == 0)
                return tf_error_set(err, TF_ERR_SCHEMA, "%s: two archive kernels named '%s'",
                                    path, ak->name);
        uint64_t cart = kernel_cartesian(ak);
        for (int p = 0; p < ak->nproblems; p++)
            if (ak->problems[p].has_default && ak->problems[p].default_index >= cart)
                return tf_error_set(err, TF_ERR_SCHEMA,
                                    "%s: kernel '%s' problem %d has an out-of-range default "
                                    "%llu (not written; the archive model is inconsistent)",
                                    path, ak->name, p,
                                    (unsigned long long)ak->problems[p].default_index);
        for (uint64_t i = 0; i < ak->nrows; i++) {
            const struct tf_archive_row *r = &ak->rows[i];
            const char *bad = r->run >= (uint32_t)a->nruns           ? "run"
                              : r->device >= (uint32_t)a->ndevices    ? "device"
                              : r->r.problem >= (uint32_t)ak->nproblems ? "problem"
                              : r->r.config >= cart                   ? "config"
                              : r->r.status >= TF_STATUS_COUNT        ? "status"
                                                                      : NULL;
            if (bad)
                return tf_error_set(err, TF_ERR_SCHEMA,
                                    "%s: kernel '%s' row %llu has an out-of-range %s (not "
                                    "written; the archive model is inconsistent)",
                                    path, ak->name, (unsigned long long)i, bad);
        }
    }
    return 0;
}

void tf_archive_set_plan(struct tf_archive *a, const struct tf_archive_plan *p)
{
    for (int i = 0; i < a->nplans; i++) {
        struct tf_archive_plan *q = &a->plans[i];
        if (q->run == p->run && q->kernel == p->kernel && q->problem == p->problem &&
            q->device == p->device) {
            q->planned = p->planned;
            return;
        }
    }
    a->plans = tf_xrealloc(a->plans, sizeof *a->plans * (size_t)(a->nplans + 1));
    a->plans[a->nplans++] = *p;
}

/* ---------------------------------------------------------------- kernel_for / problem_for */

static int kernel_mismatch(struct tf_error *err, const char *name, const char *what,
                           const char *had, const char *has)
{
    return tf_error_set(err, TF_ERR_SCHEMA,
                        "archive kernel '%s' has %s %s but the kernel file has %s: use another "
                        "archive or a new kernel name", name, what, had, has);
}

static int names_equal(char *const *x, int nx, char *const *y, int ny)
{
    if (nx != ny)
        return 0;
    for (int i = 0; i < nx; i++)
        if (strcmp(x[i], y[i]) != 0)
            return 0;
    return 1;
}

/* Same parameters (names, kinds, values), sizes and metrics, or an error naming the first difference. */
/* What must agree for rows of one kernel to share a table: parameters (names,
 * kinds, values, order), size names and metric names. `k` is a view of a
 * kernel file or of another archive's entry. */
struct kernel_shape {
    int nparams;
    const struct tf_param *params;
    int nsizes;
    char *const *size_names;
    int nmetrics;
    char *const *metric_names;
};

static int kernel_compare(const struct tf_archive_kernel *ak, const struct kernel_shape *k,
                          struct tf_error *err)
{
    char had[512], has[512];
    int same = ak->nparams == k->nparams;
    for (int i = 0; same && i < k->nparams; i++)
        same = strcmp(ak->params[i].name, k->params[i].name) == 0;
    if (!same) {
        const char **x = tf_xcalloc((size_t)ak->nparams + 1, sizeof *x);
        const char **y = tf_xcalloc((size_t)k->nparams + 1, sizeof *y);
        for (int i = 0; i < ak->nparams; i++)
            x[i] = ak->params[i].name;
        for (int i = 0; i < k->nparams; i++)
            y[i] = k->params[i].name;
        join_names(had, sizeof had, x, ak->nparams);
        join_names(has, sizeof has, y, k->nparams);
        free(x);
        free(y);
        return kernel_mismatch(err, ak->name, "parameters", had, has);
    }
    for (int i = 0; i < k->nparams; i++) {
        const struct tf_param *p = &ak->params[i], *q = &k->params[i];
        char what[320];
        if (p->kind != q->kind) {
            snprintf(what, sizeof what, "parameter %s of kind", p->name);
            return kernel_mismatch(err, ak->name, what, p->kind == TF_PARAM_INT ? "int" : "enum",
                                   q->kind == TF_PARAM_INT ? "int" : "enum");
        }
        int eq = p->count == q->count;
        for (int v = 0; eq && v < p->count; v++)
            eq = p->kind == TF_PARAM_INT ? p->ints[v] == q->ints[v]
                                         : strcmp(p->strings[v], q->strings[v]) == 0;
        if (!eq) {
            snprintf(what, sizeof what, "parameter %s with values", p->name);
            join_values(had, sizeof had, p);
            join_values(has, sizeof has, q);
            return kernel_mismatch(err, ak->name, what, had, has);
        }
    }
    if (!names_equal(ak->size_names, ak->nsizes, k->size_names, k->nsizes)) {
        join_names(had, sizeof had, (const char *const *)ak->size_names, ak->nsizes);
        join_names(has, sizeof has, (const char *const *)k->size_names, k->nsizes);
        return kernel_mismatch(err, ak->name, "problem sizes", had, has);
    }
    if (!names_equal(ak->metric_names, ak->nmetrics, k->metric_names, k->nmetrics)) {
        join_names(had, sizeof had, (const char *const *)ak->metric_names, ak->nmetrics);
        join_names(has, sizeof has, (const char *const *)k->metric_names, k->nmetrics);
        return kernel_mismatch(err, ak->name, "metrics", had, has);
    }
    return 0;
}

static struct kernel_shape shape_of_kernel(const struct tf_kernel *k)
{
    return (struct kernel_shape){k->nparams, k->params, k->nsizes, k->size_names, k->nmetrics,
                                 k->metric_names};
}

/* A new entry named `name` with deep copies of `shape` (no provenance, no problems, no rows). */
static struct tf_archive_kernel kernel_of_shape(const char *name, const struct kernel_shape *shape)
{
    struct tf_archive_kernel nk;
    memset(&nk, 0, sizeof nk);
    nk.name = tf_xstrdup(name);
    nk.nparams = shape->nparams;
    nk.params = tf_xcalloc((size_t)(shape->nparams > 0 ? shape->nparams : 1), sizeof *nk.params);
    for (int i = 0; i < shape->nparams; i++)
        param_copy(&nk.params[i], &shape->params[i]);
    nk.nsizes = shape->nsizes;
    nk.size_names = strings_copy(shape->size_names, shape->nsizes);
    nk.nmetrics = shape->nmetrics;
    nk.metric_names = strings_copy(shape->metric_names, shape->nmetrics);
    return nk;
}

/* The parts a kernel file may change without invalidating archived rows. */
static void kernel_take_provenance(struct tf_archive_kernel *ak, const struct tf_kernel *k)
{
    tf_strlcpy(ak->source_hash, k->source_hash, sizeof ak->source_hash);
    strings_free(ak->constraints, ak->nconstraints);
    ak->nconstraints = k->nconstraints;
    ak->constraints = tf_xcalloc((size_t)(k->nconstraints > 0 ? k->nconstraints : 1),
                                 sizeof *ak->constraints);
    for (int i = 0; i < k->nconstraints; i++)
        ak->constraints[i] = tf_xstrdup(tf_expr_text(k->constraints[i]));
    ak->has_default = k->has_default;
    ak->default_index = k->has_default ? k->default_index : 0;
}

/* An existing entry keeps its rows; its source hash, constraint texts and default
 * follow the newest kernel file (runs record the job hash of every measurement). */
struct tf_archive_kernel *tf_archive_kernel_for(struct tf_archive *a, const struct tf_kernel *k,
                                                struct tf_error *err)
{
    struct tf_archive_kernel *ak = tf_archive_find_kernel(a, k->name);
    if (ak != NULL) {
        const struct kernel_shape shape = shape_of_kernel(k);
        if (kernel_compare(ak, &shape, err) != 0)
            return NULL;
        kernel_take_provenance(ak, k);
        return ak;
    }
    const struct kernel_shape shape = shape_of_kernel(k);
    struct tf_archive_kernel nk = kernel_of_shape(k->name, &shape);
    kernel_take_provenance(&nk, k);
    if (kernel_validate(&nk, "archive", err) != 0) {
        kernel_free(&nk);
        return NULL;
    }
    a->kernels = tf_xrealloc(a->kernels, (size_t)(a->nkernels + 1) * sizeof *a->kernels);
    a->kernels[a->nkernels] = nk;
    return &a->kernels[a->nkernels++];
}

/* Problems are keyed by (name, sizes): a problem whose sizes changed under the
 * same name gets a new entry, so old rows keep meaning the sizes they ran with. */
/* Index of a problem named `name` (truncated as stored) with `sizes` in `ak`,
 * added if new. */
static uint32_t problem_like(struct tf_archive_kernel *ak, const char *name, const int64_t *sizes)
{
    char stored[sizeof ak->problems[0].name];
    tf_strlcpy(stored, name, sizeof stored);
    for (int i = 0; i < ak->nproblems; i++) {
        int same = strcmp(ak->problems[i].name, stored) == 0;
        for (int s = 0; same && s < ak->nsizes; s++)
            same = ak->problems[i].sizes[s] == sizes[s];
        if (same)
            return (uint32_t)i;
    }
    ak->problems = tf_xrealloc(ak->problems, (size_t)(ak->nproblems + 1) * sizeof *ak->problems);
    struct tf_archive_problem *np = &ak->problems[ak->nproblems];
    memset(np, 0, sizeof *np); /* no default until the caller gives one */
    memcpy(np->name, stored, sizeof stored);
    np->sizes = tf_xcalloc((size_t)(ak->nsizes > 0 ? ak->nsizes : 1), sizeof *np->sizes);
    memcpy(np->sizes, sizes, (size_t)ak->nsizes * sizeof *sizes);
    return (uint32_t)ak->nproblems++;
}

/* Like the source hash, a problem's default follows the newest kernel file that
 * has the problem; rows of problems it no longer lists keep theirs. */
uint32_t tf_archive_problem_for(struct tf_archive_kernel *ak, const struct tf_kernel *k, int p)
{
    if (p < 0 || p >= k->nproblems || k->nsizes != ak->nsizes)
        tf_die("tf_archive_problem_for: problem %d of kernel '%s' out of range", p, k->name);
    uint32_t i = problem_like(ak, k->problems[p].name, k->problems[p].sizes);
    struct tf_archive_problem *ap = &ak->problems[i];
    uint64_t def = 0;
    ap->has_default = tf_kernel_default_for(k, p, &def);
    ap->default_index = ap->has_default ? def : 0;
    return i;
}

/* The entry of `dst` for `src`'s kernel: the same shape, or a new copy (no rows). */
static struct tf_archive_kernel *kernel_like(struct tf_archive *dst,
                                             const struct tf_archive_kernel *src,
                                             struct tf_error *err)
{
    struct tf_archive_kernel *ak = tf_archive_find_kernel(dst, src->name);
    if (ak != NULL) {
        const struct kernel_shape shape = {src->nparams, src->params, src->nsizes,
                                           src->size_names, src->nmetrics, src->metric_names};
        return kernel_compare(ak, &shape, err) != 0 ? NULL : ak;
    }
    const struct kernel_shape shape = {src->nparams, src->params, src->nsizes, src->size_names,
                                       src->nmetrics, src->metric_names};
    struct tf_archive_kernel nk = kernel_of_shape(src->name, &shape);
    tf_strlcpy(nk.source_hash, src->source_hash, sizeof nk.source_hash);
    nk.nconstraints = src->nconstraints;
    nk.constraints = strings_copy(src->constraints, src->nconstraints);
    nk.has_default = src->has_default;
    nk.default_index = src->default_index;
    dst->kernels = tf_xrealloc(dst->kernels, (size_t)(dst->nkernels + 1) * sizeof *dst->kernels);
    dst->kernels[dst->nkernels] = nk;
    return &dst->kernels[dst->nkernels++];
}

static bool same_run(const struct tf_archive_run *x, const struct tf_archive_run *y)
{
    return strcmp(x->job_hash, y->job_hash) == 0 && x->start == y->start &&
           strcmp(x->command, y->command) == 0 && strcmp(x->slurm_job_id, y->slurm_job_id) == 0;
}

/* A result row's identity within an archive: a run measures a configuration
 * (in a phase) for a problem on a device once. */
struct row_key {
    uint32_t run, device, problem, phase;
    uint64_t config;
};

static int row_key_cmp(const void *x, const void *y)
{
    const struct row_key *a = x, *b = y;
#define CMP(f)                                                                                 \
    if (a->f != b->f)                                                                          \
        return a->f < b->f ? -1 : 1;
    CMP(run) CMP(device) CMP(problem) CMP(config) CMP(phase)
#undef CMP
    return 0;
}

static struct row_key key_of(const struct tf_archive_row *row)
{
    return (struct row_key){row->run, row->device, row->r.problem, row->r.phase, row->r.config};
}

int tf_archive_merge(struct tf_archive *dst, const struct tf_archive *src,
                     struct tf_archive_merge_stats *stats, struct tf_error *err)
{
    memset(stats, 0, sizeof *stats);
    /* Check every kernel first: a mismatch leaves `dst` as it was. */
    for (int k = 0; k < src->nkernels; k++) {
        const struct tf_archive_kernel *ak = tf_archive_find_kernel(dst, src->kernels[k].name);
        const struct tf_archive_kernel *sk = &src->kernels[k];
        const struct kernel_shape shape = {sk->nparams, sk->params, sk->nsizes, sk->size_names,
                                           sk->nmetrics, sk->metric_names};
        if (ak != NULL && kernel_compare(ak, &shape, err) != 0)
            return -1;
    }
    uint32_t *devices = tf_xcalloc((size_t)src->ndevices + 1, sizeof *devices);
    uint32_t *runs = tf_xcalloc((size_t)src->nruns + 1, sizeof *runs);
    /* A run `dst` has already (the same run merged before, maybe while it was
     * unfinished): it gets the rows it lacks, and the end src has for it. */
    bool *present = tf_xcalloc((size_t)src->nruns + 1, sizeof *present);
    for (int d = 0; d < src->ndevices; d++)
        devices[d] = tf_archive_add_device(dst, &src->devices[d]);
    for (int r = 0; r < src->nruns; r++) {
        for (int q = 0; q < dst->nruns && !present[r]; q++)
            if (same_run(&dst->runs[q], &src->runs[r])) {
                present[r] = true;
                runs[r] = (uint32_t)q;
            }
        if (present[r]) {
            stats->runs_present++;
            struct tf_archive_run *dr = &dst->runs[runs[r]];
            if (dr->end == 0 && src->runs[r].end > 0) {
                dr->end = src->runs[r].end;
                stats->runs_finished++;
            }
        } else {
            runs[r] = tf_archive_add_run(dst, &src->runs[r]);
            stats->runs++;
        }
    }
    for (int k = 0; k < src->nkernels; k++) {
        const struct tf_archive_kernel *sk = &src->kernels[k];
        struct tf_archive_kernel *ak = kernel_like(dst, sk, err);
        if (ak == NULL) { /* checked above: cannot happen */
            free(devices);
            free(runs);
            free(present);
            return -1;
        }
        const uint32_t kernel = (uint32_t)(ak - dst->kernels);
        uint32_t *problems = tf_xcalloc((size_t)sk->nproblems + 1, sizeof *problems);
        for (int p = 0; p < sk->nproblems; p++) {
            problems[p] = problem_like(ak, sk->problems[p].name, sk->problems[p].sizes);
            /* `dst` keeps its own default for a problem it has; one it lacks comes
             * from `src` (kernel shapes agree, so the index means the same). */
            struct tf_archive_problem *dp = &ak->problems[problems[p]];
            if (!dp->has_default && sk->problems[p].has_default) {
                dp->has_default = 1;
                dp->default_index = sk->problems[p].default_index;
            }
        }
        /* The rows `dst` has of the runs it shares with `src`, sorted, to look
         * up which rows of those runs it lacks. */
        bool *shared = tf_xcalloc((size_t)dst->nruns + 1, sizeof *shared);
        for (int r = 0; r < src->nruns; r++)
            shared[runs[r]] = present[r];
        struct row_key *have = tf_xmalloc(sizeof *have * (ak->nrows ? ak->nrows : 1));
        uint64_t nhave = 0;
        for (uint64_t i = 0; i < ak->nrows; i++)
            if (shared[ak->rows[i].run])
                have[nhave++] = key_of(&ak->rows[i]);
        qsort(have, nhave, sizeof *have, row_key_cmp);
        free(shared);
        for (uint64_t i = 0; i < sk->nrows; i++) {
            struct tf_archive_row row = sk->rows[i];
            const bool extends = present[row.run];
            row.run = runs[row.run];
            row.device = devices[row.device];
            row.r.problem = problems[row.r.problem];
            if (extends) {
                const struct row_key key = key_of(&row);
                if (bsearch(&key, have, nhave, sizeof *have, row_key_cmp) != NULL)
                    continue;
                stats->rows_to_present++;
            }
            tf_archive_append(ak, &row);
            stats->rows++;
        }
        free(have);
        for (int i = 0; i < src->nplans; i++) {
            const struct tf_archive_plan *sp = &src->plans[i];
            if (sp->kernel != (uint32_t)k)
                continue;
            struct tf_archive_plan np = {runs[sp->run], kernel, problems[sp->problem],
                                         devices[sp->device], sp->planned};
            tf_archive_set_plan(dst, &np);
        }
        free(problems);
    }
    free(devices);
    free(runs);
    free(present);
    return 0;
}

void tf_archive_append(struct tf_archive_kernel *ak, const struct tf_archive_row *row)
{
    struct tf_archive_row copy = *row; /* `row` may point into ak->rows, which may move */
    if (ak->nrows == ak->cap) {
        ak->cap = ak->cap ? ak->cap * 2 : 256;
        ak->rows = tf_xrealloc(ak->rows, (size_t)ak->cap * sizeof *ak->rows);
    }
    ak->rows[ak->nrows++] = copy;
}

/* ---------------------------------------------------------------- attributes */

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

static int attr_write_scalar(hid_t obj, const char *name, hid_t ftype, hid_t mtype,
                             const void *v)
{
    hid_t space = H5Screate(H5S_SCALAR);
    int rc = space < 0 ? -1 : attr_write(obj, name, ftype, mtype, space, v);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* Fixed-length NUL-padded strings, as wide as the longest; `scalar` for one string.
 * An empty list is a 0-length 1-D attribute. */
static int attr_write_strings(hid_t obj, const char *name, const char *const *v, int n,
                              int scalar)
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

static int attr_write_string(hid_t obj, const char *name, const char *v)
{
    return attr_write_strings(obj, name, &v, 1, 1);
}

static int attr_write_i64s(hid_t obj, const char *name, const int64_t *v, int n)
{
    hsize_t dims[1] = {(hsize_t)n};
    hid_t space = H5Screate_simple(1, dims, NULL);
    int rc = space < 0 ? -1 : attr_write(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, space, v);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* Open attribute `name` of `obj`: 1 found (in *out), 0 absent, -1 error. */
static int attr_open(hid_t obj, const char *objname, const char *name, int required, hid_t *out,
                     const char *file, struct tf_error *err)
{
    *out = H5I_INVALID_HID;
    htri_t ex = H5Aexists(obj, name);
    if (ex < 0)
        return hdf5_error(err, "%s: cannot look up attribute '%s' of %s", file, name, objname);
    if (ex == 0) {
        if (required)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: %s has no attribute '%s'", file,
                                objname, name);
        return 0;
    }
    *out = H5Aopen(obj, name, H5P_DEFAULT);
    if (*out < 0)
        return hdf5_error(err, "%s: cannot open attribute '%s' of %s", file, name, objname);
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
static int attr_read_strings(hid_t obj, const char *objname, const char *name, int required,
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

    int found = attr_open(obj, objname, name, required, &at, file, err);
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
            hdf5_error(err, "%s: cannot read attribute '%s' of %s", file, name, objname);
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
            hdf5_error(err, "%s: cannot read attribute '%s' of %s", file, name, objname);
            goto fail;
        }
        for (hsize_t i = 0; i < count; i++)
            v[i] = xstrndup(buf + i * width, width);
    }
    *n = (int)count;
    rc = 0;
fail:
    if (rc != 0 && *out) {
        strings_free(*out, (int)count);
        *out = NULL;
    }
    free(buf);
    free(vbuf);
    close_id(&mtype, H5Tclose);
    close_id(&space, H5Sclose);
    close_id(&ftype, H5Tclose);
    close_id(&at, H5Aclose);
    return rc;
}

/* One string (scalar or 1-element) into `out`. */
static int attr_read_string(hid_t obj, const char *objname, const char *name, char *out,
                            size_t cap, const char *file, struct tf_error *err)
{
    char **v = NULL;
    int n = 0;
    if (attr_read_strings(obj, objname, name, 1, &v, &n, file, err) != 0)
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
    strings_free(v, n);
    return rc;
}

/* A numeric attribute (scalar or one element) converted to `mtype`: 1 read, 0 absent. */
static int attr_read_number(hid_t obj, const char *objname, const char *name, int required,
                            H5T_class_t cls, hid_t mtype, void *out, const char *file,
                            struct tf_error *err)
{
    hid_t at = H5I_INVALID_HID, ftype = H5I_INVALID_HID, space = H5I_INVALID_HID;
    hsize_t count = 0;
    int rc = -1;
    int found = attr_open(obj, objname, name, required, &at, file, err);
    if (found <= 0)
        return found;
    ftype = H5Aget_type(at);
    if (ftype < 0 || H5Tget_class(ftype) != cls || attr_count(at, &space, &count) != 0 ||
        count != 1) {
        H5Eclear2(H5E_DEFAULT);
        tf_error_set(err, TF_ERR_SCHEMA, "%s: attribute '%s' of %s should be one %s", file,
                     name, objname, class_name(cls));
        goto fail;
    }
    if (H5Aread(at, mtype, out) < 0) {
        hdf5_error(err, "%s: cannot read attribute '%s' of %s", file, name, objname);
        goto fail;
    }
    rc = 1;
fail:
    close_id(&space, H5Sclose);
    close_id(&ftype, H5Tclose);
    close_id(&at, H5Aclose);
    return rc;
}

/* A required 1-D integer attribute as a new int64 array. */
static int attr_read_i64s(hid_t obj, const char *objname, const char *name, int64_t **out,
                          int *n, const char *file, struct tf_error *err)
{
    hid_t at = H5I_INVALID_HID, ftype = H5I_INVALID_HID, space = H5I_INVALID_HID;
    hsize_t count = 0;
    int rc = -1;
    *out = NULL;
    *n = 0;
    if (attr_open(obj, objname, name, 1, &at, file, err) <= 0)
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
        hdf5_error(err, "%s: cannot read attribute '%s' of %s", file, name, objname);
        free(*out);
        *out = NULL;
        goto fail;
    }
    *n = (int)count;
    rc = 0;
fail:
    close_id(&space, H5Sclose);
    close_id(&ftype, H5Tclose);
    close_id(&at, H5Aclose);
    return rc;
}

/* ---------------------------------------------------------------- writing */

struct results_pack {
    const struct tf_archive_kernel *ak;
    struct results_cols c;
    int *digits;
};

static int devices_pack(void *ctx, const struct table *t, unsigned char *buf, uint64_t lo,
                        uint64_t hi, struct tf_error *err)
{
    const struct tf_archive *a = ctx;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_device *d = &a->devices[i];
        uint64_t r = i - lo;
        PUT(t, buf, r, DEV_ID, uint32_t, (uint32_t)i);
        put_str(t, buf, r, DEV_BACKEND, d->backend);
        put_str(t, buf, r, DEV_VENDOR, d->vendor);
        put_str(t, buf, r, DEV_NAME, d->name);
        put_str(t, buf, r, DEV_ARCH, d->arch);
        put_str(t, buf, r, DEV_UUID, d->uuid);
        put_str(t, buf, r, DEV_PCI_BUS, d->pci_bus);
        put_str(t, buf, r, DEV_HOST, d->host);
        PUT(t, buf, r, DEV_MEMORY, uint64_t, d->memory_bytes);
        PUT(t, buf, r, DEV_CUS, uint32_t, d->compute_units);
        put_str(t, buf, r, DEV_DRIVER, d->driver_version);
        put_str(t, buf, r, DEV_RUNTIME, d->runtime_version);
        put_str(t, buf, r, DEV_COMPILER, d->compiler_version);
        for (int p = 0; p < TF_DEVPROP_COUNT; p++)
            PUT(t, buf, r, DEV_PROP0 + p, int64_t, d->props[p]);
    }
    return 0;
}

static int runs_pack(void *ctx, const struct table *t, unsigned char *buf, uint64_t lo,
                     uint64_t hi, struct tf_error *err)
{
    const struct tf_archive *a = ctx;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_archive_run *run = &a->runs[i];
        uint64_t r = i - lo;
        char iso[ISO_LEN];
        PUT(t, buf, r, RUN_ID, uint32_t, (uint32_t)i);
        put_str(t, buf, r, RUN_JOB_NAME, run->job_name);
        put_str(t, buf, r, RUN_JOB_HASH, run->job_hash);
        PUT(t, buf, r, RUN_START_UNIX, double, run->start);
        PUT(t, buf, r, RUN_END_UNIX, double, run->end);
        iso_time(run->start, iso, sizeof iso);
        put_str(t, buf, r, RUN_START, iso);
        iso_time(run->end, iso, sizeof iso);
        put_str(t, buf, r, RUN_END, iso);
        put_str(t, buf, r, RUN_COMMAND, run->command);
        put_str(t, buf, r, RUN_SLURM, run->slurm_job_id);
        PUT(t, buf, r, RUN_RANKS, uint32_t, run->ranks);
        put_str(t, buf, r, RUN_VERSION, run->tunefarm_version);
        put_str(t, buf, r, RUN_REPLAY, run->replay_source);
    }
    return 0;
}

static int plan_pack(void *ctx, const struct table *t, unsigned char *buf, uint64_t lo,
                     uint64_t hi, struct tf_error *err)
{
    const struct tf_archive *a = ctx;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_archive_plan *p = &a->plans[i];
        uint64_t r = i - lo;
        PUT(t, buf, r, PLAN_RUN, uint32_t, p->run);
        put_str(t, buf, r, PLAN_KERNEL, a->kernels[p->kernel].name);
        PUT(t, buf, r, PLAN_PROBLEM, uint32_t, p->problem);
        PUT(t, buf, r, PLAN_DEVICE, uint32_t, p->device);
        PUT(t, buf, r, PLAN_PLANNED, uint64_t, p->planned);
    }
    return 0;
}

static int problems_pack(void *ctx, const struct table *t, unsigned char *buf, uint64_t lo,
                         uint64_t hi, struct tf_error *err)
{
    const struct tf_archive_kernel *ak = ctx;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_archive_problem *p = &ak->problems[i];
        PUT(t, buf, i - lo, 0, uint32_t, (uint32_t)i);
        put_str(t, buf, i - lo, 1, p->name);
        for (int s = 0; s < ak->nsizes; s++)
            PUT(t, buf, i - lo, 2 + s, int64_t, p->sizes[s]);
        PUT(t, buf, i - lo, 2 + ak->nsizes, uint64_t,
            p->has_default ? p->default_index : NO_DEFAULT);
    }
    return 0;
}

static int results_pack(void *ctx, const struct table *t, unsigned char *buf, uint64_t lo,
                        uint64_t hi, struct tf_error *err)
{
    struct results_pack *rp = ctx;
    const struct tf_archive_kernel *ak = rp->ak;
    const struct results_cols *c = &rp->c;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        const struct tf_archive_row *row = &ak->rows[i];
        const struct tf_result *r = &row->r;
        uint64_t o = i - lo;
        PUT(t, buf, o, c->run, uint32_t, row->run);
        PUT(t, buf, o, c->device, uint32_t, row->device);
        PUT(t, buf, o, c->problem, uint32_t, r->problem);
        PUT(t, buf, o, c->config, uint64_t, r->config);
        kernel_decode(ak, r->config, rp->digits);
        for (int p = 0; p < ak->nparams; p++) {
            const struct tf_param *pa = &ak->params[p];
            if (pa->kind == TF_PARAM_INT)
                PUT(t, buf, o, c->param0 + p, int64_t, pa->ints[rp->digits[p]]);
            else
                put_str(t, buf, o, c->param0 + p, pa->strings[rp->digits[p]]);
        }
        PUT(t, buf, o, c->status, uint8_t, r->status);
        PUT(t, buf, o, c->samples, uint32_t, r->samples);
        PUT(t, buf, o, c->time_median, double, r->time_median);
        PUT(t, buf, o, c->time_min, double, r->time_min);
        PUT(t, buf, o, c->time_mean, double, r->time_mean);
        PUT(t, buf, o, c->time_rsd, double, r->time_rsd);
        PUT(t, buf, o, c->compile_time, double, r->compile_time);
        PUT(t, buf, o, c->device_time, double, r->device_time);
        PUT(t, buf, o, c->registers, int32_t, r->registers);
        PUT(t, buf, o, c->shared_bytes, int64_t, r->shared_bytes);
        PUT(t, buf, o, c->spill_bytes, int64_t, r->spill_bytes);
        PUT(t, buf, o, c->sm_clock, float, r->sm_clock_mhz);
        PUT(t, buf, o, c->power, float, r->power_w);
        PUT(t, buf, o, c->temperature, float, r->temperature_c);
        PUT(t, buf, o, c->energy, double, r->energy_j);
        PUT(t, buf, o, c->flushed_l2, uint8_t, r->flushed_l2);
        PUT(t, buf, o, c->throttled, uint8_t, r->throttled);
        PUT(t, buf, o, c->phase, uint8_t, r->phase);
        PUT(t, buf, o, c->timestamp, double, r->timestamp);
        for (int m = 0; m < ak->nmetrics; m++)
            PUT(t, buf, o, c->metric0 + m, double, r->metrics[m]);
        put_str(t, buf, o, c->message, r->message);
    }
    return 0;
}

static int write_kernel(hid_t kernels, const struct tf_archive_kernel *ak, const char *path,
                        struct tf_error *err)
{
    hid_t g = H5I_INVALID_HID;
    struct table t;
    struct results_pack rp;
    int rc = -1;
    memset(&t, 0, sizeof t);
    memset(&rp, 0, sizeof rp);

    g = H5Gcreate2(kernels, ak->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) {
        hdf5_error(err, "%s: cannot create group /kernels/%s", path, ak->name);
        goto fail;
    }
    const char **pnames = tf_xcalloc((size_t)ak->nparams + 1, sizeof *pnames);
    for (int i = 0; i < ak->nparams; i++)
        pnames[i] = ak->params[i].name;
    const char *failed = NULL;
    if (attr_write_string(g, "source_hash", ak->source_hash) != 0)
        failed = "source_hash";
    else if (attr_write_strings(g, "parameter_names", pnames, ak->nparams, 0) != 0)
        failed = "parameter_names";
    else if (attr_write_strings(g, "size_names", (const char *const *)ak->size_names, ak->nsizes, 0) != 0)
        failed = "size_names";
    else if (attr_write_strings(g, "constraints", (const char *const *)ak->constraints,
                                ak->nconstraints, 0) != 0)
        failed = "constraints";
    else if (attr_write_strings(g, "metric_names", (const char *const *)ak->metric_names,
                                ak->nmetrics, 0) != 0)
        failed = "metric_names";
    else if (ak->has_default && attr_write_scalar(g, "default_index", H5T_STD_U64LE,
                                                  H5T_NATIVE_UINT64, &ak->default_index) != 0)
        failed = "default_index";
    free(pnames);
    for (int i = 0; failed == NULL && i < ak->nparams; i++) {
        const struct tf_param *p = &ak->params[i];
        char name[320];
        snprintf(name, sizeof name, "values:%s", p->name);
        int r = p->kind == TF_PARAM_INT
                    ? attr_write_i64s(g, name, p->ints, p->count)
                    : attr_write_strings(g, name, (const char *const *)p->strings, p->count, 0);
        if (r != 0)
            failed = p->name;
    }
    if (failed) {
        hdf5_error(err, "%s: cannot write attribute '%s' of /kernels/%s", path, failed, ak->name);
        goto fail;
    }
    if (problems_table(&t, ak, path, 1, err) != 0 ||
        table_write(g, "problems", &t, (uint64_t)ak->nproblems, 0, problems_pack, (void *)ak,
                    err) != 0)
        goto fail;
    table_free(&t);
    rp.ak = ak;
    rp.digits = tf_xcalloc((size_t)ak->nparams + 1, sizeof *rp.digits);
    if (results_table(&t, &rp.c, ak, path, err) != 0 ||
        table_write(g, "results", &t, ak->nrows, 1, results_pack, &rp, err) != 0)
        goto fail;
    rc = 0;
fail:
    free(rp.digits);
    table_free(&t);
    close_id(&g, H5Gclose);
    return rc;
}

static int write_contents(hid_t f, const struct tf_archive *a, const char *path,
                          struct tf_error *err)
{
    hid_t gcpl = H5I_INVALID_HID, kernels = H5I_INVALID_HID;
    struct table t;
    int rc = -1;
    memset(&t, 0, sizeof t);

    char iso[ISO_LEN];
    int32_t version = TF_ARCHIVE_SCHEMA_VERSION;
    iso_time(a->created, iso, sizeof iso);
    if (attr_write_string(f, "format", TF_ARCHIVE_FORMAT) != 0 ||
        attr_write_scalar(f, "schema_version", H5T_STD_I32LE, H5T_NATIVE_INT32, &version) != 0 ||
        attr_write_string(f, "created", iso) != 0 ||
        attr_write_scalar(f, "created_unix", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &a->created) != 0 ||
        attr_write_string(f, "tunefarm_version", a->tunefarm_version) != 0 ||
        attr_write_scalar(f, "checkpoint", H5T_STD_U64LE, H5T_NATIVE_UINT64, &a->checkpoint) != 0 ||
        (a->id[0] != '\0' && attr_write_string(f, "archive_id", a->id) != 0)) {
        hdf5_error(err, "%s: cannot write the root attributes", path);
        goto fail;
    }
    if (devices_table(&t, path, TF_DEVPROP_COUNT, err) != 0 ||
        table_write(f, "devices", &t, (uint64_t)a->ndevices, 0, devices_pack, (void *)a, err) != 0)
        goto fail;
    table_free(&t);
    if (runs_table(&t, path, 1, err) != 0 ||
        table_write(f, "runs", &t, (uint64_t)a->nruns, 0, runs_pack, (void *)a, err) != 0)
        goto fail;
    table_free(&t);
    if (plan_table(&t, path, err) != 0 ||
        table_write(f, "plan", &t, (uint64_t)a->nplans, 0, plan_pack, (void *)a, err) != 0)
        goto fail;
    table_free(&t);
    /* Creation order lets the reader give back kernels in the model's order. */
    gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (gcpl < 0 ||
        H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0 ||
        (kernels = H5Gcreate2(f, "kernels", H5P_DEFAULT, gcpl, H5P_DEFAULT)) < 0) {
        hdf5_error(err, "%s: cannot create group /kernels", path);
        goto fail;
    }
    for (int k = 0; k < a->nkernels; k++)
        if (write_kernel(kernels, &a->kernels[k], path, err) != 0)
            goto fail;
    rc = 0;
fail:
    table_free(&t);
    close_id(&kernels, H5Gclose);
    close_id(&gcpl, H5Pclose);
    return rc;
}

/* mkdir -p of the folder that will hold `path`; the folder's name into `dir`. */
static int make_parent(const char *path, char *dir, size_t cap, struct tf_error *err)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        tf_strlcpy(dir, ".", cap);
        return 0;
    }
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= cap)
        return tf_error_set(err, TF_ERR_IO, "archive path '%s' is too long", path);
    memcpy(dir, path, n);
    dir[n] = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
                int e = errno;
                tf_error_set(err, TF_ERR_IO, "cannot create folder '%s' for archive '%s': %s", dir,
                             path, strerror(e));
                *p = saved;
                return -1;
            }
            *p = saved;
            if (saved == '\0')
                break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return tf_error_set(err, TF_ERR_IO, "cannot use '%s' as the folder of archive '%s': %s",
                            dir, path, errno ? strerror(errno) : "not a folder");
    return 0;
}

static int fsync_path(const char *p, int is_dir, struct tf_error *err)
{
    int fd = open(p, O_RDONLY | O_CLOEXEC | (is_dir ? O_DIRECTORY : 0));
    if (fd < 0)
        return tf_error_set(err, TF_ERR_IO, "cannot open '%s' to sync it: %s", p, strerror(errno));
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    /* Some filesystems cannot sync a folder; the rename is then as durable as they allow. */
    if (rc != 0 && !(is_dir && (e == EINVAL || e == EROFS)))
        return tf_error_set(err, TF_ERR_IO, "cannot sync '%s': %s", p, strerror(e));
    return 0;
}

/* Test hook: TUNEFARM_TEST_CHECKPOINT_PAUSE=SECONDS sleeps while the temporary
 * file is half written (contents handed to HDF5, not yet flushed), so the fault
 * tests can SIGKILL a coordinator in the middle of a checkpoint for certain. */
static void test_pause(void)
{
    const char *v = getenv("TUNEFARM_TEST_CHECKPOINT_PAUSE");
    double s = v ? strtod(v, NULL) : 0;
    if (s > 0 && s < 3600) {
        struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
}

int tf_archive_write(const struct tf_archive *a, const char *path, struct tf_error *err)
{
    struct hdf5_quiet q;
    hid_t fapl = H5I_INVALID_HID, f = H5I_INVALID_HID;
    char dir[4096], *tmp = NULL;
    int rc = -1, created = 0;

    if (model_validate(a, path, err) != 0 || make_parent(path, dir, sizeof dir, err) != 0)
        return -1;
    size_t tn = strlen(path) + 32;
    tmp = tf_xmalloc(tn);
    snprintf(tmp, tn, "%s.tmp.%ld", path, (long)getpid());
    /* Create it ourselves first: errno says "Permission denied" far better than HDF5. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        tf_error_set(err, TF_ERR_IO, "cannot create temporary archive '%s': %s", tmp,
                     strerror(errno));
        free(tmp);
        return -1;
    }
    close(fd);
    created = 1;

    hdf5_quiet_begin(&q);
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* STRONG: closing the file on a failure path also closes whatever is left open.
     * 1.8 format: readable by every h5py/HDF5 of the last decade, yet allows large
     * attributes (long value lists) and link creation order. */
    if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18) < 0) {
        hdf5_error(err, "%s: cannot set up HDF5 file access", tmp);
        goto fail;
    }
    f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (f < 0) {
        hdf5_error(err, "cannot create HDF5 file '%s'", tmp);
        goto fail;
    }
    if (write_contents(f, a, path, err) != 0)
        goto fail;
    test_pause();
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) {
        hdf5_error(err, "%s: cannot flush", tmp);
        goto fail;
    }
    herr_t closed = H5Fclose(f);
    f = H5I_INVALID_HID;
    if (closed < 0) {
        hdf5_error(err, "%s: cannot close", tmp);
        goto fail;
    }
    if (fsync_path(tmp, 0, err) != 0)
        goto fail;
    if (rename(tmp, path) != 0) {
        tf_error_set(err, TF_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, path,
                     strerror(errno));
        goto fail;
    }
    created = 0;
    if (fsync_path(dir, 1, err) != 0)
        goto fail;
    rc = 0;
fail:
    close_id(&f, H5Fclose);
    close_id(&fapl, H5Pclose);
    if (created)
        unlink(tmp);
    free(tmp);
    hdf5_quiet_end(&q);
    return rc;
}

/* ---------------------------------------------------------------- reading */

struct read_ctx {
    struct tf_archive *a;
    struct tf_archive_kernel *ak;
    struct results_cols c;
    const char *path;
    int *digits;
    uint64_t cartesian;
    char **plan_names;   /* /plan's kernel column until plan_resolve */
    int nplan_names;
    int default_col;     /* problems' `default_config` column; -1: absent (older archive) */
};

static int check_id(const struct table *t, const unsigned char *buf, uint64_t o, uint64_t i,
                    struct tf_error *err)
{
    uint32_t id;
    GET(t, buf, o, 0, id);
    if ((uint64_t)id != i)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s row %llu has id %u (ids must "
                            "equal the row index)", t->file, t->what, (unsigned long long)i, id);
    return 0;
}

static int devices_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > INT32_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /devices has %llu rows", rc->path,
                            (unsigned long long)n);
    rc->a->ndevices = (int)n;
    rc->a->devices = tf_xcalloc((size_t)(n ? n : 1), sizeof *rc->a->devices);
    return 0;
}

static int devices_unpack(void *ctx, const struct table *t, const unsigned char *buf,
                          uint64_t lo, uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_device *d = &rc->a->devices[i];
        uint64_t r = i - lo;
        if (check_id(t, buf, r, i, err) != 0)
            return -1;
        get_str(t, buf, r, DEV_BACKEND, d->backend, sizeof d->backend);
        get_str(t, buf, r, DEV_VENDOR, d->vendor, sizeof d->vendor);
        get_str(t, buf, r, DEV_NAME, d->name, sizeof d->name);
        get_str(t, buf, r, DEV_ARCH, d->arch, sizeof d->arch);
        get_str(t, buf, r, DEV_UUID, d->uuid, sizeof d->uuid);
        get_str(t, buf, r, DEV_PCI_BUS, d->pci_bus, sizeof d->pci_bus);
        get_str(t, buf, r, DEV_HOST, d->host, sizeof d->host);
        GET(t, buf, r, DEV_MEMORY, d->memory_bytes);
        GET(t, buf, r, DEV_CUS, d->compute_units);
        get_str(t, buf, r, DEV_DRIVER, d->driver_version, sizeof d->driver_version);
        get_str(t, buf, r, DEV_RUNTIME, d->runtime_version, sizeof d->runtime_version);
        get_str(t, buf, r, DEV_COMPILER, d->compiler_version, sizeof d->compiler_version);
        for (int p = 0; p < TF_DEVPROP_COUNT && DEV_PROP0 + p < t->n; p++)
            GET(t, buf, r, DEV_PROP0 + p, d->props[p]);
        /* an archive from before the column: a multiprocessor holds at least
         * the shared memory one block may opt in to */
        if (DEV_PROP0 + TF_DEVPROP_MAX_SHARED_PER_SM >= t->n)
            d->props[TF_DEVPROP_MAX_SHARED_PER_SM] = d->props[TF_DEVPROP_MAX_SHARED_OPTIN];
    }
    return 0;
}

static int runs_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > INT32_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /runs has %llu rows", rc->path,
                            (unsigned long long)n);
    rc->a->nruns = (int)n;
    rc->a->runs = tf_xcalloc((size_t)(n ? n : 1), sizeof *rc->a->runs);
    return 0;
}

static int plan_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > INT32_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /plan has %llu rows", rc->path,
                            (unsigned long long)n);
    rc->a->nplans = (int)n;
    rc->a->plans = tf_xcalloc((size_t)(n ? n : 1), sizeof *rc->a->plans);
    return 0;
}

/* Kernel names are resolved once the kernels are read (plan_resolve). */
static int plan_unpack(void *ctx, const struct table *t, const unsigned char *buf, uint64_t lo,
                       uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    (void)err;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_archive_plan *p = &rc->a->plans[i];
        uint64_t r = i - lo;
        char name[129];
        GET(t, buf, r, PLAN_RUN, p->run);
        get_str(t, buf, r, PLAN_KERNEL, name, sizeof name);
        GET(t, buf, r, PLAN_PROBLEM, p->problem);
        GET(t, buf, r, PLAN_DEVICE, p->device);
        GET(t, buf, r, PLAN_PLANNED, p->planned);
        p->kernel = UINT32_MAX;
        rc->plan_names = tf_xrealloc(rc->plan_names, sizeof *rc->plan_names * (size_t)(i + 1));
        rc->plan_names[i] = tf_xstrdup(name);
        rc->nplan_names = (int)i + 1;
    }
    return 0;
}

static int plan_resolve(struct read_ctx *rc, struct tf_error *err)
{
    struct tf_archive *a = rc->a;
    for (int i = 0; i < a->nplans; i++) {
        struct tf_archive_plan *p = &a->plans[i];
        for (int k = 0; k < a->nkernels && p->kernel == UINT32_MAX; k++)
            if (strcmp(a->kernels[k].name, rc->plan_names[i]) == 0)
                p->kernel = (uint32_t)k;
        if (p->kernel == UINT32_MAX || p->run >= (uint32_t)a->nruns ||
            p->device >= (uint32_t)a->ndevices ||
            p->problem >= (uint32_t)a->kernels[p->kernel].nproblems)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: /plan row %d names a run, kernel, "
                                "problem or device the archive does not have (damaged file?)",
                                rc->path, i);
    }
    return 0;
}

static int runs_unpack(void *ctx, const struct table *t, const unsigned char *buf, uint64_t lo,
                       uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_archive_run *run = &rc->a->runs[i];
        uint64_t r = i - lo;
        if (check_id(t, buf, r, i, err) != 0)
            return -1;
        get_str(t, buf, r, RUN_JOB_NAME, run->job_name, sizeof run->job_name);
        get_str(t, buf, r, RUN_JOB_HASH, run->job_hash, sizeof run->job_hash);
        GET(t, buf, r, RUN_START_UNIX, run->start);
        GET(t, buf, r, RUN_END_UNIX, run->end);
        get_str(t, buf, r, RUN_COMMAND, run->command, sizeof run->command);
        get_str(t, buf, r, RUN_SLURM, run->slurm_job_id, sizeof run->slurm_job_id);
        GET(t, buf, r, RUN_RANKS, run->ranks);
        get_str(t, buf, r, RUN_VERSION, run->tunefarm_version, sizeof run->tunefarm_version);
        if (t->n > RUN_REPLAY)
            get_str(t, buf, r, RUN_REPLAY, run->replay_source, sizeof run->replay_source);
    }
    return 0;
}

static int problems_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > INT32_MAX)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /kernels/%s/problems has %llu rows",
                            rc->path, rc->ak->name, (unsigned long long)n);
    rc->ak->problems = tf_xcalloc((size_t)(n ? n : 1), sizeof *rc->ak->problems);
    rc->ak->nproblems = (int)n;
    for (uint64_t i = 0; i < n; i++)
        rc->ak->problems[i].sizes = tf_xcalloc((size_t)(rc->ak->nsizes ? rc->ak->nsizes : 1),
                                               sizeof(int64_t));
    return 0;
}

static int problems_unpack(void *ctx, const struct table *t, const unsigned char *buf,
                           uint64_t lo, uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_archive_problem *p = &rc->ak->problems[i];
        if (check_id(t, buf, i - lo, i, err) != 0)
            return -1;
        get_str(t, buf, i - lo, 1, p->name, sizeof p->name);
        for (int s = 0; s < rc->ak->nsizes; s++)
            GET(t, buf, i - lo, 2 + s, p->sizes[s]);
        if (rc->default_col < 0) {
            /* An older archive: its one default held for every problem. */
            p->has_default = rc->ak->has_default;
            p->default_index = rc->ak->has_default ? rc->ak->default_index : 0;
            continue;
        }
        uint64_t def;
        GET(t, buf, i - lo, rc->default_col, def);
        if (def != NO_DEFAULT && def >= rc->cartesian)
            return tf_error_set(err, TF_ERR_SCHEMA,
                                "%s: dataset %s row %llu: column 'default_config' (%llu) is out "
                                "of range: the space has %llu configurations, and %llu means "
                                "none", t->file, t->what, (unsigned long long)i,
                                (unsigned long long)def, (unsigned long long)rc->cartesian,
                                (unsigned long long)NO_DEFAULT);
        p->has_default = def != NO_DEFAULT;
        p->default_index = p->has_default ? def : 0;
    }
    return 0;
}

static int results_sized(void *ctx, uint64_t n, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    if (n > SIZE_MAX / sizeof(struct tf_archive_row))
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: /kernels/%s/results has %llu rows",
                            rc->path, rc->ak->name, (unsigned long long)n);
    /* Not tf_xmalloc: a hostile row count must be an error, not an abort. */
    rc->ak->rows = malloc((size_t)(n ? n : 1) * sizeof *rc->ak->rows);
    if (rc->ak->rows == NULL)
        return tf_error_set(err, TF_ERR_NOMEM, "%s: no memory for the %llu rows of "
                            "/kernels/%s/results", rc->path, (unsigned long long)n, rc->ak->name);
    rc->ak->nrows = rc->ak->cap = n;
    return 0;
}

static int results_unpack(void *ctx, const struct table *t, const unsigned char *buf,
                          uint64_t lo, uint64_t hi, struct tf_error *err)
{
    struct read_ctx *rc = ctx;
    const struct tf_archive_kernel *ak = rc->ak;
    const struct results_cols *c = &rc->c;
    for (uint64_t i = lo; i < hi; i++) {
        struct tf_archive_row *row = &rc->ak->rows[i];
        struct tf_result *r = &row->r;
        uint64_t o = i - lo;
        memset(row, 0, sizeof *row);
        GET(t, buf, o, c->run, row->run);
        GET(t, buf, o, c->device, row->device);
        GET(t, buf, o, c->problem, r->problem);
        GET(t, buf, o, c->config, r->config);
        GET(t, buf, o, c->status, r->status);
        GET(t, buf, o, c->samples, r->samples);
        GET(t, buf, o, c->time_median, r->time_median);
        GET(t, buf, o, c->time_min, r->time_min);
        GET(t, buf, o, c->time_mean, r->time_mean);
        GET(t, buf, o, c->time_rsd, r->time_rsd);
        GET(t, buf, o, c->compile_time, r->compile_time);
        GET(t, buf, o, c->device_time, r->device_time);
        GET(t, buf, o, c->registers, r->registers);
        GET(t, buf, o, c->shared_bytes, r->shared_bytes);
        GET(t, buf, o, c->spill_bytes, r->spill_bytes);
        GET(t, buf, o, c->sm_clock, r->sm_clock_mhz);
        GET(t, buf, o, c->power, r->power_w);
        GET(t, buf, o, c->temperature, r->temperature_c);
        GET(t, buf, o, c->energy, r->energy_j);
        GET(t, buf, o, c->flushed_l2, r->flushed_l2);
        GET(t, buf, o, c->throttled, r->throttled);
        GET(t, buf, o, c->phase, r->phase);
        GET(t, buf, o, c->timestamp, r->timestamp);
        for (int m = 0; m < TF_MAX_METRICS; m++)
            r->metrics[m] = NAN;
        for (int m = 0; m < ak->nmetrics; m++)
            GET(t, buf, o, c->metric0 + m, r->metrics[m]);
        get_str(t, buf, o, c->message, r->message, sizeof r->message);

        const char *bad = row->run >= (uint32_t)rc->a->nruns        ? "run"
                          : row->device >= (uint32_t)rc->a->ndevices ? "device"
                          : r->problem >= (uint32_t)ak->nproblems    ? "problem"
                          : r->config >= rc->cartesian               ? "config"
                          : r->status >= TF_STATUS_COUNT             ? "status"
                                                                     : NULL;
        if (bad)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s row %llu: column '%s' is "
                                "out of range", t->file, t->what, (unsigned long long)i, bad);
        /* The parameter columns are derived from `config`; disagreement means the
         * file was edited or damaged, and rows would silently mean two things. */
        kernel_decode(ak, r->config, rc->digits);
        for (int p = 0; p < ak->nparams; p++) {
            const struct tf_param *pa = &ak->params[p];
            int same;
            if (pa->kind == TF_PARAM_INT) {
                int64_t v;
                GET(t, buf, o, c->param0 + p, v);
                same = v == pa->ints[rc->digits[p]];
            } else {
                char s[ENUM_VALUE_LEN + 1];
                get_str(t, buf, o, c->param0 + p, s, sizeof s);
                same = strcmp(s, pa->strings[rc->digits[p]]) == 0;
            }
            if (!same)
                return tf_error_set(err, TF_ERR_SCHEMA, "%s: dataset %s row %llu: column '%s' "
                                    "disagrees with config %llu", t->file, t->what,
                                    (unsigned long long)i, pa->name,
                                    (unsigned long long)r->config);
        }
    }
    return 0;
}

static int read_kernel(hid_t kernels, const char *name, struct tf_archive *a, const char *path,
                       struct tf_error *err)
{
    hid_t g = H5I_INVALID_HID;
    struct table t;
    struct read_ctx rc;
    char objname[320];
    char **pnames = NULL;
    int npnames = 0, ret = -1;
    memset(&t, 0, sizeof t);
    memset(&rc, 0, sizeof rc);
    snprintf(objname, sizeof objname, "/kernels/%s", name);

    /* Owned by the archive from here on, so `a`'s destroy frees a half-read kernel. */
    a->kernels = tf_xrealloc(a->kernels, (size_t)(a->nkernels + 1) * sizeof *a->kernels);
    struct tf_archive_kernel *ak = &a->kernels[a->nkernels++];
    memset(ak, 0, sizeof *ak);
    ak->name = tf_xstrdup(name);

    g = H5Gopen2(kernels, name, H5P_DEFAULT);
    if (g < 0) {
        hdf5_error(err, "%s: cannot open group %s", path, objname);
        goto fail;
    }
    if (attr_read_string(g, objname, "source_hash", ak->source_hash, sizeof ak->source_hash, path,
                         err) != 0 ||
        attr_read_strings(g, objname, "parameter_names", 1, &pnames, &npnames, path, err) != 0 ||
        attr_read_strings(g, objname, "size_names", 1, &ak->size_names, &ak->nsizes, path,
                          err) != 0 ||
        attr_read_strings(g, objname, "constraints", 0, &ak->constraints, &ak->nconstraints, path,
                          err) != 0 ||
        attr_read_strings(g, objname, "metric_names", 1, &ak->metric_names, &ak->nmetrics, path,
                          err) != 0)
        goto fail;
    int has = attr_read_number(g, objname, "default_index", 0, H5T_INTEGER, H5T_NATIVE_UINT64,
                               &ak->default_index, path, err);
    if (has < 0)
        goto fail;
    ak->has_default = has;

    ak->params = tf_xcalloc((size_t)npnames + 1, sizeof *ak->params);
    for (int i = 0; i < npnames; i++) {
        struct tf_param *p = &ak->params[i];
        char an[320];
        hid_t at = H5I_INVALID_HID, at_type = H5I_INVALID_HID;
        p->name = tf_xstrdup(pnames[i]);
        ak->nparams = i + 1;
        for (int j = 0; j < i; j++)
            if (strcmp(pnames[j], pnames[i]) == 0) {
                tf_error_set(err, TF_ERR_SCHEMA, "%s: %s names parameter '%s' twice", path,
                             objname, pnames[i]);
                goto fail;
            }
        snprintf(an, sizeof an, "values:%s", pnames[i]);
        if (attr_open(g, objname, an, 1, &at, path, err) <= 0)
            goto fail;
        at_type = H5Aget_type(at);
        H5T_class_t cls = at_type < 0 ? H5T_NO_CLASS : H5Tget_class(at_type);
        close_id(&at_type, H5Tclose);
        close_id(&at, H5Aclose);
        if (cls == H5T_INTEGER) {
            p->kind = TF_PARAM_INT;
            if (attr_read_i64s(g, objname, an, &p->ints, &p->count, path, err) != 0)
                goto fail;
        } else if (cls == H5T_STRING) {
            p->kind = TF_PARAM_ENUM;
            if (attr_read_strings(g, objname, an, 1, &p->strings, &p->count, path, err) != 0)
                goto fail;
        } else {
            tf_error_set(err, TF_ERR_SCHEMA, "%s: attribute '%s' of %s is %s; expected integers "
                         "(int parameter) or strings (enum parameter)", path, an, objname,
                         class_name(cls));
            goto fail;
        }
    }
    if (kernel_validate(ak, path, err) != 0)
        goto fail;
    if (ak->has_default && ak->default_index >= kernel_cartesian(ak)) {
        tf_error_set(err, TF_ERR_SCHEMA, "%s: %s default_index %llu is out of range", path,
                     objname, (unsigned long long)ak->default_index);
        goto fail;
    }

    rc.a = a;
    rc.ak = ak;
    rc.path = path;
    rc.cartesian = kernel_cartesian(ak);
    rc.digits = tf_xcalloc((size_t)ak->nparams + 1, sizeof *rc.digits);
    /* An older archive whose kernel has a size named default_config has that
     * column without the per-problem defaults: it is theirs, read as a size. */
    int with_default = dataset_has_column(g, "problems", "default_config");
    for (int z = 0; z < ak->nsizes && with_default; z++)
        if (strcmp(ak->size_names[z], "default_config") == 0)
            with_default = 0;
    if (problems_table(&t, ak, path, with_default, err) != 0)
        goto fail;
    rc.default_col = with_default ? 2 + ak->nsizes : -1;
    if (table_read(g, "problems", &t, problems_sized, problems_unpack, &rc, err) != 0)
        goto fail;
    table_free(&t);
    if (results_table(&t, &rc.c, ak, path, err) != 0 ||
        table_read(g, "results", &t, results_sized, results_unpack, &rc, err) != 0)
        goto fail;
    ret = 0;
fail:
    free(rc.digits);
    strings_free(pnames, npnames);
    table_free(&t);
    close_id(&g, H5Gclose);
    return ret;
}

static int read_kernels(hid_t f, struct tf_archive *a, const char *path, struct tf_error *err)
{
    hid_t kernels = H5I_INVALID_HID;
    H5G_info_t info;
    int rc = -1;
    if (H5Lexists(f, "kernels", H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: archive has no group /kernels", path);
    }
    kernels = H5Gopen2(f, "kernels", H5P_DEFAULT);
    if (kernels < 0 || H5Gget_info(kernels, &info) < 0) {
        hdf5_error(err, "%s: cannot open group /kernels", path);
        goto fail;
    }
    /* Our files track creation order; a file rewritten by other tools may not. */
    H5_index_t order = H5_INDEX_CRT_ORDER;
    if (info.nlinks > 0 &&
        H5Lget_name_by_idx(kernels, ".", order, H5_ITER_INC, 0, NULL, 0, H5P_DEFAULT) < 0) {
        H5Eclear2(H5E_DEFAULT);
        order = H5_INDEX_NAME;
    }
    for (hsize_t i = 0; i < info.nlinks; i++) {
        char name[256];
        ssize_t n = H5Lget_name_by_idx(kernels, ".", order, H5_ITER_INC, i, name, sizeof name,
                                       H5P_DEFAULT);
        if (n < 0 || (size_t)n >= sizeof name) {
            hdf5_error(err, "%s: cannot read the name of kernel %llu under /kernels", path,
                       (unsigned long long)i);
            goto fail;
        }
        if (read_kernel(kernels, name, a, path, err) != 0)
            goto fail;
    }
    rc = 0;
fail:
    close_id(&kernels, H5Gclose);
    return rc;
}

static int read_root(hid_t f, struct tf_archive *a, const char *path, struct tf_error *err)
{
    char format[64];
    htri_t ex = H5Aexists(f, "format");
    if (ex < 0)
        return hdf5_error(err, "%s: cannot read the root attributes (damaged file?)", path);
    if (ex == 0) {
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "%s is an HDF5 file but not a tunefarm archive (no 'format' attribute)",
                            path);
    }
    if (attr_read_string(f, "/", "format", format, sizeof format, path, err) != 0) {
        char why[sizeof err->message];
        tf_strlcpy(why, err ? err->message : "", sizeof why);
        return tf_error_set(err, TF_ERR_SCHEMA, "%s is an HDF5 file but not a tunefarm archive "
                            "(unreadable 'format' attribute: %s)", path, why);
    }
    if (strcmp(format, TF_ARCHIVE_FORMAT) != 0)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s is an HDF5 file but not a tunefarm archive "
                            "(format is '%s')", path, format);
    int32_t version = 0;
    if (attr_read_number(f, "/", "schema_version", 1, H5T_INTEGER, H5T_NATIVE_INT32, &version,
                         path, err) < 0)
        return -1;
    if (version < 1 || version > TF_ARCHIVE_SCHEMA_VERSION)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s has archive schema version %d; this tunefarm "
                            "reads version %d%s", path, (int)version, TF_ARCHIVE_SCHEMA_VERSION,
                            version > TF_ARCHIVE_SCHEMA_VERSION ? " (use a newer tunefarm)" : "");
    if (attr_read_number(f, "/", "created_unix", 1, H5T_FLOAT, H5T_NATIVE_DOUBLE, &a->created,
                         path, err) < 0 ||
        attr_read_string(f, "/", "tunefarm_version", a->tunefarm_version,
                         sizeof a->tunefarm_version, path, err) != 0 ||
        attr_read_number(f, "/", "checkpoint", 0, H5T_INTEGER, H5T_NATIVE_UINT64,
                         &a->checkpoint, path, err) < 0)
        return -1;
    /* Optional: archives written before ids have none (a->id stays ""). */
    htri_t has_id = H5Aexists(f, "archive_id");
    if (has_id < 0)
        return hdf5_error(err, "%s: cannot read the root attributes (damaged file?)", path);
    if (has_id > 0) {
        char id[64];
        if (attr_read_string(f, "/", "archive_id", id, sizeof id, path, err) != 0)
            return -1;
        if (!valid_id(id))
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: root attribute 'archive_id' is '%s', "
                                "expected 32 lowercase hex digits (a damaged or hand-edited "
                                "file)", path, id);
        tf_strlcpy(a->id, id, sizeof a->id);
    }
    return 0;
}

struct tf_archive *tf_archive_read(const char *path, struct tf_error *err)
{
    struct hdf5_quiet q;
    struct tf_archive *a = NULL;
    struct table t;
    struct read_ctx rc;
    hid_t fapl = H5I_INVALID_HID, f = H5I_INVALID_HID;
    int ok = 0;
    memset(&t, 0, sizeof t);
    memset(&rc, 0, sizeof rc);

    struct stat st;
    if (stat(path, &st) != 0) {
        tf_error_set(err, TF_ERR_IO, "cannot open archive %s: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        tf_error_set(err, TF_ERR_IO, "archive %s is not a regular file", path);
        return NULL;
    }
    hdf5_quiet_begin(&q);
    htri_t is = H5Fis_hdf5(path);
    if (is <= 0) {
        H5Eclear2(H5E_DEFAULT);
        tf_error_set(err, TF_ERR_SCHEMA, "%s is not an HDF5 file (so not a tunefarm archive)",
                     path);
        goto fail;
    }
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        hdf5_error(err, "%s: cannot set up HDF5 file access", path);
        goto fail;
    }
    f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    if (f < 0) {
        hdf5_error(err, "cannot open archive %s: truncated or damaged HDF5 file", path);
        goto fail;
    }
    a = tf_xcalloc(1, sizeof *a);
    rc.a = a;
    rc.path = path;
    if (read_root(f, a, path, err) != 0)
        goto fail;
    if (devices_table(&t, path,
                      dataset_has_column(f, "devices", tf_devprop_name(TF_DEVPROP_MAX_SHARED_PER_SM))
                          ? TF_DEVPROP_COUNT
                          : TF_DEVPROP_MAX_SHARED_PER_SM,
                      err) != 0 ||
        table_read(f, "devices", &t, devices_sized, devices_unpack, &rc, err) != 0)
        goto fail;
    table_free(&t);
    if (runs_table(&t, path, dataset_has_column(f, "runs", "replay_source"), err) != 0 ||
        table_read(f, "runs", &t, runs_sized, runs_unpack, &rc, err) != 0)
        goto fail;
    table_free(&t);
    if (read_kernels(f, a, path, err) != 0)
        goto fail;
    /* /plan came with `tunefarm status`: older archives lack it. */
    htri_t has_plan = H5Lexists(f, "plan", H5P_DEFAULT);
    if (has_plan > 0 && (plan_table(&t, path, err) != 0 ||
                         table_read(f, "plan", &t, plan_sized, plan_unpack, &rc, err) != 0 ||
                         plan_resolve(&rc, err) != 0))
        goto fail;
    H5Eclear2(H5E_DEFAULT);
    ok = 1;
fail:
    for (int i = 0; i < rc.nplan_names; i++)
        free(rc.plan_names[i]);
    free(rc.plan_names);
    table_free(&t);
    close_id(&f, H5Fclose);
    close_id(&fapl, H5Pclose);
    hdf5_quiet_end(&q);
    if (!ok) {
        tf_archive_destroy(a);
        return NULL;
    }
    return a;
}
