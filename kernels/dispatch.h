/* Dispatch of an operation to the backend that holds its data: the host form
 * where the backend's memory is the host's, else the CUDA form, which a build
 * without CUDA does not compile (a device backend there is a program fault). */
#ifndef COOP_DISPATCH_H
#define COOP_DISPATCH_H

#include "coop_build.h"
#include "core/error.h"

#if COOP_HAVE_CUDA
#define COOP_DISPATCH(be, host_call, cuda_call) ((be)->device_memory ? (cuda_call) : (host_call))
#else
#define COOP_DISPATCH(be, host_call, cuda_call) ((be)->device_memory ? coop_no_cuda() : (host_call))
/* The fault of a device backend in a build without CUDA. */
static inline int coop_no_cuda(void) {
  return COOP_ERROR(COOP_ERR_RUNTIME, "a device backend in a build without CUDA");
}
#endif

#endif
