#!/usr/bin/env python3
"""bench/nvrtc_cost.py - what one NVRTC compile of a kernel's variant costs, and where.

usage: bench/nvrtc_cost.py TUNEFARM KERNEL_DIR PROBLEM ARCH [N] [JOBS]

Draws N (default 24) valid configurations of the kernel's space for PROBLEM
(`tunefarm space --sample`, seed 1) and compiles each, as the worker's CUDA
backend does (worker/backend_cuda.c: the portability header as the in-memory
"tunefarm.h", -std=c++17, --ptxas-options=-v, one -D per parameter), with
several option sets:

  base      what the worker passes today
  minimal   base + -minimal (NVRTC 12.4+: no texture/surface functions, no
            cudadevrt runtime calls, no device launches, no runtime API types)
  nov       base without --ptxas-options=-v

For each set: CPU seconds per compile (this process's user + system time; the
compile runs on this thread), wall seconds, and whether the CUBIN is byte-equal
to base's. Then the phases NVRTC reports for a few variants (--time, a CSV of
each phase's milliseconds). Then throughput under load: JOBS (default: the
CPUs) processes compiling the same variants at once, per set, variants/s and
CPU seconds per variant. Standard library only (the GPU machine's python3)."""
import ctypes, csv, io, multiprocessing as mp, os, resource, subprocess, sys, tempfile, time

if len(sys.argv) < 5:
    sys.exit(__doc__)
TF, KDIR, PROBLEM, ARCH = sys.argv[1:5]
N = int(sys.argv[5]) if len(sys.argv) > 5 else 24
JOBS = int(sys.argv[6]) if len(sys.argv) > 6 else os.cpu_count()


def load_nvrtc():
    for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    sys.exit("nvrtc_cost: no libnvrtc")


def kernel_source():
    src_name = None
    with open(os.path.join(KDIR, "kernel.yaml")) as f:
        for line in f:
            if line.startswith("source:"):
                src_name = line.split(":", 1)[1].strip()
    with open(os.path.join(KDIR, src_name), "rb") as f:
        return src_name, f.read()


HEADER = subprocess.run([TF, "header", "cuda"], check=True, capture_output=True).stdout
SRC_NAME, SOURCE = kernel_source()
listing = subprocess.run([TF, "space", KDIR, "--problem", PROBLEM, "--sample", str(N), "--seed", "1"],
                         check=True, capture_output=True, text=True).stdout
rows = list(csv.reader(io.StringIO(listing)))
NAMES, CONFIGS = rows[0], rows[1:]

SETS = {
    "base": ["--gpu-architecture=" + ARCH, "-std=c++17", "--ptxas-options=-v"],
    "minimal": ["--gpu-architecture=" + ARCH, "-std=c++17", "--ptxas-options=-v", "-minimal"],
    "nov": ["--gpu-architecture=" + ARCH, "-std=c++17"],
}


def cpu_now():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def compile_one(nv, config, options):
    """(ok, cubin bytes or log, cpu s, wall s)"""
    prog = ctypes.c_void_p()
    hdr = (ctypes.c_char_p * 1)(HEADER)
    hname = (ctypes.c_char_p * 1)(b"tunefarm.h")
    opts = options + ["-D%s=%s" % (n, v) for n, v in zip(NAMES, config)]
    argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    c0, w0 = cpu_now(), time.perf_counter()
    assert nv.nvrtcCreateProgram(ctypes.byref(prog), SOURCE, SRC_NAME.encode(), 1, hdr, hname) == 0
    rc = nv.nvrtcCompileProgram(prog, len(opts), argv)
    out = b""
    if rc == 0:
        size = ctypes.c_size_t()
        nv.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        nv.nvrtcGetCUBIN(prog, buf)
        out = buf.raw
    else:
        size = ctypes.c_size_t()
        nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        nv.nvrtcGetProgramLog(prog, buf)
        out = buf.value
    nv.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc == 0, out, cpu_now() - c0, time.perf_counter() - w0


def worker(args):
    name, configs = args
    nv = load_nvrtc()
    cpu = 0.0
    for c in configs:
        cpu += compile_one(nv, c, SETS[name])[2]
    return cpu


def main():
    nv = load_nvrtc()
    major, minor = ctypes.c_int(), ctypes.c_int()
    nv.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    print("NVRTC %d.%d, %s, kernel %s problem %s, %d variants, %d CPUs" %
          (major.value, minor.value, ARCH, KDIR, PROBLEM, len(CONFIGS), os.cpu_count()))
    compile_one(nv, CONFIGS[0], SETS["base"])  # load NVRTC's builtins once
    cubins = {}
    print("\n## one at a time")
    for name in SETS:
        cpu = wall = 0.0
        same = failed = 0
        for i, c in enumerate(CONFIGS):
            ok, out, cs, ws = compile_one(nv, c, SETS[name])
            cpu += cs
            wall += ws
            if not ok:
                failed += 1
                if failed == 1:
                    print("  %s failed: %s" % (name, out.decode(errors="replace")[:400]))
                continue
            if name == "base":
                cubins[i] = out
            elif cubins.get(i) == out:
                same += 1
        print("%-8s %.3f CPU s and %.3f s wall per variant; %d failed; %s" %
              (name, cpu / len(CONFIGS), wall / len(CONFIGS), failed,
               "" if name == "base" else "%d of %d CUBINs byte-equal to base" % (same, len(cubins))))
    print("\n## phases (--time), ms, base and minimal, first 4 variants")
    for name in ("base", "minimal"):
        for j, c in enumerate(CONFIGS[:4]):
            with tempfile.NamedTemporaryFile("r", suffix=".csv") as t:
                compile_one(nv, c, SETS[name] + ["--time=" + t.name])
                text = t.read().strip().splitlines()
            shown = text if j == 0 else text[-1:]
            print("%s %s:\n  %s" % (name, ",".join(c), "\n  ".join(shown) if text else "(no table)"))
    print("\n## %d processes at once, each compiling all %d variants" % (JOBS, len(CONFIGS)))
    ctx = mp.get_context("fork")
    for name in SETS:
        with ctx.Pool(JOBS) as pool:
            w0 = time.perf_counter()
            cpus = pool.map(worker, [(name, CONFIGS[j % len(CONFIGS):] + CONFIGS[:j % len(CONFIGS)])
                                     for j in range(JOBS)])
            wall = time.perf_counter() - w0
        n = JOBS * len(CONFIGS)
        print("%-8s %.1f variants/s, %.3f CPU s per variant (%.1f s for %d)" %
              (name, n / wall, sum(cpus) / n, wall, n))


if __name__ == "__main__":
    main()
