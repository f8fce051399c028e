#include "driver/budget.h"

#include "io/checkpoint.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "solvers/krylov/krylov.h"

/* ---- checked arithmetic: a count past 64 bits sticks at UINT64_MAX ---------- */

typedef struct {
  coop_budget *b;
  int device; /* 1: backend memory is the GPU's; 0: it is host memory too */
} tally;

static uint64_t mul(tally *t, uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) t->b->overflow = 1, r = UINT64_MAX;
  return r;
}

static uint64_t add(tally *t, uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) t->b->overflow = 1, r = UINT64_MAX;
  return r;
}

static uint64_t u64(int64_t v) { return v > 0 ? (uint64_t)v : 0; }

/* What is held at one step: host and backend bytes. */
static void step(tally *t, const char *name, uint64_t host, uint64_t backend) {
  if (!t->device) host = add(t, host, backend), backend = 0;
  if (host > t->b->host || !t->b->peak) t->b->host = host, t->b->peak = name;
  if (backend > t->b->device) t->b->device = backend;
}

/* ---- the pieces ---------------------------------------------------------------- */

/* Work vectors like b of each Krylov method (the NVEC of solvers/krylov/cg.c, pipecg.c,
 * bicgstab.c); an unknown one counts as the most any may have. */
static int work_vectors(const char *name) {
  static const struct {
    const char *name;
    int nvec;
  } table[] = {{"cg", 6}, {"pipecg", 9}, {"bicgstab", 8}};
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    if (strcmp(name, table[i].name) == 0) return table[i].nvec;
  return KRYLOV_MAX_VECS;
}

/* Vectors a checkpoint copies to the host (the coop_ckpt_state of each method:
 * solvers/krylov/cg.c, pipecg.c, bicgstab.c); one is written at any signal. */
static int checkpoint_vectors(const coop_config *cfg) {
  const char *name = coop_config_str(cfg, "solver.name");
  if (strcmp(name, "cg") == 0) return coop_config_bool(cfg, "solver.cg_single_reduction") ? 5 : 3;
  if (strcmp(name, "pipecg") == 0) return 10;
  if (strcmp(name, "bicgstab") == 0) return 5;
  return COOP_CKPT_MAX_ITEMS;
}

/* History arrays (app.c setup_form) and their copy in the output's metadata. */
static uint64_t history(tally *t, const coop_config *cfg, int grid_form) {
  const int64_t every = grid_form ? coop_config_int(cfg, "solver.check_every") : 1;
  const int64_t checks = coop_config_int(cfg, "solver.max_iter") / every + 2;
  return mul(t, u64(checks < (1 << 20) ? checks : (1 << 20)), 16);
}

/* HDF5's chunk cache and type-conversion buffer while the output is written
 * (1 MiB each by default); measured runs fall short of the count by about this. */
#define LIBRARY_OUTPUT ((uint64_t)2 << 20)

/* Point coordinates the output writes for a grid (io.c meta_coords): every axis, global. */
static uint64_t coordinates(tally *t, const coop_linsys *ls) {
  uint64_t n = 0;
  for (int a = 0; ls->grid && a < ls->dec.ndim; a++) n = add(t, n, u64(ls->dec.global_n[a]));
  return add(t, mul(t, n, 8), LIBRARY_OUTPUT);
}

static int has_nbr(const coop_decomp *d, int a, int side) {
  return (side ? d->nbr_hi[a] : d->nbr_lo[a]) != MPI_PROC_NULL;
}

/* Send and receive buffers per neighbour face (kernels/halo.c for the grid form with
 * ghost width g, kernels/op.c for the stencil operator with faces of owned
 * points): *staged gets the host copies when MPI cannot take device memory. */
static uint64_t faces(tally *t, const coop_linsys *ls, int jacobi, uint64_t *staged) {
  const coop_grid *gr = &ls->s.grid;
  const uint64_t es = coop_prec_size(gr->prec);
  uint64_t total = 0;
  for (int a = 0; a < gr->ndim; a++) {
    uint64_t points = 1;
    for (int b = 0; b < 3; b++) {
      const uint64_t n = u64(gr->n[b]), g = u64(gr->g[b]);
      if (jacobi) points = mul(t, points, b < a ? n + 2 * g : b == a ? g : n);
      else if (b != a) points = mul(t, points, n);
    }
    for (int side = 0; side < 2; side++)
      if (has_nbr(&ls->dec, a, side)) total = add(t, total, mul(t, mul(t, points, es), 2));
  }
  *staged = t->device && !coop_comm_cuda_aware() ? total : 0;
  return total;
}

