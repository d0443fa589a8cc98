/* test_journal.c - the result journal (coordinator/journal.c) against real
 * files: appended batches come back on replay, a torn or corrupt tail is
 * dropped and counted, a journal already folded into its archive is ignored,
 * one from a newer checkpoint or another archive is refused, a second run is
 * locked out, and a write that fails (file size limit) leaves no partial
 * record behind. */
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
#include <unistd.h>

#include "../../coordinator/journal.h"
#include "archive_fixture.h"

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

/* Append batches of 3 and 2 rows after checkpoint `generation`. */
static void append_two_batches(uint64_t generation)
{
    struct tf_error err = {0};
    struct tf_journal *j = tf_journal_open(archive, &err);
    if (j == NULL)
        fail_msg("open: %s", err.message);
    assert_int_equal(tf_journal_reset(j, generation, &err), 0);
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

    /* A flipped byte inside the third record: it and everything after are dropped. */
    append_two_batches(0);
    size = file_size(journal);
    int fd = open(journal, O_RDWR);
    assert_true(fd >= 0);
    const off_t record = (size - 16) / 5;
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, 16 + 2 * record + 30), 1);
    c ^= 0x40;
    assert_int_equal(pwrite(fd, &c, 1, 16 + 2 * record + 30), 1);
    close(fd);
    struct test_kernel gemm2;
    struct tf_archive *b = make_archive(&gemm2);
    assert_int_equal(tf_journal_replay(NULL, archive, b, &rep, &err), 0);
    assert_int_equal(rep.records, 2);
    assert_int_equal(rep.torn_bytes, (uint64_t)(size - 16 - 2 * record));
    /* A lock holder that replays then resets starts clean. */
    struct tf_journal *j = tf_journal_open(archive, &err);
    assert_non_null(j);
    assert_int_equal(tf_journal_reset(j, 1, &err), 0);
    tf_journal_close(j);
    assert_int_equal(file_size(journal), 16);
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
    assert_int_equal(tf_journal_reset(j, 0, &err), 0);
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

/* A full disk, as a file size limit: the batch fails, the file is cut back to
 * whole records, and what was journaled before replays. */
static void test_failed_write_leaves_whole_records(void **state)
{
    (void)state;
    struct test_kernel gemm;
    struct tf_error err = {0};
    struct tf_journal *j = tf_journal_open(archive, &err);
    assert_non_null(j);
    assert_int_equal(tf_journal_reset(j, 0, &err), 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_replay_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_and_corrupt_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_journals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_run_at_a_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_write_leaves_whole_records, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
