/* fuzz_import.c - libFuzzer target: `tunefarm import` (schema/import.h) on
 * arbitrary file bytes, and the exports of what it accepts.
 *
 * Each input is written to a private file (in /dev/shm when it exists) and
 * imported, once with no options and once naming a device and a kernel (so
 * files lacking them get further). A refusal must say why. A file that imports
 * must give a model of one kernel, device and run whose rows are in range, that
 * merges into an empty archive, and that exports to every format; its Kernel
 * Tuner cache and T4 exports must import again into the same kernel (merging
 * them back into the model must not be refused) with the same configurations,
 * and the T4 one with the same statuses. Seeds (tests/fuzz/corpus/import):
 * small caches and T4 files, gzip'd and plain, from Kernel Tuner's layout and
 * tunefarm's own export. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "schema/archive.h"
#include "schema/export.h"
#include "schema/import.h"

/* A broken property: say which, then abort (libFuzzer keeps the input). */
#define CHECK_FAILED(what) (fprintf(stderr, "fuzz_import: %s\n", what), FUZZ_ABORT())

static char path[256], out[256], meta[300];

static void cleanup(void)
{
    if (path[0]) {
        unlink(path);
        unlink(out);
        unlink(meta);
    }
}

static void make_paths(void)
{
    struct stat st;
    const char *dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/tf_fuzz_import.%ld.json", dir, (long)getpid());
    snprintf(out, sizeof out, "%s/tf_fuzz_import_out.%ld.json", dir, (long)getpid());
    tf_export_metadata_path(out, meta, sizeof meta);
    atexit(cleanup);
}

/* The rows of `a`'s only kernel, by configuration (import sorts them). */
static void check_model(const struct tf_archive *a, const struct tf_import_info *info)
{
    if (a->nkernels != 1 || a->ndevices != 1 || a->nruns != 1 || a->kernels[0].nproblems != 1)
        CHECK_FAILED("an import is one kernel, problem, device and run");
    const struct tf_archive_kernel *ak = &a->kernels[0];
    if (ak->nrows != info->rows || ak->nrows == 0)
        CHECK_FAILED("rows counted wrong");
    uint64_t cart = 1;
    for (int p = 0; p < ak->nparams; p++)
        cart = cart > UINT64_MAX / (uint64_t)ak->params[p].count ? UINT64_MAX
                                                                 : cart * (uint64_t)ak->params[p].count;
    for (uint64_t i = 0; i < ak->nrows; i++) {
        const struct tf_archive_row *r = &ak->rows[i];
        if (r->run != 0 || r->device != 0 || r->r.problem != 0 || r->r.config >= cart ||
            r->r.status >= TF_STATUS_COUNT || (i > 0 && r->r.config <= ak->rows[i - 1].r.config))
            CHECK_FAILED("a row out of range, or two of one configuration");
    }
}

/* Export `a` as `format` to `out`, import that, and compare. */
static void round_trip(const struct tf_archive *a, enum tf_export_format format)
{
    struct tf_error err = {0};
    struct tf_export_options eo = {.format = format, .run = -1};
    if (tf_export_to_path(a, &eo, out, &err) != 0)
        CHECK_FAILED("an imported file does not export as a T4 / Kernel Tuner file");
    struct tf_import_info info;
    struct tf_import_options none = {0};
    struct tf_archive *b = tf_import_file(out, &none, &info, &err);
    if (b == NULL) {
        fprintf(stderr, "re-import refused: %s\n", err.message);
        CHECK_FAILED("tunefarm's own export does not import");
    }
    const struct tf_archive_kernel *x = &a->kernels[0], *y = &b->kernels[0];
    if (x->nrows != y->nrows)
        CHECK_FAILED("the round trip changed the number of rows");
    for (uint64_t i = 0; i < x->nrows; i++)
        if (x->rows[i].r.config != y->rows[i].r.config ||
            (format == TF_EXPORT_T4 && x->rows[i].r.status != y->rows[i].r.status))
            CHECK_FAILED("the round trip changed a configuration or a status");
    /* The same kernel: merging the re-import into a copy of the model is not refused. */
    struct tf_archive *dst = tf_archive_create();
    struct tf_archive_merge_stats st;
    if (tf_archive_merge(dst, a, &st, &err) != 0 || tf_archive_merge(dst, b, &st, &err) != 0) {
        fprintf(stderr, "merge refused: %s\n", err.message);
        CHECK_FAILED("the round trip changed the kernel's shape");
    }
    tf_archive_destroy(dst);
    tf_archive_destroy(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0])
        make_paths();
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    static const struct tf_import_options with[2] = {
        {0}, {.device = "Fuzz GPU", .vendor = "NVIDIA", .kernel = "fuzz", .problem = "p"}};
    for (int k = 0; k < 2; k++) {
        struct tf_error err = {0};
        struct tf_import_info info;
        struct tf_archive *a = tf_import_file(path, &with[k], &info, &err);
        if (a == NULL) {
            if (err.message[0] == '\0')
                CHECK_FAILED("refused without saying why");
            continue;
        }
        check_model(a, &info);
        struct tf_archive *dst = tf_archive_create();
        struct tf_archive_merge_stats st;
        if (tf_archive_merge(dst, a, &st, &err) != 0)
            CHECK_FAILED("an import does not merge into an empty archive");
        tf_archive_destroy(dst);
        FILE *null = fopen("/dev/null", "w");
        for (int fmt = TF_EXPORT_CSV; fmt <= TF_EXPORT_KTCACHE; fmt++) {
            struct tf_export_options eo = {.format = (enum tf_export_format)fmt, .run = -1};
            if (tf_export_write(a, &eo, null, &err) != 0)
                CHECK_FAILED("an imported file does not export");
        }
        fclose(null);
        round_trip(a, TF_EXPORT_KTCACHE);
        round_trip(a, TF_EXPORT_T4);
        tf_archive_destroy(a);
    }
    return 0;
}
