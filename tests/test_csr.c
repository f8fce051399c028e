/* CSR matrices on the host backend: y = A x and y += A x against a dense
 * product, compressed rows, a skewed matrix (one dense row among short and
 * empty ones), the row statistics, and bad arrays refused. The row-tile
 * product's bookkeeping (kernels/csr_tiles.cuh) and the schedule's names.
 * Where a GPU is visible, the CUDA product of every schedule on a matrix of
 * rows of 3 and a few of 10^4 against the host's, and the tile schedules
 * against each other to the bit. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "coop_build.h"
#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/csr.h"
#include "kernels/csr_tiles.cuh"
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

/* ---- row tiles ---- */

static void test_tile_lanes(void) {
  CU_ASSERT_EQUAL(coop_tile_lanes(0), 1);
  CU_ASSERT_EQUAL(coop_tile_lanes(200), 1);
  CU_ASSERT_EQUAL(coop_tile_lanes(201), 2); /* rows of 3: two lanes */
  CU_ASSERT_EQUAL(coop_tile_lanes(300), 2);
  CU_ASSERT_EQUAL(coop_tile_lanes(612), 4); /* adder_dcop_05: 6.12 a row */
  CU_ASSERT_EQUAL(coop_tile_lanes(6400), 32);
  CU_ASSERT_EQUAL(coop_tile_lanes(1000000), 32);
  /* long rows go to a warp: more than 8 strides of the group; never at 32 lanes */
  CU_ASSERT_FALSE(coop_tile_long_row(16, 2));
  CU_ASSERT_TRUE(coop_tile_long_row(17, 2));
  CU_ASSERT_TRUE(coop_tile_long_row(10000, 16));
  CU_ASSERT_FALSE(coop_tile_long_row(10000, 32));
}

/* Tiles cover rows 0..n-1 once, in order, each of tile_rows rows but the last. */
static void check_cover(long long n, int lanes, long long resident) {
  const int passes = coop_tile_passes(n, lanes, resident);
  CU_ASSERT(passes >= 1 && passes <= COOP_TILE_MAX_PASSES);
  const long long tr = coop_tile_rows(lanes, passes), tiles = coop_tile_count(n, tr);
  CU_ASSERT_EQUAL(tr, (long long)(COOP_TILE_THREADS / lanes) * passes);
  long long next = 0;
  for (long long t = 0; t < tiles; t++) {
    long long r0, r1;
    coop_tile_range(t, tr, n, &r0, &r1);
    CU_ASSERT_EQUAL(r0, next);
    CU_ASSERT(r1 > r0 && r1 - r0 <= tr);
    if (t + 1 < tiles) CU_ASSERT_EQUAL(r1 - r0, tr);
    next = r1;
  }
  CU_ASSERT_EQUAL(next, n);
}

static void test_tile_ranges(void) {
  check_cover(1, 1, 660);
  check_cover(1813, 4, 660);
  check_cover(1000000, 2, 660);
  check_cover(1000001, 32, 660);
  check_cover(257, 1, 1);
  CU_ASSERT_EQUAL(coop_tile_count(0, 128), 0);
  /* small matrices: one pass (as many tiles as can be); large: up to four */
  CU_ASSERT_EQUAL(coop_tile_passes(1813, 4, 660), 1);
  CU_ASSERT_EQUAL(coop_tile_passes(1000000, 2, 660), 1); /* 1M rows / (660 x 8 x 128) */
  CU_ASSERT_EQUAL(coop_tile_passes(1500000, 2, 660), 2); /* 1.5M / (660 x 8 x 128) = 2.2 */
  CU_ASSERT_EQUAL(coop_tile_passes(100000000, 2, 660), COOP_TILE_MAX_PASSES);
  CU_ASSERT_EQUAL(coop_tile_passes(100000000, 2, 0), COOP_TILE_MAX_PASSES);
}

/* Static shares: blocks g, g + G, ... take every tile once. */
static void test_tile_static(void) {
  const long long cases[][2] = {{1, 1}, {7, 3}, {3, 7}, {1000, 660}, {660, 660}, {5000, 132}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    const long long tiles = cases[c][0], res = cases[c][1];
    const long long blocks = coop_tile_blocks(tiles, res, 0);
    CU_ASSERT_EQUAL(blocks, tiles < res ? tiles : res);
    CU_ASSERT_EQUAL(coop_tile_blocks(tiles, res, 1), tiles); /* clc: a block per tile */
    int *seen = calloc((size_t)tiles, sizeof *seen);
    long long sum = 0, lo = tiles, hi = 0;
    for (long long g = 0; g < blocks; g++) {
      const long long sh = coop_tile_static_share(g, blocks, tiles);
      sum += sh;
      lo = sh < lo ? sh : lo;
      hi = sh > hi ? sh : hi;
      for (long long k = 0; k < sh; k++) seen[g + k * blocks]++;
    }
    CU_ASSERT_EQUAL(sum, tiles);
    CU_ASSERT(hi - lo <= 1);
    for (long long t = 0; t < tiles; t++) CU_ASSERT_EQUAL(seen[t], 1);
    free(seen);
  }
  CU_ASSERT_EQUAL(coop_tile_static_share(5, 4, 5), 0);
  /* atomic: a launch takes each tile once and one past the end per block */
  CU_ASSERT_EQUAL(coop_tile_atomic_takes(1000, 660), 1660);
}

