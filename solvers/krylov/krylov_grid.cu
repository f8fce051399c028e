/* Whole Krylov solves in one cooperative persistent kernel (solvers/krylov/krylov_grid.h).
 *
 * Layout (Rows below). CSR and narrow boxes: block b owns the rows
 * [b*chunk, (b+1)*chunk), its threads take rows start+t, start+t+T, ... .
 * Stencil boxes at least a block wide: strips of T columns, each thread
 * walking up its column, so the rows below and above come from L1.
 *
 * SpMV: one thread per row. Poisson rows have 5 (7) nonzeros, too few to
 * share among lanes without idling most of them; a warp's 32 rows are 160
 * consecutive nonzeros, so val/colind come through L1 at full line use; and
 * each nonzero needs 2-4 entries of the column's vectors to recompute the
 * fused value there (p_new_j etc.), work a lane does best on its own. The row
 * sum runs in CSR order.
 *
 * Two variants, chosen per launch:
 *  - cached (at most kCacheRows rows a thread): values only the owner reads
 *    (x, the SpMV result between two phases, pipelined CG's recurrences)
 *    live in shared memory for the whole solve; x is written back at the
 *    end. For problems that fit in L2, where barriers and latency set the pace.
 *  - streamed: everything in device memory; the SpMV result a later phase
 *    needs is recomputed (stencil: no matrix to read) or stored (CSR), and
 *    the vectors' lines a few steps ahead are prefetched into L2.
 *
 * Reductions: each block sums its rows' products (fma, row order), then the
 * block (warp butterflies, warps in order) into partials[set][k][block]; after
 * the grid barrier every block sums all partials in the same order, so all
 * blocks hold bit-identical scalars and take identical branches. Sets
 * alternate by barrier: a set read after barrier k is next written after
 * barrier k+1, when every block has finished reading it.
 *
 * Memory: vectors written inside the kernel are read with plain loads (never
 * the read-only path: ld.global.nc is not coherent with writes made while the
 * kernel runs); only b, inv_diag and the matrix go through __ldg. Within one
 * phase no vector is both written by its owner and read at a neighbour's row
 * (hence the double buffers), so a phase needs no barrier inside. */
#include <cooperative_groups.h>
#include <float.h>
#include <stdint.h>

#include "kernels/cuda_check.cuh"
#include "solvers/krylov/krylov_grid.h"
#include "solvers/stop.h"

namespace cg = cooperative_groups;

