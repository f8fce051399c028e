// Barrier costs of the batched solver's synchronisation ladder, measured on
// the GPU it runs on: grid.sync() in a cooperative kernel; the per-row
// software barrier of kernels/barrier.cuh with 1 .. 64 rows (groups); the
// hardware cluster.sync() with clusters of 2, 4, 8 and 16 blocks; each at 132,
// 264, 528 and 1056 blocks in all (256 threads), where that many can be
// resident (the row barrier and the measurement need them all at once).
//   batched [DEVICE]            markdown table on stdout
//   batched --selftest [DEVICE] the row barrier's own checks, exit 0 when all
//                               pass: counters stay right across launches
//                               (reused, never reset, with a different number
//                               of blocks per row), and a barrier a block
//                               never reaches times out, names the group and
//                               the arrivals, and every block leaves.
//   batched --host              the counter and scheduler bookkeeping of
//                               kernels/barrier.cuh and kernels/sched.cuh,
//                               checked on the CPU (no GPU needed)
// Built standalone by nvcc (bench/batched.sh, tests/gpu_batch.sh):
//   nvcc -O2 -std=c++17 -arch=sm_90 -o batched bench/batched.cu
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../kernels/barrier.cuh"
#include "../kernels/sched.cuh"

namespace cg = cooperative_groups;

#include "bench_check.cuh"

constexpr int kThreads = 256;
constexpr unsigned long long kTimeout = 5000000000ull; /* timing runs: never reached */

__global__ void __launch_bounds__(kThreads) grid_syncs(int n, int *sink) {
  cg::grid_group g = cg::this_grid();
  for (int i = 0; i < n; i++) g.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) *sink = n;
}

/* n row barriers; row y = blockIdx.y uses counter ctr[y * stride]
 * (coop_bar::kCtrStride as the solvers lay them out; 1 = packed, the layout
 * before, kept for the comparison row). */
__global__ void __launch_bounds__(kThreads) row_syncs(int n, unsigned *ctr, int stride, coop_bar::Fault *f,
                                                      unsigned long long timeout_ns, int *sink) {
  __shared__ int ok;
  for (int i = 0; i < n; i++)
    if (!coop_bar::group_sync(ctr + blockIdx.y * stride, gridDim.x, blockIdx.x == 0, blockIdx.y, blockIdx.x, f,
                              timeout_ns, &ok))
      return;
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(sink, 1);
}

__global__ void __launch_bounds__(kThreads) cluster_syncs(int n, int *sink) {
  for (int i = 0; i < n; i++) coop_bar::cluster_sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) *sink = n;
}

struct Ctx {
  int dev, sms;
  cudaEvent_t a, b;
  int *sink;
  unsigned *ctr; /* 64 row counters kCtrStride apart, zeroed once for the whole program */
  coop_bar::Fault *fault;
};

static float elapsed_ms(const Ctx &c) {
  float ms;
  CK(cudaEventSynchronize(c.b));
  CK(cudaEventElapsedTime(&ms, c.a, c.b));
  return ms;
}

static int resident(const void *fn) {
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, kThreads, 0));
  return per_sm;
}

/* us per grid.sync() over `blocks` blocks; < 0 when they cannot be resident. */
static double time_grid(const Ctx &c, int blocks, int n) {
  if (blocks > resident((const void *)grid_syncs) * c.sms) return -1;
  int warm = n / 10;
  void *wa[] = {&warm, (void *)&c.sink}, *na[] = {&n, (void *)&c.sink};
  CK(cudaLaunchCooperativeKernel((void *)grid_syncs, blocks, kThreads, wa, 0, 0));
  CK(cudaEventRecord(c.a));
  CK(cudaLaunchCooperativeKernel((void *)grid_syncs, blocks, kThreads, na, 0, 0));
  CK(cudaEventRecord(c.b));
  return elapsed_ms(c) * 1e3 / n;
}

