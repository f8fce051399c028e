/* Every step of a batch run ends with the ranks agreeing on its status, so a
 * failure anywhere stops all ranks with one message. The solve has no
 * collectives (each rank solves its own problems), so it is agreed too; only
 * a failure inside the gather, where rank 0 waits for a rank's message, ends
 * the job with MPI_Abort. */
#include "driver/batch_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coop_build.h"
#include "kernels/backend.h"
#include "core/signal.h"
#include "driver/budget.h"
#include "driver/report.h"
#include "io/io.h"
#include "solvers/batch/batch.h"
#include "problem/batch.h"
#include "solvers/stop.h"

enum { PH_SETUP, PH_BUILD, PH_SOLVE, PH_GATHER, NPH };
static const char *const phase_names[NPH] = {"setup", "build", "solve", "gather"};

/* Rank 0's view of the whole batch, problem order. */
typedef struct {
  int64_t *iters, *rows, *off, *order, *start; /* order: ids by rank; start: nranks + 1 */
  double *resid, *r0, *secs, *sol, *shift; /* shift, side: generated problems */
  int64_t *side;
  double *dt, *t_final; /* heat */
  int32_t *reason;
  int64_t *tmp_i; /* one rank's results while they arrive */
  double *tmp_d;
  int *len;        /* pieces of one solution message */
  MPI_Aint *disp;
} gathered;

typedef struct {
  const coop_comm *c;
  const coop_batch_input *in;
  coop_batch_spec sp;
  int32_t *owner;
  coop_batch bt;
  coop_backend *be;
  coop_batch_ctl ctl;
  coop_batch_run opt;
  double *x;
  coop_batch_result *res;
  double t[NPH];
  double t_solve_max, t_kernel_max; /* the slowest rank's solve, and its kernels (device events) */
  int signal, unsolved; /* a signal stopped the solve (any rank), and left problems unsolved */
  int64_t groups, barriers; /* summed over the ranks */
  gathered g;
} bstate;

/* ---- keys ------------------------------------------------------------------ */

static int other_kind(const coop_config *cfg, const char *key, const char *why) {
  return coop_error_input("%s = %s (from %s) %s", key, coop_config_text(cfg, key),
                          coop_config_origin(cfg, key), why);
}

int coop_batch_check_keys(const coop_config *cfg) {
  static const char *const not_batch[] = {
      "solver.check_every", "solver.cg_single_reduction", "solver.precision", "tune.halo", "tune.blocks",
      "tune.overlap", "tune.fused_halo", "tune.resident", "tune.resident_depth", "tune.fuse_sweeps",
      "tune.csr_schedule", "run.restart", "output.every", "output.checkpoint_every", "output.checkpoint_minutes",
      "solver.scheme"};
  if (!coop_config_has_section(cfg, "batch")) {
    if (!coop_config_is_default(cfg, "tune.csr_schedule") && strcmp(coop_config_str(cfg, "problem.type"), "matrix"))
      return other_kind(cfg, "tune.csr_schedule", "applies to problem.type = matrix only");
    if (!coop_config_is_default(cfg, "tune.group_blocks"))
      return other_kind(cfg, "tune.group_blocks", "applies to [batch] inputs only");
    return 0;
  }
  if (!coop_config_is_default(cfg, "run.sync"))
    return other_kind(cfg, "run.sync", "does not apply to a [batch] input: batch.sync sets its mode");
  for (size_t k = 0; k < sizeof not_batch / sizeof *not_batch; k++)
    if (!coop_config_is_default(cfg, not_batch[k]))
      return other_kind(cfg, not_batch[k], "does not apply to a [batch] input");
  /* heat's keys would be ignored by jacobi and cg */
  static const char *const heat_keys[] = {"solver.alpha", "solver.dt", "solver.t_end"};
  const char *name = coop_config_str(cfg, "solver.name");
  for (size_t k = 0; strcmp(name, "heat") && k < sizeof heat_keys / sizeof *heat_keys; k++)
    if (!coop_config_is_default(cfg, heat_keys[k]))
      return other_kind(cfg, heat_keys[k], "applies to solver.name = heat");
  /* and heat takes its steps: the stop tests' keys, and max_iter under t_end,
   * would be ignored */
  static const char *const stop_keys[] = {"solver.rtol", "solver.atol", "solver.dtol"};
  for (size_t k = 0; !strcmp(name, "heat") && k < sizeof stop_keys / sizeof *stop_keys; k++)
    if (!coop_config_is_default(cfg, stop_keys[k]))
      return other_kind(cfg, stop_keys[k], "does not apply to solver.name = heat (each problem takes its steps)");
  if (!strcmp(name, "heat") && !coop_config_is_default(cfg, "solver.t_end") &&
      !coop_config_is_default(cfg, "solver.max_iter"))
    return other_kind(cfg, "solver.max_iter", "does not apply with solver.t_end (the steps come from t_end)");
  /* the size of a row or cluster group (grid mode lays its groups out as rows):
   * with auto, block or launch it would be ignored or refused for a mode not asked for */
  const char *sync = coop_config_str(cfg, "batch.sync");
  if (!coop_config_is_default(cfg, "tune.group_blocks") && strcmp(sync, "row") && strcmp(sync, "cluster") &&
      strcmp(sync, "grid"))
    return coop_error_input("tune.group_blocks = %s (from %s) sizes the groups of batch.sync = row, cluster or grid, "
                            "not of batch.sync = %s (from %s)", coop_config_text(cfg, "tune.group_blocks"),
                            coop_config_origin(cfg, "tune.group_blocks"), sync,
                            coop_config_origin(cfg, "batch.sync"));
  return 0;
}

