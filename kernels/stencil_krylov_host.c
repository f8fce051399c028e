/* Krylov form of the stencil on the CPU (the reference): y = A x on the owned
 * points (x fastest, points outside the box zero), the faces a neighbour
 * needs, and the correction from the faces it sends. The arithmetic is in the
 * vector's precision, in the order kernels/stencil_krylov.cu uses:
 * y = diag x - w0 (xl + xr) - w1 (xd + xu) [- w2 (xb + xf)].
 *
 * The per-type bodies are at the end of this file, which includes itself once
 * per type (as stencil_host.c does with stencil_host_impl.h). */
#ifndef KRYLOV_BODY
#include "kernels/stencil.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

/* Face of axis a: the owned points with index a fixed, the other two axes in
 * order, lower axis fastest. Strides and lengths of those axes in the
 * vector, and the offset of index n_a - 1 along a. */
typedef struct {
  int64_t s0, s1, m0, m1, hi;
} face_map;

static face_map face_of(const coop_stencil *s, int a) {
  const int64_t *n = s->grid.n;
  const int64_t st[3] = {1, n[0], n[0] * n[1]};
  const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
  face_map f = {st[b], st[c], n[b], n[c], (n[a] - 1) * st[a]};
  return f;
}

#define KRYLOV_BODY
#define REAL double
#define SFX f64
#include "kernels/stencil_krylov_host.c"
#undef REAL
#undef SFX
#define REAL float
#define SFX f32
#include "kernels/stencil_krylov_host.c"
#undef REAL
#undef SFX
#undef KRYLOV_BODY

int coop_stencil_apply_host(const coop_stencil *s, const void *x, void *y) {
  if (s->grid.prec == COOP_FP32)
    apply_f32(s, x, y);
  else
    apply_f64(s, x, y);
  return 0;
}

int coop_stencil_pack_faces_host(const coop_stencil *s, const void *x, void *const face[3][2]) {
  for (int a = 0; a < s->grid.ndim; a++)
    for (int side = 0; side < 2; side++) {
      if (!face[a][side]) continue;
      const face_map f = face_of(s, a);
      if (s->grid.prec == COOP_FP32)
        pack_face_f32(&f, side ? f.hi : 0, x, face[a][side]);
      else
        pack_face_f64(&f, side ? f.hi : 0, x, face[a][side]);
    }
  return 0;
}

/* Faces in the order axis 0 low, axis 0 high, axis 1 low, ...: a corner
 * point gets its corrections in that order (the CUDA version's too). */
int coop_stencil_add_faces_host(const coop_stencil *s, const void *const ghost[3][2], void *y) {
  for (int a = 0; a < s->grid.ndim; a++)
    for (int side = 0; side < 2; side++) {
      if (!ghost[a][side]) continue;
      const face_map f = face_of(s, a);
      if (s->grid.prec == COOP_FP32)
        add_face_f32(&f, side ? f.hi : 0, (float)s->w[a], ghost[a][side], y);
      else
        add_face_f64(&f, side ? f.hi : 0, s->w[a], ghost[a][side], y);
    }
  return 0;
}

#else /* KRYLOV_BODY: one element type, REAL, with suffix SFX */

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

#endif /* KRYLOV_BODY */
