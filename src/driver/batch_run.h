/* The run of a [batch] input (problem/batch.h): deal the problems to the
 * ranks, build and solve each rank's share on the chosen backend, gather every
 * result and solution to rank 0, write /batch (io/io.h), print the summary. */
#ifndef COOP_BATCH_RUN_H
#define COOP_BATCH_RUN_H

#include "core/comm.h"
#include "io/config.h"

typedef struct {
  const coop_config *cfg;
  const char *input_name, *input_text;
  const char *backend; /* "host" or "cuda", chosen by the driver */
  int device;          /* GPU of this rank, -1 on the host */
  int dry_run;
  double t_start; /* MPI_Wtime() when the program started */
} coop_batch_input;

/* Keys that belong to the other kind of input, refused rather than ignored:
 * tune.csr_schedule but for matrix inputs and tune.group_blocks outside [batch];
 * grid, heat, checkpoint and [tune] grid keys and any run.sync inside it.
 * Input errors name the key and where it was set. Rank-local. */
int coop_batch_check_keys(const coop_config *cfg);

/* The batch run after the driver's shared checks (input read, output path,
 * backend chosen). Collective; returns the exit status (0, 1 or 2), the same
 * on every rank, its message printed once. */
int coop_run_batch(const coop_comm *c, const coop_batch_input *in);

#endif
