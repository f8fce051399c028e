#!/bin/sh
# Multigrid on the GPU against the host backend: run.sync = launch, graph and
# grid give the host's field to 1e-12 relative in fp64 (1e-4 in fp32, which stops at rtol 1e-4) with
# the same cycles, on odd and uneven sizes, 2D and 3D, V, W and F cycles,
# both smoothers and odd sweep counts; cg with solver.pc = mg likewise; a grid-mode solve cut by max_iter and
# restarted from its checkpoint ends with the uninterrupted one's bits; the
# implicit heat step likewise; at 2 and 3 ranks (launch mode) the same
# against one host rank, graph refused there. Skips where no GPU is.
. "$COOP_SRCDIR/tests/common.sh"
coop_gpu_setup

MG="$INPUTS/mg_poisson.ini"
solve() { # out, ranks, backend, sync, options...
  coop_solve "$MG" "$@" --set output.xdmf=false
}
attr() { coop_solver_attr "$TMP/$1.h5" "$2"; }
# the same cycles, or one more or fewer where the last check sits on the tolerance
near_its() { [ $(($1 - $2)) -le 1 ] && [ $(($2 - $1)) -le 1 ]; }

compare() { # name, options...  (tolerance against host: $TOL, default 1e-12)
  name=$1
  shift
  coop_gpu_case "$name" || return 0
  solve "$name-host" 1 host auto "$@"
  for sync in launch graph grid; do
    solve "$name-$sync" 1 cuda $sync "$@"
    [ "$(attr "$name-$sync" mode)" = $sync ] || fail "$name: mode is not $sync"
    [ "$(attr "$name-$sync" reason)" = converged_rtol ] || fail "$name: cuda $sync: $(attr "$name-$sync" reason)"
    near_its "$(attr "$name-host" iterations)" "$(attr "$name-$sync" iterations)" ||
      fail "$name: cuda $sync took $(attr "$name-$sync" iterations) cycles, host $(attr "$name-host" iterations)"
    $PY "$H5CHECK" close "$TMP/$name-host.h5" "$TMP/$name-$sync.h5" --rtol "${TOL:-1e-12}" ||
      fail "$name: cuda $sync differs from host"
  done
  coop_gpu_done "$name"
}

# cg with one cycle as its preconditioner (launch mode: the Krylov kernels
# around the cycle's); the dot products sum in another order than the host's
pc_compare() { # name, options...
  name=$1
  shift
  coop_gpu_case "$name" || return 0
  solve "$name-host" 1 host auto --set solver.name=cg --set solver.pc=mg "$@"
  solve "$name-cuda" 1 cuda auto --set solver.name=cg --set solver.pc=mg "$@"
  [ "$(attr "$name-cuda" mode)" = launch ] || fail "$name: mode is not launch"
  near_its "$(attr "$name-host" iterations)" "$(attr "$name-cuda" iterations)" ||
    fail "$name: cuda took $(attr "$name-cuda" iterations) iterations, host $(attr "$name-host" iterations)"
  $PY "$H5CHECK" close "$TMP/$name-host.h5" "$TMP/$name-cuda.h5" --rtol 1e-9 || fail "$name: cuda differs from host"
  coop_gpu_done "$name"
}

QUICK="p2-v-rbgs p3-w-jacobi p2-fp32 pc-2 heat-2 ckpt r2-v-rbgs refused"
compare p2-v-rbgs --set grid.nx=257 --set grid.ny=190
compare p3-w-jacobi --set grid.dim=3 --set grid.nx=33 --set grid.ny=40 --set grid.nz=29 --set solver.mg_cycle=w \
  --set solver.mg_smoother=jacobi --set problem.type=laplace
# fp32: the Laplace problem, whose residual can fall to about 1e-6 (the sine one's stops near 1e-3)
TOL=1e-4 compare p2-fp32 --set grid.nx=300 --set grid.ny=211 --set solver.precision=fp32 --set problem.type=laplace \
  --set solver.rtol=1e-4
compare p2-f-laplace --set grid.nx=512 --set grid.ny=512 --set solver.mg_cycle=f --set problem.type=laplace
compare p3-v-rbgs --set grid.dim=3 --set grid.nx=64 --set grid.ny=47 --set grid.nz=50
compare p2-jacobi-thin --set grid.nx=1000 --set grid.ny=37 --set solver.mg_smoother=jacobi --set solver.mg_pre=3 \
  --set solver.mg_post=1
