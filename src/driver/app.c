/* The program's flow. Each phase ends with the ranks agreeing on a status, so
 * a failure anywhere stops all ranks together (input errors with status 2,
 * printed once by rank 0; run-time failures with status 1, printed by the
 * rank that failed). Inside the solve the ranks cannot agree without extra
 * messages, so a failure there ends the job with MPI_Abort. */
#include "driver/app.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/backend.h"
#include "driver/batch_run.h"
#include "driver/budget.h"
#include "driver/cli.h"
#include "io/config.h"
#include "coop_build.h"
#include "kernels/halo.h"
#include "io/files.h"
#include "io/io.h"
#include "problem/problem.h"
#include "driver/report.h"
#include "solvers/checkpoint.h"
#include "solvers/solver.h"
#include "core/signal.h"

typedef struct {
  coop_cli cli;
  char scratch[8192];
  coop_config *cfg;
  char *text; /* the input file's text */
  coop_linsys ls;
  const coop_solver_type *type;
  void *sdata;
  const char *backend; /* "host" or "cuda" */
  int device;
  coop_backend *be;
  coop_halo halo;
  int ipc_faces;      /* halo faces that go GPU to GPU through CUDA IPC */
  void *u, *unew, *f; /* the grid form (Jacobi, heat; heat has no f) */
  coop_solve sv;
  struct coop_ckpt ck;
  char *ckpt_path, *fingerprint;
  int64_t restart_it; /* the checkpoint's iteration with --restart, else 0 */
  double t_setup;
  /* heat's time series (output.every): the open output and the snapshot buffers */
  const coop_comm *comm;
  coop_io_series *series;
  int series_failed; /* a snapshot failed on every rank (agreed) */
  void *snap_dev, *snap_host;
  int batch;      /* a [batch] input: driver/batch_run.c runs it */
  double t_start; /* MPI_Wtime() at the start */
} app_state;

/* Exit status of a run stopped by a signal after writing a whole checkpoint. */
#define EXIT_CHECKPOINTED 3
#define EXIT_NOT_CONVERGED 4 /* solver.error_if_not_converged (PETSc's name) */

/* Print an agreed failure once and return it: an input error by the one rank
 * coop_comm_agree left to tell it (rank 0 unless only another rank met it),
 * a run-time fault by each rank that failed itself. */
static int fail(const coop_comm *c, int local, int status) {
  if (!local || coop_error_is_remote()) return status;
  if (status == COOP_ERR_INPUT)
    fprintf(stderr, "coopsolve: %s\n", coop_error_message());
  else
    fprintf(stderr, "coopsolve: rank %d: %s\n", c->rank, coop_error_message());
  return status;
}

/* The whole of a regular file, NUL-terminated; caller frees. */
static int slurp(const char *path, char **text, long *len) {
  struct stat st;
  int fd, rc = coop_file_open_input(path, "the input file", &fd); /* a FIFO is refused, not waited on */
  FILE *fp = rc ? NULL : fdopen(fd, "rb");
  *text = NULL;
  if (rc) {
  } else if (!fp || fstat(fd, &st) != 0) {
    rc = coop_error_input("%s: cannot read the input file: %s", path, strerror(errno));
    if (!fp) close(fd);
  } else if (st.st_size > INT_MAX) /* one MPI_Bcast passes it on: its count is an int */
    rc = coop_error_input("%s: cannot read the input file: %lld bytes, more than an input file "
                          "may hold (2 GiB)", path, (long long)st.st_size);
  else if (!(*text = malloc((size_t)st.st_size + 1)))
    rc = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory reading %s", path);
  else if (fread(*text, 1, (size_t)st.st_size, fp) != (size_t)st.st_size)
    rc = coop_error_input("%s: cannot read the input file: %s", path, strerror(errno ? errno : EIO));
  if (fp) fclose(fp);
  *len = rc ? -1 : (long)st.st_size;
  return rc;
}

/* Rank 0 reads the file; every rank gets the text, or rank 0's status. */
static int read_input(const coop_comm *c, const char *path, char **text) {
  long head[2] = {0, -1}; /* status, length */
  *text = NULL;
  if (c->rank == 0 && (head[0] = slurp(path, text, &head[1]))) {
    free(*text);
    *text = NULL;
  }
  COOP_MPI(MPI_Bcast(head, 2, MPI_LONG, 0, c->world));
  if (head[0]) {
    if (c->rank) coop_error_input("%s: cannot read the input file", path);
    return (int)head[0];
  }
  if (c->rank && !(*text = malloc((size_t)head[1] + 1))) {
    coop_error_raise(COOP_ERR_RUNTIME, __FILE__, __LINE__, "out of host memory");
    coop_comm_abort(c, COOP_ERR_RUNTIME); /* the broadcast cannot be joined */
  }
  COOP_MPI(MPI_Bcast(*text, (int)head[1], MPI_CHAR, 0, c->world));
  (*text)[head[1]] = '\0';
  if (memchr(*text, '\0', (size_t)head[1]))
    return coop_error_input("%s: not a text file (contains a NUL byte)", path);
  return 0;
}

/* output.monitor_every: auto (COOP_MONITOR_AUTO) or an integer >= 0. */
static int monitor_every(const coop_config *cfg, int64_t *every) {
  const char *v = coop_config_str(cfg, "output.monitor_every");
  char *end = NULL;
  if (strcmp(v, "auto") == 0) {
    *every = COOP_MONITOR_AUTO;
    return 0;
  }
  errno = 0;
  const long long n = strtoll(v, &end, 10);
  if (end == v || *end || errno || n < 0)
    return coop_error_input("output.monitor_every = %s (from %s): expected auto or an integer >= 0", v,
                            coop_config_origin(cfg, "output.monitor_every"));
  *every = n;
  return 0;
}

