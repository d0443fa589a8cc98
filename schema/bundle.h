/* bundle.h - the set of input files a job is made of, in memory.
 *
 * The coordinator loads a job from disk into a bundle (the job file, each
 * kernel.yaml and every source they name); the bundle is what the JOB message
 * carries, so workers and runners load the very same job from memory with the
 * very same loader and never need the job's files. A "sealed" bundle never
 * touches the disk: a path missing from it is an error. */
#ifndef TF_BUNDLE_H
#define TF_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct tf_bundle_file {
    char *path; /* as the loader named it (resolved, not canonicalised) */
    char *data; /* NUL-terminated contents */
    size_t size;
};

struct tf_bundle {
    bool sealed;        /* true: read from memory only */
    char *kernel_path;  /* the coordinator's TUNEFARM_KERNEL_PATH, so workers resolve alike */
    int count;
    struct tf_bundle_file *files;
};

/* New empty, unsealed bundle; kernel_path taken from the environment. */
struct tf_bundle *tf_bundle_create(void);
/* Free; accepts NULL. */
void tf_bundle_destroy(struct tf_bundle *b);
/* The contents of `path`: from the bundle, or (unsealed only) read from disk and
 * added. Returns NULL with `err` on failure. The returned struct is valid until the
 * next read or add; its `data` lives as long as `b` (unless the path is re-added). */
const struct tf_bundle_file *tf_bundle_read(struct tf_bundle *b, const char *path,
                                            struct tf_error *err);
/* True if `path` is a regular file in the bundle or (unsealed only) on disk. */
bool tf_bundle_exists(const struct tf_bundle *b, const char *path);
/* Add a file from memory (copied); replaces a file of the same path. */
void tf_bundle_add(struct tf_bundle *b, const char *path, const char *data, size_t size);
/* The folder of `path` ("." when it has none, "/" for the root); a new string. */
char *tf_path_dir(const char *path);
/* `path` without `.` components, repeated and trailing slashes ("a/./b//c/" ->
 * "a/b/c", "./" -> ".", "//x" -> "/x"); ".." is kept. In out[cap]. */
void tf_path_clean(const char *path, char *out, size_t cap);
/* `rel` joined to `dir` (absolute `rel` and dir "." leave it as is); a new string.
 * Deterministic, because a bundle is keyed by these exact strings on every rank. */
char *tf_path_join(const char *dir, const char *rel);
/* SHA-256 (hex, 64 chars + NUL) over every path and content, in insertion order;
 * the paths relative to the first file's (the job file's) folder, so the same
 * job named by another path (./job.yaml, $PWD/job.yaml) has the same hash. */
void tf_bundle_hash(const struct tf_bundle *b, char out[65]);

/* ---- files a compile reads besides its source (see bundle.c, "include paths") ---- */

/* What the include paths of one kernel may hold: every file under them is read
 * (hashed) at every run, by the coordinator and by every compiling rank. */
#define TF_INCLUDE_MAX_FILES 1000
#define TF_INCLUDE_MAX_BYTES (16u * 1024u * 1024u)
/* Prefix of the bundle entry holding a kernel's include manifest. */
#define TF_INCLUDE_ENTRY "tunefarm:includes:"

/* The manifest of every file a compile of a kernel may read besides its source
 * and the farm's own header: each include path its `options` name (-I, -isystem,
 * -iquote, -idirafter, --include-path=, -include, -imacros, --pre-include=,
 * --sysroot=, -isysroot), walked recursively, and for `language` "cuda" the
 * source's own folder (NVRTC and hipRTC resolve #include "x.h" there). Text,
 * one line per option and per file ("file SHA256 SIZE PATH"), files sorted, so
 * equal trees give equal text on every rank. *text is malloc'd, or NULL when
 * the kernel has no such paths (its cache key and job hash then stay as they
 * were). -1 + err naming the option (its index in *bad, -1 for the source
 * folder) for a folder that is missing, unreadable, or past the limits above,
 * and for include options whose files cannot be known (-iprefix, -iwithprefix,
 * a bare -I whose folder would be the next option). */
int tf_include_manifest(char *const *options, int noptions, const char *language,
                        const char *source_path, char **text, int *bad, struct tf_error *err);
/* Files changed this recently (seconds) make tf_include_stamp's stamp racy. */
#define TF_INCLUDE_RACY_SECONDS 2.0
/* A cheap stand-in for the manifest, to tell whether it may have changed: the
 * same walk (same options, same limits, same errors), with one "stat" line per
 * file (device, inode, size, modification and change times, path) instead of
 * its contents' hash. While two stamps are equal the manifests are too,
 * unless a file was rewritten within one tick of the file system's clock
 * keeping its size: *racy is set when any file changed in the last
 * TF_INCLUDE_RACY_SECONDS, and such a stamp proves nothing. *text is NULL
 * when the kernel has no include paths. */
int tf_include_stamp(char *const *options, int noptions, const char *language,
                     const char *source_path, char **text, int *racy, struct tf_error *err);
/* Put the manifest of a kernel (loaded from `kernel_file`) into an unsealed
 * bundle, as the entry TF_INCLUDE_ENTRY + kernel_file, so the job hash covers
 * the headers and the JOB message carries the list. A sealed bundle already
 * holds it (the coordinator's): nothing is read. Same errors as above. */
int tf_bundle_add_includes(struct tf_bundle *b, const char *kernel_file, char *const *options,
                           int noptions, const char *language, const char *source_path,
                           int *bad, struct tf_error *err);

#endif
