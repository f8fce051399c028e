/* CSR matrices on the host backend: y = A x and y += A x against a dense
 * product, compressed rows, a skewed matrix (one dense row among short and
 * empty ones), the row statistics, and bad arrays refused. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/error.h"
#include "kernels/csr.h"
#include "unit.h"

static coop_backend *be;

/* A dense nr x nc matrix and its CSR form (nonzeros in column order). */
typedef struct {
  int64_t nr, nc, nnz;
  double *dense;
  int64_t *rowptr;
  int32_t *colind;
  double *val;
} mat;

static mat from_dense(int64_t nr, int64_t nc, double *dense) {
  mat m = {nr, nc, 0, dense, malloc(sizeof(int64_t) * (size_t)(nr + 1)), NULL, NULL};
  for (int64_t k = 0; k < nr * nc; k++) m.nnz += dense[k] != 0.0;
  m.colind = malloc(sizeof(int32_t) * (size_t)(m.nnz + 1));
  m.val = malloc(sizeof(double) * (size_t)(m.nnz + 1));
  m.rowptr[0] = 0;
  int64_t q = 0;
  for (int64_t i = 0; i < nr; i++) {
    for (int64_t j = 0; j < nc; j++)
      if (dense[i * nc + j] != 0.0) {
        m.colind[q] = (int32_t)j;
        m.val[q++] = dense[i * nc + j];
      }
    m.rowptr[i + 1] = q;
  }
  return m;
}

static void mat_free(mat *m) {
  free(m->dense);
  free(m->rowptr);
  free(m->colind);
  free(m->val);
}

/* A value that is not simple, so a wrong order or a lost term shows. */
static double value(int64_t i, int64_t j) { return 1.0 / (double)(1 + i + 2 * j) - 0.3; }

static double *vector(int64_t n, double scale) {
  double *x = malloc(sizeof *x * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) x[i] = scale * sin(0.7 * (double)i + 0.1);
  return x;
}

/* Max |a - b| / max(1, |b|). */
static double max_err(const double *a, const double *b, int64_t n) {
  double e = 0.0;
  for (int64_t i = 0; i < n; i++) {
    const double d = fabs(a[i] - b[i]) / fmax(1.0, fabs(b[i]));
    if (d > e) e = d;
  }
  return e;
}

/* y = A x and y += A x of m against the dense product, with its rows mapped
 * through rows (NULL: in order) into a y of ny entries. */
static void check_spmv(const mat *m, const int32_t *rows, int64_t ny) {
  coop_csr *A = NULL;
  CU_ASSERT_FATAL(coop_csr_create(be, m->nr, m->nc, m->rowptr, m->colind, m->val, rows, &A) == 0);
  CU_ASSERT_EQUAL(A->nnz, m->nnz);
  double *x = vector(m->nc, 1.0), *y0 = vector(ny, -2.0), *y = malloc(sizeof *y * (size_t)ny);
  double *want = malloc(sizeof *want * (size_t)ny);
  for (int add = 0; add < 2; add++) {
    memcpy(y, y0, sizeof *y * (size_t)ny);
    memcpy(want, y0, sizeof *want * (size_t)ny);
    for (int64_t i = 0; i < m->nr; i++) {
      double s = 0.0;
      for (int64_t j = 0; j < m->nc; j++) s += m->dense[i * m->nc + j] * x[j];
      const int64_t r = rows ? rows[i] : i;
      want[r] = add ? want[r] + s : s;
    }
    CU_ASSERT_FATAL(coop_csr_spmv(A, x, y, add) == 0);
    CU_ASSERT(max_err(y, want, ny) < 1e-13);
  }
  free(x);
  free(y0);
  free(y);
  free(want);
  coop_csr_destroy(A);
}

/* A band matrix with a few holes: regular rows. */
static void test_regular(void) {
  const int64_t n = 37;
  double *d = calloc((size_t)(n * n), sizeof *d);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i - 2; j <= i + 2; j++)
      if (j >= 0 && j < n && (i + j) % 11 != 3) d[i * n + j] = value(i, j);
  mat m = from_dense(n, n, d);
  check_spmv(&m, NULL, n);
  mat_free(&m);
}

/* Rectangular, with empty rows. */
static void test_rectangular(void) {
  const int64_t nr = 9, nc = 14;
  double *d = calloc((size_t)(nr * nc), sizeof *d);
  for (int64_t i = 0; i < nr; i++)
    for (int64_t j = 0; j < nc; j++)
      if (i % 4 != 2 && (i * 5 + j * 3) % 7 < 3) d[i * nc + j] = value(i, j);
  mat m = from_dense(nr, nc, d);
  check_spmv(&m, NULL, nr);
  mat_free(&m);
}

/* Compressed rows: 4 CSR rows adding into rows 1, 4, 8, 9 of a y of 12;
 * the other entries of y must not change, with add = 0 too. */
static void test_compressed_rows(void) {
  const int64_t nr = 4, nc = 6;
  const int32_t rows[4] = {1, 4, 8, 9};
  double *d = calloc((size_t)(nr * nc), sizeof *d);
  for (int64_t i = 0; i < nr; i++)
    for (int64_t j = 0; j < nc; j++)
      if ((i + j) % 2 == 0) d[i * nc + j] = value(i, j);
  mat m = from_dense(nr, nc, d);
  check_spmv(&m, rows, 12);
  mat_free(&m);
}

