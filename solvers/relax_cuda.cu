/* Persistent cooperative kernels of the relaxation driver: n steps with one
 * grid barrier per step, and the whole Jacobi solve with the residual summed
 * inside the norm steps and reduced by the same barrier (no extra pass, no
 * extra barrier). Device code of a step: kernels/stencil_relax.cuh.
 *
 * Barrier: cooperative groups grid.sync(). All blocks are resident because
 * the launch is cudaLaunchCooperativeKernel with at most occupancy x SMs
 * blocks, which the runtime refuses otherwise (it never starts a grid that
 * could hang). Every block takes the stop decision from the same sum after the
 * same barrier, so all leave the loop together. */
#include <cooperative_groups.h>
#include <math.h>

#include "kernels/cuda_check.cuh"
#include "kernels/stencil_relax.cuh"
#include "solvers/relax_cuda.h"

namespace cg = cooperative_groups;

namespace {

/* The regions of a block of steps, passed by value: a __grid_constant__
 * parameter is read in place from the constant bank (uniform loads), where a
 * list in global memory was loaded into the threads' registers each step and
 * left the march fewer registers for rows in flight. */
struct RelaxSteps {
  RelaxGeom g[COOP_MAX_SWEEPS_PER_EXCHANGE];
  int k;
};

template <typename T, int DIM, bool HAS_F>
__global__ void RELAX_BOUNDS steps_kernel(RelaxPar P, const __grid_constant__ RelaxSteps S,
                                          long long n, T *u, T *un, const T *__restrict__ f) {
  cg::grid_group grid = cg::this_grid();
  const unsigned t0 = blockIdx.x * RELAX_THREADS + threadIdx.x, ts = gridDim.x * RELAX_THREADS;
  for (long long s = 0; s < n; s++) {
    const RelaxGeom &G = S.g[s < S.k ? s : S.k - 1];
    relax_range<T, DIM, HAS_F, false, unsigned>(P, G, u, un, f, t0, ts);
    if (s + 1 < n) grid.sync();
    T *t = u;
    u = un;
    un = t;
  }
}

struct SolveArgs {
  long long max_iter, check_every, hist_cap;
  double rtol, atol, dtol;
};

template <typename T, int DIM, bool HAS_F>
__global__ void RELAX_BOUNDS solve_kernel(RelaxPar P, RelaxGeom G, T *u, T *un,
                                               const T *__restrict__ f, SolveArgs a,
                                               coop_relax_solve_state *st, long long *hi,
                                               double *hr) {
  cg::grid_group grid = cg::this_grid();
  const unsigned t0 = blockIdx.x * RELAX_THREADS + threadIdx.x, ts = gridDim.x * RELAX_THREADS;
  const bool lead = blockIdx.x == 0 && threadIdx.x == 0;
  __shared__ double s_sum;
  long long it = 0, c = 0, steps = 0;
  double r0 = 0.0, rn = 0.0;
  int reason = 0;
  for (;;) {
    /* norm step at check c: its sum goes to acc[c % 3]; the slot the next
     * check uses was last read before the previous barrier, so clear it now */
    const double part = relax_range<T, DIM, HAS_F, true, unsigned>(P, G, u, un, f, t0, ts);
    if (lead) st->acc[(c + 1) % 3] = 0.0;
    block_sum_add(part, &st->acc[c % 3]);
    grid.sync();
    steps++;
    /* one load of the sum per block, shared through shared memory: with
     * every warp loading it, 8 x the blocks requests queued on one L2 line */
    if (threadIdx.x == 0) s_sum = *(volatile double *)&st->acc[c % 3];
    __syncthreads();
    rn = sqrt(s_sum);
    if (c == 0) r0 = rn;
    if (lead) {
      const long long slot = coop_history_slot(c, a.hist_cap);
      hi[slot] = it;
      hr[slot] = rn;
      st->hist_len = slot + 1;
    }
    reason = coop_stop_test(rn, r0, it, a.max_iter, a.rtol, a.atol, a.dtol);
    c++;
    if (reason) break; /* u is the iterate whose residual was measured */
    T *t = u;
    u = un;
    un = t;
    it++;
    const long long next = min(it - 1 + a.check_every, a.max_iter);
    for (; it < next; it++) {
      relax_range<T, DIM, HAS_F, false, unsigned>(P, G, u, un, f, t0, ts);
      grid.sync();
      steps++;
      t = u;
      u = un;
      un = t;
    }
  }
  if (lead) {
    st->r0 = r0;
    st->rnorm = rn;
    st->iterations = it;
    st->steps = steps;
    st->reason = reason;
  }
}

template <typename T, int DIM>
void *steps_fn(bool has_f) {
  return has_f ? (void *)steps_kernel<T, DIM, true> : (void *)steps_kernel<T, DIM, false>;
}
template <typename T, int DIM>
void *solve_fn(bool has_f) {
  return has_f ? (void *)solve_kernel<T, DIM, true> : (void *)solve_kernel<T, DIM, false>;
}

void *pick_kernel(const coop_stencil *s, bool has_f, bool solve) {
  const bool f32 = s->grid.prec == COOP_FP32, d3 = s->grid.ndim == 3;
  if (solve)
    return f32 ? (d3 ? solve_fn<float, 3>(has_f) : solve_fn<float, 2>(has_f))
               : (d3 ? solve_fn<double, 3>(has_f) : solve_fn<double, 2>(has_f));
  return f32 ? (d3 ? steps_fn<float, 3>(has_f) : steps_fn<float, 2>(has_f))
             : (d3 ? steps_fn<double, 3>(has_f) : steps_fn<double, 2>(has_f));
}


}  // namespace

