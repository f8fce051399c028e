// The standalone benchmarks' check of a library call (CK: the CUDA runtime):
// a failure names the file, line, call and error, and ends the program (exit 1). The
// library's kernels use kernels/cuda_check.cuh (an error code, no exit).
#ifndef COOP_BENCH_CHECK_CUH
#define COOP_BENCH_CHECK_CUH

#include <cstdio>
#include <cstdlib>

// A failed call of any library: call returns a status of type TYPE, OK on
// success, and TEXT(status) is what the library says of it.
#define BENCH_CHECK(call, TYPE, OK, TEXT)                                                      \
  do {                                                                                         \
    TYPE s_ = (call);                                                                          \
    if (s_ != (OK)) {                                                                          \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, TEXT(s_));                \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)
#define CK(call) BENCH_CHECK(call, cudaError_t, cudaSuccess, cudaGetErrorString)

#endif
