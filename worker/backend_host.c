/* backend_host.c - the host CPU as a device: kernels are C functions in shared objects.
 *
 * Compiling spawns the system C compiler ($CC, default "cc") with posix_spawnp
 * and an argv array: the variant's source is written to a private temporary
 * folder under the kernel's own file name, behind a `#line 1 "<source_name>"`
 * directive, so diagnostics read "kernels/gemm/gemm.c:12:3: error: ...". The
 * compiler's stdout and stderr share one pipe that is drained without blocking
 * while we wait (capped at 64 KiB, the rest discarded so the compiler never
 * stalls on a full pipe); a compiler still running past its time is killed
 * (HOST_COMPILE_BACKSTOP says which time, and why only the driver).
 * Running means dlopen + dlsym of the entry point, calling it with the farm's
 * `void **args` ABI, and timing it with CLOCK_MONOTONIC. "Device memory" is
 * 64-byte aligned host memory in its own mapping, ending (to within 63 bytes)
 * at a PROT_NONE guard page: a variant that runs past the end of a buffer
 * faults at once instead of writing over the runner's heap (the runner turns
 * that fault into the variant's error, and checks canaries for the bytes in
 * between). Discovery uses hwloc for the cache hierarchy
 * and core count of the node. Energy is the packages' RAPL counters
 * (rapl.h), where the kernel lets this user read them
 * ($TUNEFARM_RAPL_ROOT stands for /sys/class/powercap in tests). Every pipe is O_CLOEXEC: compile threads spawn
 * concurrently, and a write end leaked into a sibling compiler would hold off
 * our EOF until that sibling exits. */
#include "backend.h"
#include "rapl.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <hwloc.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../schema/hash.h"
#include "../schema/job.h"
#include "../schema/status.h"
#include "provenance.h"

extern char **environ;

#define HOST_LOG_CAP (64 * 1024)
/* The host backend's own limit on a compile: the run's compile deadline
 * (TUNEFARM_COMPILE_TIMEOUT) and this many seconds. Every compile of a run
 * happens in a compiler process (compiler.h), whose parent kills the
 * process's whole group at the deadline, cc and everything cc started
 * included; ours must come later, since it kills only the cc driver (cc must
 * stay in that group for the group kill to reach it) and its cc1 would be
 * left running. It is a backstop for in-process compiles (a pool without an
 * executable: tests and benches). */
#define HOST_COMPILE_BACKSTOP 5.0
#define HOST_DEFAULT_L1D (32 * 1024)
#define HOST_DEFAULT_L2 (1024 * 1024)

/* One buffer's mapping: the data, then the guard page. */
struct host_mapping {
    void *ptr;  /* what alloc returned */
    void *map;  /* the mapping, `len` bytes, its last page PROT_NONE */
    size_t len;
    struct host_mapping *next;
};

struct tf_backend_ctx {
    size_t llc_bytes;
    unsigned char *flush_buf; /* 2 x llc_bytes, allocated on the first flush */
    struct host_mapping *mappings;
    /* The packages' energy (RAPL), opened with the instance so that nothing
     * is opened while a variant runs; NULL where there is none, and why. */
    struct tf_rapl *rapl;
    int rapl_rc;              /* tf_rapl_open's answer: 1 none readable, -1 broken */
    char rapl_why[1024];
};

/* A loaded kernel: the handle is kept so unload can dlclose it. */
struct host_function {
    void *handle;
    void (*fn)(void **args);
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *host_cc(void)
{
    const char *cc = getenv("CC");
    return cc && cc[0] ? cc : "cc";
}

/* Spawn argv (PATH lookup), stdin from /dev/null, stdout+stderr captured into a
 * malloc'd NUL-terminated *log (capped). *wstatus gets the wait status. Returns
 * 0, or -1 + err if it cannot spawn or ran past `timeout` seconds (then killed). */
static int spawn_capture(char *const argv[], double timeout, char **log, int *wstatus,
                         struct tf_error *err)
{
    int fds[2] = {-1, -1};
    posix_spawn_file_actions_t fa;
    int fa_ready = 0;
    pid_t pid = -1;
    size_t len = 0, cap = 4096;
    char *buf = tf_xmalloc(cap);
    buf[0] = '\0';

