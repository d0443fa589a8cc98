/* replay.c - run a libFuzzer target's corpus without libFuzzer.
 *
 *   replay-TARGET [-q] PATH...
 *
 * Feeds every file named, and every regular file in every folder named
 * (recursively), to LLVMFuzzerTestOneInput once. Linked with a target and
 * built with gcc + ASan + UBSan (`make fuzz-replay`), it turns the corpora
 * into regression tests on machines without clang: a crash, a sanitizer
 * report (-fno-sanitize-recover) or an abort() in the target ends the process
 * with a non-zero status, after the file being run was named on stderr.
 * Prints one line for the target and the closing count in the project's test
 * style ("N passed, N failed"); every input that returns is a pass. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int passed, failed;
static int quiet;

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        failed++;
        return;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *bigger = realloc(buf, cap *= 2);
            if (bigger == NULL)
                free(buf);
            buf = bigger;
        }
    }
    int bad = ferror(f) || buf == NULL;
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        failed++;
        return;
    }
    /* Name the input first: if it crashes, this is the last line before the report. */
    if (!quiet)
        fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    /* An exact-size copy, so ASan catches a read one past the input's end. */
    uint8_t *exact = malloc(len ? len : 1);
    if (len)
        memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    passed++;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        failed++;
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        run_file(path);
        return;
    }
    DIR *d = opendir(path);
    if (d == NULL) {
        fprintf(stderr, "replay: cannot list %s: %s\n", path, strerror(errno));
        failed++;
        return;
    }
    /* Sorted: a replay is the same sequence everywhere. */
    char **names = NULL;
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char **more = realloc(names, (count + 1) * sizeof *names);
        if (more == NULL)
            break;
        names = more;
        names[count] = malloc(strlen(path) + strlen(e->d_name) + 2);
        if (names[count] == NULL)
            break;
        sprintf(names[count], "%s/%s", path, e->d_name);
        count++;
    }
    closedir(d);
    qsort(names, count, sizeof *names, by_name);
    for (size_t i = 0; i < count; i++) {
        run_path(names[i]);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    const char *name = strrchr(argv[0], '/');
    name = name ? name + 1 : argv[0];
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "-q") == 0) {
        quiet = 1;
        first = 2;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: %s [-q] FILE_OR_FOLDER...\n", name);
        return 2;
    }
    for (int i = first; i < argc; i++)
        run_path(argv[i]);
    printf("== %s: %d inputs replayed%s\n", name, passed,
           failed ? ", some could not be read" : "");
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
