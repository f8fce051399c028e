/* BiCGStab (van der Vorst 1992), right preconditioned so the residual it
 * tests is the true one's recurrence; for nonsymmetric A. */
#include <math.h>

#include "solvers/checkpoint.h"
#include "solvers/krylov/krylov.h"

enum { R, RH, P, V, PH, S, SH, T, NVEC };

static int breakdown(coop_solve *sv) {
  sv->ctl.reason = COOP_DIVERGED_BREAKDOWN;
  return 0;
}

static int bicgstab_body(coop_solve *sv, krylov_data *k, double start) {
  coop_vec *r = k->w[R], *rh = k->w[RH], *p = k->w[P], *v = k->w[V], *ph = k->w[PH];
  coop_vec *s = k->w[S], *sh = k->w[SH], *t = k->w[T], *x = sv->x;
  double rho_old = 1.0, alpha = 1.0, omega = 1.0, rho, rv, ss, rr, d[2];
  coop_reduction red;
  /* the state at the end of an iteration */
  const coop_ckpt_state cs = {3, {"rho_old", "alpha", "omega"}, {&rho_old, &alpha, &omega}, 5,
                              {"x", "r", "rhat", "p", "v"}, {x, r, rh, p, v}, NULL};
  int64_t it0 = 0;
  int resumed, stop;
  COOP_CHECK(coop_ckpt_resume(sv, &cs, &it0, &resumed));
  if (!resumed) {
    COOP_CHECK(coop_op_residual(sv->A, sv->b, x, r));
    COOP_CHECK(coop_vec_copy(rh, r));
    COOP_CHECK(coop_vec_dot(r, r, &rr));
    if (coop_krylov_start(sv, sqrt(rr), start)) return 0;
  }
  const coop_vec *xs[2] = {t, t}, *ys[2] = {s, t};
  for (int64_t it = it0 + 1;; it++) {
    COOP_CHECK(coop_vec_dot(rh, r, &rho));
    if (rho == 0.0) return breakdown(sv);
    const double beta = (rho / rho_old) * (alpha / omega);
    COOP_CHECK(coop_vec_axpy(p, -omega, v)); /* p = r + beta (p - omega v) */
    COOP_CHECK(coop_vec_aypx(p, beta, r));
    COOP_CHECK(coop_krylov_pc(k, p, ph));
    COOP_CHECK(coop_op_apply(sv->A, ph, v));
    COOP_CHECK(coop_vec_dot(rh, v, &rv));
    if (rv == 0.0) return breakdown(sv);
    alpha = rho / rv;
    COOP_CHECK(coop_vec_waxpby(s, 1.0, r, -alpha, v));
    COOP_CHECK(coop_vec_dot(s, s, &ss));
    const coop_solve_ctl *c = &sv->ctl;
    if (coop_reason_converged(coop_stop_test(sqrt(ss), c->r0, it, c->max_iter, c->rtol, c->atol, c->dtol))) {
      COOP_CHECK(coop_vec_axpy(x, alpha, ph));
      coop_krylov_check(sv, it, sqrt(ss), start);
      return 0;
    }
    COOP_CHECK(coop_krylov_pc(k, s, sh));
    COOP_CHECK(coop_op_apply(sv->A, sh, t));
    COOP_CHECK(coop_vec_mdot_begin(&red, 0, 2, xs, ys));
    COOP_CHECK(coop_vec_reduce_end(&red, d));
    if (d[1] == 0.0) return breakdown(sv);
    omega = d[0] / d[1];
    COOP_CHECK(coop_vec_axpy(x, alpha, ph));
    COOP_CHECK(coop_vec_axpy(x, omega, sh));
    COOP_CHECK(coop_vec_waxpby(r, 1.0, s, -omega, t));
    COOP_CHECK(coop_vec_dot(r, r, &rr));
    const int why = coop_krylov_check(sv, it, sqrt(rr), start);
    if (why && why != COOP_DIVERGED_ITS) return 0;
    if (!why && omega == 0.0) return breakdown(sv);
    rho_old = rho;
    if (why) return coop_ckpt_final(sv, it, &cs); /* max_iter: the state is whole here */
    COOP_CHECK(coop_ckpt_point(sv, it, &cs, &stop));
    if (stop) return 0;
  }
}

static int bicgstab_setup(coop_solve *sv, void **data) {
  COOP_CHECK(coop_krylov_setup(sv, COOP_KG_BICGSTAB, NVEC, data));
  const double es = (double)coop_prec_size(sv->A->prec), n = (double)sv->A->n;
  /* two applies, two pcs, 5 dot passes (9 vector reads), 6 updates */
  sv->bytes_per_iter = 2 * sv->A->bytes + es * n * (2 * 3 + 9 + 6 * 3);
  return 0;
}

static int bicgstab_solve(coop_solve *sv, void *data) { return coop_krylov_run(sv, data, bicgstab_body); }

const coop_solver_type coop_solver_bicgstab = {
    "bicgstab", "BiCGStab, right preconditioned (nonsymmetric A)", 0,
    bicgstab_setup, bicgstab_solve, coop_krylov_view, coop_krylov_destroy, NULL, NULL};
