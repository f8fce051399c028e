/* The relaxation driver (solvers/relax/relax.h): modes, halo exchanges every g
 * steps, norm steps, CUDA graphs and the persistent kernels. */
#include "solvers/relax/relax.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coop_build.h"
#if COOP_HAVE_CUDA
#include "solvers/relax/relax_cuda.h"
#endif
#include "solvers/relax/relax_peers.h"

enum { MODE_HOST, MODE_LAUNCH, MODE_GRAPH, MODE_GRID };

/* Scratch slot of the norm-step sum (below the residual's, kernels/stencil_api.c),
 * and below it the sums of a split step's parts (at most 2 x 3 strips and the interior). */
#define NORM_SLOT (COOP_SCRATCH_DOUBLES - 2)
#define PARTS_SLOT (NORM_SLOT - 2 * 3 - 1)
/* Longest run of steps one CUDA graph holds; longer runs replay it again. */
#define GRAPH_MAX_STEPS 256
#define GRAPH_CACHE 6

typedef struct {
  void *exec;
  int64_t len, first_ext; /* steps, and the overlap of the first one */
  const void *u;          /* the buffer the first step reads (parity) */
} graph_entry;

struct coop_relax {
  coop_solve *sv;
  coop_relax_opts opt;   /* tune.* as read at create */
  coop_relax_path path;  /* the kernel path that ran */
  double c;
  int mode, alone, g;
  int overlap;           /* the exchange runs beside the interior of each block's last step */
  int blocks;            /* persistent n-step grid (grid mode) */
  int solve_blocks;      /* whole-solve grid (grid mode: alone, or with peers) */
  int peers_on;          /* the whole solve spans the node's ranks (solvers/relax/relax_peers.h) */
  int pair;              /* the whole solve of a rank alone takes two sweeps a pass (tune.fuse_sweeps) */
  int pair_steps;        /* grid mode with neighbours: the n-step kernel takes two steps a pass */
  int flip;              /* the last whole solve's answer is not in its iterations' parity field */
#if COOP_HAVE_CUDA
  coop_relax_peer_set peers; /* mapped at the first such solve */
  int peers_open;
  coop_relax_resident res; /* the on-chip whole solve (blocks 0: the box does not fit) */
#endif
  long long target;      /* threads that run a step at once: sizes each thread's work */
  graph_entry graphs[GRAPH_CACHE];
  int next_graph;
  int64_t steps;
  int ph_sweep, ph_halo, ph_check;
};

/* auto: the persistent kernel wherever cooperative launch works (same step
 * code and occupancy as launch mode; it saves a launch per step and, with a
 * residual each check, a host round trip per check). The n-step kernel
 * takes its regions as a constant-bank parameter, so it ties launch mode
 * between exchanges too (measured: see bench/results/). */
static int pick_mode(coop_relax *r) {
  coop_solve *sv = r->sv;
  if (!sv->be->device_memory) return MODE_HOST;
  if (strcmp(sv->sync, "launch") == 0) return MODE_LAUNCH;
  if (strcmp(sv->sync, "graph") == 0) return MODE_GRAPH;
  if (strcmp(sv->sync, "grid") == 0) return MODE_GRID;
  if (!sv->be->cooperative) return MODE_LAUNCH;
  return MODE_GRID;
}

static const char *mode_name(int m) {
  return m == MODE_HOST ? "host" : m == MODE_LAUNCH ? "launch" : m == MODE_GRAPH ? "graph" : "grid";
}

#if COOP_HAVE_CUDA
/* Largest co-resident grid, or a clear refusal (never a grid that could hang). */
static int plan_grid(coop_relax *r, int solve, int *blocks) {
  coop_solve *sv = r->sv;
  coop_backend *be = sv->be;
  int per_sm = 0;
  COOP_CHECK(coop_relax_occupancy_cuda(sv->s, sv->f != NULL, solve, &per_sm));
  const int most = per_sm * be->sm_count;
  const char *what = solve ? "whole-solve kernel" : "n-step kernel";
  if (!be->cooperative || most < 1)
    return COOP_ERROR(COOP_ERR_RUNTIME, "GPU %d cannot run a cooperative %s (cooperative launch %s, "
                      "%d blocks resident)", be->device, what, be->cooperative ? "supported" : "unsupported", most);
  if (sv->blocks > most) /* the user's option, so an input error */
    return coop_error_input("tune.blocks = %d: at most %d blocks can be resident on GPU %d for the %s, "
                            "and a grid barrier over more could never complete", sv->blocks, most,
                            be->device, what);
  *blocks = sv->blocks > 0 ? sv->blocks : coop_relax_fit_blocks_cuda(sv->s, most, be->sm_count);
  return 0;
}
#endif

