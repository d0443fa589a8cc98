/* import.h - Kernel Tuner caches and T4 results files into archive models.
 *
 * `tunefarm import ARCHIVE FILE...` brings measurements made by others into
 * an archive. Each file becomes a model of its own (one kernel with the
 * file's parameters and values, one problem, one device, one run, one row per
 * configuration) that the caller merges into the archive (tf_archive_merge),
 * so a file whose kernel does not match the archive's changes nothing. The
 * format is told by the content: an object with `cache` and
 * `tune_params_keys` is a Kernel Tuner cache (read by schema/ktcache.h), one
 * with `results` a T4 file; both may be gzip'd. Statuses map as
 * schema/import.md says (InvalidConfig -> invalid, CompilationFailedConfig ->
 * compile_error, RuntimeFailedConfig -> runtime_error; T4's invalidity
 * likewise); times become seconds (mean, and median, min and relative spread
 * from the samples where the file has them); compile and benchmark times are
 * kept. Bad input (not JSON, wrong types, unknown failure names, values
 * outside a parameter's list, two entries of one configuration) is refused
 * with the file, the place (line:column for JSON syntax, a JSON path
 * otherwise) and what was expected. The run is named after the file's
 * content (its SHA-256 is the job hash), so importing a file twice adds it
 * once. */
#ifndef TF_IMPORT_H
#define TF_IMPORT_H

#include <stdint.h>

#include "archive.h"
#include "error.h"
#include "status.h"

struct tf_import_options {
    const char *device;  /* the device's name (replaces the file's); NULL: the file's */
    const char *arch;    /* its architecture ("sm_80", "gfx90a"); NULL: the file's or none */
    const char *vendor;  /* "NVIDIA", "AMD", ...; NULL: the file's, or guessed from the name */
    const char *kernel;  /* the kernel's name; NULL: the file's (a T4 file has none of its own) */
    const char *problem; /* the problem's name; NULL: the file's, or the sizes ("4096x4096") */
};

/* What a file held. */
struct tf_import_info {
    const char *format;  /* "Kernel Tuner cache" or "T4" */
    uint64_t rows;
    uint64_t by_status[TF_STATUS_COUNT];
    char note[512];      /* something the user should know (metrics left out), or "" */
};

/* `path` as a new archive model with one kernel, problem, device and run. NULL
 * + err on failure. */
struct tf_archive *tf_import_file(const char *path, const struct tf_import_options *o,
                                  struct tf_import_info *info, struct tf_error *err);

#endif
