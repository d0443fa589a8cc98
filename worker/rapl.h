/* rapl.h - the host's energy from RAPL, through Linux powercap.
 *
 * The kernel exposes each CPU package's RAPL energy counter as a powercap
 * zone, /sys/class/powercap/intel-rapl:N (on AMD processors too, since Linux
 * 5.8 and 5.11 brought family 17h and 19h to the same driver): `name` is
 * "package-N", `energy_uj` the counter in microjoules, `max_energy_range_uj`
 * the value after which it starts again from 0. Subzones (intel-rapl:N:M:
 * core, uncore, dram) are parts of their package and the `psys` zone holds
 * the packages, so only package zones are summed; the MMIO interface to the
 * same packages (intel-rapl-mmio:N) is skipped for the same reason. Since
 * Linux 5.10 energy_uj is readable by root only (CVE-2020-8694), and virtual
 * machines have no zones: then there is no RAPL, and the reason says which.
 * The counters are read often enough (every few milliseconds during an
 * energy window) that at most one wrap separates two readings. */
#ifndef TF_RAPL_H
#define TF_RAPL_H

#include <stdint.h>

#include "../schema/error.h"

#define TF_RAPL_ROOT "/sys/class/powercap"

struct tf_rapl;

/* The package zones under `root` (NULL: TF_RAPL_ROOT), their counters
 * opened and read once: 0 and *out; 1 if there is no readable RAPL there
 * (err says why: no package zone, or energy_uj not readable); -1 + err on
 * anything else (a zone whose files hold no number). */
int tf_rapl_open(const char *root, struct tf_rapl **out, struct tf_error *err);
/* Close; accepts NULL. */
void tf_rapl_close(struct tf_rapl *r);
/* Package zones summed (at least 1). */
int tf_rapl_zones(const struct tf_rapl *r);
/* Joules every package zone used since tf_rapl_open, wraps undone: 0, or -1
 * + err if a counter cannot be read. */
int tf_rapl_read(struct tf_rapl *r, double *joules, struct tf_error *err);
/* Microjoules a counter advanced from `before` to `now`, where it goes from
 * `range` (max_energy_range_uj) back to 0: a reading below the one before is
 * one wrap, range - before + now (what perf, turbostat and Zeus count too). */
uint64_t tf_rapl_delta(uint64_t before, uint64_t now, uint64_t range);

#endif