namespace {

constexpr int kThreads = 256;                /* block size the kernels are built for */
constexpr int kMaxWarps = kThreads / 32;
/* Resident blocks an SM each kernel is built for (launch bounds): as many as
 * fit without spills on sm_90 and sm_100 (64 registers: CG on the stencil,
 * BiCGStab; 85: CG and single-reduction CG on CSR; 128: pipelined CG and
 * single-reduction CG on the stencil, which spills at 85). Streaming is latency bound
 * (too few loads in flight), so more resident blocks help where they fit. */
constexpr int kMinBlocksCgStencil = 4, kMinBlocksCgCsr = 3, kMinBlocksBicg = 4, kMinBlocksPipe = 2,
              kMinBlocksCgsrStencil = 2, kMinBlocksCgsrCsr = 3;
constexpr int kMaxBlocks = 1024;             /* partials each block re-reads per barrier */
constexpr int kMaxRed = 3;                   /* values in one reduction */
constexpr int kCacheRows = 4;                /* rows per thread of the cached variant */
constexpr int kVecAlign = 32;                /* vector starts 256-byte aligned */
/* L2 prefetch distance when streaming, in steps of a thread's walk: strips
 * with a per-warp bulk prefetch 2 steps ahead beat per-thread prefetches 4
 * ahead, and farther ahead was slower (measured: see bench/results/). */
constexpr int kAheadFlat = 4, kAheadStrips = 2;

/* Arithmetic with one rounding per operation: what host C computes for the
 * same expression without FMA contraction, and identical wherever the same
 * value is recomputed (an owner's store and a neighbour's recompute). */
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double dvd(double a, double b) { return __ddiv_rn(a, b); }
/* Dot-product accumulation: summation order differs from the one-kernel
 * version anyway, so take the more accurate fused form. */
__device__ __forceinline__ double dacc(double s, double a, double b) { return __fma_rn(a, b, s); }

struct Params {
  long long n, chunk;
  int cached; /* own-row values kept in shared memory (at most kCacheRows rows a thread) */
  int strips; /* stencil walked in strips of blockDim.x columns (0: flat), see Rows */
  /* CSR */
  const int64_t *rowptr;
  const int32_t *colind;
  const double *val;
  /* stencil */
  int nx, ny, nz, dim3;
  double w0, w1, w2, diag;
  /* preconditioner (NULL: identity), right-hand side, solution */
  const double *d, *b;
  double *x;
  double *v[11]; /* the method's work vectors */
  double *part;  /* 2 sets x kMaxRed x gridDim.x partials */
  long long max_iter, hist_cap;
  double rtol, atol, dtol;
  int64_t *hist_iter;
  double *hist_res;
  coop_kg_result *res; /* the record out; the state in when resuming */
  long long stop_at;   /* stop after this iteration's check (reason none); < 0: never */
  int resume;          /* go on from the state a stopped launch left (see save_state) */
};

/* ---------------------------------------------------------------- rows */

struct Pos {
  int x, y, z;
};

/* This thread's rows. Two walks:
 *  - flat (CSR, narrow boxes): block b owns rows [b*chunk, (b+1)*chunk), its
 *    threads take i0, i0 + T, ...; for the stencil the position of i0 and the
 *    stride T split along the axes, so a step is adds and carries.
 *  - strips (stencil boxes at least a block wide): the box is cut into strips
 *    of T columns; a unit is one strip's part of one grid line (y, z), units
 *    are numbered strip by strip, and block b owns units [b*chunk, ...). Thread
 *    t takes column t of each unit, so it walks up its column: the rows below
 *    and above are the lines it read one step before and reads one step later
 *    (L1 hits), and each vector line comes from L2/DRAM once a phase. */
struct Rows {
  long long i0, end; /* flat: first row, end; strips: first unit, end unit */
  int T;
  Pos p0, st; /* flat: position of i0 and the split stride; strips: p0 only */
};

__device__ Pos box_pos(const Params &P, long long i) {
  const long long row = i / P.nx;
  return Pos{(int)(i - row * P.nx), (int)(row % P.ny), (int)(row / P.ny)};
}

template <int KIND>
__device__ Rows make_rows(const Params &P) {
  Rows r;
  const long long start = (long long)blockIdx.x * P.chunk;
  r.T = blockDim.x;
  r.p0 = r.st = Pos{0, 0, 0};
  if (KIND == COOP_KG_STENCIL && P.strips) {
    const long long lines = (long long)P.ny * P.nz;
    r.i0 = start;
    r.end = min((long long)P.strips * lines, start + P.chunk);
    const long long s = start / lines, l = start - s * lines;
    r.p0 = Pos{(int)(s * r.T + threadIdx.x), (int)(l % P.ny), (int)(l / P.ny)};
    return r;
  }
  r.end = min(P.n, start + P.chunk);
  r.i0 = start + threadIdx.x;
  if constexpr (KIND == COOP_KG_STENCIL) {
    r.p0 = box_pos(P, r.i0 < P.n ? r.i0 : 0);
    r.st = box_pos(P, r.T);
  }
  return r;
}

__device__ __forceinline__ void prefetch_l2(const void *p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

/* A warp's 32 doubles from p on (plus slack for a 16-byte-aligned start),
 * fetched into L2 by the bulk-copy engine: one instruction, no registers. */
__device__ __forceinline__ void prefetch_warp_l2(const double *p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned long long a = (unsigned long long)p & ~15ull;
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], 272;" ::"l"(a) : "memory");
#else
  prefetch_l2(p);
#endif
}

/* f(k, i, pos) for this thread's rows in order; k counts the steps (the slot
 * in the shared-memory cache). Rows are not unrolled (one row has 10-30
 * independent loads in flight already, and unrolled rows spill); instead, when
 * streaming, the lines of the vectors in `ahead` a few steps further on are
 * prefetched into L2, which keeps more bytes in flight. */
template <int KIND, class F, class... Ptr>
__device__ __forceinline__ void for_rows(const Params &P, const Rows &r, F &&f, const Ptr... ahead) {
  constexpr bool pf = sizeof...(Ptr) > 0;
  if (KIND == COOP_KG_STENCIL && P.strips) {
    Pos p = r.p0;
    long long i = p.x + (long long)P.nx * (p.y + (long long)P.ny * p.z);
    const long long far = (long long)kAheadStrips * P.nx;
    int k = 0;
#pragma unroll 1
    for (long long u = r.i0; u < r.end; u++, k++) {
      if (p.x < P.nx) {
        /* the 272 bytes stay inside every vector of n entries */
        if (pf && !P.cached && i + far + 34 <= P.n && (threadIdx.x & 31) == 0)
          (prefetch_warp_l2(ahead + i + far), ...);
        f(k, i, p);
      }
      i += P.nx;
      if (++p.y == P.ny) {
        p.y = 0;
        if (++p.z == P.nz) { /* next strip */
          p.z = 0;
          p.x += r.T;
          i = p.x;
        }
      }
    }
    return;
  }
  Pos p = r.p0;
  int k = 0;
#pragma unroll 1
  for (long long i = r.i0; i < r.end; i += r.T, k++) {
    if constexpr (pf) {
      const long long ia = i + kAheadFlat * r.T;
      if (!P.cached && ia < r.end) (prefetch_l2(ahead + ia), ...);
    }
    f(k, i, p);
    if constexpr (KIND == COOP_KG_STENCIL) {
      p.x += r.st.x; /* st.x < nx and p.x < nx: one carry at most; likewise y */
      if (p.x >= P.nx) {
        p.x -= P.nx;
        p.y++;
      }
      p.y += r.st.y;
      if (p.y >= P.ny) {
        p.y -= P.ny;
        p.z++;
      }
      p.z += r.st.z;
    }
  }
}

/* Values of the own rows that no other row reads, in the cached variant:
 * entry (v, k) of this thread, conflict-free (consecutive threads, consecutive
 * words). Dynamic shared memory, cache_bytes(m, threads) bytes. */
extern __shared__ double kg_cache[];

__device__ __forceinline__ double &own(int v, int k) {
  return kg_cache[(v * kCacheRows + k) * blockDim.x + threadIdx.x];
}

/* Row k's own-row cache slots 0, 1, ... into v... in that order. */
template <class... D>
__device__ __forceinline__ void own_load(int k, D &...v) {
  int j = 0;
  ((v = own(j++, k)), ...);
}

/* v... into row k's own-row cache slots j, j + 1, ... */
template <class... D>
__device__ __forceinline__ void own_put(int k, int j, const D &...v) {
  ((own(j++, k) = v), ...);
}

__device__ __forceinline__ double dget(const Params &P, long long i) {
  return P.d ? __ldg(P.d + i) : 1.0; /* M = I: z = 1.0 * r is r exactly */
}

/* (A v)_i where v(j) yields the column entries (recomputed on the fly) and
 * vi is v(i), already at hand. */
template <int KIND, class V>
__device__ __forceinline__ double apply_row(const Params &P, long long i, const Pos &p, double vi,
                                            V &&v) {
  if constexpr (KIND == COOP_KG_STENCIL) {
    const double xl = p.x > 0 ? v(i - 1) : 0.0;
    const double xr = p.x < P.nx - 1 ? v(i + 1) : 0.0;
    const double xd = p.y > 0 ? v(i - P.nx) : 0.0;
    const double xu = p.y < P.ny - 1 ? v(i + P.nx) : 0.0;
    double y = mul(P.diag, vi);
    y = sub(y, mul(P.w0, add(xl, xr)));
    y = sub(y, mul(P.w1, add(xd, xu)));
    if (P.dim3) {
      const long long sz = (long long)P.nx * P.ny;
      const double xb = p.z > 0 ? v(i - sz) : 0.0;
      const double xf = p.z < P.nz - 1 ? v(i + sz) : 0.0;
      y = sub(y, mul(P.w2, add(xb, xf)));
    }
    return y;
  } else {
    (void)p;
    (void)vi;
    const long long k1 = __ldg(P.rowptr + i + 1);
    double acc = 0.0;
    /* 4 nonzeros' loads in flight, then the sum in CSR order */
    for (long long k = __ldg(P.rowptr + i); k < k1; k += 4) {
      double t[4];
#pragma unroll
      for (int u = 0; u < 4; u++)
        t[u] = k + u < k1 ? mul(__ldg(P.val + k + u), v((long long)__ldg(P.colind + k + u))) : 0.0;
#pragma unroll
      for (int u = 0; u < 4; u++)
        if (k + u < k1) acc = add(acc, t[u]);
    }
    return acc;
  }
}

/* ---------------------------------------------------------- reductions */

__device__ __forceinline__ double warp_sum(double v) {
  /* butterfly: lanes l and l^o add the same two numbers, so every lane ends
   * with the same bits */
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = add(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/* Partial sets and the barrier count that picks them. */
struct Red {
  double *base;
  int nb; /* barriers passed */
  __device__ double *out() const { return base + (nb & 1) * kMaxRed * gridDim.x; }
  __device__ const double *in() const { return base + ((nb - 1) & 1) * kMaxRed * gridDim.x; }
  __device__ void sync(cg::grid_group &g) {
    g.sync();
    nb++;
  }
};

/* This block's sums of v[0..K) into the current set; every thread calls it.
 * The shared buffer is next written after a grid barrier. */
template <int K>
__device__ void block_partial(const double (&v)[K], Red &red) {
  __shared__ double sm[K][kMaxWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
#pragma unroll
  for (int k = 0; k < K; k++) {
    const double s = warp_sum(v[k]);
    if (lane == 0) sm[k][warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    double *out = red.out();
#pragma unroll
    for (int k = 0; k < K; k++) {
      const double s = warp_sum(lane < nw ? sm[k][lane] : 0.0);
      if (lane == 0) out[k * gridDim.x + blockIdx.x] = s;
    }
  }
}

/* Sync the grid, then every block sums all blocks' partials in one order. */
template <int K>
__device__ void grid_sum(cg::grid_group &g, Red &red, double (&out)[K]) {
  __shared__ double sm[K][kMaxWarps];
  red.sync(g);
  const double *in = red.in();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  double v[K];
#pragma unroll
  for (int k = 0; k < K; k++) v[k] = 0.0;
  for (int j = threadIdx.x; j < (int)gridDim.x; j += blockDim.x)
#pragma unroll
    for (int k = 0; k < K; k++) v[k] = add(v[k], in[k * gridDim.x + j]);
#pragma unroll
  for (int k = 0; k < K; k++) {
    v[k] = warp_sum(v[k]);
    if (lane == 0) sm[k][warp] = v[k];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; k++) {
    double s = sm[k][0];
    for (int w = 1; w < nw; w++) s = add(s, sm[k][w]);
    out[k] = s;
  }
}

/* ------------------------------------------------------ stop and history */

/* The solve's record, as solvers/krylov/krylov.c keeps it. The iteration and
 * residual of the last check go straight to P.res (block 0 writes them, so
 * they hold no registers through the loop): a breakdown found before an
 * iteration's check reports the iteration before (as the
 * one-kernel-per-operation methods do). */
struct Track {
  double r0;
  long long len; /* checks made */
  int reason;
};

__device__ void record(const Params &P, Track &t, long long it, double rn) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    if (P.hist_cap > 0) {
      const int64_t slot = coop_history_slot(t.len, P.hist_cap);
      P.hist_iter[slot] = it;
      P.hist_res[slot] = rn;
    }
    P.res->iterations = it;
    P.res->rnorm = rn;
  }
  t.len++;
}

__device__ int stop(const Params &P, const Track &t, long long it, double rn) {
  return coop_stop_test(rn, t.r0, it, P.max_iter, P.rtol, P.atol, P.dtol);
}

/* A residual check: the history entry, then the stop test's reason. */
__device__ __forceinline__ int check(const Params &P, Track &t, long long it, double rn) {
  record(P, t, it, rn);
  return stop(P, t, it, rn);
}

/* The first check: r0 = sqrt(rr), then the history entry and the stop test. */
__device__ __forceinline__ void first_check(const Params &P, Track &t, double rr) {
  t.r0 = sqrt(rr);
  t.reason = check(P, t, 0, t.r0);
}

__device__ void finish(const Params &P, const Track &t) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    P.res->r0 = t.r0;
    P.res->hist_len = P.hist_cap > 0 ? min(t.len, P.hist_cap) : 0;
    P.res->checks = t.len;
    P.res->reason = t.reason;
  }
}

/* The top of iteration it of the one-reduction CG forms (single-reduction
 * CG and pipelined CG; on the host coop_krylov_cg1_top): the check of
 * ||r|| = sqrt(rr) (skipped on a resumed launch's first iteration), the
 * breakdown tests, then alpha and beta. true: the solve ends here. */
__device__ __forceinline__ bool cg1_top(const Params &P, Track &t, long long it, bool due, double rr,
                                        double gamma, double delta, double gamma_old, double alpha_old,
                                        double &alpha, double &beta) {
  if (due) {
    const double rn = sqrt(rr);
    if (it == 0) t.r0 = rn;
    t.reason = check(P, t, it, rn);
    if (t.reason || it == P.stop_at) return true;
  }
  if (gamma < 0.0) {
    t.reason = COOP_DIVERGED_INDEFINITE_PC;
    return true;
  }
  double den;
  if (it == 0) {
    beta = 0.0;
    den = delta;
  } else {
    beta = dvd(gamma, gamma_old);
    den = sub(delta, dvd(mul(beta, gamma), alpha_old));
  }
  if (!(den > 0.0)) { /* NaN is NaN, as in solvers/krylov/cg.c and pipecg.c */
    t.reason = isnan(den) ? COOP_DIVERGED_NAN : COOP_DIVERGED_INDEFINITE_MAT;
    return true;
  }
  alpha = dvd(gamma, den);
  return false;
}

/* The end of a one-reduction CG iteration: this block's partials of gamma,
 * delta and rr (acc) out, the old gamma and alpha kept while the other blocks
 * catch up, then the sums (one grid barrier) and the buffers' parity flipped. */
__device__ __forceinline__ void cg1_end(cg::grid_group &g, Red &red, const double (&acc)[3], double alpha,
                                        double &gamma, double &delta, double &rr, double &gamma_old,
                                        double &alpha_old, bool &odd) {
  block_partial<3>(acc, red);
  gamma_old = gamma;
  alpha_old = alpha;
  double s[3];
  grid_sum<3>(g, red, s);
  gamma = s[0];
  delta = s[1];
  rr = s[2];
  odd = !odd;
}

/* This block's partials acc, then every block's sums into out (one grid barrier). */
template <int K>
__device__ __forceinline__ void all_sum(cg::grid_group &g, Red &red, const double (&acc)[K], double (&out)[K]) {
  block_partial<K>(acc, red);
  grid_sum<K>(g, red, out);
}

/* ------------------------------------------------ segments of a solve */
/* A launch may stop after the residual check of iteration P.stop_at (reason
 * none) and a later launch go on from there (P.resume), with the same
 * operations on the same values as one launch: the state the next iteration
 * reads is left in device memory. Each kernel ends with
 *  - own_rows(true): the cached variant's own-row values (x, and whatever
 *    else the next iteration reads from shared memory) into their vectors;
 *  - save_state: the scalars the method carries to its next iteration and
 *    the parity of its double buffers into P.res (finish adds the Track,
 *    record the last check);
 * and a resumed launch starts with own_rows(false) and load_state instead of
 * the initial residual. The vectors stay where they are (coop_kg_state_of
 * names them for a checkpoint). */
template <class... D>
__device__ void save_state(const Params &P, bool odd, const D... v) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int k = 0;
    ((P.res->s[k++] = v), ...);
    P.res->odd = odd;
  }
}

