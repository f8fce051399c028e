/* Unit tests of src/config.c and the key table: parsing, --set, validation,
 * origins, the resolved text, help, and one test per class of bad input. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/config.h"
#include "solvers/solver.h"
#include "core/error.h"
#include "unit.h"

static const char *const good_input =
    "# a full input file\n"
    "\n"
    "[grid]\n"
    "  dim   =   3     # trailing comment\n"
    "nx=100\n"
    "ny = 200\n"
    "\tnz = 300\t\n"
    "lx = 2.5\n"
    "ly = 0.125\n"
    "lz = 1e3\n"
    "ghost = 4\n"
    "   # indented comment\n"
    "[ problem ]\n"
    "type = laplace\n"
    "mode = 7\n"
    "[solver]\n"
    "name = jacobi\n"
    "rtol = 1e-10\n"
    "atol = 0.001\n"
    "max_iter = 1000000000000\n"
    "check_every = 50\n"
    "precision = fp32\n"
    "[run]  # optional section\n"
    "backend = host\n"
    "sync = launch\n"
    "device = 3\n"
    "[tune]\n"
    "blocks = 120\n"
    "[output]\n"
    "file = \"out dir/result #1.h5\"   # quoted: keeps the '#'\n"
    "xdmf = no\n"
    "monitor_every = 0\n";

static const char *const minimal_input = "[grid]\n[problem]\n[solver]\nrtol = 1e-8\n";

/* 1 when msg contains phrase; else says it is missing. */
static int has_phrase(const char *msg, const char *phrase) {
  if (strstr(msg, phrase)) return 1;
  fprintf(stderr, "\n  expected \"%s\" in message \"%s\"\n", phrase, msg);
  return 0;
}

/* 1 when msg contains every phrase of the NULL-terminated list. */
static int has_all(const char *msg, ...) {
  va_list ap;
  const char *p;
  int ok = 1;
  va_start(ap, msg);
  while ((p = va_arg(ap, const char *)) != NULL) ok &= has_phrase(msg, p);
  va_end(ap);
  return ok;
}

/* Create, parse text as "bad.in", apply the sets, validate; returns the first failure. */
static int load(const char *text, const char *set1, const char *set2) {
  coop_config *cfg = NULL;
  int err = coop_config_create(&cfg);
  if (!err && text) err = coop_config_parse(cfg, "bad.in", text);
  if (!err && set1) err = coop_config_set(cfg, set1);
  if (!err && set2) err = coop_config_set(cfg, set2);
  if (!err) err = coop_config_validate(cfg);
  coop_config_destroy(cfg);
  return err;
}

static coop_config *parsed(const char *text) {
  coop_config *cfg = NULL;
  CU_ASSERT_EQUAL_FATAL(coop_config_create(&cfg), 0);
  CU_ASSERT_EQUAL_FATAL(coop_config_parse(cfg, "in.txt", text), 0);
  return cfg;
}

/* index of section.key in the table, or -1 */
static long key_index(const coop_key_info *k, size_t n, const char *sec, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(k[i].section, sec) == 0 && strcmp(k[i].key, key) == 0) return (long)i;
  return -1;
}

/* A key's expected value, written as an input would write it, and where it
 * came from (NULL: not checked). */
typedef struct {
  const char *name, *value, *origin;
} key_want;

/* Each key has the value (compared as the key's type) and origin listed; else says which differs. */
static void assert_keys(const coop_config *cfg, const key_want *want, size_t n) {
  size_t nk;
  const coop_key_info *k = coop_config_keys(&nk);
  for (const key_want *w = want; w < want + n; w++) {
    char sec[32];
    const size_t dot = strcspn(w->name, ".");
    snprintf(sec, sizeof sec, "%.*s", (int)dot, w->name);
    const long at = key_index(k, nk, sec, w->name + dot + 1);
    CU_ASSERT_TRUE_FATAL(at >= 0);
    int same;
    switch (k[at].type) {
      case COOP_KEY_INT: same = coop_config_int(cfg, w->name) == strtoll(w->value, NULL, 10); break;
      case COOP_KEY_REAL: same = coop_config_real(cfg, w->name) == strtod(w->value, NULL); break;
      case COOP_KEY_BOOL: same = coop_config_bool(cfg, w->name) == (strcmp(w->value, "true") == 0); break;
      default: same = strcmp(coop_config_str(cfg, w->name), w->value) == 0;
    }
    if (w->origin && strcmp(coop_config_origin(cfg, w->name), w->origin) != 0) same = 0;
    if (!same)
      fprintf(stderr, "\n  %s: expected %s from %s, got from %s\n", w->name, w->value,
              w->origin ? w->origin : "anywhere", coop_config_origin(cfg, w->name));
    CU_ASSERT_TRUE(same);
  }
}

