/* diff.c - what changed between two runs of an archive (`tunefarm diff`).
 *
 * The rows of the two runs are bucketed by kernel, problem and device class
 * (the class of a device is its backend/arch/name key, so two H100s of one
 * run are one group). In each bucket and run every configuration becomes one
 * entry: its status (that of its latest screening or only-phase row) and its
 * time (the fastest ok median, from the strict re-measurements when the run
 * has any in that bucket, else from its only phase; with two phases the
 * screening time is kept as a fallback). Entries are sorted by configuration
 * so the two runs are matched by binary search. Every comparison of two times
 * goes through tf_diff_beyond_noise (the rule in diff.h). The report is text
 * for people: a header naming the runs, the provenance that differs, one
 * block per group, and a summary line; the caller turns the summary into an
 * exit code. Small formatting helpers (seconds, configurations, dates) are
 * local: coordinator/report.c has its own, and schema/ depends on nothing. */
#include "diff.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "status.h"

void tf_diff_defaults(struct tf_diff_options *o)
{
    o->tolerance = 0.02;
    o->sigmas = 3.0;
    o->examples = 5;
}

double tf_diff_spread(double median, double min, double rsd)
{
    const double low = median > 0 && min >= 0 && min <= median ? (median - min) / median : NAN;
    const bool has_rsd = isfinite(rsd) && rsd >= 0, has_low = isfinite(low);
    if (has_rsd && has_low)
        return rsd < low ? rsd : low;
    return has_rsd ? rsd : has_low ? low : 0;
}

static double spread_or_zero(double r)
{
    return isfinite(r) && r > 0 ? r : 0;
}

int tf_diff_beyond_noise(double ta, double sa, double tb, double sb,
                         const struct tf_diff_options *o, double *band)
{
    const double x = spread_or_zero(sa), y = spread_or_zero(sb);
    double b = o->sigmas * sqrt(x * x + y * y);
    if (!(b >= o->tolerance))
        b = o->tolerance;
    if (band)
        *band = b;
    if (!(ta > 0) || !(tb > 0) || !isfinite(ta) || !isfinite(tb))
        return 0;
    return fabs(tb / ta - 1.0) > b;
}

/* ---------------------------------------------------------------- choosing the runs */

/* True if run `x` started before run `y` (the index breaks ties: added first). */
static bool started_before(const struct tf_archive *a, int x, int y)
{
    return a->runs[x].start < a->runs[y].start || (a->runs[x].start == a->runs[y].start && x < y);
}

int tf_diff_pick_runs(const struct tf_archive *a, int *run_a, int *run_b, struct tf_error *err)
{
    if (a->nruns == 0)
        return tf_error_set(err, TF_ERR_SCHEMA, "the archive has no runs to compare");
    if (*run_a >= a->nruns || *run_b >= a->nruns)
        return tf_error_set(err, TF_ERR_SCHEMA, "run %d does not exist: the archive has %d run%s "
                            "(0..%d; `tunefarm status` lists them)",
                            *run_a >= a->nruns ? *run_a : *run_b, a->nruns,
                            a->nruns == 1 ? "" : "s", a->nruns - 1);
    if (*run_b < 0) {
        *run_b = 0;
        for (int r = 1; r < a->nruns; r++)
            if (started_before(a, *run_b, r))
                *run_b = r;
    }
    if (*run_a < 0) {
        const struct tf_archive_run *b = &a->runs[*run_b];
        for (int r = 0; r < a->nruns; r++)
            if (r != *run_b && strcmp(a->runs[r].job_name, b->job_name) == 0 &&
                strcmp(a->runs[r].replay_source, b->replay_source) == 0 &&
                started_before(a, r, *run_b) && (*run_a < 0 || started_before(a, *run_a, r)))
                *run_a = r;
        if (*run_a < 0)
            return tf_error_set(err, TF_ERR_SCHEMA, "run %d (job '%s') has no earlier run of the "
                                "same job to compare with: name two runs with --run A --run B",
                                *run_b, b->job_name);
    }
    if (*run_a == *run_b)
        return tf_error_set(err, TF_ERR_SCHEMA, "run %d compared with itself: name two runs",
                            *run_a);
    return 0;
}

