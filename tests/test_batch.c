/* Batches: the generator (determinism, ranges, problem i the same at any rank
 * count, the stencil it builds), the dealing (every problem once, balance),
 * heat's time steps (limit, t_end, overflow, the initial field), and the host
 * solvers against answers worked out by hand; the matrix list's lines and the
 * spec read from a list file. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/backend.h"
#include "core/error.h"
#include "io/config.h"
#include "solvers/batch/batch_backend.h"
#include "problem/batch.h"
#include "solvers/stop.h"
#include "unit.h"

static coop_config *config(const char *text) {
  coop_config *cfg = NULL;
  CU_ASSERT_EQUAL_FATAL(coop_config_create(&cfg), 0);
  CU_ASSERT_EQUAL_FATAL(coop_config_parse(cfg, "t.ini", text), 0);
  CU_ASSERT_EQUAL_FATAL(coop_config_validate(cfg), 0);
  return cfg;
}

/* The spec of input text (which must be good). */
static void spec_of(const char *text, coop_batch_spec *sp) {
  coop_config *cfg = config(text);
  CU_ASSERT_EQUAL_FATAL(coop_batch_spec_create(sp, cfg, NULL), 0);
  coop_config_destroy(cfg);
}

/* The input error a spec of text gives, or "" when it gives none. */
static const char *spec_error(const char *text) {
  coop_batch_spec sp;
  coop_config *cfg = config(text);
  const int rc = coop_batch_spec_create(&sp, cfg, NULL);
  coop_config_destroy(cfg);
  if (!rc) coop_batch_spec_destroy(&sp);
  CU_ASSERT(rc == 0 || rc == COOP_ERR_INPUT);
  return rc ? coop_error_message() : "";
}

static const char gen3[] = "[batch]\ncount = 50\ndim = 3\nsizes = loguniform:2:12\nshift = uniform:0:100\n"
                           "rhs = random\nseed = 7\n[solver]\nname = cg\n";

static void test_determinism(void) {
  coop_batch_spec a, b, c;
  spec_of(gen3, &a);
  spec_of(gen3, &b);
  spec_of("[batch]\ncount = 50\ndim = 3\nsizes = loguniform:2:12\nshift = uniform:0:100\nrhs = random\n"
          "seed = 8\n[solver]\nname = cg\n", &c);
  int differ = 0;
  for (int64_t i = 0; i < a.count; i++) {
    CU_ASSERT_EQUAL(coop_batch_side(&a, i), coop_batch_side(&b, i));
    CU_ASSERT_EQUAL(coop_batch_shift(&a, i), coop_batch_shift(&b, i));
    CU_ASSERT_EQUAL(coop_batch_rhs(&a, i, 3), coop_batch_rhs(&b, i, 3));
    differ += coop_batch_side(&a, i) != coop_batch_side(&c, i);
  }
  CU_ASSERT(differ > 10); /* another seed, another batch */
  CU_ASSERT_EQUAL(a.total_rows, b.total_rows);
  coop_batch_spec_destroy(&a);
  coop_batch_spec_destroy(&b);
  coop_batch_spec_destroy(&c);
}

static void test_ranges(void) {
  coop_batch_spec sp;
  spec_of("[batch]\ncount = 4000\nsizes = loguniform:3:4096\nshift = loguniform:0.5:8\n[solver]\n", &sp);
  int64_t lo = 1 << 30, hi = 0, small = 0;
  double slo = 1e300, shi = 0;
  for (int64_t i = 0; i < sp.count; i++) {
    const int64_t n = coop_batch_side(&sp, i);
    const double s = coop_batch_shift(&sp, i);
    lo = n < lo ? n : lo, hi = n > hi ? n : hi, small += n < 64;
    slo = s < slo ? s : slo, shi = s > shi ? s : shi;
    CU_ASSERT_EQUAL(sp.rows[i], n * n);
    CU_ASSERT_EQUAL(sp.nnz[i], 5 * n * n - 4 * n);
  }
  CU_ASSERT(lo >= 3 && lo <= 4 && hi <= 4096 && hi >= 3000);
  /* log-uniform: ln(64 / 3) / ln(4097 / 3) = 42% of the sides below 64 (uniform: 1.5%) */
  CU_ASSERT(small > 4000 * 0.38 && small < 4000 * 0.47);
  CU_ASSERT(slo >= 0.5 && slo < 0.52 && shi <= 8 && shi > 7.8);
  coop_batch_spec_destroy(&sp);
  spec_of("[batch]\ncount = 300\nsizes = uniform:5:7\n[solver]\n", &sp);
  int seen[8] = {0};
  for (int64_t i = 0; i < sp.count; i++) seen[coop_batch_side(&sp, i)]++;
  CU_ASSERT(seen[5] > 60 && seen[6] > 60 && seen[7] > 60 && seen[5] + seen[6] + seen[7] == 300);
  CU_ASSERT_EQUAL(coop_batch_shift(&sp, 17), 0.0); /* the default uniform:0 */
  coop_batch_spec_destroy(&sp);
  /* the widest log-uniform range the rules allow: HI / LO overflows a double */
  spec_of("[batch]\ncount = 2000\nsizes = uniform:4\nshift = loguniform:1e-300:1e100\n[solver]\n", &sp);
  int below = 0, finite = 1;
  for (int64_t i = 0; i < sp.count; i++) {
    const double s = coop_batch_shift(&sp, i);
    finite &= isfinite(s) && s >= 1e-300 && s <= 1e100;
    below += s < 1e-100; /* the lower half of the exponents */
  }
  CU_ASSERT(finite);
  CU_ASSERT(below > 2000 * 0.45 && below < 2000 * 0.55);
  coop_batch_spec_destroy(&sp);
}

