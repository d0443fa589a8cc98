/* Trusted reference for kernels/conv2d_gpu: direct summation in double (as kernels/conv2d). */
void conv2d_gpu_reference(void **args);

void conv2d_gpu_reference(void **args)
{
    const int H = *(const int *)args[0], W = *(const int *)args[1], F = *(const int *)args[2];
    const float *in = *(const float *const *)args[3];
    const float *w = *(const float *const *)args[4];
    float *out = *(float *const *)args[5];
    const long iw = W + F - 1;
    for (long y = 0; y < H; y++)
        for (long x = 0; x < W; x++) {
            double acc = 0.0;
            for (int i = 0; i < F; i++)
                for (int j = 0; j < F; j++)
                    acc += (double)in[(y + i) * iw + x + j] * (double)w[i * F + j];
            out[y * W + x] = (float)acc;
        }
}
