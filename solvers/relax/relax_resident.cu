/* The whole Jacobi solve of a rank alone on a 2D box small enough to stay on
 * the chip: the field lives in the threads' registers across sweeps, and only
 * the two edge rows of each block's band go through memory (L2) each sweep.
 *
 * Why: on a box this small the streaming kernel (solvers/relax/relax_cuda.cu)
 * spends a sweep on L2 round trips (load, store drain) and the grid barrier,
 * not on bytes. Here a sweep reads no field from memory at all.
 *
 * Layout: block b owns a band of consecutive owned rows, split among G groups
 * of threads (at most R rows each); thread t of a group owns chunk t (16
 * bytes: 4 floats or 2 doubles) of every row of its group's rows, the same
 * chunks the streaming kernel uses, ghost columns included so that every
 * owned point's x neighbours are in some thread's chunk. x neighbours come
 * from the next lanes by shuffles, and at a warp's ends from shared memory;
 * y neighbours from the thread's own registers, at a group's ends from the
 * next group's edge rows in shared memory, and at the band's ends from the
 * neighbouring bands' edge rows, stored to the field in memory before the
 * grid barrier and loaded after it. More groups, fewer rows a thread: the
 * sweep is latency-bound at one block per SM, so G groups of R rows beat one
 * of G R rows (measured: see bench/results/).
 *
 * Where the time goes: a sweep costs about the same at any size that fits:
 * the grid barrier and two L2 round trips (the edge stores drained before
 * it, the edge loads after), not the points. No grid barrier, with each
 * edge chunk sent as tagged 64-bit words that the neighbour polls and the
 * sum read two sweeps late, is slower than the barrier it would replace.
 *
 * Same arithmetic as every other mode (relax_res2, same operands), so the
 * iterates have the same bits. A norm step keeps the field it measured in
 * shared memory, because the stop test comes after the barrier, when the
 * registers already hold the next iterate; a stop writes it back. */
#include <cooperative_groups.h>
#include <math.h>
#include <string.h>

#include "kernels/cuda_check.cuh"
#include "kernels/stencil_relax.cuh"
#include "solvers/relax/relax_cuda.h"
#include "solvers/relax/relax_band.cuh"
#include "solvers/relax/relax_solve.cuh"

namespace cg = cooperative_groups;

