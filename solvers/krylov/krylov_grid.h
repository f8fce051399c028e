/* Whole Krylov solves in one cooperative persistent kernel (one MPI rank, one
 * GPU, fp64): CG (two forms), pipelined CG and right-preconditioned BiCGStab on a CSR
 * matrix or the matrix-free Poisson stencil, with the Jacobi preconditioner
 * or none. The stop test, its reasons and the history are those of
 * solvers/stop.h; the recurrences, breakdown tests and vector updates are
 * the ones solvers/krylov/cg.c, pipecg.c and bicgstab.c run with one kernel per
 * operation, operation for operation, so both give the same answers to
 * rounding. Dot products are summed in another (fixed) order, so the bits
 * differ; CG and pipelined CG then take the same iterations (a run that ends
 * within rounding of the tolerance can differ by one), BiCGStab on a
 * symmetric problem can drift by several (it does so between any two
 * summation orders). Pipelined CG's residual replacement checks its drift
 * every 50 iterations, where solvers/krylov/pipecg.c also checks at every tenfold
 * drop: replacements, and so iterations, can differ by a few percent. Every
 * run on the same grid repeats every bit.
 *
 * Inside an iteration the vector updates are fused around the SpMV: a value a
 * neighbour row needs from this iteration (p = z + beta p in CG, say) is
 * recomputed from last iteration's vectors with the same operations, so it is
 * bit-identical to the one its owner stores, and no barrier is spent waiting
 * for it. Grid barriers per iteration: CG 2, single-reduction CG and pipelined
 * CG 1, BiCGStab 3 (see coop_kg_barriers_per_iter); each reduction costs one
 * barrier, after which every block sums all blocks' partials in the same
 * order, so all blocks take the same decisions. Scalars, vector updates and the stencil round every
 * operation separately (no fused multiply-add), as kernels/vec.cu,
 * kernels/stencil_krylov.cu and host C without FMA contraction do.
 *
 * The kernels: one file per method (solvers/krylov/cg_grid.cu, cgsr_grid.cu,
 * pipecg_grid.cu, bicgstab_grid.cu) over the device code they share
 * (solvers/krylov/krylov_grid.cuh); this API and the method table in
 * solvers/krylov/krylov_grid.cu.
 *
 * All pointers named "device" are device memory of the current device; the
 * caller owns them. Functions return 0 or a coop error status (core/error.h). */
#ifndef COOP_KRYLOV_GRID_H
#define COOP_KRYLOV_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "solvers/krylov/krylov_method.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { COOP_KG_CSR = 0, COOP_KG_STENCIL = 1 } coop_kg_kind;

/* The operator y = A x on n unknowns, and the preconditioner.
 * CSR: rowptr[n+1], colind[nnz] (< n), val[nnz]; one thread a row, summed
 * in CSR order (kernels/csr.cu sums in another order: bits differ).
 * Stencil (kernels/stencil.h, Krylov form): the box nx*ny*nz (nz = 1 when
 * ndim = 2; n = nx*ny*nz), x fastest, points outside the box zero, w[a] = 1/h_a^2
 * (w[2] unused in 2D), y_i = diag x_i - w0 (x_{i-1} + x_{i+1})
 * - w1 (x_{i-nx} + x_{i+nx}) [- w2 (x_{i-nx ny} + x_{i+nx ny})] with
 * diag = 2 (w0 + w1 + w2), evaluated in exactly that order.
 * M = diag(inv_diag) (device, n), or the identity when inv_diag is NULL. */
typedef struct {
  coop_kg_kind kind;
  int64_t n;                                                       /* unknowns */
  const int64_t *rowptr; const int32_t *colind; const double *val; /* CSR, device */
  int ndim; int64_t nx, ny, nz; double w[3];                       /* stencil */
  const double *inv_diag; /* Jacobi preconditioner M = inv_diag (device, n); NULL: none */
} coop_kg_op;

/* The stopping rule (coop_stop_test) and the residual history: entry k holds
 * the iteration and the 2-norm of the recurrence residual r of the k-th check
 * (check 0 is the initial residual); past hist_cap entries the last one is
 * overwritten (coop_history_slot). hist_cap 0: no history.
 * Segments: with stop_at >= 0 the launch stops after the residual check of
 * iteration stop_at (reason none; the stop test still uses max_iter) and
 * leaves the state its next iteration needs in the result (scalars, parity,
 * record) and in x and the work vectors; a launch with resume = 1 goes on
 * from that state instead of starting with r = b - A x, on the same grid and
 * work space. One launch and any chain of stopped and resumed ones give the
 * same bits (x, history, result). A resumed launch writes the history from
 * slot coop_history_slot(result.checks, hist_cap) on; the earlier slots are
 * not read. */
