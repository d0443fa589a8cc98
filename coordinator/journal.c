/* journal.c - the append-only, checksummed result journal beside an archive.
 *
 * The file is a 16-byte header ("TFJRNL01" and the archive checkpoint it
 * follows, u64 little-endian) and then records: u32 payload length, u32 CRC-32
 * of the payload, payload (archive kernel index, run index and device index as
 * u32, then the result in the wire's encoding). A batch of results is one
 * write(2), so a killed coordinator leaves whole batches and at most one torn
 * record at the end, which the CRC or the length gives away. After a checkpoint
 * the coordinator resets the file to a bare header naming the new checkpoint;
 * a crash between the archive's rename and that reset leaves records naming
 * the previous checkpoint, which replay recognises as already folded in. The
 * run holds an exclusive flock(2) on the journal, which also keeps a second
 * run off the same archive. */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../schema/wire.h"
#include "progress.h"

#define JOURNAL_MAGIC "TFJRNL01"
#define JOURNAL_HEADER 16
/* A record larger than this is garbage, not a result. */
#define JOURNAL_RECORD_MAX 65536
/* At most one fdatasync per this many seconds while appending. */
#define JOURNAL_SYNC_INTERVAL 1.0

struct tf_journal {
    int fd;
    char path[4096];
    bool ready;        /* reset at least once: appends may go */
    bool created;      /* the file did not exist before tf_journal_open */
    off_t size;        /* bytes in the file */
    double last_sync;
    struct tf_buf buf;
};

static uint32_t crc32_table[256];

static void crc32_init(void)
{
    if (crc32_table[1] != 0)
        return;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc32_table[i] = c;
    }
}

