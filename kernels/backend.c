#include "kernels/backend.h"

#include <stdlib.h>
#include <string.h>

#include "coop_build.h"
#include "core/error.h"

int coop_backend_create(const char *name, int device, coop_backend **out) {
  *out = NULL;
  if (strcmp(name, "host") == 0) return coop_backend_host_create(out);
  if (strcmp(name, "cuda") == 0) return coop_backend_cuda_create(device, out);
  return COOP_ERROR(COOP_ERR_RUNTIME, "unknown backend '%s'", name);
}

void coop_backend_destroy(coop_backend *b) {
  if (b && b->destroy) b->destroy(b);
}

#if !COOP_HAVE_CUDA
int coop_backend_cuda_create(int device, coop_backend **out) {
  (void)device;
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
int coop_cuda_device_shape(int dev, int *sms, int *smem_block) {
  (void)dev;
  *sms = *smem_block = 0;
  return COOP_ERROR(COOP_ERR_RUNTIME, "this build has no CUDA");
}
int coop_cuda_device_busid(int dev, char *id, size_t len) {
  return coop_cuda_device_name(dev, id, len);
}
int coop_cuda_peer_access(int dev, const char *peer, int *ok) {
  (void)dev;
  (void)peer;
  *ok = 0;
  return COOP_ERROR(COOP_ERR_RUNTIME, "this build has no CUDA");
}
#endif
