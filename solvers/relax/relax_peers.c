/* Setup of the multi-rank whole solve (solvers/relax/relax_peers.h). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "solvers/relax/relax_peers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "solvers/relax/relax_plan.h"

#if COOP_HAVE_CUDA
#define BUSID_LEN 32
#define PEER_TAG 60 /* + axis: above the halo's tags (kernels/halo.c) */
/* A wait for another rank's step longer than this ends the run (exit 1):
 * steps take micro- to milliseconds; the first one also waits for the
 * slowest rank's launch, which follows a barrier. Test hook: the environment
 * variable COOP_PEER_TIMEOUT_S (seconds, > 0 and at most 1e6; other values
 * are ignored) replaces it, so a test of the timeout need not wait 20 s. */
#define PEER_TIMEOUT_S 20.0

double coop_relax_wait_timeout(void) {
  const char *s = getenv("COOP_PEER_TIMEOUT_S");
  char *end = NULL;
  const double v = s ? strtod(s, &end) : 0.0;
  return s && end != s && *end == '\0' && v > 0.0 && v <= 1e6 ? v : PEER_TIMEOUT_S;
}

/* Test hook COOP_PEERS_SHARED_GPU=1: ranks sharing a GPU take the multi-rank
 * kernel anyway. Their kernels cannot be resident together; each runs while
 * the driver's time-slicing between processes gives it the GPU, and waits
 * for the others' steps through the next slices: slow, but it lets one GPU
 * run the kernel's tests (a wait past the timeout still ends the run). */
static int shared_gpu_hook(void) {
  const char *s = getenv("COOP_PEERS_SHARED_GPU");
  return s && strcmp(s, "1") == 0;
}

int coop_relax_box_fits_fused(const coop_solve *sv) {
  const coop_grid *gr = &sv->s->grid;
  const int64_t two_fields = 2 * (int64_t)coop_grid_points(gr) * (int64_t)coop_prec_size(gr->prec);
  return coop_fused_halo_fits(two_fields, sv->be->l2_bytes);
}

int coop_relax_peers_eligible(const coop_solve *sv, int fused_halo, int *ok, const char **why) {
  const coop_comm *c = sv->comm;
  const coop_halo *h = sv->halo;
  const int shared_ok = shared_gpu_hook();
  int mine = 1;
  *why = NULL;
  if (!fused_halo) *why = "tune.fused_halo = false";
  else if (fused_halo < 0 && !coop_relax_box_fits_fused(sv))
    *why = "tune.fused_halo = auto: each rank's two fields above 12 times the L2, where the per-step "
           "kernels stream faster";
  else if (c->node_size != c->size) *why = "the ranks span more than one node";
  else if (c->size > COOP_RELAX_MAX_RANKS) *why = "more ranks than the kernel's mailboxes";
  for (int a = 0; a < 3 && !*why; a++)
    for (int side = 0; side < 2; side++)
      if (h->nbr[a][side] != MPI_PROC_NULL && !h->ipc[a][side]) *why = "a face goes through MPI or NCCL (tune.halo)";
  /* every rank on its own GPU: compare the PCI bus ids of the node (more
   * ranks than mailboxes is refused on every rank alike: no gather then) */
  char bus[BUSID_LEN] = {0};
  if (coop_cuda_device_busid(sv->be->device, bus, sizeof bus)) {
    coop_error_clear();
    mine = 0;
  }
  int rc = MPI_SUCCESS;
  if (c->size <= COOP_RELAX_MAX_RANKS) {
    char all[COOP_RELAX_MAX_RANKS][BUSID_LEN];
    rc = MPI_Allgather(bus, BUSID_LEN, MPI_CHAR, all, BUSID_LEN, MPI_CHAR, c->world);
    for (int i = 0; rc == MPI_SUCCESS && i < c->size && !shared_ok; i++)
      if (i != c->rank && strncmp(all[i], bus, BUSID_LEN) == 0) {
        mine = 0;
        if (!*why) *why = "ranks share a GPU";
      }
    /* each neighbour's GPU must be mappable from this one (a PCIe node
     * without all-pairs P2P); one this process cannot see stays to the
     * agreed mapping */
    for (int a = 0; a < 3 && rc == MPI_SUCCESS && mine && !*why; a++)
      for (int side = 0; side < 2; side++) {
        const int nb = h->nbr[a][side];
        if (nb == MPI_PROC_NULL || nb == c->rank || nb < 0 || nb >= c->size) continue;
        int can = -1;
        all[nb][BUSID_LEN - 1] = '\0';
        if (coop_cuda_peer_access(sv->be->device, all[nb], &can)) {
          coop_error_clear();
          can = -1;
        }
        if (can == 0) {
          mine = 0;
          *why = "no peer access between the GPUs of neighbouring ranks";
          break;
        }
      }
  }
  if (*why || rc != MPI_SUCCESS) mine = 0;
  COOP_MPI(MPI_Allreduce(&mine, ok, 1, MPI_INT, MPI_MIN, c->world));
  COOP_MPI(rc); /* after the reduction, which every rank must join */
  if (!*ok && !*why) *why = "another rank cannot";
  if (*ok && shared_ok && c->rank == 0)
    fprintf(stderr, "coopsolve: note: COOP_PEERS_SHARED_GPU=1: ranks that share a GPU take the multi-rank "
                    "kernel too, by time-slicing (a test hook: slow)\n");
  return 0;
}

