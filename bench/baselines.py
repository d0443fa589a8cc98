#!/usr/bin/env python3
"""Vendor baselines on the GPU, for comparison with tunefarm's tuned kernels.

Prints one line per baseline: cuBLAS SGEMM (through PyTorch, TF32 off) at the sgemm
kernel's problem sizes, PyTorch scaled_dot_product_attention in fp32 and fp16, and a
device-to-device copy's bandwidth (read + write) for transpose and reduction.
Timing: CUDA events around each call, warm-up first, median of 20."""
import statistics

import torch


def bench(fn, reps=20, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print("device: %s, torch %s, CUDA %s" % (torch.cuda.get_device_name(), torch.__version__,
                                            torch.version.cuda))
    for n in (512, 1024, 4096):
        a = torch.randn(n, n, device="cuda")
        b = torch.randn(n, n, device="cuda")
        t = bench(lambda: torch.mm(a, b))
        print("baseline cublas_sgemm n=%d: %.3f ms, %.1f TFLOP/s" % (n, t * 1e3, 2 * n**3 / t / 1e12))
    for (bsz, h, s, d) in ((8, 32, 2048, 128), (1, 4, 256, 64)):
        for dtype in (torch.float32, torch.float16):
            q, k, v = (torch.randn(bsz, h, s, d, device="cuda", dtype=dtype) for _ in range(3))
            t = bench(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v))
            print("baseline sdpa_%s b=%d h=%d s=%d d=%d: %.3f ms, %.1f TFLOP/s"
                  % (str(dtype).split(".")[-1], bsz, h, s, d, t * 1e3, 4 * bsz * h * s * s * d / t / 1e12))
    for n in (1 << 24, 1 << 28):
        x = torch.empty(n, device="cuda", dtype=torch.float32)
        y = torch.empty_like(x)
        t = bench(lambda: y.copy_(x))
        print("baseline d2d_copy %d MiB: %.3f ms, %.0f GB/s (read + write)" % (n * 4 >> 20, t * 1e3, 2 * n * 4 / t / 1e9))


if __name__ == "__main__":
    main()
