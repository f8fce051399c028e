/* Persistent cooperative kernels of the relaxation driver: n steps with one
 * grid barrier per step, and the whole Jacobi solve with the residual summed
 * inside the norm steps and reduced by the same barrier (no extra pass, no
 * extra barrier). Device code of a step: kernels/stencil_relax.cuh.
 *
 * Barrier: cooperative groups grid.sync(). All blocks are resident because
 * the launch is cudaLaunchCooperativeKernel with at most occupancy x SMs
 * blocks, which the runtime refuses otherwise (it never starts a grid that
 * could hang). Every block takes the stop decision from the same sum after the
 * same barrier, so all leave the loop together. */
#include <cooperative_groups.h>
#include <math.h>

#include "kernels/barrier.cuh" /* globaltimer */
#include "kernels/cuda_check.cuh"
#include "kernels/stencil_pair.cuh"
#include "kernels/stencil_relax.cuh"
#include "solvers/relax/relax_cuda.h"
#include "solvers/relax/relax_solve.cuh"

namespace cg = cooperative_groups;

#ifndef COOP_PAIR_BLOCKS /* blocks a SM the two-sweep kernels are built for */
#define COOP_PAIR_BLOCKS COOP_RELAX2_BLOCKS
#endif

namespace {

/* The regions of a block of steps, passed by value: a __grid_constant__
 * parameter is read in place from the constant bank (uniform loads), where a
 * list in global memory was loaded into the threads' registers each step and
 * left the march fewer registers for rows in flight. */
struct RelaxSteps {
  RelaxGeom g[COOP_MAX_SWEEPS_PER_EXCHANGE];
  int k;
};

template <typename T, int DIM, bool HAS_F>
__global__ void RELAX_BOUNDS steps_kernel(RelaxPar P, const __grid_constant__ RelaxSteps S,
                                          long long n, T *u, T *un, const T *__restrict__ f) {
  cg::grid_group grid = cg::this_grid();
  const unsigned t0 = blockIdx.x * RELAX_THREADS + threadIdx.x, ts = gridDim.x * RELAX_THREADS;
  for (long long s = 0; s < n; s++) {
    const RelaxGeom &G = S.g[s < S.k ? s : S.k - 1];
    relax_range<T, DIM, HAS_F, false, unsigned, false, true>(P, G, u, un, f, t0, ts);
    if (s + 1 < n) grid.sync();
    T *t = u;
    u = un;
    un = t;
  }
}

/* n steps of a 2D box with neighbours, two sweeps a pass where two steps
 * follow (relax_pair_ring over the first one's region). The pass takes the
 * layer beyond its region as fixed: there it holds u_k from the exchange
 * (the region reaches at most g - 1 layers into the ghosts), so u_{k+1} is
 * wrong only beyond the region and u_{k+2} only on the region's outer
 * layer, which the next step's region (one layer less at each face with a
 * neighbour) never reads. So step s's region, s + 1's result: n <= S.k, a
 * region a step. One grid barrier a pass; an odd last step sweeps once. */
template <typename T, bool HAS_F>
__global__ void __launch_bounds__(RELAX_THREADS, COOP_PAIR_BLOCKS)
    steps_pair_kernel(RelaxPar P, const __grid_constant__ RelaxSteps S, long long n, T *u, T *un,
                      const T *__restrict__ f) {
  cg::grid_group grid = cg::this_grid();
  const unsigned t0 = blockIdx.x * RELAX_THREADS + threadIdx.x, ts = gridDim.x * RELAX_THREADS;
  for (long long s = 0; s < n;) {
    const RelaxGeom &G = S.g[s < S.k ? s : S.k - 1];
    if (s + 1 < n) {
      double p0 = 0.0, p1 = 0.0;
      relax_pair_ring<T, HAS_F, false>(P, G, u, un, f, t0, ts, TaskQueue{nullptr, 0}, p0, p1);
      s += 2;
    } else {
      relax_range<T, 2, HAS_F, false, unsigned, false, true>(P, G, u, un, f, t0, ts);
      s += 1;
    }
    if (s < n) grid.sync();
    T *t = u;
    u = un;
    un = t;
  }
}

/* ---- the multi-rank solve: every rank's GPU on one node, no host step ----
 * Each step, every block stores the new values of the owned layer at each
 * face straight into the neighbour's ghost layer (PeerFwd, CUDA IPC memory
 * over NVLink), then arrives at a barrier whose last stage is a handshake of
 * block 0 with every rank's block 0 through mailboxes in peer memory: the
 * step number and this rank's residual sum. All ranks add the sums in rank
 * order, so they take the same stop decision at the same step.
 *
 * Why the ghosts can be overwritten: step S + 1 stores into the fields the
 * neighbour read in step S, and a rank passes step S's handshake only after
 * every rank's blocks have all finished step S. The sums alternate between
 * two slots for the same reason (a slot is rewritten two steps later). */
struct Mbox { /* one sender's mailbox at one receiver: one L2 line */
  unsigned long long seq; /* the last step whose sum is in part[] */
  double part[2];         /* by step parity */
  unsigned long long pad[13];
};
static_assert(sizeof(Mbox) == 128, "mailbox line");
constexpr unsigned long long kAbortGen = ~0ULL;

struct PeerLoop {
  PeerFwd fwd;
  Mbox *box[COOP_RELAX_MAX_RANKS]; /* rank r's mailboxes (indexed by sender), mapped here */
  int nranks, me;
  unsigned long long *ctr; /* this GPU's arrivals, never reset within a solve */
  unsigned long long *gen; /* the step every block may pass (kAbortGen: leave) */
  double *res;             /* the step's summed residual, from block 0 */
  long long *fault;        /* [0] 1 when a wait gave up, [1] the rank waited for, [2] the step */
  unsigned long long timeout_ns;
};

__device__ __forceinline__ void red_relaxed_gpu(unsigned long long *p, unsigned long long v) {
  asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed_sys64(unsigned long long *p, unsigned long long v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
using coop_bar::ld_acquire_gpu64;
__device__ __forceinline__ unsigned long long ld_acquire_sys64(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release_gpu64(unsigned long long *p, unsigned long long v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* The end of step S (1, 2, ...) on every rank: false when a wait gave up
 * (every block leaves). With norm, *s_sum gets the residual sum over all
 * ranks of the slot acc. fwd: this thread stored to a neighbour's ghosts.
 * Every thread calls it. */
__device__ bool peer_sync(const PeerLoop &L, unsigned long long S, bool norm, const double *acc,
                          double *s_sum, int *s_ok, bool fwd) {
  const bool sys = __syncthreads_or(fwd);
  if (threadIdx.x == 0) {
    /* the block's stores, seen through the block barrier, ordered before its
     * arrival: one fence, then a relaxed arrival (a fence and a strong write
     * make the release pattern; a release arrival would fence a second
     * time). System scope only in blocks that stored to a neighbour's
     * memory: the others wrote this GPU's memory alone, which only this
     * GPU's blocks read, after block 0's acquire of their arrivals; their
     * reads (of ghosts the neighbour overwrites next step) are complete
     * before the fence either way. */
    if (sys)
      __threadfence_system();
    else
      __threadfence();
    red_relaxed_gpu(L.ctr, 1ULL);
    bool ok = true;
    if (blockIdx.x == 0) {
      const unsigned long long want = S * gridDim.x;
      while (ld_acquire_gpu64(L.ctr) < want) {
      }
      const double local = norm ? *(volatile const double *)acc : 0.0;
      const int par = (int)(S & 1ULL);
      for (int r = 0; r < L.nranks; r++) *(volatile double *)&L.box[r][L.me].part[par] = local;
      /* every block's stores of this step, and the sums, before the step
       * numbers: one fence for all mailboxes (a release store to each would
       * fence once per rank) */
      __threadfence_system();
      for (int r = 0; r < L.nranks; r++) st_relaxed_sys64(&L.box[r][L.me].seq, S);
      const unsigned long long t0 = coop_bar::globaltimer();
      double tot = 0.0;
      for (int r = 0; r < L.nranks && ok; r++) {
        const Mbox *b = &L.box[L.me][r];
        for (unsigned n = 1; ld_acquire_sys64(&b->seq) < S; n++)
          if ((n & 255) == 0 && coop_bar::globaltimer() - t0 > L.timeout_ns) {
            L.fault[1] = r;
            L.fault[2] = (long long)S;
            L.fault[0] = 1;
            ok = false;
            break;
          }
        if (ok) tot += *(volatile const double *)&b->part[par];
      }
      *(volatile double *)L.res = tot;
      st_release_gpu64(L.gen, ok ? S : kAbortGen);
    } else {
      unsigned long long g;
      while ((g = ld_acquire_gpu64(L.gen)) < S) {
      }
      ok = g != kAbortGen;
    }
    *s_ok = ok;
    if (ok) *s_sum = *(volatile const double *)L.res;
  }
  __syncthreads();
  return *s_ok != 0;
}

/* The multi-rank whole solve sweeps with the thread march (relax_range, for
 * peer_forward) and keeps 4 blocks a SM, the bound it was measured at on two
 * GPUs: the 2D kernels' 3 is untried there and was slower for that march. */
constexpr int solve_min_blocks(int dim, bool peers) {
  return dim == 3 ? COOP_RELAX3_BLOCKS : peers ? 4 : COOP_RELAX2_BLOCKS;
}

/* The whole Jacobi solve. PEERS: one rank of several, each on its own GPU
 * of one node (PeerLoop); else a rank alone, grid.sync() between steps. */
template <typename T, int DIM, bool HAS_F, bool PEERS>
__global__ void __launch_bounds__(RELAX_THREADS, solve_min_blocks(DIM, PEERS))
    solve_kernel(RelaxPar P, RelaxGeom G, T *u, T *un, const T *__restrict__ f, SolveArgs a,
                 coop_relax_solve_state *st, long long *hi, double *hr, const __grid_constant__ PeerLoop L) {
  const unsigned t0 = blockIdx.x * RELAX_THREADS + threadIdx.x, ts = gridDim.x * RELAX_THREADS;
  const bool lead = blockIdx.x == 0 && threadIdx.x == 0;
  __shared__ double s_sum;
  __shared__ int s_ok;
  long long it = 0, c = 0, steps = 0;
  double r0 = 0.0, rn = 0.0;
  int reason = 0, par = 0; /* par: which of the neighbours' fields pairs with u */
  bool fwd = false;        /* this thread's tasks store to a neighbour (the same every step) */
  /* the barrier at the end of a step; with PEERS it also brings the sum */
  auto barrier = [&](bool norm) -> bool {
    steps++;
    if (PEERS) return peer_sync(L, (unsigned long long)steps, norm, &st->acc[c % 3], &s_sum, &s_ok, fwd);
    cg::this_grid().sync();
    if (norm) { /* one load of the sum per block, shared through shared memory: with
                 * every warp loading it, 8 x the blocks requests queued on one L2 line */
      if (threadIdx.x == 0) s_sum = *(volatile double *)&st->acc[c % 3];
      __syncthreads();
    }
    return true;
  };
  for (;;) {
    /* norm step at check c: its sum goes to acc[c % 3]; the slot the next
     * check uses was last read before the previous barrier, so clear it now */
    /* the sweep's tasks from the queue (TaskQueue), sweep `steps` */
    auto queue = [&]() { return TaskQueue{&st->tasks, (unsigned long long)steps * queue_tickets(G, DIM, gridDim.x)}; };
    const double part = relax_range<T, DIM, HAS_F, true, unsigned, PEERS, true>(P, G, u, un, f, t0, ts, &L.fwd,
                                                                                par ^ 1, &fwd, queue());
    if (lead) st->acc[(c + 1) % 3] = 0.0;
    block_sum_add(part, &st->acc[c % 3]);
    if (!barrier(true)) return; /* the host reads the fault record */
    reason = solve_check(s_sum, it, c, r0, rn, a, lead, st, hi, hr);
    c++;
    if (reason) break; /* u is the iterate whose residual was measured */
    T *t = u;
    u = un;
    un = t;
    par ^= 1;
    it++;
    const long long next = min(it - 1 + a.check_every, a.max_iter);
    for (; it < next; it++) {
      relax_range<T, DIM, HAS_F, false, unsigned, PEERS, true>(P, G, u, un, f, t0, ts, &L.fwd, par ^ 1, &fwd, queue());
      if (!barrier(false)) return;
      t = u;
      u = un;
      un = t;
      par ^= 1;
    }
  }
  if (lead) solve_finish(st, r0, rn, it, steps, reason);
}

/* The whole solve of a box of a rank alone, two sweeps a pass
 * (relax_pair_ring in 2D, relax_pair_ring3 in 3D; tune.fuse_sweeps = 2): one grid barrier and one read and
 * write of the field for two sweeps. A pass from u_k writes u_{k+2} to the
 * other field and sums the residuals of u_k and u_{k+1} into their own slots
 * (acc[2 * (pass % 3) + 0 or 1]; a pair of slots is cleared two passes after
 * it was read, as solve_kernel's). After the barrier the checks run in order:
 * a stop at u_k leaves it in u, a stop at u_{k+1} takes one plain sweep from
 * u. The field holding the answer is not the iterations' parity after an odd
 * number of passes: st->flip says so. */
/* 3D: 2 blocks a SM (128 registers): at 3 (80) the march spilled in its
 * plane loop and swept slower (measured: see bench/results/) */
#ifndef COOP_PAIR3_BLOCKS
#define COOP_PAIR3_BLOCKS 2
#endif
template <typename T, int DIM, bool HAS_F>
__global__ void __launch_bounds__(RELAX_THREADS, DIM == 3 ? COOP_PAIR3_BLOCKS : COOP_PAIR_BLOCKS)
    solve_pair_kernel(RelaxPar P, RelaxGeom G, T *u, T *un, const T *__restrict__ f, SolveArgs a,
                      coop_relax_solve_state *st, long long *hi, double *hr) {
  const unsigned t0 = blockIdx.x * RELAX_THREADS + threadIdx.x, ts = gridDim.x * RELAX_THREADS;
  const bool lead = blockIdx.x == 0 && threadIdx.x == 0;
  T *const u_in = u;
  __shared__ double s_sum[2];
  long long it = 0, c = 0, passes = 0, sweeps = 0;
  double r0 = 0.0, rn = 0.0;
  int reason = 0;
  /* 3D: the pass's block tasks (pbtasks) and one past the end a block */
  const unsigned long long tickets =
      DIM == 3 ? (unsigned long long)G.pbtasks + gridDim.x : queue_tickets(G, 2, gridDim.x);
  auto queue = [&]() { return TaskQueue{&st->tasks, (unsigned long long)passes * tickets}; };
  /* one pass: 2D warp tasks, 3D block tasks */
  auto pass = [&](auto norm_t, double &p0, double &p1) {
    constexpr bool NORM = decltype(norm_t)::value;
    if constexpr (DIM == 3)
      relax_pair_ring3<T, HAS_F, NORM>(P, G, u, un, f, blockIdx.x, gridDim.x, queue(), p0, p1);
    else
      relax_pair_ring<T, HAS_F, NORM>(P, G, u, un, f, t0, ts, queue(), p0, p1);
  };
  auto is_check = [&](long long k) { return k % a.check_every == 0 || k >= a.max_iter; };
  for (;;) {
    const bool c0 = is_check(it), c1 = it < a.max_iter && is_check(it + 1);
    double *acc = &st->acc[2 * (passes % 3)];
    if (c0 || c1) {
      double p0 = 0.0, p1 = 0.0;
      pass(std::true_type(), p0, p1);
      if (c0) block_sum_add(p0, &acc[0]);
      if (c1) block_sum_add(p1, &acc[1]);
    } else {
      double p0, p1;
      pass(std::false_type(), p0, p1);
    }
    if (lead) {
      double *next = &st->acc[2 * ((passes + 1) % 3)];
      next[0] = 0.0;
      next[1] = 0.0;
    }
    cg::this_grid().sync();
    passes++;
    sweeps += 2;
    if (c0 || c1) {
      if (threadIdx.x < 2) s_sum[threadIdx.x] = *(volatile double *)&acc[threadIdx.x];
      __syncthreads();
    }
    if (c0) {
      reason = solve_check(s_sum[0], it, c, r0, rn, a, lead, st, hi, hr);
      c++;
      if (reason) break; /* u_k, in u */
    }
    if (c1) {
      reason = solve_check(s_sum[1], it + 1, c, r0, rn, a, lead, st, hi, hr);
      c++;
      if (reason) { /* u_{k+1}: one sweep from u_k into un */
        if constexpr (DIM == 3)
          relax_range_ring3<T, HAS_F, false, unsigned>(P, G, u, un, f, blockIdx.x, gridDim.x, queue(),
                                                       pair3_smem<T>().one);
        else
          relax_range<T, 2, HAS_F, false, unsigned, false, true>(P, G, u, un, f, t0, ts, nullptr, 0, nullptr,
                                                                 queue());
        cg::this_grid().sync();
        passes++;
        sweeps++;
        it++;
        u = un;
        break;
      }
    }
    T *t = u;
    u = un;
    un = t;
    it += 2;
  }
  if (lead) {
    solve_finish(st, r0, rn, it, sweeps, reason);
    st->flip = (int)((u != u_in) ^ (it & 1));
  }
}

template <typename T, int DIM>
void *steps_fn(bool has_f) {
  return has_f ? (void *)steps_kernel<T, DIM, true> : (void *)steps_kernel<T, DIM, false>;
}
template <typename T>
void *steps_pair_fn(bool has_f) {
  return has_f ? (void *)steps_pair_kernel<T, true> : (void *)steps_pair_kernel<T, false>;
}
template <typename T, int DIM>
void *pair_fn(bool has_f) {
  return has_f ? (void *)solve_pair_kernel<T, DIM, true> : (void *)solve_pair_kernel<T, DIM, false>;
}
template <typename T, int DIM, bool PEERS>
void *solve_fn(bool has_f) {
  return has_f ? (void *)solve_kernel<T, DIM, true, PEERS> : (void *)solve_kernel<T, DIM, false, PEERS>;
}
template <bool PEERS>
void *solve_pick(bool f32, bool d3, bool has_f) {
  return f32 ? (d3 ? solve_fn<float, 3, PEERS>(has_f) : solve_fn<float, 2, PEERS>(has_f))
             : (d3 ? solve_fn<double, 3, PEERS>(has_f) : solve_fn<double, 2, PEERS>(has_f));
}

/* solve: 0 the n-step kernel, 1 the whole solve of a rank alone, 2 the
 * whole solve of ranks on one node, 3 that of a 2D box of a rank alone, two
 * sweeps a pass, 4 the n-step kernel of a 2D box, two sweeps a pass */
void *pick_kernel(const coop_stencil *s, bool has_f, int solve) {
  const bool f32 = s->grid.prec == COOP_FP32, d3 = s->grid.ndim == 3;
  if (solve == 4) return f32 ? steps_pair_fn<float>(has_f) : steps_pair_fn<double>(has_f);
  if (solve == 3)
    return f32 ? (d3 ? pair_fn<float, 3>(has_f) : pair_fn<float, 2>(has_f))
               : (d3 ? pair_fn<double, 3>(has_f) : pair_fn<double, 2>(has_f));
  if (solve == 2) return solve_pick<true>(f32, d3, has_f);
  if (solve) return solve_pick<false>(f32, d3, has_f);
  return f32 ? (d3 ? steps_fn<float, 3>(has_f) : steps_fn<float, 2>(has_f))
             : (d3 ? steps_fn<double, 3>(has_f) : steps_fn<double, 2>(has_f));
}


}  // namespace

extern "C" int coop_relax_threads_cuda(void) { return RELAX_THREADS; }

extern "C" int coop_relax_blocks_per_sm_cuda(int ndim) { return relax_blocks_per_sm(ndim); }

/* Rows a thread marches, at least, before the grid is cut down: on a small
 * grid the full resident grid gives each thread 1-2 rows, loads four rows
 * for two (the rows beside a strip are read by its neighbours too) and pays
 * the barrier over every block; 4 rows a thread beat 2 and 8 (measured: see
 * bench/results/). */
constexpr int kMinRowsPerThread = 4;

extern "C" int coop_relax_fit_blocks_cuda(const coop_stencil *s, int most, int sms) {
  const coop_region own = coop_region_owned(&s->grid);
  RelaxGeom G;
  if (relax_geom_try(s, &own, (long long)most * RELAX_THREADS, &G) || G.tasks == 0 ||
      (s->grid.ndim == 3 ? G.rz : G.ry) >= kMinRowsPerThread)
    return most;
  const long long strips = (G.mn + kMinRowsPerThread - 1) / kMinRowsPerThread;
  /* 2D: warps of 32 chunks (relax_range_ring); 3D: blocks of a tile
   * (relax_range_ring3) */
  const long long threads = s->grid.ndim == 2 ? (G.nch + 31LL) / 32 * 32 * strips
                                              : (long long)G.tx * G.ty * strips * RELAX_THREADS;
  long long b = (threads + RELAX_THREADS - 1) / RELAX_THREADS;
  if (b < sms) b = sms;
  return b < most ? (int)b : most;
}

extern "C" int coop_relax_occupancy_cuda(const coop_stencil *s, int has_f, int solve, int *per_sm) {
  COOP_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, pick_kernel(s, has_f, solve),
                                                          RELAX_THREADS, 0));
  return 0;
}

extern "C" int coop_relax_steps_grid_cuda(const coop_stencil *s, const coop_region *regions, int k,
                                          long long n, double c, void *u, void *unew,
                                          const void *f, int blocks, int pair, void *stream) {
  if (k < 1 || k > COOP_MAX_SWEEPS_PER_EXCHANGE || n < 1)
    return COOP_ERROR(COOP_ERR_RUNTIME, "%d regions for %lld steps; 1 to %d supported", k, n,
                      COOP_MAX_SWEEPS_PER_EXCHANGE);
  if (pair && (s->grid.ndim != 2 || n > k))
    return COOP_ERROR(COOP_ERR_RUNTIME, "two sweeps a pass between exchanges: 2D, a region a step (%d "
                      "dimensions, %d regions for %lld steps)", s->grid.ndim, k, n);
  RelaxPar P = make_relax_par(s, c);
  RelaxSteps S = {};
  S.k = k;
  const long long target = (long long)blocks * RELAX_THREADS;
  for (int i = 0; i < k; i++) {
    COOP_CHECK(make_relax_geom(s, &regions[i], target, &S.g[i]));
    if (s->grid.ndim == 2) ring2_long_tasks(&S.g[i]); /* tasks dealt in turn here */
  }
  void *args[] = {&P, &S, &n, &u, &unew, (void *)&f};
  COOP_CUDA(cudaLaunchCooperativeKernel(pick_kernel(s, f != NULL, pair ? 4 : 0), dim3(blocks),
                                        dim3(RELAX_THREADS), args, 0, (cudaStream_t)stream));
  return 0;
}

/* The launch of the whole-solve kernels; peers NULL: a rank alone. */
static int launch_solve(const coop_stencil *s, double c, void *u, void *unew, const void *f,
                        const coop_solve_ctl *ctl, coop_relax_solve_state *state,
                        long long *hist_iter, double *hist_res, long long hist_cap, int blocks,
                        void *stream, const coop_relax_peers *peers, bool pair) {
  if (pair && peers) return COOP_ERROR(COOP_ERR_RUNTIME, "two sweeps a pass: a box of a rank alone only");
  RelaxPar P = make_relax_par(s, c);
  SolveArgs a = {ctl->max_iter, ctl->check_every, hist_cap, ctl->rtol, ctl->atol, ctl->dtol};
  COOP_CUDA(cudaMemsetAsync(state, 0, sizeof *state, (cudaStream_t)stream));
  const coop_region own = coop_region_owned(&s->grid);
  RelaxGeom G;
  COOP_CHECK(make_relax_geom(s, &own, (long long)blocks * RELAX_THREADS, &G));
  if (pair && s->grid.ndim == 3 && ring3_pair_plan(&G, blocks, 16 / (int)coop_prec_size(s->grid.prec)))
    return COOP_ERROR(COOP_ERR_RUNTIME, "a box of %lld x %lld x %lld points has too many two-sweep tasks for "
                      "32-bit task numbers: use more ranks",
                      (long long)s->grid.n[0], (long long)s->grid.n[1], (long long)s->grid.n[2]);
  PeerLoop L = {};
  if (peers) {
    if (peers->nf > kMaxPeerFaces || peers->nranks > COOP_RELAX_MAX_RANKS || peers->nranks < 1)
      return COOP_ERROR(COOP_ERR_RUNTIME, "%d faces, %d ranks: at most %d and %d", peers->nf,
                        peers->nranks, kMaxPeerFaces, COOP_RELAX_MAX_RANKS);
    L.fwd.nf = peers->nf;
    for (int i = 0; i < peers->nf; i++) {
      const coop_relax_peer_face *q = &peers->face[i];
      PeerFace &F = L.fwd.f[i];
      /* buf[p] pairs with this rank's field p of (u, unew) as passed now */
      F.buf[0] = q->buf[peers->parity];
      F.buf[1] = q->buf[peers->parity ^ 1];
      F.sy = q->sy;
      F.sz = q->sz;
      F.axis = q->axis;
      F.side = q->side;
      F.gc = q->gc;
    }
    for (int r = 0; r < peers->nranks; r++) L.box[r] = (Mbox *)peers->box[r];
    L.nranks = peers->nranks;
    L.me = peers->me;
    unsigned long long *w = (unsigned long long *)peers->sync; /* four 128-byte lines */
    COOP_CUDA(cudaMemsetAsync(w, 0, COOP_RELAX_PEER_SYNC_BYTES, (cudaStream_t)stream));
    L.ctr = w;
    L.gen = w + 16;
    L.res = (double *)(w + 32);
    L.fault = (long long *)(w + 48);
    L.timeout_ns = (unsigned long long)(peers->timeout_s * 1e9);
  }
  void *args[] = {&P, &G, &u, &unew, (void *)&f, &a, &state, &hist_iter, &hist_res, &L};
  /* the two-sweep kernel takes all but L */
  COOP_CUDA(cudaLaunchCooperativeKernel(pick_kernel(s, f != NULL, peers ? 2 : pair ? 3 : 1), dim3(blocks),
                                        dim3(RELAX_THREADS), args, 0, (cudaStream_t)stream));
  return 0;
}

extern "C" int coop_relax_solve_grid_cuda(const coop_stencil *s, double c, void *u, void *unew,
                                          const void *f, const coop_solve_ctl *ctl,
                                          coop_relax_solve_state *state, long long *hist_iter,
                                          double *hist_res, long long hist_cap, int blocks, int pair,
                                          void *stream) {
  return launch_solve(s, c, u, unew, f, ctl, state, hist_iter, hist_res, hist_cap, blocks, stream, NULL,
                      pair != 0);
}

extern "C" int coop_relax_solve_peers_cuda(const coop_stencil *s, double c, void *u, void *unew,
                                           const void *f, const coop_solve_ctl *ctl,
                                           coop_relax_solve_state *state, long long *hist_iter,
                                           double *hist_res, long long hist_cap, int blocks,
                                           void *stream, const coop_relax_peers *peers) {
  return launch_solve(s, c, u, unew, f, ctl, state, hist_iter, hist_res, hist_cap, blocks, stream, peers, false);
}

extern "C" int coop_relax_peers_fault_cuda(const coop_relax_peers *peers, long long out[3]) {
  const long long *w = (const long long *)peers->sync + 48;
  COOP_CUDA(cudaMemcpy(out, w, 3 * sizeof(long long), cudaMemcpyDeviceToHost));
  return 0;
}

extern "C" int coop_cuda_graph_begin(void *stream) {
  COOP_CUDA(cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeThreadLocal));
  return 0;
}

extern "C" int coop_cuda_graph_end(void *stream, void **exec) {
  cudaGraph_t g = NULL;
  cudaGraphExec_t e = NULL;
  *exec = NULL;
  COOP_CUDA(cudaStreamEndCapture((cudaStream_t)stream, &g));
  const cudaError_t rc = cudaGraphInstantiate(&e, g, 0);
  cudaGraphDestroy(g);
  COOP_CUDA(rc);
  *exec = e;
  return 0;
}

extern "C" int coop_cuda_graph_launch(void *exec, void *stream) {
  COOP_CUDA(cudaGraphLaunch((cudaGraphExec_t)exec, (cudaStream_t)stream));
  return 0;
}

extern "C" void coop_cuda_graph_destroy(void *exec) {
  if (exec) cudaGraphExecDestroy((cudaGraphExec_t)exec);
}
