/* fuzz_job.c - libFuzzer target: the job loader (schema/job.h) on arbitrary bytes.
 *
 * The input is the job file at FUZZ_JOB_DIR/fuzz.yaml inside a sealed bundle
 * that also holds every shipped kernel (FUZZ_LIB_DIR/NAME, what `kernel: gemm`
 * resolves to through "../kernels") and every test fixture kernel (next to the
 * job: `kernel: ranked`), so a valid job loads as far as a real one. A job that
 * loads is then used the way the coordinator uses it: its search strategy and
 * options checked (tf_strategy_check_job: each option value parsed by the
 * strategy itself), target matching and the configuration space of each kernel
 * and problem (counted over a bounded prefix). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/strategy.h"
#include "fuzz_common.h"
#include "schema/job.h"
#include "schema/space.h"

#define JOB_PATH FUZZ_JOB_DIR "/fuzz.yaml"

static struct tf_bundle *bundle;

static void use_job(const struct tf_job *job)
{
    static const char *const classes[] = {"host/x86_64/Intel Xeon", "cuda/sm_90/NVIDIA H100",
                                          "hip/gfx90a", "cuda"};
    for (int i = 0; i < 4; i++)
        (void)tf_job_targets_device(job, i == 0 ? "host" : "cuda", classes[i]);
    struct tf_device dev;
    if (tf_device_for_arch("sm_90", &dev) != 0)
        memset(&dev, 0, sizeof dev);
    for (int i = 0; i < job->nkernels; i++) {
        const struct tf_job_kernel *jk = &job->kernels[i];
        for (int p = 0; p < jk->nproblems && p < 4; p++) {
            struct tf_error err = {0};
            struct tf_space *s = tf_space_create(jk->kernel, jk->problems[p], &dev, &err);
            if (s == NULL)
                continue;
            uint64_t count;
            (void)tf_space_count(s, 0, 1024, &count, &err);
            tf_space_destroy(s);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (bundle == NULL)
        bundle = fuzz_library_bundle(NULL);
    /* Replaces the previous input: the sealed bundle is otherwise never written. */
    tf_bundle_add(bundle, JOB_PATH, (const char *)data, size);
    struct tf_error err = {0};
    struct tf_job *job = tf_job_load(JOB_PATH, bundle, &err);
    fuzz_report("job", job ? NULL : &err);
    if (job != NULL) {
        struct tf_error serr = {0};
        const int refused = tf_strategy_check_job(job, &serr);
        fuzz_report("strategy", refused ? &serr : NULL);
        if (refused && (serr.code == TF_ERR_NONE || serr.message[0] == '\0'))
            FUZZ_ABORT(); /* a refusal must say why */
        use_job(job);
    } else if (err.code == TF_ERR_NONE || err.message[0] == '\0')
        FUZZ_ABORT(); /* a failure must say why */
    tf_job_destroy(job);
    return 0;
}