int tf_diff_run_of_slurm_job(const struct tf_archive *a, const char *job_id, int *run,
                             struct tf_error *err)
{
    int found = -1;
    for (int r = 0; r < a->nruns; r++) {
        bool named = strcmp(a->runs[r].slurm_job_id, job_id) == 0;
        for (int s = 0; s < a->nsessions && !named; s++)
            named = a->sessions[s].run == (uint32_t)r &&
                    strcmp(a->sessions[s].slurm_job_id, job_id) == 0;
        if (named && (found < 0 || started_before(a, found, r)))
            found = r;
    }
    if (found < 0)
        return tf_error_set(err, TF_ERR_SCHEMA, "Slurm job %s measured no run in this archive "
                            "(`tunefarm status` lists each run's jobs)", job_id);
    if (a->runs[found].end <= 0)
        return tf_error_set(err, TF_ERR_SCHEMA, "run %d, which Slurm job %s measured, did not "
                            "finish (killed, cut short or still running): nothing to compare "
                            "until it is resumed to its end", found, job_id);
    *run = found;
    return 0;
}

/* ---------------------------------------------------------------- small formatting */

static void seconds_text(double s, char *out, size_t cap)
{
    if (!isfinite(s))
        snprintf(out, cap, "-");
    else if (s < 1e-6)
        snprintf(out, cap, "%.1f ns", s * 1e9);
    else if (s < 1e-3)
        snprintf(out, cap, "%.2f us", s * 1e6);
    else if (s < 1.0)
        snprintf(out, cap, "%.3f ms", s * 1e3);
    else
        snprintf(out, cap, "%.3f s", s);
}

static void date_text(double unix_seconds, char *out, size_t cap)
{
    time_t t = tf_archive_time_ok(unix_seconds) ? (time_t)unix_seconds : 0;
    struct tm tm;
    if (t == 0 || localtime_r(&t, &tm) == NULL)
        snprintf(out, cap, "-");
    else
        strftime(out, cap, "%Y-%m-%d %H:%M:%S", &tm);
}

/* "P1=v1 P2=v2" of configuration `config` of `ak` (mixed radix, parameter 0
 * most significant, as everywhere in the archive), without the parameters of
 * one value unless every parameter has one (as the summaries print it:
 * coordinator/report.c, tf_report_format_config). */
static void config_text(const struct tf_archive_kernel *ak, uint64_t config, char *out, size_t cap)
{
    size_t used = 0;
    int *digits = tf_xcalloc((size_t)ak->nparams + 1, sizeof *digits);
    bool all_single = true;
    for (int i = ak->nparams - 1; i >= 0; i--) {
        digits[i] = (int)(config % (uint64_t)ak->params[i].count);
        config /= (uint64_t)ak->params[i].count;
        all_single &= ak->params[i].count == 1;
    }
    out[0] = '\0';
    for (int i = 0; i < ak->nparams && used < cap; i++) {
        const struct tf_param *p = &ak->params[i];
        if (p->count == 1 && !all_single)
            continue;
        int w = p->kind == TF_PARAM_INT
                    ? snprintf(out + used, cap - used, "%s%s=%lld", used ? " " : "", p->name,
                               (long long)p->ints[digits[i]])
                    : snprintf(out + used, cap - used, "%s%s=%s", used ? " " : "", p->name,
                               p->strings[digits[i]]);
        used = w < 0 ? cap : used + (size_t)w;
    }
    free(digits);
}

static double percent(double x)
{
    return 100.0 * x;
}

/* ---------------------------------------------------------------- provenance */

/* One provenance line, counted. */
static void prov_line(FILE *out, int *count, const char *what, const char *x, const char *y)
{
    fprintf(out, "  %s: %s -> %s\n", what, x[0] ? x : "-", y[0] ? y : "-");
    (*count)++;
}

/* The latest session record of device `device` in run `run`, or NULL. */
static const struct tf_archive_session_device *device_in_run(const struct tf_archive *a, int run,
                                                             uint32_t device)
{
    const struct tf_archive_session_device *found = NULL;
    for (int i = 0; i < a->nsession_devices; i++) {
        const struct tf_archive_session_device *sd = &a->session_devices[i];
        if (a->sessions[sd->session].run == (uint32_t)run && sd->device == device &&
            (found == NULL || a->sessions[sd->session].start >= a->sessions[found->session].start))
            found = sd;
    }
    return found;
}

