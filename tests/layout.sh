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

# The names netCDF-4 readers need (with libhdf5_hl: /fields/x, y and /series/x,
# y are /grid's coordinates under a second name; step and residual indexed by
# time and iteration): a heat series passes; layout reports a missing name, a
# copy in place of /grid's dataset, a dimension scale that names no axis, and
# a step not indexed by time.
if [ -n "${scales:-}" ]; then
  coop_mpirun 2 "$COOPSOLVE" --backend host "$INPUTS/heat.ini" --set grid.nx=10 --set grid.ny=8 \
    --set solver.max_iter=20 --set output.every=5 --set output.monitor_every=0 --output "$TMP/heat.h5" \
    >"$TMP/run.out" 2>&1 || { cat "$TMP/run.out"; fail "run heat"; }
  $PY "$H5CHECK" layout --require-scales "$TMP/heat.h5" || fail "layout of a heat series"
  $PY - "$TMP" <<'EOF' || fail "cannot make the damaged files"
import shutil, sys, h5py, numpy as np
tmp = sys.argv[1]

def copy(name):
    shutil.copy(f"{tmp}/heat.h5", f"{tmp}/{name}.h5")
    return h5py.File(f"{tmp}/{name}.h5", "r+")

with copy("s-nolink") as f:
    del f["fields/x"]
with copy("s-copy") as f:
    del f["series/y"]
    f["series/y"] = f["grid/y"][()]
    f["series/y"].make_scale("y")
with copy("s-foreign") as f:
    f["fields/w"] = np.arange(3.0)
    f["fields/w"].make_scale("w")
with copy("s-step") as f:
    f["series/step"].dims[0].detach_scale(f["series/time"])
EOF
  while IFS='|' read -r name has; do
    $PY "$H5CHECK" layout --no-xdmf --require-scales "$TMP/$name.h5" 2>"$TMP/err"
    rc=$?
    [ $rc -eq 1 ] && grep -qF "$TMP/$name.h5: $has" "$TMP/err" ||
      { cat "$TMP/err"; fail "layout $name.h5: exit status $rc, or no '$has'"; }
  done <<'EOF'
s-nolink|/fields/x missing: /grid/x under a second name
s-copy|/series/y: a dimension scale that is not /grid/y
s-foreign|/fields/w: a dimension scale that is not /grid/w
s-step|/series/step: no dimension scale attached (/series/time)
EOF
  echo "netCDF-4 names checked"
fi

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
