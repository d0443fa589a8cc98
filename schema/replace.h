/* replace.h - writing a file that replaces PATH, whole or not at all.
 *
 * Every file tunefarm writes for a user (archives, exports, reports, headers)
 * is written to TARGET.tmp.PID beside its target and renamed over it once
 * complete, so a reader never sees half a file and a failed write leaves the
 * old one. This module says what TARGET is and keeps what the rename must not
 * lose: a symbolic link is followed (the link stays, the file it names is
 * replaced), the old file's permission bits are kept (a private archive stays
 * private), a device or FIFO (/dev/null, a pipe) is written in place, never
 * replaced by a regular file, and a text output refuses to overwrite an HDF5
 * file (an archive given to -o by mistake). */
#ifndef TF_REPLACE_H
#define TF_REPLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

enum tf_replace_kind {
    TF_REPLACE_ARCHIVE, /* an HDF5 archive: the target must be a regular file (or none) */
    TF_REPLACE_TEXT     /* a text output: devices and FIFOs in place; never over an HDF5
                           file or a journal */
};

struct tf_replace {
    char *target;  /* the file written: PATH, or the file its symbolic link names */
    char *tmp;     /* TARGET.tmp.PID; NULL when writing in place */
    int fd;        /* -1, or a descriptor of ours PATH names (/dev/stdout, /dev/fd/N,
                      /proc/self/fd/N): written through a copy of it, so a shell's
                      `>> file` appends and a pipe gets the bytes */
    bool existed;  /* a file stood at TARGET: its mode and owner are kept */
    mode_t mode;   /* its permission bits */
    uid_t uid;
    gid_t gid;
};

/* Where a file replacing `path` goes (r->target, r->tmp), checked as `kind`
 * says. 0, or -1 + err (a folder, a missing link target, an HDF5 file under
 * a text output, an archive over a device) with nothing created. */
int tf_replace_plan(struct tf_replace *r, const char *path, enum tf_replace_kind kind,
                    struct tf_error *err);
/* Open the temporary (or the target in place) for writing: a descriptor, or
 * -1 + err naming `path`. The temporary gets the old file's permission bits. */
int tf_replace_open(struct tf_replace *r, const char *path, struct tf_error *err);
/* Give the written and synced temporary the old file's mode and owner, and
 * rename it over the target (nothing in place). 0, or -1 + err with the
 * temporary removed and the target as it was. */
int tf_replace_finish(struct tf_replace *r, const char *path, struct tf_error *err);
/* Remove the temporary if it is still there and free; accepts a zeroed or
 * finished struct. */
void tf_replace_discard(struct tf_replace *r);

/* Remove the temporaries that writers of the archive `path` killed before
 * their rename left beside its target (TARGET.tmp.PID, as tf_replace_plan
 * names them, TARGET the file a symbolic link names): this user's regular
 * files of that name. Only for a caller that holds the exclusive lock every
 * writer of the archive holds while its temporary exists (its journal's,
 * tf_journal_open). Returns how many such regular files are left (another
 * user's, or one that could not be removed); 0 for a path no archive can be
 * written to. */
int tf_replace_remove_leftovers(const char *path);

/* All of buf[0..n) to `fd`, through short writes and EINTR: 0, or -1 with
 * errno. */
int tf_write_all(int fd, const void *buf, size_t n);

/* True when `a` and `b` name one existing file (./x and x, a link and its
 * file): the same device and inode. */
bool tf_same_file(const char *a, const char *b);

/* True when `path` begins with the HDF5 signature (at offset 0, the place
 * tunefarm's archives and h5py files have it). */
bool tf_replace_is_hdf5(const char *path);

/* True when `path` begins with a tunefarm journal's magic (TFJRNL01/02,
 * coordinator/journal.c): a text output never overwrites it either. */
bool tf_replace_is_journal(const char *path);

#endif
