// Vendor-library baselines for fp64 conjugate gradient (no preconditioner):
// the solver a user would write with cuSPARSE + cuBLAS, two ways.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o krylov_vendor bench/krylov_vendor.cu -lcusparse -lcublas
//
//   krylov_vendor (--poisson2d N | --mtx PATH) [--iters N] [--warmup N]
//                 [--method percall|graph|both] [--copybw]
//   krylov_vendor --copybw
//
// percall: cusparseSpMV (CSR, CUSPARSE_SPMV_CSR_ALG1, buffer allocated once)
//          and cuBLAS ddot/daxpy/dscal/dcopy with host-side scalars
//          (CUBLAS_POINTER_MODE_HOST), one library call per operation:
//            q = A p; alpha = rr/(p,q); x += alpha p; r -= alpha q;
//            rr_new = (r,r); beta = rr_new/rr; p = beta p (dscal); p += r (daxpy)
//          Each ddot returns its scalar to the host, so the host waits twice
//          per iteration.
// graph:   the same iteration with device-side scalars (pointer mode DEVICE in
//          cuBLAS and cuSPARSE); one-thread kernels form alpha, -alpha, beta;
//          p = r + beta p is one small kernel. One iteration is captured into
//          a CUDA graph once and the graph is launched repeatedly; no host
//          synchronisation inside the loop.
// Both: b = A*ones, x0 = 0, no stopping test; `--warmup` (default 20)
// iterations, then `--iters` (default 200) timed with CUDA events. At the end
// the true relative residual ||b - A x|| / ||b|| is computed with a separate
// SpMV and printed (exit 1 if it is NaN or Inf). Should CG reach an exact zero
// residual before the end, alpha and beta are set to 0 instead of 0/0, so the
// remaining iterations do the same work without producing NaN.
//
// --copybw: device-to-device cudaMemcpyAsync of a 1 GiB buffer, best of 10,
// counting bytes read + written (2 GiB per copy); the ceiling for a
// bytes-moved floor.
//
// Output: one line per measurement, whitespace-separated key=value:
//   method=percall problem=poisson2d:1024 n=1048576 nnz=5238784 iters=200 us_per_iter=123.4 relres=1.2e-03
//   copybw_GBps=4300.1
// Exit status: 0 ok, 1 CUDA/library error or NaN residual, 2 bad usage/input.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_check.cuh"

#define CUSPARSE_CHECK(call) BENCH_CHECK(call, cusparseStatus_t, CUSPARSE_STATUS_SUCCESS, cusparseGetErrorString)
#define CUBLAS_CHECK(call) BENCH_CHECK(call, cublasStatus_t, CUBLAS_STATUS_SUCCESS, cublasGetStatusString)

[[noreturn]] static void die_input(const std::string &msg) {
  std::fprintf(stderr, "krylov_vendor: %s\n", msg.c_str());
  std::exit(2);
}

// ---------------------------------------------------------------- host CSR --

struct Csr {
  int n = 0;
  std::vector<int> rowptr;  // n+1
  std::vector<int> col;     // nnz
  std::vector<double> val;  // nnz
  int64_t nnz() const { return static_cast<int64_t>(col.size()); }
};

// 5-point Laplacian on an N x N interior grid, Dirichlet: 4 on the diagonal,
// -1 for each neighbour inside the grid. Row k = i*N + j; columns ascending.
static Csr poisson2d(long long N) {
  if (N < 1) die_input("--poisson2d: N must be >= 1");
  const long long n = N * N, nnz = 5 * n - 4 * N;
  if (nnz > INT32_MAX) die_input("--poisson2d: N too large for 32-bit CSR indices");
  Csr A;
  A.n = static_cast<int>(n);
  A.rowptr.resize(n + 1);
  A.col.reserve(nnz);
  A.val.reserve(nnz);
  A.rowptr[0] = 0;
  for (long long i = 0; i < N; ++i)
    for (long long j = 0; j < N; ++j) {
      const long long k = i * N + j;
      if (i > 0) { A.col.push_back(static_cast<int>(k - N)); A.val.push_back(-1.0); }
      if (j > 0) { A.col.push_back(static_cast<int>(k - 1)); A.val.push_back(-1.0); }
      A.col.push_back(static_cast<int>(k)); A.val.push_back(4.0);
      if (j < N - 1) { A.col.push_back(static_cast<int>(k + 1)); A.val.push_back(-1.0); }
      if (i < N - 1) { A.col.push_back(static_cast<int>(k + N)); A.val.push_back(-1.0); }
      A.rowptr[k + 1] = static_cast<int>(A.col.size());
    }
  if (static_cast<long long>(A.col.size()) != nnz) die_input("internal: poisson2d nnz mismatch");
  return A;
}

