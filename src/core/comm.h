/* MPI helpers: the communicator of a run, node-local ranks for GPU binding, and
 * the all-ranks-stop-together error discipline. */
#ifndef COOP_COMM_H
#define COOP_COMM_H

#include <mpi.h>

#include "core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

int coop_error_mpi(int mpi_code, const char *call, const char *file, int line);

/* Wrap every MPI call: an MPI error becomes a run-time fault naming the call. */
#define COOP_MPI(call)                                                          \
  do {                                                                          \
    int coop_m_ = (call);                                                       \
    if (coop_m_ != MPI_SUCCESS) return coop_error_mpi(coop_m_, #call, __FILE__, __LINE__); \
  } while (0)

typedef struct {
  MPI_Comm world; /* the run's ranks (errors are returned, not fatal) */
  int rank, size;
  int node_rank, node_size; /* rank and rank count within this node */
} coop_comm;

/* Duplicate comm, set MPI_ERRORS_RETURN, find node-local rank. */
int coop_comm_create(coop_comm *c, MPI_Comm comm);
void coop_comm_destroy(coop_comm *c);

/* Collective: the worst (largest) status of all ranks. A rank whose own status
 * is 0 but whose peers failed gets their status and a message saying so. For
 * an input error, every rank but the lowest that met it gets that remote
 * message, so exactly one rank (coop_error_is_remote() == 0) tells the user. */
int coop_comm_agree(const coop_comm *c, int status);

/* Print this rank's error message once (rank 0 for input errors, the failing rank
 * otherwise) and end the whole job with MPI_Abort: for failures that happen where
 * the ranks cannot agree (inside the iteration loop). Does not return. */
void coop_comm_abort(const coop_comm *c, int status);

/* Test hook: 1 when the environment says COOP_FAULT=WHERE:RANK for this rank,
 * so tests can make one rank fail at a named point ("halo", "output"). */
int coop_fault(const coop_comm *c, const char *where);

/* 1 when the MPI library can take device pointers (MPIX_Query_cuda_support). */
int coop_comm_cuda_aware(void);

#ifdef __cplusplus
}
#endif
#endif
