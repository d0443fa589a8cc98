/* journal.c - the append-only, checksummed result journal beside an archive.
 *
 * The file is a 116-byte header and then records. The header says whose
 * journal it is: magic "TFJRNL02", the archive's id (32 hex digits, the
 * archive's `archive_id`), the archive checkpoint the records follow (u64
 * little-endian), the job hash of the run that writes it (64 hex digits, or
 * zeros for a merge), and a CRC-32 of those 112 bytes. A record is u32 payload
 * length, u32 CRC-32 of the payload, payload (archive kernel index, run index
 * and device index as u32, then the result in the wire's encoding; records of
 * wire versions 2 and 3, without their last fields, are read too). A batch of
 * results is one write(2), so a killed coordinator leaves whole batches and at
 * most one torn record at the end, which the CRC or the length gives away
 * (a zero-filled end, from a power cut, too: no record is under 12 bytes).
 * After a checkpoint the coordinator resets the file to a bare header naming
 * the new checkpoint; a crash between the archive's rename and that reset
 * leaves records naming the previous checkpoint, which replay recognises as
 * already folded in. A journal naming another archive id, or whose header
 * fails its CRC, is refused, never folded in. Replay decodes and checks every
 * record before it appends any, so a refused journal changes nothing. The run
 * holds an exclusive flock(2) on the journal, which also keeps a second run
 * off the same archive; `tunefarm merge` holds a shared one on each input's
 * journal while it reads it, and reads it before the archive
 * (tf_journal_read, then tf_journal_replay_image): a live run's checkpoint
 * between the two reads leaves records the archive holds, recognised as such. Format TFJRNL01 (16-byte header: magic and
 * checkpoint, no id, no CRC) is read only beside an archive that has no id
 * either (both written by a tunefarm before ids); schema/archive.md. */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "../schema/replace.h"
#include "../schema/wire.h"
#include "progress.h"

#define JOURNAL_MAGIC "TFJRNL02"
#define JOURNAL_MAGIC_V1 "TFJRNL01"
#define JOURNAL_HEADER_V1 16
/* Header layout (format 2). */
#define H_ID 8
#define H_CHECKPOINT (H_ID + TF_ARCHIVE_ID_LEN - 1)  /* 40 */
#define H_JOB (H_CHECKPOINT + 8)                     /* 48 */
#define H_CRC (H_JOB + 64)                           /* 112 */
#define JOURNAL_HEADER (H_CRC + 4)                   /* 116 */
/* A record larger than this is garbage, not a result. */
#define JOURNAL_RECORD_MAX 65536
/* Nor is one smaller than its three indices: a zero-filled end (a file system
 * that grew the file but lost its data at a power cut) would otherwise read
 * as records of length 0, whose CRC-32 (of nothing) is 0 too. */
#define JOURNAL_RECORD_MIN 12
/* At most one fdatasync per this many seconds while appending. */
#define JOURNAL_SYNC_INTERVAL 1.0

struct tf_journal {
    int fd;
    char path[4096];
    bool ready;        /* reset at least once: appends may go */
    bool created;      /* the file did not exist before tf_journal_open */
    bool appended;     /* a record was appended through this handle */
    off_t size;        /* bytes in the file */
    double last_sync;
    struct tf_buf buf;
};

/* CRC-32 (IEEE 802.3): zlib's, which reads words at a time (a byte-table
 * CRC of its own was 13% of the coordinator's time over 10^7 results). */
