#define _POSIX_C_SOURCE 200809L

#include "core/comm.h"

#include "coop_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#if HAVE_MPI_EXT_H
#include <mpi-ext.h>
#endif

int coop_error_mpi(int mpi_code, const char *call, const char *file, int line) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(mpi_code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", mpi_code);
  return coop_error_raise(COOP_ERR_RUNTIME, file, line, "%s failed: %s", call, text);
}

int coop_comm_create(coop_comm *c, MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  c->world = MPI_COMM_NULL;
  COOP_MPI(MPI_Comm_dup(comm, &c->world));
  COOP_MPI(MPI_Comm_set_errhandler(c->world, MPI_ERRORS_RETURN));
  COOP_MPI(MPI_Comm_rank(c->world, &c->rank));
  COOP_MPI(MPI_Comm_size(c->world, &c->size));
  COOP_MPI(MPI_Comm_split_type(c->world, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node));
  COOP_MPI(MPI_Comm_rank(node, &c->node_rank));
  COOP_MPI(MPI_Comm_size(node, &c->node_size));
  COOP_MPI(MPI_Comm_free(&node));
  return 0;
}

void coop_comm_destroy(coop_comm *c) {
  if (c && c->world != MPI_COMM_NULL) MPI_Comm_free(&c->world);
}

int coop_comm_agree(const coop_comm *c, int status) {
  /* MAXLOC on 2 status + (1 when this rank's error is its own): the worst
   * status, and the lowest rank that raised it itself (not one that heard of
   * it from an agreement before this one) */
  struct {
    int key, rank;
  } in = {2 * status + (status && !coop_error_is_remote()), c->rank}, out = {0, 0};
  /* If the reduction itself fails the ranks cannot agree: abort is all that is left. */
  if (MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, c->world) != MPI_SUCCESS) {
    fprintf(stderr, "coopsolve: rank %d: MPI_Allreduce failed while agreeing on status\n", c->rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int worst = out.key / 2;
  /* An input error is told once, by that rank: rank 0 when every rank read the
   * same input, another when only it could not read a file (a path that is not
   * on every node). The others stay silent. */
  if (worst == COOP_ERR_INPUT) {
    if (status == worst && c->rank == out.rank) return worst;
    return coop_error_remote(worst, "stopped because another rank met an input error");
  }
  if (worst && !status) return coop_error_remote(worst, "stopped because another rank failed");
  return worst;
}

void coop_comm_abort(const coop_comm *c, int status) {
  if (coop_error_is_remote()) {
    /* "another rank failed": the rank that did is aborting too, with the
     * cause; give it the first word (mpirun ends this one meanwhile) */
    const struct timespec nap = {0, 10000000};
    for (int i = 0; i < 300; i++) nanosleep(&nap, NULL);
  }
  fprintf(stderr, "coopsolve: rank %d: %s\n", c->rank, coop_error_message());
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, status ? status : 1);
  exit(status ? status : 1); /* not reached */
}

int coop_fault(const coop_comm *c, const char *where) {
  const char *spec = getenv("COOP_FAULT");
  char want[64];
  if (!spec) return 0;
  snprintf(want, sizeof want, "%s:%d", where, c->rank);
  return strcmp(spec, want) == 0;
}

int coop_comm_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support();
#else
  return 0;
#endif
}
