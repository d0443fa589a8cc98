/* fuzz_kernel.c - libFuzzer target: the kernel loader (schema/kernel.h) on
 * arbitrary kernel.yaml bytes.
 *
 * The input is FUZZ_LIB_DIR/fuzz/kernel.yaml in a sealed bundle holding every
 * shipped and fixture kernel's files, also flattened into that same folder, so
 * `source: gemm.c` or `reference: {source: reference.c}` resolve. A kernel
 * that loads is then enumerated (schema/space.h) on a nominal GPU: counts over
 * a bounded prefix are checked against a brute-force filter with
 * tf_kernel_check (the two must agree whenever both evaluate without error),
 * every problem's default is inside the space and is the kernel-wide one when
 * there is one, and its configurations are formatted, encoded and turned into
 * defines. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "schema/kernel.h"
#include "schema/space.h"

#define KERNEL_DIR FUZZ_LIB_DIR "/fuzz"
#define KERNEL_PATH KERNEL_DIR "/kernel.yaml"
#define PREFIX 256 /* configurations checked against brute force */

static struct tf_bundle *bundle;

static void use_space(const struct tf_kernel *k, int problem, const struct tf_device *dev)
{
    struct tf_error err = {0};
    struct tf_space *s = tf_space_create(k, problem, dev, &err);
    if (s == NULL)
        return;
    const uint64_t cart = tf_space_cartesian(s);
    const uint64_t hi = cart < PREFIX ? cart : PREFIX;
    uint64_t count = 0;
    int rc = tf_space_count(s, 0, hi, &count, &err);
    struct tf_value *slots = tf_xcalloc((size_t)k->nslots, sizeof *slots);
    uint64_t brute = 0;
    int brute_rc = 0;
    for (uint64_t i = 0; i < hi && brute_rc == 0; i++) {
        bool ok;
        tf_kernel_bind(k, i, problem, dev, slots);
        brute_rc = tf_kernel_check(k, slots, &ok, &err);
        if (brute_rc == 0 && ok)
            brute++;
        if (brute_rc == 0) {
            bool valid;
            if (tf_space_is_valid(s, i, &valid, &err) == 0 && valid != ok)
                FUZZ_ABORT(); /* the two validity checks disagree */
        }
    }
    free(slots);
    if (rc == 0 && brute_rc == 0 && count != brute)
        FUZZ_ABORT(); /* pruned enumeration and brute force disagree */
    uint64_t next;
    if (rc == 0 && tf_space_next(s, 0, hi, &next, &err) == 1 && next >= hi)
        FUZZ_ABORT();
    /* A sample needs the exact count of the whole space: only for small ones. */
    uint64_t valid = 0;
    if (rc == 0 && cart <= 4096 && tf_space_count(s, 0, cart, &valid, &err) == 0 && valid > 1) {
        uint64_t *list = NULL, n = 0;
        if (tf_space_sample(s, valid, valid / 2, 7, &list, &n, &err) == 0) {
            for (uint64_t i = 1; i < n; i++)
                if (list[i] <= list[i - 1])
                    FUZZ_ABORT(); /* samples are distinct and ascending */
        }
        free(list);
    }
    tf_space_destroy(s);
}

static void use_kernel(const struct tf_kernel *k)
{
    struct tf_device dev;
    if (tf_device_for_arch("sm_90", &dev) != 0)
        memset(&dev, 0, sizeof dev);
    for (int p = 0; p < k->nproblems && p < 3; p++)
        use_space(k, p, &dev);
    const uint64_t cart = tf_kernel_cartesian(k);
    for (int p = 0; p < k->nproblems; p++) {
        uint64_t def;
        if (tf_kernel_default_for(k, p, &def) &&
            (def >= cart || (k->has_default && def != k->default_index)))
            FUZZ_ABORT(); /* a resolved default is a configuration, the same one if kernel-wide */
    }
    uint64_t idx[3] = {0, cart ? cart - 1 : 0, 0};
    tf_kernel_default_for(k, k->nproblems - 1, &idx[2]);
    int *digits = tf_xcalloc((size_t)k->nparams + 1, sizeof *digits);
    for (int j = 0; j < 3; j++) {
        if (cart == 0)
            break;
        char buf[512];
        tf_kernel_format_config(k, idx[j], buf, (int)sizeof buf);
        tf_kernel_decode(k, idx[j], digits);
        if (cart != UINT64_MAX && tf_kernel_encode(k, digits) != idx[j])
            FUZZ_ABORT(); /* decode and encode are inverses inside the space */
        char *defs[64];
        int n = tf_kernel_defines(k, idx[j], defs, 64);
        for (int i = 0; i < n; i++)
            free(defs[i]);
    }
    free(digits);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (bundle == NULL)
        bundle = fuzz_library_bundle(KERNEL_DIR);
    tf_bundle_add(bundle, KERNEL_PATH, (const char *)data, size);
    struct tf_error err = {0};
    struct tf_kernel *k = tf_kernel_load(KERNEL_PATH, bundle, &err);
    fuzz_report("kernel", k ? NULL : &err);
    if (k != NULL)
        use_kernel(k);
    else if (err.code == TF_ERR_NONE || err.message[0] == '\0')
        FUZZ_ABORT(); /* a failure must say why */
    tf_kernel_destroy(k);
    return 0;
}
