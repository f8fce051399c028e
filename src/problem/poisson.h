/* Built-in Poisson problems -lap(u) = f on the box [0,Lx]x[0,Ly](x[0,Lz]) with
 * Dirichlet boundaries and known exact solutions:
 *   sine:    u = prod_a sin(k pi x_a / L_a),  f = (sum_a (k pi / L_a)^2) u
 *   laplace: u = sin(pi x/Lx) sinh(c y)/sinh(c Ly)            (2D, c = pi/Lx)
 *            u = sin(pi x/Lx) sin(pi y/Ly) sinh(c z)/sinh(c Lz) (3D,
 *                c = pi sqrt(1/Lx^2 + 1/Ly^2)),  f = 0
 * Interior point i (global, 0-based) of an axis sits at x = (i + 1) h,
 * h = L / (n + 1); the boundary is at i = -1 and i = n. */
#ifndef COOP_POISSON_H
#define COOP_POISSON_H

#include <stdint.h>

#include "core/decomp.h"
#include "kernels/stencil.h"

typedef enum { COOP_PROBLEM_SINE = 0, COOP_PROBLEM_LAPLACE = 1 } coop_problem_type;

typedef struct {
  coop_problem_type type;
  int ndim, mode;
  double len[3]; /* box lengths, x first */
  double h[3];   /* spacings */
  int64_t n[3];  /* global interior points */
} coop_problem;

int coop_problem_init(coop_problem *p, const char *type, int ndim, int mode, const double len[3],
                      const int64_t n[3]);
double coop_problem_exact(const coop_problem *p, const double x[3]);
double coop_problem_rhs(const coop_problem *p, const double x[3]);

/* Fill this rank's stored arrays (host memory, s->prec elements): f at every
 * stored point, u zero inside and the exact values on the boundary layer. */
void coop_problem_fill(const coop_problem *p, const coop_decomp *d, const coop_stencil *s, void *u,
                       void *f);
/* Error of the owned values (contiguous, no ghosts, x fastest, doubles) against
 * amp times the exact solution (amp = 1 for Poisson; a decay factor for heat):
 * max |e| and sum e^2 on this rank. */
void coop_problem_error(const coop_problem *p, const coop_decomp *d, const coop_stencil *s,
                        const double *owned, double amp, double *emax, double *esumsq);

/* The heat equation u_t = alpha lap(u) on the same box, boundary values and
 * initial field taken from the problem, no source:
 *   sine:    u(0) = the sine mode everywhere (zero on the boundary); it stays a
 *            sine mode, u(t) = exp(-alpha t sum_a (k pi / L_a)^2) u(0)
 *   laplace: u(0) = 0 inside, the harmonic boundary values; u(t) tends to the
 *            harmonic solution (no closed form at finite t)
 * Fill fills this rank's stored u like coop_problem_fill (host, s->prec). */
void coop_problem_fill_heat(const coop_problem *p, const coop_decomp *d, const coop_stencil *s, void *u);
/* The factor amp with exact(t) = amp * coop_problem_exact (sine); -1 when the
 * solution at time t is not known in closed form (laplace). */
double coop_problem_heat_decay(const coop_problem *p, double alpha, double t);
/* Krylov form of the same problem on the owned points (contiguous, x fastest,
 * zero outside the box): b = f plus the boundary values the stencil reaches,
 * moved to the right-hand side; exact (may be NULL) the exact solution. */
void coop_problem_krylov(const coop_problem *p, const coop_decomp *d, const coop_stencil *s,
                         double *b, double *exact);

#endif
