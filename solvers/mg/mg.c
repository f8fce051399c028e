/* Geometric multigrid for the Poisson grid problems: the solver (cycles of
 * solver.mg_cycle on the grid form until the stop test passes) and the
 * preconditioner of cg (one cycle from zero). The hierarchy and the host's
 * level operations are in solvers/mg/mg_level.h, the GPU's in
 * solvers/mg/mg_cuda.h; this file holds the loop, its checks and checkpoints
 * (the state between cycles is the field alone). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coop_build.h"
#include "solvers/checkpoint.h"
#include "solvers/mg/mg_level.h"
#include "solvers/pc.h"
#include "solvers/solver.h"
#include "solvers/mg/mg_cuda.h"

typedef enum { MG_HOST, MG_LAUNCH, MG_GRAPH, MG_GRID } mg_mode;

typedef struct {
  coop_mg_hier h;
  int ph_cycle;
  mg_mode mode;
  coop_mg_gpu *gpu; /* the levels on the GPU (run.backend = cuda), else NULL */
  double t_pass;    /* seconds of one fine-level residual pass, timed at setup: the summary's unit */
} mg_data;

static const char *mode_name(mg_mode m) {
  return m == MG_HOST ? "host" : m == MG_LAUNCH ? "launch" : m == MG_GRAPH ? "graph" : "grid";
}

static const char *cycle_name(coop_mg_cycle_type c) { return c == COOP_MG_W ? "W" : c == COOP_MG_F ? "F" : "V"; }

/* The keys (solver.mg_*) into h. */
static int mg_settings(const coop_solve *sv, coop_mg_hier *h) {
  const char *c = coop_config_str(sv->cfg, "solver.mg_cycle");
  h->cycle = strcmp(c, "w") == 0 ? COOP_MG_W : strcmp(c, "f") == 0 ? COOP_MG_F : COOP_MG_V;
  h->smoother = strcmp(coop_config_str(sv->cfg, "solver.mg_smoother"), "jacobi") == 0 ? COOP_MG_JACOBI : COOP_MG_RBGS;
  h->pre = (int)coop_config_int(sv->cfg, "solver.mg_pre");
  h->post = (int)coop_config_int(sv->cfg, "solver.mg_post");
  /* the weights that damp the upper half of the spectrum best for the 5- and 7-point Laplacians */
  h->omega = h->ndim == 3 ? 6.0 / 7.0 : 4.0 / 5.0;
  if (h->pre + h->post < 1)
    return coop_error_input("solver.mg_pre = 0 and solver.mg_post = 0: a cycle needs at least one smoothing "
                            "sweep (the default is 2 and 2)");
  return 0;
}

/* What cannot run, as input errors. On several GPUs the split levels run a
 * kernel an operation with halo exchanges between them (launch mode). */
static int mg_refusals(const coop_solve *sv, const char *what) {
  if (sv->be->device_memory && sv->comm->size > 1 && (!strcmp(sv->sync, "graph") || !strcmp(sv->sync, "grid")))
    return coop_error_input("run.sync = %s (from %s): %s on cuda over %d ranks runs in launch mode (halo exchanges "
                            "between its kernels); use run.sync = launch or auto", sv->sync,
                            coop_config_origin(sv->cfg, "run.sync"), what, sv->comm->size);
  if (sv->comm->size > 1 && !sv->dec) /* the driver sets it for every grid problem */
    return COOP_ERROR(COOP_ERR_RUNTIME, "%s on %d ranks without the grid's decomposition", what, sv->comm->size);
  return 0;
}

/* run.sync into a mode. auto: graph, which measured fastest (grid mode pays a
 * grid barrier over the whole GPU for every step, small levels too); grid
 * needs cooperative launch. */
