#!/bin/sh
# The heat solver on the GPU against the host backend: run.sync = launch,
# graph and grid at 1 and 2 ranks give the host's field and time series to
# 1e-12 relative in fp64 (1e-5 in fp32), and the run says it ran in the mode
# asked for. Skips where no GPU is.
. "$COOP_SRCDIR/tests/common.sh"
coop_gpu_setup

solve() { # out, ranks, backend, sync, options...
  out=$1 n=$2 be=$3 sync=$4
  shift 4
  coop_solve "$INPUTS/quickstart.ini" "$out" $n $be $sync --set solver.name=heat "$@"
}

# /series/u of two files: the same steps and times, snapshots within rtol (normwise)
series_close() { # ref, other, rtol
  $PY - "$@" <<'EOF'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["series"] for p in sys.argv[1:3])
rtol = float(sys.argv[3])
if a["step"][()].tolist() != b["step"][()].tolist() or a["time"][()].tolist() != b["time"][()].tolist():
    sys.exit("/series: steps or times differ")
x, y = a["u"][()].astype(np.float64), b["u"][()].astype(np.float64)
err = np.max(np.abs(x - y)) / max(np.max(np.abs(x)), 1e-300)
print(f"/series/u: max |diff| / max |ref| = {err:.3e}")
sys.exit(0 if np.isfinite(y).all() and err <= rtol else 1)
EOF
}

compare() { # name, options...  (tolerance against host: $TOL, default 1e-12)
  name=$1
  shift
  coop_gpu_case "$name" || return 0
  solve "$name-host" 1 host auto "$@"
  for n in 1 2; do
    for sync in launch graph grid; do
      solve "$name-$sync-$n" $n cuda $sync "$@"
      [ "$(coop_solver_attr "$TMP/$name-$sync-$n.h5" mode)" = $sync ] || fail "$name: mode is not $sync at $n ranks"
      $PY "$H5CHECK" close "$TMP/$name-host.h5" "$TMP/$name-$sync-$n.h5" --rtol "${TOL:-1e-12}" ||
        fail "$name: cuda $sync at $n ranks differs from host"
      series_close "$TMP/$name-host.h5" "$TMP/$name-$sync-$n.h5" "${TOL:-1e-12}" ||
        fail "$name: cuda $sync at $n ranks: the time series differs from host"
    done
  done
  coop_gpu_done "$name"
}

QUICK="h2d h3d h2d-fp32"
steps="--set solver.max_iter=300 --set output.every=70 --set solver.check_every=50"
compare h2d $steps --set grid.nx=200 --set grid.ny=150
compare h2d-deep $steps --set grid.nx=200 --set grid.ny=150 --set grid.ghost=3 --set problem.type=laplace
compare h3d $steps --set grid.dim=3 --set grid.nx=40 --set grid.ny=36 --set grid.nz=30 --set grid.ghost=2
TOL=1e-5 compare h2d-fp32 $steps --set grid.nx=200 --set grid.ny=150 --set solver.precision=fp32
# steps between exchanges two a pass (tune.fuse_sweeps = 2, ghost 4): at 2
# ranks grid mode takes them (the note), and the series stays the host's
compare h2d-pair $steps --set grid.nx=203 --set grid.ny=301 --set grid.ghost=4 --set tune.fuse_sweeps=2
[ ! -e "$TMP/h2d-pair-grid-2.log" ] || grep -q "two sweeps a pass between exchanges" "$TMP/h2d-pair-grid-2.log" ||
  { cat "$TMP/h2d-pair-grid-2.log"; fail "h2d-pair: no two sweeps a pass between exchanges at 2 ranks"; }
