#define _POSIX_C_SOURCE 200809L

#include "io/config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"

enum { SRC_DEFAULT, SRC_FILE, SRC_SET };

typedef struct {
  int64_t i;
  double r;
  int b;
} coop_value;

typedef struct {
  char *text;     /* the value as given, quotes stripped (owned) */
  coop_value val; /* text parsed by the key's type */
  int src;        /* SRC_* */
  int file_line;  /* line of the file's assignment; 0 = none (duplicates) */
  char *origin;   /* "FILE:LINE" while src == SRC_FILE */
  char *set_text; /* the last --set assignment, for messages */
} coop_slot;

struct coop_config {
  const coop_key_info *keys;
  size_t nkeys;
  coop_slot *slot;  /* one per key, table order */
  const char **sec; /* distinct sections, in table order */
  int *sec_line;    /* header line; 0 = absent, -1 = present through --set */
  size_t nsec;
  char *name; /* input file name; NULL until parsed */
  int parsed;
};

static const char *const required_sections[] = {"grid", "problem", "solver"};

/* Keys that only mean something when an INT key has one value. */
typedef struct {
  const char *key, *on;
  int64_t value;
} coop_rule;

static const coop_rule rules[] = {{"grid.nz", "grid.dim", 3}, {"grid.lz", "grid.dim", 3}};

/* Room for ":LINE" after a name: "where" strings are sized to their text, so a
 * long path never cuts the line number from a message. */
enum { LINE_ROOM = 24 };

/* ---------- text helpers ---------- */

static char *trim(char *s) {
  char *end;
  while (isspace((unsigned char)*s)) s++;
  end = s + strlen(s);
  while (end > s && isspace((unsigned char)end[-1])) end--;
  *end = '\0';
  return s;
}

static char *dup_span(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

/* Levenshtein distance; words longer than 64 characters count as far from all. */
static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b), row[65];
  if (la > 64 || lb > 64) return (size_t)-1;
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      const size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

/* Close enough to suggest: a typo or two, not a different word. */
static int is_close(const char *word, const char *cand, size_t d) {
  const size_t lw = strlen(word), lc = strlen(cand);
  if (d == (size_t)-1) return 0;
  return (d <= 2 && d < (lw > lc ? lw : lc)) || d * 3 <= lw;
}

/* ---------- table lookups ---------- */

static long section_index(const coop_config *cfg, const char *name) {
  for (size_t s = 0; s < cfg->nsec; s++)
    if (strcmp(cfg->sec[s], name) == 0) return (long)s;
  return -1;
}

static long find_key(const coop_config *cfg, const char *sec, const char *key) {
  for (size_t i = 0; i < cfg->nkeys; i++)
    if (strcmp(cfg->keys[i].section, sec) == 0 && strcmp(cfg->keys[i].key, key) == 0)
      return (long)i;
  return -1;
}

/* Index of the key with full name "section.key", or -1. */
static long find_name(const coop_config *cfg, const char *name) {
  for (size_t i = 0; i < cfg->nkeys; i++) {
    const size_t ls = strlen(cfg->keys[i].section);
    if (strncmp(name, cfg->keys[i].section, ls) == 0 && name[ls] == '.' &&
        strcmp(name + ls + 1, cfg->keys[i].key) == 0)
      return (long)i;
  }
  return -1;
}

static int unknown_section(const coop_config *cfg, const char *where, const char *name) {
  size_t best = (size_t)-1, pick = 0;
  char list[256] = "";
  for (size_t s = 0; s < cfg->nsec; s++) {
    const size_t d = edit_distance(name, cfg->sec[s]);
    if (d < best) best = d, pick = s;
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s[%s]", s ? ", " : "", cfg->sec[s]);
  }
  if (cfg->nsec && is_close(name, cfg->sec[pick], best))
    return coop_error_input("%s: unknown section [%s]; did you mean [%s]?", where, name,
                            cfg->sec[pick]);
  return coop_error_input("%s: unknown section [%s]; known sections: %s", where, name, list);
}

