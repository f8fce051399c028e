/* Pipelined conjugate gradients (Ghysels and Vanroose 2014; PETSc KSPPIPECG):
 * one global reduction per iteration, (r,u), (w,u) and (r,r) in one pass,
 * overlapped with the preconditioner and the operator that follow it.
 *
 * With residual replacement (Cools, Yetkin, Agullo, Giraud and Vanroose,
 * SIMAX 39(1), 2018; PETSc's KSPPIPECGRR): r, u, w, s, q and z each follow
 * their own recurrence, whose rounding errors the later updates carry and
 * amplify, so r drifts away from b - A x (1138_bus with Jacobi: the true
 * residual stalls near 1e-8 relative, then (p, A p) from the drifted scalars
 * turns negative). The drift is measured here, where PETSc estimates it from
 * eight more norms: now and then an iteration also forms d = b - A x - r and
 * puts (d, d) into its one reduction; where the drift matters
 * (pipe_wants_replacement), the next iteration computes r, u, w, s, q and z
 * from their definitions instead of their recurrences. */
#include <float.h>
#include <math.h>

#include "solvers/checkpoint.h"
#include "solvers/krylov/krylov.h"

enum { R, U, W, M, N, Z, Q, S, P, NVEC }; /* src/driver/budget.c counts NVEC */

/* A drift check at every tenfold drop of ||r|| and at least every 50
 * iterations (plateaus): one more operator application each; with the
 * replacements, 3-5% more applications on the test problems. */
#define CHECK_DROP 100.0 /* in rr = ||r||^2 */
#define CHECK_EVERY 50

/* The loop-carried scalars, all checkpointed. rr = (r, r). drift: (d, d) from
 * the last reduction when it made a check, else -1. rr_check, it_check: rr
 * and the iteration at the last check or replacement. floor: the drift one
 * iteration after the last replacement (what a replacement leaves), measured
 * while post = 1. rr_restart: rr at the last restart (pipe_breakdown), or -1. */
typedef struct {
  double gamma, delta, rr, gamma_old, alpha_old, drift, rr_check, it_check, floor, post, rr_restart;
} pipe_scalars;

/* Replace where the last check measured a drift ||d|| (1) over sqrt(eps) ||r||
 * (van der Vorst and Ye 2000): r no longer follows b - A x to rounding; (2)
 * over a tenth of the tolerance: it could keep the true residual from it,
 * while a replacement also perturbs the recurrences; (3) over ten times the
 * floor: a replacement cuts it tenfold at least (near the floor it would only
 * perturb). 1138_bus with Jacobi to rtol 1e-12 makes 3 (1 rank) or 4 (2
 * ranks); the other test cases none or one. */
static int pipe_wants_replacement(const coop_solve *sv, const pipe_scalars *c) {
  const coop_solve_ctl *ctl = &sv->ctl;
  const double eps = sv->A->prec == COOP_FP32 ? FLT_EPSILON : DBL_EPSILON;
  const double tol = 0.1 * fmax(ctl->rtol * ctl->r0, ctl->atol);
  return c->drift > eps * c->rr && c->drift > tol * tol && c->drift > 100.0 * c->floor;
}

/* The replacement step: r, u, w, s, q, z from their definitions at x and p
 * (four operator applications). */
static int pipe_replace(coop_solve *sv, krylov_data *k) {
  coop_vec **v = k->w;
  COOP_CHECK(coop_op_residual(sv->A, sv->b, sv->x, v[R]));
  COOP_CHECK(coop_krylov_pc(k, v[R], v[U]));
  COOP_CHECK(coop_op_apply(sv->A, v[U], v[W]));
  COOP_CHECK(coop_op_apply(sv->A, v[P], v[S]));
  COOP_CHECK(coop_krylov_pc(k, v[S], v[Q]));
  return coop_op_apply(sv->A, v[Q], v[Z]);
}

/* The one reduction: gamma = (r, u), delta = (w, u), rr = (r, r) and, with
 * check, the drift (d, d), overlapped with m = M w and n = A m. d is kept in
 * m, free from q's update on: the reduction reads it before m = M w (on the
 * host at begin, on a GPU earlier on the same stream). */
static int pipe_reduce(coop_solve *sv, krylov_data *k, int check, pipe_scalars *c) {
  coop_vec **v = k->w;
  const coop_vec *xs[4] = {v[R], v[W], v[R], v[M]}, *ys[4] = {v[U], v[U], v[R], v[M]};
  coop_reduction red;
  double val[4];
  COOP_CHECK(coop_vec_mdot_begin(&red, 0, check ? 4 : 3, xs, ys));
  COOP_CHECK(coop_krylov_pc(k, v[W], v[M]));
  COOP_CHECK(coop_op_apply(sv->A, v[M], v[N]));
  COOP_CHECK(coop_vec_reduce_end(&red, val));
  c->gamma = val[0], c->delta = val[1], c->rr = val[2];
  c->drift = check ? val[3] : -1.0;
  return 0;
}

/* (p, A p) <= 0 or (r, M r) < 0 from recurrences that may have drifted
 * proves nothing about A or M. So r, u, w, m, n are computed from x and CG
 * restarts there (beta = 0): the reason stands only where (u, A u) <= 0 or
 * (r, M r) < 0 for the true residual. A second breakdown before ||r|| has
 * dropped tenfold since the last restart ends the solve as a breakdown.
 * Three operator applications and one more reduction, at a breakdown only. */
