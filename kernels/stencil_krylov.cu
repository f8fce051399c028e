/* Krylov form of the stencil on the GPU: y = A x on the owned points (x
 * fastest, points outside the box zero), the faces a neighbour needs and the
 * correction from the faces it sends (kernels/stencil.h).
 *
 * apply is bandwidth bound: a block is bx x by threads over by rows of the
 * box and bx * kPoints points along x; a thread takes kPoints points a block
 * width apart, so every load of a warp is contiguous, and issues all their
 * loads before any arithmetic. The rows above and below (and in front and
 * behind) are read by the blocks of those rows too, at about the same time
 * (consecutive blocks are consecutive rows): they come from L2, and the left
 * and right neighbours from L1, so DRAM sees x about once and y once.
 * The arithmetic uses the _rn intrinsics (no contraction to FMA) in the order
 * of the host version (kernels/stencil_host_impl.h), so both give the same bits. */
#include <stdint.h>

#include "kernels/cuda_check.cuh"
#include "kernels/stencil.h"

namespace {

constexpr int kThreads = 256;
/* Points per thread along x: 4 streamed fastest; 2 or 8 were slower, as was
 * taking the left/right neighbours from warp shuffles instead of L1
 * (measured: see bench/results/). */
constexpr int kPoints = 4;

__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }

template <typename T> struct Coef { T diag, w0, w1, w2; };

/* blockIdx.x: a group of blockDim.y rows (row = j + n1 k); blockIdx.y: a
 * segment of blockDim.x * kPoints points along x. */
template <typename T, bool D3>
__global__ void __launch_bounds__(kThreads)
    apply_kernel(long long n0, long long n1, long long n2, Coef<T> c, const T *__restrict__ x,
                 T *__restrict__ y) {
  const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= n1 * n2) return;
  const long long j = D3 ? row % n1 : row, k = D3 ? row / n1 : 0;
  const long long i0 = (long long)blockIdx.y * blockDim.x * kPoints + threadIdx.x;
  const long long sy = n0, sz = n0 * n1, base = row * n0;
  const bool has_d = j > 0, has_u = j + 1 < n1, has_b = D3 && k > 0, has_f = D3 && k + 1 < n2;
  T xc[kPoints], xl[kPoints], xr[kPoints], xd[kPoints], xu[kPoints], xb[kPoints], xf[kPoints];
#pragma unroll
  for (int m = 0; m < kPoints; m++) {
    const long long i = i0 + (long long)m * blockDim.x;
    if (i < n0) {
      const long long p = base + i;
      xc[m] = __ldg(x + p);
      xl[m] = i > 0 ? __ldg(x + p - 1) : T(0);
      xr[m] = i + 1 < n0 ? __ldg(x + p + 1) : T(0);
      xd[m] = has_d ? __ldg(x + p - sy) : T(0);
      xu[m] = has_u ? __ldg(x + p + sy) : T(0);
      if (D3) {
        xb[m] = has_b ? __ldg(x + p - sz) : T(0);
        xf[m] = has_f ? __ldg(x + p + sz) : T(0);
      }
    }
  }
#pragma unroll
  for (int m = 0; m < kPoints; m++) {
    const long long i = i0 + (long long)m * blockDim.x;
    if (i < n0) {
      T v =
          sub(sub(mul(c.diag, xc[m]), mul(c.w0, add(xl[m], xr[m]))), mul(c.w1, add(xd[m], xu[m])));
      if (D3) v = sub(v, mul(c.w2, add(xb[m], xf[m])));
      y[base + i] = v;
    }
  }
}

/* A face: f.m0 x f.m1 points, strides s0, s1 in the vector, from offset off. */
struct Face {
  long long s0, s1, m0, m1, off;
};