static int unknown_key(const coop_config *cfg, const char *where, const char *sec,
                       const char *key) {
  size_t best = (size_t)-1;
  const char *pick = NULL;
  for (size_t i = 0; i < cfg->nkeys; i++) {
    if (strcmp(cfg->keys[i].key, key) == 0)
      return coop_error_input("%s: unknown key '%s' in [%s]; it belongs in [%s]", where, key, sec,
                              cfg->keys[i].section);
    if (strcmp(cfg->keys[i].section, sec) == 0) {
      const size_t d = edit_distance(key, cfg->keys[i].key);
      if (d < best) best = d, pick = cfg->keys[i].key;
    }
  }
  if (pick && is_close(key, pick, best))
    return coop_error_input("%s: unknown key '%s' in [%s]; did you mean '%s'?", where, key, sec,
                            pick);
  return coop_error_input("%s: unknown key '%s' in [%s]; `coopsolve --help` lists the keys", where,
                          key, sec);
}

/* ---------- values ---------- */

static void format_bound(const coop_key_info *k, double x, char *buf, size_t n) {
  if (k->type == COOP_KEY_INT)
    snprintf(buf, n, "%lld", (long long)x);
  else
    snprintf(buf, n, "%g", x);
}

/* "[1, 64]", "(0, inf)"... */
static void format_range(const coop_key_info *k, char *buf, size_t n) {
  char lo[32], hi[32];
  format_bound(k, k->min, lo, sizeof lo);
  format_bound(k, k->max, hi, sizeof hi);
  snprintf(buf, n, "%c%s, %s%c", k->min_open ? '(' : '[', lo, hi, k->max_open ? ')' : ']');
}

/* What a value of key k must look like, completing "expected ...". */
static void describe(const coop_key_info *k, char *buf, size_t n) {
  char range[80];
  format_range(k, range, sizeof range);
  switch (k->type) {
    case COOP_KEY_INT: snprintf(buf, n, "an integer in %s", range); break;
    case COOP_KEY_REAL: snprintf(buf, n, "a real in %s", range); break;
    case COOP_KEY_BOOL: snprintf(buf, n, "true or false (or yes/no, on/off, 1/0)"); break;
    case COOP_KEY_STRING: snprintf(buf, n, "non-empty text without '\"'"); break;
    case COOP_KEY_CHOICE: {
      size_t used = (size_t)snprintf(buf, n, "one of: ");
      for (const char *c = k->choices; *c && used + 3 < n; c++)
        used += (size_t)snprintf(buf + used, n - used, *c == '|' ? ", " : "%c", *c);
      break;
    }
  }
}

static int in_range(const coop_key_info *k, double x) {
  if (x < k->min || (k->min_open && x == k->min)) return 0;
  if (x > k->max || (k->max_open && x == k->max)) return 0;
  return 1;
}

static int parse_bool(const char *t, int *b) {
  static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off",
                                                                              "0"};
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(t, yes[i]) == 0) return *b = 1, 0;
    if (strcasecmp(t, no[i]) == 0) return *b = 0, 0;
  }
  return -1;
}

static int is_choice(const char *choices, const char *t) {
  const size_t lt = strlen(t);
  for (const char *c = choices; *c;) {
    const size_t len = strcspn(c, "|");
    if (len == lt && strncmp(c, t, len) == 0) return 1;
    c += len + (c[len] == '|');
  }
  return 0;
}

/* A name of an earlier version (coop_config_moved): refused, naming the new
 * key. 0 when section.key = val is current. */
static int check_moved(const char *where, const char *sec, const char *key, const char *val) {
  size_t n;
  const coop_key_moved *m = coop_config_moved(&n);
  for (size_t i = 0; i < n; i++) {
    if (strcmp(m[i].section, sec) != 0 || strcmp(m[i].key, key) != 0) continue;
    if (!m[i].values) return coop_error_input("%s: %s.%s is now %s", where, sec, key, m[i].now);
    if (is_choice(m[i].values, val))
      return coop_error_input("%s: %s.%s = %s is now %s = %s", where, sec, key, val, m[i].now, val);
  }
  return 0;
}

