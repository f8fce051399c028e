/* Shared parts of the Krylov methods. */
#include "solvers/krylov.h"
#include "solvers/checkpoint.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coop_build.h"
#if COOP_HAVE_CUDA
#include "solvers/krylov_grid.h"
#endif

/* The Jacobi preconditioner. Whether it exists is decided by all ranks in one
 * collective, which carries the first bad row and the worst status of any
 * rank: a rank that failed before it (status, or here) still joins it, so no
 * rank waits there alone. k may be NULL when status is set. */
static int setup_pc(coop_solve *sv, krylov_data *k, int status) {
  if (strcmp(sv->pc, "jacobi") != 0) return status;
  const coop_op *A = sv->A;
  int64_t bad = -1;
  double *inv = NULL;
  if (!status && !(inv = malloc((size_t)A->n * sizeof *inv + 1)))
    status = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  for (int64_t i = 0; inv && i < A->n; i++) {
    if (A->diag[i] == 0.0 || !isfinite(A->diag[i])) {
      if (bad < 0) bad = i;
      inv[i] = 0.0;
    } else {
      inv[i] = 1.0 / A->diag[i];
    }
  }
  if (!status && coop_fault(sv->comm, "pc"))
    status = COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  /* the first bad row of all ranks, in global numbering; minus the worst status */
  const long long first = bad < 0 ? -1 : (long long)(A->kind == COOP_OP_CSR ? A->row_lo + bad : bad);
  long long v[2] = {first < 0 ? LLONG_MAX : first, -(long long)status};
  int rc = MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_LONG_LONG, MPI_MIN, sv->comm->world);
  if (rc != MPI_SUCCESS) rc = coop_error_mpi(rc, "MPI_Allreduce", __FILE__, __LINE__);
  else if (status) rc = status;
  else if (v[1] < 0) rc = coop_error_remote((int)-v[1], "stopped because another rank failed");
  else if (v[0] != LLONG_MAX)
    rc = coop_error_input("solver.pc = jacobi: row %lld of the matrix has a zero or missing diagonal "
                          "entry, so the Jacobi preconditioner does not exist (use solver.pc = none)",
                          v[0] + 1);
  if (!rc) rc = coop_vec_duplicate(sv->b, &k->inv_diag);
  if (!rc) rc = coop_vec_upload(k->inv_diag, inv);
  free(inv);
  return rc;
}

#if COOP_HAVE_CUDA
/* The persistent kernel's view of the operator and preconditioner. */
static void kg_op_of(const coop_solve *sv, const krylov_data *k, coop_kg_op *op) {
  const coop_op *A = sv->A;
  memset(op, 0, sizeof *op);
  op->n = A->n;
  if (A->kind == COOP_OP_CSR) {
    op->kind = COOP_KG_CSR;
    op->rowptr = A->loc->rowptr;
    op->colind = A->loc->colind;
    op->val = A->loc->val;
  } else {
    op->kind = COOP_KG_STENCIL;
    op->ndim = A->s.grid.ndim;
    op->nx = A->s.grid.n[0];
    op->ny = A->s.grid.n[1];
    op->nz = A->s.grid.n[2];
    for (int a = 0; a < 3; a++) op->w[a] = A->s.w[a];
  }
  op->inv_diag = k->inv_diag ? (const double *)k->inv_diag->data : NULL;
}
#endif

