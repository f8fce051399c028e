/* A batch's form: one rank's problems as one concatenated CSR matrix whose
 * diagonal blocks are the problems (problem i owns rows [row_off[i],
 * row_off[i+1]) of x and b, and its entries name columns relative to its own
 * first row), and the methods a batch may be built for. Held below the
 * problems (src/problem/batch.c builds it) and the solvers
 * (solvers/batch/batch.h solves it), so neither includes the other. */
#ifndef COOP_CSR_BATCH_H
#define COOP_CSR_BATCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One rank's problems, in host memory (the generator and the Matrix Market
 * reader fill it: src/problem/batch.c). */
typedef struct {
  int64_t count;      /* problems */
  int64_t *id;        /* count: each problem's index in the whole batch (output order) */
  int64_t *row_off;   /* count + 1: problem i's rows; row_off[0] = 0 */
  int64_t *rowptr;    /* row_off[count] + 1: entries of each row (global offsets) */
  int32_t *colind;    /* rowptr[rows]: column relative to the problem's first row */
  double *val;        /* rowptr[rows] */
  double *b;          /* row_off[count] */
  double *x0;         /* row_off[count]: initial guesses (heat: the initial fields) */
  double *dt;         /* heat: count time steps (NULL otherwise) */
  int64_t *steps;     /* heat: count step counts (NULL otherwise) */
} coop_batch;

/* Most rows of one problem: the GPU kernels' row loops step a 32-bit index by
 * up to the threads of a grid (2^22 leaves room for any resident grid). */
#define COOP_BATCH_MAX_ROWS (INT32_MAX - (1 << 22))

typedef enum { COOP_BATCH_JACOBI = 0, COOP_BATCH_CG = 1, COOP_BATCH_HEAT = 2 } coop_batch_method;

#ifdef __cplusplus
}
#endif
#endif
