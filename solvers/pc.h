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

/* The implicit step of the heat equation (solver.scheme = implicit), which
 * the heat solver (solvers/relax) takes from the multigrid family: backward
 * Euler u_new = u + dt alpha (f + lap u_new) is (shift I + A) u_new = shift u + f
 * with shift = 1 / (alpha dt), solved on the grid form (sv->u, its ghosts
 * the boundary values), from u as the guess. */
typedef struct coop_shifted coop_shifted;
struct coop_shifted {
  void *ctx;
  /* The step's right-hand side shift u + f from the current u, and *rn =
   * its residual ||shift u + f - (shift I + A) u|| = ||f - A u||, how far u
   * is from steady state. Collective. */
  int (*begin)(coop_shifted *s, double *rn);
  /* Cycles from u until the residual is at most rtol rn0 (at most max);
   * *cycles: how many ran, *rn: the last residual. Collective. */
  int (*solve)(coop_shifted *s, double rtol, double rn0, int max, int *cycles, double *rn);
  void (*view)(const coop_shifted *s, FILE *out); /* rank 0 */
  void (*destroy)(coop_shifted *s);               /* frees s too */
};
int coop_shifted_create(coop_solve *sv, double shift, coop_shifted **out);
void coop_shifted_destroy(coop_shifted *s); /* accepts NULL */

/* ---- the providers, called by the registry only (as the solver types of
 * solver.h are named there) ---- */
/* solver.pc = mg (solvers/mg/mg.c): one cycle of solver.mg_cycle from a zero
 * guess on the grid of sv->A (a stencil operator), its post-smoother the
 * pre-smoother's adjoint, so the operator is symmetric as cg needs. */
int coop_mg_pc_create(coop_solve *sv, coop_pc **out);
/* The implicit heat step by multigrid cycles (solvers/mg/mg.c). */
int coop_mg_shifted_create(coop_solve *sv, double shift, coop_shifted **out);

#endif
