#!/bin/sh
# solver.error_if_not_converged: a solve that ends without converging (here
# diverged_its at max_iter) exits with status 4, one message on rank 0, its
# output written whole; a converged one, a heat run and the key's default
# exit 0. The same for batches (any problem unconverged), at 1 and 2 ranks.
. "$COOP_SRCDIR/tests/common.sh"
coop_python
coop_tmpdir

expect() { # STATUS NAME RANKS INPUT ARG...
  want=$1 name=$2 n=$3 in=$4
  shift 4
  rc=0
  coop_mpirun "$n" "$COOPSOLVE" --backend host "$in" --set output.monitor_every=0 "$@" \
    --output "$TMP/$name.h5" >"$TMP/$name.out" 2>"$TMP/$name.err" </dev/null || rc=$?
  [ "$rc" = "$want" ] || { cat "$TMP/$name.err"; fail "$name: exit status $rc, not $want"; }
  $PY "$H5CHECK" show "$TMP/$name.h5" >/dev/null || fail "$name: the output is not whole"
  if [ "$want" = 4 ]; then
    [ "$(grep -c '^coopsolve: .*solver.error_if_not_converged = true: exit status 4' "$TMP/$name.err")" = 1 ] ||
      { cat "$TMP/$name.err"; fail "$name: not one message"; }
  fi
  echo "$name: exit status $rc"
}
ON="--set solver.error_if_not_converged=true"
for n in 1 2; do
  expect 4 jac-its-$n $n "$INPUTS/quickstart.ini" --set solver.max_iter=10 $ON
  expect 0 jac-conv-$n $n "$INPUTS/quickstart.ini" --set grid.nx=20 --set grid.ny=20 --set solver.rtol=1e-3 \
    --set solver.max_iter=100000 $ON
  expect 0 jac-its-default-$n $n "$INPUTS/quickstart.ini" --set solver.max_iter=10
  expect 4 cg-its-$n $n "$INPUTS/matrix.ini" --set "problem.matrix=$COOP_SRCDIR/tests/data/nos6.mtx" \
    --set solver.max_iter=5 $ON
  expect 0 heat-$n $n "$INPUTS/quickstart.ini" --set solver.name=heat --set solver.max_iter=20 $ON
  expect 4 batch-its-$n $n "$INPUTS/batch.ini" --set batch.count=12 --set solver.max_iter=3 $ON
  expect 0 batch-conv-$n $n "$INPUTS/batch.ini" --set batch.count=12 $ON
done
grep -q "12 of 12 problems ended without converging (problem 0: diverged_its)" "$TMP/batch-its-2.err" ||
  { cat "$TMP/batch-its-2.err"; fail "batch: message"; }
echo "converged: all cases passed"
