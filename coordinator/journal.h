/* journal.h - the append-only result journal beside an archive (ARCHIVE.journal).
 *
 * Every result the coordinator receives is appended here, one write per batch,
 * before it is counted done; the archive is only rewritten at checkpoints. A
 * coordinator killed at any moment therefore loses nothing it had journaled:
 * the next run replays the journal into the archive. The header names the
 * archive (its id), the checkpoint the records follow and the job of the run
 * writing it, under a CRC: a journal whose records were already folded into
 * the archive is recognised and ignored, one of another archive or with a
 * damaged header is refused, never folded in. Layout in schema/archive.md
 * ("Journal"). */
#ifndef TF_JOURNAL_H
#define TF_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "../schema/archive.h"
#include "../schema/error.h"

struct tf_journal;

/* What a replay found. */
struct tf_journal_replay {
    bool present;          /* a journal file exists */
    bool stale;            /* its records follow an older checkpoint: already in the archive */
    bool old_format;       /* format 1 (no archive id), read beside an archive without one */
    bool damaged_header;   /* a header failing its CRC with no records after it: ignored */
    uint64_t records;      /* results appended to the archive model */
    uint64_t torn_bytes;   /* bytes dropped at the end (a record cut short by a crash) */
    char job_hash[65];     /* the job of the run writing it ("": a merge, an import, none) */
};

/* The journal's path for `archive_path` ("ARCHIVE.journal"), in out[cap]; for
 * a symbolic link, beside the file it names (that file is the archive). */
void tf_journal_path(const char *archive_path, char *out, size_t cap);

/* Open (creating if needed) the journal of `archive_path` for a run and take
 * an exclusive lock on it: a second run on the same archive is refused with an
 * error naming the archive. With the lock, temporaries of the archive that
 * killed writers left are removed (tf_replace_remove_leftovers).
 * NULL + err on failure. */
struct tf_journal *tf_journal_open(const char *archive_path, struct tf_error *err);
/* The journal file `j` holds ("" for NULL): what to remove when done, even if
 * a symbolic link on the way has changed since it was opened. */
const char *tf_journal_file(const struct tf_journal *j);
/* True if tf_journal_open created the file and no record was appended through
 * `j` since: a failed run may remove it then, never a journal that holds
 * someone's results. False for NULL. */
bool tf_journal_created(const struct tf_journal *j);
/* For reading `archive_path` with its journal without running on it (tunefarm
 * merge): open the journal, if any, and take a shared lock, so that no run can
 * start on the archive while it is read. *out is NULL if there is no journal.
 * If a run holds the journal, *live is set and *out holds no lock (what the
 * archive and journal hold so far can still be read). 0, or -1 + err. */
int tf_journal_open_read(const char *archive_path, struct tf_journal **out, bool *live,
                         struct tf_error *err);
/* Close and unlock; accepts NULL. */
void tf_journal_close(struct tf_journal *j);

/* Append the records of the journal that follow checkpoint `a->checkpoint`
 * to the archive model `a`; stops at the first torn or corrupt record (counted
 * in *out). `j` may be NULL to read `archive_path`'s journal without a lock
 * (tunefarm status). Refused (-1 + err, `a` unchanged): a journal naming
 * another archive id, one whose header fails its CRC while records follow it,
 * a format-1 journal beside an archive with an id, records that name rows the
 * archive does not have, and records of a job the archive has no run of. */
int tf_journal_replay(struct tf_journal *j, const char *archive_path, struct tf_archive *a,
                      struct tf_journal_replay *out, struct tf_error *err);

/* A journal's bytes as read at one moment (tf_journal_read), replayed later
 * (tf_journal_replay_image). `tunefarm merge` reads a live run's journal
 * before its archive: a checkpoint in between then leaves records the archive
 * read after already holds (recognised as such), never a journal ahead of an
 * archive read before it (refused as "replaced by an older copy"). */
struct tf_journal_image;
/* Read the journal of `archive_path` (through `j`, or without a handle when
 * `j` is NULL; no journal reads as an empty one) into *out. 0, or -1 + err. */
int tf_journal_read(struct tf_journal *j, const char *archive_path,
                    struct tf_journal_image **out, struct tf_error *err);
/* tf_journal_replay of the bytes in `im`, against `a` (the same refusals). */
int tf_journal_replay_image(const struct tf_journal_image *im, const char *archive_path,
                            struct tf_archive *a, struct tf_journal_replay *out,
                            struct tf_error *err);
/* Free; accepts NULL. */
void tf_journal_image_destroy(struct tf_journal_image *im);

/* For the commands that only read (status, query, diff, export, best,
 * report): `archive_path`'s model with its journal's results folded in (what
 * tf_journal_replay says of it in *out), read in the order that is safe while
 * a run writes the archive (its journal, then the archive). NULL + err: an
 * unreadable archive or journal, or an archive whose run has not written its
 * first checkpoint yet (said so). */
struct tf_archive *tf_journal_read_archive(const char *archive_path,
                                           struct tf_journal_replay *out, struct tf_error *err);
/* Test hook: TUNEFARM_TEST_READ_PAUSE=SECONDS sleeps between reading a
 * journal and its archive (tf_journal_read_archive, tunefarm merge), so the
 * fault tests can checkpoint a live run in between. */
void tf_journal_test_pause(void);

/* Start over after checkpoint `a->checkpoint` of archive `a` was written: the
 * file becomes a bare header naming `a`'s id, that checkpoint and `job_hash`
 * (the job of the run that will append; NULL for none), synced to disk. `a`
 * must have an id (tf_archive_ensure_id). */
int tf_journal_reset(struct tf_journal *j, const struct tf_archive *a, const char *job_hash,
                     struct tf_error *err);

/* Append a batch of `n` rows, row i of archive kernel kernels[i], with one write; synced
 * to disk at most once a second (a process kill loses nothing written; a power
 * cut at most that second). On failure the file is cut back to where the batch
 * began and -1 + err is returned: the batch is not journaled. */
int tf_journal_append(struct tf_journal *j, const uint32_t *kernels,
                      const struct tf_archive_row *rows, uint32_t n, struct tf_error *err);

#endif