/* us per row barrier, rows of `per_row` blocks, all rows at once. */
static double time_rows(const Ctx &c, int rows, int per_row, int n, int stride = coop_bar::kCtrStride) {
  if (rows * per_row > resident((const void *)row_syncs) * c.sms) return -1;
  const dim3 grid(per_row, rows);
  row_syncs<<<grid, kThreads>>>(n / 10, c.ctr, stride, c.fault, kTimeout, c.sink);
  CK(cudaEventRecord(c.a));
  row_syncs<<<grid, kThreads>>>(n, c.ctr, stride, c.fault, kTimeout, c.sink);
  CK(cudaEventRecord(c.b));
  CK(cudaGetLastError());
  const double us = elapsed_ms(c) * 1e3 / n;
  coop_bar::Fault f;
  CK(cudaMemcpy(&f, c.fault, sizeof f, cudaMemcpyDeviceToHost));
  if (f.state) {
    fprintf(stderr, "row barrier gave up: group %d, %u of %u arrived\n", f.group, f.arrived, f.expected);
    exit(1);
  }
  return us;
}

/* us per cluster.sync(), clusters of `size` over `blocks` blocks. */
static double time_clusters(const Ctx &c, int size, int blocks, int n) {
  if (size > 8) CK(cudaFuncSetAttribute(cluster_syncs, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = size;
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(kThreads);
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, cluster_syncs, &cfg) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  if (clusters * size < blocks) return -1;
  int warm = n / 10;
  CK(cudaLaunchKernelEx(&cfg, cluster_syncs, warm, c.sink));
  CK(cudaEventRecord(c.a));
  CK(cudaLaunchKernelEx(&cfg, cluster_syncs, n, c.sink));
  CK(cudaEventRecord(c.b));
  return elapsed_ms(c) * 1e3 / n;
}

static void cell(double us) {
  if (us < 0) printf(" - |");
  else printf(" %.2f |", us);
}

static void table(const Ctx &c) {
  const int totals[] = {132, 264, 528, 1056}, rows[] = {1, 2, 4, 8, 16, 32, 64}, sizes[] = {2, 4, 8, 16};
  const int n = 20000;
  printf("| barrier (us per barrier) | 132 blocks | 264 | 528 | 1056 |\n| --- | --- | --- | --- | --- |\n");
  printf("| grid.sync() |");
  for (int t : totals) cell(time_grid(c, t, n));
  printf("\n");
  for (int r : rows) {
    printf("| row barrier, %d row%s |", r, r > 1 ? "s" : "");
    for (int t : totals) cell(t / r >= 1 ? time_rows(c, r, t / r, n) : -1);
    printf("\n");
  }
  for (int r : {16, 64}) { /* the layout before: counters side by side */
    printf("| row barrier, %d rows, packed counters |", r);
    for (int t : totals) cell(t / r >= 1 ? time_rows(c, r, t / r, n, 1) : -1);
    printf("\n");
  }
  for (int s : sizes) {
    printf("| cluster.sync(), %d blocks |", s);
    for (int t : totals) cell(time_clusters(c, s, t / s * s, n));
    printf("\n");
  }
  printf("\nrows of blocks: blocks / rows per row (rounded down); '-': cannot be resident at once.\n");
}

/* ---- self-test ---- */

/* rounds: every block writes round k into its slot of its row, passes the
 * barrier, then checks that every block of its row wrote round k; a second
 * barrier keeps the next round's writes after every check. */
__global__ void __launch_bounds__(kThreads) row_check(int rounds, int *slots, unsigned *ctr, coop_bar::Fault *f,
                                                      unsigned long long timeout_ns, int *errors) {
  __shared__ int ok;
  int *row = slots + blockIdx.y * gridDim.x;
  for (int k = 1; k <= rounds; k++) {
    if (threadIdx.x == 0) *(volatile int *)&row[blockIdx.x] = k;
    if (!coop_bar::group_sync(coop_bar::group_counter(ctr, blockIdx.y), gridDim.x, blockIdx.x == 0, blockIdx.y, blockIdx.x, f,
                              timeout_ns, &ok))
      return;
    for (int b = threadIdx.x; b < (int)gridDim.x; b += blockDim.x)
      if (*(volatile int *)&row[b] != k) atomicAdd(errors, 1);
    if (!coop_bar::group_sync(coop_bar::group_counter(ctr, blockIdx.y), gridDim.x, blockIdx.x == 0, blockIdx.y, blockIdx.x, f,
                              timeout_ns, &ok))
      return;
  }
}

/* Block `missing` of row `bad` returns at once; every other block loops on
 * barriers until the kernel aborts. */
__global__ void __launch_bounds__(kThreads) row_hang(int bad, int missing, unsigned *ctr, coop_bar::Fault *f,
                                                     unsigned long long timeout_ns, int *left) {
  __shared__ int ok;
  if (blockIdx.y == bad && blockIdx.x == missing) return;
  while (coop_bar::group_sync(coop_bar::group_counter(ctr, blockIdx.y), gridDim.x, blockIdx.x == 0, blockIdx.y, blockIdx.x, f,
                              timeout_ns, &ok)) {
  }
  if (threadIdx.x == 0) atomicAdd(left, 1);
}

static int check_rows(const Ctx &c, int rows, int per_row, int rounds, const char *what) {
  int *slots, *errors, e = 0;
  CK(cudaMalloc(&slots, sizeof(int) * rows * per_row));
  CK(cudaMalloc(&errors, sizeof(int)));
  CK(cudaMemset(slots, 0, sizeof(int) * rows * per_row));
  CK(cudaMemset(errors, 0, sizeof(int)));
  row_check<<<dim3(per_row, rows), kThreads>>>(rounds, slots, c.ctr, c.fault, kTimeout, errors);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  coop_bar::Fault f;
  CK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&f, c.fault, sizeof f, cudaMemcpyDeviceToHost));
  CK(cudaFree(slots));
  CK(cudaFree(errors));
  const int bad = e != 0 || f.state != 0;
  printf("%s: %d rows x %d blocks, %d rounds: %s (%d stale reads, fault %d)\n", what, rows, per_row, rounds,
         bad ? "FAIL" : "ok", e, f.state);
  return bad;
}