#if COOP_HAVE_CUDA
/* Grid mode's plan agreed by ranks with neighbours, which take grid mode
 * together or not at all (one in launch mode alone would skip collectives
 * the others wait in): under run.sync = auto a failure on any rank is a
 * fallback on every rank (note: which rank and why), else every rank
 * returns it (coop_comm_agree: told once). */
static int agree_plan(coop_relax *r, int rc, int is_auto, char *note, size_t len) {
  coop_solve *sv = r->sv;
  if (rc) snprintf(note, len, "%s", coop_error_message());
  if (r->alone) return rc;
  if (!is_auto) return coop_comm_agree(sv->comm, rc);
  int who = -1;
  char msg[COOP_RELAX_NOTE_LEN];
  COOP_CHECK(coop_relax_peers_agree(sv->comm, rc, &who, msg, sizeof msg));
  if (who < 0) return 0;
  snprintf(note, len, "rank %d: %s", who, msg);
  return COOP_ERR_RUNTIME;
}

/* The grid of the multi-rank whole solve, agreed: where it cannot run on
 * some rank (occupancy, tune.blocks), no rank takes it and halos go between
 * kernels, whatever run.sync says (that is still grid mode). */
static int plan_peers(coop_relax *r) {
  coop_solve *sv = r->sv;
  int who = -1;
  char msg[COOP_RELAX_NOTE_LEN];
  const int rc = plan_grid(r, 2, &r->solve_blocks);
  COOP_CHECK(coop_relax_peers_agree(sv->comm, rc, &who, msg, sizeof msg));
  if (who < 0) return 0;
  r->peers_on = 0;
  r->solve_blocks = 0;
  if (sv->comm->rank == 0)
    fprintf(stderr, "coopsolve: note: halos between kernels (tune.fused_halo: rank %d: %s)\n", who, msg);
  return 0;
}
#endif

#if COOP_HAVE_CUDA
/* tune.fuse_sweeps: two sweeps a pass halve the field's traffic but compute
 * the strip's outer rows and columns twice and hold more registers (80, with
 * spills); they win where the sweep streams from memory and lose while much
 * of the field stays in L2 between sweeps. So 2D takes two where the two
 * fields (f not counted) exceed the L2. 3D (relax_pair_ring3) takes two only
 * where they exceed four times the L2, and never fp64 with a source (the
 * source's loads on top of 128 registers lose). Measured: see bench/results/. */
static int pair_wanted(const coop_relax *r) {
  const coop_solve *sv = r->sv;
  if (r->opt.fuse_sweeps) return r->opt.fuse_sweeps == 2;
  const coop_grid *g = &sv->s->grid;
  if (g->ndim == 3 && g->prec == COOP_FP64 && sv->f != NULL) return 0;
  const double two_fields = 2.0 * (double)coop_grid_points(g) * (double)coop_prec_size(g->prec);
  return sv->be->l2_bytes > 0 && two_fields > (g->ndim == 3 ? 4.0 : 1.0) * (double)sv->be->l2_bytes;
}
#endif

