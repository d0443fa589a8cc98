/* replace.c - writing a file that replaces PATH, whole or not at all (replace.h).
 *
 * The plan looks at PATH with lstat: nothing there, a regular file, a symbolic
 * link (resolved with realpath, so the temporary sits beside the real file
 * and the rename stays within its file system), a folder (refused), or a
 * device, FIFO or socket (written in place for text, refused for an archive).
 * A path naming one of our descriptors (/dev/stdout, /dev/fd/N,
 * /proc/self/fd/N) is written through a copy of it, so a shell's `>> file`
 * appends and `>(cmd)` gets the bytes. The temporary is created with O_EXCL
 * and the old file's permission bits; the owner is restored only where it
 * differs and we may (root). */
#include "replace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* True when `path` begins with the `n` bytes of `signature`. */
static bool begins_with(const char *path, const void *signature, size_t n)
{
    unsigned char head[16];
    if (n > sizeof head)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false;
    ssize_t got = read(fd, head, n);
    close(fd);
    return got == (ssize_t)n && memcmp(head, signature, n) == 0;
}

bool tf_replace_is_hdf5(const char *path)
{
    static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    return begins_with(path, signature, sizeof signature);
}

bool tf_replace_is_journal(const char *path)
{
    return begins_with(path, "TFJRNL", 6); /* every format: TFJRNL01, TFJRNL02 */
}

int tf_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        const ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

bool tf_same_file(const char *a, const char *b)
{
    struct stat x, y;
    if (strcmp(a, b) == 0)
        return true;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* The descriptor number `path` names in this process (/dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/self/fd/N, /proc/PID/fd/N with our PID), or -1. */
static int own_descriptor(const char *path)
{
    if (strcmp(path, "/dev/stdout") == 0)
        return 1;
    if (strcmp(path, "/dev/stderr") == 0)
        return 2;
    char self[64];
    snprintf(self, sizeof self, "/proc/%ld/fd/", (long)getpid());
    const char *prefixes[] = {"/dev/fd/", "/proc/self/fd/", self};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        const size_t n = strlen(prefixes[i]);
        if (strncmp(path, prefixes[i], n) != 0)
            continue;
        const char *digits = path + n;
        if (*digits == '\0' || strspn(digits, "0123456789") != strlen(digits) ||
            strlen(digits) > 9)
            return -1;
        return atoi(digits);
    }
    return -1;
}

int tf_replace_plan(struct tf_replace *r, const char *path, enum tf_replace_kind kind,
                    struct tf_error *err)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    const int own = own_descriptor(path);
    if (own >= 0) {
        if (kind == TF_REPLACE_ARCHIVE)
            return tf_error_set(err, TF_ERR_IO,
                                "cannot write the archive '%s': it names a descriptor of this "
                                "process, not a file; name a file",
                                path);
        if (fcntl(own, F_GETFD) < 0)
            return tf_error_set(err, TF_ERR_IO, "cannot write '%s': descriptor %d is not open",
                                path, own);
        r->fd = own; /* written through a copy: the shell's redirection is kept */
        r->target = tf_xstrdup(path);
        return 0;
    }
    struct stat st, pointed;
    char *target = NULL;
    bool exists = true;
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT)
            return tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        target = tf_xstrdup(path);
        exists = false;
    } else if (S_ISLNK(st.st_mode) && stat(path, &pointed) == 0 && !S_ISREG(pointed.st_mode) &&
               !S_ISDIR(pointed.st_mode)) {
        target = tf_xstrdup(path); /* a link to a device or FIFO: written in place below */
        st = pointed;
    } else if (S_ISLNK(st.st_mode)) {
        char *real = realpath(path, NULL);
        if (real == NULL)
            return tf_error_set(err, TF_ERR_IO,
                                "cannot write '%s': it is a symbolic link whose file cannot be "
                                "reached (%s); point it at a file, or remove it",
                                path, strerror(errno));
        target = tf_xstrdup(real);
        free(real);
        if (stat(target, &st) != 0) {
            tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
            goto fail;
        }
    } else {
        target = tf_xstrdup(path);
    }
    if (exists) {
        if (S_ISDIR(st.st_mode)) {
            tf_error_set(err, TF_ERR_IO, "cannot write '%s': it is a folder; name a file", path);
            goto fail;
        }
        if (!S_ISREG(st.st_mode)) {
            if (kind == TF_REPLACE_ARCHIVE) {
                tf_error_set(err, TF_ERR_IO,
                             "cannot write the archive '%s': it is a device, FIFO or socket, "
                             "not a file; name a file",
                             path);
                goto fail;
            }
            r->target = target; /* written in place: no temporary, no rename */
            return 0;
        }
        if (kind == TF_REPLACE_TEXT && tf_replace_is_hdf5(target)) {
            tf_error_set(err, TF_ERR_IO,
                         "will not write over '%s': it is an HDF5 file (an archive?); name "
                         "another output file, or remove it first",
                         path);
            goto fail;
        }
        /* A journal holds results no archive has yet (a run going on, or
         * killed): `diff -o A.h5.journal` replaced it with the report, the
         * archive became unreadable ("not a tunefarm journal") and a live
         * run's next records went to a file no longer there. */
        if (kind == TF_REPLACE_TEXT && tf_replace_is_journal(target)) {
            tf_error_set(err, TF_ERR_IO,
                         "will not write over '%s': it is a tunefarm journal (results not "
                         "yet in their archive); name another output file",
                         path);
            goto fail;
        }
        r->existed = true;
        r->mode = st.st_mode & 07777;
        r->uid = st.st_uid;
        r->gid = st.st_gid;
    }
    r->target = target;
    r->tmp = tf_xasprintf("%s.tmp.%ld", target, (long)getpid());
    return 0;
