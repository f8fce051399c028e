/* Matrix Market reader: coordinate matrices (real, integer, pattern; general,
 * symmetric, skew-symmetric) into CSR rows [row_lo, row_hi), and vectors.
 * Input errors return COOP_ERR_INPUT with the message "PATH:LINE: ..." (LINE is
 * 1-based; "PATH: ..." when the file cannot be opened or is not a regular file);
 * out of memory is COOP_ERR_RUNTIME. Nothing here prints or exits. */
#ifndef COOP_MM_H
#define COOP_MM_H

#include <stdint.h>

typedef struct {
  int64_t nrows, ncols;   /* global size from the size line */
  int64_t row_lo, row_hi; /* the rows kept, [row_lo, row_hi) global */
  int64_t nnz;            /* entries kept, after symmetric expansion and summing duplicates */
  int64_t *rowptr;        /* row_hi - row_lo + 1 entries */
  int64_t *colind;        /* global column indices, ascending within a row, no repeats */
  double *val;
  char field[16];    /* "real", "integer" or "pattern" */
  char symmetry[16]; /* "general", "symmetric" or "skew-symmetric" */
  int64_t announced; /* entries the size line announced */
} coop_mm_matrix;

/* The first kept row (global, 0-based) whose diagonal entry is zero, missing
 * or too small to invert (below DBL_MIN: its inverse overflows), or -1; its
 * entry (0 when missing) in *diag when diag is not NULL. */
int64_t coop_mm_zero_diagonal(const coop_mm_matrix *m, double *diag);

/* Size line of a coordinate matrix file: rows, cols, announced entries. Checks the
 * banner and size line as coop_mm_read does (square, count the file can hold). */
int coop_mm_read_size(const char *path, int64_t *nrows, int64_t *ncols, int64_t *announced);

/* Read the matrix, keeping rows [row_lo,row_hi) (row_hi = -1: all rows). Symmetric and
 * skew-symmetric files are expanded (a_ji = a_ij, or -a_ij), duplicates summed (a sum
 * that is not finite is an input error, met only by the reader of its row), pattern
 * values 1. Memory grows with the rows and entries kept, not the file (two passes).
 * The arrays in *m belong to the caller (coop_mm_free); on failure *m is left zeroed.
 * A row range outside [0, nrows] is a program fault (COOP_ERR_RUNTIME). */
int coop_mm_read(const char *path, int64_t row_lo, int64_t row_hi, coop_mm_matrix *m);

/* Free the arrays of m and zero it; accepts a zeroed or half-built matrix, or NULL. */
void coop_mm_free(coop_mm_matrix *m);

/* A vector file (array real/integer n x 1, or coordinate real/integer n x 1): entries
 * [lo,hi) into out[0 .. hi-lo). Its length must be n. Coordinate entries not in the file
 * are 0, duplicates are summed (as for a matrix). 0 <= lo <= hi <= n, else a program fault. */
int coop_mm_read_vector(const char *path, int64_t n, int64_t lo, int64_t hi, double *out);

#endif