static int setup_device(coop_relax *r) {
  coop_solve *sv = r->sv;
  coop_backend *be = sv->be;
  /* every mode sizes a thread's work for the same resident grid, so modes do
   * equal work with equal memory access patterns */
#if COOP_HAVE_CUDA
  r->target = (long long)be->sm_count * coop_relax_blocks_per_sm_cuda(sv->s->grid.ndim) * coop_relax_threads_cuda();
#else
  r->target = (long long)be->sm_count * 1024;
#endif
  if (r->mode != MODE_GRID) return 0;
#if COOP_HAVE_CUDA
  const int is_auto = strcmp(sv->sync, "auto") == 0;
  char note[2 * COOP_RELAX_NOTE_LEN] = "";
  int rc = plan_grid(r, 0, &r->blocks);
  r->pair = r->alone && pair_wanted(r);
  if (!rc && r->alone) {
    rc = plan_grid(r, r->pair ? 3 : 1, &r->solve_blocks);
    /* two sweeps by auto, but tune.blocks past what its kernel keeps resident
     * (3D: 2 blocks a SM against 4): one sweep a pass, as asked before auto */
    if (rc && r->pair && !r->opt.fuse_sweeps) {
      coop_error_clear();
      r->pair = 0;
      rc = plan_grid(r, 1, &r->solve_blocks);
    }
  }
  rc = agree_plan(r, rc, is_auto, note, sizeof note);
  if (rc && is_auto) { /* auto falls back to one kernel per step */
    if (sv->comm->rank == 0) fprintf(stderr, "coopsolve: note: %s; using sync = launch\n", note);
    coop_error_clear();
    r->mode = MODE_LAUNCH;
    r->blocks = r->solve_blocks = 0;
    return 0;
  }
  COOP_CHECK(rc);
  if (!r->alone) { /* ranks of one node, a GPU each: the whole solve in one kernel each */
    const char *why = NULL;
    COOP_CHECK(coop_relax_peers_eligible(sv, r->opt.fused_halo, &r->peers_on, &why));
    if (!r->peers_on && r->opt.fused_halo && sv->comm->rank == 0)
      fprintf(stderr, "coopsolve: note: halos between kernels (tune.fused_halo: %s)\n", why);
    /* the peers' memory is mapped at the first coop_relax_solve: heat and
     * checkpointed runs never take that kernel */
    if (r->peers_on) COOP_CHECK(plan_peers(r));
  }
  r->target = (long long)r->blocks * coop_relax_threads_cuda();
  /* the multi-rank whole solve reports itself when it runs (coop_relax_solve):
   * heat and checkpointed runs take the n-step kernel and host exchanges */
  sv->grid_blocks = r->alone ? r->solve_blocks : r->blocks;
  r->path.halo_fused = 0;
  r->path.field_resident = 0;
  /* a rank alone on a box that fits on the chip (tune.blocks set: the user's grid) */
  if (r->alone && r->opt.resident && sv->blocks == 0)
    COOP_CHECK(coop_relax_resident_plan_cuda(sv->s, sv->f != NULL, sv->ctl.check_every, r->opt.resident_depth,
                                             sv->be->sm_count,
                                             &r->res));
  /* ranks with neighbours that sweep between exchanges: two steps a pass in
   * the n-step kernel, by the rule a rank alone follows on its own box (2D;
   * a block of g steps has g plain ones, g - 1 with the overlap's split
   * step). Two ranks sharing one GPU sweep faster so than at one step a
   * pass (measured: see bench/results/) */
  if (!r->alone && sv->s->grid.ndim == 2 && pair_wanted(r) && r->g >= (r->overlap ? 3 : 2)) {
    int per_sm = 0;
    COOP_CHECK(coop_relax_occupancy_cuda(sv->s, sv->f != NULL, 4, &per_sm));
    r->pair_steps = per_sm * be->sm_count >= r->blocks;
    if (sv->comm->rank == 0 && r->pair_steps)
      fprintf(stderr, "coopsolve: note: two sweeps a pass between exchanges, where steps run between "
                      "exchanges (tune.fuse_sweeps = %s)\n", r->opt.fuse_sweeps ? "2" : "auto");
  }
  if (r->res.blocks && r->res.replay)
    COOP_CHECK(sv->be->alloc(sv->be, &r->res.ckpt, (size_t)r->res.ckpt_bytes));
  if (r->opt.fuse_sweeps == 2 && (!r->pair || r->res.blocks) && !r->pair_steps && sv->comm->rank == 0)
    fprintf(stderr, "coopsolve: note: tune.fuse_sweeps = 2 applies to a box of a rank alone streamed from "
                    "memory (not held on the chip), and to 2D boxes with neighbours at grid.ghost >= 3 (2 with "
                    "tune.overlap = false); sweeping once a pass\n");
  return 0;
#else
  return COOP_ERROR(COOP_ERR_RUNTIME, "a device backend in a build without CUDA");
#endif
}