static int load_config(app_state *a, const coop_comm *c) {
  COOP_CHECK(read_input(c, a->cli.input, &a->text));
  COOP_CHECK(coop_config_create(&a->cfg));
  COOP_CHECK(coop_config_parse(a->cfg, a->cli.input, a->text));
  for (int i = 0; i < a->cli.nsets; i++) COOP_CHECK(coop_config_set(a->cfg, a->cli.sets[i]));
  COOP_CHECK(coop_config_validate(a->cfg));
  int64_t every;
  return monitor_every(a->cfg, &every);
}

/* The files a run reads that an output could replace: the input file, and
 * problem.matrix, problem.rhs and problem.x0 where they name files; with
 * restart, the checkpoint a run goes on from (which a checkpoint may replace,
 * as chained jobs do, but an output never). */
enum { READ_FILES = 5 };
static void read_files(const coop_config *cfg, const char *input, int restart, const char *f[READ_FILES]) {
  const char *rhs = coop_config_str(cfg, "problem.rhs"), *x0 = coop_config_str(cfg, "problem.x0");
  const char *rs = coop_config_str(cfg, "run.restart");
  f[0] = input;
  f[1] = strcmp(coop_config_str(cfg, "problem.type"), "matrix") == 0 ? coop_config_str(cfg, "problem.matrix") : NULL;
  f[2] = strncmp(rhs, "file:", 5) == 0 ? rhs + 5 : NULL;
  f[3] = strncmp(x0, "file:", 5) == 0 ? x0 + 5 : NULL;
  f[4] = restart && strcmp(rs, "none") != 0 ? rs : NULL;
}

/* Whether the run writes an XDMF file beside its output (grid problems). */
static int writes_xdmf(const coop_config *cfg) {
  return coop_config_bool(cfg, "output.xdmf") && strcmp(coop_config_str(cfg, "problem.type"), "matrix") &&
         !coop_config_has_section(cfg, "batch");
}

/* Checked before hours of solving, not after: the folder takes a file, the
 * path is one MPI-IO can open (io/files.h), and it replaces no file the run reads. */

static int check_output(const coop_comm *c, const coop_config *cfg, const char *input) {
  int ok = 1;
  const char *path = coop_config_str(cfg, "output.file");
  const int xdmf = writes_xdmf(cfg);
  const char *reads[READ_FILES];
  read_files(cfg, input, 1, reads);
  if (c->rank == 0)
    ok = !coop_output_check(path, c->size, xdmf, "output.file = %s (from %s)", path,
                            coop_config_origin(cfg, "output.file")) &&
         !coop_output_spares(path, xdmf, reads, READ_FILES, "output.file = %s (from %s)", path,
                             coop_config_origin(cfg, "output.file"));
  COOP_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, c->world));
  return ok ? 0 : COOP_ERR_INPUT;
}

/* Before any work: every rank's memory fits its node (exit 2 when not), and
 * the output's file system has room for the field data at least (exit 1). */
/* output.checkpoint, with auto resolved: the output's name, .h5 -> .ckpt.h5. */
static char *checkpoint_path(const coop_config *cfg) {
  const char *p = coop_config_str(cfg, "output.checkpoint");
  if (strcmp(p, "auto") != 0) return strdup(p);
  return coop_output_sibling(coop_config_str(cfg, "output.file"), ".ckpt.h5");
}

/* heat with solver.scheme = implicit: each step a multigrid solve. */
static int implicit_heat(const coop_config *cfg) {
  return !strcmp(coop_config_str(cfg, "solver.name"), "heat") && !strcmp(coop_config_str(cfg, "solver.scheme"), "implicit");
}

/* solver.name = mg, solver.pc = mg or implicit heat: the multigrid family runs. */
static int uses_mg(const coop_config *cfg) {
  return !strcmp(coop_config_str(cfg, "solver.name"), "mg") || !strcmp(coop_config_str(cfg, "solver.pc"), "mg") ||
         implicit_heat(cfg);
}

/* The keys a solver state depends on, "key = value" lines: a restart must
 * name the same problem and method (rtol, max_iter, output may change). */
static char *fingerprint(const coop_config *cfg) {
  /* heat's state also depends on its time step and diffusivity, multigrid's
   * on its cycle (the keys are left out for the other methods, whose
   * checkpoints then read as before) */
  static const char *const base[] = {
      "grid.dim", "grid.nx", "grid.ny", "grid.nz", "grid.lx", "grid.ly", "grid.lz", "problem.type",
      "problem.mode", "problem.matrix", "problem.rhs", "problem.seed", "problem.x0", "solver.name",
      "solver.pc", "solver.precision", "solver.cg_single_reduction"};
  static const char *const heat[] = {"solver.alpha", "solver.dt"};
  static const char *const mg[] = {"solver.mg_cycle", "solver.mg_pre", "solver.mg_post", "solver.mg_smoother"};
  const char *names[sizeof base / sizeof base[0] + 7];
  size_t nnames = 0;
  for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) names[nnames++] = base[i];
  if (!strcmp(coop_config_str(cfg, "solver.name"), "heat"))
    for (size_t i = 0; i < 2; i++) names[nnames++] = heat[i];
  if (implicit_heat(cfg)) names[nnames++] = "solver.scheme"; /* explicit checkpoints read as before */
  if (uses_mg(cfg))
    for (size_t i = 0; i < 4; i++) names[nnames++] = mg[i];
  size_t nk = 0, len = 1;
  const coop_key_info *keys = coop_config_keys(&nk);
  char *out = NULL;
  for (int pass = 0; pass < 2; pass++) {
    if (pass && !(out = malloc(len))) return NULL;
    size_t at = 0;
    for (size_t i = 0; i < nnames; i++) {
      char line[PATH_MAX + 128];
      coop_key_type type = COOP_KEY_STRING;
      for (size_t k = 0; k < nk; k++)
        if (strlen(keys[k].section) + 1 + strlen(keys[k].key) == strlen(names[i]) &&
            strncmp(names[i], keys[k].section, strlen(keys[k].section)) == 0 &&
            strcmp(names[i] + strlen(keys[k].section) + 1, keys[k].key) == 0)
          type = keys[k].type;
      if (type == COOP_KEY_INT)
        snprintf(line, sizeof line, "%s = %lld\n", names[i], (long long)coop_config_int(cfg, names[i]));
      else if (type == COOP_KEY_REAL)
        snprintf(line, sizeof line, "%s = %.17g\n", names[i], coop_config_real(cfg, names[i]));
      else if (type == COOP_KEY_BOOL)
        snprintf(line, sizeof line, "%s = %s\n", names[i], coop_config_bool(cfg, names[i]) ? "true" : "false");
      else
        snprintf(line, sizeof line, "%s = %s\n", names[i], coop_config_str(cfg, names[i]));
      if (pass) memcpy(out + at, line, strlen(line));
      at += strlen(line);
    }
    len = at + 1;
    if (pass) out[at] = '\0';
  }
  return out;
}

