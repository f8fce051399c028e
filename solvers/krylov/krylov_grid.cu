/* The host side of the persistent Krylov kernels (solvers/krylov/krylov_grid.h): the
 * registry of methods, the rows' layout, work space, checkpoint state, grid size and
 * the cooperative launch. The kernels and the device code they share:
 * solvers/krylov/krylov_grid.cuh. */
#include "kernels/cuda_check.cuh"
#include "solvers/krylov/krylov_grid.cuh"

namespace {

constexpr int kVecAlign = 32; /* vector starts 256-byte aligned */

/* The registry: every method's kernels and sizes, each entry defined beside its
 * kernel (cg_grid.cu, ...). A new method adds its entry here, and nowhere else. */
const KgMethod *const kMethods[] = {&coop_kg_cg, &coop_kg_pipecg, &coop_kg_bicgstab, &coop_kg_cgsr};

/* m's entry; NULL: no such method. */
const KgMethod *method_of(coop_kg_method m) {
  for (const KgMethod *k : kMethods)
    if (k->m == m) return k;
  return nullptr;
}

/* Dynamic shared memory of the cached variant, bytes. */
size_t cache_bytes(const KgMethod &k, int threads) {
  return (size_t)k.cached * kCacheRows * threads * sizeof(double);
}

long long vec_stride(long long n) { return (n + kVecAlign - 1) / kVecAlign * kVecAlign; }

/* How the rows are dealt out (see Rows in krylov_grid.cuh): strips of `threads`
 * columns when the box is wide enough that at most 1/8 of the threads idle
 * on the last strip, else flat. chunk: rows (flat) or units (strips) a block;
 * steps: rows a thread walks, at most. */
struct Layout {
  int strips;
  long long chunk, steps;
};

Layout layout_of(const coop_kg_op *A, int blocks, int threads) {
  Layout L = {0, 0, 0};
  if (A->n <= 0) return L;
  if (A->kind == COOP_KG_STENCIL && A->nx > 0) {
    const long long s = (A->nx + threads - 1) / threads;
    if (8 * (s * threads - A->nx) <= s * threads) {
      L.strips = (int)s;
      L.chunk = (s * A->ny * A->nz + blocks - 1) / blocks;
      L.steps = L.chunk;
      return L;
    }
  }
  L.chunk = (A->n + blocks - 1) / blocks;
  L.steps = (L.chunk + threads - 1) / threads;
  return L;
}

/* The cached variant serves when every thread walks at most kCacheRows rows. */
bool cached_fits(const coop_kg_op *A, int blocks, int threads) {
  return layout_of(A, blocks, threads).steps <= kCacheRows;
}

int check_op(const coop_kg_op *A, coop_kg_method m) {
  if (!A) return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: no operator");
  if (!method_of(m)) return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: unknown method %d", (int)m);
  if (A->n < 0) return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: %lld unknowns", (long long)A->n);
  if (A->kind == COOP_KG_CSR) {
    if (A->n > 0 && (!A->rowptr || !A->colind || !A->val))
      return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: CSR operator without rowptr/colind/val");
    if (A->n > INT32_MAX)
      return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: %lld rows exceed 32-bit column indices",
                        (long long)A->n);
  } else if (A->kind == COOP_KG_STENCIL) {
    if (A->ndim != 2 && A->ndim != 3)
      return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: stencil of %d dimensions (2 or 3)", A->ndim);
    if (A->nx < 1 || A->ny < 1 || A->nz < 1 || (A->ndim == 2 && A->nz != 1) || A->nx > INT32_MAX ||
        A->ny > INT32_MAX || A->nz > INT32_MAX || A->n % A->nz != 0 || A->nx * A->ny != A->n / A->nz)
      return COOP_ERROR(COOP_ERR_RUNTIME,
                        "krylov_grid: stencil box %lld x %lld x %lld (ndim %d) does not hold %lld unknowns",
                        (long long)A->nx, (long long)A->ny, (long long)A->nz, A->ndim, (long long)A->n);
  } else {
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: unknown operator kind %d", (int)A->kind);
  }
  return 0;
}

/* Co-resident blocks of the kernel with smem bytes of dynamic shared memory on
 * device dev (0: no cooperative launch). The occupancy API asks the current
 * device, so switch to dev and back. */
int resident_blocks(void *fn, size_t smem, int dev, int *max_blocks) {
  int coop = 0, sms = 0, per_sm = 0, old;
  *max_blocks = 0;
  COOP_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  COOP_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  if (!coop) return 0;
  COOP_CUDA(cudaGetDevice(&old));
  if (old != dev) COOP_CUDA(cudaSetDevice(dev));
  cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, kThreads, smem);
  if (old != dev) COOP_CUDA(cudaSetDevice(old));
  COOP_CUDA(e);
  *max_blocks = per_sm * sms < kMaxBlocks ? per_sm * sms : kMaxBlocks;
  return 0;
}

}  // namespace

extern "C" size_t coop_kg_work_doubles(coop_kg_method m, int64_t n, int blocks) {
  const KgMethod *const k = method_of(m);
  const long long nn = n > 0 ? n : 0, nb = blocks > 0 ? blocks : 0;
  return (size_t)(k ? k->work_vectors : 0) * (size_t)vec_stride(nn) + (size_t)(2 * kMaxRed) * (size_t)nb;
}

