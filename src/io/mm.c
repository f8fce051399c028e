/* Matrix Market reading: a line reader over a regular file, one parser each for
 * the banner, the size line and an entry, then two passes over the entries (count
 * the kept rows, fill them) so a rank holds only its own rows. Every line of the
 * file is checked on every pass, so every rank reports the same first error. */
#define _POSIX_C_SOURCE 200809L

#include "io/mm.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/error.h"

enum { F_REAL, F_INTEGER, F_PATTERN };
enum { S_GENERAL, S_SYMMETRIC, S_SKEW };
static const char *const field_names[] = {"real", "integer", "pattern"};
static const char *const sym_names[] = {"general", "symmetric", "skew-symmetric"};

/* The banner and size line hold at most 5 tokens; more are only counted. */
#define MAX_TOK 5

typedef struct {
  const char *path;
  FILE *fp;
  int64_t size; /* bytes in the file when opened */
  char *buf;    /* the current line, without its line end */
  size_t cap;
  int64_t line;       /* 1-based number of the line in buf; 0 before the first */
  char *tok[MAX_TOK]; /* the first tokens of the line in buf */
  int ntok;           /* how many tokens the line has (may exceed MAX_TOK) */
} reader;

typedef struct {
  int array, field, sym;
  int64_t nrows, ncols, announced;
  int64_t size_line; /* line number of the size line */
  off_t data_at;     /* file offset just past the size line */
  int64_t seen;      /* entries read so far in this pass */
} header;

/* An input error at line of the file: "PATH:LINE: message". */
static int bad(const reader *r, int64_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(const reader *r, int64_t line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return coop_error_input("%s:%lld: %s", r->path, (long long)line, msg);
}

/* count elements of size bytes, or a run-time fault when that cannot be had. */
static int alloc_array(void **p, uint64_t count, size_t size, const char *what, const char *path) {
  if (count == 0) count = 1; /* malloc(0) may be NULL */
  *p = count > SIZE_MAX / size ? NULL : malloc((size_t)count * size);
  if (!*p)
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory: %llu %s reading %s",
                      (unsigned long long)count, what, path);
  return 0;
}

/* ---- lines and tokens ----------------------------------------------------- */

/* Opens without blocking (a FIFO would wait for a writer) and accepts only a
 * regular file, so a directory or device is an input error, not a hang. */
static int reader_open(reader *r, const char *path) {
  struct stat st;
  int fd, flags;
  memset(r, 0, sizeof *r);
  r->path = path;
  fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return coop_error_input("%s: cannot open: %s", path, strerror(errno));
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    close(fd);
    return coop_error_input("%s: cannot open: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return coop_error_input("%s: %s: expected a Matrix Market file", path,
                            S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
  }
  flags = fcntl(fd, F_GETFL);
  if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK); /* no effect on regular files */
  r->fp = fdopen(fd, "r");
  if (!r->fp) {
    const int e = errno;
    close(fd);
    return COOP_ERROR(COOP_ERR_RUNTIME, "fdopen %s: %s", path, strerror(e));
  }
  r->size = (int64_t)st.st_size;
  return 0;
}

static void reader_close(reader *r) {
  if (r->fp) fclose(r->fp);
  free(r->buf);
  r->fp = NULL;
  r->buf = NULL;
}

/* Longest line taken, 16 MiB: entries and headers are short, comments may be
 * long; a longer line (a huge sparse file of one line) is refused before it
 * fills the memory. */
#define MM_LINE_MAX (1 << 24)

