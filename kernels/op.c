/* Operators: dispatch of apply/residual/diagonal to the stencil or CSR kernels,
 * and the exchange of the entries other ranks own. */
#include "kernels/op.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/error.h"
#include "kernels/halo.h"

/* Every rank learns the worst status of all (a rank that did not fail gets a
 * message saying another did). Building the CSR plan takes several
 * collectives, and a rank that fails before one of them must not leave the
 * others waiting in it: each step agrees first. Errors return from MPI here
 * (the communicator of a run is set to MPI_ERRORS_RETURN). */
static int agreed(MPI_Comm comm, int rc) {
  int worst = rc;
  const int e = MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm);
  if (e != MPI_SUCCESS) return rc ? rc : coop_error_mpi(e, "MPI_Allreduce", __FILE__, __LINE__);
  if (worst && !rc) return coop_error_remote(worst, "stopped because another rank failed");
  return worst;
}

static int op_alloc(coop_op **out) {
  *out = calloc(1, sizeof **out);
  if (!*out) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  return 0;
}

/* ---------------- stencil ---------------- */

static int stencil_buffers(coop_op *A) {
  coop_backend *be = A->be;
  for (int a = 0; a < A->s.grid.ndim; a++) {
    A->face_bytes[a] = (size_t)coop_stencil_face_points(&A->s, a) * coop_prec_size(A->prec);
    if (A->face_bytes[a] > (size_t)INT_MAX)
      return COOP_ERROR(COOP_ERR_RUNTIME, "a face along axis %d is %zu bytes, more than one MPI "
                        "message carries: use more ranks", a, A->face_bytes[a]);
    COOP_CHECK(coop_halo_face_buffers(be, A->nbr[a], A->face_bytes[a], A->staged, A->fsend[a], A->frecv[a],
                                      A->hsend[a], A->hrecv[a]));
  }
  return 0;
}

int coop_op_create_stencil(coop_backend *be, const coop_decomp *d, const coop_stencil *s,
                           int cuda_aware, coop_op **out) {
  coop_op *A;
  COOP_CHECK(op_alloc(&A));
  *out = A;
  A->kind = COOP_OP_STENCIL;
  A->be = be;
  A->comm = d->cart;
  A->s = *s;
  A->prec = s->grid.prec;
  A->n = (int64_t)coop_grid_owned(&s->grid);
  A->n_global = d->global_n[0] * d->global_n[1] * d->global_n[2];
  A->staged = be->device_memory && !cuda_aware;
  if (!(A->req = malloc(12 * sizeof *A->req))) /* a face each way on each axis */
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  for (int a = 0; a < 3; a++) {
    A->nbr[a][0] = a < d->ndim ? d->nbr_lo[a] : MPI_PROC_NULL;
    A->nbr[a][1] = a < d->ndim ? d->nbr_hi[a] : MPI_PROC_NULL;
  }
  /* reads x once and writes y once; the faces are small */
  A->bytes = 2.0 * (double)A->n * (double)coop_prec_size(A->prec);
  if (!(A->diag = malloc((size_t)A->n * sizeof *A->diag + 1)))
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  const double diag = 2.0 * (s->w[0] + s->w[1] + s->w[2]);
  for (int64_t i = 0; i < A->n; i++) A->diag[i] = diag;
  return stencil_buffers(A);
}

/* tag: what the lo neighbour sends towards hi carries 2a+1, and back 2a */
static int stencil_begin(coop_op *A, const coop_vec *x) {
  coop_backend *be = A->be;
  void *face[3][2] = {{0}};
  int any = 0;
  A->nreq = 0;
  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++)
      if (A->nbr[a][side] != MPI_PROC_NULL) face[a][side] = A->fsend[a][side], any = 1;
  if (!any) return 0;
  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++) {
      if (A->nbr[a][side] == MPI_PROC_NULL) continue;
      void *rbuf = A->staged ? A->hrecv[a][side] : A->frecv[a][side];
      COOP_MPI(MPI_Irecv(rbuf, (int)A->face_bytes[a], MPI_BYTE, A->nbr[a][side],
                         2 * a + (side ? 0 : 1), A->comm, &A->req[A->nreq++]));
    }
  COOP_CHECK(coop_stencil_pack_faces(be, &A->s, x->data, face));
  COOP_CHECK(be->sync(be)); /* MPI or the copies below read the packed faces */
  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++) {
      if (A->nbr[a][side] == MPI_PROC_NULL) continue;
      void *sbuf = A->fsend[a][side];
      if (A->staged) {
        COOP_CHECK(be->download(be, A->hsend[a][side], A->fsend[a][side], A->face_bytes[a]));
        sbuf = A->hsend[a][side];
      }
      COOP_MPI(MPI_Isend(sbuf, (int)A->face_bytes[a], MPI_BYTE, A->nbr[a][side],
                         2 * a + (side ? 1 : 0), A->comm, &A->req[A->nreq++]));
    }
  return 0;
}

