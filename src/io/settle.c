/* Agreement between the ranks writing one file: see settle.h. */
#define _POSIX_C_SOURCE 200809L

#include "io/settle.h"

#include <limits.h>
#include <stdint.h>
#include <time.h>

#include "core/comm.h"
#include "core/error.h"

/* Every rank learns whether any rank failed. The lowest rank that failed keeps
 * its message and the others say another rank failed, so the user reads one. */
int coop_write_agree(MPI_Comm comm, int st, const char *path) {
  struct {
    int st, rank;
  } in = {st, 0}, out = {0, 0};
  MPI_Comm_rank(comm, &in.rank);
  const int e = MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, comm);
  if (e != MPI_SUCCESS) return st ? st : coop_error_mpi(e, "MPI_Allreduce", __FILE__, __LINE__);
  if (!out.st || (st && out.rank == in.rank)) return out.st;
  return coop_error_remote(out.st, "another rank failed while writing %s", path);
}

/* How long a rank that failed while the file is open waits for the others:
 * they may be inside a collective HDF5 call that waits for it in turn. */
enum { SETTLE_WAIT_S = 5 };

/* The others did not answer: remove the temporaries and end the job. */
static void give_up(const coop_wctx *io) {
  const coop_comm c = {io->comm, io->rank, io->size, 0, 0};
  coop_outnames_discard(io->nm);
  coop_comm_abort(&c, COOP_ERR_RUNTIME);
}

static int wait_for(MPI_Request *req, int failed) {
  const double end = MPI_Wtime() + SETTLE_WAIT_S;
  const struct timespec nap = {0, 1000000};
  int done = 0;
  if (!failed) return MPI_Wait(req, MPI_STATUS_IGNORE) == MPI_SUCCESS;
  while (MPI_Test(req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done && MPI_Wtime() < end)
    nanosleep(&nap, NULL);
  return done;
}

/* HDF5 says only "file write failed": name a full file system as the cause. */
static int explain(const coop_wctx *io, int st) {
  enum { LOW = 64 * 1024 };
  const uint64_t avail = st && !coop_error_is_remote() ? coop_output_free(io->path) : UINT64_MAX;
  if (avail < LOW)
    coop_error_append(st, "the file system holding %s is full: %.1f KiB free (No space left on device)",
                      io->path, (double)avail / 1024.0);
  return st;
}

/* coop_write_agree() for the steps after the create, where HDF5 may hold the file open on
 * some ranks (open: this one does). *any_open: some rank does. A failed rank
 * that hears nothing within SETTLE_WAIT_S ends the job itself. */
int coop_write_settle(const coop_wctx *io, int st, int open, int *any_open) {
  int in[3] = {explain(io, st), st ? -io->rank : INT_MIN, open}, out[3] = {0, 0, 0};
  MPI_Request req;
  if (MPI_Iallreduce(in, out, 3, MPI_INT, MPI_MAX, io->comm, &req) != MPI_SUCCESS ||
      !wait_for(&req, st != 0)) {
    if (!st) coop_error_raise(COOP_ERR_RUNTIME, __FILE__, __LINE__, "MPI_Iallreduce failed");
    give_up(io);
  }
  *any_open = out[2];
  if (!out[0] || (st && -out[1] == io->rank)) return out[0];
  return coop_error_remote(out[0], "another rank failed while writing %s", io->path);
}

