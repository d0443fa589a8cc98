/* bundle.c - the in-memory set of files a job is made of.
 *
 * A bundle is an ordered array of (path, contents) pairs. The coordinator
 * starts with an empty, unsealed bundle: every tf_bundle_read of a path not
 * yet in it reads the whole file from disk (regular files only, 16 MiB at
 * most, NUL-terminated so the YAML and expression code can treat it as a C
 * string) and appends it. Workers receive the same pairs over the wire, in the
 * same order, and mark the bundle sealed, so the loaders run unchanged but can
 * only see what the coordinator saw. Insertion order is part of the identity:
 * tf_bundle_hash feeds the files in that order, and the job file is always
 * first because tf_job_load reads it first.
 *
 * Lifetimes: each file's `data` is allocated separately, so the data pointer
 * returned through tf_bundle_read stays valid as long as the bundle does
 * (unless tf_bundle_add replaces that very path). The struct tf_bundle_file
 * pointer itself points into a growable array: use it at once, before the
 * next read or add, and keep only its `data` / `size`. */
#include "bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"

/* Kernel sources and YAML files are a few KiB; anything this big is a mistake
 * (a data file named by accident) or hostile, and would be broadcast to every rank. */
#define BUNDLE_MAX_FILE (16u * 1024u * 1024u)

struct tf_bundle *tf_bundle_create(void)
{
    struct tf_bundle *b = tf_xcalloc(1, sizeof *b);
    const char *kp = getenv("TUNEFARM_KERNEL_PATH");
    b->kernel_path = tf_xstrdup(kp ? kp : "");
    return b;
}

void tf_bundle_destroy(struct tf_bundle *b)
{
    if (b == NULL)
        return;
    for (int i = 0; i < b->count; i++) {
        free(b->files[i].path);
        free(b->files[i].data);
    }
    free(b->files);
    free(b->kernel_path);
    free(b);
}

static int bundle_find(const struct tf_bundle *b, const char *path)
{
    for (int i = 0; i < b->count; i++)
        if (strcmp(b->files[i].path, path) == 0)
            return i;
    return -1;
}

/* Append or replace; takes ownership of `data` (size bytes + NUL). */
static struct tf_bundle_file *bundle_put(struct tf_bundle *b, const char *path, char *data,
                                         size_t size)
{
    int i = bundle_find(b, path);
    if (i >= 0) {
        free(b->files[i].data);
    } else {
        /* Grow one at a time: bundles hold a handful of files. */
        b->files = tf_xrealloc(b->files, (size_t)(b->count + 1) * sizeof *b->files);
        i = b->count++;
        b->files[i].path = tf_xstrdup(path);
    }
    b->files[i].data = data;
    b->files[i].size = size;
    return &b->files[i];
}

void tf_bundle_add(struct tf_bundle *b, const char *path, const char *data, size_t size)
{
    char *copy = tf_xmalloc(size + 1);
    if (size)
        memcpy(copy, data, size);
    copy[size] = '\0';
    bundle_put(b, path, copy, size);
}

/* Read all of `path` into a fresh NUL-terminated buffer. */
static char *read_whole_file(const char *path, size_t *size_out, struct tf_error *err)
{
    char *data = NULL;
    /* O_NONBLOCK: opening a FIFO named by mistake must not hang the loader. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        tf_error_at(err, TF_ERR_IO, path, 0, 0, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        tf_error_at(err, TF_ERR_IO, path, 0, 0, "cannot stat '%s': %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        tf_error_at(err, TF_ERR_IO, path, 0, 0, "'%s' is not a regular file", path);
        goto fail;
    }
    if ((uintmax_t)st.st_size > BUNDLE_MAX_FILE) {
        tf_error_at(err, TF_ERR_IO, path, 0, 0,
                    "'%s' is %jd bytes; input files larger than 16 MiB are refused", path,
                    (intmax_t)st.st_size);
        goto fail;
    }
    /* Read until EOF rather than trusting st_size: the file may change under us,
     * and the limit must hold for what we actually keep. */
    size_t cap = (size_t)st.st_size + 1, len = 0;
    data = tf_xmalloc(cap + 1);
    for (;;) {
        if (len == cap) {
            if (cap > BUNDLE_MAX_FILE) {
                tf_error_at(err, TF_ERR_IO, path, 0, 0,
                            "'%s' grew past 16 MiB while being read", path);
                goto fail;
            }
            cap *= 2;
            data = tf_xrealloc(data, cap + 1);
        }
        ssize_t n = read(fd, data + len, cap - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            tf_error_at(err, TF_ERR_IO, path, 0, 0, "cannot read '%s': %s", path,
                        strerror(errno));
            goto fail;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    if (len > BUNDLE_MAX_FILE) {
        tf_error_at(err, TF_ERR_IO, path, 0, 0, "'%s' grew past 16 MiB while being read", path);
        goto fail;
    }
    data[len] = '\0';
    close(fd);
    *size_out = len;
    return data;
fail:
    free(data);
    close(fd);
    return NULL;
}

const struct tf_bundle_file *tf_bundle_read(struct tf_bundle *b, const char *path,
                                            struct tf_error *err)
{
    int i = bundle_find(b, path);
    if (i >= 0)
        return &b->files[i];
    if (b->sealed) {
        tf_error_at(err, TF_ERR_IO, path, 0, 0,
                    "'%s' is not part of the job bundle (the coordinator did not send it)",
                    path);
        return NULL;
    }
    size_t size = 0;
    char *data = read_whole_file(path, &size, err);
    if (data == NULL)
        return NULL;
    return bundle_put(b, path, data, size);
}

bool tf_bundle_exists(const struct tf_bundle *b, const char *path)
{
    if (bundle_find(b, path) >= 0)
        return true;
    if (b->sealed)
        return false;
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void tf_bundle_hash(const struct tf_bundle *b, char out[65])
{
    struct tf_sha256 h;
    tf_sha256_init(&h);
    for (int i = 0; i < b->count; i++) {
        /* Path with its terminator, then an explicit length: no two different
         * bundles can feed the same byte stream. */
        tf_sha256_update_str(&h, b->files[i].path);
        unsigned char len[8];
        uint64_t n = b->files[i].size;
        for (int k = 0; k < 8; k++)
            len[k] = (unsigned char)(n >> (8 * k));
        tf_sha256_update(&h, len, sizeof len);
        tf_sha256_update(&h, b->files[i].data, b->files[i].size);
    }
    tf_sha256_hex(&h, out);
}

char *tf_path_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return tf_xstrdup(".");
    if (slash == path)
        return tf_xstrdup("/");
    return tf_xasprintf("%.*s", (int)(slash - path), path);
}

char *tf_path_join(const char *dir, const char *rel)
{
    if (rel[0] == '/' || strcmp(dir, ".") == 0)
        return tf_xstrdup(rel);
    if (strcmp(dir, "/") == 0)
        return tf_xasprintf("/%s", rel);
    return tf_xasprintf("%s/%s", dir, rel);
}
