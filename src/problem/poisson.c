#include "problem/poisson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

int coop_problem_init(coop_problem *p, const char *type, int ndim, int mode, const double len[3],
                      const int64_t n[3]) {
  memset(p, 0, sizeof *p);
  if (strcmp(type, "sine") == 0)
    p->type = COOP_PROBLEM_SINE;
  else if (strcmp(type, "laplace") == 0)
    p->type = COOP_PROBLEM_LAPLACE;
  else
    return COOP_ERROR(COOP_ERR_RUNTIME, "unknown problem type '%s'", type);
  p->ndim = ndim;
  p->mode = mode;
  for (int a = 0; a < 3; a++) {
    p->len[a] = a < ndim ? len[a] : 1.0;
    p->n[a] = a < ndim ? n[a] : 1;
    p->h[a] = a < ndim ? p->len[a] / (double)(p->n[a] + 1) : 1.0;
  }
  return 0;
}

/* The exact solutions are products of one factor per axis, so the bulk loops
 * below evaluate n_x + n_y + n_z transcendental functions, not one per point
 * (the pointwise form is far slower on large grids); exact() multiplies the same
 * factors in the same order, so both give the same bits. */
static double factor(const coop_problem *p, int a, double xa) {
  const double pi = M_PI;
  if (p->type == COOP_PROBLEM_SINE) return sin(p->mode * pi * xa / p->len[a]);
  if (a + 1 < p->ndim) return sin(pi * xa / p->len[a]);
  const double c = p->ndim == 2 ? pi / p->len[0]
                                : pi * sqrt(1.0 / (p->len[0] * p->len[0]) + 1.0 / (p->len[1] * p->len[1]));
  return sinh(c * xa) / sinh(c * p->len[a]);
}

double coop_problem_exact(const coop_problem *p, const double x[3]) {
  double u = 1.0;
  for (int a = 0; a < p->ndim; a++) u *= factor(p, a, x[a]);
  return u;
}

/* Factors of local indices lo[a] .. hi[a] - 1 along each axis, t[a][i - lo[a]]. */
typedef struct {
  double *t[3];
  int64_t lo[3];
  int ndim;
} factor_table;

static int table_make(factor_table *ft, const coop_problem *p, const coop_decomp *d, const int64_t lo[3],
                      const int64_t hi[3]) {
  memset(ft, 0, sizeof *ft);
  ft->ndim = p->ndim;
  for (int a = 0; a < p->ndim; a++) {
    ft->lo[a] = lo[a];
    if (!(ft->t[a] = malloc((size_t)(hi[a] - lo[a]) * sizeof(double) + 1))) return -1;
    for (int64_t i = lo[a]; i < hi[a]; i++)
      ft->t[a][i - lo[a]] = factor(p, a, (double)(d->offset[a] + i + 1) * p->h[a]);
  }
  return 0;
}

static void table_free(factor_table *ft) {
  for (int a = 0; a < 3; a++) free(ft->t[a]);
}

/* exact() at local point l, from the table (or pointwise when it could not be made). */
static double table_exact(const factor_table *ft, const coop_problem *p, const int64_t l[3], const double x[3]) {
  if (!ft->t[0]) return coop_problem_exact(p, x);
  double u = 1.0;
  for (int a = 0; a < ft->ndim; a++) u *= ft->t[a][l[a] - ft->lo[a]];
  return u;
}

static double rhs_scale(const coop_problem *p) {
  if (p->type == COOP_PROBLEM_LAPLACE) return 0.0;
  double k2 = 0.0;
  for (int a = 0; a < p->ndim; a++) {
    const double k = p->mode * M_PI / p->len[a];
    k2 += k * k;
  }
  return k2;
}

double coop_problem_rhs(const coop_problem *p, const double x[3]) {
  if (p->type == COOP_PROBLEM_LAPLACE) return 0.0;
  return rhs_scale(p) * coop_problem_exact(p, x);
}

static void store(const coop_stencil *s, void *a, int64_t idx, double v) {
  if (s->grid.prec == COOP_FP32)
    ((float *)a)[idx] = (float)v;
  else
    ((double *)a)[idx] = v;
}

/* The global coordinates x of local point l (ghosts too). */
static void position(const coop_problem *p, const coop_decomp *d, const int64_t l[3], double x[3]) {
  for (int a = 0; a < 3; a++) x[a] = (double)(d->offset[a] + l[a] + 1) * p->h[a];
}

/* Global position of local point l; *boundary says whether it lies on the
 * Dirichlet boundary, *inside whether it is an interior point of the box. */
static void locate(const coop_problem *p, const coop_decomp *d, const int64_t l[3], double x[3],
                   int *boundary, int *inside) {
  position(p, d, l, x);
  *boundary = 0;
  *inside = 1;
  for (int a = 0; a < p->ndim; a++) {
    const int64_t gi = d->offset[a] + l[a];
    if (gi == -1 || gi == p->n[a]) *boundary = 1;
    if (gi < 0 || gi >= p->n[a]) *inside = 0;
  }
  /* a point beyond the boundary layer (deep ghosts) is neither */
  for (int a = 0; a < p->ndim; a++) {
    const int64_t gi = d->offset[a] + l[a];
    if (gi < -1 || gi > p->n[a]) *boundary = 0;
  }
}

