/* fdm_cuda.cu — the CUDA back end of FDM, the same algorithm as fdm_cpu.c in float: pairs drawn
 * on the device with cuRAND Philox, from the documents (fdm_docdraw.h, as the host draws) or
 * from the rows' alias tables, column softmax kernels, one cuBLAS GEMM
 * for [X; Y] alpha and one for X^T diag(w) Y, an atomic scatter of dL/dmu, and fused Adam.
 * Built as the plugin libjsmf_cuda.so; it reaches the library only through fdm_host_api. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand_kernel.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdm_internal.h"

/* Calls into the library that loaded us (set by the plugin entry point at the end). */
static fdm_host_api H;
#define jsmf_error H.error
#define fdm_sampler_info_get H.sampler_info_get
#define fdm_sampler_tables_get H.sampler_tables_get
#define fdm_sampler_draw_default H.sampler_draw

#define CU(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess)                                                                 \
            return jsmf_error(e_ == cudaErrorMemoryAllocation ? JSMF_ENOMEM : JSMF_EIO,        \
                              "CUDA: %s (%s:%d)", cudaGetErrorString(e_), __FILE__, __LINE__); \
    } while (0)

#define CUBLAS(call)                                                                           \
    do {                                                                                       \
        cublasStatus_t s_ = (call);                                                            \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                       \
            return jsmf_error(JSMF_EIO, "cuBLAS: status %d (%s:%d)", (int)s_, __FILE__,        \
                              __LINE__);                                                       \
    } while (0)

/* ------------------------------------------------------------------------------------------ */
/* kernels                                                                                     */
/* ------------------------------------------------------------------------------------------ */

#define TILE 32 /* columns (topics) per block in column reductions; blockDim = (32, 32) */

/* Column reductions over the N x K row-major arrays run on a grid of (K/32) x ROW_PARTS blocks
 * of 32 x 32 threads: block (x, y) covers columns 32x.. and the rows y*32+ty, stepping
 * 32*ROW_PARTS, writes one partial per column to part[y][t]; a second kernel combines the
 * ROW_PARTS partials. (One block per 32 columns alone would leave most of the GPU idle.) */
#define ROW_PARTS 64

/* Partial (max, sum of exp(w - max)) per column: an online softmax. */
__global__ void col_softmax_partial(const float *w, uint32_t n, uint32_t k, float *pmax,
                                    float *psum)
{
    __shared__ float sm[TILE][TILE + 1], ss[TILE][TILE + 1];
    uint32_t t = blockIdx.x * TILE + threadIdx.x;
    float m = -FLT_MAX, s = 0.f;
    if (t < k)
        for (uint32_t l = blockIdx.y * TILE + threadIdx.y; l < n; l += TILE * gridDim.y) {
            float x = w[(size_t)l * k + t];
            if (x > m) {
                s = s * expf(m - x) + 1.f;
                m = x;
            } else {
                s += expf(x - m);
            }
        }
    sm[threadIdx.y][threadIdx.x] = m;
    ss[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && t < k) {
        float M = -FLT_MAX, S = 0.f;
        for (uint32_t r = 0; r < TILE; r++)
            if (sm[r][threadIdx.x] > M)
                M = sm[r][threadIdx.x];
        for (uint32_t r = 0; r < TILE; r++)
            S += ss[r][threadIdx.x] * expf(sm[r][threadIdx.x] - M);
        pmax[(size_t)blockIdx.y * k + t] = M;
        psum[(size_t)blockIdx.y * k + t] = S;
    }
}

__global__ void col_softmax_combine(const float *pmax, const float *psum, uint32_t parts,
                                    uint32_t k, float *colmax, float *colsum)
{
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= k)
        return;
    float M = -FLT_MAX, S = 0.f;
    for (uint32_t r = 0; r < parts; r++)
        if (pmax[(size_t)r * k + t] > M)
            M = pmax[(size_t)r * k + t];
    for (uint32_t r = 0; r < parts; r++)
        S += psum[(size_t)r * k + t] * expf(pmax[(size_t)r * k + t] - M);
    colmax[t] = M;
    colsum[t] = S;
}

/* Partial sums over rows of a(l,t) * b(l,t) per column. */
__global__ void col_dot_partial(const float *a, const float *b, uint32_t n, uint32_t k,
                                float *psum)
{
    __shared__ float ss[TILE][TILE + 1];
    uint32_t t = blockIdx.x * TILE + threadIdx.x;
    float s = 0.f;
    if (t < k)
        for (uint32_t l = blockIdx.y * TILE + threadIdx.y; l < n; l += TILE * gridDim.y)
            s += a[(size_t)l * k + t] * b[(size_t)l * k + t];
    ss[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && t < k) {
        float S = 0.f;
        for (uint32_t r = 0; r < TILE; r++)
            S += ss[r][threadIdx.x];
        psum[(size_t)blockIdx.y * k + t] = S;
    }
}

__global__ void col_sum_combine(const float *psum, uint32_t parts, uint32_t k, float *out)
{
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= k)
        return;
    float S = 0.f;
    for (uint32_t r = 0; r < parts; r++)
        S += psum[(size_t)r * k + t];
    out[t] = S;
}

