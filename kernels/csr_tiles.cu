/* The CSR product with row tiles as work items (fp64), for matrices whose
 * rows differ wildly in length: a tile is a run of consecutive rows
 * (kernels/csr_tiles.cuh sizes it), and blocks of kThreads threads take tiles
 * from a scheduler of kernels/sched.cuh:
 *
 *   static  a persistent grid (occupancy x SMs blocks, no more than tiles);
 *           block g takes tiles g, g + G, ...
 *   atomic  the same grid; the next tile from a device counter. The counter
 *           is never reset: a launch takes exactly tiles + blocks values
 *           (coop_tile_atomic_takes), so the host knows where the next one
 *           starts and no memset sits between two products.
 *   clc     one block per tile; a block that finishes cancels one not yet
 *           started and takes its tile (cluster launch control, cc >= 10.0;
 *           the launcher refuses it on older GPUs and on code JIT-compiled
 *           from PTX older than compute_100, where the path is compiled out).
 * No kernel here synchronises across blocks, so no residency rule applies.
 *
 * Inside a tile a group of `lanes` threads (csr_tiles.cuh: about half the mean
 * row length) takes a row: its lanes stride the row's nonzeros and add their
 * partial sums in a fixed shuffle tree. Rows too long for a group are taken
 * by a whole warp (its 32 lanes stride, then the tree): a row of 10^4 entries
 * is 313 strides of one warp. Either way a row's sum has an order that
 * depends on the matrix only, not on the tile or the block that does it, so
 * the three schedules give the same bits (no floating-point atomics). */
#include <stdint.h>
#include <stdlib.h>

#include "kernels/csr.h"
#include "kernels/barrier.cuh" /* globaltimer */
#include "kernels/csr_tiles.cuh"
#include "kernels/cuda_check.cuh"
#include "kernels/sched.cuh"