static int pick_mode(coop_solve *sv, mg_data *d) {
  d->mode = MG_HOST;
  if (!sv->be->device_memory) return 0;
  if (!d->gpu) { /* split over ranks */
    d->mode = MG_LAUNCH;
    return 0;
  }
#if COOP_HAVE_CUDA
  int blocks, steps;
  coop_mg_gpu_info(d->gpu, &blocks, &steps);
  d->mode = strcmp(sv->sync, "launch") == 0 ? MG_LAUNCH : strcmp(sv->sync, "grid") == 0 ? MG_GRID : MG_GRAPH;
  if (d->mode == MG_GRID && blocks < 1)
    return coop_error_input("run.sync = grid: GPU %d has no cooperative launch, which the persistent kernel "
                            "needs; use run.sync = graph or launch", sv->be->device);
  if (d->mode == MG_GRID) {
    sv->grid_blocks = blocks;
    sv->barriers = steps + 1;
  }
#endif
  return 0;
}

static int time_pass(mg_data *d);

/* h's levels on the GPU (run.backend = cuda): on one rank the recorded cycle
 * (*gpu; level 0's u0 and f0 as coop_mg_gpu_create takes them), on several
 * the split levels (h's ops, *gpu stays NULL). */
static int levels_on_gpu(const coop_solve *sv, coop_mg_hier *h, void *u0, const void *f0, coop_mg_gpu **gpu) {
  *gpu = NULL;
#if COOP_HAVE_CUDA
  if (!sv->be->device_memory) return 0;
  if (h->size > 1) return coop_comm_agree(sv->comm, coop_mg_split_create(h, sv->be));
  return coop_mg_gpu_create(h, sv->be, u0, f0, gpu);
#else
  (void)sv, (void)h, (void)u0, (void)f0;
  return 0;
#endif
}

/* The levels and their GPU copies, either of which may be half built. */
static void levels_destroy(coop_mg_hier *h, coop_mg_gpu *gpu) {
#if COOP_HAVE_CUDA
  coop_mg_gpu_destroy(gpu);
  coop_mg_split_destroy(h);
#else
  (void)gpu;
#endif
  coop_mg_hier_destroy(h);
}

static int mg_setup(coop_solve *sv, void **data) {
  mg_data *d = calloc(1, sizeof *d);
  *data = d;
  if (!d) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  COOP_CHECK(mg_refusals(sv, "solver.name = mg"));
  /* agreed: a rank that failed here must not leave the others in a cycle's collectives */
  COOP_CHECK(coop_comm_agree(sv->comm, coop_mg_hier_create(&d->h, sv->s, sv->dec, sv->be, sv->u, (void *)sv->f)));
  COOP_CHECK(mg_settings(sv, &d->h));
  COOP_CHECK(levels_on_gpu(sv, &d->h, sv->u, sv->f, &d->gpu));
  COOP_CHECK(pick_mode(sv, d));
  COOP_CHECK(time_pass(d));
  sv->mode = mode_name(d->mode);
  sv->monitor_factor = 1;
  d->ph_cycle = coop_solve_phase(sv, "cycles");
  /* the fine level's passes, in arrays read or written. GPU: a red-black
   * colour reads u and f and writes half of u; a Jacobi sweep reads one copy
   * of u and f and writes the other (an odd count copies back); the norm
   * and the restriction (with the residual) read u and f; the prolongation
   * reads and writes u. Host: each sweep or Jacobi half and the residual
   * read u and f and write u or r; the restriction and prolongation a pass
   * each. The coarse levels add about 1 / (2^dim - 1). */
  const double es = (double)coop_prec_size(sv->s->grid.prec), n = (double)coop_grid_owned(&sv->s->grid);
  const int sw = d->h.pre + d->h.post;
  const double sweeps_gpu = d->h.smoother == COOP_MG_JACOBI ? 3.0 * sw + 2.0 * (d->h.pre % 2 + d->h.post % 2) : 5.0 * sw;
  const double passes = d->gpu ? sweeps_gpu + 2.0 + 2.0 + 2.0
                               : 3.0 * (d->h.smoother == COOP_MG_JACOBI ? 2 : 1) * sw + 2 * 3.0 + 2.0 + 2.0;
  sv->bytes_per_iter = es * n * passes * (sv->s->grid.ndim == 3 ? 8.0 / 7.0 : 4.0 / 3.0);
  return 0;
}

