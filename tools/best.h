/* best.h - `tunefarm best`: a kernel's best configuration per problem and
 * device class, for a build: a C header of #defines selected by device, JSON,
 * or a Makefile fragment of the -D flags tunefarm compiled it with (best.c). */
#ifndef TF_BEST_H
#define TF_BEST_H

#include <stdio.h>

#include "../schema/archive.h"

/* The usage text of `tunefarm best` (for `tunefarm help best`). */
extern const char tf_best_usage[];

enum tf_best_format { TF_BEST_HEADER, TF_BEST_JSON, TF_BEST_MAKE };

/* Write the best configurations of kernel `ak` of archive `a` (read from
 * `archive_path`, named in the output), of problem `problem` only (-1: every
 * problem) and of run `run` (-1: every run), in `format` to `out`. Returns
 * the number of (problem, class) groups with a configuration that ran ok;
 * the groups without one are in the output, marked, and named on stderr. */
int tf_best_write(const struct tf_archive *a, const char *archive_path,
                  const struct tf_archive_kernel *ak, int problem, int run,
                  enum tf_best_format format, FILE *out);

/* Run `tunefarm best` with main's argv (argv[1] is "best"). Returns the exit
 * code: 0 written, 1 the output could not be written, 2 bad arguments or
 * archive, 3 no configuration of the selection ran ok (nothing written). */
int tf_best_main(int argc, char **argv);

#endif
