/* The heat equation u_t = alpha lap(u) + f on a grid (the grid form), by
 * explicit time stepping: forward Euler with the 5-point (2D) or 7-point (3D)
 * Laplacian, u <- u + dt alpha (f - A u) with A = -lap, which is the
 * relaxation driver's step (solvers/relax/relax.h) with c = dt alpha. The driver
 * gives the initial field and boundary values (problem/poisson.h: the heat
 * problems have no source, sv->f = NULL). solver.max_iter steps; the
 * residual ||f - A u|| (how far u is from steady state) is measured every
 * check_every steps by the step that starts there, and once more at the end;
 * snapshots every sv->snapshot_every steps go to the driver's hook. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/checkpoint.h"
#include "solvers/pc.h"
#include "solvers/relax/relax.h"
#include "solvers/solver.h"

/* Cycles an implicit step may take: they reduce the residual about 30-fold
 * each, so 50 reach any tolerance that rounding lets a step reach; a step
 * that ends above its tolerance ends the run diverged_its. */
#define IMPLICIT_MAX_CYCLES 50

typedef struct {
  coop_relax *r; /* explicit: the relaxation driver (first: the report callbacks read it) */
  double alpha;  /* solver.alpha */
  double dt_max; /* the stability limit of forward Euler */
  coop_shifted *implicit; /* solver.scheme = implicit: the step's solver, else NULL */
  int64_t cycles, worst; /* implicit: multigrid cycles in all, the most in one step */
  int64_t short_step;    /* implicit: the first step whose cycles ran out, else 0 */
  double short_res;      /* its last residual over its first */
  int went_on;           /* 1: the steps went on after it (a time series wants them all) */
} heat_data;

/* The shortest decimal that reads back as v (so a limit printed in a message
 * can be pasted back as an input and is not above the limit). */
static void shortest(char *buf, size_t len, double v) {
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, len, "%.*g", p, v);
    if (strtod(buf, NULL) == v) return;
  }
}

/* Forward Euler is stable while dt alpha times A's largest eigenvalue (below
 * 4 sum_a 1/h_a^2) stays at most 2: dt <= 1 / (2 alpha sum_a 1/h_a^2). */
int coop_heat_time_step(const coop_stencil *s, double alpha, double want, double *dt, double *dt_max) {
  double sum = 0.0;
  int equal = 1;
  for (int a = 0; a < s->grid.ndim; a++) {
    sum += s->w[a];
    equal &= s->w[a] == s->w[0];
  }
  *dt_max = 1.0 / (2.0 * alpha * sum);
  *dt = want;
  if (want == 0.0) {
    *dt = 0.9 * *dt_max;
  } else if (want > *dt_max) {
    char dt_s[32], lim[32];
    shortest(dt_s, sizeof dt_s, want);
    shortest(lim, sizeof lim, *dt_max);
    return coop_error_input("solver.dt = %s is above the explicit stability limit %s (%s); use "
                            "solver.dt <= %s (or 0: 0.9 of the limit)", dt_s, lim,
                            equal ? "h^2/(2 alpha dim)" : "1/(2 alpha sum 1/h^2)", lim);
  }
  if (!(*dt > 0.0) || !isfinite(*dt))
    return coop_error_input("solver.dt = %g: the time step must be positive and finite "
                            "(solver.alpha = %g, grid spacings from grid.n*, grid.l*)", *dt, alpha);
  return 0;
}

/* solver.dt: 0 lets the method pick (0.9 of the limit) */
static int choose_dt(coop_solve *sv, heat_data *d) {
  d->alpha = coop_config_real(sv->cfg, "solver.alpha");
  return coop_heat_time_step(sv->s, d->alpha, coop_config_real(sv->cfg, "solver.dt"), &sv->dt, &d->dt_max);
}

/* Backward Euler: any dt > 0 (the driver checks that one is given). */
static int implicit_setup(coop_solve *sv, heat_data *d) {
  d->alpha = coop_config_real(sv->cfg, "solver.alpha");
  double unused;
  COOP_CHECK(coop_heat_time_step(sv->s, d->alpha, 0.0, &unused, &d->dt_max));
  sv->dt = coop_config_real(sv->cfg, "solver.dt");
  sv->mode = "host"; /* the multigrid family names the GPU's mode */
  /* not counted (a step's bytes depend on how many cycles it takes): the
   * summary's throughput reads 0 GB/s */
  sv->bytes_per_iter = 0.0;
  return coop_shifted_create(sv, 1.0 / (d->alpha * sv->dt), &d->implicit);
}

