#include "stencil.h"

void coop_stencil_init(coop_stencil *s, int ndim, coop_precision prec, const int64_t n[3],
                       int g, const double h[3]) {
  double diag = 0.0;
  s->ndim = ndim;
  s->prec = prec;
  for (int a = 0; a < 3; a++) {
    const int used = a < ndim;
    s->n[a] = used ? n[a] : 1;
    s->g[a] = used ? g : 0;
    s->ext[a] = s->n[a] + 2 * s->g[a];
    s->w[a] = used ? 1.0 / (h[a] * h[a]) : 0.0;
    diag += 2.0 * s->w[a];
  }
  s->inv_diag = 1.0 / diag;
}

size_t coop_stencil_points(const coop_stencil *s) {
  return (size_t)s->ext[0] * (size_t)s->ext[1] * (size_t)s->ext[2];
}

size_t coop_stencil_elem_size(const coop_stencil *s) { return s->prec == COOP_FP32 ? 4 : 8; }

int64_t coop_region_points(const coop_region *r) {
  int64_t p = 1;
  for (int a = 0; a < 3; a++) p *= r->hi[a] > r->lo[a] ? r->hi[a] - r->lo[a] : 0;
  return p;
}

coop_region coop_region_owned(const coop_stencil *s) {
  coop_region r = {{0, 0, 0}, {s->n[0], s->n[1], s->n[2]}};
  return r;
}
