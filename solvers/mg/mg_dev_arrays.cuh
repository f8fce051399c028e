/* Device arrays made one by one and freed together: the GPU copies of a
 * multigrid hierarchy (solvers/mg/mg_cuda.cu, mg_split.cu). */
#ifndef COOP_MG_DEV_ARRAYS_CUH
#define COOP_MG_DEV_ARRAYS_CUH

#include "kernels/cuda_check.cuh"
#include "solvers/mg/mg_level.h"

struct coop_mg_dev_arrays {
  void *p[COOP_MG_MAX_LEVELS * 40 + 16];
  int n;
};

static inline int coop_mg_dalloc(coop_mg_dev_arrays *a, void **p, size_t bytes) {
  if (a->n == (int)(sizeof a->p / sizeof a->p[0]))
    return COOP_ERROR(COOP_ERR_RUNTIME, "multigrid: too many device arrays");
  COOP_CUDA(cudaMalloc(p, bytes ? bytes : 1));
  a->p[a->n++] = *p;
  return 0;
}

/* *out = a device copy of the n host values at src (NULL: *out = NULL); T is
 * S or const S. */
template <class S, class T>
static int coop_mg_dcopy(coop_mg_dev_arrays *a, const S *src, size_t n, T **out) {
  static_assert(sizeof(S) == sizeof(T), "coop_mg_dcopy: one element type");
  *out = NULL;
  if (!src) return 0;
  void *p;
  COOP_CHECK(coop_mg_dalloc(a, &p, n * sizeof(S)));
  COOP_CUDA(cudaMemcpy(p, src, n * sizeof(S), cudaMemcpyHostToDevice));
  *out = (T *)p;
  return 0;
}

static inline void coop_mg_dfree(coop_mg_dev_arrays *a) {
  for (int i = 0; i < a->n; i++) cudaFree(a->p[i]);
  a->n = 0;
}

#endif
