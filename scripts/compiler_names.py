#!/usr/bin/env python3
"""compiler_names.py - which parameter names break every NVRTC or hipRTC compile.

A parameter NAME reaches the compiler as -DNAME=VALUE, defined before the
headers NVRTC includes in every compile (its built-in CUDA headers) and before
tunefarm.h, so a name those headers use as an identifier (`T`, a template
parameter there) is rewritten into a number and the compile fails deep in a
header ("expected an identifier"). This script finds those names by trying
them, and prints a table of schema/defines.c: nvrtc_names by default,
hiprtc_names with --hiprtc.

Candidates: every identifier in the text of libnvrtc-builtins (the headers are
stored there as strings), every identifier of tunefarm.h, the letters and the
two-character names [A-Z][A-Z0-9]. For each, kernels/vecadd_cuda/vecadd.cu is
compiled exactly as worker/backend_cuda.c does (--gpu-architecture=sm_90
-std=c++17 -DBLOCK=256, tunefarm.h as an in-memory header) with -DNAME=1
added; a name is kept when the compile fails and either its first error is
in the built-in header or in tunefarm.h, or the name is not an identifier of
vecadd.cu (`global` and `launch_bounds`, the attributes __global__ and
__launch_bounds__ expand to, fail where the kernel uses the macros); a name
vecadd.cu uses itself (`i`, `n`) fails for vecadd.cu's reasons only. Names the rules of schema/defines.c already refuse
(reserved identifiers, keywords, the cuda/CUDA/CU and TF_/tf_ prefixes) are
left out of the table.

  scripts/compiler_names.py [--tunefarm ./tunefarm] [--cuda /usr/local/cuda]
  scripts/compiler_names.py --hiprtc libamdhip64.so.5

Needs only libnvrtc (no GPU). Takes about two minutes for ~4800 candidates.

With --hiprtc LIB, the same with hipRTC (hiprtc* in LIB: libamdhip64 up to
ROCm 5, libhiprtc from ROCm 6) for gfx90a, as worker/backend_hip.c compiles
(--offload-arch=gfx90a -std=c++17, tunefarm.h for hip). hipRTC takes ~0.4 s a
compile, so the candidates are fewer: the letters, the two-character names
[A-Z][A-Z0-9] and [a-z][a-z0-9], tunefarm.h's identifiers, a list of common
tuning words and the NVRTC table; printed are the names that break and that
neither the rules nor the NVRTC table already refuse.
"""
import argparse
import ctypes
import glob
import re
import string
import subprocess
import sys

KEYWORDS = set("""alignas alignof and and_eq asm auto bitand bitor bool break case catch
char char8_t char16_t char32_t class compl concept const consteval constexpr constinit
const_cast continue co_await co_return co_yield decltype default delete do double
dynamic_cast else enum explicit export extern false float for friend goto if inline int
long mutable namespace new noexcept not not_eq nullptr operator or or_eq private
protected public register reinterpret_cast requires return short signed sizeof static
static_assert static_cast struct switch template this thread_local throw true try typedef
typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq
restrict defined""".split())
RULES = re.compile(r"^(__|_[A-Z]|cuda[A-Z_0-9]|CUDA|CU_|CU[a-z]|hip[A-Z_0-9]|HIP|TF_|tf_)")
COMMON = """N M K BLOCK TILE TILE_X TILE_Y BM BN BK VEC WPT UNROLL STEPS BLOCK_SIZE WARP_SIZE
NUM_THREADS THREADS LOOP SIZE WIDTH HEIGHT DEPTH size width height depth value length flags
mode offset src dst key result level name type pitch stream node mask priority count index
idx tid lane warp block grid tile step steps iters nx ny nz tx ty tz bx by bz sx sy sz pad
stride scale alpha beta gamma eps half float2 int2 uint dim3 warpSize threadIdx blockIdx
blockDim gridDim min max abs sqrt exp log pow sin cos tan floor ceil round fma""".split()
IDENT = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]*\b")


def nvrtc_compiler(cuda):
    """libnvrtc, its function prefix, the architecture option and its name."""
    nvrtc = sorted(glob.glob(cuda + "/lib64/libnvrtc.so.*"))[0]
    nv = ctypes.CDLL(nvrtc)
    major, minor = ctypes.c_int(), ctypes.c_int()
    nv.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return nv, "nvrtc", [b"--gpu-architecture=sm_90"], "NVRTC %d.%d" % (major.value, minor.value)


