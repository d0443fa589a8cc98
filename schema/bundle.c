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
 * Besides files, a bundle holds one entry per kernel with include paths
 * (TF_INCLUDE_ENTRY + the kernel file's path): the manifest of the headers its
 * compiles may read, made on the coordinator (see "include paths" below), so
 * that the job hash changes when a header does.
 *
 * Lifetimes: each file's `data` is allocated separately, so the data pointer
 * returned through tf_bundle_read stays valid as long as the bundle does
 * (unless tf_bundle_add replaces that very path). The struct tf_bundle_file
 * pointer itself points into a growable array: use it at once, before the
 * next read or add, and keep only its `data` / `size`. */
#include "bundle.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"
#include "replace.h"

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

/* `path` relative to the folder `dir` when it lies under it, else as it is,
 * both read without their `.` components and repeated slashes (".." is kept:
 * it is not lexical where links are), in out[cap]. `dir` "." leaves a
 * relative path as it is; "/" makes an absolute one relative to the root.
 * The job hash and the include manifests name files this way, so the same
 * job typed as job.yaml, ./job.yaml, $PWD/job.yaml or from its own folder
 * hashes alike (kernel paths are built on the job file's path as typed). */
static void rel_to(const char *path, const char *dir, char *out, size_t cap)
{
    char np[4096], nd[4096];
    tf_path_clean(path, np, sizeof np);
    tf_path_clean(dir, nd, sizeof nd);
    const size_t n = strlen(nd);
    const char *r = np;
    if (strcmp(nd, "/") == 0 && np[0] == '/')
        r = np + 1;
    else if (strcmp(nd, ".") != 0 && strncmp(np, nd, n) == 0 && np[n] == '/')
        r = np + n + 1;
    tf_strlcpy(out, r, cap);
}

/* A bundle path as the job hash sees it: the job file (entry 0) by its name,
 * any other path relative to the job file's folder when under it (rel_to). */
static void hash_path(struct tf_sha256 *h, const char *path, bool job_file, const char *dir)
{
    const size_t nmark = strlen(TF_INCLUDE_ENTRY);
    if (strncmp(path, TF_INCLUDE_ENTRY, nmark) == 0) {
        tf_sha256_update(h, path, nmark);
        path += nmark;
    }
    char rel[4096];
    const char *slash = strrchr(path, '/');
    if (job_file)
        tf_strlcpy(rel, slash ? slash + 1 : path, sizeof rel);
    else
        rel_to(path, dir, rel, sizeof rel);
    tf_sha256_update_str(h, rel);
}

void tf_bundle_hash(const struct tf_bundle *b, char out[65])
{
    struct tf_sha256 h;
    tf_sha256_init(&h);
    char *dir = tf_path_dir(b->count > 0 ? b->files[0].path : ".");
    for (int i = 0; i < b->count; i++) {
        /* Path with its terminator, then an explicit length: no two different
         * bundles can feed the same byte stream. */
        hash_path(&h, b->files[i].path, i == 0, dir);
        unsigned char len[8];
        uint64_t n = b->files[i].size;
        for (int k = 0; k < 8; k++)
            len[k] = (unsigned char)(n >> (8 * k));
        tf_sha256_update(&h, len, sizeof len);
        tf_sha256_update(&h, b->files[i].data, b->files[i].size);
    }
    free(dir);
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

void tf_path_clean(const char *path, char *out, size_t cap)
{
    size_t len = 0;
    if (cap == 0)
        return;
    out[0] = '\0';
    const bool absolute = path[0] == '/';
    if (absolute && cap > 1)
        out[len++] = '/';
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        const char *end = strchr(p, '/');
        const size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0)
            break;
        if (!(n == 1 && p[0] == '.')) {
            const bool sep = len > 0 && out[len - 1] != '/';
            if (len + sep + n + 1 > cap)
                break; /* too long: cut (only ever hashed or compared) */
            if (sep)
                out[len++] = '/';
            memcpy(out + len, p, n);
            len += n;
        }
        p += n;
    }
    if (len == 0 && cap > 1)
        out[len++] = '.';
    out[len] = '\0';
}

