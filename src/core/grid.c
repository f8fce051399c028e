#include "core/grid.h"

void coop_grid_init(coop_grid *gr, int ndim, coop_precision prec, const int64_t n[3], int g) {
  gr->ndim = ndim;
  gr->prec = prec;
  for (int a = 0; a < 3; a++) {
    const int used = a < ndim;
    gr->n[a] = used ? n[a] : 1;
    gr->g[a] = used ? g : 0;
    gr->ext[a] = gr->n[a] + 2 * gr->g[a];
  }
  /* rows padded to 128 bytes: the GPU steps load 16-byte chunks that must be
   * aligned, and a warp's row segment then starts on a cache line */
  const int64_t per_line = 128 / (int64_t)coop_prec_size(prec);
  gr->ext[0] = (gr->ext[0] + per_line - 1) / per_line * per_line;
}

size_t coop_grid_points(const coop_grid *gr) {
  return (size_t)gr->ext[0] * (size_t)gr->ext[1] * (size_t)gr->ext[2];
}

size_t coop_grid_owned(const coop_grid *gr) {
  return (size_t)gr->n[0] * (size_t)gr->n[1] * (size_t)gr->n[2];
}

size_t coop_prec_size(coop_precision p) { return p == COOP_FP32 ? 4 : 8; }

int64_t coop_region_points(const coop_region *r) {
  int64_t p = 1;
  for (int a = 0; a < 3; a++) p *= r->hi[a] > r->lo[a] ? r->hi[a] - r->lo[a] : 0;
  return p;
}

coop_region coop_region_owned(const coop_grid *gr) {
  coop_region r = {{0, 0, 0}, {gr->n[0], gr->n[1], gr->n[2]}};
  return r;
}
