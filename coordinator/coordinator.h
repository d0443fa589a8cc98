/* coordinator.h - rank 0: validate, plan, dispatch, collect, archive, report. */
#ifndef TF_COORDINATOR_H
#define TF_COORDINATOR_H

#include <stdbool.h>

/* Exit codes of `tunefarm run` (documented in README.md). */
enum tf_exit {
    TF_EXIT_OK = 0,        /* the job ran; every configuration has a status */
    TF_EXIT_FAILURE = 1,   /* the run broke (archive not writable, MPI failure) */
    TF_EXIT_USAGE = 2,     /* bad command line, job, kernel or archive file; nothing written */
    TF_EXIT_NO_DEVICE = 3  /* no worker offers a device the job targets */
};

struct tf_run_options {
    const char *job_path;
    const char *archive;      /* -o; NULL: the job's archive path */
    const char *command_line; /* recorded in /runs */
    bool quiet;               /* no progress */
};

/* Run the coordinator on rank 0 of MPI_COMM_WORLD; returns an enum tf_exit. */
int tf_coordinator_run(const struct tf_run_options *opt);

#endif
