/* Cartesian decomposition of a 2D/3D box of interior points over MPI ranks.
 * Arrays are indexed by axis, x first (0 = x, 1 = y, 2 = z); in 2D axis 2 has
 * one point and one rank. */
#ifndef COOP_DECOMP_H
#define COOP_DECOMP_H

#include <mpi.h>
#include <stdint.h>

typedef struct {
  int ndim;
  int64_t global_n[3]; /* interior points per axis */
  int dims[3];         /* ranks per axis */
  int coords[3];       /* this rank's position */
  int64_t n[3];        /* points owned by this rank */
  int64_t offset[3];   /* global index of its first point */
  int nbr_lo[3], nbr_hi[3]; /* neighbour ranks in cart, MPI_PROC_NULL at the boundary */
  MPI_Comm cart;       /* Cartesian communicator, rank order = input order */
} coop_decomp;

/* Split n points into parts pieces as evenly as possible: piece coord gets
 * *count points starting at *offset (the first n % parts pieces get one more). */
void coop_decomp_split(int64_t n, int parts, int coord, int64_t *count, int64_t *offset);

/* Choose ranks per axis for size ranks: MPI_Dims_create's factors, the largest
 * given to the longest axis. Pure; dims is x-first. */
int coop_decomp_dims(int size, int ndim, const int64_t global_n[3], int dims[3]);

/* Collective over comm. min_points: the fewest points a rank may own per axis
 * (the ghost width); a grid too small for the ranks is a COOP_ERR_INPUT. */
int coop_decomp_create(coop_decomp *d, MPI_Comm comm, int ndim, const int64_t global_n[3],
                       int64_t min_points);
void coop_decomp_destroy(coop_decomp *d);

#endif
