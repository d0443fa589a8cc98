/* channel.h - length-prefixed frames over a socket or pipe, with deadlines: the
 * wire between a worker and its runner and compiler child processes. */
#ifndef TF_CHANNEL_H
#define TF_CHANNEL_H

#include "../schema/wire.h"

/* Largest frame accepted: a longer declared length is a broken stream. */
#define TF_CHANNEL_FRAME_MAX ((uint32_t)1 << 30)

/* Monotonic clock in seconds (deadlines are absolute on it). */
double tf_channel_now(void);
/* Write `b`'s bytes as one frame (u32 little-endian length, then the bytes).
 * 0 ok, -1 error or peer gone (never SIGPIPE), -2 `deadline` passed (< 0: none). */
int tf_channel_write_frame(int fd, const struct tf_buf *b, double deadline);
/* Read one frame into `b` (reset first). 0 ok, -1 EOF, error or an oversized
 * length, -2 `deadline` passed (< 0: none). Deadlines count only the time
 * this process was running: time spent stopped (SIGSTOP, a suspended job)
 * moves them later, and the channel is always looked at once more before a
 * deadline is called passed. */
int tf_channel_read_frame(int fd, struct tf_buf *b, double deadline);

/* In a worker's child process: ignore SIGINT (the worker's business), die
 * with the worker, move the channel off fds 0/1 to *in and *out (close-on-
 * exec), and point fd 0 at /dev/null and fd 1 at stderr, so that a kernel's or
 * a compiler library's printf cannot corrupt the channel. -1 if the worker is
 * already gone or the descriptors cannot be moved. */
int tf_channel_child_open(int *in, int *out);

#endif
