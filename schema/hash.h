/* hash.h - SHA-256, for content hashes (compile cache keys, job and source identity). */
#ifndef TF_HASH_H
#define TF_HASH_H

#include <stddef.h>
#include <stdint.h>

struct tf_sha256 {
    uint32_t state[8];
    uint64_t length;
    unsigned char block[64];
    size_t fill;
};

/* Start a new hash. */
void tf_sha256_init(struct tf_sha256 *h);
/* Feed `n` bytes. */
void tf_sha256_update(struct tf_sha256 *h, const void *data, size_t n);
/* Feed a NUL-terminated string including a terminating 0 byte (so "ab","c" != "a","bc"). */
void tf_sha256_update_str(struct tf_sha256 *h, const char *s);
/* Finish; writes 64 lowercase hex digits and a NUL. */
void tf_sha256_hex(struct tf_sha256 *h, char out[65]);

/* SplitMix64's finaliser: a 64-bit integer mixed into one that looks random
 * (generators, seeds, checksum weights). */
static inline uint64_t tf_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

#endif
