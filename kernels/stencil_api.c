/* Dispatch of the stencil operations to the backend that holds the data. */
#include "kernels/stencil.h"

#include "coop_build.h"
#include "core/error.h"
#include "kernels/dispatch.h"
#if COOP_HAVE_CUDA
#include "kernels/stencil_cuda.h"
#endif

/* Scratch slot of the residual sum, above the vector reductions' area. */
#define RESIDUAL_SLOT (COOP_SCRATCH_DOUBLES - 1)

int coop_stencil_relax(coop_backend *be, const coop_stencil *s, const coop_region *r, double c,
                       const void *u, void *unew, const void *f, double *norm, long long target) {
  if (!be->device_memory) return coop_relax_host(s, r, c, u, unew, f, norm);
#if COOP_HAVE_CUDA
  return coop_relax_cuda(s, r, c, u, unew, f, norm, target, be->stream);
#else
  (void)target;
  return coop_no_cuda();
#endif
}

int coop_stencil_residual(coop_backend *be, const coop_stencil *s, const void *u, const void *f,
                          double *sumsq) {
  return COOP_DISPATCH(be, coop_residual_host(s, u, f, sumsq),
                       coop_residual_sum_cuda(s, u, f, be->scratch + RESIDUAL_SLOT,
                                              be->scratch_host + RESIDUAL_SLOT, sumsq, be->stream));
}

int coop_stencil_apply(coop_backend *be, const coop_stencil *s, const void *x, void *y) {
  return COOP_DISPATCH(be, coop_stencil_apply_host(s, x, y), coop_stencil_apply_cuda(s, x, y, be->stream));
}

int coop_stencil_pack_faces(coop_backend *be, const coop_stencil *s, const void *x,
                            void *const face[3][2]) {
  return COOP_DISPATCH(be, coop_stencil_pack_faces_host(s, x, face),
                       coop_stencil_pack_faces_cuda(s, x, face, be->stream));
}

int coop_stencil_add_faces(coop_backend *be, const coop_stencil *s, const void *const ghost[3][2],
                           void *y) {
  return COOP_DISPATCH(be, coop_stencil_add_faces_host(s, ghost, y),
                       coop_stencil_add_faces_cuda(s, ghost, y, be->stream));
}