namespace {

/* Threads per block by rows per thread: the block's registers (65536 per
 * SM, one block per SM) must hold R chunks per thread plus the loop's state
 * without spilling (ptxas, sm_90: 80 registers at R = 2, 96 at R = 4, 120
 * at R = 8). 16 rows a thread would add nothing: 8 rows in twice the groups
 * hold as many rows a block. */
constexpr int res_threads(int R) { return R <= 2 ? 768 : R <= 4 ? 640 : 512; }
/* The same with several sweeps between barriers (rounds_kernel, R <= 4): its
 * halo rows and round bookkeeping spill at 80 and 96 registers (ptxas, sm_90:
 * 16 to 96 bytes), not at 128. */
constexpr int depth_threads(int R) { return R <= 4 ? 512 : 0; }

/* One sweep of a group's rows from v (and up, dn, the rows beside them) into
 * v; the sum of squared residuals of the owned points (om). NORM also
 * keeps the measured field in save. eL, eR: the warps' first and last
 * columns; lane 0 of a group's first warp and lane 31 of its last read the
 * slot beside theirs (another group's, or the other side's): the value
 * feeds only a ghost element, which is not updated, and the test it replaced
 * cost instructions a row. The per-element
 * selects stay predicates: word masks (ChunkMask) spilled here. */
template <typename T, bool HAS_F, bool NORM, int R, typename OWN>
__device__ __forceinline__ double band_sweep_own(const RelaxPar &P, typename Vec16<T>::type (&v)[R],
                                             const typename Vec16<T>::type &up,
                                             const typename Vec16<T>::type &dn, int rows,
                                             const OWN &om, const T *eL, const T *eR,
                                             const typename Vec16<T>::type *fp, long long fstride,
                                             typename Vec16<T>::type *save,
                                             typename Vec16<T>::type &last) {
  typedef typename Vec16<T>::type VT;
  constexpr int V = Vec16<T>::n;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  const T w0 = (T)P.w0, w1 = (T)P.w1, diag = (T)P.diag, c = (T)P.c;
  double sum = 0.0;
  VT prev = up;
#pragma unroll
  for (int r = 0; r < R; r++) {
    if (r < rows) { /* the same for the whole block */
    const VT cur = v[r];
    VT nxt = dn;
    if (r + 1 < R && r + 1 < rows) nxt = v[r + 1 < R ? r + 1 : r];
    T left = __shfl_up_sync(0xffffffffu, vget(cur, V - 1), 1);
    T right = __shfl_down_sync(0xffffffffu, vget(cur, 0), 1);
    if (lane == 0) left = eR[r * nw + w - 1];
    if (lane == 31) right = eL[r * nw + w + 1];
    VT fv;
    if (HAS_F) fv = fp[r * fstride];
    if (NORM) save[r * blockDim.x + threadIdx.x] = cur;
    /* SKIP0 false: here the zero-residual skip costs more than it saves */
    const VT out = band_chunk<T, HAS_F, true, NORM, false, OWN>(cur, prev, nxt, fv, left, right, om, w0, w1, diag, c, sum);
    v[r] = out;
    last = out; /* the band's last row, for publish (no indexing of v by rows) */
    prev = cur;
    }
  }
  return sum;
}
/* full: every chunk of the warp owned (warp-uniform): no selects */
template <typename T, bool HAS_F, bool NORM, int R>
__device__ __forceinline__ double band_sweep(const RelaxPar &P, typename Vec16<T>::type (&v)[R],
                                             const typename Vec16<T>::type &up,
                                             const typename Vec16<T>::type &dn, int rows, unsigned om,
                                             bool full, const T *eL, const T *eR,
                                             const typename Vec16<T>::type *fp, long long fstride,
                                             typename Vec16<T>::type *save, typename Vec16<T>::type &last) {
  if (full) return band_sweep_own<T, HAS_F, NORM, R>(P, v, up, dn, rows, AllOwned(), eL, eR, fp, fstride, save, last);
  return band_sweep_own<T, HAS_F, NORM, R>(P, v, up, dn, rows, om, eL, eR, fp, fstride, save, last);
}

/* The warp's end columns of v into e ([side][r][warp]): lane 0 the first
 * element, lane 31 the last; the next sweep reads them at the warps' ends. */
template <typename T, int R>
__device__ __forceinline__ void put_edges(T *e, const typename Vec16<T>::type (&v)[R]) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  if (lane == 0) {
#pragma unroll
    for (int r = 0; r < R; r++) e[r * nw + w] = vget(v[r], 0);
  }
  if (lane == 31) {
#pragma unroll
    for (int r = 0; r < R; r++) e[R * nw + r * nw + w] = vget(v[r], Vec16<T>::n - 1);
  }
}

/* Where this thread works in the band of its block: the band's rows, the
 * thread's group and chunk, the group's rows, first row (in the band: goff;
 * storage: r0) and the chunk's storage x. */
struct BandAt {
  int brows, g, ct, rows, goff, r0, xs;
  bool live; /* the chunk lies in the row */
};
template <typename T>
__device__ __forceinline__ BandAt band_at(const ResGeom &G) {
  const int b = blockIdx.x, tid = threadIdx.x;
  BandAt at;
  at.brows = G.base + (b < G.extra ? 1 : 0);
  at.g = tid / G.tg;
  at.ct = tid - at.g * G.tg;
  const int gbase = at.brows / G.groups, gextra = at.brows % G.groups;
  at.rows = gbase + (at.g < gextra ? 1 : 0); /* >= 1 (the plan's rule) */
  at.goff = at.g * gbase + min(at.g, gextra);
  at.r0 = G.om0 + b * G.base + min(b, G.extra) + at.goff;
  at.live = at.ct < G.nch;
  at.xs = (G.a0 + at.ct) * Vec16<T>::n;
  return at;
}

/* The f a group reads (f of row r at fp[r * fstride]): copied into shared
 * memory fs, or read from L2. */
