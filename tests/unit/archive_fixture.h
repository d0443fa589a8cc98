/* archive_fixture.h - hand-built kernels, devices and runs for the unit tests
 * of the archive model (test_archive.c) and of the reports read from it
 * (test_report.c). Kernels are built without the kernel.yaml loader, their
 * constraints compiled with the real expression compiler; every tf_kernel
 * field points into the test_kernel's own storage. Include after cmocka.h. */
#ifndef TF_TEST_ARCHIVE_FIXTURE_H
#define TF_TEST_ARCHIVE_FIXTURE_H

#include <string.h>

#include "../../schema/archive.h"
#include "../../schema/expr.h"

/* A hand-built kernel: tf_kernel fields point into this storage. */
struct test_kernel {
    struct tf_kernel k;
    struct tf_param params[4];
    int64_t ints[4][8];
    char *strings[4][8];
    char *size_names[4];
    struct tf_problem problems[4];
    int64_t sizes[4][4];
    struct tf_expr *constraints[4];
    char *metric_names[4];
    uint64_t defaults[4];
};

static inline void tk_param_int(struct test_kernel *t, const char *name, int n, const int64_t *v)
{
    int i = t->k.nparams++;
    t->params[i] = (struct tf_param){.name = (char *)name, .kind = TF_PARAM_INT, .count = n,
                                     .ints = t->ints[i]};
    memcpy(t->ints[i], v, (size_t)n * sizeof *v);
    t->k.params = t->params;
}

static inline void tk_param_enum(struct test_kernel *t, const char *name, int n, const char *const *v)
{
    int i = t->k.nparams++;
    t->params[i] = (struct tf_param){.name = (char *)name, .kind = TF_PARAM_ENUM, .count = n,
                                     .strings = t->strings[i]};
    for (int j = 0; j < n; j++)
        t->strings[i][j] = (char *)v[j];
    t->k.params = t->params;
}

static inline void tk_problem(struct test_kernel *t, const char *name, const int64_t *sizes)
{
    int i = t->k.nproblems++;
    t->problems[i].name = (char *)name;
    t->problems[i].sizes = t->sizes[i];
    memcpy(t->sizes[i], sizes, (size_t)t->k.nsizes * sizeof *sizes);
    t->k.problems = t->problems;
}

static inline void tk_constraint(struct test_kernel *t, const char *text)
{
    struct tf_symbol syms[8];
    int n = 0;
    for (int i = 0; i < t->k.nparams; i++) {
        const struct tf_param *p = &t->params[i];
        syms[n++] = (struct tf_symbol){.name = p->name, .slot = i,
                                       .enum_values = p->kind == TF_PARAM_ENUM
                                                          ? (const char *const *)p->strings
                                                          : NULL,
                                       .enum_count = p->kind == TF_PARAM_ENUM ? p->count : 0};
    }
    struct tf_symtab st = {syms, n};
    struct tf_error err = {0};
    struct tf_expr *e = tf_expr_compile(text, &st, &err);
    if (e == NULL)
        fail_msg("constraint '%s': %s", text, err.message);
    t->constraints[t->k.nconstraints++] = e;
    t->k.constraints = t->constraints;
}

/* A default per problem, as a loaded kernel whose default follows the sizes has
 * it: kernel-wide (has_default) only when every problem's is the same. */
static inline void tk_defaults(struct test_kernel *t, const uint64_t *per_problem)
{
    memcpy(t->defaults, per_problem, (size_t)t->k.nproblems * sizeof *per_problem);
    t->k.problem_defaults = t->defaults;
    t->k.has_default = true;
    for (int p = 1; p < t->k.nproblems; p++)
        if (per_problem[p] != per_problem[0])
            t->k.has_default = false;
    t->k.default_index = t->k.has_default ? per_problem[0] : 0;
}

static inline void tk_free(struct test_kernel *t)
{
    for (int i = 0; i < t->k.nconstraints; i++)
        tf_expr_destroy(t->constraints[i]);
}

