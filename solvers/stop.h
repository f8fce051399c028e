/* The stop test, its reasons and the residual history, shared by every method
 * and by the persistent kernels (nvcc compiles the inline rules for the device
 * too). Reasons carry the names PETSc users know (KSPConvergedReason). */
#ifndef COOP_STOP_H
#define COOP_STOP_H

#include <math.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  COOP_REASON_NONE = 0, /* still iterating */
  COOP_CONVERGED_RTOL,
  COOP_CONVERGED_ATOL,
  COOP_DIVERGED_ITS,            /* max_iter reached */
  COOP_DIVERGED_DTOL,           /* ||r|| > dtol ||r0|| */
  COOP_DIVERGED_BREAKDOWN,      /* a division by zero in the method, or a converged
                                   recurrence whose true residual disagrees */
  COOP_DIVERGED_INDEFINITE_PC,  /* (r, M r) < 0 */
  COOP_DIVERGED_INDEFINITE_MAT, /* (p, A p) <= 0 in CG */
  COOP_DIVERGED_NAN,            /* NaN or infinite residual */
  COOP_COMPLETED                /* a time stepper (heat) did all its steps */
} coop_reason;

/* Stopping rule in, results and history out. */
typedef struct {
  int64_t max_iter, check_every;
  double rtol, atol, dtol;
  /* results */
  int64_t iterations;
  double r0, rnorm; /* residual 2-norms: initial and final */
  int reason;       /* coop_reason */
  int64_t hist_cap; /* room in hist_iter/hist_res (caller-owned); past it the
                       last entry is overwritten by the latest check */
  int64_t hist_len; /* residual checks recorded */
  int64_t *hist_iter;
  double *hist_res;
} coop_solve_ctl;

#ifdef __CUDACC__
#define COOP_HOST_DEVICE __host__ __device__
#else
#define COOP_HOST_DEVICE
#endif

/* The stop test after iteration it: a coop_reason, or NONE to go on. dtol <= 0
 * turns the divergence test off. */
static inline COOP_HOST_DEVICE int coop_stop_test(double rnorm, double r0, int64_t it,
                                                  int64_t max_iter, double rtol, double atol,
                                                  double dtol) {
  if (!isfinite(rnorm)) return COOP_DIVERGED_NAN;
  if (rnorm <= atol) return COOP_CONVERGED_ATOL;
  if (rnorm <= rtol * r0) return COOP_CONVERGED_RTOL;
  if (dtol > 0 && rnorm > dtol * r0) return COOP_DIVERGED_DTOL;
  if (it >= max_iter) return COOP_DIVERGED_ITS;
  return COOP_REASON_NONE;
}

/* Where residual check number len goes in a history of cap entries: past the
 * cap the last entry is overwritten, so the latest check is always kept. */
static inline COOP_HOST_DEVICE int64_t coop_history_slot(int64_t len, int64_t cap) {
  return len < cap ? len : cap - 1;
}

static inline int coop_reason_converged(int r) {
  return r == COOP_CONVERGED_RTOL || r == COOP_CONVERGED_ATOL;
}
const char *coop_reason_name(int reason); /* "converged_rtol", ... */

#ifdef __cplusplus
}
#endif
#endif
