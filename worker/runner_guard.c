/* runner_guard.c - what watches a variant's buffers, and the memory it may not write.
 *
 * A variant is hostile until proven otherwise. Every buffer it sees sits
 * between two RUNNER_GUARD_BYTES canaries (checked after the verified launch
 * where launches do not queue, and after the samples everywhere: a changed
 * byte is that variant's runtime_error naming the buffer, and the runner
 * exits after replying so that a clean one takes the next configuration); on
 * the host each buffer also ends at a PROT_NONE guard page (backend_host.c),
 * and a fault there while a variant runs on the runner's own thread comes
 * back (siglongjmp) as the same error, saying whether it read or wrote (x86-64
 * tells: bit 1 of the page-fault error code) and how far from the buffer. A
 * fault on a thread the variant started cannot be unwound to the runner's
 * stack: that one ends the runner as any fault does (crashed, signal 11),
 * after a line on stderr naming the buffer. Where the backend queues
 * downloads (GPUs), the guard regions of all buffers are downloaded into one
 * page-locked scratch and waited for once. The inputs' initial images (and
 * the reference's outputs, runner_child.c) live in their own mappings, made
 * read-only once filled (sealed), away from the heap the variants' buffers
 * share, so a variant writing wild cannot turn them into every later
 * variant's failure. A canary or guard page sees only contiguous overflows: a
 * write far from every buffer, into the runner's heap or stack, is not seen. */
#include "runner_internal.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "../schema/kernel.h"
#include "../schema/status.h"

/* ---- sealed memory: what no variant may change ---------------------------- */

void *tf_runner_sealed_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void tf_runner_sealed_seal(void *p, size_t bytes)
{
    if (p && mprotect(p, bytes ? bytes : 1, PROT_READ) != 0)
        tf_die("cannot seal %zu bytes: %s", bytes, strerror(errno));
}

void tf_runner_sealed_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes ? bytes : 1);
}

/* ---- guards: canaries around every buffer, a fault handler for the pages ---- */

static unsigned char canary[RUNNER_GUARD_BYTES];  /* what every guard region holds */
static unsigned char guard_scratch[2 * RUNNER_GUARD_BYTES];

/* What the fault handler knows: the child whose buffers are guarded, whether
 * a variant is running, and where to go back to. */
static struct runner_child *guard_child;
static volatile sig_atomic_t guard_armed;
static sigjmp_buf guard_jmp;
static volatile sig_atomic_t guard_arg;   /* the buffer whose guard was hit */
static volatile sig_atomic_t guard_after; /* 1 past the end, 0 before the start */
static volatile sig_atomic_t guard_access; /* GUARD_READ, GUARD_WRITE or GUARD_ACCESS */
static volatile uintptr_t guard_distance; /* bytes between the buffer and the fault */
static uintptr_t guard_page_bytes;
static pid_t guard_tid; /* the runner's thread: the only one guard_jmp belongs to */
/* The reference running on the runner's thread: a fault there is the
 * reference's (the kernel file's own code), not the configuration's. */
static volatile sig_atomic_t reference_armed;
static sigjmp_buf reference_jmp;
static volatile sig_atomic_t reference_signal;

enum { GUARD_ACCESS, GUARD_READ, GUARD_WRITE };

/* Whether the fault `sig` described by `uc` was a read or a write: x86-64's
 * page-fault error code says (bit 1: a write); elsewhere "an access". */
static int guard_fault_access(int sig, const void *uc)
{
#if defined(__x86_64__) && defined(REG_ERR)
    if (sig == SIGSEGV && uc != NULL)
        return (((const ucontext_t *)uc)->uc_mcontext.gregs[REG_ERR] & 2) ? GUARD_WRITE
                                                                           : GUARD_READ;
#else
    (void)sig;
    (void)uc;
#endif
    return GUARD_ACCESS;
}

/* write(2) what it can of `s` (async-signal-safe). */
static void guard_say(const char *s)
{
    (void)!write(2, s, strlen(s));
}

/* SIGSEGV / SIGBUS while a variant runs: a fault just past (or before) one of
 * its buffers is an overflow into a guard page (the host backend puts one
 * after every buffer): go back to the runner with the buffer's name. Only
 * from the runner's own thread: guard_jmp is a point on its stack, and a
 * thread the variant started cannot be unwound there (it would go on running
 * the runner on a stack that is not its own), so a fault on any other thread
 * ends the runner like any other fault: the default action, and the worker
 * records `crashed` with the signal (the runner says on stderr which guard it
 * was). */
