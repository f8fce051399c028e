/* The whole Jacobi solve of a rank without neighbours in one persistent
 * cooperative launch: sweeps, residual checks and the stop test on the GPU.
 * Solver-owned (solvers/jacobi.c calls it); the sweep and residual device code
 * is the stencil's own (kernels/stencil.cuh). */
#include <cooperative_groups.h>
#include <math.h>

#include "kernels/cuda_check.cuh"
#include "kernels/stencil.cuh"
#include "kernels/stencil_cuda.h"
#include "solvers/jacobi_grid.h"

namespace cg = cooperative_groups;

namespace {

struct SolveArgs {
  long long max_iter, check_every, hist_cap;
  double rtol, atol, dtol;
};

/* Residual of u into st->acc[c & 1], then one barrier; returns the norm, the
 * same value in every block. Block 0 records it and clears the other sum,
 * which no block touches again before the next barrier. */
template <typename T, int DIM, typename I>
__device__ double check_grid(cg::grid_group &grid, const Dev &p, const Reg &own, const T *u,
                             const T *f, coop_jacobi_grid_state *st, long long c, long long it,
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
                                  coop_jacobi_grid_state *st, long long *hi, double *hr) {
  cg::grid_group grid = cg::this_grid();
  const I tiles = (I)tile_count<sweep_rows<T>()>(own, blockDim.x, blockDim.y);
  const double r0 = check_grid<T, DIM, I>(grid, p, own, u, f, st, 0, 0, hi, hr, a.hist_cap);
  double rn = r0;
  long long it = 0, c = 0;
  int reason = coop_stop_test(r0, r0, it, a.max_iter, a.rtol, a.atol, a.dtol);
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
    reason = coop_stop_test(rn, r0, it, a.max_iter, a.rtol, a.atol, a.dtol);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
    st->r0 = r0;
    st->rnorm = rn;
    st->iterations = it;
    st->reason = reason;
  }
}

template <typename T, int DIM>
void *solve_fn(int wide) {
  return wide ? (void *)solve_grid_kernel<T, DIM, unsigned long long>
              : (void *)solve_grid_kernel<T, DIM, unsigned>;
}

/* Tile indices are 32-bit unless tile numbers plus the grid could pass 2^32. */
void *pick_solve(const coop_stencil *s) {
  const int wide = coop_grid_points(&s->grid) >= (1ull << 31);
  const int f32 = s->grid.prec == COOP_FP32, d3 = s->grid.ndim == 3;
  return f32 ? (d3 ? solve_fn<float, 3>(wide) : solve_fn<float, 2>(wide))
             : (d3 ? solve_fn<double, 3>(wide) : solve_fn<double, 2>(wide));
}

}  // namespace

extern "C" int coop_jacobi_grid_occupancy(const coop_stencil *s, int bx, int by, int *per_sm) {
  COOP_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, pick_solve(s), bx * by, 0));
  return 0;
}

extern "C" int coop_jacobi_grid_solve(const coop_stencil *s, void *u, void *unew, const void *f,
                                      const coop_solve_ctl *ctl, coop_jacobi_grid_state *state,
                                      long long *hist_iter, double *hist_res, long long hist_cap,
                                      int bx, int by, int blocks, void *stream) {
  const coop_region own_r = coop_region_owned(&s->grid);
  Dev p = make_dev(s);
  Reg own = make_reg(&own_r);
  SolveArgs a = {ctl->max_iter, ctl->check_every, hist_cap, ctl->rtol, ctl->atol, ctl->dtol};
  void *args[] = {&p, &own, &u, &unew, (void *)&f, &a, &state, &hist_iter, &hist_res};
  COOP_CUDA(cudaMemsetAsync(state, 0, sizeof *state, (cudaStream_t)stream));
  COOP_CUDA(cudaLaunchCooperativeKernel(pick_solve(s), dim3(blocks), dim3(bx, by), args, 0,
                                        (cudaStream_t)stream));
  return 0;
}
