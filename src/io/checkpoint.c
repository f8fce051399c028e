/* Checkpoint files (io/checkpoint.h). Parallel HDF5 writes every rank's part
 * of a vector into one global dataset (collective transfers), so a stencil
 * state can be read back at another rank count; a serial HDF5 build writes
 * checkpoints of one rank only. */
#define _POSIX_C_SOURCE 200809L

#include "io/checkpoint.h"

#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/comm.h"
#include "io/files.h"
#include "io/h5err.h"
#include "io/settle.h"

#define FORMAT 1

static int parallel_ok(const coop_comm *c) {
#ifdef H5_HAVE_PARALLEL
  (void)c;
  return 0;
#else
  if (c->size > 1)
    return COOP_ERROR(COOP_ERR_RUNTIME, "checkpoints at %d ranks need parallel HDF5 "
                      "(Debian: libhdf5-openmpi-dev)", c->size);
  return 0;
#endif
}

static hid_t make_fapl(const coop_comm *c) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
#ifdef H5_HAVE_PARALLEL
  if (fapl >= 0 && H5Pset_fapl_mpio(fapl, c->world, MPI_INFO_NULL) < 0) {
    H5Pclose(fapl);
    return -1;
  }
#else
  (void)c;
#endif
  return fapl;
}

static hid_t make_dxpl(void) {
  hid_t x = H5Pcreate(H5P_DATASET_XFER);
#ifdef H5_HAVE_PARALLEL
  if (x >= 0 && H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE) < 0) {
    H5Pclose(x);
    return -1;
  }
#endif
  return x;
}

/* ---- a restart file's attributes, read strictly ----
 * A restart file is input: an attribute of another kind than coopsolve
 * writes is an input error naming it, never a failed HDF5 conversion. */

enum { ATTR_INT, ATTR_REAL, ATTR_TEXT };
static const char *const attr_kind_name[] = {"an integer", "a finite number", "a string"};

/* Attribute name of obj (called where in messages), one value of the class kind asks for. */
static int attr_open(const char *path, hid_t obj, const char *where, const char *name, int kind, hid_t *a) {
  hid_t t = -1, sp = -1;
  static const H5T_class_t cls[] = {H5T_INTEGER, H5T_FLOAT, H5T_STRING};
  int ok = H5Aexists(obj, name) > 0 && (*a = H5Aopen(obj, name, H5P_DEFAULT)) >= 0;
  if (!ok) {
    *a = -1;
    (void)H5Eclear2(H5E_DEFAULT);
    return coop_error_input("--restart %s: %s has no attribute '%s'", path, where, name);
  }
  ok = (t = H5Aget_type(*a)) >= 0 && H5Tget_class(t) == cls[kind] && (sp = H5Aget_space(*a)) >= 0 &&
       H5Sget_simple_extent_npoints(sp) == 1;
  if (t >= 0) H5Tclose(t);
  if (sp >= 0) H5Sclose(sp);
  (void)H5Eclear2(H5E_DEFAULT);
  if (ok) return 0;
  H5Aclose(*a);
  *a = -1;
  return coop_error_input("--restart %s: %s attribute '%s' is not %s", path, where, name, attr_kind_name[kind]);
}

static int attr_int(const char *path, hid_t obj, const char *where, const char *name, int64_t *v) {
  hid_t a = -1;
  COOP_CHECK(attr_open(path, obj, where, name, ATTR_INT, &a));
  const int ok = H5Aread(a, H5T_NATIVE_INT64, v) >= 0;
  H5Aclose(a);
  (void)H5Eclear2(H5E_DEFAULT);
  return ok ? 0 : coop_error_input("--restart %s: %s attribute '%s' is not %s", path, where, name,
                                   attr_kind_name[ATTR_INT]);
}

static int attr_real(const char *path, hid_t obj, const char *where, const char *name, double *v) {
  hid_t a = -1;
  COOP_CHECK(attr_open(path, obj, where, name, ATTR_REAL, &a));
  const int ok = H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0 && isfinite(*v);
  H5Aclose(a);
  (void)H5Eclear2(H5E_DEFAULT);
  return ok ? 0 : coop_error_input("--restart %s: %s attribute '%s' is not %s", path, where, name,
                                   attr_kind_name[ATTR_REAL]);
}

