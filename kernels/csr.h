/* A sparse matrix in compressed sparse row form on one backend: this rank's
 * rows, columns numbered locally (a distributed matrix is two of these, the
 * part on owned columns and the part on ghost columns; solvers/op.c joins
 * them). Values are fp64; vectors x and y are fp64. Host versions in
 * csr_host.c, CUDA ones in csr.cu, the dispatch in csr_api.c. */
#ifndef COOP_CSR_H
#define COOP_CSR_H

#include <stdint.h>

#include "kernels/backend.h"

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
  /* How a device product shares the rows out (coop_csr_schedule): auto = the
   * plan above; the others = row tiles as work items (csr_tiles.cu), with
   * their own backend-private plan in tiles. The host product ignores it. */
  int schedule;
  void *tiles;
} coop_csr;

/* The device product's schedule; values and names ("auto", "clc", "atomic",
 * "static") as tune.csr_schedule spells them. */
typedef enum {
  COOP_CSR_SCHED_AUTO = 0, /* vector or merge-path plan, chosen from the rows */
  COOP_CSR_SCHED_CLC,      /* a block per tile, cluster launch control steals (cc >= 10.0) */
  COOP_CSR_SCHED_ATOMIC,   /* persistent blocks, next tile from an atomic counter */
  COOP_CSR_SCHED_STATIC    /* persistent blocks, block g takes tiles g, g + G, ... */
} coop_csr_schedule;

/* The value of a schedule's name, or -1. */
int coop_csr_schedule_parse(const char *name);
const char *coop_csr_schedule_name(int schedule); /* "unknown" outside the enum */

/* Sizes of a matrix's tile plan (for reports and the benchmark). */
typedef struct {
  int lanes, passes;       /* threads per ordinary row; block passes per tile */
  int64_t tile_rows, tiles;
  int64_t blocks;          /* blocks a launch takes (clc: one per tile) */
} coop_csr_tile_shape;

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
/* Choose A's schedule (coop_csr_schedule). On a device backend static, atomic
 * and clc build the tile plan; clc on a GPU below cc 10.0, or running code
 * JIT-compiled from PTX older than compute_100, is COOP_ERR_INPUT (the message
 * names tune.csr_schedule and the GPU's cc). The host backend records it and
 * computes as always: every schedule gives the host the same product. */
int coop_csr_set_schedule(coop_csr *A, int schedule);

/* backend versions (called by kernels/csr_api.c, and by bench/csr_sched.c) */
int coop_csr_spmv_host(const coop_csr *A, const double *x, double *y, int add);
int coop_csr_plan_cuda(coop_csr *A);   /* builds A->plan; frees with coop_csr_plan_free_cuda */
void coop_csr_plan_free_cuda(coop_csr *A);
int coop_csr_spmv_cuda(const coop_csr *A, const double *x, double *y, int add);
/* The tile product (csr_tiles.cu): plan for a schedule other than auto (freed
 * with coop_csr_tiles_free_cuda), its sizes, and the product. busy: NULL, or
 * device memory of be->sm_count doubles, to which each block adds the seconds
 * from its start to the end of its last tile on the SM it ran on. */
int coop_csr_tiles_plan_cuda(coop_csr *A, int schedule);
void coop_csr_tiles_free_cuda(coop_csr *A);
int coop_csr_tile_shape_cuda(const coop_csr *A, coop_csr_tile_shape *out);
int coop_csr_spmv_tiles_cuda(const coop_csr *A, const double *x, double *y, int add, double *busy);

#ifdef __cplusplus
}
#endif
#endif
