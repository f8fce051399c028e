/* The solver interface: a solver runs on a prepared rank (fields on the
 * backend, halo plan, stopping rule) and fills in the results. Solvers are
 * written once against kernels/backend.h and found by name in the registry. */
#ifndef COOP_SOLVER_H
#define COOP_SOLVER_H

#include <stdint.h>

#include "backend.h"
#include "comm.h"
#include "halo.h"
#include "stencil.h"

typedef struct {
  /* set by the caller */
  const coop_comm *comm;
  coop_backend *be;
  coop_halo *halo;
  const coop_stencil *s;
  void *u, *unew; /* backend memory; both hold the boundary values */
  const void *f;
  int64_t global_points; /* owned points of all ranks, for throughput */
  int64_t monitor_every; /* sweeps between monitor lines on rank 0; 0: none */
  coop_solve_ctl ctl;    /* stopping rule in, results and history out */
  /* results: times in seconds (this rank) */
  double t_solve, t_sweep, t_halo, t_check;
} coop_solve;

typedef int (*coop_solver_fn)(coop_solve *sv);

typedef struct {
  const char *name;
  const char *help;
  coop_solver_fn run;
} coop_solver_entry;

/* NULL when no solver has this name. */
const coop_solver_entry *coop_solver_lookup(const char *name);

int coop_solver_jacobi(coop_solve *sv);

#endif
