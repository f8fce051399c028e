/* The cuda backend: device memory, one stream, and the launch plan (block
 * shape, persistent grid size) chosen from the device and the occupancy API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.cuh"
#include "stencil_cuda.h"

namespace {

struct Ctx {
  int dev;
  cudaStream_t stream;
  int bx, by;           /* block shape */
  int grid_blocks;      /* persistent grid for k sweeps (grid mode) */
  int solve_blocks;     /* persistent grid for the whole solve (grid mode) */
  double *acc;          /* residual accumulator (device) */
  double *acc_host;     /* pinned copy target */
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
  COOP_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx_of(b)->stream));
  COOP_CUDA(cudaStreamSynchronize(ctx_of(b)->stream));
  return 0;
}

int cu_download(coop_backend *b, void *dst, const void *src, size_t bytes) {
  COOP_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx_of(b)->stream));
  COOP_CUDA(cudaStreamSynchronize(ctx_of(b)->stream));
  return 0;
}

int cu_sync(coop_backend *b) {
  COOP_CUDA(cudaStreamSynchronize(ctx_of(b)->stream));
  return 0;
}

int cu_sweeps_launch(coop_backend *b, const coop_stencil *s, const coop_region *regions, int k,
                     void *u, void *unew, const void *f) {
  Ctx *c = ctx_of(b);
  for (int it = 0; it < k; it++) {
    COOP_CHECK(coop_sweep_cuda(s, &regions[it], u, unew, f, c->bx, c->by, c->stream));
    void *t = u;
    u = unew;
    unew = t;
  }
  return 0;
}

int cu_sweeps_grid(coop_backend *b, const coop_stencil *s, const coop_region *regions, int k,
                   void *u, void *unew, const void *f) {
  Ctx *c = ctx_of(b);
  /* one sweep needs no barrier: a plain launch is cheaper */
  if (k == 1) return cu_sweeps_launch(b, s, regions, k, u, unew, f);
  return coop_sweeps_grid_cuda(s, regions, k, u, unew, f, c->bx, c->by, c->grid_blocks, c->stream);
}

int cu_residual(coop_backend *b, const coop_stencil *s, const void *u, const void *f,
                double *sumsq) {
  Ctx *c = ctx_of(b);
  COOP_CUDA(cudaMemsetAsync(c->acc, 0, sizeof(double), c->stream));
  COOP_CHECK(coop_residual_cuda(s, u, f, c->acc, c->bx, c->by, c->stream));
  COOP_CUDA(cudaMemcpyAsync(c->acc_host, c->acc, sizeof(double), cudaMemcpyDeviceToHost, c->stream));
  COOP_CUDA(cudaStreamSynchronize(c->stream));
  *sumsq = *c->acc_host;
  return 0;
}

int cu_pack(coop_backend *b, const coop_stencil *s, const coop_region *r, const void *u,
            void *buf) {
  return coop_pack_cuda(s, r, u, buf, ctx_of(b)->stream);
}

int cu_unpack(coop_backend *b, const coop_stencil *s, const coop_region *r, void *u,
              const void *buf) {
  return coop_unpack_cuda(s, r, u, buf, ctx_of(b)->stream);
}

int zero_state(Ctx *c, coop_grid_state *st) {
  COOP_CUDA(cudaMemsetAsync(st, 0, sizeof *st, c->stream));
  return 0;
}

int fetch_solve(Ctx *c, coop_grid_state *st, long long *hi, double *hr, long long cap,
                coop_solve_ctl *ctl) {
  coop_grid_state h;
  COOP_CUDA(cudaMemcpyAsync(&h, st, sizeof h, cudaMemcpyDeviceToHost, c->stream));
  COOP_CUDA(cudaStreamSynchronize(c->stream));
  const long long n = h.hist_len < cap ? h.hist_len : cap;
  COOP_CUDA(cudaMemcpyAsync(ctl->hist_iter, hi, (size_t)n * sizeof(long long), cudaMemcpyDeviceToHost, c->stream));
  COOP_CUDA(cudaMemcpyAsync(ctl->hist_res, hr, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost, c->stream));
  COOP_CUDA(cudaStreamSynchronize(c->stream));
  ctl->hist_len = n;
  ctl->iterations = h.iterations;
  ctl->r0 = h.r0;
  ctl->rnorm = h.rnorm;
  ctl->reason = h.reason;
  return 0;
}

int cu_solve(coop_backend *b, const coop_stencil *s, void **u, void **unew, const void *f,
             coop_solve_ctl *ctl) {
  Ctx *c = ctx_of(b);
  const long long cap = ctl->hist_cap;
  coop_grid_state *st = NULL;
  long long *hi = NULL;
  double *hr = NULL;
  int rc = 0;
  if ((rc = cu_alloc(b, (void **)&st, sizeof *st)) || (rc = cu_alloc(b, (void **)&hi, cap * sizeof *hi)) ||
      (rc = cu_alloc(b, (void **)&hr, cap * sizeof *hr)))
    goto done;
  if ((rc = zero_state(c, st))) goto done;
  if ((rc = coop_solve_grid_cuda(s, *u, *unew, f, ctl, st, hi, hr, cap, c->bx, c->by,
                                 c->solve_blocks, c->stream)))
    goto done;
  if ((rc = fetch_solve(c, st, hi, hr, cap, ctl))) goto done;
  if (ctl->iterations % 2) {
    void *t = *u;
    *u = *unew;
    *unew = t;
  }
done:
  cu_release(b, st);
  cu_release(b, hi);
  cu_release(b, hr);
  return rc;
}

