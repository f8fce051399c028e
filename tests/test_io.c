/* CUnit suite for src/io.c, run under MPI at any rank count: every test writes
 * with all ranks and rank 0 checks the file through the HDF5 API. */
#define _XOPEN_SOURCE 700

#include <dirent.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coop_build.h"
#include "core/error.h"
#include "unit.h"
#include "io/io.h"
#ifdef COOP_HAVE_H5DS
#include <hdf5_hl.h>
#endif

/* CUnit tests take no arguments: the run's rank, size and scratch directory. */
static struct {
  int rank, size;
  char dir[256];
} ctx;

enum { NHIST = 4, PATH_LEN = 400 };

/* Like CU_ASSERT_FATAL, but returns from the helper instead of leaving the test:
 * a rank that skipped the test's closing barrier would hang the next test. */
#define REQUIRE(cond)                                                           \
  do {                                                                          \
    const int req_ok_ = (cond);                                                 \
    CU_assertImplementation(req_ok_ ? CU_TRUE : CU_FALSE, __LINE__, #cond, __FILE__, "", CU_FALSE); \
    if (!req_ok_) return;                                                       \
  } while (0)

typedef struct {
  coop_io_result r;
  coop_io_field fields[2];
  double *u;
  float *v;
  int64_t hist_iter[NHIST];
  double hist_res[NHIST];
  const char *phase_names[2];
  double phase_times[2];
  char *text;
} fixture;

static void split(int64_t n, int p, int i, int64_t *off, int64_t *cnt) {
  const int64_t base = n / p, rem = n % p;
  *cnt = base + (i < rem);
  *off = i * base + (i < rem ? i : rem);
}

/* The value stored at a global index: exact in float32 for the grids used here. */
static double value(int ndim, const int64_t g[3]) {
  return ndim == 3 ? 1000.0 * g[0] + 100.0 * g[1] + g[2] + 0.25 : 100.0 * g[0] + g[1] + 0.25;
}

static void fill_blocks(fixture *fx) {
  const coop_io_result *r = &fx->r;
  int64_t n[3] = {1, 1, 1}, o[3] = {0, 0, 0}, g[3], i = 0;
  for (int d = 0; d < r->ndim; d++) {
    n[3 - r->ndim + d] = r->local_shape[d];
    o[3 - r->ndim + d] = r->local_offset[d];
  }
  for (int64_t a = 0; a < n[0]; a++)
    for (int64_t b = 0; b < n[1]; b++)
      for (int64_t c = 0; c < n[2]; c++, i++) {
        const int64_t full[3] = {o[0] + a, o[1] + b, o[2] + c};
        for (int d = 0; d < r->ndim; d++) g[d] = full[3 - r->ndim + d];
        fx->u[i] = value(r->ndim, g);
        fx->v[i] = (float)-value(r->ndim, g);
      }
}

/* A run's result on this rank: grid split over procs, rank-0-only items given
 * only on rank 0 (the writer must take rank 0's). */
static void fixture_init(fixture *fx, int ndim, const int64_t *shape, const int *procs) {
  coop_io_result *r = &fx->r;
  int64_t count = 1;
  int rest = ctx.rank;
  memset(fx, 0, sizeof *fx);
  r->comm = MPI_COMM_WORLD;
  r->ndim = ndim;
  for (int d = ndim - 1; d >= 0; d--) {
    r->global_shape[d] = shape[d];
    r->proc_dims[d] = procs[d];
    split(shape[d], procs[d], rest % procs[d], &r->local_offset[d], &r->local_shape[d]);
    rest /= procs[d];
    count *= r->local_shape[d];
    r->spacing[d] = 0.5 / (d + 1);
    r->origin[d] = -1.0 + d;
  }
  fx->u = malloc((size_t)(count ? count : 1) * sizeof *fx->u);
  fx->v = malloc((size_t)(count ? count : 1) * sizeof *fx->v);
  fill_blocks(fx);
  fx->fields[0] = (coop_io_field){"u", fx->u, 0, "the field u, \xc3\xa9t\xc3\xa9 (UTF-8)"};
  fx->fields[1] = (coop_io_field){"v", fx->v, 1, NULL};
  r->fields = fx->fields;
  r->nfields = 2;
  r->version = "0.1.0-test";
  r->gpus = 2;
  r->devices = ctx.rank == 0 ? "GPU A; GPU B" : "not rank 0";
  r->input_name = "in.ini";
  r->input_text = "[grid]\nn = 7\n";
  r->resolved = "grid.n = 7 # file";
  r->solver = "jacobi";
  r->backend = "host";
  r->mode = "launch";
  r->precision = "double";
  r->reason = "converged";
  r->iterations = 1234;
  r->residual = 1.5e-9;
  r->rel_residual = 2.5e-10;
  r->solve_time = 3.75;
  fx->phase_names[0] = "solve";
  fx->phase_names[1] = "io";
  fx->phase_times[0] = ctx.rank + 0.5;
  fx->phase_times[1] = 2.0 * ctx.rank + 0.125;
  r->phase_names = fx->phase_names;
  r->phase_times = fx->phase_times;
  r->nphases = 2;
}

static void fixture_history(fixture *fx) {
  for (int i = 0; i < NHIST; i++) {
    fx->hist_iter[i] = 10 * (i + 1);
    fx->hist_res[i] = 1.0 / (1 << i);
  }
  if (ctx.rank == 0) {
    fx->r.hist_iter = fx->hist_iter;
    fx->r.hist_res = fx->hist_res;
    fx->r.hist_len = NHIST;
  }
}

static void fixture_free(fixture *fx) {
  free(fx->u);
  free(fx->v);
  free(fx->text);
}

static void path_in_dir(char *out, size_t len, const char *name) {
  snprintf(out, len, "%s/%s", ctx.dir, name);
}

/* STEM.h5 and STEM.xmf in the test directory. */
static void paths_in_dir(const char *stem, char path[PATH_LEN], char xmf[PATH_LEN]) {
  snprintf(path, PATH_LEN, "%s/%s.h5", ctx.dir, stem);
  snprintf(xmf, PATH_LEN, "%s/%s.xmf", ctx.dir, stem);
}

/* End of a test: free the fixture, and no rank runs ahead into the next one. */
static void fixture_done(fixture *fx) {
  fixture_free(fx);
  MPI_Barrier(MPI_COMM_WORLD);
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

static int exists_suffix(const char *path, const char *suffix) {
  char p[512];
  snprintf(p, sizeof p, "%s%s", path, suffix);
  return exists(p);
}

/* 1 when a temporary of path (".NAME.XXXXXX" beside it, io/files.h) is left. */
static int temp_left(const char *path) {
  const char *slash = strrchr(path, '/');
  char dir[PATH_LEN], prefix[64];
  int left = 0;
  snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  snprintf(prefix, sizeof prefix, ".%.32s.", slash + 1);
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));)
    left |= strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strlen(e->d_name) == strlen(prefix) + 6;
  if (d) closedir(d);
  return left;
}

