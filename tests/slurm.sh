#!/bin/sh
# The jobscripts, in two parts.
# 1. Without Slurm, as sbatch runs them but with Slurm's environment faked (a
#    spool copy of the script, SLURM_* variables, a fake scontrol and a failing
#    srun on PATH), at 1 and 2 ranks: each script finds its folder and the
#    binary from a relative job record under --chdir, an installed copy, bash
#    or COOP_JOBSCRIPTS, and says why when it cannot (no script in the record,
#    scontrol failing); srun --mpi=list failing falls back to mpirun with a
#    message, and a chain link whose scontrol fails says how to resume; a relative input is looked up in the working folder; a sweep
#    file with CRLF ends, comments, quotes and '#' in names; chain.sbatch with
#    '#' in its output and checkpoint names; wrong NP, SLURM_NTASKS,
#    SLURM_ARRAY_TASK_ID, COOP_CHAIN_MAX each stop with one line and status 2.
# 2. On a real single-node Slurm (munged, slurmctld and slurmd started here,
#    every file in a temporary folder, stopped on any exit):
#   - coopsolve.sbatch as the README shows it (tasks and GPUs per node from the
#     sbatch line), with a site file; a bad input ends the job with status 2;
#     and submitted from the source tree by a relative name with --chdir;
#   - run_mpirun.sh inside salloc takes SLURM_NTASKS ranks;
#   - sweep.sbatch as a job array (relative name, --chdir) on a sweep file with
#     CRLF ends, comments and quoted names: every task runs its line and
#     writes its file;
#   - chain.sbatch (relative name, --chdir, '#' in its output name),
#     interrupted twice (the time-limit warning forced with
#     scancel --batch --signal=USR1, then TERM to the ranks as at the limit
#     itself): it checkpoints, resubmits itself with the same request, and ends
#     with the same field, bit for bit, as one uninterrupted run; then once in
#     requeue mode.
# Part 2 skips (77, after part 1 passed) without the Slurm packages or root
# (slurmd starts jobs as root). Bounded: the whole test ends within 320 s, and
# every wait has its limit.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
if [ -z "${COOP_SLURM_TIMED:-}" ]; then
  COOP_SLURM_TIMED=1 exec timeout -k 30 320 bash "$0" "$@"
fi
. "$COOP_SRCDIR/tests/common.sh"
. "$COOP_SRCDIR/tests/slurm/cluster.sh"
coop_python
coop_tmpdir
trap 'slurm_cluster_stop; rm -rf "$TMP"' EXIT
trap 'exit 1' TERM INT

JOBS=$COOP_SRCDIR/jobscripts
RUN=$TMP/run
mkdir -p "$RUN"
t0=$(date +%s)
say() { echo "[$(($(date +%s) - t0)) s] $*"; }
quick=(--backend host --set solver.rtol=0 --set solver.max_iter=300 --set output.monitor_every=0)
# nothing of a surrounding Slurm job or of the caller's settings reaches the
# scripts; $COOPSOLVE stays for this script but is not passed on: the scripts
# find the binary
for v in $(compgen -e); do
  case $v in SLURM_* | SBATCH_* | SALLOC_* | SRUN_*) unset "$v" ;; esac
done
unset COOP_OUTPUT COOP_LAUNCHER COOP_MODULES COOP_SITE COOP_RESTART COOP_CHAIN_ID COOP_CHAIN_LINK \
  COOP_CHAIN_MODE COOP_CHAIN_SBATCH COOP_CHAIN_MAX COOP_JOBSCRIPTS COOP_OUTPUT_PREFIX NP
export -n COOPSOLVE

# ==== part 1: no Slurm, its environment faked
F=$TMP/fake
mkdir -p "$F/bin" "$F/spool" "$F/submit" "$F/work"
# a fake scontrol: the job record with FAKE_COMMAND as Command, or Slurm's
# error when FAKE_SCONTROL_FAIL is set; a fake srun whose --mpi=list fails
cat >"$F/bin/scontrol" <<'EOF'
#!/bin/bash
if [ -n "${FAKE_SCONTROL_FAIL:-}" ]; then
  echo "slurm_load_jobs error: Unable to contact slurm controller (connect failure)" >&2
  exit 1
