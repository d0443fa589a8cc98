/* verify.h - comparing a kernel's output with the reference's. */
#ifndef TF_VERIFY_H
#define TF_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "../schema/kernel.h"

/* Compare `count` elements of `type`: floats pass if |got - ref| <= atol + rtol*|ref|
 * (NaN/Inf in either never pass), integers must be equal. Returns TF_STATUS_OK, or
 * TF_STATUS_WRONG_RESULT with `message` (cap bytes) naming `name`, the first bad
 * index, got, expected and how many elements are wrong. */
int tf_verify(const char *name, enum tf_elem_type type, const void *got, const void *expected,
              size_t count, double rtol, double atol, char *message, size_t cap);

/* A checksum of `bytes` (a multiple of 4) at `p`, read as little-endian 32-bit
 * words w[j]: the sum of w[j] * weight(j) modulo 2^64, weight(j) being
 * SplitMix64's finaliser of j made odd. The device comparison (backend.h,
 * compare_queue) computes the same over the expected outputs it reads, so a
 * device copy that a variant changed is told from the sealed host copy it
 * was uploaded from. Order matters: a moved word changes it. */
uint64_t tf_verify_checksum(const void *p, size_t bytes);

/* Size in bytes of one element of `type`. */
size_t tf_elem_size(enum tf_elem_type type);

#endif
