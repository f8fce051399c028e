#!/bin/bash
# Run coopsolve with mpirun on one machine, one rank per GPU.
#   jobscripts/run_mpirun.sh INPUT [coopsolve options]
# NP ranks (default: the number of GPUs, else 2); COOPSOLVE names the binary.
set -euo pipefail
input=${1:?usage: run_mpirun.sh INPUT [coopsolve options]}
shift
coopsolve=${COOPSOLVE:-coopsolve}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
np=${NP:-$([ "${gpus:-0}" -gt 0 ] && echo "$gpus" || echo 2)}
extra=()
# Open MPI refuses to run as root unless told so (containers)
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  extra+=(--bind-to none)
  [ "$np" -gt "$(nproc)" ] && extra+=(--oversubscribe)
fi
echo "mpirun -np $np $coopsolve $input $*"
exec mpirun "${extra[@]}" -np "$np" "$coopsolve" "$input" "$@"
