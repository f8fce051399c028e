/* CUDA side of the relaxation driver (solvers/relax.c): the persistent
 * cooperative kernels (solvers/relax_cuda.cu) and CUDA graphs of per-step
 * kernels. Pointers are device memory; stream is a cudaStream_t. */
#ifndef COOP_RELAX_CUDA_H
#define COOP_RELAX_CUDA_H

#include "kernels/stencil.h"
#include "solvers/stop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device-side results of a whole Jacobi solve in one launch. */
typedef struct {
  double acc[3]; /* residual sums of consecutive checks, used in turn */
  double r0, rnorm;
  long long iterations, steps, hist_len;
  int reason;
} coop_relax_solve_state;

/* Resident blocks per SM of the persistent kernels (steps: n steps; solve:
 * the whole Jacobi solve) for s, f present or not. */
int coop_relax_occupancy_cuda(const coop_stencil *s, int has_f, int solve, int *per_sm);

/* Blocks of the persistent kernels for s when the user did not set
 * run.blocks: `most` (all resident), or fewer on a small box, so that each
 * thread marches at least a few rows (never fewer than one per SM). */
int coop_relax_fit_blocks_cuda(const coop_stencil *s, int most, int sms);

/* Threads per block of every relaxation kernel. */
int coop_relax_threads_cuda(void);

/* n steps in one cooperative launch of `blocks` blocks, grid.sync() between
 * steps; step i runs over regions[min(i, k - 1)], k <= COOP_MAX_SWEEPS_PER_EXCHANGE
 * (the regions travel as a kernel parameter). u and unew swap inside. */
int coop_relax_steps_grid_cuda(const coop_stencil *s, const coop_region *regions, int k,
                               long long n, double c, void *u, void *unew, const void *f,
                               int blocks, void *stream);

/* The whole Jacobi solve (a rank without neighbours) in one launch: a norm
 * step at iterations 0, check_every, 2 check_every, ... and max_iter, the stop
 * test after each on the device; the newest field is in u when
 * state->iterations is even, else in unew. hist_* of hist_cap entries. */
int coop_relax_solve_grid_cuda(const coop_stencil *s, double c, void *u, void *unew,
                               const void *f, const coop_solve_ctl *ctl,
                               coop_relax_solve_state *state, long long *hist_iter,
                               double *hist_res, long long hist_cap, int blocks, void *stream);

/* CUDA graphs: capture the work queued on stream between begin and end into
 * *exec; launch replays it on stream. */
int coop_cuda_graph_begin(void *stream);
int coop_cuda_graph_end(void *stream, void **exec);
int coop_cuda_graph_launch(void *exec, void *stream);
void coop_cuda_graph_destroy(void *exec); /* accepts NULL */

#ifdef __cplusplus
}
#endif
#endif
