/* HDF5 output: see io.h for the layout. Every phase ends with all ranks agreeing
 * on its status (coop_write_agree()), so a failure anywhere is known everywhere and no rank
 * waits in a later collective for one that has given up. A time series
 * (coop_io_series_*) is the same file opened before the solve: snapshots go
 * into it during the run, the rest at the end. */
#define _POSIX_C_SOURCE 200809L

#include "io/io.h"

#include <errno.h>
#include <hdf5.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coop_build.h"
#include "core/comm.h"
#include "core/error.h"
#include "io/files.h"
#include "io/h5err.h"
#include "io/settle.h"
#include "io/xdmf.h"
#ifdef COOP_HAVE_H5DS
#include <hdf5_hl.h>
#endif

/* ---- agreement: io/settle.h ------------------------------------------------- */

/* A time series being written: the temporary file of the output (its names),
 * where this rank's block goes, and the steps and times written so far. */
enum { SERIES_OPEN, SERIES_TAKEN, SERIES_BROKEN };
struct coop_io_series {
  MPI_Comm comm;
  int rank, size, is_float;
  int state;    /* SERIES_OPEN; TAKEN: coop_io_write took the file; BROKEN: a write failed */
  char *path;
  coop_outnames nm;
  coop_io_result grid; /* the layout only */
  int64_t count, written;
  int64_t *steps;
  double *times;
  hid_t fid; /* parallel HDF5: the temporary file, open on every rank; else -1 */
};

/* COOP_FAULT=WHERE:RANK (core/comm.h) makes this rank fail here. */
static int injected(const coop_wctx *io, const char *where) {
  const coop_comm c = {io->comm, io->rank, io->size, 0, 0};
  if (!coop_fault(&c, where)) return 0;
  return COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT=%s:%d) writing %s", where, io->rank,
                    io->path);
}

/* ---- checks ------------------------------------------------------------- */

static int check_name(const char *what, const char *name) {
  if (!name || !name[0] || strchr(name, '/') || strcmp(name, ".") == 0)
    return COOP_ERROR(COOP_ERR_RUNTIME, "invalid %s name \"%s\" (empty, \".\" or with '/')", what,
                      name ? name : "(null)");
  return 0;
}

static int check_grid(const coop_io_result *r, int64_t *count) {
  *count = 0;
  if (r->batch && r->ndim == 0) return 0; /* no grid: /batch holds everything */
  /* 1: a distributed vector (matrix problems), rows in blocks over the ranks */
  if (r->ndim < 1 || r->ndim > 3)
    return COOP_ERROR(COOP_ERR_RUNTIME, "grid has %d dimensions, expected 1, 2 or 3", r->ndim);
  *count = 1;
  for (int d = 0; d < r->ndim; d++) {
    const int64_t g = r->global_shape[d], n = r->local_shape[d], o = r->local_offset[d];
    if (g < 1 || n < 0 || o < 0 || o > g - n || r->proc_dims[d] < 1)
      return COOP_ERROR(COOP_ERR_RUNTIME,
                        "axis %d: block of %lld points at %lld does not fit %lld points over %d ranks",
                        d, (long long)n, (long long)o, (long long)g, r->proc_dims[d]);
    *count *= n;
  }
  return 0;
}

static int check_fields(const coop_io_result *r, int64_t count) {
  if (r->nfields < 0 || (r->nfields > 0 && !r->fields))
    return COOP_ERROR(COOP_ERR_RUNTIME, "invalid field list (%d fields)", r->nfields);
  for (int i = 0; i < r->nfields; i++) {
    const coop_io_field *f = &r->fields[i];
    COOP_CHECK(check_name("field", f->name));
    if (f->is_float != 0 && f->is_float != 1)
      return COOP_ERROR(COOP_ERR_RUNTIME, "field %s: is_float is %d, expected 0 or 1", f->name, f->is_float);
    if (count > 0 && !f->data)
      return COOP_ERROR(COOP_ERR_RUNTIME, "field %s: no data for this rank's %lld points", f->name,
                        (long long)count);
    for (int j = 0; j < i; j++)
      if (strcmp(r->fields[j].name, f->name) == 0)
        return COOP_ERROR(COOP_ERR_RUNTIME, "field %s given twice", f->name);
    /* /fields/x, y, z name the grid's coordinates (link_coords) */
    if (r->ndim > 1 && strlen(f->name) == 1 && strchr("xyz", f->name[0]))
      return COOP_ERROR(COOP_ERR_RUNTIME, "field %s: x, y and z name a grid's coordinates", f->name);
  }
  return 0;
}

static int check_phases(const coop_io_result *r) {
  if (r->nphases < 0 || (r->nphases > 0 && (!r->phase_names || !r->phase_times)))
    return COOP_ERROR(COOP_ERR_RUNTIME, "invalid timing list (%d phases)", r->nphases);
  for (int i = 0; i < r->nphases; i++) {
    COOP_CHECK(check_name("timing phase", r->phase_names[i]));
    for (int j = 0; j < i; j++)
      if (strcmp(r->phase_names[j], r->phase_names[i]) == 0)
        return COOP_ERROR(COOP_ERR_RUNTIME, "timing phase %s given twice", r->phase_names[i]);
  }
  return 0;
}

/* What this rank alone can tell is wrong with its arguments. */
static int check_local(const coop_io_result *r, int rank) {
  int64_t count = 0;
  COOP_CHECK(check_grid(r, &count));
  COOP_CHECK(check_fields(r, count));
  COOP_CHECK(check_phases(r));
  if (rank == 0 && r->hist_len > 0 && (!r->hist_iter || !r->hist_res))
    return COOP_ERROR(COOP_ERR_RUNTIME, "history of %zu entries without data", r->hist_len);
  return 0;
}

static uint64_t fnv(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return (h ^ 0xffu) * 1099511628211u; /* separator, so "ab","c" differs from "a","bc" */
}

enum { V_NDIM, V_SHAPE, V_PROCS = V_SHAPE + 3, V_FIELDS = V_PROCS + 3, V_PHASES, V_BATCH, V_NV };

/* Collective: what HDF5 requires to be identical on all ranks is identical, and the
 * blocks add up to the grid. Every rank reaches the same verdict. */
static int check_same(const coop_io_result *r, int size) {
  static const char *const what[V_NV] = {"the dimension", "the grid shape", "", "",
                                         "the decomposition", "", "", "the fields",
                                         "the timing phases", "the batch"};
  int64_t v[2 * V_NV] = {0}, count = 1, total = 0, global = 1, procs = 1;
  uint64_t fh = 14695981039346656037u, ph = fh;
  v[V_NDIM] = r->ndim;
  for (int d = 0; d < r->ndim; d++) {
    v[V_SHAPE + d] = r->global_shape[d];
    v[V_PROCS + d] = r->proc_dims[d];
    count *= r->local_shape[d];
    global *= r->global_shape[d];
    procs *= r->proc_dims[d];
  }
  for (int i = 0; i < r->nfields; i++)
    fh = fnv(fnv(fnv(fh, r->fields[i].name), r->fields[i].is_float ? "f" : "d"),
             r->fields[i].description ? r->fields[i].description : "");
  for (int i = 0; i < r->nphases; i++) ph = fnv(ph, r->phase_names[i]);
  v[V_FIELDS] = (int64_t)(fh >> 2) ^ r->nfields; /* 62 bits, so negation below cannot overflow */
  v[V_PHASES] = (int64_t)(ph >> 2) ^ r->nphases;
  if (r->batch) /* counts below 2^63, the flag one bit: mixed so each change shows */
    v[V_BATCH] = (int64_t)((((uint64_t)r->batch->count * 1099511628211u) ^ (uint64_t)r->batch->rows) >> 4) * 8 +
                 (r->batch->with_solution != 0) + 2 * (r->batch->shift != NULL) + 4 * (r->batch->dt != NULL);
  for (int i = 0; i < V_NV; i++) v[V_NV + i] = -v[i];
  COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 2 * V_NV, MPI_INT64_T, MPI_MAX, r->comm));
  COOP_MPI(MPI_Allreduce(&count, &total, 1, MPI_INT64_T, MPI_SUM, r->comm));
  for (int i = 0; i < V_NV; i++)
    if (v[i] != -v[V_NV + i]) {
      int k = i;
      while (!what[k][0]) k--;
      return COOP_ERROR(COOP_ERR_RUNTIME, "ranks disagree on %s", what[k]);
    }
  if (r->batch) return 0; /* no blocks: rank 0 writes /batch */
  if (procs != size)
    return COOP_ERROR(COOP_ERR_RUNTIME, "decomposition has %lld ranks, the communicator %d",
                      (long long)procs, size);
  if (total != global)
    return COOP_ERROR(COOP_ERR_RUNTIME, "rank blocks hold %lld points, the grid %lld",
                      (long long)total, (long long)global);
  return 0;
}

/* ---- run metadata, made identical on all ranks -------------------------- */

enum { S_VERSION, S_DEVICES, S_INPUT_NAME, S_INPUT_TEXT, S_RESOLVED, S_SOLVER, S_BACKEND,
       S_MODE, S_PRECISION, S_REASON, S_CREATED, N_STR };
enum { I_BYTES, I_HIST, I_ITER, I_GPUS, I_EXACT, I_BARRIERS, I_HIST_TRUE, I_STEPS, I_BLOCKS, I_IPC, I_FUSED, I_RESIDENT, N_INT };
enum { D_RES, D_REL, D_TIME, D_EMAX, D_EL2, D_TRUE, D_DT, D_T, D_SPACING, D_ORIGIN = D_SPACING + 3,
       N_DBL = D_ORIGIN + 3 };

/* Rank 0's values of everything written as metadata (HDF5 needs the same bytes
 * from every rank), and the per-rank times gathered. */
typedef struct {
  int rank, size, nphases;
  const char *str[N_STR]; /* into buf */
  const char **phase;     /* nphases names, into buf */
  char *buf;
  int64_t ival[N_INT];
  double dval[N_DBL];
  int64_t *hist_iter;
  double *hist_res;
  double *timing;   /* [phase][rank] */
  double *gathered; /* [rank][phase] */
  double *coords;   /* grids: each axis's point coordinates in dataset order, back to back */
} io_meta;

static const char *or_empty(const char *s) { return s ? s : ""; }