/* The next line into r->buf, its LF or CRLF removed; *eof at the end of the file. */
static int reader_next(reader *r, int *eof) {
  size_t len = 0;
  int ch, nul = 0;
  *eof = 0;
  errno = 0;
  while ((ch = getc_unlocked(r->fp)) != EOF && ch != '\n') {
    if (len + 1 >= r->cap) {
      if (r->cap >= MM_LINE_MAX)
        return bad(r, r->line + 1, "the line is longer than %d bytes: expected a Matrix Market line",
                   MM_LINE_MAX);
      const size_t cap = r->cap ? 2 * r->cap : 256;
      char *b = realloc(r->buf, cap);
      if (!b)
        return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory reading line %lld of %s",
                          (long long)r->line + 1, r->path);
      r->buf = b;
      r->cap = cap;
    }
    nul |= ch == '\0';
    r->buf[len++] = (char)ch;
  }
  if (ch == EOF && ferror(r->fp))
    return COOP_ERROR(COOP_ERR_RUNTIME, "cannot read %s after line %lld: %s", r->path, (long long)r->line,
                      strerror(errno ? errno : EIO));
  if (ch == EOF && len == 0) {
    *eof = 1;
    return 0;
  }
  if (!r->buf && !(r->buf = malloc(r->cap = 256))) /* an empty first line */
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory reading %s", r->path);
  r->line++;
  r->buf[len] = '\0';
  if (nul) return bad(r, r->line, "the line holds a NUL byte: expected text");
  while (len > 0 && r->buf[len - 1] == '\r') r->buf[--len] = '\0';
  return 0;
}

/* Split r->buf in place at white space. */
static void tokenize(reader *r) {
  char *p = r->buf;
  r->ntok = 0;
  for (;;) {
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p) break;
    if (r->ntok < MAX_TOK) r->tok[r->ntok] = p;
    r->ntok++;
    while (*p && !isspace((unsigned char)*p)) p++;
    if (*p) *p++ = '\0';
  }
}

/* The next line that is neither blank nor a comment, split into tokens. */
static int reader_next_data(reader *r, int *eof) {
  for (;;) {
    COOP_CHECK(reader_next(r, eof));
    if (*eof) return 0;
    if (r->buf[strspn(r->buf, " \t\v\f")] == '%') continue;
    tokenize(r);
    if (r->ntok > 0) return 0;
  }
}

/* ---- numbers --------------------------------------------------------------- */

/* 1 when the whole token is a base-10 integer that fits int64_t. */
static int parse_int(const char *s, int64_t *v) {
  char *end;
  long long x;
  if (!isdigit((unsigned char)*s) && *s != '-' && *s != '+') return 0;
  errno = 0;
  x = strtoll(s, &end, 10);
  if (end == s || *end || errno == ERANGE) return 0;
  *v = (int64_t)x;
  return 1;
}

/* A 1-based index token in [1, n], returned 0-based. */
static int parse_index(const reader *r, const char *s, const char *what, int64_t n, int64_t *v) {
  if (!parse_int(s, v))
    return bad(r, r->line, "%s index '%.40s' is not an integer: expected 1 to %lld", what, s,
               (long long)n);
  if (*v < 1 || *v > n)
    return bad(r, r->line, "%s index %lld out of range: expected 1 to %lld", what, (long long)*v,
               (long long)n);
  (*v)--;
  return 0;
}

/* The format's reals are decimal: [sign] digits [. digits] [e|E [sign] digits], a digit somewhere before the exponent. */
static int is_decimal(const char *s) {
  int digits = 0;
  if (*s == '+' || *s == '-') s++;
  while (isdigit((unsigned char)*s)) s++, digits++;
  if (*s == '.')
    for (s++; isdigit((unsigned char)*s); s++) digits++;
  if (!digits) return 0;
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '+' || *s == '-') s++;
    if (!isdigit((unsigned char)*s)) return 0;
    while (isdigit((unsigned char)*s)) s++;
  }
  return *s == '\0';
}

static int parse_value(const reader *r, const char *s, int field, double *v) {
  char *end;
  int64_t k;
  if (field == F_PATTERN) {
    *v = 1.0;
    return 0;
  }
  if (field == F_INTEGER) {
    if (!parse_int(s, &k))
      return bad(r, r->line, "value '%.40s' is not an integer: expected an integer value", s);
    *v = (double)k;
    return 0;
  }
  errno = 0;
  *v = strtod(s, &end);
  if (end == s || *end) return bad(r, r->line, "value '%.40s' is not a number: expected a real number", s);
  if (!isfinite(*v)) return bad(r, r->line, "value '%.40s' is not finite: expected a finite real number", s);
  if (!is_decimal(s)) /* strtod also reads hexadecimal */
    return bad(r, r->line, "value '%.40s' is not a decimal number: expected a real number such as 1.5e-3", s);
  return 0;
}

