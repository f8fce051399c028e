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

static int sweeps_host(const coop_stencil *s, const coop_region *regions, int k, void *u,
                       void *unew, const void *f) {
  for (int it = 0; it < k; it++) {
    COOP_CHECK(coop_jacobi_sweep_host(s, &regions[it], u, unew, f));
    void *t = u;
    u = unew;
    unew = t;
  }
  return 0;
}

int coop_stencil_sweeps(coop_backend *be, const coop_stencil *s, const coop_region *regions,
                        int k, int blocks, void *u, void *unew, const void *f) {
  if (!be->device_memory) return sweeps_host(s, regions, k, u, unew, f);
#if COOP_HAVE_CUDA
  int bx, by;
  coop_cuda_block_shape(s->grid.n[0], &bx, &by);
  /* one sweep needs no barrier: a plain launch is cheaper */
  if (blocks > 0 && k > 1)
    return coop_sweeps_grid_cuda(s, regions, k, u, unew, f, bx, by, blocks, be->stream);
  for (int it = 0; it < k; it++) {
    COOP_CHECK(coop_sweep_cuda(s, &regions[it], u, unew, f, bx, by, be->stream));
    void *t = u;
    u = unew;
    unew = t;
  }
  return 0;
#else
  (void)blocks;
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

int coop_stencil_sweeps_max_blocks(coop_backend *be, const coop_stencil *s, int *blocks) {
  *blocks = 0;
  if (!be->device_memory || !be->cooperative) return 0;
#if COOP_HAVE_CUDA
  int bx, by, per_sm = 0;
  coop_cuda_block_shape(s->grid.n[0], &bx, &by);
  COOP_CHECK(coop_sweeps_occupancy_cuda(s, bx, by, &per_sm));
  *blocks = per_sm * be->sm_count;
  return 0;
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
