/* A backend runs the stencil operations on one device kind: "host" (the CPU
 * reference) or "cuda" (mode "launch": one kernel per sweep; mode "grid": a
 * persistent cooperative kernel per block of sweeps, and the whole solve in one
 * launch when the rank has no neighbours). Solvers are written against this
 * table once. Memory returned by alloc lives on the backend's device. */
#ifndef COOP_BACKEND_H
#define COOP_BACKEND_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "stencil.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most sweeps between two halo exchanges (the largest ghost width, grid.ghost). */
#define COOP_MAX_SWEEPS_PER_EXCHANGE 16

/* Stopping rule and results of a whole solve run inside the backend. */
typedef struct {
  int64_t max_iter, check_every;
  double rtol, atol;
  /* results */
  int64_t iterations;
  double r0, rnorm; /* residual 2-norms: initial and final */
  int reason;       /* coop_reason */
  int64_t hist_cap; /* room in hist_iter/hist_res (caller-owned); past it the
                       last entry is overwritten by the latest check */
  int64_t hist_len; /* residual checks recorded */
  int64_t *hist_iter;
  double *hist_res;
} coop_solve_ctl;

typedef enum {
  COOP_REASON_NONE = 0,
  COOP_REASON_RTOL,
  COOP_REASON_ATOL,
  COOP_REASON_MAX_ITER,
  COOP_REASON_DIVERGED /* NaN or infinite residual */
} coop_reason;

/* Host and device share these two rules (nvcc compiles them for both). */
#ifdef __CUDACC__
#define COOP_HOST_DEVICE __host__ __device__
#else
#define COOP_HOST_DEVICE
#endif

/* The stop test of every backend: a coop_reason, or NONE to go on. */
static inline COOP_HOST_DEVICE int coop_converged(double rnorm, double r0, double rtol,
                                                  double atol) {
  if (!isfinite(rnorm)) return COOP_REASON_DIVERGED;
  if (rnorm <= atol) return COOP_REASON_ATOL;
  if (rnorm <= rtol * r0) return COOP_REASON_RTOL;
  return COOP_REASON_NONE;
}

/* Where residual check number len goes in a history of cap entries: past the
 * cap the last entry is overwritten, so the latest check is always kept. */
static inline COOP_HOST_DEVICE int64_t coop_history_slot(int64_t len, int64_t cap) {
  return len < cap ? len : cap - 1;
}

typedef struct coop_backend coop_backend;
struct coop_backend {
  const char *name; /* "host" or "cuda" */
  const char *mode; /* "host", "launch" or "grid" */
  void *ctx;
  int device_memory; /* 1: alloc returns memory the CPU cannot touch */
  int (*alloc)(coop_backend *b, void **p, size_t bytes);
  void (*release)(coop_backend *b, void *p); /* accepts NULL */
  /* Host memory for staging transfers (pinned where that helps). */
  int (*alloc_host)(coop_backend *b, void **p, size_t bytes);
  void (*release_host)(coop_backend *b, void *p); /* accepts NULL */
  int (*upload)(coop_backend *b, void *dst, const void *src, size_t bytes);
  int (*download)(coop_backend *b, void *dst, const void *src, size_t bytes);
  /* Wait until queued device work is done (before MPI reads device memory). */
  int (*sync)(coop_backend *b);
  /* k sweeps, sweep s over regions[s], ping-ponging u -> unew -> u ...: after
   * an odd k the newest values are in unew. */
  int (*sweeps)(coop_backend *b, const coop_stencil *s, const coop_region *regions, int k,
                void *u, void *unew, const void *f);
  int (*residual)(coop_backend *b, const coop_stencil *s, const void *u, const void *f,
                  double *sumsq);
  int (*pack)(coop_backend *b, const coop_stencil *s, const coop_region *r, const void *u,
              void *buf);
  int (*unpack)(coop_backend *b, const coop_stencil *s, const coop_region *r, void *u,
                const void *buf);
  /* Optional (NULL when absent): the whole Jacobi solve of a rank without
   * neighbours, convergence test included; newest values end in *u. */
  int (*solve)(coop_backend *b, const coop_stencil *s, void **u, void **unew, const void *f,
               coop_solve_ctl *ctl);
  void (*destroy)(coop_backend *b);
};

/* Options for creating a backend. */
typedef struct {
  const char *name;     /* "host" or "cuda" */
  const char *sync;     /* cuda: "auto", "grid" or "launch" */
  int device;           /* cuda: GPU index */
  int blocks;           /* cuda grid mode: persistent blocks, 0 = all that fit */
  const coop_stencil *s; /* the problem the backend will run (sizes launch plans) */
  int alone;             /* 1: the rank has no neighbours (one rank): whole solves run */
} coop_backend_opts;

/* Create a backend; *out is malloc'ed, free with coop_backend_destroy. A cuda
 * request on a build or machine without CUDA is a run-time error naming why. */
int coop_backend_create(const coop_backend_opts *o, coop_backend **out);
void coop_backend_destroy(coop_backend *b); /* accepts NULL */

int coop_backend_host_create(coop_backend **out);
/* In builds with CUDA (kernels/backend_cuda.cu); stubs report the missing build. */
int coop_backend_cuda_create(const coop_backend_opts *o, coop_backend **out);
/* Number of GPUs visible (0 when none or no CUDA build); never fails. */
int coop_cuda_device_count(void);
/* Name of GPU dev into name[len]; 0 on success. */
int coop_cuda_device_name(int dev, char *name, size_t len);
/* PCI bus id of GPU dev into id[len] (tells GPUs apart across CUDA_VISIBLE_DEVICES). */
int coop_cuda_device_busid(int dev, char *id, size_t len);

const char *coop_reason_name(int reason);

#ifdef __cplusplus
}
#endif
#endif
