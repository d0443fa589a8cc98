/* space_tool.h - `tunefarm space`: count, list and sample a kernel's parameter
 * space on a nominal device, with no device and no job (an authoring tool over
 * schema/kernel and schema/space; see space_tool.c). */
#ifndef TF_SPACE_TOOL_H
#define TF_SPACE_TOOL_H

/* The usage text of `tunefarm space` (for `tunefarm help space`). */
extern const char tf_space_tool_usage[];

/* Run `tunefarm space` with main's argv (argv[1] is "space"). Returns the exit
 * code: 0 done, 2 bad arguments or kernel file (or a constraint that cannot be
 * evaluated), 1 output could not be written, 75 stopped by SIGINT / SIGTERM. */
int tf_space_tool_main(int argc, char **argv);

#endif
