/* verify.c - output verification against the trusted reference.
 *
 * Floating-point outputs use numpy's allclose rule, |got - ref| <= atol +
 * rtol * |ref|, except that a NaN or an infinity never passes, on either side:
 * a kernel that writes NaN, or leaves a poisoned (NaN) element unwritten, is
 * wrong even if the reference overflowed too. Integer outputs must match
 * exactly. The message names the first failing element, what it held and what
 * was expected, and how many elements failed, so a user can tell an off-by-one
 * tail from garbage everywhere. */
#include "verify.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../schema/hash.h"
#include "../schema/status.h"

size_t tf_elem_size(enum tf_elem_type type)
{
    switch (type) {
    case TF_ELEM_I32: return sizeof(int32_t);
    case TF_ELEM_I64: return sizeof(int64_t);
    case TF_ELEM_F32: return sizeof(float);
    case TF_ELEM_F64: return sizeof(double);
    }
    tf_die("unknown element type %d", (int)type);
}

static double load_real(enum tf_elem_type type, const void *p, size_t i)
{
    return type == TF_ELEM_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static int64_t load_int(enum tf_elem_type type, const void *p, size_t i)
{
    return type == TF_ELEM_I32 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

/* How many of the `count` elements of `got` fail against `expected`, then
 * (only if some did) the first. One branch-free loop per type, vectorised
 * (omp simd: -fopenmp-simd, no OpenMP runtime): verification of a 4096^2
 * output overlaps the samples of a few-millisecond kernel and should end
 * before they do. Floats are compared in float (the tolerance is far above
 * float's rounding), doubles in double. A NaN on either side fails the
 * comparison by itself, an infinite expectation fails |e| <= max, an
 * infinite `got` fails on the distance. */
#define COUNT_BAD_REAL(T, ABS, MAX)                                                            \
    do {                                                                                       \
        const T *g_ = got, *e_ = expected, at = (T)atol, rt = (T)rtol;                         \
        _Pragma("omp simd reduction(+ : bad)") for (size_t i = 0; i < count; i++)              \
            bad += !((ABS(g_[i] - e_[i]) <= at + rt * ABS(e_[i])) & (ABS(e_[i]) <= (MAX)));     \
        for (first = 0; bad > 0 && first < count; first++)                                     \
            if (!((ABS(g_[first] - e_[first]) <= at + rt * ABS(e_[first])) &                   \
                  (ABS(e_[first]) <= (MAX))))                                                  \
                break;                                                                         \
    } while (0)

#define COUNT_BAD_INT(T)                                                                       \
    do {                                                                                       \
        const T *g_ = got, *e_ = expected;                                                     \
        _Pragma("omp simd reduction(+ : bad)") for (size_t i = 0; i < count; i++)              \
            bad += g_[i] != e_[i];                                                             \
        for (first = 0; bad > 0 && first < count && g_[first] == e_[first]; first++)           \
            ;                                                                                  \
    } while (0)

/* How many of `count` elements fail, into *bad, and the first that does into
 * *first (count when none): one piece of the comparison. */
static void count_bad(enum tf_elem_type type, const void *got, const void *expected,
                      size_t count, double rtol, double atol, size_t *bad_out,
                      size_t *first_out)
{
    size_t bad = 0, first = 0;
    switch (type) {
    case TF_ELEM_F32: COUNT_BAD_REAL(float, fabsf, FLT_MAX); break;
    case TF_ELEM_F64: COUNT_BAD_REAL(double, fabs, DBL_MAX); break;
    case TF_ELEM_I32: COUNT_BAD_INT(int32_t); break;
    case TF_ELEM_I64: COUNT_BAD_INT(int64_t); break;
    }
    *bad_out = bad;
    *first_out = bad > 0 ? first : count;
}

/* The comparison of a large output is split into pieces compared on threads
 * of their own: on a GPU it runs while the device takes the first samples
 * (runner_child.c), and one thread comparing 16M floats (a 4096^2 GEMM) took
 * 18.6 ms on an H200 node, longer than four launches of a fast variant, so the
 * device waited (bench/results/runner-setups-2026-11-27-h200.md). The threads
 * end before tf_verify returns. Below VERIFY_PIECE elements one thread does it. */
#define VERIFY_PIECE ((size_t)1 << 20)
#define VERIFY_THREADS 4

struct verify_piece {
    enum tf_elem_type type;
    const char *got, *expected; /* the piece's first element */
    size_t count;
    double rtol, atol;
    size_t bad, first;          /* out: first relative to the piece */
};

static void *verify_piece_run(void *arg)
{
    struct verify_piece *p = arg;
    count_bad(p->type, p->got, p->expected, p->count, p->rtol, p->atol, &p->bad, &p->first);
    return NULL;
}

/* Word j's weight in the checksum: SplitMix64's output for j, made odd (the
 * device's tf_weight, gpu_backend.c). Weights that look random keep
 * structured changes (a constant added to every element, two neighbours moved
 * in opposite directions) from cancelling, as they could with weights in
 * arithmetic progression. */
static uint64_t checksum_weight(uint64_t j)
{
    return tf_mix64(j + UINT64_C(0x9E3779B97F4A7C15)) | 1;
}

uint64_t tf_verify_checksum(const void *p, size_t bytes)
{
    const unsigned char *b = p;
    uint64_t sum = 0;
    for (size_t j = 0; j < bytes / 4; j++) {
        const uint32_t w = (uint32_t)b[4 * j] | (uint32_t)b[4 * j + 1] << 8 |
                           (uint32_t)b[4 * j + 2] << 16 | (uint32_t)b[4 * j + 3] << 24;
        sum += (uint64_t)w * checksum_weight(j);
    }
    return sum;
}

int tf_verify(const char *name, enum tf_elem_type type, const void *got, const void *expected,
              size_t count, double rtol, double atol, char *message, size_t cap)
{
    size_t bad = 0, first = count;
    size_t npieces = count / VERIFY_PIECE;
    if (npieces > VERIFY_THREADS)
        npieces = VERIFY_THREADS;
    if (npieces < 2) {
        count_bad(type, got, expected, count, rtol, atol, &bad, &first);
    } else {
        struct verify_piece pieces[VERIFY_THREADS];
        pthread_t threads[VERIFY_THREADS];
        int started[VERIFY_THREADS] = {0};
        const size_t size = tf_elem_size(type), each = count / npieces;
        for (size_t i = 0; i < npieces; i++) {
            const size_t from = i * each;
            pieces[i] = (struct verify_piece){
                .type = type,
                .got = (const char *)got + from * size,
                .expected = (const char *)expected + from * size,
                .count = i + 1 == npieces ? count - from : each,
                .rtol = rtol,
                .atol = atol,
            };
            /* Piece 0 is the caller's; a thread that cannot start is too. */
            started[i] = i > 0 && pthread_create(&threads[i], NULL, verify_piece_run,
                                                  &pieces[i]) == 0;
        }
        for (size_t i = 0; i < npieces; i++)
            if (!started[i])
                verify_piece_run(&pieces[i]);
        for (size_t i = 0; i < npieces; i++) {
            if (started[i])
                pthread_join(threads[i], NULL);
            if (pieces[i].bad > 0 && first == count)
                first = i * each + pieces[i].first;
            bad += pieces[i].bad;
        }
    }
    if (bad == 0) {
        if (cap > 0)
            message[0] = '\0';
        return TF_STATUS_OK;
    }
    if (cap == 0)
        return TF_STATUS_WRONG_RESULT;
    if (type == TF_ELEM_I32 || type == TF_ELEM_I64)
        snprintf(message, cap, "%s[%zu] = %" PRId64 ", expected %" PRId64 " (%zu of %zu wrong)",
                 name, first, load_int(type, got, first), load_int(type, expected, first), bad,
                 count);
    else
        snprintf(message, cap, "%s[%zu] = %.9g, expected %.9g (%zu of %zu wrong)", name, first,
                 load_real(type, got, first), load_real(type, expected, first), bad, count);
    return TF_STATUS_WRONG_RESULT;
}