    *log = NULL;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        tf_error_set(err, TF_ERR_SYSTEM, "pipe: %s", strerror(errno));
        goto fail;
    }
    if (posix_spawn_file_actions_init(&fa) != 0) {
        tf_error_set(err, TF_ERR_SYSTEM, "posix_spawn_file_actions_init failed");
        goto fail;
    }
    fa_ready = 1;
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    if (rc != 0) {
        pid = -1;
        tf_error_set(err, TF_ERR_SYSTEM, "cannot run '%s': %s", argv[0], strerror(rc));
        goto fail;
    }
    close(fds[1]);
    fds[1] = -1;
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);

    const double deadline = now_seconds() + timeout;
    for (;;) {
        const double left = deadline - now_seconds();
        if (left <= 0) {
            kill(pid, SIGKILL);
            waitpid(pid, wstatus, 0);
            pid = -1;
            tf_error_set(err, TF_ERR_BACKEND, "compiler timed out (killed after %.0f s)",
                         timeout);
            goto fail;
        }
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        int pr = poll(&pfd, 1, left > 0.1 ? 100 : (int)(left * 1000) + 1);
        if (pr < 0 && errno != EINTR) {
            tf_error_set(err, TF_ERR_SYSTEM, "poll: %s", strerror(errno));
            goto fail;
        }
        if (pr <= 0)
            continue;
        char chunk[4096];
        ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0)
            break; /* EOF: every writer (the compiler and its children) is gone */
        if (len + (size_t)n + 1 > HOST_LOG_CAP) {
            n = (ssize_t)(HOST_LOG_CAP - 1 - len); /* keep draining, drop the rest */
        }
        if (len + (size_t)n + 1 > cap) {
            while (len + (size_t)n + 1 > cap)
                cap *= 2;
            buf = tf_xrealloc(buf, cap);
        }
        memcpy(buf + len, chunk, (size_t)n);
        len += (size_t)n;
        buf[len] = '\0';
    }
    /* EOF came, the process should be exiting; still bound the wait. */
    for (;;) {
        pid_t w = waitpid(pid, wstatus, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            tf_error_set(err, TF_ERR_SYSTEM, "waitpid: %s", strerror(errno));
            pid = -1;
            goto fail;
        }
        if (now_seconds() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, wstatus, 0);
            pid = -1;
            tf_error_set(err, TF_ERR_BACKEND, "compiler timed out (killed after %.0f s)",
                         timeout);
            goto fail;
        }
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    close(fds[0]);
    posix_spawn_file_actions_destroy(&fa);
    *log = buf;
    return 0;
fail:
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    if (fa_ready)
        posix_spawn_file_actions_destroy(&fa);
    free(buf);
    return -1;
}

/* ---- identity (computed once: every cache key asks for it) ---- */

/* The flags of every variant's compile (around the kernel's own): in the
 * identity too, so that a tunefarm that compiles differently misses the
 * binaries an older one left in a shared cache instead of reusing them. */
static const char *const host_flags_before[] = {"-std=gnu11", "-shared", "-fPIC"};
static const char *const host_flags_after[] = {"-lm"};
#define HOST_NFLAGS(a) (sizeof(a) / sizeof(a)[0])

static pthread_once_t ident_once = PTHREAD_ONCE_INIT;
static char ident_version[96];  /* first line of `$CC --version` */
static char ident_id[PATH_MAX + 512];     /* path | version | cpu | features | flags */
static char ident_cpu[128];

static void read_cpuinfo_model(char *out, size_t cap)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[512];
    out[0] = '\0';
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
                colon[strcspn(colon, "\n")] = '\0';
                tf_strlcpy(out, colon, cap);
            }
            break;
        }
    }
    fclose(f);
}

/* The CPU's instruction-set features as 16 hex digits (a hash of /proc/cpuinfo's
 * "flags" line, "Features" on Arm), or "" if there is none: the model name alone
 * does not tell CPUs apart whose -march=native code differs (a VM that hides
 * AVX-512, an Arm core without a "model name" line). */
