/* Shared parts of the Krylov methods. */
#include "solvers/krylov/krylov.h"
#include "solvers/checkpoint.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coop_build.h"
#if COOP_HAVE_CUDA
#include "solvers/krylov/krylov_grid.h"
#endif

/* The Jacobi preconditioner. Whether it exists is decided by all ranks in one
 * collective, which carries the first bad row and the worst status of any
 * rank: a rank that failed before it (status, or here) still joins it, so no
 * rank waits there alone. k may be NULL when status is set. */
static int setup_pc(coop_solve *sv, krylov_data *k, int status) {
  if (strcmp(coop_config_str(sv->cfg, "solver.pc"), "jacobi") != 0) return status;
  const coop_op *A = sv->A;
  int64_t bad = -1;
  double *inv = NULL;
  if (!status && !(inv = malloc((size_t)A->n * sizeof *inv + 1)))
    status = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  for (int64_t i = 0; inv && i < A->n; i++) {
    if (!(fabs(A->diag[i]) >= DBL_MIN) || !isfinite(A->diag[i])) { /* below DBL_MIN its inverse overflows */
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
  else if (v[0] != LLONG_MAX) {
    /* the entry of that row, from the rank that holds it (the others add 0) */
    double d = first == v[0] ? A->diag[bad] : 0.0;
    rc = MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_SUM, sv->comm->world);
    if (rc != MPI_SUCCESS) rc = coop_error_mpi(rc, "MPI_Allreduce", __FILE__, __LINE__);
    else if (d == 0.0)
      rc = coop_error_input("solver.pc = jacobi: row %lld of the matrix has a zero or missing diagonal "
                            "entry, so the Jacobi preconditioner does not exist (use solver.pc = none)",
                            v[0] + 1);
    else
      rc = coop_error_input("solver.pc = jacobi: row %lld of the matrix has the diagonal entry %g, too small to "
                            "invert (its inverse overflows), so the Jacobi preconditioner does not exist (use "
                            "solver.pc = none)", v[0] + 1, d);
  }
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

/* A grid-mode checkpoint holds the persistent kernel's state (solvers/krylov/krylov_grid.h:
 * its own vectors, scalars and parity), which the one-kernel-per-operation
 * methods cannot go on from, nor it from theirs: its scalars are named
 * grid_*, and this one, the grid's size, marks it. */
#define GRID_MARK "grid_blocks"

/* grid mode: one rank, fp64, a GPU that runs cooperative kernels. *why: the
 * reason it is not (NULL: it is). */
static int pick_mode(coop_solve *sv, krylov_data *k, int from_grid, const char **why_out) {
  *why_out = NULL;
  if (!sv->be->device_memory) {
    sv->mode = "host";
    return 0;
  }
  sv->mode = "launch";
  if (strcmp(sv->sync, "graph") == 0)
    return coop_error_input("run.sync = graph: CUDA graphs replay the steps of jacobi and heat; "
                            "the Krylov methods run launch or grid");
  if (strcmp(sv->sync, "launch") == 0) return 0;
  const int explicit_grid = strcmp(sv->sync, "grid") == 0;
  const char *why = NULL;
  if (k->pc) why = "solver.pc = mg runs its cycle as kernels of its own, between the Krylov kernels";
  else if (sv->comm->size > 1) why = "several ranks: one kernel per operation, reductions across ranks by MPI";
  else if (sv->A->prec != COOP_FP64) why = "the persistent Krylov kernels are fp64 only";
  else if (!sv->be->cooperative) why = "this GPU has no cooperative launch";
  else if (sv->ckpt && sv->ckpt->restart && !from_grid) {
    if (explicit_grid)
      return coop_error_input("--restart %s: a checkpoint of a solve in launch mode, whose state grid mode "
                              "cannot go on from; restart it with run.sync = launch",
                              sv->ckpt->restart);
    why = "the checkpoint to go on from was written in launch mode";
  }
#if COOP_HAVE_CUDA
  if (!why) {
    coop_kg_op op;
    kg_op_of(sv, k, &op);
    int most = 0, threads = 0, best = 0;
    const coop_kg_method m = k->method;
    COOP_CHECK(coop_kg_max_blocks(&op, m, sv->be->device, &most, &threads));
    if (most < 1) why = "the persistent kernel cannot be resident";
    else if (sv->blocks > most)
      return coop_error_input("tune.blocks = %d: at most %d blocks can be resident on GPU %d for the "
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
    *why_out = why;
    if (explicit_grid && sv->comm->rank == 0 && !from_grid)
      fprintf(stderr, "coopsolve: note: run.sync = grid: %s; using sync = launch\n", why);
    return 0;
  }
  sv->mode = "grid";
  return 0;
}

/* The mode, and a restart from a checkpoint of the same mode only. */
static int choose_mode(coop_solve *sv, krylov_data *k) {
  int from_grid = 0; /* collective: every rank reads the checkpoint */
  COOP_CHECK(coop_ckpt_restart_has(sv, GRID_MARK, &from_grid));
  const char *why = NULL;
  COOP_CHECK(pick_mode(sv, k, from_grid, &why));
  if (from_grid && strcmp(sv->mode, "grid") != 0)
    return coop_error_input("--restart %s: a checkpoint of a solve in grid mode (one persistent kernel), "
                            "which only grid mode can go on from: restart it with run.sync = grid on one "
                            "rank with --backend cuda (this run would use mode %s%s%s)",
                            sv->ckpt->restart, sv->mode, why ? ": " : "", why ? why : "");
  return 0;
}

int coop_krylov_setup(coop_solve *sv, coop_kg_method method, int nvec, void **data) {
  krylov_data *k = calloc(1, sizeof *k);
  *data = k;
  /* setup_pc is collective: a rank without k joins it too, with its failure */
  COOP_CHECK(setup_pc(sv, k, k ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory")));
  k->method = method;
  COOP_CHECK(coop_pc_create(sv, &k->pc));
  k->ph_solve = coop_solve_phase(sv, "iterate");
  COOP_CHECK(choose_mode(sv, k));
#if COOP_HAVE_CUDA
  if (k->grid_blocks) { /* the persistent kernel's work space */
    coop_backend *be = sv->be;
    const int64_t cap = sv->ctl.hist_cap;
    const size_t nwork = coop_kg_work_doubles(method, sv->A->n, k->grid_blocks);
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
  coop_pc_destroy(k->pc);
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
  fprintf(out, "  %s: pc %s, mode %s", sv->A->kind == COOP_OP_CSR ? "csr" : "stencil",
                coop_config_str(sv->cfg, "solver.pc"), sv->mode);
  if (k && k->grid_blocks) fprintf(out, ", one persistent kernel of %d x %d threads", k->grid_blocks, k->grid_threads);
  fprintf(out, "\n");
  if (k && k->pc && k->pc->view) k->pc->view(k->pc, out);
}

int coop_krylov_pc(const krylov_data *k, const coop_vec *r, coop_vec *z) {
  if (k->pc) return k->pc->apply(k->pc, r, z);
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

int coop_krylov_cg1_top(coop_solve *sv, int64_t it, int checked, double rr, double gamma, double delta,
                        double gamma_old, double alpha_old, const coop_ckpt_state *cs, double start,
                        double *alpha, double *beta, int *done) {
  *done = 1;
  if (!checked) {
    const double rn = sqrt(rr);
    if (it == 0 ? coop_krylov_start(sv, rn, start) : coop_krylov_check(sv, it, rn, start))
      return sv->ctl.reason == COOP_DIVERGED_ITS && it > 0 ? coop_ckpt_final(sv, it, cs) : 0;
    int stop = 0;
    if (it > 0) COOP_CHECK(coop_ckpt_point(sv, it, cs, &stop));
    if (stop) return 0;
  }
  if (gamma < 0.0) {
    sv->ctl.reason = COOP_DIVERGED_INDEFINITE_PC;
    return 0;
  }
  *beta = it == 0 ? 0.0 : gamma / gamma_old;
  const double den = it == 0 ? delta : delta - *beta * gamma / alpha_old; /* (p, A p) */
  if (!(den > 0.0)) {
    sv->ctl.reason = isnan(den) ? COOP_DIVERGED_NAN : COOP_DIVERGED_INDEFINITE_MAT;
    return 0;
  }
  *alpha = gamma / den;
  *done = 0;
  return 0;
}

#if COOP_HAVE_CUDA
/* Grid mode runs in segments when the checkpoint service is there
 * (coop_ckpt_next_stop); the next launch resumes where the last stopped, with
 * the same bits as one launch (solvers/krylov/krylov_grid.h). */
/* The checkpoint state of a grid-mode solve: x, the kernel's carried work
 * vectors (views of kg_work) as grid_NAME, its scalars as grid_NAME, and
 * GRID_MARK. odd: the parity they are at (0 to restore into). */
typedef struct {
  coop_ckpt_state st;
  coop_vec view[COOP_KG_MAX_CARRIED];
  char vname[COOP_KG_MAX_CARRIED][24], sname[COOP_KG_MAX_SCALARS][24];
  int ns;                              /* the method's scalars */
  double val[COOP_KG_MAX_SCALARS + 1]; /* their values, then the mark's */
} grid_ckpt;

static int grid_state(const coop_solve *sv, const krylov_data *k, int odd, grid_ckpt *g) {
  coop_kg_state ks;
  COOP_CHECK(coop_kg_state_of(k->method, sv->A->n, k->inv_diag != NULL, odd, &ks));
  coop_ckpt_state *st = &g->st;
  memset(st, 0, sizeof *st);
  st->vname[0] = "x";
  st->vec[0] = sv->x;
  st->nv = 1;
  for (int i = 0; i < ks.nv; i++, st->nv++) {
    g->view[i] = *sv->b; /* fp64, n entries, this backend */
    g->view[i].data = k->kg_work + ks.offset[i];
    snprintf(g->vname[i], sizeof g->vname[i], "grid_%s", ks.vname[i]);
    st->vname[st->nv] = g->vname[i];
    st->vec[st->nv] = &g->view[i];
  }
  for (int i = 0; i < ks.ns; i++, st->ns++) {
    snprintf(g->sname[i], sizeof g->sname[i], "grid_%s", ks.sname[i]);
    st->sname[i] = g->sname[i];
    st->sval[i] = &g->val[i];
  }
  g->ns = ks.ns;
  g->val[ks.ns] = (double)k->grid_blocks;
  st->sname[st->ns] = GRID_MARK;
  st->sval[st->ns++] = &g->val[ks.ns];
  return 0;
}

/* After a launch: its record into sv->ctl, with the history entries it added
 * (checks *checks to h->checks - 1; past the cap they all went to the last
 * slot, which holds the latest). */
static int fetch_grid(coop_solve *sv, const krylov_data *k, coop_kg_result *h, int64_t *checks) {
  coop_backend *be = sv->be;
  coop_solve_ctl *c = &sv->ctl;
  COOP_CHECK(be->download(be, h, k->kg_result, sizeof *h));
  if (h->checks > *checks && c->hist_cap > 0) {
    const int64_t lo = coop_history_slot(*checks, c->hist_cap);
    const int64_t hi = coop_history_slot(h->checks - 1, c->hist_cap) + 1;
    COOP_CHECK(be->download(be, c->hist_iter + lo, k->kg_hist_iter + lo, (size_t)(hi - lo) * sizeof *c->hist_iter));
    COOP_CHECK(be->download(be, c->hist_res + lo, k->kg_hist_res + lo, (size_t)(hi - lo) * sizeof *c->hist_res));
    c->hist_len = hi;
  }
  *checks = h->checks;
  c->iterations = h->iterations;
  c->r0 = h->r0;
  c->rnorm = h->rnorm;
  c->reason = h->reason;
  return 0;
}

static int run_grid(coop_solve *sv, krylov_data *k, double start) {
  coop_backend *be = sv->be;
  coop_solve_ctl *c = &sv->ctl;
  coop_kg_op op;
  kg_op_of(sv, k, &op);
  coop_kg_args a = {k->method, c->max_iter, c->rtol, c->atol, c->dtol, c->hist_cap,
                    k->kg_hist_iter, k->kg_hist_res, -1, 0};
  coop_kg_result h;
  memset(&h, 0, sizeof h);
  grid_ckpt g;
  int64_t it = 0, checks = 0;
  int resumed = 0, stop = 0;
  if (sv->ckpt) { /* with --restart, into the slots of parity 0 */
    COOP_CHECK(grid_state(sv, k, 0, &g));
    COOP_CHECK(coop_ckpt_resume(sv, &g.st, &it, &resumed));
  }
  if (resumed) {
    h.r0 = c->r0;
    h.rnorm = c->rnorm;
    h.iterations = it;
    h.hist_len = h.checks = checks = c->hist_len;
    h.reason = COOP_REASON_NONE;
    h.odd = 0;
    for (int i = 0; i < g.ns; i++) h.s[i] = g.val[i];
    COOP_CHECK(be->upload(be, k->kg_result, &h, sizeof h));
    a.resume = 1;
  }
  double per_iter = 3e-6 + sv->bytes_per_iter / 2e12, t_end = start;
  for (;;) {
    a.stop_at = coop_ckpt_next_stop(sv, it, per_iter);
    const double t0 = MPI_Wtime();
    COOP_CHECK(coop_kg_solve(&op, &a, sv->b->data, sv->x->data, k->kg_work, k->kg_result, k->grid_blocks,
                             k->grid_threads, be->stream));
    COOP_CHECK(be->sync(be));
    t_end = MPI_Wtime();
    COOP_CHECK(fetch_grid(sv, k, &h, &checks));
    if (h.iterations > it) per_iter = (t_end - t0) / (double)(h.iterations - it);
    it = h.iterations;
    a.resume = 1;
    if (h.reason == COOP_DIVERGED_ITS && sv->ckpt) { /* the kernel left its state whole */
      COOP_CHECK(grid_state(sv, k, h.odd, &g));
      for (int i = 0; i < g.ns; i++) g.val[i] = h.s[i];
      COOP_CHECK(coop_ckpt_final(sv, it, &g.st));
    }
    if (h.reason != COOP_REASON_NONE || a.stop_at < 0) break;
    COOP_CHECK(grid_state(sv, k, h.odd, &g));
    for (int i = 0; i < g.ns; i++) g.val[i] = h.s[i];
    COOP_CHECK(coop_ckpt_point(sv, it, &g.st, &stop));
    if (stop) break;
  }
  sv->t_solve = t_end - start; /* fetching the last history is not timed */
  sv->barriers = coop_kg_barriers_per_iter(k->method);
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
