#include "driver/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/budget.h"
#include "driver/cli.h"
#include "coop_build.h"
#include "io/io.h"
#include "kernels/vec.h"

void coop_report_help(int help) {
  if (!help) {
    printf("coopsolve %s\n", PACKAGE_VERSION);
    printf("CUDA: %s\n", COOP_HAVE_CUDA ? "yes (" COOP_CUDA_ARCHS ")" : "no");
    printf("NCCL: %s\n", COOP_HAVE_NCCL ? "yes" : "no");
    const int ngpu = coop_cuda_device_count();
    printf("GPUs visible: %d\n", ngpu);
    char name[256];
    int sms = 0, smem = 0;
    /* what tests size their boxes by (tests/gpu.sh: the on-chip plans) */
    if (ngpu > 0 && !coop_cuda_device_name(0, name, sizeof name) && !coop_cuda_device_shape(0, &sms, &smem))
      printf("GPU 0: %s, %d SMs, %d bytes of shared memory a block\n", name, sms, smem);
    printf("HDF5: %s\n", coop_io_parallel() ? "parallel" : "serial");
    printf("MPI CUDA-aware: %s\n", coop_comm_cuda_aware() ? "yes" : "no");
    return;
  }
  coop_cli_usage(stdout);
  printf("\n");
  coop_config_print_help(stdout);
}

static const char axis_name[] = "xyz";

const char coop_report_heat_description[] =
    "computed solution u at the final time t = iterations * dt (/solver) of the heat equation "
    "u_t = alpha lap(u) (forward Euler, 5-point stencil in 2D, 7-point in 3D) with Dirichlet "
    "boundary values; the initial field and boundary come from problem.type; solver.alpha, "
    "solver.dt and the box lengths grid.lx/ly/lz are in /input resolved";

/* Rank 0 prints one line per rank (at most 64) of what it owns. */
static int print_ranks(const coop_comm *c, const coop_linsys *ls) {
  const coop_decomp *d = &ls->dec;
  int64_t box[6] = {ls->n, 1, 1, ls->row_lo, 0, 0};
  if (ls->grid)
    for (int a = 0; a < 3; a++) box[a] = d->n[a], box[3 + a] = d->offset[a];
  int64_t *all = c->rank == 0 ? malloc(sizeof box * (size_t)c->size) : NULL;
  if (c->rank == 0 && !all) {
    coop_error_raise(COOP_ERR_RUNTIME, __FILE__, __LINE__, "out of host memory");
    coop_comm_abort(c, COOP_ERR_RUNTIME); /* the gather cannot be joined */
  }
  COOP_MPI(MPI_Gather(box, 6, MPI_INT64_T, all, 6, MPI_INT64_T, 0, c->world));
  const int nd = ls->grid ? d->ndim : 1;
  for (int r = 0; c->rank == 0 && r < c->size && r < 64; r++) {
    const int64_t *b = all + 6 * r;
    printf("#   rank %d: %lld", r, (long long)b[0]);
    for (int a = 1; a < nd; a++) printf(" x %lld", (long long)b[a]);
    printf(ls->grid ? " points from (%lld" : " rows from %lld", (long long)b[3]);
    for (int a = 1; a < nd; a++) printf(", %lld", (long long)b[3 + a]);
    printf(ls->grid ? ")\n" : "\n");
  }
  if (c->rank == 0 && c->size > 64) printf("#   ... %d more ranks\n", c->size - 64);
  free(all);
  return 0;
}

int coop_report_dry_run(const coop_comm *c, const coop_config *cfg, const coop_linsys *ls,
                        const coop_solver_type *type, const char *backend) {
  coop_budget_report mem; /* first: a plan that cannot fit prints nothing but why */
  COOP_CHECK(coop_budget_check(c, cfg, ls, type, backend, &mem));
  if (c->rank == 0) {
    char *resolved = coop_config_resolved(cfg);
    printf("# resolved configuration (each value's origin in its comment)\n%s\n", resolved ? resolved : "");
    free(resolved);
    if (ls->grid) {
      const coop_decomp *d = &ls->dec;
      printf("# decomposition: %d ranks:", c->size);
      for (int a = 0; a < d->ndim; a++) printf("%s %d along %c", a ? "," : "", d->dims[a], axis_name[a]);
      printf("\n");
    } else {
      printf("# matrix %s: %lld rows, %lld entries on rank 0 after expansion; rows in blocks over %d ranks\n",
             ls->matrix, (long long)ls->n_global, (long long)ls->mm.nnz, c->size);
    }
  }
  COOP_CHECK(print_ranks(c, ls));
  coop_budget_print(c, &mem, stdout);
  if (c->rank == 0) {
    printf("# solver: %s; backend: %s (run.sync = %s)\n", type->name, backend, coop_config_str(cfg, "run.sync"));
  }
  return 0;
}

