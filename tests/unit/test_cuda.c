/* test_cuda.c - the cuda backend: NVRTC on any CPU, the runner on a real GPU.
 *
 * Compiling needs no device, so wherever libnvrtc loads these tests compile
 * for real: kernels/vecadd_cuda into a CUBIN whose ELF header must say
 * EM_CUDA and the requested SM, a variant with a syntax error into a log
 * that names its line, and the default plus a seeded sample of valid
 * variants of every CUDA kernel of the library (found by scanning
 * kernels/STAR/kernel.yaml) for sm_90 on a synthetic H100. The device tests
 * need an NVIDIA GPU: this executable is its own runner (main hands
 * `__runner` to tf_runner_main), and it measures kernels/vecadd_cuda and the
 * fault fixture tests/fixtures/gpufaults in real child processes: an illegal
 * address is runtime_error, a spinning kernel is timeout, one wrong element
 * is wrong_result, an oversized block is invalid, and after each fault the
 * next configuration measures ok; outputs compared on the device (every
 * element type, NaN, infinities, both sides of the tolerance) count the same
 * failures and the same first one as tf_verify, and checksum the expected
 * values as tf_verify_checksum does.
 * Without NVRTC or without a GPU the tests print "skipped: no NVRTC" /
 * "skipped: no device" and skip; nothing is faked. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../schema/bundle.h"
#include "../../schema/defines.h"
#include "../../schema/job.h"
#include "../../schema/kernel.h"
#include "../../schema/space.h"
#include "../../schema/status.h"
#include "../../worker/backend.h"
#include "../../worker/compile.h"
#include "../../worker/compiler.h"
#include "../../worker/cuda_api.h"
#include "../../worker/gpu_backend.h"
#include "../../worker/runner.h"
#include "../../worker/verify.h"
#include "gpu_fixture.h"

#define EM_CUDA_MACHINE 190

static const struct tf_backend *be = &tf_backend_cuda;

/* ---- helpers ---- */

static int have_nvrtc(void)
{
    static int said;
    struct tf_error err = {0};
    if (tf_nvrtc_load(&err) != NULL)
        return 1;
    if (!said++)
        printf("skipped: no NVRTC (%s)\n", err.message);
    return 0;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

static uint16_t le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The SM a CUBIN is for, from its ELF header. Learned from nvcc -cubin of
 * CUDA 13.0: EI_ABIVERSION 8 cubins carry it in bits 8..15 of e_flags
 * (sm_80 0x6005004, sm_90 0x6005a04, sm_100 0x6006402, sm_120 0x7802 in the
 * low half); older ABI versions (<= 7) in bits 0..7. -1 if not a CUDA ELF64. */
static int cubin_sm(const unsigned char *elf, size_t len)
{
    if (len < 64 || memcmp(elf, "\177ELF", 4) != 0 || elf[4] != 2 /* ELFCLASS64 */ ||
        le16(elf + 18) != EM_CUDA_MACHINE)
        return -1;
    const uint32_t flags = le32(elf + 48);
    return elf[8] >= 8 ? (int)((flags >> 8) & 0xff) : (int)(flags & 0xff);
}

/* Create a temporary file from the template `path` (mkstemp) and close it. */
static void temp_file(char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
}

/* Compile `source` for `arch` with `defines` through the backend into `out_path`. */
static int compile_source(const char *name, const char *source, const char *entry,
                          const char *arch, char **defines, int ndefines, char **options,
                          int noptions, const char *out_path, struct tf_compile_output *out)
{
    struct tf_compile_input in = {
        .kernel_name = "test",
        .source = source,
        .source_name = name,
        .entry = entry,
        .arch = arch,
        .ndefines = ndefines,
        .defines = defines,
        .noptions = noptions,
        .options = options,
        .output_path = out_path,
    };
    struct tf_error err = {0};
    memset(out, 0, sizeof *out);
    int rc = be->compile(&in, out, &err);
    if (rc != 0)
        fprintf(stderr, "compile machinery failed: %s\n", err.message);
    return rc;
}

/* Compile configuration `config` of `k` for `arch`; asserts it compiles and
 * returns the SM found in the CUBIN. */
static int compile_config(const struct tf_kernel *k, uint64_t config, const char *arch)
{
    char *defines[TF_MAX_DEFINES];
    char path[] = "/tmp/tf-test-cuda-XXXXXX";
    temp_file(path);
    const int nd = tf_kernel_defines(k, config, defines, TF_MAX_DEFINES);
    struct tf_compile_output out;
    assert_int_equal(compile_source(k->source_path, k->source, k->entry, arch, defines, nd,
                                    k->options, k->option_count, path, &out),
                     0);
    if (!out.ok) {
        char text[512];
        tf_kernel_format_config(k, config, text, sizeof text);
        fprintf(stderr, "%s [%s] does not compile for %s:\n%s\n", k->name, text, arch,
                out.log ? out.log : "(no log)");
    }
    assert_true(out.ok);
    assert_true(out.registers > 0); /* ptxas said, no device needed */
    assert_true(out.spill_bytes >= 0);
    size_t len = 0;
    unsigned char *bin = (unsigned char *)read_all(path, &len);
    assert_non_null(bin);
    const int sm = cubin_sm(bin, len);
    free(bin);
    free(out.log);
    unlink(path);
    for (int i = 0; i < nd; i++)
        free(defines[i]);
    return sm;
}

/* ---- NVRTC (no device) ---- */

static void test_compile_vecadd_cubin(void **state)
{
    (void)state;
    if (!have_nvrtc()) {
        skip();
        return;
    }
    struct tf_error err = {0};
    struct tf_bundle *b = tf_bundle_create();
    struct tf_kernel *k = tf_kernel_load("kernels/vecadd_cuda/kernel.yaml", b, &err);
    if (k == NULL)
        tf_error_print(&err, "test_cuda", stderr);
    assert_non_null(k);
    assert_string_equal(k->language, "cuda");
    assert_true(k->has_default);
    /* the SM requested is the SM in the binary, for two different ones */
    assert_int_equal(compile_config(k, k->default_index, "sm_90"), 90);
    assert_int_equal(compile_config(k, k->default_index, "sm_80"), 80);
    /* the compiler identity names NVRTC and its version (cache keys depend on it) */
    assert_non_null(strstr(be->compiler_id(), "NVRTC "));
    /* ... and the options every compile passes (an older tunefarm's binaries miss) */
    assert_non_null(strstr(be->compiler_id(), "| options -std=c++17 --ptxas-options=-v (-minimal first)"));
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* A compiler process hides the driver from NVRTC (worker/nocuda.c): with
 * libtunefarm-nocuda.so loaded, NVRTC's dlopen("libcuda.so.1") gets it, its
 * cuInit finds no device, and NVRTC still compiles. It must run in a fresh
 * process, as a compiler process is (this one may have the real driver
 * loaded already, and its device tests need it): main() runs this for
 * `__nocuda`. Exit 0, or 10 not found, 11 libcuda.so.1 not loaded after,
 * 12-13 not the stand-in, 14-15 no CUBIN. */
static int nocuda_child(void)
{
    if (tf_compiler_hide_driver("./tunefarm") != 0) /* tests run in the source tree */
        return 10;
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (cuda == NULL)
        return 11;
    int (*init)(unsigned int);
    void *sym = dlsym(cuda, "cuInit");
    if (sym == NULL)
        return 12;
    memcpy(&init, &sym, sizeof init);
    if (init(0) != 100) /* CUDA_ERROR_NO_DEVICE */
        return 13;
    const char *src = "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] = 1.0f; }\n";
    char path[] = "/tmp/tf-test-nocuda-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 14;
    close(fd);
    struct tf_compile_output out;
    const int rc = compile_source("k.cu", src, "k", "sm_90", NULL, 0, NULL, 0, path, &out);
    size_t len = 0;
    unsigned char *bin = (unsigned char *)read_all(path, &len);
    const int sm = bin ? cubin_sm(bin, len) : -1;
    free(bin);
    free(out.log);
    unlink(path);
    return rc == 0 && out.ok && sm == 90 ? 0 : 15;
}

static void test_compiler_hides_the_driver(void **state)
{
    (void)state;
    if (!have_nvrtc()) {
        skip();
        return;
    }
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    char *argv[] = {exe, "__nocuda", NULL};
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, exe, NULL, NULL, argv, environ), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0); /* nocuda_child says what a code means */
}