typedef struct {
  coop_kg_method method;
  int64_t max_iter; double rtol, atol, dtol;
  int64_t hist_cap; int64_t *hist_iter; double *hist_res; /* device, hist_cap entries */
  int64_t stop_at; /* < 0: run to the end */
  int resume;
} coop_kg_args;

#define COOP_KG_MAX_SCALARS 6 /* loop-carried scalars of a method */
#define COOP_KG_MAX_CARRIED 8 /* loop-carried work vectors of a method (x aside) */

/* Written by the kernel at its end (device memory), as solvers/krylov/krylov.c keeps
 * coop_solve_ctl: iterations and rnorm are those of the last residual check
 * (a breakdown found in iteration k before its check reports k - 1); hist_len:
 * valid history entries, min(checks, hist_cap); reason: a coop_reason.
 * After a stop (reason none) the rest is the state a resumed launch reads
 * from here (with r0, rnorm and iterations): a caller that restores a solve
 * from elsewhere writes all of it, with checks = the history entries kept. */
typedef struct {
  double r0, rnorm;
  long long iterations, hist_len;
  int reason;
  int odd;                       /* parity of the double buffers (coop_kg_state_of) */
  long long checks;              /* residual checks made (the history's length, uncapped) */
  double s[COOP_KG_MAX_SCALARS]; /* the method's scalars, named by coop_kg_state_of */
} coop_kg_result;

/* The loop-carried state of a solve stopped at stop_at, besides x and the
 * record: the method's scalars (result.s[0..ns)) and work vectors (n doubles
 * each at work + offset[k]), named for a checkpoint. odd: the result's parity;
 * with odd = 0 the same names give the slots to restore a state into (then
 * write odd = 0 into the result). pc: a preconditioner (inv_diag) is set. */
typedef struct {
  int ns;
  const char *sname[COOP_KG_MAX_SCALARS];
  int nv;
  const char *vname[COOP_KG_MAX_CARRIED];
  size_t offset[COOP_KG_MAX_CARRIED]; /* doubles into work */
} coop_kg_state;
int coop_kg_state_of(coop_kg_method m, int64_t n, int pc, int odd, coop_kg_state *st);

/* Doubles of device work space the method needs (vectors + reduction
 * partials) for n unknowns and `blocks` blocks. The caller allocates it. */
size_t coop_kg_work_doubles(coop_kg_method m, int64_t n, int blocks);

/* Largest co-resident grid (occupancy x SMs, at most 1024 blocks) and the block
 * size (256), for this kind of operator and method on GPU dev; *blocks = 0:
 * the device cannot run it (no cooperative launch). Only A->kind is needed;
 * with A->n (and the box) set, the answer is exact for that problem, else it
 * is the smaller of the two variants' limits. Any grid up to *blocks may be
 * passed to coop_kg_solve, but small problems run faster on fewer blocks
 * (coop_kg_default_blocks). */
int coop_kg_max_blocks(const coop_kg_op *A, coop_kg_method m, int dev, int *blocks, int *threads);

/* The grid to run with when the user asked for none: *blocks is the fewest
 * whole waves of SMs (at most the co-resident maximum) on which the fast
 * variant for problems that fit in L2 applies, else the maximum, which
 * streaming needs for bandwidth; *threads as coop_kg_max_blocks. Needs the
 * whole operator (n and, for the stencil, the box). */
int coop_kg_default_blocks(const coop_kg_op *A, coop_kg_method m, int dev, int *blocks, int *threads);

/* Grid barriers per iteration of the persistent kernel (for the summary):
 * CG 2, single-reduction CG 1, pipelined CG 1, BiCGStab 3; 0 for an unknown
 * method. The setup before the first iteration costs 1 (CG, BiCGStab), 2
 * (single-reduction CG) or 3 (pipelined CG) more. */
int coop_kg_barriers_per_iter(coop_kg_method m);

/* The whole solve (or a segment of it: a->stop_at, a->resume), one
 * cooperative launch on stream (a cudaStream_t; NULL: the default stream),
 * asynchronous: synchronise before reading res, x or the history. x holds x0
 * on entry and the solution on return; b the right-hand side; work
 * coop_kg_work_doubles(a->method, A->n, blocks) doubles; blocks at most what
 * coop_kg_max_blocks gave for this device (checked again here: a grid that
 * cannot be resident is an error, never a hang), threads what it gave (a
 * multiple of 32, at most 256). */
int coop_kg_solve(const coop_kg_op *A, const coop_kg_args *a, const double *b, double *x,
                  double *work, coop_kg_result *res, int blocks, int threads, void *stream);

#ifdef __cplusplus
}
#endif
#endif
