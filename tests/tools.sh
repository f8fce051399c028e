#!/bin/sh
# tools/: coopplot.py writes PNGs of the field (2D image, 3D mid-slices, a
# matrix problem's vector) and of the residual history, of the asked size and
# the right way up, and of a [batch] run (the batch plot, and one problem's
# solution where it belongs); h5check.py show prints a run's metadata
# (a batch's too); compare passes
# equal runs and fails a perturbed field, a NaN or another grid; layout wants
# every description and variable-length strings.
. "$COOP_SRCDIR/tests/common.sh"
coop_python
$PY -c 'import matplotlib' 2>/dev/null || { echo "SKIP: no matplotlib (Debian: python3-matplotlib)"; exit 77; }
PLOT="$COOP_SRCDIR/tools/coopplot.py"
coop_tmpdir

run() { # NAME RANKS ARG...: coopsolve on the host backend into $TMP/NAME.h5
  name=$1 n=$2
  shift 2
  coop_mpirun "$n" "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" --set output.monitor_every=0 \
    "$@" --output "$TMP/$name.h5" >"$TMP/run.out" 2>&1 || { cat "$TMP/run.out"; fail "run $name"; }
}

# lap: u = sin(pi x/Lx) sinh(c y)/sinh(c Ly), largest at the top edge's middle
LAP="--set grid.nx=31 --set grid.ny=21 --set grid.lx=2 --set problem.type=laplace --set solver.name=cg --set solver.rtol=1e-10"
run lap 2 $LAP
run lap1 1 $LAP
run cube 2 --set grid.dim=3 --set grid.nx=9 --set grid.ny=7 --set grid.nz=5 --set solver.max_iter=300 \
  --set solver.check_every=20
run mat 2 --set problem.type=matrix --set "problem.matrix=$COOP_SRCDIR/tests/data/nos6.mtx" \
  --set solver.name=cg --set solver.pc=jacobi --set solver.rtol=1e-10

# ---- coopplot -----------------------------------------------------------
# png FILE W H: a PNG (signature, IHDR first) of W x H pixels
png() {
  $PY - "$@" <<'EOF' || fail "$1: not a $2 x $3 PNG"
import struct, sys
path, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "rb") as f:
    head = f.read(24)
ok = head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
got = struct.unpack(">II", head[16:24]) if ok else None
if got != (w, h):
    print(f"{path}: signature ok {ok}, size {got}, expected {(w, h)}")
    sys.exit(1)
EOF
}

$PY "$PLOT" "$TMP/lap.h5" >"$TMP/plot.out" || fail "coopplot lap"
printf '%s\n' "$TMP/lap-u.png" "$TMP/lap-history.png" | cmp -s - "$TMP/plot.out" ||
  { cat "$TMP/plot.out"; fail "coopplot did not name the files it wrote"; }
png "$TMP/lap-u.png" 640 480
png "$TMP/lap-history.png" 640 480
$PY "$PLOT" "$TMP/cube.h5" --out "$TMP/small" --dpi 50 --size 4,3 >/dev/null || fail "coopplot cube"
png "$TMP/small-u.png" 200 150
png "$TMP/small-history.png" 200 150
$PY "$PLOT" "$TMP/mat.h5" --what field >/dev/null || fail "coopplot matrix"
png "$TMP/mat-x.png" 640 480
[ ! -e "$TMP/mat-history.png" ] || fail "--what field wrote a history"

# The 2D image is the right way up (y up, x right): the yellow end of viridis
# (the field's maximum) sits in the upper half, in the middle of the x range.
$PY - "$TMP/lap-u.png" <<'EOF' || fail "2D field image upside down or empty"
import sys
import matplotlib.image as mpimg
import numpy as np
img = mpimg.imread(sys.argv[1])[:, :, :3]
h, w, _ = img.shape
plot = img[:, : int(0.8 * w)]  # left of the colour bar
yellow = (plot[:, :, 0] > 0.85) & (plot[:, :, 1] > 0.8) & (plot[:, :, 2] < 0.35)
rows, cols = np.nonzero(yellow)
if rows.size < 10 or len(np.unique(plot.reshape(-1, 3), axis=0)) < 50:
    print(f"{rows.size} yellow pixels; image nearly uniform?")
    sys.exit(1)
# the image spans about columns 0.08 .. 0.84 w; its middle is near 0.46 w
if not (rows.mean() < 0.45 * h and 0.3 * w < cols.mean() < 0.6 * w):
    print(f"yellow at rows {rows.mean() / h:.2f} h, columns {cols.mean() / w:.2f} w")
    sys.exit(1)
