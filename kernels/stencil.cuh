/* Device code of the Poisson stencil's residual and of halo pack/unpack on
 * stored fields (kernels/stencil.cu). Work is cut into tiles of bx x by points
 * (a row segment times neighbouring rows); a block takes tiles t0, t0 +
 * stride, ... The relaxation step itself is in kernels/stencil_relax.cuh. */
#ifndef COOP_STENCIL_CUH
#define COOP_STENCIL_CUH

#include "kernels/stencil.h"

namespace {

struct Dev {
  long long sy, sz, base; /* index(i,j,k) = base + i + sy*j + sz*k */
  double w0, w1, w2, d, diag;
};

struct Reg {
  long long lo0, lo1, lo2, nx, ny, nz;
};

/* Index arithmetic of a stored field (weights zero): enough for pack/unpack. */
inline Dev make_layout(const coop_grid *gr) {
  Dev p = {};
  p.sy = gr->ext[0];
  p.sz = gr->ext[0] * gr->ext[1];
  p.base = gr->g[0] + p.sy * gr->g[1] + p.sz * gr->g[2];
  return p;
}

inline Dev make_dev(const coop_stencil *s) {
  Dev p = make_layout(&s->grid);
  p.w0 = s->w[0];
  p.w1 = s->w[1];
  p.w2 = s->w[2];
  p.d = s->inv_diag;
  p.diag = 2.0 * (s->w[0] + s->w[1] + s->w[2]);
  return p;
}

inline Reg make_reg(const coop_region *r) {
  Reg g;
  g.lo0 = r->lo[0];
  g.lo1 = r->lo[1];
  g.lo2 = r->lo[2];
  g.nx = r->hi[0] > r->lo[0] ? r->hi[0] - r->lo[0] : 0;
  g.ny = r->hi[1] > r->lo[1] ? r->hi[1] - r->lo[1] : 0;
  g.nz = r->hi[2] > r->lo[2] ? r->hi[2] - r->lo[2] : 0;
  return g;
}

/* A tile is bx points along x times by * R rows along y, in one z plane. */
template <int R>
__host__ __device__ long long tile_count(const Reg &r, int bx, int by) {
  return ((r.nx + bx - 1) / bx) * ((r.ny + (long long)by * R - 1) / ((long long)by * R)) * r.nz;
}

/* Storage index q and row j of this thread's first point in tile t; false when
 * its column is outside r. Rows j + s * blockDim.y follow (s < R). The index
 * type I is 32-bit whenever the tile count allows: 64-bit division per tile
 * would cost more than the memory traffic it indexes. */
template <int R, typename I>
__device__ bool tile_origin(const Dev &p, const Reg &r, I t, long long *q, long long *j) {
  const I xt = (I)((r.nx + blockDim.x - 1) / blockDim.x);
  const I yt = (I)((r.ny + (long long)blockDim.y * R - 1) / ((long long)blockDim.y * R));
  const I rest = t / xt, k = rest / yt;
  const long long i = (long long)(t - rest * xt) * blockDim.x + threadIdx.x;
  *j = (long long)(rest - k * yt) * blockDim.y * R + threadIdx.y;
  if (i >= r.nx) return false;
  *q = p.base + (r.lo0 + i) + p.sy * (r.lo1 + *j) + p.sz * (r.lo2 + (long long)k);
  return true;
}

template <typename T, int DIM, typename I>
__device__ double residual_range(const Dev &p, const Reg &r, const T *u,
                                 const T *__restrict__ f, I t0, I ts, I tiles) {
  const T w0 = (T)p.w0, w1 = (T)p.w1, w2 = (T)p.w2, diag = (T)p.diag;
  double sum = 0.0;
  for (I t = t0; t < tiles; t += ts) {
    long long q, j;
    if (!tile_origin<1, I>(p, r, t, &q, &j) || j >= r.ny) continue;
    T au = diag * u[q] - w0 * (u[q - 1] + u[q + 1]) - w1 * (u[q - p.sy] + u[q + p.sy]);
    if (DIM == 3) au -= w2 * (u[q - p.sz] + u[q + p.sz]);
    const double res = (double)(f[q] - au);
    sum += res * res;
  }
  return sum;
}

template <typename T, int DIM>
__device__ double residual_tiles(const Dev &p, const Reg &r, const T *__restrict__ u,
                                 const T *__restrict__ f, long long t0, long long ts) {
  const long long tiles = tile_count<1>(r, blockDim.x, blockDim.y);
  if (tiles + ts <= 0xffffffffLL)
    return residual_range<T, DIM, unsigned>(p, r, u, f, (unsigned)t0, (unsigned)ts, (unsigned)tiles);
  return residual_range<T, DIM, unsigned long long>(p, r, u, f, t0, ts, tiles);
}

/* Sum v over the block and add it to *acc; every thread of the block calls it. */
__device__ void block_sum_add(double v, double *acc) {
  __shared__ double warp_sums[32];
  const int lane = (threadIdx.y * blockDim.x + threadIdx.x) & 31;
  const int warp = (threadIdx.y * blockDim.x + threadIdx.x) >> 5;
  const int nwarps = (blockDim.x * blockDim.y + 31) >> 5;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < nwarps ? warp_sums[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) atomicAdd(acc, v);
  }
  __syncthreads(); /* warp_sums is reused by the next call */
}


inline unsigned grid_for(long long work, long long per_block) {
  long long g = (work + per_block - 1) / per_block;
  if (g < 1) g = 1;
  if (g > 2147483647LL) g = 2147483647LL;
  return (unsigned)g;
}

}  // namespace

#endif
