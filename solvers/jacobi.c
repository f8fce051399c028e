/* Jacobi for -lap(u) = f on a grid (the grid form: stored fields with ghost
 * layers). Between two halo exchanges a rank does up to g sweeps (g = ghost
 * width) over a shrinking overlap, so ranks talk g times less often; fields
 * are the same bits whatever the rank count. Modes on a GPU: launch (one
 * kernel per sweep), grid (a persistent cooperative kernel per block of g
 * sweeps, and for a rank without neighbours the whole solve, stop test
 * included, in one launch: solvers/jacobi_grid.cu). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "coop_build.h"
#include "solvers/checkpoint.h"
#include "solvers/solver.h"
#if COOP_HAVE_CUDA
#include "kernels/stencil_cuda.h"
#include "solvers/jacobi_grid.h"
#endif

typedef struct {
  int blocks;       /* persistent k-sweep grid; 0: one kernel per sweep */
  int solve_blocks; /* whole-solve grid (a rank alone, grid mode); 0: none */
  int ph_sweep, ph_halo, ph_check;
} jacobi_data;

/* auto: one kernel per sweep for large boxes with ghost width 1. On the H200
 * (bench/results/2026-11-29-h200x2-jacobi.md) launch mode beat the persistent
 * whole solve by 18% on 8192^2 and tied on 512^3, while the persistent grid won
 * on 256^2 (3.0 against 4.7 us per sweep): the barrier saves ~2 us per sweep,
 * which only matters where a sweep takes a few microseconds (about 2^20
 * points). With deep halos (ghost > 1) the persistent k-sweep kernel won at 2
 * ranks. */
#define AUTO_GRID_MAX_POINTS (1 << 20)

static int auto_prefers_launch(const coop_solve *sv, int alone) {
  const coop_grid *gr = &sv->s->grid;
  const double owned = (double)gr->n[0] * (double)gr->n[1] * (double)gr->n[2];
  /* with neighbours and ghost 1 the grid mode would run one sweep per launch anyway */
  return gr->g[0] == 1 && (!alone || owned > AUTO_GRID_MAX_POINTS);
}

/* Largest co-resident grid, or a clear refusal (never a grid that could hang). */
static int plan_grid(coop_solve *sv, int most, const char *what, int *blocks) {
  coop_backend *be = sv->be;
  if (!be->cooperative || most < 1)
    return COOP_ERROR(COOP_ERR_RUNTIME, "GPU %d cannot run a cooperative %s (cooperative launch %s, "
                      "%d blocks resident)", be->device, what, be->cooperative ? "supported" : "unsupported", most);
  if (sv->blocks > most) /* the user's option, so an input error */
    return coop_error_input("run.blocks = %d: at most %d blocks can be resident on GPU %d for the %s, "
                            "and a grid barrier over more could never complete", sv->blocks, most,
                            be->device, what);
  *blocks = sv->blocks > 0 ? sv->blocks : most;
  return 0;
}

static int choose_mode(coop_solve *sv, jacobi_data *d) {
  const int alone = !coop_halo_active(sv->halo);
  const int want_grid = strcmp(sv->sync, "grid") == 0, is_auto = strcmp(sv->sync, "auto") == 0;
  sv->mode = "launch";
  if (!want_grid && !(is_auto && !auto_prefers_launch(sv, alone))) return 0;
  int most = 0, rc = coop_stencil_sweeps_max_blocks(sv->be, sv->s, &most);
  if (!rc) rc = plan_grid(sv, most, "k-sweep kernel", &d->blocks);
#if COOP_HAVE_CUDA
  if (!rc && alone) { /* only then used */
    int bx, by, per_sm = 0;
    coop_cuda_block_shape(sv->s->grid.n[0], &bx, &by);
    rc = coop_jacobi_grid_occupancy(sv->s, bx, by, &per_sm);
    if (!rc) rc = plan_grid(sv, per_sm * sv->be->sm_count, "whole-solve kernel", &d->solve_blocks);
  }
#endif
  if (rc && is_auto) { /* auto falls back to one kernel per sweep */
    if (sv->comm->rank == 0) fprintf(stderr, "coopsolve: note: %s; using sync = launch\n", coop_error_message());
    coop_error_clear();
    d->blocks = d->solve_blocks = 0;
    return 0;
  }
  COOP_CHECK(rc);
  sv->mode = "grid";
  return 0;
}

