/* export.h - an archive's rows out to the formats other tools read.
 *
 * `tunefarm export` writes a selection of an archive's results (by kernel,
 * problem, device and run) as CSV (one row per result, every column, the
 * device and run joined in: pandas.read_csv reads it with no options), JSON
 * (the archive's metadata and results as one document), T4 (the autotuning
 * community's results format, with its metadata document beside it) or a
 * Kernel Tuner cache (Kernel Tuner 1.5 simulates a search on it). What maps to
 * what, and what each format loses, is schema/export.md. T4 and Kernel Tuner
 * files describe one kernel and problem on one device class with one entry per
 * configuration: the selection must be that narrow, and of a configuration
 * measured more than once the strict re-measurement (phase 2), then the
 * latest run's row is written. JSON goes through jansson, never by hand. */
#ifndef TF_EXPORT_H
#define TF_EXPORT_H

#include <stdio.h>

#include "archive.h"
#include "error.h"

enum tf_export_format { TF_EXPORT_CSV, TF_EXPORT_JSON, TF_EXPORT_T4, TF_EXPORT_KTCACHE };

struct tf_export_options {
    enum tf_export_format format;
    const char *kernel;       /* only this kernel; NULL: every kernel */
    const char *problem;      /* only problems of this name; NULL: every problem */
    const char *device;       /* only devices of this name, architecture or class key
                                 (backend/arch/name); NULL: every device */
    int run;                  /* only this run (0-based); -1: every run */
    const char *archive_path; /* named in the JSON and T4 metadata */
};

/* The format called `name` ("csv", "json", "t4", "kt-cache"), or -1. */
int tf_export_format_from_name(const char *name);
/* 0 if every filter of `o` names something `a` has; else -1 + err saying what
 * it has ("the archive has no kernel 'x'; it has: gemm, conv"). */
int tf_export_check(const struct tf_archive *a, const struct tf_export_options *o,
                    struct tf_error *err);
/* Write the selection to `out` in `o->format`. For t4 and kt-cache, -1 + err
 * if it spans more than one kernel, problem or device class, or is empty. */
int tf_export_write(const struct tf_archive *a, const struct tf_export_options *o, FILE *out,
                    struct tf_error *err);
/* The T4 metadata document of the selection (metadata-schema.json): the
 * devices, their tunefarm properties and the tunefarm versions of its runs. */
int tf_export_t4_metadata(const struct tf_archive *a, const struct tf_export_options *o,
                          FILE *out, struct tf_error *err);
/* Where the T4 metadata of results file `path` goes: "X.json" -> "X.metadata.json"
 * (any other name gets ".metadata.json" appended); into out[cap]. */
void tf_export_metadata_path(const char *path, char *out, size_t cap);
/* tf_export_write into `path`, atomically (path.tmp.PID, fsync, rename: a
 * reader sees the old file or the whole new one); for t4 the metadata file
 * too. Nothing is left behind on failure. */
int tf_export_to_path(const struct tf_archive *a, const struct tf_export_options *o,
                      const char *path, struct tf_error *err);

#endif