/* The residual checks a run's history keeps: one every solver.check_every
 * (grid solvers; every iteration otherwise), the first and the last, at most 2^20. */
static int64_t history_cap(const coop_config *cfg, int grid_form) {
  const int mg = !strcmp(coop_config_str(cfg, "solver.name"), "mg"); /* checks every cycle */
  const int64_t every = grid_form && !mg ? coop_config_int(cfg, "solver.check_every") : 1;
  const int64_t checks = coop_config_int(cfg, "solver.max_iter") / every + 2;
  return checks < (1 << 20) ? checks : (1 << 20);
}

/* The checkpoint is neither the output nor its XDMF file (an input error when it is). */
static int checkpoint_spares_output(const app_state *a) {
  if (coop_same_file(a->ckpt_path, coop_config_str(a->cfg, "output.file")))
    return coop_error_input("output.checkpoint = %s: the same file as output.file (%s)", a->ckpt_path,
                            coop_config_str(a->cfg, "output.file"));
  if (!writes_xdmf(a->cfg)) return 0;
  char *x = coop_output_xmf_name(coop_config_str(a->cfg, "output.file"));
  const int same = x && coop_same_file(a->ckpt_path, x);
  if (same) coop_error_input("output.checkpoint = %s: the same file as the XDMF file of output.file (%s)",
                             a->ckpt_path, x);
  free(x);
  return same ? COOP_ERR_INPUT : 0;
}

/* Checkpoint and restart names: where checkpoints go can take them (before
 * any work), and a restart file exists and belongs to this problem. */
static int check_checkpoint(app_state *a, const coop_comm *c) {
  int ok = 1;
  a->ckpt_path = checkpoint_path(a->cfg);
  a->fingerprint = fingerprint(a->cfg);
  if (!a->ckpt_path || !a->fingerprint) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  const char *reads[READ_FILES];
  read_files(a->cfg, a->cli.input, 0, reads);
  if (c->rank == 0) /* decided on rank 0 alone: ranks that saw other files would part ways here */
    ok = !coop_output_check(a->ckpt_path, c->size, 0, "output.checkpoint = %s (from %s)", a->ckpt_path,
                            coop_config_origin(a->cfg, "output.checkpoint")) &&
         !coop_output_spares(a->ckpt_path, 0, reads, READ_FILES, "output.checkpoint = %s (from %s)", a->ckpt_path,
                             coop_config_origin(a->cfg, "output.checkpoint")) &&
         !checkpoint_spares_output(a);
  COOP_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, c->world));
  if (!ok) return COOP_ERR_INPUT;
  const char *rs = coop_config_str(a->cfg, "run.restart");
  if (strcmp(rs, "none") == 0) return 0;
  double r0;
  COOP_CHECK(coop_ckpt_check(rs, c, coop_config_str(a->cfg, "solver.name"), a->fingerprint, &a->restart_it, &r0));
  /* its datasets, as the layout of setup_checkpoint will read them, and this run's limits */
  coop_ckpt_expect e = {1, {(uint64_t)a->ls.n_global, 0, 0}, coop_config_int(a->cfg, "solver.max_iter"),
                        history_cap(a->cfg, a->type->grid_form)};
  if (a->ls.grid) {
    e.ndim = a->ls.dec.ndim;
    for (int a3 = 0; a3 < e.ndim; a3++) e.dims[a3] = (uint64_t)a->ls.dec.global_n[e.ndim - 1 - a3];
  }
  return coop_ckpt_check_layout(rs, c, &e);
}

/* The checkpoint service's settings, the layout of this rank's entries, and
 * the signal handlers. */
static int setup_checkpoint(app_state *a, const coop_comm *c) {
  struct coop_ckpt *ck = &a->ck;
  const coop_linsys *ls = &a->ls;
  memset(ck, 0, sizeof *ck);
  ck->path = a->ckpt_path;
  ck->every = coop_config_int(a->cfg, "output.checkpoint_every");
  ck->seconds = 60.0 * coop_config_real(a->cfg, "output.checkpoint_minutes");
  ck->exit_on_signal = strcmp(coop_config_str(a->cfg, "run.on_signal"), "exit") == 0;
  ck->restart = strcmp(coop_config_str(a->cfg, "run.restart"), "none") ? coop_config_str(a->cfg, "run.restart") : NULL;
  ck->solver = coop_config_str(a->cfg, "solver.name");
  ck->problem = a->fingerprint;
  ck->written_it = -1;
  coop_ckpt_layout *L = &ck->layout;
  if (ls->grid) { /* the box of owned points, slowest axis first */
    const coop_decomp *d = &ls->dec;
    L->ndim = d->ndim;
    for (int a3 = 0; a3 < d->ndim; a3++) {
      const int ax = d->ndim - 1 - a3;
      L->dims[a3] = (uint64_t)d->global_n[ax];
      L->start[a3] = (uint64_t)d->offset[ax];
      L->count[a3] = (uint64_t)d->n[ax];
    }
  } else {
    L->ndim = 1;
    L->dims[0] = (uint64_t)ls->n_global;
    L->start[0] = (uint64_t)ls->row_lo;
    L->count[0] = (uint64_t)ls->n;
  }
  a->sv.ckpt = ck;
  (void)c;
  return coop_signal_install();
}

