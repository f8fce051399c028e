/* NCCL for halo faces (kernels/backend.h, coop_nccl_*). Two communicators,
 * one after the other.
 *
 * The first is non-blocking, so that its setup can be bounded in time:
 * NCCL's blocking setup waits for every rank without end, and one rank that
 * fails there would leave the others inside it while it goes on to the next
 * agreement. Once every rank has it (agreed over MPI), it is closed.
 *
 * The exchanges run on a second, blocking communicator: on a non-blocking
 * one every group end hands the launch to a new host thread, several times
 * slower a sweep. A blocking communicator split from the first
 * (ncclCommSplit) failed with an internal error (NCCL 2.28.3), so it is set
 * up afresh. That setup, and the first exchange of every face (NCCL
 * connects a pair at its first send, a slow step kept out of the solve),
 * run on a helper thread, which the calling thread waits for at most a
 * bounded time before all ranks agree: a rank that fails or stalls
 * there still cannot hold the others for ever.
 *
 * Calls may answer "in progress" (always on the first communicator; on the
 * second only where NCCL_COMM_BLOCKING=0 overrides its configuration);
 * settle() waits for the real answer. */
#include "coop_build.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "core/comm.h"
#include "core/error.h"
#include "kernels/backend.h"

#if COOP_HAVE_NCCL
#include <nccl.h>

#define SETUP_LIMIT_S 120.0 /* bootstrap over the network of a large job */
#define CALL_LIMIT_S 60.0   /* queuing a group, connecting, closing */
#define MAX_FACES 6

/* Seconds on a monotonic clock (MPI_Wtime is not called off the main
 * thread: MPI may have been initialised for one thread only). */
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The answer of a call that may still be in progress, waited for at most
 * limit seconds (ncclInProgress when it has not come). */
static ncclResult_t settle(ncclComm_t c, ncclResult_t r, double limit) {
  const double t0 = now_s();
  while (r == ncclInProgress && now_s() - t0 < limit)
    if (ncclCommGetAsyncError(c, &r) != ncclSuccess) return ncclInternalError;
  return r;
}

static const char *why(ncclResult_t r) {
  return r == ncclInProgress ? "no answer within the time limit" : ncclGetErrorString(r);
}

/* A communicator done with: quiescent, then freed, or aborted. */
static void close_comm(ncclComm_t c) {
  if (settle(c, ncclCommFinalize(c), CALL_LIMIT_S) == ncclSuccess)
    (void)ncclCommDestroy(c);
  else
    (void)ncclCommAbort(c);
}

/* One group on stream s: for i < n, the receive of recv[i] from rank peer[i]
 * and the send of send[i] to it, bytes[i * stride] each (stride 0: one size
 * for all). A group opened is closed, whatever failed inside it. */
static ncclResult_t face_group(ncclComm_t c, cudaStream_t s, int n, const int *peer, void *const *send,
                               void *const *recv, const size_t *bytes, int stride) {
  ncclResult_t r = ncclGroupStart();
  for (int i = 0; i < n && r == ncclSuccess; i++) {
    r = ncclRecv(recv[i], bytes[i * stride], ncclChar, peer[i], c, s);
    if (r == ncclSuccess) r = ncclSend(send[i], bytes[i * stride], ncclChar, peer[i], c, s);
  }
  const ncclResult_t e = settle(c, ncclGroupEnd(), CALL_LIMIT_S);
  return r == ncclSuccess ? e : r;
}

/* The second communicator's setup and first exchanges, on a helper thread.
 * The job is the thread's own once the caller has stopped waiting for it
 * (then never freed: the process is ending with an error). */
struct setup_job {
  ncclUniqueId id;
  int size, rank, device, nf;
  int peer[MAX_FACES];
  void *send[MAX_FACES], *recv[MAX_FACES];
  size_t bytes[MAX_FACES];
  ncclComm_t comm;
  ncclResult_t r;
  int done; /* written last, with release */
};

