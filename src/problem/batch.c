#define _POSIX_C_SOURCE 200809L

#include "problem/batch.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "io/files.h"
#include "io/mm.h"

/* ---- messages ------------------------------------------------------------- */

/* "FILE:LINE: key = value: msg" or "--set key=value: msg", as the parser says it. */
static int key_error(const coop_config *cfg, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int key_error(const coop_config *cfg, const char *key, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *origin = coop_config_origin(cfg, key), *val = coop_config_text(cfg, key);
  if (strcmp(origin, "--set") == 0) return coop_error_input("--set %s=%s: %s", key, val, msg);
  return coop_error_input("%s: %s = %s: %s", origin, key, val, msg);
}

/* ---- generators ----------------------------------------------------------- */

/* splitmix64's output function: a counter-based stream, so problem i's values
 * need no state and no other problem. */
static uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

enum { STREAM_SIZE = 1, STREAM_SHIFT = 2, STREAM_RHS = 3 };

static uint64_t key_of(uint64_t seed, uint64_t i, uint64_t stream) { return mix(mix(mix(seed) + i) + stream); }

static double unit(uint64_t k) { return (double)(k >> 11) * 0x1p-53; } /* [0, 1) */

static double draw(const coop_batch_gen *g, double u, int integer) {
  if (g->lo == g->hi) return g->lo;
  /* log(hi) - log(lo), not log(hi / lo): the ratio overflows for a range
   * such as 1e-300 .. 1e100, which the generator's rules allow */
  double v;
  if (!integer)
    v = g->kind == COOP_GEN_UNIFORM ? g->lo + u * (g->hi - g->lo)
                                    : exp(log(g->lo) + u * (log(g->hi) - log(g->lo)));
  else
    v = g->kind == COOP_GEN_UNIFORM ? g->lo + floor(u * (g->hi - g->lo + 1.0))
                                    : floor(exp(log(g->lo) + u * (log(g->hi + 1.0) - log(g->lo))));
  return v < g->lo ? g->lo : v > g->hi ? g->hi : v;
}

int64_t coop_batch_side(const coop_batch_spec *sp, int64_t i) {
  return (int64_t)draw(&sp->sizes, unit(key_of(sp->seed, (uint64_t)i, STREAM_SIZE)), 1);
}

double coop_batch_shift(const coop_batch_spec *sp, int64_t i) {
  return draw(&sp->shift, unit(key_of(sp->seed, (uint64_t)i, STREAM_SHIFT)), 0);
}

double coop_batch_rhs(const coop_batch_spec *sp, int64_t i, int64_t row) {
  if (sp->rhs_kind != COOP_RHS_RANDOM) return sp->rhs_kind == COOP_RHS_ZERO ? 0.0 : 1.0;
  return 2.0 * unit(mix(key_of(sp->seed, (uint64_t)i, STREAM_RHS) + (uint64_t)row)) - 1.0;
}

/* One number of a generator: the whole text, an integer or a finite real. */
static int number(const char *t, size_t len, int integer, double *v) {
  char buf[64], *end;
  if (len == 0 || len >= sizeof buf) return -1;
  memcpy(buf, t, len);
  buf[len] = '\0';
  errno = 0;
  *v = integer ? (double)strtoll(buf, &end, 10) : strtod(buf, &end);
  return end == buf || *end || errno == ERANGE || !isfinite(*v) ? -1 : 0;
}

/* NAME:A or NAME:A:B into g; what the numbers must be is checked by the caller. */
static int parse_gen(const coop_config *cfg, const char *key, int integer, coop_batch_gen *g) {
  const char *t = coop_config_str(cfg, key), *c1 = strchr(t, ':');
  const char *form = integer ? "integers" : "reals";
  const size_t name_len = c1 ? (size_t)(c1 - t) : strlen(t);
  if (name_len == 7 && strncmp(t, "uniform", 7) == 0) g->kind = COOP_GEN_UNIFORM;
  else if (name_len == 10 && strncmp(t, "loguniform", 10) == 0) g->kind = COOP_GEN_LOGUNIFORM;
  else
    return key_error(cfg, key, "unknown generator '%.*s': expected uniform:N, uniform:LO:HI or "
                     "loguniform:LO:HI", (int)name_len, t);
  if (!c1)
    return key_error(cfg, key, "expected %s:LO:HI%s", name_len == 7 ? "uniform" : "loguniform",
                     name_len == 7 ? " or uniform:N" : "");
  const char *c2 = strchr(c1 + 1, ':');
  const int two = c2 != NULL;
  if ((two && (number(c1 + 1, (size_t)(c2 - c1 - 1), integer, &g->lo) ||
               number(c2 + 1, strlen(c2 + 1), integer, &g->hi))) ||
      (!two && number(c1 + 1, strlen(c1 + 1), integer, &g->lo)))
    return key_error(cfg, key, "expected %s:LO:HI%s with LO and HI %s", name_len == 7 ? "uniform" : "loguniform",
                     name_len == 7 ? " or uniform:N" : "", form);
  if (!two && g->kind == COOP_GEN_LOGUNIFORM)
    return key_error(cfg, key, "loguniform needs a range, loguniform:LO:HI");
  if (!two) g->hi = g->lo;
  if (g->lo > g->hi) return key_error(cfg, key, "LO = %g is above HI = %g", g->lo, g->hi);
  return 0;
}

static int parse_sizes(coop_batch_spec *sp, const coop_config *cfg) {
  const double most = sp->dim == 2 ? 4096 : 256;
  COOP_CHECK(parse_gen(cfg, "batch.sizes", 1, &sp->sizes));
  if (sp->sizes.lo < 2)
    return key_error(cfg, "batch.sizes", "%g points per side: at least 2", sp->sizes.lo);
  if (sp->sizes.hi > most)
    return key_error(cfg, "batch.sizes", "%g points per side: at most %g in %dD (batch.dim = %d)",
                     sp->sizes.hi, most, sp->dim, sp->dim);
  return 0;
}

/* The shift enters the diagonal beside 2 dim / h^2 <= 2^28: beyond 1e100 its
 * squares in the norms would leave the doubles. */
static int parse_shift(coop_batch_spec *sp, const coop_config *cfg) {
  COOP_CHECK(parse_gen(cfg, "batch.shift", 0, &sp->shift));
  if (sp->shift.lo < 0) return key_error(cfg, "batch.shift", "shifts are reals >= 0");
  if (sp->shift.kind == COOP_GEN_LOGUNIFORM && sp->shift.lo <= 0)
    return key_error(cfg, "batch.shift", "loguniform needs LO > 0");
  if (sp->shift.hi > 1e100) return key_error(cfg, "batch.shift", "shifts are at most 1e100");
  return 0;
}

/* ---- the solver keys a batch takes ---------------------------------------- */

static int parse_solver(coop_batch_spec *sp, const coop_config *cfg) {
  const char *name = coop_config_str(cfg, "solver.name"), *pc = coop_config_str(cfg, "solver.pc");
  if (strcmp(name, "jacobi") && strcmp(name, "cg") && strcmp(name, "heat"))
    return coop_error_input("solver.name = %s (from %s): a [batch] input runs jacobi, cg or heat", name,
                            coop_config_origin(cfg, "solver.name"));
  sp->method = !strcmp(name, "cg") ? COOP_BATCH_CG : !strcmp(name, "heat") ? COOP_BATCH_HEAT : COOP_BATCH_JACOBI;
  sp->alpha = coop_config_real(cfg, "solver.alpha");
  sp->dt = coop_config_real(cfg, "solver.dt");
  sp->t_end = coop_config_real(cfg, "solver.t_end");
  sp->max_iter = coop_config_int(cfg, "solver.max_iter");
  sp->pc = strcmp(pc, "jacobi") == 0;
  if (sp->pc && sp->method != COOP_BATCH_CG)
    return coop_error_input("solver.pc = jacobi (from %s) applies to solver.name = cg, not %s",
                            coop_config_origin(cfg, "solver.pc"), name);
  return 0;
}

/* ---- heat ----------------------------------------------------------------- */

/* The shortest decimal of v that reads back (a limit in a message can be
 * pasted back as an input and is not above the limit), as solvers/relax/heat.c. */
static void shortest(char *buf, size_t len, double v) {
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, len, "%.*g", p, v);
    if (strtod(buf, NULL) == v) return;
  }
}

