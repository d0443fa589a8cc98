/* worker.h - a worker rank: one device, a compile pool and a runner. */
#ifndef TF_WORKER_H
#define TF_WORKER_H

#include "../schema/device.h"
#include "../schema/error.h"

/* Run the worker side of `tunefarm run` on this rank; `exe` is this binary (for
 * the runner), `local_index` this worker's index among the workers of its node
 * (it picks the device). With `compile_rank`, the rank takes no device and
 * only compiles ahead for the device ranks (COMPILE). Returns an exit code. */
int tf_worker_run(const char *exe, int local_index, int compile_rank);
/* List the devices this node offers (every probed backend), GPUs first, host
 * last. Fills up to `max` and returns the count; `backend_of[i]` names the
 * backend and `ordinal_of[i]` the device number inside it. Probe failures are
 * reported through `why` (one line per backend, may be NULL). */
int tf_worker_devices(struct tf_device *devs, const char **backend_of, int *ordinal_of, int max,
                      char *why, int why_cap);

#endif
