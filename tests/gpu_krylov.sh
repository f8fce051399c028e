#!/bin/sh
# The Krylov methods on the GPU against the host backend: launch mode (one
# kernel per operation) and grid mode (the whole solve in one persistent
# kernel) take the same iterations as the host and agree to 1e-10 relative, at
# 1 and 2 ranks (2 ranks run launch mode); a rerun repeats every bit. Skips
# where no GPU is.
. "$COOP_SRCDIR/tests/common.sh"
"$COOPSOLVE" --version | grep -q '^CUDA: yes' || { echo "SKIP: built without CUDA"; exit 77; }
"$COOPSOLVE" --version | grep -q '^GPUs visible: [1-9]' || { echo "SKIP: no GPU visible"; exit 77; }
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
  for run in launch-1 grid-1 launch-2 grid-1b; do
    sync=${run%-*} n=${run#*-}
    n=${n%b}
    solve "$name-$run" $n cuda $sync "$@"
    want=$sync
    [ $n = 2 ] && want=launch # several ranks: one kernel per operation
    [ "$(attr "$TMP/$name-$run.h5" mode)" = $want ] || fail "$name $run: mode $(attr "$TMP/$name-$run.h5" mode), not $want"
    [ "$(attr "$TMP/$name-$run.h5" iterations)" = "$its" ] ||
      fail "$name $run: $(attr "$TMP/$name-$run.h5" iterations) iterations, host $its"
    [ "$(attr "$TMP/$name-$run.h5" reason)" = "$(attr "$TMP/$name-host.h5" reason)" ] || fail "$name $run: reason differs"
    $PY "$H5CHECK" close "$TMP/$name-host.h5" "$TMP/$name-$run.h5" --rtol 1e-10 ||
      fail "$name: cuda $run differs from host"
  done
  # fixed-order reductions: a rerun repeats every bit
  $PY "$H5CHECK" same "$TMP/$name-grid-1.h5" "$TMP/$name-grid-1b.h5" || fail "$name: grid rerun differs"
  echo "$name: $its iterations, host = launch = grid"
}

p2="--set problem.type=sine --set grid.nx=200 --set grid.ny=150 --set solver.rtol=1e-10"
p3="--set problem.type=laplace --set grid.dim=3 --set grid.nx=40 --set grid.ny=36 --set grid.nz=30 --set solver.rtol=1e-10"
for m in cg pipecg bicgstab; do
  for pc in none jacobi; do
    compare p2-$m-$pc $p2 --set solver.name=$m --set solver.pc=$pc
  done
  compare p3-$m $p3 --set solver.name=$m
  compare nos6-$m --set "problem.matrix=$DATA/nos6.mtx" --set solver.name=$m --set solver.pc=jacobi --set solver.rtol=1e-10
done
compare bus-cg --set "problem.matrix=$DATA/494_bus.mtx" --set solver.name=cg --set solver.pc=none --set solver.rtol=1e-10
compare cd-bicgstab --set "problem.matrix=$DATA/convdiff.mtx" --set solver.name=bicgstab --set solver.rtol=1e-10
# the breakdown reasons come out the same on the GPU
compare hg-cg --set "problem.matrix=$DATA/hangGlider_2.mtx" --set solver.name=cg --set solver.pc=none --set solver.max_iter=3000
