/* Unit tests of src/io/mm.c: small hand-made matrices checked entry by entry, row
 * ranges that tile the whole, the SuiteSparse matrices in tests/data against figures
 * computed independently, every class of bad file (tests/data/mm_bad/EXPECT and files
 * written here), and vector files. Data files are found under $COOP_SRCDIR (default .). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/error.h"
#include "io/mm.h"
#include "unit.h"

static struct {
  char dir[4096];  /* fresh mkdtemp directory for files written here */
  char data[4096]; /* tests/data */
} ctx;

/* ---- helpers ------------------------------------------------------------------ */

/* dir/name in one of a few rotating buffers, so several may be live at once. */
static const char *path_in(const char *dir, const char *name) {
  static char buf[8][8192 + 258]; /* a directory name of up to 8191 bytes, a file name of 255 */
  static int next;
  char *p = buf[next++ % 8];
  snprintf(p, sizeof buf[0], "%s/%s", dir, name);
  return p;
}

/* Write len bytes of text to ctx.dir/name; returns the path. */
static const char *write_bytes(const char *name, const char *text, size_t len) {
  const char *path = path_in(ctx.dir, name);
  FILE *f = fopen(path, "wb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(fwrite(text, 1, len, f), len);
  CU_ASSERT_EQUAL(fclose(f), 0);
  return path;
}

static const char *write_file(const char *name, const char *text) {
  return write_bytes(name, text, strlen(text));
}

/* rc is an input error whose message begins "PATH:LINE: " ("PATH: " when line < 0)
 * and holds want; else says what came instead. */
static int input_error_is(int rc, const char *path, long long line, const char *want) {
  char prefix[8300];
  const char *msg = coop_error_message();
  if (line >= 0)
    snprintf(prefix, sizeof prefix, "%s:%lld: ", path, line);
  else
    snprintf(prefix, sizeof prefix, "%s: ", path);
  const int ok = rc == COOP_ERR_INPUT && !strncmp(msg, prefix, strlen(prefix)) && strstr(msg, want);
  if (!ok)
    fprintf(stderr, "\n  status %d, message \"%s\"\n  expected status 2, \"%s...%s...\"\n", rc, msg,
            prefix, want);
  return ok;
}

#define EXPECT_BAD(call, path, line, want)                       \
  do {                                                           \
    coop_error_clear();                                          \
    const int rc_ = (call);                                      \
    CU_ASSERT_TRUE(input_error_is(rc_, (path), (line), (want))); \
  } while (0)

/* Reading path fails as an input error at line, and leaves the matrix zeroed. */
static void expect_bad_matrix(const char *path, long long line, const char *want) {
  coop_mm_matrix m;
  memset(&m, 0xff, sizeof m);
  EXPECT_BAD(coop_mm_read(path, 0, -1, &m), path, line, want);
  CU_ASSERT(m.rowptr == NULL && m.colind == NULL && m.val == NULL && m.nnz == 0);
  coop_mm_free(&m);
}

/* m holds exactly these rows (the rows kept), columns and values. */
static void check_csr(const coop_mm_matrix *m, int64_t n, int64_t lo, int64_t hi,
                      const int64_t *rowptr, const int64_t *col, const double *val) {
  CU_ASSERT_EQUAL(m->nrows, n);
  CU_ASSERT_EQUAL(m->ncols, n);
  CU_ASSERT_EQUAL(m->row_lo, lo);
  CU_ASSERT_EQUAL(m->row_hi, hi);
  if (m->row_lo != lo || m->row_hi != hi) return;
  for (int64_t r = 0; r <= hi - lo; r++) CU_ASSERT_EQUAL(m->rowptr[r], rowptr[r] - rowptr[0]);
  CU_ASSERT_EQUAL(m->nnz, rowptr[hi - lo] - rowptr[0]);
  if (m->nnz != rowptr[hi - lo] - rowptr[0]) return;
  for (int64_t k = 0; k < m->nnz; k++) {
    CU_ASSERT_EQUAL(m->colind[k], col[rowptr[0] + k]);
    CU_ASSERT(m->val[k] == val[rowptr[0] + k]);
  }
}

/* Read text as a whole matrix and compare. */
static void check_text(const char *name, const char *text, int64_t n, const int64_t *rowptr,
                       const int64_t *col, const double *val, const char *field,
                       const char *symmetry, int64_t announced) {
  coop_mm_matrix m;
  const char *path = write_file(name, text);
  coop_error_clear();
  const int rc = coop_mm_read(path, 0, -1, &m);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc) {
    fprintf(stderr, "\n  %s: %s\n", name, coop_error_message());
    return;
  }
  check_csr(&m, n, 0, n, rowptr, col, val);
  CU_ASSERT_STRING_EQUAL(m.field, field);
  CU_ASSERT_STRING_EQUAL(m.symmetry, symmetry);
  CU_ASSERT_EQUAL(m.announced, announced);
  coop_mm_free(&m);
  CU_ASSERT_PTR_NULL(m.rowptr);
}

