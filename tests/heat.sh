#!/bin/sh
# The heat solver (explicit time stepping of u_t = alpha lap(u)) on the host:
# the error against the exact decay of the sine mode falls at second order
# with dt a fixed fraction of the stability limit (2D and 3D); the time series
# (/series step, time and snapshots, the XDMF time steps); a dt above the
# stability limit is an input error naming the largest stable dt; 1 and 2
# ranks (and ghost width 3) give the same field; a non-square grid; the
# laplace problem diffuses to the harmonic solution; output.fields = false; a
# snapshot that fails stops every rank and leaves the previous output; a
# checkpoint restart ends with the uninterrupted run's bits.
. "$COOP_SRCDIR/tests/common.sh"
coop_python
coop_tmpdir

heat() { coop_heat "$@"; }

# ---- (a) second order: dt = h^2/8 (1/2 of the 2D limit, 3/4 of the 3D one), t = 1/32 ----
order() { # DIM SIZES...: the L2 error at t = 1/32 falls 4x per halving of h
  dim=$1
  shift
  for n in "$@"; do
    dt=$($PY -c "print(repr(1 / (8 * ($n + 1) ** 2)))")
    nz=
    [ "$dim" = 3 ] && nz="--set grid.nz=$n"
    heat "o$dim-$n" 2 --set grid.dim=$dim --set grid.nx=$n --set grid.ny=$n $nz \
      --set solver.dt=$dt --set solver.max_iter=$(((n + 1) * (n + 1) / 4))
  done
  (cd "$TMP" && $PY - "$dim" "$@" <<'EOF'
import sys, math, h5py
dim, sizes = sys.argv[1], sys.argv[2:]
err = []
for n in sizes:
    s = h5py.File(f"o{dim}-{n}.h5", "r")["solver"].attrs
    if s["reason"] != "completed" or abs(s["time"] - 1 / 32) > 1e-15:
        sys.exit(f"{dim}D n={n}: reason {s['reason']}, time {s['time']}, expected completed at 1/32")
    err.append(float(s["error_l2"]))
for (n0, e0), (n1, e1) in zip(zip(sizes, err), zip(sizes[1:], err[1:])):
    order = math.log(e0 / e1) / math.log((int(n1) + 1) / (int(n0) + 1))
    print(f"heat {dim}D: n {n0} -> {n1}: L2 error {e0:.3e} -> {e1:.3e}, order {order:.3f}")
    if not 1.8 <= order <= 2.2:
        sys.exit(f"heat {dim}D: order {order:.3f} is not 2")
EOF
  ) || fail "heat ${dim}D does not converge at second order"
}
order 2 15 31 63
order 3 7 15

# ---- (b, e) the time series on a non-square grid: 103 steps, a snapshot every 20 ----
heat series 2 --set grid.nx=37 --set grid.ny=23 --set grid.lx=2 --set solver.dt=1e-4 \
  --set solver.max_iter=103 --set output.every=20
$PY "$H5CHECK" layout "$TMP/series.h5" || fail "series: layout"
$PY - "$TMP/series.h5" <<'EOF' || fail "series: wrong snapshots"
import sys
import xml.etree.ElementTree as ET
import h5py, numpy as np
path = sys.argv[1]
f = h5py.File(path, "r")
g = f["series"]
steps, times, u = g["step"][()], g["time"][()], g["u"]
want = [0, 20, 40, 60, 80, 100, 103]
if steps.tolist() != want or steps.dtype != np.int64:
    sys.exit(f"/series/step {steps.tolist()} ({steps.dtype}), expected {want} (int64)")
if times.tolist() != [k * 1e-4 for k in want] or times.dtype != np.float64:
    sys.exit(f"/series/time {times.tolist()}, expected step * 1e-4")
if u.shape != (7, 23, 37) or u.chunks[0] != 1:
    sys.exit(f"/series/u shape {u.shape}, chunks {u.chunks}; expected (7, 23, 37), one snapshot a chunk")
for d in (g, u, g["step"], g["time"]):
    if not d.attrs.get("description"):
        sys.exit(f"{d.name}: no description")
# the first snapshot is the initial field: the sine mode at the interior points
x = (np.arange(37) + 1) * 2 / 38
y = (np.arange(23) + 1) / 24
u0 = np.outer(np.sin(np.pi * y), np.sin(np.pi * x / 2))
if np.max(np.abs(u[0] - u0)) > 1e-14:
    sys.exit(f"first snapshot differs from the initial field by {np.max(np.abs(u[0] - u0)):.3e}")
if u[-1].tobytes() != f["fields"]["u"][()].tobytes():
    sys.exit("last snapshot is not /fields/u")
if f["solver"].attrs["iterations"] != 103:
    sys.exit(f"{f['solver'].attrs['iterations']} steps, not 103")
# the XDMF file: a temporal collection with one grid per snapshot at its time
root = ET.parse(path[:-3] + ".xmf").getroot()
coll = root.find("./Domain/Grid")
if coll is None or coll.get("CollectionType") != "Temporal":
    sys.exit("XDMF: no temporal collection")