/* ---- steps ----------------------------------------------------------------- */

/* Agree on a step; the one rank the agreement leaves to tell it prints it. */
static int step(const coop_comm *c, int local) {
  const int st = coop_comm_agree(c, local);
  if (st && local && !coop_error_is_remote()) {
    if (st == COOP_ERR_INPUT)
      fprintf(stderr, "coopsolve: %s\n", coop_error_message());
    else
      fprintf(stderr, "coopsolve: rank %d: %s\n", c->rank, coop_error_message());
  }
  return st;
}

static double mib(double bytes) { return bytes / 1048576.0; }

/* What sizes the batch, for messages: the keys a user changes. */
static void size_keys(const bstate *s, char *out, size_t len) {
  const coop_config *cfg = s->in->cfg;
  if (s->sp.list)
    snprintf(out, len, "batch.matrices (%lld files, %lld rows)", (long long)s->sp.count, (long long)s->sp.total_rows);
  else
    snprintf(out, len, "batch.count = %lld with batch.sizes = %s (%lld rows)", (long long)s->sp.count,
             coop_config_str(cfg, "batch.sizes"), (long long)s->sp.total_rows);
}

/* The dealing's own arrays hold B entries on every rank: refused before they are made. */
static int check_deal_room(const coop_comm *c, const coop_config *cfg) {
  const double need = (double)coop_config_int(cfg, "batch.count") * COOP_BATCH_DEAL_BYTES;
  const uint64_t limit = coop_budget_host_limit(c);
  if (strcmp(coop_config_str(cfg, "batch.matrices"), "none") != 0 || need <= (double)limit) return 0;
  return coop_error_input("batch.count = %lld (from %s): dealing the batch alone needs %.1f MiB on every "
                          "rank, and a rank of this node may use %.1f MiB", (long long)coop_config_int(cfg, "batch.count"),
                          coop_config_origin(cfg, "batch.count"), mib(need), mib((double)limit));
}

static int read_spec(bstate *s) {
  COOP_CHECK(check_deal_room(s->c, s->in->cfg));
  COOP_CHECK(coop_batch_spec_create(&s->sp, s->in->cfg, s->c));
  if (!(s->owner = malloc((size_t)s->sp.count * sizeof *s->owner)))
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  return coop_batch_deal(&s->sp, s->c->size, s->owner);
}

/* Every rank's estimate against its share of its node; the largest is reported. */
static int check_memory(bstate *s, uint64_t est[2], uint64_t most[2], int *most_rank, uint64_t *limit) {
  coop_batch_memory(&s->sp, s->owner, s->c->rank, &est[0], &est[1]);
  if (strcmp(s->in->backend, "host") == 0) est[1] = 0;
  *limit = coop_budget_host_limit(s->c);
  struct {
    double v;
    int rank;
  } hi = {(double)est[0], s->c->rank}, hi_all = {0.0, 0};
  most[0] = est[0], most[1] = est[1];
  COOP_MPI(MPI_Allreduce(&hi, &hi_all, 1, MPI_DOUBLE_INT, MPI_MAXLOC, s->c->world));
  COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, most, 2, MPI_UINT64_T, MPI_MAX, s->c->world));
  *most_rank = hi_all.rank;
  if (est[0] <= *limit) return 0;
  char what[512];
  size_keys(s, what, sizeof what);
  return coop_error_input("%s: rank %d would hold %.1f MiB of host memory, and a rank of this node may "
                          "use %.1f MiB (memory, cgroup and ulimit, shared by %d rank%s); use more "
                          "ranks or nodes, or a smaller batch", what, s->c->rank, mib((double)est[0]),
                          mib((double)*limit), s->c->node_size, s->c->node_size > 1 ? "s" : "");
}

/* ---- dry run ----------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* heat: the range of the problems' time steps and step counts. */
static void print_steps(const bstate *s) {
  double lo = INFINITY, hi = 0.0;
  int64_t slo = INT64_MAX, shi = 0;
  for (int64_t i = 0; i < s->sp.count; i++) {
    double dt;
    int64_t steps;
    coop_batch_heat_step(&s->sp, i, &dt, &steps);
    lo = dt < lo ? dt : lo, hi = dt > hi ? dt : hi;
    slo = steps < slo ? steps : slo, shi = steps > shi ? steps : shi;
  }
  printf("# heat: alpha %g, dt %.9g .. %.9g (%s), steps %lld .. %lld%s\n", s->sp.alpha, lo, hi,
         s->sp.dt > 0.0 ? "solver.dt" : "0.9 of each problem's limit", (long long)slo, (long long)shi,
         s->sp.t_end > 0.0 ? " (every problem ends at solver.t_end)" : " (solver.max_iter)");
}