static void guard_signal(int sig, siginfo_t *si, void *uc)
{
    const struct runner_child *c = guard_child;
    if (reference_armed && gettid() == guard_tid) {
        reference_armed = 0;
        reference_signal = sig;
        siglongjmp(reference_jmp, 1);
    }
    if (guard_armed && c != NULL && c->cur.bufs != NULL && c->cur.k != NULL) {
        const uintptr_t a = (uintptr_t)si->si_addr;
        const uintptr_t reach = RUNNER_GUARD_BYTES + 2 * guard_page_bytes;
        /* The nearest buffer within reach: two mappings may lie back to
         * back, one's guard page just before the other's canary (a runaway
         * past the end of the lower one is nearer to its end than to the
         * upper one's start). Past an end wins a tie. */
        int hit = -1;
        uintptr_t best = 0;
        for (int i = 0; i < c->cur.k->nargs; i++) {
            const struct runner_buffer *b = &c->cur.bufs[i];
            if (b->dev == NULL)
                continue;
            const uintptr_t start = (uintptr_t)b->dev, end = start + b->bytes;
            const int after = a >= end && a - end < reach;
            if (!after && !(a < start && start - a <= reach))
                continue;
            const uintptr_t distance = after ? a - end : start - a;
            if (hit < 0 || distance < best || (distance == best && after)) {
                hit = i;
                best = distance;
                guard_after = after;
            }
        }
        if (hit >= 0 && gettid() != guard_tid) {
            guard_say("tunefarm runner: a thread the variant started faulted in the guard "
                      "page of '");
            guard_say(c->cur.k->args[hit].name);
            guard_say("'; the runner ends\n");
        } else if (hit >= 0) {
            guard_arg = hit;
            guard_access = guard_fault_access(sig, uc);
            guard_distance = best;
            guard_armed = 0;
            siglongjmp(guard_jmp, 1);
        }
    }
    signal(sig, SIG_DFL); /* the faulting access runs again and ends the runner */
}

void tf_runner_guard_install(struct runner_child *c)
{
    static unsigned char altstack[64 * 1024];
    uint64_t st = UINT64_C(0x6775617264); /* "guard" */
    for (size_t i = 0; i < sizeof canary; i += 8) {
        const uint64_t z = tf_runner_splitmix64(&st);
        memcpy(canary + i, &z, 8);
    }
    long page = sysconf(_SC_PAGESIZE);
    guard_page_bytes = page > 0 ? (uintptr_t)page : 4096;
    guard_child = c;
    guard_tid = gettid();
    /* An alternate stack: the handler must run even if the variant's stack is gone. */
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = guard_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}

void tf_runner_guard_forget(void)
{
    guard_child = NULL;
}

int tf_runner_guard_fill(const struct runner_child *c, const struct runner_buffer *b,
                         struct tf_error *err)
{
    return c->be->upload(c->ctx, b->dev_base, canary, RUNNER_GUARD_BYTES, err) != 0 ||
                   c->be->upload(c->ctx, (char *)b->dev + b->bytes, canary, RUNNER_GUARD_BYTES,
                                 err) != 0
               ? -1
               : 0;
}

/* Check every buffer's guard regions after the variant ran. TF_STATUS_OK if
 * all still hold the canary; else runtime_error with err naming the buffer and
 * how far from it the first changed byte is (and c->damaged set: the variant
 * may have written further, into memory no canary watches, so this runner ends
 * after replying and a clean one takes the next configuration). */