static uint32_t journal_crc32(const unsigned char *p, size_t n)
{
    uLong c = crc32(0L, Z_NULL, 0);
    while (n > 0) { /* zlib's length is a uInt */
        const uInt k = n > (size_t)UINT32_MAX ? UINT32_MAX : (uInt)n;
        c = crc32(c, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)c;
}

static uint32_t get_u32le(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void tf_journal_path(const char *archive_path, char *out, size_t cap)
{
    /* Follow a symbolic link in the last component (a chain of them, as the
     * kernel does: at most 40), whether or not what it names exists yet: the
     * archive writer replaces the file the link names, so the journal, and
     * with it the lock that keeps two writers apart, must be that file's.
     * `lnk.h5 -> real.h5` and `real.h5` are one archive with one journal. */
    char path[4096], link[4096];
    tf_strlcpy(path, archive_path, sizeof path);
    for (int hop = 0; hop < 40; hop++) {
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0)
            break; /* not a link (or unreadable): the path as it is */
        link[n] = '\0';
        const char *slash = strrchr(path, '/');
        if (link[0] == '/' || slash == NULL) {
            tf_strlcpy(path, link, sizeof path);
        } else {
            char joined[8192];
            snprintf(joined, sizeof joined, "%.*s/%s", (int)(slash - path), path, link);
            if (strlen(joined) >= sizeof path)
                break;
            tf_strlcpy(path, joined, sizeof path);
        }
    }
    snprintf(out, cap, "%s.journal", path);
}

/* A journal that a tunefarm before 2026-12-06 left beside a symbolic link
 * (it named the journal after the link, not after the file the link names):
 * its results belong to the archive and must not be skipped in silence, nor
 * may a run through the link ignore the lock an older tunefarm holds there.
 * -1 + err saying what to do; 0 when there is none. */
static int link_journal_leftover(const char *archive_path, struct tf_error *err)
{
    struct stat st;
    char old[4200], now[4200];
    if (lstat(archive_path, &st) != 0 || !S_ISLNK(st.st_mode))
        return 0;
    snprintf(old, sizeof old, "%s.journal", archive_path);
    if (lstat(old, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return 0;
    tf_journal_path(archive_path, now, sizeof now);
    return tf_error_set(err, TF_ERR_IO,
                        "journal '%s' lies beside the symbolic link '%s', where a tunefarm "
                        "before 2026-12-06 kept it (or one still running keeps it): its results "
                        "belong to the file the link names, whose journal is '%s' now. Once no "
                        "run of an older tunefarm uses it, move it there (if no journal is "
                        "there yet) and try again",
                        old, archive_path, now);
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

/* open(path, flags) for a journal that must be a regular file: O_NONBLOCK so
 * a FIFO (or a device) put in its place fails at once with ENODEV instead
 * of blocking the reader for ever. */
static int open_regular(const char *path, int flags)
{
    int fd = open(path, flags | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = ENODEV;
        return -1;
    }
    return fd;
}

/* strerror(e), saying what ENODEV from open_regular means. */
static const char *open_error(int e)
{
    return e == ENODEV ? "it is not a regular file (a FIFO or a device?); move it away"
                       : strerror(e);
}

struct tf_journal *tf_journal_open(const char *archive_path, struct tf_error *err)
{
    if (link_journal_leftover(archive_path, err) != 0)
        return NULL;
    struct tf_journal *j = tf_xcalloc(1, sizeof *j);
    tf_journal_path(archive_path, j->path, sizeof j->path);
    /* The archive's folder (a new one, perhaps). A symbolic link must name a
     * file already: the archive writer will not create one through it. */
    struct stat lst, target;
    if (lstat(archive_path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        if (stat(archive_path, &target) != 0) {
            tf_error_set(err, TF_ERR_IO, "cannot write the archive '%s': it is a symbolic link "
                         "whose file cannot be reached (%s); point it at a file, or remove it",
                         archive_path, strerror(errno));
            goto fail;
        }
    } else {
        make_parents(j->path);
    }
    j->fd = open(j->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    j->created = j->fd >= 0;
    if (j->fd < 0 && errno == EEXIST)
        j->fd = open_regular(j->path, O_RDWR | O_CLOEXEC);
    if (j->fd < 0) {
        tf_error_set(err, TF_ERR_IO, "cannot open the journal '%s': %s (the archive's folder "
                     "must be writable)", j->path, open_error(errno));
        goto fail;
    }
    /* A reader's shared lock (`tunefarm status` probing whether a run is
     * live) lasts microseconds: a second of retries tells it from a run. */
    int locked = flock(j->fd, LOCK_EX | LOCK_NB);
    for (int i = 0; locked != 0 && errno == EWOULDBLOCK && i < 20; i++) {
        struct timespec nap = {0, 50000000};
        nanosleep(&nap, NULL);
        locked = flock(j->fd, LOCK_EX | LOCK_NB);
    }
    if (locked != 0) {
        if (errno == EWOULDBLOCK)
            tf_error_set(err, TF_ERR_IO, "archive '%s' is in use by another run (its journal "
                         "'%s' is locked): wait for that run to end, or use another archive "
                         "(tunefarm run: -o)",
                         archive_path, j->path);
        else
            tf_error_set(err, TF_ERR_IO, "cannot lock the journal '%s': %s", j->path,
                         strerror(errno));
        goto fail;
    }
    /* The lock is what makes the archive's temporaries that killed writers
     * (a run, a merge, an import) left ours to remove (replace.c says why). */
    (void)tf_replace_remove_leftovers(archive_path);
    return j;
fail:
    tf_journal_close(j);
    return NULL;
}

const char *tf_journal_file(const struct tf_journal *j)
{
    return j ? j->path : "";
}

bool tf_journal_created(const struct tf_journal *j)
{
    return j != NULL && j->created && !j->appended;
}

int tf_journal_open_read(const char *archive_path, struct tf_journal **out, bool *live,
                         struct tf_error *err)
{
    *live = false;
    *out = NULL;
    if (link_journal_leftover(archive_path, err) != 0)
        return -1;
    struct tf_journal *j = tf_xcalloc(1, sizeof *j);
    tf_journal_path(archive_path, j->path, sizeof j->path);
    j->fd = open_regular(j->path, O_RDONLY | O_CLOEXEC);
    if (j->fd < 0) {
        const int e = errno;
        tf_journal_close(j);
        return e == ENOENT ? 0 : tf_error_set(err, TF_ERR_IO, "cannot open the journal '%s': %s",
                                               j->path, open_error(e));
    }
    /* Shared: other readers may read along; a run (exclusive) cannot start. */
    if (flock(j->fd, LOCK_SH | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) {
            tf_error_set(err, TF_ERR_IO, "cannot lock the journal '%s': %s", j->path,
                         strerror(errno));
            goto fail;
        }
        *live = true; /* a run holds it: read what is there, without the lock */
    }
    *out = j;
    return 0;
fail:
    tf_journal_close(j);
    return -1;
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

/* Decode one record's payload into (kernel, row): -1 if it does not decode
 * (an encoding this tunefarm does not know, or damage), 1 if it names a kernel, run, device,
 * problem or configuration that `a` does not have, 0 if it is a row of `a`.
 * The configuration too: a journal of another archive whose kernel has a
 * larger space was folded in ("9 of 8 measured", a best printed as another
 * configuration) and then made every checkpoint, merge and resume fail. */
static int decode_record(const unsigned char *p, size_t n, const struct tf_archive *a,
                         uint32_t *kernel, struct tf_archive_row *row)
{
    struct tf_buf b = {.data = (unsigned char *)p, .len = n, .cap = n};
    if (tf_buf_get_u32(&b, kernel) || tf_buf_get_u32(&b, &row->run) ||
        tf_buf_get_u32(&b, &row->device))
        return -1;
    /* A record of a tunefarm before wire version 4 (a run it left unfinished)
     * ends where a later encoding's last fields begin: no two versions both
     * consume a payload exactly. */
    const size_t head = b.pos;
    if (tf_buf_get_result(&b, &row->r) || b.pos != b.len) {
        b.pos = head;
        if (tf_buf_get_result_v3(&b, &row->r) || b.pos != b.len) {
            b.pos = head;
            if (tf_buf_get_result_v2(&b, &row->r) || b.pos != b.len)
                return -1;
        }
    }
    if (*kernel >= (uint32_t)a->nkernels || row->run >= (uint32_t)a->nruns ||
        row->device >= (uint32_t)a->ndevices ||
        row->r.problem >= (uint32_t)a->kernels[*kernel].nproblems ||
        row->r.config >= tf_archive_cartesian(&a->kernels[*kernel]))
        return 1;
    return 0;
}

/* The records of data[at..len): every one is decoded and checked against `a`
 * first, and only if all of them are rows of `a` are they appended, so a
 * journal refused for a bad record changes nothing. A record cut short or
 * failing its CRC ends the records there (counted in out->torn_bytes), unless
 * a whole record with a good CRC follows it: that is damage in the middle, not
 * a torn end, and the journal is refused rather than cut there. If
 * `job` is not empty, the journal was written by a run of that job, which
 * `a` must have. */
static int replay_records(const unsigned char *data, size_t len, size_t at,
                          struct tf_archive *a, const char *job, const char *path,
                          const char *archive_path, struct tf_journal_replay *out,
                          struct tf_error *err)
{
    uint64_t n = 0, cap = 0;
    uint32_t *kernels = NULL;
    struct tf_archive_row *rows = NULL;
    int rc = -1;
    while (at < len) {
        if (len - at < 8)
            break;
        uint32_t size = get_u32le(data + at), crc = get_u32le(data + at + 4);
        if (size < JOURNAL_RECORD_MIN || size > JOURNAL_RECORD_MAX || size > len - at - 8 ||
            journal_crc32(data + at + 8, size) != crc) {
            /* A tear can only be the end: a whole record with its CRC right
             * after this one means a damaged record in the middle (a flipped
             * bit), and dropping it would drop every result after it. */
            const size_t next = at + 8 + (size_t)size;
            if (size <= JOURNAL_RECORD_MAX && size <= len - at - 8 && len - next >= 8) {
                const uint32_t nsize = get_u32le(data + next);
                if (nsize >= JOURNAL_RECORD_MIN && nsize <= JOURNAL_RECORD_MAX &&
                    nsize <= len - next - 8 &&
                    journal_crc32(data + next + 8, nsize) == get_u32le(data + next + 4)) {
                    tf_error_set(err, TF_ERR_SCHEMA,
                                 "journal '%s' is damaged: the record at byte %zu fails its "
                                 "checksum and %zu bytes of results follow it; nothing was "
                                 "folded in: restore the journal, or move it away and what it "
                                 "holds is measured again",
                                 path, at, len - next);
                    goto done;
                }
            }
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            kernels = tf_xrealloc(kernels, cap * sizeof *kernels);
            rows = tf_xrealloc(rows, cap * sizeof *rows);
        }
        int bad = decode_record(data + at + 8, size, a, &kernels[n], &rows[n]);
        if (bad < 0) {
            /* Whole and with a right checksum, so not a torn end: a record
             * of a newer encoding, or damage the CRC missed. Dropped, it
             * would take every result after it along, and this run's own
             * records appended after it would be unreadable too. */
            tf_error_set(err, TF_ERR_SCHEMA,
                         "journal '%s' holds a whole record at byte %zu (its checksum is "
                         "right) that this tunefarm cannot decode: a newer tunefarm wrote "
                         "it, or the journal is damaged; nothing was folded in: let the "
                         "tunefarm that wrote it resume the run or read it, or move the "
                         "journal away (what it holds is measured again)",
                         path, at);
            goto done;
        }
        if (bad > 0) {
            tf_error_set(err, TF_ERR_SCHEMA,
                         "journal '%s' names a kernel, run, device, problem or configuration "
                         "that archive '%s' does not have (record at byte %zu): it belongs to another "
                         "archive, and nothing of it was folded in; move it away",
                         path, archive_path, at);
            goto done;
        }
        n++;
        at += 8 + (size_t)size;
    }
    if (n > 0 && job[0] != '\0') {
        bool found = false;
        for (int r = 0; r < a->nruns && !found; r++)
            found = strcmp(a->runs[r].job_hash, job) == 0;
        if (!found) {
            tf_error_set(err, TF_ERR_SCHEMA,
                         "journal '%s' was written by a run of job %.12s, which archive '%s' "
                         "has no run of: it belongs to another copy of this archive, and "
                         "nothing of it was folded in; move it away (or beside that copy)",
                         path, job, archive_path);
            goto done;
        }
    }
    for (uint64_t i = 0; i < n; i++)
        tf_archive_append(&a->kernels[kernels[i]], &rows[i]);
    out->records = n;
    out->torn_bytes = len - at;
    rc = 0;
done:
    free(kernels);
    free(rows);
    return rc;
}

/* Records following checkpoint `generation`, against `a`'s checkpoint:
 * equal, replay them; older, they are in the archive already; newer, the
 * archive is an older copy (refused). */
static int replay_generation(uint64_t generation, const unsigned char *data, size_t len,
                             size_t header, struct tf_archive *a, const char *job,
                             const char *path, const char *archive_path,
                             struct tf_journal_replay *out, struct tf_error *err)
{
    if (generation < a->checkpoint) {
        out->stale = true;
        return 0;
    }
    if (generation > a->checkpoint)
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "journal '%s' follows checkpoint %llu but archive '%s' is at "
                            "checkpoint %llu: the archive was removed or replaced by an older "
                            "copy. Put the newer archive back, or move the journal away to go "
                            "on without it (its results would be measured again)",
                            path, (unsigned long long)generation, archive_path,
                            (unsigned long long)a->checkpoint);
    return replay_records(data, len, header, a, job, path, archive_path, out, err);
}

/* A journal of format 1 (no archive id, no header CRC): only an archive
 * without an id (written by the same older tunefarm) may be its archive. */
static int replay_v1(const unsigned char *data, size_t len, struct tf_archive *a,
                     const char *path, const char *archive_path, struct tf_journal_replay *out,
                     struct tf_error *err)
{
    out->old_format = true;
    if (a->id[0] != '\0')
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "journal '%s' has the older format TFJRNL01, which does not name "
                            "its archive, but archive '%s' has an id (%s) and is written with "
                            "journals that name it: this journal is not its own, and nothing "
                            "of it was folded in. Move the journal away (if a run of an older "
                            "tunefarm was killed on this archive, let that version resume it "
                            "first)",
                            path, archive_path, a->id);
    if (len < JOURNAL_HEADER_V1) {
        out->torn_bytes = len;
        return 0;
    }
    uint64_t generation = (uint64_t)get_u32le(data + 8) | (uint64_t)get_u32le(data + 12) << 32;
    return replay_generation(generation, data, len, JOURNAL_HEADER_V1, a, "", path,
                             archive_path, out, err);
}

/* The header of a format-2 journal: id and job as strings. 0, or -1 + err. */
static int check_header(const unsigned char *data, size_t len, const struct tf_archive *a,
                        const char *path, const char *archive_path, char *id, char *job,
                        struct tf_journal_replay *out, struct tf_error *err)
{
    if (journal_crc32(data, H_CRC) != get_u32le(data + H_CRC)) {
        out->damaged_header = true;
        if (len == JOURNAL_HEADER)
            return 0; /* no records: nothing is lost by ignoring it */
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "journal '%s' has a damaged header (its checksum does not match): "
                            "whose archive and checkpoint its %zu bytes of results follow "
                            "cannot be told, so nothing of it was folded into '%s'. Restore "
                            "the journal from a copy, or move it away to go on without it (its "
                            "results would be measured again)",
                            path, len - JOURNAL_HEADER, archive_path);
    }
    memcpy(id, data + H_ID, TF_ARCHIVE_ID_LEN - 1);
    id[TF_ARCHIVE_ID_LEN - 1] = '\0';
    memcpy(job, data + H_JOB, 64);
    job[64] = '\0';
    if (strcmp(id, a->id) != 0)
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "journal '%s' belongs to another archive (id %s, written by job "
                            "%.12s), not to '%s' (id %s): nothing of it was folded in. Move "
                            "the journal away, or put it beside the archive it belongs to",
                            path, id, job[0] ? job : "(a merge)", archive_path,
                            a->id[0] ? a->id : "none: written by a tunefarm before ids");
    return 0;
}

struct tf_journal_image {
    char path[4096];
    unsigned char *data;
    size_t len;
    bool present;      /* the file exists (read without a handle), or holds bytes */
};

void tf_journal_image_destroy(struct tf_journal_image *im)
{
    if (im == NULL)
        return;
    free(im->data);
    free(im);
}

int tf_journal_read(struct tf_journal *j, const char *archive_path,
                    struct tf_journal_image **out, struct tf_error *err)
{
    struct tf_journal_image *im = tf_xcalloc(1, sizeof *im);
    int fd = -1, rc = -1;
    *out = NULL;
    if (j != NULL) {
        fd = j->fd;
        tf_strlcpy(im->path, j->path, sizeof im->path);
    } else {
        if (link_journal_leftover(archive_path, err) != 0)
            goto done;
        tf_journal_path(archive_path, im->path, sizeof im->path);
        fd = open_regular(im->path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            if (errno == ENOENT) {
                *out = im; /* no journal: nothing to replay */
                return 0;
            }
            tf_error_set(err, TF_ERR_IO, "cannot open the journal '%s': %s", im->path,
                         open_error(errno));
            goto done;
        }
    }
    if (read_whole(fd, im->path, &im->data, &im->len, err) != 0)
        goto done;
    im->present = j == NULL || im->len > 0;
    *out = im;
    im = NULL;
    rc = 0;
done:
    if (j == NULL && fd >= 0)
        close(fd);
    tf_journal_image_destroy(im);
    return rc;
}

int tf_journal_replay_image(const struct tf_journal_image *im, const char *archive_path,
                            struct tf_archive *a, struct tf_journal_replay *out,
                            struct tf_error *err)
{
    const unsigned char *data = im->data;
    const size_t len = im->len;
    const char *path = im->path;
    memset(out, 0, sizeof *out);
    out->present = im->present;
    if (data == NULL)
        return 0;
    const bool v1 = len >= 8 && memcmp(data, JOURNAL_MAGIC_V1, 8) == 0;
    if (!v1 && len >= 8 && memcmp(data, JOURNAL_MAGIC, 8) != 0)
        return tf_error_set(err, TF_ERR_SCHEMA, "'%s' is not a tunefarm journal (bad magic): "
                            "move it away; the archive '%s' itself is unaffected", path,
                            archive_path);
    if (v1)
        return replay_v1(data, len, a, path, archive_path, out, err);
    if (len < JOURNAL_HEADER) {
        /* Empty, or cut while its header was rewritten after a checkpoint (the
         * archive already holds everything): nothing to replay. */
        out->torn_bytes = len;
        return 0;
    }
    char id[TF_ARCHIVE_ID_LEN], job[65];
    if (check_header(data, len, a, path, archive_path, id, job, out, err) != 0)
        return -1;
    if (out->damaged_header)
        return 0;
    memcpy(out->job_hash, job, sizeof out->job_hash);
    uint64_t generation = (uint64_t)get_u32le(data + H_CHECKPOINT) |
                          (uint64_t)get_u32le(data + H_CHECKPOINT + 4) << 32;
    return replay_generation(generation, data, len, JOURNAL_HEADER, a, job, path, archive_path,
                             out, err);
}

int tf_journal_replay(struct tf_journal *j, const char *archive_path, struct tf_archive *a,
                      struct tf_journal_replay *out, struct tf_error *err)
{
    struct tf_journal_image *im;
    memset(out, 0, sizeof *out);
    if (tf_journal_read(j, archive_path, &im, err) != 0)
        return -1;
    const int rc = tf_journal_replay_image(im, archive_path, a, out, err);
    tf_journal_image_destroy(im);
    return rc;
}

void tf_journal_test_pause(void)
{
    const char *v = getenv("TUNEFARM_TEST_READ_PAUSE");
    const double s = v ? atof(v) : 0;
    if (s > 0 && s < 60) {
        struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
}

struct tf_archive *tf_journal_read_archive(const char *archive_path,
                                           struct tf_journal_replay *out, struct tf_error *err)
{
    /* The journal first, then the archive: a checkpoint of a live run between
     * the two reads leaves records the archive already holds (skipped as
     * stale). The other order would see a journal ahead of the archive, which
     * only an archive replaced by an older copy may show. */
    struct tf_journal_image *im = NULL;
    struct tf_archive *a = NULL;
    memset(out, 0, sizeof *out);
    if (tf_journal_read(NULL, archive_path, &im, err) != 0)
        return NULL;
    tf_journal_test_pause();
    struct stat st;
    if (im->present && stat(archive_path, &st) != 0 && errno == ENOENT) {
        struct tf_journal *probe = NULL;
        bool live = false;
        struct tf_error ignored = {0};
        if (tf_journal_open_read(archive_path, &probe, &live, &ignored) == 0)
            tf_journal_close(probe);
        if (live) {
            tf_error_set(err, TF_ERR_IO,
                         "archive '%s' does not exist yet: a run has started on it (it holds "
                         "the journal '%s') and has not written its first checkpoint; try "
                         "again in a few seconds",
                         archive_path, im->path);
            goto done;
        }
        /* As `tunefarm run` says of it (coordinator.c journal_without_archive):
         * records without their archive; an empty journal is only a run that
         * died starting, and the archive's absence is the error. */
        if (im->len >= 8) {
            tf_error_set(err, TF_ERR_IO,
                         "journal '%s' is there but its archive '%s' is not: the archive was "
                         "removed or moved away. Put it back, or move the journal away",
                         im->path, archive_path);
            goto done;
        }
    }
    a = tf_archive_read(archive_path, err);
    if (a != NULL && tf_journal_replay_image(im, archive_path, a, out, err) != 0) {
        tf_archive_destroy(a);
        a = NULL;
    }
done:
    tf_journal_image_destroy(im);
    return a;
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

int tf_journal_reset(struct tf_journal *j, const struct tf_archive *a, const char *job_hash,
                     struct tf_error *err)
{
    if (strlen(a->id) != TF_ARCHIVE_ID_LEN - 1)
        return tf_error_set(err, TF_ERR_IO, "internal: journal '%s' reset for an archive "
                            "without an id", j->path);
    unsigned char hdr[JOURNAL_HEADER];
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, JOURNAL_MAGIC, 8);
    memcpy(hdr + H_ID, a->id, TF_ARCHIVE_ID_LEN - 1);
    for (int i = 0; i < 8; i++)
        hdr[H_CHECKPOINT + i] = (unsigned char)(a->checkpoint >> (8 * i));
    if (job_hash != NULL)
        memcpy(hdr + H_JOB, job_hash, strnlen(job_hash, 64));
    const uint32_t crc = journal_crc32(hdr, H_CRC);
    for (int i = 0; i < 4; i++)
        hdr[H_CRC + i] = (unsigned char)(crc >> (8 * i));
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
        const uint32_t crc = journal_crc32(b->data + at + 8, len);
        for (int k = 0; k < 4; k++) {
            b->data[at + (size_t)k] = (unsigned char)(len >> (8 * k));
            b->data[at + 4 + (size_t)k] = (unsigned char)(crc >> (8 * k));
        }
    }
    if (append_all(j, b->data, b->len, err) != 0)
        return -1;
    j->appended = j->appended || n > 0;
    if (tf_now() - j->last_sync >= JOURNAL_SYNC_INTERVAL) {
        if (fdatasync(j->fd) != 0)
            return tf_error_set(err, TF_ERR_IO, "cannot sync the journal '%s': %s", j->path,
                                strerror(errno));
        j->last_sync = tf_now();
    }
    return 0;
}