/* The multigrid levels (solvers/mg/mg_level.c) beside a fine level of `field`
 * bytes: its residual (and f, u where the solver does not lend them: own = 1,
 * 2 or 3 arrays), and u, f, r on the coarse levels, each a 2^dim-th of the one
 * above at most (a few percent more for row padding and ghosts). */
static uint64_t mg_levels(tally *t, const coop_linsys *ls, uint64_t field, int own) {
  const uint64_t below = mul(t, field, 3) / ((ls->dec.ndim == 3 ? 7 : 3)) * 11 / 10;
  return add(t, mul(t, field, u64(own)), below);
}

/* ---- the three forms ----------------------------------------------------------- */

/* Jacobi on the stored fields (app.c setup_fields, report.c fetch_owned). */
static void jacobi(tally *t, const coop_config *cfg, const coop_linsys *ls) {
  const coop_grid *gr = &ls->s.grid;
  const uint64_t es = coop_prec_size(gr->prec), n = u64(ls->n);
  const uint64_t field = mul(t, (uint64_t)coop_grid_points(gr), es);
  uint64_t staged = 0, hist = history(t, cfg, 1);
  /* u, unew and f on the backend; a zero right-hand side (laplace, heat) is
   * not stored (app.c setup_fields); u and f filled on the host first (heat: u) */
  const int heat = strcmp(coop_config_str(cfg, "solver.name"), "heat") == 0;
  const int no_f = heat || strcmp(coop_config_str(cfg, "problem.type"), "laplace") == 0;
  const uint64_t halo = faces(t, ls, 1, &staged);
  uint64_t fields = mul(t, field, no_f ? 2 : 3);
  if (strcmp(coop_config_str(cfg, "solver.name"), "mg") == 0) /* its r, and f where none is stored */
    fields = add(t, fields, mg_levels(t, ls, field, no_f ? 2 : 1));
  /* heat's time series (app.c open_series, io.c): a step and a time per
   * snapshot held to the end, and a snapshot's owned points, host and backend */
  const int64_t every = heat ? coop_config_int(cfg, "output.every") : 0;
  if (every > 0) {
    const uint64_t snaps = u64(coop_config_int(cfg, "solver.max_iter") / every + 2);
    const uint64_t snap = mul(t, n, es);
    hist = add(t, hist, add(t, mul(t, snaps, 16), snap));
    fields = add(t, fields, snap);
  }
  step(t, "setup of the fields", mul(t, field, heat ? 1 : 2), fields);
  step(t, "solve", add(t, hist, staged), add(t, add(t, fields, halo), t->device ? hist : 0));
  /* a checkpoint: the stored field, its owned part, as doubles (solvers/checkpoint.c) */
  step(t, "checkpoint", add(t, add(t, hist, staged), add(t, field, add(t, mul(t, n, es), mul(t, n, 8)))),
       add(t, add(t, fields, halo), t->device ? hist : 0));
  /* the solution as doubles, the stored field and its owned part; then the write */
  const uint64_t owned = mul(t, n, 8);
  step(t, "output", add(t, add(t, hist, staged), add(t, owned, add(t, field, mul(t, n, es)))),
       add(t, fields, halo));
  const uint64_t meta = add(t, hist, coordinates(t, ls));
  step(t, "output", add(t, add(t, hist, staged), add(t, add(t, owned, meta), gr->prec == COOP_FP32 ? mul(t, n, 4) : 0)),
       add(t, fields, halo));
}

/* Krylov methods on the stencil operator (problem.c krylov_grid, op.c, krylov.c). */
static void krylov_grid(tally *t, const coop_config *cfg, const coop_linsys *ls, int vecs) {
  const uint64_t n = u64(ls->n), es = coop_prec_size(ls->prec), d = mul(t, n, 8), v = mul(t, n, es);
  uint64_t staged = 0;
  const uint64_t face = faces(t, ls, 0, &staged), hist = history(t, cfg, 0);
  const uint64_t keep = add(t, mul(t, d, 2), hist); /* exact solution and diagonal, history */
  step(t, "setup of b and x", add(t, add(t, keep, mul(t, d, 2)), staged), add(t, mul(t, v, 2), face));
  uint64_t work = add(t, mul(t, v, u64(2 + vecs)), face);
  if (strcmp(coop_config_str(cfg, "solver.pc"), "mg") == 0) { /* u, f, r of its own on every level */
    coop_grid g1;
    coop_grid_init(&g1, ls->s.grid.ndim, ls->s.grid.prec, ls->s.grid.n, 1);
    work = add(t, work, mg_levels(t, ls, mul(t, (uint64_t)coop_grid_points(&g1), es), 3));
  }
  step(t, "solver setup", add(t, add(t, keep, d), staged), work);
  step(t, "solve", add(t, keep, staged), add(t, work, v)); /* r of the true residual */
  step(t, "checkpoint", add(t, add(t, keep, staged), mul(t, d, u64(checkpoint_vectors(cfg)))), work);
  const uint64_t out = add(t, d, add(t, hist, coordinates(t, ls)));
  step(t, "output", add(t, add(t, keep, out), add(t, staged, ls->prec == COOP_FP32 ? mul(t, n, 4) : 0)), work);
}

