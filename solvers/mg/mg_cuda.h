/* The multigrid cycle on one GPU (one rank): the hierarchy of
 * solvers/mg/mg_level.h, its level arrays in device memory, and the cycle
 * recorded once as a list of steps (a red-black colour, a Jacobi sweep
 * from u into r or back, a restriction of the residual it computes, ...). Three ways to run
 * the list: one kernel per step (launch), the same kernels replayed as a
 * CUDA graph (graph), and one cooperative persistent kernel for the whole
 * solve (grid), a grid barrier after each step. Each step computes what the
 * host's operations do (mg_host_impl.h), in the same order, so the fields
 * agree with the host's to rounding. */
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

/* Level 0's f = shift u + src (src: device memory laid out as level 0, NULL:
 * no source), the implicit heat step's right-hand side; h's shift as created. */
int coop_mg_gpu_shifted_rhs(coop_mg_gpu *g, const void *src);
/* ||f - A u||^2 on level 0. */
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

/* Several ranks (h->size > 1), each on its GPU (solvers/mg/mg_split.cu): device
 * copies of the split levels (level 0's u and f as h holds them: the
 * solver's device arrays, or arrays of their own), and h->ops set to run
 * them, a kernel an operation with the exchanges of h's halos (made with
 * be) between them; the gathered levels stay on the host of h's root.
 * coop_mg_split_destroy gives h back its host ops (and accepts h without). */
int coop_mg_split_create(coop_mg_hier *h, coop_backend *be);
void coop_mg_split_destroy(coop_mg_hier *h);
/* coop_mg_gpu_pc and coop_mg_gpu_shifted_rhs for the split levels */
int coop_mg_split_pc(const coop_mg_hier *h, const void *r, void *z);
int coop_mg_split_shifted_rhs(const coop_mg_hier *h, const void *src);

#ifdef __cplusplus
}
#endif
#endif