/* This rank's solution values as doubles, contiguous (x fastest); caller frees. */
static int fetch_owned(const coop_report_input *in, const coop_solve *sv, double **owned) {
  const coop_linsys *ls = in->ls;
  *owned = malloc((size_t)ls->n * sizeof **owned + 1);
  if (!*owned) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (!in->type->grid_form) return coop_vec_download(sv->x, *owned);
  const coop_grid *gr = &ls->s.grid;
  const size_t es = coop_prec_size(gr->prec), stored = coop_grid_points(gr) * es;
  const coop_region own = coop_region_owned(gr);
  void *full = malloc(stored), *packed = malloc((size_t)ls->n * es + 1);
  int rc = full && packed ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (!rc) rc = in->be->download(in->be, full, sv->u, stored);
  if (!rc) rc = coop_pack_host(gr, &own, full, packed);
  if (!rc) rc = coop_vec_convert_host(gr->prec, ls->n, packed, *owned, 1);
  free(full);
  free(packed);
  return rc;
}

/* Device names of all ranks, "; "-joined without repeats, and the GPU count:
 * distinct (host, PCI bus id) pairs, so ranks that each see their own GPU as
 * device 0 still count apart. Every rank takes part in the gather even when
 * its own query failed; the failure is returned afterwards. */
int coop_report_devices(const coop_comm *c, int device, char *names, size_t len, int *gpus) {
  enum { KEY = 384 };
  char key[KEY] = "", host[64] = "", name[128] = "", bus[32] = "";
  int rc = 0;
  gethostname(host, sizeof host - 1);
  if (device >= 0 && !(rc = coop_cuda_device_name(device, name, sizeof name)))
    rc = coop_cuda_device_busid(device, bus, sizeof bus);
  snprintf(key, sizeof key, "%s|%s|%s", host, bus, name);
  char *all = c->rank == 0 ? calloc((size_t)c->size, KEY) : NULL;
  if (c->rank == 0 && !all) {
    coop_error_raise(COOP_ERR_RUNTIME, __FILE__, __LINE__, "out of host memory");
    coop_comm_abort(c, COOP_ERR_RUNTIME); /* the gather cannot be joined */
  }
  COOP_MPI(MPI_Gather(key, KEY, MPI_CHAR, all, KEY, MPI_CHAR, 0, c->world));
  names[0] = '\0';
  *gpus = 0;
  for (int r = 0; c->rank == 0 && device >= 0 && r < c->size; r++) {
    const char *k = all + (size_t)r * KEY, *dev = strrchr(k, '|') + 1;
    int seen = 0;
    for (int q = 0; q < r; q++) seen |= strcmp(all + (size_t)q * KEY, k) == 0;
    if (seen) continue;
    (*gpus)++;
    if (!strstr(names, dev))
      snprintf(names + strlen(names), len - strlen(names), "%s%s", names[0] ? "; " : "", dev);
  }
  free(all);
  COOP_MPI(MPI_Bcast(gpus, 1, MPI_INT, 0, c->world));
  return rc;
}

typedef struct {
  int has_exact;
  double emax, el2; /* against the exact solution */
  double gbs, mpts; /* throughput */
  char devices[1024];
  int gpus;
  double ph_min[COOP_MAX_PHASES], ph_max[COOP_MAX_PHASES], ph_mean[COOP_MAX_PHASES]; /* over the ranks */
} run_figures;