extern "C" int coop_kg_state_of(coop_kg_method m, int64_t n, int pc, int odd, coop_kg_state *st) {
  if (!st) return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: NULL state");
  const KgMethod *const k = method_of(m);
  if (!k) return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: unknown method %d", (int)m);
  const long long stride = vec_stride(n > 0 ? n : 0);
  st->ns = k->ns;
  for (int j = 0; j < k->ns; j++) st->sname[j] = k->scalars[j];
  st->nv = 0;
  for (int j = 0; j < k->nc; j++) {
    const KgCarried &c = k->carried[j];
    if (c.pc_only && !pc) continue;
    st->vname[st->nv] = c.name;
    st->offset[st->nv++] = (size_t)c.v[odd ? 1 : 0] * (size_t)stride;
  }
  return 0;
}

extern "C" int coop_kg_barriers_per_iter(coop_kg_method m) {
  const KgMethod *const k = method_of(m);
  return k ? k->barriers_per_iter : 0;
}

extern "C" int coop_kg_max_blocks(const coop_kg_op *A, coop_kg_method m, int dev, int *blocks,
                                  int *threads) {
  if (!blocks || !threads || !A)
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: NULL operator, blocks or threads");
  *blocks = 0;
  *threads = kThreads;
  /* only the kind and method are needed; n (and the box) when given refine
   * the choice between the cached and the streamed variant */
  const KgMethod *const k = method_of(m);
  if (!k || (A->kind != COOP_KG_CSR && A->kind != COOP_KG_STENCIL))
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: unknown method %d or operator kind %d", (int)m,
                      (int)A->kind);
  void *const fn = k->kernel[A->kind];
  int b = 0;
  /* the cached variant's shared memory may lower occupancy: ask for it first
   * and keep it if the problem fits that grid */
  COOP_CHECK(resident_blocks(fn, cache_bytes(*k, kThreads), dev, &b));
  if (b > 0 && cached_fits(A, b, kThreads)) {
    *blocks = b;
    return 0;
  }
  COOP_CHECK(resident_blocks(fn, 0, dev, &b));
  *blocks = b;
  return 0;
}

extern "C" int coop_kg_default_blocks(const coop_kg_op *A, coop_kg_method m, int dev, int *blocks,
                                      int *threads) {
  int most = 0, sms = 0;
  COOP_CHECK(coop_kg_max_blocks(A, m, dev, &most, threads));
  *blocks = most;
  if (most < 1 || A->n <= 0) return 0;
  COOP_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  /* the fewest whole waves of SMs for which the cached variant fits: barriers
   * and partial sums cost less on fewer blocks */
  for (int b = sms; b < most; b += sms)
    if (cached_fits(A, b, *threads)) {
      *blocks = b;
      break;
    }
  return 0;
}

extern "C" int coop_kg_solve(const coop_kg_op *A, const coop_kg_args *a, const double *b, double *x,
                             double *work, coop_kg_result *res, int blocks, int threads,
                             void *stream) {
  if (!a || !b || !x || !work || !res)
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: NULL args, b, x, work or result");
  COOP_CHECK(check_op(A, a->method));
  const KgMethod &k = *method_of(a->method);
  if (a->hist_cap > 0 && (!a->hist_iter || !a->hist_res))
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: history of %lld entries without arrays",
                      (long long)a->hist_cap);
  if (threads < 32 || threads > kThreads || threads % 32)
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: %d threads a block (a multiple of 32, at most %d)",
                      threads, kThreads);
  if (blocks < 1 || blocks > kMaxBlocks)
    return COOP_ERROR(COOP_ERR_RUNTIME, "krylov_grid: %d blocks (1 to %d)", blocks, kMaxBlocks);
  const Layout lay = layout_of(A, blocks, threads);
  const bool cached = lay.steps <= kCacheRows;
  const size_t smem = cached ? cache_bytes(k, threads) : 0;
  void *const fn = k.kernel[A->kind];
  int dev, most;
  COOP_CUDA(cudaGetDevice(&dev));
  COOP_CHECK(resident_blocks(fn, smem, dev, &most)); /* also sets the shared-memory limit */
  if (blocks > most)
    return COOP_ERROR(COOP_ERR_RUNTIME,
                      "krylov_grid: %d blocks requested, at most %d can be resident at once on "
                      "device %d (coop_kg_max_blocks)", blocks, most, dev);

  Params P = {};
  P.n = A->n;
  P.chunk = lay.chunk;
  P.strips = lay.strips;
  P.cached = cached;
  P.rowptr = A->rowptr;
  P.colind = A->colind;
  P.val = A->val;
  P.nx = P.ny = P.nz = 1;
  if (A->kind == COOP_KG_STENCIL) {
    P.nx = (int)A->nx;
    P.ny = (int)A->ny;
    P.nz = (int)A->nz;
    P.dim3 = A->ndim == 3;
    P.w0 = A->w[0];
    P.w1 = A->w[1];
    P.w2 = A->w[2];                               /* used in 3D only */
    P.diag = 2.0 * (A->w[0] + A->w[1] + A->w[2]); /* kernels/stencil.h (w[2] = 0 in 2D) */
  }
  P.d = A->inv_diag;
  P.b = b;
  P.x = x;
  const long long stride = vec_stride(A->n);
  for (int j = 0; j < k.work_vectors; j++) P.v[j] = work + (size_t)j * stride;
  P.part = work + (size_t)k.work_vectors * stride;
  P.max_iter = a->max_iter;
  P.rtol = a->rtol;
  P.atol = a->atol;
  P.dtol = a->dtol;
  P.hist_cap = a->hist_cap > 0 ? a->hist_cap : 0;
  P.hist_iter = a->hist_iter;
  P.hist_res = a->hist_res;
  P.res = res;
  P.stop_at = a->stop_at;
  P.resume = a->resume;
  void *args[] = {&P};
  COOP_CUDA(cudaLaunchCooperativeKernel(fn, dim3(blocks), dim3(threads), args, smem,
                                        (cudaStream_t)stream));
  return 0;
}
