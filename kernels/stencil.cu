/* Jacobi sweep, residual and halo pack/unpack on the GPU, one-kernel-per-step
 * and persistent (cooperative grid.sync()) forms. Work is cut into tiles of
 * bx x by points (a row segment times neighbouring rows); a block takes tiles
 * tile0, tile0 + stride, ... so the same device code serves both forms. */
#include <cooperative_groups.h>
#include <math.h>

#include "cuda_check.cuh"
#include "stencil_cuda.h"

namespace cg = cooperative_groups;

namespace {

struct Dev {
  long long sy, sz, base; /* index(i,j,k) = base + i + sy*j + sz*k */
  double w0, w1, w2, d, diag;
};

struct Reg {
  long long lo0, lo1, lo2, nx, ny, nz;
};

struct RegList {
  Reg r[COOP_MAX_SWEEPS_PER_EXCHANGE];
};

Dev make_dev(const coop_stencil *s) {
  Dev p;
  p.sy = s->ext[0];
  p.sz = s->ext[0] * s->ext[1];
  p.base = s->g[0] + p.sy * s->g[1] + p.sz * s->g[2];
  p.w0 = s->w[0];
  p.w1 = s->w[1];
  p.w2 = s->w[2];
  p.d = s->inv_diag;
  p.diag = 2.0 * (s->w[0] + s->w[1] + s->w[2]);
  return p;
}

Reg make_reg(const coop_region *r) {
  Reg g;
  g.lo0 = r->lo[0];
  g.lo1 = r->lo[1];
  g.lo2 = r->lo[2];
  g.nx = r->hi[0] > r->lo[0] ? r->hi[0] - r->lo[0] : 0;
  g.ny = r->hi[1] > r->lo[1] ? r->hi[1] - r->lo[1] : 0;
  g.nz = r->hi[2] > r->lo[2] ? r->hi[2] - r->lo[2] : 0;
  return g;
}

/* Rows a thread updates per tile in a sweep: independent loads in flight per
 * thread. One point per thread left the H200 at the same points per second in
 * fp32 as in fp64 (bench/results/2026-11-29-h200x2-jacobi.md): latency bound. */
template <typename T>
__host__ __device__ constexpr int sweep_rows() {
  return sizeof(T) == 4 ? 8 : 4;
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

template <typename T, int DIM>
__device__ T jacobi_point(const Dev &p, const T *__restrict__ u, const T *__restrict__ f,
                          long long q) {
  T acc = f[q] + (T)p.w0 * (u[q - 1] + u[q + 1]) + (T)p.w1 * (u[q - p.sy] + u[q + p.sy]);
  if (DIM == 3) acc += (T)p.w2 * (u[q - p.sz] + u[q + p.sz]);
  return acc;
}

template <typename T, int DIM, typename I>
__device__ void sweep_range(const Dev &p, const Reg &r, const T *__restrict__ u, T *__restrict__ un,
                            const T *__restrict__ f, I t0, I ts, I tiles) {
  constexpr int R = sweep_rows<T>();
  const T d = (T)p.d;
  const long long step = (long long)blockDim.y * p.sy;
  for (I t = t0; t < tiles; t += ts) {
    long long q, j;
    if (!tile_origin<R, I>(p, r, t, &q, &j)) continue;
    T acc[R];
    /* all loads of the R rows first, then the stores: R points in flight */
#pragma unroll
    for (int s = 0; s < R; s++)
      if (j + (long long)s * blockDim.y < r.ny) acc[s] = jacobi_point<T, DIM>(p, u, f, q + s * step);
#pragma unroll
    for (int s = 0; s < R; s++)
      if (j + (long long)s * blockDim.y < r.ny) un[q + s * step] = acc[s] * d;
  }
}

template <typename T, int DIM>
__device__ void sweep_tiles(const Dev &p, const Reg &r, const T *__restrict__ u,
                            T *__restrict__ un, const T *__restrict__ f, long long t0,
                            long long ts) {
  const long long tiles = tile_count<sweep_rows<T>()>(r, blockDim.x, blockDim.y);
  if (tiles + ts <= 0xffffffffLL)
    sweep_range<T, DIM, unsigned>(p, r, u, un, f, (unsigned)t0, (unsigned)ts, (unsigned)tiles);
  else
    sweep_range<T, DIM, unsigned long long>(p, r, u, un, f, t0, ts, tiles);
}

template <typename T, int DIM, typename I>
__device__ double residual_range(const Dev &p, const Reg &r, const T *__restrict__ u,
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

template <typename T, int DIM>
__global__ void sweep_kernel(Dev p, Reg r, const T *__restrict__ u, T *__restrict__ un,
                             const T *__restrict__ f) {
  sweep_tiles<T, DIM>(p, r, u, un, f, blockIdx.x, gridDim.x);
}

template <typename T, int DIM>
__global__ void residual_kernel(Dev p, Reg r, const T *__restrict__ u, const T *__restrict__ f,
                                double *acc) {
  block_sum_add(residual_tiles<T, DIM>(p, r, u, f, blockIdx.x, gridDim.x), acc);
}

template <typename T>
__global__ void pack_kernel(Dev p, Reg r, const T *__restrict__ u, T *__restrict__ buf,
                            int unpack) {
  const long long total = r.nx * r.ny * r.nz;
  for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < total;
       q += (long long)gridDim.x * blockDim.x) {
    const long long i = q % r.nx, rest = q / r.nx, j = rest % r.ny, k = rest / r.ny;
    const long long x = p.base + (r.lo0 + i) + p.sy * (r.lo1 + j) + p.sz * (r.lo2 + k);
    if (unpack)
      ((T *)u)[x] = buf[q];
    else
      buf[q] = u[x];
  }
}

/* Barrier: cg grid.sync(). All blocks are resident because the launcher uses
 * cudaLaunchCooperativeKernel with at most occupancy x SMs blocks, which the
 * runtime refuses otherwise (it never starts a grid that could hang). */
/* 256-thread blocks, at least 4 (3 for the whole solve, which spills at 64
 * registers) resident per SM: the persistent kernels need resident warps to
 * hide memory latency as much as they need unrolling. */
#define COOP_GRID_BOUNDS __launch_bounds__(256, 4)
#define COOP_SOLVE_BOUNDS __launch_bounds__(256, 3)

template <typename T, int DIM, typename I>
__global__ void COOP_GRID_BOUNDS sweeps_grid_kernel(Dev p, RegList regs, int k, T *u, T *un, const T *f) {
  cg::grid_group grid = cg::this_grid();
  for (int s = 0; s < k; s++) {
    const I tiles = (I)tile_count<sweep_rows<T>()>(regs.r[s], blockDim.x, blockDim.y);
    sweep_range<T, DIM, I>(p, regs.r[s], u, un, f, blockIdx.x, gridDim.x, tiles);
    if (s + 1 < k) grid.sync();
    T *t = u;
    u = un;
    un = t;
  }
}


struct SolveArgs {
  long long max_iter, check_every, hist_cap;
  double rtol, atol;
};

/* Residual of u into st->acc[c & 1], then one barrier; returns the norm, the
 * same value in every block. Block 0 records it and clears the other sum,
 * which no block touches again before the next barrier. */
template <typename T, int DIM, typename I>
__device__ double check_grid(cg::grid_group &grid, const Dev &p, const Reg &own, const T *u,
                             const T *f, coop_grid_state *st, long long c, long long it,
                             long long *hi, double *hr, long long cap) {
  const I tiles = (I)tile_count<1>(own, blockDim.x, blockDim.y);
  block_sum_add(residual_range<T, DIM, I>(p, own, u, f, blockIdx.x, gridDim.x, tiles), &st->acc[c & 1]);
  grid.sync();
  const double rn = sqrt(*(volatile double *)&st->acc[c & 1]);
  if (blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
    const long long slot = coop_history_slot(c, cap);
    hi[slot] = it;
    hr[slot] = rn;
    st->hist_len = slot + 1;
    st->acc[(c + 1) & 1] = 0.0;
  }
  return rn;
}

/* Whole solve in one launch. Barrier: cg grid.sync(), resident as above. Every
 * block takes the stop decision from the same residual after the same
 * barrier, so all blocks leave the loop together. */
template <typename T, int DIM, typename I>
__global__ void COOP_SOLVE_BOUNDS solve_grid_kernel(Dev p, Reg own, T *u, T *un, const T *f, SolveArgs a,
                                  coop_grid_state *st, long long *hi, double *hr) {
  cg::grid_group grid = cg::this_grid();
  const I tiles = (I)tile_count<sweep_rows<T>()>(own, blockDim.x, blockDim.y);
  const double r0 = check_grid<T, DIM, I>(grid, p, own, u, f, st, 0, 0, hi, hr, a.hist_cap);
  double rn = r0;
  int reason = coop_converged(r0, r0, a.rtol, a.atol);
  long long it = 0, c = 0;
  if (!reason && it >= a.max_iter) reason = COOP_REASON_MAX_ITER;
  while (!reason) {
    const long long n = min(a.check_every, a.max_iter - it);
    for (long long s = 0; s < n; s++) {
      sweep_range<T, DIM, I>(p, own, u, un, f, blockIdx.x, gridDim.x, tiles);
      grid.sync();
      T *t = u;
      u = un;
      un = t;
    }
    it += n;
    rn = check_grid<T, DIM, I>(grid, p, own, u, f, st, ++c, it, hi, hr, a.hist_cap);
    reason = coop_converged(rn, r0, a.rtol, a.atol);
    if (!reason && it >= a.max_iter) reason = COOP_REASON_MAX_ITER;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
    st->r0 = r0;
    st->rnorm = rn;
    st->iterations = it;
    st->reason = reason;
  }
}

template <typename T, int DIM>
void *kernel_fn(int whole_solve, int wide) {
  if (whole_solve)
    return wide ? (void *)solve_grid_kernel<T, DIM, unsigned long long>
                : (void *)solve_grid_kernel<T, DIM, unsigned>;
  return wide ? (void *)sweeps_grid_kernel<T, DIM, unsigned long long>
              : (void *)sweeps_grid_kernel<T, DIM, unsigned>;
}

/* The persistent kernel for s. Its tile indices are 32-bit unless the box is
 * so large that tile numbers plus the grid could pass 2^32. */
void *pick(const coop_stencil *s, int whole_solve) {
  const int wide = coop_stencil_points(s) >= (1ull << 31);
  const int f32 = s->prec == COOP_FP32, d3 = s->ndim == 3;
  return f32 ? (d3 ? kernel_fn<float, 3>(whole_solve, wide) : kernel_fn<float, 2>(whole_solve, wide))
             : (d3 ? kernel_fn<double, 3>(whole_solve, wide) : kernel_fn<double, 2>(whole_solve, wide));
}

unsigned grid_for(long long work, long long per_block) {
  long long g = (work + per_block - 1) / per_block;
  if (g < 1) g = 1;
  if (g > 2147483647LL) g = 2147483647LL;
  return (unsigned)g;
}

}  // namespace

extern "C" void coop_cuda_block_shape(int64_t nx, int *bx, int *by) {
  int x = 32;
  while (x < 256 && x < nx) x *= 2;
  *bx = x;
  *by = 256 / x;
}

extern "C" int coop_sweep_cuda(const coop_stencil *s, const coop_region *r, const void *u,
                               void *unew, const void *f, int bx, int by, void *stream) {
  const Dev p = make_dev(s);
  const Reg g = make_reg(r);
  const long long tiles = s->prec == COOP_FP32 ? tile_count<sweep_rows<float>()>(g, bx, by)
                                               : tile_count<sweep_rows<double>()>(g, bx, by);
  if (tiles == 0) return 0;
  const dim3 block(bx, by);
  const unsigned grid = grid_for(tiles, 1);
  cudaStream_t st = (cudaStream_t)stream;
  if (s->prec == COOP_FP32) {
    if (s->ndim == 3)
      sweep_kernel<float, 3><<<grid, block, 0, st>>>(p, g, (const float *)u, (float *)unew, (const float *)f);
    else
      sweep_kernel<float, 2><<<grid, block, 0, st>>>(p, g, (const float *)u, (float *)unew, (const float *)f);
  } else {
    if (s->ndim == 3)
      sweep_kernel<double, 3><<<grid, block, 0, st>>>(p, g, (const double *)u, (double *)unew, (const double *)f);
    else
      sweep_kernel<double, 2><<<grid, block, 0, st>>>(p, g, (const double *)u, (double *)unew, (const double *)f);
  }
  COOP_CUDA_LAUNCHED();
  return 0;
}

extern "C" int coop_residual_cuda(const coop_stencil *s, const void *u, const void *f, double *acc,
                                  int bx, int by, void *stream) {
  const coop_region own = coop_region_owned(s);
  const Dev p = make_dev(s);
  const Reg g = make_reg(&own);
  const dim3 block(bx, by);
  /* a few tiles per block keeps the atomics on acc few */
  const unsigned grid = grid_for(tile_count<1>(g, bx, by), 8);
  cudaStream_t st = (cudaStream_t)stream;
  if (s->prec == COOP_FP32) {
    if (s->ndim == 3)
      residual_kernel<float, 3><<<grid, block, 0, st>>>(p, g, (const float *)u, (const float *)f, acc);
    else
      residual_kernel<float, 2><<<grid, block, 0, st>>>(p, g, (const float *)u, (const float *)f, acc);
  } else {
    if (s->ndim == 3)
      residual_kernel<double, 3><<<grid, block, 0, st>>>(p, g, (const double *)u, (const double *)f, acc);
    else
      residual_kernel<double, 2><<<grid, block, 0, st>>>(p, g, (const double *)u, (const double *)f, acc);
  }
  COOP_CUDA_LAUNCHED();
  return 0;
}

static int pack_launch(const coop_stencil *s, const coop_region *r, const void *u, const void *buf,
                       int unpack, void *stream) {
  const Dev p = make_dev(s);
  const Reg g = make_reg(r);
  const long long total = g.nx * g.ny * g.nz;
  if (total == 0) return 0;
  const unsigned grid = grid_for(total, 256);
  cudaStream_t st = (cudaStream_t)stream;
  if (s->prec == COOP_FP32)
    pack_kernel<float><<<grid, 256, 0, st>>>(p, g, (const float *)u, (float *)buf, unpack);
  else
    pack_kernel<double><<<grid, 256, 0, st>>>(p, g, (const double *)u, (double *)buf, unpack);
  COOP_CUDA_LAUNCHED();
  return 0;
}

extern "C" int coop_pack_cuda(const coop_stencil *s, const coop_region *r, const void *u, void *buf,
                              void *stream) {
  return pack_launch(s, r, u, buf, 0, stream);
}

extern "C" int coop_unpack_cuda(const coop_stencil *s, const coop_region *r, void *u,
                                const void *buf, void *stream) {
  return pack_launch(s, r, u, buf, 1, stream);
}

extern "C" int coop_grid_occupancy(const coop_stencil *s, int bx, int by, int whole_solve,
                                   int *per_sm) {
  COOP_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, pick(s, whole_solve), bx * by, 0));
  return 0;
}

