/* test_host.c - the host backend end to end: discovery, compiling kernels/gemm
 * through the compile pool (real cc, in compiler processes) and its cache,
 * compile errors, and loading + launching the compiled .so against the
 * compiled reference. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <glob.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../schema/bundle.h"
#include "../../schema/kernel.h"
#include "../../schema/status.h"
#include "../../worker/backend.h"
#include "../../worker/cache.h"
#include "../../worker/compile.h"
#include "../../worker/compiler.h"
#include "../../worker/verify.h"

/* This executable is its own compiler process (main hands it `__compiler`). */
#define SELF "/proc/self/exe"

struct fixture {
    char cache[64];
    struct tf_bundle *bundle;
    struct tf_kernel *gemm;
    struct tf_device dev;
};

static int count_files(const char *cache, const char *pattern_ext)
{
    char pattern[256];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/host/*/*.%s", cache, pattern_ext);
    int n = glob(pattern, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    globfree(&g);
    return n;
}

/* rm -r of the cache folder (two levels of fan-out), by unlinking what glob finds. */
static void remove_cache(const char *cache)
{
    char pattern[256];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/host/*/*", cache);
    if (glob(pattern, 0, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++)
            unlink(g.gl_pathv[i]);
    globfree(&g);
    snprintf(pattern, sizeof pattern, "%s/host/*", cache);
    if (glob(pattern, 0, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++)
            rmdir(g.gl_pathv[i]);
    globfree(&g);
    snprintf(pattern, sizeof pattern, "%s/host", cache);
    rmdir(pattern);
    rmdir(cache);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct tf_error err = {0};
    strcpy(f->cache, "/tmp/tf-test-host-XXXXXX");
    if (mkdtemp(f->cache) == NULL)
        return -1;
    f->bundle = tf_bundle_create();
    f->gemm = tf_kernel_load("kernels/gemm/kernel.yaml", f->bundle, &err);
    if (f->gemm == NULL) {
        tf_error_print(&err, "test_host", stderr);
        return -1;
    }
    if (tf_backend_host.describe(0, &f->dev, &err) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    tf_kernel_destroy(f->gemm);
    tf_bundle_destroy(f->bundle);
    remove_cache(f->cache);
    free(f);
    return 0;
}

static void test_discovery(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    assert_ptr_equal(tf_backend_find("host"), &tf_backend_host);
    assert_null(tf_backend_find("nope"));
    /* the host is in the table (GPU backends come first: a worker prefers them) */
    int at = -1;
    for (int i = 0; tf_backends[i] != NULL; i++)
        if (tf_backends[i] == &tf_backend_host)
            at = i;
    assert_true(at >= 0);
    assert_int_equal(tf_backend_host.probe(&err), 0);
    assert_int_equal(tf_backend_host.device_count(), 1);
    assert_string_equal(f->dev.backend, "host");
    assert_true(f->dev.name[0] != '\0');
    assert_true(f->dev.arch[0] != '\0');
    assert_true(f->dev.host[0] != '\0');
    assert_true(f->dev.compiler_version[0] != '\0');
    assert_true(f->dev.runtime_version[0] != '\0');
    assert_true(f->dev.memory_bytes > 0);
    assert_true(f->dev.compute_units >= 1);
    assert_int_equal(f->dev.props[TF_DEVPROP_MAX_THREADS], 1);
    assert_int_equal(f->dev.props[TF_DEVPROP_WARP_SIZE], 1);
    assert_int_equal(f->dev.props[TF_DEVPROP_SM_COUNT], (int64_t)f->dev.compute_units);
    assert_true(f->dev.props[TF_DEVPROP_L2_BYTES] > 0);
    assert_true(f->dev.props[TF_DEVPROP_MAX_SHARED] > 0);
    /* a core's "shared memory" is its L1d, per block and per core alike */
    assert_int_equal(f->dev.props[TF_DEVPROP_MAX_SHARED_PER_SM],
                     f->dev.props[TF_DEVPROP_MAX_SHARED]);
    const int64_t simd = f->dev.props[TF_DEVPROP_SIMD_BYTES];
    assert_true(simd == 16 || simd == 32 || simd == 64);
    struct tf_device other;
    assert_int_not_equal(tf_backend_host.describe(1, &other, &err), 0);
    assert_non_null(strstr(err.message, "one device"));
    /* the compiler identity names the compiler and stays the same */
    const char *id = tf_backend_host.compiler_id();
    assert_non_null(strstr(id, f->dev.compiler_version));
    /* ... and the flags each compile passes: a tunefarm that compiles
     * differently must miss an older one's binaries, not reuse them */
    assert_non_null(strstr(id, "| flags -std=gnu11 -shared -fPIC ... -lm"));
    assert_ptr_equal(id, tf_backend_host.compiler_id());
}

static void test_compile_and_cache_hit(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    struct tf_compile_pool *p =
        tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 2, &err);
    assert_non_null(p);
    assert_true(f->gemm->has_default);
    struct tf_compiled c1, c2;
    tf_compile_wait(p, tf_compile_submit(p, f->gemm, f->gemm->default_index), &c1);
    assert_int_equal(c1.status, TF_STATUS_OK);
    assert_int_equal(c1.cached, 0);
    assert_true(c1.compile_time > 0.0);
    assert_int_equal(c1.registers, -1);
    assert_int_equal(c1.shared_bytes, -1);
    assert_int_equal(c1.spill_bytes, -1);
    assert_int_equal(access(c1.binary_path, R_OK), 0);
    assert_non_null(strstr(c1.binary_path, f->cache));
    assert_non_null(strstr(c1.binary_path, ".so"));
    assert_int_equal(count_files(f->cache, "meta"), 1);
    assert_int_equal(count_files(f->cache, "so"), 1);

    tf_compile_wait(p, tf_compile_submit(p, f->gemm, f->gemm->default_index), &c2);
    assert_int_equal(c2.status, TF_STATUS_OK);
    assert_int_equal(c2.cached, 1);
    assert_true(c2.compile_time == 0.0);
    assert_string_equal(c2.binary_path, c1.binary_path);

    struct tf_compile_stats st;
    tf_compile_get_stats(p, &st);
    assert_int_equal(st.compiled, 1);
    assert_int_equal(st.cached, 1);
    assert_int_equal(st.failed, 0);
    assert_true(st.compile_seconds > 0.0);
    assert_true(st.wall_seconds_busy > 0.0);
    tf_compile_pool_destroy(p);

    /* a new pool (a rerun) finds it on disk; no temporary files were left behind */
    p = tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 1, &err);
    tf_compile_wait(p, tf_compile_submit(p, f->gemm, f->gemm->default_index), &c2);
    assert_int_equal(c2.cached, 1);
    tf_compile_pool_destroy(p);
    assert_int_equal(count_files(f->cache, "tmp.*"), 0);
}