char *tf_path_join(const char *dir, const char *rel)
{
    if (rel[0] == '/' || strcmp(dir, ".") == 0)
        return tf_xstrdup(rel);
    if (strcmp(dir, "/") == 0)
        return tf_xasprintf("/%s", rel);
    return tf_xasprintf("%s/%s", dir, rel);
}

/* ---- include paths ----
 *
 * A compile reads more than the kernel's source: the headers under the
 * include paths its options name, and for NVRTC / hipRTC the headers beside
 * the source (they resolve #include "x.h" against the folder of the program's
 * name; the host compiler compiles a copy in a private folder, so there a
 * sibling header is only found through -I). Those files are part of what was
 * measured, so the job hash and the compile cache key must change when one
 * does (issue 11, item 6). We cannot know which of them a compile will read
 * before compiling, and the job hash is fixed before anything compiles, so we
 * hash every regular file under each such path: the manifest is a text, one
 * line per path and per file (name and SHA-256 of the contents), deterministic
 * (entries sorted by name, symbolic links followed as the compiler would).
 * Reading a whole tree at every run must stay cheap, hence the bounds: a tree
 * past TF_INCLUDE_MAX_FILES files or TF_INCLUDE_MAX_BYTES bytes is refused with
 * a message asking for a narrower folder, rather than slowly hashed or
 * silently skipped. A folder that does not exist is refused too: the compiler
 * would skip it silently, and a header found there on some rank would then be
 * covered by nothing. Options whose files cannot be known from the option
 * alone (-iprefix, -iwithprefix*) are refused. System headers (the compiler's
 * own search path, CPATH and friends) are not covered: the compiler identity
 * in the cache key is what stands for them. */

#define INCLUDE_MAX_DEPTH 32

struct manifest {
    char *text;
    size_t len, cap;
    int files;
    uint64_t bytes;
    char what[320]; /* the option (or the source folder) being walked, for messages */
    /* tf_include_stamp: a "stat" line per file (what stat says of it) instead
     * of its hash, and whether one changed at or after `recent` (seconds). */
    int stamp_only, racy;
    double recent;
    /* The job file's folder, written off the front of the paths the manifest
     * names (the job hash must not depend on how the job's path was typed:
     * tf_bundle_hash); NULL: paths as they are. */
    const char *strip;
    char rel[4096]; /* manifest_rel's answer */
};

/* `path` as the manifest names it: relative to m->strip (rel_to), in m->rel. */
static const char *manifest_rel(struct manifest *m, const char *path)
{
    if (m->strip == NULL)
        return path;
    rel_to(path, m->strip, m->rel, sizeof m->rel);
    return m->rel;
}