static int stencil_end(coop_op *A) {
  if (!A->nreq) return 0;
  COOP_MPI(MPI_Waitall(A->nreq, A->req, MPI_STATUSES_IGNORE));
  A->nreq = 0;
  if (!A->staged) return 0;
  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++)
      if (A->nbr[a][side] != MPI_PROC_NULL)
        COOP_CHECK(A->be->upload(A->be, A->frecv[a][side], A->hrecv[a][side], A->face_bytes[a]));
  return 0;
}

static int stencil_ghost_part(coop_op *A, coop_vec *y) {
  const void *ghost[3][2] = {{0}};
  int any = 0;
  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++)
      if (A->nbr[a][side] != MPI_PROC_NULL) ghost[a][side] = A->frecv[a][side], any = 1;
  return any ? coop_stencil_add_faces(A->be, &A->s, ghost, y->data) : 0;
}

/* ---------------- CSR ---------------- */

static int cmp_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Rank owning global row g, given every rank's first row (starts[size] = n_global). */
static int owner_of(const int64_t *starts, int size, int64_t g) {
  int lo = 0, hi = size - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (starts[mid] <= g) lo = mid; else hi = mid - 1;
  }
  return lo;
}

/* Sorted distinct ghost columns of this rank. */
static int find_ghosts(const coop_op *A, const int64_t *colind, int64_t nnz, int64_t **ghosts,
                       int64_t *ng) {
  int64_t *g = malloc((size_t)nnz * sizeof *g + 1), m = 0;
  if (!g) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  for (int64_t k = 0; k < nnz; k++)
    if (colind[k] < A->row_lo || colind[k] >= A->row_lo + A->n) g[m++] = colind[k];
  qsort(g, (size_t)m, sizeof *g, cmp_i64);
  int64_t u = 0;
  for (int64_t k = 0; k < m; k++)
    if (!u || g[k] != g[u - 1]) g[u++] = g[k];
  *ghosts = g;
  *ng = u;
  return 0;
}

/* Tell each owner which of its rows we need; learn which of ours others need.
 * Collective; the ranks agree before each exchange, so a failure on one rank
 * (memory, a count past what an MPI message holds) stops them all there. */
