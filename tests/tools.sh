#!/bin/sh
# tools/: coopplot.py writes PNGs of the field (2D image, 3D mid-slices, a
# matrix problem's vector) and of the residual history, of the asked size and
# the right way up, and of a [batch] run (the batch plot, and one problem's
# solution where it belongs); h5check.py show prints a run's metadata
# (a batch's too); compare passes
# equal runs and fails a perturbed field, a NaN or another grid; layout wants
# every description and variable-length strings. compare, same and close read
# a batch run's /batch/solution; coopplot draws u of a heat run written
# without fields from /series/u. Damaged and foreign files (a dataset for a
# group, a string for an integer, a 2-D history, bad checksums, a text file,
# falling offsets, bytes that are not UTF-8, no file) give one line naming the
# file and the object, exit 2, from every command that reads them, and so does
# a python3 on PATH without h5py.
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
if $PY -c 'import h5py, sys; sys.exit("x" not in h5py.File(sys.argv[1])["fields"])' "$TMP/lap.h5"; then
  $PY "$PLOT" "$TMP/lap.h5" --field x --out "$TMP/bad" 2>"$TMP/err"
  [ $? -eq 1 ] && grep -q "/fields/x is a coordinate of the grid" "$TMP/err" ||
    { cat "$TMP/err"; fail "coopplot --field x of a grid: not exit 1 naming the coordinate"; }
fi
$PY "$PLOT" "$TMP/nothere.h5" 2>/dev/null
[ $? -eq 2 ] || fail "coopplot on a missing file: not exit 2"
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
# /fields/x and y (with libhdf5_hl) are /grid's coordinates for netCDF-4 readers, not fields
! grep -q "/fields/[xyz] " "$TMP/show.out" || { cat "$TMP/show.out"; fail "show listed a coordinate as a field"; }
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
[ "$(grep -c '^/fields/' "$TMP/cmp.out")" = 1 ] || { cat "$TMP/cmp.out"; fail "compare: not /fields/u alone"; }
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

# ---- a batch run's solutions: compare, same and close read /batch/solution ----
coop_mpirun 1 "$COOPSOLVE" --backend host "$INPUTS/batch.ini" --set batch.count=12 \
  --set batch.sizes=uniform:9:20 --set batch.shift=uniform:0:1 --set output.monitor_every=0 --output "$TMP/bt1.h5" >"$TMP/run.out" 2>&1 ||
  { cat "$TMP/run.out"; fail "run bt1"; }
$PY "$H5CHECK" same "$TMP/bt.h5" "$TMP/bt1.h5" || fail "same: a batch at 1 and 2 ranks differs"
$PY "$H5CHECK" compare "$TMP/bt.h5" "$TMP/bt1.h5" >"$TMP/cmp.out" &&
  grep -q "^/batch/solution: max abs diff 0.000e+00 .*: ok" "$TMP/cmp.out" || { cat "$TMP/cmp.out"; fail "compare batch"; }
$PY - "$TMP/bt.h5" "$TMP/btp.h5" <<'EOF2' || fail "cannot make the perturbed batch"
import shutil, sys, h5py
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    f["batch/solution"][5] += 1e-6
EOF2
$PY "$H5CHECK" compare "$TMP/bt.h5" "$TMP/btp.h5" --rtol 1e-9 >"$TMP/cmp.out"
[ $? -eq 1 ] && grep -q "^/batch/solution: max abs diff 1.000e-06 at (5,), .*: over" "$TMP/cmp.out" ||
  { cat "$TMP/cmp.out"; fail "compare passed a perturbed batch solution"; }
$PY "$H5CHECK" same "$TMP/bt.h5" "$TMP/btp.h5" 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "^/batch/solution: differs; 1 elements, first at (5,)" "$TMP/err" ||
  { cat "$TMP/err"; fail "same passed a perturbed batch solution"; }
$PY "$H5CHECK" close "$TMP/bt.h5" "$TMP/btp.h5" --rtol 1e-9 >"$TMP/cmp.out"
[ $? -eq 1 ] && grep -q "^/batch/solution: .* (over 1e-09)" "$TMP/cmp.out" ||
  { cat "$TMP/cmp.out"; fail "close passed a perturbed batch solution"; }

