/* wire_mpi.c - the MPI transport of wire messages: point-to-point on
 * MPI_COMM_WORLD with one tag, a probe-then-receive for variable sizes, and a
 * receive that naps between probes so an idle coordinator or worker does not
 * spin a core that a measurement needs. Kept apart from wire.c so that the
 * encoders link without MPI (runner, unit tests). */
#include "wire.h"

#include <mpi.h>
#include <string.h>
#include <time.h>

/* A JOB of every kernel source stays far below this; a bigger one is a bug. */
#define WIRE_MAX_MESSAGE (1u << 30)

int tf_wire_send(int dest, const struct tf_buf *b, struct tf_error *err)
{
    if (b->len > WIRE_MAX_MESSAGE)
        return tf_error_set(err, TF_ERR_MPI, "message of %zu bytes is too large", b->len);
    if (MPI_Send(b->data, (int)b->len, MPI_BYTE, dest, TF_WIRE_TAG, MPI_COMM_WORLD) != MPI_SUCCESS)
        return tf_error_set(err, TF_ERR_MPI, "MPI_Send to rank %d failed", dest);
    return 0;
}

int tf_wire_poll(int source_or_any, struct tf_buf *b, int *source, struct tf_error *err)
{
    int flag = 0, count = 0;
    MPI_Status st;
    int src = source_or_any < 0 ? MPI_ANY_SOURCE : source_or_any;
    if (MPI_Iprobe(src, TF_WIRE_TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
        return tf_error_set(err, TF_ERR_MPI, "MPI_Iprobe failed");
    if (!flag)
        return 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    b->len = b->pos = 0;
    tf_buf_reserve(b, (size_t)count);
    if (MPI_Recv(b->data, count, MPI_BYTE, st.MPI_SOURCE, TF_WIRE_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return tf_error_set(err, TF_ERR_MPI, "MPI_Recv from rank %d failed", st.MPI_SOURCE);
    b->len = (size_t)count;
    if (source)
        *source = st.MPI_SOURCE;
    return 1;
}

int tf_wire_recv(int source_or_any, struct tf_buf *b, int *source, struct tf_error *err)
{
    /* Open MPI's blocking receive spins a core; a tuning farm measures on those
     * cores, so poll and sleep instead (50 us to 2 ms, backing off). */
    long nap = 50000;
    for (;;) {
        int rc = tf_wire_poll(source_or_any, b, source, err);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
        struct timespec ts = {0, nap};
        nanosleep(&ts, NULL);
        if (nap < 2000000)
            nap *= 2;
    }
}

int tf_wire_bcast(struct tf_buf *b, struct tf_error *err)
{
    int rank;
    unsigned long long n = b->len;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return tf_error_set(err, TF_ERR_MPI, "MPI_Bcast of the job size failed");
    if (n > WIRE_MAX_MESSAGE)
        return tf_error_set(err, TF_ERR_MPI, "job message of %llu bytes is too large", n);
    if (rank != 0) {
        b->len = b->pos = 0;
        tf_buf_reserve(b, (size_t)n);
        b->len = (size_t)n;
    }
    if (MPI_Bcast(b->data, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return tf_error_set(err, TF_ERR_MPI, "MPI_Bcast of the job failed");
    b->pos = 0;
    return 0;
}

_Static_assert(sizeof(MPI_Request) <= sizeof(((struct tf_wire_outbox *)0)->request),
               "MPI_Request does not fit struct tf_wire_outbox");

int tf_wire_post(struct tf_wire_outbox *o, int dest, const struct tf_buf *b,
                 struct tf_error *err)
{
    if (tf_wire_outbox_close(o, err))
        return -1;
    if (b->len > WIRE_MAX_MESSAGE)
        return tf_error_set(err, TF_ERR_MPI, "message of %zu bytes is too large", b->len);
    o->buf.len = o->buf.pos = 0;
    tf_buf_put_bytes(&o->buf, b->data, b->len);
    MPI_Request req;
    if (MPI_Isend(o->buf.data, (int)o->buf.len, MPI_BYTE, dest, TF_WIRE_TAG, MPI_COMM_WORLD,
                  &req) != MPI_SUCCESS)
        return tf_error_set(err, TF_ERR_MPI, "MPI_Isend to rank %d failed", dest);
    memcpy(o->request, &req, sizeof req);
    o->active = 1;
    return 0;
}

int tf_wire_outbox_test(struct tf_wire_outbox *o)
{
    if (!o->active)
        return 1;
    MPI_Request req;
    memcpy(&req, o->request, sizeof req);
    int done = 0;
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return 0;
    if (done)
        o->active = 0;
    else
        memcpy(o->request, &req, sizeof req);
    return done;
}

void tf_wire_outbox_abandon(struct tf_wire_outbox *o)
{
    if (!o->active)
        return;
    MPI_Request req;
    memcpy(&req, o->request, sizeof req);
    o->active = 0;
    MPI_Request_free(&req);
}

int tf_wire_outbox_close(struct tf_wire_outbox *o, struct tf_error *err)
{
    if (!o->active)
        return 0;
    MPI_Request req;
    memcpy(&req, o->request, sizeof req);
    o->active = 0;
    if (MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return tf_error_set(err, TF_ERR_MPI, "a send did not complete");
    return 0;
}
