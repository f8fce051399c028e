/* The host backend: plain C on the CPU, the reference every other backend is
 * compared with. Work is done when a call returns, so events are no-ops. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/stencil.h"

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
  if (bytes) memcpy(dst, src, bytes);
  return 0;
}

static int host_sync(coop_backend *b) {
  (void)b;
  return 0;
}

static int host_event(coop_backend *b, int slot) {
  (void)b;
  if (slot < 0 || slot >= COOP_EVENTS) return COOP_ERROR(COOP_ERR_RUNTIME, "event slot %d", slot);
  return 0;
}

static int host_pack(coop_backend *b, const coop_grid *gr, const coop_region *r, const void *u,
                     void *buf) {
  (void)b;
  return coop_pack_host(gr, r, u, buf);
}

static int host_unpack(coop_backend *b, const coop_grid *gr, const coop_region *r, void *u,
                       const void *buf) {
  (void)b;
  return coop_unpack_host(gr, r, u, buf);
}

static void host_destroy(coop_backend *b) {
  if (!b) return;
  free(b->scratch);
  free(b);
}

int coop_backend_host_create(coop_backend **out) {
  coop_backend *b = calloc(1, sizeof *b);
  *out = NULL;
  if (!b || !(b->scratch = calloc(COOP_SCRATCH_DOUBLES, sizeof(double)))) {
    free(b);
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  }
  b->name = "host";
  b->device = -1;
  b->scratch_host = b->scratch; /* one memory: no copy needed */
  b->alloc = host_alloc;
  b->release = host_release;
  b->alloc_host = host_alloc;
  b->release_host = host_release;
  b->upload = host_copy;
  b->download = host_copy;
  b->sync = host_sync;
  b->event_record = host_event;
  b->event_wait = host_event;
  b->pack = host_pack;
  b->unpack = host_unpack;
  b->fork = host_sync; /* one stream of work: nothing to order */
  b->join = host_sync;
  b->destroy = host_destroy;
  *out = b;
  return 0;
}
