#!/bin/sh
# A run that stops at solver.max_iter with checkpoints on writes a final
# checkpoint there, whether or not the iteration is a multiple of
# output.checkpoint_every, and a restart with a larger max_iter goes on from
# it to the same bits (fields and history) as one run to the larger count.
# Each method (Jacobi, CG in both forms, pipelined CG, BiCGStab, heat), host
# backend, 1 and 2 ranks. Without checkpoints no checkpoint file appears.
. "$COOP_SRCDIR/tests/common.sh"
coop_python
coop_tmpdir
INPUTS=$(cd "$INPUTS" && pwd) DATA=$(cd "$COOP_SRCDIR/tests/data" && pwd)
H5CHECK=$(cd "$(dirname "$H5CHECK")" && pwd)/h5check.py
case $COOPSOLVE in /*) ;; *) COOPSOLVE=$(pwd)/$COOPSOLVE ;; esac
cd "$TMP" || fail "cd $TMP"

run() { # name ranks args...: a run that must succeed
  name=$1 n=$2
  shift 2
  rc=0
  coop_mpirun "$n" "$COOPSOLVE" --backend host --set output.monitor_every=0 --output "$name.h5" "$@" \
    >"$name.out" 2>"$name.err" || rc=$?
  [ $rc = 0 ] || { cat "$name.out" "$name.err"; fail "$name: exit status $rc"; }
}

ckpt_iteration() {
  $PY -c 'import h5py, sys; print(int(h5py.File(sys.argv[1], "r")["checkpoint"].attrs["iteration"]))' "$1"
}

same() { # fields and the residual history bit for bit
  $PY "$H5CHECK" same "$1" "$2" >/dev/null || fail "$1 and $2: fields differ"
  $PY - "$1" "$2" <<'EOF' || fail "$1 and $2: histories differ"
import sys, h5py, numpy as np
a, b = (h5py.File(f, "r")["history"] for f in sys.argv[1:3])
for k in a:
    if not np.array_equal(a[k][()], b[k][()]):
        sys.exit(f"/history/{k} differs")
EOF
}

# case NAME RANKS STOP EVERY MORE args...: to STOP with checkpoints every
# EVERY, then on to MORE from the final checkpoint, against one run to MORE
case_() {
  c=$1 n=$2 stop=$3 every=$4 more=$5
  shift 5
  run $c-part "$n" "$@" --set solver.max_iter=$stop --set output.checkpoint_every=$every
  [ -f $c-part.ckpt.h5 ] || fail "$c: no checkpoint at max_iter $stop (every $every)"
  got=$(ckpt_iteration $c-part.ckpt.h5) || fail "$c: unreadable checkpoint"
  [ "$got" = "$stop" ] || fail "$c: the last checkpoint is of iteration $got, not max_iter $stop"
  run $c-on "$n" "$@" --set solver.max_iter=$more --restart $c-part.ckpt.h5
  run $c-full "$n" "$@" --set solver.max_iter=$more
  same $c-full.h5 $c-on.h5
  echo "$c: final checkpoint at $stop (every $every), continued to $more: same bits"
}

jac="$INPUTS/poisson2d.ini --set grid.nx=40 --set grid.ny=30 --set solver.name=jacobi --set solver.check_every=10 --set solver.rtol=0"
mat="$INPUTS/matrix.ini --set problem.matrix=$DATA/nos6.mtx --set solver.rtol=0"
grd="$INPUTS/cg_poisson.ini --set problem.type=laplace --set grid.nx=30 --set grid.ny=20 --set solver.rtol=0"
heat="$INPUTS/heat.ini --set grid.nx=40 --set grid.ny=30 --set output.every=0"
for n in 1 2; do
  case_ jac-$n $n 200 70 300 $jac
  case_ cg-$n $n 30 30 45 $grd --set solver.name=cg
  case_ cgsr-$n $n 30 25 45 $mat --set solver.name=cg --set solver.cg_single_reduction=true
  case_ pipecg-$n $n 40 25 60 $mat --set solver.name=pipecg
  case_ bicgstab-$n $n 20 15 30 $grd --set solver.name=bicgstab
  case_ heat-$n $n 90 40 150 $heat
done

# no checkpoints asked for: none written at max_iter
run plain 1 $grd --set solver.name=cg --set solver.max_iter=20
[ ! -e plain.ckpt.h5 ] || fail "a checkpoint was written without output.checkpoint_every"
ls ./*.ckpt.h5.* 2>/dev/null && fail "temporary checkpoint files left"
exit 0
