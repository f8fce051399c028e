/* Pipelined conjugate gradients (Ghysels and Vanroose 2014; PETSc KSPPIPECG):
 * one global reduction per iteration, (r,u), (w,u) and (r,r) in one pass,
 * overlapped with the preconditioner and the operator that follow it. */
#include <math.h>

#include "solvers/checkpoint.h"
#include "solvers/krylov.h"

enum { R, U, W, M, N, Z, Q, S, P, NVEC };

static int pipecg_body(coop_solve *sv, krylov_data *k, double start) {
  coop_vec *r = k->w[R], *u = k->w[U], *w = k->w[W], *m = k->w[M], *n = k->w[N];
  coop_vec *z = k->w[Z], *q = k->w[Q], *s = k->w[S], *p = k->w[P];
  coop_reduction red;
  double v[3], gamma = 0.0, delta = 0.0, rr = 0.0, gamma_old = 0.0, alpha_old = 1.0;
  const coop_vec *xs[3] = {r, w, r}, *ys[3] = {u, u, r};
  /* the state after an iteration's check */
  const coop_ckpt_state cs = {4, {"gamma", "delta", "gamma_old", "alpha_old"},
                              {&gamma, &delta, &gamma_old, &alpha_old}, 10,
                              {"x", "r", "u", "w", "m", "n", "z", "q", "s", "p"},
                              {sv->x, r, u, w, m, n, z, q, s, p}, NULL};
  int64_t it0 = 0;
  int resumed, done;
  COOP_CHECK(coop_ckpt_resume(sv, &cs, &it0, &resumed));
  if (!resumed) {
    COOP_CHECK(coop_op_residual(sv->A, sv->b, sv->x, r));
    COOP_CHECK(coop_krylov_pc(k, r, u));
    COOP_CHECK(coop_op_apply(sv->A, u, w));
    COOP_CHECK(coop_vec_mdot_begin(&red, 0, 3, xs, ys));
    COOP_CHECK(coop_krylov_pc(k, w, m));
    COOP_CHECK(coop_op_apply(sv->A, m, n));
    COOP_CHECK(coop_vec_reduce_end(&red, v));
    gamma = v[0], delta = v[1], rr = v[2];
  }
  for (int64_t it = it0;; it++) {
    double alpha, beta; /* a resumed run made its first iteration's check before */
    COOP_CHECK(coop_krylov_cg1_top(sv, it, resumed && it == it0, rr, gamma, delta, gamma_old, alpha_old,
                                   &cs, start, &alpha, &beta, &done));
    if (done) return 0;
    COOP_CHECK(coop_vec_aypx(z, beta, n)); /* z = n + beta z */
    COOP_CHECK(coop_vec_aypx(q, beta, m));
    COOP_CHECK(coop_vec_aypx(s, beta, w));
    COOP_CHECK(coop_vec_aypx(p, beta, u));
    COOP_CHECK(coop_vec_axpy(sv->x, alpha, p));
    COOP_CHECK(coop_vec_axpy(r, -alpha, s));
    COOP_CHECK(coop_vec_axpy(u, -alpha, q));
    COOP_CHECK(coop_vec_axpy(w, -alpha, z));
    gamma_old = gamma;
    alpha_old = alpha;
    COOP_CHECK(coop_vec_mdot_begin(&red, 0, 3, xs, ys));
    COOP_CHECK(coop_krylov_pc(k, w, m));
    COOP_CHECK(coop_op_apply(sv->A, m, n));
    COOP_CHECK(coop_vec_reduce_end(&red, v));
    gamma = v[0], delta = v[1], rr = v[2];
  }
}

static int pipecg_setup(coop_solve *sv, void **data) {
  COOP_CHECK(coop_krylov_setup(sv, 1 /* COOP_KG_PIPECG */, NVEC, data));
  const double es = (double)coop_prec_size(sv->A->prec), n = (double)sv->A->n;
  /* apply; 8 vector updates; one 3-dot pass (3 vectors); pc */
  sv->bytes_per_iter = sv->A->bytes + es * n * (8 * 3 + 3 + 3);
  return 0;
}

static int pipecg_solve(coop_solve *sv, void *data) { return coop_krylov_run(sv, data, pipecg_body); }

const coop_solver_type coop_solver_pipecg = {
    "pipecg", "pipelined conjugate gradients: one reduction per iteration, overlapped", 0,
    pipecg_setup, pipecg_solve, coop_krylov_view, coop_krylov_destroy};
