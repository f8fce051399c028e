/* Vectors on the host backend, fp64 and fp32: every operation against a plain
 * loop, and the reductions over all ranks of MPI_COMM_WORLD (any count)
 * against closed forms. Entry i of a rank is its global index g, so each dot
 * is a sum of integers, exact in double whatever the order of the sums. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/vec.h"
#include "unit.h"

static coop_backend *be;
static int rank, size;

/* This rank's length (uneven over the ranks, not a multiple of 4) and the
 * global index of its first entry. */
static int64_t local_n(int r) { return 13 + 3 * r; }

static int64_t first_index(void) {
  int64_t off = 0;
  for (int r = 0; r < rank; r++) off += local_n(r);
  return off;
}

static int64_t global_n(void) {
  int64_t n = 0;
  for (int r = 0; r < size; r++) n += local_n(r);
  return n;
}

/* A vector of precision p holding f(g) at global index g. */
static coop_vec *make(coop_precision p, double (*f)(int64_t)) {
  coop_vec *v = NULL;
  const int64_t n = local_n(rank), g0 = first_index();
  CU_ASSERT_FATAL(coop_vec_create(be, MPI_COMM_WORLD, p, n, &v) == 0);
  double *h = malloc(sizeof *h * (size_t)n);
  for (int64_t i = 0; i < n; i++) h[i] = f(g0 + i);
  CU_ASSERT_FATAL(coop_vec_upload(v, h) == 0);
  free(h);
  return v;
}

static double f_index(int64_t g) { return (double)g; }
static double f_one(int64_t g) {
  (void)g;
  return 1.0;
}
static double f_mixed(int64_t g) { return 0.25 * (double)(g % 7) - 0.5; }
static double f_other(int64_t g) { return 0.125 * (double)((3 * g) % 5) + 1.0; }

/* Host copy of v. */
static double *get(const coop_vec *v) {
  double *h = malloc(sizeof *h * (size_t)(v->n ? v->n : 1));
  CU_ASSERT_FATAL(coop_vec_download(v, h) == 0);
  return h;
}

static void test_create(void) {
  const coop_precision precs[2] = {COOP_FP64, COOP_FP32};
  for (int t = 0; t < 2; t++) {
    coop_vec *v = NULL, *w = NULL;
    CU_ASSERT_FATAL(coop_vec_create(be, MPI_COMM_WORLD, precs[t], local_n(rank), &v) == 0);
    CU_ASSERT_EQUAL(v->n, local_n(rank));
    CU_ASSERT_EQUAL(v->n_global, global_n());
    CU_ASSERT_EQUAL(v->prec, precs[t]);
    CU_ASSERT_FATAL(coop_vec_duplicate(v, &w) == 0);
    CU_ASSERT_EQUAL(w->n, v->n);
    CU_ASSERT_EQUAL(w->n_global, v->n_global);
    CU_ASSERT_EQUAL(w->prec, v->prec);
    CU_ASSERT_PTR_NOT_EQUAL(w->data, v->data);
    coop_vec_destroy(w);
    coop_vec_destroy(v);
  }
  coop_vec_destroy(NULL);
}

static void test_transfer(void) {
  const int64_t n = local_n(rank);
  double *h = malloc(sizeof *h * (size_t)n);
  for (int64_t i = 0; i < n; i++) h[i] = 0.1 * (double)(i + 1);
  for (int t = 0; t < 2; t++) {
    const coop_precision p = t ? COOP_FP32 : COOP_FP64;
    coop_vec *v = NULL;
    CU_ASSERT_FATAL(coop_vec_create(be, MPI_COMM_WORLD, p, n, &v) == 0);
    CU_ASSERT_FATAL(coop_vec_upload(v, h) == 0);
    double *back = get(v);
    int same = 1;
    for (int64_t i = 0; i < n; i++)
      same &= back[i] == (p == COOP_FP32 ? (double)(float)h[i] : h[i]);
    CU_ASSERT(same);
    if (p == COOP_FP32) CU_ASSERT_EQUAL(((const float *)v->data)[2], (float)h[2]);
    free(back);
    coop_vec_destroy(v);
  }
  free(h);
}

/* Every BLAS-1 operation of precision p against the same arithmetic in a
 * plain loop (in p: fp32 computes in float, as the backends do). */