static void read_cpuinfo_features(char *out, size_t cap)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    char *line = NULL;
    size_t len = 0;
    out[0] = '\0';
    if (f == NULL)
        return;
    while (getline(&line, &len, f) > 0) {
        if (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0) {
            struct tf_sha256 h;
            char hex[65];
            tf_sha256_init(&h);
            tf_sha256_update_str(&h, line);
            tf_sha256_hex(&h, hex);
            hex[16] = '\0';
            tf_strlcpy(out, hex, cap);
            break;
        }
    }
    free(line);
    fclose(f);
}

/* Resolve a program name through PATH to a canonical path (or copy it as is). */
static void resolve_program(const char *prog, char *out, size_t cap)
{
    char candidate[PATH_MAX], real[PATH_MAX];
    tf_strlcpy(out, prog, cap);
    if (strchr(prog, '/')) {
        if (realpath(prog, real))
            tf_strlcpy(out, real, cap);
        return;
    }
    const char *path = getenv("PATH");
    if (path == NULL)
        return;
    while (*path) {
        size_t n = strcspn(path, ":");
        if (n > 0 && snprintf(candidate, sizeof candidate, "%.*s/%s", (int)n, path, prog) <
                         (int)sizeof candidate &&
            access(candidate, X_OK) == 0 && realpath(candidate, real)) {
            tf_strlcpy(out, real, cap);
            return;
        }
        path += n;
        if (*path == ':')
            path++;
    }
}

static void ident_init(void)
{
    const char *cc = host_cc();
    char *argv[] = {(char *)cc, "--version", NULL};
    char *log = NULL;
    int wstatus = 0;
    struct tf_error err = {0};
    if (spawn_capture(argv, 30.0, &log, &wstatus, &err) == 0 && WIFEXITED(wstatus) &&
        WEXITSTATUS(wstatus) == 0) {
        log[strcspn(log, "\n")] = '\0';
        tf_strlcpy(ident_version, log, sizeof ident_version);
    } else {
        snprintf(ident_version, sizeof ident_version, "%s (version unknown)", cc);
    }
    free(log);
    read_cpuinfo_model(ident_cpu, sizeof ident_cpu);
    char features[24];
    read_cpuinfo_features(features, sizeof features);
    char path[PATH_MAX];
    resolve_program(cc, path, sizeof path);
    /* Kernels may be built with -march=native: the CPU belongs in the cache key. */
    char flags[128];
    size_t at = 0;
    for (size_t i = 0; i < HOST_NFLAGS(host_flags_before) && at < sizeof flags; i++)
        at += (size_t)snprintf(flags + at, sizeof flags - at, "%s ", host_flags_before[i]);
    if (at < sizeof flags)
        at += (size_t)snprintf(flags + at, sizeof flags - at, "...");
    for (size_t i = 0; i < HOST_NFLAGS(host_flags_after) && at < sizeof flags; i++)
        at += (size_t)snprintf(flags + at, sizeof flags - at, " %s", host_flags_after[i]);
    snprintf(ident_id, sizeof ident_id, "%s | %s | cpu %s | features %s | flags %s", path,
             ident_version, ident_cpu, features, flags);
}

static const char *host_compiler_id(void)
{
    pthread_once(&ident_once, ident_init);
    return ident_id;
}

/* The C compiler must be on PATH (or a path that exists). */
static int host_compiler_probe(struct tf_error *err)
{
    const char *cc = host_cc();
    char path[PATH_MAX];
    resolve_program(cc, path, sizeof path); /* a path when found, else cc as it was */
    if (strchr(path, '/') == NULL || access(path, X_OK) != 0)
        return tf_error_set(err, TF_ERR_BACKEND, "no C compiler '%s' on PATH", cc);
    return 0;
}

/* ---- discovery ---- */

static int host_probe(struct tf_error *err)
{
    (void)err;
    return 0;
}

static int host_device_count(void)
{
    return 1;
}

struct cache_sizes {
    uint64_t l1d, l2, llc;
};