/* Parse text as a value of key k; 0 on success, -1 when it is not one. */
static int check_value(const coop_key_info *k, const char *t, coop_value *v) {
  char *end;
  memset(v, 0, sizeof *v);
  switch (k->type) {
    case COOP_KEY_INT: {
      errno = 0;
      const long long x = strtoll(t, &end, 10);
      if (end == t || *end || errno == ERANGE) return -1;
      v->i = x;
      return in_range(k, (double)x) ? 0 : -1; /* bounds < 2^53: exact */
    }
    case COOP_KEY_REAL:
      v->r = strtod(t, &end);
      return end != t && !*end && isfinite(v->r) && in_range(k, v->r) ? 0 : -1;
    case COOP_KEY_BOOL: return parse_bool(t, &v->b);
    case COOP_KEY_CHOICE: return is_choice(k->choices, t) ? 0 : -1;
    case COOP_KEY_STRING:
      for (const char *c = t; *c; c++)
        if (*c == '"' || iscntrl((unsigned char)*c)) return -1;
      return *t ? 0 : -1;
  }
  return -1;
}

/* with_value: repeat "section.key = value" (the file); --set already shows it. */
static int bad_value(const char *where, const coop_key_info *k, const char *t, int with_value) {
  char want[256];
  describe(k, want, sizeof want);
  if (with_value)
    return coop_error_input("%s: %s.%s = %s: expected %s", where, k->section, k->key, t, want);
  return coop_error_input("%s: expected %s", where, want);
}

/* Make text (already checked into v) the value of slot s. */
static int assign(coop_slot *s, const char *text, const coop_value *v) {
  char *copy = strdup(text);
  if (!copy) return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory");
  free(s->text);
  s->text = copy;
  s->val = *v;
  return 0;
}

/* ---------- create / destroy ---------- */

static void collect_sections(coop_config *cfg) {
  for (size_t i = 0; i < cfg->nkeys; i++)
    if (section_index(cfg, cfg->keys[i].section) < 0) cfg->sec[cfg->nsec++] = cfg->keys[i].section;
}

static int set_defaults(coop_config *cfg) {
  for (size_t i = 0; i < cfg->nkeys; i++) {
    const coop_key_info *k = &cfg->keys[i];
    coop_value v;
    if (check_value(k, k->def, &v)) {
      char want[256];
      describe(k, want, sizeof want);
      return COOP_ERROR(COOP_ERR_RUNTIME, "key table: default %s.%s = %s is not %s", k->section,
                        k->key, k->def, want);
    }
    COOP_CHECK(assign(&cfg->slot[i], k->def, &v));
  }
  return 0;
}

int coop_config_create(coop_config **out) {
  coop_config *cfg = calloc(1, sizeof *cfg);
  int err;
  *out = NULL;
  if (!cfg) return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory");
  cfg->keys = coop_config_keys(&cfg->nkeys);
  cfg->slot = calloc(cfg->nkeys, sizeof *cfg->slot);
  cfg->sec = calloc(cfg->nkeys, sizeof *cfg->sec);
  cfg->sec_line = calloc(cfg->nkeys, sizeof *cfg->sec_line);
  if (!cfg->slot || !cfg->sec || !cfg->sec_line) {
    coop_config_destroy(cfg);
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory");
  }
  collect_sections(cfg);
  err = set_defaults(cfg);
  if (err) {
    coop_config_destroy(cfg);
    return coop_error_trace(err, __FILE__, __LINE__);
  }
  *out = cfg;
  return 0;
}

void coop_config_destroy(coop_config *cfg) {
  if (!cfg) return;
  for (size_t i = 0; cfg->slot && i < cfg->nkeys; i++) {
    free(cfg->slot[i].text);
    free(cfg->slot[i].origin);
    free(cfg->slot[i].set_text);
  }
  free(cfg->slot);
  free(cfg->sec);
  free(cfg->sec_line);
  free(cfg->name);
  free(cfg);
}

/* ---------- parsing the input file ---------- */