def first_error_with(lib, prefix, arch, source, header, extra):
    """The first error line of compiling `source` with `extra` options, or None."""
    prog = ctypes.c_void_p()
    hdrs = (ctypes.c_char_p * 1)(header)
    names = (ctypes.c_char_p * 1)(b"tunefarm.h")
    create = getattr(lib, prefix + "CreateProgram")
    if create(ctypes.byref(prog), source, b"vecadd.cu", 1, hdrs, names):
        sys.exit(prefix + "CreateProgram failed")
    opts = arch + [b"-std=c++17", b"-DBLOCK=256"] + extra
    rc = getattr(lib, prefix + "CompileProgram")(prog, len(opts),
                                                 (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    getattr(lib, prefix + "GetProgramLogSize")(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value + 1)
    getattr(lib, prefix + "GetProgramLog")(prog, log)
    getattr(lib, prefix + "DestroyProgram")(ctypes.byref(prog))
    if rc == 0:
        return None
    lines = log.value.decode(errors="replace").splitlines()
    return next((l for l in lines if "error" in l), lines[0] if lines else "?")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tunefarm", default="./tunefarm")
    ap.add_argument("--cuda", default="/usr/local/cuda")
    ap.add_argument("--hiprtc", metavar="LIB", help="sweep hipRTC (in LIB) instead of NVRTC")
    args = ap.parse_args()
    backend = "hip" if args.hiprtc else "cuda"
    header = subprocess.run([args.tunefarm, "header", backend], check=True,
                            capture_output=True).stdout
    source = open("kernels/vecadd_cuda/vecadd.cu", "rb").read()
    own = {m.decode() for m in IDENT.findall(source)}
    if args.hiprtc:
        lib, prefix, arch = ctypes.CDLL(args.hiprtc), "hiprtc", [b"--offload-arch=gfx90a"]
        what = "hipRTC of " + args.hiprtc
        table = open("schema/defines.c").read()
        nvrtc_table = set(re.findall(r'"([^"]+)"', table[table.index("nvrtc_names[]"):
                                                          table.index("};", table.index("nvrtc_names[]"))]))
        cands = set(string.ascii_letters) | nvrtc_table | set(COMMON)
        cands |= {a + b for a in string.ascii_uppercase for b in string.ascii_uppercase + string.digits}
        cands |= {a + b for a in string.ascii_lowercase for b in string.ascii_lowercase + string.digits}
        in_header = lambda e: not e.startswith("vecadd.cu") and "vecadd.cu:" not in e
    else:
        lib, prefix, arch, what = nvrtc_compiler(args.cuda)
        nvrtc_table = set()
        builtins = sorted(glob.glob(args.cuda + "/lib64/libnvrtc-builtins.so.*"))[-1]
        text = open(builtins, "rb").read()
        strings = re.findall(rb"[\x20-\x7e\t\n]{4,}", text)
        cands = {m.decode() for s in strings for m in IDENT.findall(s)}
        cands |= set(string.ascii_letters)
        cands |= {a + b for a in string.ascii_uppercase for b in string.ascii_uppercase + string.digits}
        in_header = lambda e: "builtin_header" in e or e.startswith("tunefarm.h")
    cands |= {m.decode() for m in IDENT.findall(header)}
    if first_error_with(lib, prefix, arch, source, header, []) is not None:
        sys.exit("vecadd.cu does not compile without extra defines")
    broken = []
    for name in sorted(cands):
        err = first_error_with(lib, prefix, arch, source, header, [("-D%s=1" % name).encode()])
        if err and (in_header(err) or name not in own):
            broken.append(name)
    table = sorted(n for n in broken
                   if not RULES.match(n) and n not in KEYWORDS and n not in nvrtc_table)
    print("/* %d candidates, %d break the compile, %d left after the rules (%s) */"
          % (len(cands), len(broken), len(table), what))
    line = "   "
    for n in table:
        item = ' "%s",' % n
        if len(line) + len(item) > 96:
            print(line)
            line = "   "
        line += item
    print(line)


if __name__ == "__main__":
    main()