__global__ void mu_from_logits(const float *w, const float *colmax, const float *colsum,
                               size_t nk, uint32_t k, float *mu)
{
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < nk;
         e += (size_t)gridDim.x * blockDim.x) {
        uint32_t t = (uint32_t)(e % k);
        mu[e] = expf(w[e] - colmax[t]) / colsum[t];
    }
}

/* Sum (or max) of one value per thread over a block (power-of-two size); result in every thread. */
__device__ double block_sum(double x, double *sh)
{
    sh[threadIdx.x] = x;
    __syncthreads();
    for (uint32_t s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    double r = sh[0];
    __syncthreads();
    return r;
}

__device__ double block_max(double x, double *sh)
{
    sh[threadIdx.x] = x;
    __syncthreads();
    for (uint32_t s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s && sh[threadIdx.x + s] > sh[threadIdx.x])
            sh[threadIdx.x] = sh[threadIdx.x + s];
        __syncthreads();
    }
    double r = sh[0];
    __syncthreads();
    return r;
}

/* The K x K alpha (250k entries at K = 500) is spread over A_PARTS blocks of ABLOCK threads;
 * its reductions (max, sum, dot) go through A_PARTS partials in double, which each block of the
 * next kernel combines itself. On one block these kernels took 60% of a step at K = 500. */
#define ABLOCK 256
#define A_PARTS 128

__device__ double sym_logit(const float *a, size_t e, uint32_t k)
{
    size_t i = e / k, j = e % k;
    return 0.5 * ((double)a[e] + (double)a[j * k + i]);
}

/* Combine the A_PARTS partials (sum, or max with want_max). */
__device__ double combine_parts(const double *part, double *sh, int want_max)
{
    double x = want_max ? -DBL_MAX : 0;
    for (uint32_t p = threadIdx.x; p < A_PARTS; p += blockDim.x)
        x = want_max ? fmax(x, part[p]) : x + part[p];
    return want_max ? block_max(x, sh) : block_sum(x, sh);
}

/* alpha = softmax over all entries of (a + a^T)/2, in three kernels: partial maxima, partial
 * sums of exp(x - max), the entries. */
__global__ void alpha_max_part(const float *a, uint32_t k, double *pmax)
{
    __shared__ double sh[ABLOCK];
    size_t kk = (size_t)k * k;
    double m = -DBL_MAX;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < kk;
         e += (size_t)gridDim.x * blockDim.x)
        m = fmax(m, sym_logit(a, e, k));
    m = block_max(m, sh);
    if (threadIdx.x == 0)
        pmax[blockIdx.x] = m;
}

__global__ void alpha_sum_part(const float *a, uint32_t k, const double *pmax, double *psum)
{
    __shared__ double sh[ABLOCK];
    double m = combine_parts(pmax, sh, 1), sum = 0;
    size_t kk = (size_t)k * k;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < kk;
         e += (size_t)gridDim.x * blockDim.x)
        sum += exp(sym_logit(a, e, k) - m);
    sum = block_sum(sum, sh);
    if (threadIdx.x == 0)
        psum[blockIdx.x] = sum;
}

__global__ void alpha_entries(const float *a, uint32_t k, const double *pmax, const double *psum,
                              float *alpha)
{
    __shared__ double sh[ABLOCK];
    double m = combine_parts(pmax, sh, 1), sum = combine_parts(psum, sh, 0);
    size_t kk = (size_t)k * k;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < kk;
         e += (size_t)gridDim.x * blockDim.x)
        alpha[e] = (float)(exp(sym_logit(a, e, k) - m) / sum);
}

/* Pair i of training step `step`: row by the row alias table, column by that row's table. */
__global__ void sample_pairs(const float *row_prob, const uint32_t *row_alias,
                             const uint64_t *rowptr, const float *prob, const uint32_t *alias,
                             const uint32_t *col, uint32_t n, unsigned long long seed,
                             unsigned long long step, uint32_t cnt, uint32_t *u, uint32_t *v)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= cnt)
        return;
    curandStatePhilox4_32_10_t st;
    curand_init(seed, step * cnt + i, 0, &st);
    uint4 r = curand4(&st);
    uint32_t row = (uint32_t)(((unsigned long long)r.x * n) >> 32);
    if (r.y * (1.0 / 4294967296.0) >= row_prob[row])
        row = row_alias[row];
    uint64_t a = rowptr[row], len = rowptr[row + 1] - a;
    uint32_t j = (uint32_t)(((unsigned long long)r.z * len) >> 32);
    if (r.w * (1.0 / 4294967296.0) >= prob[a + j])
        j = alias[a + j];
    u[i] = row;
    v[i] = col[a + j];
}

/* Pair i of training step `step` through the documents: the host's steps (fdm_doc_draw) on
 * eight words of cuRAND's Philox. */
__global__ void sample_doc_pairs(fdm_doc_tables t, unsigned long long seed,
                                 unsigned long long step, uint32_t cnt, uint32_t *u, uint32_t *v)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= cnt)
        return;
    curandStatePhilox4_32_10_t st;
    curand_init(seed, step * cnt + i, 0, &st);
    uint4 a = curand4(&st), b = curand4(&st);
    uint32_t r[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    fdm_doc_draw(&t, r, u + i, v + i);
}

