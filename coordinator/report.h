/* report.h - the tables users read: the end-of-run summary and `tunefarm query`. */
#ifndef TF_REPORT_H
#define TF_REPORT_H

#include <stdio.h>

#include "../schema/archive.h"

/* Print, for each kernel x problem x device class of the archive's rows (of run
 * `run` only, or of every run if run < 0): the best configuration, its time and
 * metrics, its speedup over that problem's default configuration and counts by
 * status; then, where the compiler said anything of them (registers, spills,
 * warnings), a table of that for each best. `kernel` (NULL: all) restricts to
 * one kernel. Returns the number of lines of the first table. */
int tf_report_best(const struct tf_archive *a, int run, const char *kernel, FILE *out);
/* For each kernel x problem measured on two or more device classes: each
 * class's best configuration, and that configuration's time on every class
 * with the ratio to that class's own best (1.00x: it is the best there too),
 * or why it has no time there (a failure status, or not measured). Same
 * selection of rows as tf_report_best. Returns the number of table lines. */
int tf_report_cross(const struct tf_archive *a, int run, const char *kernel, FILE *out);
/* Write a duration in seconds with a readable unit ("1.23 ms") into `out`. */
void tf_format_seconds(double s, char *out, int cap);
/* Write "P1=v1 P2=v2 ..." of configuration `config` of archived kernel `ak`,
 * leaving out parameters with a single value (all of them shown when every
 * parameter has one); the archive keeps them all. */
void tf_report_format_config(const struct tf_archive_kernel *ak, uint64_t config, char *out,
                             int cap);

#endif
