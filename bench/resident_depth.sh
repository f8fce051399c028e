#!/usr/bin/env bash
# Sweeps between grid barriers of the register-resident solve
# (tune.resident_depth), side by side: a baseline build, then this build with
# auto, 1 and 2, on the boxes that hold the field in registers; two rounds,
# interleaved. Plans (blocks, groups, rows, depth) printed in round 1.
#   bench/resident_depth.sh BASE_BUILD BUILD
# e.g. BASE_BUILD = a build of the commit before tune.resident_depth.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: bench/resident_depth.sh BASE_BUILD BUILD" >&2; exit 2; }
base=$1 b=$2
here=$(cd "$(dirname "$0")" && pwd)
for round in 1 2; do
  for row in "128 fp64 1" "256 fp32 1" "256 fp32 100" "512 fp32 1" "512 fp32 100" "512 fp64 1" "1024 fp32 1" "1024 fp32 100"; do
    set -- $row
    bash "$here/sweep_one.sh" "$base" main "$1" "$2" "$3" grid
    SWEEP_PLAN=$([ $round = 1 ] && echo 1) bash "$here/sweep_one.sh" "$b" auto "$1" "$2" "$3" grid
    for d in 1 2; do bash "$here/sweep_one.sh" "$b" d$d "$1" "$2" "$3" grid tune.resident_depth=$d; done
  done
done