static int heat_setup(coop_solve *sv, void **data) {
  heat_data *d = calloc(1, sizeof *d);
  *data = d;
  if (!d) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (strcmp(coop_config_str(sv->cfg, "solver.scheme"), "implicit") == 0) return implicit_setup(sv, d);
  COOP_CHECK(choose_dt(sv, d));
  /* a step reads u and writes unew (no source to read) */
  sv->bytes_per_iter = 2.0 * (double)coop_grid_owned(&sv->s->grid) * (double)coop_prec_size(sv->s->grid.prec);
  return coop_relax_create(sv, sv->dt * d->alpha, &d->r);
}

/* What a norm step reports: the residual of u at step it, into the history. */
typedef struct {
  coop_solve *sv;
  int64_t it;
  int last; /* the check after the last step: measure, then drop the step */
  double start;
} heat_check;

static int record(void *ctx, double rnorm, int *stop) {
  heat_check *k = ctx;
  coop_solve *sv = k->sv;
  if (k->it == 0) sv->ctl.r0 = rnorm;
  sv->ctl.rnorm = rnorm;
  coop_solve_record(sv, k->it, rnorm, MPI_Wtime() - k->start);
  *stop = k->last;
  return 0;
}

/* The next multiple of p after it, at most steps (p <= 0: steps). */
static int64_t next_multiple(int64_t it, int64_t p, int64_t steps) {
  if (p <= 0) return steps;
  const int64_t m = (it / p + 1) * p;
  return m < steps ? m : steps;
}

static int snapshot(coop_solve *sv, int64_t it) {
  if (!sv->snapshot || sv->snapshot_every <= 0) return 0;
  return sv->snapshot(sv->snapshot_ctx, sv->u, it, (double)it * sv->dt);
}

/* One chunk: steps from it to next (the driver times them: sweep, halo,
 * check), a norm step first when a check is due. */
static int chunk(coop_solve *sv, heat_data *d, heat_check *k, int64_t it, int64_t next) {
  int stopped = 0;
  k->it = it;
  k->last = 0;
  return coop_relax_run(d->r, next - it, it % sv->ctl.check_every == 0 ? record : NULL, k, &stopped);
}

static int run_steps(coop_solve *sv, heat_data *d, double start) {
  coop_solve_ctl *c = &sv->ctl;
  const int64_t steps = c->max_iter, ck_every = sv->ckpt ? sv->ckpt->every : 0;
  heat_check k = {sv, 0, 0, start};
  int64_t it = 0;
  int resumed = 0, stop = 0, stopped = 0;
  coop_ckpt_state cs; /* the state at a chunk's end: the field (the time is it dt) */
  memset(&cs, 0, sizeof cs);
  cs.field = sv->u;
  COOP_CHECK(coop_ckpt_resume(sv, &cs, &it, &resumed));
  if (resumed) COOP_CHECK(coop_relax_exchange(d->r)); /* the ghosts read back are stale */
  c->iterations = it;
  COOP_CHECK(snapshot(sv, it));
  while (it < steps) {
    /* chunks end where a check, a snapshot or a checkpoint is due */
    int64_t next = next_multiple(it, c->check_every, steps);
    const int64_t snap = next_multiple(it, sv->snapshot ? sv->snapshot_every : 0, steps);
    const int64_t ck = next_multiple(it, ck_every, steps);
    next = snap < next ? snap : next;
    next = ck < next ? ck : next;
    COOP_CHECK(chunk(sv, d, &k, it, next));
    c->iterations = it = next;
    if (sv->snapshot_every > 0 && (it % sv->snapshot_every == 0 || it == steps)) COOP_CHECK(snapshot(sv, it));
    cs.field = sv->u; /* the steps swap the buffers */
    if (it == steps) { /* the last step: a final checkpoint lets a longer run go on from here */
      COOP_CHECK(coop_ckpt_final(sv, it, &cs));
      break;
    }
    COOP_CHECK(coop_ckpt_point(sv, it, &cs, &stop));
    if (stop) return 0;
  }
  /* the residual of the final field: a norm step whose output is dropped */
  k.it = it;
  k.last = 1;
  COOP_CHECK(coop_relax_run(d->r, 1, record, &k, &stopped));
  c->reason = isfinite(c->rnorm) ? COOP_COMPLETED : COOP_DIVERGED_NAN;
  return 0;
}

/* Backward Euler steps: each a multigrid solve to solver.rtol of the step's
 * own residual or to solver.atol; the first step whose cycles run out is the
 * last (diverged_its). The residual recorded at step it is the step's
 * starting one, ||f - A u(it)||, the same measure as the explicit scheme's. */
