/* Vector operations on the CPU: the reference the GPU versions are checked
 * against. fp32 vectors compute in fp32 (as the GPU does); reductions
 * accumulate in double, in index order. */
#include <string.h>

#include "kernels/vec.h"

/* w = a x + b y over n elements of type T, an absent (NULL) x or y counting as
 * zero, computed in T. w may alias x or y (scale, axpy, aypx pass the same
 * vector), so no restrict. */
#define DEFINE_AXPBY(name, T)                                                  \
  static void name(int64_t n, T a, const T *x, T b, const T *y, T *w) {        \
    if (x && y)                                                                \
      for (int64_t i = 0; i < n; i++) w[i] = a * x[i] + b * y[i];              \
    else if (x)                                                                \
      for (int64_t i = 0; i < n; i++) w[i] = a * x[i];                         \
    else if (y)                                                                \
      for (int64_t i = 0; i < n; i++) w[i] = b * y[i];                         \
    else                                                                       \
      for (int64_t i = 0; i < n; i++) w[i] = (T)0;                             \
  }
DEFINE_AXPBY(axpby_f64, double)
DEFINE_AXPBY(axpby_f32, float)

int coop_vec_axpby_host(coop_precision p, int64_t n, double a, const void *x, double b,
                        const void *y, void *w) {
  if (p == COOP_FP32)
    axpby_f32(n, (float)a, x, (float)b, y, w);
  else
    axpby_f64(n, a, x, b, y, w);
  return 0;
}

int coop_vec_mult_host(coop_precision p, int64_t n, const void *x, const void *y, void *w) {
  if (p == COOP_FP32) {
    const float *xs = x, *ys = y;
    float *ws = w;
    for (int64_t i = 0; i < n; i++) ws[i] = xs[i] * ys[i];
  } else {
    const double *xd = x, *yd = y;
    double *wd = w;
    for (int64_t i = 0; i < n; i++) wd[i] = xd[i] * yd[i];
  }
  return 0;
}

/* One dot per call: k passes over the data, in index order. */
static double dot_f64(int64_t n, const double *restrict x, const double *restrict y) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

static double dot_f32(int64_t n, const float *restrict x, const float *restrict y) {
  double s = 0.0; /* a product of two floats is exact in double */
  for (int64_t i = 0; i < n; i++) s += (double)x[i] * (double)y[i];
  return s;
}

int coop_vec_mdot_host(coop_precision p, int64_t n, int k, const void *const x[],
                       const void *const y[], double *out) {
  for (int j = 0; j < k; j++)
    out[j] = p == COOP_FP32 ? dot_f32(n, x[j], y[j]) : dot_f64(n, x[j], y[j]);
  return 0;
}

int coop_vec_gather_host(coop_precision p, int64_t m, const int32_t *idx, const void *src,
                         void *dst) {
  if (p == COOP_FP32) {
    const float *s = src;
    float *d = dst;
    for (int64_t i = 0; i < m; i++) d[i] = s[idx[i]];
  } else {
    const double *s = src;
    double *d = dst;
    for (int64_t i = 0; i < m; i++) d[i] = s[idx[i]];
  }
  return 0;
}

int coop_vec_set_host(coop_precision p, int64_t n, double a, void *x) {
  if (p == COOP_FP32) {
    const float af = (float)a;
    float *xs = x;
    for (int64_t i = 0; i < n; i++) xs[i] = af;
  } else {
    double *xd = x;
    for (int64_t i = 0; i < n; i++) xd[i] = a;
  }
  return 0;
}

/* to_double = 0: in holds n doubles, out n elements of p. to_double = 1: in
 * holds n elements of p, out n doubles. */
int coop_vec_convert_host(coop_precision p, int64_t n, const void *in, void *out, int to_double) {
  if (p == COOP_FP64) {
    if (n > 0 && in != out) memmove(out, in, (size_t)n * sizeof(double));
  } else if (to_double) {
    const float *s = in;
    double *d = out;
    for (int64_t i = 0; i < n; i++) d[i] = (double)s[i];
  } else {
    const double *s = in;
    float *d = out;
    for (int64_t i = 0; i < n; i++) d[i] = (float)s[i];
  }
  return 0;
}
