/* Dispatch of batched solves: the arrays and controls are checked once here,
 * then the host reference (solvers/batch/batch_host.c) or the CUDA launcher
 * (solvers/batch/batch_cuda.cu) runs them. */
#include <math.h>
#include <stddef.h>

#include "solvers/batch/batch_backend.h"

#include "coop_build.h"
#include "core/error.h"

#if !COOP_HAVE_CUDA
int coop_batch_solve_cuda(coop_backend *be, const coop_batch *bt, const coop_batch_ctl *ctl,
                          coop_batch_run *opt, double *x, coop_batch_result *res) {
  (void)be, (void)bt, (void)ctl, (void)opt, (void)x, (void)res;
  return COOP_ERROR(COOP_ERR_RUNTIME, "a device backend in a build without CUDA");
}

int coop_batch_check_run_cuda(coop_backend *be, const coop_batch_run *opt) {
  (void)be, (void)opt;
  return COOP_ERROR(COOP_ERR_RUNTIME, "a device backend in a build without CUDA");
}
#endif

int coop_batch_check_run(coop_backend *be, const coop_batch_run *opt) {
  if (!be) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_check_run: no backend");
  return be->device_memory ? coop_batch_check_run_cuda(be, opt) : 0;
}

/* Problem i's rows and entries lie inside the arrays, its columns inside its rows. */
static int check_problem(const coop_batch *bt, int64_t i) {
  const int64_t lo = bt->row_off[i], hi = bt->row_off[i + 1];
  if (hi < lo || hi - lo > COOP_BATCH_MAX_ROWS)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_solve: problem %lld has rows [%lld, %lld)",
                      (long long)i, (long long)lo, (long long)hi);
  for (int64_t r = lo; r < hi; r++) {
    if (bt->rowptr[r + 1] < bt->rowptr[r])
      return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_solve: rowptr decreases at row %lld", (long long)r);
    for (int64_t j = bt->rowptr[r]; j < bt->rowptr[r + 1]; j++)
      if (bt->colind[j] < 0 || bt->colind[j] >= hi - lo)
        return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_solve: problem %lld: column %d of a %lld-row problem",
                          (long long)i, (int)bt->colind[j], (long long)(hi - lo));
  }
  return 0;
}

/* heat: a positive finite step and a step count for every problem (the
 * spec checked the inputs: this is the caller's contract). */
static int check_heat(const coop_batch *bt, const coop_batch_ctl *ctl) {
  if (!(ctl->alpha > 0.0) || !isfinite(ctl->alpha))
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_solve: heat with alpha %g", ctl->alpha);
  if (bt->count > 0 && (!bt->dt || !bt->steps))
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_solve: heat without time steps");
  for (int64_t i = 0; i < bt->count; i++)
    if (!(bt->dt[i] > 0.0) || !isfinite(bt->dt[i]) || bt->steps[i] < 0)
      return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_solve: heat problem %lld: dt %g, %lld steps",
                        (long long)i, bt->dt[i], (long long)bt->steps[i]);
  return 0;
}

static int check_args(const coop_batch *bt, const coop_batch_ctl *ctl, const double *x,
                      const coop_batch_result *res) {
  if (!bt || !ctl || bt->count < 0 || (bt->count > 0 && (!x || !res || !bt->id || !bt->row_off ||
                                                         !bt->rowptr || !bt->b)))
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_solve: NULL argument");
  if (ctl->method != COOP_BATCH_JACOBI && ctl->method != COOP_BATCH_CG && ctl->method != COOP_BATCH_HEAT)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_solve: method %d", ctl->method);
  if (ctl->pc != 0 && (ctl->pc != 1 || ctl->method != COOP_BATCH_CG))
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_solve: pc %d with method %d", ctl->pc, ctl->method);
  if (bt->count > 0 && (bt->row_off[0] != 0 || bt->rowptr[0] != 0))
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_solve: arrays do not start at 0");
  for (int64_t i = 0; i < bt->count; i++) COOP_CHECK(check_problem(bt, i));
  return ctl->method == COOP_BATCH_HEAT ? check_heat(bt, ctl) : 0;
}

int coop_batch_solve(coop_backend *be, const coop_batch *bt, const coop_batch_ctl *ctl,
                     coop_batch_run *opt, double *x, coop_batch_result *res) {
  if (!be) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_solve: no backend");
  COOP_CHECK(check_args(bt, ctl, x, res));
  if (be->device_memory) COOP_CHECK(coop_batch_solve_cuda(be, bt, ctl, opt, x, res));
  else {
    COOP_CHECK(coop_batch_solve_host(bt, ctl, x, res));
    if (opt) { /* what ran: one CPU thread, problem after problem */
      opt->sync_used = COOP_BSYNC_HOST;
      opt->schedule_used = COOP_SCHED_STATIC;
      opt->group_blocks_used = 0;
      opt->groups_used = 1;
      opt->levels_used = 1;
      opt->barriers = 0;
      opt->busy_max = opt->busy_mean = 0.0; /* per problem seconds are in res */
      opt->kernel_time = 0.0;
    }
  }
  return 0;
}

const char *coop_batch_sync_name(int sync) {
  static const char *const names[] = {"auto", "row", "cluster", "block", "grid", "launch", "launch_each", "host"};
  return sync >= 0 && sync < (int)(sizeof names / sizeof *names) ? names[sync] : "unknown";
}

const char *coop_batch_schedule_name(int schedule) { return coop_csr_schedule_name(schedule); }