fi
echo "JobId=$SLURM_JOB_ID JobName=fake UserId=me(1) JobState=RUNNING Partition=debug" \
  "Command=$FAKE_COMMAND WorkDir=$PWD StdErr=$PWD/x.out"
EOF
cat >"$F/bin/srun" <<'EOF'
#!/bin/bash
echo "srun: error: fake srun: $*" >&2
exit 1
EOF
chmod +x "$F/bin/scontrol" "$F/bin/srun"
# the binary only where a test puts it: no coopsolve on PATH
path=$F/bin
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do [ -x "$d/coopsolve" ] || path=$path:$d; done
# an install tree in the submit folder, and the input in the working folder
inst=$F/submit/prefix/share/coopsolve/jobscripts
mkdir -p "$inst" "$F/submit/prefix/bin"
cp "$JOBS"/* "$inst/"
ln -s "$COOPSOLVE" "$F/submit/prefix/bin/coopsolve"
cp "$INPUTS/quickstart.ini" "$F/work/q.ini"
cp "$INPUTS/quickstart.ini" "$F/submit/only-here.ini"

# fake_job LOG VAR=VALUE... -- SCRIPT ARG...: run SCRIPT with bash in the
# working folder with the variables, Slurm's commands faked; status in $rc.
# SCRIPT "spool:NAME" is a copy of jobscripts/NAME as Slurm's spool holds it.
fake_job() {
  local log=$1 envs=() script
  shift
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  script=$2
  shift 2
  case $script in spool:*)
    mkdir -p "$F/spool/job"
    cp "$JOBS/${script#spool:}" "$F/spool/job/slurm_script"
    script=$F/spool/job/slurm_script ;;
  esac
  rc=0
  (cd "$F/work" && env PATH="$path" "${envs[@]}" timeout 60 bash "$script" "$@" </dev/null) >"$log" 2>&1 || rc=$?
}

# expect_ok WHAT LOG TEXT...: status 0 and every TEXT in LOG
expect_ok() {
  local what=$1 log=$2 t
  shift 2
  [ "$rc" = 0 ] || { cat "$log"; fail "$what: status $rc, not 0"; }
  for t in "$@"; do grep -qF -- "$t" "$log" || { cat "$log"; fail "$what: no '$t'"; }; done
}

# expect_stop WHAT LOG TEXT: status 2 with one line, which holds TEXT
expect_stop() {
  [ "$rc" = 2 ] || { cat "$2"; fail "$1: status $rc, not 2"; }
  [ "$(wc -l <"$2")" = 1 ] || { cat "$2"; fail "$1: $(wc -l <"$2") lines, not 1"; }
  grep -q '^coopsolve job: ' "$2" && grep -qF -- "$3" "$2" || { cat "$2"; fail "$1: the line lacks '$3'"; }
}

# shape FILE: the field's shape (ny nx)
shape() { $PY -c 'import h5py,sys; print(*h5py.File(sys.argv[1])["fields/u"].shape)' "$1"; }

# -- finding the scripts' folder and the binary
# the report: sbatch --chdir=WORK prefix/.../coopsolve.sbatch from the submit
# folder; the record's Command is relative to it. srun --mpi=list fails: mpirun.
cmd="prefix/share/coopsolve/jobscripts/coopsolve.sbatch q.ini ${quick[*]}"
fake_job "$F/l" SLURM_JOB_ID=41 SLURM_SUBMIT_DIR="$F/submit" SLURM_NTASKS=2 FAKE_COMMAND="$cmd" -- \
  spool:coopsolve.sbatch q.ini "${quick[@]}"
expect_ok "relative script, --chdir" "$F/l" "binary $F/submit/prefix/bin/coopsolve (" \
  "coopsolve job: srun --mpi=list failed (srun: error: fake srun: --mpi=list); starting the ranks with mpirun" \
  "launcher: mpirun -np 2" "# decomposition: 2 ranks" "coopsolve ended with status 0"
[ -f "$F/work/coopsolve-41.h5" ] || fail "relative script, --chdir: no coopsolve-41.h5 in the working folder"
# srun --mpi=list fails in a job run by its absolute name: a message, and
# mpirun at 1 rank
fake_job "$F/l" SLURM_JOB_ID=47 SLURM_NTASKS=1 COOPSOLVE="$COOPSOLVE" -- "$JOBS/coopsolve.sbatch" q.ini "${quick[@]}"
expect_ok "srun --mpi=list failing" "$F/l" \
  "coopsolve job: srun --mpi=list failed (srun: error: fake srun: --mpi=list); starting the ranks with mpirun" \
  "launcher: mpirun -np 1" "# decomposition: 1 ranks" "coopsolve ended with status 0"
# the installed copy by its absolute name, with bash, no Slurm: 1 rank
fake_job "$F/l" COOP_OUTPUT=direct.h5 -- "$inst/coopsolve.sbatch" q.ini "${quick[@]}"
expect_ok "installed copy with bash" "$F/l" "binary $F/submit/prefix/bin/coopsolve (" "# decomposition: 1 ranks"
[ -f "$F/work/direct.h5" ] || fail "installed copy with bash: no direct.h5"
# sbatch < FILE: the record names no script
fake_job "$F/l" SLURM_JOB_ID=42 SLURM_SUBMIT_DIR="$F/submit" FAKE_COMMAND="(null)" -- spool:coopsolve.sbatch q.ini
expect_stop "sbatch < FILE" "$F/l" "the job record names no script (sbatch < FILE?); set COOP_JOBSCRIPTS"
# scontrol fails
fake_job "$F/l" SLURM_JOB_ID=43 FAKE_SCONTROL_FAIL=1 -- spool:coopsolve.sbatch q.ini
expect_stop "scontrol failing" "$F/l" "scontrol show job 43 failed (slurm_load_jobs error: Unable to contact"
# COOP_JOBSCRIPTS without coop_job.sh
fake_job "$F/l" SLURM_JOB_ID=44 FAKE_COMMAND="(null)" COOP_JOBSCRIPTS="$F" -- spool:coopsolve.sbatch q.ini
expect_stop "COOP_JOBSCRIPTS" "$F/l" "no coop_job.sh in COOP_JOBSCRIPTS=$F;"
# a relative input is looked for in the working folder, with a hint when it is in the submit folder
fake_job "$F/l" SLURM_JOB_ID=45 SLURM_SUBMIT_DIR="$F/submit" FAKE_COMMAND="$cmd" -- spool:coopsolve.sbatch only-here.ini
expect_stop "input in the submit folder" "$F/l" \
  "INPUT only-here.ini: no such file in $F/work (relative names are relative to the job's working folder, --chdir; $F/submit/only-here.ini is in the submit folder)"
# every script finds its folder with the same block
blk() { sed -n "/^# ---- this script's folder/,/^# ----\$/p" "$JOBS/$1"; }
for f in sweep.sbatch chain.sbatch run_mpirun.sh; do
  [ -n "$(blk "$f")" ] && [ "$(blk "$f")" = "$(blk coopsolve.sbatch)" ] ||
    fail "$f: its block that finds the scripts' folder differs from coopsolve.sbatch's"
done
say "part 1: the scripts' folder from a relative job record, the install, bash; messages"

# -- ranks: NP, SLURM_NTASKS
for bad in 0 -1 two; do
  fake_job "$F/l" NP="$bad" -- "$JOBS/run_mpirun.sh" q.ini
  expect_stop "run_mpirun.sh NP=$bad" "$F/l" "NP=$bad: expected a whole number from 1"
  fake_job "$F/l" NP="$bad" COOPSOLVE="$COOPSOLVE" -- "$JOBS/coopsolve.sbatch" q.ini
  expect_stop "coopsolve.sbatch NP=$bad" "$F/l" "NP=$bad: expected a whole number from 1"
done
fake_job "$F/l" SLURM_JOB_ID=46 SLURM_NTASKS=0 COOP_LAUNCHER=mpirun COOPSOLVE="$COOPSOLVE" -- "$JOBS/coopsolve.sbatch" q.ini
expect_stop "SLURM_NTASKS=0" "$F/l" "SLURM_NTASKS=0: expected a whole number from 1"
for np in 1 2; do
  fake_job "$F/l" NP=$np COOPSOLVE="$COOPSOLVE" -- "$JOBS/run_mpirun.sh" q.ini "${quick[@]}" --output np.h5
  expect_ok "run_mpirun.sh NP=$np" "$F/l" "mpirun -np $np " "fp64, $np rank"
done
say "part 1: NP and SLURM_NTASKS"

# -- the sweep: CRLF ends, comments, quotes, '#' in names; task 1 at 1 rank,
# task 2 at 2 ranks; the spool copy finds coop_job.sh by COOP_JOBSCRIPTS
printf '%s\r\n' '# grid sizes' '' '   # an indented comment' \
  "--set grid.nx=16 --set grid.ny=12 --output 'sweep #1.h5'   # a comment, not options" \
  '--set grid.nx=24 --set "grid.ny=20" --output=run#2.h5' \
  "--set grid.nx=32 --output 'open" >"$F/work/sweep.txt"
fake_job "$F/l" -- "$JOBS/sweep.sbatch" --count sweep.txt
[ "$rc" = 0 ] && [ "$(cat "$F/l")" = 3 ] || { cat "$F/l"; fail "sweep.sbatch --count: '$(cat "$F/l")', not 3"; }
sweep_env=(SLURM_JOB_ID=50 SLURM_ARRAY_JOB_ID=50 FAKE_COMMAND="(null)" COOP_JOBSCRIPTS="$JOBS" COOPSOLVE="$COOPSOLVE"
  COOP_LAUNCHER=mpirun)
for t in 1 2; do
  fake_job "$F/l" "${sweep_env[@]}" SLURM_ARRAY_TASK_ID=$t SLURM_NTASKS=$t -- spool:sweep.sbatch q.ini sweep.txt "${quick[@]}"
  expect_ok "sweep task $t" "$F/l" "task $t of 3" "# decomposition: $t ranks" "coopsolve ended with status 0"
done
[ "$(shape "$F/work/sweep #1.h5")" = "12 16" ] || fail "sweep task 1: 'sweep #1.h5' is not 12 x 16"
[ "$(shape "$F/work/run#2.h5")" = "20 24" ] || fail "sweep task 2: 'run#2.h5' is not 20 x 24"
fake_job "$F/l" "${sweep_env[@]}" SLURM_ARRAY_TASK_ID=3 -- spool:sweep.sbatch q.ini sweep.txt
expect_stop "sweep task 3" "$F/l" "sweep.txt:6: a ' quote is not closed"
for t in 0 -1 x 4; do
  fake_job "$F/l" "${sweep_env[@]}" SLURM_ARRAY_TASK_ID=$t -- spool:sweep.sbatch q.ini sweep.txt
  case $t in
  4) expect_stop "sweep task $t" "$F/l" "SLURM_ARRAY_TASK_ID=4: sweep.txt has 3 parameter lines (sbatch --array=1-3)" ;;
  *) expect_stop "sweep task $t" "$F/l" "SLURM_ARRAY_TASK_ID=$t: expected a whole number from 1" ;;
  esac
done
say "part 1: the sweep file"

# -- chain.sbatch: '#' in the output name and its checkpoint's; link 1 at 1
# rank writes both, link 2 at 2 ranks goes on from the checkpoint
chain_args=(q.ini "${quick[@]}" --set output.checkpoint_every=100 --output 'chain#1.h5')
fake_job "$F/l" SLURM_JOB_ID=60 SLURM_NTASKS=1 COOP_LAUNCHER=mpirun COOPSOLVE="$COOPSOLVE" -- \
  "$JOBS/chain.sbatch" "${chain_args[@]}"
expect_ok "chain link 1" "$F/l" "== chain 60 finished in link 1: chain#1.h5"
[ -f "$F/work/chain#1.ckpt.h5" ] || { cat "$F/l"; fail "chain link 1: no chain#1.ckpt.h5"; }
fake_job "$F/l" SLURM_JOB_ID=61 SLURM_NTASKS=2 COOP_CHAIN_ID=60 COOP_CHAIN_LINK=2 COOP_LAUNCHER=mpirun \
  COOPSOLVE="$COOPSOLVE" -- \
  "$JOBS/chain.sbatch" "${chain_args[@]}"
expect_ok "chain link 2" "$F/l" "--restart chain#1.ckpt.h5" "== chain 60 finished in link 2: chain#1.h5"
# a link that stops (an mpirun that passes the dry run on and ends the solve
# with status 3, as a checkpoint-and-exit does) while scontrol fails: it says
# so and how to resume, status 3
mkdir -p "$F/stop"
printf '#!/bin/bash\nfor a; do [ "$a" = --dry-run ] && exec %q "$@"; done\nexit 3\n' "$(command -v mpirun)" >"$F/stop/mpirun"
chmod +x "$F/stop/mpirun"
fake_job "$F/l" PATH="$F/stop:$path" SLURM_JOB_ID=62 SLURM_NTASKS=1 COOP_CHAIN_ID=60 COOP_CHAIN_LINK=2 \
  COOP_LAUNCHER=mpirun COOPSOLVE="$COOPSOLVE" FAKE_SCONTROL_FAIL=1 -- "$JOBS/chain.sbatch" "${chain_args[@]}"
[ "$rc" = 3 ] || { cat "$F/l"; fail "chain, scontrol failing: status $rc, not 3"; }
for t in "coopsolve job: scontrol show job 62 failed (slurm_load_jobs error: Unable to contact" \
  "== the next link cannot ask for this job's resources; resume with COOP_RESTART=chain#1.ckpt.h5"; do
  grep -qF -- "$t" "$F/l" || { cat "$F/l"; fail "chain, scontrol failing: no '$t'"; }
done
for v in COOP_CHAIN_MAX=0 COOP_CHAIN_MAX=ten COOP_CHAIN_LINK=-2; do
  fake_job "$F/l" SLURM_JOB_ID=63 "$v" COOPSOLVE="$COOPSOLVE" -- "$JOBS/chain.sbatch" q.ini
  expect_stop "chain $v" "$F/l" "$v: expected a whole number from 1"
done
say "part 1: chain.sbatch with '#' in its names; scontrol failing"

# ==== part 2: a real Slurm

# wait_job ID SECONDS: until the job (every task of an array) has left the
# queue; fail after SECONDS.
wait_job() {
  local _
  for _ in $(seq $(($2 * 5))); do
    [ -z "$(timeout 10 squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  timeout 10 scontrol show job "$1"
  fail "job $1 still queued or running after $2 s"
}

# job_field ID KEY: a field of the job record (kept 10 minutes: MinJobAge).
job_field() {
  timeout 10 scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# expect_done ID LOG: the job completed with status 0.
expect_done() {
  local state code
  state=$(job_field "$1" JobState) code=$(job_field "$1" ExitCode)
  if [ "$state" != COMPLETED ] || [ "$code" != 0:0 ]; then
    cat "$2"
    fail "job $1: $state, exit code $code"
  fi
}

# wait_log FILE AWKCOND SECONDS: until a line of FILE matches AWKCOND (an awk
# program that exits 0 on a match).
wait_log() {
  local _
  for _ in $(seq $(($3 * 10))); do # tenths of a second
    [ -f "$1" ] && awk "$2" "$1" && return 0
    sleep 0.1
  done
  [ ! -f "$1" ] || cat "$1"
  fail "no line matching $2 in $1 after $3 s"
}

slurm_have_packages || { echo "SKIP: part 2, no Slurm (Debian: slurmctld slurmd slurm-client munge)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: part 2, slurmd needs root to start jobs"; exit 77; }
PATH=$PATH:/usr/sbin
say "starting Slurm in $TMP/slurm"
slurm_cluster_start "$TMP/slurm" || fail "the Slurm cluster did not start"
say "Slurm is up: $(sinfo -h -N -o '%N %T %c CPUs %G')"
# Jobs inherit this environment: coopsolve from the build on PATH, and the
# Open MPI settings of common.sh (root, oversubscription). Ranks that srun
# starts do not know that they share the cores with other tests and spin: on a
# loaded 2-core machine 8 ms per Jacobi sweep instead of 50 us, unless they
# yield when idle.
export PATH=$COOP_BUILDDIR:$PATH OMPI_MCA_mpi_yield_when_idle=1
cd "$RUN" || fail "no $RUN"

# ---- the single job, as in the README, with a site file
cat >"$TMP/site.sh" <<'EOF'
echo "site file read"
EOF
j=$(COOP_SITE=$TMP/site.sh timeout 20 sbatch --parsable --nodes=1 --ntasks-per-node=2 --gpus-per-node=2 \
  --time=5 "$JOBS/coopsolve.sbatch" "$INPUTS/quickstart.ini" "${quick[@]}") || fail "sbatch coopsolve.sbatch"
wait_job "$j" 60
log=$RUN/coopsolve-$j.out
expect_done "$j" "$log"
version=$("$COOPSOLVE" --version | head -n 1)
for want in "site file read" "$version" "binary $COOPSOLVE (" "tasks 2," "GPUs 2 per node" "[grid]" "# decomposition: 2 ranks" \
  "output      coopsolve-$j.h5" "coopsolve ended with status 0"; do
  grep -qF -- "$want" "$log" || { cat "$log"; fail "single job: log lacks '$want'"; }
done
if srun --mpi=list 2>&1 | grep -qw pmix && ldd "$COOPSOLVE" | grep -q 'libmpi.so.40'; then
  grep -q 'launcher: srun --mpi=pmix' "$log" || { cat "$log"; fail "single job: not started with srun --mpi=pmix"; }
fi
$PY "$H5CHECK" show "$RUN/coopsolve-$j.h5" >/dev/null || fail "single job: coopsolve-$j.h5 does not read"
say "single job $j: done ($(grep -o 'launcher: .*' "$log"))"

# a bad input: the dry run at the top stops the job with status 2, no solve
j=$(timeout 20 sbatch --parsable -n 1 --time=5 "$JOBS/coopsolve.sbatch" "$INPUTS/quickstart.ini" \
  "${quick[@]}" --set grid.nx=0) || fail "sbatch coopsolve.sbatch (bad input)"
wait_job "$j" 60
[ "$(job_field "$j" ExitCode)" = 2:0 ] || { cat "$RUN/coopsolve-$j.out"; fail "bad input: exit code $(job_field "$j" ExitCode), not 2:0"; }
[ ! -e "$RUN/coopsolve-$j.h5" ] || fail "bad input: wrote coopsolve-$j.h5"
say "bad input job $j: status 2"

# the report: submitted from the source tree by a relative name, --chdir
# elsewhere; the job record's Command is then relative to the submit folder
mkdir -p "$RUN/chd"
cp "$INPUTS/quickstart.ini" "$RUN/chd/q.ini"
j=$(cd "$COOP_SRCDIR" && timeout 20 sbatch --parsable --chdir="$RUN/chd" -n 1 --time=5 jobscripts/coopsolve.sbatch \
  q.ini "${quick[@]}") || fail "sbatch --chdir coopsolve.sbatch"
wait_job "$j" 60
expect_done "$j" "$RUN/chd/coopsolve-$j.out"
[ -f "$RUN/chd/coopsolve-$j.h5" ] || { cat "$RUN/chd/coopsolve-$j.out"; fail "--chdir job: no coopsolve-$j.h5 in $RUN/chd"; }
say "--chdir job $j (Command=$(job_field "$j" Command)): done"

# ---- run_mpirun.sh in an allocation: SLURM_NTASKS ranks
timeout 60 salloc -n 2 --time=5 "$JOBS/run_mpirun.sh" "$INPUTS/quickstart.ini" "${quick[@]}" \
  --output "$RUN/salloc.h5" >"$TMP/salloc.out" 2>&1 || { cat "$TMP/salloc.out"; fail "salloc run_mpirun.sh"; }
if ! grep -q '^mpirun -np 2 ' "$TMP/salloc.out" || ! grep -q '2 ranks' "$TMP/salloc.out"; then
  cat "$TMP/salloc.out"
  fail "run_mpirun.sh in salloc -n 2 did not start 2 ranks"
fi
say "run_mpirun.sh in salloc: 2 ranks"

# ---- the array: three grids, one per task, from a sweep file with CRLF
# ends, comments and quoted names, submitted by a relative name with --chdir
printf '%s\r\n' '# grid sizes' '' '   # an indented comment' \
  "--set grid.nx=16 --set grid.ny=12 --output 'sweep #1.h5'   # a comment, not options" \
  '--set grid.nx=24 --set "grid.ny=20" --output=run#2.h5' '--set grid.nx=32 --set grid.ny=28' >"$RUN/sweep.txt"
n=$("$JOBS/sweep.sbatch" --count "$RUN/sweep.txt") || fail "sweep.sbatch --count"
[ "$n" = 3 ] || fail "sweep.sbatch --count: $n, not 3"
a=$(cd "$COOP_SRCDIR" && timeout 20 sbatch --parsable --array=1-"$n" -n 1 --time=5 --chdir="$RUN" \
  jobscripts/sweep.sbatch "$INPUTS/quickstart.ini" sweep.txt "${quick[@]}") || fail "sbatch --array sweep.sbatch"
wait_job "$a" 90
for t in 1 2 3; do
  f=$RUN/coopsolve-sweep-${a}_$t.out
  [ -f "$f" ] || fail "array task $t: no log $f"
  grep -q "coopsolve ended with status 0" "$f" || { cat "$f"; fail "array task $t failed"; }
  case $t in
  1) h5="sweep #1.h5" want="12 16" ;;
  2) h5="run#2.h5" want="20 24" ;;
  3) h5="coopsolve-sweep-${a}_3.h5" want="28 32" ;;
  esac
  got=$($PY -c 'import h5py,sys; print(*h5py.File(sys.argv[1])["fields/u"].shape)' "$RUN/$h5") ||
    fail "array task $t: $h5 does not read"
  [ "$got" = "$want" ] || fail "array task $t: field shape $got, not $want"
done
say "array $a: 3 tasks, 3 files"

# ---- the chain against one uninterrupted run of the same iterations
# Size the solve to a few seconds on this machine, so that the signals land
# while it runs: measure 2000 iterations at 2 ranks first.
base=(--backend host --set grid.nx=256 --set grid.ny=256 --set solver.rtol=0 --set solver.check_every=500)
coop_mpirun 2 "$COOPSOLVE" "$INPUTS/quickstart.ini" "${base[@]}" --set solver.max_iter=2000 \
  --set output.monitor_every=0 --output "$TMP/calib.h5" >"$TMP/calib.out" 2>&1 ||
  { cat "$TMP/calib.out"; fail "calibration run"; }
per_it=$($PY -c 'import h5py,sys; print(float(h5py.File(sys.argv[1])["solver"].attrs["solve_time"]) / 2000)' "$TMP/calib.h5")
iters=$($PY -c 'import sys; n = int(4.0 / float(sys.argv[1])) // 500 * 500; print(min(max(n, 20000), 400000))' "$per_it")
chain=("${base[@]}" --set solver.max_iter="$iters" --set output.monitor_every=500)
coop_mpirun 2 "$COOPSOLVE" "$INPUTS/quickstart.ini" "${chain[@]}" --output "$TMP/ref.h5" >"$TMP/ref.out" 2>&1 ||
  { cat "$TMP/ref.out"; fail "the uninterrupted run"; }
say "reference: $iters iterations in one run"

# link_solving LOG N: link N of the chain is iterating (a monitor line after its header)
link_solving() {
  wait_log "$1" "/^== chain .*, link $2 / { on = 1 } on && /^ +iter +[0-9]+ +residual/ { found = 1; exit } END { exit !found }" 60
}

# link_iter LOG N WHAT: in link N, the iteration of its first monitor line
# (WHAT=first) or at which a signal stopped it (WHAT=stop); empty if none.
link_iter() {
  awk -v n="$2" -v what="$3" '
    /^== chain .*, link [0-9]+ / { l = $0; sub(/.*, link /, "", l); l += 0 }
    l != n { next }
    what == "first" && /^ +iter +[0-9]+ +residual/ { print $2; exit }
    what == "stop" && /^coopsolve: stopped by SIG[A-Z0-9]+ at iteration [0-9]+/ {
      v = $0; sub(/.* at iteration /, "", v); sub(/[^0-9].*/, "", v); print v; exit
    }' "$1"
}

