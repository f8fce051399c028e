#!/bin/sh
# The vector suite at 1, 2 and 3 ranks (uneven splits, reductions across ranks).
. "$COOP_SRCDIR/tests/common.sh"
for n in 1 2 3; do
  coop_mpirun $n "$COOP_BUILDDIR/tests/test_vec" || fail "test_vec at $n ranks"
done