/* Issue 14 item 1: a kernel with `defines: [NX]` (tests/fixtures/heat) is
 * compiled with its problem's NX: one binary per problem, and without the
 * define it does not compile (#error). Its reference is compiled with the
 * indices of the sizes and depends_on values (TF_REF_NX, TF_REF_STEPS), which
 * it reads. */
static void test_size_defines_per_problem(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    struct tf_kernel *heat = tf_kernel_load("tests/fixtures/heat/kernel.yaml", f->bundle, &err);
    assert_non_null(heat);
    struct tf_compile_pool *p =
        tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 2, &err);
    assert_non_null(p);
    struct tf_compiled small, large, again;
    tf_compile_wait(p, tf_compile_submit_for(p, heat, 0, 0), &small);
    tf_compile_wait(p, tf_compile_submit_for(p, heat, 1, 0), &large);
    assert_int_equal(small.status, TF_STATUS_OK);
    assert_int_equal(large.status, TF_STATUS_OK);
    assert_string_not_equal(small.binary_path, large.binary_path);
    tf_compile_wait(p, tf_compile_submit(p, heat, 0), &again); /* problem 0 */
    assert_int_equal(again.cached, 1);
    assert_string_equal(again.binary_path, small.binary_path);

    struct tf_kernel undefined = *heat; /* the pool only reads the kernel */
    undefined.ndefine_sizes = 0;
    tf_compile_wait(p, tf_compile_submit_for(p, &undefined, 0, 0), &again);
    assert_int_equal(again.status, TF_STATUS_COMPILE_ERROR);
    assert_non_null(strstr(again.message, "NX must be defined"));

    char ref[4096];
    assert_int_equal(tf_compile_reference(p, heat, ref, sizeof ref, &err), 0);
    tf_compile_pool_destroy(p);
    tf_kernel_destroy(heat);
}

/* Issue 14 item 8: the warnings cc gives a variant are counted, the first one
 * kept, and the whole log cached beside the binary; a cache hit (another
 * pool: a rerun) answers the same from the metadata. A variant without
 * warnings has 0, not "unknown". The counting itself on the logs each
 * compiler writes. */