static int pipe_breakdown(coop_solve *sv, krylov_data *k, pipe_scalars *c, const coop_ckpt_state *cs,
                          double start, double *alpha, double *beta, int *done) {
  const int why = sv->ctl.reason;
  if (why != COOP_DIVERGED_INDEFINITE_MAT && why != COOP_DIVERGED_INDEFINITE_PC) return 0;
  COOP_CHECK(coop_op_residual(sv->A, sv->b, sv->x, k->w[R]));
  COOP_CHECK(coop_krylov_pc(k, k->w[R], k->w[U]));
  COOP_CHECK(coop_op_apply(sv->A, k->w[U], k->w[W]));
  COOP_CHECK(pipe_reduce(sv, k, 0, c));
  sv->ctl.reason = COOP_REASON_NONE;
  COOP_CHECK(coop_krylov_cg1_top(sv, 0 /* beta = 0 */, 1, c->rr, c->gamma, c->delta, c->gamma_old,
                                 c->alpha_old, cs, start, alpha, beta, done));
  if (*done) return 0; /* indefinite for the true residual too */
  if (c->rr_restart >= 0.0 && !(c->rr < c->rr_restart / CHECK_DROP)) {
    sv->ctl.reason = COOP_DIVERGED_BREAKDOWN;
    *done = 1;
    return 0;
  }
  c->rr_restart = c->rr;
  return 0;
}

static int pipecg_body(coop_solve *sv, krylov_data *k, double start) {
  coop_vec *r = k->w[R], *u = k->w[U], *w = k->w[W], *m = k->w[M], *n = k->w[N];
  coop_vec *z = k->w[Z], *q = k->w[Q], *s = k->w[S], *p = k->w[P];
  pipe_scalars c = {0.0, 0.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, 0.0, 0.0, -1.0};
  /* the state after an iteration's check */
  const coop_ckpt_state cs = {11,
                              {"gamma", "delta", "rr", "gamma_old", "alpha_old", "drift", "rr_check",
                               "it_check", "drift_floor", "drift_post", "rr_restart"},
                              {&c.gamma, &c.delta, &c.rr, &c.gamma_old, &c.alpha_old, &c.drift, &c.rr_check,
                               &c.it_check, &c.floor, &c.post, &c.rr_restart},
                              10, {"x", "r", "u", "w", "m", "n", "z", "q", "s", "p"},
                              {sv->x, r, u, w, m, n, z, q, s, p}, NULL};
  int64_t it0 = 0;
  int resumed, done;
  COOP_CHECK(coop_ckpt_resume(sv, &cs, &it0, &resumed));
  if (!resumed) {
    COOP_CHECK(coop_op_residual(sv->A, sv->b, sv->x, r));
    COOP_CHECK(coop_krylov_pc(k, r, u));
    COOP_CHECK(coop_op_apply(sv->A, u, w));
    COOP_CHECK(pipe_reduce(sv, k, 0, &c));
    c.rr_check = c.rr;
  }
  for (int64_t it = it0;; it++) {
    double alpha, beta; /* a resumed run made its first iteration's check before */
    COOP_CHECK(coop_krylov_cg1_top(sv, it, resumed && it == it0, c.rr, c.gamma, c.delta, c.gamma_old,
                                   c.alpha_old, &cs, start, &alpha, &beta, &done));
    if (done) COOP_CHECK(pipe_breakdown(sv, k, &c, &cs, start, &alpha, &beta, &done));
    if (done) return 0;
    if (c.post && c.drift >= 0.0) c.floor = c.drift, c.post = 0.0;
    const int replace = pipe_wants_replacement(sv, &c);
    COOP_CHECK(coop_vec_aypx(z, beta, n)); /* z = n + beta z */
    COOP_CHECK(coop_vec_aypx(q, beta, m));
    COOP_CHECK(coop_vec_aypx(s, beta, w));
    COOP_CHECK(coop_vec_aypx(p, beta, u));
    COOP_CHECK(coop_vec_axpy(sv->x, alpha, p));
    if (replace) {
      COOP_CHECK(pipe_replace(sv, k));
    } else {
      COOP_CHECK(coop_vec_axpy(r, -alpha, s));
      COOP_CHECK(coop_vec_axpy(u, -alpha, q));
      COOP_CHECK(coop_vec_axpy(w, -alpha, z));
    }
    c.gamma_old = c.gamma;
    c.alpha_old = alpha;
    if (replace) c.post = 1.0; /* the next iteration measures the floor */
    const int check = !replace && (c.post > 0.0 || c.rr <= c.rr_check / CHECK_DROP ||
                                   (double)(it + 1) - c.it_check >= CHECK_EVERY);
    if (check) { /* d = b - A x - r, in m (pipe_reduce) */
      COOP_CHECK(coop_op_residual(sv->A, sv->b, sv->x, m));
      COOP_CHECK(coop_vec_axpy(m, -1.0, r));
    }
    if (check || replace) c.rr_check = c.rr, c.it_check = (double)(it + 1);
    COOP_CHECK(pipe_reduce(sv, k, check, &c));
  }
}

static int pipecg_setup(coop_solve *sv, void **data) {
  COOP_CHECK(coop_krylov_setup(sv, COOP_KG_PIPECG, NVEC, data));
  const double es = (double)coop_prec_size(sv->A->prec), n = (double)sv->A->n;
  /* apply; 8 vector updates; one 3-dot pass (3 vectors); pc. Drift checks
   * and replacements are left out: a few applies in a hundred iterations */
  sv->bytes_per_iter = sv->A->bytes + es * n * (8 * 3 + 3 + 3);
  return 0;
}

static int pipecg_solve(coop_solve *sv, void *data) { return coop_krylov_run(sv, data, pipecg_body); }

const coop_solver_type coop_solver_pipecg = {
    "pipecg", "pipelined conjugate gradients: one reduction per iteration, overlapped", 0,
    pipecg_setup, pipecg_solve, coop_krylov_view, coop_krylov_destroy, NULL, NULL};
