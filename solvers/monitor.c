/* Services every method shares: the residual history, monitor lines on rank 0,
 * timing phases, and the names of the stop reasons. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solvers/solver.h"

const char *coop_reason_name(int reason) {
  switch (reason) {
    case COOP_CONVERGED_RTOL: return "converged_rtol";
    case COOP_CONVERGED_ATOL: return "converged_atol";
    case COOP_DIVERGED_ITS: return "diverged_its";
    case COOP_DIVERGED_DTOL: return "diverged_dtol";
    case COOP_DIVERGED_BREAKDOWN: return "diverged_breakdown";
    case COOP_DIVERGED_INDEFINITE_PC: return "diverged_indefinite_pc";
    case COOP_DIVERGED_INDEFINITE_MAT: return "diverged_indefinite_mat";
    case COOP_DIVERGED_NAN: return "diverged_nan";
    case COOP_COMPLETED: return "completed";
    default: return "none";
  }
}

/* prev: the residual of the check before (< 0: none), for the factor. */
static void monitor_line(const coop_solve *sv, int64_t it, double rn, double elapsed, double prev) {
  if (sv->comm->rank != 0) return;
  const double r0 = sv->ctl.r0;
  printf("  iter %10lld  residual %.6e  rel %.3e", (long long)it, rn, r0 > 0 ? rn / r0 : 0.0);
  if (sv->monitor_factor && prev > 0) printf("  factor %.4f", rn / prev);
  if (sv->dt > 0) printf("  t %.6g", sv->dt * (double)it); /* heat: the simulated time */
  if (elapsed >= 0)
    printf("  time %9.3g s  %9.4g %s/s", elapsed,
           elapsed > 0 ? (double)sv->global_n * (double)it / elapsed / 1e6 : 0.0, sv->s ? "Mpts" : "Mrows");
  printf("\n");
  fflush(stdout);
}

/* Whether the check at it shows: every monitor_every iterations, or (auto)
 * the first, then each time the residual has come another twentieth of the
 * way to rtol (in log) or the iterations another twentieth of max_iter:
 * about 20 lines a solve, every iteration of a short Krylov solve; heat's
 * lines go by its steps alone. */
static int monitor_due(coop_solve *sv, int64_t it, int64_t last, double rn) {
  if (sv->monitor_every != COOP_MONITOR_AUTO)
    return it == 0 || it / sv->monitor_every != (last < 0 ? -1 : last / sv->monitor_every);
  const coop_solve_ctl *c = &sv->ctl;
  int res = 0, its = 0;
  if (c->rtol > 0 && c->rtol < 1 && c->r0 > 0 && rn > 0 && !(sv->dt > 0)) /* heat: its steps alone */
    res = (int)fmin(20.0, floor(20.0 * log(rn / c->r0) / log(c->rtol)));
  if (c->max_iter > 0) its = (int)((double)it * 20.0 / (double)c->max_iter);
  const int due = last < 0 || res > sv->monitor_res || its > sv->monitor_it;
  if (due) {
    if (last < 0 || res > sv->monitor_res) sv->monitor_res = res;
    sv->monitor_it = its;
  }
  return due;
}

void coop_solve_record(coop_solve *sv, int64_t it, double rn, double elapsed) {
  coop_solve_ctl *c = &sv->ctl;
  const int64_t slot = coop_history_slot(c->hist_len, c->hist_cap);
  const int64_t last = c->hist_len ? c->hist_iter[c->hist_len - 1] : -1;
  const double prev = c->hist_len ? c->hist_res[c->hist_len - 1] : -1.0;
  c->hist_iter[slot] = it;
  c->hist_res[slot] = rn;
  c->hist_len = slot + 1;
  if (!sv->monitor_every) return;
  if (monitor_due(sv, it, last, rn)) monitor_line(sv, it, rn, elapsed, prev);
}

void coop_solve_replay(coop_solve *sv) {
  const coop_solve_ctl *c = &sv->ctl;
  if (!sv->monitor_every) return;
  int64_t last = -1;
  for (int64_t i = 0; i < c->hist_len; i++)
    if (monitor_due(sv, c->hist_iter[i], last, c->hist_res[i]) || i + 1 == c->hist_len) {
      monitor_line(sv, c->hist_iter[i], c->hist_res[i], -1.0, i ? c->hist_res[i - 1] : -1.0);
      last = c->hist_iter[i];
    }
}

int coop_solve_phase(coop_solve *sv, const char *name) {
  for (int i = 0; i < sv->nphases; i++)
    if (strcmp(sv->phase_name[i], name) == 0) return i;
  if (sv->nphases == COOP_MAX_PHASES) return COOP_MAX_PHASES - 1;
  sv->phase_name[sv->nphases] = name;
  sv->phase_time[sv->nphases] = 0.0;
  return sv->nphases++;
}

void coop_solve_add_time(coop_solve *sv, int phase, double seconds) {
  if (phase >= 0 && phase < sv->nphases) sv->phase_time[phase] += seconds;
}
