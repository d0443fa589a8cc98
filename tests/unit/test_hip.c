/* test_hip.c - the hip backend: hipRTC on any CPU, the runner on a real AMD GPU.
 *
 * Compiling needs no device, so wherever hipRTC loads these tests compile for
 * real, for gfx90a and gfx942: kernels/vecadd_cuda into a code object whose
 * ELF header must say EM_AMDGPU and the requested target in e_flags' MACH
 * bits (unwrapped first if hipRTC hands back a clang offload bundle), a
 * variant with a syntax error into a log that names its line, targets hipRTC
 * cannot build for into compile errors rather than a dead process, the
 * header's TF_WARP_SIZE into the target's wavefront width, and the
 * default plus a seeded sample of valid variants of every CUDA kernel of the
 * library (found by scanning kernels/STAR/kernel.yaml) on the nominal device
 * of each architecture (tf_device_for_arch). A target the installed hipRTC
 * does not know (gfx942 with Debian bookworm's ROCm 5.2.3, whose comgr and
 * LLVM 15 predate MI300) is skipped for that target only, with the
 * compiler's reason. The device tests need an AMD GPU: this executable is its
 * own runner (main hands `__runner` to tf_runner_main) and measures
 * kernels/vecadd_cuda and the fault fixture in real child processes. Without
 * hipRTC or without a GPU the tests print "skipped: no hipRTC (...)" /
 * "skipped: no device (...)" and skip; nothing is faked. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "../../worker/hip_api.h"
#include "../../worker/runner.h"
#include "gpu_fixture.h"

/* From LLVM's llvm/BinaryFormat/ELF.h. */
#define EM_AMDGPU_MACHINE 224
#define EF_AMDGPU_MACH_MASK 0x0ff
#define EF_AMDGPU_MACH_GFX90A 0x03f
#define EF_AMDGPU_MACH_GFX942 0x04c

static const struct tf_backend *be = &tf_backend_hip;

static const struct {
    const char *arch;
    int mach;
} targets[] = {
    {"gfx90a", EF_AMDGPU_MACH_GFX90A},
    {"gfx942", EF_AMDGPU_MACH_GFX942},
};

/* ---- helpers ---- */

