/* Batches: many small independent systems A_i x_i = b_i in one run, each
 * solved on its own with its own stop test (Jacobi, or CG with no or a
 * Jacobi preconditioner), or as many heat equations u_t = alpha (b_i - A_i u)
 * stepped by forward Euler, each with its own time step and step count. All problems of a rank are stored as one
 * concatenated CSR matrix whose blocks are the problems: problem i owns rows
 * [row_off[i], row_off[i+1]) of x and b, and its entries name columns
 * relative to its own first row, so a problem's arrays are usable alone
 * (kernels/csr_batch.h: coop_batch).
 *
 * Host reference in solvers/batch/batch_host.c, CUDA in solvers/batch/batch_cuda.cu (the
 * synchronisation modes and schedulers of the design's ladder), the dispatch
 * in solvers/batch/batch.c; their entry points in solvers/batch/batch_backend.h. */
#ifndef COOP_BATCH_H
#define COOP_BATCH_H

#include <stdint.h>

#include "kernels/backend.h"
#include "kernels/csr_batch.h" /* coop_batch, its row bound and coop_batch_method */
#include "kernels/csr.h" /* the schedules: one set of values and names for batches and the CSR product */
#include "solvers/stop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The same rule for every problem of the batch. Jacobi checks its residual
 * every iteration (the norm is fused into the sweep); CG every iteration.
 * The mathematics every backend does, per problem (solvers/batch/batch_host.c is
 * the reference; it = iterations done, r0 = the first norm, stop =
 * coop_stop_test(rnorm, r0, it, max_iter, rtol, atol, dtol)):
 *   Jacobi: loop { r = b - A x and rnorm = ||r|| in one pass; stop? -> return
 *     x as is (rnorm is its residual); x += r / diag(A); it++ }
 *   CG (z = r with pc none, r / diag(A) with pc jacobi): r = b - A x, z,
 *     p = z, rz = (r, z), rnorm = ||r||; loop { stop?; pc jacobi and
 *     rz <= 0 -> DIVERGED_INDEFINITE_PC; q = A p, pq = (p, q); pq NaN ->
 *     DIVERGED_NAN, pq <= 0 -> DIVERGED_INDEFINITE_MAT; alpha = rz / pq;
 *     x += alpha p; r -= alpha q; z; rz' = (r, z); rnorm = ||r|| (the
 *     recurrence residual); p = z + (rz' / rz) p; rz = rz'; it++ }
 *   heat (Jacobi with 1/diag(A) replaced by c = dt[i] alpha, and no residual
 *     stop): loop { r = b - A x and rnorm = ||r|| in one pass; reason =
 *     coop_batch_heat_stop(rnorm, it, steps[i]) -> return x as is; x += c r;
 *     it++ }, so it ends at steps[i] with the final field's ||b - A x||.
 * Norms and dots sum the rows in order on the host. */
typedef struct {
  int method;  /* coop_batch_method */
  int pc;      /* CG: 0 none, 1 Jacobi (diagonal) */
  double rtol, atol, dtol;
  int64_t max_iter;
  /* The host solves no further problem once a signal is pending
   * (core/signal.h); those left have reason COOP_REASON_NONE, 0 iterations and
   * NaN norms, and x keeps their initial guesses. A GPU launch runs to its end. */
  int stop_on_signal;
  double alpha; /* heat: the diffusivity (c = dt[i] alpha, rounded once, on every backend) */
} coop_batch_ctl;

/* heat's stop after step it of steps: COMPLETED at the last (the grid heat
 * solver's reason), DIVERGED_NAN on a non-finite norm, else NONE. */
static inline COOP_HOST_DEVICE int coop_batch_heat_stop(double rnorm, int64_t it, int64_t steps) {
  if (!isfinite(rnorm)) return COOP_DIVERGED_NAN;
  return it >= steps ? COOP_COMPLETED : COOP_REASON_NONE;
}

/* Per problem, what came out. */
typedef struct {
  int64_t iterations;
  double r0, rnorm; /* 2-norms of b - A x: initial and final (the returned x's) */
  int reason;       /* coop_reason (solvers/stop.h) */
  double seconds;   /* time of this problem's solve alone (device clock on the GPU) */
} coop_batch_result;

/* How a GPU runs the batch (batch.sync and batch.schedule of a [batch] input). */
typedef enum {
  COOP_BSYNC_AUTO = 0,
  COOP_BSYNC_ROW,     /* a row of blocks (blockIdx.y) per problem, software barrier */
  COOP_BSYNC_CLUSTER, /* a thread-block cluster per problem, cluster.sync() */
  COOP_BSYNC_BLOCK,   /* one block per problem, __syncthreads() only */
  COOP_BSYNC_GRID,    /* every problem in one cooperative kernel, grid.sync() */
  COOP_BSYNC_LAUNCH,  /* kernels per step, each over every active problem */
  COOP_BSYNC_LAUNCH_EACH, /* kernels per problem and step (the naive baseline) */
  COOP_BSYNC_HOST     /* what ran on the host backend (problem after problem); never asked for */
} coop_batch_sync;

