/* The coopsolve program: read the input, set up the rank, solve, write. */
#ifndef COOP_APP_H
#define COOP_APP_H

#include "core/comm.h"

/* Runs the whole program on all ranks of c; returns the exit status (0, 1 or
 * 2), the same on every rank. Messages are printed here, once. */
int coop_app_run(const coop_comm *c, int argc, char **argv);

#endif