static void iso_now(char out[32]) {
  const time_t t = time(NULL);
  struct tm tm;
  if (t == (time_t)-1 || !gmtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
    out[0] = '\0';
}

/* Rank 0: all strings, then the phase names, NUL-separated in one buffer. */
static char *meta_pack(const coop_io_result *r, int64_t *bytes) {
  char created[32];
  iso_now(created);
  const char *src[N_STR] = {r->version, r->devices, r->input_name, r->input_text, r->resolved,
                            r->solver,  r->backend, r->mode,       r->precision,  r->reason,
                            created};
  size_t n = 0, at = 0;
  for (int i = 0; i < N_STR; i++) n += strlen(or_empty(src[i])) + 1;
  for (int i = 0; i < r->nphases; i++) n += strlen(r->phase_names[i]) + 1;
  char *buf = malloc(n);
  *bytes = buf && n <= INT_MAX ? (int64_t)n : -1;
  if (*bytes < 0) {
    free(buf);
    return NULL;
  }
  for (int i = 0; i < N_STR + r->nphases; i++) {
    const char *s = i < N_STR ? or_empty(src[i]) : r->phase_names[i - N_STR];
    memcpy(buf + at, s, strlen(s) + 1);
    at += strlen(s) + 1;
  }
  return buf;
}

static void meta_scalars(io_meta *m, const coop_io_result *r) {
  m->ival[I_HIST] = r->hist_len <= INT_MAX ? (int64_t)r->hist_len : -1;
  m->ival[I_ITER] = r->iterations;
  m->ival[I_GPUS] = r->gpus;
  m->ival[I_EXACT] = r->has_exact != 0;
  m->ival[I_BARRIERS] = r->barriers;
  m->ival[I_STEPS] = r->steps;
  m->ival[I_BLOCKS] = r->blocks;
  m->ival[I_IPC] = r->ipc_faces;
  m->ival[I_FUSED] = r->halo_fused != 0;
  m->ival[I_RESIDENT] = r->resident;
  m->ival[I_HIST_TRUE] = r->hist_true != 0;
  m->dval[D_TRUE] = r->true_residual;
  m->dval[D_RES] = r->residual;
  m->dval[D_REL] = r->rel_residual;
  m->dval[D_TIME] = r->solve_time;
  m->dval[D_EMAX] = r->error_max;
  m->dval[D_EL2] = r->error_l2;
  m->dval[D_DT] = r->dt;
  m->dval[D_T] = r->time;
  for (int d = 0; d < 3; d++) {
    m->dval[D_SPACING + d] = d < r->ndim ? r->spacing[d] : 0.0;
    m->dval[D_ORIGIN + d] = d < r->ndim ? r->origin[d] : 0.0;
  }
}

/* Collective: allocate on every rank, and agree that all allocations worked. */
static int meta_alloc(io_meta *m, const coop_io_result *r) {
  const MPI_Comm comm = r->comm;
  const size_t nh = (size_t)m->ival[I_HIST] + 1, nt = (size_t)m->nphases * (size_t)m->size + 1;
  size_t nc = 1;
  int bad;
  for (int d = 0; r->ndim > 1 && d < r->ndim; d++) nc += (size_t)r->global_shape[d];
  m->buf = malloc((size_t)m->ival[I_BYTES]);
  m->phase = calloc((size_t)m->nphases + 1, sizeof *m->phase);
  m->hist_iter = malloc(nh * sizeof *m->hist_iter);
  m->hist_res = malloc(nh * sizeof *m->hist_res);
  m->timing = malloc(nt * sizeof *m->timing);
  m->gathered = malloc(nt * sizeof *m->gathered);
  m->coords = malloc(nc * sizeof *m->coords);
  bad = !m->buf || !m->phase || !m->hist_iter || !m->hist_res || !m->timing || !m->gathered ||
        !m->coords;
  COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm));
  if (bad) return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory collecting the run's metadata");
  return 0;
}

static void meta_unpack(io_meta *m) {
  const char *s = m->buf;
  for (int i = 0; i < N_STR + m->nphases; i++) {
    if (i < N_STR)
      m->str[i] = s;
    else
      m->phase[i - N_STR] = s;
    s += strlen(s) + 1;
  }
  for (int p = 0; p < m->nphases; p++)
    for (int k = 0; k < m->size; k++) m->timing[p * m->size + k] = m->gathered[k * m->nphases + p];
}

/* Grid point i of dataset axis d sits at origin + i * spacing (rank 0's values). */
static void meta_coords(io_meta *m, const coop_io_result *r) {
  double *c = m->coords;
  for (int d = 0; r->ndim > 1 && d < r->ndim; d++)
    for (int64_t i = 0; i < r->global_shape[d]; i++)
      *c++ = m->dval[D_ORIGIN + d] + (double)i * m->dval[D_SPACING + d];
}

/* Collective: rank 0's strings, scalars and history to all; every rank's times to all. */
static int meta_build(io_meta *m, const coop_io_result *r) {
  int st = 0;
  char *packed = NULL;
  const MPI_Comm comm = r->comm;
  m->nphases = r->nphases;
  if (m->rank == 0) {
    packed = meta_pack(r, &m->ival[I_BYTES]);
    meta_scalars(m, r);
  }
  COOP_MPI_TRY(MPI_Bcast(m->ival, N_INT, MPI_INT64_T, 0, comm));
  COOP_MPI_TRY(MPI_Bcast(m->dval, N_DBL, MPI_DOUBLE, 0, comm));
  if (m->ival[I_BYTES] < 0 || m->ival[I_HIST] < 0) {
    st = COOP_ERROR(COOP_ERR_RUNTIME, "run metadata too large or out of memory on rank 0");
    goto done;
  }
  COOP_TRY(meta_alloc(m, r));
  if (m->rank == 0) {
    memcpy(m->buf, packed, (size_t)m->ival[I_BYTES]);
    if (r->hist_len > 0) {
      memcpy(m->hist_iter, r->hist_iter, r->hist_len * sizeof *m->hist_iter);
      memcpy(m->hist_res, r->hist_res, r->hist_len * sizeof *m->hist_res);
    }
  }
  COOP_MPI_TRY(MPI_Bcast(m->buf, (int)m->ival[I_BYTES], MPI_CHAR, 0, comm));
  COOP_MPI_TRY(MPI_Bcast(m->hist_iter, (int)m->ival[I_HIST], MPI_INT64_T, 0, comm));
  COOP_MPI_TRY(MPI_Bcast(m->hist_res, (int)m->ival[I_HIST], MPI_DOUBLE, 0, comm));
  COOP_MPI_TRY(MPI_Allgather(r->nphases ? r->phase_times : m->gathered, r->nphases, MPI_DOUBLE,
                        m->gathered, r->nphases, MPI_DOUBLE, comm));
  meta_unpack(m);
  meta_coords(m, r);
done:
  free(packed);
  return st;
}

static void meta_free(io_meta *m) {
  free(m->buf);
  free(m->phase);
  free(m->hist_iter);
  free(m->hist_res);
  free(m->timing);
  free(m->gathered);
  free(m->coords);
}

/* ---- HDF5 writers --------------------------------------------------------- */

static int attr_f64(hid_t obj, const char *name, double v) {
  return coop_h5_attr_num(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v, 0);
}

/* How small datasets are written: on parallel HDF5 every rank takes part in the
 * collective write and only rank 0 (writer) selects the data. */
typedef struct {
  hid_t dxpl;
  int writer;
} io_xfer;

/* A 1D dataset of n values with its description (and units, when not NULL). */
static int small_dataset(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *data,
                         hsize_t n, const io_xfer *x, const char *units, const char *desc) {
  int st = 0;
  hid_t space = -1, mspace = -1, dcpl = -1, dset = -1;
  COOP_H5_ID(space, H5Screate_simple(1, &n, NULL));
  COOP_H5_ID(dcpl, H5Pcreate(H5P_DATASET_CREATE));
  COOP_H5_TRY(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY)); /* parallel HDF5's choice; the same file either way */
  COOP_H5_TRY(H5Pset_obj_track_times(dcpl, 0));
  COOP_H5_ID(dset, H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  if (n > 0) {
    if (!x->writer) COOP_H5_TRY(H5Sselect_none(space));
    COOP_H5_ID(mspace, H5Scopy(space));
    COOP_H5_TRY(H5Dwrite(dset, mtype, mspace, space, x->dxpl, data));
  }
  if (units) COOP_TRY(coop_h5_attr_str(dset, "units", units));
  COOP_TRY(coop_h5_attr_str(dset, "description", desc));
done:
  COOP_H5_CLOSE(dset, H5Dclose);
  COOP_H5_CLOSE(dcpl, H5Pclose);
  COOP_H5_CLOSE(mspace, H5Sclose);
  COOP_H5_CLOSE(space, H5Sclose);
  return st;
}

/* Objects carry no timestamps, so a rerun writes the same bytes (but for /created). */
static int group_create(hid_t loc, const char *name, hid_t *g) {
  int st = 0;
  hid_t gcpl = -1;
  COOP_H5_ID(gcpl, H5Pcreate(H5P_GROUP_CREATE));
  COOP_H5_TRY(H5Pset_obj_track_times(gcpl, 0));
  COOP_H5_ID(*g, H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT));
done:
  COOP_H5_CLOSE(gcpl, H5Pclose);
  return st;
}

static int write_root(hid_t fid, const io_meta *m, int series) {
  const int32_t ranks = m->size, gpus = (int32_t)m->ival[I_GPUS];
  COOP_CHECK(coop_h5_attr_str(fid, "program", "coopsolve"));
  COOP_CHECK(coop_h5_attr_str(fid, "version", m->str[S_VERSION]));
  COOP_CHECK(coop_h5_attr_str(fid, "created", m->str[S_CREATED]));
  COOP_CHECK(coop_h5_attr_num(fid, "ranks", H5T_STD_I32LE, H5T_NATIVE_INT32, &ranks, 0));
  COOP_CHECK(coop_h5_attr_num(fid, "gpus", H5T_STD_I32LE, H5T_NATIVE_INT32, &gpus, 0));
  COOP_CHECK(coop_h5_attr_str(fid, "devices", m->str[S_DEVICES]));
  COOP_CHECK(coop_h5_attr_str(fid, "description",
                              "output of one coopsolve run: /input (the input), /grid (where the points "
                              "are), /fields (the solution), /solver (how the solve ended), /history "
                              "(residual per check), /timing (seconds per phase and rank); every group "
                              "and dataset has a description"));
  if (series)
    COOP_CHECK(coop_h5_attr_str(fid, "series",
                                "/series holds snapshots of the field taken during the run "
                                "(u, step, time)"));
  return 0;
}

