/* fuzz_wire.c - libFuzzer target: the wire decoders (schema/wire.h) on arbitrary bytes.
 *
 * The input is a received message. It goes through tf_wire_open and, if the
 * header is right, the decoder of its type, exactly as the coordinator and
 * workers do; a decoded JOB bundle is then loaded the way a worker loads it
 * (tf_job_load of the bundle's first file). Independently of the header, every
 * payload decoder, and the runner pipe's record decoders (tf_buf_get_result,
 * tf_buf_get_device), also run on the bytes after the first 16, so each
 * decoder sees arbitrary payloads even when the fuzzer has not yet found a
 * valid header. A decoded message is re-encoded and must decode to the same
 * fields (round trip). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "schema/job.h"
#include "schema/wire.h"

/* What a worker does with a JOB message. */
static void load_job_bundle(struct tf_buf *b)
{
    struct tf_error err = {0};
    struct tf_bundle *bundle = tf_wire_get_job(b, &err);
    if (bundle == NULL)
        return;
    /* worker/worker.c and worker/runner.c load files[0]: the decoder must
     * never hand them a bundle without one. */
    if (bundle->count < 1)
        FUZZ_ABORT();
    struct tf_job *job = tf_job_load(bundle->files[0].path, bundle, &err);
    if (job != NULL) {
        struct tf_buf again = {0};
        tf_wire_job(&again, bundle);
        enum tf_msg_type t;
        struct tf_bundle *copy = NULL;
        if (tf_wire_open(&again, &t, &err) != 0 || t != TF_MSG_JOB ||
            (copy = tf_wire_get_job(&again, &err)) == NULL || copy->count != bundle->count)
            FUZZ_ABORT();
        tf_bundle_destroy(copy);
        tf_buf_free(&again);
    }
    tf_job_destroy(job);
    tf_bundle_destroy(bundle);
}

static void decode_as(struct tf_buf *b, enum tf_msg_type type, int check_roundtrip)
{
    struct tf_error err = {0};
    struct tf_device dev;
    struct tf_work w;
    char compilers[256];
    struct tf_buf again = {0};
    enum tf_msg_type t;
    switch (type) {
    case TF_MSG_HELLO:
        if (tf_wire_get_hello(b, &dev, compilers, sizeof compilers, &err) == 0 && check_roundtrip) {
            struct tf_device d2;
            char c2[256];
            tf_wire_hello(&again, &dev, compilers);
            if (tf_wire_open(&again, &t, &err) != 0 ||
                tf_wire_get_hello(&again, &d2, c2, sizeof c2, &err) != 0 ||
                strcmp(c2, compilers) != 0 || strcmp(d2.name, dev.name) != 0 ||
                memcmp(d2.props, dev.props, sizeof d2.props) != 0)
                FUZZ_ABORT();
        }
        break;
    case TF_MSG_JOB:
        load_job_bundle(b);
        break;
    case TF_MSG_WORK:
        if (tf_wire_get_work(b, &w, &err) == 0) {
            if (check_roundtrip) {
                struct tf_work w2;
                tf_wire_work(&again, &w);
                if (tf_wire_open(&again, &t, &err) != 0 || tf_wire_get_work(&again, &w2, &err) != 0 ||
                    w2.nlist != w.nlist || w2.lo != w.lo || w2.hi != w.hi ||
                    (w.nlist && memcmp(w.list, w2.list, w.nlist * sizeof *w.list) != 0))
                    FUZZ_ABORT();
                free(w2.list);
            }
            free(w.list);
        }
        break;
    case TF_MSG_COMPILE:
        if (tf_wire_get_compile(b, &dev, &w, &err) == 0) {
            if (check_roundtrip) {
                struct tf_work w2;
                struct tf_device d2;
                tf_wire_compile(&again, &dev, &w);
                if (tf_wire_open(&again, &t, &err) != 0 ||
                    tf_wire_get_compile(&again, &d2, &w2, &err) != 0 || w2.nlist != w.nlist ||
                    strcmp(d2.arch, dev.arch) != 0)
                    FUZZ_ABORT();
                free(w2.list);
            }
            free(w.list);
        }
        break;
    case TF_MSG_RESULTS: {
        struct tf_result *r = NULL;
        uint32_t n = 0;
        if (tf_wire_get_results(b, &r, &n, &err) == 0 && check_roundtrip) {
            struct tf_result *r2 = NULL;
            uint32_t n2 = 0;
            tf_wire_results(&again, r, n);
            if (tf_wire_open(&again, &t, &err) != 0 ||
                tf_wire_get_results(&again, &r2, &n2, &err) != 0 || n2 != n)
                FUZZ_ABORT();
            for (uint32_t i = 0; i < n; i++)
                if (r2[i].config != r[i].config || r2[i].status != r[i].status ||
                    r2[i].noisy != r[i].noisy || r2[i].energy_status != r[i].energy_status ||
                    strcmp(r2[i].message, r[i].message) != 0)
                    FUZZ_ABORT();
            free(r2);
        }
        free(r);
        break;
    }
    case TF_MSG_REQUEST:
    case TF_MSG_STOP:
        break; /* no payload: tf_wire_open checked the length */
    }
    tf_buf_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tf_buf b = {0};
    tf_buf_reserve(&b, size + 1);
    if (size)
        memcpy(b.data, data, size);
    b.len = size;
    struct tf_error err = {0};
    enum tf_msg_type type;
    if (tf_wire_open(&b, &type, &err) == 0)
        decode_as(&b, type, 1);
    else if (err.message[0] == '\0')
        FUZZ_ABORT();
    if (size > TF_WIRE_HEADER) {
        static const enum tf_msg_type all[] = {TF_MSG_HELLO, TF_MSG_JOB, TF_MSG_WORK,
                                               TF_MSG_COMPILE, TF_MSG_RESULTS};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
            b.pos = TF_WIRE_HEADER;
            decode_as(&b, all[i], 0);
        }
        /* The runner pipe protocol reads bare records. */
        struct tf_result r;
        struct tf_device d;
        b.pos = TF_WIRE_HEADER;
        while (tf_buf_get_result(&b, &r) == 0)
            ;
        b.pos = TF_WIRE_HEADER;
        while (tf_buf_get_device(&b, &d) == 0)
            ;
        b.pos = TF_WIRE_HEADER;
        char s[64];
        while (tf_buf_get_str(&b, s, sizeof s) == 0)
            ;
        b.pos = TF_WIRE_HEADER;
        char *p;
        while ((p = tf_buf_get_strdup(&b)) != NULL)
            free(p);
    }
    tf_buf_free(&b);
    return 0;
}
