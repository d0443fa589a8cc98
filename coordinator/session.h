/* session.h - what a run records about how it was made, session by session.
 *
 * A run is one invocation of a job on an archive, continued by the
 * invocations that resume it; each invocation is a session (archive
 * /sessions). Per run the archive keeps the job's search and measurement
 * settings (/runs) and each kernel's source hash (/run_kernels); per session
 * what every device ran with: driver, runtime, compiler and tunefarm
 * versions, clock and power settings (/session_devices). A run measured by
 * two different software stacks would mix two things under one name, so an
 * unfinished run is resumed only where the software is the same (see
 * tf_session_may_resume); settings that changed between its sessions are
 * recorded and shown by `status` and `diff`. */
#ifndef TF_SESSION_H
#define TF_SESSION_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "../schema/archive.h"
#include "../schema/job.h"

/* Fill `run`'s job settings (strategy, seed, budget, search, measure, screen) from `job`. */
void tf_session_run_settings(struct tf_archive_run *run, const struct tf_job *job);
/* Append a session of run `run` that starts now, by this process (its host,
 * tunefarm version, command line `command`, Slurm job id from the
 * environment, `ranks` ranks); returns its index. */
uint32_t tf_session_begin(struct tf_archive *a, uint32_t run, const char *command,
                          uint32_t ranks);
/* 1 if unfinished run `run` may be resumed by a coordinator of version
 * `version` whose workers have devices `devs[0..n)`: no device has a class
 * the run measured on with software (driver, runtime, compiler, tunefarm
 * versions) other than the run's there, and the coordinator's version is the
 * run's. Else 0, and `why` says what differs ("the driver of NVIDIA H100 on
 * gpu01 is 580.159.04; run 3 measured with 580.65.06"). A run of an archive
 * older than /session_devices records no software: only the version is checked. */
int tf_session_may_resume(const struct tf_archive *a, uint32_t run, const char *version,
                          const struct tf_device *devs, int n, char *why, size_t cap);
/* For `tunefarm status`: if run `run` has more than one session, one line per
 * session (start, end or how it ended, Slurm job, host) and one per device
 * whose versions or settings changed from one session to the next, each
 * indented by `indent`. Nothing for a run of one session or none. */
void tf_session_print(const struct tf_archive *a, uint32_t run, const char *indent, FILE *out);

#endif