static void test_warnings_kept(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    struct tf_kernel *heat = tf_kernel_load("tests/fixtures/heat/kernel.yaml", f->bundle, &err);
    assert_non_null(heat);
    struct tf_compile_pool *p =
        tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 1, &err);
    assert_non_null(p);
    struct tf_compiled c, again, clean;
    const int logs = count_files(f->cache, "log");
    tf_compile_wait(p, tf_compile_submit_for(p, heat, 0, 1), &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_int_equal(c.warnings, 1);
    assert_non_null(strstr(c.first_warning, "heat.c:"));
    assert_non_null(strstr(c.first_warning, "warning: unused variable"));
    assert_non_null(strstr(c.first_warning, "unused_on_purpose")); /* (quotes follow the locale) */
    assert_int_equal(c.cached, 0);
    assert_int_equal(count_files(f->cache, "log"), logs + 1);
    tf_compile_wait(p, tf_compile_submit(p, f->gemm, f->gemm->default_index), &clean);
    assert_int_equal(clean.warnings, 0);
    assert_string_equal(clean.first_warning, "");
    tf_compile_pool_destroy(p);
    p = tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 1, &err);
    tf_compile_wait(p, tf_compile_submit_for(p, heat, 0, 1), &again);
    assert_int_equal(again.cached, 1);
    assert_int_equal(again.warnings, 1);
    assert_string_equal(again.first_warning, c.first_warning);
    tf_compile_pool_destroy(p);
    tf_kernel_destroy(heat);

    char first[TF_WARNING_LEN];
    const char *gcc = "/tmp/x/heat.c: In function 'heat':\n"
                      "heat.c:16:9: warning: unused variable 'u' [-Wunused-variable]\n"
                      "   16 |     int u;\n"
                      "heat.c:20:1: warning: control reaches end [-Wreturn-type]\n";
    assert_int_equal(tf_compile_log_warnings(gcc, first, sizeof first), 2);
    assert_string_equal(first, "heat.c:16:9: warning: unused variable 'u' [-Wunused-variable]");
    const char *nvrtc = "k.cu(2): warning #177-D: variable \"x\" was declared but never "
                        "referenced\n\nRemark: The warnings can be suppressed with "
                        "\"-diag-suppress <warning-number>\"\n\nptxas info    : Used 8 "
                        "registers\nptxas warning : Registers are spilled to local memory\n";
    assert_int_equal(tf_compile_log_warnings(nvrtc, first, sizeof first), 2);
    assert_non_null(strstr(first, "warning #177-D"));
    const char *clang = "k.cu:4:28: warning: unused [-Wunused]\r\n1 warning generated.\n";
    assert_int_equal(tf_compile_log_warnings(clang, first, sizeof first), 1);
    assert_string_equal(first, "k.cu:4:28: warning: unused [-Wunused]");
    assert_int_equal(tf_compile_log_warnings("x.c:1:1: error: nope\nnowarning: x\n", first,
                                             sizeof first),
                     0);
    assert_string_equal(first, "");
    assert_int_equal(tf_compile_log_warnings(NULL, first, sizeof first), 0);
    /* a long line is cut between UTF-8 characters, never inside one */
    char small[12];
    assert_int_equal(tf_compile_log_warnings("warning: \xe2\x80\x98y\xe2\x80\x99", small,
                                             sizeof small),
                     1);
    assert_string_equal(small, "warning: ");
    assert_int_equal(tf_compile_log_warnings("warning: ab\xe2\x80\x98", small, sizeof small),
                     1);
    assert_string_equal(small, "warning: ab");
}

