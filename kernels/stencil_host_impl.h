/* Body of the host stencil for one element type, Jacobi and Krylov forms;
 * included by stencil_host.c with REAL (the type) and SFX (the name suffix)
 * defined, and face_map declared. */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

static double CAT(residual_, SFX)(const coop_stencil *s, const REAL *restrict u,
                                  const REAL *restrict f) {
  const REAL w0 = (REAL)s->w[0], w1 = (REAL)s->w[1], w2 = (REAL)s->w[2];
  const REAL diag = (REAL)(2.0 * (s->w[0] + s->w[1] + s->w[2]));
  const int64_t sy = s->grid.ext[0], sz = s->grid.ext[0] * s->grid.ext[1];
  double sum = 0.0;
  for (int64_t k = 0; k < s->grid.n[2]; k++)
    for (int64_t j = 0; j < s->grid.n[1]; j++) {
      const int64_t row = coop_grid_index(&s->grid, 0, j, k);
      for (int64_t i = 0; i < s->grid.n[0]; i++) {
        const int64_t p = row + i;
        REAL au = diag * u[p] - w0 * (u[p - 1] + u[p + 1]) - w1 * (u[p - sy] + u[p + sy]);
        if (s->grid.ndim == 3) au -= w2 * (u[p - sz] + u[p + sz]);
        const double res = (double)(f[p] - au);
        sum += res * res;
      }
    }
  return sum;
}

/* One relaxation step un = u + c (f - A u) on r (f NULL: zero); with norm,
 * sets *norm to the sum over r's owned points of (f - A u)^2. A u in the order of
 * the residual above and of kernels/stencil_relax.cuh. */
static void CAT(relax_, SFX)(const coop_stencil *s, const coop_region *r, REAL c,
                             const REAL *restrict u, REAL *restrict un, const REAL *restrict f,
                             double *norm) {
  const REAL w0 = (REAL)s->w[0], w1 = (REAL)s->w[1], w2 = (REAL)s->w[2];
  const REAL diag = (REAL)(2.0 * (s->w[0] + s->w[1] + s->w[2]));
  const int64_t sy = s->grid.ext[0], sz = s->grid.ext[0] * s->grid.ext[1];
  const int64_t *n = s->grid.n;
  double sum = 0.0;
  for (int64_t k = r->lo[2]; k < r->hi[2]; k++)
    for (int64_t j = r->lo[1]; j < r->hi[1]; j++) {
      const int64_t row = coop_grid_index(&s->grid, 0, j, k);
      const int owned_row = j >= 0 && j < n[1] && k >= 0 && k < n[2];
      for (int64_t i = r->lo[0]; i < r->hi[0]; i++) {
        const int64_t p = row + i;
        REAL au = diag * u[p] - w0 * (u[p - 1] + u[p + 1]) - w1 * (u[p - sy] + u[p + sy]);
        if (s->grid.ndim == 3) au -= w2 * (u[p - sz] + u[p + sz]);
        const REAL res = f ? f[p] - au : -au; /* as the kernels' relax_res2/3 */
        un[p] = u[p] + c * res;
        if (norm && owned_row && i >= 0 && i < n[0]) sum += (double)res * (double)res;
      }
    }
  if (norm) *norm = sum;
}

/* Region <-> contiguous buffer, x fastest. */
static void CAT(pack_, SFX)(const coop_grid *gr, const coop_region *r, const REAL *restrict u,
                            REAL *restrict buf) {
  const int64_t nx = r->hi[0] - r->lo[0];
  for (int64_t k = r->lo[2]; k < r->hi[2]; k++)
    for (int64_t j = r->lo[1]; j < r->hi[1]; j++, buf += nx) {
      const REAL *src = u + coop_grid_index(gr, r->lo[0], j, k);
      for (int64_t i = 0; i < nx; i++) buf[i] = src[i];
    }
}

static void CAT(unpack_, SFX)(const coop_grid *gr, const coop_region *r, REAL *restrict u,
                              const REAL *restrict buf) {
  const int64_t nx = r->hi[0] - r->lo[0];
  for (int64_t k = r->lo[2]; k < r->hi[2]; k++)
    for (int64_t j = r->lo[1]; j < r->hi[1]; j++, buf += nx) {
      REAL *dst = u + coop_grid_index(gr, r->lo[0], j, k);
      for (int64_t i = 0; i < nx; i++) dst[i] = buf[i];
    }
}

/* ---- Krylov form: vectors of the owned points, x fastest, zero outside the
 * box; the arithmetic in kernels/stencil_krylov.cu's order:
 * y = diag x - w0 (xl + xr) - w1 (xd + xu) [- w2 (xb + xf)] ---- */

/* One row of points (j, k): xd/xu the rows below and above along y (NULL
 * outside the box), xb/xf along z. */
static void CAT(apply_row_, SFX)(int64_t n0, REAL diag, REAL w0, REAL w1, REAL w2,
                                 const REAL *restrict xc, const REAL *restrict xd,
                                 const REAL *restrict xu, const REAL *restrict xb,
                                 const REAL *restrict xf, int three_d, REAL *restrict y) {
  for (int64_t i = 0; i < n0; i++) {
    const REAL xl = i > 0 ? xc[i - 1] : (REAL)0, xr = i + 1 < n0 ? xc[i + 1] : (REAL)0;
    const REAL d = xd ? xd[i] : (REAL)0, u = xu ? xu[i] : (REAL)0;
    REAL v = diag * xc[i] - w0 * (xl + xr) - w1 * (d + u);
    if (three_d) {
      const REAL b = xb ? xb[i] : (REAL)0, f = xf ? xf[i] : (REAL)0;
      v = v - w2 * (b + f);
    }
    y[i] = v;
  }
}

static void CAT(apply_, SFX)(const coop_stencil *s, const REAL *x, REAL *y) {
  const int64_t n0 = s->grid.n[0], n1 = s->grid.n[1], n2 = s->grid.n[2];
  const int64_t sy = n0, sz = n0 * n1;
  const REAL diag = (REAL)(2.0 * (s->w[0] + s->w[1] + s->w[2]));
  const REAL w0 = (REAL)s->w[0], w1 = (REAL)s->w[1], w2 = (REAL)s->w[2];
  const int three_d = s->grid.ndim == 3;
  for (int64_t k = 0; k < n2; k++)
    for (int64_t j = 0; j < n1; j++) {
      const int64_t p = j * sy + k * sz;
      CAT(apply_row_, SFX)
      (n0, diag, w0, w1, w2, x + p, j > 0 ? x + p - sy : NULL, j + 1 < n1 ? x + p + sy : NULL,
       k > 0 ? x + p - sz : NULL, k + 1 < n2 ? x + p + sz : NULL, three_d, y + p);
    }
}

static void CAT(pack_face_, SFX)(const face_map *f, int64_t off, const REAL *restrict x,
                                 REAL *restrict buf) {
  for (int64_t q = 0; q < f->m1; q++)
    for (int64_t p = 0; p < f->m0; p++) buf[p + f->m0 * q] = x[off + p * f->s0 + q * f->s1];
}

static void CAT(add_face_, SFX)(const face_map *f, int64_t off, REAL w, const REAL *restrict g,
                                REAL *restrict y) {
  for (int64_t q = 0; q < f->m1; q++)
    for (int64_t p = 0; p < f->m0; p++) {
      REAL *t = y + off + p * f->s0 + q * f->s1;
      *t = *t - w * g[p + f->m0 * q];
    }
}

#undef CAT
#undef CAT2
