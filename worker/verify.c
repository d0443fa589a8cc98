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
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

int tf_verify(const char *name, enum tf_elem_type type, const void *got, const void *expected,
              size_t count, double rtol, double atol, char *message, size_t cap)
{
    size_t bad = 0, first = 0;
    switch (type) {
    case TF_ELEM_F32: COUNT_BAD_REAL(float, fabsf, FLT_MAX); break;
    case TF_ELEM_F64: COUNT_BAD_REAL(double, fabs, DBL_MAX); break;
    case TF_ELEM_I32: COUNT_BAD_INT(int32_t); break;
    case TF_ELEM_I64: COUNT_BAD_INT(int64_t); break;
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
