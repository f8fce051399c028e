#!/bin/sh
# The Krylov methods on the host backend, run as a user runs them:
#  - each method reaches x = 1 (b = A*1) on the SPD matrices of tests/data,
#    with and without the Jacobi preconditioner; pipelined CG within a few
#    iterations of CG, single-reduction CG within 10%; BiCGStab on a
#    nonsymmetric matrix;
#  - pipelined CG with Jacobi on 1138_bus at rtol 1e-12, where its recurrences
#    drift far from b - A x, converges as CG does at 1 and 2 ranks, its true
#    residual checked from the file;
#  - CG on an indefinite matrix and on a nonsymmetric one ends with a diverged
#    reason, never converged;
#  - CG on the Poisson problems reaches the discrete solution;
#  - results at 1, 2 and 4 ranks agree (same iterations, x to 1e-10).
. "$COOP_SRCDIR/tests/common.sh"
coop_python
coop_tmpdir
DATA=$COOP_SRCDIR/tests/data

# solve NAME RANKS ARG...: run, keep the summary in $TMP/NAME.out and the file in $TMP/NAME.h5
solve() {
  name=$1 n=$2
  shift 2
  rc=0
  coop_mpirun "$n" "$COOPSOLVE" --backend host "$INPUTS/matrix.ini" --output "$TMP/$name.h5" \
    --set output.monitor_every=0 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
  [ $rc = 0 ] || { cat "$TMP/$name.out" "$TMP/$name.err"; fail "$name: exit status $rc"; }
}
field() { sed -n "s/^  $2 *\([^ ]*\).*/\1/p" "$TMP/$1.out"; }
errmax() { sed -n 's/^  error       max \([^,]*\),.*/\1/p' "$TMP/$1.out"; }

# x = 1 on each SPD matrix (kappa up to 1.4e8). Pipelined CG's recurrences
# lose accuracy sooner (its attainable residual is larger), so it is held to
# rtol 1e-9, and compared with CG at the same rtol; without a preconditioner it
# may break down on these badly scaled matrices, which must show as a diverged
# reason (checked below), never as a converged wrong answer.
for m in nos6 494_bus LFAT5; do
  for case in cg:none:1e-12 cg:jacobi:1e-12 bicgstab:jacobi:1e-12 pipecg:jacobi:1e-9 cg:jacobi:1e-9 \
    cgsr:none:1e-12 cgsr:jacobi:1e-12; do
    method=${case%%:*} rest=${case#*:}
    pc=${rest%%:*} rtol=${rest#*:}
    tag=$m-$method-$pc-$rtol
    sr=false
    [ $method = cgsr ] && method=cg sr=true
    solve $tag 1 --set "problem.matrix=$DATA/$m.mtx" --set solver.name=$method \
      --set solver.cg_single_reduction=$sr --set solver.pc=$pc --set solver.rtol=$rtol \
      --set solver.max_iter=20000
    r=$(field $tag reason)
    [ "$r" = converged_rtol ] || fail "$method/$pc on $m at rtol $rtol: $r"
    e=$(errmax $tag)
    $PY -c "import sys; sys.exit(not float('$e') < 1e-3)" || fail "$method/$pc on $m: max error $e"
  done
  ic=$(field $m-cg-jacobi-1e-9 iterations) ip=$(field $m-pipecg-jacobi-1e-9 iterations)
  $PY -c "import sys; sys.exit(abs($ic - $ip) > max(3, $ic // 50))" ||
    fail "$m: pipelined CG took $ip iterations, CG $ic"
  for pc in none jacobi; do # rounding differs, so nearly as many iterations
    ic=$(field $m-cg-$pc-1e-12 iterations) is=$(field $m-cgsr-$pc-1e-12 iterations)
    $PY -c "import sys; sys.exit(abs($ic - $is) > max(5, $ic // 10))" ||
      fail "$m/$pc: single-reduction CG took $is iterations, CG $ic"
  done
  solve $m-pipecg-none 1 --set "problem.matrix=$DATA/$m.mtx" --set solver.name=pipecg \
    --set solver.rtol=1e-10 --set solver.max_iter=20000
  case $(field $m-pipecg-none reason) in
    converged_rtol)
      $PY -c "import sys; sys.exit(not float('$(errmax $m-pipecg-none)') < 1e-3)" ||
        fail "pipecg/none on $m: converged to a wrong answer" ;;
    diverged_*) ;;
    *) fail "pipecg/none on $m: $(field $m-pipecg-none reason)" ;;
  esac
done

