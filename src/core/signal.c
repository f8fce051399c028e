#define _POSIX_C_SOURCE 200809L

#include "core/signal.h"

#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

static volatile sig_atomic_t pending;

static void on_signal(int sig) { pending = sig; }

/* Temporaries to remove when SIGINT or SIGHUP ends the run: fixed slots, so
 * the handler touches no allocator; a slot's path is whole before it is marked used. */
enum { TEMPS = 16 };
static char temp_path[TEMPS][PATH_MAX];
static volatile sig_atomic_t temp_used[TEMPS];

/* Async-signal-safe: unlink the temporaries, then end by the signal's default
 * action (SA_RESETHAND restored it; the raised signal is taken on return). */
static void on_fatal(int sig) {
  for (int i = 0; i < TEMPS; i++)
    if (temp_used[i]) unlink(temp_path[i]);
  raise(sig);
}

int coop_signal_install(void) {
  static const int sigs[] = {SIGTERM, SIGUSR1, SIGUSR2};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART; /* a write or an MPI wait in progress goes on */
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    if (sigaction(sigs[i], &sa, NULL) != 0)
      return COOP_ERROR(COOP_ERR_RUNTIME, "cannot install the handler of signal %d", sigs[i]);
  /* SIGINT and SIGHUP end the run as before, less its temporaries; one
   * inherited as ignored (nohup) stays ignored. What was inherited is read on
   * the first call, before MPI_Init: a library may install its own handler
   * (a nohup run on the GPU machine died of SIGHUP so), which a later call
   * replaces with SIG_IGN again. */
  static const int ends[] = {SIGINT, SIGHUP};
  static int known, ignored[2];
  struct sigaction ign;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sa.sa_handler = on_fatal;
  sa.sa_flags = SA_RESETHAND;
  for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
    struct sigaction old;
    if (!known) ignored[i] = sigaction(ends[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN;
    if (sigaction(ends[i], ignored[i] ? &ign : &sa, NULL) != 0)
      return COOP_ERROR(COOP_ERR_RUNTIME, "cannot install the handler of signal %d", ends[i]);
  }
  known = 1;
  return 0;
}

void coop_signal_track(const char *path) {
  if (!path || strlen(path) >= PATH_MAX) return;
  for (int i = 0; i < TEMPS; i++)
    if (!temp_used[i]) {
      strcpy(temp_path[i], path);
      __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the path is whole before the handler may read it */
      temp_used[i] = 1;
      return;
    }
}

void coop_signal_untrack(const char *path) {
  if (!path) return;
  for (int i = 0; i < TEMPS; i++)
    if (temp_used[i] && strcmp(temp_path[i], path) == 0) temp_used[i] = 0;
}

int coop_signal_stops(int sig, int exit_on_signal) { return sig && exit_on_signal; }

int coop_signal_pending(void) { return pending; }

void coop_signal_clear(void) { pending = 0; }

const char *coop_signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}
