/* test_portability - the GPU portability header and the GPU kernel library.
 *
 * No GPU is needed: the header text is checked for every macro a kernel may
 * use, per vendor; every GPU kernel file of the library is loaded and its
 * space counted on an H100-like and an MI300-like device (so a constraint
 * that prunes everything, or a default that is not valid, fails here); and
 * the blocked, chunked host references (sgemm, attention) are compared with
 * the textbook loops on small odd sizes that exercise their remainder paths. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "schema/bundle.h"
#include "schema/kernel.h"
#include "schema/space.h"
#include "worker/portability.h"

/* The references are plain C files of the library: test them as they are
 * (serially here: their OpenMP pragmas apply where the farm builds them). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#include "kernels/attention/reference.c"
#include "kernels/sgemm/reference.c"
#pragma GCC diagnostic pop

extern char **environ;

static const char *const required[] = {
    "TF_WARP_SIZE", "TF_SHFL(", "TF_SHFL_DOWN(", "TF_SHFL_XOR(", "TF_SYNC_WARP()",
    "TF_GLOBAL", "TF_DEVICE", "TF_SHARED", "TF_RESTRICT", "TF_LAUNCH_BOUNDS(", "TF_SYNC()",
    "TF_LAUNCH_BOUNDS_1(threads)", "TF_LAUNCH_BOUNDS_2(threads, min_blocks)",
    "TF_UNROLL", "TF_UNROLL_N(", "TF_LDG(", "tf_exp2f", "tf_expf", "tf_rsqrtf", "tf_fmaf",
    "tf_warp_sum", "tf_warp_max", "TF_LOG2E", "tf_cp_async16", "TF_CP_ASYNC_COMMIT()",
    "TF_CP_ASYNC_WAIT(", "TF_EXTERN_C", NULL};

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

static void check_header(const char *backend, const char *warp_define)
{
    const char *h = tf_portability_header(backend);
    assert_non_null(h);
    assert_ptr_equal(h, tf_portability_header(backend)); /* static, built once */
    assert_non_null(strstr(h, warp_define));
    for (int i = 0; required[i]; i++) {
        if (strstr(h, required[i]) == NULL)
            fail_msg("%s header lacks %s", backend, required[i]);
    }
    assert_int_equal(h[strlen(h) - 1], '\n');
    /* conditionals balance: an unterminated #if breaks every kernel */
    assert_int_equal(count(h, "#if"), count(h, "#endif"));
    /* runtime compilers have no system headers */
    assert_null(strstr(h, "#include"));
}

static void test_header_cuda(void **state)
{
    (void)state;
    check_header("cuda", "#define TF_WARP_SIZE 32\n");
    assert_non_null(strstr(tf_portability_header("cuda"), "__shfl_down_sync"));
    /* CUDA's own meaning of the second argument (compiled in test_cuda) */
    assert_non_null(strstr(tf_portability_header("cuda"),
                           "#define TF_LAUNCH_BOUNDS_2(threads, min_blocks) "
                           "__launch_bounds__(threads, min_blocks)\n"));
}

static void test_header_hip(void **state)
{
    (void)state;
    check_header("hip", "#define TF_WARP_SIZE 64\n");
    assert_null(strstr(tf_portability_header("hip"), "_sync("));
    /* HIP's second argument is waves per execution unit: converted, not passed */
    const char *h = tf_portability_header("hip");
    assert_non_null(strstr(h, "__launch_bounds__(threads, TF_WAVES_PER_EU(threads, min_blocks))"));
    assert_non_null(
        strstr(h, "((min_blocks) * (threads) + TF_WARP_SIZE * 4 - 1) / (TF_WARP_SIZE * 4)"));
    assert_null(strstr(h, "__launch_bounds__(threads, min_blocks)"));
}

static void test_header_unknown(void **state)
{
    (void)state;
    assert_null(tf_portability_header("host"));
    assert_null(tf_portability_header(""));
    assert_null(tf_portability_header(NULL));
    assert_ptr_not_equal(tf_portability_header("cuda"), tf_portability_header("hip"));
}