static void dims_2(int out[2]) {
  out[0] = out[1] = 0;
  MPI_Dims_create(ctx.size, 2, out);
}

/* fixture_init with the ranks spread as MPI_Dims_create splits them in 2D,
 * over the slowest and fastest axes in 3D. */
static void fixture_spread(fixture *fx, int ndim, const int64_t *shape) {
  int d2[2];
  dims_2(d2);
  const int procs[3] = {d2[0], ndim == 3 ? 1 : d2[1], d2[1]};
  fixture_init(fx, ndim, shape, procs);
}

/* Rank 0: neither path nor xmf exists, and no temporary of either is left. */
static void check_nothing_left(const char *path, const char *xmf) {
  if (ctx.rank != 0) return;
  CU_ASSERT(!exists(path));
  CU_ASSERT(!temp_left(path));
  CU_ASSERT(!exists(xmf));
  CU_ASSERT(!temp_left(xmf));
}

/* ---- readers used by the checks ------------------------------------------ */

/* A scalar variable-length UTF-8 string attribute (what h5py reads as str),
 * malloc'ed; NULL when absent or of another type. */
static char *get_str(hid_t obj, const char *name) {
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1;
  char *buf = NULL, *vl = NULL;
  if (t >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0 &&
      H5Tget_cset(t) == H5T_CSET_UTF8 && H5Aread(a, t, &vl) >= 0 && vl) {
    buf = strdup(vl);
    H5free_memory(vl);
  }
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  return buf;
}

static int str_is(hid_t obj, const char *name, const char *expect) {
  char *s = get_str(obj, name);
  const int ok = s && strcmp(s, expect) == 0;
  if (!ok) fprintf(stderr, "attribute %s: got \"%.60s\", expected \"%.60s\"\n", name, s ? s : "(none)", expect);
  free(s);
  return ok;
}

/* A numeric attribute of file class cls and size bytes; returns its element
 * count (0 for a scalar read as 1) or -1. */
static int get_num(hid_t obj, const char *name, H5T_class_t cls, size_t size, hid_t mtype,
                   void *buf, int max) {
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t = -1, s = -1;
  int n = -1;
  if (a < 0) return -1;
  t = H5Aget_type(a);
  s = H5Aget_space(a);
  if (t >= 0 && s >= 0 && H5Tget_class(t) == cls && H5Tget_size(t) == size) {
    const hssize_t np = H5Sget_simple_extent_npoints(s);
    if (np >= 1 && np <= max && H5Aread(a, mtype, buf) >= 0) n = (int)np;
  }
  if (s >= 0) H5Sclose(s);
  if (t >= 0) H5Tclose(t);
  H5Aclose(a);
  return n;
}

static double f64_attr(hid_t obj, const char *name) {
  double v = -12345.0;
  if (get_num(obj, name, H5T_FLOAT, 8, H5T_NATIVE_DOUBLE, &v, 1) != 1) return -12345.0;
  return v;
}