/* XY rows 0..cnt-1 = mu[u_i], rows cnt..2cnt-1 = mu[v_i]. One block per pair. */
__global__ void gather_rows(const float *mu, const uint32_t *u, const uint32_t *v, uint32_t cnt,
                            uint32_t k, float *XY)
{
    uint32_t i = blockIdx.x;
    const float *mu_u = mu + (size_t)u[i] * k, *mu_v = mu + (size_t)v[i] * k;
    float *x = XY + (size_t)i * k, *y = XY + ((size_t)cnt + i) * k;
    for (uint32_t t = threadIdx.x; t < k; t += blockDim.x) {
        x[t] = mu_u[t];
        y[t] = mu_v[t];
    }
}

/* M_i = P_i . Y_i, one warp per pair; w_i = -1/(cnt M_i); loss += -log M_i (a bad M adds NaN). */
__global__ void pair_probs(const float *XY, const float *PQ, uint32_t cnt, uint32_t k, float *wgt,
                           double *loss)
{
    uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (warp >= cnt)
        return;
    const float *p = PQ + (size_t)warp * k, *y = XY + ((size_t)cnt + warp) * k;
    float s = 0.f;
    for (uint32_t t = lane; t < k; t += 32)
        s += p[t] * y[t];
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) {
        wgt[warp] = -1.f / ((float)cnt * s);
        atomicAdd(loss, s > 0.f ? -log((double)s) : (double)NAN);
    }
}

/* G[u_i] += w_i Q_i, G[v_i] += w_i P_i; then X_i *= w_i for the alpha gradient. */
__global__ void scatter_grad(float *XY, const float *PQ, const float *wgt, const uint32_t *u,
                             const uint32_t *v, uint32_t cnt, uint32_t k, float *G)
{
    uint32_t i = blockIdx.x;
    float w = wgt[i];
    const float *p = PQ + (size_t)i * k, *q = PQ + ((size_t)cnt + i) * k;
    float *gu = G + (size_t)u[i] * k, *gv = G + (size_t)v[i] * k, *x = XY + (size_t)i * k;
    for (uint32_t t = threadIdx.x; t < k; t += blockDim.x) {
        atomicAdd(gu + t, w * q[t]);
        atomicAdd(gv + t, w * p[t]);
        x[t] *= w;
    }
}

/* dL/dw = mu (G - s_t); Adam step on w (or, with out != NULL, only write the gradient). G is
 * reset to zero for the next step. */
__global__ void mu_grad_adam(float *w, float *m, float *vv, float *G, const float *mu,
                             const float *sdot, size_t nk, uint32_t k, float b1, float b2,
                             float lr, float c1, float c2, float eps, double *out)
{
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < nk;
         e += (size_t)gridDim.x * blockDim.x) {
        float g = mu[e] * (G[e] - sdot[e % k]);
        G[e] = 0.f;
        if (out) {
            out[e] = g;
            continue;
        }
        float mm = b1 * m[e] + (1.f - b1) * g, v2 = b2 * vv[e] + (1.f - b2) * g * g;
        m[e] = mm, vv[e] = v2;
        w[e] -= lr * (mm * c1) / (sqrtf(v2 * c2) + eps);
    }
}

/* Partials of <Ga, alpha>, the dot that dL/d(alpha logits) subtracts. */
__global__ void alpha_dot_part(const float *Ga, const float *alpha, uint32_t k, double *pdot)
{
    __shared__ double sh[ABLOCK];
    size_t kk = (size_t)k * k;
    double dot = 0;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < kk;
         e += (size_t)gridDim.x * blockDim.x)
        dot += (double)Ga[e] * alpha[e];
    dot = block_sum(dot, sh);
    if (threadIdx.x == 0)
        pdot[blockIdx.x] = dot;
}

