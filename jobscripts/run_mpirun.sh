#!/bin/bash
# Run coopsolve with mpirun on this machine or inside a Slurm allocation.
#   jobscripts/run_mpirun.sh INPUT [coopsolve options]
#   salloc -n 8 --gpus-per-node=4 jobscripts/run_mpirun.sh INPUT
# Ranks: NP if set; inside an allocation SLURM_NTASKS (mpirun then places
# them on the allocated nodes); otherwise one per GPU of this machine, or 2.
# Binary (COOPSOLVE, PATH, the install, ../_build) and modules (COOP_SITE,
# COOP_MODULES) as for the batch scripts: see coop_job.sh.
set -euo pipefail
COOP_JOB_DIR=${COOP_JOBSCRIPTS:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
. "$COOP_JOB_DIR/coop_job.sh"

input=${1:?usage: run_mpirun.sh INPUT [coopsolve options]}
shift
coop_job_modules
coop_job_binary
if [ -n "${NP:-}" ]; then
  np=$NP
elif [ -n "${SLURM_JOB_ID:-}" ] && [ -n "${SLURM_NTASKS:-}" ]; then
  np=$SLURM_NTASKS
else
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  np=$([ "${gpus:-0}" -gt 0 ] && echo "$gpus" || echo 2)
fi
extra=()
# Open MPI refuses to run as root unless told so (containers)
[ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  extra+=(--bind-to none)
  # outside an allocation more ranks than cores are allowed (inside, Slurm's count rules)
  [ -n "${SLURM_JOB_ID:-}" ] || [ "$np" -le "$(nproc)" ] || extra+=(--oversubscribe)
fi
echo "mpirun -np $np $COOP_BIN $input $*"
exec mpirun "${extra[@]}" -np "$np" "$COOP_BIN" "$input" "$@"
