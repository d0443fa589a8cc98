/* runner_internal.h - what the runner's files share (internal to worker/runner*.c).
 *
 * The runner is four files, one concern each: runner.c the worker's side
 * (spawning, the request/answer protocol, deadlines, reaping, the reference's
 * outputs kept across runners); runner_child.c the runner process itself
 * (buffers, the reference, measuring a configuration, serving requests);
 * runner_shield.c what keeps one variant from harming the next or the worker
 * (the shield process between them, the strays a variant leaves, the process
 * state it may change); runner_guard.c the canaries and guard pages around
 * every buffer and the read-only memory no variant may write. This header
 * holds the protocol's words, the child's state (the guards read it) and
 * each file's entry points for the others. */
#ifndef TF_RUNNER_INTERNAL_H
#define TF_RUNNER_INTERNAL_H

#include <fenv.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include "../schema/error.h"
#include "../schema/hash.h"
#include "../schema/job.h"
#include "../schema/result.h"
#include "../schema/wire.h"
#include "backend.h"

/* ---- the protocol (runner.c's header comment) ---- */

enum runner_request {
    RUNNER_REQ_INIT = 1,
    RUNNER_REQ_SETUP = 2,
    RUNNER_REQ_MEASURE = 3,
    RUNNER_REQ_QUIT = 4
};

/* The first byte of a MEASURE answer: the result follows, or (a frame of its
 * own, before the result's) the runner computes the reference's outputs for
 * that configuration first, and the worker waits a SETUP's time more. */
enum runner_measure_answer { RUNNER_ANSWER_RESULT = 0, RUNNER_ANSWER_REFERENCE = 1 };

/* Empty `b` for the next message. */
static inline void tf_runner_buf_reset(struct tf_buf *b)
{
    b->len = b->pos = 0;
}

/* Send the descriptor `fd` over the Unix socket `sock`, with one byte
 * (SCM_RIGHTS); 0 or -1. Sent right after a frame, so the socket has room. */
int tf_runner_fd_send(int sock, int fd);
/* Receive the descriptor tf_runner_fd_send sent on `sock` into *fd
 * (close-on-exec), waiting until `deadline` (< 0: for ever). 0; -1 EOF, error
 * or no descriptor with the byte; -2 the deadline passed. */
int tf_runner_fd_recv(int sock, double deadline, int *fd);

/* Seconds since the epoch (a result's timestamp). */
static inline double tf_runner_unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* splitmix64's generator (schema/hash.h's finaliser): the inputs' data and the canary. */
static inline uint64_t tf_runner_splitmix64(uint64_t *state)
{
    return tf_mix64(*state += UINT64_C(0x9E3779B97F4A7C15));
}

/* ---- the runner's state (runner_child.c) ---- */

/* Bytes of canary before and after every buffer a variant sees (a multiple
 * of 256, so the buffer keeps the allocation's alignment on every device). */
#define RUNNER_GUARD_BYTES 4096

union runner_scalar {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
};

struct runner_buffer {
    int64_t count;
    size_t bytes;
    void *init;      /* what the device buffer starts with (inputs: data; outputs: poison or
                        init); sealed: read-only once filled, no variant can change it */
    void *expected;  /* outputs: the reference's result, read-only: the current expected
                        set's mapping (struct expected_set owns it) */
    void *got;       /* outputs: downloaded after the verified launch */
    int got_pinned;  /* got came from the backend's host_alloc */
    void *dev_base;  /* the allocation: RUNNER_GUARD_BYTES of canary, dev, the same again */
    void *dev;       /* what the variant gets: dev_base + RUNNER_GUARD_BYTES, `bytes` long */
    void *dev_init;  /* a device-side copy of `init`, where the backend can copy (restores) */
    void *dev_snap;  /* outputs: the verified launch's result, copied on the device so the
                        download overlaps the samples (which overwrite dev) */
    void *dev_expected;          /* outputs: the expected outputs on the device, where the
                                    device compares (NULL: the host does); only beside a
                                    dev_snap, which the host compares when it decides */
    uint64_t dev_expected_set;   /* the id of the set last uploaded into dev_expected
                                    (0: none, or found changed); the checksum says
                                    whether the device still holds it */
};

/* The expected outputs for one key (runner_child.c, "the reference's outputs"):
 * kernel, problem, buffer sizes and the values of reference.depends_on. */
