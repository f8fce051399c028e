/* The setup of the whole Jacobi solve over the ranks of one node
 * (solvers/relax/relax_cuda.cu's multi-rank kernel): which runs may take it, and
 * the neighbours' fields and every rank's mailboxes mapped through CUDA IPC. */
#ifndef COOP_RELAX_PEERS_H
#define COOP_RELAX_PEERS_H

#include "coop_build.h"
#include "solvers/solver.h"
#if COOP_HAVE_CUDA
#include "solvers/relax/relax_cuda.h"

typedef struct {
  coop_relax_peers p;      /* what the kernel takes */
  void *fa, *fb;           /* this rank's fields (u, unew at the first solve): the pairs */
  void *box, *sync;        /* this rank's mailboxes and barrier words */
  void *mapped[2 * 6 + COOP_RELAX_MAX_RANKS]; /* peers' memory mapped here, to close */
  int nmapped;
} coop_relax_peer_set;

#define COOP_RELAX_NOTE_LEN 512 /* room for a note naming a failing rank and its error */

/* Seconds a kernel waits for another rank or block before it gives up (20,
 * or COOP_PEER_TIMEOUT_S: a test hook). */
double coop_relax_wait_timeout(void);
/* Collective: 1 in *ok on every rank when the run can take the multi-rank
 * kernel: tune.fused_halo (fused_halo: 1, 0, or -1 for auto), every face with a neighbour through CUDA IPC, all
 * ranks on one node, each on its own GPU (ranks sharing a GPU could not all
 * be resident at once; test hook COOP_PEERS_SHARED_GPU=1 lets them, by
 * time-slicing); the same answer on every rank. why: the reason
 * when not (static text). Every rank enters every collective whatever its
 * own checks found. */
int coop_relax_peers_eligible(const coop_solve *sv, int fused_halo, int *ok, const char **why);
/* Whether this rank's two fields are within the size where the one-sweep
 * multi-rank kernel streams as fast as the per-step kernels
 * (coop_fused_halo_fits: 12 times the L2). */
int coop_relax_box_fits_fused(const coop_solve *sv);
/* Collective over the node: export this rank's fields and mailboxes, map the
 * others'. Every rank enters every collective even after a step of its own
 * failed, and the ranks agree on the result: *ok = 1 on every rank when all
 * mapped all they need; else 0 on every rank, nothing left mapped or
 * allocated anywhere, and why[len] names the lowest rank that failed and its
 * error. Returns non-zero only when MPI itself fails. Test hook
 * COOP_FAULT=peer_map:RANK: that rank's mapping fails. */
int coop_relax_peers_open(coop_solve *sv, coop_relax_peer_set *ps, int *ok, char *why, size_t len);
/* Before each solve: the parity of sv->u among the pairs, mailboxes zeroed.
 * The caller then fills the ghosts and passes a barrier before launching. */
int coop_relax_peers_ready(coop_solve *sv, coop_relax_peer_set *ps);
/* Collective (every rank that opened closes): unmap the peers' memory, wait
 * (10 s at most) until the others have unmapped this rank's, free it.
 * Accepts a half-open set. */
void coop_relax_peers_close(const coop_solve *sv, coop_relax_peer_set *ps);
/* Collective: *who = the lowest rank whose failed is non-zero (-1: none) and
 * msg[len] its error message, on every rank. The failure becomes a note:
 * the error of a rank that failed is cleared. */
int coop_relax_peers_agree(const coop_comm *c, int failed, int *who, char *msg, size_t len);
/* Test hook COOP_FAULT=peer_stall:RANK: that rank does not launch the
 * multi-rank solve; it sleeps past the others' timeout (whose kernels give up
 * and end the job), then returns a run-time error. */
int coop_relax_peers_stall(const coop_relax_peer_set *ps, int rank);
#endif

#endif
