/* test_compiler.c - the compile pool's compiler processes.
 *
 * This executable is its own compiler: main() hands `__compiler` to
 * tf_compiler_main (the real host backend, real cc) or, for the backend named
 * "testfault", to tf_compiler_serve with a table whose compile() misbehaves on
 * a marker in the source: @crash segfaults, @hang spawns a grandchild and
 * never answers, @slow sleeps first (@long longer), @print writes to stdout, @machinery
 * fails like a compiler that cannot be spawned; anything else is compiled by
 * the host backend. Each test gets a fresh cache folder. References (plain C,
 * compiled with the host backend whatever the pool's) compile in a compiler
 * process of their own, under the same deadline and memory limit as the
 * pool's (a FIFO include that never ends, #include "/dev/zero"). The last test holds
 * `tunefarm compile`'s choice of variants (worker/precompile.c) against the
 * plan's (coordinator/plan.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../coordinator/plan.h"
#include "../../schema/bundle.h"
#include "../../schema/job.h"
#include "../../schema/kernel.h"
#include "../../schema/space.h"
#include "../../schema/status.h"
#include "../../worker/backend.h"
#include "../../worker/cache.h"
#include "../../worker/compile.h"
#include "../../worker/compiler.h"
#include "../../worker/worker.h"
#include "../../worker/precompile.h"
#include "tree.h"

#define SELF "/proc/self/exe"
#define GRANDCHILD_ENV "TF_TEST_GRANDCHILD_FILE"

extern char **environ;

/* ---- the misbehaving backend (runs in the compiler child) ---- */

static const char *fault_compiler_id(void)
{
    return "testfault 1";
}