static int compute_figures(const coop_comm *c, const coop_report_input *in, const coop_solve *sv,
                           const double *owned, run_figures *fig) {
  const coop_linsys *ls = in->ls;
  double local[2] = {0.0, 0.0}, sum = 0.0;
  /* heat: the exact solution decays in time (sine), or is not known (laplace) */
  const double amp = strcmp(in->type->name, "heat") == 0
                         ? coop_problem_heat_decay(&ls->poisson, coop_config_real(in->cfg, "solver.alpha"), (double)sv->ctl.iterations * sv->dt)
                         : 1.0;
  fig->has_exact = (ls->grid && amp >= 0) || ls->exact;
  if (ls->grid && amp >= 0) {
    coop_problem_error(&ls->poisson, &ls->dec, &ls->s, owned, amp, &local[0], &local[1]);
  } else if (ls->exact) {
    for (int64_t i = 0; i < ls->n; i++) {
      const double e = fabs(owned[i] - ls->exact[i]);
      if (e > local[0] || e != e) local[0] = e;
      local[1] += e * e;
    }
  }
  COOP_MPI(MPI_Allreduce(&local[0], &fig->emax, 1, MPI_DOUBLE, MPI_MAX, c->world));
  COOP_MPI(MPI_Allreduce(&local[1], &sum, 1, MPI_DOUBLE, MPI_SUM, c->world));
  /* grids: discrete L2 norm sqrt(h^d sum e^2), which tends to the continuous one */
  double vol = 1.0;
  for (int a = 0; ls->grid && a < ls->s.grid.ndim; a++) vol *= ls->poisson.h[a];
  fig->el2 = sqrt(vol * sum);
  /* the method's own count of bytes per iteration, summed over the ranks */
  double bytes = sv->bytes_per_iter;
  COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_DOUBLE, MPI_SUM, c->world));
  const double its = (double)sv->ctl.iterations;
  fig->mpts = sv->t_solve > 0 ? (double)sv->global_n * its / sv->t_solve / 1e6 : 0.0;
  fig->gbs = sv->t_solve > 0 ? bytes * its / sv->t_solve / 1e9 : 0.0;
  /* each phase's time: min, max and mean over the ranks (every rank times the same phases) */
  double sums[COOP_MAX_PHASES];
  const int np = sv->nphases;
  COOP_MPI(MPI_Allreduce(sv->phase_time, fig->ph_min, np, MPI_DOUBLE, MPI_MIN, c->world));
  COOP_MPI(MPI_Allreduce(sv->phase_time, fig->ph_max, np, MPI_DOUBLE, MPI_MAX, c->world));
  COOP_MPI(MPI_Allreduce(sv->phase_time, sums, np, MPI_DOUBLE, MPI_SUM, c->world));
  for (int i = 0; i < np; i++) fig->ph_mean[i] = sums[i] / c->size;
  return coop_report_devices(c, in->device, fig->devices, sizeof fig->devices, &fig->gpus);
}

void coop_report_layout(const coop_comm *c, const coop_linsys *ls, coop_io_result *r) {
  r->comm = c->world;
  if (!ls->grid) {
    r->ndim = 1;
    r->global_shape[0] = ls->n_global;
    r->local_shape[0] = ls->n;
    r->local_offset[0] = ls->row_lo;
    r->proc_dims[0] = c->size;
    r->spacing[0] = 1.0;
    r->origin[0] = 0.0;
    return;
  }
  const coop_decomp *d = &ls->dec;
  r->ndim = d->ndim;
  for (int i = 0; i < d->ndim; i++) { /* dataset order: slowest axis first */
    const int a = d->ndim - 1 - i;
    r->global_shape[i] = d->global_n[a];
    r->local_shape[i] = d->n[a];
    r->local_offset[i] = d->offset[a];
    r->proc_dims[i] = d->dims[a];
    r->spacing[i] = ls->poisson.h[a];
    r->origin[i] = ls->poisson.h[a];
  }
}

