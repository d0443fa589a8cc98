/* cache.c - the compile cache: content-addressed files that appear atomically.
 *
 * A variant's key is a SHA-256 over everything that determines the binary:
 * backend, compiler identity (path + version, so an upgrade misses instead of
 * reusing stale code, and the flags the backend itself passes, so does a
 * tunefarm that compiles differently), target arch, flags, defines, the source text, the
 * portability header "tunefarm.h" the GPU backends hand the compiler (a new
 * tunefarm.h is new code), the entry point and the digest of every file under
 * the kernel's include paths (and, for GPU kernels, the source's folder) as
 * this node sees them: an edited header is a new key, not a stale binary
 * (schema/bundle.c, "include paths", says which files and why). Files are named by key under a
 * two-hex-digit fan-out folder so no directory grows huge. Every file is
 * written to a unique temporary name in its final folder and renamed into
 * place, so ranks sharing the cache over a network filesystem see either
 * nothing or a complete file, never a torn one; two ranks compiling the same
 * key just race to an identical rename. */
#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../schema/hash.h"
#include "portability.h"

void tf_cache_key(const struct tf_backend *be, const struct tf_compile_input *in,
                  const char *includes, char key[65])
{
    struct tf_sha256 h;
    char count[32];
    tf_sha256_init(&h);
    tf_sha256_update_str(&h, "tunefarm-cache-v1");
    tf_sha256_update_str(&h, be->name);
    tf_sha256_update_str(&h, be->compiler_id());
    tf_sha256_update_str(&h, in->arch ? in->arch : "");
    /* counts keep ("-a", "-b") + () apart from ("-a") + ("-b") */
    snprintf(count, sizeof count, "options %d", in->noptions);
    tf_sha256_update_str(&h, count);
    for (int i = 0; i < in->noptions; i++)
        tf_sha256_update_str(&h, in->options[i]);
    snprintf(count, sizeof count, "defines %d", in->ndefines);
    tf_sha256_update_str(&h, count);
    for (int i = 0; i < in->ndefines; i++)
        tf_sha256_update_str(&h, in->defines[i]);
    tf_sha256_update_str(&h, in->source);
    const char *header = tf_portability_header(be->name); /* NULL for host C */
    tf_sha256_update_str(&h, header ? header : "");
    tf_sha256_update_str(&h, in->entry);
    /* Only when there are include paths: every other key stays what it was, so
     * existing caches keep their hits. */
    if (includes != NULL && includes[0] != '\0') {
        tf_sha256_update_str(&h, "includes");
        tf_sha256_update_str(&h, includes);
    }
    tf_sha256_hex(&h, key);
}

const char *tf_cache_binary_ext(const char *backend)
{
    if (strcmp(backend, "host") == 0)
        return "so";
    if (strcmp(backend, "cuda") == 0)
        return "cubin";
    if (strcmp(backend, "hip") == 0)
        return "hsaco";
    return "bin";
}

int tf_mkdir_p(const char *path, struct tf_error *err)
{
    char buf[4096];
    if (strlen(path) >= sizeof buf)
        return tf_error_set(err, TF_ERR_IO, "cache path too long: %.200s...", path);
    tf_strlcpy(buf, path, sizeof buf);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        const char saved = *p;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return tf_error_set(err, TF_ERR_IO, "cannot create folder '%s': %s", buf,
                                strerror(errno));
        struct stat st;
        if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
            return tf_error_set(err, TF_ERR_IO, "'%s' exists and is not a folder", buf);
        *p = saved;
        if (saved == '\0')
            break;
    }
    return 0;
}

/* True if group `gid` is this user's private group (a group of the user's
 * own name with no other members, as Debian and most sites give each user):
 * its write permission lets no one else write, so umask 002 stays usable. */
static bool private_group(gid_t gid)
{
    /* One answer per process for the last group asked (entries share one):
     * a name service (LDAP) lookup per cache hit would cost more than it. */
    static _Atomic long memo_gid = -1;
    static _Atomic int memo_private;
    if (atomic_load(&memo_gid) == (long)gid)
        return atomic_load(&memo_private);
    struct group gr, *g = NULL;
    struct passwd pw, *p = NULL;
    char gbuf[4096], pbuf[4096];
    if (getgrgid_r(gid, &gr, gbuf, sizeof gbuf, &g) != 0 || g == NULL ||
        getpwuid_r(geteuid(), &pw, pbuf, sizeof pbuf, &p) != 0 || p == NULL)
        return false;
    const bool mine =
        strcmp(g->gr_name, p->pw_name) == 0 &&
        (g->gr_mem[0] == NULL || (strcmp(g->gr_mem[0], p->pw_name) == 0 && !g->gr_mem[1]));
    atomic_store(&memo_private, mine);
    atomic_store(&memo_gid, (long)gid);
    return mine;
}

bool tf_cache_only_mine(const struct stat *st)
{
    if (st->st_uid != geteuid() && st->st_uid != 0)
        return false;
    const bool sticky_dir = S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX);
    if ((st->st_mode & S_IWOTH) && !sticky_dir)
        return false;
    return !(st->st_mode & S_IWGRP) || sticky_dir || private_group(st->st_gid);
}

/* A cache folder of this user's that others may write (made by an earlier
 * tunefarm under umask 002, say): their write permission taken away, which
 * changes nothing for the user. */