typedef struct {
  coop_config *cfg;
  int line;
  long sec;    /* current section, -1 before the first header */
  char *where; /* "NAME:LINE", where_len bytes */
  size_t where_len;
} parse_state;

static int parse_header(parse_state *st, char *s) {
  coop_config *cfg = st->cfg;
  char *close = strchr(s, ']'), *rest, *name;
  long i;
  if (!close)
    return coop_error_input("%s: section header '%s' is not closed: expected ']'", st->where, s);
  *close = '\0';
  rest = trim(close + 1);
  if (*rest && *rest != '#')
    return coop_error_input("%s: unexpected text '%s' after ']'", st->where, rest);
  name = trim(s + 1);
  if (!*name) return coop_error_input("%s: empty section name '[]'", st->where);
  i = section_index(cfg, name);
  if (i < 0) return unknown_section(cfg, st->where, name);
  if (cfg->sec_line[i] > 0)
    return coop_error_input("%s: section [%s] appears twice (first at line %d)", st->where, name,
                            cfg->sec_line[i]);
  cfg->sec_line[i] = st->line;
  st->sec = i;
  return 0;
}

/* The value after '=': a "quoted string", or text up to a '#' comment, trimmed. */
static int split_value(const parse_state *st, const char *key, char *raw, char **val) {
  raw = trim(raw);
  if (*raw == '"') {
    char *close = strchr(raw + 1, '"'), *rest;
    if (!close)
      return coop_error_input("%s: unterminated quoted value for key '%s'", st->where, key);
    *close = '\0';
    rest = trim(close + 1);
    if (*rest && *rest != '#')
      return coop_error_input("%s: unexpected text '%s' after the closing quote", st->where, rest);
    *val = raw + 1;
  } else {
    char *hash = strchr(raw, '#');
    if (hash) *hash = '\0';
    *val = trim(raw);
  }
  if (!**val) return coop_error_input("%s: empty value for key '%s'", st->where, key);
  return 0;
}

static int file_assign(parse_state *st, long i, const char *val) {
  coop_slot *s = &st->cfg->slot[i];
  const coop_key_info *k = &st->cfg->keys[i];
  coop_value v;
  if (s->file_line)
    return coop_error_input("%s: duplicate key '%s' (first set at line %d)", st->where, k->key,
                            s->file_line);
  if (check_value(k, val, &v)) return bad_value(st->where, k, val, 1);
  s->file_line = st->line;
  if (s->src == SRC_SET) return 0; /* a --set given before the file still wins */
  COOP_CHECK(assign(s, val, &v));
  free(s->origin);
  s->origin = strdup(st->where);
  if (!s->origin) return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory");
  s->src = SRC_FILE;
  return 0;
}

static int parse_assignment(parse_state *st, char *s) {
  char *eq = strchr(s, '='), *hash = strchr(s, '#'), *key, *val = NULL;
  const char *sec;
  long i;
  if (!eq || (hash && hash < eq))
    return coop_error_input("%s: expected 'key = value' or '[section]', got '%s'", st->where, s);
  *eq = '\0';
  key = trim(s);
  if (!*key) return coop_error_input("%s: missing key before '='", st->where);
  if (st->sec < 0) return coop_error_input("%s: key '%s' before any [section]", st->where, key);
  COOP_CHECK(split_value(st, key, eq + 1, &val));
  sec = st->cfg->sec[st->sec];
  COOP_CHECK(check_moved(st->where, sec, key, val));
  i = find_key(st->cfg, sec, key);
  if (i < 0) return unknown_key(st->cfg, st->where, sec, key);
  return file_assign(st, i, val);
}

static int parse_line(parse_state *st, char *line) {
  char *s = trim(line);
  snprintf(st->where, st->where_len, "%s:%d", st->cfg->name, st->line);
  if (*s == '\0' || *s == '#') return 0;
  if (*s == '[') return parse_header(st, s);
  return parse_assignment(st, s);
}

static int parse_text(parse_state *st, const char *text) {
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    const size_t len = nl ? (size_t)(nl - p) : strlen(p);
    char *line = dup_span(p, len);
    int err;
    if (!line) return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory");
    st->line++;
    err = parse_line(st, line);
    free(line);
    if (err) return coop_error_trace(err, __FILE__, __LINE__);
    p += len + (nl != NULL);
  }
  return 0;
}

