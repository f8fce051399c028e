/* Sparse matrix-vector product on the GPU (fp64), balanced for uneven rows.
 * The plan, chosen at create from the row lengths, is one of:
 *
 *  vector (regular rows: longest <= 4 x mean, mean <= 32): tpr = 2^k threads
 *    per row, tpr ~ mean / 2, lanes of a row stride its nonzeros and add them
 *    in a fixed shuffle tree;
 *  merge path (skewed rows): the merge of the row ends with the nonzero
 *    indices (nrows + nnz steps, each "add a nonzero" or "finish a row") is
 *    cut into chunks of kMpItems steps, one block each, so a block does the
 *    same work whether its chunk lies in one dense row or in many short or
 *    empty ones. The plan holds every chunk's starting row, found once by a
 *    binary search of rowptr along the chunk's diagonal. Inside a block each
 *    thread walks kMpIpt steps; a row split between threads is joined through
 *    shared memory, a row split between chunks by a second kernel that adds
 *    each chunk's carry-out (the partial sum of its last, unfinished row) to
 *    that row in chunk order.
 *
 * No floating-point atomics anywhere: every sum has a fixed order that
 * depends on the matrix only, so reruns repeat every bit. */
#include <stdint.h>
#include <stdlib.h>

#include "kernels/csr.h"
#include "kernels/cuda_check.cuh"

