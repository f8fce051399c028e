/* The CSR product's schedules side by side (kernels/csr.cu, kernels/csr_tiles.cu),
 * linked against libcoop.a so it times the kernels the solver runs:
 *
 *   csr_sched [--device D] [--reps R] [--header] NAME SOURCE
 *     SOURCE: a Matrix Market file, or gen:N:NLONG:LEN:SEED for a generated
 *     matrix of N rows of 3 entries (the diagonal and two seeded random
 *     columns) among which NLONG seeded rows hold LEN entries.
 *
 * For auto (the row-balanced plan), static, atomic and clc (a "-" row where
 * the GPU has no cluster launch control) it prints a markdown row: us per
 * product (cudaEvents around R products after R/5 warm-up ones), GB/s over
 * coop_csr_bytes, the load imbalance of the tile schedules (busiest SM's busy
 * time over the mean over SMs, from a separate run with the busy counters),
 * the speed-up over static, and the normwise difference from a host product;
 * whether the tile schedules agree to the bit with static. Exit status 1
 * when a difference exceeds 1e-12 or a tile schedule differs from static. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/backend.h"
extern "C" {
#include "io/mm.h" /* a C header without its own extern "C" */
}
#include "kernels/csr.h"
#include "bench_check.cuh"

namespace {

/* Dies on a failed call: a benchmark, not the library (CK: the CUDA runtime). */
const char *coop_text(int) { return coop_error_message(); }
#define COOP_CK(call) BENCH_CHECK(call, int, 0, coop_text)

struct Host {
  int64_t n = 0, nnz = 0;
  int64_t *rowptr = nullptr;
  int32_t *colind = nullptr;
  double *val = nullptr;
};

uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double unit(uint64_t *s) { return (double)(splitmix(s) >> 11) * 0x1.0p-53; }

int cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x < y ? -1 : x > y;
}

void *must_malloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "csr_sched: out of memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

/* gen:N:NLONG:LEN:SEED. Columns of a row are sorted; repeats are allowed
 * (they are ordinary entries to the product). */
Host generate(int64_t n, int64_t nlong, int64_t len, uint64_t seed) {
  Host h;
  h.n = n;
  char *is_long = (char *)calloc((size_t)n, 1);
  if (!is_long) exit(1);
  uint64_t s = seed;
  for (int64_t k = 0; k < nlong && k < n; k++) {
    int64_t r;
    do r = (int64_t)(splitmix(&s) % (uint64_t)n); while (is_long[r]);
    is_long[r] = 1;
  }
  h.rowptr = (int64_t *)must_malloc(sizeof(int64_t) * (size_t)(n + 1));
  h.rowptr[0] = 0;
  for (int64_t i = 0; i < n; i++) h.rowptr[i + 1] = h.rowptr[i] + (is_long[i] ? (len < n ? len : n) : (n < 3 ? n : 3));
  h.nnz = h.rowptr[n];
  h.colind = (int32_t *)must_malloc(sizeof(int32_t) * (size_t)h.nnz);
  h.val = (double *)must_malloc(sizeof(double) * (size_t)h.nnz);
  for (int64_t i = 0; i < n; i++) {
    int32_t *c = h.colind + h.rowptr[i];
    const int64_t m = h.rowptr[i + 1] - h.rowptr[i];
    c[0] = (int32_t)i;
    for (int64_t k = 1; k < m; k++) c[k] = (int32_t)(splitmix(&s) % (uint64_t)n);
    qsort(c, (size_t)m, sizeof *c, cmp_i32);
    for (int64_t k = 0; k < m; k++) h.val[h.rowptr[i] + k] = c[k] == i ? 4.0 : 2.0 * unit(&s) - 1.0;
  }
  free(is_long);
  return h;
}

Host read_mtx(const char *path) {
  coop_mm_matrix m;
  COOP_CK(coop_mm_read(path, 0, -1, &m));
  Host h;
  h.n = m.nrows;
  h.nnz = m.nnz;
  h.rowptr = m.rowptr;
  m.rowptr = nullptr;
  h.val = m.val;
  m.val = nullptr;
  h.colind = (int32_t *)must_malloc(sizeof(int32_t) * (size_t)h.nnz);
  for (int64_t k = 0; k < h.nnz; k++) h.colind[k] = (int32_t)m.colind[k];
  coop_mm_free(&m);
  return h;
}