# resumed LOG N: link N stopped part way through, and link N+1 went on from
# its checkpoint (its first monitor line is no earlier than that)
resumed() {
  local stop first
  stop=$(link_iter "$1" "$2" stop) first=$(link_iter "$1" $(($2 + 1)) first)
  if [ -z "$stop" ] || [ "$stop" -le 0 ] || [ "$stop" -ge "$iters" ] || [ -z "$first" ] ||
    [ "$first" -lt "$stop" ]; then
    cat "$1"
    fail "link $2 stopped at iteration '${stop}', link $(($2 + 1)) began at '${first}'"
  fi
  echo "link $2 stopped at iteration $stop of $iters; link $(($2 + 1)) went on from $first"
}

# from the source tree by a relative name, --chdir, a '#' in the output name
j1=$(cd "$COOP_SRCDIR" && COOP_OUTPUT='chain#1.h5' timeout 20 sbatch --parsable -n 2 --gpus-per-node=2 --time=10 \
  --chdir="$RUN" jobscripts/chain.sbatch "$INPUTS/quickstart.ini" "${chain[@]}") || fail "sbatch chain.sbatch"
log=$RUN/coopsolve-chain-$j1.out
link_solving "$log" 1
timeout 10 scancel --batch --signal=USR1 "$j1" || fail "scancel --signal=USR1 $j1"
wait_log "$log" '/^== link 1 stopped with checkpoint .*; link 2 is job [0-9]+$/ { f = 1; exit } END { exit !f }' 60
j2=$(sed -n 's/^== link 1 stopped .*; link 2 is job \([0-9]*\)$/\1/p' "$log")
say "chain: link 1 ($j1) stopped by USR1 to the batch script; link 2 is $j2"
for key in NumTasks TimeLimit TresPerNode; do
  [ "$(job_field "$j2" $key)" = "$(job_field "$j1" $key)" ] ||
    fail "link 2 asks $key=$(job_field "$j2" $key), link 1 had $(job_field "$j1" $key)"