static int check_resources(app_state *a, const coop_comm *c) {
  coop_budget_report mem;
  COOP_CHECK(coop_budget_check(c, a->cfg, &a->ls, a->type, a->backend, &mem)); /* agreed */
  if (c->rank) return 0;
  const uint64_t es = a->ls.prec == COOP_FP32 ? 4 : 8; /* a series checks its own room */
  const int fields = coop_config_bool(a->cfg, "output.fields");
  return coop_output_space(coop_config_str(a->cfg, "output.file"), fields ? (uint64_t)a->ls.n_global * es : 0);
}

/* The default of key "section.key" as the key table writes it. */
static const char *key_default_text(const char *name) {
  size_t nk = 0;
  const coop_key_info *keys = coop_config_keys(&nk);
  const char *dot = strchr(name, '.');
  for (size_t k = 0; dot && k < nk; k++)
    if (strlen(keys[k].section) == (size_t)(dot - name) && strncmp(name, keys[k].section, (size_t)(dot - name)) == 0 &&
        strcmp(dot + 1, keys[k].key) == 0)
      return keys[k].def;
  return "0";
}

/* The same as a number. */
static double key_default(const char *name) { return strtod(key_default_text(name), NULL); }

/* solver.alpha, solver.dt and output.every are heat's: another value for
 * another method would be ignored, so it is refused (the default, as a dry
 * run's resolved configuration writes it, is not). solver.t_end is a batch
 * heat key: the grid heat solver runs solver.max_iter steps. */
static int check_heat_keys(const coop_config *cfg, const char *name) {
  static const char *const keys[] = {"solver.t_end", "solver.alpha", "solver.dt", "output.every"};
  const double t_end = coop_config_real(cfg, "solver.t_end");
  if (strcmp(name, "heat") == 0 && t_end != 0.0)
    return coop_error_input("solver.t_end = %g (from %s) applies to [batch] inputs; a grid heat run takes "
                            "solver.max_iter steps of solver.dt", t_end, coop_config_origin(cfg, "solver.t_end"));
  if (strcmp(name, "heat") == 0) return 0;
  if (strcmp(coop_config_str(cfg, "solver.scheme"), "explicit"))
    return coop_error_input("solver.scheme = %s (from %s) applies to solver.name = heat, not %s",
                            coop_config_str(cfg, "solver.scheme"), coop_config_origin(cfg, "solver.scheme"), name);
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    const int is_int = i == 3;
    const double v = is_int ? (double)coop_config_int(cfg, keys[i]) : coop_config_real(cfg, keys[i]);
    if (v == key_default(keys[i])) continue;
    char value[64];
    if (is_int)
      snprintf(value, sizeof value, "%lld", (long long)coop_config_int(cfg, keys[i]));
    else
      snprintf(value, sizeof value, "%g", v);
    return coop_error_input("%s = %s (from %s) applies to solver.name = heat, not %s", keys[i], value,
                            coop_config_origin(cfg, keys[i]), name);
  }
  return 0;
}

/* tune.csr_schedule schedules the CSR product of the per-operation kernels
 * (kernels/csr_tiles.cu); grid mode's persistent kernel has its own product,
 * so asking for both is refused rather than one ignored. */
static int check_schedule_keys(const coop_config *cfg) {
  if (coop_config_is_default(cfg, "tune.csr_schedule") || !strcmp(coop_config_str(cfg, "tune.csr_schedule"), "auto") ||
      strcmp(coop_config_str(cfg, "run.sync"), "grid"))
    return 0;
  return coop_error_input("tune.csr_schedule = %s (from %s) schedules the CSR product of run.sync = launch; "
                          "run.sync = grid (from %s) runs the whole solve in one kernel with its own",
                          coop_config_str(cfg, "tune.csr_schedule"), coop_config_origin(cfg, "tune.csr_schedule"),
                          coop_config_origin(cfg, "run.sync"));
}

/* Multigrid's keys and what it cannot run with yet, as input errors naming
 * the key; the cycle of solver.pc = mg must be symmetric for cg. */
