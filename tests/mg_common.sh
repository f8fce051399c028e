# Shared by tests/mg.sh and tests/mg_ranks.sh (sourced after tests/common.sh,
# coop_python and coop_tmpdir): runs of inputs/mg_poisson.ini on the host and
# the summary's fields.
MG="$INPUTS/mg_poisson.ini"

# mg_run RANKS NAME ARG...: summary in NAME.out, output NAME.h5; fails on a nonzero exit
mg_run() {
  n=$1 name=$2
  shift 2
  rc=0
  coop_mpirun "$n" "$COOPSOLVE" --backend host "$MG" --output "$TMP/$name.h5" --set output.monitor_every=0 \
    --set output.xdmf=false "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
  [ $rc = 0 ] || { cat "$TMP/$name.out" "$TMP/$name.err"; fail "$name: exit status $rc"; }
}
# field NAME KEY: the summary line's first word after KEY
field() { sed -n "s/^  $2 *\([^ ]*\).*/\1/p" "$TMP/$1.out"; }
# grid arguments: DIM NX NY NZ
grid() { echo "--set grid.dim=$1 --set grid.nx=$2 --set grid.ny=$3$([ $1 = 3 ] && echo " --set grid.nz=$4")"; }
converged() {
  [ "$(field $1 reason)" = converged_rtol ] || { cat "$TMP/$1.out"; fail "$1: $(field $1 reason)"; }
}
