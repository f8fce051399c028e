/* Dispatch of the stencil operations to the backend that holds the data. */
#include "kernels/stencil.h"

#include "coop_build.h"
#include "core/error.h"
#if COOP_HAVE_CUDA
#include "kernels/stencil_cuda.h"
#endif

/* Scratch slot of the residual sum, above the vector reductions' area. */
#define RESIDUAL_SLOT (COOP_SCRATCH_DOUBLES - 1)

#if !COOP_HAVE_CUDA
static int no_cuda(void) {
  return COOP_ERROR(COOP_ERR_RUNTIME, "a device backend in a build without CUDA");
}
#endif

int coop_stencil_relax(coop_backend *be, const coop_stencil *s, const coop_region *r, double c,
                       const void *u, void *unew, const void *f, double *norm, long long target) {
  if (!be->device_memory) return coop_relax_host(s, r, c, u, unew, f, norm);
#if COOP_HAVE_CUDA
  return coop_relax_cuda(s, r, c, u, unew, f, norm, target, be->stream);
#else
  (void)target;
  return no_cuda();
#endif
}

int coop_stencil_residual(coop_backend *be, const coop_stencil *s, const void *u, const void *f,
                          double *sumsq) {
  if (!be->device_memory) return coop_residual_host(s, u, f, sumsq);
#if COOP_HAVE_CUDA
  return coop_residual_sum_cuda(s, u, f, be->scratch + RESIDUAL_SLOT,
                                be->scratch_host + RESIDUAL_SLOT, sumsq, be->stream);
#else
  return no_cuda();
#endif
}

int coop_stencil_apply(coop_backend *be, const coop_stencil *s, const void *x, void *y) {
  if (!be->device_memory) return coop_stencil_apply_host(s, x, y);
#if COOP_HAVE_CUDA
  return coop_stencil_apply_cuda(s, x, y, be->stream);
#else
  return no_cuda();
#endif
}

int coop_stencil_pack_faces(coop_backend *be, const coop_stencil *s, const void *x,
                            void *const face[3][2]) {
  if (!be->device_memory) return coop_stencil_pack_faces_host(s, x, face);
#if COOP_HAVE_CUDA
  return coop_stencil_pack_faces_cuda(s, x, face, be->stream);
#else
  return no_cuda();
#endif
}

int coop_stencil_add_faces(coop_backend *be, const coop_stencil *s, const void *const ghost[3][2],
                           void *y) {
  if (!be->device_memory) return coop_stencil_add_faces_host(s, ghost, y);
#if COOP_HAVE_CUDA
  return coop_stencil_add_faces_cuda(s, ghost, y, be->stream);
#else
  return no_cuda();
#endif
}