static int check_mg_keys(const coop_config *cfg, const char *name) {
  static const char *const keys[] = {"solver.mg_cycle", "solver.mg_pre", "solver.mg_post", "solver.mg_smoother"};
  const char *pc = coop_config_str(cfg, "solver.pc");
  const int heat_mg = implicit_heat(cfg), is_mg = !strcmp(name, "mg") || heat_mg, pc_mg = !strcmp(pc, "mg");
  /* another value for another method would be ignored; the default (as a
   * dry run's resolved configuration writes it) is not refused */
  for (size_t i = 0; i < 4 && !is_mg && !pc_mg; i++) {
    const int is_int = i == 1 || i == 2;
    char value[64];
    if (is_int)
      snprintf(value, sizeof value, "%lld", (long long)coop_config_int(cfg, keys[i]));
    else
      snprintf(value, sizeof value, "%s", coop_config_str(cfg, keys[i]));
    if (strcmp(value, key_default_text(keys[i])))
      return coop_error_input("%s = %s (from %s) applies to solver.name = mg or solver.pc = mg, not solver.name = %s",
                              keys[i], value, coop_config_origin(cfg, keys[i]), name);
  }
  if (!is_mg && !pc_mg) return 0;
  const char *what = heat_mg ? "solver.scheme = implicit" : is_mg ? "solver.name = mg" : "solver.pc = mg";
  const char *origin = coop_config_origin(cfg, heat_mg ? "solver.scheme" : is_mg ? "solver.name" : "solver.pc");
  const int dim = (int)coop_config_int(cfg, "grid.dim");
  const long long nx = (long long)coop_config_int(cfg, "grid.nx"), ny = (long long)coop_config_int(cfg, "grid.ny"),
                  nz = dim == 3 ? (long long)coop_config_int(cfg, "grid.nz") : 1;
  if (strcmp(coop_config_str(cfg, "problem.type"), "matrix") && nx < 2 && ny < 2 && nz < 2)
    return coop_error_input("grid.nx = %lld, grid.ny = %lld%s: %s (from %s) cannot coarsen this grid once (an axis "
                            "needs 2 interior points or more); use a larger grid, or solver.name = cg without it",
                            nx, ny, dim == 3 ? ", grid.nz = 1" : "", what, origin);
  if (coop_config_int(cfg, "solver.mg_pre") + coop_config_int(cfg, "solver.mg_post") < 1)
    return coop_error_input("solver.mg_pre = 0 (from %s) and solver.mg_post = 0 (from %s): a cycle needs a smoothing "
                            "sweep at least (the defaults are 2 and 2)", coop_config_origin(cfg, "solver.mg_pre"),
                            coop_config_origin(cfg, "solver.mg_post"));
  if (is_mg && strcmp(pc, "none"))
    return coop_error_input("solver.pc = %s (from %s) applies to cg, pipecg and bicgstab; solver.name = mg takes none "
                            "(for multigrid inside cg use solver.name = cg with solver.pc = mg)", pc,
                            coop_config_origin(cfg, "solver.pc"));
  if (pc_mg && strcmp(name, "cg"))
    return coop_error_input("solver.pc = mg (from %s) preconditions cg only, not %s; use solver.name = cg, or "
                            "solver.name = mg alone", origin, name);
  if (!strcmp(coop_config_str(cfg, "problem.type"), "matrix"))
    return coop_error_input("%s (from %s) needs a grid problem (problem.type = sine or laplace); for problem.type = "
                            "matrix use solver.name = cg with solver.pc = jacobi or none", what, origin);
  if (pc_mg && !strcmp(coop_config_str(cfg, "solver.mg_cycle"), "f"))
    return coop_error_input("solver.mg_cycle = f (from %s): an F-cycle is not symmetric, so cg cannot take it as "
                            "solver.pc = mg; use solver.mg_cycle = v or w", coop_config_origin(cfg, "solver.mg_cycle"));
  if (pc_mg && coop_config_int(cfg, "solver.mg_pre") != coop_config_int(cfg, "solver.mg_post"))
    return coop_error_input("solver.mg_post = %lld (from %s) with solver.mg_pre = %lld: cg needs a symmetric cycle "
                            "from solver.pc = mg, as many sweeps after as before; set them equal",
                            (long long)coop_config_int(cfg, "solver.mg_post"), coop_config_origin(cfg, "solver.mg_post"),
                            (long long)coop_config_int(cfg, "solver.mg_pre"));
  return 0;
}

/* The problem, and a solver that can run on it. */
static int setup_problem(app_state *a, const coop_comm *c) {
  const char *name = coop_config_str(a->cfg, "solver.name");
  a->type = coop_solver_lookup(name);
  if (!a->type) return COOP_ERROR(COOP_ERR_RUNTIME, "no solver '%s' in the registry", name);
  if (a->type->grid_form && strcmp(coop_config_str(a->cfg, "problem.type"), "matrix") == 0)
    return coop_error_input("solver.name = %s (from %s) runs on grid problems only; for "
                            "problem.type = matrix use cg, pipecg or bicgstab",
                            name, coop_config_origin(a->cfg, "solver.name"));
  if (coop_config_bool(a->cfg, "solver.cg_single_reduction") && strcmp(name, "cg") != 0)
    return coop_error_input("solver.cg_single_reduction = true (from %s) applies to solver.name = cg, "
                            "not %s", coop_config_origin(a->cfg, "solver.cg_single_reduction"), name);
  COOP_CHECK(check_heat_keys(a->cfg, name));
  COOP_CHECK(check_schedule_keys(a->cfg));
  COOP_CHECK(check_mg_keys(a->cfg, name));
  COOP_CHECK(coop_linsys_create(&a->ls, c, a->cfg, coop_budget_host_limit(c)));
  if (implicit_heat(a->cfg) && !(coop_config_real(a->cfg, "solver.dt") > 0.0))
    return coop_error_input("solver.scheme = implicit (from %s) needs solver.dt > 0: backward Euler is stable at "
                            "any time step, so there is no limit to take a fraction of",
                            coop_config_origin(a->cfg, "solver.scheme"));
  if (strcmp(name, "heat") == 0 && !implicit_heat(a->cfg)) { /* before the setup, so --dry-run refuses it too */
    double dt, lim;
    COOP_CHECK(coop_heat_time_step(&a->ls.s, coop_config_real(a->cfg, "solver.alpha"),
                                   coop_config_real(a->cfg, "solver.dt"), &dt, &lim));
  }
  return 0;
}

/* auto picks cuda only when every rank sees a GPU, so all ranks agree. */
static int choose_backend(app_state *a, const coop_comm *c) {
  const char *want = coop_config_str(a->cfg, "run.backend");
  const int ngpu = coop_cuda_device_count();
  int all_have = ngpu > 0, want_dev = (int)coop_config_int(a->cfg, "run.device");
  COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, &all_have, 1, MPI_INT, MPI_MIN, c->world));
  /* multigrid's GPU levels run on one rank so far: auto picks the host for several */
  const int host_mg = uses_mg(a->cfg) && c->size > 1;
  a->backend = strcmp(want, "auto") == 0 ? (all_have && !host_mg ? "cuda" : "host") : want;
  a->device = -1;
  if (strcmp(a->backend, "host") == 0) return 0;
  if (ngpu == 0)
    return COOP_ERROR(COOP_ERR_RUNTIME, "run.backend = cuda but no GPU is visible on this rank%s",
                      coop_cuda_device_count() == 0 && !COOP_HAVE_CUDA ? " (this build has no CUDA)" : "");
  if (want_dev >= ngpu) /* the user's option: an input error, named */
    return coop_error_input("run.device = %d (from %s): this node has %d GPU%s (0 to %d)", want_dev,
                            coop_config_origin(a->cfg, "run.device"), ngpu, ngpu > 1 ? "s" : "",
                            ngpu - 1);
  a->device = want_dev >= 0 ? want_dev : c->node_rank % ngpu;
  return 0;
}

