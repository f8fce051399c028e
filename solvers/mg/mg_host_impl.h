/* Body of the host level operations for one element type; included by
 * solvers/mg/mg_host.c with REAL (the type) and SFX (the name suffix)
 * defined, after mg_point_impl.h (each point's work). A u at a point is
 * sum_a (wl + wr) u - wl u_lower - wr u_upper, in the same order everywhere. */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

/* One colour (0 red, 1 black: the parity of the global i + j + k, so the
 * sweep is the same whatever the decomposition) of a Gauss-Seidel sweep. */
static void CAT(rbgs_colour_, SFX)(const coop_mg_level *L, int ndim, int colour) {
  const int64_t *n = L->grid.n;
  for (int64_t k = 0; k < n[2]; k++)
    for (int64_t j = 0; j < n[1]; j++)
      for (int64_t i = (colour + j + k + L->off[0] + L->off[1] + L->off[2]) & 1; i < n[0]; i += 2)
        CAT(gs_point_, SFX)(L, ndim, i, j, k);
}

/* One weighted Jacobi sweep: r = omega (f - A u) / diag, then u += r. */
static void CAT(jacobi_sweep_, SFX)(const coop_mg_level *L, int ndim, REAL omega) {
  REAL *u = L->u;
  const REAL *r = L->r;
  const int64_t *n = L->grid.n;
  for (int64_t k = 0; k < n[2]; k++)
    for (int64_t j = 0; j < n[1]; j++)
      for (int64_t i = 0; i < n[0]; i++) CAT(jacobi_point_, SFX)(L, ndim, omega, i, j, k);
  for (int64_t k = 0; k < n[2]; k++)
    for (int64_t j = 0; j < n[1]; j++) {
      const int64_t row = coop_grid_index(&L->grid, 0, j, k);
      for (int64_t i = 0; i < n[0]; i++) u[row + i] += r[row + i];
    }
}

static double CAT(residual_, SFX)(const coop_mg_level *L, int ndim) {
  const int64_t *n = L->grid.n;
  double sum = 0.0;
  for (int64_t k = 0; k < n[2]; k++)
    for (int64_t j = 0; j < n[1]; j++)
      for (int64_t i = 0; i < n[0]; i++) {
        const REAL res = CAT(residual_point_, SFX)(L, ndim, i, j, k);
        sum += (double)res * (double)res;
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

/* f(C) = R r(F) at C's points (C a level or a box of one). */
static void CAT(restrict_, SFX)(const coop_mg_level *F, const coop_mg_level *C, REAL *fc) {
  const int64_t *n = C->grid.n;
  for (int64_t K = 0; K < n[2]; K++)
    for (int64_t J = 0; J < n[1]; J++)
      for (int64_t I = 0; I < n[0]; I++) CAT(restrict_point_, SFX)(F, C, fc, I, J, K);
}

/* u(F) += P u(C) at F's points. */
static void CAT(prolong_, SFX)(const coop_mg_level *F, const coop_mg_level *C, const REAL *uc) {
  const int64_t *n = F->grid.n;
  for (int64_t k = 0; k < n[2]; k++)
    for (int64_t j = 0; j < n[1]; j++)
      for (int64_t i = 0; i < n[0]; i++) CAT(prolong_point_, SFX)(F, C, uc, i, j, k);
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
