/* test_best.c - `tunefarm best` (tools/best.c) and the choice it shares with
 * `tunefarm query` (tf_report_pick, coordinator/report.c).
 *
 * The archive is report_fixture.h's, written to a real HDF5 file and read
 * back. The choice: strict re-measurements decide over screening, per run
 * and over all runs, and per device class (a class whose run was screened
 * only still has a best). The macros: tf_param_defines of the archived
 * kernel gives the very strings tf_kernel_defines gives a worker's compiler,
 * for every configuration. The header: compiled with the system's cc for
 * each device selection (a named class, a CUDA and an AMD target, this
 * machine's CPU), each problem, and without a selection (#error naming what
 * to define, or FOUND 0 with TUNEFARM_BEST_OPTIONAL), and the program
 * prints the values the fixture makes best. Hostile names must still give a
 * header that compiles. JSON and make output are read back; the command's
 * exit codes are checked. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "../../coordinator/report.h"
#include "../../schema/kernel.h"
#include "../../tools/best.h"
#include "../../tools/outfile.h"
#include "report_fixture.h"

extern char **environ;

static char dir[256];
static char archive_path[300];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/tf-test-best.XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(archive_path, sizeof archive_path, "%s/fixture.h5", dir);
    struct report_fixture f;
    struct tf_error err = {0};
    report_fixture_make(&f);
    int rc = tf_archive_write(f.a, archive_path, &err);
    if (rc != 0)
        fprintf(stderr, "write: %s\n", err.message);
    report_fixture_free(&f);
    return rc;
}

static int teardown(void **state)
{
    (void)state;
    char *argv[] = {"rm", "-rf", dir, NULL};
    pid_t pid;
    if (posix_spawnp(&pid, "rm", NULL, NULL, argv, environ) == 0)
        waitpid(pid, NULL, 0);
    return 0;
}

static struct tf_archive *read_fixture(void)
{
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_read(archive_path, &err);
    if (a == NULL)
        fail_msg("read %s: %s", archive_path, err.message);
    return a;
}

/* Run argv with stdout and stderr into `out_path`; returns the exit status
 * (or 128 + signal). */
