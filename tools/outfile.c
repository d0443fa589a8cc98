/* outfile.c - a text output that appears whole or not at all (outfile.h).
 *
 * The temporary is opened with O_EXCL in the target's own folder (a rename
 * within one file system is atomic); commit checks the stream's error flag
 * and fsync before renaming, because a full disk shows up only there. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
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
    o->path = tf_xstrdup(path);
    o->tmp = tf_xasprintf("%s.tmp.%ld", path, (long)getpid());
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 || (o->f = fdopen(fd, "w")) == NULL) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s (is the folder there and writable?)",
                     path, strerror(e));
        free(o->path);
        free(o->tmp);
        memset(o, 0, sizeof *o);
        return -1;
    }
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
    int bad = fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0;
    int e = errno;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    o->f = NULL;
    if (!bad && rename(o->tmp, o->path) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        unlink(o->tmp);
        tf_error_set(err, TF_ERR_IO, "cannot write '%s': %s; it was left as it was", o->path,
                     strerror(e));
    }
    free(o->path);
    free(o->tmp);
    o->path = o->tmp = NULL;
    return bad ? -1 : 0;
}

void tf_outfile_abort(struct tf_outfile *o)
{
    if (o->f && o->path) {
        fclose(o->f);
        unlink(o->tmp);
    }
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}