void coop_relax_opts_read(const coop_config *cfg, coop_relax_opts *o) {
  const char *fh = coop_config_str(cfg, "tune.fused_halo");
  const char *d = coop_config_str(cfg, "tune.resident_depth");
  const char *fs = coop_config_str(cfg, "tune.fuse_sweeps");
  o->overlap = coop_config_bool(cfg, "tune.overlap");
  o->fused_halo = strcmp(fh, "auto") == 0 ? -1 : strcmp(fh, "true") == 0;
  o->resident = coop_config_bool(cfg, "tune.resident");
  o->resident_depth = strcmp(d, "auto") ? atoi(d) : 0;
  o->fuse_sweeps = strcmp(fs, "auto") ? atoi(fs) : 0;
}

void coop_relax_report(const coop_relax *r, FILE *out) {
  const coop_relax_path *p = &r->path;
  if (p->halo_fused) fprintf(out, "  halo: stored into the neighbours' ghosts inside the persistent kernel (tune.fused_halo)\n");
  if (p->field_resident == 1)
    fprintf(out, "  field: held in registers across sweeps, band edges through L2 (tune.resident: %d group(s) "
                 "of threads a block, at most %d rows a thread; %d sweep(s) between grid barriers)\n",
            p->resident_groups, p->resident_rows, p->resident_depth);
  if (p->fused_sweeps == 2)
    fprintf(out, "  field: two sweeps a pass, the second on the chip one %s behind the first (tune.fuse_sweeps)\n",
            r->sv->s->grid.ndim == 3 ? "plane" : "row");
  if (p->field_resident == 2)
    fprintf(out, "  field: held in shared memory across sweeps, band edges through L2 (tune.resident: at most "
                 "%d rows a block; a residual check %s)\n", p->resident_rows,
            p->resident_save == 1 ? "keeps the measured field aside"
                                  : "updates as it measures; a stop re-runs the sweeps since a checkpoint in memory");
}

void coop_relax_attrs(const coop_relax *r, coop_io_result *res) {
  res->halo_fused = r->path.halo_fused;
  res->resident = r->path.field_resident;
}

void coop_relax_report_cb(const coop_solve *sv, const void *data, FILE *out) {
  (void)sv;
  const coop_relax *r = data ? *(coop_relax *const *)data : NULL;
  if (r) coop_relax_report(r, out); /* NULL: a heat run without the driver (implicit) */
}

void coop_relax_attrs_cb(const coop_solve *sv, const void *data, coop_io_result *res) {
  (void)sv;
  const coop_relax *r = data ? *(coop_relax *const *)data : NULL;
  if (r) coop_relax_attrs(r, res);
}

int coop_relax_create(coop_solve *sv, double c, coop_relax **out) {
  coop_relax *r = calloc(1, sizeof *r);
  *out = r;
  if (!r) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (sv->s->grid.g[0] > COOP_MAX_SWEEPS_PER_EXCHANGE)
    return COOP_ERROR(COOP_ERR_RUNTIME, "ghost width %lld above %d", (long long)sv->s->grid.g[0],
                      COOP_MAX_SWEEPS_PER_EXCHANGE);
  r->sv = sv;
  r->c = c;
  coop_relax_opts_read(sv->cfg, &r->opt);
  r->g = (int)sv->s->grid.g[0];
  r->alone = !coop_halo_active(sv->halo);
  /* the exchange beside the interior wherever there is a side stream to run it */
  r->overlap = !r->alone && sv->be->side != NULL && r->opt.overlap;
  r->ph_sweep = coop_solve_phase(sv, "sweep");
  r->ph_halo = coop_solve_phase(sv, "halo");
  r->ph_check = coop_solve_phase(sv, "check");
  r->mode = pick_mode(r);
  COOP_CHECK(setup_device(r));
  sv->mode = mode_name(r->mode);
  return 0;
}

void coop_relax_destroy(coop_relax *r) {
  if (!r) return;
#if COOP_HAVE_CUDA
  for (int i = 0; i < GRAPH_CACHE; i++) coop_cuda_graph_destroy(r->graphs[i].exec);
  if (r->peers_open) coop_relax_peers_close(r->sv, &r->peers);
  if (r->res.ckpt) r->sv->be->release(r->sv->be, r->res.ckpt);
#endif
  free(r);
}