static int jacobi_setup(coop_solve *sv, void **data) {
  jacobi_data *d = calloc(1, sizeof *d);
  *data = d;
  if (!d) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (sv->s->grid.g[0] > COOP_MAX_SWEEPS_PER_EXCHANGE)
    return COOP_ERROR(COOP_ERR_RUNTIME, "ghost width %lld above %d", (long long)sv->s->grid.g[0],
                      COOP_MAX_SWEEPS_PER_EXCHANGE);
  d->ph_sweep = coop_solve_phase(sv, "sweep");
  d->ph_halo = coop_solve_phase(sv, "halo");
  d->ph_check = coop_solve_phase(sv, "check");
  /* a sweep reads u and f and writes unew */
  sv->bytes_per_iter = 3.0 * (double)coop_grid_owned(&sv->s->grid) * (double)coop_prec_size(sv->s->grid.prec);
  if (!sv->be->device_memory) {
    sv->mode = "host";
    return 0;
  }
  return choose_mode(sv, d);
}

static int check(coop_solve *sv, jacobi_data *d, int64_t it, double *rn, double start) {
  double local = 0.0, global = 0.0, t0 = MPI_Wtime();
  COOP_CHECK(coop_stencil_residual(sv->be, sv->s, sv->u, sv->f, &local));
  COOP_MPI(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, sv->comm->world));
  *rn = sqrt(global);
  if (it == 0) sv->ctl.r0 = *rn;
  coop_solve_add_time(sv, d->ph_check, MPI_Wtime() - t0);
  coop_solve_record(sv, it, *rn, MPI_Wtime() - start);
  return 0;
}

static int exchange(coop_solve *sv, jacobi_data *d) {
  if (!coop_halo_active(sv->halo)) return 0;
  double t0 = MPI_Wtime();
  COOP_CHECK(sv->be->sync(sv->be)); /* sweeps' time goes to sweeps, not halo */
  coop_solve_add_time(sv, d->ph_sweep, MPI_Wtime() - t0);
  t0 = MPI_Wtime();
  if (coop_fault(sv->comm, "halo")) return COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  COOP_CHECK(coop_halo_exchange(sv->halo, sv->u));
  coop_solve_add_time(sv, d->ph_halo, MPI_Wtime() - t0);
  return 0;
}

/* k sweeps, then the exchange that makes the ghosts current again. */
static int sweep_block(coop_solve *sv, jacobi_data *d, int k) {
  coop_region regions[COOP_MAX_SWEEPS_PER_EXCHANGE];
  for (int s = 0; s < k; s++) regions[s] = coop_halo_sweep_region(sv->halo, k - 1 - s);
  const double t0 = MPI_Wtime();
  COOP_CHECK(coop_stencil_sweeps(sv->be, sv->s, regions, k, d->blocks, sv->u, sv->unew, sv->f));
  coop_solve_add_time(sv, d->ph_sweep, MPI_Wtime() - t0);
  if (k % 2) {
    void *t = sv->u;
    sv->u = sv->unew;
    sv->unew = t;
  }
  return exchange(sv, d);
}

static int run_loop(coop_solve *sv, jacobi_data *d, double start) {
  coop_solve_ctl *c = &sv->ctl;
  const int g = (int)sv->s->grid.g[0];
  int64_t it = 0;
  double rn;
  int resumed, stop;
  /* the state at a check: the field (its ghosts come from the exchange) */
  coop_ckpt_state cs;
  memset(&cs, 0, sizeof cs);
  cs.field = sv->u;
  COOP_CHECK(coop_ckpt_resume(sv, &cs, &it, &resumed));
  COOP_CHECK(exchange(sv, d));
  if (resumed) {
    rn = c->rnorm;
  } else {
    COOP_CHECK(check(sv, d, 0, &rn, start));
    c->reason = coop_stop_test(rn, c->r0, it, c->max_iter, c->rtol, c->atol, c->dtol);
  }
  while (!c->reason) {
    const int64_t next = it + c->check_every < c->max_iter ? it + c->check_every : c->max_iter;
    while (it < next) {
      const int k = (int)(next - it < g ? next - it : g);
      COOP_CHECK(sweep_block(sv, d, k));
      it += k;
    }
    COOP_CHECK(check(sv, d, it, &rn, start));
    c->reason = coop_stop_test(rn, c->r0, it, c->max_iter, c->rtol, c->atol, c->dtol);
    if (c->reason) break;
    cs.field = sv->u; /* the sweeps swap the buffers */
    COOP_CHECK(coop_ckpt_point(sv, it, &cs, &stop));
    if (stop) break;
  }
  c->iterations = it;
  c->rnorm = rn;
  return 0;
}