/* Issue 14 item 8: with no device, a variant's registers, static shared
 * memory and spills come from ptxas' report in the NVRTC log (for the entry
 * point, not another kernel of the source), and its warnings are counted
 * from the log, the first one kept. */
static void test_compile_reports_resources_and_warnings(void **state)
{
    (void)state;
    if (!have_nvrtc()) {
        skip();
        return;
    }
    const char *source = "extern \"C\" __global__ void other(float *y)\n"
                         "{\n"
                         "    __shared__ float big[2048];\n"
                         "    big[threadIdx.x] = y[threadIdx.x];\n"
                         "    __syncthreads();\n"
                         "    y[threadIdx.x] = big[(threadIdx.x + 1) % 2048];\n"
                         "}\n"
                         "extern \"C\" __global__ void entry(float *y, int n)\n"
                         "{\n"
                         "    int unused;\n"
                         "    __shared__ float s[128];\n"
                         "    s[threadIdx.x] = y[threadIdx.x];\n"
                         "    __syncthreads();\n"
                         "    if ((int)threadIdx.x < n) y[threadIdx.x] = s[(threadIdx.x + 1) % 128];\n"
                         "}\n";
    char path[] = "/tmp/tf-test-cuda-XXXXXX";
    temp_file(path);
    struct tf_compile_output out;
    assert_int_equal(compile_source("warned.cu", source, "entry", "sm_90", NULL, 0, NULL, 0,
                                    path, &out),
                     0);
    assert_true(out.ok);
    assert_true(out.registers > 0 && out.registers < 64);
    assert_int_equal(out.shared_bytes, 512); /* entry's 128 floats, not other's 2048 */
    assert_int_equal(out.spill_bytes, 0);
    char first[TF_WARNING_LEN];
    assert_int_equal(tf_compile_log_warnings(out.log, first, sizeof first), 1);
    assert_non_null(strstr(first, "warned.cu(10): warning"));
    assert_non_null(strstr(first, "\"unused\" was declared but never referenced"));
    free(out.log);
    unlink(path);
}

/* NVRTC 12.4+ compiles with -minimal first (backend_cuda.c): a kernel that
 * uses what -minimal leaves out (texture objects) must still compile, each
 * time, and a real error in such a kernel must be reported as the full
 * language sees it, not as the missing texture type. */