static int is_heat(const app_state *a) { return strcmp(a->type->name, "heat") == 0; }

/* The grid form: u, unew and f with ghost layers, and the halo plan. Jacobi:
 * u = 0 inside, f of the Poisson problem; heat: u = the initial field of the
 * problem (poisson.h) and no f (a zero source, never read). */
static int setup_fields(app_state *a) {
  const coop_stencil *s = &a->ls.s;
  const size_t bytes = coop_grid_points(&s->grid) * coop_prec_size(s->grid.prec);
  const int heat = is_heat(a);
  /* a zero right-hand side (Laplace) is not stored: the steps never read it */
  const int no_f = heat || strcmp(coop_config_str(a->cfg, "problem.type"), "laplace") == 0;
  void *hu = NULL, *hf = NULL;
  int rc = 0;
  COOP_CHECK(a->be->alloc(a->be, &a->u, bytes));
  COOP_CHECK(a->be->alloc(a->be, &a->unew, bytes));
  if (!no_f) COOP_CHECK(a->be->alloc(a->be, &a->f, bytes));
  /* calloc: the row padding (core/grid.c) is defined too */
  if (!(hu = calloc(1, bytes)) || (!heat && !(hf = malloc(bytes)))) {
    rc = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory (%zu bytes)", 2 * bytes);
  } else {
    if (heat)
      coop_problem_fill_heat(&a->ls.poisson, &a->ls.dec, s, hu);
    else
      coop_problem_fill(&a->ls.poisson, &a->ls.dec, s, hu, hf);
    /* both buffers hold the boundary values; sweeps never write them */
    if (!(rc = a->be->upload(a->be, a->u, hu, bytes)) && !(rc = a->be->upload(a->be, a->unew, hu, bytes)) &&
        !no_f)
      rc = a->be->upload(a->be, a->f, hf, bytes);
  }
  free(hu);
  free(hf);
  if (!rc) rc = coop_halo_create(&a->halo, a->be, &s->grid, &a->ls.dec, coop_comm_cuda_aware());
  /* the transport's setup is collective over every rank (IPC handles, an NCCL
   * communicator): agreed first, so a rank that failed above cannot leave the
   * others inside it */
  if ((rc = coop_comm_agree(a->comm, rc))) return rc;
  return coop_halo_set_transport(&a->halo, coop_config_str(a->cfg, "tune.halo"), &a->ipc_faces);
}

/* The solver's setup runs in steps, each ended by the ranks agreeing (in
 * prepare): a step that fails on one rank (a GPU that cannot start, memory)
 * must stop every rank before any enters the collectives of the next. */

/* Step 1: the backend. */
static int setup_backend(app_state *a, const coop_comm *c) {
  COOP_CHECK(coop_backend_create(a->backend, a->device, &a->be));
  if (coop_fault(c, "backend")) return COOP_ERROR(COOP_ERR_RUNTIME, "fault injected (COOP_FAULT)");
  return 0;
}

/* Step 2: the form the solver runs on (collective), its controls and history. */
static int setup_form(app_state *a, const coop_comm *c) {
  coop_solve *sv = &a->sv;
  coop_solve_ctl *ctl = &sv->ctl;
  if (a->type->grid_form) {
    COOP_CHECK(setup_fields(a));
    sv->halo = &a->halo;
    sv->s = &a->ls.s;
    sv->u = a->u;
    sv->unew = a->unew;
    sv->f = a->f;
  } else {
    COOP_CHECK(coop_linsys_krylov(&a->ls, c, a->cfg, a->be, coop_comm_cuda_aware()));
    if (a->ls.A->kind == COOP_OP_CSR) /* b = A 1 above took the default plan */
      COOP_CHECK(coop_op_set_schedule(a->ls.A, coop_csr_schedule_parse(coop_config_str(a->cfg, "tune.csr_schedule"))));
    sv->A = a->ls.A;
    sv->b = a->ls.b;
    sv->x = a->ls.x;
  }
  sv->comm = c;
  sv->dec = a->ls.grid ? &a->ls.dec : NULL;
  sv->be = a->be;
  sv->cfg = a->cfg;
  sv->sync = coop_config_str(a->cfg, "run.sync");
  /* a tile schedule is the product of the per-operation kernels (grid was refused) */
  if (!a->type->grid_form && strcmp(coop_config_str(a->cfg, "tune.csr_schedule"), "auto")) sv->sync = "launch";
  sv->blocks = (int)coop_config_int(a->cfg, "tune.blocks");
  sv->true_rnorm = -1.0;
  sv->global_n = a->ls.n_global;
  (void)monitor_every(a->cfg, &sv->monitor_every); /* checked in load_config */
  sv->snapshot_every = is_heat(a) ? coop_config_int(a->cfg, "output.every") : 0;
  ctl->max_iter = coop_config_int(a->cfg, "solver.max_iter");
  ctl->check_every = a->type->grid_form && strcmp(a->type->name, "mg") ? coop_config_int(a->cfg, "solver.check_every") : 1;
  ctl->rtol = coop_config_real(a->cfg, "solver.rtol");
  ctl->atol = coop_config_real(a->cfg, "solver.atol");
  ctl->dtol = coop_config_real(a->cfg, "solver.dtol");
  ctl->hist_cap = history_cap(a->cfg, a->type->grid_form);
  ctl->hist_iter = malloc((size_t)ctl->hist_cap * sizeof *ctl->hist_iter);
  ctl->hist_res = malloc((size_t)ctl->hist_cap * sizeof *ctl->hist_res);
  if (!ctl->hist_iter || !ctl->hist_res) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  return 0;
}

/* Step 3: the method's own setup (work vectors, preconditioner, mode). */
static int setup_method(app_state *a) { return a->type->setup(&a->sv, &a->sdata); }

