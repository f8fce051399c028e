/* Body of the host level operations for one element type; included by
 * solvers/mg/mg_host.c with REAL (the type) and SFX (the name suffix)
 * defined. Coefficients are doubles, used as REAL. A u at a point is
 * sum_a (wl + wr) u - wl u_lower - wr u_upper, in the same order everywhere. */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

/* sum of the neighbours' pull and the diagonal at point p = (i, j, k) */
static inline REAL CAT(pull_, SFX)(const coop_mg_level *L, int ndim, const REAL *u, int64_t p, int64_t i,
                                   int64_t j, int64_t k, REAL *diag) {
  const int64_t sy = L->grid.ext[0], sz = L->grid.ext[0] * L->grid.ext[1];
  i += L->off[0], j += L->off[1], k += L->off[2]; /* the coefficients are indexed globally */
  const REAL lx = (REAL)L->wl[0][i], rx = (REAL)L->wr[0][i], ly = (REAL)L->wl[1][j], ry = (REAL)L->wr[1][j];
  REAL s = lx * u[p - 1] + rx * u[p + 1] + (ly * u[p - sy] + ry * u[p + sy]);
  REAL d = (lx + rx) + (ly + ry);
  if (ndim == 3) {
    const REAL lz = (REAL)L->wl[2][k], rz = (REAL)L->wr[2][k];
    s += lz * u[p - sz] + rz * u[p + sz];
    d += lz + rz;
  }
  *diag = d + (REAL)L->shift;
  return s;
}

/* One colour (0 red, 1 black: the parity of the global i + j + k, so the
 * sweep is the same whatever the decomposition) of a Gauss-Seidel sweep. */
static void CAT(rbgs_colour_, SFX)(const coop_mg_level *L, int ndim, int colour) {
  REAL *u = L->u;
  const REAL *f = L->f;
  const int64_t *n = L->grid.n;
  for (int64_t k = 0; k < n[2]; k++)
    for (int64_t j = 0; j < n[1]; j++) {
      const int64_t row = coop_grid_index(&L->grid, 0, j, k);
      for (int64_t i = (colour + j + k + L->off[0] + L->off[1] + L->off[2]) & 1; i < n[0]; i += 2) {
        const int64_t p = row + i;
        REAL d;
        const REAL s = CAT(pull_, SFX)(L, ndim, u, p, i, j, k, &d);
        u[p] = (f[p] + s) / d;
      }
    }
}

/* One weighted Jacobi sweep: r = omega (f - A u) / diag, then u += r. */
static void CAT(jacobi_sweep_, SFX)(const coop_mg_level *L, int ndim, REAL omega) {
  REAL *u = L->u, *r = L->r;
  const REAL *f = L->f;
  const int64_t *n = L->grid.n;
  for (int pass = 0; pass < 2; pass++)
    for (int64_t k = 0; k < n[2]; k++)
      for (int64_t j = 0; j < n[1]; j++) {
        const int64_t row = coop_grid_index(&L->grid, 0, j, k);
        for (int64_t i = 0; i < n[0]; i++) {
          const int64_t p = row + i;
          if (pass) {
            u[p] += r[p];
            continue;
          }
          REAL d;
          const REAL s = CAT(pull_, SFX)(L, ndim, u, p, i, j, k, &d);
          r[p] = omega * (f[p] - (d * u[p] - s)) / d;
        }
      }
}

static double CAT(residual_, SFX)(const coop_mg_level *L, int ndim) {
  REAL *r = L->r;
  const REAL *u = L->u, *f = L->f;
  const int64_t *n = L->grid.n;
  double sum = 0.0;
  for (int64_t k = 0; k < n[2]; k++)
    for (int64_t j = 0; j < n[1]; j++) {
      const int64_t row = coop_grid_index(&L->grid, 0, j, k);
      for (int64_t i = 0; i < n[0]; i++) {
        const int64_t p = row + i;
        REAL d;
        const REAL s = CAT(pull_, SFX)(L, ndim, u, p, i, j, k, &d);
        const REAL res = f[p] - (d * u[p] - s);
        r[p] = res;
        sum += (double)res * (double)res;
      }
    }
  return sum;
}

/* f = shift u + src at the level's points (src laid out as the level, NULL:
 * none): the right-hand side of the implicit heat step from the field u. */