/* dL/d(alpha logits) = sym(alpha (Ga - <Ga, alpha>)); Adam step (or write to out). */
__global__ void alpha_grad_adam(float *a, float *m, float *vv, const float *Ga,
                                const float *alpha, uint32_t k, const double *pdot, float b1,
                                float b2, float lr, float c1, float c2, float eps, double *out)
{
    __shared__ double sh[ABLOCK];
    double dot = combine_parts(pdot, sh, 0);
    size_t kk = (size_t)k * k;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < kk;
         e += (size_t)gridDim.x * blockDim.x) {
        size_t i = e / k, j = e % k, f = j * k + i;
        float g = (float)(0.5 * (alpha[e] * (Ga[e] - dot) + alpha[f] * (Ga[f] - dot)));
        if (out) {
            out[e] = g;
            continue;
        }
        float mm = b1 * m[e] + (1.f - b1) * g, v2 = b2 * vv[e] + (1.f - b2) * g * g;
        m[e] = mm, vv[e] = v2;
        a[e] -= lr * (mm * c1) / (sqrtf(v2 * c2) + eps);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* host side                                                                                   */
/* ------------------------------------------------------------------------------------------ */

typedef struct fdm_gpu {
    const fdm_setup *setup;
    fdm_state *st;
    uint32_t n, k, bmax;
    cublasHandle_t blas;
    int have_blas;
    float *w, *mw, *vw, *mu, *G;        /* N x K */
    float *a, *ma, *va, *alpha, *Ga;    /* K x K */
    float *colmax, *colsum, *sdot;      /* K */
    float *pmax, *psum;                 /* ROW_PARTS x K partial column reductions */
    float *XY, *PQ, *wgt;               /* 2B x K, 2B x K, B */
    double *loss;                       /* 1 */
    double *apart;                      /* 2 x A_PARTS partial reductions over alpha */
    uint32_t *u, *v;                    /* B */
    uint32_t *hu, *hv;                  /* held-out pairs on the device */
    float *row_prob, *prob;             /* sampler tables, unless host sampling */
    uint32_t *row_alias, *alias, *col;
    uint64_t *rowptr;
    int documents;                      /* the sampler draws through the documents: */
    fdm_doc_tables dt;                  /* their copies on the device */
    int host_sampling;
    uint32_t *host_u, *host_v;
    int fresh;
} fdm_gpu;

static void gpu_free(fdm_gpu *g)
{
    if (!g)
        return;
    void *ptrs[] = {g->w, g->mw, g->vw, g->mu, g->G, g->a, g->ma, g->va, g->alpha, g->Ga,
                    g->colmax, g->colsum, g->sdot, g->pmax, g->psum, g->XY, g->PQ, g->wgt,
                    g->loss, g->apart, g->u, g->v, g->hu, g->hv, g->row_prob, g->prob, g->row_alias, g->alias, g->col,
                    g->rowptr};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        if (ptrs[i])
            cudaFree(ptrs[i]);
    const void *dptrs[] = {g->dt.offs, g->dt.ids, g->dt.cum, g->dt.admit, g->dt.doc_prob,
                           g->dt.doc_alias};
    for (size_t i = 0; i < sizeof dptrs / sizeof dptrs[0]; i++)
        if (dptrs[i])
            cudaFree((void *)dptrs[i]);
    if (g->have_blas)
        cublasDestroy(g->blas);
    free(g->host_u), free(g->host_v);
    free(g);
}

static int dalloc(void **p, size_t bytes)
{
    CU(cudaMalloc(p, bytes ? bytes : 4));
    return 0;
}

static int upload_f32(float *dst, const double *src, size_t count)
{
    float *tmp = (float *)malloc((count ? count : 1) * sizeof(float));
    if (!tmp)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    for (size_t i = 0; i < count; i++)
        tmp[i] = (float)src[i];
    cudaError_t e = cudaMemcpy(dst, tmp, count * sizeof(float), cudaMemcpyHostToDevice);
    free(tmp);
    CU(e);
    return 0;
}

static int download_f64(double *dst, const float *src, size_t count)
{
    float *tmp = (float *)malloc((count ? count : 1) * sizeof(float));
    if (!tmp)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    cudaError_t e = cudaMemcpy(tmp, src, count * sizeof(float), cudaMemcpyDeviceToHost);
    for (size_t i = 0; e == cudaSuccess && i < count; i++)
        dst[i] = tmp[i];
    free(tmp);
    CU(e);
    return 0;
}

static unsigned grid_for(size_t count, unsigned block)
{
    size_t g = (count + block - 1) / block;
    return (unsigned)(g > 65535 ? 65535 : g ? g : 1);
}

/* Row parts for the column reductions: enough blocks to fill the GPU, none without rows. */
static uint32_t row_parts(uint32_t n)
{
    uint32_t parts = (n + TILE - 1) / TILE;
    return parts < ROW_PARTS ? parts : ROW_PARTS;
}

static int gpu_params(fdm_gpu *g)
{
    uint32_t parts = row_parts(g->n);
    dim3 block(TILE, TILE), grid((g->k + TILE - 1) / TILE, parts);
    col_softmax_partial<<<grid, block>>>(g->w, g->n, g->k, g->pmax, g->psum);
    col_softmax_combine<<<(g->k + 255) / 256, 256>>>(g->pmax, g->psum, parts, g->k, g->colmax,
                                                     g->colsum);
    size_t nk = (size_t)g->n * g->k;
    mu_from_logits<<<grid_for(nk, 256), 256>>>(g->w, g->colmax, g->colsum, nk, g->k, g->mu);
    alpha_max_part<<<A_PARTS, ABLOCK>>>(g->a, g->k, g->apart);
    alpha_sum_part<<<A_PARTS, ABLOCK>>>(g->a, g->k, g->apart, g->apart + A_PARTS);
    alpha_entries<<<A_PARTS, ABLOCK>>>(g->a, g->k, g->apart, g->apart + A_PARTS, g->alpha);
    CU(cudaGetLastError());
    g->fresh = 1;
    return 0;
}

/* Forward pass for cnt pairs already in u/v (device): loss added to *g->loss; with grad, G and
 * Ga receive dL/dmu and dL/dalpha. */
static int gpu_batch(fdm_gpu *g, const uint32_t *u, const uint32_t *v, uint32_t cnt, int grad)
{
    uint32_t k = g->k;
    unsigned tpb = k >= 128 ? 128 : 32;
    gather_rows<<<cnt, tpb>>>(g->mu, u, v, cnt, k, g->XY);
    const float one = 1.f, zero = 0.f;
    /* row-major [P; Q] (2cnt x k) = [X; Y] alpha; in cuBLAS's column-major view that is
     * alpha^T [X; Y]^T, and alpha is symmetric. */
    CUBLAS(cublasSgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)k, (int)(2 * cnt), (int)k, &one,
                       g->alpha, (int)k, g->XY, (int)k, &zero, g->PQ, (int)k));
    pair_probs<<<(cnt * 32 + 255) / 256, 256>>>(g->XY, g->PQ, cnt, k, g->wgt, g->loss);
    if (grad) {
        scatter_grad<<<cnt, tpb>>>(g->XY, g->PQ, g->wgt, u, v, cnt, k, g->G);
        /* Ga = (diag(w) X)^T Y; column-major: Ga^T = Y^T (wX), Y^T is k x cnt with ld k. The
         * transpose does not matter: the logit gradient symmetrises. */
        CUBLAS(cublasSgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)k, (int)k, (int)cnt, &one,
                           g->XY + (size_t)cnt * k, (int)k, g->XY, (int)k, &zero, g->Ga, (int)k));
    }
    CU(cudaGetLastError());
    return 0;
}