static void test_full_language_kernel_compiles(void **state)
{
    (void)state;
    if (!have_nvrtc()) {
        skip();
        return;
    }
    const char *source = "#include \"tunefarm.h\"\n"
                         "TF_GLOBAL void fetch(cudaTextureObject_t t, float *y)\n"
                         "{\n"
                         "    y[threadIdx.x] = tex1Dfetch<float>(t, (int)threadIdx.x);\n"
                         "}\n";
    const char *broken = "#include \"tunefarm.h\"\n"
                         "TF_GLOBAL void fetch(cudaTextureObject_t t, float *y)\n"
                         "{\n"
                         "    y[threadIdx.x] = tex1Dfetch<float>(t, (int)threadIdx.x) +;\n"
                         "}\n";
    char path[] = "/tmp/tf-test-cuda-XXXXXX";
    temp_file(path);
    struct tf_compile_output out;
    for (int round = 0; round < 2; round++) { /* the second knows the kernel needs it */
        unlink(path);
        assert_int_equal(compile_source("kernels/tex/tex.cu", source, "fetch", "sm_90", NULL, 0,
                                        NULL, 0, path, &out),
                         0);
        if (!out.ok)
            fprintf(stderr, "log:\n%s\n", out.log ? out.log : "(none)");
        assert_int_equal(out.ok, 1);
        assert_int_equal(access(path, F_OK), 0);
        free(out.log);
    }
    unlink(path);
    assert_int_equal(compile_source("kernels/tex/broken.cu", broken, "fetch", "sm_90", NULL, 0,
                                    NULL, 0, path, &out),
                     0);
    assert_int_equal(out.ok, 0);
    assert_non_null(out.log);
    if (strstr(out.log, "broken.cu(4): error") == NULL || strstr(out.log, "cudaTextureObject_t"))
        fprintf(stderr, "log:\n%s\n", out.log);
    assert_non_null(strstr(out.log, "broken.cu(4): error"));
    assert_null(strstr(out.log, "cudaTextureObject_t"));
    assert_int_equal(access(path, F_OK), -1);
    free(out.log);
}

/* The runner's own comparison kernels (gpu_backend.c) compile for an SM with
 * the options the runner gives them: a mistake there would send every
 * output back to the host's comparison, silently. */
static void test_compare_kernels_compile(void **state)
{
    (void)state;
    if (!have_nvrtc()) {
        skip();
        return;
    }
    char path[] = "/tmp/tf-test-cuda-XXXXXX";
    temp_file(path);
    char fmad[] = "--fmad=false";
    char *options[] = {fmad};
    struct tf_compile_output out;
    assert_int_equal(compile_source("tunefarm-compare.cu", tf_gpu_compare_source(),
                                    "tf_compare_f32", "sm_90", NULL, 0, options, 1, path, &out),
                     0);
    if (!out.ok)
        fprintf(stderr, "log:\n%s\n", out.log ? out.log : "(none)");
    assert_int_equal(out.ok, 1);
    free(out.log);
    unlink(path);
}

static void test_compile_error_names_line(void **state)
{
    (void)state;
    if (!have_nvrtc()) {
        skip();
        return;
    }
    const char *source = "#include \"tunefarm.h\"\n"
                         "TF_GLOBAL void broken(float *y)\n"
                         "{\n"
                         "    y[threadIdx.x] = 1.0f +;\n"
                         "}\n";
    char path[] = "/tmp/tf-test-cuda-XXXXXX";
    temp_file(path);
    unlink(path);
    struct tf_compile_output out;
    assert_int_equal(compile_source("kernels/broken/broken.cu", source, "broken", "sm_90", NULL,
                                    0, NULL, 0, path, &out),
                     0);
    assert_int_equal(out.ok, 0);
    assert_non_null(out.log);
    /* NVRTC's "file(line): error: ..." for line 4 */
    if (strstr(out.log, "kernels/broken/broken.cu(4): error") == NULL)
        fprintf(stderr, "log:\n%s\n", out.log);
    assert_non_null(strstr(out.log, "kernels/broken/broken.cu(4): error"));
    assert_int_equal(access(path, F_OK), -1); /* no binary for a rejected variant */
    free(out.log);

    /* a define the source needs and does not get is a compile error too */
    const char *needs = "#include \"tunefarm.h\"\n"
                        "TF_GLOBAL void f(float *y) { y[0] = WIDTH; }\n";
    assert_int_equal(compile_source("needs.cu", needs, "f", "sm_90", NULL, 0, NULL, 0, path,
                                    &out),
                     0);
    assert_int_equal(out.ok, 0);
    assert_non_null(strstr(out.log, "WIDTH"));
    free(out.log);
    char *width[] = {"-DWIDTH=4"};
    assert_int_equal(compile_source("needs.cu", needs, "f", "sm_90", width, 1, NULL, 0, path,
                                    &out),
                     0);
    assert_int_equal(out.ok, 1);
    free(out.log);
    unlink(path);

    /* an architecture NVRTC cannot build a CUBIN for is the variant's problem, not a crash */
    assert_int_equal(compile_source("needs.cu", needs, "f", "gfx942", width, 1, NULL, 0, path,
                                    &out),
                     0);
    assert_int_equal(out.ok, 0);
    assert_non_null(strstr(out.log, "gfx942"));
    free(out.log);
    /* an option NVRTC does not know (a kernel's options) likewise */
    char *bogus[] = {"--no-such-option"};
    assert_int_equal(compile_source("needs.cu", needs, "f", "sm_90", width, 1, bogus, 1, path,
                                    &out),
                     0);
    assert_int_equal(out.ok, 0);
    assert_non_null(out.log);
    free(out.log);
    unlink(path);
}

/* Compile `source` for sm_90 with `defines`; 1 if it compiled, 0 if not (the
 * log, if any, into *log when log is not NULL), the CUBIN into *bin. */
static int compiles(const char *source, char **defines, int ndefines, char **log,
                    unsigned char **bin, size_t *binlen)
{
    char path[] = "/tmp/tf-test-cuda-XXXXXX";
    temp_file(path);
    struct tf_compile_output out;
    assert_int_equal(compile_source("names.cu", source, "k", "sm_90", defines, ndefines, NULL,
                                    0, path, &out),
                     0);
    if (bin)
        *bin = out.ok ? (unsigned char *)read_all(path, binlen) : NULL;
    unlink(path);
    if (log)
        *log = out.log;
    else
        free(out.log);
    return out.ok;
}

/* The register cap NVRTC put on `entry`: attribute 0x1b (EIATTR_MAXREG_COUNT,
 * a 16-bit value) of the CUBIN's .nv.info.ENTRY section, learned by comparing
 * the sections of __launch_bounds__(256) (0xff) and (256, 3) (80) under
 * NVRTC 13.0. Records are a format byte, an attribute byte, then 2 bytes of
 * value (format 3), nothing (format 1), or a 16-bit size and that many bytes
 * (format 4). -1 if absent. */
