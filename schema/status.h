/* status.h - the one status every measured configuration ends with.
 *
 * The numeric values are stored in archives (an HDF5 enum type) and sent on the
 * wire: never renumber, only append. */
#ifndef TF_STATUS_H
#define TF_STATUS_H

enum tf_status {
    TF_STATUS_OK = 0,            /* measured and verified */
    TF_STATUS_INVALID = 1,       /* violates a constraint or a device limit; never run */
    TF_STATUS_COMPILE_ERROR = 2, /* the compiler rejected the variant */
    TF_STATUS_LAUNCH_ERROR = 3,  /* the binary could not be loaded or launched */
    TF_STATUS_RUNTIME_ERROR = 4, /* the launch failed while running (illegal address...) */
    TF_STATUS_TIMEOUT = 5,       /* no answer before the per-configuration deadline */
    TF_STATUS_WRONG_RESULT = 6,  /* output differs from the reference beyond tolerance, or NaN */
    TF_STATUS_CRASHED = 7,       /* the runner process died (signal, abort, exit) */
    TF_STATUS_COUNT
};

/* Lower-case name of `s` ("ok", "compile_error", ...); "unknown" if out of range. */
const char *tf_status_name(int s);
/* Status for `name`, or -1 if it names none. */
int tf_status_from_name(const char *name);

#endif