/* A's eigenvalues lie below 4 dim / h^2 + s (h = 1 / (n + 1)); forward Euler
 * is stable while dt alpha lambda_max <= 2. */
double coop_batch_heat_limit(const coop_batch_spec *sp, int64_t i) {
  const double n1 = (double)coop_batch_side(sp, i) + 1.0;
  return 2.0 / (sp->alpha * (4.0 * sp->dim * (n1 * n1) + coop_batch_shift(sp, i)));
}

void coop_batch_heat_step(const coop_batch_spec *sp, int64_t i, double *dt, int64_t *steps) {
  const double want = sp->dt > 0.0 ? sp->dt : 0.9 * coop_batch_heat_limit(sp, i);
  *dt = want;
  *steps = sp->max_iter;
  if (!(sp->t_end > 0.0)) return;
  const double q = ceil(sp->t_end / want); /* checked in doubles: no conversion overflows */
  if (!(q <= (double)COOP_BATCH_MAX_STEPS)) {
    *steps = -1;
    return;
  }
  int64_t k = q < 1.0 ? 1 : (int64_t)q;
  /* t_end / k rounds, and may land an ulp above the step asked for (and so
   * above the limit): one more step keeps it below */
  while (sp->t_end / (double)k > want && k < COOP_BATCH_MAX_STEPS) k++;
  *dt = sp->t_end / (double)k;
  *steps = k;
}

/* solver.dt stable for every problem, every step positive and finite, the
 * step counts in range and their sum (the report's total) in 64 bits. */
static int check_heat(const coop_batch_spec *sp, const coop_config *cfg) {
  double lim = INFINITY;
  int64_t worst = 0, total = 0;
  for (int64_t i = 0; i < sp->count; i++) {
    const double l = coop_batch_heat_limit(sp, i);
    if (!(l >= lim)) lim = l, worst = i;
  }
  if (sp->count > 0 && (!(lim > 0.0) || !isfinite(lim)))
    return key_error(cfg, "solver.alpha", "problem %lld (side %lld, shift %g) has the stability limit %g: "
                     "the time step must be positive and finite", (long long)worst,
                     (long long)coop_batch_side(sp, worst), coop_batch_shift(sp, worst), lim);
  if (sp->dt > lim) {
    char l[32];
    shortest(l, sizeof l, lim);
    return key_error(cfg, "solver.dt", "above the explicit stability limit %s of problem %lld (side %lld, "
                     "shift %g), the smallest of the batch (2 / (alpha (4 dim / h^2 + s))); use solver.dt "
                     "<= %s (or 0: each problem takes 0.9 of its own limit)", l, (long long)worst,
                     (long long)coop_batch_side(sp, worst), coop_batch_shift(sp, worst), l);
  }
  for (int64_t i = 0; i < sp->count; i++) {
    double dt;
    int64_t steps;
    coop_batch_heat_step(sp, i, &dt, &steps);
    if (steps < 0)
      return key_error(cfg, "solver.t_end", "problem %lld (side %lld, shift %g) would take more than "
                       "%lld steps of dt = %g", (long long)i, (long long)coop_batch_side(sp, i),
                       coop_batch_shift(sp, i), COOP_BATCH_MAX_STEPS, dt);
    if (!(dt > 0.0))
      return key_error(cfg, "solver.t_end", "problem %lld: %lld steps of t_end / %lld = %g: the time step "
                       "must be positive", (long long)i, (long long)steps, (long long)steps, dt);
    if (__builtin_add_overflow(total, steps, &total))
      return key_error(cfg, sp->t_end > 0.0 ? "solver.t_end" : "solver.max_iter",
                       "the batch's %lld problems take more than 2^63 steps in all", (long long)sp->count);
  }
  return 0;
}