/* Rows [lo,hi) of part equal rows [lo,hi) of whole. */
static int same_rows(const coop_mm_matrix *whole, const coop_mm_matrix *part) {
  const int64_t lo = part->row_lo, base = whole->rowptr[lo];
  if (part->rowptr[0] != 0) return 0;
  if (part->nnz != whole->rowptr[part->row_hi] - base) return 0;
  for (int64_t r = lo; r <= part->row_hi; r++)
    if (part->rowptr[r - lo] != whole->rowptr[r] - base) return 0;
  for (int64_t k = 0; k < part->nnz; k++)
    if (part->colind[k] != whole->colind[base + k] || part->val[k] != whole->val[base + k])
      return 0;
  return 1;
}

/* Rows split into parts ranges (one of them empty when parts > rows) read one by one
 * give back the whole matrix. */
static void check_split(const char *path, int parts) {
  coop_mm_matrix whole, part;
  int64_t total = 0;
  CU_ASSERT_EQUAL_FATAL(coop_mm_read(path, 0, -1, &whole), 0);
  const int64_t n = whole.nrows;
  for (int p = 0; p < parts; p++) {
    const int64_t lo = n * p / parts, hi = n * (p + 1) / parts;
    const int rc = coop_mm_read(path, lo, hi, &part);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc) continue;
    CU_ASSERT(part.row_lo == lo && part.row_hi == hi && part.nrows == n);
    CU_ASSERT_TRUE(same_rows(&whole, &part));
    total += part.nnz;
    coop_mm_free(&part);
  }
  CU_ASSERT_EQUAL(total, whole.nnz);
  coop_mm_free(&whole);
}

/* Columns strictly ascending and in range within every row; rowptr consistent. */
static int well_formed(const coop_mm_matrix *m) {
  const int64_t nloc = m->row_hi - m->row_lo;
  if (m->rowptr[0] != 0 || m->rowptr[nloc] != m->nnz) return 0;
  for (int64_t r = 0; r < nloc; r++) {
    if (m->rowptr[r + 1] < m->rowptr[r]) return 0;
    for (int64_t k = m->rowptr[r]; k < m->rowptr[r + 1]; k++)
      if (m->colind[k] < 0 || m->colind[k] >= m->ncols ||
          (k > m->rowptr[r] && m->colind[k] <= m->colind[k - 1]))
        return 0;
  }
  return 1;
}

/* a_ij of a whole matrix, by binary search; NAN when not stored. */
static double entry(const coop_mm_matrix *m, int64_t i, int64_t j) {
  int64_t a = m->rowptr[i], b = m->rowptr[i + 1];
  while (a < b) {
    const int64_t c = a + (b - a) / 2;
    if (m->colind[c] < j)
      a = c + 1;
    else
      b = c;
  }
  return a < m->rowptr[i + 1] && m->colind[a] == j ? m->val[a] : NAN;
}

/* ---- good matrices, small ----------------------------------------------------- */

static void test_general(void) {
  static const int64_t rp[] = {0, 2, 3, 5, 6}, col[] = {0, 3, 1, 0, 2, 2};
  static const double val[] = {4.0, 2.0, 3.0, -1.5, 5.0, 0.25};
  check_text("general.mtx",
             "%%MatrixMarket matrix coordinate real general\n"
             "% a comment\n"
             "%\n"
             "4 4 6\n"
             "1 1 4.0\n"
             "3 1 -1.5\n"
             "1 4 2e0\n"
             "2 2 3.0\n"
             "4 3 .25\n"
             "3 3 5\n",
             4, rp, col, val, "real", "general", 6);
}