/* ---- banner and size line ----------------------------------------------- */

static int word_index(const char *w, const char *const *names, int n) {
  for (int k = 0; k < n; k++)
    if (!strcasecmp(w, names[k])) return k;
  return -1;
}

/* Line 1: %%MatrixMarket matrix <format> <field> <symmetry>. vector: array allowed,
 * general real/integer only. */
static int parse_banner(reader *r, int vector, header *h) {
  const char *expect = vector ? "'%%MatrixMarket matrix array|coordinate real|integer general'"
                              : "'%%MatrixMarket matrix coordinate <field> <symmetry>'";
  int eof;
  COOP_CHECK(reader_next(r, &eof));
  if (eof) return bad(r, 1, "empty file: expected the banner %s", expect);
  if (strncasecmp(r->buf, "%%MatrixMarket", 14) != 0)
    return bad(r, 1, "missing banner: expected %s on the first line", expect);
  tokenize(r);
  if (r->ntok != 5 || strcasecmp(r->tok[0], "%%MatrixMarket") || strcasecmp(r->tok[1], "matrix"))
    return bad(r, 1, "bad banner: expected %s", expect);
  const char *format = r->tok[2], *field = r->tok[3], *sym = r->tok[4];
  h->array = !strcasecmp(format, "array");
  if (h->array && !vector)
    return bad(r, 1, "array format is allowed only for vectors: expected coordinate");
  if (!h->array && strcasecmp(format, "coordinate"))
    return bad(r, 1, "unknown format '%.40s': expected %s", format,
               vector ? "array or coordinate" : "coordinate");
  if (!strcasecmp(field, "complex"))
    return bad(r, 1, "complex values are not supported: expected real, integer or pattern");
  if ((h->field = word_index(field, field_names, 3)) < 0)
    return bad(r, 1, "unknown field '%.40s': expected real, integer or pattern", field);
  if (!strcasecmp(sym, "hermitian"))
    return bad(r, 1,
               "hermitian matrices are not supported: expected general, symmetric or "
               "skew-symmetric");
  if ((h->sym = word_index(sym, sym_names, 3)) < 0)
    return bad(r, 1, "unknown symmetry '%.40s': expected general, symmetric or skew-symmetric",
               sym);
  if (h->field == F_PATTERN && h->sym == S_SKEW)
    return bad(r, 1, "a pattern matrix cannot be skew-symmetric: expected general or symmetric");
  if (vector && h->field == F_PATTERN)
    return bad(r, 1, "a pattern vector has no values: expected real or integer");
  if (vector && h->sym != S_GENERAL)
    return bad(r, 1, "a vector is not %s: expected general", sym_names[h->sym]);
  return 0;
}

/* The file cannot hold more entries than its remaining bytes allow: checked before
 * anyone allocates for the announced count. */
static int check_room(reader *r, header *h) {
  const off_t at = ftello(r->fp);
  if (at < 0) return COOP_ERROR(COOP_ERR_RUNTIME, "ftello %s: %s", r->path, strerror(errno));
  h->data_at = at;
  const int64_t left = r->size > (int64_t)at ? r->size - (int64_t)at : 0;
  const int per = h->array ? 2 : 4;      /* "1\n" and "1 1\n" */
  const int64_t room = (left + 1) / per; /* the last line may lack its line end */
  if (h->announced > room)
    return bad(r, h->size_line,
               "the size line announces %lld %s but the %lld bytes after it hold at most %lld "
               "(each needs %d bytes): expected a complete file",
               (long long)h->announced, h->array ? "values" : "entries", (long long)left,
               (long long)room, per);
  if (h->sym != S_GENERAL && h->announced > INT64_MAX / 2)
    return bad(r, h->size_line, "%lld entries are too many to expand: expected at most %lld",
               (long long)h->announced, (long long)(INT64_MAX / 2));
  return 0;
}

