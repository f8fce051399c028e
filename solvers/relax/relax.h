/* The relaxation driver shared by the grid-form solvers (Jacobi, heat): steps
 *     u <- u + c (f - A u)
 * on the stored fields (Jacobi: c = 1/diag; explicit heat: c = dt alpha), in
 * the mode the backend and run.sync give: host; launch (one kernel per step);
 * graph (the per-step kernels between two host decisions replayed from a CUDA
 * graph); grid (persistent cooperative kernels: a block of g steps per launch,
 * and for a rank without neighbours any number of steps, or the whole Jacobi
 * solve with its stop test, in one launch). Halos are exchanged every g steps
 * (g = ghost width; deep halos recompute a shrinking overlap in between).
 *
 * The residual ||f - A u|| is not a separate pass: the step that starts from u
 * computes it while it reads u (a "norm step"). The step's own output goes to
 * sv->unew and is kept only when the caller goes on, so a solver that stops
 * at that check returns the u whose residual it reports. */
#ifndef COOP_RELAX_H
#define COOP_RELAX_H

#include <stdint.h>
#include <stdio.h>

#include "solvers/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct coop_relax coop_relax;

/* The family's tuning keys (tune.*), read from sv->cfg by coop_relax_create. */
typedef struct {
  int overlap;        /* tune.overlap: the exchange beside the interior */
  int fused_halo;     /* tune.fused_halo: 1, 0, or -1 for auto */
  int resident;       /* tune.resident: a small 2D box held on the chip across sweeps */
  int resident_depth; /* tune.resident_depth: most sweeps between grid barriers (0: auto) */
  int fuse_sweeps;    /* tune.fuse_sweeps: sweeps a pass of the streamed whole solve (1, 2; 0: auto) */
} coop_relax_opts;

/* The kernel path a solve took (for the summary and the output's attributes). */
typedef struct {
  int halo_fused;      /* 1: the halos went by stores inside the persistent kernel */
  int field_resident;  /* the field stayed on the chip: 1 in registers, 2 in shared memory */
  int resident_rows, resident_groups; /* its most rows a thread (a block), thread groups per block */
  int resident_save;   /* shared memory: a check kept the measured field aside (1), re-ran from a checkpoint on a stop (2), or took two passes (0) */
  int resident_depth;  /* registers: sweeps between grid barriers */
  int fused_sweeps;    /* 2: two sweeps a pass */
} coop_relax_path;

/* tune.* of cfg (validated) into o. */
void coop_relax_opts_read(const coop_config *cfg, coop_relax_opts *o);

/* Called after a norm step with the global residual norm of the step's input
 * (the same value on every rank); sv->u is still that input, ghosts current.
 * Set *stop to 1 to end the run there (the step's output is dropped). */
typedef int (*coop_relax_decide)(void *ctx, double rnorm, int *stop);

/* Plan the steps of sv (sv->s, sv->u, sv->unew, sv->f, sv->halo, sv->be,
 * sv->sync, sv->blocks; sv->f NULL: a zero source, never read). Picks the
 * mode (sets sv->mode: host, launch, graph or grid); run.sync = auto picks by
 * the measured rules of relax.c. Collective. */
int coop_relax_create(coop_solve *sv, double c, coop_relax **out);
void coop_relax_destroy(coop_relax *r); /* accepts NULL */

/* n >= 1 steps from sv->u (ghosts current). With decide, the first step is a
 * norm step and decide runs after it; *stopped = 1 when decide stopped the run
 * (sv->u is then the input, unchanged), else 0 and all n steps are done. On
 * return sv->u holds the newest field with current ghosts (the buffers swap as
 * needed). Collective. */
int coop_relax_run(coop_relax *r, int64_t n, coop_relax_decide decide, void *ctx, int *stopped);

/* The summary's lines on the path that ran (rank 0), and the output's
 * attributes halo_fused and resident. */
void coop_relax_report(const coop_relax *r, FILE *out);
void coop_relax_attrs(const coop_relax *r, coop_io_result *res);
/* The same as a solver type's report and attrs callbacks, for a method
 * whose data struct starts with its coop_relax pointer (Jacobi, heat). */
void coop_relax_report_cb(const coop_solve *sv, const void *data, FILE *out);
void coop_relax_attrs_cb(const coop_solve *sv, const void *data, coop_io_result *res);

/* Fill the ghosts of sv->u from the neighbours (after a restart). Collective. */
int coop_relax_exchange(coop_relax *r);

/* 1 when the whole Jacobi solve can run on the device in one launch (grid
 * mode, a rank without neighbours); coop_relax_solve then runs it: sweeps,
 * norm steps every ctl->check_every, history and stop test on the GPU. */
int coop_relax_can_solve(const coop_relax *r);
/* Collective: *ok = 1 when coop_relax_solve may run now; with neighbours it
 * maps their memory at the first call, and *ok = 0 on every rank when some
 * rank could not (the caller then steps with host exchanges). */
int coop_relax_solve_ready(coop_relax *r, int *ok);
int coop_relax_solve(coop_relax *r, coop_solve_ctl *ctl);

/* The frame of a solve on the driver: begin clears the history, sets the
 * barriers per step from the mode and starts the ranks together (*start:
 * the common start); end waits for the device and sets sv->t_solve and
 * sv->steps. Collective. */
int coop_relax_begin(coop_relax *r, double *start);
int coop_relax_end(coop_relax *r, double start);

#ifdef __cplusplus
}
#endif
#endif
