/* Compares one dataset of two HDF5 files value by value (read as doubles, so
 * fp32 fields convert exactly): prints "same N" when every value is bit for
 * bit equal, else the count that differ and the largest difference, and
 * exits 1. Built on the GPU machine by bench/old_new.sh.
 *   fieldcmp A.h5 B.h5 DATASET */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *read_all(const char *file, const char *name, hsize_t *n) {
  double *v = NULL;
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = f < 0 ? -1 : H5Dopen2(f, name, H5P_DEFAULT);
  hid_t s = d < 0 ? -1 : H5Dget_space(d);
  hssize_t count = s < 0 ? -1 : H5Sget_simple_extent_npoints(s);
  if (count >= 0 && (v = malloc((size_t)count * sizeof *v + 1)) &&
      H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
    free(v);
    v = NULL;
  }
  *n = count < 0 ? 0 : (hsize_t)count;
  if (s >= 0) H5Sclose(s);
  if (d >= 0) H5Dclose(d);
  if (f >= 0) H5Fclose(f);
  if (!v) fprintf(stderr, "fieldcmp: %s: cannot read %s\n", file, name);
  return v;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: fieldcmp A.h5 B.h5 DATASET\n");
    return 2;
  }
  (void)H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* our one-line message instead of the stack */
  hsize_t na, nb;
  double *a = read_all(argv[1], argv[3], &na), *b = read_all(argv[2], argv[3], &nb);
  if (!a || !b) return 2;
  if (na != nb) {
    printf("differ: %llu values against %llu\n", (unsigned long long)na, (unsigned long long)nb);
    return 1;
  }
  hsize_t ndiff = 0;
  double dmax = 0.0, amax = 0.0;
  for (hsize_t i = 0; i < na; i++) {
    if (memcmp(&a[i], &b[i], sizeof a[i]) != 0) ndiff++;
    const double d = fabs(a[i] - b[i]);
    if (d > dmax || d != d) dmax = d;
    if (fabs(a[i]) > amax) amax = fabs(a[i]);
  }
  if (ndiff == 0) {
    printf("same %llu\n", (unsigned long long)na);
    return 0;
  }
  printf("differ: %llu of %llu values, max |a - b| %.3e (max |a| %.3e)\n", (unsigned long long)ndiff,
         (unsigned long long)na, dmax, amax);
  return 1;
}