/* The size line: rows cols entries (coordinate) or rows cols (array). vec_n >= 0
 * asks for a vector of that length, else a square matrix. */
static int parse_size(reader *r, int64_t vec_n, header *h) {
  static const char *const what[3] = {"rows", "columns", "entries"};
  const int want = h->array ? 2 : 3;
  const char *expect = h->array ? "rows columns" : "rows columns entries";
  int64_t v[3] = {0, 0, 0};
  int eof;
  COOP_CHECK(reader_next_data(r, &eof));
  if (eof) return bad(r, r->line + 1, "size line missing: expected '%s' after the banner", expect);
  h->size_line = r->line;
  if (r->ntok != want)
    return bad(r, r->line, "size line has %d numbers: expected %d (%s)", r->ntok, want, expect);
  for (int k = 0; k < want; k++)
    if (!parse_int(r->tok[k], &v[k]) || v[k] < (k < 2 ? 1 : 0))
      return bad(r, r->line, "%s '%.40s' on the size line: expected a %s integer", what[k],
                 r->tok[k], k < 2 ? "positive" : "non-negative");
  h->nrows = v[0];
  h->ncols = v[1];
  h->announced = h->array ? v[0] : v[2];
  if (vec_n < 0 && h->nrows != h->ncols)
    return bad(r, r->line, "the matrix is %lld x %lld: expected a square matrix",
               (long long)h->nrows, (long long)h->ncols);
  if (vec_n >= 0 && (h->nrows != vec_n || h->ncols != 1))
    return bad(r, r->line, "the vector is %lld x %lld: expected %lld x 1", (long long)h->nrows,
               (long long)h->ncols, (long long)vec_n);
  return check_room(r, h);
}

static int parse_header(reader *r, int64_t vec_n, header *h) {
  memset(h, 0, sizeof *h);
  COOP_CHECK(parse_banner(r, vec_n >= 0, h));
  return parse_size(r, vec_n, h);
}

/* ---- entries --------------------------------------------------------------- */

/* The next coordinate entry: 0-based (i, j) and its value, checked against the
 * header (indices, triangle, count); *eof once the file ends with the count met. */
static int next_entry(reader *r, header *h, int64_t *i, int64_t *j, double *v, int *eof) {
  const int want = h->field == F_PATTERN ? 2 : 3;
  COOP_CHECK(reader_next_data(r, eof));
  if (*eof) {
    if (h->seen < h->announced)
      return bad(r, r->line + 1, "%lld entries, fewer than the %lld announced on line %lld",
                 (long long)h->seen, (long long)h->announced, (long long)h->size_line);
    return 0;
  }
  if (h->seen == h->announced)
    return bad(r, r->line, "more entries than the %lld announced on line %lld",
               (long long)h->announced, (long long)h->size_line);
  if (r->ntok != want)
    return bad(r, r->line, "%d fields: expected %d (%s)", r->ntok, want,
               want == 2 ? "row column" : "row column value");
  COOP_CHECK(parse_index(r, r->tok[0], "row", h->nrows, i));
  COOP_CHECK(parse_index(r, r->tok[1], "column", h->ncols, j));
  if (h->sym == S_SYMMETRIC && *i < *j)
    return bad(r, r->line,
               "entry (%lld,%lld) is above the diagonal: a symmetric file stores the lower "
               "triangle (row >= column)",
               (long long)*i + 1, (long long)*j + 1);
  if (h->sym == S_SKEW && *i <= *j)
    return bad(r, r->line,
               "entry (%lld,%lld) is %s: a skew-symmetric file stores the strict lower "
               "triangle (row > column)",
               (long long)*i + 1, (long long)*j + 1,
               *i == *j ? "on the diagonal" : "above the diagonal");
  COOP_CHECK(parse_value(r, r->tok[2], h->field, v));
  h->seen++;
  return 0;
}

/* ---- the matrix: count, fill, sort ----------------------------------------- */