/* A session record in run `run` of a device of class `key`, or NULL. */
static const struct tf_archive_session_device *class_in_run(const struct tf_archive *a, int run,
                                                            const char *key)
{
    for (int i = 0; i < a->nsession_devices; i++) {
        const struct tf_archive_session_device *sd = &a->session_devices[i];
        char k[256];
        tf_device_class_key(&sd->d, k, sizeof k);
        if (a->sessions[sd->session].run == (uint32_t)run && strcmp(k, key) == 0)
            return sd;
    }
    return NULL;
}

static bool run_has_devices(const struct tf_archive *a, int run)
{
    for (int i = 0; i < a->nsession_devices; i++)
        if (a->sessions[a->session_devices[i].session].run == (uint32_t)run)
            return true;
    return false;
}

/* A run of several sessions: when each was, and what changed on a device
 * from one to the next. */
static void prov_sessions(const struct tf_archive *a, int run, const char *label, FILE *out,
                          int *count)
{
    int n = 0;
    tf_archive_run_session(a, run, 0, &n);
    if (n < 2)
        return;
    fprintf(out, "  run %s (%d) was resumed: measured in %d sessions:", label, run, n);
    for (int k = 0; k < n; k++) {
        const struct tf_archive_session *s = &a->sessions[tf_archive_run_session(a, run, k, NULL)];
        char when[32];
        date_text(s->start, when, sizeof when);
        fprintf(out, "%s %s", k ? "," : "", when);
        if (s->slurm_job_id[0])
            fprintf(out, " (Slurm job %s)", s->slurm_job_id);
    }
    fprintf(out, "\n");
    (*count)++;
    for (int k = 1; k < n; k++) {
        const int prev = tf_archive_run_session(a, run, k - 1, NULL);
        const int cur = tf_archive_run_session(a, run, k, NULL);
        for (int i = 0; i < a->nsession_devices; i++) {
            const struct tf_archive_session_device *now = &a->session_devices[i];
            if (now->session != (uint32_t)cur)
                continue;
            for (int j = 0; j < a->nsession_devices; j++) {
                const struct tf_archive_session_device *then = &a->session_devices[j];
                char changes[512];
                if (then->session == (uint32_t)prev && then->device == now->device &&
                    tf_device_changes(&then->d, &now->d, changes, sizeof changes) > 0) {
                    fprintf(out, "    between its sessions %d and %d, %s on %s: %s\n", k, k + 1,
                            now->d.name, now->d.host, changes);
                    (*count)++;
                }
            }
        }
    }
}

