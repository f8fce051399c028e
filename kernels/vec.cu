/* Vector operations on the GPU (the CUDA half of kernels/vec.h).
 *
 * Element-wise kernels are bandwidth bound: each thread moves U packs of 16
 * bytes (double2 / float4) per stream, U packs a block-width apart so every
 * load instruction of a warp reads 512 contiguous bytes. Where a pointer is
 * not 16-byte aligned the same packs are read element by element, so both
 * paths visit (and, in mdot, add) the elements in the same order: results
 * depend on n only. The arithmetic uses the _rn intrinsics: no contraction to
 * FMA, so axpby and mult give the host's bits.
 *
 * mdot: a first kernel of a fixed grid (COOP_VEC_PARTIALS blocks at most)
 * writes one partial per block and dot; a second kernel of one block adds
 * them in a fixed order. No floating-point atomics: the same n gives the same
 * bits on every run. */
#include <stdint.h>

#include "kernels/cuda_check.cuh"
#include "kernels/vec.h"

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4; /* packs per thread per stream and pass */
/* mdot: a thread takes kDotPacks packs per stream and pass; with k <= 2 it
 * loads them all before adding (4 to 8 loads in flight), with more streams
 * one pack at a time (the registers stay under 64: 4 blocks per SM). The
 * order of the additions is the same either way, so a dot gives the same bits
 * whatever k it is computed with. */
constexpr int kDotPacks = 2;
constexpr int kMaxBlocks = 1 << 30;

template <typename T> struct Pack {
  static constexpr int W = 16 / sizeof(T);
  T e[W];
};

/* Load/store one pack: a 16-byte instruction when aligned, else W scalars. */
template <bool A> __device__ __forceinline__ Pack<double> ld(const double *p) {
  Pack<double> r;
  if (A) {
    const double2 v = *reinterpret_cast<const double2 *>(p);
    r.e[0] = v.x;
    r.e[1] = v.y;
  } else {
    r.e[0] = p[0];
    r.e[1] = p[1];
  }
  return r;
}

template <bool A> __device__ __forceinline__ Pack<float> ld(const float *p) {
  Pack<float> r;
  if (A) {
    const float4 v = *reinterpret_cast<const float4 *>(p);
    r.e[0] = v.x;
    r.e[1] = v.y;
    r.e[2] = v.z;
    r.e[3] = v.w;
  } else {
#pragma unroll
    for (int i = 0; i < 4; i++) r.e[i] = p[i];
  }
  return r;
}

template <bool A> __device__ __forceinline__ void st(double *p, const Pack<double> &r) {
  if (A) {
    *reinterpret_cast<double2 *>(p) = make_double2(r.e[0], r.e[1]);
  } else {
    p[0] = r.e[0];
    p[1] = r.e[1];
  }
}

template <bool A> __device__ __forceinline__ void st(float *p, const Pack<float> &r) {
  if (A) {
    *reinterpret_cast<float4 *>(p) = make_float4(r.e[0], r.e[1], r.e[2], r.e[3]);
  } else {
#pragma unroll
    for (int i = 0; i < 4; i++) p[i] = r.e[i];
  }
}

__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }

bool aligned16(const void *p) { return p == NULL || ((uintptr_t)p & 15u) == 0; }

int blocks_for(long long work, int per_block) {
  long long b = (work + per_block - 1) / per_block;
  if (b < 1) b = 1;
  return (int)(b < kMaxBlocks ? b : kMaxBlocks);
}

/* ---- element-wise: w = op(x, y) ----
 * The grid covers the packs once (grid-stride loop as a guard only); the
 * fewer than W trailing elements go to the first threads of block 0. */
template <typename T, bool HX, bool HY>
struct AxpbyOp { /* a x + b y, the absent terms left out */
  T a, b;
  __device__ __forceinline__ T operator()(T x, T y) const {
    if (HX && HY) return add(mul(a, x), mul(b, y));
    if (HX) return mul(a, x);
    if (HY) return mul(b, y);
    return T(0);
  }
};
template <typename T>
struct MultOp { /* x .* y */
  __device__ __forceinline__ T operator()(T x, T y) const { return mul(x, y); }
};

