/* Batched solves on the CPU: the reference every device mode is checked
 * against. Problem after problem, each with its own stop test, in exactly the
 * order solvers/batch/batch.h spells out, so a GPU run takes the same iterations. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "core/signal.h"
#include "solvers/batch/batch_backend.h"
#include "solvers/stop.h"

/* Problem i of a batch, its arrays shifted so row 0 is its first row. */
typedef struct {
  int64_t n;
  const int64_t *rp; /* n + 1 entries, global offsets into ci and v */
  const int32_t *ci;
  const double *v, *b;
} prob;

/* Work vectors, sized for the largest problem. */
typedef struct {
  double *r, *d, *z, *p, *q;
} work;

static prob problem(const coop_batch *bt, int64_t i) {
  const int64_t lo = bt->row_off[i];
  const prob p = {bt->row_off[i + 1] - lo, bt->rowptr + lo, bt->colind, bt->val, bt->b + lo};
  return p;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* q = A x, row by row, entries in stored order. */
static void apply(const prob *P, const double *x, double *q) {
  for (int64_t i = 0; i < P->n; i++) {
    double s = 0.0;
    for (int64_t j = P->rp[i]; j < P->rp[i + 1]; j++) s += P->v[j] * x[P->ci[j]];
    q[i] = s;
  }
}

/* r = b - A x; returns ||r||^2 (one pass, as the fused GPU sweep). */
static double residual(const prob *P, const double *x, double *r) {
  double rr = 0.0;
  apply(P, x, r);
  for (int64_t i = 0; i < P->n; i++) {
    r[i] = P->b[i] - r[i];
    rr += r[i] * r[i];
  }
  return rr;
}

static double dot(int64_t n, const double *a, const double *b) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* d = diag(A); a zero or missing entry is the user's matrix: named. */
static int diagonal(const prob *P, int64_t id, double *d) {
  for (int64_t i = 0; i < P->n; i++) {
    d[i] = 0.0;
    for (int64_t j = P->rp[i]; j < P->rp[i + 1]; j++)
      if (P->ci[j] == i) d[i] += P->v[j];
    if (d[i] == 0.0)
      return coop_error_input("batch problem %lld: row %lld has a zero or missing diagonal entry "
                              "(Jacobi and the Jacobi preconditioner divide by it)",
                              (long long)id, (long long)i);
  }
  return 0;
}

static int stop(const coop_batch_ctl *ctl, double rnorm, double r0, int64_t it) {
  return coop_stop_test(rnorm, r0, it, ctl->max_iter, ctl->rtol, ctl->atol, ctl->dtol);
}

static void jacobi(const prob *P, const coop_batch_ctl *ctl, const work *w, double *x,
                   coop_batch_result *res) {
  for (int64_t it = 0;; it++) {
    const double rn = sqrt(residual(P, x, w->r));
    if (it == 0) res->r0 = rn;
    res->rnorm = rn;
    res->iterations = it;
    if ((res->reason = stop(ctl, rn, res->r0, it))) return;
    for (int64_t i = 0; i < P->n; i++) x[i] += w->r[i] / w->d[i];
  }
}

/* Jacobi's loop with the weight c = dt alpha for every row and a fixed step
 * count: the same pass (residual, norm, update) in the same order, so the
 * GPU takes the same steps to the bit. */
static void heat(const prob *P, const coop_batch_ctl *ctl, double dt, int64_t steps, const work *w,
                 double *x, coop_batch_result *res) {
  const double c = dt * ctl->alpha;
  for (int64_t it = 0;; it++) {
    const double rn = sqrt(residual(P, x, w->r));
    if (it == 0) res->r0 = rn;
    res->rnorm = rn;
    res->iterations = it;
    if ((res->reason = coop_batch_heat_stop(rn, it, steps))) return;
    for (int64_t i = 0; i < P->n; i++) x[i] += c * w->r[i];
  }
}

/* z = r / diag (pc jacobi) or r; returns (r, z). */
static double precondition(const prob *P, const coop_batch_ctl *ctl, const work *w, double *z) {
  if (!ctl->pc) return dot(P->n, w->r, w->r);
  for (int64_t i = 0; i < P->n; i++) z[i] = w->r[i] / w->d[i];
  return dot(P->n, w->r, z);
}

/* One CG step after the checks: 0, or the reason it cannot be taken. */
static int cg_step(const prob *P, const coop_batch_ctl *ctl, const work *w, double *x, double *rz,
                   double *rn) {
  double *z = ctl->pc ? w->z : w->r;
  apply(P, w->p, w->q);
  const double pq = dot(P->n, w->p, w->q);
  if (isnan(pq)) return COOP_DIVERGED_NAN;
  if (pq <= 0.0) return COOP_DIVERGED_INDEFINITE_MAT;
  const double alpha = *rz / pq;
  for (int64_t i = 0; i < P->n; i++) {
    x[i] += alpha * w->p[i];
    w->r[i] -= alpha * w->q[i];
  }
  const double rz_new = precondition(P, ctl, w, z);
  *rn = sqrt(dot(P->n, w->r, w->r));
  const double beta = rz_new / *rz;
  for (int64_t i = 0; i < P->n; i++) w->p[i] = z[i] + beta * w->p[i];
  *rz = rz_new;
  return 0;
}

static void cg(const prob *P, const coop_batch_ctl *ctl, const work *w, double *x,
               coop_batch_result *res) {
  double *z = ctl->pc ? w->z : w->r;
  const double rr = residual(P, x, w->r);
  double rz = precondition(P, ctl, w, z), rn = sqrt(rr);
  memcpy(w->p, z, (size_t)P->n * sizeof *z);
  res->r0 = rn;
  for (int64_t it = 0;; it++) {
    res->rnorm = rn;
    res->iterations = it;
    if ((res->reason = stop(ctl, rn, res->r0, it))) return;
    if (ctl->pc && rz <= 0.0) {
      res->reason = COOP_DIVERGED_INDEFINITE_PC;
      return;
    }
    if ((res->reason = cg_step(P, ctl, w, x, &rz, &rn))) return;
  }
}

static int64_t largest(const coop_batch *bt) {
  int64_t m = 0;
  for (int64_t i = 0; i < bt->count; i++)
    if (bt->row_off[i + 1] - bt->row_off[i] > m) m = bt->row_off[i + 1] - bt->row_off[i];
  return m;
}

static int solve_one(const coop_batch *bt, int64_t i, const coop_batch_ctl *ctl, const work *w,
                     double *x, coop_batch_result *res) {
  const prob P = problem(bt, i);
  const double t0 = now();
  double *xi = x + bt->row_off[i];
  memset(res, 0, sizeof *res);
  if (ctl->method == COOP_BATCH_JACOBI || ctl->pc) COOP_CHECK(diagonal(&P, bt->id[i], w->d));
  if (ctl->method == COOP_BATCH_HEAT)
    heat(&P, ctl, bt->dt[i], bt->steps[i], w, xi, res);
  else if (ctl->method == COOP_BATCH_JACOBI)
    jacobi(&P, ctl, w, xi, res);
  else
    cg(&P, ctl, w, xi, res);
  res->seconds = now() - t0;
  return 0;
}

int coop_batch_solve_host(const coop_batch *bt, const coop_batch_ctl *ctl, double *x,
                          coop_batch_result *res) {
  const size_t n = (size_t)largest(bt) + 1;
  work w = {malloc(n * sizeof(double)), malloc(n * sizeof(double)), malloc(n * sizeof(double)),
            malloc(n * sizeof(double)), malloc(n * sizeof(double))};
  int rc = w.r && w.d && w.z && w.p && w.q ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  for (int64_t i = 0; !rc && i < bt->count; i++) {
    if (coop_signal_stops(coop_signal_pending(), ctl->stop_on_signal)) { /* the batch system wants the job to end */
      for (; i < bt->count; i++) {
        const coop_batch_result none = {0, NAN, NAN, COOP_REASON_NONE, 0.0};
        res[i] = none;
      }
      break;
    }
    rc = solve_one(bt, i, ctl, &w, x, &res[i]);
  }
  free(w.r);
  free(w.d);
  free(w.z);
  free(w.p);
  free(w.q);
  return rc;
}