/* Pass 1: entries per kept row (after expansion) into rowptr[1..], then prefix sums. */
static int count_rows(reader *r, header *h, coop_mm_matrix *m) {
  const int64_t lo = m->row_lo, hi = m->row_hi;
  int64_t i, j, *count = m->rowptr + 1;
  double v;
  int eof = 0;
  for (;;) {
    COOP_CHECK(next_entry(r, h, &i, &j, &v, &eof));
    if (eof) break;
    if (i >= lo && i < hi) count[i - lo]++;
    if (h->sym != S_GENERAL && i != j && j >= lo && j < hi) count[j - lo]++;
  }
  for (int64_t k = 0; k < hi - lo; k++) m->rowptr[k + 1] += m->rowptr[k];
  m->nnz = m->rowptr[hi - lo];
  return 0;
}

/* One entry into its row, when the row is kept. */
static int put(coop_mm_matrix *m, int64_t *next, int64_t i, int64_t j, double v, const char *path) {
  if (i < m->row_lo || i >= m->row_hi) return 0;
  const int64_t k = i - m->row_lo;
  if (next[k] >= m->rowptr[k + 1])
    return COOP_ERROR(COOP_ERR_RUNTIME, "%s changed while it was read", path);
  m->colind[next[k]] = j;
  m->val[next[k]++] = v;
  return 0;
}

/* Back to the first entry, for another pass over the entries. */
static int rewind_entries(reader *r, header *h) {
  if (fseeko(r->fp, h->data_at, SEEK_SET) != 0)
    return COOP_ERROR(COOP_ERR_RUNTIME, "fseeko %s: %s", r->path, strerror(errno));
  r->line = h->size_line;
  h->seen = 0;
  return 0;
}

/* Pass 2: the same entries again, this time stored in file order within each row. */
static int fill_rows(reader *r, header *h, coop_mm_matrix *m, int64_t *next) {
  int64_t i, j;
  double v;
  int eof = 0;
  COOP_CHECK(rewind_entries(r, h));
  memcpy(next, m->rowptr, (size_t)(m->row_hi - m->row_lo) * sizeof *next);
  for (;;) {
    COOP_CHECK(next_entry(r, h, &i, &j, &v, &eof));
    if (eof) break;
    COOP_CHECK(put(m, next, i, j, v, r->path));
    if (h->sym != S_GENERAL && i != j)
      COOP_CHECK(put(m, next, j, i, h->sym == S_SKEW ? -v : v, r->path));
  }
  for (int64_t k = 0; k < m->row_hi - m->row_lo; k++)
    if (next[k] != m->rowptr[k + 1])
      return COOP_ERROR(COOP_ERR_RUNTIME, "%s changed while it was read", r->path);
  return 0;
}

typedef struct {
  int64_t col, seq; /* seq: file order, so duplicates are summed in that order */
  double val;
} item;

static int item_cmp(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->col != y->col) return x->col < y->col ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Columns ascending within each row, duplicates summed, arrays compacted. When a
 * sum of duplicates is not finite, *bad_k and *bad_seq name the row (local) and the
 * entry of that row (in file order) that made it so, and it returns -1. */
static int sort_rows(coop_mm_matrix *m, const char *path, int64_t *bad_k, int64_t *bad_seq) {
  const int64_t nloc = m->row_hi - m->row_lo;
  int64_t longest = 0, w = 0;
  item *row;
  for (int64_t k = 0; k < nloc; k++)
    if (m->rowptr[k + 1] - m->rowptr[k] > longest) longest = m->rowptr[k + 1] - m->rowptr[k];
  COOP_CHECK(alloc_array((void **)&row, (uint64_t)longest, sizeof *row, "row items", path));
  for (int64_t k = 0; k < nloc; k++) {
    const int64_t start = m->rowptr[k], len = m->rowptr[k + 1] - start;
    m->rowptr[k] = w;
    for (int64_t e = 0; e < len; e++) row[e] = (item){m->colind[start + e], e, m->val[start + e]};
    qsort(row, (size_t)len, sizeof *row, item_cmp);
    for (int64_t e = 0; e < len; e++) /* w <= start + e: compaction never overtakes */
      if (w > m->rowptr[k] && m->colind[w - 1] == row[e].col) {
        m->val[w - 1] += row[e].val;
        if (!isfinite(m->val[w - 1])) {
          *bad_k = k;
          *bad_seq = row[e].seq;
          free(row);
          return -1;
        }
      } else {
        m->colind[w] = row[e].col;
        m->val[w++] = row[e].val;
      }
  }
  m->rowptr[nloc] = m->nnz = w;
  free(row);
  /* Shrinking cannot fail for want of memory; keep the old block if it does. */
  void *p = realloc(m->colind, (size_t)(w ? w : 1) * sizeof *m->colind);
  if (p) m->colind = p;
  p = realloc(m->val, (size_t)(w ? w : 1) * sizeof *m->val);
  if (p) m->val = p;
  return 0;
}