# odd sweep counts: the last sweep's copy back from the second array
compare p3-rbgs-odd --set grid.dim=3 --set grid.nx=31 --set grid.ny=26 --set grid.nz=35 --set solver.mg_pre=1 \
  --set solver.mg_post=3
TOL=1e-4 compare p3-fp32 --set grid.dim=3 --set grid.nx=40 --set grid.ny=40 --set grid.nz=40 \
  --set solver.precision=fp32 --set problem.type=laplace --set solver.rtol=1e-4
pc_compare pc-2 --set grid.nx=200 --set grid.ny=170 --set problem.type=laplace
pc_compare pc-3 --set grid.dim=3 --set grid.nx=30 --set grid.ny=33 --set grid.nz=31 --set solver.mg_cycle=w

# the implicit heat step (backward Euler, each step multigrid to 1e-12) on
# the GPU against the host: the same cycles a step, fields to 1e-10; grid
# mode is refused there (its cycles run as launch or graph)
heat_compare() { # name, options...
  name=$1
  shift
  coop_gpu_case "$name" || return 0
  for b in host launch graph; do
    sync=$b be=cuda
    [ $b = host ] && sync=auto be=host
    coop_mpirun 1 "$COOPSOLVE" --backend $be "$INPUTS/quickstart.ini" --set solver.name=heat \
      --set solver.scheme=implicit --set solver.rtol=1e-12 --set run.sync=$sync --set output.monitor_every=0 "$@" \
      --output "$TMP/$name-$b.h5" >"$TMP/$name-$b.out" 2>&1 || { cat "$TMP/$name-$b.out"; fail "$name: $b run"; }
    [ "$(attr "$name-$b" reason)" = completed ] || fail "$name: $b: $(attr "$name-$b" reason)"
  done
  for sync in launch graph; do
    [ "$(attr "$name-$sync" mode)" = $sync ] || fail "$name: mode is not $sync"
    c_host=$(grep -o '[0-9]* cycles in all' "$TMP/$name-host.out") c_gpu=$(grep -o '[0-9]* cycles in all' "$TMP/$name-$sync.out")
    [ -n "$c_host" ] && [ "$c_host" = "$c_gpu" ] || fail "$name: cuda $sync: $c_gpu, host $c_host"
    $PY "$H5CHECK" close "$TMP/$name-host.h5" "$TMP/$name-$sync.h5" --rtol 1e-10 || fail "$name: cuda $sync differs from host"
  done
  rc=0
  "$COOPSOLVE" --backend cuda "$INPUTS/quickstart.ini" --set solver.name=heat --set solver.scheme=implicit --set \
    solver.dt=1e-3 --set run.sync=grid --output "$TMP/$name-grid.h5" >"$TMP/$name-grid.out" 2>"$TMP/$name-grid.err" || rc=$?
  [ $rc = 2 ] && grep -q "^coopsolve: run.sync = grid (from --set): the implicit heat step" "$TMP/$name-grid.err" &&
    [ ! -e "$TMP/$name-grid.h5" ] || { cat "$TMP/$name-grid.err"; fail "$name: grid mode: exit $rc"; }
  coop_gpu_done "$name"
}
heat_compare heat-2 --set grid.nx=150 --set grid.ny=97 --set solver.dt=2e-4 --set solver.max_iter=12
heat_compare heat-3-jacobi --set grid.dim=3 --set grid.nx=30 --set grid.ny=25 --set grid.nz=33 --set solver.dt=1e-3 \
  --set solver.max_iter=6 --set solver.mg_smoother=jacobi

# grid mode cut at max_iter with checkpoints, then restarted: the uninterrupted bits
if coop_gpu_case ckpt; then
  o="--set grid.nx=190 --set grid.ny=120 --set solver.rtol=1e-12"
  solve ck-full 1 cuda grid $o
  solve ck-cut 1 cuda grid $o --set solver.max_iter=3 --set output.checkpoint_every=2
  [ "$(attr ck-cut reason)" = diverged_its ] && [ -f "$TMP/ck-cut.ckpt.h5" ] || fail "ckpt: $(attr ck-cut reason)"
  solve ck-rest 1 cuda grid $o --restart "$TMP/ck-cut.ckpt.h5"
  [ "$(attr ck-rest iterations)" = "$(attr ck-full iterations)" ] ||
    fail "ckpt: restarted took $(attr ck-rest iterations) cycles, uninterrupted $(attr ck-full iterations)"
  $PY "$H5CHECK" same "$TMP/ck-full.h5" "$TMP/ck-rest.h5" >/dev/null || fail "ckpt: restarted field differs"
  coop_gpu_done ckpt
fi

