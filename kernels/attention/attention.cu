// attention.cu - flash-attention forward pass in fp32: O = softmax(Q K^T / sqrt(D)) V.
//
// Q, K, V and O are [B][H][S][D] row-major. A block of WARPS warps owns BLOCK_M
// query rows of one (batch, head) and sweeps the keys in tiles of BLOCK_N,
// never materialising the S x S scores: each warp owns BLOCK_M / WARPS rows, and
// for each tile its lanes compute the scores of keys lane, lane + warp size, ... (K rows
// read as float4 from shared memory padded by 4 floats, conflict-free), then
// update the online softmax of each row (running max by warp shuffles, running
// sum kept per lane and reduced once at the end), rescale the row's output, write
// the probabilities to a per-warp shared strip and accumulate P V with each lane
// owning D / (warp size) consecutive output columns. Scores use exp2 with the 1/sqrt(D)
// scale folded into log2(e). PIPE_double double-buffers the K/V tiles: tile t+1
// is copied with asynchronous copies (cp.async where the device has them) while
// tile t is computed. HEAD_DIM is the compile-time head size and must equal D.
// Everything is in dynamic shared memory (launch.shared in kernel.yaml).
#include "tunefarm.h"

#define WS TF_WARP_SIZE
#define NTHREADS (WARPS * WS)
#define ROWS_PER_WARP (BLOCK_M / WARPS)
#define KEYS_PER_LANE (BLOCK_N / WS)
#define COLS_PER_LANE (HEAD_DIM / WS)
#define LDS (HEAD_DIM + 4)   // shared row stride of Q/K/V, floats
#ifdef PIPE_double
#define STAGES 2
#else
#define STAGES 1
#endif

#if COLS_PER_LANE == 1
typedef float ovec_t;
TF_DEVICE void tf_unpack(float *d, float v) { d[0] = v; }
TF_DEVICE float tf_pack(const float *s) { return s[0]; }
#elif COLS_PER_LANE == 2
typedef float2 ovec_t;
TF_DEVICE void tf_unpack(float *d, float2 v) { d[0] = v.x; d[1] = v.y; }
TF_DEVICE float2 tf_pack(const float *s) { return make_float2(s[0], s[1]); }
#else
typedef float4 ovec_t;
TF_DEVICE void tf_unpack(float *d, float4 v) { d[0] = v.x; d[1] = v.y; d[2] = v.z; d[3] = v.w; }
TF_DEVICE float4 tf_pack(const float *s) { return make_float4(s[0], s[1], s[2], s[3]); }
#endif

// Copy `rows` rows of HEAD_DIM floats from global (stride HEAD_DIM) to shared (stride LDS).
TF_DEVICE void load_tile(float *dst, const float *src, int rows)
{
    const int chunks = rows * (HEAD_DIM / 4);
    for (int c = threadIdx.x; c < chunks; c += NTHREADS) {
        const int r = c / (HEAD_DIM / 4), q = c % (HEAD_DIM / 4);
        tf_cp_async16(dst + r * LDS + q * 4, src + (long long)r * HEAD_DIM + q * 4);
    }
}

