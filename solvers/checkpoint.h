/* Checkpoints of a running solve, a shared service of the solvers (like the
 * monitor): a method names its loop-carried state (vectors, scalars, or the
 * Jacobi field) and calls coop_ckpt_point after each residual check where
 * that state is whole, and coop_ckpt_resume once before its loop. The service
 * decides when a checkpoint is due (every N iterations, every T seconds, or a
 * signal: io/checkpoint.h writes it), so the ranks agree without a method
 * knowing how. Bit identity: a method resumes from exactly the values it
 * would have had, so an interrupted and restarted run ends with the same
 * bits as an uninterrupted one at the same rank count and mode. */
#ifndef COOP_SOLVERS_CHECKPOINT_H
#define COOP_SOLVERS_CHECKPOINT_H

#include "io/checkpoint.h"
#include "solvers/solver.h"

struct coop_ckpt {
  /* set by the driver */
  const char *path;        /* where checkpoints are written */
  int64_t every;           /* iterations between checkpoints; 0: none */
  double seconds;          /* wall seconds between checkpoints; 0: none */
  int exit_on_signal;      /* run.on_signal = exit: stop after the checkpoint */
  const char *restart;     /* checkpoint to go on from, or NULL */
  const char *solver, *problem;
  coop_ckpt_layout layout; /* where this rank's entries lie in the global arrays */
  /* kept by the service */
  double last;             /* MPI_Wtime of the last checkpoint (or the start) */
  int64_t points;          /* calls of coop_ckpt_point */
  int64_t written;         /* checkpoints written */
  int64_t written_it;      /* iteration of the last one */
  int signal;              /* the signal that stopped the solve, else 0 */
  int resume_failed;       /* the restart's read failed, agreed by every rank before any work */
};

typedef struct {
  int ns;
  const char *sname[COOP_CKPT_MAX_ITEMS];
  double *sval[COOP_CKPT_MAX_ITEMS]; /* the method's own variables */
  int nv;
  const char *vname[COOP_CKPT_MAX_ITEMS];
  coop_vec *vec[COOP_CKPT_MAX_ITEMS];
  void *field; /* grid form: the stored field (backend memory, ghosts included) */
} coop_ckpt_state;

/* 1 when sv runs with checkpoints set up by the driver and asked for (every,
 * seconds or a restart); signals alone do not count. */
int coop_ckpt_requested(const coop_solve *sv);

/* After the residual check of iteration it, state st whole: writes a
 * checkpoint when due; *stop = 1 when the solve must end here (a signal and
 * run.on_signal = exit; sv->ckpt->signal says which). Collective. */
int coop_ckpt_point(coop_solve *sv, int64_t it, const coop_ckpt_state *st, int *stop);

/* At the iteration where the solve stops for max_iter (the state st whole):
 * a last checkpoint, so that the run can be continued with a larger
 * solver.max_iter, when checkpoints are on (every or seconds) and none was
 * written at this iteration. Collective. */
int coop_ckpt_final(coop_solve *sv, int64_t it, const coop_ckpt_state *st);

/* With --restart: reads st's vectors, scalars and field, the history and r0
 * into sv->ctl; *it = the checkpoint's iteration and *resumed = 1. Without:
 * *resumed = 0. Collective. */
int coop_ckpt_resume(coop_solve *sv, const coop_ckpt_state *st, int64_t *it, int *resumed);

/* With --restart: *has = 1 when the checkpoint holds a scalar of this name
 * (how a method tells its own kinds of state apart, say grid mode's from
 * launch mode's), else 0; without a restart 0. Collective. */
int coop_ckpt_restart_has(coop_solve *sv, const char *scalar, int *has);

/* A whole solve in one persistent kernel runs in segments when the service is
 * there, so that checkpoints and signals are seen: where the launch going on
 * from iteration it stops, at the next checkpoint due and at the latest after
 * about COOP_CKPT_SEGMENT_SECONDS at per_iter seconds an iteration; -1: at
 * the end (no service, or max_iter first). A relaunch costs tens of
 * microseconds against a segment's quarter second. */
#define COOP_CKPT_SEGMENT_SECONDS 0.25
int64_t coop_ckpt_next_stop(const coop_solve *sv, int64_t it, double per_iter);

#endif
