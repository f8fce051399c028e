/* The multigrid cycle on one GPU (solvers/mg/mg_cuda.h): the steps, their
 * three drivers (a kernel per step, a graph of them, one persistent kernel)
 * and the device copies of the hierarchy. */
#include <cooperative_groups.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda_check.cuh"
#include "solvers/mg/mg_cuda.h"
#include "solvers/stop.h"

namespace cgrp = cooperative_groups;

namespace {

constexpr int kThreads = 256;

/* n / d for 32-bit n and a fixed d (Granlund and Montgomery): a multiply-high
 * and two shifts instead of a division in every point's index. */
struct FastDiv {
  uint32_t d, m;
  int s1, s2;
};

FastDiv fast_div(uint32_t d) {
  int l = 0;
  while ((1ull << l) < d) l++;
  const uint64_t m = ((1ull << 32) * ((1ull << l) - d)) / d + 1;
  return {d, (uint32_t)m, l ? 1 : 0, l ? l - 1 : 0};
}

__device__ __forceinline__ uint32_t quot(const FastDiv &f, uint32_t n) {
  const uint32_t t = __umulhi(f.m, n);
  return (t + ((n - t) >> f.s1)) >> f.s2;
}

/* One axis of a level: coefficients, volumes and the transfers to the next
 * level (mg_level.h; one rank, so global indices are local ones). */
struct Axis {
  const double *wl, *wr, *vol;
  const int64_t *par[2];
  const double *p[2];
  const int *nkid;
  const int64_t *kid;
  const double *kq;
};

struct Lev {
  void *u, *f, *r;
  uint32_t n[3], points;
  int64_t sy, sz, base; /* strides of j and k, index of point (0, 0, 0) */
  FastDiv dx, dy, dhx;  /* by n[0], n[1], (n[0] + 1) / 2 */
  Axis ax[3];
};

struct Dev {
  int ndim, nlev;
  double omega;
  Lev lev[COOP_MG_MAX_LEVELS];
  const double *cinv; /* the coarsest level's S^-1, cn x cn, in the band's numbering */
  double *cb;         /* its right-hand side, V f */
  int64_t cn, cs[3];
  double *part;       /* reduction partials, a block each */
  double *sum;
};

enum Op { RBGS, JAC_R, JAC_U, RESID, NORM, RESTRICT, PROLONG, COARSE_B, COARSE_X, UNPACK, PACK };

struct Step {
  int op, lev, arg; /* arg: the colour of RBGS */
};

struct GridArgs {
  int64_t max_iter, stop_at, hist_cap;
  double rtol, atol, dtol;
  int resume;
};

__device__ __forceinline__ void point_of(const Lev &L, uint32_t item, uint32_t &i, uint32_t &j, uint32_t &k) {
  const uint32_t q = quot(L.dx, item);
  i = item - q * L.n[0];
  k = quot(L.dy, q);
  j = q - k * L.n[1];
}

__device__ __forceinline__ int64_t index_of(const Lev &L, uint32_t i, uint32_t j, uint32_t k) {
  return L.base + (int64_t)i + L.sy * j + L.sz * k;
}

/* The neighbours' pull and the diagonal, as the host's pull_ (mg_host_impl.h). */
template <class R>
__device__ __forceinline__ R pull(const Lev &L, int ndim, const R *u, int64_t p, uint32_t i, uint32_t j,
                                  uint32_t k, R &d) {
  const R lx = (R)L.ax[0].wl[i], rx = (R)L.ax[0].wr[i], ly = (R)L.ax[1].wl[j], ry = (R)L.ax[1].wr[j];
  R s = lx * u[p - 1] + rx * u[p + 1] + (ly * u[p - L.sy] + ry * u[p + L.sy]);
  d = (lx + rx) + (ly + ry);
  if (ndim == 3) {
    const R lz = (R)L.ax[2].wl[k], rz = (R)L.ax[2].wr[k];
    s += lz * u[p - L.sz] + rz * u[p + L.sz];
    d += lz + rz;
  }
  return s;
}

/* Items of a step: what its threads share out. */
__host__ __device__ inline uint32_t items_of(const Dev &D, const Step &s) {
  const Lev &L = D.lev[s.lev];
  if (s.op == RBGS) return L.dhx.d * L.n[1] * L.n[2];
  if (s.op == RESTRICT) return D.lev[s.lev + 1].points;
  return L.points;
}

/* Item t, t + T, ... of step s; returns this thread's sum of squares (NORM). */
template <class R>
__device__ double run_step(const Dev &D, const Step &s, uint32_t t, uint32_t T, const R *vin, R *vout) {
  const Lev &L = D.lev[s.lev];
  const uint32_t items = items_of(D, s);
  const int ndim = D.ndim;
  R *u = (R *)L.u, *r = (R *)L.r;
  const R *f = (const R *)L.f;
  double sum = 0.0;
  for (uint32_t item = t; item < items; item += T) {
    uint32_t i, j, k;
    if (s.op == RBGS) {
      const uint32_t q = quot(L.dhx, item), ii = item - q * L.dhx.d;
      k = quot(L.dy, q);
      j = q - k * L.n[1];
      i = 2 * ii + ((s.arg + j + k) & 1);
      if (i >= L.n[0]) continue;
      const int64_t p = index_of(L, i, j, k);
      R d;
      const R sn = pull(L, ndim, u, p, i, j, k, d);
      u[p] = (f[p] + sn) / d;
      continue;
    }
    if (s.op == RESTRICT) { /* f(C) = R r(F), u(C) = 0, kids in ascending order */
      const Lev &C = D.lev[s.lev + 1];
      uint32_t I, J, K;
      point_of(C, item, I, J, K);
      R acc = 0;
      for (int c = 0; c < L.ax[2].nkid[K]; c++) {
        const int64_t kk = L.ax[2].kid[3 * K + c];
        const double qz = L.ax[2].kq[3 * K + c];
        for (int b = 0; b < L.ax[1].nkid[J]; b++) {
          const int64_t jj = L.ax[1].kid[3 * J + b];
          const double qyz = L.ax[1].kq[3 * J + b] * qz;
          const int64_t row = L.base + L.sy * jj + L.sz * kk;
          for (int a = 0; a < L.ax[0].nkid[I]; a++) {
            const double w = L.ax[0].kq[3 * I + a] * qyz;
            acc += (R)w * r[row + L.ax[0].kid[3 * I + a]];
          }
        }
      }
      const int64_t pc = index_of(C, I, J, K);
      ((R *)C.f)[pc] = acc;
      ((R *)C.u)[pc] = 0;
      continue;
    }
    point_of(L, item, i, j, k);
    const int64_t p = index_of(L, i, j, k);
    switch (s.op) {
      case JAC_R: {
        R d;
        const R sn = pull(L, ndim, u, p, i, j, k, d);
        r[p] = (R)D.omega * (f[p] - (d * u[p] - sn)) / d;
        break;
      }
      case JAC_U: u[p] += r[p]; break;
      case RESID:
      case NORM: {
        R d;
        const R sn = pull(L, ndim, u, p, i, j, k, d);
        const R res = f[p] - (d * u[p] - sn);
        r[p] = res;
        sum += (double)res * (double)res;
        break;
      }
      case PROLONG: { /* u(F) += P u(C) */
        const Lev &C = D.lev[s.lev + 1];
        const R *uc = (const R *)C.u;
        R e = 0;
        for (int c = 0; c < 2; c++) {
          const double pz = L.ax[2].p[c][k];
          if (pz == 0.0) continue;
          for (int b = 0; b < 2; b++) {
            const double pyz = L.ax[1].p[b][j] * pz;
            if (pyz == 0.0) continue;
            for (int a = 0; a < 2; a++) {
              const double w = L.ax[0].p[a][i] * pyz;
              if (w == 0.0) continue;
              e += (R)w * uc[index_of(C, (uint32_t)L.ax[0].par[a][i], (uint32_t)L.ax[1].par[b][j],
                                      (uint32_t)L.ax[2].par[c][k])];
            }
          }
        }
        u[p] += e;
        break;
      }
      case COARSE_B:
        D.cb[i * D.cs[0] + j * D.cs[1] + k * D.cs[2]] =
            L.ax[0].vol[i] * L.ax[1].vol[j] * L.ax[2].vol[k] * (double)f[p];
        break;
      case COARSE_X: { /* S^-1 is symmetric: thread m reads column m, coalesced */
        const int64_t m = i * D.cs[0] + j * D.cs[1] + k * D.cs[2];
        double acc = 0.0;
        for (int64_t c = 0; c < D.cn; c++) acc += D.cinv[c * D.cn + m] * D.cb[c];
        u[p] = (R)acc;
        break;
      }
      case UNPACK:
        ((R *)L.f)[p] = vin[item];
        u[p] = 0;
        break;
      case PACK: vout[item] = u[p]; break;
    }
  }
  return sum;
}

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

template <class R>
__global__ void __launch_bounds__(kThreads) step_kernel(const Dev *D, Step s, const R *vin, R *vout) {
  const double v = run_step<R>(*D, s, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x, vin, vout);
  if (s.op != NORM) return;
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
    const double v = block_sum(run_step<R>(*D, norm, gt, gT, nullptr, nullptr));
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
  void *allocs[COOP_MG_MAX_LEVELS * 40 + 16];
  int nalloc;
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

static int dalloc(coop_mg_gpu *g, void **p, size_t bytes) {
  if (g->nalloc == (int)(sizeof g->allocs / sizeof g->allocs[0]))
    return COOP_ERROR(COOP_ERR_RUNTIME, "multigrid: too many device arrays");
  COOP_CUDA(cudaMalloc(p, bytes ? bytes : 1));
  g->allocs[g->nalloc++] = *p;
  return 0;
}

/* A device copy of n host values (NULL stays NULL). */
template <class T>
static int dcopy(coop_mg_gpu *g, const T *src, size_t n, const T **out) {
  *out = NULL;
  if (!src) return 0;
  void *p;
  COOP_CHECK(dalloc(g, &p, n * sizeof(T)));
  COOP_CUDA(cudaMemcpy(p, src, n * sizeof(T), cudaMemcpyHostToDevice));
  *out = (const T *)p;
  return 0;
}

static int level_copy(coop_mg_gpu *g, int l, void *u0, const void *f0) {
  const coop_mg_hier *h = g->h;
  const coop_mg_level *L = &h->lev[l];
  Lev *d = &g->host.lev[l];
  const size_t bytes = coop_grid_points(&L->grid) * coop_prec_size(h->prec);
  const int own_u = !(l == 0 && u0), own_f = !(l == 0 && u0 && f0);
  if (own_u) COOP_CHECK(dalloc(g, &d->u, bytes));
  if (own_f) COOP_CHECK(dalloc(g, &d->f, bytes));
  COOP_CHECK(dalloc(g, &d->r, bytes));
  if (own_u) COOP_CUDA(cudaMemset(d->u, 0, bytes)); /* ghosts: the correction's boundary values */
  if (own_f) COOP_CUDA(cudaMemset(d->f, 0, bytes));
  COOP_CUDA(cudaMemset(d->r, 0, bytes));
  if (!own_u) d->u = u0;
  if (!own_f) d->f = (void *)f0;
  const int64_t pts = coop_mg_level_points(h, l);
  if (pts >= (int64_t)UINT32_MAX || coop_grid_points(&L->grid) >= (size_t)INT64_MAX / 8)
    return coop_error_input("solver.name = mg on cuda: a level of %lld points; at most %u", (long long)pts, UINT32_MAX - 1);
  for (int a = 0; a < 3; a++) d->n[a] = (uint32_t)L->grid.n[a];
  d->points = (uint32_t)pts;
  d->sy = L->grid.ext[0];
  d->sz = L->grid.ext[0] * L->grid.ext[1];
  d->base = coop_grid_index(&L->grid, 0, 0, 0);
  d->dx = fast_div(d->n[0]);
  d->dy = fast_div(d->n[1]);
  d->dhx = fast_div((d->n[0] + 1) / 2);
  const int last = l == h->nlev - 1;
  for (int a = 0; a < 3; a++) {
    const size_t n = (size_t)L->N[a];
    Axis *x = &d->ax[a];
    COOP_CHECK(dcopy(g, L->wl[a], n, &x->wl));
    COOP_CHECK(dcopy(g, L->wr[a], n, &x->wr));
    COOP_CHECK(dcopy(g, L->vol[a], n, &x->vol));
    if (last) continue;
    const size_t nc = (size_t)h->lev[l + 1].N[a];
    for (int s = 0; s < 2; s++) {
      COOP_CHECK(dcopy(g, L->par[a][s], n, &x->par[s]));
      COOP_CHECK(dcopy(g, L->p[a][s], n, &x->p[s]));
    }
    COOP_CHECK(dcopy(g, L->nkid[a], nc, &x->nkid));
    COOP_CHECK(dcopy(g, L->kid[a], 3 * nc, &x->kid));
    COOP_CHECK(dcopy(g, L->kq[a], 3 * nc, &x->kq));
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
  const int rc = dcopy(g, inv, (size_t)(cn * cn), &g->host.cinv);
  free(inv);
  COOP_CHECK(rc);
  COOP_CHECK(dalloc(g, (void **)&g->host.cb, (size_t)cn * sizeof(double)));
  g->host.cn = cn;
  for (int a = 0; a < 3; a++) g->host.cs[a] = h->cstride[a];
  return 0;
}

static int add_step(coop_mg_gpu *g, int op, int lev, int arg) {
  const coop_mg_hier *h = g->h;
  const int cap = 4096;
  if (!g->steps && !(g->steps = (Step *)calloc(cap, sizeof(Step))))
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (g->nsteps == cap)
    return coop_error_input("solver.mg_cycle: the cycle has more than %d steps on the GPU (a W-cycle over %d levels); "
                            "use solver.mg_cycle = v or f", cap, h->nlev);
  g->steps[g->nsteps++] = Step{op, lev, arg};
  return 0;
}

static int record_smooth(coop_mg_gpu *g, int l, int sweeps, int reverse) {
  for (int s = 0; s < sweeps; s++) {
    if (g->h->smoother == COOP_MG_JACOBI) {
      COOP_CHECK(add_step(g, JAC_R, l, 0));
      COOP_CHECK(add_step(g, JAC_U, l, 0));
      continue;
    }
    for (int c = 0; c < 2; c++) COOP_CHECK(add_step(g, RBGS, l, reverse ? 1 - c : c));
  }
  return 0;
}

/* The steps of coop_mg_cycle (mg_level.c's cycle_at), one rank. */
static int record_cycle(coop_mg_gpu *g, int l, coop_mg_cycle_type type) {
  const coop_mg_hier *h = g->h;
  if (l == h->nlev - 1) {
    COOP_CHECK(add_step(g, COARSE_B, l, 0));
    return add_step(g, COARSE_X, l, 0);
  }
  COOP_CHECK(record_smooth(g, l, h->pre, 0));
  COOP_CHECK(add_step(g, RESID, l, 0));
  COOP_CHECK(add_step(g, RESTRICT, l, 0));
  COOP_CHECK(record_cycle(g, l + 1, type));
  if (type != COOP_MG_V && l + 1 < h->nlev - 1)
    COOP_CHECK(record_cycle(g, l + 1, type == COOP_MG_W ? COOP_MG_W : COOP_MG_V));
  COOP_CHECK(add_step(g, PROLONG, l, 0));
  return record_smooth(g, l, h->post, h->symmetric);
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
  if (h->lev[0].shift != 0.0) return COOP_ERROR(COOP_ERR_RUNTIME, "multigrid on the GPU: no shifted operator yet");
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
  COOP_CHECK(record_cycle(g, 0, h->cycle));
  COOP_CHECK(plan_grid(g));
  int most = 1;
  for (int q = 0; q < g->nsteps; q++) {
    const int nb = (int)((items_of(g->host, g->steps[q]) + kThreads - 1) / kThreads);
    most = nb > most ? nb : most;
  }
  const int cap_launch = 4 * (be->sm_count > 0 ? be->sm_count : 1) * (2048 / kThreads);
  g->part_cap = most < cap_launch ? most : cap_launch;
  if (g->blocks > g->part_cap) g->part_cap = g->blocks;
  COOP_CHECK(dalloc(g, (void **)&g->host.part, (size_t)g->part_cap * sizeof(double)));
  COOP_CHECK(dalloc(g, (void **)&g->host.sum, sizeof(double)));
  COOP_CHECK(dalloc(g, (void **)&g->dev, sizeof(Dev)));
  COOP_CUDA(cudaMemcpy(g->dev, &g->host, sizeof(Dev), cudaMemcpyHostToDevice));
  COOP_CHECK(dalloc(g, (void **)&g->dsteps, (size_t)g->nsteps * sizeof(Step)));
  COOP_CUDA(cudaMemcpy(g->dsteps, g->steps, (size_t)g->nsteps * sizeof(Step), cudaMemcpyHostToDevice));
  COOP_CHECK(dalloc(g, (void **)&g->dstate, sizeof(GridState)));
  return 0;
}

extern "C" void coop_mg_gpu_destroy(coop_mg_gpu *g) {
  if (!g) return;
  if (g->graph) cudaGraphExecDestroy(g->graph);
  for (int i = 0; i < g->nalloc; i++) cudaFree(g->allocs[i]);
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
  step_kernel<R><<<nb, kThreads, 0, g->stream>>>(g->dev, s, (const R *)vin, (R *)vout);
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
