/* diffcmd.c - the `tunefarm diff` command: options, archive and journal, exit code.
 *
 * Reads the archive as `tunefarm status` does (the results of a journal that
 * a killed run left beside it are folded in, read-only), picks the two runs
 * (schema/diff.c: by default the last run and the one before it of the same
 * job), writes the report to stdout or to a file (written beside, then
 * renamed, so a report is whole or absent), and turns the summary into the
 * exit code a nightly script acts on: 0 no regression, 1 a regression, 2 the
 * comparison could not be made. */
#include "diffcmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../schema/archive.h"
#include "../schema/diff.h"
#include "../schema/exchange.h"
#include "../schema/replace.h"
#include "coordinator.h"
#include "journal.h"

const char tf_diff_usage[] =
    "usage: tunefarm diff ARCHIVE [--run A] [--run B | --slurm-job ID] [--tolerance F]\n"
    "                     [-o REPORT]\n"
    "\n"
    "Compare two runs of an archive, per kernel, problem and device class: the\n"
    "best configuration then and now (time, ratio), the previous best's time\n"
    "now, configurations whose status changed, configurations gained or lost,\n"
    "and what differs in how the two runs were made (job and its settings,\n"
    "kernel sources, tunefarm, and per device its driver, runtime, compiler,\n"
    "clocks and power limit; the sessions of a resumed run).\n"
    "\n"
    "A change counts only beyond the noise of the stored samples:\n"
    "|B/A - 1| > max(3 x sqrt(s_A^2 + s_B^2), tolerance), s the spread of a\n"
    "measurement: min(rsd, (median - min) / median). A regression is the best\n"
    "slower beyond the noise, the previous best slower beyond the noise or\n"
    "failing now, or a configuration ok then and failing now (schema/diff.md\n"
    "has the whole rule).\n"
    "\n"
    "options:\n"
    "  -r, --run N          once: run B (compared with the run of its job before\n"
    "                       it); twice: run A, then run B. Default: the run that\n"
    "                       started last, and the run of the same job before it\n"
    "  -s, --slurm-job ID   run B is the run Slurm job ID measured (started or\n"
    "                       resumed), if it finished; else nothing is compared\n"
    "                       (exit 2); a --run beside it names run A. What\n"
    "                       slurm/diff.sbatch compares after a night's job\n"
    "  -t, --tolerance F    the smallest relative change that counts, as a\n"
    "                       fraction below 1 or a percentage (0.05 or 5%;\n"
    "                       default 2%)\n"
    "  -o, --output REPORT  write the report to REPORT (whole or not at all) and\n"
    "                       only its summary line to stdout\n"
    "  -h, --help           this text\n"
    "\n"
    "exit codes: 0 no regression; 1 a regression (also when standard output\n"
    "cannot be written); 2 bad arguments, an unreadable archive or journal, no\n"
    "two runs to compare (--slurm-job: no finished run of that job), a report\n"
    "file (-o) that cannot be written, or no regression on a standard output\n"
    "that cannot be written (the answer was lost, so not 0).\n";

/* "5%" -> 0.05, "0.05" -> 0.05; -1 if it is neither or not in [0, 10), and
 * -2 for a bare number of 1 or more: "5" is almost surely 5% with its '%'
 * left out, and read as 500% it would hide every regression of a night
 * (a bound of 100% or more is still there, written as a percentage). */
static double parse_tolerance(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno != 0)
        return -1;
    const bool percent = *end == '%';
    if (percent) {
        v /= 100.0;
        end++;
    }
    if (*end != '\0' || !(v >= 0 && v < 10))
        return -1;
    return !percent && v >= 1 ? -2 : v;
}

/* Write `text` to `path`, whole or not at all (schema/replace.h). */
static int write_report(const char *path, const char *text, size_t len)
{
    struct tf_replace r;
    struct tf_error err = {0};
    int ok = 0;
    if (tf_replace_plan(&r, path, TF_REPLACE_TEXT, &err) == 0) {
        int fd = tf_replace_open(&r, path, &err);
        if (fd >= 0) {
            ok = tf_write_all(fd, text, len) == 0 && (r.tmp == NULL || fsync(fd) == 0);
            if (!ok)
                tf_error_set(&err, TF_ERR_IO, "cannot write '%s': %s; it was left as it was",
                             path, strerror(errno));
            if (close(fd) != 0 && ok) {
                ok = 0;
                tf_error_set(&err, TF_ERR_IO, "cannot write '%s': %s; it was left as it was",
                             path, strerror(errno));
            }
            if (ok)
                ok = tf_replace_finish(&r, path, &err) == 0;
        }
        tf_replace_discard(&r);
    }
    if (!ok)
        fprintf(stderr, "tunefarm diff: %s\n", err.message);
    return ok ? 0 : -1;
}