namespace {

constexpr int kThreads = COOP_TILE_THREADS;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFull = 0xffffffffu;
/* Blocks an SM must hold: with 5, ptxas 13.0 gives the kernels 37 to 48
 * registers and no spills on sm_90 and sm_100; __launch_bounds__ without it
 * capped them at 32 registers and spilled up to 44 bytes. */
constexpr int kMinBlocks = 5;

struct Mat {
  long long nrows;
  const int64_t *__restrict__ rp;
  const int32_t *__restrict__ ci;
  const double *__restrict__ v;
  const int32_t *__restrict__ rows;
};

/* What a launch needs besides the matrix. */
struct Launch {
  long long tile_rows, tiles;
  unsigned long long *counter; /* atomic */
  long long base;              /* atomic: the counter's value at this launch's start */
  double *busy;                /* NULL, or seconds per SM, added to */
};

struct Shared {
  long long bc[2];
  coop_sched::ClcShared clc;
};

/* The group of the schedulers: one block. bcast alternates two slots, so one
 * __syncthreads() per tile suffices: a slot is rewritten two broadcasts later,
 * after every thread has passed the barrier between. */
struct BlockG {
  Shared &sh;
  int slot = 0;
  __device__ explicit BlockG(Shared &s) : sh(s) {}
  __device__ long long index() const { return blockIdx.x; }
  __device__ long long groups() const { return gridDim.x; }
  __device__ int size() const { return 1; }
  __device__ bool leader() const { return threadIdx.x == 0; }
  __device__ bool bcast(long long &v) {
    if (leader()) sh.bc[slot] = v;
    __syncthreads();
    v = sh.bc[slot];
    slot ^= 1;
    return true;
  }
};

/* sched.cuh's Atomic, counting from this launch's base. */
struct AtomicFrom {
  coop_sched::Atomic a;
  long long base;
  template <class G> __device__ long long first(G &g) { return a.first(g) - base; }
  template <class G> __device__ long long next(G &g) { return a.next(g) - base; }
};

template <class S> __device__ S make_sched(const Launch &L, Shared &sh);
template <> __device__ coop_sched::Static make_sched(const Launch &, Shared &) { return coop_sched::Static{}; }
template <> __device__ AtomicFrom make_sched(const Launch &L, Shared &) {
  return AtomicFrom{coop_sched::Atomic{L.counter}, L.base};
}
template <> __device__ coop_sched::Clc<false> make_sched(const Launch &, Shared &sh) {
  coop_sched::Clc<false> s;
  s.sh = &sh.clc;
  s.init();
  return s;
}

__device__ __forceinline__ void put(const Mat &A, double *y, long long r, double s, int add) {
  const long long q = A.rows ? (long long)__ldg(A.rows + r) : r;
  y[q] = add ? y[q] + s : s;
}

/* Rows [r0, r1): groups of LANES threads take the ordinary rows, then warps
 * the long ones, dealt by 32-row chunks. Every loop is uniform over a warp
 * (rows it skips add nothing), so the shuffles see all lanes. No shared
 * memory and no barrier: a block's warps may be in different tiles. */
template <int LANES>
__device__ void tile(const Mat &A, const double *__restrict__ x, double *__restrict__ y, int add, long long r0,
                     long long r1) {
  constexpr int kGroups = kThreads / LANES;
  const int lane = threadIdx.x & 31;
  for (long long base = r0; base < r1; base += kGroups) {
    const long long r = base + threadIdx.x / LANES;
    double s = 0.0;
    bool mine = false;
    if (r < r1) {
      const long long b = __ldg(A.rp + r), e = __ldg(A.rp + r + 1);
      mine = !coop_tile_long_row(e - b, LANES);
      if (mine)
        for (long long j = b + lane % LANES; j < e; j += LANES) s += __ldg(A.v + j) * __ldg(x + __ldg(A.ci + j));
    }
#pragma unroll
    for (int o = LANES / 2; o > 0; o >>= 1) s += __shfl_down_sync(kFull, s, o, LANES);
    if (mine && lane % LANES == 0) put(A, y, r, s, add);
  }
  if constexpr (LANES < 32) {
    const int w = threadIdx.x >> 5;
    for (long long base = r0 + 32LL * w; base < r1; base += 32LL * kWarps) {
      const long long r = base + lane;
      const bool lg = r < r1 && coop_tile_long_row(__ldg(A.rp + r + 1) - __ldg(A.rp + r), LANES);
      for (unsigned m = __ballot_sync(kFull, lg); m; m &= m - 1) {
        const long long q = base + __ffs(m) - 1;
        const long long e = __ldg(A.rp + q + 1);
        double s = 0.0;
        for (long long j = __ldg(A.rp + q) + lane; j < e; j += 32) s += __ldg(A.v + j) * __ldg(x + __ldg(A.ci + j));
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(kFull, s, o);
        if (lane == 0) put(A, y, q, s, add);
      }
    }
  }
}


__device__ __forceinline__ unsigned smid() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

/* Every tile the scheduler hands this block. With L.busy, the block's time
 * from its start to the end of its last tile is added to its SM's entry (a
 * timing, not a result: the one floating-point atomic here). */
template <int LANES, class S>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    spmv_tiles(Mat A, const double *__restrict__ x, double *__restrict__ y, int add, Launch L) {
  __shared__ Shared sh;
  BlockG g(sh);
  S s = make_sched<S>(L, sh);
  unsigned long long t0 = 0;
  if (L.busy && threadIdx.x == 0) t0 = coop_bar::globaltimer();
  __syncthreads(); /* Clc: publishes the mbarrier's initialisation before the first request */
  for (long long t = s.first(g); t >= 0 && t < L.tiles; t = s.next(g)) {
    long long r0, r1;
    coop_tile_range(t, L.tile_rows, A.nrows, &r0, &r1);
    tile<LANES>(A, x, y, add, r0, r1);
  }
  if (!L.busy) return;
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(L.busy + smid(), 1e-9 * (double)(coop_bar::globaltimer() - t0));
}

struct Plan {
  int schedule, lanes, passes;
  long long tile_rows, tiles, blocks, base;
  unsigned long long *counter;
  const void *fn;
};

template <int LANES>
const void *kernel_of(int schedule) {
  switch (schedule) {
  case COOP_CSR_SCHED_CLC:
    return (const void *)spmv_tiles<LANES, coop_sched::Clc<false>>;
  case COOP_CSR_SCHED_ATOMIC:
    return (const void *)spmv_tiles<LANES, AtomicFrom>;
  default:
    return (const void *)spmv_tiles<LANES, coop_sched::Static>;
  }
}

const void *kernel_for(int lanes, int schedule) {
  switch (lanes) {
  case 1: return kernel_of<1>(schedule);
  case 2: return kernel_of<2>(schedule);
  case 4: return kernel_of<4>(schedule);
  case 8: return kernel_of<8>(schedule);
  case 16: return kernel_of<16>(schedule);
  default: return kernel_of<32>(schedule);
  }
}

/* clc: the GPU must have cluster launch control, and the code that runs must
 * come from compute_100 or later (JIT from older PTX has it compiled out). */
int check_clc(const coop_backend *be, const void *fn) {
  int major = 0, minor = 0;
  COOP_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, be->device));
  COOP_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, be->device));
  if (major < 10)
    return coop_error_input("tune.csr_schedule = clc needs compute capability 10.0; GPU %d has %d.%d", be->device,
                            major, minor);
  cudaFuncAttributes fa;
  COOP_CUDA(cudaFuncGetAttributes(&fa, fn));
  if (fa.ptxVersion < 100)
    return coop_error_input("tune.csr_schedule = clc: this build's code for GPU %d (cc %d.%d) comes from "
                            "compute_%d, without cluster launch control", be->device, major, minor,
                            fa.ptxVersion);
  return 0;
}

