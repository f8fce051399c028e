/* Batched solves on the GPU (solvers/batch/batch.h): many independent problems, each
 * solved whole by one group of threads with its own stop test, the groups
 * taking problems from a scheduler (kernels/sched.cuh). The groups, one per
 * rung of the synchronisation ladder (kernels/barrier.cuh):
 *
 *   block    one block; its barrier is __syncthreads(). Any number of groups
 *            (no barrier spans blocks).
 *   cluster  a thread-block cluster of 2..8 blocks along x; cluster.sync(),
 *            partial sums read through distributed shared memory. The
 *            hardware starts a cluster's blocks together, so no residency
 *            rule is needed; persistent grids are capped at the clusters
 *            that fit at once (cudaOccupancyMaxActiveClusters).
 *   row      blockIdx.y is the group, its blockIdx.x the block's rank; the
 *            software barrier of barrier.cuh in an ordinary launch. All
 *            blocks must be resident: groups x blocks <= occupancy x SMs is
 *            checked before the launch, and fewer groups loop over the
 *            problems rather than risk a wait for a block that cannot start.
 *   grid     the row geometry, every barrier grid.sync() in a cooperative
 *            launch (the runtime refuses a grid that cannot be resident):
 *            all groups step together, and a group out of problems keeps
 *            arriving until every group is: the baseline in which every
 *            problem waits for the slowest.
 *   launch   one kernel per step over every problem's row chunks and one per
 *            reduction; the host reads a device count of active problems
 *            every kLaunchCheck steps: the classic baseline.
 *   launch_each  the same kernels launched for one problem at a time, problem
 *            after problem each step (a solver library called per system);
 *            the host drops the problems found done every kLaunchCheck steps.
 *
 * The arithmetic is the host reference's (solvers/batch/batch_host.c): rows in
 * stored order, each product and sum rounded on its own (__dmul_rn and
 * __dadd_rn: no fused multiply-add, which the host's C does not use), the same
 * divisions by the diagonal. Only the dot products' order differs (per-thread
 * sums, a shuffle tree per block, then the group's blocks in rank order: a
 * fixed order for a fixed configuration, so reruns repeat every bit), so a
 * Jacobi run matches the host to the bit for as long as the stop tests agree.
 * Heat is Jacobi's sweep with the weight c_i = dt_i alpha (rounded once, on
 * the host, as the reference does) for 1/diag, and its stop is its step count
 * alone: its fields match the host's to the bit, and it takes the same steps.
 *
 * Reductions take one barrier each: every block writes its partials to one of
 * two rotating slots, passes the barrier and sums all the group's partials
 * in rank order, so every block of a group takes its stop decision from the
 * same value after the same barrier and the blocks leave together. A slot is
 * rewritten two barriers later, when every block has finished reading it. */
#include <cooperative_groups.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/barrier.cuh"
#include "kernels/cuda_check.cuh"
#include "kernels/sched.cuh"
#include "solvers/batch/batch_backend.h"
#include "solvers/stop.h"

namespace cg = cooperative_groups;

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kK = 2;             /* values per group reduction (CG: (r,z) and (r,r)) */
constexpr int kMaxCluster = 8;    /* portable cluster size */
constexpr int kRowsPerBlock = 2048; /* auto: rows one block takes (8 per thread) */
/* row kernels: the level split must not cost blocks an SM (uncapped, the
 * split path would take 80 registers and 3 blocks an SM; capped, it spills
 * a few loop variables instead) */
constexpr int kRowMinBlocks = 4;
constexpr int kLaunchCheck = 8;   /* launch mode: steps between reads of the active count */
/* a software barrier waits this long for its group before the kernel gives
 * up: far beyond any phase of one problem (microseconds), short enough that a
 * non-resident group is reported, not waited on */
constexpr unsigned long long kBarrierTimeoutNs = 5000000000ull;

/* One rank's batch in device memory, with the controls and the results. */
struct Batch {
  long long count;
  const int64_t *row_off, *rowptr;
  const int32_t *colind;
  const double *val, *b;
  double *x, *xs, *r, *z, *p0, *p1, *q, *d; /* x; Jacobi's and heat's next x; CG's vectors; diagonal */
  const double *c;      /* heat: per problem dt alpha */
  const int64_t *steps; /* heat: per problem step count */
  int method, pc;
  double rtol, atol, dtol;
  long long max_iter;
  int64_t *res_it;
  double *res_r0, *res_rn, *res_sec;
  int *res_reason;
  /* the items: order[k] is the k-th problem handed out (NULL: problem k);
   * row groups' levels (coop_batch_levels): level l's groups hold lsize[l]
   * blocks and take items [lstart[l], lstart[l + 1]); their barrier counters
   * start at lctr[l] */
  const int64_t *order;
  int levels;
  int lsize[COOP_BATCH_MAX_LEVELS];
  long long lstart[COOP_BATCH_MAX_LEVELS + 1];
  long long lctr[COOP_BATCH_MAX_LEVELS];
};

/* Device control block: zeroed before each launch. */
struct Ctl {
  unsigned long long next[COOP_BATCH_MAX_LEVELS]; /* atomic scheduler, one counter per level */
  unsigned long long barriers;   /* sum over groups */
  unsigned long long final_tick; /* grid: the grid.sync() after which all leave */
  unsigned done_groups;          /* grid: groups out of problems */
  int active;                    /* launch: problems still iterating */
  coop_bar::Fault fault;
};

/* What the persistent kernels share besides the batch. */
struct Common {
  Ctl *ctl;
  double *busy;   /* per block: seconds in problems */
  double *part;   /* row, grid: levels x groups x 2 slots x blocks x kK partial sums */
  unsigned *ctr;  /* row: barrier counter per group of every level, zeroed once */
  unsigned long long timeout_ns;
};

struct Shared {
  double warp[kWarps][kK];
  double tot[kK];
  double part[2][kK]; /* cluster: this block's partials, read by the others */
  long long bc[2];
  int ok;
  coop_sched::ClcShared clc;
};

/* ---------------- arithmetic of a row, as the host does it ---------------- */

/* sum_j a_ij y_j over global row i in stored order, y the problem's vector. */
__device__ __forceinline__ double row_apply(const Batch &B, long long i, const double *y) {
  double s = 0.0;
  const long long e = __ldg(B.rowptr + i + 1);
  for (long long j = __ldg(B.rowptr + i); j < e; j++)
    s = __dadd_rn(s, __dmul_rn(__ldg(B.val + j), y[__ldg(B.colind + j)]));
  return s;
}

/* The diagonal entry of local row li (the sum of entries in its column, as the host). */
__device__ __forceinline__ double row_diag(const Batch &B, long long i, int li) {
  double s = 0.0;
  const long long e = __ldg(B.rowptr + i + 1);
  for (long long j = __ldg(B.rowptr + i); j < e; j++)
    if (__ldg(B.colind + j) == li) s = __dadd_rn(s, __ldg(B.val + j));
  return s;
}

/* CG's new direction at row j: z_j + beta p_j (z_j on the first step). The
 * owner stores it and the neighbours recompute it, to the same bits. */
__device__ __forceinline__ double direction(const double *z, const double *p, double beta, bool first,
                                            int j) {
  return first ? z[j] : __dadd_rn(z[j], __dmul_rn(beta, p[j]));
}

/* ---------------- reductions ---------------- */

/* Sums of v over the block in a fixed tree; the totals in thread 0's v. */
template <int K>
__device__ void block_reduce(Shared &sh, double (&v)[K]) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
#pragma unroll
  for (int k = 0; k < K; k++) {
    for (int o = 16; o > 0; o >>= 1) v[k] += __shfl_down_sync(0xffffffffu, v[k], o);
    if (lane == 0) sh.warp[w][k] = v[k];
  }
  __syncthreads();
  if (w == 0) {
#pragma unroll
    for (int k = 0; k < K; k++) {
      double t = lane < kWarps ? sh.warp[lane][k] : 0.0;
      for (int o = kWarps / 2; o > 0; o >>= 1) t += __shfl_down_sync(0xffffffffu, t, o);
      v[k] = t;
    }
  }
}

/* Warp 0: lane l sums part(r, k) over ranks r = l, l + 32, ..., then a fixed
 * tree; the group totals go to sh.tot, and from there to every thread. */
template <int K, class F>
__device__ void combine(Shared &sh, int size, double (&v)[K], F part) {
  const int lane = threadIdx.x & 31;
  if (threadIdx.x < 32) {
#pragma unroll
    for (int k = 0; k < K; k++) {
      double t = 0.0;
      for (int r = lane; r < size; r += 32) t += part(r, k);
      for (int o = 16; o > 0; o >>= 1) t += __shfl_down_sync(0xffffffffu, t, o);
      if (lane == 0) sh.tot[k] = t;
    }
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; k++) v[k] = sh.tot[k];
}

/* ---------------- groups ---------------- */

/* One block. */
struct BlockG {
  Shared &sh;
  int slot = 0;
  long long barriers = 0;
  long long idx, n; /* this block among the kernel's n (a row kernel's blocks flattened) */
  __device__ explicit BlockG(Shared &s)
      : sh(s), idx((long long)blockIdx.y * gridDim.x + blockIdx.x), n((long long)gridDim.x * gridDim.y) {}
  __device__ int size() const { return 1; }
  __device__ int rank() const { return 0; }
  __device__ long long index() const { return idx; }
  __device__ long long groups() const { return n; }
  __device__ bool leader() const { return threadIdx.x == 0; }
  __device__ void start() { __syncthreads(); }
  __device__ void finish() {}
  template <int K> __device__ bool sum(double (&v)[K]) {
    block_reduce(sh, v);
    if (threadIdx.x == 0)
      for (int k = 0; k < K; k++) sh.tot[k] = v[k];
    __syncthreads();
    for (int k = 0; k < K; k++) v[k] = sh.tot[k];
    barriers++;
    return true;
  }
  __device__ bool bcast(long long &v) {
    if (leader()) sh.bc[slot] = v;
    __syncthreads();
    v = sh.bc[slot];
    slot ^= 1;
    barriers++;
    return true;
  }
};

