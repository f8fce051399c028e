/* The multigrid hierarchy on the host (solvers/mg/mg_level.h): cycles reach
 * the solution of the same discretisation that a dense LU solve gives (even,
 * odd and uneven sizes, 2D and 3D, every cycle and smoother), restriction is
 * the volume-weighted transpose of interpolation, the symmetric cycle is a
 * symmetric operator, fp32 reaches its rounding floor, and a grid that
 * cannot be coarsened is an input error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/stencil.h"
#include "solvers/mg/mg_level.h"
#include "unit.h"

static double frand(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (double)((*seed >> 8) & 0xffff) / 65536.0 - 0.5;
}

static void make_stencil(coop_stencil *s, int ndim, coop_precision prec, const int64_t n[3]) {
  const double len[3] = {1.0, 0.8, 1.3};
  double h[3];
  for (int a = 0; a < 3; a++) h[a] = len[a] / (double)(n[a] + 1);
  coop_stencil_init(s, ndim, prec, n, 1, h);
}

/* The owned points of level 0, x fastest, as doubles. */
static void owned(const coop_mg_level *L, const void *a, double *out) {
  int64_t q = 0;
  for (int64_t k = 0; k < L->grid.n[2]; k++)
    for (int64_t j = 0; j < L->grid.n[1]; j++)
      for (int64_t i = 0; i < L->grid.n[0]; i++, q++) {
        const int64_t p = coop_grid_index(&L->grid, i, j, k);
        out[q] = L->grid.prec == COOP_FP32 ? (double)((const float *)a)[p] : ((const double *)a)[p];
      }
}

static void set_owned(const coop_mg_level *L, void *a, const double *in) {
  int64_t q = 0;
  for (int64_t k = 0; k < L->grid.n[2]; k++)
    for (int64_t j = 0; j < L->grid.n[1]; j++)
      for (int64_t i = 0; i < L->grid.n[0]; i++, q++) {
        const int64_t p = coop_grid_index(&L->grid, i, j, k);
        if (L->grid.prec == COOP_FP32)
          ((float *)a)[p] = (float)in[q];
        else
          ((double *)a)[p] = in[q];
      }
}

/* x = A^-1 b for the 5/7-point operator of s, zero boundary: dense LU with
 * partial pivoting, independent of the code under test. */
static void dense_solve(const coop_stencil *s, const double *b, double *x) {
  const int64_t *n = s->grid.n, N = n[0] * n[1] * n[2];
  double *A = calloc((size_t)(N * N), sizeof *A);
  for (int64_t k = 0; k < n[2]; k++)
    for (int64_t j = 0; j < n[1]; j++)
      for (int64_t i = 0; i < n[0]; i++) {
        const int64_t p = i + n[0] * (j + n[1] * k), l[3] = {i, j, k}, st[3] = {1, n[0], n[0] * n[1]};
        for (int a = 0; a < s->grid.ndim; a++) {
          A[p * N + p] += 2.0 * s->w[a];
          if (l[a] > 0) A[p * N + p - st[a]] = -s->w[a];
          if (l[a] < n[a] - 1) A[p * N + p + st[a]] = -s->w[a];
        }
      }
  memcpy(x, b, (size_t)N * sizeof *x);
  for (int64_t c = 0; c < N; c++) {
    int64_t piv = c;
    for (int64_t r = c + 1; r < N; r++)
      if (fabs(A[r * N + c]) > fabs(A[piv * N + c])) piv = r;
    if (piv != c) {
      for (int64_t m = 0; m < N; m++) {
        const double t = A[c * N + m];
        A[c * N + m] = A[piv * N + m], A[piv * N + m] = t;
      }
      const double t = x[c];
      x[c] = x[piv], x[piv] = t;
    }
    for (int64_t r = c + 1; r < N; r++) {
      const double m = A[r * N + c] / A[c * N + c];
      if (m == 0.0) continue;
      for (int64_t q = c; q < N; q++) A[r * N + q] -= m * A[c * N + q];
      x[r] -= m * x[c];
    }
  }
  for (int64_t r = N - 1; r >= 0; r--) {
    double t = x[r];
    for (int64_t q = r + 1; q < N; q++) t -= A[r * N + q] * x[q];
    x[r] = t / A[r * N + r];
  }
  free(A);
}

