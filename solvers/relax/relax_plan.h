/* The arithmetic of the shared-memory resident plan (solvers/relax/relax_smem.cu),
 * apart from the CUDA calls so that it is tested in every build. */
#ifndef COOP_RELAX_PLAN_H
#define COOP_RELAX_PLAN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most chunks a row (threads a block) of the shared-memory kernel. */
#define COOP_SMEM_MAX_THREADS 1024
/* Where there is no room to keep the measured field aside, a check updates
 * as it measures and a stop re-runs the sweeps since the last checkpoint
 * (replay). A norm step at least this many sweeps after the last checkpoint
 * also writes the band to memory (the checkpoint), so a stop re-runs at most
 * this many sweeps, or the checks' interval where that is longer. */
#define COOP_SMEM_CKPT_SWEEPS 32
/* The plan keeps to shapes measured faster than streaming (see
 * bench/results/). Outside them (a few warps marching hundreds of dependent rows) the box
 * streams until a measurement says otherwise. */
#define COOP_SMEM_MIN_THREADS 256
#define COOP_SMEM_MAX_ROWS 64

typedef struct {
  int blocks, threads, rows; /* bands (one block each), threads a block, rows of the largest band */
  int64_t bytes;             /* dynamic shared memory a block */
  int save, f_smem;          /* the measured field kept aside; f in shared memory */
  int replay;                /* no room to keep it: a stop re-runs from a checkpoint in memory (!save) */
  int64_t ckpt_bytes;        /* replay: the checkpoint, every owned row and the two beside them */
} coop_smem_fit;

/* The plan for a box of nch 16-byte chunks a row (ghost columns included)
 * and ny owned rows of tsize-byte values on sms SMs with room bytes of shared
 * memory a block: 1 and *out when it fits, 0 when the box should stream.
 * The check interval does not enter: every interval plans alike. */
int coop_smem_plan_fit(int64_t nch, int64_t ny, int tsize, int has_f, int sms,
                       int64_t room, coop_smem_fit *out);

/* tune.fused_halo = auto: the multi-rank whole solve (one kernel a rank,
 * halos stored into the neighbours) where the two fields of the rank's box
 * are at most this many times the L2. It saves a launch or an exchange a
 * step, but its thread march streams slower than the per-step kernels' ring
 * march, so on large boxes, where streaming dominates a sweep, the per-step
 * kernels win; this factor is about where the two cross (measured: see
 * bench/results/). */
#define COOP_FUSED_MAX_L2 12
/* 1: the multi-rank whole solve fits a box whose two fields take
 * two_fields bytes on a GPU with l2 bytes of L2 (0 or less: unknown, and
 * the fused kernel is taken); 0: the per-step kernels stream it faster. */
int coop_fused_halo_fits(int64_t two_fields, int64_t l2);

#ifdef __cplusplus
}
#endif

#endif