static std::string lower(std::string s) {
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Matrix Market: "coordinate" with real|integer|pattern and general|symmetric.
// Symmetric files are expanded, duplicate entries are summed. Square only.
static Csr read_mtx(const char *path) {
  FILE *f = std::fopen(path, "r");
  if (!f) die_input(std::string("cannot open ") + path + ": " + std::strerror(errno));
  std::vector<char> buf(1 << 16);
  auto read_line = [&](std::string &out) -> bool {
    out.clear();
    while (std::fgets(buf.data(), static_cast<int>(buf.size()), f)) {
      out += buf.data();
      if (!out.empty() && out.back() == '\n') break;
    }
    if (out.empty()) return false;
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return true;
  };
  std::string line;
  if (!read_line(line)) die_input(std::string(path) + ": empty file");
  char w[5][64] = {};
  if (std::sscanf(line.c_str(), "%63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4]) != 5 ||
      lower(w[0]) != "%%matrixmarket" || lower(w[1]) != "matrix")
    die_input(std::string(path) + ": not a Matrix Market matrix header: " + line);
  const std::string format = lower(w[2]), field = lower(w[3]), symm = lower(w[4]);
  if (format != "coordinate")
    die_input(std::string(path) + ": unsupported format '" + format + "' (coordinate only)");
  if (field != "real" && field != "integer" && field != "pattern")
    die_input(std::string(path) + ": unsupported field '" + field + "' (real|integer|pattern)");
  if (symm != "general" && symm != "symmetric")
    die_input(std::string(path) + ": unsupported symmetry '" + symm + "' (general|symmetric)");
  const bool pattern = field == "pattern", symmetric = symm == "symmetric";

  long long M = -1, N = -1, L = -1;
  while (read_line(line)) {
    size_t p = line.find_first_not_of(" \t\r\n");
    if (p == std::string::npos || line[p] == '%') continue;
    if (std::sscanf(line.c_str(), "%lld %lld %lld", &M, &N, &L) != 3)
      die_input(std::string(path) + ": bad size line: " + line);
    break;
  }
  if (M < 0) die_input(std::string(path) + ": missing size line");
  if (M != N) die_input(std::string(path) + ": matrix is not square");
  if (M < 1 || L < 0) die_input(std::string(path) + ": bad sizes");
  if (M > INT32_MAX || (symmetric ? 2 * L : L) > INT32_MAX)
    die_input(std::string(path) + ": too large for 32-bit CSR indices");

  struct Ent { int r, c; double v; };
  std::vector<Ent> e;
  e.reserve(symmetric ? 2 * L : L);
  long long seen = 0;
  while (seen < L && read_line(line)) {
    size_t p = line.find_first_not_of(" \t\r\n");
    if (p == std::string::npos || line[p] == '%') continue;
    const char *s = line.c_str();
    char *end = nullptr;
    errno = 0;
    long long i = std::strtoll(s, &end, 10);
    if (end == s) die_input(std::string(path) + ": bad entry: " + line);
    s = end;
    long long j = std::strtoll(s, &end, 10);
    if (end == s) die_input(std::string(path) + ": bad entry: " + line);
    s = end;
    double v = 1.0;
    if (!pattern) {
      v = std::strtod(s, &end);
      if (end == s) die_input(std::string(path) + ": bad entry: " + line);
    }
    if (errno == ERANGE) die_input(std::string(path) + ": value out of range: " + line);
    if (i < 1 || i > M || j < 1 || j > N)
      die_input(std::string(path) + ": index out of range: " + line);
    e.push_back({static_cast<int>(i - 1), static_cast<int>(j - 1), v});
    if (symmetric && i != j) e.push_back({static_cast<int>(j - 1), static_cast<int>(i - 1), v});
    ++seen;
  }
  std::fclose(f);
  if (seen != L)
    die_input(std::string(path) + ": expected " + std::to_string(L) + " entries, found " +
              std::to_string(seen));

  std::sort(e.begin(), e.end(),
            [](const Ent &a, const Ent &b) { return a.r != b.r ? a.r < b.r : a.c < b.c; });
  Csr A;
  A.n = static_cast<int>(M);
  A.rowptr.assign(M + 1, 0);
  A.col.reserve(e.size());
  A.val.reserve(e.size());
  for (size_t k = 0; k < e.size(); ++k) {
    if (!A.col.empty() && k > 0 && e[k].r == e[k - 1].r && e[k].c == e[k - 1].c) {
      A.val.back() += e[k].v;  // duplicate: sum
      continue;
    }
    A.col.push_back(e[k].c);
    A.val.push_back(e[k].v);
    A.rowptr[e[k].r + 1]++;
  }
  for (long long r = 0; r < M; ++r) A.rowptr[r + 1] += A.rowptr[r];
  return A;
}

// ------------------------------------------------------------ device kernels --

// alpha = rr / (p,q); -alpha for the r update. 0 instead of a non-finite value.
__global__ void k_alpha(const double *rr, const double *pq, double *alpha, double *nalpha) {
  double a = *rr / *pq;
  if (!isfinite(a)) a = 0.0;
  *alpha = a;
  *nalpha = -a;
}

// beta = rr_new / rr; rr = rr_new. 0 instead of a non-finite value.
__global__ void k_beta(double *rr, const double *rr_new, double *beta) {
  double b = *rr_new / *rr;
  if (!isfinite(b)) b = 0.0;
  *beta = b;
  *rr = *rr_new;
}

// p = r + beta p
__global__ void k_xpby(int n, const double *__restrict__ r, const double *__restrict__ beta,
                       double *__restrict__ p) {
  const double b = *beta;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = r[i] + b * p[i];
}

__global__ void k_fill(int n, double v, double *x) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] = v;
}