/* ---------- good input ---------- */

static void test_good_input(void) {
  static const key_want want[] = {
      {"grid.dim", "3", "in.txt:4"},
      {"grid.nx", "100", NULL},
      {"grid.ny", "200", NULL},
      {"grid.nz", "300", NULL},
      {"grid.lx", "2.5", NULL},
      {"grid.ly", "0.125", NULL},
      {"grid.lz", "1000.0", NULL},
      {"grid.ghost", "4", NULL},
      {"problem.type", "laplace", NULL},
      {"problem.mode", "7", NULL},
      {"solver.name", "jacobi", NULL},
      {"solver.rtol", "1e-10", NULL},
      {"solver.atol", "0.001", NULL},
      {"solver.max_iter", "1000000000000", NULL},
      {"solver.check_every", "50", NULL},
      {"solver.precision", "fp32", NULL},
      {"run.backend", "host", NULL},
      {"run.sync", "launch", NULL},
      {"run.device", "3", NULL},
      {"tune.blocks", "120", "in.txt:28"},
      {"output.file", "out dir/result #1.h5", "in.txt:30"},
      {"output.xdmf", "false", NULL},
      {"output.monitor_every", "0", NULL},
  };
  coop_config *cfg = parsed(good_input);
  CU_ASSERT_EQUAL(coop_config_validate(cfg), 0);
  assert_keys(cfg, want, sizeof want / sizeof *want);
  coop_config_destroy(cfg);
}

static void test_bool_spellings(void) {
  static const char *const text[] = {"true", "Yes", "on", "1", "false", "NO", "off", "0"};
  for (int i = 0; i < 8; i++) {
    coop_config *cfg = NULL;
    char buf[64];
    snprintf(buf, sizeof buf, "output.xdmf=%s", text[i]);
    CU_ASSERT_EQUAL_FATAL(coop_config_create(&cfg), 0);
    CU_ASSERT_EQUAL(coop_config_set(cfg, buf), 0);
    CU_ASSERT_EQUAL(coop_config_bool(cfg, "output.xdmf"), i < 4);
    coop_config_destroy(cfg);
  }
}

static void test_defaults_and_origins(void) {
  static const key_want want[] = {
      {"grid.dim", "2", NULL},
      {"grid.nx", "64", "default"},
      {"grid.nz", "64", NULL},
      {"grid.lx", "1.0", NULL},
      {"grid.ghost", "1", NULL},
      {"problem.type", "sine", NULL},
      {"problem.mode", "1", NULL},
      {"solver.atol", "0.0", NULL},
      {"solver.max_iter", "10000", NULL},
      {"solver.check_every", "100", NULL},
      {"solver.precision", "fp64", NULL},
      {"run.backend", "auto", NULL},
      {"run.sync", "auto", NULL},
      {"run.device", "-1", NULL},
      {"tune.blocks", "0", NULL},
      {"batch.sync", "auto", NULL},
      {"tune.csr_schedule", "auto", NULL},
      {"output.file", "coopsolve.h5", "default"},
      {"output.xdmf", "true", NULL},
      {"output.monitor_every", "auto", NULL},
      {"solver.rtol", "1e-8", "in.txt:4"},
  };
  coop_config *cfg = parsed(minimal_input);
  CU_ASSERT_EQUAL(coop_config_validate(cfg), 0);
  assert_keys(cfg, want, sizeof want / sizeof *want);
  coop_config_destroy(cfg);
}

