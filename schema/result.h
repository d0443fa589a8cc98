/* result.h - one measured configuration, as workers send it and archives keep it. */
#ifndef TF_RESULT_H
#define TF_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

#define TF_MAX_METRICS 4
#define TF_MESSAGE_LEN 160
#define TF_WARNING_LEN 128

struct tf_result {
    uint32_t kernel;      /* job kernel index (wire); archive: unused */
    uint32_t problem;     /* kernel problem index (wire); archive: problem id */
    uint64_t config;      /* mixed-radix configuration index */
    uint8_t status;       /* enum tf_status */
    uint8_t flushed_l2;   /* 1 if the cache was flushed between samples */
    uint8_t throttled;    /* 1 if a sample was taken while the device throttled */
    uint8_t phase;        /* 0 only pass, 1 screening, 2 strict re-measure of the top k */
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
    double energy_j;
    double timestamp;     /* unix seconds when measured */
    double metrics[TF_MAX_METRICS]; /* derived metrics, kernel's order (coordinator fills) */
    char message[TF_MESSAGE_LEN];   /* first line of an error, empty if ok */
};

/* A result for `config` with every measurement unknown (NaN / -1) and `status`. */
void tf_result_init(struct tf_result *r, uint32_t kernel, uint32_t problem, uint64_t config,
                    int status);

#endif