static void test_symmetric(void) {
  static const int64_t rp[] = {0, 2, 4, 6}, col[] = {0, 1, 0, 2, 1, 2};
  static const double val[] = {2.0, -1.0, -1.0, -0.5, -0.5, 4.0};
  check_text("symmetric.mtx",
             "%%MatrixMarket matrix coordinate real symmetric\n"
             "3 3 4\n"
             "1 1 2.0\n"
             "2 1 -1.0\n"
             "3 2 -0.5\n"
             "3 3 4.0\n",
             3, rp, col, val, "real", "symmetric", 4);
}

static void test_skew(void) {
  static const int64_t rp[] = {0, 2, 3, 4}, col[] = {1, 2, 0, 0};
  static const double val[] = {-3.0, 2.0, 3.0, -2.0};
  check_text("skew.mtx",
             "%%MatrixMarket matrix coordinate real skew-symmetric\n"
             "3 3 2\n"
             "2 1 3.0\n"
             "3 1 -2.0\n",
             3, rp, col, val, "real", "skew-symmetric", 2);
}

static void test_pattern(void) {
  static const int64_t rp[] = {0, 2, 3, 4}, col[] = {0, 2, 1, 0};
  static const int64_t rpg[] = {0, 1, 1, 3}, colg[] = {1, 0, 2};
  static const double ones[] = {1.0, 1.0, 1.0, 1.0};
  check_text("pattern_sym.mtx",
             "%%MatrixMarket matrix coordinate pattern symmetric\n"
             "3 3 3\n"
             "1 1\n"
             "3 1\n"
             "2 2\n",
             3, rp, col, ones, "pattern", "symmetric", 3);
  check_text("pattern_gen.mtx",
             "%%MatrixMarket matrix coordinate pattern general\n"
             "3 3 3\n"
             "3 3\n"
             "1 2\n"
             "3 1\n",
             3, rpg, colg, ones, "pattern", "general", 3);
}

/* Also: mixed-case banner words, CRLF, blank lines, tabs, no final line end. */
static void test_integer_crlf(void) {
  static const int64_t rp[] = {0, 1, 3}, col[] = {0, 0, 1};
  static const double val[] = {7.0, -3.0, 5.0};
  check_text("integer.mtx",
             "%%matrixmarket MATRIX Coordinate INTEGER General\r\n"
             "\r\n"
             "% comment\r\n"
             "   \r\n"
             "2 2 3\r\n"
             "1\t1\t7\r\n"
             "\r\n"
             "2 1 -3\r\n"
             "  2   2   +5  ",
             2, rp, col, val, "integer", "general", 3);
}

static void test_duplicates(void) {
  static const int64_t rp[] = {0, 2, 3, 4}, col[] = {0, 1, 0, 2};
  static const double val[] = {1.0, -0.75, -0.75, 1.0};
  static const int64_t rpg[] = {0, 1, 1}, colg[] = {1};
  static const double valg[] = {6.0};
  check_text("dup_sym.mtx",
             "%%MatrixMarket matrix coordinate real symmetric\n"
             "3 3 6\n"
             "2 1 1.0\n"
             "1 1 0.5\n"
             "2 1 0.25\n"
             "1 1 0.5\n"
             "3 3 1.0\n"
             "2 1 -2.0\n",
             3, rp, col, val, "real", "symmetric", 6);
  check_text("dup_gen.mtx",
             "%%MatrixMarket matrix coordinate integer general\n"
             "2 2 3\n"
             "1 2 1\n"
             "1 2 2\n"
             "1 2 3\n",
             2, rpg, colg, valg, "integer", "general", 3);
}

/* No entries at all is a valid (zero) matrix. */
static void test_no_entries(void) {
  static const int64_t rp[] = {0, 0, 0};
  check_text("zero.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 0\n", 2, rp, NULL,
             NULL, "real", "general", 0);
}

