/* test_rapl.c - the host's RAPL energy (worker/rapl.c): the counter
 * arithmetic with its wraparound at max_energy_range_uj, and the powercap
 * reader on a folder laid out like /sys/class/powercap (package zones summed;
 * subzones, psys and the MMIO duplicates left out; counters that wrap
 * between readings; no zone, a folder that is not there, a counter that is
 * not a number). Then this machine's own powercap, where it is readable:
 * "skipped: no RAPL" (with the reason) where it is not, as in a VM. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../worker/rapl.h"

static void test_delta_and_wrap(void **state)
{
    (void)state;
    const uint64_t range = 262143328850ull; /* a real package's max_energy_range_uj */
    assert_true(tf_rapl_delta(1000, 1000, range) == 0);
    assert_true(tf_rapl_delta(1000, 251000, range) == 250000);
    /* wrapped: from 1 J below the top, to 2 J after 0 */
    assert_true(tf_rapl_delta(range - 1000000, 2000000, range) == 3000000);
    assert_true(tf_rapl_delta(range, 0, range) == 0);      /* at the top, then 0 */
    assert_true(tf_rapl_delta(range, 5, range) == 5);
    /* a 32-bit counter (older kernels' range) */
    assert_true(tf_rapl_delta(4294967295ull - 10, 20, 4294967295ull) == 30);
    /* a reading above the stated range is the range's fault: not a larger energy */
    assert_true(tf_rapl_delta(range + 100, 7, range) == 7);
}

/* A powercap folder under /tmp. */
struct tree {
    char root[64];
};