static void test_key_table(void) {
  size_t n = 0;
  const coop_key_info *k = coop_config_keys(&n);
  CU_ASSERT_TRUE(n >= 29); /* keys are added, never dropped silently */
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < i; j++) /* each section.key once */
      CU_ASSERT_FALSE(strcmp(k[i].section, k[j].section) == 0 && strcmp(k[i].key, k[j].key) == 0);
    CU_ASSERT_PTR_NOT_NULL(k[i].help);
    CU_ASSERT_TRUE(k[i].help && strlen(k[i].help) > 5);
    CU_ASSERT_TRUE(k[i].type != COOP_KEY_CHOICE || k[i].choices != NULL);
  }
  /* the key table and the solver registry list the same methods */
  CU_ASSERT_STRING_EQUAL(COOP_SOLVER_CHOICES, coop_solver_names());
}

/* 1 when every '|'-separated word of words is one of choices */
static int choices_hold(const char *choices, const char *words) {
  char buf[256], all[256];
  snprintf(buf, sizeof buf, "%s", words);
  snprintf(all, sizeof all, "|%s|", choices);
  for (char *save = NULL, *w = strtok_r(buf, "|", &save); w; w = strtok_r(NULL, "|", &save)) {
    char word[64];
    snprintf(word, sizeof word, "|%s|", w);
    if (!strstr(all, word)) return 0;
  }
  return 1;
}

/* A moved name is gone from the table (a moved value from its key's choices),
 * and the key it names, where it names one, is there and takes it. */
static void test_moved_names(void) {
  size_t n = 0, nm = 0;
  const coop_key_info *k = coop_config_keys(&n);
  const coop_key_moved *m = coop_config_moved(&nm);
  CU_ASSERT_TRUE(nm >= 10);
  for (size_t i = 0; i < nm; i++) {
    const long old = key_index(k, n, m[i].section, m[i].key);
    CU_ASSERT_TRUE(m[i].values ? old >= 0 && !choices_hold(k[old].choices, m[i].values) : old < 0);
    char sec[64];
    const size_t dot = strcspn(m[i].now, ".");
    snprintf(sec, sizeof sec, "%.*s", (int)dot, m[i].now);
    if (strchr(m[i].now, ' ')) continue; /* a sentence naming two keys (run.schedule) */
    const long now = key_index(k, n, sec, m[i].now + dot + 1);
    CU_ASSERT_TRUE_FATAL(now >= 0);
    CU_ASSERT_TRUE(!m[i].values || choices_hold(k[now].choices, m[i].values));
  }
  CU_ASSERT_TRUE(key_index(k, n, "batch", "schedule") >= 0 && key_index(k, n, "tune", "csr_schedule") >= 0);
}

static void test_set_overrides(void) {
  coop_config *cfg = parsed("[grid]\nnx = 10\n[problem]\n[solver]\n");
  CU_ASSERT_EQUAL(coop_config_set(cfg, "grid.nx=20"), 0);
  CU_ASSERT_EQUAL(coop_config_set(cfg, " grid.nx = \"30\" "), 0); /* later wins */
  CU_ASSERT_EQUAL(coop_config_set(cfg, "run.backend=cuda"), 0);   /* optional section */
  CU_ASSERT_EQUAL(coop_config_set(cfg, "output.file=a#b.h5"), 0); /* no comments in --set */
  CU_ASSERT_EQUAL(coop_config_validate(cfg), 0);
  CU_ASSERT_EQUAL(coop_config_int(cfg, "grid.nx"), 30);
  CU_ASSERT_STRING_EQUAL(coop_config_origin(cfg, "grid.nx"), "--set");
  CU_ASSERT_STRING_EQUAL(coop_config_str(cfg, "run.backend"), "cuda");
  CU_ASSERT_STRING_EQUAL(coop_config_origin(cfg, "run.backend"), "--set");
  CU_ASSERT_STRING_EQUAL(coop_config_str(cfg, "output.file"), "a#b.h5");
  CU_ASSERT_STRING_EQUAL(coop_config_origin(cfg, "grid.ny"), "default");
  coop_config_destroy(cfg);
}

