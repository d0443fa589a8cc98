/* wire.c - encoding, decoding and MPI transport of the coordinator/worker messages.
 *
 * Encoding is explicit: fixed-width little-endian integers, IEEE doubles by bit
 * pattern, strings as u32 length + bytes, never a struct memcpy, so ranks built
 * by different compilers agree and a foreign peer is detected by magic and
 * version. Every getter checks the remaining length first: a truncated or
 * hostile message yields an error, never a read past the buffer. The same
 * tf_buf helpers frame the worker <-> runner pipe protocol. */
#include "wire.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void tf_buf_reserve(struct tf_buf *b, size_t extra)
{
    if (b->len + extra <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra)
        cap *= 2;
    b->data = tf_xrealloc(b->data, cap);
    b->cap = cap;
}

void tf_buf_free(struct tf_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void tf_buf_put_bytes(struct tf_buf *b, const void *p, size_t n)
{
    tf_buf_reserve(b, n);
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

void tf_buf_put_u8(struct tf_buf *b, uint8_t v) { tf_buf_put_bytes(b, &v, 1); }

void tf_buf_put_u32(struct tf_buf *b, uint32_t v)
{
    unsigned char p[4];
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
    tf_buf_put_bytes(b, p, 4);
}

void tf_buf_put_u64(struct tf_buf *b, uint64_t v)
{
    unsigned char p[8];
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
    tf_buf_put_bytes(b, p, 8);
}

void tf_buf_put_f64(struct tf_buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    tf_buf_put_u64(b, u);
}

void tf_buf_put_str(struct tf_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    tf_buf_put_u32(b, (uint32_t)n);
    tf_buf_put_bytes(b, s, n);
}

int tf_buf_get_bytes(struct tf_buf *b, void *p, size_t n)
{
    if (b->pos > b->len || b->len - b->pos < n)
        return -1;
    if (n)
        memcpy(p, b->data + b->pos, n);
    b->pos += n;
    return 0;
}

int tf_buf_get_u8(struct tf_buf *b, uint8_t *v) { return tf_buf_get_bytes(b, v, 1); }

int tf_buf_get_u32(struct tf_buf *b, uint32_t *v)
{
    unsigned char p[4];
    if (tf_buf_get_bytes(b, p, 4))
        return -1;
    *v = 0;
    for (int i = 0; i < 4; i++)
        *v |= (uint32_t)p[i] << (8 * i);
    return 0;
}

int tf_buf_get_u64(struct tf_buf *b, uint64_t *v)
{
    unsigned char p[8];
    if (tf_buf_get_bytes(b, p, 8))
        return -1;
    *v = 0;
    for (int i = 0; i < 8; i++)
        *v |= (uint64_t)p[i] << (8 * i);
    return 0;
}

int tf_buf_get_f64(struct tf_buf *b, double *v)
{
    uint64_t u;
    if (tf_buf_get_u64(b, &u))
        return -1;
    memcpy(v, &u, 8);
    return 0;
}

int tf_buf_get_str(struct tf_buf *b, char *out, size_t cap)
{
    uint32_t n;
    if (tf_buf_get_u32(b, &n) || n >= cap || tf_buf_get_bytes(b, out, n))
        return -1;
    out[n] = '\0';
    return 0;
}

char *tf_buf_get_strdup(struct tf_buf *b)
{
    uint32_t n;
    if (tf_buf_get_u32(b, &n) || b->len - b->pos < n)
        return NULL;
    char *s = tf_xmalloc((size_t)n + 1);
    tf_buf_get_bytes(b, s, n);
    s[n] = '\0';
    return s;
}

void tf_buf_put_result(struct tf_buf *b, const struct tf_result *r)
{
    tf_buf_put_u32(b, r->kernel);
    tf_buf_put_u32(b, r->problem);
    tf_buf_put_u64(b, r->config);
    tf_buf_put_u8(b, r->status);
    tf_buf_put_u8(b, r->flushed_l2);
    tf_buf_put_u8(b, r->throttled);
    tf_buf_put_u8(b, r->phase);
    tf_buf_put_u32(b, r->samples);
    tf_buf_put_f64(b, r->time_median);
    tf_buf_put_f64(b, r->time_min);
    tf_buf_put_f64(b, r->time_mean);
    tf_buf_put_f64(b, r->time_rsd);
    tf_buf_put_f64(b, r->compile_time);
    tf_buf_put_f64(b, r->device_time);
    tf_buf_put_u32(b, (uint32_t)r->registers);
    tf_buf_put_u64(b, (uint64_t)r->shared_bytes);
    tf_buf_put_u64(b, (uint64_t)r->spill_bytes);
    tf_buf_put_f64(b, r->sm_clock_mhz);
    tf_buf_put_f64(b, r->power_w);
    tf_buf_put_f64(b, r->temperature_c);
    tf_buf_put_f64(b, r->energy_j);
    tf_buf_put_f64(b, r->timestamp);
    for (int i = 0; i < TF_MAX_METRICS; i++)
        tf_buf_put_f64(b, r->metrics[i]);
    tf_buf_put_str(b, r->message);
    /* Wire version 3 appended these, after the message: a journal record of
     * version 2 ends before them (tf_buf_get_result_v2). */
    tf_buf_put_u8(b, r->noisy);
    tf_buf_put_u8(b, r->energy_status);
    /* Version 4 appended the compiler's warnings (tf_buf_get_result_v3 reads
     * a record that ends before them). */
    tf_buf_put_u32(b, (uint32_t)r->warnings);
    tf_buf_put_str(b, r->first_warning);
}

/* The fields of wire version 2, which every later version starts with. */
static int get_result_v2(struct tf_buf *b, struct tf_result *r)
{
    uint32_t u32;
    uint64_t u64;
    double clock, power, temp;
    memset(r, 0, sizeof *r);
    if (tf_buf_get_u32(b, &r->kernel) || tf_buf_get_u32(b, &r->problem) ||
        tf_buf_get_u64(b, &r->config) || tf_buf_get_u8(b, &r->status) ||
        tf_buf_get_u8(b, &r->flushed_l2) || tf_buf_get_u8(b, &r->throttled) ||
        tf_buf_get_u8(b, &r->phase) || tf_buf_get_u32(b, &r->samples) || tf_buf_get_f64(b, &r->time_median) ||
        tf_buf_get_f64(b, &r->time_min) || tf_buf_get_f64(b, &r->time_mean) ||
        tf_buf_get_f64(b, &r->time_rsd) || tf_buf_get_f64(b, &r->compile_time) ||
        tf_buf_get_f64(b, &r->device_time) || tf_buf_get_u32(b, &u32))
        return -1;
    r->registers = (int32_t)u32;
    if (tf_buf_get_u64(b, &u64))
        return -1;
    r->shared_bytes = (int64_t)u64;
    if (tf_buf_get_u64(b, &u64))
        return -1;
    r->spill_bytes = (int64_t)u64;
    if (tf_buf_get_f64(b, &clock) || tf_buf_get_f64(b, &power) || tf_buf_get_f64(b, &temp) ||
        tf_buf_get_f64(b, &r->energy_j) || tf_buf_get_f64(b, &r->timestamp))
        return -1;
    r->sm_clock_mhz = (float)clock;
    r->power_w = (float)power;
    r->temperature_c = (float)temp;
    for (int i = 0; i < TF_MAX_METRICS; i++)
        if (tf_buf_get_f64(b, &r->metrics[i]))
            return -1;
    if (tf_buf_get_str(b, r->message, sizeof r->message))
        return -1;
    r->warnings = -1; /* unknown before version 4 */
    return r->status < TF_STATUS_COUNT && r->phase <= 2 ? 0 : -1;
}

int tf_buf_get_result_v3(struct tf_buf *b, struct tf_result *r)
{
    if (get_result_v2(b, r) || tf_buf_get_u8(b, &r->noisy) || tf_buf_get_u8(b, &r->energy_status))
        return -1;
    return r->noisy <= 1 && r->energy_status < TF_ENERGY_COUNT ? 0 : -1;
}

int tf_buf_get_result(struct tf_buf *b, struct tf_result *r)
{
    uint32_t warnings;
    if (tf_buf_get_result_v3(b, r) || tf_buf_get_u32(b, &warnings) ||
        tf_buf_get_str(b, r->first_warning, sizeof r->first_warning))
        return -1;
    r->warnings = (int32_t)warnings;
    return 0;
}

int tf_buf_get_result_v2(struct tf_buf *b, struct tf_result *r)
{
    if (get_result_v2(b, r))
        return -1;
    r->noisy = 0;
    r->energy_status = r->status == TF_STATUS_OK ? TF_ENERGY_UNKNOWN : TF_ENERGY_NOT_RUN;
    return 0;
}

void tf_buf_put_device(struct tf_buf *b, const struct tf_device *d)
{
    tf_buf_put_str(b, d->backend);
    tf_buf_put_str(b, d->vendor);
    tf_buf_put_str(b, d->name);
    tf_buf_put_str(b, d->arch);
    tf_buf_put_str(b, d->uuid);
    tf_buf_put_str(b, d->pci_bus);
    tf_buf_put_str(b, d->host);
    tf_buf_put_u64(b, d->memory_bytes);
    tf_buf_put_u32(b, d->compute_units);
    tf_buf_put_str(b, d->driver_version);
    tf_buf_put_str(b, d->runtime_version);
    tf_buf_put_str(b, d->compiler_version);
    tf_buf_put_str(b, d->tunefarm_version);
    tf_buf_put_f64(b, d->clock_mhz);
    tf_buf_put_f64(b, d->memory_clock_mhz);
    tf_buf_put_f64(b, d->power_limit_w);
    tf_buf_put_str(b, d->clock_policy);
    tf_buf_put_u32(b, TF_DEVPROP_COUNT);
    for (int i = 0; i < TF_DEVPROP_COUNT; i++)
        tf_buf_put_u64(b, (uint64_t)d->props[i]);
}

int tf_buf_get_device(struct tf_buf *b, struct tf_device *d)
{
    uint32_t nprops;
    memset(d, 0, sizeof *d);
    if (tf_buf_get_str(b, d->backend, sizeof d->backend) ||
        tf_buf_get_str(b, d->vendor, sizeof d->vendor) ||
        tf_buf_get_str(b, d->name, sizeof d->name) ||
        tf_buf_get_str(b, d->arch, sizeof d->arch) ||
        tf_buf_get_str(b, d->uuid, sizeof d->uuid) ||
        tf_buf_get_str(b, d->pci_bus, sizeof d->pci_bus) ||
        tf_buf_get_str(b, d->host, sizeof d->host) || tf_buf_get_u64(b, &d->memory_bytes) ||
        tf_buf_get_u32(b, &d->compute_units) ||
        tf_buf_get_str(b, d->driver_version, sizeof d->driver_version) ||
        tf_buf_get_str(b, d->runtime_version, sizeof d->runtime_version) ||
        tf_buf_get_str(b, d->compiler_version, sizeof d->compiler_version) ||
        tf_buf_get_str(b, d->tunefarm_version, sizeof d->tunefarm_version) ||
        tf_buf_get_f64(b, &d->clock_mhz) || tf_buf_get_f64(b, &d->memory_clock_mhz) ||
        tf_buf_get_f64(b, &d->power_limit_w) ||
        tf_buf_get_str(b, d->clock_policy, sizeof d->clock_policy) ||
        tf_buf_get_u32(b, &nprops))
        return -1;
    /* A newer peer may know more properties: keep ours, skip the rest. */
    for (uint32_t i = 0; i < nprops; i++) {
        uint64_t v;
        if (tf_buf_get_u64(b, &v))
            return -1;
        if (i < TF_DEVPROP_COUNT)
            d->props[i] = (int64_t)v;
    }
    return 0;
}

/* Start a message: reset and write the header with a placeholder length. */
static void wire_begin(struct tf_buf *b, enum tf_msg_type type)
{
    b->len = b->pos = 0;
    tf_buf_put_u32(b, TF_WIRE_MAGIC);
    tf_buf_put_u32(b, TF_WIRE_VERSION);
    tf_buf_put_u32(b, (uint32_t)type);
    tf_buf_put_u32(b, 0);
}

/* Patch the payload length into the header. */
static void wire_end(struct tf_buf *b)
{
    uint32_t n = (uint32_t)(b->len - TF_WIRE_HEADER);
    for (int i = 0; i < 4; i++)
        b->data[12 + i] = (unsigned char)(n >> (8 * i));
}

void tf_wire_hello(struct tf_buf *b, const struct tf_device *dev, const char *compilers)
{
    wire_begin(b, TF_MSG_HELLO);
    tf_buf_put_device(b, dev);
    tf_buf_put_str(b, compilers ? compilers : "");
    wire_end(b);
}

void tf_wire_job(struct tf_buf *b, const struct tf_bundle *bundle)
{
    wire_begin(b, TF_MSG_JOB);
    tf_buf_put_str(b, bundle->kernel_path);
    tf_buf_put_u32(b, (uint32_t)bundle->count);
    for (int i = 0; i < bundle->count; i++) {
        tf_buf_put_str(b, bundle->files[i].path);
        tf_buf_put_u64(b, bundle->files[i].size);
        tf_buf_put_bytes(b, bundle->files[i].data, bundle->files[i].size);
    }
    wire_end(b);
}

void tf_wire_request(struct tf_buf *b)
{
    wire_begin(b, TF_MSG_REQUEST);
    wire_end(b);
}

static void put_work(struct tf_buf *b, const struct tf_work *w)
{
    tf_buf_put_u32(b, w->kernel);
    tf_buf_put_u32(b, w->problem);
    tf_buf_put_u32(b, w->phase);
    tf_buf_put_u64(b, w->lo);
    tf_buf_put_u64(b, w->hi);
    tf_buf_put_u32(b, w->nlist);
    for (uint32_t i = 0; i < w->nlist; i++)
        tf_buf_put_u64(b, w->list[i]);
}

void tf_wire_work(struct tf_buf *b, const struct tf_work *w)
{
    wire_begin(b, TF_MSG_WORK);
    put_work(b, w);
    wire_end(b);
}

void tf_wire_compile(struct tf_buf *b, const struct tf_device *dev, const struct tf_work *w)
{
    wire_begin(b, TF_MSG_COMPILE);
    tf_buf_put_device(b, dev);
    put_work(b, w);
    wire_end(b);
}

void tf_wire_results(struct tf_buf *b, const struct tf_result *r, uint32_t n)
{
    wire_begin(b, TF_MSG_RESULTS);
    tf_buf_put_u32(b, n);
    for (uint32_t i = 0; i < n; i++)
        tf_buf_put_result(b, &r[i]);
    wire_end(b);
}

void tf_wire_stop(struct tf_buf *b)
{
    wire_begin(b, TF_MSG_STOP);
    wire_end(b);
}

int tf_wire_open(struct tf_buf *b, enum tf_msg_type *type, struct tf_error *err)
{
    uint32_t magic, version, t, length;
    b->pos = 0;
    if (tf_buf_get_u32(b, &magic) || tf_buf_get_u32(b, &version) || tf_buf_get_u32(b, &t) ||
        tf_buf_get_u32(b, &length))
        return tf_error_set(err, TF_ERR_MPI, "message of %zu bytes is shorter than a header",
                            b->len);
    if (magic != TF_WIRE_MAGIC)
        return tf_error_set(err, TF_ERR_MPI, "message is not a tunefarm message (magic %08x)",
                            magic);
    if (version != TF_WIRE_VERSION)
        return tf_error_set(err, TF_ERR_MPI,
                            "peer speaks wire version %u, this tunefarm speaks %u: run the same "
                            "tunefarm build on every rank",
                            version, TF_WIRE_VERSION);
    if (t < TF_MSG_HELLO || t > TF_MSG_COMPILE)
        return tf_error_set(err, TF_ERR_MPI, "unknown message type %u", t);
    if ((size_t)length != b->len - TF_WIRE_HEADER)
        return tf_error_set(err, TF_ERR_MPI, "message declares %u payload bytes but has %zu",
                            length, b->len - TF_WIRE_HEADER);
    *type = (enum tf_msg_type)t;
    return 0;
}

/* Every decoder must consume its payload exactly. */
static int wire_finish(struct tf_buf *b, int rc, const char *what, struct tf_error *err)
{
    if (rc != 0)
        return tf_error_set(err, TF_ERR_MPI, "truncated or malformed %s message", what);
    if (b->pos != b->len)
        return tf_error_set(err, TF_ERR_MPI, "%s message has %zu unexpected trailing bytes",
                            what, b->len - b->pos);
    return 0;
}

int tf_wire_get_hello(struct tf_buf *b, struct tf_device *dev, char *compilers, size_t cap,
                      struct tf_error *err)
{
    const int rc = tf_buf_get_device(b, dev) || tf_buf_get_str(b, compilers, cap);
    return wire_finish(b, rc, "HELLO", err);
}

struct tf_bundle *tf_wire_get_job(struct tf_buf *b, struct tf_error *err)
{
    struct tf_bundle *bundle = tf_bundle_create();
    uint32_t count;
    char *path = NULL;
    free(bundle->kernel_path);
    bundle->kernel_path = tf_buf_get_strdup(b);
    if (bundle->kernel_path == NULL || tf_buf_get_u32(b, &count))
        goto fail;
    /* Workers and runners load the job from files[0]: a bundle without it is no
     * job (found by tests/fuzz/fuzz_wire.c; it crashed the worker). */
    if (count == 0) {
        tf_error_set(err, TF_ERR_MPI, "JOB message carries no files (the job file comes first)");
        goto fail_quiet;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint64_t size;
        path = tf_buf_get_strdup(b);
        if (path == NULL || tf_buf_get_u64(b, &size) || size > b->len - b->pos)
            goto fail;
        tf_bundle_add(bundle, path, (const char *)b->data + b->pos, (size_t)size);
        b->pos += (size_t)size;
        free(path);
        path = NULL;
    }
    if (wire_finish(b, 0, "JOB", err))
        goto fail_quiet;
    bundle->sealed = true;
    return bundle;
fail:
    wire_finish(b, -1, "JOB", err);
fail_quiet:
    free(path);
    tf_bundle_destroy(bundle);
    return NULL;
}

/* The WORK payload at the cursor into *w (list allocated); non-zero if malformed. */
static int get_work(struct tf_buf *b, struct tf_work *w)
{
    memset(w, 0, sizeof *w);
    int rc = tf_buf_get_u32(b, &w->kernel) || tf_buf_get_u32(b, &w->problem) ||
             tf_buf_get_u32(b, &w->phase) || tf_buf_get_u64(b, &w->lo) || tf_buf_get_u64(b, &w->hi) ||
             tf_buf_get_u32(b, &w->nlist);
    if (rc == 0 && w->nlist > (b->len - b->pos) / 8)
        rc = -1;
    if (rc == 0 && w->nlist > 0) {
        w->list = tf_xmalloc(sizeof *w->list * w->nlist);
        for (uint32_t i = 0; i < w->nlist && rc == 0; i++)
            rc = tf_buf_get_u64(b, &w->list[i]);
    }
    return rc;
}

int tf_wire_get_work(struct tf_buf *b, struct tf_work *w, struct tf_error *err)
{
    if (wire_finish(b, get_work(b, w), "WORK", err)) {
        free(w->list);
        w->list = NULL;
        return -1;
    }
    return 0;
}

int tf_wire_get_compile(struct tf_buf *b, struct tf_device *dev, struct tf_work *w,
                        struct tf_error *err)
{
    memset(w, 0, sizeof *w);
    const int rc = tf_buf_get_device(b, dev) || get_work(b, w);
    if (wire_finish(b, rc, "COMPILE", err)) {
        free(w->list);
        w->list = NULL;
        return -1;
    }
    return 0;
}

int tf_wire_get_results(struct tf_buf *b, struct tf_result **out, uint32_t *n,
                        struct tf_error *err)
{
    uint32_t count;
    *out = NULL;
    *n = 0;
    int rc = tf_buf_get_u32(b, &count);
    /* A result is at least ~150 bytes: bound the allocation by the payload. */
    if (rc == 0 && count > (b->len - b->pos) / 64)
        rc = -1;
    struct tf_result *r = rc == 0 ? tf_xcalloc(count ? count : 1, sizeof *r) : NULL;
    for (uint32_t i = 0; rc == 0 && i < count; i++)
        rc = tf_buf_get_result(b, &r[i]);
    if (wire_finish(b, rc, "RESULTS", err)) {
        free(r);
        return -1;
    }
    *out = r;
    *n = count;
    return 0;
}