/* Returns the iteration the stopped launch checked last. No barrier is
 * needed before block 0 writes P.res again: up to the loop's first barrier
 * a resumed kernel can only end (a breakdown test on the loaded scalars),
 * and then it writes back the values just loaded. */
template <class... D>
__device__ long long load_state(const Params &P, Track &t, bool &odd, D &...v) {
  const coop_kg_result *r = P.res;
  int k = 0;
  ((v = r->s[k++]), ...);
  odd = r->odd != 0;
  t = Track{r->r0, r->checks, COOP_REASON_NONE};
  return r->iterations;
}

/* dev = sh (save) or sh = dev: an own row's value and its device vector. */
__device__ __forceinline__ void keep(bool save, double &dev, double &sh) {
  if (save)
    dev = sh;
  else
    sh = dev;
}

/* keep for each of dev... with the cache slots 0, 1, ... of row k. */
template <class... D>
__device__ __forceinline__ void keep_rows(bool save, int k, D &...dev) {
  int j = 0;
  (keep(save, dev, own(j++, k)), ...);
}

/* f(k, i) for this thread's rows in the cached variant (nothing to move when
 * streaming: every value lives in device memory). */
template <int KIND, class F>
__device__ void cached_rows(const Params &P, const Rows &rows, F &&f) {
  if (P.cached) for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &) { f(k, i); });
}

/* Initial residual: r = b - A x for this thread's rows; x's row value in xi. */
template <int KIND>
__device__ __forceinline__ double residual_row(const Params &P, long long i, const Pos &p,
                                               double &xi) {
  xi = P.x[i];
  const double *x = P.x;
  return sub(__ldg(P.b + i), apply_row<KIND>(P, i, p, xi, [&](long long j) { return x[j]; }));
}

/* ------------------------------------------------------------------- CG */
/* Barrier: cg::grid_group::sync() (cudaLaunchCooperativeKernel). All blocks
 * are resident: the launcher passes at most occupancy x SMs blocks (checked
 * against this kernel's occupancy before the launch), and the cooperative
 * launch refuses a grid that could not be co-resident. Every block makes the
 * same branch decisions from the same reduced scalars, so all reach every
 * barrier the same number of times.
 *
 * Two barriers an iteration:
 *  A: p_new = z + beta p_old (two p buffers), q = A p_new with the columns'
 *     p_new recomputed from z and p_old; partial (p_new, q).
 *  B: alpha = rz / pq; x += alpha p_new; r -= alpha q; z = M r; partials
 *     (r, z), (r, r); then the stop test and beta.
 * Vectors: r, z (unused when M = I: z is r), p[2], q (streamed CSR only; the
 * stencil recomputes q in B from the stored p_new). Cached: x, p_new, q, r
 * and M's diagonal (then r itself is stored only when z is r).
 * Carried to the next iteration: x, r, z, p_new (as p_old), rz, beta. */
constexpr int kCgCached = 5;