template <typename T, bool HAS_F, int R>
__device__ __forceinline__ void band_f(const ResGeom &G, const T *f, typename Vec16<T>::type *fs, bool live, int xs,
                                       long long sy, int r0, int rows, const typename Vec16<T>::type *&fp,
                                       long long &fstride) {
  constexpr int V = Vec16<T>::n;
  if (!HAS_F) return;
  if (G.f_smem) {
    const int nthr = blockDim.x, tid = threadIdx.x;
#pragma unroll
    for (int r = 0; r < R; r++) fs[r * nthr + tid] = live && r < rows ? vload(f + xs + sy * (r0 + r)) : vzero<T>();
    fp = fs + tid;
    fstride = nthr;
  } else {
    /* lanes past the row read the group's first chunk over and over:
     * their own chunk may lie past the end of f */
    fp = reinterpret_cast<const typename Vec16<T>::type *>(f + (live ? xs + sy * r0 : G.a0 * V + sy * r0));
    fstride = live ? sy / V : 0;
  }
}

/* The owned elements of the chunk at storage x xs. */
template <typename T>
__device__ __forceinline__ unsigned band_om(const ResGeom &G, bool live, int xs) {
  unsigned om = 0;
#pragma unroll
  for (int e = 0; e < Vec16<T>::n; e++)
    if (live && xs + e >= G.ox0 && xs + e < G.ox1) om |= 1u << e;
  return om;
}

