/* Dispatch of the vector operations: argument checks once, then the backend's
 * version (kernels/vec_host.c or kernels/vec.cu). */
#include <math.h>
#include <stdlib.h>

#include "kernels/vec.h"

#include "coop_build.h"
#include "core/comm.h"
#include "core/error.h"
#include "kernels/dispatch.h"

/* be->scratch, in doubles: [0, PARTIALS_END) the per-block partials of one
 * mdot (shared: kernels on the one stream run in order, and mdot's last
 * kernel has read them before the next mdot's first writes); from RESULTS the
 * k results of each open reduction, RESULT_STRIDE per slot (never shared: two
 * reductions may be open at once). The same offsets in be->scratch_host. */
#define PARTIALS_END (COOP_VEC_PARTIALS * COOP_RED_MAX)
#define RESULTS 4096
#define RESULT_STRIDE 8
_Static_assert(PARTIALS_END <= RESULTS, "partials overlap the results");
_Static_assert(COOP_RED_MAX <= RESULT_STRIDE, "a slot holds COOP_RED_MAX results");
/* kernels/stencil.c keeps its residual in the last scratch double */
_Static_assert(RESULTS + RESULT_STRIDE * COOP_EVENTS < COOP_SCRATCH_DOUBLES,
               "results overflow the scratch");

/* The slot of the blocking forms (dot, norm): callers that keep split-phase
 * reductions open across a blocking one use the other slots. */
#define BLOCKING_SLOT (COOP_EVENTS - 1)


static size_t vec_bytes(const coop_vec *v) { return (size_t)v->n * coop_prec_size(v->prec); }

/* The checks every operation on two or three vectors makes: a mismatch is a
 * program fault. b may be NULL (the two-vector forms). */
static int check2(const char *op, const coop_vec *a, const coop_vec *b) {
  if (!a || !b) return COOP_ERROR(COOP_ERR_RUNTIME, "%s: NULL vector", op);
  if (a->n != b->n)
    return COOP_ERROR(COOP_ERR_RUNTIME, "%s: lengths differ (%lld and %lld)", op, (long long)a->n,
                      (long long)b->n);
  if (a->prec != b->prec)
    return COOP_ERROR(COOP_ERR_RUNTIME, "%s: precisions differ (%s and %s)", op,
                      a->prec == COOP_FP32 ? "fp32" : "fp64",
                      b->prec == COOP_FP32 ? "fp32" : "fp64");
  if (a->be != b->be)
    return COOP_ERROR(COOP_ERR_RUNTIME, "%s: vectors on different backends (%s and %s)", op,
                      a->be->name, b->be->name);
  return 0;
}

static int check1(const char *op, const coop_vec *a) {
  if (!a || !a->be) return COOP_ERROR(COOP_ERR_RUNTIME, "%s: NULL vector", op);
  return 0;
}

int coop_vec_create(coop_backend *be, MPI_Comm comm, coop_precision prec, int64_t n,
                    coop_vec **out) {
  int64_t n_global = 0;
  *out = NULL;
  if (!be) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_vec_create: NULL backend");
  if (n < 0) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_vec_create: length %lld", (long long)n);
  /* first the collective, so every rank reaches it even if an alloc fails */
  COOP_MPI(MPI_Allreduce(&n, &n_global, 1, MPI_INT64_T, MPI_SUM, comm));
  coop_vec *v = calloc(1, sizeof *v);
  if (!v) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  v->be = be;
  v->prec = prec;
  v->n = n;
  v->n_global = n_global;
  v->comm = comm;
  const int rc = be->alloc(be, &v->data, vec_bytes(v));
  if (rc) {
    free(v);
    return coop_error_trace(rc, __FILE__, __LINE__);
  }
  *out = v;
  return 0;
}

int coop_vec_duplicate(const coop_vec *x, coop_vec **out) {
  *out = NULL;
  COOP_CHECK(check1("coop_vec_duplicate", x));
  coop_vec *v = malloc(sizeof *v);
  if (!v) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  *v = *x;
  v->data = NULL;
  const int rc = x->be->alloc(x->be, &v->data, vec_bytes(v));
  if (rc) {
    free(v);
    return coop_error_trace(rc, __FILE__, __LINE__);
  }
  *out = v;
  return 0;
}