int coop_config_parse(coop_config *cfg, const char *name, const char *text) {
  parse_state st = {cfg, 0, -1, NULL, strlen(name) + LINE_ROOM};
  if (cfg->parsed)
    return COOP_ERROR(COOP_ERR_RUNTIME, "coop_config_parse called twice on one config");
  cfg->parsed = 1;
  cfg->name = strdup(name);
  st.where = malloc(st.where_len);
  if (!cfg->name || !st.where) {
    free(st.where);
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory");
  }
  const int err = parse_text(&st, text);
  free(st.where);
  return err;
}

/* ---------- --set ---------- */

static char *unquote(char *s) {
  const size_t n = strlen(s);
  if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
    s[n - 1] = '\0';
    return s + 1;
  }
  return s;
}

static int set_split(coop_config *cfg, const char *where, const char *assignment, char *s) {
  char *eq = strchr(s, '='), *dot, *sec, *key, *val;
  long si, i;
  coop_value v;
  if (!eq) return coop_error_input("%s: expected section.key=value", where);
  *eq = '\0';
  val = unquote(trim(eq + 1));
  dot = strchr(s, '.');
  if (!dot) return coop_error_input("%s: expected section.key=value", where);
  *dot = '\0';
  sec = trim(s);
  key = trim(dot + 1);
  if (!*sec || !*key) return coop_error_input("%s: expected section.key=value", where);
  if (!*val) return coop_error_input("%s: empty value", where);
  si = section_index(cfg, sec);
  if (si < 0) return unknown_section(cfg, where, sec);
  COOP_CHECK(check_moved(where, sec, key, val));
  i = find_key(cfg, sec, key);
  if (i < 0) return unknown_key(cfg, where, sec, key);
  if (check_value(&cfg->keys[i], val, &v)) return bad_value(where, &cfg->keys[i], val, 0);
  COOP_CHECK(assign(&cfg->slot[i], val, &v));
  free(cfg->slot[i].set_text);
  cfg->slot[i].set_text = strdup(assignment);
  if (!cfg->slot[i].set_text) return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory");
  cfg->slot[i].src = SRC_SET;
  if (cfg->sec_line[si] == 0) cfg->sec_line[si] = -1;
  return 0;
}

int coop_config_set(coop_config *cfg, const char *assignment) {
  const size_t wlen = strlen(assignment) + sizeof "--set ";
  char *copy = strdup(assignment), *where = malloc(wlen);
  int err;
  if (!copy || !where) {
    free(copy);
    free(where);
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory");
  }
  snprintf(where, wlen, "--set %s", assignment);
  err = set_split(cfg, where, assignment, copy);
  free(copy);
  free(where);
  return err ? coop_error_trace(err, __FILE__, __LINE__) : 0;
}

/* ---------- validation ---------- */

static long must_find(const coop_config *cfg, const char *name, const char *fn) {
  const long i = find_name(cfg, name);
  if (i < 0) {
    fprintf(stderr, "coopsolve: %s: unknown configuration key '%s'\n", fn, name);
    abort();
  }
  return i;
}

/* 1 when rule r says its key is not used with the current values. */
static int rule_unused(const coop_config *cfg, const coop_rule *r) {
  return cfg->slot[must_find(cfg, r->on, "rule")].val.i != r->value;
}

static int check_rule(const coop_config *cfg, const coop_rule *r) {
  const coop_slot *s = &cfg->slot[must_find(cfg, r->key, "rule")];
  const long on = must_find(cfg, r->on, "rule");
  if (s->src == SRC_DEFAULT || !rule_unused(cfg, r)) return 0;
  return coop_error_input(
      "%s%s: %s is only used when %s = %lld (%s = %lld, from %s)",
      s->src == SRC_SET ? "--set " : "", s->src == SRC_SET ? s->set_text : s->origin, r->key, r->on,
      (long long)r->value, r->on, (long long)cfg->slot[on].val.i, coop_config_origin(cfg, r->on));
}