/* CRC-32 (IEEE 802.3, as zlib's crc32). */
static uint32_t crc32(const unsigned char *p, size_t n)
{
    crc32_init();
    uint32_t c = 0xFFFFFFFFu;
    while (n--)
        c = crc32_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static uint32_t get_u32le(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void tf_journal_path(const char *archive_path, char *out, size_t cap)
{
    snprintf(out, cap, "%s.journal", archive_path);
}

/* mkdir -p of the folder holding `path` (the archive may name a new folder). */
static void make_parents(const char *path)
{
    char dir[4096];
    tf_strlcpy(dir, path, sizeof dir);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(dir, 0777);
        *p = '/';
    }
}

struct tf_journal *tf_journal_open(const char *archive_path, struct tf_error *err)
{
    struct tf_journal *j = tf_xcalloc(1, sizeof *j);
    tf_journal_path(archive_path, j->path, sizeof j->path);
    make_parents(j->path);
    j->fd = open(j->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    j->created = j->fd >= 0;
    if (j->fd < 0 && errno == EEXIST)
        j->fd = open(j->path, O_RDWR | O_CLOEXEC);
    if (j->fd < 0) {
        tf_error_set(err, TF_ERR_IO, "cannot open the journal '%s': %s (the archive's folder "
                     "must be writable)", j->path, strerror(errno));
        goto fail;
    }
    if (flock(j->fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            tf_error_set(err, TF_ERR_IO, "archive '%s' is in use by another run (its journal "
                         "'%s' is locked): wait for that run, or give another archive with -o",
                         archive_path, j->path);
        else
            tf_error_set(err, TF_ERR_IO, "cannot lock the journal '%s': %s", j->path,
                         strerror(errno));
        goto fail;
    }
    return j;
fail:
    tf_journal_close(j);
    return NULL;
}

bool tf_journal_created(const struct tf_journal *j)
{
    return j != NULL && j->created;
}

void tf_journal_close(struct tf_journal *j)
{
    if (j == NULL)
        return;
    if (j->fd >= 0)
        close(j->fd); /* releases the lock */
    tf_buf_free(&j->buf);
    free(j);
}

/* The whole file `fd` into a new buffer (*len bytes). */
static int read_whole(int fd, const char *path, unsigned char **out, size_t *len,
                      struct tf_error *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return tf_error_set(err, TF_ERR_IO, "cannot stat '%s': %s", path, strerror(errno));
    size_t cap = (size_t)st.st_size, n = 0;
    unsigned char *data = tf_xmalloc(cap + 1);
    while (n < cap) {
        ssize_t k = pread(fd, data + n, cap - n, (off_t)n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            free(data);
            return tf_error_set(err, TF_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    *out = data;
    *len = n;
    return 0;
}

/* Decode one record's payload into (kernel, row) and check it names rows that exist in `a`. */
static int decode_record(const unsigned char *p, size_t n, const struct tf_archive *a,
                         uint32_t *kernel, struct tf_archive_row *row)
{
    struct tf_buf b = {.data = (unsigned char *)p, .len = n, .cap = n};
    if (tf_buf_get_u32(&b, kernel) || tf_buf_get_u32(&b, &row->run) ||
        tf_buf_get_u32(&b, &row->device) || tf_buf_get_result(&b, &row->r) || b.pos != b.len)
        return -1;
    if (*kernel >= (uint32_t)a->nkernels || row->run >= (uint32_t)a->nruns ||
        row->device >= (uint32_t)a->ndevices ||
        row->r.problem >= (uint32_t)a->kernels[*kernel].nproblems)
        return 1;
    return 0;
}

int tf_journal_replay(struct tf_journal *j, const char *archive_path, struct tf_archive *a,
                      struct tf_journal_replay *out, struct tf_error *err)
{
    char path[4096];
    int fd = -1, rc = -1;
    unsigned char *data = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    if (j != NULL) {
        fd = j->fd;
        tf_strlcpy(path, j->path, sizeof path);
    } else {
        tf_journal_path(archive_path, path, sizeof path);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            if (errno == ENOENT)
                return 0;
            return tf_error_set(err, TF_ERR_IO, "cannot open the journal '%s': %s", path,
                                strerror(errno));
        }
    }
    if (read_whole(fd, path, &data, &len, err) != 0)
        goto done;
    out->present = j == NULL || len > 0;
    if (len < JOURNAL_HEADER) {
        /* Empty, or cut while its header was rewritten after a checkpoint (the
         * archive already holds everything): nothing to replay. */
        out->torn_bytes = len;
        rc = 0;
        goto done;
    }
    if (memcmp(data, JOURNAL_MAGIC, 8) != 0) {
        tf_error_set(err, TF_ERR_SCHEMA, "'%s' is not a tunefarm journal (bad magic): move it "
                     "away; the archive '%s' itself is unaffected", path, archive_path);
        goto done;
    }
    uint64_t generation = (uint64_t)get_u32le(data + 8) | (uint64_t)get_u32le(data + 12) << 32;
    if (generation < a->checkpoint) {
        out->stale = true;
        rc = 0;
        goto done;
    }
    if (generation > a->checkpoint) {
        tf_error_set(err, TF_ERR_SCHEMA,
                     "journal '%s' follows checkpoint %llu but archive '%s' is at checkpoint "
                     "%llu: the archive was removed or replaced by an older copy. Put the newer "
                     "archive back, or move the journal away to go on without it (its results "
                     "would be measured again)",
                     path, (unsigned long long)generation, archive_path,
                     (unsigned long long)a->checkpoint);
        goto done;
    }
    size_t at = JOURNAL_HEADER;
    while (at < len) {
        if (len - at < 8)
            break;
        uint32_t n = get_u32le(data + at), crc = get_u32le(data + at + 4);
        if (n > JOURNAL_RECORD_MAX || n > len - at - 8 || crc32(data + at + 8, n) != crc)
            break;
        uint32_t kernel;
        struct tf_archive_row row;
        int bad = decode_record(data + at + 8, n, a, &kernel, &row);
        if (bad < 0)
            break;
        if (bad > 0) {
            tf_error_set(err, TF_ERR_SCHEMA,
                         "journal '%s' names a kernel, run, device or problem that archive "
                         "'%s' does not have (record at byte %zu): it belongs to another "
                         "archive; move it away",
                         path, archive_path, at);
            goto done;
        }
        tf_archive_append(&a->kernels[kernel], &row);
        out->records++;
        at += 8 + (size_t)n;
    }
    out->torn_bytes = len - at;
    rc = 0;
done:
    free(data);
    if (j == NULL && fd >= 0)
        close(fd);
    return rc;
}

/* Write all of b[0..n) at the end of the file; on failure cut the file back. */
static int append_all(struct tf_journal *j, const unsigned char *p, size_t n,
                      struct tf_error *err)
{
    off_t start = j->size;
    size_t done = 0;
    while (done < n) {
        ssize_t k = pwrite(j->fd, p + done, n - done, start + (off_t)done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int e = k < 0 ? errno : EIO;
            if (ftruncate(j->fd, start) != 0) {
                /* The torn tail stays; replay drops it by its length or CRC. */
            }
            return tf_error_set(err, TF_ERR_IO, "cannot write the journal '%s': %s", j->path,
                                strerror(e));
        }
        done += (size_t)k;
    }
    j->size = start + (off_t)n;
    return 0;
}

int tf_journal_reset(struct tf_journal *j, uint64_t generation, struct tf_error *err)
{
    unsigned char hdr[JOURNAL_HEADER];
    memcpy(hdr, JOURNAL_MAGIC, 8);
    for (int i = 0; i < 8; i++)
        hdr[8 + i] = (unsigned char)(generation >> (8 * i));
    if (ftruncate(j->fd, 0) != 0)
        return tf_error_set(err, TF_ERR_IO, "cannot truncate the journal '%s': %s", j->path,
                            strerror(errno));
    j->size = 0;
    j->ready = false;
    if (append_all(j, hdr, sizeof hdr, err) != 0)
        return -1;
    if (fdatasync(j->fd) != 0)
        return tf_error_set(err, TF_ERR_IO, "cannot sync the journal '%s': %s", j->path,
                            strerror(errno));
    j->last_sync = tf_now();
    j->ready = true;
    return 0;
}

int tf_journal_append(struct tf_journal *j, const uint32_t *kernels,
                      const struct tf_archive_row *rows, uint32_t n, struct tf_error *err)
{
    if (!j->ready)
        return tf_error_set(err, TF_ERR_IO, "internal: journal '%s' appended before its reset",
                            j->path);
    struct tf_buf *b = &j->buf;
    b->len = b->pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t at = b->len;
        tf_buf_put_u32(b, 0); /* length and CRC, filled below */
        tf_buf_put_u32(b, 0);
        tf_buf_put_u32(b, kernels[i]);
        tf_buf_put_u32(b, rows[i].run);
        tf_buf_put_u32(b, rows[i].device);
        tf_buf_put_result(b, &rows[i].r);
        const uint32_t len = (uint32_t)(b->len - at - 8);
        const uint32_t crc = crc32(b->data + at + 8, len);
        for (int k = 0; k < 4; k++) {
            b->data[at + (size_t)k] = (unsigned char)(len >> (8 * k));
            b->data[at + 4 + (size_t)k] = (unsigned char)(crc >> (8 * k));
        }
    }
    if (append_all(j, b->data, b->len, err) != 0)
        return -1;
    if (tf_now() - j->last_sync >= JOURNAL_SYNC_INTERVAL) {
        if (fdatasync(j->fd) != 0)
            return tf_error_set(err, TF_ERR_IO, "cannot sync the journal '%s': %s", j->path,
                                strerror(errno));
        j->last_sync = tf_now();
    }
    return 0;
}
