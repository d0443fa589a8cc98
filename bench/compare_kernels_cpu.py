#!/usr/bin/env python3
"""bench/compare_kernels_cpu.py - the GPU comparison kernels' checksum, checked on a CPU.

usage: bench/compare_kernels_cpu.py   (from the project root, after `make`)

Takes the comparison kernels' CUDA text out of worker/gpu_backend.c, builds it
as C++ with one-thread stand-ins for the CUDA built-ins (a warp of one lane:
its shuffles add nothing), runs each of the four kernels over 100,003
elements and compares the checksum it makes with tf_verify_checksum
(worker/verify.o). It checks the arithmetic of the text, not a GPU: the warp
reduction and the launch are test_cuda's `test_device_compare`, on a GPU.
Exit status 0 when all four agree. Needs g++."""
import ast, os, re, subprocess, sys, tempfile

text = open("worker/gpu_backend.c").read()
body = text[text.index("static const char compare_source[] ="):]
body = body[:body.index(";\n")]
source = "".join(ast.literal_eval(m) for m in re.findall(r'"(?:[^"\\]|\\.)*"', body))

SHIM = r'''
#include <math.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#define __device__
#define __forceinline__ inline
#define __global__
struct tf_dim { unsigned x; };
static tf_dim threadIdx{0}, blockIdx{0}, blockDim{1}, gridDim{1};
template <class T> static T __shfl_down_sync(unsigned, T, int) { return 0; }
static void atomicAdd(unsigned long long *p, unsigned long long v) { *p += v; }
static void atomicMin(unsigned long long *p, unsigned long long v) { if (v < *p) *p = v; }
static unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static long long __double_as_longlong(double f) { long long u; memcpy(&u, &f, 8); return u; }
using std::fabs;
'''
MAIN = r'''
extern "C" uint64_t tf_verify_checksum(const void *p, size_t bytes);
int main() {
    const size_t n = 100003;
    int fails = 0;
    float *ef = new float[n], *gf = new float[n];
    double *ed = new double[n], *gd = new double[n];
    int *ei = new int[n];
    long long *el = new long long[n];
    uint64_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        ef[i] = gf[i] = (float)(x % 1000) / 7.f - 50;
        ed[i] = gd[i] = ef[i] * 1.000001;
        ei[i] = (int)x;
        el[i] = (long long)x;
    }
    unsigned long long out[3];
#define RUN(K, G, E, AT)                                                                 \
    out[0] = 0, out[1] = ~0ull, out[2] = 0;                                              \
    K(G, E, n, AT, AT, out);                                                             \
    {                                                                                    \
        const uint64_t h = tf_verify_checksum(E, n * sizeof *E);                         \
        printf("%s: checksum %s the host's\n", #K, h == out[2] ? "equals" : "DIFFERS from"); \
        fails += h != out[2];                                                            \
    }
    RUN(tf_compare_f32, gf, ef, 1e-3f)
    RUN(tf_compare_f64, gd, ed, 1e-9)
    RUN(tf_compare_i32, ei, ei, 0.0)
    RUN(tf_compare_i64, el, el, 0.0)
    return fails;
}
'''
with tempfile.TemporaryDirectory() as tmp:
    cpp, exe = os.path.join(tmp, "compare.cpp"), os.path.join(tmp, "compare")
    open(cpp, "w").write(SHIM + source + MAIN)
    subprocess.run(["g++", "-O1", "-std=c++17", cpp, "worker/verify.o", "schema/status.o",
                    "schema/error.o", "-lpthread", "-o", exe], check=True)
    sys.exit(subprocess.run([exe]).returncode)