static void test_bad_generators(void) {
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\nsizes = normal:4\n[solver]\n"),
                                "t.ini:2: batch.sizes = normal:4: unknown generator 'normal'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\nsizes = uniform:4:\n[solver]\n"), "expected uniform:LO:HI"));
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\nsizes = uniform:9:4\n[solver]\n"), "LO = 9 is above HI = 4"));
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\nsizes = uniform:4.5\n[solver]\n"), "integers"));
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\nsizes = loguniform:8\n[solver]\n"), "needs a range"));
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\nsizes = uniform:1:8\n[solver]\n"), "at least 2"));
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\nsizes = uniform:4097\n[solver]\n"), "at most 4096 in 2D"));
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\ndim = 3\nsizes = uniform:2:257\n[solver]\n"), "at most 256 in 3D"));
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\nshift = uniform:-1\n[solver]\n"), "reals >= 0"));
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\nshift = loguniform:0:1\n[solver]\n"), "LO > 0"));
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\n[solver]\nname = bicgstab\n"), "jacobi, cg or heat"));
  CU_ASSERT_STRING_EQUAL(spec_error("[batch]\nsizes = uniform:2:4096\nshift = uniform:0:1e3\n[solver]\n"), "");
  coop_error_clear();
}

/* Problem i's rows, entries and b: the same in a build for 1 rank and for 3. */
static void test_rank_independence(void) {
  coop_batch_spec sp;
  spec_of(gen3, &sp);
  int32_t *one = calloc((size_t)sp.count, sizeof *one), *three = malloc((size_t)sp.count * sizeof *three);
  CU_ASSERT_EQUAL(coop_batch_deal(&sp, 3, three), 0);
  coop_batch all, part[3];
  CU_ASSERT_EQUAL_FATAL(coop_batch_build(&sp, one, 0, &all), 0);
  for (int r = 0; r < 3; r++) CU_ASSERT_EQUAL_FATAL(coop_batch_build(&sp, three, r, &part[r]), 0);
  int64_t seen = 0;
  for (int r = 0; r < 3; r++)
    for (int64_t k = 0; k < part[r].count; k++, seen++) {
      const int64_t i = part[r].id[k], n = part[r].row_off[k + 1] - part[r].row_off[k];
      const int64_t a0 = all.row_off[i], p0 = part[r].row_off[k];
      const int64_t na = all.rowptr[a0 + n] - all.rowptr[a0], np = part[r].rowptr[p0 + n] - part[r].rowptr[p0];
      CU_ASSERT_EQUAL(all.id[i], i);
      CU_ASSERT_EQUAL(all.row_off[i + 1] - a0, n);
      CU_ASSERT_EQUAL_FATAL(na, np);
      CU_ASSERT(!memcmp(all.b + a0, part[r].b + p0, (size_t)n * sizeof(double)));
      CU_ASSERT(!memcmp(all.colind + all.rowptr[a0], part[r].colind + part[r].rowptr[p0], (size_t)na * 4));
      CU_ASSERT(!memcmp(all.val + all.rowptr[a0], part[r].val + part[r].rowptr[p0], (size_t)na * 8));
    }
  CU_ASSERT_EQUAL(seen, sp.count);
  for (int r = 0; r < 3; r++) coop_batch_free(&part[r]);
  coop_batch_free(&all);
  free(one);
  free(three);
  coop_batch_spec_destroy(&sp);
}

/* The 7-point stencil of a 3 x 3 x 3 problem: weights, neighbours, symmetry. */
static void test_stencil(void) {
  coop_batch_spec sp;
  spec_of("[batch]\ncount = 1\ndim = 3\nsizes = uniform:3\nshift = uniform:2.5\n[solver]\n", &sp);
  int32_t owner[1] = {0};
  coop_batch bt;
  CU_ASSERT_EQUAL_FATAL(coop_batch_build(&sp, owner, 0, &bt), 0);
  CU_ASSERT_EQUAL(bt.row_off[1], 27);
  CU_ASSERT_EQUAL(bt.rowptr[27], 7 * 27 - 6 * 9);
  CU_ASSERT_EQUAL(bt.rowptr[14] - bt.rowptr[13], 7); /* the centre */
  CU_ASSERT_EQUAL(bt.rowptr[1] - bt.rowptr[0], 4);   /* a corner */
  double dense[27][27] = {{0}};
  for (int i = 0; i < 27; i++) {
    for (int64_t j = bt.rowptr[i]; j < bt.rowptr[i + 1]; j++) {
      dense[i][bt.colind[j]] = bt.val[j];
      if (j > bt.rowptr[i]) CU_ASSERT(bt.colind[j] > bt.colind[j - 1]);
    }
    CU_ASSERT_DOUBLE_EQUAL(dense[i][i], 6 * 16 + 2.5, 0);
    CU_ASSERT_EQUAL(bt.b[i], 1.0);
  }
  CU_ASSERT_EQUAL(dense[13][4], -16.0); /* z neighbour */
  CU_ASSERT_EQUAL(dense[13][10], -16.0);
  CU_ASSERT_EQUAL(dense[13][12], -16.0);
  CU_ASSERT_EQUAL(dense[2][3], 0.0); /* x = 2 has no right neighbour in its row */
  for (int i = 0; i < 27; i++)
    for (int j = 0; j < 27; j++) CU_ASSERT_EQUAL(dense[i][j], dense[j][i]);
  coop_batch_free(&bt);
  coop_batch_spec_destroy(&sp);
}

static void test_dealing(void) {
  coop_batch_spec sp;
  spec_of("[batch]\ncount = 500\nsizes = loguniform:4:200\nshift = loguniform:0.01:1e4\n[solver]\nname = cg\n", &sp);
  for (int n = 1; n <= 7; n += 3) {
    int32_t *own = malloc((size_t)sp.count * sizeof *own), *again = malloc((size_t)sp.count * sizeof *again);
    double load[7] = {0}, total = 0, biggest = 0;
    CU_ASSERT_EQUAL(coop_batch_deal(&sp, n, own), 0);
    CU_ASSERT_EQUAL(coop_batch_deal(&sp, n, again), 0);
    CU_ASSERT(!memcmp(own, again, (size_t)sp.count * sizeof *own));
    for (int64_t i = 0; i < sp.count; i++) {
      CU_ASSERT_FATAL(own[i] >= 0 && own[i] < n); /* each problem once, to a rank that exists */
      const double c = coop_batch_cost(&sp, i);
      load[own[i]] += c, total += c, biggest = c > biggest ? c : biggest;
    }
    /* LPT's bound: at most 4/3 of the optimum, itself at least the mean and the biggest job */
    const double opt = fmax(total / n, biggest);
    for (int r = 0; r < n; r++) CU_ASSERT(load[r] <= 4.0 / 3.0 * opt * (1 + 1e-12) && load[r] > 0);
    free(own);
    free(again);
  }
  /* CG's work estimate falls as the shift grows (faster convergence) */
  coop_batch_spec_destroy(&sp);
  spec_of("[batch]\ncount = 2\nsizes = uniform:50\nshift = uniform:0:1e4\n[solver]\nname = cg\n", &sp);
  const int bigger = coop_batch_shift(&sp, 1) > coop_batch_shift(&sp, 0);
  CU_ASSERT_EQUAL(coop_batch_cost(&sp, 1) < coop_batch_cost(&sp, 0), bigger);
  coop_batch_spec_destroy(&sp);
}