/* A 1D dataset read whole; returns its length or -1. */
static int get_series(hid_t loc, const char *name, H5T_class_t cls, hid_t mtype, void *buf, int max) {
  hid_t d = H5Dopen2(loc, name, H5P_DEFAULT), t = -1, s = -1;
  int n = -1;
  if (d < 0) return -1;
  t = H5Dget_type(d);
  s = H5Dget_space(d);
  if (t >= 0 && s >= 0 && H5Tget_class(t) == cls && H5Tget_size(t) == 8 &&
      H5Sget_simple_extent_ndims(s) == 1) {
    const hssize_t np = H5Sget_simple_extent_npoints(s);
    if (np >= 0 && np <= max && (np == 0 || H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0))
      n = (int)np;
  }
  if (s >= 0) H5Sclose(s);
  if (t >= 0) H5Tclose(t);
  H5Dclose(d);
  return n;
}

/* ---- checks, run on rank 0 ------------------------------------------------- */

static void check_field(const fixture *fx, const char *path, const char *name, double sign) {
  const coop_io_result *r = &fx->r;
  double *data = NULL;
  int ndim = 0;
  int64_t shape[3] = {0, 0, 0}, total = 1, bad = 0, g[3];
  REQUIRE(coop_io_read_field(path, name, &data, &ndim, shape) == 0);
  CU_ASSERT_EQUAL(ndim, r->ndim);
  for (int d = 0; d < r->ndim; d++) {
    CU_ASSERT_EQUAL(shape[d], r->global_shape[d]);
    total *= r->global_shape[d];
  }
  for (int64_t i = 0; i < total && ndim == r->ndim; i++) {
    int64_t rest = i;
    for (int d = r->ndim - 1; d >= 0; d--) {
      g[d] = rest % r->global_shape[d];
      rest /= r->global_shape[d];
    }
    if (data[i] != sign * value(r->ndim, g)) bad++;
  }
  CU_ASSERT_EQUAL(bad, 0);
  free(data);
}

static void check_root(hid_t f, const fixture *fx) {
  int32_t i32 = -1;
  char *created = get_str(f, "created");
  CU_ASSERT(str_is(f, "program", "coopsolve"));
  CU_ASSERT(str_is(f, "version", "0.1.0-test"));
  CU_ASSERT(str_is(f, "devices", "GPU A; GPU B"));
  CU_ASSERT(created && strlen(created) == 20 && created[4] == '-' && created[10] == 'T' &&
            created[19] == 'Z');
  free(created);
  CU_ASSERT(get_num(f, "ranks", H5T_INTEGER, 4, H5T_NATIVE_INT32, &i32, 1) == 1 && i32 == ctx.size);
  CU_ASSERT(get_num(f, "gpus", H5T_INTEGER, 4, H5T_NATIVE_INT32, &i32, 1) == 1 && i32 == fx->r.gpus);
}

static int has_text(hid_t obj, const char *name) {
  char *s = get_str(obj, name);
  const int ok = s && s[0];
  if (!ok) fprintf(stderr, "attribute %s: missing, empty or not a variable-length UTF-8 string\n", name);
  free(s);
  return ok;
}

/* /grid/x, y (z): origin + i * spacing along each dataset axis, described. */
static void check_coords(hid_t g, const coop_io_result *r) {
  static const char *const name[3][3] = {{"x"}, {"y", "x"}, {"z", "y", "x"}};
  double c[16];
  for (int d = 0; d < r->ndim; d++) {
    const int64_t n = r->global_shape[d];
    int bad = 0;
    REQUIRE(n <= 16);
    CU_ASSERT_EQUAL(get_series(g, name[r->ndim - 1][d], H5T_FLOAT, H5T_NATIVE_DOUBLE, c, 16), n);
    for (int64_t i = 0; i < n; i++) bad += c[i] != r->origin[d] + (double)i * r->spacing[d];
    CU_ASSERT_EQUAL(bad, 0);
    const hid_t ds = H5Dopen2(g, name[r->ndim - 1][d], H5P_DEFAULT);
    CU_ASSERT(ds >= 0 && has_text(ds, "description"));
#ifdef COOP_HAVE_H5DS
    CU_ASSERT(ds >= 0 && H5DSis_scale(ds) > 0);
#endif
    if (ds >= 0) H5Dclose(ds);
  }
}

/* What a field says about itself: description, points, coordinates (and the
 * scales attached, with libhdf5_hl). */
static void check_field_attrs(hid_t f, const fixture *fx, int i) {
  const coop_io_result *r = &fx->r;
  const coop_io_field *fl = &fx->fields[i];
  char path[64];
  snprintf(path, sizeof path, "fields/%s", fl->name);
  const hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
  REQUIRE(d >= 0);
  if (fl->description) {
    CU_ASSERT(str_is(d, "description", fl->description));
  } else {
    CU_ASSERT(has_text(d, "description"));
  }
  CU_ASSERT(has_text(d, "points"));
  CU_ASSERT(str_is(d, "coordinates", r->ndim == 3 ? "/grid/z /grid/y /grid/x" : "/grid/y /grid/x"));
#ifdef COOP_HAVE_H5DS
  for (int k = 0; k < r->ndim; k++) {
    snprintf(path, sizeof path, "grid/%c", "zyx"[3 - r->ndim + k]);
    const hid_t s = H5Dopen2(f, path, H5P_DEFAULT);
    CU_ASSERT(s >= 0 && H5DSis_attached(d, s, (unsigned)k) > 0);
    if (s >= 0) H5Dclose(s);
  }
#endif
  H5Dclose(d);
}