/* Cache sizes above the first PU (hwloc), falling back to sysconf and defaults. */
static void host_caches(hwloc_topology_t topo, struct cache_sizes *cs)
{
    memset(cs, 0, sizeof *cs);
    hwloc_obj_t pu = topo ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, 0) : NULL;
    for (hwloc_obj_t o = pu ? pu->parent : NULL; o != NULL; o = o->parent) {
        if (!hwloc_obj_type_is_cache(o->type) || o->attr == NULL)
            continue;
        if (o->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION)
            continue;
        const uint64_t size = o->attr->cache.size;
        if (o->type == HWLOC_OBJ_L1CACHE && cs->l1d == 0)
            cs->l1d = size;
        if (o->type == HWLOC_OBJ_L2CACHE && cs->l2 == 0)
            cs->l2 = size;
        if (size > cs->llc)
            cs->llc = size;
    }
    long v;
    if (cs->l1d == 0 && (v = sysconf(_SC_LEVEL1_DCACHE_SIZE)) > 0)
        cs->l1d = (uint64_t)v;
    if (cs->l2 == 0 && (v = sysconf(_SC_LEVEL2_CACHE_SIZE)) > 0)
        cs->l2 = (uint64_t)v;
    if (cs->llc == 0 && (v = sysconf(_SC_LEVEL3_CACHE_SIZE)) > 0)
        cs->llc = (uint64_t)v;
    /* Virtual machines sometimes hide the caches; constraints still need a number. */
    if (cs->l1d == 0)
        cs->l1d = HOST_DEFAULT_L1D;
    if (cs->l2 == 0)
        cs->l2 = HOST_DEFAULT_L2;
    if (cs->llc < cs->l2)
        cs->llc = cs->l2;
}

static int64_t host_simd_bytes(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return 64;
    if (__builtin_cpu_supports("avx2"))
        return 32;
#endif
    return 16;
}

static const char *info_of(hwloc_topology_t topo, const char *name)
{
    hwloc_obj_t root = hwloc_get_root_obj(topo);
    const char *v = hwloc_obj_get_info_by_name(root, name);
    if (v == NULL) {
        hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
        if (pkg)
            v = hwloc_obj_get_info_by_name(pkg, name);
    }
    return v;
}

static int host_describe(int ordinal, struct tf_device *out, struct tf_error *err)
{
    if (ordinal != 0)
        return tf_error_set(err, TF_ERR_BACKEND, "host backend has one device (0), not %d",
                            ordinal);
    memset(out, 0, sizeof *out);
    tf_strlcpy(out->backend, "host", sizeof out->backend);

    hwloc_topology_t topo = NULL;
    if (hwloc_topology_init(&topo) != 0) {
        topo = NULL;
    } else if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        topo = NULL;
    }
    struct cache_sizes cs;
    host_caches(topo, &cs);
    int cores = 0;
    if (topo) {
        const char *vendor = info_of(topo, "CPUVendor");
        const char *model = info_of(topo, "CPUModel");
        if (vendor)
            tf_strlcpy(out->vendor, vendor, sizeof out->vendor);
        if (model)
            tf_strlcpy(out->name, model, sizeof out->name);
        cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        out->memory_bytes = hwloc_get_root_obj(topo)->total_memory;
        hwloc_topology_destroy(topo);
    }
    if (out->name[0] == '\0')
        read_cpuinfo_model(out->name, sizeof out->name);
    if (out->name[0] == '\0')
        tf_strlcpy(out->name, "unknown CPU", sizeof out->name);
    if (out->vendor[0] == '\0')
        tf_strlcpy(out->vendor, "unknown", sizeof out->vendor);
    if (cores <= 0)
        cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (cores <= 0)
        cores = 1;
    if (out->memory_bytes == 0) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0)
            out->memory_bytes = (uint64_t)pages * (uint64_t)page;
    }
    out->compute_units = (uint32_t)cores;

    struct utsname u;
    if (uname(&u) == 0) {
        tf_strlcpy(out->arch, u.machine, sizeof out->arch);
        tf_strlcpy(out->driver_version, u.release, sizeof out->driver_version);
    }
    gethostname(out->host, sizeof out->host - 1);
    snprintf(out->runtime_version, sizeof out->runtime_version, "glibc %s",
             gnu_get_libc_version());
    pthread_once(&ident_once, ident_init);
    tf_strlcpy(out->compiler_version, ident_version, sizeof out->compiler_version);
    /* The governor, clock ceiling and power limit of the CPUs it may use. */
    int *cpus = tf_xcalloc(CPU_SETSIZE, sizeof *cpus);
    tf_provenance_host("/sys", cpus, tf_provenance_own_cpus(cpus, CPU_SETSIZE), out);
    free(cpus);

    out->props[TF_DEVPROP_MAX_THREADS] = 1;
    out->props[TF_DEVPROP_MAX_SHARED] = (int64_t)cs.l1d;
    out->props[TF_DEVPROP_MAX_SHARED_OPTIN] = (int64_t)cs.l1d;
    out->props[TF_DEVPROP_WARP_SIZE] = 1;
    out->props[TF_DEVPROP_SM_COUNT] = cores;
    out->props[TF_DEVPROP_L2_BYTES] = (int64_t)cs.l2;
    out->props[TF_DEVPROP_MAX_REGISTERS] = 0;
    out->props[TF_DEVPROP_SIMD_BYTES] = host_simd_bytes();
    out->props[TF_DEVPROP_MAX_SHARED_PER_SM] = (int64_t)cs.l1d;
    return 0;
}

