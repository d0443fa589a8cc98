/* Trusted reference for kernels/vecadd_cuda: y = a * x + y, in float like the
 * kernel (one multiply-add per element; the GPU may fuse it, which the
 * tolerance covers). */
void vecadd_reference(void **args);

void vecadd_reference(void **args)
{
    const int n = *(const int *)args[0];
    const float a = *(const float *)args[1];
    const float *x = *(const float *const *)args[2];
    float *y = *(float *const *)args[3];
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}