/* ---- batch.matrices ------------------------------------------------------- */

static void trim_span(char **s) {
  char *e;
  while (**s == ' ' || **s == '\t') (*s)++;
  e = *s + strlen(*s);
  while (e > *s && (e[-1] == ' ' || e[-1] == '\t')) *--e = '\0';
}

/* Split "A.mtx[:b.mtx], ..." in place into sp->matrix and sp->rhs. */
static int parse_matrices(coop_batch_spec *sp, const coop_config *cfg) {
  const char *text = coop_config_str(cfg, "batch.matrices");
  int64_t n = 1;
  for (const char *p = text; *p; p++) n += *p == ',';
  sp->list = strdup(text);
  sp->matrix = calloc((size_t)n, sizeof *sp->matrix);
  sp->rhs = calloc((size_t)n, sizeof *sp->rhs);
  if (!sp->list || !sp->matrix || !sp->rhs) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  char *p = sp->list;
  for (int64_t i = 0; i < n; i++) {
    char *comma = strchr(p, ','), *colon;
    if (comma) *comma = '\0';
    if ((colon = strchr(p, ':'))) *colon = '\0';
    sp->matrix[i] = p;
    sp->rhs[i] = colon ? colon + 1 : NULL;
    trim_span(&sp->matrix[i]);
    if (sp->rhs[i]) trim_span(&sp->rhs[i]);
    if (!*sp->matrix[i] || (sp->rhs[i] && (!*sp->rhs[i] || strchr(sp->rhs[i], ':'))))
      return key_error(cfg, "batch.matrices", "entry %lld: expected A.mtx or A.mtx:b.mtx", (long long)i + 1);
    p = comma ? comma + 1 : p + strlen(p);
  }
  sp->count = n;
  return 0;
}

/* ---- batch.matrix_list ---------------------------------------------------- */

static int blank(char ch) { return ch == ' ' || ch == '\t'; }

/* The quoted path at p (its opening quote), unescaped in place from p; *end:
 * just past the closing quote. NULL with *why when malformed. */
static char *quoted(char *p, char **end, const char **why) {
  char *out = p, *q = p + 1;
  for (; *q != '"'; q++) {
    if (!*q) return *why = "unterminated quote: a quoted path ends at the next \" (write \\\" for a "
                           "quote and \\\\ for a backslash inside it)", NULL;
    if (*q == '\\' && q[1] != '"' && q[1] != '\\')
      return *why = "a backslash in a quoted path escapes only \" or \\ (write \\\\ for a backslash)", NULL;
    if (*q == '\\') q++;
    *out++ = *q;
  }
  *end = q + 1;
  if (out == p) return *why = "an empty path \"\"", NULL;
  if (**end && !blank(**end))
    return *why = "text right after a closing quote (blanks separate the paths)", NULL;
  *out = '\0'; /* out < *end: the character there is still to be read */
  return p;
}

int coop_batch_list_line(char *line, char *field[2], const char **why) {
  size_t len = strlen(line);
  if (len && line[len - 1] == '\n') line[--len] = '\0';
  if (len && line[len - 1] == '\r') line[--len] = '\0';
  char *p = line;
  while (blank(*p)) p++;
  if (*p == '#') return 0;
  int n = 0;
  while (*p) {
    if (n == 2) {
      *why = "too many fields: expected A.mtx or A.mtx b.mtx (a path with blanks goes in double quotes; "
             "only a line that starts with # is a comment)";
      return -1;
    }
    char *end = p;
    if (*p == '"') {
      if (!(field[n] = quoted(p, &end, why))) return -1;
    } else {
      field[n] = p;
      for (; *end && !blank(*end); end++)
        if (*end == '"') {
          *why = "a double quote inside an unquoted path (quote the whole path and write \\\" for the quote)";
          return -1;
        }
    }
    n++;
    p = end;
    if (*p) *p++ = '\0'; /* a blank: the end of an unquoted path */
    while (blank(*p)) p++;
  }
  return n;
}

/* Length of the list file's folder, its final '/' included (0: the working folder). */
static size_t folder_len(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? (size_t)(slash - path) + 1 : 0;
}

/* Room taken and held in sp->list (bytes) and sp->line (entries) while the list is read. */
typedef struct {
  size_t used, room;
  int64_t lines;
} list_room;

/* Append the paths of the list's line to sp->list ("A\0b\0", an empty b: none;
 * a relative path joined to the list file's folder) and the line to sp->line. */