static int run_implicit(coop_solve *sv, heat_data *d) {
  coop_solve_ctl *c = &sv->ctl;
  const int64_t steps = c->max_iter;
  COOP_MPI(MPI_Barrier(sv->comm->world));
  const double start = MPI_Wtime();
  int64_t it = 0;
  int resumed = 0, stop = 0;
  coop_ckpt_state cs;
  memset(&cs, 0, sizeof cs);
  cs.field = sv->u;
  COOP_CHECK(coop_ckpt_resume(sv, &cs, &it, &resumed));
  c->iterations = it;
  COOP_CHECK(snapshot(sv, it));
  /* a time series has room for every snapshot up to max_iter and no fewer
   * (io.h), so a run that writes one goes on past a short step */
  const int series = sv->snapshot && sv->snapshot_every > 0;
  double rn;
  int last = it == steps; /* the steps are done, or a step's cycles ran out */
  for (;;) {
    COOP_CHECK(d->implicit->begin(d->implicit, &rn));
    if (it == 0) c->r0 = rn;
    c->rnorm = rn;
    if (it % c->check_every == 0 || last) coop_solve_record(sv, it, rn, MPI_Wtime() - start);
    if (!isfinite(rn) || last) break;
    int cycles;
    double after;
    /* the shared stop test's rule: rtol of the step's first residual, or atol */
    const double rtol = rn > 0 ? fmax(c->rtol, c->atol / rn) : c->rtol;
    COOP_CHECK(d->implicit->solve(d->implicit, rtol, rn, IMPLICIT_MAX_CYCLES, &cycles, &after));
    d->cycles += cycles;
    d->worst = cycles > d->worst ? cycles : d->worst;
    c->iterations = ++it;
    if (after > rtol * rn && !d->short_step) { /* out of cycles (a NaN is the next residual's) */
      d->short_step = it;
      d->short_res = after / rn;
    }
    d->went_on = d->short_step && it > d->short_step;
    last = it == steps || (d->short_step && !series);
    if (sv->snapshot_every > 0 && (it % sv->snapshot_every == 0 || last)) COOP_CHECK(snapshot(sv, it));
    if (last) { /* a final checkpoint, as a solve that reaches max_iter writes */
      COOP_CHECK(coop_ckpt_final(sv, it, &cs));
      continue; /* the final field's residual */
    }
    COOP_CHECK(coop_ckpt_point(sv, it, &cs, &stop));
    if (stop) break; /* a signal: the reason stays none, as for the explicit steps */
  }
  if (!stop)
    c->reason = !isfinite(c->rnorm) ? COOP_DIVERGED_NAN : d->short_step ? COOP_DIVERGED_ITS : COOP_COMPLETED;
  sv->t_solve = MPI_Wtime() - start;
  sv->steps = it;
  coop_solve_add_time(sv, coop_solve_phase(sv, "steps"), sv->t_solve);
  return 0;
}

static int heat_solve(coop_solve *sv, void *data) {
  heat_data *d = data;
  if (d->implicit) return run_implicit(sv, d);
  double start;
  COOP_CHECK(coop_relax_begin(d->r, &start));
  COOP_CHECK(run_steps(sv, d, start));
  return coop_relax_end(d->r, start);
}

static void heat_view(const coop_solve *sv, const void *data, FILE *out) {
  const heat_data *d = data;
  if (d && d->implicit) {
    fprintf(out, "  heat: implicit (backward Euler), dt %.9g (%.3g times the explicit limit %.9g), alpha %.9g; "
            "each step multigrid to rtol %g: %lld cycles in all, at most %lld a step\n",
            sv->dt, sv->dt / d->dt_max, d->dt_max, d->alpha, sv->ctl.rtol, (long long)d->cycles,
            (long long)d->worst);
    if (d->short_step)
      fprintf(out, "  heat: step %lld reached %d cycles with its residual %.3g of its start, above its tolerance; %s\n",
              (long long)d->short_step, IMPLICIT_MAX_CYCLES, d->short_res,
              d->went_on ? "the steps went on to fill the time series" : "the run stopped there");
    d->implicit->view(d->implicit, out);
    return;
  }
  fprintf(out, "  heat: dt %.9g (%.3g of the stability limit %.9g), alpha %.9g, ghost width %lld, mode %s\n",
          sv->dt, d ? sv->dt / d->dt_max : 0.0, d ? d->dt_max : 0.0, coop_config_real(sv->cfg, "solver.alpha"),
          (long long)sv->s->grid.g[0], sv->mode);
}

static void heat_destroy(coop_solve *sv, void *data) {
  heat_data *d = data;
  (void)sv;
  if (d) coop_relax_destroy(d->r);
  if (d) coop_shifted_destroy(d->implicit);
  free(d);
}

const coop_solver_type coop_solver_heat = {
    "heat", "explicit time stepping of u_t = alpha lap(u) + f (grid problems)", 1 /* grid form */,
    heat_setup, heat_solve, heat_view, heat_destroy, coop_relax_report_cb, coop_relax_attrs_cb};
