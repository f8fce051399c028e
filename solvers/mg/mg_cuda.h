/* The multigrid cycle on one GPU (one rank): the hierarchy of
 * solvers/mg/mg_level.h, its level arrays in device memory, and the cycle
 * recorded once as a list of steps (a smoothing colour, a residual, a
 * restriction, ...). Three ways to run the list: one kernel per step
 * (launch), the same kernels replayed as a CUDA graph (graph), and one
 * cooperative persistent kernel for the whole solve (grid), a grid barrier
 * after each step. Each step computes what the host's operation does
 * (mg_host_impl.h), in the same order, so the fields agree with the host's
 * to rounding. */
#ifndef COOP_MG_CUDA_H
#define COOP_MG_CUDA_H

#include <stdint.h>

#include "solvers/mg/mg_level.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct coop_mg_gpu coop_mg_gpu;

/* Device copies of h's levels (one rank: h->size == 1). Level 0's u and f
 * are u0 and f0 (device memory laid out as h->lev[0].grid; f0 NULL: a zero
 * right-hand side) or, with u0 NULL, arrays of its own (the preconditioner). */
int coop_mg_gpu_create(const coop_mg_hier *h, coop_backend *be, void *u0, const void *f0, coop_mg_gpu **out);
void coop_mg_gpu_destroy(coop_mg_gpu *g); /* accepts NULL */

/* ||f - A u||^2 on level 0 (r gets the residual). */
int coop_mg_gpu_residual(coop_mg_gpu *g, double *sumsq);
/* One cycle from u, then ||f - A u||^2; graph = 1 replays the cycle as a
 * CUDA graph (captured at the first call). */
int coop_mg_gpu_cycle(coop_mg_gpu *g, int graph, double *sumsq);
/* z = M^-1 r: one cycle from zero for f = r (r, z: device vectors of level
 * 0's owned points, x fastest, in its precision). */
int coop_mg_gpu_pc(coop_mg_gpu *g, const void *r, void *z);

/* The whole solve in one persistent kernel (or a segment of it). */
typedef struct {
  int64_t max_iter;
  double rtol, atol, dtol;
  int64_t stop_at; /* >= 0: stop after the check of this cycle (reason none) */
  int resume;      /* 1: go on from res (r0, iterations, checks) without a first check */
  int64_t hist_cap;
  int64_t *hist_iter; /* host arrays of hist_cap entries: the checks of this launch */
  double *hist_res;   /* are written at coop_history_slot(check, hist_cap) */
} coop_mg_grid_args;

typedef struct {
  double r0, rnorm;
  long long iterations, checks;
  int reason;
} coop_mg_grid_result;

/* res: in, the state to resume from (a->resume); out, where the launch ended. */
int coop_mg_gpu_solve(coop_mg_gpu *g, const coop_mg_grid_args *a, coop_mg_grid_result *res);
/* Blocks of the persistent kernel (0: grid mode cannot run here) and steps
 * a cycle (grid mode: a grid barrier each, and one for the check). */
void coop_mg_gpu_info(const coop_mg_gpu *g, int *blocks, int *steps);

#ifdef __cplusplus
}
#endif
#endif
