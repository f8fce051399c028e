/* The level operations on the host: plain loops over arrays with ghost
 * layers, in the field's precision (bodies in solvers/mg/mg_host_impl.h). */
#include <string.h>

#include "core/error.h"
#include "solvers/mg/mg_level.h"

#define REAL double
#define SFX d
#include "solvers/mg/mg_host_impl.h"
#undef REAL
#undef SFX
#define REAL float
#define SFX f
#include "solvers/mg/mg_host_impl.h"
#undef REAL
#undef SFX

static int smooth_host(const coop_mg_hier *h, int l, int sweeps, int reverse) {
  const coop_mg_level *L = &h->lev[l];
  const int fp32 = h->prec == COOP_FP32;
  for (int s = 0; s < sweeps; s++) {
    if (h->smoother == COOP_MG_JACOBI) { /* symmetric as it is: reverse changes nothing */
      if (fp32)
        jacobi_sweep_f(L, h->ndim, (float)h->omega);
      else
        jacobi_sweep_d(L, h->ndim, h->omega);
      continue;
    }
    for (int c = 0; c < 2; c++) {
      const int colour = reverse ? 1 - c : c;
      if (fp32)
        rbgs_colour_f(L, h->ndim, colour);
      else
        rbgs_colour_d(L, h->ndim, colour);
    }
  }
  return 0;
}

static int residual_host(const coop_mg_hier *h, int l, double *sumsq) {
  const double s = h->prec == COOP_FP32 ? residual_f(&h->lev[l], h->ndim) : residual_d(&h->lev[l], h->ndim);
  if (sumsq) *sumsq = s;
  return 0;
}

static int restrict_host(const coop_mg_hier *h, int l) {
  if (h->prec == COOP_FP32)
    restrict_f(&h->lev[l], &h->lev[l + 1]);
  else
    restrict_d(&h->lev[l], &h->lev[l + 1]);
  return 0;
}

static int prolong_host(const coop_mg_hier *h, int l) {
  if (h->prec == COOP_FP32)
    prolong_f(&h->lev[l], &h->lev[l + 1]);
  else
    prolong_d(&h->lev[l], &h->lev[l + 1]);
  return 0;
}

static int coarse_host(const coop_mg_hier *h) {
  if (h->prec == COOP_FP32)
    coarse_f(h);
  else
    coarse_d(h);
  return 0;
}

const coop_mg_ops coop_mg_ops_host = {"host", smooth_host, residual_host, restrict_host, prolong_host, coarse_host};