template <typename T, bool HAS_F, int R>
__global__ void __launch_bounds__(res_threads(R), 1)
    resident_kernel(RelaxPar P, ResGeom G, T *ua, T *ub, const T *__restrict__ f, SolveArgs a,
                    coop_relax_solve_state *st, long long *hi, double *hr) {
  typedef typename Vec16<T>::type VT;
  constexpr int V = Vec16<T>::n;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, nw = blockDim.x >> 5;
  const int nthr = blockDim.x, b = blockIdx.x, nb = gridDim.x;
  const BandAt at = band_at<T>(G);
  const int g = at.g, ng = G.groups, ct = at.ct, rows = at.rows, r0 = at.r0, xs = at.xs;
  const bool live = at.live;
  const long long sy = G.sy;
  const bool lead = b == 0 && tid == 0;
  /* shared memory: the field of the last norm step, f, the groups' edge rows
   * ([parity][group][first, last][chunk]), edge columns */
  VT *save = reinterpret_cast<VT *>(smem);
  VT *fs = save + R * nthr;
  VT *grow = fs + (HAS_F && G.f_smem ? R * nthr : 0);
  T *ecol = reinterpret_cast<T *>(grow + (ng > 1 ? 2 * 2 * nthr : 0)); /* [parity][side][r][warp] */
  __shared__ double s_sum;

  unsigned om = 0; /* owned elements of the chunk */
#pragma unroll
  for (int e = 0; e < V; e++)
    if (live && xs + e >= G.ox0 && xs + e < G.ox1) om |= 1u << e;
  const bool full = warp_owns_all<T>(om);

  VT v[R];
  const VT z = vzero<T>();
#pragma unroll
  for (int r = 0; r < R; r++) v[r] = live && r < rows ? vload(ua + xs + sy * (r0 + r)) : z;
  /* the rows beside the band: the neighbours' edges, or the boundary */
  VT up = live ? vload(ua + xs + sy * (r0 - 1)) : z;
  VT dn = live ? vload(ua + xs + sy * (r0 + rows)) : z;
  const VT *fp = nullptr; /* f of row r at fp[r * fstride] */
  long long fstride = 0;
  if (HAS_F) {
    if (G.f_smem) {
#pragma unroll
      for (int r = 0; r < R; r++) fs[r * nthr + tid] = live && r < rows ? vload(f + xs + sy * (r0 + r)) : z;
      fp = fs + tid;
      fstride = nthr;
    } else {
      /* lanes past the row read the group's first chunk over and over:
       * their own chunk may lie past the end of f */
      fp = reinterpret_cast<const VT *>(f + (live ? xs + sy * r0 : G.a0 * V + sy * r0));
      fstride = live ? sy / V : 0;
    }
  }
  put_edges<T, R>(ecol, v); /* by parity: written after a sweep, read in the next */
  __syncthreads();
  const long long q0 = xs + sy * r0;
  /* neighbours through L2 (the next band) or shared memory (the next group) */
  const bool below = live && g == 0 && b > 0, above = live && g + 1 == ng && b + 1 < nb;
  const bool gbelow = g > 0, gabove = g + 1 < ng;
  VT last = z;

  cg::grid_group grid = cg::this_grid();
  T *cur_f = ua, *new_f = ub; /* the buffer of the iterate, and the one its edges go to */
  long long it = 0, c_no = 0, steps = 0;
  double r0n = 0.0, rn = 0.0;
  int reason = 0, par = 0;
  /* one sweep into v, its edge rows into new_f for the neighbours */
#define RESIDENT_SWEEP(NORM)                                                                    \
  band_sweep<T, HAS_F, NORM, R>(P, v, up, dn, rows, om, full, ecol + par * 2 * R * nw,                 \
                                ecol + par * 2 * R * nw + R * nw, fp, fstride, save, last);         \
  publish<T>(new_f, q0, sy, rows, om, below, above, v[0], last);                                   \
  if (gbelow) grow[((par ^ 1) * 2 * ng + 2 * g) * G.tg + ct] = v[0];                                \
  if (gabove) grow[((par ^ 1) * 2 * ng + 2 * g + 1) * G.tg + ct] = last;                            \
  put_edges<T, R>(ecol + (par ^ 1) * 2 * R * nw, v);                                               \
  par ^= 1;                                                                                        \
  steps++
  /* after the barrier (which holds the block's too): the neighbours' edge
   * rows; the groups' by parity, so a group writing the next ones cannot
   * overtake a slower one still reading these */
#define RESIDENT_HALO()                                                      \
  do {                                                                       \
    if (below) up = vload(new_f + q0 - sy);                                  \
    if (above) dn = vload(new_f + q0 + sy * rows);                           \
    if (gbelow) up = grow[(par * 2 * ng + 2 * (g - 1) + 1) * G.tg + ct];     \
    if (gabove) dn = grow[(par * 2 * ng + 2 * (g + 1)) * G.tg + ct];         \
  } while (0)
  for (;;) {
    /* norm step at check c_no: its sum goes to acc[c_no % 3]; the slot the
     * next check uses was last read before the previous barrier */
    const double part = RESIDENT_SWEEP(true);
    if (lead) st->acc[(c_no + 1) % 3] = 0.0;
    block_sum_add(part, &st->acc[c_no % 3]);
    grid.sync();
    if (tid == 0) s_sum = *(volatile double *)&st->acc[c_no % 3];
    RESIDENT_HALO();
    __syncthreads();
    reason = solve_check(s_sum, it, c_no, r0n, rn, a, lead, st, hi, hr);
    c_no++;
    if (reason) { /* the measured iterate, kept in save, is the answer */
      if (live)
#pragma unroll
        for (int r = 0; r < R; r++)
          if (r < rows) vstore_mask<T>(cur_f + q0 + sy * r, save[r * nthr + tid], om);
      break;
    }
    T *t = cur_f;
    cur_f = new_f;
    new_f = t;
    it++;
    const long long next = min(it - 1 + a.check_every, a.max_iter);
    for (; it < next; it++) {
      RESIDENT_SWEEP(false);
      grid.sync();
      RESIDENT_HALO();
      t = cur_f;
      cur_f = new_f;
      new_f = t;
    }
  }
#undef RESIDENT_SWEEP
#undef RESIDENT_HALO
  if (lead) solve_finish(st, r0n, rn, it, steps, reason);
}

/* Depth D > 1: the rows of the neighbouring bands a block recomputes so that
 * D sweeps pass between grid barriers. side 0: rows r0-1-j above the band,
 * side 1: rows r0+rows+j below it (j < D), double-buffered by sub-sweep in
 * shared memory, one chunk per thread of the band's edge group. At sub-sweep s
 * rows j < D-1-s are brought forward (row D-1-s is stale from then on, and
 * row 0 feeds the band's own edge row). The same operands as the neighbour
 * uses for them, so the same bits; their residuals are the neighbour's. */