/* Every difference between what made run `ra` and what made run `rb`. */
static int provenance(const struct tf_archive *a, int ra, int rb, FILE *out)
{
    const struct tf_archive_run *x = &a->runs[ra], *y = &a->runs[rb];
    int count = 0;
    char u[96], v[96];
    fprintf(out, "\nProvenance that differs:\n");
    if (strcmp(x->job_name, y->job_name) != 0)
        prov_line(out, &count, "job", x->job_name, y->job_name);
    if (strcmp(x->job_hash, y->job_hash) != 0) {
        snprintf(u, sizeof u, "%.12s", x->job_hash);
        snprintf(v, sizeof v, "%.12s", y->job_hash);
        prov_line(out, &count, "job hash (the job file, its kernels' files and sources)", u, v);
    }
    if (x->search_strategy[0] && y->search_strategy[0]) {
        if (strcmp(x->search_strategy, y->search_strategy) != 0)
            prov_line(out, &count, "search strategy", x->search_strategy, y->search_strategy);
        if (x->search_seed != y->search_seed) {
            snprintf(u, sizeof u, "%llu", (unsigned long long)x->search_seed);
            snprintf(v, sizeof v, "%llu", (unsigned long long)y->search_seed);
            prov_line(out, &count, "search seed", u, v);
        }
        if (x->search_budget != y->search_budget) {
            snprintf(u, sizeof u, "%llu", (unsigned long long)x->search_budget);
            snprintf(v, sizeof v, "%llu", (unsigned long long)y->search_budget);
            prov_line(out, &count, "search budget", u, v);
        }
        if (strcmp(x->search, y->search) != 0)
            prov_line(out, &count, "search settings", x->search, y->search);
        if (strcmp(x->measure, y->measure) != 0)
            prov_line(out, &count, "measurement", x->measure, y->measure);
        if (strcmp(x->screen, y->screen) != 0)
            prov_line(out, &count, "screening", x->screen, y->screen);
    } else if (x->search_strategy[0] || y->search_strategy[0]) {
        fprintf(out, "  job settings: not recorded for run %d (an archive older than them)\n",
                x->search_strategy[0] ? rb : ra);
        count++;
    }
    if (strcmp(x->tunefarm_version, y->tunefarm_version) != 0)
        prov_line(out, &count, "tunefarm", x->tunefarm_version, y->tunefarm_version);
    if (strcmp(x->replay_source, y->replay_source) != 0)
        prov_line(out, &count, "replay source", x->replay_source, y->replay_source);
    /* The coordinator's host: the first session's of each run. */
    const int sa = tf_archive_run_session(a, ra, 0, NULL), sb = tf_archive_run_session(a, rb, 0, NULL);
    if (sa >= 0 && sb >= 0 && strcmp(a->sessions[sa].host, a->sessions[sb].host) != 0)
        prov_line(out, &count, "coordinator host", a->sessions[sa].host, a->sessions[sb].host);

    /* Kernel sources, where both runs recorded them. */
    for (int k = 0; k < a->nkernels; k++) {
        const char *ha = tf_archive_run_source_hash(a, (uint32_t)ra, (uint32_t)k);
        const char *hb = tf_archive_run_source_hash(a, (uint32_t)rb, (uint32_t)k);
        if (ha && hb && strcmp(ha, hb) != 0) {
            char what[200];
            snprintf(what, sizeof what, "kernel %s source (kernel.yaml, source, reference)",
                     a->kernels[k].name);
            snprintf(u, sizeof u, "%.12s", ha);
            snprintf(v, sizeof v, "%.12s", hb);
            prov_line(out, &count, what, u, v);
        }
    }

    /* Devices: each of run B's against the same device in run A, else one of
     * its class there; then run A's devices that run B did not have. */
    const bool da = run_has_devices(a, ra), db = run_has_devices(a, rb);
    if (da != db) {
        fprintf(out, "  device versions and settings: not recorded for run %d (an archive "
                "older than /session_devices)\n", da ? rb : ra);
        count++;
    }
    for (uint32_t d = 0; da && db && d < (uint32_t)a->ndevices; d++) {
        const struct tf_archive_session_device *nb = device_in_run(a, rb, d);
        const struct tf_archive_session_device *na = device_in_run(a, ra, d);
        char key[256], changes[512];
        tf_device_class_key(&a->devices[d], key, sizeof key);
        if (nb == NULL && na != NULL) {
            if (class_in_run(a, rb, key) == NULL)
                continue; /* its class is gone: the groups say so */
            fprintf(out, "  %s on %s: in run %d, not in run %d\n", a->devices[d].name,
                    a->devices[d].host, ra, rb);
            count++;
            continue;
        }
        if (nb == NULL)
            continue;
        const struct tf_archive_session_device *base = na ? na : class_in_run(a, ra, key);
        if (base == NULL)
            continue; /* a class run A did not measure: the groups say so */
        if (na == NULL) {
            fprintf(out, "  %s on %s: in run %d, not in run %d", nb->d.name, nb->d.host, rb, ra);
            if (tf_device_changes(&base->d, &nb->d, changes, sizeof changes) > 0)
                fprintf(out, "; against %s on %s there: %s", base->d.name, base->d.host,
                        changes);
            fprintf(out, "\n");
            count++;
        } else if (tf_device_changes(&na->d, &nb->d, changes, sizeof changes) > 0) {
            fprintf(out, "  %s on %s: %s\n", nb->d.name, nb->d.host, changes);
            count++;
        }
    }
    prov_sessions(a, ra, "A", out, &count);
    prov_sessions(a, rb, "B", out, &count);
    if (count == 0)
        fprintf(out, "  none: the same job and settings, kernel sources, tunefarm, and on every "
                     "device the same driver, runtime, compiler, clocks and power limit\n");
    return count;
}

/* ---------------------------------------------------------------- groups */