# several ranks on cuda (two or three may share one GPU): the split levels
# a kernel an operation, the gathered ones on rank 0's host, against one host
# rank; graph and grid are refused there
ranks_compare() { # name, ranks, options...
  name=$1 np=$2
  shift 2
  coop_gpu_case "$name" || return 0
  solve "$name-host" 1 host auto "$@"
  solve "$name-cuda" "$np" cuda launch "$@"
  [ "$(attr "$name-cuda" mode)" = launch ] || fail "$name: mode is not launch"
  [ "$(attr "$name-cuda" reason)" = "$(attr "$name-host" reason)" ] ||
    fail "$name: cuda at $np ranks: $(attr "$name-cuda" reason), host $(attr "$name-host" reason)"
  near_its "$(attr "$name-host" iterations)" "$(attr "$name-cuda" iterations)" ||
    fail "$name: cuda at $np ranks took $(attr "$name-cuda" iterations), host $(attr "$name-host" iterations)"
  $PY "$H5CHECK" close "$TMP/$name-host.h5" "$TMP/$name-cuda.h5" --rtol "${TOL:-1e-12}" ||
    fail "$name: cuda at $np ranks differs from host"
  coop_gpu_done "$name"
}
ranks_compare r2-v-rbgs 2 --set grid.nx=203 --set grid.ny=150
ranks_compare r3-w-jacobi 3 --set grid.dim=3 --set grid.nx=41 --set grid.ny=36 --set grid.nz=45 \
  --set solver.mg_cycle=w --set solver.mg_smoother=jacobi --set problem.type=laplace
ranks_compare r2-3d-rbgs 2 --set grid.dim=3 --set grid.nx=37 --set grid.ny=42 --set grid.nz=33 --set solver.mg_pre=1 \
  --set solver.mg_post=3
TOL=1e-4 ranks_compare r2-fp32 2 --set grid.nx=300 --set grid.ny=211 --set solver.precision=fp32 \
  --set problem.type=laplace --set solver.rtol=1e-4
TOL=1e-9 ranks_compare r2-pc 2 --set grid.nx=200 --set grid.ny=170 --set problem.type=laplace --set solver.name=cg \
  --set solver.pc=mg
if coop_gpu_case r2-heat; then
  for b in host cuda; do
    np=1
    [ $b = cuda ] && np=2
    coop_mpirun $np "$COOPSOLVE" --backend $b "$INPUTS/quickstart.ini" --set solver.name=heat --set solver.scheme=implicit \
      --set solver.rtol=1e-12 --set output.monitor_every=0 --set grid.nx=150 --set grid.ny=97 --set solver.dt=2e-4 \
      --set solver.max_iter=8 --output "$TMP/r2-heat-$b.h5" >"$TMP/r2-heat-$b.out" 2>&1 ||
      { cat "$TMP/r2-heat-$b.out"; fail "r2-heat: $b run"; }
  done
  [ "$(attr r2-heat-cuda mode)" = launch ] && [ "$(attr r2-heat-cuda reason)" = completed ] ||
    fail "r2-heat: cuda at 2 ranks: mode $(attr r2-heat-cuda mode), $(attr r2-heat-cuda reason)"
  c_host=$(grep -o '[0-9]* cycles in all' "$TMP/r2-heat-host.out") c_gpu=$(grep -o '[0-9]* cycles in all' "$TMP/r2-heat-cuda.out")
  [ -n "$c_host" ] && [ "$c_host" = "$c_gpu" ] || fail "r2-heat: cuda at 2 ranks: $c_gpu, host $c_host"
  $PY "$H5CHECK" close "$TMP/r2-heat-host.h5" "$TMP/r2-heat-cuda.h5" --rtol 1e-10 || fail "r2-heat: differs from host"
  coop_gpu_done r2-heat
fi
if coop_gpu_case refused; then
  rc=0
  coop_mpirun 2 "$COOPSOLVE" --backend cuda "$MG" --set grid.nx=64 --set grid.ny=64 --set run.sync=graph \
    --output "$TMP/refused.h5" >"$TMP/refused.out" 2>"$TMP/refused.err" || rc=$?
  [ $rc = 2 ] && grep -q "^coopsolve: run.sync = graph (from --set): solver.name = mg on cuda over 2 ranks runs in launch" \
    "$TMP/refused.err" && [ ! -e "$TMP/refused.h5" ] || { cat "$TMP/refused.out" "$TMP/refused.err"; fail "refused: exit $rc"; }
  coop_gpu_done refused
fi
echo "gpu_mg: all cases passed"
