/* report.h - the tables users read: the end-of-run summary and `tunefarm query`. */
#ifndef TF_REPORT_H
#define TF_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "../schema/archive.h"

/* A group is the rows of one kernel, problem and device class (key
 * "backend/arch/name"), of one run or of every run (run < 0). Its best, as
 * `query`, the summary, `tunefarm best` and `tunefarm report` all show it, is
 * the lowest median time among its `ok` rows; where the group has strict
 * re-measurements (phase 2 of a two-phase search) only they decide, and its
 * screening rows (phase 1, a cheaper protocol) do not. */
struct tf_report_pick {
    const struct tf_archive_row *best;  /* the row that decides; NULL if nothing ran ok */
    const struct tf_device *device;     /* the first row's device; NULL if the group is empty */
    bool strict;                        /* the group has phase-2 rows */
    double default_time;                /* the problem's default configuration's time
                                           (tf_report_config_time); NaN if unknown */
};

/* Print, for each kernel x problem x device class of the archive's rows (of run
 * `run` only, or of every run if run < 0): the best configuration, its time and
 * metrics, its speedup over that problem's default configuration, counts by
 * status (`ok/total`: configurations, each once with the status of its latest
 * measurement, however many runs measured it) and how many ok rows are noisy;
 * then, where the compiler said anything of them (registers, spills,
 * warnings), a table of that for each best. `kernel` (NULL: all) restricts to
 * one kernel. Returns the number of lines of the first table. */
int tf_report_best(const struct tf_archive *a, int run, const char *kernel, FILE *out);
/* For each kernel x problem measured on two or more device classes: each
 * class's best configuration, and that configuration's time on every class
 * with the ratio to that class's own best (1.00x: it is the best there too),
 * or why it has no time there (a failure status, or not measured). Same
 * selection of rows as tf_report_best. Returns the number of table lines. */
int tf_report_cross(const struct tf_archive *a, int run, const char *kernel, FILE *out);
/* The archive's kernels that have rows (an entry without rows, left by a run
 * that measured nothing of it, is not a kernel of the archive's results). */
int tf_report_kernels_with_rows(const struct tf_archive *a);
/* One line naming run `run` (in range): job, job hash, start, end or
 * UNFINISHED, Slurm job, replay source. */
void tf_report_run_line(const struct tf_archive *a, int run, FILE *out);
/* The device classes of kernel `ak`'s rows of `problem` (of run `run`, or of
 * every run if run < 0), in the order of their first rows; at most `max`.
 * Returns how many. */
int tf_report_classes(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                      uint32_t problem, int run, char (*keys)[256], int max);
/* The same, all of them (*n), in an array the caller frees. */
char (*tf_report_classes_all(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                             uint32_t problem, int run, int *n))[256];
/* The best of the group (kernel `ak`, `problem`, `run`, class `class_key`) into *out. */
void tf_report_pick(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                    uint32_t problem, int run, const char *class_key, struct tf_report_pick *out);
/* The time of configuration `config` in the group: its fastest ok median among
 * its strict and single-phase rows (those a best is chosen from), else among
 * its screening rows (screened, not re-measured); NaN if it never ran ok there. *row (when not NULL) gets
 * that row, else its first failing row (whose status says why), else NULL
 * (the group never measured it). */
double tf_report_config_time(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                             uint32_t problem, int run, const char *class_key, uint64_t config,
                             const struct tf_archive_row **row);
/* Two lines on the ok rows of the same selection as tf_report_best: how many
 * are noisy (their spread stayed above max_noise when max_time or
 * max_samples ended them) and how many have their energy, with the reasons
 * of the others by count. Nothing if there is no ok row. Returns the lines. */
int tf_report_quality(const struct tf_archive *a, int run, const char *kernel, FILE *out);
/* Write a duration in seconds with a readable unit ("1.23 ms") into `out`. */
void tf_format_seconds(double s, char *out, int cap);
/* Write "P1=v1 P2=v2 ..." of configuration `config` of archived kernel `ak`,
 * leaving out parameters with a single value (all of them shown when every
 * parameter has one); the archive keeps them all. */
void tf_report_format_config(const struct tf_archive_kernel *ak, uint64_t config, char *out,
                             int cap);

#endif
