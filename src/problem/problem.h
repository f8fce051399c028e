/* The problem layer: from the configuration to (A, b, x0, exact solution when
 * known). Two kinds: "poisson" (problem.type = sine or laplace on the grid of
 * [grid]) and "matrix" (problem.type = matrix: a Matrix Market file, rows in
 * blocks over the ranks). Grid problems also have the Jacobi form (stored
 * fields with ghosts, built by the driver); every problem has the Krylov form
 * (an operator and vectors on the backend). */
#ifndef COOP_PROBLEM_H
#define COOP_PROBLEM_H

#include <stdint.h>

#include "core/comm.h"
#include "core/decomp.h"
#include "io/config.h"
#include "io/mm.h"
#include "kernels/backend.h"
#include "kernels/op.h"
#include "kernels/stencil.h"
#include "kernels/vec.h"
#include "problem/poisson.h"

typedef struct {
  int grid; /* 1: Poisson on a grid; 0: a matrix */
  coop_precision prec;
  int64_t n_global, n, row_lo; /* unknowns: all ranks, here, first one here (matrix) */
  /* grid */
  coop_problem poisson;
  coop_decomp dec;
  coop_stencil s;
  /* matrix, host rows until the operator is built */
  const char *matrix;
  coop_mm_matrix mm;
  /* Krylov form */
  coop_op *A;
  coop_vec *b, *x;
  double *exact; /* host, n entries, or NULL when not known */
} coop_linsys;

/* Read what the configuration names and split it over the ranks; input
 * errors (exit 2) name the file and line or the key. host_limit: the bytes a
 * rank may hold (0: unchecked); a matrix whose size line alone asks this
 * rank for more (its row arrays) is refused before it is read. Collective. */
int coop_linsys_create(coop_linsys *ls, const coop_comm *c, const coop_config *cfg, uint64_t host_limit);
/* For --dry-run, what the Krylov form would refuse later, checked now
 * without building it: matrix problems' problem.rhs and problem.x0 files
 * (read and dropped) and, with solver.pc = jacobi, a zero or missing
 * diagonal entry. Input errors as the real run gives them. Collective. */
int coop_linsys_check(const coop_linsys *ls, const coop_comm *c, const coop_config *cfg);
/* The Krylov form on be. Collective. */
int coop_linsys_krylov(coop_linsys *ls, const coop_comm *c, const coop_config *cfg,
                       coop_backend *be, int cuda_aware);
void coop_linsys_destroy(coop_linsys *ls); /* accepts a half-built one */

#endif