static int read_loss(fdm_gpu *g, double *out)
{
    CU(cudaMemcpy(out, g->loss, sizeof(double), cudaMemcpyDeviceToHost));
    if (!isfinite(*out))
        return jsmf_error(JSMF_ENUMERIC, "FDM (CUDA): a pair got probability 0 or NaN "
                          "(diverged; try a smaller --lr)");
    return 0;
}

/* Pairs of step `step` (cnt of them) into u, v on the device, from the tables there. */
static int device_draw(fdm_gpu *g, uint64_t seed, uint64_t step, uint32_t cnt, uint32_t *u,
                       uint32_t *v)
{
    if (g->documents)
        sample_doc_pairs<<<(cnt + 255) / 256, 256>>>(g->dt, seed, step, cnt, u, v);
    else
        sample_pairs<<<(cnt + 255) / 256, 256>>>(g->row_prob, g->row_alias, g->rowptr, g->prob,
                                                 g->alias, g->col, g->n, seed, step, cnt, u, v);
    CU(cudaGetLastError());
    return 0;
}

/* Pairs of step `step` into g->u, g->v: on the device, or drawn on the host and copied. */
static int gpu_draw(fdm_gpu *g, uint64_t step)
{
    const fdm_setup *s = g->setup;
    if (g->host_sampling) {
        fdm_sampler_draw_default(s->sampler, s->seed, step, 0, s->batch, g->host_u, g->host_v);
        CU(cudaMemcpy(g->u, g->host_u, s->batch * sizeof(uint32_t), cudaMemcpyHostToDevice));
        CU(cudaMemcpy(g->v, g->host_v, s->batch * sizeof(uint32_t), cudaMemcpyHostToDevice));
        return 0;
    }
    return device_draw(g, s->seed, step, s->batch, g->u, g->v);
}

static int gpu_grad_and_update(fdm_gpu *g, uint64_t step, double *out_mu, double *out_alpha)
{
    const fdm_setup *s = g->setup;
    uint32_t k = g->k;
    size_t nk = (size_t)g->n * k;
    uint32_t parts = row_parts(g->n);
    dim3 block(TILE, TILE), grid((k + TILE - 1) / TILE, parts);
    col_dot_partial<<<grid, block>>>(g->G, g->mu, g->n, k, g->psum);
    col_sum_combine<<<(k + 255) / 256, 256>>>(g->psum, parts, k, g->sdot);
    float b1 = 0, b2 = 0, lr = 0, c1 = 0, c2 = 0, eps = 0;
    if (s) {
        b1 = (float)s->beta1, b2 = (float)s->beta2, lr = (float)s->lr, eps = (float)s->eps;
        c1 = (float)(1.0 / (1.0 - pow(s->beta1, (double)step)));
        c2 = (float)(1.0 / (1.0 - pow(s->beta2, (double)step)));
    }
    mu_grad_adam<<<grid_for(nk, 256), 256>>>(g->w, g->mw, g->vw, g->G, g->mu, g->sdot, nk, k, b1,
                                            b2, lr, c1, c2, eps, out_mu);
    alpha_dot_part<<<A_PARTS, ABLOCK>>>(g->Ga, g->alpha, k, g->apart);
    alpha_grad_adam<<<A_PARTS, ABLOCK>>>(g->a, g->ma, g->va, g->Ga, g->alpha, k, g->apart, b1, b2,
                                         lr, c1, c2, eps, out_alpha);
    CU(cudaGetLastError());
    return 0;
}

static int gpu_train_step(void *ctx, uint64_t step, double *loss)
{
    fdm_gpu *g = (fdm_gpu *)ctx;
    int rc;
    if ((rc = gpu_draw(g, step)))
        return rc;
    if (!g->fresh && (rc = gpu_params(g)))
        return rc;
    CU(cudaMemset(g->loss, 0, sizeof(double)));
    if ((rc = gpu_batch(g, g->u, g->v, g->setup->batch, 1)))
        return rc;
    if ((rc = gpu_grad_and_update(g, step, NULL, NULL)))
        return rc;
    g->fresh = 0;
    if ((rc = read_loss(g, loss)))
        return rc;
    *loss /= g->setup->batch;
    return 0;
}

