// sgemm.cu - single-precision GEMM in the style of CLBlast's Xgemm kernel.
//
// C = alpha * A * B + beta * C with A given transposed: At is K x M, B is
// K x N and C is M x N, all row-major (so A is column-major M x K). Keeping
// M contiguous in At and N contiguous in B lets both operands be loaded with
// float2/float4 straight into shared memory, with no transposition on the way.
// When beta == 0, C is write-only (BLAS semantics): it is never read.
//
// A work-group of MDIMC x NDIMC threads computes an MWG x NWG tile of C, each
// thread an MWI x NWI block of it (MWI = MWG / MDIMC) held in registers: every
// k step loads MWI values of A and NWI values of B and does MWI * NWI FMAs.
// STRM/STRN choose which outputs a thread owns: a contiguous chunk (0) or
// vectors strided by the thread count (1, conflict-free shared reads and
// coalesced stores). SA/SB stage the KWG-deep slices of A/B in shared memory
// (0: read them from global memory/L1 in the inner loop); for the staging the
// threads are re-shaped MDIMA x (threads / MDIMA) for A and NDIMB x (threads /
// NDIMB) for B, and PAD pads the shared rows by one vector against bank
// conflicts. KWI is the unroll factor of the k loop inside a tile.
// Threads are numbered along n first, so consecutive threads store
// consecutive columns of C.
#include "tunefarm.h"

#define NTHREADS (MDIMC * NDIMC)
#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define MVI (MWI / VWM)  // vectors of A per thread
#define NVI (NWI / VWN)  // vectors of B per thread
// Staging shapes.
#define KDIMA (NTHREADS / MDIMA)
#define MVA (MWG / (MDIMA * VWM))
#define KWA (KWG / KDIMA)
#define KDIMB (NTHREADS / NDIMB)
#define NVB (NWG / (NDIMB * VWN))
#define KWB (KWG / KDIMB)
// Shared row strides in floats (a multiple of the vector width keeps vectors aligned).
#define LDAS (MWG + PAD * VWM)
#define LDBS (NWG + PAD * VWN)

#if VWM == 1
typedef float realM;
#elif VWM == 2
typedef float2 realM;
#else
typedef float4 realM;
#endif
#if VWN == 1
typedef float realN;
#elif VWN == 2
typedef float2 realN;
#else
typedef float4 realN;
#endif

TF_DEVICE void tf_unpack(float *d, float v) { d[0] = v; }
TF_DEVICE void tf_unpack(float *d, float2 v) { d[0] = v.x; d[1] = v.y; }
TF_DEVICE void tf_unpack(float *d, float4 v) { d[0] = v.x; d[1] = v.y; d[2] = v.z; d[3] = v.w; }
TF_DEVICE float tf_pack1(const float *s) { return s[0]; }
TF_DEVICE float2 tf_pack2(const float *s) { return make_float2(s[0], s[1]); }
TF_DEVICE float4 tf_pack4(const float *s) { return make_float4(s[0], s[1], s[2], s[3]); }
#if VWN == 1
#define PACKN tf_pack1
#elif VWN == 2
#define PACKN tf_pack2
#else
#define PACKN tf_pack4
#endif

// First float (within the tile) of vector `v` of a thread with index `t`.
#if STRM == 0
#define MOFF(t, v) (((t) * MVI + (v)) * VWM)
#else
#define MOFF(t, v) (((v) * MDIMC + (t)) * VWM)
#endif
#if STRN == 0
#define NOFF(t, v) (((t) * NVI + (v)) * VWN)
#else
#define NOFF(t, v) (((v) * NDIMC + (t)) * VWN)
#endif