/* Sizes, names and the row range into m; rowptr zeroed. */
static int start_matrix(const header *h, int64_t row_lo, int64_t row_hi, coop_mm_matrix *m,
                        const char *path) {
  if (row_hi == -1) row_hi = h->nrows;
  if (row_lo < 0 || row_hi < row_lo || row_hi > h->nrows)
    return COOP_ERROR(COOP_ERR_RUNTIME, "rows [%lld,%lld) are not within the %lld rows of %s",
                      (long long)row_lo, (long long)row_hi, (long long)h->nrows, path);
  m->nrows = h->nrows;
  m->ncols = h->ncols;
  m->row_lo = row_lo;
  m->row_hi = row_hi;
  m->announced = h->announced;
  snprintf(m->field, sizeof m->field, "%s", field_names[h->field]);
  snprintf(m->symmetry, sizeof m->symmetry, "%s", sym_names[h->sym]);
  COOP_CHECK(alloc_array((void **)&m->rowptr, (uint64_t)(row_hi - row_lo) + 1, sizeof *m->rowptr,
                         "row pointers", path));
  memset(m->rowptr, 0, ((size_t)(row_hi - row_lo) + 1) * sizeof *m->rowptr);
  return 0;
}

/* Pass 3, only when duplicates at one place sum to a value that is not finite:
 * the line of the entry that is number seq of global row `row` in file order
 * (pass 2 stored the entries of a row so), named in the input error. */
static int bad_sum(reader *r, header *h, int64_t row, int64_t seq) {
  int64_t i, j, k = 0;
  double v;
  int eof = 0;
  COOP_CHECK(rewind_entries(r, h));
  for (;;) {
    COOP_CHECK(next_entry(r, h, &i, &j, &v, &eof));
    if (eof) break;
    /* an entry adds one to row i, or (mirrored) one to row j */
    if ((i == row || (h->sym != S_GENERAL && j == row)) && k++ == seq)
      return bad(r, r->line,
                 "duplicate entries at (%lld,%lld) sum to a value that is not finite: expected "
                 "duplicates whose sum is a finite real number",
                 (long long)row + 1, (long long)(i == row ? j : i) + 1);
  }
  return COOP_ERROR(COOP_ERR_RUNTIME, "%s changed while it was read", r->path);
}

static int read_matrix(reader *r, int64_t row_lo, int64_t row_hi, coop_mm_matrix *m) {
  header h;
  int64_t *next = NULL, bad_k = 0, bad_seq = 0;
  int st;
  COOP_CHECK(parse_header(r, -1, &h));
  COOP_CHECK(start_matrix(&h, row_lo, row_hi, m, r->path));
  COOP_CHECK(count_rows(r, &h, m));
  COOP_CHECK(
      alloc_array((void **)&m->colind, (uint64_t)m->nnz, sizeof *m->colind, "entries", r->path));
  COOP_CHECK(alloc_array((void **)&m->val, (uint64_t)m->nnz, sizeof *m->val, "entries", r->path));
  COOP_CHECK(alloc_array((void **)&next, (uint64_t)(m->row_hi - m->row_lo), sizeof *next,
                         "row cursors", r->path));
  st = fill_rows(r, &h, m, next);
  free(next);
  COOP_CHECK(st);
  st = sort_rows(m, r->path, &bad_k, &bad_seq);
  return st < 0 ? bad_sum(r, &h, m->row_lo + bad_k, bad_seq) : st;
}