/* The cluster's handles (sm_90 and later; a build for older GPUs keeps the
 * kernels, which the launcher never starts there). */
#ifdef _CG_HAS_CLUSTER_GROUP
__device__ __forceinline__ int cl_rank() { return (int)cg::this_cluster().block_rank(); }
__device__ __forceinline__ int cl_size() { return (int)cg::this_cluster().num_blocks(); }
__device__ __forceinline__ void cl_sync() { cg::this_cluster().sync(); }
template <class T> __device__ __forceinline__ T *cl_map(T *p, int r) {
  return cg::this_cluster().map_shared_rank(p, (unsigned)r);
}
#else
__device__ __forceinline__ int cl_rank() { __trap(); return 0; }
__device__ __forceinline__ int cl_size() { __trap(); return 1; }
__device__ __forceinline__ void cl_sync() { __trap(); }
template <class T> __device__ __forceinline__ T *cl_map(T *p, int) { __trap(); return p; }
#endif

/* A cluster along x: hardware barrier, partials through DSMEM. */
struct ClusterG {
  Shared &sh;
  int slot = 0;
  long long barriers = 0;
  __device__ explicit ClusterG(Shared &s) : sh(s) {}
  __device__ int size() const { return cl_size(); }
  __device__ int rank() const { return cl_rank(); }
  __device__ long long index() const { return blockIdx.x / cl_size(); }
  __device__ long long groups() const { return gridDim.x / cl_size(); }
  __device__ bool leader() const { return cl_rank() == 0 && threadIdx.x == 0; }
  __device__ void start() { cl_sync(); } /* all blocks running before any DSMEM access */
  __device__ void finish() { cl_sync(); } /* none leaves while another reads its memory */
  template <int K> __device__ bool sum(double (&v)[K]) {
    block_reduce(sh, v);
    if (threadIdx.x == 0)
      for (int k = 0; k < K; k++) sh.part[slot][k] = v[k];
    cl_sync();
    double *mine = &sh.part[slot][0];
    combine(sh, size(), v, [&](int r, int k) { return cl_map(mine, r)[k]; });
    slot ^= 1;
    barriers++;
    return true;
  }
  __device__ bool bcast(long long &v) {
    if (leader()) sh.bc[slot] = v;
    cl_sync();
    v = *cl_map(&sh.bc[slot], 0);
    slot ^= 1;
    barriers++;
    return true;
  }
};

/* A row of blocks (blockIdx.y): the software barrier, or with GRID the
 * cooperative grid.sync(). Partials in global memory (read through L2). At
 * level l of a split row (B.lsize) the row's blocks form groups of
 * B.lsize[l] consecutive blocks, each with its own counter and its own
 * partial slots, so groups that split never touch their parent's slots. */
template <bool GRID>
struct RowG {
  Shared &sh;
  const Common &C;
  int slot = 0;
  long long barriers = 0;
  int n, r, first;        /* blocks of the group, this block's rank, the group's first blockIdx.x */
  long long idx, ngroups; /* the group among the level's groups of the kernel */
  unsigned *ctr;          /* its barrier counter (row) */
  double *part;           /* slot 0 of the level's partials of this row */
  __device__ RowG(Shared &s, const Common &c, const Batch &B, int level) : sh(s), C(c) {
    n = B.lsize[level];
    r = (int)(blockIdx.x % (unsigned)n);
    first = (int)blockIdx.x - r;
    const long long per_row = gridDim.x / n;
    idx = (long long)blockIdx.y * per_row + blockIdx.x / n;
    ngroups = (long long)gridDim.y * per_row;
    ctr = GRID ? nullptr : coop_bar::group_counter(C.ctr, B.lctr[level] + idx);
    part = C.part + ((size_t)level * gridDim.y + blockIdx.y) * 2 * (size_t)gridDim.x * kK;
  }
  __device__ int size() const { return n; }
  __device__ int rank() const { return r; }
  __device__ long long index() const { return idx; }
  __device__ long long groups() const { return ngroups; }
  __device__ bool leader() const { return r == 0 && threadIdx.x == 0; }
  __device__ void start() {}
  __device__ double *slot_base() const { return part + (size_t)slot * gridDim.x * kK + (size_t)first * kK; }
  __device__ bool barrier() {
    barriers++;
    if (GRID) {
      coop_bar::grid_sync();
      return true;
    }
    return coop_bar::group_sync(ctr, (unsigned)n, r == 0, (int)idx, r, &C.ctl->fault, C.timeout_ns, &sh.ok);
  }
  template <int K> __device__ bool sum(double (&v)[K]) {
    block_reduce(sh, v);
    double *base = slot_base();
    if (threadIdx.x == 0)
      for (int k = 0; k < K; k++) base[(size_t)r * kK + k] = v[k];
    if (!barrier()) return false;
    combine(sh, size(), v, [&](int q, int k) { return __ldcg(base + (size_t)q * kK + k); });
    slot ^= 1;
    return true;
  }
  __device__ bool bcast(long long &v) {
    double *base = slot_base();
    if (leader()) base[0] = __longlong_as_double(v);
    if (!barrier()) return false;
    v = __double_as_longlong(__ldcg(base));
    slot ^= 1;
    return true;
  }
  /* grid: a group out of problems keeps meeting the others' grid.sync()
   * until all are out. The last group to run out names the barrier after
   * which everyone leaves (the next one); a block reading the name early
   * still sees a later barrier, so all leave after the same one. */
  __device__ void finish() {
    if (!GRID) return;
    Ctl *ctl = C.ctl;
    if (leader() && atomicAdd(&ctl->done_groups, 1u) + 1u == gridDim.y)
      atomicExch(&ctl->final_tick, (unsigned long long)barriers + 1ull);
    for (;;) {
      coop_bar::grid_sync();
      barriers++;
      const unsigned long long ft = *(volatile unsigned long long *)&ctl->final_tick;
      if (ft != 0 && ft <= (unsigned long long)barriers) break;
    }
  }
};

/* ---------------- one problem ---------------- */

struct Rows {
  long long lo; /* global first row */
  int n;        /* rows */
  int t0, ts;   /* this thread's first local row and the stride */
};

template <class G>
__device__ Rows rows_of(const Batch &B, long long p, const G &g) {
  Rows R;
  R.lo = B.row_off[p];
  R.n = (int)(B.row_off[p + 1] - R.lo);
  R.t0 = g.rank() * kThreads + threadIdx.x;
  R.ts = g.size() * kThreads;
  return R;
}

template <class G>
__device__ void record(const G &g, const Batch &B, long long p, long long it, double r0, double rn,
                       int reason, unsigned long long t0) {
  if (!g.leader()) return;
  B.res_it[p] = it;
  B.res_r0[p] = r0;
  B.res_rn[p] = rn;
  B.res_reason[p] = reason;
  B.res_sec[p] = 1e-9 * (double)(coop_bar::globaltimer() - t0);
}

/* x + r / diag (Jacobi) or x + c r (heat), rounded as the host rounds. */
template <bool HEAT>
__device__ __forceinline__ double relax_update(double x, double r, const double *d, double c, int i) {
  return HEAT ? __dadd_rn(x, __dmul_rn(c, r)) : __dadd_rn(x, __ddiv_rn(r, d[i]));
}

/* Jacobi's stop test, or heat's step count. */
template <bool HEAT>
__device__ __forceinline__ int relax_stop(const Batch &B, long long p, double rn, double r0, long long it) {
  return HEAT ? coop_batch_heat_stop(rn, it, B.steps[p])
              : coop_stop_test(rn, r0, it, B.max_iter, B.rtol, B.atol, B.dtol);
}

/* Jacobi and heat: each sweep computes r = b - A x, ||r||^2 and the next
 * iterate (into the other buffer) in one pass and one barrier; the stop test
 * on ||r|| keeps x as it is, so the last sweep's update is dropped. */
template <bool HEAT, class G>
__device__ bool relax(G &g, const Batch &B, long long p, unsigned long long t0) {
  const Rows R = rows_of(B, p, g);
  const double *b = B.b + R.lo, *d = HEAT ? NULL : B.d + R.lo;
  const double c = HEAT ? B.c[p] : 0.0;
  double *xa = B.x + R.lo, *xb = B.xs + R.lo;
  if (!HEAT)
    for (int i = R.t0; i < R.n; i += R.ts) B.d[R.lo + i] = row_diag(B, R.lo + i, i);
  double r0 = 0.0;
  for (long long it = 0;; it++) {
    double v[1] = {0.0};
    for (int i = R.t0; i < R.n; i += R.ts) {
      const double r = __dsub_rn(__ldg(b + i), row_apply(B, R.lo + i, xa));
      v[0] += r * r;
      xb[i] = relax_update<HEAT>(xa[i], r, d, c, i);
    }
    if (!g.sum(v)) return false;
    const double rn = sqrt(v[0]);
    if (it == 0) r0 = rn;
    const int reason = relax_stop<HEAT>(B, p, rn, r0, it);
    if (reason) {
      if (xa != B.x + R.lo) /* the answer is in the spare buffer: own rows back */
        for (int i = R.t0; i < R.n; i += R.ts) B.x[R.lo + i] = xa[i];
      record(g, B, p, it, r0, rn, reason, t0);
      return true;
    }
    double *t = xa;
    xa = xb;
    xb = t;
  }
}