/* ---- heat: time steps and step counts ---- */

static const char heat3[] = "[batch]\ncount = 3\nsizes = uniform:3\nshift = uniform:8\n[solver]\nname = heat\n";

/* side 3 (h = 1/4), 2D, shift 8: the limit 2 / (alpha (4 dim / h^2 + s)) = 2 / 136 */
static void test_heat_steps(void) {
  coop_batch_spec sp;
  double dt;
  int64_t steps;
  char text[256];
  spec_of(heat3, &sp);
  CU_ASSERT_EQUAL(coop_batch_heat_limit(&sp, 1), 2.0 / 136.0);
  coop_batch_heat_step(&sp, 1, &dt, &steps);
  CU_ASSERT_EQUAL(dt, 0.9 * (2.0 / 136.0)); /* dt = 0: 0.9 of the limit */
  CU_ASSERT_EQUAL(steps, 10000);            /* t_end off: solver.max_iter */
  coop_batch_spec_destroy(&sp);
  snprintf(text, sizeof text, "%salpha = 2\ndt = 0.001\nt_end = 0.0105\n", heat3);
  spec_of(text, &sp);
  CU_ASSERT_EQUAL(coop_batch_heat_limit(&sp, 0), 1.0 / 136.0);
  coop_batch_heat_step(&sp, 2, &dt, &steps);
  CU_ASSERT_EQUAL(steps, 11); /* ceil(10.5) */
  CU_ASSERT_EQUAL(dt, 0.0105 / 11);
  CU_ASSERT(dt <= 0.001);
  /* the work estimate: entries x steps (side 3: 9 rows, 33 entries) */
  CU_ASSERT_EQUAL(coop_batch_cost(&sp, 2), 33.0 * 11.0);
  coop_batch_spec_destroy(&sp);
  /* a quotient that is a whole number is not rounded up */
  snprintf(text, sizeof text, "%sdt = 0.0078125\nt_end = 0.0625\n", heat3);
  spec_of(text, &sp);
  coop_batch_heat_step(&sp, 0, &dt, &steps);
  CU_ASSERT(steps == 8 && dt == 0.0078125);
  coop_batch_spec_destroy(&sp);
  /* t_end / k rounded above the step asked for takes one step more: never above it */
  for (int k = 1; k < 2000; k++) {
    snprintf(text, sizeof text, "%sdt = %.17g\nt_end = %.17g\n", heat3, 0.013 / k, 0.013);
    spec_of(text, &sp);
    coop_batch_heat_step(&sp, 0, &dt, &steps);
    CU_ASSERT(dt <= sp.dt && (steps == k || steps == k + 1));
    coop_batch_spec_destroy(&sp);
  }
}

static void test_heat_bad(void) {
  char text[256];
  /* solver.dt above the smallest limit (the largest shift's): named with the largest stable dt */
  snprintf(text, sizeof text, "[batch]\ncount = 2\nsizes = uniform:3\nshift = uniform:0:8\n[solver]\nname = heat\n"
           "dt = 0.016\n");
  const char *e = spec_error(text);
  CU_ASSERT_PTR_NOT_NULL(strstr(e, "t.ini:7: solver.dt = 0.016: above the explicit stability limit "));
  coop_batch_spec sp;
  snprintf(text, sizeof text, "[batch]\ncount = 2\nsizes = uniform:3\nshift = uniform:0:8\n[solver]\nname = heat\n");
  spec_of(text, &sp);
  const double lim = fmin(coop_batch_heat_limit(&sp, 0), coop_batch_heat_limit(&sp, 1));
  coop_batch_spec_destroy(&sp);
  char want[128];
  for (int p = 1; p <= 17; p++) { /* the shortest decimal that reads back */
    snprintf(want, sizeof want, "%.*g", p, lim);
    if (strtod(want, NULL) == lim) break;
  }
  CU_ASSERT_PTR_NOT_NULL(strstr(e, want));
  char use[160];
  snprintf(use, sizeof use, "use solver.dt <= %s", want);
  CU_ASSERT_PTR_NOT_NULL(strstr(e, use));
  snprintf(text, sizeof text, "[batch]\ncount = 2\nsizes = uniform:3\nshift = uniform:0:8\n[solver]\nname = heat\n"
           "dt = %s\n", want);
  CU_ASSERT_STRING_EQUAL(spec_error(text), ""); /* the limit itself is stable */
  /* step counts: one problem's, and the batch's sum in 64 bits */
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\nsizes = uniform:3\n[solver]\nname = heat\nt_end = 1e300\n"),
                                "t.ini:5: solver.t_end = 1e300: problem 0 (side 3, shift 0) would take more than "
                                "1000000000000 steps"));
  CU_ASSERT_STRING_EQUAL(spec_error("[batch]\nsizes = uniform:3\n[solver]\nname = heat\nt_end = 1e8\n"), "");
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\ncount = 9300000\nsizes = uniform:2\n[solver]\nname = heat\n"
                                           "max_iter = 1000000000000\n"),
                                "t.ini:6: solver.max_iter = 1000000000000: the batch's 9300000 problems take more "
                                "than 2^63 steps in all"));
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\nmatrices = a.mtx\n[solver]\nname = heat\n"),
                                "steps generated problems only"));
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error("[batch]\n[solver]\nname = heat\npc = jacobi\n"),
                                "applies to solver.name = cg"));
  coop_error_clear();
}

