#include "kernels/stencil.h"

void coop_stencil_init(coop_stencil *s, int ndim, coop_precision prec, const int64_t n[3],
                       int g, const double h[3]) {
  double diag = 0.0;
  coop_grid_init(&s->grid, ndim, prec, n, g);
  for (int a = 0; a < 3; a++) {
    s->w[a] = a < ndim ? 1.0 / (h[a] * h[a]) : 0.0;
    diag += 2.0 * s->w[a];
  }
  s->inv_diag = 1.0 / diag;
}

int64_t coop_stencil_face_points(const coop_stencil *s, int a) {
  int64_t p = 1;
  for (int b = 0; b < s->grid.ndim; b++)
    if (b != a) p *= s->grid.n[b];
  return p;
}