static int plan_exchange(coop_op *A, const int64_t *ghosts, const int64_t *starts, int size) {
  int *need = calloc((size_t)size, sizeof *need), *give = calloc((size_t)size, sizeof *give);
  int *sdisp = calloc((size_t)size + 1, sizeof *sdisp), *rdisp = calloc((size_t)size + 1, sizeof *rdisp);
  int64_t *want = NULL;
  int rc = 0;
  if (!need || !give || !sdisp || !rdisp) rc = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  else if (A->nghost > INT_MAX)
    rc = COOP_ERROR(COOP_ERR_RUNTIME, "%lld ghost columns on one rank: at most 2^31 - 1 (use more "
                    "ranks)", (long long)A->nghost);
  if ((rc = agreed(A->comm, rc))) goto done;
  for (int64_t k = 0; k < A->nghost; k++) need[owner_of(starts, size, ghosts[k])]++;
  if ((rc = MPI_Alltoall(need, 1, MPI_INT, give, 1, MPI_INT, A->comm)) != MPI_SUCCESS) {
    rc = coop_error_mpi(rc, "MPI_Alltoall", __FILE__, __LINE__);
    goto done;
  }
  for (int r = 0; r < size && !rc; r++) {
    sdisp[r + 1] = sdisp[r] + need[r];
    if ((int64_t)rdisp[r] + give[r] > INT_MAX)
      rc = COOP_ERROR(COOP_ERR_RUNTIME, "other ranks need more than 2^31 - 1 entries of this "
                      "rank's rows (use more ranks)");
    else
      rdisp[r + 1] = rdisp[r] + give[r];
  }
  if (!rc) A->nsend = rdisp[size];
  if (!rc && !(want = malloc((size_t)A->nsend * sizeof *want + 1)))
    rc = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if ((rc = agreed(A->comm, rc))) goto done;
  if ((rc = MPI_Alltoallv(ghosts, need, sdisp, MPI_INT64_T, want, give, rdisp, MPI_INT64_T, A->comm)) != MPI_SUCCESS) {
    rc = coop_error_mpi(rc, "MPI_Alltoallv", __FILE__, __LINE__);
    goto done;
  }
  /* neighbours: ranks we receive from or send to; one list, in rank order */
  int count = 0;
  for (int r = 0; r < size; r++) count += need[r] || give[r];
  A->nbr_rank = malloc(((size_t)count + 1) * sizeof *A->nbr_rank);
  A->send_off = malloc(((size_t)count + 1) * sizeof *A->send_off);
  A->recv_off = malloc(((size_t)count + 1) * sizeof *A->recv_off);
  A->req = malloc(((size_t)2 * count + 1) * sizeof *A->req);
  if (!A->nbr_rank || !A->send_off || !A->recv_off || !A->req) {
    rc = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
    goto done;
  }
  A->nnbr = 0;
  for (int r = 0; r < size && !rc; r++) {
    if (!need[r] && !give[r]) continue;
    A->nbr_rank[A->nnbr] = r;
    A->recv_off[A->nnbr] = sdisp[r];
    A->send_off[A->nnbr] = rdisp[r];
    A->nnbr++;
  }
  /* offsets of neighbour i run to offset i+1; the last ends at the totals */
  A->recv_off[A->nnbr] = (int)A->nghost;
  A->send_off[A->nnbr] = (int)A->nsend;
  if (!rc) {
    int32_t *idx = malloc((size_t)A->nsend * sizeof *idx + 1);
    if (!idx) { rc = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory"); goto done; }
    for (int64_t k = 0; k < A->nsend; k++) idx[k] = (int32_t)(want[k] - A->row_lo);
    coop_backend *be = A->be;
    if (!(rc = be->alloc(be, (void **)&A->send_idx, (size_t)A->nsend * sizeof *idx)))
      rc = be->upload(be, A->send_idx, idx, (size_t)A->nsend * sizeof *idx);
    free(idx);
  }
done:
  free(need);
  free(give);
  free(sdisp);
  free(rdisp);
  free(want);
  return rc;
}

/* Split the rows into the owned-column part and the ghost-column part. */
static int split_matrix(coop_op *A, const int64_t *rowptr, const int64_t *colind, const double *val,
                        const int64_t *ghosts) {
  const int64_t n = A->n, nnz = rowptr[n];
  int64_t *lp = malloc(((size_t)n + 1) * sizeof *lp), *gp = malloc(((size_t)n + 1) * sizeof *gp);
  int32_t *lc = malloc((size_t)nnz * sizeof *lc + 1), *gc = malloc((size_t)nnz * sizeof *gc + 1);
  int32_t *grows = malloc((size_t)n * sizeof *grows + 1);
  double *lv = malloc((size_t)nnz * sizeof *lv + 1), *gv = malloc((size_t)nnz * sizeof *gv + 1);
  int rc = 0;
  if (!lp || !gp || !lc || !gc || !grows || !lv || !gv) { rc = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory"); goto done; }
  int64_t nl = 0, ng = 0, gr = 0;
  lp[0] = gp[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t before = ng;
    A->diag[i] = 0.0;
    for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) {
      const int64_t c = colind[k];
      if (c >= A->row_lo && c < A->row_lo + n) {
        lc[nl] = (int32_t)(c - A->row_lo);
        lv[nl++] = val[k];
        if (c == A->row_lo + i) A->diag[i] += val[k];
      } else {
        const int64_t *hit = bsearch(&c, ghosts, (size_t)A->nghost, sizeof *ghosts, cmp_i64);
        gc[ng] = (int32_t)(hit - ghosts);
        gv[ng++] = val[k];
      }
    }
    lp[i + 1] = nl;
    if (ng > before) {
      grows[gr] = (int32_t)i;
      gp[++gr] = ng;
    }
  }
  rc = coop_csr_create(A->be, n, n, lp, lc, lv, NULL, &A->loc);
  if (!rc && gr) rc = coop_csr_create(A->be, gr, A->nghost, gp, gc, gv, grows, &A->gh);
done:
  free(lp); free(gp); free(lc); free(gc); free(grows); free(lv); free(gv);
  return rc;
}

static int csr_buffers(coop_op *A) {
  coop_backend *be = A->be;
  COOP_CHECK(be->alloc(be, (void **)&A->dsend, (size_t)A->nsend * sizeof(double)));
  COOP_CHECK(be->alloc(be, (void **)&A->dghost, (size_t)A->nghost * sizeof(double)));
  if (!A->staged) return 0;
  COOP_CHECK(be->alloc_host(be, (void **)&A->hsendbuf, (size_t)A->nsend * sizeof(double)));
  COOP_CHECK(be->alloc_host(be, (void **)&A->hghost, (size_t)A->nghost * sizeof(double)));
  return 0;
}

int coop_op_create_csr(coop_backend *be, MPI_Comm comm, int64_t row_lo, int64_t n,
                       int64_t n_global, const int64_t *rowptr, const int64_t *colind,
                       const double *val, int cuda_aware, coop_op **out) {
  coop_op *A = NULL;
  int size = 0, rc;
  int64_t *starts = NULL, *ghosts = NULL;
  /* what one rank alone can fail at comes before the first collective, and the
   * ranks agree on it there: no rank is left waiting in the gather */
  rc = op_alloc(&A);
  *out = A;
  if (!rc) {
    A->kind = COOP_OP_CSR;
    A->be = be;
    A->comm = comm;
    A->prec = COOP_FP64;
    A->n = n;
    A->n_global = n_global;
    A->row_lo = row_lo;
    A->staged = be->device_memory && !cuda_aware;
    if (n > INT_MAX)
      rc = COOP_ERROR(COOP_ERR_RUNTIME, "%lld rows on one rank: at most 2^31 - 1 (use more ranks)",
                      (long long)n);
  }
  if (!rc && (rc = MPI_Comm_size(comm, &size)) != MPI_SUCCESS)
    rc = coop_error_mpi(rc, "MPI_Comm_size", __FILE__, __LINE__);
  if (!rc && (!(starts = malloc(((size_t)size + 1) * sizeof *starts)) ||
              !(A->diag = malloc((size_t)n * sizeof *A->diag + 1))))
    rc = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (!rc) rc = find_ghosts(A, colind, rowptr[n], &ghosts, &A->nghost);
  if (!(rc = agreed(comm, rc))) {
    rc = MPI_Allgather(&row_lo, 1, MPI_INT64_T, starts, 1, MPI_INT64_T, comm);
    if (rc != MPI_SUCCESS) rc = coop_error_mpi(rc, "MPI_Allgather", __FILE__, __LINE__);
    else starts[size] = n_global;
  }
  if (!rc) rc = plan_exchange(A, ghosts, starts, size);
  if (!rc) rc = split_matrix(A, rowptr, colind, val, ghosts);
  if (!rc) rc = csr_buffers(A);
  if (!rc) A->bytes = coop_csr_bytes(A->loc) + (A->gh ? coop_csr_bytes(A->gh) : 0.0);
  free(starts);
  free(ghosts);
  /* every rank returns the same status: the first apply exchanges with all */
  return agreed(comm, rc);
}

static int csr_begin(coop_op *A, const coop_vec *x) {
  coop_backend *be = A->be;
  A->nreq = 0;
  if (!A->nnbr) return 0;
  double *rbase = A->staged ? A->hghost : A->dghost;
  for (int i = 0; i < A->nnbr; i++) {
    const int cnt = A->recv_off[i + 1] - A->recv_off[i];
    if (cnt) COOP_MPI(MPI_Irecv(rbase + A->recv_off[i], cnt, MPI_DOUBLE, A->nbr_rank[i], 7, A->comm, &A->req[A->nreq++]));
  }
  if (A->nsend) {
    COOP_CHECK(coop_vec_gather(be, COOP_FP64, A->nsend, A->send_idx, x->data, A->dsend));
    if (A->staged)
      COOP_CHECK(be->download(be, A->hsendbuf, A->dsend, (size_t)A->nsend * sizeof(double)));
    else
      COOP_CHECK(be->sync(be));
  }
  double *sbase = A->staged ? A->hsendbuf : A->dsend;
  for (int i = 0; i < A->nnbr; i++) {
    const int cnt = A->send_off[i + 1] - A->send_off[i];
    if (cnt) COOP_MPI(MPI_Isend(sbase + A->send_off[i], cnt, MPI_DOUBLE, A->nbr_rank[i], 7, A->comm, &A->req[A->nreq++]));
  }
  return 0;
}

static int csr_end(coop_op *A) {
  if (!A->nreq) return 0;
  COOP_MPI(MPI_Waitall(A->nreq, A->req, MPI_STATUSES_IGNORE));
  A->nreq = 0;
  if (A->staged && A->nghost)
    COOP_CHECK(A->be->upload(A->be, A->dghost, A->hghost, (size_t)A->nghost * sizeof(double)));
  return 0;
}

/* ---------------- dispatch ---------------- */

void coop_op_destroy(coop_op *A) {
  if (!A) return;
  coop_backend *be = A->be;
  if (A->nreq) MPI_Waitall(A->nreq, A->req, MPI_STATUSES_IGNORE);
  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++) {
      be->release(be, A->fsend[a][side]);
      be->release(be, A->frecv[a][side]);
      be->release_host(be, A->hsend[a][side]);
      be->release_host(be, A->hrecv[a][side]);
    }
  coop_csr_destroy(A->loc);
  coop_csr_destroy(A->gh);
  be->release(be, A->send_idx);
  be->release(be, A->dsend);
  be->release(be, A->dghost);
  be->release_host(be, A->hsendbuf);
  be->release_host(be, A->hghost);
  free(A->diag);
  free(A->nbr_rank);
  free(A->send_off);
  free(A->recv_off);
  free(A->req);
  free(A);
}