/* The built heat batch: the sine mode as x0, each problem's dt and steps. */
static void test_heat_build(void) {
  coop_batch_spec sp;
  coop_batch bt;
  spec_of("[batch]\ncount = 5\ndim = 3\nsizes = uniform:2:6\nshift = uniform:0:10\nrhs = zero\n"
          "[solver]\nname = heat\nt_end = 0.01\n", &sp);
  int32_t owner[5] = {0, 1, 0, 1, 1};
  CU_ASSERT_EQUAL_FATAL(coop_batch_build(&sp, owner, 1, &bt), 0);
  CU_ASSERT_EQUAL_FATAL(bt.count, 3);
  CU_ASSERT_FATAL(bt.dt != NULL && bt.steps != NULL);
  for (int64_t k = 0; k < bt.count; k++) {
    double dt;
    int64_t steps;
    const int64_t n = coop_batch_side(&sp, bt.id[k]), lo = bt.row_off[k];
    coop_batch_heat_step(&sp, bt.id[k], &dt, &steps);
    CU_ASSERT(bt.dt[k] == dt && bt.steps[k] == steps);
    CU_ASSERT(fabs((double)steps * dt - 0.01) < 1e-15);
    for (int64_t r = 0; r < n * n * n; r++) {
      const double h = 1.0 / (double)(n + 1);
      const double want = sin(M_PI * (double)(r % n + 1) * h) * sin(M_PI * (double)(r / n % n + 1) * h) *
                          sin(M_PI * (double)(r / (n * n) + 1) * h);
      CU_ASSERT_DOUBLE_EQUAL(bt.x0[lo + r], want, 1e-15);
      CU_ASSERT_EQUAL(bt.b[lo + r], 0.0);
    }
  }
  coop_batch_free(&bt);
  CU_ASSERT_PTR_NULL(bt.dt);
  coop_batch_spec_destroy(&sp);
}

/* ---- the host solvers on systems with known answers ---- */

/* A one-problem batch of a dense n x n matrix (zeros dropped). */
static void dense_batch(int n, const double *a, const double *b, coop_batch *bt) {
  memset(bt, 0, sizeof *bt);
  bt->count = 1;
  bt->id = calloc(1, sizeof *bt->id);
  bt->row_off = malloc(2 * sizeof *bt->row_off);
  bt->rowptr = malloc((size_t)(n + 1) * sizeof *bt->rowptr);
  bt->colind = malloc((size_t)(n * n) * sizeof *bt->colind);
  bt->val = malloc((size_t)(n * n) * sizeof *bt->val);
  bt->b = malloc((size_t)n * sizeof *bt->b);
  bt->x0 = calloc((size_t)n, sizeof *bt->x0);
  bt->row_off[0] = 0, bt->row_off[1] = n, bt->rowptr[0] = 0;
  for (int i = 0, q = 0; i < n; i++) {
    for (int j = 0; j < n; j++)
      if (a[i * n + j] != 0.0) bt->colind[q] = j, bt->val[q++] = a[i * n + j];
    bt->rowptr[i + 1] = q;
    bt->b[i] = b[i];
  }
}

static coop_batch_result solve_dense(int n, const double *a, const double *b, int method, int pc, double rtol,
                                     int64_t max_iter, double dtol, double *x) {
  coop_batch bt;
  coop_batch_result res;
  const coop_batch_ctl ctl = {method, pc, rtol, 0.0, dtol, max_iter};
  dense_batch(n, a, b, &bt);
  memset(x, 0, (size_t)n * sizeof *x);
  memset(&res, 0, sizeof res);
  CU_ASSERT_EQUAL(coop_batch_solve_host(&bt, &ctl, x, &res), 0);
  coop_batch_free(&bt);
  return res;
}

static void test_one_by_one(void) {
  const double a[1] = {4.0}, b[1] = {8.0};
  double x[1];
  for (int m = 0; m < 2; m++) {
    const coop_batch_result r = solve_dense(1, a, b, m, 0, 1e-8, 100, 1e5, x);
    CU_ASSERT_EQUAL(x[0], 2.0);
    CU_ASSERT_EQUAL(r.iterations, 1);
    CU_ASSERT_EQUAL(r.r0, 8.0);
    CU_ASSERT_EQUAL(r.rnorm, 0.0);
    CU_ASSERT_EQUAL(r.reason, COOP_CONVERGED_ATOL); /* 0 <= atol = 0 */
    CU_ASSERT(r.seconds >= 0.0);
  }
}

/* Jacobi by hand. Diagonal: exact after one step. [[2,1],[1,2]], b = A 1: the
 * error flips and halves each step, ||r_k|| = 2^-k ||r_0|| exactly, so rtol =
 * 1e-3 stops at k = 10 (2^-10 < 1e-3 < 2^-9); max_iter 5 stops at 5.
 * [[1,2],[2,1]]: the error doubles, dtol = 10 stops at k = 4 (16 > 10 > 8). */
static void test_jacobi_by_hand(void) {
  const double d[9] = {2, 0, 0, 0, 4, 0, 0, 0, 8}, bd[3] = {1, 1, 1};
  const double a[4] = {2, 1, 1, 2}, b[2] = {3, 3}, g[4] = {1, 2, 2, 1};
  double x[3];
  coop_batch_result r = solve_dense(3, d, bd, COOP_BATCH_JACOBI, 0, 1e-12, 100, 1e5, x);
  CU_ASSERT_EQUAL(r.iterations, 1);
  CU_ASSERT(x[0] == 0.5 && x[1] == 0.25 && x[2] == 0.125);
  r = solve_dense(2, a, b, COOP_BATCH_JACOBI, 0, 1e-3, 100, 1e5, x);
  CU_ASSERT_EQUAL(r.iterations, 10);
  CU_ASSERT_EQUAL(r.reason, COOP_CONVERGED_RTOL);
  CU_ASSERT_EQUAL(x[0], 1.0 - 1.0 / 1024); /* e_k = (-1/2)^k e_0, e_0 = -1 */
  CU_ASSERT_DOUBLE_EQUAL(r.rnorm / r.r0, 1.0 / 1024, 1e-15);
  r = solve_dense(2, a, b, COOP_BATCH_JACOBI, 0, 1e-3, 5, 1e5, x);
  CU_ASSERT_EQUAL(r.iterations, 5);
  CU_ASSERT_EQUAL(r.reason, COOP_DIVERGED_ITS);
  CU_ASSERT_EQUAL(x[1], 1.0 + 1.0 / 32); /* the returned x is the one whose residual is reported */
  CU_ASSERT_DOUBLE_EQUAL(r.rnorm, 3 * sqrt(2.0) / 32, 1e-15);
  r = solve_dense(2, g, b, COOP_BATCH_JACOBI, 0, 1e-3, 100, 10, x);
  CU_ASSERT_EQUAL(r.iterations, 4);
  CU_ASSERT_EQUAL(r.reason, COOP_DIVERGED_DTOL);
}

