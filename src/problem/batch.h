/* Batched workloads: the [batch] section read into a description of B
 * independent problems (generated shifted Poisson problems, or Matrix Market
 * files), the dealing of problems to ranks, and one rank's problems built in
 * the concatenated form of solvers/batch/batch.h.
 *
 * Generated problem i: -lap(u) + s_i u = f on the unit square (cube), zero
 * Dirichlet boundary, n_i interior points per side, the 5- (7-) point stencil
 * scaled by 1/h^2 (h = 1/(n_i + 1)), rows x fastest. n_i, s_i and f depend
 * only on (batch.seed, i) through splitmix64, never on the ranks.
 * solver.name = heat steps u_t = alpha (f - A u) from u(0) = prod_a sin(pi x_a)
 * at the interior points instead (problem i's time step and step count:
 * coop_batch_heat_step; generated problems only).
 * Input errors (COOP_ERR_INPUT) name the key with its file and line. */
#ifndef COOP_PROBLEM_BATCH_H
#define COOP_PROBLEM_BATCH_H

#include <stdint.h>

#include "core/comm.h"
#include "io/config.h"
#include "kernels/csr_batch.h"

enum { COOP_GEN_UNIFORM = 0, COOP_GEN_LOGUNIFORM = 1 };
enum { COOP_RHS_ONES = 0, COOP_RHS_RANDOM = 1, COOP_RHS_ZERO = 2 }; /* batch.rhs */

/* One value per problem: uniform on [lo, hi] (lo == hi: always lo) or
 * log-uniform; integers (inclusive) for sizes, reals for shifts. */
typedef struct {
  int kind;
  double lo, hi;
} coop_batch_gen;

typedef struct {
  int64_t count;
  int dim; /* generated problems: 2 or 3; 0 for matrices */
  coop_batch_gen sizes, shift;
  int rhs_kind; /* COOP_RHS_* (batch.rhs) */
  uint64_t seed;
  int method, pc; /* coop_batch_method and pc: the work estimate depends on them */
  /* heat: solver.alpha, solver.dt (0: 0.9 of each problem's limit), solver.t_end
   * (0: off) and solver.max_iter (the steps when t_end is off) */
  double alpha, dt, t_end;
  int64_t max_iter;
  /* matrices: count entries of batch.matrices or lines of batch.matrix_list;
   * NULL for generated problems */
  char *list;      /* the paths' text (owned): batch.matrices split in place, or the
                      list file's paths, each with its NUL */
  char **matrix;   /* paths, into list */
  char **rhs;      /* right-hand side vector files; NULL entry: b = A*1 */
  char *where;     /* "FILE:LINE: batch.matrices" (or matrix_list, or its --set) for messages (owned) */
  char *list_file; /* batch.matrix_list (owned); NULL for batch.matrices */
  int64_t *line;   /* the list file's line of each entry (owned); NULL for batch.matrices */
  /* every problem, on every rank */
  int64_t *rows;
  int64_t *nnz; /* generated: exact; matrices: 2 x the size line's count (symmetric files
                   expand to at most that) */
  int64_t total_rows, total_nnz;
} coop_batch_spec;

/* Read [batch] and the solver keys into sp. The batch.matrix_list file and the
 * matrix files' size lines are read by rank 0 and broadcast (c NULL: read
 * here, no MPI); rank 0 also refuses an output.file that would replace the
 * list file or a file it names. Collective over c. */
int coop_batch_spec_create(coop_batch_spec *sp, const coop_config *cfg, const coop_comm *c);
void coop_batch_spec_destroy(coop_batch_spec *sp); /* accepts a zeroed or half-built one */

/* One line of a batch.matrix_list file, split in place into at most two
 * blank-separated paths (matrix, then right-hand side). A path in double quotes
 * may hold blanks and starts with any character; inside the quotes \" and \\
 * are the only escapes. Unquoted paths take every character but blanks and '"'.
 * A trailing "\n" or "\r\n" is dropped; a blank line, or one whose first
 * non-blank character is '#', has no paths. Returns the count (0..2), field[]
 * pointing into line, or -1 with *why (static text) saying what is wrong. */
int coop_batch_list_line(char *line, char *field[2], const char **why);

/* Generated problem i: points per side, shift, and b of row j. */
int64_t coop_batch_side(const coop_batch_spec *sp, int64_t i);
double coop_batch_shift(const coop_batch_spec *sp, int64_t i);
double coop_batch_rhs(const coop_batch_spec *sp, int64_t i, int64_t row);
/* heat, generated problem i: the forward-Euler stability limit
 * 2 / (alpha (4 dim / h^2 + s_i)) (solvers/relax/heat.c's bound with the shift added
 * to the largest eigenvalue's), and the time step and step count it runs:
 * dt_i = solver.dt, or 0.9 of its limit; with t_end > 0, steps_i =
 * ceil(t_end / dt_i) and dt_i shrunk to t_end / steps_i, else solver.max_iter
 * steps. *steps = -1 where more than COOP_BATCH_MAX_STEPS would be needed (the
 * spec refuses such an input, so a built batch never has one). */
#define COOP_BATCH_MAX_STEPS 1000000000000LL /* solver.max_iter's bound */
double coop_batch_heat_limit(const coop_batch_spec *sp, int64_t i);
void coop_batch_heat_step(const coop_batch_spec *sp, int64_t i, double *dt, int64_t *steps);
/* Estimated work of problem i: entries x iterations (Jacobi about the
 * condition number kappa, CG about sqrt(kappa); kappa from the size and shift,
 * or rows^(2/2) and rows^(1/2) for a matrix; heat: its steps). */
double coop_batch_cost(const coop_batch_spec *sp, int64_t i);

/* owner[count]: the rank of each problem, greedy longest-processing-time on
 * coop_batch_cost (ties to the lower id, then the lower rank), the same on
 * every rank. */
int coop_batch_deal(const coop_batch_spec *sp, int nranks, int32_t *owner);

/* The problems i with owner[i] == rank, ascending i, into bt (host memory,
 * x0 = 0; heat: x0 the initial fields, dt and steps filled). Reads this rank's matrix files; a zero diagonal with Jacobi or the
 * Jacobi preconditioner is an input error naming the file and row. */
int coop_batch_build(const coop_batch_spec *sp, const int32_t *owner, int rank, coop_batch *bt);
void coop_batch_free(coop_batch *bt); /* accepts a zeroed or half-built one; zeroes it */

/* Host bytes one rank holds for its problems (CSR, b, x0, x and the host
 * solver's work) and device bytes on a GPU; what the dealing itself needs per
 * problem of the whole batch (on every rank). */
void coop_batch_memory(const coop_batch_spec *sp, const int32_t *owner, int rank, uint64_t *host,
                       uint64_t *device);
#define COOP_BATCH_DEAL_BYTES 48

#endif
