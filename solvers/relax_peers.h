/* The setup of the whole Jacobi solve over the ranks of one node
 * (solvers/relax_cuda.cu's multi-rank kernel): which runs may take it, and
 * the neighbours' fields and every rank's mailboxes mapped through CUDA IPC. */
#ifndef COOP_RELAX_PEERS_H
#define COOP_RELAX_PEERS_H

#include "coop_build.h"
#include "solvers/solver.h"
#if COOP_HAVE_CUDA
#include "solvers/relax_cuda.h"

typedef struct {
  coop_relax_peers p;      /* what the kernel takes */
  void *fa, *fb;           /* this rank's fields (u, unew at the first solve): the pairs */
  void *box, *sync;        /* this rank's mailboxes and barrier words */
  void *mapped[2 * 6 + COOP_RELAX_MAX_RANKS]; /* peers' memory mapped here, to close */
  int nmapped;
} coop_relax_peer_set;

/* Collective: 1 in *ok on every rank when the run can take the multi-rank
 * kernel: run.fused_halo, every face with a neighbour through CUDA IPC, all
 * ranks on one node, each on its own GPU (ranks sharing a GPU could not all
 * be resident at once); the same answer on every rank. why: the reason
 * when not (static text). */
int coop_relax_peers_eligible(const coop_solve *sv, int *ok, const char **why);
/* Collective over the neighbours and the node: export this rank's fields and
 * mailboxes, map the others'. */
int coop_relax_peers_open(coop_solve *sv, coop_relax_peer_set *ps);
/* Before each solve: the parity of sv->u among the pairs, mailboxes zeroed.
 * The caller then fills the ghosts and passes a barrier before launching. */
int coop_relax_peers_ready(coop_solve *sv, coop_relax_peer_set *ps);
void coop_relax_peers_close(coop_backend *be, coop_relax_peer_set *ps); /* accepts a half-open set */
#endif

#endif
