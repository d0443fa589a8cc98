/* rapl.c - the host's energy from RAPL, through Linux powercap (rapl.h).
 *
 * Opening lists the root's entries, keeps those named like a top-level RAPL
 * zone ("intel-rapl:N", not the subzones "intel-rapl:N:M" nor the MMIO
 * duplicates) whose `name` starts with "package", reads each zone's
 * max_energy_range_uj and opens its energy_uj, sorted by name so the sum is
 * always taken in one order. A reading is pread at offset 0 (sysfs answers
 * afresh each time) on descriptors kept open from the start, so the runner
 * opens nothing while a variant runs. Each zone keeps its last raw value and
 * the microjoules accumulated since opening, wraps undone (tf_rapl_delta). */
#include "rapl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RAPL_MAX_ZONES 64

struct rapl_zone {
    char name[64];       /* the entry, "intel-rapl:0" */
    int fd;              /* its energy_uj */
    uint64_t range;      /* max_energy_range_uj */
    uint64_t last;       /* the last raw reading */
    uint64_t total;      /* microjoules since opening */
};

struct tf_rapl {
    char root[4096];     /* for messages */
    int n;
    struct rapl_zone z[RAPL_MAX_ZONES];
};

uint64_t tf_rapl_delta(uint64_t before, uint64_t now, uint64_t range)
{
    if (now >= before)
        return now - before;
    /* One wrap: up to the top of the range, then from 0. A counter above its
     * stated range is the range's fault, not a larger energy. */
    return (range > before ? range - before : 0) + now;
}

/* "intel-rapl:N" (any prefix ending in "rapl", one ":digits"), not MMIO. */
static int is_package_entry(const char *e)
{
    const char *colon = strchr(e, ':');
    if (colon == NULL || colon - e < 4 || strncmp(colon - 4, "rapl", 4) != 0 ||
        strstr(e, "mmio") != NULL || colon[1] == '\0')
        return 0;
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

/* The first line of `dir`/`file` into `out` (cap bytes): 0, or the errno. */
static int read_line(const char *dir, const char *file, char *out, size_t cap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    ssize_t n = read(fd, out, cap - 1);
    int e = n < 0 ? errno : 0;
    close(fd);
    if (n < 0)
        return e;
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

/* A counter's text into *v: 0, or -1 if it is not a number. */
static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s || (*end != '\0' && *end != '\n'))
        return -1;
    *v = x;
    return 0;
}

/* Read the zone's counter now into *raw: 0, or -1 + err. */
static int zone_read(const char *root, const struct rapl_zone *z, uint64_t *raw,
                     struct tf_error *err)
{
    char buf[64];
    ssize_t n = pread(z->fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return tf_error_set(err, TF_ERR_SYSTEM, "reading %s/%s/energy_uj: %s", root, z->name,
                            n < 0 ? strerror(errno) : "empty");
    buf[n] = '\0';
    if (parse_u64(buf, raw) != 0)
        return tf_error_set(err, TF_ERR_SYSTEM, "%s/%s/energy_uj holds '%.20s', not a number",
                            root, z->name, buf);
    return 0;
}

static int cmp_zone(const void *a, const void *b)
{
    return strcmp(((const struct rapl_zone *)a)->name, ((const struct rapl_zone *)b)->name);
}

int tf_rapl_open(const char *root, struct tf_rapl **out, struct tf_error *err)
{
    if (root == NULL)
        root = TF_RAPL_ROOT;
    *out = NULL;
    DIR *d = opendir(root);
    if (d == NULL) {
        tf_error_set(err, TF_ERR_BACKEND, "no RAPL: %s: %s (a virtual machine, or a kernel "
                     "without powercap)", root, strerror(errno));
        return 1;
    }
    struct tf_rapl *r = tf_xcalloc(1, sizeof *r);
    tf_strlcpy(r->root, root, sizeof r->root);
    int rc = 1;
    char denied[4300] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL && r->n < RAPL_MAX_ZONES) {
        if (!is_package_entry(e->d_name))
            continue;
        char dir[4200], name[64], range[64], path[4300];
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        if (read_line(dir, "name", name, sizeof name) != 0 || strncmp(name, "package", 7) != 0)
            continue;
        struct rapl_zone *z = &r->z[r->n];
        tf_strlcpy(z->name, e->d_name, sizeof z->name);
        snprintf(path, sizeof path, "%s/energy_uj", dir);
        int why = read_line(dir, "max_energy_range_uj", range, sizeof range);
        z->fd = why == 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        if (why == 0 && z->fd < 0)
            why = errno;
        if (why == EACCES || why == EPERM) { /* root only: look on for a readable one */
            snprintf(denied, sizeof denied, "%s", path);
            continue;
        }
        if (why != 0) {
            tf_error_set(err, TF_ERR_BACKEND, "no RAPL: %s: %s", path, strerror(why));
            goto fail;
        }
        r->n++; /* from here its descriptor is closed with the rest */
        if (parse_u64(range, &z->range) != 0) {
            tf_error_set(err, TF_ERR_SYSTEM, "%s/max_energy_range_uj holds '%.20s', not a "
                         "number", dir, range);
            rc = -1;
            goto fail;
        }
        if (zone_read(root, z, &z->last, err) != 0) {
            rc = -1;
            goto fail;
        }
    }
    closedir(d);
    d = NULL;
    if (r->n == 0) {
        if (denied[0])
            tf_error_set(err, TF_ERR_BACKEND, "no RAPL: %s is readable by root only (Linux 5.10 "
                         "and later; an administrator may grant read access)", denied);
        else
            tf_error_set(err, TF_ERR_BACKEND, "no RAPL: %s has no package zone (intel-rapl:N "
                         "named package-N): a virtual machine, or a processor or kernel "
                         "without RAPL", root);
        goto fail;
    }
    qsort(r->z, (size_t)r->n, sizeof r->z[0], cmp_zone);
    *out = r;
    return 0;
fail:
    if (d)
        closedir(d);
    tf_rapl_close(r);
    return rc;
}

void tf_rapl_close(struct tf_rapl *r)
{
    if (r == NULL)
        return;
    for (int i = 0; i < r->n; i++)
        if (r->z[i].fd >= 0)
            close(r->z[i].fd);
    free(r);
}

int tf_rapl_zones(const struct tf_rapl *r)
{
    return r->n;
}

int tf_rapl_read(struct tf_rapl *r, double *joules, struct tf_error *err)
{
    uint64_t sum = 0;
    for (int i = 0; i < r->n; i++) {
        struct rapl_zone *z = &r->z[i];
        uint64_t raw;
        if (zone_read(r->root, z, &raw, err) != 0)
            return -1;
        z->total += tf_rapl_delta(z->last, raw, z->range);
        z->last = raw;
        sum += z->total;
    }
    *joules = (double)sum * 1e-6;
    return 0;
}
