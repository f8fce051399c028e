#include <string.h>

#include "solvers/pc.h"
#include "solvers/solver.h"

static const coop_solver_type *const solvers[] = {
    &coop_solver_jacobi, &coop_solver_cg, &coop_solver_pipecg, &coop_solver_bicgstab,
    &coop_solver_heat, &coop_solver_mg};
#define NSOLVERS (sizeof solvers / sizeof solvers[0])

const coop_solver_type *coop_solver_lookup(const char *name) {
  for (size_t i = 0; i < NSOLVERS; i++)
    if (strcmp(solvers[i]->name, name) == 0) return solvers[i];
  return NULL;
}

const char *coop_solver_names(void) {
  static char names[256];
  if (!names[0])
    for (size_t i = 0; i < NSOLVERS; i++) {
      if (i) strcat(names, "|");
      strcat(names, solvers[i]->name);
    }
  return names;
}

int coop_pc_create(coop_solve *sv, coop_pc **out) {
  *out = NULL;
  if (strcmp(coop_config_str(sv->cfg, "solver.pc"), "mg") == 0) return coop_mg_pc_create(sv, out);
  return 0;
}

void coop_pc_destroy(coop_pc *pc) {
  if (pc) pc->destroy(pc);
}

int coop_shifted_create(coop_solve *sv, double shift, coop_shifted **out) {
  return coop_mg_shifted_create(sv, shift, out);
}

void coop_shifted_destroy(coop_shifted *s) {
  if (s) s->destroy(s);
}
