#!/bin/sh
# ParaView reads the XDMF files right: a 2D and a 3D output (sine problem,
# mode 1, host backend, 2 ranks, a box of unequal sides) open in ParaView's own
# Python with every XDMF reader it offers (XDMFReader, Xdmf3ReaderS and T, and
# whatever OpenDataFile picks), with the physical bounds (first interior point
# h to L - h on each axis; a 2D grid flat in the XY plane at z = 0) and the
# field's maximum at the box centre, where the exact solution has it (odd point
# counts put a grid point there); and a heat run's time series plays in the
# XDMF Reader, one time step per snapshot with its values. Needs pvpython
# (Debian: paraview and python3-paraview) and, for the series, python3-h5py;
# nothing is rendered, so no X display is needed.
. "$COOP_SRCDIR/tests/common.sh"
PVPYTHON=${PVPYTHON:-pvpython}
command -v "$PVPYTHON" >/dev/null 2>&1 ||
  { echo "SKIP: no pvpython (Debian: apt install paraview python3-paraview)"; exit 77; }
coop_tmpdir

cat >"$TMP/check.py" <<'EOF'
"""check.py XMF NX NY NZ LX LY LZ (NZ = 0: a 2D grid)."""
import sys
from paraview import servermanager as sm
from paraview import simple

xmf = sys.argv[1]
n = [int(a) for a in sys.argv[2:5]]
box = [float(a) for a in sys.argv[5:8]]
two_d = n[2] == 0
bad = []


def expect(cond, msg):
    if not cond:
        bad.append(msg)


def bounds_want():
    b = []
    for a in range(3):
        if a == 2 and two_d:
            b += [0.0, 0.0]
        else:
            h = box[a] / (n[a] + 1)
            b += [h, box[a] - h]
    return b


def check(reader, name):
    reader.UpdatePipeline()
    d = sm.Fetch(reader)
    if d.IsA("vtkMultiBlockDataSet"):
        d = d.GetBlock(0)
    dims = list(d.GetDimensions())
    want_dims = [n[0], n[1], 1 if two_d else n[2]]
    expect(dims == want_dims, f"{name}: dimensions {dims}, expected {want_dims}")
    got, want = list(d.GetBounds()), bounds_want()
    expect(all(abs(g - w) <= 1e-12 * max(box) for g, w in zip(got, want)),
           f"{name}: bounds {got}, expected {want}")
    u = d.GetPointData().GetArray("u")
    expect(u is not None, f"{name}: no point array u")
    if u is None:
        return
    vals = [u.GetValue(i) for i in range(u.GetNumberOfTuples())]
    expect(len(vals) == n[0] * n[1] * (1 if two_d else n[2]), f"{name}: {len(vals)} values")
    k = max(range(len(vals)), key=vals.__getitem__)
    p = d.GetPoint(k)
    centre = [box[0] / 2, box[1] / 2, 0.0 if two_d else box[2] / 2]
    expect(all(abs(a - b) <= 1e-9 for a, b in zip(p, centre)),
           f"{name}: maximum {vals[k]:.6g} at {list(p)}, expected at the centre {centre}")
    # the exact solution's maximum is 1; second order on these grids is within 2%
    expect(abs(vals[k] - 1.0) < 0.02, f"{name}: maximum {vals[k]:.6g}, expected about 1")
    print(f"{name}: dims {dims} bounds {[round(v, 12) for v in got]} max {vals[k]:.6f} at {list(p)}")


check(simple.XDMFReader(FileNames=[xmf]), "XDMFReader")
check(simple.Xdmf3ReaderS(FileName=[xmf]), "Xdmf3ReaderS")
check(simple.Xdmf3ReaderT(FileName=[xmf]), "Xdmf3ReaderT")
check(simple.OpenDataFile(xmf), "OpenDataFile")
for m in bad:
    print("FAIL:", m)
sys.exit(1 if bad else 0)
EOF

