#include "backend.h"

#include <stdlib.h>
#include <string.h>

#include "coop_build.h"
#include "error.h"

int coop_backend_create(const coop_backend_opts *o, coop_backend **out) {
  *out = NULL;
  if (strcmp(o->name, "host") == 0) return coop_backend_host_create(out);
  if (strcmp(o->name, "cuda") == 0) return coop_backend_cuda_create(o, out);
  return COOP_ERROR(COOP_ERR_RUNTIME, "unknown backend '%s'", o->name);
}

void coop_backend_destroy(coop_backend *b) {
  if (b && b->destroy) b->destroy(b);
}

const char *coop_reason_name(int reason) {
  switch (reason) {
    case COOP_REASON_RTOL: return "rtol";
    case COOP_REASON_ATOL: return "atol";
    case COOP_REASON_MAX_ITER: return "max_iter";
    case COOP_REASON_DIVERGED: return "diverged";
    default: return "none";
  }
}


#if !COOP_HAVE_CUDA
int coop_backend_cuda_create(const coop_backend_opts *o, coop_backend **out) {
  (void)o;
  *out = NULL;
  return COOP_ERROR(COOP_ERR_RUNTIME,
                    "backend 'cuda' requested but this build has no CUDA (configure --with-cuda)");
}
int coop_cuda_device_count(void) { return 0; }
int coop_cuda_device_name(int dev, char *name, size_t len) {
  (void)dev;
  if (len) name[0] = '\0';
  return COOP_ERROR(COOP_ERR_RUNTIME, "this build has no CUDA");
}
int coop_cuda_device_busid(int dev, char *id, size_t len) {
  return coop_cuda_device_name(dev, id, len);
}
#endif