# ---- coopplot of a heat run without fields: u's last snapshot from /series/u ----
HEAT="--set solver.name=heat --set grid.nx=20 --set grid.ny=20 --set solver.max_iter=30 --set output.every=10"
run heat 1 $HEAT
run heatnof 1 $HEAT --set output.fields=false
$PY "$PLOT" "$TMP/heatnof.h5" >"$TMP/plot.out" || fail "coopplot of a heat run without fields"
printf '%s\n' "$TMP/heatnof-u.png" "$TMP/heatnof-history.png" | cmp -s - "$TMP/plot.out" ||
  { cat "$TMP/plot.out"; fail "coopplot heat without fields: not the files named"; }
$PY "$PLOT" "$TMP/heat.h5" --what field >/dev/null || fail "coopplot heat"
png "$TMP/heatnof-u.png" 640 480
# the same picture as /fields/u of the run with fields, but for the title
$PY - "$TMP/heat-u.png" "$TMP/heatnof-u.png" <<'EOF2' || fail "heat without fields: not the picture of /fields/u"
import sys
import matplotlib.image as mpimg
a, b = (mpimg.imread(p)[:, :, :3] for p in sys.argv[1:3])
if not ((a[30:] == b[30:]).all() and (a[:30] != b[:30]).any()):
    sys.exit("the images differ below the title, or the titles do not")
EOF2

# ---- damaged and foreign files: one line, exit 2, from every command that reads them ----
$PY - "$TMP" <<'EOF2' || fail "cannot make the damaged files"
import re, shutil, sys, h5py, numpy as np
tmp = sys.argv[1]

def copy(src, name):
    shutil.copy(f"{tmp}/{src}.h5", f"{tmp}/{name}.h5")
    return h5py.File(f"{tmp}/{name}.h5", "r+")

with copy("lap", "d-fields") as f:  # /fields a dataset, not a group
    del f["fields"]
    f["fields"] = np.zeros(3)
with copy("lap", "d-iters") as f:  # a string where an integer belongs
    f["solver"].attrs["iterations"] = "many"
with copy("lap", "d-hist") as f:  # a 2-D history
    r = f["history/residual"][()]
    del f["history/residual"]
    f["history/residual"] = np.stack([r, r])
with copy("lap", "d-utf8") as f:  # a UTF-8 string attribute holding other bytes
    del f["solver"].attrs["reason"]
    f["solver"].attrs.create("reason", b"conv\xffrged", dtype=h5py.string_dtype("utf-8"))
with copy("bt", "d-offsets") as f:  # offsets falling
    f["batch/offsets"][...] = f["batch/offsets"][()][::-1]
with open(f"{tmp}/d-text.h5", "w") as f:
    f.write("not HDF5\n")

# bad checksums: 4 bytes inverted in the object header of /fields/u, then of
# /solver: the first "OHDR" block whose damage leaves the root group and the
# object's group readable and the object not
data = open(f"{tmp}/lap.h5", "rb").read()
for obj, name in (("fields/u", "d-sum-u"), ("solver", "d-sum-solver")):
    for at in (m.start() for m in re.finditer(b"OHDR", data)):
        bad = bytearray(data)
        bad[at + 24:at + 28] = bytes(b ^ 0xff for b in bad[at + 24:at + 28])
        open(f"{tmp}/{name}.h5", "wb").write(bad)
        with h5py.File(f"{tmp}/{name}.h5", "r") as f:
            try:
                list(f), f.attrs["program"], f[obj.rpartition("/")[0] or "/"].attrs["description"]
            except (OSError, KeyError, RuntimeError):
                continue  # the header of the root group or of the object's group
            try:
                f[obj].attrs["description"]
            except (OSError, KeyError, RuntimeError):
                break
    else:
        sys.exit(f"no header to damage found for /{obj}")
EOF2

