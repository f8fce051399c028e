/* The level operations at one point, for one element type: included with
 * REAL (the type) and SFX (the name suffix) defined by solvers/mg/mg_host.c,
 * whose loops (mg_host_impl.h) call them, and by solvers/mg/mg_split.cu,
 * whose kernels call them on a level's device copy (COOP_MG_PD: device code
 * too), so a split level does on the GPUs what it does on the host. Coefficients are doubles, used as REAL; the
 * per-axis arrays are indexed globally (L->off). */
#ifndef COOP_MG_PD
#ifdef __CUDACC__
#define COOP_MG_PD static inline __host__ __device__
#else
#define COOP_MG_PD static inline
#endif
/* coop_grid_index, callable on the device */
#define COOP_MG_IDX(gr, i, j, k) \
  (((i) + (gr)->g[0]) + (gr)->ext[0] * (((j) + (gr)->g[1]) + (gr)->ext[1] * ((k) + (gr)->g[2])))
#endif

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

/* sum of the neighbours' pull and the diagonal at point p = (i, j, k) */
COOP_MG_PD REAL CAT(pull_, SFX)(const coop_mg_level *L, int ndim, const REAL *u, int64_t p, int64_t i, int64_t j,
                                int64_t k, REAL *diag) {
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

/* Gauss-Seidel at (i, j, k): u from its neighbours */
COOP_MG_PD void CAT(gs_point_, SFX)(const coop_mg_level *L, int ndim, int64_t i, int64_t j, int64_t k) {
  REAL *u = (REAL *)L->u;
  const int64_t p = COOP_MG_IDX(&L->grid, i, j, k);
  REAL d;
  const REAL s = CAT(pull_, SFX)(L, ndim, u, p, i, j, k, &d);
  u[p] = (((const REAL *)L->f)[p] + s) / d;
}

/* weighted Jacobi's correction at (i, j, k): r = omega (f - A u) / diag */
COOP_MG_PD void CAT(jacobi_point_, SFX)(const coop_mg_level *L, int ndim, REAL omega, int64_t i, int64_t j,
                                        int64_t k) {
  const REAL *u = (const REAL *)L->u;
  const int64_t p = COOP_MG_IDX(&L->grid, i, j, k);
  REAL d;
  const REAL s = CAT(pull_, SFX)(L, ndim, u, p, i, j, k, &d);
  ((REAL *)L->r)[p] = omega * (((const REAL *)L->f)[p] - (d * u[p] - s)) / d;
}

/* r = f - A u at (i, j, k); returns r */
COOP_MG_PD REAL CAT(residual_point_, SFX)(const coop_mg_level *L, int ndim, int64_t i, int64_t j, int64_t k) {
  const REAL *u = (const REAL *)L->u;
  const int64_t p = COOP_MG_IDX(&L->grid, i, j, k);
  REAL d;
  const REAL s = CAT(pull_, SFX)(L, ndim, u, p, i, j, k, &d);
  const REAL res = ((const REAL *)L->f)[p] - (d * u[p] - s);
  ((REAL *)L->r)[p] = res;
  return res;
}

/* f(C) = R r(F) at C's local point (I, J, K) (C a level or a box of one): the
 * fine kids' residuals weighted by q, kids in ascending order (z, then y,
 * then x), the order in which a pass over the fine points scattering each
 * residual to its parents would add them; r's ghosts hold the neighbours'
 * residuals. */
COOP_MG_PD void CAT(restrict_point_, SFX)(const coop_mg_level *F, const coop_mg_level *C, REAL *fc, int64_t I,
                                          int64_t J, int64_t K) {
  const REAL *r = (const REAL *)F->r;
  const int64_t gK = K + C->off[2], gJ = J + C->off[1], gI = I + C->off[0];
  REAL sum = 0;
  for (int c = 0; c < F->nkid[2][gK]; c++) {
    const int64_t k = F->kid[2][3 * gK + c] - F->off[2];
    const double qz = F->kq[2][3 * gK + c];
    for (int b = 0; b < F->nkid[1][gJ]; b++) {
      const int64_t j = F->kid[1][3 * gJ + b] - F->off[1];
      const double qyz = F->kq[1][3 * gJ + b] * qz;
      const int64_t row_f = COOP_MG_IDX(&F->grid, 0, j, k) - F->off[0]; /* + global i */
      for (int a = 0; a < F->nkid[0][gI]; a++) {
        const double w = F->kq[0][3 * gI + a] * qyz;
        sum += (REAL)w * r[row_f + F->kid[0][3 * gI + a]];
      }
    }
  }
  fc[COOP_MG_IDX(&C->grid, I, J, K)] = sum;
}

/* u(F) += P u(C) at F's local point (i, j, k): the parents by the weights p
 * (C a level whose ghosts hold the neighbours' values, or a box of the
 * parents). */
COOP_MG_PD void CAT(prolong_point_, SFX)(const coop_mg_level *F, const coop_mg_level *C, const REAL *uc, int64_t i,
                                         int64_t j, int64_t k) {
  const int64_t *o = F->off, *co = C->off;
  const int64_t gk = k + o[2], gj = j + o[1], gi = i + o[0];
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
        e += (REAL)w *
             uc[COOP_MG_IDX(&C->grid, F->par[0][a][gi] - co[0], F->par[1][b][gj] - co[1], F->par[2][c][gk] - co[2])];
      }
    }
  }
  ((REAL *)F->u)[COOP_MG_IDX(&F->grid, i, j, k)] += e;
}

#undef CAT
#undef CAT2
