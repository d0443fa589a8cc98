// reduction.cu - sum of a large fp32 array, in one launch.
//
// GRID = sm_count * WAVES blocks of BLOCK threads sweep the array with a
// grid-stride loop, each thread issuing ITEMS independent loads of VEC floats
// (float2/float4) per trip to keep enough bytes in flight. The block's sum is
// then formed with warp shuffles (STEP_shuffle: one shuffle tree per warp, then
// one over the warp sums) or a shared-memory tree (STEP_shared: BLOCK floats,
// a barrier per level). Blocks combine either through a partials buffer that
// the last block to finish sums (MODE_partials, deterministic), or by
// atomically adding into a scratch accumulator (MODE_atomic) that the last
// block reads and clears. "Last" is decided with atomicInc on a counter that
// wraps to 0 by itself after gridDim.x arrivals, and the accumulator is
// cleared by its reader, so repeated launches need no host-side reset (the
// kernel file initialises both to zero once).
#include "tunefarm.h"

#if VEC == 1
typedef float vec_t;
TF_DEVICE float tf_hsum(vec_t v) { return v; }
#elif VEC == 2
typedef float2 vec_t;
TF_DEVICE float tf_hsum(vec_t v) { return v.x + v.y; }
#else
typedef float4 vec_t;
TF_DEVICE float tf_hsum(vec_t v) { return (v.x + v.y) + (v.z + v.w); }
#endif

#define NWARPS (BLOCK / TF_WARP_SIZE)

// The block's sum, valid in thread 0.
TF_DEVICE float block_sum(float v, float *scratch)
{
    const int tid = threadIdx.x;
#ifdef STEP_shuffle
    v = tf_warp_sum(v);
    if (tid % TF_WARP_SIZE == 0) scratch[tid / TF_WARP_SIZE] = v;
    TF_SYNC();
    if (tid < TF_WARP_SIZE) {
        v = tid < NWARPS ? scratch[tid] : 0.0f;
        v = tf_warp_sum(v);
    }
#else
    scratch[tid] = v;
    TF_SYNC();
    TF_UNROLL
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) scratch[tid] += scratch[tid + s];
        TF_SYNC();
    }
    v = scratch[0];
#endif
    return v;
}

TF_GLOBAL void TF_LAUNCH_BOUNDS(BLOCK)
reduction(int n, const float *TF_RESTRICT x, float *TF_RESTRICT partials, float *acc,
          unsigned int *counter, float *TF_RESTRICT out)
{
    TF_SHARED float scratch[BLOCK];
    TF_SHARED int am_last;
    const int tid = threadIdx.x;
    const long long nv = n / VEC;
    const vec_t *xv = (const vec_t *)x;
    float sum = 0.0f;
    for (long long i = (long long)blockIdx.x * BLOCK * ITEMS + tid; i < nv;
         i += (long long)gridDim.x * BLOCK * ITEMS) {
        vec_t v[ITEMS];
        TF_UNROLL
        for (int it = 0; it < ITEMS; it++) {
            const long long j = i + (long long)it * BLOCK;
#if VEC == 1
            v[it] = j < nv ? TF_LDG(xv + j) : 0.0f;
#elif VEC == 2
            v[it] = j < nv ? TF_LDG(xv + j) : make_float2(0.0f, 0.0f);
#else
            v[it] = j < nv ? TF_LDG(xv + j) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#endif
        }
        TF_UNROLL
        for (int it = 0; it < ITEMS; it++) sum += tf_hsum(v[it]);
    }
    // the tail that does not fill a vector
    for (long long j = nv * VEC + (long long)blockIdx.x * BLOCK + tid; j < n;
         j += (long long)gridDim.x * BLOCK)
        sum += x[j];

    sum = block_sum(sum, scratch);
    if (tid == 0) {
#ifdef MODE_atomic
        atomicAdd(acc, sum);
#else
        partials[blockIdx.x] = sum;
#endif
        __threadfence();  // publish before counting in
        am_last = atomicInc(counter, gridDim.x - 1) == gridDim.x - 1;
    }
    TF_SYNC();
    if (!am_last) return;
    __threadfence();
#ifdef MODE_atomic
    if (tid == 0) out[0] = atomicExch(acc, 0.0f);
#else
    float s = 0.0f;
    for (int b = tid; b < (int)gridDim.x; b += BLOCK)
        s += ((volatile float *)partials)[b];
    TF_SYNC();  // scratch is reused
    s = block_sum(s, scratch);
    if (tid == 0) out[0] = s;
#endif
}
