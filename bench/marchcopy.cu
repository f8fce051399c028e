// What a sweep's access pattern alone can reach: copies of a 3D field of
// 16-byte chunks (NX chunks x NY rows x NZ planes) in the order the tile
// march (relax_range_ring3) reads and writes it, with no arithmetic, against
// cudaMemcpy and a contiguous grid-stride copy in the same run. A block takes
// a tile of W chunks x H rows (W x H = 256 threads, a thread a chunk) and
// marches it down z over a strip of planes, D planes loaded before they are
// stored (bytes in flight). If the march's copy falls short of memcpy where
// the solver does, the pattern, not the stencil, is where the time goes.
//   marchcopy [NX NY NZ]     (default 256 512 512: the bytes of 512^3 fp64)
// Prints one line a variant: GB/s (bytes read + written) and % of memcpy.
#include <cstdio>
#include <cstdlib>

#include "bench_check.cuh"

/* contiguous: U chunks a thread in flight, grid-stride */
template <int U>
__global__ void __launch_bounds__(256) stride_copy(const float4 *a, float4 *b, long long n) {
  const long long step = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * step < n; i += U * step) {
    float4 v[U];
#pragma unroll
    for (int k = 0; k < U; k++) v[k] = a[i + k * step];
#pragma unroll
    for (int k = 0; k < U; k++) b[i + k * step] = v[k];
  }
  for (; i < n; i += step) b[i] = a[i];
}

/* the march: task t = (tile, strip) in turn over the launch's blocks */
template <int W, int D>
__global__ void __launch_bounds__(256) march_copy(const float4 *a, float4 *b, int nx, int ny, int nz,
                                                 int rz, int tasks) {
  constexpr int H = 256 / W;
  const int cx = threadIdx.x % W, cy = threadIdx.x / W;
  const int tx = nx / W, ty = ny / H;
  for (int t = blockIdx.x; t < tasks; t += gridDim.x) {
    const int rest = t / tx, xt = t - rest * tx, strip = rest / ty, yt = rest - strip * ty;
    const int z0 = strip * rz, z1 = min(nz, z0 + rz);
    long long i = (long long)nx * ny * z0 + (long long)nx * (yt * H + cy) + xt * W + cx;
    const long long sz = (long long)nx * ny;
    int z = z0;
    for (; z + D <= z1; z += D, i += D * sz) {
      float4 v[D];
#pragma unroll
      for (int k = 0; k < D; k++) v[k] = a[i + k * sz];
#pragma unroll
      for (int k = 0; k < D; k++) b[i + k * sz] = v[k];
    }
    for (; z < z1; z++, i += sz) b[i] = a[i];
  }
}

static double gbs(float ms, double bytes, int reps) { return 2.0 * bytes * reps / (ms * 1e-3) / 1e9; }

int main(int argc, char **argv) {
  const int nx = argc > 3 ? atoi(argv[1]) : 256, ny = argc > 3 ? atoi(argv[2]) : 512,
            nz = argc > 3 ? atoi(argv[3]) : 512;
  const long long n = (long long)nx * ny * nz;
  const double bytes = 16.0 * n;
  float4 *a, *b;
  CK(cudaMalloc(&a, n * 16));
  CK(cudaMalloc(&b, n * 16));
  CK(cudaMemset(a, 1, n * 16));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int reps = 20;
  float ms;
  auto time = [&](auto &&f) {
    f();
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(e0));
    for (int r = 0; r < reps; r++) f();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return gbs(ms, bytes, reps);
  };
  const double mc = time([&] { CK(cudaMemcpyAsync(b, a, n * 16, cudaMemcpyDeviceToDevice)); });
  printf("field %d x %d x %d chunks, %.2f GB a copy\n", nx, ny, nz, bytes / 1e9);
  printf("memcpy                      %7.0f GB/s  100%%\n", mc);
  const double s4 = time([&] { stride_copy<4><<<sms * 8, 256>>>(a, b, n); });
  printf("grid-stride, 4 in flight    %7.0f GB/s  %3.0f%%\n", s4, 100 * s4 / mc);
  /* strips: 1 (a tile marches every plane), and as many as fill 4 blocks a SM */
#define MARCH(Wv, Dv)                                                                          \
  do {                                                                                         \
    const int tiles = (nx / Wv) * (ny / (256 / Wv));                                           \
    for (int strips : {1, (4 * sms + tiles - 1) / tiles, 2 * (4 * sms + tiles - 1) / tiles}) { \
      const int rz = (nz + strips - 1) / strips, tasks = tiles * ((nz + rz - 1) / rz);         \
      const double g = time([&] { march_copy<Wv, Dv><<<tasks, 256>>>(a, b, nx, ny, nz, rz, tasks); }); \
      const double gp = time([&] {                                                             \
        march_copy<Wv, Dv><<<min(tasks, 4 * sms), 256>>>(a, b, nx, ny, nz, rz, tasks);         \
      });                                                                                      \
      printf("march W %3d x H %3d, D %d, %4d tasks of %3d planes: %7.0f GB/s %3.0f%%, "         \
             "on %d blocks %7.0f GB/s %3.0f%%\n", Wv, 256 / Wv, Dv, tasks, rz, g, 100 * g / mc, \
             min(tasks, 4 * sms), gp, 100 * gp / mc);                                          \
    }                                                                                          \
  } while (0)
  MARCH(32, 4);
  MARCH(32, 8);
  MARCH(64, 4);
  MARCH(128, 4);
  MARCH(256, 4);
  MARCH(256, 8);
  CK(cudaFree(a));
  CK(cudaFree(b));
  return 0;
}
