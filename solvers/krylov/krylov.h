/* What the Krylov methods share (solvers/krylov/krylov.c): the preconditioner, the
 * choice of execution mode, work vectors, the whole solve in one persistent
 * kernel (solvers/krylov/krylov_grid.cu) and the check of the true residual. */
#ifndef COOP_KRYLOV_H
#define COOP_KRYLOV_H

#include "solvers/checkpoint.h"
#include "solvers/krylov/krylov_method.h"
#include "solvers/pc.h"
#include "solvers/solver.h"

#define KRYLOV_MAX_VECS 10

typedef struct {
  coop_kg_method method;
  coop_vec *inv_diag;    /* Jacobi preconditioner, or NULL */
  coop_pc *pc;           /* another family's preconditioner (solver.pc = mg), or NULL */
  coop_vec *w[KRYLOV_MAX_VECS];
  int nw;
  int grid_blocks, grid_threads; /* > 0: the whole solve is one persistent kernel */
  /* its device work space, history and result, allocated at setup (not timed) */
  double *kg_work, *kg_hist_res;
  int64_t *kg_hist_iter;
  void *kg_result;
  int ph_solve;
} krylov_data;

/* Common setup: preconditioner, mode, nvec work vectors like b. */
int coop_krylov_setup(coop_solve *sv, coop_kg_method method, int nvec, void **data);
void coop_krylov_destroy(coop_solve *sv, void *data);
void coop_krylov_view(const coop_solve *sv, const void *data, FILE *out);
/* z = M r (Jacobi: inv_diag .* r; another family's: its apply; none: a copy). */
int coop_krylov_pc(const krylov_data *k, const coop_vec *r, coop_vec *z);
/* 1 when there is a preconditioner (else z is r itself in cg). */
static inline int coop_krylov_has_pc(const krylov_data *k) { return k->inv_diag || k->pc; }
/* Runs body (the per-operation method) or the persistent kernel, times it,
 * then checks the true residual ||b - A x||. */
int coop_krylov_run(coop_solve *sv, krylov_data *k, int (*body)(coop_solve *, krylov_data *, double));
/* First residual check: r0 = rn, history entry 0, the stop test. */
int coop_krylov_start(coop_solve *sv, double rn, double start);
/* Later checks: history, monitor, stop test; returns the reason. */
int coop_krylov_check(coop_solve *sv, int64_t it, double rn, double start);

/* The top of iteration it of the one-reduction CG forms (cg.c with
 * solver.cg_single_reduction, pipecg.c): the check of ||r|| = sqrt(rr) and the
 * checkpoint point (not when `checked`: the iteration a restart resumed at),
 * then beta and alpha from gamma = (r, u), delta = (w, u) and the previous
 * gamma and alpha. *done = 1 when the solve ends here (sv->ctl.reason, or a
 * signal). */
int coop_krylov_cg1_top(coop_solve *sv, int64_t it, int checked, double rr, double gamma, double delta,
                        double gamma_old, double alpha_old, const coop_ckpt_state *cs, double start,
                        double *alpha, double *beta, int *done);

#endif
