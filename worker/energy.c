/* energy.c - a launch's energy from a coarse cumulative energy counter (energy.h).
 *
 * The loop: start batches until two are queued (one where launches run
 * synchronously), read the counter (on a GPU while they run, so the device
 * never waits for the reading), finish the oldest. A reading that differs
 * from the one before is an update of the counter, seen when the launches
 * finished so far are done (queued: the batches finished before the
 * reading; not queued: the one just run too). The first update opens the
 * window; the first later one with at least `window` device seconds and
 * `min_batches` batches of launches since closes it, and one launch's energy
 * is the counter's difference divided by the launches between them. Each end
 * is late by about one batch, the same way, so the error is about one batch
 * against `min_batches` of them, and nothing is biased. The batch still
 * queued when the window closes is waited for (its launches are device time)
 * before the next configuration's launches. A counter that goes backwards
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

int tf_energy_batch(const struct tf_energy_plan *p, double read_s, int in_flight)
{
    double batch_s = p->batch_s;
    if (read_s > 0) { /* no longer than half the time allowed leaves for min_batches of them */
        const double cover = in_flight > 1 ? TF_ENERGY_READ_COVER_QUEUED : TF_ENERGY_READ_COVER;
        const double fit = 0.5 * p->limit_s / (p->min_batches > 0 ? p->min_batches : 1);
        batch_s = fmax(batch_s, fmin(cover * read_s, fit));
    }
    if (!(p->launch_s > 0) || !(batch_s > 0))
        return 1;
    const double n = floor(batch_s / p->launch_s);
    return n < 1 ? 1 : n > TF_MAX_BATCH ? TF_MAX_BATCH : (int)n;
}

/* The batches started and not finished, oldest first (at most two). */
struct energy_queue {
    int launches[2];
    int n;
};
_Static_assert(TF_MAX_QUEUED_BATCHES >= 2, "the energy window queues two batches on a GPU");

/* Finish the oldest started batch: its launches into *ran, their device
 * seconds into *secs. Returns the batch's status. */
static int energy_finish_oldest(const struct tf_energy_ops *ops, struct energy_queue *q,
                                int *ran, double *secs, struct tf_error *err)
{
    *ran = q->launches[0];
    q->launches[0] = q->launches[1];
    q->n--;
    *secs = 0;
    const int status = ops->finish(ops->ctx, secs, err);
    if (status != TF_STATUS_OK)
        q->n = 0; /* the device lost the later batch with this one (energy.h) */
    return status;
}

/* Wait for every batch still started, their device time into out->busy_s:
 * the window is over, but the device must be idle before the next launch.
 * Returns `status`, or a failure of theirs. */
static int energy_drain(const struct tf_energy_ops *ops, struct energy_queue *q,
                        struct tf_energy_result *out, int status, struct tf_error *err)
{
    while (q->n > 0) {
        int ran = 0;
        double secs = 0;
        struct tf_error why = {0};
        const int st = energy_finish_oldest(ops, q, &ran, &secs, &why);
        if (st != TF_STATUS_OK) {
            if (status == TF_STATUS_OK) {
                *err = why;
                status = st;
            }
            break;
        }
        out->busy_s += secs;
    }
    return status;
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
    /* Queued launches keep two batches on the device, so that it runs the
     * second while the host collects the first and starts the third: with
     * one, the device waited for the host's turn after every batch (38 ms of
     * a 412 ms window on a busy H100 node, kernels of 70-300 us). */
    const int in_flight = ops->queued ? 2 : 1;
    const uint64_t min_batches = (uint64_t)(p->min_batches > 0 ? p->min_batches : 1);
    int b = tf_energy_batch(p, read_s, in_flight);
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
    struct energy_queue q = {{0, 0}, 0};
    uint64_t done = 0;   /* launches finished */
    double done_s = 0;   /* their device seconds */
    bool open = false;   /* the first update was seen: the window is open */
    double open_j = 0, open_s = 0;
    uint64_t open_l = 0;
    while (ops->now(ops->ctx) - t0 <= p->limit_s) {
        while (q.n < in_flight) {
            const int status = ops->start(ops->ctx, b, err);
            if (status != TF_STATUS_OK)
                return status; /* the device lost every batch started (energy.h) */
            q.launches[q.n++] = b;
        }
        /* What the device has surely finished when the counter is read: the
         * batches finished (queued), or the one start ran too (not queued). */
        const uint64_t seen_l = ops->queued ? done : done + (uint64_t)q.launches[0];
        double now_j = 0, secs = 0;
        const double reading = ops->now(ops->ctx);
        rc = ops->read(ops->ctx, &now_j, &why);
        const double took = ops->now(ops->ctx) - reading;
        int ran = 0;
        const int status = energy_finish_oldest(ops, &q, &ran, &secs, err);
        if (status != TF_STATUS_OK)
            return status;
        if (took > read_s) { /* longer batches from now on; the bound keeps the longest */
            read_s = took;
            b = tf_energy_batch(p, read_s, in_flight);
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
            return energy_drain(ops, &q, out, TF_STATUS_OK, err);
        }
        if (now_j < last) {
            out->status = TF_ENERGY_COUNTER_ERROR;
            snprintf(out->why, sizeof out->why,
                     "the energy counter went backwards, from %.6f J to %.6f J", last, now_j);
            return energy_drain(ops, &q, out, TF_STATUS_OK, err);
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
            return energy_drain(ops, &q, out, TF_STATUS_OK, err);
        }
    }
    snprintf(out->why, sizeof out->why,
             "the energy counter moved %d time%s over %llu launches (%.3g s of them) in the "
             "%.3g s allowed: no %.3g s window of %llu launches between two of its updates",
             out->updates, out->updates == 1 ? "" : "s", (unsigned long long)done, done_s,
             p->limit_s, p->window, (unsigned long long)min_launches);
    return energy_drain(ops, &q, out, TF_STATUS_OK, err);
}
