# Shared by the jobscripts (sourced by bash, after they set COOP_JOB_DIR to
# their own folder): find the binary, load modules, choose how to start the
# ranks, print the log header. Nothing here asks Slurm for resources; those
# come from the sbatch command line.
#
# Environment (all optional):
#   COOPSOLVE      the coopsolve binary; else coopsolve on PATH, else the
#                  install (PREFIX/bin beside PREFIX/share/coopsolve/jobscripts),
#                  else _build/coopsolve of the checkout the scripts are in
#   COOP_SITE      a site file sourced first (default: site.sh beside the
#                  scripts, if there is one), e.g. to set up modules
#   COOP_MODULES   modules to `module load` before anything runs
#   COOP_LAUNCHER  srun, srun:PLUGIN (srun --mpi=PLUGIN) or mpirun, instead
#                  of the choice of coop_job_launcher below
#   COOP_OUTPUT    the HDF5 output file (each script has its own default)
#   COOP_JOBSCRIPTS the folder of this file and the scripts, instead of the
#                  lookup below
#   NP             ranks for mpirun outside Slurm (default 1)
#
# Where the scripts are: each script first finds its own folder, for this
# file and the binary (the same block at the top of each): COOP_JOBSCRIPTS if
# set; else the folder of $0 when it holds coop_job.sh (run with bash, salloc
# or directly; a checkout or the install, PREFIX/share/coopsolve/jobscripts);
# else, under sbatch, whose $0 is a spool copy, the script that the job
# record names (scontrol show job: Command), a relative name being relative
# to the submit folder (SLURM_SUBMIT_DIR), not to --chdir. sbatch < FILE
# names no script: set COOP_JOBSCRIPTS.
#
# Relative paths in the arguments (INPUT, SWEEPFILE, --output, --restart) and
# in COOP_OUTPUT and COOP_RESTART are relative to the job's working folder, as
# sbatch's own --output is: the --chdir folder, else the folder sbatch ran in.
#
# A wrong argument or variable stops a script with one line naming it and
# status 2, before anything runs.

coop_die() {
  echo "coopsolve job: $*" >&2
  exit 2
}

# coop_job_count NAME VALUE: VALUE is a whole number from 1, else stop
# naming NAME.
coop_job_count() {
  case $2 in
  "" | *[!0-9]* | 0*) coop_die "$1=$2: expected a whole number from 1" ;;
  esac
}