template <typename T, bool HAS_F>
__device__ __forceinline__ void halo_rows(const RelaxPar &P, const typename Vec16<T>::type *hin,
                                          typename Vec16<T>::type *hout, int nrows, int tg, int ct,
                                          const typename Vec16<T>::type &inner, bool above, const T *f0,
                                          long long fstep, unsigned om) {
  typedef typename Vec16<T>::type VT;
  constexpr int V = Vec16<T>::n;
  const T w0 = (T)P.w0, w1 = (T)P.w1, diag = (T)P.diag, c = (T)P.c;
  double unused = 0.0;
  for (int j = 0; j < nrows; j++) {
    const VT cur = hin[j * tg + ct];
    const VT in = j == 0 ? inner : hin[(j - 1) * tg + ct], out = hin[(j + 1) * tg + ct];
    const T *row = reinterpret_cast<const T *>(hin + j * tg);
    const T left = ct > 0 ? row[ct * V - 1] : (T)0; /* beyond the row: ghost side, not owned */
    const T right = ct + 1 < tg ? row[(ct + 1) * V] : (T)0;
    VT fv;
    if (HAS_F) fv = vload(f0 + j * fstep);
    hout[j * tg + ct] = band_chunk<T, HAS_F, true, false>(cur, above ? out : in, above ? in : out, fv, left, right,
                                                          om, w0, w1, diag, c, unused);
  }
}