static int have_hiprtc(void)
{
    static int said;
    struct tf_error err = {0};
    if (tf_hiprtc_load(&err) != NULL)
        return 1;
    if (!said++)
        printf("skipped: no hipRTC (%s)\n", err.message);
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

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* The EF_AMDGPU_MACH bits of an AMDGPU ELF64 code object, -1 if it is not one. */
static int elf_mach(const unsigned char *elf, size_t len)
{
    if (len < 64 || memcmp(elf, "\177ELF", 4) != 0 || elf[4] != 2 /* ELFCLASS64 */ ||
        le16(elf + 18) != EM_AMDGPU_MACHINE)
        return -1;
    return (int)(le32(elf + 48) & EF_AMDGPU_MACH_MASK);
}

/* The MACH bits of what hipRTC wrote: a bare ELF, or the amdgcn entry of a
 * clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__", a u64 count, then per
 * entry u64 offset, u64 size, u64 id length and the id, e.g.
 * "hipv4-amdgcn-amd-amdhsa--gfx90a"). `kind` says which it was. */
static int code_object_mach(const unsigned char *bin, size_t len, const char **kind)
{
    static const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
    const size_t m = sizeof magic - 1;
    *kind = "ELF";
    if (len < m + 8 || memcmp(bin, magic, m) != 0)
        return elf_mach(bin, len);
    *kind = "offload bundle";
    const uint64_t count = le64(bin + m);
    size_t at = m + 8;
    for (uint64_t i = 0; i < count && at + 24 <= len; i++) {
        const uint64_t off = le64(bin + at), size = le64(bin + at + 8), idlen = le64(bin + at + 16);
        at += 24;
        if (idlen > len - at)
            return -1;
        const int amdgcn = idlen >= 6 && memmem(bin + at, idlen, "amdgcn", 6) != NULL;
        at += idlen;
        if (amdgcn && off <= len && size <= len - off)
            return elf_mach(bin + off, size);
    }
    return -1;
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

/* 1 if this hipRTC builds code for `arch`; else prints the skip line with the
 * compiler's reason (once per target) and returns 0. */
static int target_supported(const char *arch)
{
    static char said[8][16];
    char path[] = "/tmp/tf-test-hip-XXXXXX";
    char *width[] = {"-DWIDTH=4"};
    const char *source = "#include \"tunefarm.h\"\n"
                         "TF_GLOBAL void f(float *y) { y[0] = WIDTH; }\n";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct tf_compile_output out;
    assert_int_equal(compile_source("probe.cu", source, "f", arch, width, 1, NULL, 0, path, &out),
                     0);
    unlink(path);
    const int ok = out.ok;
    if (!ok) {
        /* not supported is the only acceptable reason: it names the target */
        assert_non_null(out.log);
        assert_non_null(strstr(out.log, arch));
        int seen = 0;
        for (int i = 0; i < 8 && said[i][0]; i++)
            seen |= strcmp(said[i], arch) == 0;
        for (int i = 0; !seen && i < 8; i++)
            if (said[i][0] == '\0') {
                snprintf(said[i], sizeof said[i], "%s", arch);
                printf("skipped: %s not supported by this hipRTC (%s)\n", arch, out.log);
                break;
            }
    }
    free(out.log);
    return ok;
}

/* Compile configuration `config` of `k` for `arch`; asserts it compiles and
 * returns the MACH bits of the code object. */
static int compile_config(const struct tf_kernel *k, uint64_t config, const char *arch)
{
    char *defines[TF_MAX_DEFINES];
    char path[] = "/tmp/tf-test-hip-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
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
    assert_int_equal(out.registers, -1); /* known only once loaded */
    size_t len = 0;
    unsigned char *bin = (unsigned char *)read_all(path, &len);
    assert_non_null(bin);
    const char *kind = NULL;
    const int mach = code_object_mach(bin, len, &kind);
    static int noted;
    if (!noted++)
        printf("note: hipRTC wrote a%s %s for %s, e_flags 0x%x\n",
               strcmp(kind, "ELF") == 0 ? "n" : "", kind, arch,
               strcmp(kind, "ELF") == 0 && len >= 64 ? le32(bin + 48) : 0u);
    free(bin);
    free(out.log);
    unlink(path);
    for (int i = 0; i < nd; i++)
        free(defines[i]);
    return mach;
}

/* ---- hipRTC (no device) ---- */

static void test_compile_vecadd_code_object(void **state)
{
    (void)state;
    if (!have_hiprtc()) {
        skip();
        return;
    }
    struct tf_error err = {0};
    struct tf_bundle *b = tf_bundle_create();
    struct tf_kernel *k = tf_kernel_load("kernels/vecadd_cuda/kernel.yaml", b, &err);
    if (k == NULL)
        tf_error_print(&err, "test_hip", stderr);
    assert_non_null(k);
    assert_string_equal(k->language, be->language);
    assert_true(k->has_default);
    /* the target requested is the target in the binary, for each one this hipRTC knows */
    int compiled = 0;
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        if (!target_supported(targets[t].arch))
            continue;
        assert_int_equal(compile_config(k, k->default_index, targets[t].arch), targets[t].mach);
        compiled++;
    }
    assert_true(target_supported("gfx90a")); /* every hipRTC since ROCm 4 builds MI200 code */
    assert_true(compiled >= 1);
    /* the compiler identity names hipRTC and its release (cache keys depend on it) */
    assert_non_null(strstr(be->compiler_id(), "hipRTC "));
    /* ... and the options every compile passes (an older tunefarm's binaries miss) */
    assert_non_null(strstr(be->compiler_id(), "| options -std=c++17 -I<the source's folder>"));
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* Compile `source` for gfx90a with `defines`: 1 if it compiled (the log to
 * *log if log is not NULL), 0 if not. */
static int hip_compiles(const char *source, char **defines, int ndefines, char **log)
{
    char path[] = "/tmp/tf-test-hip-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct tf_compile_output out;
    assert_int_equal(compile_source("lb.cu", source, "k", "gfx90a", defines, ndefines, NULL, 0,
                                    path, &out),
                     0);
    unlink(path);
    if (log)
        *log = out.log;
    else
        free(out.log);
    return out.ok;
}

/* Issue 14 item 7: TF_LAUNCH_BOUNDS(threads, min_blocks) on AMD passes HIP's
 * second argument, waves per EU: ceil(min_blocks * threads / (warp * 4)), at
 * least 1, checked by static_assert under hipRTC for gfx90a (wave64), and a
 * kernel with both arguments as defines compiles. */
static void test_launch_bounds_min_blocks(void **state)
{
    (void)state;
    if (!have_hiprtc()) {
        skip();
        return;
    }
    const char *source =
        "#include \"tunefarm.h\"\n"
        "static_assert(TF_WARP_SIZE == 64, \"gfx90a runs wave64\");\n"
        "static_assert(TF_WAVES_PER_EU(256, 3) == 3, \"768 threads = 12 waves on 4 SIMDs\");\n"
        "static_assert(TF_WAVES_PER_EU(1024, 2) == 8, \"2048 threads = 32 waves\");\n"
        "static_assert(TF_WAVES_PER_EU(320, 1) == 2, \"5 waves: 2 on some SIMD\");\n"
        "static_assert(TF_WAVES_PER_EU(64, 1) == 1, \"at least 1\");\n"
        "TF_GLOBAL void TF_LAUNCH_BOUNDS(BLOCK, MIN_BLOCKS) k(float *y) { y[threadIdx.x] = 1; }\n"
        "TF_GLOBAL void TF_LAUNCH_BOUNDS(BLOCK) k1(float *y) { y[threadIdx.x] = 2; }\n";
    char *defs[] = {"-DBLOCK=256", "-DMIN_BLOCKS=3"};
    char *log = NULL;
    if (!hip_compiles(source, defs, 2, &log))
        fail_msg("TF_LAUNCH_BOUNDS with two arguments does not compile under hipRTC:\n%s",
                 log ? log : "");
    free(log);
}

/* Issue 14 item 4 on AMD, the evidence behind schema/defines.c's hiprtc_names:
 * names the loader refuses for their hipRTC headers do break a hipRTC
 * compile (T and U are template parameters there, c and s parameters of
 * clang's HIP math declarations), names it allows do not. */
static void test_define_names_hiprtc(void **state)
{
    (void)state;
    if (!have_hiprtc()) {
        skip();
        return;
    }
    const char *source = "#include \"tunefarm.h\"\n"
                         "TF_GLOBAL void TF_LAUNCH_BOUNDS(256) k(float *y) {\n"
                         "    y[threadIdx.x] = tf_warp_sum(y[threadIdx.x]);\n"
                         "}\n";
    char define[64];
    char *defs[] = {define};
    char *log = NULL;
    static const char *const refused[] = {"T", "B", "U", "c", "s", "n", "lane", "min", "x"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_non_null(tf_define_conflict(refused[i], "cuda"));
        snprintf(define, sizeof define, "-D%s=1", refused[i]);
        if (hip_compiles(source, defs, 1, &log))
            fail_msg("hipRTC: -D%s=1 compiled, but the loader refuses it", refused[i]);
        free(log);
    }
    static const char *const allowed[] = {"N", "M", "K", "X", "Y", "Z", "BLOCK", "TILE_X",
                                          "m", "smem", "gmem", "threads"};
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        assert_null(tf_define_conflict(allowed[i], "cuda"));
        snprintf(define, sizeof define, "-D%s=1", allowed[i]);
        if (!hip_compiles(source, defs, 1, &log))
            fail_msg("hipRTC: -D%s=1 does not compile:\n%s", allowed[i], log ? log : "");
        free(log);
    }
}

static void test_compile_error_names_line(void **state)
{
    (void)state;
    if (!have_hiprtc()) {
        skip();
        return;
    }
    const char *source = "#include \"tunefarm.h\"\n"
                         "TF_GLOBAL void broken(float *y)\n"
                         "{\n"
                         "    y[threadIdx.x] = 1.0f +;\n"
                         "}\n";
    char path[] = "/tmp/tf-test-hip-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    struct tf_compile_output out;
    assert_int_equal(compile_source("kernels/broken/broken.cu", source, "broken", "gfx90a", NULL,
                                    0, NULL, 0, path, &out),
                     0);
    assert_int_equal(out.ok, 0);
    assert_non_null(out.log);
    /* clang's "file:line:column: error: ..." for line 4 */
    if (strstr(out.log, "kernels/broken/broken.cu:4:") == NULL || strstr(out.log, "error") == NULL)
        fprintf(stderr, "log:\n%s\n", out.log);
    assert_non_null(strstr(out.log, "kernels/broken/broken.cu:4:"));
    assert_non_null(strstr(out.log, "error"));
    assert_int_equal(access(path, F_OK), -1); /* no binary for a rejected variant */
    free(out.log);

    /* a define the source needs and does not get is a compile error too */
    const char *needs = "#include \"tunefarm.h\"\n"
                        "TF_GLOBAL void f(float *y) { y[0] = WIDTH; }\n";
    assert_int_equal(compile_source("needs.cu", needs, "f", "gfx90a", NULL, 0, NULL, 0, path,
                                    &out),
                     0);
    assert_int_equal(out.ok, 0);
    assert_non_null(strstr(out.log, "WIDTH"));
    free(out.log);
    char *width[] = {"-DWIDTH=4"};
    assert_int_equal(compile_source("needs.cu", needs, "f", "gfx90a", width, 1, NULL, 0, path,
                                    &out),
                     0);
    assert_int_equal(out.ok, 1);
    free(out.log);
    unlink(path);

    /* an architecture that is not AMD's, and an AMD-looking one no compiler
     * knows (which kills ROCm 5.2's hipRTC if it ever sees it): the variant's
     * problem, not a crash */
    const char *foreign[] = {"sm_90", "gfx9999", "gfx90a:bogus+"};
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        assert_int_equal(compile_source("needs.cu", needs, "f", foreign[i], width, 1, NULL, 0,
                                        path, &out),
                         0);
        assert_int_equal(out.ok, 0);
        assert_non_null(strstr(out.log, foreign[i][0] == 's' ? "sm_90" : "gfx"));
        free(out.log);
        assert_int_equal(access(path, F_OK), -1);
    }
    /* target features pass through to --offload-arch */
    assert_int_equal(compile_source("needs.cu", needs, "f", "gfx90a:xnack-", width, 1, NULL, 0,
                                    path, &out),
                     0);
    assert_int_equal(out.ok, 1);
    free(out.log);
    unlink(path);
    /* an option hipRTC does not know (a kernel's options) is the variant's problem */
    char *bogus[] = {"--no-such-option"};
    assert_int_equal(compile_source("needs.cu", needs, "f", "gfx90a", width, 1, bogus, 1, path,
                                    &out),
                     0);
    assert_int_equal(out.ok, 0);
    assert_non_null(out.log);
    free(out.log);
    unlink(path);
}