EOF

$PY "$PLOT" "$TMP/lap.h5" --field nosuch --out "$TMP/bad" 2>/dev/null
[ $? -eq 1 ] || fail "coopplot --field nosuch: not exit 1"
[ ! -e "$TMP/bad-nosuch.png" ] || fail "coopplot left a PNG for a missing field"
$PY "$PLOT" "$TMP/nothere.h5" 2>/dev/null
[ $? -eq 1 ] || fail "coopplot on a missing file: not exit 1"
$PY "$PLOT" "$TMP/lap.h5" --what pictures 2>/dev/null
[ $? -eq 2 ] || fail "coopplot --what pictures: not exit 2"

# A [batch] run: coopplot's default there is the batch plot; --problem I adds
# problem I's solution (rhs = 1: a bump, largest in the middle of the image)
coop_mpirun 2 "$COOPSOLVE" --backend host "$INPUTS/batch.ini" --set batch.count=12 \
  --set batch.sizes=uniform:9:20 --set batch.shift=uniform:0:1 --set output.monitor_every=0 --output "$TMP/bt.h5" >"$TMP/run.out" 2>&1 ||
  { cat "$TMP/run.out"; fail "run bt"; }
$PY "$PLOT" "$TMP/bt.h5" --problem 4 >"$TMP/plot.out" || fail "coopplot batch"
printf '%s\n' "$TMP/bt-batch.png" "$TMP/bt-problem-4.png" | cmp -s - "$TMP/plot.out" ||
  { cat "$TMP/plot.out"; fail "coopplot batch: not the files named"; }
png "$TMP/bt-batch.png" 640 480
png "$TMP/bt-problem-4.png" 640 480
$PY - "$TMP/bt-problem-4.png" <<'EOF' || fail "batch problem image: no bump in the middle"
import sys
import matplotlib.image as mpimg
import numpy as np
img = mpimg.imread(sys.argv[1])[:, :, :3]
h, w, _ = img.shape
plot = img[:, : int(0.8 * w)]
yellow = (plot[:, :, 0] > 0.85) & (plot[:, :, 1] > 0.8) & (plot[:, :, 2] < 0.35)
rows, cols = np.nonzero(yellow)
if not 10 < rows.size < 0.2 * plot.shape[0] * plot.shape[1] or \
        not (0.35 * h < rows.mean() < 0.65 * h and 0.3 * w < cols.mean() < 0.6 * w):
    print(f"{rows.size} yellow pixels at rows {rows.mean() / h:.2f} h, columns {cols.mean() / w:.2f} w")
    sys.exit(1)
EOF
$PY "$PLOT" "$TMP/bt.h5" --problem 12 --out "$TMP/btbad" >/dev/null 2>&1
[ $? -eq 1 ] || fail "coopplot --problem 12 of 12: not exit 1"
! ls "$TMP"/btbad* >/dev/null 2>&1 || fail "coopplot wrote a PNG for a run with a missing problem"
$PY "$H5CHECK" show "$TMP/bt.h5" >"$TMP/show.out" || fail "show batch"
for want in "batch      12 problems (generated, " "cg pc jacobi" "converged_rtol 12; iterations "; do
  grep -qF "$want" "$TMP/show.out" || { cat "$TMP/show.out"; fail "show batch: no '$want'"; }
done

# ---- h5check show -------------------------------------------------------
$PY "$H5CHECK" show "$TMP/lap.h5" >"$TMP/show.out" || fail "show"
for want in "program    coopsolve" "grid       2D, 21 x 31 points (yx), decomposition" \
  "solver     cg (host backend" "converged_rtol" "history    " "recurrence, 2-norm" \
  "/fields/u float64 (21, 31)" "timing     solve:" "resolved configuration:" "nx = 31" \
  "points at x 0.0625 .. 1.9375, y 0.0454545 .. 0.954545"; do
  grep -qF "$want" "$TMP/show.out" || { cat "$TMP/show.out"; fail "show: no '$want'"; }
done
! grep -q "input file:" "$TMP/show.out" || fail "show printed the input text unasked"
$PY "$H5CHECK" show --input "$TMP/lap.h5" >"$TMP/show.out" && grep -q "input file:" "$TMP/show.out" ||
  fail "show --input"
$PY "$H5CHECK" show "$TMP/mat.h5" >"$TMP/show.out" &&
  grep -q "vector     675 rows over 2 ranks" "$TMP/show.out" || { cat "$TMP/show.out"; fail "show matrix"; }

