#include "problem/problem.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* A scale x of the stencil (a weight 1/h^2) or of the sine problem (k^2) that
 * the solve cannot carry, or 0. Residual entries are about x, products A p
 * about x^2 (x^3 for pipecg's A A r), stored in the field's precision, and dot
 * products like p.Ap about points * x^3, summed in double: all must stay
 * finite and nonzero. Outside that a solve ends in inf or 0 and reports
 * diverged or converged on garbage (seen at lx = 1e-300, 1e300, 1e-70). */
static int bad_scale(double x, coop_precision prec, int cubes, double points, double *lo, double *hi) {
  const double emin = prec == COOP_FP32 ? FLT_MIN : DBL_MIN, emax = prec == COOP_FP32 ? FLT_MAX : DBL_MAX;
  *lo = fmax(sqrt(emin), cbrt(DBL_MIN) * 0x1p20);
  *hi = fmin(cubes ? cbrt(emax) : sqrt(emax), cbrt(DBL_MAX / points)) / 8; /* 8: 2 sum w + k^2 */
  return !(x >= *lo && x <= *hi);
}

/* grid.lx, ly, lz against the points per axis: named, before any work. */
static int check_box(const coop_config *cfg, int ndim, const int64_t n[3], const double len[3],
                     coop_precision prec, double points) {
  static const char *const lkey[3] = {"grid.lx", "grid.ly", "grid.lz"}, *const nkey[3] = {"grid.nx", "grid.ny", "grid.nz"};
  const int sine = strcmp(coop_config_str(cfg, "problem.type"), "sine") == 0;
  const double mode = (double)coop_config_int(cfg, "problem.mode");
  const char *pname = prec == COOP_FP32 ? "fp32" : "fp64";
  const int cubes = strcmp(coop_config_str(cfg, "solver.name"), "pipecg") == 0;
  double lo, hi;
  for (int a = 0; a < ndim; a++) {
    const double h = len[a] / ((double)n[a] + 1.0), w = 1.0 / (h * h), k = mode * M_PI / len[a];
    if (bad_scale(w, prec, cubes, points, &lo, &hi))
      return coop_error_input("%s = %g (from %s): with %s = %lld the spacing h = %.3g gives the stencil "
                              "weight 1/h^2 = %.3g, outside [%.3g, %.3g] where %s values and double "
                              "sums of the residual stay finite and nonzero; choose a box length "
                              "nearer 1", lkey[a], len[a], coop_config_origin(cfg, lkey[a]), nkey[a],
                              (long long)n[a], h, w, lo, hi, pname);
    if (sine && bad_scale(k * k, prec, cubes, points, &lo, &hi))
      return coop_error_input("%s = %g (from %s): the sine problem's (problem.mode pi / %s)^2 = %.3g "
                              "is outside [%.3g, %.3g] where %s values and double sums of the residual "
                              "stay finite and nonzero; choose a box length nearer 1", lkey[a], len[a],
                              coop_config_origin(cfg, lkey[a]), lkey[a] + 5, k * k, lo, hi, pname);
  }
  return 0;
}

static int setup_grid(coop_linsys *ls, const coop_comm *c, const coop_config *cfg) {
  const int ndim = (int)coop_config_int(cfg, "grid.dim");
  const int64_t n[3] = {coop_config_int(cfg, "grid.nx"), coop_config_int(cfg, "grid.ny"),
                        ndim == 3 ? coop_config_int(cfg, "grid.nz") : 1};
  const double len[3] = {coop_config_real(cfg, "grid.lx"), coop_config_real(cfg, "grid.ly"),
                         ndim == 3 ? coop_config_real(cfg, "grid.lz") : 1.0};
  const int g = (int)coop_config_int(cfg, "grid.ghost");
  ls->grid = 1;
  /* a grid problem's b and x0 come from its type: another choice would be ignored */
  static const char *const matrix_only[][2] = {{"problem.rhs", "ones"}, {"problem.x0", "zero"}};
  for (size_t i = 0; i < sizeof matrix_only / sizeof *matrix_only; i++)
    if (strcmp(coop_config_str(cfg, matrix_only[i][0]), matrix_only[i][1]) != 0)
      return coop_error_input("%s = %s (from %s) applies to problem.type = matrix, not to %s",
                              matrix_only[i][0], coop_config_str(cfg, matrix_only[i][0]),
                              coop_config_origin(cfg, matrix_only[i][0]),
                              coop_config_str(cfg, "problem.type"));
  /* Point counts are int64_t and size_t products (with ghost layers, times the
   * element size): below 2^53 points none of them can wrap, which would size
   * arrays smaller than the loops that fill them. */
  const double points = (double)n[0] * (double)n[1] * (double)n[2];
  if (points > 0x1p53)
    return coop_error_input("grid.nx x grid.ny%s = %.4g points: at most 2^53 (%.4g)",
                            ndim == 3 ? " x grid.nz" : "", points, 0x1p53);
  COOP_CHECK(check_box(cfg, ndim, n, len, ls->prec, points));
  COOP_CHECK(coop_problem_init(&ls->poisson, coop_config_str(cfg, "problem.type"), ndim,
                               (int)coop_config_int(cfg, "problem.mode"), len, n));
  COOP_CHECK(coop_decomp_create(&ls->dec, c->world, ndim, n, g));
  coop_stencil_init(&ls->s, ndim, ls->prec, ls->dec.n, g, ls->poisson.h);
  ls->n = (int64_t)coop_grid_owned(&ls->s.grid);
  ls->n_global = n[0] * n[1] * n[2];
  return 0;
}

/* problem.rhs and problem.x0: a name (ones or random; zero) or "file:PATH" (a
 * Matrix Market vector). Checked when the problem is read, so a misspelling
 * stops a dry run too, and before the matrix is built, not after. */
static int vector_spec(const char *key, const char *value, const char *name1, const char *name2) {
  if (strcmp(value, name1) == 0 || (name2 && strcmp(value, name2) == 0)) return 0;
  if (strncmp(value, "file:", 5) != 0)
    return coop_error_input("%s = %s: expected %s%s%s or file:PATH", key, value, name1,
                            name2 ? ", " : "", name2 ? name2 : "");
  if (!value[5]) return coop_error_input("%s = %s: no path after file: (expected file:PATH)", key, value);
  return 0;
}

static int setup_matrix(coop_linsys *ls, const coop_comm *c, const coop_config *cfg, uint64_t host_limit) {
  int64_t nr, nc, ann;
  ls->grid = 0;
  ls->matrix = coop_config_str(cfg, "problem.matrix");
  if (strcmp(ls->matrix, "none") == 0)
    return coop_error_input("problem.type = matrix needs problem.matrix = PATH (a Matrix Market file)");
  if (ls->prec != COOP_FP64)
    return coop_error_input("solver.precision = %s: matrix problems are fp64 only",
                            coop_config_str(cfg, "solver.precision"));
  /* The matrix sets the size: grid keys set beside it are ignored, and said
   * so (a note, as PETSc lists unused options: one input file may serve grid
   * and matrix runs). */
  static const char *const grid_keys[] = {"grid.dim", "grid.nx", "grid.ny", "grid.nz",
                                          "grid.lx",  "grid.ly", "grid.lz", "grid.ghost"};
  char unused[160] = "";
  for (size_t k = 0; k < sizeof grid_keys / sizeof *grid_keys; k++)
    if (!coop_config_is_default(cfg, grid_keys[k]))
      snprintf(unused + strlen(unused), sizeof unused - strlen(unused), "%s%s", unused[0] ? ", " : "", grid_keys[k]);
  if (unused[0] && c->rank == 0)
    fprintf(stderr, "coopsolve: note: %s set but not used: problem.type = matrix takes its size from %s\n", unused,
            ls->matrix);
  COOP_CHECK(coop_mm_read_size(ls->matrix, &nr, &nc, &ann));
  if (nr != nc) return coop_error_input("%s: the matrix is %lld x %lld, not square", ls->matrix,
                                        (long long)nr, (long long)nc);
  if (nr < c->size)
    return coop_error_input("%s: %lld rows cannot be shared by %d ranks", ls->matrix, (long long)nr, c->size);
  COOP_CHECK(vector_spec("problem.rhs", coop_config_str(cfg, "problem.rhs"), "ones", "random"));
  COOP_CHECK(vector_spec("problem.x0", coop_config_str(cfg, "problem.x0"), "zero", NULL));
  ls->n_global = nr;
  coop_decomp_split(nr, c->size, c->rank, &ls->n, &ls->row_lo);
  /* The size line alone sizes the reader's row arrays (row pointers and
   * cursors, 16 bytes a row), allocated before any entry is read: checked
   * here, so that a three-line file cannot exhaust the node's memory. */
  if (ls->n > INT32_MAX)
    return coop_error_input("%s: %lld rows, %lld of them on rank %d: at most 2^31 - 1 rows a rank (use more ranks)",
                            ls->matrix, (long long)nr, (long long)ls->n, c->rank);
  const uint64_t rows_bytes = 16 * ((uint64_t)ls->n + 1);
  if (host_limit && rows_bytes > host_limit)
    return coop_error_input("%s: %lld rows: rank %d would hold %.1f MiB of row pointers before reading an entry, "
                            "and a rank of this node may use %.1f MiB; use more ranks or nodes",
                            ls->matrix, (long long)nr, c->rank, (double)rows_bytes / 1048576.0,
                            (double)host_limit / 1048576.0);
  return coop_mm_read(ls->matrix, ls->row_lo, ls->row_lo + ls->n, &ls->mm);
}

int coop_linsys_create(coop_linsys *ls, const coop_comm *c, const coop_config *cfg, uint64_t host_limit) {
  memset(ls, 0, sizeof *ls);
  ls->dec.cart = MPI_COMM_NULL;
  ls->prec = strcmp(coop_config_str(cfg, "solver.precision"), "fp32") == 0 ? COOP_FP32 : COOP_FP64;
  if (strcmp(coop_config_str(cfg, "problem.type"), "matrix") == 0) return setup_matrix(ls, c, cfg, host_limit);
  return setup_grid(ls, c, cfg);
}

/* Uniform in [-1, 1) from (seed, global index): the same vector at any rank count. */
static double hashed(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + i + 0x632be59bd9b4e5adull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

/* value is "file:PATH", checked by vector_spec. */
static int vector_from(const coop_linsys *ls, const char *value, double *out) {
  return coop_mm_read_vector(value + 5, ls->n_global, ls->row_lo, ls->row_lo + ls->n, out);
}

static int matrix_rhs(coop_linsys *ls, const coop_config *cfg, double *b, double *x0, int *need_apply) {
  const char *rhs = coop_config_str(cfg, "problem.rhs"), *x0s = coop_config_str(cfg, "problem.x0");
  const uint64_t seed = (uint64_t)coop_config_int(cfg, "problem.seed");
  *need_apply = 0;
  if (strcmp(x0s, "zero") == 0) memset(x0, 0, (size_t)ls->n * sizeof *x0);
  else COOP_CHECK(vector_from(ls, x0s, x0));
  if (strcmp(rhs, "ones") == 0) { /* b = A 1: the exact solution is known */
    if (!(ls->exact = malloc((size_t)ls->n * sizeof *ls->exact + 1)))
      return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
    for (int64_t i = 0; i < ls->n; i++) ls->exact[i] = 1.0;
    *need_apply = 1; /* b is computed on the backend */
    return 0;
  }
  if (strcmp(rhs, "random") == 0) {
    for (int64_t i = 0; i < ls->n; i++) b[i] = hashed(seed, (uint64_t)(ls->row_lo + i));
    return 0;
  }
  return vector_from(ls, rhs, b);
}

int coop_linsys_check(const coop_linsys *ls, const coop_comm *c, const coop_config *cfg) {
  if (ls->grid) return 0;
  const char *const keys[2] = {"problem.x0", "problem.rhs"};
  double *v = malloc((size_t)ls->n * sizeof *v + 1);
  int rc = v ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  for (int k = 0; k < 2 && !rc; k++) {
    const char *val = coop_config_str(cfg, keys[k]);
    if (strncmp(val, "file:", 5) == 0) rc = vector_from(ls, val, v);
  }
  free(v);
  COOP_CHECK(coop_comm_agree(c, rc));
  if (strcmp(coop_config_str(cfg, "solver.pc"), "jacobi") != 0) return 0;
  /* the first row of all ranks without a diagonal entry (krylov.c's message) */
  double d = 0.0;
  const int64_t bad = coop_mm_zero_diagonal(&ls->mm, &d);
  /* the lowest such row (MPI_MINLOC on row, rank) and its entry, from the rank that holds it */
  struct {
    long row;
    int rank;
  } in = {bad < 0 ? LONG_MAX : (long)bad, c->rank}, out;
  COOP_MPI(MPI_Allreduce(&in, &out, 1, MPI_LONG_INT, MPI_MINLOC, c->world));
  if (out.row == LONG_MAX) return 0;
  COOP_MPI(MPI_Bcast(&d, 1, MPI_DOUBLE, out.rank, c->world));
  if (c->rank != 0) return coop_error_remote(COOP_ERR_INPUT, "stopped because another rank met an input error");
  if (d == 0.0)
    return coop_error_input("solver.pc = jacobi: row %ld of the matrix has a zero or missing diagonal entry, so the "
                            "Jacobi preconditioner does not exist (use solver.pc = none)", out.row + 1);
  return coop_error_input("solver.pc = jacobi: row %ld of the matrix has the diagonal entry %g, too small to invert "
                          "(its inverse overflows), so the Jacobi preconditioner does not exist (use solver.pc = none)",
                          out.row + 1, d);
}

/* The operator, then x0 and b. Every collective here is reached by all ranks:
 * the operator's build agrees its own status, the ranks agree again before
 * b = A 1 (an exchange with the others), and a failure inside that exchange
 * ends the job, since the others may be waiting for this rank's part. */
static int krylov_matrix(coop_linsys *ls, const coop_comm *c, const coop_config *cfg,
                         coop_backend *be, int cuda_aware, double *b, double *x0) {
  const coop_mm_matrix *m = &ls->mm;
  COOP_CHECK(coop_op_create_csr(be, c->world, ls->row_lo, ls->n, ls->n_global, m->rowptr,
                                m->colind, m->val, cuda_aware, &ls->A));
  coop_mm_free(&ls->mm); /* the backend holds it now */
  coop_vec *ones = NULL;
  int need_apply = 0;
  int rc = matrix_rhs(ls, cfg, b, x0, &need_apply);
  if (!rc && coop_fault(c, "rhs")) /* where a rank's own file or memory fails */
    rc = COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  if (!rc) rc = coop_vec_upload(ls->x, x0);
  if (!rc && !need_apply) rc = coop_vec_upload(ls->b, b);
  if (!rc && need_apply && !(rc = coop_vec_duplicate(ls->x, &ones))) rc = coop_vec_set(ones, 1.0);
  if (!(rc = coop_comm_agree(c, rc)) && need_apply) {
    rc = coop_op_apply(ls->A, ones, ls->b);
    if (rc) coop_comm_abort(c, rc); /* the ranks may be inside the exchange */
  }
  coop_vec_destroy(ones);
  return rc;
}

/* The Krylov form of a grid problem: no collectives. */
static int krylov_grid(coop_linsys *ls, coop_backend *be, int cuda_aware, double *b, double *x0) {
  if (!(ls->exact = malloc((size_t)ls->n * sizeof *ls->exact + 1)))
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  coop_problem_krylov(&ls->poisson, &ls->dec, &ls->s, b, ls->exact);
  memset(x0, 0, (size_t)ls->n * sizeof *x0);
  COOP_CHECK(coop_op_create_stencil(be, &ls->dec, &ls->s, cuda_aware, &ls->A));
  COOP_CHECK(coop_vec_upload(ls->b, b));
  return coop_vec_upload(ls->x, x0);
}

int coop_linsys_krylov(coop_linsys *ls, const coop_comm *c, const coop_config *cfg,
                       coop_backend *be, int cuda_aware) {
  double *b = malloc((size_t)ls->n * sizeof *b + 1), *x0 = malloc((size_t)ls->n * sizeof *x0 + 1);
  int rc = b && x0 ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  /* a vector's create joins its collective before it can fail, so both are
   * made on every rank; the ranks agree before the operator's collectives */
  const int rb = coop_vec_create(be, c->world, ls->prec, ls->n, &ls->b);
  const int rx = coop_vec_create(be, c->world, ls->prec, ls->n, &ls->x);
  if (!rc) rc = rb ? rb : rx;
  if (!rc && coop_fault(c, "vectors"))
    rc = COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  if (!(rc = coop_comm_agree(c, rc)))
    rc = ls->grid ? krylov_grid(ls, be, cuda_aware, b, x0)
                  : krylov_matrix(ls, c, cfg, be, cuda_aware, b, x0);
  free(b);
  free(x0);
  return rc;
}

void coop_linsys_destroy(coop_linsys *ls) {
  coop_op_destroy(ls->A);
  coop_vec_destroy(ls->b);
  coop_vec_destroy(ls->x);
  coop_mm_free(&ls->mm);
  free(ls->exact);
  if (ls->grid) coop_decomp_destroy(&ls->dec);
  memset(ls, 0, sizeof *ls);
}