/* TF_WARP_SIZE in "tunefarm.h" is the target's wavefront: 64 on CDNA, 32 on
 * RDNA, what describe() reports as warp_size on such a device. */
static void test_warp_size_follows_target(void **state)
{
    (void)state;
    if (!have_hiprtc()) {
        skip();
        return;
    }
    const char *source = "#include \"tunefarm.h\"\n"
                         "#if TF_WARP_SIZE != WANT\n"
                         "#error TF_WARP_SIZE is not WANT\n"
                         "#endif\n"
                         "TF_GLOBAL void f(float *y) { y[0] = tf_warp_sum(y[threadIdx.x]); }\n";
    static const struct {
        const char *arch, *want;
    } cases[] = {{"gfx90a", "-DWANT=64"}, {"gfx942", "-DWANT=64"}, {"gfx1030", "-DWANT=32"}};
    char path[] = "/tmp/tf-test-hip-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!target_supported(cases[i].arch))
            continue;
        char *want[] = {(char *)cases[i].want};
        struct tf_compile_output out;
        assert_int_equal(compile_source("warp.cu", source, "f", cases[i].arch, want, 1, NULL, 0,
                                        path, &out),
                         0);
        if (!out.ok)
            fprintf(stderr, "%s:\n%s\n", cases[i].arch, out.log ? out.log : "(no log)");
        assert_int_equal(out.ok, 1);
        free(out.log);
    }
    unlink(path);
}