int tf_diff_command(int argc, char **argv)
{
    static const struct option longopts[] = {{"run", required_argument, NULL, 'r'},
                                             {"slurm-job", required_argument, NULL, 's'},
                                             {"tolerance", required_argument, NULL, 't'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct tf_diff_options opt;
    tf_diff_defaults(&opt);
    int runs[2] = {-1, -1}, nruns = 0, c;
    const char *report = NULL, *slurm_job = NULL;
    optind = 2;
    while ((c = getopt_long(argc, argv, "r:s:t:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'r': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || end == optarg || v < 0 || v > 1000000000 || nruns == 2) {
                fprintf(stderr, "tunefarm diff: --run wants a run number, at most twice; got "
                                "'%s'\n", optarg);
                return TF_EXIT_USAGE;
            }
            runs[nruns++] = (int)v;
            break;
        }
        case 's':
            if (optarg[0] == '\0' || strlen(optarg) >= 32 || strspn(optarg, "0123456789_+") !=
                strlen(optarg)) {
                fprintf(stderr, "tunefarm diff: --slurm-job wants a Slurm job id (digits, "
                                "as in SLURM_JOB_ID); got '%.40s'\n", optarg);
                return TF_EXIT_USAGE;
            }
            slurm_job = optarg;
            break;
        case 't':
            opt.tolerance = parse_tolerance(optarg);
            if (opt.tolerance == -2) {
                fprintf(stderr, "tunefarm diff: --tolerance %s would be %g%%: write %s%% for a "
                                "percentage, or a fraction below 1 (0.05 is 5%%)\n",
                        optarg, strtod(optarg, NULL) * 100, optarg);
                return TF_EXIT_USAGE;
            }
            if (opt.tolerance < 0) {
                fprintf(stderr, "tunefarm diff: --tolerance wants a fraction or a percentage "
                                "(0.05 or 5%%), got '%s'\n", optarg);
                return TF_EXIT_USAGE;
            }
            break;
        case 'o':
            report = optarg;
            break;
        case 'h':
            fputs(tf_diff_usage, stdout);
            return TF_EXIT_OK;
        default:
            fputs(tf_diff_usage, stderr);
            return TF_EXIT_USAGE;
        }
    }
    if (slurm_job != NULL && nruns == 2) {
        fprintf(stderr, "tunefarm diff: --slurm-job names run B: give --run once (run A) "
                        "with it, not twice\n");
        return TF_EXIT_USAGE;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "tunefarm diff: expected one archive, got %d arguments\n\n%s",
                argc - optind, tf_diff_usage);
        return TF_EXIT_USAGE;
    }
    const char *path = argv[optind];
    struct tf_error err = {0};
    struct tf_journal_replay replay;
    struct tf_archive *a = tf_journal_read_archive(path, &replay, &err);
    if (a == NULL) {
        tf_error_print(&err, "tunefarm diff", stderr);
        return TF_EXIT_USAGE;
    }
    int ra = nruns == 2 ? runs[0] : -1, rb = nruns == 2 ? runs[1] : nruns == 1 ? runs[0] : -1;
    if (slurm_job != NULL) {
        ra = nruns == 1 ? runs[0] : -1;
        rb = -1;
    }
    if ((slurm_job != NULL && tf_diff_run_of_slurm_job(a, slurm_job, &rb, &err) != 0) ||
        tf_diff_pick_runs(a, &ra, &rb, &err) != 0) {
        fprintf(stderr, "tunefarm diff: %s: %s\n", path, err.message);
        tf_archive_destroy(a);
        return TF_EXIT_USAGE;
    }
    /* Built in memory, then written whole (a report file) or to stdout, with
     * the names, commands and messages the archive chose repaired: no
     * control byte of theirs reaches a terminal (tf_exchange_terminal). */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (out == NULL) {
        fprintf(stderr, "tunefarm diff: out of memory\n");
        tf_archive_destroy(a);
        return TF_EXIT_USAGE;
    }
    fprintf(out, "tunefarm diff %s\n", path);
    if (replay.records > 0)
        fprintf(out, "(with %llu results from its journal, not checkpointed yet)\n",
                (unsigned long long)replay.records);
    struct tf_diff_summary sum;
    const int regressions = tf_diff_report(a, ra, rb, &opt, out, &sum);
    const int code = regressions > 0 ? TF_EXIT_FAILURE : TF_EXIT_OK;
    fprintf(out, "Exit %d: %s\n", code,
            regressions > 0 ? "a regression" : "no regression");
    tf_archive_destroy(a);
    fclose(out);
    char *shown = tf_xmalloc(len + 1);
    tf_exchange_terminal(text, shown, len + 1);
    free(text);
    if (report == NULL) {
        fputs(shown, stdout);
        free(shown);
        return code;
    }
    const int written = write_report(report, shown, strlen(shown));
    free(shown);
    if (written != 0)
        return TF_EXIT_USAGE;
    printf("%s: runs %d -> %d: %d group%s compared, %d with a regression; report %s\n", path, ra,
           rb, sum.groups, sum.groups == 1 ? "" : "s", sum.regressions, report);
    return code;
}
