/* CUDA side of the relaxation driver (solvers/relax/relax.c): the persistent
 * cooperative kernels (solvers/relax/relax_cuda.cu) and CUDA graphs of per-step
 * kernels. Pointers are device memory; stream is a cudaStream_t. */
#ifndef COOP_RELAX_CUDA_H
#define COOP_RELAX_CUDA_H

#include "kernels/stencil.h"
#include "solvers/stop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sweeps between grid barriers of the register-resident solve, at most, and
 * when tune.resident_depth is auto (measured: see bench/results/). */
#define COOP_RELAX_MAX_DEPTH 4
#define COOP_RELAX_AUTO_DEPTH 4

/* Device-side results of a whole Jacobi solve in one launch. */
typedef struct {
  double acc[3 * COOP_RELAX_MAX_DEPTH]; /* residual sums of consecutive checks (or rounds of them), used in turn */
  double r0, rnorm;
  long long iterations, steps, hist_len;
  int reason;
  int flip; /* 1: the answer is in the field other than the iterations' parity names (two sweeps a pass) */
  unsigned long long tasks; /* tickets of the task queue (3D blocks, 2D warps), never reset within a solve */
} coop_relax_solve_state;

/* The whole solve over ranks of one node, each on its own GPU (CUDA IPC):
 * one face with a neighbour, whose fields this rank stores its new boundary
 * values into. */
typedef struct {
  void *buf[2];     /* the neighbour's fields, mapped here: [p] pairs with this rank's field p */
  long long sy, sz; /* the neighbour's storage strides */
  int axis, side;   /* the face: axis 0..2; side 0 lo, 1 hi */
  int gc;           /* the neighbour's ghost layer along axis that this face fills (storage) */
} coop_relax_peer_face;

#define COOP_RELAX_MAX_RANKS 16
#define COOP_RELAX_PEER_SYNC_BYTES 512 /* the GPU's barrier: four 128-byte lines */

typedef struct {
  int nf;
  coop_relax_peer_face face[6];
  int parity;                      /* 1 when this solve's u is field 1 of the pairs */
  void *box[COOP_RELAX_MAX_RANKS]; /* rank r's mailboxes (nranks x 128 bytes), mapped here */
  int nranks, me;
  void *sync;                      /* COOP_RELAX_PEER_SYNC_BYTES of this GPU's memory */
  double timeout_s;                /* a wait for another rank longer than this ends the run */
} coop_relax_peers;

/* Resident blocks per SM of the persistent kernels (solve 0: n steps; 1: the
 * whole Jacobi solve of a rank alone; 2: of ranks on one node; 3: of a 2D
 * box of a rank alone, two sweeps a pass; 4: n steps of a 2D box, two a
 * pass) for s, f present or not. */
int coop_relax_occupancy_cuda(const coop_stencil *s, int has_f, int solve, int *per_sm);

/* Blocks of the persistent kernels for s when the user did not set
 * tune.blocks: `most` (all resident), or fewer on a small box, so that each
 * thread marches at least a few rows (never fewer than one per SM). */
int coop_relax_fit_blocks_cuda(const coop_stencil *s, int most, int sms);

/* Threads per block of every relaxation kernel. */
int coop_relax_threads_cuda(void);
/* Blocks a SM the relaxation kernels of an ndim box are built for (their
 * launch bounds): every mode plans its tasks for that resident grid. */
int coop_relax_blocks_per_sm_cuda(int ndim);

/* n steps in one cooperative launch of `blocks` blocks, grid.sync() between
 * steps; step i runs over regions[min(i, k - 1)], k <= COOP_MAX_SWEEPS_PER_EXCHANGE
 * (the regions travel as a kernel parameter). u and unew swap inside, once
 * a step; pair (2D, n <= k, each region one layer less than the one before
 * at faces with neighbours): two steps a pass, u and unew swapping once a
 * pass (n / 2 + n % 2 times). */
int coop_relax_steps_grid_cuda(const coop_stencil *s, const coop_region *regions, int k,
                               long long n, double c, void *u, void *unew, const void *f,
                               int blocks, int pair, void *stream);

/* The whole Jacobi solve (a rank without neighbours) in one launch: a norm
 * step at iterations 0, check_every, 2 check_every, ... and max_iter, the stop
 * test after each on the device; the newest field is in u when
 * state->iterations + state->flip is even, else in unew. hist_* of hist_cap
 * entries. pair: two sweeps a pass over the field (2D and 3D). */
