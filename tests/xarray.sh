#!/bin/sh
# netCDF-4 readers open the output (docs/xarray.md): xarray with the h5netcdf
# engine gives /fields as labelled arrays, dims (z,) y, x whose coordinates are
# the interior points i L / (n + 1), i = 1 .. n, and whose values are the bytes
# h5py reads from the same dataset; 2D and 3D, fp64 and fp32, at 1 and 2 ranks.
# A heat run's /series opens as u(time, [z,] y, x) with step(time), /history as
# residual(iteration). ncdump -h (netcdf-bin), where installed, lists the same
# dimensions and ncdump reads every value. h5check.py layout --require-scales
# passes each file.
. "$COOP_SRCDIR/tests/common.sh"
grep -q '^#define COOP_HAVE_H5DS 1' "$COOP_BUILDDIR/coop_build.h" 2>/dev/null ||
  { echo "SKIP: built without HDF5 dimension scales (libhdf5_hl), which netCDF-4 readers need"; exit 77; }
PY=
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import h5py, numpy, xarray, h5netcdf' 2>/dev/null; then
    PY=$py
    break
  fi
done
[ -n "$PY" ] || { echo "SKIP: no python3 with h5py, xarray and h5netcdf (Debian: python3-xarray python3-h5netcdf)"; exit 77; }
coop_tmpdir

# run NAME RANKS INPUT ARG...: coopsolve on the host backend into $TMP/NAME.h5
run() {
  name=$1 n=$2 input=$3
  shift 3
  coop_mpirun "$n" "$COOPSOLVE" --backend host "$INPUTS/$input" --set output.monitor_every=0 "$@" \
    --output "$TMP/$name.h5" >"$TMP/run.out" 2>&1 || { cat "$TMP/run.out"; fail "run $name"; }
}