/* w = op(x, y), element by element; HX, HY: x, y are read (else 0 is passed) */
template <typename T, bool HX, bool HY, bool A, class Op>
__global__ void __launch_bounds__(kThreads)
    pointwise_kernel(long long n, Op op, const T *x, const T *y, T *w) {
  /* no __restrict__: scale/axpy/aypx pass w == x or w == y; each element is
   * read and written by the same thread, reads first */
  constexpr int W = Pack<T>::W;
  const long long np = n / W;
  const long long stride = (long long)gridDim.x * kThreads * kUnroll;
  for (long long p0 = (long long)blockIdx.x * kThreads * kUnroll + threadIdx.x; p0 < np;
       p0 += stride) {
    Pack<T> xv[kUnroll], yv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; u++) {
      const long long p = p0 + (long long)u * kThreads;
      if (p < np) {
        if (HX) xv[u] = ld<A>(x + p * W);
        if (HY) yv[u] = ld<A>(y + p * W);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; u++) {
      const long long p = p0 + (long long)u * kThreads;
      if (p < np) {
        Pack<T> r;
#pragma unroll
        for (int e = 0; e < W; e++) r.e[e] = op(HX ? xv[u].e[e] : T(0), HY ? yv[u].e[e] : T(0));
        st<A>(w + p * W, r);
      }
    }
  }
  const long long i = np * W + threadIdx.x;
  if (blockIdx.x == 0 && i < n) w[i] = op(HX ? x[i] : T(0), HY ? y[i] : T(0));
}

template <typename T, bool A>
__global__ void __launch_bounds__(kThreads) set_kernel(long long n, T a, T *__restrict__ x) {
  constexpr int W = Pack<T>::W;
  const long long np = n / W;
  const long long stride = (long long)gridDim.x * kThreads * kUnroll;
  Pack<T> r;
#pragma unroll
  for (int e = 0; e < W; e++) r.e[e] = a;
  for (long long p0 = (long long)blockIdx.x * kThreads * kUnroll + threadIdx.x; p0 < np;
       p0 += stride) {
#pragma unroll
    for (int u = 0; u < kUnroll; u++) {
      const long long p = p0 + (long long)u * kThreads;
      if (p < np) st<A>(x + p * W, r);
    }
  }
  const long long i = np * W + threadIdx.x;
  if (blockIdx.x == 0 && i < n) x[i] = a;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    gather_kernel(long long m, const int32_t *__restrict__ idx, const T *__restrict__ src,
                  T *__restrict__ dst) {
  const long long stride = (long long)gridDim.x * kThreads;
  for (long long i = (long long)blockIdx.x * kThreads + threadIdx.x; i < m; i += stride)
    dst[i] = __ldg(src + __ldg(idx + i));
}

/* ---- mdot ---- */
template <typename T> struct DotArgs { const T *x[COOP_RED_MAX], *y[COOP_RED_MAX]; };

/* Sum v over the block in a fixed tree: warp shuffles, then the warps' sums
 * in warp order by thread 0. Valid in thread 0. sh holds kThreads/32 values. */
__device__ __forceinline__ double block_sum(double v, double *sh) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads(); /* sh may still be read from the previous call */
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  double s = 0.0;
  if (threadIdx.x == 0)
    for (int i = 0; i < kThreads / 32; i++) s += sh[i];
  return s;
}

/* Add the products of pack p of the k pairs into acc. Every addition of a
 * product is an explicit fma, so both paths below round alike. */
template <typename T, int K, bool A>
__device__ __forceinline__ void dot_pack(const DotArgs<T> &args, unsigned same, long long p,
                                         double *acc) {
  constexpr int W = Pack<T>::W;
#pragma unroll
  for (int j = 0; j < K; j++) {
    const Pack<T> xv = ld<A>(args.x[j] + p * W);
    const Pack<T> yv = (same >> j & 1u) ? xv : ld<A>(args.y[j] + p * W);
#pragma unroll
    for (int e = 0; e < W; e++) acc[j] = fma((double)xv.e[e], (double)yv.e[e], acc[j]);
  }
}

/* The same additions as U calls of dot_pack (packs p0, p0 + kThreads, ...),
 * with all loads issued first. */
template <typename T, int K, bool A, int U>
__device__ __forceinline__ void dot_packs_batched(const DotArgs<T> &args, unsigned same,
                                                  long long p0, long long np, double *acc) {
  constexpr int W = Pack<T>::W;
  Pack<T> xv[K][U], yv[K][U];
#pragma unroll
  for (int u = 0; u < U; u++) {
    const long long p = p0 + (long long)u * kThreads;
    if (p < np)
#pragma unroll
      for (int j = 0; j < K; j++) {
        xv[j][u] = ld<A>(args.x[j] + p * W);
        yv[j][u] = (same >> j & 1u) ? xv[j][u] : ld<A>(args.y[j] + p * W);
      }
  }
#pragma unroll
  for (int u = 0; u < U; u++)
    if (p0 + (long long)u * kThreads < np)
#pragma unroll
      for (int j = 0; j < K; j++)
#pragma unroll
        for (int e = 0; e < W; e++)
          acc[j] = fma((double)xv[j][u].e[e], (double)yv[j][u].e[e], acc[j]);
}

/* Pass 1: block b writes partials[j * gridDim.x + b] = its share of dot j.
 * same: bit j set when x[j] == y[j] (a norm: read once). */