static int add_entry(coop_batch_spec *sp, list_room *r, int64_t line, char *const field[2], int n) {
  const size_t dlen = folder_len(sp->list_file);
  size_t need = 2;
  for (int k = 0; k < n; k++) need += (field[k][0] == '/' ? 0 : dlen) + strlen(field[k]);
  if (sp->count == INT32_MAX) /* the broadcasts count entries in an int */
    return coop_error_input("%s:%lld: more than %d matrices", sp->list_file, (long long)line, INT32_MAX);
  if (r->used + need > r->room) {
    char *t = realloc(sp->list, 2 * (r->used + need));
    if (!t) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
    sp->list = t, r->room = 2 * (r->used + need);
  }
  if (sp->count == r->lines) {
    int64_t *l = realloc(sp->line, (size_t)(2 * r->lines + 16) * sizeof *l);
    if (!l) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
    sp->line = l, r->lines = 2 * r->lines + 16;
  }
  for (int k = 0; k < 2; k++) {
    const size_t d = k < n && field[k][0] != '/' ? dlen : 0, len = k < n ? strlen(field[k]) : 0;
    memcpy(sp->list + r->used, sp->list_file, d);
    memcpy(sp->list + r->used + d, k < n ? field[k] : "", len + 1);
    r->used += d + len + 1;
  }
  sp->line[sp->count++] = line;
  return 0;
}

/* The list file could not be opened: say so after the key that names it. */
static int open_error(const coop_config *cfg, const char *path) {
  const char *m = coop_error_message();
  const size_t n = strlen(path); /* coop_file_open_input says "PATH: cannot read ...": the key names PATH */
  char *msg = strdup(strncmp(m, path, n) == 0 && strncmp(m + n, ": ", 2) == 0 ? m + n + 2 : m);
  const int rc = key_error(cfg, "batch.matrix_list", "%s", msg ? msg : "cannot read the matrix list");
  free(msg);
  return rc;
}

/* Rank 0: every line of the list file into sp->list and sp->line. */
static int read_list(coop_batch_spec *sp, const coop_config *cfg) {
  int fd;
  if (coop_file_open_input(sp->list_file, "the matrix list", &fd)) return open_error(cfg, sp->list_file);
  FILE *f = fdopen(fd, "r");
  if (!f) {
    const int e = errno;
    close(fd);
    return COOP_ERROR(COOP_ERR_RUNTIME, "fdopen %s: %s", sp->list_file, strerror(e));
  }
  char *buf = NULL, *field[2];
  size_t cap = 0;
  list_room room = {0, 0, 0};
  int64_t line = 0;
  ssize_t got;
  int rc = 0;
  while (!rc && (got = getline(&buf, &cap, f)) >= 0) {
    const char *why = NULL;
    const int n = strlen(buf) == (size_t)got ? coop_batch_list_line(buf, field, &why) : -1;
    line++;
    if (n < 0) /* no why: a NUL byte */
      rc = coop_error_input("%s:%lld: %s", sp->list_file, (long long)line, why ? why : "a NUL byte: not text");
    else if (n > 0) rc = add_entry(sp, &room, line, field, n);
  }
  if (!rc && ferror(f))
    rc = coop_error_input("%s: cannot read the matrix list: %s", sp->list_file, strerror(errno));
  if (!rc && sp->count == 0)
    rc = coop_error_input("%s: no matrices: expected a line A.mtx or A.mtx b.mtx per problem (blank lines "
                          "and lines that start with # are skipped)", sp->list_file);
  free(buf);
  fclose(f);
  return rc;
}

/* sp->matrix and sp->rhs for sp->count entries, filled from sp->list by index_list. */
static int alloc_index(coop_batch_spec *sp) {
  sp->matrix = calloc((size_t)sp->count + 1, sizeof *sp->matrix);
  sp->rhs = calloc((size_t)sp->count + 1, sizeof *sp->rhs);
  return sp->matrix && sp->rhs ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
}

/* Bytes of sp->list when index is 0, else the paths pointed at. */
static size_t index_list(coop_batch_spec *sp, int index) {
  char *p = sp->list;
  for (int64_t i = 0; i < sp->count; i++) {
    if (index) sp->matrix[i] = p;
    p += strlen(p) + 1;
    if (index) sp->rhs[i] = *p ? p : NULL;
    p += strlen(p) + 1;
  }
  return (size_t)(p - sp->list);
}

/* Rank 0: the output replaces neither the list file nor a file it names. */
static int list_spares(const coop_batch_spec *sp, const coop_config *cfg) {
  const char *path = coop_config_str(cfg, "output.file"), *origin = coop_config_origin(cfg, "output.file");
  const char *list[1] = {sp->list_file};
  int rc = coop_output_spares(path, 0, list, 1, "output.file = %s (from %s)", path, origin);
  for (int64_t i = 0; i < sp->count && !rc; i++) {
    const char *f[2] = {sp->matrix[i], sp->rhs[i]};
    rc = coop_output_spares(path, 0, f, 2, "output.file = %s (from %s)", path, origin);
  }
  return rc;
}

/* Rank 0's list to the others. */
static int share_list(coop_batch_spec *sp, const coop_comm *c) {
  int64_t head[2] = {sp->count, c->rank ? 0 : (int64_t)index_list(sp, 0)};
  COOP_MPI(MPI_Bcast(head, 2, MPI_INT64_T, 0, c->world));
  int local = 0;
  if (c->rank) {
    sp->count = head[0];
    sp->list = malloc((size_t)head[1]);
    sp->line = malloc((size_t)sp->count * sizeof *sp->line);
    local = sp->list && sp->line ? alloc_index(sp) : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  }
  COOP_CHECK(coop_comm_agree(c, local));
  for (int64_t off = 0; off < head[1]; off += INT32_MAX) {
    const int n = head[1] - off < INT32_MAX ? (int)(head[1] - off) : INT32_MAX;
    COOP_MPI(MPI_Bcast(sp->list + off, n, MPI_CHAR, 0, c->world));
  }
  COOP_MPI(MPI_Bcast(sp->line, (int)sp->count, MPI_INT64_T, 0, c->world));
  if (c->rank) index_list(sp, 1);
  return 0;
}