static void test_set_makes_section_present(void) {
  coop_config *cfg = parsed("[grid]\n[problem]\n");
  CU_ASSERT_EQUAL(coop_config_set(cfg, "solver.rtol=0.5"), 0);
  CU_ASSERT_EQUAL(coop_config_validate(cfg), 0);
  CU_ASSERT_EQUAL(coop_config_real(cfg, "solver.rtol"), 0.5);
  coop_config_destroy(cfg);
}

/* A matrix problem needs no [grid]; a grid problem does. */
static void test_grid_section_for_grids_only(void) {
  coop_config *cfg = parsed("[problem]\ntype = matrix\nmatrix = a.mtx\n[solver]\nname = cg\n");
  CU_ASSERT_EQUAL(coop_config_validate(cfg), 0);
  coop_config_destroy(cfg);
  cfg = parsed("[problem]\ntype = sine\n[solver]\n");
  CU_ASSERT_EQUAL(coop_config_validate(cfg), COOP_ERR_INPUT);
  CU_ASSERT_TRUE(strstr(coop_error_message(), "missing section [grid]") != NULL);
  coop_config_destroy(cfg);
}

static void test_set_before_parse_still_wins(void) {
  coop_config *cfg = NULL;
  CU_ASSERT_EQUAL_FATAL(coop_config_create(&cfg), 0);
  CU_ASSERT_EQUAL(coop_config_set(cfg, "grid.ny=7"), 0);
  CU_ASSERT_EQUAL(coop_config_parse(cfg, "in.txt", "[grid]\nny = 9\n[problem]\n[solver]\n"), 0);
  CU_ASSERT_EQUAL(coop_config_validate(cfg), 0);
  CU_ASSERT_EQUAL(coop_config_int(cfg, "grid.ny"), 7);
  CU_ASSERT_STRING_EQUAL(coop_config_origin(cfg, "grid.ny"), "--set");
  coop_config_destroy(cfg);
}

/* Every key of a and b has the same value. */
static void assert_same_values(const coop_config *a, const coop_config *b) {
  size_t n;
  const coop_key_info *k = coop_config_keys(&n);
  for (size_t i = 0; i < n; i++) {
    char name[128];
    snprintf(name, sizeof name, "%s.%s", k[i].section, k[i].key);
    switch (k[i].type) {
      case COOP_KEY_INT: CU_ASSERT_EQUAL(coop_config_int(a, name), coop_config_int(b, name)); break;
      case COOP_KEY_REAL:
        CU_ASSERT_EQUAL(coop_config_real(a, name), coop_config_real(b, name));
        break;
      case COOP_KEY_BOOL:
        CU_ASSERT_EQUAL(coop_config_bool(a, name), coop_config_bool(b, name));
        break;
      default: CU_ASSERT_STRING_EQUAL(coop_config_str(a, name), coop_config_str(b, name));
    }
  }
}

/* Resolve cfg, parse that text into a fresh config, check it validates and agrees. */
static void round_trip(const coop_config *cfg) {
  char *text = coop_config_resolved(cfg);
  coop_config *back = NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_EQUAL_FATAL(coop_config_create(&back), 0);
  if (coop_config_parse(back, "resolved", text) != 0) {
    fprintf(stderr, "\n  %s\n%s", coop_error_message(), text);
    CU_FAIL("the resolved text does not parse");
  }
  CU_ASSERT_EQUAL(coop_config_validate(back), 0);
  assert_same_values(cfg, back);
  coop_config_destroy(back);
  free(text);
}

static void test_resolved_round_trip(void) {
  coop_config *cfg = parsed(good_input);
  char *text;
  coop_error_clear();
  CU_ASSERT_EQUAL(coop_config_set(cfg, "solver.rtol=0.1"), 0); /* not exact in binary */
  CU_ASSERT_EQUAL(coop_config_set(cfg, "grid.lx=3.141592653589793"), 0);
  round_trip(cfg);
  text = coop_config_resolved(cfg);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_TRUE(has_all(text, "[grid]", "[output]", "# in.txt:5", "rtol = 0.10000000000000001",
                         "# --set", "file = \"out dir/result #1.h5\"", "xdmf = false", NULL));
  CU_ASSERT_TRUE(strstr(text, "[grid]") < strstr(text, "[problem]"));
  CU_ASSERT_TRUE(strstr(text, "[solver]") < strstr(text, "[run]"));
  free(text);
  coop_config_destroy(cfg);
}