static int write_file(const coop_comm *c, const coop_report_input *in, const coop_solve *sv,
                      const void *values, const run_figures *fig) {
  const char *phases[COOP_MAX_PHASES + 2] = {"setup", "solve"};
  double times[COOP_MAX_PHASES + 2] = {in->t_setup, sv->t_solve};
  for (int i = 0; i < sv->nphases; i++) phases[2 + i] = sv->phase_name[i], times[2 + i] = sv->phase_time[i];
  const coop_linsys *ls = in->ls;
  char *resolved = coop_config_resolved(in->cfg);
  coop_io_field field = {
      ls->grid ? "u" : "x", values, ls->prec == COOP_FP32,
      !ls->grid ? "computed solution x of the linear system A x = b (A from problem.matrix, b from "
                  "problem.rhs, see /input resolved)"
      : strcmp(in->type->name, "heat") == 0 ? coop_report_heat_description
                 : "computed solution u of the Poisson problem -lap(u) = f with Dirichlet boundary "
                   "values (5-point stencil in 2D, 7-point in 3D); dimensionless; problem.type and "
                   "the box lengths grid.lx/ly/lz are in /input resolved"};
  coop_io_result r;
  memset(&r, 0, sizeof r);
  coop_report_layout(c, ls, &r);
  r.version = PACKAGE_VERSION;
  r.gpus = fig->gpus;
  r.devices = fig->devices;
  r.input_name = in->input_name;
  r.input_text = in->input_text;
  r.resolved = resolved ? resolved : "";
  r.solver = in->type->name;
  r.backend = in->backend;
  r.mode = sv->mode;
  r.precision = coop_config_str(in->cfg, "solver.precision");
  r.reason = coop_reason_name(sv->ctl.reason);
  r.iterations = sv->ctl.iterations;
  r.residual = sv->ctl.rnorm;
  r.rel_residual = sv->ctl.r0 > 0 ? sv->ctl.rnorm / sv->ctl.r0 : 0.0;
  r.solve_time = sv->t_solve;
  r.true_residual = sv->true_rnorm;
  r.barriers = sv->barriers;
  r.steps = sv->steps;
  r.blocks = sv->grid_blocks;
  r.ipc_faces = in->ipc_faces;
  if (in->type->attrs) in->type->attrs(sv, in->sdata, &r); /* the family's kernel-path attributes */
  r.has_exact = fig->has_exact;
  r.error_max = fig->emax;
  r.error_l2 = fig->el2;
  if (strcmp(in->type->name, "heat") == 0) {
    r.dt = sv->dt;
    r.time = (double)sv->ctl.iterations * sv->dt;
  }
  r.hist_iter = sv->ctl.hist_iter;
  r.hist_res = sv->ctl.hist_res;
  r.hist_len = (size_t)sv->ctl.hist_len;
  r.hist_true = in->type->grid_form; /* Jacobi checks f - A u; Krylov methods record their recurrence */
  r.phase_names = phases;
  r.phase_times = times;
  r.nphases = 2 + sv->nphases;
  r.fields = &field;
  r.nfields = coop_config_bool(in->cfg, "output.fields") ? 1 : 0;
  r.series = in->series;
  /* XDMF describes grids (a matrix problem's vector has none) and needs a field
   * (a series brings its own choice, made when it was opened) */
  const int rc = coop_io_write(coop_config_str(in->cfg, "output.file"), &r,
                               ls->grid && r.nfields && coop_config_bool(in->cfg, "output.xdmf"));
  free(resolved);
  return rc;
}