TF_GLOBAL void TF_LAUNCH_BOUNDS(NTHREADS)
attention(int B, int H, int S, int D, const float *TF_RESTRICT Q, const float *TF_RESTRICT K,
          const float *TF_RESTRICT V, float *TF_RESTRICT O)
{
    extern __shared__ float4 smem4[];
    float *smem = (float *)smem4;
    float *qs = smem;                                  // BLOCK_M x LDS
    float *ks = qs + BLOCK_M * LDS;                    // STAGES x BLOCK_N x LDS
    float *vs = ks + STAGES * BLOCK_N * LDS;           // STAGES x BLOCK_N x LDS
    float *ps = vs + STAGES * BLOCK_N * LDS;           // BLOCK_M x BLOCK_N
    (void)B;
    (void)D;

    const int lane = threadIdx.x % WS, warp = threadIdx.x / WS;
    const long long head = (long long)blockIdx.z * H + blockIdx.y;
    const float *qg = Q + (head * S + (long long)blockIdx.x * BLOCK_M) * HEAD_DIM;
    const float *kg = K + head * S * HEAD_DIM;
    const float *vg = V + head * S * HEAD_DIM;
    const float scale = TF_LOG2E * tf_rsqrtf((float)HEAD_DIM);
    const int ntiles = S / BLOCK_N;

    load_tile(qs, qg, BLOCK_M);
    load_tile(ks, kg, BLOCK_N);
    load_tile(vs, vg, BLOCK_N);
    TF_CP_ASYNC_COMMIT();

    float o[ROWS_PER_WARP][COLS_PER_LANE];
    float m[ROWS_PER_WARP], l[ROWS_PER_WARP];
    TF_UNROLL
    for (int r = 0; r < ROWS_PER_WARP; r++) {
        m[r] = -1e30f;
        l[r] = 0.0f;
        TF_UNROLL
        for (int c = 0; c < COLS_PER_LANE; c++) o[r][c] = 0.0f;
    }
    const float *qw = qs + warp * ROWS_PER_WARP * LDS;
    float *pw = ps + warp * ROWS_PER_WARP * BLOCK_N;

    for (int t = 0; t < ntiles; t++) {
#ifdef PIPE_double
        if (t + 1 < ntiles) {
            const int nb = (t + 1) % 2;
            load_tile(ks + nb * BLOCK_N * LDS, kg + (long long)(t + 1) * BLOCK_N * HEAD_DIM, BLOCK_N);
            load_tile(vs + nb * BLOCK_N * LDS, vg + (long long)(t + 1) * BLOCK_N * HEAD_DIM, BLOCK_N);
        }
        TF_CP_ASYNC_COMMIT();
        TF_CP_ASYNC_WAIT(1);  // all but the newest group: tile t has landed
        const float *kt = ks + (t % 2) * BLOCK_N * LDS, *vt = vs + (t % 2) * BLOCK_N * LDS;
#else
        if (t > 0) {
            load_tile(ks, kg + (long long)t * BLOCK_N * HEAD_DIM, BLOCK_N);
            load_tile(vs, vg + (long long)t * BLOCK_N * HEAD_DIM, BLOCK_N);
            TF_CP_ASYNC_COMMIT();
        }
        TF_CP_ASYNC_WAIT(0);
        const float *kt = ks, *vt = vs;
#endif
        TF_SYNC();

        // scores of this warp's rows against keys lane + WS * j
        float s[ROWS_PER_WARP][KEYS_PER_LANE];
        TF_UNROLL
        for (int r = 0; r < ROWS_PER_WARP; r++) {
            TF_UNROLL
            for (int j = 0; j < KEYS_PER_LANE; j++) s[r][j] = 0.0f;
        }
        TF_UNROLL_N(4)
        for (int d = 0; d < HEAD_DIM; d += 4) {
            float4 kv[KEYS_PER_LANE];
            TF_UNROLL
            for (int j = 0; j < KEYS_PER_LANE; j++)
                kv[j] = *(const float4 *)(kt + (lane + WS * j) * LDS + d);
            TF_UNROLL
            for (int r = 0; r < ROWS_PER_WARP; r++) {
                const float4 q = *(const float4 *)(qw + r * LDS + d);
                TF_UNROLL
                for (int j = 0; j < KEYS_PER_LANE; j++) {
                    s[r][j] = tf_fmaf(q.x, kv[j].x, s[r][j]);
                    s[r][j] = tf_fmaf(q.y, kv[j].y, s[r][j]);
                    s[r][j] = tf_fmaf(q.z, kv[j].z, s[r][j]);
                    s[r][j] = tf_fmaf(q.w, kv[j].w, s[r][j]);
                }
            }
        }

        // online softmax, one row at a time
        TF_UNROLL
        for (int r = 0; r < ROWS_PER_WARP; r++) {
            float mx = s[r][0] * scale;
            TF_UNROLL
            for (int j = 1; j < KEYS_PER_LANE; j++) mx = tf_maxf(mx, s[r][j] * scale);
            const float mnew = tf_maxf(m[r], tf_warp_max(mx));
            const float corr = tf_exp2f(m[r] - mnew);
            m[r] = mnew;
            float sum = 0.0f;
            TF_UNROLL
            for (int j = 0; j < KEYS_PER_LANE; j++) {
                const float p = tf_exp2f(s[r][j] * scale - mnew);
                sum += p;
                pw[r * BLOCK_N + lane + WS * j] = p;
            }
            l[r] = l[r] * corr + sum;
            TF_UNROLL
            for (int c = 0; c < COLS_PER_LANE; c++) o[r][c] *= corr;
        }
        TF_SYNC_WARP();

        // O += P V over this tile
        TF_UNROLL_N(2)
        for (int k = 0; k < BLOCK_N; k += 4) {
            float v[4][COLS_PER_LANE];
            TF_UNROLL
            for (int kk = 0; kk < 4; kk++)
                tf_unpack(v[kk], *(const ovec_t *)(vt + (k + kk) * LDS + lane * COLS_PER_LANE));
            TF_UNROLL
            for (int r = 0; r < ROWS_PER_WARP; r++) {
                const float4 p = *(const float4 *)(pw + r * BLOCK_N + k);
                TF_UNROLL
                for (int c = 0; c < COLS_PER_LANE; c++) {
                    o[r][c] = tf_fmaf(p.x, v[0][c], o[r][c]);
                    o[r][c] = tf_fmaf(p.y, v[1][c], o[r][c]);
                    o[r][c] = tf_fmaf(p.z, v[2][c], o[r][c]);
                    o[r][c] = tf_fmaf(p.w, v[3][c], o[r][c]);
                }
            }
        }
        // every warp is done with this K/V buffer (and this warp with its P strip)
        TF_SYNC();
    }

    float *og = O + (head * S + (long long)blockIdx.x * BLOCK_M + warp * ROWS_PER_WARP) * HEAD_DIM;
    TF_UNROLL
    for (int r = 0; r < ROWS_PER_WARP; r++) {
        const float inv = 1.0f / tf_warp_sum(l[r]);
        float res[COLS_PER_LANE];
        TF_UNROLL
        for (int c = 0; c < COLS_PER_LANE; c++) res[c] = o[r][c] * inv;
        *(ovec_t *)(og + r * HEAD_DIM + lane * COLS_PER_LANE) = tf_pack(res);
    }
}
