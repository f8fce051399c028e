/* The Poisson stencil on one rank's box: -lap(u) = f, 5-point (2D) or 7-point
 * (3D), one Jacobi sweep, and the residual. Fields are stored with ghost layers
 * (x fastest); the host versions live in stencil_host.c, the CUDA ones in
 * stencil.cu, and the solver reaches both through kernels/backend.h. */
#ifndef COOP_STENCIL_H
#define COOP_STENCIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { COOP_FP64 = 0, COOP_FP32 = 1 } coop_precision;

typedef struct {
  int ndim;
  coop_precision prec;
  int64_t n[3];    /* owned points per axis, x first; n[2] = 1 in 2D */
  int64_t g[3];    /* ghost width per axis (0 on z in 2D) */
  int64_t ext[3];  /* stored points per axis: n + 2g */
  double w[3];     /* 1/h^2 per axis, 0 on unused axes */
  double inv_diag; /* 1 / (2 sum w) */
} coop_stencil;

/* A box of points in local coordinates (0 = first owned point; ghosts are
 * negative or >= n), half-open [lo, hi) per axis. */
typedef struct {
  int64_t lo[3], hi[3];
} coop_region;

/* Fill s for a box of n owned points with ghost width g and spacings h. */
void coop_stencil_init(coop_stencil *s, int ndim, coop_precision prec, const int64_t n[3],
                       int g, const double h[3]);
size_t coop_stencil_points(const coop_stencil *s);   /* stored points */
size_t coop_stencil_elem_size(const coop_stencil *s); /* 8 or 4 */
/* Storage index of local point (i, j, k). */
static inline int64_t coop_stencil_index(const coop_stencil *s, int64_t i, int64_t j, int64_t k) {
  return (i + s->g[0]) + s->ext[0] * ((j + s->g[1]) + s->ext[1] * (k + s->g[2]));
}
int64_t coop_region_points(const coop_region *r);
/* The owned points. */
coop_region coop_region_owned(const coop_stencil *s);

/* Host (CPU) versions, the reference. Arrays are stored fields of s->prec.
 * unew = (f + sum_a w_a (u[-e_a] + u[+e_a])) * inv_diag on the region. */
int coop_jacobi_sweep_host(const coop_stencil *s, const coop_region *r, const void *u, void *unew,
                           const void *f);
/* Sum over owned points of (f - A u)^2, accumulated in double. */
int coop_residual_host(const coop_stencil *s, const void *u, const void *f, double *sumsq);
/* Copy the region of u to/from a contiguous buffer (x fastest). */
int coop_pack_host(const coop_stencil *s, const coop_region *r, const void *u, void *buf);
int coop_unpack_host(const coop_stencil *s, const coop_region *r, void *u, const void *buf);

#ifdef __cplusplus
}
#endif
#endif
