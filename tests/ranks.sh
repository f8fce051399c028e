#!/bin/sh
# The same input at 1, 2 and 4 ranks, fixed iteration count: the fields must be
# the same bits (2D and 3D, ghost width 1 and 2, fp64 and fp32, uneven splits).
. "$COOP_SRCDIR/tests/common.sh"
coop_python
coop_tmpdir

run_case() { # name, extra --set options...
  name=$1
  shift
  for n in 1 2 4; do
    coop_mpirun $n "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" \
      --set solver.rtol=0 --set solver.max_iter=37 --set solver.check_every=10 \
      --set output.monitor_every=0 --output "$TMP/$name-$n.h5" "$@" >"$TMP/$name-$n.out" 2>&1 ||
      { cat "$TMP/$name-$n.out"; fail "$name at $n ranks"; }
  done
  for n in 2 4; do
    $PY "$H5CHECK" same "$TMP/$name-1.h5" "$TMP/$name-$n.h5" --fields u ||
      fail "$name: 1 and $n ranks differ"
  done
  its=$($PY -c 'import h5py,sys; print(int(h5py.File(sys.argv[1])["solver"].attrs["iterations"]))' "$TMP/$name-4.h5")
  [ "$its" = 37 ] || fail "$name: $its iterations, not 37"
}

run_case 2d-g1 --set grid.nx=23 --set grid.ny=17
run_case 2d-g2 --set grid.nx=23 --set grid.ny=17 --set grid.ghost=2 --set problem.type=laplace
run_case 3d-g1 --set grid.dim=3 --set grid.nx=11 --set grid.ny=9 --set grid.nz=7
run_case 3d-g3-fp32 --set grid.dim=3 --set grid.nx=13 --set grid.ny=9 --set grid.nz=8 \
  --set grid.ghost=3 --set solver.precision=fp32