int coop_relax_begin(coop_relax *r, double *start) {
  coop_solve *sv = r->sv;
  sv->ctl.hist_len = 0;
  sv->barriers = r->mode == MODE_GRID ? 1 : 0;
  COOP_MPI(MPI_Barrier(sv->comm->world)); /* time the solve from a common start */
  *start = MPI_Wtime();
  return 0;
}

int coop_relax_end(coop_relax *r, double start) {
  coop_solve *sv = r->sv;
  COOP_CHECK(sv->be->sync(sv->be));
  sv->t_solve = MPI_Wtime() - start;
  sv->steps = r->steps;
  /* several sweeps share a barrier: the register-resident kernel's depth, or two sweeps a pass */
  if (r->path.field_resident == 1 && r->path.resident_depth > 1) sv->barrier_its = r->path.resident_depth;
  else if (r->path.fused_sweeps == 2) sv->barrier_its = 2;
  return 0;
}

int coop_relax_can_solve(const coop_relax *r) {
  return r->mode == MODE_GRID && (r->alone || r->peers_on) && r->solve_blocks > 0;
}

static void swap_fields(coop_solve *sv) {
  void *t = sv->u;
  sv->u = sv->unew;
  sv->unew = t;
}

/* One step over region reg from sv->u into sv->unew (no swap). */
static int step(coop_relax *r, const coop_region *reg, double *norm) {
  coop_solve *sv = r->sv;
  return coop_stencil_relax(sv->be, sv->s, reg, r->c, sv->u, sv->unew, sv->f, norm, r->target);
}

#if COOP_HAVE_CUDA
/* The graph of `len` steps whose first runs over regions[0] (overlap ext),
 * starting from sv->u: from the cache, or captured now. */
static int graph_for(coop_relax *r, const coop_region *regions, int k, int64_t len, int64_t ext,
                     void **exec) {
  coop_solve *sv = r->sv;
  for (int i = 0; i < GRAPH_CACHE; i++) {
    const graph_entry *e = &r->graphs[i];
    if (e->exec && e->len == len && e->first_ext == ext && e->u == sv->u) {
      *exec = e->exec;
      return 0;
    }
  }
  graph_entry *e = &r->graphs[r->next_graph];
  r->next_graph = (r->next_graph + 1) % GRAPH_CACHE;
  coop_cuda_graph_destroy(e->exec);
  memset(e, 0, sizeof *e);
  void *u = sv->u, *un = sv->unew;
  COOP_CHECK(coop_cuda_graph_begin(sv->be->stream));
  int rc = 0;
  for (int64_t i = 0; i < len && !rc; i++) {
    rc = coop_stencil_relax(sv->be, sv->s, &regions[i < k ? i : k - 1], r->c, u, un, sv->f, NULL,
                            r->target);
    void *t = u;
    u = un;
    un = t;
  }
  void *x = NULL;
  const int rc2 = coop_cuda_graph_end(sv->be->stream, &x); /* ends the capture whatever happened */
  COOP_CHECK(rc);
  COOP_CHECK(rc2);
  e->exec = x;
  e->len = len;
  e->first_ext = ext;
  e->u = sv->u;
  *exec = x;
  return 0;
}
#endif

/* m plain steps over regions[0..k) (the last one repeats), ext: the overlap
 * of the first. Leaves the newest field in sv->u. */
static int plain_steps(coop_relax *r, const coop_region *regions, int k, int64_t m, int64_t ext) {
  coop_solve *sv = r->sv;
  if (m <= 0) return 0;
#if COOP_HAVE_CUDA
  if (r->mode == MODE_GRID && m > 1) {
    COOP_CHECK(coop_relax_steps_grid_cuda(sv->s, regions, k, m, r->c, sv->u, sv->unew, sv->f,
                                          r->blocks, r->pair_steps, sv->be->stream));
    if ((r->pair_steps ? m / 2 + m % 2 : m) % 2) swap_fields(sv); /* the kernel's swaps */
    if (r->pair_steps) r->path.fused_sweeps = 2;
    r->steps += m;
    return 0;
  }
  if (r->mode == MODE_GRAPH && m > 1) {
    for (int64_t done = 0; done < m;) {
      const int64_t len = m - done < GRAPH_MAX_STEPS ? m - done : GRAPH_MAX_STEPS;
      void *exec = NULL;
      /* regions past the first k are all the last one (a rank alone: k = 1) */
      const int off = done < k ? (int)done : k - 1;
      COOP_CHECK(graph_for(r, regions + off, k - off, len, ext - off, &exec));
      COOP_CHECK(coop_cuda_graph_launch(exec, sv->be->stream));
      if (len % 2) swap_fields(sv);
      done += len;
    }
    r->steps += m;
    return 0;
  }
#else
  (void)ext;
#endif
  for (int64_t i = 0; i < m; i++) {
    COOP_CHECK(step(r, &regions[i < k ? i : k - 1], NULL));
    swap_fields(sv);
  }
  r->steps += m;
  return 0;
}

