/* Halo faces through NCCL (run.halo = nccl): point-to-point sends and
 * receives queued on the backend's stream, so an exchange needs no host
 * round trip (pack, exchange and unpack follow each other on the GPU), and
 * reaches ranks on other nodes where NCCL's transports do. Built with
 * configure --with-nccl; without it, opening is an input error. */
#ifndef COOP_HALO_NCCL_H
#define COOP_HALO_NCCL_H

#include <stddef.h>

#include <mpi.h>

#include "core/backend.h"

/* 1 when this build has NCCL. */
int coop_nccl_built(void);
/* A communicator over comm's ranks, each on its backend's current GPU, into
 * *nc. Collective over comm. */
int coop_nccl_open(MPI_Comm comm, void **nc);
/* Queue on b's stream, as one group: for i < n, send[i] (bytes) to rank
 * peer[i] and receive recv[i] from it. Returns once queued. */
int coop_nccl_exchange(coop_backend *b, void *nc, int n, const int *peer, void *const *send,
                       void *const *recv, size_t bytes);
/* Free it (accepts NULL); the caller has waited for its queued work. */
void coop_nccl_close(void *nc);

#endif
