/* tools/exchange_tool.c - `tunefarm export` and `tunefarm import`: the archive as a dataset.
 *
 * Thin commands over schema/export.h and schema/import.h. Export reads the
 * archive with its journal (a run going on, or one that was killed, has
 * results there that belong to the archive) and writes a file atomically.
 * Import is a merge (schema/archive.h, tf_archive_merge) of models read from
 * the files, done the way `tunefarm merge` does it: every file is read and
 * checked first, then the archive's journal is locked (no run writes the
 * archive meanwhile), its records folded in, the models merged (a kernel that
 * does not match changes nothing) and the archive written once, atomically,
 * as a new checkpoint. */
#include "exchange_tool.h"

#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../coordinator/coordinator.h"
#include "../coordinator/journal.h"
#include "../schema/replace.h"
#include "../schema/export.h"
#include "../schema/import.h"

const char tf_usage_export[] =
    "usage: tunefarm export ARCHIVE --format csv|json|t4|kt-cache [-o FILE]\n"
    "                       [--kernel K] [--problem P] [--device D] [--run N]\n"
    "\n"
    "Write an archive's results (with those still in its journal) in a format\n"
    "other tools read (schema/export.md says what maps to what):\n"
    "  csv       one row per result, every column: parameters by name, status by\n"
    "            name, the device (name, arch, vendor, host) and run (start, job)\n"
    "            joined in; NaN is an empty field. pandas.read_csv reads it as is.\n"
    "  json      the archive's metadata (devices, runs, kernels with their\n"
    "            parameter space and problems) and results, as one document\n"
    "  t4        the autotuning community's T4 results format; with -o FILE.json\n"
    "            its metadata goes to FILE.metadata.json\n"
    "  kt-cache  a Kernel Tuner cache file: kernel_tuner.tune_cache() (simulation\n"
    "            mode) runs a search strategy on it\n"
    "A T4 or Kernel Tuner file holds one kernel and problem on one device class,\n"
    "one entry per configuration (of several rows of one configuration: the strict\n"
    "re-measurement, then the latest run): narrow the selection with the options.\n"
    "\n"
    "options:\n"
    "  -f, --format F      csv, json, t4 or kt-cache (required)\n"
    "  -o, --output FILE   write FILE (atomically) instead of standard output\n"
    "  -k, --kernel K      only kernel K\n"
    "  -p, --problem P     only problems named P\n"
    "  -d, --device D      only devices whose name, architecture or class\n"
    "                      (backend/arch/name) is D\n"
    "  -r, --run N         only run N (0-based, see tunefarm status)\n"
    "  -h, --help          this text\n"
    "\n"
    "exit codes: 0 written; 1 FILE could not be written (nothing left behind); 2\n"
    "bad arguments, an unreadable archive, or a selection a format cannot hold.\n";

const char tf_usage_import[] =
    "usage: tunefarm import ARCHIVE FILE... [--device NAME] [--arch A] [--vendor V]\n"
    "                       [--kernel K] [--problem P] [-q]\n"
    "\n"
    "Add Kernel Tuner cache files (.json, .json.gz) and T4 results files to\n"
    "ARCHIVE (created if missing). Each FILE becomes a run of its own (job\n"
    "'import:FILE') with one row per configuration: the kernel with the file's\n"
    "parameters and values, the device the file names, failed configurations\n"
    "with their status (InvalidConfig -> invalid, CompilationFailedConfig ->\n"
    "compile_error, RuntimeFailedConfig -> runtime_error; T4's invalidity alike),\n"
    "the times (mean; median, min and spread from the samples where the file has\n"
    "them) and the compile and benchmark times. Importing a file again adds\n"
    "nothing. Every file is read and checked before ARCHIVE is touched; ARCHIVE\n"
    "is written once, atomically, and a file whose kernel does not match the\n"
    "archive's changes nothing. schema/import.md has the mapping.\n"
    "\n"
    "options (they apply to every FILE):\n"
    "  -d, --device NAME   the device's name (a file without one needs it)\n"
    "  -a, --arch A        its architecture (sm_80, gfx90a, ...); files rarely say\n"
    "  -V, --vendor V      its vendor (NVIDIA, AMD, ...); default: from the name\n"
    "  -k, --kernel K      the kernel's name (a T4 file has none of its own)\n"
    "  -p, --problem P     the problem's name (default: the sizes, 4096x4096)\n"
    "  -q, --quiet         print nothing on success\n"
    "  -h, --help          this text\n"
    "\n"
    "exit codes: 0 imported (also when only its report could not be printed); 1\n"
    "ARCHIVE could not be written, or a run is writing it (it is as it was); 2\n"
    "bad arguments, a file that is not a valid cache or T4 file, an unreadable\n"
    "archive, or a kernel that does not match the archive's: nothing written.\n";