template <int KIND>
__global__ void __launch_bounds__(kThreads, KIND == COOP_KG_STENCIL ? kMinBlocksCgStencil
                                                                  : kMinBlocksCgCsr)
    cg_kernel(const Params P) {
  cg::grid_group grid = cg::this_grid();
  const Rows rows = make_rows<KIND>(P);
  const bool cached = P.cached;
  double *const R = P.v[0], *const Z = P.d ? P.v[1] : P.v[0], *const Q = P.v[4];
  Red red{P.part, 0};
  Track t{0.0, 0, COOP_REASON_NONE};
  long long it0 = 0; /* the last iteration checked before the loop */
  const auto own_rows = [&](bool save) {
    cached_rows<KIND>(P, rows, [&](int k, long long i) {
      keep(save, P.x[i], own(0, k));
      keep(save, R[i], own(3, k));
      if (!save) own(4, k) = dget(P, i);
    });
  };
  double rz, beta = 0.0;
  bool first = !P.resume, odd = false;

  if (P.resume) {
    own_rows(false);
    it0 = load_state(P, t, odd, rz, beta);
  } else { /* r = b - A x; z = M r; p = z (in the first phase A) */
    double acc[2] = {0.0, 0.0};
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi;
      const double ri = residual_row<KIND>(P, i, p, xi), zi = mul(dget(P, i), ri);
      R[i] = ri;
      if (P.d) Z[i] = zi;
      acc[0] = dacc(acc[0], ri, zi);
      acc[1] = dacc(acc[1], ri, ri);
      if (cached) {
        own(0, k) = xi;
        own(3, k) = ri;
        own(4, k) = dget(P, i);
      }
    }, P.x, P.b, P.d ? P.d : P.b);
    double s[2];
    all_sum<2>(grid, red, acc, s);
    rz = s[0];
    first_check(P, t, s[1]);
  }

  for (long long it = it0 + 1; !t.reason; it++) {
    double *const pn = odd ? P.v[3] : P.v[2];
    const double *const po = odd ? P.v[2] : P.v[3];
    { /* phase A */
      const auto pnew = [&](long long j) {
        const double zj = Z[j];
        return first ? zj : add(zj, mul(beta, po[j]));
      };
      double acc[1] = {0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        const double pi = pnew(i), qi = apply_row<KIND>(P, i, p, pi, pnew);
        pn[i] = pi;
        acc[0] = dacc(acc[0], pi, qi);
        if (cached) {
          own(1, k) = pi;
          own(2, k) = qi;
        } else if constexpr (KIND == COOP_KG_CSR) {
          Q[i] = qi;
        }
      }, Z, po);
      block_partial<1>(acc, red);
    }
    double pq[1];
    grid_sum<1>(grid, red, pq);
    if (!(pq[0] > 0.0)) { /* no update; NaN is NaN, as in solvers/krylov/cg.c */
      t.reason = isnan(pq[0]) ? COOP_DIVERGED_NAN : COOP_DIVERGED_INDEFINITE_MAT;
      break;
    }
    const double alpha = dvd(rz, pq[0]);
    { /* phase B */
      double acc[2] = {0.0, 0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        double xi, pi, qi, ri, di;
        if (cached) {
          own_load(k, xi, pi, qi, ri, di);
        } else {
          xi = P.x[i];
          pi = pn[i];
          if constexpr (KIND == COOP_KG_STENCIL) /* phase A's q, bit for bit */
            qi = apply_row<KIND>(P, i, p, pi, [&](long long j) { return pn[j]; });
          else
            qi = Q[i];
          ri = R[i];
          di = dget(P, i);
        }
        xi = add(xi, mul(alpha, pi));
        ri = sub(ri, mul(alpha, qi));
        const double zi = mul(di, ri);
        if (P.d) Z[i] = zi;
        if (cached) {
          own(0, k) = xi;
          own(3, k) = ri;
        } else {
          P.x[i] = xi;
        }
        if (!cached || !P.d) R[i] = ri;
        acc[0] = dacc(acc[0], ri, zi);
        acc[1] = dacc(acc[1], ri, ri);
      }, pn, P.x, R, P.d ? P.d : R, KIND == COOP_KG_CSR ? Q : pn);
      block_partial<2>(acc, red);
    }
    double s[2];
    grid_sum<2>(grid, red, s);
    const double rn = sqrt(s[1]);
    t.reason = check(P, t, it, rn);
    if (!t.reason && s[0] < 0.0) t.reason = COOP_DIVERGED_INDEFINITE_PC;
    beta = dvd(s[0], rz);
    rz = s[0];
    first = false;
    odd = !odd;
    if (it == P.stop_at) break;
  }
  own_rows(true);
  save_state(P, odd, rz, beta);
  finish(P, t);
}

/* ------------------------------------------------------------- BiCGStab */
/* Barrier and residency: as cg_kernel. Three barriers an iteration:
 *  1: p = r + beta (p - omega v) (two p buffers), v = A M p with the columns'
 *     p recomputed from r, p_old, v_old (two v buffers); partial (rhat, v).
 *  2: alpha = rho / (rhat, v); s = r - alpha v, t = A M s with the columns' s
 *     recomputed from r and v; partials (s,s), (t,s), (t,t). If ||s|| passes
 *     the tolerance: x += alpha M p and stop (no barrier needed).
 *  3: omega = (t,s)/(t,t); x = (x + alpha M p) + omega M s (the two axpys of
 *     solvers/krylov/bicgstab.c); r = s - omega t into
 *     the other r buffer (so t can be recomputed from the old r and v while
 *     r is written); partials (r,r) and (rhat, r), the next iteration's rho.
 * Vectors: r[2], rhat, p[2], v[2], t (streamed CSR only). Cached: x, rhat,
 * p, s, t. Carried to the next iteration: x, r, rhat, p, v, rho, rho_old,
 * alpha, omega. */
constexpr int kBicgCached = 5;

template <int KIND>
__global__ void __launch_bounds__(kThreads, kMinBlocksBicg) bicgstab_kernel(const Params P) {
  cg::grid_group grid = cg::this_grid();
  const Rows rows = make_rows<KIND>(P);
  const bool cached = P.cached;
  double *const RH = P.v[2], *const T = P.v[7];
  /* r, p, v buffers: [0] current in even iterations, [1] in odd ones */
  double *const R0 = P.v[0], *const R1 = P.v[1], *const P0 = P.v[3], *const P1 = P.v[4],
                *const V0 = P.v[5], *const V1 = P.v[6];
  Red red{P.part, 0};
  Track t{0.0, 0, COOP_REASON_NONE};
  long long it0 = 0; /* the last iteration checked before the loop */
  const auto own_rows = [&](bool save) {
    cached_rows<KIND>(P, rows, [&](int k, long long i) {
      keep(save, P.x[i], own(0, k));
      if (!save) own(1, k) = RH[i]; /* rhat is stored too */
    });
  };
  double rho, rho_old = 1.0, alpha = 1.0, omega = 1.0;
  bool odd = false;

  if (P.resume) {
    own_rows(false);
    it0 = load_state(P, t, odd, rho, rho_old, alpha, omega);
  } else { /* r = b - A x; rhat = r; p_old = v_old = 0; rho = (rhat, r) */
    double acc[2] = {0.0, 0.0};
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi;
      const double ri = residual_row<KIND>(P, i, p, xi);
      R0[i] = ri;
      RH[i] = ri;
      P1[i] = 0.0;
      V1[i] = 0.0;
      acc[0] = dacc(acc[0], ri, ri);
      acc[1] = dacc(acc[1], ri, ri);
      if (cached) {
        own(0, k) = xi;
        own(1, k) = ri;
      }
    }, P.x, P.b);
    double s2[2];
    all_sum<2>(grid, red, acc, s2);
    rho = s2[1];
    first_check(P, t, s2[0]);
  }

  for (long long it = it0 + 1; !t.reason; it++) {
    if (rho == 0.0) {
      t.reason = COOP_DIVERGED_BREAKDOWN;
      break;
    }
    const double beta = mul(dvd(rho, rho_old), dvd(alpha, omega));
    const double *const r = odd ? R1 : R0;
    double *const pn = odd ? P1 : P0, *const vn = odd ? V1 : V0;
    { /* phase 1 */
      const double *const po = odd ? P0 : P1, *const vo = odd ? V0 : V1;
      const auto pnew = [&](long long j) { return add(r[j], mul(beta, sub(po[j], mul(omega, vo[j])))); };
      double acc[1] = {0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        const double pi = pnew(i);
        const double vi = apply_row<KIND>(P, i, p, mul(dget(P, i), pi),
                                          [&](long long j) { return mul(dget(P, j), pnew(j)); });
        pn[i] = pi;
        vn[i] = vi;
        if (cached) own(2, k) = pi;
        acc[0] = dacc(acc[0], cached ? own(1, k) : RH[i], vi);
      }, r, po, vo, RH, P.d ? P.d : r);
      block_partial<1>(acc, red);
    }
    double rv[1];
    grid_sum<1>(grid, red, rv);
    if (rv[0] == 0.0) {
      t.reason = COOP_DIVERGED_BREAKDOWN;
      break;
    }
    alpha = dvd(rho, rv[0]);
    const auto sval = [&](long long j) { return sub(r[j], mul(alpha, vn[j])); };
    const auto tval = [&](long long i, const Pos &p, double si) {
      return apply_row<KIND>(P, i, p, mul(dget(P, i), si),
                             [&](long long j) { return mul(dget(P, j), sval(j)); });
    };
    { /* phase 2 */
      double acc[3] = {0.0, 0.0, 0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        const double si = sval(i), ti = tval(i, p, si);
        acc[0] = dacc(acc[0], si, si);
        acc[1] = dacc(acc[1], ti, si);
        acc[2] = dacc(acc[2], ti, ti);
        if (cached) {
          own(3, k) = si;
          own(4, k) = ti;
        } else if constexpr (KIND == COOP_KG_CSR) {
          T[i] = ti;
        }
      }, r, vn, P.d ? P.d : r);
      block_partial<3>(acc, red);
    }
    double s3[3];
    grid_sum<3>(grid, red, s3);
    const double sn = sqrt(s3[0]);
    const int sr = stop(P, t, it, sn);
    if (sr == COOP_CONVERGED_RTOL || sr == COOP_CONVERGED_ATOL) { /* x += alpha M p */
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &) {
        const double pi = cached ? own(2, k) : pn[i];
        const double xi = add(cached ? own(0, k) : P.x[i], mul(alpha, mul(dget(P, i), pi)));
        if (cached)
          own(0, k) = xi;
        else
          P.x[i] = xi;
      });
      record(P, t, it, sn);
      t.reason = sr;
      break;
    }
    if (s3[2] == 0.0) {
      t.reason = COOP_DIVERGED_BREAKDOWN;
      break;
    }
    omega = dvd(s3[1], s3[2]);
    { /* phase 3 */
      double *const rnew = odd ? R0 : R1;
      double acc[2] = {0.0, 0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        double xi, hi, pi, si, ti;
        if (cached) {
          own_load(k, xi, hi, pi, si, ti);
        } else {
          xi = P.x[i];
          hi = RH[i];
          pi = pn[i];
          si = sval(i);
          if constexpr (KIND == COOP_KG_STENCIL) /* phase 2's t, bit for bit */
            ti = tval(i, p, si);
          else
            ti = T[i];
        }
        const double di = dget(P, i); /* x += alpha M p; x += omega M s */
        xi = add(add(xi, mul(alpha, mul(di, pi))), mul(omega, mul(di, si)));
        const double ri = sub(si, mul(omega, ti));
        rnew[i] = ri;
        if (cached)
          own(0, k) = xi;
        else
          P.x[i] = xi;
        acc[0] = dacc(acc[0], ri, ri);
        acc[1] = dacc(acc[1], hi, ri);
      }, P.x, RH, pn, r, vn, P.d ? P.d : r, KIND == COOP_KG_CSR ? T : vn);
      block_partial<2>(acc, red);
    }
    double s2[2];
    grid_sum<2>(grid, red, s2);
    const double rn = sqrt(s2[0]);
    t.reason = check(P, t, it, rn);
    if (!t.reason && omega == 0.0) t.reason = COOP_DIVERGED_BREAKDOWN;
    rho_old = rho;
    rho = s2[1];
    odd = !odd;
    if (it == P.stop_at) break;
  }
  own_rows(true);
  save_state(P, odd, rho, rho_old, alpha, omega);
  finish(P, t);
}

