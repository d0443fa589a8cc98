/* Trusted reference for kernels/sgemm: C = alpha * At^T * B + beta * C in double.
 *
 * At is K x M, B is K x N, C is M x N, all row-major. The product is
 * accumulated in double over blocks of IB rows x JB columns of C that stay in
 * L1 while k sweeps the whole depth, so 4096^3 takes seconds rather than the
 * minutes of the textbook loop; the sum per element is still plain, in order
 * of k, in double. */
void sgemm_reference(void **args);

enum { IB = 8, JB = 256 };

void sgemm_reference(void **args)
{
    const int M = *(const int *)args[0], N = *(const int *)args[1], K = *(const int *)args[2];
    const double alpha = *(const float *)args[3], beta = *(const float *)args[4];
    const float *At = *(const float *const *)args[5];
    const float *B = *(const float *const *)args[6];
    float *C = *(float *const *)args[7];
    /* Row blocks are independent: spread them over the cores (the farm compiles
     * references with -fopenmp; without it this is the serial loop). */
#pragma omp parallel for schedule(dynamic)
    for (int i0 = 0; i0 < M; i0 += IB)
        for (int j0 = 0; j0 < N; j0 += JB) {
            double acc[IB][JB], bd[JB];
            const int ib = M - i0 < IB ? M - i0 : IB, jb = N - j0 < JB ? N - j0 : JB;
            for (int i = 0; i < ib; i++)
                for (int j = 0; j < jb; j++)
                    acc[i][j] = 0.0;
            for (int k = 0; k < K; k++) {
                const float *a = At + (long)k * M + i0, *b = B + (long)k * N + j0;
                for (int j = 0; j < jb; j++)
                    bd[j] = b[j];
                for (int i = 0; i < ib; i++) {
                    const double ai = a[i];
                    if (jb == JB) /* a constant trip count lets -O2 vectorise */
                        for (int j = 0; j < JB; j++)
                            acc[i][j] += ai * bd[j];
                    else
                        for (int j = 0; j < jb; j++)
                            acc[i][j] += ai * bd[j];
                }
            }
            for (int i = 0; i < ib; i++)
                for (int j = 0; j < jb; j++) {
                    float *c = C + (long)(i0 + i) * N + j0 + j;
                    /* BLAS: with beta == 0, C is not read (it may hold NaN). */
                    *c = (float)(alpha * acc[i][j] + (beta != 0.0 ? beta * (double)*c : 0.0));
                }
        }
}