typedef enum {
  COOP_SCHED_AUTO = COOP_CSR_SCHED_AUTO,
  COOP_SCHED_CLC = COOP_CSR_SCHED_CLC,       /* cluster launch control (cc >= 10.0) */
  COOP_SCHED_ATOMIC = COOP_CSR_SCHED_ATOMIC, /* persistent groups taking problems from an atomic counter */
  COOP_SCHED_STATIC = COOP_CSR_SCHED_STATIC  /* problem i to group i mod groups */
} coop_batch_schedule;

typedef struct {
  int sync;         /* coop_batch_sync */
  int schedule;     /* coop_batch_schedule */
  int group_blocks; /* blocks per group for row and cluster; 0: chosen from the sizes */
  /* filled in by the solve: what ran */
  int sync_used, schedule_used, group_blocks_used, groups_used;
  int levels_used; /* row groups: levels of the split (1: none; solvers/batch/batch_levels.c) */
  int64_t barriers; /* group barriers passed, summed over groups (for the report) */
  /* seconds each block spent in its problems (device clock; 0 where not
   * measured: host, launch): the busiest block's and the mean over the blocks
   * that ran; busy_max / busy_mean is the load imbalance of the schedule */
  double busy_max, busy_mean;
  /* seconds from the first kernel of the solve to the end of the last (device
   * events; uploads, downloads and allocations left out; 0 on the host) */
  double kernel_time;
} coop_batch_run;

/* Solve every problem of bt on backend be: x holds the initial guesses in and
 * the solutions out (row_off[count] values, host memory), res[count] is
 * filled. The host backend solves problem after problem; the CUDA backend
 * uploads, runs as opt says, and downloads. Errors: COOP_ERR_* (core/error.h);
 * a mode the GPU cannot run (clc below cc 10.0) is COOP_ERR_INPUT. */
int coop_batch_solve(coop_backend *be, const coop_batch *bt, const coop_batch_ctl *ctl,
                     coop_batch_run *opt, double *x, coop_batch_result *res);

/* What backend be's GPU cannot run of opt, refused before a batch is built
 * with the words the solve would use: batch.schedule = clc below compute
 * capability 10.0 and batch.sync = cluster below 9.0 (COOP_ERR_INPUT), grid
 * without cooperative launches (COOP_ERR_RUNTIME). 0 on the host. */
int coop_batch_check_run(coop_backend *be, const coop_batch_run *opt);

/* ---- the order of the problems on a GPU, and split row groups ----
 *
 * Stealing schedules (atomic, clc) hand out the problems largest estimated
 * work first, so the last ones taken are the smallest; static keeps index
 * order (the baseline). A ragged batch (the largest problem's work at least
 * COOP_BATCH_RAGGED times the mean) run in row groups gets levels: groups of
 * top_blocks blocks take the largest problems together; a group out of them
 * splits into groups of size[1] blocks (its halves), which take the next
 * problems, and so on down to single blocks, which take the smallest with
 * __syncthreads() alone. A problem's level is the largest group that keeps
 * at least COOP_BATCH_GROUP_ROWS rows a block and that it needs to finish
 * within 1 / COOP_BATCH_SPLIT_SHARE of the batch's even share of the time; one problem alone
 * is never the long pole of the run. */
#define COOP_BATCH_MAX_LEVELS 12
#define COOP_BATCH_RAGGED 4.0
/* rules of the levels, overridable at build time for the benchmark's variants */
#ifndef COOP_BATCH_GROUP_ROWS
#define COOP_BATCH_GROUP_ROWS 1024
#endif
#ifndef COOP_BATCH_SPLIT_SHARE /* a problem may take 1/SHARE of the batch's even time */
#define COOP_BATCH_SPLIT_SHARE 4.0
#endif

typedef struct {
  int levels;     /* 1: no split */
  int top_blocks; /* blocks of a level-0 group */
  int size[COOP_BATCH_MAX_LEVELS];            /* blocks of a group at each level; each divides the last */
  int64_t start[COOP_BATCH_MAX_LEVELS + 1];   /* level l's problems: order[start[l] .. start[l+1]) */
} coop_batch_levels;

/* Estimated work of problem p: entries x expected iterations (Jacobi ~ rows,
 * CG ~ sqrt(rows), as for a 2D-like operator, at most max_iter; heat: its
 * steps). A guess from the matrix alone; only the order and split use it. */
double coop_batch_work(const coop_batch *bt, const coop_batch_ctl *ctl, int64_t p);

/* 1 when the largest of count works is at least COOP_BATCH_RAGGED x the mean. */
int coop_batch_is_ragged(const double *work, int64_t count);

/* order[count] (caller's): the problems in the order items are handed out;
 * lv: the levels. split = 0: one level of top blocks. top = 0 with split:
 * chosen (a power of two, at most resident). largest_first: by work, largest
 * first, within each level; else index order. */
int coop_batch_plan_levels(const coop_batch *bt, const coop_batch_ctl *ctl, int64_t resident, int top,
                           int split, int largest_first, int64_t *order, coop_batch_levels *lv);

/* Names of the enums, for keys and reports ("row", "atomic", ...); the name
 * of a value outside the enum is "unknown". */
const char *coop_batch_sync_name(int sync);
const char *coop_batch_schedule_name(int schedule);

#ifdef __cplusplus
}
#endif
#endif