static int run(char *const argv[], const char *out_path)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        fail_msg("cannot start %s", argv[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        fail_msg("cannot read %s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static const struct tf_archive_kernel *gemm_of(const struct tf_archive *a)
{
    const struct tf_archive_kernel *ak = tf_archive_find_kernel(a, "gemm");
    assert_non_null(ak);
    return ak;
}

static const char h100[] = "cuda/sm_90/NVIDIA H100 80GB HBM3";
static const char mi250[] = "hip/gfx90a:sramecc+:xnack-/AMD Instinct MI250X";

static void test_pick_strict_decides(void **state)
{
    (void)state;
    struct tf_archive *a = read_fixture();
    const struct tf_archive_kernel *ak = gemm_of(a);
    struct tf_report_pick pk;
    /* every run: the 1.0 ms of night 1, not the screened 0.9 ms of night 2 */
    tf_report_pick(a, ak, 0, -1, h100, &pk);
    assert_non_null(pk.best);
    assert_true(pk.strict);
    assert_int_equal(pk.best->r.config, 7);
    assert_true(fabs(pk.best->r.time_median - 1.0e-3) < 1e-12);
    assert_int_equal(pk.best->run, 0);
    /* the default (5): 1.2 ms single-phase, not its 1.08 ms screening */
    assert_true(fabs(pk.default_time - 1.2e-3) < 1e-12);
    /* night 2 alone: the strict row */
    tf_report_pick(a, ak, 0, 1, h100, &pk);
    assert_int_equal(pk.best->r.phase, 2);
    assert_int_equal(pk.best->r.config, 7);
    assert_true(fabs(pk.best->r.time_median - 1.002e-3) < 1e-12);
    /* ... where the default was only screened: its screening time */
    assert_true(fabs(pk.default_time - 1.2e-3 * 1.002 * 0.9) < 1e-12);
    /* night 3: 30% slower */
    tf_report_pick(a, ak, 0, 2, h100, &pk);
    assert_true(fabs(pk.best->r.time_median - 1.3e-3) < 1e-12);
    /* the other classes, large problem */
    tf_report_pick(a, ak, 1, -1, mi250, &pk);
    assert_false(pk.strict);
    assert_int_equal(pk.best->r.config, 9);
    tf_report_pick(a, ak, 1, -1, "host/x86_64/AMD EPYC 7763", &pk);
    assert_int_equal(pk.best->r.config, 1);
    assert_string_equal(pk.device->name, "AMD EPYC 7763");
    /* a class that was only screened has a best even where another class
     * was re-measured (strict rows decide per class) */
    struct tf_archive_kernel *w = tf_archive_find_kernel(a, "gemm");
    struct tf_archive_row row = w->rows[0];
    row.device = 2; /* the MI250X */
    row.r.problem = 0;
    row.r.config = 4;
    row.r.phase = 1;
    row.r.status = TF_STATUS_OK;
    row.r.time_median = 0.5e-3;
    row.run = 3;
    tf_archive_append(w, &row);
    tf_report_pick(a, w, 0, 3, mi250, &pk);
    assert_non_null(pk.best);
    assert_int_equal(pk.best->r.config, 4);
    tf_archive_destroy(a);
}

static void test_defines_are_the_workers(void **state)
{
    (void)state;
    struct report_fixture f;
    report_fixture_make(&f);
    struct tf_archive *a = read_fixture();
    const struct tf_archive_kernel *ak = gemm_of(a);
    for (uint64_t c = 0; c < 12; c++) {
        char *mine[16], *worker[16];
        int n = tf_param_defines(ak->params, ak->nparams, c, mine, 16);
        int m = tf_kernel_defines(&f.gemm.k, c, worker, 16);
        assert_int_equal(n, m);
        assert_int_equal(n, 4); /* BM, BN, LAYOUT and LAYOUT_<value> */
        for (int i = 0; i < n; i++) {
            assert_string_equal(mine[i], worker[i]);
            free(mine[i]);
            free(worker[i]);
        }
    }
    char *d[16];
    int n = tf_param_defines(ak->params, ak->nparams, 7, d, 16);
    const char *want[] = {"-DBM=32", "-DBN=64", "-DLAYOUT=1", "-DLAYOUT_col=1"};
    for (int i = 0; i < n; i++) {
        assert_string_equal(d[i], want[i]);
        free(d[i]);
    }
    tf_archive_destroy(a);
    report_fixture_free(&f);
}

/* Write kernel `kernel`'s output in `format` (problem -1: all) to dir/name. */
static void write_best(const char *kernel, int problem, enum tf_best_format format,
                       const char *name, int expect_found)
{
    struct tf_archive *a = read_fixture();
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    int found = tf_best_write(a, archive_path, tf_archive_find_kernel(a, kernel), problem, -1,
                              format, out);
    fclose(out);
    assert_int_equal(found, expect_found);
    tf_archive_destroy(a);
}

/* Compile prog.c with the header and `flags` (NULL-terminated); 0 and the
 * program's output in *printed, or the compiler's exit status and its
 * messages in *printed. */
static int compile_and_run(const char *header, const char *const *flags, char **printed)
{
    char hdr[400], prog[400], exe[400], log[400];
    snprintf(hdr, sizeof hdr, "%s/%s", dir, header);
    snprintf(prog, sizeof prog, "%s/prog.c", dir);
    snprintf(exe, sizeof exe, "%s/prog", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    char *argv[32];
    int n = 0;
    argv[n++] = "cc";
    for (int i = 0; flags[i]; i++)
        argv[n++] = (char *)flags[i];
    argv[n++] = "-include";
    argv[n++] = hdr;
    argv[n++] = prog;
    argv[n++] = "-o";
    argv[n++] = exe;
    argv[n] = NULL;
    unlink(exe);
    int rc = run(argv, log);
    if (rc != 0) {
        *printed = slurp(log);
        return rc;
    }
    char *args[] = {exe, NULL};
    assert_int_equal(run(args, log), 0);
    *printed = slurp(log);
    return 0;
}

static void write_prog(const char *text)
{
    char path[400];
    snprintf(path, sizeof path, "%s/prog.c", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* No #include: a test undefines __x86_64__, which the C library's headers need. */
static const char gemm_prog[] =
    "int printf(const char *, ...);\n"
    "int main(void)\n{\n"
    "#if TUNEFARM_BEST_GEMM_FOUND\n"
    "    printf(\"BM=%d BN=%d LAYOUT=%d\", BM, BN, LAYOUT);\n"
    "#ifdef LAYOUT_row\n    printf(\" row\");\n#endif\n"
    "#ifdef LAYOUT_col\n    printf(\" col\");\n#endif\n"
    "#else\n    printf(\"none\");\n#endif\n"
    "    printf(\"\\n\");\n    return 0;\n}\n";

/* Compile with flags; expect the program to print `want`. */
static void expect_values(const char *const *flags, const char *want)
{
    char *printed;
    int rc = compile_and_run("gemm.h", flags, &printed);
    if (rc != 0)
        fail_msg("cc %s ... failed (%d):\n%s", flags[0], rc, printed);
    if (strcmp(printed, want) != 0)
        fail_msg("with %s %s: printed '%s', expected '%s'", flags[0], flags[1] ? flags[1] : "",
                 printed, want);
}

/* Compile with flags; expect a failure whose messages hold `text`. */
static void expect_error(const char *const *flags, const char *text)
{
    char *printed;
    int rc = compile_and_run("gemm.h", flags, &printed);
    if (rc == 0 || strstr(printed, text) == NULL)
        fail_msg("with %s: exit %d, expected a compile error saying '%s':\n%s", flags[0], rc,
                 text, printed);
}

static void test_header_selects_by_device(void **state)
{
    (void)state;
    write_best("gemm", -1, TF_BEST_HEADER, "gemm.h", 6);
    write_prog(gemm_prog);
    /* named classes: the H100s' and the MI250X's bests differ */
    expect_values((const char *[]){"-DTUNEFARM_DEVICE_CUDA_SM_90_NVIDIA_H100_80GB_HBM3",
                                   "-DTUNEFARM_PROBLEM_SMALL", NULL},
                  "BM=32 BN=64 LAYOUT=1 col\n");
    expect_values(
        (const char *[]){"-DTUNEFARM_DEVICE_HIP_GFX90A_SRAMECC_XNACK_AMD_INSTINCT_MI250X",
                         "-DTUNEFARM_PROBLEM_SMALL", NULL},
        "BM=16 BN=64 LAYOUT=0 row\n");
    expect_values(
        (const char *[]){"-DTUNEFARM_DEVICE_HIP_GFX90A_SRAMECC_XNACK_AMD_INSTINCT_MI250X",
                         "-DTUNEFARM_PROBLEM_LARGE", NULL},
        "BM=64 BN=32 LAYOUT=1 col\n");
    expect_values((const char *[]){"-DTUNEFARM_DEVICE_HOST_X86_64_AMD_EPYC_7763",
                                   "-DTUNEFARM_PROBLEM_LARGE", NULL},
                  "BM=16 BN=32 LAYOUT=1 col\n");
    /* the compiler's target: a CUDA device pass, an AMD one */
    expect_values((const char *[]){"-D__CUDA_ARCH__=900", "-DTUNEFARM_PROBLEM_LARGE", NULL},
                  "BM=32 BN=32 LAYOUT=0 row\n");
    expect_values((const char *[]){"-D__gfx90a__", "-DTUNEFARM_PROBLEM_SMALL", NULL},
                  "BM=16 BN=64 LAYOUT=0 row\n");
    /* a named class wins over the target */
    expect_values((const char *[]){"-D__gfx90a__", "-DTUNEFARM_PROBLEM_SMALL",
                                   "-DTUNEFARM_DEVICE_CUDA_SM_90_NVIDIA_H100_80GB_HBM3", NULL},
                  "BM=32 BN=64 LAYOUT=1 col\n");
#if defined(__x86_64__)
    /* nothing named on an x86-64 CPU: the host class */
    expect_values((const char *[]){"-DTUNEFARM_PROBLEM_SMALL", NULL}, "BM=64 BN=64 LAYOUT=0 row\n");
#endif
    /* what is missing is said */
    expect_error((const char *[]){"-DTUNEFARM_DEVICE_CUDA_SM_90_NVIDIA_H100_80GB_HBM3", NULL},
                 "no problem selected");
    expect_error((const char *[]){"-U__x86_64__", "-U__aarch64__", "-DTUNEFARM_PROBLEM_SMALL",
                                  NULL},
                 "no device class selected");
    expect_values((const char *[]){"-U__x86_64__", "-U__aarch64__", "-DTUNEFARM_PROBLEM_SMALL",
                                   "-DTUNEFARM_BEST_OPTIONAL", NULL},
                  "none\n");
    /* nvcc's host pass needs no selection */
    expect_values((const char *[]){"-U__x86_64__", "-U__aarch64__", "-D__CUDACC__",
                                   "-DTUNEFARM_PROBLEM_SMALL", NULL},
                  "none\n");
    /* one problem: no problem macro needed */
    write_best("gemm", 1, TF_BEST_HEADER, "gemm.h", 3);
    expect_values((const char *[]){"-DTUNEFARM_DEVICE_CUDA_SM_90_NVIDIA_H100_80GB_HBM3", NULL},
                  "BM=32 BN=32 LAYOUT=0 row\n");
}

static void test_header_of_hostile_names(void **state)
{
    (void)state;
    write_best(RF_EVIL_KERNEL, -1, TF_BEST_HEADER, "evil.h", 1);
    write_prog("#include <stdio.h>\nint main(void)\n{\n"
               "    printf(\"V=%d MODE=%d\\n\", V, MODE);\n    return 0;\n}\n");
    char *printed;
    int rc = compile_and_run(
        "evil.h",
        (const char *[]){"-Wall", "-Werror",
                         "-DTUNEFARM_DEVICE_CUDA_SM_80_GPU_B_B_SCRIPT_ALERT_2_SCRIPT",
                         "-DTUNEFARM_PROBLEM_P_SCRIPT_ALERT_4_SCRIPT", NULL},
        &printed);
    if (rc != 0)
        fail_msg("the hostile kernel's header does not compile:\n%s", printed);
    assert_string_equal(printed, "V=1 MODE=0\n");
    char path[400];
    snprintf(path, sizeof path, "%s/evil.h", dir);
    const char *h = slurp(path);
    /* the flags that are no macro names are left out, said so */
    assert_non_null(strstr(h, "left out, not -DNAME=INTEGER with a C macro name: -DW\"<b>=1"));
    assert_null(strstr(h, "#define W"));
    assert_null(strstr(h, "#define MODE_"));
}

static void test_json_and_make(void **state)
{
    (void)state;
    write_best("gemm", -1, TF_BEST_JSON, "gemm.json", 6);
    char path[400];
    snprintf(path, sizeof path, "%s/gemm.json", dir);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (root == NULL)
        fail_msg("gemm.json: %s at line %d", jerr.text, jerr.line);
    assert_string_equal(json_string_value(json_object_get(root, "kernel")), "gemm");
    json_t *best = json_object_get(root, "best");
    assert_int_equal(json_array_size(best), 6);
    int seen = 0;
    for (size_t i = 0; i < json_array_size(best); i++) {
        json_t *g = json_array_get(best, i);
        if (strcmp(json_string_value(json_object_get(g, "problem")), "small") != 0 ||
            strcmp(json_string_value(json_object_get(g, "device_class")), h100) != 0)
            continue;
        seen++;
        assert_true(json_is_true(json_object_get(g, "found")));
        assert_int_equal(json_integer_value(json_object_get(g, "config_index")), 7);
        json_t *cfg = json_object_get(g, "configuration");
        assert_int_equal(json_integer_value(json_object_get(cfg, "BM")), 32);
        assert_string_equal(json_string_value(json_object_get(cfg, "LAYOUT")), "col");
        json_t *d = json_object_get(g, "defines");
        assert_int_equal(json_array_size(d), 4);
        assert_string_equal(json_string_value(json_array_get(d, 3)), "-DLAYOUT_col=1");
        assert_true(fabs(json_real_value(json_object_get(g, "time_s")) - 1e-3) < 1e-12);
        assert_true(fabs(json_real_value(json_object_get(g, "speedup_over_default")) - 1.2) <
                    1e-9);
        assert_string_equal(json_string_value(json_object_get(g, "device_macro")),
                            "TUNEFARM_DEVICE_CUDA_SM_90_NVIDIA_H100_80GB_HBM3");
        assert_int_equal(json_integer_value(json_object_get(g, "run")), 0);
    }
    assert_int_equal(seen, 1);
    json_decref(root);

    write_best("gemm", -1, TF_BEST_MAKE, "gemm.mk", 6);
    snprintf(path, sizeof path, "%s/gemm.mk", dir);
    const char *mk = slurp(path);
    assert_non_null(strstr(mk, "\nGEMM_BEST_SMALL_CUDA_SM_90_NVIDIA_H100_80GB_HBM3 := -DBM=32 "
                               "-DBN=64 -DLAYOUT=1 -DLAYOUT_col=1\n"));
    assert_non_null(strstr(mk, "\nGEMM_BEST_LARGE_HOST_X86_64_AMD_EPYC_7763 := -DBM=16 -DBN=32 "
                               "-DLAYOUT=1 -DLAYOUT_col=1\n"));
    assert_non_null(strstr(
        mk, "\nGEMM_BEST_FLAGS = $(GEMM_BEST_$(TUNEFARM_PROBLEM)_$(TUNEFARM_DEVICE))\n"));
}

/* Issue 14 item 1: a kernel that compiles sizes in (`defines:`, the archive's
 * size_defines) gets them in its flags too, with each problem's own value,
 * after the parameters', as its worker compiled it; the attribute survives
 * the archive's write and read. */
static void test_size_defines_in_the_flags(void **state)
{
    (void)state;
    struct tf_archive *a = read_fixture();
    struct tf_archive_kernel *ak = tf_archive_find_kernel(a, "gemm");
    assert_non_null(ak);
    assert_int_equal(ak->ndefine_sizes, 0);
    assert_string_equal(ak->size_names[0], "M");
    ak->define_sizes = tf_xcalloc(2, sizeof *ak->define_sizes);
    ak->define_sizes[0] = tf_xstrdup("K");
    ak->define_sizes[1] = tf_xstrdup("M");
    ak->ndefine_sizes = 2;
    char path[400];
    snprintf(path, sizeof path, "%s/sized.h5", dir);
    struct tf_error err = {0};
    if (tf_archive_write(a, path, &err) != 0)
        fail_msg("write: %s", err.message);
    tf_archive_destroy(a);
    a = tf_archive_read(path, &err);
    if (a == NULL)
        fail_msg("read: %s", err.message);
    ak = tf_archive_find_kernel(a, "gemm");
    assert_int_equal(ak->ndefine_sizes, 2);
    assert_string_equal(ak->define_sizes[0], "K");
    char mk[400];
    snprintf(mk, sizeof mk, "%s/sized.mk", dir);
    FILE *out = fopen(mk, "w");
    assert_non_null(out);
    tf_best_write(a, path, ak, -1, -1, TF_BEST_MAKE, out);
    fclose(out);
    char line[300];
    const int small = 0;
    snprintf(line, sizeof line,
             "\nGEMM_BEST_SMALL_CUDA_SM_90_NVIDIA_H100_80GB_HBM3 := -DBM=32 -DBN=64 -DLAYOUT=1 "
             "-DLAYOUT_col=1 -DK=%lld -DM=%lld\n",
             (long long)ak->problems[small].sizes[2], (long long)ak->problems[small].sizes[0]);
    const char *text = slurp(mk);
    if (strstr(text, line) == NULL)
        fail_msg("no '%s' in:\n%s", line + 1, text);
    tf_archive_destroy(a);
}

/* A negative macro value (a size define M=-8) is a define, not "left out";
 * two device classes whose macro names meet get _2 on the second, as the
 * header's comment promises (the MI250X renamed into an sm_90 class whose
 * name differs from the H100's only by a '-'). */
static void test_negative_values_and_clashing_classes(void **state)
{
    (void)state;
    struct tf_archive *a = read_fixture();
    struct tf_archive_kernel *ak = tf_archive_find_kernel(a, "gemm");
    assert_non_null(ak);
    assert_string_equal(ak->size_names[0], "M");
    ak->define_sizes = tf_xcalloc(1, sizeof *ak->define_sizes);
    ak->define_sizes[0] = tf_xstrdup("M");
    ak->ndefine_sizes = 1;
    for (int p = 0; p < ak->nproblems; p++)
        ak->problems[p].sizes[0] = -8;
    int renamed = 0;
    for (int i = 0; i < a->ndevices; i++)
        if (strcmp(a->devices[i].name, "AMD Instinct MI250X") == 0) {
            tf_strlcpy(a->devices[i].backend, "cuda", sizeof a->devices[i].backend);
            tf_strlcpy(a->devices[i].arch, "sm_90", sizeof a->devices[i].arch);
            tf_strlcpy(a->devices[i].name, "NVIDIA H100 80GB-HBM3", sizeof a->devices[i].name);
            renamed++;
        }
    assert_true(renamed > 0);
    char path[400];
    snprintf(path, sizeof path, "%s/negative.h", dir);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    tf_best_write(a, archive_path, ak, -1, -1, TF_BEST_HEADER, out);
    fclose(out);
    const char *h = slurp(path);
    if (strstr(h, "\n#define M -8\n") == NULL || strstr(h, "left out") != NULL)
        fail_msg("M=-8 is not a define:\n%s", h);
    if (strstr(h, " *   TUNEFARM_DEVICE_CUDA_SM_90_NVIDIA_H100_80GB_HBM3\n") == NULL ||
        strstr(h, " *   TUNEFARM_DEVICE_CUDA_SM_90_NVIDIA_H100_80GB_HBM3_2\n") == NULL)
        fail_msg("the two sm_90 classes are not _HBM3 and _HBM3_2:\n%.3000s", h);
    tf_archive_destroy(a);
}

/* tf_best_main with these arguments; its exit code, stderr into dir/err. */
static int best_main(const char *const *args)
{
    char *argv[16] = {"tunefarm", "best"};
    int n = 2;
    for (int i = 0; args[i]; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    char err[400];
    snprintf(err, sizeof err, "%s/err", dir);
    fflush(stderr);
    fflush(stdout);
    int saved = dup(2), saved_out = dup(1), fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    dup2(fd, 1);
    close(fd);
    int rc = tf_best_main(n, argv);
    fflush(stderr);
    fflush(stdout);
    dup2(saved, 2);
    dup2(saved_out, 1);
    close(saved);
    close(saved_out);
    return rc;
}

static void test_command_exit_codes(void **state)
{
    (void)state;
    char out[400], err[400];
    snprintf(out, sizeof out, "%s/out.h", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    assert_int_equal(best_main((const char *[]){archive_path, "-k", "gemm", "-o", out, NULL}), 0);
    assert_non_null(strstr(slurp(out), "#define TUNEFARM_BEST_GEMM_FOUND 1"));
    /* several kernels and none named: which ones */
    assert_int_equal(best_main((const char *[]){archive_path, NULL}), 2);
    assert_non_null(strstr(slurp(err), "name one with --kernel: gemm"));
    assert_int_equal(best_main((const char *[]){archive_path, "-k", "nope", NULL}), 2);
    assert_non_null(strstr(slurp(err), "no kernel 'nope'; its kernels: gemm"));
    assert_int_equal(best_main((const char *[]){archive_path, "-k", "gemm", "-p", "huge", NULL}),
                     2);
    assert_non_null(strstr(slurp(err), "no problem 'huge'; its problems: small large"));
    assert_int_equal(best_main((const char *[]){archive_path, "-k", "gemm", "-f", "yaml", NULL}),
                     2);
    assert_int_equal(best_main((const char *[]){archive_path, "-k", "gemm", "-r", "9", NULL}), 2);
    assert_non_null(strstr(slurp(err), "has 4 run(s) (0 to 3); there is no run 9"));
    assert_int_equal(best_main((const char *[]){"/nonexistent.h5", "-k", "gemm", NULL}), 2);
    /* nothing ran ok: exit 3, nothing written */
    unlink(out);
    assert_int_equal(best_main((const char *[]){archive_path, "-k", RF_EVIL_KERNEL, "-p",
                                                "allfail", "-o", out, NULL}),
                     3);
    assert_int_equal(access(out, F_OK), -1);
    /* an output that cannot be written: 1, and the old file stays */
    assert_int_equal(
        best_main((const char *[]){archive_path, "-k", "gemm", "-o", "/proc/no/such.h", NULL}), 1);
    assert_non_null(strstr(slurp(err), "cannot write '/proc/no/such.h'"));
    assert_int_equal(best_main((const char *[]){"--help", NULL}), 0);
    assert_non_null(strstr(slurp(err), "usage: tunefarm best ARCHIVE"));
}

/* tools/outfile.c, which best (and report) write through: "-" is standard
 * output and abort leaves it open; a device is written in place, without the
 * fsync that fails there (EINVAL on /dev/null); standard output that cannot be
 * written is an error; an outfile never opened has nothing to commit. */
static void test_outfile(void **state)
{
    (void)state;
    struct tf_outfile o;
    struct tf_error err = {0};
    memset(&o, 0, sizeof o);
    assert_int_equal(tf_outfile_commit(&o, &err), -1);
    assert_non_null(strstr(err.message, "output not open"));

    assert_int_equal(tf_outfile_open(&o, "-", &err), 0);
    bool is_stdout = o.f == stdout && o.path == NULL;
    tf_outfile_abort(&o); /* had "-" been a file name, this removes its temporary */
    assert_true(is_stdout);
    assert_int_not_equal(fcntl(1, F_GETFD), -1);

    assert_int_equal(tf_outfile_open(&o, "/dev/null", &err), 0);
    fputs("written in place\n", o.f);
    if (tf_outfile_commit(&o, &err) != 0)
        fail_msg("/dev/null: %s", err.message);

    fflush(stdout);
    int saved = dup(1), full = open("/dev/full", O_WRONLY);
    assert_true(saved >= 0 && full >= 0);
    dup2(full, 1);
    close(full);
    int rc = tf_outfile_open(&o, NULL, &err);
    if (rc == 0) {
        fputs("a line for a full disk\n", o.f);
        rc = tf_outfile_commit(&o, &err);
    }
    clearerr(stdout);
    dup2(saved, 1);
    close(saved);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err.message, "cannot write to standard output"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick_strict_decides),
        cmocka_unit_test(test_defines_are_the_workers),
        cmocka_unit_test(test_header_selects_by_device),
        cmocka_unit_test(test_header_of_hostile_names),
        cmocka_unit_test(test_json_and_make),
        cmocka_unit_test(test_size_defines_in_the_flags),
        cmocka_unit_test(test_negative_values_and_clashing_classes),
        cmocka_unit_test(test_command_exit_codes),
        cmocka_unit_test(test_outfile),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
