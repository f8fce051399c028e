#!/bin/sh
# The Krylov methods on the GPU against the host backend: launch mode (one
# kernel per operation) and grid mode (the whole solve in one persistent
# kernel) take the same iterations as the host and agree to 1e-10 relative, at
# 1 and 2 ranks (2 ranks run launch mode); a rerun repeats every bit. Skips
# where no GPU is. Tolerances per case (environment): ITS, iterations by which
# a GPU run may differ from the host (default 0; the dot products sum in
# another order, so a run ending within rounding of the tolerance may take one
# more, and BiCGStab on symmetric problems drifts by several); TOL, relative
# difference of the solutions (default 1e-10; an ill-conditioned matrix
# allows kappa times the attainable residual).
. "$COOP_SRCDIR/tests/common.sh"
coop_require_gpu
coop_python
coop_tmpdir
DATA=$COOP_SRCDIR/tests/data

solve() { # out, ranks, backend, sync, options...
  out=$1 n=$2 be=$3 sync=$4
  shift 4
  coop_mpirun $n "$COOPSOLVE" --backend $be --set run.sync=$sync "$INPUTS/matrix.ini" \
    --set output.monitor_every=0 --output "$TMP/$out.h5" "$@" >"$TMP/$out.log" 2>&1 ||
    { cat "$TMP/$out.log"; fail "$out"; }
}

attr() { $PY -c 'import h5py,sys; m=h5py.File(sys.argv[1])["solver"].attrs[sys.argv[2]]; print(m.decode() if isinstance(m,bytes) else m)' "$1" "$2"; }