static void test_every_cuda_kernel_compiles(void **state)
{
    (void)state;
    if (!have_hiprtc()) {
        skip();
        return;
    }
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++)
        if (target_supported(targets[t].arch)) {
            struct tf_device dev;
            assert_int_equal(tf_device_for_arch(targets[t].arch, &dev), 0);
            assert_string_equal(dev.backend, "hip");
            compile_library(&dev, targets[t].arch, targets[t].mach, compile_config);
        }
}

/* Without a runtime or a GPU the backend says so, and the binary keeps working. */
static void test_probe_reason(void **state)
{
    (void)state;
    struct tf_error err = {0};
    if (tf_hip_runtime_load(&err) == NULL) {
        assert_non_null(strstr(err.message, "libamdhip64"));
        assert_null(strstr(err.message, "has no symbol")); /* a library we cannot use is a bug */
        memset(&err, 0, sizeof err);
        assert_int_not_equal(be->probe(&err), 0);
        assert_non_null(strstr(err.message, "no libamdhip64"));
        assert_int_equal(be->device_count(), 0);
        struct tf_device d;
        assert_int_not_equal(be->describe(0, &d, &err), 0);
    } else if (be->probe(&err) != 0) {
        /* a runtime without a usable GPU (this is CI): the reason says so */
        printf("note: hip probe: %s\n", err.message);
        assert_non_null(strstr(err.message, "no AMD GPU"));
        assert_int_equal(be->device_count(), 0);
        struct tf_device d;
        memset(&err, 0, sizeof err);
        assert_int_not_equal(be->describe(0, &d, &err), 0);
        assert_true(err.message[0] != '\0');
    } else {
        assert_true(be->device_count() >= 1);
    }
    assert_non_null(tf_backend_find("hip"));
    /* GPUs before the host, NVIDIA then AMD */
    assert_ptr_equal(tf_backends[0], &tf_backend_cuda);
    assert_ptr_equal(tf_backends[1], &tf_backend_hip);
    assert_ptr_equal(tf_backends[2], &tf_backend_host);
    /* every member of the cuda backend, and the download quartet */
    assert_string_equal(be->name, "hip");
    assert_string_equal(be->language, "cuda");
    assert_non_null(be->function_info);
    assert_non_null(be->telemetry);
    assert_non_null(be->healthy);
    assert_non_null(be->enqueue);
    assert_non_null(be->collect);
    assert_non_null(be->copy);
    assert_non_null(be->host_alloc);
    assert_non_null(be->host_free);
    assert_non_null(be->download_async);
    assert_non_null(be->download_wait);
}