# coop_job_file WHAT PATH: PATH is a readable file, else stop naming WHAT.
# Relative to the working folder; a name that is only in the submit folder
# gets a hint (sbatch --chdir moves the job away from it).
coop_job_file() {
  [ -f "$2" ] && [ -r "$2" ] && return 0
  local hint=
  case $2 in
  /*) ;;
  *) if [ -n "${SLURM_SUBMIT_DIR:-}" ] && [ "$SLURM_SUBMIT_DIR" != "$PWD" ] && [ -f "$SLURM_SUBMIT_DIR/$2" ]; then
      hint=" (relative names are relative to the job's working folder, --chdir; $SLURM_SUBMIT_DIR/$2 is in the submit folder)"
    fi ;;
  esac
  coop_die "$1 $2: no such file in $PWD$hint"
}

# coop_job_modules: the site file, then `module load $COOP_MODULES`.
coop_job_modules() {
  local site=${COOP_SITE:-$COOP_JOB_DIR/site.sh} f
  if [ -n "${COOP_SITE:-}" ] || [ -r "$site" ]; then
    [ -r "$site" ] || coop_die "COOP_SITE=$site: no such file"
    set +u # module and site scripts often read unset variables
    # shellcheck disable=SC1090
    . "$site"
    set -u
  fi
  [ -n "${COOP_MODULES:-}" ] || return 0
  set +u
  if ! type module >/dev/null 2>&1; then
    for f in /etc/profile.d/lmod.sh /etc/profile.d/modules.sh /usr/share/lmod/lmod/init/bash \
      /usr/share/modules/init/bash; do
      # shellcheck disable=SC1090
      [ -r "$f" ] && { . "$f"; break; }
    done
  fi
  type module >/dev/null 2>&1 || coop_die "COOP_MODULES is set but there is no module command"
  # shellcheck disable=SC2086
  module load $COOP_MODULES || coop_die "module load $COOP_MODULES failed"
  set -u
}

# coop_job_binary: the coopsolve to run, as an absolute path, in $COOP_BIN.
coop_job_binary() {
  local c
  for c in "${COOPSOLVE:-}" "$(command -v coopsolve 2>/dev/null)" \
    "$COOP_JOB_DIR/../../../bin/coopsolve" "$COOP_JOB_DIR/../_build/coopsolve"; do
    [ -n "$c" ] || continue
    if [ -x "$c" ] && [ -f "$c" ]; then
      COOP_BIN=$(cd "$(dirname "$c")" && pwd)/$(basename "$c")
      return 0
    fi
    [ "$c" = "${COOPSOLVE:-}" ] && coop_die "COOPSOLVE=$c is not an executable file"
  done
  coop_die "no coopsolve: set COOPSOLVE, put it on PATH, or build it in $(cd "$COOP_JOB_DIR/.." && pwd)/_build"
}

# Which MPI the binary was linked with: openmpi, mpich (MPICH, Intel MPI,
# MVAPICH) or unknown.
coop_job_mpi_family() {
  local libs
  libs=$(ldd "$COOP_BIN" 2>/dev/null)
  case $libs in
  *libmpi.so.40* | *libopen-pal* | *libopen-rte*) echo openmpi ;;
  *libmpich* | *libmpi.so.12* | *libmpifort.so.12*) echo mpich ;;
  *)
    case $(mpirun --version 2>&1) in
    *"Open MPI"* | *"Open RTE"*) echo openmpi ;;
    *HYDRA* | *"Intel(R) MPI"*) echo mpich ;;
    *) echo unknown ;;
    esac
    ;;
  esac
}

# coop_job_launcher: fills COOP_LAUNCH (the command that starts the ranks).
# Inside an allocation: srun when Slurm's MPI plugins include one this MPI
# speaks (Open MPI: pmix; MPICH family: pmi2 or pmix), mpirun otherwise (it
# reads the allocation itself). Outside: mpirun with NP ranks (default 1).
coop_job_launcher() {
  local want=${COOP_LAUNCHER:-} family plugins
  family=$(coop_job_mpi_family)
  if [ -z "$want" ]; then
    want=mpirun
    if [ -n "${SLURM_JOB_ID:-}" ] && command -v srun >/dev/null 2>&1; then
      if ! plugins=$(srun --mpi=list 2>&1); then
        echo "coopsolve job: srun --mpi=list failed${plugins:+ (${plugins%%$'\n'*})}; starting the ranks with mpirun" >&2
        plugins=
      fi
      case $family in
      openmpi) echo "$plugins" | grep -qw pmix && want=srun:pmix ;;
      mpich)
        if echo "$plugins" | grep -qw pmi2; then want=srun:pmi2
        elif echo "$plugins" | grep -qw pmix; then want=srun:pmix; fi ;;
      esac
    fi
  fi
  case $want in
  srun) COOP_LAUNCH=(srun) ;;
  srun:*) COOP_LAUNCH=(srun "--mpi=${want#srun:}") ;;
  mpirun | mpiexec)
    command -v "$want" >/dev/null 2>&1 || coop_die "no $want on PATH (set COOP_MODULES or COOP_LAUNCHER)"
    # Open MPI refuses root unless told (containers run jobs as root)
    [ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    if [ -n "${SLURM_NTASKS:-}" ]; then
      coop_job_count SLURM_NTASKS "$SLURM_NTASKS"
    else
      coop_job_count NP "${NP:-1}"
    fi
    COOP_LAUNCH=("$want" -np "${SLURM_NTASKS:-${NP:-1}}")
    ;;
  *) coop_die "COOP_LAUNCHER=$want: expected srun or mpirun" ;;
  esac
  COOP_MPI_FAMILY=$family
}

# coop_job_setup: everything above, in order.
coop_job_setup() {
  coop_job_modules
  coop_job_binary
  coop_job_launcher
}

# coop_job_header INPUT ARGS...: the job, the binary's version and the
# resolved configuration at the job's rank count (coopsolve --dry-run: also
# checks the input before the solve), kept in $COOP_DRY for the scripts.
# Returns the dry run's status (2: bad input).
coop_job_header() {
  local job=${SLURM_JOB_ID:-(no Slurm job)}
  [ -z "${SLURM_ARRAY_JOB_ID:-}" ] || job="${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID} ($SLURM_JOB_ID)"
  echo "== coopsolve job $job${SLURM_JOB_NAME:+ $SLURM_JOB_NAME} on $(hostname), $(date '+%Y-%m-%d %H:%M:%S %Z')"
  if [ -n "${SLURM_JOB_ID:-}" ]; then
    echo "   nodes ${SLURM_JOB_NODELIST:-?} (${SLURM_JOB_NUM_NODES:-?}), tasks ${SLURM_NTASKS:-1}," \
      "cpus per task ${SLURM_CPUS_PER_TASK:-default}, GPUs ${SLURM_GPUS_ON_NODE:-none} per node" \
      "(CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset}), partition ${SLURM_JOB_PARTITION:-?}"
  fi
  echo "   binary $COOP_BIN ($COOP_MPI_FAMILY MPI), launcher: ${COOP_LAUNCH[*]}"
  echo "   modules: ${COOP_MODULES:-none}; working folder $(pwd)"
  echo "== coopsolve --version"
  "$COOP_BIN" --version 2>&1 | sed 's/^/   /'
  echo "== ${COOP_LAUNCH[*]} coopsolve $* --dry-run"
  local rc=0
  COOP_DRY=$("${COOP_LAUNCH[@]}" "$COOP_BIN" "$@" --dry-run 2>&1 </dev/null) || rc=$?
  printf '%s\n' "$COOP_DRY"
  [ $rc -eq 0 ] || echo "== dry run failed with status $rc"
  return $rc
}

# coop_job_sweep FILE N: the parameter lines of a sweep file (the rules are in
# jobscripts/sweep.txt): how many in COOP_SWEEP_N, line N (CR removed) in
# COOP_SWEEP_LINE and its words in COOP_WORDS; N=0 only counts. A quote left
# open in line N stops with FILE:LINE.
coop_job_sweep() {
  local line no=0 at=0
  COOP_SWEEP_N=0 COOP_SWEEP_LINE='' COOP_WORDS=()
  while IFS= read -r line || [ -n "$line" ]; do
    no=$((no + 1))
    line=${line%$'\r'}
    [ $no -gt 1 ] || line=${line#$'\xef\xbb\xbf'} # a byte order mark
    if [[ $line =~ ^[[:blank:]]*(#|$) ]]; then continue; fi
    COOP_SWEEP_N=$((COOP_SWEEP_N + 1))
    if [ "$COOP_SWEEP_N" = "$2" ]; then COOP_SWEEP_LINE=$line at=$no; fi
  done <"$1"
  [ $at -gt 0 ] || return 0
  _coop_words "$COOP_SWEEP_LINE" || coop_die "$1:$at: a $COOP_QUOTE quote is not closed"
}

# _coop_words LINE: LINE split into words in COOP_WORDS as the shell splits
# them, without expansions: blanks separate words; '...' keeps what it holds;
# "..." too, but for \" (a quote) and \\ (a backslash); elsewhere \ keeps the
# next character; a # that starts a word starts a comment. False on a quote
# left open (which one in COOP_QUOTE).
_coop_words() {
  local s=$1 w='' inw=0 c i=0 n=${#1} q
  COOP_WORDS=()
  while [ "$i" -lt "$n" ]; do
    c=${s:i:1}
    i=$((i + 1))
    case $c in
    ' ' | $'\t')
      if [ $inw = 1 ]; then COOP_WORDS+=("$w"); fi
      w='' inw=0 ;;
    \#)
      if [ $inw = 0 ]; then break; fi
      w+=$c ;;
    \\) w+=${s:i:1} i=$((i + 1)) inw=1 ;;
    \')
      q=${s:i}
      [[ $q == *\'* ]] || { COOP_QUOTE="'"; return 1; }
      q=${q%%\'*}
      w+=$q i=$((i + ${#q} + 1)) inw=1 ;;
    \")
      inw=1
      while :; do
        [ "$i" -lt "$n" ] || { COOP_QUOTE='"'; return 1; }
        c=${s:i:1}
        i=$((i + 1))
        case $c in
        \") break ;;
        \\) case ${s:i:1} in \" | \\) c=${s:i:1} i=$((i + 1)) ;; esac ;;
        esac
        w+=$c
      done ;;
    *) w+=$c inw=1 ;;
    esac
  done
  if [ $inw = 1 ]; then COOP_WORDS+=("$w"); fi
}

# coop_job_resolved SECTION KEY: a value of the resolved configuration printed
# by the dry run (quotes removed), empty if absent. A string is printed in
# double quotes and holds no '"', so a '#' in it (run#1.h5) is no comment.
coop_job_resolved() {
  awk -v sec="[$1]" -v key="$2" '
    /^\[/ { in_sec = ($1 == sec); next }
    in_sec && $1 == key && $2 == "=" {
      v = $0; sub(/^[^=]*= */, "", v)
      if (v ~ /^"/) { v = substr(v, 2); sub(/".*$/, "", v) } else sub(/ *#.*$/, "", v)
      print v; exit
    }' <<<"$COOP_DRY"
}

