#include "kernels/halo.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/error.h"

void coop_halo_regions(const coop_grid *s, int axis, coop_region send[2], coop_region recv[2]) {
  for (int side = 0; side < 2; side++) {
    coop_region *sr = &send[side], *rr = &recv[side];
    for (int b = 0; b < 3; b++) {
      /* axes already exchanged carry their ghosts along */
      sr->lo[b] = rr->lo[b] = b < axis ? -s->g[b] : 0;
      sr->hi[b] = rr->hi[b] = b < axis ? s->n[b] + s->g[b] : s->n[b];
    }
    const int64_t g = s->g[axis], n = s->n[axis];
    sr->lo[axis] = side ? n - g : 0;
    sr->hi[axis] = side ? n : g;
    rr->lo[axis] = side ? n : -g;
    rr->hi[axis] = side ? n + g : 0;
  }
}

coop_region coop_halo_sweep_region(const coop_halo *h, int64_t ext) {
  coop_region r = coop_region_owned(h->s);
  for (int a = 0; a < h->s->ndim; a++) {
    if (h->nbr[a][0] != MPI_PROC_NULL) r.lo[a] -= ext;
    if (h->nbr[a][1] != MPI_PROC_NULL) r.hi[a] += ext;
  }
  return r;
}

int coop_halo_active(const coop_halo *h) {
  for (int a = 0; a < 3; a++)
    if (h->nbr[a][0] != MPI_PROC_NULL || h->nbr[a][1] != MPI_PROC_NULL) return 1;
  return 0;
}

int coop_halo_create(coop_halo *h, coop_backend *be, const coop_grid *s, const coop_decomp *d,
                     int cuda_aware) {
  memset(h, 0, sizeof *h);
  h->be = be;
  h->s = s;
  h->comm = d->cart;
  h->staged = be->device_memory && !cuda_aware;
  for (int a = 0; a < 3; a++) {
    h->nbr[a][0] = d->nbr_lo[a];
    h->nbr[a][1] = d->nbr_hi[a];
    coop_halo_regions(s, a, h->send[a], h->recv[a]);
    h->bytes[a] = (size_t)coop_region_points(&h->send[a][0]) * coop_prec_size(s->prec);
    if (h->bytes[a] > (size_t)INT_MAX) /* one MPI message carries a face */
      return COOP_ERROR(COOP_ERR_RUNTIME, "a halo face along axis %d is %zu bytes, more than one MPI "
                        "message (2 GiB) carries: use more ranks or a smaller grid.ghost", a, h->bytes[a]);
    COOP_CHECK(coop_halo_face_buffers(be, h->nbr[a], h->bytes[a], h->staged, h->dsend[a], h->drecv[a],
                                      h->hsend[a], h->hrecv[a]));
  }
  return 0;
}

int coop_halo_face_buffers(coop_backend *be, const int nbr[2], size_t bytes, int staged, void *send[2],
                           void *recv[2], void *hsend[2], void *hrecv[2]) {
  for (int side = 0; side < 2; side++) {
    if (nbr[side] == MPI_PROC_NULL) continue;
    COOP_CHECK(be->alloc(be, &send[side], bytes));
    COOP_CHECK(be->alloc(be, &recv[side], bytes));
    if (!staged) continue;
    COOP_CHECK(be->alloc_host(be, &hsend[side], bytes));
    COOP_CHECK(be->alloc_host(be, &hrecv[side], bytes));
  }
  return 0;
}

/* Tags of the halo messages: faces 0..5, IPC "copied" notes 8..13. */
static int face_tag(int a, int towards_hi) { return 2 * a + (towards_hi ? 1 : 0); }
#define IPC_TAG 8

/* NCCL refuses two ranks of one communicator on one GPU: tell which ranks,
 * the same answer on every rank (a GPU is its node and PCI bus id). */
