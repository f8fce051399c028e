/* One checking macro for CUDA runtime calls and launches: a failure becomes a
 * run-time fault naming the call and the CUDA error. */
#ifndef COOP_CUDA_CHECK_CUH
#define COOP_CUDA_CHECK_CUH

#include <cuda_runtime.h>

#include "core/error.h"

#define COOP_CUDA(call)                                                               \
  do {                                                                                \
    cudaError_t coop_c_ = (call);                                                     \
    if (coop_c_ != cudaSuccess)                                                       \
      return coop_error_raise(COOP_ERR_RUNTIME, __FILE__, __LINE__, "%s failed: %s (%s)", \
                              #call, cudaGetErrorString(coop_c_), cudaGetErrorName(coop_c_)); \
  } while (0)

/* After a kernel launch: launch-configuration errors show up here. */
#define COOP_CUDA_LAUNCHED() COOP_CUDA(cudaGetLastError())

#endif