# bad HAS TOOL ARG...: TOOL exits 2 with one line on stderr, starting
# "TOOL: $file: " and holding HAS, and no traceback
bad() {
  has=$1 tool=$2
  shift 2
  $PY "$COOP_SRCDIR/tools/$tool" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
  rc=$?
  what="$tool $*"
  [ $rc -eq 2 ] || { cat "$TMP/err"; fail "$what: exit status $rc, not 2"; }
  [ "$(wc -l <"$TMP/err")" -eq 1 ] || { cat "$TMP/err"; fail "$what: not one line on stderr"; }
  ! grep -q Traceback "$TMP/err" || { cat "$TMP/err"; fail "$what: a traceback"; }
  want="$tool: $file: " has="$has" awk 'index($0, ENVIRON["want"]) == 1 && index($0, ENVIRON["has"]) { n++ }
    END { exit n != 1 }' "$TMP/err" || { cat "$TMP/err"; fail "$what: not '$tool: $file: ...$has...'"; }
}
# NAME|REFERENCE|HAS|COMMANDS: the commands that read what is wrong in $TMP/NAME.h5
while IFS='|' read -r name ref has cmds; do
  file="$TMP/$name.h5"
  for cmd in $cmds; do
    case $cmd in
    show | error) bad "$has" h5check.py "$cmd" "$file" ;;
    compare | same | close) bad "$has" h5check.py "$cmd" "$TMP/$ref.h5" "$file" ;;
    layout) bad "$has" h5check.py layout --no-xdmf "$file" ;;
    plot) bad "$has" coopplot.py "$file" --out "$TMP/dmg" ;;
    problem) bad "$has" coopplot.py "$file" --problem 1 --out "$TMP/dmg" ;;
    esac
  done
done <<'EOF2'
d-fields|lap|/fields is a dataset, expected a group|show compare same close plot
d-iters|lap|/solver attribute 'iterations' is not an integer|show compare plot
d-hist|lap|/history/residual is 2-D, expected 1-D|show plot
d-utf8|lap|/solver attribute 'reason' is not UTF-8 text|show compare layout plot
d-sum-u|lap|/fields/u cannot be read: |show compare same close layout plot
d-sum-solver|lap|/solver cannot be read: |show error compare layout plot
d-text|lap|cannot open as HDF5: |show error compare same close layout plot problem
d-missing|lap|no such file|show error compare same close layout plot
d-offsets|bt|/batch/offsets does not rise from 0 to |problem
EOF2
# the same file as the first of two
file="$TMP/d-text.h5"
bad "cannot open as HDF5: " h5check.py compare "$file" "$TMP/lap.h5"
# layout lists what is wrong in a file it can read, each line naming the file, exit 1
while IFS='|' read -r name has; do
  $PY "$H5CHECK" layout --no-xdmf "$TMP/$name.h5" >/dev/null 2>"$TMP/err"
  rc=$?
  [ $rc -eq 1 ] && grep -qF "$TMP/$name.h5: $has" "$TMP/err" &&
    want="$TMP/$name.h5: " awk 'index($0, ENVIRON["want"]) != 1 { n++ } END { exit n != 0 }' "$TMP/err" ||
    { cat "$TMP/err"; fail "layout $name.h5: exit status $rc, no '$has', or a line not naming the file"; }
done <<'EOF2'
d-fields|/fields is a dataset, expected a group
d-iters|/solver: attribute iterations is object, expected i8
d-hist|/history/residual: float64(2, 
d-offsets|/batch/offsets: not rising from 0 to rows
EOF2
# offsets that do not match another batch's
$PY "$H5CHECK" compare "$TMP/bt.h5" "$TMP/d-offsets.h5" >"$TMP/cmp.out"
[ $? -eq 1 ] && grep -q "^batches differ: /batch/offsets" "$TMP/cmp.out" ||
  { cat "$TMP/cmp.out"; fail "compare passed other batch offsets"; }

# ---- a python3 on PATH without h5py (the tools start with /usr/bin/env python3) ----
mkdir "$TMP/bin"
printf '#!/bin/sh\nexec "%s" -S -I "$@"\n' "$(command -v "$PY")" >"$TMP/bin/python3" # no site-packages
chmod +x "$TMP/bin/python3"
"$TMP/bin/python3" -c 'import h5py' 2>/dev/null && fail "python3 -S -I still imports h5py"
for tool in h5check.py coopplot.py; do
  [ -x "$COOP_SRCDIR/tools/$tool" ] || fail "tools/$tool is not executable"
  PATH="$TMP/bin:$PATH" "$COOP_SRCDIR/tools/$tool" show "$TMP/lap.h5" >"$TMP/out" 2>"$TMP/err"
  rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "^$tool: needs h5py.*cannot import h5py$" "$TMP/err" ||
    { cat "$TMP/err"; fail "$tool under a python3 without h5py: exit status $rc, or not one line saying so"; }
done
exit 0