/* Snapshots a heat run takes from step s0 (0, or a restart's iteration) to
 * steps: s0, every multiple of every after it, and steps. */
static int64_t snapshot_count(int64_t s0, int64_t steps, int64_t every) {
  return 1 + (steps > s0 ? (steps - 1) / every - s0 / every + 1 : 0);
}

/* sv->snapshot: this rank's owned points of u (backend memory) to the host,
 * then into the output's /series. Collective. */
static int take_snapshot(void *ctx, const void *u, int64_t step, double time) {
  app_state *a = ctx;
  coop_backend *be = a->be;
  const coop_grid *gr = &a->ls.s.grid;
  const coop_region own = coop_region_owned(gr);
  const size_t bytes = coop_grid_owned(gr) * coop_prec_size(gr->prec);
  const double t0 = MPI_Wtime();
  int rc = be->pack(be, gr, &own, u, be->device_memory ? a->snap_dev : a->snap_host);
  if (!rc && be->device_memory) rc = be->download(be, a->snap_host, a->snap_dev, bytes);
  /* agreed before the collective write, which a rank that failed here would never join */
  if ((rc = coop_comm_agree(a->comm, rc))) {
    a->series_failed = 1;
    return rc;
  }
  if ((rc = coop_io_series_write(a->series, a->snap_host, step, time))) {
    a->series_failed = 1; /* the temporaries are gone; every rank returns rc */
    return rc;
  }
  coop_solve_add_time(&a->sv, coop_solve_phase(&a->sv, "snapshot"), MPI_Wtime() - t0);
  return 0;
}

static const char series_description[] =
    "snapshots of the computed solution u of the heat equation u_t = alpha lap(u) (forward Euler, "
    "5-point stencil in 2D, 7-point in 3D, Dirichlet boundary values): u[k] after step[k] steps, "
    "at time[k]; the initial field and boundary come from problem.type; solver.alpha, solver.dt "
    "and output.every are in /input resolved";

/* heat with output.every: the output is opened now, its /series sized for the
 * snapshots to come, and the solver given the snapshot hook. Agreed. */
static int open_series(app_state *a, const coop_comm *c) {
  coop_solve *sv = &a->sv;
  if (sv->snapshot_every <= 0) return 0;
  const coop_grid *gr = &a->ls.s.grid;
  const size_t bytes = coop_grid_owned(gr) * coop_prec_size(gr->prec);
  int rc = a->be->alloc(a->be, &a->snap_dev, bytes + 1);
  if (!rc && !(a->snap_host = malloc(bytes + 1))) rc = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if ((rc = coop_comm_agree(c, rc))) return rc;
  coop_io_result layout;
  memset(&layout, 0, sizeof layout);
  coop_report_layout(c, &a->ls, &layout);
  const int64_t count = snapshot_count(a->restart_it, sv->ctl.max_iter, sv->snapshot_every);
  const int xdmf = coop_config_bool(a->cfg, "output.xdmf");
  COOP_CHECK(coop_io_series_open(coop_config_str(a->cfg, "output.file"), &layout, xdmf, count,
                                 a->ls.prec == COOP_FP32, series_description, &a->series));
  a->comm = c;
  sv->snapshot = take_snapshot;
  sv->snapshot_ctx = a;
  return 0;
}

static void teardown(app_state *a) {
  coop_io_series_close(a->series); /* removes an output that was never finished */
  free(a->snap_host);
  if (a->be) a->be->release(a->be, a->snap_dev);
  if (a->type) a->type->destroy(&a->sv, a->sdata);
  coop_halo_destroy(&a->halo);
  if (a->be) {
    a->be->release(a->be, a->sv.u ? a->sv.u : a->u);
    a->be->release(a->be, a->sv.unew ? a->sv.unew : a->unew);
    a->be->release(a->be, a->f);
  }
  coop_linsys_destroy(&a->ls);
  coop_backend_destroy(a->be);
  coop_config_destroy(a->cfg);
  free(a->sv.ctl.hist_iter);
  free(a->sv.ctl.hist_res);
  free(a->text);
  free(a->ckpt_path);
  free(a->fingerprint);
}

/* Rank 0: the output replaces none of batch.matrices' files ("A.mtx[:b.mtx], ..."). */
static int batch_spares(const coop_config *cfg) {
  if (coop_config_is_default(cfg, "batch.matrices")) return 0;
  const char *path = coop_config_str(cfg, "output.file");
  char *list = strdup(coop_config_str(cfg, "batch.matrices"));
  if (!list) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  int rc = 0;
  for (char *save = NULL, *e = strtok_r(list, ",", &save); e && !rc; e = strtok_r(NULL, ",", &save)) {
    char *b = strchr(e, ':');
    if (b) *b++ = '\0';
    const char *f[2] = {e, b};
    for (int i = 0; i < 2; i++) /* trim as batch.c does */
      if (f[i]) {
        while (*f[i] == ' ' || *f[i] == '\t') f[i]++;
        char *end = (char *)f[i] + strlen(f[i]);
        while (end > f[i] && (end[-1] == ' ' || end[-1] == '\t')) *--end = '\0';
        if (!*f[i]) f[i] = NULL;
      }
    rc = coop_output_spares(path, 0, f, 2, "output.file = %s (from %s)", path, coop_config_origin(cfg, "output.file"));
  }
  free(list);
  return rc;
}

/* A [batch] input after the checks every input takes: its own run. */
static int run_batch(app_state *a, const coop_comm *c) {
  int local = check_output(c, a->cfg, a->cli.input), st;
  if (!local) {
    int ok = c->rank ? 1 : !batch_spares(a->cfg);
    COOP_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, c->world));
    local = ok ? 0 : COOP_ERR_INPUT;
  }
  if ((st = coop_comm_agree(c, local))) return fail(c, local, st);
  local = choose_backend(a, c);
  if ((st = coop_comm_agree(c, local))) return fail(c, local, st);
  const coop_batch_input in = {a->cfg, a->cli.input, a->text, a->backend, a->device, a->cli.dry_run, a->t_start};
  return coop_run_batch(c, &in);
}