template <typename T, int K, bool A>
__global__ void __launch_bounds__(kThreads, 4)
    mdot_partial_kernel(long long n, DotArgs<T> args, unsigned same, double *partials) {
  __shared__ double sh[kThreads / 32];
  constexpr int W = Pack<T>::W;
  constexpr int U = kDotPacks;
  const long long np = n / W;
  const long long stride = (long long)gridDim.x * kThreads * U;
  double acc[K];
#pragma unroll
  for (int j = 0; j < K; j++) acc[j] = 0.0;
  for (long long p0 = (long long)blockIdx.x * kThreads * U + threadIdx.x; p0 < np; p0 += stride) {
    if constexpr (K > 2) {
#pragma unroll
      for (int u = 0; u < U; u++)
        if (p0 + (long long)u * kThreads < np)
          dot_pack<T, K, A>(args, same, p0 + (long long)u * kThreads, acc);
    } else {
      dot_packs_batched<T, K, A, U>(args, same, p0, np, acc);
    }
  }
  const long long i = np * W + threadIdx.x;
  if (blockIdx.x == 0 && i < n)
#pragma unroll
    for (int j = 0; j < K; j++) acc[j] = fma((double)args.x[j][i], (double)args.y[j][i], acc[j]);
#pragma unroll
  for (int j = 0; j < K; j++) {
    const double s = block_sum(acc[j], sh);
    if (threadIdx.x == 0) partials[(long long)j * gridDim.x + blockIdx.x] = s;
  }
}

/* Pass 2, one block: result[j] = sum over the nb partials of dot j, thread t
 * adding partials t, t + kThreads, ... then the block tree. */
__global__ void __launch_bounds__(kThreads)
    mdot_final_kernel(int k, int nb, const double *__restrict__ partials,
                      double *__restrict__ result) {
  __shared__ double sh[kThreads / 32];
  for (int j = 0; j < k; j++) {
    double v = 0.0;
    for (int b = threadIdx.x; b < nb; b += kThreads) v += partials[(long long)j * nb + b];
    const double s = block_sum(v, sh);
    if (threadIdx.x == 0) result[j] = s;
  }
}

template <typename T, bool HX, bool HY>
int launch_axpby(long long n, double a, const void *x, double b, const void *y, void *w,
                 cudaStream_t st) {
  const int nb = blocks_for(n / Pack<T>::W, kThreads * kUnroll);
  const T *xt = (const T *)x, *yt = (const T *)y;
  T *wt = (T *)w;
  if (aligned16(x) && aligned16(y) && aligned16(w))
    pointwise_kernel<T, HX, HY, true><<<nb, kThreads, 0, st>>>(n, AxpbyOp<T, HX, HY>{(T)a, (T)b}, xt, yt, wt);
  else
    pointwise_kernel<T, HX, HY, false><<<nb, kThreads, 0, st>>>(n, AxpbyOp<T, HX, HY>{(T)a, (T)b}, xt, yt, wt);
  COOP_CUDA_LAUNCHED();
  return 0;
}

template <typename T>
int axpby_t(long long n, double a, const void *x, double b, const void *y, void *w,
            cudaStream_t st) {
  if (x && y) return launch_axpby<T, true, true>(n, a, x, b, y, w, st);
  if (x) return launch_axpby<T, true, false>(n, a, x, b, y, w, st);
  if (y) return launch_axpby<T, false, true>(n, a, x, b, y, w, st);
  return launch_axpby<T, false, false>(n, a, x, b, y, w, st);
}

template <typename T>
int mult_t(long long n, const void *x, const void *y, void *w, cudaStream_t st) {
  const int nb = blocks_for(n / Pack<T>::W, kThreads * kUnroll);
  if (aligned16(x) && aligned16(y) && aligned16(w))
    pointwise_kernel<T, true, true, true><<<nb, kThreads, 0, st>>>(n, MultOp<T>{}, (const T *)x, (const T *)y, (T *)w);
  else
    pointwise_kernel<T, true, true, false><<<nb, kThreads, 0, st>>>(n, MultOp<T>{}, (const T *)x, (const T *)y, (T *)w);
  COOP_CUDA_LAUNCHED();
  return 0;
}

template <typename T> int set_t(long long n, double a, void *x, cudaStream_t st) {
  const int nb = blocks_for(n / Pack<T>::W, kThreads * kUnroll);
  if (aligned16(x))
    set_kernel<T, true><<<nb, kThreads, 0, st>>>(n, (T)a, (T *)x);
  else
    set_kernel<T, false><<<nb, kThreads, 0, st>>>(n, (T)a, (T *)x);
  COOP_CUDA_LAUNCHED();
  return 0;
}