static int cubin_max_regs(const unsigned char *elf, size_t len, const char *entry)
{
    if (len < 64 || memcmp(elf, "\177ELF", 4) != 0 || elf[4] != 2)
        return -1;
    uint64_t shoff = (uint64_t)le32(elf + 40) | (uint64_t)le32(elf + 44) << 32;
    unsigned shentsize = le16(elf + 58), shnum = le16(elf + 60), shstrndx = le16(elf + 62);
    if (shoff + (uint64_t)shnum * shentsize > len || shstrndx >= shnum)
        return -1;
    const unsigned char *strtab_sh = elf + shoff + (uint64_t)shstrndx * shentsize;
    uint64_t stroff = (uint64_t)le32(strtab_sh + 24) | (uint64_t)le32(strtab_sh + 28) << 32;
    char want[256];
    snprintf(want, sizeof want, ".nv.info.%s", entry);
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *sh = elf + shoff + (uint64_t)i * shentsize;
        uint64_t off = (uint64_t)le32(sh + 24) | (uint64_t)le32(sh + 28) << 32;
        uint64_t size = (uint64_t)le32(sh + 32) | (uint64_t)le32(sh + 36) << 32;
        if (stroff + le32(sh) >= len || strcmp((const char *)elf + stroff + le32(sh), want) != 0 ||
            off + size > len)
            continue;
        for (uint64_t p = off; p + 4 <= off + size;) {
            const unsigned fmt = elf[p], attr = elf[p + 1];
            if (fmt == 3 && attr == 0x1b)
                return le16(elf + p + 2);
            if (fmt == 1)
                p += 2;
            else if (fmt == 3 || fmt == 2)
                p += 4;
            else if (fmt == 4)
                p += 4 + le16(elf + p + 2);
            else
                return -1;
        }
    }
    return -1;
}

/* Issue 14 item 4, the evidence behind schema/defines.c: names the loader
 * refuses for a CUDA kernel do break an NVRTC compile, names it allows do
 * not; and tunefarm.h's helpers take no ordinary name (their locals are
 * tf_-prefixed: before, c, d and s broke every compile). */
static void test_define_names_nvrtc(void **state)
{
    (void)state;
    if (!have_nvrtc()) {
        skip();
        return;
    }
    size_t len;
    char *source = read_all("kernels/vecadd_cuda/vecadd.cu", &len);
    assert_non_null(source);
    /* The full language's declarations are where most names break, and a
     * kernel that uses any of them (a texture type, here) is compiled with
     * them (backend_cuda.c, -minimal): the names must hold there too. */
    static const char full[] = "\ntypedef cudaTextureObject_t tf_test_needs_full_language;\n";
    source = realloc(source, len + sizeof full);
    memcpy(source + len, full, sizeof full);
    static const char *const refused[] = {"T", "x", "w", "width", "size", "warpSize", "dim3",
                                          "global", "launch_bounds", "exp2f"};
    /* NVRTC compiles all of these; the loader allows those before "|" (c, d, s, U
     * and lane break hipRTC's headers instead: test_hip) */
    static const char *const allowed[] = {"N", "M", "K", "X", "Y", "Z", "A", "I", "TILE_X",
                                          "BLOCK_SIZE", "m", "smem", "gmem", "threads",
                                          "min_blocks", "unused", "unroll", "|", "c", "d", "s",
                                          "U", "lane"};
    char define[64], block[] = "-DBLOCK=256";
    char *defs[2] = {block, define};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_non_null(tf_define_conflict(refused[i], "cuda"));
        snprintf(define, sizeof define, "-D%s=1", refused[i]);
        char *log = NULL;
        if (compiles(source, defs, 2, &log, NULL, NULL))
            fail_msg("-D%s=1 compiled, but the loader refuses it", refused[i]);
        free(log);
    }
    bool loader_allows = true;
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        if (strcmp(allowed[i], "|") == 0) {
            loader_allows = false;
            continue;
        }
        if (loader_allows)
            assert_null(tf_define_conflict(allowed[i], "cuda"));
        snprintf(define, sizeof define, "-D%s=1", allowed[i]);
        char *log = NULL;
        if (!compiles(source, defs, 2, &log, NULL, NULL))
            fail_msg("-D%s=1 does not compile:\n%s", allowed[i], log ? log : "");
        free(log);
    }
    free(source);

    /* every helper of tunefarm.h instantiated, with its old local names defined */
    const char *helpers =
        "#include \"tunefarm.h\"\n"
        "TF_GLOBAL void TF_LAUNCH_BOUNDS(256) k(float *y, const float *x) {\n"
        "    TF_SHARED float4 buf[64];\n"
        "    tf_cp_async16(&buf[threadIdx.x % 64], x + 4 * threadIdx.x);\n"
        "    TF_CP_ASYNC_COMMIT(); TF_CP_ASYNC_WAIT(0); TF_SYNC();\n"
        "    float v = tf_warp_sum(buf[threadIdx.x % 64].x) + tf_warp_max(x[threadIdx.x]);\n"
        "    v += tf_exp2f(v) + tf_expf(v) + tf_logf(v) + tf_rsqrtf(v) + tf_fdividef(v, 2.0f);\n"
        "    TF_UNROLL_N(4) for (int j = 0; j < 4; j++) v = tf_fmaf(v, v, tf_maxf(v, 1.0f));\n"
        "    y[threadIdx.x] = v;\n"
        "}\n";
    char *olds[] = {"-Da=1", "-Db=2", "-Dc=3", "-Dd=4", "-Ds=5", "-Dv=6", "-Dx=7",
                    "-Dsmem=8", "-Dgmem=9", "-Dm=10", "-Dlane=11", "-Dn=12", "-Dp=13"};
    char *log = NULL;
    assert_true(compiles(helpers, NULL, 0, NULL, NULL, NULL));
    /* a, b, v, x and p are the builtin headers' names (the loader refuses them);
     * the rest must pass */
    char *ours[] = {olds[2], olds[3], olds[4], olds[7], olds[8], olds[9], olds[10], olds[11]};
    if (!compiles(helpers, ours, 8, &log, NULL, NULL))
        fail_msg("tunefarm.h breaks with its old local names defined:\n%s", log ? log : "");
    free(log);
}