int coop_relax_exchange(coop_relax *r) {
  coop_solve *sv = r->sv;
  if (r->alone) return 0;
  double t0 = MPI_Wtime();
  COOP_CHECK(sv->be->sync(sv->be)); /* steps' time goes to sweeps, not halo */
  coop_solve_add_time(sv, r->ph_sweep, MPI_Wtime() - t0);
  t0 = MPI_Wtime();
  if (coop_fault(sv->comm, "halo")) return COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  COOP_CHECK(coop_halo_exchange(sv->halo, sv->u));
  coop_solve_add_time(sv, r->ph_halo, MPI_Wtime() - t0);
  return 0;
}

/* The last step of a block, over the owned box, with the exchange beside it:
 * the strips the neighbours need first, then the interior on the main stream
 * while the side stream sends the strips and fills the ghosts of the new
 * field. rnorm (NULL: none): the global residual norm of sv->u's field, the
 * parts' sums added on the host. The new field is in sv->unew (no swap). */
static int split_step(coop_relax *r, double *rnorm) {
  coop_solve *sv = r->sv;
  coop_backend *be = sv->be;
  coop_region parts[2 * 3 + 1];
  const int np = coop_halo_split(sv->halo, parts);
  double *acc = be->scratch + PARTS_SLOT;
  double t0 = MPI_Wtime();
  for (int i = 0; i <= np; i++) {
    if (i == np) COOP_CHECK(be->fork(be)); /* the exchange waits for the strips only */
    COOP_CHECK(coop_stencil_relax(be, sv->s, &parts[i], r->c, sv->u, sv->unew, sv->f,
                                  rnorm ? acc + i : NULL, r->target));
  }
  double t1 = MPI_Wtime();
  coop_solve_add_time(sv, r->ph_sweep, t1 - t0);
  if (coop_fault(sv->comm, "halo")) return COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  COOP_CHECK(coop_halo_exchange_side(sv->halo, sv->unew));
  t0 = MPI_Wtime();
  coop_solve_add_time(sv, r->ph_halo, t0 - t1);
  r->steps++;
  if (!rnorm) return 0;
  double *h = be->scratch_host + PARTS_SLOT, local = 0.0, global = 0.0;
  COOP_CHECK(be->download(be, h, acc, (size_t)(np + 1) * sizeof *h));
  for (int i = 0; i <= np; i++) local += h[i];
  t1 = MPI_Wtime();
  coop_solve_add_time(sv, r->ph_sweep, t1 - t0);
  COOP_MPI(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, sv->comm->world));
  coop_solve_add_time(sv, r->ph_check, MPI_Wtime() - t1);
  *rnorm = sqrt(global);
  return 0;
}

/* The norm step over reg: the global residual norm of sv->u's field. */
static int norm_step(coop_relax *r, const coop_region *reg, double *rnorm) {
  coop_solve *sv = r->sv;
  coop_backend *be = sv->be;
  double local = 0.0, global = 0.0;
  const double t0 = MPI_Wtime();
  if (be->device_memory) {
    double *acc = be->scratch + NORM_SLOT;
    COOP_CHECK(step(r, reg, acc));
    COOP_CHECK(be->download(be, &be->scratch_host[NORM_SLOT], acc, sizeof(double)));
    local = be->scratch_host[NORM_SLOT];
  } else {
    COOP_CHECK(step(r, reg, &local));
  }
  const double t1 = MPI_Wtime();
  coop_solve_add_time(sv, r->ph_sweep, t1 - t0);
  COOP_MPI(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, sv->comm->world));
  coop_solve_add_time(sv, r->ph_check, MPI_Wtime() - t1);
  r->steps++;
  *rnorm = sqrt(global);
  return 0;
}