/* grid mode: one rank, fp64, a GPU that runs cooperative kernels. */
static int choose_mode(coop_solve *sv, krylov_data *k) {
  if (!sv->be->device_memory) {
    sv->mode = "host";
    return 0;
  }
  sv->mode = "launch";
  if (strcmp(sv->sync, "launch") == 0) return 0;
  const int explicit_grid = strcmp(sv->sync, "grid") == 0;
  const char *why = NULL;
  if (sv->comm->size > 1) why = "several ranks: one kernel per operation, reductions across ranks by MPI";
  else if (sv->A->prec != COOP_FP64) why = "the persistent Krylov kernels are fp64 only";
  else if (!sv->be->cooperative) why = "this GPU has no cooperative launch";
  else if (coop_ckpt_requested(sv))
    why = "checkpoints and restarts run one kernel per operation (the persistent kernel cannot stop "
          "mid-solve for a checkpoint)";
#if COOP_HAVE_CUDA
  if (!why) {
    coop_kg_op op;
    kg_op_of(sv, k, &op);
    int most = 0, threads = 0, best = 0;
    const coop_kg_method m = (coop_kg_method)k->method;
    COOP_CHECK(coop_kg_max_blocks(&op, m, sv->be->device, &most, &threads));
    if (most < 1) why = "the persistent kernel cannot be resident";
    else if (sv->blocks > most)
      return coop_error_input("run.blocks = %d: at most %d blocks can be resident on GPU %d for the "
                              "persistent Krylov kernel, and a grid barrier over more could never "
                              "complete", sv->blocks, most, sv->be->device);
    if (!why) COOP_CHECK(coop_kg_default_blocks(&op, m, sv->be->device, &best, &threads));
    k->grid_blocks = sv->blocks > 0 ? sv->blocks : best;
    k->grid_threads = threads;
  }
#else
  if (!why) why = "no CUDA in this build";
#endif
  if (why) {
    k->grid_blocks = 0;
    if (explicit_grid && sv->comm->rank == 0)
      fprintf(stderr, "coopsolve: note: run.sync = grid: %s; using sync = launch\n", why);
    return 0;
  }
  sv->mode = "grid";
  return 0;
}