/* Sizes of the batch: min, median, max of rows per problem. */
static void print_sizes(const bstate *s) {
  const coop_batch_spec *sp = &s->sp;
  int64_t *r = malloc((size_t)sp->count * sizeof *r);
  if (!r) return;
  memcpy(r, sp->rows, (size_t)sp->count * sizeof *r);
  qsort(r, (size_t)sp->count, sizeof *r, cmp_i64);
  if (sp->list) {
    printf("# batch: %lld Matrix Market files\n", (long long)sp->count);
  } else {
    double lo = INFINITY, hi = 0;
    for (int64_t i = 0; i < sp->count; i++) {
      const double sh = coop_batch_shift(sp, i);
      lo = sh < lo ? sh : lo, hi = sh > hi ? sh : hi;
    }
    printf("# batch: %lld generated %dD problems (%s, unit %s), sizes %s, shifts %g .. %g, "
           "rhs %s, seed %llu\n", (long long)sp->count, sp->dim,
           sp->method == COOP_BATCH_HEAT ? "u_t = alpha (f - (-lap(u) + s u))" : "-lap(u) + s u = f",
           sp->dim == 2 ? "square" : "cube", coop_config_str(s->in->cfg, "batch.sizes"), lo, hi,
           coop_config_str(s->in->cfg, "batch.rhs"), (unsigned long long)sp->seed);
  }
  printf("# rows per problem: min %lld, median %lld, max %lld; %lld rows and %s%lld entries in all\n",
         (long long)r[0], (long long)r[sp->count / 2], (long long)r[sp->count - 1], (long long)sp->total_rows,
         sp->list ? "at most " : "", (long long)sp->total_nnz);
  free(r);
  if (sp->method == COOP_BATCH_HEAT) print_steps(s);
}

/* Rank 0: per rank its problems, rows and share of the estimated work (at most 64 lines). */
static void print_dealing(const bstate *s) {
  const int n = s->c->size;
  double *w = calloc((size_t)n * 3 + 1, sizeof *w), total = 0;
  if (!w) return;
  for (int64_t i = 0; i < s->sp.count; i++) {
    const double cost = coop_batch_cost(&s->sp, i);
    w[3 * s->owner[i]] += 1, w[3 * s->owner[i] + 1] += (double)s->sp.rows[i], w[3 * s->owner[i] + 2] += cost;
    total += cost;
  }
  printf("# dealing: greedy longest-processing-time on estimated work (entries x iterations) over %d rank%s\n",
         n, n > 1 ? "s" : "");
  for (int r = 0; r < n && r < 64; r++)
    printf("#   rank %d: %.0f problems, %.0f rows, %.1f%% of the work\n", r, w[3 * r], w[3 * r + 1],
           total > 0 ? 100.0 * w[3 * r + 2] / total : 0.0);
  if (n > 64) printf("#   ... %d more ranks\n", n - 64);
  free(w);
}

static void print_dry_run(const bstate *s, const uint64_t est[2], const uint64_t most[2], int most_rank,
                          uint64_t limit) {
  const coop_config *cfg = s->in->cfg;
  char *resolved = coop_config_resolved(cfg);
  printf("# resolved configuration (each value's origin in its comment)\n%s\n", resolved ? resolved : "");
  free(resolved);
  print_sizes(s);
  print_dealing(s);
  printf("# memory on rank 0: %.3f MiB host, %.3f MiB device\n", mib((double)est[0]), mib((double)est[1]));
  printf("# memory per rank at most: %.3f MiB host (rank %d), %.3f MiB device; this node allows %.3f MiB "
         "host per rank\n", mib((double)most[0]), most_rank, mib((double)most[1]), mib((double)limit));
  printf("# solver: %s%s; backend: %s (batch.sync = %s, batch.schedule = %s, tune.group_blocks = %lld)\n",
         coop_config_str(cfg, "solver.name"), s->sp.pc ? " (pc jacobi)" : "", s->in->backend,
         coop_config_str(cfg, "batch.sync"), coop_config_str(cfg, "batch.schedule"),
         (long long)coop_config_int(cfg, "tune.group_blocks"));
  fflush(stdout);
}

/* ---- solve ------------------------------------------------------------------- */

static int pick(const char *word, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(word, names[i]) == 0) return i;
  return 0;
}

static void controls(bstate *s) {
  static const char *const sync[] = {"auto", "row", "cluster", "block", "grid", "launch", "launch_each"};
  const coop_config *cfg = s->in->cfg;
  s->ctl.method = s->sp.method;
  s->ctl.pc = s->sp.pc;
  s->ctl.rtol = coop_config_real(cfg, "solver.rtol");
  s->ctl.atol = coop_config_real(cfg, "solver.atol");
  s->ctl.dtol = coop_config_real(cfg, "solver.dtol");
  s->ctl.max_iter = coop_config_int(cfg, "solver.max_iter");
  s->ctl.stop_on_signal = strcmp(coop_config_str(cfg, "run.on_signal"), "exit") == 0;
  s->ctl.alpha = s->sp.alpha;
  memset(&s->opt, 0, sizeof s->opt);
  s->opt.sync = pick(coop_config_str(cfg, "batch.sync"), sync, (int)(sizeof sync / sizeof *sync)); /* the enum's order */
  const int sc = coop_csr_schedule_parse(coop_config_str(cfg, "batch.schedule")); /* the key allows no other */
  s->opt.schedule = sc < 0 ? COOP_SCHED_AUTO : sc;
  s->opt.group_blocks = (int)coop_config_int(cfg, "tune.group_blocks");
}

