/* kernels/gemm: blocked SGEMM for one CPU core, C = A * B (row-major, M x K times K x N).
 *
 * Tunable (-D defines from the farm): BM, BN, BK tile the three loops so that a
 * BK x BN tile of B and a BM x BN block of C stay in cache; UNROLL unrolls the
 * k loop; VEC is the width of the GCC vector type the j loop works in (1 =
 * scalar); LOOP picks the order of the two inner loops (LOOP_ikj or LOOP_kij).
 * Entry point follows the farm's ABI: args[i] points at argument i. */
#include <string.h>

#ifndef BM
#define BM 8
#define BN 16
#define BK 16
#define UNROLL 1
#define VEC 1
#define LOOP_ikj 1
#endif

#define STRINGIFY(x) #x
#define UNROLL_PRAGMA_(n) _Pragma(STRINGIFY(GCC unroll n))
#define UNROLL_PRAGMA UNROLL_PRAGMA_(UNROLL)

#if VEC > 1
typedef float vfloat __attribute__((vector_size(VEC * sizeof(float)), aligned(4)));
#endif

void gemm(void **args);

/* C[i, j0:j0+BN] += A[i, k0:k0+BK] * B[k0:k0+BK, j0:j0+BN] for rows i0..i0+BM. */
static inline void gemm_block(int N, int K, const float *restrict A, const float *restrict B,
                              float *restrict C, int i0, int j0, int k0)
{
#if defined(LOOP_ikj)
    for (int i = i0; i < i0 + BM; i++) {
        float *restrict c = C + (long)i * N + j0;
        for (int k = k0; k < k0 + BK; k += UNROLL) {
            UNROLL_PRAGMA
            for (int u = 0; u < UNROLL; u++) {
                const float a = A[(long)i * K + k + u];
                const float *restrict b = B + (long)(k + u) * N + j0;
#if VEC > 1
                for (int j = 0; j < BN; j += VEC) {
                    vfloat cv, bv;
                    memcpy(&cv, c + j, sizeof cv);
                    memcpy(&bv, b + j, sizeof bv);
                    cv += a * bv;
                    memcpy(c + j, &cv, sizeof cv);
                }
#else
                for (int j = 0; j < BN; j++)
                    c[j] += a * b[j];
#endif
            }
        }
    }
#else /* LOOP_kij */
    for (int k = k0; k < k0 + BK; k += UNROLL) {
        for (int i = i0; i < i0 + BM; i++) {
            float *restrict c = C + (long)i * N + j0;
            UNROLL_PRAGMA
            for (int u = 0; u < UNROLL; u++) {
                const float a = A[(long)i * K + k + u];
                const float *restrict b = B + (long)(k + u) * N + j0;
#if VEC > 1
                for (int j = 0; j < BN; j += VEC) {
                    vfloat cv, bv;
                    memcpy(&cv, c + j, sizeof cv);
                    memcpy(&bv, b + j, sizeof bv);
                    cv += a * bv;
                    memcpy(c + j, &cv, sizeof cv);
                }
#else
                for (int j = 0; j < BN; j++)
                    c[j] += a * b[j];
#endif
            }
        }
    }
#endif
}

void gemm(void **args)
{
    const int M = *(const int *)args[0], N = *(const int *)args[1], K = *(const int *)args[2];
    const float *A = *(const float *const *)args[3];
    const float *B = *(const float *const *)args[4];
    float *C = *(float *const *)args[5];

    memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
    for (int j0 = 0; j0 < N; j0 += BN)
        for (int k0 = 0; k0 < K; k0 += BK)
            for (int i0 = 0; i0 < M; i0 += BM)
                gemm_block(N, K, A, B, C, i0, j0, k0);
}