TF_GLOBAL void TF_LAUNCH_BOUNDS(NTHREADS)
sgemm(int M, int N, int K, float alpha, float beta, const float *TF_RESTRICT At,
      const float *TF_RESTRICT B, float *TF_RESTRICT C)
{
    const int tid = threadIdx.x;
    const int tidn = tid % NDIMC, tidm = tid / NDIMC;
    const int m0 = blockIdx.y * MWG, n0 = blockIdx.x * NWG;
#if SA
    TF_SHARED realM as[KWG * LDAS / VWM];
    const int la_m = tid % MDIMA, la_k = tid / MDIMA;
#endif
#if SB
    TF_SHARED realN bs[KWG * LDBS / VWN];
    const int lb_n = tid % NDIMB, lb_k = tid / NDIMB;
#endif
    float acc[MWI][NWI];
    TF_UNROLL
    for (int i = 0; i < MWI; i++) {
        TF_UNROLL
        for (int j = 0; j < NWI; j++) acc[i][j] = 0.0f;
    }

    for (int kwg = 0; kwg < K; kwg += KWG) {
#if SA
        TF_UNROLL
        for (int ka = 0; ka < KWA; ka++) {
            const int k = ka * KDIMA + la_k;
            const realM *src = (const realM *)(At + (long long)(kwg + k) * M + m0);
            TF_UNROLL
            for (int ma = 0; ma < MVA; ma++)
                as[k * (LDAS / VWM) + ma * MDIMA + la_m] = TF_LDG(src + ma * MDIMA + la_m);
        }
#endif
#if SB
        TF_UNROLL
        for (int kb = 0; kb < KWB; kb++) {
            const int k = kb * KDIMB + lb_k;
            const realN *src = (const realN *)(B + (long long)(kwg + k) * N + n0);
            TF_UNROLL
            for (int nb = 0; nb < NVB; nb++)
                bs[k * (LDBS / VWN) + nb * NDIMB + lb_n] = TF_LDG(src + nb * NDIMB + lb_n);
        }
#endif
#if SA || SB
        TF_SYNC();
#endif
        TF_NO_UNROLL
        for (int kk = 0; kk < KWG; kk += KWI) {
            TF_UNROLL
            for (int ki = 0; ki < KWI; ki++) {
                const int k = kk + ki;
                float a[MWI], b[NWI];
                TF_UNROLL
                for (int v = 0; v < MVI; v++) {
#if SA
                    tf_unpack(a + v * VWM, as[(k * LDAS + MOFF(tidm, v)) / VWM]);
#else
                    tf_unpack(a + v * VWM, TF_LDG((const realM *)(At + (long long)(kwg + k) * M +
                                                                 m0 + MOFF(tidm, v))));
#endif
                }
                TF_UNROLL
                for (int v = 0; v < NVI; v++) {
#if SB
                    tf_unpack(b + v * VWN, bs[(k * LDBS + NOFF(tidn, v)) / VWN]);
#else
                    tf_unpack(b + v * VWN, TF_LDG((const realN *)(B + (long long)(kwg + k) * N +
                                                                 n0 + NOFF(tidn, v))));
#endif
                }
                TF_UNROLL
                for (int i = 0; i < MWI; i++) {
                    TF_UNROLL
                    for (int j = 0; j < NWI; j++) acc[i][j] = tf_fmaf(a[i], b[j], acc[i][j]);
                }
            }
        }
#if SA || SB
        TF_SYNC();
#endif
    }

    TF_UNROLL
    for (int mv = 0; mv < MVI; mv++) {
        TF_UNROLL
        for (int mc = 0; mc < VWM; mc++) {
            const int i = mv * VWM + mc;
            float *crow = C + (long long)(m0 + MOFF(tidm, mv) + mc) * N + n0;
            TF_UNROLL
            for (int nv = 0; nv < NVI; nv++) {
                realN *dst = (realN *)(crow + NOFF(tidn, nv));
                float r[VWN];
                if (beta == 0.0f) {
                    TF_UNROLL
                    for (int c = 0; c < VWN; c++) r[c] = alpha * acc[i][nv * VWN + c];
                } else {
                    float old[VWN];
                    tf_unpack(old, *dst);
                    TF_UNROLL
                    for (int c = 0; c < VWN; c++) r[c] = alpha * acc[i][nv * VWN + c] + beta * old[c];
                }
                *dst = PACKN(r);
            }
        }
    }
}
