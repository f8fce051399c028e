/* Preconditioned conjugate gradients for symmetric positive definite A and M.
 * Hestenes-Stiefel: two reductions per iteration, (p, Ap), then (r, z) with
 * (r, r) fused into one pass. With solver.cg_single_reduction (PETSc's
 * -ksp_cg_single_reduction), the Chronopoulos-Gear form: s = A p carried by
 * its own recurrence, so (r, z), (A z, z) and (r, r) are one reduction (in
 * grid mode one barrier) per iteration; same iterates in exact arithmetic. */
#include <math.h>

#include "solvers/checkpoint.h"
#include "solvers/krylov/krylov.h"

enum { R, Z, P, Q, W, S, NVEC };

/* Both forms' start: from the checkpoint (z = M r recomputed) or from x0
 * (r = b - A x, z = M r); *resumed says which. */
static int cg_begin(coop_solve *sv, krylov_data *k, const coop_ckpt_state *cs, coop_vec *r, coop_vec *z,
                    int64_t *it0, int *resumed) {
  COOP_CHECK(coop_ckpt_resume(sv, cs, it0, resumed));
  if (*resumed) return z != r ? coop_krylov_pc(k, r, z) : 0;
  COOP_CHECK(coop_op_residual(sv->A, sv->b, sv->x, r));
  return coop_krylov_pc(k, r, z);
}

static int cg_body(coop_solve *sv, krylov_data *k, double start) {
  coop_vec *r = k->w[R], *p = k->w[P], *q = k->w[Q];
  coop_vec *z = coop_krylov_has_pc(k) ? k->w[Z] : r; /* M = I: z is r */
  coop_reduction red;
  double v[2], rz = 0.0, pq;
  const coop_vec *xs[2] = {r, r}, *ys[2] = {z, r};
  /* the state at the end of an iteration; z = M r is recomputed */
  const coop_ckpt_state cs = {1, {"rz"}, {&rz}, 3, {"x", "r", "p"}, {sv->x, r, p}, NULL};
  int64_t it0 = 0;
  int resumed, stop;
  COOP_CHECK(cg_begin(sv, k, &cs, r, z, &it0, &resumed));
  if (!resumed) {
    COOP_CHECK(coop_vec_copy(p, z));
    COOP_CHECK(coop_vec_mdot_begin(&red, 0, 2, xs, ys));
    COOP_CHECK(coop_vec_reduce_end(&red, v));
    rz = v[0];
    if (coop_krylov_start(sv, sqrt(v[1]), start)) return 0;
  }
  for (int64_t it = it0 + 1;; it++) {
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
    const int why = coop_krylov_check(sv, it, sqrt(v[1]), start);
    if (why && why != COOP_DIVERGED_ITS) return 0;
    if (!why && v[0] < 0.0) {
      sv->ctl.reason = COOP_DIVERGED_INDEFINITE_PC;
      return 0;
    }
    const double beta = v[0] / rz;
    rz = v[0];
    COOP_CHECK(coop_vec_aypx(p, beta, z)); /* p = z + beta p */
    if (why) return coop_ckpt_final(sv, it, &cs); /* max_iter: the state is whole here */
    COOP_CHECK(coop_ckpt_point(sv, it, &cs, &stop));
    if (stop) return 0;
  }
}

/* Chronopoulos-Gear. Per iteration: p = z + beta p, s = w + beta s,
 * x += alpha p, r -= alpha s, z = M r, w = A z, then one pass for
 * gamma = (r, z), delta = (w, z), (r, r); beta = gamma / gamma_old and
 * alpha = gamma / (delta - beta gamma / alpha_old), whose denominator is
 * (p, A p). The check sits at the top as in pipecg.c, in the same order as
 * the persistent kernel (solvers/krylov/krylov_grid.cu). */
static int cgsr_body(coop_solve *sv, krylov_data *k, double start) {
  coop_vec *r = k->w[R], *p = k->w[P], *w = k->w[W], *s = k->w[S];
  coop_vec *z = coop_krylov_has_pc(k) ? k->w[Z] : r;
  coop_reduction red;
  double v[3], gamma = 0.0, delta = 0.0, rr = 0.0, gamma_old = 0.0, alpha_old = 1.0;
  const coop_vec *xs[3] = {r, w, r}, *ys[3] = {z, z, r};
  /* the state after an iteration's check; z = M r is recomputed */
  const coop_ckpt_state cs = {4, {"gamma", "delta", "gamma_old", "alpha_old"},
                              {&gamma, &delta, &gamma_old, &alpha_old}, 5, {"x", "r", "w", "s", "p"},
                              {sv->x, r, w, s, p}, NULL};
  int64_t it0 = 0;
  int resumed, done;
  COOP_CHECK(cg_begin(sv, k, &cs, r, z, &it0, &resumed));
  if (!resumed) {
    COOP_CHECK(coop_op_apply(sv->A, z, w));
    COOP_CHECK(coop_vec_mdot_begin(&red, 0, 3, xs, ys));
    COOP_CHECK(coop_vec_reduce_end(&red, v));
    gamma = v[0], delta = v[1], rr = v[2];
  }
  for (int64_t it = it0;; it++) {
    double alpha, beta; /* a resumed run made its first iteration's check before */
    COOP_CHECK(coop_krylov_cg1_top(sv, it, resumed && it == it0, rr, gamma, delta, gamma_old, alpha_old,
                                   &cs, start, &alpha, &beta, &done));
    if (done) return 0;
    COOP_CHECK(coop_vec_aypx(p, beta, z)); /* p = z + beta p (p = 0 before the first) */
    COOP_CHECK(coop_vec_aypx(s, beta, w));
    COOP_CHECK(coop_vec_axpy(sv->x, alpha, p));
    COOP_CHECK(coop_vec_axpy(r, -alpha, s));
    if (z != r) COOP_CHECK(coop_krylov_pc(k, r, z));
    COOP_CHECK(coop_op_apply(sv->A, z, w));
    gamma_old = gamma;
    alpha_old = alpha;
    COOP_CHECK(coop_vec_mdot_begin(&red, 0, 3, xs, ys));
    COOP_CHECK(coop_vec_reduce_end(&red, v));
    gamma = v[0], delta = v[1], rr = v[2];
  }
}

static int cg_setup(coop_solve *sv, void **data) {
  const int sr = coop_config_bool(sv->cfg, "solver.cg_single_reduction");
  COOP_CHECK(coop_krylov_setup(sv, sr ? COOP_KG_CGSR : COOP_KG_CG, NVEC, data));
  const double es = (double)coop_prec_size(sv->A->prec), n = (double)sv->A->n;
  const int pc = coop_krylov_has_pc((krylov_data *)*data);
  if (sr) /* apply; two aypx, two axpy; pc; one 3-dot pass over r, w, z */
    sv->bytes_per_iter = sv->A->bytes + es * n * (2 + 4 * 3 + (pc ? 3 : 0) + (pc ? 3 : 2));
  else /* apply; (p,q); two axpys; pc; (r,z),(r,r); p update */
    sv->bytes_per_iter = sv->A->bytes + es * n * (2 + 3 + 3 + 3 + (pc ? 3 + 2 : 1));
  return 0;
}

static int cg_solve(coop_solve *sv, void *data) {
  return coop_krylov_run(sv, data, ((const krylov_data *)data)->method == COOP_KG_CGSR ? cgsr_body : cg_body);
}

const coop_solver_type coop_solver_cg = {
    "cg", "conjugate gradients (symmetric positive definite A)", 0,
    cg_setup, cg_solve, coop_krylov_view, coop_krylov_destroy, NULL, NULL};
