/* Residual and halo pack/unpack of the Poisson stencil on stored fields, on
 * the GPU. Device code is in kernels/stencil.cuh; the relaxation step
 * (Jacobi, heat) in kernels/stencil_relax.cu. */
#include <math.h>

#include "kernels/cuda_check.cuh"
#include "kernels/stencil.cuh"
#include "kernels/stencil_cuda.h"

namespace {

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

}  // namespace

extern "C" void coop_cuda_block_shape(int64_t nx, int *bx, int *by) {
  int x = 32;
  while (x < 256 && x < nx) x *= 2;
  *bx = x;
  *by = 256 / x;
}

extern "C" int coop_residual_cuda(const coop_stencil *s, const void *u, const void *f, double *acc,
                                  int bx, int by, void *stream) {
  const coop_region own = coop_region_owned(&s->grid);
  const Dev p = make_dev(s);
  const Reg g = make_reg(&own);
  const dim3 block(bx, by);
  /* a few tiles per block keeps the atomics on acc few */
  const unsigned grid = grid_for(tile_count<1>(g, bx, by), 8);
  cudaStream_t st = (cudaStream_t)stream;
  if (s->grid.prec == COOP_FP32) {
    if (s->grid.ndim == 3)
      residual_kernel<float, 3><<<grid, block, 0, st>>>(p, g, (const float *)u, (const float *)f, acc);
    else
      residual_kernel<float, 2><<<grid, block, 0, st>>>(p, g, (const float *)u, (const float *)f, acc);
  } else {
    if (s->grid.ndim == 3)
      residual_kernel<double, 3><<<grid, block, 0, st>>>(p, g, (const double *)u, (const double *)f, acc);
    else
      residual_kernel<double, 2><<<grid, block, 0, st>>>(p, g, (const double *)u, (const double *)f, acc);
  }
  COOP_CUDA_LAUNCHED();
  return 0;
}

static int pack_launch(const coop_grid *gr, const coop_region *r, const void *u, const void *buf,
                       int unpack, void *stream) {
  const Dev p = make_layout(gr);
  const Reg g = make_reg(r);
  const long long total = g.nx * g.ny * g.nz;
  if (total == 0) return 0;
  const unsigned grid = grid_for(total, 256);
  cudaStream_t st = (cudaStream_t)stream;
  if (gr->prec == COOP_FP32)
    pack_kernel<float><<<grid, 256, 0, st>>>(p, g, (const float *)u, (float *)buf, unpack);
  else
    pack_kernel<double><<<grid, 256, 0, st>>>(p, g, (const double *)u, (double *)buf, unpack);
  COOP_CUDA_LAUNCHED();
  return 0;
}

extern "C" int coop_pack_cuda(const coop_grid *gr, const coop_region *r, const void *u, void *buf,
                              void *stream) {
  return pack_launch(gr, r, u, buf, 0, stream);
}

extern "C" int coop_unpack_cuda(const coop_grid *gr, const coop_region *r, void *u,
                                const void *buf, void *stream) {
  return pack_launch(gr, r, u, buf, 1, stream);
}

extern "C" int coop_residual_sum_cuda(const coop_stencil *s, const void *u, const void *f,
                                      double *acc, double *acc_host, double *sumsq, void *stream) {
  int bx, by;
  cudaStream_t st = (cudaStream_t)stream;
  coop_cuda_block_shape(s->grid.n[0], &bx, &by);
  COOP_CUDA(cudaMemsetAsync(acc, 0, sizeof(double), st));
  COOP_CHECK(coop_residual_cuda(s, u, f, acc, bx, by, stream));
  COOP_CUDA(cudaMemcpyAsync(acc_host, acc, sizeof(double), cudaMemcpyDeviceToHost, st));
  COOP_CUDA(cudaStreamSynchronize(st));
  *sumsq = *acc_host;
  return 0;
}