int tf_runner_guard_check(struct runner_child *c, struct tf_error *err)
{
    const struct tf_kernel *k = c->cur.k;
    /* Where downloads queue (GPUs: guard_pinned), the two regions of every
     * buffer are queued into one page-locked scratch, in argument order, and
     * waited for once; elsewhere each is downloaded in turn. */
    unsigned char *const pinned = c->cur.guard_pinned;
    size_t slot = 0;
    for (int i = 0; pinned != NULL && i < k->nargs; i++) {
        const struct runner_buffer *b = &c->cur.bufs[i];
        if (k->args[i].kind != TF_ARG_BUFFER || b->dev == NULL)
            continue;
        unsigned char *got = pinned + 2 * RUNNER_GUARD_BYTES * slot++;
        if (c->be->download_async(c->ctx, got, b->dev_base, RUNNER_GUARD_BYTES, err) != 0 ||
            c->be->download_async(c->ctx, got + RUNNER_GUARD_BYTES, (char *)b->dev + b->bytes,
                                  RUNNER_GUARD_BYTES, err) != 0) {
            c->be->download_wait(c->ctx, &(struct tf_error){0}); /* nothing left landing */
            return TF_STATUS_RUNTIME_ERROR;
        }
    }
    if (pinned != NULL && c->be->download_wait(c->ctx, err) != 0)
        return TF_STATUS_RUNTIME_ERROR;
    slot = 0;
    for (int i = 0; i < k->nargs; i++) {
        const struct runner_buffer *b = &c->cur.bufs[i];
        if (k->args[i].kind != TF_ARG_BUFFER || b->dev == NULL)
            continue;
        unsigned char *got = pinned ? pinned + 2 * RUNNER_GUARD_BYTES * slot++ : guard_scratch;
        if (pinned == NULL &&
            (c->be->download(c->ctx, got, b->dev_base, RUNNER_GUARD_BYTES, err) != 0 ||
             c->be->download(c->ctx, got + RUNNER_GUARD_BYTES, (char *)b->dev + b->bytes,
                             RUNNER_GUARD_BYTES, err) != 0))
            return TF_STATUS_RUNTIME_ERROR;
        size_t before = RUNNER_GUARD_BYTES, after = 0;
        while (before > 0 && got[before - 1] == canary[before - 1])
            before--;
        while (after < RUNNER_GUARD_BYTES && got[RUNNER_GUARD_BYTES + after] == canary[after])
            after++;
        if (after < RUNNER_GUARD_BYTES) {
            c->damaged = 1;
            tf_error_set(err, TF_ERR_EVAL,
                         "%s: wrote past its end (byte %zu after its %zu bytes changed; the "
                         "runner restarts)",
                         k->args[i].name, after + 1, b->bytes);
            return TF_STATUS_RUNTIME_ERROR;
        }
        if (before > 0) {
            c->damaged = 1;
            tf_error_set(err, TF_ERR_EVAL,
                         "%s: wrote before its start (byte %zu before it changed; the runner "
                         "restarts)",
                         k->args[i].name, RUNNER_GUARD_BYTES - before + 1);
            return TF_STATUS_RUNTIME_ERROR;
        }
    }
    return TF_STATUS_OK;
}


/* (The runner then ends: see tf_runner_guard_check.) */
void tf_runner_guarded_measure(struct runner_child *c, uint32_t kernel, uint32_t problem,
                               uint32_t phase, uint64_t config, const char *binary,
                               struct tf_result *res)
{
    if (sigsetjmp(guard_jmp, 1) == 0) {
        guard_armed = 1;
        tf_runner_child_measure(c, kernel, problem, phase, config, binary, res);
        guard_armed = 0;
        return;
    }
    /* Back from guard_signal: the variant was stopped in the middle. */
    const struct tf_arg *a = &c->cur.k->args[guard_arg];
    static const char *const verbs[] = {"accessed", "read", "wrote"};
    tf_result_init(res, kernel, problem, config, TF_STATUS_RUNTIME_ERROR);
    snprintf(res->message, sizeof res->message,
             "%s: %s %s (a fault %zu bytes %s it, in the guard page beyond its canary; the "
             "runner restarts)",
             a->name, verbs[guard_access], guard_after ? "past its end" : "before its start",
             (size_t)guard_distance, guard_after ? "after" : "before");
    res->timestamp = tf_runner_unix_now();
    c->damaged = 1;
}

int tf_runner_guarded_reference(struct runner_child *c, void *ref_fn, void **args,
                                struct tf_error *err)
{
    const struct tf_launch none = {{1, 1, 1}, {1, 1, 1}, 0};
    if (sigsetjmp(reference_jmp, 1) == 0) {
        reference_armed = 1;
        const int status = tf_backend_host.launch(NULL, ref_fn, &none, args, NULL, err);
        reference_armed = 0;
        return status;
    }
    /* Back from guard_signal: the reference faulted. It may have written
     * anywhere, so this runner ends after replying. */
    c->damaged = 1;
    tf_error_set(err, TF_ERR_BACKEND,
                 "reference %.60s() crashed (%s), not this configuration: fix the kernel "
                 "file's reference",
                 c->cur.k->ref_entry, reference_signal == SIGBUS ? "SIGBUS" : "SIGSEGV");
    return TF_STATUS_LAUNCH_ERROR;
}
