/* The cuda backend: one GPU, one non-blocking stream, device memory, pinned
 * staging, events for split-phase waits, and what the device can do. Execution
 * modes are the solvers' choice, made from what this reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/cuda_check.cuh"
#include "kernels/stencil_cuda.h"

namespace {

struct Ctx {
  cudaStream_t stream;
  cudaEvent_t ev[COOP_EVENTS];
  cudaEvent_t order; /* fork (main) or join (side): the point the other stream waits for */
};

Ctx *ctx_of(coop_backend *b) { return (Ctx *)b->ctx; }

int cu_alloc(coop_backend *b, void **p, size_t bytes) {
  (void)b;
  *p = NULL;
  COOP_CUDA(cudaMalloc(p, bytes ? bytes : 1));
  return 0;
}

void cu_release(coop_backend *b, void *p) {
  (void)b;
  if (p) cudaFree(p);
}

int cu_alloc_host(coop_backend *b, void **p, size_t bytes) {
  (void)b;
  *p = NULL;
  COOP_CUDA(cudaMallocHost(p, bytes ? bytes : 1));
  return 0;
}

void cu_release_host(coop_backend *b, void *p) {
  (void)b;
  if (p) cudaFreeHost(p);
}

int cu_upload(coop_backend *b, void *dst, const void *src, size_t bytes) {
  if (!bytes) return 0;
  COOP_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx_of(b)->stream));
  COOP_CUDA(cudaStreamSynchronize(ctx_of(b)->stream));
  return 0;
}

int cu_download(coop_backend *b, void *dst, const void *src, size_t bytes) {
  if (!bytes) return 0;
  COOP_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx_of(b)->stream));
  COOP_CUDA(cudaStreamSynchronize(ctx_of(b)->stream));
  return 0;
}

static_assert(sizeof(cudaIpcMemHandle_t) == COOP_IPC_HANDLE_BYTES, "IPC handle size");

int cu_ipc_export(coop_backend *b, void *p, void *handle) {
  (void)b;
  COOP_CUDA(cudaIpcGetMemHandle((cudaIpcMemHandle_t *)handle, p));
  return 0;
}

int cu_ipc_open(coop_backend *b, const void *handle, void **p) {
  (void)b;
  cudaIpcMemHandle_t h;
  memcpy(&h, handle, sizeof h);
  *p = NULL;
  /* peer access over NVLink where the peer is another GPU */
  COOP_CUDA(cudaIpcOpenMemHandle(p, h, cudaIpcMemLazyEnablePeerAccess));
  return 0;
}

void cu_ipc_close(coop_backend *b, void *p) {
  (void)b;
  if (p) cudaIpcCloseMemHandle(p);
}

int cu_copy(coop_backend *b, void *dst, const void *src, size_t bytes) {
  if (!bytes) return 0;
  COOP_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, ctx_of(b)->stream));
  return 0;
}

int cu_sync(coop_backend *b) {
  COOP_CUDA(cudaStreamSynchronize(ctx_of(b)->stream));
  return 0;
}

int cu_event_record(coop_backend *b, int slot) {
  if (slot < 0 || slot >= COOP_EVENTS) return COOP_ERROR(COOP_ERR_RUNTIME, "event slot %d", slot);
  COOP_CUDA(cudaEventRecord(ctx_of(b)->ev[slot], ctx_of(b)->stream));
  return 0;
}

int cu_event_wait(coop_backend *b, int slot) {
  if (slot < 0 || slot >= COOP_EVENTS) return COOP_ERROR(COOP_ERR_RUNTIME, "event slot %d", slot);
  COOP_CUDA(cudaEventSynchronize(ctx_of(b)->ev[slot]));
  return 0;
}

int cu_pack(coop_backend *b, const coop_grid *gr, const coop_region *r, const void *u, void *buf) {
  return coop_pack_cuda(gr, r, u, buf, ctx_of(b)->stream);
}

int cu_unpack(coop_backend *b, const coop_grid *gr, const coop_region *r, void *u,
              const void *buf) {
  return coop_unpack_cuda(gr, r, u, buf, ctx_of(b)->stream);
}

/* fork and join: called on the main backend; b->side holds the side stream */
int cu_fork(coop_backend *b) {
  Ctx *m = ctx_of(b), *sd = ctx_of(b->side);
  COOP_CUDA(cudaEventRecord(m->order, m->stream));
  COOP_CUDA(cudaStreamWaitEvent(sd->stream, m->order, 0));
  return 0;
}

int cu_join(coop_backend *b) {
  Ctx *m = ctx_of(b), *sd = ctx_of(b->side);
  COOP_CUDA(cudaEventRecord(sd->order, sd->stream));
  COOP_CUDA(cudaStreamWaitEvent(m->stream, sd->order, 0));
  return 0;
}

void cu_destroy(coop_backend *b) {
  if (!b) return;
  cu_destroy(b->side);
  Ctx *c = ctx_of(b);
  if (b->scratch) cudaFree(b->scratch);
  if (b->scratch_host) cudaFreeHost(b->scratch_host);
  if (c) {
    for (int i = 0; i < COOP_EVENTS; i++)
      if (c->ev[i]) cudaEventDestroy(c->ev[i]);
    if (c->order) cudaEventDestroy(c->order);
    if (c->stream) cudaStreamDestroy(c->stream);
    free(c);
  }
  free(b);
}

