/* t1_tool.h - `tunefarm import-t1`: a kernel folder (kernel.yaml, job.yaml,
 * the source, a reference) from a T1 file, the autotuning community's input
 * format that Kernel Tuner reads (an authoring tool over schema/kernel and
 * tools/t1_expr; see t1_tool.c and schema/kernel.md). */
#ifndef TF_T1_TOOL_H
#define TF_T1_TOOL_H

/* The usage text of `tunefarm import-t1` (for `tunefarm help import-t1`). */
extern const char tf_t1_tool_usage[];

/* Run `tunefarm import-t1` with main's argv (argv[1] is "import-t1"). Returns
 * the exit code: 0 written, 1 a file could not be written, 2 bad arguments,
 * a file that is not a T1 file, something not translated (without
 * --partial), or written files that do not load. */
int tf_t1_tool_main(int argc, char **argv);

#endif
