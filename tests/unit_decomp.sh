#!/bin/sh
# The decomp unit suite at 1, 2, 3 and 4 ranks (uneven splits included).
. "$COOP_SRCDIR/tests/common.sh"
for n in 1 2 3 4; do
  coop_mpirun $n "$COOP_BUILDDIR/tests/test_decomp" || fail "test_decomp at $n ranks"
done