static int write_input(hid_t fid, const io_meta *m) {
  int st = 0;
  hid_t g = -1;
  COOP_TRY(group_create(fid, "input", &g));
  COOP_TRY(coop_h5_attr_str(g, "name", m->str[S_INPUT_NAME]));
  COOP_TRY(coop_h5_attr_str(g, "text", m->str[S_INPUT_TEXT]));
  COOP_TRY(coop_h5_attr_str(g, "resolved", m->str[S_RESOLVED]));
  COOP_TRY(coop_h5_attr_str(g, "description",
                            "the run's input: name = the input file as given, text = its "
                            "contents, resolved = every key's value and where it came from"));
done:
  COOP_H5_CLOSE(g, H5Gclose);
  return st;
}

/* Name of dataset axis d of an ndim-D grid ("x" is the last, fastest one). */
static const char *axis_name(int ndim, int d) { return &"x\0y\0z"[2 * (ndim - 1 - d)]; }

#ifdef COOP_HAVE_H5DS
#define COOP_H5DS_LINKS 1
#else
#define COOP_H5DS_LINKS 0
#endif

/* g/<axis>: a second name (a hard link, the same dataset) for each dimension
 * scale /grid/<axis>. netCDF-4 readers (netCDF-C's ncdump, h5netcdf under
 * xarray) look for a variable's dimensions in its own group and the groups
 * above it, never in a sibling like /grid; the scales attached to the fields
 * stay /grid's objects, so h5py and XDMF readers see no change. Only where the
 * scales exist: without them the links would read as fields. Collective (a
 * metadata change: every rank, the same arguments). */
static int link_coords(hid_t fid, hid_t g, const coop_io_result *r) {
  char path[8];
  for (int d = 0; COOP_H5DS_LINKS && r->ndim > 1 && d < r->ndim; d++) {
    snprintf(path, sizeof path, "grid/%s", axis_name(r->ndim, d));
    if (H5Lcreate_hard(fid, path, g, axis_name(r->ndim, d), H5P_DEFAULT, H5P_DEFAULT) < 0)
      return coop_h5_fail(__FILE__, __LINE__, "H5Lcreate_hard");
  }
  return 0;
}

/* /grid/<axis>: the coordinates of the points along dataset axis d, made a
 * dimension scale where libhdf5_hl is linked. Collective like small_dataset. */
static int write_coords(hid_t g, const coop_io_result *r, const double *c, int d, const io_xfer *x) {
  int st = 0;
  hid_t dset = -1;
  const char *name = axis_name(r->ndim, d);
  char desc[320];
  snprintf(desc, sizeof desc, "%s coordinate of the stored points along dimension %d of the /fields "
           "datasets: origin + i * spacing (/grid attributes), i = 0 .. %lld%s", name, d,
           (long long)r->global_shape[d] - 1,
           COOP_H5DS_LINKS ? "; the same dataset is also named /fields/<axis> (and /series/<axis>), "
                             "where netCDF-4 readers look for a field's dimensions" : "");
  COOP_TRY(small_dataset(g, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, c, (hsize_t)r->global_shape[d], x,
                    NULL, desc));
#ifdef COOP_HAVE_H5DS
  COOP_H5_ID(dset, H5Dopen2(g, name, H5P_DEFAULT));
  COOP_H5_TRY(H5DSset_scale(dset, name));
#endif
done:
  COOP_H5_CLOSE(dset, H5Dclose);
  return st;
}

static const char grid_desc[] =
    "the grid of /fields: shape = points per axis, spacing = distance between neighbouring points, "
    "origin = coordinates of the first stored point, decomposition = ranks per axis; arrays in "
    "dataset order (slowest axis first, named by axes). Only interior points are stored: the first "
    "sits one spacing in from the Dirichlet boundary (origin = spacing = L/(n+1) on the box [0, L]), "
    "the last at L - spacing. Datasets x, y (and z) hold the coordinates of the points";
static const char vector_desc[] =
    "layout of the matrix problem's vector: shape = rows, decomposition = ranks (contiguous blocks of "
    "rows); spacing 1 and origin 0 (no geometry)";

static int write_grid(hid_t fid, const coop_io_result *r, const io_meta *m, const io_xfer *x) {
  int st = 0;
  hid_t g = -1;
  const hsize_t n = (hsize_t)r->ndim;
  const double *c = m->coords;
  int32_t procs[3];
  for (int d = 0; d < r->ndim; d++) procs[d] = r->proc_dims[d];
  COOP_TRY(group_create(fid, "grid", &g));
  COOP_TRY(coop_h5_attr_str(g, "axes", r->ndim == 3 ? "zyx" : r->ndim == 2 ? "yx" : "row"));
  COOP_TRY(coop_h5_attr_num(g, "shape", H5T_STD_I64LE, H5T_NATIVE_INT64, r->global_shape, n));
  COOP_TRY(coop_h5_attr_num(g, "spacing", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &m->dval[D_SPACING], n));
  COOP_TRY(coop_h5_attr_num(g, "origin", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &m->dval[D_ORIGIN], n));
  COOP_TRY(coop_h5_attr_num(g, "decomposition", H5T_STD_I32LE, H5T_NATIVE_INT32, procs, n));
  COOP_TRY(coop_h5_attr_str(g, "description", r->ndim > 1 ? grid_desc : vector_desc));
  /* a vector's "coordinates" would be 0 .. n-1: as large as the field, and no news */
  for (int d = 0; r->ndim > 1 && d < r->ndim; c += r->global_shape[d], d++)
    COOP_TRY(write_coords(g, r, c, d, x));
done:
  COOP_H5_CLOSE(g, H5Gclose);
  return st;
}

static const char solver_desc[] =
    "summary of the solve: reason it stopped, iterations done; residual = the last /history "
    "residual (the same norm, see its kind), rel_residual = residual / the first (initial) one; "
    "true_residual = ||b - A x||_2 recomputed from the solution after the solve (Krylov methods); "
    "error_max and error_l2 = max norm and discrete L2 norm (sqrt(h^d sum e^2) on a grid) of the "
    "error against the exact solution, when known; solve_time = seconds on rank 0; "
    "barriers_per_iteration = grid-wide barriers per iteration of a persistent kernel, else 0; "
    "steps (jacobi, heat) = relaxation steps executed, the dropped output of a final residual "
    "check included; blocks = the persistent kernel's grid on rank 0 (0: none); "
    "ipc_faces = halo faces of rank 0 copied GPU to GPU through CUDA IPC; "
    "halo_fused = 1 when the halos went by stores into the neighbours' ghosts inside one "
    "persistent kernel per rank (tune.fused_halo), else 0; "
    "resident = 1 when the field stayed in registers across sweeps, 2 in shared memory, only "
    "the edge rows of each block's band going through memory (tune.resident), else 0; "
    "dt and time (time steppers: heat) = the time step and the time reached, iterations * dt";

static int write_solver(hid_t fid, const io_meta *m) {
  static const char *const names[] = {"solver", "backend", "mode", "precision", "reason"};
  static const int which[] = {S_SOLVER, S_BACKEND, S_MODE, S_PRECISION, S_REASON};
  int st = 0;
  hid_t g = -1;
  COOP_TRY(group_create(fid, "solver", &g));
  for (int i = 0; i < 5; i++) COOP_TRY(coop_h5_attr_str(g, names[i], m->str[which[i]]));
  COOP_TRY(coop_h5_attr_num(g, "iterations", H5T_STD_I64LE, H5T_NATIVE_INT64, &m->ival[I_ITER], 0));
  COOP_TRY(attr_f64(g, "residual", m->dval[D_RES]));
  COOP_TRY(attr_f64(g, "rel_residual", m->dval[D_REL]));
  COOP_TRY(attr_f64(g, "solve_time", m->dval[D_TIME]));
  COOP_TRY(coop_h5_attr_num(g, "barriers_per_iteration", H5T_STD_I64LE, H5T_NATIVE_INT64, &m->ival[I_BARRIERS], 0));
  COOP_TRY(coop_h5_attr_num(g, "blocks", H5T_STD_I64LE, H5T_NATIVE_INT64, &m->ival[I_BLOCKS], 0));
  COOP_TRY(coop_h5_attr_num(g, "ipc_faces", H5T_STD_I64LE, H5T_NATIVE_INT64, &m->ival[I_IPC], 0));
  COOP_TRY(coop_h5_attr_num(g, "halo_fused", H5T_STD_I64LE, H5T_NATIVE_INT64, &m->ival[I_FUSED], 0));
  COOP_TRY(coop_h5_attr_num(g, "resident", H5T_STD_I64LE, H5T_NATIVE_INT64, &m->ival[I_RESIDENT], 0));
  if (m->ival[I_STEPS] > 0)
    COOP_TRY(coop_h5_attr_num(g, "steps", H5T_STD_I64LE, H5T_NATIVE_INT64, &m->ival[I_STEPS], 0));
  if (m->dval[D_TRUE] >= 0) COOP_TRY(attr_f64(g, "true_residual", m->dval[D_TRUE]));
  if (m->dval[D_DT] > 0) {
    COOP_TRY(attr_f64(g, "dt", m->dval[D_DT]));
    COOP_TRY(attr_f64(g, "time", m->dval[D_T]));
  }
  if (m->ival[I_EXACT]) {
    COOP_TRY(attr_f64(g, "error_max", m->dval[D_EMAX]));
    COOP_TRY(attr_f64(g, "error_l2", m->dval[D_EL2]));
  }
  COOP_TRY(coop_h5_attr_str(g, "description", solver_desc));
done:
  COOP_H5_CLOSE(g, H5Gclose);
  return st;
}

static const char hist_true_desc[] =
    "||b - A x||_2 of the iterate x, recomputed at each check over all unknowns (the true "
    "residual; absolute, unpreconditioned)";
static const char hist_rec_desc[] =
    "2-norm of the residual vector the method updates by its recurrence (absolute, "
    "unpreconditioned; not recomputed from x, so rounding may make it drift from ||b - A x||_2, "
    "which /solver true_residual gives after the solve)";