int coop_relax_run(coop_relax *r, int64_t n, coop_relax_decide decide, void *ctx, int *stopped) {
  coop_solve *sv = r->sv;
  *stopped = 0;
  for (int64_t done = 0; done < n;) {
    /* a block of k steps, then the exchange; a rank alone has no blocks */
    const int64_t left = n - done;
    const int k = (int)(r->alone ? 1 : left < r->g ? left : r->g);
    const int64_t m = r->alone ? left : k;
    coop_region regions[COOP_MAX_SWEEPS_PER_EXCHANGE];
    for (int s = 0; s < k; s++) regions[s] = coop_halo_sweep_region(sv->halo, r->alone ? 0 : k - 1 - s);
    int first = 0;
    if (done == 0 && decide) {
      double rn = 0.0;
      int stop = 0;
      if (r->overlap && m == 1) { /* the norm step ends the block: split it */
        COOP_CHECK(split_step(r, &rn));
        COOP_CHECK(decide(ctx, rn, &stop));
        if (stop) { /* the exchange filled the dropped field's ghosts: harmless */
          *stopped = 1;
          return 0;
        }
        swap_fields(sv);
        done += m;
        continue;
      }
      COOP_CHECK(norm_step(r, &regions[0], &rn));
      COOP_CHECK(decide(ctx, rn, &stop));
      if (stop) {
        *stopped = 1;
        return 0;
      }
      swap_fields(sv);
      first = 1;
    }
    const double t0 = MPI_Wtime();
    const int skip = first < k ? first : k - 1;
    const int64_t last = r->overlap && m - first >= 1; /* the block's last step split off */
    COOP_CHECK(plain_steps(r, regions + skip, k - skip, m - first - last, r->alone ? 0 : k - 1 - first));
    coop_solve_add_time(sv, r->ph_sweep, MPI_Wtime() - t0);
    if (last) {
      COOP_CHECK(split_step(r, NULL));
      swap_fields(sv);
    } else {
      COOP_CHECK(coop_relax_exchange(r));
    }
    done += m;
  }
  return 0;
}

#if COOP_HAVE_CUDA
static int fetch_solve(coop_relax *r, coop_solve_ctl *ctl, const coop_relax_solve_state *st,
                       const long long *hi, const double *hr, long long cap) {
  coop_backend *be = r->sv->be;
  coop_relax_solve_state h;
  COOP_CHECK(be->download(be, &h, st, sizeof h));
  const long long n = h.hist_len < cap ? h.hist_len : cap;
  long long *tmp = malloc((size_t)n * sizeof *tmp + 1);
  if (!tmp) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  int rc = be->download(be, tmp, hi, (size_t)n * sizeof *tmp);
  for (long long i = 0; i < n; i++) ctl->hist_iter[i] = tmp[i];
  free(tmp);
  COOP_CHECK(rc);
  COOP_CHECK(be->download(be, ctl->hist_res, hr, (size_t)n * sizeof(double)));
  ctl->hist_len = n;
  ctl->iterations = h.iterations;
  ctl->r0 = h.r0;
  ctl->rnorm = h.rnorm;
  ctl->reason = h.reason;
  r->flip = h.flip;
  r->steps += h.steps;
  return 0;
}
#endif

#if COOP_HAVE_CUDA
/* At the first multi-rank solve, the neighbours' fields and every rank's
 * mailboxes mapped (here, not at setup: heat and checkpointed runs never
 * take that kernel); *ok = 0 on every rank when some rank could not map
 * them, then the solve exchanges halos from the host instead. */
static int peers_open(coop_relax *r, int *ok) {
  coop_solve *sv = r->sv;
  char why[2 * COOP_RELAX_NOTE_LEN];
  *ok = 1;
  if (r->peers_open) return 0;
  COOP_CHECK(coop_relax_peers_open(sv, &r->peers, ok, why, sizeof why));
  r->peers_open = *ok;
  if (*ok) return 0;
  r->peers_on = 0;
  if (sv->comm->rank == 0) fprintf(stderr, "coopsolve: note: halos between kernels (tune.fused_halo: %s)\n", why);
  return 0;
}