/* ||f - A u|| on the fine level of a host hierarchy. */
static int fine_residual_of(const coop_mg_hier *h, double *rn) {
  double sumsq;
  COOP_CHECK(h->ops->residual(h, 0, &sumsq));
  *rn = sqrt(sumsq);
  return 0;
}

/* ||f - A u|| on the fine level. */
static int fine_residual(const mg_data *d, double *rn) {
#if COOP_HAVE_CUDA
  if (d->gpu) {
    double sumsq;
    COOP_CHECK(coop_mg_gpu_residual(d->gpu, &sumsq));
    *rn = sqrt(sumsq);
    return 0;
  }
#endif
  return fine_residual_of(&d->h, rn);
}

/* The time of one fine-level residual (it reads u and f as a sweep does), the
 * unit a cycle's cost is given in: the mean of 3 after one to warm up. */
static int time_pass(mg_data *d) {
  double rn;
  COOP_CHECK(fine_residual(d, &rn));
  const double t0 = MPI_Wtime();
  for (int q = 0; q < 3; q++) COOP_CHECK(fine_residual(d, &rn));
  d->t_pass = (MPI_Wtime() - t0) / 3.0;
  return 0;
}

/* One cycle, then ||f - A u||. */
static int cycle_residual(const mg_data *d, double *rn) {
#if COOP_HAVE_CUDA
  if (d->gpu) {
    double sumsq;
    COOP_CHECK(coop_mg_gpu_cycle(d->gpu, d->mode == MG_GRAPH, &sumsq));
    *rn = sqrt(sumsq);
    return 0;
  }
#endif
  COOP_CHECK(coop_mg_cycle(&d->h, 0));
  return fine_residual(d, rn);
}

/* The checks after cycle it (0: the start): history and monitor (not for the
 * check a restart repeats), the stop test, the checkpoint. *done = 1 ends it. */
static int check(coop_solve *sv, const coop_ckpt_state *cs, int64_t it, double rn, int again, double start,
                 int *done) {
  coop_solve_ctl *c = &sv->ctl;
  if (!again) {
    if (it == 0) c->r0 = rn;
    coop_solve_record(sv, it, rn, MPI_Wtime() - start);
  }
  c->rnorm = rn;
  c->iterations = it;
  c->reason = coop_stop_test(rn, c->r0, it, c->max_iter, c->rtol, c->atol, c->dtol);
  *done = c->reason != COOP_REASON_NONE;
  if (*done) return c->reason == COOP_DIVERGED_ITS && !again ? coop_ckpt_final(sv, it, cs) : 0;
  if (again || it == 0) return 0;
  return coop_ckpt_point(sv, it, cs, done);
}

#if COOP_HAVE_CUDA
/* The cycles in the persistent kernel from check `it` on (resumed: the
 * check at it was made), its history replayed into the monitor. */
static int run_grid(coop_solve *sv, mg_data *d, const coop_ckpt_state *cs, int64_t it, int resumed, double start) {
  coop_solve_ctl *c = &sv->ctl;
  coop_mg_grid_args a = {c->max_iter, c->rtol, c->atol, c->dtol, -1, resumed, c->hist_cap, c->hist_iter, c->hist_res};
  coop_mg_grid_result res = {c->r0, c->rnorm, it, c->hist_len, COOP_REASON_NONE};
  double per_cycle = 1e-4, t_end = start;
  int stop = 0;
  for (;;) {
    a.stop_at = coop_ckpt_next_stop(sv, it, per_cycle);
    const double t0 = MPI_Wtime();
    COOP_CHECK(coop_mg_gpu_solve(d->gpu, &a, &res));
    t_end = MPI_Wtime();
    if (res.iterations > it) per_cycle = (t_end - t0) / (double)(res.iterations - it);
    it = res.iterations;
    a.resume = 1;
    c->hist_len = c->hist_cap > 0 ? coop_history_slot(res.checks - 1, c->hist_cap) + 1 : 0;
    c->iterations = it;
    c->r0 = res.r0;
    c->rnorm = res.rnorm;
    c->reason = res.reason;
    if (res.reason == COOP_DIVERGED_ITS) COOP_CHECK(coop_ckpt_final(sv, it, cs));
    if (res.reason != COOP_REASON_NONE || a.stop_at < 0) break;
    COOP_CHECK(coop_ckpt_point(sv, it, cs, &stop));
    if (stop) break;
  }
  sv->t_solve = t_end - start;
  coop_solve_replay(sv);
  return 0;
}
#endif

