#define _POSIX_C_SOURCE 200809L

#include "core/signal.h"

#include <signal.h>
#include <string.h>

#include "core/error.h"

static volatile sig_atomic_t pending;

static void on_signal(int sig) { pending = sig; }

int coop_signal_install(void) {
  /* not SIGINT or SIGHUP: they keep their inherited action (default: end at
   * once; nohup's ignore), since a handler that only records them would drop
   * them wherever no checkpoint point polls */
  static const int sigs[] = {SIGTERM, SIGUSR1, SIGUSR2};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART; /* a write or an MPI wait in progress goes on */
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    if (sigaction(sigs[i], &sa, NULL) != 0)
      return COOP_ERROR(COOP_ERR_RUNTIME, "cannot install the handler of signal %d", sigs[i]);
  return 0;
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