static void test_resolved_2d_comments_unused(void) {
  coop_config *cfg = parsed(minimal_input);
  char *text = coop_config_resolved(cfg);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_TRUE(has_all(text, "# nz = 64", "# lz = 1 ", "only used when grid.dim = 3", "\nnx = 64",
                         "# default", "rtol = 1e-08", "# in.txt:4", NULL));
  free(text);
  round_trip(cfg);
  coop_config_destroy(cfg);
}

/* What print writes, as a string the caller frees. */
static char *printed(void (*print)(FILE *)) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  print(f);
  fclose(f);
  return buf;
}

/* --help: every key but [tune]'s, with its help; --help-all: every key. */
static void test_help(void) {
  size_t n;
  const coop_key_info *k = coop_config_keys(&n);
  char *help = printed(coop_config_print_help), *all = printed(coop_config_print_help_all);
  for (size_t i = 0; i < n; i++) {
    char name[128];
    const int tune = strcmp(k[i].section, COOP_TUNE_SECTION) == 0;
    snprintf(name, sizeof name, "  %s.%s ", k[i].section, k[i].key);
    CU_ASSERT_TRUE(has_all(all, name, k[i].help, NULL));
    CU_ASSERT_TRUE(tune ? strstr(help, name) == NULL : has_all(help, name, k[i].help, NULL));
  }
  CU_ASSERT_TRUE(has_all(help, "int [1, 1099511627776]", "real (0, inf)", "real [0, 1)",
                         "sine|laplace", "default coopsolve.h5", "[solver] *", "--help-all", NULL));
  CU_ASSERT_TRUE(has_all(all, "\n[tune]\n", "  tune.resident ", NULL));
  CU_ASSERT_PTR_NULL(strstr(all, "--help-all"));
  free(help);
  free(all);
}

/* The Markdown reference: a row per key, '|' and '*' of a cell escaped, the moved names. */
static void test_markdown(void) {
  size_t n, nm;
  const coop_key_info *k = coop_config_keys(&n);
  const coop_key_moved *m = coop_config_moved(&nm);
  char *md = printed(coop_config_print_markdown);
  for (size_t i = 0; i < n; i++) {
    char row[160];
    snprintf(row, sizeof row, "\n| `%s.%s` | ", k[i].section, k[i].key);
    CU_ASSERT_TRUE(has_all(md, row, NULL));
  }
  for (size_t i = 0; i < nm; i++) {
    char row[160];
    snprintf(row, sizeof row, "\n| `%s.%s`", m[i].section, m[i].key);
    CU_ASSERT_TRUE(has_all(md, row, NULL));
  }
  CU_ASSERT_TRUE(has_all(md, "\n## [tune]\n", "| sine\\|laplace\\|matrix |",
                         "\\|\\|r\\|\\| <= rtol \\* \\|\\|r0\\|\\|", "| `run.sync` = row\\|cluster", NULL));
  /* every table line has the cells of its header: 5 unescaped '|' */
  for (const char *line = md; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (*line != '|') continue;
    int bars = 0;
    for (const char *c = line; *c && *c != '\n'; c++) bars += *c == '|' && c[-1] != '\\';
    CU_ASSERT_TRUE(bars == 5 || (bars == 3 && strstr(md, "| old | now |") != NULL));
  }
  free(md);
}

/* ---------- bad input ---------- */

#define ALL_SECTIONS "[grid]\n[problem]\n[solver]\n" /* the required sections, no keys */