/* Krylov methods on a matrix (mm.c rows, op.c coop_op_create_csr, csr_api.c). */
static void krylov_csr(tally *t, const coop_config *cfg, const coop_linsys *ls, int vecs, int size) {
  const uint64_t n = u64(ls->n), z = u64(ls->mm.nnz), d = mul(t, n, 8);
  const uint64_t rows = mul(t, n + 1, 8), hist = history(t, cfg, 0);
  /* columns other ranks own: at most one per entry and one per other row */
  const uint64_t others = u64(ls->n_global) - n, ghost = z < others ? z : others;
  const uint64_t mm = add(t, rows, mul(t, z, 16));
  const uint64_t bx = mul(t, d, 2);
  /* the owned-column and ghost-column parts: row pointers, 4-byte columns,
   * values, the ghost part's row list; gather indices and buffers */
  const uint64_t csr = add(t, add(t, mul(t, rows, 2), mul(t, z, 12)), mul(t, n, 4));
  const uint64_t xbuf = mul(t, ghost, 8 + 8 + 4);
  const uint64_t staged = t->device && !coop_comm_cuda_aware() ? mul(t, ghost, 16) : 0;
  step(t, "reading the matrix", mm, 0);
  /* splitting the rows: the file's arrays, b and x0, the diagonal, the ghost
   * list, the split's temporaries (op.c split_matrix) and the backend copy */
  const uint64_t split = add(t, add(t, mul(t, rows, 2), mul(t, z, 24)), mul(t, n, 4));
  const uint64_t plan = add(t, mul(t, z, 8), mul(t, u64(size) + 1, 8 * 5));
  step(t, "building the operator", add(t, add(t, add(t, mm, bx), add(t, d, plan)), add(t, split, staged)),
       add(t, add(t, bx, csr), xbuf));
  const uint64_t keep = add(t, mul(t, d, 2), add(t, hist, staged)); /* exact, diagonal */
  const uint64_t work = add(t, add(t, csr, xbuf), mul(t, d, u64(2 + vecs)));
  step(t, "solver setup", add(t, keep, d), work);
  step(t, "solve", keep, add(t, work, d));
  step(t, "checkpoint", add(t, keep, mul(t, d, u64(checkpoint_vectors(cfg)))), work);
  step(t, "output", add(t, keep, add(t, d, add(t, hist, LIBRARY_OUTPUT))), work);
}

void coop_budget_estimate(const coop_comm *c, const coop_config *cfg, const coop_linsys *ls,
                          const coop_solver_type *type, int device_backend, coop_budget *b) {
  tally t = {b, device_backend};
  memset(b, 0, sizeof *b);
  const int pc = strcmp(coop_config_str(cfg, "solver.pc"), "jacobi") == 0;
  const int vecs = work_vectors(type->name) + pc; /* the preconditioner's inverse diagonal */
  if (type->grid_form) jacobi(&t, cfg, ls);
  else if (ls->grid) krylov_grid(&t, cfg, ls, vecs);
  else krylov_csr(&t, cfg, ls, vecs, c->size);
}

/* ---- what the node allows ------------------------------------------------------ */

static uint64_t read_limit(const char *path) {
  FILE *f = fopen(path, "re");
  char text[64] = "";
  uint64_t v = UINT64_MAX;
  if (!f) return v;
  if (fgets(text, sizeof text, f) && text[0] >= '0' && text[0] <= '9') v = strtoull(text, NULL, 10);
  fclose(f);
  return v; /* "max" or unreadable: no limit */
}

/* cgroup v2 (the unified hierarchy, as Slurm and containers set it) or v1. */
static uint64_t cgroup_limit(void) {
  FILE *f = fopen("/proc/self/cgroup", "re");
  char line[4096], path[4200];
  uint64_t lim = read_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, "0::", 3) != 0) continue;
    line[strcspn(line, "\n")] = '\0';
    for (char *end = line + strlen(line); end >= line + 3; end--) { /* this group and its parents */
      if (*end != '/' && *end != '\0') continue;
      *end = '\0';
      snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
      const uint64_t v = read_limit(path);
      if (v < lim) lim = v;
    }
  }
  if (f) fclose(f);
  return lim;
}