# check NAME SHAPE LENGTHS: SHAPE and LENGTHS (box lengths) in dataset order, comma-separated
check() {
  $PY - "$TMP/$1.h5" "$2" "$3" <<'EOF' || fail "$1: xarray"
import sys
import warnings
import h5py
import numpy as np
import xarray as xr

path = sys.argv[1]
shape = tuple(int(v) for v in sys.argv[2].split(","))
lengths = [float(v) for v in sys.argv[3].split(",")]
axes = tuple("zyx"[3 - len(shape):])


def fail(msg):
    sys.exit(f"{path}: {msg}")


def same(a, h5, where):
    """xarray's values are h5py's: dtype, shape and bytes."""
    b = h5[()]
    if a.dtype != b.dtype or a.shape != b.shape or a.values.tobytes() != b.tobytes():
        fail(f"{where}: xarray reads {a.dtype}{a.shape}, h5py {b.dtype}{b.shape}, or other values")


def coords(ds, where):
    for a, n, length in zip(axes, shape, lengths):
        if a not in ds.coords or ds[a].dims != (a,) or ds.sizes[a] != n:
            fail(f"{where}: no coordinate {a} of {n} points ({dict(ds.sizes)})")
        want = np.arange(1, n + 1) * (length / (n + 1))  # interior points of [0, L]
        if ds[a].dtype != np.float64 or not np.allclose(ds[a].values, want, rtol=1e-13, atol=0):
            fail(f"{where}: coordinate {a} is {ds[a].values}, expected {want}")


def open_group(group):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a reader that guesses (phony dims) says so in a warning
        return xr.open_dataset(path, engine="h5netcdf", group=group)


with h5py.File(path, "r") as f:
    ds = open_group("fields")
    fields = sorted(n for n in f["fields"] if n not in axes)
    if not fields or sorted(ds.data_vars) != fields:
        fail(f"/fields: xarray's variables {sorted(ds.data_vars)}, h5py's fields {fields}")
    for name in fields:
        if ds[name].dims != axes:
            fail(f"/fields/{name}: dims {ds[name].dims}, expected {axes}")
        same(ds[name], f["fields"][name], f"/fields/{name}")
        if not ds[name].attrs.get("description"):
            fail(f"/fields/{name}: no description in xarray's attrs")
    coords(ds, "/fields")
    # a point picked by coordinate is the element h5py finds there
    pick = {a: ds[a].values[len(ds[a]) // 2] for a in axes}
    idx = tuple(len(ds[a]) // 2 for a in axes)
    if ds["u"].sel(pick).item() != f["fields/u"][idx]:
        fail("/fields/u: .sel by coordinates does not give the element h5py reads there")
    ds.close()

    h = open_group("history")
    if h["residual"].dims != ("iteration",) or "iteration" not in h.indexes:
        fail(f"/history: residual dims {h['residual'].dims}, expected ('iteration',)")
    same(h["residual"], f["history/residual"], "/history/residual")
    same(h["iteration"], f["history/iteration"], "/history/iteration")
    h.close()

    if "series" in f:
        s = open_group("series")
        if s["u"].dims != ("time",) + axes or s["step"].dims != ("time",):
            fail(f"/series: u dims {s['u'].dims}, step dims {s['step'].dims}")
        same(s["u"], f["series/u"], "/series/u")
        same(s["step"], f["series/step"], "/series/step")
        same(s["time"], f["series/time"], "/series/time")
        coords(s, "/series")
        last = s["u"].isel(time=-1).values
        if "u" in f["fields"] and last.tobytes() != f["fields/u"][()].tobytes():
            fail("/series: u at the last time is not /fields/u")
        s.close()
EOF
  $PY "$H5CHECK" layout --require-scales "$TMP/$1.h5" || fail "$1: layout"
}

# ncdump_check NAME DIMS TYPE: ncdump -h names the dimensions where netCDF-4 looks
ncdump_check() {
  command -v ncdump >/dev/null 2>&1 || return 0
  ncdump -h "$TMP/$1.h5" >"$TMP/cdl" 2>"$TMP/err" || { cat "$TMP/err"; fail "$1: ncdump -h"; }
  awk '/^group: fields \{/ { g = 1 } g && /^  } \/\/ group fields/ { g = 0 } g' "$TMP/cdl" >"$TMP/fields.cdl"
  grep -qF "$3 u($2) ;" "$TMP/fields.cdl" || { cat "$TMP/cdl"; fail "$1: ncdump: no '$3 u($2)' in group fields"; }
  grep -qF "int64 iteration(iteration) ;" "$TMP/cdl" && grep -qF "double residual(iteration) ;" "$TMP/cdl" ||
    { cat "$TMP/cdl"; fail "$1: ncdump: /history not indexed by iteration"; }
  ncdump "$TMP/$1.h5" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "$1: ncdump cannot read every value"; }
}

SMALL="--set solver.max_iter=40 --set solver.check_every=10"
G2="--set grid.nx=12 --set grid.ny=9 --set grid.lx=2 --set grid.ly=1.5"
G3="--set grid.dim=3 --set grid.nx=7 --set grid.ny=6 --set grid.nz=5 --set grid.lx=2 --set grid.lz=0.5"
for n in 1 2; do
  run p2-$n $n quickstart.ini $G2 $SMALL
  check p2-$n 9,12 1.5,2
  run p3-$n $n quickstart.ini $G3 $SMALL --set solver.precision=fp32
  check p3-$n 5,6,7 0.5,1,2
done
ncdump_check p2-2 "y, x" double
ncdump_check p3-2 "z, y, x" float
echo "xarray opens /fields and /history of 2D and 3D runs at 1 and 2 ranks"

# heat with snapshots: /series as u(time, ...) and step(time)
HEAT="--set solver.max_iter=20 --set output.every=5"
run h2 2 heat.ini --set grid.nx=10 --set grid.ny=8 $HEAT
check h2 8,10 1,1
run h3 2 heat.ini --set grid.dim=3 --set grid.nx=6 --set grid.ny=5 --set grid.nz=4 --set grid.ly=3 $HEAT
check h3 4,5,6 1,3,1
if command -v ncdump >/dev/null 2>&1; then
  ncdump_check h3 "z, y, x" double
  grep -qF "double u(time, z, y, x) ;" "$TMP/cdl" && grep -qF "int64 step(time) ;" "$TMP/cdl" ||
    { cat "$TMP/cdl"; fail "h3: ncdump: /series not u(time, z, y, x), step(time)"; }
  echo "ncdump -h lists the same dimensions"
else
  echo "no ncdump (Debian: netcdf-bin): its checks skipped"
fi
echo "xarray opens /series of 2D and 3D heat runs"