struct expected_set {
    char *key;
    void **maps;     /* per argument: the outputs' read-only mapping (outputs only), or NULL */
    size_t *bytes;   /* per argument: its length in bytes */
    size_t total;    /* bytes of every output */
    uint64_t *sums;  /* per argument: tf_verify_checksum of its mapping, for the device
                        comparison; NULL until it first needs them */
    uint64_t id;     /* unique in the runner (never 0): what a device copy is of */
    int fd;          /* a memfd the worker offered, not mapped yet (-1: mapped) */
    uint64_t used;   /* when last selected (the child's counter): the least recent goes first */
};

/* At most this many expected sets, and this many bytes of them besides the one
 * in use, are kept by a runner and by its worker: past that the least recently
 * used are dropped and computed again if needed. */
#define RUNNER_EXPECTED_MAX_SETS 16
#define RUNNER_EXPECTED_MAX_BYTES ((size_t)1 << 30)
/* A worker keeps the sets of several problems (runner.c): at most this many
 * sets, and this many bytes of them besides the newest. While a runner maps
 * them (it keeps those problems set up) they cost no memory of their own. */
#define RUNNER_WORKER_EXPECTED_MAX (4 * RUNNER_EXPECTED_MAX_SETS)
#define RUNNER_WORKER_EXPECTED_BYTES ((size_t)2 << 30)

/* What a variant is given: its own copy of every argument slot (scalar
 * values, buffer pointers) and of the array of pointers to them, filled
 * again before every launch from scalars/bufs, which it never sees: a
 * variant that writes through args (args[i] = ..., *(T **)args[i] += 1,
 * a scalar decremented in place) changes its own launch, never the
 * runner's view of its buffers or a later launch. */
union launch_slot {
    union runner_scalar s;
    void *p;
};

/* One (kernel, problem) set up: its buffers, their images and expected
 * outputs. The runner measures the current one (runner_child.cur) and keeps
 * a few others set up (runner_child.kept), so that a worker moving between
 * problems does not build their buffers and run their references again. */
struct runner_problem {
    int ready;
    uint32_t kernel, problem;
    const struct tf_kernel *k;
    char *reference;
    int sizes_vary;               /* a size expression reads a parameter */
    struct runner_buffer *bufs;   /* nargs, scalars unused */
    union runner_scalar *scalars; /* nargs */
    void **args;                  /* nargs: &scalars[i] or &bufs[i].dev */
    struct tf_value *slots;
    struct expected_set *sets;    /* the problem's expected outputs */
    int nsets;
    int current_set;              /* the set bufs[].expected are from (-1: none) */
    unsigned char *guard_pinned;  /* page-locked room for every buffer's two guard
                                     regions (guard check), where downloads queue; or NULL */
    void **largs;                 /* nargs: the variant's copy (union launch_slot) */
    union launch_slot *lslots;
    uint64_t used;                /* kept: when last current (the child's set_clock) */
};

struct runner_child {
    const struct tf_backend *be;
    struct tf_backend_ctx *ctx;
    struct tf_device dev;
    struct tf_bundle *bundle;
    struct tf_job *job;
    struct runner_problem cur;    /* the current (kernel, problem) */
    struct runner_problem *kept;  /* others still set up, within RUNNER_KEPT_* */
    int nkept;
    int downloads_queued;    /* download_async queued, download_wait still due */
    int compared_on_device;  /* this configuration's outputs went to compare_queue */
    int damaged;             /* a variant wrote outside its buffers: end after replying */
    int cwd_fd;              /* the runner's folder, restored after every variant (-1: none) */
    uint64_t set_clock;         /* counts selections (expected_set.used) */
    uint64_t set_ids;           /* the last expected_set.id given */
    int *fresh_fds;             /* sealed memfds of sets computed here, for the worker: */
    char **fresh_keys;          /* sent after the next answer (see "the reference's outputs") */
    int nfresh;
    int notify_out;             /* during a MEASURE: where to say that the reference runs
                                   (RUNNER_ANSWER_REFERENCE), once; -1 otherwise */
    void **loaded_references;   /* every reference loaded: never unloaded (runner_child.c) */
    int nloaded_references;
};

/* Problems a runner keeps set up besides the current one, at most: this many,
 * and their buffers, images and expected outputs within 1/RUNNER_KEPT_*_SHARE
 * of the device's memory and of the host's (a quarter, a sixteenth: bounds,
 * not targets; the least recently used goes first; the host backend's
 * buffers count against the host's). */