int coop_relax_solve_grid_cuda(const coop_stencil *s, double c, void *u, void *unew,
                               const void *f, const coop_solve_ctl *ctl,
                               coop_relax_solve_state *state, long long *hist_iter,
                               double *hist_res, long long hist_cap, int blocks, int pair, void *stream);

/* The whole solve of a rank alone on a 2D box that stays on the chip
 * (solvers/relax/relax_resident.cu): the field in registers across sweeps, one
 * band per block (one block per SM) split among `groups` groups of threads of
 * at most `rows` rows each, `depth` sweeps between grid barriers (each block
 * recomputing depth - 1 rows of its neighbours' bands); or, for a box too
 * large for that, in shared memory (solvers/relax/relax_smem.cu, one group, depth 1). */
typedef struct {
  int blocks, threads, rows, smem; /* smem: dynamic shared bytes */
  int groups;                      /* thread groups per block, rows split among them */
  int f_smem;                      /* f held in shared memory */
  int shared;                      /* 1: the field in shared memory (solvers/relax/relax_smem.cu), 0: registers */
  int save;                        /* shared: a check keeps the measured field aside (else two passes or replay) */
  int replay;                      /* shared: close checks update too; a stop re-runs from a checkpoint */
  long long ckpt_bytes;            /* replay: the checkpoint's size in device memory */
  void *ckpt;                      /* replay: the checkpoint, allocated by the caller (ckpt_bytes) */
  int depth;                       /* registers: sweeps between grid barriers (1..COOP_RELAX_MAX_DEPTH) */
  int nsave;                       /* registers: norm steps' fields a round keeps aside */
} coop_relax_resident;

/* *p for s on a GPU of sms SMs, the field in registers where it fits, else
 * in shared memory (p->shared); p->blocks == 0 when the box does not fit.
 * depth: most sweeps between grid barriers (0: COOP_RELAX_AUTO_DEPTH). */
int coop_relax_resident_plan_cuda(const coop_stencil *s, int has_f, long long check_every, int depth,
                                  int sms, coop_relax_resident *p);
/* The shared-memory plan alone, and its solve (solvers/relax/relax_smem.cu). */
int coop_relax_smem_plan_cuda(const coop_stencil *s, int has_f, int sms, coop_relax_resident *p);
int coop_relax_solve_smem_cuda(const coop_stencil *s, double c, void *u, void *unew, const void *f,
                               const coop_solve_ctl *ctl, coop_relax_solve_state *state,
                               long long *hist_iter, double *hist_res, long long hist_cap,
                               const coop_relax_resident *p, void *stream);
/* Same contract as coop_relax_solve_grid_cuda, on plan p. */
int coop_relax_solve_resident_cuda(const coop_stencil *s, double c, void *u, void *unew,
                                   const void *f, const coop_solve_ctl *ctl,
                                   coop_relax_solve_state *state, long long *hist_iter,
                                   double *hist_res, long long hist_cap,
                                   const coop_relax_resident *p, void *stream);

/* The whole solve of one of several ranks, each on its own GPU of one node:
 * halos stored into the neighbours' ghosts and the residual summed through
 * mailboxes in peer memory (solvers/relax/relax_cuda.cu). Every rank launches it
 * with the same ctl; they stop together. A wait for another rank longer than
 * peers->timeout_s leaves the kernel; then coop_relax_peers_fault_cuda gives
 * out[0] = 1, the rank waited for and the step. */
int coop_relax_solve_peers_cuda(const coop_stencil *s, double c, void *u, void *unew,
                                const void *f, const coop_solve_ctl *ctl,
                                coop_relax_solve_state *state, long long *hist_iter,
                                double *hist_res, long long hist_cap, int blocks, void *stream,
                                const coop_relax_peers *peers);
int coop_relax_peers_fault_cuda(const coop_relax_peers *peers, long long out[3]);

/* CUDA graphs: capture the work queued on stream between begin and end into
 * *exec; launch replays it on stream. */
int coop_cuda_graph_begin(void *stream);
int coop_cuda_graph_end(void *stream, void **exec);
int coop_cuda_graph_launch(void *exec, void *stream);
void coop_cuda_graph_destroy(void *exec); /* accepts NULL */

#ifdef __cplusplus
}
#endif
#endif
