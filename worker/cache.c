/* cache.c - the compile cache: content-addressed files that appear atomically.
 *
 * A variant's key is a SHA-256 over everything that determines the binary:
 * backend, compiler identity (path + version, so an upgrade misses instead of
 * reusing stale code), target arch, flags, defines, the source text, the
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
#include <inttypes.h>
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
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) /* no one else writes a cache */
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

int tf_cache_check_dir(const char *dir, struct tf_error *err)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return tf_error_set(err, TF_ERR_IO, "compile cache '%s': %s", dir, strerror(errno));
    const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX);
    if ((st.st_uid != geteuid() && st.st_uid != 0) || others_write)
        return tf_error_set(err, TF_ERR_IO,
                            "compile cache '%s' is %s: whoever can write there can put a "
                            "binary that tunefarm would load and run as you. Use a cache "
                            "folder of your own (`cache:` in the job, or XDG_CACHE_HOME), or "
                            "`chmod go-w` this one",
                            dir, others_write ? "writable by other users" : "another user's");
    /* A miss compiles into the cache: without write access every miss, the
     * reference's included, would fail as if the code did. */
    if (access(dir, W_OK | X_OK) != 0)
        return tf_error_set(err, TF_ERR_IO,
                            "compile cache '%s' cannot be written (%s): every variant not in it "
                            "would fail to compile; give a cache folder you can write",
                            dir, strerror(errno));
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
    return tf_mkdir_p(folder, err);
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
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return tf_error_set(err, TF_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
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