/* ---- compiling ---- */

static int host_compile(const struct tf_compile_input *in, struct tf_compile_output *out,
                        struct tf_error *err)
{
    char dir[4096], src[4200];
    const char *tmp = getenv("TMPDIR");
    char **argv = NULL;
    char *log = NULL;
    int have_dir = 0, have_src = 0, rc = -1;
    FILE *f = NULL;

    out->ok = 0;
    out->log = NULL;
    out->registers = -1;
    out->shared_bytes = out->spill_bytes = -1;

    snprintf(dir, sizeof dir, "%s/tunefarm-cc-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        tf_error_set(err, TF_ERR_SYSTEM, "cannot create a temporary folder '%s': %s", dir,
                     strerror(errno));
        goto fail;
    }
    have_dir = 1;
    /* Named like the kernel's file so that -g info and messages make sense. */
    const char *name = in->source_name ? in->source_name : "kernel.c";
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (base[0] == '\0' || strcmp(base, "..") == 0 || strcmp(base, ".") == 0)
        base = "kernel.c";
    snprintf(src, sizeof src, "%s/%s", dir, base);
    f = fopen(src, "we");
    if (f == NULL) {
        tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", src, strerror(errno));
        goto fail;
    }
    have_src = 1;
    if (strpbrk(name, "\"\\\n") == NULL)
        fprintf(f, "#line 1 \"%s\"\n", name);
    fputs(in->source, f);
    if (fclose(f) != 0) {
        f = NULL;
        tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", src, strerror(errno));
        goto fail;
    }
    f = NULL;

    int argc = 0;
    argv = tf_xcalloc((size_t)in->noptions + (size_t)in->ndefines + HOST_NFLAGS(host_flags_before) +
                          HOST_NFLAGS(host_flags_after) + 6,
                      sizeof *argv);
    argv[argc++] = (char *)host_cc();
    for (size_t i = 0; i < HOST_NFLAGS(host_flags_before); i++)
        argv[argc++] = (char *)host_flags_before[i];
    for (int i = 0; i < in->noptions; i++)
        argv[argc++] = in->options[i];
    for (int i = 0; i < in->ndefines; i++)
        argv[argc++] = in->defines[i];
    argv[argc++] = "-o";
    argv[argc++] = (char *)in->output_path;
    argv[argc++] = src;
    for (size_t i = 0; i < HOST_NFLAGS(host_flags_after); i++)
        argv[argc++] = (char *)host_flags_after[i];
    argv[argc] = NULL;

    int wstatus = 0;
    double timeout;
    if (tf_job_compile_timeout(&timeout, err) != 0 ||
        spawn_capture(argv, timeout + HOST_COMPILE_BACKSTOP, &log, &wstatus, err) != 0)
        goto fail;
    if (WIFSIGNALED(wstatus)) {
        /* Killed (the OOM killer, SIGXFSZ, someone's kill): the machine's
         * trouble, not the variant's; never cached as a verdict. */
        tf_error_set(err, TF_ERR_SYSTEM, "the compiler was killed by signal %d%s%.200s",
                     WTERMSIG(wstatus), log[0] ? ": " : "", log);
        goto fail;
    }
    out->ok = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    if (!out->ok && log[0] == '\0') {
        free(log);
        log = tf_xmalloc(128);
        snprintf(log, 128, "error: compiler exited with status %d", WEXITSTATUS(wstatus));
    }
    out->log = log;
    log = NULL;
    rc = 0;
