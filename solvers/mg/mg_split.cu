/* Multigrid over several ranks, each on its GPU (solvers/mg/mg_cuda.h): the
 * split levels' operations as kernels over their points, each point's work
 * the host's own (mg_point_impl.h), ghosts through the levels' halos (the
 * backend's, device memory), one kernel an operation (launch mode). The
 * levels from the gather on are small and stay with the host code on the
 * root; across the gather the boxes of f and u are copied between the GPU
 * and the host's bridge. */
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "kernels/cuda_check.cuh"
#include "solvers/mg/mg_cuda.h"
#include "solvers/mg/mg_dev_arrays.cuh"

#define MG_IMPL "solvers/mg/mg_point_impl.h"
#include "solvers/mg/mg_both.h"

namespace {

constexpr int kThreads = 256;

/* the point functions by type */
template <class R>
struct Pt;
#define COOP_MG_PT(R, S)                                                                                            \
  template <>                                                                                                       \
  struct Pt<R> {                                                                                                    \
    static __device__ void gs(const coop_mg_level *L, int nd, int64_t i, int64_t j, int64_t k) {                    \
      gs_point_##S(L, nd, i, j, k);                                                                                 \
    }                                                                                                               \
    static __device__ void jac(const coop_mg_level *L, int nd, double w, int64_t i, int64_t j, int64_t k) {         \
      jacobi_point_##S(L, nd, (R)w, i, j, k);                                                                       \
    }                                                                                                               \
    static __device__ R res(const coop_mg_level *L, int nd, int64_t i, int64_t j, int64_t k) {                      \
      return residual_point_##S(L, nd, i, j, k);                                                                    \
    }                                                                                                               \
    static __device__ void restr(const coop_mg_level *F, const coop_mg_level *C, R *fc, int64_t i, int64_t j,       \
                                 int64_t k) {                                                                       \
      restrict_point_##S(F, C, fc, i, j, k);                                                                        \
    }                                                                                                               \
    static __device__ void prol(const coop_mg_level *F, const coop_mg_level *C, const R *uc, int64_t i, int64_t j,  \
                                int64_t k) {                                                                        \
      prolong_point_##S(F, C, uc, i, j, k);                                                                         \
    }                                                                                                               \
  };
COOP_MG_PT(double, d)
COOP_MG_PT(float, f)
#undef COOP_MG_PT

/* The points of a box, n0 x n1 x ..., x fastest. */
struct Box {
  int64_t n0, n1, points;
};

__device__ void point(const Box &b, int64_t q, int64_t &i, int64_t &j, int64_t &k) {
  const int64_t row = q / b.n0;
  i = q - row * b.n0;
  k = row / b.n1;
  j = row - k * b.n1;
}

enum Op { GS_RED, GS_BLACK, JAC, ADD, RES, RESTRICT, PROLONG, UNPACK, PACK, SHIFTED };

/* Operation op on every point of box b (of L; of C for RESTRICT); RES
 * leaves the block's sum of squares in part. */
template <class R>
__global__ void __launch_bounds__(kThreads)
    op_kernel(int op, Box b, const coop_mg_level *L, const coop_mg_level *C, int ndim, double omega, const R *vin,
              R *vout, double *part) {
  double sum = 0.0;
  for (int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; q < b.points; q += (int64_t)gridDim.x * blockDim.x) {
    int64_t i, j, k;
    point(b, q, i, j, k);
    switch (op) {
      case GS_RED:
      case GS_BLACK:
        if (((i + j + k + L->off[0] + L->off[1] + L->off[2]) & 1) == (op == GS_BLACK)) Pt<R>::gs(L, ndim, i, j, k);
        break;
      case JAC: Pt<R>::jac(L, ndim, omega, i, j, k); break;
      case ADD: {
        const int64_t p = COOP_MG_IDX(&L->grid, i, j, k);
        ((R *)L->u)[p] += ((const R *)L->r)[p];
        break;
      }
      case RES: {
        const double r = (double)Pt<R>::res(L, ndim, i, j, k);
        sum += r * r;
        break;
      }
      case RESTRICT: Pt<R>::restr(L, C, (R *)C->f, i, j, k); break;
      case PROLONG: Pt<R>::prol(L, C, (const R *)C->u, i, j, k); break;
      case UNPACK: { /* f = the packed vector, u = 0 (the preconditioner's start) */
        const int64_t p = COOP_MG_IDX(&L->grid, i, j, k);
        ((R *)L->f)[p] = vin[q];
        ((R *)L->u)[p] = 0;
        break;
      }
      case PACK: vout[q] = ((const R *)L->u)[COOP_MG_IDX(&L->grid, i, j, k)]; break;
      case SHIFTED: { /* f = shift u + source (mg_host_impl.h's shifted_rhs_) */
        const int64_t p = COOP_MG_IDX(&L->grid, i, j, k);
        ((R *)L->f)[p] = (R)L->shift * ((const R *)L->u)[p] + (vin ? vin[p] : (R)0);
        break;
      }
    }
  }
  if (op != RES) return;
  __shared__ double sh[kThreads];
  sh[threadIdx.x] = sum;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

/* the n partials' sum in a fixed order */
__global__ void sum_kernel(const double *part, int n, double *out) {
  if (threadIdx.x || blockIdx.x) return;
  double s = 0.0;
  for (int b = 0; b < n; b++) s += part[b];
  *out = s;
}

} // namespace

struct coop_mg_split {
  coop_backend *be;
  cudaStream_t stream;
  /* host copies of the device levels: 0 .. gather - 1, then the bridge's
   * fbox and ubox; dl: the same on the device */
  coop_mg_level hl[COOP_MG_MAX_LEVELS + 2];
  coop_mg_level *dl;
  int fbox, ubox; /* their indices */
  coop_mg_dev_arrays mem;
  double *part, *sum;
  int part_cap;
};

static coop_mg_split *split_of(const coop_mg_hier *h) { return (coop_mg_split *)h->ctx; }

static int dzero(coop_mg_split *g, void **p, size_t bytes) {
  COOP_CHECK(coop_mg_dalloc(&g->mem, p, bytes));
  COOP_CUDA(cudaMemset(*p, 0, bytes));
  return 0;
}

/* The device copy of split level l: its arrays on the device (level 0's u
 * and f where the solver lent them are device memory already), its per-axis
 * arrays too. */
static int level_copy(coop_mg_split *g, const coop_mg_hier *h, int l) {
  coop_mg_level *L = &g->hl[l];
  *L = h->lev[l];
  memset(&L->halo, 0, sizeof L->halo); /* the host's copy does the exchanges */
  const size_t bytes = coop_grid_points(&L->grid) * coop_prec_size(h->prec);
  if (L->own_u) COOP_CHECK(dzero(g, &L->u, bytes));
  if (L->own_f) COOP_CHECK(dzero(g, &L->f, bytes));
  COOP_CHECK(dzero(g, &L->r, bytes));
  const int last = l == h->nlev - 1;
  for (int a = 0; a < 3; a++) {
    const size_t n = (size_t)L->N[a];
    L->gap[a] = L->vol[a] = NULL; /* the coarsest level's, on the host */
    for (int s = 0; s < 2; s++) L->q[a][s] = NULL;
    COOP_CHECK(coop_mg_dcopy(&g->mem, L->wl[a], n, &L->wl[a]));
    COOP_CHECK(coop_mg_dcopy(&g->mem, L->wr[a], n, &L->wr[a]));
    if (last) continue;
    const size_t nc = (size_t)h->lev[l + 1].N[a];
    for (int s = 0; s < 2; s++) {
      COOP_CHECK(coop_mg_dcopy(&g->mem, L->par[a][s], n, &L->par[a][s]));
      COOP_CHECK(coop_mg_dcopy(&g->mem, L->p[a][s], n, &L->p[a][s]));
    }
    COOP_CHECK(coop_mg_dcopy(&g->mem, L->nkid[a], nc, &L->nkid[a]));
    COOP_CHECK(coop_mg_dcopy(&g->mem, L->kid[a], 3 * nc, &L->kid[a]));
    COOP_CHECK(coop_mg_dcopy(&g->mem, L->kq[a], 3 * nc, &L->kq[a]));
  }
  return 0;
}

/* A bridge box on the device: its shape and one packed array (u or f). */
static int box_copy(coop_mg_split *g, const coop_mg_hier *h, const coop_mg_level *B, int at, int want_f) {
  coop_mg_level *D = &g->hl[at];
  memset(D, 0, sizeof *D);
  D->grid = B->grid;
  memcpy(D->N, B->N, sizeof D->N);
  memcpy(D->off, B->off, sizeof D->off);
  return dzero(g, want_f ? &D->f : &D->u, coop_grid_owned(&B->grid) * coop_prec_size(h->prec));
}

static Box box_of(const coop_grid *gr) { return Box{gr->n[0], gr->n[1], (int64_t)coop_grid_owned(gr)}; }

template <class R>
static int start_t(coop_mg_split *g, const coop_mg_hier *h, int op, const coop_grid *over, int l, int c,
                   const void *vin, void *vout, int *blocks) {
  const Box b = box_of(over);
  int64_t nb = (b.points + kThreads - 1) / kThreads;
  if (nb > g->part_cap) nb = g->part_cap;
  if (nb < 1) nb = 1;
  *blocks = (int)nb;
  op_kernel<R><<<(unsigned)nb, kThreads, 0, g->stream>>>(op, b, g->dl + l, c >= 0 ? g->dl + c : NULL, h->ndim,
                                                         h->omega, (const R *)vin, (R *)vout, g->part);
  COOP_CUDA_LAUNCHED();
  return 0;
}

/* op over the points of `over` on device level l (c: the other level of a
 * transfer, -1 none) */
static int start(coop_mg_split *g, const coop_mg_hier *h, int op, const coop_grid *over, int l, int c,
                 const void *vin = NULL, void *vout = NULL, int *blocks = NULL) {
  int nb;
  return h->prec == COOP_FP32 ? start_t<float>(g, h, op, over, l, c, vin, vout, blocks ? blocks : &nb)
                              : start_t<double>(g, h, op, over, l, c, vin, vout, blocks ? blocks : &nb);
}

/* The ghosts of device array a of split level l from the neighbours. */
static int exchange(const coop_mg_hier *h, int l, void *a) {
  const coop_mg_level *L = &h->lev[l];
  return L->has_halo ? coop_halo_exchange((coop_halo *)&L->halo, a) : 0;
}

static int smooth_split(const coop_mg_hier *h, int l, int sweeps, int reverse) {
  if (l >= h->gather) return coop_mg_ops_host.smooth(h, l, sweeps, reverse);
  coop_mg_split *g = split_of(h);
  const coop_mg_level *L = &g->hl[l];
  for (int s = 0; s < sweeps; s++) {
    if (h->smoother == COOP_MG_JACOBI) {
      COOP_CHECK(exchange(h, l, L->u));
      COOP_CHECK(start(g, h, JAC, &L->grid, l, -1));
      COOP_CHECK(start(g, h, ADD, &L->grid, l, -1));
      continue;
    }
    for (int c = 0; c < 2; c++) {
      COOP_CHECK(exchange(h, l, L->u));
      COOP_CHECK(start(g, h, (reverse ? 1 - c : c) ? GS_BLACK : GS_RED, &L->grid, l, -1));
    }
  }
  return 0;
}

static int residual_split(const coop_mg_hier *h, int l, double *sumsq) {
  if (l >= h->gather) return coop_mg_ops_host.residual(h, l, sumsq);
  coop_mg_split *g = split_of(h);
  const coop_mg_level *L = &g->hl[l];
  int nb;
  COOP_CHECK(exchange(h, l, L->u));
  COOP_CHECK(start(g, h, RES, &L->grid, l, -1, NULL, NULL, &nb));
  if (!sumsq) return 0;
  sum_kernel<<<1, 32, 0, g->stream>>>(g->part, nb, g->sum);
  COOP_CUDA_LAUNCHED();
  double s;
  COOP_CUDA(cudaMemcpyAsync(&s, g->sum, sizeof s, cudaMemcpyDeviceToHost, g->stream));
  COOP_CUDA(cudaStreamSynchronize(g->stream));
  COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, h->comm));
  *sumsq = s;
  return 0;
}