/* Machine-readable: kind "true" or "recurrence", norm "2". */
static int residual_kind(hid_t h, int true_res) {
  int st = 0;
  hid_t d = -1;
  COOP_H5_ID(d, H5Dopen2(h, "residual", H5P_DEFAULT));
  COOP_TRY(coop_h5_attr_str(d, "kind", true_res ? "true" : "recurrence"));
  COOP_TRY(coop_h5_attr_str(d, "norm", "2"));
done:
  COOP_H5_CLOSE(d, H5Dclose);
  return st;
}

/* With libhdf5_hl, iteration is residual's dimension scale: netCDF-4 readers
 * (xarray, ncdump) then show residual(iteration). Collective. */
static int index_history(hid_t h) {
  int st = 0;
#ifdef COOP_HAVE_H5DS
  hid_t it = -1, res = -1;
  COOP_H5_ID(it, H5Dopen2(h, "iteration", H5P_DEFAULT));
  COOP_H5_ID(res, H5Dopen2(h, "residual", H5P_DEFAULT));
  COOP_H5_TRY(H5DSset_scale(it, "iteration"));
  COOP_H5_TRY(H5DSattach_scale(res, it, 0));
done:
  COOP_H5_CLOSE(res, H5Dclose);
  COOP_H5_CLOSE(it, H5Dclose);
#else
  (void)h;
#endif
  return st;
}

static int write_series(hid_t fid, const io_meta *m, const io_xfer *x) {
  int st = 0;
  hid_t h = -1, t = -1;
  const hsize_t nh = (hsize_t)m->ival[I_HIST];
  const int true_res = m->ival[I_HIST_TRUE] != 0;
  COOP_TRY(group_create(fid, "history", &h));
  COOP_TRY(coop_h5_attr_str(h, "description",
                            "the residual checks of the solve, in order: residual[k] was "
                            "measured after iteration[k] iterations"));
  COOP_TRY(small_dataset(h, "iteration", H5T_STD_I64LE, H5T_NATIVE_INT64, m->hist_iter, nh, x, NULL,
                    "iterations completed when the residual was checked (0: the initial guess)"));
  COOP_TRY(small_dataset(h, "residual", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, m->hist_res, nh, x, NULL,
                    true_res ? hist_true_desc : hist_rec_desc));
  COOP_TRY(residual_kind(h, true_res));
  COOP_TRY(index_history(h));
  COOP_TRY(group_create(fid, "timing", &t));
  COOP_TRY(coop_h5_attr_str(t, "description",
                            "wall-clock seconds per phase of the run: one dataset per phase, "
                            "one value per rank (index = MPI rank)"));
  for (int p = 0; p < m->nphases; p++)
    COOP_TRY(small_dataset(t, m->phase[p], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &m->timing[p * m->size],
                      (hsize_t)m->size, x, "s",
                      "seconds this rank spent in the phase the dataset is named for, one value "
                      "per rank (index = MPI rank)"));
done:
  COOP_H5_CLOSE(t, H5Gclose);
  COOP_H5_CLOSE(h, H5Gclose);
  return st;
}

/* ---- /batch ---------------------------------------------------------------- */

static const char batch_desc[] =
    "a batch run: B independent problems A_i x_i = b_i, each solved alone with its own stop test "
    "(solver.* keys); index i of every per-problem dataset is problem i of the batch; solution "
    "holds x_0, x_1, ... back to back, x_i = solution[offsets[i]:offsets[i+1]]; attributes: method, "
    "pc, seed, source (generated or matrices), the requested sync, schedule and group_blocks, and "
    "what ran on rank 0 (sync_used, schedule_used, group_blocks_used, levels_used = levels of row "
    "groups that split for a ragged batch, 1 for none; busy_max and busy_mean = seconds of its "
    "busiest block and the mean over its blocks, 0 where not measured), groups = "
    "groups of blocks over all ranks, barriers = group barriers passed over all ranks, kernel_time = "
    "the slowest rank's seconds from its first solve kernel to the end of its last (device events; no "
    "allocation, upload or download of the problems, but for launch and launch_each their reads of "
    "the active count or reasons between steps; 0 on the host); heat (method "
    "heat: u_t = alpha (b_i - A_i u) by forward Euler from the lowest sine mode, reason completed after "
    "its steps): iterations = steps, residual = ||b - A u|| of the final field, dt and t_final per "
    "problem, attributes alpha and t_end (0: every problem ran solver.max_iter steps)";

typedef struct {
  const char *name;
  hid_t ftype, mtype;
  const void *data;
  hsize_t n;
  const char *units, *desc;
} batch_set;

/* Non-writers pass a buffer too: HDF5 1.8 refuses a NULL one even for an empty selection. */
static int batch_dataset(hid_t g, const batch_set *d, const io_xfer *x) {
  static const double dummy[1] = {0.0};
  return small_dataset(g, d->name, d->ftype, d->mtype, x->writer ? d->data : (const void *)dummy, d->n,
                       x, d->units, d->desc);
}

static int batch_attrs(hid_t g, const coop_io_batch *b) {
  const char *names[] = {"method", "pc", "sync", "schedule", "sync_used", "schedule_used", "source"};
  const char *vals[] = {b->method, b->pc, b->sync, b->schedule, b->sync_used, b->schedule_used, b->source};
  const char *inames[] = {"group_blocks", "group_blocks_used", "groups", "barriers", "seed", "count", "rows",
                          "levels_used"};
  const int64_t ivals[] = {b->group_blocks, b->group_blocks_used, b->groups, b->barriers, b->seed,
                           b->count, b->rows, b->levels_used};
  for (int i = 0; i < 7; i++) COOP_CHECK(coop_h5_attr_str(g, names[i], or_empty(vals[i])));
  for (int i = 0; i < 8; i++) COOP_CHECK(coop_h5_attr_num(g, inames[i], H5T_STD_I64LE, H5T_NATIVE_INT64, &ivals[i], 0));
  COOP_CHECK(attr_f64(g, "busy_max", b->busy_max));
  COOP_CHECK(attr_f64(g, "busy_mean", b->busy_mean));
  COOP_CHECK(attr_f64(g, "kernel_time", b->kernel_time));
  if (b->dt) {
    COOP_CHECK(attr_f64(g, "alpha", b->alpha));
    COOP_CHECK(attr_f64(g, "t_end", b->t_end));
  }
  return coop_h5_attr_str(g, "description", batch_desc);
}

static int write_batch(hid_t fid, const coop_io_batch *b, const io_xfer *x) {
  int st = 0;
  hid_t g = -1, d = -1;
  const hsize_t n = (hsize_t)b->count;
  const hid_t I64 = H5T_STD_I64LE, I32 = H5T_STD_I32LE, F64 = H5T_IEEE_F64LE;
  const batch_set sets[] = {
      {"iterations", I64, H5T_NATIVE_INT64, b->iterations, n, NULL, "iterations each problem took"},
      {"residual", F64, H5T_NATIVE_DOUBLE, b->residual, n, NULL,
       "final residual 2-norm of each problem (Jacobi: ||b - A x|| of the returned x; CG: the recurrence residual)"},
      {"r0", F64, H5T_NATIVE_DOUBLE, b->r0, n, NULL, "initial residual 2-norm ||b - A x0|| of each problem"},
      {"reason", I32, H5T_NATIVE_INT32, b->reason, n, NULL,
       "why each problem stopped: a reason code, named by the attribute codes"},
      {"seconds", F64, H5T_NATIVE_DOUBLE, b->seconds, n, "s", "time of each problem's solve alone"},
      {"rows", I64, H5T_NATIVE_INT64, b->nrows, n, NULL, "unknowns (rows) of each problem"},
      {"rank", I32, H5T_NATIVE_INT32, b->rank, n, NULL, "the MPI rank that solved each problem"},
      {"offsets", I64, H5T_NATIVE_INT64, b->offsets, n + 1, NULL,
       "problem i's solution is solution[offsets[i]:offsets[i+1]]; offsets[B] = rows of all problems"},
      {"solution", F64, H5T_NATIVE_DOUBLE, b->solution, (hsize_t)b->rows, NULL,
       "the computed solutions x_i, problem after problem, each in its own row order"}};
  const batch_set gen[] = {
      {"shift", F64, H5T_NATIVE_DOUBLE, b->shift, n, NULL, "shift s of each generated problem -lap(u) + s u = f"},
      {"side", I64, H5T_NATIVE_INT64, b->side, n, NULL,
       "interior points per side of each generated problem (rows = side^dim)"}};
  const batch_set heat[] = {
      {"dt", F64, H5T_NATIVE_DOUBLE, b->dt, n, NULL,
       "heat: each problem's time step (solver.dt, or 0.9 of its stability limit; with solver.t_end shrunk "
       "to t_end / steps)"},
      {"t_final", F64, H5T_NATIVE_DOUBLE, b->t_final, n, NULL, "heat: the time each problem reached, steps * dt"}};
  COOP_TRY(group_create(fid, "batch", &g));
  for (size_t i = 0; i < sizeof sets / sizeof *sets - !b->with_solution; i++) COOP_TRY(batch_dataset(g, &sets[i], x));
  for (size_t i = 0; b->shift && i < sizeof gen / sizeof *gen; i++) COOP_TRY(batch_dataset(g, &gen[i], x));
  for (size_t i = 0; b->dt && i < sizeof heat / sizeof *heat; i++) COOP_TRY(batch_dataset(g, &heat[i], x));
  COOP_H5_ID(d, H5Dopen2(g, "reason", H5P_DEFAULT));
  COOP_TRY(coop_h5_attr_str(d, "codes", or_empty(b->reason_codes)));
  COOP_TRY(batch_attrs(g, b));
done:
  COOP_H5_CLOSE(d, H5Dclose);
  COOP_H5_CLOSE(g, H5Gclose);
  return st;
}

static int write_meta(hid_t fid, const coop_io_result *r, const io_meta *m, const io_xfer *x) {
  COOP_CHECK(write_root(fid, m, r->series != NULL));
  COOP_CHECK(write_input(fid, m));
  if (r->batch) {
    COOP_CHECK(coop_h5_attr_str(fid, "batch", "/batch holds the problems of a batch run (no /grid, no /fields)"));
    COOP_CHECK(write_batch(fid, r->batch, x));
  } else {
    COOP_CHECK(write_grid(fid, r, m, x));
  }
  COOP_CHECK(write_solver(fid, m));
  COOP_CHECK(write_series(fid, m, x));
  return 0;
}