extern "C" int coop_relax_threads_cuda(void) { return RELAX_THREADS; }

/* Rows a thread marches, at least, before the grid is cut down: on a small
 * grid the full resident grid gives each thread 1-2 rows, loads four rows
 * for two (the rows beside a strip are read by its neighbours too) and pays
 * the barrier over every block. 1024^2 fp32, residual every sweep / every
 * 100 (H200, bench/results/2026-11-30-h200x2-stencil-blocks.md): 528 blocks
 * (2 rows each) 4.95 / 4.15 us a sweep, 264 (4 rows) 4.46 / 3.39, 132 (8 rows)
 * 5.16 / 3.77. */
constexpr int kMinRowsPerThread = 4;

extern "C" int coop_relax_fit_blocks_cuda(const coop_stencil *s, int most, int sms) {
  const coop_region own = coop_region_owned(&s->grid);
  RelaxGeom G;
  if (relax_geom_try(s, &own, (long long)most * RELAX_THREADS, &G) || G.tasks == 0 ||
      G.ry >= kMinRowsPerThread)
    return most;
  const long long strips = (G.mn + kMinRowsPerThread - 1) / kMinRowsPerThread;
  const long long threads = (long long)G.nch * G.qn * strips;
  long long b = (threads + RELAX_THREADS - 1) / RELAX_THREADS;
  if (b < sms) b = sms;
  return b < most ? (int)b : most;
}

extern "C" int coop_relax_occupancy_cuda(const coop_stencil *s, int has_f, int solve, int *per_sm) {
  COOP_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, pick_kernel(s, has_f, solve),
                                                          RELAX_THREADS, 0));
  return 0;
}

extern "C" int coop_relax_steps_grid_cuda(const coop_stencil *s, const coop_region *regions, int k,
                                          long long n, double c, void *u, void *unew,
                                          const void *f, int blocks, void *stream) {
  if (k < 1 || k > COOP_MAX_SWEEPS_PER_EXCHANGE || n < 1)
    return COOP_ERROR(COOP_ERR_RUNTIME, "%d regions for %lld steps; 1 to %d supported", k, n,
                      COOP_MAX_SWEEPS_PER_EXCHANGE);
  RelaxPar P = make_relax_par(s, c);
  RelaxSteps S = {};
  S.k = k;
  const long long target = (long long)blocks * RELAX_THREADS;
  for (int i = 0; i < k; i++) COOP_CHECK(make_relax_geom(s, &regions[i], target, &S.g[i]));
  void *args[] = {&P, &S, &n, &u, &unew, (void *)&f};
  COOP_CUDA(cudaLaunchCooperativeKernel(pick_kernel(s, f != NULL, false), dim3(blocks),
                                        dim3(RELAX_THREADS), args, 0, (cudaStream_t)stream));
  return 0;
}

extern "C" int coop_relax_solve_grid_cuda(const coop_stencil *s, double c, void *u, void *unew,
                                          const void *f, const coop_solve_ctl *ctl,
                                          coop_relax_solve_state *state, long long *hist_iter,
                                          double *hist_res, long long hist_cap, int blocks,
                                          void *stream) {
  RelaxPar P = make_relax_par(s, c);
  SolveArgs a = {ctl->max_iter, ctl->check_every, hist_cap, ctl->rtol, ctl->atol, ctl->dtol};
  COOP_CUDA(cudaMemsetAsync(state, 0, sizeof *state, (cudaStream_t)stream));
  const coop_region own = coop_region_owned(&s->grid);
  RelaxGeom G;
  COOP_CHECK(make_relax_geom(s, &own, (long long)blocks * RELAX_THREADS, &G));
  void *args[] = {&P, &G, &u, &unew, (void *)&f, &a, &state, &hist_iter, &hist_res};
  COOP_CUDA(cudaLaunchCooperativeKernel(pick_kernel(s, f != NULL, true), dim3(blocks),
                                        dim3(RELAX_THREADS), args, 0, (cudaStream_t)stream));
  return 0;
}

extern "C" int coop_cuda_graph_begin(void *stream) {
  COOP_CUDA(cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeThreadLocal));
  return 0;
}

extern "C" int coop_cuda_graph_end(void *stream, void **exec) {
  cudaGraph_t g = NULL;
  cudaGraphExec_t e = NULL;
  *exec = NULL;
  COOP_CUDA(cudaStreamEndCapture((cudaStream_t)stream, &g));
  const cudaError_t rc = cudaGraphInstantiate(&e, g, 0);
  cudaGraphDestroy(g);
  COOP_CUDA(rc);
  *exec = e;
  return 0;
}

extern "C" int coop_cuda_graph_launch(void *exec, void *stream) {
  COOP_CUDA(cudaGraphLaunch((cudaGraphExec_t)exec, (cudaStream_t)stream));
  return 0;
}

extern "C" void coop_cuda_graph_destroy(void *exec) {
  if (exec) cudaGraphExecDestroy((cudaGraphExec_t)exec);
}