static void test_schedule_names(void) {
  const char *const names[] = {"auto", "clc", "atomic", "static"}; /* tune.csr_schedule's choices */
  const int vals[] = {COOP_CSR_SCHED_AUTO, COOP_CSR_SCHED_CLC, COOP_CSR_SCHED_ATOMIC, COOP_CSR_SCHED_STATIC};
  for (int k = 0; k < 4; k++) {
    CU_ASSERT_EQUAL(coop_csr_schedule_parse(names[k]), vals[k]);
    CU_ASSERT_STRING_EQUAL(coop_csr_schedule_name(vals[k]), names[k]);
  }
  CU_ASSERT_EQUAL(coop_csr_schedule_parse("fast"), -1);
  CU_ASSERT_EQUAL(coop_csr_schedule_parse(NULL), -1);
  CU_ASSERT_STRING_EQUAL(coop_csr_schedule_name(4), "unknown");
}

/* A square matrix of n rows of 3 entries (the diagonal and two others) among
 * which nlong rows hold len entries; columns may repeat within a row. */
static mat heavy_rows(int64_t n, int nlong, int64_t len) {
  mat m = {n, n, 0, NULL, malloc(sizeof(int64_t) * (size_t)(n + 1)), NULL, NULL};
  m.rowptr[0] = 0;
  for (int64_t i = 0; i < n; i++) m.rowptr[i + 1] = m.rowptr[i] + ((i * 7919) % n < nlong ? len : 3);
  m.nnz = m.rowptr[n];
  m.colind = malloc(sizeof(int32_t) * (size_t)m.nnz);
  m.val = malloc(sizeof(double) * (size_t)m.nnz);
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = m.rowptr[i]; k < m.rowptr[i + 1]; k++) {
      const int64_t j = k == m.rowptr[i] ? i : (i * 31 + k * 17) % n;
      m.colind[k] = (int32_t)j;
      m.val[k] = value(i, j);
    }
  return m;
}

/* y (+)= A x on the host, in stored order. */
static void host_product(const mat *m, const int32_t *rows, const double *x, double *y, int add) {
  for (int64_t i = 0; i < m->nr; i++) {
    double s = 0.0;
    for (int64_t k = m->rowptr[i]; k < m->rowptr[i + 1]; k++) s += m->val[k] * x[m->colind[k]];
    const int64_t r = rows ? rows[i] : i;
    y[r] = add ? y[r] + s : s;
  }
}

#if COOP_HAVE_CUDA
static coop_backend *gpu;

/* The product of schedule s on the GPU into got (ny entries): y = A x, then
 * y += A x twice (atomic: three launches from one counter). 1: ran; 0: clc
 * refused below cc 10.0, as an input error. */
static int gpu_product(const mat *m, const int32_t *rows, int64_t ny, int s, const double *x, const double *y0,
                       double *got) {
  coop_csr *A = NULL;
  double *dx = NULL, *dy = NULL;
  CU_ASSERT_FATAL(coop_csr_create(gpu, m->nr, m->nc, m->rowptr, m->colind, m->val, rows, &A) == 0);
  const int rc = coop_csr_set_schedule(A, s);
  if (rc) {
    CU_ASSERT_EQUAL(s, COOP_CSR_SCHED_CLC);
    CU_ASSERT_EQUAL(rc, COOP_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(coop_error_message(), "tune.csr_schedule = clc needs compute capability 10.0"));
    coop_error_clear();
    coop_csr_destroy(A);
    return 0;
  }
  CU_ASSERT_EQUAL(A->schedule, s);
  CU_ASSERT_FATAL(gpu->alloc(gpu, (void **)&dx, sizeof *dx * (size_t)m->nc) == 0);
  CU_ASSERT_FATAL(gpu->alloc(gpu, (void **)&dy, sizeof *dy * (size_t)ny) == 0);
  CU_ASSERT_FATAL(gpu->upload(gpu, dx, x, sizeof *dx * (size_t)m->nc) == 0);
  CU_ASSERT_FATAL(gpu->upload(gpu, dy, y0, sizeof *dy * (size_t)ny) == 0);
  for (int k = 0; k < 3; k++) CU_ASSERT_FATAL(coop_csr_spmv(A, dx, dy, k > 0) == 0);
  CU_ASSERT_FATAL(gpu->download(gpu, got, dy, sizeof *got * (size_t)ny) == 0);
  gpu->release(gpu, dx);
  gpu->release(gpu, dy);
  coop_csr_destroy(A);
  return 1;
}

