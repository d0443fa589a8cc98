/* compiler.h - a compiler child process and the worker's handle on it.
 *
 * In-process compilers (NVRTC, hipRTC) serialise inside a process, so the
 * compile pool gives each of its slots a persistent child `exe __compiler
 * BACKEND` that runs backend->compile on request. A child that crashes or
 * hangs costs one variant; the next request starts a fresh one. */
#ifndef TF_COMPILER_H
#define TF_COMPILER_H

#include <stdint.h>
#include <sys/types.h>

#include "../schema/error.h"
#include "backend.h"

struct tf_compiler;

/* A handle on a not yet started child `exe __compiler backend` (both copied). */
struct tf_compiler *tf_compiler_create(const char *exe, const char *backend);
/* The data size (RLIMIT_DATA, bytes) the children started from now on get,
 * 0 for none (the default). The child sets it on itself before it compiles,
 * and the compilers it spawns (the host backend's cc, cc1, as, ld) inherit it:
 * a kernel whose source makes the compiler allocate without end (#include
 * "/dev/zero", a macro bomb) fails alone, with the compiler's "out of memory",
 * instead of taking the node's memory from the runner, the other compilers
 * and the coordinator until the OOM killer picks someone. */
void tf_compiler_set_memory_limit(struct tf_compiler *c, uint64_t bytes);
/* The limit a pool of `nprocs` compiler processes gives each: the
 * TUNEFARM_COMPILE_MEMORY environment variable (MiB; 0: none) if it is set,
 * else half of the node's memory shared among them, at least
 * TF_COMPILER_MEMORY_MIN; none (0) in an AddressSanitizer build, whose
 * shadow memory the limit would count. 0, or -1 + err when the variable is
 * not a number. */
#define TF_COMPILER_MEMORY_MIN (UINT64_C(2) << 30)
int tf_compiler_memory_limit(int nprocs, uint64_t *bytes, struct tf_error *err);
/* Close the child's channel, let it exit (SIGKILL its process group if it
 * lingers), reap it and free; accepts NULL. */
void tf_compiler_destroy(struct tf_compiler *c);
/* A new NULL-terminated copy of `env` for a compiler child: CUDA_VISIBLE_DEVICES
 * set empty (no GPU), everything else as it is. Free the array, not its strings. */
char **tf_compiler_environment(char *const *env);
/* Where libtunefarm-nocuda.so is for the executable `exe`: its build/ folder,
 * ../lib/tunefarm, else TF_LIB_DIR. 0 and `path` filled, -1 if none is readable. */
int tf_compiler_find_nocuda(const char *exe, char *path, size_t cap);
/* In a compiler process, before NVRTC runs: load libtunefarm-nocuda.so
 * (tf_compiler_find_nocuda), so that NVRTC's dlopen("libcuda.so.1") gets a
 * driver without devices (nocuda.c). 0 when loaded, -1 when not found (NVRTC
 * then opens the real driver). */
int tf_compiler_hide_driver(const char *exe);
/* Spawn the child unless one is running, with a folder of its own as TMPDIR
 * (made under the worker's; removed with what is in it when the child ends,
 * so a compile killed at its deadline leaves no file behind). -1 + err if it
 * cannot be spawned. */
int tf_compiler_start(struct tf_compiler *c, struct tf_error *err);
/* Compile `in` in the child (started if needed) within `deadline` seconds. 0: `out`
 * is filled (a binary written, or a rejected variant with its log; caller frees
 * out->log) and *seconds is the compile time the child measured. -1 + err for
 * failures of the machinery, which say nothing about the variant: the child
 * cannot be spawned, the backend's compile() failed, the child died ("compiler
 * process crashed (signal N)") or overran the deadline ("compiler timed out",
 * killed); in the last two cases the next call starts a new child. */
int tf_compiler_compile(struct tf_compiler *c, const struct tf_compile_input *in, double deadline,
                        struct tf_compile_output *out, double *seconds, struct tf_error *err);
/* The running child's pid, or -1 if none is running. */
pid_t tf_compiler_pid(const struct tf_compiler *c);
/* Children started so far (first start and restarts). */
int tf_compiler_starts(const struct tf_compiler *c);

/* The child's request loop for `be` on stdin/stdout, until stdin closes;
 * returns the exit status. tf_compiler_main calls it; tests may pass their own
 * backend table. */
int tf_compiler_serve(const struct tf_backend *be);
/* The hidden subcommand: argv = {exe, "__compiler", BACKEND [, DATA_LIMIT_BYTES]};
 * returns the exit status. */
int tf_compiler_main(int argc, char **argv);

#endif
