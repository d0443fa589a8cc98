// conv2d.cu - 2D convolution ("valid" mode) of an (H+F-1) x (W+F-1) fp32 image
// with an F x F filter into an H x W output, as kernels/conv2d does on the CPU.
//
// A block of (TILE_X / WPT_X) x (TILE_Y / WPT_Y) threads computes a TILE_Y x
// TILE_X output tile, each thread WPT_Y x WPT_X outputs strided by the block's
// width/height (so a warp reads and writes consecutive columns). STAGE_shared
// first copies the tile's (TILE_Y+F-1) x (TILE_X+F-1) input window into
// shared memory, STAGE_direct reads the image through the L1/texture path.
// FILTER_shared stages the taps in shared memory; FILTER_global reads them
// with __ldg (uniform across the block, so the L1 broadcasts them). Constant
// memory is not offered: it needs a host-side symbol upload, and the farm's
// launch ABI passes device buffers only. UNROLL unrolls the inner tap loop
// (F is a run-time size). Shared memory is dynamic (launch.shared).
#include "tunefarm.h"

#define BX (TILE_X / WPT_X)
#define BY (TILE_Y / WPT_Y)

TF_GLOBAL void TF_LAUNCH_BOUNDS(BX * BY)
conv2d(int H, int W, int F, const float *TF_RESTRICT image, const float *TF_RESTRICT filter,
       float *TF_RESTRICT out)
{
    extern __shared__ float smem[];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
    const int x0 = blockIdx.x * TILE_X, y0 = blockIdx.y * TILE_Y;
    const long long iw = W + F - 1;
    float *next = smem;
    (void)H;
#ifdef STAGE_shared
    const int tw = TILE_X + F - 1, th = TILE_Y + F - 1;
    float *tile = next;
    next += tw * th;
    for (int i = tid; i < tw * th; i += BX * BY)
        tile[i] = TF_LDG(image + (y0 + i / tw) * iw + x0 + i % tw);
#define IMG(y, x) tile[(y) * tw + (x)]
#else
    const float *win = image + y0 * iw + x0;
#define IMG(y, x) TF_LDG(win + (y) * iw + (x))
#endif
#ifdef FILTER_shared
    float *taps = next;
    for (int i = tid; i < F * F; i += BX * BY) taps[i] = filter[i];
#define TAP(i) taps[i]
#else
#define TAP(i) TF_LDG(filter + (i))
#endif
#if defined(STAGE_shared) || defined(FILTER_shared)
    TF_SYNC();
#endif
    float acc[WPT_Y][WPT_X];
    TF_UNROLL
    for (int a = 0; a < WPT_Y; a++) {
        TF_UNROLL
        for (int b = 0; b < WPT_X; b++) acc[a][b] = 0.0f;
    }
    for (int fy = 0; fy < F; fy++) {
        TF_UNROLL_N(UNROLL)
        for (int fx = 0; fx < F; fx++) {
            const float w = TAP(fy * F + fx);
            TF_UNROLL
            for (int a = 0; a < WPT_Y; a++) {
                TF_UNROLL
                for (int b = 0; b < WPT_X; b++)
                    acc[a][b] = tf_fmaf(w, IMG(ty + a * BY + fy, tx + b * BX + fx), acc[a][b]);
            }
        }
    }
    TF_UNROLL
    for (int a = 0; a < WPT_Y; a++) {
        TF_UNROLL
        for (int b = 0; b < WPT_X; b++)
            out[(long long)(y0 + ty + a * BY) * W + x0 + tx + b * BX] = acc[a][b];
    }
}
