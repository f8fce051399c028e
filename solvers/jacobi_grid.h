/* Launcher of the persistent whole-solve Jacobi kernel (solvers/jacobi_grid.cu):
 * one cooperative launch runs sweeps, residual checks and the stop test. */
#ifndef COOP_JACOBI_GRID_H
#define COOP_JACOBI_GRID_H

#include "kernels/stencil.h"
#include "solvers/stop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device-side state of a whole solve. */
typedef struct {
  double acc[2]; /* residual sums, used by alternate checks */
  double r0, rnorm;
  long long iterations, hist_len;
  int reason;
} coop_jacobi_grid_state;

/* Resident blocks per SM of the whole-solve kernel for s with bx x by threads. */
int coop_jacobi_grid_occupancy(const coop_stencil *s, int bx, int by, int *per_sm);
/* The whole solve in one launch of `blocks` blocks: u and unew swap inside; on
 * return the newest values are in u when state->iterations is even, else in
 * unew. state and hist_* are device memory (hist_* of hist_cap entries). */
int coop_jacobi_grid_solve(const coop_stencil *s, void *u, void *unew, const void *f,
                           const coop_solve_ctl *ctl, coop_jacobi_grid_state *state,
                           long long *hist_iter, double *hist_res, long long hist_cap, int bx,
                           int by, int blocks, void *stream);

#ifdef __cplusplus
}
#endif
#endif