/* CG's vectors of one problem (p and pn: this step's direction and the next). */
struct CgVec {
  const double *b, *d;
  double *x, *r, *z, *q, *p, *pn;
};

__device__ CgVec cg_vectors(const Batch &B, long long lo) {
  CgVec V = {B.b + lo, B.d + lo, B.x + lo, B.r + lo, (B.pc ? B.z : B.r) + lo, B.q + lo, B.p0 + lo,
             B.p1 + lo};
  return V;
}

/* r = b - A x, z = M^-1 r; partials (r, z) and (r, r). */
__device__ void cg_start(const Batch &B, const Rows &R, const CgVec &V, double (&v)[2]) {
  for (int i = R.t0; i < R.n; i += R.ts) {
    if (B.pc) B.d[R.lo + i] = row_diag(B, R.lo + i, i);
    const double r = __dsub_rn(__ldg(V.b + i), row_apply(B, R.lo + i, V.x));
    V.r[i] = r;
    const double z = B.pc ? __ddiv_rn(r, V.d[i]) : r;
    if (B.pc) V.z[i] = z;
    v[0] += r * z;
    v[1] += r * r;
  }
}

/* pn = z + beta p, q = A pn; partial (pn, q). The neighbours' pn entries are
 * recomputed from z and p, so pn needs no barrier of its own. */
__device__ double cg_direction(const Batch &B, const Rows &R, const CgVec &V, double beta, bool first) {
  double pq = 0.0;
  for (int i = R.t0; i < R.n; i += R.ts) {
    const long long gi = R.lo + i, e = __ldg(B.rowptr + gi + 1);
    double s = 0.0;
    for (long long j = __ldg(B.rowptr + gi); j < e; j++)
      s = __dadd_rn(s, __dmul_rn(__ldg(B.val + j), direction(V.z, V.p, beta, first, __ldg(B.colind + j))));
    const double pi = direction(V.z, V.p, beta, first, i);
    V.pn[i] = pi;
    V.q[i] = s;
    pq += pi * s;
  }
  return pq;
}

/* x += alpha pn, r -= alpha q, z = M^-1 r; partials (r, z) and (r, r). */
__device__ void cg_update(const Batch &B, const Rows &R, const CgVec &V, double alpha, double (&v)[2]) {
  for (int i = R.t0; i < R.n; i += R.ts) {
    V.x[i] = __dadd_rn(V.x[i], __dmul_rn(alpha, V.pn[i]));
    const double r = __dsub_rn(V.r[i], __dmul_rn(alpha, V.q[i]));
    V.r[i] = r;
    const double z = B.pc ? __ddiv_rn(r, V.d[i]) : r;
    if (B.pc) V.z[i] = z;
    v[0] += r * z;
    v[1] += r * r;
  }
}

/* The checks before a step, in the host's order. */
__device__ int cg_check(const Batch &B, double rn, double r0, long long it, double rz) {
  const int reason = coop_stop_test(rn, r0, it, B.max_iter, B.rtol, B.atol, B.dtol);
  if (reason) return reason;
  return B.pc && rz <= 0.0 ? COOP_DIVERGED_INDEFINITE_PC : COOP_REASON_NONE;
}

__device__ int cg_curvature(double pq) {
  if (isnan(pq)) return COOP_DIVERGED_NAN;
  return pq <= 0.0 ? COOP_DIVERGED_INDEFINITE_MAT : COOP_REASON_NONE;
}

/* Textbook PCG, two barriers a step: after (p, Ap) and after (r, z), (r, r).
 * The stop test runs on the recurrence ||r|| before each step. */
template <class G>
__device__ bool cg_solve(G &g, const Batch &B, long long p, unsigned long long t0) {
  const Rows R = rows_of(B, p, g);
  CgVec V = cg_vectors(B, R.lo);
  double v[2] = {0.0, 0.0};
  cg_start(B, R, V, v);
  if (!g.sum(v)) return false;
  double rz = v[0], rn = sqrt(v[1]), beta = 0.0;
  const double r0 = rn;
  for (long long it = 0;; it++) {
    int reason = cg_check(B, rn, r0, it, rz);
    double w[1] = {0.0};
    if (!reason) {
      w[0] = cg_direction(B, R, V, beta, it == 0);
      if (!g.sum(w)) return false;
      reason = cg_curvature(w[0]);
    }
    if (reason) {
      record(g, B, p, it, r0, rn, reason, t0);
      return true;
    }
    double u[2] = {0.0, 0.0};
    cg_update(B, R, V, rz / w[0], u);
    if (!g.sum(u)) return false;
    beta = u[0] / rz;
    rz = u[0];
    rn = sqrt(u[1]);
    double *t = V.p;
    V.p = V.pn;
    V.pn = t;
  }
}

/* ---------------- the persistent kernels ---------------- */

/* The problems the scheduler hands this group from items [lo, hi) of the
 * order; false when the kernel aborts (a barrier gave up). HEAT: heat
 * batches get their own kernels, so that the Jacobi and CG kernels keep
 * their registers and occupancy (which size the row groups, and so the
 * order of their sums). */
template <bool HEAT, class G, class S>
__device__ bool solve_items(G &g, S &s, const Batch &B, long long lo, long long hi, double &busy) {
  long long k = s.first(g);
  while (k >= 0 && k < hi - lo) {
    const long long p = B.order ? B.order[lo + k] : lo + k;
    const unsigned long long t0 = coop_bar::globaltimer();
    const bool ok = HEAT ? relax<true>(g, B, p, t0)
                    : B.method == COOP_BATCH_JACOBI ? relax<false>(g, B, p, t0) : cg_solve(g, B, p, t0);
    if (!ok) return false;
    busy += 1e-9 * (double)(coop_bar::globaltimer() - t0);
    k = s.next(g);
  }
  return k != coop_sched::kAbort;
}

/* This block's seconds in problems, and the barriers its groups' leaders counted. */
__device__ void account(const Common &C, double busy, long long barriers) {
  if (threadIdx.x != 0) return;
  if (barriers) atomicAdd(&C.ctl->barriers, (unsigned long long)barriers);
  C.busy[(size_t)blockIdx.y * gridDim.x + blockIdx.x] = busy;
}

/* One level of groups over the whole order. */
template <bool HEAT, class G, class S>
__device__ void solve_all(G &g, S &s, const Batch &B, const Common &C) {
  double busy = 0.0;
  g.start();
  if (!solve_items<HEAT>(g, s, B, 0, B.count, busy)) return;
  g.finish();
  account(C, busy, g.leader() ? g.barriers : 0);
}

template <class S> __device__ S make_sched(const Common &C, Shared &sh, int level = 0);
template <> __device__ coop_sched::Static make_sched(const Common &, Shared &, int) { return coop_sched::Static{}; }
template <> __device__ coop_sched::Atomic make_sched(const Common &C, Shared &, int level) {
  return coop_sched::Atomic{&C.ctl->next[level]};
}
template <> __device__ coop_sched::Clc<false> make_sched(const Common &, Shared &sh, int) {
  coop_sched::Clc<false> s;
  s.sh = &sh.clc;
  s.init();
  return s;
}
template <> __device__ coop_sched::Clc<true> make_sched(const Common &, Shared &sh, int) {
  coop_sched::Clc<true> s;
  s.sh = &sh.clc;
  s.init();
  return s;
}

/* Row groups level by level: a group takes level l's problems until none is
 * left, then its blocks go on as the groups of level l + 1 (all its blocks
 * learn "none" from the same broadcast, so they leave together). Groups of
 * one block take block's path: __syncthreads() and shared-memory sums, where
 * a row barrier of one block would still pass through global memory. */
template <bool HEAT, class S>
__device__ void solve_levels(Shared &sh, const Batch &B, const Common &C) {
  double busy = 0.0;
  long long barriers = 0;
  for (int l = 0; l < B.levels; l++) {
    S s = make_sched<S>(C, sh, l);
    bool ok;
    if (B.lsize[l] > 1) {
      RowG<false> g(sh, C, B, l);
      ok = solve_items<HEAT>(g, s, B, B.lstart[l], B.lstart[l + 1], busy);
      if (g.leader()) barriers += g.barriers;
    } else {
      BlockG g(sh);
      __syncthreads(); /* the shared slots of the level before are read */
      ok = solve_items<HEAT>(g, s, B, B.lstart[l], B.lstart[l + 1], busy);
      if (g.leader()) barriers += g.barriers;
    }
    if (!ok) return;
  }
  account(C, busy, barriers);
}

/* Block groups (G = BlockG: no barrier spans blocks, so any grid size is
 * safe) and cluster groups (G = ClusterG, launched with a cluster dimension
 * along x: cluster.sync(); the hardware co-schedules a cluster's blocks). */
template <bool HEAT, class G, class S>
__global__ void __launch_bounds__(kThreads) group_kernel(Batch B, Common C) {
  __shared__ Shared sh;
  G g(sh);
  S s = make_sched<S>(C, sh);
  solve_all<HEAT>(g, s, B, C);
}

/* Row groups: the software barrier; all blocks resident (groups x blocks <=
 * occupancy x SMs, checked by the launcher). GRID: grid.sync() in a
 * cooperative launch, which guarantees residency itself. */
template <bool HEAT, bool GRID, class S>
__global__ void __launch_bounds__(kThreads, GRID ? 0 : kRowMinBlocks) row_kernel(Batch B, Common C) {
  __shared__ Shared sh;
  if constexpr (GRID) {
    RowG<GRID> g(sh, C, B, 0);
    S s = make_sched<S>(C, sh);
    solve_all<HEAT>(g, s, B, C);
  } else {
    solve_levels<HEAT, S>(sh, B, C);
  }
}

