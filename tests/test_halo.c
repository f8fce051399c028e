/* Halo exchange on the host backend at the current rank count: after one
 * exchange every ghost point inside the global grid (faces, edges, corners,
 * deep layers) holds its owner's value; points outside keep their poison. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/decomp.h"
#include "kernels/backend.h"
#include "kernels/halo.h"
#include "kernels/stencil.h"
#include "unit.h"

static double value_at(const int64_t gi[3]) { return 1e6 * gi[2] + 1e3 * gi[1] + gi[0] + 0.5; }

static void exchange_case(int ndim, int g, coop_precision prec) {
  const int64_t n[3] = {9, 8, ndim == 3 ? 7 : 1};
  const double h[3] = {1, 1, 1};
  coop_decomp d;
  coop_stencil s;
  coop_backend *be;
  coop_halo halo;
  CU_ASSERT_FATAL(coop_decomp_create(&d, MPI_COMM_WORLD, ndim, n, g) == 0);
  coop_stencil_init(&s, ndim, prec, d.n, g, h);
  CU_ASSERT_FATAL(coop_backend_host_create(&be) == 0);
  CU_ASSERT_FATAL(coop_halo_create(&halo, be, &s.grid, &d, 0) == 0);
  const size_t np = coop_grid_points(&s.grid);
  double *u64 = malloc(np * sizeof *u64);
  float *u32 = malloc(np * sizeof *u32);
  int64_t l[3];
  for (l[2] = -s.grid.g[2]; l[2] < s.grid.n[2] + s.grid.g[2]; l[2]++)
    for (l[1] = -s.grid.g[1]; l[1] < s.grid.n[1] + s.grid.g[1]; l[1]++)
      for (l[0] = -s.grid.g[0]; l[0] < s.grid.n[0] + s.grid.g[0]; l[0]++) {
        const int64_t p = coop_grid_index(&s.grid, l[0], l[1], l[2]);
        const int owned = l[0] >= 0 && l[0] < s.grid.n[0] && l[1] >= 0 && l[1] < s.grid.n[1] && l[2] >= 0 && l[2] < s.grid.n[2];
        const int64_t gi[3] = {d.offset[0] + l[0], d.offset[1] + l[1], d.offset[2] + l[2]};
        u64[p] = owned ? value_at(gi) : -1.0;
        u32[p] = (float)u64[p];
      }
  void *u = prec == COOP_FP32 ? (void *)u32 : (void *)u64;
  CU_ASSERT_FATAL(coop_halo_exchange(&halo, u) == 0);
  int64_t wrong = 0, checked = 0;
  for (l[2] = -s.grid.g[2]; l[2] < s.grid.n[2] + s.grid.g[2]; l[2]++)
    for (l[1] = -s.grid.g[1]; l[1] < s.grid.n[1] + s.grid.g[1]; l[1]++)
      for (l[0] = -s.grid.g[0]; l[0] < s.grid.n[0] + s.grid.g[0]; l[0]++) {
        const int64_t p = coop_grid_index(&s.grid, l[0], l[1], l[2]);
        const int64_t gi[3] = {d.offset[0] + l[0], d.offset[1] + l[1], d.offset[2] + l[2]};
        int inside = 1;
        for (int a = 0; a < 3; a++) inside &= gi[a] >= 0 && gi[a] < n[a];
        const double want = inside ? value_at(gi) : -1.0;
        const double got = prec == COOP_FP32 ? (double)u32[p] : u64[p];
        const double want_t = prec == COOP_FP32 ? (double)(float)want : want;
        wrong += got != want_t;
        checked++;
      }
  CU_ASSERT_EQUAL(wrong, 0);
  /* every stored point but the row padding (core/grid.c) */
  CU_ASSERT_EQUAL(checked, (int64_t)np / s.grid.ext[0] * (s.grid.n[0] + 2 * s.grid.g[0]));
  coop_halo_destroy(&halo);
  coop_backend_destroy(be);
  coop_decomp_destroy(&d);
  free(u64);
  free(u32);
}

