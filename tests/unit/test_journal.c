/* test_journal.c - the result journal (coordinator/journal.c) against real
 * files: appended batches come back on replay, a torn or corrupt tail is
 * dropped and counted, a journal already folded into its archive is ignored,
 * one from a newer checkpoint or another archive (by id, by its records'
 * ranges, by its job) is refused with nothing folded in, a flipped bit
 * anywhere in the header is caught, the older format is read only beside an
 * archive without an id, a second run is locked out, the lock's holder
 * removes temporaries killed writers left an hour ago, and a write that fails
 * (file size limit) leaves no partial record behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../../coordinator/journal.h"
#include "../../schema/replace.h"
#include "archive_fixture.h"

/* The header's size and where its fields are (schema/archive.md, "Journal"). */
#define HEADER 116
#define AT_CHECKPOINT 40
/* The archive id every journal of these tests names (make_archive's). */
#define TEST_ID "0123456789abcdef0123456789abcdef"

static char tmpdir[256];
static char archive[512];
static char journal[600];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tf_test_journal_XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    snprintf(archive, sizeof archive, "%s/a.h5", tmpdir);
    tf_journal_path(archive, journal, sizeof journal);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(journal);
    unlink(archive);
    rmdir(tmpdir);
    return 0;
}

/* A model with one kernel (gemm), two problems, one device and one run. */
static struct tf_archive *make_archive(struct test_kernel *gemm)
{
    struct tf_error err = {0};
    make_gemm(gemm);
    struct tf_archive *a = tf_archive_create();
    tf_strlcpy(a->id, TEST_ID, sizeof a->id);
    struct tf_device d = make_device("host", "CPU", "cpu-0", "node1");
    tf_archive_add_device(a, &d);
    struct tf_archive_run run = make_run("demo", 1714560000.0, 0);
    tf_archive_add_run(a, &run);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &gemm->k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &gemm->k, 0);
    tf_archive_problem_for(ak, &gemm->k, 1);
    return a;
}

static struct tf_archive_row make_row(uint64_t config, double median)
{
    struct tf_archive_row row = {.run = 0, .device = 0};
    tf_result_init(&row.r, 0, (uint32_t)(config % 2), config, TF_STATUS_OK);
    row.r.time_median = median;
    row.r.samples = 10;
    tf_strlcpy(row.r.message, "", sizeof row.r.message);
    return row;
}


/* Reset `j` after checkpoint `generation` of an archive with id TEST_ID, for job "demo". */
static void reset_to(struct tf_journal *j, uint64_t generation)
{
    struct tf_error err = {0};
    struct tf_archive *a = tf_archive_create();
    tf_strlcpy(a->id, TEST_ID, sizeof a->id);
    a->checkpoint = generation;
    char job[65];
    memset(job, 'f', 64); /* make_run's job hash */
    job[64] = '\0';
    if (tf_journal_reset(j, a, job, &err) != 0)
        fail_msg("reset: %s", err.message);
    tf_archive_destroy(a);
}

/* Append batches of 3 and 2 rows after checkpoint `generation`. */
static void append_two_batches(uint64_t generation)
{
    struct tf_error err = {0};
    struct tf_journal *j = tf_journal_open(archive, &err);
    if (j == NULL)
        fail_msg("open: %s", err.message);
    reset_to(j, generation);
    const uint32_t kernels[3] = {0, 0, 0};
    struct tf_archive_row rows[3] = {make_row(1, 1e-3), make_row(2, 2e-3), make_row(3, 3e-3)};
    assert_int_equal(tf_journal_append(j, kernels, rows, 3, &err), 0);
    rows[0] = make_row(4, 4e-3);
    rows[1] = make_row(5, 5e-3);
    assert_int_equal(tf_journal_append(j, kernels, rows, 2, &err), 0);
    tf_journal_close(j);
}

static off_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

