#!/usr/bin/python3
"""A powercap folder with one RAPL package drawing WATTS, for the host
backend's energy in tests/integration/noise_energy.sh (TUNEFARM_RAPL_ROOT).

usage: fake_rapl.py DIR WATTS SECONDS

Makes DIR/intel-rapl:0 (package-0, max_energy_range_uj 2 J) with a core
subzone and a psys zone beside it (both must be left out), then keeps
energy_uj at WATTS x the seconds since the start, in microjoules, past the
range back to 0 (at 1 W it wraps every 2 s, so energy windows straddle
wraps), rewritten in place every millisecond for SECONDS: fixed width and
one pwrite at offset 0, so that a reader holding the file open reads each
value whole."""
import os
import sys
import time

RANGE = 2000000


def zone(root, entry, name):
    os.makedirs(os.path.join(root, entry), exist_ok=True)
    for file, text in (("name", name), ("max_energy_range_uj", str(RANGE)),
                       ("energy_uj", "%020d" % 0)):
        with open(os.path.join(root, entry, file), "w") as f:
            f.write(text + "\n")


def main():
    root, watts, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    zone(root, "intel-rapl:0", "package-0")
    zone(root, "intel-rapl:0:0", "core")
    zone(root, "intel-rapl:1", "psys")
    fd = os.open(os.path.join(root, "intel-rapl:0", "energy_uj"), os.O_WRONLY)
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        uj = int((time.monotonic() - start) * watts * 1e6) % (RANGE + 1)
        os.pwrite(fd, b"%020d\n" % uj, 0)
        time.sleep(0.001)


if __name__ == "__main__":
    main()