static int gpu_heldout_loss(void *ctx, double *loss)
{
    fdm_gpu *g = (fdm_gpu *)ctx;
    const fdm_setup *s = g->setup;
    int rc;
    if (!g->fresh && (rc = gpu_params(g)))
        return rc;
    CU(cudaMemset(g->loss, 0, sizeof(double)));
    for (uint32_t off = 0; off < s->nheld; off += g->bmax) {
        uint32_t cnt = s->nheld - off < g->bmax ? s->nheld - off : g->bmax;
        if ((rc = gpu_batch(g, g->hu + off, g->hv + off, cnt, 0)))
            return rc;
    }
    if ((rc = read_loss(g, loss)))
        return rc;
    *loss = s->nheld ? *loss / s->nheld : NAN;
    return 0;
}

static int gpu_sync(void *ctx)
{
    fdm_gpu *g = (fdm_gpu *)ctx;
    fdm_state *st = g->st;
    size_t nk = (size_t)g->n * g->k, kk = (size_t)g->k * g->k;
    int rc;
    if ((rc = download_f64(st->w, g->w, nk)) || (rc = download_f64(st->mw, g->mw, nk)) ||
        (rc = download_f64(st->vw, g->vw, nk)) || (rc = download_f64(st->a, g->a, kk)) ||
        (rc = download_f64(st->ma, g->ma, kk)) || (rc = download_f64(st->va, g->va, kk)))
        return rc;
    return 0;
}

static void gpu_destroy(void *ctx)
{
    gpu_free((fdm_gpu *)ctx);
}

/* Device buffers for the model and a batch of bmax pairs. */
static int gpu_alloc_model(fdm_gpu *g)
{
    size_t nk = (size_t)g->n * g->k, kk = (size_t)g->k * g->k, bk = 2 * (size_t)g->bmax * g->k;
    int rc;
    if ((rc = dalloc((void **)&g->w, nk * 4)) || (rc = dalloc((void **)&g->mw, nk * 4)) ||
        (rc = dalloc((void **)&g->vw, nk * 4)) || (rc = dalloc((void **)&g->mu, nk * 4)) ||
        (rc = dalloc((void **)&g->G, nk * 4)) || (rc = dalloc((void **)&g->a, kk * 4)) ||
        (rc = dalloc((void **)&g->ma, kk * 4)) || (rc = dalloc((void **)&g->va, kk * 4)) ||
        (rc = dalloc((void **)&g->alpha, kk * 4)) || (rc = dalloc((void **)&g->Ga, kk * 4)) ||
        (rc = dalloc((void **)&g->colmax, g->k * 4)) ||
        (rc = dalloc((void **)&g->colsum, g->k * 4)) ||
        (rc = dalloc((void **)&g->sdot, g->k * 4)) ||
        (rc = dalloc((void **)&g->pmax, (size_t)ROW_PARTS * g->k * 4)) ||
        (rc = dalloc((void **)&g->psum, (size_t)ROW_PARTS * g->k * 4)) ||
        (rc = dalloc((void **)&g->XY, bk * 4)) ||
        (rc = dalloc((void **)&g->PQ, bk * 4)) || (rc = dalloc((void **)&g->wgt, g->bmax * 4)) ||
        (rc = dalloc((void **)&g->loss, sizeof(double))) ||
        (rc = dalloc((void **)&g->apart, 2 * A_PARTS * sizeof(double))) ||
        (rc = dalloc((void **)&g->u, g->bmax * 4)) || (rc = dalloc((void **)&g->v, g->bmax * 4)))
        return rc;
    CU(cudaMemset(g->G, 0, nk * 4));
    if (cublasCreate(&g->blas) != CUBLAS_STATUS_SUCCESS)
        return jsmf_error(JSMF_EIO, "cuBLAS: cannot create a handle");
    g->have_blas = 1;
    /* TF32 tensor cores for the pair products: inputs rounded to a 10-bit mantissa, sums in
     * FP32 (jsmf_fdm_opts.precision) */
    if (g->setup && g->setup->precision == JSMF_FDM_TF32)
        CUBLAS(cublasSetMathMode(g->blas, CUBLAS_TF32_TENSOR_OP_MATH));
    return 0;
}

static size_t model_bytes(uint32_t n, uint32_t k, uint32_t bmax)
{
    return 4 * (5 * (size_t)n * k + 5 * (size_t)k * k + (3 + 2 * ROW_PARTS) * (size_t)k +
                4 * (size_t)bmax * k +
                3 * (size_t)bmax) + 8 + 16 * A_PARTS + ((size_t)64 << 20) /* cuBLAS workspace and slack */;
}

/* A copy of `count` elements of `size` bytes on the device, in *dst (NULL for a NULL src). */
static int upload(const void **dst, const void *src, size_t count, size_t size)
{
    void *p = NULL;
    int rc;
    *dst = NULL;
    if (!src)
        return 0;
    if ((rc = dalloc(&p, count * size)))
        return rc;
    *dst = p;
    CU(cudaMemcpy(p, src, count * size, cudaMemcpyHostToDevice));
    return 0;
}