/* One dense row among rows of 0 to 3 nonzeros: the skewed case, and the row
 * statistics the GPU plan is chosen from. */
static void test_skewed(void) {
  const int64_t n = 300, dense_row = 7;
  double *d = calloc((size_t)(n * n), sizeof *d);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++)
      if (i == dense_row || (i % 5 != 4 && (j == i || j == (i * 7) % n || j == (i + 13) % n)))
        d[i * n + j] = value(i, j);
  mat m = from_dense(n, n, d);
  coop_csr *A = NULL;
  CU_ASSERT_FATAL(coop_csr_create(be, n, n, m.rowptr, m.colind, m.val, NULL, &A) == 0);
  int64_t longest = 0;
  for (int64_t i = 0; i < n; i++)
    if (m.rowptr[i + 1] - m.rowptr[i] > longest) longest = m.rowptr[i + 1] - m.rowptr[i];
  CU_ASSERT_EQUAL(A->max_row, n);
  CU_ASSERT_EQUAL(A->max_row, longest);
  CU_ASSERT_EQUAL(A->mean_row_x100, m.nnz * 100 / n);
  CU_ASSERT(A->max_row * 100 > 4 * A->mean_row_x100); /* skewed by the rule of csr.cu */
  coop_csr_destroy(A);
  check_spmv(&m, NULL, n);
  mat_free(&m);
}

static void test_empty(void) {
  const int64_t rowptr[4] = {0, 0, 0, 0};
  coop_csr *A = NULL;
  double y[3] = {1.0, 2.0, 3.0};
  CU_ASSERT_FATAL(coop_csr_create(be, 3, 5, rowptr, NULL, NULL, NULL, &A) == 0);
  CU_ASSERT_EQUAL(A->nnz, 0);
  CU_ASSERT_EQUAL(A->max_row, 0);
  CU_ASSERT_FATAL(coop_csr_spmv(A, NULL, y, 1) == 0);
  CU_ASSERT(y[0] == 1.0 && y[1] == 2.0 && y[2] == 3.0);
  CU_ASSERT_FATAL(coop_csr_spmv(A, NULL, y, 0) == 0);
  CU_ASSERT(y[0] == 0.0 && y[1] == 0.0 && y[2] == 0.0);
  coop_csr_destroy(A);
  coop_csr_destroy(NULL);
}

static void test_bytes(void) {
  const int64_t rowptr[3] = {0, 2, 3};
  const int32_t colind[3] = {0, 3, 1}, rows[2] = {5, 2};
  const double val[3] = {1.0, 2.0, 3.0};
  coop_csr *A = NULL, *B = NULL;
  CU_ASSERT_FATAL(coop_csr_create(be, 2, 4, rowptr, colind, val, NULL, &A) == 0);
  CU_ASSERT_FATAL(coop_csr_create(be, 2, 4, rowptr, colind, val, rows, &B) == 0);
  /* 3 nonzeros x 12, 3 row pointers x 8, x 4 x 8, y 2 x 8 (+ rows 2 x 4) */
  CU_ASSERT_EQUAL(coop_csr_bytes(A), 36.0 + 24.0 + 32.0 + 16.0);
  CU_ASSERT_EQUAL(coop_csr_bytes(B), 36.0 + 24.0 + 32.0 + 16.0 + 8.0);
  coop_csr_destroy(A);
  coop_csr_destroy(B);
}

static void test_bad_arrays(void) {
  const int64_t rowptr[3] = {0, 2, 3}, down[3] = {0, 2, 1}, start[3] = {1, 2, 3};
  const int32_t colind[3] = {0, 3, 1}, wide[3] = {0, 4, 1}, neg_rows[2] = {0, -1};
  const double val[3] = {1.0, 2.0, 3.0};
  coop_csr *A = NULL;
  CU_ASSERT_EQUAL(coop_csr_create(be, 2, 4, rowptr, wide, val, NULL, &A), COOP_ERR_RUNTIME);
  CU_ASSERT_PTR_NULL(A);
  CU_ASSERT_EQUAL(coop_csr_create(be, 2, 4, down, colind, val, NULL, &A), COOP_ERR_RUNTIME);
  CU_ASSERT_EQUAL(coop_csr_create(be, 2, 4, start, colind, val, NULL, &A), COOP_ERR_RUNTIME);
  CU_ASSERT_EQUAL(coop_csr_create(be, 2, 4, rowptr, colind, val, neg_rows, &A), COOP_ERR_RUNTIME);
  CU_ASSERT_EQUAL(coop_csr_create(be, -1, 4, rowptr, colind, val, NULL, &A), COOP_ERR_RUNTIME);
  coop_error_clear();
}

int main(int argc, char **argv) {
  static const coop_unit_test tests[] = {
      {"banded matrix", test_regular},
      {"rectangular, empty rows", test_rectangular},
      {"compressed rows", test_compressed_rows},
      {"one dense row", test_skewed},
      {"no nonzeros", test_empty},
      {"bytes moved", test_bytes},
      {"bad arrays refused", test_bad_arrays},
  };
  MPI_Init(&argc, &argv);
  int rc = coop_backend_host_create(&be);
  if (!rc) rc = coop_unit_run("csr", tests, sizeof tests / sizeof *tests);
  if (be) be->destroy(be);
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
