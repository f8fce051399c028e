#include "kernels/stencil.h"

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

int coop_jacobi_sweep_host(const coop_stencil *s, const coop_region *r, const void *u, void *unew,
                           const void *f) {
  if (s->grid.prec == COOP_FP32)
    sweep_f32(s, r, u, unew, f);
  else
    sweep_f64(s, r, u, unew, f);
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
