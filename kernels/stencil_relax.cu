/* The relaxation step un = u + c (f - A u) as one kernel per step (launch and
 * graph modes), the residual fused in (kernels/stencil_relax.cuh). */
#include "kernels/cuda_check.cuh"
#include "kernels/stencil_cuda.h"
#include "kernels/stencil_relax.cuh"

namespace {

template <typename T, int DIM, bool HAS_F, bool NORM>
__global__ void RELAX_BOUNDS relax_kernel(RelaxPar P, RelaxGeom G, const T *u,
                                                               T *un, const T *__restrict__ f,
                                                               double *acc) {
  const double s = relax_range<T, DIM, HAS_F, NORM, unsigned>(
      P, G, u, un, f, blockIdx.x * RELAX_THREADS + threadIdx.x, gridDim.x * RELAX_THREADS);
  if (NORM) block_sum_add(s, acc);
}

template <typename T, int DIM, bool HAS_F>
void *pick_norm(bool norm) {
  return norm ? (void *)relax_kernel<T, DIM, HAS_F, true> : (void *)relax_kernel<T, DIM, HAS_F, false>;
}

template <typename T, int DIM>
void *pick_f(bool has_f, bool norm) {
  return has_f ? pick_norm<T, DIM, true>(norm) : pick_norm<T, DIM, false>(norm);
}

void *pick_relax(const coop_stencil *s, bool has_f, bool norm) {
  const bool f32 = s->grid.prec == COOP_FP32, d3 = s->grid.ndim == 3;
  return f32 ? (d3 ? pick_f<float, 3>(has_f, norm) : pick_f<float, 2>(has_f, norm))
             : (d3 ? pick_f<double, 3>(has_f, norm) : pick_f<double, 2>(has_f, norm));
}

}  // namespace

extern "C" int coop_relax_cuda(const coop_stencil *s, const coop_region *r, double c, const void *u,
                               void *unew, const void *f, double *norm, long long target,
                               void *stream) {
  RelaxPar P = make_relax_par(s, c);
  RelaxGeom G;
  COOP_CHECK(make_relax_geom(s, r, target, &G));
  cudaStream_t st = (cudaStream_t)stream;
  if (norm) COOP_CUDA(cudaMemsetAsync(norm, 0, sizeof(double), st));
  if (G.tasks == 0) return 0;
  /* 2D marches a strip of 32 chunks a warp (relax_range_ring), 3D a tile of
   * planes a block (relax_range_ring3) */
  const long long threads = s->grid.ndim == 2 ? 32LL * G.wtasks : (long long)G.btasks * RELAX_THREADS;
  const unsigned grid = (unsigned)((threads + RELAX_THREADS - 1) / RELAX_THREADS);
  void *args[] = {&P, &G, (void *)&u, &unew, (void *)&f, &norm};
  COOP_CUDA(cudaLaunchKernel(pick_relax(s, f != NULL, norm != NULL), dim3(grid), dim3(RELAX_THREADS),
                             args, 0, st));
  return 0;
}