/* ---------------- launch mode ---------------- */

/* Per problem between kernels. */
struct PState {
  double r0, rn, rz, alpha, beta;
  long long it;
  int reason, cur; /* cur: which buffer holds Jacobi's x / CG's p */
  unsigned long long t0;
};

struct Chunks {
  long long n;              /* chunks of up to kThreads rows */
  const int64_t *prob;      /* each chunk's problem */
  const int32_t *row;       /* its first local row */
  const int64_t *first;     /* count + 1: each problem's first chunk */
  long long c0, p0, p1;     /* this launch: chunks from c0 (blockIdx.x + c0), problems [p0, p1) */
  double *part;             /* n x kK partial sums */
  PState *st;
  int *active;
};

struct ChunkRows {
  long long p;
  Rows R;
};

/* This chunk's problem and rows (one row per thread); p = -1 when the
 * problem is done (uniform over the block: the whole block returns). */
__device__ ChunkRows chunk_rows(const Batch &B, const Chunks &L) {
  ChunkRows c;
  c.p = L.prob[blockIdx.x + L.c0];
  const int row = L.row[blockIdx.x + L.c0];
  c.R.lo = B.row_off[c.p];
  c.R.n = min((int)(B.row_off[c.p + 1] - c.R.lo), row + kThreads);
  c.R.t0 = row + threadIdx.x;
  c.R.ts = kThreads;
  if (L.st[c.p].reason) c.p = -1;
  return c;
}

template <int K>
__device__ void chunk_store(Shared &sh, const Chunks &L, double (&v)[K]) {
  block_reduce(sh, v);
  if (threadIdx.x == 0)
    for (int k = 0; k < K; k++) L.part[(blockIdx.x + L.c0) * (long long)kK + k] = v[k];
}

/* Warp per problem: its chunks' partials summed in a fixed order. */
template <int K>
__device__ bool chunk_sums(const Chunks &L, long long p, double (&v)[K]) {
  const int lane = threadIdx.x & 31;
  const long long c0 = L.first[p], c1 = L.first[p + 1];
#pragma unroll
  for (int k = 0; k < K; k++) {
    double t = 0.0;
    for (long long c = c0 + lane; c < c1; c += 32) t += L.part[c * kK + k];
    for (int o = 16; o > 0; o >>= 1) t += __shfl_down_sync(0xffffffffu, t, o);
    v[k] = t;
  }
  return lane == 0;
}

/* the warp's problem, or -1 past this launch's */
__device__ long long warp_problem(const Chunks &L) {
  const long long p = L.p0 + (((long long)blockIdx.x * kThreads + threadIdx.x) >> 5);
  return p < L.p1 ? p : -1;
}

/* A launch's step over one chunk of rows: f(c, s, v) adds this chunk's K
 * partial sums of its problem (state s) into v, which go to L.part. */
template <int K, class F>
__device__ void chunk_step(const Batch &B, const Chunks &L, F &&f) {
  __shared__ Shared sh;
  const ChunkRows c = chunk_rows(B, L);
  if (c.p < 0) return;
  double v[K] = {};
  f(c, L.st[c.p], v);
  chunk_store(sh, L, v);
}

/* The end of a chunked step, a warp a problem: its problem where this is
 * lane 0 of a running problem's warp, with the chunks' K sums in v; else -1. */
template <int K>
__device__ long long step_sums(const Chunks &L, double (&v)[K]) {
  const long long p = warp_problem(L);
  if (p < 0 || L.st[p].reason) return -1;
  return chunk_sums(L, p, v) ? p : -1;
}

__device__ void launch_done(const Batch &B, const Chunks &L, long long p, int reason) {
  PState &s = L.st[p];
  s.reason = reason;
  B.res_it[p] = s.it;
  B.res_r0[p] = s.r0;
  B.res_rn[p] = s.rn;
  B.res_reason[p] = reason;
  B.res_sec[p] = 1e-9 * (double)(coop_bar::globaltimer() - s.t0);
  atomicSub(L.active, 1);
}

__global__ void __launch_bounds__(kThreads) lk_setup(Batch B, Chunks L) {
  const long long p = (long long)blockIdx.x * kThreads + threadIdx.x;
  if (p >= B.count) return;
  PState s = {};
  s.t0 = coop_bar::globaltimer();
  L.st[p] = s;
}

/* Jacobi's (HEAT false) or heat's sweep over one chunk. */
template <bool HEAT>
__global__ void __launch_bounds__(kThreads) lk_relax_sweep(Batch B, Chunks L) {
  chunk_step<1>(B, L, [&](const ChunkRows &c, const PState &s, double (&v)[1]) {
    double *xa = (s.cur ? B.xs : B.x) + c.R.lo, *xb = (s.cur ? B.x : B.xs) + c.R.lo;
    const double *d = HEAT ? NULL : B.d + c.R.lo;
    const double w = HEAT ? B.c[c.p] : 0.0;
    for (int i = c.R.t0; i < c.R.n; i += c.R.ts) {
      if (!HEAT && s.it == 0) B.d[c.R.lo + i] = row_diag(B, c.R.lo + i, i);
      const double r = __dsub_rn(__ldg(B.b + c.R.lo + i), row_apply(B, c.R.lo + i, xa));
      v[0] += r * r;
      xb[i] = relax_update<HEAT>(xa[i], r, d, w, i);
    }
  });
}

template <bool HEAT>
__global__ void __launch_bounds__(kThreads) lk_relax_end(Batch B, Chunks L) {
  double v[1];
  const long long p = step_sums(L, v);
  if (p < 0) return;
  PState &s = L.st[p];
  s.rn = sqrt(v[0]);
  if (s.it == 0) s.r0 = s.rn;
  const int reason = relax_stop<HEAT>(B, p, s.rn, s.r0, s.it);
  if (reason) {
    launch_done(B, L, p, reason);
    return;
  }
  s.cur ^= 1;
  s.it++;
}

/* Jacobi's and heat's answer of the problems that ended with x in the spare buffer. */
__global__ void __launch_bounds__(kThreads) lk_jacobi_copy(Batch B, Chunks L) {
  const long long p = L.prob[blockIdx.x + L.c0];
  if (!L.st[p].cur) return;
  const long long lo = B.row_off[p];
  const int i = L.row[blockIdx.x + L.c0] + threadIdx.x;
  if (i < B.row_off[p + 1] - lo) B.x[lo + i] = B.xs[lo + i];
}

__device__ CgVec cg_vectors_of(const Batch &B, const PState &s, long long lo) {
  CgVec V = cg_vectors(B, lo);
  if (s.cur) {
    double *t = V.p;
    V.p = V.pn;
    V.pn = t;
  }
  return V;
}

__global__ void __launch_bounds__(kThreads) lk_cg_start(Batch B, Chunks L) {
  chunk_step<2>(B, L, [&](const ChunkRows &c, const PState &, double (&v)[2]) {
    cg_start(B, c.R, cg_vectors(B, c.R.lo), v);
  });
}

__device__ void cg_launch_check(const Batch &B, const Chunks &L, long long p) {
  const PState &s = L.st[p];
  const int reason = cg_check(B, s.rn, s.r0, s.it, s.rz);
  if (reason) launch_done(B, L, p, reason);
}

__global__ void __launch_bounds__(kThreads) lk_cg_start_end(Batch B, Chunks L) {
  double v[2];
  const long long p = step_sums(L, v);
  if (p < 0) return;
  PState &s = L.st[p];
  s.rz = v[0];
  s.rn = s.r0 = sqrt(v[1]);
  cg_launch_check(B, L, p);
}

__global__ void __launch_bounds__(kThreads) lk_cg_direction(Batch B, Chunks L) {
  chunk_step<1>(B, L, [&](const ChunkRows &c, const PState &s, double (&v)[1]) {
    v[0] = cg_direction(B, c.R, cg_vectors_of(B, s, c.R.lo), s.beta, s.it == 0);
  });
}

__global__ void __launch_bounds__(kThreads) lk_cg_direction_end(Batch B, Chunks L) {
  double v[1];
  const long long p = step_sums(L, v);
  if (p < 0) return;
  PState &s = L.st[p];
  const int reason = cg_curvature(v[0]);
  if (reason) launch_done(B, L, p, reason);
  else s.alpha = s.rz / v[0];
}

__global__ void __launch_bounds__(kThreads) lk_cg_update(Batch B, Chunks L) {
  chunk_step<2>(B, L, [&](const ChunkRows &c, const PState &s, double (&v)[2]) {
    cg_update(B, c.R, cg_vectors_of(B, s, c.R.lo), s.alpha, v);
  });
}

__global__ void __launch_bounds__(kThreads) lk_cg_update_end(Batch B, Chunks L) {
  double v[2];
  const long long p = step_sums(L, v);
  if (p < 0) return;
  PState &s = L.st[p];
  s.beta = v[0] / s.rz;
  s.rz = v[0];
  s.rn = sqrt(v[1]);
  s.it++;
  s.cur ^= 1; /* this step's pn is the next step's p */
  cg_launch_check(B, L, p);
}

}  // namespace


/* ======================= host side ======================= */