# dim nx ny nz lx ly lz: unequal sides so a swapped axis shows in the bounds
for run in "2 15 11 0 2 1 1" "3 11 9 7 1 1.5 2"; do
  set -- $run
  dim=$1
  out="$TMP/pv$dim.h5"
  coop_mpirun 2 "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" --set grid.dim=$dim \
    --set grid.nx=$2 --set grid.ny=$3 --set grid.lx=$5 --set grid.ly=$6 \
    $( [ $dim = 3 ] && echo --set grid.nz=$4 --set grid.lz=$7 ) --set solver.name=cg \
    --set solver.rtol=1e-10 --set solver.max_iter=1000 --set output.monitor_every=0 \
    --output "$out" >"$TMP/run.out" 2>&1 || { cat "$TMP/run.out"; fail "run ${dim}D"; }
  # absolute path: ParaView 5.11's Xdmf3 readers misjoin a bare relative name
  # with the HDF5 file's ("a.xmfa.h5"); the GUI always passes absolute paths
  (cd "$TMP" && env -u DISPLAY timeout 120 "$PVPYTHON" --force-offscreen-rendering \
    "$TMP/check.py" "$TMP/pv$dim.xmf" "$2" "$3" "$4" "$5" "$6" "$7") >"$TMP/pv.out" 2>&1
  rc=$?
  [ $rc -ne 124 ] || { cat "$TMP/pv.out"; fail "pvpython ${dim}D: no answer within 120 s"; }
  [ $rc -eq 0 ] || { grep -v '^ *[0-9][0-9]* *0x' "$TMP/pv.out"; fail "pvpython ${dim}D (exit $rc)"; }
  grep -q '^OpenDataFile: ' "$TMP/pv.out" || { cat "$TMP/pv.out"; fail "pvpython ${dim}D: no result"; }
done

# heat's time series: ParaView's XDMF Reader (the one that reads HyperSlab
# DataItems; VTK's Xdmf3 readers skip them) sees one time step per snapshot at
# /series/time, and at each the snapshot of /series/u
cat >"$TMP/series.py" <<'PYEOF'
"""series.py XMF TIMES MAXES: comma-separated times and per-snapshot maxima of u."""
import sys
from paraview import servermanager as sm
from paraview import simple

times = [float(t) for t in sys.argv[2].split(",")]
maxes = [float(m) for m in sys.argv[3].split(",")]
r = simple.XDMFReader(FileNames=[sys.argv[1]])
r.UpdatePipelineInformation()
got = list(r.TimestepValues)
bad = [] if got == times else [f"time steps {got}, expected {times}"]
for t, want in zip(times, maxes):
    r.UpdatePipeline(t)
    d = sm.Fetch(r)
    if d.IsA("vtkMultiBlockDataSet"):
        d = d.GetBlock(0)
    u = d.GetPointData().GetArray("u")
    if u is None or abs(u.GetRange()[1] - want) > 1e-12 * abs(want):
        bad.append(f"t = {t}: max u {None if u is None else u.GetRange()[1]}, expected {want}")
for m in bad:
    print("FAIL:", m)
print(f"XDMFReader: {len(got)} time steps")
sys.exit(1 if bad else 0)
PYEOF
if ! (coop_python >/dev/null); then
  echo "skip: the heat time series (no python3 with h5py to read the expected values)"
  exit 0
fi
coop_python
coop_mpirun 2 "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" --set solver.name=heat --set grid.nx=15 \
  --set grid.ny=11 --set grid.lx=2 --set solver.max_iter=50 --set output.every=20 \
  --set output.monitor_every=0 --output "$TMP/heat.h5" >"$TMP/run.out" 2>&1 || { cat "$TMP/run.out"; fail "heat run"; }
times=$($PY -c 'import h5py,sys; print(",".join(repr(float(t)) for t in h5py.File(sys.argv[1])["series/time"][()]))' "$TMP/heat.h5")
maxes=$($PY -c 'import h5py,sys; print(",".join(repr(float(u.max())) for u in h5py.File(sys.argv[1])["series/u"][()]))' "$TMP/heat.h5")
(cd "$TMP" && env -u DISPLAY timeout 120 "$PVPYTHON" --force-offscreen-rendering "$TMP/series.py" \
  "$TMP/heat.xmf" "$times" "$maxes") >"$TMP/pv.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { grep -v '^ *[0-9][0-9]* *0x' "$TMP/pv.out"; fail "pvpython: the heat time series (exit $rc)"; }
grep '^XDMFReader: ' "$TMP/pv.out"
