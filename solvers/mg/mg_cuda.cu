/* The multigrid cycle on one GPU (solvers/mg/mg_cuda.h): the steps, their
 * three drivers (a kernel per step, a graph of them, one persistent kernel)
 * and the device copies of the hierarchy. */
#include <cooperative_groups.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda_check.cuh"
#include "solvers/mg/mg_cuda.h"
#include "solvers/mg/mg_dev_arrays.cuh"
#include "solvers/mg/mg_steps.cuh"
#include "solvers/stop.h"

namespace cgrp = cooperative_groups;
using namespace coop_mg_steps;

namespace {

constexpr int kThreads = 256;

struct GridArgs {
  int64_t max_iter, stop_at, hist_cap;
  double rtol, atol, dtol;
  int resume;
};

/* The block's sum of v in a fixed order; every thread gets it. */
__device__ double block_sum(double v) {
  __shared__ double sh[kThreads];
  __syncthreads(); /* sh may still be read from the last call */
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
    __syncthreads();
  }
  return sh[0];
}

/* Sum of n partials in a fixed order (the same in every block). */
__device__ double partials_sum(const double *part, int n) {
  double v = 0.0;
  for (int b = threadIdx.x; b < n; b += kThreads) v += part[b];
  return block_sum(v);
}

template <class R, int OP>
__global__ void __launch_bounds__(kThreads) step_kernel(const Dev *D, Step s, const R *vin, R *vout) {
  const double v = run_step<R, OP>(*D, s, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x, vin, vout);
  if (OP != NORM) return;
  const double b = block_sum(v);
  if (threadIdx.x == 0) D->part[blockIdx.x] = b;
}

__global__ void __launch_bounds__(kThreads) sum_kernel(const Dev *D, int n) {
  const double v = partials_sum(D->part, n);
  if (threadIdx.x == 0) *D->sum = v;
}

struct GridState {
  double r0, rnorm;
  long long iterations, checks;
  int reason;
};

/* The whole solve: cycles and checks until the stop test (or stop_at). */
template <class R>
__global__ void __launch_bounds__(kThreads) grid_kernel(const Dev *D, const Step *steps, int nsteps, GridArgs a,
                                                        GridState *st, int64_t *hist_iter, double *hist_res) {
  cgrp::grid_group grid = cgrp::this_grid();
  const uint32_t gt = blockIdx.x * blockDim.x + threadIdx.x, gT = gridDim.x * blockDim.x;
  const int lead = blockIdx.x == 0 && threadIdx.x == 0;
  const Step norm = {NORM, 0, 0};
  GridState s = *st;
  if (!a.resume) s.iterations = s.checks = 0;
  int reason = COOP_REASON_NONE;
  for (bool first = !a.resume;; first = false) {
    if (!first) {
      for (int q = 0; q < nsteps; q++) {
        run_step<R>(*D, steps[q], gt, gT, nullptr, nullptr);
        grid.sync();
      }
      s.iterations++;
    }
    const double v = block_sum(run_step<R, NORM>(*D, norm, gt, gT, nullptr, nullptr));
    if (threadIdx.x == 0) D->part[blockIdx.x] = v;
    grid.sync();
    const double rn = sqrt(partials_sum(D->part, gridDim.x));
    if (first) s.r0 = rn;
    s.rnorm = rn;
    if (lead && a.hist_cap > 0) {
      const int64_t slot = coop_history_slot(s.checks, a.hist_cap);
      hist_iter[slot] = s.iterations;
      hist_res[slot] = rn;
    }
    s.checks++;
    reason = coop_stop_test(rn, s.r0, s.iterations, a.max_iter, a.rtol, a.atol, a.dtol);
    if (reason != COOP_REASON_NONE || s.iterations == a.stop_at) break;
    /* the partials are written again only after the next cycle's grid barriers */
  }
  if (lead) {
    s.reason = reason;
    *st = s;
  }
}

} // namespace

struct coop_mg_gpu {
  const coop_mg_hier *h;
  coop_backend *be;
  cudaStream_t stream;
  Dev host;          /* the device copy's contents, pointers into device memory */
  Dev *dev;
  coop_mg_dev_arrays mem;
  Step *steps;       /* one cycle (host) */
  int nsteps;
  Step *dsteps;      /* on the device */
  int blocks;        /* of the persistent kernel; 0: no grid mode */
  int part_cap;      /* partials the reduction has room for */
  cudaGraphExec_t graph;
  GridState *dstate;
  int64_t *dhist_iter;
  double *dhist_res;
  int64_t dhist_cap;
};