static void *setup_main(void *arg) {
  struct setup_job *j = arg;
  ncclResult_t r = ncclSuccess;
  cudaStream_t s = NULL;
  if (cudaSetDevice(j->device) != cudaSuccess || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
    r = ncclUnhandledCudaError;
  if (r == ncclSuccess) {
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 1;
    r = ncclCommInitRankConfig(&j->comm, j->size, j->id, j->rank, &cfg);
    if (j->comm) r = settle(j->comm, r, SETUP_LIMIT_S);
  }
  if (r == ncclSuccess && j->nf > 0) { /* every face once: NCCL connects the pairs */
    r = face_group(j->comm, s, j->nf, j->peer, j->send, j->recv, j->bytes, 1);
    if (r == ncclSuccess && cudaStreamSynchronize(s) != cudaSuccess) r = ncclUnhandledCudaError;
  }
  if (s) (void)cudaStreamDestroy(s);
  j->r = r;
  __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

int coop_nccl_built(void) { return 1; }

int coop_nccl_open(MPI_Comm comm, int nf, const int *peer, void *const *send, void *const *recv,
                   const size_t *bytes, void **nc) {
  int rank = 0, size = 0;
  ncclUniqueId id[2];
  *nc = NULL;
  if (nf < 0 || nf > MAX_FACES) return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: %d faces, at most %d", nf, MAX_FACES);
  COOP_MPI(MPI_Comm_rank(comm, &rank));
  COOP_MPI(MPI_Comm_size(comm, &size));
  /* rank 0 makes both communicators' ids; its failure travels with them,
   * releasing the others */
  int ok = 1;
  if (rank == 0 && (ncclGetUniqueId(&id[0]) != ncclSuccess || ncclGetUniqueId(&id[1]) != ncclSuccess)) ok = 0;
  COOP_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, comm));
  if (!ok) return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: rank 0 could not make the communicators' ids");
  COOP_MPI(MPI_Bcast(id, (int)sizeof id, MPI_BYTE, 0, comm));
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) device = -1; /* agreed on below, as a failure */

  /* the first, non-blocking: bounded, then agreed */
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclComm_t c = NULL;
  ncclResult_t r = device < 0 ? ncclUnhandledCudaError : ncclCommInitRankConfig(&c, size, id[0], rank, &cfg);
  if (c) r = settle(c, r, SETUP_LIMIT_S);
  const int mine = r == ncclSuccess;
  int all = 0;
  int mrc = MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  if (mrc != MPI_SUCCESS || !all) {
    if (c) (void)ncclCommAbort(c);
    COOP_MPI(mrc);
    if (!mine) return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: setting up the halo communicator: %s", why(r));
    return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: another rank could not set up the halo communicator");
  }
  close_comm(c); /* every rank reaches NCCL: its job is done */

  /* the second, blocking, with the first exchanges: on a helper thread,
   * waited for at most the two limits, then agreed */
  struct setup_job *j = calloc(1, sizeof *j);
  pthread_t th;
  int started = 0;
  if (j) {
    j->id = id[1];
    j->size = size;
    j->rank = rank;
    j->device = device;
    j->nf = nf;
    for (int i = 0; i < nf; i++) {
      j->peer[i] = peer[i];
      j->send[i] = send[i];
      j->recv[i] = recv[i];
      j->bytes[i] = bytes[i];
    }
    started = pthread_create(&th, NULL, setup_main, j) == 0;
  }
  int done = 0;
  const double t0 = now_s();
  const struct timespec nap = {0, 1000000}; /* 1 ms */
  while (started && !(done = __atomic_load_n(&j->done, __ATOMIC_ACQUIRE)) &&
         now_s() - t0 < SETUP_LIMIT_S + CALL_LIMIT_S)
    nanosleep(&nap, NULL);
  if (started && done)
    pthread_join(th, NULL);
  else if (started)
    pthread_detach(th); /* stalled inside NCCL: the job stays the thread's */
  r = !j ? ncclSystemError : !started ? ncclSystemError : !done ? ncclInProgress : j->r;
  const int mine2 = r == ncclSuccess;
  mrc = MPI_Allreduce(&mine2, &all, 1, MPI_INT, MPI_MIN, comm);
  if (mrc != MPI_SUCCESS || !all) {
    if (done && j->comm) (void)ncclCommAbort(j->comm);
    if (!started || done) free(j);
    COOP_MPI(mrc);
    if (!mine2)
      return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: setting up the exchanges' communicator and connecting the "
                        "halo faces: %s", why(r));
    return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: another rank could not set up the exchanges' communicator");
  }
  *nc = j->comm;
  free(j);
  return 0;
}

int coop_nccl_exchange(coop_backend *b, void *nc, int n, const int *peer, void *const *send,
                       void *const *recv, size_t bytes) {
  const cudaStream_t s = (cudaStream_t)b->stream;
  const ncclComm_t c = (ncclComm_t)nc;
  const ncclResult_t r = face_group(c, s, n, peer, send, recv, &bytes, 0);
  if (r != ncclSuccess)
    return COOP_ERROR(COOP_ERR_RUNTIME, "NCCL: halo faces with rank %d%s: %s", peer[0], n > 1 ? " and another" : "",
                      why(r));
  return 0;
}

void coop_nccl_close(void *nc) {
  if (nc) close_comm((ncclComm_t)nc); /* the handle is gone after: nothing is asked of it */
}

#else

int coop_nccl_built(void) { return 0; }

int coop_nccl_open(MPI_Comm comm, int nf, const int *peer, void *const *send, void *const *recv,
                   const size_t *bytes, void **nc) {
  (void)comm, (void)nf, (void)peer, (void)send, (void)recv, (void)bytes;
  *nc = NULL;
  return coop_error_input("tune.halo = nccl: this build has no NCCL (configure --with-nccl)");
}

int coop_nccl_exchange(coop_backend *b, void *nc, int n, const int *peer, void *const *send,
                       void *const *recv, size_t bytes) {
  (void)b, (void)nc, (void)n, (void)peer, (void)send, (void)recv, (void)bytes;
  return COOP_ERROR(COOP_ERR_RUNTIME, "this build has no NCCL");
}

void coop_nccl_close(void *nc) { (void)nc; }

#endif
