/* Body of the host stencil for one element type; included by stencil_host.c
 * with REAL (the type) and SFX (the name suffix) defined. */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

static void CAT(sweep_, SFX)(const coop_stencil *s, const coop_region *r, const REAL *restrict u,
                             REAL *restrict un, const REAL *restrict f) {
  const REAL w0 = (REAL)s->w[0], w1 = (REAL)s->w[1], w2 = (REAL)s->w[2];
  const REAL d = (REAL)s->inv_diag;
  const int64_t sy = s->grid.ext[0], sz = s->grid.ext[0] * s->grid.ext[1];
  for (int64_t k = r->lo[2]; k < r->hi[2]; k++)
    for (int64_t j = r->lo[1]; j < r->hi[1]; j++) {
      const int64_t row = coop_grid_index(&s->grid, 0, j, k);
      for (int64_t i = r->lo[0]; i < r->hi[0]; i++) {
        const int64_t p = row + i;
        REAL acc = f[p] + w0 * (u[p - 1] + u[p + 1]) + w1 * (u[p - sy] + u[p + sy]);
        if (s->grid.ndim == 3) acc += w2 * (u[p - sz] + u[p + sz]);
        un[p] = acc * d;
      }
    }
}

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

#undef CAT
#undef CAT2
