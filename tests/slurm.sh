#!/bin/sh
# The jobscripts on a real single-node Slurm (munged, slurmctld and slurmd
# started here, every file in a temporary folder, stopped on any exit):
#   - coopsolve.sbatch as the README shows it (tasks and GPUs per node from the
#     sbatch line), with a site file; a bad input ends the job with status 2;
#   - run_mpirun.sh inside salloc takes SLURM_NTASKS ranks;
#   - sweep.sbatch as a job array: every task runs its line and writes its file;
#   - chain.sbatch, interrupted twice (the time-limit warning forced with
#     scancel --batch --signal=USR1, then TERM to the ranks as at the limit
#     itself): it checkpoints, resubmits itself with the same request, and ends
#     with the same field, bit for bit, as one uninterrupted run; then once in
#     requeue mode.
# Skips (77) without the Slurm packages or root (slurmd starts jobs as root).
# Bounded: the whole test ends within 290 s, and every wait has its limit.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
if [ -z "${COOP_SLURM_TIMED:-}" ]; then
  COOP_SLURM_TIMED=1 exec timeout -k 30 290 bash "$0" "$@"
fi
. "$COOP_SRCDIR/tests/common.sh"
. "$COOP_SRCDIR/tests/slurm/cluster.sh"
slurm_have_packages || { echo "SKIP: no Slurm (Debian: slurmctld slurmd slurm-client munge)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: slurmd needs root to start jobs"; exit 77; }
PATH=$PATH:/usr/sbin
coop_python
coop_tmpdir
trap 'slurm_cluster_stop; rm -rf "$TMP"' EXIT
trap 'exit 1' TERM INT

JOBS=$COOP_SRCDIR/jobscripts
RUN=$TMP/run
mkdir -p "$RUN"
t0=$(date +%s)
say() { echo "[$(($(date +%s) - t0)) s] $*"; }

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

say "starting Slurm in $TMP/slurm"
slurm_cluster_start "$TMP/slurm" || fail "the Slurm cluster did not start"
say "Slurm is up: $(sinfo -h -N -o '%N %T %c CPUs %G')"
# Jobs inherit this environment: coopsolve from the build on PATH, and the
# Open MPI settings of common.sh (root, oversubscription). Ranks that srun
# starts do not know that they share the cores with other tests and spin: on a
# loaded 2-core machine 8 ms per Jacobi sweep instead of 50 us, unless they
# yield when idle.
export PATH=$COOP_BUILDDIR:$PATH OMPI_MCA_mpi_yield_when_idle=1
# $COOPSOLVE stays for this script but is not passed on: the scripts find the binary.
export -n COOPSOLVE
unset COOP_OUTPUT COOP_LAUNCHER COOP_MODULES COOP_SITE COOP_RESTART COOP_CHAIN_ID COOP_CHAIN_LINK \
  COOP_CHAIN_MODE COOP_CHAIN_SBATCH COOP_CHAIN_MAX COOP_JOBSCRIPTS COOP_OUTPUT_PREFIX NP
cd "$RUN" || fail "no $RUN"
quick=(--backend host --set solver.rtol=0 --set solver.max_iter=300 --set output.monitor_every=0)

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

# ---- run_mpirun.sh in an allocation: SLURM_NTASKS ranks
timeout 60 salloc -n 2 --time=5 "$JOBS/run_mpirun.sh" "$INPUTS/quickstart.ini" "${quick[@]}" \
  --output "$RUN/salloc.h5" >"$TMP/salloc.out" 2>&1 || { cat "$TMP/salloc.out"; fail "salloc run_mpirun.sh"; }
if ! grep -q '^mpirun -np 2 ' "$TMP/salloc.out" || ! grep -q '2 ranks' "$TMP/salloc.out"; then
  cat "$TMP/salloc.out"
  fail "run_mpirun.sh in salloc -n 2 did not start 2 ranks"
fi
say "run_mpirun.sh in salloc: 2 ranks"

# ---- the array: three grids, one per task
cat >"$TMP/sweep.txt" <<'EOF'
# grid sizes
--set grid.nx=16 --set grid.ny=12

--set grid.nx=24 --set grid.ny=20
--set grid.nx=32 --set grid.ny=28
EOF
a=$(timeout 20 sbatch --parsable --array=1-3 -n 1 --time=5 "$JOBS/sweep.sbatch" "$INPUTS/quickstart.ini" \
  "$TMP/sweep.txt" "${quick[@]}") || fail "sbatch --array sweep.sbatch"
wait_job "$a" 90
for t in 1 2 3; do
  f=$RUN/coopsolve-sweep-${a}_$t
  [ -f "$f.out" ] || fail "array task $t: no log $f.out"
  grep -q "coopsolve ended with status 0" "$f.out" || { cat "$f.out"; fail "array task $t failed"; }
  want=$(sed -n '/^--/p' "$TMP/sweep.txt" | sed -n "${t}p" | sed 's/.*nx=\([0-9]*\).*ny=\([0-9]*\).*/\2 \1/')
  got=$($PY -c 'import h5py,sys; print(*h5py.File(sys.argv[1])["fields/u"].shape)' "$f.h5") ||
    fail "array task $t: $f.h5 does not read"
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

j1=$(timeout 20 sbatch --parsable -n 2 --gpus-per-node=2 --time=10 "$JOBS/chain.sbatch" \
  "$INPUTS/quickstart.ini" "${chain[@]}") || fail "sbatch chain.sbatch"
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
grep -q "^== chain $j1 finished in link 3: coopsolve-chain-$j1.h5" "$log" || { cat "$log"; fail "chain: no end line"; }
grep -q -- "--restart coopsolve-chain-$j1.ckpt.h5" "$log" || { cat "$log"; fail "chain: no restart"; }
resumed "$log" 1
resumed "$log" 2
$PY "$H5CHECK" same "$TMP/ref.h5" "$RUN/coopsolve-chain-$j1.h5" --fields u ||
  { cat "$log"; fail "chain: the field differs from the uninterrupted run"; }
its=$($PY -c 'import h5py,sys; print(int(h5py.File(sys.argv[1])["solver"].attrs["iterations"]))' "$RUN/coopsolve-chain-$j1.h5")
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