int coop_mm_read(const char *path, int64_t row_lo, int64_t row_hi, coop_mm_matrix *m) {
  reader r;
  int st;
  memset(m, 0, sizeof *m);
  st = reader_open(&r, path);
  if (!st) st = read_matrix(&r, row_lo, row_hi, m);
  reader_close(&r);
  if (st) coop_mm_free(m);
  return st;
}

int64_t coop_mm_zero_diagonal(const coop_mm_matrix *m, double *diag) {
  for (int64_t r = 0; r < m->row_hi - m->row_lo; r++) {
    double d = 0.0;
    for (int64_t j = m->rowptr[r]; j < m->rowptr[r + 1]; j++)
      if (m->colind[j] == m->row_lo + r) d = m->val[j];
    if (fabs(d) < DBL_MIN) {
      if (diag) *diag = d;
      return m->row_lo + r;
    }
  }
  return -1;
}

void coop_mm_free(coop_mm_matrix *m) {
  if (!m) return;
  free(m->rowptr);
  free(m->colind);
  free(m->val);
  memset(m, 0, sizeof *m);
}

int coop_mm_read_size(const char *path, int64_t *nrows, int64_t *ncols, int64_t *announced) {
  reader r;
  header h;
  int st = reader_open(&r, path);
  if (!st) st = parse_header(&r, -1, &h);
  reader_close(&r);
  if (st) return st;
  *nrows = h.nrows;
  *ncols = h.ncols;
  *announced = h.announced;
  return 0;
}

/* ---- vectors ----------------------------------------------------------------- */

/* Array format: one value per line, exactly nrows of them. */
static int read_array(reader *r, const header *h, int64_t lo, int64_t hi, double *out) {
  int64_t k = 0;
  double v;
  int eof;
  for (;;) {
    COOP_CHECK(reader_next_data(r, &eof));
    if (eof) break;
    if (k == h->nrows)
      return bad(r, r->line, "more values than the %lld announced on line %lld",
                 (long long)h->nrows, (long long)h->size_line);
    if (r->ntok != 1) return bad(r, r->line, "%d fields: expected 1 (value)", r->ntok);
    COOP_CHECK(parse_value(r, r->tok[0], h->field, &v));
    if (k >= lo && k < hi) out[k - lo] = v;
    k++;
  }
  if (k < h->nrows)
    return bad(r, r->line + 1, "%lld values, fewer than the %lld announced on line %lld",
               (long long)k, (long long)h->nrows, (long long)h->size_line);
  return 0;
}

/* Coordinate format: "i 1 value" entries; absent ones are 0, duplicates summed. */
static int read_coordinate(reader *r, header *h, int64_t lo, int64_t hi, double *out) {
  int64_t i, j;
  double v;
  int eof = 0;
  for (int64_t k = 0; k < hi - lo; k++) out[k] = 0.0;
  for (;;) {
    COOP_CHECK(next_entry(r, h, &i, &j, &v, &eof));
    if (eof) return 0;
    if (i < lo || i >= hi) continue;
    out[i - lo] += v;
    if (!isfinite(out[i - lo]))
      return bad(r, r->line,
                 "duplicate entries at (%lld,1) sum to a value that is not finite: expected "
                 "duplicates whose sum is a finite real number",
                 (long long)i + 1);
  }
}

int coop_mm_read_vector(const char *path, int64_t n, int64_t lo, int64_t hi, double *out) {
  reader r;
  header h;
  int st;
  if (n < 0 || lo < 0 || hi < lo || hi > n)
    return COOP_ERROR(COOP_ERR_RUNTIME, "entries [%lld,%lld) are not within a vector of %lld",
                      (long long)lo, (long long)hi, (long long)n);
  st = reader_open(&r, path);
  if (!st) st = parse_header(&r, n, &h);
  if (!st) st = h.array ? read_array(&r, &h, lo, hi, out) : read_coordinate(&r, &h, lo, hi, out);
  reader_close(&r);
  return st;
}
