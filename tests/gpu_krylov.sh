#!/bin/sh
# The Krylov methods on the GPU against the host backend: launch mode (one
# kernel per operation) and grid mode (the whole solve in one persistent
# kernel) end with the host's reason, within ITS iterations of it, at 1 and 2
# ranks (2 ranks run launch mode); a rerun in grid mode repeats every bit.
# Skips where no GPU is. ITS (environment, default 0): the iterations by
# which a GPU run may differ from the host (the dot products sum in another
# order, so a run ending within rounding of the tolerance may take one more;
# BiCGStab's iteration count moves by up to 15% on symmetric problems).
# The solutions' agreement is derived from the method, not tuned to a card:
# both runs stop with ||b - A x|| <= rtol ||b|| (x0 = 0), so each is within
# kappa(A) rtol of the exact solution and the two within 2 kappa(A) rtol of
# each other (2-norm, relative). kappa is computed for each case: the
# 5- and 7-point Laplacian's from its eigenvalues, a matrix's from its
# singular values (numpy). A run that ends unconverged (a breakdown) has no
# such bound: its vector must match the host's to TOL (default 1e-10, max-norm).
. "$COOP_SRCDIR/tests/common.sh"
coop_gpu_setup
DATA=$COOP_SRCDIR/tests/data

solve() { coop_solve "$INPUTS/matrix.ini" "$@"; } # out, ranks, backend, sync, options...

# agree.py HOST GPU RTOL [MATRIX]: the bound above, printed beside the difference
cat >"$TMP/agree.py" <<'EOF'
import sys, h5py, numpy as np
host, dev, rtol = sys.argv[1], sys.argv[2], float(sys.argv[3])
fa, fb = h5py.File(host, "r"), h5py.File(dev, "r")
if len(sys.argv) > 4:  # a Matrix Market file: kappa_2 from the dense matrix's singular values
    with open(sys.argv[4]) as f:
        sym = "symmetric" in f.readline()
        lines = [l for l in f if not l.startswith("%")]
    n = int(lines[0].split()[0])
    A = np.zeros((n, n))
    for l in lines[1:]:
        i, j, v = l.split()[:3]
        A[int(i) - 1, int(j) - 1] = float(v)
        if sym:
            A[int(j) - 1, int(i) - 1] = float(v)
    kappa = np.linalg.cond(A)
else:  # Dirichlet Laplacian on the interior points: eigenvalues sum 4/h^2 sin^2(k pi / 2(n+1))
    g = fa["grid"].attrs
    shape, h = [int(v) for v in g["shape"]], [float(v) for v in g["spacing"]]
    lam = lambda k: sum(4 / hd**2 * np.sin(kd * np.pi / (2 * (nd + 1)))**2 for kd, nd, hd in zip(k, shape, h))
    kappa = lam(shape) / lam([1] * len(shape))
bound = 2 * kappa * rtol
for name in fa["fields"]:
    x, y = fa["fields"][name][()].ravel(), fb["fields"][name][()].ravel()
    d = np.linalg.norm(x - y) / np.linalg.norm(x)
    ok = bool(np.isfinite(y).all() and d <= bound)
    print(f"/fields/{name}: ||diff|| / ||host|| = {d:.2e}, bound 2 kappa rtol = {bound:.2e} (kappa {kappa:.3g})")
    if not ok: sys.exit(1)
EOF
# agree HOST GPU OPTIONS...: the solutions within the bound (converged) or TOL
agree() {
  ref=$TMP/$1.h5 got=$TMP/$2.h5
  shift 2
  case $(coop_solver_attr "$ref" reason) in
    converged_*) ;;
    *) $PY "$H5CHECK" close "$ref" "$got" --rtol "${TOL:-1e-10}"; return ;;
  esac
  rtol= mtx=
  for a in "$@"; do
    case $a in
      solver.rtol=*) rtol=${a#*=} ;;
      problem.matrix=*) mtx=${a#*=} ;;
    esac
  done
  [ -n "$rtol" ] || fail "agree: the case sets no solver.rtol"
  $PY "$TMP/agree.py" "$ref" "$got" "$rtol" $mtx
}

# host_case NAME OPTIONS...: status 1 where the case does not run; else the
# host's run, $TMP/NAME-host.h5, its iterations in $its, and $runs emptied.
host_case() {
  name=$1
  shift
  coop_gpu_case "$name" || return 1
  solve "$name-host" 1 host auto "$@"
  its=$(coop_solver_attr "$TMP/$name-host.h5" iterations)
  runs=
}