#if COOP_HAVE_CUDA
static int fetch_whole(coop_solve *sv, coop_jacobi_grid_state *st, long long *hi, double *hr, long long cap) {
  coop_backend *be = sv->be;
  coop_solve_ctl *ctl = &sv->ctl;
  coop_jacobi_grid_state h;
  COOP_CHECK(be->download(be, &h, st, sizeof h));
  const long long n = h.hist_len < cap ? h.hist_len : cap;
  long long *tmp = malloc((size_t)n * sizeof *tmp + 1);
  if (!tmp) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  int rc = be->download(be, tmp, hi, (size_t)n * sizeof *tmp);
  for (long long i = 0; i < n; i++) ctl->hist_iter[i] = tmp[i];
  free(tmp);
  COOP_CHECK(rc);
  COOP_CHECK(be->download(be, ctl->hist_res, hr, (size_t)n * sizeof(double)));
  ctl->hist_len = n;
  ctl->iterations = h.iterations;
  ctl->r0 = h.r0;
  ctl->rnorm = h.rnorm;
  ctl->reason = h.reason;
  return 0;
}

/* One launch does it all; monitor lines are replayed from the history. */
static int run_whole(coop_solve *sv, jacobi_data *d, double start) {
  coop_backend *be = sv->be;
  coop_solve_ctl *ctl = &sv->ctl;
  const long long cap = ctl->hist_cap;
  coop_jacobi_grid_state *st = NULL;
  long long *hi = NULL;
  double *hr = NULL;
  int bx, by, rc;
  coop_cuda_block_shape(sv->s->grid.n[0], &bx, &by);
  if (!(rc = be->alloc(be, (void **)&st, sizeof *st)) && !(rc = be->alloc(be, (void **)&hi, cap * sizeof *hi)) &&
      !(rc = be->alloc(be, (void **)&hr, cap * sizeof *hr)) &&
      !(rc = coop_jacobi_grid_solve(sv->s, sv->u, sv->unew, sv->f, ctl, st, hi, hr, cap, bx, by,
                                    d->solve_blocks, be->stream)))
    rc = fetch_whole(sv, st, hi, hr, cap);
  be->release(be, st);
  be->release(be, hi);
  be->release(be, hr);
  COOP_CHECK(rc);
  if (ctl->iterations % 2) {
    void *t = sv->u;
    sv->u = sv->unew;
    sv->unew = t;
  }
  coop_solve_add_time(sv, d->ph_sweep, MPI_Wtime() - start);
  coop_solve_replay(sv);
  return 0;
}
#endif

static int jacobi_solve(coop_solve *sv, void *data) {
  jacobi_data *d = data;
  sv->ctl.hist_len = 0;
  sv->barriers = strcmp(sv->mode, "grid") == 0 ? 1 : 0;
  COOP_MPI(MPI_Barrier(sv->comm->world)); /* time the solve from a common start */
  const double start = MPI_Wtime();
#if COOP_HAVE_CUDA
  /* the whole-solve kernel cannot stop for a checkpoint: those runs take the
   * persistent k-sweep kernel between checks instead (same fields) */
  if (d->solve_blocks && !coop_halo_active(sv->halo) && !coop_ckpt_requested(sv))
    COOP_CHECK(run_whole(sv, d, start));
  else
#endif
    COOP_CHECK(run_loop(sv, d, start));
  COOP_CHECK(sv->be->sync(sv->be));
  sv->t_solve = MPI_Wtime() - start;
  return 0;
}

static void jacobi_view(const coop_solve *sv, const void *data, FILE *out) {
  const jacobi_data *d = data;
  fprintf(out, "  jacobi: ghost width %lld, mode %s", (long long)sv->s->grid.g[0], sv->mode);
  if (d && d->blocks) fprintf(out, ", %d persistent blocks", d->solve_blocks ? d->solve_blocks : d->blocks);
  fprintf(out, "\n");
}

static void jacobi_destroy(coop_solve *sv, void *data) {
  (void)sv;
  free(data);
}

const coop_solver_type coop_solver_jacobi = {
    "jacobi", "Jacobi iteration on a grid (Poisson problems)", 1,
    jacobi_setup, jacobi_solve, jacobi_view, jacobi_destroy};