/* Before the multi-rank solve: mailboxes zeroed, the ghosts of u filled,
 * then a barrier, so no rank's kernel writes into another's memory before
 * that one is ready. */
static int peers_start(coop_relax *r) {
  coop_solve *sv = r->sv;
  COOP_CHECK(coop_relax_peers_ready(sv, &r->peers));
  COOP_CHECK(coop_relax_exchange(r));
  COOP_MPI(MPI_Barrier(sv->comm->world));
  return 0;
}

/* A wait for another rank that gave up: the run ends (exit 1), naming it. */
static int peers_fault(coop_relax *r) {
  long long f[3];
  COOP_CHECK(coop_relax_peers_fault_cuda(&r->peers.p, f));
  if (!f[0]) return 0;
  return COOP_ERROR(COOP_ERR_RUNTIME, "rank %d: the GPU waited more than %g s for rank %lld at step %lld "
                    "of the multi-rank solve (tune.fused_halo = false exchanges halos from the host)",
                    r->sv->comm->rank, r->peers.p.timeout_s, f[1], f[2]);
}

#endif

int coop_relax_solve_ready(coop_relax *r, int *ok) {
  *ok = coop_relax_can_solve(r);
#if COOP_HAVE_CUDA
  if (*ok && !r->alone) COOP_CHECK(peers_open(r, ok));
#endif
  return 0;
}

int coop_relax_solve(coop_relax *r, coop_solve_ctl *ctl) {
#if COOP_HAVE_CUDA
  coop_solve *sv = r->sv;
  coop_backend *be = sv->be;
  const long long cap = ctl->hist_cap;
  coop_relax_solve_state *st = NULL;
  long long *hi = NULL;
  double *hr = NULL;
  int rc;
  const double t0 = MPI_Wtime();
  if (!r->alone) COOP_CHECK(peers_start(r));
  if (!r->alone && coop_fault(sv->comm, "peer_stall")) return coop_relax_peers_stall(&r->peers, sv->comm->rank);
  if (!(rc = be->alloc(be, (void **)&st, sizeof *st)) && !(rc = be->alloc(be, (void **)&hi, cap * sizeof *hi)) &&
      !(rc = be->alloc(be, (void **)&hr, cap * sizeof *hr))) {
    if (r->alone && r->res.blocks)
      rc = coop_relax_solve_resident_cuda(sv->s, r->c, sv->u, sv->unew, sv->f, ctl, st, hi, hr, cap,
                                          &r->res, be->stream);
    else if (r->alone)
      rc = coop_relax_solve_grid_cuda(sv->s, r->c, sv->u, sv->unew, sv->f, ctl, st, hi, hr, cap,
                                      r->solve_blocks, r->pair, be->stream);
    else
      rc = coop_relax_solve_peers_cuda(sv->s, r->c, sv->u, sv->unew, sv->f, ctl, st, hi, hr, cap,
                                       r->solve_blocks, be->stream, &r->peers.p);
    if (!rc) rc = fetch_solve(r, ctl, st, hi, hr, cap);
    if (!rc && !r->alone) rc = peers_fault(r);
    if (!rc && !r->alone) {
      sv->grid_blocks = r->solve_blocks;
      r->path.halo_fused = 1;
      r->path.fused_sweeps = 1;
    }
    if (!rc && r->alone && !r->res.blocks) r->path.fused_sweeps = r->pair ? 2 : 1;
    if (!rc && r->alone && r->res.blocks) {
      sv->grid_blocks = r->res.blocks;
      r->path.field_resident = r->res.shared ? 2 : 1;
      r->path.resident_rows = r->res.rows;
      r->path.resident_groups = r->res.groups;
      r->path.resident_save = r->res.save ? 1 : r->res.replay ? 2 : 0;
      r->path.resident_depth = r->res.shared ? 1 : r->res.depth;
    }
  }
  be->release(be, st);
  be->release(be, hi);
  be->release(be, hr);
  COOP_CHECK(rc);
  if ((ctl->iterations + r->flip) % 2) swap_fields(sv);
  coop_solve_add_time(sv, r->ph_sweep, MPI_Wtime() - t0);
  return 0;
#else
  (void)r;
  (void)ctl;
  return COOP_ERROR(COOP_ERR_RUNTIME, "a device backend in a build without CUDA");
#endif
}