static int level_copy(coop_mg_gpu *g, int l, void *u0, const void *f0) {
  const coop_mg_hier *h = g->h;
  const coop_mg_level *L = &h->lev[l];
  Lev *d = &g->host.lev[l];
  const size_t bytes = coop_grid_points(&L->grid) * coop_prec_size(h->prec);
  const int own_u = !(l == 0 && u0), own_f = !(l == 0 && u0 && f0);
  if (own_u) COOP_CHECK(coop_mg_dalloc(&g->mem, &d->u, bytes));
  if (own_f) COOP_CHECK(coop_mg_dalloc(&g->mem, &d->f, bytes));
  COOP_CHECK(coop_mg_dalloc(&g->mem, &d->r, bytes));
  if (own_u) COOP_CUDA(cudaMemset(d->u, 0, bytes)); /* ghosts: the correction's boundary values */
  if (own_f) COOP_CUDA(cudaMemset(d->f, 0, bytes));
  if (own_u) COOP_CUDA(cudaMemset(d->r, 0, bytes));
  else COOP_CUDA(cudaMemcpy(d->r, u0, bytes, cudaMemcpyDeviceToDevice)); /* u's ghosts: the boundary values */
  if (!own_u) d->u = u0;
  if (!own_f) d->f = (void *)f0;
  const int64_t pts = coop_mg_level_points(h, l);
  if (pts >= (int64_t)UINT32_MAX || coop_grid_points(&L->grid) >= (size_t)INT64_MAX / 8)
    return coop_error_input("solver.name = mg on cuda: a level of %lld points; at most %u", (long long)pts, UINT32_MAX - 1);
  lev_shape(h, l, d);
  const int last = l == h->nlev - 1;
  for (int a = 0; a < 3; a++) {
    const size_t n = (size_t)L->N[a];
    Axis *x = &d->ax[a];
    COOP_CHECK(coop_mg_dcopy(&g->mem, L->wl[a], n, &x->wl));
    COOP_CHECK(coop_mg_dcopy(&g->mem, L->wr[a], n, &x->wr));
    COOP_CHECK(coop_mg_dcopy(&g->mem, L->vol[a], n, &x->vol));
    if (last) continue;
    const size_t nc = (size_t)h->lev[l + 1].N[a];
    for (int s = 0; s < 2; s++) {
      COOP_CHECK(coop_mg_dcopy(&g->mem, L->par[a][s], n, &x->par[s]));
      COOP_CHECK(coop_mg_dcopy(&g->mem, L->p[a][s], n, &x->p[s]));
    }
    COOP_CHECK(coop_mg_dcopy(&g->mem, L->nkid[a], nc, &x->nkid));
    COOP_CHECK(coop_mg_dcopy(&g->mem, L->kid[a], 3 * nc, &x->kid));
    COOP_CHECK(coop_mg_dcopy(&g->mem, L->kq[a], 3 * nc, &x->kq));
  }
  return 0;
}

/* S^-1 of the coarsest level, column by column from the band's solve. */
static int coarse_inverse(coop_mg_gpu *g) {
  const coop_mg_hier *h = g->h;
  const int64_t cn = h->cn;
  double *inv = (double *)calloc((size_t)(cn * cn), sizeof(double));
  if (!inv) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory (the coarsest level's inverse)");
  for (int64_t m = 0; m < cn; m++) {
    double *col = inv + m * cn; /* column m = row m: S^-1 is symmetric */
    col[m] = 1.0;
    coop_mg_coarse_band_solve(h, col);
  }
  const int rc = coop_mg_dcopy(&g->mem, inv, (size_t)(cn * cn), &g->host.cinv);
  free(inv);
  COOP_CHECK(rc);
  COOP_CHECK(coop_mg_dalloc(&g->mem, (void **)&g->host.cb, (size_t)cn * sizeof(double)));
  g->host.cn = cn;
  for (int a = 0; a < 3; a++) g->host.cs[a] = h->cstride[a];
  return 0;
}

template <class R>
static void *grid_fn() {
  return (void *)grid_kernel<R>;
}

static int plan_grid(coop_mg_gpu *g) {
  void *fn = g->h->prec == COOP_FP32 ? grid_fn<float>() : grid_fn<double>();
  int per_sm = 0;
  COOP_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, kThreads, 0));
  g->blocks = g->be->cooperative ? per_sm * g->be->sm_count : 0;
  return 0;
}