/* CG on SPD systems: the answer, within n iterations, with and without pc. */
static void test_cg_spd(void) {
  const double a[9] = {4, 1, 0, 1, 3, 1, 0, 1, 2}, b[3] = {6, 10, 8}; /* x = (1, 2, 3) */
  double x[3];
  for (int pc = 0; pc < 2; pc++) {
    const coop_batch_result r = solve_dense(3, a, b, COOP_BATCH_CG, pc, 1e-13, 100, 1e5, x);
    CU_ASSERT(r.iterations <= 3 && coop_reason_converged(r.reason));
    for (int i = 0; i < 3; i++) CU_ASSERT_DOUBLE_EQUAL(x[i], i + 1.0, 1e-12);
  }
  enum { N = 30 }; /* 1D Laplacian with a varying diagonal */
  double *m = calloc(N * N, sizeof *m), bb[N], y[N];
  for (int i = 0; i < N; i++) {
    m[i * N + i] = 2.0 + 0.1 * i;
    if (i) m[i * N + i - 1] = m[(i - 1) * N + i] = -1.0;
    bb[i] = sin(i + 1.0);
  }
  for (int pc = 0; pc < 2; pc++) {
    const coop_batch_result r = solve_dense(N, m, bb, COOP_BATCH_CG, pc, 1e-10, 1000, 1e5, y);
    CU_ASSERT(r.iterations <= N && r.reason == COOP_CONVERGED_RTOL);
    for (int i = 0; i < N; i++) { /* the true residual agrees with the recurrence's verdict */
      double s = -bb[i];
      for (int j = 0; j < N; j++) s += m[i * N + j] * y[j];
      CU_ASSERT(fabs(s) < 1e-8);
    }
  }
  free(m);
}

/* Heat by hand: A = [4], b = 0, x0 = 1, c = dt alpha = 1/8: x_k = 2^-k
 * exactly, every step taken (no residual stop), reason completed. With b = 4
 * the steady state is x = 1: from 0, x_k = 1 - 2^-k. */
static void test_heat_by_hand(void) {
  coop_batch bt;
  coop_batch_result res;
  const double a[1] = {4.0}, zero[1] = {0.0}, four[1] = {4.0};
  /* rtol and atol that would stop any other method at once: heat takes its steps */
  const coop_batch_ctl ctl = {.method = COOP_BATCH_HEAT, .rtol = 0.5, .atol = 1e300, .max_iter = 0, .alpha = 0.5};
  double dt = 0.25, x[1] = {1.0};
  int64_t steps = 5;
  dense_batch(1, a, zero, &bt);
  bt.dt = &dt, bt.steps = &steps;
  CU_ASSERT_EQUAL(coop_batch_solve_host(&bt, &ctl, x, &res), 0);
  CU_ASSERT_EQUAL(x[0], 1.0 / 32);
  CU_ASSERT(res.iterations == 5 && res.reason == COOP_COMPLETED && res.r0 == 4.0 && res.rnorm == 0.125);
  steps = 0, x[0] = 1.0;
  CU_ASSERT_EQUAL(coop_batch_solve_host(&bt, &ctl, x, &res), 0);
  CU_ASSERT(x[0] == 1.0 && res.iterations == 0 && res.reason == COOP_COMPLETED);
  bt.b[0] = four[0], steps = 10, x[0] = 0.0;
  CU_ASSERT_EQUAL(coop_batch_solve_host(&bt, &ctl, x, &res), 0);
  CU_ASSERT_EQUAL(x[0], 1.0 - 1.0 / 1024);
  /* an unstable step: NaN is named, not returned as garbage */
  dt = 1e300, steps = 100, x[0] = 0.5;
  CU_ASSERT_EQUAL(coop_batch_solve_host(&bt, &ctl, x, &res), 0);
  CU_ASSERT(res.reason == COOP_DIVERGED_NAN && res.iterations < 100);
  bt.dt = NULL, bt.steps = NULL; /* not the batch's to free */
  coop_batch_free(&bt);
}

static void test_cg_breakdowns(void) {
  const double a[4] = {1, 0, 0, -1}, b[2] = {0, 1};
  double x[2];
  coop_batch_result r = solve_dense(2, a, b, COOP_BATCH_CG, 0, 1e-8, 100, 1e5, x);
  CU_ASSERT_EQUAL(r.reason, COOP_DIVERGED_INDEFINITE_MAT); /* (p, A p) = -1 */
  CU_ASSERT_EQUAL(r.iterations, 0);
  r = solve_dense(2, a, b, COOP_BATCH_CG, 1, 1e-8, 100, 1e5, x);
  CU_ASSERT_EQUAL(r.reason, COOP_DIVERGED_INDEFINITE_PC); /* (r, z) = -1 */
  const double z[4] = {0, 1, 1, 2}, bz[2] = {1, 1};
  coop_batch bt;
  coop_batch_result res;
  const coop_batch_ctl ctl = {COOP_BATCH_JACOBI, 0, 1e-6, 0, 1e5, 10};
  dense_batch(2, z, bz, &bt);
  CU_ASSERT_EQUAL(coop_batch_solve_host(&bt, &ctl, x, &res), COOP_ERR_INPUT); /* zero diagonal */
  CU_ASSERT_PTR_NOT_NULL(strstr(coop_error_message(), "zero or missing diagonal"));
  coop_batch_free(&bt);
  coop_error_clear();
}

/* Through the dispatch: a generated batch converges, what ran is named, and
 * bad arguments are refused. */