got = [float(s.find("Time").get("Value")) for s in coll.findall("Grid")]
if got != times.tolist():
    sys.exit(f"XDMF: times {got}, expected {times.tolist()}")
print(f"series: {len(steps)} snapshots at steps {steps.tolist()}, XDMF {len(got)} time steps")
EOF

# ---- (c) dt above the stability limit: input error naming the largest stable dt ----
mkdir "$TMP/c"
what="dt above the limit"
coop_expect_input_error "$TMP/c" 2 "solver.dt = 0.001 is above the explicit stability limit 0.000244140625" \
  "use solver.dt <= 0.000244140625" "$INPUTS/quickstart.ini" --set solver.name=heat --set grid.nx=31 \
  --set grid.ny=31 --set solver.dt=0.001 --output out.h5
what="dt above the limit, --dry-run"
coop_expect_input_error "$TMP/c" 1 "solver.dt = 0.001 is above the explicit stability limit 0.000244140625" \
  "" "$INPUTS/quickstart.ini" --set solver.name=heat --set grid.nx=31 --set grid.ny=31 --set solver.dt=0.001 --dry-run
heat limit 1 --set grid.nx=31 --set grid.ny=31 --set solver.dt=0.000244140625 --set solver.max_iter=50
mkdir "$TMP/k"
what="heat keys with jacobi"
coop_expect_input_error "$TMP/k" 1 "output.every = 5 (from --set) applies to solver.name = heat" "" \
  "$INPUTS/quickstart.ini" --set output.every=5 --output out.h5

# ---- (d) 1 and 2 ranks, and 2 ranks with ghost width 3: the same field ----
for prob in sine laplace; do
  opts="--set grid.nx=29 --set grid.ny=19 --set problem.type=$prob --set solver.max_iter=77"
  heat "r1-$prob" 1 $opts
  heat "r2-$prob" 2 $opts
  heat "r2g3-$prob" 2 $opts --set grid.ghost=3
  for other in "r2-$prob" "r2g3-$prob"; do
    $PY "$H5CHECK" close "$TMP/r1-$prob.h5" "$TMP/$other.h5" --rtol 1e-12 >/dev/null ||
      fail "$prob: $other differs from 1 rank"
  done
done
heat r1-3d 1 --set grid.dim=3 --set grid.nx=9 --set grid.ny=8 --set grid.nz=7 --set solver.max_iter=40
heat r2-3d 2 --set grid.dim=3 --set grid.nx=9 --set grid.ny=8 --set grid.nz=7 --set solver.max_iter=40 \
  --set grid.ghost=2
$PY "$H5CHECK" close "$TMP/r1-3d.h5" "$TMP/r2-3d.h5" --rtol 1e-12 >/dev/null || fail "3D: 2 ranks differ"

# ---- laplace: from 0 inside to the harmonic solution (no exact solution on the way) ----
heat harm 2 --set grid.nx=15 --set grid.ny=15 --set problem.type=laplace --set solver.max_iter=3000
$PY - "$TMP/harm.h5" "$TMP/r1-laplace.h5" <<'EOF' || fail "laplace: not the harmonic solution"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
if "error_max" in f["solver"].attrs or "error_max" in h5py.File(sys.argv[2], "r")["solver"].attrs:
    sys.exit("a laplace heat run reports an error against an exact solution it does not have")
x = (np.arange(15) + 1) / 16
exact = np.outer(np.sinh(np.pi * x) / np.sinh(np.pi), np.sin(np.pi * x))
err = np.max(np.abs(f["fields"]["u"][()] - exact))
print(f"laplace after t = {f['solver'].attrs['time']:.3g}: max |u - harmonic| = {err:.3e}")
sys.exit(0 if err < 3e-3 else 1)
EOF

# ---- output.fields = false: no /fields data; the series and its XDMF file stay ----
heat nof 2 --set grid.nx=20 --set grid.ny=20 --set solver.max_iter=30 --set output.every=10 \
  --set output.fields=false
heat nof2 2 --set grid.nx=20 --set grid.ny=20 --set solver.max_iter=30 --set output.fields=false
$PY "$H5CHECK" layout "$TMP/nof.h5" || fail "output.fields = false: layout"
$PY "$H5CHECK" layout "$TMP/nof2.h5" || fail "output.fields = false, no series: layout"
[ -f "$TMP/nof.xmf" ] || fail "output.fields = false: no XDMF file for the series"
[ ! -e "$TMP/nof2.xmf" ] || fail "output.fields = false: an XDMF file with nothing to show"
$PY -c 'import h5py, sys; sys.exit(len(h5py.File(sys.argv[1])["fields"]) != 0)' "$TMP/nof.h5" ||
  fail "output.fields = false: /fields is not empty"

