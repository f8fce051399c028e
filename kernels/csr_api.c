/* Dispatch of the CSR matrix: checks the host arrays once, copies them to the
 * backend, and runs the backend's product (kernels/csr_host.c, kernels/csr.cu). */
#include <stdlib.h>
#include <string.h>

#include "kernels/csr.h"

#include "coop_build.h"
#include "core/error.h"
#include "kernels/dispatch.h"

/* rowptr nondecreasing from 0, columns in range, rows nonnegative; fills the
 * row-length statistics. */
static int check_arrays(coop_csr *A, const int64_t *rowptr, const int32_t *colind,
                        const int32_t *rows) {
  if (A->nrows < 0 || A->ncols < 0 || A->ncols > (int64_t)INT32_MAX + 1)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_csr_create: %lld x %lld matrix", (long long)A->nrows,
                      (long long)A->ncols);
  if (rowptr[0] != 0)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_csr_create: rowptr[0] = %lld", (long long)rowptr[0]);
  A->max_row = 0;
  for (int64_t i = 0; i < A->nrows; i++) {
    const int64_t len = rowptr[i + 1] - rowptr[i];
    if (len < 0)
      return COOP_ERROR(COOP_ERR_RUNTIME, "coop_csr_create: rowptr decreases at row %lld",
                        (long long)i);
    if (len > A->max_row) A->max_row = len;
    if (rows && rows[i] < 0)
      return COOP_ERROR(COOP_ERR_RUNTIME, "coop_csr_create: rows[%lld] = %d", (long long)i,
                        (int)rows[i]);
  }
  A->nnz = rowptr[A->nrows];
  if (A->nnz > 0 && !colind) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_csr_create: NULL colind");
  for (int64_t j = 0; j < A->nnz; j++)
    if (colind[j] < 0 || colind[j] >= A->ncols)
      return COOP_ERROR(COOP_ERR_RUNTIME,
                        "coop_csr_create: column %d of nonzero %lld (%lld columns)", (int)colind[j],
                        (long long)j, (long long)A->ncols);
  A->mean_row_x100 = A->nrows ? A->nnz * 100 / A->nrows : 0;
  return 0;
}

/* *dst = a backend copy of n bytes at src. */
static int copy_in(coop_backend *be, void **dst, const void *src, size_t n) {
  COOP_CHECK(be->alloc(be, dst, n));
  return be->upload(be, *dst, src, n);
}

static int build(coop_csr *A, const int64_t *rowptr, const int32_t *colind, const double *val,
                 const int32_t *rows) {
  coop_backend *be = A->be;
  COOP_CHECK(check_arrays(A, rowptr, colind, rows));
  const size_t nr = (size_t)A->nrows, nz = (size_t)A->nnz;
  if (A->nnz > 0 && !val) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_csr_create: NULL val");
  COOP_CHECK(copy_in(be, (void **)&A->rowptr, rowptr, (nr + 1) * sizeof *rowptr));
  COOP_CHECK(copy_in(be, (void **)&A->colind, colind, nz * sizeof *colind));
  COOP_CHECK(copy_in(be, (void **)&A->val, val, nz * sizeof *val));
  if (rows) COOP_CHECK(copy_in(be, (void **)&A->rows, rows, nr * sizeof *rows));
  if (!be->device_memory) return 0;
#if COOP_HAVE_CUDA
  return coop_csr_plan_cuda(A);
#else
  return coop_no_cuda();
#endif
}

int coop_csr_create(coop_backend *be, int64_t nrows, int64_t ncols, const int64_t *rowptr,
                    const int32_t *colind, const double *val, const int32_t *rows, coop_csr **out) {
  *out = NULL;
  if (!be || !rowptr) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_csr_create: NULL argument");
  coop_csr *A = calloc(1, sizeof *A);
  if (!A) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  A->be = be;
  A->nrows = nrows;
  A->ncols = ncols;
  const int rc = build(A, rowptr, colind, val, rows);
  if (rc) {
    coop_csr_destroy(A);
    return coop_error_trace(rc, __FILE__, __LINE__);
  }
  *out = A;
  return 0;
}

void coop_csr_destroy(coop_csr *A) {
  if (!A) return;
  coop_backend *be = A->be;
#if COOP_HAVE_CUDA
  if (A->plan) coop_csr_plan_free_cuda(A);
  if (A->tiles) coop_csr_tiles_free_cuda(A);
#endif
  be->release(be, A->rows);
  be->release(be, A->rowptr);
  be->release(be, A->colind);
  be->release(be, A->val);
  free(A);
}

int coop_csr_spmv(const coop_csr *A, const double *x, double *y, int add) {
  if (!A || !y || (!x && A->nnz))
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_csr_spmv: NULL argument");
  if (A->nrows == 0) return 0;
  if (!A->be->device_memory) return coop_csr_spmv_host(A, x, y, add);
#if COOP_HAVE_CUDA
  if (A->schedule != COOP_CSR_SCHED_AUTO) return coop_csr_spmv_tiles_cuda(A, x, y, add, NULL);
  return coop_csr_spmv_cuda(A, x, y, add);
#else
  return coop_no_cuda();
#endif
}

static const char *const sched_names[] = {"auto", "clc", "atomic", "static"};
enum { NSCHED = sizeof sched_names / sizeof *sched_names };

int coop_csr_schedule_parse(const char *name) {
  for (int k = 0; name && k < NSCHED; k++)
    if (strcmp(name, sched_names[k]) == 0) return k;
  return -1;
}

const char *coop_csr_schedule_name(int schedule) {
  return schedule >= 0 && schedule < NSCHED ? sched_names[schedule] : "unknown";
}

int coop_csr_set_schedule(coop_csr *A, int schedule) {
  if (!A || schedule < 0 || schedule >= NSCHED)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_csr_set_schedule: schedule %d", schedule);
  if (!A->be->device_memory) { /* one product loop: nothing to schedule */
    A->schedule = schedule;
    return 0;
  }
#if COOP_HAVE_CUDA
  if (A->tiles) coop_csr_tiles_free_cuda(A);
  A->schedule = COOP_CSR_SCHED_AUTO; /* until the new plan stands */
  if (schedule == COOP_CSR_SCHED_AUTO) return 0;
  COOP_CHECK(coop_csr_tiles_plan_cuda(A, schedule));
  A->schedule = schedule;
  return 0;
#else
  return coop_no_cuda();
#endif
}

/* values and column indices once, rowptr (and rows) once, x once, y once */
double coop_csr_bytes(const coop_csr *A) {
  if (!A) return 0.0;
  double b = (double)A->nnz * (double)(sizeof(double) + sizeof(int32_t));
  b += (double)(A->nrows + 1) * sizeof(int64_t);
  if (A->rows) b += (double)A->nrows * sizeof(int32_t);
  b += (double)A->ncols * sizeof(double) + (double)A->nrows * sizeof(double);
  return b;
}
