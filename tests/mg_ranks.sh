#!/bin/sh
# Multigrid on several ranks (host backend) against one rank, as a user runs it
# (inputs/mg_poisson.ini):
#  - 2 and 3 ranks (3: an uneven split) on odd and uneven 2D sizes and a 3D
#    one, V and W cycles, both smoothers: the same cycle counts and fields
#    within 1e-12 of one rank's (they are the same bits: red-black colours by
#    global parity, each coarse value is summed in one order, the coarse
#    levels are solved whole on rank 0);
#  - cg with solver.pc = mg at 2 ranks: the same iterations (only cg's dot
#    products differ, in their last bits), solutions within 1e-10;
#  - 4 ranks on 40 x 40, and boxes that are empty at the gathered level (3
#    ranks on 3 x 3, 4 on 2 x 2);
#  - fp32 at 2 ranks converges;
#  - a 2-rank run cut short after a checkpoint and restarted at 2 ranks ends
#    with the bits of an uninterrupted 2-rank run.
. "$COOP_SRCDIR/tests/common.sh"
coop_python
coop_tmpdir
cd "$TMP" || exit 1
. "$COOP_SRCDIR/tests/mg_common.sh"

# run RANKS NAME ARG...: and it converged
run() {
  mg_run "$@"
  converged "$2"
}

# against RTOL NAME ARG...: one rank, then 2 and 3 (RANKS to change), same counts, fields within RTOL
against() {
  rtol=$1 tag=$2
  shift 2
  run 1 $tag-1 "$@"
  line="$tag: 1 rank $(field $tag-1 iterations)"
  for n in ${RANKS:-2 3}; do
    run $n $tag-$n "$@"
    [ "$(field $tag-$n iterations)" = "$(field $tag-1 iterations)" ] ||
      fail "$tag: $(field $tag-$n iterations) at $n ranks, $(field $tag-1 iterations) at 1"
    $PY "$H5CHECK" close --rtol "$rtol" --fields u "$TMP/$tag-1.h5" "$TMP/$tag-$n.h5" >/dev/null ||
      fail "$tag: the fields at 1 and $n ranks differ by more than $rtol"
    line="$line, $n ranks $(field $tag-$n iterations)"
  done
  echo "$line"
}

# ---- 2 and 3 ranks against one ----
against 1e-12 v-129x97 $(grid 2 129 97) --set problem.type=laplace
against 1e-12 w-100x61 $(grid 2 100 61) --set solver.mg_cycle=w --set solver.mg_smoother=jacobi
against 1e-12 v-301x250 $(grid 2 301 250) # levels 0 to 2 split
against 1e-12 j-300x201 $(grid 2 300 201) --set solver.mg_smoother=jacobi --set problem.type=laplace
against 1e-12 v-33x17x40 $(grid 3 33 17 40) --set problem.type=laplace
against 1e-12 w-33x17x40 $(grid 3 33 17 40) --set solver.mg_cycle=w --set solver.mg_smoother=jacobi
against 1e-12 f-40x41x39 $(grid 3 40 41 39) --set solver.mg_cycle=f
grep -q "levels 0 to 2 split over 3 ranks, from 3 on gathered on rank 0" "$TMP/v-301x250-3.out" ||
  { cat "$TMP/v-301x250-3.out"; fail "summary: not the split levels"; }

# ---- cg with solver.pc = mg ----
RANKS=2 against 1e-10 pc-129x97 $(grid 2 129 97) --set solver.name=cg --set solver.pc=mg --set problem.type=laplace
RANKS=2 against 1e-10 pc-33x17x40 $(grid 3 33 17 40) --set solver.name=cg --set solver.pc=mg --set solver.mg_cycle=w

# ---- small boxes: gathered at once, some empty there ----
RANKS=4 against 1e-12 v-40x40 $(grid 2 40 40)
RANKS=3 against 1e-12 v-3x3 $(grid 2 3 3)
RANKS=4 against 1e-12 v-2x2 $(grid 2 2 2)

# ---- fp32 ----
run 2 s2 $(grid 2 255 200) --set solver.precision=fp32 --set solver.rtol=1e-5 --set problem.type=laplace
[ "$(field s2 iterations)" -le 6 ] || fail "fp32 at 2 ranks: $(field s2 iterations) cycles"

# ---- checkpoint and restart at 2 ranks: the same bits ----
ck="--set grid.nx=90 --set grid.ny=70 --set solver.rtol=1e-12"
run 2 full $ck
rc=0
coop_mpirun 2 "$COOPSOLVE" --backend host "$MG" --output "$TMP/cut.h5" --set output.monitor_every=0 \
  --set output.xdmf=false $ck --set solver.max_iter=3 --set output.checkpoint_every=2 >"$TMP/cut.out" 2>&1 || rc=$?
[ $rc = 0 ] && [ "$(field cut reason)" = diverged_its ] && [ -f "$TMP/cut.ckpt.h5" ] ||
  { cat "$TMP/cut.out"; fail "cut: status $rc, $(field cut reason), no checkpoint"; }
run 2 rest $ck --restart "$TMP/cut.ckpt.h5"
[ "$(field rest iterations)" = "$(field full iterations)" ] ||
  fail "restarted: $(field rest iterations) cycles, uninterrupted $(field full iterations)"
$PY "$H5CHECK" same --fields u "$TMP/full.h5" "$TMP/rest.h5" >/dev/null || fail "restarted field differs"
echo "mg_ranks: all cases passed"