/* The documents sampler's tables on the device: the host's arrays copied, the sizes kept. */
static int gpu_upload_documents(fdm_gpu *g, const fdm_doc_tables *h)
{
    fdm_doc_tables *d = &g->dt;
    uint64_t nnz = h->offs[h->docs];
    int rc;
    g->documents = 1;
    *d = *h;
    d->offs = NULL, d->ids = NULL, d->cum = NULL, d->admit = NULL;
    d->doc_prob = NULL, d->doc_alias = NULL;
    if ((rc = upload((const void **)&d->offs, h->offs, (size_t)h->docs + 1, 8)) ||
        (rc = upload((const void **)&d->ids, h->ids, nnz, 4)) ||
        (rc = upload((const void **)&d->cum, h->cum, nnz, 4)) ||
        (rc = upload((const void **)&d->admit, h->admit, h->n, 8)) ||
        (rc = upload((const void **)&d->doc_prob, h->doc_prob, h->docs, 4)) ||
        (rc = upload((const void **)&d->doc_alias, h->doc_alias, h->docs, 4)))
        return rc;
    return 0;
}

static int gpu_upload_tables(fdm_gpu *g, const jsmf_fdm_sampler *smp)
{
    jsmf_fdm_sampler_tables t;
    fdm_sampler_tables_get(smp, &t);
    if (t.documents)
        return gpu_upload_documents(g, &t.doc);
    int rc;
    if ((rc = dalloc((void **)&g->row_prob, t.n * 4)) ||
        (rc = dalloc((void **)&g->row_alias, t.n * 4)) ||
        (rc = dalloc((void **)&g->rowptr, ((size_t)t.n + 1) * 8)) ||
        (rc = dalloc((void **)&g->prob, t.kept * 4)) ||
        (rc = dalloc((void **)&g->alias, t.kept * 4)) ||
        (rc = dalloc((void **)&g->col, t.kept * 4)))
        return rc;
    CU(cudaMemcpy(g->row_prob, t.row_prob, t.n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(g->row_alias, t.row_alias, t.n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(g->rowptr, t.rowptr, ((size_t)t.n + 1) * 8, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(g->prob, t.prob, t.kept * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(g->alias, t.alias, t.kept * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(g->col, t.col, t.kept * 4, cudaMemcpyHostToDevice));
    return 0;
}

static int gpu_setup(fdm_gpu *g, const fdm_setup *setup, fdm_state *st, fdm_backend *out)
{
    size_t free_b = 0, total_b = 0;
    CU(cudaSetDevice(0));
    CU(cudaMemGetInfo(&free_b, &total_b));
    size_t need = model_bytes(g->n, g->k, g->bmax) + 8 * (size_t)setup->nheld;
    if (need > free_b)
        return jsmf_error(JSMF_ENOMEM, "the model needs %zu MiB of GPU memory, %zu MiB free",
                          need >> 20, free_b >> 20);
    jsmf_fdm_sampler_info info;
    fdm_sampler_info_get(setup->sampler, &info);
    uint64_t tables = info.bytes;
    /* The tables go to the device when they fit beside the model (and within --mem); otherwise
     * the host draws each batch and copies 8 bytes per pair. */
    g->host_sampling = need + tables > free_b || (setup->mem_budget && tables > setup->mem_budget);
    int rc;
    if ((rc = gpu_alloc_model(g)))
        return rc;
    if ((rc = dalloc((void **)&g->hu, (size_t)setup->nheld * 4)) ||
        (rc = dalloc((void **)&g->hv, (size_t)setup->nheld * 4)))
        return rc;
    CU(cudaMemcpy(g->hu, setup->hu, (size_t)setup->nheld * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(g->hv, setup->hv, (size_t)setup->nheld * 4, cudaMemcpyHostToDevice));
    if (g->host_sampling) {
        g->host_u = (uint32_t *)malloc(g->bmax * sizeof(uint32_t));
        g->host_v = (uint32_t *)malloc(g->bmax * sizeof(uint32_t));
        if (!g->host_u || !g->host_v)
            return jsmf_error(JSMF_ENOMEM, "out of memory");
    } else if ((rc = gpu_upload_tables(g, setup->sampler))) {
        return rc;
    }
    size_t nk = (size_t)g->n * g->k, kk = (size_t)g->k * g->k;
    if ((rc = upload_f32(g->w, st->w, nk)) || (rc = upload_f32(g->mw, st->mw, nk)) ||
        (rc = upload_f32(g->vw, st->vw, nk)) || (rc = upload_f32(g->a, st->a, kk)) ||
        (rc = upload_f32(g->ma, st->ma, kk)) || (rc = upload_f32(g->va, st->va, kk)))
        return rc;
    cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, 0));
    snprintf(out->name, sizeof out->name, "cuda (%.80s)", prop.name);
    if (g->host_sampling)
        snprintf(out->note, sizeof out->note, "sampler tables (%llu MiB) do not fit the GPU or "
                 "--mem: pairs drawn on the host", (unsigned long long)(tables >> 20));
    out->host_sampling = g->host_sampling;
    return 0;
}

static int cuda_backend_create(const fdm_setup *setup, fdm_state *st, fdm_backend *out)
{
    memset(out, 0, sizeof *out);
    fdm_gpu *g = (fdm_gpu *)calloc(1, sizeof *g);
    if (!g)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    g->setup = setup, g->st = st, g->n = setup->n, g->k = setup->k;
    g->bmax = setup->batch;
    int rc = gpu_setup(g, setup, st, out);
    if (rc) {
        gpu_free(g);
        return rc;
    }
    out->ctx = g;
    out->train_step = gpu_train_step;
    out->heldout_loss = gpu_heldout_loss;
    out->sync = gpu_sync;
    out->destroy = gpu_destroy;
    return 0;
}

static int cuda_probe(char *name, size_t len)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (name && len)
        name[0] = 0;
    if (e != cudaSuccess || count < 1)
        return jsmf_error(JSMF_ENOTSUP, "no CUDA GPU available (%s)",
                          e != cudaSuccess ? cudaGetErrorString(e) : "no device");
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess && name && len)
        snprintf(name, len, "%s", prop.name);
    return 0;
}

static int cuda_loss_grad(uint32_t n, uint32_t k, const double *wmu, const double *walpha,
                          const uint32_t *u, const uint32_t *v, uint32_t count, double *loss,
                          double *gmu, double *galpha)
{
    int rc = cuda_probe(NULL, 0);
    if (rc)
        return rc;
    if (!n || !k || !count)
        return jsmf_error(JSMF_EINVAL, "empty batch or model");
    for (uint32_t i = 0; i < count; i++)
        if (u[i] >= n || v[i] >= n)
            return jsmf_error(JSMF_EINVAL, "pair %u: word out of range", i);
    fdm_gpu *g = (fdm_gpu *)calloc(1, sizeof *g);
    if (!g)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    g->n = n, g->k = k, g->bmax = count;
    size_t nk = (size_t)n * k, kk = (size_t)k * k;
    double *dgm = NULL, *dga = NULL;
    rc = gpu_alloc_model(g);
    if (!rc)
        rc = upload_f32(g->w, wmu, nk);
    if (!rc)
        rc = upload_f32(g->a, walpha, kk);
    if (!rc && cudaMemcpy(g->u, u, count * 4, cudaMemcpyHostToDevice) != cudaSuccess)
        rc = jsmf_error(JSMF_EIO, "CUDA: copy failed");
    if (!rc && cudaMemcpy(g->v, v, count * 4, cudaMemcpyHostToDevice) != cudaSuccess)
        rc = jsmf_error(JSMF_EIO, "CUDA: copy failed");
    if (!rc && (cudaMalloc((void **)&dgm, nk * 8) != cudaSuccess ||
                cudaMalloc((void **)&dga, kk * 8) != cudaSuccess))
        rc = jsmf_error(JSMF_ENOMEM, "CUDA: out of device memory");
    if (!rc && cudaMemset(g->loss, 0, sizeof(double)) != cudaSuccess)
        rc = jsmf_error(JSMF_EIO, "CUDA: memset failed");
    if (!rc)
        rc = gpu_params(g);
    if (!rc)
        rc = gpu_batch(g, g->u, g->v, count, gmu || galpha);
    if (!rc && (gmu || galpha))
        rc = gpu_grad_and_update(g, 1, dgm, dga);
    if (!rc)
        rc = read_loss(g, loss);
    if (!rc)
        *loss /= count;
    if (!rc && gmu && cudaMemcpy(gmu, dgm, nk * 8, cudaMemcpyDeviceToHost) != cudaSuccess)
        rc = jsmf_error(JSMF_EIO, "CUDA: copy failed");
    if (!rc && galpha && cudaMemcpy(galpha, dga, kk * 8, cudaMemcpyDeviceToHost) != cudaSuccess)
        rc = jsmf_error(JSMF_EIO, "CUDA: copy failed");
    if (dgm)
        cudaFree(dgm);
    if (dga)
        cudaFree(dga);
    gpu_free(g);
    return rc;
}

/* A test hook: pairs of step `step` drawn on the device from the sampler's tables, copied
 * back (the kernels training uses). */
static int cuda_sample(const jsmf_fdm_sampler *smp, uint64_t seed, uint64_t step, uint32_t count,
                       uint32_t *u, uint32_t *v)
{
    int rc = cuda_probe(NULL, 0);
    if (rc)
        return rc;
    if (!count)
        return 0;
    fdm_gpu *g = (fdm_gpu *)calloc(1, sizeof *g);
    if (!g)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    jsmf_fdm_sampler_tables t;
    fdm_sampler_tables_get(smp, &t);
    g->n = t.n;
    if (!(rc = gpu_upload_tables(g, smp)) && !(rc = dalloc((void **)&g->u, count * 4)) &&
        !(rc = dalloc((void **)&g->v, count * 4)) &&
        !(rc = device_draw(g, seed, step, count, g->u, g->v))) {
        if (cudaMemcpy(u, g->u, count * 4, cudaMemcpyDeviceToHost) != cudaSuccess ||
            cudaMemcpy(v, g->v, count * 4, cudaMemcpyDeviceToHost) != cudaSuccess)
            rc = jsmf_error(JSMF_EIO, "CUDA: copy failed");
    }
    gpu_free(g);
    return rc;
}

/* The plugin's one exported symbol: take the host's callbacks, hand back ours. */
extern "C" __attribute__((visibility("default"))) int jsmf_fdm_cuda_plugin_v1(
    const fdm_host_api *host, fdm_plugin_api *out)
{
    H = *host;
    out->probe = cuda_probe;
    out->backend_create = cuda_backend_create;
    out->loss_grad = cuda_loss_grad;
    out->sample = cuda_sample;
    return 0;
}
