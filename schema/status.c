/* status.c - names of the result statuses, as they appear in archives, on the
 * command line and in summaries. The table index is the stored value. */
#include "status.h"

#include <string.h>

static const char *const status_names[TF_STATUS_COUNT] = {
    [TF_STATUS_OK] = "ok",
    [TF_STATUS_INVALID] = "invalid",
    [TF_STATUS_COMPILE_ERROR] = "compile_error",
    [TF_STATUS_LAUNCH_ERROR] = "launch_error",
    [TF_STATUS_RUNTIME_ERROR] = "runtime_error",
    [TF_STATUS_TIMEOUT] = "timeout",
    [TF_STATUS_WRONG_RESULT] = "wrong_result",
    [TF_STATUS_CRASHED] = "crashed",
};

const char *tf_status_name(int s)
{
    return s >= 0 && s < TF_STATUS_COUNT ? status_names[s] : "unknown";
}

int tf_status_from_name(const char *name)
{
    for (int s = 0; s < TF_STATUS_COUNT; s++)
        if (strcmp(status_names[s], name) == 0)
            return s;
    return -1;
}