static void CAT(shifted_rhs_, SFX)(const coop_mg_level *L, const REAL *src) {
  REAL *f = L->f;
  const REAL *u = L->u;
  const REAL shift = (REAL)L->shift;
  const int64_t *n = L->grid.n;
  for (int64_t k = 0; k < n[2]; k++)
    for (int64_t j = 0; j < n[1]; j++) {
      const int64_t row = coop_grid_index(&L->grid, 0, j, k);
      for (int64_t i = 0; i < n[0]; i++) {
        const int64_t p = row + i;
        f[p] = shift * u[p] + (src ? src[p] : (REAL)0);
      }
    }
}

/* f(C) = R r(F) at C's points (C a level or a box of one): each coarse
 * point sums its fine kids' residuals weighted by q, kids in ascending order
 * (z, then y, then x), the order in which a pass over the fine points
 * scattering each residual to its parents would add them; r's ghosts hold
 * the neighbours' residuals. */
static void CAT(restrict_, SFX)(const coop_mg_level *F, const coop_mg_level *C, REAL *fc) {
  const REAL *r = F->r;
  const int64_t *n = C->grid.n;
  for (int64_t K = 0; K < n[2]; K++)
    for (int64_t J = 0; J < n[1]; J++) {
      const int64_t row = coop_grid_index(&C->grid, 0, J, K), gK = K + C->off[2], gJ = J + C->off[1];
      for (int64_t I = 0; I < n[0]; I++) {
        const int64_t gI = I + C->off[0];
        REAL sum = 0;
        for (int c = 0; c < F->nkid[2][gK]; c++) {
          const int64_t k = F->kid[2][3 * gK + c] - F->off[2];
          const double qz = F->kq[2][3 * gK + c];
          for (int b = 0; b < F->nkid[1][gJ]; b++) {
            const int64_t j = F->kid[1][3 * gJ + b] - F->off[1];
            const double qyz = F->kq[1][3 * gJ + b] * qz;
            const int64_t row_f = coop_grid_index(&F->grid, 0, j, k) - F->off[0]; /* + global i */
            for (int a = 0; a < F->nkid[0][gI]; a++) {
              const double w = F->kq[0][3 * gI + a] * qyz;
              sum += (REAL)w * r[row_f + F->kid[0][3 * gI + a]];
            }
          }
        }
        fc[row + I] = sum;
      }
    }
}

/* u(F) += P u(C): each fine point takes its parents by the weights p (C a
 * level whose ghosts hold the neighbours' values, or a box of the parents). */
static void CAT(prolong_, SFX)(const coop_mg_level *F, const coop_mg_level *C, const REAL *uc) {
  REAL *u = F->u;
  const int64_t *n = F->grid.n, *o = F->off, *co = C->off;
  for (int64_t k = 0; k < n[2]; k++)
    for (int64_t j = 0; j < n[1]; j++) {
      const int64_t row = coop_grid_index(&F->grid, 0, j, k), gk = k + o[2], gj = j + o[1];
      for (int64_t i = 0; i < n[0]; i++) {
        const int64_t gi = i + o[0];
        REAL e = 0;
        for (int c = 0; c < 2; c++) {
          const double pz = F->p[2][c][gk];
          if (pz == 0.0) continue;
          for (int b = 0; b < 2; b++) {
            const double pyz = F->p[1][b][gj] * pz;
            if (pyz == 0.0) continue;
            for (int a = 0; a < 2; a++) {
              const double w = F->p[0][a][gi] * pyz;
              if (w == 0.0) continue;
              e += (REAL)w * uc[coop_grid_index(&C->grid, F->par[0][a][gi] - co[0], F->par[1][b][gj] - co[1],
                                                F->par[2][c][gk] - co[2])];
            }
          }
        }
        u[row + i] += e;
      }
    }
}

/* The coarsest level: b = V f in the band's numbering, solved, back into u. */
static void CAT(coarse_, SFX)(const coop_mg_hier *h) {
  const coop_mg_level *L = &h->lev[h->nlev - 1];
  REAL *u = L->u;
  const REAL *f = L->f;
  const int64_t *n = L->grid.n; /* the whole level, on the root */
  double *b = h->cwork;
  for (int pass = 0; pass < 2; pass++) {
    for (int64_t k = 0; k < n[2]; k++)
      for (int64_t j = 0; j < n[1]; j++)
        for (int64_t i = 0; i < n[0]; i++) {
          const int64_t p = coop_grid_index(&L->grid, i, j, k);
          const int64_t m = i * h->cstride[0] + j * h->cstride[1] + k * h->cstride[2];
          if (pass)
            u[p] = (REAL)b[m];
          else
            b[m] = L->vol[0][i] * L->vol[1][j] * L->vol[2][k] * (double)f[p];
        }
    if (!pass) coop_mg_coarse_band_solve(h, b);
  }
}

#undef CAT
#undef CAT2
