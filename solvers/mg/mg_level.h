/* The multigrid hierarchy of a Poisson grid problem (vertex-centred, as
 * problem/poisson.h stores it: interior points with the Dirichlet boundary
 * one spacing outside) and the operations a cycle is made of. Level 0 is the
 * problem's grid; level l + 1 keeps every other point of level l along the
 * axes it coarsens (points 1, 3, 5, ...), so any size coarsens: an even count
 * leaves one short interval at the high end, and every level carries its own
 * interval lengths per axis, from which its operator is rediscretised
 * (finite differences on the nonuniform tensor grid) and its transfers are
 * built (linear interpolation by position; restriction its volume-weighted
 * transpose, so the cycle is symmetric). The operations sit behind a table
 * (coop_mg_ops) so that another backend can supply its own; the host table
 * (solvers/mg/mg_host.c) works on plain arrays with ghost layers, the layout
 * of core/grid.h, in the field's precision.
 *
 * Ranks: a level coarsens globally (it keeps global points 1, 3, 5, ...), so
 * each rank's box of it is the coarse points inside its fine box and every
 * level's decomposition follows from the fine one. The per-axis arrays
 * (intervals, coefficients, transfer weights) are global on every rank, a few
 * numbers a grid line. The levels stay split while every rank's box keeps
 * COOP_MG_SPLIT_MIN points along each split axis and the level
 * COOP_MG_SPLIT_POINTS in all; from the first that does not (h->gather) they
 * live whole on the decomposition's rank 0, the single-rank code runs them
 * there, and the transfers across that boundary gather f and scatter u. */
#ifndef COOP_MG_LEVEL_H
#define COOP_MG_LEVEL_H

#include <stdint.h>

#include "core/decomp.h"
#include "core/grid.h"
#include "kernels/backend.h"
#include "kernels/halo.h"
#include "kernels/stencil.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Coarsening stops at a level with at most this many points, solved exactly. */
#define COOP_MG_COARSE_MAX 2048
#define COOP_MG_MAX_LEVELS 48
/* Below these a split level would be mostly halo and messages (and a box
 * could be empty): it is gathered instead. */
#define COOP_MG_SPLIT_MIN 4
#define COOP_MG_SPLIT_POINTS 4096

typedef enum { COOP_MG_RBGS = 0, COOP_MG_JACOBI = 1 } coop_mg_smoother;
typedef enum { COOP_MG_V = 0, COOP_MG_W = 1, COOP_MG_F = 2 } coop_mg_cycle_type;

typedef struct {
  coop_grid grid;    /* layout of this rank's u, f, r (level 0 may have wider ghosts) */
  int64_t N[3];      /* points of the whole level per axis (1 on unused axes) */
  int64_t off[3];    /* global index of local point 0 (0 on a level held whole) */
  /* the per-axis arrays below are global: indexed by global point index */
  double *gap[3];    /* interval lengths along each axis: N[a] + 1 (gap[a][i] ends at point i) */
  double *vol[3];    /* (gap[i] + gap[i + 1]) / 2: the 1D control volume of point i */
  double *wl[3], *wr[3]; /* operator coefficients toward the lower and upper neighbour */
  int coarsened[3];  /* axis a is coarsened to the next level */
  /* to the next level, per axis and fine index i: the two coarse parents
   * (clamped in range, weight 0 where there is none), interpolation weights p
   * and restriction weights q = p vol_f / vol_c */
  int64_t *par[3][2];
  double *p[3][2], *q[3][2];
  /* the same read the other way, per axis and coarse index I: the fine
   * points that restrict into I (up to 3, ascending) and their weights q, so
   * each coarse value is summed in one order whatever the decomposition */
  int *nkid[3];
  int64_t *kid[3];
  double *kq[3];
  double shift;      /* the operator is shift I + A (the implicit heat step), else 0 */
  void *u, *f, *r;   /* backend memory; u's ghosts hold the boundary values */
  int own_u, own_f;  /* 1: allocated here (level 0 may borrow the solver's) */
  int has_halo;      /* 1: split over ranks, halo the plan of its ghosts */
  coop_halo halo;
} coop_mg_level;

/* The boundary between the last split level and the first gathered one. */
typedef struct {
  /* this rank's share, packed x fastest (no ghosts, no padding): the coarse
   * points inside its box, that it restricts into and sends (f), and the
   * coarse parents its fine points read, that it receives (u) */
  coop_mg_level fbox, ubox;
  /* the root: per rank of the decomposition, counts and offsets in
   * elements, the regions in the whole level, and the packed messages */
  int *fcount, *fdispl, *ucount, *udispl;
  coop_region *freg, *ureg;
  void *fall, *uall;
} coop_mg_bridge;

typedef struct coop_mg_ops coop_mg_ops;