namespace {

constexpr int kThreads = 256; /* vector kernel and fix-up */
/* Merge path: 128 threads x 8 steps per chunk was the fastest shape tried
 * over uniform, power-law and long-row matrices, and close to the vector
 * kernel where both apply (measured: see bench/results/). */
constexpr int kMpThreads = 128;
constexpr int kMpIpt = 8;
constexpr int kMpItems = kMpThreads * kMpIpt;
constexpr int kFixUnroll = 8; /* fix-up: loads per lane per step */
constexpr int kMaxBlocks = 1 << 30;

struct Plan {
  int tpr;              /* > 0: vector kernel; 0: merge path */
  long long nchunks;    /* merge path: chunks of kMpItems steps */
  long long *chunk_row; /* nchunks + 1: row at each chunk's first step (device) */
  long long *carry_row; /* nchunks: row of the carry-out, -1 for none (device) */
  double *carry_val;    /* nchunks: the carry-out (device) */
};

struct Mat {
  long long nrows, nnz;
  const int64_t *__restrict__ rp;
  const int32_t *__restrict__ ci;
  const double *__restrict__ v;
  const int32_t *__restrict__ rows;
};

Mat mat_of(const coop_csr *A) {
  Mat m = {A->nrows, A->nnz, A->rowptr, A->colind, A->val, A->rows};
  return m;
}

int blocks_for(long long work, int per_block) {
  long long b = (work + per_block - 1) / per_block;
  if (b < 1) b = 1;
  return (int)(b < kMaxBlocks ? b : kMaxBlocks);
}

/* y's entry of CSR row r gets s: stored, or added (add). */
__device__ __forceinline__ void put(const Mat &A, double *y, long long r, double s, int add) {
  const long long q = A.rows ? (long long)__ldg(A.rows + r) : r;
  y[q] = add ? y[q] + s : s;
}

/* ---- vector kernel ----
 * Lanes g*tpr .. g*tpr + tpr-1 of a warp share a row. The loop is uniform
 * over the warp (rows past the end add nothing), so the shuffles see every
 * lane. */
template <int TPR>
__global__ void __launch_bounds__(kThreads)
    spmv_vector(Mat A, const double *__restrict__ x, double *__restrict__ y, int add) {
  constexpr int kRowsPerWarp = 32 / TPR;
  const int lane = threadIdx.x & 31;
  const long long warp = ((long long)blockIdx.x * kThreads + threadIdx.x) >> 5;
  const long long stride = (long long)gridDim.x * (kThreads / 32) * kRowsPerWarp;
  for (long long base = warp * kRowsPerWarp; base < A.nrows; base += stride) {
    const long long r = base + lane / TPR;
    double s = 0.0;
    if (r < A.nrows) {
      const long long end = __ldg(A.rp + r + 1);
      for (long long j = __ldg(A.rp + r) + lane % TPR; j < end; j += TPR)
        s += __ldg(A.v + j) * __ldg(x + __ldg(A.ci + j));
    }
#pragma unroll
    for (int o = TPR / 2; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o, TPR);
    if (r < A.nrows && lane % TPR == 0) put(A, y, r, s, add);
  }
}

/* ---- merge path ---- */

/* Steps along the path before diagonal d: the number of finished rows, i.e.
 * the smallest i with rowend(i) > d - i - 1 (a row's end wins a tie with a
 * nonzero index, so a row is finished before the next row's nonzeros). */
__device__ __forceinline__ long long path_search_global(long long d, const int64_t *rp,
                                                        long long nrows, long long nnz) {
  long long lo = d - nnz > 0 ? d - nnz : 0, hi = d < nrows ? d : nrows;
  while (lo < hi) {
    const long long p = (lo + hi) >> 1;
    if (__ldg(rp + p + 1) <= d - p - 1)
      lo = p + 1;
    else
      hi = p;
  }
  return lo;
}

/* The same search inside a chunk: rowend[k] = end of the chunk's row k, the
 * nonzeros numbered from j0, na rows and nb nonzeros in the chunk. */
__device__ __forceinline__ int path_search_tile(int d, const long long *rowend, long long j0,
                                                int na, int nb) {
  int lo = d - nb > 0 ? d - nb : 0, hi = d < na ? d : na;
  while (lo < hi) {
    const int p = (lo + hi) >> 1;
    if (rowend[p] <= j0 + d - p - 1)
      lo = p + 1;
    else
      hi = p;
  }
  return lo;
}

__global__ void merge_plan(Mat A, long long nchunks, long long *__restrict__ chunk_row) {
  const long long total = A.nrows + A.nnz;
  const long long stride = (long long)gridDim.x * kThreads;
  for (long long c = (long long)blockIdx.x * kThreads + threadIdx.x; c <= nchunks; c += stride) {
    const long long d = c * kMpItems < total ? c * kMpItems : total;
    chunk_row[c] = path_search_global(d, A.rp, A.nrows, A.nnz);
  }
}

/* One chunk per block (grid-stride). Rows finished in the chunk are written;
 * the partial sum of the row the chunk ends in is its carry-out. */
__global__ void __launch_bounds__(kMpThreads)
    spmv_merge(Mat A, const long long *__restrict__ chunk_row, long long nchunks,
               const double *__restrict__ x, double *__restrict__ y, int add,
               long long *__restrict__ carry_row, double *__restrict__ carry_val) {
  __shared__ double s_prod[kMpItems];
  __shared__ long long s_rowend[kMpItems + 1];
  __shared__ int s_crow[kMpThreads];
  __shared__ double s_cval[kMpThreads];
  __shared__ double s_warp[kMpThreads / 32];
  const int t = threadIdx.x;
  const long long total = A.nrows + A.nnz;
  for (long long c = blockIdx.x; c < nchunks; c += gridDim.x) {
    const long long d0 = c * kMpItems, d1 = d0 + kMpItems < total ? d0 + kMpItems : total;
    const long long i0 = chunk_row[c], i1 = chunk_row[c + 1];
    const long long j0 = d0 - i0, j1 = d1 - i1;
    const int na = (int)(i1 - i0), nb = (int)(j1 - j0), items = (int)(d1 - d0);

    /* the chunk's products and row ends, loaded coalesced: all loads into
     * registers first (a store to shared memory between them would keep the
     * compiler from overlapping the gathers, as it cannot tell the spaces apart) */
    int col[kMpIpt];
    double prod[kMpIpt];
    long long end[kMpIpt + 1];
#pragma unroll
    for (int u = 0; u < kMpIpt; u++) {
      const int k = t + u * kMpThreads;
      col[u] = k < nb ? __ldg(A.ci + j0 + k) : 0;
    }
#pragma unroll
    for (int u = 0; u <= kMpIpt; u++) {
      const int k = t + u * kMpThreads;
      end[u] = k <= na && i0 + k < A.nrows ? __ldg(A.rp + i0 + k + 1) : A.nnz;
    }
#pragma unroll
    for (int u = 0; u < kMpIpt; u++) {
      const int k = t + u * kMpThreads;
      prod[u] = k < nb ? __ldg(A.v + j0 + k) * __ldg(x + col[u]) : 0.0;
    }
#pragma unroll
    for (int u = 0; u < kMpIpt; u++)
      if (t + u * kMpThreads < nb) s_prod[t + u * kMpThreads] = prod[u];
#pragma unroll
    for (int u = 0; u <= kMpIpt; u++)
      if (t + u * kMpThreads <= na) s_rowend[t + u * kMpThreads] = end[u];
    __syncthreads();

    /* this thread's steps: a row finished after one finished here is whole */
    const int dt = t * kMpIpt < items ? t * kMpIpt : items;
    int xa = path_search_tile(dt, s_rowend, j0, na, nb), yb = dt - xa;
    int first_row = -1;
    double run = 0.0, first_val = 0.0;
    for (int it = 0; it < kMpIpt && dt + it < items; it++) {
      if (yb < nb && j0 + yb < s_rowend[xa]) {
        run += s_prod[yb++];
      } else {
        if (first_row < 0)
          first_row = xa, first_val = run;
        else
          put(A, y, i0 + xa, run, add);
        run = 0.0;
        xa++;
      }
    }
    s_crow[t] = xa; /* the row this thread ends in, and its partial sum */
    s_cval[t] = run;
    __syncthreads();

    /* the first row finished here began in the threads before (whose end
     * rows are this row: rows only grow along the path) or in earlier chunks
     * (the fix-up adds those) */
    if (first_row >= 0) {
      double pre = 0.0;
      for (int u = t - 1; u >= 0 && s_crow[u] == first_row; u--) pre += s_cval[u];
      put(A, y, i0 + first_row, pre + first_val, add);
    }

    /* carry-out: the sum over the threads that end in the chunk's last row,
     * in a fixed tree (the others add 0) */
    double v = s_crow[t] == na ? s_cval[t] : 0.0;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((t & 31) == 0) s_warp[t >> 5] = v;
    __syncthreads();
    if (t == 0) {
      double s = 0.0;
      for (int w = 0; w < kMpThreads / 32; w++) s += s_warp[w];
      /* the chunk holds nonzeros of row i1 when it ends past that row's start */
      const long long start = na > 0 ? s_rowend[na - 1] : j0;
      const bool has = i1 < A.nrows && j1 > start;
      carry_row[c] = has ? i1 : -1;
      carry_val[c] = has ? s : 0.0;
    }
    __syncthreads(); /* shared memory is refilled for the next chunk */
  }
}

/* One thread per chunk c. A chunk carrying into a row no earlier chunk
 * carries into heads a run (runs are contiguous: the row of a chunk's end
 * never decreases along the path). A run of one chunk (a row shorter than a
 * chunk: the common case) is added by its thread; a longer run (a row over
 * several chunks) by the whole warp, lane l taking c + l, c + l + 32, ...,
 * then a fixed tree. Runs after spmv_merge on the same stream, so the rows'
 * own parts are in y. */
__global__ void __launch_bounds__(kThreads)
    spmv_fixup(long long nchunks, const long long *__restrict__ carry_row,
               const double *__restrict__ carry_val, const int32_t *__restrict__ rows,
               double *__restrict__ y) {
  const int lane = threadIdx.x & 31;
  const long long stride = (long long)gridDim.x * kThreads;
  /* the loop is uniform over the block: every lane reaches the ballot */
  for (long long base = (long long)blockIdx.x * kThreads; base < nchunks; base += stride) {
    const long long c = base + threadIdx.x;
    long long r = -1;
    bool head = false, single = false;
    if (c < nchunks) {
      r = carry_row[c];
      head = r >= 0 && (c == 0 || carry_row[c - 1] != r);
      single = head && (c + 1 == nchunks || carry_row[c + 1] != r);
    }
    if (single) y[rows ? (long long)rows[r] : r] += carry_val[c];
    unsigned long_heads = __ballot_sync(0xffffffffu, head && !single);
    while (long_heads) {
      const int src = __ffs(long_heads) - 1;
      long_heads &= long_heads - 1;
      const long long hc = __shfl_sync(0xffffffffu, c, src), hr = __shfl_sync(0xffffffffu, r, src);
      /* 8 loads per lane in flight per step: a row over thousands of chunks
       * takes a few steps, not one round trip per 32 chunks. Chunks past the
       * run never carry into its row again, so any match belongs to it. */
      double s = 0.0;
      for (long long b = hc;; b += 32 * kFixUnroll) {
        long long rr[kFixUnroll];
        double vv[kFixUnroll];
        bool all_in = true;
#pragma unroll
        for (int m = 0; m < kFixUnroll; m++) {
          const long long e = b + lane + 32 * m;
          rr[m] = e < nchunks ? carry_row[e] : -1;
          vv[m] = e < nchunks ? carry_val[e] : 0.0;
        }
#pragma unroll
        for (int m = 0; m < kFixUnroll; m++) {
          if (rr[m] == hr) s += vv[m];
          all_in = all_in && rr[m] == hr;
        }
        if (!__all_sync(0xffffffffu, all_in)) break;
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
      if (lane == 0) y[rows ? (long long)rows[hr] : hr] += s;
    }
  }
}

/* Threads per row for the vector kernel from the mean row length (x 100):
 * 1 up to 2 nonzeros, 2 up to 4, ... 32 beyond 32. */
int threads_per_row(long long mean_x100) {
  int tpr = 1;
  while (tpr < 32 && mean_x100 > 200LL * tpr) tpr *= 2;
  return tpr;
}

bool regular(const coop_csr *A) {
  return A->max_row * 100 <= 4 * A->mean_row_x100 && A->mean_row_x100 <= 3200;
}

template <int TPR>
int launch_vector(const coop_csr *A, const double *x, double *y, int add, cudaStream_t st) {
  const int nb = blocks_for(A->nrows, kThreads / TPR);
  spmv_vector<TPR><<<nb, kThreads, 0, st>>>(mat_of(A), x, y, add);
  COOP_CUDA_LAUNCHED();
  return 0;
}

int spmv_merge_path(const coop_csr *A, const Plan *p, const double *x, double *y, int add,
                    cudaStream_t st) {
  const int nb = (int)(p->nchunks < kMaxBlocks ? p->nchunks : kMaxBlocks);
  spmv_merge<<<nb, kMpThreads, 0, st>>>(mat_of(A), p->chunk_row, p->nchunks, x, y, add,
                                        p->carry_row, p->carry_val);
  COOP_CUDA_LAUNCHED();
  spmv_fixup<<<blocks_for(p->nchunks, kThreads), kThreads, 0, st>>>(p->nchunks, p->carry_row,
                                                                    p->carry_val, A->rows, y);
  COOP_CUDA_LAUNCHED();
  return 0;
}

} // namespace

extern "C" {

int coop_csr_plan_cuda(coop_csr *A) {
  coop_backend *be = A->be;
  Plan *p = (Plan *)calloc(1, sizeof *p);
  if (!p) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  A->plan = p;
  if (regular(A)) {
    p->tpr = threads_per_row(A->mean_row_x100);
    return 0;
  }
  const long long total = A->nrows + A->nnz;
  p->nchunks = (total + kMpItems - 1) / kMpItems;
  const size_t nc = (size_t)p->nchunks;
  COOP_CHECK(be->alloc(be, (void **)&p->chunk_row, (nc + 1) * sizeof(long long)));
  COOP_CHECK(be->alloc(be, (void **)&p->carry_row, nc * sizeof(long long)));
  COOP_CHECK(be->alloc(be, (void **)&p->carry_val, nc * sizeof(double)));
  merge_plan<<<blocks_for(p->nchunks + 1, kThreads), kThreads, 0, (cudaStream_t)be->stream>>>(
      mat_of(A), p->nchunks, p->chunk_row);
  COOP_CUDA_LAUNCHED();
  return 0;
}

void coop_csr_plan_free_cuda(coop_csr *A) {
  Plan *p = (Plan *)A->plan;
  if (!p) return;
  A->be->release(A->be, p->chunk_row);
  A->be->release(A->be, p->carry_row);
  A->be->release(A->be, p->carry_val);
  free(p);
  A->plan = NULL;
}

int coop_csr_spmv_cuda(const coop_csr *A, const double *x, double *y, int add) {
  const Plan *p = (const Plan *)A->plan;
  cudaStream_t st = (cudaStream_t)A->be->stream;
  if (!p) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_csr_spmv_cuda: matrix without a plan");
  if (A->nrows == 0) return 0;
  switch (p->tpr) {
  case 0:
    return spmv_merge_path(A, p, x, y, add, st);
  case 1:
    return launch_vector<1>(A, x, y, add, st);
  case 2:
    return launch_vector<2>(A, x, y, add, st);
  case 4:
    return launch_vector<4>(A, x, y, add, st);
  case 8:
    return launch_vector<8>(A, x, y, add, st);
  case 16:
    return launch_vector<16>(A, x, y, add, st);
  default:
    return launch_vector<32>(A, x, y, add, st);
  }
}

} // extern "C"