static int nccl_gpus_apart(const coop_halo *h) {
  enum { LEN = MPI_MAX_PROCESSOR_NAME + 32 };
  int rank = 0, size = 0, len = 0;
  COOP_MPI(MPI_Comm_rank(h->comm, &rank));
  COOP_MPI(MPI_Comm_size(h->comm, &size));
  char mine[LEN] = {0};
  COOP_MPI(MPI_Get_processor_name(mine, &len));
  mine[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  if (coop_cuda_device_busid(h->be->device, mine + MPI_MAX_PROCESSOR_NAME, 32)) coop_error_clear();
  /* every rank joins the gather or none */
  char *all = malloc((size_t)size * LEN);
  int have = all != NULL, every = 0;
  int rc = MPI_Allreduce(&have, &every, 1, MPI_INT, MPI_MIN, h->comm);
  if (rc == MPI_SUCCESS && !every) {
    free(all);
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory (a rank could not hold %d GPU names)", size);
  }
  if (rc == MPI_SUCCESS) rc = MPI_Allgather(mine, LEN, MPI_CHAR, all, LEN, MPI_CHAR, h->comm);
  int a = -1, b = -1;
  for (int i = 0; rc == MPI_SUCCESS && a < 0 && i < size; i++)
    for (int j = i + 1; j < size; j++)
      if (memcmp(all + (size_t)i * LEN, all + (size_t)j * LEN, LEN) == 0) {
        a = i;
        b = j;
        break;
      }
  char gpu[32] = {0};
  if (a >= 0) memcpy(gpu, all + (size_t)a * LEN + MPI_MAX_PROCESSOR_NAME, sizeof gpu - 1);
  free(all);
  COOP_MPI(rc);
  if (a >= 0)
    return coop_error_input("tune.halo = nccl: ranks %d and %d run on the same GPU (%s); NCCL needs a GPU "
                            "per rank (tune.halo = auto or mpi shares one)", a, b, gpu);
  return 0;
}

int coop_halo_set_transport(coop_halo *h, const char *which, int *faces) {
  coop_backend *be = h->be;
  *faces = 0;
  if (strcmp(which, "nccl") == 0) { /* refused alike on every rank, then collective */
    if (!coop_nccl_built()) return coop_nccl_open(h->comm, 0, NULL, NULL, NULL, NULL, &h->nccl); /* the input error */
    if (!be->device_memory) return coop_error_input("tune.halo = nccl needs GPU memory (run.backend = cuda)");
    int size = 1;
    COOP_MPI(MPI_Comm_size(h->comm, &size));
    if (size == 1) return 0;
    COOP_CHECK(nccl_gpus_apart(h));
    /* every face once at setup: NCCL connects a pair at its first send (a
     * slow step), kept out of the solve; what lands in
     * the receive buffers is overwritten by every exchange before it is read */
    int peer[6], nf = 0;
    void *send[6], *recv[6];
    size_t bytes[6];
    for (int a = 0; a < 3; a++)
      for (int side = 0; side < 2; side++) {
        if (h->nbr[a][side] == MPI_PROC_NULL) continue;
        peer[nf] = h->nbr[a][side];
        send[nf] = h->dsend[a][side];
        recv[nf] = h->drecv[a][side];
        bytes[nf++] = h->bytes[a];
      }
    return coop_nccl_open(h->comm, nf, peer, send, recv, bytes, &h->nccl);
  }
  if (strcmp(which, "mpi") == 0 || !coop_halo_active(h)) return 0;
  const int want = strcmp(which, "ipc") == 0;
  if (!be->device_memory || !be->ipc_export) {
    if (want) return coop_error_input("tune.halo = ipc needs GPU memory (run.backend = cuda)");
    return 0;
  }
  /* which neighbours share this node */
  MPI_Comm node;
  MPI_Group gall, gnode;
  COOP_MPI(MPI_Comm_split_type(h->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  COOP_MPI(MPI_Comm_group(h->comm, &gall));
  COOP_MPI(MPI_Comm_group(node, &gnode));
  int local[3][2] = {{0}};
  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++) {
      if (h->nbr[a][side] == MPI_PROC_NULL) continue;
      int r = MPI_UNDEFINED;
      COOP_MPI(MPI_Group_translate_ranks(gall, 1, &h->nbr[a][side], gnode, &r));
      local[a][side] = r != MPI_UNDEFINED;
      if (want && !local[a][side])
        return coop_error_input("tune.halo = ipc: neighbour rank %d (axis %d) runs on another node; "
                                "use tune.halo = auto or mpi", h->nbr[a][side], a);
    }
  MPI_Group_free(&gall);
  MPI_Group_free(&gnode);
  MPI_Comm_free(&node);
  /* export both receive buffers of each IPC face, map the neighbour's */
  for (int a = 0; a < 3; a++) {
    unsigned char mine[2][2][COOP_IPC_HANDLE_BYTES], theirs[2][2][COOP_IPC_HANDLE_BYTES];
    MPI_Request req[4];
    int nreq = 0;
    for (int side = 0; side < 2; side++) {
      if (!local[a][side]) continue;
      COOP_CHECK(be->alloc(be, &h->drecv2[a][side], h->bytes[a]));
      COOP_CHECK(be->ipc_export(be, h->drecv[a][side], mine[side][0]));
      COOP_CHECK(be->ipc_export(be, h->drecv2[a][side], mine[side][1]));
      COOP_MPI(MPI_Irecv(theirs[side], sizeof theirs[side], MPI_BYTE, h->nbr[a][side],
                         face_tag(a, side == 0), h->comm, &req[nreq++]));
      COOP_MPI(MPI_Isend(mine[side], sizeof mine[side], MPI_BYTE, h->nbr[a][side],
                         face_tag(a, side == 1), h->comm, &req[nreq++]));
    }
    COOP_MPI(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
    for (int side = 0; side < 2; side++) {
      if (!local[a][side]) continue;
      for (int p = 0; p < 2; p++) COOP_CHECK(be->ipc_open(be, theirs[side][p], &h->peer[a][side][p]));
      h->ipc[a][side] = 1;
      ++*faces;
    }
  }
  return 0;
}

void coop_halo_destroy(coop_halo *h) {
  if (!h || !h->be) return;
  if (h->nccl) { /* its queued work first */
    (void)h->be->sync(h->be);
    coop_nccl_close(h->nccl);
    h->nccl = NULL;
  }
  int mapped = 0;
  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++)
      for (int p = 0; p < 2; p++)
        if (h->peer[a][side][p]) {
          h->be->ipc_close(h->be, h->peer[a][side][p]);
          mapped = 1;
        }
  if (mapped) {
    /* a buffer must stay allocated until every peer has unmapped it; a rank
     * that never comes (it failed) is not waited for beyond a few seconds */
    MPI_Request req;
    int done = 0;
    if (MPI_Ibarrier(h->comm, &req) == MPI_SUCCESS) {
      const double t0 = MPI_Wtime();
      while (!done && MPI_Wtime() - t0 < 10.0) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
  }
  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++) {
      h->be->release(h->be, h->drecv2[a][side]);
      h->be->release(h->be, h->dsend[a][side]);
      h->be->release(h->be, h->drecv[a][side]);
      h->be->release_host(h->be, h->hsend[a][side]);
      h->be->release_host(h->be, h->hrecv[a][side]);
    }
  memset(h, 0, sizeof *h);
}

/* One axis through NCCL: pack, exchange, unpack, all queued on the stream
 * in that order (each face's peer sends the matching face: same bytes). */
static int exchange_axis_nccl(coop_halo *h, int a, void *u) {
  coop_backend *be = h->be;
  int peer[2], n = 0;
  void *send[2], *recv[2];
  for (int side = 0; side < 2; side++) {
    if (h->nbr[a][side] == MPI_PROC_NULL) continue;
    COOP_CHECK(be->pack(be, h->s, &h->send[a][side], u, h->dsend[a][side]));
    peer[n] = h->nbr[a][side];
    send[n] = h->dsend[a][side];
    recv[n++] = h->drecv[a][side];
  }
  COOP_CHECK(coop_nccl_exchange(be, h->nccl, n, peer, send, recv, h->bytes[a]));
  for (int side = 0; side < 2; side++)
    if (h->nbr[a][side] != MPI_PROC_NULL)
      COOP_CHECK(be->unpack(be, h->s, &h->recv[a][side], u, h->drecv[a][side]));
  return 0;
}

/* One axis: pack both faces, exchange with both neighbours, unpack. An IPC
 * face is copied into the neighbour's receive buffer, then a zero-byte note
 * says it is there. */
static int exchange_axis(coop_halo *h, int a, void *u) {
  coop_backend *be = h->be;
  if (h->nccl) return exchange_axis_nccl(h, a, u);
  MPI_Request req[8];
  int nreq = 0, nipc = 0;
  const int count = (int)h->bytes[a]; /* checked against INT_MAX at create */
  for (int side = 0; side < 2; side++) {
    if (h->nbr[a][side] == MPI_PROC_NULL) continue;
    if (h->ipc[a][side]) {
      COOP_MPI(MPI_Irecv(NULL, 0, MPI_BYTE, h->nbr[a][side], IPC_TAG + face_tag(a, side == 0),
                         h->comm, &req[nreq++]));
      continue;
    }
    void *rbuf = h->staged ? h->hrecv[a][side] : h->drecv[a][side];
    /* what the lo neighbour sends towards hi carries tag 2a+1, and back 2a */
    COOP_MPI(MPI_Irecv(rbuf, count, MPI_BYTE, h->nbr[a][side], face_tag(a, side == 0), h->comm,
                       &req[nreq++]));
  }
  for (int side = 0; side < 2; side++) {
    if (h->nbr[a][side] == MPI_PROC_NULL) continue;
    COOP_CHECK(be->pack(be, h->s, &h->send[a][side], u, h->dsend[a][side]));
    if (h->ipc[a][side]) {
      COOP_CHECK(be->copy(be, h->peer[a][side][h->parity], h->dsend[a][side], h->bytes[a]));
      nipc++;
      continue;
    }
    void *sbuf = h->dsend[a][side];
    if (h->staged) {
      COOP_CHECK(be->download(be, h->hsend[a][side], h->dsend[a][side], h->bytes[a]));
      sbuf = h->hsend[a][side];
    } else {
      COOP_CHECK(be->sync(be)); /* MPI reads the packed buffer directly */
    }
    COOP_MPI(MPI_Isend(sbuf, count, MPI_BYTE, h->nbr[a][side], face_tag(a, side == 1), h->comm,
                       &req[nreq++]));
  }
  if (nipc) {
    COOP_CHECK(be->sync(be)); /* the copies have landed in the neighbours' buffers */
    for (int side = 0; side < 2; side++)
      if (h->nbr[a][side] != MPI_PROC_NULL && h->ipc[a][side])
        COOP_MPI(MPI_Isend(NULL, 0, MPI_BYTE, h->nbr[a][side], IPC_TAG + face_tag(a, side == 1),
                           h->comm, &req[nreq++]));
  }
  COOP_MPI(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
  for (int side = 0; side < 2; side++) {
    if (h->nbr[a][side] == MPI_PROC_NULL) continue;
    const void *rbuf = h->drecv[a][side];
    if (h->ipc[a][side])
      rbuf = h->parity ? h->drecv2[a][side] : h->drecv[a][side];
    else if (h->staged)
      COOP_CHECK(be->upload(be, h->drecv[a][side], h->hrecv[a][side], h->bytes[a]));
    COOP_CHECK(be->unpack(be, h->s, &h->recv[a][side], u, rbuf));
  }
  return 0;
}

int coop_halo_exchange(coop_halo *h, void *u) {
  /* MPI is about to write receive buffers that queued unpacks may still read
   * (NCCL's writes are queued behind them) */
  if (h->be->device_memory && !h->staged && !h->nccl) COOP_CHECK(h->be->sync(h->be));
  for (int a = 0; a < h->s->ndim; a++)
    if (h->nbr[a][0] != MPI_PROC_NULL || h->nbr[a][1] != MPI_PROC_NULL) COOP_CHECK(exchange_axis(h, a, u));
  h->parity ^= 1; /* IPC faces: the other receive buffers next time */
  return 0;
}

int coop_halo_exchange_side(coop_halo *h, void *u) {
  coop_backend *be = h->be;
  if (!be->side) return coop_halo_exchange(h, u);
  h->be = be->side; /* every pack, copy, wait and unpack on the side stream */
  const int rc = coop_halo_exchange(h, u);
  h->be = be;
  COOP_CHECK(rc);
  COOP_CHECK(be->join(be));
  return 0;
}

int coop_halo_split(const coop_halo *h, coop_region parts[2 * 3 + 1]) {
  coop_region rest = coop_region_owned(h->s);
  int np = 0;
  for (int a = 0; a < h->s->ndim; a++)
    for (int side = 0; side < 2; side++) {
      if (h->nbr[a][side] == MPI_PROC_NULL) continue;
      coop_region strip = rest;
      if (side == 0) {
        strip.hi[a] = rest.lo[a] + h->s->g[a] < rest.hi[a] ? rest.lo[a] + h->s->g[a] : rest.hi[a];
        rest.lo[a] = strip.hi[a];
      } else {
        strip.lo[a] = rest.hi[a] - h->s->g[a] > rest.lo[a] ? rest.hi[a] - h->s->g[a] : rest.lo[a];
        rest.hi[a] = strip.lo[a];
      }
      if (strip.hi[a] > strip.lo[a]) parts[np++] = strip;
    }
  parts[np] = rest;
  return np;
}