/* ROCm SMI, where installed, resolves every symbol we declare; without a GPU
 * its rsmi_init fails, and that is a reason, not a crash. */
static void test_rocm_smi_loads_or_says_why(void **state)
{
    (void)state;
    struct tf_error err = {0};
    const struct tf_rocm_smi *smi = tf_rocm_smi_load(&err);
    if (smi == NULL) {
        printf("note: ROCm SMI: %s\n", err.message);
        assert_true(err.message[0] != '\0');
        assert_null(strstr(err.message, "has no symbol"));
    }
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
    printf("note: GPU 0: %s, %s, %u CUs, %s, %s, HIP %s (amdgpu %s), %s\n", d.name, d.arch,
           d.compute_units, d.uuid, d.pci_bus, d.driver_version, d.runtime_version,
           d.compiler_version);
    assert_string_equal(d.backend, "hip");
    assert_string_equal(d.vendor, "AMD");
    assert_int_equal(strncmp(d.arch, "gfx", 3), 0);
    assert_null(strchr(d.arch, ':')); /* target features stripped */
    assert_int_equal(strlen(d.pci_bus), 12); /* 0000:c1:00.0 */
    assert_true(d.pci_bus[4] == ':' && d.pci_bus[7] == ':' && d.pci_bus[10] == '.');
    assert_non_null(strchr(d.driver_version, '.'));
    assert_int_equal(strncmp(d.compiler_version, "hipRTC ", 7), 0);
    assert_true(d.memory_bytes >= ((uint64_t)1 << 30));
    assert_int_equal(d.props[TF_DEVPROP_MAX_THREADS], 1024);
    /* CDNA (gfx9xx) runs wavefronts of 64, RDNA of 32 */
    assert_int_equal(d.props[TF_DEVPROP_WARP_SIZE], strncmp(d.arch, "gfx9", 4) == 0 ? 64 : 32);
    assert_true(d.props[TF_DEVPROP_MAX_SHARED] >= 32 * 1024);
    assert_true(d.props[TF_DEVPROP_MAX_SHARED_OPTIN] >= d.props[TF_DEVPROP_MAX_SHARED]);
    assert_true(d.props[TF_DEVPROP_MAX_SHARED_PER_SM] >= d.props[TF_DEVPROP_MAX_SHARED_OPTIN]);
    assert_true(d.props[TF_DEVPROP_SM_COUNT] >= 1);
    assert_int_equal(d.compute_units, (uint32_t)d.props[TF_DEVPROP_SM_COUNT]);
    assert_true(d.props[TF_DEVPROP_L2_BYTES] >= 1 << 20);
    assert_true(d.props[TF_DEVPROP_MAX_REGISTERS] >= 32768);
}