static void manifest_printf(struct manifest *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void manifest_printf(struct manifest *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        tf_die("vsnprintf failed");
    if (m->len + (size_t)n + 1 > m->cap) {
        while (m->len + (size_t)n + 1 > m->cap)
            m->cap = m->cap ? 2 * m->cap : 1024;
        m->text = tf_xrealloc(m->text, m->cap);
    }
    va_start(ap, fmt);
    vsnprintf(m->text + m->len, m->cap - m->len, fmt, ap);
    va_end(ap);
    m->len += (size_t)n;
}

static int manifest_too_big(const struct manifest *m, const char *root, struct tf_error *err)
{
    return tf_error_set(err, TF_ERR_SCHEMA,
                        "%s: '%s' holds more than %d files or %u MiB: every file under a "
                        "kernel's include paths is hashed into the job and the compile cache "
                        "key at every run; name a narrower folder that holds only the headers",
                        m->what, root, TF_INCLUDE_MAX_FILES, TF_INCLUDE_MAX_BYTES >> 20);
}

/* The regular file `path` (`st`: what stat() said of it) into a "stat" line. */
static int manifest_stat(struct manifest *m, const char *root, const char *path,
                         const struct stat *st, struct tf_error *err)
{
    if (++m->files > TF_INCLUDE_MAX_FILES)
        return manifest_too_big(m, root, err);
    m->bytes += (uint64_t)st->st_size;
    if (m->bytes > TF_INCLUDE_MAX_BYTES)
        return manifest_too_big(m, root, err);
    const double mtime = (double)st->st_mtim.tv_sec + 1e-9 * (double)st->st_mtim.tv_nsec,
                 ctime = (double)st->st_ctim.tv_sec + 1e-9 * (double)st->st_ctim.tv_nsec;
    m->racy |= mtime >= m->recent || ctime >= m->recent;
    manifest_printf(m, "stat %ju %ju %jd %lld.%09ld %lld.%09ld %zu %s\n", (uintmax_t)st->st_dev,
                    (uintmax_t)st->st_ino, (intmax_t)st->st_size, (long long)st->st_mtim.tv_sec,
                    st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec,
                    strlen(path), path);
    return 0;
}

/* Hash the regular file `path` (`st`: what stat() said of it) into a "file"
 * line, or only stamp it (manifest_stat) when that is what is asked. */
static int manifest_file(struct manifest *m, const char *root, const char *path,
                         const struct stat *st, struct tf_error *err)
{
    if (m->stamp_only)
        return manifest_stat(m, root, path, st, err);
    /* O_NONBLOCK: a FIFO that stat() saw as a file by a race must not hang us. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return tf_error_set(err, TF_ERR_IO, "%s: cannot read '%s': %s", m->what, path,
                            strerror(errno));
    struct tf_sha256 h;
    char buf[65536], hex[65];
    uint64_t size = 0;
    tf_sha256_init(&h);
    if (++m->files > TF_INCLUDE_MAX_FILES) {
        close(fd);
        return manifest_too_big(m, root, err);
    }
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            return tf_error_set(err, TF_ERR_IO, "%s: cannot read '%s': %s", m->what, path,
                                strerror(e));
        }
        if (n == 0)
            break;
        size += (uint64_t)n;
        m->bytes += (uint64_t)n;
        if (m->bytes > TF_INCLUDE_MAX_BYTES) {
            close(fd);
            return manifest_too_big(m, root, err);
        }
        tf_sha256_update(&h, buf, (size_t)n);
    }
    close(fd);
    tf_sha256_hex(&h, hex);
    /* the name's length first: no file name can fake the next line */
    const char *name = manifest_rel(m, path);
    manifest_printf(m, "file %s %" PRIu64 " %zu %s\n", hex, size, strlen(name), name);
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file tunefarm writes, which no #include reads: an archive (HDF5), its
 * journal, or a temporary "NAME.tmp.PID". An archive written beside a CUDA
 * kernel (`import-t1`'s folder, a job's relative `archive:`) must not change
 * the job's hash, or the run could never be resumed, nor make the folder too
 * big to hash. */
static bool tunefarm_output(const char *path, const char *name)
{
    const char *t = NULL; /* the last ".tmp.": "run.tmp.h5.tmp.123" is a temporary */
    for (const char *f = strstr(name, ".tmp."); f != NULL; f = strstr(f + 1, ".tmp."))
        t = f;
    if (t != NULL && t[5] != '\0' && strspn(t + 5, "0123456789") == strlen(t + 5))
        return true;
    if (tf_replace_is_hdf5(path))
        return true;
    char head[7] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false; /* manifest_file says why */
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n == 7 && memcmp(head, "TFJRNL0", 7) == 0; /* a journal, any format */
}

/* Every regular file under the folder `dir`, recursively, in name order
 * (tunefarm's own outputs left out). */
static int manifest_dir(struct manifest *m, const char *root, const char *dir, int depth,
                        struct tf_error *err)
{
    char **names = NULL;
    int count = 0, cap = 0, rc = -1;
    DIR *d = opendir(dir);
    if (d == NULL)
        return tf_error_set(err, TF_ERR_IO,
                            "%s: cannot open the folder '%s': %s (a relative include path is "
                            "relative to the working directory tunefarm runs in, on every rank)",
                            m->what, dir, strerror(errno));
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (count + m->files >= TF_INCLUDE_MAX_FILES) { /* bound the listing too */
            closedir(d);
            for (int i = 0; i < count; i++)
                free(names[i]);
            free(names);
            return manifest_too_big(m, root, err);
        }
        if (count == cap) {
            cap = cap ? 2 * cap : 16;
            names = tf_xrealloc(names, (size_t)cap * sizeof *names);
        }
        names[count++] = tf_xstrdup(e->d_name);
    }
    closedir(d);
    if (count > 1)
        qsort(names, (size_t)count, sizeof *names, compare_names);
    for (int i = 0; i < count; i++) {
        char *path = tf_path_join(dir, names[i]);
        struct stat st;
        int bad = 0;
        if (stat(path, &st) != 0) {
            bad = errno != ENOENT; /* a dangling link is no file the compiler can read */
            if (bad)
                tf_error_set(err, TF_ERR_IO, "%s: cannot stat '%s': %s", m->what, path,
                             strerror(errno));
        } else if (S_ISDIR(st.st_mode)) {
            if (depth >= INCLUDE_MAX_DEPTH)
                bad = tf_error_set(err, TF_ERR_SCHEMA,
                                   "%s: '%s' is nested deeper than %d folders (a symbolic link "
                                   "loop?); name a narrower folder that holds only the headers",
                                   m->what, path, INCLUDE_MAX_DEPTH) != 0;
            else
                bad = manifest_dir(m, root, path, depth + 1, err) != 0;
        } else if (S_ISREG(st.st_mode)) {
            if (!tunefarm_output(path, names[i]))
                bad = manifest_file(m, root, path, &st, err) != 0;
        } /* FIFOs, sockets, devices: nothing an #include reads */
        free(path);
        if (bad)
            goto out;
    }
    rc = 0;
out:
    for (int i = 0; i < count; i++)
        free(names[i]);
    free(names);
    return rc;
}

enum include_kind { INCLUDE_NONE, INCLUDE_DIR, INCLUDE_FILE, INCLUDE_REFUSED };

/* What `opt` makes the compiler read: a folder, a file (its argument in *arg),
 * or something we refuse. gcc, clang, NVRTC and hipRTC spellings; a kernel's
 * options are single words starting with '-', so the argument is joined. */
static enum include_kind include_option(const char *opt, const char **arg)
{
    static const struct {
        const char *prefix;
        enum include_kind kind;
    } table[] = {
        /* longest first where one prefix begins another */
        {"-iwithprefixbefore", INCLUDE_REFUSED}, {"-iwithprefix", INCLUDE_REFUSED},
        {"-iprefix", INCLUDE_REFUSED},           {"-isystem", INCLUDE_DIR},
        {"-isysroot", INCLUDE_DIR},              {"-iquote", INCLUDE_DIR},
        {"-idirafter", INCLUDE_DIR},             {"-include", INCLUDE_FILE},
        {"-imacros", INCLUDE_FILE},              {"--include-path=", INCLUDE_DIR},
        {"--include-directory=", INCLUDE_DIR},   {"--include-directory-after=", INCLUDE_DIR},
        {"--sysroot=", INCLUDE_DIR},             {"--pre-include=", INCLUDE_FILE},
        {"-I", INCLUDE_DIR},
    };
    static const char *const bare[] = {"--include-path", "--include-directory",
                                       "--include-directory-after", "--sysroot",
                                       "--pre-include"};
    for (size_t i = 0; i < sizeof bare / sizeof bare[0]; i++)
        if (strcmp(opt, bare[i]) == 0)
            return INCLUDE_REFUSED;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const size_t n = strlen(table[i].prefix);
        if (strncmp(opt, table[i].prefix, n) == 0) {
            *arg = opt + n;
            if (table[i].kind != INCLUDE_REFUSED && **arg == '\0')
                return INCLUDE_REFUSED; /* its argument would be the next option */
            return table[i].kind;
        }
    }
    return INCLUDE_NONE;
}