/* Cycles of (cycle, smoother) from zero until the residual stops falling;
 * the result against the dense solve, to 1e-10 relative. */
static void converge_to_direct(int ndim, const int64_t n[3], coop_mg_cycle_type cycle, coop_mg_smoother sm) {
  coop_stencil s;
  make_stencil(&s, ndim, COOP_FP64, n);
  coop_mg_hier h;
  CU_ASSERT_FATAL(coop_mg_hier_create(&h, &s, NULL, NULL, NULL, NULL) == 0);
  h.cycle = cycle;
  h.smoother = sm;
  h.pre = h.post = 2;
  h.omega = ndim == 3 ? 6.0 / 7.0 : 0.8;
  const int64_t N = n[0] * n[1] * (ndim == 3 ? n[2] : 1);
  double *b = malloc((size_t)N * sizeof *b), *x = malloc((size_t)N * sizeof *x), *u = malloc((size_t)N * sizeof *u);
  unsigned seed = 11u + (unsigned)(n[0] * 7 + n[1]);
  for (int64_t q = 0; q < N; q++) b[q] = frand(&seed);
  set_owned(&h.lev[0], h.lev[0].f, b);
  double r0 = 0, rn = 0;
  CU_ASSERT(h.ops->residual(&h, 0, &r0) == 0);
  int cycles = 0;
  for (; cycles < 40; cycles++) {
    CU_ASSERT_FATAL(coop_mg_cycle(&h, 0) == 0);
    CU_ASSERT(h.ops->residual(&h, 0, &rn) == 0);
    if (sqrt(rn) < 1e-14 * sqrt(r0)) break;
  }
  CU_ASSERT(cycles < (sm == COOP_MG_JACOBI ? 40 : 20));
  dense_solve(&s, b, x);
  owned(&h.lev[0], h.lev[0].u, u);
  double emax = 0, xmax = 0;
  for (int64_t q = 0; q < N; q++) {
    emax = fmax(emax, fabs(u[q] - x[q]));
    xmax = fmax(xmax, fabs(x[q]));
  }
  if (!(emax <= 1e-10 * xmax))
    fprintf(stderr, "\n%lldx%lldx%lld cycle %d smoother %d: max error %g of %g after %d cycles\n", (long long)n[0],
            (long long)n[1], (long long)n[2], cycle, sm, emax, xmax, cycles);
  CU_ASSERT(emax <= 1e-10 * xmax);
  free(b);
  free(x);
  free(u);
  coop_mg_hier_destroy(&h);
}

static void test_direct_2d(void) {
  static const int64_t sizes[][3] = {{15, 15, 1}, {16, 16, 1}, {33, 17, 1}, {40, 9, 1}, {64, 2, 1}, {101, 77, 1}};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    if (sizes[i][0] * sizes[i][1] > 2500) continue; /* the dense solve's limit here */
    converge_to_direct(2, sizes[i], COOP_MG_V, COOP_MG_RBGS);
  }
  const int64_t odd[3] = {45, 30, 1};
  converge_to_direct(2, odd, COOP_MG_W, COOP_MG_RBGS);
  converge_to_direct(2, odd, COOP_MG_F, COOP_MG_JACOBI);
}

static void test_direct_3d(void) {
  static const int64_t sizes[][3] = {{7, 7, 7}, {8, 6, 5}, {13, 9, 11}, {12, 3, 10}};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) converge_to_direct(3, sizes[i], COOP_MG_V, COOP_MG_RBGS);
  converge_to_direct(3, sizes[2], COOP_MG_W, COOP_MG_JACOBI);
}

/* The levels of a size that must coarsen below COOP_MG_COARSE_MAX: even and
 * odd axes shrink to n / 2, and the coarsest is small. */
