/* plan.c - planning: tasks, exact counts, random samples and slices.
 *
 * Brute force hands out index ranges: a slice of S configurations is the range
 * from the cursor to just past the S-th valid index, found by walking the
 * space (which prunes invalid subtrees), so the coordinator knows exactly how
 * many results each slice owes. The random strategy draws `budget` distinct
 * valid configurations per (kernel, problem) (tf_space_sample: seeded by the
 * job's seed and the kernel and problem names, not the device class, so every
 * GPU model measures the same sample where it can; the default always in).
 * A space larger than TF_SPACE_EXACT_LIMIT is sampled by rejection without
 * an exact count (its number of valid configurations is then an estimate).
 * Counting and sampling poll the hook main.c sets (progress, signals).
 * A resumed run leaves out what its earlier part measured: brute-force slices
 * then become explicit lists that skip those configurations, and a sampled
 * list is reordered so that its finished configurations come first. */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

struct tf_plan *tf_plan_create(const struct tf_job *job, int nclasses,
                               const struct tf_device *devices, struct tf_error *err)
{
    struct tf_plan *plan = tf_xcalloc(1, sizeof *plan);
    plan->top_k = job->top_k;
    int n = 0;
    for (int i = 0; i < job->nkernels; i++)
        n += job->kernels[i].nproblems;
    plan->tasks = tf_xcalloc((size_t)(n * nclasses) + 1, sizeof *plan->tasks);
    for (int c = 0; c < nclasses; c++) {
        for (int i = 0; i < job->nkernels; i++) {
            const struct tf_job_kernel *jk = &job->kernels[i];
            /* A C kernel runs on host workers, a CUDA/HIP kernel on GPU workers. */
            if (strcmp(jk->kernel->language, tf_device_language(&devices[c])) != 0)
                continue;
            for (int j = 0; j < jk->nproblems; j++) {
                struct tf_task *t = &plan->tasks[plan->ntasks++];
                t->kernel = i;
                t->problem = jk->problems[j];
                t->klass = c;
                t->space = tf_space_create(jk->kernel, t->problem, &devices[c], err);
                if (t->space == NULL)
                    goto fail;
                t->best_time = NAN;
                t->phase = job->top_k > 0 ? 1 : 0;
                /* A random search of a huge space samples it without counting
                 * it (tf_space_random); brute force needs the exact count. */
                if (job->strategy == TF_STRATEGY_RANDOM) {
                    if (tf_space_random(t->space, job->budget, job->seed, &t->list, &t->nlist,
                                        &t->valid, &t->valid_estimated, err))
                        goto fail;
                    t->total = t->list != NULL ? t->nlist : t->valid;
                } else {
                    if (tf_space_count(t->space, 0, UINT64_MAX, &t->valid, err))
                        goto fail;
                    t->total = t->valid;
                }
                plan->total += tf_plan_task_planned(plan, t);
            }
        }
    }
    return plan;
fail:
    tf_plan_destroy(plan);
    return NULL;
}

void tf_plan_destroy(struct tf_plan *plan)
{
    if (plan == NULL)
        return;
    for (int i = 0; i < plan->ntasks; i++) {
        tf_space_destroy(plan->tasks[i].space);
        free(plan->tasks[i].list);
        free(plan->tasks[i].skip);
        free(plan->tasks[i].screened);
    }
    free(plan->tasks);
    free(plan);
}

uint64_t tf_plan_task_planned(const struct tf_plan *plan, const struct tf_task *t)
{
    if (t->phase != 1)
        return t->total;
    return t->total + (t->total < plan->top_k ? t->total : plan->top_k);
}

uint64_t tf_plan_undispatched(const struct tf_plan *plan, int klass)
{
    uint64_t n = 0;
    for (int i = 0; i < plan->ntasks; i++)
        if (plan->tasks[i].klass == klass)
            n += plan->tasks[i].total - plan->tasks[i].dispatched;
    return n;
}

struct tf_task *tf_plan_find(struct tf_plan *plan, int kernel, int problem, int klass)
{
    for (int i = 0; i < plan->ntasks; i++) {
        struct tf_task *t = &plan->tasks[i];
        if (t->kernel == kernel && t->problem == problem && t->klass == klass)
            return t;
    }
    return NULL;
}

/* Cut `n` configurations of `t` into *work starting `done` configurations in
 * (list) or at index *cursor (brute force: the range ends just past the n-th
 * valid index, or at the space's end if `to_end`; *cursor moves there). */
