#!/usr/bin/env bash
# One 1-GPU Jacobi run of the cuda backend and its time per sweep: for quick
# A/B comparisons of one setting (bench/stencil.sh runs the full tables).
#   bench/sweep_one.sh BUILD_DIR LABEL N PREC CHECK_EVERY MODE [key=value ...]
# N x N Laplace, 1000 sweeps that never stop early; prints
#   LABEL N PREC cCHECK MODE settings   us/sweep (steps, seconds)
# read from the output file's solver attributes (solve_time over steps).
# SWEEP_PLAN=1 also prints the plan the run took.
# SWEEP_NP=2 runs it on 2 ranks (mpirun, one GPU each where there are two).
set -uo pipefail
[ $# -ge 6 ] || { echo "usage: bench/sweep_one.sh BUILD_DIR LABEL N PREC CHECK_EVERY MODE [key=value ...]" >&2; exit 2; }
b=$1 label=$2 n=$3 p=$4 c=$5 m=$6
shift 6
src=$(cd "$(dirname "$0")/.." && pwd)
sets=()
for kv in "$@"; do sets+=(--set "$kv"); done
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
np=${SWEEP_NP:-1}
launcher=()
[ "$np" -gt 1 ] && launcher=(mpirun --bind-to none -np "$np")
timeout -k 5 120 "${launcher[@]}" "$b/coopsolve" "$src/inputs/quickstart.ini" --backend cuda --set run.sync="$m" \
  --set solver.precision="$p" --set solver.check_every="$c" --set problem.type=laplace \
  --set grid.dim=2 --set grid.nx="$n" --set grid.ny="$n" --set solver.max_iter=1000 --set solver.rtol=0 \
  --set solver.atol=0 --set solver.dtol=0 --set output.monitor_every=0 --set output.fields=false \
  --set output.xdmf=false --set output.file="$d/o.h5" "${sets[@]}" >"$d/log" 2>&1
rc=$?
python3 - "$d" "$label $n $p c$c $m np$np $*" "$rc" <<'PY'
import sys
import h5py
d, what, rc = sys.argv[1:]
try:
    s = h5py.File(d + "/o.h5", "r")["solver"].attrs
except OSError:
    tail = open(d + "/log", errors="replace").read()[-300:].replace("\n", " | ")
    print("%s FAILED (exit %s): %s" % (what, rc, tail))
    sys.exit(1)
st = int(s["steps"]) if "steps" in s else int(s["iterations"])
t = float(s["solve_time"])
print("%-50s %8.3f us/sweep  (%d steps, %.4f s)" % (what, 1e6 * t / st, st, t))
PY
# SWEEP_PLAN=1: the plan the run took (blocks; the on-chip field's groups, rows, depth)
[ -z "${SWEEP_PLAN:-}" ] || grep -hE "persistent blocks|field: held|sweeps a pass|sweeping once" "$d/log" | sed "s/^ */    /"
