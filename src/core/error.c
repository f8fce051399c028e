#include "core/error.h"

#include <stdio.h>
#include <string.h>

/* One message buffer per process: errors unwind to main, which prints it once.
 * A global is the simplest correct owner, since only one error is ever live. */
static char message[4096];
static int traced, remote;

static void append(const char *fmt, va_list ap) {
  size_t used = strlen(message);
  if (used + 1 < sizeof message) vsnprintf(message + used, sizeof message - used, fmt, ap);
}

static void appendf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  append(fmt, ap);
  va_end(ap);
}

int coop_error_raise(int code, const char *file, int line, const char *fmt, ...) {
  va_list ap;
  message[0] = '\0';
  traced = remote = 0;
  appendf("%s:%d: ", file, line);
  va_start(ap, fmt);
  append(fmt, ap);
  va_end(ap);
  return code;
}

int coop_error_input(const char *fmt, ...) {
  va_list ap;
  message[0] = '\0';
  traced = remote = 0;
  va_start(ap, fmt);
  append(fmt, ap);
  va_end(ap);
  return COOP_ERR_INPUT;
}

int coop_error_remote(int code, const char *fmt, ...) {
  va_list ap;
  message[0] = '\0';
  traced = 0;
  remote = 1;
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
  message[0] = '\0';
  traced = remote = 0;
}