template <typename T, int K>
void launch_mdot_partial(int nb, long long n, const DotArgs<T> &args, unsigned same, bool al,
                         double *partials, cudaStream_t st) {
  if (al)
    mdot_partial_kernel<T, K, true><<<nb, kThreads, 0, st>>>(n, args, same, partials);
  else
    mdot_partial_kernel<T, K, false><<<nb, kThreads, 0, st>>>(n, args, same, partials);
}

template <typename T>
int mdot_t(long long n, int k, const void *const x[], const void *const y[], double *partials,
           double *result, cudaStream_t st) {
  /* the grid depends on n only (and the fixed cap): the summation order too */
  long long nb = (n + kThreads * 4 - 1) / (kThreads * 4);
  if (nb > COOP_VEC_PARTIALS) nb = COOP_VEC_PARTIALS;
  if (nb < 1) nb = 1;
  DotArgs<T> args;
  unsigned same = 0;
  bool al = true;
  for (int j = 0; j < COOP_RED_MAX; j++) {
    args.x[j] = j < k ? (const T *)x[j] : NULL;
    args.y[j] = j < k ? (const T *)y[j] : NULL;
    if (j < k) {
      if (x[j] == y[j]) same |= 1u << j;
      al = al && aligned16(x[j]) && aligned16(y[j]);
    }
  }
  switch (k) {
  case 1:
    launch_mdot_partial<T, 1>((int)nb, n, args, same, al, partials, st);
    break;
  case 2:
    launch_mdot_partial<T, 2>((int)nb, n, args, same, al, partials, st);
    break;
  case 3:
    launch_mdot_partial<T, 3>((int)nb, n, args, same, al, partials, st);
    break;
  default:
    launch_mdot_partial<T, 4>((int)nb, n, args, same, al, partials, st);
    break;
  }
  COOP_CUDA_LAUNCHED();
  mdot_final_kernel<<<1, kThreads, 0, st>>>(k, (int)nb, partials, result);
  COOP_CUDA_LAUNCHED();
  return 0;
}

template <typename T>
int gather_t(long long m, const int32_t *idx, const void *src, void *dst, cudaStream_t st) {
  if (m <= 0) return 0;
  gather_kernel<T><<<blocks_for(m, kThreads), kThreads, 0, st>>>(m, idx, (const T *)src, (T *)dst);
  COOP_CUDA_LAUNCHED();
  return 0;
}

} // namespace

extern "C" {

int coop_vec_axpby_cuda(coop_precision p, int64_t n, double a, const void *x, double b,
                        const void *y, void *w, void *stream) {
  if (n <= 0) return 0;
  cudaStream_t st = (cudaStream_t)stream;
  return p == COOP_FP32 ? axpby_t<float>(n, a, x, b, y, w, st)
                        : axpby_t<double>(n, a, x, b, y, w, st);
}

int coop_vec_set_cuda(coop_precision p, int64_t n, double a, void *x, void *stream) {
  if (n <= 0) return 0;
  cudaStream_t st = (cudaStream_t)stream;
  return p == COOP_FP32 ? set_t<float>(n, a, x, st) : set_t<double>(n, a, x, st);
}

int coop_vec_mult_cuda(coop_precision p, int64_t n, const void *x, const void *y, void *w,
                       void *stream) {
  if (n <= 0) return 0;
  cudaStream_t st = (cudaStream_t)stream;
  return p == COOP_FP32 ? mult_t<float>(n, x, y, w, st) : mult_t<double>(n, x, y, w, st);
}

int coop_vec_mdot_cuda(coop_precision p, int64_t n, int k, const void *const x[],
                       const void *const y[], double *partials, double *result, void *stream) {
  if (k < 1 || k > COOP_RED_MAX)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_vec_mdot_cuda: %d dots (1 to %d)", k, COOP_RED_MAX);
  cudaStream_t st = (cudaStream_t)stream;
  return p == COOP_FP32 ? mdot_t<float>(n, k, x, y, partials, result, st)
                        : mdot_t<double>(n, k, x, y, partials, result, st);
}

int coop_vec_gather_cuda(coop_precision p, int64_t m, const int32_t *idx, const void *src,
                         void *dst, void *stream) {
  cudaStream_t st = (cudaStream_t)stream;
  return p == COOP_FP32 ? gather_t<float>(m, idx, src, dst, st)
                        : gather_t<double>(m, idx, src, dst, st);
}

/* Queue the copy of k results to (pinned) host memory; the caller records an
 * event after it (kernels/vec.c). */
int coop_vec_result_to_host_cuda(const double *dev, double *host, int k, void *stream) {
  COOP_CUDA(cudaMemcpyAsync(host, dev, (size_t)k * sizeof(double), cudaMemcpyDeviceToHost,
                            (cudaStream_t)stream));
  return 0;
}

} // extern "C"
