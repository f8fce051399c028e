/* The whole Jacobi solve of a rank alone on a 2D box too large for the
 * threads' registers (solvers/relax/relax_resident.cu) but small enough for the
 * GPU's shared memory: the field lives in shared memory across sweeps, one
 * band of consecutive owned rows per block (one block per SM), and only the
 * band's two edge rows go through memory (L2) each sweep.
 *
 * Why: on a box this size a sweep streamed from L2 costs many times a
 * shared-memory pass over a band (measured: see bench/results/).
 *
 * Layout: thread t owns chunk t (16 bytes) of every row of its block's band,
 * ghost columns included, as in the register kernel. A sweep updates the band
 * in place, row by row: the thread keeps the old value of the row below in a
 * register, so the column it owns is read and written by itself only. x
 * neighbours come from the next lanes by shuffles and, at a warp's ends, from
 * the warps' edge columns kept by parity in shared memory (the next warp may
 * already have overwritten its chunk); y neighbours at the band's ends come
 * from the neighbouring bands' edge rows, stored to the field in memory
 * before the grid barrier and loaded after it.
 *
 * The residual check: the stop test comes after the barrier, when the new
 * iterate has replaced the one measured. Where two copies of the band fit,
 * a check is a sweep that also copies the old values aside (as the register
 * kernel does). Where they do not (2048^2 fp32: 2 x 139 KB a block), a
 * check updates as it measures (replay): a norm step at least
 * COOP_SMEM_CKPT_SWEEPS sweeps after the last checkpoint also writes the old
 * values to a checkpoint in memory (ck: every owned row and the two beside
 * them, [row][chunk]); a stop reloads the band and the rows beside it from
 * there and sweeps again up to the iterate measured, the same sweeps with
 * the same bits. The last check (max_iter) is a read-only pass, so a run to
 * max_iter never re-runs. Replay rather than a read-only pass, a barrier
 * and the stop test before each update (two passes): the extra pass a check
 * made close checks cost more than streaming the box (see bench/results/).
 *
 * Same arithmetic as every other mode (relax_res2, same operands): the
 * iterates have the same bits. */
#include <cooperative_groups.h>
#include <string.h>

#include "kernels/cuda_check.cuh"
#include "solvers/relax/relax_band.cuh"
#include "solvers/relax/relax_plan.h"
#include "solvers/relax/relax_solve.cuh"

namespace cg = cooperative_groups;