/* Write `text` to root/rel, where rel is "entry/file" (the entry made if new). */
static void put(const struct tree *t, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", t->root, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    mkdir(path, 0755);
    *slash = '/';
    FILE *f = fopen(path, "w"); /* truncated in place: an open descriptor reads it afresh */
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Set a zone's counter in place, as the kernel's file reads afresh. */
static void set_counter(const struct tree *t, const char *zone, unsigned long long uj)
{
    char rel[128], text[64];
    snprintf(rel, sizeof rel, "%s/energy_uj", zone);
    snprintf(text, sizeof text, "%llu\n", uj);
    put(t, rel, text);
}

static void zone(const struct tree *t, const char *entry, const char *name,
                 unsigned long long range, unsigned long long uj)
{
    char rel[128], text[64];
    snprintf(rel, sizeof rel, "%s/name", entry);
    snprintf(text, sizeof text, "%s\n", name);
    put(t, rel, text);
    snprintf(rel, sizeof rel, "%s/max_energy_range_uj", entry);
    snprintf(text, sizeof text, "%llu\n", range);
    put(t, rel, text);
    set_counter(t, entry, uj);
}

static void tree_make(struct tree *t)
{
    snprintf(t->root, sizeof t->root, "/tmp/tf_test_rapl_XXXXXX");
    assert_non_null(mkdtemp(t->root));
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    return remove(path);
}

static void tree_remove(struct tree *t)
{
    nftw(t->root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_packages_summed_and_unwrapped(void **state)
{
    (void)state;
    struct tree t;
    tree_make(&t);
    const unsigned long long range = 1000000000ull; /* 1 kJ: wraps soon */
    zone(&t, "intel-rapl:0", "package-0", range, range - 500000);  /* 0.5 J below the top */
    zone(&t, "intel-rapl:1", "package-1", range, 100);
    zone(&t, "intel-rapl:0:0", "core", range, 7777);               /* part of package 0 */
    zone(&t, "intel-rapl:0:1", "dram", range, 8888);
    zone(&t, "intel-rapl:2", "psys", range, 99999999);             /* holds the packages */
    zone(&t, "intel-rapl-mmio:0", "package-0", range, 123456789);  /* the same package */
    put(&t, "intel-rapl/enabled", "1\n");                          /* the control type */

    struct tf_rapl *r = NULL;
    struct tf_error err = {0};
    if (tf_rapl_open(t.root, &r, &err) != 0)
        fail_msg("open: %s", err.message);
    assert_int_equal(tf_rapl_zones(r), 2);
    double j = -1;
    assert_int_equal(tf_rapl_read(r, &j, &err), 0);
    assert_true(j == 0); /* nothing since opening */

    /* package 0 wraps (+1.5 J: 0.5 to the top, 1 after 0), package 1 +2 J;
     * the subzones, psys and MMIO move too, and must not count */
    set_counter(&t, "intel-rapl:0", 1000000);
    set_counter(&t, "intel-rapl:1", 2000100);
    set_counter(&t, "intel-rapl:0:0", 5000000);
    set_counter(&t, "intel-rapl:2", 199999999);
    set_counter(&t, "intel-rapl-mmio:0", 923456789);
    assert_int_equal(tf_rapl_read(r, &j, &err), 0);
    assert_true(fabs(j - 3.5) < 1e-9);

    /* and on: +0.25 J on each; the total keeps what went before the wrap */
    set_counter(&t, "intel-rapl:0", 1250000);
    set_counter(&t, "intel-rapl:1", 2250100);
    assert_int_equal(tf_rapl_read(r, &j, &err), 0);
    assert_true(fabs(j - 4.0) < 1e-9);

    /* a counter that stops being a number: an error naming it */
    set_counter(&t, "intel-rapl:1", 0);
    put(&t, "intel-rapl:1/energy_uj", "garbage\n");
    assert_int_equal(tf_rapl_read(r, &j, &err), -1);
    assert_non_null(strstr(err.message, "intel-rapl:1/energy_uj holds 'garbage"));
    tf_rapl_close(r);
    tf_rapl_close(NULL);
    tree_remove(&t);
}

static void test_no_rapl(void **state)
{
    (void)state;
    struct tree t;
    tree_make(&t);
    struct tf_rapl *r = (struct tf_rapl *)&t; /* junk: the refusal must reset it */
    struct tf_error err = {0};
    /* a powercap with no package zone (only a psys and a subzone) */
    zone(&t, "intel-rapl:1", "psys", 1000, 1);
    zone(&t, "intel-rapl:0:0", "core", 1000, 1);
    assert_int_equal(tf_rapl_open(t.root, &r, &err), 1);
    assert_null(r);
    assert_non_null(strstr(err.message, "no RAPL"));
    assert_non_null(strstr(err.message, "has no package zone"));
    /* a folder that is not there (a VM without powercap) */
    char missing[128];
    snprintf(missing, sizeof missing, "%s/none", t.root);
    assert_int_equal(tf_rapl_open(missing, &r, &err), 1);
    assert_non_null(strstr(err.message, "no RAPL"));
    /* a package zone whose range is not a number: broken, not absent */
    zone(&t, "intel-rapl:0", "package-0", 1000, 1);
    put(&t, "intel-rapl:0/max_energy_range_uj", "lots\n");
    assert_int_equal(tf_rapl_open(t.root, &r, &err), -1);
    assert_non_null(strstr(err.message, "max_energy_range_uj holds 'lots'"));
    /* a counter only root may read (Linux >= 5.10); root reads it anyway */
    zone(&t, "intel-rapl:0", "package-0", 1000, 1);
    char path[256];
    snprintf(path, sizeof path, "%s/intel-rapl:0/energy_uj", t.root);
    chmod(path, 0000);
    if (geteuid() != 0) {
        assert_int_equal(tf_rapl_open(t.root, &r, &err), 1);
        assert_non_null(strstr(err.message, "readable by root only"));
    } else {
        printf("note: running as root, which reads a counter of mode 0000: its refusal is "
               "not tested\n");
    }
    tree_remove(&t);
}

/* This machine's RAPL, read across 50 ms of a busy loop. */
static void test_this_machine(void **state)
{
    (void)state;
    struct tf_rapl *r = NULL;
    struct tf_error err = {0};
    const int rc = tf_rapl_open(NULL, &r, &err);
    if (rc != 0) {
        printf("skipped: %s\n", err.message); /* "no RAPL: ..." */
        fflush(stdout);
        assert_int_equal(rc, 1); /* absent, never broken */
        return;
    }
    double before, after;
    assert_int_equal(tf_rapl_read(r, &before, &err), 0);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile unsigned long sink = 0;
    do {
        for (int i = 0; i < 100000; i++)
            sink += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 < 0.05);
    assert_int_equal(tf_rapl_read(r, &after, &err), 0);
    const double w = (after - before) / 0.05;
    printf("note: RAPL: %d package zone(s), %.1f W over 50 ms of a busy loop\n", tf_rapl_zones(r),
           w);
    fflush(stdout);
    assert_true(w > 0.1 && w < 5000);
    tf_rapl_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delta_and_wrap),
        cmocka_unit_test(test_packages_summed_and_unwrapped),
        cmocka_unit_test(test_no_rapl),
        cmocka_unit_test(test_this_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
