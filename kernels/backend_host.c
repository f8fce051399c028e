/* The host backend: plain C on the CPU, the reference every other backend is
 * compared with. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "error.h"

static int host_alloc(coop_backend *b, void **p, size_t bytes) {
  (void)b;
  *p = malloc(bytes ? bytes : 1);
  if (!*p) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory (%zu bytes)", bytes);
  return 0;
}

static void host_release(coop_backend *b, void *p) {
  (void)b;
  free(p);
}

static int host_copy(coop_backend *b, void *dst, const void *src, size_t bytes) {
  (void)b;
  memcpy(dst, src, bytes);
  return 0;
}

static int host_sync(coop_backend *b) {
  (void)b;
  return 0;
}

static int host_sweeps(coop_backend *b, const coop_stencil *s, const coop_region *regions, int k,
                       void *u, void *unew, const void *f) {
  (void)b;
  for (int it = 0; it < k; it++) {
    COOP_CHECK(coop_jacobi_sweep_host(s, &regions[it], u, unew, f));
    void *t = u;
    u = unew;
    unew = t;
  }
  return 0;
}

static int host_residual(coop_backend *b, const coop_stencil *s, const void *u, const void *f,
                         double *sumsq) {
  (void)b;
  return coop_residual_host(s, u, f, sumsq);
}

static int host_pack(coop_backend *b, const coop_stencil *s, const coop_region *r, const void *u,
                     void *buf) {
  (void)b;
  return coop_pack_host(s, r, u, buf);
}

static int host_unpack(coop_backend *b, const coop_stencil *s, const coop_region *r, void *u,
                       const void *buf) {
  (void)b;
  return coop_unpack_host(s, r, u, buf);
}

static void host_destroy(coop_backend *b) { free(b); }

int coop_backend_host_create(coop_backend **out) {
  coop_backend *b = calloc(1, sizeof *b);
  if (!b) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  b->name = "host";
  b->mode = "host";
  b->alloc = host_alloc;
  b->release = host_release;
  b->device_memory = 0;
  b->alloc_host = host_alloc;
  b->release_host = host_release;
  b->upload = host_copy;
  b->download = host_copy;
  b->sync = host_sync;
  b->sweeps = host_sweeps;
  b->residual = host_residual;
  b->pack = host_pack;
  b->unpack = host_unpack;
  b->solve = NULL;
  b->destroy = host_destroy;
  *out = b;
  return 0;
}