int make_plan(coop_csr *A, int schedule, Plan *p) {
  coop_backend *be = A->be;
  p->schedule = schedule;
  p->lanes = coop_tile_lanes(A->mean_row_x100);
  p->fn = kernel_for(p->lanes, schedule);
  if (schedule == COOP_CSR_SCHED_CLC) COOP_CHECK(check_clc(be, p->fn));
  int per_sm = 0;
  COOP_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, p->fn, kThreads, 0));
  const long long resident = (long long)per_sm * be->sm_count;
  if (resident < 1) return COOP_ERROR(COOP_ERR_RUNTIME, "no block of the CSR tile kernel fits on GPU %d", be->device);
  p->passes = coop_tile_passes(A->nrows, p->lanes, resident);
  p->tile_rows = coop_tile_rows(p->lanes, p->passes);
  p->tiles = coop_tile_count(A->nrows, p->tile_rows);
  p->blocks = coop_tile_blocks(p->tiles, resident, schedule == COOP_CSR_SCHED_CLC);
  if (p->blocks > 2147483647LL)
    return COOP_ERROR(COOP_ERR_RUNTIME, "CSR tiles: %lld tiles exceed one launch's blocks", p->tiles);
  if (schedule != COOP_CSR_SCHED_ATOMIC) return 0;
  COOP_CHECK(be->alloc(be, (void **)&p->counter, sizeof *p->counter));
  COOP_CUDA(cudaMemsetAsync(p->counter, 0, sizeof *p->counter, (cudaStream_t)be->stream)); /* once */
  return 0;
}

} // namespace

extern "C" {

int coop_csr_tiles_plan_cuda(coop_csr *A, int schedule) {
  Plan *p = (Plan *)calloc(1, sizeof *p);
  if (!p) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  A->tiles = p; /* freed by coop_csr_tiles_free_cuda, also half-built */
  return make_plan(A, schedule, p);
}

void coop_csr_tiles_free_cuda(coop_csr *A) {
  Plan *p = (Plan *)A->tiles;
  if (!p) return;
  A->be->release(A->be, p->counter);
  free(p);
  A->tiles = NULL;
}

int coop_csr_tile_shape_cuda(const coop_csr *A, coop_csr_tile_shape *out) {
  const Plan *p = (const Plan *)A->tiles;
  if (!p) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_csr_tile_shape_cuda: matrix without a tile plan");
  out->lanes = p->lanes;
  out->passes = p->passes;
  out->tile_rows = p->tile_rows;
  out->tiles = p->tiles;
  out->blocks = p->blocks;
  return 0;
}

int coop_csr_spmv_tiles_cuda(const coop_csr *A, const double *x, double *y, int add, double *busy) {
  Plan *p = (Plan *)A->tiles;
  if (!p) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_csr_spmv_tiles_cuda: matrix without a tile plan");
  if (p->tiles == 0) return 0;
  Mat m = {A->nrows, A->rowptr, A->colind, A->val, A->rows};
  Launch L = {p->tile_rows, p->tiles, p->counter, p->base, busy};
  void *args[] = {&m, (void *)&x, (void *)&y, &add, &L};
  COOP_CUDA(cudaLaunchKernel(p->fn, dim3((unsigned)p->blocks), dim3(kThreads), args, 0,
                             (cudaStream_t)A->be->stream));
  if (p->schedule == COOP_CSR_SCHED_ATOMIC) p->base += coop_tile_atomic_takes(p->tiles, p->blocks);
  return 0;
}

} // extern "C"