/* What each vendor's intrinsics must be: a shuffle macro calls its namesake
 * (a XOR butterfly built on shfl_down sums the wrong lanes), a warp reduction
 * halves the distance down to 1 (stopping at 2 leaves lanes unsummed), and
 * cp.async exists from sm_80 on (so sm_80 itself gets it). The kernels that
 * use them run only in test_cuda / test_hip, which need a GPU. */
static void test_header_intrinsics(void **state)
{
    (void)state;
    static const struct { const char *backend, *sync, *mask; } v[] = {
        {"cuda", "_sync", "TF_WARP_MASK, "}, {"hip", "", ""}};
    for (int b = 0; b < 2; b++) {
        const char *h = tf_portability_header(v[b].backend);
        static const char *const shfl[][2] = {
            {"TF_SHFL(v, lane)", "__shfl%s(%s(v), (lane))"},
            {"TF_SHFL_DOWN(v, d)", "__shfl_down%s(%s(v), (d))"},
            {"TF_SHFL_XOR(v, m)", "__shfl_xor%s(%s(v), (m))"}};
        for (int i = 0; i < 3; i++) {
            char body[128], line[256];
            snprintf(body, sizeof body, shfl[i][1], v[b].sync, v[b].mask);
            snprintf(line, sizeof line, "\n#define %s %s\n", shfl[i][0], body);
            if (strstr(h, line) == NULL)
                fail_msg("%s header lacks '%s'", v[b].backend, line + 1);
        }
        assert_int_equal(count(h, "for (int tf_d = TF_WARP_SIZE / 2; tf_d > 0; tf_d >>= 1)"), 2);
    }
    assert_non_null(strstr(tf_portability_header("cuda"),
                           "\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"));
}

/* The definition of macro `name` in header h (with its continuation lines) to f. */
static void copy_define(FILE *f, const char *h, const char *name)
{
    char want[64];
    snprintf(want, sizeof want, "\n#define %s", name);
    const char *p = strstr(h, want);
    if (p == NULL)
        fail_msg("no #define %s", name);
    p++;
    for (;;) {
        const char *e = strchr(p, '\n');
        assert_non_null(e);
        fprintf(f, "%.*s\n", (int)(e - p), p);
        if (e == p || e[-1] != '\\')
            break;
        p = e + 1;
    }
}

/* waves per SIMD for min_blocks blocks of `threads` on a CU of 4 SIMDs:
 * ceil(min_blocks * threads / (warp * 4)), at least 1 (the header's comment) */
static long waves_per_eu(long threads, long min_blocks, long warp)
{
    long w = (min_blocks * threads + warp * 4 - 1) / (warp * 4);
    return w < 1 ? 1 : w;
}

/* The header's integer macros, evaluated by the host's C compiler (static
 * assertions, -fsyntax-only) against the rule each one states: TF_CEIL_DIV,
 * TF_MIN/TF_MAX, HIP's TF_WAVES_PER_EU, and TF_LAUNCH_BOUNDS picking the one- or
 * the two-argument form. Skipped without a cc. */
