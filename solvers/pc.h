/* Preconditioners that a family other than the Krylov one provides (solver.pc
 * = mg): z = M^-1 r on the Krylov form's vectors. The Krylov family sees only
 * this interface; the registry (solvers/registry.c), which alone may call
 * into every family, creates one by name. The diagonal ones (none, jacobi)
 * stay inside the Krylov family. */
#ifndef COOP_PC_H
#define COOP_PC_H

#include <stdio.h>

#include "solvers/solver.h"

typedef struct coop_pc coop_pc;
struct coop_pc {
  const char *name;
  void *ctx;
  /* z = M^-1 r; r and z are vectors like sv->b */
  int (*apply)(coop_pc *pc, const coop_vec *r, coop_vec *z);
  void (*view)(const coop_pc *pc, FILE *out); /* rank 0; one or more indented lines */
  void (*destroy)(coop_pc *pc);               /* frees pc too */
};

/* The preconditioner solver.pc (sv->cfg) names for sv's operator, or *out =
 * NULL where it is one the Krylov family keeps (none, jacobi). Input errors name
 * solver.pc and what to use instead. */
int coop_pc_create(coop_solve *sv, coop_pc **out);
void coop_pc_destroy(coop_pc *pc); /* accepts NULL */

/* ---- the providers, called by the registry only (as the solver types of
 * solver.h are named there) ---- */
/* solver.pc = mg (solvers/mg/mg.c): one cycle of solver.mg_cycle from a zero
 * guess on the grid of sv->A (a stencil operator), its post-smoother the
 * pre-smoother's adjoint, so the operator is symmetric as cg needs. */
int coop_mg_pc_create(coop_solve *sv, coop_pc **out);

#endif