static void test_regions(void) {
  const int64_t n[3] = {9, 8, 7};
  const double h[3] = {1, 1, 1};
  coop_stencil s;
  coop_region send[2], recv[2];
  coop_stencil_init(&s, 3, COOP_FP64, n, 2, h);
  coop_halo_regions(&s.grid, 1, send, recv); /* y: x ghosts included, z owned only */
  CU_ASSERT(send[0].lo[0] == -2 && send[0].hi[0] == 11);
  CU_ASSERT(send[0].lo[1] == 0 && send[0].hi[1] == 2);
  CU_ASSERT(send[1].lo[1] == 6 && send[1].hi[1] == 8);
  CU_ASSERT(recv[0].lo[1] == -2 && recv[0].hi[1] == 0);
  CU_ASSERT(recv[1].lo[1] == 8 && recv[1].hi[1] == 10);
  CU_ASSERT(send[0].lo[2] == 0 && send[0].hi[2] == 7);
  CU_ASSERT_EQUAL(coop_region_points(&send[0]), 13 * 2 * 7);
}

/* coop_halo_split on a halo with the given neighbours (bit 2a + side): every
 * owned point lies in exactly one part; the strips (all parts but the last)
 * hold exactly the points within g of a face with a neighbour. */
static void split_case(int dim, const int64_t n[3], int g, unsigned nbrs) {
  const double h[3] = {1, 1, 1};
  coop_stencil s;
  coop_stencil_init(&s, dim, COOP_FP64, n, g, h);
  coop_halo halo;
  memset(&halo, 0, sizeof halo);
  halo.s = &s.grid;
  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++)
      halo.nbr[a][side] = (nbrs >> (2 * a + side)) & 1u ? 0 : MPI_PROC_NULL;
  coop_region parts[2 * 3 + 1];
  const int np = coop_halo_split(&halo, parts);
  CU_ASSERT(np >= 0 && np <= 2 * dim);
  const coop_region own = coop_region_owned(&s.grid);
  int64_t bad = 0, points = 0;
  for (int64_t z = own.lo[2]; z < own.hi[2]; z++)
    for (int64_t y = own.lo[1]; y < own.hi[1]; y++)
      for (int64_t x = own.lo[0]; x < own.hi[0]; x++) {
        const int64_t p[3] = {x, y, z};
        int in = 0, strip = 0, near = 0;
        for (int i = 0; i <= np; i++) {
          int inside = 1;
          for (int a = 0; a < 3; a++) inside &= p[a] >= parts[i].lo[a] && p[a] < parts[i].hi[a];
          in += inside;
          strip |= inside && i < np;
        }
        for (int a = 0; a < dim; a++)
          near |= (halo.nbr[a][0] != MPI_PROC_NULL && p[a] < own.lo[a] + g) ||
                  (halo.nbr[a][1] != MPI_PROC_NULL && p[a] >= own.hi[a] - g);
        bad += in != 1 || strip != near;
        points++;
      }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(points, (int64_t)coop_grid_owned(&s.grid));
}

static void test_split(void) {
  const int64_t a[3] = {9, 8, 1}, thin[3] = {3, 2, 1}, cube[3] = {6, 5, 4}, one[3] = {5, 5, 5};
  split_case(2, a, 1, 0x0);   /* no neighbours: one part, the box */
  split_case(2, a, 2, 0xf);   /* all four faces, deep halo */
  split_case(2, a, 3, 0x9);   /* x lo, y hi */
  split_case(2, thin, 2, 0xf); /* thinner than two ghost widths: the strips take it all */
  split_case(2, thin, 3, 0x3); /* as thin as the ghost width along x */
  split_case(3, cube, 2, 0x3f);
  split_case(3, cube, 1, 0x24); /* y lo, z hi */
  split_case(3, one, 2, 0x30);  /* z only */
}

static void test_2d_g1(void) { exchange_case(2, 1, COOP_FP64); }
static void test_2d_g2(void) { exchange_case(2, 2, COOP_FP64); }
static void test_3d_g1(void) { exchange_case(3, 1, COOP_FP64); }
static void test_3d_g2_fp32(void) { exchange_case(3, 2, COOP_FP32); }

COOP_UNIT_MPI_MAIN("halo",
                   {"regions", test_regions},
                   {"split into strips and interior", test_split},
                   {"2D ghost 1", test_2d_g1},
                   {"2D ghost 2 (corners)", test_2d_g2},
                   {"3D ghost 1", test_3d_g1},
                   {"3D ghost 2 fp32", test_3d_g2_fp32})
