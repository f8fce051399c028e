/* libFuzzer harness of the Matrix Market reader (src/io/mm.c). The reader takes
 * a path, so each input is written to one memfd (created once, truncated per
 * input) and read through /proc/self/fd/N, a regular file like a user's.
 *
 * Besides the sanitizers' findings, the harness aborts when a promise of mm.h
 * breaks:
 *   - every call returns 0 or COOP_ERR_INPUT, an input error's message starts
 *     with "PATH:" (out of memory cannot happen: the rows read are capped);
 *   - ranks reading different row blocks of one file meet the same first error
 *     (the same status and message; a sum of duplicates that is not finite is
 *     met by its row's reader only), and together hold the rows one reader holds;
 *   - a matrix read is CSR: rowptr from 0 rising to nnz, columns ascending
 *     without repeats in [0, ncols), values finite; read_size agrees with read;
 *   - a vector read in two blocks equals the vector read whole. */
#define _GNU_SOURCE

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/error.h"
#include "io/mm.h"

/* Rows (or vector entries) read at most: bounds memory whatever the size line says. */
#define CAP 4096
/* The input error only the reader of a row meets (mm.h). */
#define SUM_ERROR "sum to a value that is not finite"

static int fd = -1;
static char path[64];

static void die(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_mm: %s\n%s\n", what, detail ? detail : "");
  abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fd = memfd_create("fuzz.mtx", MFD_CLOEXEC);
  if (fd < 0) die("memfd_create failed", NULL);
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  return 0;
}

/* One call's outcome: its status and a copy of its message. */
typedef struct {
  int rc;
  char msg[4096];
} outcome;

static void record(outcome *o, int rc, const char *call) {
  o->rc = rc;
  snprintf(o->msg, sizeof o->msg, "%s", rc ? coop_error_message() : "");
  if (rc == 0) return;
  if (rc != COOP_ERR_INPUT) die(call, o->msg);
  if (strncmp(o->msg, path, strlen(path)) != 0 || o->msg[strlen(path)] != ':')
    die("input error message does not start with the path", o->msg);
}

static int same(const outcome *a, const outcome *b) {
  return a->rc == b->rc && !strcmp(a->msg, b->msg);
}

/* A reader of all rows and the readers of two blocks meet the same first error;
 * a sum of duplicates that is not finite only the reader of its row can see,
 * so there the error of all rows must be that of one of the blocks. */
static void same_outcome(const outcome *all, const outcome *lo, const outcome *hi,
                         const char *what) {
  const int row_local = strstr(all->msg, SUM_ERROR) != NULL;
  if (row_local ? same(all, lo) || same(all, hi) : same(all, lo) && same(all, hi))
    return;
  fprintf(stderr, "fuzz_mm: %s: the readers of all rows and of two blocks differ\n"
          "  [%d] %s\n  [%d] %s\n  [%d] %s\n", what, all->rc, all->msg, lo->rc, lo->msg,
          hi->rc, hi->msg);
  abort();
}

static void check_csr(const coop_mm_matrix *m) {
  const int64_t nloc = m->row_hi - m->row_lo;
  if (m->rowptr[0] != 0 || m->rowptr[nloc] != m->nnz) die("rowptr does not span 0..nnz", NULL);
  for (int64_t k = 0; k < nloc; k++) {
    if (m->rowptr[k + 1] < m->rowptr[k]) die("rowptr falls", NULL);
    for (int64_t e = m->rowptr[k]; e < m->rowptr[k + 1]; e++) {
      if (m->colind[e] < 0 || m->colind[e] >= m->ncols) die("column out of range", NULL);
      if (e > m->rowptr[k] && m->colind[e] <= m->colind[e - 1]) die("columns not ascending", NULL);
      if (!isfinite(m->val[e])) die("value not finite", NULL);
    }
  }
}

/* Row r of b equals row r of a; both hold it. */
static void same_row(const coop_mm_matrix *a, const coop_mm_matrix *b, int64_t r) {
  const int64_t *pa = a->rowptr + (r - a->row_lo), *pb = b->rowptr + (r - b->row_lo);
  if (pa[1] - pa[0] != pb[1] - pb[0]) die("a row block disagrees with the whole", NULL);
  for (int64_t e = 0; e < pa[1] - pa[0]; e++)
    if (a->colind[pa[0] + e] != b->colind[pb[0] + e] || a->val[pa[0] + e] != b->val[pb[0] + e])
      die("a row block disagrees with the whole", NULL);
}

/* Rows [0, n) read at once, then as two blocks split at n/2 (two ranks). */
static void fuzz_matrix(void) {
  coop_mm_matrix whole, lo, hi;
  outcome o_size, o_whole, o_lo, o_hi;
  int64_t nrows = 0, ncols = 0, announced = 0;
  record(&o_size, coop_mm_read_size(path, &nrows, &ncols, &announced), "coop_mm_read_size");
  const int64_t n = o_size.rc ? 1 : nrows < CAP ? nrows : CAP;
  record(&o_whole, coop_mm_read(path, 0, n, &whole), "coop_mm_read");
  record(&o_lo, coop_mm_read(path, 0, n / 2, &lo), "coop_mm_read");
  record(&o_hi, coop_mm_read(path, n / 2, n, &hi), "coop_mm_read");
  same_outcome(&o_whole, &o_lo, &o_hi, "matrix");
  if (o_size.rc && !same(&o_size, &o_whole)) die("read_size and read differ", o_size.msg);
  if (!o_whole.rc) {
    if (o_size.rc || whole.nrows != nrows || whole.ncols != ncols || whole.announced != announced)
      die("read_size and read disagree on the size line", NULL);
    check_csr(&whole);
    check_csr(&lo);
    check_csr(&hi);
    for (int64_t r = 0; r < n; r++) same_row(&whole, r < n / 2 ? &lo : &hi, r);
  }
  coop_mm_free(&whole);
  coop_mm_free(&lo);
  coop_mm_free(&hi);
}

/* The length on the size line (its first number), or 1 when there is none. */
static int64_t vector_length(const char *text) {
  const char *p = strchr(text, '\n');
  while (p) {
    long long v;
    p++;
    if (*p != '%' && sscanf(p, "%lld", &v) == 1) return v >= 1 && v <= CAP ? v : 1;
    p = strchr(p, '\n');
  }
  return 1;
}

static void fuzz_vector(const char *text) {
  const int64_t n = vector_length(text);
  double whole[CAP], part[CAP];
  outcome o_whole, o_lo, o_hi;
  record(&o_whole, coop_mm_read_vector(path, n, 0, n, whole), "coop_mm_read_vector");
  record(&o_lo, coop_mm_read_vector(path, n, 0, n / 2, part), "coop_mm_read_vector");
  record(&o_hi, coop_mm_read_vector(path, n, n / 2, n, part + n / 2), "coop_mm_read_vector");
  same_outcome(&o_whole, &o_lo, &o_hi, "vector");
  if (o_whole.rc) return;
  for (int64_t k = 0; k < n; k++)
    if (!isfinite(whole[k]) || memcmp(&whole[k], &part[k], sizeof whole[k]) != 0)
      die("vector blocks disagree with the whole, or an entry is not finite", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) die("out of memory", NULL);
  memcpy(text, data, size);
  text[size] = '\0';
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
    die("cannot write the memfd", NULL);
  coop_error_clear();
  fuzz_matrix();
  fuzz_vector(text);
  free(text);
  return 0;
}
