/* The Krylov methods by name: the key of the persistent kernel's paths
 * (solvers/krylov/krylov_grid.h) and of the family's shared setup
 * (solvers/krylov/krylov.h). */
#ifndef COOP_KRYLOV_METHOD_H
#define COOP_KRYLOV_METHOD_H

typedef enum {
  COOP_KG_CG = 0,       /* Hestenes-Stiefel */
  COOP_KG_PIPECG = 1,
  COOP_KG_BICGSTAB = 2,
  COOP_KG_CGSR = 3      /* CG in the Chronopoulos-Gear (single-reduction) form */
} coop_kg_method;

#endif
