/* Trusted reference for kernels/conv2d: direct summation in double. */
void conv2d_reference(void **args);

void conv2d_reference(void **args)
{
    const int H = *(const int *)args[0], W = *(const int *)args[1], F = *(const int *)args[2];
    const float *in = *(const float *const *)args[3];
    const float *w = *(const float *const *)args[4];
    float *out = *(float *const *)args[5];
    const long iw = W + F - 1;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            double acc = 0.0;
            for (int i = 0; i < F; i++)
                for (int j = 0; j < F; j++)
                    acc += (double)in[(y + i) * iw + x + j] * (double)w[i * F + j];
            out[(long)y * W + x] = (float)acc;
        }
}