static void check_ops(coop_precision p) {
  const int64_t n = local_n(rank);
  const double a = 1.5, b = -0.75;
  coop_vec *x = make(p, f_mixed), *y = make(p, f_other), *w = make(p, f_one);
  double *hx = get(x), *hy = get(y), *r = NULL;
  int ok;
#define CHECK_OP(call, expr_d, expr_f)                                                             \
  do {                                                                                             \
    CU_ASSERT_FATAL((call) == 0);                                                                  \
    r = get(w);                                                                                    \
    ok = 1;                                                                                        \
    for (int64_t i = 0; i < n; i++) {                                                              \
      const double xi = hx[i], yi = hy[i];                                                         \
      const float xf = (float)xi, yf = (float)yi, af = (float)a, bf = (float)b;                    \
      (void)xf, (void)yf, (void)af, (void)bf, (void)xi, (void)yi;                                  \
      ok &= r[i] == (p == COOP_FP32 ? (double)(expr_f) : (expr_d));                                \
    }                                                                                              \
    CU_ASSERT(ok);                                                                                 \
    free(r);                                                                                       \
  } while (0)
  CHECK_OP(coop_vec_set(w, a), a, af);
  CHECK_OP(coop_vec_copy(w, x), xi, xf);
  CHECK_OP(coop_vec_scale(w, b), b * xi, bf * xf);
  CHECK_OP(coop_vec_copy(w, y), yi, yf);
  CHECK_OP(coop_vec_axpy(w, a, x), a * xi + 1.0 * yi, af * xf + 1.0f * yf);
  CHECK_OP(coop_vec_copy(w, y), yi, yf);
  CHECK_OP(coop_vec_aypx(w, a, x), 1.0 * xi + a * yi, 1.0f * xf + af * yf);
  CHECK_OP(coop_vec_waxpby(w, a, x, b, y), a * xi + b * yi, af * xf + bf * yf);
  CHECK_OP(coop_vec_pointwise_mult(w, x, y), xi * yi, xf * yf);
  /* the output may be an input */
  CHECK_OP(coop_vec_copy(w, x), xi, xf);
  CHECK_OP(coop_vec_waxpby(w, a, w, b, y), a * xi + b * yi, af * xf + bf * yf);
  CHECK_OP(coop_vec_copy(w, y), yi, yf);
  CHECK_OP(coop_vec_pointwise_mult(w, w, w), yi * yi, yf * yf);
#undef CHECK_OP
  free(hx);
  free(hy);
  coop_vec_destroy(x);
  coop_vec_destroy(y);
  coop_vec_destroy(w);
}

static void test_ops_fp64(void) { check_ops(COOP_FP64); }
static void test_ops_fp32(void) { check_ops(COOP_FP32); }

/* sum g, sum g^2, N, and sum 2g over g < N */
static void closed_forms(double out[4]) {
  const double n = (double)global_n();
  out[0] = n * (n - 1) / 2;
  out[1] = (n - 1) * n * (2 * n - 1) / 6;
  out[2] = n;
  out[3] = n * (n - 1);
}

static double f_two(int64_t g) {
  (void)g;
  return 2.0;
}

static void check_mdot(coop_precision p) {
  coop_vec *x = make(p, f_index), *one = make(p, f_one), *two = make(p, f_two);
  const coop_vec *const xs[4] = {x, x, one, x}, *const ys[4] = {one, x, one, two};
  double want[4], got[4];
  closed_forms(want);
  for (int k = 1; k <= COOP_RED_MAX; k++) {
    coop_reduction r;
    memset(got, 0, sizeof got);
    CU_ASSERT_FATAL(coop_vec_mdot_begin(&r, k - 1, k, xs, ys) == 0);
    CU_ASSERT_FATAL(coop_vec_reduce_end(&r, got) == 0);
    for (int j = 0; j < k; j++) {
      CU_ASSERT_EQUAL(got[j], want[j]);
      CU_ASSERT_EQUAL(r.value[j], want[j]);
    }
  }
  double d = 0.0;
  CU_ASSERT_FATAL(coop_vec_dot(x, one, &d) == 0);
  CU_ASSERT_EQUAL(d, want[0]);
  CU_ASSERT_FATAL(coop_vec_norm(x, &d) == 0);
  CU_ASSERT_EQUAL(d, sqrt(want[1]));
  coop_vec_destroy(x);
  coop_vec_destroy(one);
  coop_vec_destroy(two);
}

static void test_mdot_fp64(void) { check_mdot(COOP_FP64); }
static void test_mdot_fp32(void) { check_mdot(COOP_FP32); }

/* Two reductions open at once (as pipelined CG has them), with work queued
 * in between, ended in either order. */