/* Chunks of at most 64^3 (3D) or 256^2 (2D) points and at most 1 MiB, halving
 * the slowest axis first so a chunk stays a run of whole rows. */
static void chunk_dims(int ndim, const int64_t *shape, size_t elsize, hsize_t c[3]) {
  const hsize_t base = ndim == 3 ? 64 : ndim == 2 ? 256 : 65536;
  for (;;) {
    hsize_t bytes = elsize;
    for (int d = 0; d < ndim; d++) {
      if (c[d] == 0) c[d] = (hsize_t)shape[d] < base ? (hsize_t)shape[d] : base;
      bytes *= c[d];
    }
    if (bytes <= ((hsize_t)1 << 20)) return;
    for (int d = 0; d < ndim; d++)
      if (c[d] > 1) {
        c[d] = (c[d] + 1) / 2;
        break;
      }
  }
}

static const char grid_points[] =
    "interior grid points only (the Dirichlet boundary values are not stored): element [k, j, i] "
    "(dataset order, x fastest) sits at origin + [k, j, i] * spacing of /grid; origin is the first "
    "interior point, one spacing in from the boundary";
static const char vector_points[] = "the vector's rows in the matrix's row order (row i at index i)";

/* Attach /grid/<axis> to each dimension (from dimension first on: a series'
 * dimension 0 is time): as a dimension scale where libhdf5_hl is linked, and
 * by name ("coordinates", dataset order, after first_name) either way. */
static int attach_coords(hid_t fid, hid_t dset, const coop_io_result *r, int first, const char *first_name) {
  int st = 0;
  hid_t scale = -1;
  char names[64] = "", path[8];
  if (first) snprintf(names, sizeof names, "%s", first_name);
  for (int d = 0; d < r->ndim; d++) {
    snprintf(path, sizeof path, "grid/%s", axis_name(r->ndim, d));
    snprintf(names + strlen(names), sizeof names - strlen(names), "%s/%s", d || first ? " " : "", path);
#ifdef COOP_HAVE_H5DS
    COOP_H5_ID(scale, H5Dopen2(fid, path, H5P_DEFAULT));
    COOP_H5_TRY(H5DSattach_scale(dset, scale, (unsigned)(d + first)));
    COOP_H5_TRY(H5DSset_label(dset, (unsigned)(d + first), axis_name(r->ndim, d)));
    COOP_H5_CLOSE(scale, H5Dclose);
    scale = -1;
    if (st) goto done;
#else
    (void)fid;
#endif
  }
  COOP_TRY(coop_h5_attr_str(dset, "coordinates", names));
done:
  COOP_H5_CLOSE(scale, H5Dclose);
  return st;
}

static int describe_field(hid_t fid, hid_t dset, const coop_io_result *r, const coop_io_field *f) {
  COOP_CHECK(coop_h5_attr_str(dset, "description", f->description ? f->description : "a field of the run"));
  COOP_CHECK(coop_h5_attr_str(dset, "points", r->ndim > 1 ? grid_points : vector_points));
  if (r->ndim > 1) COOP_CHECK(attach_coords(fid, dset, r, 0, NULL));
  return 0;
}