/* Steps up to the solve; each agreed among the ranks. */
static int prepare(app_state *a, const coop_comm *c) {
  int local, st;
  local = load_config(a, c);
  if (!local) local = coop_batch_check_keys(a->cfg);
  if ((st = coop_comm_agree(c, local))) return fail(c, local, st);
  if ((a->batch = coop_config_has_section(a->cfg, "batch"))) return run_batch(a, c);
  local = check_output(c, a->cfg, a->cli.input);
  if (!local) local = setup_problem(a, c);
  if ((st = coop_comm_agree(c, local))) return fail(c, local, st);
  local = check_checkpoint(a, c);
  if ((st = coop_comm_agree(c, local))) return fail(c, local, st);
  local = choose_backend(a, c);
  if ((st = coop_comm_agree(c, local))) return fail(c, local, st);
  if (a->cli.dry_run) {
    local = coop_linsys_check(&a->ls, c, a->cfg); /* agreed */
    if (local) return fail(c, local, local);
    local = coop_report_dry_run(c, a->cfg, &a->ls, a->type, a->backend);
    return (st = coop_comm_agree(c, local)) ? fail(c, local, st) : 0;
  }
  local = check_resources(a, c);
  if ((st = coop_comm_agree(c, local))) return fail(c, local, st);
  local = setup_backend(a, c);
  if ((st = coop_comm_agree(c, local))) return fail(c, local, st);
  local = setup_form(a, c);
  if (!local) local = setup_checkpoint(a, c);
  if ((st = coop_comm_agree(c, local))) return fail(c, local, st);
  local = setup_method(a);
  if ((st = coop_comm_agree(c, local))) return fail(c, local, st);
  local = open_series(a, c); /* agreed inside */
  if (local) return fail(c, local, local);
  return 0;
}

static int finish(app_state *a, const coop_comm *c) {
  coop_report_input in = {a->cfg, a->cli.input, a->text, &a->ls, a->type, a->sdata, a->be,
                          a->backend, a->device, a->t_setup, a->series,
                          a->type->grid_form ? a->ipc_faces : 0, a->type->grid_form && a->halo.nccl != NULL};
  int local = coop_report_write(c, &in, &a->sv);
  int st = coop_comm_agree(c, local);
  if (!st) return 0;
  st = fail(c, local, st);
  MPI_Barrier(c->world); /* every rank is here: none ends the job before the message is out */
  return st;
}

/* solver.error_if_not_converged: a solve that ended without converging is
 * status 4 (its output written), so a job chain notices; heat's steps complete. */
static int check_converged(const app_state *a, const coop_comm *c) {
  const int r = a->sv.ctl.reason;
  if (!coop_config_bool(a->cfg, "solver.error_if_not_converged") || coop_reason_converged(r) || r == COOP_COMPLETED)
    return 0;
  if (c->rank == 0)
    fprintf(stderr, "coopsolve: the solve ended %s after %lld iterations (relative residual %.3e); "
            "solver.error_if_not_converged = true: exit status %d\n", coop_reason_name(r),
            (long long)a->sv.ctl.iterations, a->sv.ctl.r0 > 0 ? a->sv.ctl.rnorm / a->sv.ctl.r0 : 0.0,
            EXIT_NOT_CONVERGED);
  return EXIT_NOT_CONVERGED;
}

/* cli.help (driver/cli.c): 0 --version, 1 --help (the keys but [tune]),
 * 2 --help-all, 3 --help-keys=markdown (docs/keys.md). */
static void print_help(int help) {
  if (help <= 1) {
    coop_report_help(help);
  } else if (help == 2) {
    coop_cli_usage(stdout);
    printf("\n");
    coop_config_print_help_all(stdout);
  } else {
    coop_config_print_markdown(stdout);
  }
}

int coop_app_run(const coop_comm *c, int argc, char **argv) {
  app_state *a = calloc(1, sizeof *a);
  int st;
  if (!a) return fail(c, 1, coop_comm_agree(c, COOP_ERROR(COOP_ERR_RUNTIME, "out of memory")));
  a->ls.dec.cart = MPI_COMM_NULL; /* not 0: MPI_COMM_NULL is a handle */
  a->comm = c;
  const double t0 = a->t_start = MPI_Wtime();
  int local = coop_cli_parse(&a->cli, argc, argv, a->scratch, sizeof a->scratch);
  if ((st = coop_comm_agree(c, local))) {
    st = fail(c, local, st);
  } else if (a->cli.help || a->cli.version) {
    if (c->rank == 0) print_help(a->cli.help);
  } else if (!(st = prepare(a, c)) && !a->cli.dry_run && !a->batch) {
    a->t_setup = MPI_Wtime() - t0;
    local = a->type->solve(&a->sv, a->sdata);
    if (local && a->series_failed) { /* a snapshot failed on every rank: agreed, told once */
      st = fail(c, local, local);
      MPI_Barrier(c->world); /* no rank ends the job (MPI_Abort) before the message is out */
    } else if (local && a->ck.resume_failed) { /* agreed at the solve's start: told once, as input errors are */
      st = fail(c, local, local);
      coop_io_series_discard(a->series);
      MPI_Barrier(c->world);
    } else if (local) {
      coop_io_series_discard(a->series); /* before: the job may end while this rank waits */
      coop_comm_abort(c, local);         /* ranks may be inside a halo exchange */
    } else if (a->ck.signal) { /* the checkpoint is the result; the output stays as it was */
      if (c->rank == 0)
        printf("coopsolve: stopped by %s at iteration %lld; resume with --restart %s\n",
               coop_signal_name(a->ck.signal), (long long)a->ck.written_it, a->ck.path);
      st = EXIT_CHECKPOINTED;
    } else {
      st = finish(a, c);
      if (!st) st = check_converged(a, c);
    }
  }
  teardown(a);
  free(a);
  return st;
}