template <typename T, bool HAS_F, int R, int D>
__global__ void __launch_bounds__(depth_threads(R), 1)
    rounds_kernel(RelaxPar P, ResGeom G, T *ua, T *ub, const T *__restrict__ f, SolveArgs a,
                  coop_relax_solve_state *st, long long *hi, double *hr) {
  typedef typename Vec16<T>::type VT;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, nw = blockDim.x >> 5;
  const int nthr = blockDim.x, b = blockIdx.x, nb = gridDim.x;
  const BandAt at = band_at<T>(G);
  const int brows = at.brows, g = at.g, ng = G.groups, ct = at.ct, rows = at.rows, goff = at.goff;
  const int r0 = at.r0, xs = at.xs;
  const bool live = at.live;
  const long long sy = G.sy;
  const bool lead = b == 0 && tid == 0;
  /* shared memory: the fields of the round's norm steps, f, the groups' edge
   * rows ([parity][group][first, last][chunk]), the neighbours' rows
   * ([side][buffer][row][chunk], D > 1), edge columns */
  VT *save = reinterpret_cast<VT *>(smem);
  VT *fs = save + G.nsave * R * nthr;
  VT *grow = fs + (HAS_F && G.f_smem ? R * nthr : 0);
  VT *halo = grow + (ng > 1 ? 2 * 2 * nthr : 0);
  T *ecol = reinterpret_cast<T *>(halo + (D > 1 ? 2 * 2 * D * G.tg : 0)); /* [parity][side][r][warp] */
  __shared__ double s_sum[D];

  const unsigned om = band_om<T>(G, live, xs);
  /* no select-free path here: it measured no faster, at times slower */
  const bool full = false;

  VT v[R];
  const VT z = vzero<T>();
#pragma unroll
  for (int r = 0; r < R; r++) v[r] = live && r < rows ? vload(ua + xs + sy * (r0 + r)) : z;
  VT last = live ? vload(ua + xs + sy * (r0 + rows - 1)) : z; /* the group's last row */
  /* the rows beside the band: the neighbours' edges, or the boundary */
  VT up = live ? vload(ua + xs + sy * (r0 - 1)) : z;
  VT dn = live ? vload(ua + xs + sy * (r0 + rows)) : z;
  const VT *fp = nullptr; /* f of row r at fp[r * fstride] */
  long long fstride = 0;
  band_f<T, HAS_F, R>(G, f, fs, live, xs, sy, r0, rows, fp, fstride);
  /* neighbours through L2 (the next band) or shared memory (the next group) */
  const bool below = g == 0 && b > 0, above = g + 1 == ng && b + 1 < nb; /* a band beside */
  const bool gbelow = g > 0, gabove = g + 1 < ng;
  VT *hup = halo, *hdn = halo + 2 * D * G.tg; /* [buffer][row][chunk] of each side */
  const long long q0 = xs + sy * r0;
  /* the neighbours' rows from field src into buffer 0, the first into up, dn */
#define RESIDENT_LOAD(src)                                                                  \
  do {                                                                                      \
    if (below) {                                                                            \
      if (live) up = vload(src + q0 - sy);                                                  \
      if (D > 1)                                                                            \
        for (int j = 0; j < D; j++) hup[j * G.tg + ct] = live ? vload(src + q0 - sy * (j + 1)) : z; \
    }                                                                                       \
    if (above) {                                                                            \
      if (live) dn = vload(src + q0 + sy * rows);                                           \
      if (D > 1)                                                                            \
        for (int j = 0; j < D; j++) hdn[j * G.tg + ct] = live ? vload(src + q0 + sy * (rows + j)) : z; \
    }                                                                                       \
  } while (0)
  RESIDENT_LOAD(ua);
  if (D > 1) { /* buffer 1's rows past the live chunks are read as x neighbours */
    if (below)
      for (int j = 0; j < D; j++) hup[(D + j) * G.tg + ct] = z;
    if (above)
      for (int j = 0; j < D; j++) hdn[(D + j) * G.tg + ct] = z;
  }
  put_edges<T, R>(ecol, v); /* by parity: written after a sweep, read in the next */
  __syncthreads();

  cg::grid_group grid = cg::this_grid();
  long long it = 0, c_no = 0, nextnorm = 0, stop = 0;
  double r0n = 0.0, rn = 0.0;
  int reason = 0, par = 0, hb = 0;
  /* one sweep into v (norm steps keep the measured field in sv) */
#define RESIDENT_SWEEP(NORM, sv)                                                                \
  band_sweep<T, HAS_F, NORM, R>(P, v, up, dn, rows, om, full, ecol + par * 2 * R * nw,                 \
                                ecol + par * 2 * R * nw + R * nw, fp, fstride, sv, last);         \
  if (gbelow) grow[((par ^ 1) * 2 * ng + 2 * g) * G.tg + ct] = v[0];                                \
  if (gabove) grow[((par ^ 1) * 2 * ng + 2 * g + 1) * G.tg + ct] = last;                            \
  put_edges<T, R>(ecol + (par ^ 1) * 2 * R * nw, v);                                               \
  par ^= 1
  /* the next groups' edge rows, by parity, so a group writing the next ones
   * cannot overtake a slower one still reading these */
#define RESIDENT_GROUPS()                                                    \
  do {                                                                       \
    if (gbelow) up = grow[(par * 2 * ng + 2 * (g - 1) + 1) * G.tg + ct];     \
    if (gabove) dn = grow[(par * 2 * ng + 2 * (g + 1)) * G.tg + ct];         \
  } while (0)
  /* rounds of at most D sweeps, a grid barrier after each: the band's first
   * and last D rows go to the round's field for the neighbours, the norm
   * steps' sums to acc[round % 3][k], checked after the barrier in order */
  int len = 1;
  for (int m3 = 0, odd = 0;; m3 = m3 == 2 ? 0 : m3 + 1, odd ^= 1) { /* round m: m % 3, m & 1 */
    len = (int)min((long long)D, a.max_iter - it + 1);
    T *pb = odd ? ua : ub; /* round 0 leaves ua, which the first loads read, alone */
    double *acc = st->acc + m3 * D;
    if (lead)
      for (int k = 0; k < D; k++) st->acc[(m3 == 2 ? 0 : m3 + 1) * D + k] = 0.0; /* read last before the previous barrier */
    unsigned norms = 0;
    int nk = 0;
    for (int s = 0; s < len; s++) {
      if (D > 1 && s + 1 < len) { /* the neighbours' rows the next sub-sweeps need */
        if (below && live)
          halo_rows<T, HAS_F>(P, hup + hb * D * G.tg, hup + (hb ^ 1) * D * G.tg, D - 1 - s, G.tg, ct, v[0], true,
                              HAS_F ? f + q0 - sy : nullptr, -sy, om);
        if (above && live)
          halo_rows<T, HAS_F>(P, hdn + hb * D * G.tg, hdn + (hb ^ 1) * D * G.tg, D - 1 - s, G.tg, ct, last, false,
                              HAS_F ? f + q0 + sy * rows : nullptr, sy, om);
      }
      if (it + s == nextnorm) {
        const double part = RESIDENT_SWEEP(true, save + nk * R * nthr);
        block_sum_add(part, &acc[nk]);
        norms |= 1u << s;
        nk++;
        nextnorm = min(it + s + a.check_every, a.max_iter);
      } else {
        RESIDENT_SWEEP(false, save);
      }
      if (s + 1 < len) {
        __syncthreads();
        hb ^= 1;
        if (below && live) up = hup[hb * D * G.tg + ct];
        if (above && live) dn = hdn[hb * D * G.tg + ct];
        RESIDENT_GROUPS();
      }
    }
    /* the band's first and last D rows for the neighbours */
    if (live)
#pragma unroll
      for (int r = 0; r < R; r++)
        if (r < rows && ((goff + r < D && b > 0) || (goff + r >= brows - D && b + 1 < nb)))
          vstore_mask<T>(pb + q0 + sy * r, v[r], om);
    grid.sync();
    if (tid < nk) s_sum[tid] = *(volatile double *)&acc[tid];
    RESIDENT_LOAD(pb);
    hb = 0;
    RESIDENT_GROUPS();
    __syncthreads();
    for (int s = 0, k = 0; s < len && !reason; s++) {
      if (!((norms >> s) & 1u)) continue;
      reason = solve_check(s_sum[k], it + s, c_no, r0n, rn, a, lead, st, hi, hr);
      c_no++;
      if (reason) { /* the measured iterate, kept aside, is the answer */
        T *dst = ((it + s) & 1) ? ub : ua;
        if (live)
#pragma unroll
          for (int r = 0; r < R; r++)
            if (r < rows) vstore_mask<T>(dst + q0 + sy * r, save[(k * R + r) * nthr + tid], om);
        stop = it + s;
      }
      k++;
    }
    if (reason) break;
    it += len;
  }
#undef RESIDENT_SWEEP
#undef RESIDENT_GROUPS
#undef RESIDENT_LOAD
  /* the stop's iterate; sweeps done: the iterates before the last round, and its sweeps */
  if (lead) solve_finish(st, r0n, rn, stop, it + len, reason);
}

