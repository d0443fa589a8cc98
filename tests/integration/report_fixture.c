/* report_fixture.c - write tests/unit/report_fixture.h's archive (known bests,
 * one regression, Pareto fronts, hostile names) to the path given, for the
 * browser test of `tunefarm report` (tests/integration/report.sh).
 * Usage: report_fixture OUT.h5. Exit 0, or 1 with the error. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>

#include "../unit/report_fixture.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: report_fixture OUT.h5\n");
        return 1;
    }
    struct report_fixture f;
    struct tf_error err = {0};
    report_fixture_make(&f);
    int rc = tf_archive_write(f.a, argv[1], &err);
    if (rc != 0)
        fprintf(stderr, "report_fixture: %s\n", err.message);
    report_fixture_free(&f);
    return rc != 0;
}
