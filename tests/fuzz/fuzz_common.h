/* fuzz_common.h - helpers shared by the libFuzzer targets in tests/fuzz/.
 *
 * Every target is one .c file defining LLVMFuzzerTestOneInput; it is linked
 * either with libFuzzer (clang -fsanitize=fuzzer, `make fuzz`) or with
 * replay.c (gcc, `make fuzz-replay`), so nothing here may depend on either.
 *
 * The loaders read their inputs through a struct tf_bundle. The targets build
 * a *sealed* bundle holding the shipped kernels (kernels/NAME/...) and the test
 * fixture kernels (tests/fixtures/NAME/...) under a virtual root, so a fuzzed
 * job or kernel that names them loads far, deterministically and without
 * touching the disk per input (an unsealed bundle would let the fuzzer read any
 * file on the machine, and a replay would depend on it). */
#ifndef TF_FUZZ_COMMON_H
#define TF_FUZZ_COMMON_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "schema/bundle.h"
#include "schema/error.h"

/* The source tree, for the shipped kernels: TF_FUZZ_ROOT at run time, else the
 * folder the target was built in (fuzz.mk passes -DTF_FUZZ_SRC_ROOT). */
#ifndef TF_FUZZ_SRC_ROOT
#define TF_FUZZ_SRC_ROOT "."
#endif

/* The virtual folder jobs live in; "../kernels" from it is the shipped library. */
#define FUZZ_JOB_DIR "/fuzz/jobs"
#define FUZZ_LIB_DIR "/fuzz/jobs/../kernels"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken property (not a crash): name the check, then abort so that libFuzzer
 * saves the input and a replay fails. */
#define FUZZ_ABORT()                                                                       \
    (fprintf(stderr, "fuzz: check failed at %s:%d\n", __FILE__, __LINE__), abort())

static inline const char *fuzz_root(void)
{
    const char *r = getenv("TF_FUZZ_ROOT");
    return r && r[0] ? r : TF_FUZZ_SRC_ROOT;
}

/* TF_FUZZ_VERBOSE=1: print why each input was refused (to check seeds load far). */
static inline void fuzz_report(const char *what, const struct tf_error *err)
{
    static int verbose = -1;
    if (verbose < 0)
        verbose = getenv("TF_FUZZ_VERBOSE") != NULL;
    if (!verbose)
        return;
    if (err == NULL)
        fprintf(stderr, "fuzz: %s: loaded\n", what);
    else
        tf_error_print(err, what, stderr);
}

/* Add every regular file of every sub-folder of `real` (real/NAME/FILE) to `b`
 * as virt/NAME/FILE; with `flat`, also as flat/FILE (first one wins), so a
 * fuzzed kernel.yaml in `flat` can name any shipped source by its base name. */
static inline void fuzz_add_tree(struct tf_bundle *b, const char *real, const char *virt,
                                 const char *flat)
{
    DIR *top = opendir(real);
    if (top == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(top)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *sub = tf_xasprintf("%s/%s", real, e->d_name);
        DIR *in = opendir(sub);
        if (in != NULL) {
            struct dirent *f;
            while ((f = readdir(in)) != NULL) {
                if (f->d_name[0] == '.')
                    continue;
                char *path = tf_xasprintf("%s/%s", sub, f->d_name);
                struct stat st;
                FILE *fp = NULL;
                if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (1 << 20) &&
                    (fp = fopen(path, "rb")) != NULL) {
                    char *buf = tf_xmalloc((size_t)st.st_size + 1);
                    size_t n = fread(buf, 1, (size_t)st.st_size, fp);
                    char *vp = tf_xasprintf("%s/%s/%s", virt, e->d_name, f->d_name);
                    tf_bundle_add(b, vp, buf, n);
                    free(vp);
                    if (flat) {
                        vp = tf_xasprintf("%s/%s", flat, f->d_name);
                        if (!tf_bundle_exists(b, vp))
                            tf_bundle_add(b, vp, buf, n);
                        free(vp);
                    }
                    free(buf);
                }
                if (fp)
                    fclose(fp);
                free(path);
            }
            closedir(in);
        }
        free(sub);
    }
    closedir(top);
}

/* A sealed bundle with the shipped kernels at FUZZ_LIB_DIR/NAME/ and the
 * fixture kernels at FUZZ_JOB_DIR/NAME/ (where jobs name them, next to the job;
 * tests/fixtures, tests/unit/fixtures/kernels and tests/unit: space, broken);
 * `flat` as in fuzz_add_tree. kernel_path is empty: nothing depends on the
 * environment. */
static inline struct tf_bundle *fuzz_library_bundle(const char *flat)
{
    struct tf_bundle *b = tf_bundle_create();
    free(b->kernel_path);
    b->kernel_path = tf_xstrdup("");
    /* The library first: with `flat`, its files win the base names. Then the
     * fixtures, including the unit tests' broken kernels (every loader error). */
    static const char *const trees[][2] = {{"kernels", FUZZ_LIB_DIR},
                                           {"tests/fixtures", FUZZ_JOB_DIR},
                                           {"tests/unit/fixtures/kernels", FUZZ_JOB_DIR},
                                           {"tests/unit", FUZZ_JOB_DIR}};
    for (size_t i = 0; i < sizeof trees / sizeof trees[0]; i++) {
        char *real = tf_xasprintf("%s/%s", fuzz_root(), trees[i][0]);
        fuzz_add_tree(b, real, trees[i][1], flat);
        free(real);
    }
    if (b->count == 0) {
        fprintf(stderr, "fuzz: no kernels found under %s (set TF_FUZZ_ROOT to the source tree)\n",
                fuzz_root());
        abort();
    }
    b->sealed = true;
    return b;
}

#endif
