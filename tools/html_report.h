/* html_report.h - `tunefarm report`: one self-contained HTML page of charts
 * of an archive (inline SVG, no script, nothing loaded from anywhere), per
 * kernel, problem and device class (html_report.c, tools/report.md). */
#ifndef TF_HTML_REPORT_H
#define TF_HTML_REPORT_H

#include <stdio.h>

#include "../schema/archive.h"

/* The usage text of `tunefarm report` (for `tunefarm help report`). */
extern const char tf_html_report_usage[];

/* What a report found, for the command's closing line and for tests. */
struct tf_html_report_stats {
    int kernels, groups;      /* kernels and (kernel, problem, class) groups shown */
    int charts;               /* <svg> charts written */
    int regressions;          /* run-to-run regressions marked on trend charts */
    int pareto_points;        /* points on time-energy Pareto fronts */
};

/* Write the page for archive `a` (read from `archive_path`, named on the
 * page), of kernel `kernel` only (NULL: every kernel with rows), to `out`. */
void tf_html_report_write(const struct tf_archive *a, const char *archive_path,
                          const char *kernel, FILE *out, struct tf_html_report_stats *stats);

/* Run `tunefarm report` with main's argv (argv[1] is "report"). Returns the
 * exit code: 0 written, 1 the output could not be written, 2 bad arguments
 * or archive. */
int tf_html_report_main(int argc, char **argv);

#endif