void cu_destroy(coop_backend *b) {
  if (!b) return;
  Ctx *c = ctx_of(b);
  if (c) {
    if (c->acc) cudaFree(c->acc);
    if (c->acc_host) cudaFreeHost(c->acc_host);
    if (c->stream) cudaStreamDestroy(c->stream);
    free(c);
  }
  free(b);
}

/* Largest co-resident grid for a cooperative kernel, or a clear refusal. */
int plan_grid(const coop_backend_opts *o, Ctx *c, int whole_solve, int *blocks) {
  int per_sm = 0, sms = 0, coop = 0;
  COOP_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c->dev));
  COOP_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, c->dev));
  COOP_CHECK(coop_grid_occupancy(o->s, c->bx, c->by, whole_solve, &per_sm));
  const int most = per_sm * sms;
  if (!coop || most < 1)
    return COOP_ERROR(COOP_ERR_RUNTIME, "GPU %d cannot run a cooperative grid (cooperative launch %s, "
                      "%d blocks resident)", c->dev, coop ? "supported" : "unsupported", most);
  if (o->blocks > most) /* the user's option, so an input error */
    return coop_error_input("run.blocks = %d: at most %d blocks (%d per SM x %d SMs) can be "
                            "resident on GPU %d, and a grid barrier over more could never complete",
                            o->blocks, most, per_sm, sms, c->dev);
  *blocks = o->blocks > 0 ? o->blocks : most;
  return 0;
}

/* auto: one kernel per sweep for large boxes with ghost width 1. On the H200
 * (bench/results/2026-11-29-h200x2-jacobi.md) launch mode beat the persistent
 * whole solve by 18% on 8192^2 and tied on 512^3, while the persistent grid won
 * on 256^2 (3.0 against 4.7 us per sweep): the barrier saves ~2 us per sweep, which
 * only matters where a sweep takes a few microseconds (about 2^20 points).
 * With deep halos (ghost > 1) the persistent k-sweep kernel won at 2 ranks. */
#define COOP_AUTO_GRID_MAX_POINTS (1 << 20)

int auto_prefers_launch(const coop_backend_opts *o) {
  const coop_stencil *s = o->s;
  const double owned = (double)s->n[0] * (double)s->n[1] * (double)s->n[2];
  /* with neighbours and ghost 1 the grid mode would run one sweep per launch anyway */
  return s->g[0] == 1 && (!o->alone || owned > COOP_AUTO_GRID_MAX_POINTS);
}

int set_mode(coop_backend *b, const coop_backend_opts *o, Ctx *c) {
  const int want_grid = strcmp(o->sync, "grid") == 0, is_auto = strcmp(o->sync, "auto") == 0;
  b->mode = "launch";
  b->sweeps = cu_sweeps_launch;
  b->solve = NULL;
  if (!want_grid && !(is_auto && !auto_prefers_launch(o))) return 0;
  int rc = plan_grid(o, c, 0, &c->grid_blocks);
  if (!rc && o->alone) rc = plan_grid(o, c, 1, &c->solve_blocks); /* only then used */
  if (rc && is_auto) { /* auto falls back to one kernel per sweep */
    fprintf(stderr, "coopsolve: note: %s; using sync = launch\n", coop_error_message());
    coop_error_clear();
    return 0;
  }
  COOP_CHECK(rc);
  b->mode = "grid";
  b->sweeps = cu_sweeps_grid;
  b->solve = o->alone ? cu_solve : NULL;
  return 0;
}

int setup(coop_backend *b, const coop_backend_opts *o, Ctx *c) {
  int count = 0;
  COOP_CUDA(cudaGetDeviceCount(&count));
  if (o->device < 0 || o->device >= count)
    return COOP_ERROR(COOP_ERR_RUNTIME, "GPU %d requested but %d visible", o->device, count);
  c->dev = o->device;
  COOP_CUDA(cudaSetDevice(c->dev));
  COOP_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
  COOP_CUDA(cudaMalloc((void **)&c->acc, sizeof(double)));
  COOP_CUDA(cudaMallocHost((void **)&c->acc_host, sizeof(double)));
  coop_cuda_block_shape(o->s->n[0], &c->bx, &c->by);
  return set_mode(b, o, c);
}

}  // namespace

extern "C" int coop_backend_cuda_create(const coop_backend_opts *o, coop_backend **out) {
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
  b->alloc = cu_alloc;
  b->release = cu_release;
  b->device_memory = 1;
  b->alloc_host = cu_alloc_host;
  b->release_host = cu_release_host;
  b->upload = cu_upload;
  b->download = cu_download;
  b->sync = cu_sync;
  b->residual = cu_residual;
  b->pack = cu_pack;
  b->unpack = cu_unpack;
  b->destroy = cu_destroy;
  int rc = setup(b, o, c);
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

extern "C" int coop_cuda_device_busid(int dev, char *id, size_t len) {
  COOP_CUDA(cudaDeviceGetPCIBusId(id, (int)len, dev));
  return 0;
}

extern "C" int coop_cuda_device_name(int dev, char *name, size_t len) {
  cudaDeviceProp p;
  COOP_CUDA(cudaGetDeviceProperties(&p, dev));
  snprintf(name, len, "%s", p.name);
  return 0;
}
