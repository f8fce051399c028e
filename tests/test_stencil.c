/* Host stencil and Jacobi: one relaxation step against the formula (and its
 * fused residual against the separate one), pack/unpack, and convergence to
 * the known discrete solution of the sine problem. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "solvers/relax/relax_plan.h"
#include "solvers/stop.h"
#include "problem/poisson.h"
#include "kernels/stencil.h"
#include "unit.h"

static double frand(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (double)((*seed >> 8) & 0xffff) / 65536.0 - 0.5;
}

static void test_sweep_formula(void) {
  for (int ndim = 2; ndim <= 3; ndim++) {
    const int64_t n[3] = {7, 5, 4};
    const double h[3] = {0.1, 0.2, 0.25};
    coop_stencil s;
    coop_stencil_init(&s, ndim, COOP_FP64, n, 2, h);
    const size_t np = coop_grid_points(&s.grid);
    double *u = malloc(np * 8), *un = malloc(np * 8), *f = malloc(np * 8);
    unsigned seed = 7u + (unsigned)ndim;
    for (size_t i = 0; i < np; i++) {
      u[i] = frand(&seed);
      f[i] = frand(&seed);
      un[i] = NAN; /* poison: every point of the region must be written */
    }
    const coop_region r = {{-1, 0, ndim == 3 ? -1 : 0}, {8, 5, ndim == 3 ? 5 : 1}};
    const double c = 0.7 * s.inv_diag;
    double fused = -1, sep = -2;
    coop_relax_host(&s, &r, c, u, un, f, &fused);
    const double w[3] = {1 / (h[0] * h[0]), 1 / (h[1] * h[1]), ndim == 3 ? 1 / (h[2] * h[2]) : 0};
    int bad = 0, written = 0;
    for (int64_t k = -s.grid.g[2]; k < n[2] + s.grid.g[2] && k < (ndim == 3 ? 99 : 1); k++)
      for (int64_t j = -2; j < n[1] + 2; j++)
        for (int64_t i = -2; i < n[0] + 2; i++) {
          const int64_t p = coop_grid_index(&s.grid, i, j, k);
          const int in = i >= r.lo[0] && i < r.hi[0] && j >= r.lo[1] && j < r.hi[1] &&
                         k >= r.lo[2] && k < r.hi[2];
          if (!in) {
            bad += !isnan(un[p]); /* outside the region nothing is written */
            continue;
          }
          written++;
          double lap = w[0] * (u[p - 1] + u[p + 1]) + w[1] * (u[coop_grid_index(&s.grid, i, j - 1, k)] +
                                                            u[coop_grid_index(&s.grid, i, j + 1, k)]);
          if (ndim == 3)
            lap += w[2] * (u[coop_grid_index(&s.grid, i, j, k - 1)] + u[coop_grid_index(&s.grid, i, j, k + 1)]);
          const double want = u[p] + c * (f[p] + lap - 2 * (w[0] + w[1] + w[2]) * u[p]);
          bad += fabs(un[p] - want) > 1e-13 * (1 + fabs(want));
        }
    CU_ASSERT_EQUAL(written, (int)coop_region_points(&r));
    CU_ASSERT_EQUAL(bad, 0);
    /* the region reaches into the ghosts: only owned points count */
    coop_residual_host(&s, u, f, &sep);
    CU_ASSERT(fabs(fused - sep) <= 1e-12 * sep);
    /* a zero right-hand side is not read */
    double fz = -1, fs = -2;
    coop_relax_host(&s, &r, c, u, un, NULL, &fz);
    for (size_t i = 0; i < np; i++) f[i] = 0;
    coop_residual_host(&s, u, f, &fs);
    CU_ASSERT(fabs(fz - fs) <= 1e-12 * fs);
    free(u);
    free(un);
    free(f);
  }
}