/* Issue 14 item 7: TF_LAUNCH_BOUNDS(threads, min_blocks) reaches NVRTC as
 * __launch_bounds__(threads, min_blocks): with 3 blocks of 256 threads per
 * SM the register cap falls to at most 65536 / 768 = 85 per thread. */
static void test_launch_bounds_min_blocks(void **state)
{
    (void)state;
    if (!have_nvrtc()) {
        skip();
        return;
    }
    const char *one = "#include \"tunefarm.h\"\n"
                      "TF_GLOBAL void TF_LAUNCH_BOUNDS(256) k(float *y) { y[threadIdx.x] = 1; }\n";
    const char *two = "#include \"tunefarm.h\"\n"
                      "TF_GLOBAL void TF_LAUNCH_BOUNDS(BLOCK, MIN_BLOCKS) k(float *y)\n"
                      "{ y[threadIdx.x] = 1; }\n";
    unsigned char *bin = NULL;
    size_t len = 0;
    assert_true(compiles(one, NULL, 0, NULL, &bin, &len));
    const int free_regs = cubin_max_regs(bin, len, "k");
    free(bin);
    char *defs[] = {"-DBLOCK=256", "-DMIN_BLOCKS=3"};
    char *log = NULL;
    if (!compiles(two, defs, 2, &log, &bin, &len))
        fail_msg("TF_LAUNCH_BOUNDS(BLOCK, MIN_BLOCKS) does not compile:\n%s", log ? log : "");
    free(log);
    const int capped = cubin_max_regs(bin, len, "k");
    free(bin);
    printf("register cap: %d with TF_LAUNCH_BOUNDS(256), %d with (256, 3)\n", free_regs,
           capped);
    assert_true(capped > 0 && capped <= 85);
    assert_true(free_regs > 85);
}

/* A synthetic H100 (SXM): constraints see what a real one would report. */
static void h100_like(struct tf_device *d)
{
    memset(d, 0, sizeof *d);
    tf_strlcpy(d->backend, "cuda", sizeof d->backend);
    tf_strlcpy(d->name, "synthetic H100", sizeof d->name);
    tf_strlcpy(d->arch, "sm_90", sizeof d->arch);
    d->memory_bytes = (uint64_t)80 << 30;
    d->props[TF_DEVPROP_MAX_THREADS] = 1024;
    d->props[TF_DEVPROP_MAX_SHARED] = 49152;
    d->props[TF_DEVPROP_MAX_SHARED_OPTIN] = 232448;
    d->props[TF_DEVPROP_WARP_SIZE] = 32;
    d->props[TF_DEVPROP_SM_COUNT] = 132;
    d->props[TF_DEVPROP_L2_BYTES] = 50 * 1024 * 1024;
    d->props[TF_DEVPROP_MAX_REGISTERS] = 65536;
    d->props[TF_DEVPROP_SIMD_BYTES] = 0;
    d->props[TF_DEVPROP_MAX_SHARED_PER_SM] = 233472;
}

static void test_every_cuda_kernel_compiles(void **state)
{
    (void)state;
    if (!have_nvrtc()) {
        skip();
        return;
    }
    struct tf_device dev;
    h100_like(&dev);
    compile_library(&dev, "sm_90", 90, compile_config);
}

/* Without a driver the backend says so, and the binary keeps working. */
static void test_probe_reason(void **state)
{
    (void)state;
    struct tf_error err = {0};
    if (tf_cuda_driver_load(NULL) == NULL) {
        assert_int_not_equal(be->probe(&err), 0);
        assert_non_null(strstr(err.message, "no NVIDIA driver (libcuda.so.1 not found"));
        assert_int_equal(be->device_count(), 0);
        struct tf_device d;
        assert_int_not_equal(be->describe(0, &d, &err), 0);
    } else if (be->probe(&err) != 0) {
        /* a driver without a usable GPU: the reason names the CUDA error */
        assert_true(strstr(err.message, "CUDA_ERROR") != NULL ||
                    strstr(err.message, "0 devices") != NULL);
    } else {
        assert_true(be->device_count() >= 1);
    }
    assert_non_null(tf_backend_find("cuda"));
    assert_ptr_equal(tf_backends[0], &tf_backend_cuda); /* GPUs are listed first */
}

/* ---- on a device (gpu_fixture.h) ---- */

