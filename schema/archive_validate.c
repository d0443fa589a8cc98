/* archive_validate.c - what an archive model must satisfy to be written and read back.
 *
 * The writer refuses a model that would not read back instead of writing a
 * file that tunefarm itself would reject; tf_archive_kernel_for refuses a
 * kernel it could not lay out; the reader checks a kernel group as read with
 * the same rules. A kernel must have a name that can name an HDF5 group,
 * values for every parameter, enum values that fit their column, at most
 * TF_MAX_METRICS metrics, and parameter, size and metric names that collide
 * with no other column (found by building its tables with archive_layout.c).
 * A model must have distinct kernel names and every reference in range: plan
 * rows, sessions, session devices, run kernels, problem defaults, and each
 * result row's run, device, problem, configuration and status. */
#include "archive_internal.h"

#include <string.h>

#include "archive_layout.h"
#include "status.h"

/* Everything about a kernel entry that the layout needs, shared by kernel_for,
 * the writer (never write what we cannot read) and the reader. */
int tf_archive_kernel_validate(const struct tf_archive_kernel *ak, const char *file,
                               struct tf_error *err)
{
    if (ak->name == NULL || ak->name[0] == '\0' || strchr(ak->name, '/') != NULL ||
        strcmp(ak->name, ".") == 0 || strcmp(ak->name, "..") == 0)
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "%s: kernel name '%s' cannot name an archive group (no '/', not "
                            "empty, not '.' or '..')", file, ak->name ? ak->name : "");
    if (ak->nparams < 0 || ak->nsizes < 0 || ak->nconstraints < 0 || ak->nmetrics < 0)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: kernel '%s' has negative counts", file,
                            ak->name);
    const char *what = strlen(ak->name) > TF_ARCHIVE_NAME_LEN ? "kernel" : NULL, *name = ak->name;
    for (int i = 0; !what && i < ak->nparams; i++)
        if (strlen(name = ak->params[i].name) > TF_ARCHIVE_NAME_LEN)
            what = "parameter";
    for (int i = 0; !what && i < ak->nsizes; i++)
        if (strlen(name = ak->size_names[i]) > TF_ARCHIVE_NAME_LEN)
            what = "size";
    for (int i = 0; !what && i < ak->nmetrics; i++)
        if (strlen(name = ak->metric_names[i]) > TF_ARCHIVE_NAME_LEN)
            what = "metric";
    if (what)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s: %s name '%.40s...' is %zu bytes long; an "
                            "archive keeps names of at most %d bytes: shorten it",
                            file, what, name, strlen(name), TF_ARCHIVE_NAME_LEN);
    if (ak->nmetrics > TF_MAX_METRICS)
        return tf_error_set(err, TF_ERR_SCHEMA,
                            "%s: kernel '%s' has %d metrics; at most %d are archived", file,
                            ak->name, ak->nmetrics, TF_MAX_METRICS);
    for (int i = 0; i < ak->nparams; i++) {
        const struct tf_param *p = &ak->params[i];
        if (p->count < 1)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: kernel '%s' parameter '%s' has no values",
                                file, ak->name, p->name);
        if (p->kind == TF_PARAM_ENUM)
            for (int v = 0; v < p->count; v++)
                if (strlen(p->strings[v]) > TF_ARCHIVE_ENUM_LEN)
                    return tf_error_set(err, TF_ERR_SCHEMA,
                                        "%s: kernel '%s' parameter '%s' value '%s' is longer "
                                        "than %d bytes, the width of its results column",
                                        file, ak->name, p->name, p->strings[v],
                                        TF_ARCHIVE_ENUM_LEN);
    }
    struct tf_table t;
    struct tf_results_cols c;
    int rc = tf_layout_results(&t, &c, ak, file, TF_RESULTS_ALL, err);
    tf_table_free(&t);
    if (rc == 0) {
        rc = tf_layout_problems(&t, ak, file, 1, err);
        tf_table_free(&t);
    }
    return rc;
}

int tf_archive_model_validate(const struct tf_archive *a, const char *path, struct tf_error *err)
{
    for (int i = 0; i < a->nplans; i++) {
        const struct tf_archive_plan *p = &a->plans[i];
        if (p->run >= (uint32_t)a->nruns || p->kernel >= (uint32_t)a->nkernels ||
            p->device >= (uint32_t)a->ndevices ||
            p->problem >= (uint32_t)a->kernels[p->kernel].nproblems)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: plan row %d is out of range (not "
                                "written; the archive model is inconsistent)", path, i);
    }
    for (int i = 0; i < a->nsessions; i++)
        if (a->sessions[i].run >= (uint32_t)a->nruns)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: session %d names run %u, which is out "
                                "of range (not written; the archive model is inconsistent)",
                                path, i, a->sessions[i].run);
    for (int i = 0; i < a->nsession_devices; i++)
        if (a->session_devices[i].session >= (uint32_t)a->nsessions ||
            a->session_devices[i].device >= (uint32_t)a->ndevices)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: session device row %d is out of range "
                                "(not written; the archive model is inconsistent)", path, i);
    for (int i = 0; i < a->nrun_kernels; i++)
        if (a->run_kernels[i].run >= (uint32_t)a->nruns ||
            a->run_kernels[i].kernel >= (uint32_t)a->nkernels)
            return tf_error_set(err, TF_ERR_SCHEMA, "%s: run kernel row %d is out of range (not "
                                "written; the archive model is inconsistent)", path, i);
    for (int k = 0; k < a->nkernels; k++) {
        const struct tf_archive_kernel *ak = &a->kernels[k];
        if (tf_archive_kernel_validate(ak, path, err) != 0)
            return -1;
        for (int j = 0; j < k; j++)
            if (strcmp(a->kernels[j].name, ak->name) == 0)
                return tf_error_set(err, TF_ERR_SCHEMA, "%s: two archive kernels named '%s'",
                                    path, ak->name);
        uint64_t cart = tf_archive_cartesian(ak);
        for (int p = 0; p < ak->nproblems; p++)
            if (ak->problems[p].has_default && ak->problems[p].default_index >= cart)
                return tf_error_set(err, TF_ERR_SCHEMA,
                                    "%s: kernel '%s' problem %d has an out-of-range default "
                                    "%llu (not written; the archive model is inconsistent)",
                                    path, ak->name, p,
                                    (unsigned long long)ak->problems[p].default_index);
        for (uint64_t i = 0; i < ak->nrows; i++) {
            const struct tf_archive_row *r = &ak->rows[i];
            const char *bad = r->run >= (uint32_t)a->nruns           ? "run"
                              : r->device >= (uint32_t)a->ndevices    ? "device"
                              : r->r.problem >= (uint32_t)ak->nproblems ? "problem"
                              : r->r.config >= cart                   ? "config"
                              : r->r.status >= TF_STATUS_COUNT        ? "status"
                                                                      : NULL;
            if (bad)
                return tf_error_set(err, TF_ERR_SCHEMA,
                                    "%s: kernel '%s' row %llu has an out-of-range %s (not "
                                    "written; the archive model is inconsistent)",
                                    path, ak->name, (unsigned long long)i, bad);
        }
    }
    return 0;
}