constexpr int kRows[] = {2, 4, 8};
constexpr int kDepths[] = {4, 2, 1}; /* sweeps a round, largest first */

template <typename T, bool HAS_F, int R>
void *kernel_depth(int D) {
  switch (D) {
    case 4: return (void *)rounds_kernel<T, HAS_F, R, 4>;
    case 2: return (void *)rounds_kernel<T, HAS_F, R, 2>;
    default: return (void *)resident_kernel<T, HAS_F, R>;
  }
}
template <typename T, bool HAS_F>
void *kernel_for(int R, int D) {
  switch (R) {
    case 2: return kernel_depth<T, HAS_F, 2>(D);
    case 4: return kernel_depth<T, HAS_F, 4>(D);
    default: return (void *)resident_kernel<T, HAS_F, 8>; /* one sweep a barrier only */
  }
}
void *pick(bool f32, bool has_f, int R, int D) {
  return f32 ? (has_f ? kernel_for<float, true>(R, D) : kernel_for<float, false>(R, D))
             : (has_f ? kernel_for<double, true>(R, D) : kernel_for<double, false>(R, D));
}

}  // namespace

/* p for D sweeps a round, R rows a thread and ng groups of threads, if
 * they fit: at most one block per SM, a row for every group (base >= ng), a
 * band of at least D rows, and the norm steps' fields a round keeps aside
 * in shared memory. */
static int plan_try(const coop_stencil *s, bool has_f, long long ce, int sms, int optin, int D, int R,
                    long long ng, coop_relax_resident *p, int *fits) {
  const coop_grid *gr = &s->grid;
  const bool f32 = gr->prec == COOP_FP32;
  const long long tsize = f32 ? 4 : 8;
  const long long threads = (band_chunks(gr) + 31) / 32 * 32;
  *fits = 0;
  const long long blocks = (gr->n[1] + ng * R - 1) / (ng * R);
  if (blocks > sms || gr->n[1] / blocks < ng || gr->n[1] / blocks < D) return 0;
  const long long nthr = ng * threads;
  void *k = pick(f32, has_f, R, D);
  cudaFuncAttributes fa;
  COOP_CUDA(cudaFuncGetAttributes(&fa, k));
  const long long room = optin - (long long)fa.sharedSizeBytes; /* less the static shared memory */
  const long long band = (long long)R * nthr * 16;           /* one field of the band */
  const long long nsave = D < (D + ce - 1) / ce + 1 ? D : (D + ce - 1) / ce + 1; /* norm steps a round */
  const long long grows = ng > 1 ? 2LL * 2 * nthr * 16 : 0;  /* the groups' edge rows */
  const long long hrows = D > 1 ? 2LL * 2 * D * threads * 16 : 0; /* the neighbours' rows */
  const long long edges = 2LL * 2 * R * (nthr / 32) * tsize; /* the warps' edge columns */
  long long bytes = nsave * band + grows + hrows + edges;
  if (bytes > room) return 0;
  const int f_smem = has_f && bytes + band <= room;
  if (f_smem) bytes += band;
  COOP_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
  int per_sm = 0;
  COOP_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, (int)nthr, (size_t)bytes));
  if ((long long)per_sm * sms < blocks) return 0;
  p->blocks = (int)blocks;
  p->threads = (int)nthr;
  p->groups = (int)ng;
  p->rows = R;
  p->smem = (int)bytes;
  p->f_smem = f_smem;
  p->depth = D;
  p->nsave = (int)nsave;
  *fits = 1;
  return 0;
}

