#!/usr/bin/env python3
"""Kernel Tuner's half of the comparison in bench/gpu.sh.

usage: kt_compare.py KERNEL_YAML_ARCHIVE SIZE COUNT HEADER_DIR SOURCE

Tunes the kernels/sgemm source with Kernel Tuner (CuPy backend, default timing:
7 iterations after a warm-up) over the same parameter space and constraints as
tunefarm's sgemm_kt kernel - read from the archive tunefarm wrote, so both tools
see one space - drawing COUNT random configurations (random_sample strategy) at
SIZE^3. Prints configurations/s, the GPU time in timed launches and the duty
cycle, in the same words as tunefarm's summary."""
import re
import sys
import time

import h5py
import numpy as np

import kernel_tuner


def device_limits():
    import cupy
    props = cupy.cuda.runtime.getDeviceProperties(0)
    return {"max_threads": props["maxThreadsPerBlock"], "max_shared": props["sharedMemPerBlock"],
            "max_registers": props["regsPerBlock"], "warp_size": props["warpSize"]}


def main():
    archive, size, count, header_dir, source = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    with h5py.File(archive, "r") as f:
        k = f["kernels/sgemm_kt"]
        names = [n.decode() if isinstance(n, bytes) else n for n in k.attrs["parameter_names"]]
        params = {n: [int(v) for v in k.attrs["values:" + n]] for n in names}
        constraints = [c.decode() if isinstance(c, bytes) else c for c in k.attrs["constraints"]]
    values = dict(device_limits(), M=size, N=size, K=size)
    restrictions = []
    for c in constraints:
        c = c.replace("&&", " and ").replace("||", " or ")
        c = re.sub(r"\b(%s)\b" % "|".join(values), lambda m: str(values[m.group(1)]), c)
        restrictions.append(c)
    params["block_size_x"] = sorted({a * b for a in params["MDIMC"] for b in params["NDIMC"]})
    restrictions.append("block_size_x == MDIMC * NDIMC")
    rng = np.random.default_rng(1)
    at = rng.uniform(-1, 1, size * size).astype(np.float32)
    b = rng.uniform(-1, 1, size * size).astype(np.float32)
    c = np.zeros(size * size, dtype=np.float32)
    args = [np.int32(size), np.int32(size), np.int32(size), np.float32(0.5), np.float32(0.0), at, b, c]
    with open(source) as fh:
        code = fh.read()
    # Kernel Tuner counts the whole space; draw COUNT of the valid ones.
    t0 = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        "sgemm", code, (size, size), args, params, grid_div_x=["NWG"], grid_div_y=["MWG"],
        block_size_names=["block_size_x"], restrictions=restrictions, lang="CUPY",
        compiler_options=["-std=c++17", "--include-path=" + header_dir], iterations=7,
        strategy="random_sample", strategy_options={"max_fevals": count}, quiet=True, verbose=False)
    wall = time.perf_counter() - t0
    ok = [r for r in results if isinstance(r.get("time"), float) and np.isfinite(r["time"])]
    gpu = sum(r["time"] * 7 for r in ok) / 1e3
    compile_s = sum(r.get("compile_time", 0) for r in results) / 1e3
    best = min(ok, key=lambda r: r["time"]) if ok else None
    print("kernel_tuner %s s%d: %d configurations (%d ok) in %.1f s = %.2f configurations/s; "
          "compile %.1f s; GPU time in timed launches %.2f s = duty cycle %.1f%%; best %.3f ms"
          % (kernel_tuner.__version__, size, len(results), len(ok), wall, len(results) / wall,
             compile_s, gpu, 100 * gpu / wall, best["time"] if best else float("nan")))


if __name__ == "__main__":
    main()
