/* worker.h - a worker rank: one device, a compile pool and a runner. */
#ifndef TF_WORKER_H
#define TF_WORKER_H

#include "../schema/device.h"
#include "../schema/error.h"

#include <stddef.h>

/* The ranks of one node, as main.c gathers them before any of them has the
 * job: `n` ranks, this one is `me`; role[i] says what rank i is and
 * device_index[i] its index among the node's device workers (the device it
 * takes, tf_worker_devices order; -1 for the other roles); rank i's affinity
 * mask is masks + i * mask_bytes (bit c of byte c/8 = CPU c, as cpu_set_t). */
enum tf_node_role { TF_NODE_NONE = 0, TF_NODE_DEVICE, TF_NODE_COMPILE };
struct tf_worker_node {
    int n, me;
    const int *role, *device_index;
    const unsigned char *masks;
    size_t mask_bytes;
};

/* Run the worker side of `tunefarm run` on this rank; `exe` is this binary (for
 * the runner). `node` (NULL: a rank alone, every allowed CPU its own) says
 * which device it takes (TF_NODE_DEVICE) or that it only compiles ahead for
 * the device ranks (TF_NODE_COMPILE), and sizes its compile pool to its share
 * of the node's CPUs (tf_worker_node_pools, tf_worker_cpu_share). Returns an
 * exit code. */
int tf_worker_run(const char *exe, const struct tf_worker_node *node);

/* What pool each rank of `node` has once the job is known, into pools[0..n):
 * TF_POOL_OWN for a compile rank and for a device worker whose device the job
 * targets (the node's devices `devs`, taken by device_index modulo `ndev` as
 * every worker takes them), TF_POOL_HELPER for a device worker whose device it
 * does not target (it can only compile ahead for others), TF_POOL_NONE for the
 * rest. With devs NULL (a compile rank, which probes no device) every device
 * worker counts as TF_POOL_OWN. */
enum { TF_POOL_NONE = 0, TF_POOL_OWN, TF_POOL_HELPER };
struct tf_job;
void tf_worker_node_pools(const struct tf_worker_node *node, const struct tf_job *job,
                          const struct tf_device *devs, int ndev, int *pools);
/* How many CPUs rank `me` of a node may fill with compilers when the node's
 * ranks share them (`pools[i]`: TF_POOL_*; `masks`: n affinity masks of
 * `mask_bytes` bytes each). A CPU that k TF_POOL_OWN pools hold counts 1/k to
 * each of them, so two pools on the same CPUs get half each instead of all of
 * them twice; for these the share is rounded, at least 1. A helper gets only
 * CPUs that no TF_POOL_OWN pool holds, split the same way among the helpers
 * holding them, rounded, possibly 0: beside a measuring pool, a helper that
 * compiles the back of its queue splits it in two and is slower than the one
 * pool sized to all the CPUs (bench/results/pools-2026-11-27-h200.md). */
int tf_worker_cpu_share(const unsigned char *masks, size_t mask_bytes, const int *pools, int n,
                        int me);
/* List the devices this node offers (every probed backend), GPUs first, host
 * last. Fills up to `max` and returns the count; `backend_of[i]` names the
 * backend and `ordinal_of[i]` the device number inside it. Probe failures are
 * reported through `why` (one line per backend, may be NULL). */
int tf_worker_devices(struct tf_device *devs, const char **backend_of, int *ordinal_of, int max,
                      char *why, int why_cap);

#endif