static void print_summary(const coop_comm *c, const coop_report_input *in, const coop_solve *sv,
                          const run_figures *fig) {
  const coop_linsys *ls = in->ls;
  printf("coopsolve: %s, ", in->type->name);
  if (ls->grid) {
    printf("%dD ", ls->dec.ndim);
    for (int a = 0; a < ls->dec.ndim; a++) printf("%s%lld", a ? " x " : "", (long long)ls->dec.global_n[a]);
  } else {
    printf("matrix %s (%lld rows)", ls->matrix, (long long)ls->n_global);
  }
  printf(", %s, %d rank%s, backend %s (%s)%s%s\n", coop_config_str(in->cfg, "solver.precision"),
         c->size, c->size > 1 ? "s" : "", in->backend, sv->mode, fig->gpus ? " on " : "", fig->devices);
  if (in->type->view) in->type->view(sv, in->sdata, stdout);
  if (strcmp(in->type->name, "heat") != 0) { /* the stop test, as PETSc's -ksp_view gives it */
    printf("  stop        rtol %g (of the initial residual), atol %g, dtol %g, max_iter %lld; residual 2-norm, "
           "unpreconditioned", sv->ctl.rtol, sv->ctl.atol, sv->ctl.dtol, (long long)sv->ctl.max_iter);
    if (in->type->grid_form && sv->ctl.check_every > 1) printf(", checked every %lld sweeps", (long long)sv->ctl.check_every);
    printf("\n");
  }
  printf("  reason      %s\n", coop_reason_name(sv->ctl.reason));
  printf("  iterations  %lld\n", (long long)sv->ctl.iterations);
  if (strcmp(in->type->name, "heat") == 0)
    printf("  simulated   t = %.9g after %lld steps of dt = %.9g (alpha %.9g)%s\n",
           (double)sv->ctl.iterations * sv->dt, (long long)sv->ctl.iterations, sv->dt,
           coop_config_real(in->cfg, "solver.alpha"),
           in->series ? "; snapshots in /series" : "");
  printf("  residual    %.6e (relative %.3e)", sv->ctl.rnorm, sv->ctl.r0 > 0 ? sv->ctl.rnorm / sv->ctl.r0 : 0.0);
  if (sv->true_rnorm >= 0) printf(", true ||b - A x|| %.6e", sv->true_rnorm);
  printf("\n");
  if (fig->has_exact)
    printf("  error       max %.6e, L2 %.6e (against the exact solution)\n", fig->emax, fig->el2);
  printf("  time        %.6f s solve, %.3f s setup\n", sv->t_solve, in->t_setup);
  if (sv->nphases) {
    printf("  phases      seconds, min / max / mean over %d rank%s:", c->size, c->size > 1 ? "s" : "");
    for (int i = 0; i < sv->nphases; i++)
      printf("%s %s %.4g / %.4g / %.4g", i ? ";" : "", sv->phase_name[i], fig->ph_min[i], fig->ph_max[i], fig->ph_mean[i]);
    printf("\n");
  }
  if (sv->ctl.iterations > 0)
    printf("  per iteration: %.3f us\n", 1e6 * sv->t_solve / (double)sv->ctl.iterations);
  if (sv->barrier_its > 1)
    printf("  barriers per iteration: 1/%d\n", sv->barrier_its);
  else
    printf("  barriers per iteration: %d\n", sv->barriers);
  if (sv->grid_blocks) printf("  persistent blocks: %d\n", sv->grid_blocks);
  if (in->ipc_faces) printf("  halo: %d faces GPU to GPU (CUDA IPC) on rank 0\n", in->ipc_faces);
  if (in->halo_nccl) printf("  halo: every face through NCCL, queued on the GPU's stream (tune.halo = nccl)\n");
  if (in->type->report) in->type->report(sv, in->sdata, stdout);
  printf("  throughput  %.1f Munknowns/s, %.1f GB/s (by the method's count of %.0f bytes per iteration on rank 0)\n",
         fig->mpts, fig->gbs, sv->bytes_per_iter);
  if (fig->gpus && fig->gpus < c->size)
    printf("  note        %d ranks shared %d GPU(s): timings are not per-GPU figures\n", c->size, fig->gpus);
  printf("  output      %s\n", coop_config_str(in->cfg, "output.file"));
  fflush(stdout);
}

int coop_report_write(const coop_comm *c, const coop_report_input *in, const coop_solve *sv) {
  double *owned = NULL;
  void *values = NULL;
  run_figures fig;
  memset(&fig, 0, sizeof fig);
  int rc = fetch_owned(in, sv, &owned);
  if (!rc && coop_fault(c, "output")) rc = COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  /* agree before each collective step, so no rank enters one alone */
  if (!(rc = coop_comm_agree(c, rc))) rc = compute_figures(c, in, sv, owned, &fig);
  if (!rc && in->ls->prec == COOP_FP32) { /* written as computed */
    if (!(values = malloc((size_t)in->ls->n * 4 + 1))) rc = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
    else rc = coop_vec_convert_host(COOP_FP32, in->ls->n, owned, values, 0);
  }
  if (!(rc = coop_comm_agree(c, rc))) rc = write_file(c, in, sv, values ? values : owned, &fig);
  if (!rc && c->rank == 0) print_summary(c, in, sv, &fig);
  free(owned);
  free(values);
  return rc;
}
