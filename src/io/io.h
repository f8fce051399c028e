/* HDF5 output of one run, in the DESIGN.md layout:
 *   /            attrs program, version, created, ranks, gpus, devices
 *   /input       attrs name, text, resolved
 *   /grid        attrs axes, shape, spacing, origin, decomposition, description;
 *                grids: datasets z, y, x, the points' coordinates, dimension
 *                scales of the fields (with libhdf5_hl) and named by their
 *                "coordinates" attribute either way
 *   /fields/<n>  global field, chunked, float64 or float32; attrs description,
 *                points (which points it holds), coordinates (grids)
 *   /fields/z, y, x  grids with libhdf5_hl and fields: /grid/z, y, x under a
 *                second name (hard links), where netCDF-4 readers (xarray,
 *                ncdump) look for a variable's dimensions (docs/xarray.md);
 *                so a grid field may not be named x, y or z
 *   /solver      attrs solver, mode, backend, iterations, reason, residual,
 *                true_residual (Krylov methods), barriers_per_iteration, ...
 *   /history     datasets iteration (int64), residual (float64); attrs say
 *                which norm (kind "true" or "recurrence"); with libhdf5_hl
 *                iteration is residual's dimension scale
 *   /timing      one float64 dataset per phase, one value per rank
 *   /batch       a batch run, in place of /grid and /fields: per problem
 *                iterations, residual, r0, reason, seconds, rows, rank; the
 *                solutions back to back (solution) and their offsets
 *   /series      time series (heat with output.every): u (T, [nz,] ny, nx),
 *                the interior points as /fields/u, chunked one snapshot per
 *                chunk; step (int64, T) and time (float64, T); written during
 *                the run (coop_io_series_*); with libhdf5_hl time is the
 *                dimension scale of u's dimension 0 and of step, and z, y, x
 *                name /grid's as in /fields
 * Every group and dataset carries a "description"; strings are scalar
 * variable-length UTF-8 (h5py reads str), except the dimension-scale
 * attributes the HDF5 specification fixes (CLASS, NAME, REFERENCE_LIST,
 * DIMENSION_LIST). Arrays in /grid use dataset order (slowest axis first),
 * named by axes.
 * Written by all ranks together (parallel HDF5, collective hyperslab writes) or
 * by the ranks in turn on serial HDF5; the same content either way. The file is
 * written under a fresh hidden name beside it (io/files.h) and renamed when
 * complete, and an XDMF 3 file (see coop_io_write) is written beside it the
 * same way. */
#ifndef COOP_IO_H
#define COOP_IO_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct coop_io_series coop_io_series;

typedef struct {
  const char *name; /* dataset name under /fields */
  const void *data; /* this rank's owned block, contiguous, dataset order, no ghosts */
  int is_float;     /* 1: float32 elements, 0: float64 */
  const char *description; /* what the field is, one line, the same on all ranks;
                              the dataset's "description" (NULL: a generic one) */
} coop_io_field;

/* A batch run's results (src/driver/batch_run.c), written as /batch in place
 * of /grid and /fields: counts, flags and attributes the same on all ranks;
 * the arrays are read on rank 0 only, in problem order. */
typedef struct {
  int64_t count, rows; /* problems B; rows of all problems together */
  const int64_t *iterations, *nrows, *offsets; /* B, B, B + 1 (offsets[B] = rows) */
  const double *residual, *r0, *seconds;       /* B */
  const int32_t *reason, *rank;                /* B: coop_reason, the rank that solved it */
  const double *solution; /* rows values, problem after problem */
  int with_solution;      /* 0: no /batch/solution (output.fields = false) */
  const double *shift;    /* B: generated problems' shifts; NULL (on every rank): none */
  const int64_t *side;    /* B: generated problems' points per side, with shift */
  const double *dt, *t_final; /* B: heat's time step and final time; NULL (on every rank): not heat */
  double alpha, t_end;        /* heat: solver.alpha and solver.t_end (0: off) */
  const char *method, *pc, *sync, *schedule, *sync_used, *schedule_used, *source;
  const char *reason_codes; /* "0 none, 1 converged_rtol, ..." */
  int64_t group_blocks, group_blocks_used, groups, barriers, seed;
  int64_t levels_used;        /* rank 0's row groups: levels of the split (1: none) */
  double busy_max, busy_mean; /* rank 0's blocks: the busiest one's and the mean seconds */
  double kernel_time;         /* the slowest rank's seconds of solve kernels (device events; 0: host) */
} coop_io_batch;

