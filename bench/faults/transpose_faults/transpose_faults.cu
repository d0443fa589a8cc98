// transpose.cu - out-of-place transpose of a row-major M x N fp32 matrix.
//
// bench/faults: kernels/transpose with a FAULT parameter (see kernel.yaml);
// with FAULT 0 the code is the shipped kernel's, line for line.
//
// out (N x M) = in^T. A block of TILE / VEC x ROWS threads moves one TILE x TILE
// tile through shared memory: it reads rows of `in` (coalesced, VEC floats per
// thread as float2/float4), then writes rows of `out` (coalesced again) by
// reading columns of the shared tile. Each thread covers TILE / ROWS rows of the
// tile. PAD widens the shared rows: the column reads of a warp hit TILE + PAD
// apart, and with PAD = 0 they all land in one bank (a 32-way conflict).
#include "tunefarm.h"

#if VEC == 1
typedef float vec_t;
TF_DEVICE void tf_put(float *d, vec_t v) { d[0] = v; }
TF_DEVICE vec_t tf_get(const float *s) { return s[0]; }
#elif VEC == 2
typedef float2 vec_t;
TF_DEVICE void tf_put(float *d, vec_t v) { d[0] = v.x; d[1] = v.y; }
TF_DEVICE vec_t tf_get(const float *s) { return make_float2(s[0], s[1]); }
#else
typedef float4 vec_t;
TF_DEVICE void tf_put(float *d, vec_t v) { d[0] = v.x; d[1] = v.y; d[2] = v.z; d[3] = v.w; }
TF_DEVICE vec_t tf_get(const float *s) { return make_float4(s[0], s[1], s[2], s[3]); }
#endif

TF_GLOBAL void TF_LAUNCH_BOUNDS(TILE / VEC * ROWS)
transpose(int M, int N, const float *TF_RESTRICT in, float *TF_RESTRICT out)
{
    TF_SHARED float tile[TILE][TILE + PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int n0 = blockIdx.x * TILE, m0 = blockIdx.y * TILE;
#if FAULT == 1
    // An illegal address: 2^36 floats (256 GiB) past `out`, from one thread.
    if (blockIdx.x == 0 && blockIdx.y == 0 && tx == 0 && ty == 0)
        ((volatile float *)out)[(size_t)1 << 36] = 1.0f;
#elif FAULT == 2
    // A kernel that never ends: a volatile load per iteration (x is never NaN).
    if (blockIdx.x == 0 && blockIdx.y == 0 && tx == 0 && ty == 0) {
        const volatile float *vin = in;
        while (vin[0] == vin[0]) {
        }
    }
#endif

    TF_UNROLL
    for (int r = ty; r < TILE; r += ROWS) {
        const vec_t v = TF_LDG((const vec_t *)(in + (long long)(m0 + r) * N + n0) + tx);
        tf_put(&tile[r][tx * VEC], v);
    }
    TF_SYNC();
    TF_UNROLL
    for (int r = ty; r < TILE; r += ROWS) {
        float v[VEC];
        TF_UNROLL
        for (int i = 0; i < VEC; i++) v[i] = tile[tx * VEC + i][r];
        ((vec_t *)(out + (long long)(n0 + r) * M + m0))[tx] = tf_get(v);
    }
}