namespace {

/* Threads a block at most, by kernel: the fewer, the more registers a
 * thread (one block an SM; ptxas sm_90 gives 96 at 576, 80 at 768, 64 at
 * 1024). f loaded ahead in band_pass spilled in the row loop at 64. A
 * band's row: at most COOP_SMEM_MAX_THREADS chunks. */
constexpr int kSmemCaps[] = {576, 768, COOP_SMEM_MAX_THREADS};

/* One pass over the band in shared memory F (row r of the thread's chunk at
 * F[r * nthr]), up and dn the rows beside it, mk the chunk's owned
 * elements. x neighbours at a warp's ends: lane 0 and lane 31 (edge) read
 * ein (the warps' last/first columns of the old field, row r at
 * ein[r * nw]; beside the block's first and last chunk a slot of the array
 * whose value feeds no owned point). UPDATE: the new values replace the old
 * in F, the edge lanes' end columns go to eout (row r at eout[r * nw]), the
 * band's first and last new rows to pub (the chunk's first row in the field
 * in memory) where below and above say there is a band to read them. NORM:
 * the sum of squared residuals of the owned points; with UPDATE and SAVE,
 * the old values go to S (same layout as F: shared memory, or the
 * checkpoint in memory).
 *
 * Instructions a row: owned elements selected by word masks (ChunkMask),
 * indices advanced by adds, the last two rows peeled (the loop kept selects
 * and a 64-bit address a row), the loop unrolled by 3 (the rotation's
 * moves); together they more than halve a plain fp32 row's SASS. Loads go a
 * row ahead of the row they feed, issued before the stores between (which
 * the compiler cannot tell apart from them): with few warps a SM the pass
 * is otherwise latency-bound. */
template <typename T, bool HAS_F, bool FA, bool UPDATE, bool NORM, bool SAVE, typename OWN>
__device__ __forceinline__ double band_pass_own(const RelaxPar &P, typename Vec16<T>::type *F, int nthr,
                                                int rows, const typename Vec16<T>::type &up,
                                                const typename Vec16<T>::type &dn, const OWN &mk,
                                                unsigned om, const T *ein, T *eout, bool lane0, bool lane31,
                                                const typename Vec16<T>::type *fp, long long fstride,
                                                T *pub, long long sy, bool below, bool above,
                                                typename Vec16<T>::type *S) {
  typedef typename Vec16<T>::type VT;
  constexpr int V = Vec16<T>::n;
  const int nw = blockDim.x >> 5;
  const bool edge = lane0 || lane31;
  const T w0 = (T)P.w0, w1 = (T)P.w1, diag = (T)P.diag, c = (T)P.c;
  double sum = 0.0;
  /* the loads run ahead of the row they feed, issued before the stores of
   * the rows between (which the compiler cannot tell apart from them):
   * the next row's chunk and the edge column a row ahead; FA: f two rows
   * ahead (from L2 where it is not in shared memory), else in its row (at
   * the 64 registers of 1024 threads ahead it spilled in the loop, ptxas
   * sm_90) */
  constexpr bool FAH = HAS_F && FA, FIN = HAS_F && !FA;
  VT prev = up, cur = F[0], nxt = rows > 1 ? F[nthr] : dn;
  T ev = *ein;
  VT fc, f1;
  if (FAH) {
    fc = fp[0];
    f1 = fp[rows > 1 ? fstride : 0];
  }
  VT *Fr = F;
  const VT *Fn = F + 2 * nthr;
  const T *en = ein + nw;
  const VT *fn = fp + 2 * fstride;
  /* row r from cur, prev, nxt, ev, fc; then the next row's (nn: the row
   * after it, evn: its edge column, f2: f of the row after it) */
  auto row = [&](const VT &nn, T evn, const VT &f2) {
    T left = __shfl_up_sync(0xffffffffu, vget(cur, V - 1), 1);
    T right = __shfl_down_sync(0xffffffffu, vget(cur, 0), 1);
    if (lane0) left = ev;
    if (lane31) right = ev;
    if (FIN) {
      fc = *fp;
      fp += fstride;
    }
    const VT out = band_chunk<T, HAS_F, UPDATE, NORM>(cur, prev, nxt, fc, left, right, mk, w0, w1, diag, c, sum);
    if (UPDATE) {
      if (NORM && SAVE) {
        *S = cur;
        S += nthr;
      }
      *Fr = out;
      if (edge) *eout = lane0 ? vget(out, 0) : vget(out, V - 1);
      eout += nw;
    }
    Fr += nthr;
    prev = cur;
    cur = nxt;
    nxt = nn;
    ev = evn;
    if (FAH) {
      fc = f1;
      f1 = f2;
    }
  };
  /* every lane loads the edge column (in bounds, two addresses a warp): a
   * load under edge became a divergent branch in fp64 (ptxas sm_90) */
#pragma unroll(sizeof(T) == 4 ? 3 : 1) /* fp64: see FA in smem_kernel */
  for (int r = 0; r + 2 < rows; r++) { /* rows: the same for the whole block */
    const VT nn = *Fn;
    const T evn = *en;
    VT f2;
    if (FAH) {
      f2 = *fn;
      fn += fstride;
    }
    Fn += nthr;
    en += nw;
    row(nn, evn, f2);
  }
  if (rows > 1) row(dn, *en, f1); /* the last row's edge column; f is in f1 already */
  row(dn, ev, fc);
  if (UPDATE) publish<T>(pub, 0, sy, rows, om, below, above, F[0], F[(long long)(rows - 1) * nthr]);
  return sum;
}

/* full: every chunk of the warp is owned (warp-uniform), so the pass needs
 * no owned-element selects: 4 a row fewer in fp32, 8 in a check */
template <typename T, bool HAS_F, bool FA, bool UPDATE, bool NORM, bool SAVE = NORM>
__device__ __forceinline__ double band_pass(const RelaxPar &P, typename Vec16<T>::type *F, int nthr,
                                            int rows, const typename Vec16<T>::type &up,
                                            const typename Vec16<T>::type &dn, const ChunkMask<T> &mk,
                                            bool full, unsigned om, const T *ein, T *eout, bool lane0,
                                            bool lane31, const typename Vec16<T>::type *fp, long long fstride,
                                            T *pub, long long sy, bool below, bool above,
                                            typename Vec16<T>::type *S = nullptr) {
  if (full)
    return band_pass_own<T, HAS_F, FA, UPDATE, NORM, SAVE>(P, F, nthr, rows, up, dn, AllOwned(), om, ein, eout, lane0,
                                                           lane31, fp, fstride, pub, sy, below, above, S);
  return band_pass_own<T, HAS_F, FA, UPDATE, NORM, SAVE>(P, F, nthr, rows, up, dn, mk, om, ein, eout, lane0, lane31,
                                                         fp, fstride, pub, sy, below, above, S);
}

template <typename T, bool HAS_F, int MAXT>
__global__ void __launch_bounds__(MAXT, 1)
    smem_kernel(RelaxPar P, ResGeom G, T *ua, T *ub, const T *__restrict__ f, SolveArgs a,
                coop_relax_solve_state *st, long long *hi, double *hr, T *ckp) {
  typedef typename Vec16<T>::type VT;
  constexpr int V = Vec16<T>::n;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, nthr = blockDim.x, nw = nthr >> 5, lane = tid & 31;
  const int b = blockIdx.x, nb = gridDim.x;
  const int rows = G.base + (b < G.extra ? 1 : 0); /* the band's, >= 1 (the plan's rule) */
  const int rmax = G.base + (G.extra ? 1 : 0);
  const int r0 = G.om0 + b * G.base + min(b, G.extra); /* the band's first row */
  const bool live = tid < G.nch;
  const int xs = (G.a0 + tid) * V;
  const long long sy = G.sy;
  const bool lead = b == 0 && tid == 0;
  /* shared memory: the field ([row][chunk]), the measured field of a check
   * (G.save), f (G.f_smem), the warps' edge columns ([parity][side][row][warp]) */
  const long long band = (long long)rmax * nthr;
  VT *F = reinterpret_cast<VT *>(smem) + tid;
  VT *S = G.save ? F + band : nullptr;
  VT *fs = reinterpret_cast<VT *>(smem) + (G.save ? 2 : 1) * band;
  T *ecol = reinterpret_cast<T *>(fs + (HAS_F && G.f_smem ? band : 0));
  __shared__ double s_sum;
  /* replay: row r of the band in the checkpoint at ck[r * nthr] (rows -1
   * and rows: the neighbours') */
  VT *ck = ckp ? reinterpret_cast<VT *>(ckp) + (long long)(r0 - G.om0 + 1) * nthr + tid : nullptr;

  unsigned om = 0; /* owned elements of the chunk */
#pragma unroll
  for (int e = 0; e < V; e++)
    if (live && xs + e >= G.ox0 && xs + e < G.ox1) om |= 1u << e;
  const ChunkMask<T> mk = chunk_mask<T>(om);
  const bool full = warp_owns_all<T>(om);

  const int w = tid >> 5;
  const bool lane0 = lane == 0, lane31 = lane == 31;
  const int es = 2 * rmax * nw; /* one parity's edge columns */
  /* f two rows ahead: fp32 where the registers allow. fp64 reads f in its
   * row: loaded ahead (or with the loop unrolled) it measured slower */
  constexpr bool FA = MAXT < COOP_SMEM_MAX_THREADS && sizeof(T) == 4;
  /* the warps' end columns of the band in F into parity p */
  auto put_ecol = [&](int p) {
    for (int r = 0; r < rows; r++) {
      const VT v = F[r * nthr];
      if (lane0) ecol[p * es + r * nw + w] = vget(v, 0);
      if (lane31) ecol[p * es + rmax * nw + r * nw + w] = vget(v, V - 1);
    }
  };
  const VT z = vzero<T>();
  const long long q0 = xs + sy * r0;
  for (int r = 0; r < rows; r++) F[r * nthr] = live ? vload(ua + q0 + sy * r) : z;
  put_ecol(0);
  /* the rows beside the band: the neighbours' edges, or the boundary */
  VT up = live ? vload(ua + q0 - sy) : z;
  VT dn = live ? vload(ua + q0 + sy * rows) : z;
  const VT *fp = nullptr; /* f of row r at fp[r * fstride] */
  long long fstride = 0;
  if (HAS_F) {
    if (G.f_smem) {
      for (int r = 0; r < rows; r++) fs[r * nthr + tid] = live ? vload(f + q0 + sy * r) : z;
      fp = fs + tid;
      fstride = nthr;
    } else {
      /* lanes past the row read the band's first chunk over and over: their
       * own chunk may lie past the end of f (narrow boxes) */
      fp = reinterpret_cast<const VT *>(f + (live ? q0 : G.a0 * V + sy * r0));
      fstride = live ? sy / V : 0;
    }
  }
  __syncthreads();
  const bool below = live && b > 0, above = live && b + 1 < nb;
  /* the warp edge columns a thread reads (lane 0: the last of the warp
   * before, lane 31: the first of the next) and writes (its own end) */
  const int eio = lane0 ? rmax * nw + w - 1 : w + 1, eoo = lane31 ? rmax * nw + w : w;
#define SMEM_EDGES(p) mk, full, om, ecol + (p) * es + eio, ecol + ((p) ^ 1) * es + eoo, lane0, lane31

  cg::grid_group grid = cg::this_grid();
  T *cur_f = ua, *new_f = ub; /* the buffer of the iterate, and the one its edges go to */
  long long it = 0, c_no = 0, steps = 0;
  double r0n = 0.0, rn = 0.0;
  int reason = 0, par = 0;
  /* one sweep in place, its edge rows into new_f for the neighbours; after
   * the barrier the neighbours' new edge rows */
#define SMEM_SWEEP()                                                                            \
  do {                                                                                          \
    band_pass<T, HAS_F, FA, true, false>(P, F, nthr, rows, up, dn, SMEM_EDGES(par), fp, fstride,   \
                                     new_f + q0, sy, below, above);                             \
    par ^= 1;                                                                                   \
    grid.sync();                                                                                \
    if (below) up = vload(new_f + q0 - sy);                                                     \
    if (above) dn = vload(new_f + q0 + sy * rows);                                              \
    T *t_ = cur_f;                                                                              \
    cur_f = new_f;                                                                              \
    new_f = t_;                                                                                 \
  } while (0)
  long long ick = -COOP_SMEM_CKPT_SWEEPS; /* the iterate in ck (the first check takes one) */
  for (;;) {
    /* check c_no of iterate it: its sum goes to acc[c_no % 3]; the slot the
     * next check uses was last read before the previous barrier */
    double part;
    const bool late = ck && it < a.max_iter; /* replay: update now, a stop re-runs from ck */
    const bool take = late && it - ick >= COOP_SMEM_CKPT_SWEEPS;
    if (S || take) /* a sweep that keeps the old values in S or in the checkpoint */
      part = band_pass<T, HAS_F, FA, true, true>(P, F, nthr, rows, up, dn, SMEM_EDGES(par), fp, fstride,
                                             new_f + q0, sy, below, above, S ? S : ck);
    else if (late) /* a sweep that measures as it goes */
      part = band_pass<T, HAS_F, FA, true, true, false>(P, F, nthr, rows, up, dn, SMEM_EDGES(par), fp,
                                                    fstride, new_f + q0, sy, below, above);
    else /* the residual alone */
      part = band_pass<T, HAS_F, FA, false, true>(P, F, nthr, rows, up, dn, SMEM_EDGES(par), fp, fstride,
                                              nullptr, sy, false, false);
    if (take) ick = it;
    const bool updated = S || late;
    steps++; /* counted as the register kernel's norm sweep is */
    if (lead) st->acc[(c_no + 1) % 3] = 0.0;
    block_sum_add(part, &st->acc[c_no % 3]);
    grid.sync();
    if (tid == 0) s_sum = *(volatile double *)&st->acc[c_no % 3];
    if (updated) {
      par ^= 1;
      if (below) up = vload(new_f + q0 - sy);
      if (above) dn = vload(new_f + q0 + sy * rows);
    }
    __syncthreads();
    reason = solve_check(s_sum, it, c_no, r0n, rn, a, lead, st, hi, hr);
    c_no++;
    if (reason && late) {
      /* iterate ick from the checkpoint (the band and the rows beside it,
       * written before a barrier already passed), then the sweeps since it
       * again up to the iterate measured, whose buffer is cur_f now. Every
       * block takes this path (the stop test reads the grid's sum). The
       * first grid barrier keeps the first re-run sweep from publishing
       * into new_f while a slower neighbour still loads the check's edge
       * rows from it; the second keeps the stores of the answer from
       * landing on edge rows a neighbour still loads (both overlaps would
       * store the same bits, but would still race). */
      T *const ans = cur_f;
      if (live)
        for (int r = 0; r < rows; r++) F[r * nthr] = ck[r * nthr];
      if (below) up = ck[-nthr];
      if (above) dn = ck[rows * nthr];
      put_ecol(par);
      grid.sync();
      for (long long k = ick; k < it; k++) {
        SMEM_SWEEP();
        steps++;
      }
      grid.sync();
      if (live)
        for (int r = 0; r < rows; r++) vstore_mask<T>(ans + q0 + sy * r, F[r * nthr], om);
      break;
    }
    if (reason) { /* the measured iterate, in S or still in F */
      if (live)
        for (int r = 0; r < rows; r++) vstore_mask<T>(cur_f + q0 + sy * r, (S ? S : F)[r * nthr], om);
      break;
    }
    if (updated) {
      T *t = cur_f;
      cur_f = new_f;
      new_f = t;
    } else {
      SMEM_SWEEP();
    }
    it++;
    const long long next = min(it - 1 + a.check_every, a.max_iter);
    for (; it < next; it++) {
      SMEM_SWEEP();
      steps++;
    }
  }
#undef SMEM_SWEEP
#undef SMEM_EDGES
  if (lead) solve_finish(st, r0n, rn, it, steps, reason);
}

template <int MAXT>
void *pick_cap(bool f32, bool has_f) {
  return f32 ? (has_f ? (void *)smem_kernel<float, true, MAXT> : (void *)smem_kernel<float, false, MAXT>)
             : (has_f ? (void *)smem_kernel<double, true, MAXT> : (void *)smem_kernel<double, false, MAXT>);
}
/* the kernel for blocks of threads threads (<= COOP_SMEM_MAX_THREADS) */
void *pick(bool f32, bool has_f, long long threads) {
  if (threads <= kSmemCaps[0]) return pick_cap<kSmemCaps[0]>(f32, has_f);
  if (threads <= kSmemCaps[1]) return pick_cap<kSmemCaps[1]>(f32, has_f);
  return pick_cap<kSmemCaps[2]>(f32, has_f);
}

}  // namespace