namespace {

/* Device allocations of one solve, released together (a half-built set too). */
struct Mem {
  coop_backend *be;
  void *p[40];
  int n;
};

template <class T>
int dalloc(Mem *m, T **out, size_t count) {
  *out = NULL;
  if (m->n == (int)(sizeof m->p / sizeof *m->p)) return COOP_ERROR(COOP_ERR_RUNTIME, "too many buffers");
  void *v = NULL;
  COOP_CHECK(m->be->alloc(m->be, &v, (count ? count : 1) * sizeof(T)));
  m->p[m->n++] = v;
  *out = (T *)v;
  return 0;
}

void mem_free(Mem *m) {
  for (int i = 0; i < m->n; i++) m->be->release(m->be, m->p[i]);
  m->n = 0;
}

struct Shape {
  long long count, rows, nnz, n_max;
  bool heat;   /* heat batches run their own kernels */
  bool ragged; /* coop_batch_is_ragged: row groups split into levels */
};

Shape shape_of(const coop_batch *bt) {
  Shape s = {bt->count, 0, 0, 0, false, false};
  if (s.count <= 0) return s;
  s.rows = bt->row_off[s.count];
  s.nnz = bt->rowptr[s.rows];
  for (long long i = 0; i < s.count; i++)
    s.n_max = s.n_max > bt->row_off[i + 1] - bt->row_off[i] ? s.n_max : bt->row_off[i + 1] - bt->row_off[i];
  return s;
}

/* The host reference refuses a zero diagonal where it divides by it; so do we,
 * with its words, before any upload. */
int check_diagonal(const coop_batch *bt, const coop_batch_ctl *ctl) {
  if (ctl->method != COOP_BATCH_JACOBI && !ctl->pc) return 0;
  for (long long p = 0; p < bt->count; p++) {
    const long long lo = bt->row_off[p];
    for (long long i = 0; i < bt->row_off[p + 1] - lo; i++) {
      double d = 0.0;
      for (long long j = bt->rowptr[lo + i]; j < bt->rowptr[lo + i + 1]; j++)
        if (bt->colind[j] == i) d += bt->val[j];
      if (d == 0.0)
        return coop_error_input("batch problem %lld: row %lld has a zero or missing diagonal entry "
                                "(Jacobi and the Jacobi preconditioner divide by it)",
                                (long long)bt->id[p], i);
    }
  }
  return 0;
}

struct Gpu {
  int id, sms, major, minor, cooperative;
};

int gpu_of(const coop_backend *be, Gpu *g) {
  g->id = be->device;
  g->sms = be->sm_count;
  g->cooperative = be->cooperative;
  COOP_CUDA(cudaDeviceGetAttribute(&g->major, cudaDevAttrComputeCapabilityMajor, g->id));
  COOP_CUDA(cudaDeviceGetAttribute(&g->minor, cudaDevAttrComputeCapabilityMinor, g->id));
  return 0;
}

using coop_sched::Atomic;
using coop_sched::Clc;
using coop_sched::Static;

/* The kernel of a (sync, schedule) pair; NULL for launch mode. */
template <bool HEAT>
const void *kernel_of(int sync, int sched) {
  const bool st = sched == COOP_SCHED_STATIC, clc = sched == COOP_SCHED_CLC;
  switch (sync) {
  case COOP_BSYNC_BLOCK:
    return clc ? (const void *)group_kernel<HEAT, BlockG, Clc<false>>
               : st ? (const void *)group_kernel<HEAT, BlockG, Static> : (const void *)group_kernel<HEAT, BlockG, Atomic>;
  case COOP_BSYNC_CLUSTER:
    return clc ? (const void *)group_kernel<HEAT, ClusterG, Clc<true>>
               : st ? (const void *)group_kernel<HEAT, ClusterG, Static> : (const void *)group_kernel<HEAT, ClusterG, Atomic>;
  case COOP_BSYNC_ROW:
    return st ? (const void *)row_kernel<HEAT, false, Static> : (const void *)row_kernel<HEAT, false, Atomic>;
  case COOP_BSYNC_GRID:
    return st ? (const void *)row_kernel<HEAT, true, Static> : (const void *)row_kernel<HEAT, true, Atomic>;
  default:
    return NULL;
  }
}
const void *kernel_for(int sync, int sched, bool heat) {
  return heat ? kernel_of<true>(sync, sched) : kernel_of<false>(sync, sched);
}

/* Blocks of fn resident at once on the GPU (occupancy x SMs). */
int resident_blocks(const void *fn, const Gpu &g, long long *out) {
  int per_sm = 0;
  COOP_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, kThreads, 0));
  *out = coop_bar::resident_groups(per_sm, g.sms, 1);
  if (*out < 1) return COOP_ERROR(COOP_ERR_RUNTIME, "no block of the batch kernel fits on GPU %d", g.id);
  return 0;
}

/* Blocks per problem when the run leaves it open: what the largest problem's
 * rows can use at kRowsPerBlock rows a block, but no more than the batch
 * leaves each problem when the whole GPU is shared out (resident / count). */
int auto_blocks(const Shape &s, long long resident) {
  const long long want = (s.n_max + kRowsPerBlock - 1) / kRowsPerBlock;
  long long fill = resident / (s.count > 0 ? s.count : 1);
  if (fill < 1) fill = 1;
  const long long b = want < fill ? want : fill;
  return (int)(b < 1 ? 1 : b);
}

/* sync = auto: a ragged batch runs split rows (solve_levels), unless clc
 * runs it (no rows). Else the cheapest barrier that gives each problem the blocks of
 * auto_blocks. One block: __syncthreads() (a few ns); 2 to 8: a cluster,
 * whose hardware barrier is several times cheaper than a software one;
 * more: a row. So a batch that fills the GPU one
 * block per problem (4096 problems of 64K rows) runs blocks, a few large
 * problems run rows, and in between clusters. Clc runs no rows: it caps at a
 * cluster of 8. bench/batched.sh measures these choices. */
int auto_sync(const Shape &s, long long resident, bool clc, bool clusters) {
  if (s.ragged && !clc) return COOP_BSYNC_ROW;
  const int b = auto_blocks(s, resident);
  if (b <= 1) return COOP_BSYNC_BLOCK;
  if (clusters && (b <= kMaxCluster || clc)) return COOP_BSYNC_CLUSTER;
  return COOP_BSYNC_ROW;
}

struct Plan {
  int sync, sched, bpg;
  long long groups;
  const void *fn;
  coop_batch_levels lv; /* the row kernel's levels; one level of bpg blocks elsewhere */
  int64_t *order;       /* host, count: the order items are handed out; the caller frees it */
  bool upload_order;    /* false: index order, the kernels take problem k as item k */
};

/* What this GPU cannot run whatever the batch (asked again before a batch
 * is built: coop_batch_check_run). */
int gpu_refusal(const Gpu &g, int sync, int schedule) {
  if (schedule == COOP_SCHED_CLC && g.major < 10)
    return coop_error_input("batch.schedule = clc needs compute capability 10.0; GPU %d has %d.%d", g.id,
                            g.major, g.minor);
  if (sync == COOP_BSYNC_CLUSTER && g.major < 9)
    return coop_error_input("batch.sync = cluster needs compute capability 9.0; GPU %d has %d.%d", g.id,
                            g.major, g.minor);
  if (sync == COOP_BSYNC_GRID && !g.cooperative)
    return COOP_ERROR(COOP_ERR_RUNTIME, "GPU %d cannot run cooperative launches (batch.sync = grid)", g.id);
  return 0;
}

/* The schedule, and whether this build can run it (the GPU: gpu_refusal). */
int plan_schedule(const Gpu &g, const coop_batch_run *opt, bool heat, Plan *pl) {
  const bool cc10 = g.major >= 10;
  if (pl->sync == COOP_BSYNC_LAUNCH || pl->sync == COOP_BSYNC_LAUNCH_EACH) {
    if (opt->schedule == COOP_SCHED_CLC)
      return coop_error_input("batch.schedule = clc needs batch.sync = block or cluster; batch.sync is %s",
                              coop_batch_sync_name(pl->sync));
    pl->sched = COOP_SCHED_STATIC; /* every problem at once: no scheduler */
    return 0;
  }
  const bool groups_ok = pl->sync == COOP_BSYNC_BLOCK || pl->sync == COOP_BSYNC_CLUSTER;
  if (opt->schedule == COOP_SCHED_CLC && !groups_ok)
    return coop_error_input("batch.schedule = clc needs batch.sync = block or cluster (a cancelled "
                            "block never starts, so no barrier may span groups); batch.sync is %s",
                            coop_batch_sync_name(pl->sync));
  pl->sched = opt->schedule;
  if (pl->sched == COOP_SCHED_AUTO) pl->sched = cc10 && groups_ok ? COOP_SCHED_CLC : COOP_SCHED_ATOMIC;
  pl->fn = kernel_for(pl->sync, pl->sched, heat);
  if (pl->sched != COOP_SCHED_CLC) return 0;
  /* the code that runs must come from compute_100 or later: code JIT-compiled
   * from older PTX has the clc path compiled out */
  cudaFuncAttributes fa;
  COOP_CUDA(cudaFuncGetAttributes(&fa, pl->fn));
  if (fa.ptxVersion < 100)
    return coop_error_input("batch.schedule = clc: this build's code for GPU %d (cc %d.%d) comes from "
                            "compute_%d, without cluster launch control", g.id, g.major, g.minor,
                            fa.ptxVersion);
  return 0;
}

