/* The hierarchy: which axes coarsen, each level's intervals, operator
 * coefficients and transfer weights, how the levels sit on the ranks, and
 * the coarsest level's exact solve. */
#include "solvers/mg/mg_level.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/error.h"

static void *zalloc(size_t count, size_t size) { return calloc(count ? count : 1, size); }

int64_t coop_mg_level_points(const coop_mg_hier *h, int l) {
  const int64_t *N = h->lev[l].N;
  return N[0] * N[1] * N[2];
}

/* Control volumes and coefficients of level L from its intervals (every axis;
 * an unused one has one point, volume 1 and no coupling). */
static int level_coeffs(coop_mg_level *L, int ndim) {
  for (int a = 0; a < 3; a++) {
    const int64_t n = L->N[a];
    if (!(L->vol[a] = zalloc((size_t)n, sizeof(double))) || !(L->wl[a] = zalloc((size_t)n, sizeof(double))) ||
        !(L->wr[a] = zalloc((size_t)n, sizeof(double))))
      return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
    for (int64_t i = 0; i < n; i++) {
      if (a >= ndim) {
        L->vol[a][i] = 1.0;
        continue;
      }
      const double gl = L->gap[a][i], gr = L->gap[a][i + 1];
      L->vol[a][i] = 0.5 * (gl + gr);
      L->wl[a][i] = 1.0 / (L->vol[a][i] * gl);
      L->wr[a][i] = 1.0 / (L->vol[a][i] * gr);
    }
  }
  return 0;
}

/* Mean spacing of axis a. */
static double spacing(const coop_mg_level *L, int a) {
  double s = 0.0;
  for (int64_t i = 0; i <= L->N[a]; i++) s += L->gap[a][i];
  return s / (double)(L->N[a] + 1);
}

/* The axes to coarsen below L: those with 2 points or more whose spacing is
 * within 1.5 of the finest such axis, so spacings stay alike level after
 * level (a point smoother loses its grip on strongly anisotropic levels).
 * Returns how many. */
static int plan_axes(const coop_mg_level *L, int ndim, int coarsen[3]) {
  double hmin = INFINITY;
  int count = 0;
  for (int a = 0; a < ndim; a++)
    if (L->N[a] >= 2 && spacing(L, a) < hmin) hmin = spacing(L, a);
  for (int a = 0; a < 3; a++) {
    coarsen[a] = a < ndim && L->N[a] >= 2 && spacing(L, a) <= 1.5 * hmin;
    count += coarsen[a];
  }
  return count;
}

/* Intervals of the coarse axis: points 1, 3, 5, ... of the fine one stay, so
 * coarse interval I joins fine intervals 2I and 2I + 1; the last one takes
 * what is left up to the boundary (one fine interval where n is even). */
static int coarse_gaps(const coop_mg_level *F, int a, int coarsen, coop_mg_level *C) {
  const int64_t n = F->N[a], nc = coarsen ? n / 2 : n;
  if (!(C->gap[a] = zalloc((size_t)nc + 1, sizeof(double)))) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (!coarsen) {
    memcpy(C->gap[a], F->gap[a], (size_t)(n + 1) * sizeof(double));
    return 0;
  }
  for (int64_t I = 0; I < nc; I++) C->gap[a][I] = F->gap[a][2 * I] + F->gap[a][2 * I + 1];
  double rest = 0.0;
  for (int64_t k = 2 * nc; k <= n; k++) rest += F->gap[a][k];
  C->gap[a][nc] = rest;
  return 0;
}

/* The fine points of axis a that restrict into each coarse point, ascending,
 * with their weights: those of 2I .. 2I + 2 (I where a is not coarsened)
 * that name I as a parent with a weight. */