/* ---------------------------------------------------------- pipelined CG */
/* Barrier and residency: as cg_kernel. One barrier an iteration: every
 * update of the iteration is pointwise, and n = A m needs the columns' new w,
 * which each row recomputes from the old w, n, z (two buffers of each):
 *   w_new_j = w_j - alpha (n_j + beta z_j),  m_j = M w_new_j,
 * so the reduction of gamma, delta and rr shares its barrier with the SpMV.
 * Setup: three barriers (r, u | w = A u | n = A M w).
 * Vectors: r, u, q, s, p, w[2], z[2], n[2]. Cached: x, r, u, q, s, p (then
 * only w, z, n and u's first value go through device memory). Carried from
 * an iteration's check to its update: x, r, u, q, s, p, w, z, n, gamma,
 * delta, gamma_old, alpha_old, floor, post.
 *
 * Residual replacement, as solvers/krylov/pipecg.c decides it: every kDriftEvery
 * iterations the drift (d, d), d = b - A x - r, is reduced (one pass and
 * one or two barriers); where it matters, r, u, w, s, q, z and n are
 * recomputed from x and p (three passes, three barriers) and gamma, delta
 * and rr with them. floor: the drift the check after a replacement found
 * (post = 1 until then). Without a replacement the bits are those of the
 * iteration alone. */
constexpr int kPipeCached = 6;
constexpr long long kDriftEvery = 50;

