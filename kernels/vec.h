/* Distributed vectors and their BLAS-1 operations, on any backend. A vector is
 * this rank's n entries (fp64 or fp32) in backend memory; reductions span the
 * vector's communicator. The dispatch (kernels/vec_api.c) checks arguments once and
 * runs the backend's version: kernels/vec_host.c on the CPU, kernels/vec.cu on
 * a GPU. Reductions accumulate in double and sum in a fixed order (per-block
 * partials, then one pass over them; no floating-point atomics), so a rerun on
 * the same ranks and GPUs repeats every bit. */
#ifndef COOP_VEC_H
#define COOP_VEC_H

#include <mpi.h>
#include <stdint.h>

#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  coop_backend *be;
  coop_precision prec;
  int64_t n;        /* entries on this rank */
  int64_t n_global; /* entries on all ranks */
  MPI_Comm comm;    /* the ranks sharing the vector (not owned) */
  void *data;       /* backend memory, n elements of prec */
} coop_vec;

/* Collective over comm (sums n). Entries are not initialised. */
int coop_vec_create(coop_backend *be, MPI_Comm comm, coop_precision prec, int64_t n,
                    coop_vec **out);
/* A vector like x (not collective); entries not initialised. */
int coop_vec_duplicate(const coop_vec *x, coop_vec **out);
void coop_vec_destroy(coop_vec *v); /* accepts NULL */

/* From/to host arrays of n doubles (converted to/from fp32 where needed). */
int coop_vec_upload(coop_vec *x, const double *host);
int coop_vec_download(const coop_vec *x, double *host);

int coop_vec_set(coop_vec *x, double a);                         /* x = a */
int coop_vec_copy(coop_vec *y, const coop_vec *x);               /* y = x */
int coop_vec_scale(coop_vec *x, double a);                       /* x = a x */
int coop_vec_axpy(coop_vec *y, double a, const coop_vec *x);     /* y = y + a x */
int coop_vec_aypx(coop_vec *y, double a, const coop_vec *x);     /* y = x + a y */
int coop_vec_waxpby(coop_vec *w, double a, const coop_vec *x, double b,
                    const coop_vec *y);                          /* w = a x + b y */
int coop_vec_pointwise_mult(coop_vec *w, const coop_vec *x, const coop_vec *y); /* w = x .* y */

/* Split-phase reductions: begin queues up to COOP_RED_MAX dot products of this
 * rank as backend work (a GPU keeps computing what is queued after it); end
 * waits for them only, then sums over the ranks with one MPI_Allreduce. A
 * norm is sqrt of dot(x, x). At most COOP_EVENTS - 1 reductions are open at
 * once (slot picks one, 0 to COOP_EVENTS - 2): the blocking dot and norm use
 * slot COOP_EVENTS - 1, and the slots are the backend's events. */
#define COOP_RED_MAX 4
typedef struct {
  coop_backend *be;
  MPI_Comm comm;
  int slot, count, open;
  double value[COOP_RED_MAX]; /* results after end */
  double *dev;                /* on a GPU: the rank-local results, left in device memory */
} coop_reduction;

/* x[i] . y[i] for i < k in one pass over the data where the backend can. */
int coop_vec_mdot_begin(coop_reduction *r, int slot, int k, const coop_vec *const x[],
                        const coop_vec *const y[]);
int coop_vec_reduce_end(coop_reduction *r, double *out); /* out[k] */
int coop_vec_dot(const coop_vec *x, const coop_vec *y, double *out); /* blocking */
int coop_vec_norm(const coop_vec *x, double *out);                   /* 2-norm, blocking */

/* dst[i] = src[idx[i]] for i < m: gathers the entries other ranks need
 * (idx is backend memory, int32, set up once by the caller). */
int coop_vec_gather(coop_backend *be, coop_precision prec, int64_t m, const int32_t *idx,
                    const void *src, void *dst);

/* ---- backend versions (called by kernels/vec_api.c only) ---- */
/* Host: plain loops; the reduction sums in index order. */
int coop_vec_axpby_host(coop_precision p, int64_t n, double a, const void *x, double b,
                        const void *y, void *w); /* w = a x + b y; x or y may be NULL (0) */
int coop_vec_mult_host(coop_precision p, int64_t n, const void *x, const void *y, void *w);
int coop_vec_mdot_host(coop_precision p, int64_t n, int k, const void *const x[],
                       const void *const y[], double *out);
int coop_vec_gather_host(coop_precision p, int64_t m, const int32_t *idx, const void *src,
                         void *dst);
int coop_vec_set_host(coop_precision p, int64_t n, double a, void *x);
/* to_double = 0: doubles in, elements of p out; 1: elements of p in, doubles out. */
int coop_vec_convert_host(coop_precision p, int64_t n, const void *in, void *out, int to_double);
/* CUDA (kernels/vec.cu): pointers are device memory, stream a cudaStream_t. */
int coop_vec_axpby_cuda(coop_precision p, int64_t n, double a, const void *x, double b,
                        const void *y, void *w, void *stream);
int coop_vec_set_cuda(coop_precision p, int64_t n, double a, void *x, void *stream);
int coop_vec_mult_cuda(coop_precision p, int64_t n, const void *x, const void *y, void *w,
                       void *stream);
/* k dots into result[k] (device); partials holds COOP_VEC_PARTIALS * k doubles. */
#define COOP_VEC_PARTIALS 1024
int coop_vec_mdot_cuda(coop_precision p, int64_t n, int k, const void *const x[],
                       const void *const y[], double *partials, double *result, void *stream);
/* Copy k reduction results (device) to host memory (pinned) on the stream, async. */
int coop_vec_result_to_host_cuda(const double *dev, double *host, int k, void *stream);
int coop_vec_gather_cuda(coop_precision p, int64_t m, const int32_t *idx, const void *src,
                         void *dst, void *stream);

#ifdef __cplusplus
}
#endif
#endif
