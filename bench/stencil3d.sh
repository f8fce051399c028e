#!/usr/bin/env bash
# 3D Jacobi sweeps side by side: builds given on the command line (e.g. the
# commit before a change, then the change), each row run by every build in
# turn, two rounds. Prints us a sweep and the fraction of the copy ceiling:
# a sweep must read and write the field once, 2 x N^3 x size bytes, against
# COPY_GBS (default 4300: the H200's measured device-to-device memcpy).
#   bench/stencil3d.sh BUILD [BUILD ...]
# COOP_RING3_STRIPS=S in the environment sets the z-strips a tile of every
# run (kernels/stencil_relax.cuh, ring3_plan), for sweeps of the plan.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: bench/stencil3d.sh BUILD [BUILD ...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
copy=${COPY_GBS:-4300}
builds=("$@")
# rows: N PREC CHECK MODE (N^3 Laplace, 400 sweeps); STENCIL3D_ROWS="N P C M;..." replaces them,
# STENCIL3D_ROUNDS (default 2) sets the rounds
rows=${STENCIL3D_ROWS:-"512 fp64 1 grid;512 fp64 1 launch;512 fp64 100 grid;512 fp32 1 grid;512 fp32 1 launch;256 fp64 1 grid;256 fp64 1 launch"}
IFS=';' read -r -a ROWS <<<"$rows"
for round in $(seq "${STENCIL3D_ROUNDS:-2}"); do
  for row in "${ROWS[@]}"; do
    set -- $row
    n=$1 p=$2 c=$3 m=$4
    sz=$([ "$p" = fp64 ] && echo 8 || echo 4)
    for b in "${builds[@]}"; do
      bash "$here/sweep_one.sh" "$b" "$(basename "$b")" "$n" "$p" "$c" "$m" grid.dim=3 grid.nz="$n" solver.max_iter=400 |
        awk -v n="$n" -v sz="$sz" -v copy="$copy" '{
          for (i = 1; i <= NF; i++) if ($i == "us/sweep") us = $(i - 1)
          floor = 2.0 * n * n * n * sz / (copy * 1e3)
          pct = us > 0 ? 100 * floor / us : 0
          printf "%s  floor %.1f us, %.0f%% of copy\n", $0, floor, pct }'
    done
  done
done