static int check_timeout(const Ctx &c, int rows, int per_row) {
  unsigned *ctr;
  int *left, n_left = 0;
  coop_bar::Fault f;
  CK(cudaMalloc(&ctr, sizeof(unsigned) * coop_bar::counter_words(rows)));
  CK(cudaMalloc(&left, sizeof(int)));
  CK(cudaMemset(ctr, 0, sizeof(unsigned) * coop_bar::counter_words(rows)));
  CK(cudaMemset(left, 0, sizeof(int)));
  CK(cudaMemset(c.fault, 0, sizeof(coop_bar::Fault)));
  const int bad_row = rows / 2, missing = per_row - 1;
  row_hang<<<dim3(per_row, rows), kThreads>>>(bad_row, missing, ctr, c.fault, 200000000ull, left);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(&f, c.fault, sizeof f, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&n_left, left, sizeof n_left, cudaMemcpyDeviceToHost));
  CK(cudaMemset(c.fault, 0, sizeof(coop_bar::Fault)));
  CK(cudaFree(ctr));
  CK(cudaFree(left));
  const int ok = f.state == 1 && f.group == bad_row && f.arrived == (unsigned)(per_row - 1) &&
                 f.expected == (unsigned)per_row && n_left == rows * per_row - 1;
  printf("timeout: group %d (want %d), %u of %u arrived (want %d of %d), waited %.2f s, %d of %d blocks "
         "left: %s\n",
         f.group, bad_row, f.arrived, f.expected, per_row - 1, per_row, f.waited_s, n_left,
         rows * per_row - 1, ok ? "ok" : "FAIL");
  return !ok;
}