/* A string attribute, variable or fixed length, as a malloc'd copy (at most 1 MiB). */
static int attr_text(const char *path, hid_t obj, const char *where, const char *name, char **out) {
  hid_t a = -1, ft = -1, mt = -1, sp = -1;
  char *vl = NULL;
  int ok = 0;
  *out = NULL;
  COOP_CHECK(attr_open(path, obj, where, name, ATTR_TEXT, &a));
  if ((ft = H5Aget_type(a)) >= 0 && (mt = H5Tcopy(ft)) >= 0) {
    if (H5Tis_variable_str(ft) > 0) {
      if (H5Aread(a, mt, &vl) >= 0) {
        ok = (*out = strdup(vl ? vl : "")) != NULL;
        if ((sp = H5Aget_space(a)) >= 0) (void)H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, &vl);
      }
    } else {
      const size_t n = H5Tget_size(ft);
      if (n > 0 && n <= ((size_t)1 << 20) && (*out = calloc(n + 1, 1)) && H5Aread(a, mt, *out) >= 0) ok = 1;
    }
  }
  if (sp >= 0) H5Sclose(sp);
  if (mt >= 0) H5Tclose(mt);
  if (ft >= 0) H5Tclose(ft);
  H5Aclose(a);
  (void)H5Eclear2(H5E_DEFAULT);
  if (ok) return 0;
  free(*out);
  *out = NULL;
  return coop_error_input("--restart %s: %s attribute '%s' is not a string coopsolve can read", path, where, name);
}

/* ---- datasets ---- */

/* The dataset transfer of vector_io and small_io, one direction or the other. */
static herr_t transfer(hid_t ds, hid_t mtype, hid_t ms, hid_t fs, hid_t x, void *data, int write) {
  return write ? H5Dwrite(ds, mtype, ms, fs, x, data) : H5Dread(ds, mtype, ms, fs, x, data);
}

/* Closes what a transfer opened (ids < 0 were never opened); the first failure wins. */
static int close_io(int st, hid_t ms, hid_t fs, hid_t ds, hid_t x) {
  COOP_H5_CLOSE(ms, H5Sclose);
  COOP_H5_CLOSE(fs, H5Sclose);
  COOP_H5_CLOSE(ds, H5Dclose);
  COOP_H5_CLOSE(x, H5Pclose);
  return st;
}