fail:
    if (f)
        fclose(f);
    if (have_src)
        unlink(src);
    if (have_dir)
        rmdir(dir);
    free(argv);
    free(log);
    return rc;
}

/* ---- running ---- */

static int host_open(int ordinal, struct tf_backend_ctx **ctx, struct tf_error *err)
{
    if (ordinal != 0)
        return tf_error_set(err, TF_ERR_BACKEND, "host backend has one device (0), not %d",
                            ordinal);
    struct tf_backend_ctx *c = tf_xcalloc(1, sizeof *c);
    hwloc_topology_t topo = NULL;
    if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        topo = NULL;
    }
    struct cache_sizes cs;
    host_caches(topo, &cs);
    if (topo)
        hwloc_topology_destroy(topo);
    c->llc_bytes = (size_t)cs.llc;
    struct tf_error rapl_err = {0};
    c->rapl_rc = tf_rapl_open(getenv("TUNEFARM_RAPL_ROOT"), &c->rapl, &rapl_err);
    tf_strlcpy(c->rapl_why, rapl_err.message, sizeof c->rapl_why);
    *ctx = c;
    return 0;
}

/* The host's energy is its packages' (RAPL): the cores a host kernel runs
 * on and everything else the packages run meanwhile. */
static int host_energy(struct tf_backend_ctx *ctx, double *joules, struct tf_error *err)
{
    if (ctx->rapl == NULL) {
        tf_error_set(err, TF_ERR_BACKEND, "%s", ctx->rapl_why);
        return ctx->rapl_rc < 0 ? -1 : 1;
    }
    return tf_rapl_read(ctx->rapl, joules, err);
}

static void host_close(struct tf_backend_ctx *ctx)
{
    if (ctx == NULL)
        return;
    while (ctx->mappings) {
        struct host_mapping *m = ctx->mappings;
        ctx->mappings = m->next;
        munmap(m->map, m->len);
        free(m);
    }
    free(ctx->flush_buf);
    tf_rapl_close(ctx->rapl);
    free(ctx);
}

static int host_load(struct tf_backend_ctx *ctx, const char *binary_path, const char *entry,
                     void **function, struct tf_error *err)
{
    (void)ctx;
    void *handle = dlopen(binary_path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        return tf_error_set(err, TF_ERR_BACKEND, "dlopen: %s", why ? why : binary_path);
    }
    dlerror();
    void *sym = dlsym(handle, entry);
    if (sym == NULL) {
        const char *why = dlerror();
        tf_error_set(err, TF_ERR_BACKEND, "entry point '%s' not found: %s", entry,
                     why ? why : "NULL symbol");
        dlclose(handle);
        return -1;
    }
    struct host_function *hf = tf_xmalloc(sizeof *hf);
    hf->handle = handle;
    memcpy(&hf->fn, &sym, sizeof hf->fn); /* POSIX: dlsym results are callable */
    *function = hf;
    return 0;
}

static void host_unload(struct tf_backend_ctx *ctx, void *function)
{
    (void)ctx;
    struct host_function *hf = function;
    if (hf == NULL)
        return;
    dlclose(hf->handle);
    free(hf);
}

