/* tools/exchange_tool.h - the `export` and `import` subcommands (main.c routes them). */
#ifndef TF_CMD_EXCHANGE_H
#define TF_CMD_EXCHANGE_H

/* Their --help texts. */
extern const char tf_usage_export[];
extern const char tf_usage_import[];

/* `tunefarm export ARCHIVE --format F [...]` (argv[1] is "export"); returns the exit code. */
int tf_cmd_export(int argc, char **argv);
/* `tunefarm import ARCHIVE FILE... [...]` (argv[1] is "import"); returns the exit code. */
int tf_cmd_import(int argc, char **argv);

#endif