/* Tables over the stored points (ghosts included). */
static void table_stored(factor_table *ft, const coop_problem *p, const coop_decomp *d, const coop_stencil *s) {
  int64_t lo[3], hi[3];
  for (int a = 0; a < 3; a++) {
    lo[a] = -s->grid.g[a];
    hi[a] = s->grid.n[a] + s->grid.g[a];
  }
  if (table_make(ft, p, d, lo, hi)) {
    table_free(ft);
    memset(ft, 0, sizeof *ft);
  }
}

/* Every stored point of this rank (ghosts too): u holds the exact solution on
 * the boundary, and inside too where exact_inside is set, else 0; f (when not
 * NULL) the right-hand side inside, 0 outside. */
static void fill_stored(const coop_problem *p, const coop_decomp *d, const coop_stencil *s, void *u, void *f,
                        int exact_inside) {
  int64_t l[3];
  factor_table ft;
  table_stored(&ft, p, d, s);
  const double k2 = f ? rhs_scale(p) : 0.0;
  for (l[2] = -s->grid.g[2]; l[2] < s->grid.n[2] + s->grid.g[2]; l[2]++)
    for (l[1] = -s->grid.g[1]; l[1] < s->grid.n[1] + s->grid.g[1]; l[1]++)
      for (l[0] = -s->grid.g[0]; l[0] < s->grid.n[0] + s->grid.g[0]; l[0]++) {
        double x[3];
        int boundary, inside;
        locate(p, d, l, x, &boundary, &inside);
        const int64_t idx = coop_grid_index(&s->grid, l[0], l[1], l[2]);
        const int u_exact = boundary || (inside && exact_inside);
        const double ex = u_exact || (inside && k2 != 0.0) ? table_exact(&ft, p, l, x) : 0.0;
        if (f) store(s, f, idx, inside ? k2 * ex : 0.0);
        store(s, u, idx, u_exact ? ex : 0.0);
      }
  table_free(&ft);
}

void coop_problem_fill(const coop_problem *p, const coop_decomp *d, const coop_stencil *s, void *u,
                       void *f) {
  fill_stored(p, d, s, u, f, 0);
}

void coop_problem_fill_heat(const coop_problem *p, const coop_decomp *d, const coop_stencil *s, void *u) {
  fill_stored(p, d, s, u, NULL, p->type == COOP_PROBLEM_SINE);
}

double coop_problem_heat_decay(const coop_problem *p, double alpha, double t) {
  if (p->type != COOP_PROBLEM_SINE) return -1.0;
  return exp(-alpha * rhs_scale(p) * t);
}

void coop_problem_error(const coop_problem *p, const coop_decomp *d, const coop_stencil *s,
                        const double *owned, double amp, double *emax, double *esumsq) {
  int64_t l[3], q = 0;
  double mx = 0.0, sum = 0.0;
  factor_table ft;
  table_stored(&ft, p, d, s);
  for (l[2] = 0; l[2] < s->grid.n[2]; l[2]++)
    for (l[1] = 0; l[1] < s->grid.n[1]; l[1]++)
      for (l[0] = 0; l[0] < s->grid.n[0]; l[0]++, q++) {
        double x[3];
        position(p, d, l, x);
        const double v = owned[q];
        const double e = fabs(v - amp * table_exact(&ft, p, l, x));
        if (e > mx || e != e) mx = e;
        sum += e * e;
      }
  table_free(&ft);
  *emax = mx;
  *esumsq = sum;
}

void coop_problem_krylov(const coop_problem *p, const coop_decomp *d, const coop_stencil *s,
                         double *b, double *exact) {
  int64_t l[3], q = 0;
  for (l[2] = 0; l[2] < s->grid.n[2]; l[2]++)
    for (l[1] = 0; l[1] < s->grid.n[1]; l[1]++)
      for (l[0] = 0; l[0] < s->grid.n[0]; l[0]++, q++) {
        double x[3];
        position(p, d, l, x);
        double v = coop_problem_rhs(p, x);
        /* a neighbour on the Dirichlet boundary moves to the right-hand side */
        for (int a = 0; a < p->ndim; a++)
          for (int side = -1; side <= 1; side += 2) {
            int64_t m[3] = {l[0], l[1], l[2]};
            m[a] += side;
            const int64_t gi = d->offset[a] + m[a];
            if (gi != -1 && gi != p->n[a]) continue;
            double y[3];
            position(p, d, m, y);
            v += s->w[a] * coop_problem_exact(p, y);
          }
        b[q] = v;
        if (exact) exact[q] = coop_problem_exact(p, x);
      }
}