/* gemm: BM {16,32,64} x BN {32,64} x LAYOUT {row,col}; sizes M,N,K; metric gflops. */
static inline void make_gemm(struct test_kernel *t)
{
    memset(t, 0, sizeof *t);
    t->k.name = "gemm";
    static const int64_t bm[] = {16, 32, 64}, bn[] = {32, 64};
    static const char *const layout[] = {"row", "col"};
    tk_param_int(t, "BM", 3, bm);
    tk_param_int(t, "BN", 2, bn);
    tk_param_enum(t, "LAYOUT", 2, layout);
    t->size_names[0] = "M";
    t->size_names[1] = "N";
    t->size_names[2] = "K";
    t->k.nsizes = 3;
    t->k.size_names = t->size_names;
    tk_problem(t, "small", (const int64_t[]){64, 64, 64});
    tk_problem(t, "large", (const int64_t[]){4096, 4096, 1024});
    tk_constraint(t, "BM * BN <= 2048");
    tk_constraint(t, "LAYOUT == \"row\" || BM >= 32");
    t->metric_names[0] = "gflops";
    t->k.nmetrics = 1;
    t->k.metric_names = t->metric_names;
    t->k.has_default = true;
    t->k.default_index = 5;
    memset(t->k.source_hash, 'a', 64);
}

/* vecadd: VEC {1,2,4}; size N; no constraints, no metrics, no default. */
static inline void make_vecadd(struct test_kernel *t)
{
    memset(t, 0, sizeof *t);
    t->k.name = "vecadd";
    static const int64_t vec[] = {1, 2, 4};
    tk_param_int(t, "VEC", 3, vec);
    t->size_names[0] = "N";
    t->k.nsizes = 1;
    t->k.size_names = t->size_names;
    tk_problem(t, "n1m", (const int64_t[]){1 << 20});
    memset(t->k.source_hash, 'b', 64);
}

static inline struct tf_device make_device(const char *backend, const char *name, const char *uuid,
                                    const char *host)
{
    struct tf_device d;
    memset(&d, 0, sizeof d);
    tf_strlcpy(d.backend, backend, sizeof d.backend);
    tf_strlcpy(d.vendor, "NVIDIA", sizeof d.vendor);
    tf_strlcpy(d.name, name, sizeof d.name);
    tf_strlcpy(d.arch, "sm_90", sizeof d.arch);
    tf_strlcpy(d.uuid, uuid, sizeof d.uuid);
    tf_strlcpy(d.pci_bus, "0000:17:00.0", sizeof d.pci_bus);
    tf_strlcpy(d.host, host, sizeof d.host);
    d.memory_bytes = 85899345920ull;
    d.compute_units = 132;
    tf_strlcpy(d.driver_version, "550.54.15", sizeof d.driver_version);
    tf_strlcpy(d.runtime_version, "12.4", sizeof d.runtime_version);
    tf_strlcpy(d.compiler_version, "NVRTC 12.4.99", sizeof d.compiler_version);
    for (int p = 0; p < TF_DEVPROP_COUNT; p++)
        d.props[p] = 1000 * (p + 1) + (int64_t)strlen(uuid);
    return d;
}

static inline struct tf_archive_run make_run(const char *job, double start, double end)
{
    struct tf_archive_run r;
    memset(&r, 0, sizeof r);
    tf_strlcpy(r.job_name, job, sizeof r.job_name);
    memset(r.job_hash, 'f', 64);
    r.start = start;
    r.end = end;
    tf_strlcpy(r.command, "tunefarm run jobs/demo.yaml --archive results/demo.h5",
               sizeof r.command);
    tf_strlcpy(r.slurm_job_id, end > 0 ? "4242" : "", sizeof r.slurm_job_id);
    r.ranks = 9;
    tf_strlcpy(r.tunefarm_version, "0.1.0", sizeof r.tunefarm_version);
    return r;
}

#endif
