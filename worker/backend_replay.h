/* backend_replay.h - a device that answers from measurements already made.
 *
 * `tunefarm run JOB --replay SOURCE [--speed X]` starts workers whose device
 * is a replay of SOURCE: a tunefarm archive or a Kernel Tuner cache file
 * (schema/ktcache.h). Each configuration the coordinator hands out is answered
 * with SOURCE's recorded status and time statistics, nothing is compiled or
 * run, and the coordinator cannot tell a replay worker from a GPU: every
 * strategy, budget and the whole farm run as they would on devices.
 *
 * Matching: every kernel of the job must describe the same parameters as
 * SOURCE (same names, same value sets; order may differ), else the run is
 * refused before anything starts (tf_replay_open names the difference). A
 * configuration SOURCE does not hold is `invalid` ("not in the replay
 * source"). An archive answers kernel K's problem P from its rows of kernel K
 * and problem P (the latest row of a configuration wins); the rows of every
 * job kernel must be of one device class, the replay's device (an archive
 * whose job kernels were measured on two classes, in one kernel or across
 * them, is refused); a Kernel Tuner cache has one kernel and problem and
 * answers every one.
 *
 * Simulated clock: each replay worker spends the recorded compile + benchmark
 * time of each configuration (archive: compile_time + device_time), divided
 * by the speed (--speed 100: 100 simulated seconds per real second; 0 or
 * `instant`: no waiting). Results are stamped with the simulated time. The
 * device is SOURCE's (KT cache: its device_name; archive: its device row),
 * backend `replay`, one per worker (uuid replay-N, N the worker's index among
 * its node's workers: distinct on a node, however many there are).
 *
 * The null source (`--replay null:`, TF_REPLAY_NULL) reads nothing: every
 * configuration of every job kernel is `ok`, with a time of 1 to 2 ms that
 * is a fixed function of its index and a simulated cost of nothing, from a
 * device named `null`. It measures the farm itself (bench/coordinator/
 * capacity.sh: the coordinator's results/s and memory with spaces of any
 * size); it is never chosen unless named. */
#ifndef TF_BACKEND_REPLAY_H
#define TF_BACKEND_REPLAY_H

#include <stdint.h>

#include "../schema/device.h"
#include "../schema/error.h"
#include "../schema/job.h"
#include "../schema/result.h"

struct tf_replay;

/* The SOURCE that names the null source (a name no file path is given as). */
#define TF_REPLAY_NULL "null:"

/* Load SOURCE and match every kernel of `job` against it. NULL + err (naming
 * SOURCE, the kernel and the mismatch) on failure. */
struct tf_replay *tf_replay_open(const char *source, const struct tf_job *job,
                                 struct tf_error *err);
/* Free; accepts NULL. */
void tf_replay_destroy(struct tf_replay *r);
/* The device a replay worker announces (ordinal: its uuid replay-N). */
void tf_replay_device(const struct tf_replay *r, int ordinal, struct tf_device *out);
/* Answer configuration `config` of job kernel `kernel`, problem `problem`
 * (kernel problem index): fill `out` (kernel, problem, config set; timestamp
 * not) and the simulated seconds it costs. */
void tf_replay_answer(const struct tf_replay *r, uint32_t kernel, uint32_t problem,
                      uint64_t config, struct tf_result *out, double *cost_s);

/* The replay this process serves (NULL: none). While one is set, the replay
 * backend is the only one a worker offers; `speed` as above (0: instant). */
void tf_replay_set_active(struct tf_replay *r, double speed);
struct tf_replay *tf_replay_active(void);
double tf_replay_speed(void);

#endif