static int mg_solve(coop_solve *sv, void *data) {
  mg_data *d = data;
  coop_ckpt_state cs;
  memset(&cs, 0, sizeof cs);
  cs.field = sv->u; /* between cycles the state is the field (boundary values in its ghosts) */
  sv->ctl.hist_len = 0;
  COOP_MPI(MPI_Barrier(sv->comm->world));
  const double start = MPI_Wtime();
  int64_t it = 0;
  int resumed = 0, done = 0;
  double rn;
  COOP_CHECK(coop_ckpt_resume(sv, &cs, &it, &resumed));
#if COOP_HAVE_CUDA
  if (d->mode == MG_GRID) {
    if (resumed) { /* the check a restart repeats, on the host's terms */
      COOP_CHECK(fine_residual(d, &rn));
      COOP_CHECK(check(sv, &cs, it, rn, 1, start, &done));
    }
    if (!done) COOP_CHECK(run_grid(sv, d, &cs, it, resumed, start));
    sv->steps = sv->ctl.iterations;
    coop_solve_add_time(sv, d->ph_cycle, sv->t_solve);
    return 0;
  }
#endif
  COOP_CHECK(fine_residual(d, &rn));
  COOP_CHECK(check(sv, &cs, it, rn, resumed, start, &done));
  while (!done) {
    COOP_CHECK(cycle_residual(d, &rn));
    COOP_CHECK(check(sv, &cs, ++it, rn, 0, start, &done));
  }
  sv->t_solve = MPI_Wtime() - start;
  sv->steps = it;
  coop_solve_add_time(sv, d->ph_cycle, sv->t_solve);
  return 0;
}

static void view_levels(const coop_mg_hier *h, FILE *out, const coop_mg_gpu *gpu) {
  fprintf(out, "  mg: %s(%d,%d) cycles, smoother %s%s, %d levels:", cycle_name(h->cycle), h->pre, h->post,
          h->smoother == COOP_MG_JACOBI ? "weighted jacobi" : "red-black gauss-seidel",
          h->smoother == COOP_MG_RBGS && h->symmetric ? " (black-red after)" : "", h->nlev);
  for (int l = 0; l < h->nlev; l++) {
    const int64_t *n = h->lev[l].N;
    fprintf(out, "%s %lld x %lld", l ? "," : "", (long long)n[0], (long long)n[1]);
    if (h->ndim == 3) fprintf(out, " x %lld", (long long)n[2]);
  }
  fprintf(out, "; the coarsest solved exactly (banded Cholesky)\n");
  if (h->size > 1)
    fprintf(out, "  mg: levels 0 to %d split over %d ranks, from %d on gathered on rank 0\n", h->gather - 1, h->size,
            h->gather);
  if (h->ctx)
    fprintf(out, "  mg: levels 0 to %d on the GPUs (a kernel an operation, halo exchanges between), the rest on "
            "rank 0's host\n", h->gather - 1);
#if COOP_HAVE_CUDA
  if (gpu) {
    int blocks, steps;
    coop_mg_gpu_info(gpu, &blocks, &steps);
    fprintf(out, "  mg: on the GPU, %d steps a cycle (a kernel each, or a grid barrier each in grid mode)\n", steps);
  }
#else
  (void)gpu;
#endif
}

static void mg_view(const coop_solve *sv, const void *data, FILE *out) {
  const mg_data *d = data;
  if (!d) return;
  view_levels(&d->h, out, d->gpu);
  const coop_solve_ctl *c = &sv->ctl;
  if (c->iterations > 0 && c->r0 > 0 && c->rnorm > 0)
    fprintf(out, "  mg: %lld cycles, mean convergence factor %.4f\n", (long long)c->iterations,
            pow(c->rnorm / c->r0, 1.0 / (double)c->iterations));
  if (c->iterations > 0 && sv->t_solve > 0 && d->t_pass > 0)
    fprintf(out, "  mg: a cycle and its check took %.1f fine-level residual passes (one pass %.3g ms, timed at setup)\n",
            sv->t_solve / (double)c->iterations / d->t_pass, 1e3 * d->t_pass);
}

