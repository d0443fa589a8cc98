/* Trusted reference for kernels/sgemm: C = alpha * At^T * B + beta * C in double.
 *
 * At is K x M, B is K x N, C is M x N, all row-major. Every element of C is a
 * plain sum in double, in order of k, then scaled: the same bits as the
 * textbook triple loop, on every CPU (the farm compiles references without
 * FMA contraction). Only the order in which elements are worked on is
 * blocked, like a BLAS: C is cut into MB x NB blocks spread over the cores
 * (OpenMP); a block's sums stay in double in `acc` while k sweeps the whole
 * depth KC rows at a time, those rows of At and B converted to double once
 * (`ap`, `bp`), and each MR x NR tile of it is summed in registers. A GPU
 * waits for the reference at the start of every problem: 4096^3 took 1.6 s
 * on 16 cores that were compiling too, with the former one (blocks of 8 x 256
 * summed in L1); 2048^3 on 2 cores, 0.86 s before, 0.25-0.27 s now. */
#include <stdlib.h>

void sgemm_reference(void **args);

enum { MB = 64, NB = 256, KC = 128, MR = 4, NR = 32 };

/* acc (MB x NB, row stride NB) += At[k, i0 + i] * B[k, j0 + j] over every k,
 * for i < ib and j < jb; ap and bp hold KC x MB and KC x NB doubles. With
 * AVX-512, GCC's 256-bit default leaves half of each register unused: 512-bit
 * vectors here make it 1.4x faster (the tile is 16 registers of 8 doubles). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)
__attribute__((target("prefer-vector-width=512")))
#endif
static void sgemm_block(int M, int N, int K, const float *At, const float *B, int i0, int j0,
                        int ib, int jb, double *acc, double *ap, double *bp)
{
    for (int k0 = 0; k0 < K; k0 += KC) {
        const int kb = K - k0 < KC ? K - k0 : KC;
        for (int k = 0; k < kb; k++) { /* zeros past the edges: their sums are never stored */
            const float *a = At + (long)(k0 + k) * M + i0, *b = B + (long)(k0 + k) * N + j0;
            for (int i = 0; i < MB; i++)
                ap[k * MB + i] = i < ib ? a[i] : 0.0;
            for (int j = 0; j < NB; j++)
                bp[k * NB + j] = j < jb ? b[j] : 0.0;
        }
        for (int ir = 0; ir < ib; ir += MR) /* an edge tile runs on into the zeros */
            for (int jr = 0; jr < jb; jr += NR) {
                double c[MR][NR]; /* constant bounds: -O3 keeps the tile in registers */
                for (int i = 0; i < MR; i++)
                    for (int j = 0; j < NR; j++)
                        c[i][j] = acc[(ir + i) * NB + jr + j];
                for (int k = 0; k < kb; k++) {
                    const double *a = ap + k * MB + ir, *b = bp + k * NB + jr;
                    for (int i = 0; i < MR; i++)
                        for (int j = 0; j < NR; j++)
                            c[i][j] += a[i] * b[j];
                }
                for (int i = 0; i < MR; i++)
                    for (int j = 0; j < NR; j++)
                        acc[(ir + i) * NB + jr + j] = c[i][j];
            }
    }
}

/* One element's sum, the textbook way: where a thread's buffers could not be had. */
static double sgemm_dot(int M, int N, int K, const float *At, const float *B, int i, int j)
{
    double s = 0.0;
    for (int k = 0; k < K; k++)
        s += (double)At[(long)k * M + i] * (double)B[(long)k * N + j];
    return s;
}

void sgemm_reference(void **args)
{
    const int M = *(const int *)args[0], N = *(const int *)args[1], K = *(const int *)args[2];
    const double alpha = *(const float *)args[3], beta = *(const float *)args[4];
    const float *At = *(const float *const *)args[5];
    const float *B = *(const float *const *)args[6];
    float *C = *(float *const *)args[7];
    const int mblocks = (M + MB - 1) / MB, nblocks = (N + NB - 1) / NB;
#pragma omp parallel
    {
        double *acc = malloc(sizeof(double) * MB * NB), *ap = malloc(sizeof(double) * KC * MB),
               *bp = malloc(sizeof(double) * KC * NB);
        const int blocked = acc && ap && bp;
#pragma omp for schedule(dynamic)
        for (int t = 0; t < mblocks * nblocks; t++) {
            const int i0 = t / nblocks * MB, j0 = t % nblocks * NB;
            const int ib = M - i0 < MB ? M - i0 : MB, jb = N - j0 < NB ? N - j0 : NB;
            if (blocked) {
                for (int i = 0; i < MB * NB; i++)
                    acc[i] = 0.0;
                sgemm_block(M, N, K, At, B, i0, j0, ib, jb, acc, ap, bp);
            }
            for (int i = 0; i < ib; i++)
                for (int j = 0; j < jb; j++) {
                    float *c = C + (long)(i0 + i) * N + j0 + j;
                    const double s = blocked ? acc[i * NB + j]
                                             : sgemm_dot(M, N, K, At, B, i0 + i, j0 + j);
                    /* BLAS: with beta == 0, C is not read (it may hold NaN). */
                    *c = (float)(alpha * s + (beta != 0.0 ? beta * (double)*c : 0.0));
                }
        }
        free(acc);
        free(ap);
        free(bp);
    }
}