static int parse_run(const char *s, const char *cmd, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end || v < 0 || v > INT_MAX) {
        fprintf(stderr, "tunefarm %s: --run wants a run number (0, 1, ...), got '%s'\n", cmd, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int tf_cmd_export(int argc, char **argv)
{
    static const struct option longopts[] = {{"format", required_argument, NULL, 'f'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"kernel", required_argument, NULL, 'k'},
                                             {"problem", required_argument, NULL, 'p'},
                                             {"device", required_argument, NULL, 'd'},
                                             {"run", required_argument, NULL, 'r'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct tf_export_options o = {.run = -1};
    const char *output = NULL, *format = NULL;
    int c;
    optind = 2;
    while ((c = getopt_long(argc, argv, "f:o:k:p:d:r:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            format = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'k':
            o.kernel = optarg;
            break;
        case 'p':
            o.problem = optarg;
            break;
        case 'd':
            o.device = optarg;
            break;
        case 'r':
            if (parse_run(optarg, "export", &o.run) != 0)
                return TF_EXIT_USAGE;
            break;
        case 'h':
            fputs(tf_usage_export, stdout);
            return TF_EXIT_OK;
        default:
            fputs(tf_usage_export, stderr);
            return TF_EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || format == NULL) {
        if (format == NULL)
            fprintf(stderr, "tunefarm export: --format is missing\n\n%s", tf_usage_export);
        else if (optind >= argc)
            fprintf(stderr, "tunefarm export: the archive is missing\n\n%s", tf_usage_export);
        else
            fprintf(stderr, "tunefarm export: expected one archive, found also '%s' (quote a "
                    "name with spaces: --device \"NVIDIA RTX A4000\")\n\n%s",
                    argv[optind + 1], tf_usage_export);
        return TF_EXIT_USAGE;
    }
    int f = tf_export_format_from_name(format);
    if (f < 0) {
        fprintf(stderr, "tunefarm export: --format '%s' is none of csv, json, t4, kt-cache\n",
                format);
        return TF_EXIT_USAGE;
    }
    o.format = (enum tf_export_format)f;
    o.archive_path = argv[optind];
    struct tf_error err = {0};
    struct tf_journal_replay replay;
    struct tf_archive *a = tf_journal_read_archive(o.archive_path, &replay, &err);
    if (a == NULL || tf_export_check(a, &o, &err) != 0) {
        tf_error_print(&err, "tunefarm export", stderr);
        tf_archive_destroy(a);
        return TF_EXIT_USAGE;
    }
    int code = TF_EXIT_OK;
    if (output != NULL ? tf_export_to_path(a, &o, output, &err) != 0
                       : tf_export_write(a, &o, stdout, &err) != 0) {
        tf_error_print(&err, "tunefarm export", stderr);
        code = err.code == TF_ERR_IO ? TF_EXIT_FAILURE : TF_EXIT_USAGE;
    }
    tf_archive_destroy(a);
    return code;
}


/* The run of `a` that imported the same bytes as the single run of `model`
 * into the same kernel, problem and device class (a copy of the file under
 * another name or folder, imported with the same effect), or -1. Compared by
 * effect, not by the command's text: option values may hold spaces. */
static int imported_before(const struct tf_archive *a, const struct tf_archive *model)
{
    const struct tf_archive_run *m = &model->runs[0];
    const struct tf_archive_kernel *mk = &model->kernels[0];
    const struct tf_archive_kernel *k = tf_archive_find_kernel(a, mk->name);
    if (k == NULL || mk->nproblems < 1 || model->ndevices < 1 ||
        strncmp(m->job_name, "import:", 7) != 0)
        return -1;
    char mclass[256], xclass[256];
    tf_device_class_key(&model->devices[0], mclass, sizeof mclass);
    for (int r = 0; r < a->nruns; r++) {
        const struct tf_archive_run *x = &a->runs[r];
        if (strcmp(x->job_hash, m->job_hash) != 0 || strncmp(x->job_name, "import:", 7) != 0)
            continue;
        for (uint64_t i = 0; i < k->nrows; i++) {
            const struct tf_archive_row *row = &k->rows[i];
            if (row->run != (uint32_t)r ||
                strcmp(k->problems[row->r.problem].name, mk->problems[0].name) != 0)
                continue;
            tf_device_class_key(&a->devices[row->device], xclass, sizeof xclass);
            if (strcmp(xclass, mclass) == 0)
                return r;
            break; /* an import is one kernel, problem and device */
        }
    }
    return -1;
}

/* "ok 4201, runtime_error 155" of a file's rows. */
static void status_counts(const struct tf_import_info *info, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int s = 0; s < TF_STATUS_COUNT && used < cap; s++)
        if (info->by_status[s])
            used += (size_t)snprintf(out + used, cap - used, "%s%s %llu", used ? ", " : "",
                                     tf_status_name(s), (unsigned long long)info->by_status[s]);
}

int tf_cmd_import(int argc, char **argv)
{
    static const struct option longopts[] = {{"device", required_argument, NULL, 'd'},
                                             {"arch", required_argument, NULL, 'a'},
                                             {"vendor", required_argument, NULL, 'V'},
                                             {"kernel", required_argument, NULL, 'k'},
                                             {"problem", required_argument, NULL, 'p'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct tf_import_options o = {0};
    bool quiet = false;
    int c;
    optind = 2;
    while ((c = getopt_long(argc, argv, "d:a:V:k:p:qh", longopts, NULL)) != -1) {
        if (strchr("daVkp", c) && optarg[0] == '\0') {
            fprintf(stderr, "tunefarm import: -%c/--%s needs a name, found an empty one\n",
                    c, c == 'd' ? "device" : c == 'a' ? "arch" : c == 'V' ? "vendor"
                       : c == 'k' ? "kernel" : "problem");
            return TF_EXIT_USAGE;
        }
        switch (c) {
        case 'd':
            o.device = optarg;
            break;
        case 'a':
            o.arch = optarg;
            break;
        case 'V':
            o.vendor = optarg;
            break;
        case 'k':
            o.kernel = optarg;
            break;
        case 'p':
            o.problem = optarg;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            fputs(tf_usage_import, stdout);
            return TF_EXIT_OK;
        default:
            fputs(tf_usage_import, stderr);
            return TF_EXIT_USAGE;
        }
    }
    if (argc - optind < 2) {
        fprintf(stderr, "tunefarm import: expected an archive and at least one file\n\n%s",
                tf_usage_import);
        return TF_EXIT_USAGE;
    }
    const char *path = argv[optind];
    const int nfiles = argc - optind - 1;
    char *const *files = argv + optind + 1;
    struct tf_error err = {0};
    struct tf_archive **models = tf_xcalloc((size_t)nfiles, sizeof *models);
    struct tf_import_info *info = tf_xcalloc((size_t)nfiles, sizeof *info);
    struct tf_archive *out = NULL;
    struct tf_journal *journal = NULL;
    struct tf_journal_replay replay;
    struct stat st;
    char jpath[4200];
    tf_journal_path(path, jpath, sizeof jpath);
    int code = TF_EXIT_USAGE;
    char *report = NULL;
    size_t report_len = 0;
    FILE *rep = open_memstream(&report, &report_len);
    if (rep == NULL)
        tf_die("out of memory");
    /* Every file first: a bad one stops the import before the archive is touched. */
    for (int i = 0; i < nfiles; i++) {
        if (tf_same_file(files[i], path)) {
            tf_error_set(&err, TF_ERR_SCHEMA, "%s is the archive: name the files to import "
                         "after it", files[i]);
            goto fail;
        }
        if ((models[i] = tf_import_file(files[i], &o, &info[i], &err)) == NULL)
            goto fail;
    }
    /* The lock keeps a run (or a merge) from writing the archive meanwhile;
     * its journal's records belong to the archive and are folded in. */
    const bool is_new = stat(path, &st) != 0;
    if (is_new && stat(jpath, &st) == 0 && st.st_size >= 8) {
        tf_error_set(&err, TF_ERR_SCHEMA, "journal '%s' is there but its archive '%s' is not: "
                     "the archive was removed or moved away. Put it back, or move the journal "
                     "away", jpath, path);
        goto fail;
    }
    if ((journal = tf_journal_open(path, &err)) == NULL) {
        code = TF_EXIT_FAILURE; /* the archive cannot be written now; it is as it was */
        goto fail;
    }
    out = is_new ? tf_archive_create() : tf_archive_read(path, &err);
    if (out == NULL || tf_journal_replay(journal, path, out, &replay, &err) != 0)
        goto fail;
    tf_archive_ensure_id(out);
    for (int i = 0; i < nfiles; i++) {
        struct tf_archive_merge_stats ms;
        const struct tf_archive_kernel *k = &models[i]->kernels[0];
        const int copy = imported_before(out, models[i]);
        if (copy >= 0) {
            if (!quiet)
                fprintf(rep, "%s: already in %s as run %d, from %s (the same content, imported with "
                       "the same options): nothing added\n",
                       files[i], path, copy, out->runs[copy].job_name + strlen("import:"));
            continue;
        }
        if (tf_archive_merge(out, models[i], &ms, &err) != 0) {
            size_t len = strlen(err.message);
            snprintf(err.message + len, sizeof err.message - len,
                     " (importing %s into %s; --kernel NAME imports it as another kernel)",
                     files[i], path);
            goto fail;
        }
        if (quiet)
            continue;
        char counts[256], cls[256];
        status_counts(&info[i], counts, sizeof counts);
        tf_device_class_key(&models[i]->devices[0], cls, sizeof cls);
        if (ms.runs == 0)
            fprintf(rep, "%s: already in %s (the same file, imported with the same options): "
                   "nothing added\n", files[i], path);
        else
            fprintf(rep, "%s: %s, kernel '%s', problem '%s', device class %s: %llu configurations "
                   "(%s)\n", files[i], info[i].format, k->name, k->problems[0].name, cls,
                   (unsigned long long)ms.rows, counts);
        if (info[i].note[0])
            fprintf(rep, "%s: note: metrics %s\n", files[i], info[i].note);
    }
    out->checkpoint++;
    if (tf_archive_write(out, path, &err) != 0 || tf_journal_reset(journal, out, NULL, &err) != 0) {
        code = TF_EXIT_FAILURE;
        goto fail;
    }
    if (!quiet)
        fprintf(rep, "%s: %d runs, %d devices, %d kernels\n", path, out->nruns, out->ndevices,
                out->nkernels);
    /* Said once the archive is written: not lines of an import that failed. */
    fflush(rep);
    fwrite(report, 1, report_len, stdout);
    unlink(tf_journal_file(journal)); /* everything is in the archive */
    code = TF_EXIT_OK;
    goto done;
fail:
    tf_error_print(&err, "tunefarm import", stderr);
    if (tf_journal_created(journal))
        unlink(tf_journal_file(journal));
done:
    fclose(rep);
    free(report);
    tf_journal_close(journal);
    tf_archive_destroy(out);
    for (int i = 0; i < nfiles; i++)
        tf_archive_destroy(models[i]);
    free(models);
    free(info);
    return code;
}