int setup(coop_backend *b, int device, Ctx *c) {
  int count = 0;
  COOP_CUDA(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count)
    return COOP_ERROR(COOP_ERR_RUNTIME, "GPU %d requested but %d visible", device, count);
  b->device = device;
  COOP_CUDA(cudaSetDevice(device));
  COOP_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
  for (int i = 0; i < COOP_EVENTS; i++)
    COOP_CUDA(cudaEventCreateWithFlags(&c->ev[i], cudaEventDisableTiming));
  COOP_CUDA(cudaEventCreateWithFlags(&c->order, cudaEventDisableTiming));
  b->stream = c->stream;
  COOP_CUDA(cudaMalloc((void **)&b->scratch, COOP_SCRATCH_DOUBLES * sizeof(double)));
  COOP_CUDA(cudaMallocHost((void **)&b->scratch_host, COOP_SCRATCH_DOUBLES * sizeof(double)));
  COOP_CUDA(cudaDeviceGetAttribute(&b->sm_count, cudaDevAttrMultiProcessorCount, device));
  COOP_CUDA(cudaDeviceGetAttribute(&b->cooperative, cudaDevAttrCooperativeLaunch, device));
  int l2 = 0;
  COOP_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  b->l2_bytes = l2;
  return 0;
}

/* The side view: the same tables and device, its own stream and events, no
 * scratch of its own (reductions run on the main stream) and no side. */
int make_side(coop_backend *b) {
  coop_backend *v = (coop_backend *)calloc(1, sizeof *v);
  Ctx *c = (Ctx *)calloc(1, sizeof *c);
  if (!v || !c) {
    free(v);
    free(c);
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  }
  *v = *b;
  v->ctx = c;
  v->scratch = v->scratch_host = NULL;
  v->side = NULL;
  v->fork = v->join = NULL;
  b->side = v;
  COOP_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
  v->stream = c->stream;
  for (int i = 0; i < COOP_EVENTS; i++)
    COOP_CUDA(cudaEventCreateWithFlags(&c->ev[i], cudaEventDisableTiming));
  COOP_CUDA(cudaEventCreateWithFlags(&c->order, cudaEventDisableTiming));
  return 0;
}

}  // namespace

extern "C" int coop_backend_cuda_create(int device, coop_backend **out) {
  coop_backend *b = (coop_backend *)calloc(1, sizeof *b);
  Ctx *c = (Ctx *)calloc(1, sizeof *c);
  *out = NULL;
  if (!b || !c) {
    free(b);
    free(c);
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  }
  b->ctx = c;
  b->name = "cuda";
  b->device_memory = 1;
  b->alloc = cu_alloc;
  b->release = cu_release;
  b->alloc_host = cu_alloc_host;
  b->release_host = cu_release_host;
  b->upload = cu_upload;
  b->download = cu_download;
  b->sync = cu_sync;
  b->event_record = cu_event_record;
  b->event_wait = cu_event_wait;
  b->pack = cu_pack;
  b->unpack = cu_unpack;
  b->ipc_export = cu_ipc_export;
  b->ipc_open = cu_ipc_open;
  b->ipc_close = cu_ipc_close;
  b->copy = cu_copy;
  b->destroy = cu_destroy;
  b->fork = cu_fork;
  b->join = cu_join;
  int rc = setup(b, device, c);
  if (!rc) rc = make_side(b);
  if (rc) {
    cu_destroy(b);
    return coop_error_trace(rc, __FILE__, __LINE__);
  }
  *out = b;
  return 0;
}

extern "C" int coop_cuda_device_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

extern "C" int coop_cuda_device_shape(int dev, int *sms, int *smem_block) {
  *sms = *smem_block = 0;
  COOP_CUDA(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
  COOP_CUDA(cudaDeviceGetAttribute(smem_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  return 0;
}

extern "C" int coop_cuda_device_busid(int dev, char *id, size_t len) {
  COOP_CUDA(cudaDeviceGetPCIBusId(id, (int)len, dev));
  return 0;
}

extern "C" int coop_cuda_peer_access(int dev, const char *peer, int *ok) {
  int pd = -1;
  *ok = -1;
  /* a GPU hidden by CUDA_VISIBLE_DEVICES has no ordinal here: unknown, and
   * the mapping itself (agreed by every rank) decides */
  const cudaError_t e = cudaDeviceGetByPCIBusId(&pd, peer);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  if (pd == dev) { /* the same GPU: nothing to map across */
    *ok = 1;
    return 0;
  }
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, dev, pd) != cudaSuccess) {
    (void)cudaGetLastError(); /* not left for a later launch check to find */
    return 0;                 /* unknown: the mapping decides */
  }
  *ok = can != 0;
  return 0;
}

extern "C" int coop_cuda_device_name(int dev, char *name, size_t len) {
  cudaDeviceProp p;
  COOP_CUDA(cudaGetDeviceProperties(&p, dev));
  snprintf(name, len, "%s", p.name);
  return 0;
}