static void test_device_describe(void **state)
{
    (void)state;
    if (!have_device(be)) {
        skip();
        return;
    }
    struct tf_device d;
    struct tf_error err = {0};
    assert_true(be->device_count() >= 1);
    assert_int_equal(be->describe(0, &d, &err), 0);
    printf("note: GPU 0: %s, %s, %u SMs, %s, %s, driver %s (%s), %s\n", d.name, d.arch,
           d.compute_units, d.uuid, d.pci_bus, d.driver_version, d.runtime_version,
           d.compiler_version);
    assert_string_equal(d.backend, "cuda");
    assert_string_equal(d.vendor, "NVIDIA");
    assert_int_equal(strncmp(d.arch, "sm_", 3), 0);
    assert_int_equal(strlen(d.uuid), 40); /* GPU-8-4-4-4-12 */
    assert_int_equal(strncmp(d.uuid, "GPU-", 4), 0);
    assert_true(d.uuid[12] == '-' && d.uuid[17] == '-' && d.uuid[22] == '-' && d.uuid[27] == '-');
    assert_int_equal(strlen(d.pci_bus), 12); /* 0000:17:00.0 */
    assert_true(d.pci_bus[4] == ':' && d.pci_bus[7] == ':' && d.pci_bus[10] == '.');
    assert_non_null(strchr(d.driver_version, '.'));
    assert_int_equal(strncmp(d.compiler_version, "NVRTC ", 6), 0);
    assert_true(d.memory_bytes >= ((uint64_t)1 << 30));
    assert_int_equal(d.props[TF_DEVPROP_MAX_THREADS], 1024);
    assert_int_equal(d.props[TF_DEVPROP_WARP_SIZE], 32);
    assert_true(d.props[TF_DEVPROP_MAX_SHARED] >= 48 * 1024);
    assert_true(d.props[TF_DEVPROP_MAX_SHARED_OPTIN] >= d.props[TF_DEVPROP_MAX_SHARED]);
    assert_true(d.props[TF_DEVPROP_SM_COUNT] >= 1);
    assert_int_equal(d.compute_units, (uint32_t)d.props[TF_DEVPROP_SM_COUNT]);
    assert_true(d.props[TF_DEVPROP_L2_BYTES] >= 1 << 20);
    assert_true(d.props[TF_DEVPROP_MAX_REGISTERS] >= 32768);
    /* an SM holds at least what one block may opt in to; what the nominal
     * device of the architecture says, where there is one */
    assert_true(d.props[TF_DEVPROP_MAX_SHARED_PER_SM] >= d.props[TF_DEVPROP_MAX_SHARED_OPTIN]);
    struct tf_device nominal;
    if (tf_device_for_arch(d.arch, &nominal) == 0)
        assert_int_equal(d.props[TF_DEVPROP_MAX_SHARED_PER_SM],
                         nominal.props[TF_DEVPROP_MAX_SHARED_PER_SM]);
    printf("%s: max_shared_per_sm %lld, max_shared_optin %lld\n", d.name,
           (long long)d.props[TF_DEVPROP_MAX_SHARED_PER_SM],
           (long long)d.props[TF_DEVPROP_MAX_SHARED_OPTIN]);
}

/* One output compared on the device (backend.h, compare_queue) against
 * tf_verify on the host: the same count of failures and the same first, and
 * the checksum of the expected values as tf_verify_checksum makes it. */
static void device_compare_case(struct tf_backend_ctx *ctx, int slot, enum tf_elem_type type,
                                const void *got, const void *expected, size_t count, double rtol,
                                double atol)
{
    struct tf_error err = {0};
    const size_t bytes = count * tf_elem_size(type);
    void *dg = NULL, *de = NULL;
    assert_int_equal(be->alloc(ctx, bytes, &dg, &err), 0);
    assert_int_equal(be->alloc(ctx, bytes, &de, &err), 0);
    assert_int_equal(be->upload(ctx, dg, got, bytes, &err), 0);
    assert_int_equal(be->upload(ctx, de, expected, bytes, &err), 0);
    if (be->compare_queue(ctx, slot, type, dg, de, count, rtol, atol, &err) != 0)
        fail_msg("compare_queue: %s", err.message);
    assert_int_equal(be->download_wait(ctx, &err), 0);
    uint64_t bad, first, sum;
    be->compare_result(ctx, slot, &bad, &first, &sum);
    char message[256];
    const int status = tf_verify("out", type, got, expected, count, rtol, atol, message,
                                 sizeof message);
    size_t host_bad = 0, host_first = 0;
    if (status != TF_STATUS_OK)
        assert_int_equal(sscanf(message, "out[%zu] = %*s expected %*s (%zu of", &host_first,
                                &host_bad),
                         2);
    printf("type %d, %zu elements: device %llu bad (first %llu), host %zu (first %zu)\n",
           (int)type, count, (unsigned long long)bad, (unsigned long long)first, host_bad,
           host_first);
    assert_int_equal(bad, host_bad);
    if (host_bad > 0)
        assert_int_equal(first, host_first);
    else
        assert_true(first == UINT64_MAX);
    assert_true(sum == tf_verify_checksum(expected, bytes));
    be->release(ctx, dg);
    be->release(ctx, de);
}

