/* outfile.c - a text output that appears whole or not at all (outfile.h).
 *
 * schema/replace.c says where the file goes (a temporary beside the target,
 * or the device itself); commit checks the stream's error flag and fsync
 * before renaming, because a full disk shows up only there. */
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tf_outfile_open(struct tf_outfile *o, const char *path, struct tf_error *err)
{
    memset(o, 0, sizeof *o);
    if (path == NULL || strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    if (tf_replace_plan(&o->r, path, TF_REPLACE_TEXT, err) != 0)
        return -1;
    int fd = tf_replace_open(&o->r, path, err);
    if (fd < 0 || (o->f = fdopen(fd, "w")) == NULL) {
        if (fd >= 0) {
            tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
            close(fd);
        }
        tf_replace_discard(&o->r);
        memset(o, 0, sizeof *o);
        return -1;
    }
    o->path = tf_xstrdup(path);
    return 0;
}

int tf_outfile_commit(struct tf_outfile *o, struct tf_error *err)
{
    if (o->f == NULL)
        return tf_error_set(err, TF_ERR_IO, "output not open");
    if (o->path == NULL) {
        o->f = NULL;
        if (fflush(stdout) != 0 || ferror(stdout))
            return tf_error_set(err, TF_ERR_IO, "cannot write to standard output: %s",
                                strerror(errno));
        return 0;
    }
    /* fsync fails with EINVAL on a pipe or a device written in place: only a
     * file's sync counts. */
    int bad = fflush(o->f) != 0 || ferror(o->f) ||
              (o->r.tmp != NULL && fsync(fileno(o->f)) != 0);
    int e = errno;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    o->f = NULL;
    if (bad)
        tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s; it was left as it was", o->path,
                     strerror(e));
    else
        bad = tf_replace_finish(&o->r, o->path, err) != 0;
    tf_replace_discard(&o->r);
    free(o->path);
    o->path = NULL;
    return bad ? -1 : 0;
}

void tf_outfile_abort(struct tf_outfile *o)
{
    if (o->f && o->path)
        fclose(o->f);
    tf_replace_discard(&o->r);
    free(o->path);
    memset(o, 0, sizeof *o);
}