static void cache_dir_repair(const char *dir, const struct stat *st)
{
    if (st->st_uid == geteuid() && !tf_cache_only_mine(st))
        chmod(dir, st->st_mode & 07755);
}

int tf_cache_check_dir(const char *dir, struct tf_error *err)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return tf_error_set(err, TF_ERR_IO, "compile cache '%s': %s", dir, strerror(errno));
    cache_dir_repair(dir, &st);
    if (stat(dir, &st) != 0 || !tf_cache_only_mine(&st))
        return tf_error_set(err, TF_ERR_IO,
                            "compile cache '%s' is %s: whoever can write there can put a "
                            "binary that tunefarm would load and run as you. Use a cache "
                            "folder of your own (`cache:` in the job, or XDG_CACHE_HOME)",
                            dir, st.st_uid != geteuid() && st.st_uid != 0
                                     ? "another user's"
                                     : "writable by other users");
    return 0;
}

int tf_cache_path(const char *dir, const char *backend, const char *key, const char *ext,
                  char *out, size_t cap, struct tf_error *err)
{
    char folder[4096];
    int n = snprintf(folder, sizeof folder, "%s/%s/%.2s", dir, backend, key);
    if (n < 0 || (size_t)n >= sizeof folder)
        return tf_error_set(err, TF_ERR_IO, "cache folder path too long under '%.200s'", dir);
    n = snprintf(out, cap, "%s/%s.%s", folder, key, ext);
    if (n < 0 || (size_t)n >= cap)
        return tf_error_set(err, TF_ERR_IO, "cache file path too long under '%.200s'", dir);
    if (tf_mkdir_p(folder, err) != 0)
        return -1;
    struct stat st;
    if (stat(folder, &st) == 0)
        cache_dir_repair(folder, &st);
    return 0;
}

void tf_cache_temp_name(const char *final, char *out, size_t cap)
{
    /* pid for ranks sharing a filesystem, a counter for threads of one process */
    static atomic_uint_fast64_t counter;
    const uint64_t n = atomic_fetch_add(&counter, 1);
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    snprintf(out, cap, "%s.tmp.%s.%ld.%" PRIu64, final, host, (long)getpid(), n);
}

int tf_cache_write_file(const char *path, const void *data, size_t n, struct tf_error *err)
{
    char tmp[4200];
    tf_cache_temp_name(path, tmp, sizeof tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return tf_error_set(err, TF_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
    fchmod(fd, 0644); /* whatever the umask: no one else writes a cache entry */
    const char *p = data;
    size_t left = n;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", tmp, strerror(errno));
            goto fail;
        }
        p += w;
        left -= (size_t)w;
    }
    /* On disk before it has its name: a node that crashes leaves a
     * temporary file, never an empty entry under the final name. */
    const int synced = fsync(fd);
    if (close(fd) != 0 || synced != 0) {
        fd = -1;
        tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", tmp, strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        tf_error_set(err, TF_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, path,
                     strerror(errno));
        goto fail;
    }
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return -1;
}

int tf_cache_read_text(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
    return 0;
}

int tf_cache_write_meta(const char *path, const struct tf_cache_meta *m, struct tf_error *err)
{
    char text[256 + TF_WARNING_LEN], first[TF_WARNING_LEN];
    /* one line: the warning is the rest of its line */
    tf_strlcpy(first, m->first_warning, sizeof first);
    first[strcspn(first, "\r\n")] = '\0';
    int n = snprintf(text, sizeof text,
                     "registers %" PRId32 "\nshared_bytes %" PRId64 "\nspill_bytes %" PRId64
                     "\nwarnings %" PRId32 "\nbinary_size %" PRId64 "\nfirst_warning %s\n",
                     m->registers, m->shared_bytes, m->spill_bytes, m->warnings,
                     m->binary_size, first);
    return tf_cache_write_file(path, text, (size_t)n, err);
}

int tf_cache_read_meta(const char *path, struct tf_cache_meta *m)
{
    char text[256 + TF_WARNING_LEN];
    long long r, sh, sp, w;
    memset(m, 0, sizeof *m);
    m->registers = m->warnings = -1;
    m->shared_bytes = m->spill_bytes = m->binary_size = -1;
    if (tf_cache_read_text(path, text, sizeof text) != 0)
        return -1;
    if (sscanf(text, "registers %lld shared_bytes %lld spill_bytes %lld", &r, &sh, &sp) != 3)
        return -1;
    m->registers = (int32_t)r;
    m->shared_bytes = sh;
    m->spill_bytes = sp;
    const char *size = strstr(text, "\nbinary_size ");
    long long bytes;
    if (size && sscanf(size, " binary_size %lld", &bytes) == 1 && bytes >= 0)
        m->binary_size = bytes;
    const char *at = strstr(text, "\nwarnings ");
    const char *first = strstr(text, "\nfirst_warning ");
    if (at && first && sscanf(at, " warnings %lld", &w) == 1 && w >= 0 && w <= INT32_MAX) {
        m->warnings = (int32_t)w;
        first += strlen("\nfirst_warning ");
        const size_t n = strcspn(first, "\n");
        snprintf(m->first_warning, sizeof m->first_warning, "%.*s", (int)n, first);
    }
    return 0;
}
