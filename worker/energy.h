/* energy.h - a launch's energy from a coarse cumulative energy counter.
 *
 * A device's energy counter (NVML's total energy, ROCm SMI's energy count,
 * RAPL's energy_uj) only moves when the device's firmware or driver updates
 * it: every 20-100 ms on recent NVIDIA GPUs, about every millisecond for RAPL.
 * Read around samples that take less than that, it shows nothing at all, and
 * read around anything not much longer it is off by up to one update period.
 * So the energy gets its own window after the samples: the variant runs back
 * to back in small batches, the counter is read once per batch while the
 * device runs (on a GPU two batches are queued, so the device never waits
 * for the host's turn between them, and a batch lasts longer than a
 * reading), and the launches between two updates of the counter (the first
 * one seen, and the first one at least `window` seconds of launches later)
 * share the energy between those two updates. An update is attributed to the
 * launches finished when it was seen, which is off by about one batch at
 * either end (a little more when the host's turn came late), so batches are
 * small against the window. When no such window can be found in
 * the time allowed, or the device has no counter, the result says which: a
 * missing energy is never a silent NaN.
 *
 * Device-independent: launches, counter and clock come from callbacks, so the
 * rule is unit-tested with scripted counters and runs unchanged on every
 * backend (the runner wires it to the backend's enqueue/collect and energy). */
#ifndef TF_ENERGY_H
#define TF_ENERGY_H

#include <stdint.h>

#include "../schema/error.h"

/* Where the window's launches and readings come from. */
struct tf_energy_ops {
    /* Start `n` (1..TF_MAX_BATCH) back-to-back launches of the variant, no
     * cache flush. Returns an enum tf_status (err filled when not ok). With
     * `queued` set it returns while they run (a GPU), behind the batch
     * started before if that one is not finished yet (two at most), else
     * once they ran. After a failure no batch is started any more. */
    int (*start)(void *ctx, int n, struct tf_error *err);
    /* Wait for the oldest batch `start` began; its device seconds, summed,
     * into *seconds. Returns a status; after a failure no batch is started
     * any more (the device lost the later one with it). */
    int (*finish)(void *ctx, double *seconds, struct tf_error *err);
    /* The device's cumulative energy, joules: 0; 1 if the device has no
     * counter (err says why); -1 if this reading failed (err says why). */
    int (*read)(void *ctx, double *joules, struct tf_error *err);
    /* A monotonic clock, seconds: the time limit. */
    double (*now)(void *ctx);
    void *ctx;
    int queued;
};
/* What the window must reach. */
struct tf_energy_plan {
    double window;      /* device seconds of launches between the two updates, at least */
    double launch_s;    /* one launch's device time (the samples' median); <= 0: unknown */
    double batch_s;     /* device seconds per batch, about (one counter reading each) */
    int min_batches;    /* batches between the two updates, at least: the attribution is
                           off by about one batch at each end */
    double limit_s;     /* wall seconds after which no window is found: no_window */
};

/* The window, and what became of it. */
struct tf_energy_result {
    int status;         /* enum tf_energy_status: measured, no_counter, counter_error or
                           no_window */
    double joules;      /* one launch's energy, J (NaN unless measured) */
    uint64_t launches;  /* launches between the two updates */
    double window_s;    /* their device seconds */
    int updates;        /* updates of the counter seen */
    double busy_s;      /* device seconds of every launch the window ran */
    char why[256];      /* unless measured: what happened, for the runner's log */
};

/* How many times a counter reading's duration a batch lasts, at least,
 * where batches run one at a time (a host kernel): the reading is between
 * them, so it costs against the batch. */
#define TF_ENERGY_READ_COVER 2.0
/* The same where two batches are queued (a GPU): the device runs them while
 * the counter is read and the host takes its turn, so a batch need only
 * outlast a reading with some room for that turn. NVML's reading took 5 ms
 * on an H200; with one batch queued at a time and batches as long as a
 * reading, 127 of a window's 299 ms were idle
 * (bench/results/feed-2026-11-28-h200.md). */
#define TF_ENERGY_READ_COVER_QUEUED 1.5
/* Launches per batch for `p` when a reading of the counter takes `read_s`
 * seconds and `in_flight` batches are queued at once (1 or 2): about
 * max(batch_s, cover x read_s) of device time, but no more than lets
 * min_batches of them fill half of limit_s; at least one launch, at most
 * TF_MAX_BATCH. */
int tf_energy_batch(const struct tf_energy_plan *p, double read_s, int in_flight);
/* Run the window of `p` through `ops` into `out`. Returns an enum tf_status:
 * ok (out says whether there is an energy, and why not), or a launch's
 * failure with err filled: the variant failed while the window ran it, which
 * is the configuration's result like a failure in its samples (out->busy_s
 * then leaves out the batches the device lost with it). */
int tf_energy_measure(const struct tf_energy_plan *p, const struct tf_energy_ops *ops,
                      struct tf_energy_result *out, struct tf_error *err);

#endif