static void test_pack_unpack(void) {
  for (int prec = 0; prec < 2; prec++) {
    const int64_t n[3] = {6, 4, 3};
    const double h[3] = {1, 1, 1};
    coop_stencil s;
    coop_stencil_init(&s, 3, (coop_precision)prec, n, 2, h);
    const size_t np = coop_grid_points(&s.grid), es = coop_prec_size(s.grid.prec);
    unsigned char *u = malloc(np * es), *v = calloc(np, es), *buf = malloc(np * es);
    for (size_t i = 0; i < np; i++) {
      if (prec) ((float *)u)[i] = (float)i + 0.5f;
      else ((double *)u)[i] = (double)i + 0.25;
    }
    const coop_region r = {{-2, 1, -1}, {3, 4, 4}};
    coop_pack_host(&s.grid, &r, u, buf);
    /* first packed value is point (-2, 1, -1), x fastest after it */
    const int64_t p0 = coop_grid_index(&s.grid, -2, 1, -1), p1 = coop_grid_index(&s.grid, -1, 1, -1);
    CU_ASSERT(memcmp(buf, u + p0 * es, es) == 0);
    CU_ASSERT(memcmp(buf + es, u + p1 * es, es) == 0);
    coop_unpack_host(&s.grid, &r, v, buf);
    int64_t same = 0, zero = 0, inside = coop_region_points(&r);
    for (int64_t k = -2; k < 5; k++)
      for (int64_t j = -2; j < 6; j++)
        for (int64_t i = -2; i < 8; i++) {
          const int64_t p = coop_grid_index(&s.grid, i, j, k);
          const int in = i >= -2 && i < 3 && j >= 1 && j < 4 && k >= -1 && k < 4;
          if (in) same += memcmp(u + p * es, v + p * es, es) == 0;
          else zero += (prec ? ((float *)v)[p] == 0 : ((double *)v)[p] == 0);
        }
    CU_ASSERT_EQUAL(same, inside);
    /* every other point but the row padding (core/grid.c) stays zero */
    CU_ASSERT_EQUAL(zero, (int64_t)np / s.grid.ext[0] * 10 - inside);
    free(u);
    free(v);
    free(buf);
  }
}

/* One rank owning the whole box: the decomposition without MPI. */
static coop_decomp whole_box(int ndim, const int64_t n[3]) {
  coop_decomp d;
  memset(&d, 0, sizeof d);
  d.ndim = ndim;
  for (int a = 0; a < 3; a++) {
    d.global_n[a] = d.n[a] = a < ndim ? n[a] : 1;
    d.dims[a] = 1;
  }
  return d;
}

/* The sine mode is an eigenvector of the discrete Laplacian too, so the
 * discrete solution is known exactly: u_h = (lambda / lambda_h) u. */
static double discrete_scale(const coop_problem *p) {
  double lam = 0, lam_h = 0;
  for (int a = 0; a < p->ndim; a++) {
    const double k = p->mode * M_PI / p->len[a], sn = sin(k * p->h[a] / 2);
    lam += k * k;
    lam_h += 4 * sn * sn / (p->h[a] * p->h[a]);
  }
  return lam / lam_h;
}

static void solve_sine(int ndim, coop_precision prec, double tol) {
  const int64_t n[3] = {12, 9, 7};
  const double len[3] = {1.0, 1.5, 0.8};
  coop_problem p;
  coop_stencil s;
  coop_backend *be;
  CU_ASSERT_FATAL(coop_problem_init(&p, "sine", ndim, 1, len, n) == 0);
  coop_decomp d = whole_box(ndim, n);
  coop_stencil_init(&s, ndim, prec, n, 1, p.h);
  const size_t bytes = coop_grid_points(&s.grid) * coop_prec_size(s.grid.prec);
  void *u = malloc(bytes), *un = malloc(bytes), *f = malloc(bytes), *own = malloc(bytes);
  coop_problem_fill(&p, &d, &s, u, f);
  memcpy(un, u, bytes);
  CU_ASSERT_FATAL(coop_backend_host_create(&be) == 0);
  const coop_region r = coop_region_owned(&s.grid);
  double r0, rn;
  coop_stencil_residual(be, &s, u, f, &r0);
  for (int it = 0; it < 4000; it++) {
    coop_stencil_relax(be, &s, &r, s.inv_diag, u, un, f, NULL, 0);
    void *t = u;
    u = un;
    un = t;
  }
  coop_stencil_residual(be, &s, u, f, &rn);
  CU_ASSERT(sqrt(rn) < tol * sqrt(r0));
  coop_pack_host(&s.grid, &r, u, own);
  /* compare with the discrete solution at every point */
  const double scale = discrete_scale(&p);
  double worst = 0;
  int64_t q = 0;
  for (int64_t k = 0; k < s.grid.n[2]; k++)
    for (int64_t j = 0; j < s.grid.n[1]; j++)
      for (int64_t i = 0; i < s.grid.n[0]; i++, q++) {
        const double x[3] = {(i + 1) * p.h[0], (j + 1) * p.h[1], (k + 1) * p.h[2]};
        const double v = prec == COOP_FP32 ? ((float *)own)[q] : ((double *)own)[q];
        worst = fmax(worst, fabs(v - scale * coop_problem_exact(&p, x)));
      }
  CU_ASSERT(worst < tol);
  coop_backend_destroy(be);
  free(u);
  free(un);
  free(f);
  free(own);
}