# Pipelined CG's r, u, w, s, q, z recurrences amplify their rounding errors
# (Cools et al. 2018): on 1138_bus with Jacobi at rtol 1e-12 it stopped with
# diverged_indefinite_mat at iteration 1085 (1 rank) and 1304 (2 ranks), its
# true residual stalled near 1e-8 relative, while CG converges. With residual
# replacement it reaches CG's accuracy: converged_rtol, and ||b - A x|| / ||b||,
# recomputed here from the file's x by a reader of its own, within 3x of rtol
# (1.0e-12 for both methods); at most 1.5x CG's iterations (1103 and 1265
# against 1032 and 1034).
truerel() { # FILE.h5 MATRIX.mtx: ||b - A x|| / ||b|| with b = A 1
  $PY - "$1" "$2" <<'EOF'
import sys, h5py, numpy as np
x = h5py.File(sys.argv[1], "r")["fields/x"][()].ravel()
rows, cols, vals, n = [], [], [], None
with open(sys.argv[2]) as f:
    sym = "symmetric" in f.readline()
    for line in f:
        t = line.split()
        if not t or t[0].startswith("%"):
            continue
        if n is None:
            n = int(t[0])
            continue
        i, j, v = int(t[0]) - 1, int(t[1]) - 1, float(t[2])
        rows.append(i), cols.append(j), vals.append(v)
        if sym and i != j:
            rows.append(j), cols.append(i), vals.append(v)
rows, cols, vals = np.array(rows), np.array(cols), np.array(vals)
def mul(y):
    out = np.zeros(n)
    np.add.at(out, rows, vals * y[cols])
    return out
b = mul(np.ones(n))
print(np.linalg.norm(b - mul(x)) / np.linalg.norm(b))
EOF
}
for n in 1 2; do
  for method in cg pipecg; do
    tag=bus1138-$method-$n
    solve $tag $n --set "problem.matrix=$DATA/1138_bus.mtx" --set solver.name=$method --set solver.pc=jacobi \
      --set solver.rtol=1e-12 --set solver.max_iter=5000
    r=$(field $tag reason)
    [ "$r" = converged_rtol ] || fail "$method/jacobi on 1138_bus at $n ranks, rtol 1e-12: $r"
    t=$(truerel "$TMP/$tag.h5" "$DATA/1138_bus.mtx") || fail "$tag: cannot recompute the residual"
    $PY -c "import sys; sys.exit(not $t <= 3e-12)" ||
      fail "$method/jacobi on 1138_bus at $n ranks: true relative residual $t, rtol 1e-12"
  done
  ic=$(field bus1138-cg-$n iterations) ip=$(field bus1138-pipecg-$n iterations)
  $PY -c "import sys; sys.exit(not $ip <= 1.5 * $ic)" ||
    fail "1138_bus at $n ranks: pipelined CG took $ip iterations, CG $ic"
done

# BiCGStab on a nonsymmetric matrix (convection-diffusion, tests/data/convdiff.mtx)
solve cd-bicgstab 1 --set "problem.matrix=$DATA/convdiff.mtx" --set solver.name=bicgstab \
  --set solver.pc=jacobi --set solver.rtol=1e-10
[ "$(field cd-bicgstab reason)" = converged_rtol ] || fail "bicgstab on convdiff: $(field cd-bicgstab reason)"
$PY -c "import sys; sys.exit(not float('$(errmax cd-bicgstab)') < 1e-6)" || fail "bicgstab on convdiff: error"

# CG where it does not apply: indefinite, nonsymmetric; never converged
for m in hangGlider_2 adder_dcop_05; do
  for sr in false true; do
    solve $m-cg-$sr 1 --set "problem.matrix=$DATA/$m.mtx" --set solver.name=cg --set solver.pc=none \
      --set solver.rtol=1e-10 --set solver.max_iter=5000 --set solver.cg_single_reduction=$sr
    r=$(field $m-cg-$sr reason)
    case $r in diverged_*) ;; *) fail "cg (single reduction $sr) on $m: $r, expected a diverged reason" ;; esac
  done
done

# Poisson: CG reaches the discrete solution (error of the scheme, O(h^2))
solve p2 1 --set problem.type=sine --set grid.nx=64 --set grid.ny=48 --set solver.name=cg \
  --set solver.rtol=1e-12
[ "$(field p2 reason)" = converged_rtol ] || fail "cg on 2D Poisson: $(field p2 reason)"
$PY -c "import sys; sys.exit(not float('$(errmax p2)') < 1e-3)" || fail "cg 2D Poisson error $(errmax p2)"

# ranks: 1, 2 and 4 agree (x to TOL, default 1e-10)
agree() {
  tag=$1
  shift
  for n in 1 2 4; do solve $tag-$n $n "$@"; done
  for n in 2 4; do
    [ "$(field $tag-$n iterations)" = "$(field $tag-1 iterations)" ] ||
      fail "$tag: $(field $tag-$n iterations) iterations at $n ranks, $(field $tag-1 iterations) at 1"
    $PY "$H5CHECK" close "$TMP/$tag-1.h5" "$TMP/$tag-$n.h5" --rtol "${TOL:-1e-10}" >/dev/null ||
      fail "$tag: solutions at 1 and $n ranks differ"
  done
}
agree nos6-cg --set "problem.matrix=$DATA/nos6.mtx" --set solver.name=cg --set solver.pc=jacobi \
  --set solver.rtol=1e-10
agree cd-bicg --set "problem.matrix=$DATA/convdiff.mtx" --set solver.name=bicgstab --set solver.rtol=1e-10
agree p3-pipecg --set problem.type=sine --set grid.dim=3 --set grid.nx=12 --set grid.ny=10 \
  --set grid.nz=9 --set solver.name=pipecg --set solver.rtol=1e-10
# single-reduction CG: s = A p by recurrence drifts further from the true
# product (nos6: x agrees to 1.4e-10 between rank counts, its error is 1.6e-8)
TOL=1e-9 agree nos6-cgsr --set "problem.matrix=$DATA/nos6.mtx" --set solver.name=cg --set solver.pc=jacobi \
  --set solver.rtol=1e-10 --set solver.cg_single_reduction=true
agree p3-cgsr --set problem.type=sine --set grid.dim=3 --set grid.nx=12 --set grid.ny=10 \
  --set grid.nz=9 --set solver.name=cg --set solver.cg_single_reduction=true --set solver.rtol=1e-10
agree p2-cg --set problem.type=laplace --set grid.nx=40 --set grid.ny=30 --set solver.name=cg \
  --set solver.pc=jacobi --set solver.rtol=1e-10
echo "krylov: all cases passed"