extern "C" int coop_relax_resident_plan_cuda(const coop_stencil *s, int has_f, long long check_every,
                                             int depth, int sms, coop_relax_resident *p) {
  const coop_grid *gr = &s->grid;
  memset(p, 0, sizeof *p);
  if (gr->ndim != 2) return 0; /* 3D boxes stream from memory */
  const long long threads = (band_chunks(gr) + 31) / 32 * 32;
  const long long ce = check_every < 1 ? 1 : check_every;
  int dev = 0, optin = 0, fits = 0;
  COOP_CUDA(cudaGetDevice(&dev));
  COOP_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  /* one sweep a barrier: the fewest rows a thread (R), then the fewest
   * groups */
  for (int R : kRows) {
    for (long long ng = 1; !fits && ng * threads <= res_threads(R); ng++)
      COOP_CHECK(plan_try(s, has_f, ce, sms, optin, 1, R, ng, p, &fits));
    if (fits) break;
  }
  /* then more sweeps a round with the same rows a thread, in as few more
   * groups as give bands of D rows. auto takes 4 or none: 4 gained on small
   * boxes checked every sweep, 2 lost as often as it gained (measured: see
   * bench/results/) */
  if (fits && depth != 1) {
    const coop_relax_resident one = *p;
    for (int D : kDepths) {
      if (D == 1 || (depth ? D > depth : D != COOP_RELAX_AUTO_DEPTH)) continue;
      fits = 0;
      for (long long ng = one.groups; !fits && ng * threads <= depth_threads(one.rows); ng++)
        COOP_CHECK(plan_try(s, has_f, ce, sms, optin, D, one.rows, ng, p, &fits));
      if (fits) return 0;
    }
    *p = one; /* the solve sets the kernel's shared memory size from it */
    return 0;
  }
  if (fits) return 0;
  /* rows too long or too many for one band per SM in registers: in shared
   * memory, or else the box streams */
  return coop_relax_smem_plan_cuda(s, has_f, sms, p);
}

extern "C" int coop_relax_solve_resident_cuda(const coop_stencil *s, double c, void *u, void *unew,
                                              const void *f, const coop_solve_ctl *ctl,
                                              coop_relax_solve_state *state, long long *hist_iter,
                                              double *hist_res, long long hist_cap,
                                              const coop_relax_resident *p, void *stream) {
  if (p->shared) return coop_relax_solve_smem_cuda(s, c, u, unew, f, ctl, state, hist_iter, hist_res, hist_cap, p, stream);
  if (p->blocks < 1 || s->grid.ndim != 2)
    return COOP_ERROR(COOP_ERR_RUNTIME, "no resident plan for this box");
  RelaxPar P = make_relax_par(s, c);
  SolveArgs a = {ctl->max_iter, ctl->check_every, hist_cap, ctl->rtol, ctl->atol, ctl->dtol};
  ResGeom G = make_geom(s, p);
  cudaStream_t q = (cudaStream_t)stream;
  void *k = pick(s->grid.prec == COOP_FP32, f != NULL, p->rows, p->depth);
  void *args[] = {&P, &G, &u, &unew, (void *)&f, &a, &state, &hist_iter, &hist_res};
  COOP_CUDA(cudaMemsetAsync(state, 0, sizeof *state, q));
  COOP_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, p->smem));
  COOP_CUDA(cudaLaunchCooperativeKernel(k, dim3(p->blocks), dim3(p->threads), args, (size_t)p->smem, q));
  return 0;
}
