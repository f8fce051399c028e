#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "coop_build.h"
#include "io.h"

void coop_report_help(int help) {
  if (!help) {
    printf("coopsolve %s\n", PACKAGE_VERSION);
    printf("CUDA: %s\n", COOP_HAVE_CUDA ? "yes (" COOP_CUDA_ARCHS ")" : "no");
    printf("GPUs visible: %d\n", coop_cuda_device_count());
    printf("HDF5: %s\n", coop_io_parallel() ? "parallel" : "serial");
    printf("MPI CUDA-aware: %s\n", coop_comm_cuda_aware() ? "yes" : "no");
    return;
  }
  coop_cli_usage(stdout);
  printf("\n");
  coop_config_print_help(stdout);
}

static const char axis_name[] = "xyz";

int coop_report_dry_run(const coop_comm *c, const coop_config *cfg, const coop_decomp *d,
                        const coop_stencil *s, const char *backend) {
  int64_t box[6] = {d->n[0], d->n[1], d->n[2], d->offset[0], d->offset[1], d->offset[2]};
  int64_t *all = c->rank == 0 ? malloc(sizeof box * (size_t)c->size) : NULL;
  if (c->rank == 0 && !all) {
    coop_error_raise(COOP_ERR_RUNTIME, __FILE__, __LINE__, "out of host memory");
    coop_comm_abort(c, COOP_ERR_RUNTIME); /* the gather cannot be joined */
  }
  COOP_MPI(MPI_Gather(box, 6, MPI_INT64_T, all, 6, MPI_INT64_T, 0, c->world));
  if (c->rank == 0) {
    char *resolved = coop_config_resolved(cfg);
    const double field = (double)coop_stencil_points(s) * (double)coop_stencil_elem_size(s);
    printf("# resolved configuration (each value's origin in its comment)\n%s\n", resolved ? resolved : "");
    free(resolved);
    printf("# decomposition: %d ranks:", c->size);
    for (int a = 0; a < d->ndim; a++) printf("%s %d along %c", a ? "," : "", d->dims[a], axis_name[a]);
    printf("\n");
    for (int r = 0; r < c->size && r < 64; r++) {
      const int64_t *b = all + 6 * r;
      printf("#   rank %d: %lld", r, (long long)b[0]);
      for (int a = 1; a < d->ndim; a++) printf(" x %lld", (long long)b[a]);
      printf(" points from (%lld", (long long)b[3]);
      for (int a = 1; a < d->ndim; a++) printf(", %lld", (long long)b[3 + a]);
      printf(")\n");
    }
    if (c->size > 64) printf("#   ... %d more ranks\n", c->size - 64);
    printf("# memory on rank 0: 3 fields x %zu stored points (ghost width %lld) x %zu bytes = %.3f MiB\n",
           coop_stencil_points(s), (long long)s->g[0], coop_stencil_elem_size(s), 3 * field / 1048576.0);
    printf("# backend: %s (run.sync = %s)\n", backend, coop_config_str(cfg, "run.sync"));
  }
  free(all);
  return 0;
}

/* This rank's owned values, contiguous, on the host; caller frees. */
static int fetch_owned(const coop_report_input *in, const coop_solve *sv, void **owned) {
  const coop_stencil *s = in->s;
  const size_t es = coop_stencil_elem_size(s), stored = coop_stencil_points(s) * es;
  const coop_region own = coop_region_owned(s);
  void *full = malloc(stored);
  *owned = malloc((size_t)coop_region_points(&own) * es + 1);
  if (!full || !*owned) {
    free(full);
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  }
  int rc = in->be->download(in->be, full, sv->u, stored);
  if (!rc) rc = coop_pack_host(s, &own, full, *owned);
  free(full);
  return rc;
}

/* Device names of all ranks, "; "-joined without repeats, and the GPU count:
 * distinct (host, PCI bus id) pairs, so ranks that each see their own GPU as
 * device 0 still count apart. Every rank takes part in the gather even when
 * its own query failed; the failure is returned afterwards. */