int coop_relax_peers_agree(const coop_comm *c, int failed, int *who, char *msg, size_t len) {
  int in = failed ? c->rank : c->size, low = c->size;
  COOP_MPI(MPI_Allreduce(&in, &low, 1, MPI_INT, MPI_MIN, c->world));
  *who = low < c->size ? low : -1;
  if (len) msg[0] = '\0';
  if (*who < 0) return 0;
  char text[COOP_RELAX_NOTE_LEN] = {0};
  if (c->rank == low) { /* its first line: the "from file:line" frames stay out of a note */
    snprintf(text, sizeof text, "%s", coop_error_message());
    text[strcspn(text, "\n")] = '\0';
  }
  COOP_MPI(MPI_Bcast(text, sizeof text, MPI_CHAR, low, c->world));
  if (len) snprintf(msg, len, "%s", text);
  if (failed) coop_error_clear();
  return 0;
}

static int map(coop_backend *be, coop_relax_peer_set *ps, const void *handle, void **p) {
  COOP_CHECK(be->ipc_open(be, handle, p));
  ps->mapped[ps->nmapped++] = *p;
  return 0;
}

/* What a rank sends each neighbour: its fields' handles and layout; ok = 0
 * when its own export failed (the neighbour then maps nothing). */
typedef struct {
  unsigned char h[2][COOP_IPC_HANDLE_BYTES];
  long long ext0, ext1, n[3];
  int ok;
} face_msg;

/* The neighbours' fields, face by face. *rc: this rank's first failure
 * (0: none so far); a rank that failed still joins every exchange. Returns
 * non-zero only when MPI fails. */
static int open_faces(coop_solve *sv, coop_relax_peer_set *ps, int *rc) {
  coop_backend *be = sv->be;
  const coop_halo *h = sv->halo;
  const coop_grid *gr = &sv->s->grid;
  face_msg mine;
  memset(&mine, 0, sizeof mine);
  if (!*rc && !(*rc = be->ipc_export(be, sv->u, mine.h[0]))) *rc = be->ipc_export(be, sv->unew, mine.h[1]);
  if (!*rc && coop_fault(sv->comm, "peer_map")) *rc = COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  mine.ok = !*rc;
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
      if (*rc || !theirs.ok) continue; /* the agreement after the mapping ends it */
      coop_relax_peer_face *f = &ps->p.face[ps->p.nf++];
      if (!(*rc = map(be, ps, theirs.h[0], &f->buf[0]))) *rc = map(be, ps, theirs.h[1], &f->buf[1]);
      f->sy = theirs.ext0;
      f->sz = theirs.ext0 * theirs.ext1;
      f->axis = a;
      f->side = side;
      /* my hi layer fills its lo ghost layer (storage g - 1), my lo layer its
       * hi ghost layer (storage g + its n) */
      f->gc = (int)(side ? gr->g[a] - 1 : gr->g[a] + theirs.n[a]);
    }
  return 0;
}

