#!/bin/sh
# Multigrid on the host backend, run as a user runs it (inputs/mg_poisson.ini):
#  - V(2,2) red-black Gauss-Seidel to rtol 1e-8 takes at most 10 cycles, and
#    counts within one of each other from 64^2 to 1024^2, from 16^3 to 64^3,
#    and on odd and uneven sizes (101 x 77, 65 x 130, 1000 x 3, 33 x 17 x 40);
#    W and F cycles and the weighted Jacobi smoother converge too;
#  - the error against the exact solution falls 4-fold when h halves;
#  - fp32 converges to rtol 1e-5 (its rounding floor is near 1e-6);
#  - cg with solver.pc = mg: the symmetric V(2,2) cycle converges by a factor
#    near 0.1 as a solver, so kappa(M A) <= 1.1 / 0.9 and CG reaches rtol 1e-8
#    in at most 8 iterations (2D and 3D, uneven sizes); two runs, same bits;
#  - the monitor shows each cycle's factor, the summary the levels;
#  - a run cut short after a checkpoint and restarted ends with the same bits;
#  - the combinations it cannot run are input errors naming the key.
# (Several ranks: tests/mg_ranks.sh.)
. "$COOP_SRCDIR/tests/common.sh"
coop_python
coop_tmpdir
cd "$TMP" || exit 1
. "$COOP_SRCDIR/tests/mg_common.sh"

# run NAME ARG...: one rank
run() { mg_run 1 "$@"; }
errmax() { sed -n 's/^  error       max \([^,]*\),.*/\1/p' "$TMP/$1.out"; }
factor() { sed -n 's/.*mean convergence factor \([0-9.]*\).*/\1/p' "$TMP/$1.out"; }
# the last cycle's factor, from the monitor lines (runs with output.monitor_every = 1)
last() { sed -n 's/^  iter .* factor \([0-9.]*\) .*/\1/p' "$TMP/$1.out" | tail -1; }
py() { $PY -c "import sys; sys.exit(not ($1))"; }

# ---- cycle counts, independent of the size ----
# the Laplace problem: from a zero guess the error is rough next to the
# boundary, so every frequency is there to damp
# (uneven sizes, marked u, may take fewer cycles: 1000 x 3 is nearly 1D)
counts2= counts3= factors= uneven2= uneven3=
for c in "2 64 64 1" "2 128 128 1" "2 256 256 1" "2 512 512 1" "2 1024 1024 1" "2 101 77 1 u" "2 65 130 1 u" \
  "2 1000 3 1 u" "3 16 16 16" "3 32 32 32" "3 64 64 64" "3 33 17 40 u"; do
  set -- $c
  tag=v-$2x$3x$4
  run $tag $(grid $@) --set problem.type=laplace --set output.fields=false --set output.monitor_every=1
  converged $tag
  echo "${1}D $2 x $3$([ $1 = 3 ] && echo " x $4"): $(field $tag iterations) cycles, mean factor $(factor $tag), last $(last $tag)"
  k=$(field $tag iterations)
  case $1$5 in 2) counts2="$counts2 $k" ;; 3) counts3="$counts3 $k" ;; 2u) uneven2="$uneven2 $k" ;; 3u) uneven3="$uneven3 $k" ;; esac
  factors="$factors $(last $tag)"
done
for d in 2 3; do
  eval "reg=\$counts$d unev=\$uneven$d"
  reg=$(echo $reg | tr ' ' ,) unev=$(echo $unev | tr ' ' ,)
  py "max([$reg]) <= 10 and max([$reg]) - min([$reg]) <= 1 and max([$unev]) <= max([$reg]) + 1" ||
    fail "${d}D cycle counts not within one of each other (or over 10): $reg, uneven sizes $unev"
done
py "max([$(echo $factors | tr ' ' ,)]) <= 0.1" || fail "a V(2,2) cycle's factor over 0.1:$factors"