static int cut_slice(const struct tf_task *t, uint64_t done, uint64_t *cursor, uint64_t n,
                     bool to_end, struct tf_work *work, struct tf_error *err)
{
    work->kernel = (uint32_t)t->kernel;
    work->problem = (uint32_t)t->problem;
    if (t->list != NULL) {
        work->nlist = (uint32_t)n;
        work->list = tf_xmalloc(sizeof *work->list * n);
        memcpy(work->list, t->list + done, sizeof *work->list * n);
        return 0;
    }
    uint64_t idx = *cursor, last = 0;
    if (t->nskip > 0) {
        /* Resumed: the next n valid configurations not measured yet, as a list. */
        work->list = tf_xmalloc(sizeof *work->list * n);
        for (uint64_t k = 0; k < n;) {
            int rc = tf_space_next(t->space, idx, UINT64_MAX, &last, err);
            if (rc <= 0) {
                free(work->list);
                work->list = NULL;
                return rc < 0 ? -1
                              : tf_error_set(err, TF_ERR_EVAL,
                                             "internal: fewer valid configurations than counted");
            }
            idx = last + 1;
            if (!bsearch(&last, t->skip, t->nskip, sizeof *t->skip, cmp_u64))
                work->list[k++] = last;
        }
        work->nlist = (uint32_t)n;
        *cursor = idx;
        return 0;
    }
    for (uint64_t k = 0; k < n; k++) {
        int rc = tf_space_next(t->space, idx, UINT64_MAX, &last, err);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return tf_error_set(err, TF_ERR_EVAL,
                                "internal: fewer valid configurations than counted");
        idx = last + 1;
    }
    work->lo = *cursor;
    work->hi = to_end ? tf_space_cartesian(t->space) : idx;
    *cursor = work->hi;
    return 0;
}

int64_t tf_plan_next_slice(struct tf_plan *plan, int klass, uint64_t want, struct tf_work *work,
                           struct tf_error *err)
{
    memset(work, 0, sizeof *work);
    if (want == 0)
        want = 1;
    for (int i = 0; i < plan->ntasks; i++) {
        struct tf_task *t = &plan->tasks[i];
        if (t->klass != klass || t->dispatched == t->total)
            continue;
        uint64_t left = t->total - t->dispatched, n = want < left ? want : left;
        /* The last slice runs to the end of the space, so nothing is left behind. */
        if (cut_slice(t, t->dispatched, &t->cursor, n, t->dispatched + n == t->total, work, err))
            return -1;
        work->phase = (uint32_t)t->phase;
        t->dispatched += n;
        return (int64_t)n;
    }
    return 0;
}

int64_t tf_plan_next_compile_slice(struct tf_plan *plan, int klass, uint64_t want,
                                   struct tf_work *work, struct tf_error *err)
{
    memset(work, 0, sizeof *work);
    if (want == 0)
        want = 1;
    for (int i = 0; i < plan->ntasks; i++) {
        struct tf_task *t = &plan->tasks[i];
        if (t->klass != klass || t->phase == 2)
            continue;
        /* Compile slices never overlap the measured ones: the workers' own
         * pools compile those. */
        if (t->ahead < t->dispatched) {
            t->ahead = t->dispatched;
            t->ahead_cursor = t->cursor;
        }
        if (t->ahead == t->total)
            continue;
        uint64_t left = t->total - t->ahead, n = want < left ? want : left;
        if (cut_slice(t, t->ahead, &t->ahead_cursor, n, false, work, err))
            return -1;
        t->ahead += n;
        return (int64_t)n;
    }
    return 0;
}

bool tf_plan_has_future(const struct tf_plan *plan, int klass)
{
    for (int i = 0; i < plan->ntasks; i++) {
        const struct tf_task *t = &plan->tasks[i];
        if (t->klass == klass &&
            (t->dispatched < t->total || (t->phase == 1 && t->done < t->total)))
            return true;
    }
    return false;
}

/* Fastest first; equal medians (whole nanoseconds) in configuration order, so
 * the top k do not depend on the order results arrived in. */
static int cmp_screened(const void *a, const void *b)
{
    const struct tf_screened *x = a, *y = b;
    if (x->median != y->median)
        return x->median < y->median ? -1 : 1;
    return x->config < y->config ? -1 : x->config > y->config;
}

