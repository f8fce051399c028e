/* CUDA launchers of the stencil kernels (kernels/stencil.cu). Pointers are
 * device memory; stream is a cudaStream_t. Each launcher checks its launch. */
#ifndef COOP_STENCIL_CUDA_H
#define COOP_STENCIL_CUDA_H

#include "backend.h"
#include "stencil.h"

#ifdef __cplusplus
extern "C" {
#endif


/* Thread-block shape for a box whose rows hold nx points: x threads cover a
 * row segment, y threads neighbouring rows; 256 threads in all. */
void coop_cuda_block_shape(int64_t nx, int *bx, int *by);

int coop_sweep_cuda(const coop_stencil *s, const coop_region *r, const void *u, void *unew,
                    const void *f, int bx, int by, void *stream);
/* Adds this launch's sum of squared residuals into *acc (device double). */
int coop_residual_cuda(const coop_stencil *s, const void *u, const void *f, double *acc, int bx,
                       int by, void *stream);
int coop_pack_cuda(const coop_stencil *s, const coop_region *r, const void *u, void *buf,
                   void *stream);
int coop_unpack_cuda(const coop_stencil *s, const coop_region *r, void *u, const void *buf,
                     void *stream);

/* Persistent cooperative kernels (grid.sync()). Resident blocks per SM of the
 * kernel that would run s with bx x by threads; 0 when it cannot launch. */
int coop_grid_occupancy(const coop_stencil *s, int bx, int by, int whole_solve, int *per_sm);
/* k <= COOP_MAX_SWEEPS_PER_EXCHANGE sweeps in one launch of `blocks` blocks. */
int coop_sweeps_grid_cuda(const coop_stencil *s, const coop_region *regions, int k, void *u,
                          void *unew, const void *f, int bx, int by, int blocks, void *stream);

/* Device-side state of a whole solve. */
typedef struct {
  double acc[2]; /* residual sums, used by alternate checks */
  double r0, rnorm;
  long long iterations, hist_len;
  int reason;
} coop_grid_state;

/* The whole solve in one launch: u and unew swap inside; on return the newest
 * values are in u when state->iterations is even, else in unew. hist_* are
 * device arrays of hist_cap entries. */
int coop_solve_grid_cuda(const coop_stencil *s, void *u, void *unew, const void *f,
                         const coop_solve_ctl *ctl, coop_grid_state *state, long long *hist_iter,
                         double *hist_res, long long hist_cap, int bx, int by, int blocks,
                         void *stream);

#ifdef __cplusplus
}
#endif

#endif
