/* Preconditioned conjugate gradients (Hestenes-Stiefel), for symmetric
 * positive definite A and M. Two reductions per iteration: (p, Ap), then
 * (r, z) with (r, r) fused into one pass. */
#include <math.h>

#include "solvers/krylov.h"

enum { R, Z, P, Q, NVEC };

static int cg_body(coop_solve *sv, krylov_data *k, double start) {
  coop_vec *r = k->w[R], *p = k->w[P], *q = k->w[Q];
  coop_vec *z = k->inv_diag ? k->w[Z] : r; /* M = I: z is r */
  coop_reduction red;
  double v[2], rz, pq;
  COOP_CHECK(coop_op_residual(sv->A, sv->b, sv->x, r));
  COOP_CHECK(coop_krylov_pc(k, r, z));
  COOP_CHECK(coop_vec_copy(p, z));
  const coop_vec *xs[2] = {r, r}, *ys[2] = {z, r};
  COOP_CHECK(coop_vec_mdot_begin(&red, 0, 2, xs, ys));
  COOP_CHECK(coop_vec_reduce_end(&red, v));
  rz = v[0];
  if (coop_krylov_start(sv, sqrt(v[1]), start)) return 0;
  for (int64_t it = 1;; it++) {
    COOP_CHECK(coop_op_apply(sv->A, p, q));
    COOP_CHECK(coop_vec_dot(p, q, &pq));
    if (!(pq > 0.0)) {
      sv->ctl.reason = isnan(pq) ? COOP_DIVERGED_NAN : COOP_DIVERGED_INDEFINITE_MAT;
      return 0;
    }
    const double alpha = rz / pq;
    COOP_CHECK(coop_vec_axpy(sv->x, alpha, p));
    COOP_CHECK(coop_vec_axpy(r, -alpha, q));
    if (z != r) COOP_CHECK(coop_krylov_pc(k, r, z));
    COOP_CHECK(coop_vec_mdot_begin(&red, 0, 2, xs, ys));
    COOP_CHECK(coop_vec_reduce_end(&red, v));
    if (coop_krylov_check(sv, it, sqrt(v[1]), start)) return 0;
    if (v[0] < 0.0) {
      sv->ctl.reason = COOP_DIVERGED_INDEFINITE_PC;
      return 0;
    }
    const double beta = v[0] / rz;
    rz = v[0];
    COOP_CHECK(coop_vec_aypx(p, beta, z)); /* p = z + beta p */
  }
}

static int cg_setup(coop_solve *sv, void **data) {
  COOP_CHECK(coop_krylov_setup(sv, 0 /* COOP_KG_CG */, NVEC, data));
  const double es = (double)coop_prec_size(sv->A->prec), n = (double)sv->A->n;
  /* apply; (p,q); two axpys; pc; (r,z),(r,r); p update */
  sv->bytes_per_iter = sv->A->bytes + es * n * (2 + 3 + 3 + 3 + (((krylov_data *)*data)->inv_diag ? 3 + 2 : 1));
  return 0;
}

static int cg_solve(coop_solve *sv, void *data) { return coop_krylov_run(sv, data, cg_body); }

const coop_solver_type coop_solver_cg = {
    "cg", "conjugate gradients (symmetric positive definite A)", 0,
    cg_setup, cg_solve, coop_krylov_view, coop_krylov_destroy};