static void test_header_integer_macros(void **state)
{
    (void)state;
    char dir[] = "/tmp/tf-test-portability.XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/macros.c", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    const char *common = tf_portability_header("cuda"), *hip = tf_portability_header("hip");
    fputs("#define TF_WARP_SIZE 64\n", f);
    copy_define(f, common, "TF_CEIL_DIV(");
    copy_define(f, common, "TF_MIN(");
    copy_define(f, common, "TF_MAX(");
    copy_define(f, common, "TF_LB_PICK(");
    copy_define(f, common, "TF_LAUNCH_BOUNDS(");
    copy_define(f, hip, "TF_WAVES_PER_EU(");
    fputs("#define TF_LAUNCH_BOUNDS_1(t) (1000 + (t))\n"
          "#define TF_LAUNCH_BOUNDS_2(t, b) (2000 + (b))\n", f);
    static const long div[][2] = {{7, 2}, {8, 2}, {1, 64}, {65, 64}};
    for (int i = 0; i < 4; i++)
        fprintf(f, "_Static_assert(TF_CEIL_DIV(%ld, %ld) == %ld, \"ceil\");\n", div[i][0],
                div[i][1], (div[i][0] + div[i][1] - 1) / div[i][1]);
    fputs("_Static_assert(TF_MIN(3, -2) == -2 && TF_MAX(3, -2) == 3, \"min max\");\n", f);
    static const long eu[][2] = {{64, 1}, {256, 1}, {256, 2}, {1024, 4}, {96, 3}};
    for (int i = 0; i < 5; i++)
        fprintf(f, "_Static_assert(TF_WAVES_PER_EU(%ld, %ld) == %ld, \"waves\");\n", eu[i][0],
                eu[i][1], waves_per_eu(eu[i][0], eu[i][1], 64));
    fputs("_Static_assert(TF_LAUNCH_BOUNDS(256) == 1256, \"one argument\");\n"
          "_Static_assert(TF_LAUNCH_BOUNDS(256, 3) == 2003, \"two arguments\");\n", f);
    fclose(f);
    char *argv[] = {"cc", "-std=c11", "-fsyntax-only", path, NULL};
    pid_t pid;
    int st = -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawnp(&pid, "cc", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc == 0)
        waitpid(pid, &st, 0);
    unlink(path);
    rmdir(dir);
    if (rc != 0) {
        print_message("skipped: no cc to evaluate the header's macros\n");
        return;
    }
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void set_device(struct tf_device *d, int64_t threads, int64_t shared, int64_t optin,
                       int64_t warp, int64_t sms, int64_t l2, int64_t regs)
{
    memset(d, 0, sizeof *d);
    const int64_t p[TF_DEVPROP_COUNT] = {threads, shared, optin, warp, sms, l2, regs, 0};
    memcpy(d->props, p, sizeof p);
}

struct lib_case {
    const char *path;
    uint64_t min_valid_last; /* valid configurations required on the last (largest) problem */
    int default_everywhere;  /* the default is valid on every problem (H100-like) */
    int amd_everywhere;      /* every problem has a valid configuration on the MI300-like device */
};

static const struct lib_case library[] = {
    {"kernels/sgemm/kernel.yaml", 1000, 1, 1},
    {"kernels/transpose/kernel.yaml", 50, 1, 1},
    {"kernels/reduction/kernel.yaml", 500, 1, 1},
    {"kernels/conv2d_gpu/kernel.yaml", 500, 1, 1},
    /* HEAD_DIM is tied to D and the default follows it (HEAD_DIM: D), so every
     * problem's default runs; with 64-wide wavefronts a d128 key tile (>= 64
     * rows, K and V) does not fit the 64 KiB of LDS */
    {"kernels/attention/kernel.yaml", 10, 1, 0},
};

static void test_library(void **state)
{
    (void)state;
    struct tf_device h100, mi300;
    set_device(&h100, 1024, 49152, 232448, 32, 132, 50 << 20, 65536);
    set_device(&mi300, 1024, 65536, 65536, 64, 304, 4 << 20, 131072);
    for (size_t i = 0; i < sizeof library / sizeof *library; i++) {
        struct tf_error err = {0};
        struct tf_bundle *b = tf_bundle_create();
        struct tf_kernel *k = tf_kernel_load(library[i].path, b, &err);
        if (k == NULL)
            fail_msg("%s: %s", library[i].path, err.message);
        assert_string_equal(k->language, "cuda");
        assert_non_null(strstr(k->source, "#include \"tunefarm.h\""));
        assert_non_null(strstr(k->source, "TF_GLOBAL"));
        int default_valid_somewhere = 0;
        for (int p = 0; p < k->nproblems; p++) {
            const struct tf_device *devs[2] = {&h100, &mi300};
            for (int d = 0; d < 2; d++) {
                struct tf_space *s = tf_space_create(k, p, devs[d], &err);
                assert_non_null(s);
                uint64_t n = 0;
                if (tf_space_count(s, 0, tf_space_cartesian(s), &n, &err) != 0)
                    fail_msg("%s: %s", library[i].path, err.message);
                if (n == 0 && (d == 0 || library[i].amd_everywhere))
                    fail_msg("%s problem %s: no valid configuration on device %d",
                             library[i].path, k->problems[p].name, d);
                if (d == 0 && p == k->nproblems - 1 && n < library[i].min_valid_last)
                    fail_msg("%s: %llu valid configurations, want >= %llu", library[i].path,
                             (unsigned long long)n, (unsigned long long)library[i].min_valid_last);
                bool valid = false;
                uint64_t def = 0;
                assert_true(tf_kernel_default_for(k, p, &def)); /* every problem has one */
                assert_int_equal(tf_space_is_valid(s, def, &valid, &err), 0);
                if (d == 0 && library[i].default_everywhere && !valid)
                    fail_msg("%s: default invalid for %s", library[i].path, k->problems[p].name);
                default_valid_somewhere |= d == 0 && valid;
                tf_space_destroy(s);
            }
        }
        assert_true(default_valid_somewhere);
        tf_kernel_destroy(k);
        tf_bundle_destroy(b);
    }
}

static float frand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void test_sgemm_reference(void **state)
{
    (void)state;
    /* Past one block and one tile in every direction, with remainders: M = 70 is a
     * 64-row block and 6 (not a multiple of the 4-row tile), N = 300 a 256-column
     * block and 44 (not a multiple of 32), K = 135 a 128-deep chunk and 7. */
    int M = 70, N = 300, K = 135;
    float alpha = 0.5f, beta = 0.25f;
    float *At = malloc(sizeof *At * (size_t)(K * M)), *B = malloc(sizeof *B * (size_t)(K * N));
    float *C = malloc(sizeof *C * (size_t)(M * N)), *C0 = malloc(sizeof *C0 * (size_t)(M * N));
    unsigned seed = 1;
    for (int i = 0; i < K * M; i++) At[i] = frand(&seed);
    for (int i = 0; i < K * N; i++) B[i] = frand(&seed);
    for (int i = 0; i < M * N; i++) C[i] = C0[i] = frand(&seed);
    void *args[] = {&M, &N, &K, &alpha, &beta, &At, &B, &C};
    sgemm_reference(args);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int k = 0; k < K; k++) acc += (double)At[k * M + i] * B[k * N + j];
            /* the same sum in the same order: the same bits, not just close */
            const float want = (float)(0.5 * acc + 0.25 * (double)C0[i * N + j]);
            assert_memory_equal(&C[i * N + j], &want, sizeof want);
        }
    /* beta = 0: C is not read, so NaN in C does not leak */
    beta = 0.0f;
    for (int i = 0; i < M * N; i++) C[i] = NAN;
    sgemm_reference(args);
    for (int i = 0; i < M * N; i++) assert_false(isnan(C[i]));
    free(At);
    free(B);
    free(C);
    free(C0);
}