compare() { # name, options...
  name=$1
  shift
  solve "$name-host" 1 host auto "$@"
  its=$(attr "$TMP/$name-host.h5" iterations)
  runs=
  for run in launch-1 grid-1 launch-2 grid-1b; do
    sync=${run%-*} n=${run#*-}
    n=${n%b}
    solve "$name-$run" $n cuda $sync "$@"
    want=$sync
    [ $n = 2 ] && want=launch # several ranks: one kernel per operation
    [ "$(attr "$TMP/$name-$run.h5" mode)" = $want ] || fail "$name $run: mode $(attr "$TMP/$name-$run.h5" mode), not $want"
    got=$(attr "$TMP/$name-$run.h5" iterations)
    [ $((got > its ? got - its : its - got)) -le "${ITS:-0}" ] ||
      fail "$name $run: $got iterations, host $its (allowed difference ${ITS:-0})"
    runs="$runs $run=$got"
    [ "$(attr "$TMP/$name-$run.h5" reason)" = "$(attr "$TMP/$name-host.h5" reason)" ] || fail "$name $run: reason differs"
    $PY "$H5CHECK" close "$TMP/$name-host.h5" "$TMP/$name-$run.h5" --rtol "${TOL:-1e-10}" ||
      fail "$name: cuda $run differs from host"
  done
  # fixed-order reductions: a rerun repeats every bit
  $PY "$H5CHECK" same "$TMP/$name-grid-1.h5" "$TMP/$name-grid-1b.h5" || fail "$name: grid rerun differs"
  echo "$name: host $its iterations;$runs"
}

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
ITS=1 TOL=1e-8 compare nos6-cgsr $nos6 --set solver.name=cg --set solver.cg_single_reduction=true
ITS=1 compare nos6-cg $nos6 --set solver.name=cg
ITS=1 TOL=1e-6 compare nos6-pipecg $nos6 --set solver.name=pipecg
ITS=15 TOL=1e-6 compare bus-cg --set "problem.matrix=$DATA/494_bus.mtx" --set solver.name=cg --set solver.pc=none --set solver.rtol=1e-10
# BiCGStab: iterations within 15% (summation order), solutions to the accuracy the tolerance gives
ITS=30 TOL=1e-8 compare p2-bicgstab $p2 --set solver.name=bicgstab --set solver.pc=jacobi
ITS=20 TOL=1e-8 compare p3-bicgstab $p3 --set solver.name=bicgstab
ITS=15 TOL=1e-6 compare nos6-bicgstab $nos6 --set solver.name=bicgstab
ITS=3 TOL=1e-8 compare cd-bicgstab --set "problem.matrix=$DATA/convdiff.mtx" --set solver.name=bicgstab --set solver.rtol=1e-10
# the breakdown reasons come out the same on the GPU
compare hg-cg --set "problem.matrix=$DATA/hangGlider_2.mtx" --set solver.name=cg --set solver.pc=none --set solver.max_iter=3000

# ---- run.schedule on a matrix: the row-tile CSR product (kernels/csr_tiles.cu) ----
# static and atomic run the method in launch mode (mode attribute) with the
# host's reason, iterations (ITS) and solution (TOL), at 1 and 2 ranks (2:
# the compressed ghost rows too); static and atomic give each other's
# solution to the bit, as every row's sum has one order whatever block takes
# its tile. clc: on a GPU below cc 10.0 an input error naming the cc and
# leaving no output; at 10.0 and above static's bits. The products themselves,
# on rows of 3 among rows of 10^4, are checked by tests/test_csr's cuda suite.
sched() { # name, options...
  name=$1
  shift
  solve "$name-host" 1 host auto "$@"
  its=$(attr "$TMP/$name-host.h5" iterations)
  runs=
  for run in static-1 atomic-1 static-2 atomic-2; do
    sc=${run%-*} n=${run#*-}
    solve "$name-$run" $n cuda auto --set run.schedule=$sc "$@"
    [ "$(attr "$TMP/$name-$run.h5" mode)" = launch ] || fail "$name $run: mode $(attr "$TMP/$name-$run.h5" mode), not launch"
    got=$(attr "$TMP/$name-$run.h5" iterations)
    [ $((got > its ? got - its : its - got)) -le "${ITS:-0}" ] ||
      fail "$name $run: $got iterations, host $its (allowed difference ${ITS:-0})"
    [ "$(attr "$TMP/$name-$run.h5" reason)" = "$(attr "$TMP/$name-host.h5" reason)" ] || fail "$name $run: reason differs"
    $PY "$H5CHECK" close "$TMP/$name-host.h5" "$TMP/$name-$run.h5" --rtol "${TOL:-1e-10}" ||
      fail "$name: cuda $run differs from host"
    runs="$runs $run=$got"
  done
  for n in 1 2; do
    [ "$(attr "$TMP/$name-static-$n.h5" iterations)" = "$(attr "$TMP/$name-atomic-$n.h5" iterations)" ] ||
      fail "$name: static and atomic iterations differ at $n ranks"
    $PY "$H5CHECK" same "$TMP/$name-static-$n.h5" "$TMP/$name-atomic-$n.h5" ||
      fail "$name: static and atomic solutions differ at $n ranks"
  done
  coop_mpirun 1 "$COOPSOLVE" --backend cuda "$INPUTS/matrix.ini" --set run.schedule=clc --set output.monitor_every=0 \
    --output "$TMP/$name-clc.h5" "$@" >"$TMP/$name-clc.log" 2>&1 </dev/null
  rc=$?
  if [ $rc -eq 2 ]; then
    grep -q '^coopsolve: run.schedule = clc needs compute capability 10.0; GPU [0-9]* has [0-9]\.[0-9]' "$TMP/$name-clc.log" ||
      { cat "$TMP/$name-clc.log"; fail "$name: clc below cc 10.0: message"; }
    [ ! -e "$TMP/$name-clc.h5" ] || fail "$name: clc refused but an output file was written"
    runs="$runs clc=refused(cc<10)"
  elif [ $rc -eq 0 ]; then
    $PY "$H5CHECK" same "$TMP/$name-static-1.h5" "$TMP/$name-clc.h5" || fail "$name: clc and static solutions differ"
    runs="$runs clc=$(attr "$TMP/$name-clc.h5" iterations)"
  else
    cat "$TMP/$name-clc.log"
    fail "$name: run.schedule = clc: exit status $rc (0 or 2 expected)"
  fi
  echo "$name schedules: host $its iterations;$runs"
}
ITS=1 sched nos6-sched $nos6 --set solver.name=cg
ITS=3 TOL=1e-8 sched cd-sched --set "problem.matrix=$DATA/convdiff.mtx" --set solver.name=bicgstab --set solver.rtol=1e-10
sched hg-sched --set "problem.matrix=$DATA/hangGlider_2.mtx" --set solver.name=cg --set solver.pc=none --set solver.max_iter=3000
