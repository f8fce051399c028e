#!/bin/sh
# The heat equation by backward Euler (solver.scheme = implicit: each step a
# multigrid solve) on the host: the sine mode decays by exactly the discrete
# factor 1 / (1 + dt alpha lambda_h) a step, at time steps far above the
# explicit limit, 2D and 3D (an uneven box); the same bits at 1 and 3 ranks;
# the time series' steps and times; a run cut by max_iter and restarted from
# its checkpoint ends with the uninterrupted one's bits; a step whose cycles
# run out ends the run diverged_its (exit 4 with
# solver.error_if_not_converged); input errors for no solver.dt, the scheme
# with another solver, and in a batch.
. "$COOP_SRCDIR/tests/common.sh"
coop_python
coop_tmpdir

heat() { # NAME RANKS ARG...: coop_heat by backward Euler, each step solved to 1e-12
  hn=$1 hr=$2
  shift 2
  coop_heat "$hn" "$hr" --set solver.scheme=implicit --set solver.rtol=1e-12 "$@"
}

# the field against the sine mode times the discrete backward Euler factor
decay() { # NAME DT STEPS ALPHA
  $PY - "$TMP/$1.h5" "$2" "$3" "$4" <<'EOF' || fail "$1: not the discrete decay"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
dt, steps, alpha = float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
g = f["fields"]
axes = [a for a in ("x", "y", "z") if a in g]
u = g["u"][()]
lam, u0 = 0.0, np.ones(1)
for a in axes:  # x fastest, so the arrays' axes run z, y, x
    c = g[a][()]
    h = c[0]                      # interior points at (i + 1) h
    L = h * (len(c) + 1)
    lam += 4 / h**2 * np.sin(np.pi * h / (2 * L)) ** 2
    u0 = np.multiply.outer(np.sin(np.pi * c / L), u0)
u0 = u0.reshape(u.shape)
want = u0 / (1 + dt * alpha * lam) ** steps
err = np.abs(u - want).max() / np.abs(want).max()
print(f"{sys.argv[1]}: max |u - discrete decay| / max = {err:.2e}")
sys.exit(0 if err < 1e-9 else 1)
EOF
}

# 2D: dt 5x the explicit limit (h^2/4 on 63 x 63)
heat d2 1 --set grid.nx=63 --set grid.ny=63 --set solver.dt=0.0003 --set solver.max_iter=20
decay d2 0.0003 20 1
grep -q "^  reason      completed" "$TMP/d2.out" || { cat "$TMP/d2.out"; fail "d2: not completed"; }
grep -q "heat: implicit (backward Euler), dt 0.0003 (4.92 times the explicit limit" "$TMP/d2.out" ||
  { cat "$TMP/d2.out"; fail "d2: no implicit line in the summary"; }
# 3D, uneven sizes and box, alpha 0.5
heat d3 1 --set grid.dim=3 --set grid.nx=21 --set grid.ny=16 --set grid.nz=25 --set grid.lz=2 \
  --set solver.alpha=0.5 --set solver.dt=0.01 --set solver.max_iter=8
decay d3 0.01 8 0.5

# ranks: the same bits (the cycles' sums are ordered alike at any rank count)
heat r1 1 --set grid.nx=90 --set grid.ny=71 --set solver.dt=0.001 --set solver.max_iter=6
heat r3 3 --set grid.nx=90 --set grid.ny=71 --set solver.dt=0.001 --set solver.max_iter=6
$PY "$H5CHECK" same "$TMP/r1.h5" "$TMP/r3.h5" >/dev/null || fail "3 ranks: not the field of 1 rank"

# the time series: a snapshot every 3 steps, at times k dt
heat ts 1 --set grid.nx=40 --set grid.ny=30 --set solver.dt=0.002 --set solver.max_iter=9 --set output.every=3
$PY - "$TMP/ts.h5" <<'EOF' || fail "ts: the series"
import sys, h5py, numpy as np
s = h5py.File(sys.argv[1], "r")["series"]
steps, times = s["step"][()].tolist(), s["time"][()]
sys.exit(0 if steps == [0, 3, 6, 9] and np.allclose(times, [0, 0.006, 0.012, 0.018]) else f"{steps} {times}")
EOF

