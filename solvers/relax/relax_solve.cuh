/* What the whole-solve kernels (solvers/relax/relax_cuda.cu, solvers/relax/relax_resident.cu)
 * share: the stop rule, the bookkeeping of a residual check, the outcome. */
#ifndef COOP_RELAX_SOLVE_CUH
#define COOP_RELAX_SOLVE_CUH

#include <math.h>

#include "solvers/relax/relax_cuda.h"

namespace {

struct SolveArgs {
  long long max_iter, check_every, hist_cap;
  double rtol, atol, dtol;
};

/* Check c of a solve, on iterate it whose squared residual sums to sum (every
 * thread, after the barrier that completed the sum): the norm, r0 at the
 * first check, the history entry (lead thread); the stop reason (0: go on). */
__device__ __forceinline__ int solve_check(double sum, long long it, long long c, double &r0,
                                           double &rn, const SolveArgs &a, bool lead,
                                           coop_relax_solve_state *st, long long *hi, double *hr) {
  rn = sqrt(sum);
  if (c == 0) r0 = rn;
  if (lead) {
    const long long slot = coop_history_slot(c, a.hist_cap);
    hi[slot] = it;
    hr[slot] = rn;
    st->hist_len = slot + 1;
  }
  return coop_stop_test(rn, r0, it, a.max_iter, a.rtol, a.atol, a.dtol);
}

/* The solve's outcome for the host (lead thread, after the last check). */
__device__ __forceinline__ void solve_finish(coop_relax_solve_state *st, double r0, double rn, long long it,
                                             long long steps, int reason) {
  st->r0 = r0;
  st->rnorm = rn;
  st->iterations = it;
  st->steps = steps;
  st->reason = reason;
}

}  // namespace

#endif
