/* result.c - a result record starts as "nothing known": NaN times and
 * telemetry, -1 for counters, so a failed variant carries no fake numbers;
 * and the names of the energy statuses (the archive's enum members). */
#include "result.h"

#include <math.h>
#include <string.h>

void tf_result_init(struct tf_result *r, uint32_t kernel, uint32_t problem, uint64_t config,
                    int status)
{
    memset(r, 0, sizeof *r);
    r->kernel = kernel;
    r->problem = problem;
    r->config = config;
    r->status = (uint8_t)status;
    r->time_median = r->time_min = r->time_mean = r->time_rsd = NAN;
    r->compile_time = 0.0;
    r->device_time = NAN;
    r->registers = -1;
    r->shared_bytes = r->spill_bytes = -1;
    r->warnings = -1;
    r->sm_clock_mhz = r->power_w = r->temperature_c = NAN;
    r->energy_j = NAN;
    r->energy_status = (uint8_t)(status == TF_STATUS_OK ? TF_ENERGY_UNKNOWN : TF_ENERGY_NOT_RUN);
    for (int i = 0; i < TF_MAX_METRICS; i++)
        r->metrics[i] = NAN;
}

static const char *const energy_names[TF_ENERGY_COUNT] = {
    [TF_ENERGY_MEASURED] = "measured",           [TF_ENERGY_UNKNOWN] = "unknown",
    [TF_ENERGY_NOT_RUN] = "not_run",             [TF_ENERGY_OFF] = "off",
    [TF_ENERGY_NO_COUNTER] = "no_counter",       [TF_ENERGY_COUNTER_ERROR] = "counter_error",
    [TF_ENERGY_NO_WINDOW] = "no_window",         [TF_ENERGY_NOT_IN_SOURCE] = "not_in_source"};

const char *tf_energy_status_name(int s)
{
    return s >= 0 && s < TF_ENERGY_COUNT ? energy_names[s] : "unknown";
}

int tf_energy_status_from_name(const char *name)
{
    for (int s = 0; s < TF_ENERGY_COUNT; s++)
        if (strcmp(energy_names[s], name) == 0)
            return s;
    return -1;
}

bool tf_result_timed(const struct tf_result *r)
{
    return r->status == TF_STATUS_OK && r->time_median > 0 && isfinite(r->time_median);
}