static void test_device_vecadd(void **state)
{
    (void)state;
    if (!have_device(be)) {
        skip();
        return;
    }
    struct device_fixture *f = device_start(be, "tests/fixtures/vecadd_hip.yaml");
    struct tf_error err = {0};
    struct tf_space *s = tf_space_create(f->k, (int)f->problem, &f->dev, &err);
    assert_non_null(s);
    uint64_t count = 0;
    assert_int_equal(tf_space_count(s, 0, tf_space_cartesian(s), &count, &err), 0);
    assert_int_equal(count, 5); /* BLOCK 2048 is over max_threads */
    for (uint64_t c = 0; c < count; c++)
        expect_ok(f, f->problem, c);
    tf_space_destroy(s);
    /* the other problem (2^24 elements) too, with telemetry where ROCm SMI is */
    struct tf_result r;
    measure(f, (uint32_t)f->job->kernels[0].problems[1], f->k->default_index, &r);
    assert_int_equal(r.status, TF_STATUS_OK);
    assert_int_equal(r.flushed_l2, 1);
    printf("note: vecadd_cuda large on hip: %.2f us, %.0f GB/s, %d registers, SCLK %.0f MHz, "
           "%.0f W, %.3f J, %.0f C\n",
           r.time_median * 1e6, 12.0 * (1 << 24) / r.time_median / 1e9, r.registers,
           r.sm_clock_mhz, r.power_w, r.energy_j, r.temperature_c);
    /* Energy over its own window: a board's power over a launch, or why not. */
    const double per_launch = r.energy_j / r.samples;
    printf("note: vecadd_cuda large on hip energy: %s, %.4g J a launch (%.0f W)\n",
           tf_energy_status_name(r.energy_status), per_launch, per_launch / r.time_median);
    if (r.energy_status == TF_ENERGY_MEASURED)
        assert_true(per_launch > 10 * r.time_median && per_launch < 2000 * r.time_median);
    else
        assert_true(isnan(r.energy_j) && r.energy_status == TF_ENERGY_NO_COUNTER);
    assert_true(tf_runner_device_seconds(f->runner) > 0.0);
    assert_int_equal(tf_runner_starts(f->runner), 1);
    device_stop(f);
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

    /* an illegal address: HIP reports it (runtime_error), or ROCm's HSA
     * runtime aborts the runner first (crashed); either way the next variant
     * runs in a fresh runner */
    measure(f, f->problem, fault_config(f->k, 1, 0), &r);
    fprintf(stderr, "note: MODE 1: %s: %s\n", tf_status_name(r.status), r.message);
    assert_true(r.status == TF_STATUS_RUNTIME_ERROR || r.status == TF_STATUS_CRASHED);
    expect_ok(f, f->problem, fault_config(f->k, 0, 0));
    assert_int_equal(tf_runner_starts(f->runner), 2);

    /* a kernel that never ends: killed at the job's deadline */
    measure(f, f->problem, fault_config(f->k, 2, 0), &r);
    assert_int_equal(r.status, TF_STATUS_TIMEOUT);
    expect_ok(f, f->problem, fault_config(f->k, 0, 0));
    assert_int_equal(tf_runner_starts(f->runner), 3);

    /* 2048 threads per block: refused before launch, the runner stays */
    for (int mode = 0; mode < 3; mode++) {
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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_reason),
        cmocka_unit_test(test_rocm_smi_loads_or_says_why),
        cmocka_unit_test(test_compile_vecadd_code_object),
        cmocka_unit_test(test_compile_error_names_line),
        cmocka_unit_test(test_launch_bounds_min_blocks),
        cmocka_unit_test(test_define_names_hiprtc),
        cmocka_unit_test(test_warp_size_follows_target),
        cmocka_unit_test(test_every_cuda_kernel_compiles),
        cmocka_unit_test(test_device_describe),
        cmocka_unit_test(test_device_vecadd),
        cmocka_unit_test(test_device_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
