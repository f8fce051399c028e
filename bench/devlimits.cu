// Ceilings of the GPU this benchmark runs on, measured in the same run as the
// solver so the solver's figures can be read against them: device-to-device
// copy bandwidth (bytes read + written), one grid.sync() in a cooperative
// kernel over all resident blocks, and the cost of one kernel launch.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>

#define CK(call)                                                                \
  do {                                                                          \
    cudaError_t e_ = (call);                                                    \
    if (e_ != cudaSuccess) {                                                    \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

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
  int nn = n;
  void *args[] = {&nn, &sink};
  CK(cudaLaunchCooperativeKernel((void *)syncs, blocks, 256, args, 0, 0)); /* warm up */
  CK(cudaEventRecord(a));
  CK(cudaLaunchCooperativeKernel((void *)syncs, blocks, 256, args, 0, 0));
  CK(cudaEventRecord(b));
  const double sync_us = time_ms(a, b) * 1e3 / n;

  for (int i = 0; i < 100; i++) empty<<<1, 32>>>();
  CK(cudaEventRecord(a));
  for (int i = 0; i < n; i++) empty<<<1, 32>>>();
  CK(cudaEventRecord(b));
  const double launch_us = time_ms(a, b) * 1e3 / n;
  CK(cudaGetLastError());

  printf("device %d: %s, %d SMs\n", dev, p.name, p.multiProcessorCount);
  printf("copy_gbs %.0f\n", copy_gbs);
  printf("grid_sync_us %.2f (%d blocks of 256 threads)\n", sync_us, blocks);
  printf("launch_us %.2f\n", launch_us);
  return 0;
}
