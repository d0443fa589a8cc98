/* coordinator.h - rank 0: validate, plan, dispatch, collect, archive, report. */
#ifndef TF_COORDINATOR_H
#define TF_COORDINATOR_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

/* Exit codes of `tunefarm run` (documented in README.md). */
enum tf_exit {
    TF_EXIT_OK = 0,        /* the job ran; every configuration has a status */
    TF_EXIT_FAILURE = 1,   /* the run broke (archive not writable, MPI failure) */
    TF_EXIT_USAGE = 2,     /* bad command line, job, kernel or archive file; nothing written */
    TF_EXIT_NO_DEVICE = 3, /* no worker offers a device the job targets */
    TF_EXIT_INTERRUPTED = 75 /* stopped by a signal after a checkpoint: run the same
                                command again to resume (EX_TEMPFAIL: requeue) */
};

struct tf_run_options {
    const char *job_path;
    const char *archive;      /* -o; NULL: the job's archive path */
    const char *command_line; /* recorded in /runs */
    bool quiet;               /* no progress */
    bool fresh;               /* start a new run even if the job's last run is unfinished */
    double grace;             /* seconds to wait for work in flight after a signal */
    volatile sig_atomic_t *interrupts; /* signals received so far (SIGTERM, SIGINT, SIGUSR1) */
    const char *replay_source; /* --replay: recorded in /runs; replay devices are targeted
                                  whatever the job's targets say; NULL: a measured run */
};

/* Run the coordinator on rank 0 of MPI_COMM_WORLD; returns an enum tf_exit.
 * *abort_others is set when workers may still be busy (a run that broke, or a
 * second signal): the caller must end them with MPI_Abort. */
int tf_coordinator_run(const struct tf_run_options *opt, bool *abort_others);

/* `tunefarm status ARCHIVE`: print the archive's runs, what each measured
 * (journaled results included) and what an unfinished run has left, to `out`.
 * Returns an enum tf_exit (TF_EXIT_USAGE for an unreadable archive). */
int tf_coordinator_status(const char *archive_path, FILE *out);

/* `tunefarm merge OUT IN...`: add every run of the archives `inputs[0..n)`
 * (their journals included) to OUT, created if missing, written atomically
 * once all inputs are read. A run OUT has already gets the rows it lacks and
 * its end ("N rows added to run K"); a run unfinished in its input, or still
 * running there (its journal locked), is merged as far as it got and said to
 * be so. Returns an enum tf_exit (TF_EXIT_USAGE for an unreadable or
 * mismatched input: OUT untouched). */
int tf_coordinator_merge(const char *out_path, char *const *inputs, int n, bool quiet);

#endif
