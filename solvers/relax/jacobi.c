/* Jacobi for -lap(u) = f on a grid (the grid form: stored fields with ghost
 * layers): u <- u + (f - A u) / diag through the relaxation driver
 * (solvers/relax/relax.h: modes, deep halos, the residual fused into the sweep).
 * Fields are the same bits whatever the rank count and mode. A check at
 * iteration it is the sweep it + 1 measuring its input; a solve that stops
 * there returns that input, so the reported residual is the returned field's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "solvers/checkpoint.h"
#include "solvers/relax/relax.h"
#include "solvers/solver.h"

typedef struct {
  coop_relax *relax;
} jacobi_data;

static int jacobi_setup(coop_solve *sv, void **data) {
  jacobi_data *d = calloc(1, sizeof *d);
  *data = d;
  if (!d) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  /* a sweep reads u (and f, unless it is zero) and writes unew */
  sv->bytes_per_iter = (sv->f ? 3.0 : 2.0) * (double)coop_grid_owned(&sv->s->grid) *
                       (double)coop_prec_size(sv->s->grid.prec);
  return coop_relax_create(sv, sv->s->inv_diag, &d->relax);
}

/* The decision after each norm step: the residual of the iterate `it`. */
typedef struct {
  coop_solve *sv;
  coop_ckpt_state cs;
  int64_t it;
  int resumed; /* the first check repeats the one the checkpoint holds */
  double start, rn;
} check_ctx;

static int decide(void *p, double rn, int *stop) {
  check_ctx *x = p;
  coop_solve *sv = x->sv;
  coop_solve_ctl *c = &sv->ctl;
  const int again = x->resumed;
  x->resumed = 0;
  x->rn = rn;
  if (!again) {
    if (x->it == 0) c->r0 = rn;
    coop_solve_record(sv, x->it, rn, MPI_Wtime() - x->start);
  }
  c->reason = coop_stop_test(rn, c->r0, x->it, c->max_iter, c->rtol, c->atol, c->dtol);
  x->cs.field = sv->u; /* the steps swap the buffers */
  if (c->reason) {
    *stop = 1;
    return c->reason == COOP_DIVERGED_ITS && !again ? coop_ckpt_final(sv, x->it, &x->cs) : 0;
  }
  if (again) return 0;
  return coop_ckpt_point(sv, x->it, &x->cs, stop);
}

static int run_loop(coop_solve *sv, jacobi_data *d, double start) {
  coop_solve_ctl *c = &sv->ctl;
  check_ctx x;
  memset(&x, 0, sizeof x);
  x.sv = sv;
  x.start = start;
  x.cs.field = sv->u; /* the state at a check: the field (its ghosts come from the exchange) */
  COOP_CHECK(coop_ckpt_resume(sv, &x.cs, &x.it, &x.resumed));
  x.rn = c->rnorm;
  COOP_CHECK(coop_relax_exchange(d->relax));
  for (;;) {
    /* steps to the next check; at max_iter a norm step alone measures the
     * last iterate (its own output is dropped) */
    int64_t n = c->check_every < c->max_iter - x.it ? c->check_every : c->max_iter - x.it;
    if (n < 1) n = 1;
    int stopped;
    COOP_CHECK(coop_relax_run(d->relax, n, decide, &x, &stopped));
    if (stopped) break;
    x.it += n;
  }
  c->iterations = x.it;
  c->rnorm = x.rn;
  return 0;
}

static int jacobi_solve(coop_solve *sv, void *data) {
  jacobi_data *d = data;
  /* the whole-solve kernel cannot stop for a checkpoint: those runs take the
   * persistent n-step kernel between checks instead (same fields); with
   * neighbours it maps their memory first, outside the timed solve */
  int whole = 0;
  if (!coop_ckpt_requested(sv)) COOP_CHECK(coop_relax_solve_ready(d->relax, &whole));
  double start;
  COOP_CHECK(coop_relax_begin(d->relax, &start));
  if (whole) {
    COOP_CHECK(coop_relax_solve(d->relax, &sv->ctl));
    coop_solve_replay(sv);
  } else {
    COOP_CHECK(run_loop(sv, d, start));
  }
  return coop_relax_end(d->relax, start);
}

static void jacobi_view(const coop_solve *sv, const void *data, FILE *out) {
  (void)data;
  fprintf(out, "  jacobi: ghost width %lld, mode %s, residual fused into the sweep%s\n",
          (long long)sv->s->grid.g[0], sv->mode, sv->f ? "" : ", zero right-hand side (not read)");
}

static void jacobi_destroy(coop_solve *sv, void *data) {
  (void)sv;
  jacobi_data *d = data;
  if (d) coop_relax_destroy(d->relax);
  free(d);
}

const coop_solver_type coop_solver_jacobi = {
    "jacobi", "Jacobi iteration on a grid (Poisson problems)", 1,
    jacobi_setup, jacobi_solve, jacobi_view, jacobi_destroy, coop_relax_report_cb, coop_relax_attrs_cb};