# like_host NAME RUN MODE OPTIONS...: $TMP/NAME-RUN.h5 ran in MODE and ended
# for the host's reason, within ITS of its iterations, with its solution
# (agree); adds RUN=iterations to $runs.
like_host() {
  name=$1 run=$2 want=$3
  shift 3
  [ "$(coop_solver_attr "$TMP/$name-$run.h5" mode)" = $want ] || fail "$name $run: mode $(coop_solver_attr "$TMP/$name-$run.h5" mode), not $want"
  got=$(coop_solver_attr "$TMP/$name-$run.h5" iterations)
  [ $((got > its ? got - its : its - got)) -le "${ITS:-0}" ] ||
    fail "$name $run: $got iterations, host $its (allowed difference ${ITS:-0})"
  runs="$runs $run=$got" # before agree, which sets got to a file name
  [ "$(coop_solver_attr "$TMP/$name-$run.h5" reason)" = "$(coop_solver_attr "$TMP/$name-host.h5" reason)" ] || fail "$name $run: reason differs"
  agree "$name-host" "$name-$run" "$@" || fail "$name: cuda $run differs from host"
}

compare() { # name, options...
  host_case "$@" || return 0
  shift
  for run in launch-1 grid-1 launch-2 grid-1b; do
    sync=${run%-*} n=${run#*-}
    n=${n%b}
    solve "$name-$run" $n cuda $sync "$@"
    want=$sync
    [ $n = 2 ] && want=launch # several ranks: one kernel per operation
    like_host "$name" $run $want "$@"
  done
  # fixed-order reductions: a rerun repeats every bit
  $PY "$H5CHECK" same "$TMP/$name-grid-1.h5" "$TMP/$name-grid-1b.h5" || fail "$name: grid rerun differs"
  echo "$name: host $its iterations;$runs"
  coop_gpu_done "$name"
}

QUICK="p2-cg-jacobi p2-pipecg-none p3-cg p2-cgsr-jacobi nos6-cg p2-bicgstab cd-bicgstab hg-cg nos6-sched"
p2="--set problem.type=laplace --set grid.nx=200 --set grid.ny=150 --set solver.rtol=1e-10"
p3="--set problem.type=laplace --set grid.dim=3 --set grid.nx=40 --set grid.ny=36 --set grid.nz=30 --set solver.rtol=1e-10"
nos6="--set problem.matrix=$DATA/nos6.mtx --set solver.pc=jacobi --set solver.rtol=1e-10"
for m in cg pipecg; do
  for pc in none jacobi; do
    ITS=1 compare p2-$m-$pc $p2 --set solver.name=$m --set solver.pc=$pc
  done
  ITS=1 compare p3-$m $p3 --set solver.name=$m
done
for pc in none jacobi; do # single-reduction CG: one barrier an iteration in grid mode
  ITS=1 compare p2-cgsr-$pc $p2 --set solver.name=cg --set solver.cg_single_reduction=true --set solver.pc=$pc
done
ITS=1 compare p3-cgsr $p3 --set solver.name=cg --set solver.cg_single_reduction=true
ITS=1 compare nos6-cgsr $nos6 --set solver.name=cg --set solver.cg_single_reduction=true
ITS=1 compare nos6-cg $nos6 --set solver.name=cg
ITS=1 compare nos6-pipecg $nos6 --set solver.name=pipecg
ITS=15 compare bus-cg --set "problem.matrix=$DATA/494_bus.mtx" --set solver.name=cg --set solver.pc=none --set solver.rtol=1e-10
# BiCGStab: iterations within 15% (summation order), solutions to the accuracy the tolerance gives
ITS=30 compare p2-bicgstab $p2 --set solver.name=bicgstab --set solver.pc=jacobi
ITS=20 compare p3-bicgstab $p3 --set solver.name=bicgstab
ITS=15 compare nos6-bicgstab $nos6 --set solver.name=bicgstab
ITS=3 compare cd-bicgstab --set "problem.matrix=$DATA/convdiff.mtx" --set solver.name=bicgstab --set solver.rtol=1e-10
# the breakdown reasons come out the same on the GPU
compare hg-cg --set "problem.matrix=$DATA/hangGlider_2.mtx" --set solver.name=cg --set solver.pc=none --set solver.max_iter=3000
# pipelined CG's residual replacement: on 1138_bus with Jacobi to rtol 1e-12
# its recurrences drift from b - A x (tests/krylov.sh); the persistent kernel
# replaces them as solvers/krylov/pipecg.c does, at its own check points.
# Where the replacements fall moves with the summation order, and the
# iterations with them (an H100: grid 1115, launch 1257, host 1103), so the
# bound is the one tests/krylov.sh sets on the host: at most 1.5x CG's 1032
# iterations, 445 more than the host's pipelined CG. Every run ends converged
# with the true residual within 3x the tolerance.
ITS=445 compare bus1138-pipecg --set "problem.matrix=$DATA/1138_bus.mtx" --set solver.pc=jacobi \
  --set solver.rtol=1e-12 --set solver.max_iter=5000 --set solver.name=pipecg
if [ -e "$TMP/bus1138-pipecg-grid-1b.h5" ]; then
  for run in host launch-1 grid-1 launch-2; do
    t=$($PY -c 'import h5py,sys; a=h5py.File(sys.argv[1])["solver"].attrs; print(a["true_residual"] * a["rel_residual"] / a["residual"])' \
      "$TMP/bus1138-pipecg-$run.h5")
    $PY -c "import sys; sys.exit(not $t <= 3e-12)" || fail "bus1138-pipecg $run: true relative residual $t, rtol 1e-12"
  done
fi

# ---- tune.csr_schedule on a matrix: the row-tile CSR product (kernels/csr_tiles.cu) ----
# static and atomic run the method in launch mode (mode attribute) with the
# host's reason, iterations (ITS) and solution (TOL), at 1 and 2 ranks (2:
# the compressed ghost rows too); static and atomic give each other's
# solution to the bit, as every row's sum has one order whatever block takes
# its tile. clc: on a GPU below cc 10.0 an input error naming the cc and
# leaving no output; at 10.0 and above static's bits. The products themselves,
# on rows of 3 among rows of 10^4, are checked by tests/test_csr's cuda suite.
sched() { # name, options...
  host_case "$@" || return 0
  shift
  for run in static-1 atomic-1 static-2 atomic-2; do
    sc=${run%-*} n=${run#*-}
    solve "$name-$run" $n cuda auto --set tune.csr_schedule=$sc "$@"
    like_host "$name" $run launch "$@"
  done
  for n in 1 2; do
    [ "$(coop_solver_attr "$TMP/$name-static-$n.h5" iterations)" = "$(coop_solver_attr "$TMP/$name-atomic-$n.h5" iterations)" ] ||
      fail "$name: static and atomic iterations differ at $n ranks"
    $PY "$H5CHECK" same "$TMP/$name-static-$n.h5" "$TMP/$name-atomic-$n.h5" ||
      fail "$name: static and atomic solutions differ at $n ranks"
  done
  coop_mpirun 1 "$COOPSOLVE" --backend cuda "$INPUTS/matrix.ini" --set tune.csr_schedule=clc --set output.monitor_every=0 \
    --output "$TMP/$name-clc.h5" "$@" >"$TMP/$name-clc.log" 2>&1 </dev/null
  rc=$?
  if [ $rc -eq 2 ]; then
    grep -Eq '^coopsolve: (run\.|tune\.csr_)schedule = clc needs compute capability 10\.0; GPU [0-9]* has [0-9]\.[0-9]' "$TMP/$name-clc.log" ||
      { cat "$TMP/$name-clc.log"; fail "$name: clc below cc 10.0: message"; }
    [ ! -e "$TMP/$name-clc.h5" ] || fail "$name: clc refused but an output file was written"
    runs="$runs clc=refused(cc<10)"
  elif [ $rc -eq 0 ]; then
    $PY "$H5CHECK" same "$TMP/$name-static-1.h5" "$TMP/$name-clc.h5" || fail "$name: clc and static solutions differ"
    runs="$runs clc=$(coop_solver_attr "$TMP/$name-clc.h5" iterations)"
  else
    cat "$TMP/$name-clc.log"
    fail "$name: tune.csr_schedule = clc: exit status $rc (0 or 2 expected)"
  fi
  echo "$name schedules: host $its iterations;$runs"
  coop_gpu_done "$name"
}
ITS=1 sched nos6-sched $nos6 --set solver.name=cg
ITS=3 sched cd-sched --set "problem.matrix=$DATA/convdiff.mtx" --set solver.name=bicgstab --set solver.rtol=1e-10
sched hg-sched --set "problem.matrix=$DATA/hangGlider_2.mtx" --set solver.name=cg --set solver.pc=none --set solver.max_iter=3000