void coop_vec_destroy(coop_vec *v) {
  if (!v) return;
  if (v->be && v->data) v->be->release(v->be, v->data);
  free(v);
}

/* fp32 on a device: convert in a staging buffer, then one transfer. On the
 * host the vector's memory is the CPU's: convert in place. */
int coop_vec_upload(coop_vec *x, const double *host) {
  COOP_CHECK(check1("coop_vec_upload", x));
  coop_backend *be = x->be;
  if (x->prec == COOP_FP64) return be->upload(be, x->data, host, vec_bytes(x));
  if (!be->device_memory) return coop_vec_convert_host(x->prec, x->n, host, x->data, 0);
  void *buf = NULL;
  COOP_CHECK(be->alloc_host(be, &buf, vec_bytes(x)));
  int rc = coop_vec_convert_host(x->prec, x->n, host, buf, 0);
  if (!rc) rc = be->upload(be, x->data, buf, vec_bytes(x));
  be->release_host(be, buf);
  return rc ? coop_error_trace(rc, __FILE__, __LINE__) : 0;
}

int coop_vec_download(const coop_vec *x, double *host) {
  COOP_CHECK(check1("coop_vec_download", x));
  coop_backend *be = x->be;
  if (x->prec == COOP_FP64) return be->download(be, host, x->data, vec_bytes(x));
  if (!be->device_memory) return coop_vec_convert_host(x->prec, x->n, x->data, host, 1);
  void *buf = NULL;
  COOP_CHECK(be->alloc_host(be, &buf, vec_bytes(x)));
  int rc = be->download(be, buf, x->data, vec_bytes(x));
  if (!rc) rc = coop_vec_convert_host(x->prec, x->n, buf, host, 1);
  be->release_host(be, buf);
  return rc ? coop_error_trace(rc, __FILE__, __LINE__) : 0;
}

/* w = a x + b y on w's backend; x or y NULL: that term is absent. */
static int axpby(coop_vec *w, double a, const coop_vec *x, double b, const coop_vec *y) {
  const void *xd = x ? x->data : NULL, *yd = y ? y->data : NULL;
  coop_backend *be = w->be;
  return COOP_DISPATCH(be, coop_vec_axpby_host(w->prec, w->n, a, xd, b, yd, w->data),
                       coop_vec_axpby_cuda(w->prec, w->n, a, xd, b, yd, w->data, be->stream));
}

int coop_vec_set(coop_vec *x, double a) {
  COOP_CHECK(check1("coop_vec_set", x));
  coop_backend *be = x->be;
  return COOP_DISPATCH(be, coop_vec_set_host(x->prec, x->n, a, x->data),
                       coop_vec_set_cuda(x->prec, x->n, a, x->data, be->stream));
}

/* 1 x is exact, so the copy is bitwise */
int coop_vec_copy(coop_vec *y, const coop_vec *x) {
  COOP_CHECK(check2("coop_vec_copy", y, x));
  if (y == x) return 0;
  return axpby(y, 1.0, x, 0.0, NULL);
}

int coop_vec_scale(coop_vec *x, double a) {
  COOP_CHECK(check1("coop_vec_scale", x));
  return axpby(x, a, x, 0.0, NULL);
}

int coop_vec_axpy(coop_vec *y, double a, const coop_vec *x) {
  COOP_CHECK(check2("coop_vec_axpy", y, x));
  return axpby(y, a, x, 1.0, y);
}

int coop_vec_aypx(coop_vec *y, double a, const coop_vec *x) {
  COOP_CHECK(check2("coop_vec_aypx", y, x));
  return axpby(y, 1.0, x, a, y);
}

int coop_vec_waxpby(coop_vec *w, double a, const coop_vec *x, double b, const coop_vec *y) {
  COOP_CHECK(check2("coop_vec_waxpby", w, x));
  COOP_CHECK(check2("coop_vec_waxpby", w, y));
  return axpby(w, a, x, b, y);
}

