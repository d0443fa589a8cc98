/* verify.h - comparing a kernel's output with the reference's. */
#ifndef TF_VERIFY_H
#define TF_VERIFY_H

#include <stddef.h>

#include "../schema/kernel.h"

/* Compare `count` elements of `type`: floats pass if |got - ref| <= atol + rtol*|ref|
 * (NaN/Inf in either never pass), integers must be equal. Returns TF_STATUS_OK, or
 * TF_STATUS_WRONG_RESULT with `message` (cap bytes) naming `name`, the first bad
 * index, got, expected and how many elements are wrong. */
int tf_verify(const char *name, enum tf_elem_type type, const void *got, const void *expected,
              size_t count, double rtol, double atol, char *message, size_t cap);

/* Size in bytes of one element of `type`. */
size_t tf_elem_size(enum tf_elem_type type);

#endif
