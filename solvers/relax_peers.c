/* Setup of the multi-rank whole solve (solvers/relax_peers.h). */
#include "solvers/relax_peers.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#if COOP_HAVE_CUDA
#define BUSID_LEN 32
#define PEER_TAG 60 /* + axis: above the halo's tags (core/halo.c) */
/* A wait for another rank's step longer than this ends the run (exit 1):
 * steps take micro- to milliseconds; the first one also waits for the
 * slowest rank's launch, which follows a barrier. */
#define PEER_TIMEOUT_S 20.0

int coop_relax_peers_eligible(const coop_solve *sv, int *ok, const char **why) {
  const coop_comm *c = sv->comm;
  const coop_halo *h = sv->halo;
  int mine = 1;
  *why = NULL;
  if (!sv->fused_halo) *why = "run.fused_halo = false";
  else if (c->node_size != c->size) *why = "the ranks span more than one node";
  else if (c->size > COOP_RELAX_MAX_RANKS) *why = "more ranks than the kernel's mailboxes";
  for (int a = 0; a < 3 && !*why; a++)
    for (int side = 0; side < 2; side++)
      if (h->nbr[a][side] != MPI_PROC_NULL && !h->ipc[a][side]) *why = "a face goes through MPI (run.halo)";
  /* every rank on its own GPU: compare the PCI bus ids of the node */
  char bus[BUSID_LEN] = {0};
  if (coop_cuda_device_busid(sv->be->device, bus, sizeof bus)) {
    coop_error_clear();
    mine = 0;
  }
  char *all = malloc((size_t)c->size * BUSID_LEN);
  if (!all) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  int rc = MPI_Allgather(bus, BUSID_LEN, MPI_CHAR, all, BUSID_LEN, MPI_CHAR, c->world);
  for (int i = 0; !rc && i < c->size; i++)
    if (i != c->rank && strncmp(all + (size_t)i * BUSID_LEN, bus, BUSID_LEN) == 0) {
      mine = 0;
      if (!*why) *why = "ranks share a GPU";
    }
  free(all);
  COOP_MPI(rc);
  if (*why) mine = 0;
  COOP_MPI(MPI_Allreduce(&mine, ok, 1, MPI_INT, MPI_MIN, c->world));
  if (!*ok && !*why) *why = "another rank cannot";
  return 0;
}

static int map(coop_backend *be, coop_relax_peer_set *ps, const void *handle, void **p) {
  COOP_CHECK(be->ipc_open(be, handle, p));
  ps->mapped[ps->nmapped++] = *p;
  return 0;
}

int coop_relax_peers_open(coop_solve *sv, coop_relax_peer_set *ps) {
  coop_backend *be = sv->be;
  const coop_halo *h = sv->halo;
  const coop_grid *gr = &sv->s->grid;
  const coop_comm *c = sv->comm;
  memset(ps, 0, sizeof *ps);
  ps->fa = sv->u;
  ps->fb = sv->unew;
  /* the neighbours' fields: handles and their layout, face by face */
  typedef struct {
    unsigned char h[2][COOP_IPC_HANDLE_BYTES];
    long long ext0, ext1, n[3];
  } face_msg;
  face_msg mine;
  memset(&mine, 0, sizeof mine);
  COOP_CHECK(be->ipc_export(be, sv->u, mine.h[0]));
  COOP_CHECK(be->ipc_export(be, sv->unew, mine.h[1]));
  mine.ext0 = gr->ext[0];
  mine.ext1 = gr->ext[1];
  for (int a = 0; a < 3; a++) mine.n[a] = gr->n[a];
  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++) {
      if (h->nbr[a][side] == MPI_PROC_NULL) continue;
      face_msg theirs;
      COOP_MPI(MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, h->nbr[a][side], PEER_TAG + a, &theirs,
                            sizeof theirs, MPI_BYTE, h->nbr[a][side], PEER_TAG + a, h->comm,
                            MPI_STATUS_IGNORE));
      coop_relax_peer_face *f = &ps->p.face[ps->p.nf++];
      COOP_CHECK(map(be, ps, theirs.h[0], &f->buf[0]));
      COOP_CHECK(map(be, ps, theirs.h[1], &f->buf[1]));
      f->sy = theirs.ext0;
      f->sz = theirs.ext0 * theirs.ext1;
      f->axis = a;
      f->side = side;
      /* my hi layer fills its lo ghost layer (storage g - 1), my lo layer its
       * hi ghost layer (storage g + its n) */
      f->gc = (int)(side ? gr->g[a] - 1 : gr->g[a] + theirs.n[a]);
    }
  /* every rank's mailboxes */
  const size_t boxes = (size_t)c->size * 128;
  COOP_CHECK(be->alloc(be, &ps->box, boxes));
  COOP_CHECK(be->alloc(be, &ps->sync, COOP_RELAX_PEER_SYNC_BYTES));
  unsigned char hb[COOP_IPC_HANDLE_BYTES];
  COOP_CHECK(be->ipc_export(be, ps->box, hb));
  unsigned char *all = malloc((size_t)c->size * COOP_IPC_HANDLE_BYTES);
  if (!all) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  int rc = MPI_Allgather(hb, COOP_IPC_HANDLE_BYTES, MPI_BYTE, all, COOP_IPC_HANDLE_BYTES, MPI_BYTE, c->world);
  for (int r = 0; !rc && r < c->size; r++) {
    if (r == c->rank) ps->p.box[r] = ps->box;
    else rc = map(be, ps, all + (size_t)r * COOP_IPC_HANDLE_BYTES, &ps->p.box[r]);
  }
  free(all);
  COOP_MPI(rc);
  ps->p.nranks = c->size;
  ps->p.me = c->rank;
  ps->p.sync = ps->sync;
  ps->p.timeout_s = PEER_TIMEOUT_S;
  return 0;
}

int coop_relax_peers_ready(coop_solve *sv, coop_relax_peer_set *ps) {
  coop_backend *be = sv->be;
  if (sv->u == ps->fa && sv->unew == ps->fb) ps->p.parity = 0;
  else if (sv->u == ps->fb && sv->unew == ps->fa) ps->p.parity = 1;
  else return COOP_ERROR(COOP_ERR_RUNTIME, "the fields changed since the neighbours mapped them");
  const size_t boxes = (size_t)ps->p.nranks * 128;
  void *zero = calloc(1, boxes);
  if (!zero) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  const int rc = be->upload(be, ps->box, zero, boxes);
  free(zero);
  return rc;
}

void coop_relax_peers_close(coop_backend *be, coop_relax_peer_set *ps) {
  for (int i = 0; i < ps->nmapped; i++) be->ipc_close(be, ps->mapped[i]);
  be->release(be, ps->box);
  be->release(be, ps->sync);
  memset(ps, 0, sizeof *ps);
}
#endif
