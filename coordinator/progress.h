/* progress.h - the coordinator's progress line on stderr. */
#ifndef TF_PROGRESS_H
#define TF_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct tf_progress {
    double start;     /* monotonic seconds at start */
    double last;      /* when the line was last printed */
    bool tty;         /* stderr is a terminal: rewrite one line every second */
    bool quiet;       /* print nothing */
    bool dirty;       /* a rewritable line is on screen */
};

/* Monotonic clock in seconds. */
double tf_now(void);
/* Wall clock in unix seconds. */
double tf_wall_now(void);
/* Start the clock; quiet suppresses all output. */
void tf_progress_init(struct tf_progress *p, bool quiet);
/* Print "done/total, rate, ETA, `best`" if due (1 s on a terminal, 10 s otherwise) or `force`. */
void tf_progress_update(struct tf_progress *p, uint64_t done, uint64_t total, const char *best,
                        bool force);
/* End the line (on a terminal) so later output starts clean. */
void tf_progress_finish(struct tf_progress *p);

#endif
