/* The Poisson stencil on the CPU, the reference: Jacobi form on stored fields
 * with ghosts, and Krylov form on vectors of the owned points (with the faces
 * a neighbour needs and the correction from the faces it sends). The
 * per-type bodies are in stencil_host_impl.h, included once per type. */
#include "kernels/stencil.h"

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

#define REAL double
#define SFX f64
#include "kernels/stencil_host_impl.h"
#undef REAL
#undef SFX
#define REAL float
#define SFX f32
#include "kernels/stencil_host_impl.h"
#undef REAL
#undef SFX

int coop_relax_host(const coop_stencil *s, const coop_region *r, double c, const void *u,
                    void *unew, const void *f, double *norm) {
  if (s->grid.prec == COOP_FP32)
    relax_f32(s, r, (float)c, u, unew, f, norm);
  else
    relax_f64(s, r, c, u, unew, f, norm);
  return 0;
}

int coop_residual_host(const coop_stencil *s, const void *u, const void *f, double *sumsq) {
  *sumsq = s->grid.prec == COOP_FP32 ? residual_f32(s, u, f) : residual_f64(s, u, f);
  return 0;
}

int coop_pack_host(const coop_grid *gr, const coop_region *r, const void *u, void *buf) {
  if (gr->prec == COOP_FP32)
    pack_f32(gr, r, u, buf);
  else
    pack_f64(gr, r, u, buf);
  return 0;
}

int coop_unpack_host(const coop_grid *gr, const coop_region *r, void *u, const void *buf) {
  if (gr->prec == COOP_FP32)
    unpack_f32(gr, r, u, buf);
  else
    unpack_f64(gr, r, u, buf);
  return 0;
}

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