static void test_dispatch(void) {
  coop_backend *be = NULL;
  coop_batch_spec sp;
  coop_batch bt;
  CU_ASSERT_EQUAL_FATAL(coop_backend_host_create(&be), 0);
  spec_of("[batch]\ncount = 6\nsizes = uniform:3:9\nshift = uniform:0:10\n[solver]\nname = cg\npc = jacobi\n", &sp);
  int32_t owner[6] = {0};
  CU_ASSERT_EQUAL_FATAL(coop_batch_build(&sp, owner, 0, &bt), 0);
  double *x = calloc((size_t)bt.row_off[6], sizeof *x);
  coop_batch_result res[6];
  coop_batch_ctl ctl = {COOP_BATCH_CG, 1, 1e-10, 0, 1e5, 500};
  coop_batch_run opt;
  memset(&opt, 0xff, sizeof opt); /* what ran must be filled in */
  opt.sync = COOP_BSYNC_ROW, opt.schedule = COOP_SCHED_ATOMIC, opt.group_blocks = 2;
  CU_ASSERT_EQUAL(coop_batch_solve(be, &bt, &ctl, &opt, x, res), 0);
  CU_ASSERT_STRING_EQUAL(coop_batch_sync_name(opt.sync_used), "host");
  CU_ASSERT(opt.groups_used == 1 && opt.barriers == 0 && opt.busy_max == 0.0 && opt.kernel_time == 0.0);
  CU_ASSERT_STRING_EQUAL(coop_batch_schedule_name(COOP_SCHED_CLC), "clc");
  CU_ASSERT_STRING_EQUAL(coop_batch_sync_name(99), "unknown");
  for (int i = 0; i < 6; i++) {
    const int64_t n = bt.row_off[i + 1] - bt.row_off[i];
    CU_ASSERT(res[i].reason == COOP_CONVERGED_RTOL && res[i].iterations <= n);
  }
  ctl.method = 7;
  CU_ASSERT_EQUAL(coop_batch_solve(be, &bt, &ctl, &opt, x, res), COOP_ERR_RUNTIME);
  ctl.method = COOP_BATCH_HEAT, ctl.pc = 0, ctl.alpha = 1.0; /* no time steps */
  CU_ASSERT_EQUAL(coop_batch_solve(be, &bt, &ctl, &opt, x, res), COOP_ERR_RUNTIME);
  ctl.method = COOP_BATCH_CG;
  bt.colind[3] = 1000; /* outside its problem */
  CU_ASSERT_EQUAL(coop_batch_solve(be, &bt, &ctl, &opt, x, res), COOP_ERR_RUNTIME);
  coop_error_clear();
  free(x);
  coop_batch_free(&bt);
  coop_batch_spec_destroy(&sp);
  be->destroy(be);
}

/* ---- the GPU's order and levels (host arithmetic: solvers/batch/batch_levels.c) ---- */

/* A batch of the given problem sizes with 5 entries a row (only row_off and
 * rowptr: the planning reads no values). */
static void sized_batch(const int64_t *rows, int64_t count, coop_batch *bt) {
  memset(bt, 0, sizeof *bt);
  bt->count = count;
  bt->row_off = malloc((size_t)(count + 1) * sizeof *bt->row_off);
  bt->row_off[0] = 0;
  for (int64_t p = 0; p < count; p++) bt->row_off[p + 1] = bt->row_off[p] + rows[p];
  bt->rowptr = malloc((size_t)(bt->row_off[count] + 1) * sizeof *bt->rowptr);
  for (int64_t i = 0; i <= bt->row_off[count]; i++) bt->rowptr[i] = 5 * i;
}

static int is_permutation(const int64_t *order, int64_t n) {
  char *seen = calloc((size_t)n + 1, 1);
  int ok = 1;
  for (int64_t k = 0; k < n; k++) {
    if (order[k] < 0 || order[k] >= n || seen[order[k]]) ok = 0;
    else seen[order[k]] = 1;
  }
  free(seen);
  return ok;
}

static void test_work(void) {
  const int64_t rows[3] = {100, 400, 0};
  coop_batch bt;
  sized_batch(rows, 3, &bt);
  coop_batch_ctl ctl = {COOP_BATCH_CG, 0, 1e-6, 0, 1e5, 1000};
  CU_ASSERT_DOUBLE_EQUAL(coop_batch_work(&bt, &ctl, 0), 500.0 * 10.0, 1e-9);  /* entries x sqrt(rows) */
  CU_ASSERT_DOUBLE_EQUAL(coop_batch_work(&bt, &ctl, 1), 2000.0 * 20.0, 1e-9);
  CU_ASSERT(coop_batch_work(&bt, &ctl, 2) > 0.0); /* an empty problem still costs its stop test */
  ctl.method = COOP_BATCH_JACOBI;
  CU_ASSERT_DOUBLE_EQUAL(coop_batch_work(&bt, &ctl, 1), 2000.0 * 400.0, 1e-9); /* entries x rows */
  ctl.max_iter = 50;
  CU_ASSERT_DOUBLE_EQUAL(coop_batch_work(&bt, &ctl, 1), 2000.0 * 50.0, 1e-9);  /* at most max_iter */
  int64_t steps[3] = {7, 7, 7};
  bt.steps = steps;
  ctl.method = COOP_BATCH_HEAT;
  CU_ASSERT_DOUBLE_EQUAL(coop_batch_work(&bt, &ctl, 0), 500.0 * 7.0, 1e-9); /* heat: its steps */
  bt.steps = NULL;
  coop_batch_free(&bt);
  const double even[4] = {3, 3, 3, 3}, one_big[8] = {1, 1, 1, 1, 1, 1, 1, 40}, mild[4] = {1, 2, 3, 4};
  CU_ASSERT_FALSE(coop_batch_is_ragged(even, 4));
  CU_ASSERT_TRUE(coop_batch_is_ragged(one_big, 8)); /* 40 >= 4 x 47/8 */
  CU_ASSERT_FALSE(coop_batch_is_ragged(mild, 4));
  CU_ASSERT_FALSE(coop_batch_is_ragged(one_big + 7, 1));
}

/* One problem of 2^18 rows, ten of 2^14 and two hundred of 256 (the big one
 * first in index order last): CG work 6.7e8, 1.05e7 and 2.0e4 each. On 528
 * resident blocks the big one wants 4 x 6.7e8 x 528 / 7.8e8 = 1814 blocks,
 * capped at 2^18 / 1024 = 256: the top; the 2^14 ones want 28 -> 32, capped
 * at 16; the 256-row ones 1. */