/* Before the batch is built (seconds for 10^8 rows): the backend, and what
 * its GPU refuses to run (clc below cc 10.0, ...). */
static int open_backend(bstate *s) {
  COOP_CHECK(coop_backend_create(s->in->backend, s->in->device, &s->be));
  if (coop_fault(s->c, "backend")) return COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  controls(s);
  return coop_batch_check_run(s->be, &s->opt);
}

static int setup_solve(bstate *s) {
  const size_t rows = (size_t)s->bt.row_off[s->bt.count];
  s->x = malloc(rows * sizeof *s->x + 1);
  s->res = calloc((size_t)s->bt.count + 1, sizeof *s->res);
  if (!s->x || !s->res) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  memcpy(s->x, s->bt.x0, rows * sizeof *s->x);
  return 0;
}

static int solve(bstate *s) {
  const double t0 = MPI_Wtime();
  COOP_CHECK(coop_batch_solve(s->be, &s->bt, &s->ctl, &s->opt, s->x, s->res));
  s->t[PH_SOLVE] = MPI_Wtime() - t0;
  if (coop_fault(s->c, "solve")) return COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  return 0;
}

/* After the solve: a signal seen by any rank (SIGTERM from scancel or a time
 * limit, SIGUSR1/2 from sbatch --signal). With run.on_signal = exit the host
 * stopped taking problems; the output then holds what was solved, the rest
 * with reason none, and the run ends with status 3. *stop: that status, or 0. */
static int signal_taken(bstate *s, int *stop) {
  int v[2] = {coop_signal_pending(), 0};
  for (int64_t i = 0; i < s->bt.count; i++) v[1] += s->res[i].reason == COOP_REASON_NONE;
  COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, s->c->world));
  s->signal = v[0];
  s->unsolved = v[1] > 0;
  *stop = 0;
  if (!v[0]) return 0;
  coop_signal_clear();
  if (s->c->rank == 0 && !s->unsolved)
    fprintf(stderr, "coopsolve: %s during the solve; every problem was solved%s\n", coop_signal_name(v[0]),
            s->ctl.stop_on_signal ? "" : " (run.on_signal = continue)");
  *stop = s->unsolved ? 3 : 0; /* the status of a run stopped by a signal (src/driver/app.c) */
  return 0;
}

/* ---- gather ------------------------------------------------------------------- */

enum { CHUNK = 1 << 26, TAG_I = 71, TAG_D, TAG_X };

/* n elements of es bytes to or from peer, in messages of at most CHUNK. */
static int xfer(void *buf, int64_t n, MPI_Datatype t, size_t es, int peer, int tag, int send, MPI_Comm comm) {
  for (int64_t at = 0; at < n; at += CHUNK) {
    const int k = (int)(n - at < CHUNK ? n - at : CHUNK);
    char *p = (char *)buf + (size_t)at * es;
    COOP_MPI(send ? MPI_Send(p, k, t, peer, tag, comm) : MPI_Recv(p, k, t, peer, tag, comm, MPI_STATUS_IGNORE));
  }
  return 0;
}

/* Rank 0: the batch's arrays and, per rank, its problems (ids ascending). */
static int gather_alloc(bstate *s) {
  gathered *g = &s->g;
  const int64_t B = s->sp.count, n = s->c->size;
  int64_t most = 0;
  g->start = calloc((size_t)n + 1, sizeof *g->start);
  g->order = malloc((size_t)B * sizeof *g->order);
  g->iters = malloc((size_t)B * sizeof *g->iters);
  g->rows = malloc((size_t)B * sizeof *g->rows);
  g->off = malloc((size_t)(B + 1) * sizeof *g->off);
  g->resid = malloc((size_t)B * sizeof *g->resid);
  g->r0 = malloc((size_t)B * sizeof *g->r0);
  g->secs = malloc((size_t)B * sizeof *g->secs);
  g->reason = malloc((size_t)B * sizeof *g->reason);
  g->sol = malloc((size_t)s->sp.total_rows * sizeof *g->sol + 1);
  g->shift = malloc((size_t)B * sizeof *g->shift);
  g->side = malloc((size_t)B * sizeof *g->side);
  g->dt = malloc((size_t)B * sizeof *g->dt);
  g->t_final = malloc((size_t)B * sizeof *g->t_final);
  if (!g->start || !g->order || !g->iters || !g->rows || !g->off || !g->resid || !g->r0 || !g->secs ||
      !g->reason || !g->sol || !g->shift || !g->side || !g->dt || !g->t_final)
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory gathering %lld problems", (long long)B);
  for (int64_t i = 0; i < B; i++) g->start[s->owner[i] + 1]++;
  for (int64_t r = 0; r < n; r++) {
    most = g->start[r + 1] > most ? g->start[r + 1] : most;
    g->start[r + 1] += g->start[r];
  }
  g->off[0] = 0;
  for (int64_t i = 0; i < B; i++) {
    g->order[g->start[s->owner[i]]++] = i; /* start[r] ends at start[r + 1]: shifted back below */
    g->rows[i] = s->sp.rows[i];
    g->shift[i] = s->sp.list ? 0.0 : coop_batch_shift(&s->sp, i);
    g->side[i] = s->sp.list ? 0 : coop_batch_side(&s->sp, i);
    int64_t steps;
    g->dt[i] = 0.0;
    if (s->sp.method == COOP_BATCH_HEAT) coop_batch_heat_step(&s->sp, i, &g->dt[i], &steps); /* from (seed, i) */
    g->off[i + 1] = g->off[i] + g->rows[i];
  }
  memmove(g->start + 1, g->start, (size_t)n * sizeof *g->start);
  g->start[0] = 0;
  g->tmp_i = malloc((size_t)most * 2 * sizeof *g->tmp_i + 1);
  g->tmp_d = malloc((size_t)most * 3 * sizeof *g->tmp_d + 1);
  g->len = malloc((size_t)(most + 1) * sizeof *g->len);
  g->disp = malloc((size_t)(most + 1) * sizeof *g->disp);
  if (!g->tmp_i || !g->tmp_d || !g->len || !g->disp) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  return 0;
}

