/* What a run tells its user: --help/--version text, the dry-run plan, and at
 * the end the HDF5 file and the summary on rank 0. */
#ifndef COOP_REPORT_H
#define COOP_REPORT_H

#include "core/comm.h"
#include "io/config.h"
#include "io/io.h"
#include "kernels/backend.h"
#include "problem/problem.h"
#include "solvers/solver.h"

typedef struct {
  const coop_config *cfg;
  const char *input_name, *input_text;
  const coop_linsys *ls;
  const coop_solver_type *type;
  const void *sdata;
  coop_backend *be;
  const char *backend;
  int device;
  double t_setup;
  coop_io_series *series; /* the time series written during the run, or NULL */
  int ipc_faces;          /* halo faces of this rank copied GPU to GPU (CUDA IPC) */
  int halo_nccl;          /* 1: the halo faces went through NCCL */
} coop_report_input;

/* What /fields/u (and /series/u) of a heat run holds: its description. */
extern const char coop_report_heat_description[];

/* --help (usage and key reference) or --version, on stdout. */
void coop_report_help(int help);
/* --dry-run: resolved configuration, decomposition, memory per rank (rank 0
 * prints; collective). */
int coop_report_dry_run(const coop_comm *c, const coop_config *cfg, const coop_linsys *ls,
                        const coop_solver_type *type, const char *backend);
/* The io layer's description of the grid (dataset order) or the 1-D vector:
 * the layout fields of r (comm, ndim, shapes, offsets, ranks per axis,
 * spacing, origin); the rest is left as it was. */
void coop_report_layout(const coop_comm *c, const coop_linsys *ls, coop_io_result *r);
/* Device names of all ranks ("; "-joined, no repeats) into names[len] and the
 * distinct GPUs in *gpus (0 on the host: device -1). Collective. */
int coop_report_devices(const coop_comm *c, int device, char *names, size_t len, int *gpus);
/* Errors against the exact solution, the HDF5 file, the summary. Collective. */
int coop_report_write(const coop_comm *c, const coop_report_input *in, const coop_solve *sv);

#endif
