// Ceilings of the GPU this benchmark runs on, measured in the same run as the
// solver so the solver's figures can be read against them: device-to-device
// copy bandwidth (bytes read + written), one grid.sync() in a cooperative
// kernel over all resident blocks, and the cost of one kernel launch.
//   devlimits [DEVICE [BLOCKS...]]
// Prints `key value` lines: copy_gbs, grid_sync_us (all resident blocks of
// 256 threads), launch_us, and sync_us_N for one grid.sync() over N blocks,
// N = 132, 264, 528, 1056 and each BLOCKS given (bench/stencil.sh asks for
// the block counts its grid-mode runs used). A count that cannot be
// co-resident even with 32-thread blocks is left out (a note on stderr).
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>

#include "bench_check.cuh"

__global__ void syncs(int n, int *sink) {
  cooperative_groups::grid_group g = cooperative_groups::this_grid();
  for (int i = 0; i < n; i++) g.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) *sink = n;
}

__global__ void empty() {}

static float time_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms;
  CK(cudaEventSynchronize(b));
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

/* Microseconds per grid.sync() over `blocks` blocks of `threads` (n barriers
 * in one cooperative launch, after a warm-up launch of n / 10). */
static double sync_us(int blocks, int threads, int n, int *sink, cudaEvent_t a, cudaEvent_t b) {
  int nn = n, warm = n / 10;
  void *args[] = {&nn, &sink}, *wargs[] = {&warm, &sink};
  CK(cudaLaunchCooperativeKernel((void *)syncs, blocks, threads, wargs, 0, 0));
  CK(cudaEventRecord(a));
  CK(cudaLaunchCooperativeKernel((void *)syncs, blocks, threads, args, 0, 0));
  CK(cudaEventRecord(b));
  return time_ms(a, b) * 1e3 / n;
}

int main(int argc, char **argv) {
  const int dev = argc > 1 ? atoi(argv[1]) : 0;
  const size_t bytes = (size_t)2 << 30;
  cudaDeviceProp p;
  cudaEvent_t a, b;
  void *x, *y;
  int *sink, per_sm;
  CK(cudaSetDevice(dev));
  CK(cudaGetDeviceProperties(&p, dev));
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  CK(cudaMalloc(&sink, sizeof(int)));
  CK(cudaMemset(x, 1, bytes));
  CK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice)); /* warm up */
  CK(cudaEventRecord(a));
  for (int i = 0; i < 10; i++) CK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice));
  CK(cudaEventRecord(b));
  const double copy_gbs = 10.0 * 2.0 * bytes / (time_ms(a, b) * 1e-3) / 1e9;

  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, syncs, 256, 0));
  const int blocks = per_sm * p.multiProcessorCount, n = 20000;
  const double sync_all_us = sync_us(blocks, 256, n, sink, a, b);

  for (int i = 0; i < 100; i++) empty<<<1, 32>>>();
  CK(cudaEventRecord(a));
  for (int i = 0; i < n; i++) empty<<<1, 32>>>();
  CK(cudaEventRecord(b));
  const double launch_us = time_ms(a, b) * 1e3 / n;
  CK(cudaGetLastError());

  /* grid.sync() at fixed block counts and at those asked for (duplicates once) */
  int counts[64] = {132, 264, 528, 1056}, nc = 4;
  for (int i = 2; i < argc && nc < 64; i++) {
    const int c = atoi(argv[i]);
    int seen = c < 1;
    for (int j = 0; j < nc; j++) seen |= counts[j] == c;
    if (!seen) counts[nc++] = c;
  }
  double count_us[64];
  int count_threads[64];
  for (int i = 0; i < nc; i++) {
    count_threads[i] = 0;
    /* the widest block (at most 256 threads) with which all of them fit at once */
    for (int t = 256; t >= 32 && !count_threads[i]; t /= 2) {
      int k;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k, syncs, t, 0));
      if (k * p.multiProcessorCount >= counts[i]) count_threads[i] = t;
    }
    if (count_threads[i]) count_us[i] = sync_us(counts[i], count_threads[i], n, sink, a, b);
  }

  printf("device %d: %s, %d SMs\n", dev, p.name, p.multiProcessorCount);
  printf("copy_gbs %.0f\n", copy_gbs);
  printf("grid_sync_us %.2f (%d blocks of 256 threads)\n", sync_all_us, blocks);
  printf("launch_us %.2f\n", launch_us);
  for (int i = 0; i < nc; i++) {
    if (count_threads[i])
      printf("sync_us_%d %.2f (%d threads per block)\n", counts[i], count_us[i], count_threads[i]);
    else
      fprintf(stderr, "devlimits: %d blocks cannot be co-resident on device %d; no sync_us_%d\n",
              counts[i], dev, counts[i]);
  }
  return 0;
}