done
link_solving "$log" 2
# the limit itself: TERM to the ranks (the job steps), not to the script
timeout 10 scancel --signal=TERM "$j2" || fail "scancel --signal=TERM $j2"
wait_log "$log" '/^== link 2 stopped with checkpoint .*; link 3 is job [0-9]+$/ { f = 1; exit } END { exit !f }' 60
j3=$(sed -n 's/^== link 2 stopped .*; link 3 is job \([0-9]*\)$/\1/p' "$log")
say "chain: link 2 stopped by TERM to the ranks; link 3 is $j3"
wait_job "$j3" 120
expect_done "$j3" "$log"
grep -qF "== chain $j1 finished in link 3: chain#1.h5" "$log" || { cat "$log"; fail "chain: no end line"; }
grep -qF -- "--restart chain#1.ckpt.h5" "$log" || { cat "$log"; fail "chain: no restart"; }
resumed "$log" 1
resumed "$log" 2
$PY "$H5CHECK" same "$TMP/ref.h5" "$RUN/chain#1.h5" --fields u ||
  { cat "$log"; fail "chain: the field differs from the uninterrupted run"; }
its=$($PY -c 'import h5py,sys; print(int(h5py.File(sys.argv[1])["solver"].attrs["iterations"]))' "$RUN/chain#1.h5")
[ "$its" = "$iters" ] || fail "chain: $its iterations, not $iters"
say "chain $j1: 3 links, the same field as one run"

# ---- requeue mode: one interruption, the same job comes back (after
# cred_expire, 15 s in this cluster) and finishes
jr=$(COOP_CHAIN_MODE=requeue timeout 20 sbatch --parsable -n 2 --time=10 "$JOBS/chain.sbatch" \
  "$INPUTS/quickstart.ini" "${chain[@]}") || fail "sbatch chain.sbatch (requeue)"
log=$RUN/coopsolve-chain-$jr.out
link_solving "$log" 1
timeout 10 scancel --batch --signal=USR1 "$jr" || fail "scancel --signal=USR1 $jr"
wait_log "$log" "/^== chain $jr finished in link 2: / { f = 1; exit } END { exit !f }" 120
wait_job "$jr" 30
expect_done "$jr" "$log"
[ "$(job_field "$jr" Restarts)" = 1 ] || fail "requeue: Restarts=$(job_field "$jr" Restarts), not 1"
resumed "$log" 1
$PY "$H5CHECK" same "$TMP/ref.h5" "$RUN/coopsolve-chain-$jr.h5" --fields u ||
  { cat "$log"; fail "requeued chain: the field differs from the uninterrupted run"; }
say "requeued chain $jr: the same field as one run"
