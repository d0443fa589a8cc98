/* test_provenance.c - the readers of what a device runs with (worker/provenance.c).
 *
 * Each reader is pointed at a tree of real files written here, shaped like
 * Linux's: cpufreq per CPU (a governor that differs between CPUs is "mixed",
 * the clock is the lowest ceiling), RAPL zones (package zones summed,
 * sub-zones and psys left out), an amdgpu device's DPM level and hwmon power
 * cap found by a PCI address given in upper case, the amdgpu module version,
 * both forms of the NVIDIA kernel module's /proc line, and the ROCm release
 * file. An empty tree leaves every field unknown. The real sysfs of this
 * machine is read once too (whatever it has, nothing may crash). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../worker/provenance.h"

static char root[256];

/* Write `text` to ROOT/rel, creating its folders. */
static void put(const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                fail_msg("mkdir %s: %s", path, strerror(errno));
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/tf_test_provenance_XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static void test_host(void **state)
{
    (void)state;
    struct tf_device d;
    memset(&d, 0, sizeof d);
    char sys[512];
    snprintf(sys, sizeof sys, "%s/empty", root);
    const int all[] = {0, 1, 2};
    tf_provenance_host(sys, all, 3, &d);
    assert_string_equal(d.clock_policy, "");
    assert_true(d.clock_mhz == 0);
    assert_true(d.power_limit_w == 0);

    put("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
    put("sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq", "3500000\n");
    put("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");
    put("sys/devices/system/cpu/cpu1/cpufreq/scaling_max_freq", "3000000\n");
    put("sys/devices/system/cpu/cpu2/cpufreq/scaling_governor", "powersave\n");
    put("sys/devices/system/cpu/cpu2/cpufreq/scaling_max_freq", "2000000\n");
    put("sys/class/powercap/intel-rapl:0/name", "package-0\n");
    put("sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw", "125000000\n");
    put("sys/class/powercap/intel-rapl:1/name", "package-1\n");
    put("sys/class/powercap/intel-rapl:1/constraint_0_power_limit_uw", "100000000\n");
    put("sys/class/powercap/intel-rapl:0:0/name", "core\n"); /* a sub-zone */
    put("sys/class/powercap/intel-rapl:0:0/constraint_0_power_limit_uw", "50000000\n");
    put("sys/class/powercap/intel-rapl:2/name", "psys\n"); /* covers the packages */
    put("sys/class/powercap/intel-rapl:2/constraint_0_power_limit_uw", "400000000\n");
    snprintf(sys, sizeof sys, "%s/sys", root);
    const int two[] = {0, 1};
    tf_provenance_host(sys, two, 2, &d);
    assert_string_equal(d.clock_policy, "performance");
    assert_true(d.clock_mhz == 3000);
    assert_true(d.power_limit_w == 225);
    tf_provenance_host(sys, all, 3, &d);
    assert_string_equal(d.clock_policy, "mixed");
    assert_true(d.clock_mhz == 2000);

    /* This machine's own files: whatever they say, the reader copes. */
    int cpus[1024];
    const int n = tf_provenance_own_cpus(cpus, 1024);
    assert_true(n >= 1);
    /* at most `max` CPUs are written, whatever the affinity holds */
    int one[2] = {-1, -7};
    assert_int_equal(tf_provenance_own_cpus(one, 1), 1);
    assert_int_equal(one[0], cpus[0]);
    assert_int_equal(one[1], -7);
    tf_provenance_host("/sys", cpus, n, &d);
    print_message("note: this machine: %d CPUs, governor '%s', clock %.0f MHz, power limit "
                  "%.0f W (0: unknown)\n",
                  n, d.clock_policy, d.clock_mhz, d.power_limit_w);
}

static void test_amdgpu(void **state)
{
    (void)state;
    struct tf_device d;
    memset(&d, 0, sizeof d);
    char sys[512], v[32];
    snprintf(sys, sizeof sys, "%s/amd", root);
    tf_provenance_amdgpu(sys, "0000:C1:00.0", &d);
    assert_string_equal(d.clock_policy, "");
    assert_true(d.power_limit_w == 0);
    assert_int_equal(tf_provenance_amdgpu_version(sys, v, sizeof v), -1);
    assert_string_equal(v, "");

    put("amd/bus/pci/devices/0000:c1:00.0/power_dpm_force_performance_level", "manual\n");
    put("amd/bus/pci/devices/0000:c1:00.0/hwmon/hwmon3/power1_cap", "750000000\n");
    put("amd/module/amdgpu/version", "6.8.5\n");
    tf_provenance_amdgpu(sys, "0000:C1:00.0", &d);
    assert_string_equal(d.clock_policy, "manual");
    assert_true(d.power_limit_w == 750);
    assert_int_equal(tf_provenance_amdgpu_version(sys, v, sizeof v), 0);
    assert_string_equal(v, "6.8.5");
    /* a PCI address cannot walk out of the tree (../../../etc from
     * amd/bus/pci/devices reaches amd/etc, where a file waits), and the
     * previous device's power limit does not stay behind */
    put("amd/etc/power_dpm_force_performance_level", "escaped\n");
    tf_provenance_amdgpu(sys, "../../../etc", &d);
    assert_string_equal(d.clock_policy, "");
    assert_true(d.power_limit_w == 0);
}

static void test_nvidia_and_rocm(void **state)
{
    (void)state;
    char proc[512], v[32];
    snprintf(proc, sizeof proc, "%s/proc", root);
    assert_int_equal(tf_provenance_nvidia_version(proc, v, sizeof v), -1);
    put("proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:29 UTC "
        "2025\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
    assert_int_equal(tf_provenance_nvidia_version(proc, v, sizeof v), 0);
    assert_string_equal(v, "580.65.06");
    put("proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
        "(dvs-builder@U16-I3-B03-4-3)  Thu Nov 13 2025\n");
    assert_int_equal(tf_provenance_nvidia_version(proc, v, sizeof v), 0);
    assert_string_equal(v, "580.159.04");
    /* a buffer shorter than the version gets what fits, and nothing past it */
    char small[8];
    memset(small, 'z', sizeof small);
    assert_int_equal(tf_provenance_nvidia_version(proc, small, 4), 0);
    assert_string_equal(small, "580");
    assert_memory_equal(small + 4, "zzzz", 4);
    put("proc/driver/nvidia/version", "something else entirely\n");
    assert_int_equal(tf_provenance_nvidia_version(proc, v, sizeof v), -1);

    char rocm[512];
    snprintf(rocm, sizeof rocm, "%s/opt/rocm", root);
    assert_int_equal(tf_provenance_rocm_version(rocm, v, sizeof v), -1);
    put("opt/rocm/.info/version", "6.2.0-66\n");
    assert_int_equal(tf_provenance_rocm_version(rocm, v, sizeof v), 0);
    assert_string_equal(v, "6.2.0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host),
        cmocka_unit_test(test_amdgpu),
        cmocka_unit_test(test_nvidia_and_rocm),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