extern "C" int coop_relax_smem_plan_cuda(const coop_stencil *s, int has_f, int sms,
                                         coop_relax_resident *p) {
  const coop_grid *gr = &s->grid;
  memset(p, 0, sizeof *p);
  if (gr->ndim != 2) return 0;
  const bool f32 = gr->prec == COOP_FP32;
  const long long nch = band_chunks(gr);
  int dev = 0, optin = 0;
  COOP_CUDA(cudaGetDevice(&dev));
  COOP_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  void *k = pick(f32, has_f, (nch + 31) / 32 * 32); /* the plan's threads */
  cudaFuncAttributes fa;
  COOP_CUDA(cudaFuncGetAttributes(&fa, k));
  coop_smem_fit fit;
  if (!coop_smem_plan_fit(nch, gr->n[1], f32 ? 4 : 8, has_f, sms,
                          optin - (long long)fa.sharedSizeBytes, &fit))
    return 0;
  COOP_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)fit.bytes));
  int per_sm = 0;
  COOP_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, fit.threads, (size_t)fit.bytes));
  if ((long long)per_sm * sms < fit.blocks) return 0;
  p->blocks = fit.blocks;
  p->threads = fit.threads;
  p->groups = 1;
  p->rows = fit.rows;
  p->smem = (int)fit.bytes;
  p->f_smem = fit.f_smem;
  p->save = fit.save;
  p->replay = fit.replay;
  p->ckpt_bytes = fit.ckpt_bytes;
  p->shared = 1;
  return 0;
}