/* A configuration in one run and group. */
struct entry {
    uint64_t config;
    uint8_t status;        /* of its latest screening or only-phase row */
    bool timed;            /* has an ok time in the run's timing rows */
    double time, spread;   /* the fastest ok median, and its samples' spread */
    bool screened;         /* two phases: an ok screening time (not re-measured) */
    double stime, sspread;
};

struct row_ref {
    uint64_t config, index;
};

static int row_ref_cmp(const void *x, const void *y)
{
    const struct row_ref *a = x, *b = y;
    if (a->config != b->config)
        return a->config < b->config ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* The entries of rows `idx[0..n)` of `ak` (one run, one group), sorted by
 * configuration, into *out; their count. */
static size_t build_entries(const struct tf_archive_kernel *ak, const uint64_t *idx, size_t n,
                            struct entry **out)
{
    struct row_ref *refs = tf_xmalloc(sizeof *refs * (n ? n : 1));
    bool strict = false;
    for (size_t i = 0; i < n; i++) {
        refs[i] = (struct row_ref){ak->rows[idx[i]].r.config, idx[i]};
        strict = strict || ak->rows[idx[i]].r.phase == 2;
    }
    qsort(refs, n, sizeof *refs, row_ref_cmp);
    struct entry *e = tf_xcalloc(n ? n : 1, sizeof *e);
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        struct entry *x = &e[m++];
        x->config = refs[i].config;
        bool has_status = false;
        for (; j < n && refs[j].config == x->config; j++) {
            const struct tf_result *r = &ak->rows[refs[j].index].r;
            if (r->phase != 2 || !has_status) {
                x->status = r->status;
                has_status = has_status || r->phase != 2;
            }
            if (!tf_result_timed(r))
                continue;
            if (strict ? r->phase == 2 : r->phase != 2) {
                if (!x->timed || r->time_median < x->time) {
                    x->timed = true;
                    x->time = r->time_median;
                    x->spread = tf_diff_spread(r->time_median, r->time_min, r->time_rsd);
                }
            } else if (strict && r->phase == 1 && (!x->screened || r->time_median < x->stime)) {
                x->screened = true;
                x->stime = r->time_median;
                x->sspread = tf_diff_spread(r->time_median, r->time_min, r->time_rsd);
            }
        }
        i = j;
    }
    free(refs);
    *out = e;
    return m;
}

static const struct entry *find_entry(const struct entry *e, size_t n, uint64_t config)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[mid].config == config)
            return &e[mid];
        if (e[mid].config < config)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const struct entry *best_entry(const struct entry *e, size_t n)
{
    const struct entry *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (e[i].timed && (best == NULL || e[i].time < best->time))
            best = &e[i];
    return best;
}

/* A status that means the variant broke (not: never run because of constraints). */
static bool is_failure(uint8_t status)
{
    return status != TF_STATUS_OK && status != TF_STATUS_INVALID;
}

/* "1.23 ms (spread 0.4%)" */
static void time_text(double t, double spread, char *out, size_t cap)
{
    char s[32];
    seconds_text(t, s, sizeof s);
    snprintf(out, cap, "%s (spread %.2g%%)", s, percent(spread));
}

/* ", 1.04x, SLOWER beyond the noise (band 2.0%)"; 1 slower, -1 faster, 0 within. */
static int verdict(FILE *out, double ta, double sa, double tb, double sb,
                   const struct tf_diff_options *o)
{
    double band;
    const int beyond = tf_diff_beyond_noise(ta, sa, tb, sb, o, &band);
    const int dir = !beyond ? 0 : tb > ta ? 1 : -1;
    fprintf(out, "  %.2fx, %s (band %.1f%%)", tb / ta,
            dir > 0 ? "SLOWER beyond the noise" : dir < 0 ? "faster beyond the noise" : "within the noise",
            percent(band));
    return dir;
}