// ------------------------------------------------------------------ solver --

struct Ctx {
  int n = 0;
  int64_t nnz = 0;
  cudaStream_t stream = nullptr;
  cusparseHandle_t sp = nullptr;
  cublasHandle_t bl = nullptr;
  cusparseSpMatDescr_t A = nullptr;
  cusparseDnVecDescr_t vp = nullptr, vq = nullptr, vx = nullptr, vt = nullptr, vones = nullptr,
                       vb = nullptr;
  int *d_rowptr = nullptr, *d_col = nullptr;
  double *d_val = nullptr;
  double *b = nullptr, *x = nullptr, *r = nullptr, *p = nullptr, *q = nullptr, *t = nullptr;
  void *spmv_buf = nullptr;
  void *blas_ws = nullptr;
  size_t blas_ws_size = 0;
  // device scalars: [0] one, [1] zero, [2] rr, [3] pq, [4] rr_new, [5] alpha,
  // [6] -alpha, [7] beta
  double *ds = nullptr;
  int xpby_blocks = 0;
};

enum { S_ONE, S_ZERO, S_RR, S_PQ, S_RRNEW, S_ALPHA, S_NALPHA, S_BETA, S_COUNT };

static void set_pointer_mode(Ctx &c, bool device) {
  CUBLAS_CHECK(cublasSetPointerMode(c.bl, device ? CUBLAS_POINTER_MODE_DEVICE
                                                 : CUBLAS_POINTER_MODE_HOST));
  CUSPARSE_CHECK(cusparseSetPointerMode(c.sp, device ? CUSPARSE_POINTER_MODE_DEVICE
                                                     : CUSPARSE_POINTER_MODE_HOST));
}

