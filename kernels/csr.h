/* A sparse matrix in compressed sparse row form on one backend: this rank's
 * rows, columns numbered locally (a distributed matrix is two of these, the
 * part on owned columns and the part on ghost columns; solvers/op.c joins
 * them). Values are fp64; vectors x and y are fp64. Host versions in
 * csr_host.c, CUDA ones in csr.cu, the dispatch in csr_api.c. */
#ifndef COOP_CSR_H
#define COOP_CSR_H

#include <stdint.h>

#include "core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  coop_backend *be;
  int64_t nrows, ncols, nnz;
  /* Rows this matrix touches: NULL = rows 0..nrows-1 in order; else nrows
   * entries giving the row of y each CSR row adds into (compressed rows: the
   * ghost part has entries in few rows); entries distinct. Backend memory. */
  int32_t *rows;
  int64_t *rowptr; /* nrows + 1, backend memory */
  int32_t *colind; /* nnz, backend memory */
  double *val;     /* nnz, backend memory */
  /* Load balance, chosen at create from the row lengths: rows of very
   * different length are split into equal shares of nonzeros so no warp
   * idles on a short row beside a long one. Backend-private. */
  void *plan;
  int64_t max_row, mean_row_x100; /* longest row; mean row length x 100 */
} coop_csr;

/* Copy host arrays (rowptr[nrows+1], colind[nnz] < ncols, val[nnz], rows[nrows]
 * or NULL) to the backend. *out is malloc'ed; free with coop_csr_destroy. */
int coop_csr_create(coop_backend *be, int64_t nrows, int64_t ncols, const int64_t *rowptr,
                    const int32_t *colind, const double *val, const int32_t *rows,
                    coop_csr **out);
void coop_csr_destroy(coop_csr *A); /* accepts NULL */
/* y = A x (add = 0) or y += A x (add = 1), on A's backend; x has ncols
 * entries, y the rows' range. With rows set, add = 0 zeroes only those rows. */
int coop_csr_spmv(const coop_csr *A, const double *x, double *y, int add);
/* Bytes one spmv moves at least (matrix once, x and y once): for the report. */
double coop_csr_bytes(const coop_csr *A);

/* backend versions (called by kernels/csr.c only) */
int coop_csr_spmv_host(const coop_csr *A, const double *x, double *y, int add);
int coop_csr_plan_cuda(coop_csr *A);   /* builds A->plan; frees with coop_csr_plan_free_cuda */
void coop_csr_plan_free_cuda(coop_csr *A);
int coop_csr_spmv_cuda(const coop_csr *A, const double *x, double *y, int add);

#ifdef __cplusplus
}
#endif
#endif
