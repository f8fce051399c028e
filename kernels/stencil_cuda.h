/* CUDA launchers of the Jacobi-form stencil kernels (kernels/stencil.cu),
 * called by the dispatch in kernels/stencil.c and by backend_cuda.cu. Pointers
 * are device memory; stream is a cudaStream_t. Each launcher checks its launch. */
#ifndef COOP_STENCIL_CUDA_H
#define COOP_STENCIL_CUDA_H

#include "kernels/stencil.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Thread-block shape for a box whose rows hold nx points: x threads cover a
 * row segment, y threads neighbouring rows; 256 threads in all. */
void coop_cuda_block_shape(int64_t nx, int *bx, int *by);

/* One relaxation step (kernels/stencil_relax.cu); see coop_stencil_relax. */
int coop_relax_cuda(const coop_stencil *s, const coop_region *r, double c, const void *u,
                    void *unew, const void *f, double *norm, long long target, void *stream);
/* Adds this launch's sum of squared residuals into *acc (device double). */
int coop_residual_cuda(const coop_stencil *s, const void *u, const void *f, double *acc, int bx,
                       int by, void *stream);
/* The whole residual check: clears acc (device), sums into it, copies to
 * acc_host (pinned) and waits; *sumsq = the sum. */
int coop_residual_sum_cuda(const coop_stencil *s, const void *u, const void *f, double *acc,
                           double *acc_host, double *sumsq, void *stream);
int coop_pack_cuda(const coop_grid *gr, const coop_region *r, const void *u, void *buf,
                   void *stream);
int coop_unpack_cuda(const coop_grid *gr, const coop_region *r, void *u, const void *buf,
                     void *stream);

#ifdef __cplusplus
}
#endif

#endif