extern "C" int coop_mg_gpu_create(const coop_mg_hier *h, coop_backend *be, void *u0, const void *f0,
                                  coop_mg_gpu **out) {
  *out = NULL;
  if (h->size != 1) return COOP_ERROR(COOP_ERR_RUNTIME, "multigrid on the GPU: one rank only");
  coop_mg_gpu *g = (coop_mg_gpu *)calloc(1, sizeof *g);
  if (!g) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  *out = g;
  g->h = h;
  g->be = be;
  g->stream = (cudaStream_t)be->stream;
  g->host.ndim = h->ndim;
  g->host.nlev = h->nlev;
  g->host.omega = h->omega;
  for (int l = 0; l < h->nlev; l++) COOP_CHECK(level_copy(g, l, u0, f0));
  COOP_CHECK(coarse_inverse(g));
  Recorder rec = {h, NULL, 0};
  const int rc = record_cycle(&rec, 0, h->cycle);
  g->steps = rec.steps;
  g->nsteps = rec.n;
  COOP_CHECK(rc);
  COOP_CHECK(plan_grid(g));
  int most = 1;
  for (int q = 0; q < g->nsteps; q++) {
    const int nb = (int)((items_of(g->host, g->steps[q]) + kThreads - 1) / kThreads);
    most = nb > most ? nb : most;
  }
  const int cap_launch = 4 * (be->sm_count > 0 ? be->sm_count : 1) * (2048 / kThreads);
  g->part_cap = most < cap_launch ? most : cap_launch;
  if (g->blocks > g->part_cap) g->part_cap = g->blocks;
  COOP_CHECK(coop_mg_dalloc(&g->mem, (void **)&g->host.part, (size_t)g->part_cap * sizeof(double)));
  COOP_CHECK(coop_mg_dalloc(&g->mem, (void **)&g->host.sum, sizeof(double)));
  COOP_CHECK(coop_mg_dalloc(&g->mem, (void **)&g->dev, sizeof(Dev)));
  COOP_CUDA(cudaMemcpy(g->dev, &g->host, sizeof(Dev), cudaMemcpyHostToDevice));
  COOP_CHECK(coop_mg_dalloc(&g->mem, (void **)&g->dsteps, (size_t)g->nsteps * sizeof(Step)));
  COOP_CUDA(cudaMemcpy(g->dsteps, g->steps, (size_t)g->nsteps * sizeof(Step), cudaMemcpyHostToDevice));
  COOP_CHECK(coop_mg_dalloc(&g->mem, (void **)&g->dstate, sizeof(GridState)));
  COOP_CUDA(cudaDeviceSynchronize()); /* the memsets and copies above, before any step on g->stream */
  return 0;
}

extern "C" void coop_mg_gpu_destroy(coop_mg_gpu *g) {
  if (!g) return;
  if (g->graph) cudaGraphExecDestroy(g->graph);
  coop_mg_dfree(&g->mem);
  cudaFree(g->dhist_iter);
  cudaFree(g->dhist_res);
  free(g->steps);
  free(g);
}

/* Step s as a kernel of its own. */
template <class R>
static int launch_step(coop_mg_gpu *g, const Step &s, const void *vin, void *vout) {
  uint32_t nb = (items_of(g->host, s) + kThreads - 1) / kThreads;
  if (nb > (uint32_t)g->part_cap) nb = (uint32_t)g->part_cap;
  if (nb < 1) nb = 1;
  const R *in = (const R *)vin;
  R *out = (R *)vout;
  switch (s.op) {
#define COOP_MG_START(OP) \
  case OP: step_kernel<R, OP><<<nb, kThreads, 0, g->stream>>>(g->dev, s, in, out); break;
    COOP_MG_START(RB_COLOUR)
    COOP_MG_START(SMOOTH_JAC)
    COOP_MG_START(COPY)
    COOP_MG_START(NORM)
    COOP_MG_START(RESTRICT)
    COOP_MG_START(PROLONG)
    COOP_MG_START(COARSE_B)
    COOP_MG_START(COARSE_X)
    COOP_MG_START(UNPACK)
    COOP_MG_START(PACK)
    COOP_MG_START(SHIFTED_RHS)
#undef COOP_MG_START
    default: return COOP_ERROR(COOP_ERR_RUNTIME, "multigrid: step op %d", s.op);
  }
  COOP_CUDA_LAUNCHED();
  if (s.op == NORM) {
    sum_kernel<<<1, kThreads, 0, g->stream>>>(g->dev, (int)nb);
    COOP_CUDA_LAUNCHED();
  }
  return 0;
}

static int launch(coop_mg_gpu *g, const Step &s, const void *vin = NULL, void *vout = NULL) {
  return g->h->prec == COOP_FP32 ? launch_step<float>(g, s, vin, vout) : launch_step<double>(g, s, vin, vout);
}

static int launch_cycle(coop_mg_gpu *g) {
  for (int q = 0; q < g->nsteps; q++) COOP_CHECK(launch(g, g->steps[q]));
  return launch(g, Step{NORM, 0, 0});
}

static int fetch_sum(coop_mg_gpu *g, double *sumsq) {
  COOP_CUDA(cudaMemcpyAsync(sumsq, g->host.sum, sizeof(double), cudaMemcpyDeviceToHost, g->stream));
  COOP_CUDA(cudaStreamSynchronize(g->stream));
  return 0;
}

