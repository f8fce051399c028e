/* Decomposition: even splits, factors per axis, and boxes that tile the
 * global grid with consistent neighbours at the current rank count. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/decomp.h"
#include "core/error.h"
#include "unit.h"

static void test_split(void) {
  for (int64_t n = 1; n <= 40; n++)
    for (int parts = 1; parts <= 9 && parts <= n; parts++) {
      int64_t next = 0, lo = n, hi = 0;
      for (int c = 0; c < parts; c++) {
        int64_t count, offset;
        coop_decomp_split(n, parts, c, &count, &offset);
        CU_ASSERT_EQUAL(offset, next);
        next = offset + count;
        if (count < lo) lo = count;
        if (count > hi) hi = count;
      }
      CU_ASSERT_EQUAL(next, n);
      CU_ASSERT(hi - lo <= 1);
    }
}

static void test_dims(void) {
  const int64_t long_y[3] = {10, 1000, 1}, cube[3] = {50, 50, 50}, long_z[3] = {8, 8, 64};
  int dims[3];
  CU_ASSERT_EQUAL(coop_decomp_dims(6, 2, long_y, dims), 0);
  CU_ASSERT(dims[0] == 2 && dims[1] == 3 && dims[2] == 1);
  CU_ASSERT_EQUAL(coop_decomp_dims(12, 3, cube, dims), 0);
  CU_ASSERT_EQUAL(dims[0] * dims[1] * dims[2], 12);
  CU_ASSERT(dims[2] >= dims[1] && dims[1] >= dims[0]); /* a cube: the larger factors on the slower axes */
  CU_ASSERT_EQUAL(coop_decomp_dims(4, 3, long_z, dims), 0);
  CU_ASSERT(dims[2] == 2 && dims[0] * dims[1] == 2);
  const int64_t ties[3] = {5, 5, 10}; /* z longest, then y before x (contiguous faces) */
  CU_ASSERT_EQUAL(coop_decomp_dims(12, 3, ties, dims), 0);
  CU_ASSERT(dims[2] == 3 && dims[0] == 2 && dims[1] == 2);
  CU_ASSERT_EQUAL(coop_decomp_dims(8, 3, ties, dims), 0);
  CU_ASSERT(dims[2] == 2 && dims[0] == 2 && dims[1] == 2);
  CU_ASSERT_EQUAL(coop_decomp_dims(18, 3, ties, dims), 0);
  CU_ASSERT(dims[2] == 3 && dims[1] == 3 && dims[0] == 2);
  const int64_t square[3] = {64, 64, 1}; /* a tie in 2D: cut across y, rows stay whole */
  CU_ASSERT_EQUAL(coop_decomp_dims(2, 2, square, dims), 0);
  CU_ASSERT(dims[0] == 1 && dims[1] == 2);
  CU_ASSERT_EQUAL(coop_decomp_dims(2, 3, cube, dims), 0);
  CU_ASSERT(dims[0] == 1 && dims[1] == 1 && dims[2] == 2);
  CU_ASSERT_EQUAL(coop_decomp_dims(7, 2, cube, dims), 0);
  CU_ASSERT_EQUAL(dims[0] * dims[1], 7);
}

/* Every global point owned exactly once; each neighbour box abuts ours. */
static void check_tiling(int ndim, const int64_t n[3]) {
  coop_decomp d;
  int size, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CU_ASSERT_FATAL(coop_decomp_create(&d, MPI_COMM_WORLD, ndim, n, 1) == 0);
  int64_t box[6] = {d.n[0], d.n[1], d.n[2], d.offset[0], d.offset[1], d.offset[2]};
  int64_t *all = malloc(sizeof box * (size_t)size);
  MPI_Allgather(box, 6, MPI_INT64_T, all, 6, MPI_INT64_T, d.cart);
  const int64_t total = n[0] * n[1] * (ndim == 3 ? n[2] : 1);
  int *owner = calloc((size_t)total, sizeof *owner);
  for (int r = 0; r < size; r++) {
    const int64_t *b = all + 6 * r;
    for (int64_t k = b[5]; k < b[5] + b[2]; k++)
      for (int64_t j = b[4]; j < b[4] + b[1]; j++)
        for (int64_t i = b[3]; i < b[3] + b[0]; i++) owner[i + n[0] * (j + n[1] * k)]++;
  }
  int64_t once = 0;
  for (int64_t p = 0; p < total; p++) once += owner[p] == 1;
  CU_ASSERT_EQUAL(once, total);
  for (int a = 0; a < ndim; a++) {
    if (d.nbr_hi[a] != MPI_PROC_NULL) {
      const int64_t *b = all + 6 * d.nbr_hi[a];
      CU_ASSERT_EQUAL(b[3 + a], d.offset[a] + d.n[a]);
    } else {
      CU_ASSERT_EQUAL(d.offset[a] + d.n[a], n[a]);
    }
    if (d.nbr_lo[a] != MPI_PROC_NULL) {
      const int64_t *b = all + 6 * d.nbr_lo[a];
      CU_ASSERT_EQUAL(b[3 + a] + b[a], d.offset[a]);
    } else {
      CU_ASSERT_EQUAL(d.offset[a], 0);
    }
  }
  free(owner);
  free(all);
  coop_decomp_destroy(&d);
}

static void test_tiling_2d(void) {
  const int64_t n[3] = {7, 5, 1};
  check_tiling(2, n);
}

static void test_tiling_3d(void) {
  const int64_t n[3] = {5, 6, 7};
  check_tiling(3, n);
}

static void test_too_small(void) {
  coop_decomp d;
  const int64_t n[3] = {3, 3, 1};
  CU_ASSERT_EQUAL(coop_decomp_create(&d, MPI_COMM_WORLD, 2, n, 4), COOP_ERR_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(coop_error_message(), "too small for"));
  coop_decomp_destroy(&d);
}

COOP_UNIT_MPI_MAIN("decomp",
                   {"split", test_split},
                   {"ranks per axis", test_dims},
                   {"2D boxes tile the grid", test_tiling_2d},
                   {"3D boxes tile the grid", test_tiling_3d},
                   {"too small a grid is an input error", test_too_small})
