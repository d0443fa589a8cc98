/* test_progress.c - the coordinator's progress line (coordinator/progress.c).
 *
 * stderr is pointed at a file for each call, so the test reads exactly what a
 * Slurm log or a terminal would get: the line's fields (elapsed, count,
 * percentage, rate, ETA, best), when a line is due (10 s in a log, 1 s on a
 * terminal, always when forced), quiet mode, and the terminal's rewritten
 * line and its closing newline. The clock is moved by setting the start and
 * the last print back, not by sleeping. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../coordinator/progress.h"

/* What the calls since capture_begin wrote to stderr. */
static char captured[1024];
static int saved_fd = -1;
static FILE *capture_file;

static void capture_begin(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    assert_non_null(capture_file);
    saved_fd = dup(STDERR_FILENO);
    assert_true(saved_fd >= 0);
    assert_true(dup2(fileno(capture_file), STDERR_FILENO) >= 0);
}

static const char *capture_end(void)
{
    fflush(stderr);
    assert_true(dup2(saved_fd, STDERR_FILENO) >= 0);
    close(saved_fd);
    rewind(capture_file);
    size_t n = fread(captured, 1, sizeof captured - 1, capture_file);
    captured[n] = '\0';
    fclose(capture_file);
    return captured;
}

/* A progress started now with stderr a file (a log): tty is false whatever
 * the terminal the test runs on. */
static void start_logged(struct tf_progress *p, bool quiet)
{
    capture_begin();
    tf_progress_init(p, quiet);
    capture_end();
    assert_false(p->tty);
}

static void test_clocks(void **state)
{
    (void)state;
    double a = tf_now(), b = tf_now();
    assert_true(b >= a);
    double wall = tf_wall_now();
    assert_true(wall > (double)time(NULL) - 2 && wall < (double)time(NULL) + 2);
}

/* In a log: one full line per print, each field as computed from the clock. */
static void test_log_line_fields(void **state)
{
    (void)state;
    struct tf_progress p;
    start_logged(&p, false);
    /* 1 h 2 min 5 s in, 50 of 200: 0.0134/s, 150 left take 11,175 s */
    p.start = tf_now() - 3725;
    capture_begin();
    tf_progress_update(&p, 50, 200, "best 1.0 ms", true);
    assert_string_equal(capture_end(),
                        "[ 1h02m] 50/200 configurations (25%), 0.01/s, ETA 3h06m | best 1.0 ms\n");
    /* minutes and seconds; nothing done yet: no rate, no ETA, and no best */
    p.start = tf_now() - 125.2;
    capture_begin();
    tf_progress_update(&p, 0, 10, NULL, true);
    assert_string_equal(capture_end(), "[ 2m05s] 0/10 configurations (0%), 0.00/s, ETA ?\n");
    /* under a minute; an empty best adds no separator (40 s, 10 done: 0.25/s,
     * 2 left take 8 s; each field as printed for half a second or more) */
    p.start = tf_now() - 40.0;
    capture_begin();
    tf_progress_update(&p, 10, 12, "", true);
    assert_string_equal(capture_end(), "[   40s] 10/12 configurations (83%), 0.25/s, ETA 8s\n");
    /* a search with nothing planned is complete */
    capture_begin();
    tf_progress_update(&p, 0, 0, NULL, true);
    assert_non_null(strstr(capture_end(), " 0/0 configurations (100%), "));
    /* more done than planned (a resumed run's count): no ETA, not a wrapped one */
    capture_begin();
    tf_progress_update(&p, 5, 3, NULL, true);
    assert_non_null(strstr(capture_end(), "ETA ?\n"));
}

/* A log gets a line every 10 s, not more often, unless forced. */
static void test_log_due_every_ten_seconds(void **state)
{
    (void)state;
    struct tf_progress p;
    start_logged(&p, false);
    capture_begin();
    tf_progress_update(&p, 1, 10, NULL, false); /* just started */
    p.last = tf_now() - 9.0;
    tf_progress_update(&p, 2, 10, NULL, false);
    assert_string_equal(capture_end(), "");
    p.last = tf_now() - 10.5;
    capture_begin();
    tf_progress_update(&p, 3, 10, NULL, false);
    tf_progress_update(&p, 4, 10, NULL, false); /* due again only 10 s after that */
    const char *out = capture_end();
    assert_non_null(strstr(out, " 3/10 "));
    assert_null(strstr(out, " 4/10 "));
    capture_begin();
    tf_progress_update(&p, 5, 10, NULL, true);
    assert_non_null(strstr(capture_end(), " 5/10 "));
    /* a log's lines are whole: finishing adds nothing */
    capture_begin();
    tf_progress_finish(&p);
    assert_string_equal(capture_end(), "");
}

/* On a terminal: every second, the line rewritten in place (carriage return,
 * clear to the end), no newline until the end, then exactly one. */
static void test_terminal_line(void **state)
{
    (void)state;
    struct tf_progress p;
    start_logged(&p, false);
    p.tty = true;
    /* 20 s, 5 of 10: 0.25/s, ETA 20 s (as printed for 0.4 s or more) */
    p.start = tf_now() - 20.0;
    p.last = tf_now() - 0.2;
    capture_begin();
    tf_progress_update(&p, 4, 10, NULL, false);
    assert_string_equal(capture_end(), "");
    p.last = tf_now() - 1.5;
    capture_begin();
    tf_progress_update(&p, 5, 10, "x", false);
    assert_string_equal(capture_end(),
                        "\r\033[K[   20s] 5/10 configurations (50%), 0.25/s, ETA 20s | x");
    assert_true(p.dirty);
    capture_begin();
    tf_progress_finish(&p);
    tf_progress_finish(&p);
    assert_string_equal(capture_end(), "\n");
    assert_false(p.dirty);
}

/* Quiet prints nothing, forced or not, and leaves nothing to finish. */
static void test_quiet(void **state)
{
    (void)state;
    struct tf_progress p;
    start_logged(&p, true);
    p.last = tf_now() - 100;
    capture_begin();
    tf_progress_update(&p, 1, 2, "best", false);
    tf_progress_update(&p, 2, 2, "best", true);
    tf_progress_finish(&p);
    assert_string_equal(capture_end(), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clocks),
        cmocka_unit_test(test_log_line_fields),
        cmocka_unit_test(test_log_due_every_ten_seconds),
        cmocka_unit_test(test_terminal_line),
        cmocka_unit_test(test_quiet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
