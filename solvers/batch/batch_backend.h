/* The backend versions of a batched solve, called by the dispatch
 * (solvers/batch/batch.c) only: the host reference (solvers/batch/batch_host.c)
 * and the CUDA launcher (solvers/batch/batch_cuda.cu, stubs in builds without
 * CUDA). Kept out of solvers/batch/batch.h so the backends and the dispatch
 * share its types without the public header naming each other's entries. */
#ifndef COOP_BATCH_BACKEND_H
#define COOP_BATCH_BACKEND_H

#include "solvers/batch/batch.h"

#ifdef __cplusplus
extern "C" {
#endif

int coop_batch_solve_host(const coop_batch *bt, const coop_batch_ctl *ctl, double *x,
                          coop_batch_result *res);
int coop_batch_solve_cuda(coop_backend *be, const coop_batch *bt, const coop_batch_ctl *ctl,
                          coop_batch_run *opt, double *x, coop_batch_result *res);
int coop_batch_check_run_cuda(coop_backend *be, const coop_batch_run *opt);

#ifdef __cplusplus
}
#endif
#endif