static int gather_devices(const coop_comm *c, const coop_report_input *in, char *names, size_t len,
                          int *gpus) {
  enum { KEY = 384 };
  char key[KEY] = "", host[64] = "", name[128] = "", bus[32] = "";
  int rc = 0;
  gethostname(host, sizeof host - 1);
  if (in->device >= 0 && !(rc = coop_cuda_device_name(in->device, name, sizeof name)))
    rc = coop_cuda_device_busid(in->device, bus, sizeof bus);
  snprintf(key, sizeof key, "%s|%s|%s", host, bus, name);
  char *all = c->rank == 0 ? calloc((size_t)c->size, KEY) : NULL;
  if (c->rank == 0 && !all) {
    coop_error_raise(COOP_ERR_RUNTIME, __FILE__, __LINE__, "out of host memory");
    coop_comm_abort(c, COOP_ERR_RUNTIME); /* the gather cannot be joined */
  }
  COOP_MPI(MPI_Gather(key, KEY, MPI_CHAR, all, KEY, MPI_CHAR, 0, c->world));
  names[0] = '\0';
  *gpus = 0;
  for (int r = 0; c->rank == 0 && in->device >= 0 && r < c->size; r++) {
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
  double emax, el2; /* against the exact solution */
  double gbs, mpts; /* throughput */
  char devices[1024];
  int gpus;
} run_figures;

static int compute_figures(const coop_comm *c, const coop_report_input *in, const coop_solve *sv,
                           const void *owned, run_figures *fig) {
  double local[2], sum = 0.0;
  coop_problem_error(in->prob, in->dec, in->s, owned, &local[0], &local[1]);
  COOP_MPI(MPI_Allreduce(&local[0], &fig->emax, 1, MPI_DOUBLE, MPI_MAX, c->world));
  COOP_MPI(MPI_Allreduce(&local[1], &sum, 1, MPI_DOUBLE, MPI_SUM, c->world));
  /* discrete L2 norm: sqrt(h^d sum e^2), which tends to the continuous one */
  double vol = 1.0;
  for (int a = 0; a < in->s->ndim; a++) vol *= in->prob->h[a];
  fig->el2 = sqrt(vol * sum);
  /* fewest bytes a sweep moves: read u and f, write unew */
  const double updates = (double)sv->global_points * (double)sv->ctl.iterations;
  fig->mpts = sv->t_solve > 0 ? updates / sv->t_solve / 1e6 : 0.0;
  fig->gbs = sv->t_solve > 0 ? 3.0 * (double)coop_stencil_elem_size(in->s) * updates / sv->t_solve / 1e9 : 0.0;
  return gather_devices(c, in, fig->devices, sizeof fig->devices, &fig->gpus);
}

static int write_file(const coop_comm *c, const coop_report_input *in, const coop_solve *sv,
                      const void *owned, const run_figures *fig) {
  static const char *const phases[] = {"setup", "solve", "sweep", "halo", "check"};
  const double times[] = {in->t_setup, sv->t_solve, sv->t_sweep, sv->t_halo, sv->t_check};
  const coop_decomp *d = in->dec;
  const int nd = d->ndim;
  char *resolved = coop_config_resolved(in->cfg);
  coop_io_field field = {"u", owned, in->s->prec == COOP_FP32};
  coop_io_result r;
  memset(&r, 0, sizeof r);
  r.comm = c->world;
  r.ndim = nd;
  for (int i = 0; i < nd; i++) { /* dataset order: slowest axis first */
    const int a = nd - 1 - i;
    r.global_shape[i] = d->global_n[a];
    r.local_shape[i] = d->n[a];
    r.local_offset[i] = d->offset[a];
    r.proc_dims[i] = d->dims[a];
    r.spacing[i] = in->prob->h[a];
    r.origin[i] = in->prob->h[a];
  }
  r.version = PACKAGE_VERSION;
  r.gpus = fig->gpus;
  r.devices = fig->devices;
  r.input_name = in->input_name;
  r.input_text = in->input_text;
  r.resolved = resolved ? resolved : "";
  r.solver = coop_config_str(in->cfg, "solver.name");
  r.backend = in->backend;
  r.mode = in->be->mode;
  r.precision = coop_config_str(in->cfg, "solver.precision");
  r.reason = coop_reason_name(sv->ctl.reason);
  r.iterations = sv->ctl.iterations;
  r.residual = sv->ctl.rnorm;
  r.rel_residual = sv->ctl.r0 > 0 ? sv->ctl.rnorm / sv->ctl.r0 : 0.0;
  r.solve_time = sv->t_solve;
  r.has_exact = 1;
  r.error_max = fig->emax;
  r.error_l2 = fig->el2;
  r.hist_iter = sv->ctl.hist_iter;
  r.hist_res = sv->ctl.hist_res;
  r.hist_len = (size_t)sv->ctl.hist_len;
  r.phase_names = phases;
  r.phase_times = times;
  r.nphases = 5;
  r.fields = &field;
  r.nfields = 1;
  const int rc = coop_io_write(coop_config_str(in->cfg, "output.file"), &r,
                               coop_config_bool(in->cfg, "output.xdmf"));
  free(resolved);
  return rc;
}

static void print_summary(const coop_comm *c, const coop_report_input *in, const coop_solve *sv,
                          const run_figures *fig) {
  const coop_decomp *d = in->dec;
  printf("coopsolve: %s, %dD ", coop_config_str(in->cfg, "solver.name"), d->ndim);
  for (int a = 0; a < d->ndim; a++) printf("%s%lld", a ? " x " : "", (long long)d->global_n[a]);
  printf(", %s, %d rank%s, backend %s (%s)%s%s\n", coop_config_str(in->cfg, "solver.precision"),
         c->size, c->size > 1 ? "s" : "", in->backend, in->be->mode, fig->gpus ? " on " : "",
         fig->devices);
  printf("  reason      %s\n", coop_reason_name(sv->ctl.reason));
  printf("  iterations  %lld\n", (long long)sv->ctl.iterations);
  printf("  residual    %.6e (relative %.3e)\n", sv->ctl.rnorm,
         sv->ctl.r0 > 0 ? sv->ctl.rnorm / sv->ctl.r0 : 0.0);
  printf("  error       max %.6e, L2 %.6e (against the exact solution)\n", fig->emax, fig->el2);
  printf("  time        %.3f s solve (sweeps %.3f, halo %.3f, checks %.3f on rank 0), %.3f s setup\n",
         sv->t_solve, sv->t_sweep, sv->t_halo, sv->t_check, in->t_setup);
  printf("  throughput  %.1f Mpoints/s, %.1f GB/s (3 values moved per point update)\n", fig->mpts,
         fig->gbs);
  if (fig->gpus && fig->gpus < c->size)
    printf("  note        %d ranks shared %d GPU(s): timings are not per-GPU figures\n", c->size,
           fig->gpus);
  printf("  output      %s\n", coop_config_str(in->cfg, "output.file"));
  fflush(stdout);
}

int coop_report_write(const coop_comm *c, const coop_report_input *in, const coop_solve *sv) {
  void *owned = NULL;
  run_figures fig;
  memset(&fig, 0, sizeof fig);
  int rc = fetch_owned(in, sv, &owned);
  if (!rc && coop_fault(c, "output")) rc = COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  /* agree before each collective step, so no rank enters one alone */
  if (!(rc = coop_comm_agree(c, rc))) rc = compute_figures(c, in, sv, owned, &fig);
  if (!(rc = coop_comm_agree(c, rc))) rc = write_file(c, in, sv, owned, &fig);
  if (!rc && c->rank == 0) print_summary(c, in, sv, &fig);
  free(owned);
  return rc;
}
