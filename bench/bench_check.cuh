// The standalone benchmarks' check of a CUDA runtime call: a failure names
// the file, line, call and error, and ends the program (exit 1). The
// library's kernels use kernels/cuda_check.cuh (an error code, no exit).
#ifndef COOP_BENCH_CHECK_CUH
#define COOP_BENCH_CHECK_CUH

#include <cstdio>
#include <cstdlib>

#define CK(call)                                                                               \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));   \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

#endif
