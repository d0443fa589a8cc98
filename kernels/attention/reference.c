/* Trusted reference for kernels/attention: O = softmax(Q K^T / sqrt(D)) V, per row, in double.
 *
 * For each (batch, head) K is converted to double and transposed and V to
 * double once; then each query row gets its S scores as D axpy sweeps over
 * K^T, a max-subtracted softmax, and its output as S axpy sweeps over V. The
 * axpy works on fixed-length chunks so that -O2 vectorises it; everything
 * stays in double, summed in order. */
#include <math.h>
#include <stdlib.h>

void attention_reference(void **args);

/* y[0..n) += a * x[0..n) */
static void axpy(double *y, double a, const double *x, long n)
{
    long i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; k++)
            y[i + k] += a * x[i + k];
    for (; i < n; i++)
        y[i] += a * x[i];
}

void attention_reference(void **args)
{
    const int B = *(const int *)args[0], H = *(const int *)args[1];
    const long S = *(const int *)args[2], D = *(const int *)args[3];
    const float *Q = *(const float *const *)args[4], *K = *(const float *const *)args[5];
    const float *V = *(const float *const *)args[6];
    float *O = *(float *const *)args[7];
    const double scale = 1.0 / sqrt((double)D);
    /* (batch, head) pairs are independent: one per thread at a time (the farm
     * compiles references with -fopenmp; without it this is the serial loop). */
#pragma omp parallel
    {
    double *kt = malloc(sizeof *kt * (size_t)(S * D)), *v = malloc(sizeof *v * (size_t)(S * D));
    double *sc = malloc(sizeof *sc * (size_t)S), *o = malloc(sizeof *o * (size_t)D);
    if (!kt || !v || !sc || !o)
        abort(); /* the reference cannot report errors; runner sees a crash */
#pragma omp for schedule(dynamic)
    for (long bh = 0; bh < (long)B * H; bh++) {
        const float *q = Q + bh * S * D, *k = K + bh * S * D, *vv = V + bh * S * D;
        for (long j = 0; j < S; j++)
            for (long d = 0; d < D; d++) {
                kt[d * S + j] = k[j * D + d];
                v[j * D + d] = vv[j * D + d];
            }
        for (long i = 0; i < S; i++) {
            for (long j = 0; j < S; j++)
                sc[j] = 0.0;
            for (long d = 0; d < D; d++)
                axpy(sc, (double)q[i * D + d], kt + d * S, S);
            double mx = -INFINITY, sum = 0.0;
            for (long j = 0; j < S; j++)
                mx = sc[j] * scale > mx ? sc[j] * scale : mx;
            for (long j = 0; j < S; j++) {
                sc[j] = exp(sc[j] * scale - mx);
                sum += sc[j];
            }
            for (long d = 0; d < D; d++)
                o[d] = 0.0;
            for (long j = 0; j < S; j++)
                axpy(o, sc[j], v + j * D, D);
            for (long d = 0; d < D; d++)
                O[(bh * S + i) * D + d] = (float)(o[d] / sum);
        }
    }
    free(kt);
    free(v);
    free(sc);
    free(o);
    }
}