/* Inputs that fail as an input error whose message holds every phrase. */
static const struct bad_input {
  const char *text, *set1, *set2; /* as load() takes them */
  const char *phrases[4];         /* NULL-terminated */
} bad_inputs[] = {
    /* malformed lines */
    {"[grid]\nnx 64\n", NULL, NULL, {"bad.in:2:", "expected 'key = value'"}},
    {"[grid]\n\n# c\nnx # = 64\n", NULL, NULL, {"bad.in:4:", "expected 'key = value'"}},
    {"[grid]\n  = 64\n", NULL, NULL, {"bad.in:2:", "missing key before '='"}},
    {"[grid]\nnx =\n", NULL, NULL, {"bad.in:2:", "empty value for key 'nx'"}},
    {"[grid]\nny = 3\nnx =   # none\n", NULL, NULL, {"bad.in:3:", "empty value for key 'nx'"}},
    {"[output]\nfile = \"\"\n", NULL, NULL, {"bad.in:2:", "empty value for key 'file'"}},
    {"[output]\nfile = \"a.h5\n", NULL, NULL, {"bad.in:2:", "unterminated quoted value"}},
    {"[output]\nfile = \"a.h5\" b\n", NULL, NULL, {"bad.in:2:", "unexpected text 'b' after the closing quote"}},
    {"[grid]\nnx = 3\n[solver\n", NULL, NULL, {"bad.in:3:", "'[solver' is not closed"}},
    {"[grid] nx = 3\n", NULL, NULL, {"bad.in:1:", "unexpected text 'nx = 3' after ']'"}},
    {"[grid]\n[]\n", NULL, NULL, {"bad.in:2:", "empty section name"}},
    {"# c\nnx = 3\n[grid]\n", NULL, NULL, {"bad.in:2:", "key 'nx' before any [section]"}},
    /* unknown names */
    {"[grid]\n[problem]\n[solvr]\n", NULL, NULL, {"bad.in:3:", "unknown section [solvr]; did you mean [solver]?"}},
    {"[mesh]\n", NULL, NULL,
     {"bad.in:1:", "unknown section [mesh]", "known sections: [grid], [problem], [solver], [run], [output]"}},
    {"[grid]\nnxx = 3\n", NULL, NULL, {"bad.in:2:", "unknown key 'nxx' in [grid]; did you mean 'nx'?"}},
    {"[solver]\nmax_iters = 3\n", NULL, NULL, {"bad.in:2:", "did you mean 'max_iter'?"}},
    {"[grid]\nrtol = 1e-3\n", NULL, NULL, {"bad.in:2:", "unknown key 'rtol' in [grid]; it belongs in [solver]"}},
    {"[grid]\nzzzzzz = 1\n", NULL, NULL, {"bad.in:2:", "unknown key 'zzzzzz' in [grid]", "--help"}},
    /* repeats */
    {"[grid]\ndim = 2\nnx = 3\nny = 4\nnx = 5\n", NULL, NULL,
     {"bad.in:5:", "duplicate key 'nx' (first set at line 3)"}},
    {"[grid]\nnx = 3\n[solver]\n[grid]\n", NULL, NULL,
     {"bad.in:4:", "section [grid] appears twice (first at line 1)"}},
    /* bad values */
    {"[grid]\nnx = -3\n", NULL, NULL, {"bad.in:2:", "grid.nx = -3: expected an integer in [1, 1099511627776]"}},
    {"[grid]\nnx = 1099511627777\n", NULL, NULL, {"bad.in:2:", "expected an integer in [1, 1099511627776]"}},
    {"[grid]\nnx = 12abc\n", NULL, NULL, {"bad.in:2:", "grid.nx = 12abc: expected an integer"}},
    {"[grid]\nnx = 3.0\n", NULL, NULL, {"bad.in:2:", "grid.nx = 3.0: expected an integer"}},
    {"[grid]\nnx = 99999999999999999999\n", NULL, NULL, {"bad.in:2:", "expected an integer"}},
    {"[grid]\ndim = 4\n", NULL, NULL, {"bad.in:2:", "grid.dim = 4: expected an integer in [2, 3]"}},
    {"[solver]\nrtol = 1e-6x\n", NULL, NULL, {"bad.in:2:", "solver.rtol = 1e-6x: expected a real in [0, 1)"}},
    {"[solver]\nrtol = 1\n", NULL, NULL, {"bad.in:2:", "expected a real in [0, 1)"}},
    {"[solver]\natol = inf\n", NULL, NULL, {"bad.in:2:", "solver.atol = inf: expected a real in [0, inf)"}},
    {"[solver]\natol = nan\n", NULL, NULL, {"bad.in:2:", "solver.atol = nan"}},
    {"[grid]\nlx = 0\n", NULL, NULL, {"bad.in:2:", "grid.lx = 0: expected a real in (0, inf)"}},
    {"[grid]\nlx = 1e999\n", NULL, NULL, {"bad.in:2:", "grid.lx = 1e999"}},
    {"[problem]\ntype = poisson\n", NULL, NULL,
     {"bad.in:2:", "problem.type = poisson: expected one of: sine, laplace, matrix"}},
    {"[solver]\nname = gmres\n", NULL, NULL, {"bad.in:2:", "expected one of: jacobi, cg, pipecg, bicgstab"}},
    {"[output]\nxdmf = maybe\n", NULL, NULL, {"bad.in:2:", "output.xdmf = maybe: expected true or false"}},
    /* validation */
    {"[grid]\n[problem]\n[run]\n", NULL, NULL, {"bad.in: missing section [solver]"}},
    {"[solver]\n[problem]\n", NULL, NULL, {"bad.in: missing section [grid]"}},
    {"[grid]\n[solver]\n", "solver.rtol=0.5", NULL, {"bad.in: missing section [problem]"}},
    {"[grid]\nnx = 8\nnz = 8\n[problem]\n[solver]\n", NULL, NULL,
     {"bad.in:3:", "grid.nz is only used when grid.dim = 3", "grid.dim = 2, from default"}},
    {"[grid]\ndim=2\n[problem]\n[solver]\n", "grid.lz=2", NULL,
     {"--set grid.lz=2:", "grid.lz is only used when grid.dim = 3", "from bad.in:2"}},
    {"[grid]\ndim=3\nnz = 8\n[problem]\n[solver]\n", "grid.dim=2", NULL,
     {"bad.in:3:", "grid.nz is only used", "from --set"}},
    /* --set */
    {ALL_SECTIONS, "solver.rtol", NULL, {"--set solver.rtol: expected section.key=value"}},
    {ALL_SECTIONS, "rtol=1e-3", NULL, {"--set rtol=1e-3: expected section.key=value"}},
    {ALL_SECTIONS, ".rtol=1e-3", NULL, {"--set .rtol=1e-3: expected section.key=value"}},
    {ALL_SECTIONS, "solver.rtol=", NULL, {"--set solver.rtol=: empty value"}},
    {ALL_SECTIONS, "solvr.rtol=1e-3", NULL,
     {"--set solvr.rtol=1e-3: unknown section [solvr]; did you mean [solver]?"}},
    {ALL_SECTIONS, "grid.nxx=3", NULL, {"--set grid.nxx=3: unknown key 'nxx' in [grid]; did you mean 'nx'?"}},
    {ALL_SECTIONS, "solver.rtol=abc", NULL, {"--set solver.rtol=abc: expected a real in [0, 1)"}},
    {ALL_SECTIONS, "grid.nx=8", "run.sync=warp", {"--set run.sync=warp: expected one of: auto, grid, launch"}},
    /* names of earlier versions: the file's line or the --set, and the new key */
    {"[grid]\n[problem]\n[solver]\n[run]\nresident = false\n", NULL, NULL,
     {"bad.in:5: run.resident is now tune.resident"}},
    {ALL_SECTIONS, "run.fused_halo=auto", NULL, {"--set run.fused_halo=auto: run.fused_halo is now tune.fused_halo"}},
    {ALL_SECTIONS, "run.resident_depth = 2", NULL, {"run.resident_depth is now tune.resident_depth"}},
    {"[run]\nschedule = clc\n", NULL, NULL, {"bad.in:2: run.schedule is now batch.schedule", "tune.csr_schedule"}},
    /* a value of a batch mode: the key stays, the value moved */
    {"[run]\nsync = block\n", NULL, NULL, {"bad.in:2: run.sync = block is now batch.sync = block"}},
    {ALL_SECTIONS, "run.sync=\"row\"", NULL, {"--set run.sync=\"row\": run.sync = row is now batch.sync = row"}},
    /* an old name in the wrong section is still told where it went */
    {"[run]\ncsr_schedule = clc\n", NULL, NULL,
     {"bad.in:2: unknown key 'csr_schedule' in [run]; it belongs in [tune]"}},
};

