/* Trusted reference for kernels/gemm: the textbook triple loop, accumulated in double. */
void gemm_reference(void **args);

void gemm_reference(void **args)
{
    const int M = *(const int *)args[0], N = *(const int *)args[1], K = *(const int *)args[2];
    const float *A = *(const float *const *)args[3];
    const float *B = *(const float *const *)args[4];
    float *C = *(float *const *)args[5];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int k = 0; k < K; k++)
                acc += (double)A[(long)i * K + k] * (double)B[(long)k * N + j];
            C[(long)i * N + j] = (float)acc;
        }
}