static int restrict_split(const coop_mg_hier *h, int l) {
  if (l >= h->gather) return coop_mg_ops_host.restrict_residual(h, l);
  coop_mg_split *g = split_of(h);
  const size_t es = coop_prec_size(h->prec);
  COOP_CHECK(exchange(h, l, g->hl[l].r));
  if (l + 1 == h->gather) { /* into this rank's box, then the host's gather */
    const coop_mg_level *B = &g->hl[g->fbox];
    COOP_CHECK(start(g, h, RESTRICT, &B->grid, l, g->fbox));
    COOP_CUDA(cudaMemcpyAsync(h->bridge.fbox.f, B->f, coop_grid_owned(&B->grid) * es, cudaMemcpyDeviceToHost,
                              g->stream));
    COOP_CUDA(cudaStreamSynchronize(g->stream));
    return coop_mg_gather_f(h);
  }
  const coop_mg_level *C = &g->hl[l + 1];
  COOP_CHECK(start(g, h, RESTRICT, &C->grid, l, l + 1));
  COOP_CUDA(cudaMemsetAsync(C->u, 0, coop_grid_points(&C->grid) * es, g->stream));
  return 0;
}

static int prolong_split(const coop_mg_hier *h, int l) {
  if (l >= h->gather) return coop_mg_ops_host.prolong_add(h, l);
  coop_mg_split *g = split_of(h);
  const coop_mg_level *F = &g->hl[l];
  if (l + 1 == h->gather) { /* the host's scatter, then from this rank's box of parents */
    const coop_mg_level *B = &g->hl[g->ubox];
    COOP_CHECK(coop_mg_scatter_u(h));
    COOP_CUDA(cudaMemcpyAsync(B->u, h->bridge.ubox.u, coop_grid_owned(&B->grid) * coop_prec_size(h->prec),
                              cudaMemcpyHostToDevice, g->stream));
    return start(g, h, PROLONG, &F->grid, l, g->ubox);
  }
  COOP_CHECK(exchange(h, l + 1, g->hl[l + 1].u));
  return start(g, h, PROLONG, &F->grid, l, l + 1);
}

