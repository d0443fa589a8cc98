/* cache.h - the content-addressed compile cache on disk.
 *
 * Layout: <dir>/<backend>/<key[0:2]>/<key>.<ext>, where ext is the binary's
 * (so, cubin, hsaco) or one of: meta (registers/shared/spills/warnings of a
 * good binary), err (the one-line message of a rejected variant), log (the
 * full compiler log of a rejected variant, or of a good one that had
 * warnings), busy (the in-progress mark "host pid" of
 * a variant some process is compiling now; see compile.c). Every file but the
 * mark appears atomically. */
#ifndef TF_CACHE_H
#define TF_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../schema/error.h"
#include "../schema/result.h"
#include "backend.h"

/* The cache key (64 hex digits) of compiling `in` with `be`: SHA-256 over backend
 * name, compiler id, arch, options, defines, source text, entry point and, if
 * `includes` is neither NULL nor "", the digest of the files under the kernel's
 * include paths (tf_include_manifest), read on this node. */
void tf_cache_key(const struct tf_backend *be, const struct tf_compile_input *in,
                  const char *includes, char key[65]);
/* File extension of `backend`'s binaries ("so" for host). */
const char *tf_cache_binary_ext(const char *backend);
/* True if what `st` describes is this user's (or root's) and no one else can
 * write it: not others, and not a group but the user's own private group (a
 * sticky folder aside). Binaries found in the cache are loaded and run. */
bool tf_cache_only_mine(const struct stat *st);
/* 0 if `dir` (a compile cache's folder) passes tf_cache_only_mine (a folder
 * of this user's that others may write is made theirs alone first); else -1
 * and `err` says why. */
int tf_cache_check_dir(const char *dir, struct tf_error *err);
/* Write "<dir>/<backend>/<key[0:2]>/<key>.<ext>" into `out` and create its folder.
 * -1 + err if the path does not fit or the folder cannot be made. */
int tf_cache_path(const char *dir, const char *backend, const char *key, const char *ext,
                  char *out, size_t cap, struct tf_error *err);
/* mkdir -p `path` (mode 0777 & umask; the cache takes others' write permission
 * off its own folders, tf_cache_check_dir); -1 + err naming the component that failed. */
int tf_mkdir_p(const char *path, struct tf_error *err);
/* A unique temporary name beside `final` (same folder, so rename() is atomic). */
void tf_cache_temp_name(const char *final, char *out, size_t cap);
/* Write `n` bytes to `path` atomically (temp file + rename). -1 + err on failure. */
int tf_cache_write_file(const char *path, const void *data, size_t n, struct tf_error *err);
/* Read a whole small text file (at most `cap` - 1 bytes) into `out`; -1 if unreadable. */
int tf_cache_read_text(const char *path, char *out, size_t cap);
/* What the cache keeps of a good binary besides itself. */
struct tf_cache_meta {
    int32_t registers;         /* per thread; -1 unknown */
    int64_t shared_bytes;      /* static shared memory; -1 unknown */
    int64_t spill_bytes;       /* -1 unknown */
    int32_t warnings;          /* the compiler's warnings; -1 unknown */
    char first_warning[TF_WARNING_LEN];
    int64_t binary_size;       /* bytes of the binary it describes; -1 unknown (older caches) */
};
/* Store / read a good binary's metadata (one "name value" per line). Reading a
 * missing or damaged file yields -1 for every field and returns -1; a file
 * written before warnings were kept reads them as -1 (unknown). */
int tf_cache_write_meta(const char *path, const struct tf_cache_meta *m, struct tf_error *err);
int tf_cache_read_meta(const char *path, struct tf_cache_meta *m);

#endif