static void gather_free(gathered *g) {
  void *p[] = {g->iters, g->rows, g->off, g->order, g->start, g->resid, g->r0, g->secs, g->sol, g->reason, g->shift, g->side,
               g->dt, g->t_final, g->tmp_i, g->tmp_d, g->len, g->disp};
  for (size_t i = 0; i < sizeof p / sizeof *p; i++) free(p[i]);
  memset(g, 0, sizeof *g);
}

/* This rank's results as two arrays: (iterations, reason) and (r0, rnorm, seconds). */
static void pack(const bstate *s, int64_t *ri, double *rd) {
  for (int64_t k = 0; k < s->bt.count; k++) {
    ri[2 * k] = s->res[k].iterations, ri[2 * k + 1] = s->res[k].reason;
    rd[3 * k] = s->res[k].r0, rd[3 * k + 1] = s->res[k].rnorm, rd[3 * k + 2] = s->res[k].seconds;
  }
}

static void place(gathered *g, const int64_t *ids, int64_t k, const int64_t *ri, const double *rd) {
  for (int64_t j = 0; j < k; j++) {
    const int64_t i = ids[j];
    g->iters[i] = ri[2 * j], g->reason[i] = (int32_t)ri[2 * j + 1];
    g->r0[i] = rd[3 * j], g->resid[i] = rd[3 * j + 1], g->secs[i] = rd[3 * j + 2];
  }
}

/* Rank r's solutions, sent as one contiguous run in CHUNK messages, land at
 * their problems' offsets through an indexed type per message. */
static int recv_solutions(gathered *g, int r, const int64_t *ids, int64_t k, MPI_Comm comm) {
  int64_t j = 0, done = 0;
  while (j < k) {
    int np = 0;
    int64_t total = 0;
    while (j < k && total < CHUNK) {
      const int64_t i = ids[j], left = g->rows[i] - done, take = left < CHUNK - total ? left : CHUNK - total;
      g->disp[np] = (MPI_Aint)((size_t)(g->off[i] + done) * sizeof(double));
      g->len[np++] = (int)take;
      total += take, done += take;
      if (done == g->rows[i]) j++, done = 0;
    }
    MPI_Datatype t;
    COOP_MPI(MPI_Type_create_hindexed(np, g->len, g->disp, MPI_DOUBLE, &t));
    COOP_MPI(MPI_Type_commit(&t));
    const int rc = MPI_Recv(g->sol, 1, t, r, TAG_X, comm, MPI_STATUS_IGNORE);
    MPI_Type_free(&t);
    if (rc != MPI_SUCCESS) return coop_error_mpi(rc, "MPI_Recv", __FILE__, __LINE__);
  }
  return 0;
}

static int gather_root(bstate *s) {
  gathered *g = &s->g;
  const MPI_Comm comm = s->c->world;
  pack(s, g->tmp_i, g->tmp_d);
  place(g, s->bt.id, s->bt.count, g->tmp_i, g->tmp_d);
  for (int64_t k = 0; k < s->bt.count; k++)
    memcpy(g->sol + g->off[s->bt.id[k]], s->x + s->bt.row_off[k], (size_t)g->rows[s->bt.id[k]] * sizeof(double));
  for (int r = 1; r < s->c->size; r++) {
    const int64_t *ids = g->order + g->start[r], k = g->start[r + 1] - g->start[r];
    COOP_CHECK(xfer(g->tmp_i, 2 * k, MPI_INT64_T, 8, r, TAG_I, 0, comm));
    COOP_CHECK(xfer(g->tmp_d, 3 * k, MPI_DOUBLE, 8, r, TAG_D, 0, comm));
    place(g, ids, k, g->tmp_i, g->tmp_d);
    COOP_CHECK(recv_solutions(g, r, ids, k, comm));
  }
  for (int64_t i = 0; i < s->sp.count; i++) g->t_final[i] = (double)g->iters[i] * g->dt[i]; /* the steps done */
  return 0;
}