int coop_vec_pointwise_mult(coop_vec *w, const coop_vec *x, const coop_vec *y) {
  COOP_CHECK(check2("coop_vec_pointwise_mult", w, x));
  COOP_CHECK(check2("coop_vec_pointwise_mult", w, y));
  coop_backend *be = w->be;
  return COOP_DISPATCH(be, coop_vec_mult_host(w->prec, w->n, x->data, y->data, w->data),
                       coop_vec_mult_cuda(w->prec, w->n, x->data, y->data, w->data, be->stream));
}

static int mdot_check(int slot, int k, const coop_vec *const x[], const coop_vec *const y[]) {
  if (k < 1 || k > COOP_RED_MAX)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_vec_mdot_begin: %d dots (1 to %d)", k, COOP_RED_MAX);
  if (slot < 0 || slot >= COOP_EVENTS)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_vec_mdot_begin: slot %d (0 to %d)", slot,
                      COOP_EVENTS - 1);
  for (int j = 0; j < k; j++) {
    COOP_CHECK(check2("coop_vec_mdot_begin", x[0], x[j]));
    COOP_CHECK(check2("coop_vec_mdot_begin", x[0], y[j]));
  }
  return 0;
}

int coop_vec_mdot_begin(coop_reduction *r, int slot, int k, const coop_vec *const x[],
                        const coop_vec *const y[]) {
  COOP_CHECK(mdot_check(slot, k, x, y));
  coop_backend *be = x[0]->be;
  const void *xd[COOP_RED_MAX], *yd[COOP_RED_MAX];
  for (int j = 0; j < k; j++) xd[j] = x[j]->data, yd[j] = y[j]->data;
  r->be = be;
  r->comm = x[0]->comm;
  r->slot = slot;
  r->count = k;
  r->open = 0;
  r->dev = NULL;
  if (!be->device_memory) {
    COOP_CHECK(coop_vec_mdot_host(x[0]->prec, x[0]->n, k, xd, yd, r->value));
    r->open = 1;
    return 0;
  }
#if COOP_HAVE_CUDA
  const size_t at = RESULTS + (size_t)RESULT_STRIDE * (size_t)slot;
  r->dev = be->scratch + at;
  COOP_CHECK(coop_vec_mdot_cuda(x[0]->prec, x[0]->n, k, xd, yd, be->scratch, r->dev, be->stream));
  COOP_CHECK(coop_vec_result_to_host_cuda(r->dev, be->scratch_host + at, k, be->stream));
  COOP_CHECK(be->event_record(be, slot));
  r->open = 1;
  return 0;
#else
  return coop_no_cuda();
#endif
}

int coop_vec_reduce_end(coop_reduction *r, double *out) {
  int size = 1;
  if (!r || !r->open) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_vec_reduce_end: no open reduction");
  coop_backend *be = r->be;
  r->open = 0;
  if (be->device_memory) {
    const double *res = be->scratch_host + RESULTS + (size_t)RESULT_STRIDE * (size_t)r->slot;
    COOP_CHECK(be->event_wait(be, r->slot));
    for (int j = 0; j < r->count; j++) r->value[j] = res[j];
  }
  COOP_MPI(MPI_Comm_size(r->comm, &size));
  if (size > 1)
    COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, r->value, r->count, MPI_DOUBLE, MPI_SUM, r->comm));
  if (out)
    for (int j = 0; j < r->count; j++) out[j] = r->value[j];
  return 0;
}

int coop_vec_dot(const coop_vec *x, const coop_vec *y, double *out) {
  coop_reduction r;
  COOP_CHECK(coop_vec_mdot_begin(&r, BLOCKING_SLOT, 1, &x, &y));
  return coop_vec_reduce_end(&r, out);
}

int coop_vec_norm(const coop_vec *x, double *out) {
  double dd;
  COOP_CHECK(coop_vec_dot(x, x, &dd));
  *out = sqrt(dd);
  return 0;
}

int coop_vec_gather(coop_backend *be, coop_precision prec, int64_t m, const int32_t *idx,
                    const void *src, void *dst) {
  if (!be) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_vec_gather: NULL backend");
  if (m < 0) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_vec_gather: length %lld", (long long)m);
  return COOP_DISPATCH(be, coop_vec_gather_host(prec, m, idx, src, dst),
                       coop_vec_gather_cuda(prec, m, idx, src, dst, be->stream));
}
