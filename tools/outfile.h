/* outfile.h - a text output that appears whole or not at all.
 *
 * The commands that write files for other tools (`tunefarm best`, `tunefarm
 * report`) write to PATH.tmp.PID beside PATH and rename it over PATH once
 * everything is written and synced, so a build or a browser never reads half
 * a header or half a page, and a failed write leaves the old file
 * (schema/replace.h: a symbolic link is followed, the old file's mode kept, a
 * device or FIFO written in place, an HDF5 file never overwritten). Without a
 * path (or with "-") the output is stdout. */
#ifndef TF_OUTFILE_H
#define TF_OUTFILE_H

#include <stdio.h>

#include "../schema/error.h"
#include "../schema/replace.h"

struct tf_outfile {
    FILE *f;              /* write here */
    char *path;           /* the path as given; NULL for stdout */
    struct tf_replace r;  /* where it is written */
};

/* Open `path` (NULL or "-": stdout) for writing. 0, or -1 + err naming the path. */
int tf_outfile_open(struct tf_outfile *o, const char *path, struct tf_error *err);
/* Flush, sync and rename into place (stdout: flush). 0, or -1 + err (the
 * temporary is removed and the old file left as it was). */
int tf_outfile_commit(struct tf_outfile *o, struct tf_error *err);
/* Close and remove the temporary without touching `path`; accepts an
 * outfile never opened or already committed. */
void tf_outfile_abort(struct tf_outfile *o);

#endif