template <int KIND>
__global__ void __launch_bounds__(kThreads, kMinBlocksPipe) pipecg_kernel(const Params P) {
  cg::grid_group grid = cg::this_grid();
  const Rows rows = make_rows<KIND>(P);
  const bool cached = P.cached;
  double *const Rv = P.v[0], *const U = P.v[1], *const Qv = P.v[2], *const Sv = P.v[3],
                *const Pv = P.v[4];
  /* w, z, n buffers: [0] old in even iterations, [1] in odd ones */
  double *const W0 = P.v[5], *const W1 = P.v[6], *const Z0 = P.v[7], *const Z1 = P.v[8],
                *const N0 = P.v[9], *const N1 = P.v[10];
  Red red{P.part, 0};
  Track t{0.0, 0, COOP_REASON_NONE};
  long long it0 = 0; /* the last iteration checked before the loop */
  const auto own_rows = [&](bool save) {
    cached_rows<KIND>(P, rows, [&](int k, long long i) {
      keep_rows(save, k, P.x[i], Rv[i], U[i], Qv[i], Sv[i], Pv[i]);
    });
  };
  double gamma = 0.0, delta = 0.0, rr = 0.0, gamma_old = 0.0, alpha_old = 1.0, floor = 0.0, post = 0.0;
  bool odd = false;

  /* The drift check after an iteration and, where it matters, the
   * replacement (see above). W, Z, N: the buffers the next iteration reads. */
  const auto replace_if_drifted = [&](double *const W, double *const Z, double *const N) {
    if (cached) { /* the neighbours' x and p (x in device memory otherwise) */
      cached_rows<KIND>(P, rows, [&](int k, long long i) {
        P.x[i] = own(0, k);
        Pv[i] = own(5, k);
      });
      red.sync(grid);
    }
    double dd[1] = {0.0};
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi;
      const double di = sub(residual_row<KIND>(P, i, p, xi), cached ? own(1, k) : Rv[i]);
      dd[0] = dacc(dd[0], di, di);
    });
    block_partial<1>(dd, red);
    grid_sum<1>(grid, red, dd);
    if (post > 0.0) floor = dd[0], post = 0.0;
    const double tol = 0.1 * fmax(P.rtol * t.r0, P.atol);
    if (!(dd[0] > DBL_EPSILON * rr && dd[0] > tol * tol && dd[0] > 100.0 * floor)) return;
    /* r = b - A x, u = M r, s = A p, q = M s */
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi;
      const double ri = residual_row<KIND>(P, i, p, xi), di = dget(P, i), ui = mul(di, ri);
      const double si = apply_row<KIND>(P, i, p, Pv[i], [&](long long j) { return Pv[j]; });
      const double qi = mul(di, si);
      U[i] = ui;
      Qv[i] = qi;
      if (cached) {
        own_put(k, 1, ri, ui, qi, si);
      } else {
        Rv[i] = ri;
        Sv[i] = si;
      }
    });
    red.sync(grid);
    /* w = A u, z = A q; gamma = (r, u), delta = (w, u), rr = (r, r) */
    double acc[3] = {0.0, 0.0, 0.0};
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      const double ri = cached ? own(1, k) : Rv[i], ui = U[i];
      const double wi = apply_row<KIND>(P, i, p, ui, [&](long long j) { return U[j]; });
      W[i] = wi;
      Z[i] = apply_row<KIND>(P, i, p, Qv[i], [&](long long j) { return Qv[j]; });
      acc[0] = dacc(acc[0], ri, ui);
      acc[1] = dacc(acc[1], wi, ui);
      acc[2] = dacc(acc[2], ri, ri);
    });
    block_partial<3>(acc, red);
    grid_sum<3>(grid, red, acc);
    gamma = acc[0];
    delta = acc[1];
    rr = acc[2];
    /* n = A M w */
    for_rows<KIND>(P, rows, [&](int, long long i, const Pos &p) {
      N[i] = apply_row<KIND>(P, i, p, mul(dget(P, i), W[i]), [&](long long j) { return mul(dget(P, j), W[j]); });
    });
    red.sync(grid);
    post = 1.0;
  };

  if (P.resume) {
    own_rows(false);
    it0 = load_state(P, t, odd, gamma, delta, gamma_old, alpha_old, floor, post);
  } else { /* setup: three barriers */
    { /* r = b - A x; u = M r; z = q = s = p = 0; gamma = (r, u); rr = (r, r) */
      double acc[2] = {0.0, 0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        double xi;
        const double ri = residual_row<KIND>(P, i, p, xi), ui = mul(dget(P, i), ri);
        U[i] = ui;
        Z0[i] = 0.0;
        if (cached) {
          own_put(k, 0, xi, ri, ui, 0.0, 0.0, 0.0);
        } else {
          Rv[i] = ri;
          Qv[i] = Sv[i] = Pv[i] = 0.0;
        }
        acc[0] = dacc(acc[0], ri, ui);
        acc[1] = dacc(acc[1], ri, ri);
      }, P.x, P.b, P.d ? P.d : P.b);
      double s[2];
      all_sum<2>(grid, red, acc, s);
      gamma = s[0];
      rr = s[1];
    }
    { /* w = A u; delta = (w, u) */
      double acc[1] = {0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        const double ui = cached ? own(2, k) : U[i];
        const double wi = apply_row<KIND>(P, i, p, ui, [&](long long j) { return U[j]; });
        W0[i] = wi;
        acc[0] = dacc(acc[0], wi, ui);
      });
      double s[1];
      all_sum<1>(grid, red, acc, s);
      delta = s[0];
    }
    /* m = M w; n = A m */
    for_rows<KIND>(P, rows, [&](int, long long i, const Pos &p) {
      N0[i] = apply_row<KIND>(P, i, p, mul(dget(P, i), W0[i]),
                              [&](long long j) { return mul(dget(P, j), W0[j]); });
    });
    red.sync(grid);
  }

  bool due = !P.resume; /* a resumed launch made its first iteration's check before */
  for (long long it = it0;; it++) {
    double alpha, beta;
    if (cg1_top(P, t, it, due, rr, gamma, delta, gamma_old, alpha_old, alpha, beta)) break;
    due = true;
    const double *const W = odd ? W1 : W0, *const Z = odd ? Z1 : Z0, *const N = odd ? N1 : N0;
    double *const Wn = odd ? W0 : W1, *const Zn = odd ? Z0 : Z1, *const Nn = odd ? N0 : N1;
    double acc[3] = {0.0, 0.0, 0.0};
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi, ri, ui, qi, si, pi;
      if (cached) {
        own_load(k, xi, ri, ui, qi, si, pi);
      } else {
        xi = P.x[i];
        ri = Rv[i];
        ui = U[i];
        qi = Qv[i];
        si = Sv[i];
        pi = Pv[i];
      }
      const double di = dget(P, i), wi = W[i], mi = mul(di, wi);
      const double zi = add(N[i], mul(beta, Z[i]));
      qi = add(mi, mul(beta, qi));
      si = add(wi, mul(beta, si));
      pi = add(ui, mul(beta, pi));
      xi = add(xi, mul(alpha, pi));
      ri = sub(ri, mul(alpha, si));
      ui = sub(ui, mul(alpha, qi));
      const double wn = sub(wi, mul(alpha, zi));
      acc[0] = dacc(acc[0], ri, ui);
      acc[1] = dacc(acc[1], wn, ui);
      acc[2] = dacc(acc[2], ri, ri);
      const double ni = apply_row<KIND>(P, i, p, mul(di, wn), [&](long long j) {
        return mul(dget(P, j), sub(W[j], mul(alpha, add(N[j], mul(beta, Z[j])))));
      });
      Zn[i] = zi;
      Wn[i] = wn;
      Nn[i] = ni;
      if (cached) {
        own_put(k, 0, xi, ri, ui, qi, si, pi);
      } else {
        P.x[i] = xi;
        Rv[i] = ri;
        U[i] = ui;
        Qv[i] = qi;
        Sv[i] = si;
        Pv[i] = pi;
      }
    }, W, Z, N, P.d ? P.d : W, P.x, Rv, U, Qv, Sv, Pv);
    cg1_end(grid, red, acc, alpha, gamma, delta, rr, gamma_old, alpha_old, odd);
    if ((it + 1) % kDriftEvery == 0) replace_if_drifted(Wn, Zn, Nn);
  }
  own_rows(true);
  save_state(P, odd, gamma, delta, gamma_old, alpha_old, floor, post);
  finish(P, t);
}

/* ------------------------------------------------ single-reduction CG */
/* Barrier and residency: as cg_kernel. CG in the Chronopoulos-Gear form, as
 * solvers/krylov/cg.c runs it with solver.cg_single_reduction: one barrier an
 * iteration. Every update is pointwise except w = A z, whose columns' new z
 * each row recomputes from the old r, w, s (two buffers of each):
 *   z_new_j = M_j (r_j - alpha (w_j + beta s_j)),
 * so the reduction of gamma = (r,z), delta = (w,z) and (r,r) shares its
 * barrier with the SpMV. Setup: two barriers (r | w = A M r).
 * Vectors: r[2], w[2], s[2], p. Cached: x, p and M's diagonal. Carried from
 * an iteration's check to its update: x, r, w, s, p, gamma, delta,
 * gamma_old, alpha_old. */
constexpr int kCgsrCached = 3;

