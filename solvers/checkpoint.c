/* When checkpoints are due, and moving a method's state to and from the file. */
#include "solvers/checkpoint.h"

#include <stdlib.h>
#include <string.h>

#include "core/signal.h"

/* Several ranks agree on a signal or on rank 0's clock this often (iterations
 * of a Krylov method, checks of Jacobi): one small MPI_Allreduce, a few
 * microseconds against tens per iteration. */
#define POLL_EVERY 8

int coop_ckpt_requested(const coop_solve *sv) {
  const struct coop_ckpt *ck = sv->ckpt;
  return ck && (ck->every > 0 || ck->seconds > 0 || ck->restart);
}

/* The grid field's owned points as doubles (download) or back (upload). */
static int field_move(coop_solve *sv, void *field, double *owned, int to_file) {
  coop_backend *be = sv->be;
  const coop_grid *gr = &sv->s->grid;
  const size_t es = coop_prec_size(gr->prec), stored = coop_grid_points(gr) * es;
  const int64_t n = (int64_t)coop_grid_owned(gr);
  const coop_region own = coop_region_owned(gr);
  void *full = malloc(stored), *packed = malloc((size_t)n * es + 1);
  int rc = full && packed ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (!rc) rc = be->download(be, full, field, stored); /* keeps boundary values and ghosts */
  if (to_file) {
    if (!rc) rc = coop_pack_host(gr, &own, full, packed);
    if (!rc) rc = coop_vec_convert_host(gr->prec, n, packed, owned, 1);
  } else {
    if (!rc) rc = coop_vec_convert_host(gr->prec, n, owned, packed, 0);
    if (!rc) rc = coop_unpack_host(gr, &own, full, packed);
    if (!rc) rc = be->upload(be, field, full, stored);
  }
  free(full);
  free(packed);
  return rc;
}

static int64_t local_count(const struct coop_ckpt *ck) {
  int64_t n = 1;
  for (int a = 0; a < ck->layout.ndim; a++) n *= (int64_t)ck->layout.count[a];
  return n;
}

/* Host copies of st's vectors (or field) in d; freed by release. */
static int gather_state(coop_solve *sv, const coop_ckpt_state *st, coop_ckpt_data *d, int download) {
  const int64_t n = local_count(sv->ckpt);
  const int nv = st->field ? 1 : st->nv;
  d->nvec = nv;
  for (int i = 0; i < nv; i++) {
    d->vname[i] = st->field ? "u" : st->vname[i];
    if (!(d->vdata[i] = malloc((size_t)n * sizeof(double) + 1)))
      return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
    if (!download) continue;
    if (st->field)
      COOP_CHECK(field_move(sv, st->field, d->vdata[i], 1));
    else
      COOP_CHECK(coop_vec_download(st->vec[i], d->vdata[i]));
  }
  d->nscal = st->ns;
  for (int i = 0; i < st->ns; i++) {
    d->sname[i] = st->sname[i];
    d->sval[i] = *st->sval[i];
  }
  return 0;
}

static void release(coop_ckpt_data *d) {
  for (int i = 0; i < d->nvec; i++) free(d->vdata[i]);
}

static int write_now(coop_solve *sv, int64_t it, const coop_ckpt_state *st) {
  struct coop_ckpt *ck = sv->ckpt;
  coop_ckpt_data d;
  memset(&d, 0, sizeof d);
  int rc = gather_state(sv, st, &d, 1);
  rc = coop_comm_agree(sv->comm, rc);
  if (!rc) {
    d.solver = ck->solver;
    d.problem = ck->problem;
    d.iteration = it;
    d.r0 = sv->ctl.r0;
    /* the history as kept (an overflowing one keeps its last slot current) */
    d.hist_len = sv->ctl.hist_len;
    d.hist_iter = sv->ctl.hist_iter;
    d.hist_res = sv->ctl.hist_res;
    rc = coop_ckpt_write(ck->path, sv->comm, &ck->layout, &d);
  }
  release(&d);
  COOP_CHECK(rc);
  ck->written++;
  ck->written_it = it;
  ck->last = MPI_Wtime();
  return 0;
}