int coop_config_has_section(const coop_config *cfg, const char *section) {
  const long s = section_index(cfg, section);
  return s >= 0 && cfg->sec_line[s] != 0;
}

/* A [batch] input brings its own problems: a [grid] or [problem] section (or a
 * --set of one of their keys) would be silently ignored, so it is refused. */
static int batch_sections(const coop_config *cfg, const char *name) {
  static const char *const other[] = {"grid", "problem"};
  for (size_t o = 0; o < sizeof other / sizeof *other; o++) {
    const long s = section_index(cfg, other[o]);
    if (cfg->sec_line[s] > 0)
      return coop_error_input("%s:%d: [%s] does not apply to a [batch] input (its problems come "
                              "from batch.sizes or batch.matrices)", name, cfg->sec_line[s], other[o]);
    for (size_t i = 0; cfg->sec_line[s] < 0 && i < cfg->nkeys; i++)
      if (cfg->slot[i].src == SRC_SET && strcmp(cfg->keys[i].section, other[o]) == 0)
        return coop_error_input("--set %s: [%s] does not apply to a [batch] input (its problems "
                                "come from batch.sizes or batch.matrices)", cfg->slot[i].set_text,
                                other[o]);
  }
  if (!coop_config_has_section(cfg, "solver")) return coop_error_input("%s: missing section [solver]", name);
  return 0;
}

int coop_config_validate(const coop_config *cfg) {
  const char *name = cfg->name ? cfg->name : "input";
  if (coop_config_has_section(cfg, "batch")) return batch_sections(cfg, name);
  /* a matrix problem has no grid */
  const int matrix = strcmp(coop_config_str(cfg, "problem.type"), "matrix") == 0;
  for (size_t r = 0; r < sizeof required_sections / sizeof *required_sections; r++) {
    if (matrix && strcmp(required_sections[r], "grid") == 0) continue;
    const long s = section_index(cfg, required_sections[r]);
    if (s < 0 || cfg->sec_line[s] == 0)
      return coop_error_input("%s: missing section [%s]", name, required_sections[r]);
  }
  for (size_t r = 0; r < sizeof rules / sizeof *rules; r++) COOP_CHECK(check_rule(cfg, &rules[r]));
  return 0;
}

/* ---------- getters ---------- */

static const char *type_name(coop_key_type t) {
  static const char *const names[] = {"int", "real", "bool", "choice", "string"};
  return names[t];
}

static const coop_slot *get(const coop_config *cfg, const char *name, coop_key_type t,
                            const char *fn) {
  const long i = must_find(cfg, name, fn);
  const coop_key_type kt = cfg->keys[i].type;
  const int ok = kt == t || (t == COOP_KEY_STRING && kt == COOP_KEY_CHOICE);
  if (!ok) {
    fprintf(stderr, "coopsolve: %s: key '%s' is a %s, not a %s\n", fn, name, type_name(kt),
            type_name(t));
    abort();
  }
  return &cfg->slot[i];
}

int64_t coop_config_int(const coop_config *cfg, const char *name) {
  return get(cfg, name, COOP_KEY_INT, __func__)->val.i;
}

double coop_config_real(const coop_config *cfg, const char *name) {
  return get(cfg, name, COOP_KEY_REAL, __func__)->val.r;
}

int coop_config_bool(const coop_config *cfg, const char *name) {
  return get(cfg, name, COOP_KEY_BOOL, __func__)->val.b;
}

const char *coop_config_str(const coop_config *cfg, const char *name) {
  return get(cfg, name, COOP_KEY_STRING, __func__)->text;
}

const char *coop_config_text(const coop_config *cfg, const char *name) {
  return cfg->slot[must_find(cfg, name, __func__)].text;
}

int coop_config_is_default(const coop_config *cfg, const char *name) {
  const long i = must_find(cfg, name, __func__);
  const coop_key_info *k = &cfg->keys[i];
  const coop_value *v = &cfg->slot[i].val;
  coop_value d;
  if (check_value(k, k->def, &d)) return 0;
  switch (k->type) {
    case COOP_KEY_INT: return v->i == d.i;
    case COOP_KEY_REAL: return v->r == d.r;
    case COOP_KEY_BOOL: return v->b == d.b;
    default: return strcmp(cfg->slot[i].text, k->def) == 0;
  }
}