struct Result {
  bool ran = false;
  double us = 0, gbs = 0, imbalance = -1, diff = 0;
  int64_t tiles = 0, blocks = 0;
  bool same = true;
};

double normwise(const double *y, const double *ref, int64_t n) {
  double d = 0.0, m = 0.0;
  for (int64_t i = 0; i < n; i++) {
    if (!(fabs(y[i] - ref[i]) <= d)) d = isnan(y[i]) ? INFINITY : fabs(y[i] - ref[i]); /* NaN: never written */
    m = fmax(m, fabs(ref[i]));
  }
  return m > 0 ? d / m : d;
}

struct Bench {
  coop_backend *be;
  coop_csr *A;
  double *x, *y, *busy; /* device */
  int reps;
};

/* One product of A's current schedule (busy: the tile kernels' counters or NULL). */
void product(const Bench &b, double *busy) {
  if (b.A->schedule == COOP_CSR_SCHED_AUTO)
    COOP_CK(coop_csr_spmv(b.A, b.x, b.y, 0));
  else
    COOP_CK(coop_csr_spmv_tiles_cuda(b.A, b.x, b.y, 0, busy));
}

/* The busiest SM over the mean over SMs, summed over a few products. */
double imbalance(const Bench &b) {
  const int sms = b.be->sm_count;
  CK(cudaMemset(b.busy, 0, sizeof(double) * (size_t)sms));
  for (int k = 0; k < 10; k++) product(b, b.busy);
  CK(cudaDeviceSynchronize());
  double *h = (double *)must_malloc(sizeof(double) * (size_t)sms), mx = 0, sum = 0;
  CK(cudaMemcpy(h, b.busy, sizeof(double) * (size_t)sms, cudaMemcpyDeviceToHost));
  for (int i = 0; i < sms; i++) {
    mx = fmax(mx, h[i]);
    sum += h[i];
  }
  free(h);
  return sum > 0 ? mx / (sum / sms) : 0.0;
}

Result run(Bench &b, int schedule, const double *ref, double *yh) {
  Result r;
  if (coop_csr_set_schedule(b.A, schedule)) { /* clc below cc 10.0 */
    fprintf(stderr, "csr_sched: %s: %s\n", coop_csr_schedule_name(schedule), coop_error_message());
    coop_error_clear();
    return r;
  }
  r.ran = true;
  cudaStream_t st = (cudaStream_t)b.be->stream;
  CK(cudaMemsetAsync(b.y, 0xff, sizeof(double) * (size_t)b.A->nrows, st)); /* NaN: rows never written show */
  for (int k = 0; k < b.reps / 5 + 1; k++) product(b, nullptr);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0, st));
  for (int k = 0; k < b.reps; k++) product(b, nullptr);
  CK(cudaEventRecord(e1, st));
  CK(cudaEventSynchronize(e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  r.us = 1e3 * ms / b.reps;
  r.gbs = coop_csr_bytes(b.A) / (r.us * 1e-6) / 1e9;
  CK(cudaMemcpy(yh, b.y, sizeof(double) * (size_t)b.A->nrows, cudaMemcpyDeviceToHost));
  r.diff = normwise(yh, ref, b.A->nrows);
  if (schedule != COOP_CSR_SCHED_AUTO) {
    coop_csr_tile_shape sh;
    COOP_CK(coop_csr_tile_shape_cuda(b.A, &sh));
    r.tiles = sh.tiles;
    r.blocks = sh.blocks;
    r.imbalance = imbalance(b);
  }
  return r;
}

void usage() {
  fprintf(stderr, "usage: csr_sched [--device D] [--reps R] [--header] NAME (FILE.mtx | gen:N:NLONG:LEN:SEED)\n");
  exit(2);
}

} // namespace