typedef struct {
  int nlev;
  coop_mg_level lev[COOP_MG_MAX_LEVELS];
  coop_precision prec;
  int ndim;
  coop_mg_smoother smoother;
  double omega;       /* weighted Jacobi's weight */
  int pre, post;      /* sweeps before and after the coarse correction */
  /* 1: the post-smoother is the pre-smoother's adjoint (black then red), so
   * the cycle is a symmetric operator (cg's preconditioner); 0: red then
   * black both times, which converges faster as a solver of its own */
  int symmetric;
  coop_mg_cycle_type cycle;
  const coop_mg_ops *ops;
  /* the coarsest level's exact solve: banded Cholesky of the symmetric form
   * (volume times operator), points numbered with the longest axis slowest */
  int64_t cn, bw, cstride[3];
  double *chol, *cwork;
  /* ranks: levels 0 .. gather - 1 split like the fine grid, gather ..
   * nlev - 1 whole on the root (rank 0 of comm); one rank: gather = nlev */
  MPI_Comm comm; /* the decomposition's (not owned); MPI_COMM_NULL: one rank */
  int size, root, gather;
  int dims[3], coords[3]; /* ranks per axis, this rank's place */
  coop_mg_bridge bridge;
  void *ctx; /* the ops' own state (the GPUs' copies of split levels); NULL: the host's */
} coop_mg_hier;

/* The level operations, one backend's. Level l's arrays as above; every
 * function returns a status. */
struct coop_mg_ops {
  const char *name;
  /* sweeps of the smoother on level l; reverse = 1 runs each sweep in the
   * opposite order (black then red), the adjoint of the forward sweep */
  int (*smooth)(const coop_mg_hier *h, int l, int sweeps, int reverse);
  /* r = f - A u on level l; sumsq non-NULL: the sum of r^2 (in double), over
   * every rank */
  int (*residual)(const coop_mg_hier *h, int l, double *sumsq);
  /* f(l + 1) = R r(l), u(l + 1) = 0 (l + 1 = gather: onto the root) */
  int (*restrict_residual)(const coop_mg_hier *h, int l);
  /* u(l) += P u(l + 1) (l + 1 = gather: from the root) */
  int (*prolong_add)(const coop_mg_hier *h, int l);
  /* u = A^-1 f on the coarsest level */
  int (*coarse_solve)(const coop_mg_hier *h);
};

extern const coop_mg_ops coop_mg_ops_host;

/* The levels below a fine grid (s->grid: axes, this rank's owned points,
 * precision) whose operator is s (w = 1/h^2 per axis), over decomposition d
 * (NULL: one rank, s->grid the whole grid; be: the backend of the halo
 * buffers, used where d has several ranks). u0, f0: level 0's arrays laid
 * out as s->grid, in be's memory (never touched here; NULL: allocated here
 * in host memory, zeroed; a zero right-hand side is a zeroed f). The caller sets the smoother, sweeps and
 * cycle. Fails with COOP_ERR_INPUT when no axis has 2 points or more (nothing
 * to coarsen). Not collective (every rank derives the same levels). */
int coop_mg_hier_create(coop_mg_hier *h, const coop_stencil *s, const coop_decomp *d, coop_backend *be,
                        void *u0, void *f0);
void coop_mg_hier_destroy(coop_mg_hier *h); /* accepts a half-built one */

/* The operator shift I + A on every level (shift >= 0; the backward Euler
 * step of the heat equation: shift = 1 / (alpha dt)), the coarsest level's
 * factor made again. Not collective. */
int coop_mg_hier_set_shift(coop_mg_hier *h, double shift);

/* Level 0's f = shift u + src on the owned points, the implicit heat step's
 * right-hand side from the field (src: laid out as level 0, host memory;
 * NULL: no source). Host levels. Not collective. */
void coop_mg_shifted_rhs_host(const coop_mg_hier *h, const void *src);

/* The transfers across the gather on the host, for a backend whose split
 * levels live elsewhere: the root collects the ranks' bridge.fbox.f (each
 * rank's restriction into its box) into level gather's f (and zeroes its
 * u); the root sends each rank its bridge.ubox.u (the parents of its fine
 * points). Collective over h->comm. */
int coop_mg_gather_f(const coop_mg_hier *h);
int coop_mg_scatter_u(const coop_mg_hier *h);

/* One cycle of h->cycle on level l (0: the whole grid) for A u = f, from u.
 * Collective over h->comm. */
int coop_mg_cycle(const coop_mg_hier *h, int l);

/* b = S^-1 b on the coarsest level (b in the band's numbering, cstride). */
void coop_mg_coarse_band_solve(const coop_mg_hier *h, double *b);

/* Points of level l, on all ranks. */
int64_t coop_mg_level_points(const coop_mg_hier *h, int l);

#ifdef __cplusplus
}
#endif
#endif