static void test_jacobi_2d(void) { solve_sine(2, COOP_FP64, 1e-10); }
static void test_jacobi_3d(void) { solve_sine(3, COOP_FP64, 1e-10); }
static void test_jacobi_fp32(void) { solve_sine(2, COOP_FP32, 2e-5); }

static void test_converged(void) {
  CU_ASSERT_EQUAL(coop_stop_test(NAN, 1, 1, 10, 1e-6, 0, 0), COOP_DIVERGED_NAN);
  CU_ASSERT_EQUAL(coop_stop_test(INFINITY, 1, 1, 10, 1e-6, 0, 1e5), COOP_DIVERGED_NAN);
  CU_ASSERT_EQUAL(coop_stop_test(1e-7, 1, 1, 10, 1e-6, 0, 1e5), COOP_CONVERGED_RTOL);
  CU_ASSERT_EQUAL(coop_stop_test(1e-5, 1, 1, 10, 1e-6, 0, 1e5), COOP_REASON_NONE);
  CU_ASSERT_EQUAL(coop_stop_test(1e-5, 1, 1, 10, 1e-6, 1e-4, 1e5), COOP_CONVERGED_ATOL);
  CU_ASSERT_EQUAL(coop_stop_test(2e5, 1, 1, 10, 1e-6, 0, 1e5), COOP_DIVERGED_DTOL);
  CU_ASSERT_EQUAL(coop_stop_test(2e5, 1, 1, 10, 1e-6, 0, 0), COOP_REASON_NONE); /* dtol off */
  CU_ASSERT_EQUAL(coop_stop_test(1e-5, 1, 10, 10, 1e-6, 0, 1e5), COOP_DIVERGED_ITS);
  CU_ASSERT_EQUAL(coop_stop_test(1e-7, 1, 10, 10, 1e-6, 0, 1e5), COOP_CONVERGED_RTOL);
  CU_ASSERT_STRING_EQUAL(coop_reason_name(COOP_DIVERGED_INDEFINITE_PC), "diverged_indefinite_pc");
  CU_ASSERT_STRING_EQUAL(coop_reason_name(COOP_COMPLETED), "completed");
  CU_ASSERT(!coop_reason_converged(COOP_COMPLETED));
}

/* The shared-memory resident plan (H200: 132 SMs, 232448 bytes of shared
 * memory a block less 272 static): the boxes of bench/results/
 * 2026-12-01-h200-smem-resident.md, then the limits. */