static void check_grid(hid_t f, const fixture *fx) {
  const coop_io_result *r = &fx->r;
  const hid_t g = H5Gopen2(f, "grid", H5P_DEFAULT);
  int64_t shape[3];
  double spacing[3], origin[3];
  int32_t procs[3];
  REQUIRE(g >= 0);
  CU_ASSERT(str_is(g, "axes", r->ndim == 3 ? "zyx" : "yx"));
  CU_ASSERT(get_num(g, "shape", H5T_INTEGER, 8, H5T_NATIVE_INT64, shape, 3) == r->ndim);
  CU_ASSERT(get_num(g, "spacing", H5T_FLOAT, 8, H5T_NATIVE_DOUBLE, spacing, 3) == r->ndim);
  CU_ASSERT(get_num(g, "origin", H5T_FLOAT, 8, H5T_NATIVE_DOUBLE, origin, 3) == r->ndim);
  CU_ASSERT(get_num(g, "decomposition", H5T_INTEGER, 4, H5T_NATIVE_INT32, procs, 3) == r->ndim);
  for (int d = 0; d < r->ndim; d++) {
    CU_ASSERT_EQUAL(shape[d], r->global_shape[d]);
    CU_ASSERT_EQUAL(spacing[d], r->spacing[d]);
    CU_ASSERT_EQUAL(origin[d], r->origin[d]);
    CU_ASSERT_EQUAL(procs[d], r->proc_dims[d]);
  }
  CU_ASSERT(has_text(g, "description"));
  check_coords(g, r);
  H5Gclose(g);
}

static void check_solver(hid_t f, const fixture *fx) {
  const coop_io_result *r = &fx->r;
  const hid_t s = H5Gopen2(f, "solver", H5P_DEFAULT), in = H5Gopen2(f, "input", H5P_DEFAULT);
  int64_t it = -1;
  REQUIRE(s >= 0 && in >= 0);
  CU_ASSERT(str_is(in, "name", r->input_name));
  CU_ASSERT(str_is(in, "text", r->input_text));
  CU_ASSERT(str_is(in, "resolved", r->resolved));
  CU_ASSERT(str_is(s, "solver", "jacobi"));
  CU_ASSERT(str_is(s, "backend", "host"));
  CU_ASSERT(str_is(s, "mode", "launch"));
  CU_ASSERT(str_is(s, "precision", "double"));
  CU_ASSERT(str_is(s, "reason", "converged"));
  CU_ASSERT(get_num(s, "iterations", H5T_INTEGER, 8, H5T_NATIVE_INT64, &it, 1) == 1 && it == 1234);
  CU_ASSERT_EQUAL(f64_attr(s, "residual"), 1.5e-9);
  CU_ASSERT_EQUAL(f64_attr(s, "rel_residual"), 2.5e-10);
  CU_ASSERT_EQUAL(f64_attr(s, "solve_time"), 3.75);
  CU_ASSERT_EQUAL(H5Aexists(s, "error_max"), r->has_exact ? 1 : 0);
  CU_ASSERT_EQUAL(H5Aexists(s, "error_l2"), r->has_exact ? 1 : 0);
  if (r->has_exact) {
    CU_ASSERT_EQUAL(f64_attr(s, "error_max"), r->error_max);
    CU_ASSERT_EQUAL(f64_attr(s, "error_l2"), r->error_l2);
  }
  H5Gclose(in);
  H5Gclose(s);
}

static void check_series(hid_t f, const fixture *fx) {
  const hid_t h = H5Gopen2(f, "history", H5P_DEFAULT), t = H5Gopen2(f, "timing", H5P_DEFAULT);
  int64_t it[NHIST + 1];
  double res[NHIST + 1], times[64];
  const int nh = (int)fx->r.hist_len;
  REQUIRE(h >= 0 && t >= 0);
  const hid_t rd = H5Dopen2(h, "residual", H5P_DEFAULT);
  CU_ASSERT(rd >= 0 && str_is(rd, "kind", fx->r.hist_true ? "true" : "recurrence"));
  CU_ASSERT(rd >= 0 && str_is(rd, "norm", "2") && has_text(rd, "description"));
  if (rd >= 0) H5Dclose(rd);
  CU_ASSERT(has_text(h, "description") && has_text(t, "description"));
  CU_ASSERT_EQUAL(get_series(h, "iteration", H5T_INTEGER, H5T_NATIVE_INT64, it, NHIST + 1), nh);
  CU_ASSERT_EQUAL(get_series(h, "residual", H5T_FLOAT, H5T_NATIVE_DOUBLE, res, NHIST + 1), nh);
  for (int i = 0; i < nh; i++) {
    CU_ASSERT_EQUAL(it[i], fx->hist_iter[i]);
    CU_ASSERT_EQUAL(res[i], fx->hist_res[i]);
  }
  CU_ASSERT_EQUAL(get_series(t, "solve", H5T_FLOAT, H5T_NATIVE_DOUBLE, times, 64), ctx.size);
  for (int k = 0; k < ctx.size && k < 64; k++) CU_ASSERT_EQUAL(times[k], k + 0.5);
  CU_ASSERT_EQUAL(get_series(t, "io", H5T_FLOAT, H5T_NATIVE_DOUBLE, times, 64), ctx.size);
  for (int k = 0; k < ctx.size && k < 64; k++) CU_ASSERT_EQUAL(times[k], 2.0 * k + 0.125);
  const hid_t d = H5Dopen2(t, "io", H5P_DEFAULT);
  CU_ASSERT(d >= 0 && str_is(d, "units", "s"));
  if (d >= 0) H5Dclose(d);
  H5Gclose(t);
  H5Gclose(h);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  char *buf = f ? calloc(1 << 16, 1) : NULL;
  if (buf) fread(buf, 1, (1 << 16) - 1, f);
  if (f) fclose(f);
  return buf;
}

