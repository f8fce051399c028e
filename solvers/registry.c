#include <string.h>

#include "solver.h"

static const coop_solver_entry solvers[] = {
    {"jacobi", "Jacobi iteration for the Poisson problem", coop_solver_jacobi},
};

const coop_solver_entry *coop_solver_lookup(const char *name) {
  for (size_t i = 0; i < sizeof solvers / sizeof solvers[0]; i++)
    if (strcmp(solvers[i].name, name) == 0) return &solvers[i];
  return NULL;
}