/* Compare one group; returns 1 if it has a regression. */
static int compare_group(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                         uint32_t problem, const char *klass, const struct tf_device *dev,
                         const struct entry *ea, size_t na, const struct entry *eb, size_t nb,
                         bool b_finished, const struct tf_diff_options *o, FILE *out,
                         struct tf_diff_summary *sum)
{
    (void)a;
    char cfg[512], t[96];
    int regression = 0;
    const struct tf_archive_problem *pr = &ak->problems[problem];
    fprintf(out, "\n%s/%s on %s (%s):\n", ak->name, pr->name, dev->name, klass);
    const struct entry *ba = best_entry(ea, na), *bb = best_entry(eb, nb);
    if (ba) {
        config_text(ak, ba->config, cfg, sizeof cfg);
        time_text(ba->time, ba->spread, t, sizeof t);
        fprintf(out, "  best then: %-40s %s\n", cfg, t);
    } else {
        fprintf(out, "  best then: none (no ok configuration)\n");
    }
    if (bb) {
        config_text(ak, bb->config, cfg, sizeof cfg);
        time_text(bb->time, bb->spread, t, sizeof t);
        fprintf(out, "  best now:  %-40s %s", cfg, t);
        if (ba && verdict(out, ba->time, ba->spread, bb->time, bb->spread, o) > 0) {
            sum->slower_best++;
            regression = 1;
        } else if (ba && tf_diff_beyond_noise(ba->time, ba->spread, bb->time, bb->spread, o, NULL)) {
            sum->faster_best++;
        }
        fprintf(out, "\n");
    } else {
        fprintf(out, "  best now:  none (no ok configuration)%s\n",
                ba ? "  REGRESSION: nothing ok now" : "");
        if (ba) {
            sum->slower_best++;
            regression = 1;
        }
    }
    /* The previous best, measured again now. */
    if (ba) {
        const struct entry *again = find_entry(eb, nb, ba->config);
        if (bb && again == bb) {
            fprintf(out, "  previous best now: the same configuration\n");
            if (tf_diff_beyond_noise(ba->time, ba->spread, bb->time, bb->spread, o, NULL) &&
                bb->time > ba->time)
                sum->slower_previous++;
        } else if (again && again->timed) {
            time_text(again->time, again->spread, t, sizeof t);
            fprintf(out, "  previous best now: %s", t);
            if (verdict(out, ba->time, ba->spread, again->time, again->spread, o) > 0) {
                sum->slower_previous++;
                regression = 1;
            }
            fprintf(out, "\n");
        } else if (again && again->screened) {
            time_text(again->stime, again->sspread, t, sizeof t);
            fprintf(out, "  previous best now: %s, screening only (not in the top k now)", t);
            if (verdict(out, ba->time, ba->spread, again->stime, again->sspread, o) > 0) {
                sum->slower_previous++;
                regression = 1;
            }
            fprintf(out, "\n");
        } else if (again && is_failure(again->status)) {
            fprintf(out, "  previous best now: %s  REGRESSION: it fails now\n",
                    tf_status_name(again->status));
            sum->failing_previous++;
            regression = 1;
        } else if (again) {
            fprintf(out, "  previous best now: %s\n", tf_status_name(again->status));
        } else {
            fprintf(out, "  previous best now: not measured%s\n",
                    b_finished ? " (the search did not propose it)" : " (run unfinished)");
        }
    }
    /* Statuses, configurations gained and lost. */
    int changed = 0, broken = 0, gained = 0, lost = 0;
    for (size_t i = 0; i < nb; i++) {
        const struct entry *x = find_entry(ea, na, eb[i].config);
        if (x == NULL)
            gained++;
        else if (x->status != eb[i].status) {
            changed++;
            broken += x->status == TF_STATUS_OK && is_failure(eb[i].status);
        }
    }
    for (size_t i = 0; i < na; i++)
        lost += find_entry(eb, nb, ea[i].config) == NULL;
    fprintf(out, "  statuses: %d changed", changed);
    if (broken) {
        fprintf(out, ", %d ok then and failing now: REGRESSION", broken);
        sum->broken += broken;
        regression = 1;
    }
    fprintf(out, "\n");
    int listed = 0;
    for (size_t i = 0; i < nb && changed; i++) {
        const struct entry *x = find_entry(ea, na, eb[i].config);
        if (x == NULL || x->status == eb[i].status)
            continue;
        if (listed++ == o->examples) {
            fprintf(out, "    ... and %d more\n", changed - o->examples);
            break;
        }
        config_text(ak, eb[i].config, cfg, sizeof cfg);
        fprintf(out, "    %s: %s -> %s\n", cfg, tf_status_name(x->status),
                tf_status_name(eb[i].status));
    }
    fprintf(out, "  configurations: %zu then, %zu now: %d gained, %d %s\n", na, nb, gained, lost,
            b_finished ? "lost" : "not measured yet (run unfinished)");
    for (int pass = 0; pass < 2; pass++) {
        const struct entry *from = pass == 0 ? eb : ea, *other = pass == 0 ? ea : eb;
        const size_t nfrom = pass == 0 ? nb : na, nother = pass == 0 ? na : nb;
        listed = 0;
        for (size_t i = 0; i < nfrom && listed < o->examples; i++) {
            if (find_entry(other, nother, from[i].config) != NULL)
                continue;
            config_text(ak, from[i].config, cfg, sizeof cfg);
            fprintf(out, "    %s %s (%s)\n", pass == 0 ? "gained:" : b_finished ? "lost:  " : "not yet:",
                    cfg, tf_status_name(from[i].status));
            listed++;
        }
    }
    return regression;
}