static int gather_send(bstate *s) {
  const int64_t k = s->bt.count;
  int64_t *ri = malloc((size_t)k * 2 * sizeof *ri + 1);
  double *rd = malloc((size_t)k * 3 * sizeof *rd + 1);
  int rc = ri && rd ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (!rc) {
    pack(s, ri, rd);
    rc = xfer(ri, 2 * k, MPI_INT64_T, 8, 0, TAG_I, 1, s->c->world);
  }
  if (!rc) rc = xfer(rd, 3 * k, MPI_DOUBLE, 8, 0, TAG_D, 1, s->c->world);
  if (!rc) rc = xfer(s->x, s->bt.row_off[k], MPI_DOUBLE, 8, 0, TAG_X, 1, s->c->world);
  free(ri);
  free(rd);
  return rc;
}

/* Collective. Rank 0's arrays are agreed first; past that a failure cannot be
 * agreed (rank 0 waits in a receive), so it ends the job. */
static int gather(bstate *s) {
  const double t0 = MPI_Wtime();
  int rc = s->c->rank == 0 ? gather_alloc(s) : 0;
  if ((rc = step(s->c, rc))) return rc;
  rc = s->c->rank == 0 ? gather_root(s) : gather_send(s);
  if (rc) coop_comm_abort(s->c, rc);
  int64_t sums[2] = {s->opt.groups_used, s->opt.barriers};
  COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_INT64_T, MPI_SUM, s->c->world));
  double t[2] = {s->t[PH_SOLVE], s->opt.kernel_time}, tmax[2];
  COOP_MPI(MPI_Allreduce(t, tmax, 2, MPI_DOUBLE, MPI_MAX, s->c->world));
  s->t_solve_max = tmax[0], s->t_kernel_max = tmax[1];
  s->groups = sums[0], s->barriers = sums[1];
  s->t[PH_GATHER] = MPI_Wtime() - t0;
  return 0;
}

/* ---- output ------------------------------------------------------------------ */

/* "0 none, 1 converged_rtol, ..." */
static void reason_codes(char *out, size_t len) {
  out[0] = '\0';
  for (int r = COOP_REASON_NONE; r <= COOP_COMPLETED; r++)
    snprintf(out + strlen(out), len - strlen(out), "%s%d %s", r ? ", " : "", r, coop_reason_name(r));
}

/* "converged_rtol 250, diverged_its 6" (rank 0). */
static void reason_counts(const bstate *s, char *out, size_t len) {
  int64_t n[COOP_COMPLETED + 1] = {0};
  out[0] = '\0';
  for (int64_t i = 0; i < s->sp.count; i++)
    if (s->g.reason[i] >= 0 && s->g.reason[i] <= COOP_COMPLETED) n[s->g.reason[i]]++;
  for (int r = 0; r <= COOP_COMPLETED; r++)
    if (n[r]) snprintf(out + strlen(out), len - strlen(out), "%s%s %lld", out[0] ? ", " : "", coop_reason_name(r), (long long)n[r]);
}

/* The run's summary figures (rank 0's values; the writer takes them from there). */
static void solver_summary(const bstate *s, coop_io_result *r, char *reasons, size_t len) {
  int64_t total = 0;
  double worst = 0, rel = 0;
  for (int64_t i = 0; s->c->rank == 0 && i < s->sp.count; i++) {
    total += s->g.iters[i];
    worst = s->g.resid[i] > worst || isnan(s->g.resid[i]) ? s->g.resid[i] : worst;
    if (s->g.r0[i] > 0 && s->g.resid[i] / s->g.r0[i] > rel) rel = s->g.resid[i] / s->g.r0[i];
  }
  if (s->c->rank == 0) {
    snprintf(reasons, len, "batch: ");
    reason_counts(s, reasons + strlen(reasons), len - strlen(reasons));
  }
  r->reason = reasons;
  r->iterations = total;
  r->residual = worst;
  r->rel_residual = rel;
  r->solve_time = s->t_solve_max;
  r->true_residual = -1.0;
}

static void fill_batch(const bstate *s, coop_io_batch *b, const char *codes) {
  const coop_config *cfg = s->in->cfg;
  b->count = s->sp.count;
  b->rows = s->sp.total_rows;
  b->iterations = s->g.iters, b->nrows = s->g.rows, b->offsets = s->g.off;
  b->residual = s->g.resid, b->r0 = s->g.r0, b->seconds = s->g.secs;
  b->reason = s->g.reason, b->rank = s->owner;
  b->solution = s->g.sol;
  b->with_solution = coop_config_bool(cfg, "output.fields");
  static const double none[1];
  if (!s->sp.list) /* non-NULL on every rank: the writer asks whether there is one */
    b->shift = s->g.shift ? s->g.shift : none, b->side = s->g.side;
  if (s->sp.method == COOP_BATCH_HEAT) {
    b->dt = s->g.dt ? s->g.dt : none;
    b->t_final = s->g.t_final ? s->g.t_final : none;
    b->alpha = s->sp.alpha;
    b->t_end = s->sp.t_end;
  }
  b->method = coop_config_str(cfg, "solver.name");
  b->pc = coop_config_str(cfg, "solver.pc");
  b->sync = coop_config_str(cfg, "batch.sync");
  b->schedule = coop_config_str(cfg, "batch.schedule");
  b->sync_used = coop_batch_sync_name(s->opt.sync_used);
  b->schedule_used = coop_batch_schedule_name(s->opt.schedule_used);
  b->source = s->sp.list ? "matrices" : "generated";
  b->reason_codes = codes;
  b->group_blocks = s->opt.group_blocks;
  b->group_blocks_used = s->opt.group_blocks_used;
  b->groups = s->groups;
  b->barriers = s->barriers;
  b->kernel_time = s->t_kernel_max;
  b->seed = (int64_t)s->sp.seed;
}

