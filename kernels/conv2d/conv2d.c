/* kernels/conv2d: 2D "valid" convolution for one CPU core.
 *
 * out[y][x] = sum_{i,j < F} in[y+i][x+j] * w[i][j], the image (H+F-1) x (W+F-1).
 * Tunable (-D defines): TY x TX output tile; VEC vector width along x (GCC
 * vector extension, 1 = scalar); UNROLL of the innermost filter loop; ORDER_pixel
 * accumulates each output vector over the whole filter in registers, ORDER_filter
 * sweeps each filter tap over the whole tile (streams, but re-reads the tile).
 * Entry point follows the farm's ABI: args[i] points at argument i. */
#include <string.h>

#ifndef TY
#define TY 1
#define TX 16
#define VEC 1
#define UNROLL 1
#define ORDER_pixel 1
#endif

#define STRINGIFY(x) #x
#define UNROLL_PRAGMA_(n) _Pragma(STRINGIFY(GCC unroll n))
#define UNROLL_PRAGMA UNROLL_PRAGMA_(UNROLL)

typedef float vfloat __attribute__((vector_size(VEC * sizeof(float)), aligned(4)));

void conv2d(void **args);

static inline vfloat load(const float *p)
{
    vfloat v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void store(float *p, vfloat v) { memcpy(p, &v, sizeof v); }

void conv2d(void **args)
{
    const int H = *(const int *)args[0], W = *(const int *)args[1], F = *(const int *)args[2];
    const float *in = *(const float *const *)args[3];
    const float *w = *(const float *const *)args[4];
    float *out = *(float *const *)args[5];
    const long iw = W + F - 1;

    for (int y0 = 0; y0 < H; y0 += TY)
        for (int x0 = 0; x0 < W; x0 += TX) {
#if defined(ORDER_pixel)
            for (int y = y0; y < y0 + TY; y++)
                for (int x = x0; x < x0 + TX; x += VEC) {
                    vfloat acc = {0};
                    for (int i = 0; i < F; i++) {
                        const float *row = in + (y + i) * iw + x;
                        UNROLL_PRAGMA
                        for (int j = 0; j < F; j++)
                            acc += w[i * F + j] * load(row + j);
                    }
                    store(out + (long)y * W + x, acc);
                }
#else /* ORDER_filter */
            for (int y = y0; y < y0 + TY; y++)
                memset(out + (long)y * W + x0, 0, sizeof(float) * TX);
            for (int i = 0; i < F; i++)
                for (int j = 0; j < F; j++) {
                    const float tap = w[i * F + j];
                    for (int y = y0; y < y0 + TY; y++) {
                        const float *row = in + (y + i) * iw + j;
                        float *o = out + (long)y * W;
                        UNROLL_PRAGMA
                        for (int x = x0; x < x0 + TX; x += VEC)
                            store(o + x, load(o + x) + tap * load(row + x));
                    }
                }
#endif
        }
}