static int restrict_kids(coop_mg_level *F, int a, const coop_mg_level *C) {
  const int64_t n = F->N[a], nc = C->N[a];
  if (!(F->nkid[a] = zalloc((size_t)nc, sizeof(int))) || !(F->kid[a] = zalloc(3 * (size_t)nc, sizeof(int64_t))) ||
      !(F->kq[a] = zalloc(3 * (size_t)nc, sizeof(double))))
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  for (int64_t I = 0; I < nc; I++) {
    const int64_t lo = F->coarsened[a] ? 2 * I : I, hi = F->coarsened[a] ? 2 * I + 2 : I;
    for (int64_t i = lo; i <= hi && i < n; i++)
      for (int s = 0; s < 2; s++)
        if (F->par[a][s][i] == I && F->q[a][s][i] != 0.0) {
          F->kid[a][3 * I + F->nkid[a][I]] = i;
          F->kq[a][3 * I + F->nkid[a][I]++] = F->q[a][s][i];
        }
  }
  return 0;
}

/* Parents and weights of fine axis a toward the coarse level C: an odd fine
 * point is coarse point (i - 1) / 2; an even one lies between coarse points
 * i / 2 - 1 and i / 2 and takes them by distance (a missing one is the
 * boundary: weight 0, index clamped). */
static int transfer_weights(coop_mg_level *F, int a, const coop_mg_level *C) {
  const int64_t n = F->N[a], nc = C->N[a];
  for (int s = 0; s < 2; s++)
    if (!(F->par[a][s] = zalloc((size_t)n, sizeof(int64_t))) || !(F->p[a][s] = zalloc((size_t)n, sizeof(double))) ||
        !(F->q[a][s] = zalloc((size_t)n, sizeof(double))))
      return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  for (int64_t i = 0; i < n; i++) {
    int64_t c[2] = {i, i};
    double w[2] = {1.0, 0.0};
    if (F->coarsened[a] && i % 2 == 1) {
      c[0] = c[1] = (i - 1) / 2;
    } else if (F->coarsened[a]) {
      const double gl = F->gap[a][i], gr = F->gap[a][i + 1];
      c[0] = i / 2 - 1, c[1] = i / 2;
      w[0] = gr / (gl + gr), w[1] = gl / (gl + gr);
    }
    for (int s = 0; s < 2; s++) {
      if (c[s] < 0 || c[s] >= nc) c[s] = 0, w[s] = 0.0;
      F->par[a][s][i] = c[s];
      F->p[a][s][i] = w[s];
      F->q[a][s][i] = w[s] * F->vol[a][i] / C->vol[a][c[s]];
    }
  }
  return restrict_kids(F, a, C);
}

static int alloc_arrays(coop_mg_level *L, int want_u, int want_f) {
  const size_t bytes = coop_grid_points(&L->grid) * coop_prec_size(L->grid.prec);
  if ((want_u && !(L->u = zalloc(1, bytes))) || (want_f && !(L->f = zalloc(1, bytes))) || !(L->r = zalloc(1, bytes)))
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory (%zu bytes a level array)", bytes);
  L->own_u = want_u;
  L->own_f = want_f;
  return 0;
}
/* Row m of the band: entries (m, m - d) for d = 0 .. bw at chol[m (bw + 1) + d]. */
#define BAND(h, m, d) (h)->chol[(size_t)(m) * (size_t)((h)->bw + 1) + (size_t)(d)]

/* The coarsest level's symmetric form S = V A (V the product of the control
 * volumes), in a band with the longest axis slowest, factored S = L L^T. */