static void test_device_compare(void **state)
{
    (void)state;
    if (!have_device(be)) {
        skip();
        return;
    }
    struct tf_backend_ctx *ctx = NULL;
    struct tf_error err = {0};
    assert_int_equal(be->open(0, &ctx, &err), 0);
    assert_non_null(be->compare_queue);
    const size_t n = (size_t)3 << 20; /* more elements than the grid has threads */
    float *gf = malloc(n * sizeof *gf), *ef = malloc(n * sizeof *ef);
    double *gd = malloc(n * sizeof *gd), *ed = malloc(n * sizeof *ed);
    int32_t *gi = malloc(n * sizeof *gi), *ei = malloc(n * sizeof *ei);
    int64_t *gl = malloc(n * sizeof *gl), *el = malloc(n * sizeof *el);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ef[i] = (float)((double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        gf[i] = ef[i];
        ed[i] = ef[i];
        gd[i] = ed[i];
        ei[i] = gi[i] = (int32_t)x;
        el[i] = gl[i] = (int64_t)x;
    }
    /* all equal first, in every type */
    device_compare_case(ctx, 0, TF_ELEM_F32, gf, ef, n, 1e-3, 1e-3);
    device_compare_case(ctx, 1, TF_ELEM_F64, gd, ed, n, 1e-9, 1e-9);
    device_compare_case(ctx, 2, TF_ELEM_I32, gi, ei, n, 0, 0);
    device_compare_case(ctx, 3, TF_ELEM_I64, gl, el, n, 0, 0);
    /* floats on both sides of the edge: atol + rtol * |e| exactly in float */
    const float at = 1e-3f, rt = 1e-3f;
    for (size_t i = 1000; i < 1000 + 4096; i++) {
        const float edge = at + rt * fabsf(ef[i]);
        gf[i] = ef[i] + (i % 2 ? edge : nextafterf(edge, 1.0f));
    }
    gf[n - 1] = NAN;
    gf[n - 2] = INFINITY;
    ef[n - 3] = INFINITY;
    gf[n - 3] = INFINITY;
    ef[n / 2] = NAN;
    device_compare_case(ctx, 4, TF_ELEM_F32, gf, ef, n, 1e-3, 1e-3);
    gd[17] = ed[17] + 1e-6;
    gd[n - 5] = NAN;
    device_compare_case(ctx, 5, TF_ELEM_F64, gd, ed, n, 1e-9, 1e-9);
    gi[n / 3] ^= 1;
    gi[n - 1] ^= 1 << 30;
    device_compare_case(ctx, 6, TF_ELEM_I32, gi, ei, n, 0, 0);
    gl[12345] ^= (int64_t)1 << 40; /* only the high word differs */
    device_compare_case(ctx, 7, TF_ELEM_I64, gl, el, n, 0, 0);
    device_compare_case(ctx, TF_COMPARE_SLOTS - 1, TF_ELEM_F32, gf, ef, 1, 1e-3, 1e-3);
    assert_int_not_equal(be->compare_queue(ctx, TF_COMPARE_SLOTS, TF_ELEM_F32, NULL, NULL, 0, 0, 0,
                                           &err),
                         0);
    free(gf), free(ef), free(gd), free(ed), free(gi), free(ei), free(gl), free(el);
    be->close(ctx);
}

static void test_device_vecadd(void **state)
{
    (void)state;
    if (!have_device(be)) {
        skip();
        return;
    }
    struct device_fixture *f = device_start(be, "tests/fixtures/vecadd_cuda.yaml");
    struct tf_error err = {0};
    struct tf_space *s = tf_space_create(f->k, (int)f->problem, &f->dev, &err);
    assert_non_null(s);
    uint64_t count = 0;
    assert_int_equal(tf_space_count(s, 0, tf_space_cartesian(s), &count, &err), 0);
    assert_int_equal(count, 5); /* BLOCK 2048 is over max_threads */
    for (uint64_t c = 0; c < count; c++)
        expect_ok(f, f->problem, c);
    tf_space_destroy(s);
    /* the other problem (2^24 elements) too, with telemetry where NVML is */
    struct tf_result r;
    measure(f, (uint32_t)f->job->kernels[0].problems[1], f->k->default_index, &r);
    assert_int_equal(r.status, TF_STATUS_OK);
    assert_int_equal(r.flushed_l2, 1);
    printf("note: vecadd_cuda large: %.2f us, %.0f GB/s, %d registers, SM %.0f MHz, %.0f W, "
           "%.3f J, %.0f C, throttled %d\n",
           r.time_median * 1e6, 12.0 * (1 << 24) / r.time_median / 1e9, r.registers,
           r.sm_clock_mhz, r.power_w, r.energy_j, r.temperature_c, r.throttled);
    if (tf_nvml_load(NULL) != NULL) {
        assert_true(r.sm_clock_mhz > 0);
        assert_true(r.temperature_c > 0);
    }
    /* Energy over its own window (energy_time 0.1 s): a launch's energy is a
     * board's power (10..2000 W) over its time, or the reason why not. */
    const double per_launch = r.energy_j / r.samples;
    printf("note: vecadd_cuda large energy: %s, %.4g J a launch (%.0f W over its median)\n",
           tf_energy_status_name(r.energy_status), per_launch, per_launch / r.time_median);
    if (r.energy_status == TF_ENERGY_MEASURED) {
        assert_true(per_launch > 10 * r.time_median && per_launch < 2000 * r.time_median);
    } else {
        assert_true(isnan(r.energy_j));
        /* without NVML's counter it says so; with it, the window must find one */
        assert_true(r.energy_status == TF_ENERGY_NO_COUNTER);
    }
    assert_true(tf_runner_device_seconds(f->runner) > 0.0);
    assert_int_equal(tf_runner_starts(f->runner), 1);
    device_stop(f);
}

/* Two batches queued at once (the energy window keeps the device busy so):
 * each collect answers the oldest, with every one of its launches timed;
 * with none queued, collect answers at once. */
static void test_device_two_batches(void **state)
{
    (void)state;
    if (!have_device(be)) {
        skip();
        return;
    }
    struct tf_device d;
    struct tf_backend_ctx *ctx = NULL;
    struct tf_error err = {0};
    assert_int_equal(be->describe(0, &d, &err), 0);
    /* a kernel of about 50 us: a dependent chain of FMAs per thread */
    const char *src = "extern \"C\" __global__ void busy(float *x, int n) {\n"
                      "    float v = x[threadIdx.x];\n"
                      "    for (int i = 0; i < n; i++) v = v * 0.999f + 0.5f;\n"
                      "    x[threadIdx.x] = v;\n"
                      "}\n";
    char path[] = "/tmp/tf-test-batches-XXXXXX";
    temp_file(path);
    struct tf_compile_output out;
    assert_int_equal(compile_source("busy.cu", src, "busy", d.arch, NULL, 0, NULL, 0, path, &out),
                     0);
    assert_true(out.ok);
    free(out.log);
    assert_int_equal(be->open(0, &ctx, &err), 0);
    void *fn = NULL, *x = NULL;
    assert_int_equal(be->load(ctx, path, "busy", &fn, &err), 0);
    unlink(path);
    assert_int_equal(be->alloc(ctx, 256 * sizeof(float), &x, &err), 0);
    int n = 20000;
    void *args[] = {&x, &n};
    const struct tf_launch g = {.grid = {1, 1, 1}, .block = {256, 1, 1}};
    assert_non_null(be->enqueue);
    double first[TF_MAX_BATCH], second[TF_MAX_BATCH];
    assert_int_equal(be->enqueue(ctx, fn, &g, args, 3, 0, &err), TF_STATUS_OK);
    assert_int_equal(be->enqueue(ctx, fn, &g, args, 5, 0, &err), TF_STATUS_OK);
    for (int i = 0; i < TF_MAX_BATCH; i++)
        first[i] = second[i] = -1;
    assert_int_equal(be->collect(ctx, first, &err), TF_STATUS_OK);
    assert_int_equal(be->collect(ctx, second, &err), TF_STATUS_OK);
    double sum = 0;
    for (int i = 0; i < 3; i++) {
        assert_true(first[i] > 1e-6);
        sum += first[i];
    }
    assert_true(first[3] == -1); /* the first batch is three launches */
    for (int i = 0; i < 5; i++) {
        assert_true(second[i] > 1e-6);
        sum += second[i];
    }
    assert_true(second[5] == -1);
    printf("note: two queued batches: 3 + 5 launches of %.1f us on average\n", sum / 8 * 1e6);
    /* nothing left: a collect answers at once; then one batch works as before */
    assert_int_equal(be->collect(ctx, first, &err), TF_STATUS_OK);
    assert_int_equal(be->enqueue(ctx, fn, &g, args, 2, 1, &err), TF_STATUS_OK);
    assert_int_equal(be->collect(ctx, first, &err), TF_STATUS_OK);
    assert_true(first[0] > 1e-6 && first[1] > 1e-6);
    be->release(ctx, x);
    be->unload(ctx, fn);
    be->close(ctx);
}

/* Configuration of MODE index `mode`, BLOCK index `block` of the fault fixture. */
static uint64_t fault_config(const struct tf_kernel *k, int mode, int block)
{
    int digits[2] = {mode, block};
    return tf_kernel_encode(k, digits);
}

static void test_device_faults(void **state)
{
    (void)state;
    if (!have_device(be)) {
        skip();
        return;
    }
    struct device_fixture *f = device_start(be, "tests/fixtures/gpufaults.yaml");
    struct tf_result r;
    expect_ok(f, f->problem, fault_config(f->k, 0, 0));
    assert_int_equal(tf_runner_starts(f->runner), 1);

    /* illegal address: runtime_error naming the CUDA error; the runner leaves
     * (its context is broken) and the next variant runs in a fresh one */
    measure(f, f->problem, fault_config(f->k, 1, 0), &r);
    fprintf(stderr, "note: MODE 1: %s: %s\n", tf_status_name(r.status), r.message);
    assert_int_equal(r.status, TF_STATUS_RUNTIME_ERROR);
    assert_non_null(strstr(r.message, "CUDA_ERROR_ILLEGAL_ADDRESS"));
    expect_ok(f, f->problem, fault_config(f->k, 0, 0));
    assert_int_equal(tf_runner_starts(f->runner), 2);

    /* a kernel that never ends: killed at the job's deadline */
    measure(f, f->problem, fault_config(f->k, 2, 0), &r);
    assert_int_equal(r.status, TF_STATUS_TIMEOUT);
    expect_ok(f, f->problem, fault_config(f->k, 0, 0));
    assert_int_equal(tf_runner_starts(f->runner), 3);

    /* one wrong element: wrong_result (the verified launch's output is
     * snapshotted and downloaded while the samples run), the runner stays */
    measure(f, f->problem, fault_config(f->k, 3, 0), &r);
    assert_int_equal(r.status, TF_STATUS_WRONG_RESULT);
    fprintf(stderr, "note: MODE 3: %s: %s\n", tf_status_name(r.status), r.message);
    /* the device's comparison found it, the host's wrote the message */
    assert_non_null(strstr(r.message, "y[2048] = "));
    assert_non_null(strstr(r.message, "(1 of 4096 wrong)"));
    expect_ok(f, f->problem, fault_config(f->k, 0, 0));
    assert_int_equal(tf_runner_starts(f->runner), 3);

    /* 2048 threads per block: refused before launch, the runner stays */
    for (int mode = 0; mode < 4; mode++) {
        measure(f, f->problem, fault_config(f->k, mode, 1), &r);
        assert_int_equal(r.status, TF_STATUS_INVALID);
        assert_non_null(strstr(r.message, "2048 threads"));
    }
    expect_ok(f, f->problem, fault_config(f->k, 0, 0));
    assert_int_equal(tf_runner_starts(f->runner), 3);
    device_stop(f);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "__runner") == 0)
        return tf_runner_main(argc, argv);
    if (argc > 1 && strcmp(argv[1], "__nocuda") == 0)
        return nocuda_child();
    /* These tests call NVRTC in this process, beside the real driver (the
     * device tests need it). NVRTC 13 then answers a program it has seen from
     * the driver's compute cache (~/.nv), without ptxas' report, and the
     * register and spill checks fail on a machine that ran them before. The
     * runs' compiler processes never reach the driver (worker/nocuda.c). */
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_reason),
        cmocka_unit_test(test_compile_vecadd_cubin),
        cmocka_unit_test(test_compile_error_names_line),
        cmocka_unit_test(test_full_language_kernel_compiles),
        cmocka_unit_test(test_compare_kernels_compile),
        cmocka_unit_test(test_compiler_hides_the_driver),
        cmocka_unit_test(test_compile_reports_resources_and_warnings),
        cmocka_unit_test(test_every_cuda_kernel_compiles),
        cmocka_unit_test(test_define_names_nvrtc),
        cmocka_unit_test(test_launch_bounds_min_blocks),
        cmocka_unit_test(test_device_describe),
        cmocka_unit_test(test_device_vecadd),
        cmocka_unit_test(test_device_two_batches),
        cmocka_unit_test(test_device_compare),
        cmocka_unit_test(test_device_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