/* Row ranges of the small files: each range alone, by hand, then 2 and 3 parts. */
static void test_row_ranges(void) {
  static const int64_t rp[] = {0, 2, 4, 6}, col[] = {0, 1, 0, 2, 1, 2};
  static const double val[] = {2.0, -1.0, -1.0, -0.5, -0.5, 4.0};
  const char *path = write_file("range.mtx",
                                "%%MatrixMarket matrix coordinate real symmetric\n"
                                "3 3 4\n"
                                "1 1 2.0\n"
                                "2 1 -1.0\n"
                                "3 2 -0.5\n"
                                "3 3 4.0\n");
  coop_mm_matrix m;
  for (int64_t lo = 0; lo <= 3; lo++)
    for (int64_t hi = lo; hi <= 3; hi++) {
      CU_ASSERT_EQUAL(coop_mm_read(path, lo, hi, &m), 0);
      check_csr(&m, 3, lo, hi, rp + lo, col, val);
      coop_mm_free(&m);
    }
  for (int parts = 2; parts <= 4; parts++) check_split(path, parts);
  check_split(write_file("range_skew.mtx",
                         "%%MatrixMarket matrix coordinate real skew-symmetric\n"
                         "5 5 4\n5 1 1\n4 2 2\n3 1 3\n5 4 4\n"),
              3);
  /* A range outside the matrix is the caller's fault, not the file's. */
  coop_error_clear();
  CU_ASSERT_EQUAL(coop_mm_read(path, 2, 4, &m), COOP_ERR_RUNTIME);
  CU_ASSERT_EQUAL(coop_mm_read(path, 2, 1, &m), COOP_ERR_RUNTIME);
  CU_ASSERT_EQUAL(coop_mm_read(path, -1, 2, &m), COOP_ERR_RUNTIME);
  CU_ASSERT_PTR_NULL(m.rowptr);
}

/* A few rows of a matrix announced with 2^63-1 rows: memory follows the rows kept. */
static void test_huge_rows(void) {
  const char *path = write_file("huge.mtx",
                                "%%MatrixMarket matrix coordinate real general\n"
                                "9223372036854775807 9223372036854775807 2\n"
                                "1 1 1.5\n"
                                "9223372036854775807 2 2.5\n");
  coop_mm_matrix m;
  int64_t nr = 0, nc = 0, ann = 0;
  CU_ASSERT_EQUAL(coop_mm_read_size(path, &nr, &nc, &ann), 0);
  CU_ASSERT(nr == INT64_MAX && nc == INT64_MAX && ann == 2);
  CU_ASSERT_EQUAL(coop_mm_read(path, 0, 3, &m), 0);
  CU_ASSERT(m.nnz == 1 && m.rowptr[1] == 1 && m.rowptr[3] == 1 && m.colind[0] == 0 &&
            m.val[0] == 1.5);
  coop_mm_free(&m);
  CU_ASSERT_EQUAL(coop_mm_read(path, INT64_MAX - 1, INT64_MAX, &m), 0);
  CU_ASSERT(m.nnz == 1 && m.colind[0] == 1 && m.val[0] == 2.5);
  coop_mm_free(&m);
  /* All the rows cannot be had: a run-time fault, not a crash. */
  CU_ASSERT_EQUAL(coop_mm_read(path, 0, -1, &m), COOP_ERR_RUNTIME);
  CU_ASSERT_PTR_NOT_NULL(strstr(coop_error_message(), "out of host memory"));
  CU_ASSERT_PTR_NULL(m.rowptr);
}

