/* Checkpoint files: the state of a solve at an iteration, from which it can go
 * on (--restart). One HDF5 file:
 *   /checkpoint           attributes format (1), solver, iteration, r0, ranks,
 *                         problem (the keys the state depends on, "key = value"
 *                         lines), created
 *   /checkpoint/scalars   one double attribute per loop-carried scalar
 *   /checkpoint/NAME      each vector or field, global shape (rows; or the
 *                         interior grid points, slowest axis first), doubles
 *                         (fp32 state is widened, exactly)
 *   /history/iteration, residual   the residual checks so far (as in an output
 *                         file, so a killed job keeps its history to here)
 * Written under a fresh temporary name beside PATH and renamed over it when
 * whole, so the previous checkpoint stays until the new one replaces it. Both
 * calls are collective; any rank's failure is every rank's. */
#ifndef COOP_CHECKPOINT_IO_H
#define COOP_CHECKPOINT_IO_H

#include <stdint.h>

#include "core/comm.h"

#define COOP_CKPT_MAX_ITEMS 16

/* Where this rank's part of a vector lies in the global array. */
typedef struct {
  int ndim;                      /* 1: rows; 2 or 3: a box of grid points */
  uint64_t dims[3];              /* global extent, slowest axis first */
  uint64_t start[3], count[3];   /* this rank's part */
} coop_ckpt_layout;

typedef struct {
  const char *solver;   /* solver.name */
  const char *problem;  /* fingerprint: the keys the state depends on */
  int64_t iteration;
  double r0;
  int nscal;
  const char *sname[COOP_CKPT_MAX_ITEMS];
  double sval[COOP_CKPT_MAX_ITEMS];
  int nvec;
  const char *vname[COOP_CKPT_MAX_ITEMS];
  double *vdata[COOP_CKPT_MAX_ITEMS]; /* host, this rank's count entries */
  int64_t hist_len;
  int64_t *hist_iter;
  double *hist_res;
} coop_ckpt_data;

int coop_ckpt_write(const char *path, const coop_comm *c, const coop_ckpt_layout *L,
                    const coop_ckpt_data *d);

/* Check that path is a checkpoint of this solver and problem (input errors,
 * exit 2, name the file and the first key that differs); fills iteration, r0
 * and, when hist_iter is not NULL, the history (at most *hist_len entries in;
 * entries read out). Collective. */
int coop_ckpt_check(const char *path, const coop_comm *c, const char *solver, const char *problem,
                    int64_t *iteration, double *r0);
/* What a restart file must fit: this problem's vectors (ndim, dims slowest
 * first) and this run's limits. */
typedef struct {
  int ndim;
  uint64_t dims[3];
  int64_t max_iter; /* the checkpoint's iteration at most this */
  int64_t hist_cap; /* its history at most this many checks */
} coop_ckpt_expect;
/* Check, before any work, what coop_ckpt_read would find wrong only inside
 * the solve: every attribute of /checkpoint of the kind and range coopsolve
 * writes (finite numbers), every dataset of /checkpoint floating-point of the
 * problem's global shape with finite values (each rank reads a slab),
 * /history's two 1-D datasets of one length that fits hist_cap, its checks in
 * order up to the checkpoint's iteration, residuals finite and not negative.
 * Memory stays bounded whatever the file declares. Input errors (exit 2) name
 * the file and the attribute or dataset. Collective. */
int coop_ckpt_check_layout(const char *path, const coop_comm *c, const coop_ckpt_expect *e);
/* Whether /checkpoint/scalars holds the attribute name (rank 0 looks, all learn). Collective. */
int coop_ckpt_has_scalar(const char *path, const coop_comm *c, const char *name, int *has);
/* Read the scalars and vectors d names (their values out) and the history
 * (room for hist_cap entries in d->hist_iter/hist_res; hist_len out). */
int coop_ckpt_read(const char *path, const coop_comm *c, const coop_ckpt_layout *L, coop_ckpt_data *d,
                   int64_t hist_cap);

#endif
