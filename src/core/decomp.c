#include "core/decomp.h"

#include "core/comm.h"

void coop_decomp_split(int64_t n, int parts, int coord, int64_t *count, int64_t *offset) {
  const int64_t base = n / parts, extra = n % parts;
  *count = base + (coord < extra ? 1 : 0);
  *offset = (int64_t)coord * base + (coord < extra ? coord : extra);
}

int coop_decomp_dims(int size, int ndim, const int64_t global_n[3], int dims[3]) {
  int f[3] = {0, 0, 0}, order[3];
  COOP_MPI(MPI_Dims_create(size, ndim, f)); /* non-increasing factors */
  /* axes by length, longest first; among equal lengths the slower axis
   * first (z, y, x): its cut faces are whole rows or planes, contiguous in
   * memory; with the fused halo kernel a cut across y also measured faster
   * than one across x (see bench/results/) */
  for (int a = 0; a < ndim; a++) order[a] = ndim - 1 - a; /* the sort below is stable */
  for (int a = 1; a < ndim; a++)
    for (int b = a; b > 0 && global_n[order[b]] > global_n[order[b - 1]]; b--) {
      const int t = order[b];
      order[b] = order[b - 1];
      order[b - 1] = t;
    }
  dims[0] = dims[1] = dims[2] = 1;
  for (int a = 0; a < ndim; a++) dims[order[a]] = f[a];
  return 0;
}

static int check_fits(const coop_decomp *d, int64_t min_points) {
  static const char axis[] = "xyz";
  for (int a = 0; a < d->ndim; a++)
    if (d->global_n[a] / d->dims[a] < min_points)
      return coop_error_input("grid.n%c = %lld: too small for %d ranks (split over %d ranks along %c it "
                              "leaves a rank fewer than %lld point(s), the ghost width)", axis[a],
                              (long long)d->global_n[a], d->dims[0] * d->dims[1] * d->dims[2], d->dims[a], axis[a],
                              (long long)min_points);
  return 0;
}

int coop_decomp_create(coop_decomp *d, MPI_Comm comm, int ndim, const int64_t global_n[3],
                       int64_t min_points) {
  int size, cdims[3], periods[3] = {0, 0, 0}, ccoords[3], rank;
  d->cart = MPI_COMM_NULL;
  d->ndim = ndim;
  for (int a = 0; a < 3; a++) d->global_n[a] = a < ndim ? global_n[a] : 1;
  COOP_MPI(MPI_Comm_size(comm, &size));
  COOP_CHECK(coop_decomp_dims(size, ndim, d->global_n, d->dims));
  COOP_CHECK(check_fits(d, min_points));
  /* Cartesian dim 0 is the slowest axis (z in 3D, y in 2D), so rank order
   * follows the storage order of the global field. */
  for (int c = 0; c < ndim; c++) cdims[c] = d->dims[ndim - 1 - c];
  COOP_MPI(MPI_Cart_create(comm, ndim, cdims, periods, 0, &d->cart));
  COOP_MPI(MPI_Comm_set_errhandler(d->cart, MPI_ERRORS_RETURN));
  COOP_MPI(MPI_Comm_rank(d->cart, &rank));
  COOP_MPI(MPI_Cart_coords(d->cart, rank, ndim, ccoords));
  for (int a = 0; a < 3; a++) {
    d->coords[a] = a < ndim ? ccoords[ndim - 1 - a] : 0;
    coop_decomp_split(d->global_n[a], d->dims[a], d->coords[a], &d->n[a], &d->offset[a]);
    d->nbr_lo[a] = d->nbr_hi[a] = MPI_PROC_NULL;
    if (a < ndim) COOP_MPI(MPI_Cart_shift(d->cart, ndim - 1 - a, 1, &d->nbr_lo[a], &d->nbr_hi[a]));
  }
  return 0;
}

void coop_decomp_destroy(coop_decomp *d) {
  if (d && d->cart != MPI_COMM_NULL) MPI_Comm_free(&d->cart);
}