const char *coop_config_origin(const coop_config *cfg, const char *name) {
  const coop_slot *s = &cfg->slot[must_find(cfg, name, __func__)];
  return s->src == SRC_FILE ? s->origin : s->src == SRC_SET ? "--set" : "default";
}

/* ---------- resolved text and help ---------- */

static const coop_rule *unused_by(const coop_config *cfg, size_t i) {
  for (size_t r = 0; r < sizeof rules / sizeof *rules; r++)
    if (must_find(cfg, rules[r].key, "rule") == (long)i && rule_unused(cfg, &rules[r]))
      return &rules[r];
  return NULL;
}

/* A section this kind of input does not take (a [batch] input has no [grid]
 * or [problem], the others no [batch]): commented out in the resolved text,
 * which must read back as the same kind of input. */
static int other_kind(const coop_config *cfg, const char *sec) {
  if (coop_config_has_section(cfg, "batch")) return !strcmp(sec, "grid") || !strcmp(sec, "problem");
  return !strcmp(sec, "batch");
}

/* One line "key = value   # origin"; a key not used is written as a comment. */
static void write_key(const coop_config *cfg, FILE *f, size_t i) {
  const coop_key_info *k = &cfg->keys[i];
  const coop_slot *s = &cfg->slot[i];
  const coop_rule *r = unused_by(cfg, i);
  char name[128];
  int w;
  snprintf(name, sizeof name, "%s.%s", k->section, k->key);
  const int off = other_kind(cfg, k->section);
  w = fprintf(f, "%s%s = ", r || off ? "# " : "", k->key);
  switch (k->type) {
    case COOP_KEY_INT: w += fprintf(f, "%lld", (long long)s->val.i); break;
    case COOP_KEY_REAL: w += fprintf(f, "%.17g", s->val.r); break; /* round trips exactly */
    case COOP_KEY_BOOL: w += fprintf(f, "%s", s->val.b ? "true" : "false"); break;
    case COOP_KEY_CHOICE: w += fprintf(f, "%s", s->text); break;
    case COOP_KEY_STRING: w += fprintf(f, "\"%s\"", s->text); break;
  }
  fprintf(f, "%*s# %s", w < 28 ? 28 - w : 1, "", coop_config_origin(cfg, name));
  if (r) fprintf(f, "; only used when %s = %lld", r->on, (long long)r->value);
  if (off) fprintf(f, "; %s [batch] inputs", strcmp(k->section, "batch") ? "not used by" : "only used by");
  fputc('\n', f);
}

char *coop_config_resolved(const coop_config *cfg) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  int bad;
  if (!f) return NULL;
  fprintf(f, "# coopsolve resolved configuration: key = value   # origin\n");
  for (size_t s = 0; s < cfg->nsec; s++) {
    if (other_kind(cfg, cfg->sec[s]))
      fprintf(f, "\n# [%s]   (not used by this kind of input)\n", cfg->sec[s]);
    else
      fprintf(f, "\n[%s]\n", cfg->sec[s]);
    for (size_t i = 0; i < cfg->nkeys; i++)
      if (strcmp(cfg->keys[i].section, cfg->sec[s]) == 0) write_key(cfg, f, i);
  }
  bad = ferror(f);
  if (fclose(f) || bad) {
    free(buf);
    return NULL;
  }
  return buf;
}

static int is_required(const char *sec) {
  for (size_t r = 0; r < sizeof required_sections / sizeof *required_sections; r++)
    if (strcmp(required_sections[r], sec) == 0) return 1;
  return 0;
}

static int is_tune(const char *sec) { return strcmp(sec, COOP_TUNE_SECTION) == 0; }

