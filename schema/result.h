/* result.h - one measured configuration, as workers send it and archives keep it. */
#ifndef TF_RESULT_H
#define TF_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

#define TF_MAX_METRICS 4
#define TF_MESSAGE_LEN 160
#define TF_WARNING_LEN 128

/* Whether a result has its energy, and if not why: `energy_j` is NaN unless
 * this is TF_ENERGY_MEASURED (which an imported energy is too).
 * Stored in archives as an HDF5 enum of these names (archive column
 * `energy_status`) and sent on the wire: never renumber, only append. */
enum tf_energy_status {
    TF_ENERGY_MEASURED = 0,      /* measured over a window of back-to-back launches */
    TF_ENERGY_UNKNOWN = 1,       /* not said: a row of an archive older than the column */
    TF_ENERGY_NOT_RUN = 2,       /* the configuration did not complete its samples */
    TF_ENERGY_OFF = 3,           /* the protocol asked for none (energy_time 0) */
    TF_ENERGY_NO_COUNTER = 4,    /* the device has no energy counter tunefarm can read */
    TF_ENERGY_COUNTER_ERROR = 5, /* reading the counter failed, or it went backwards */
    TF_ENERGY_NO_WINDOW = 6,     /* no window of energy_time between two counter updates
                                    fit the time allowed (a counter that does not move,
                                    or launches too long for the deadline) */
    TF_ENERGY_NOT_IN_SOURCE = 7, /* imported or replayed from a source without energy */
    TF_ENERGY_COUNT
};

/* Lower-case name of `s` ("measured", "no_counter", ...); "unknown" if out of range. */
const char *tf_energy_status_name(int s);

/* The status whose tf_energy_status_name is `name` (its inverse), or -1 for no such name. */
int tf_energy_status_from_name(const char *name);

struct tf_result {
    uint32_t kernel;      /* job kernel index (wire); archive: unused */
    uint32_t problem;     /* kernel problem index (wire); archive: problem id */
    uint64_t config;      /* mixed-radix configuration index */
    uint8_t status;       /* enum tf_status */
    uint8_t flushed_l2;   /* 1 if the cache was flushed between samples */
    uint8_t throttled;    /* 1 if a sample was taken while the device throttled */
    uint8_t phase;        /* 0 only pass, 1 screening, 2 strict re-measure of the top k */
    uint8_t noisy;        /* 1: the protocol stopped at max_time or max_samples with the
                             spread (time_rsd) still above max_noise */
    uint8_t energy_status; /* enum tf_energy_status: why energy_j is (not) there */
    uint32_t samples;
    double time_median;   /* seconds per launch; NaN unless status is ok */
    double time_min;
    double time_mean;
    double time_rsd;      /* relative standard deviation, a fraction */
    double compile_time;  /* seconds spent compiling (0 when the cache had it) */
    double device_time;   /* seconds the device ran this variant: verified launch, timed
                             warm-ups and samples (the duty cycle's numerator); NaN unknown */
    int32_t registers;    /* per thread; -1 unknown */
    int64_t shared_bytes; /* static + dynamic shared memory; -1 unknown */
    int64_t spill_bytes;  /* local-memory spills; -1 unknown */
    int32_t warnings;     /* warnings the compiler gave for this variant; -1 unknown */
    char first_warning[TF_WARNING_LEN]; /* the first of them, "" if none or unknown */
    float sm_clock_mhz;   /* telemetry; NaN where the device has none */
    float power_w;
    float temperature_c;
    double energy_j;      /* energy of the timed launches: samples x one launch's energy */
    double timestamp;     /* unix seconds when measured */
    double metrics[TF_MAX_METRICS]; /* derived metrics, kernel's order (coordinator fills) */
    char message[TF_MESSAGE_LEN];   /* first line of an error, empty if ok */
};

/* A result for `config` with every measurement unknown (NaN / -1) and `status`;
 * not noisy, energy_status TF_ENERGY_NOT_RUN (TF_ENERGY_UNKNOWN if `status` is
 * ok: whoever makes an ok result says what became of its energy). */
void tf_result_init(struct tf_result *r, uint32_t kernel, uint32_t problem, uint64_t config,
                    int status);

/* True if `r` is ok with a time a best can be chosen by: a finite median above
 * zero. Nothing tunefarm measures or imports has another (import refuses times
 * <= 0); an edited or foreign archive may, and one such row must not become
 * every best: a 0 s best made an 8x slower night "infx, within the noise". */
bool tf_result_timed(const struct tf_result *r);

#endif