/* Lines far longer than any buffer: a 1 MB comment and a padded entry. */
static void test_long_lines(void) {
  const size_t pad = 1 << 20;
  const char *head = "%%MatrixMarket matrix coordinate real general\n%";
  const char *mid = "\n2 2 2\n1";
  const char *tail = "1 1.0\n2 2 2.0\n";
  char *text =
      malloc(strlen(head) + 2 * pad + strlen(mid) + strlen(tail) + 2); /* + 1 for the edit below */
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  char *p = text;
  p += sprintf(p, "%s", head);
  memset(p, 'x', pad);
  p += pad;
  p += sprintf(p, "%s", mid);
  memset(p, ' ', pad);
  p += pad;
  sprintf(p, "%s", tail);
  coop_mm_matrix m;
  const char *path = write_file("long.mtx", text);
  CU_ASSERT_EQUAL(coop_mm_read(path, 0, -1, &m), 0);
  CU_ASSERT(m.nnz == 2 && m.val[0] == 1.0 && m.val[1] == 2.0);
  coop_mm_free(&m);
  /* The same with a bad value on the last line: still line 5. */
  strcpy(text + strlen(text) - strlen("2.0\n"), "2.0x\n");
  path = write_file("long_bad.mtx", text);
  expect_bad_matrix(path, 5, "value '2.0x' is not a number");
  free(text);
  /* A line past the reader's 16 MiB bound (a huge file of one line would
   * otherwise be held whole by every rank): refused, its line named. */
  const size_t huge = (size_t)17 << 20;
  char *line = malloc(huge);
  CU_ASSERT_PTR_NOT_NULL_FATAL(line);
  memset(line, 'x', huge);
  line[0] = '%';
  path = write_file("huge_line.mtx", "%%MatrixMarket matrix coordinate real general\n");
  FILE *f = fopen(path, "a");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(fwrite(line, 1, huge, f), huge);
  fputs("\n2 2 1\n1 1 1.0\n", f);
  fclose(f);
  free(line);
  expect_bad_matrix(path, 2, "the line is longer than 16777216 bytes");
}

/* ---- the SuiteSparse matrices in tests/data ------------------------------------ */

typedef struct {
  const char *name;
  int64_t n, announced, nnz; /* nnz after expansion */
  const char *symmetry;
  double a00;    /* a_11 in the file's 1-based terms */
  double norm_b; /* ||A * ones||_2 */
} real_matrix;

/* Figures from an independent parser (Python, dictionary of entries, numpy). */
static const real_matrix real_matrices[] = {
    {"494_bus.mtx", 494, 1080, 1666, "symmetric", 2220.874, 2198.6652560123703},
    {"LFAT5.mtx", 14, 30, 46, "symmetric", 1.57088, 8885793.0555222929},
    {"adder_dcop_05.mtx", 1813, 11097, 11097, "general", 5.5926863099454e-10, 6.6234843238837273},
    {"hangGlider_2.mtx", 1647, 7834, 14754, "symmetric", 326.4720345084111, 12421.625102179465},
    {"nos6.mtx", 675, 1965, 3255, "symmetric", 1.0004, 2236070.1691302909},
};

static void test_real_matrices(void) {
  for (size_t t = 0; t < sizeof real_matrices / sizeof *real_matrices; t++) {
    const real_matrix *x = &real_matrices[t];
    const char *path = path_in(ctx.data, x->name);
    coop_mm_matrix m;
    int64_t nr = 0, nc = 0, ann = 0;
    coop_error_clear();
    CU_ASSERT_EQUAL(coop_mm_read_size(path, &nr, &nc, &ann), 0);
    CU_ASSERT(nr == x->n && nc == x->n && ann == x->announced);
    const int rc = coop_mm_read(path, 0, -1, &m);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc) {
      fprintf(stderr, "\n  %s: %s (is COOP_SRCDIR the source tree?)\n", path, coop_error_message());
      continue;
    }
    CU_ASSERT(m.nrows == x->n && m.ncols == x->n && m.announced == x->announced);
    CU_ASSERT_EQUAL(m.nnz, x->nnz);
    CU_ASSERT_STRING_EQUAL(m.symmetry, x->symmetry);
    CU_ASSERT_STRING_EQUAL(m.field, "real");
    CU_ASSERT_TRUE(well_formed(&m));
    CU_ASSERT(entry(&m, 0, 0) == x->a00);
    double bb = 0.0;
    int mirrored = 1;
    for (int64_t i = 0; i < m.nrows; i++) {
      double b = 0.0;
      for (int64_t k = m.rowptr[i]; k < m.rowptr[i + 1]; k++) {
        b += m.val[k];
        if (!strcmp(x->symmetry, "symmetric") && entry(&m, m.colind[k], i) != m.val[k])
          mirrored = 0;
      }
      bb += b * b;
    }
    CU_ASSERT_TRUE(mirrored);
    CU_ASSERT_DOUBLE_EQUAL(sqrt(bb), x->norm_b, 1e-12 * x->norm_b);
    coop_mm_free(&m);
    check_split(path, 2);
    check_split(path, 3);
  }
}

/* ---- bad files -------------------------------------------------------------------- */

