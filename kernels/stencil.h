/* The Poisson operator -lap(u) on one rank's box: 5-point (2D) or 7-point (3D),
 * constant coefficients 1/h^2 per axis. Two forms:
 *  - Jacobi form on stored fields with ghost layers (core/grid.h layout): a
 *    sweep, k sweeps between exchanges, the residual;
 *  - Krylov form on vectors of the owned points only (contiguous, x fastest):
 *    y = A x with points outside the box zero, plus the faces a neighbour
 *    needs and the correction from the faces it sends.
 * Host versions of both forms live in stencil_host.c (bodies in stencil_host_impl.h),
 * CUDA ones in stencil.cu and stencil_krylov.cu; the dispatch (stencil_api.c)
 * picks by backend. */
#ifndef COOP_STENCIL_H
#define COOP_STENCIL_H

#include <stddef.h>
#include <stdint.h>

#include "core/grid.h"
#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most sweeps between two halo exchanges (the largest ghost width, grid.ghost). */
#define COOP_MAX_SWEEPS_PER_EXCHANGE 16

typedef struct {
  coop_grid grid;
  double w[3];     /* 1/h^2 per axis, 0 on unused axes */
  double inv_diag; /* 1 / (2 sum w) */
} coop_stencil;

/* Fill s for a box of n owned points with ghost width g and spacings h. */
void coop_stencil_init(coop_stencil *s, int ndim, coop_precision prec, const int64_t n[3],
                       int g, const double h[3]);

/* ---- Jacobi form (dispatch) ----
 * One relaxation step over region r: unew = u + c (f - A u) (Jacobi: c =
 * inv_diag; explicit heat: c = dt alpha); f NULL: zero, never read. norm
 * (backend memory) non-NULL: set to the sum over r's owned points of
 * (f - A u)^2, the residual of u, computed in the same pass. target: threads
 * the GPU runs at once (sizes the work per thread; ignored on the host). */
int coop_stencil_relax(coop_backend *be, const coop_stencil *s, const coop_region *r, double c,
                       const void *u, void *unew, const void *f, double *norm, long long target);
/* Sum over owned points of (f - A u)^2, accumulated in double. Blocking. */
int coop_stencil_residual(coop_backend *be, const coop_stencil *s, const void *u, const void *f,
                          double *sumsq);

/* ---- Krylov form (dispatch); prec = s->grid.prec ---- */
int coop_stencil_apply(coop_backend *be, const coop_stencil *s, const void *x, void *y);
/* face[a][0]: x's points with index 0 along axis a; face[a][1]: index n_a - 1;
 * each contiguous over the other axes (lower axis fastest). NULL: skipped. */
int coop_stencil_pack_faces(coop_backend *be, const coop_stencil *s, const void *x,
                            void *const face[3][2]);
/* y -= w_a * ghost for the points next to each non-NULL ghost face (ghost[a][0]
 * holds the neighbour's points just below index 0 along a, laid out as face). */
int coop_stencil_add_faces(coop_backend *be, const coop_stencil *s, const void *const ghost[3][2],
                           void *y);
/* Points in face a (the owned points with one index fixed along a). */
int64_t coop_stencil_face_points(const coop_stencil *s, int a);

/* ---- host versions (the reference) ---- */
int coop_relax_host(const coop_stencil *s, const coop_region *r, double c, const void *u,
                    void *unew, const void *f, double *norm);
int coop_residual_host(const coop_stencil *s, const void *u, const void *f, double *sumsq);
/* Copy the region of u to/from a contiguous buffer (x fastest). */
int coop_pack_host(const coop_grid *gr, const coop_region *r, const void *u, void *buf);
int coop_unpack_host(const coop_grid *gr, const coop_region *r, void *u, const void *buf);
int coop_stencil_apply_host(const coop_stencil *s, const void *x, void *y);
int coop_stencil_pack_faces_host(const coop_stencil *s, const void *x, void *const face[3][2]);
int coop_stencil_add_faces_host(const coop_stencil *s, const void *const ghost[3][2], void *y);

/* ---- CUDA versions (kernels/stencil.cu); device pointers, stream a cudaStream_t ---- */
int coop_stencil_apply_cuda(const coop_stencil *s, const void *x, void *y, void *stream);
int coop_stencil_pack_faces_cuda(const coop_stencil *s, const void *x, void *const face[3][2],
                                 void *stream);
int coop_stencil_add_faces_cuda(const coop_stencil *s, const void *const ghost[3][2], void *y,
                                void *stream);

#ifdef __cplusplus
}
#endif
#endif
