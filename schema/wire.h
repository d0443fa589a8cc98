/* wire.h - the versioned binary messages between coordinator and workers.
 *
 * Every message is a 16-byte header (magic "TFW1", version, type, payload
 * length, little-endian) and a payload of fixed-width little-endian fields and
 * length-prefixed strings. Decoders check every length against the buffer, so
 * a truncated or foreign message is an error, never an overread. Messages:
 *   HELLO    worker -> coordinator  its device descriptor, the backends it can compile for
 *   JOB      coordinator -> workers the job bundle (every input file)
 *   REQUEST  worker -> coordinator  ready for more work
 *   WORK     coordinator -> worker  a slice [lo, hi) or an index list, one kernel+problem
 *   RESULTS  worker -> coordinator  a batch of results
 *   STOP     coordinator -> worker  no more work; exit
 *   COMPILE  coordinator -> worker  a slice to compile ahead, into the shared cache, for
 *                                   the device class described (a compile rank's work)
 * Transport is MPI point-to-point with one tag; tf_wire_send/recv wrap it. */
#ifndef TF_WIRE_H
#define TF_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "bundle.h"
#include "device.h"
#include "error.h"
#include "result.h"

#define TF_WIRE_MAGIC 0x31574654u /* "TFW1" little-endian */
#define TF_WIRE_VERSION 4 /* 3: HELLO/COMPILE devices carry tunefarm version, clocks, power;
                             RESULTS noisy, energy_status; 4: RESULTS the compiler's warnings */
#define TF_WIRE_HEADER 16
#define TF_WIRE_TAG 7
/* The run is over: rank 0 to every other rank, no payload, once its archive
 * is written and before it finalizes (main.c finalize_bounded). A rank that
 * waits for every rank to arrive stops waiting without limit then: a rank
 * that died mid-run (its work taken over) would otherwise hold it forever. */
#define TF_WIRE_TAG_DONE 8

enum tf_msg_type {
    TF_MSG_HELLO = 1,
    TF_MSG_JOB = 2,
    TF_MSG_REQUEST = 3,
    TF_MSG_WORK = 4,
    TF_MSG_RESULTS = 5,
    TF_MSG_STOP = 6,
    TF_MSG_COMPILE = 7
};

/* A growable byte buffer with a read cursor. */
struct tf_buf {
    unsigned char *data;
    size_t len, cap, pos;
};

struct tf_work {
    uint32_t kernel;   /* job kernel index */
    uint32_t problem;  /* kernel problem index */
    uint32_t phase;    /* 0 only pass, 1 screening (job->screen), 2 strict re-measure */
    uint32_t nlist;    /* 0: the range [lo, hi) (valid configurations only); else the list */
    uint64_t lo, hi;
    uint64_t *list;    /* nlist explicit indices (owned by the message) */
};

/* Make room for `extra` more bytes. */
void tf_buf_reserve(struct tf_buf *b, size_t extra);
/* Free the buffer's memory and zero it. */
void tf_buf_free(struct tf_buf *b);
/* Low-level encoders/decoders, exposed for the runner pipe protocol. Getters
 * return -1 when the buffer runs out. */
void tf_buf_put_u8(struct tf_buf *b, uint8_t v);
void tf_buf_put_u32(struct tf_buf *b, uint32_t v);
void tf_buf_put_u64(struct tf_buf *b, uint64_t v);
void tf_buf_put_f64(struct tf_buf *b, double v);
void tf_buf_put_bytes(struct tf_buf *b, const void *p, size_t n);
void tf_buf_put_str(struct tf_buf *b, const char *s); /* u32 length + bytes */
int tf_buf_get_u8(struct tf_buf *b, uint8_t *v);
int tf_buf_get_u32(struct tf_buf *b, uint32_t *v);
int tf_buf_get_u64(struct tf_buf *b, uint64_t *v);
int tf_buf_get_f64(struct tf_buf *b, double *v);
int tf_buf_get_bytes(struct tf_buf *b, void *p, size_t n);
/* Copy a string into `out` of capacity `cap` (error if longer). */
int tf_buf_get_str(struct tf_buf *b, char *out, size_t cap);
/* A newly allocated copy of the next string (NULL on error). */
char *tf_buf_get_strdup(struct tf_buf *b);
/* One result in the wire's encoding (schema/wire.md, RESULTS). */
void tf_buf_put_result(struct tf_buf *b, const struct tf_result *r);
/* The next result of the current encoding: 0, or -1 if cut short or out of range. */
int tf_buf_get_result(struct tf_buf *b, struct tf_result *r);
/* The next result in wire version 3's encoding (no compiler warnings: -1 and
 * ""), for journal records written before 4. */