static void test_bad_inputs(void) {
  for (size_t i = 0; i < sizeof bad_inputs / sizeof *bad_inputs; i++) {
    const struct bad_input *b = &bad_inputs[i];
    coop_error_clear();
    const int err = load(b->text, b->set1, b->set2);
    int ok = err == COOP_ERR_INPUT;
    for (const char *const *p = b->phrases; *p; p++) ok &= has_phrase(coop_error_message(), *p);
    if (!ok)
      fprintf(stderr, "\n  bad_inputs[%zu] (--set %s, %s): status %d, message \"%s\"\n", i,
              b->set1 ? b->set1 : "none", b->set2 ? b->set2 : "none", err, coop_error_message());
    CU_ASSERT_TRUE(ok);
  }
}

/* Near misses of the bad inputs that load: a section or grid.dim made by --set, the new names. */
static void test_near_misses_load(void) {
  CU_ASSERT_EQUAL(load("[grid]\n[solver]\n", "problem.mode=2", NULL), 0);
  CU_ASSERT_EQUAL(load("[grid]\nnz = 8\n[problem]\n[solver]\n", "grid.dim=3", NULL), 0);
  CU_ASSERT_EQUAL(load(ALL_SECTIONS, "run.sync=graph", "tune.resident=false"), 0);
  CU_ASSERT_EQUAL(load("[batch]\n[solver]\n", "batch.sync=launch_each", "batch.schedule=static"), 0);
}