int plan_cluster(const Gpu &g, const Shape &s, const coop_batch_run *opt, long long resident, Plan *pl) {
  int c = opt->group_blocks;
  if (c == 0) c = auto_blocks(s, resident) < 2 ? 2 : auto_blocks(s, resident);
  if (c > kMaxCluster) {
    if (opt->group_blocks) return coop_error_input("tune.group_blocks = %d: a cluster holds 2 to %d blocks", c, kMaxCluster);
    c = kMaxCluster;
  }
  if (c < 2) return coop_error_input("tune.group_blocks = %d: a cluster holds 2 to %d blocks", c, kMaxCluster);
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = c;
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cfg.gridDim = dim3(c);
  cfg.blockDim = dim3(kThreads);
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  COOP_CUDA(cudaOccupancyMaxActiveClusters(&clusters, pl->fn, &cfg));
  if (clusters < 1)
    return COOP_ERROR(COOP_ERR_RUNTIME, "no cluster of %d blocks of the batch kernel fits on GPU %d", c, g.id);
  pl->bpg = c;
  pl->groups = pl->sched == COOP_SCHED_CLC ? s.count : (s.count < clusters ? s.count : clusters);
  if (pl->groups * c > 2147483647LL) /* clc: a cluster per problem */
    return COOP_ERROR(COOP_ERR_RUNTIME, "batch: %lld problems in clusters of %d exceed one launch's blocks",
                      s.count, c);
  return 0;
}

/* Row and grid: every block of a group must be resident, and so must every
 * group of the launch: blocks x groups <= occupancy x SMs. A ragged batch in
 * rows: levels, top groups sized by coop_batch_plan_levels, as many groups as
 * fit (the blocks of those without a top problem start on the next level). */
int plan_rows(const Gpu &g, const Shape &s, const coop_batch *bt, const coop_batch_ctl *ctl,
              const coop_batch_run *opt, Plan *pl) {
  long long resident;
  COOP_CHECK(resident_blocks(pl->fn, g, &resident));
  if (pl->sync == COOP_BSYNC_ROW && s.ragged) {
    if (opt->group_blocks > resident)
      return coop_error_input("tune.group_blocks = %d: at most %lld blocks of the batch kernel are "
                              "resident on GPU %d, and a row barrier needs all of its blocks at once",
                              opt->group_blocks, resident, g.id);
    COOP_CHECK(coop_batch_plan_levels(bt, ctl, resident, opt->group_blocks, 1, pl->sched != COOP_SCHED_STATIC,
                                      pl->order, &pl->lv));
    pl->bpg = pl->lv.top_blocks;
    pl->groups = resident / pl->bpg;
    pl->upload_order = true;
    return 0;
  }
  int b = opt->group_blocks ? opt->group_blocks : auto_blocks(s, resident);
  if (b > resident) {
    if (opt->group_blocks)
      return coop_error_input("tune.group_blocks = %d: at most %lld blocks of the batch kernel are "
                              "resident on GPU %d, and a %s barrier needs all of its blocks at once",
                              b, resident, g.id, coop_batch_sync_name(pl->sync));
    b = (int)resident;
  }
  pl->bpg = b;
  const long long fit = resident / b;
  pl->groups = s.count < fit ? s.count : fit; /* more problems: groups loop over them */
  return 0;
}

/* One level of the plan's blocks; stealing schedules largest first. */
int plan_order(const coop_batch *bt, const coop_batch_ctl *ctl, Plan *pl) {
  if (pl->lv.levels) return 0; /* split rows: planned */
  const bool steal = pl->sched != COOP_SCHED_STATIC && pl->sync != COOP_BSYNC_LAUNCH &&
                     pl->sync != COOP_BSYNC_LAUNCH_EACH;
  COOP_CHECK(coop_batch_plan_levels(bt, ctl, 1, pl->bpg > 0 ? pl->bpg : 1, 0, steal, pl->order, &pl->lv));
  pl->upload_order = steal;
  return 0;
}

int make_plan(const Gpu &g, const Shape &s, const coop_batch *bt, const coop_batch_ctl *ctl,
              const coop_batch_run *opt, Plan *pl) {
  int64_t *order = pl->order;
  memset(pl, 0, sizeof *pl);
  pl->order = order;
  long long resident;
  COOP_CHECK(resident_blocks(kernel_for(COOP_BSYNC_BLOCK, COOP_SCHED_STATIC, s.heat), g, &resident));
  pl->sync = opt->sync;
  if (pl->sync == COOP_BSYNC_AUTO)
    pl->sync = auto_sync(s, resident,
                         opt->schedule == COOP_SCHED_CLC || (opt->schedule == COOP_SCHED_AUTO && g.major >= 10),
                         g.major >= 9);
  if (pl->sync < COOP_BSYNC_ROW || pl->sync > COOP_BSYNC_LAUNCH_EACH)
    return COOP_ERROR(COOP_ERR_RUNTIME, "batch: batch.sync %d on a GPU", pl->sync);
  COOP_CHECK(gpu_refusal(g, pl->sync, opt->schedule));
  COOP_CHECK(plan_schedule(g, opt, s.heat, pl));
  switch (pl->sync) {
  case COOP_BSYNC_LAUNCH:
  case COOP_BSYNC_LAUNCH_EACH:
    break;
  case COOP_BSYNC_BLOCK:
    COOP_CHECK(resident_blocks(pl->fn, g, &resident));
    pl->bpg = 1;
    pl->groups = pl->sched == COOP_SCHED_CLC || s.count < resident ? s.count : resident;
    if (pl->groups > 2147483647LL)
      return COOP_ERROR(COOP_ERR_RUNTIME, "batch: %lld problems exceed one launch's blocks", s.count);
    break;
  case COOP_BSYNC_CLUSTER:
    COOP_CHECK(plan_cluster(g, s, opt, resident, pl));
    break;
  default:
    COOP_CHECK(plan_rows(g, s, bt, ctl, opt, pl));
  }
  return plan_order(bt, ctl, pl);
}

/* ---------------- upload, run, download ---------------- */

struct Run {
  Batch B;
  Common C;
  Ctl *ctl;
};

int upload(Mem *m, const coop_batch *bt, const coop_batch_ctl *ctl, const Shape &s, const double *x,
           Batch *B) {
  coop_backend *be = m->be;
  int64_t *ro, *rp;
  int32_t *ci;
  double *v, *b;
  memset(B, 0, sizeof *B);
  COOP_CHECK(dalloc(m, &ro, s.count + 1));
  COOP_CHECK(dalloc(m, &rp, s.rows + 1));
  COOP_CHECK(dalloc(m, &ci, s.nnz));
  COOP_CHECK(dalloc(m, &v, s.nnz));
  COOP_CHECK(dalloc(m, &b, s.rows));
  COOP_CHECK(dalloc(m, &B->x, s.rows));
  COOP_CHECK(be->upload(be, ro, bt->row_off, (s.count + 1) * sizeof *ro));
  COOP_CHECK(be->upload(be, rp, bt->rowptr, (s.rows + 1) * sizeof *rp));
  COOP_CHECK(be->upload(be, ci, bt->colind, s.nnz * sizeof *ci));
  COOP_CHECK(be->upload(be, v, bt->val, s.nnz * sizeof *v));
  COOP_CHECK(be->upload(be, b, bt->b, s.rows * sizeof *b));
  COOP_CHECK(be->upload(be, B->x, x, s.rows * sizeof *x));
  B->count = s.count;
  B->row_off = ro;
  B->rowptr = rp;
  B->colind = ci;
  B->val = v;
  B->b = b;
  B->method = ctl->method;
  B->pc = ctl->pc;
  B->rtol = ctl->rtol;
  B->atol = ctl->atol;
  B->dtol = ctl->dtol;
  B->max_iter = ctl->max_iter;
  if (ctl->method != COOP_BATCH_HEAT) return 0;
  /* c = dt alpha rounded here once, as the host reference rounds it */
  double *c = (double *)malloc((size_t)s.count * sizeof *c), *dc = NULL;
  int64_t *ds = NULL;
  if (!c) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  for (long long i = 0; i < s.count; i++) c[i] = bt->dt[i] * ctl->alpha;
  int rc = dalloc(m, &dc, s.count);
  if (!rc) rc = dalloc(m, &ds, s.count);
  if (!rc) rc = be->upload(be, dc, c, s.count * sizeof *c);
  if (!rc) rc = be->upload(be, ds, bt->steps, s.count * sizeof *ds);
  free(c);
  B->c = dc;
  B->steps = ds;
  return rc;
}

/* Work vectors of the method, and the results, poisoned (NaN, -1) so a
 * problem never written shows up. */
int work_vectors(Mem *m, const Shape &s, cudaStream_t st, Batch *B) {
  const size_t n = (size_t)s.rows;
  if (B->method == COOP_BATCH_HEAT) {
    COOP_CHECK(dalloc(m, &B->xs, n));
  } else if (B->method == COOP_BATCH_JACOBI) {
    COOP_CHECK(dalloc(m, &B->xs, n));
    COOP_CHECK(dalloc(m, &B->d, n));
  } else {
    COOP_CHECK(dalloc(m, &B->r, n));
    COOP_CHECK(dalloc(m, &B->q, n));
    COOP_CHECK(dalloc(m, &B->p0, n));
    COOP_CHECK(dalloc(m, &B->p1, n));
    if (B->pc) COOP_CHECK(dalloc(m, &B->z, n));
    if (B->pc) COOP_CHECK(dalloc(m, &B->d, n));
  }
  const size_t c = (size_t)s.count;
  COOP_CHECK(dalloc(m, &B->res_it, c));
  COOP_CHECK(dalloc(m, &B->res_r0, c));
  COOP_CHECK(dalloc(m, &B->res_rn, c));
  COOP_CHECK(dalloc(m, &B->res_sec, c));
  COOP_CHECK(dalloc(m, &B->res_reason, c));
  COOP_CUDA(cudaMemsetAsync(B->res_it, 0xff, c * sizeof(int64_t), st));
  COOP_CUDA(cudaMemsetAsync(B->res_r0, 0xff, c * sizeof(double), st));
  COOP_CUDA(cudaMemsetAsync(B->res_rn, 0xff, c * sizeof(double), st));
  COOP_CUDA(cudaMemsetAsync(B->res_sec, 0xff, c * sizeof(double), st));
  /* -1: every coop_reason is positive, so launch_each takes a negative one for
   * a problem still running */
  COOP_CUDA(cudaMemsetAsync(B->res_reason, 0xff, c * sizeof(int), st));
  return 0;
}

