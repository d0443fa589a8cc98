#!/usr/bin/env python3
"""nvrtc_names.py - which parameter names break every NVRTC compile.

A parameter NAME reaches the compiler as -DNAME=VALUE, defined before the
headers NVRTC includes in every compile (its built-in CUDA headers) and before
tunefarm.h, so a name those headers use as an identifier (`T`, a template
parameter there) is rewritten into a number and the compile fails deep in a
header ("expected an identifier"). This script finds those names by trying
them, and prints the table of schema/defines.c.

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

  scripts/nvrtc_names.py [--tunefarm ./tunefarm] [--cuda /usr/local/cuda]

Needs only libnvrtc (no GPU). Takes about a minute for ~4700 candidates.
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
RULES = re.compile(r"^(__|_[A-Z]|cuda[A-Z_0-9]|CUDA|CU_|CU[a-z]|TF_|tf_)")
IDENT = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]*\b")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tunefarm", default="./tunefarm")
    ap.add_argument("--cuda", default="/usr/local/cuda")
    args = ap.parse_args()
    nvrtc = sorted(glob.glob(args.cuda + "/lib64/libnvrtc.so.*"))[0]
    builtins = sorted(glob.glob(args.cuda + "/lib64/libnvrtc-builtins.so.*"))[-1]
    nv = ctypes.CDLL(nvrtc)
    header = subprocess.run([args.tunefarm, "header", "cuda"], check=True,
                            capture_output=True).stdout
    source = open("kernels/vecadd_cuda/vecadd.cu", "rb").read()

    def first_error(extra):
        prog = ctypes.c_void_p()
        hdrs = (ctypes.c_char_p * 1)(header)
        names = (ctypes.c_char_p * 1)(b"tunefarm.h")
        if nv.nvrtcCreateProgram(ctypes.byref(prog), source, b"vecadd.cu", 1, hdrs, names):
            sys.exit("nvrtcCreateProgram failed")
        opts = [b"--gpu-architecture=sm_90", b"-std=c++17", b"-DBLOCK=256"] + extra
        rc = nv.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        size = ctypes.c_size_t()
        nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nv.nvrtcGetProgramLog(prog, log)
        nv.nvrtcDestroyProgram(ctypes.byref(prog))
        if rc == 0:
            return None
        lines = log.value.decode(errors="replace").splitlines()
        return next((l for l in lines if "error" in l), lines[0] if lines else "?")

    if first_error([]) is not None:
        sys.exit("vecadd.cu does not compile without extra defines")
    text = open(builtins, "rb").read()
    strings = re.findall(rb"[\x20-\x7e\t\n]{4,}", text)
    cands = {m.decode() for s in strings for m in IDENT.findall(s)}
    cands |= {m.decode() for m in IDENT.findall(header)}
    cands |= set(string.ascii_letters)
    cands |= {a + b for a in string.ascii_uppercase for b in string.ascii_uppercase + string.digits}
    own = {m.decode() for m in IDENT.findall(source)}
    broken = []
    for name in sorted(cands):
        err = first_error([("-D%s=1" % name).encode()])
        if err and ("builtin_header" in err or err.startswith("tunefarm.h") or name not in own):
            broken.append(name)
    table = sorted(n for n in broken if not RULES.match(n) and n not in KEYWORDS)
    ver_major, ver_minor = ctypes.c_int(), ctypes.c_int()
    nv.nvrtcVersion(ctypes.byref(ver_major), ctypes.byref(ver_minor))
    print("/* %d candidates, %d break the compile, %d left after the rules (NVRTC %d.%d) */"
          % (len(cands), len(broken), len(table), ver_major.value, ver_minor.value))
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