/* Every file listed in tests/data/mm_bad/EXPECT fails as listed. */
static void test_bad_listed(void) {
  char dir[8192], *line = NULL;
  size_t cap = 0;
  int listed = 0;
  snprintf(dir, sizeof dir, "%s/mm_bad", ctx.data);
  FILE *f = fopen(path_in(dir, "EXPECT"), "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  while (getline(&line, &cap, f) >= 0) {
    char name[256], where[32];
    int used = 0;
    if (line[0] == '#' || sscanf(line, "%255s %31s %n", name, where, &used) != 2) continue;
    line[strcspn(line, "\n")] = '\0';
    const char *want = line + used, *path = path_in(dir, name);
    expect_bad_matrix(path, where[0] == '-' ? -1 : atoll(where), want);
    listed++;
  }
  free(line);
  fclose(f);
  CU_ASSERT(listed >= 30);
}

/* The listed header errors come from coop_mm_read_size too. */
static void test_bad_size(void) {
  char dir[8192];
  int64_t a, b, c;
  snprintf(dir, sizeof dir, "%s/mm_bad", ctx.data);
  const char *p = path_in(dir, "nonsquare.mtx");
  EXPECT_BAD(coop_mm_read_size(p, &a, &b, &c), p, 3, "expected a square matrix");
  p = path_in(dir, "complex.mtx");
  EXPECT_BAD(coop_mm_read_size(p, &a, &b, &c), p, 1, "complex values are not supported");
  p = path_in(dir, "truncated.mtx");
  EXPECT_BAD(coop_mm_read_size(p, &a, &b, &c), p, 2, "announces 1000000 entries");
}

/* The banners of most files below. */
#define MM_ARRAY "%%MatrixMarket matrix array real general\n"
#define MM_COORD "%%MatrixMarket matrix coordinate real general\n"

/* Bad files written by test_bad_written (line numbers under CRLF and odd
 * layouts, numbers out of range): name, text, the line named, the message. */
static const struct bad_matrix {
  const char *name, *text;
  long long line;
  const char *want;
} bad_matrices[] = {
    {"crlf_bad.mtx",
     "%%MatrixMarket matrix coordinate real general\r\n% c\r\n\r\n3 3 2\r\n1 1 1.0\r\n\r\n3 3 1.0abc\r\n", 7,
     "value '1.0abc' is not a number"},
    {"crlf_few.mtx",
     "%%MatrixMarket matrix coordinate real general\r\n3 3 3\r\n1 1 1.0\r\n2 2 2.0\r\n% trailing comment\r\n", 6,
     "2 entries, fewer than the 3 announced on line 2"},
    {"few_no_eol.mtx", MM_COORD "3 3 2\n1 1 1.0", 4, "1 entries, fewer than the 2 announced on line 2"},
    {"no_size_eof.mtx", "%%MatrixMarket matrix coordinate real general", 2, "size line missing"},
    {"overflow.mtx", MM_COORD "3 3 1\n1 1 1e999\n", 3, "value '1e999' is not finite"},
    {"nan_int.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 nan\n",
     3, "value 'nan' is not an integer"},
    {"int_big.mtx", MM_COORD "3 3 99999999999999999999\n", 2, "entries '99999999999999999999' on the size line"},
    {"ann_max.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 9223372036854775807\n",
     2, "announces 9223372036854775807 entries but"},
    {"size_junk.mtx", MM_COORD "3 3x 1\n1 1 1\n", 2, "columns '3x' on the size line"},
    {"size_many.mtx", MM_COORD "3 3 1 1\n1 1 1\n", 2, "size line has 4 numbers: expected 3"},
    {"banner_late.mtx", "\n%%MatrixMarket matrix coordinate real general\n3 3 0\n", 1, "missing banner"},
    {"banner_vector.mtx", "%%MatrixMarket vector coordinate real general\n3 3 0\n", 1, "bad banner"},
    {"complex_herm.mtx", "%%MatrixMarket matrix coordinate COMPLEX Hermitian\n3 3 0\n",
     1, "complex values are not supported"},
    {"index_junk.mtx", MM_COORD "3 3 1\n1 2a 1\n", 3, "column index '2a' is not an integer: expected 1 to 3"},
};

