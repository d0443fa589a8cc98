/* Trusted reference for kernels/reduction: the sum in double, in order. */
void reduction_reference(void **args);

void reduction_reference(void **args)
{
    const int n = *(const int *)args[0];
    const float *x = *(const float *const *)args[1];
    float *out = *(float *const *)args[5];
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += x[i];
    out[0] = (float)s;
}