fail:
    free(target);
    return -1;
}

int tf_replace_open(struct tf_replace *r, const char *path, struct tf_error *err)
{
    if (r->fd >= 0) {
        int fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
            tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        return fd;
    }
    if (r->tmp == NULL) {
        int fd = open(r->target, O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (fd < 0)
            tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        return fd;
    }
    /* O_EXCL: a temporary of another process with our pid (another node on a
     * shared folder) is never truncated. */
    int fd = open(r->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, r->existed ? 0600 : 0666);
    if (fd < 0) {
        const int e = errno;
        tf_error_set(err, TF_ERR_IO,
                     e == EEXIST ? "cannot write '%s': '%s' is there already (left by a process "
                                   "of our number that was killed? remove it)"
                                 : "cannot write '%s': cannot create '%s': %s (is the folder "
                                   "there and writable?)",
                     path, r->tmp, strerror(e));
        free(r->tmp); /* not ours: discard must not remove it */
        r->tmp = NULL;
        return -1;
    }
    if (r->existed && fchmod(fd, r->mode) != 0) {
        int e = errno;
        close(fd);
        unlink(r->tmp);
        return tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    return fd;
}

int tf_replace_finish(struct tf_replace *r, const char *path, struct tf_error *err)
{
    if (r->tmp == NULL)
        return 0;
    if (r->existed) {
        struct stat st;
        /* The owner: only where it differs (a file of another user that root
         * rewrites); a failure keeps ours, as a copy would. */
        if (stat(r->tmp, &st) == 0 && (st.st_uid != r->uid || st.st_gid != r->gid))
            (void)!chown(r->tmp, r->uid, r->gid);
        if (chmod(r->tmp, r->mode) != 0) {
            int e = errno;
            unlink(r->tmp);
            return tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s; it was left as it was",
                                path, strerror(e));
        }
    }
    if (rename(r->tmp, r->target) != 0) {
        int e = errno;
        unlink(r->tmp);
        return tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s; it was left as it was", path,
                            strerror(e));
    }
    free(r->tmp);
    r->tmp = NULL;
    return 0;
}

void tf_replace_discard(struct tf_replace *r)
{
    if (r->tmp != NULL)
        unlink(r->tmp);
    free(r->tmp);
    free(r->target);
    memset(r, 0, sizeof *r);
}

/* Why these rules (a killed `merge`, `import` or run leaves an empty or half
 * written TARGET.tmp.PID; a nightly job meets it the next night):
 * - Only under the archive's lock (the caller's): every writer of an archive
 *   holds its journal's exclusive flock while its temporary exists, so with
 *   the lock ours no writer of this archive is alive. Empty or not: a
 *   temporary is never the archive, and its writer's results are in the
 *   journal or its inputs. (Where flock is node-local, as Lustre's
 *   localflock, two nodes' writers of one archive would already overwrite
 *   each other's journal and archive; an age rule for the temporaries alone
 *   would protect nothing, and was dropped.)
 * - The process id in the name is not consulted: a dead pid here says
 *   nothing of another node's process of that number, and on this node the
 *   lock already answers; pids come back (the leftover then blocks a writer
 *   of that number: tf_replace_open's O_EXCL).
 * - Only this user's regular files of exactly that name: someone else's file,
 *   a link or a folder is not a temporary of ours to judge. */
int tf_replace_remove_leftovers(const char *path)
{
    struct tf_replace r;
    struct tf_error ignored = {0};
    if (tf_replace_plan(&r, path, TF_REPLACE_ARCHIVE, &ignored) != 0)
        return 0;
    free(r.tmp); /* named after us, but not ours: discard must not remove it */
    r.tmp = NULL;
    const char *slash = strrchr(r.target, '/');
    const char *base = slash ? slash + 1 : r.target;
    char *dir = slash == NULL      ? tf_xstrdup(".")
                : slash == r.target ? tf_xstrdup("/")
                                    : tf_xasprintf("%.*s", (int)(slash - r.target), r.target);
    DIR *d = opendir(dir);
    int left = 0;
    const size_t n = strlen(base);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        const char *pid = e->d_name + n + 5;
        if (strncmp(e->d_name, base, n) != 0 || strncmp(e->d_name + n, ".tmp.", 5) != 0 ||
            *pid == '\0' || strspn(pid, "0123456789") != strlen(pid))
            continue;
        char *file = tf_xasprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(file);
            continue;
        }
        if (st.st_uid != geteuid() || unlink(file) != 0)
            left++;
        free(file);
    }
    if (d != NULL)
        closedir(d);
    free(dir);
    tf_replace_discard(&r);
    return left;
}