/* Classes that cannot live in git, and line numbers under CRLF and odd layouts. */
static void test_bad_written(void) {
  const char *p;
  /* A FIFO with no writer must not block. */
  p = path_in(ctx.dir, "fifo.mtx");
  CU_ASSERT_EQUAL_FATAL(mkfifo(p, 0600), 0);
  expect_bad_matrix(p, -1, "not a regular file");
  p = path_in(ctx.dir, "missing.mtx");
  expect_bad_matrix(p, -1, strerror(ENOENT));
  expect_bad_matrix(ctx.dir, -1, "is a directory");
  static const char nul[] = "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\0x\n";
  p = write_bytes("nul.mtx", nul, sizeof nul - 1);
  expect_bad_matrix(p, 3, "NUL byte");
  for (const struct bad_matrix *b = bad_matrices; b < bad_matrices + sizeof bad_matrices / sizeof *bad_matrices; b++)
    expect_bad_matrix(write_file(b->name, b->text), b->line, b->want);
  /* Duplicates summing past DBL_MAX (found by tests/fuzz): the line of the entry that
   * overflowed, also for the mirror of a symmetric entry, and only for its row's reader. */
  p = write_file("sum_sym.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n"
                                "3 2 -1e308\n1 1 1\n3 2 -1e308\n");
  expect_bad_matrix(p, 5, "duplicate entries at (2,3) sum to a value that is not finite");
  coop_mm_matrix m;
  EXPECT_BAD(coop_mm_read(p, 2, 3, &m), p, 5, "duplicate entries at (3,2) sum");
  CU_ASSERT_EQUAL(coop_mm_read(p, 0, 1, &m), 0);
  coop_mm_free(&m);
}

/* ---- vectors ------------------------------------------------------------------------ */

/* Bad vector files: name, text, the length and range read, the line named, the message. */
static const struct bad_vector {
  const char *name, *text;
  int64_t n, lo, hi;
  long long line;
  const char *want;
} bad_vectors[] = {
    {"v_wide.mtx", MM_ARRAY "2 2\n1\n2\n3\n4\n", 2, 0, 2, 2, "the vector is 2 x 2: expected 2 x 1"},
    {"v_num.mtx", MM_ARRAY "3 1\n1\n2.0.0\n3\n", 3, 0, 3, 4, "value '2.0.0' is not a number"},
    {"v_inf.mtx", MM_ARRAY "3 1\n1\n2\ninf\n", 3, 0, 3, 5, "value 'inf' is not finite"},
    {"v_cnum.mtx", MM_COORD "3 1 1\n2 1 x\n", 3, 0, 3, 3, "value 'x' is not a number"},
    {"v_few.mtx", MM_ARRAY "3 1\n1.0\n2.0\n", 3, 0, 3, 5, "2 values, fewer than the 3 announced"},
    {"v_many.mtx", MM_ARRAY "2 1\n1\n2\n3\n", 2, 0, 2, 5, "more values than the 2 announced"},
    {"v_fields.mtx", MM_ARRAY "2 1\n1 2\n3\n", 2, 0, 2, 3, "2 fields: expected 1 (value)"},
    {"v_col.mtx", MM_COORD "3 1 1\n2 2 1.0\n", 3, 0, 3, 3, "column index 2 out of range: expected 1 to 1"},
    {"v_pat.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 1 1\n2 1\n",
     3, 0, 3, 1, "a pattern vector has no values"},
    {"v_sym.mtx", "%%MatrixMarket matrix array real symmetric\n1 1\n1\n", 1, 0, 1, 1, "expected general"},
    {"v_trunc.mtx", MM_ARRAY "1000 1\n1\n", 1000, 0, 4, 2, "announces 1000 values but"},
};