/* batch.matrix_list: rank 0 reads the file and checks the output against it,
 * then tells the others (c NULL: no MPI). local: this rank's status so far,
 * agreed first so that no rank waits in a broadcast another one never reaches. */
static int matrix_list(coop_batch_spec *sp, const coop_config *cfg, const coop_comm *c, int local) {
  if (!local && !(sp->list_file = strdup(coop_config_str(cfg, "batch.matrix_list"))))
    local = COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (!local && (!c || c->rank == 0)) {
    local = read_list(sp, cfg);
    if (!local) local = alloc_index(sp);
    if (!local) index_list(sp, 1);
    if (!local) local = list_spares(sp, cfg);
  }
  if (!c) return local;
  COOP_CHECK(coop_comm_agree(c, local)); /* rank 0 tells the user why */
  return share_list(sp, c);
}

/* An input error about entry i: "WHERE entry N: msg" (batch.matrices) or
 * "LIST:LINE: msg" (batch.matrix_list). */
static int entry_input(const coop_batch_spec *sp, int64_t i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int entry_input(const coop_batch_spec *sp, int64_t i, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (msg) {
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  const char *text = msg ? msg : fmt;
  const int rc = sp->line ? coop_error_input("%s:%lld: %s", sp->list_file, (long long)sp->line[i], text)
                          : coop_error_input("%s entry %lld: %s", sp->where, (long long)i + 1, text);
  free(msg);
  return rc;
}

/* An input error from the Matrix Market reader, prefixed with the entry. */
static int entry_error(const coop_batch_spec *sp, int64_t i, int rc) {
  if (rc != COOP_ERR_INPUT) return rc;
  char *msg = strdup(coop_error_message());
  rc = entry_input(sp, i, "%s", msg ? msg : "");
  free(msg);
  return rc;
}

static int read_size(const coop_batch_spec *sp, int64_t i, int64_t *rows, int64_t *nnz) {
  int64_t nr, nc, ann;
  const int rc = coop_mm_read_size(sp->matrix[i], &nr, &nc, &ann);
  if (rc) return entry_error(sp, i, rc);
  if (nr != nc || nr < 1 || nr > COOP_BATCH_MAX_ROWS)
    return entry_input(sp, i, "%s: the matrix is %lld x %lld: expected square, with 1 to %d rows",
                       sp->matrix[i], (long long)nr, (long long)nc, COOP_BATCH_MAX_ROWS);
  *rows = nr;
  *nnz = ann <= INT64_MAX / 2 ? 2 * ann : INT64_MAX;
  return 0;
}

/* Rank 0 reads every size line and tells the others (c NULL: no MPI). local:
 * this rank's status so far (its arrays), agreed first so that no rank waits
 * in a broadcast another one never reaches. */
static int matrix_sizes(coop_batch_spec *sp, const coop_comm *c, int local) {
  int st = 0;
  if (c) COOP_CHECK(coop_comm_agree(c, local));
  else if (local) return local;
  if (!c || c->rank == 0)
    for (int64_t i = 0; i < sp->count && !st; i++) st = read_size(sp, i, &sp->rows[i], &sp->nnz[i]);
  if (!c) return st;
  COOP_MPI(MPI_Bcast(&st, 1, MPI_INT, 0, c->world));
  /* rank 0 tells the user why, with its own status (input error or not) */
  if (st) return c->rank ? coop_error_remote(st, "%s: rank 0 could not read the files", sp->where) : st;
  COOP_MPI(MPI_Bcast(sp->rows, (int)sp->count, MPI_INT64_T, 0, c->world));
  COOP_MPI(MPI_Bcast(sp->nnz, (int)sp->count, MPI_INT64_T, 0, c->world));
  return 0;
}

/* ---- sizes ---------------------------------------------------------------- */

static void generated_sizes(coop_batch_spec *sp) {
  for (int64_t i = 0; i < sp->count; i++) {
    const int64_t n = coop_batch_side(sp, i), face = sp->dim == 2 ? n : n * n;
    sp->rows[i] = face * n;
    sp->nnz[i] = sp->rows[i] * (2 * sp->dim + 1) - 2 * sp->dim * face; /* no neighbours past the boundary */
  }
}

/* Totals in checked 64-bit arithmetic: every offset into the arrays is one. */
static int totals(coop_batch_spec *sp, const coop_config *cfg) {
  sp->total_rows = sp->total_nnz = 0;
  for (int64_t i = 0; i < sp->count; i++)
    if (__builtin_add_overflow(sp->total_rows, sp->rows[i], &sp->total_rows) ||
        __builtin_add_overflow(sp->total_nnz, sp->nnz[i], &sp->total_nnz)) {
      if (sp->list) return coop_error_input("%s: the batch holds more than 2^63 rows or entries", sp->where);
      return coop_error_input("batch.count = %lld (from %s) with batch.sizes = %s: the batch holds "
                              "more than 2^63 rows or entries", (long long)sp->count,
                              coop_config_origin(cfg, "batch.count"), coop_config_str(cfg, "batch.sizes"));
    }
  return 0;
}

/* ---- the spec ------------------------------------------------------------- */

/* batch.matrices and batch.matrix_list replace the generators: a generator key
 * set beside one would be ignored. */
static int matrices_only(const coop_config *cfg, const char *key) {
  static const char *const gen[] = {"batch.count", "batch.dim", "batch.sizes", "batch.shift",
                                    "batch.rhs", "batch.seed"};
  for (size_t k = 0; k < sizeof gen / sizeof *gen; k++)
    if (!coop_config_is_default(cfg, gen[k]))
      return coop_error_input("%s = %s (from %s) applies to generated problems, not to %s",
                              gen[k], coop_config_text(cfg, gen[k]), coop_config_origin(cfg, gen[k]), key);
  return 0;
}

static int set_where(coop_batch_spec *sp, const coop_config *cfg, const char *key) {
  const char *origin = coop_config_origin(cfg, key);
  const char *val = coop_config_str(cfg, key);
  const size_t n = strlen(origin) + strlen(val) + 64;
  if (!(sp->where = malloc(n))) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (strcmp(origin, "--set") == 0) snprintf(sp->where, n, "--set %s=%s:", key, val);
  else snprintf(sp->where, n, "%s: %s", origin, key);
  return 0;
}

/* The problems from Matrix Market files: batch.matrices or batch.matrix_list, not both. */
static int matrices_from(coop_batch_spec *sp, const coop_config *cfg, const coop_comm *c) {
  const int text = strcmp(coop_config_str(cfg, "batch.matrices"), "none") != 0;
  const char *key = text ? "batch.matrices" : "batch.matrix_list";
  if (text && strcmp(coop_config_str(cfg, "batch.matrix_list"), "none") != 0)
    return coop_error_input("batch.matrices (from %s) and batch.matrix_list (from %s) both name the "
                            "matrices: use one", coop_config_origin(cfg, "batch.matrices"),
                            coop_config_origin(cfg, "batch.matrix_list"));
  COOP_CHECK(matrices_only(cfg, key));
  if (sp->method == COOP_BATCH_HEAT) /* no grid: no spacing to bound dt, no sine mode to start from */
    return coop_error_input("solver.name = heat (from %s) steps generated problems only: %s "
                            "(from %s) has no grid spacing to bound the time step; use batch.count, "
                            "batch.sizes and batch.shift", coop_config_origin(cfg, "solver.name"), key,
                            coop_config_origin(cfg, key));
  if (!text) return matrix_list(sp, cfg, c, set_where(sp, cfg, key));
  COOP_CHECK(set_where(sp, cfg, key));
  return parse_matrices(sp, cfg);
}

static int spec_read(coop_batch_spec *sp, const coop_config *cfg, const coop_comm *c) {
  COOP_CHECK(parse_solver(sp, cfg));
  sp->seed = (uint64_t)coop_config_int(cfg, "batch.seed");
  if (strcmp(coop_config_str(cfg, "batch.matrices"), "none") != 0 ||
      strcmp(coop_config_str(cfg, "batch.matrix_list"), "none") != 0) {
    COOP_CHECK(matrices_from(sp, cfg, c));
  } else {
    sp->count = coop_config_int(cfg, "batch.count");
    sp->dim = (int)coop_config_int(cfg, "batch.dim");
    const char *rhs = coop_config_str(cfg, "batch.rhs");
    sp->rhs_kind = !strcmp(rhs, "random") ? COOP_RHS_RANDOM : !strcmp(rhs, "zero") ? COOP_RHS_ZERO : COOP_RHS_ONES;
    COOP_CHECK(parse_sizes(sp, cfg));
    COOP_CHECK(parse_shift(sp, cfg));
  }
  sp->rows = malloc((size_t)sp->count * sizeof *sp->rows);
  sp->nnz = malloc((size_t)sp->count * sizeof *sp->nnz);
  const int mem = !sp->rows || !sp->nnz ? COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory") : 0;
  if (sp->list) COOP_CHECK(matrix_sizes(sp, c, mem));
  else if (mem) return mem;
  else generated_sizes(sp);
  COOP_CHECK(totals(sp, cfg));
  return sp->method == COOP_BATCH_HEAT ? check_heat(sp, cfg) : 0;
}

int coop_batch_spec_create(coop_batch_spec *sp, const coop_config *cfg, const coop_comm *c) {
  memset(sp, 0, sizeof *sp);
  const int rc = spec_read(sp, cfg, c);
  if (rc) coop_batch_spec_destroy(sp);
  return rc ? coop_error_trace(rc, __FILE__, __LINE__) : 0;
}

void coop_batch_spec_destroy(coop_batch_spec *sp) {
  if (!sp) return;
  free(sp->list);
  free(sp->matrix);
  free(sp->rhs);
  free(sp->where);
  free(sp->list_file);
  free(sp->line);
  free(sp->rows);
  free(sp->nnz);
  memset(sp, 0, sizeof *sp);
}

/* ---- dealing -------------------------------------------------------------- */

double coop_batch_cost(const coop_batch_spec *sp, int64_t i) {
  double kappa;
  if (sp->dim) { /* lambda_max ~ 4 dim / h^2, lambda_min ~ dim pi^2, both plus the shift */
    const double n1 = (double)coop_batch_side(sp, i) + 1.0, s = coop_batch_shift(sp, i);
    kappa = (4.0 * sp->dim * n1 * n1 + s) / (sp->dim * M_PI * M_PI + s);
  } else {
    kappa = (double)sp->rows[i]; /* a 2D-like matrix: kappa ~ 1/h^2 ~ rows */
  }
  if (sp->method == COOP_BATCH_HEAT) { /* no stop test: exactly its steps */
    double dt;
    int64_t steps;
    coop_batch_heat_step(sp, i, &dt, &steps);
    return (double)sp->nnz[i] * (double)(steps > 1 ? steps : 1);
  }
  return (double)sp->nnz[i] * (sp->method == COOP_BATCH_JACOBI ? kappa : sqrt(kappa));
}

typedef struct {
  double cost;
  int64_t id;
} job;

static int by_cost(const void *a, const void *b) {
  const job *x = a, *y = b;
  if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

typedef struct {
  double load;
  int rank;
} bin;

static int lighter(const bin *a, const bin *b) {
  return a->load < b->load || (a->load == b->load && a->rank < b->rank);
}

/* The root of the min-heap took a job: move it down to its place. */
static void sift_down(bin *h, int n) {
  for (int i = 0;;) {
    int m = i;
    const int l = 2 * i + 1, r = l + 1;
    if (l < n && lighter(&h[l], &h[m])) m = l;
    if (r < n && lighter(&h[r], &h[m])) m = r;
    if (m == i) return;
    const bin t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

int coop_batch_deal(const coop_batch_spec *sp, int nranks, int32_t *owner) {
  job *jobs = malloc((size_t)sp->count * sizeof *jobs + 1);
  bin *heap = malloc((size_t)nranks * sizeof *heap);
  if (!jobs || !heap || nranks < 1) {
    free(jobs);
    free(heap);
    return COOP_ERROR(COOP_ERR_RUNTIME, nranks < 1 ? "no ranks to deal to" : "out of host memory");
  }
  for (int64_t i = 0; i < sp->count; i++) jobs[i] = (job){coop_batch_cost(sp, i), i};
  qsort(jobs, (size_t)sp->count, sizeof *jobs, by_cost);
  for (int r = 0; r < nranks; r++) heap[r] = (bin){0.0, r}; /* all zero: already a heap */
  for (int64_t k = 0; k < sp->count; k++) {
    owner[jobs[k].id] = heap[0].rank;
    heap[0].load += jobs[k].cost;
    sift_down(heap, nranks);
  }
  free(jobs);
  free(heap);
  return 0;
}

/* ---- this rank's problems ------------------------------------------------- */

/* Generated problem i at rows from row0, entries from nz0 (ascending columns). */
static void fill_generated(const coop_batch_spec *sp, int64_t i, int64_t row0, int64_t nz0, coop_batch *bt) {
  const int64_t n = coop_batch_side(sp, i), rows = sp->rows[i];
  const int64_t stride[3] = {1, n, n * n};
  const double w = (double)(n + 1) * (double)(n + 1), diag = 2.0 * sp->dim * w + coop_batch_shift(sp, i);
  int64_t q = nz0;
  for (int64_t r = 0; r < rows; r++) {
    const int64_t at[3] = {r % n, (r / n) % n, r / (n * n)};
    bt->rowptr[row0 + r] = q;
    for (int a = sp->dim - 1; a >= 0; a--) /* below: slowest axis first */
      if (at[a] > 0) bt->colind[q] = (int32_t)(r - stride[a]), bt->val[q++] = -w;
    bt->colind[q] = (int32_t)r, bt->val[q++] = diag;
    for (int a = 0; a < sp->dim; a++)
      if (at[a] < n - 1) bt->colind[q] = (int32_t)(r + stride[a]), bt->val[q++] = -w;
    bt->b[row0 + r] = coop_batch_rhs(sp, i, r);
    if (sp->method == COOP_BATCH_HEAT) { /* the lowest sine mode at the interior points */
      double u = 1.0;
      for (int a = 0; a < sp->dim; a++) u *= sin(M_PI * (double)(at[a] + 1) / (double)(n + 1));
      bt->x0[row0 + r] = u;
    }
  }
}

static int read_matrix(const coop_batch_spec *sp, int64_t i, coop_mm_matrix *m) {
  const int rc = coop_mm_read(sp->matrix[i], 0, -1, m);
  if (rc) return entry_error(sp, i, rc);
  double d = 0.0;
  const int64_t bad = sp->method == COOP_BATCH_JACOBI || sp->pc ? coop_mm_zero_diagonal(m, &d) : -1;
  if (bad >= 0 && d == 0.0)
    return entry_input(sp, i, "%s: row %lld has a zero or missing diagonal entry, so %s does not exist "
                       "(use solver.name = cg with solver.pc = none)", sp->matrix[i], (long long)bad + 1,
                       sp->pc ? "the Jacobi preconditioner" : "the Jacobi iteration");
  if (bad >= 0)
    return entry_input(sp, i, "%s: row %lld has the diagonal entry %g, too small to invert, so %s does not exist "
                       "(use solver.name = cg with solver.pc = none)", sp->matrix[i], (long long)bad + 1, d,
                       sp->pc ? "the Jacobi preconditioner" : "the Jacobi iteration");
  return 0;
}

/* Matrix problem i, read into m, at rows from row0 and entries from nz0. */
static int fill_matrix(const coop_batch_spec *sp, int64_t i, const coop_mm_matrix *m, int64_t row0,
                       int64_t nz0, coop_batch *bt) {
  for (int64_t r = 0; r < m->nrows; r++) {
    double s = 0.0;
    bt->rowptr[row0 + r] = nz0 + m->rowptr[r];
    for (int64_t j = m->rowptr[r]; j < m->rowptr[r + 1]; j++) {
      bt->colind[nz0 + j] = (int32_t)m->colind[j];
      bt->val[nz0 + j] = m->val[j];
      s += m->val[j];
    }
    bt->b[row0 + r] = s; /* b = A*1 unless a vector file says otherwise */
  }
  if (!sp->rhs[i]) return 0;
  const int rc = coop_mm_read_vector(sp->rhs[i], m->nrows, 0, m->nrows, bt->b + row0);
  return rc ? entry_error(sp, i, rc) : 0;
}

static int alloc_arrays(coop_batch *bt, int64_t nnz) {
  const size_t rows = (size_t)bt->row_off[bt->count];
  bt->rowptr = malloc((rows + 1) * sizeof *bt->rowptr);
  bt->colind = malloc((size_t)nnz * sizeof *bt->colind + 1);
  bt->val = malloc((size_t)nnz * sizeof *bt->val + 1);
  bt->b = malloc(rows * sizeof *bt->b + 1);
  bt->x0 = calloc(rows + 1, sizeof *bt->x0);
  if (!bt->rowptr || !bt->colind || !bt->val || !bt->b || !bt->x0)
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory for %lld rows and %lld entries",
                      (long long)rows, (long long)nnz);
  return 0;
}

/* ids and row offsets of this rank's problems. */
static int index_own(const coop_batch_spec *sp, const int32_t *owner, int rank, coop_batch *bt) {
  int64_t k = 0;
  for (int64_t i = 0; i < sp->count; i++) k += owner[i] == rank;
  bt->count = k;
  bt->id = malloc((size_t)k * sizeof *bt->id + 1);
  bt->row_off = malloc((size_t)(k + 1) * sizeof *bt->row_off);
  if (!bt->id || !bt->row_off) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  bt->row_off[0] = k = 0;
  for (int64_t i = 0; i < sp->count; i++)
    if (owner[i] == rank) {
      bt->id[k] = i;
      bt->row_off[k + 1] = bt->row_off[k] + sp->rows[i];
      k++;
    }
  return 0;
}

static int build_generated(const coop_batch_spec *sp, coop_batch *bt) {
  int64_t nnz = 0;
  for (int64_t k = 0; k < bt->count; k++) nnz += sp->nnz[bt->id[k]];
  COOP_CHECK(alloc_arrays(bt, nnz));
  if (sp->method == COOP_BATCH_HEAT) {
    bt->dt = malloc((size_t)bt->count * sizeof *bt->dt + 1);
    bt->steps = malloc((size_t)bt->count * sizeof *bt->steps + 1);
    if (!bt->dt || !bt->steps) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
    for (int64_t k = 0; k < bt->count; k++) coop_batch_heat_step(sp, bt->id[k], &bt->dt[k], &bt->steps[k]);
  }
  nnz = 0;
  for (int64_t k = 0; k < bt->count; k++) {
    fill_generated(sp, bt->id[k], bt->row_off[k], nnz, bt);
    nnz += sp->nnz[bt->id[k]];
  }
  bt->rowptr[bt->row_off[bt->count]] = nnz;
  return 0;
}

/* The files are read first: their entries (after symmetric expansion and
 * summing duplicates) size the arrays. */
static int build_matrices(const coop_batch_spec *sp, coop_batch *bt) {
  coop_mm_matrix *m = calloc((size_t)bt->count + 1, sizeof *m);
  int64_t nnz = 0;
  int rc = m ? 0 : COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  for (int64_t k = 0; !rc && k < bt->count; k++)
    if (!(rc = read_matrix(sp, bt->id[k], &m[k]))) nnz += m[k].nnz;
  if (!rc) rc = alloc_arrays(bt, nnz);
  nnz = 0;
  for (int64_t k = 0; !rc && k < bt->count; k++) {
    rc = fill_matrix(sp, bt->id[k], &m[k], bt->row_off[k], nnz, bt);
    nnz += m[k].nnz;
  }
  if (!rc) bt->rowptr[bt->row_off[bt->count]] = nnz;
  for (int64_t k = 0; m && k < bt->count; k++) coop_mm_free(&m[k]);
  free(m);
  return rc;
}

int coop_batch_build(const coop_batch_spec *sp, const int32_t *owner, int rank, coop_batch *bt) {
  memset(bt, 0, sizeof *bt);
  int rc = index_own(sp, owner, rank, bt);
  if (!rc) rc = sp->list ? build_matrices(sp, bt) : build_generated(sp, bt);
  if (rc) coop_batch_free(bt);
  return rc ? coop_error_trace(rc, __FILE__, __LINE__) : 0;
}

void coop_batch_free(coop_batch *bt) {
  if (!bt) return;
  free(bt->id);
  free(bt->row_off);
  free(bt->rowptr);
  free(bt->colind);
  free(bt->val);
  free(bt->b);
  free(bt->x0);
  free(bt->dt);
  free(bt->steps);
  memset(bt, 0, sizeof *bt);
}

void coop_batch_memory(const coop_batch_spec *sp, const int32_t *owner, int rank, uint64_t *host,
                       uint64_t *device) {
  double rows = 0, nnz = 0, count = 0, most = 0;
  for (int64_t i = 0; i < sp->count; i++)
    if (owner[i] == rank) {
      rows += (double)sp->rows[i], nnz += (double)sp->nnz[i], count++;
      if ((double)sp->rows[i] > most) most = (double)sp->rows[i];
    }
  /* CSR (rowptr, colind, val), b, x0, x; ids, offsets, results; the host
   * solver's five work vectors; the dealing of the whole batch */
  const double csr = 8 * rows + 12 * nnz, own = csr + 24 * rows + 80 * count; /* heat: dt, steps */
  double h = own + 40 * most + (double)COOP_BATCH_DEAL_BYTES * (double)sp->count;
  if (rank == 0) /* the gathered results and solutions */
    h += 8 * (double)sp->total_rows + 64 * (double)sp->count;
  /* the GPU, the most any mode takes: CSR, b, x and CG's six work vectors
   * with the Jacobi preconditioner (r, q, two directions, z, the diagonal),
   * results, heat's step factors and counts, and launch mode's state (per
   * problem, and per 256-row chunk) */
  const double d = csr + 64 * rows + rows / 8 + 152 * count;
  *host = h < 1.8e19 ? (uint64_t)h : UINT64_MAX;
  *device = d < 1.8e19 ? (uint64_t)d : UINT64_MAX;
}