/* The group's noisy rows and energies in run A and B (tf_archive_quality_count:
 * the numbers the run summary and `query` print): a best or a change among
 * noisy rows is less sure than its spread alone says, and energy that went
 * missing is a provenance question of its own. */
static void quality_line(const struct tf_archive *a, const struct tf_archive_kernel *ak,
                         uint32_t problem, const char *klass, int ra, int rb, FILE *out,
                         struct tf_diff_summary *sum)
{
    struct tf_archive_quality q[2];
    memset(q, 0, sizeof q);
    tf_archive_quality_count(a, ak, ra, problem, klass, &q[0]);
    tf_archive_quality_count(a, ak, rb, problem, klass, &q[1]);
    fprintf(out, "  noisy: %llu of %llu ok rows then, %llu of %llu now; energy measured: %llu then, "
                 "%llu now\n",
            (unsigned long long)q[0].noisy, (unsigned long long)q[0].ok,
            (unsigned long long)q[1].noisy, (unsigned long long)q[1].ok,
            (unsigned long long)q[0].energy[TF_ENERGY_MEASURED],
            (unsigned long long)q[1].energy[TF_ENERGY_MEASURED]);
    sum->noisy_a += q[0].noisy;
    sum->noisy_b += q[1].noisy;
}

/* Index of each device's class key in keys[] (distinct keys, filled here). */
static int *device_classes(const struct tf_archive *a, char (**keys)[256], int *nkeys)
{
    int *cls = tf_xcalloc((size_t)a->ndevices + 1, sizeof *cls);
    *keys = tf_xcalloc((size_t)a->ndevices + 1, sizeof **keys);
    *nkeys = 0;
    for (int d = 0; d < a->ndevices; d++) {
        char key[256];
        tf_device_class_key(&a->devices[d], key, sizeof key);
        cls[d] = -1;
        for (int k = 0; k < *nkeys && cls[d] < 0; k++)
            if (strcmp((*keys)[k], key) == 0)
                cls[d] = k;
        if (cls[d] < 0) {
            tf_strlcpy((*keys)[*nkeys], key, sizeof (*keys)[0]);
            cls[d] = (*nkeys)++;
        }
    }
    return cls;
}

static void run_line(const struct tf_archive *a, int run, const char *label, FILE *out)
{
    const struct tf_archive_run *r = &a->runs[run];
    char start[32], end[32];
    date_text(r->start, start, sizeof start);
    date_text(r->end, end, sizeof end);
    fprintf(out, "  %s run %d: job '%s', job hash %.12s, started %s, %s%s\n", label, run,
            r->job_name, r->job_hash, start, r->end > 0 ? "finished " : "UNFINISHED",
            r->end > 0 ? end : " (killed or interrupted: compared as far as it got)");
}

