/* NCCL for halo faces (core/backend.h, coop_nccl_*). Two communicators,
 * one after the other. The first is non-blocking, so that its setup can be
 * bounded in time: NCCL's blocking setup waits for every rank without end,
 * and one rank that fails there would leave the others inside it while it
 * goes on to the next agreement. Once every rank has it, a second,
 * blocking one is set up for the exchanges and the first is closed: on a
 * non-blocking communicator each group end hands the launch to a new host
 * thread (measured on the H200 pair, 4096^2 fp32 at 2 ranks: 210-360 us a
 * sweep, 25-69 us with the blocking one). A blocking communicator split
 * from the first (ncclCommSplit) failed there with an internal error
 * (NCCL 2.28.3). Calls on the first may answer "in progress"; settle()
 * waits for the real answer. */
#include "coop_build.h"

#include <stdlib.h>

#include "core/backend.h"
#include "core/comm.h"
#include "core/error.h"

#if COOP_HAVE_NCCL
#include <nccl.h>

#define SETUP_LIMIT_S 120.0 /* bootstrap over the network of a large job */
#define CALL_LIMIT_S 60.0   /* queuing a group or closing */

/* The answer of a call that may still be in progress, waited for at most
 * limit seconds (ncclInProgress when it has not come). */
static ncclResult_t settle(ncclComm_t c, ncclResult_t r, double limit) {
  const double t0 = MPI_Wtime();
  while (r == ncclInProgress && MPI_Wtime() - t0 < limit)
    if (ncclCommGetAsyncError(c, &r) != ncclSuccess) return ncclInternalError;
  return r;
}

static const char *why(ncclResult_t r) {
  return r == ncclInProgress ? "no answer within the time limit" : ncclGetErrorString(r);
}

int coop_nccl_built(void) { return 1; }

int coop_nccl_open(MPI_Comm comm, void **nc) {
  int rank = 0, size = 0;
  ncclUniqueId id;
  *nc = NULL;
  COOP_MPI(MPI_Comm_rank(comm, &rank));
  COOP_MPI(MPI_Comm_size(comm, &size));
  /* rank 0 makes the id; its failure travels with it, releasing the others */
  int ok = 1;
  if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) ok = 0;
  COOP_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, comm));
  if (!ok) return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: rank 0 could not make the communicator's id");
  COOP_MPI(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm));
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclComm_t c = NULL;
  ncclResult_t r = ncclCommInitRankConfig(&c, size, id, rank, &cfg);
  if (c) r = settle(c, r, SETUP_LIMIT_S);
  /* every rank ends its wait, then all learn whether all succeeded */
  const int mine = r == ncclSuccess;
  int all = 0;
  const int mrc = MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  if (mrc != MPI_SUCCESS || !all) {
    if (c) (void)ncclCommAbort(c);
    COOP_MPI(mrc);
    if (!mine) return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: setting up the halo communicator: %s", why(r));
    return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: another rank could not set up the halo communicator");
  }
  /* the exchanges' communicator: a second one, blocking (every rank has
   * just set one up, so this one is not expected to hang) */
  ncclUniqueId id2;
  ok = 1;
  if (rank == 0 && ncclGetUniqueId(&id2) != ncclSuccess) ok = 0;
  COOP_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, comm));
  COOP_MPI(MPI_Bcast(&id2, (int)sizeof id2, MPI_BYTE, 0, comm));
  ncclConfig_t bcfg = NCCL_CONFIG_INITIALIZER;
  bcfg.blocking = 1;
  ncclComm_t d = NULL;
  r = ok ? ncclCommInitRankConfig(&d, size, id2, rank, &bcfg) : ncclInternalError;
  const int mine2 = r == ncclSuccess && d;
  const int src = MPI_Allreduce(&mine2, &all, 1, MPI_INT, MPI_MIN, comm);
  if (settle(c, ncclCommFinalize(c), CALL_LIMIT_S) == ncclSuccess)
    (void)ncclCommDestroy(c);
  else
    (void)ncclCommAbort(c);
  if (src != MPI_SUCCESS || !all) {
    if (d) (void)ncclCommAbort(d);
    COOP_MPI(src);
    if (!mine2) return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: the second halo communicator: %s", why(r));
    return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: another rank could not set up the second halo communicator");
  }
  *nc = d;
  return 0;
}

int coop_nccl_exchange(coop_backend *b, void *nc, int n, const int *peer, void *const *send,
                       void *const *recv, size_t bytes) {
  const cudaStream_t s = (cudaStream_t)b->stream;
  const ncclComm_t c = (ncclComm_t)nc;
  ncclResult_t r = ncclGroupStart();
  for (int i = 0; i < n && r == ncclSuccess; i++) {
    r = ncclRecv(recv[i], bytes, ncclChar, peer[i], c, s);
    if (r == ncclSuccess) r = ncclSend(send[i], bytes, ncclChar, peer[i], c, s);
  }
  /* a group opened is closed, whatever failed inside it (blocking: the
   * answer is final) */
  const ncclResult_t e = ncclGroupEnd();
  if (r == ncclSuccess) r = e;
  if (r != ncclSuccess)
    return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: halo faces with rank %d%s: %s", peer[0], n > 1 ? " and another" : "",
                      why(r));
  return 0;
}

void coop_nccl_close(void *nc) {
  if (!nc) return;
  const ncclComm_t c = (ncclComm_t)nc;
  /* blocking: finalize returns once its queued work is done; destroy frees
   * the rest, and the handle is gone: nothing is asked of it after */
  if (ncclCommFinalize(c) == ncclSuccess)
    (void)ncclCommDestroy(c);
  else
    (void)ncclCommAbort(c);
}

#else

int coop_nccl_built(void) { return 0; }

int coop_nccl_open(MPI_Comm comm, void **nc) {
  (void)comm;
  *nc = NULL;
  return coop_error_input("run.halo = nccl: this build has no NCCL (configure --with-nccl)");
}

int coop_nccl_exchange(coop_backend *b, void *nc, int n, const int *peer, void *const *send,
                       void *const *recv, size_t bytes) {
  (void)b, (void)nc, (void)n, (void)peer, (void)send, (void)recv, (void)bytes;
  return COOP_ERROR(COOP_ERR_RUNTIME, "this build has no NCCL");
}

void coop_nccl_close(void *nc) { (void)nc; }

#endif