# coop_job_run ARGS...: start the ranks on coopsolve ARGS in the background
# ($COOP_PID) so that the script's traps run while the solve does.
coop_job_run() {
  echo "== ${COOP_LAUNCH[*]} coopsolve $*  ($(date '+%H:%M:%S'))"
  "${COOP_LAUNCH[@]}" "$COOP_BIN" "$@" </dev/null &
  COOP_PID=$!
}

# coop_job_wait: wait for the ranks started by coop_job_run; their status in
# $COOP_RC. A trapped signal interrupts `wait`, so wait again until they end.
coop_job_wait() {
  COOP_RC=0
  while :; do
    wait "$COOP_PID" && COOP_RC=0 || COOP_RC=$?
    kill -0 "$COOP_PID" 2>/dev/null || break
  done
  echo "== coopsolve ended with status $COOP_RC ($(date '+%H:%M:%S'))"
}

# _coop_rec KEY: the value of KEY in the job record $COOP_REC in $v; false
# when absent or unset.
_coop_rec() {
  v=$(printf '%s' "$COOP_REC" | sed -n "s/.* $1=\([^ ]*\) .*/\1/p")
  [ -n "$v" ] && [ "$v" != "(null)" ] && [ "$v" != "N/A" ]
}

# _coop_gpus TRES: the GPU part of a TresPer* value (gres:gpu:4 in Slurm
# 22.05, gres/gpu:4 later) as sbatch's --gpus* options take it: 4, a100:4.
_coop_gpus() {
  printf '%s' "$1" | tr ',' '\n' | sed -n 's/^gres[:/]gpu://p' | head -n 1
}

