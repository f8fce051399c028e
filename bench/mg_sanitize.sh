#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck on the multigrid kernels
# (solvers/mg/mg_cuda.cu): launch, graph and grid modes; red-black and Jacobi
# smoothers; V, W and F cycles; odd sweep counts; 2D and 3D; fp64 and fp32;
# cg with pc = mg; the implicit heat step. Small uneven grids, a few cycles
# each. One line per run with the tool's summary; exit 1 when any run fails or
# reports.
#   bench/mg_sanitize.sh BUILD_DIR [TOOL...]   (default: all three tools)
set -uo pipefail
build=$(cd "${1:?usage: bench/mg_sanitize.sh BUILD_DIR [TOOL...]}" && pwd) || exit 2
shift
tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(memcheck racecheck synccheck)
src=$(cd "$(dirname "$0")/.." && pwd)
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cases=(
  "launch|--set grid.nx=67 --set grid.ny=45"
  "graph|--set grid.nx=67 --set grid.ny=45 --set solver.mg_cycle=f"
  "grid|--set grid.nx=67 --set grid.ny=45 --set solver.mg_pre=1 --set solver.mg_post=3"
  "grid|--set grid.dim=3 --set grid.nx=19 --set grid.ny=14 --set grid.nz=17 --set solver.mg_cycle=w --set solver.mg_smoother=jacobi"
  "launch|--set grid.dim=3 --set grid.nx=19 --set grid.ny=14 --set grid.nz=17 --set solver.mg_pre=3 --set solver.mg_post=1 --set solver.mg_smoother=jacobi"
  "grid|--set grid.nx=70 --set grid.ny=51 --set solver.precision=fp32 --set problem.type=laplace --set solver.rtol=1e-4"
  "auto|--set grid.nx=50 --set grid.ny=41 --set solver.name=cg --set solver.pc=mg --set problem.type=laplace"
  "launch|--set grid.nx=43 --set grid.ny=38 --set solver.name=heat --set solver.scheme=implicit --set solver.dt=1e-3"
  "graph|--set grid.dim=3 --set grid.nx=17 --set grid.ny=13 --set grid.nz=15 --set solver.name=heat --set solver.scheme=implicit --set solver.dt=1e-3 --set solver.mg_smoother=jacobi"
)
status=0
for tool in "${tools[@]}"; do
  for c in "${cases[@]}"; do
    sync=${c%%|*} opts=${c#*|}
    # shellcheck disable=SC2086
    timeout -k 5 120 "$cs" --tool "$tool" --error-exitcode 9 "$build/coopsolve" "$src/inputs/mg_poisson.ini" \
      --backend cuda --set run.sync="$sync" --set solver.max_iter=4 --set output.monitor_every=0 \
      --set output.xdmf=false $opts --output "$tmp/cs.h5" >"$tmp/cs.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || status=1
    echo "$tool $sync $opts: rc $rc: $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$tmp/cs.log" | tr '\n' ' ')"
  done
done
exit $status