// y = alpha A x + beta y with host scalars (handle must be in host mode)
static void spmv_host(Ctx &c, double alpha, cusparseDnVecDescr_t x, double beta,
                      cusparseDnVecDescr_t y) {
  CUSPARSE_CHECK(cusparseSpMV(c.sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, c.A, x, &beta, y,
                              CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, c.spmv_buf));
}

static void setup(Ctx &c, const Csr &H) {
  c.n = H.n;
  c.nnz = H.nnz();
  const size_t vb = sizeof(double) * static_cast<size_t>(c.n);
  CK(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
  CUSPARSE_CHECK(cusparseCreate(&c.sp));
  CUSPARSE_CHECK(cusparseSetStream(c.sp, c.stream));
  CUBLAS_CHECK(cublasCreate(&c.bl));
  CUBLAS_CHECK(cublasSetStream(c.bl, c.stream));
  // A user-owned cuBLAS workspace, so nothing is allocated during capture.
  // Set after cublasSetStream, which resets the workspace to the default pool.
  c.blas_ws_size = 32u << 20;
  CK(cudaMalloc(&c.blas_ws, c.blas_ws_size));
  CUBLAS_CHECK(cublasSetWorkspace(c.bl, c.blas_ws, c.blas_ws_size));

  CK(cudaMalloc(&c.d_rowptr, sizeof(int) * (static_cast<size_t>(c.n) + 1)));
  CK(cudaMalloc(&c.d_col, sizeof(int) * std::max<size_t>(1, H.col.size())));
  CK(cudaMalloc(&c.d_val, sizeof(double) * std::max<size_t>(1, H.val.size())));
  CK(cudaMemcpy(c.d_rowptr, H.rowptr.data(), sizeof(int) * H.rowptr.size(),
                        cudaMemcpyHostToDevice));
  if (!H.col.empty()) {
    CK(cudaMemcpy(c.d_col, H.col.data(), sizeof(int) * H.col.size(),
                          cudaMemcpyHostToDevice));
    CK(cudaMemcpy(c.d_val, H.val.data(), sizeof(double) * H.val.size(),
                          cudaMemcpyHostToDevice));
  }
  for (double **v : {&c.b, &c.x, &c.r, &c.p, &c.q, &c.t}) CK(cudaMalloc(v, vb));
  CK(cudaMalloc(&c.ds, sizeof(double) * S_COUNT));
  const double init[S_COUNT] = {1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  CK(cudaMemcpy(c.ds, init, sizeof init, cudaMemcpyHostToDevice));

  CUSPARSE_CHECK(cusparseCreateCsr(&c.A, c.n, c.n, c.nnz, c.d_rowptr, c.d_col, c.d_val,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  CUSPARSE_CHECK(cusparseCreateDnVec(&c.vp, c.n, c.p, CUDA_R_64F));
  CUSPARSE_CHECK(cusparseCreateDnVec(&c.vq, c.n, c.q, CUDA_R_64F));
  CUSPARSE_CHECK(cusparseCreateDnVec(&c.vx, c.n, c.x, CUDA_R_64F));
  CUSPARSE_CHECK(cusparseCreateDnVec(&c.vt, c.n, c.t, CUDA_R_64F));
  CUSPARSE_CHECK(cusparseCreateDnVec(&c.vb, c.n, c.b, CUDA_R_64F));
  // t doubles as the vector of ones while b is formed
  CUSPARSE_CHECK(cusparseCreateDnVec(&c.vones, c.n, c.t, CUDA_R_64F));

  // One SpMV buffer for every call (largest size over the uses).
  set_pointer_mode(c, false);
  const double one = 1.0, zero = 0.0, mone = -1.0;
  size_t sz1 = 0, sz2 = 0;
  CUSPARSE_CHECK(cusparseSpMV_bufferSize(c.sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, c.A, c.vp,
                                         &zero, c.vq, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, &sz1));
  CUSPARSE_CHECK(cusparseSpMV_bufferSize(c.sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &mone, c.A, c.vx,
                                         &one, c.vt, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, &sz2));
  const size_t sz = std::max(sz1, sz2);
  if (sz) CK(cudaMalloc(&c.spmv_buf, sz));

  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  c.xpby_blocks = static_cast<int>(
      std::min<long long>(std::max(1LL, (c.n + 255LL) / 256), 32LL * std::max(1, sms)));

  // b = A * ones
  k_fill<<<c.xpby_blocks, 256, 0, c.stream>>>(c.n, 1.0, c.t);
  CK(cudaGetLastError());
  spmv_host(c, 1.0, c.vones, 0.0, c.vb);
  CK(cudaStreamSynchronize(c.stream));
}

static void teardown(Ctx &c) {
  for (cusparseDnVecDescr_t v : {c.vp, c.vq, c.vx, c.vt, c.vb, c.vones})
    CUSPARSE_CHECK(cusparseDestroyDnVec(v));
  CUSPARSE_CHECK(cusparseDestroySpMat(c.A));
  CUSPARSE_CHECK(cusparseDestroy(c.sp));
  CUBLAS_CHECK(cublasDestroy(c.bl));
  for (void *v : {static_cast<void *>(c.b), static_cast<void *>(c.x), static_cast<void *>(c.r),
                  static_cast<void *>(c.p), static_cast<void *>(c.q), static_cast<void *>(c.t),
                  static_cast<void *>(c.ds), static_cast<void *>(c.d_rowptr),
                  static_cast<void *>(c.d_col), static_cast<void *>(c.d_val), c.spmv_buf,
                  c.blas_ws})
    if (v) CK(cudaFree(v));
  CK(cudaStreamDestroy(c.stream));
}

// x = 0, r = b, p = b; returns rr = (r,r) (also stored in ds[S_RR]).
static double reset(Ctx &c) {
  set_pointer_mode(c, false);
  CK(cudaMemsetAsync(c.x, 0, sizeof(double) * c.n, c.stream));
  CUBLAS_CHECK(cublasDcopy(c.bl, c.n, c.b, 1, c.r, 1));
  CUBLAS_CHECK(cublasDcopy(c.bl, c.n, c.b, 1, c.p, 1));
  double rr = 0.0;
  CUBLAS_CHECK(cublasDdot(c.bl, c.n, c.r, 1, c.r, 1, &rr));
  CK(cudaMemcpyAsync(c.ds + S_RR, &rr, sizeof(double), cudaMemcpyHostToDevice, c.stream));
  CK(cudaStreamSynchronize(c.stream));
  return rr;
}

// ||b - A x|| / ||b||, with its own SpMV.
static double relres(Ctx &c) {
  set_pointer_mode(c, false);
  CUBLAS_CHECK(cublasDcopy(c.bl, c.n, c.b, 1, c.t, 1));
  spmv_host(c, -1.0, c.vx, 1.0, c.vt);
  double nr = 0.0, nb = 0.0;
  CUBLAS_CHECK(cublasDnrm2(c.bl, c.n, c.t, 1, &nr));
  CUBLAS_CHECK(cublasDnrm2(c.bl, c.n, c.b, 1, &nb));
  CK(cudaStreamSynchronize(c.stream));
  return nb > 0.0 ? nr / nb : nr;
}

// One CG iteration, host scalars; rr is carried on the host.
static void iter_percall(Ctx &c, double &rr) {
  spmv_host(c, 1.0, c.vp, 0.0, c.vq);                          // q = A p
  double pq = 0.0;
  CUBLAS_CHECK(cublasDdot(c.bl, c.n, c.p, 1, c.q, 1, &pq));     // (p,q), waits
  double alpha = rr / pq;
  if (!std::isfinite(alpha)) alpha = 0.0;
  const double nalpha = -alpha;
  CUBLAS_CHECK(cublasDaxpy(c.bl, c.n, &alpha, c.p, 1, c.x, 1));  // x += alpha p
  CUBLAS_CHECK(cublasDaxpy(c.bl, c.n, &nalpha, c.q, 1, c.r, 1)); // r -= alpha q
  double rr_new = 0.0;
  CUBLAS_CHECK(cublasDdot(c.bl, c.n, c.r, 1, c.r, 1, &rr_new));  // (r,r), waits
  double beta = rr_new / rr;
  if (!std::isfinite(beta)) beta = 0.0;
  rr = rr_new;
  const double one = 1.0;
  CUBLAS_CHECK(cublasDscal(c.bl, c.n, &beta, c.p, 1));           // p = beta p
  CUBLAS_CHECK(cublasDaxpy(c.bl, c.n, &one, c.r, 1, c.p, 1));    // p += r
}

// One CG iteration, device scalars only: capturable (no sync, no allocation,
// no host-mode scalar). Handles must be in device pointer mode.
static void iter_device(Ctx &c) {
  double *s = c.ds;
  CUSPARSE_CHECK(cusparseSpMV(c.sp, CUSPARSE_OPERATION_NON_TRANSPOSE, s + S_ONE, c.A, c.vp,
                              s + S_ZERO, c.vq, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1,
                              c.spmv_buf));                              // q = A p
  CUBLAS_CHECK(cublasDdot(c.bl, c.n, c.p, 1, c.q, 1, s + S_PQ));         // (p,q)
  k_alpha<<<1, 1, 0, c.stream>>>(s + S_RR, s + S_PQ, s + S_ALPHA, s + S_NALPHA);
  CK(cudaGetLastError());
  CUBLAS_CHECK(cublasDaxpy(c.bl, c.n, s + S_ALPHA, c.p, 1, c.x, 1));     // x += alpha p
  CUBLAS_CHECK(cublasDaxpy(c.bl, c.n, s + S_NALPHA, c.q, 1, c.r, 1));    // r -= alpha q
  CUBLAS_CHECK(cublasDdot(c.bl, c.n, c.r, 1, c.r, 1, s + S_RRNEW));      // (r,r)
  k_beta<<<1, 1, 0, c.stream>>>(s + S_RR, s + S_RRNEW, s + S_BETA);
  CK(cudaGetLastError());
  k_xpby<<<c.xpby_blocks, 256, 0, c.stream>>>(c.n, c.r, s + S_BETA, c.p);  // p = r + beta p
  CK(cudaGetLastError());
}

// Microseconds a call of step, over iters calls queued on c's stream, timed
// by events around them.
template <class F> static double time_us(Ctx &c, int iters, F step) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaStreamSynchronize(c.stream));
  CK(cudaEventRecord(e0, c.stream));
  for (int i = 0; i < iters; ++i) step();
  CK(cudaEventRecord(e1, c.stream));
  CK(cudaEventSynchronize(e1));
  float ms = 0.0f;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return 1e3 * ms / iters;
}

static double run_percall(Ctx &c, int warmup, int iters) {
  double rr = reset(c);
  for (int i = 0; i < warmup; ++i) iter_percall(c, rr);
  return time_us(c, iters, [&] { iter_percall(c, rr); });
}

static double run_graph(Ctx &c, int warmup, int iters) {
  reset(c);
  set_pointer_mode(c, true);
  // First warm-up iteration eagerly: loads every kernel module before capture.
  iter_device(c);
  CK(cudaStreamSynchronize(c.stream));

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CK(cudaStreamBeginCapture(c.stream, cudaStreamCaptureModeGlobal));
  iter_device(c);
  CK(cudaStreamEndCapture(c.stream, &graph));
  CK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  CK(cudaGraphUpload(exec, c.stream));

  for (int i = 1; i < warmup; ++i) CK(cudaGraphLaunch(exec, c.stream));
  const double us = time_us(c, iters, [&] { CK(cudaGraphLaunch(exec, c.stream)); });
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  set_pointer_mode(c, false);
  return us;
}

static double copy_bandwidth() {
  const size_t bytes = size_t(1) << 30;
  void *src = nullptr, *dst = nullptr;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaMalloc(&src, bytes));
  CK(cudaMalloc(&dst, bytes));
  CK(cudaMemsetAsync(src, 1, bytes, s));
  CK(cudaMemsetAsync(dst, 0, bytes, s));
  CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));  // warm-up
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  float best = 0.0f;
  for (int k = 0; k < 10; ++k) {
    CK(cudaEventRecord(e0, s));
    CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    float ms = 0.0f;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (k == 0 || ms < best) best = ms;
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaFree(src));
  CK(cudaFree(dst));
  CK(cudaStreamDestroy(s));
  return 2.0 * static_cast<double>(bytes) / (best * 1e-3) / 1e9;
}

