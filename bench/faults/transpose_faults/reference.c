/* Trusted reference for kernels/transpose: out[j][i] = in[i][j], in blocks that stay in cache. */
void transpose_reference(void **args);

void transpose_reference(void **args)
{
    const int M = *(const int *)args[0], N = *(const int *)args[1];
    const float *in = *(const float *const *)args[2];
    float *out = *(float *const *)args[3];
    enum { B = 32 };
    for (int i0 = 0; i0 < M; i0 += B)
        for (int j0 = 0; j0 < N; j0 += B)
            for (int i = i0; i < i0 + B && i < M; i++)
                for (int j = j0; j < j0 + B && j < N; j++)
                    out[(long)j * M + i] = in[(long)i * N + j];
}
