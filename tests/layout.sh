#!/bin/sh
# The HDF5 output of a 2-rank run has the DESIGN.md layout, opens with h5dump
# and h5py, and has its XDMF file beside it.
. "$COOP_SRCDIR/tests/common.sh"
coop_python
command -v h5dump >/dev/null 2>&1 || { echo "SKIP: no h5dump (Debian: hdf5-tools)"; exit 77; }
coop_tmpdir
for dim in 2 3; do
  out="$TMP/layout$dim.h5"
  coop_mpirun 2 "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" --set grid.dim=$dim \
    --set grid.nx=12 --set grid.ny=10 $( [ $dim = 3 ] && echo --set grid.nz=6 ) \
    --set solver.max_iter=50 --set solver.check_every=10 --set output.monitor_every=0 \
    --output "$out" >"$TMP/run.out" 2>&1 || { cat "$TMP/run.out"; fail "run ${dim}D"; }
  grep -q "^#define COOP_HAVE_H5DS 1" "$COOP_BUILDDIR/coop_build.h" 2>/dev/null && scales=--require-scales
  $PY "$H5CHECK" layout ${scales:-} "$out" || fail "layout ${dim}D"
  h5dump -H "$out" >"$TMP/h.txt" || fail "h5dump -H ${dim}D"
  for g in '"input"' '"grid"' '"fields"' '"solver"' '"history"' '"timing"'; do
    grep -q "GROUP $g" "$TMP/h.txt" || fail "h5dump: no group $g"
  done
  h5dump -d /fields/u "$out" >/dev/null || fail "h5dump -d /fields/u"
  xmf="$TMP/layout$dim.xmf"
  [ -f "$xmf" ] || fail "no XDMF file $xmf"
  grep -q "layout$dim.h5:/fields/u" "$xmf" || fail "XDMF does not point at the field"
  [ ! -e "$out.tmp" ] || fail "temporary file left behind"
done

# a rerun that writes no XDMF file (output.xdmf = false, output.fields = false)
# removes the one an earlier run left describing this output; a foreign file
# of that name stays
for off in output.xdmf output.fields; do
  out="$TMP/layout2.h5" xmf="$TMP/layout2.xmf"
  coop_mpirun 2 "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" --set grid.nx=12 --set grid.ny=10 \
    --set solver.max_iter=5 --set output.monitor_every=0 --output "$out" >"$TMP/run.out" 2>&1 || fail "run with XDMF"
  [ -f "$xmf" ] || fail "no XDMF file before the rerun"
  coop_mpirun 2 "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" --set grid.nx=20 --set grid.ny=10 \
    --set solver.max_iter=5 --set output.monitor_every=0 --set $off=false --output "$out" >"$TMP/run.out" 2>&1 ||
    { cat "$TMP/run.out"; fail "rerun with $off = false"; }
  [ ! -e "$xmf" ] || fail "$off = false: the stale XDMF file describing the old output stays"
done
echo "<Xdmf>not about this output</Xdmf>" >"$TMP/layout2.xmf"
coop_mpirun 1 "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" --set grid.nx=12 --set grid.ny=10 \
  --set solver.max_iter=5 --set output.monitor_every=0 --set output.xdmf=false --output "$TMP/layout2.h5" \
  >"$TMP/run.out" 2>&1 || fail "run beside a foreign .xmf"
[ "$(cat "$TMP/layout2.xmf")" = "<Xdmf>not about this output</Xdmf>" ] || fail "a foreign .xmf was touched"
echo "stale XDMF files removed, foreign ones kept"