static void test_parse_twice_is_fault(void) {
  coop_config *cfg = parsed(minimal_input);
  coop_error_clear();
  CU_ASSERT_EQUAL(coop_config_parse(cfg, "again", minimal_input), COOP_ERR_RUNTIME);
  CU_ASSERT_PTR_NOT_NULL(strstr(coop_error_message(), "twice"));
  coop_config_destroy(cfg);
}

/* ---------- getters: program faults abort ---------- */

/* Runs getter in a child with stderr closed; 1 when the child died of SIGABRT. */
static int aborts(void (*getter)(const coop_config *)) {
  coop_config *cfg = NULL;
  pid_t pid;
  int status = 0;
  if (coop_config_create(&cfg)) return 0;
  fflush(NULL);
  pid = fork();
  if (pid == 0) {
    const struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    if (!freopen("/dev/null", "w", stderr)) _exit(3);
    getter(cfg);
    _exit(0);
  }
  coop_config_destroy(cfg);
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 0;
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void get_unknown(const coop_config *cfg) { (void)coop_config_int(cfg, "grid.nxx"); }
static void get_wrong_type(const coop_config *cfg) { (void)coop_config_real(cfg, "grid.nx"); }
static void get_no_section(const coop_config *cfg) { (void)coop_config_origin(cfg, "nx"); }
static void get_str_of_int(const coop_config *cfg) { (void)coop_config_str(cfg, "grid.nx"); }
static void get_ok(const coop_config *cfg) { (void)coop_config_int(cfg, "grid.nx"); }

static void test_getter_faults_abort(void) {
  CU_ASSERT_TRUE(aborts(get_unknown));
  CU_ASSERT_TRUE(aborts(get_wrong_type));
  CU_ASSERT_TRUE(aborts(get_no_section));
  CU_ASSERT_TRUE(aborts(get_str_of_int));
  CU_ASSERT_FALSE(aborts(get_ok));
}

COOP_UNIT_MAIN("config",
               {"good input", test_good_input},
               {"bool spellings", test_bool_spellings},
               {"defaults and origins", test_defaults_and_origins},
               {"key table", test_key_table},
               {"--set overrides, later wins", test_set_overrides},
               {"[grid] is required for grid problems only", test_grid_section_for_grids_only},
               {"--set makes a section present", test_set_makes_section_present},
               {"--set before parse still wins", test_set_before_parse_still_wins},
               {"resolved round trip", test_resolved_round_trip},
               {"resolved 2D comments unused keys", test_resolved_2d_comments_unused},
               {"help", test_help},
               {"markdown key reference", test_markdown},
               {"moved names", test_moved_names},
               {"bad input, case by case", test_bad_inputs},
               {"near misses of bad input load", test_near_misses_load},
               {"parse twice is a fault", test_parse_twice_is_fault},
               {"getter faults abort", test_getter_faults_abort})
