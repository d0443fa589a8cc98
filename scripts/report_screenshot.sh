#!/usr/bin/env bash
# Make docs/report.png, the README's picture of `tunefarm report`, from a real
# archive: the six brute-forced convolution_milo Kernel Tuner caches of
# ../shared/datasets/benchmark_hub (three NVIDIA and three AMD GPUs) replayed
# through the farm, three nights each (two random searches of 5% of the valid
# space with seeds 1 and 2, then brute force), merged into one archive.
# Needs the built tunefarm, chromium and python3-pil (scripts/deps.sh test).
# Usage: scripts/report_screenshot.sh [OUT.png]   (default docs/report.png)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/docs/report.png}
caches=$root/../shared/datasets/benchmark_hub/convolution_milo
tf=$root/tunefarm
work=$(mktemp -d /tmp/tunefarm-shot.XXXXXX)
trap 'rm -rf "$work"' EXIT
kernel=$root/bench/strategy/convolution_milo/kernel.yaml
job() { # NAME STRATEGY [BUDGET SEED]
    printf 'name: convolution_nightly\nkernels:\n  - {kernel: %s, problems: [milo]}\n' "$kernel"
    printf 'targets: [replay]\nsearch: {strategy: %s%s}\narchive: x.h5\n' "$2" \
        "${3:+, budget: $3, seed: $4}"
}
job n1 random 218 1 >"$work/n1.yaml"
job n2 random 218 2 >"$work/n2.yaml"
job n3 brute_force >"$work/n3.yaml"
parts=()
for dev in A100 A4000 A6000 MI250X W6600 W7800; do
    for n in 1 2 3; do
        "$tf" run -q "$work/n$n.yaml" -o "$work/$dev.h5" --replay "$caches/$dev.json.gz" \
            --workers 2 >/dev/null
    done
    parts+=("$work/$dev.h5")
done
(cd "$work" && "$tf" merge -q convolution-nightly.h5 "${parts[@]}" >/dev/null &&
    "$tf" report convolution-nightly.h5 -o report.html)
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,1850 \
    --screenshot="$work/shot.png" "file://$work/report.html" 2>/dev/null
# 256 colours: the page is flat colours and text, so the picture stays small
/usr/bin/python3 -c "
import sys
from PIL import Image
Image.open(sys.argv[1]).convert('RGB').quantize(colors=256, method=Image.Quantize.MEDIANCUT) \
    .save(sys.argv[2], optimize=True)" "$work/shot.png" "$out"
echo "wrote $out ($(stat -c %s "$out") bytes)"
