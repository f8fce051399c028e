/* The shared-memory resident plan's arithmetic (solvers/relax/relax_plan.h). */
#include "solvers/relax/relax_plan.h"

#include <string.h>

int coop_smem_plan_fit(int64_t nch, int64_t ny, int tsize, int has_f, int sms,
                       int64_t room, coop_smem_fit *out) {
  memset(out, 0, sizeof *out);
  if (nch < 1 || ny < 1 || sms < 1 || (tsize != 4 && tsize != 8) || room <= 0) return 0;
  if (nch > COOP_SMEM_MAX_THREADS) return 0;
  const int64_t threads = (nch + 31) / 32 * 32;
  if (threads < COOP_SMEM_MIN_THREADS) return 0;
  const int64_t blocks = ny < sms ? ny : sms; /* every band a row at least */
  const int64_t rmax = ny / blocks + (ny % blocks != 0);
  if (rmax > COOP_SMEM_MAX_ROWS) return 0; /* also keeps the products below in range */
  const int64_t band = rmax * threads * 16;
  const int64_t edges = 2 * 2 * rmax * (threads / 32) * tsize; /* [parity][side][row][warp] */
  int64_t bytes = band + edges;
  if (bytes > room) return 0;
  const int save = bytes + band <= room;
  if (save) bytes += band;
  out->replay = !save;
  if (out->replay) out->ckpt_bytes = (ny + 2) * threads * 16; /* ny <= sms * 64 */
  const int f_smem = has_f && bytes + band <= room;
  if (f_smem) bytes += band;
  out->blocks = (int)blocks;
  out->threads = (int)threads;
  out->rows = (int)rmax;
  out->bytes = bytes;
  out->save = save;
  out->f_smem = f_smem;
  return 1;
}

int coop_fused_halo_fits(int64_t two_fields, int64_t l2) {
  if (l2 <= 0) return 1;
  if (two_fields < 0) return 0;
  /* l2 * 12 cannot overflow below 2^59: past that, any box fits */
  return l2 > INT64_MAX / COOP_FUSED_MAX_L2 || two_fields <= l2 * COOP_FUSED_MAX_L2;
}
