#!/usr/bin/env bash
# Jacobi throughput of the cuda backend, launch mode against grid mode, with
# the GPU's own ceilings measured in the same run (bench/devlimits.cu).
#   bench/jacobi_bench.sh BUILD_DIR [OUT_DIR]
# Prints a markdown table: achieved GB/s counts the fewest bytes a sweep must
# move (read u and f, write unew: 3 values per point) over the solve time;
# "of copy BW" compares it with the measured copy bandwidth of the GPUs used.
set -euo pipefail
build=$(cd "${1:?usage: jacobi_bench.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-$(mktemp -d)}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
py=python3
$py -c 'import h5py' 2>/dev/null || py=/usr/bin/python3
gpus=$(nvidia-smi -L | grep -c '^GPU')

nvcc -O2 -arch=sm_90 -o "$out/devlimits" "$src/bench/devlimits.cu"
"$out/devlimits" 0 | tee "$out/devlimits.txt"
copy=$(awk '$1 == "copy_gbs" { print $2 }' "$out/devlimits.txt")

row() { # name ranks sync ghost sweeps options...
  local name=$1 np=$2 sync=$3 ghost=$4 sweeps=$5
  shift 5
  if [ "$np" -gt "$gpus" ]; then echo "| $name | $np | $sync | $ghost | skipped: $gpus GPU(s) |"; return; fi
  mpirun --bind-to none -np "$np" "$build/coopsolve" "$src/inputs/quickstart.ini" --backend cuda \
    --set run.sync="$sync" --set grid.ghost="$ghost" --set solver.rtol=0 \
    --set solver.max_iter="$sweeps" --set solver.check_every="$sweeps" \
    --set output.monitor_every=0 --output "$out/$name-$np-$sync-$ghost.h5" "$@" \
    >"$out/$name-$np-$sync-$ghost.log" 2>&1 || { cat "$out/$name-$np-$sync-$ghost.log"; exit 1; }
  $py - "$out/$name-$np-$sync-$ghost.h5" "$name" "$np" "$sync" "$ghost" "$copy" <<'PYEOF'
import sys, h5py, numpy as np
path, name, np_, sync, ghost, copy = sys.argv[1:]
with h5py.File(path, "r") as f:
    s = f["solver"].attrs
    pts = int(np.prod(f["grid"].attrs["shape"]))
    es = f["fields/u"].dtype.itemsize
    mode = s["mode"].decode() if isinstance(s["mode"], bytes) else s["mode"]
    it, t = int(s["iterations"]), float(s["solve_time"])
gbs = 3 * es * pts * it / t / 1e9
# each rank has its own GPU (the script skips rows with more ranks than GPUs)
print(f"| {name} | {np_} | {mode} | {ghost} | {it} | {t:.3f} | {pts*it/t/1e9:.2f} | {gbs:.0f} | {100*gbs/(int(np_)*float(copy)):.0f}% | {1e6*t/it:.1f} |")
PYEOF
}

{
echo "| case | ranks | mode | ghost | sweeps | solve s | Gpts/s | GB/s | of copy BW | us/sweep |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
big2d="--set grid.nx=8192 --set grid.ny=8192"
big3d="--set grid.dim=3 --set grid.nx=512 --set grid.ny=512 --set grid.nz=512"
small2d="--set grid.nx=256 --set grid.ny=256"
row 2d-8192-fp64 1 launch 1 1000 $big2d
row 2d-8192-fp64 1 grid 1 1000 $big2d
row 2d-8192-fp32 1 launch 1 1000 $big2d --set solver.precision=fp32
row 2d-8192-fp32 1 grid 1 1000 $big2d --set solver.precision=fp32
row 3d-512-fp64 1 launch 1 500 $big3d
row 3d-512-fp64 1 grid 1 500 $big3d
row 2d-256-fp64 1 launch 1 20000 $small2d
row 2d-256-fp64 1 grid 1 20000 $small2d
row 2d-8192-fp64 2 launch 1 1000 $big2d
row 2d-8192-fp64 2 grid 4 1000 $big2d
row 3d-512-fp64 2 launch 1 500 $big3d
row 3d-512-fp64 2 grid 2 500 $big3d
row 2d-1024-fp64 2 launch 1 5000 --set grid.nx=1024 --set grid.ny=1024
row 2d-1024-fp64 2 grid 8 5000 --set grid.nx=1024 --set grid.ny=1024
} | tee "$out/table.md"