static int create_field(hid_t fid, hid_t g, hid_t space, const coop_io_result *r,
                        const coop_io_field *f) {
  int st = 0;
  hid_t dcpl = -1, dset = -1;
  hsize_t chunk[3] = {0, 0, 0};
  chunk_dims(r->ndim, r->global_shape, f->is_float ? 4 : 8, chunk);
  COOP_H5_ID(dcpl, H5Pcreate(H5P_DATASET_CREATE));
  COOP_H5_TRY(H5Pset_chunk(dcpl, r->ndim, chunk));
  /* Early allocation is what parallel HDF5 does anyway: the same file either way.
   * Every point is written, so a fill pass would only cost time. */
  COOP_H5_TRY(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
  COOP_H5_TRY(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
  COOP_H5_TRY(H5Pset_obj_track_times(dcpl, 0));
  COOP_H5_ID(dset, H5Dcreate2(g, f->name, f->is_float ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, space,
                         H5P_DEFAULT, dcpl, H5P_DEFAULT));
  COOP_TRY(describe_field(fid, dset, r, f));
done:
  COOP_H5_CLOSE(dset, H5Dclose);
  COOP_H5_CLOSE(dcpl, H5Pclose);
  return st;
}

static int create_fields(hid_t fid, const coop_io_result *r) {
  int st = 0;
  hid_t g = -1, space = -1;
  hsize_t dims[3];
  const int linked = r->nfields && COOP_H5DS_LINKS && r->ndim > 1; /* /fields/x, y (z) */
  if (r->batch) return 0; /* its solutions are in /batch */
  for (int d = 0; d < r->ndim; d++) dims[d] = (hsize_t)r->global_shape[d];
  COOP_TRY(group_create(fid, "fields", &g));
  COOP_H5_ID(space, H5Screate_simple(r->ndim, dims, NULL));
  COOP_TRY(coop_h5_attr_str(g, "description",
                            linked       ? "the solution (and other fields) on all points, global shape; each "
                                           "dataset says what it is and which points it holds; x, y (z) are no "
                                           "fields: /grid's coordinates under a second name (the same datasets, "
                                           "dimension scales), named here for netCDF-4 readers"
                            : r->nfields ? "the solution (and other fields) on all points, global shape; each "
                                           "dataset says what it is and which points it holds"
                                         : "empty: the run was told not to write its fields (output.fields = "
                                           "false)"));
  if (linked) COOP_TRY(link_coords(fid, g, r));
  for (int i = 0; i < r->nfields; i++) COOP_TRY(create_field(fid, g, space, r, &r->fields[i]));
done:
  COOP_H5_CLOSE(space, H5Sclose);
  COOP_H5_CLOSE(g, H5Gclose);
  return st;
}

/* This rank's block of one field; a rank with no points still takes part. */
static int write_block(hid_t g, const coop_io_result *r, const coop_io_field *f, hid_t dxpl) {
  int st = 0;
  hid_t dset = -1, fspace = -1, mspace = -1;
  hsize_t start[3], count[3], n = 1, one = 1;
  const double dummy = 0.0;
  for (int d = 0; d < r->ndim; d++) {
    start[d] = (hsize_t)r->local_offset[d];
    count[d] = (hsize_t)r->local_shape[d];
    n *= count[d];
  }
  COOP_H5_ID(dset, H5Dopen2(g, f->name, H5P_DEFAULT));
  COOP_H5_ID(fspace, H5Dget_space(dset));
  if (n > 0) {
    COOP_H5_TRY(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
    COOP_H5_ID(mspace, H5Screate_simple(r->ndim, count, NULL));
  } else {
    COOP_H5_TRY(H5Sselect_none(fspace));
    COOP_H5_ID(mspace, H5Screate_simple(1, &one, NULL));
    COOP_H5_TRY(H5Sselect_none(mspace));
  }
  COOP_H5_TRY(H5Dwrite(dset, f->is_float ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, mspace, fspace, dxpl,
                  n > 0 ? f->data : (const void *)&dummy));
done:
  COOP_H5_CLOSE(mspace, H5Sclose);
  COOP_H5_CLOSE(fspace, H5Sclose);
  COOP_H5_CLOSE(dset, H5Dclose);
  return st;
}

static int write_blocks(hid_t fid, const coop_io_result *r, hid_t dxpl) {
  int st = 0;
  hid_t g = -1;
  if (r->batch) return 0;
  COOP_H5_ID(g, H5Gopen2(fid, "fields", H5P_DEFAULT));
  for (int i = 0; i < r->nfields; i++) COOP_TRY(write_block(g, r, &r->fields[i], dxpl));
done:
  COOP_H5_CLOSE(g, H5Gclose);
  return st;
}

/* At the end, when /grid exists: /series/u names its coordinates (time, then
 * /grid's axes) and, with libhdf5_hl, has them attached as dimension scales;
 * step is indexed by time too, and /series/<axis> names /grid's scales, so
 * netCDF-4 readers open /series as a group of their own (link_coords). */
static int describe_series(hid_t fid, const coop_io_result *r) {
  int st = 0;
  hid_t g = -1, u = -1, t = -1, step = -1;
  if (r->ndim < 2) return 0;
  COOP_H5_ID(g, H5Gopen2(fid, "series", H5P_DEFAULT));
  COOP_H5_ID(u, H5Dopen2(g, "u", H5P_DEFAULT));
#ifdef COOP_HAVE_H5DS
  COOP_H5_ID(t, H5Dopen2(g, "time", H5P_DEFAULT));
  COOP_H5_ID(step, H5Dopen2(g, "step", H5P_DEFAULT));
  COOP_H5_TRY(H5DSset_scale(t, "time"));
  COOP_H5_TRY(H5DSattach_scale(u, t, 0));
  COOP_H5_TRY(H5DSset_label(u, 0, "time"));
  COOP_H5_TRY(H5DSattach_scale(step, t, 0));
#endif
  COOP_TRY(attach_coords(fid, u, r, 1, "/series/time"));
  COOP_TRY(link_coords(fid, g, r));
done:
  COOP_H5_CLOSE(step, H5Dclose);
  COOP_H5_CLOSE(t, H5Dclose);
  COOP_H5_CLOSE(u, H5Dclose);
  COOP_H5_CLOSE(g, H5Gclose);
  return st;
}

#if H5_VERSION_GE(1, 10, 2)
/* The 1.8 format: dense attribute storage, so /input may hold more than 64 KiB
 * of text, while HDF5 1.8 readers can still open the file. */
#define COOP_LIBVER_LOW H5F_LIBVER_V18
#define COOP_LIBVER_HIGH H5F_LIBVER_V18
#else
#define COOP_LIBVER_LOW H5F_LIBVER_LATEST
#define COOP_LIBVER_HIGH H5F_LIBVER_LATEST
#endif

static int make_fapl(MPI_Comm comm, hid_t *out) {
  int st = 0;
  hid_t fapl = -1;
  COOP_H5_ID(fapl, H5Pcreate(H5P_FILE_ACCESS));
  COOP_H5_TRY(H5Pset_libver_bounds(fapl, COOP_LIBVER_LOW, COOP_LIBVER_HIGH));
#ifdef H5_HAVE_PARALLEL
  COOP_H5_TRY(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL));
#if H5_VERSION_GE(1, 10, 0)
  COOP_H5_TRY(H5Pset_coll_metadata_write(fapl, 1));
#endif
#else
  (void)comm;
#endif
  *out = fapl;
  fapl = -1;
done:
  COOP_H5_CLOSE(fapl, H5Pclose);
  return st;
}

/* Create (or open for writing) the temporary file; the message names it. The
 * create is exclusive: it fails rather than follow or reuse whatever someone
 * planted under the temporary name (coop_outnames_create). */
static int open_file(const char *tmp, int create, hid_t fapl, hid_t *fid) {
  int st = 0;
  hid_t fcpl = -1;
  *fid = -1;
  if (create) {
    COOP_H5_ID(fcpl, H5Pcreate(H5P_FILE_CREATE));
    COOP_H5_TRY(H5Pset_obj_track_times(fcpl, 0)); /* for the root group */
  }
  *fid = create ? H5Fcreate(tmp, H5F_ACC_EXCL, fcpl, fapl) : H5Fopen(tmp, H5F_ACC_RDWR, fapl);
  if (*fid < 0) {
    const char *fn = create ? "H5Fcreate" : "H5Fopen";
    char *call = malloc(strlen(fn) + strlen(tmp) + 5);
    if (call) sprintf(call, "%s(\"%s\")", fn, tmp);
    st = coop_h5_fail(__FILE__, __LINE__, call ? call : fn);
    free(call);
  }
done:
  COOP_H5_CLOSE(fcpl, H5Pclose);
  return st;
}

#ifdef H5_HAVE_PARALLEL
/* All ranks create the file; metadata and dataset creation are collective calls
 * with identical arguments; blocks go in one collective write per field. Once
 * the file is open a failure cannot be undone collectively (H5Fclose after a
 * failed write hangs in HDF5's metadata flush): the ranks agree, rank 0
 * removes the temporaries, and the job ends with MPI_Abort. */
static int write_file(const coop_wctx *io, const coop_io_result *r, const io_meta *m) {
  int st = 0, open = 0;
  hid_t fapl = -1, dxpl = -1, fid = -1;
  if (r->series) { /* the file of the series, open on every rank: it is ours now */
    fid = r->series->fid;
    r->series->fid = -1;
    r->series->state = SERIES_TAKEN;
  }
  st = make_fapl(r->comm, &fapl);
  if (!st && (dxpl = H5Pcreate(H5P_DATASET_XFER)) < 0) st = coop_h5_fail(__FILE__, __LINE__, "H5Pcreate");
  if (!st && H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0)
    st = coop_h5_fail(__FILE__, __LINE__, "H5Pset_dxpl_mpio");
  if (!st && fid < 0) st = open_file(io->nm->tmp, 1, fapl, &fid);
  st = coop_write_settle(io, st, fid >= 0, &open);
  const io_xfer x = {dxpl, m->rank == 0};
  if (!st) st = coop_write_settle(io, write_meta(fid, r, m, &x), 1, &open);
  if (!st) st = coop_write_settle(io, create_fields(fid, r), 1, &open);
  if (!st && r->series) st = coop_write_settle(io, describe_series(fid, r), 1, &open);
  if (!st) {
    int local = injected(io, "write");
    if (!local) local = write_blocks(fid, r, dxpl);
    st = coop_write_settle(io, local, 1, &open);
  }
  if (!st) { /* the metadata goes out first: a flush that fails on one rank (a full disk)
               * is waited out by settle, where a close failing inside HDF5 deadlocks */
    const int flushed = H5Fflush(fid, H5F_SCOPE_GLOBAL) >= 0;
    st = coop_write_settle(io, flushed ? 0 : coop_h5_fail(__FILE__, __LINE__, "H5Fflush"), 1, &open);
  }
  if (!st) { /* collective: every rank that opened it closes it */
    const int closed = H5Fclose(fid) >= 0;
    st = coop_write_settle(io, closed ? 0 : coop_h5_fail(__FILE__, __LINE__, "H5Fclose"), !closed, &open);
  }
  if (st && open)
    coop_error_set_fatal(); /* fid stays open: closing it would hang */
  COOP_H5_CLOSE(dxpl, H5Pclose);
  COOP_H5_CLOSE(fapl, H5Pclose);
  return st;
}
#else
/* A file that failed to close is still open in HDF5, which would close it
 * again at exit (a collective flush that hangs or crashes): the job must end
 * with MPI_Abort (see coop_error_set_fatal). */
static int close_file(int st, hid_t fid) {
  if (fid < 0 || H5Fclose(fid) >= 0) return st;
  coop_error_set_fatal();
  return st ? st : coop_h5_fail(__FILE__, __LINE__, "H5Fclose");
}

/* Rank 0 creates the file (a series': opens it) with all metadata and empty datasets. */
static int serial_create(const char *tmp, const coop_io_result *r, const io_meta *m) {
  int st = 0;
  hid_t fapl = -1, fid = -1;
  const io_xfer x = {H5P_DEFAULT, 1};
  COOP_TRY(make_fapl(r->comm, &fapl));
  COOP_TRY(open_file(tmp, !r->series, fapl, &fid));
  COOP_TRY(write_meta(fid, r, m, &x));
  COOP_TRY(create_fields(fid, r));
  if (r->series) COOP_TRY(describe_series(fid, r));
done:
  st = close_file(st, fid);
  COOP_H5_CLOSE(fapl, H5Pclose);
  return st;
}

static int serial_blocks(const coop_wctx *io, const coop_io_result *r) {
  int st = 0;
  hid_t fapl = -1, fid = -1;
  COOP_TRY(injected(io, "write"));
  COOP_TRY(make_fapl(r->comm, &fapl));
  COOP_TRY(open_file(io->nm->tmp, 0, fapl, &fid));
  COOP_TRY(write_blocks(fid, r, H5P_DEFAULT));
done:
  st = close_file(st, fid);
  COOP_H5_CLOSE(fapl, H5Pclose);
  return st;
}

/* Serial HDF5: then the ranks in turn open the file, write their blocks and close
 * it; each turn ends with all ranks agreeing, which also passes the turn on. */
static int write_file(const coop_wctx *io, const coop_io_result *r, const io_meta *m) {
  int st = 0;
  if (r->series) r->series->state = SERIES_TAKEN;
  if (m->rank == 0) st = serial_create(io->nm->tmp, r, m);
  st = coop_write_agree(r->comm, st, io->path);
  for (int turn = 0; turn < m->size && !st; turn++) {
    if (m->rank == turn) st = serial_blocks(io, r);
    st = coop_write_agree(r->comm, st, io->path);
  }
  return st;
}
#endif

/* ---- time series ------------------------------------------------------------ */

static const char series_desc[] =
    "snapshots of the field taken during the run: u[k] is the field after step[k] time steps, at "
    "time[k]; k = 0 is the initial field, the last one the final field (as /fields/u)";
static const char series_points[] =
    "each snapshot u[k] holds the interior grid points as /fields/u does (the Dirichlet boundary "
    "values are not stored): element [k, ..., j, i] sits at origin + [..., j, i] * spacing of "
    "/grid; chunked one snapshot per chunk";

/* A 1D dataset of n entries, allocated now and written entry by entry. */
static int create_list(hid_t g, const char *name, hid_t ftype, hsize_t n, const char *desc) {
  int st = 0;
  hid_t space = -1, dcpl = -1, dset = -1;
  COOP_H5_ID(space, H5Screate_simple(1, &n, NULL));
  COOP_H5_ID(dcpl, H5Pcreate(H5P_DATASET_CREATE));
  COOP_H5_TRY(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
  COOP_H5_TRY(H5Pset_obj_track_times(dcpl, 0));
  COOP_H5_ID(dset, H5Dcreate2(g, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  COOP_TRY(coop_h5_attr_str(dset, "description", desc));
done:
  COOP_H5_CLOSE(dset, H5Dclose);
  COOP_H5_CLOSE(dcpl, H5Pclose);
  COOP_H5_CLOSE(space, H5Sclose);
  return st;
}

/* /series/u with room for s->count snapshots, one per chunk (a chunk spans a
 * snapshot's points as /fields/u's chunks do), and /series/step and time. */
static int create_series(hid_t fid, const coop_io_series *s, const char *desc) {
  int st = 0;
  hid_t g = -1, space = -1, dcpl = -1, dset = -1;
  const coop_io_result *r = &s->grid;
  hsize_t dims[4], chunk[4] = {1, 0, 0, 0};
  dims[0] = (hsize_t)s->count;
  for (int d = 0; d < r->ndim; d++) dims[d + 1] = (hsize_t)r->global_shape[d];
  chunk_dims(r->ndim, r->global_shape, s->is_float ? 4 : 8, chunk + 1);
  COOP_TRY(group_create(fid, "series", &g));
  COOP_TRY(coop_h5_attr_str(g, "description", series_desc));
  COOP_H5_ID(space, H5Screate_simple(r->ndim + 1, dims, NULL));
  COOP_H5_ID(dcpl, H5Pcreate(H5P_DATASET_CREATE));
  COOP_H5_TRY(H5Pset_chunk(dcpl, r->ndim + 1, chunk));
  COOP_H5_TRY(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY)); /* as /fields: the same file either way */
  COOP_H5_TRY(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
  COOP_H5_TRY(H5Pset_obj_track_times(dcpl, 0));
  COOP_H5_ID(dset, H5Dcreate2(g, "u", s->is_float ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, space, H5P_DEFAULT,
                              dcpl, H5P_DEFAULT));
  COOP_TRY(coop_h5_attr_str(dset, "description", desc ? desc : "snapshots of the field"));
  COOP_TRY(coop_h5_attr_str(dset, "points", series_points));
  COOP_TRY(create_list(g, "step", H5T_STD_I64LE, dims[0],
                       "time steps done when snapshot k was taken (0: the initial field)"));
  COOP_TRY(create_list(g, "time", H5T_IEEE_F64LE, dims[0],
                       "time of snapshot k: step[k] * dt (/input resolved: solver.dt, solver.alpha); "
                       "in the units of the box lengths and the diffusivity"));
done:
  COOP_H5_CLOSE(dset, H5Dclose);
  COOP_H5_CLOSE(dcpl, H5Pclose);
  COOP_H5_CLOSE(space, H5Sclose);
  COOP_H5_CLOSE(g, H5Gclose);
  return st;
}

/* Entry k of a 1D dataset, written by the writer (the others take part with nothing). */
static int put_entry(hid_t fid, const char *name, hid_t mtype, const void *v, hsize_t k, hid_t dxpl,
                     int writer) {
  int st = 0;
  hid_t dset = -1, fspace = -1, mspace = -1;
  const hsize_t one = 1;
  COOP_H5_ID(dset, H5Dopen2(fid, name, H5P_DEFAULT));
  COOP_H5_ID(fspace, H5Dget_space(dset));
  COOP_H5_ID(mspace, H5Screate_simple(1, &one, NULL));
  if (writer) {
    COOP_H5_TRY(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &k, NULL, &one, NULL));
  } else {
    COOP_H5_TRY(H5Sselect_none(fspace));
    COOP_H5_TRY(H5Sselect_none(mspace));
  }
  COOP_H5_TRY(H5Dwrite(dset, mtype, mspace, fspace, dxpl, v));
done:
  COOP_H5_CLOSE(mspace, H5Sclose);
  COOP_H5_CLOSE(fspace, H5Sclose);
  COOP_H5_CLOSE(dset, H5Dclose);
  return st;
}

/* This rank's block of the next snapshot, and (writer) its step and time. */
static int put_snapshot(hid_t fid, const coop_io_series *s, const void *owned, int64_t step, double time,
                        hid_t dxpl, int writer) {
  int st = 0;
  hid_t dset = -1, fspace = -1, mspace = -1;
  const coop_io_result *r = &s->grid;
  const hsize_t k = (hsize_t)s->written, one = 1;
  hsize_t start[4] = {k}, count[4] = {1}, n = 1;
  const double dummy = 0.0;
  for (int d = 0; d < r->ndim; d++) {
    start[d + 1] = (hsize_t)r->local_offset[d];
    count[d + 1] = (hsize_t)r->local_shape[d];
    n *= count[d + 1];
  }
  COOP_H5_ID(dset, H5Dopen2(fid, "series/u", H5P_DEFAULT));
  COOP_H5_ID(fspace, H5Dget_space(dset));
  if (n > 0) {
    COOP_H5_TRY(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
    COOP_H5_ID(mspace, H5Screate_simple(r->ndim + 1, count, NULL));
  } else {
    COOP_H5_TRY(H5Sselect_none(fspace));
    COOP_H5_ID(mspace, H5Screate_simple(1, &one, NULL));
    COOP_H5_TRY(H5Sselect_none(mspace));
  }
  COOP_H5_TRY(H5Dwrite(dset, s->is_float ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, mspace, fspace, dxpl,
                       n > 0 ? owned : (const void *)&dummy));
  COOP_TRY(put_entry(fid, "series/step", H5T_NATIVE_INT64, &step, k, dxpl, writer));
  COOP_TRY(put_entry(fid, "series/time", H5T_NATIVE_DOUBLE, &time, k, dxpl, writer));
done:
  COOP_H5_CLOSE(mspace, H5Sclose);
  COOP_H5_CLOSE(fspace, H5Sclose);
  COOP_H5_CLOSE(dset, H5Dclose);
  return st;
}

#ifdef H5_HAVE_PARALLEL
/* Every rank creates the file and /series, and keeps it open for the run. */
static int series_create_file(const coop_wctx *io, coop_io_series *s, const char *desc) {
  int st = 0, open = 0;
  hid_t fapl = -1;
  st = make_fapl(s->comm, &fapl);
  if (!st) st = open_file(s->nm.tmp, 1, fapl, &s->fid);
  st = coop_write_settle(io, st, s->fid >= 0, &open);
  if (!st) st = coop_write_settle(io, create_series(s->fid, s, desc), 1, &open);
  if (st && open) coop_error_set_fatal(); /* the file stays open: closing it would hang */
  COOP_H5_CLOSE(fapl, H5Pclose);
  return st;
}

/* One collective write per snapshot. A failure leaves the file open (its
 * collective close would hang): fatal, the job ends with MPI_Abort. */
static int series_put_file(const coop_wctx *io, coop_io_series *s, const void *owned, int64_t step,
                           double time) {
  int st = 0, open = 0;
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  int local = dxpl < 0 ? coop_h5_fail(__FILE__, __LINE__, "H5Pcreate") : 0;
  if (!local && H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0)
    local = coop_h5_fail(__FILE__, __LINE__, "H5Pset_dxpl_mpio");
  if (!local) local = put_snapshot(s->fid, s, owned, step, time, dxpl, s->rank == 0);
  if (!local) local = injected(io, "snapshot"); /* after the collective write: no rank waits in it */
  st = coop_write_settle(io, local, 1, &open);
  if (st) coop_error_set_fatal();
  if (dxpl >= 0) H5Pclose(dxpl);
  return st;
}

/* Collective close of a series' file that was never finished (a failure
 * before coop_io_write took it, or a run stopped by a signal). A close that
 * fails (a full disk: the metadata flush) leaves HDF5 holding the file:
 * fatal, as in write_file. */
static int series_release(const coop_wctx *io, coop_io_series *s) {
  int open = 0;
  const int closed = s->fid < 0 || H5Fclose(s->fid) >= 0;
  s->fid = -1;
  const int st = coop_write_settle(io, closed ? 0 : coop_h5_fail(__FILE__, __LINE__, "H5Fclose"), !closed, &open);
  if (st && open) coop_error_set_fatal();
  return st;
}
#else
static int series_create_rank0(coop_io_series *s, const char *desc) {
  int st = 0;
  hid_t fapl = -1, fid = -1;
  COOP_TRY(make_fapl(s->comm, &fapl));
  COOP_TRY(open_file(s->nm.tmp, 1, fapl, &fid));
  COOP_TRY(create_series(fid, s, desc));
done:
  st = close_file(st, fid);
  COOP_H5_CLOSE(fapl, H5Pclose);
  return st;
}

/* Rank 0 creates the file and /series and closes it. */
static int series_create_file(const coop_wctx *io, coop_io_series *s, const char *desc) {
  (void)io;
  return coop_write_agree(s->comm, s->rank == 0 ? series_create_rank0(s, desc) : 0, s->path);
}

static int series_turn(const coop_wctx *io, coop_io_series *s, const void *owned, int64_t step, double time) {
  int st = 0;
  hid_t fapl = -1, fid = -1;
  COOP_TRY(injected(io, "snapshot"));
  COOP_TRY(make_fapl(s->comm, &fapl));
  COOP_TRY(open_file(s->nm.tmp, 0, fapl, &fid));
  COOP_TRY(put_snapshot(fid, s, owned, step, time, H5P_DEFAULT, s->rank == 0));
done:
  st = close_file(st, fid);
  COOP_H5_CLOSE(fapl, H5Pclose);
  return st;
}

/* The ranks in turn open the file, write their block and close it. */
static int series_put_file(const coop_wctx *io, coop_io_series *s, const void *owned, int64_t step,
                           double time) {
  int st = 0;
  for (int turn = 0; turn < s->size && !st; turn++)
    st = coop_write_agree(s->comm, s->rank == turn ? series_turn(io, s, owned, step, time) : 0, s->path);
  return st;
}

static int series_release(const coop_wctx *io, coop_io_series *s) {
  (void)io;
  (void)s;
  return 0;
}
#endif

static void series_free(coop_io_series *s) {
  if (!s) return;
  coop_outnames_free(&s->nm);
  free(s->path);
  free(s->steps);
  free(s->times);
  free(s);
}

/* The layout fields of r; what this rank alone can tell is wrong. */
static int series_init(coop_io_series *s, const char *path, const coop_io_result *r, int64_t count,
                       int is_float) {
  int64_t points = 0;
  s->comm = r->comm;
  s->fid = -1;
  s->count = count;
  s->is_float = is_float != 0;
  s->grid.comm = r->comm;
  s->grid.ndim = r->ndim;
  for (int d = 0; d < 3; d++) {
    s->grid.global_shape[d] = r->global_shape[d];
    s->grid.local_shape[d] = r->local_shape[d];
    s->grid.local_offset[d] = r->local_offset[d];
    s->grid.proc_dims[d] = r->proc_dims[d];
    s->grid.spacing[d] = r->spacing[d];
    s->grid.origin[d] = r->origin[d];
  }
  COOP_MPI(MPI_Comm_rank(r->comm, &s->rank));
  COOP_MPI(MPI_Comm_size(r->comm, &s->size));
  COOP_CHECK(check_grid(&s->grid, &points));
  if (s->grid.ndim < 2) return COOP_ERROR(COOP_ERR_RUNTIME, "a time series needs a 2D or 3D grid");
  if (count < 1 || count > ((int64_t)1 << 40))
    return COOP_ERROR(COOP_ERR_RUNTIME, "a time series of %lld snapshots", (long long)count);
  s->path = strdup(path);
  s->steps = malloc((size_t)count * sizeof *s->steps);
  s->times = malloc((size_t)count * sizeof *s->times);
  if (!s->path || !s->steps || !s->times) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (s->rank != 0) return 0;
  /* the file system takes them all, and the metadata (see meta_bytes) */
  double bytes = (double)count * (s->is_float ? 4.0 : 8.0);
  for (int d = 0; d < s->grid.ndim; d++) bytes *= (double)s->grid.global_shape[d];
  bytes += 32 * 1024;
  return coop_output_space(path, bytes < 0x1p63 ? (uint64_t)bytes : UINT64_MAX);
}

int coop_io_series_open(const char *path, const coop_io_result *layout, int xdmf, int64_t count,
                        int is_float, const char *description, coop_io_series **out) {
  coop_h5_quiet q;
  int named = 0;
  *out = NULL;
  if (!path || !layout || layout->comm == MPI_COMM_NULL)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_io_series_open: no path, layout or communicator");
  coop_io_series *s = calloc(1, sizeof *s);
  int st = s ? series_init(s, path, layout, count, is_float) : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  st = coop_write_agree(layout->comm, st, path);
  if (!st) st = coop_write_agree(layout->comm, check_same(&s->grid, s->size), path);
  if (!st) named = !(st = coop_outnames_create(&s->nm, s->comm, path, xdmf));
  if (!st) {
    const coop_wctx io = {s->comm, s->rank, s->size, &s->nm, s->path};
    coop_h5_quiet_begin(&q);
    st = series_create_file(&io, s, description);
    coop_h5_quiet_end(&q);
  }
  if (st) {
    if (named && s->rank == 0) coop_outnames_discard(&s->nm);
    series_free(s);
    return coop_error_trace(st, __FILE__, __LINE__);
  }
  *out = s;
  return 0;
}

int coop_io_series_write(coop_io_series *s, const void *owned, int64_t step, double time) {
  coop_h5_quiet q;
  if (!s || s->state != SERIES_OPEN || s->written >= s->count) /* the same on every rank */
    return COOP_ERROR(COOP_ERR_RUNTIME, "snapshot at step %lld: the series is %s", (long long)step,
                      !s ? "missing" : s->state != SERIES_OPEN ? "closed" : "full");
  const coop_wctx io = {s->comm, s->rank, s->size, &s->nm, s->path};
  coop_h5_quiet_begin(&q);
  int st = series_put_file(&io, s, owned, step, time);
  coop_h5_quiet_end(&q);
  if (st) { /* agreed: every rank is here */
    s->state = SERIES_BROKEN;
    if (s->rank == 0) coop_outnames_discard(&s->nm);
    MPI_Barrier(s->comm); /* no rank ends the job before the temporaries are gone */
    return coop_error_trace(st, __FILE__, __LINE__);
  }
  s->steps[s->written] = step;
  s->times[s->written] = time;
  s->written++;
  return 0;
}

int64_t coop_io_series_count(const coop_io_series *s) { return s ? s->written : 0; }

void coop_io_series_close(coop_io_series *s) {
  coop_h5_quiet q;
  if (!s) return;
  if (s->state == SERIES_OPEN) { /* never finished: no output */
    const coop_wctx io = {s->comm, s->rank, s->size, &s->nm, s->path};
    coop_h5_quiet_begin(&q);
    series_release(&io, s);
    coop_h5_quiet_end(&q);
    if (s->rank == 0) coop_outnames_discard(&s->nm);
  }
  series_free(s);
}

void coop_io_series_discard(const coop_io_series *s) {
  if (s && s->state != SERIES_TAKEN) coop_outnames_discard(&s->nm);
}

/* ---- the public functions ------------------------------------------------- */

/* Bytes of field data in the file: less than the file, so a file system with
 * less free cannot take it, found before HDF5 starts. */
static uint64_t data_bytes(const coop_io_result *r) {
  uint64_t points = 1, total = 0;
  for (int d = 0; d < r->ndim && d < 3; d++) points *= (uint64_t)(r->global_shape[d] > 0 ? r->global_shape[d] : 0);
  for (int i = 0; i < r->nfields; i++) total += points * (r->fields[i].is_float ? 4 : 8);
  if (r->batch) /* seven numbers per problem (heat: nine), the offsets, the solutions */
    total += 76 * (uint64_t)r->batch->count + (r->batch->with_solution ? 8 * (uint64_t)r->batch->rows : 0);
  return total;
}

/* Room the metadata takes, over-estimated (the texts, coordinates, history,
 * timing of size ranks, and 32 KiB for HDF5's own structures). Asked of a file system
 * before a series' file gets the rest: with Open MPI's ompio only the
 * aggregator sees a failed collective write, and HDF5 1.10 then leaves the
 * ranks in different barriers of its metadata flush (a deadlock no timeout
 * of ours can reach), so a full disk must be found before that flush. */
static uint64_t meta_bytes(const coop_io_result *r, int size) {
  uint64_t total = 32 * 1024 + 16 * (uint64_t)r->hist_len + 8 * (uint64_t)r->nphases * (uint64_t)size;
  const char *const texts[] = {r->input_text, r->resolved, r->input_name, r->devices};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) total += texts[i] ? strlen(texts[i]) : 0;
  for (int d = 0; d < r->ndim && d < 3; d++) total += 8 * (uint64_t)(r->global_shape[d] > 0 ? r->global_shape[d] : 0);
  return total;
}

/* The XDMF file by rank 0, then the renames; collective. */
static int finish(const coop_wctx *io, const coop_io_result *r, int xdmf) {
  int st = 0;
  const coop_io_series *sr = r->series;
  const coop_xdmf_series ts = {sr ? sr->written : 0, sr ? sr->steps : NULL, sr ? sr->times : NULL,
                               sr ? sr->is_float : 0};
  if (xdmf && io->rank == 0 && !(st = injected(io, "xdmf")))
    st = coop_xdmf_write(io->nm->xmf_tmp, io->nm->base, r, sr ? &ts : NULL);
  if ((st = coop_write_agree(io->comm, st, io->path))) {
    if (io->rank == 0) coop_outnames_discard(io->nm);
    return st;
  }
  if (io->rank == 0) st = coop_outnames_publish(io->nm, io->path);
  if (!st && !xdmf && io->rank == 0) coop_output_drop_stale_xmf(io->path);
  return coop_write_agree(io->comm, st, io->path);
}

/* A series handed to coop_io_write must be the whole one, of this output. */
static int check_series(const coop_io_series *sr, const char *path) {
  if (sr->state != SERIES_OPEN || strcmp(sr->path, path) != 0)
    return COOP_ERROR(COOP_ERR_RUNTIME, "the time series of %s is %s", sr->path,
                      sr->state != SERIES_OPEN ? "closed" : "another file's");
  if (sr->written != sr->count)
    return COOP_ERROR(COOP_ERR_RUNTIME, "the time series holds %lld of its %lld snapshots",
                      (long long)sr->written, (long long)sr->count);
  return 0;
}

int coop_io_write(const char *path, const coop_io_result *r, int xdmf) {
  coop_outnames nm;
  io_meta m;
  coop_h5_quiet q;
  int st, named = 0;
  if (!path || !r || r->comm == MPI_COMM_NULL)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_io_write: no path, result or communicator");
  coop_io_series *const sr = r->series;
  memset(&m, 0, sizeof m);
  memset(&nm, 0, sizeof nm);
  COOP_MPI(MPI_Comm_rank(r->comm, &m.rank));
  COOP_MPI(MPI_Comm_size(r->comm, &m.size));
  /* a series' file already has its names (and its XDMF choice) */
  const coop_outnames *names = sr ? &sr->nm : &nm;
  const coop_wctx io = {r->comm, m.rank, m.size, names, path};
  st = check_local(r, m.rank);
  if (!st && sr) st = check_series(sr, path);
  if (!st && m.rank == 0 && ((r->ndim >= 1 && r->ndim <= 3) || r->batch))
    st = coop_output_space(path, data_bytes(r) + (sr ? meta_bytes(r, m.size) : 0));
  st = coop_write_agree(r->comm, st, path);
  if (!st) st = coop_write_agree(r->comm, check_same(r, m.size), path); /* the same verdict everywhere: told once */
  if (!st && !sr) st = coop_outnames_create(&nm, r->comm, path, xdmf);
  named = !st || sr;
  if (!st) st = meta_build(&m, r);
  if (!st) {
    coop_h5_quiet_begin(&q);
    st = write_file(&io, r, &m);
    coop_h5_quiet_end(&q);
  }
  if (!st) {
    st = finish(&io, r, sr ? names->xmf != NULL : xdmf); /* a failed rename has removed what it did not rename */
  } else {
    if (sr && sr->state == SERIES_OPEN) { /* failed before the file was taken */
      /* its close after a failure (a full disk) may fail or hang in the
       * collective metadata flush: the job ends by MPI_Abort instead */
      if (sr->fid >= 0) coop_error_set_fatal();
      sr->state = SERIES_BROKEN;
    }
    if (named && m.rank == 0) coop_outnames_discard(names);
  }
  meta_free(&m);
  coop_outnames_free(&nm);
  return st ? coop_error_trace(st, __FILE__, __LINE__) : 0;
}

int coop_io_parallel(void) {
#ifdef H5_HAVE_PARALLEL
  return 1;
#else
  return 0;
#endif
}

static int read_all(hid_t dset, const char *path, const char *name, double **data, int *ndim,
                    int64_t shape[3]) {
  int st = 0, nd;
  hid_t type = -1, space = -1;
  hsize_t dims[3];
  size_t n = 1;
  double *buf = NULL;
  COOP_H5_ID(type, H5Dget_type(dset));
  if (H5Tget_class(type) != H5T_FLOAT) {
    st = COOP_ERROR(COOP_ERR_RUNTIME, "%s: /fields/%s is not floating-point", path, name);
    goto done;
  }
  COOP_H5_ID(space, H5Dget_space(dset));
  COOP_H5_TRY(nd = H5Sget_simple_extent_ndims(space));
  if (nd < 1 || nd > 3) {
    st = COOP_ERROR(COOP_ERR_RUNTIME, "%s: /fields/%s has %d dimensions, expected 1 to 3", path,
                    name, nd);
    goto done;
  }
  COOP_H5_TRY(H5Sget_simple_extent_dims(space, dims, NULL));
  for (int d = 0; d < nd; d++) n *= dims[d];
  if (!(buf = malloc(n ? n * sizeof *buf : 1))) {
    st = COOP_ERROR(COOP_ERR_RUNTIME, "out of memory for %zu values", n);
    goto done;
  }
  if (n) COOP_H5_TRY(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
  *ndim = nd;
  for (int d = 0; d < 3; d++) shape[d] = d < nd ? (int64_t)dims[d] : 1;
  *data = buf;
  buf = NULL;
done:
  free(buf);
  COOP_H5_CLOSE(space, H5Sclose);
  COOP_H5_CLOSE(type, H5Tclose);
  return st;
}

int coop_io_read_field(const char *path, const char *name, double **data, int *ndim,
                       int64_t shape[3]) {
  int st = 0;
  hid_t fid = -1, g = -1, dset = -1;
  coop_h5_quiet q;
  if (!path || !name || !data || !ndim || !shape)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_io_read_field: missing argument");
  *data = NULL;
  coop_h5_quiet_begin(&q);
  COOP_H5_ID(fid, H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT));
  COOP_H5_ID(g, H5Gopen2(fid, "fields", H5P_DEFAULT));
  COOP_H5_ID(dset, H5Dopen2(g, name, H5P_DEFAULT));
  COOP_TRY(read_all(dset, path, name, data, ndim, shape));
done:
  COOP_H5_CLOSE(dset, H5Dclose);
  COOP_H5_CLOSE(g, H5Gclose);
  COOP_H5_CLOSE(fid, H5Fclose);
  coop_h5_quiet_end(&q);
  return st;
}