static void test_levels(void) {
  const int64_t n[3] = {1000, 77, 1};
  coop_stencil s;
  make_stencil(&s, 2, COOP_FP64, n);
  coop_mg_hier h;
  CU_ASSERT_FATAL(coop_mg_hier_create(&h, &s, NULL, NULL, NULL, NULL) == 0);
  CU_ASSERT(h.nlev >= 3);
  CU_ASSERT(coop_mg_level_points(&h, h.nlev - 1) <= COOP_MG_COARSE_MAX);
  for (int l = 0; l + 1 < h.nlev; l++)
    for (int a = 0; a < 2; a++)
      CU_ASSERT(h.lev[l + 1].grid.n[a] == (h.lev[l].coarsened[a] ? h.lev[l].grid.n[a] / 2 : h.lev[l].grid.n[a]));
  /* intervals still span the box */
  for (int a = 0; a < 2; a++) {
    double span = 0;
    const coop_mg_level *C = &h.lev[h.nlev - 1];
    for (int64_t i = 0; i <= C->grid.n[a]; i++) span += C->gap[a][i];
    CU_ASSERT(fabs(span - (a ? 0.8 : 1.0)) < 1e-12);
  }
  coop_mg_hier_destroy(&h);
}

/* (R r, v) weighted by the coarse volumes equals (r, P v) weighted by the
 * fine ones, on uneven sizes where the last interval is short. */
static void test_transfer_adjoint(void) {
  const int64_t n[3] = {10, 7, 6};
  coop_stencil s;
  make_stencil(&s, 3, COOP_FP64, n);
  coop_mg_hier h;
  CU_ASSERT_FATAL(coop_mg_hier_create(&h, &s, NULL, NULL, NULL, NULL) == 0);
  CU_ASSERT_FATAL(h.nlev >= 2);
  const coop_mg_level *F = &h.lev[0], *C = &h.lev[1];
  unsigned seed = 5;
  const int64_t nf = coop_mg_level_points(&h, 0), nc = coop_mg_level_points(&h, 1);
  double *r = malloc((size_t)nf * 8), *v = malloc((size_t)nc * 8), *a = malloc((size_t)nf * 8),
         *b = malloc((size_t)nc * 8);
  for (int64_t q = 0; q < nf; q++) r[q] = frand(&seed);
  for (int64_t q = 0; q < nc; q++) v[q] = frand(&seed);
  set_owned(F, F->r, r);
  CU_ASSERT(h.ops->restrict_residual(&h, 0) == 0); /* f(C) = R r, u(C) = 0 */
  owned(C, C->f, b);
  set_owned(C, C->u, v);
  memset(F->u, 0, coop_grid_points(&F->grid) * 8);
  CU_ASSERT(h.ops->prolong_add(&h, 0) == 0); /* u(F) = P v */
  owned(F, F->u, a);
  double lhs = 0, rhs = 0;
  int64_t q = 0;
  for (int64_t k = 0; k < C->grid.n[2]; k++)
    for (int64_t j = 0; j < C->grid.n[1]; j++)
      for (int64_t i = 0; i < C->grid.n[0]; i++, q++) lhs += C->vol[0][i] * C->vol[1][j] * C->vol[2][k] * b[q] * v[q];
  q = 0;
  for (int64_t k = 0; k < F->grid.n[2]; k++)
    for (int64_t j = 0; j < F->grid.n[1]; j++)
      for (int64_t i = 0; i < F->grid.n[0]; i++, q++) rhs += F->vol[0][i] * F->vol[1][j] * F->vol[2][k] * r[q] * a[q];
  CU_ASSERT(fabs(lhs - rhs) <= 1e-13 * fabs(rhs));
  /* a constant restricts to the same constant away from the boundary */
  for (int64_t p = 0; p < nf; p++) r[p] = 1.0;
  set_owned(F, F->r, r);
  CU_ASSERT(h.ops->restrict_residual(&h, 0) == 0);
  owned(C, C->f, b);
  CU_ASSERT(fabs(b[1 + C->grid.n[0] * (1 + C->grid.n[1] * 1)] - 1.0) < 1e-14);
  free(r), free(v), free(a), free(b);
  coop_mg_hier_destroy(&h);
}