int launch_groups(const Plan &pl, Batch &B, Common &C, cudaStream_t st) {
  void *args[] = {&B, &C};
  switch (pl.sync) {
  case COOP_BSYNC_BLOCK:
    COOP_CUDA(cudaLaunchKernel(pl.fn, dim3((unsigned)pl.groups), dim3(kThreads), args, 0, st));
    return 0;
  case COOP_BSYNC_ROW:
    COOP_CUDA(cudaLaunchKernel(pl.fn, dim3(pl.bpg, (unsigned)pl.groups), dim3(kThreads), args, 0, st));
    return 0;
  case COOP_BSYNC_GRID:
    COOP_CUDA(cudaLaunchCooperativeKernel(pl.fn, dim3(pl.bpg, (unsigned)pl.groups), dim3(kThreads), args, 0, st));
    return 0;
  default: {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = pl.bpg;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)(pl.groups * pl.bpg));
    cfg.blockDim = dim3(kThreads);
    cfg.stream = st;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    COOP_CUDA(cudaLaunchKernelExC(&cfg, pl.fn, args));
    return 0;
  }
  }
}

/* A software barrier that gave up is the run's failure, named. */
int check_fault(const Ctl &h, const Gpu &g, const Plan &pl) {
  const coop_bar::Fault &f = h.fault;
  if (!f.state) return 0;
  return COOP_ERROR(COOP_ERR_RUNTIME,
                    "batch on GPU %d: the row barrier of group %d gave up after %.1f s with %u of %u "
                    "blocks arrived (block %d waiting); %lld groups of %d blocks were launched as "
                    "resident: is another process sharing the GPU's SMs (MPS)?",
                    g.id, f.group, f.waited_s, f.arrived, f.expected, f.block, pl.groups, pl.bpg);
}

/* Device seconds of a solve's kernels: events recorded around them on the
 * stream, so allocations, uploads and downloads are left out. */
struct Span {
  cudaEvent_t a = nullptr, b = nullptr;
  ~Span() {
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
  }
};

int span_begin(Span &t, cudaStream_t st) {
  COOP_CUDA(cudaEventCreate(&t.a));
  COOP_CUDA(cudaEventCreate(&t.b));
  COOP_CUDA(cudaEventRecord(t.a, st));
  return 0;
}

int span_end(Span &t, cudaStream_t st, double *seconds) {
  COOP_CUDA(cudaEventRecord(t.b, st));
  COOP_CUDA(cudaEventSynchronize(t.b));
  float ms = 0.0f;
  COOP_CUDA(cudaEventElapsedTime(&ms, t.a, t.b));
  *seconds = 1e-3 * (double)ms;
  return 0;
}

/* The persistent kernel of the plan; barriers, busy and kernel times into opt. */
int run_groups(Mem *m, const Gpu &g, const Plan &pl, Batch &B, coop_batch_run *opt) {
  coop_backend *be = m->be;
  cudaStream_t st = (cudaStream_t)be->stream;
  Common C = {};
  const size_t blocks = (size_t)pl.groups * (size_t)pl.bpg;
  COOP_CHECK(dalloc(m, &C.ctl, 1));
  COOP_CHECK(dalloc(m, &C.busy, blocks));
  if (pl.sync == COOP_BSYNC_ROW || pl.sync == COOP_BSYNC_GRID)
    COOP_CHECK(dalloc(m, &C.part, (size_t)B.levels * blocks * 2 * kK));
  if (pl.sync == COOP_BSYNC_ROW) {
    long long groups = 0; /* of every level with a barrier that spans blocks */
    for (int l = 0; l < B.levels; l++) {
      B.lctr[l] = groups;
      if (B.lsize[l] > 1) groups += pl.groups * (pl.bpg / B.lsize[l]);
    }
    const size_t words = (size_t)coop_bar::counter_words(groups > 0 ? groups : 1);
    COOP_CHECK(dalloc(m, &C.ctr, words));
    COOP_CUDA(cudaMemsetAsync(C.ctr, 0, words * sizeof(unsigned), st)); /* once */
  }
  C.timeout_ns = kBarrierTimeoutNs;
  COOP_CUDA(cudaMemsetAsync(C.ctl, 0, sizeof(Ctl), st));
  /* NaN: a block that never ran (clc cancelled it) is left out of the mean */
  COOP_CUDA(cudaMemsetAsync(C.busy, 0xff, blocks * sizeof(double), st));
  Span span;
  COOP_CHECK(span_begin(span, st));
  COOP_CHECK(launch_groups(pl, B, C, st));
  COOP_CHECK(span_end(span, st, &opt->kernel_time));
  Ctl h;
  COOP_CHECK(be->download(be, &h, C.ctl, sizeof h));
  COOP_CHECK(check_fault(h, g, pl));
  double *busy = (double *)malloc(blocks * sizeof(double));
  if (!busy) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  const int rc = be->download(be, busy, C.busy, blocks * sizeof(double));
  double mx = 0.0, sum = 0.0;
  long long ran = 0;
  for (size_t i = 0; !rc && i < blocks; i++) {
    if (isnan(busy[i])) continue;
    mx = busy[i] > mx ? busy[i] : mx;
    sum += busy[i];
    ran++;
  }
  free(busy);
  COOP_CHECK(rc);
  opt->barriers = (int64_t)h.barriers;
  opt->busy_max = mx;
  opt->busy_mean = ran > 0 ? sum / (double)ran : 0.0;
  opt->groups_used = (int)(ran / pl.bpg); /* clc: the blocks (clusters) that ran, not those launched */
  return 0;
}

/* Launch mode's chunks: up to kThreads rows of one problem each (at least one
 * per problem, so an empty problem still gets its stop test). *first_out: the
 * host's copy of each problem's first chunk (count + 1), the caller frees it. */
int make_chunks(Mem *m, const coop_batch *bt, const Shape &s, Chunks *L, int64_t **first_out) {
  *first_out = NULL;
  long long n = 0;
  for (long long p = 0; p < s.count; p++) {
    const long long k = (bt->row_off[p + 1] - bt->row_off[p] + kThreads - 1) / kThreads;
    n += k > 0 ? k : 1;
  }
  if (n > 2147483647LL) return COOP_ERROR(COOP_ERR_RUNTIME, "batch: %lld row chunks for one launch", n);
  int64_t *prob = (int64_t *)malloc(n * sizeof *prob), *first = (int64_t *)malloc((s.count + 1) * sizeof *first);
  int32_t *row = (int32_t *)malloc(n * sizeof *row);
  int rc = prob && first && row ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  for (long long p = 0, c = 0; !rc && p < s.count; p++) {
    first[p] = c;
    const long long rows = bt->row_off[p + 1] - bt->row_off[p];
    for (long long r = 0; r == 0 || r < rows; r += kThreads, c++) {
      prob[c] = p;
      row[c] = (int32_t)r;
    }
    first[s.count] = c;
  }
  L->n = n;
  L->c0 = 0, L->p0 = 0, L->p1 = s.count;
  if (!rc) rc = dalloc(m, (int64_t **)&L->prob, n);
  if (!rc) rc = dalloc(m, (int32_t **)&L->row, n);
  if (!rc) rc = dalloc(m, (int64_t **)&L->first, s.count + 1);
  if (!rc) rc = m->be->upload(m->be, (void *)L->prob, prob, n * sizeof *prob);
  if (!rc) rc = m->be->upload(m->be, (void *)L->row, row, n * sizeof *row);
  if (!rc) rc = m->be->upload(m->be, (void *)L->first, first, (s.count + 1) * sizeof *first);
  free(prob);
  free(row);
  if (rc) free(first);
  else *first_out = first;
  return rc;
}

/* The chunks of problem p alone (launch_each). */
Chunks one_problem(const Chunks &L, const int64_t *first, long long p) {
  Chunks v = L;
  v.c0 = first[p];
  v.n = first[p + 1] - first[p];
  v.p0 = p, v.p1 = p + 1;
  return v;
}

/* One step of the method over view L's problems: its kernels. */
int launch_step(const Batch &B, const Chunks &L, cudaStream_t st, long long *kernels) {
  const unsigned nc = (unsigned)L.n, nw = (unsigned)(((L.p1 - L.p0) * 32 + kThreads - 1) / kThreads);
  if (B.method == COOP_BATCH_JACOBI) {
    lk_relax_sweep<false><<<nc, kThreads, 0, st>>>(B, L);
    lk_relax_end<false><<<nw, kThreads, 0, st>>>(B, L);
    *kernels += 2;
  } else if (B.method == COOP_BATCH_HEAT) {
    lk_relax_sweep<true><<<nc, kThreads, 0, st>>>(B, L);
    lk_relax_end<true><<<nw, kThreads, 0, st>>>(B, L);
    *kernels += 2;
  } else {
    lk_cg_direction<<<nc, kThreads, 0, st>>>(B, L);
    lk_cg_direction_end<<<nw, kThreads, 0, st>>>(B, L);
    lk_cg_update<<<nc, kThreads, 0, st>>>(B, L);
    lk_cg_update_end<<<nw, kThreads, 0, st>>>(B, L);
    *kernels += 4;
  }
  COOP_CUDA_LAUNCHED();
  return 0;
}