static void test_levels(void) {
  enum { N = 211 };
  int64_t rows[N];
  for (int k = 0; k < 200; k++) rows[k] = 256;
  for (int k = 200; k < 210; k++) rows[k] = 1 << 14;
  rows[210] = 1 << 18;
  coop_batch bt;
  sized_batch(rows, N, &bt);
  const coop_batch_ctl ctl = {COOP_BATCH_CG, 0, 1e-6, 0, 1e5, 100000};
  double work[N];
  for (int k = 0; k < N; k++) work[k] = coop_batch_work(&bt, &ctl, k);
  CU_ASSERT_TRUE(coop_batch_is_ragged(work, N));
  int64_t order[N];
  coop_batch_levels lv;
  CU_ASSERT_EQUAL_FATAL(coop_batch_plan_levels(&bt, &ctl, 528, 0, 1, 0, order, &lv), 0);
  CU_ASSERT_EQUAL(lv.top_blocks, 256);
  CU_ASSERT_EQUAL_FATAL(lv.levels, 9); /* 256, 128, ..., 2, 1 */
  for (int l = 0; l < lv.levels; l++) CU_ASSERT_EQUAL(lv.size[l], 256 >> l);
  CU_ASSERT(is_permutation(order, N));
  CU_ASSERT_EQUAL(order[0], 210);                           /* level 0: the big one */
  CU_ASSERT(lv.start[0] == 0 && lv.start[1] == 1 && lv.start[4] == 1); /* levels 1-3 empty */
  CU_ASSERT(lv.start[5] == 11 && lv.start[8] == 11);       /* level 4 (16 blocks): the ten */
  CU_ASSERT(lv.start[9] == N);                              /* level 8 (1 block): the rest */
  for (int k = 1; k < 11; k++) CU_ASSERT_EQUAL(order[k], 199 + k); /* static: index order */
  for (int k = 11; k < N; k++) CU_ASSERT_EQUAL(order[k], k - 11);
  /* largest first: the same levels; within one, larger work first */
  rows[5] = 300;
  coop_batch_free(&bt);
  sized_batch(rows, N, &bt);
  CU_ASSERT_EQUAL_FATAL(coop_batch_plan_levels(&bt, &ctl, 528, 0, 1, 1, order, &lv), 0);
  CU_ASSERT(lv.levels == 9 && lv.start[1] == 1 && lv.start[5] == 11 && lv.start[8] == 11);
  CU_ASSERT_EQUAL(order[11], 5);  /* the 300-row one leads the single blocks */
  CU_ASSERT_EQUAL(order[12], 0);  /* then ties in index order */
  CU_ASSERT(is_permutation(order, N));
  /* a given top that is not a power of two: halves while even, then 1 */
  CU_ASSERT_EQUAL_FATAL(coop_batch_plan_levels(&bt, &ctl, 528, 24, 1, 1, order, &lv), 0);
  CU_ASSERT(lv.levels == 5 && lv.size[0] == 24 && lv.size[1] == 12 && lv.size[2] == 6 && lv.size[3] == 3 &&
            lv.size[4] == 1);
  CU_ASSERT(lv.start[1] == 1); /* the big one wants more than 24: the top */
  CU_ASSERT(lv.start[2] == 11 && lv.start[4] == 11); /* the ten want 16: the 12-block groups */
  /* no split: one level of the given blocks; largest first or index order */
  CU_ASSERT_EQUAL_FATAL(coop_batch_plan_levels(&bt, &ctl, 1, 2, 0, 1, order, &lv), 0);
  CU_ASSERT(lv.levels == 1 && lv.size[0] == 2 && lv.top_blocks == 2 && lv.start[0] == 0 && lv.start[1] == N);
  CU_ASSERT(order[0] == 210 && order[1] == 200 && order[10] == 209 && order[11] == 5);
  for (int k = 1; k < N; k++) CU_ASSERT(work[order[k - 1]] >= work[order[k]] || order[k - 1] == 5);
  CU_ASSERT_EQUAL_FATAL(coop_batch_plan_levels(&bt, &ctl, 1, 1, 0, 0, order, &lv), 0);
  for (int k = 0; k < N; k++) CU_ASSERT_EQUAL(order[k], k);
  /* few resident blocks: the top is capped by them */
  CU_ASSERT_EQUAL_FATAL(coop_batch_plan_levels(&bt, &ctl, 100, 0, 1, 1, order, &lv), 0);
  CU_ASSERT_EQUAL(lv.top_blocks, 64);
  CU_ASSERT_EQUAL(coop_batch_plan_levels(&bt, &ctl, 0, 0, 1, 1, order, &lv), COOP_ERR_RUNTIME);
  coop_error_clear();
  coop_batch_free(&bt);
}

/* One line of a matrix list: n paths a and b, or (n < 0) an error saying a. */
static void list_line(const char *text, int n, const char *a, const char *b) {
  char buf[256], *f[2] = {NULL, NULL};
  const char *why = NULL;
  snprintf(buf, sizeof buf, "%s", text);
  const int got = coop_batch_list_line(buf, f, &why);
  CU_ASSERT_EQUAL(got, n);
  if (got != n) fprintf(stderr, "list line '%s': %d paths, not %d (%s)\n", text, got, n, why ? why : "");
  if (got != n) return;
  if (n < 0) CU_ASSERT_PTR_NOT_NULL(strstr(why, a));
  if (n >= 1) CU_ASSERT_STRING_EQUAL(f[0], a);
  if (n == 2) CU_ASSERT_STRING_EQUAL(f[1], b);
}

