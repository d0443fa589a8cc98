/* test_replace.c - schema/replace.c: where a file replacing PATH is written.
 *
 * Real files in a temporary folder: a new file, an existing one (its mode
 * kept), a symbolic link (the link stays, its file is replaced), a dangling
 * link and a folder (refused, nothing created), a device (/dev/null: written
 * in place for text, refused for an archive), an HDF5 file under a text
 * output (refused, untouched), a discarded write (the old file stays,
 * no temporary left), and temporaries killed writers left (the stale ones
 * removed, the rest kept). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../schema/replace.h"
#include "tree.h"

static char dir[256];

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *get(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Files in dir whose name holds ".tmp." */
static int temporaries(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

/* The whole cycle: plan, open, write `text`, finish. 0 or -1 + err. */
static int replace_with(const char *path, enum tf_replace_kind kind, const char *text,
                        struct tf_error *err)
{
    struct tf_replace r;
    if (tf_replace_plan(&r, path, kind, err) != 0)
        return -1;
    int fd = tf_replace_open(&r, path, err);
    int rc = -1;
    if (fd >= 0) {
        const size_t n = strlen(text);
        rc = write(fd, text, n) == (ssize_t)n ? 0 : -1;
        close(fd);
        if (rc == 0)
            rc = tf_replace_finish(&r, path, err);
    }
    tf_replace_discard(&r);
    return rc;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/tf-test-replace.XXXXXX");
    return mkdtemp(dir) == NULL ? -1 : 0;
}

/* Everything under dir, subfolders too (a test that failed half way leaves
 * its own), deepest first, links not followed. */
static int teardown(void **state)
{
    (void)state;
    remove_tree(dir);
    return 0;
}

static void test_new_and_existing(void **state)
{
    (void)state;
    struct tf_error err = {0};
    char p[300];
    path_in(p, sizeof p, "out.txt");
    assert_int_equal(replace_with(p, TF_REPLACE_TEXT, "one", &err), 0);
    assert_string_equal(get(p), "one");
    assert_int_equal(chmod(p, 0640), 0);
    assert_int_equal(replace_with(p, TF_REPLACE_TEXT, "two", &err), 0);
    assert_string_equal(get(p), "two");
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(temporaries(), 0);
}

static void test_link_followed(void **state)
{
    (void)state;
    struct tf_error err = {0};
    char real[300], link[300];
    path_in(real, sizeof real, "real.txt");
    path_in(link, sizeof link, "link.txt");
    put(real, "old");
    assert_int_equal(chmod(real, 0600), 0);
    assert_int_equal(symlink("real.txt", link), 0);
    assert_int_equal(replace_with(link, TF_REPLACE_TEXT, "new", &err), 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(get(real), "new");
    assert_int_equal(stat(real, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);

    char dangling[300];
    path_in(dangling, sizeof dangling, "dangling.txt");
    assert_int_equal(symlink("nowhere/none.txt", dangling), 0);
    assert_int_equal(replace_with(dangling, TF_REPLACE_TEXT, "x", &err), -1);
    assert_non_null(strstr(err.message, "symbolic link"));
    assert_int_equal(lstat(dangling, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(temporaries(), 0);
}

static void test_refused(void **state)
{
    (void)state;
    struct tf_error err = {0};
    char folder[300], h5[300];
    path_in(folder, sizeof folder, "folder");
    assert_int_equal(mkdir(folder, 0700), 0);
    assert_int_equal(replace_with(folder, TF_REPLACE_TEXT, "x", &err), -1);
    assert_non_null(strstr(err.message, "is a folder"));
    assert_int_equal(rmdir(folder), 0);

    /* An HDF5 signature: a text output never overwrites it; an archive may. */
    path_in(h5, sizeof h5, "archive.h5");
    put(h5, "\x89HDF\r\n\x1a\nrest");
    assert_true(tf_replace_is_hdf5(h5));
    assert_int_equal(replace_with(h5, TF_REPLACE_TEXT, "x", &err), -1);
    assert_non_null(strstr(err.message, "HDF5 file"));
    assert_true(tf_replace_is_hdf5(h5));
    assert_int_equal(replace_with(h5, TF_REPLACE_ARCHIVE, "x", &err), 0);
    assert_string_equal(get(h5), "x");
    assert_false(tf_replace_is_hdf5(h5));

    /* A tunefarm journal (results not in their archive yet): never
     * overwritten by a text output (`diff -o A.h5.journal`). */
    char journal[512];
    path_in(journal, sizeof journal, "archive.h5.journal");
    put(journal, "TFJRNL02records");
    assert_true(tf_replace_is_journal(journal));
    assert_int_equal(replace_with(journal, TF_REPLACE_TEXT, "x", &err), -1);
    assert_non_null(strstr(err.message, "is a tunefarm journal"));
    assert_string_equal(get(journal), "TFJRNL02records");
    assert_int_equal(unlink(journal), 0);

    /* A device: text is written into it in place; an archive is refused. */
    struct tf_replace r;
    assert_int_equal(tf_replace_plan(&r, "/dev/null", TF_REPLACE_TEXT, &err), 0);
    assert_null(r.tmp);
    assert_string_equal(r.target, "/dev/null");
    tf_replace_discard(&r);
    assert_int_equal(replace_with("/dev/null", TF_REPLACE_TEXT, "x", &err), 0);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(replace_with("/dev/null", TF_REPLACE_ARCHIVE, "x", &err), -1);
    assert_non_null(strstr(err.message, "not a file"));
    assert_int_equal(temporaries(), 0);
}

/* /dev/fd/N names a descriptor of ours: written through it (a pipe gets the
 * bytes, a shell's `>> file` appends), never replaced; an archive there is
 * refused. A symbolic link to a device is written in place. */
static void test_own_descriptor(void **state)
{
    (void)state;
    struct tf_error err = {0};
    char log[300], fdpath[64];
    path_in(log, sizeof log, "log.txt");
    put(log, "first\n");
    int fd = open(log, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    snprintf(fdpath, sizeof fdpath, "/dev/fd/%d", fd);
    assert_int_equal(replace_with(fdpath, TF_REPLACE_TEXT, "second\n", &err), 0);
    assert_int_equal(replace_with(fdpath, TF_REPLACE_ARCHIVE, "x", &err), -1);
    assert_non_null(strstr(err.message, "descriptor"));
    close(fd);
    assert_string_equal(get(log), "first\nsecond\n");
    assert_int_equal(replace_with("/dev/fd/987654", TF_REPLACE_TEXT, "x", &err), -1);
    assert_non_null(strstr(err.message, "not open"));

    char link[300];
    path_in(link, sizeof link, "null-link");
    assert_int_equal(symlink("/dev/null", link), 0);
    assert_int_equal(replace_with(link, TF_REPLACE_TEXT, "x", &err), 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(temporaries(), 0);
}

/* A temporary of our name that is there already (another process of our
 * number, or one killed before) is neither truncated nor removed. */
static void test_foreign_temporary(void **state)
{
    (void)state;
    struct tf_error err = {0};
    char p[300], tmp[340];
    path_in(p, sizeof p, "busy.txt");
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
    put(tmp, "someone else's");
    assert_int_equal(replace_with(p, TF_REPLACE_TEXT, "mine", &err), -1);
    assert_non_null(strstr(err.message, "is there already"));
    assert_string_equal(get(tmp), "someone else's");
    assert_int_equal(access(p, F_OK), -1);
    unlink(tmp);
}

/* `name` in dir, holding `text`, last written `age` seconds ago. */
static void put_aged(const char *name, const char *text, long age)
{
    char p[400];
    path_in(p, sizeof p, name);
    put(p, text);
    const struct timespec when[2] = {{time(NULL) - age, 0}, {time(NULL) - age, 0}};
    assert_int_equal(utimensat(AT_FDCWD, p, when, AT_SYMLINK_NOFOLLOW), 0);
}

static bool there(const char *name)
{
    char p[400];
    path_in(p, sizeof p, name);
    return access(p, F_OK) == 0;
}

/* What killed writers of an archive left (nightly.h5.tmp.PID): under the
 * archive's lock (the caller's), they are removed, empty or not, young or
 * old; everything not exactly ours stays: other names, a link, someone
 * else's file. A symbolic link's archive has its
 * temporaries beside the file it names. */
static void test_leftovers(void **state)
{
    (void)state;
    const long old = 7200;
    char p[300];
    path_in(p, sizeof p, "nightly.h5");
    assert_int_equal(tf_replace_remove_leftovers(p), 0);
    put_aged("nightly.h5.tmp.4194301", "", old);       /* a killed merge's, empty */
    put_aged("nightly.h5.tmp.77", "\x89HDF half", old); /* killed mid-write */
    put_aged("nightly.h5.tmp.78", "", 5);               /* seconds old */
    put_aged("nightly.h5.tmp.x1", "", old);             /* not a pid */
    put_aged("nightly.h5.tmp.", "", old);
    put_aged("nightly.h5.tmp.79.bak", "", old);
    put_aged("nightly.h5.tmp83", "", old);              /* ".tmp" without its dot */
    put_aged("other.h5.tmp.80", "", old);               /* another archive's */
    put_aged("nightly.h5.journal", "", old);
    char link[300];
    path_in(link, sizeof link, "nightly.h5.tmp.81");
    assert_int_equal(symlink("other.h5.tmp.80", link), 0);
    const bool root = geteuid() == 0;
    if (root) {
        put_aged("nightly.h5.tmp.82", "", old);
        path_in(link, sizeof link, "nightly.h5.tmp.82");
        assert_int_equal(lchown(link, 4321, 4321), 0); /* another user's */
    }
    /* Ours go, whatever their age; someone else's is counted and stays. */
    assert_int_equal(tf_replace_remove_leftovers(p), root ? 1 : 0);
    assert_false(there("nightly.h5.tmp.4194301"));
    assert_false(there("nightly.h5.tmp.77"));
    assert_false(there("nightly.h5.tmp.78"));
    assert_true(there("nightly.h5.tmp.x1") && there("nightly.h5.tmp.") &&
                there("nightly.h5.tmp.79.bak") && there("nightly.h5.tmp83") &&
                there("other.h5.tmp.80") &&
                there("nightly.h5.journal") && there("nightly.h5.tmp.81"));
    assert_true(!root || there("nightly.h5.tmp.82"));
    /* Through a symbolic link: beside the file it names. */
    char sub[300], real[300];
    path_in(sub, sizeof sub, "sub");
    path_in(real, sizeof real, "sub/real.h5");
    assert_int_equal(mkdir(sub, 0700), 0);
    put_aged("sub/real.h5", "archive", 0);
    put_aged("sub/real.h5.tmp.90", "", old);
    path_in(link, sizeof link, "via-link.h5");
    assert_int_equal(symlink("sub/real.h5", link), 0);
    put_aged("via-link.h5.tmp.91", "", old); /* beside the link: not the archive's */
    assert_int_equal(tf_replace_remove_leftovers(link), 0);
    assert_false(there("sub/real.h5.tmp.90"));
    assert_true(there("via-link.h5.tmp.91"));
    assert_true(there("sub/real.h5"));
    /* A path no archive can be written to: nothing. */
    assert_int_equal(tf_replace_remove_leftovers("/dev/null"), 0);
    unlink(real);
    rmdir(sub);
}

/* The other names of a descriptor of ours: /proc/self/fd/N and
 * /proc/PID/fd/N append through it as /dev/fd/N does (not replaced by a file
 * of the report alone), and "/dev/fd/" without a number is no descriptor
 * (not 0, standard input): the folder it is, refused. */
static void test_own_descriptor_names(void **state)
{
    (void)state;
    struct tf_error err = {0};
    const int before = temporaries(); /* test_leftovers' kept ones */
    char log[300], fdpath[64];
    path_in(log, sizeof log, "proc-log.txt");
    put(log, "first\n");
    int fd = open(log, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
    assert_int_equal(replace_with(fdpath, TF_REPLACE_TEXT, "second\n", &err), 0);
    snprintf(fdpath, sizeof fdpath, "/proc/%ld/fd/%d", (long)getpid(), fd);
    assert_int_equal(replace_with(fdpath, TF_REPLACE_TEXT, "third\n", &err), 0);
    assert_int_equal(replace_with(fdpath, TF_REPLACE_ARCHIVE, "x", &err), -1);
    assert_non_null(strstr(err.message, "names a descriptor of this process"));
    close(fd);
    assert_string_equal(get(log), "first\nsecond\nthird\n");
    assert_int_equal(replace_with("/dev/fd/", TF_REPLACE_TEXT, "x", &err), -1);
    assert_non_null(strstr(err.message, "is a folder"));
    assert_int_equal(temporaries(), before);
}

/* The temporary of a symbolic link's file sits beside that file (the rename
 * stays within its file system, and tf_replace_remove_leftovers looks for it
 * there), not beside the link. All the permission bits are kept, setgid
 * included. A file that only begins like a journal is no journal. */
static void test_temporary_and_mode(void **state)
{
    (void)state;
    struct tf_error err = {0};
    char sub[300], real[300], link[300], want[400];
    path_in(sub, sizeof sub, "elsewhere");
    path_in(real, sizeof real, "elsewhere/report.txt");
    path_in(link, sizeof link, "report-link.txt");
    assert_int_equal(mkdir(sub, 0700), 0);
    put(real, "old");
    assert_int_equal(symlink("elsewhere/report.txt", link), 0);
    struct tf_replace r;
    assert_int_equal(tf_replace_plan(&r, link, TF_REPLACE_TEXT, &err), 0);
    char *resolved = realpath(real, NULL);
    assert_non_null(resolved);
    snprintf(want, sizeof want, "%s.tmp.%ld", resolved, (long)getpid());
    free(resolved);
    assert_string_equal(r.tmp, want);
    tf_replace_discard(&r);
    assert_int_equal(chmod(real, 02640), 0);
    assert_int_equal(replace_with(link, TF_REPLACE_TEXT, "new", &err), 0);
    assert_string_equal(get(real), "new");
    struct stat st;
    assert_int_equal(stat(real, &st), 0);
    assert_int_equal(st.st_mode & 07777, 02640);
    unlink(real);
    rmdir(sub);

    char p[300];
    path_in(p, sizeof p, "notes.txt");
    put(p, "TFJR notes, not a journal");
    assert_false(tf_replace_is_journal(p));
    assert_int_equal(replace_with(p, TF_REPLACE_TEXT, "x", &err), 0);
    assert_string_equal(get(p), "x");
}

static void test_discarded(void **state)
{
    (void)state;
    struct tf_error err = {0};
    char p[300];
    path_in(p, sizeof p, "kept.txt");
    put(p, "old");
    struct tf_replace r;
    assert_int_equal(tf_replace_plan(&r, p, TF_REPLACE_TEXT, &err), 0);
    int fd = tf_replace_open(&r, p, &err);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "half", 4), 4);
    close(fd);
    assert_int_equal(temporaries(), 1);
    tf_replace_discard(&r);
    assert_int_equal(temporaries(), 0);
    assert_string_equal(get(p), "old");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_and_existing),
        cmocka_unit_test(test_link_followed),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_discarded),
        cmocka_unit_test(test_own_descriptor),
        cmocka_unit_test(test_foreign_temporary),
        cmocka_unit_test(test_leftovers),
        cmocka_unit_test(test_own_descriptor_names),
        cmocka_unit_test(test_temporary_and_mode),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