extern "C" int coop_mg_gpu_shifted_rhs(coop_mg_gpu *g, const void *src) {
  return launch(g, Step{SHIFTED_RHS, 0, 0}, src, NULL);
}

extern "C" int coop_mg_gpu_residual(coop_mg_gpu *g, double *sumsq) {
  COOP_CHECK(launch(g, Step{NORM, 0, 0}));
  return fetch_sum(g, sumsq);
}

extern "C" int coop_mg_gpu_cycle(coop_mg_gpu *g, int graph, double *sumsq) {
  if (!graph) {
    COOP_CHECK(launch_cycle(g));
    return fetch_sum(g, sumsq);
  }
  if (!g->graph) {
    cudaGraph_t gr;
    COOP_CUDA(cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeThreadLocal));
    const int rc = launch_cycle(g);
    const cudaError_t end = cudaStreamEndCapture(g->stream, &gr);
    COOP_CHECK(rc);
    COOP_CUDA(end);
    const cudaError_t inst = cudaGraphInstantiate(&g->graph, gr, 0);
    cudaGraphDestroy(gr);
    COOP_CUDA(inst);
  }
  COOP_CUDA(cudaGraphLaunch(g->graph, g->stream));
  return fetch_sum(g, sumsq);
}

extern "C" int coop_mg_gpu_pc(coop_mg_gpu *g, const void *r, void *z) {
  COOP_CHECK(launch(g, Step{UNPACK, 0, 0}, r, NULL));
  for (int q = 0; q < g->nsteps; q++) COOP_CHECK(launch(g, g->steps[q]));
  return launch(g, Step{PACK, 0, 0}, NULL, z);
}

extern "C" int coop_mg_gpu_solve(coop_mg_gpu *g, const coop_mg_grid_args *a, coop_mg_grid_result *res) {
  if (g->blocks < 1) return COOP_ERROR(COOP_ERR_RUNTIME, "multigrid: grid mode cannot run on this GPU");
  const int64_t cap = a->hist_cap;
  if (cap > g->dhist_cap) {
    cudaFree(g->dhist_iter);
    cudaFree(g->dhist_res);
    g->dhist_iter = NULL;
    g->dhist_res = NULL;
    g->dhist_cap = 0;
    COOP_CUDA(cudaMalloc((void **)&g->dhist_iter, (size_t)cap * sizeof(int64_t)));
    COOP_CUDA(cudaMalloc((void **)&g->dhist_res, (size_t)cap * sizeof(double)));
    g->dhist_cap = cap;
  }
  GridState st = {res->r0, res->rnorm, res->iterations, res->checks, res->reason};
  const long long before = a->resume ? res->checks : 0;
  COOP_CUDA(cudaMemcpyAsync(g->dstate, &st, sizeof st, cudaMemcpyHostToDevice, g->stream));
  GridArgs ga = {a->max_iter, a->stop_at, cap, a->rtol, a->atol, a->dtol, a->resume};
  const Dev *dev = g->dev;
  const Step *steps = g->dsteps;
  int nsteps = g->nsteps;
  GridState *dstate = g->dstate;
  int64_t *hi = g->dhist_iter;
  double *hr = g->dhist_res;
  void *args[] = {(void *)&dev, (void *)&steps, (void *)&nsteps, (void *)&ga, (void *)&dstate, (void *)&hi, (void *)&hr};
  void *fn = g->h->prec == COOP_FP32 ? grid_fn<float>() : grid_fn<double>();
  COOP_CUDA(cudaLaunchCooperativeKernel(fn, dim3(g->blocks), dim3(kThreads), args, 0, g->stream));
  COOP_CUDA(cudaMemcpyAsync(&st, g->dstate, sizeof st, cudaMemcpyDeviceToHost, g->stream));
  COOP_CUDA(cudaStreamSynchronize(g->stream));
  if (cap > 0 && st.checks > before) {
    const int64_t lo = coop_history_slot(before, cap), hi_slot = coop_history_slot(st.checks - 1, cap) + 1;
    COOP_CUDA(cudaMemcpy(a->hist_iter + lo, g->dhist_iter + lo, (size_t)(hi_slot - lo) * sizeof(int64_t),
                         cudaMemcpyDeviceToHost));
    COOP_CUDA(cudaMemcpy(a->hist_res + lo, g->dhist_res + lo, (size_t)(hi_slot - lo) * sizeof(double),
                         cudaMemcpyDeviceToHost));
  }
  res->r0 = st.r0;
  res->rnorm = st.rnorm;
  res->iterations = st.iterations;
  res->checks = st.checks;
  res->reason = st.reason;
  return 0;
}

extern "C" void coop_mg_gpu_info(const coop_mg_gpu *g, int *blocks, int *steps) {
  *blocks = g->blocks;
  *steps = g->nsteps;
}
