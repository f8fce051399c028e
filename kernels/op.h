/* Linear operators y = A x on distributed vectors (kernels/vec.h): the Poisson
 * stencil (matrix-free, 5/7-point, over the Cartesian decomposition) and a
 * distributed CSR matrix (rows in blocks over the ranks). Both exchange the
 * entries other ranks own in two halves, so the local part of the product
 * overlaps the transfer: begin (pack, post MPI), local product, end (wait),
 * then the part that needs the received entries. With device memory and an
 * MPI that is not CUDA-aware, the transfers are staged through pinned host
 * buffers. */
#ifndef COOP_OP_H
#define COOP_OP_H

#include <mpi.h>
#include <stdint.h>

#include "core/decomp.h"
#include "kernels/backend.h"
#include "kernels/csr.h"
#include "kernels/stencil.h"
#include "kernels/vec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { COOP_OP_STENCIL = 0, COOP_OP_CSR = 1 } coop_op_kind;

typedef struct {
  coop_op_kind kind;
  coop_backend *be;
  MPI_Comm comm; /* not owned */
  coop_precision prec;
  int64_t n, n_global; /* rows (= columns) here and on all ranks */
  int staged;          /* 1: transfers go through host buffers */
  double bytes;        /* bytes one apply moves at least on this rank */
  double *diag;        /* host copy of the diagonal, n entries */
  /* stencil */
  coop_stencil s;
  int nbr[3][2];
  size_t face_bytes[3];
  void *fsend[3][2], *frecv[3][2]; /* backend memory */
  void *hsend[3][2], *hrecv[3][2]; /* host staging or NULL */
  /* csr */
  int64_t row_lo;       /* global index of the first row here */
  coop_csr *loc, *gh;   /* owned columns; ghost columns (compressed rows) */
  int64_t nghost, nsend;
  int nnbr;                      /* ranks this row block talks to */
  int *nbr_rank;                 /* nnbr */
  int *send_off, *recv_off;      /* nnbr + 1: neighbour i's entries run to i + 1 */
  int32_t *send_idx;           /* backend memory, nsend */
  double *dsend, *dghost;      /* backend memory */
  double *hsendbuf, *hghost;   /* host staging or NULL */
  /* exchange in flight */
  MPI_Request *req; /* room for every message of one exchange */
  int nreq;
} coop_op;

/* Stencil operator on the box of decomposition d (comm = d->cart), vectors of
 * s->grid.n points (owned only, x fastest). Collective. */
int coop_op_create_stencil(coop_backend *be, const coop_decomp *d, const coop_stencil *s,
                           int cuda_aware, coop_op **out);
/* CSR operator: this rank's rows [row_lo, row_lo + n) of an n_global-square
 * matrix, host arrays rowptr[n+1] (local), colind (global column indices) and
 * val. Collective over comm. */
int coop_op_create_csr(coop_backend *be, MPI_Comm comm, int64_t row_lo, int64_t n,
                       int64_t n_global, const int64_t *rowptr, const int64_t *colind,
                       const double *val, int cuda_aware, coop_op **out);
void coop_op_destroy(coop_op *A); /* accepts NULL */
/* The schedule of a CSR operator's products (coop_csr_schedule, both parts:
 * coop_csr_set_schedule says what each backend does with it). Rank-local; a
 * stencil operator has none (COOP_ERR_RUNTIME). */
int coop_op_set_schedule(coop_op *A, int schedule);

int coop_op_exchange_begin(coop_op *A, const coop_vec *x);
int coop_op_exchange_end(coop_op *A);
/* y = A x: begin, the local product, end, the received part. Collective. */
int coop_op_apply(coop_op *A, const coop_vec *x, coop_vec *y);
/* r = b - A x. Collective. */
int coop_op_residual(coop_op *A, const coop_vec *b, const coop_vec *x, coop_vec *r);
/* d = the diagonal of A. */
int coop_op_diagonal(const coop_op *A, coop_vec *d);

#ifdef __cplusplus
}
#endif
#endif