# ---- h5check compare ----------------------------------------------------
$PY "$H5CHECK" compare "$TMP/lap.h5" "$TMP/lap.h5" >"$TMP/cmp.out" || fail "compare: a file differs from itself"
grep -q "max abs diff 0.000e+00 .*max rel diff 0.000e+00: ok" "$TMP/cmp.out" || { cat "$TMP/cmp.out"; fail "compare self"; }
$PY "$H5CHECK" compare "$TMP/lap1.h5" "$TMP/lap.h5" --rtol 1e-8 --atol 1e-12 >"$TMP/cmp.out" ||
  { cat "$TMP/cmp.out"; fail "compare: 1 and 2 ranks disagree"; }
# perturb one value by 1e-6, make another NaN
$PY - "$TMP/lap.h5" "$TMP/pert.h5" "$TMP/nan.h5" <<'EOF' || fail "cannot make the perturbed files"
import shutil, sys, h5py
for out, delta in ((sys.argv[2], 1e-6), (sys.argv[3], float("nan"))):
    shutil.copy(sys.argv[1], out)
    with h5py.File(out, "r+") as f:
        f["fields/u"][3, 4] += delta
EOF
$PY "$H5CHECK" compare "$TMP/lap.h5" "$TMP/pert.h5" --rtol 1e-9 >"$TMP/cmp.out"
[ $? -eq 1 ] || { cat "$TMP/cmp.out"; fail "compare passed a perturbed field"; }
grep -q "/fields/u: max abs diff 1.000e-06 at (3, 4), .*: over" "$TMP/cmp.out" ||
  { cat "$TMP/cmp.out"; fail "compare: wrong report of the perturbation"; }
$PY "$H5CHECK" compare "$TMP/lap.h5" "$TMP/pert.h5" --rtol 0 --atol 2e-6 >"$TMP/cmp.out" ||
  { cat "$TMP/cmp.out"; fail "compare: --atol 2e-6 does not cover a 1e-6 change"; }
$PY "$H5CHECK" compare "$TMP/lap.h5" "$TMP/nan.h5" --rtol 1 --atol 1 >"$TMP/cmp.out"
[ $? -eq 1 ] && grep -q "1 non-finite" "$TMP/cmp.out" || { cat "$TMP/cmp.out"; fail "compare passed a NaN"; }
$PY "$H5CHECK" compare "$TMP/lap.h5" "$TMP/cube.h5" >"$TMP/cmp.out"
[ $? -eq 1 ] && grep -q "grids differ" "$TMP/cmp.out" || { cat "$TMP/cmp.out"; fail "compare passed other grids"; }
$PY "$H5CHECK" compare "$TMP/lap.h5" "$TMP/lap1.h5" --fields nosuch >/dev/null 2>&1
[ $? -eq 1 ] || fail "compare passed a missing field"

# ---- h5check layout: descriptions and strings -----------------------------
scales=
grep -q '^#define COOP_HAVE_H5DS 1' "$COOP_BUILDDIR/coop_build.h" 2>/dev/null && scales=--require-scales
$PY "$H5CHECK" layout $scales "$TMP/lap.h5" || fail "layout 2D"
$PY "$H5CHECK" layout $scales "$TMP/cube.h5" || fail "layout 3D"
$PY "$H5CHECK" layout "$TMP/mat.h5" || fail "layout matrix"
$PY - "$TMP/lap.h5" "$TMP/bytes.h5" "$TMP/nodesc.h5" <<'EOF' || fail "cannot make the broken files"
import shutil, sys, h5py, numpy as np
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:  # a fixed-length string: h5py reads bytes
    del f.attrs["program"]
    f.attrs.create("program", np.bytes_("coopsolve"))
shutil.copy(sys.argv[1], sys.argv[3])
with h5py.File(sys.argv[3], "r+") as f:
    del f["history/residual"].attrs["description"]
EOF
cp "$TMP/lap.xmf" "$TMP/bytes.xmf"
cp "$TMP/lap.xmf" "$TMP/nodesc.xmf"
$PY "$H5CHECK" layout "$TMP/bytes.h5" 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "attribute program .*expected a variable-length UTF-8 string" "$TMP/err" ||
  { cat "$TMP/err"; fail "layout passed a fixed-length string"; }
$PY "$H5CHECK" layout "$TMP/nodesc.h5" 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "/history/residual: attribute description missing" "$TMP/err" ||
  { cat "$TMP/err"; fail "layout passed a dataset without description"; }
exit 0
