/* energy.c - a launch's energy from a coarse cumulative energy counter (energy.h).
 *
 * The loop: start a batch, read the counter (on a GPU while the batch runs,
 * so the device never waits for the reading), finish the batch. A reading
 * that differs from the one before is an update of the counter, seen when
 * the launches finished so far are done (queued: the ones before this batch;
 * not queued: this batch too). The first update opens the window; the first
 * later one with at least `window` device seconds and `min_batches` batches
 * of launches since closes it, and one launch's energy is the counter's
 * difference divided by the launches between them. Each end is late by less
 * than one batch, the same way, so the error is under one batch against
 * `min_batches` of them, and nothing is biased. A counter that goes backwards
 * is an error (the sources unwrap theirs: rapl.c); one that does not move
 * twice before `limit_s` gives no window, and so do launches so long that
 * the window cannot fit in `limit_s` (then none is run). */
#include "energy.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../schema/result.h"
#include "../schema/status.h"
#include "backend.h"

int tf_energy_batch(const struct tf_energy_plan *p, double read_s)
{
    double batch_s = p->batch_s;
    if (read_s > 0) { /* no longer than half the time allowed leaves for min_batches of them */
        const double fit = 0.5 * p->limit_s / (p->min_batches > 0 ? p->min_batches : 1);
        batch_s = fmax(batch_s, fmin(TF_ENERGY_READ_COVER * read_s, fit));
    }
    if (!(p->launch_s > 0) || !(batch_s > 0))
        return 1;
    const double n = floor(batch_s / p->launch_s);
    return n < 1 ? 1 : n > TF_MAX_BATCH ? TF_MAX_BATCH : (int)n;
}

int tf_energy_measure(const struct tf_energy_plan *p, const struct tf_energy_ops *ops,
                      struct tf_energy_result *out, struct tf_error *err)
{
    memset(out, 0, sizeof *out);
    out->joules = NAN;
    out->status = TF_ENERGY_NO_WINDOW;
    struct tf_error why = {0};
    double last;
    const double read_at = ops->now(ops->ctx);
    int rc = ops->read(ops->ctx, &last, &why);
    /* How long a batch must run to cover a reading: the slowest so far (the
     * first, made before any launch, then each one made while a batch ran).
     * Sized from the first alone, an H200's windows still idled 63-73 ms of
     * about 300: later readings were slower than the first. */
    double read_s = ops->now(ops->ctx) - read_at;
    if (rc != 0) {
        out->status = rc > 0 ? TF_ENERGY_NO_COUNTER : TF_ENERGY_COUNTER_ERROR;
        tf_strlcpy(out->why, why.message, sizeof out->why);
        return TF_STATUS_OK;
    }
    const uint64_t min_batches = (uint64_t)(p->min_batches > 0 ? p->min_batches : 1);
    int b = tf_energy_batch(p, read_s);
    uint64_t min_launches = min_batches * (uint64_t)b;
    /* Launches too long for the time allowed: say so before running any. */
    const double need = fmax(p->window, p->launch_s > 0 ? (double)min_launches * p->launch_s : 0);
    if (need > p->limit_s) {
        snprintf(out->why, sizeof out->why,
                 "a window of %.3g s of launches (%llu at least, of %.3g s each) does not fit "
                 "the %.3g s allowed",
                 need, (unsigned long long)min_launches, p->launch_s, p->limit_s);
        return TF_STATUS_OK;
    }
    const double t0 = ops->now(ops->ctx);
    uint64_t done = 0;   /* launches finished */
    double done_s = 0;   /* their device seconds */
    bool open = false;   /* the first update was seen: the window is open */
    double open_j = 0, open_s = 0;
    uint64_t open_l = 0;
    while (ops->now(ops->ctx) - t0 <= p->limit_s) {
        const int ran = b; /* this batch's launches (b may grow below) */
        int status = ops->start(ops->ctx, ran, err);
        if (status != TF_STATUS_OK)
            return status;
        /* What the device has finished when the counter is read. */
        const uint64_t seen_l = ops->queued ? done : done + (uint64_t)ran;
        double now_j = 0, secs = 0;
        const double reading = ops->now(ops->ctx);
        rc = ops->read(ops->ctx, &now_j, &why);
        const double took = ops->now(ops->ctx) - reading;
        status = ops->finish(ops->ctx, &secs, err);
        if (status != TF_STATUS_OK)
            return status;
        if (took > read_s) { /* longer batches from now on; the bound keeps the longest */
            read_s = took;
            b = tf_energy_batch(p, read_s);
            if (min_batches * (uint64_t)b > min_launches)
                min_launches = min_batches * (uint64_t)b;
        }
        const double seen_s = ops->queued ? done_s : done_s + secs;
        done += (uint64_t)ran;
        done_s += secs;
        out->busy_s = done_s;
        if (rc != 0) {
            out->status = TF_ENERGY_COUNTER_ERROR;
            snprintf(out->why, sizeof out->why, "reading %d: %.200s", out->updates + 1,
                     why.message);
            return TF_STATUS_OK;
        }
        if (now_j < last) {
            out->status = TF_ENERGY_COUNTER_ERROR;
            snprintf(out->why, sizeof out->why,
                     "the energy counter went backwards, from %.6f J to %.6f J", last, now_j);
            return TF_STATUS_OK;
        }
        if (now_j == last)
            continue;
        last = now_j;
        out->updates++;
        if (!open) {
            open = true;
            open_j = now_j;
            open_l = seen_l;
            open_s = seen_s;
            continue;
        }
        if (seen_s - open_s >= p->window && seen_l - open_l >= min_launches) {
            out->status = TF_ENERGY_MEASURED;
            out->launches = seen_l - open_l;
            out->window_s = seen_s - open_s;
            out->joules = (now_j - open_j) / (double)out->launches;
            return TF_STATUS_OK;
        }
    }
    snprintf(out->why, sizeof out->why,
             "the energy counter moved %d time%s over %llu launches (%.3g s of them) in the "
             "%.3g s allowed: no %.3g s window of %llu launches between two of its updates",
             out->updates, out->updates == 1 ? "" : "s", (unsigned long long)done, done_s,
             p->limit_s, p->window, (unsigned long long)min_launches);
    return TF_STATUS_OK;
}