static int fault_compile(const struct tf_compile_input *in, struct tf_compile_output *out,
                         struct tf_error *err)
{
    if (strstr(in->source, "@crash")) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        raise(SIGSEGV);
    }
    if (strstr(in->source, "@hang")) {
        /* a compiler tool of our own that the timeout must take down too */
        char *argv[] = {"sleep", "1000", NULL};
        pid_t pid;
        const char *file = getenv(GRANDCHILD_ENV);
        if (posix_spawnp(&pid, "sleep", NULL, NULL, argv, environ) == 0 && file) {
            FILE *f = fopen(file, "w");
            if (f) {
                fprintf(f, "%d\n", (int)pid);
                fclose(f);
            }
        }
        for (;;)
            pause();
    }
    if (strstr(in->source, "@long")) { /* longer than a mark's refresh period */
        struct timespec ts = {6, 500 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (strstr(in->source, "@slow")) {
        struct timespec ts = {0, 500 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (strstr(in->source, "@print")) {
        printf("noise that must not reach the channel\n");
        fflush(stdout);
    }
    if (strstr(in->source, "@machinery"))
        return tf_error_set(err, TF_ERR_BACKEND, "cannot run the test compiler");
    if (strstr(in->source, "@stats")) { /* a GPU compiler's numbers, each distinct */
        out->ok = 1;
        out->registers = 40;
        out->shared_bytes = 1024;
        out->spill_bytes = 8;
        return 0;
    }
    return tf_backend_host.compile(in, out, err);
}

static const struct tf_backend fault_backend = {
    .version = TF_BACKEND_VERSION,
    .name = "testfault",
    .language = "c",
    .compiler_id = fault_compiler_id,
    .compile = fault_compile,
};

/* ---- fixture ---- */

struct fixture {
    char cache[64];
    char grandchild_file[128];
    struct tf_bundle *bundle;
    struct tf_kernel *gemm;
    struct tf_kernel variant; /* gemm with another source */
};

static int count_files(const char *cache, const char *ext)
{
    char pattern[256];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/*/*/*.%s", cache, ext);
    int n = glob(pattern, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    globfree(&g);
    return n;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct tf_error err = {0};
    strcpy(f->cache, "/tmp/tf-test-compiler-XXXXXX");
    if (mkdtemp(f->cache) == NULL)
        return -1;
    snprintf(f->grandchild_file, sizeof f->grandchild_file, "%s/grandchild.pid", f->cache);
    setenv(GRANDCHILD_ENV, f->grandchild_file, 1); /* inherited by the children */
    f->bundle = tf_bundle_create();
    f->gemm = tf_kernel_load("kernels/gemm/kernel.yaml", f->bundle, &err);
    if (f->gemm == NULL) {
        tf_error_print(&err, "test_compiler", stderr);
        return -1;
    }
    f->variant = *f->gemm; /* the pool only reads the kernel */
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    tf_kernel_destroy(f->gemm);
    tf_bundle_destroy(f->bundle);
    remove_tree(f->cache);
    free(f);
    return 0;
}

/* ---- helpers ---- */

static struct tf_compile_pool *pool(struct fixture *f, const struct tf_backend *be, int n)
{
    struct tf_error err = {0};
    struct tf_compile_pool *p = tf_compile_pool_create(SELF, be, "test", f->cache, n, &err);
    if (p == NULL)
        fail_msg("pool: %s", err.message);
    return p;
}

/* Compile `f->variant` with `source` (NULL: gemm's own) and its default configuration. */
static void compile_source(struct tf_compile_pool *p, struct fixture *f, const char *source,
                           struct tf_compiled *out)
{
    f->variant.source = source ? source : f->gemm->source;
    tf_compile_wait(p, tf_compile_submit(p, &f->variant, f->gemm->default_index), out);
}

/* /proc/PID/WHAT into `buf` (NUL-terminated, cap - 1 bytes at most): the bytes
 * read, or -1 if it cannot be opened. */
static long read_proc(pid_t pid, const char *what, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return -1;
    const size_t n = fread(buf, 1, cap - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return (long)n;
}

/* 1 if `pid` is one of our compiler children: its parent is us, its argv says so. */
static int is_compiler_child(pid_t pid, const char *backend)
{
    char cmdline[256], stat[512];
    const long n = read_proc(pid, "cmdline", cmdline, sizeof cmdline);
    if (n < 0 || read_proc(pid, "stat", stat, sizeof stat) < 0)
        return 0;
    const char *close_paren = strrchr(stat, ')');
    int ppid = -1;
    char state = '?';
    if (close_paren == NULL || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2)
        return 0;
    /* argv is NUL-separated: exe, "__compiler", backend */
    const char *arg1 = cmdline + strlen(cmdline) + 1;
    const char *arg2 = arg1 + strlen(arg1) + 1;
    return ppid == (int)getpid() && state != 'Z' && arg2 < cmdline + n &&
           strcmp(arg1, "__compiler") == 0 && strcmp(arg2, backend) == 0;
}

/* 1 once `pid` is gone or a zombie (dead, waiting for whoever adopted it to reap it). */
static int is_dead(pid_t pid)
{
    for (int i = 0; i < 200; i++) {
        char path[64], stat[512] = {0};
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *fp = fopen(path, "r");
        if (fp == NULL)
            return 1;
        if (fgets(stat, sizeof stat, fp) == NULL)
            stat[0] = '\0';
        fclose(fp);
        const char *close_paren = strrchr(stat, ')');
        if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z')
            return 1;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* How many live processes (zombies, whose command line is empty, do not
 * count) have a command line that contains `text`; the first `cap` pids into
 * `pids`. */
static int processes_with(const char *text, pid_t *pids, int cap)
{
    static char cmdline[65536];
    int n = 0;
    DIR *d = opendir("/proc");
    if (d == NULL)
        fail_msg("opendir /proc: %s", strerror(errno));
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char *end = NULL;
        const long pid = strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end != '\0' || pid == (long)getpid())
            continue;
        const long len = read_proc((pid_t)pid, "cmdline", cmdline, sizeof cmdline);
        for (long i = 0; i < len; i++) /* its arguments, NUL-separated: one string */
            if (cmdline[i] == '\0')
                cmdline[i] = ' ';
        if (len > 0 && strstr(cmdline, text) != NULL) {
            if (n < cap)
                pids[n] = (pid_t)pid;
            n++;
        }
    }
    closedir(d);
    return n;
}

/* How many of our children are live compiler processes of `backend`. */
static int compiler_children(const char *backend)
{
    int n = 0;
    DIR *d = opendir("/proc");
    if (d == NULL)
        fail_msg("opendir /proc: %s", strerror(errno));
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char *end = NULL;
        const long pid = strtol(e->d_name, &end, 10);
        if (pid > 0 && *end == '\0' && is_compiler_child((pid_t)pid, backend))
            n++;
    }
    closedir(d);
    return n;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- tests ---- */

static void test_children_compile_variants(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 2);
    assert_int_equal(tf_compile_pool_starts(p), 0); /* lazily */
    pid_t pids[4];
    assert_int_equal(tf_compile_pool_pids(p, pids, 4), 0);

    /* four UNROLL/VEC variants of the default tiling */
    int digits[16];
    tf_kernel_decode(f->gemm, f->gemm->default_index, digits);
    uint64_t configs[4], tickets[4];
    for (int i = 0; i < 4; i++) {
        int d[16];
        memcpy(d, digits, sizeof d);
        d[3] = i % 2;
        d[4] = i / 2 + 1;
        configs[i] = tf_kernel_encode(f->gemm, d);
        tickets[i] = tf_compile_submit(p, f->gemm, configs[i]);
    }
    struct tf_compiled c[4];
    for (int i = 0; i < 4; i++) {
        tf_compile_wait(p, tickets[i], &c[i]);
        assert_int_equal(c[i].status, TF_STATUS_OK);
        assert_int_equal(c[i].cached, 0);
        assert_true(c[i].compile_time > 0.0);
        assert_int_equal(access(c[i].binary_path, R_OK), 0);
    }
    /* the children are alive between requests, and they are our __compiler host */
    const int starts = tf_compile_pool_starts(p);
    assert_true(starts >= 1 && starts <= 2);
    const int n = tf_compile_pool_pids(p, pids, 4);
    assert_int_equal(n, starts);
    for (int i = 0; i < n; i++) {
        assert_int_not_equal(pids[i], getpid());
        assert_true(is_compiler_child(pids[i], "host"));
    }
    struct tf_compile_stats st;
    tf_compile_get_stats(p, &st);
    assert_int_equal(st.compiled, 4);
    assert_int_equal(st.failed, 0);
    assert_true(st.compile_seconds > 0.0);
    assert_true(st.wall_seconds_busy > 0.0);
    tf_compile_pool_destroy(p);
    for (int i = 0; i < n; i++) /* stopped and reaped by destroy: not even a zombie left */
        assert_true(kill(pids[i], 0) == -1 && errno == ESRCH);
    assert_int_equal(count_files(f->cache, "tmp.*"), 0);

    /* a rerun served wholly from the cache spawns no child at all */
    p = pool(f, &tf_backend_host, 2);
    for (int i = 0; i < 4; i++) {
        struct tf_compiled again;
        tf_compile_wait(p, tf_compile_submit(p, f->gemm, configs[i]), &again);
        assert_int_equal(again.status, TF_STATUS_OK);
        assert_int_equal(again.cached, 1);
        assert_string_equal(again.binary_path, c[i].binary_path);
    }
    assert_int_equal(tf_compile_pool_starts(p), 0);
    tf_compile_pool_destroy(p);
}

static void test_one_child_per_slot(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *p = pool(f, &fault_backend, 2);
    /* two slow variants at once: both slots busy, so two distinct children */
    f->variant.source = "/* @slow 1 */ void gemm(void **a) { (void)a; }\n";
    uint64_t t1 = tf_compile_submit(p, &f->variant, f->gemm->default_index);
    struct tf_kernel other = *f->gemm;
    other.source = "/* @slow 2 */ void gemm(void **a) { (void)a; }\n";
    uint64_t t2 = tf_compile_submit(p, &other, f->gemm->default_index);
    struct tf_compiled c1, c2;
    tf_compile_wait(p, t1, &c1);
    tf_compile_wait(p, t2, &c2);
    assert_int_equal(c1.status, TF_STATUS_OK);
    assert_int_equal(c2.status, TF_STATUS_OK);
    /* the time is the child's, sleep included */
    assert_true(c1.compile_time >= 0.5 && c2.compile_time >= 0.5);
    pid_t pids[4];
    assert_int_equal(tf_compile_pool_pids(p, pids, 4), 2);
    assert_int_not_equal(pids[0], pids[1]);
    assert_true(is_compiler_child(pids[0], "testfault"));
    assert_true(is_compiler_child(pids[1], "testfault"));
    assert_int_equal(tf_compile_pool_starts(p), 2);
    struct tf_compile_stats st;
    tf_compile_get_stats(p, &st);
    assert_true(st.compile_seconds >= 1.0);
    /* ran side by side: the busy wall time is well below the sum */
    assert_true(st.wall_seconds_busy < 0.9 * st.compile_seconds);
    tf_compile_pool_destroy(p);
}

/* tf_compile_wait_any: the first done of the tickets given, in their order, not
 * the first given; tf_compile_ready_any the same without waiting. A slow variant (0.5 s) queued ahead of a quick one on two
 * slots: the quick one is answered while the slow one still compiles. */
static void test_wait_any(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *p = pool(f, &fault_backend, 2);
    f->variant.source = "/* @slow 1 */ void gemm(void **a) { (void)a; }\n";
    const uint64_t slow = tf_compile_submit(p, &f->variant, f->gemm->default_index);
    struct tf_kernel quick = *f->gemm;
    quick.source = "/* quick */ void gemm(void **a) { (void)a; }\n";
    const uint64_t fast = tf_compile_submit(p, &quick, f->gemm->default_index);
    const uint64_t both[2] = {slow, fast};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(tf_compile_wait_any(p, both, 2), 1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    struct tf_compiled c;
    tf_compile_wait(p, fast, &c); /* done: at once */
    assert_int_equal(c.status, TF_STATUS_OK);
    /* the slow one was still compiling then: tf_compile_ready_any says none of it
     * is done without waiting (the caller then does something else), and waiting
     * for it alone takes the rest */
    const uint64_t rest[1] = {slow};
    if (tf_compile_ready_any(p, rest, 1) != -1)
        fail_msg("the slow variant was reported done %.3f s after it was queued", waited);
    assert_int_equal(tf_compile_wait_any(p, rest, 1), 0);
    assert_int_equal(tf_compile_ready_any(p, rest, 1), 0); /* done now, and still unwaited */
    tf_compile_wait(p, slow, &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_true(c.compile_time >= 0.5);
    if (!(waited < c.compile_time))
        fail_msg("the quick variant was answered after %.3f s, the slow one took %.3f s", waited,
                 c.compile_time);
    tf_compile_pool_destroy(p);
}

/* The value of `name` in process `pid`'s starting environment: 1 and `value`
 * filled if set (maybe empty), 0 if not set or unreadable. */
static int child_env(pid_t pid, const char *name, char *value, size_t cap)
{
    char env[65536];
    const long n = read_proc(pid, "environ", env, sizeof env);
    const size_t len = strlen(name);
    for (long i = 0; i < n; i += (long)strlen(env + i) + 1)
        if (strncmp(env + i, name, len) == 0 && env[i + len] == '=') {
            snprintf(value, cap, "%s", env + i + len + 1);
            return 1;
        }
    return 0;
}

/* NVRTC calls cuInit; a compiler child must reach no GPU (compiler.c says
 * why), whatever CUDA_VISIBLE_DEVICES its parent has. */
static void test_children_see_no_gpu(void **state)
{
    struct fixture *f = *state;
    char *saved = getenv("CUDA_VISIBLE_DEVICES") ? strdup(getenv("CUDA_VISIBLE_DEVICES")) : NULL;
    setenv("CUDA_VISIBLE_DEVICES", "3", 1);
    setenv("TF_TEST_KEPT", "kept", 1);
    struct tf_compile_pool *p = pool(f, &fault_backend, 1);
    uint64_t t = tf_compile_submit(p, &f->variant, f->gemm->default_index);
    struct tf_compiled c;
    tf_compile_wait(p, t, &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    pid_t pid;
    assert_int_equal(tf_compile_pool_pids(p, &pid, 1), 1);
    char value[64] = "unset";
    assert_true(child_env(pid, "CUDA_VISIBLE_DEVICES", value, sizeof value));
    assert_string_equal(value, "");
    assert_true(child_env(pid, "TF_TEST_KEPT", value, sizeof value));
    assert_string_equal(value, "kept");
    tf_compile_pool_destroy(p);
    unsetenv("TF_TEST_KEPT");
    if (saved)
        setenv("CUDA_VISIBLE_DEVICES", saved, 1);
    else
        unsetenv("CUDA_VISIBLE_DEVICES");
    free(saved);

    /* the array itself: one CUDA_VISIBLE_DEVICES, empty, the rest in order */
    char *env[] = {"A=1", "CUDA_VISIBLE_DEVICES=0,1", "B=2", "CUDA_VISIBLE_DEVICES=", NULL};
    char **out = tf_compiler_environment(env);
    assert_string_equal(out[0], "A=1");
    assert_string_equal(out[1], "B=2");
    assert_string_equal(out[2], "CUDA_VISIBLE_DEVICES=");
    assert_null(out[3]);
    free(out);
}

/* Pools on one node share its CPUs (worker.h): masks of 8 CPUs, one byte each. */
static void test_cpu_share(void **state)
{
    (void)state;
    const unsigned char both_all[] = {0x0f, 0x0f}; /* two ranks on CPUs 0-3 */
    const int two_pools[] = {1, 1}, coordinator_and_one[] = {0, 1};
    assert_int_equal(tf_worker_cpu_share(both_all, 1, two_pools, 2, 0), 2);
    assert_int_equal(tf_worker_cpu_share(both_all, 1, two_pools, 2, 1), 2);
    /* the coordinator has no pool: the worker keeps every CPU */
    assert_int_equal(tf_worker_cpu_share(both_all, 1, coordinator_and_one, 2, 1), 4);
    /* disjoint masks (srun --cpu-bind, taskset): each keeps its own */
    const unsigned char split[] = {0x03, 0x0c};
    assert_int_equal(tf_worker_cpu_share(split, 1, two_pools, 2, 0), 2);
    assert_int_equal(tf_worker_cpu_share(split, 1, two_pools, 2, 1), 2);
    /* CPU 0 shared, CPU 1 B's alone: A 0.5 -> 1 (never 0), B 1.5 -> 2 */
    const unsigned char overlap[] = {0x01, 0x03};
    assert_int_equal(tf_worker_cpu_share(overlap, 1, two_pools, 2, 0), 1);
    assert_int_equal(tf_worker_cpu_share(overlap, 1, two_pools, 2, 1), 2);
    /* a 64-CPU node (8 bytes a mask): the coordinator, 4 GPU workers and a
     * compile rank, all unbound: 64 / 5 = 12.8 -> 13 each */
    unsigned char node[6 * 8];
    memset(node, 0xff, sizeof node);
    const int five[] = {0, 1, 1, 1, 1, 1};
    for (int r = 1; r < 6; r++)
        assert_int_equal(tf_worker_cpu_share(node, 8, five, 6, r), 13);
    /* a helper (a worker whose device the job does not target) beside a
     * measuring pool on the same CPUs gets none of them, the pool all */
    const int own_and_helper[] = {TF_POOL_OWN, TF_POOL_HELPER};
    assert_int_equal(tf_worker_cpu_share(both_all, 1, own_and_helper, 2, 0), 4);
    assert_int_equal(tf_worker_cpu_share(both_all, 1, own_and_helper, 2, 1), 0);
    /* ... but the CPUs no measuring pool holds: B alone on 2 and 3 */
    assert_int_equal(tf_worker_cpu_share(split, 1, own_and_helper, 2, 1), 2);
    assert_int_equal(tf_worker_cpu_share(overlap, 1, own_and_helper, 2, 1), 1);
    /* two helpers alone on a node split it like two pools */
    const int two_helpers[] = {TF_POOL_HELPER, TF_POOL_HELPER};
    assert_int_equal(tf_worker_cpu_share(both_all, 1, two_helpers, 2, 0), 2);
    /* three helpers on the one CPU a measuring pool leaves: a third each, 0 */
    const unsigned char one_free[] = {0x0f, 0x0f, 0x0f, 0x07};
    const int three_helpers[] = {TF_POOL_HELPER, TF_POOL_HELPER, TF_POOL_HELPER, TF_POOL_OWN};
    assert_int_equal(tf_worker_cpu_share(one_free, 1, three_helpers, 4, 0), 0);
    assert_int_equal(tf_worker_cpu_share(one_free, 1, three_helpers, 4, 3), 3);
}

/* Which ranks of a node compile for their own device, once the job is known:
 * rank 0 the coordinator, 1 and 2 device workers (GPU 0, then the host), 3 a
 * compile rank, 4 a third device worker (wraps to GPU 0). */
static void test_node_pools(void **state)
{
    (void)state;
    struct tf_device devs[2] = {0};
    tf_strlcpy(devs[0].backend, "cuda", sizeof devs[0].backend);
    tf_strlcpy(devs[0].arch, "sm_90", sizeof devs[0].arch);
    tf_strlcpy(devs[0].name, "NVIDIA H100", sizeof devs[0].name);
    tf_strlcpy(devs[1].backend, "host", sizeof devs[1].backend);
    tf_strlcpy(devs[1].arch, "x86_64", sizeof devs[1].arch);
    tf_strlcpy(devs[1].name, "Intel Xeon", sizeof devs[1].name);
    const int role[] = {TF_NODE_NONE, TF_NODE_DEVICE, TF_NODE_DEVICE, TF_NODE_COMPILE,
                        TF_NODE_DEVICE};
    const int index[] = {-1, 0, 1, -1, 2};
    unsigned char masks[5];
    memset(masks, 0xff, sizeof masks); /* all unbound on 8 CPUs */
    const struct tf_worker_node node = {5, 1, role, index, masks, 1};
    int pools[5];
    char *cuda_only[] = {"cuda"}, *host_only[] = {"host"}, *by_class[] = {"NVIDIA H1*"};
    struct tf_job job = {0};

    tf_worker_node_pools(&node, &job, devs, 2, pools); /* no targets: every device */
    const int all[] = {TF_POOL_NONE, TF_POOL_OWN, TF_POOL_OWN, TF_POOL_OWN, TF_POOL_OWN};
    assert_memory_equal(pools, all, sizeof all);

    job.ntargets = 1;
    job.targets = cuda_only;
    tf_worker_node_pools(&node, &job, devs, 2, pools);
    const int cuda[] = {TF_POOL_NONE, TF_POOL_OWN, TF_POOL_HELPER, TF_POOL_OWN, TF_POOL_OWN};
    assert_memory_equal(pools, cuda, sizeof cuda);
    /* the two GPU workers and the compile rank split the 8 CPUs; the host helps with none */
    assert_int_equal(tf_worker_cpu_share(masks, 1, pools, 5, 1), 3);
    assert_int_equal(tf_worker_cpu_share(masks, 1, pools, 5, 2), 0);

    job.targets = by_class; /* a class glob: the same as "cuda" here */
    tf_worker_node_pools(&node, &job, devs, 2, pools);
    assert_memory_equal(pools, cuda, sizeof cuda);

    job.targets = host_only;
    tf_worker_node_pools(&node, &job, devs, 2, pools);
    const int host[] = {TF_POOL_NONE, TF_POOL_HELPER, TF_POOL_OWN, TF_POOL_OWN, TF_POOL_HELPER};
    assert_memory_equal(pools, host, sizeof host);

    /* a compile rank probes no device: every device worker counts as measuring */
    tf_worker_node_pools(&node, &job, NULL, 0, pools);
    assert_memory_equal(pools, all, sizeof all);
}

static void test_broken_variant(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 1);
    struct tf_compiled c;
    compile_source(p, f, "void gemm(void **args)\n{\n    int x = ;\n}\n", &c);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    assert_int_equal(c.cached, 0);
    assert_string_equal(c.binary_path, "");
    assert_non_null(strstr(c.message, "error"));
    assert_non_null(strstr(c.message, "gemm.c:3:"));
    /* the variant is known-bad: cached, and the child lives on */
    assert_int_equal(count_files(f->cache, "err"), 1);
    assert_int_equal(count_files(f->cache, "log"), 1);
    assert_int_equal(tf_compile_pool_starts(p), 1);
    pid_t pid;
    assert_int_equal(tf_compile_pool_pids(p, &pid, 1), 1);
    compile_source(p, f, NULL, &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    pid_t same;
    assert_int_equal(tf_compile_pool_pids(p, &same, 1), 1);
    assert_int_equal(same, pid);
    assert_int_equal(tf_compile_pool_starts(p), 1);
    tf_compile_pool_destroy(p);
}

/* TUNEFARM_COMPILE_MEMORY=256 for the pools made from now on; skips the test
 * in an AddressSanitizer build (no limit there, and no bomb without one). */
static void limit_compilers_to_256_mib(void)
{
    struct tf_error err = {0};
    setenv("TUNEFARM_COMPILE_MEMORY", "256", 1);
    uint64_t limit = 1;
    assert_int_equal(tf_compiler_memory_limit(1, &limit, &err), 0);
    if (limit == 0) {
        unsetenv("TUNEFARM_COMPILE_MEMORY");
        skip();
    }
    assert_int_equal(limit, UINT64_C(256) << 20);
}

/* Review C: a kernel whose source makes the compiler allocate without end
 * (#include "/dev/zero": cc1 reads it into memory until none is left) must
 * cost its own configuration only. Each compiler process gets the pool's
 * memory limit (RLIMIT_DATA, inherited by cc1): the variant fails at once
 * with the compiler's "out of memory" and the limit named, is not cached
 * (the limit is not in the key: a raised limit must be able to compile it),
 * and the next variant compiles in the same child. Without the limit cc1
 * grew until the OOM killer took it (or whoever else was largest on the
 * node). A value that is not a size is refused when the pool is made. */
static void test_memory_bomb_fails_alone(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    limit_compilers_to_256_mib();
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 1);
    struct tf_compiled c;
    const double t0 = now();
    compile_source(p, f, "#include \"/dev/zero\"\nvoid gemm(void **args) { (void)args; }\n", &c);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    assert_true(now() - t0 < 60.0);
    if (strstr(c.message, "out of memory") == NULL || strstr(c.message, "limit of 256 MiB") == NULL)
        fail_msg("unexpected message: %s", c.message);
    assert_int_equal(count_files(f->cache, "err"), 0);
    compile_source(p, f, NULL, &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_int_equal(tf_compile_pool_starts(p), 1);
    tf_compile_pool_destroy(p);
    setenv("TUNEFARM_COMPILE_MEMORY", "lots", 1);
    assert_null(tf_compile_pool_create(SELF, &tf_backend_host, "test", f->cache, 1, &err));
    assert_non_null(strstr(err.message, "TUNEFARM_COMPILE_MEMORY='lots'"));
    unsetenv("TUNEFARM_COMPILE_MEMORY");
}

/* `f->gemm` with its reference's source behind `head` (a new string: free it). */
static char *reference_behind(struct fixture *f, const char *head, struct tf_kernel *k)
{
    const size_t n = strlen(head) + strlen(f->gemm->ref_source) + 1;
    char *source = malloc(n);
    assert_non_null(source);
    snprintf(source, n, "%s%s", head, f->gemm->ref_source);
    *k = *f->gemm; /* the pool only reads the kernel */
    k->ref_source = source;
    return source;
}

/* A reference is user code too: one whose compile never ends (it includes a
 * FIFO nobody writes, so cc1 blocks in open()) fails once
 * TUNEFARM_COMPILE_TIMEOUT has passed, with an error that names the
 * reference and the timeout, is not cached, and leaves no process behind.
 * The reference compiled in the worker itself, and the timeout killed the
 * cc driver alone: cc1 stayed, blocked for good, and the deadline was 120 s
 * whatever the variable said. TMPDIR is the test's folder, so every tool of
 * that compile (cc, cc1, as, ld) has it in its command line, and what they
 * wrote there (nothing may stay) is seen. */
static void test_reference_timeout_leaves_nothing(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    char fifo[128], head[256], path[4096];
    snprintf(fifo, sizeof fifo, "%s/never-written.h", f->cache);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(head, sizeof head, "#include \"%s\"\n", fifo);
    struct tf_kernel k;
    char *source = reference_behind(f, head, &k);
    const char *tmpdir = getenv("TMPDIR");
    char *saved_tmpdir = tmpdir ? strdup(tmpdir) : NULL;
    setenv("TMPDIR", f->cache, 1);
    setenv("TUNEFARM_COMPILE_TIMEOUT", "2", 1);
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 1);

    const double t0 = now();
    const int rc = tf_compile_reference(p, &k, path, sizeof path, &err);
    const double waited = now() - t0;
    /* Nothing of it may stay: allow the killed tools a moment to be reaped. */
    pid_t left[8];
    int nleft = 0;
    for (int i = 0; i < 150 && (nleft = processes_with(f->cache, left, 8)) > 0; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    char seen[512] = "";
    if (nleft > 0) {
        char cmdline[256];
        for (int i = 0; i < nleft && i < 8; i++) {
            if (read_proc(left[i], "cmdline", cmdline, sizeof cmdline) < 0)
                cmdline[0] = '\0';
            snprintf(seen + strlen(seen), sizeof seen - strlen(seen), " %d (%s)", (int)left[i],
                     cmdline);
        }
        /* Unblock and end them, so that a failure leaves nothing either. */
        const int fd = open(fifo, O_WRONLY | O_NONBLOCK);
        if (fd >= 0)
            close(fd);
        for (int i = 0; i < nleft && i < 8; i++)
            kill(left[i], SIGKILL);
    }
    const int children = compiler_children("host");
    tf_compile_pool_destroy(p);
    /* Nor any file of it in TMPDIR (the source the host backend wrote, cc's
     * temporaries): only the FIFO and the cache's folder are the test's. */
    char strays[512] = "";
    DIR *d = opendir(f->cache);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            strcmp(e->d_name, "never-written.h") != 0 && strcmp(e->d_name, "host") != 0)
            snprintf(strays + strlen(strays), sizeof strays - strlen(strays), " %s", e->d_name);
    closedir(d);
    unsetenv("TUNEFARM_COMPILE_TIMEOUT");
    if (saved_tmpdir)
        setenv("TMPDIR", saved_tmpdir, 1);
    else
        unsetenv("TMPDIR");
    free(saved_tmpdir);
    free(source);

    if (nleft > 0)
        fail_msg("%d processes of the reference's compile left:%s", nleft, seen);
    assert_int_equal(children, 0); /* its compiler process is gone too */
    if (strays[0] != '\0')
        fail_msg("the killed compile left in TMPDIR:%s", strays);
    assert_int_not_equal(rc, 0);
    if (strstr(err.message, "reference of kernel 'gemm'") == NULL ||
        strstr(err.message, "timed out") == NULL ||
        strstr(err.message, "TUNEFARM_COMPILE_TIMEOUT") == NULL)
        fail_msg("unexpected message: %s", err.message);
    if (!(waited >= 2.0 && waited < 30.0))
        fail_msg("the reference's compile ended after %.1f s, its deadline was 2 s", waited);
    assert_int_equal(count_files(f->cache, "err"), 0); /* a timeout is no verdict */
}

/* A reference whose source makes the compiler allocate without end
 * (#include "/dev/zero") fails at once under the pool's memory limit
 * (TUNEFARM_COMPILE_MEMORY), naming it, not cached; it compiled in the worker
 * itself with no limit, and cc1 grew until the OOM killer struck. */
static void test_reference_memory_bomb_fails_alone(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    limit_compilers_to_256_mib();
    struct tf_kernel k;
    char *source = reference_behind(f, "#include \"/dev/zero\"\n", &k);
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 1);
    char path[4096];
    const double t0 = now();
    const int rc = tf_compile_reference(p, &k, path, sizeof path, &err);
    const double waited = now() - t0;
    const int starts = tf_compile_pool_starts(p);
    tf_compile_pool_destroy(p);
    unsetenv("TUNEFARM_COMPILE_MEMORY");
    free(source);
    assert_int_not_equal(rc, 0);
    assert_int_not_equal(err.code, TF_ERR_IO); /* not the node's full disk */
    if (strstr(err.message, "reference of kernel 'gemm'") == NULL ||
        strstr(err.message, "out of memory") == NULL ||
        strstr(err.message, "limit of 256 MiB") == NULL)
        fail_msg("unexpected message: %s", err.message);
    if (waited >= 30.0)
        fail_msg("the reference's compile took %.1f s under a limit of 256 MiB", waited);
    assert_int_equal(starts, 1); /* in a compiler process of its own */
    assert_int_equal(count_files(f->cache, "err"), 0);
}

/* A good reference compiles (in a compiler process that is gone afterwards)
 * and is found in the cache the next time: by the same pool and by a new one
 * (a rerun), which then start no compiler process at all. */
static void test_reference_cached(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    char first[4096], again[4096];
    struct stat st1, st2;
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 1);
    if (tf_compile_reference(p, f->gemm, first, sizeof first, &err) != 0)
        fail_msg("reference: %s", err.message);
    assert_int_equal(stat(first, &st1), 0);
    assert_int_equal(tf_compile_pool_starts(p), 1);
    assert_int_equal(compiler_children("host"), 0);
    assert_int_equal(tf_compile_reference(p, f->gemm, again, sizeof again, &err), 0);
    assert_string_equal(again, first);
    assert_int_equal(tf_compile_pool_starts(p), 1);
    tf_compile_pool_destroy(p);

    p = pool(f, &tf_backend_host, 1);
    assert_int_equal(tf_compile_reference(p, f->gemm, again, sizeof again, &err), 0);
    assert_string_equal(again, first);
    assert_int_equal(tf_compile_pool_starts(p), 0);
    tf_compile_pool_destroy(p);
    assert_int_equal(stat(again, &st2), 0);
    assert_true(st1.st_ino == st2.st_ino && st1.st_mtime == st2.st_mtime); /* not rewritten */
    assert_int_equal(count_files(f->cache, "tmp.*"), 0);
}

/* TUNEFARM_COMPILE_TIMEOUT is the variants' deadline too (a compile that
 * hangs is killed after it, not after 120 s), and a value that is not a
 * positive number of seconds is refused when the pool is made, naming it. */
static void test_compile_timeout_variable(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    setenv("TUNEFARM_COMPILE_TIMEOUT", "0.5", 1);
    struct tf_compile_pool *p = pool(f, &fault_backend, 1);
    struct tf_compiled c;
    const double t0 = now();
    compile_source(p, f, "/* @hang */ void gemm(void **a) { (void)a; }\n", &c);
    const double waited = now() - t0;
    tf_compile_pool_destroy(p);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    if (strstr(c.message, "compiler timed out") == NULL ||
        strstr(c.message, "TUNEFARM_COMPILE_TIMEOUT") == NULL)
        fail_msg("unexpected message: %s", c.message);
    if (!(waited >= 0.5 && waited < 10.0))
        fail_msg("the hung compile was killed after %.1f s, its deadline was 0.5 s", waited);
    static const char *const bad[] = {"soon", "0", "-3", "2s", "nan", "inf", "1e9"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("TUNEFARM_COMPILE_TIMEOUT", bad[i], 1);
        p = tf_compile_pool_create(SELF, &tf_backend_host, "test", f->cache, 1, &err);
        if (p != NULL) {
            tf_compile_pool_destroy(p);
            unsetenv("TUNEFARM_COMPILE_TIMEOUT");
            fail_msg("TUNEFARM_COMPILE_TIMEOUT='%s' was taken", bad[i]);
        }
        char want[64];
        snprintf(want, sizeof want, "TUNEFARM_COMPILE_TIMEOUT='%s'", bad[i]);
        if (strstr(err.message, want) == NULL)
            fail_msg("TUNEFARM_COMPILE_TIMEOUT='%s': %s", bad[i], err.message);
    }
    unsetenv("TUNEFARM_COMPILE_TIMEOUT");
}

static void test_crash_restarts_child(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *p = pool(f, &fault_backend, 1);
    struct tf_compiled c;
    compile_source(p, f, "/* @print */ void gemm(void **a) { (void)a; }\n", &c);
    assert_int_equal(c.status, TF_STATUS_OK); /* stdout noise did not break the channel */
    pid_t before, after;
    assert_int_equal(tf_compile_pool_pids(p, &before, 1), 1);

    compile_source(p, f, "/* @crash */ void gemm(void **a) { (void)a; }\n", &c);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    assert_string_equal(c.message, "compiler process crashed (signal 11)");
    assert_string_equal(c.binary_path, "");
    assert_int_equal(count_files(f->cache, "err"), 0); /* not cached */
    assert_int_equal(tf_compile_pool_pids(p, &after, 1), 0);

    /* the next variant gets a new child */
    compile_source(p, f, NULL, &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_int_equal(tf_compile_pool_pids(p, &after, 1), 1);
    assert_int_not_equal(after, before);
    assert_int_equal(tf_compile_pool_starts(p), 2);

    /* a machinery failure in the child is compile_error, not cached, the child kept */
    compile_source(p, f, "/* @machinery */ void gemm(void **a) { (void)a; }\n", &c);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    assert_string_equal(c.message, "cannot run the test compiler");
    assert_int_equal(count_files(f->cache, "err"), 0);
    pid_t still;
    assert_int_equal(tf_compile_pool_pids(p, &still, 1), 1);
    assert_int_equal(still, after);

    struct tf_compile_stats st;
    tf_compile_get_stats(p, &st);
    assert_int_equal(st.compiled, 4);
    assert_int_equal(st.failed, 2);
    tf_compile_pool_destroy(p);
}

static void test_sigkill_mid_compile(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *p = pool(f, &fault_backend, 1);
    f->variant.source = "/* @hang */ void gemm(void **a) { (void)a; }\n";
    const double t0 = now();
    uint64_t t = tf_compile_submit(p, &f->variant, f->gemm->default_index);
    pid_t victim = -1;
    while (now() - t0 < 10.0 && tf_compile_pool_pids(p, &victim, 1) == 0) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_true(victim > 0);
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL); /* let it get into compile() */
    assert_int_equal(kill(victim, SIGKILL), 0);
    struct tf_compiled c;
    tf_compile_wait(p, t, &c);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    assert_string_equal(c.message, "compiler process crashed (signal 9)");
    assert_true(now() - t0 < 30.0); /* well within the 120 s deadline */
    assert_int_equal(count_files(f->cache, "err"), 0);

    /* replaced: the next variant still compiles, in a new child */
    compile_source(p, f, NULL, &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    pid_t pid;
    assert_int_equal(tf_compile_pool_pids(p, &pid, 1), 1);
    assert_int_not_equal(pid, victim);
    assert_true(is_compiler_child(pid, "testfault"));
    assert_int_equal(tf_compile_pool_starts(p), 2);
    tf_compile_pool_destroy(p);
}

static void test_timeout_kills_child_and_tools(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *p = pool(f, &fault_backend, 1);
    tf_compile_pool_set_deadline(p, 0.5);
    struct tf_compiled c;
    const double t0 = now();
    compile_source(p, f, "/* @hang */ void gemm(void **a) { (void)a; }\n", &c);
    const double waited = now() - t0;
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    assert_non_null(strstr(c.message, "compiler timed out"));
    assert_true(waited >= 0.5 && waited < 10.0);
    assert_int_equal(count_files(f->cache, "err"), 0); /* not cached */
    assert_int_equal(count_files(f->cache, "tmp.*"), 0);
    pid_t pid;
    assert_int_equal(tf_compile_pool_pids(p, &pid, 1), 0);

    /* the tool the child had started went down with it */
    FILE *fp = fopen(f->grandchild_file, "r");
    assert_non_null(fp);
    int grandchild = -1;
    assert_int_equal(fscanf(fp, "%d", &grandchild), 1);
    fclose(fp);
    assert_true(grandchild > 0);
    assert_true(is_dead((pid_t)grandchild));

    /* and the pool goes on with a new child */
    tf_compile_pool_set_deadline(p, 60.0);
    compile_source(p, f, NULL, &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_int_equal(tf_compile_pool_starts(p), 2);
    tf_compile_pool_destroy(p);
}

static void test_bad_executables(void **state)
{
    struct fixture *f = *state;
    struct tf_error err = {0};
    assert_null(tf_compile_pool_create("/nonexistent/tunefarm", &tf_backend_host, "x", f->cache,
                                       1, &err));
    assert_non_null(strstr(err.message, "/nonexistent/tunefarm"));
    assert_null(tf_compile_pool_create(SELF, &tf_backend_host, "x", f->cache, 0, &err));

    /* an executable that is not a compiler: every variant fails, none is cached */
    struct tf_compile_pool *p = tf_compile_pool_create("/bin/true", &tf_backend_host, "x",
                                                       f->cache, 1, &err);
    assert_non_null(p);
    struct tf_compiled c;
    compile_source(p, f, NULL, &c);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    assert_string_equal(c.message, "compiler process exited with status 0");
    assert_int_equal(count_files(f->cache, "err"), 0);
    tf_compile_pool_destroy(p);
}

/* The in-progress mark beside `binary` (the cache's "<key>.busy"). */
static void busy_path(const char *binary, char *out, size_t cap)
{
    snprintf(out, cap, "%s", binary);
    char *dot = strrchr(out, '.');
    assert_non_null(dot);
    snprintf(dot, cap - (size_t)(dot - out), ".busy");
}

static void write_mark(const char *path, const char *host, long pid)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fprintf(fp, "%s %ld\n", host, pid);
    assert_int_equal(fclose(fp), 0);
}

/* Two pools on one cache (two ranks) asked for the same slow variant at once:
 * one compiles it, the other waits for that compile instead of repeating it. */
static void test_same_variant_compiled_once(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *a = pool(f, &fault_backend, 1), *b = pool(f, &fault_backend, 1);
    f->variant.source = "/* @slow 2 */ void gemm(void **a) { (void)a; }\n";
    const uint64_t ta = tf_compile_submit(a, &f->variant, f->gemm->default_index);
    const uint64_t tb = tf_compile_submit(b, &f->variant, f->gemm->default_index);
    struct tf_compiled ca, cb;
    tf_compile_wait(a, ta, &ca);
    tf_compile_wait(b, tb, &cb);
    assert_int_equal(ca.status, TF_STATUS_OK);
    assert_int_equal(cb.status, TF_STATUS_OK);
    assert_string_equal(ca.binary_path, cb.binary_path);
    struct tf_compile_stats sa, sb;
    tf_compile_get_stats(a, &sa);
    tf_compile_get_stats(b, &sb);
    assert_int_equal(sa.compiled + sb.compiled, 1);
    assert_int_equal(sa.cached + sb.cached, 1);
    assert_int_equal(ca.cached + cb.cached, 1);
    assert_int_equal(count_files(f->cache, "busy"), 0);
    tf_compile_pool_destroy(a);
    tf_compile_pool_destroy(b);
}

/* A mark whose owner lives holds a compile back until it goes; a mark removed
 * without an answer (the owner's compile failed) leaves the compile to us. */
static void test_live_mark_waits(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 1);
    struct tf_compiled c;
    compile_source(p, f, NULL, &c); /* learn the cache paths, then forget the answer */
    assert_int_equal(c.status, TF_STATUS_OK);
    char busy[4200], meta[4200], host[256] = "";
    busy_path(c.binary_path, busy, sizeof busy);
    snprintf(meta, sizeof meta, "%s", busy);
    memcpy(meta + strlen(meta) - 4, "meta", 4);
    assert_int_equal(unlink(c.binary_path), 0);
    unlink(meta);
    gethostname(host, sizeof host - 1);
    write_mark(busy, host, (long)getpid()); /* we are alive: a live owner */

    const double t0 = now();
    const uint64_t ticket = tf_compile_submit(p, &f->variant, f->gemm->default_index);
    struct timespec hold = {1, 0};
    nanosleep(&hold, NULL);
    assert_int_equal(access(c.binary_path, F_OK), -1); /* it waited, did not compile */
    assert_int_equal(unlink(busy), 0);
    tf_compile_wait(p, ticket, &c);
    assert_true(now() - t0 >= 1.0);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_int_equal(c.cached, 0); /* compiled here once the mark went */
    assert_int_equal(access(c.binary_path, R_OK), 0);
    assert_int_equal(count_files(f->cache, "busy"), 0);
    tf_compile_pool_destroy(p);
}

/* Marks nobody will remove: one of a process of this host that is gone, one
 * older than any compile may take. Both are taken over at once. */
static void test_stale_marks_taken_over(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 1);
    char busy[4200], host[256] = "";
    gethostname(host, sizeof host - 1);
    pid_t dead = fork();
    assert_true(dead >= 0);
    if (dead == 0)
        _exit(0);
    assert_int_equal(waitpid(dead, NULL, 0), dead);

    for (int round = 0; round < 2; round++) {
        struct tf_compiled c;
        f->variant.source = round == 0 ? "void gemm(void **a) { (void)a; }\n"
                                       : "void gemm(void **a) { (void)a; /* 2 */ }\n";
        compile_source(p, f, f->variant.source, &c);
        assert_int_equal(c.status, TF_STATUS_OK);
        busy_path(c.binary_path, busy, sizeof busy);
        assert_int_equal(unlink(c.binary_path), 0);
        if (round == 0) {
            write_mark(busy, host, (long)dead);
        } else {
            write_mark(busy, "another-host", 1);
            struct timespec old[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
            assert_int_equal(utimensat(AT_FDCWD, busy, old, 0), 0);
        }
        const double t0 = now();
        compile_source(p, f, f->variant.source, &c);
        assert_true(now() - t0 < 20.0); /* at once, not after waiting */
        assert_int_equal(c.status, TF_STATUS_OK);
        assert_int_equal(c.cached, 0);
        assert_int_equal(access(busy, F_OK), -1);
    }
    tf_compile_pool_destroy(p);
}

/* What cannot be a mark (a directory that cannot even be removed) or a mark
 * that cannot be taken over never holds a compile back: it compiles unmarked. */
static void test_unremovable_mark_compiles_anyway(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 1);
    struct tf_compiled c;
    char busy[4200], inside[4300];
    compile_source(p, f, NULL, &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    busy_path(c.binary_path, busy, sizeof busy);
    assert_int_equal(unlink(c.binary_path), 0);
    assert_int_equal(mkdir(busy, 0777), 0);
    snprintf(inside, sizeof inside, "%s/x", busy);
    write_mark(inside, "x", 1);
    const double t0 = now();
    compile_source(p, f, NULL, &c);
    assert_true(now() - t0 < 20.0);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_int_equal(c.cached, 0);
    tf_compile_pool_destroy(p); /* teardown removes the directory, moved aside or not */
}

/* A fresh failure note (the owner's compile crashed or timed out) answers the
 * ranks waiting for it: compile_error with its message, nothing compiled. */
static void test_failure_note_answers(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 1);
    struct tf_compiled c;
    char busy[4200];
    compile_source(p, f, NULL, &c);
    busy_path(c.binary_path, busy, sizeof busy);
    assert_int_equal(unlink(c.binary_path), 0);
    FILE *fp = fopen(busy, "w");
    assert_non_null(fp);
    fprintf(fp, "failed compiler process timed out after 120 s\n");
    assert_int_equal(fclose(fp), 0);
    compile_source(p, f, NULL, &c);
    assert_int_equal(c.status, TF_STATUS_COMPILE_ERROR);
    assert_string_equal(c.message, "compiler process timed out after 120 s");
    struct tf_compile_stats st;
    tf_compile_get_stats(p, &st);
    assert_int_equal(st.compiled, 1); /* the first compile only */
    assert_int_equal(access(busy, F_OK), 0); /* the note stays until it ages out */
    tf_compile_pool_destroy(p);
}

/* A compile longer than the refresh period keeps its mark fresh, so nobody
 * takes a live compile for a dead one. */
static void test_long_compile_keeps_mark_fresh(void **state)
{
    struct fixture *f = *state;
    struct tf_compile_pool *p = pool(f, &fault_backend, 1);
    f->variant.source = "/* @long */ void gemm(void **a) { (void)a; }\n";
    const time_t started = time(NULL);
    const uint64_t ticket = tf_compile_submit(p, &f->variant, f->gemm->default_index);
    struct timespec wait = {6, 0};
    nanosleep(&wait, NULL);
    char pattern[256];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/*/*/*.busy", f->cache);
    assert_int_equal(glob(pattern, 0, NULL, &g), 0);
    assert_int_equal(g.gl_pathc, 1);
    struct stat st;
    assert_int_equal(stat(g.gl_pathv[0], &st), 0);
    globfree(&g);
    assert_true(st.st_mtime >= started + 4); /* touched since it was made */
    struct tf_compiled c;
    tf_compile_wait(p, ticket, &c);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_int_equal(count_files(f->cache, "busy"), 0);
    tf_compile_pool_destroy(p);
}

/* ---- include paths (issue 11, item 6) ---- */

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

/* A host kernel in `dir` whose output is x * INCL_SCALE, INCL_SCALE coming from
 * `dir`/include/incl_value.h through -I (absolute, so any working directory will do). */
static void write_include_kernel(const char *dir, const char *scale)
{
    char path[256], text[2048], header[128];
    snprintf(path, sizeof path, "%s/include", dir);
    assert_int_equal(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/incl.c", dir);
    write_text(path, "#include <incl_value.h>\n"
                     "void incl(void **args);\n"
                     "void incl(void **args)\n{\n"
                     "    const int n = *(const int *)args[0];\n"
                     "    const float *x = *(const float *const *)args[1];\n"
                     "    float *y = *(float *const *)args[2];\n"
                     "    for (int i = 0; i < n; i++)\n        y[i] = x[i] * INCL_SCALE;\n}\n");
    snprintf(path, sizeof path, "%s/kernel.yaml", dir);
    snprintf(text, sizeof text,
             "name: incl\nlanguage: c\nsource: incl.c\nentry: incl\n"
             "options: [-O1, -I%s/include]\n"
             "reference: {source: incl.c, entry: incl}\n"
             "problems:\n  small: {N: 4}\nparameters:\n  U: [1, 2]\ndefault: {U: 1}\n"
             "arguments:\n  - {name: N, scalar: int32, value: N}\n"
             "  - {name: x, buffer: float32, size: N}\n"
             "  - {name: y, buffer: float32, size: N, output: true}\n",
             dir);
    write_text(path, text);
    snprintf(header, sizeof header, "#define INCL_SCALE %s\n", scale);
    snprintf(path, sizeof path, "%s/include/incl_value.h", dir);
    write_text(path, header);
}

static void set_scale(const char *dir, const char *scale)
{
    char path[256], header[128];
    snprintf(header, sizeof header, "#define INCL_SCALE %s\n", scale);
    snprintf(path, sizeof path, "%s/include/incl_value.h", dir);
    write_text(path, header);
}

/* Run the compiled kernel at `binary` on x = 3 and return y[0]. */
static float run_incl(const char *binary)
{
    void *h = dlopen(binary, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        fail_msg("dlopen %s: %s", binary, dlerror());
    void (*fn)(void **);
    *(void **)&fn = dlsym(h, "incl"); /* POSIX's way round ISO C's object/function split */
    assert_non_null(fn);
    int n = 1;
    float x = 3.0f, y = 0.0f, *xp = &x, *yp = &y;
    void *args[] = {&n, &xp, &yp};
    fn(args);
    dlclose(h);
    return y;
}

static struct tf_kernel *load_incl(const char *dir, struct tf_bundle *b, char hash[65])
{
    char path[256];
    struct tf_error err = {0};
    snprintf(path, sizeof path, "%s/kernel.yaml", dir);
    struct tf_kernel *k = tf_kernel_load(path, b, &err);
    if (k == NULL)
        fail_msg("load %s: %s", path, err.message);
    tf_bundle_hash(b, hash);
    return k;
}

/* The edit-and-rerun, in the unit: a new header value means a new
 * bundle (job) hash, a cache miss and a binary that computes the new value. */
static void test_header_edit_changes_hash_and_key(void **state)
{
    struct fixture *f = *state;
    char dir[128], hash1[65], hash2[65], hash3[65];
    snprintf(dir, sizeof dir, "%s/kernel", f->cache);
    assert_int_equal(mkdir(dir, 0777), 0);
    write_include_kernel(dir, "1.0f");

    struct tf_bundle *b1 = tf_bundle_create(), *b2 = tf_bundle_create(),
                     *b3 = tf_bundle_create();
    struct tf_kernel *k1 = load_incl(dir, b1, hash1);
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 1);
    struct tf_compiled out1, out2, again;
    tf_compile_wait(p, tf_compile_submit(p, k1, k1->default_index), &out1);
    assert_int_equal(out1.status, TF_STATUS_OK);
    assert_true(run_incl(out1.binary_path) == 3.0f);
    tf_compile_pool_destroy(p);

    set_scale(dir, "2.0f");
    struct tf_kernel *k2 = load_incl(dir, b2, hash2);
    assert_string_not_equal(hash1, hash2); /* the job hash follows the header */
    p = pool(f, &tf_backend_host, 1);      /* a new run */
    tf_compile_wait(p, tf_compile_submit(p, k2, k2->default_index), &out2);
    assert_int_equal(out2.status, TF_STATUS_OK);
    assert_int_equal(out2.cached, 0); /* not the stale binary */
    assert_string_not_equal(out1.binary_path, out2.binary_path);
    assert_true(run_incl(out2.binary_path) == 6.0f);
    tf_compile_pool_destroy(p);

    /* and back: the first binary is still right for the first header */
    set_scale(dir, "1.0f");
    struct tf_kernel *k3 = load_incl(dir, b3, hash3);
    assert_string_equal(hash1, hash3);
    p = pool(f, &tf_backend_host, 1);
    tf_compile_wait(p, tf_compile_submit(p, k3, k3->default_index), &again);
    assert_int_equal(again.cached, 1);
    assert_string_equal(again.binary_path, out1.binary_path);
    tf_compile_pool_destroy(p);

    /* a kernel without include paths keeps the key it always had */
    char key_null[65], key_empty[65], key_inc[65];
    char *opts[] = {"-O2"};
    struct tf_compile_input in = {.source = "x", .entry = "e", .arch = "a", .noptions = 1,
                                  .options = opts};
    tf_cache_key(&tf_backend_host, &in, NULL, key_null);
    tf_cache_key(&tf_backend_host, &in, "", key_empty);
    tf_cache_key(&tf_backend_host, &in, "0123", key_inc);
    assert_string_equal(key_null, key_empty);
    assert_string_not_equal(key_null, key_inc);
    char *text = NULL;
    int bad = 7;
    struct tf_error err = {0};
    assert_int_equal(tf_include_manifest(opts, 1, "c", "k/incl.c", &text, &bad, &err), 0);
    assert_null(text);
    assert_int_equal(bad, -1);

    tf_kernel_destroy(k1);
    tf_kernel_destroy(k2);
    tf_kernel_destroy(k3);
    tf_bundle_destroy(b1);
    tf_bundle_destroy(b2);
    tf_bundle_destroy(b3);
}

/* A header edited while a run compiles (review 2026-11-25, H1): every
 * variant compiled after the edit is compiled, cached and run with the new
 * header, under its new key - not a compile_error for the rest of the run -
 * and a configuration compiled before the edit is not served from the old
 * key again. (Before the fix the pool kept the digest of its first compile:
 * the second compile below was "headers ... changed during the run".) */
static void test_header_edit_during_run_recompiled(void **state)
{
    struct fixture *f = *state;
    char dir[128], hash[65];
    snprintf(dir, sizeof dir, "%s/kernel", f->cache);
    assert_int_equal(mkdir(dir, 0777), 0);
    write_include_kernel(dir, "1.0f");
    struct tf_bundle *b = tf_bundle_create();
    struct tf_kernel *k = load_incl(dir, b, hash);
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 1);
    struct tf_compiled first, second, again;
    tf_compile_wait(p, tf_compile_submit(p, k, 0), &first);
    assert_int_equal(first.status, TF_STATUS_OK);
    assert_true(run_incl(first.binary_path) == 3.0f);
    set_scale(dir, "5.0f"); /* the same size: only the file's times tell */
    tf_compile_wait(p, tf_compile_submit(p, k, 1), &second);
    if (second.status != TF_STATUS_OK)
        fprintf(stderr, "after the edit: %s\n", second.message);
    assert_int_equal(second.status, TF_STATUS_OK);
    assert_int_equal(second.cached, 0);
    assert_true(run_incl(second.binary_path) == 15.0f);
    tf_compile_wait(p, tf_compile_submit(p, k, 0), &again);
    assert_int_equal(again.status, TF_STATUS_OK);
    assert_string_not_equal(again.binary_path, first.binary_path);
    assert_true(run_incl(again.binary_path) == 15.0f);
    assert_int_equal(count_files(f->cache, "so"), 3);
    assert_int_equal(count_files(f->cache, "err"), 0);
    tf_compile_pool_destroy(p);
    /* the next run, with the header as it is now: both come from the cache */
    p = pool(f, &tf_backend_host, 1);
    struct tf_compiled rerun;
    tf_compile_wait(p, tf_compile_submit(p, k, 1), &rerun);
    assert_int_equal(rerun.cached, 1);
    assert_string_equal(rerun.binary_path, second.binary_path);
    tf_compile_pool_destroy(p);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

struct edit_while_compiling {
    const char *cache, *dir;
    int edited;
};

/* Wait for a compile's in-progress mark, then edit the header (up to 20 s). */
static void *edit_when_busy(void *arg)
{
    struct edit_while_compiling *e = arg;
    for (int i = 0; i < 20000 && !e->edited; i++) {
        if (count_files(e->cache, "busy") > 0) {
            set_scale(e->dir, "7.0f");
            e->edited = 1;
            break;
        }
        struct timespec ms = {0, 1000 * 1000};
        nanosleep(&ms, NULL);
    }
    return NULL;
}

/* The header edited while the compiler runs: the compiler may have read
 * either version, so that binary is kept under neither key; the variant is
 * compiled again, and what is cached and returned is the new header's binary
 * under the new header's key (a later run finds it there). */
static void test_header_edit_while_compiling(void **state)
{
    struct fixture *f = *state;
    char dir[128], hash[65];
    snprintf(dir, sizeof dir, "%s/kernel", f->cache);
    assert_int_equal(mkdir(dir, 0777), 0);
    write_include_kernel(dir, "1.0f");
    struct tf_bundle *b = tf_bundle_create();
    struct tf_kernel *k = load_incl(dir, b, hash);
    struct tf_compile_pool *p = pool(f, &tf_backend_host, 1);
    struct edit_while_compiling e = {f->cache, dir, 0};
    pthread_t editor;
    assert_int_equal(pthread_create(&editor, NULL, edit_when_busy, &e), 0);
    struct tf_compiled c;
    tf_compile_wait(p, tf_compile_submit(p, k, 0), &c);
    pthread_join(editor, NULL);
    assert_true(e.edited);
    if (c.status != TF_STATUS_OK)
        fprintf(stderr, "edited while compiling: %s\n", c.message);
    assert_int_equal(c.status, TF_STATUS_OK);
    assert_true(run_incl(c.binary_path) == 21.0f);
    tf_compile_pool_destroy(p);
    p = pool(f, &tf_backend_host, 1);
    struct tf_compiled rerun;
    tf_compile_wait(p, tf_compile_submit(p, k, 0), &rerun);
    assert_int_equal(rerun.cached, 1);
    assert_string_equal(rerun.binary_path, c.binary_path);
    tf_compile_pool_destroy(p);
    tf_kernel_destroy(k);
    tf_bundle_destroy(b);
}

/* tunefarm's own outputs in a CUDA kernel's folder (an archive, its journal,
 * a temporary) are no headers: the manifest and the stamp leave them out, so
 * an archive written beside the kernel does not change the job's hash (a run
 * could never resume) nor make the folder too big to hash. A header added
 * there still counts. */
static void test_include_skips_outputs(void **state)
{
    struct fixture *f = *state;
    char dir[128], path[256], src[256], *m1 = NULL, *m2 = NULL, *s1 = NULL, *s2 = NULL;
    int bad = 0, racy = 0;
    struct tf_error err = {0};
    snprintf(dir, sizeof dir, "%s/kernel_folder", f->cache);
    assert_int_equal(mkdir(dir, 0777), 0);
    snprintf(src, sizeof src, "%s/k.cu", dir);
    write_text(src, "__global__ void k(void) {}\n");
    char *none[] = {"-O2"};
    assert_int_equal(tf_include_manifest(none, 1, "cuda", src, &m1, &bad, &err), 0);
    assert_int_equal(tf_include_stamp(none, 1, "cuda", src, &s1, &racy, &err), 0);
    snprintf(path, sizeof path, "%s/results.h5", dir);
    write_text(path, "\x89HDF\r\n\x1a\n and the rest of an archive");
    snprintf(path, sizeof path, "%s/results.h5.journal", dir);
    write_text(path, "TFJRNL02 records");
    snprintf(path, sizeof path, "%s/results.h5.tmp.4242", dir);
    write_text(path, "half an archive");
    snprintf(path, sizeof path, "%s/renamed.dat", dir); /* an archive by its bytes */
    write_text(path, "\x89HDF\r\n\x1a\nmore");
    assert_int_equal(tf_include_manifest(none, 1, "cuda", src, &m2, &bad, &err), 0);
    assert_int_equal(tf_include_stamp(none, 1, "cuda", src, &s2, &racy, &err), 0);
    assert_string_equal(m1, m2);
    assert_string_equal(s1, s2);
    free(m2);
    free(s2);
    snprintf(path, sizeof path, "%s/tile.h.tmp.x", dir); /* not our temporary's name */
    write_text(path, "#define T 1\n");
    assert_int_equal(tf_include_manifest(none, 1, "cuda", src, &m2, &bad, &err), 0);
    assert_string_not_equal(m1, m2);
    assert_non_null(strstr(m2, "tile.h.tmp.x"));
    free(m1);
    free(m2);
    free(s1);
}

/* tf_include_stamp: the same walk as the manifest, stat() only. Equal while
 * nothing changes; a changed size, an added file change it; a file written
 * just now makes it racy (its times cannot tell a same-size rewrite). */
static void test_include_stamp(void **state)
{
    struct fixture *f = *state;
    char dir[128], path[256], opt[160], *s1 = NULL, *s2 = NULL;
    int racy = 0;
    struct tf_error err = {0};
    snprintf(dir, sizeof dir, "%s/stamped", f->cache);
    assert_int_equal(mkdir(dir, 0777), 0);
    snprintf(path, sizeof path, "%s/a.h", dir);
    write_text(path, "#define A 1\n");
    snprintf(opt, sizeof opt, "-I%s", dir);
    char *opts[] = {"-O2", opt};
    assert_int_equal(tf_include_stamp(opts, 2, "c", "x.c", &s1, &racy, &err), 0);
    assert_non_null(s1);
    assert_true(racy);
    assert_int_equal(tf_include_stamp(opts, 2, "c", "x.c", &s2, &racy, &err), 0);
    assert_string_equal(s1, s2);
    free(s2);
    write_text(path, "#define A 10\n");
    assert_int_equal(tf_include_stamp(opts, 2, "c", "x.c", &s2, &racy, &err), 0);
    assert_string_not_equal(s1, s2);
    free(s1);
    snprintf(path, sizeof path, "%s/b.h", dir);
    write_text(path, "#define B 1\n");
    assert_int_equal(tf_include_stamp(opts, 2, "c", "x.c", &s1, &racy, &err), 0);
    assert_string_not_equal(s1, s2);
    assert_non_null(strstr(s1, "/b.h"));
    free(s1);
    free(s2);
    char *none[] = {"-O2"};
    assert_int_equal(tf_include_stamp(none, 1, "c", "x.c", &s1, &racy, &err), 0);
    assert_null(s1);
    char missing[200];
    snprintf(missing, sizeof missing, "-I%s/nosuch", f->cache);
    char *bad[] = {missing};
    assert_int_not_equal(tf_include_stamp(bad, 1, "c", "x.c", &s1, &racy, &err), 0);
    assert_non_null(strstr(err.message, "nosuch"));
}

/* What tf_include_manifest covers and what it refuses, naming the option. */
static void test_include_manifest(void **state)
{
    struct fixture *f = *state;
    char dir[128], path[256], opt_dir[160], opt_missing[160], opt_file[300], src[200];
    char *text = NULL, *again = NULL;
    int bad = -1;
    struct tf_error err = {0};
    snprintf(dir, sizeof dir, "%s/inc", f->cache);
    assert_int_equal(mkdir(dir, 0777), 0);
    snprintf(path, sizeof path, "%s/sub", dir);
    assert_int_equal(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/sub/deep.h", dir);
    write_text(path, "#define DEEP 1\n");
    snprintf(opt_dir, sizeof opt_dir, "-isystem%s", dir);
    char *opts[] = {"-O2", opt_dir};
    assert_int_equal(tf_include_manifest(opts, 2, "c", "x.c", &text, &bad, &err), 0);
    assert_non_null(text);
    assert_non_null(strstr(text, "sub/deep.h")); /* recursive */
    write_text(path, "#define DEEP 2\n");
    assert_int_equal(tf_include_manifest(opts, 2, "c", "x.c", &again, &bad, &err), 0);
    assert_string_not_equal(text, again);
    free(text);
    free(again);

    /* -include FILE is hashed too */
    snprintf(opt_file, sizeof opt_file, "-include%s", path);
    char *fopts[] = {opt_file};
    assert_int_equal(tf_include_manifest(fopts, 1, "c", "x.c", &text, &bad, &err), 0);
    assert_non_null(strstr(text, "deep.h"));
    free(text);

    /* GPU kernels: NVRTC reads #include "x.h" beside the source */
    snprintf(src, sizeof src, "%s/sub/k.cu", dir);
    assert_int_equal(tf_include_manifest(NULL, 0, "cuda", src, &text, &bad, &err), 0);
    assert_non_null(text);
    assert_non_null(strstr(text, "deep.h"));
    free(text);
    assert_int_equal(tf_include_manifest(NULL, 0, "c", src, &text, &bad, &err), 0);
    assert_null(text);

    /* refused, each naming its option */
    snprintf(opt_missing, sizeof opt_missing, "-I%s/missing", dir);
    char *missing[] = {"-O2", opt_missing};
    assert_int_equal(tf_include_manifest(missing, 2, "c", "x.c", &text, &bad, &err), -1);
    assert_int_equal(bad, 1);
    assert_non_null(strstr(err.message, opt_missing));
    char *bare[] = {"-I"};
    assert_int_equal(tf_include_manifest(bare, 1, "c", "x.c", &text, &bad, &err), -1);
    assert_int_equal(bad, 0);
    char *prefix[] = {"-iprefix/usr", "-O1"};
    assert_int_equal(tf_include_manifest(prefix, 2, "c", "x.c", &text, &bad, &err), -1);
    assert_int_equal(bad, 0);
    for (int i = 0; i <= TF_INCLUDE_MAX_FILES; i++) {
        snprintf(path, sizeof path, "%s/h%04d.h", dir, i);
        write_text(path, "\n");
    }
    assert_int_equal(tf_include_manifest(opts, 2, "c", "x.c", &text, &bad, &err), -1);
    assert_int_equal(bad, 1);
    assert_non_null(strstr(err.message, "narrower folder"));
    assert_non_null(strstr(err.message, opt_dir));
}

static void test_compiler_main_arguments(void **state)
{
    (void)state;
    char *no_backend[] = {"tunefarm", "__compiler", NULL};
    assert_int_equal(tf_compiler_main(2, no_backend), 2);
    char *unknown[] = {"tunefarm", "__compiler", "nosuch", NULL};
    assert_int_equal(tf_compiler_main(3, unknown), 2);
    char *wrong[] = {"tunefarm", "run", "host", NULL};
    assert_int_equal(tf_compiler_main(3, wrong), 2);
}

/* ---- `tunefarm compile` picks what a run measures ---- */

static int cmp_config(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The configurations the plan of `job` on `dev` measures for kernel 0, over
 * its problems, ascending and distinct (a new array of *n). */
static uint64_t *plan_configs(const struct tf_job *job, const struct tf_device *dev, uint64_t *n)
{
    struct tf_error err = {0};
    struct tf_plan *plan = tf_plan_create(job, 1, dev, &err);
    if (plan == NULL)
        fail_msg("plan: %s", err.message);
    uint64_t *all = NULL, count = 0;
    for (int t = 0; t < plan->ntasks; t++) {
        const struct tf_task *task = &plan->tasks[t];
        assert_int_equal(task->kernel, 0);
        all = realloc(all, sizeof *all * (count + task->total + 1));
        if (task->list != NULL) {
            assert_int_equal(task->nlist, task->total);
            memcpy(all + count, task->list, sizeof *all * task->nlist);
            count += task->nlist;
            continue;
        }
        /* brute force (or a random budget that holds them all): every valid one */
        uint64_t idx = 0;
        for (uint64_t i = 0; i < task->total; i++) {
            assert_int_equal(tf_space_next(task->space, idx, UINT64_MAX, &idx, &err), 1);
            all[count++] = idx++;
        }
    }
    tf_plan_destroy(plan);
    qsort(all, count, sizeof *all, cmp_config);
    uint64_t unique = 0;
    for (uint64_t i = 0; i < count; i++)
        if (unique == 0 || all[unique - 1] != all[i])
            all[unique++] = all[i];
    *n = unique;
    return all;
}

/* For every space size, the variants `tunefarm compile` compiles ahead are
 * exactly the configurations the run's plan measures, so a run sharing the
 * cache compiles nothing. tests/fixtures/followup_huge has 2.56 * 10^8
 * configurations (above TF_SPACE_EXACT_LIMIT) and a problem whose valid
 * fraction is below 10^-3: the plan samples it by rejection
 * (tf_space_random); precompile's count + tf_space_sample drew ranks there,
 * another sample, and a run on a precompiled cache compiled again. The
 * brute-force fault job is the small case. */
static void test_precompile_compiles_what_the_plan_measures(void **state)
{
    (void)state;
    static const struct {
        const char *job;
        uint64_t configs; /* how many the plan measures */
    } jobs[] = {
        {"tests/fixtures/followup_huge.yaml", 19}, /* 10 per problem, the default in both */
        {"tests/fixtures/faulty.yaml", 18},
    };
    struct tf_device dev;
    struct tf_error err = {0};
    assert_int_equal(tf_backend_host.describe(0, &dev, &err), 0);
    for (size_t j = 0; j < sizeof jobs / sizeof jobs[0]; j++) {
        struct tf_bundle *bundle = tf_bundle_create();
        struct tf_job *job = tf_job_load(jobs[j].job, bundle, &err);
        if (job == NULL)
            fail_msg("%s: %s", jobs[j].job, err.message);
        assert_int_equal(job->nkernels, 1);
        uint64_t nplan = 0, ncompile = 0, *compile = NULL;
        uint64_t *planned = plan_configs(job, &dev, &nplan);
        assert_int_equal(
            tf_precompile_variants(job, &job->kernels[0], &dev, &compile, &ncompile, &err), 0);
        if (ncompile != nplan ||
            (nplan > 0 && memcmp(compile, planned, sizeof *planned * nplan) != 0)) {
            fprintf(stderr, "%s: the plan measures %llu configurations, precompile compiles "
                            "%llu:\n  plan:",
                    jobs[j].job, (unsigned long long)nplan, (unsigned long long)ncompile);
            for (uint64_t i = 0; i < nplan; i++)
                fprintf(stderr, " %llu", (unsigned long long)planned[i]);
            fprintf(stderr, "\n  compile:");
            for (uint64_t i = 0; i < ncompile; i++)
                fprintf(stderr, " %llu", (unsigned long long)compile[i]);
            fprintf(stderr, "\n");
        }
        assert_int_equal(nplan, jobs[j].configs);
        assert_int_equal(ncompile, nplan);
        assert_memory_equal(compile, planned, sizeof *planned * nplan);
        free(compile);
        free(planned);
        tf_job_destroy(job);
        tf_bundle_destroy(bundle);
    }
}

/* A job given as text, as if it were tests/fixtures/NAME.yaml (kernels found
 * beside it). The bundle is returned for the caller to free. */
static struct tf_job *fixture_job(const char *text, struct tf_bundle **bundle)
{
    static const char path[] = "tests/fixtures/layering_precompile.yaml";
    struct tf_error err = {0};
    *bundle = tf_bundle_create();
    tf_bundle_add(*bundle, path, text, strlen(text));
    struct tf_job *job = tf_job_load(path, *bundle, &err);
    if (job == NULL)
        fail_msg("%s:%d:%d: %s\n%s", err.file, err.line, err.column, err.message, text);
    return job;
}

/* `tunefarm compile` with a budget or an adaptive strategy. Brute force with
 * a budget: exactly the first `budget` valid configurations in index order,
 * which is what the plan measures (it compiled every valid one). An adaptive
 * search (decided during the run): the same draw as a random search of
 * `budget` (the default first, then the seeded sample), or of
 * TF_PRECOMPILE_ADAPTIVE_SAMPLE without a budget, never the whole space (it
 * walked and compiled every valid configuration, 2.56 * 10^8 on
 * followup_huge). The bowl has 642 valid configurations of 768. */
static void test_precompile_budget_and_adaptive(void **state)
{
    (void)state;
    struct tf_device dev;
    struct tf_error err = {0};
    assert_int_equal(tf_backend_host.describe(0, &dev, &err), 0);
    static const char head[] = "name: layering_precompile\nkernels: [%s]\ntargets: [host]\n"
                               "search: %s\n";
    static const struct {
        const char *kernel, *search;
        const char *same_as;     /* NULL: the plan of this job; else the plan of this search */
        uint64_t configs;
    } cases[] = {
        {"search_bowl", "{strategy: brute_force, budget: 40}", NULL, 40},
        {"search_bowl", "{strategy: brute_force, budget: 700}", NULL, 642}, /* holds them all */
        {"faulty", "{strategy: brute_force, budget: 5}", NULL, 5},
        {"search_bowl", "{strategy: genetic, budget: 40, seed: 3}",
         "{strategy: random, budget: 40, seed: 3}", 40},
        {"search_bowl", "{strategy: local, seed: 3, patience: 20}",
         "{strategy: random, budget: 256, seed: 3}", TF_PRECOMPILE_ADAPTIVE_SAMPLE},
        {"search_bowl", "{strategy: bayes, budget: 1000}", "{strategy: brute_force}", 642},
        {"followup_huge", "{strategy: genetic, budget: 10, seed: 5}",
         "{strategy: random, budget: 10, seed: 5}", 19},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, head, cases[i].kernel, cases[i].search);
        struct tf_bundle *bundle;
        struct tf_job *job = fixture_job(text, &bundle);
        uint64_t ncompile = 0, *compile = NULL, nplan = 0, *planned;
        assert_int_equal(
            tf_precompile_variants(job, &job->kernels[0], &dev, &compile, &ncompile, &err), 0);
        if (cases[i].same_as) {
            char ref_text[512];
            snprintf(ref_text, sizeof ref_text, head, cases[i].kernel, cases[i].same_as);
            struct tf_bundle *ref_bundle;
            struct tf_job *ref = fixture_job(ref_text, &ref_bundle);
            planned = plan_configs(ref, &dev, &nplan);
            tf_job_destroy(ref);
            tf_bundle_destroy(ref_bundle);
        } else {
            planned = plan_configs(job, &dev, &nplan);
        }
        if (ncompile != cases[i].configs || ncompile != nplan ||
            memcmp(compile, planned, sizeof *planned * nplan) != 0)
            fail_msg("case %zu (%s %s): compiles %llu, expected %llu (the plan: %llu)", i,
                     cases[i].kernel, cases[i].search, (unsigned long long)ncompile,
                     (unsigned long long)cases[i].configs, (unsigned long long)nplan);
        /* Brute force: the first ones in index order, nothing skipped. */
        if (job->strategy == TF_STRATEGY_BRUTE_FORCE && ncompile > 0) {
            struct tf_space *sp = tf_space_create(job->kernels[0].kernel,
                                                  job->kernels[0].problems[0], &dev, &err);
            assert_non_null(sp);
            uint64_t below = 0;
            assert_int_equal(tf_space_count(sp, 0, compile[ncompile - 1] + 1, &below, &err), 0);
            assert_int_equal(below, ncompile);
            tf_space_destroy(sp);
        }
        free(compile);
        free(planned);
        tf_job_destroy(job);
        tf_bundle_destroy(bundle);
    }
}

/* A request of exactly TF_MAX_DEFINES defines and as many options crosses
 * to the child and back (one more is refused before it is sent), and the
 * reply's registers, shared and spilled bytes reach their own fields (the
 * host backend reports none of them, so only a backend that does shows a
 * swap). */
static void test_request_limits_and_reply_fields(void **state)
{
    (void)state;
    static char defs[TF_MAX_DEFINES + 1][32];
    char *defines[TF_MAX_DEFINES + 1];
    for (int i = 0; i <= TF_MAX_DEFINES; i++) {
        snprintf(defs[i], sizeof defs[i], "-DD%d=%d", i, i);
        defines[i] = defs[i];
    }
    struct tf_compile_input in = {.kernel_name = "k", .source = "@stats", .source_name = "k.c",
                                  .entry = "k", .arch = "test", .ndefines = TF_MAX_DEFINES,
                                  .defines = defines, .noptions = TF_MAX_DEFINES,
                                  .options = defines, .output_path = "/dev/null"};
    struct tf_compiler *c = tf_compiler_create(SELF, "testfault");
    struct tf_compile_output out;
    struct tf_error err = {0};
    double seconds = -1;
    if (tf_compiler_compile(c, &in, 30.0, &out, &seconds, &err) != 0)
        fail_msg("%d defines and options: %s", TF_MAX_DEFINES, err.message);
    assert_int_equal(out.ok, 1);
    assert_int_equal(out.registers, 40);
    assert_int_equal(out.shared_bytes, 1024);
    assert_int_equal(out.spill_bytes, 8);
    assert_true(seconds >= 0);
    free(out.log);
    in.ndefines = TF_MAX_DEFINES + 1;
    assert_int_not_equal(tf_compiler_compile(c, &in, 30.0, &out, &seconds, &err), 0);
    assert_non_null(strstr(err.message, "more than 64 defines or options"));
    assert_int_equal(tf_compiler_starts(c), 1); /* the same child answered */
    tf_compiler_destroy(c);
}

/* Without TUNEFARM_COMPILE_MEMORY each compiler gets half the node's memory
 * shared among the pool's processes, and never less than
 * TF_COMPILER_MEMORY_MIN (compiler.h). */
static void test_default_memory_limit(void **state)
{
    (void)state;
    struct tf_error err = {0};
    const char *saved = getenv("TUNEFARM_COMPILE_MEMORY");
    char *keep = saved ? strdup(saved) : NULL;
    unsetenv("TUNEFARM_COMPILE_MEMORY");
    uint64_t one = 1, two = 1, many = 1;
    assert_int_equal(tf_compiler_memory_limit(1, &one, &err), 0);
    assert_int_equal(tf_compiler_memory_limit(2, &two, &err), 0);
    assert_int_equal(tf_compiler_memory_limit(1 << 20, &many, &err), 0);
    if (keep) {
        setenv("TUNEFARM_COMPILE_MEMORY", keep, 1);
        free(keep);
    }
    if (one == 0)
        skip(); /* an AddressSanitizer build: no limit */
    const uint64_t half = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 2;
    assert_true(one == (half > TF_COMPILER_MEMORY_MIN ? half : TF_COMPILER_MEMORY_MIN));
    assert_true(two == (half / 2 > TF_COMPILER_MEMORY_MIN ? half / 2 : TF_COMPILER_MEMORY_MIN));
    assert_true(many == TF_COMPILER_MEMORY_MIN);
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "__compiler") == 0 && strcmp(argv[2], "testfault") == 0)
        return tf_compiler_serve(&fault_backend);
    if (argc > 1 && strcmp(argv[1], "__compiler") == 0)
        return tf_compiler_main(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_children_compile_variants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_child_per_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_any, setup, teardown),
        cmocka_unit_test_setup_teardown(test_children_see_no_gpu, setup, teardown),
        cmocka_unit_test(test_cpu_share),
        cmocka_unit_test(test_node_pools),
        cmocka_unit_test_setup_teardown(test_broken_variant, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_bomb_fails_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reference_timeout_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reference_memory_bomb_fails_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reference_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compile_timeout_variable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_restarts_child, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigkill_mid_compile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_kills_child_and_tools, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_executables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_variant_compiled_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_live_mark_waits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_marks_taken_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unremovable_mark_compiles_anyway, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failure_note_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_compile_keeps_mark_fresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_edit_changes_hash_and_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_edit_during_run_recompiled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_edit_while_compiling, setup, teardown),
        cmocka_unit_test_setup_teardown(test_include_stamp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_include_skips_outputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_include_manifest, setup, teardown),
        cmocka_unit_test(test_compiler_main_arguments),
        cmocka_unit_test(test_request_limits_and_reply_fields),
        cmocka_unit_test(test_default_memory_limit),
        cmocka_unit_test(test_precompile_compiles_what_the_plan_measures),
        cmocka_unit_test(test_precompile_budget_and_adaptive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
