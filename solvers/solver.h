/* The solver interface. A solver type has a lifecycle (setup allocates its own
 * work vectors, solve, view, destroy) and runs on a prepared problem: the
 * Krylov form (operator A, right-hand side b, initial guess x on the backend)
 * or, for Jacobi on a grid, the stored fields with ghost layers and their halo
 * plan. The stop test, monitor and history are shared services of this layer
 * (solvers/stop.h, solvers/monitor.c); a method never prints or writes files
 * itself. Solver types are found by name in the registry. */
#ifndef COOP_SOLVER_H
#define COOP_SOLVER_H

#include <stdint.h>
#include <stdio.h>

#include "core/comm.h"
#include "io/config.h"
#include "io/io.h"
#include "kernels/backend.h"
#include "kernels/halo.h"
#include "kernels/op.h"
#include "kernels/stencil.h"
#include "kernels/vec.h"
#include "solvers/stop.h"

#define COOP_MAX_PHASES 8
#define COOP_MONITOR_AUTO (-1)

struct coop_ckpt; /* solvers/checkpoint.h */

/* The generic core of a solve: what every family reads (communicator,
 * backend, the problem in Krylov or grid form, the stop control and the
 * checkpoints) and the results every family reports. A family reads its own
 * keys (solver.*, tune.*) from cfg at setup and keeps its options and its
 * kernel-path results in its data; its callbacks print and record them. */
typedef struct {
  /* set by the caller */
  const coop_comm *comm;
  coop_backend *be;
  const coop_config *cfg; /* the run's options, validated */
  const char *sync;      /* run.sync: auto, grid, launch or graph (ignored on the host) */
  int blocks;            /* tune.blocks: persistent grid size, 0 = all that fit */
  int64_t monitor_every; /* iterations between monitor lines on rank 0; 0: none; COOP_MONITOR_AUTO: about 20 */
  int monitor_res, monitor_it; /* auto: the twentieths of the way to rtol and to max_iter last shown */
  int monitor_factor;    /* 1: monitor lines show each check's residual over the last one's (mg) */
  int64_t global_n;      /* unknowns on all ranks, for throughput */
  coop_solve_ctl ctl;    /* stopping rule in, results and history out */
  struct coop_ckpt *ckpt; /* checkpoints and restart (solvers/checkpoint.h); NULL: none */
  /* Krylov form */
  coop_op *A;
  coop_vec *b, *x; /* x: the initial guess in, the solution out */
  /* grid problems, both forms: the decomposition of the grid (NULL otherwise) */
  const coop_decomp *dec;
  /* grid form */
  coop_halo *halo;
  const coop_stencil *s;
  void *u, *unew; /* backend memory; both hold the boundary values */
  const void *f;  /* NULL: a zero right-hand side (never read) */
  /* time stepping: every snapshot_every steps (0: none) the solver calls
   * snapshot(ctx, u, step, time) with the field in backend memory, ghosts
   * current; the driver writes it (solvers never write files) */
  int64_t snapshot_every;
  int (*snapshot)(void *ctx, const void *u, int64_t step, double time);
  void *snapshot_ctx;
  /* results */
  const char *mode;      /* host, launch, graph or grid: how it ran */
  double dt;             /* the time step a time-stepping method took, else 0 */
  int barriers;          /* grid barriers per iteration in grid mode, else 0 */
  int barrier_its;       /* iterations per barrier where several share one (else 0 or 1) */
  double bytes_per_iter; /* this rank's bytes moved per iteration, by the method's count */
  double true_rnorm;     /* ||b - A x|| after the solve (Krylov form), else -1 */
  double t_solve;        /* seconds, this rank */
  int64_t steps;         /* grid-form steps executed (norm steps whose output was dropped too) */
  int grid_blocks;       /* blocks of the persistent kernel that ran (0: none) */
  int nphases;
  const char *phase_name[COOP_MAX_PHASES];
  double phase_time[COOP_MAX_PHASES];
} coop_solve;

typedef struct {
  const char *name;
  const char *help;
  int grid_form; /* 1: runs on the grid form (Jacobi), 0: on the Krylov form */
  int (*setup)(coop_solve *sv, void **data);
  int (*solve)(coop_solve *sv, void *data);
  void (*view)(const coop_solve *sv, const void *data, FILE *out); /* rank 0 only */
  void (*destroy)(coop_solve *sv, void *data);                    /* accepts NULL data */
  /* optional, after a solve: the summary's lines on the kernel path that ran
   * (rank 0 only), and the output attributes it sets (r->halo_fused, r->resident) */
  void (*report)(const coop_solve *sv, const void *data, FILE *out);
  void (*attrs)(const coop_solve *sv, const void *data, coop_io_result *r);
} coop_solver_type;

/* NULL when no solver has this name. */
const coop_solver_type *coop_solver_lookup(const char *name);
/* The registered names, "|"-separated (drives the key table's choices). */
const char *coop_solver_names(void);

/* ---- shared services (solvers/monitor.c) ---- */
/* Record residual check it (history, and a monitor line when due); elapsed < 0:
 * replayed after a whole solve in one launch, when no time is known. */
void coop_solve_record(coop_solve *sv, int64_t it, double rn, double elapsed);
/* Monitor lines for a history filled on the device (whole solve in one launch). */
void coop_solve_replay(coop_solve *sv);
/* Index of the timing phase with this name (added on first use). */
int coop_solve_phase(coop_solve *sv, const char *name);
void coop_solve_add_time(coop_solve *sv, int phase, double seconds);

/* ---- the methods ---- */
extern const coop_solver_type coop_solver_jacobi, coop_solver_cg, coop_solver_pipecg,
    coop_solver_bicgstab, coop_solver_heat, coop_solver_mg;

/* heat's time step: want (solver.dt; 0: 0.9 of the limit) checked against the
 * forward-Euler stability limit *dt_max of s with diffusivity alpha; an input
 * error naming the largest stable dt when above it (solvers/relax/heat.c). */
int coop_heat_time_step(const coop_stencil *s, double alpha, double want, double *dt, double *dt_max);

#endif