extern "C" int coop_sweeps_grid_cuda(const coop_stencil *s, const coop_region *regions, int k,
                                     void *u, void *unew, const void *f, int bx, int by,
                                     int blocks, void *stream) {
  if (k < 1 || k > COOP_MAX_SWEEPS_PER_EXCHANGE)
    return COOP_ERROR(COOP_ERR_RUNTIME, "%d sweeps per launch; 1 to %d supported", k, COOP_MAX_SWEEPS_PER_EXCHANGE);
  Dev p = make_dev(s);
  RegList regs;
  for (int i = 0; i < k; i++) regs.r[i] = make_reg(&regions[i]);
  void *args[] = {&p, &regs, &k, &u, &unew, (void *)&f};
  COOP_CUDA(cudaLaunchCooperativeKernel(pick(s, 0), dim3(blocks), dim3(bx, by), args, 0,
                                        (cudaStream_t)stream));
  return 0;
}

extern "C" int coop_solve_grid_cuda(const coop_stencil *s, void *u, void *unew, const void *f,
                                    const coop_solve_ctl *ctl, coop_grid_state *state,
                                    long long *hist_iter, double *hist_res, long long hist_cap,
                                    int bx, int by, int blocks, void *stream) {
  const coop_region own_r = coop_region_owned(s);
  Dev p = make_dev(s);
  Reg own = make_reg(&own_r);
  SolveArgs a = {ctl->max_iter, ctl->check_every, hist_cap, ctl->rtol, ctl->atol};
  void *args[] = {&p, &own, &u, &unew, (void *)&f, &a, &state, &hist_iter, &hist_res};
  COOP_CUDA(cudaLaunchCooperativeKernel(pick(s, 1), dim3(blocks), dim3(bx, by), args, 0,
                                        (cudaStream_t)stream));
  return 0;
}
