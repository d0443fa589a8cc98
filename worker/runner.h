/* runner.h - the runner: a child process that owns the device and measures.
 *
 * The worker keeps one runner per device. A kernel that faults or hangs kills
 * only the runner; the worker side notices (EOF, deadline), records the status
 * and starts a fresh runner for the next configuration. Between the worker and
 * the runner sits a shield process (runner_shield.c), so a kernel that kills its
 * parent kills the shield and its runner, not the worker. */
#ifndef TF_RUNNER_H
#define TF_RUNNER_H

#include <stdint.h>
#include <sys/types.h>

#include "../schema/bundle.h"
#include "../schema/error.h"
#include "../schema/result.h"

struct tf_runner;

/* Spawn `exe __runner BACKEND ORDINAL` (posix_spawn, a socket pair on its
 * stdin/stdout), send it `bundle` and wait until it has loaded the job and
 * opened the device. The bundle is copied. -1 + err on failure. */
int tf_runner_start(const char *exe, const struct tf_bundle *bundle, const char *backend,
                    int ordinal, struct tf_runner **out, struct tf_error *err);
/* Measure configuration `config` of job kernel `kernel`, kernel problem `problem`,
 * from compiled `binary`, checked against the reference .so `reference`. Always
 * fills `out` with exactly one status (compile fields left unknown: the caller
 * adds them); returns non-zero (err filled, out crashed) only if no runner can
 * be (re)started. Deadline: the job's measure.timeout seconds; setting up a new
 * problem's buffers and reference is a separate request with its own generous
 * deadline. On a deadline the runner is SIGKILLed (status timeout); if it died,
 * status crashed names the signal; either way the next call starts a new one. */
int tf_runner_measure(struct tf_runner *r, uint32_t kernel, uint32_t problem, uint32_t phase,
                      uint64_t config, const char *binary, const char *reference,
                      struct tf_result *out, struct tf_error *err);
/* tf_runner_measure in two halves, so that the runner can hold the next
 * request while it measures one (runner.c, "two requests in flight"): send
 * a configuration's request (the problem set up first where it is not), and
 * later collect its result. At most two are in flight, collected in the
 * order sent; a second only where tf_runner_can_send says so (behind a
 * request the runner holds, same kernel, problem and reference), never
 * tf_runner_measure or tf_runner_prepare meanwhile. Each sent configuration
 * gets exactly one result, with tf_runner_measure's statuses and deadline
 * (which runs from when its collect starts waiting; if its runner died
 * before taking it, it is sent again to a new one). Both return non-zero (err filled,
 * out crashed) only if no runner can be (re)started; tf_runner_send has then
 * sent nothing. */
int tf_runner_send(struct tf_runner *r, uint32_t kernel, uint32_t problem, uint32_t phase,
                   uint64_t config, const char *binary, const char *reference,
                   struct tf_result *out, struct tf_error *err);
int tf_runner_collect(struct tf_runner *r, struct tf_result *out, struct tf_error *err);
/* 1 if a request for (kernel, problem, reference) may be sent now. */
int tf_runner_can_send(const struct tf_runner *r, uint32_t kernel, uint32_t problem,
                       const char *reference);
/* Requests sent and not collected (0-2). */
int tf_runner_pending(const struct tf_runner *r);
/* Set up (kernel, problem) in the runner now, sized for `config`: buffers,
 * inputs and the reference's outputs (what tf_runner_measure would otherwise
 * do first), so a caller can overlap it with compiling the first variant.
 * Nothing happens if that problem is already set up. out->status is ok or why
 * not; returns non-zero (err filled) only if no runner can be (re)started. */
int tf_runner_prepare(struct tf_runner *r, uint32_t kernel, uint32_t problem, uint64_t config,
                      const char *reference, struct tf_result *out, struct tf_error *err);
/* Sum of measured sample time, seconds (the GPU duty cycle's numerator). */
double tf_runner_device_seconds(const struct tf_runner *r);
/* Number of runner processes started so far (1 + restarts). */
int tf_runner_starts(const struct tf_runner *r);
/* The process the worker spawned: the runner's shield, leader of the process
 * group that holds it and the runner (its child); -1 if none is running
 * (tests stop and continue the group). */
pid_t tf_runner_pid(const struct tf_runner *r);
/* Stop the child cleanly, SIGKILL it if it lingers, free; accepts NULL. */
void tf_runner_destroy(struct tf_runner *r);
/* The hidden subcommand: argv = {exe, "__runner", BACKEND, ORDINAL}. Forks
 * the runner off and stays as its shield (never returns there: it exits as
 * the runner ended); the runner serves requests on stdin/stdout until stdin
 * closes and returns the exit status. */
int tf_runner_main(int argc, char **argv);

#endif
