/* diffcmd.h - the `tunefarm diff` command: options, archive and journal, exit code.
 *
 * The comparison itself is schema/diff.c; this is the command around it. */
#ifndef TF_DIFFCMD_H
#define TF_DIFFCMD_H

/* `tunefarm diff --help`. */
extern const char tf_diff_usage[];

/* `tunefarm diff ARCHIVE [--run A] [--run B] [--tolerance F] [-o FILE]` with
 * argv[1] "diff": 0 no regression, 1 a regression, 2 an error (bad
 * arguments, an unreadable archive or journal, no two runs to compare, a
 * report file that cannot be written). */
int tf_diff_command(int argc, char **argv);

#endif