extern "C" int coop_relax_solve_smem_cuda(const coop_stencil *s, double c, void *u, void *unew,
                                          const void *f, const coop_solve_ctl *ctl,
                                          coop_relax_solve_state *state, long long *hist_iter,
                                          double *hist_res, long long hist_cap,
                                          const coop_relax_resident *p, void *stream) {
  if (p->blocks < 1 || !p->shared || s->grid.ndim != 2)
    return COOP_ERROR(COOP_ERR_RUNTIME, "no shared-memory plan for this box");
  if (p->replay && !p->ckpt) return COOP_ERROR(COOP_ERR_RUNTIME, "a replay plan without its checkpoint");
  RelaxPar P = make_relax_par(s, c);
  SolveArgs a = {ctl->max_iter, ctl->check_every, hist_cap, ctl->rtol, ctl->atol, ctl->dtol};
  ResGeom G = make_geom(s, p);
  cudaStream_t q = (cudaStream_t)stream;
  void *k = pick(s->grid.prec == COOP_FP32, f != NULL, p->threads);
  void *ck = p->replay ? p->ckpt : nullptr;
  void *args[] = {&P, &G, &u, &unew, (void *)&f, &a, &state, &hist_iter, &hist_res, &ck};
  COOP_CUDA(cudaMemsetAsync(state, 0, sizeof *state, q));
  COOP_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, p->smem));
  COOP_CUDA(cudaLaunchCooperativeKernel(k, dim3(p->blocks), dim3(p->threads), args, (size_t)p->smem, q));
  return 0;
}