static int write_output(bstate *s, const char *devices, int gpus) {
  char codes[512], reasons[512] = "";
  coop_io_batch b;
  coop_io_result r;
  char *resolved = coop_config_resolved(s->in->cfg);
  memset(&r, 0, sizeof r);
  memset(&b, 0, sizeof b);
  reason_codes(codes, sizeof codes);
  fill_batch(s, &b, codes);
  /* what ran on rank 0 goes to every rank: HDF5 needs the same attributes from all */
  int used[4] = {s->opt.sync_used, s->opt.schedule_used, s->opt.group_blocks_used, s->opt.levels_used};
  double busy[2] = {s->opt.busy_max, s->opt.busy_mean};
  COOP_MPI(MPI_Bcast(used, 4, MPI_INT, 0, s->c->world));
  COOP_MPI(MPI_Bcast(busy, 2, MPI_DOUBLE, 0, s->c->world));
  b.busy_max = busy[0], b.busy_mean = busy[1];
  b.sync_used = coop_batch_sync_name(used[0]), b.schedule_used = coop_batch_schedule_name(used[1]);
  b.group_blocks_used = used[2];
  b.levels_used = used[3];
  r.comm = s->c->world;
  r.batch = &b;
  r.version = PACKAGE_VERSION;
  r.gpus = gpus;
  r.devices = devices;
  r.input_name = s->in->input_name;
  r.input_text = s->in->input_text;
  r.resolved = resolved ? resolved : "";
  r.solver = coop_config_str(s->in->cfg, "solver.name");
  r.backend = s->in->backend;
  r.mode = b.sync_used;
  r.precision = "fp64";
  solver_summary(s, &r, reasons, sizeof reasons);
  r.phase_names = phase_names;
  r.phase_times = s->t;
  r.nphases = NPH;
  const int rc = coop_io_write(coop_config_str(s->in->cfg, "output.file"), &r, 0);
  free(resolved);
  return rc;
}

/* ---- summary ------------------------------------------------------------------- */

static void print_slowest(const bstate *s) {
  int64_t top[5];
  int n = 0;
  for (int64_t i = 0; i < s->sp.count; i++) { /* insertion into the 5 slowest so far */
    int at = n < 5 ? n++ : 5;
    if (at == 5 && !(s->g.secs[i] > s->g.secs[top[4]])) continue;
    if (at == 5) at = 4;
    while (at > 0 && s->g.secs[i] > s->g.secs[top[at - 1]]) top[at] = top[at - 1], at--;
    top[at] = i;
  }
  printf("  slowest     %10s %10s %10s %12s\n", "problem", "rows", "iterations", "seconds");
  for (int k = 0; k < n; k++)
    printf("              %10lld %10lld %10lld %12.6f\n", (long long)top[k], (long long)s->g.rows[top[k]],
           (long long)s->g.iters[top[k]], s->g.secs[top[k]]);
}

static void print_summary(const bstate *s, const char *devices) {
  const coop_config *cfg = s->in->cfg;
  char reasons[512];
  int64_t total = 0, lo = INT64_MAX, hi = 0;
  for (int64_t i = 0; i < s->sp.count; i++) {
    total += s->g.iters[i];
    lo = s->g.iters[i] < lo ? s->g.iters[i] : lo, hi = s->g.iters[i] > hi ? s->g.iters[i] : hi;
  }
  reason_counts(s, reasons, sizeof reasons);
  printf("coopsolve: batch of %lld %s problems (%lld rows), %s%s, %d rank%s, backend %s (%s)%s%s\n",
         (long long)s->sp.count, s->sp.list ? "matrix" : s->sp.dim == 2 ? "2D" : "3D",
         (long long)s->sp.total_rows, coop_config_str(cfg, "solver.name"), s->sp.pc ? " + jacobi pc" : "",
         s->c->size, s->c->size > 1 ? "s" : "", s->in->backend, coop_batch_sync_name(s->opt.sync_used),
         devices[0] ? " on " : "", devices);
  printf("  reasons     %s\n", reasons);
  printf("  %s  %lld in all; per problem min %lld, max %lld\n", s->sp.method == COOP_BATCH_HEAT ? "steps     " : "iterations",
         (long long)total, (long long)lo, (long long)hi);
  if (s->sp.method == COOP_BATCH_HEAT) {
    double dlo = INFINITY, dhi = 0.0, tlo = INFINITY, thi = 0.0;
    for (int64_t i = 0; i < s->sp.count; i++) {
      dlo = fmin(dlo, s->g.dt[i]), dhi = fmax(dhi, s->g.dt[i]);
      tlo = fmin(tlo, s->g.t_final[i]), thi = fmax(thi, s->g.t_final[i]);
    }
    printf("  heat        dt %.9g .. %.9g, final time %.9g .. %.9g (alpha %g)\n", dlo, dhi, tlo, thi, s->sp.alpha);
  }
  print_slowest(s);
  if (s->be->device_memory)
    printf("  groups      %lld groups of blocks, %lld group barriers (all ranks); rank 0: %d blocks per group "
           "(%d level%s), schedule %s, busiest block %.6f s, mean %.6f s\n", (long long)s->groups,
           (long long)s->barriers, s->opt.group_blocks_used, s->opt.levels_used, s->opt.levels_used == 1 ? "" : "s",
           coop_batch_schedule_name(s->opt.schedule_used), s->opt.busy_max, s->opt.busy_mean);
  if (s->t_kernel_max > 0)
    printf("  kernels     %.6f s on the device (slowest rank: first kernel to last), %.1f problems/s\n",
           s->t_kernel_max, (double)s->sp.count / s->t_kernel_max);
  printf("  time        %.6f s solve (slowest rank), %.1f problems/s; on rank 0: setup %.3f s, build %.3f s, "
         "gather %.3f s\n", s->t_solve_max, s->t_solve_max > 0 ? (double)s->sp.count / s->t_solve_max : 0.0,
         s->t[PH_SETUP], s->t[PH_BUILD], s->t[PH_GATHER]);
  printf("  output      %s\n", coop_config_str(cfg, "output.file"));
  fflush(stdout);
}