/* Every schedule against the host; the tile schedules to the bit against static. */
static void check_schedules(const mat *m, const int32_t *rows, int64_t ny) {
  double *x = vector(m->nc, 1.0), *y0 = vector(ny, -2.0), *want = malloc(sizeof *want * (size_t)ny);
  double *got = malloc(sizeof *got * (size_t)ny), *stat = malloc(sizeof *stat * (size_t)ny);
  memcpy(want, y0, sizeof *want * (size_t)ny);
  for (int k = 0; k < 3; k++) host_product(m, rows, x, want, k > 0);
  const int order[] = {COOP_CSR_SCHED_AUTO, COOP_CSR_SCHED_STATIC, COOP_CSR_SCHED_ATOMIC, COOP_CSR_SCHED_CLC};
  for (int k = 0; k < 4; k++) {
    if (!gpu_product(m, rows, ny, order[k], x, y0, got)) continue;
    CU_ASSERT(max_err(got, want, ny) < 1e-12);
    if (order[k] == COOP_CSR_SCHED_STATIC) memcpy(stat, got, sizeof *stat * (size_t)ny);
    else if (order[k] != COOP_CSR_SCHED_AUTO) CU_ASSERT(memcmp(got, stat, sizeof *got * (size_t)ny) == 0);
  }
  free(x);
  free(y0);
  free(want);
  free(got);
  free(stat);
}

static void test_gpu_heavy_rows(void) {
  mat m = heavy_rows(200000, 6, 10000); /* lanes 2: rows of 10^4 go to a warp */
  check_schedules(&m, NULL, m.nr);
  mat_free(&m);
  m = heavy_rows(3001, 40, 700); /* mean > 8: lanes 8, and one-pass tiles */
  check_schedules(&m, NULL, m.nr);
  mat_free(&m);
}

/* Compressed rows (the ghost part of a distributed matrix): rows 3i + 1 of a y of 3n. */
static void test_gpu_compressed(void) {
  mat m = heavy_rows(5000, 3, 2000);
  int32_t *rows = malloc(sizeof *rows * (size_t)m.nr);
  for (int64_t i = 0; i < m.nr; i++) rows[i] = (int32_t)(3 * i + 1);
  check_schedules(&m, rows, 3 * m.nr);
  free(rows);
  mat_free(&m);
}
#endif

/* The host product ignores the schedule: the same bits for every one. */
static void test_host_schedule(void) {
  mat m = heavy_rows(700, 2, 300);
  coop_csr *A = NULL;
  double *x = vector(m.nc, 1.0), *y = vector(m.nr, 0.0), *want = vector(m.nr, 0.0);
  host_product(&m, NULL, x, want, 0);
  CU_ASSERT_FATAL(coop_csr_create(be, m.nr, m.nc, m.rowptr, m.colind, m.val, NULL, &A) == 0);
  for (int s = COOP_CSR_SCHED_AUTO; s <= COOP_CSR_SCHED_STATIC; s++) {
    CU_ASSERT_EQUAL(coop_csr_set_schedule(A, s), 0);
    CU_ASSERT_EQUAL(A->schedule, s);
    CU_ASSERT_FATAL(coop_csr_spmv(A, x, y, 0) == 0);
    CU_ASSERT(memcmp(y, want, sizeof *y * (size_t)m.nr) == 0);
  }
  CU_ASSERT_EQUAL(coop_csr_set_schedule(A, 4), COOP_ERR_RUNTIME);
  CU_ASSERT_EQUAL(coop_csr_set_schedule(A, -1), COOP_ERR_RUNTIME);
  coop_error_clear();
  coop_csr_destroy(A);
  free(x);
  free(y);
  free(want);
  mat_free(&m);
}

static int run_suites(void) {
  static const coop_unit_test tests[] = {
      {"banded matrix", test_regular},
      {"rectangular, empty rows", test_rectangular},
      {"compressed rows", test_compressed_rows},
      {"one dense row", test_skewed},
      {"no nonzeros", test_empty},
      {"bytes moved", test_bytes},
      {"bad arrays refused", test_bad_arrays},
      {"schedule: host ignores it", test_host_schedule},
  };
  static const coop_unit_test tile_tests[] = {
      {"lanes per row, long rows", test_tile_lanes},
      {"tile row ranges and passes", test_tile_ranges},
      {"static shares, atomic takes", test_tile_static},
      {"schedule names", test_schedule_names},
  };
  int rc = coop_backend_host_create(&be);
  if (!rc) rc = COOP_UNIT_RUN("csr", tests);
  if (!rc) rc = COOP_UNIT_RUN("csr tiles", tile_tests);
#if COOP_HAVE_CUDA
  /* the device suite runs where a GPU is (tests/gpu_krylov.sh solves with it too) */
  static const coop_unit_test gpu_tests[] = {
      {"schedules: rows of 3 and of 10^4", test_gpu_heavy_rows},
      {"schedules: compressed rows", test_gpu_compressed},
  };
  if (!rc && coop_cuda_device_count() > 0 && !(rc = coop_backend_create("cuda", 0, &gpu))) {
    rc = COOP_UNIT_RUN("csr cuda", gpu_tests);
    coop_backend_destroy(gpu);
  }
#endif
  if (be) be->destroy(be);
  return rc;
}

int main(int argc, char **argv) { return coop_unit_mpi_main(argc, argv, run_suites); }