static void check_xmf(const fixture *fx, const char *xmf, const char *base) {
  char *text = slurp(xmf), want[512];
  REQUIRE(text != NULL);
  /* 2D as one z layer: VTK's readers put a 2DCoRectMesh edge-on in the YZ plane */
  snprintf(want, sizeof want, "TopologyType=\"3DCoRectMesh\" Dimensions=\"%lld %lld %lld\"",
           (long long)(fx->r.ndim == 3 ? fx->r.global_shape[0] : 1),
           (long long)fx->r.global_shape[fx->r.ndim - 2], (long long)fx->r.global_shape[fx->r.ndim - 1]);
  CU_ASSERT(strstr(text, want) != NULL);
  CU_ASSERT(strstr(text, "GeometryType=\"ORIGIN_DXDYDZ\"") != NULL);
  snprintf(want, sizeof want, "Precision=\"8\" Format=\"HDF\">%s:/fields/u</DataItem>", base);
  CU_ASSERT(strstr(text, want) != NULL);
  snprintf(want, sizeof want, "Precision=\"4\" Format=\"HDF\">%s:/fields/v</DataItem>", base);
  CU_ASSERT(strstr(text, want) != NULL);
  CU_ASSERT(strstr(text, "Center=\"Node\"") != NULL);
  free(text);
}

/* Everything in the file and beside it; rank 0 only. xmf is NULL without XDMF. */
static void check_output(const fixture *fx, const char *path, const char *xmf) {
  if (ctx.rank != 0) return;
  CU_ASSERT(exists(path));
  CU_ASSERT(!temp_left(path));
  check_field(fx, path, "u", 1.0);
  check_field(fx, path, "v", -1.0);
  const hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  check_root(f, fx);
  CU_ASSERT(has_text(f, "description"));
  check_grid(f, fx);
  check_field_attrs(f, fx, 0);
  check_field_attrs(f, fx, 1);
  check_solver(f, fx);
  check_series(f, fx);
  H5Fclose(f);
  if (xmf) {
    CU_ASSERT(exists(xmf));
    CU_ASSERT(!temp_left(xmf));
    check_xmf(fx, xmf, strrchr(path, '/') + 1);
  }
}

/* ---- tests --------------------------------------------------------------- */

static void test_write_2d(void) {
  fixture fx;
  char path[PATH_LEN], xmf[PATH_LEN];
  const int64_t shape[2] = {7, 5};
  fixture_spread(&fx, 2, shape);
  paths_in_dir("run2d", path, xmf);
  CU_ASSERT_EQUAL(coop_io_write(path, &fx.r, 1), 0);
  check_output(&fx, path, xmf);
  fixture_done(&fx);
}

/* Split along the fastest axis: every rank's block is a strided hyperslab. */
static void test_write_2d_split_x(void) {
  fixture fx;
  char path[PATH_LEN];
  const int64_t shape[2] = {4, 5};
  const int procs[2] = {1, ctx.size};
  fixture_init(&fx, 2, shape, procs);
  fixture_history(&fx);
  path_in_dir(path, sizeof path, "split_x");
  CU_ASSERT_EQUAL(coop_io_write(path, &fx.r, 0), 0);
  check_output(&fx, path, NULL);
  if (ctx.rank == 0) {
    CU_ASSERT(!exists_suffix(path, ".xmf"));
  }
  fixture_done(&fx);
}

static void test_write_3d(void) {
  fixture fx;
  char path[PATH_LEN], xmf[PATH_LEN];
  const int64_t shape[3] = {5, 6, 7};
  const size_t big = 100000; /* over 64 KiB: needs dense attribute storage */
  fixture_spread(&fx, 3, shape);
  fixture_history(&fx);
  fx.text = malloc(big + 1);
  for (size_t i = 0; i < big; i++) fx.text[i] = (char)('a' + i % 26);
  fx.text[big] = '\0';
  fx.r.input_text = fx.text;
  fx.r.has_exact = 1;
  fx.r.hist_true = 1;
  fx.r.error_max = 0.125;
  fx.r.error_l2 = 0.0625;
  paths_in_dir("run3d", path, xmf);
  CU_ASSERT_EQUAL(coop_io_write(path, &fx.r, 1), 0);
  check_output(&fx, path, xmf);
  fixture_done(&fx);
}

