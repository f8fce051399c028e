#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One message per process: errors unwind to main, which prints it once. A
 * global is the simplest correct owner, since only one error is ever live. It
 * grows to fit, so a long path never cuts the FILE:LINE or the text after it;
 * only when memory is gone does the fixed fallback cut it, and says so. */
static char fallback[1024];
static char *message = fallback;
static size_t cap = sizeof fallback, used;
static int traced, remote, fatal;

static void reset(void) {
  used = 0;
  message[0] = '\0';
}

/* Make room for n more bytes and the NUL; 0 when that is impossible. */
static int reserve(size_t n) {
  if (used + n < cap) return 1;
  size_t want = cap;
  while (want <= used + n) want *= 2;
  char *grown = message == fallback ? malloc(want) : realloc(message, want);
  if (!grown) return 0;
  if (message == fallback) memcpy(grown, fallback, used + 1);
  message = grown;
  cap = want;
  return 1;
}

static void append(const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  const int n = vsnprintf(message + used, cap - used, fmt, ap);
  if (n < 0) {
    message[used] = '\0';
  } else if ((size_t)n < cap - used) {
    used += (size_t)n;
  } else if (reserve((size_t)n)) {
    vsnprintf(message + used, cap - used, fmt, again);
    used += (size_t)n;
  } else { /* out of memory: keep what fits, marked as cut */
    static const char cut[] = " [message cut: out of memory]";
    used = cap - 1;
    if (cap > sizeof cut) memcpy(message + cap - sizeof cut, cut, sizeof cut);
  }
  va_end(again);
}

static void appendf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  append(fmt, ap);
  va_end(ap);
}

int coop_error_raise(int code, const char *file, int line, const char *fmt, ...) {
  va_list ap;
  reset();
  traced = remote = 0;
  appendf("%s:%d: ", file, line);
  va_start(ap, fmt);
  append(fmt, ap);
  va_end(ap);
  return code;
}

int coop_error_input(const char *fmt, ...) {
  va_list ap;
  reset();
  traced = remote = 0;
  va_start(ap, fmt);
  append(fmt, ap);
  va_end(ap);
  return COOP_ERR_INPUT;
}

int coop_error_remote(int code, const char *fmt, ...) {
  va_list ap;
  reset();
  traced = 0;
  remote = 1;
  va_start(ap, fmt);
  append(fmt, ap);
  va_end(ap);
  return code;
}

int coop_error_append(int code, const char *fmt, ...) {
  va_list ap;
  appendf("\n  ");
  va_start(ap, fmt);
  append(fmt, ap);
  va_end(ap);
  return code;
}

int coop_error_is_remote(void) { return remote; }

int coop_error_trace(int code, const char *file, int line) {
  /* Input errors speak to the user; a stack of our source lines would be noise. */
  if (code != COOP_ERR_INPUT && traced < 8) {
    appendf("\n  from %s:%d", file, line);
    traced++;
  }
  return code;
}

const char *coop_error_message(void) { return message; }

void coop_error_clear(void) {
  reset();
  traced = remote = 0;
}

void coop_error_set_fatal(void) { fatal = 1; }

int coop_error_is_fatal(void) { return fatal; }