/* One global array; this rank moves its part (L), collectively. */
static int vector_io(hid_t g, const char *name, const coop_ckpt_layout *L, double *data, int write) {
  int st = 0;
  hid_t fs = -1, ms = -1, ds = -1, x = -1;
  hsize_t dims[3], start[3], count[3];
  for (int a = 0; a < L->ndim; a++) dims[a] = L->dims[a], start[a] = L->start[a], count[a] = L->count[a];
  COOP_H5_ID(x, make_dxpl());
  if (write) {
    COOP_H5_ID(fs, H5Screate_simple(L->ndim, dims, NULL));
    COOP_H5_ID(ds, H5Dcreate2(g, name, H5T_IEEE_F64LE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  } else {
    COOP_H5_ID(ds, H5Dopen2(g, name, H5P_DEFAULT));
    COOP_H5_ID(fs, H5Dget_space(ds));
    hsize_t have[3] = {0, 0, 0};
    if (H5Sget_simple_extent_ndims(fs) != L->ndim || H5Sget_simple_extent_dims(fs, have, NULL) < 0 ||
        memcmp(have, dims, (size_t)L->ndim * sizeof *dims) != 0) {
      st = coop_error_input("--restart: /checkpoint/%s does not have this problem's shape", name);
      goto done;
    }
  }
  COOP_H5_TRY(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
  COOP_H5_ID(ms, H5Screate_simple(L->ndim, count, NULL));
  COOP_H5_TRY(transfer(ds, H5T_NATIVE_DOUBLE, ms, fs, x, data, write));
done:
  return close_io(st, ms, fs, ds, x);
}

/* A small array every rank holds the same copy of: rank 0 writes it, all read it. */
static int small_io(hid_t g, const char *name, hid_t mtype, hid_t ftype, void *data, hsize_t n,
                    int write, int rank) {
  int st = 0;
  hid_t fs = -1, ms = -1, ds = -1, x = -1;
  hsize_t dims[1] = {n};
  COOP_H5_ID(x, make_dxpl());
  if (write) {
    COOP_H5_ID(fs, H5Screate_simple(1, dims, NULL));
    COOP_H5_ID(ds, H5Dcreate2(g, name, ftype, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  } else {
    COOP_H5_ID(ds, H5Dopen2(g, name, H5P_DEFAULT));
    COOP_H5_ID(fs, H5Dget_space(ds));
    COOP_H5_TRY(H5Sget_simple_extent_dims(fs, dims, NULL));
    if (dims[0] != n) {
      st = coop_error_input("--restart: /history/%s has %llu entries, not %llu", name,
                            (unsigned long long)dims[0], (unsigned long long)n);
      goto done;
    }
  }
  COOP_H5_ID(ms, H5Screate_simple(1, dims, NULL));
  if (write && rank != 0) { /* a collective transfer: the others take part with nothing */
    COOP_H5_TRY(H5Sselect_none(fs));
    COOP_H5_TRY(H5Sselect_none(ms));
  }
  COOP_H5_TRY(transfer(ds, mtype, ms, fs, x, data, write));
done:
  return close_io(st, ms, fs, ds, x);
}

/* ---- write ---- */

/* The /checkpoint group: attributes, scalars and the vectors. */
static int write_state(hid_t f, const coop_comm *c, const coop_ckpt_layout *L, const coop_ckpt_data *d) {
  int st = 0;
  hid_t g = -1, gs = -1;
  char created[32] = "";
  const time_t now = time(NULL);
  struct tm tmv;
  if (gmtime_r(&now, &tmv)) strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  const int format = FORMAT, ranks = c->size;
  COOP_H5_ID(g, H5Gcreate2(f, "checkpoint", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  COOP_TRY(coop_h5_attr_num(g, "format", H5T_NATIVE_INT, H5T_NATIVE_INT, &format, 0));
  COOP_TRY(coop_h5_attr_str(g, "solver", d->solver));
  COOP_TRY(coop_h5_attr_num(g, "iteration", H5T_NATIVE_INT64, H5T_NATIVE_INT64, &d->iteration, 0));
  COOP_TRY(coop_h5_attr_num(g, "r0", H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, &d->r0, 0));
  COOP_TRY(coop_h5_attr_num(g, "ranks", H5T_NATIVE_INT, H5T_NATIVE_INT, &ranks, 0));
  COOP_TRY(coop_h5_attr_str(g, "problem", d->problem));
  COOP_TRY(coop_h5_attr_str(g, "created", created));
  COOP_TRY(coop_h5_attr_str(g, "description",
                            "state of a solve at an iteration: coopsolve INPUT --restart FILE "
                            "goes on from it"));
  COOP_H5_ID(gs, H5Gcreate2(g, "scalars", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  for (int i = 0; i < d->nscal; i++)
    COOP_TRY(coop_h5_attr_num(gs, d->sname[i], H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, &d->sval[i], 0));
  for (int i = 0; i < d->nvec; i++) COOP_TRY(vector_io(g, d->vname[i], L, d->vdata[i], 1));
done:
  COOP_H5_CLOSE(gs, H5Gclose);
  COOP_H5_CLOSE(g, H5Gclose);
  return st;
}

/* /history as in an output file: a killed job keeps its history to here. */
static int write_history(hid_t f, const coop_comm *c, const coop_ckpt_data *d) {
  int st = 0;
  hid_t gh = -1;
  COOP_H5_ID(gh, H5Gcreate2(f, "history", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  COOP_TRY(coop_h5_attr_str(gh, "description", "the residual checks up to the checkpoint's iteration"));
  COOP_TRY(small_io(gh, "iteration", H5T_NATIVE_INT64, H5T_STD_I64LE, d->hist_iter,
                    (hsize_t)d->hist_len, 1, c->rank));
  COOP_TRY(small_io(gh, "residual", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, d->hist_res,
                    (hsize_t)d->hist_len, 1, c->rank));
done:
  COOP_H5_CLOSE(gh, H5Gclose);
  return st;
}

/* Every step ends with the ranks agreeing (coop_write_settle): a step that
 * fails on one rank (a full disk) must not leave the others in the next
 * collective HDF5 call, nor itself in a collective close that waits for them.
 * A failure once the file is open cannot be undone collectively: the file
 * stays open, the error is fatal (the job ends with MPI_Abort), and the
 * caller removes the temporary. COOP_FAULT=ckpt:RANK fails a rank's vectors. */
static int write_tmp(const coop_wctx *io, const coop_comm *c, const coop_ckpt_layout *L,
                     const coop_ckpt_data *d) {
  int st = 0, open = 0;
  hid_t f = -1;
  const hid_t fapl = make_fapl(c);
  if (fapl < 0) st = coop_h5_fail(__FILE__, __LINE__, "make_fapl");
  else if ((f = H5Fcreate(io->nm->tmp, H5F_ACC_EXCL, H5P_DEFAULT, fapl)) < 0) /* never through a planted name */
    st = coop_h5_fail(__FILE__, __LINE__, "H5Fcreate");
  st = coop_write_settle(io, st, f >= 0, &open);
  if (!st) {
    int local = coop_fault(c, "ckpt")
                    ? COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT=ckpt:%d) writing %s", c->rank, io->path)
                    : 0;
    if (!local) local = write_state(f, c, L, d);
    st = coop_write_settle(io, local, 1, &open);
  }
  if (!st) st = coop_write_settle(io, write_history(f, c, d), 1, &open);
  if (!st) { /* the metadata first: a flush failing on one rank is waited out, a close would hang */
    const int flushed = H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0;
    st = coop_write_settle(io, flushed ? 0 : coop_h5_fail(__FILE__, __LINE__, "H5Fflush"), 1, &open);
  }
  if (!st) { /* collective: every rank that opened it closes it */
    const int closed = H5Fclose(f) >= 0;
    if (closed) f = -1;
    st = coop_write_settle(io, closed ? 0 : coop_h5_fail(__FILE__, __LINE__, "H5Fclose"), !closed, &open);
  }
  if (st && open) coop_error_set_fatal(); /* f stays open: closing it would hang */
  if (fapl >= 0) H5Pclose(fapl);
  return st;
}

int coop_ckpt_write(const char *path, const coop_comm *c, const coop_ckpt_layout *L,
                    const coop_ckpt_data *d) {
  coop_outnames nm;
  memset(&nm, 0, sizeof nm);
  int st = coop_comm_agree(c, parallel_ok(c));
  if (st) return st;
  st = coop_comm_agree(c, coop_outnames_create(&nm, c->world, path, 0));
  if (!st) {
    const coop_wctx io = {c->world, c->rank, c->size, &nm, path};
    coop_h5_quiet q;
    coop_h5_quiet_begin(&q);
    st = write_tmp(&io, c, L, d); /* agreed */
    coop_h5_quiet_end(&q);
  }
  if (!st) st = coop_comm_agree(c, c->rank == 0 ? coop_outnames_publish(&nm, path) : 0);
  else if (c->rank == 0)
    coop_outnames_discard(&nm);
  coop_outnames_free(&nm);
  return st;
}

/* ---- read ---- */

static int open_ckpt(const char *path, const coop_comm *c, hid_t *f, hid_t *g) {
  int st = 0;
  hid_t fapl = -1;
  *f = *g = -1;
  COOP_H5_ID(fapl, make_fapl(c));
  if ((*f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0) {
    (void)H5Eclear2(H5E_DEFAULT);
    st = coop_error_input("--restart %s: not an HDF5 file coopsolve can open", path);
    goto done;
  }
  if ((*g = H5Gopen2(*f, "checkpoint", H5P_DEFAULT)) < 0) {
    (void)H5Eclear2(H5E_DEFAULT);
    st = coop_error_input("--restart %s: no /checkpoint group (an output file, not a checkpoint?)", path);
  }
done:
  COOP_H5_CLOSE(fapl, H5Pclose);
  return st;
}

/* The first "key = value" line of want that have lacks or differs in. */
static void first_difference(const char *want, const char *have, char *out, size_t len) {
  out[0] = '\0';
  const char *p = want;
  while (*p) {
    const char *e = strchr(p, '\n');
    const size_t n = e ? (size_t)(e - p) : strlen(p);
    int found = 0;
    for (const char *q = have; *q;) {
      const char *qe = strchr(q, '\n');
      const size_t qn = qe ? (size_t)(qe - q) : strlen(q);
      if (qn == n && memcmp(p, q, n) == 0) found = 1;
      q += qn + (qe ? 1 : 0);
    }
    if (!found) {
      snprintf(out, len, "%.*s", (int)n, p);
      return;
    }
    p += n + (e ? 1 : 0);
  }
}

static int check_open(const char *path, hid_t g, const char *solver, const char *problem, int64_t *iteration,
                      double *r0) {
  int st = 0;
  int64_t format = 0;
  char *s = NULL, *pr = NULL;
  COOP_CHECK(attr_int(path, g, "/checkpoint", "format", &format));
  if (format != FORMAT)
    return coop_error_input("--restart %s: checkpoint format %lld, this coopsolve reads %d", path,
                            (long long)format, FORMAT);
  COOP_TRY(attr_text(path, g, "/checkpoint", "solver", &s));
  COOP_TRY(attr_text(path, g, "/checkpoint", "problem", &pr));
  if (strcmp(s, solver) != 0) {
    st = coop_error_input("--restart %s: a checkpoint of solver.name = %s, not %s", path, s, solver);
    goto done;
  }
  char diff[512];
  first_difference(problem, pr, diff, sizeof diff);
  if (!diff[0]) first_difference(pr, problem, diff, sizeof diff);
  if (diff[0]) {
    st = coop_error_input("--restart %s: the checkpoint belongs to another problem (the input says '%s', "
                          "the checkpoint does not)", path, diff);
    goto done;
  }
  COOP_TRY(attr_int(path, g, "/checkpoint", "iteration", iteration));
  COOP_TRY(attr_real(path, g, "/checkpoint", "r0", r0));
done:
  free(s);
  free(pr);
  return st;
}

int coop_ckpt_check(const char *path, const coop_comm *c, const char *solver, const char *problem,
                    int64_t *iteration, double *r0) {
  int st = coop_comm_agree(c, parallel_ok(c));
  if (st) return st;
  int fd = -1; /* a FIFO or a folder is refused without blocking */
  st = coop_file_open_input(path, "the checkpoint", &fd);
  if (fd >= 0) close(fd);
  st = coop_comm_agree(c, st);
  if (st) return st;
  hid_t f = -1, g = -1;
  coop_h5_quiet q;
  coop_h5_quiet_begin(&q);
  st = open_ckpt(path, c, &f, &g);
  if (!st) st = check_open(path, g, solver, problem, iteration, r0);
  if (g >= 0) H5Gclose(g);
  if (f >= 0) H5Fclose(f);
  coop_h5_quiet_end(&q);
  return coop_comm_agree(c, st);
}

/* /checkpoint/NAME is a floating-point dataset of the problem's global shape. */
static int check_vector(const char *path, hid_t g, const char *name, int ndim, const uint64_t *dims) {
  int st = 0;
  hid_t ds = -1, sp = -1, ty = -1;
  hsize_t have[H5S_MAX_RANK];
  int ok = H5Lexists(g, name, H5P_DEFAULT) > 0 && (ds = H5Dopen2(g, name, H5P_DEFAULT)) >= 0 &&
           (ty = H5Dget_type(ds)) >= 0 && H5Tget_class(ty) == H5T_FLOAT;
  if (!ok) {
    st = coop_error_input("--restart %s: /checkpoint/%s is not a floating-point dataset", path, name);
  } else if ((sp = H5Dget_space(ds)) < 0 || H5Sget_simple_extent_ndims(sp) != ndim ||
             H5Sget_simple_extent_dims(sp, have, NULL) < 0) {
    st = coop_error_input("--restart %s: /checkpoint/%s is not %d-dimensional, as this problem's vectors are",
                          path, name, ndim);
  } else {
    for (int a = 0; a < ndim && !st; a++)
      if (have[a] != dims[a])
        st = coop_error_input("--restart %s: /checkpoint/%s has extent %llu along axis %d (slowest first), this "
                              "problem %llu", path, name, (unsigned long long)have[a], a,
                              (unsigned long long)dims[a]);
  }
  (void)H5Eclear2(H5E_DEFAULT);
  if (ty >= 0) H5Tclose(ty);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  return st;
}

enum { CHUNK = 1 << 16 }; /* entries read at once: memory stays bounded whatever a file declares */

/* /history/NAME: a 1-D dataset of class cls; its length in *n. */
static int history_dataset(const char *path, hid_t gh, const char *name, H5T_class_t cls, hid_t *ds, hsize_t *n) {
  hid_t sp = -1, ty = -1;
  const int ok = H5Lexists(gh, name, H5P_DEFAULT) > 0 && (*ds = H5Dopen2(gh, name, H5P_DEFAULT)) >= 0 &&
                 (ty = H5Dget_type(*ds)) >= 0 && H5Tget_class(ty) == cls && (sp = H5Dget_space(*ds)) >= 0 &&
                 H5Sget_simple_extent_ndims(sp) == 1 && H5Sget_simple_extent_dims(sp, n, NULL) >= 0;
  if (ty >= 0) H5Tclose(ty);
  if (sp >= 0) H5Sclose(sp);
  (void)H5Eclear2(H5E_DEFAULT);
  return ok ? 0 : coop_error_input("--restart %s: /history/%s is not a 1-D dataset of %s", path, name,
                                   cls == H5T_INTEGER ? "integers" : "floating-point numbers");
}

/* Entries [k, k + m) of a 1-D dataset into buf (memory type mt). */
static int read_range(hid_t ds, hid_t mt, hsize_t k, hsize_t m, void *buf) {
  hid_t fs = -1, ms = -1;
  const int ok = (fs = H5Dget_space(ds)) >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, &k, NULL, &m, NULL) >= 0 &&
                 (ms = H5Screate_simple(1, &m, NULL)) >= 0 && H5Dread(ds, mt, ms, fs, H5P_DEFAULT, buf) >= 0;
  if (fs >= 0) H5Sclose(fs);
  if (ms >= 0) H5Sclose(ms);
  (void)H5Eclear2(H5E_DEFAULT);
  return ok;
}

/* /history/iteration and residual: 1-D, one length that this run's history
 * holds, the checks in order up to the checkpoint's iteration, residuals
 * finite and not negative. Read a chunk at a time. */
static int check_history(const char *path, hid_t f, int64_t iteration, int64_t hist_cap) {
  int st = 0;
  hid_t gh = -1, ds[2] = {-1, -1};
  hsize_t n[2] = {0, 0};
  int64_t *its = malloc(CHUNK * sizeof *its), prev = 0;
  double *res = malloc(CHUNK * sizeof *res);
  if (!its || !res) {
    st = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
    goto done;
  }
  if (H5Lexists(f, "history", H5P_DEFAULT) <= 0 || (gh = H5Gopen2(f, "history", H5P_DEFAULT)) < 0) {
    st = coop_error_input("--restart %s: no /history group", path);
    goto done;
  }
  COOP_TRY(history_dataset(path, gh, "iteration", H5T_INTEGER, &ds[0], &n[0]));
  COOP_TRY(history_dataset(path, gh, "residual", H5T_FLOAT, &ds[1], &n[1]));
  if (n[0] != n[1]) {
    st = coop_error_input("--restart %s: /history/iteration has %llu entries, /history/residual %llu", path,
                          (unsigned long long)n[0], (unsigned long long)n[1]);
    goto done;
  }
  if (n[0] > (hsize_t)hist_cap) {
    st = coop_error_input("--restart %s: /history holds %llu checks, more than this run keeps (%lld: raise "
                          "solver.max_iter)", path, (unsigned long long)n[0], (long long)hist_cap);
    goto done;
  }
  for (hsize_t k = 0; k < n[0] && !st; k += CHUNK) {
    const hsize_t m = n[0] - k < CHUNK ? n[0] - k : CHUNK;
    if (!read_range(ds[0], H5T_NATIVE_INT64, k, m, its) || !read_range(ds[1], H5T_NATIVE_DOUBLE, k, m, res)) {
      st = coop_error_input("--restart %s: /history cannot be read (entries %llu to %llu)", path,
                            (unsigned long long)k, (unsigned long long)(k + m - 1));
      break;
    }
    for (hsize_t i = 0; i < m && !st; i++) {
      if (its[i] < 0 || its[i] > iteration || (k + i && its[i] < prev))
        st = coop_error_input("--restart %s: /history/iteration[%llu] = %lld: expected checks in order from 0 "
                              "to the checkpoint's iteration %lld", path, (unsigned long long)(k + i),
                              (long long)its[i], (long long)iteration);
      else if (!isfinite(res[i]) || res[i] < 0)
        st = coop_error_input("--restart %s: /history/residual[%llu] = %g: not a residual norm", path,
                              (unsigned long long)(k + i), res[i]);
      prev = its[i];
    }
  }
done:
  (void)H5Eclear2(H5E_DEFAULT);
  free(its);
  free(res);
  for (int i = 0; i < 2; i++)
    if (ds[i] >= 0) H5Dclose(ds[i]);
  if (gh >= 0) H5Gclose(gh);
  return st;
}

/* Every attribute of /checkpoint/scalars: a finite number. */
static int check_scalars(const char *path, hid_t g) {
  hid_t gs = -1;
  H5O_info_t oi;
  if (H5Lexists(g, "scalars", H5P_DEFAULT) <= 0 || (gs = H5Gopen2(g, "scalars", H5P_DEFAULT)) < 0 ||
      H5Oget_info2(gs, &oi, H5O_INFO_NUM_ATTRS) < 0) {
    if (gs >= 0) H5Gclose(gs);
    (void)H5Eclear2(H5E_DEFAULT);
    return coop_error_input("--restart %s: /checkpoint/scalars is not a group", path);
  }
  int st = 0;
  for (hsize_t i = 0; i < oi.num_attrs && !st; i++) {
    char name[256];
    double v;
    const ssize_t len = H5Aget_name_by_idx(gs, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT);
    if (len < 0 || (size_t)len >= sizeof name)
      st = coop_error_input("--restart %s: /checkpoint/scalars holds an attribute whose name cannot be read", path);
    else
      st = attr_real(path, gs, "/checkpoint/scalars", name, &v);
  }
  (void)H5Eclear2(H5E_DEFAULT);
  H5Gclose(gs);
  return st;
}

/* What a restart file must hold, on rank 0 before any work: the attributes
 * of the kinds and ranges coopsolve writes, the vectors' types and shapes,
 * the scalars, the history. */
static int check_structure(const char *path, hid_t f, hid_t g, const coop_ckpt_expect *e) {
  int64_t iteration = 0, ranks = 0;
  double r0 = 0;
  char *text = NULL;
  H5G_info_t gi;
  COOP_CHECK(attr_int(path, g, "/checkpoint", "iteration", &iteration));
  if (iteration < 0 || iteration > e->max_iter)
    return coop_error_input("--restart %s: /checkpoint attribute 'iteration' = %lld is outside 0 .. solver.max_iter "
                            "= %lld", path, (long long)iteration, (long long)e->max_iter);
  COOP_CHECK(attr_real(path, g, "/checkpoint", "r0", &r0));
  if (r0 < 0) return coop_error_input("--restart %s: /checkpoint attribute 'r0' = %g is negative", path, r0);
  COOP_CHECK(attr_int(path, g, "/checkpoint", "ranks", &ranks));
  if (ranks < 1) return coop_error_input("--restart %s: /checkpoint attribute 'ranks' = %lld", path, (long long)ranks);
  COOP_CHECK(attr_text(path, g, "/checkpoint", "created", &text));
  free(text);
  COOP_CHECK(check_scalars(path, g));
  if (H5Gget_info(g, &gi) < 0) return coop_error_input("--restart %s: /checkpoint cannot be listed", path);
  for (hsize_t i = 0; i < gi.nlinks; i++) {
    char name[256];
    const ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT);
    if (len < 0 || (size_t)len >= sizeof name) {
      (void)H5Eclear2(H5E_DEFAULT);
      return coop_error_input("--restart %s: /checkpoint holds an entry whose name cannot be read", path);
    }
    if (strcmp(name, "scalars") == 0) continue;
    COOP_CHECK(check_vector(path, g, name, e->ndim, e->dims));
  }
  return check_history(path, f, iteration, e->hist_cap);
}

/* This rank's share of every vector (a slab of the slowest axis), read a
 * chunk at a time: every value finite. */
static int check_values(const char *path, hid_t g, const coop_comm *c, const coop_ckpt_expect *e) {
  int st = 0;
  H5G_info_t gi;
  hsize_t d[3] = {1, 1, 1};
  for (int a = 0; a < e->ndim; a++) d[a] = e->dims[a];
  /* a box [i0, i0 + c0) x [j0, j0 + c1) x all of axis 2, of at most about CHUNK values */
  const hsize_t c1 = d[1] * d[2] <= CHUNK ? d[1] : (d[2] >= CHUNK ? 1 : CHUNK / d[2]);
  const hsize_t c0 = c1 < d[1] ? 1 : (d[1] * d[2] >= CHUNK ? 1 : CHUNK / (d[1] * d[2]));
  const hsize_t lo = d[0] * (hsize_t)c->rank / (hsize_t)c->size, hi = d[0] * (hsize_t)(c->rank + 1) / (hsize_t)c->size;
  double *buf = malloc((size_t)(c0 * c1 * d[2]) * sizeof *buf);
  if (!buf) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (H5Gget_info(g, &gi) < 0) st = coop_error_input("--restart %s: /checkpoint cannot be listed", path);
  for (hsize_t i = 0; i < gi.nlinks && !st; i++) {
    char name[256];
    hid_t ds = -1, fs = -1;
    if (H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT) < 0 ||
        strcmp(name, "scalars") == 0 || (ds = H5Dopen2(g, name, H5P_DEFAULT)) < 0 || (fs = H5Dget_space(ds)) < 0) {
      if (ds >= 0) H5Dclose(ds);
      continue; /* rank 0 checked the names and kinds */
    }
    for (hsize_t i0 = lo; i0 < hi && !st; i0 += c0)
      for (hsize_t j0 = 0; j0 < d[1] && !st; j0 += c1) {
        hsize_t start[3] = {i0, j0, 0}, count[3] = {hi - i0 < c0 ? hi - i0 : c0, d[1] - j0 < c1 ? d[1] - j0 : c1, d[2]};
        hid_t ms = -1;
        const int ok = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
                       (ms = H5Screate_simple(e->ndim, count, NULL)) >= 0 &&
                       H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, buf) >= 0;
        if (ms >= 0) H5Sclose(ms);
        const hsize_t m = count[0] * count[1] * count[2];
        for (hsize_t k = 0; ok && k < m && !st; k++)
          if (!isfinite(buf[k]))
            st = coop_error_input("--restart %s: /checkpoint/%s holds %g (a value that is not finite)", path, name,
                                  buf[k]);
        if (!ok) st = coop_error_input("--restart %s: /checkpoint/%s cannot be read", path, name);
      }
    H5Sclose(fs);
    H5Dclose(ds);
  }
  (void)H5Eclear2(H5E_DEFAULT);
  free(buf);
  return st;
}

/* The file opened by this rank alone (read-only checks need no MPI-IO). */
static int open_alone(const char *path, hid_t *f, hid_t *g) {
  *g = -1;
  if ((*f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0 ||
      H5Lexists(*f, "checkpoint", H5P_DEFAULT) <= 0 || (*g = H5Gopen2(*f, "checkpoint", H5P_DEFAULT)) < 0) {
    (void)H5Eclear2(H5E_DEFAULT);
    return coop_error_input("--restart %s: no /checkpoint group (an output file, not a checkpoint?)", path);
  }
  return 0;
}

int coop_ckpt_check_layout(const char *path, const coop_comm *c, const coop_ckpt_expect *e) {
  hid_t f = -1, g = -1;
  coop_h5_quiet q;
  coop_h5_quiet_begin(&q);
  int st = c->rank == 0 ? open_alone(path, &f, &g) : 0;
  if (!st && c->rank == 0) st = check_structure(path, f, g, e);
  st = coop_comm_agree(c, st);
  if (!st) { /* every rank here: each checks its slab, then they agree */
    st = c->rank != 0 ? open_alone(path, &f, &g) : 0;
    if (!st) st = check_values(path, g, c, e);
    st = coop_comm_agree(c, st);
  }
  if (g >= 0) H5Gclose(g);
  if (f >= 0) H5Fclose(f);
  coop_h5_quiet_end(&q);
  return st;
}

static int read_open(const char *path, hid_t f, hid_t g, const coop_comm *c, const coop_ckpt_layout *L,
                     coop_ckpt_data *d, int64_t hist_cap) {
  int st = 0;
  hid_t gs = -1, gh = -1, ds = -1, sp = -1;
  COOP_H5_ID(gs, H5Gopen2(g, "scalars", H5P_DEFAULT));
  /* a scalar this solver carries but the file lacks: a checkpoint of another version of it */
  for (int i = 0; i < d->nscal; i++) COOP_TRY(attr_real(path, gs, "/checkpoint/scalars", d->sname[i], &d->sval[i]));
  for (int i = 0; i < d->nvec; i++) { /* a missing vector is the file's fault: an input error */
    COOP_TRY(check_vector(path, g, d->vname[i], L->ndim, L->dims));
    COOP_TRY(vector_io(g, d->vname[i], L, d->vdata[i], 0));
  }
  COOP_H5_ID(gh, H5Gopen2(f, "history", H5P_DEFAULT));
  COOP_H5_ID(ds, H5Dopen2(gh, "iteration", H5P_DEFAULT));
  COOP_H5_ID(sp, H5Dget_space(ds));
  hsize_t n = 0;
  COOP_H5_TRY(H5Sget_simple_extent_dims(sp, &n, NULL));
  if ((int64_t)n > hist_cap) {
    st = coop_error_input("--restart %s: /history holds %llu checks, more than this run keeps (%lld: raise "
                          "solver.max_iter)", path, (unsigned long long)n, (long long)hist_cap);
    goto done;
  }
  d->hist_len = (int64_t)n;
  COOP_TRY(small_io(gh, "iteration", H5T_NATIVE_INT64, H5T_STD_I64LE, d->hist_iter, n, 0, c->rank));
  COOP_TRY(small_io(gh, "residual", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, d->hist_res, n, 0, c->rank));
done:
  COOP_H5_CLOSE(sp, H5Sclose);
  COOP_H5_CLOSE(ds, H5Dclose);
  COOP_H5_CLOSE(gh, H5Gclose);
  COOP_H5_CLOSE(gs, H5Gclose);
  return st;
}

int coop_ckpt_has_scalar(const char *path, const coop_comm *c, const char *name, int *has) {
  hid_t f = -1, g = -1, gs = -1;
  int st = 0;
  *has = 0;
  if (c->rank == 0) {
    coop_h5_quiet q;
    coop_h5_quiet_begin(&q);
    st = open_alone(path, &f, &g);
    if (!st) *has = H5Lexists(g, "scalars", H5P_DEFAULT) > 0 && (gs = H5Gopen2(g, "scalars", H5P_DEFAULT)) >= 0 &&
                    H5Aexists(gs, name) > 0;
    (void)H5Eclear2(H5E_DEFAULT);
    if (gs >= 0) H5Gclose(gs);
    if (g >= 0) H5Gclose(g);
    if (f >= 0) H5Fclose(f);
    coop_h5_quiet_end(&q);
  }
  st = coop_comm_agree(c, st);
  if (!st) COOP_MPI(MPI_Bcast(has, 1, MPI_INT, 0, c->world));
  return st;
}

int coop_ckpt_read(const char *path, const coop_comm *c, const coop_ckpt_layout *L, coop_ckpt_data *d,
                   int64_t hist_cap) {
  hid_t f = -1, g = -1;
  coop_h5_quiet q;
  coop_h5_quiet_begin(&q);
  int st = open_ckpt(path, c, &f, &g);
  if (!st) st = read_open(path, f, g, c, L, d, hist_cap);
  if (g >= 0) H5Gclose(g);
  if (f >= 0) H5Fclose(f);
  coop_h5_quiet_end(&q);
  return coop_comm_agree(c, st);
}