int coop_op_set_schedule(coop_op *A, int schedule) {
  if (A->kind != COOP_OP_CSR)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_op_set_schedule: a stencil operator has no schedule");
  COOP_CHECK(coop_csr_set_schedule(A->loc, schedule));
  return A->gh ? coop_csr_set_schedule(A->gh, schedule) : 0;
}

int coop_op_exchange_begin(coop_op *A, const coop_vec *x) {
  if (x->n != A->n || x->prec != A->prec)
    return COOP_ERROR(COOP_ERR_RUNTIME, "operator of %lld rows applied to a vector of %lld",
                      (long long)A->n, (long long)x->n);
  return A->kind == COOP_OP_STENCIL ? stencil_begin(A, x) : csr_begin(A, x);
}

int coop_op_exchange_end(coop_op *A) {
  return A->kind == COOP_OP_STENCIL ? stencil_end(A) : csr_end(A);
}

int coop_op_apply(coop_op *A, const coop_vec *x, coop_vec *y) {
  if (y->n != A->n || y->prec != A->prec || x == y)
    return COOP_ERROR(COOP_ERR_RUNTIME, "operator output does not match (or aliases) its input");
  COOP_CHECK(coop_op_exchange_begin(A, x));
  if (A->kind == COOP_OP_STENCIL) {
    COOP_CHECK(coop_stencil_apply(A->be, &A->s, x->data, y->data));
    COOP_CHECK(coop_op_exchange_end(A));
    return stencil_ghost_part(A, y);
  }
  COOP_CHECK(coop_csr_spmv(A->loc, x->data, y->data, 0));
  COOP_CHECK(coop_op_exchange_end(A));
  return A->gh ? coop_csr_spmv(A->gh, A->dghost, y->data, 1) : 0;
}

int coop_op_residual(coop_op *A, const coop_vec *b, const coop_vec *x, coop_vec *r) {
  COOP_CHECK(coop_op_apply(A, x, r));
  return coop_vec_waxpby(r, 1.0, b, -1.0, r);
}

int coop_op_diagonal(const coop_op *A, coop_vec *d) {
  if (d->n != A->n) return COOP_ERROR(COOP_ERR_RUNTIME, "diagonal vector of the wrong length");
  return coop_vec_upload(d, A->diag);
}