static void test_split_phase(void) {
  coop_vec *x = make(COOP_FP64, f_index), *one = make(COOP_FP64, f_one);
  coop_vec *w = make(COOP_FP64, f_one);
  const coop_vec *const a[2] = {x, one}, *const b[2] = {one, one}, *const c[1] = {x};
  double want[4], g1[2], g2[1];
  closed_forms(want);
  for (int order = 0; order < 2; order++) {
    coop_reduction r1, r2;
    CU_ASSERT_FATAL(coop_vec_mdot_begin(&r1, 0, 2, a, b) == 0);
    CU_ASSERT_FATAL(coop_vec_scale(w, 3.0) == 0);
    CU_ASSERT_FATAL(coop_vec_mdot_begin(&r2, 1, 1, c, c) == 0);
    if (order) {
      CU_ASSERT_FATAL(coop_vec_reduce_end(&r2, g2) == 0);
      CU_ASSERT_FATAL(coop_vec_reduce_end(&r1, g1) == 0);
    } else {
      CU_ASSERT_FATAL(coop_vec_reduce_end(&r1, g1) == 0);
      CU_ASSERT_FATAL(coop_vec_reduce_end(&r2, g2) == 0);
    }
    CU_ASSERT_EQUAL(g1[0], want[0]);
    CU_ASSERT_EQUAL(g1[1], want[2]);
    CU_ASSERT_EQUAL(g2[0], want[1]);
    /* an ended reduction cannot be ended again */
    CU_ASSERT_EQUAL(coop_vec_reduce_end(&r1, g1), COOP_ERR_RUNTIME);
  }
  coop_vec_destroy(x);
  coop_vec_destroy(one);
  coop_vec_destroy(w);
}

static void test_gather(void) {
  for (int t = 0; t < 2; t++) {
    const coop_precision p = t ? COOP_FP32 : COOP_FP64;
    coop_vec *x = make(p, f_index), *dst = NULL;
    const int32_t idx[5] = {4, 0, 12, 4, 7};
    CU_ASSERT_FATAL(coop_vec_create(be, MPI_COMM_WORLD, p, 5, &dst) == 0);
    CU_ASSERT_FATAL(coop_vec_gather(be, p, 5, idx, x->data, dst->data) == 0);
    double *h = get(dst);
    int ok = 1;
    for (int i = 0; i < 5; i++) ok &= h[i] == (double)(first_index() + idx[i]);
    CU_ASSERT(ok);
    free(h);
    coop_vec_destroy(x);
    coop_vec_destroy(dst);
  }
}

/* Mismatched vectors and bad reductions are program faults, reported. */
static void test_errors(void) {
  coop_vec *x = make(COOP_FP64, f_one), *s = make(COOP_FP32, f_one), *shorter = NULL;
  CU_ASSERT_FATAL(coop_vec_create(be, MPI_COMM_WORLD, COOP_FP64, local_n(rank) - 1, &shorter) == 0);
  coop_error_clear();
  CU_ASSERT_EQUAL(coop_vec_axpy(x, 1.0, shorter), COOP_ERR_RUNTIME);
  CU_ASSERT_PTR_NOT_NULL(strstr(coop_error_message(), "lengths differ"));
  CU_ASSERT_EQUAL(coop_vec_copy(x, s), COOP_ERR_RUNTIME);
  CU_ASSERT_PTR_NOT_NULL(strstr(coop_error_message(), "precisions differ"));
  double d;
  CU_ASSERT_EQUAL(coop_vec_dot(x, s, &d), COOP_ERR_RUNTIME);
  const coop_vec *const v[5] = {x, x, x, x, x};
  coop_reduction r;
  CU_ASSERT_EQUAL(coop_vec_mdot_begin(&r, 0, COOP_RED_MAX + 1, v, v), COOP_ERR_RUNTIME);
  CU_ASSERT_EQUAL(coop_vec_mdot_begin(&r, COOP_EVENTS, 1, v, v), COOP_ERR_RUNTIME);
  CU_ASSERT_EQUAL(coop_vec_mdot_begin(&r, 0, 0, v, v), COOP_ERR_RUNTIME);
  coop_error_clear();
  coop_vec_destroy(x);
  coop_vec_destroy(s);
  coop_vec_destroy(shorter);
}

static int run_suites(void) {
  static const coop_unit_test tests[] = {
      {"create and duplicate", test_create},
      {"upload and download", test_transfer},
      {"fp64 operations against loops", test_ops_fp64},
      {"fp32 operations against loops", test_ops_fp32},
      {"fp64 dots over the ranks", test_mdot_fp64},
      {"fp32 dots over the ranks", test_mdot_fp32},
      {"two split-phase reductions open", test_split_phase},
      {"gather", test_gather},
      {"mismatches are faults", test_errors},
  };
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = coop_backend_host_create(&be);
  if (!rc) rc = COOP_UNIT_RUN("vec", tests);
  if (be) be->destroy(be);
  return rc;
}

int main(int argc, char **argv) { return coop_unit_mpi_main(argc, argv, run_suites); }