template <int KIND>
__global__ void __launch_bounds__(kThreads, KIND == COOP_KG_STENCIL ? kMinBlocksCgsrStencil
                                                                  : kMinBlocksCgsrCsr)
    cgsr_kernel(const Params P) {
  cg::grid_group grid = cg::this_grid();
  const Rows rows = make_rows<KIND>(P);
  const bool cached = P.cached;
  /* r, w, s buffers: [0] old in even iterations, [1] in odd ones */
  double *const R0 = P.v[0], *const R1 = P.v[1], *const W0 = P.v[2], *const W1 = P.v[3],
                *const S0 = P.v[4], *const S1 = P.v[5], *const Pv = P.v[6];
  Red red{P.part, 0};
  Track t{0.0, 0, COOP_REASON_NONE};
  long long it0 = 0; /* the last iteration checked before the loop */
  const auto own_rows = [&](bool save) {
    cached_rows<KIND>(P, rows, [&](int k, long long i) {
      keep_rows(save, k, P.x[i], Pv[i]);
      if (!save) own(2, k) = dget(P, i);
    });
  };
  double gamma = 0.0, delta = 0.0, rr = 0.0, gamma_old = 0.0, alpha_old = 1.0;
  bool odd = false;

  if (P.resume) {
    own_rows(false);
    it0 = load_state(P, t, odd, gamma, delta, gamma_old, alpha_old);
  } else { /* setup: two barriers */
    /* r = b - A x; p = s = 0 */
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi;
      R0[i] = residual_row<KIND>(P, i, p, xi);
      S0[i] = 0.0;
      if (cached) {
        own_put(k, 0, xi, 0.0, dget(P, i));
      } else {
        Pv[i] = 0.0;
      }
    }, P.x, P.b);
    red.sync(grid);
    /* z = M r; w = A z; gamma, delta, rr */
    double acc[3] = {0.0, 0.0, 0.0};
    for_rows<KIND>(P, rows, [&](int, long long i, const Pos &p) {
      const double ri = R0[i], zi = mul(dget(P, i), ri);
      const double wi = apply_row<KIND>(P, i, p, zi, [&](long long j) { return mul(dget(P, j), R0[j]); });
      W0[i] = wi;
      acc[0] = dacc(acc[0], ri, zi);
      acc[1] = dacc(acc[1], wi, zi);
      acc[2] = dacc(acc[2], ri, ri);
    });
    double s[3];
    all_sum<3>(grid, red, acc, s);
    gamma = s[0];
    delta = s[1];
    rr = s[2];
  }

  bool due = !P.resume; /* a resumed launch made its first iteration's check before */
  for (long long it = it0;; it++) {
    double alpha, beta;
    if (cg1_top(P, t, it, due, rr, gamma, delta, gamma_old, alpha_old, alpha, beta)) break;
    due = true;
    const double *const R = odd ? R1 : R0, *const W = odd ? W1 : W0, *const S = odd ? S1 : S0;
    double *const Rn = odd ? R0 : R1, *const Wn = odd ? W0 : W1, *const Sn = odd ? S0 : S1;
    /* s_new and r_new of row j, as its owner computes them */
    const auto snew = [&](long long j) { return add(W[j], mul(beta, S[j])); };
    double acc[3] = {0.0, 0.0, 0.0};
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi, pi, di;
      if (cached) {
        own_load(k, xi, pi, di);
      } else {
        xi = P.x[i];
        pi = Pv[i];
        di = dget(P, i);
      }
      const double ri = R[i], si = snew(i);
      pi = add(mul(di, ri), mul(beta, pi)); /* p = z + beta p */
      xi = add(xi, mul(alpha, pi));
      const double rni = sub(ri, mul(alpha, si)), zi = mul(di, rni);
      const double wi = apply_row<KIND>(P, i, p, zi, [&](long long j) {
        return mul(dget(P, j), sub(R[j], mul(alpha, snew(j))));
      });
      Rn[i] = rni;
      Wn[i] = wi;
      Sn[i] = si;
      if (cached) {
        own(0, k) = xi;
        own(1, k) = pi;
      } else {
        P.x[i] = xi;
        Pv[i] = pi;
      }
      acc[0] = dacc(acc[0], rni, zi);
      acc[1] = dacc(acc[1], wi, zi);
      acc[2] = dacc(acc[2], rni, rni);
    }, R, W, S, P.d ? P.d : R, P.x, Pv);
    cg1_end(grid, red, acc, alpha, gamma, delta, rr, gamma_old, alpha_old, odd);
  }
  own_rows(true);
  save_state(P, odd, gamma, delta, gamma_old, alpha_old);
  finish(P, t);
}

/* ------------------------------------------------------------ launchers */

int work_vectors(coop_kg_method m) {
  switch (m) {
    case COOP_KG_CG: return 5;
    case COOP_KG_BICGSTAB: return 8;
    case COOP_KG_PIPECG: return 11;
    case COOP_KG_CGSR: return 7;
  }
  return 0;
}

/* Dynamic shared memory of the cached variant, bytes. */
size_t cache_bytes(coop_kg_method m, int threads) {
  const int v = m == COOP_KG_CG         ? kCgCached
                : m == COOP_KG_BICGSTAB ? kBicgCached
                : m == COOP_KG_CGSR     ? kCgsrCached
                                        : kPipeCached;
  return (size_t)v * kCacheRows * threads * sizeof(double);
}

long long vec_stride(long long n) { return (n + kVecAlign - 1) / kVecAlign * kVecAlign; }

/* The work vectors a stopped solve carries into its next iteration (see the
 * kernels' "Carried"): name and index in P.v at parity 0 and 1 (the buffer
 * the next iteration reads). */
struct Carried {
  const char *name;
  int v[2];
  bool pc_only; /* CG's z, which is r when M = I */
};

const Carried kCarriedCg[] = {{"r", {0, 0}, false}, {"z", {1, 1}, true}, {"p", {3, 2}, false}};
const Carried kCarriedBicg[] = {
    {"r", {0, 1}, false}, {"rhat", {2, 2}, false}, {"p", {4, 3}, false}, {"v", {6, 5}, false}};
const Carried kCarriedPipe[] = {{"r", {0, 0}, false}, {"u", {1, 1}, false}, {"q", {2, 2}, false},
                                {"s", {3, 3}, false}, {"p", {4, 4}, false}, {"w", {5, 6}, false},
                                {"z", {7, 8}, false}, {"n", {9, 10}, false}};
const Carried kCarriedCgsr[] = {
    {"r", {0, 1}, false}, {"w", {2, 3}, false}, {"s", {4, 5}, false}, {"p", {6, 6}, false}};
/* save_state's order in each kernel */
const char *const kScalarsCg[] = {"rz", "beta"};
const char *const kScalarsBicg[] = {"rho", "rho_old", "alpha", "omega"};
const char *const kScalarsCgsr[] = {"gamma", "delta", "gamma_old", "alpha_old"};
const char *const kScalarsPipe[] = {"gamma", "delta", "gamma_old", "alpha_old", "drift_floor", "drift_post"};

/* How the rows are dealt out (see Rows in the kernels): strips of `threads`
 * columns when the box is wide enough that at most 1/8 of the threads idle
 * on the last strip, else flat. chunk: rows (flat) or units (strips) a block;
 * steps: rows a thread walks, at most. */
struct Layout {
  int strips;
  long long chunk, steps;
};

Layout layout_of(const coop_kg_op *A, int blocks, int threads) {
  Layout L = {0, 0, 0};
  if (A->n <= 0) return L;
  if (A->kind == COOP_KG_STENCIL && A->nx > 0) {
    const long long s = (A->nx + threads - 1) / threads;
    if (8 * (s * threads - A->nx) <= s * threads) {
      L.strips = (int)s;
      L.chunk = (s * A->ny * A->nz + blocks - 1) / blocks;
      L.steps = L.chunk;
      return L;
    }
  }
  L.chunk = (A->n + blocks - 1) / blocks;
  L.steps = (L.chunk + threads - 1) / threads;
  return L;
}

/* The cached variant serves when every thread walks at most kCacheRows rows. */
bool cached_fits(const coop_kg_op *A, int blocks, int threads) {
  return layout_of(A, blocks, threads).steps <= kCacheRows;
}

void *pick_kernel(coop_kg_kind kind, coop_kg_method m) {
  const bool st = kind == COOP_KG_STENCIL;
  switch (m) {
    case COOP_KG_CG: return st ? (void *)cg_kernel<COOP_KG_STENCIL> : (void *)cg_kernel<COOP_KG_CSR>;
    case COOP_KG_PIPECG:
      return st ? (void *)pipecg_kernel<COOP_KG_STENCIL> : (void *)pipecg_kernel<COOP_KG_CSR>;
    case COOP_KG_BICGSTAB:
      return st ? (void *)bicgstab_kernel<COOP_KG_STENCIL> : (void *)bicgstab_kernel<COOP_KG_CSR>;
    case COOP_KG_CGSR: return st ? (void *)cgsr_kernel<COOP_KG_STENCIL> : (void *)cgsr_kernel<COOP_KG_CSR>;
  }
  return nullptr;
}

int check_op(const coop_kg_op *A, coop_kg_method m) {
  if (!A) return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: no operator");
  if (work_vectors(m) == 0) return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: unknown method %d", (int)m);
  if (A->n < 0) return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: %lld unknowns", (long long)A->n);
  if (A->kind == COOP_KG_CSR) {
    if (A->n > 0 && (!A->rowptr || !A->colind || !A->val))
      return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: CSR operator without rowptr/colind/val");
    if (A->n > INT32_MAX)
      return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: %lld rows exceed 32-bit column indices",
                        (long long)A->n);
  } else if (A->kind == COOP_KG_STENCIL) {
    if (A->ndim != 2 && A->ndim != 3)
      return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: stencil of %d dimensions (2 or 3)", A->ndim);
    if (A->nx < 1 || A->ny < 1 || A->nz < 1 || (A->ndim == 2 && A->nz != 1) || A->nx > INT32_MAX ||
        A->ny > INT32_MAX || A->nz > INT32_MAX || A->n % A->nz != 0 || A->nx * A->ny != A->n / A->nz)
      return COOP_ERROR(COOP_ERR_RUNTIME,
                        "krylov_grid: stencil box %lld x %lld x %lld (ndim %d) does not hold %lld unknowns",
                        (long long)A->nx, (long long)A->ny, (long long)A->nz, A->ndim, (long long)A->n);
  } else {
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: unknown operator kind %d", (int)A->kind);
  }
  return 0;
}