/* One symmetric cycle from zero, B, as cg takes it: (B x, y) = (x, B y). */
static void test_symmetric_cycle(void) {
  for (int sm = 0; sm < 2; sm++) {
    const int64_t n[3] = {37, 22, 1};
    coop_stencil s;
    make_stencil(&s, 2, COOP_FP64, n);
    coop_mg_hier h;
    CU_ASSERT_FATAL(coop_mg_hier_create(&h, &s, NULL, NULL, NULL, NULL) == 0);
    h.cycle = COOP_MG_V;
    h.smoother = (coop_mg_smoother)sm;
    h.pre = h.post = 2;
    h.omega = 0.8;
    h.symmetric = 1;
    const int64_t N = coop_mg_level_points(&h, 0);
    double *x = malloc((size_t)N * 8), *y = malloc((size_t)N * 8), *bx = malloc((size_t)N * 8),
           *by = malloc((size_t)N * 8);
    unsigned seed = 3;
    for (int64_t q = 0; q < N; q++) x[q] = frand(&seed), y[q] = frand(&seed);
    const size_t bytes = coop_grid_points(&h.lev[0].grid) * 8;
    double *in[2] = {x, y}, *out[2] = {bx, by};
    for (int t = 0; t < 2; t++) {
      memset(h.lev[0].u, 0, bytes);
      set_owned(&h.lev[0], h.lev[0].f, in[t]);
      CU_ASSERT(coop_mg_cycle(&h, 0) == 0);
      owned(&h.lev[0], h.lev[0].u, out[t]);
    }
    double a = 0, b = 0;
    for (int64_t q = 0; q < N; q++) a += bx[q] * y[q], b += x[q] * by[q];
    CU_ASSERT(fabs(a - b) <= 1e-12 * fabs(a));
    free(x), free(y), free(bx), free(by);
    coop_mg_hier_destroy(&h);
  }
}

/* fp32: V-cycles take the relative residual to its rounding floor. */
static void test_fp32(void) {
  const int64_t n[3] = {129, 70, 1};
  coop_stencil s;
  make_stencil(&s, 2, COOP_FP32, n);
  coop_mg_hier h;
  CU_ASSERT_FATAL(coop_mg_hier_create(&h, &s, NULL, NULL, NULL, NULL) == 0);
  h.cycle = COOP_MG_V;
  h.smoother = COOP_MG_RBGS;
  h.pre = h.post = 2;
  const int64_t N = coop_mg_level_points(&h, 0);
  double *b = malloc((size_t)N * 8);
  for (int64_t q = 0; q < N; q++) b[q] = 1.0;
  set_owned(&h.lev[0], h.lev[0].f, b);
  double r0, rn = 0;
  CU_ASSERT(h.ops->residual(&h, 0, &r0) == 0);
  for (int c = 0; c < 8; c++) {
    CU_ASSERT(coop_mg_cycle(&h, 0) == 0);
    CU_ASSERT(h.ops->residual(&h, 0, &rn) == 0);
  }
  CU_ASSERT(sqrt(rn / r0) < 1e-4);
  CU_ASSERT(isfinite(rn));
  free(b);
  coop_mg_hier_destroy(&h);
}

static void test_too_small(void) {
  const int64_t n[3] = {1, 1, 1};
  coop_stencil s;
  make_stencil(&s, 2, COOP_FP64, n);
  coop_mg_hier h;
  CU_ASSERT(coop_mg_hier_create(&h, &s, NULL, NULL, NULL, NULL) == COOP_ERR_INPUT);
  coop_mg_hier_destroy(&h);
}

int main(void) {
  static const coop_unit_test tests[] = {
      {"2D cycles reach the dense solve", test_direct_2d},
      {"3D cycles reach the dense solve", test_direct_3d},
      {"levels of uneven sizes", test_levels},
      {"restriction is the weighted transpose of interpolation", test_transfer_adjoint},
      {"the symmetric cycle is symmetric", test_symmetric_cycle},
      {"fp32 reaches its rounding floor", test_fp32},
      {"a grid that cannot coarsen is an input error", test_too_small},
  };
  return coop_unit_run("mg", tests, sizeof tests / sizeof *tests);
}
