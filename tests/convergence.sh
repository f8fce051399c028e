#!/bin/sh
# Manufactured and Laplace solutions: the L2 error against the exact solution
# falls at second order as the grid is refined (h halves, error / 4).
. "$COOP_SRCDIR/tests/common.sh"
coop_python
coop_tmpdir

errors() { # name, dim, problem, sizes...
  name=$1 dim=$2 prob=$3
  shift 3
  for n in "$@"; do
    nz=
    [ "$dim" = 3 ] && nz="--set grid.nz=$n"
    coop_mpirun 2 "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" --set grid.dim=$dim \
      --set grid.nx=$n --set grid.ny=$n $nz --set problem.type=$prob --set solver.rtol=1e-11 \
      --set solver.max_iter=1000000 --set solver.check_every=200 --set output.monitor_every=0 \
      --output "$TMP/$name-$n.h5" >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "$name n=$n"; }
  done
  (cd "$TMP" && $PY - "$name" "$@" <<'PYEOF'
import sys, math, h5py
name, sizes = sys.argv[1], sys.argv[2:]
err = []
for n in sizes:
    with h5py.File(f"{name}-{n}.h5", "r") as f:
        s = f["solver"].attrs
        if s["reason"] not in (b"converged_rtol", "converged_rtol"):
            sys.exit(f"{name} n={n}: stopped by {s['reason']}, not converged_rtol")
        err.append(float(s["error_l2"]))
for (n0, e0), (n1, e1) in zip(zip(sizes, err), zip(sizes[1:], err[1:])):
    h0, h1 = 1 / (int(n0) + 1), 1 / (int(n1) + 1)
    order = math.log(e0 / e1) / math.log(h0 / h1)
    print(f"{name}: n {n0} -> {n1}: L2 error {e0:.3e} -> {e1:.3e}, order {order:.3f}")
    if not 1.9 <= order <= 2.1:
        sys.exit(f"{name}: order {order:.3f} is not 2")
PYEOF
  ) || fail "$name does not converge at second order"
}

errors sine2d 2 sine 15 31 63
errors laplace2d 2 laplace 15 31 63
errors sine3d 3 sine 7 15 31