# ---- a snapshot that fails: status 1, one message, no temporary, the old output kept ----
mkdir "$TMP/f"
echo previous >"$TMP/f/out.h5"
rc=0
COOP_FAULT=snapshot:1 coop_mpirun 2 "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" \
  --set solver.name=heat --set solver.max_iter=50 --set output.every=10 --set output.monitor_every=0 \
  --output "$TMP/f/out.h5" >"$TMP/f.out" 2>"$TMP/f.err" || rc=$?
[ "$rc" = 1 ] || { cat "$TMP/f.err"; fail "snapshot fault: exit status $rc, not 1"; }
[ "$(grep -c '^coopsolve: rank 1: .*fault injected' "$TMP/f.err")" = 1 ] &&
  ! grep -q '^coopsolve: rank 0' "$TMP/f.err" || { cat "$TMP/f.err"; fail "snapshot fault: not one message"; }
[ "$(ls -A "$TMP/f")" = out.h5 ] || fail "snapshot fault: left $(ls -A "$TMP/f")"
[ "$(cat "$TMP/f/out.h5")" = previous ] || fail "snapshot fault: the previous output changed"

# ---- SIGINT and SIGHUP: the run ends by the signal, its temporaries removed;
# a SIGHUP inherited as ignored (nohup) stays ignored ----
LONG="--set solver.name=heat --set grid.nx=300 --set grid.ny=300 --set solver.max_iter=200000 --set output.every=2000
  --set output.monitor_every=0"
has_temp() { # DIR: wait up to 30 s for the heat series' temporary .h.h5.XXXXXX in DIR
  i=0
  while ! ls -A "$1" | grep -q '^\.h\.h5\.' && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
  ls -A "$1" | grep -q '^\.h\.h5\.'
}
sig_case() { # NAME RANKS SIGNAL TARGET: TARGET mpirun or ranks
  d=$TMP/sig-$1
  mkdir "$d"
  (cd "$d" && env --default-signal=INT,HUP "$MPIEXEC" --oversubscribe -np "$2" "$COOPSOLVE" --backend host \
    "$INPUTS/quickstart.ini" $LONG --output "$d/h.h5" >"$TMP/sig.out" 2>&1 </dev/null) &
  pid=$!
  # until the series' temporary is there (a name probed by mkstemp comes and goes before it)
  has_temp "$d" || fail "$1: no temporary to remove"
  if [ "$4" = ranks ]; then pkill -"$3" -f "^[^ ]*coopsolve .*--output $d/h.h5"; else kill -"$3" $pid; fi
  timeout 60 sh -c "while kill -0 $pid 2>/dev/null; do sleep 0.2; done" || fail "$1: the run did not end"
  wait $pid && fail "$1: exit status 0 after SIG$3"
  [ -z "$(ls -A "$d")" ] || fail "$1: left $(ls -A "$d")"
  echo "$1: ended by SIG$3, nothing left"
}
if env --default-signal=INT true 2>/dev/null && command -v pkill >/dev/null; then
  sig_case hup1 1 HUP ranks
  sig_case int1 1 INT ranks
  sig_case int2 2 INT ranks
  # nohup: a coopsolve started with SIGHUP ignored (as a singleton: mpirun
  # gives its ranks the default action) ignores it and completes
  mkdir "$TMP/nohup"
  (cd "$TMP/nohup" && exec env --ignore-signal=HUP "$COOPSOLVE" --backend host \
    "$INPUTS/quickstart.ini" --set solver.name=heat --set grid.nx=300 --set grid.ny=300 --set solver.max_iter=40000 \
    --set output.every=10000 --set output.monitor_every=0 --output "$TMP/nohup/h.h5" >"$TMP/nohup.out" 2>&1 </dev/null) &
  pid=$!
  has_temp "$TMP/nohup" || fail "nohup: no temporary"
  kill -HUP $pid || fail "nohup: no process to signal"
  wait $pid || { cat "$TMP/nohup.out"; fail "nohup: SIGHUP ended a run that ignores it"; }
  [ "$(ls -A "$TMP/nohup" | tr '\n' ' ')" = "h.h5 h.xmf " ] || fail "nohup: left $(ls -A "$TMP/nohup")"
  echo "nohup: SIGHUP ignored, the run completed"
else
  echo "no env --default-signal or pkill: the SIGINT/SIGHUP cases are left out"
fi

# ---- checkpoints: a restart (at another rank count) ends with the same bits ----
CK="--set grid.nx=33 --set grid.ny=20 --set solver.max_iter=200 --set output.every=25 --set solver.check_every=40"
heat whole 2 $CK
heat part 2 $CK --set output.checkpoint_every=64 --set solver.max_iter=192 # a run cut at 192
heat rest 3 $CK --restart "$TMP/part.ckpt.h5"
$PY "$H5CHECK" same "$TMP/whole.h5" "$TMP/rest.h5" || fail "restart: the field differs"
$PY -c 'import h5py, sys; sys.exit(h5py.File(sys.argv[1])["series"]["step"][()].tolist() != [192, 200])' \
  "$TMP/rest.h5" || fail "restart: the series does not start at the checkpoint (192)"
echo "heat: all cases passed"