uint64_t coop_budget_host_limit(const coop_comm *c) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t node = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
  const uint64_t cg = cgroup_limit();
  if (cg < node) node = cg;
  uint64_t lim = node / (uint64_t)(c->node_size > 0 ? c->node_size : 1);
  const int which[2] = {RLIMIT_AS, RLIMIT_DATA};
  for (int i = 0; i < 2; i++) {
    struct rlimit rl;
    if (getrlimit(which[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (uint64_t)rl.rlim_cur < lim)
      lim = (uint64_t)rl.rlim_cur;
  }
  return lim;
}

/* ---- the check ------------------------------------------------------------------ */

static double mib(uint64_t bytes) { return (double)bytes / 1048576.0; }

/* The keys that size the problem, for the message. */
static void size_keys(const coop_config *cfg, const coop_linsys *ls, char *out, size_t len) {
  if (!ls->grid) {
    snprintf(out, len, "problem.matrix = %s (%" PRId64 " rows; %" PRId64 " rows and %" PRId64
             " entries on this rank)", ls->matrix, ls->n_global, ls->n, ls->mm.nnz);
    return;
  }
  const int nd = ls->dec.ndim;
  snprintf(out, len, "grid.nx x grid.ny%s = %" PRId64 " x %" PRId64 "%s", nd == 3 ? " x grid.nz" : "",
           ls->dec.global_n[0], ls->dec.global_n[1], nd == 3 ? " x " : "");
  if (nd == 3) snprintf(out + strlen(out), len - strlen(out), "%" PRId64, ls->dec.global_n[2]);
  snprintf(out + strlen(out), len - strlen(out), " points (%s, grid.ghost = %" PRId64 ")",
           coop_config_str(cfg, "solver.precision"), coop_config_int(cfg, "grid.ghost"));
  const int64_t every = strcmp(coop_config_str(cfg, "solver.name"), "heat") == 0 ? coop_config_int(cfg, "output.every") : 0;
  if (every > 0)
    snprintf(out + strlen(out), len - strlen(out), " and a time series of solver.max_iter / output.every = %" PRId64
             " / %" PRId64 " snapshots", coop_config_int(cfg, "solver.max_iter"), every);
}

void coop_budget_print(const coop_comm *c, const coop_budget_report *r, FILE *out) {
  if (c->rank) return;
  fprintf(out, "# memory on rank 0: %.3f MiB host at its peak (%s), %.3f MiB device\n",
          mib(r->own.host), r->own.peak ? r->own.peak : "-", mib(r->own.device));
  fprintf(out, "# memory per rank at most: %.3f MiB host (rank %d), %.3f MiB device; this node "
          "allows %.3f MiB host per rank\n", mib(r->most_host), r->most_rank, mib(r->most_device),
          mib(r->limit));
}

static int over_message(const coop_comm *c, const coop_config *cfg, const coop_linsys *ls,
                        const coop_solver_type *type, const coop_budget_report *r) {
  char what[512];
  size_keys(cfg, ls, what, sizeof what);
  if (r->own.overflow)
    return coop_error_input("%s with solver.name = %s: rank %d would need more than 2^64 bytes",
                            what, type->name, c->rank);
  return coop_error_input("%s with solver.name = %s: rank %d would hold %.1f MiB of host memory "
                          "at its peak (%s), and a rank of this node may use %.1f MiB (memory, "
                          "cgroup and ulimit, shared by %d rank%s); use more ranks or nodes, or "
                          "a smaller problem", what, type->name, c->rank, mib(r->own.host), r->own.peak,
                          mib(r->limit), c->node_size, c->node_size > 1 ? "s" : "");
}

int coop_budget_check(const coop_comm *c, const coop_config *cfg, const coop_linsys *ls,
                      const coop_solver_type *type, const char *backend, coop_budget_report *r) {
  memset(r, 0, sizeof *r);
  coop_budget_estimate(c, cfg, ls, type, strcmp(backend, "host") != 0, &r->own);
  r->limit = coop_budget_host_limit(c);
  struct {
    double v;
    int rank;
  } hi = {(double)r->own.host, c->rank}, hi_all = {0.0, 0};
  uint64_t most[2] = {r->own.host, r->own.device};
  COOP_MPI(MPI_Allreduce(&hi, &hi_all, 1, MPI_DOUBLE_INT, MPI_MAXLOC, c->world));
  COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, most, 2, MPI_UINT64_T, MPI_MAX, c->world));
  r->most_host = most[0];
  r->most_device = most[1];
  r->most_rank = hi_all.rank;
  const int over = r->own.overflow || r->own.host > r->limit;
  return coop_comm_agree(c, over ? over_message(c, cfg, ls, type, r) : 0);
}