static int coarse_factor(coop_mg_hier *h) {
  const coop_mg_level *L = &h->lev[h->nlev - 1];
  const int64_t *n = L->N;
  int order[3] = {0, 1, 2};
  for (int x = 0; x < 3; x++) /* by length, shortest first */
    for (int y = x + 1; y < 3; y++)
      if (n[order[y]] < n[order[x]]) {
        const int t = order[x];
        order[x] = order[y], order[y] = t;
      }
  int64_t stride = 1;
  h->bw = 0;
  for (int x = 0; x < 3; x++) {
    h->cstride[order[x]] = stride;
    if (n[order[x]] > 1) h->bw = stride;
    stride *= n[order[x]];
  }
  h->cn = stride;
  if (!(h->chol = zalloc((size_t)h->cn * (size_t)(h->bw + 1), sizeof(double))) ||
      !(h->cwork = zalloc((size_t)h->cn, sizeof(double))))
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory (coarsest level's factor)");
  int64_t l[3];
  for (l[2] = 0; l[2] < n[2]; l[2]++)
    for (l[1] = 0; l[1] < n[1]; l[1]++)
      for (l[0] = 0; l[0] < n[0]; l[0]++) {
        const int64_t m = l[0] * h->cstride[0] + l[1] * h->cstride[1] + l[2] * h->cstride[2];
        double diag = 0.0;
        for (int a = 0; a < h->ndim; a++) {
          double other = 1.0; /* the volume across the face */
          for (int b = 0; b < 3; b++)
            if (b != a) other *= L->vol[b][l[b]];
          diag += other * (1.0 / L->gap[a][l[a]] + 1.0 / L->gap[a][l[a] + 1]);
          if (l[a] > 0) BAND(h, m, h->cstride[a]) = -other / L->gap[a][l[a]];
        }
        BAND(h, m, 0) = diag + L->shift * L->vol[0][l[0]] * L->vol[1][l[1]] * L->vol[2][l[2]];
      }
  for (int64_t m = 0; m < h->cn; m++)
    for (int64_t d = m < h->bw ? m : h->bw; d >= 0; d--) {
      const int64_t c = m - d;
      double s = BAND(h, m, d);
      for (int64_t k = m - h->bw > 0 ? m - h->bw : 0; k < c; k++) s -= BAND(h, m, m - k) * BAND(h, c, c - k);
      if (d > 0) {
        BAND(h, m, d) = s / BAND(h, c, 0);
      } else {
        if (!(s > 0.0)) return COOP_ERROR(COOP_ERR_RUNTIME, "multigrid: coarsest level not positive definite");
        BAND(h, m, 0) = sqrt(s);
      }
    }
  return 0;
}

void coop_mg_coarse_band_solve(const coop_mg_hier *h, double *b) {
  for (int64_t m = 0; m < h->cn; m++) { /* L y = b */
    double s = b[m];
    for (int64_t k = m - h->bw > 0 ? m - h->bw : 0; k < m; k++) s -= BAND(h, m, m - k) * b[k];
    b[m] = s / BAND(h, m, 0);
  }
  for (int64_t m = h->cn - 1; m >= 0; m--) { /* L^T x = y */
    double s = b[m];
    const int64_t top = m + h->bw < h->cn - 1 ? m + h->bw : h->cn - 1;
    for (int64_t k = m + 1; k <= top; k++) s -= BAND(h, k, k - m) * b[k];
    b[m] = s / BAND(h, m, 0);
  }
}

/* Level 0 from the problem's stencil: its own coefficients exactly, intervals
 * h = 1 / sqrt(w) for the transfers. */
static int fine_level(coop_mg_hier *h, const coop_stencil *s, const coop_decomp *d, void *u0, void *f0) {
  coop_mg_level *L = &h->lev[0];
  L->grid = s->grid;
  for (int a = 0; a < 3; a++) {
    L->N[a] = d ? d->global_n[a] : s->grid.n[a];
    L->off[a] = d ? d->offset[a] : 0;
    const int64_t n = L->N[a];
    if (!(L->gap[a] = zalloc((size_t)n + 1, sizeof(double)))) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
    for (int64_t i = 0; i <= n; i++) L->gap[a][i] = a < h->ndim ? 1.0 / sqrt(s->w[a]) : 1.0;
  }
  COOP_CHECK(level_coeffs(L, h->ndim));
  for (int a = 0; a < h->ndim; a++)
    for (int64_t i = 0; i < L->N[a]; i++) L->wl[a][i] = L->wr[a][i] = s->w[a];
  COOP_CHECK(alloc_arrays(L, u0 == NULL, f0 == NULL));
  if (u0) L->u = u0;
  if (f0) L->f = f0;
  return 0;
}

/* Global box [lo, hi) along axis a, at level l, of the rank at coord c. */
static void axis_box(const coop_mg_hier *h, int a, int c, int l, int64_t *lo, int64_t *hi) {
  int64_t cnt;
  coop_decomp_split(h->lev[0].N[a], h->dims[a], c, &cnt, lo);
  *hi = *lo + cnt;
  for (int m = 0; m < l; m++)
    if (h->lev[m].coarsened[a]) *lo /= 2, *hi /= 2; /* the points 2I + 1 inside [lo, hi) */
}

/* Level l (> 0) stays split: every rank's box has COOP_MG_SPLIT_MIN points
 * along each split axis and the level COOP_MG_SPLIT_POINTS in all. Decided
 * from the decomposition alone, so every rank decides alike. */
static int level_splits(const coop_mg_hier *h, int l) {
  if (coop_mg_level_points(h, l) < COOP_MG_SPLIT_POINTS) return 0;
  for (int a = 0; a < h->ndim; a++)
    for (int c = 0; h->dims[a] > 1 && c < h->dims[a]; c++) {
      int64_t lo, hi;
      axis_box(h, a, c, l, &lo, &hi);
      if (hi - lo < COOP_MG_SPLIT_MIN) return 0;
    }
  return 1;
}

/* A packed box (no ghosts, no padding) of cnt points at global lo. */
static int box_view(coop_mg_level *B, const coop_mg_hier *h, const int64_t lo[3], const int64_t cnt[3], void **arr) {
  memset(&B->grid, 0, sizeof B->grid);
  B->grid.ndim = h->ndim;
  B->grid.prec = h->prec;
  for (int a = 0; a < 3; a++) {
    B->off[a] = lo[a];
    B->N[a] = h->lev[h->gather].N[a];
    B->grid.n[a] = B->grid.ext[a] = cnt[a];
  }
  if (!(*arr = zalloc(coop_grid_owned(&B->grid), coop_prec_size(h->prec))))
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  return 0;
}

/* The boxes of rank coords c across the gather: its coarse points (f) and
 * the coarse parents of its fine points (u), global [lo, lo + cnt). */
static void bridge_boxes(const coop_mg_hier *h, const int c[3], int64_t flo[3], int64_t fcnt[3], int64_t ulo[3],
                         int64_t ucnt[3]) {
  const coop_mg_level *F = &h->lev[h->gather - 1];
  for (int a = 0; a < 3; a++) {
    int64_t lo, hi, pmin = INT64_MAX, pmax = -1;
    axis_box(h, a, c[a], h->gather, &flo[a], &hi);
    fcnt[a] = hi - flo[a];
    axis_box(h, a, c[a], h->gather - 1, &lo, &hi);
    for (int64_t i = lo; i < hi; i++)
      for (int s = 0; s < 2; s++)
        if (F->p[a][s][i] != 0.0) {
          pmin = F->par[a][s][i] < pmin ? F->par[a][s][i] : pmin;
          pmax = F->par[a][s][i] > pmax ? F->par[a][s][i] : pmax;
        }
    ulo[a] = pmin;
    ucnt[a] = pmax - pmin + 1;
  }
}

static int to_int(int64_t v, int *out) {
  if (v > INT_MAX)
    return COOP_ERROR(COOP_ERR_RUNTIME, "multigrid: a gathered level of %lld points is more than one MPI message carries",
                      (long long)v);
  *out = (int)v;
  return 0;
}

/* The gather's plan: this rank's boxes, and on the root every rank's. */
static int bridge_create(coop_mg_hier *h) {
  coop_mg_bridge *b = &h->bridge;
  int64_t flo[3], fcnt[3], ulo[3], ucnt[3];
  bridge_boxes(h, h->coords, flo, fcnt, ulo, ucnt);
  COOP_CHECK(box_view(&b->fbox, h, flo, fcnt, &b->fbox.f));
  COOP_CHECK(box_view(&b->ubox, h, ulo, ucnt, &b->ubox.u));
  if (!h->root) return 0;
  const size_t P = (size_t)h->size;
  if (!(b->fcount = zalloc(P, sizeof(int))) || !(b->fdispl = zalloc(P, sizeof(int))) ||
      !(b->ucount = zalloc(P, sizeof(int))) || !(b->udispl = zalloc(P, sizeof(int))) ||
      !(b->freg = zalloc(P, sizeof(coop_region))) || !(b->ureg = zalloc(P, sizeof(coop_region))))
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  int64_t ftot = 0, utot = 0;
  for (int r = 0; r < h->size; r++) {
    int cc[3] = {0, 0, 0}, c[3] = {0, 0, 0};
    COOP_MPI(MPI_Cart_coords(h->comm, r, h->ndim, cc));
    for (int a = 0; a < h->ndim; a++) c[a] = cc[h->ndim - 1 - a]; /* Cartesian dim 0 is the slowest axis */
    bridge_boxes(h, c, flo, fcnt, ulo, ucnt);
    for (int a = 0; a < 3; a++) {
      b->freg[r].lo[a] = flo[a], b->freg[r].hi[a] = flo[a] + fcnt[a];
      b->ureg[r].lo[a] = ulo[a], b->ureg[r].hi[a] = ulo[a] + ucnt[a];
    }
    COOP_CHECK(to_int(ftot, &b->fdispl[r]));
    COOP_CHECK(to_int(utot, &b->udispl[r]));
    COOP_CHECK(to_int(coop_region_points(&b->freg[r]), &b->fcount[r]));
    COOP_CHECK(to_int(coop_region_points(&b->ureg[r]), &b->ucount[r]));
    ftot += b->fcount[r], utot += b->ucount[r];
  }
  COOP_CHECK(to_int(ftot, &(int){0}));
  COOP_CHECK(to_int(utot, &(int){0}));
  if (!(b->fall = zalloc((size_t)ftot, coop_prec_size(h->prec))) ||
      !(b->uall = zalloc((size_t)utot, coop_prec_size(h->prec))))
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory (the gathered level)");
  return 0;
}

/* Where the levels live: gather, each level's box and arrays, the halo plans
 * and the gather's plan. */
static int place_levels(coop_mg_hier *h, const coop_decomp *d, coop_backend *be) {
  h->gather = h->nlev;
  if (h->size > 1) {
    h->gather = h->nlev - 1; /* the exact solve needs its level whole */
    for (int l = 1; l < h->nlev - 1; l++)
      if (!level_splits(h, l)) {
        h->gather = l;
        break;
      }
  }
  for (int l = 1; l < h->nlev; l++) {
    coop_mg_level *L = &h->lev[l];
    int64_t n[3];
    for (int a = 0; a < 3; a++) {
      int64_t hi;
      if (l < h->gather)
        axis_box(h, a, h->coords[a], l, &L->off[a], &hi);
      else
        L->off[a] = 0, hi = L->N[a];
      n[a] = hi - L->off[a];
    }
    coop_grid_init(&L->grid, h->ndim, h->prec, n, 1);
    if (l < h->gather || h->root) COOP_CHECK(alloc_arrays(L, 1, 1));
  }
  if (h->size == 1) return 0;
  for (int l = 0; l < h->gather; l++) {
    COOP_CHECK(coop_halo_create(&h->lev[l].halo, be, &h->lev[l].grid, d, 0));
    h->lev[l].has_halo = 1;
  }
  return bridge_create(h);
}

/* The ranks of d (NULL: one) into h. */
static int rank_setup(coop_mg_hier *h, const coop_decomp *d) {
  h->comm = MPI_COMM_NULL;
  h->size = 1;
  h->root = 1;
  for (int a = 0; a < 3; a++) h->dims[a] = 1, h->coords[a] = 0;
  if (!d) return 0;
  int rank;
  h->comm = d->cart;
  COOP_MPI(MPI_Comm_size(d->cart, &h->size));
  COOP_MPI(MPI_Comm_rank(d->cart, &rank));
  h->root = rank == 0;
  for (int a = 0; a < 3; a++) h->dims[a] = d->dims[a], h->coords[a] = d->coords[a];
  return 0;
}

int coop_mg_hier_create(coop_mg_hier *h, const coop_stencil *s, const coop_decomp *d, coop_backend *be,
                        void *u0, void *f0) {
  memset(h, 0, sizeof *h);
  h->prec = s->grid.prec;
  h->ndim = s->grid.ndim;
  h->ops = &coop_mg_ops_host;
  h->nlev = 1;
  COOP_CHECK(rank_setup(h, d));
  COOP_CHECK(fine_level(h, s, d, u0, f0));
  int coarsen[3];
  if (!plan_axes(&h->lev[0], h->ndim, coarsen))
    return coop_error_input("multigrid: a grid of %lld x %lld x %lld interior points cannot be coarsened once "
                            "(an axis needs 2 points or more); use a larger grid (grid.nx, grid.ny, grid.nz) or "
                            "solver.name = cg with solver.pc = none",
                            (long long)h->lev[0].N[0], (long long)h->lev[0].N[1], (long long)h->lev[0].N[2]);
  do {
    coop_mg_level *F = &h->lev[h->nlev - 1], *C = &h->lev[h->nlev];
    for (int a = 0; a < 3; a++) {
      F->coarsened[a] = coarsen[a];
      C->N[a] = coarsen[a] ? F->N[a] / 2 : F->N[a];
      COOP_CHECK(coarse_gaps(F, a, coarsen[a], C));
    }
    h->nlev++;
    COOP_CHECK(level_coeffs(C, h->ndim));
    for (int a = 0; a < 3; a++) COOP_CHECK(transfer_weights(F, a, C));
  } while (coop_mg_level_points(h, h->nlev - 1) > COOP_MG_COARSE_MAX && h->nlev < COOP_MG_MAX_LEVELS &&
           plan_axes(&h->lev[h->nlev - 1], h->ndim, coarsen));
  COOP_CHECK(place_levels(h, d, be));
  return h->root ? coarse_factor(h) : 0;
}

int coop_mg_hier_set_shift(coop_mg_hier *h, double shift) {
  for (int l = 0; l < h->nlev; l++) h->lev[l].shift = shift;
  if (!h->root) return 0;
  free(h->chol);
  free(h->cwork);
  h->chol = h->cwork = NULL;
  return coarse_factor(h);
}

void coop_mg_hier_destroy(coop_mg_hier *h) {
  if (!h) return;
  for (int l = 0; l < COOP_MG_MAX_LEVELS; l++) {
    coop_mg_level *L = &h->lev[l];
    for (int a = 0; a < 3; a++) {
      free(L->gap[a]);
      free(L->vol[a]);
      free(L->wl[a]);
      free(L->wr[a]);
      free(L->nkid[a]);
      free(L->kid[a]);
      free(L->kq[a]);
      for (int s = 0; s < 2; s++) {
        free(L->par[a][s]);
        free(L->p[a][s]);
        free(L->q[a][s]);
      }
    }
    if (L->has_halo) coop_halo_destroy(&L->halo);
    if (L->own_u) free(L->u);
    if (L->own_f) free(L->f);
    free(L->r);
  }
  coop_mg_bridge *b = &h->bridge;
  void *const own[] = {b->fbox.f, b->ubox.u, b->fcount, b->fdispl, b->ucount, b->udispl,
                       b->freg,   b->ureg,   b->fall,   b->uall,   h->chol,   h->cwork};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) free(own[i]);
  memset(h, 0, sizeof *h);
}

static int cycle_at(const coop_mg_hier *h, int l, coop_mg_cycle_type type) {
  const coop_mg_ops *ops = h->ops;
  if (l == h->nlev - 1) return ops->coarse_solve(h);
  COOP_CHECK(ops->smooth(h, l, h->pre, 0));
  COOP_CHECK(ops->residual(h, l, NULL));
  COOP_CHECK(ops->restrict_residual(h, l));
  /* the gathered levels run on the root alone; the others wait in the
   * scatter of prolong_add */
  if (l + 1 < h->gather || h->root) {
    COOP_CHECK(cycle_at(h, l + 1, type));
    /* W: the coarse cycle twice; F: an F-cycle then a V-cycle below (an exact
     * coarsest solve needs no repeat) */
    if (type != COOP_MG_V && l + 1 < h->nlev - 1)
      COOP_CHECK(cycle_at(h, l + 1, type == COOP_MG_W ? COOP_MG_W : COOP_MG_V));
  }
  COOP_CHECK(ops->prolong_add(h, l));
  return ops->smooth(h, l, h->post, h->symmetric);
}

int coop_mg_cycle(const coop_mg_hier *h, int l) { return cycle_at(h, l, h->cycle); }