void tf_plan_record(struct tf_plan *plan, struct tf_task *t, const struct tf_result *r)
{
    t->done++;
    if (t->phase != 1)
        return;
    if (r->status == TF_STATUS_OK && isfinite(r->time_median)) {
        if ((t->nscreened & (t->nscreened - 1)) == 0) /* grow at powers of two */
            t->screened = tf_xrealloc(t->screened,
                                      sizeof *t->screened * (t->nscreened ? 2 * t->nscreened : 1));
        t->screened[t->nscreened++] = (struct tf_screened){r->config, r->time_median};
    }
    if (t->done < t->total)
        return;
    /* Screening complete: the k fastest, in index order, are measured again strictly. */
    uint64_t estimate = t->total < plan->top_k ? t->total : plan->top_k;
    uint64_t k = t->nscreened < plan->top_k ? t->nscreened : plan->top_k;
    qsort(t->screened, t->nscreened, sizeof *t->screened, cmp_screened);
    free(t->list);
    t->list = tf_xmalloc(sizeof *t->list * (k ? k : 1));
    for (uint64_t i = 0; i < k; i++)
        t->list[i] = t->screened[i].config;
    qsort(t->list, k, sizeof *t->list, cmp_u64);
    free(t->screened);
    t->screened = NULL;
    t->nscreened = 0;
    free(t->skip);
    t->skip = NULL;
    t->nskip = 0;
    t->nlist = t->total = k;
    t->dispatched = t->done = 0;
    t->phase = 2;
    plan->total -= estimate - k;
}

/* Move the configurations of t->list found in sorted `seen[0..n)` to its front
 * (both parts stay ascending); returns how many were found. */
static uint64_t list_done_first(struct tf_task *t, const uint64_t *seen, uint64_t n)
{
    uint64_t *front = tf_xmalloc(sizeof *front * (t->nlist ? t->nlist : 1));
    uint64_t *back = tf_xmalloc(sizeof *back * (t->nlist ? t->nlist : 1));
    uint64_t nf = 0, nb = 0;
    for (uint64_t i = 0; i < t->nlist; i++) {
        if (bsearch(&t->list[i], seen, n, sizeof *seen, cmp_u64))
            front[nf++] = t->list[i];
        else
            back[nb++] = t->list[i];
    }
    memcpy(t->list, front, sizeof *front * nf);
    memcpy(t->list + nf, back, sizeof *back * nb);
    free(front);
    free(back);
    return nf;
}

static int cmp_result_config(const void *a, const void *b)
{
    const struct tf_result *x = *(const struct tf_result *const *)a;
    const struct tf_result *y = *(const struct tf_result *const *)b;
    return x->config < y->config ? -1 : x->config > y->config;
}

/* Take the results of `done` that belong to t's current phase: one per
 * configuration, each one t measures. */
static int64_t resume_phase(struct tf_plan *plan, struct tf_task *t, const struct tf_result *done,
                            uint64_t n, struct tf_error *err)
{
    const struct tf_result **mine = tf_xmalloc(sizeof *mine * (n ? n : 1));
    uint64_t *configs = tf_xmalloc(sizeof *configs * (n ? n : 1));
    uint64_t m = 0, taken = 0;
    for (uint64_t i = 0; i < n; i++)
        if (done[i].phase == t->phase)
            mine[m++] = &done[i];
    qsort(mine, m, sizeof *mine, cmp_result_config);
    for (uint64_t i = 0; i < m; i++) {
        uint64_t c = mine[i]->config;
        if (taken > 0 && configs[taken - 1] == c)
            continue;
        bool ok;
        if (t->list != NULL)
            ok = bsearch(&c, t->list, t->nlist, sizeof *t->list, cmp_u64) != NULL;
        else if (c >= tf_space_cartesian(t->space))
            ok = false;
        else if (tf_space_is_valid(t->space, c, &ok, err) != 0)
            goto fail;
        if (!ok)
            continue;
        configs[taken] = c;
        mine[taken++] = mine[i];
    }
    if (taken == 0)
        goto out;
    if (t->list != NULL) {
        /* A random or top-k list can be out of order only here; sort to search it. */
        qsort(t->list, t->nlist, sizeof *t->list, cmp_u64);
        list_done_first(t, configs, taken);
    } else {
        t->skip = configs;
        t->nskip = taken;
        configs = NULL;
    }
    t->dispatched += taken;
    for (uint64_t i = 0; i < taken; i++)
        tf_plan_record(plan, t, mine[i]); /* may complete screening: phase 2 begins */
out:
    free(mine);
    free(configs);
    return (int64_t)taken;
fail:
    free(mine);
    free(configs);
    return -1;
}

int64_t tf_plan_resume(struct tf_plan *plan, struct tf_task *t, const struct tf_result *done,
                       uint64_t n, struct tf_error *err)
{
    int64_t first = resume_phase(plan, t, done, n, err);
    if (first < 0 || t->phase != 2)
        return first;
    /* The screening pass was complete: its top k may be partly re-measured too. */
    int64_t second = resume_phase(plan, t, done, n, err);
    return second < 0 ? -1 : first + second;
}