static void test_compile_error(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    struct tf_compile_pool *p =
        tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 1, &err);
    assert_non_null(p);
    struct tf_kernel broken = *f->gemm; /* the pool only reads the kernel */
    broken.source = "void gemm(void **args)\n{\n    int x = ;\n}\n";
    struct tf_compiled c;
    tf_compile_wait(p, tf_compile_submit(p, &broken, broken.default_index), &c);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    assert_int_equal(c.cached, 0);
    assert_string_equal(c.binary_path, "");
    /* the message is the compiler's error line, pointing into the kernel's own file name */
    assert_non_null(strstr(c.message, "error"));
    assert_non_null(strstr(c.message, "gemm.c:3:"));
    assert_int_equal(count_files(f->cache, "log"), 1);
    assert_int_equal(count_files(f->cache, "err"), 1);

    /* known-bad variants are not recompiled */
    struct tf_compiled again;
    tf_compile_wait(p, tf_compile_submit(p, &broken, broken.default_index), &again);
    assert_int_equal(again.status, TF_STATUS_COMPILE_ERROR);
    assert_int_equal(again.cached, 1);
    assert_string_equal(again.message, c.message);

    /* a define the source cannot take: a different key, a fresh failure */
    broken.source = "#if BM == 8\n#error BM 8 is not supported\n#endif\nvoid gemm(void **a) { (void)a; }\n";
    tf_compile_wait(p, tf_compile_submit(p, &broken, broken.default_index), &c);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    assert_non_null(strstr(c.message, "BM 8 is not supported"));

    struct tf_compile_stats st;
    tf_compile_get_stats(p, &st);
    assert_int_equal(st.compiled, 2);
    assert_int_equal(st.cached, 1);
    assert_int_equal(st.failed, 3);
    tf_compile_pool_destroy(p);
}

static void test_log_summary(void **state)
{
    (void)state;
    char out[64];
    tf_compile_log_summary("\n  \nk.c: In function 'f':\nk.c:3:9: error: expected expression\n",
                           out, sizeof out);
    assert_string_equal(out, "k.c:3:9: error: expected expression");
    tf_compile_log_summary("\nld: something odd\nmore\n", out, sizeof out);
    assert_string_equal(out, "ld: something odd");
    tf_compile_log_summary("", out, sizeof out);
    assert_non_null(strstr(out, "without a message"));
    tf_compile_log_summary("Error: a very long line that does not fit into the small buffer at all",
                           out, 10);
    assert_string_equal(out, "Error: a ");
    /* A line cut to fit ends between UTF-8 characters, never inside one: a
     * kernel's #error may be in any script, and half a character is not
     * text (the archive, the JSON export and a terminal all choke on it). */
    static const char line[] = "k.c:1:2: error: #error \xe2\x80\x98\xc3\xa9t\xc3\xa9";
    char cut[64];
    tf_compile_log_summary(line, cut, 25); /* 1 byte of the 3 of U+2018 */
    assert_string_equal(cut, "k.c:1:2: error: #error ");
    tf_compile_log_summary(line, cut, 26); /* 2 bytes of them */
    assert_string_equal(cut, "k.c:1:2: error: #error ");
    tf_compile_log_summary(line, cut, 27);
    assert_string_equal(cut, "k.c:1:2: error: #error \xe2\x80\x98");
    tf_compile_log_summary(line, cut, 28); /* 1 byte of the 2 of U+00E9 */
    assert_string_equal(cut, "k.c:1:2: error: #error \xe2\x80\x98");
    tf_compile_log_summary(line, cut, sizeof cut);
    assert_string_equal(cut, line);
}

static void test_parallel_submits(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    struct tf_compile_pool *p =
        tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 2, &err);
    assert_non_null(p);
    /* four different UNROLL/VEC/LOOP variants of the default tiling */
    int digits[16];
    tf_kernel_decode(f->gemm, f->gemm->default_index, digits);
    uint64_t configs[4], tickets[4];
    for (int i = 0; i < 4; i++) {
        int d[16];
        memcpy(d, digits, sizeof d);
        d[3] = i % 2;      /* UNROLL 1 or 2 */
        d[4] = i / 2 + 1;  /* VEC 4 or 8 */
        configs[i] = tf_kernel_encode(f->gemm, d);
        tickets[i] = tf_compile_submit(p, f->gemm, configs[i]);
    }
    struct tf_compiled c[4];
    for (int i = 3; i >= 0; i--) /* out of order on purpose */
        tf_compile_wait(p, tickets[i], &c[i]);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(c[i].status, TF_STATUS_OK);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(c[i].binary_path, c[j].binary_path);
    }
    tf_compile_pool_destroy(p);
    /* destroying with queued, unwaited work must not hang or leak */
    p = tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 1, &err);
    tf_compile_submit(p, f->gemm, configs[0]);
    tf_compile_submit(p, f->gemm, configs[1]);
    tf_compile_pool_destroy(p);
    tf_compile_pool_destroy(NULL);
}

static void test_pool_bad_cache_dir(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    /* a folder under a regular file cannot exist */
    assert_null(tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, "/etc/hostname/cache",
                                       1, &err));
    assert_non_null(strstr(err.message, "/etc/hostname"));
    assert_null(tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 0, &err));
}