/* ---- the run ------------------------------------------------------------------- */

static int finish(bstate *s) {
  char devices[1024];
  int gpus = 0, rc = gather(s);
  if (rc) return rc;
  rc = coop_report_devices(s->c, s->in->device, devices, sizeof devices, &gpus);
  if (!rc && coop_fault(s->c, "output")) rc = COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  if ((rc = step(s->c, rc))) return rc;
  if ((rc = step(s->c, write_output(s, devices, gpus)))) return rc;
  if (s->c->rank == 0) print_summary(s, devices);
  if (s->c->rank == 0 && s->unsolved) {
    int64_t left = 0;
    for (int64_t i = 0; i < s->sp.count; i++) left += s->g.reason[i] == COOP_REASON_NONE;
    printf("coopsolve: stopped by %s: %lld of %lld problems solved; the other %lld have reason none in "
           "/batch/reason (0 iterations, the initial guess as solution)\n", coop_signal_name(s->signal),
           (long long)(s->sp.count - left), (long long)s->sp.count, (long long)left);
  }
  return 0;
}

/* solver.error_if_not_converged: status 4 when any problem ended without
 * converging (heat's completed steps count as done), the output written. */
static int check_converged(const bstate *s) {
  if (!coop_config_bool(s->in->cfg, "solver.error_if_not_converged")) return 0;
  int st = 0; /* rank 0 holds every problem's reason (gather) */
  if (s->c->rank == 0) {
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < s->sp.count; i++)
      if (!coop_reason_converged(s->g.reason[i]) && s->g.reason[i] != COOP_COMPLETED && bad++ == 0) first = i;
    if (bad)
      fprintf(stderr, "coopsolve: %lld of %lld problems ended without converging (problem %lld: %s); "
              "solver.error_if_not_converged = true: exit status 4\n", (long long)bad, (long long)s->sp.count,
              (long long)first, coop_reason_name(s->g.reason[first]));
    st = bad ? 4 : 0;
  }
  MPI_Bcast(&st, 1, MPI_INT, 0, s->c->world);
  return st;
}

static int plan(bstate *s) {
  uint64_t est[2], most[2], limit;
  int most_rank = 0, st;
  if ((st = step(s->c, read_spec(s)))) return st;
  if ((st = step(s->c, check_memory(s, est, most, &most_rank, &limit)))) return st;
  if (!s->in->dry_run && (st = step(s->c, open_backend(s)))) return st;
  const double t0 = MPI_Wtime();
  /* built in a dry run too: every file is read and checked */
  if ((st = step(s->c, coop_batch_build(&s->sp, s->owner, s->c->rank, &s->bt)))) return st;
  s->t[PH_BUILD] = MPI_Wtime() - t0;
  if (s->in->dry_run && s->c->rank == 0) print_dry_run(s, est, most, most_rank, limit);
  return 0;
}

int coop_run_batch(const coop_comm *c, const coop_batch_input *in) {
  bstate *s = calloc(1, sizeof *s);
  int st;
  if (!s) return step(c, COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory"));
  s->c = c;
  s->in = in;
  if (!(st = plan(s)) && !in->dry_run) {
    s->t[PH_SETUP] = MPI_Wtime() - in->t_start - s->t[PH_BUILD];
    int stop = 0;
    if (!(st = step(c, setup_solve(s))) && !(st = step(c, solve(s))) && !(st = step(c, signal_taken(s, &stop))) &&
        !(st = finish(s)))
      st = stop ? stop : check_converged(s);
  }
  gather_free(&s->g);
  free(s->x);
  free(s->res);
  coop_backend_destroy(s->be);
  coop_batch_free(&s->bt);
  free(s->owner);
  coop_batch_spec_destroy(&s->sp);
  free(s);
  return st;
}
