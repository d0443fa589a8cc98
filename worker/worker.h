/* worker.h - a worker rank: one device, a compile pool and a runner. */
#ifndef TF_WORKER_H
#define TF_WORKER_H

#include "../schema/device.h"
#include "../schema/error.h"

#include <stddef.h>

/* Run the worker side of `tunefarm run` on this rank; `exe` is this binary (for
 * the runner), `local_index` this worker's index among the workers of its node
 * (it picks the device). With `compile_rank`, the rank takes no device and
 * only compiles ahead for the device ranks (COMPILE). `cpu_share` is this
 * rank's share of its node's CPUs (tf_worker_cpu_share), which sizes its
 * compile pool; 0 = no share known, all its allowed CPUs. Returns an exit code. */
int tf_worker_run(const char *exe, int local_index, int compile_rank, int cpu_share);
/* How many CPUs rank `me` of a node may fill with compilers when the node's
 * ranks share them: each CPU in its mask counts 1/k, k = the ranks with a
 * compile pool (`pools[i]` non-zero) whose masks hold that CPU; rounded, at
 * least 1. `masks` holds n affinity masks of `mask_bytes` bytes each (bit c of
 * byte c/8 = CPU c, as cpu_set_t on Linux). Two pools on the same CPUs then
 * get half each instead of all of them twice. */
int tf_worker_cpu_share(const unsigned char *masks, size_t mask_bytes, const int *pools, int n,
                        int me);
/* List the devices this node offers (every probed backend), GPUs first, host
 * last. Fills up to `max` and returns the count; `backend_of[i]` names the
 * backend and `ordinal_of[i]` the device number inside it. Probe failures are
 * reported through `why` (one line per backend, may be NULL). */
int tf_worker_devices(struct tf_device *devs, const char **backend_of, int *ordinal_of, int max,
                      char *why, int why_cap);

#endif