static void test_attention_reference(void **state)
{
    (void)state;
    /* S = 37 and D = 20: both axpy paths (16-chunks and the tail) */
    int B = 1, H = 2, S = 37, D = 20;
    const size_t n = (size_t)(B * H * S * D);
    float *Q = malloc(sizeof *Q * n), *K = malloc(sizeof *K * n), *V = malloc(sizeof *V * n);
    float *O = malloc(sizeof *O * n);
    unsigned seed = 7;
    for (size_t i = 0; i < n; i++) {
        Q[i] = 3.0f * frand(&seed); /* large scores: the max subtraction matters */
        K[i] = 3.0f * frand(&seed);
        V[i] = frand(&seed);
    }
    void *args[] = {&B, &H, &S, &D, &Q, &K, &V, &O};
    attention_reference(args);
    double sc[37];
    for (int bh = 0; bh < B * H; bh++)
        for (int i = 0; i < S; i++) {
            double sum = 0.0;
            for (int j = 0; j < S; j++) {
                double dot = 0.0;
                for (int d = 0; d < D; d++)
                    dot += (double)Q[(bh * S + i) * D + d] * K[(bh * S + j) * D + d];
                sc[j] = exp(dot / sqrt((double)D));
                sum += sc[j];
            }
            for (int d = 0; d < D; d++) {
                double o = 0.0;
                for (int j = 0; j < S; j++) o += sc[j] * V[(bh * S + j) * D + d];
                assert_float_equal(O[(bh * S + i) * D + d], o / sum, 1e-6);
            }
        }
    free(Q);
    free(K);
    free(V);
    free(O);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_cuda),
        cmocka_unit_test(test_header_hip),
        cmocka_unit_test(test_header_unknown),
        cmocka_unit_test(test_header_intrinsics),
        cmocka_unit_test(test_header_integer_macros),
        cmocka_unit_test(test_library),
        cmocka_unit_test(test_sgemm_reference),
        cmocka_unit_test(test_attention_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