// -------------------------------------------------------------------- main --

static long long parse_int(const char *opt, const char *v, long long lo) {
  char *end = nullptr;
  errno = 0;
  long long x = std::strtoll(v, &end, 10);
  if (errno || end == v || *end || x < lo)
    die_input(std::string(opt) + ": expected an integer >= " + std::to_string(lo) + ", got '" +
              v + "'");
  return x;
}

static void usage() {
  std::fprintf(stderr,
               "usage: krylov_vendor (--poisson2d N | --mtx PATH) [--iters N] [--warmup N]\n"
               "                     [--method percall|graph|both] [--copybw]\n"
               "       krylov_vendor --copybw\n");
}

int main(int argc, char **argv) {
  long long poisson_n = 0;
  const char *mtx = nullptr;
  long long iters = 200, warmup = 20;
  std::string method = "both";
  bool copybw = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> const char * {
      if (i + 1 >= argc) { usage(); die_input(a + " needs a value"); }
      return argv[++i];
    };
    if (a == "--poisson2d") poisson_n = parse_int("--poisson2d", val(), 1);
    else if (a == "--mtx") mtx = val();
    else if (a == "--iters") iters = parse_int("--iters", val(), 1);
    else if (a == "--warmup") warmup = parse_int("--warmup", val(), 1);
    else if (a == "--method") method = val();
    else if (a == "--copybw") copybw = true;
    else if (a == "-h" || a == "--help") { usage(); return 0; }
    else { usage(); die_input("unknown argument '" + a + "'"); }
  }
  if (iters > INT32_MAX || warmup > INT32_MAX) die_input("--iters/--warmup too large");
  if (method != "percall" && method != "graph" && method != "both")
    die_input("--method: percall|graph|both");
  if (poisson_n && mtx) die_input("give one of --poisson2d and --mtx");
  if (!poisson_n && !mtx && !copybw) { usage(); die_input("nothing to do"); }

  if (copybw) {
    std::printf("copybw_GBps=%.1f\n", copy_bandwidth());
    std::fflush(stdout);
  }
  if (!poisson_n && !mtx) return 0;

  std::string problem;
  Csr H;
  if (poisson_n) {
    H = poisson2d(poisson_n);
    problem = "poisson2d:" + std::to_string(poisson_n);
  } else {
    H = read_mtx(mtx);
    std::string base = mtx;
    const size_t sl = base.find_last_of('/');
    if (sl != std::string::npos) base = base.substr(sl + 1);
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".mtx") == 0)
      base.resize(base.size() - 4);
    for (char &ch : base)
      if (std::isspace(static_cast<unsigned char>(ch))) ch = '_';
    problem = "mtx:" + base;
  }

  Ctx c;
  setup(c, H);
  H = Csr();  // host copy no longer needed

  int status = 0;
  auto report = [&](const char *name, double us) {
    const double rel = relres(c);
    std::printf("method=%s problem=%s n=%d nnz=%lld iters=%lld us_per_iter=%.2f relres=%.3e\n",
                name, problem.c_str(), c.n, static_cast<long long>(c.nnz), iters, us, rel);
    std::fflush(stdout);
    if (!std::isfinite(rel)) {
      std::fprintf(stderr, "krylov_vendor: %s: relative residual is %g\n", name, rel);
      status = 1;
    }
  };
  if (method != "graph")
    report("percall", run_percall(c, static_cast<int>(warmup), static_cast<int>(iters)));
  if (method != "percall")
    report("graph", run_graph(c, static_cast<int>(warmup), static_cast<int>(iters)));
  teardown(c);
  return status;
}