static void test_replay_round_trip(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_archive *a = make_archive(&gemm);
    a->checkpoint = 7;
    append_two_batches(7);
    struct tf_error err = {0};
    struct tf_journal_replay rep;
    assert_int_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_true(rep.present);
    assert_false(rep.stale);
    assert_int_equal(rep.records, 5);
    assert_int_equal(rep.torn_bytes, 0);
    assert_int_equal(a->kernels[0].nrows, 5);
    for (uint64_t i = 0; i < 5; i++) {
        assert_int_equal(a->kernels[0].rows[i].r.config, i + 1);
        assert_true(a->kernels[0].rows[i].r.time_median == 1e-3 * (double)(i + 1));
        assert_int_equal(a->kernels[0].rows[i].r.problem, (i + 1) % 2);
    }
    /* The journal of an archive that has none is simply absent. */
    unlink(journal);
    assert_int_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_false(rep.present);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

static void test_torn_and_corrupt_tail(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_archive *a = make_archive(&gemm);
    struct tf_error err = {0};
    struct tf_journal_replay rep;
    append_two_batches(0);
    /* A crash in the middle of the last record: 5 bytes of it missing. */
    off_t size = file_size(journal);
    assert_int_equal(truncate(journal, size - 5), 0);
    assert_int_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_int_equal(rep.records, 4);
    assert_true(rep.torn_bytes > 0 && rep.torn_bytes < (uint64_t)size / 4);
    assert_int_equal(a->kernels[0].nrows, 4);

    /* A zero-filled end (a power cut on a file system that grew the file but
     * lost its data): a torn end, the records before it kept. Read as
     * records of length 0 (CRC-32 of nothing is 0), it refused the journal
     * as a newer tunefarm's (review U). */
    append_two_batches(0);
    size = file_size(journal);
    assert_int_equal(truncate(journal, size + 4096), 0);
    struct test_kernel gemm0;
    struct tf_archive *z = make_archive(&gemm0);
    if (tf_journal_replay(NULL, archive, z, &rep, &err) != 0)
        fail_msg("a zero-filled end refused the journal: %s", err.message);
    assert_int_equal(rep.records, 5);
    assert_int_equal(rep.torn_bytes, 4096);
    assert_int_equal(z->kernels[0].nrows, 5);
    tf_archive_destroy(z);
    tk_free(&gemm0);

    /* A flipped byte inside the third record, whole records after it: damage in
     * the middle, not a torn end: refused, nothing folded in (dropping it and
     * everything after would lose two good results; hostile review 2026-11-23 J1). */
    append_two_batches(0);
    size = file_size(journal);
    int fd = open(journal, O_RDWR);
    assert_true(fd >= 0);
    const off_t record = (size - HEADER) / 5;
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, HEADER + 2 * record + 30), 1);
    c ^= 0x40;
    assert_int_equal(pwrite(fd, &c, 1, HEADER + 2 * record + 30), 1);
    close(fd);
    struct test_kernel gemm2;
    struct tf_archive *b = make_archive(&gemm2);
    assert_int_not_equal(tf_journal_replay(NULL, archive, b, &rep, &err), 0);
    assert_non_null(strstr(err.message, "fails its checksum"));
    assert_int_equal(b->kernels[0].nrows, 0);
    /* A flip in the last record is a torn end: the records before it are kept. */
    fd = open(journal, O_RDWR);
    assert_true(fd >= 0);
    c ^= 0x40; /* mend the third */
    assert_int_equal(pwrite(fd, &c, 1, HEADER + 2 * record + 30), 1);
    assert_int_equal(pread(fd, &c, 1, HEADER + 4 * record + 30), 1);
    c ^= 0x40;
    assert_int_equal(pwrite(fd, &c, 1, HEADER + 4 * record + 30), 1);
    close(fd);
    assert_int_equal(tf_journal_replay(NULL, archive, b, &rep, &err), 0);
    assert_int_equal(rep.records, 4);
    assert_int_equal(rep.torn_bytes, (uint64_t)(size - HEADER - 4 * record));
    /* A lock holder that replays then resets starts clean. */
    struct tf_journal *j = tf_journal_open(archive, &err);
    assert_non_null(j);
    reset_to(j, 1);
    tf_journal_close(j);
    assert_int_equal(file_size(journal), HEADER);
    tf_archive_destroy(b);
    tf_archive_destroy(a);
    tk_free(&gemm2);
    tk_free(&gemm);
}

