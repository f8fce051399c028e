/* A backend is where data lives and work runs: "host" (the CPU reference) or
 * "cuda" (one GPU, one stream). It owns memory and transfers, packs grid
 * regions for the halo exchange, and reports what the device can do; the
 * operations themselves (kernels/vec.h, kernels/stencil.h, kernels/csr.h)
 * dispatch on it, and a solver picks its own execution mode from what it
 * reports. The tables are filled in by kernels/backend_host.c and
 * kernels/backend_cuda.cu; the halo exchange (kernels/halo.h) packs and copies
 * through them. */
#ifndef COOP_BACKEND_H
#define COOP_BACKEND_H

#include <stddef.h>

#include <mpi.h>

#include "core/grid.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct coop_backend coop_backend;
struct coop_backend {
  const char *name;  /* "host" or "cuda" */
  void *ctx;
  int device_memory; /* 1: alloc returns memory the CPU cannot touch */
  int device;        /* GPU index, -1 on the host */
  void *stream;      /* cudaStream_t of all work on this backend; NULL on the host */
  /* what the device can do (0 on the host) */
  int sm_count;      /* streaming multiprocessors */
  int cooperative;   /* 1: cooperative launches (grid-wide barriers) work */
  long long l2_bytes; /* L2 cache */
  /* Scratch for reductions, owned by the backend: COOP_SCRATCH_DOUBLES doubles in
   * backend memory and as many in (pinned) host memory. */
  double *scratch, *scratch_host;
  int (*alloc)(coop_backend *b, void **p, size_t bytes);
  void (*release)(coop_backend *b, void *p); /* accepts NULL */
  /* Host memory for staging transfers (pinned where that helps). */
  int (*alloc_host)(coop_backend *b, void **p, size_t bytes);
  void (*release_host)(coop_backend *b, void *p); /* accepts NULL */
  int (*upload)(coop_backend *b, void *dst, const void *src, size_t bytes);
  int (*download)(coop_backend *b, void *dst, const void *src, size_t bytes);
  /* Wait until queued device work is done (before MPI reads device memory). */
  int (*sync)(coop_backend *b);
  /* Events: record marks the work queued so far; wait blocks the host until
   * that work is done (later work may still run). slot < COOP_EVENTS. */
  int (*event_record)(coop_backend *b, int slot);
  int (*event_wait)(coop_backend *b, int slot);
  /* Copy region r of a stored grid field u to/from a contiguous buffer (x fastest). */
  int (*pack)(coop_backend *b, const coop_grid *gr, const coop_region *r, const void *u, void *buf);
  int (*unpack)(coop_backend *b, const coop_grid *gr, const coop_region *r, void *u,
                const void *buf);
  /* CUDA IPC between the processes of one node (NULL on the host): export
   * writes a handle (COOP_IPC_HANDLE_BYTES) of a buffer from alloc, open maps
   * a peer's handle, close unmaps it; copy queues a device-to-device copy on
   * the stream (a peer's mapped buffer may be either end). */
  int (*ipc_export)(coop_backend *b, void *p, void *handle);
  int (*ipc_open)(coop_backend *b, const void *handle, void **p);
  void (*ipc_close)(coop_backend *b, void *p);
  int (*copy)(coop_backend *b, void *dst, const void *src, size_t bytes);
  /* A second stream, for work that overlaps the main stream's (a halo
   * exchange beside the interior of a step): side is a view of this backend
   * whose work goes there (NULL on the host, where all runs in line); fork
   * makes the side stream wait for the work queued on the main stream so far,
   * join makes the main stream wait for the side stream's. No-ops on the host. */
  coop_backend *side;
  int (*fork)(coop_backend *b);
  int (*join)(coop_backend *b);
  void (*destroy)(coop_backend *b);
};

#define COOP_IPC_HANDLE_BYTES 64

#define COOP_SCRATCH_DOUBLES 8192
#define COOP_EVENTS 8

/* Create a backend: name "host" or "cuda"; device is the GPU index for cuda.
 * *out is malloc'ed, free with coop_backend_destroy. A cuda request on a build
 * or machine without CUDA is a run-time error naming why. */
int coop_backend_create(const char *name, int device, coop_backend **out);
void coop_backend_destroy(coop_backend *b); /* accepts NULL */

int coop_backend_host_create(coop_backend **out);
/* In builds with CUDA (kernels/backend_cuda.cu); stubs report the missing build. */
int coop_backend_cuda_create(int device, coop_backend **out);
/* Number of GPUs visible (0 when none or no CUDA build); never fails. */
int coop_cuda_device_count(void);
/* Name of GPU dev into name[len]; 0 on success. */
int coop_cuda_device_name(int dev, char *name, size_t len);
/* SMs of GPU dev and the shared memory a block may opt into (bytes); 0 on success. */
int coop_cuda_device_shape(int dev, int *sms, int *smem_block);
/* PCI bus id of GPU dev into id[len] (tells GPUs apart across CUDA_VISIBLE_DEVICES). */
int coop_cuda_device_busid(int dev, char *id, size_t len);
/* Halo faces through NCCL (tune.halo = nccl; kernels/halo_nccl.c, configure
 * --with-nccl): point-to-point sends and receives queued on the backend's
 * stream, so an exchange needs no host round trip and reaches other nodes.
 * coop_nccl_built: 1 when this build has NCCL. coop_nccl_open: a communicator
 * over comm's ranks, each on its current GPU, collective over comm, with
 * each of this rank's nf faces (at most 6: send[i] and recv[i], bytes[i],
 * with rank peer[i]) exchanged once, so that NCCL's connections are made
 * there and not in the first exchange; it ends within a bounded time on
 * every rank, with the same outcome on all (a rank whose NCCL setup fails
 * or stalls fails them all), and without NCCL it is an input error. coop_nccl_exchange: queue on b's stream, as one group, for i <
 * n, send[i] (bytes) to rank peer[i] and the receive of recv[i] from it.
 * coop_nccl_close accepts NULL; the caller has waited for its queued work. */
int coop_nccl_built(void);
int coop_nccl_open(MPI_Comm comm, int nf, const int *peer, void *const *send, void *const *recv,
                   const size_t *bytes, void **nc);
int coop_nccl_exchange(coop_backend *b, void *nc, int n, const int *peer, void *const *send,
                       void *const *recv, size_t bytes);
void coop_nccl_close(void *nc);

/* Whether GPU dev can map the memory of the GPU at PCI bus id peer: *ok 1
 * (yes), 0 (no), -1 (that GPU is not visible to this process: unknown). */
int coop_cuda_peer_access(int dev, const char *peer, int *ok);

#ifdef __cplusplus
}
#endif
#endif
