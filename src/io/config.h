/* Input configuration: `key = value` lines in [sections], `#` comments, then
 * `--set section.key=value` overrides (later wins). One key table
 * (src/io/config_keys.c) drives parsing, validation, --help, --dry-run and
 * the key reference docs/keys.md. */
#ifndef COOP_CONFIG_H
#define COOP_CONFIG_H

#include <stdint.h>
#include <stdio.h>

typedef enum {
  COOP_KEY_INT,    /* int64, range [min, max] */
  COOP_KEY_REAL,   /* double, range [min, max]; min_open/max_open exclude the bound */
  COOP_KEY_BOOL,   /* true/false, yes/no, on/off, 1/0 */
  COOP_KEY_CHOICE, /* one of the '|'-separated words in choices */
  COOP_KEY_STRING  /* any non-empty text */
} coop_key_type;

typedef struct {
  const char *section;
  const char *key;
  coop_key_type type;
  const char *def;     /* default, as text */
  double min, max;     /* INT and REAL only */
  int min_open, max_open;
  const char *choices; /* CHOICE only, e.g. "fp64|fp32" */
  const char *help;    /* one line */
} coop_key_info;

/* The values of solver.name: the registry (solvers/registry.c) holds the same
 * list, and a unit test checks that the two agree. */
#define COOP_SOLVER_CHOICES "jacobi|cg|pipecg|bicgstab|heat|mg"

/* The key table; *n receives its length. */
const coop_key_info *coop_config_keys(size_t *n);

/* Keys that pick kernel internals (which kernel or launch shape runs, not what
 * is solved) live in this section, left out of --help (--help-all shows it). */
#define COOP_TUNE_SECTION "tune"

/* A name that moved: section.key (any value, or one of values when it is not
 * NULL: '|'-separated) is now `now`. Given in an input or a --set it is an
 * input error that names the new key. */
typedef struct {
  const char *section, *key;
  const char *values; /* NULL: every value moved */
  const char *now;    /* e.g. "tune.resident" */
} coop_key_moved;

/* The moved names; *n receives their count. */
const coop_key_moved *coop_config_moved(size_t *n);

typedef struct coop_config coop_config;

int coop_config_create(coop_config **out);
void coop_config_destroy(coop_config *cfg); /* accepts NULL */

/* Parse input text. name is the file name used in messages; errors are
 * COOP_ERR_INPUT with the message "NAME:LINE: ..." (or "NAME: ..." when no line
 * applies). Parsing twice into one config is a program fault. */
int coop_config_parse(coop_config *cfg, const char *name, const char *text);
/* Apply one --set assignment "section.key=value"; errors name the option. */
int coop_config_set(coop_config *cfg, const char *assignment);
/* After parse and sets: required sections present, cross-key rules hold. */
int coop_config_validate(const coop_config *cfg);

/* 1 when the input has [section] (a header, or a --set of one of its keys). */
int coop_config_has_section(const coop_config *cfg, const char *section);

/* Typed getters by full name "section.key". An unknown name or a type mismatch
 * is a program fault (message on stderr, abort()). Strings are owned by cfg. */
int64_t coop_config_int(const coop_config *cfg, const char *name);
double coop_config_real(const coop_config *cfg, const char *name);
int coop_config_bool(const coop_config *cfg, const char *name);
const char *coop_config_str(const coop_config *cfg, const char *name);
/* Any key's value as text (as given, quotes stripped). Owned by cfg. */
const char *coop_config_text(const coop_config *cfg, const char *name);
/* 1 when the key's value equals its default (the value, whatever its origin:
 * a dry run's resolved configuration spells out every default). */
int coop_config_is_default(const coop_config *cfg, const char *name);
/* Where the value came from: "default", "FILE:LINE" or "--set". Owned by cfg. */
const char *coop_config_origin(const coop_config *cfg, const char *name);

/* The resolved configuration as valid input text, every key with its origin in a
 * trailing comment. Caller frees. NULL only when out of memory. */
char *coop_config_resolved(const coop_config *cfg);
/* Key reference for --help: section, key, type and range, default, help;
 * every section but [tune], which gets a line pointing at --help-all. */
void coop_config_print_help(FILE *out);
/* The same with [tune] (--help-all). */
void coop_config_print_help_all(FILE *out);
/* The key reference as Markdown (docs/keys.md): every key, and the moved names. */
void coop_config_print_markdown(FILE *out);

#endif