static int host_alloc(struct tf_backend_ctx *ctx, size_t bytes, void **ptr, struct tf_error *err)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (rounded < bytes || rounded > SIZE_MAX - 2 * page)
        return tf_error_set(err, TF_ERR_NOMEM, "allocation of %zu bytes overflows", bytes);
    if (rounded == 0)
        rounded = 64;
    if (ctx == NULL) { /* no instance to remember a mapping in: plain memory */
        void *p = aligned_alloc(64, rounded);
        if (p == NULL)
            return tf_error_set(err, TF_ERR_NOMEM, "cannot allocate %zu bytes", bytes);
        *ptr = p;
        return 0;
    }
    const size_t len = (rounded + page - 1) / page * page + page;
    void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return tf_error_set(err, TF_ERR_NOMEM, "cannot allocate %zu bytes: %s", bytes,
                            strerror(errno));
    if (mprotect((char *)map + len - page, page, PROT_NONE) != 0) {
        munmap(map, len);
        return tf_error_set(err, TF_ERR_SYSTEM, "cannot protect a guard page: %s",
                            strerror(errno));
    }
    struct host_mapping *m = tf_xmalloc(sizeof *m);
    m->map = map;
    m->len = len;
    m->ptr = (char *)map + len - page - rounded;
    m->next = ctx->mappings;
    ctx->mappings = m;
    *ptr = m->ptr;
    return 0;
}

static void host_release(struct tf_backend_ctx *ctx, void *ptr)
{
    if (ctx == NULL) {
        free(ptr);
        return;
    }
    for (struct host_mapping **at = &ctx->mappings; *at; at = &(*at)->next)
        if ((*at)->ptr == ptr) {
            struct host_mapping *m = *at;
            *at = m->next;
            munmap(m->map, m->len);
            free(m);
            return;
        }
}

static int host_upload(struct tf_backend_ctx *ctx, void *dst, const void *host, size_t bytes,
                       struct tf_error *err)
{
    (void)ctx;
    (void)err;
    memcpy(dst, host, bytes);
    return 0;
}

static int host_download(struct tf_backend_ctx *ctx, void *host, const void *src, size_t bytes,
                         struct tf_error *err)
{
    (void)ctx;
    (void)err;
    memcpy(host, src, bytes);
    return 0;
}

static int host_launch(struct tf_backend_ctx *ctx, void *function,
                       const struct tf_launch *geometry, void **args, double *seconds,
                       struct tf_error *err)
{
    (void)ctx;
    (void)geometry; /* one core runs the whole kernel */
    (void)err;
    struct host_function *hf = function;
    if (seconds == NULL) {
        hf->fn(args);
        return TF_STATUS_OK;
    }
    const double t0 = now_seconds();
    hf->fn(args);
    *seconds = now_seconds() - t0;
    return TF_STATUS_OK;
}

static int host_flush_cache(struct tf_backend_ctx *ctx, struct tf_error *err)
{
    (void)err;
    const size_t n = 2 * ctx->llc_bytes;
    if (ctx->flush_buf == NULL)
        ctx->flush_buf = tf_xmalloc(n);
    /* Write then read every line: dirty lines of the kernel's data are evicted too. */
    static unsigned char round;
    memset(ctx->flush_buf, ++round, n);
    volatile unsigned sink = 0;
    unsigned acc = 0;
    for (size_t i = 0; i < n; i += 64)
        acc += ctx->flush_buf[i];
    sink = acc;
    (void)sink;
    return 0;
}

const struct tf_backend tf_backend_host = {
    .version = TF_BACKEND_VERSION,
    .name = "host",
    .language = "c",
    .probe = host_probe,
    .device_count = host_device_count,
    .describe = host_describe,
    .compiler_id = host_compiler_id,
    .compiler_probe = host_compiler_probe,
    .compile = host_compile,
    .open = host_open,
    .close = host_close,
    .load = host_load,
    .unload = host_unload,
    .alloc = host_alloc,
    .release = host_release,
    .upload = host_upload,
    .download = host_download,
    .launch = host_launch,
    .flush_cache = host_flush_cache,
    .energy = host_energy,
};