static void test_list_line(void) {
  /* nothing: blank lines, comments, CRLF */
  list_line("", 0, NULL, NULL);
  list_line("\r\n", 0, NULL, NULL);
  list_line(" \t \r\n", 0, NULL, NULL);
  list_line("  \t# a comment \"with a quote\" and three fields\n", 0, NULL, NULL);
  /* unquoted paths take ',', ':', '#', '\' and a CR that does not end the line as they are */
  list_line("A.mtx\r\n", 1, "A.mtx", NULL);
  list_line("\t A.mtx  b.mtx \r\n", 2, "A.mtx", "b.mtx");
  list_line("a,b:c#d.mtx #e:f,g.mtx", 2, "a,b:c#d.mtx", "#e:f,g.mtx");
  list_line("back\\slash.mtx", 1, "back\\slash.mtx", NULL);
  list_line("mid\rcr.mtx\n", 1, "mid\rcr.mtx", NULL);
  /* quoted: blanks, a leading '#', \" and \\ */
  list_line("\"a b.mtx\"\t\"c\\\\d \\\"e\\\".mtx\"\r\n", 2, "a b.mtx", "c\\d \"e\".mtx");
  list_line("\"#x.mtx\"", 1, "#x.mtx", NULL);
  list_line("a.mtx \"b, c.mtx\"\n", 2, "a.mtx", "b, c.mtx");
  list_line("\"\\\"\"", 1, "\"", NULL);
  /* errors */
  list_line("a b c", -1, "too many fields", NULL);
  list_line("a.mtx # a note", -1, "too many fields", NULL);
  list_line("\"a b.mtx\n", -1, "unterminated quote", NULL);
  list_line("\"a\\\"", -1, "unterminated quote", NULL);
  list_line("\"a\"b c", -1, "text right after a closing quote", NULL);
  list_line("a\"b\"", -1, "a double quote inside an unquoted path", NULL);
  list_line("a.mtx \"\"", -1, "an empty path", NULL);
  list_line("\"a\\nb\"", -1, "a backslash in a quoted path escapes only", NULL);
}

static void put(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(text, f);
  fclose(f);
}

/* A list file read into the spec (no MPI): paths relative to its folder,
 * its lines, b from a vector file; a bad list names LIST:LINE. */
static void test_list_spec(void) {
  char dir[] = "/tmp/coop-test-batch-XXXXXX", sub[64], text[512], want[512];
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  snprintf(sub, sizeof sub, "%s/s", dir);
  CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0700), 0);
  put(sub, "a,b:c #1.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 4\n2 2 5\n");
  put(sub, "p.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 1\n3 3 1\n");
  put(sub, "b.mtx", "%%MatrixMarket matrix array real general\n2 1\n8\n10\n");
  snprintf(text, sizeof text, "# c\r\n\r\n\"a,b:c #1.mtx\" b.mtx\r\n%s/p.mtx\n", sub);
  put(sub, "l.list", text);
  put(sub, "bad.list", "p.mtx\n  \"p.mtx\n");
  put(sub, "none.list", "# none\n");
  coop_batch_spec sp;
  snprintf(text, sizeof text, "[batch]\nmatrix_list = %s/l.list\n[solver]\nname = cg\n", sub);
  spec_of(text, &sp);
  CU_ASSERT_EQUAL_FATAL(sp.count, 2);
  snprintf(want, sizeof want, "%s/a,b:c #1.mtx", sub);
  CU_ASSERT_STRING_EQUAL(sp.matrix[0], want);
  snprintf(want, sizeof want, "%s/b.mtx", sub);
  CU_ASSERT_STRING_EQUAL(sp.rhs[0], want);
  snprintf(want, sizeof want, "%s/p.mtx", sub);
  CU_ASSERT_STRING_EQUAL(sp.matrix[1], want);
  CU_ASSERT_PTR_NULL(sp.rhs[1]);
  CU_ASSERT(sp.line[0] == 3 && sp.line[1] == 4 && sp.rows[0] == 2 && sp.rows[1] == 3 && sp.total_rows == 5);
  const int32_t owner[2] = {0, 0};
  coop_batch bt;
  CU_ASSERT_EQUAL_FATAL(coop_batch_build(&sp, owner, 0, &bt), 0);
  CU_ASSERT(bt.b[0] == 8 && bt.b[1] == 10 && bt.b[2] == 1 && bt.val[1] == 5); /* b from b.mtx, then A*1 */
  coop_batch_free(&bt);
  coop_batch_spec_destroy(&sp);
  snprintf(text, sizeof text, "[batch]\nmatrix_list = %s/bad.list\n[solver]\nname = cg\n", sub);
  snprintf(want, sizeof want, "%s/bad.list:2: unterminated quote", sub);
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error(text), want));
  snprintf(text, sizeof text, "[batch]\nmatrix_list = %s/none.list\n[solver]\nname = cg\n", sub);
  snprintf(want, sizeof want, "%s/none.list: no matrices", sub);
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error(text), want));
  snprintf(text, sizeof text, "[batch]\nmatrix_list = %s/gone.list\n[solver]\nname = cg\n", sub);
  snprintf(want, sizeof want, "t.ini:2: batch.matrix_list = %s/gone.list: cannot read the matrix list", sub);
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error(text), want));
  snprintf(text, sizeof text, "[batch]\nmatrices = x.mtx\nmatrix_list = %s/l.list\n[solver]\nname = cg\n", sub);
  CU_ASSERT_PTR_NOT_NULL(strstr(spec_error(text), "batch.matrices (from t.ini:2) and batch.matrix_list (from "
                                                  "t.ini:3) both name the matrices"));
  coop_error_clear();
  for (const char *const *f = (const char *const[]){"a,b:c #1.mtx", "p.mtx", "b.mtx", "l.list", "bad.list",
                                                     "none.list", NULL};
       *f; f++) {
    snprintf(want, sizeof want, "%s/%s", sub, *f);
    unlink(want);
  }
  rmdir(sub);
  rmdir(dir);
}

COOP_UNIT_MPI_MAIN("batch",
                   {"generator: determinism", test_determinism},
                   {"generator: ranges", test_ranges},
                   {"generator: bad values", test_bad_generators},
                   {"generator: the same problems at any rank count", test_rank_independence},
                   {"generator: the 7-point stencil", test_stencil},
                   {"dealing", test_dealing},
                   {"heat: time steps and step counts", test_heat_steps},
                   {"heat: bad time steps and step counts", test_heat_bad},
                   {"heat: the built batch", test_heat_build},
                   {"host: 1 x 1", test_one_by_one},
                   {"host: Jacobi by hand", test_jacobi_by_hand},
                   {"host: CG on SPD systems", test_cg_spd},
                   {"host: heat by hand", test_heat_by_hand},
                   {"host: CG breakdowns, zero diagonal", test_cg_breakdowns},
                   {"dispatch", test_dispatch},
                   {"GPU order: estimated work, ragged", test_work},
                   {"GPU order: levels of split rows", test_levels},
                   {"matrix list: one line", test_list_line},
                   {"matrix list: the spec from a list file", test_list_spec})