int tf_diff_report(const struct tf_archive *a, int ra, int rb, const struct tf_diff_options *o,
                   FILE *out, struct tf_diff_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    fprintf(out, "Comparing two runs:\n");
    run_line(a, ra, "A (then):", out);
    run_line(a, rb, "B (now): ", out);
    fprintf(out, "A time changed beyond the noise when |B/A - 1| > max(%g x sqrt(s_A^2 + s_B^2), "
                 "%g%%), s = min(rsd, (median - min) / median) (schema/diff.md)\n",
            o->sigmas, percent(o->tolerance));
    sum->provenance = provenance(a, ra, rb, out);

    char (*keys)[256];
    int nkeys;
    int *cls = device_classes(a, &keys, &nkeys);
    const bool b_finished = a->runs[rb].end > 0;
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *ak = &a->kernels[k];
        const size_t ngroups = (size_t)ak->nproblems * (size_t)(nkeys ? nkeys : 1);
        /* Bucket the two runs' rows by (problem, class): counts, then offsets. */
        size_t *start[2], *fill[2];
        uint64_t *idx[2];
        for (int s = 0; s < 2; s++) {
            start[s] = tf_xcalloc(ngroups + 1, sizeof **start);
            fill[s] = tf_xcalloc(ngroups + 1, sizeof **fill);
        }
        for (uint64_t i = 0; i < ak->nrows; i++) {
            const struct tf_archive_row *row = &ak->rows[i];
            const int s = row->run == (uint32_t)ra ? 0 : row->run == (uint32_t)rb ? 1 : -1;
            if (s >= 0)
                start[s][row->r.problem * (size_t)nkeys + (size_t)cls[row->device] + 1]++;
        }
        for (int s = 0; s < 2; s++) {
            for (size_t g = 0; g < ngroups; g++)
                start[s][g + 1] += start[s][g];
            idx[s] = tf_xmalloc(sizeof **idx * (start[s][ngroups] ? start[s][ngroups] : 1));
        }
        for (uint64_t i = 0; i < ak->nrows; i++) {
            const struct tf_archive_row *row = &ak->rows[i];
            const int s = row->run == (uint32_t)ra ? 0 : row->run == (uint32_t)rb ? 1 : -1;
            if (s < 0)
                continue;
            const size_t g = row->r.problem * (size_t)nkeys + (size_t)cls[row->device];
            idx[s][start[s][g] + fill[s][g]++] = i;
        }
        for (size_t g = 0; g < ngroups; g++) {
            const size_t n0 = start[0][g + 1] - start[0][g], n1 = start[1][g + 1] - start[1][g];
            if (n0 == 0 && n1 == 0)
                continue;
            const uint32_t problem = (uint32_t)(g / (size_t)nkeys);
            const int klass = (int)(g % (size_t)nkeys);
            const struct tf_device *dev = NULL;
            for (int d = 0; d < a->ndevices && dev == NULL; d++)
                if (cls[d] == klass)
                    dev = &a->devices[d];
            if (n0 == 0 || n1 == 0) {
                fprintf(out, "\n%s/%s on %s (%s): measured in run %d only (%zu rows)\n",
                        ak->name, ak->problems[problem].name, dev->name, keys[klass],
                        n0 ? ra : rb, n0 ? n0 : n1);
                if (n0)
                    sum->only_a++;
                else
                    sum->only_b++;
                continue;
            }
            struct entry *ea, *eb;
            const size_t na = build_entries(ak, idx[0] + start[0][g], n0, &ea);
            const size_t nb = build_entries(ak, idx[1] + start[1][g], n1, &eb);
            sum->groups++;
            sum->regressions += compare_group(a, ak, problem, keys[klass], dev, ea, na, eb, nb,
                                              b_finished, o, out, sum);
            quality_line(a, ak, problem, keys[klass], ra, rb, out, sum);
            free(ea);
            free(eb);
        }
        for (int s = 0; s < 2; s++) {
            free(start[s]);
            free(fill[s]);
            free(idx[s]);
        }
    }
    free(cls);
    free(keys);
    fprintf(out, "\nSummary: %d group%s compared, %d with a regression (best slower: %d, "
                 "previous best slower: %d, previous best failing: %d, configurations ok then "
                 "and failing now: %d); best faster: %d; measured by run %d only: %d, by run %d "
                 "only: %d; provenance differences: %d; noisy ok rows: %llu then, %llu now\n",
            sum->groups, sum->groups == 1 ? "" : "s", sum->regressions, sum->slower_best,
            sum->slower_previous, sum->failing_previous, sum->broken, sum->faster_best, ra,
            sum->only_a, rb, sum->only_b, sum->provenance, (unsigned long long)sum->noisy_a,
            (unsigned long long)sum->noisy_b);
    return sum->regressions;
}
