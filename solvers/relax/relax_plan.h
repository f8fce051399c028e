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
/* The shapes measured, all faster than streaming: 9 to 32 warps a block and
 * bands of 1 to 46 rows. Outside them (a few warps marching hundreds of
 * dependent rows) the box streams until a measurement says otherwise. */
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
 * step, about 10-25 us on the H200 pair, but its thread march streams
 * 8-15% slower than the per-step kernels' ring march; the two cross near
 * 170 us a sweep. 2 ranks, us a sweep, fused / per-step kernels between
 * GPU exchanges (best of ipc, nccl) / launch (bench/results/2026-12-04-
 * h200x2-fullwarp-fused.md): 4096^2 fp32 every sweep (67 MB a rank) 26.8 /
 * 54.6 / 63.4; 8192^2 fp64 every 100 (537 MB) 169.5 / 155.8 / 168.3, every
 * sweep 168.9 / 178.1 / 183.5; 16384^2 fp32 every 100 (1074 MB) 331.8 /
 * 292.2 / 308.3; 16384^2 fp64 every sweep (2147 MB) 654.5 / 592.3 / 595.2. */
#define COOP_FUSED_MAX_L2 12
/* 1: the multi-rank whole solve fits a box whose two fields take
 * two_fields bytes on a GPU with l2 bytes of L2 (0 or less: unknown, and
 * the fused kernel is taken); 0: the per-step kernels stream it faster. */
int coop_fused_halo_fits(int64_t two_fields, int64_t l2);

#ifdef __cplusplus
}
#endif

#endif
