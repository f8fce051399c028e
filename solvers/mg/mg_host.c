/* The level operations on the host: plain loops over arrays with ghost
 * layers, in the field's precision (bodies in solvers/mg/mg_host_impl.h over
 * each point's work in mg_point_impl.h).
 * On a split level each reads its neighbours' values through the level's
 * halo first; across the gather the transfers move f to the root and u
 * back. */
#include <string.h>

#include "core/comm.h"
#include "core/error.h"
#include "solvers/mg/mg_level.h"

#define MG_IMPL "solvers/mg/mg_point_impl.h"
#include "solvers/mg/mg_both.h"
#define MG_IMPL "solvers/mg/mg_host_impl.h"
#include "solvers/mg/mg_both.h"

/* The ghosts of a (u or r of level L) from the neighbours, where L is split. */
static int exchange(const coop_mg_level *L, void *a) {
  return L->has_halo ? coop_halo_exchange((coop_halo *)&L->halo, a) : 0;
}

static MPI_Datatype mpi_real(const coop_mg_hier *h) { return h->prec == COOP_FP32 ? MPI_FLOAT : MPI_DOUBLE; }

static int smooth_host(const coop_mg_hier *h, int l, int sweeps, int reverse) {
  const coop_mg_level *L = &h->lev[l];
  const int fp32 = h->prec == COOP_FP32;
  for (int s = 0; s < sweeps; s++) {
    if (h->smoother == COOP_MG_JACOBI) { /* symmetric as it is: reverse changes nothing */
      COOP_CHECK(exchange(L, L->u));
      if (fp32)
        jacobi_sweep_f(L, h->ndim, (float)h->omega);
      else
        jacobi_sweep_d(L, h->ndim, h->omega);
      continue;
    }
    for (int c = 0; c < 2; c++) {
      const int colour = reverse ? 1 - c : c;
      COOP_CHECK(exchange(L, L->u));
      if (fp32)
        rbgs_colour_f(L, h->ndim, colour);
      else
        rbgs_colour_d(L, h->ndim, colour);
    }
  }
  return 0;
}

static int residual_host(const coop_mg_hier *h, int l, double *sumsq) {
  const coop_mg_level *L = &h->lev[l];
  COOP_CHECK(exchange(L, L->u));
  double s = h->prec == COOP_FP32 ? residual_f(L, h->ndim) : residual_d(L, h->ndim);
  if (sumsq && L->has_halo) COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, h->comm));
  if (sumsq) *sumsq = s;
  return 0;
}

void coop_mg_shifted_rhs_host(const coop_mg_hier *h, const void *src) {
  if (h->prec == COOP_FP32)
    shifted_rhs_f(&h->lev[0], src);
  else
    shifted_rhs_d(&h->lev[0], src);
}

/* u = 0 on a coarse level, ghosts too (the correction's boundary values). */
static void zero_u(const coop_mg_level *C) {
  memset(C->u, 0, coop_grid_points(&C->grid) * coop_prec_size(C->grid.prec));
}

int coop_mg_gather_f(const coop_mg_hier *h) {
  const coop_mg_bridge *b = &h->bridge;
  const coop_mg_level *C = &h->lev[h->gather];
  const size_t es = coop_prec_size(h->prec);
  COOP_MPI(MPI_Gatherv(b->fbox.f, (int)coop_grid_owned(&b->fbox.grid), mpi_real(h), b->fall, b->fcount, b->fdispl,
                       mpi_real(h), 0, h->comm));
  if (!h->root) return 0;
  for (int r = 0; r < h->size; r++)
    COOP_CHECK(coop_unpack_host(&C->grid, &b->freg[r], C->f, (const char *)b->fall + (size_t)b->fdispl[r] * es));
  zero_u(C);
  return 0;
}

/* the restriction of level l into C's f (C: the next level or this rank's box of it) */
static void restrict_into(const coop_mg_hier *h, int l, const coop_mg_level *C, void *fc) {
  if (h->prec == COOP_FP32)
    restrict_f(&h->lev[l], C, fc);
  else
    restrict_d(&h->lev[l], C, fc);
}

/* Each rank restricts into its box of the gathered level, the root collects
 * the boxes into the whole level. */
static int restrict_gather(const coop_mg_hier *h, int l) {
  restrict_into(h, l, &h->bridge.fbox, h->bridge.fbox.f);
  return coop_mg_gather_f(h);
}

static int restrict_host(const coop_mg_hier *h, int l) {
  const coop_mg_level *F = &h->lev[l], *C = &h->lev[l + 1];
  COOP_CHECK(exchange(F, F->r));
  if (l + 1 == h->gather) return restrict_gather(h, l);
  restrict_into(h, l, C, C->f);
  zero_u(C);
  return 0;
}

static void prolong_from(const coop_mg_hier *h, int l, const coop_mg_level *C, const void *uc) {
  if (h->prec == COOP_FP32)
    prolong_f(&h->lev[l], C, uc);
  else
    prolong_d(&h->lev[l], C, uc);
}

/* the root sends each rank the coarse parents of its fine points */
int coop_mg_scatter_u(const coop_mg_hier *h) {
  const coop_mg_bridge *b = &h->bridge;
  const coop_mg_level *C = &h->lev[h->gather];
  const size_t es = coop_prec_size(h->prec);
  for (int r = 0; h->root && r < h->size; r++)
    COOP_CHECK(coop_pack_host(&C->grid, &b->ureg[r], C->u, (char *)b->uall + (size_t)b->udispl[r] * es));
  COOP_MPI(MPI_Scatterv(b->uall, b->ucount, b->udispl, mpi_real(h), b->ubox.u, (int)coop_grid_owned(&b->ubox.grid),
                        mpi_real(h), 0, h->comm));
  return 0;
}

static int prolong_host(const coop_mg_hier *h, int l) {
  const coop_mg_level *C = &h->lev[l + 1];
  if (l + 1 != h->gather) {
    COOP_CHECK(exchange(C, C->u));
    prolong_from(h, l, C, C->u);
    return 0;
  }
  COOP_CHECK(coop_mg_scatter_u(h));
  prolong_from(h, l, &h->bridge.ubox, h->bridge.ubox.u);
  return 0;
}

static int coarse_host(const coop_mg_hier *h) {
  if (h->prec == COOP_FP32)
    coarse_f(h);
  else
    coarse_d(h);
  return 0;
}

const coop_mg_ops coop_mg_ops_host = {"host", smooth_host, residual_host, restrict_host, prolong_host, coarse_host};
