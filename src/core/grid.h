/* The layout of one rank's box of grid points: owned points per axis, a ghost
 * layer of width g around them, x fastest. Regions name boxes of points in
 * local coordinates (0 = first owned point; ghosts are negative or >= n). The
 * stencil operator (kernels/stencil.h) and the halo plan (kernels/halo.h) share it. */
#ifndef COOP_GRID_H
#define COOP_GRID_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { COOP_FP64 = 0, COOP_FP32 = 1 } coop_precision;

typedef struct {
  int ndim;
  coop_precision prec;
  int64_t n[3];   /* owned points per axis, x first; 1 on unused axes */
  int64_t g[3];   /* ghost width per axis (0 on unused axes) */
  int64_t ext[3]; /* stored points per axis: n + 2g (x: padded to 128 bytes) */
} coop_grid;

/* Half-open box [lo, hi) per axis, local coordinates. */
typedef struct {
  int64_t lo[3], hi[3];
} coop_region;

void coop_grid_init(coop_grid *gr, int ndim, coop_precision prec, const int64_t n[3], int g);
size_t coop_grid_points(const coop_grid *gr); /* stored points, ghosts included */
size_t coop_grid_owned(const coop_grid *gr);  /* owned points */
size_t coop_prec_size(coop_precision p);      /* 8 or 4 bytes */
/* Storage index of local point (i, j, k). */
static inline int64_t coop_grid_index(const coop_grid *gr, int64_t i, int64_t j, int64_t k) {
  return (i + gr->g[0]) + gr->ext[0] * ((j + gr->g[1]) + gr->ext[1] * (k + gr->g[2]));
}
int64_t coop_region_points(const coop_region *r);
coop_region coop_region_owned(const coop_grid *gr); /* the owned points */

#ifdef __cplusplus
}
#endif
#endif
