/* NCCL for halo faces (kernels/halo_nccl.h). */
#include "coop_build.h"

#include "kernels/halo_nccl.h"

#include <stdlib.h>

#include "core/comm.h"
#include "core/error.h"

#if COOP_HAVE_NCCL
#include <nccl.h>

/* Every NCCL result checked the same way. */
#define COOP_NCCL(call)                                                                               \
  do {                                                                                                \
    const ncclResult_t coop_r_ = (call);                                                              \
    if (coop_r_ != ncclSuccess) return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: %s: %s", #call,           \
                                                  ncclGetErrorString(coop_r_));                       \
  } while (0)

int coop_nccl_built(void) { return 1; }

int coop_nccl_open(MPI_Comm comm, void **nc) {
  int rank = 0, size = 0;
  ncclUniqueId id;
  *nc = NULL;
  COOP_MPI(MPI_Comm_rank(comm, &rank));
  COOP_MPI(MPI_Comm_size(comm, &size));
  /* rank 0 makes the id; a failure there must still release the others from
   * the broadcast, so the result travels with it */
  int ok = 1;
  if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) ok = 0;
  COOP_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, comm));
  if (!ok) return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: rank 0 could not make a unique id");
  COOP_MPI(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm));
  ncclComm_t c;
  COOP_NCCL(ncclCommInitRank(&c, size, id, rank));
  *nc = c;
  return 0;
}

int coop_nccl_exchange(coop_backend *b, void *nc, int n, const int *peer, void *const *send,
                       void *const *recv, size_t bytes) {
  const cudaStream_t s = (cudaStream_t)b->stream;
  COOP_NCCL(ncclGroupStart());
  for (int i = 0; i < n; i++) {
    /* a failed call inside the group still needs its end */
    ncclResult_t r = ncclRecv(recv[i], bytes, ncclChar, peer[i], (ncclComm_t)nc, s);
    if (r == ncclSuccess) r = ncclSend(send[i], bytes, ncclChar, peer[i], (ncclComm_t)nc, s);
    if (r != ncclSuccess) {
      (void)ncclGroupEnd();
      return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: face with rank %d: %s", peer[i], ncclGetErrorString(r));
    }
  }
  COOP_NCCL(ncclGroupEnd());
  return 0;
}

void coop_nccl_close(void *nc) {
  if (nc) (void)ncclCommDestroy((ncclComm_t)nc);
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
