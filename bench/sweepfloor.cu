// Where a 2D sweep's time goes, without the stencil: N sweeps that copy a
// field of 16-byte chunks (NX chunks x NY rows) back and forth in the order
// of the 2D ring march's warp tasks (32 chunks x R rows a warp, as
// relax_range_ring), run three ways in the same call:
//   launch: a kernel a sweep, a warp a task;
//   grid:   one cooperative kernel of B blocks a SM for all sweeps, tasks in
//           turn, grid.sync() between sweeps, and a block sum added to a
//           double and read back after the barrier (the residual's path);
//   barrier: the same kernel with no copy (the barriers and sums alone).
// Against cudaMemcpy of the field. grid minus barrier is the pattern's time
// inside a persistent kernel; what the solver takes beyond grid is the
// stencil's (4096^2 fp32: the solver 38.0 us a sweep at 3 blocks a SM, this
// copy 32.8 at 4, memcpy 34.5).
//   nvcc -std=c++17 -O3 -arch=sm_90 -o sweepfloor bench/sweepfloor.cu
//   sweepfloor [NX NY [SWEEPS [B]]]   (default 1024 4096 1000 4: 4096^2 fp32;
//   the 2D solver runs 3 blocks a SM since session 14, the table was at 4)
// Prints us a sweep and memcpy's time over it, each in the same strip order
// every sweep and reversed every other sweep. Measured on the H200:
// bench/results/2026-12-02-h200-snake-3blocks.md.
#include <cooperative_groups.h>

#include <cstdio>
#include <cstdlib>

#include "bench_check.cuh"

namespace cg = cooperative_groups;

/* warp task t of a sweep: 32 chunks x r rows, D rows loaded before stored */
template <int D>
__device__ __forceinline__ void copy_task(const float4 *a, float4 *b, int nx, int ny, int r, int cols,
                                          int t, int lane, bool rev) {
  const int si = t / cols, col = t - si * cols, strip = rev ? (ny + r - 1) / r - 1 - si : si;
  const int x = col * 32 + lane, y0 = strip * r, y1 = min(ny, y0 + r);
  if (x >= nx) return;
  long long i = (long long)nx * y0 + x;
  int y = y0;
  for (; y + D <= y1; y += D, i += (long long)D * nx) {
    float4 v[D];
#pragma unroll
    for (int k = 0; k < D; k++) v[k] = a[i + (long long)k * nx];
#pragma unroll
    for (int k = 0; k < D; k++) b[i + (long long)k * nx] = v[k];
  }
  for (; y < y1; y++, i += nx) b[i] = a[i];
}

template <int D>
__global__ void __launch_bounds__(256) sweep_launch(const float4 *a, float4 *b, int nx, int ny, int r, int cols,
                                                    int tasks, bool rev) {
  const int t = (blockIdx.x * 256 + threadIdx.x) >> 5;
  if (t < tasks) copy_task<D>(a, b, nx, ny, r, cols, t, threadIdx.x & 31, rev);
}

