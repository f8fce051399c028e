/* Sparse matrix-vector product on the CPU: the reference. Each row is summed
 * in index order, then added to (or stored in) its entry of y. */
#include "kernels/csr.h"

int coop_csr_spmv_host(const coop_csr *A, const double *x, double *y, int add) {
  const int64_t *restrict rp = A->rowptr;
  const int32_t *restrict ci = A->colind;
  const double *restrict v = A->val;
  const int32_t *restrict rows = A->rows;
  for (int64_t i = 0; i < A->nrows; i++) {
    double s = 0.0;
    for (int64_t j = rp[i]; j < rp[i + 1]; j++) s += v[j] * x[ci[j]];
    const int64_t r = rows ? rows[i] : i;
    y[r] = add ? y[r] + s : s;
  }
  return 0;
}