/* The folder (or file) `path` of option `what` into the manifest. */
static int manifest_path(struct manifest *m, const char *path, enum include_kind kind,
                         struct tf_error *err)
{
    struct stat st;
    if (kind == INCLUDE_FILE) {
        /* -include searches the include chain when the file is not where named;
         * that chain is hashed by its own options. */
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            const char *name = manifest_rel(m, path);
            manifest_printf(m, "absent %zu %s\n", strlen(name), name);
            return 0;
        }
        return manifest_file(m, path, path, &st, err);
    }
    if (stat(path, &st) != 0)
        return tf_error_set(err, TF_ERR_IO,
                            "%s: cannot open the folder '%s': %s (a relative include path is "
                            "relative to the working directory tunefarm runs in, on every rank)",
                            m->what, path, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return tf_error_set(err, TF_ERR_IO, "%s: '%s' is not a folder", m->what, path);
    return manifest_dir(m, path, path, 0, err);
}

/* The walk of tf_include_manifest and tf_include_stamp into `m`. */
static int include_walk(struct manifest *m, char *const *options, int noptions,
                        const char *language, const char *source_path, char **text, int *bad,
                        struct tf_error *err)
{
    *text = NULL;
    *bad = -1;
    for (int i = 0; i < noptions; i++) {
        const char *arg = NULL;
        const enum include_kind kind = include_option(options[i], &arg);
        if (kind == INCLUDE_NONE)
            continue;
        *bad = i;
        if (kind == INCLUDE_REFUSED) {
            tf_error_set(err, TF_ERR_SCHEMA,
                         "compiler option '%.200s': the files it makes the compiler read "
                         "cannot be hashed into the job and the compile cache key; give the "
                         "path in the option itself (-I/path/to/headers, "
                         "--include-path=/path), without -iprefix / -iwithprefix",
                         options[i]);
            goto fail;
        }
        snprintf(m->what, sizeof m->what, "compiler option '%.200s'", options[i]);
        manifest_printf(m, "option %zu %s\n", strlen(options[i]), options[i]);
        if (manifest_path(m, arg, kind, err) != 0)
            goto fail;
    }
    *bad = -1;
    if (language != NULL && strcmp(language, "cuda") == 0 && source_path != NULL) {
        char *dir = tf_path_dir(source_path);
        snprintf(m->what, sizeof m->what,
                 "the kernel source's folder (NVRTC and hipRTC look for #include \"...\" "
                 "headers there; keep a kernel in a folder of its own)");
        const char *name = manifest_rel(m, dir);
        manifest_printf(m, "source-folder %zu %s\n", strlen(name), name);
        const int rc = manifest_path(m, dir, INCLUDE_DIR, err);
        free(dir);
        if (rc != 0)
            goto fail;
    }
    *text = m->text;
    return 0;
fail:
    free(m->text);
    return -1;
}