# other cycles and the Jacobi smoother
run w2 --set grid.nx=255 --set grid.ny=200 --set solver.mg_cycle=w
run f3 --set grid.dim=3 --set grid.nx=31 --set grid.ny=40 --set grid.nz=24 --set solver.mg_cycle=f
run j2 --set grid.nx=255 --set grid.ny=200 --set solver.mg_smoother=jacobi
run j3 --set grid.dim=3 --set grid.nx=31 --set grid.ny=40 --set grid.nz=24 --set solver.mg_smoother=jacobi \
  --set solver.mg_cycle=w
for t in w2 f3; do
  converged $t
  py "$(field $t iterations) <= 8" || fail "$t: $(field $t iterations) cycles"
done
for t in j2 j3; do
  converged $t
  py "$(field $t iterations) <= 20" || fail "$t: $(field $t iterations) cycles"
done
echo "W 2D $(field w2 iterations), F 3D $(field f3 iterations), Jacobi 2D $(field j2 iterations) ($(factor j2)), Jacobi W 3D $(field j3 iterations) cycles"

# ---- second order against the exact solution ----
for n in 31 63 127; do run o-$n --set grid.nx=$n --set grid.ny=$n --set solver.rtol=1e-11; done
e1=$(errmax o-31) e2=$(errmax o-63) e3=$(errmax o-127)
echo "errors: $e1 $e2 $e3"
py "3.8 < $e1 / $e2 < 4.2 and 3.8 < $e2 / $e3 < 4.2" || fail "not second order: $e1 $e2 $e3"
run o3 --set grid.dim=3 --set grid.nx=15 --set grid.ny=15 --set grid.nz=15 --set solver.rtol=1e-11
run o3b --set grid.dim=3 --set grid.nx=31 --set grid.ny=31 --set grid.nz=31 --set solver.rtol=1e-11
py "3.7 < $(errmax o3) / $(errmax o3b) < 4.3" || fail "3D not second order: $(errmax o3) $(errmax o3b)"

# ---- fp32 ----
# fp32's residual f - A u cancels terms of size 2 dim u / h^2: its floor is
# near eps32 * 8 / h^2 * |u|, against ||r0|| a relative 1e-3 for the sine
# problem on 255 x 200 but near 1e-6 for Laplace's (r0 there is the boundary
# values over h^2). At rtol 1e-5 the field's error is fp64's (the
# discretisation's, 6e-6) plus fp32's rounding through the solve (1e-5 or so).
run s2 --set grid.nx=255 --set grid.ny=200 --set solver.precision=fp32 --set solver.rtol=1e-5 --set problem.type=laplace
run d2 --set grid.nx=255 --set grid.ny=200 --set solver.rtol=1e-8 --set problem.type=laplace
converged s2
py "$(field s2 iterations) <= 6 and $(errmax s2) < $(errmax d2) + 2e-5" ||
  fail "fp32: $(field s2 iterations) cycles, error $(errmax s2) (fp64 $(errmax d2))"

# ---- cg with solver.pc = mg ----
for c in "2 255 255 1" "2 101 77 1" "3 31 31 31" "3 33 17 40"; do
  set -- $c
  tag=pc-$2x$3x$4
  run $tag --set solver.name=cg --set solver.pc=mg $(grid $@) --set problem.type=laplace
  converged $tag
  echo "cg + mg ${1}D $2 x $3 x $4: $(field $tag iterations) iterations"
  py "$(field $tag iterations) <= 8" || fail "$tag: $(field $tag iterations) iterations"
done
run pc-again --set solver.name=cg --set solver.pc=mg --set grid.nx=101 --set grid.ny=77 --set problem.type=laplace
$PY "$H5CHECK" same "$TMP/pc-101x77x1.h5" "$TMP/pc-again.h5" >/dev/null || fail "cg + mg: two runs differ"
run pc-w --set solver.name=cg --set solver.pc=mg --set grid.nx=101 --set grid.ny=77 --set solver.mg_cycle=w \
  --set solver.mg_smoother=jacobi --set solver.mg_pre=1 --set solver.mg_post=1