static int coarse_split(const coop_mg_hier *h) { return coop_mg_ops_host.coarse_solve(h); }

static const coop_mg_ops ops_split = {"cuda (split)", smooth_split, residual_split, restrict_split, prolong_split,
                                      coarse_split};

extern "C" int coop_mg_split_create(coop_mg_hier *h, coop_backend *be) {
  if (h->size < 2 || h->gather < 1 || h->gather >= h->nlev)
    return COOP_ERROR(COOP_ERR_RUNTIME, "multigrid over ranks on the GPU: levels split 1 to %d of %d", h->gather,
                      h->nlev);
  coop_mg_split *g = (coop_mg_split *)calloc(1, sizeof *g);
  if (!g) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  h->ctx = g;
  h->ops = &ops_split;
  g->be = be;
  g->stream = (cudaStream_t)be->stream;
  for (int l = 0; l < h->gather; l++) COOP_CHECK(level_copy(g, h, l));
  g->fbox = h->gather;
  g->ubox = h->gather + 1;
  COOP_CHECK(box_copy(g, h, &h->bridge.fbox, g->fbox, 1));
  COOP_CHECK(box_copy(g, h, &h->bridge.ubox, g->ubox, 0));
  COOP_CHECK(coop_mg_dalloc(&g->mem, (void **)&g->dl, (size_t)(h->gather + 2) * sizeof(coop_mg_level)));
  COOP_CUDA(cudaMemcpy(g->dl, g->hl, (size_t)(h->gather + 2) * sizeof(coop_mg_level), cudaMemcpyHostToDevice));
  g->part_cap = 4 * (be->sm_count > 0 ? be->sm_count : 1) * (2048 / kThreads);
  COOP_CHECK(coop_mg_dalloc(&g->mem, (void **)&g->part, (size_t)g->part_cap * sizeof(double)));
  COOP_CHECK(coop_mg_dalloc(&g->mem, (void **)&g->sum, sizeof(double)));
  COOP_CUDA(cudaDeviceSynchronize()); /* the memsets and copies above, before any kernel on the stream */
  return 0;
}

extern "C" void coop_mg_split_destroy(coop_mg_hier *h) {
  coop_mg_split *g = split_of(h);
  if (!g || h->ops != &ops_split) return;
  coop_mg_dfree(&g->mem);
  free(g);
  h->ctx = NULL;
  h->ops = &coop_mg_ops_host;
}

extern "C" int coop_mg_split_pc(const coop_mg_hier *h, const void *r, void *z) {
  coop_mg_split *g = split_of(h);
  const coop_grid *gr = &g->hl[0].grid;
  COOP_CHECK(start(g, h, UNPACK, gr, 0, -1, r, NULL));
  COOP_CHECK(coop_mg_cycle(h, 0));
  return start(g, h, PACK, gr, 0, -1, NULL, z);
}

extern "C" int coop_mg_split_shifted_rhs(const coop_mg_hier *h, const void *src) {
  coop_mg_split *g = split_of(h);
  return start(g, h, SHIFTED, &g->hl[0].grid, 0, -1, src, NULL);
}