int tf_include_manifest(char *const *options, int noptions, const char *language,
                        const char *source_path, char **text, int *bad, struct tf_error *err)
{
    struct manifest m = {0};
    return include_walk(&m, options, noptions, language, source_path, text, bad, err);
}

int tf_include_stamp(char *const *options, int noptions, const char *language,
                     const char *source_path, char **text, int *racy, struct tf_error *err)
{
    struct manifest m = {.stamp_only = 1};
    struct timespec now;
    int bad;
    /* A file's times come from a clock that ticks in milliseconds or coarser:
     * a write in the same tick as this stamp, keeping the size, would leave
     * its line unchanged. Files changed this recently make the stamp racy. */
    clock_gettime(CLOCK_REALTIME, &now);
    m.recent = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec - TF_INCLUDE_RACY_SECONDS;
    const int rc = include_walk(&m, options, noptions, language, source_path, text, &bad, err);
    *racy = m.racy;
    return rc;
}

int tf_bundle_add_includes(struct tf_bundle *b, const char *kernel_file, char *const *options,
                           int noptions, const char *language, const char *source_path,
                           int *bad, struct tf_error *err)
{
    char *text = NULL;
    *bad = -1;
    if (b->sealed)
        return 0; /* the coordinator's manifest came with the job */
    /* Paths under the job file's folder (the bundle's first file) relative to
     * it, as tf_bundle_hash hashes the bundle's own paths. */
    char *job_dir = b->count > 0 ? tf_path_dir(b->files[0].path) : NULL;
    struct manifest m = {.strip = job_dir};
    const int rc = include_walk(&m, options, noptions, language, source_path, &text, bad, err);
    free(job_dir);
    if (rc != 0)
        return -1;
    if (text != NULL) {
        char *entry = tf_xasprintf("%s%s", TF_INCLUDE_ENTRY, kernel_file);
        tf_bundle_add(b, entry, text, strlen(text));
        free(entry);
        free(text);
    }
    return 0;
}