/* Co-resident blocks of the kernel with smem bytes of dynamic shared memory on
 * device dev (0: no cooperative launch). The occupancy API asks the current
 * device, so switch to dev and back. */
int resident_blocks(void *fn, size_t smem, int dev, int *max_blocks) {
  int coop = 0, sms = 0, per_sm = 0, old;
  *max_blocks = 0;
  COOP_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  COOP_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  if (!coop) return 0;
  COOP_CUDA(cudaGetDevice(&old));
  if (old != dev) COOP_CUDA(cudaSetDevice(dev));
  cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, kThreads, smem);
  if (old != dev) COOP_CUDA(cudaSetDevice(old));
  COOP_CUDA(e);
  *max_blocks = per_sm * sms < kMaxBlocks ? per_sm * sms : kMaxBlocks;
  return 0;
}

}  // namespace

extern "C" size_t coop_kg_work_doubles(coop_kg_method m, int64_t n, int blocks) {
  const long long nn = n > 0 ? n : 0, nb = blocks > 0 ? blocks : 0;
  return (size_t)work_vectors(m) * (size_t)vec_stride(nn) + (size_t)(2 * kMaxRed) * (size_t)nb;
}

extern "C" int coop_kg_state_of(coop_kg_method m, int64_t n, int pc, int odd, coop_kg_state *st) {
  if (!st) return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: NULL state");
  const Carried *c = nullptr;
  const char *const *names = nullptr;
  int nc = 0, ns = 0;
  switch (m) {
    case COOP_KG_CG: c = kCarriedCg, nc = 3, names = kScalarsCg, ns = 2; break;
    case COOP_KG_BICGSTAB: c = kCarriedBicg, nc = 4, names = kScalarsBicg, ns = 4; break;
    case COOP_KG_PIPECG: c = kCarriedPipe, nc = 8, names = kScalarsPipe, ns = 6; break;
    case COOP_KG_CGSR: c = kCarriedCgsr, nc = 4, names = kScalarsCgsr, ns = 4; break;
    default: return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: unknown method %d", (int)m);
  }
  const long long stride = vec_stride(n > 0 ? n : 0);
  st->ns = ns;
  for (int k = 0; k < ns; k++) st->sname[k] = names[k];
  st->nv = 0;
  for (int k = 0; k < nc; k++) {
    if (c[k].pc_only && !pc) continue;
    st->vname[st->nv] = c[k].name;
    st->offset[st->nv++] = (size_t)c[k].v[odd ? 1 : 0] * (size_t)stride;
  }
  return 0;
}

extern "C" int coop_kg_barriers_per_iter(coop_kg_method m) {
  switch (m) {
    case COOP_KG_CG: return 2;
    case COOP_KG_PIPECG: return 1;
    case COOP_KG_BICGSTAB: return 3;
    case COOP_KG_CGSR: return 1;
  }
  return 0;
}

extern "C" int coop_kg_max_blocks(const coop_kg_op *A, coop_kg_method m, int dev, int *blocks,
                                  int *threads) {
  if (!blocks || !threads || !A)
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: NULL operator, blocks or threads");
  *blocks = 0;
  *threads = kThreads;
  /* only the kind and method are needed; n (and the box) when given refine
   * the choice between the cached and the streamed variant */
  if (work_vectors(m) == 0 || (A->kind != COOP_KG_CSR && A->kind != COOP_KG_STENCIL))
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: unknown method %d or operator kind %d", (int)m,
                      (int)A->kind);
  void *const fn = pick_kernel(A->kind, m);
  int b = 0;
  /* the cached variant's shared memory may lower occupancy: ask for it first
   * and keep it if the problem fits that grid */
  COOP_CHECK(resident_blocks(fn, cache_bytes(m, kThreads), dev, &b));
  if (b > 0 && cached_fits(A, b, kThreads)) {
    *blocks = b;
    return 0;
  }
  COOP_CHECK(resident_blocks(fn, 0, dev, &b));
  *blocks = b;
  return 0;
}

extern "C" int coop_kg_default_blocks(const coop_kg_op *A, coop_kg_method m, int dev, int *blocks,
                                      int *threads) {
  int most = 0, sms = 0;
  COOP_CHECK(coop_kg_max_blocks(A, m, dev, &most, threads));
  *blocks = most;
  if (most < 1 || A->n <= 0) return 0;
  COOP_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  /* the fewest whole waves of SMs for which the cached variant fits: barriers
   * and partial sums cost less on fewer blocks */
  for (int b = sms; b < most; b += sms)
    if (cached_fits(A, b, *threads)) {
      *blocks = b;
      break;
    }
  return 0;
}

extern "C" int coop_kg_solve(const coop_kg_op *A, const coop_kg_args *a, const double *b, double *x,
                             double *work, coop_kg_result *res, int blocks, int threads,
                             void *stream) {
  if (!a || !b || !x || !work || !res)
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: NULL args, b, x, work or result");
  COOP_CHECK(check_op(A, a->method));
  if (a->hist_cap > 0 && (!a->hist_iter || !a->hist_res))
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: history of %lld entries without arrays",
                      (long long)a->hist_cap);
  if (threads < 32 || threads > kThreads || threads % 32)
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: %d threads a block (a multiple of 32, at most %d)",
                      threads, kThreads);
  if (blocks < 1 || blocks > kMaxBlocks)
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: %d blocks (1 to %d)", blocks, kMaxBlocks);
  const Layout lay = layout_of(A, blocks, threads);
  const bool cached = lay.steps <= kCacheRows;
  const size_t smem = cached ? cache_bytes(a->method, threads) : 0;
  void *const fn = pick_kernel(A->kind, a->method);
  int dev, most;
  COOP_CUDA(cudaGetDevice(&dev));
  COOP_CHECK(resident_blocks(fn, smem, dev, &most)); /* also sets the shared-memory limit */
  if (blocks > most)
    return COOP_ERROR(COOP_ERR_RUNTIME,
                      "krylov_grid: %d blocks requested, at most %d can be resident at once on "
                      "device %d (coop_kg_max_blocks)", blocks, most, dev);

  Params P = {};
  P.n = A->n;
  P.chunk = lay.chunk;
  P.strips = lay.strips;
  P.cached = cached;
  P.rowptr = A->rowptr;
  P.colind = A->colind;
  P.val = A->val;
  P.nx = P.ny = P.nz = 1;
  if (A->kind == COOP_KG_STENCIL) {
    P.nx = (int)A->nx;
    P.ny = (int)A->ny;
    P.nz = (int)A->nz;
    P.dim3 = A->ndim == 3;
    P.w0 = A->w[0];
    P.w1 = A->w[1];
    P.w2 = A->w[2];                               /* used in 3D only */
    P.diag = 2.0 * (A->w[0] + A->w[1] + A->w[2]); /* kernels/stencil.h (w[2] = 0 in 2D) */
  }
  P.d = A->inv_diag;
  P.b = b;
  P.x = x;
  const long long stride = vec_stride(A->n);
  const int nv = work_vectors(a->method);
  for (int k = 0; k < nv; k++) P.v[k] = work + (size_t)k * stride;
  P.part = work + (size_t)nv * stride;
  P.max_iter = a->max_iter;
  P.rtol = a->rtol;
  P.atol = a->atol;
  P.dtol = a->dtol;
  P.hist_cap = a->hist_cap > 0 ? a->hist_cap : 0;
  P.hist_iter = a->hist_iter;
  P.hist_res = a->hist_res;
  P.res = res;
  P.stop_at = a->stop_at;
  P.resume = a->resume;
  void *args[] = {&P};
  COOP_CUDA(cudaLaunchCooperativeKernel(fn, dim3(blocks), dim3(threads), args, smem,
                                        (cudaStream_t)stream));
  return 0;
}