/* "int [1, 64]", "real (0, inf)", "bool", the choices "a|b|c". */
static void format_type(const coop_key_info *k, char *buf, size_t n) {
  if (k->type == COOP_KEY_INT || k->type == COOP_KEY_REAL) {
    char range[80];
    format_range(k, range, sizeof range);
    snprintf(buf, n, "%s %s", type_name(k->type), range);
  } else {
    snprintf(buf, n, "%s", k->type == COOP_KEY_CHOICE ? k->choices : type_name(k->type));
  }
}

static void print_keys(FILE *out, int with_tune) {
  size_t n;
  const coop_key_info *keys = coop_config_keys(&n);
  const char *sec = "";
  fprintf(out, "Input keys (section.key, type, default); sections marked * are required.\n");
  for (size_t i = 0; i < n; i++) {
    const coop_key_info *k = &keys[i];
    char name[128], type[160];
    if (!with_tune && is_tune(k->section)) continue;
    if (strcmp(k->section, sec) != 0) {
      sec = k->section;
      fprintf(out, "\n[%s]%s\n", sec, is_required(sec) ? " *" : "");
    }
    snprintf(name, sizeof name, "%s.%s", k->section, k->key);
    format_type(k, type, sizeof type);
    fprintf(out, "  %-26s %-26s default %s\n      %s\n", name, type, k->def, k->help);
  }
  if (!with_tune)
    fprintf(out, "\n[%s]: keys that pick kernel internals (which kernel or launch shape runs); "
            "coopsolve --help-all lists them\n", COOP_TUNE_SECTION);
}

void coop_config_print_help(FILE *out) { print_keys(out, 0); }

void coop_config_print_help_all(FILE *out) { print_keys(out, 1); }

/* text with '|' and '*' escaped, as a Markdown table cell shows it as written */
static void md_cell(FILE *out, const char *text) {
  for (const char *c = text; *c; c++) {
    if (*c == '|' || *c == '*') fputc('\\', out);
    fputc(*c, out);
  }
}

static void md_moved(FILE *out) {
  size_t n;
  const coop_key_moved *m = coop_config_moved(&n);
  fprintf(out, "\n## Moved keys\n\nNames of earlier versions: an input or `--set` that gives one stops with "
               "status 2 and names the new key.\n\n| old | now |\n| --- | --- |\n");
  for (size_t i = 0; i < n; i++) {
    fprintf(out, "| `%s.%s`", m[i].section, m[i].key);
    if (m[i].values) {
      fprintf(out, " = ");
      md_cell(out, m[i].values);
    }
    fprintf(out, " | ");
    md_cell(out, m[i].now);
    fprintf(out, " |\n");
  }
}

void coop_config_print_markdown(FILE *out) {
  size_t n;
  const coop_key_info *keys = coop_config_keys(&n);
  const char *sec = "";
  fprintf(out, "# Input keys\n\n"
               "<!-- generated from src/io/config_keys.c by `coopsolve --help-keys=markdown` "
               "(make keys-md); tests/cli.sh checks that it is current -->\n\n"
               "An input file holds `key = value` lines in `[sections]` (`#` starts a comment); "
               "`--set section.key=value` overrides a key. Grid problems need [grid], [problem] and "
               "[solver]; matrix problems (problem.type = matrix) [problem] and [solver]; a batch "
               "run [batch] and [solver]. [%s] holds the keys that pick kernel internals (which "
               "kernel or launch shape runs, not what is solved): `coopsolve --help` leaves them "
               "out, `coopsolve --help-all` lists them.\n", COOP_TUNE_SECTION);
  for (size_t i = 0; i < n; i++) {
    const coop_key_info *k = &keys[i];
    char type[160];
    if (strcmp(k->section, sec) != 0) {
      sec = k->section;
      fprintf(out, "\n## [%s]\n\n| key | type | default | what it sets |\n| --- | --- | --- | --- |\n", sec);
    }
    format_type(k, type, sizeof type);
    fprintf(out, "| `%s.%s` | ", k->section, k->key);
    md_cell(out, type);
    fprintf(out, " | `%s` | ", k->def);
    md_cell(out, k->help);
    fprintf(out, " |\n");
  }
  md_moved(out);
}