int cg_start_step(const Batch &B, const Chunks &L, cudaStream_t st, long long *kernels) {
  const unsigned nc = (unsigned)L.n, nw = (unsigned)(((L.p1 - L.p0) * 32 + kThreads - 1) / kThreads);
  lk_cg_start<<<nc, kThreads, 0, st>>>(B, L);
  lk_cg_start_end<<<nw, kThreads, 0, st>>>(B, L);
  *kernels += 2;
  COOP_CUDA_LAUNCHED();
  return 0;
}

/* launch: steps over every problem until the device's count of active
 * problems reads 0 (read every kLaunchCheck steps: a read costs a
 * synchronisation). */
int steps_all(const Batch &B, const Chunks &L, int count, cudaStream_t st, long long *kernels) {
  if (B.method == COOP_BATCH_CG) COOP_CHECK(cg_start_step(B, L, st, kernels));
  for (int active = count; active > 0;) {
    for (int k = 0; k < kLaunchCheck; k++) COOP_CHECK(launch_step(B, L, st, kernels));
    COOP_CUDA(cudaMemcpyAsync(&active, L.active, sizeof active, cudaMemcpyDeviceToHost, st));
    COOP_CUDA(cudaStreamSynchronize(st));
  }
  return 0;
}

int reasons_back(const Batch &B, int *reason, long long count, cudaStream_t st) {
  COOP_CUDA(cudaMemcpyAsync(reason, B.res_reason, (size_t)count * sizeof *reason, cudaMemcpyDeviceToHost, st));
  COOP_CUDA(cudaStreamSynchronize(st));
  return 0;
}

/* launch_each: each active problem's kernels in turn; every kLaunchCheck
 * steps the reasons come back and the problems that ended are dropped. */
int steps_each(const Batch &B, const Chunks &L, const int64_t *first, long long count, cudaStream_t st,
               long long *kernels) {
  int64_t *act = (int64_t *)malloc((size_t)count * sizeof *act);
  int *reason = (int *)malloc((size_t)count * sizeof *reason);
  int rc = act && reason ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  long long n = count;
  for (long long p = 0; p < count; p++) act[p] = p;
  for (long long i = 0; !rc && B.method == COOP_BATCH_CG && i < n; i++)
    rc = cg_start_step(B, one_problem(L, first, act[i]), st, kernels);
  while (!rc && n > 0) {
    for (int k = 0; !rc && k < kLaunchCheck; k++)
      for (long long i = 0; !rc && i < n; i++) rc = launch_step(B, one_problem(L, first, act[i]), st, kernels);
    if (!rc) rc = reasons_back(B, reason, count, st);
    long long kept = 0;
    for (long long i = 0; !rc && i < n; i++) /* poisoned (-1) until the problem ends */
      if (reason[act[i]] < 0) act[kept++] = act[i];
    n = kept;
  }
  free(act);
  free(reason);
  return rc;
}

int setup_launch(const Batch &B, const Chunks &L, long long count, cudaStream_t st) {
  lk_setup<<<(unsigned)((count + kThreads - 1) / kThreads), kThreads, 0, st>>>(B, L);
  COOP_CUDA_LAUNCHED();
  return 0;
}

/* Launch modes: kernels per step, over every problem at once (launch) or
 * problem by problem (launch_each). */
int run_launch(Mem *m, const coop_batch *bt, const Shape &s, Batch &B, bool each, coop_batch_run *opt) {
  cudaStream_t st = (cudaStream_t)m->be->stream;
  Chunks L = {};
  int64_t *first = NULL;
  COOP_CHECK(make_chunks(m, bt, s, &L, &first));
  int rc = dalloc(m, &L.part, (size_t)L.n * kK);
  if (!rc) rc = dalloc(m, &L.st, (size_t)s.count);
  if (!rc) rc = dalloc(m, &L.active, 1);
  const int count = (int)(s.count < 2147483647LL ? s.count : 2147483647LL);
  if (!rc) rc = m->be->upload(m->be, L.active, &count, sizeof count);
  long long kernels = 0;
  Span span;
  if (!rc) rc = span_begin(span, st);
  if (!rc) rc = setup_launch(B, L, s.count, st);
  if (!rc) rc = each ? steps_each(B, L, first, s.count, st, &kernels) : steps_all(B, L, count, st, &kernels);
  free(first);
  COOP_CHECK(rc);
  if (B.method == COOP_BATCH_JACOBI || B.method == COOP_BATCH_HEAT) {
    lk_jacobi_copy<<<(unsigned)L.n, kThreads, 0, st>>>(B, L);
    COOP_CUDA_LAUNCHED();
  }
  COOP_CHECK(span_end(span, st, &opt->kernel_time));
  opt->barriers = kernels;
  opt->busy_max = opt->busy_mean = 0.0;
  return 0;
}

int download(Mem *m, const Shape &s, const Batch &B, double *x, coop_batch_result *res) {
  coop_backend *be = m->be;
  const size_t c = (size_t)s.count;
  COOP_CHECK(be->download(be, x, B.x, (size_t)s.rows * sizeof *x));
  int64_t *it = (int64_t *)malloc(c * sizeof *it);
  double *r0 = (double *)malloc(c * sizeof *r0), *rn = (double *)malloc(c * sizeof *rn),
         *sec = (double *)malloc(c * sizeof *sec);
  int *reason = (int *)malloc(c * sizeof *reason);
  int rc = it && r0 && rn && sec && reason ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (!rc) rc = be->download(be, it, B.res_it, c * sizeof *it);
  if (!rc) rc = be->download(be, r0, B.res_r0, c * sizeof *r0);
  if (!rc) rc = be->download(be, rn, B.res_rn, c * sizeof *rn);
  if (!rc) rc = be->download(be, sec, B.res_sec, c * sizeof *sec);
  if (!rc) rc = be->download(be, reason, B.res_reason, c * sizeof *reason);
  for (size_t i = 0; !rc && i < c; i++) {
    res[i].iterations = it[i];
    res[i].r0 = r0[i];
    res[i].rnorm = rn[i];
    res[i].reason = reason[i];
    res[i].seconds = sec[i];
  }
  free(it);
  free(r0);
  free(rn);
  free(sec);
  free(reason);
  return rc;
}

/* The plan's order and levels into B. */
int upload_order(Mem *m, const Plan &pl, const Shape &s, Batch *B) {
  B->levels = pl.lv.levels;
  for (int l = 0; l < pl.lv.levels; l++) B->lsize[l] = pl.lv.size[l];
  for (int l = 0; l <= pl.lv.levels; l++) B->lstart[l] = pl.lv.start[l];
  B->order = NULL;
  if (!pl.upload_order || s.count <= 0) return 0;
  int64_t *d;
  COOP_CHECK(dalloc(m, &d, s.count));
  COOP_CHECK(m->be->upload(m->be, d, pl.order, (size_t)s.count * sizeof *d));
  B->order = d;
  return 0;
}

int solve(Mem *m, const Gpu &g, const Plan &pl, const coop_batch *bt, const coop_batch_ctl *ctl,
          const Shape &s, double *x, coop_batch_result *res, coop_batch_run *opt) {
  Batch B;
  COOP_CHECK(upload(m, bt, ctl, s, x, &B));
  COOP_CHECK(upload_order(m, pl, s, &B));
  COOP_CHECK(work_vectors(m, s, (cudaStream_t)m->be->stream, &B));
  if (pl.sync == COOP_BSYNC_LAUNCH || pl.sync == COOP_BSYNC_LAUNCH_EACH)
    COOP_CHECK(run_launch(m, bt, s, B, pl.sync == COOP_BSYNC_LAUNCH_EACH, opt));
  else
    COOP_CHECK(run_groups(m, g, pl, B, opt));
  return download(m, s, B, x, res);
}

}  // namespace

extern "C" int coop_batch_solve_cuda(coop_backend *be, const coop_batch *bt, const coop_batch_ctl *ctl,
                                     coop_batch_run *opt, double *x, coop_batch_result *res) {
  coop_batch_run dflt = {};
  if (!opt) opt = &dflt;
  Shape s = shape_of(bt);
  s.heat = ctl->method == COOP_BATCH_HEAT;
  COOP_CHECK(check_diagonal(bt, ctl));
  Gpu g;
  COOP_CHECK(gpu_of(be, &g));
  Plan pl;
  pl.order = (int64_t *)malloc((size_t)(s.count > 0 ? s.count : 1) * sizeof *pl.order);
  double *work = (double *)malloc((size_t)(s.count > 0 ? s.count : 1) * sizeof *work);
  if (!pl.order || !work) {
    free(pl.order);
    free(work);
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  }
  for (long long p = 0; p < s.count; p++) work[p] = coop_batch_work(bt, ctl, p);
  s.ragged = coop_batch_is_ragged(work, s.count) != 0;
  free(work);
  int rc = make_plan(g, s, bt, ctl, opt, &pl);
  if (!rc) {
    opt->sync_used = pl.sync;
    opt->schedule_used = pl.sched;
    opt->group_blocks_used = pl.bpg;
    opt->groups_used = (int)pl.groups;
    opt->levels_used = pl.sync == COOP_BSYNC_ROW ? pl.lv.levels : 1;
    opt->barriers = 0;
    opt->busy_max = opt->busy_mean = 0.0;
    opt->kernel_time = 0.0;
  }
  if (!rc && s.count > 0) {
    Mem m = {};
    m.be = be;
    rc = solve(&m, g, pl, bt, ctl, s, x, res, opt);
    mem_free(&m);
  }
  free(pl.order);
  return rc;
}

extern "C" int coop_batch_check_run_cuda(coop_backend *be, const coop_batch_run *opt) {
  Gpu g;
  COOP_CHECK(gpu_of(be, &g));
  return gpu_refusal(g, opt->sync, opt->schedule);
}