int coop_ckpt_point(coop_solve *sv, int64_t it, const coop_ckpt_state *st, int *stop) {
  struct coop_ckpt *ck = sv->ckpt;
  *stop = 0;
  if (!ck) return 0;
  ck->points++;
  int due = ck->every > 0 && it % ck->every == 0;
  int sig = coop_signal_pending();
  int late = ck->seconds > 0 && MPI_Wtime() - ck->last >= ck->seconds;
  if (sv->comm->size > 1) { /* a signal seen by any rank, rank 0's clock */
    if (ck->points % POLL_EVERY != 0 && !(st->field)) {
      sig = late = 0;
    } else {
      int v[2] = {sig, sv->comm->rank == 0 ? late : 0};
      COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, sv->comm->world));
      sig = v[0];
      late = v[1];
    }
  }
  if (!(due || sig || late)) return 0;
  if (ck->written_it != it) COOP_CHECK(write_now(sv, it, st));
  if (sig) {
    coop_signal_clear();
    if (sv->comm->rank == 0)
      fprintf(stderr, "coopsolve: %s at iteration %lld: checkpoint %s written%s\n", coop_signal_name(sig),
              (long long)it, ck->path, coop_signal_stops(sig, ck->exit_on_signal) ? "; stopping" : "; going on");
    if (coop_signal_stops(sig, ck->exit_on_signal)) {
      ck->signal = sig;
      *stop = 1;
    }
  }
  return 0;
}

int coop_ckpt_final(coop_solve *sv, int64_t it, const coop_ckpt_state *st) {
  struct coop_ckpt *ck = sv->ckpt;
  if (!ck || !(ck->every > 0 || ck->seconds > 0) || ck->written_it == it) return 0;
  return write_now(sv, it, st);
}

int coop_ckpt_resume(coop_solve *sv, const coop_ckpt_state *st, int64_t *it, int *resumed) {
  struct coop_ckpt *ck = sv->ckpt;
  *resumed = 0;
  if (ck) ck->last = MPI_Wtime();
  if (!ck || !ck->restart) return 0;
  coop_solve_ctl *c = &sv->ctl;
  coop_ckpt_data d;
  memset(&d, 0, sizeof d);
  int rc = coop_comm_agree(sv->comm, gather_state(sv, st, &d, 0));
  d.hist_iter = c->hist_iter;
  d.hist_res = c->hist_res;
  if (!rc) rc = coop_ckpt_read(ck->restart, sv->comm, &ck->layout, &d, c->hist_cap);
  if (!rc) rc = coop_ckpt_check(ck->restart, sv->comm, ck->solver, ck->problem, it, &c->r0);
  for (int i = 0; !rc && i < d.nvec; i++)
    rc = st->field ? field_move(sv, st->field, d.vdata[i], 0) : coop_vec_upload(st->vec[i], d.vdata[i]);
  rc = coop_comm_agree(sv->comm, rc);
  for (int i = 0; !rc && i < d.nscal; i++) *st->sval[i] = d.sval[i];
  release(&d);
  ck->resume_failed = rc != 0; /* every rank here, none inside an exchange: the run can end normally */
  COOP_CHECK(rc);
  c->hist_len = d.hist_len;
  c->iterations = *it;
  c->rnorm = d.hist_len > 0 ? c->hist_res[d.hist_len - 1] : c->r0;
  ck->written_it = *it; /* the state is on disk already */
  ck->written = 1;
  *resumed = 1;
  return 0;
}

int coop_ckpt_restart_has(coop_solve *sv, const char *scalar, int *has) {
  const struct coop_ckpt *ck = sv->ckpt;
  *has = 0;
  if (!ck || !ck->restart) return 0;
  return coop_ckpt_has_scalar(ck->restart, sv->comm, scalar, has);
}

int64_t coop_ckpt_next_stop(const coop_solve *sv, int64_t it, double per_iter) {
  const struct coop_ckpt *ck = sv->ckpt;
  const int64_t max = sv->ctl.max_iter;
  if (!ck || it >= max) return -1;
  const double n = COOP_CKPT_SEGMENT_SECONDS / per_iter;
  int64_t stop = n < (double)(max - it) ? it + (n < 1.0 ? 1 : (int64_t)n) : max;
  const int64_t due = ck->every > 0 ? (it / ck->every + 1) * ck->every : max;
  if (due < stop) stop = due;
  return stop < max ? stop : -1;
}