static int selftest(const Ctx &c) {
  const int per_sm = resident((const void *)row_check);
  int fails = 0;
  /* the same 16 counters for three launches with different blocks per row */
  fails += check_rows(c, 16, 4, 1000, "launch 1");
  fails += check_rows(c, 16, 7, 1000, "launch 2 (same counters, 7 blocks a row)");
  fails += check_rows(c, 16, 4, 999, "launch 3 (same counters)");
  const int big = per_sm * c.sms / 16;
  if (big >= 1) fails += check_rows(c, 16, big, 200, "all resident blocks");
  fails += check_timeout(c, 8, 4);
  fails += check_rows(c, 16, 4, 10, "launch after a timeout (other counters)");
  printf("%s\n", fails ? "selftest: FAIL" : "selftest: ok");
  return fails ? 1 : 0;
}

/* ---- host checks of the pure bookkeeping ---- */

/* Every arrival order of a barrier of `e` blocks over three phases: the flip
 * comes with the last arrival only, and the arrivals decode in between. */
static int check_counter(unsigned e, unsigned start) {
  unsigned ctr = start;
  for (int phase = 0; phase < 3; phase++) {
    const unsigned master_at = (unsigned)phase * 7u % e; /* the master arrives at this position */
    unsigned first_old = 0;
    for (unsigned k = 0; k < e; k++) {
      const unsigned old = ctr;
      if (k == 0) first_old = old;
      ctr += coop_bar::arrive_increment(k == master_at, e);
      if (coop_bar::flipped(old, ctr) != (k + 1 == e)) return 1;
      if (k + 1 < e && coop_bar::arrived_count(ctr, first_old, e) != k + 1) return 1;
      if (k + 1 < e && coop_bar::arrived_count(ctr, old, e) != k + 1) return 1;
    }
    if (((ctr ^ first_old) & coop_bar::kFlip) == 0 || (ctr & ~coop_bar::kFlip) != (start & ~coop_bar::kFlip))
      return 1;
  }
  return 0;
}

static int host_checks() {
  int fails = 0;
  for (unsigned e = 1; e <= 1100; e++) fails += check_counter(e, 0) + check_counter(e, coop_bar::kFlip);
  /* static: every item exactly once, in group order */
  for (long long groups = 1; groups <= 40; groups++)
    for (long long count = 0; count <= 100; count++) {
      long long seen = 0;
      for (long long g = 0; g < groups; g++) {
        long long k = 0;
        for (long long i = coop_sched::static_item(g, groups, 0); i < count; i = coop_sched::static_item(g, groups, ++k))
          seen += i + 1;
        fails += k != coop_sched::static_share(g, groups, count);
      }
      fails += seen != count * (count + 1) / 2;
    }
  /* clc: the first block of cluster k names item k; every block of it too */
  for (unsigned c = 1; c <= 16; c++)
    for (unsigned k = 0; k < 1000; k++) {
      fails += coop_sched::clc_item(k * c, c) != k;
      fails += coop_sched::clc_item(k * c + c - 1, c) != k;
    }
  fails += coop_sched::clc_grid_blocks(1000, 8) != 8000;
  fails += coop_bar::resident_groups(8, 132, 16) != 66 || coop_bar::resident_groups(0, 132, 1) != 0;
  printf("host checks: %s\n", fails ? "FAIL" : "ok");
  return fails ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--host")) return host_checks();
  bool self = argc > 1 && !strcmp(argv[1], "--selftest");
  Ctx c = {};
  c.dev = argc > 1 + self ? atoi(argv[1 + self]) : 0;
  CK(cudaSetDevice(c.dev));
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, c.dev));
  c.sms = p.multiProcessorCount;
  CK(cudaEventCreate(&c.a));
  CK(cudaEventCreate(&c.b));
  CK(cudaMalloc(&c.sink, sizeof(int)));
  CK(cudaMalloc(&c.ctr, coop_bar::counter_words(64) * sizeof(unsigned)));
  CK(cudaMalloc(&c.fault, sizeof(coop_bar::Fault)));
  CK(cudaMemset(c.ctr, 0, coop_bar::counter_words(64) * sizeof(unsigned))); /* once: reused by every launch */
  CK(cudaMemset(c.fault, 0, sizeof(coop_bar::Fault)));
  printf("device %d: %s, cc %d.%d, %d SMs\n\n", c.dev, p.name, p.major, p.minor, c.sms);
  if (self) return selftest(c);
  table(c);
  return 0;
}
