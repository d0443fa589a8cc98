// vecadd.cu - SAXPY, y[i] = a * x[i] + y[i], one element per thread.
// BLOCK (the block size, a -D define) is only a launch-bounds hint here: the
// launch geometry comes from kernel.yaml. The entry is TF_GLOBAL (extern "C"
// __global__) so the driver finds it by its plain name.
#include "tunefarm.h"

TF_GLOBAL void TF_LAUNCH_BOUNDS(BLOCK) vecadd(int n, float a, const float *TF_RESTRICT x,
                                              float *TF_RESTRICT y)
{
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