int tf_buf_get_result_v3(struct tf_buf *b, struct tf_result *r);
/* The next result in wire version 2's encoding (no noisy, no energy_status:
 * read as 0 and unknown / not_run; no warnings), for journal records written
 * before 3. */
int tf_buf_get_result_v2(struct tf_buf *b, struct tf_result *r);
void tf_buf_put_device(struct tf_buf *b, const struct tf_device *d);
int tf_buf_get_device(struct tf_buf *b, struct tf_device *d);

/* Encoders: reset `b` and write a complete message (header + payload). */
/* `compilers`: the backends this rank can compile for without a device, comma
 * separated ("host,cuda"); a device-less rank with some is a compile rank. */
void tf_wire_hello(struct tf_buf *b, const struct tf_device *dev, const char *compilers);
void tf_wire_job(struct tf_buf *b, const struct tf_bundle *bundle);
void tf_wire_request(struct tf_buf *b);
void tf_wire_work(struct tf_buf *b, const struct tf_work *w);
void tf_wire_results(struct tf_buf *b, const struct tf_result *r, uint32_t n);
void tf_wire_stop(struct tf_buf *b);
/* Compile `w`'s configurations for a device like `dev` (its class's representative). */
void tf_wire_compile(struct tf_buf *b, const struct tf_device *dev, const struct tf_work *w);

/* Check the header of a received message in `b` (pos is left after it): magic,
 * version, declared length == actual. Sets *type. -1 + err if malformed. */
int tf_wire_open(struct tf_buf *b, enum tf_msg_type *type, struct tf_error *err);
/* Payload decoders, after tf_wire_open. Each checks it consumed the payload exactly. */
int tf_wire_get_hello(struct tf_buf *b, struct tf_device *dev, char *compilers, size_t cap,
                      struct tf_error *err);
/* A new sealed bundle from a JOB payload. NULL + err if malformed. */
struct tf_bundle *tf_wire_get_job(struct tf_buf *b, struct tf_error *err);
int tf_wire_get_work(struct tf_buf *b, struct tf_work *w, struct tf_error *err);
/* A COMPILE payload: the target device, then the slice as in WORK (list allocated). */
int tf_wire_get_compile(struct tf_buf *b, struct tf_device *dev, struct tf_work *w,
                        struct tf_error *err);
/* Results into a new array *out (caller frees) of *n records. */
int tf_wire_get_results(struct tf_buf *b, struct tf_result **out, uint32_t *n,
                        struct tf_error *err);

/* MPI transport on MPI_COMM_WORLD with TF_WIRE_TAG. */
int tf_wire_send(int dest, const struct tf_buf *b, struct tf_error *err);
/* Non-blocking probe: returns 1 and fills `b` (reset) + *source if a message is
 * waiting from `source_or_any` (-1 = any), 0 if none, -1 on error. */
int tf_wire_poll(int source_or_any, struct tf_buf *b, int *source, struct tf_error *err);
/* Blocking receive that sleeps between probes instead of spinning a core. */
int tf_wire_recv(int source_or_any, struct tf_buf *b, int *source, struct tf_error *err);
/* A non-blocking send with its own copy of the bytes: the coordinator never
 * blocks sending to a worker that is itself blocked sending RESULTS to it. */
struct tf_wire_outbox {
    struct tf_buf buf;
    int active;
    unsigned char request[64]; /* an MPI_Request, kept opaque to MPI-free code */
};

/* Send `b` to `dest` without waiting; the previous send of this outbox must
 * have been received (it is waited for first). */
int tf_wire_post(struct tf_wire_outbox *o, int dest, const struct tf_buf *b,
                 struct tf_error *err);
/* 1 if the outbox's send, if any, has completed (the outbox is then free), 0
 * if it is still waiting for its receiver. Never blocks. */
int tf_wire_outbox_test(struct tf_wire_outbox *o);
/* Wait for the outbox's send, if any, and free it. */
int tf_wire_outbox_close(struct tf_wire_outbox *o, struct tf_error *err);
/* Give up the outbox's send, if any, without waiting (its receiver is gone: a
 * rank that died mid-run). The request is freed; the buffer is left to the
 * end of the process, since MPI may still read it. */
void tf_wire_outbox_abandon(struct tf_wire_outbox *o);
/* Broadcast `b` from rank 0 to all ranks (receivers get a reset `b`). */
int tf_wire_bcast(struct tf_buf *b, struct tf_error *err);

#endif