Face face_of(const coop_stencil *s, int a, int side) {
  const int64_t *n = s->grid.n;
  const long long st[3] = {1, n[0], n[0] * n[1]};
  const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
  Face f = {st[b], st[c], n[b], n[c], side ? (n[a] - 1) * st[a] : 0};
  return f;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    pack_face_kernel(Face f, const T *__restrict__ x, T *__restrict__ buf) {
  const long long np = f.m0 * f.m1, stride = (long long)gridDim.x * kThreads;
  for (long long t = (long long)blockIdx.x * kThreads + threadIdx.x; t < np; t += stride) {
    const long long q = t / f.m0, p = t - q * f.m0;
    buf[t] = __ldg(x + f.off + p * f.s0 + q * f.s1);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    add_face_kernel(Face f, T w, const T *__restrict__ g, T *__restrict__ y) {
  const long long np = f.m0 * f.m1, stride = (long long)gridDim.x * kThreads;
  for (long long t = (long long)blockIdx.x * kThreads + threadIdx.x; t < np; t += stride) {
    const long long q = t / f.m0, p = t - q * f.m0;
    T *at = y + f.off + p * f.s0 + q * f.s1;
    *at = sub(*at, mul(w, __ldg(g + t)));
  }
}

int blocks_for(long long work) {
  long long b = (work + kThreads - 1) / kThreads;
  if (b < 1) b = 1;
  return (int)(b < (1LL << 30) ? b : (1LL << 30));
}

/* bx threads along x: enough for a row of n0 points at kPoints each (a
 * power of two, 32 to kThreads); the rest of the block takes more rows. */
template <typename T> int apply_t(const coop_stencil *s, const void *x, void *y, cudaStream_t st) {
  const long long n0 = s->grid.n[0], n1 = s->grid.n[1], n2 = s->grid.n[2];
  if (n0 <= 0 || n1 <= 0 || n2 <= 0) return 0;
  int bx = 32;
  while (bx < kThreads && (long long)bx * kPoints < n0) bx *= 2;
  const int by = kThreads / bx;
  const long long gx = (n1 * n2 + by - 1) / by,
                  gy = (n0 + (long long)bx * kPoints - 1) / (bx * kPoints);
  if (gx > 0x7fffffffLL || gy > 65535)
    return COOP_ERROR(COOP_ERR_RUNTIME, "stencil apply: box %lld x %lld x %lld too large", n0, n1,
                      n2);
  Coef<T> c = {(T)(2.0 * (s->w[0] + s->w[1] + s->w[2])), (T)s->w[0], (T)s->w[1], (T)s->w[2]};
  const dim3 grid((unsigned)gx, (unsigned)gy), block(bx, by);
  if (s->grid.ndim == 3)
    apply_kernel<T, true><<<grid, block, 0, st>>>(n0, n1, n2, c, (const T *)x, (T *)y);
  else
    apply_kernel<T, false><<<grid, block, 0, st>>>(n0, n1, n2, c, (const T *)x, (T *)y);
  COOP_CUDA_LAUNCHED();
  return 0;
}

template <typename T>
int pack_faces_t(const coop_stencil *s, const void *x, void *const face[3][2], cudaStream_t st) {
  for (int a = 0; a < s->grid.ndim; a++)
    for (int side = 0; side < 2; side++) {
      if (!face[a][side]) continue;
      const Face f = face_of(s, a, side);
      pack_face_kernel<T>
          <<<blocks_for(f.m0 * f.m1), kThreads, 0, st>>>(f, (const T *)x, (T *)face[a][side]);
      COOP_CUDA_LAUNCHED();
    }
  return 0;
}

/* One launch per face, in the host's order: launches on one stream run in
 * order, so a corner point gets its corrections in the host's order. */
template <typename T>
int add_faces_t(const coop_stencil *s, const void *const ghost[3][2], void *y, cudaStream_t st) {
  for (int a = 0; a < s->grid.ndim; a++)
    for (int side = 0; side < 2; side++) {
      if (!ghost[a][side]) continue;
      const Face f = face_of(s, a, side);
      add_face_kernel<T><<<blocks_for(f.m0 * f.m1), kThreads, 0, st>>>(
          f, (T)s->w[a], (const T *)ghost[a][side], (T *)y);
      COOP_CUDA_LAUNCHED();
    }
  return 0;
}

} // namespace

extern "C" {

int coop_stencil_apply_cuda(const coop_stencil *s, const void *x, void *y, void *stream) {
  cudaStream_t st = (cudaStream_t)stream;
  return s->grid.prec == COOP_FP32 ? apply_t<float>(s, x, y, st) : apply_t<double>(s, x, y, st);
}

int coop_stencil_pack_faces_cuda(const coop_stencil *s, const void *x, void *const face[3][2],
                                 void *stream) {
  cudaStream_t st = (cudaStream_t)stream;
  return s->grid.prec == COOP_FP32 ? pack_faces_t<float>(s, x, face, st)
                                   : pack_faces_t<double>(s, x, face, st);
}

int coop_stencil_add_faces_cuda(const coop_stencil *s, const void *const ghost[3][2], void *y,
                                void *stream) {
  cudaStream_t st = (cudaStream_t)stream;
  return s->grid.prec == COOP_FP32 ? add_faces_t<float>(s, ghost, y, st)
                                   : add_faces_t<double>(s, ghost, y, st);
}

} // extern "C"