/* The newest file of `cache` ending in `.ext` (the one a compile just wrote). */
static void newest_file(const char *cache, const char *ext, char *out, size_t cap)
{
    char pattern[256];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/host/*/*.%s", cache, ext);
    assert_int_equal(glob(pattern, 0, NULL, &g), 0);
    struct timespec best = {0, 0};
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct stat st;
        if (lstat(g.gl_pathv[i], &st) == 0 &&
            (st.st_mtim.tv_sec > best.tv_sec ||
             (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec > best.tv_nsec))) {
            best = st.st_mtim;
            snprintf(out, cap, "%s", g.gl_pathv[i]);
        }
    }
    globfree(&g);
}

static void write_text(const char *path, const char *text, mode_t mode)
{
    FILE *w = fopen(path, "w");
    assert_non_null(w);
    fputs(text, w);
    fclose(w);
    chmod(path, mode);
}

/* Review 2026-12-07: a cache binary is loaded and run, so the cache is
 * trusted only if no one else can write it; an entry that is damaged, or
 * that another could have written, is a miss (compiled again, replaced);
 * a failure the node caused (a full disk, a killed compiler) is never kept
 * as the variant's verdict. */
static void test_cache_trust(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    /* a cache folder of this user's that others can write (an older tunefarm's
     * under umask 002): made this user's alone, then used */
    chmod(f->cache, 0777);
    struct tf_compile_pool *p =
        tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 1, &err);
    assert_non_null(p);
    tf_compile_pool_destroy(p);
    struct stat dir;
    assert_int_equal(stat(f->cache, &dir), 0);
    assert_int_equal(dir.st_mode & 07777, 0755);
    chmod(f->cache, 0700);
    /* another user's cache folder: refused, saying why (root can make one) */
    if (geteuid() == 0 && chown(f->cache, 65534, 65534) == 0) {
        assert_null(tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 1,
                                           &err));
        assert_non_null(strstr(err.message, "another user's"));
        assert_int_equal(chown(f->cache, 0, 0), 0);
    } else {
        fprintf(stderr, "note: not root: another user's cache folder not tried\n");
    }

    struct tf_kernel k = *f->gemm; /* a source of its own: keys no other test uses */
    k.source = "void gemm(void **args) { (void)args; /* trust */ }\n";
    p = tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 1, &err);
    assert_non_null(p);
    struct tf_compiled c;
    tf_compile_wait(p, tf_compile_submit(p, &k, k.default_index), &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    char so[sizeof c.binary_path];
    snprintf(so, sizeof so, "%s", c.binary_path);
    /* an entry others could have written: compiled again, and replaced */
    chmod(so, 0666);
    tf_compile_wait(p, tf_compile_submit(p, &k, k.default_index), &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_int_equal(c.cached, 0);
    struct stat st;
    assert_int_equal(stat(so, &st), 0);
    assert_int_equal(st.st_mode & 022, 0);
    /* another user's entry, however private: compiled again, and replaced by ours */
    if (geteuid() == 0 && chown(so, 65534, 65534) == 0) {
        tf_compile_wait(p, tf_compile_submit(p, &k, k.default_index), &c);
        assert_int_equal(c.status, TF_STATUS_OK);
        assert_int_equal(c.cached, 0);
        assert_int_equal(stat(so, &st), 0);
        assert_int_equal(st.st_uid, 0);
    }
    /* a damaged entry (not the size its .meta says): compiled again */
    assert_int_equal(truncate(so, 100), 0);
    tf_compile_wait(p, tf_compile_submit(p, &k, k.default_index), &c);
    assert_int_equal(c.cached, 0);
    assert_int_equal(c.status, TF_STATUS_OK);
    tf_compile_wait(p, tf_compile_submit(p, &k, k.default_index), &c);
    assert_int_equal(c.cached, 1);

    /* a known-bad verdict that is a link to another file: not read, compiled again */
    struct tf_kernel bad = *f->gemm;
    bad.source = "void gemm(void **args) { int x = ; /* trust */ }\n";
    tf_compile_wait(p, tf_compile_submit(p, &bad, bad.default_index), &c);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    char errf[512], secret[600];
    newest_file(f->cache, "err", errf, sizeof errf);
    snprintf(secret, sizeof secret, "%s.secret", f->cache);
    write_text(secret, "SECRET-TOKEN\n", 0600);
    unlink(errf);
    assert_int_equal(symlink(secret, errf), 0);
    tf_compile_wait(p, tf_compile_submit(p, &bad, bad.default_index), &c);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    assert_int_equal(c.cached, 0);
    assert_null(strstr(c.message, "SECRET"));
    unlink(secret);
    tf_compile_pool_destroy(p);

    /* the kernel's own words echoed under a real error are the code's: kept */
    struct tf_kernel words = *f->gemm;
    words.source = "void gemm(void **args) { const char *m = \"Cannot allocate memory\"; int x = ; }\n";
    p = tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 1, &err);
    assert_non_null(p);
    const int before = count_files(f->cache, "err");
    tf_compile_wait(p, tf_compile_submit(p, &words, words.default_index), &c);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    assert_null(strstr(c.message, "node's trouble"));
    assert_int_equal(count_files(f->cache, "err"), before + 1);
    tf_compile_pool_destroy(p);

    /* the node's trouble: a full disk, a killed compiler or compiler stage;
     * reported, never kept */
    char bin[] = "/tmp/tf-test-cc-XXXXXX", cc[128];
    assert_non_null(mkdtemp(bin));
    snprintf(cc, sizeof cc, "%s/cc", bin);
    const char *saved = getenv("CC");
    char *keep = saved ? strdup(saved) : NULL;
    setenv("CC", cc, 1);
    const char *wrappers[] = {
        "#!/bin/sh\n[ \"$1\" = --version ] && exec cc --version\n"
        "echo 'x.c: fatal error: error closing /tmp/cc1.s: No space left on device' >&2\n"
        "echo 'collect2: error: ld returned 1 exit status' >&2\nexit 1\n",
        "#!/bin/sh\n[ \"$1\" = --version ] && exec cc --version\nkill -9 $$\n",
        "#!/bin/sh\n[ \"$1\" = --version ] && exec cc --version\n"
        "echo 'gcc: fatal error: Killed signal terminated program cc1' >&2\nexit 1\n"};
    const char *said[] = {"No space left on device", "killed by signal 9",
                          "Killed signal terminated program cc1"};
    for (int w = 0; w < 3; w++) {
        write_text(cc, wrappers[w], 0755);
        struct tf_kernel node = *f->gemm;
        char src[96];
        snprintf(src, sizeof src, "void gemm(void **a) { (void)a; /* node %d */ }\n", w);
        node.source = src;
        p = tf_compile_pool_create(SELF, &tf_backend_host, f->dev.arch, f->cache, 1, &err);
        assert_non_null(p);
        const int errs = count_files(f->cache, "err");
        tf_compile_wait(p, tf_compile_submit(p, &node, node.default_index), &c);
        assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
        if (strstr(c.message, said[w]) == NULL)
            fail_msg("wrapper %d: '%s' lacks '%s'", w, c.message, said[w]);
        assert_int_equal(count_files(f->cache, "err"), errs);
        tf_compile_pool_destroy(p);
    }
    if (keep) {
        setenv("CC", keep, 1);
        free(keep);
    } else {
        unsetenv("CC");
    }
    unlink(cc);
    rmdir(bin);
}