static void test_vectors(void) {
  double out[6];
  const char *arr = write_file("b_array.mtx",
                               "%%MatrixMarket matrix array real general\n% rhs\n4 1\n1.5\n"
                               "-2\n\n3e1\n0.25\n");
  CU_ASSERT_EQUAL(coop_mm_read_vector(arr, 4, 0, 4, out), 0);
  CU_ASSERT(out[0] == 1.5 && out[1] == -2.0 && out[2] == 30.0 && out[3] == 0.25);
  out[2] = 99.0;
  CU_ASSERT_EQUAL(coop_mm_read_vector(arr, 4, 1, 2, out), 0);
  CU_ASSERT(out[0] == -2.0 && out[2] == 99.0);
  CU_ASSERT_EQUAL(coop_mm_read_vector(arr, 4, 4, 4, out), 0);

  const char *crd = write_file("b_coord.mtx",
                               "%%MatrixMarket matrix coordinate integer general\r\n5 1 4\r\n"
                               "4 1 7\r\n2 1 3\r\n4 1 -2\r\n5 1 1\r\n");
  for (int k = 0; k < 6; k++) out[k] = -1.0;
  CU_ASSERT_EQUAL(coop_mm_read_vector(crd, 5, 0, 5, out), 0);
  CU_ASSERT(out[0] == 0.0 && out[1] == 3.0 && out[2] == 0.0 && out[3] == 5.0 && out[4] == 1.0);
  CU_ASSERT(out[5] == -1.0);
  CU_ASSERT_EQUAL(coop_mm_read_vector(crd, 5, 3, 5, out), 0);
  CU_ASSERT(out[0] == 5.0 && out[1] == 1.0);

  EXPECT_BAD(coop_mm_read_vector(arr, 5, 0, 5, out), arr, 3, "the vector is 4 x 1: expected 5 x 1");
  EXPECT_BAD(coop_mm_read_vector(crd, 4, 0, 4, out), crd, 2, "the vector is 5 x 1: expected 4 x 1");
  const char *p;
  for (const struct bad_vector *b = bad_vectors; b < bad_vectors + sizeof bad_vectors / sizeof *bad_vectors; b++) {
    p = write_file(b->name, b->text);
    EXPECT_BAD(coop_mm_read_vector(p, b->n, b->lo, b->hi, out), p, b->line, b->want);
  }
  p = write_file("v_sum.mtx", "%%MatrixMarket matrix coordinate real general\n3 1 3\n"
                              "2 1 1e308\n1 1 0\n2 1 1e308\n");
  EXPECT_BAD(coop_mm_read_vector(p, 3, 0, 3, out), p, 5,
             "duplicate entries at (2,1) sum to a value that is not finite");
  CU_ASSERT_EQUAL(coop_mm_read_vector(p, 3, 2, 3, out), 0);
  p = path_in(ctx.dir, "v_missing.mtx");
  EXPECT_BAD(coop_mm_read_vector(p, 3, 0, 3, out), p, -1, strerror(ENOENT));
  CU_ASSERT_EQUAL(coop_mm_read_vector(arr, 4, 3, 2, out), COOP_ERR_RUNTIME);
}

/* ---- main ------------------------------------------------------------------------------ */

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  const struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlink(path_in(dir, e->d_name));
  if (d) closedir(d);
  rmdir(dir);
}

int main(void) {
  static const coop_unit_test tests[] = {
      {"general", test_general},
      {"symmetric expanded", test_symmetric},
      {"skew-symmetric expanded", test_skew},
      {"pattern values are 1", test_pattern},
      {"integer, CRLF, blank lines", test_integer_crlf},
      {"duplicates summed", test_duplicates},
      {"no entries", test_no_entries},
      {"row ranges tile the matrix", test_row_ranges},
      {"rows of a huge matrix", test_huge_rows},
      {"long lines", test_long_lines},
      {"SuiteSparse matrices", test_real_matrices},
      {"bad files listed in mm_bad/EXPECT", test_bad_listed},
      {"bad size lines via read_size", test_bad_size},
      {"bad files written here", test_bad_written},
      {"vectors", test_vectors},
  };
  const char *src = getenv("COOP_SRCDIR"), *base = getenv("TMPDIR");
  /* A read that blocks (a FIFO) ends the test instead of hanging it. */
  alarm(120);
  snprintf(ctx.data, sizeof ctx.data, "%s/tests/data", src && src[0] ? src : ".");
  snprintf(ctx.dir, sizeof ctx.dir, "%s/coop_test_mm_XXXXXX", base && base[0] ? base : "/tmp");
  if (!mkdtemp(ctx.dir)) {
    perror("test_mm: mkdtemp");
    return 1;
  }
  const int rc = COOP_UNIT_RUN("mm", tests);
  remove_dir(ctx.dir);
  return rc;
}
