/* Memory budget of a rank: what it allocates for the chosen problem, solver and
 * backend, counted step by step from the code that allocates it, and the check
 * before any work that every rank's peak fits its share of its node. */
#ifndef COOP_BUDGET_H
#define COOP_BUDGET_H

#include <stdint.h>
#include <stdio.h>

#include "core/comm.h"
#include "io/config.h"
#include "problem/problem.h"
#include "solvers/solver.h"

typedef struct {
  uint64_t host;    /* most host memory held at once, bytes (on the host backend, all of it) */
  uint64_t device;  /* most backend (GPU) memory held at once, bytes; 0 on the host backend */
  const char *peak; /* the step at which host memory peaks */
  int overflow;     /* a count did not fit 64 bits: the request cannot be met */
} coop_budget;

/* This rank's budget. Counts fields with ghosts, work vectors, the halo and
 * face buffers, CSR arrays and exchange buffers, the history, the temporaries
 * of setup and output; not the MPI, HDF5 and CUDA libraries' own memory. */
void coop_budget_estimate(const coop_comm *c, const coop_config *cfg, const coop_linsys *ls,
                          const coop_solver_type *type, int device_backend, coop_budget *b);

/* Host memory one rank of this node may use, bytes: the least of physical
 * memory and the cgroup limit (shared by the node's ranks) and the process's
 * RLIMIT_AS and RLIMIT_DATA. */
uint64_t coop_budget_host_limit(const coop_comm *c);

/* The budget of this rank and the most of any rank, against the limit. */
typedef struct {
  coop_budget own;
  uint64_t most_host, most_device; /* over all ranks */
  int most_rank;                   /* the rank with the most host memory */
  uint64_t limit;                  /* coop_budget_host_limit on this rank */
} coop_budget_report;

/* Collective: estimate, gather, and agree (coop_comm_agree): an input error
 * (exit 2, naming the keys that size the problem) when any rank's count
 * overflows or its host peak exceeds its share; told by that rank. */
int coop_budget_check(const coop_comm *c, const coop_config *cfg, const coop_linsys *ls,
                      const coop_solver_type *type, const char *backend, coop_budget_report *r);
/* Two "# memory" lines of the dry run (rank 0 prints). */
void coop_budget_print(const coop_comm *c, const coop_budget_report *r, FILE *out);

#endif