/* Every rank's mailboxes: this rank's allocated and exported, the others'
 * mapped. Same contract as open_faces. */
static int open_boxes(coop_solve *sv, coop_relax_peer_set *ps, int *rc) {
  coop_backend *be = sv->be;
  const coop_comm *c = sv->comm;
  typedef struct {
    unsigned char h[COOP_IPC_HANDLE_BYTES];
    int ok;
  } box_msg;
  box_msg mine, all[COOP_RELAX_MAX_RANKS]; /* c->size <= COOP_RELAX_MAX_RANKS: eligibility */
  memset(&mine, 0, sizeof mine);
  const size_t boxes = (size_t)c->size * 128;
  if (!*rc && !(*rc = be->alloc(be, &ps->box, boxes)) && !(*rc = be->alloc(be, &ps->sync, COOP_RELAX_PEER_SYNC_BYTES)))
    *rc = be->ipc_export(be, ps->box, mine.h);
  mine.ok = !*rc;
  COOP_MPI(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, c->world));
  for (int r = 0; r < c->size && !*rc; r++) {
    if (r == c->rank) ps->p.box[r] = ps->box;
    else if (all[r].ok) *rc = map(be, ps, all[r].h, &ps->p.box[r]);
  }
  return 0;
}

int coop_relax_peers_open(coop_solve *sv, coop_relax_peer_set *ps, int *ok, char *why, size_t len) {
  const coop_comm *c = sv->comm;
  *ok = 0;
  memset(ps, 0, sizeof *ps);
  if (c->size > COOP_RELAX_MAX_RANKS) /* the same on every rank: none goes on */
    return COOP_ERROR(COOP_ERR_RUNTIME, "%d ranks: the multi-rank solve takes at most %d", c->size,
                      COOP_RELAX_MAX_RANKS);
  ps->fa = sv->u;
  ps->fb = sv->unew;
  int rc = 0, who = -1;
  COOP_CHECK(open_faces(sv, ps, &rc));
  COOP_CHECK(open_boxes(sv, ps, &rc));
  /* agreed before any kernel runs: one rank that could not map would leave
   * the others' kernels waiting for it */
  char msg[COOP_RELAX_NOTE_LEN];
  COOP_CHECK(coop_relax_peers_agree(c, rc, &who, msg, sizeof msg));
  if (who >= 0) {
    snprintf(why, len, "rank %d could not map its peers' memory: %s", who, msg);
    coop_relax_peers_close(sv, ps);
    return 0;
  }
  ps->p.nranks = c->size;
  ps->p.me = c->rank;
  ps->p.sync = ps->sync;
  ps->p.timeout_s = coop_relax_wait_timeout();
  *ok = 1;
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

void coop_relax_peers_close(const coop_solve *sv, coop_relax_peer_set *ps) {
  coop_backend *be = sv->be;
  for (int i = 0; i < ps->nmapped; i++) be->ipc_close(be, ps->mapped[i]);
  /* freeing memory a peer still maps is undefined (CUDA guide, IPC): the
   * others unmap first; a rank that never comes (it failed) is not waited for
   * beyond 10 s (as kernels/halo.c) */
  MPI_Request req;
  int done = 0;
  if (MPI_Ibarrier(sv->comm->world, &req) == MPI_SUCCESS) {
    const double t0 = MPI_Wtime();
    while (!done && MPI_Wtime() - t0 < 10.0) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
  }
  be->release(be, ps->box);
  be->release(be, ps->sync);
  memset(ps, 0, sizeof *ps);
}

int coop_relax_peers_stall(const coop_relax_peer_set *ps, int rank) {
  /* twice the others' timeout and 10 s more: they give up and end the job
   * first; this error only ends a job that they did not */
  const double wait = 2.0 * ps->p.timeout_s + 10.0, t0 = MPI_Wtime();
  const struct timespec nap = {0, 100000000L};
  while (MPI_Wtime() - t0 < wait) nanosleep(&nap, NULL);
  return COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT): rank %d did not launch the "
                    "multi-rank solve", rank);
}
#endif
