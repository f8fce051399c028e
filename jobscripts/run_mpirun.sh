#!/bin/bash
# Run coopsolve with mpirun on this machine or inside a Slurm allocation.
#   jobscripts/run_mpirun.sh INPUT [coopsolve options]
#   salloc -n 8 --gpus-per-node=4 jobscripts/run_mpirun.sh INPUT
# Ranks: NP if set; inside an allocation SLURM_NTASKS (mpirun then places
# them on the allocated nodes); otherwise one per GPU of this machine, or 2.
# Binary (COOPSOLVE, PATH, the install, ../_build), modules (COOP_SITE,
# COOP_MODULES) and how the script finds itself (also under sbatch) as for the
# batch scripts: see coop_job.sh.
set -euo pipefail

# ---- this script's folder, for coop_job.sh and the binary (the same block
# in every jobscript; coop_job.sh's header says where it looks): under sbatch
# $0 is a spool copy, and the job record names the script, relative to the
# submit folder (not --chdir), followed by the arguments.
self=$0
if [ -n "${SLURM_JOB_ID:-}" ] && [ ! -r "$(dirname "$0")/coop_job.sh" ]; then
  if rec=$(scontrol show job -o "$SLURM_JOB_ID" 2>&1); then
    self=$(printf '%s\n' "$rec" | sed -n 's/.* Command=\(.*\) WorkDir=.*/\1/p')
    case $self in /*) ;; "" | "(null)") self= ;; *) self=${SLURM_SUBMIT_DIR:-$PWD}/$self ;; esac
    while [ ! -f "$self" ] && [ "${self% *}" != "$self" ]; do self=${self% *}; done
  elif [ -z "${COOP_JOBSCRIPTS:-}" ]; then
    echo "coopsolve job: scontrol show job $SLURM_JOB_ID failed${rec:+ (${rec%%$'\n'*})}; set COOP_JOBSCRIPTS to the jobscripts folder" >&2
    exit 2
  fi
fi
if [ -n "${COOP_JOBSCRIPTS:-}" ]; then
  COOP_JOB_DIR=$COOP_JOBSCRIPTS where="no coop_job.sh in COOP_JOBSCRIPTS=$COOP_JOBSCRIPTS"
elif [ -n "$self" ]; then
  COOP_JOB_DIR=$(dirname "$self") where="no coop_job.sh beside $self"
else
  COOP_JOB_DIR=/nonexistent where="the job record names no script (sbatch < FILE?)"
fi
if ! COOP_JOB_DIR=$(cd "$COOP_JOB_DIR" 2>/dev/null && pwd) || [ ! -r "$COOP_JOB_DIR/coop_job.sh" ]; then
  echo "coopsolve job: $where; set COOP_JOBSCRIPTS to the jobscripts folder" >&2
  exit 2
fi
. "$COOP_JOB_DIR/coop_job.sh"
# ----

[ $# -ge 1 ] || coop_die "usage: run_mpirun.sh INPUT [coopsolve options]"
input=$1
shift
[ -z "${NP:-}" ] || coop_job_count NP "$NP"
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
