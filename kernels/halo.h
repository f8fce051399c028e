/* Halo exchange of ghost layers between neighbouring ranks. Axes are exchanged
 * one after another, each carrying the ghosts of the axes before it, so edge
 * and corner ghosts arrive too (deep halos need them). Buffers live on the
 * backend's device; with device memory and an MPI that is not CUDA-aware they
 * are staged through pinned host buffers. In kernels/, beside the backend whose
 * packs, IPC copies and NCCL faces (kernels/halo_nccl.c) it drives: the core
 * below knows no backend. */
#ifndef COOP_HALO_H
#define COOP_HALO_H

#include <mpi.h>

#include "core/decomp.h"
#include "core/grid.h"
#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  coop_backend *be;
  const coop_grid *s;
  MPI_Comm comm;
  int nbr[3][2];             /* [axis][0 = lo, 1 = hi] */
  coop_region send[3][2], recv[3][2];
  size_t bytes[3];           /* one face message along each axis */
  void *dsend[3][2], *drecv[3][2]; /* backend memory */
  void *hsend[3][2], *hrecv[3][2]; /* host staging, NULL when MPI takes dsend */
  int staged;
  /* GPU to GPU through CUDA IPC, per face (the neighbour shares the node):
   * the face is copied straight into the neighbour's receive buffer, two of
   * which alternate between exchanges so one message per exchange suffices */
  int ipc[3][2];
  void *drecv2[3][2];     /* the second receive buffer of an IPC face */
  void *peer[3][2][2];    /* the neighbour's two receive buffers facing us, mapped here */
  int parity;             /* which of the two this exchange fills */
  /* tune.halo = nccl: every face through NCCL, queued on the stream */
  void *nccl;             /* the communicator; NULL when not used */
} coop_halo;

/* The send and receive regions of one axis for ghost width s->g (pure; for tests). */
void coop_halo_regions(const coop_grid *s, int axis, coop_region send[2], coop_region recv[2]);

int coop_halo_create(coop_halo *h, coop_backend *be, const coop_grid *s, const coop_decomp *d,
                     int cuda_aware);
void coop_halo_destroy(coop_halo *h); /* accepts a half-built halo */
/* The buffers of the faces towards the neighbours nbr[side] of one axis that
 * exist (not MPI_PROC_NULL): send and receive, bytes each, in backend memory
 * and, where staged, host copies of both; the caller releases them. */
int coop_halo_face_buffers(coop_backend *be, const int nbr[2], size_t bytes, int staged, void *send[2],
                           void *recv[2], void *hsend[2], void *hrecv[2]);
/* The transport of the faces, tune.halo: "mpi" (through MPI, staged through
 * host memory unless MPI is CUDA-aware), "ipc" (GPU to GPU through CUDA IPC:
 * every neighbour must share the node, else an input error), "nccl" (every
 * face through NCCL on the stream, no host round trip: builds with NCCL,
 * device memory), "auto" (ipc for the faces whose neighbour shares the node,
 * where the backend has device memory). *faces: the faces that go through IPC.
 * Collective over h's communicator (handles are exchanged, a communicator
 * made). */
int coop_halo_set_transport(coop_halo *h, const char *which, int *faces);
/* Fill the ghost layers of u (backend memory) from the neighbours. Collective
 * over the neighbours. */
int coop_halo_exchange(coop_halo *h, void *u);
/* The same exchange on the backend's side stream (kernels/backend.h), then
 * joined into the main stream; the caller forks first, after the work that
 * wrote the faces, so later main-stream work that neither reads the ghosts
 * nor writes the faces (the interior of a step) runs beside it. Falls back to
 * coop_halo_exchange where the backend has no side stream. */
int coop_halo_exchange_side(coop_halo *h, void *u);
/* The owned box cut into parts: first the strips of ghost width along each
 * face with a neighbour (the points the exchange sends), disjoint, then the
 * rest (the interior, possibly empty) as parts[return value]. */
int coop_halo_split(const coop_halo *h, coop_region parts[2 * 3 + 1]);
/* Points a sweep updates when ext more sweeps follow before the next exchange:
 * the owned box grown by ext into the ghosts on every side with a neighbour
 * (deep halos recompute that overlap instead of exchanging it). */
coop_region coop_halo_sweep_region(const coop_halo *h, int64_t ext);
/* 1 when this rank has any neighbour. */
int coop_halo_active(const coop_halo *h);

#ifdef __cplusplus
}
#endif
#endif
