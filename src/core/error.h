/* Error discipline: every function that can fail returns int (0 = success).
 * COOP_CHECK passes a failure up; COOP_ERROR raises one with a message.
 * Status 1 is a run-time fault (names the failing call), 2 a user's input error. */
#ifndef COOP_ERROR_H
#define COOP_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { COOP_OK = 0, COOP_ERR_RUNTIME = 1, COOP_ERR_INPUT = 2 };

/* Record a run-time fault raised at file:line; returns code. */
int coop_error_raise(int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Record a user-facing input error (no source location: the message names the
 * user's file, line or option); returns COOP_ERR_INPUT. */
int coop_error_input(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Add a "from file:line" frame to a run-time fault; returns code unchanged. */
int coop_error_trace(int code, const char *file, int line);
/* Record that another rank failed (this rank did not); returns code. Such an
 * error is not printed by this rank: the rank that failed says why. */
int coop_error_remote(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append a line to the current message (a likely cause the failing call did
 * not name); returns code unchanged. */
int coop_error_append(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 when the last error was recorded by coop_error_remote. */
int coop_error_is_remote(void);
/* The message of the last error ("" when none). Owned by this module. */
const char *coop_error_message(void);
void coop_error_clear(void);
/* Mark the process as unable to shut down cleanly (a library holds a file in a
 * state whose collective close would hang or crash): main must end the job
 * with MPI_Abort instead of MPI_Finalize. Never cleared. */
void coop_error_set_fatal(void);
int coop_error_is_fatal(void);

#define COOP_ERROR(code, ...) coop_error_raise((code), __FILE__, __LINE__, __VA_ARGS__)

#define COOP_CHECK(expr)                                                \
  do {                                                                  \
    int coop_e_ = (expr);                                               \
    if (coop_e_) return coop_error_trace(coop_e_, __FILE__, __LINE__);  \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
