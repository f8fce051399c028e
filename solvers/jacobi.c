/* Jacobi for -lap(u) = f. Between two halo exchanges a rank does up to g
 * sweeps (g = ghost width) over a shrinking overlap, so ranks talk g times less
 * often; fields are the same bits whatever the rank count. A backend that can
 * (cuda, grid mode) runs the whole solve of a rank without neighbours in one
 * launch. */
#include <math.h>
#include <stdio.h>

#include "solver.h"

/* elapsed < 0: replayed after a whole solve in one launch, when no time is known */
static void monitor(const coop_solve *sv, int64_t it, double rn, double r0, double elapsed) {
  if (sv->comm->rank != 0) return;
  printf("  iter %10lld  residual %.6e  rel %.3e", (long long)it, rn, r0 > 0 ? rn / r0 : 0.0);
  if (elapsed >= 0)
    printf("  time %9.3f s  %10.1f Mpts/s", elapsed,
           elapsed > 0 ? (double)sv->global_points * (double)it / elapsed / 1e6 : 0.0);
  printf("\n");
  fflush(stdout);
}

static void record(coop_solve_ctl *c, int64_t it, double rn) {
  const int64_t slot = coop_history_slot(c->hist_len, c->hist_cap);
  c->hist_iter[slot] = it;
  c->hist_res[slot] = rn;
  c->hist_len = slot + 1;
}

static int check(coop_solve *sv, int64_t it, double *rn) {
  double local = 0.0, global = 0.0, t0 = MPI_Wtime();
  COOP_CHECK(sv->be->residual(sv->be, sv->s, sv->u, sv->f, &local));
  COOP_MPI(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, sv->comm->world));
  *rn = sqrt(global);
  record(&sv->ctl, it, *rn);
  sv->t_check += MPI_Wtime() - t0;
  return 0;
}

static int exchange(coop_solve *sv) {
  if (!coop_halo_active(sv->halo)) return 0;
  double t0 = MPI_Wtime();
  COOP_CHECK(sv->be->sync(sv->be)); /* sweeps' time goes to sweeps, not halo */
  sv->t_sweep += MPI_Wtime() - t0;
  t0 = MPI_Wtime();
  if (coop_fault(sv->comm, "halo")) return COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  COOP_CHECK(coop_halo_exchange(sv->halo, sv->u));
  sv->t_halo += MPI_Wtime() - t0;
  return 0;
}

/* k sweeps, then the exchange that makes the ghosts current again. */
static int sweep_block(coop_solve *sv, int k) {
  coop_region regions[COOP_MAX_SWEEPS_PER_EXCHANGE];
  for (int s = 0; s < k; s++) regions[s] = coop_halo_sweep_region(sv->halo, k - 1 - s);
  const double t0 = MPI_Wtime();
  COOP_CHECK(sv->be->sweeps(sv->be, sv->s, regions, k, sv->u, sv->unew, sv->f));
  sv->t_sweep += MPI_Wtime() - t0;
  if (k % 2) {
    void *t = sv->u;
    sv->u = sv->unew;
    sv->unew = t;
  }
  return exchange(sv);
}

static int run_loop(coop_solve *sv, double start) {
  coop_solve_ctl *c = &sv->ctl;
  const int g = (int)sv->s->g[0];
  int64_t it = 0, last_monitor = 0;
  double rn;
  COOP_CHECK(exchange(sv));
  COOP_CHECK(check(sv, 0, &c->r0));
  rn = c->r0;
  if (sv->monitor_every) monitor(sv, 0, rn, c->r0, MPI_Wtime() - start);
  c->reason = coop_converged(rn, c->r0, c->rtol, c->atol);
  while (!c->reason && it < c->max_iter) {
    const int64_t next = it + c->check_every < c->max_iter ? it + c->check_every : c->max_iter;
    while (it < next) {
      const int k = (int)(next - it < g ? next - it : g);
      COOP_CHECK(sweep_block(sv, k));
      it += k;
    }
    COOP_CHECK(check(sv, it, &rn));
    c->reason = coop_converged(rn, c->r0, c->rtol, c->atol);
    if (sv->monitor_every && (it - last_monitor >= sv->monitor_every || c->reason)) {
      monitor(sv, it, rn, c->r0, MPI_Wtime() - start);
      last_monitor = it;
    }
  }
  if (!c->reason) c->reason = COOP_REASON_MAX_ITER;
  c->iterations = it;
  c->rnorm = rn;
  return 0;
}

/* One launch does it all; monitor lines are replayed from the history. */
static int run_whole(coop_solve *sv, double start) {
  coop_solve_ctl *c = &sv->ctl;
  COOP_CHECK(sv->be->solve(sv->be, sv->s, &sv->u, &sv->unew, sv->f, c));
  sv->t_sweep = MPI_Wtime() - start;
  if (!sv->monitor_every) return 0;
  int64_t last = -sv->monitor_every;
  for (int64_t i = 0; i < c->hist_len; i++)
    if (c->hist_iter[i] - last >= sv->monitor_every || i + 1 == c->hist_len) {
      monitor(sv, c->hist_iter[i], c->hist_res[i], c->r0, -1.0);
      last = c->hist_iter[i];
    }
  return 0;
}

int coop_solver_jacobi(coop_solve *sv) {
  if (sv->s->g[0] > COOP_MAX_SWEEPS_PER_EXCHANGE)
    return COOP_ERROR(COOP_ERR_RUNTIME, "ghost width %lld above %d", (long long)sv->s->g[0],
                      COOP_MAX_SWEEPS_PER_EXCHANGE);
  sv->ctl.hist_len = 0;
  COOP_MPI(MPI_Barrier(sv->comm->world)); /* time the solve from a common start */
  const double start = MPI_Wtime();
  if (sv->be->solve && !coop_halo_active(sv->halo))
    COOP_CHECK(run_whole(sv, start));
  else
    COOP_CHECK(run_loop(sv, start));
  COOP_CHECK(sv->be->sync(sv->be));
  sv->t_solve = MPI_Wtime() - start;
  return 0;
}