converged pc-w
grep -q "pc mg" "$TMP/pc-w.out" && grep -q "W(1,1) cycles, smoother weighted jacobi" "$TMP/pc-w.out" ||
  { cat "$TMP/pc-w.out"; fail "cg + mg: the summary does not show the preconditioner"; }

# ---- monitor and summary ----
run mon --set grid.nx=100 --set grid.ny=60 --set output.monitor_every=1
[ "$(grep -c '^  iter .* factor 0\.' "$TMP/mon.out")" = "$(field mon iterations)" ] ||
  { cat "$TMP/mon.out"; fail "monitor: not a factor a cycle"; }
grep -q "3 levels: 100 x 60, 50 x 60, 25 x 30" "$TMP/mon.out" || { cat "$TMP/mon.out"; fail "summary: no levels"; }
# a V(2,2) cycle smooths four times and restricts and prolongs on the fine
# level: more than two fine residual passes of work, however it is timed
passes=$(sed -n 's/.*a cycle and its check took \([0-9.]*\) fine-level residual passes.*/\1/p' "$TMP/mon.out")
awk -v p="$passes" 'BEGIN { exit !(p + 0 > 2) }' || { cat "$TMP/mon.out"; fail "summary: a cycle is '$passes' residual passes"; }

# ---- checkpoint and restart: the same bits ----
ck="--set grid.nx=90 --set grid.ny=70 --set solver.rtol=1e-12"
run full $ck
run cut $ck --set solver.max_iter=3 --set output.checkpoint_every=2
[ "$(field cut reason)" = diverged_its ] && [ -f "$TMP/cut.ckpt.h5" ] || fail "cut: $(field cut reason), no checkpoint"
run rest $ck --restart "$TMP/cut.ckpt.h5"
[ "$(field rest iterations)" = "$(field full iterations)" ] ||
  fail "restarted: $(field rest iterations) cycles, uninterrupted $(field full iterations)"
$PY "$H5CHECK" same "$TMP/full.h5" "$TMP/rest.h5" >/dev/null || fail "restarted field differs"

# ---- input errors ----
mkdir -p "$TMP/e" && cp "$MG" "$TMP/e/in.ini"
expect() { # WHAT RANKS PREFIX SUBSTRING ARG...
  what=$1
  shift
  coop_expect_input_error "$TMP/e" "$@"
}
expect "mg on a matrix" 1 "solver.name = mg" "problem.type = matrix" in.ini --set problem.type=matrix \
  --set "problem.matrix=$COOP_SRCDIR/tests/data/nos6.mtx"
expect "pc = mg on a matrix" 1 "solver.pc = mg" "grid problem" in.ini --set problem.type=matrix \
  --set "problem.matrix=$COOP_SRCDIR/tests/data/nos6.mtx" --set solver.name=cg --set solver.pc=mg
expect "too small" 1 "grid.nx = 1, grid.ny = 1" "coarsen" in.ini --set grid.nx=1 --set grid.ny=1
expect "pc = mg with bicgstab" 1 "solver.pc = mg" "cg only" in.ini --set solver.name=bicgstab --set solver.pc=mg
expect "pc = mg with an F-cycle" 1 "solver.mg_cycle = f" "v or w" in.ini --set solver.name=cg --set solver.pc=mg \
  --set solver.mg_cycle=f
expect "pc = mg unsymmetric" 1 "solver.mg_post = 1" "equal" in.ini --set solver.name=cg --set solver.pc=mg \
  --set solver.mg_post=1
expect "mg keys elsewhere" 1 "solver.mg_cycle = w" "solver.name = jacobi" in.ini --set solver.name=jacobi \
  --set solver.mg_cycle=w
expect "mg with a pc" 1 "solver.pc = jacobi" "solver.pc = mg" in.ini --set solver.pc=jacobi
expect "no sweeps" 1 "solver.mg_pre = 0" "smoothing" in.ini --set solver.mg_pre=0 --set solver.mg_post=0
echo "mg: all cases passed"
