/* Device code of the relaxation step un = u + c (f - A u) on a stored field,
 * with the residual (f - A u)^2 summed over the owned points in the same pass
 * (no second read of the grid). Shared by the per-step kernel
 * (kernels/stencil_relax.cu) and the persistent kernels (solvers/relax/relax_cuda.cu).
 *
 * Written for Hopper's memory system: every thread owns a 16-byte chunk of a
 * row (4 floats or 2 doubles, aligned because rows are padded to 128 bytes:
 * core/grid.c) and marches along the slowest axis over `ry` rows, keeping the
 * rows below, at and above in registers, so u is read from memory once per
 * step; x neighbours at the chunk's ends come from L1 (the lanes beside it
 * load those lines), y neighbours of a 3D plane from L1/L2. Consecutive lanes
 * take consecutive chunks: a warp reads 512 contiguous bytes per row. */
#ifndef COOP_STENCIL_RELAX_CUH
#define COOP_STENCIL_RELAX_CUH

#include <stdlib.h>

#include <type_traits>

#include "core/error.h"
#include "kernels/stencil.cuh" /* block_sum_add */

namespace {

template <typename T>
struct Vec16;
template <>
struct Vec16<float> {
  typedef float4 type;
  static constexpr int n = 4;
};
template <>
struct Vec16<double> {
  typedef double2 type;
  static constexpr int n = 2;
};

/* The step's constants. */
struct RelaxPar {
  double w0, w1, w2, diag, c;
};

/* One region on one stored field, in storage coordinates (ghosts included).
 * A task is one chunk of V points along x times `ry` rows along the march
 * axis (y in 2D, z in 3D) at one row of the other axis (3D: y). */
struct RelaxGeom {
  long long sy, sz;  /* storage strides */
  int x0, x1;        /* region along x, storage coordinates */
  int ox0, ox1;      /* owned points along x */
  int a0, nch;       /* first chunk (x0 / V), chunks per row */
  int m0, mn, om0, om1; /* march axis: first row, rows, owned rows [om0, om1) */
  int q0, qn, oq0, oq1; /* other axis (3D y): first, count, owned; 2D: 0, 1, 0, 1 */
  int ry, nstrips;   /* rows per task, strips of ry rows */
  unsigned tasks;    /* nch * nstrips * qn */
  int wry;           /* 2D warp tasks (relax_range_ring): rows a task, at most ry */
  unsigned wtasks;   /* 2D: warp tasks (32 chunks of wry rows), ceil(nch / 32) * ceil(mn / wry) */
  int tx, ty, rz;    /* 3D block tasks (relax_range_ring3): tiles along x and y, planes a task */
  unsigned btasks;   /* tx * ty * strips of rz planes */
  int ptx, pty, prz; /* 3D two-sweep block tasks (relax_pair_ring3): tiles along x and y, planes a task */
  int pabsorb;       /* 1: the last tile along x also sweeps the region's last column (ring3_pair_plan) */
  unsigned pbtasks;  /* ptx * pty * strips of prz planes; 0: not planned */
  int snake;         /* 2D ring march: strips in reverse order when u > un (sweep_reversed) */
};

template <typename T>
__device__ __forceinline__ typename Vec16<T>::type vload(const T *p) {
  return *reinterpret_cast<const typename Vec16<T>::type *>(p);
}
template <typename T>
__device__ __forceinline__ void vstore(T *p, const typename Vec16<T>::type &v) {
  *reinterpret_cast<typename Vec16<T>::type *>(p) = v;
}
__device__ __forceinline__ float vget(const float4 &v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}
__device__ __forceinline__ double vget(const double2 &v, int e) { return e == 0 ? v.x : v.y; }
/* Element e's x neighbours in a chunk v: left and right stand beside its end elements. */
template <typename T, typename VT>
__device__ __forceinline__ T vleft(const VT &v, T left, int e) { return e == 0 ? left : vget(v, e - 1); }
template <typename T, typename VT>
__device__ __forceinline__ T vright(const VT &v, T right, int e) {
  return e == Vec16<T>::n - 1 ? right : vget(v, e + 1);
}
__device__ __forceinline__ void vset(float4 &v, int e, float x) {
  if (e == 0) v.x = x; else if (e == 1) v.y = x; else if (e == 2) v.z = x; else v.w = x;
}
__device__ __forceinline__ void vset(double2 &v, int e, double x) {
  if (e == 0) v.x = x; else v.y = x;
}
/* The elements of a chunk in mask m (bit e: element e) to p: one 16-byte
 * store when all are, else element by element. */
template <typename T>
__device__ __forceinline__ void vstore_mask(T *p, const typename Vec16<T>::type &v, unsigned m) {
  constexpr int V = Vec16<T>::n;
  if (m == (1u << V) - 1u) {
    vstore(p, v);
  } else {
#pragma unroll
    for (int e = 0; e < V; e++)
      if ((m >> e) & 1u) p[e] = vget(v, e);
  }
}

/* The residual f - A u at one point, A u in the host reference's order
 * (kernels/stencil_host_impl.h); one definition for every kernel, so all
 * modes give the same bits. Without a source (HAS_F false) it is -A u, not
 * 0 - A u (one add a point fewer; the host reference does the same): the
 * same value but for the sign of a zero. */
template <typename T, bool HAS_F>
__device__ __forceinline__ T relax_res2(T ce, T l, T r, T ym, T yp, T f, T w0, T w1, T diag) {
  const T au = diag * ce - w0 * (l + r) - w1 * (ym + yp);
  return HAS_F ? f - au : -au;
}
template <typename T, bool HAS_F>
__device__ __forceinline__ T relax_res3(T ce, T l, T r, T ym, T yp, T zm, T zp, T f, T w0, T w1,
                                        T w2, T diag) {
  const T au = diag * ce - w0 * (l + r) - w1 * (ym + yp) - w2 * (zm + zp);
  return HAS_F ? f - au : -au;
}

/* The squared residuals of a chunk (r: 0 where masked out) into a thread's
 * double sum. fp32 adds the four squares in float and converts once: the
 * float-to-double conversion issues at 16 a clock an SM on sm_90, too few
 * to pay one a point.
 * The float sum rounds at 2^-24 of itself, as each fp32 residual does. Where
 * the squares could have overflowed or lost bits below float's range (a sum
 * past 2^100 or under 2^-100), they are added in double one by one, so a
 * diverging or tiny residual is measured as the host does; four exact zeros
 * are skipped (the double sum is the same; SKIP0 false: not, for the
 * register-resident kernels, where the skip costs more than it saves). fp64
 * adds each square in turn. */
template <typename T, int V, bool SKIP0 = true>
__device__ __forceinline__ void chunk_sq_add(const T (&r)[V], double &sum) {
  if (sizeof(T) == 4) {
    T s = (T)0;
#pragma unroll
    for (int e = 0; e < V; e++) s += r[e] * r[e];
    if (s >= (T)0x1p-100 && s <= (T)0x1p100) {
      sum += (double)s;
      return;
    }
    /* four exact zeros add nothing in double either: a Laplace problem
     * swept from a zero field has them wherever the boundary's values have
     * not yet reached, and masked chunks are all zeros */
    if (SKIP0) {
      bool zero = true;
#pragma unroll
      for (int e = 0; e < V; e++) zero = zero && r[e] == (T)0;
      if (zero) return;
    }
  }
#pragma unroll
  for (int e = 0; e < V; e++) sum += (double)r[e] * (double)r[e];
}

/* Of a chunk's elements from xs, those in the region swept (*xm) and the
 * owned ones among them (*om: the residual's; a chunk at the x edge of a
 * region holds points of the region beside it, which that region's sweep
 * counts: counting them here too would sum them twice in the split step of
 * an x-cut box). */
template <int V>
__device__ __forceinline__ void chunk_masks(const RelaxGeom &G, int xs, bool live, unsigned *xm, unsigned *om) {
  *xm = 0, *om = 0;
#pragma unroll
  for (int e = 0; e < V; e++) {
    const int x = xs + e;
    if (live && x >= G.x0 && x < G.x1) {
      *xm |= 1u << e;
      if (x >= G.ox0 && x < G.ox1) *om |= 1u << e;
    }
  }
}

/* One chunk's next values, c times its residual added, with left and right
 * the x neighbours of its end elements; NORM: the squared residuals of the
 * elements in rom into sum. ym and yp are read in 3D only. */
template <typename T, int DIM, bool HAS_F, bool NORM>
__device__ __forceinline__ typename Vec16<T>::type chunk_relax(
    const typename Vec16<T>::type &cur, T left, T right, const typename Vec16<T>::type &prev,
    const typename Vec16<T>::type &next, const typename Vec16<T>::type &ym, const typename Vec16<T>::type &yp,
    const typename Vec16<T>::type &fv, unsigned rom, T w0, T w1, T w2, T diag, T c, double &sum) {
  constexpr int V = Vec16<T>::n;
  typename Vec16<T>::type out;
  T sq[V];
#pragma unroll
  for (int e = 0; e < V; e++) {
    const T ce = vget(cur, e), l = vleft(cur, left, e), rr = vright(cur, right, e);
    T res;
    if (DIM == 3)
      res = relax_res3<T, HAS_F>(ce, l, rr, vget(ym, e), vget(yp, e), vget(prev, e), vget(next, e),
                       HAS_F ? vget(fv, e) : (T)0, w0, w1, w2, diag);
    else
      res = relax_res2<T, HAS_F>(ce, l, rr, vget(prev, e), vget(next, e), HAS_F ? vget(fv, e) : (T)0, w0, w1, diag);
    vset(out, e, ce + c * res);
    sq[e] = (rom >> e) & 1u ? res : (T)0;
  }
  if (NORM) chunk_sq_add<T, V>(sq, sum);
  return out;
}

/* The chunk's elements in xm to p. Partial chunks (a region's edges) are
 * stored element by element: merging them into one 16-byte store (load,
 * blend, store) gives STG.E.128 in the SASS but measured slower on large
 * boxes in every mode (see bench/results/).
 * Written out, not vstore_mask: that call changed the march's PTX (induction
 * variables). */
template <typename T>
__device__ __forceinline__ void chunk_store(T *p, const typename Vec16<T>::type &out, unsigned xm) {
  constexpr int V = Vec16<T>::n;
  if (xm == (1u << V) - 1u) {
    vstore(p, out);
  } else {
#pragma unroll
    for (int e = 0; e < V; e++)
      if ((xm >> e) & 1u) p[e] = vget(out, e);
  }
}

/* The faces whose neighbour's fields this GPU can store to (CUDA IPC, one
 * node): the persistent multi-rank solve (solvers/relax/relax_cuda.cu) writes each
 * new boundary value of the owned box straight into the neighbour's ghost
 * layer as it computes it, instead of a pack, a copy and an unpack between
 * kernels. One face: */
struct PeerFace {
  void *buf[2];     /* the neighbour's two fields: [p] pairs with this rank's field p */
  long long sy, sz; /* the neighbour's storage strides */
  int axis, side;   /* the face: axis 0..2, side 0 (lo) or 1 (hi) */
  int gc;           /* the neighbour's ghost layer along axis (storage coordinate) */
};
constexpr int kMaxPeerFaces = 6;
struct PeerFwd {
  PeerFace f[kMaxPeerFaces];
  int nf;
};

/* The new values `out` of one chunk (x from xs, mask xm) at storage row y
 * (2D) or y, z (3D) into the ghosts of each neighbour that borders them; par
 * picks the neighbour's field that pairs with the one being written. Only
 * called on owned-box sweeps, where xm is the owned part of the chunk. */
template <typename T, int DIM>
__device__ __forceinline__ void peer_forward(const PeerFwd &F, int par, const RelaxGeom &G,
                                             const typename Vec16<T>::type &out, unsigned xm,
                                             int xs, int y, int z) {
  constexpr int V = Vec16<T>::n;
  for (int i = 0; i < F.nf; i++) {
    const PeerFace &P = F.f[i];
    T *dst = (T *)P.buf[par];
    if (P.axis == 0) { /* one element of the chunk: the owned column at the face */
      const int x = P.side ? G.ox1 - 1 : G.ox0, e = x - xs;
      if (e >= 0 && e < V && ((xm >> e) & 1u)) dst[P.gc + P.sy * y + P.sz * z] = vget(out, e);
      continue;
    }
    /* the whole chunk, when its row is the owned layer at the face */
    const bool march = P.axis == DIM - 1; /* y in 2D, z in 3D */
    const int c = march ? (DIM == 3 ? z : y) : y;
    const int lo = march ? G.om0 : G.oq0, hi = march ? G.om1 : G.oq1;
    if (c != (P.side ? hi - 1 : lo)) continue;
    const long long q = xs + P.sy * (P.axis == 1 ? P.gc : y) + P.sz * (P.axis == 2 ? P.gc : z);
    vstore_mask<T>(dst + q, out, xm);
  }
}

/* Whether a task (chunk xs, mask xm, rows [m, m + rows), 3D y row oth) holds
 * values that peer_forward sends to a neighbour: the same tests, made once
 * per task so that the march over its rows pays one predicate per row. */
template <typename T, int DIM>
__device__ __forceinline__ bool peer_touches(const PeerFwd &F, const RelaxGeom &G, unsigned xm,
                                             int xs, int m, int rows, int oth) {
  constexpr int V = Vec16<T>::n;
  for (int i = 0; i < F.nf; i++) {
    const PeerFace &P = F.f[i];
    if (P.axis == 0) {
      const int e = (P.side ? G.ox1 - 1 : G.ox0) - xs;
      if (e >= 0 && e < V && ((xm >> e) & 1u)) return true;
    } else if (P.axis == DIM - 1) { /* the march axis: one row of the strip */
      const int c = P.side ? G.om1 - 1 : G.om0;
      if (c >= m && c < m + rows) return true;
    } else if (oth == (P.side ? G.oq1 - 1 : G.oq0)) { /* 3D y */
      return true;
    }
  }
  return false;
}


/* Threads per block of every relaxation kernel, and the least resident blocks
 * per SM all of them are built for. One bound for the per-step and the
 * persistent kernels: the modes run at the same occupancy. */
constexpr int RELAX_THREADS = 256;
/* 3D: the tile march (relax_range_ring3) keeps its planes in flight in shared
 * memory, not registers; COOP_RELAX3_BLOCKS lets a build try fewer blocks
 * with more registers each (DIM is every relaxation kernel's parameter); 3
 * (80 registers) ran no faster than 4. */
#ifndef COOP_RELAX3_BLOCKS
#define COOP_RELAX3_BLOCKS 4
#endif
/* 2D: 3 blocks a SM (ptxas caps them at 80 registers): at 64 (4 blocks) the
 * ring march spilled and issued in two cycles of three; its rows in flight
 * are in shared memory, so 24 warps a SM still cover the memory latency. At
 * 3 the whole-solve kernel spills far less (plain fp32 not at all) and
 * sweeps faster at every size measured (see bench/results/). */
#ifndef COOP_RELAX2_BLOCKS
#define COOP_RELAX2_BLOCKS 3
#endif
#define RELAX_BOUNDS __launch_bounds__(RELAX_THREADS, DIM == 3 ? COOP_RELAX3_BLOCKS : COOP_RELAX2_BLOCKS)
inline int relax_blocks_per_sm(int ndim) { return ndim == 3 ? COOP_RELAX3_BLOCKS : COOP_RELAX2_BLOCKS; }

/* ---- 2D: the rows ahead in a cp.async ring in shared memory ----
 * The march above keeps about one row in flight per thread (its SASS copies
 * each prefetched row into place, waiting on it), well short of copy
 * bandwidth on large boxes. Here a warp marches a strip of 32 chunks: each
 * thread copies its chunk of each row into a ring of kRing slots of its own with 16-byte
 * cp.async (L2 only), so kRing - 1 rows are in flight without registers
 * holding them; x neighbours come by shuffles, the strip's outer two by 4- or
 * 8-byte copies into the ring beside it. Each thread reads back only what it
 * copied, so the ring needs no barrier: cp.async.wait_group makes a thread's
 * own copies visible to it, and a slot is refilled after the row computed
 * from it is stored. cp.async is a weak memory operation whatever its cache
 * hint (PTX ISA, cp.async), so after grid.sync() it sees other blocks' writes
 * as the plain loads of relax_range do. It streams large boxes faster than
 * the march (bench/stream_probe.cu; measured: see bench/results/). Same
 * arithmetic (same operands of relax_res2), so the same bits. */
constexpr int kRing = 6;
__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void cp_async16(unsigned dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(__cvta_generic_to_global(src))
               : "memory");
}
template <int N> /* 4 or 8 bytes: only the .ca form exists below 16 */
__device__ __forceinline__ void cp_async_small(unsigned dst, const void *src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(__cvta_generic_to_global(src)),
               "n"(N)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Tasks handed out by an atomic counter (the persistent kernels): a block
 * (3D) or a warp (2D) draws its next task when it finishes one, as the
 * hardware hands blocks to SMs in a per-step launch; with every task dealt
 * in turn, every block waits for the grid's slowest at the barrier.
 * 3D blocks draw every task. 2D warps take the first by their index and draw
 * only the rest: with 8 times the drawers, all of them at once contend on
 * one counter, while the same first wave dealt in 3D was slower. Tickets
 * are never reset: each drawer draws until it gets one past the tasks, so a
 * sweep takes exactly queue_tickets() of them, and sweep k's start at base =
 * k times that, all of sweep k's draws being done before the barrier that
 * ends it. */
struct TaskQueue {
  unsigned long long *ctr; /* nullptr: tasks in turn, t0, t0 + ts, ... */
  unsigned long long base;
};
/* 3D: a block's next task of `tasks` from the queue (tasks when none is
 * left), through `slot` in shared memory; every thread of the block calls
 * it, after the barrier that ends the previous task (slot is read by all
 * before it is rewritten) */
__device__ __forceinline__ unsigned block_draw(const TaskQueue &Q, unsigned tasks, unsigned &slot) {
  if (threadIdx.x == 0) {
    const unsigned long long t = atomicAdd(Q.ctr, 1ULL) - Q.base;
    slot = t < (unsigned long long)tasks ? (unsigned)t : tasks;
  }
  __syncthreads();
  return slot;
}
/* 2D: whether a grid of nw warps draws (more tasks than warps), and the
 * task of a drawn ticket t (counted from the sweep's base): past the first
 * wave, or wtasks when none is left. Host code too: tests/test_relax_plan
 * plays the warps' draws through these. */
__host__ __device__ inline bool ring2_drawn(unsigned wtasks, unsigned nw) { return wtasks > nw; }
__host__ __device__ inline unsigned ring2_task(unsigned wtasks, unsigned nw, unsigned long long t) {
  return t < (unsigned long long)(wtasks - nw) ? nw + (unsigned)t : wtasks;
}
/* 2D: the strip of task wt (nxs warp columns, nst strips), in order or
 * reversed (sweep_reversed). Host code too: test_relax_plan covers every
 * row of every column once a sweep in both orders. */
template <typename I>
__host__ __device__ inline I ring2_strip(I wt, I nxs, I nst, bool rev) {
  const I sti = wt / nxs;
  return rev ? nst - 1 - sti : sti;
}
/* tickets a sweep takes; blocks: the grid's. 3D: every task, and one past
 * the end a block; 2D: none unless there are more tasks than warps, else
 * the tasks past the first wave, and one past the end a warp */
__host__ __device__ inline unsigned long long queue_tickets(const RelaxGeom &G, int dim, unsigned blocks) {
  if (dim == 3) return (unsigned long long)G.btasks + blocks;
  const unsigned long long warps = (unsigned long long)blocks * (RELAX_THREADS / 32);
  return warps < (1ULL << 32) && ring2_drawn(G.wtasks, (unsigned)warps) ? G.wtasks : 0;
}

/* 2D: strips in reverse order every other sweep, so that a sweep starts
 * where the previous one ended: the rows it wrote last are still in L2
 * when it reads them again. u and un swap every sweep, so their order in
 * memory alternates with no step count to pass (launch, graph and grid
 * modes alike); task order never changes the values, only where they are
 * read from. It gains in grid mode and is level in launch mode (blocks
 * start in no strict order); the same for the 3D march's z-strips lost, so
 * 3D keeps one order (measured: see bench/results/). */
__device__ __forceinline__ bool sweep_reversed(const RelaxGeom &G, const void *u, const void *un) {
  return G.snake && (size_t)u > (size_t)un;
}

/* 2D warp tasks of a sweep, shared by the one- and two-sweep marches: a
 * warp's first task is its index among all (t0 >> 5, ts >> 5 warps), the
 * rest come from the queue past the first wave (lane 0 draws, every lane
 * takes it: all 32 lanes run the same tasks) or in turn. */
template <typename I>
struct RingWalk {
  I nxs, wtasks, nw, nst;
  bool drawn, rev;
  __device__ __forceinline__ RingWalk(const RelaxGeom &G, const void *u, const void *un, I ts, const TaskQueue &Q)
      : nxs((I)((G.nch + 31) / 32)), wtasks((I)G.wtasks), nw(ts >> 5),
        nst(nxs ? wtasks / nxs : 0), /* strips (2D: qn == 1); an empty region has no chunks */
        drawn(Q.ctr && ring2_drawn(wtasks, nw)), rev(sweep_reversed(G, u, un)) {}
  __device__ __forceinline__ I next(I wt, const TaskQueue &Q, int lane) const {
    if (!drawn) return wt + nw;
    unsigned long long t = 0;
    if (lane == 0) t = atomicAdd(Q.ctr, 1ULL) - Q.base;
    t = __shfl_sync(0xffffffffu, t, 0);
    return (I)ring2_task(wtasks, nw, t);
  }
};
/* A warp task decoded for a lane: its strip's first row and row count, the
 * lane's chunk (xs, first element), whether the lane has one (active) and is
 * the warp's first or last, and the chunk's update/own masks. */
struct RingTask {
  int xs, m, rows;
  bool active, first, last;
  unsigned xm, om;
};
template <int V, typename I>
__device__ __forceinline__ RingTask ring_task(const RelaxGeom &G, const RingWalk<I> &W, I wt, int lane) {
  RingTask k;
  const I strip = ring2_strip(wt, W.nxs, W.nst, W.rev), xsi = wt % W.nxs;
  const int ch0 = (int)xsi * 32, width = min(32, G.nch - ch0);
  k.active = lane < width;
  k.first = lane == 0;
  k.last = lane == width - 1;
  k.xs = (G.a0 + ch0 + lane) * V;
  k.m = G.m0 + (int)strip * G.wry;
  k.rows = min(G.wry, G.mn - (int)strip * G.wry);
  chunk_masks<V>(G, k.xs, k.active, &k.xm, &k.om);
  return k;
}

/* The ring of a block: RELAX_THREADS threads, kRing slots each, and the
 * strips' outer neighbours [warp][slot][left, right]. One per element type:
 * a kernel that calls the march with and without the residual (the whole
 * solve) shares it rather than holding two. */
template <typename T>
struct RingSmem {
  typename Vec16<T>::type v[kRing][RELAX_THREADS];
  T edge[RELAX_THREADS / 32][kRing][2];
};
template <typename T>
__device__ __forceinline__ RingSmem<T> &ring_smem() {
  __shared__ RingSmem<T> R;
  return R;
}

/* LEAN (the persistent kernels only): a task whose 32 chunks are all whole
 * and owned, on owned rows only, runs a row loop without the edge masks, and
 * fp32 Laplace unrolls it by two. The per-step kernel keeps the one loop: the
 * second copy takes its fp32 source kernel from 64 to 65 registers, a block
 * a SM fewer, and slower sweeps. */
template <typename T, bool HAS_F, bool NORM, typename I, bool LEAN = false>
__device__ double relax_range_ring(const RelaxPar &P, const RelaxGeom &G, const T *u, T *un,
                                   const T *__restrict__ f, I t0, I ts, const TaskQueue &Q) {
  typedef typename Vec16<T>::type VT;
  constexpr int V = Vec16<T>::n;
  RingSmem<T> &R = ring_smem<T>();
  const T w0 = (T)P.w0, w1 = (T)P.w1, diag = (T)P.diag, c = (T)P.c;
  const long long ms = G.sy;
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
  const unsigned my_slot = smem_u32(&R.v[0][threadIdx.x]), my_edge = smem_u32(&R.edge[wib][0][0]);
  constexpr unsigned slot_bytes = RELAX_THREADS * 16, edge_bytes = 2 * sizeof(T);
  const RingWalk<I> W(G, u, un, ts, Q);
  double sum = 0.0;
  for (I wt = t0 >> 5; wt < W.wtasks; wt = W.next(wt, Q, lane)) {
    const RingTask k = ring_task<V>(G, W, wt, lane);
    const bool active = k.active, first = k.first, last = k.last;
    const int xs = k.xs, m = k.m, rows = k.rows;
    const unsigned xm = k.xm, om = k.om;
    const bool need_l = first && (xm & 1u), need_r = last && ((xm >> (V - 1)) & 1u);
    const T *ld = u + xs + ms * (m - 1); /* the next row to copy */
    long long idx = xs + ms * m;         /* the row computed next */
    int to_load = rows + 2;
    /* the next row into slot s; every call commits a group (empty past the
     * last row), so that wait_group counts the same at every row. The x
     * neighbours only of the rows computed (copies 1 .. rows), as relax_range */
    auto load = [&](int s) {
      if (to_load > 0) {
        const bool computed = to_load >= 2 && to_load <= rows + 1;
        if (active) cp_async16(my_slot + s * slot_bytes, ld);
        if (need_l && computed) cp_async_small<sizeof(T)>(my_edge + s * edge_bytes, ld - 1);
        if (need_r && computed) cp_async_small<sizeof(T)>(my_edge + s * edge_bytes + sizeof(T), ld + V);
        ld += ms;
        to_load--;
      }
      cp_async_commit();
    };
#pragma unroll
    for (int q = 0; q < kRing; q++) load(q);
    cp_async_wait<kRing - 2>(); /* rows m - 1 and m */
    VT prev = R.v[0][threadIdx.x], cur = R.v[1][threadIdx.x];
    /* an edge slot only by the lane that copied it (another lane's copy may
     * be landing in the same line) */
    T cl = first ? R.edge[wib][1][0] : (T)0, cr = last ? R.edge[wib][1][1] : (T)0;
    load(0); /* as the probe: the slots' reads above are issued before these copies */
    load(1);
    VT fnext;
    if (HAS_F) fnext = active ? vload(f + idx) : prev;
    /* slot s holds row m + r + 1 (copy r + 2); shared memory takes a run-time
     * slot at no cost, and a loop unrolled by kRing spilled at 64 registers.
     * PLAIN: every lane's chunk whole and owned on every row of the task, so
     * the edge tests, masks and element stores drop out (fewer warp
     * instructions a row). fp32 Laplace has the registers to take two rows
     * a turn; fp64 spills at unroll 2 and runs slower. */
    constexpr int kUnroll = LEAN && sizeof(T) == 4 && !HAS_F ? 2 : 1;
    auto march = [&](auto plain_t) {
      constexpr bool PLAIN = decltype(plain_t)::value;
      int s = 2 % kRing;
#pragma unroll kUnroll
      for (int r = 0; r < rows; r++) {
        const int left_rows = rows - 1 - r;
        cp_async_wait<kRing - 1>(); /* row m + r + 1 */
        const VT next = R.v[s][threadIdx.x];
        const T nl = first ? R.edge[wib][s][0] : (T)0, nr = last ? R.edge[wib][s][1] : (T)0;
        const VT fv = fnext;
        if (HAS_F && left_rows > 0 && (PLAIN || active)) fnext = vload(f + idx + ms);
        const T sl = __shfl_up_sync(0xffffffffu, vget(cur, V - 1), 1);
        const T sr = __shfl_down_sync(0xffffffffu, vget(cur, 0), 1);
        VT out;
        if (PLAIN) {
          out = chunk_relax<T, 2, HAS_F, NORM>(cur, first ? cl : sl, last ? cr : sr, prev, next, cur, cur, fv,
                                               (1u << V) - 1u, w0, w1, (T)0, diag, c, sum);
          vstore(un + idx, out);
        } else {
          const T left = (xm & 1u) ? (first ? cl : sl) : (T)0;
          const T right = (xm >> (V - 1)) & 1u ? (last ? cr : sr) : (T)0;
          const unsigned rom = (m + r >= G.om0 && m + r < G.om1) ? om : 0u;
          out = chunk_relax<T, 2, HAS_F, NORM>(cur, left, right, prev, next, cur, cur, fv, rom, w0, w1, (T)0, diag,
                                               c, sum);
          chunk_store(un + idx, out, xm);
        }
        load(s); /* slot s again (copy r + 2 + kRing), its value long in registers */
        s = s + 1 == kRing ? 0 : s + 1;
        idx += ms;
        prev = cur;
        cur = next;
        cl = nl;
        cr = nr;
      }
    };
    constexpr unsigned whole = (1u << V) - 1u;
    const bool plain = LEAN && __all_sync(0xffffffffu, active && xm == whole && om == whole) && m >= G.om0 &&
                       m + rows <= G.om1;
    if (LEAN && plain)
      march(std::integral_constant<bool, LEAN>());
    else
      march(std::integral_constant<bool, false>());
    /* the next task's last lane may be another: its copies into the edge
     * slots come after this task's last lane read them (racecheck flags it otherwise) */
    __syncwarp();
  }
  cp_async_wait<0>(); /* nothing of this call left in flight (empty groups only) */
  return sum;
}

/* ---- 3D: planes of a block's tile in a cp.async ring in shared memory ----
 * The thread march below reads the y neighbours of every chunk from L1/L2:
 * three reads of each plane through L2 for one from DRAM, well short of
 * copy bandwidth. Here a block
 * takes a tile of kTileX chunks x kTileY rows (32 chunks a warp) and marches it along
 * z: each plane of the tile and the rows beside it (kTileY + 2) go by 16-byte
 * cp.async into a ring of kRing3 slots shared by the block, so a plane is read
 * from L2 (kTileY + 2) / kTileY times and kRing3 - 2 planes are in flight.
 * Warps read rows other warps copied, so a plane step waits on the block
 * barrier: the barrier at the top of step r makes plane r + 1 visible and
 * frees the slot of plane r - 1 (no warp reads it after step r - 1), which the
 * step refills at once. Block tasks (tile, strip of planes) go to blocks in
 * turn in the per-step kernels and from a TaskQueue (below) in the persistent
 * ones: every thread of a block calls this together. Same operands of
 * relax_res3, so the same bits as the thread march and the host. */
/* Warps along a tile row (COOP_TILE3_PIECES: 1, 2 or 4): a tile is
 * kTileX = 32 x pieces chunks by kTileY = 8 / pieces rows: wider pieces of a
 * row, more rows beside the tile read again. One measured best overall
 * (see bench/results/). */
#ifndef COOP_TILE3_PIECES
#define COOP_TILE3_PIECES 1
#endif
constexpr int kPieces3 = COOP_TILE3_PIECES;
static_assert(kPieces3 == 1 || kPieces3 == 2 || kPieces3 == 4, "COOP_TILE3_PIECES: 1, 2 or 4");
constexpr int kTileX = 32 * kPieces3;
constexpr int kTileY = RELAX_THREADS / 32 / kPieces3;
#ifndef COOP_RING3_SLOTS /* 8 slots measured no faster than 6 */
#define COOP_RING3_SLOTS (kPieces3 == 4 ? 5 : 6) /* 4 pieces: 5 x 8 KB within 48 KB of static shared memory */
#endif
constexpr int kRing3 = COOP_RING3_SLOTS;
template <typename T>
struct Ring3Smem {
  typename Vec16<T>::type v[kRing3][kTileY + 2][kTileX];
  T edge[kRing3][kTileY][2]; /* x neighbours of the tile's rows: [slot][row - 1][left, right] */
};
template <typename T> /* one ring for the calls with and without the residual */
__device__ __forceinline__ Ring3Smem<T> &ring3_smem() {
  __shared__ Ring3Smem<T> R;
  return R;
}


template <typename T, bool HAS_F, bool NORM, typename I>
__device__ double relax_range_ring3(const RelaxPar &P, const RelaxGeom &G, const T *u, T *un,
                                    const T *__restrict__ f, I b0, I bs, const TaskQueue &Q,
                                    Ring3Smem<T> &R) {
  typedef typename Vec16<T>::type VT;
  constexpr int V = Vec16<T>::n;
  const T w0 = (T)P.w0, w1 = (T)P.w1, w2 = (T)P.w2, diag = (T)P.diag, c = (T)P.c;
  const long long sy = G.sy, sz = G.sz;
  /* this warp: piece p of tile row jr (it computes row j = jr + 1 of the
   * ring's kTileY + 2); a thread's chunk in the tile row: cx */
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, p = w % kPieces3, jr = w / kPieces3;
  const int cx = 32 * p + lane;
  const I tx = (I)G.tx, ty = (I)G.ty, btasks = (I)G.btasks;
  __shared__ unsigned s_task;
  auto draw = [&]() -> I { return (I)block_draw(Q, (unsigned)btasks, s_task); };
  double sum = 0.0;
  for (I bt = Q.ctr ? draw() : b0; bt < btasks; bt = Q.ctr ? draw() : bt + bs) {
    const I rest = bt / tx, xt = bt - rest * tx;
    const I strip = rest / ty, yt = rest - strip * ty;
    const int ch0 = (int)xt * kTileX, wt = min(kTileX, G.nch - ch0); /* chunks of the tile's rows */
    const bool active = cx < wt, tfirst = cx == 0, tlast = cx == wt - 1;
    const int xs = (G.a0 + ch0 + cx) * V;
    const int y0 = G.q0 + (int)yt * kTileY, ny = min(kTileY, G.qn - (int)yt * kTileY);
    const int m = G.m0 + (int)strip * G.rz, rows = min(G.rz, G.mn - (int)strip * G.rz);
    unsigned xm, om;
    chunk_masks<V>(G, xs, active, &xm, &om);
    const bool need_l = tfirst && (xm & 1u), need_r = tlast && ((xm >> (V - 1)) & 1u);
    /* rows this thread copies (its chunk cx): jr and jr + kTileY of the
     * tile's ny + 2 (row j at y0 - 1 + j; 8 warps cover them); the row it
     * computes: jr + 1 */
    const bool cp0 = active && jr < ny + 2, cp1 = active && jr + kTileY < ny + 2;
    const bool e0 = jr >= 1 && jr <= ny, e1 = jr + kTileY <= ny; /* rows computed: their x edges too */
    const bool comp = jr < ny;
    const int yc = y0 + jr; /* the row computed */
    const T *ld = u + xs + sy * (y0 - 1 + jr) + sz * (m - 1); /* row jr of the next plane to copy */
    long long idx = xs + sy * yc + sz * m;
    int to_load = rows + 2;
    auto load = [&](int s) {
      if (to_load > 0) {
        const bool computed = to_load >= 2 && to_load <= rows + 1;
        if (cp0) {
          cp_async16(smem_u32(&R.v[s][jr][cx]), ld);
          if (computed && e0 && need_l) cp_async_small<sizeof(T)>(smem_u32(&R.edge[s][jr - 1][0]), ld - 1);
          if (computed && e0 && need_r) cp_async_small<sizeof(T)>(smem_u32(&R.edge[s][jr - 1][1]), ld + V);
        }
        if (cp1) {
          const T *l1 = ld + sy * kTileY;
          cp_async16(smem_u32(&R.v[s][jr + kTileY][cx]), l1);
          if (computed && e1 && need_l) cp_async_small<sizeof(T)>(smem_u32(&R.edge[s][jr + kTileY - 1][0]), l1 - 1);
          if (computed && e1 && need_r) cp_async_small<sizeof(T)>(smem_u32(&R.edge[s][jr + kTileY - 1][1]), l1 + V);
        }
        ld += sz;
        to_load--;
      }
      cp_async_commit();
    };
#pragma unroll
    for (int k = 0; k < kRing3; k++) load(k);
    cp_async_wait<kRing3 - 2>(); /* planes m - 1 and m */
    __syncthreads();
    VT prev = R.v[0][jr + 1][cx], cur = R.v[1][jr + 1][cx];
    VT fnext;
    if (HAS_F) fnext = comp && active ? vload(f + idx) : prev;
    const bool yown = yc >= G.oq0 && yc < G.oq1;
    /* slot s holds plane m + r (the one computed), s + 1 plane m + r + 1 */
    for (int r = 0, s = 1; r < rows; r++) {
      const int sn = s + 1 == kRing3 ? 0 : s + 1, sp = s == 0 ? kRing3 - 1 : s - 1;
      cp_async_wait<kRing3 - 3>(); /* plane m + r + 1 (this thread's copies) */
      __syncthreads();             /* everyone's; and plane m + r - 1 is read by no one */
      load(sp);
      const T sl = __shfl_up_sync(0xffffffffu, vget(cur, V - 1), 1);
      const T sr = __shfl_down_sync(0xffffffffu, vget(cur, 0), 1);
      if (comp) {
        const VT next = R.v[sn][jr + 1][cx], ym = R.v[s][jr][cx], yp = R.v[s][jr + 2][cx];
        const VT fv = fnext;
        if (HAS_F && r + 1 < rows && active) fnext = vload(f + idx + sz);
        /* x neighbours: the lanes beside, the warps' pieces beside (shared
         * memory, this plane), or the tile's edges */
        T left = (T)0, right = (T)0;
        if (xm & 1u) left = lane ? sl : (tfirst ? R.edge[s][jr][0] : vget(R.v[s][jr + 1][cx - 1], V - 1));
        if ((xm >> (V - 1)) & 1u)
          right = tlast ? R.edge[s][jr][1] : (lane == 31 ? vget(R.v[s][jr + 1][cx + 1], 0) : sr);
        const unsigned rom = (yown && m + r >= G.om0 && m + r < G.om1) ? om : 0u;
        const VT out = chunk_relax<T, 3, HAS_F, NORM>(cur, left, right, prev, next, ym, yp, fv, rom, w0, w1,
                                                      w2, diag, c, sum);
        chunk_store(un + idx, out, xm);
        prev = cur;
        cur = next;
      }
      idx += sz;
      s = sn;
    }
    cp_async_wait<0>();
    __syncthreads(); /* the next task's copies go into slots this one's last steps read */
  }
  return sum;
}

/* Tasks t0, t0 + ts, ... of region G: the relaxation step, and (NORM) the
 * thread's sum of squared residuals over owned points. u and un carry no
 * __restrict__: the persistent kernels write u between grid barriers and
 * read it again, which the non-coherent load path would not see. I is the
 * task index type: 32-bit whenever the task count allows (64-bit division
 * per task costs more than the rows it indexes on small grids). */
template <typename T, int DIM, bool HAS_F, bool NORM, typename I, bool FWD = false, bool LEAN = false>
__device__ double relax_range(const RelaxPar &P, const RelaxGeom &G, const T *u, T *un,
                              const T *__restrict__ f, I t0, I ts, const PeerFwd *fwd = nullptr,
                              int par = 0, bool *fwd_hit = nullptr, const TaskQueue &Q = TaskQueue{nullptr, 0}) {
  if (DIM == 2 && !FWD) return relax_range_ring<T, HAS_F, NORM, I, LEAN>(P, G, u, un, f, t0, ts, Q);
  /* blocks of RELAX_THREADS threads: t0 / RELAX_THREADS is the block's index */
  if (DIM == 3 && !FWD) return relax_range_ring3<T, HAS_F, NORM, I>(P, G, u, un, f, t0 / RELAX_THREADS, ts / RELAX_THREADS, Q,
                                                                 ring3_smem<T>());
  typedef typename Vec16<T>::type VT;
  constexpr int V = Vec16<T>::n;
  const T w0 = (T)P.w0, w1 = (T)P.w1, w2 = (T)P.w2, diag = (T)P.diag, c = (T)P.c;
  const long long ms = DIM == 3 ? G.sz : G.sy; /* march stride */
  const I tasks = (I)G.tasks, nch = (I)G.nch, nstrips = (I)G.nstrips;
  /* 32-bit positions (an axis is below 2^31 points: make_relax_geom), 64-bit
   * storage index: fewer registers, so the persistent kernels keep the
   * occupancy of the per-step one */
  double sum = 0.0;
  for (I t = t0; t < tasks; t += ts) {
    const I rest = t / nch, ch = t - rest * nch;
    const I q = rest / nstrips, strip = rest - q * nstrips;
    const int xs = (G.a0 + (int)ch) * V;
    const int m = G.m0 + (int)strip * G.ry;
    const int oth = G.q0 + (int)q;
    const int rows = min(G.ry, G.mn - (int)strip * G.ry);
    unsigned xm, om;
    chunk_masks<V>(G, xs, true, &xm, &om);
    if (DIM == 3 && (oth < G.oq0 || oth >= G.oq1)) om = 0;
    bool fwd_task = false; /* FWD: this task's values go to a neighbour */
    if (FWD) {
      fwd_task = peer_touches<T, DIM>(*fwd, G, xm, xs, m, rows, oth);
      if (fwd_task) *fwd_hit = true;
    }
    long long idx = xs + ms * m + (DIM == 3 ? G.sy * oth : 0LL);
    /* rows r - 1, r, r + 1 in registers, rows r + 2 and r + 3 and f's row
     * r + 1 loaded ahead: the store of row r may alias u for all the compiler
     * knows, so without this a thread would have one row in flight, too few
     * bytes to cover memory latency at this occupancy */
    VT prev = vload(u + idx - ms), cur = vload(u + idx), next = vload(u + idx + ms);
    VT after = rows > 1 ? vload(u + idx + 2 * ms) : next;
    VT fnext;
    if (HAS_F) fnext = vload(f + idx);
    for (int r = 0; r < rows; r++, idx += ms) {
      const bool more = r + 1 < rows;
      /* row r + 3: two rows in flight ahead of the one computed */
      const VT after2 = r + 2 < rows ? vload(u + idx + 3 * ms) : after;
      const VT fv = fnext;
      if (HAS_F && more) fnext = vload(f + idx + ms);
      const T left = (xm & 1u) ? u[idx - 1] : (T)0;
      const T right = (xm >> (V - 1)) & 1u ? u[idx + V] : (T)0;
      VT ym, yp;
      if (DIM == 3) {
        ym = vload(u + idx - G.sy);
        yp = vload(u + idx + G.sy);
      }
      const unsigned rom = (m + r >= G.om0 && m + r < G.om1) ? om : 0u;
      const VT out = chunk_relax<T, DIM, HAS_F, NORM>(cur, left, right, prev, next, ym, yp, fv, rom, w0, w1,
                                                      w2, diag, c, sum);
      chunk_store(un + idx, out, xm);
      if (FWD && fwd_task) peer_forward<T, DIM>(*fwd, par, G, out, xm, xs, DIM == 3 ? oth : m + r, DIM == 3 ? m + r : 0);
      prev = cur;
      cur = next;
      next = after;
      after = after2;
    }
  }
  return sum;
}


inline RelaxPar make_relax_par(const coop_stencil *s, double c) {
  RelaxPar p = {s->w[0], s->w[1], s->w[2], 2.0 * (s->w[0] + s->w[1] + s->w[2]), c};
  return p;
}

/* 3D block tasks (relax_range_ring3): tiles of kTileX chunks x kTileY rows, each
 * cut along z into strips of at most kStripPlanes planes, as many as fill
 * `blocks` blocks evenly. A strip costs its planes plus about kStripStart
 * more (the ring filling, and the planes beside it read again), so among
 * those the strips minimise waves x (planes a strip + kStripStart). Short
 * strips in many waves beat long ones in few (measured: see bench/results/),
 * likely (not measured directly) because the queue gives blocks that run
 * slower than others fewer tasks. */
constexpr int kStripStart = 3;
constexpr int kStripPlanes = 12;
/* COOP_RING3_STRIPS: strips a tile for benchmark sweeps (bench/stencil3d.sh
 * rows), read once; unset or 0: the plan's */
inline long long ring3_env_strips() {
  const char *v = getenv("COOP_RING3_STRIPS");
  const long long x = v ? atoll(v) : 0;
  return x > 0 ? x : 0;
}
/* Strips of the tiles of tile_rows rows (tiles along x: kTileX chunks) for
 * `blocks` blocks: *tx x *ty tiles, strips of *rz planes, *tasks in all;
 * start: a strip's cost beyond its planes, at most `planes` planes a strip
 * unless the task bound needs longer. -1: too many tasks for any plan. */
inline int ring3_tiles(const RelaxGeom *g, long long blocks, int tile_rows, int start, int planes, int *tx_out,
                       int *ty_out, int *rz_out, unsigned *tasks_out) {
  static const long long env_strips = ring3_env_strips();
  if (blocks < 1) blocks = 1;
  const long long tx = (g->nch + kTileX - 1LL) / kTileX, ty = (g->qn + tile_rows - 1LL) / tile_rows, tiles = tx * ty;
  /* the per-step kernel runs a block a task and numbers threads in 32 bits
   * (blockIdx.x x RELAX_THREADS): tasks + blocks below 2^32 / RELAX_THREADS,
   * so a thin tall box takes longer strips rather than wrapping */
  const long long max_tasks = (1LL << 32) / RELAX_THREADS - 4096, nmax = (max_tasks - blocks) / tiles;
  if (nmax < 1) return -1;
  /* the cost of s strips a tile (-1: not a plan) */
  auto cost = [&](long long s) -> long long {
    if (s < 1 || s > g->mn) return -1;
    const long long rz = (g->mn + s - 1) / s, n = (g->mn + rz - 1) / rz;
    if (n > nmax) return -1;
    return (tiles * n + blocks - 1) / blocks * (rz + start);
  };
  long long best_s = env_strips < g->mn ? env_strips : g->mn;
  if (env_strips && cost(best_s) >= 0) {
    /* the benchmark's strips, within the planes (past the task bound: the plan's) */
  } else {
    best_s = 1;
    /* from the fewest strips of at most `planes`, 64 counts, and as many
     * as fill the blocks once (small boxes); bounded, since the per-step
     * modes plan every launch */
    long long best = -1;
    const long long fill = blocks / tiles;
    long long s0 = (g->mn + planes - 1) / planes;
    if (s0 > nmax) s0 = nmax;
    for (long long k = -1; k < 64; k++) {
      const long long s = k < 0 ? fill : s0 + k;
      if (s < s0) continue;
      const long long c = cost(s);
      if (c >= 0 && (best < 0 || c < best || (c == best && s < best_s))) best = c, best_s = s;
    }
  }
  const long long rz = (g->mn + best_s - 1) / best_s, n = (g->mn + rz - 1) / rz;
  if (tiles * n + blocks >= max_tasks) return -1;
  *tx_out = (int)tx;
  *ty_out = (int)ty;
  *rz_out = (int)rz;
  *tasks_out = (unsigned)(tiles * n);
  return 0;
}
inline int ring3_plan(RelaxGeom *g, long long blocks) {
  return ring3_tiles(g, blocks, kTileY, kStripStart, kStripPlanes, &g->tx, &g->ty, &g->rz, &g->btasks);
}

/* 3D two sweeps a pass (relax_pair_ring3): a task writes kPairTileY rows of
 * its tile (the first sweep's kTileY rows less the two beside them) over a
 * strip of planes, and also computes the first sweep on the planes beside
 * the strip and fills its ring. Long strips win here, unlike the one-sweep
 * march's. kPairStripStart (a strip's cost beyond its planes, in planes) and
 * the cap are set so that the plan takes the measured best (see
 * bench/results/). */
constexpr int kPairTileY = kTileY - 2;
constexpr int kPairStripStart = 16;
#ifndef COOP_PAIR3_PLANES /* planes a strip at most (benchmark builds try others) */
#define COOP_PAIR3_PLANES 96
#endif
/* A region whose last chunk holds one point of it (n = 2^k and ghost 1, in
 * either precision: 512 fp64 points from x = 1 are 257 chunks) would take a
 * tile of one chunk, which costs a block task as a whole tile does (512^3
 * fp64: 9 tiles along x for 8 tiles' work). Where the chunks before it fill
 * whole tiles, the tile before it sweeps that point as its outer column
 * (pabsorb), saving that block task (measured: see bench/results/). */
inline int ring3_pair_plan(RelaxGeom *g, long long blocks, int V) {
  const long long nch = g->nch;
  g->pabsorb = nch >= 2 * kTileX + 1 && (nch - 1) % kTileX == 0 && (g->x1 - 1) % V == 0;
  RelaxGeom t = *g; /* the tiles cover the chunks but the absorbed one */
  t.nch = (int)(nch - g->pabsorb);
  return ring3_tiles(&t, blocks, kPairTileY, kPairStripStart, COOP_PAIR3_PLANES, &g->ptx, &g->pty, &g->prz,
                     &g->pbtasks);
}

/* 2D warp tasks: at most kRing2Rows rows (COOP_RING2_ROWS: another cap for
 * benchmark sweeps, read once). Short tasks from the queue balance the
 * warps: the shortest cap tried beat one task a warp at every size but one
 * small box (measured: see bench/results/). */
constexpr int kRing2Rows = 16;
inline long long ring2_rows() {
  static const long long cap = [] {
    const char *v = getenv("COOP_RING2_ROWS");
    const long long x = v ? atoll(v) : 0;
    return x > 0 && x < (1LL << 30) ? x : (long long)kRing2Rows;
  }();
  return cap;
}

/* COOP_SNAKE=0 in the environment: strips in the same order every sweep
 * (benchmark comparisons of sweep_reversed) */
inline int sweep_snake() {
  static const int on = [] {
    const char *v = getenv("COOP_SNAKE");
    return v && v[0] == '0' && !v[1] ? 0 : 1;
  }();
  return on;
}

/* 2D warp tasks of wry rows: 32-chunk columns x rows x strips of wry */
inline long long ring2_wtasks(const RelaxGeom &g, long long wry) {
  return (g.nch + 31LL) / 32 * g.qn * ((g.mn + wry - 1) / wry);
}

/* Geometry of region r of s. target: the threads that will run it (resident
 * threads of the GPU): rows per task are chosen so that there are at most as
 * many tasks as threads where the rows allow, long marches for large grids,
 * short ones (more parallelism) for small. -1 when positions or task numbers
 * would not fit the kernels' 32-bit indices (make_relax_geom: a run-time
 * error naming the box). */
inline int relax_geom_try(const coop_stencil *s, const coop_region *r, long long target,
                           RelaxGeom *G) {
  const coop_grid *gr = &s->grid;
  const long long V = 16 / (long long)coop_prec_size(gr->prec);
  const bool d3 = gr->ndim == 3;
  RelaxGeom g = {};
  *G = g;
  for (int a = 0; a < 3; a++) /* positions are 32-bit in the kernels */
    if (gr->ext[a] >= (1LL << 31) - 4096) return -1;
  g.sy = gr->ext[0];
  g.sz = gr->ext[0] * gr->ext[1];
  g.x0 = (int)(r->lo[0] + gr->g[0]);
  g.x1 = (int)(r->hi[0] + gr->g[0]);
  g.ox0 = (int)gr->g[0];
  g.ox1 = (int)(gr->g[0] + gr->n[0]);
  const int ma = d3 ? 2 : 1; /* march axis */
  g.m0 = (int)(r->lo[ma] + gr->g[ma]);
  g.mn = (int)(r->hi[ma] - r->lo[ma]);
  g.om0 = (int)gr->g[ma];
  g.om1 = (int)(gr->g[ma] + gr->n[ma]);
  if (d3) {
    g.q0 = (int)(r->lo[1] + gr->g[1]);
    g.qn = (int)(r->hi[1] - r->lo[1]);
    g.oq0 = (int)gr->g[1];
    g.oq1 = (int)(gr->g[1] + gr->n[1]);
  } else {
    g.q0 = 0;
    g.qn = 1;
    g.oq0 = 0;
    g.oq1 = 1;
  }
  g.ry = 1;
  if (g.x1 <= g.x0 || g.mn <= 0 || g.qn <= 0) { /* empty: no tasks */
    *G = g;
    return 0;
  }
  g.a0 = (int)(g.x0 / V);
  g.nch = (int)((g.x1 - 1) / V - g.a0 + 1);
  /* threads a strip of rows takes: a chunk each (3D), or 2D's warps of 32
   * chunks (relax_range_ring), so that the tasks fill the threads once */
  const long long base = d3 ? (long long)g.nch * g.qn : (g.nch + 31LL) / 32 * 32;
  /* as many strips as fill the threads once: one task per thread, so a
   * persistent thread marches one long column instead of several short ones
   * in turn (each start waits on its first rows: capped tasks make the
   * persistent kernel slower than the per-step one on large boxes) */
  long long strips = target / base;
  if (strips < 1) strips = 1;
  if (strips > g.mn) strips = g.mn;
  g.ry = (int)((g.mn + strips - 1) / strips);
  g.nstrips = (g.mn + g.ry - 1) / g.ry;
  const long long tasks = base * g.nstrips;
  /* 2D warp tasks: strips of at most ring2_rows() rows (the ring march with
   * the queue: more tasks than warps, so the queue evens out the warps; long
   * tasks dealt in turn were slower), or the strips above where so
   * many would not fit the launch kernel's 32-bit thread numbers */
  auto wfits = [&](long long w) { return 2 * 32 * w + target + 4096LL * RELAX_THREADS < (1LL << 32); };
  g.wry = d3 ? g.ry : (int)(g.ry < ring2_rows() ? g.ry : ring2_rows());
  if (!wfits(ring2_wtasks(g, g.wry))) g.wry = g.ry;
  const long long wtasks = ring2_wtasks(g, g.wry);
  if (2 * tasks + target + 4096LL * RELAX_THREADS >= (1LL << 32)) return -1;
  if (!wfits(wtasks)) return -1;
  g.tasks = (unsigned)tasks;
  g.wtasks = (unsigned)wtasks;
  g.snake = d3 ? 0 : sweep_snake();
  if (d3 && ring3_plan(&g, target / RELAX_THREADS)) return -1;
  *G = g;
  return 0;
}

/* 2D: one task a warp, strips of ry rows (the plan before warp tasks were
 * capped), for kernels that deal tasks in turn with no queue to balance
 * short ones (the n-step cooperative kernel: each warp would start ry /
 * kRing2Rows rings in turn for nothing; not measured on two GPUs). */
inline void ring2_long_tasks(RelaxGeom *g) {
  if (g->nch <= 0 || g->wry == g->ry) return;
  g->wry = g->ry;
  g->wtasks = (unsigned)ring2_wtasks(*g, g->ry);
}

inline int make_relax_geom(const coop_stencil *s, const coop_region *r, long long target,
                           RelaxGeom *G) {
  if (relax_geom_try(s, r, target, G))
    return COOP_ERROR(COOP_ERR_RUNTIME, "a box of %lld x %lld x %lld points is too large for one "
                      "GPU's step kernels (32-bit positions and task numbers): use more ranks",
                      (long long)s->grid.n[0], (long long)s->grid.n[1], (long long)s->grid.n[2]);
  return 0;
}

}  // namespace

#endif
