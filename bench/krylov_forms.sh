#!/usr/bin/env bash
# The one-GPU Krylov forms side by side: microseconds per iteration of CG
# (two barriers), single-reduction CG and pipelined CG in grid mode (one
# persistent kernel) and pipelined CG in launch mode, on the matrix-free
# Poisson stencil and two SuiteSparse matrices; then 1138_bus to rtol 1e-12,
# where pipelined CG's recurrences drift (reason, iterations, true residual).
#   bench/krylov_forms.sh BUILD_DIR SRC_DIR OUT_DIR
# Environment: ITERS (default 200) iterations per timing run; BACKEND (cuda).
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: krylov_forms.sh BUILD_DIR SRC_DIR OUT_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
iters=${ITERS:-200} backend=${BACKEND:-cuda}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# one TAG ARGS...: a one-rank solve; prints the per-iteration microseconds
# (or "fail"), keeps the log as OUT/TAG.log
one() {
  local tag=$1
  shift
  if "$build/coopsolve" "$src/inputs/cg_poisson.ini" --backend "$backend" --set solver.max_iter="$iters" \
    --set solver.rtol=0 --set output.monitor_every=0 --output "$out/$tag.h5" "$@" >"$out/$tag.log" 2>&1; then
    sed -n 's/^  per iteration: \([0-9.]*\) us$/\1/p' "$out/$tag.log"
  else
    echo fail
  fi
}

echo "| problem | pc | CG grid us/it | 1-red CG grid us/it | pipelined CG grid us/it | pipelined CG launch us/it |"
echo "| --- | --- | --- | --- | --- | --- |"
for p in poisson:256 poisson:512 poisson:1024 poisson:4096 nos6 1138_bus; do
  case $p in
    poisson:*) n=${p#*:} pc=none args=(--set grid.nx="$n" --set grid.ny="$n") ;;
    *) pc=jacobi args=(--set problem.type=matrix --set "problem.matrix=$src/tests/data/$p.mtx" --set problem.rhs=ones
      --set problem.x0=zero) ;;
  esac
  args+=(--set solver.pc="$pc")
  t=${p/:/-}
  a=$(one "$t-cg" "${args[@]}" --set run.sync=grid --set solver.name=cg)
  b=$(one "$t-cgsr" "${args[@]}" --set run.sync=grid --set solver.name=cg --set solver.cg_single_reduction=true)
  c=$(one "$t-pipe" "${args[@]}" --set run.sync=grid --set solver.name=pipecg)
  d=$(one "$t-pipel" "${args[@]}" --set run.sync=launch --set solver.name=pipecg)
  echo "| $p | $pc | $a | $b | $c | $d |"
done

echo
echo "| 1138_bus, jacobi, rtol 1e-12 | reason | iterations | true residual |"
echo "| --- | --- | --- | --- |"
for m in cg:grid pipecg:grid pipecg:launch; do
  log=$out/acc-${m/:/-}.log
  "$build/coopsolve" "$src/inputs/cg_poisson.ini" --backend "$backend" --set problem.type=matrix \
    --set "problem.matrix=$src/tests/data/1138_bus.mtx" --set problem.rhs=ones --set problem.x0=zero \
    --set solver.pc=jacobi --set solver.rtol=1e-12 --set solver.max_iter=5000 --set "solver.name=${m%:*}" \
    --set "run.sync=${m#*:}" --set output.monitor_every=0 --output "$out/acc.h5" >"$log" 2>&1
  echo "| $m | $(sed -n 's/^  reason *//p' "$log") | $(sed -n 's/^  iterations *//p' "$log") |" \
    "$(sed -n 's/.*true ||b - A x|| //p' "$log") |"
done