#define RUNNER_KEPT_MAX 8
#define RUNNER_KEPT_DEVICE_SHARE 4
#define RUNNER_KEPT_HOST_SHARE 16

/* MEASURE one configuration of the current problem into `res` (runner_child.c;
 * tf_runner_guarded_measure calls it with the guard pages armed). */
void tf_runner_child_measure(struct runner_child *c, uint32_t kernel, uint32_t problem,
                             uint32_t phase, uint64_t config, const char *binary,
                             struct tf_result *res);

/* ---- guards and sealed memory (runner_guard.c) ---- */

/* Private anonymous pages for `bytes` (at least one page), writable until
 * sealed; NULL if there is no memory for them. */
void *tf_runner_sealed_alloc(size_t bytes);
/* Make the `bytes` at `p` (from tf_runner_sealed_alloc; NULL: nothing) read-only. */
void tf_runner_sealed_seal(void *p, size_t bytes);
/* Unmap the `bytes` at `p`, a sealed or any other mapping of that length;
 * accepts NULL. */
void tf_runner_sealed_free(void *p, size_t bytes);
/* Make the canary and install the fault handler for `c`'s buffers, on the
 * calling thread (the only one a fault can be unwound to). */
void tf_runner_guard_install(struct runner_child *c);
/* The handler no longer looks at any child's buffers (the runner ends). */
void tf_runner_guard_forget(void);
/* Fill the guard regions of `b` with the canary; 0 or -1 + err. */
int tf_runner_guard_fill(const struct runner_child *c, const struct runner_buffer *b,
                         struct tf_error *err);
/* Check every buffer's guard regions after the variant ran: TF_STATUS_OK, or
 * runtime_error naming the buffer (c->damaged set). */
int tf_runner_guard_check(struct runner_child *c, struct tf_error *err);
/* Run the reference `ref_fn` (loaded by the host backend) on `args`, on the
 * runner's thread: TF_STATUS_OK, or launch_error + err naming the reference
 * where it faulted (SIGSEGV, SIGBUS; c->damaged set: the runner ends after
 * replying), instead of the runner dying and the configuration it was set up
 * for being recorded `crashed`. */
int tf_runner_guarded_reference(struct runner_child *c, void *ref_fn, void **args,
                                struct tf_error *err);
/* tf_runner_child_measure with the guard pages armed: a fault in one on the
 * runner's thread is the variant's runtime_error naming the buffer. */
void tf_runner_guarded_measure(struct runner_child *c, uint32_t kernel, uint32_t problem,
                               uint32_t phase, uint64_t config, const char *binary,
                               struct tf_result *res);

/* ---- the shield, strays and process state (runner_shield.c) ---- */

/* Close every descriptor but 0-2 and the channel (`in`, `out`). */
void tf_runner_close_inherited(int in, int out);
/* Fork the shield off, first thing (see runner_shield.c): 0 in the runner
 * (the shield never returns), -1 if it cannot start. */
int tf_runner_shield_start(int in, int out);
/* Send the shield a token (continuing it first): 1 sent; 0 the shield is
 * gone; -1 cannot tell. */
int tf_runner_shield_ping(void);
/* Wait for the echo of the token tf_runner_shield_ping sent (`pinged`: what it
 * returned): 1 the shield is there; 0 gone; -1 cannot tell. */
int tf_runner_shield_pong(int pinged);
/* After a pong of 1: set the parent-death signal (SIGKILL) again if a variant
 * cleared it; 1 if it had to. */
int tf_runner_shield_rearm(void);
/* End every process a variant left behind (the runner is their subreaper). */
void tf_runner_end_strays(void);

/* The process state a variant could change and leave behind for the next
 * ones; taken before the first variant after a SETUP, compared after each. */
struct runner_proc_state {
    struct rlimit lim[RLIM_NLIMITS];
    struct sigaction act[NSIG];
    sigset_t mask;
    fenv_t fenv;
};

/* Read the process state into `ps`. */
void tf_runner_proc_state_take(struct runner_proc_state *ps);
/* Put back what a variant changed of `ps`; returns what it found changed (a
 * name, "" if nothing: then the runner can go on). */
const char *tf_runner_proc_state_restore(const struct runner_proc_state *ps);

#endif