typedef struct {
  MPI_Comm comm; /* all ranks of the run; coop_io_write is collective over it */
  const coop_io_batch *batch; /* a batch run (ndim 0, no fields), or NULL */

  /* grid, dataset order (z,y,x in 3D; y,x in 2D) */
  int ndim;
  int64_t global_shape[3];
  int64_t local_shape[3];  /* this rank */
  int64_t local_offset[3]; /* this rank */
  int proc_dims[3];        /* ranks per axis */
  double spacing[3];
  double origin[3]; /* coordinate of the first stored point */

  /* run metadata: identical on all ranks except where said */
  const char *version;
  int gpus;            /* GPUs used by the run, 0 on the host backend */
  const char *devices; /* device names, "; "-separated; read on rank 0 */
  const char *input_name, *input_text, *resolved;

  /* solver summary */
  const char *solver, *backend, *mode, *precision, *reason;
  int64_t iterations;
  double residual, rel_residual, solve_time;
  double true_residual; /* ||b - A x|| after the solve; < 0: not computed */
  int64_t barriers;     /* grid barriers per iteration (persistent kernels), else 0 */
  int64_t steps;        /* grid-form steps executed (0: not a grid-form solver) */
  int64_t blocks;       /* persistent grid on rank 0, 0: none */
  int64_t ipc_faces;    /* halo faces of rank 0 through CUDA IPC */
  int halo_fused;       /* 1: halos stored inside the persistent kernel (tune.fused_halo) */
  int resident;         /* the field stayed on the chip across sweeps (tune.resident): 1 registers, 2 shared memory */
  int has_exact; /* 1: error_max and error_l2 are valid */
  double error_max, error_l2;
  double dt, time; /* a time stepper's (heat) step and final time; dt <= 0: none */

  /* residual history (read on rank 0) */
  const int64_t *hist_iter;
  const double *hist_res;
  size_t hist_len;
  int hist_true; /* 1: each entry is ||b - A x||_2 computed from the iterate (Jacobi);
                    0: the 2-norm of the method's recurrence residual (Krylov) */

  /* per-phase times of this rank, seconds; gathered into /timing */
  const char *const *phase_names;
  const double *phase_times;
  int nphases;

  const coop_io_field *fields;
  int nfields; /* 0: an empty /fields (output.fields = false) */

  /* the time series written into this output during the run, or NULL: then
   * coop_io_write finishes that file (coop_io_series_open) instead of
   * creating one, and the XDMF file describes the series */
  coop_io_series *series;
} coop_io_result;

/* Write the run's file at path (and path minus ".h5" plus ".xmf", or path.xmf
 * when path does not end in ".h5", if xdmf). Collective. On failure the real
 * names keep what they held (only a failed rename of the XDMF file, after the
 * HDF5 file's, leaves the new HDF5 file) and no temporary is left; the lowest
 * failing rank keeps its message, the others get a remote one. A failure while
 * HDF5 holds the file open cannot be closed collectively: then every rank
 * returns with coop_error_is_fatal() set and the job must end by MPI_Abort,
 * and a rank that failed alone (the others stuck in a collective write for 5
 * s) ends the job itself. COOP_FAULT=write:R or xdmf:0 injects a failure. */
int coop_io_write(const char *path, const coop_io_result *r, int xdmf);

/* ---- time series ------------------------------------------------------------
 * A run that writes snapshots while it runs opens its output before the solve:
 * the temporary file (io/files.h names) gets /series with room for count
 * snapshots; coop_io_series_write adds one; coop_io_write, with
 * coop_io_result.series set, writes the rest into the same file and renames
 * it; coop_io_series_close removes what was not renamed. A 16384^2 series
 * never sits in memory: each snapshot goes to the file when taken (parallel
 * HDF5: one collective write into the file the ranks hold open; serial: the
 * ranks in turn open, write their block and close). */

/* Collective. layout: the grid part of a coop_io_result (comm, ndim, shapes,
 * offsets, proc_dims, spacing, origin); is_float: fp32 snapshots; description:
 * what /series/u holds. A failure (no room on the file system for count
 * snapshots, a file that cannot be created) leaves no file; status agreed. */
int coop_io_series_open(const char *path, const coop_io_result *layout, int xdmf, int64_t count,
                        int is_float, const char *description, coop_io_series **out);
/* Collective: snapshot number k (k = snapshots written so far) of the field
 * after step steps, at time time; owned is this rank's block as in
 * coop_io_field. A failure on any rank is every rank's: the temporaries are
 * removed before it returns (and, when HDF5 holds the failed file open,
 * coop_error_is_fatal() is set: the job must end by MPI_Abort).
 * COOP_FAULT=snapshot:R injects one. */
int coop_io_series_write(coop_io_series *s, const void *owned, int64_t step, double time);
/* Snapshots written so far. */
int64_t coop_io_series_count(const coop_io_series *s);
/* Collective (all ranks or none): closes a file coop_io_write did not take
 * and removes the temporaries that were not renamed; frees s. Accepts NULL. */
void coop_io_series_close(coop_io_series *s);

/* Rank-local, for a job about to end by MPI_Abort: remove the series'
 * temporaries (any rank may; a name, never its target). Accepts NULL. */
void coop_io_series_discard(const coop_io_series *s);

/* 1 when this build writes with parallel HDF5 (H5_HAVE_PARALLEL), else 0. */
int coop_io_parallel(void);

/* Read a whole /fields dataset as float64 on the calling rank (serial, for
 * tests and tools). *data is malloc'ed, caller frees; shape in dataset order. */
int coop_io_read_field(const char *path, const char *name, double **data, int *ndim,
                       int64_t shape[3]);

#endif