# checkpoint: cut at 4 of 10 steps, restarted, the uninterrupted bits
ck="--set grid.nx=50 --set grid.ny=45 --set solver.dt=0.004 --set solver.max_iter=10"
heat full 1 $ck
heat cut 1 $ck --set solver.max_iter=4 --set output.checkpoint_every=3
[ -f "$TMP/cut.ckpt.h5" ] || fail "cut: no checkpoint"
heat rest 1 $ck --restart "$TMP/cut.ckpt.h5"
$PY "$H5CHECK" same "$TMP/full.h5" "$TMP/rest.h5" >/dev/null || fail "restarted field differs"

# a step out of cycles: rtol 1e-17 is below what fp64's rounding lets a step
# reach, so step 1 takes all 50 and the run ends there, diverged_its, with its
# output and a final checkpoint; exit 0, or 4 (one message, the output whole)
# with solver.error_if_not_converged; a time series' run goes on to fill it
short="--set grid.nx=40 --set grid.ny=30 --set solver.dt=0.002 --set solver.max_iter=9 --set solver.rtol=1e-17"
heat short 1 $short --set output.checkpoint_every=4
[ "$(coop_solver_attr "$TMP/short.h5" reason)" = diverged_its ] &&
  [ "$(coop_solver_attr "$TMP/short.h5" iterations)" = 1 ] &&
  grep -q "^  reason      diverged_its" "$TMP/short.out" &&
  grep -q "heat: step 1 reached 50 cycles .* the run stopped there" "$TMP/short.out" ||
  { cat "$TMP/short.out"; fail "short: not stopped at step 1 as diverged_its"; }
[ -f "$TMP/short.ckpt.h5" ] || fail "short: no final checkpoint"
rc=0
coop_mpirun 2 "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" --set solver.name=heat --set output.monitor_every=0 \
  --set solver.scheme=implicit $short --set solver.error_if_not_converged=true --output "$TMP/short4.h5" \
  >"$TMP/short4.out" 2>"$TMP/short4.err" </dev/null || rc=$?
[ $rc = 4 ] || { cat "$TMP/short4.out" "$TMP/short4.err"; fail "short4: exit status $rc, not 4"; }
[ "$(grep -c '^coopsolve: the solve ended diverged_its after 1 iterations.*exit status 4' "$TMP/short4.err")" = 1 ] ||
  { cat "$TMP/short4.err"; fail "short4: not one message"; }
$PY "$H5CHECK" show "$TMP/short4.h5" >/dev/null || fail "short4: the output is not whole"
heat shortts 1 $short --set output.every=3
[ "$(coop_solver_attr "$TMP/shortts.h5" reason)" = diverged_its ] &&
  [ "$(coop_solver_attr "$TMP/shortts.h5" iterations)" = 9 ] &&
  grep -q "heat: step 1 reached 50 cycles .* went on to fill the time series" "$TMP/shortts.out" ||
  { cat "$TMP/shortts.out"; fail "shortts: not gone on as diverged_its"; }

# ---- input errors ----
mkdir -p "$TMP/e" && cp "$INPUTS/quickstart.ini" "$TMP/e/in.ini"
what="no dt"
coop_expect_input_error "$TMP/e" 1 "solver.scheme = implicit" "solver.dt > 0" in.ini --set solver.name=heat \
  --set solver.scheme=implicit
what="scheme with jacobi"
coop_expect_input_error "$TMP/e" 1 "solver.scheme = implicit" "solver.name = heat, not jacobi" in.ini \
  --set solver.scheme=implicit
printf '[batch]\ncount = 2\ndim = 2\nsizes = 16\n[solver]\nname = heat\nscheme = implicit\n' >"$TMP/e/b.ini"
what="in a batch"
coop_expect_input_error "$TMP/e" 1 "solver.scheme = implicit" "[batch]" b.ini
echo "heat_implicit: all cases passed"
