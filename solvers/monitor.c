/* Services every method shares: the residual history, monitor lines on rank 0,
 * timing phases, and the names of the stop reasons. */
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

static void monitor_line(const coop_solve *sv, int64_t it, double rn, double elapsed) {
  if (sv->comm->rank != 0) return;
  const double r0 = sv->ctl.r0;
  printf("  iter %10lld  residual %.6e  rel %.3e", (long long)it, rn, r0 > 0 ? rn / r0 : 0.0);
  if (elapsed >= 0)
    printf("  time %9.3f s  %10.1f Mpts/s", elapsed,
           elapsed > 0 ? (double)sv->global_n * (double)it / elapsed / 1e6 : 0.0);
  printf("\n");
  fflush(stdout);
}

void coop_solve_record(coop_solve *sv, int64_t it, double rn, double elapsed) {
  coop_solve_ctl *c = &sv->ctl;
  const int64_t slot = coop_history_slot(c->hist_len, c->hist_cap);
  const int64_t last = c->hist_len ? c->hist_iter[c->hist_len - 1] : -1;
  c->hist_iter[slot] = it;
  c->hist_res[slot] = rn;
  c->hist_len = slot + 1;
  if (!sv->monitor_every) return;
  /* the first check, then every monitor_every iterations */
  if (it == 0 || it / sv->monitor_every != (last < 0 ? -1 : last / sv->monitor_every))
    monitor_line(sv, it, rn, elapsed);
}

void coop_solve_replay(coop_solve *sv) {
  const coop_solve_ctl *c = &sv->ctl;
  if (!sv->monitor_every) return;
  int64_t last = -sv->monitor_every;
  for (int64_t i = 0; i < c->hist_len; i++)
    if (c->hist_iter[i] - last >= sv->monitor_every || i + 1 == c->hist_len) {
      monitor_line(sv, c->hist_iter[i], c->hist_res[i], -1.0);
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