static void fill(float *v, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
    }
}

static void test_load_and_launch(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    const struct tf_backend *be = &tf_backend_host;
    struct tf_compile_pool *p = tf_compile_pool_create(SELF, be, f->dev.arch, f->cache, 1, &err);
    assert_non_null(p);
    struct tf_compiled c;
    tf_compile_wait(p, tf_compile_submit(p, f->gemm, f->gemm->default_index), &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    char ref[4096];
    assert_int_equal(tf_compile_reference(p, f->gemm, ref, sizeof ref, &err), 0);
    assert_int_equal(access(ref, R_OK), 0);

    struct tf_backend_ctx *ctx = NULL;
    assert_int_equal(be->open(0, &ctx, &err), 0);
    void *fn = NULL, *ref_fn = NULL;
    assert_int_equal(be->load(ctx, c.binary_path, f->gemm->entry, &fn, &err), 0);
    assert_int_equal(be->load(ctx, ref, f->gemm->ref_entry, &ref_fn, &err), 0);

    /* default tiling BM=8 BN=16 BK=16: a 16 x 32 x 48 problem is two tiles each way */
    int M = 16, N = 32, K = 48;
    float *hA = malloc(sizeof(float) * M * K), *hB = malloc(sizeof(float) * K * N);
    float *hC = malloc(sizeof(float) * M * N), *want = malloc(sizeof(float) * M * N);
    fill(hA, (size_t)M * K, 1);
    fill(hB, (size_t)K * N, 2);
    void *dA, *dB, *dC;
    assert_int_equal(be->alloc(ctx, sizeof(float) * M * K, &dA, &err), 0);
    assert_int_equal(be->alloc(ctx, sizeof(float) * K * N, &dB, &err), 0);
    assert_int_equal(be->alloc(ctx, sizeof(float) * M * N, &dC, &err), 0);
    assert_int_equal((uintptr_t)dA % 64, 0);
    assert_int_equal(be->upload(ctx, dA, hA, sizeof(float) * M * K, &err), 0);
    assert_int_equal(be->upload(ctx, dB, hB, sizeof(float) * K * N, &err), 0);
    for (int i = 0; i < M * N; i++)
        hC[i] = 12345.0f;
    assert_int_equal(be->upload(ctx, dC, hC, sizeof(float) * M * N, &err), 0);

    void *args[6] = {&M, &N, &K, &dA, &dB, &dC};
    struct tf_launch geo = {{1, 1, 1}, {1, 1, 1}, 0};
    double seconds = -1.0;
    assert_int_equal(be->launch(ctx, fn, &geo, args, &seconds, &err), TF_STATUS_OK);
    assert_true(seconds > 0.0 && seconds < 10.0);
    assert_int_equal(be->download(ctx, hC, dC, sizeof(float) * M * N, &err), 0);

    float *rC = want;
    void *ref_args[6] = {&M, &N, &K, &hA, &hB, &rC};
    assert_int_equal(be->launch(ctx, ref_fn, &geo, ref_args, NULL, &err), TF_STATUS_OK);
    char msg[160];
    assert_int_equal(tf_verify("C", TF_ELEM_F32, hC, want, (size_t)M * N, f->gemm->rtol,
                               f->gemm->atol, msg, sizeof msg),
                     TF_STATUS_OK);
    /* and the check is not vacuous: one wrong element is caught */
    hC[37] += 0.5f;
    assert_int_equal(tf_verify("C", TF_ELEM_F32, hC, want, (size_t)M * N, f->gemm->rtol,
                               f->gemm->atol, msg, sizeof msg),
                     TF_STATUS_WRONG_RESULT);
    assert_non_null(strstr(msg, "C[37]"));

    assert_int_equal(be->flush_cache(ctx, &err), 0);
    assert_int_equal(be->flush_cache(ctx, &err), 0);

    /* failures of load are errors with dlerror's words */
    void *none = NULL;
    assert_int_not_equal(be->load(ctx, c.binary_path, "no_such_entry", &none, &err), 0);
    assert_non_null(strstr(err.message, "no_such_entry"));
    assert_int_not_equal(be->load(ctx, "/nonexistent/x.so", "gemm", &none, &err), 0);
    assert_non_null(strstr(err.message, "dlopen"));

    be->unload(ctx, fn);
    be->unload(ctx, ref_fn);
    be->release(ctx, dA);
    be->release(ctx, dB);
    be->release(ctx, dC);
    be->close(ctx);
    free(hA);
    free(hB);
    free(hC);
    free(want);
    tf_compile_pool_destroy(p);
}

static const char *other_compiler_id(void)
{
    return "cc (a newer one) 99.1";
}

/* The cache key covers everything that makes the binary: each input alone,
 * changed, is another key (a compiler upgrade, another arch, other flags or
 * another entry point must never reuse a stale binary). (The portability
 * header is a function of the backend's name within one build: it matters
 * across tunefarm versions, which a unit test cannot make.) */
static void test_cache_key_inputs(void **state)
{
    (void)state;
    char *opts[] = {"-O2"}, *other_opts[] = {"-O3"}, *defs[] = {"-DBLOCK=64"},
         *other_defs[] = {"-DBLOCK=128"};
    const struct tf_compile_input base = {.source = "void k(void) {}", .entry = "k", .arch = "sm_90",
                                          .noptions = 1, .options = opts, .ndefines = 1,
                                          .defines = defs};
    char key[65], again[65], changed[65];
    tf_cache_key(&tf_backend_host, &base, NULL, key);
    tf_cache_key(&tf_backend_host, &base, NULL, again);
    assert_string_equal(key, again);
    assert_int_equal(strlen(key), 64);
    struct tf_compile_input in = base;
    in.arch = "sm_80";
    tf_cache_key(&tf_backend_host, &in, NULL, changed);
    assert_string_not_equal(key, changed);
    in = base;
    in.arch = NULL; /* no arch is not "sm_90" either */
    tf_cache_key(&tf_backend_host, &in, NULL, changed);
    assert_string_not_equal(key, changed);
    in = base;
    in.options = other_opts;
    tf_cache_key(&tf_backend_host, &in, NULL, changed);
    assert_string_not_equal(key, changed);
    in = base;
    in.defines = other_defs;
    tf_cache_key(&tf_backend_host, &in, NULL, changed);
    assert_string_not_equal(key, changed);
    in = base;
    in.entry = "k2";
    tf_cache_key(&tf_backend_host, &in, NULL, changed);
    assert_string_not_equal(key, changed);
    in = base;
    in.source = "void k(void) { }";
    tf_cache_key(&tf_backend_host, &in, NULL, changed);
    assert_string_not_equal(key, changed);
    /* the same flag as an option or as a define: two keys */
    in = base;
    in.noptions = 0;
    in.ndefines = 2;
    char *both[] = {"-O2", "-DBLOCK=64"};
    in.defines = both;
    tf_cache_key(&tf_backend_host, &in, NULL, changed);
    assert_string_not_equal(key, changed);
    /* the compiler's identity: an upgrade misses */
    struct tf_backend upgraded = tf_backend_host;
    upgraded.compiler_id = other_compiler_id;
    tf_cache_key(&upgraded, &base, NULL, changed);
    assert_string_not_equal(key, changed);
}

/* Trust of cache folders and entries (tf_cache_only_mine) where the mode
 * bits alone do not decide: a sticky world-writable folder (/tmp) is, its
 * entries are not; a folder that only this user's private group may write
 * is; a root-owned one is for any user (run as another user when we are
 * root). An entry is written 0644 whatever the umask. */
static void test_cache_trust_rules(void **state)
{
    struct fixture *f = *state;
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_uid = geteuid();
    st.st_gid = getegid();
    st.st_mode = S_IFDIR | 01777;
    assert_true(tf_cache_only_mine(&st));
    st.st_mode = S_IFDIR | 0777;
    assert_false(tf_cache_only_mine(&st));
    st.st_mode = S_IFREG | 01666;
    assert_false(tf_cache_only_mine(&st));
    st.st_mode = S_IFREG | 0644;
    assert_true(tf_cache_only_mine(&st));

    /* group-writable: trusted only for this user's private group */
    struct group *g = getgrgid(getegid());
    struct passwd *pw = getpwuid(geteuid());
    if (g && pw && strcmp(g->gr_name, pw->pw_name) == 0 &&
        (g->gr_mem[0] == NULL || (strcmp(g->gr_mem[0], pw->pw_name) == 0 && !g->gr_mem[1]))) {
        st.st_mode = S_IFDIR | 0775;
        assert_true(tf_cache_only_mine(&st));
    } else {
        fprintf(stderr, "note: no private group: a group-writable cache not tried\n");
    }

    /* root's folder, for another user: trusted; another user's: not */
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (geteuid() == 0 && setuid(65534) != 0)
            _exit(2);
        struct stat root_dir = {.st_mode = S_IFDIR | 0755, .st_uid = 0};
        struct stat other_dir = {.st_mode = S_IFDIR | 0755, .st_uid = 12345};
        _exit(tf_cache_only_mine(&root_dir) && (geteuid() == 12345 || !tf_cache_only_mine(&other_dir))
                  ? 0
                  : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    char path[512];
    struct tf_error err = {0};
    assert_int_equal(tf_cache_path(f->cache, "host", "ab0123", "bin", path, sizeof path, &err), 0);
    const mode_t saved = umask(0);
    const int rc = tf_cache_write_file(path, "binary", 6, &err);
    umask(saved);
    assert_int_equal(rc, 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    assert_true(tf_cache_only_mine(&st));
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "__compiler") == 0)
        return tf_compiler_main(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_discovery),
        cmocka_unit_test(test_log_summary),
        cmocka_unit_test(test_compile_and_cache_hit),
        cmocka_unit_test(test_compile_error),
        cmocka_unit_test(test_size_defines_per_problem),
        cmocka_unit_test(test_warnings_kept),
        cmocka_unit_test(test_parallel_submits),
        cmocka_unit_test(test_pool_bad_cache_dir),
        cmocka_unit_test(test_cache_trust),
        cmocka_unit_test(test_cache_key_inputs),
        cmocka_unit_test(test_cache_trust_rules),
        cmocka_unit_test(test_load_and_launch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