static void mg_destroy(coop_solve *sv, void *data) {
  (void)sv;
  mg_data *d = data;
  if (d) levels_destroy(&d->h, d->gpu);
  free(d);
}

const coop_solver_type coop_solver_mg = {
    "mg", "geometric multigrid on a grid (Poisson problems)", 1, mg_setup, mg_solve, mg_view, mg_destroy, NULL, NULL};

/* ---- the preconditioner ---- */

/* An interface object and its context, zeroed, or neither. */
static int alloc_pair(void **a, size_t na, void **b, size_t nb) {
  *a = calloc(1, na);
  *b = calloc(1, nb);
  if (*a && *b) return 0;
  free(*a);
  free(*b);
  *a = *b = NULL;
  return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
}

/* The levels of the preconditioner and of the heat step. */
typedef struct {
  coop_mg_hier h;
  coop_mg_gpu *gpu; /* run.backend = cuda, else NULL */
} mg_levels;
typedef mg_levels mg_pc;

static void levels_free(mg_levels *m) {
  if (m) levels_destroy(&m->h, m->gpu);
  free(m);
}

static int pc_apply(coop_pc *pc, const coop_vec *r, coop_vec *z) {
  mg_pc *m = pc->ctx;
#if COOP_HAVE_CUDA
  if (m->gpu) return coop_mg_gpu_pc(m->gpu, r->data, z->data);
  if (m->h.ctx) return coop_mg_split_pc(&m->h, r->data, z->data);
#endif
  const coop_mg_hier *h = &m->h;
  const coop_mg_level *L = &h->lev[0];
  const coop_region own = coop_region_owned(&L->grid);
  memset(L->u, 0, coop_grid_points(&L->grid) * coop_prec_size(h->prec));
  COOP_CHECK(coop_unpack_host(&L->grid, &own, L->f, r->data));
  COOP_CHECK(coop_mg_cycle(h, 0));
  return coop_pack_host(&L->grid, &own, L->u, z->data);
}

static void pc_view(const coop_pc *pc, FILE *out) {
  const mg_pc *m = pc->ctx;
  view_levels(&m->h, out, m->gpu);
}

static void pc_destroy(coop_pc *pc) {
  if (pc) levels_free(pc->ctx);
  free(pc);
}

int coop_mg_pc_create(coop_solve *sv, coop_pc **out) {
  *out = NULL;
  if (sv->A->kind != COOP_OP_STENCIL)
    return coop_error_input("solver.pc = mg needs a grid problem (problem.type = sine or laplace); for "
                            "problem.type = matrix use solver.pc = jacobi or none");
  COOP_CHECK(mg_refusals(sv, "solver.pc = mg"));
  coop_pc *pc;
  mg_pc *m;
  COOP_CHECK(alloc_pair((void **)&pc, sizeof *pc, (void **)&m, sizeof *m));
  coop_mg_hier *h = &m->h;
  pc->name = "mg";
  pc->ctx = m;
  pc->apply = pc_apply;
  pc->view = pc_view;
  pc->destroy = pc_destroy;
  *out = pc;
  /* the Krylov vectors hold the owned points only: level 0 gets its own
   * arrays with one ghost layer, zero (the correction's boundary values) */
  coop_stencil s = sv->A->s;
  coop_grid_init(&s.grid, s.grid.ndim, s.grid.prec, s.grid.n, 1);
  COOP_CHECK(coop_comm_agree(sv->comm, coop_mg_hier_create(h, &s, sv->dec, sv->be, NULL, NULL)));
  h->symmetric = 1;
  COOP_CHECK(mg_settings(sv, h));
  return levels_on_gpu(sv, h, NULL, NULL, &m->gpu);
}

/* ---- the implicit heat step ---- */