/* More ranks than rows: from 3 ranks on, one rank owns no points. */
static void test_empty_block(void) {
  fixture fx;
  char path[PATH_LEN];
  const int64_t shape[2] = {2, 3};
  const int procs[2] = {ctx.size, 1};
  fixture_init(&fx, 2, shape, procs);
  path_in_dir(path, sizeof path, "empty.h5");
  CU_ASSERT_EQUAL(coop_io_write(path, &fx.r, 1), 0);
  check_output(&fx, path, NULL);
  fixture_done(&fx);
}

/* An older PATH is replaced; PATH.tmp (the temporary name of old) is not
 * touched, and a symlink there is not followed. */
static void test_overwrite(void) {
  fixture fx;
  char path[PATH_LEN], tmp[512];
  const int64_t shape[2] = {3, 4};
  fixture_spread(&fx, 2, shape);
  path_in_dir(path, sizeof path, "again.h5");
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if (ctx.rank == 0) {
    FILE *f = fopen(tmp, "w");
    CU_ASSERT(f != NULL);
    if (f) {
      fputs("junk", f);
      fclose(f);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  fx.r.iterations = 1;
  CU_ASSERT_EQUAL(coop_io_write(path, &fx.r, 0), 0);
  fx.r.iterations = 1234;
  CU_ASSERT_EQUAL(coop_io_write(path, &fx.r, 0), 0);
  check_output(&fx, path, NULL);
  if (ctx.rank == 0) {
    char text[8] = "";
    FILE *f = fopen(tmp, "r");
    CU_ASSERT(f != NULL && fgets(text, sizeof text, f) && strcmp(text, "junk") == 0);
    if (f) fclose(f);
    CU_ASSERT_EQUAL(unlink(tmp), 0);
  }
  fixture_done(&fx);
}

/* Every rank must fail, and nothing may be left under any of the four names. */
static void expect_failure(fixture *fx, const char *path, const char *xmf, int bad_rank,
                           const char *own) {
  const int st = coop_io_write(path, &fx->r, 1);
  const char *msg = coop_error_message();
  CU_ASSERT_NOT_EQUAL(st, 0);
  /* the lowest rank that failed tells why; the others say another rank failed */
  if (ctx.rank == (bad_rank < 0 ? 0 : bad_rank)) {
    CU_ASSERT(strstr(msg, own) != NULL);
  } else {
    CU_ASSERT(strstr(msg, "another rank failed while writing") != NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  check_nothing_left(path, xmf);
  coop_error_clear();
}

static void test_fail_no_directory(void) {
  fixture fx;
  char path[PATH_LEN], xmf[PATH_LEN];
  const int64_t shape[2] = {7, 5};
  fixture_spread(&fx, 2, shape);
  paths_in_dir("missing/out", path, xmf);
  /* Rank 0 cannot make the temporary names there (io/files.h). */
  expect_failure(&fx, path, xmf, 0, "cannot create a temporary file");
  fixture_done(&fx);
}

/* Only the last rank's arguments are wrong; the others must not wait for it. */
static void test_fail_one_rank(void) {
  fixture fx;
  char path[PATH_LEN], xmf[PATH_LEN];
  const int64_t shape[3] = {5, 6, 7};
  const int procs[3] = {ctx.size, 1, 1};
  fixture_init(&fx, 3, shape, procs);
  if (ctx.rank == ctx.size - 1) fx.fields[1].data = NULL;
  paths_in_dir("onebad", path, xmf);
  expect_failure(&fx, path, xmf, ctx.size - 1, "field v: no data");
  fixture_done(&fx);
}

/* Blocks that do not cover the grid (one rank short of a row). */
static void test_fail_gap(void) {
  fixture fx;
  char path[PATH_LEN], xmf[PATH_LEN];
  const int64_t shape[2] = {7, 5};
  const int procs[2] = {ctx.size, 1};
  fixture_init(&fx, 2, shape, procs);
  if (ctx.rank == 0) fx.r.local_shape[0]--;
  paths_in_dir("gap", path, xmf);
  expect_failure(&fx, path, xmf, -1, "rank blocks hold");
  fixture_done(&fx);
}

static void test_fail_disagree(void) {
  fixture fx;
  char path[PATH_LEN], xmf[PATH_LEN];
  const int64_t shape[2] = {7, 5};
  const int procs[2] = {ctx.size, 1};
  fixture_init(&fx, 2, shape, procs);
  if (ctx.rank == ctx.size - 1) fx.fields[1].is_float = 0;
  if (ctx.size == 1) fx.fields[1].name = "bad/name";
  paths_in_dir("disagree", path, xmf);
  if (ctx.size == 1)
    expect_failure(&fx, path, xmf, 0, "invalid field name");
  else
    expect_failure(&fx, path, xmf, -1, "ranks disagree on the fields");
  fixture_done(&fx);
}

/* The XDMF file cannot be written (a fault injected on rank 0): the finished
 * HDF5 temporary must go too. */
static void test_fail_late(void) {
  fixture fx;
  char path[PATH_LEN], xmf[PATH_LEN];
  const int64_t shape[3] = {5, 6, 7};
  int d2[2];
  dims_2(d2);
  const int procs[3] = {1, d2[0], d2[1]};
  fixture_init(&fx, 3, shape, procs);
  paths_in_dir("late", path, xmf);
  setenv("COOP_FAULT", "xdmf:0", 1);
  const int st = coop_io_write(path, &fx.r, 1);
  unsetenv("COOP_FAULT");
  CU_ASSERT_NOT_EQUAL(st, 0);
  CU_ASSERT(strstr(coop_error_message(), ctx.rank == 0 ? "fault injected" : "another rank failed") != NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  check_nothing_left(path, xmf);
  coop_error_clear();
  fixture_done(&fx);
}

/* The final rename fails (a directory has the name): both temporaries go, the
 * directory stays. */
static void test_fail_rename(void) {
  fixture fx;
  char path[PATH_LEN], xmf[PATH_LEN];
  const int64_t shape[2] = {7, 5};
  fixture_spread(&fx, 2, shape);
  paths_in_dir("taken", path, xmf);
  if (ctx.rank == 0) CU_ASSERT_EQUAL(mkdir(path, 0700), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  CU_ASSERT_NOT_EQUAL(coop_io_write(path, &fx.r, 1), 0);
  CU_ASSERT(strstr(coop_error_message(), ctx.rank == 0 ? "cannot rename" : "another rank failed") != NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  if (ctx.rank == 0) {
    struct stat sb;
    CU_ASSERT(stat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
    CU_ASSERT(!temp_left(path));
    CU_ASSERT(!exists(xmf));
    CU_ASSERT(!temp_left(xmf));
    CU_ASSERT_EQUAL(rmdir(path), 0);
  }
  coop_error_clear();
  fixture_done(&fx);
}

/* ---- time series --------------------------------------------------------- */

enum { NSNAP = 3 };

/* Snapshot k of the fixture's field: value * (k + 1) at each of this rank's points. */
static double *snapshot(const fixture *fx, int k) {
  int64_t n = 1;
  for (int d = 0; d < fx->r.ndim; d++) n *= fx->r.local_shape[d];
  double *s = malloc((size_t)(n ? n : 1) * sizeof *s);
  for (int64_t i = 0; s && i < n; i++) s[i] = fx->u[i] * (k + 1);
  return s;
}

/* Rank 0: /series/u holds every snapshot of the whole grid, step and time theirs. */
static void check_time_series(const fixture *fx, const char *path) {
  const coop_io_result *r = &fx->r;
  int64_t total = 1;
  for (int d = 0; d < r->ndim; d++) total *= r->global_shape[d];
  const hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t u = H5Dopen2(f, "series/u", H5P_DEFAULT), sp = u >= 0 ? H5Dget_space(u) : -1;
  hsize_t dims[4] = {0, 0, 0, 0};
  CU_ASSERT_EQUAL(H5Sget_simple_extent_ndims(sp), r->ndim + 1);
  H5Sget_simple_extent_dims(sp, dims, NULL);
  CU_ASSERT_EQUAL(dims[0], NSNAP);
  double *all = malloc((size_t)(NSNAP * total) * sizeof *all);
  int64_t steps[NSNAP] = {0};
  double times[NSNAP] = {0};
  CU_ASSERT(all && H5Dread(u, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0);
  CU_ASSERT_EQUAL(get_series(f, "series/step", H5T_INTEGER, H5T_NATIVE_INT64, steps, NSNAP), NSNAP);
  CU_ASSERT_EQUAL(get_series(f, "series/time", H5T_FLOAT, H5T_NATIVE_DOUBLE, times, NSNAP), NSNAP);
  int bad = 0;
  for (int k = 0; k < NSNAP; k++) {
    bad += steps[k] != 10 * k || times[k] != 0.5 * k;
    for (int64_t i = 0; all && i < total; i++) {
      int64_t g[3], rest = i;
      for (int d = r->ndim - 1; d >= 0; d--) {
        g[d] = rest % r->global_shape[d];
        rest /= r->global_shape[d];
      }
      bad += all[k * total + i] != value(r->ndim, g) * (k + 1);
    }
  }
  CU_ASSERT_EQUAL(bad, 0);
  free(all);
  H5Sclose(sp);
  H5Dclose(u);
  H5Fclose(f);
}

/* Snapshots written during the "run", the rest at the end, one file renamed
 * when whole (uneven splits at 3 ranks); the XDMF file is a temporal
 * collection over /series/u. */
static void test_series(void) {
  fixture fx;
  char path[PATH_LEN], xmf[PATH_LEN];
  const int64_t shape[3] = {5, 6, 7};
  coop_io_series *s = NULL;
  fixture_spread(&fx, 3, shape);
  paths_in_dir("series", path, xmf);
  CU_ASSERT_EQUAL(coop_io_series_open(path, &fx.r, 1, NSNAP, 0, "snapshots of u", &s), 0);
  for (int k = 0; s && k < NSNAP; k++) {
    double *snap = snapshot(&fx, k);
    CU_ASSERT_EQUAL(coop_io_series_write(s, snap, 10 * k, 0.5 * k), 0);
    free(snap);
    if (ctx.rank == 0) {
      CU_ASSERT(!exists(path)); /* nothing under the real name until it is whole */
      CU_ASSERT(temp_left(path));
    }
  }
  CU_ASSERT_EQUAL(coop_io_series_count(s), NSNAP);
  fx.r.series = s;
  CU_ASSERT_EQUAL(coop_io_write(path, &fx.r, 1), 0);
  coop_io_series_close(s);
  check_output(&fx, path, NULL);
  if (ctx.rank == 0) {
    check_time_series(&fx, path);
    char *text = slurp(xmf);
    CU_ASSERT(text && strstr(text, "CollectionType=\"Temporal\"") && strstr(text, "<Time Value=\"1\"/>") &&
              strstr(text, "ItemType=\"HyperSlab\"") && strstr(text, "series.h5:/series/u</DataItem>"));
    free(text);
    CU_ASSERT(!temp_left(xmf));
  }
  fixture_done(&fx);
}

/* A series closed before its output was written (a run stopped by a signal)
 * leaves nothing, whether or not it holds snapshots. */
static void test_series_abandoned(void) {
  fixture fx;
  char path[PATH_LEN], xmf[PATH_LEN];
  const int64_t shape[2] = {4, 9};
  fixture_spread(&fx, 2, shape);
  paths_in_dir("abandoned", path, xmf);
  for (int written = 0; written < 2; written++) {
    coop_io_series *s = NULL;
    CU_ASSERT_EQUAL(coop_io_series_open(path, &fx.r, 1, NSNAP, 0, NULL, &s), 0);
    double *snap = snapshot(&fx, 0);
    if (written) CU_ASSERT_EQUAL(coop_io_series_write(s, snap, 0, 0.0), 0);
    free(snap);
    coop_io_series_close(s);
    check_nothing_left(path, xmf);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  fixture_done(&fx);
}

static void test_read_errors(void) {
  char path[PATH_LEN];
  double *data = (double *)&data;
  int ndim = 0;
  int64_t shape[3];
  path_in_dir(path, sizeof path, "no_such_file.h5");
  CU_ASSERT_NOT_EQUAL(coop_io_read_field(path, "u", &data, &ndim, shape), 0);
  CU_ASSERT_PTR_NULL(data);
  CU_ASSERT(strstr(coop_error_message(), "H5Fopen") != NULL);
  path_in_dir(path, sizeof path, "run2d.h5"); /* written by test_write_2d */
  CU_ASSERT_NOT_EQUAL(coop_io_read_field(path, "nope", &data, &ndim, shape), 0);
  CU_ASSERT_PTR_NULL(data);
  coop_error_clear();
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_parallel_flag(void) {
#ifdef H5_HAVE_PARALLEL
  CU_ASSERT_EQUAL(coop_io_parallel(), 1);
#else
  CU_ASSERT_EQUAL(coop_io_parallel(), 0);
#endif
}

/* ---- driver -------------------------------------------------------------- */

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[512];
  while (d && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    remove(p);
  }
  if (d) closedir(d);
  rmdir(dir);
}

static int run_suite(void) {
  static const coop_unit_test tests[] = {
      {"write_2d", test_write_2d},           {"write_2d_split_x", test_write_2d_split_x},
      {"write_3d", test_write_3d},           {"empty_block", test_empty_block},
      {"overwrite", test_overwrite},         {"fail_no_directory", test_fail_no_directory},
      {"fail_one_rank", test_fail_one_rank}, {"fail_gap", test_fail_gap},
      {"fail_disagree", test_fail_disagree}, {"fail_late", test_fail_late},
      {"fail_rename", test_fail_rename},     {"read_errors", test_read_errors},
      {"parallel_flag", test_parallel_flag}, {"series", test_series},
      {"series_abandoned", test_series_abandoned},
  };
  return COOP_UNIT_RUN("io", tests);
}

int main(int argc, char **argv) {
  int failed, any = 1;
  MPI_Init(&argc, &argv);
  /* A rank left waiting in a collective is a failure, not a stuck test run:
   * SIGALRM ends this process and mpirun takes the others down. */
  alarm(120);
  MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ctx.size);
  if (ctx.rank == 0) {
    const char *base = getenv("TMPDIR");
    snprintf(ctx.dir, sizeof ctx.dir, "%s/coop_test_io_XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(ctx.dir)) ctx.dir[0] = '\0';
  }
  MPI_Bcast(ctx.dir, sizeof ctx.dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (!ctx.dir[0]) {
    if (ctx.rank == 0) perror("test_io: mkdtemp");
    MPI_Finalize();
    return 1;
  }
  failed = run_suite();
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (ctx.rank == 0) remove_dir(ctx.dir);
  MPI_Finalize();
  return any ? 1 : 0;
}