static void test_smem_plan(void) {
  const int64_t room = 232448 - 272;
  coop_smem_fit f;
  /* 2048^2 fp32: 514 chunks, 544 threads, 16 rows; two bands do not fit:
   * checks replay from a checkpoint of 2050 rows */
  CU_ASSERT_EQUAL(coop_smem_plan_fit(514, 2048, 4, 0, 132, room, &f), 1);
  CU_ASSERT(f.blocks == 132 && f.threads == 544 && f.rows == 16 && !f.save && !f.f_smem && f.replay);
  CU_ASSERT_EQUAL(f.ckpt_bytes, 2050LL * 544 * 16);
  CU_ASSERT_EQUAL(f.bytes, 16LL * 544 * 16 + 2 * 2 * 16 * 17 * 4);
  /* 2048 x 1024 fp32: 8 rows, two bands fit: a check keeps the field aside */
  CU_ASSERT_EQUAL(coop_smem_plan_fit(514, 1024, 4, 0, 132, room, &f), 1);
  CU_ASSERT(f.rows == 8 && f.save && f.bytes == 2LL * 8 * 544 * 16 + 2 * 2 * 8 * 17 * 4);
  CU_ASSERT(!f.replay && f.ckpt_bytes == 0);
  /* 1001 x 1500 fp64 with f: 502 chunks, 12 rows; saved, f from L2 */
  CU_ASSERT_EQUAL(coop_smem_plan_fit(502, 1500, 8, 1, 132, room, &f), 1);
  CU_ASSERT(f.threads == 512 && f.rows == 12 && f.save && !f.f_smem);
  /* 3500 x 60 fp32 with f: fewer rows than SMs, one row a band, f beside it */
  CU_ASSERT_EQUAL(coop_smem_plan_fit(877, 60, 4, 1, 132, room, &f), 1);
  CU_ASSERT(f.blocks == 60 && f.rows == 1 && f.threads == 896 && f.save && f.f_smem);
  /* the largest row, one chunk more, a band too tall for the memory */
  CU_ASSERT_EQUAL(coop_smem_plan_fit(1024, 132, 4, 0, 132, room, &f), 1);
  CU_ASSERT_EQUAL(f.threads, 1024);
  CU_ASSERT_EQUAL(coop_smem_plan_fit(1025, 132, 4, 0, 132, room, &f), 0);
  CU_ASSERT_EQUAL(coop_smem_plan_fit(514, 132 * 25 + 1, 4, 0, 132, room, &f), 0);
  CU_ASSERT_EQUAL(coop_smem_plan_fit(514, 132 * 25, 4, 0, 132, room, &f), 1);
  /* the shapes measured: 8 warps a block at least, 64 rows a band at most
   * (30 x 30000 fp32 would march 228 rows with one warp a SM) */
  CU_ASSERT_EQUAL(coop_smem_plan_fit(225, 132 * 50, 4, 0, 132, room, &f), 1);
  CU_ASSERT(f.threads == 256 && f.rows == 50);
  CU_ASSERT_EQUAL(coop_smem_plan_fit(225, 132 * 64 + 1, 4, 0, 132, 1LL << 40, &f), 0);
  CU_ASSERT_EQUAL(coop_smem_plan_fit(225, 132 * 64, 4, 0, 132, 1LL << 40, &f), 1);
  CU_ASSERT_EQUAL(coop_smem_plan_fit(224, 132, 4, 0, 132, room, &f), 0);
  CU_ASSERT_EQUAL(coop_smem_plan_fit(225, 132 * 64 + 1, 4, 0, 132, room, &f), 0);
  CU_ASSERT_EQUAL(coop_smem_plan_fit(9, 30000, 4, 1, 132, room, &f), 0);
  /* sizes that would overflow a product, and nonsense: no plan, no trap */
  CU_ASSERT_EQUAL(coop_smem_plan_fit(514, INT64_MAX, 4, 1, 132, room, &f), 0);
  CU_ASSERT_EQUAL(coop_smem_plan_fit(514, INT64_MAX / 2, 8, 1, 1, INT64_MAX, &f), 0);
  CU_ASSERT_EQUAL(coop_smem_plan_fit(0, 10, 4, 0, 132, room, &f), 0);
  CU_ASSERT_EQUAL(coop_smem_plan_fit(300, 10, 4, 0, 0, room, &f), 0);
  CU_ASSERT_EQUAL(coop_smem_plan_fit(300, 10, 2, 0, 132, room, &f), 0);
  CU_ASSERT_EQUAL(f.blocks, 0); /* cleared on refusal */
}

/* tune.fused_halo = auto: the H200's 60 MB L2 (62914560 bytes) and the boxes
 * measured on either side of 12 times it */
static void test_fused_fits(void) {
  const int64_t l2 = 62914560;
  CU_ASSERT_EQUAL(coop_fused_halo_fits(2LL * 4096 * 2048 * 4, l2), 1);  /* 4096^2 fp32 on 2 ranks */
  CU_ASSERT_EQUAL(coop_fused_halo_fits(2LL * 8192 * 4096 * 8, l2), 1);  /* 8192^2 fp64 */
  CU_ASSERT_EQUAL(coop_fused_halo_fits(2LL * 16384 * 8192 * 4, l2), 0); /* 16384^2 fp32 */
  CU_ASSERT_EQUAL(coop_fused_halo_fits(12 * l2, l2), 1);
  CU_ASSERT_EQUAL(coop_fused_halo_fits(12 * l2 + 1, l2), 0);
  CU_ASSERT_EQUAL(coop_fused_halo_fits(INT64_MAX, l2), 0);
  CU_ASSERT_EQUAL(coop_fused_halo_fits(-1, l2), 0);
  CU_ASSERT_EQUAL(coop_fused_halo_fits(INT64_MAX, 0), 1);             /* L2 unknown: fused */
  CU_ASSERT_EQUAL(coop_fused_halo_fits(INT64_MAX, INT64_MAX / 4), 1); /* no overflow in l2 * 12 */
}

COOP_UNIT_MAIN("stencil",
               {"shared-memory resident plan", test_smem_plan},
               {"fused halo: the box against the L2", test_fused_fits},
               {"sweep matches the formula, region only", test_sweep_formula},
               {"pack/unpack regions with ghosts", test_pack_unpack},
               {"jacobi 2D reaches the discrete solution", test_jacobi_2d},
               {"jacobi 3D reaches the discrete solution", test_jacobi_3d},
               {"jacobi fp32", test_jacobi_fp32},
               {"stop test", test_converged})