int coop_krylov_setup(coop_solve *sv, int method, int nvec, void **data) {
  krylov_data *k = calloc(1, sizeof *k);
  *data = k;
  /* setup_pc is collective: a rank without k joins it too, with its failure */
  COOP_CHECK(setup_pc(sv, k, k ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory")));
  k->method = method;
  k->ph_solve = coop_solve_phase(sv, "iterate");
  COOP_CHECK(choose_mode(sv, k));
#if COOP_HAVE_CUDA
  if (k->grid_blocks) { /* the persistent kernel's work space */
    coop_backend *be = sv->be;
    const int64_t cap = sv->ctl.hist_cap;
    const size_t nwork = coop_kg_work_doubles((coop_kg_method)method, sv->A->n, k->grid_blocks);
    COOP_CHECK(be->alloc(be, (void **)&k->kg_work, nwork * sizeof(double)));
    COOP_CHECK(be->alloc(be, &k->kg_result, sizeof(coop_kg_result)));
    COOP_CHECK(be->alloc(be, (void **)&k->kg_hist_iter, (size_t)cap * sizeof(int64_t)));
    COOP_CHECK(be->alloc(be, (void **)&k->kg_hist_res, (size_t)cap * sizeof(double)));
    return 0;
  }
#endif
  if (nvec > KRYLOV_MAX_VECS) return COOP_ERROR(COOP_ERR_RUNTIME, "%d work vectors", nvec);
  for (int i = 0; i < nvec; i++) {
    COOP_CHECK(coop_vec_duplicate(sv->b, &k->w[i]));
    k->nw = i + 1; /* counted before the set, so destroy frees it if the set fails */
    COOP_CHECK(coop_vec_set(k->w[i], 0.0));
  }
  return 0;
}

void coop_krylov_destroy(coop_solve *sv, void *data) {
  krylov_data *k = data;
  if (!k) return;
  for (int i = 0; i < k->nw; i++) coop_vec_destroy(k->w[i]);
  coop_vec_destroy(k->inv_diag);
  if (sv && sv->be) {
    sv->be->release(sv->be, k->kg_work);
    sv->be->release(sv->be, k->kg_result);
    sv->be->release(sv->be, k->kg_hist_iter);
    sv->be->release(sv->be, k->kg_hist_res);
  }
  free(k);
}

void coop_krylov_view(const coop_solve *sv, const void *data, FILE *out) {
  const krylov_data *k = data;
  fprintf(out, "  %s: pc %s, mode %s", sv->A->kind == COOP_OP_CSR ? "csr" : "stencil", sv->pc, sv->mode);
  if (k && k->grid_blocks) fprintf(out, ", one persistent kernel of %d x %d threads", k->grid_blocks, k->grid_threads);
  fprintf(out, "\n");
}

int coop_krylov_pc(const krylov_data *k, const coop_vec *r, coop_vec *z) {
  if (k->inv_diag) return coop_vec_pointwise_mult(z, k->inv_diag, r);
  return coop_vec_copy(z, r);
}

int coop_krylov_start(coop_solve *sv, double rn, double start) {
  coop_solve_ctl *c = &sv->ctl;
  c->r0 = rn;
  c->rnorm = rn;
  c->iterations = 0;
  coop_solve_record(sv, 0, rn, MPI_Wtime() - start);
  c->reason = coop_stop_test(rn, rn, 0, c->max_iter, c->rtol, c->atol, c->dtol);
  return c->reason;
}

int coop_krylov_check(coop_solve *sv, int64_t it, double rn, double start) {
  coop_solve_ctl *c = &sv->ctl;
  c->rnorm = rn;
  c->iterations = it;
  coop_solve_record(sv, it, rn, MPI_Wtime() - start);
  c->reason = coop_stop_test(rn, c->r0, it, c->max_iter, c->rtol, c->atol, c->dtol);
  return c->reason;
}

#if COOP_HAVE_CUDA
static int fetch_grid(coop_solve *sv, const coop_kg_result *res, const int64_t *hi, const double *hr) {
  coop_backend *be = sv->be;
  coop_solve_ctl *c = &sv->ctl;
  coop_kg_result h;
  COOP_CHECK(be->download(be, &h, res, sizeof h));
  const int64_t n = h.hist_len < c->hist_cap ? h.hist_len : c->hist_cap;
  COOP_CHECK(be->download(be, c->hist_iter, hi, (size_t)n * sizeof *hi));
  COOP_CHECK(be->download(be, c->hist_res, hr, (size_t)n * sizeof *hr));
  c->hist_len = n;
  c->iterations = h.iterations;
  c->r0 = h.r0;
  c->rnorm = h.rnorm;
  c->reason = h.reason;
  return 0;
}

static int run_grid(coop_solve *sv, krylov_data *k, double start) {
  coop_backend *be = sv->be;
  coop_kg_op op;
  kg_op_of(sv, k, &op);
  const coop_solve_ctl *c = &sv->ctl;
  coop_kg_args a = {(coop_kg_method)k->method, c->max_iter, c->rtol, c->atol, c->dtol, c->hist_cap,
                    k->kg_hist_iter, k->kg_hist_res};
  COOP_CHECK(coop_kg_solve(&op, &a, sv->b->data, sv->x->data, k->kg_work, k->kg_result, k->grid_blocks,
                           k->grid_threads, be->stream));
  COOP_CHECK(be->sync(be)); /* the solve ends here; fetching the history is not timed */
  sv->t_solve = MPI_Wtime() - start;
  COOP_CHECK(fetch_grid(sv, k->kg_result, k->kg_hist_iter, k->kg_hist_res));
  sv->barriers = coop_kg_barriers_per_iter((coop_kg_method)k->method);
  coop_solve_replay(sv);
  return 0;
}
#endif

/* A recurrence that says converged while b - A x says otherwise (a matrix CG
 * cannot handle, or lost orthogonality) is a breakdown, not an answer. The
 * margin allows for rounding: 100x the tolerance plus 1000 eps ||r0||. */
static int check_true_residual(coop_solve *sv) {
  coop_vec *r = NULL;
  double tn = 0.0;
  int rc = coop_vec_duplicate(sv->b, &r);
  if (!rc) rc = coop_op_residual(sv->A, sv->b, sv->x, r);
  if (!rc) rc = coop_vec_norm(r, &tn);
  coop_vec_destroy(r);
  COOP_CHECK(rc);
  sv->true_rnorm = tn;
  coop_solve_ctl *c = &sv->ctl;
  const double eps = sv->A->prec == COOP_FP32 ? FLT_EPSILON : DBL_EPSILON;
  const double tol = fmax(c->rtol * c->r0, c->atol);
  if (coop_reason_converged(c->reason) && !(tn <= 100.0 * tol + 1e3 * eps * c->r0))
    c->reason = COOP_DIVERGED_BREAKDOWN;
  return 0;
}

int coop_krylov_run(coop_solve *sv, krylov_data *k, int (*body)(coop_solve *, krylov_data *, double)) {
  sv->ctl.hist_len = 0;
  sv->barriers = 0;
  COOP_MPI(MPI_Barrier(sv->comm->world)); /* time the solve from a common start */
  const double start = MPI_Wtime();
#if COOP_HAVE_CUDA
  if (k->grid_blocks) {
    COOP_CHECK(run_grid(sv, k, start));
  } else
#endif
  {
    COOP_CHECK(body(sv, k, start));
    COOP_CHECK(sv->be->sync(sv->be));
    sv->t_solve = MPI_Wtime() - start;
  }
  coop_solve_add_time(sv, k->ph_solve, sv->t_solve);
  return check_true_residual(sv);
}