# coop_job_request_options: sbatch options that ask again for what this job
# got, in COOP_REQUEST (for a chain's next link). From the environment where
# sbatch sets it only for what was asked (tasks, tasks per node, CPUs per
# task), from the job record otherwise. The log goes on in this job's files.
# False, with a message, when the job record cannot be read.
coop_job_request_options() {
  local v
  if ! v=$(scontrol show job -o "$SLURM_JOB_ID" 2>&1); then
    echo "coopsolve job: scontrol show job $SLURM_JOB_ID failed${v:+ (${v%%$'\n'*})}" >&2
    return 1
  fi
  COOP_REC=" $v "
  COOP_REQUEST=(--job-name="${SLURM_JOB_NAME:-coopsolve}" --chdir="$PWD" --nodes="${SLURM_JOB_NUM_NODES:-1}")
  [ -z "${SLURM_NTASKS:-}" ] || COOP_REQUEST+=(--ntasks="$SLURM_NTASKS")
  [ -z "${SLURM_NTASKS_PER_NODE:-}" ] || COOP_REQUEST+=(--ntasks-per-node="$SLURM_NTASKS_PER_NODE")
  [ -z "${SLURM_CPUS_PER_TASK:-}" ] || COOP_REQUEST+=(--cpus-per-task="$SLURM_CPUS_PER_TASK")
  [ -z "${SLURM_MEM_PER_GPU:-}" ] || COOP_REQUEST+=(--mem-per-gpu="$SLURM_MEM_PER_GPU")
  ! _coop_rec Partition || COOP_REQUEST+=(--partition="$v")
  ! _coop_rec Account || COOP_REQUEST+=(--account="$v")
  ! _coop_rec QOS || COOP_REQUEST+=(--qos="$v")
  ! _coop_rec Reservation || COOP_REQUEST+=(--reservation="$v")
  ! _coop_rec Features || COOP_REQUEST+=(--constraint="$v")
  ! _coop_rec Licenses || COOP_REQUEST+=(--licenses="$v")
  if _coop_rec TimeLimit && [ "$v" != UNLIMITED ] && [ "$v" != Partition_Limit ]; then
    COOP_REQUEST+=(--time="$v")
  fi
  if _coop_rec MinMemoryNode && [ "${v%[KMGT]}" != 0 ]; then COOP_REQUEST+=(--mem="$v"); fi
  if _coop_rec MinMemoryCPU && [ "${v%[KMGT]}" != 0 ]; then COOP_REQUEST+=(--mem-per-cpu="$v"); fi
  if _coop_rec OverSubscribe && [ "$v" = NO ]; then COOP_REQUEST+=(--exclusive); fi
  if _coop_rec TresPerNode; then
    # every generic resource per node (GPUs and others) as --gres=gpu:4,nic:1
    v=$(printf '%s' "$v" | tr ',' '\n' | sed -n 's/^gres[:/]//p' | paste -sd, -)
    [ -z "$v" ] || COOP_REQUEST+=(--gres="$v")
  fi
  if _coop_rec TresPerTask; then v=$(_coop_gpus "$v"); [ -z "$v" ] || COOP_REQUEST+=(--gpus-per-task="$v"); fi
  if _coop_rec TresPerJob; then v=$(_coop_gpus "$v"); [ -z "$v" ] || COOP_REQUEST+=(--gpus="$v"); fi
  if _coop_rec TresPerSocket; then v=$(_coop_gpus "$v"); [ -z "$v" ] || COOP_REQUEST+=(--gpus-per-socket="$v"); fi
  # the log: where this script's output goes now (a file, unless run by hand)
  v=$(readlink -f /proc/$$/fd/1 2>/dev/null || true)
  [ ! -f "$v" ] || COOP_REQUEST+=(--output="$v" --open-mode=append)
  v=$(readlink -f /proc/$$/fd/2 2>/dev/null || true)
  [ ! -f "$v" ] || COOP_REQUEST+=(--error="$v")
  return 0
}
