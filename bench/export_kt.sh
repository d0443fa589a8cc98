#!/usr/bin/env bash
# Kernel Tuner's simulation mode on tunefarm's exported caches (bench/results/export-kt-*.md).
# usage: KT_PYTHON=/path/to/venv/bin/python bench/export_kt.sh [FEVALS] [SEEDS]
# Makes two archives by real host runs (the known-optimum and fault fixtures)
# and one by importing the six convolution caches of ../shared/datasets,
# exports a Kernel Tuner cache per kernel and device class, and runs
# bench/kt_simulate.py on them: Kernel Tuner 1.5 (from PyPI, in a virtual
# environment: python3 -m venv V && V/bin/pip install kernel_tuner==1.5.0)
# loads each file and runs random_sample and genetic_algorithm on it.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TF="$ROOT/tunefarm"
KT_PYTHON=${KT_PYTHON:-/tmp/kt/bin/python}
FEVALS=${1:-100}
SEEDS=${2:-5}
CONV="$ROOT/../shared/datasets/benchmark_hub/convolution_milo"
OUT=$(mktemp -d /tmp/tunefarm-export-kt.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export XDG_CACHE_HOME="$OUT/cache"
cd "$OUT"
echo "== tunefarm $("$TF" version | cut -d' ' -f2), $(uname -m), $(nproc) cores; $("$KT_PYTHON" --version)"
"$TF" run -q -n 1 "$ROOT/tests/fixtures/ranked.yaml" -o ranked.h5 >/dev/null
"$TF" run -q -n 1 "$ROOT/tests/fixtures/faulty.yaml" -o faulty.h5 >/dev/null
"$TF" export ranked.h5 --format kt-cache -o ranked.json
"$TF" export faulty.h5 --format kt-cache -o faulty.json
"$TF" import -q conv.h5 "$CONV"/A100.json.gz "$CONV"/A4000.json.gz "$CONV"/A6000.json.gz \
    "$CONV"/W6600.json.gz "$CONV"/W7800.json.gz
"$TF" import -q conv.h5 "$CONV"/MI250X.json.gz --device "AMD Instinct MI250X" --arch gfx90a
caches="ranked.json faulty.json"
for dev in "NVIDIA A100-PCIE-40GB" "NVIDIA RTX A4000" "NVIDIA RTX A6000" \
           "AMD Radeon PRO W6600" "AMD Radeon PRO W7800" "AMD Instinct MI250X"; do
    f="conv_$(echo "$dev" | tr ' ' '_').json"
    "$TF" export conv.h5 --format kt-cache --device "$dev" -o "$f"
    caches="$caches $f"
done
ls -l $caches | awk '{print "  " $5 " bytes  " $9}'
"$KT_PYTHON" "$ROOT/bench/kt_simulate.py" --fevals "$FEVALS" --seeds "$SEEDS" $caches
