#!/usr/bin/env bash
# Install the distribution packages tunefarm needs to build, run and test, if any is missing.
# Debian/Ubuntu, as root (or through sudo). Usage: scripts/deps.sh [build|test]
set -eu
mode=${1:-build}
# libopenblas0-serial: the alternatives make it the BLAS/LAPACK under LAPACKE, 1.7x
# less CPU for bayes' long searches than the reference BLAS
# (bench/results/bayes-cpu-2026-12-07.md); serial, as the coordinator shares its node.
pkgs="build-essential pkg-config libopenmpi-dev openmpi-bin libhdf5-dev hdf5-tools
      libhwloc-dev libyaml-dev libjansson-dev zlib1g-dev liblapacke-dev libopenblas0-serial"
if [ "$mode" = test ]; then
  # python3-jsonschema: tests/integration/exchange.sh validates exported T4 files
  # against the community's schema (draft 2020-12: jsonschema 4.x).
  pkgs="$pkgs libcmocka-dev python3 python3-h5py python3-pandas python3-jsonschema"
  # hipRTC, so tests/unit/test_hip compiles AMD code objects for real on a CPU:
  # bookworm's ROCm 5.2.3 has hipRTC inside the HIP runtime (libamdhip64-5), and
  # its code object manager (libamd-comgr2, a dependency, on libllvm15) carries
  # the device libraries built in. Nothing else is needed, checked by compiling
  # the whole kernel library: not libamdhip64-dev (headers; tunefarm declares
  # what it uses), not rocm-device-libs, not libhiprtc-builtins5.
  pkgs="$pkgs libamdhip64-5"
  # tests/slurm: a real Slurm cluster on localhost, two nodes (munged, slurmctld,
  # two slurmd, sbatch & co), started by the test with its own config, key, state
  # and logs in a temporary folder. Installing may start the distribution's
  # own services; they do not get in the way (other socket, other ports).
  pkgs="$pkgs munge slurmctld slurmd slurm-client"
  # tests/integration/report.sh: the HTML report loaded in a real headless
  # browser, its screenshot read back with PIL.
  pkgs="$pkgs chromium python3-pil"
fi
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
