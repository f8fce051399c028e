/* Agreement between the ranks writing one HDF5 file (an output, a
 * checkpoint), so that a failure on one rank is known on all and no rank
 * waits in a later collective call for one that has given up. */
#ifndef COOP_SETTLE_H
#define COOP_SETTLE_H

#include <mpi.h>

#include "io/files.h"

/* The ranks writing, the names being written, and the path for messages. */
typedef struct {
  MPI_Comm comm;
  int rank, size;
  const coop_outnames *nm;
  const char *path;
} coop_wctx;

/* Collective: the worst status of all ranks. The lowest rank that failed
 * keeps its message and the others get "another rank failed while writing
 * PATH" (remote), so the user reads one. */
int coop_write_agree(MPI_Comm comm, int st, const char *path);

/* coop_write_agree() for the steps after the file's create, where HDF5 may
 * hold the file open on some ranks (open: this one does; *any_open: some
 * rank does). A rank that failed and hears nothing from the others within a
 * few seconds (they wait inside a collective HDF5 call for it) removes the
 * temporaries and ends the job. A full file system is named as the cause. */
int coop_write_settle(const coop_wctx *io, int st, int open, int *any_open);

#endif
