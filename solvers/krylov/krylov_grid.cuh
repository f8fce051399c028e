/* The device code the persistent Krylov kernels share (solvers/krylov/krylov_grid.h) and
 * their method table. Each method's kernel and table entry (KgMethod) live in its own file
 * (cg_grid.cu, cgsr_grid.cu, pipecg_grid.cu, bicgstab_grid.cu); krylov_grid.cu holds the
 * registry and launches them. Below the table all is internal to each includer (unnamed
 * namespace, inline), so a kernel's PTX is the one it had when all four shared a file.
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
#ifndef COOP_KRYLOV_GRID_CUH
#define COOP_KRYLOV_GRID_CUH

#include <cooperative_groups.h>
#include <float.h>
#include <iterator> /* std::size, for the method entries */
#include <stdint.h>

#include "solvers/krylov/krylov_grid.h"
#include "solvers/stop.h"

namespace cg = cooperative_groups;

/* A work vector a stopped solve carries into its next iteration (see each
 * kernel's "Carried"): its name and index in Params::v at parity 0 and 1 (the
 * buffer the next iteration reads). */
struct KgCarried {
  const char *name;
  int v[2];
  bool pc_only; /* CG's z, which is r when M = I */
};

/* One method's entry in the registry (krylov_grid.cu): what the host needs to
 * size, launch and checkpoint its kernel. Defined beside the kernel, whose
 * instantiations its kernel[] addresses are. */
struct KgMethod {
  coop_kg_method m;
  void *kernel[2];       /* by coop_kg_kind: the CSR and the stencil instantiation */
  int work_vectors;      /* n-vectors in Params::v (at most kMaxVectors) */
  int cached;            /* own-row values a row keeps in shared memory (cached variant) */
  int barriers_per_iter; /* coop_kg_barriers_per_iter */
  int ns;                /* at most COOP_KG_MAX_SCALARS */
  const char *const *scalars; /* save_state's order */
  int nc;                /* at most COOP_KG_MAX_CARRIED */
  const KgCarried *carried;
};
extern const KgMethod coop_kg_cg, coop_kg_cgsr, coop_kg_pipecg, coop_kg_bicgstab;

namespace {

/* Block size the kernels are built for. Each kernel's launch bounds ask for as
 * many resident blocks an SM as fit without spills on sm_90 and sm_100:
 * streaming is latency bound (too few loads in flight), so more resident
 * blocks help where they fit. */
constexpr int kThreads = 256;
constexpr int kMaxWarps = kThreads / 32;
constexpr int kMaxBlocks = 1024;             /* partials each block re-reads per barrier */
constexpr int kMaxRed = 3;                   /* values in one reduction */
constexpr int kMaxVectors = 11;              /* work vectors of a method (Params::v) */
constexpr int kCacheRows = 4;                /* rows per thread of the cached variant */
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
  double *v[kMaxVectors]; /* the method's work vectors */
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

/* Barrier: cg::grid_group::sync() (cudaLaunchCooperativeKernel), in Red::sync.
 * All blocks are resident: the launcher passes at most occupancy x SMs blocks
 * (checked against the kernel's occupancy before the launch), and the
 * cooperative launch refuses a grid that could not be co-resident. Every block
 * makes the same branch decisions from the same reduced scalars, so all reach
 * every barrier the same number of times. */

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
 * ||r|| = sqrt(rr) where due (false on a resumed launch's first iteration;
 * set for the next one), the breakdown tests, then alpha and beta. true: the
 * solve ends here. */
__device__ __forceinline__ bool cg1_top(const Params &P, Track &t, long long it, bool &due, double rr,
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
  due = true;
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
 * reads is left in device memory. Each kernel ends with save_state:
 *  - own_rows(true): the cached variant's own-row values (x, and whatever
 *    else the next iteration reads from shared memory) into their vectors;
 *  - the scalars the method carries to its next iteration and the parity of
 *    its double buffers into P.res, then the Track (finish; record wrote the
 *    last check);
 * and a resumed launch starts with own_rows(false) and load_state instead of
 * the initial residual. The vectors stay where they are (coop_kg_state_of
 * names them for a checkpoint). */
template <class F, class... D>
__device__ __forceinline__ void save_state(const Params &P, const Track &t, const F &own_rows, bool odd,
                                           const D... v) {
  own_rows(true);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int k = 0;
    ((P.res->s[k++] = v), ...);
    P.res->odd = odd;
  }
  finish(P, t);
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

}  // namespace

#endif