static void test_generations(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_archive *a = make_archive(&gemm);
    struct tf_error err = {0};
    struct tf_journal_replay rep;
    append_two_batches(3);
    /* Checkpoint 4 was written, the journal reset never happened: already folded in. */
    a->checkpoint = 4;
    assert_int_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_true(rep.stale);
    assert_int_equal(rep.records, 0);
    assert_int_equal(a->kernels[0].nrows, 0);
    /* An archive older than its journal: put back from a copy. Refused, nothing applied. */
    a->checkpoint = 2;
    assert_int_not_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_non_null(strstr(err.message, "older copy"));
    assert_int_equal(a->kernels[0].nrows, 0);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

static void test_foreign_journals(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_archive *a = make_archive(&gemm);
    struct tf_error err = {0};
    struct tf_journal_replay rep;
    FILE *f = fopen(journal, "w");
    assert_non_null(f);
    fputs("this is a text file, not a journal at all\n", f);
    fclose(f);
    assert_int_not_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_non_null(strstr(err.message, "not a tunefarm journal"));

    /* Well-formed records naming a kernel this archive does not have. */
    struct tf_journal *j = tf_journal_open(archive, &err);
    assert_non_null(j);
    reset_to(j, 0);
    const uint32_t kernels[1] = {3};
    struct tf_archive_row row = make_row(1, 1e-3);
    assert_int_equal(tf_journal_append(j, kernels, &row, 1, &err), 0);
    tf_journal_close(j);
    assert_int_not_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_non_null(strstr(err.message, "another archive"));
    assert_int_equal(a->kernels[0].nrows, 0);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

static void test_one_run_at_a_time(void **state)
{
    (void)state;
    struct tf_error err = {0};
    struct tf_journal *j = tf_journal_open(archive, &err);
    assert_non_null(j);
    assert_true(tf_journal_created(j));
    struct tf_journal *k = tf_journal_open(archive, &err);
    assert_null(k);
    assert_non_null(strstr(err.message, "in use by another run"));
    tf_journal_close(j);
    k = tf_journal_open(archive, &err);
    assert_non_null(k);
    assert_false(tf_journal_created(k)); /* it was there: a failed run must not remove it */
    /* Appending before the first reset is a broken invariant, reported as an error. */
    struct tf_archive_row row = make_row(1, 1e-3);
    const uint32_t kernels[1] = {0};
    assert_int_not_equal(tf_journal_append(k, kernels, &row, 1, &err), 0);
    tf_journal_close(k);
    tf_journal_close(NULL);
}

/* A merge killed while it wrote left an empty a.h5.tmp.PID, and a checkpoint
 * killed a moment ago another. Whoever next takes the archive's lock (a run,
 * a merge, an import) removes both; an open that does not get the lock
 * removes nothing. */
static void test_open_removes_stale_temporaries(void **state)
{
    (void)state;
    struct tf_error err = {0};
    char stale[700], young[700];
    snprintf(stale, sizeof stale, "%s.tmp.4194301", archive);
    snprintf(young, sizeof young, "%s.tmp.4194302", archive);
    const time_t then = time(NULL) - 7200;
    const struct timespec old[2] = {{then, 0}, {then, 0}};
    for (int i = 0; i < 2; i++) {
        int fd = open(i ? young : stale, O_WRONLY | O_CREAT | O_EXCL, 0644);
        assert_true(fd >= 0);
        close(fd);
    }
    assert_int_equal(utimensat(AT_FDCWD, stale, old, 0), 0);
    struct tf_journal *j = tf_journal_open(archive, &err);
    assert_non_null(j);
    assert_int_equal(access(stale, F_OK), -1);
    assert_int_equal(access(young, F_OK), -1);
    /* Locked by `j`: a second writer is refused and touches nothing. */
    int fd = open(stale, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    close(fd);
    assert_null(tf_journal_open(archive, &err));
    assert_int_equal(access(stale, F_OK), 0);
    tf_journal_close(j);
    unlink(stale);
}

/* An archive named through symbolic links is the file they name (the writer
 * replaces that file): one journal beside it, one lock. A link in another
 * folder with a relative target and a chain of links both lead there; a
 * second run through any of them is refused while the first holds the lock.
 * A link to nothing is refused (no archive can be written through it), and a
 * journal an older tunefarm left beside a link stops the run, saying where
 * it belongs. */
static void test_links_share_the_journal(void **state)
{
    (void)state;
    struct tf_error err = {0};
    char sub[600], lnk[700], chain[700], got[1200];
    snprintf(sub, sizeof sub, "%s/sub", tmpdir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(lnk, sizeof lnk, "%s/lnk.h5", sub);
    assert_int_equal(symlink("../a.h5", lnk), 0); /* relative, to a file not there yet */
    snprintf(chain, sizeof chain, "%s/chain.h5", tmpdir);
    assert_int_equal(symlink(lnk, chain), 0);
    char expect[1200];
    snprintf(expect, sizeof expect, "%s/sub/../a.h5.journal", tmpdir);
    tf_journal_path(lnk, got, sizeof got);
    assert_string_equal(got, expect);
    tf_journal_path(chain, got, sizeof got);
    assert_string_equal(got, expect);
    struct tf_journal *j = tf_journal_open(chain, &err); /* a.h5 is not there yet */
    assert_null(j);
    assert_non_null(strstr(err.message, "symbolic link whose file cannot be reached"));
    FILE *f = fopen(archive, "w");
    assert_non_null(f);
    fclose(f);
    j = tf_journal_open(chain, &err);
    assert_non_null(j);
    struct tf_journal *k = tf_journal_open(archive, &err);
    assert_null(k);
    assert_non_null(strstr(err.message, "in use by another run"));
    k = tf_journal_open(lnk, &err);
    assert_null(k);
    tf_journal_close(j);
    struct stat st;
    assert_int_equal(stat(journal, &st), 0); /* a.h5.journal, beside the file */
    char stray[800];
    snprintf(stray, sizeof stray, "%s.journal", lnk);
    assert_int_not_equal(stat(stray, &st), 0); /* none beside the links */
    snprintf(stray, sizeof stray, "%s.journal", chain);
    assert_int_not_equal(stat(stray, &st), 0);
    /* lnk.h5.journal with records, as an older tunefarm left it */
    snprintf(stray, sizeof stray, "%s.journal", lnk);
    f = fopen(stray, "w");
    assert_non_null(f);
    fputs("TFJRNL02...", f);
    fclose(f);
    assert_null(tf_journal_open(lnk, &err));
    assert_non_null(strstr(err.message, "lies beside the symbolic link"));
    bool live;
    struct tf_journal *r = NULL;
    assert_int_not_equal(tf_journal_open_read(lnk, &r, &live, &err), 0);
    struct tf_journal_replay rep;
    assert_null(tf_journal_read_archive(lnk, &rep, &err));
    assert_non_null(strstr(err.message, "lies beside the symbolic link"));
    unlink(stray);
    unlink(chain);
    unlink(lnk);
    rmdir(sub);
}

/* A full disk, as a file size limit: the batch fails, the file is cut back to
 * whole records, and what was journaled before replays. */
static void test_failed_write_leaves_whole_records(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    struct tf_journal *j = tf_journal_open(archive, &err);
    assert_non_null(j);
    reset_to(j, 0);
    const uint32_t kernels[40] = {0};
    struct tf_archive_row rows[40];
    for (int i = 0; i < 40; i++)
        rows[i] = make_row((uint64_t)i, 1e-3);
    assert_int_equal(tf_journal_append(j, kernels, rows, 2, &err), 0);
    const off_t before = file_size(journal);

    struct rlimit old, small;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    small = old;
    small.rlim_cur = (rlim_t)before + 1000; /* room for a few records, not 40 */
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    int rc = tf_journal_append(j, kernels, rows, 40, &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err.message, "cannot write the journal"));
    assert_int_equal(file_size(journal), before);
    /* The journal goes on where it was. */
    assert_int_equal(tf_journal_append(j, kernels, rows + 2, 1, &err), 0);
    tf_journal_close(j);

    struct tf_archive *a = make_archive(&gemm);
    struct tf_journal_replay rep;
    assert_int_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_int_equal(rep.records, 3);
    assert_int_equal(rep.torn_bytes, 0);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

static void read_file(const char *path, unsigned char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    *len = (size_t)ftell(f);
    rewind(f);
    *data = malloc(*len + 1);
    assert_int_equal(fread(*data, 1, *len, f), *len);
    fclose(f);
}

static void write_file(const char *path, const unsigned char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* One flipped bit anywhere in the header is caught: with results after it the
 * journal is refused, saying its header is damaged, and nothing is folded in
 * (before the header had a CRC, a flipped checkpoint bit made the journal look
 * already folded in and its results were silently measured again). With no
 * results after it, it is ignored and said to be damaged. */
static void test_header_bit_flips(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    struct tf_journal_replay rep;
    append_two_batches(5);
    unsigned char *data;
    size_t len;
    read_file(journal, &data, &len);
    assert_true(len > HEADER);
    for (size_t i = 0; i < HEADER; i++) {
        for (int bit = 0; bit < 8; bit++) {
            data[i] ^= (unsigned char)(1u << bit);
            write_file(journal, data, len);
            data[i] ^= (unsigned char)(1u << bit);
            struct tf_archive *a = make_archive(&gemm);
            a->checkpoint = 5;
            if (tf_journal_replay(NULL, archive, a, &rep, &err) == 0)
                fail_msg("byte %zu bit %d flipped: replayed (%llu records, stale %d)", i, bit,
                         (unsigned long long)rep.records, rep.stale);
            const char *want = i < 8 ? "not a tunefarm journal" : "has a damaged header";
            if (strstr(err.message, want) == NULL)
                fail_msg("byte %zu bit %d flipped: '%s' does not say '%s'", i, bit, err.message,
                         want);
            assert_int_equal(a->kernels[0].nrows, 0);
            tf_archive_destroy(a);
            tk_free(&gemm);
        }
    }
    /* The header intact: all five come back. */
    write_file(journal, data, len);
    struct tf_archive *a = make_archive(&gemm);
    a->checkpoint = 5;
    assert_int_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_int_equal(rep.records, 5);
    tf_archive_destroy(a);
    tk_free(&gemm);
    /* A bare header, damaged: nothing after it to lose, ignored and said so. */
    data[AT_CHECKPOINT] ^= 1;
    write_file(journal, data, HEADER);
    a = make_archive(&gemm);
    a->checkpoint = 5;
    assert_int_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_true(rep.damaged_header);
    assert_int_equal(rep.records, 0);
    tf_archive_destroy(a);
    tk_free(&gemm);
    free(data);
}

/* Append `row` of kernel `kernel` after two good rows, at checkpoint 0. */
static void journal_with_bad_row(uint32_t kernel, struct tf_archive_row row)
{
    struct tf_error err = {0};
    unlink(journal);
    struct tf_journal *j = tf_journal_open(archive, &err);
    assert_non_null(j);
    reset_to(j, 0);
    const uint32_t kernels[3] = {0, 0, kernel};
    struct tf_archive_row rows[3] = {make_row(1, 1e-3), make_row(2, 2e-3), row};
    assert_int_equal(tf_journal_append(j, kernels, rows, 3, &err), 0);
    tf_journal_close(j);
}

/* Issue 14 item 8: records carry the compiler's warnings (wire version 4) and
 * replay keeps them; a journal written before (version 2 and 3 records, which
 * end at the message) still replays, its rows' warnings unknown (-1). */
static void test_warnings_and_version_2_records(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    struct tf_journal_replay rep;
    unlink(journal);
    struct tf_journal *j = tf_journal_open(archive, &err);
    assert_non_null(j);
    reset_to(j, 0);
    const uint32_t kernels[2] = {0, 0};
    struct tf_archive_row rows[2] = {make_row(1, 1e-3), make_row(2, 2e-3)};
    rows[0].r.warnings = 3;
    tf_strlcpy(rows[0].r.first_warning, "gemm.c:7:5: warning: x", sizeof rows[0].r.first_warning);
    rows[1].r.warnings = 0;
    assert_int_equal(tf_journal_append(j, kernels, rows, 2, &err), 0);
    tf_journal_close(j);
    struct tf_archive *a = make_archive(&gemm);
    assert_int_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_int_equal(a->kernels[0].nrows, 2);
    assert_int_equal(a->kernels[0].rows[0].r.warnings, 3);
    assert_string_equal(a->kernels[0].rows[0].r.first_warning, "gemm.c:7:5: warning: x");
    assert_int_equal(a->kernels[0].rows[1].r.warnings, 0);
    tf_archive_destroy(a);
    tk_free(&gemm);

    /* The same records as version 3 wrote them: without the last 8 + 22 and
     * 8 bytes (warnings u32, first_warning's length u32 and text). */
    size_t len = 0;
    unsigned char *data = NULL;
    FILE *f = fopen(journal, "rb");
    assert_non_null(f);
    data = malloc(1 << 16);
    len = fread(data, 1, 1 << 16, f);
    fclose(f);
    unsigned char *out = malloc(len);
    size_t at = 116, o = 116;
    memcpy(out, data, 116);
    for (int r = 0; r < 2; r++) {
        uint32_t n = (uint32_t)data[at] | (uint32_t)data[at + 1] << 8 |
                     (uint32_t)data[at + 2] << 16 | (uint32_t)data[at + 3] << 24;
        const uint32_t cut = r == 0 ? 8 + 22 : 8;
        assert_true(at + 8 + n <= len && n > cut);
        const uint32_t m = n - cut;
        const uLong crc = crc32(0L, data + at + 8, m);
        for (int b = 0; b < 4; b++) {
            out[o + (size_t)b] = (unsigned char)(m >> (8 * b));
            out[o + 4 + (size_t)b] = (unsigned char)(crc >> (8 * b));
        }
        memcpy(out + o + 8, data + at + 8, m);
        o += 8 + m;
        at += 8 + n;
    }
    assert_int_equal(at, len);
    f = fopen(journal, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(out, 1, o, f), o);
    fclose(f);
    free(out);
    free(data);
    a = make_archive(&gemm);
    if (tf_journal_replay(NULL, archive, a, &rep, &err) != 0)
        fail_msg("version 2 records: %s", err.message);
    assert_int_equal(rep.records, 2);
    assert_int_equal(rep.torn_bytes, 0);
    assert_int_equal(a->kernels[0].nrows, 2);
    assert_int_equal(a->kernels[0].rows[0].r.config, 1);
    assert_int_equal(a->kernels[0].rows[0].r.warnings, -1);
    assert_string_equal(a->kernels[0].rows[0].r.first_warning, "");
    assert_true(a->kernels[0].rows[1].r.time_median == 2e-3);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

/* A record naming a problem, run, device, kernel or configuration the
 * archive does not have fails the replay, and nothing of the journal is
 * folded in, not even the good records before it. */
static void test_out_of_range_records(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    struct tf_journal_replay rep;
    for (int what = 0; what < 5; what++) {
        struct tf_archive_row row = make_row(3, 3e-3);
        uint32_t kernel = 0;
        const char *name = what == 0   ? "problem"
                           : what == 1 ? "run"
                           : what == 2 ? "device"
                           : what == 3 ? "kernel"
                                       : "configuration";
        if (what == 0)
            row.r.problem = 2; /* gemm has problems 0 and 1 */
        else if (what == 1)
            row.run = 1;       /* one run: 0 */
        else if (what == 2)
            row.device = 1;    /* one device: 0 */
        else if (what == 3)
            kernel = 1;        /* one kernel: 0 */
        struct tf_archive *a = make_archive(&gemm);
        if (what == 4)         /* the space's size: one past its last configuration */
            row.r.config = tf_archive_cartesian(&a->kernels[0]);
        journal_with_bad_row(kernel, row);
        if (tf_journal_replay(NULL, archive, a, &rep, &err) == 0)
            fail_msg("a record with an out-of-range %s was replayed", name);
        assert_non_null(strstr(err.message, "belongs to another archive"));
        if (a->kernels[0].nrows != 0)
            fail_msg("out-of-range %s: %llu rows folded in before it", name,
                     (unsigned long long)a->kernels[0].nrows);
        tf_archive_destroy(a);
        tk_free(&gemm);
    }
}

/* A whole record with a right checksum whose payload does not decode (a newer
 * encoding, or damage the CRC missed) is not a torn end: the journal is
 * refused, naming the byte, and nothing is folded in. It was dropped as
 * "torn", with every record after it. With a good record after it or at
 * the end, the same. */
static void test_undecodable_record(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    struct tf_journal_replay rep;
    for (int trailing = 0; trailing < 2; trailing++) {
        journal_with_bad_row(0, make_row(3, 3e-3)); /* three good records */
        struct stat st;
        assert_int_equal(stat(journal, &st), 0);
        FILE *f = fopen(journal, "ab");
        assert_non_null(f);
        /* kernel 0, run 0, device 0, then 5 bytes no result encoding is */
        unsigned char payload[17] = {0};
        memcpy(payload + 12, "\xff\x01\x02\x03\x04", 5);
        const uint32_t head[2] = {sizeof payload, (uint32_t)crc32(0L, payload, sizeof payload)};
        unsigned char le[8];
        for (int i = 0; i < 8; i++)
            le[i] = (unsigned char)(head[i / 4] >> (8 * (i % 4)));
        assert_int_equal(fwrite(le, 1, 8, f), 8);
        assert_int_equal(fwrite(payload, 1, sizeof payload, f), sizeof payload);
        assert_int_equal(fclose(f), 0);
        if (trailing) { /* the three good records again, after it */
            unsigned char *copy = NULL;
            size_t len = 0;
            f = fopen(journal, "rb");
            assert_non_null(f);
            copy = malloc((size_t)st.st_size);
            assert_non_null(copy);
            len = fread(copy, 1, (size_t)st.st_size, f);
            fclose(f);
            assert_int_equal(len, (size_t)st.st_size);
            f = fopen(journal, "ab");
            assert_non_null(f);
            const size_t header = 116; /* TFJRNL02's header */
            assert_int_equal(fwrite(copy + header, 1, len - header, f), len - header);
            assert_int_equal(fclose(f), 0);
            free(copy);
        }
        struct tf_archive *a = make_archive(&gemm);
        if (tf_journal_replay(NULL, archive, a, &rep, &err) == 0)
            fail_msg("a CRC-valid record that does not decode was taken for a torn end "
                     "(%llu records, %llu torn bytes)", (unsigned long long)rep.records,
                     (unsigned long long)rep.torn_bytes);
        char at[64];
        snprintf(at, sizeof at, "record at byte %lld", (long long)st.st_size);
        if (strstr(err.message, at) == NULL || strstr(err.message, "cannot decode") == NULL)
            fail_msg("the refusal does not say '%s ... cannot decode': %s", at, err.message);
        assert_int_equal(a->kernels[0].nrows, 0);
        tf_archive_destroy(a);
        tk_free(&gemm);
    }
}

/* The journal names its archive: one of another archive (by id), of an
 * archive without an id, or of a job the archive has no run of, is refused
 * with a message naming both files, and nothing is folded in. */
static void test_identity(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    struct tf_journal_replay rep;
    append_two_batches(3);
    struct tf_archive *a = make_archive(&gemm);
    a->checkpoint = 3; /* the checkpoint counters match, as small integers do */
    a->id[0] = 'f';    /* but it is another archive */
    assert_int_not_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_non_null(strstr(err.message, "belongs to another archive (id " TEST_ID));
    assert_non_null(strstr(err.message, journal));
    assert_non_null(strstr(err.message, "not to '"));
    assert_non_null(strstr(err.message, archive));
    assert_non_null(strstr(err.message, "Move the journal away"));
    assert_int_equal(a->kernels[0].nrows, 0);
    /* An archive written before ids, beside a journal that names one. */
    a->id[0] = '\0';
    assert_int_not_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_non_null(strstr(err.message, "belongs to another archive"));
    assert_int_equal(a->kernels[0].nrows, 0);
    /* Its own id, but no run of the job that wrote it: another copy's journal. */
    tf_strlcpy(a->id, TEST_ID, sizeof a->id);
    a->runs[0].job_hash[0] = 'e';
    assert_int_not_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_non_null(strstr(err.message, "has no run of"));
    assert_int_equal(a->kernels[0].nrows, 0);
    a->runs[0].job_hash[0] = 'f';
    assert_int_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_int_equal(rep.records, 5);
    /* An archive without an id cannot have its journal reset. */
    struct tf_journal *j = tf_journal_open(archive, &err);
    assert_non_null(j);
    a->id[0] = '\0';
    assert_int_not_equal(tf_journal_reset(j, a, NULL, &err), 0);
    tf_journal_close(j);
    tf_archive_destroy(a);
    tk_free(&gemm);
}

/* An archive of two kernels, two devices and two runs: each record goes
 * back to its own kernel with its own run and device index. Every other
 * test's archive has one of each, where a record put in kernel 0, or its
 * run and device read the other way round, would still look right. */
static struct tf_archive *make_wide_archive(struct test_kernel *gemm, struct test_kernel *vecadd)
{
    struct tf_error err = {0};
    struct tf_archive *a = make_archive(gemm);
    make_vecadd(vecadd);
    struct tf_device d = make_device("host", "CPU", "cpu-1", "node2");
    assert_int_equal(tf_archive_add_device(a, &d), 1);
    struct tf_archive_run run = make_run("demo", 1714570000.0, 0);
    assert_int_equal(tf_archive_add_run(a, &run), 1);
    struct tf_archive_kernel *ak = tf_archive_kernel_for(a, &vecadd->k, &err);
    assert_non_null(ak);
    tf_archive_problem_for(ak, &vecadd->k, 0);
    assert_int_equal(a->nkernels, 2);
    return a;
}

static void test_replay_keeps_kernel_run_and_device(void **state)
{
    (void)state;
    struct test_kernel gemm, vecadd;
    struct tf_error err = {0};
    struct tf_journal_replay rep;
    unlink(journal);
    struct tf_journal *j = tf_journal_open(archive, &err);
    assert_non_null(j);
    reset_to(j, 0);
    const uint32_t kernels[3] = {1, 0, 1};
    struct tf_archive_row rows[3] = {make_row(2, 1e-3), make_row(1, 2e-3), make_row(0, 3e-3)};
    rows[0].r.problem = rows[2].r.problem = 0; /* vecadd has one problem */
    rows[0].run = 1;                           /* run 1 on device 0 */
    rows[1].device = 1;                        /* run 0 on device 1 */
    rows[2].run = rows[2].device = 1;
    assert_int_equal(tf_journal_append(j, kernels, rows, 3, &err), 0);
    tf_journal_close(j);
    struct tf_archive *a = make_wide_archive(&gemm, &vecadd);
    if (tf_journal_replay(NULL, archive, a, &rep, &err) != 0)
        fail_msg("replay: %s", err.message);
    assert_int_equal(rep.records, 3);
    assert_int_equal(a->kernels[0].nrows, 1);
    assert_int_equal(a->kernels[1].nrows, 2);
    const struct tf_archive_row *g = &a->kernels[0].rows[0], *v = a->kernels[1].rows;
    assert_true(g->r.config == 1 && g->run == 0 && g->device == 1 && g->r.problem == 1);
    assert_true(v[0].r.config == 2 && v[0].run == 1 && v[0].device == 0);
    assert_true(v[1].r.config == 0 && v[1].run == 1 && v[1].device == 1);
    assert_true(v[1].r.time_median == 3e-3);
    tf_archive_destroy(a);
    tk_free(&vecadd);
    tk_free(&gemm);
}

/* Format 1 (16-byte header "TFJRNL01" + checkpoint, no id): read beside an
 * archive without an id (both written before ids), refused beside one with. */
static void test_old_format(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    struct tf_journal_replay rep;
    append_two_batches(2);
    unsigned char *data;
    size_t len;
    read_file(journal, &data, &len);
    unsigned char *old = malloc(len);
    memcpy(old, "TFJRNL01", 8);
    memcpy(old + 8, data + AT_CHECKPOINT, 8);
    memcpy(old + 16, data + HEADER, len - HEADER);
    write_file(journal, old, 16 + len - HEADER);
    struct tf_archive *a = make_archive(&gemm);
    a->checkpoint = 2;
    assert_int_not_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_non_null(strstr(err.message, "older format TFJRNL01"));
    assert_int_equal(a->kernels[0].nrows, 0);
    a->id[0] = '\0';
    assert_int_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_true(rep.old_format);
    assert_int_equal(rep.records, 5);
    assert_int_equal(a->kernels[0].nrows, 5);
    /* Its records are checked the same way. */
    a->checkpoint = 1;
    assert_int_not_equal(tf_journal_replay(NULL, archive, a, &rep, &err), 0);
    assert_non_null(strstr(err.message, "older copy"));
    tf_archive_destroy(a);
    tk_free(&gemm);
    free(old);
    free(data);
}

/* Records written by a tunefarm before wire version 3 (a run it left
 * unfinished, resumed by this one): each result ends before `noisy` and
 * `energy_status`. They are read, with those as "not noisy" and "unknown",
 * beside records of the current encoding in the same journal. */
static void test_records_before_wire_3(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    struct tf_journal_replay rep;
    struct tf_journal *j = tf_journal_open(archive, &err);
    assert_non_null(j);
    reset_to(j, 4);
    const uint32_t kernels[3] = {0, 0, 0};
    struct tf_archive_row rows[3] = {make_row(1, 1e-3), make_row(2, 2e-3), make_row(3, 3e-3)};
    for (int i = 0; i < 3; i++) {
        rows[i].r.noisy = 1;
        rows[i].r.energy_status = TF_ENERGY_MEASURED;
        rows[i].r.energy_j = 0.5;
    }
    assert_int_equal(tf_journal_append(j, kernels, rows, 3, &err), 0);
    tf_journal_close(j);
    /* The first two records rewritten as version 2 wrote them: without the
     * two bytes of version 3 and the eight of version 4 (warnings and an
     * empty first_warning), their CRC recomputed (zlib's crc32 is the
     * journal's). */
    unsigned char *data;
    size_t len;
    read_file(journal, &data, &len);
    unsigned char *old = malloc(len);
    size_t in = HEADER, out = HEADER;
    memcpy(old, data, HEADER);
    for (int rec = 0; rec < 3; rec++) {
        uint32_t n;
        memcpy(&n, data + in, 4); /* little-endian, as this machine */
        const uint32_t cut = rec < 2 ? n - 2 - 8 : n;
        memcpy(old + out, &cut, 4);
        const uint32_t crc = (uint32_t)crc32(0L, data + in + 8, cut);
        memcpy(old + out + 4, &crc, 4);
        memcpy(old + out + 8, data + in + 8, cut);
        in += 8 + n;
        out += 8 + cut;
    }
    assert_int_equal(in, len);
    write_file(journal, old, out);
    struct tf_archive *a = make_archive(&gemm);
    a->checkpoint = 4;
    if (tf_journal_replay(NULL, archive, a, &rep, &err) != 0)
        fail_msg("replay: %s", err.message);
    assert_int_equal(rep.records, 3);
    assert_int_equal(rep.torn_bytes, 0);
    const struct tf_archive_kernel *ak = &a->kernels[0];
    assert_int_equal(ak->nrows, 3);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(ak->rows[i].r.config, i + 1);
        assert_true(ak->rows[i].r.time_median == 1e-3 * (i + 1));
        assert_int_equal(ak->rows[i].r.noisy, 0);
        assert_int_equal(ak->rows[i].r.energy_status, TF_ENERGY_UNKNOWN);
        assert_true(ak->rows[i].r.energy_j == 0.5); /* the value stays what it was */
    }
    assert_int_equal(ak->rows[2].r.noisy, 1);
    assert_int_equal(ak->rows[2].r.energy_status, TF_ENERGY_MEASURED);
    tf_archive_destroy(a);
    tk_free(&gemm);
    free(old);
    free(data);
}

/* tunefarm merge reads an input under a shared lock: no run starts on it
 * meanwhile; if a run holds it, the input is live (read without a lock). */
static void test_open_read(void **state)
{
    (void)state;
    struct tf_error err = {0};
    struct tf_journal *r = NULL;
    bool live = true;
    assert_int_equal(tf_journal_open_read(archive, &r, &live, &err), 0);
    assert_null(r); /* no journal: nothing to lock */
    assert_false(live);
    struct tf_journal *run = tf_journal_open(archive, &err);
    assert_non_null(run);
    assert_int_equal(tf_journal_open_read(archive, &r, &live, &err), 0);
    assert_non_null(r);
    assert_true(live);
    tf_journal_close(r);
    tf_journal_close(run);
    assert_int_equal(tf_journal_open_read(archive, &r, &live, &err), 0);
    assert_false(live);
    assert_null(tf_journal_open(archive, &err));
    assert_non_null(strstr(err.message, "in use by another run"));
    tf_journal_close(r);
    run = tf_journal_open(archive, &err);
    assert_non_null(run);
    tf_journal_close(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_replay_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_and_corrupt_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_journals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_run_at_a_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_removes_stale_temporaries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_links_share_the_journal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_write_leaves_whole_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_bit_flips, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_range_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_undecodable_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_warnings_and_version_2_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_keeps_kernel_run_and_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_format, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_before_wire_3, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_read, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
