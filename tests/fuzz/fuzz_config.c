/* libFuzzer harness of the input-file parser (src/io/config.c): parse, --set,
 * validate and the resolved text, as coopsolve's load_config uses them.
 *
 * Input: the file's text, then optionally a NUL byte and --set assignments, one
 * a line (a real input file with a NUL byte is refused before the parser sees it).
 * One input in five is parsed under a long file name (1 to 4 KiB, from the input's
 * size), since a message must never cut the NAME:LINE of a long path.
 * Besides the sanitizers' findings, the harness aborts when a promise of
 * config.h breaks:
 *   - every call returns 0 or COOP_ERR_INPUT (nothing else without running out
 *     of memory), and an input error has a message naming where it happened;
 *   - a configuration that validates resolves to text that parses and validates
 *     again into the same values (the text --dry-run prints is valid input). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/config.h"

#define MAX_SETS 8
#define LONG_NAME 4096

static void die(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_config: %s\n%s\n", what, detail ? detail : "");
  abort();
}

/* rc must be 0 or an input error whose message starts with prefix (and a line
 * number when line is set). */
static void check_rc(int rc, const char *prefix, int line, const char *call) {
  const char *msg = coop_error_message();
  if (rc == 0) return;
  if (rc != COOP_ERR_INPUT) die(call, msg);
  if (strncmp(msg, prefix, strlen(prefix)) != 0)
    die("input error message does not name its source", msg);
  msg += strlen(prefix);
  if (line && (*msg != ':' || msg[1] < '1' || msg[1] > '9'))
    die("input error message does not give the line after the name", coop_error_message());
}

/* "fuzz.ini", or one in five times a long path ending in it. */
static const char *file_name(size_t size) {
  static char name[LONG_NAME + 16];
  size_t len = 0;
  if (size % 5 == 0)
    for (len = 0; len < 1024 + size % (LONG_NAME - 1024); len += 5) memcpy(name + len, "long/", 5);
  memcpy(name + len, "fuzz.ini", sizeof "fuzz.ini");
  return name;
}

/* Every key of a and b holds the same value. */
static void same_values(const coop_config *a, const coop_config *b) {
  size_t n;
  const coop_key_info *k = coop_config_keys(&n);
  for (size_t i = 0; i < n; i++) {
    char name[128];
    int same = 1;
    snprintf(name, sizeof name, "%s.%s", k[i].section, k[i].key);
    switch (k[i].type) {
      case COOP_KEY_INT: same = coop_config_int(a, name) == coop_config_int(b, name); break;
      case COOP_KEY_REAL: same = coop_config_real(a, name) == coop_config_real(b, name); break;
      case COOP_KEY_BOOL: same = coop_config_bool(a, name) == coop_config_bool(b, name); break;
      case COOP_KEY_CHOICE:
      case COOP_KEY_STRING: same = !strcmp(coop_config_str(a, name), coop_config_str(b, name));
    }
    if (!same || !coop_config_origin(a, name)) die("resolved text changes the value of", name);
  }
}

/* The resolved text of a valid cfg is valid input with the same values. */
static void round_trip(const coop_config *cfg) {
  char *text = coop_config_resolved(cfg);
  coop_config *again = NULL;
  if (!text) die("coop_config_resolved returned NULL", NULL);
  if (coop_config_create(&again)) die("coop_config_create", coop_error_message());
  if (coop_config_parse(again, "resolved", text) || coop_config_validate(again)) {
    fprintf(stderr, "%s\n", text);
    die("the resolved text is not valid input", coop_error_message());
  }
  same_values(cfg, again);
  coop_config_destroy(again);
  free(text);
}

/* The --set lines after the NUL, each applied in turn; stops at the first error. */
static int apply_sets(coop_config *cfg, const char *sets, size_t len) {
  char *copy = malloc(len + 1), *line, *save = NULL;
  int rc = 0, count = 0;
  if (!copy) die("out of memory", NULL);
  memcpy(copy, sets, len);
  copy[len] = '\0';
  for (line = strtok_r(copy, "\n", &save); line && !rc && count < MAX_SETS;
       line = strtok_r(NULL, "\n", &save), count++) {
    rc = coop_config_set(cfg, line);
    check_rc(rc, "--set ", 0, "coop_config_set");
  }
  free(copy);
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *nul = memchr(data, '\0', size);
  const size_t text_len = nul ? (size_t)(nul - (const char *)data) : size;
  char *text = malloc(text_len + 1);
  coop_config *cfg = NULL;
  int rc;
  if (!text) die("out of memory", NULL);
  memcpy(text, data, text_len);
  text[text_len] = '\0';
  coop_error_clear();
  if (coop_config_create(&cfg)) die("coop_config_create", coop_error_message());
  const char *name = file_name(size);
  rc = coop_config_parse(cfg, name, text);
  check_rc(rc, name, 1, "coop_config_parse");
  if (!rc && nul) rc = apply_sets(cfg, nul + 1, size - text_len - 1);
  if (!rc) {
    rc = coop_config_validate(cfg);
    check_rc(rc, "", 0, "coop_config_validate");
    if (rc && !coop_error_message()[0]) die("validation failed without a message", NULL);
  }
  if (!rc) round_trip(cfg);
  coop_config_destroy(cfg);
  free(text);
  return 0;
}