/* COPY false: the barriers and the sums alone */
template <int D, bool COPY>
__global__ void __launch_bounds__(256, 4) sweep_grid(float4 *a, float4 *b, int nx, int ny, int r, int cols,
                                                     int tasks, int sweeps, double *acc, double *out, int snake) {
  cg::grid_group grid = cg::this_grid();
  const int warps = gridDim.x * 8, w = (blockIdx.x * 256 + threadIdx.x) >> 5;
  __shared__ double s;
  double total = 0.0;
  for (int k = 0; k < sweeps; k++) {
    if (COPY)
      for (int t = w; t < tasks; t += warps) copy_task<D>(a, b, nx, ny, r, cols, t, threadIdx.x & 31, snake && (k & 1));
    if (threadIdx.x == 0) {
      if (blockIdx.x == 0) acc[(k + 1) % 3] = 0.0; /* the slot after next, as the solve does */
      atomicAdd(&acc[k % 3], 1.0);
    }
    grid.sync();
    if (threadIdx.x == 0) s = *(volatile double *)&acc[k % 3];
    __syncthreads();
    total += s;
    float4 *tmp = a;
    a = b;
    b = tmp;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *out = total;
}

int main(int argc, char **argv) {
  const int nx = argc > 2 ? atoi(argv[1]) : 1024, ny = argc > 2 ? atoi(argv[2]) : 4096;
  const int sweeps = argc > 3 ? atoi(argv[3]) : 1000, want = argc > 4 ? atoi(argv[4]) : 4;
  if (nx < 32 || ny < 1 || sweeps < 1 || (long long)nx * ny > (1LL << 31)) {
    fprintf(stderr, "sweepfloor: NX >= 32, NY >= 1, NX x NY < 2^31 chunks, SWEEPS >= 1\n");
    return 2;
  }
  const long long n = (long long)nx * ny;
  const double bytes = 2.0 * 16.0 * n; /* read and written once a sweep */
  float4 *a, *b;
  double *acc, *out;
  CK(cudaMalloc(&a, n * 16));
  CK(cudaMalloc(&b, n * 16));
  CK(cudaMalloc(&acc, 3 * sizeof(double)));
  CK(cudaMalloc(&out, sizeof(double)));
  CK(cudaMemset(a, 1, n * 16));
  CK(cudaMemset(b, 1, n * 16));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  int sms, per_sm;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sweep_grid<4, true>, 256, 0));
  if (want < 1 || want > per_sm) {
    fprintf(stderr, "sweepfloor: B is 1 to %d blocks a SM\n", per_sm);
    return 2;
  }
  const int blocks = sms * want;
  /* us a sweep of f, which runs `sweeps` sweeps (after one warm-up run) */
  auto time = [&](auto &&f) {
    f();
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(e0));
    f();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return 1e3 * ms / sweeps;
  };
  const double mc = time([&] {
    for (int k = 0; k < sweeps; k++)
      CK(cudaMemcpyAsync(k & 1 ? a : b, k & 1 ? b : a, n * 16, cudaMemcpyDeviceToDevice));
  });
  const double floor_us = mc; /* the copy of the field: the floor of a sweep */
  printf("field %d x %d chunks (%.1f MB), %d sweeps, %d persistent blocks\n", nx, ny, 16.0 * n / 1e6, sweeps,
         blocks);
  printf("%-34s %8.2f us a sweep  %6.0f GB/s\n", "memcpy", mc, bytes / (mc * 1e3));
  const int cols = (nx + 31) / 32;
  /* snake: strips in reverse order every other sweep (the solver's
   * sweep_reversed), so a sweep first reads what the last one wrote last */
  for (int snake = 0; snake < 2; snake++)
    for (int r : {8, 16, 32, 64, 128}) {
      const int tasks = cols * ((ny + r - 1) / r);
      const double tl = time([&] {
        for (int k = 0; k < sweeps; k++)
          sweep_launch<4><<<(tasks + 7) / 8, 256>>>(k & 1 ? b : a, k & 1 ? a : b, nx, ny, r, cols, tasks,
                                                    snake && (k & 1));
      });
      void *args[] = {&a, &b, (void *)&nx, (void *)&ny, &r, (void *)&cols, (void *)&tasks, (void *)&sweeps, &acc,
                      &out, &snake};
      const double tg = time([&] {
        CK(cudaMemsetAsync(acc, 0, 3 * sizeof(double)));
        CK(cudaLaunchCooperativeKernel((void *)sweep_grid<4, true>, blocks, 256, args, 0, 0));
      });
      printf("%s R %3d rows, %7d tasks: launch %8.2f us (%3.0f%%), grid %8.2f us (%3.0f%%)\n",
             snake ? "snake" : "plain", r, tasks, tl, 100 * floor_us / tl, tg, 100 * floor_us / tg);
    }
  int r = 16, tasks = 0, snake = 0;
  void *args[] = {&a, &b, (void *)&nx, (void *)&ny, &r, (void *)&cols, &tasks, (void *)&sweeps, &acc, &out,
                  &snake};
  const double tb = time([&] {
    CK(cudaMemsetAsync(acc, 0, 3 * sizeof(double)));
    CK(cudaLaunchCooperativeKernel((void *)sweep_grid<4, false>, blocks, 256, args, 0, 0));
  });
  printf("%-34s %8.2f us a sweep\n", "barrier and sum alone", tb);
  double got;
  CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
  if (got != (double)blocks * sweeps) { /* every block's sum seen after every barrier */
    fprintf(stderr, "sweepfloor: sums %.0f, expected %.0f\n", got, (double)blocks * sweeps);
    return 1;
  }
  CK(cudaFree(a));
  CK(cudaFree(b));
  CK(cudaFree(acc));
  CK(cudaFree(out));
  return 0;
}
