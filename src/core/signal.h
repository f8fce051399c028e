/* Signals a batch system sends before it stops a job (SIGTERM from scancel or
 * the time limit, SIGUSR1/SIGUSR2 from `sbatch --signal`). The handler only
 * records the signal; the solvers look at it at their next checkpoint point,
 * where the ranks agree, write a checkpoint and stop or go on (run.on_signal).
 * SIGINT and SIGHUP (Ctrl-C, a closed terminal) end the run at once, by their
 * default action, after removing the temporaries registered here; where they
 * were inherited as ignored (nohup) they stay ignored. */
#ifndef COOP_SIGNAL_H
#define COOP_SIGNAL_H

/* Install the handlers (SIGTERM, SIGUSR1, SIGUSR2, SIGINT, SIGHUP); idempotent. */
int coop_signal_install(void);
/* Register a temporary file that SIGINT or SIGHUP removes (a copy of path is
 * kept; at most 16 at once, more are not removed); untrack when it is renamed
 * or removed. */
void coop_signal_track(const char *path);
void coop_signal_untrack(const char *path);
/* The last signal received and not yet taken, or 0. */
int coop_signal_pending(void);
/* Take it (the next call to coop_signal_pending returns 0 until another arrives). */
void coop_signal_clear(void);
/* Whether sig stops the run after its checkpoint: run.on_signal = exit. */
int coop_signal_stops(int sig, int exit_on_signal);
/* "SIGTERM", "SIGUSR1", ... */
const char *coop_signal_name(int sig);

#endif