typedef struct {
  mg_levels l; /* first: shifted_destroy frees the struct through it */
  const coop_solve *sv;
  int graph;        /* 1: each cycle a CUDA graph's replay, 0: a kernel a step */
} mg_shifted;

static int shifted_begin(coop_shifted *s, double *rn) {
  mg_shifted *m = s->ctx;
#if COOP_HAVE_CUDA
  if (m->l.gpu) {
    double sumsq;
    COOP_CHECK(coop_mg_gpu_shifted_rhs(m->l.gpu, m->sv->f));
    COOP_CHECK(coop_mg_gpu_residual(m->l.gpu, &sumsq));
    *rn = sqrt(sumsq);
    return 0;
  }
  if (m->l.h.ctx) {
    COOP_CHECK(coop_mg_split_shifted_rhs(&m->l.h, m->sv->f));
    return fine_residual_of(&m->l.h, rn);
  }
#endif
  coop_mg_shifted_rhs_host(&m->l.h, m->sv->f); /* the field's precision; NULL: no source */
  return fine_residual_of(&m->l.h, rn);
}

/* One cycle, then ||f - A u|| (on the GPU: the cycle replayed as a graph). */
static int shifted_cycle(const mg_shifted *m, double *rn) {
#if COOP_HAVE_CUDA
  if (m->l.gpu) {
    double sumsq;
    COOP_CHECK(coop_mg_gpu_cycle(m->l.gpu, m->graph, &sumsq));
    *rn = sqrt(sumsq);
    return 0;
  }
#endif
  COOP_CHECK(coop_mg_cycle(&m->l.h, 0));
  return fine_residual_of(&m->l.h, rn);
}

static int shifted_solve(coop_shifted *s, double rtol, double rn0, int max, int *cycles, double *rn) {
  mg_shifted *m = s->ctx;
  *cycles = 0;
  *rn = rn0;
  while (*cycles < max && *rn > rtol * rn0 && isfinite(*rn)) {
    COOP_CHECK(shifted_cycle(m, rn));
    ++*cycles;
  }
  return 0;
}

static void shifted_view(const coop_shifted *s, FILE *out) {
  const mg_shifted *m = s->ctx;
  view_levels(&m->l.h, out, NULL);
}

static void shifted_destroy(coop_shifted *s) {
  if (s) levels_free(s->ctx);
  free(s);
}

int coop_mg_shifted_create(coop_solve *sv, double shift, coop_shifted **out) {
  *out = NULL;
  COOP_CHECK(mg_refusals(sv, "solver.scheme = implicit"));
  coop_shifted *s;
  mg_shifted *m;
  COOP_CHECK(alloc_pair((void **)&s, sizeof *s, (void **)&m, sizeof *m));
  s->ctx = m;
  s->begin = shifted_begin;
  s->solve = shifted_solve;
  s->view = shifted_view;
  s->destroy = shifted_destroy;
  *out = s;
  m->sv = sv;
  /* level 0's u is the field; its f, the step's right-hand side, is its own */
  COOP_CHECK(coop_comm_agree(sv->comm, coop_mg_hier_create(&m->l.h, sv->s, sv->dec, sv->be, sv->u, NULL)));
  COOP_CHECK(mg_settings(sv, &m->l.h));
  COOP_CHECK(coop_comm_agree(sv->comm, coop_mg_hier_set_shift(&m->l.h, shift)));
#if COOP_HAVE_CUDA
  /* after the shift: the coarsest level's inverse is made from its factor */
  if (sv->be->device_memory) {
    if (!strcmp(sv->sync, "grid"))
      return coop_error_input("run.sync = grid (from %s): the implicit heat step runs its cycles as launch or graph "
                              "(auto); use one of those", coop_config_origin(sv->cfg, "run.sync"));
    COOP_CHECK(levels_on_gpu(sv, &m->l.h, sv->u, NULL, &m->l.gpu));
    m->graph = m->l.gpu && strcmp(sv->sync, "launch") != 0; /* several ranks: launch */
    sv->mode = m->graph ? "graph" : "launch";
  }
#endif
  return 0;
}