int main(int argc, char **argv) {
  int device = 0, reps = 200, header = 0, a = 1;
  for (; a < argc && argv[a][0] == '-'; a++) {
    if (!strcmp(argv[a], "--device") && a + 1 < argc) device = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--header")) header = 1;
    else usage();
  }
  if (argc - a != 2 || reps < 1) usage();
  const char *name = argv[a], *src = argv[a + 1];
  Host h;
  long long gn, gl, glen;
  unsigned long long seed;
  if (sscanf(src, "gen:%lld:%lld:%lld:%llu", &gn, &gl, &glen, &seed) == 4 && gn > 0 && gl >= 0 && glen > 0)
    h = generate(gn, gl, glen, seed);
  else
    h = read_mtx(src);

  Bench b;
  b.reps = reps;
  COOP_CK(coop_backend_create("cuda", device, &b.be));
  COOP_CK(coop_csr_create(b.be, h.n, h.n, h.rowptr, h.colind, h.val, nullptr, &b.A));
  double *x = (double *)must_malloc(sizeof(double) * (size_t)h.n), *ref = (double *)must_malloc(sizeof(double) * (size_t)h.n);
  double *yh = (double *)must_malloc(sizeof(double) * (size_t)h.n), *ystat = (double *)must_malloc(sizeof(double) * (size_t)h.n);
  uint64_t s = 12345;
  for (int64_t i = 0; i < h.n; i++) x[i] = 2.0 * unit(&s) - 1.0;
  for (int64_t i = 0; i < h.n; i++) {
    double t = 0.0;
    for (int64_t k = h.rowptr[i]; k < h.rowptr[i + 1]; k++) t += h.val[k] * x[h.colind[k]];
    ref[i] = t;
  }
  COOP_CK(b.be->alloc(b.be, (void **)&b.x, sizeof(double) * (size_t)h.n));
  COOP_CK(b.be->alloc(b.be, (void **)&b.y, sizeof(double) * (size_t)h.n));
  COOP_CK(b.be->alloc(b.be, (void **)&b.busy, sizeof(double) * (size_t)b.be->sm_count));
  COOP_CK(b.be->upload(b.be, b.x, x, sizeof(double) * (size_t)h.n));

  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, b.be->device));
  if (header) {
    printf("GPU %d: %s (cc %d.%d, %d SMs); %d products timed per row\n\n", b.be->device, prop.name, prop.major,
           prop.minor, prop.multiProcessorCount, reps);
    printf("| matrix | rows | nnz | longest row | schedule | tiles / blocks | us per product | GB/s | imbalance "
           "| vs static | max rel diff vs host | bits = static |\n");
    printf("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  }
  const int order[] = {COOP_CSR_SCHED_AUTO, COOP_CSR_SCHED_STATIC, COOP_CSR_SCHED_ATOMIC, COOP_CSR_SCHED_CLC};
  Result res[4];
  int bad = 0;
  for (int k = 0; k < 4; k++) {
    res[k] = run(b, order[k], ref, yh);
    if (!res[k].ran) continue;
    if (order[k] == COOP_CSR_SCHED_STATIC) memcpy(ystat, yh, sizeof(double) * (size_t)h.n);
    else if (order[k] != COOP_CSR_SCHED_AUTO) res[k].same = !memcmp(ystat, yh, sizeof(double) * (size_t)h.n);
    bad |= !(res[k].diff <= 1e-12) || !res[k].same;
  }
  for (int k = 0; k < 4; k++) {
    const Result &r = res[k];
    const char *sn = coop_csr_schedule_name(order[k]);
    printf("| %s | %lld | %lld | %lld | %s | ", name, (long long)h.n, (long long)h.nnz, (long long)b.A->max_row, sn);
    if (!r.ran) {
      printf("- | - | - | - | - | - | - |\n");
      continue;
    }
    if (order[k] == COOP_CSR_SCHED_AUTO) printf("- | ");
    else printf("%lld / %lld | ", (long long)r.tiles, (long long)r.blocks);
    printf("%.2f | %.0f | ", r.us, r.gbs);
    if (r.imbalance >= 0) printf("%.2f | ", r.imbalance);
    else printf("- | ");
    if (order[k] == COOP_CSR_SCHED_STATIC || !res[1].ran) printf("- | ");
    else printf("%.2fx | ", res[1].us / r.us);
    printf("%.1e | %s |\n", r.diff,
           order[k] == COOP_CSR_SCHED_AUTO || order[k] == COOP_CSR_SCHED_STATIC ? "-" : r.same ? "yes" : "NO");
  }
  fflush(stdout);
  b.be->release(b.be, b.x);
  b.be->release(b.be, b.y);
  b.be->release(b.be, b.busy);
  coop_csr_destroy(b.A);
  coop_backend_destroy(b.be);
  free(x);
  free(ref);
  free(yh);
  free(ystat);
  free(h.rowptr);
  free(h.colind);
  free(h.val);
  if (bad) fprintf(stderr, "csr_sched: %s: a product differs from the host's by more than 1e-12, or a tile "
                           "schedule's bits from static's\n", name);
  return bad;
}
