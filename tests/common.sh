# Shared by the integration tests: how to run MPI jobs and find the tools.
# Sourced; expects COOP_BUILDDIR, COOP_SRCDIR and MPIEXEC from make check.
: "${COOP_BUILDDIR:=$(pwd)}"
: "${COOP_SRCDIR:=$COOP_BUILDDIR}"
: "${MPIEXEC:=mpirun}"
COOPSOLVE="$COOP_BUILDDIR/coopsolve"
INPUTS="$COOP_SRCDIR/inputs"
H5CHECK="$COOP_SRCDIR/tools/h5check.py"
# Open MPI refuses root and more ranks than cores unless told (CI runs as root on 2 cores).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
# keep Open MPI from probing network interfaces it cannot use in containers
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Open MPI 4.1 waits 1-2 s after a job with a failing rank unless told not to
export OMPI_MCA_odls_base_sigkill_timeout=0

coop_mpirun() {
  local n=$1
  shift
  if "$MPIEXEC" --version 2>&1 | grep -q "Open MPI"; then
    "$MPIEXEC" --oversubscribe -np "$n" "$@"
  else
    "$MPIEXEC" -n "$n" "$@"
  fi
}

# Skip (77) unless the build has CUDA and a GPU is visible.
coop_require_gpu() {
  "$COOPSOLVE" --version | grep -q '^CUDA: yes' || { echo "SKIP: built without CUDA"; exit 77; }
  "$COOPSOLVE" --version | grep -q '^GPUs visible: [1-9]' || { echo "SKIP: no GPU visible"; exit 77; }
}

# The GPU suites run in tiers. make check runs the quick tier (COOP_GPU_TIER
# unset or quick): the cases a suite names in $QUICK, one per mode, precision
# and solver. make check-gpu-full runs every case (COOP_GPU_TIER=full) in
# parts, COOP_GPU_PART=K/N taking the K-th of every N cases in order.
# COOP_GPU_CASES, an extended regular expression, picks cases by name instead.
# coop_gpu_case NAME: status 0 where the case runs; it then times itself and
# coop_gpu_done prints its name and seconds.
coop_gpu_n=0
coop_gpu_case() {
  coop_gpu_n=$((coop_gpu_n + 1))
  coop_gpu_t0=$(date +%s)
  if [ -n "${COOP_GPU_CASES:-}" ]; then
    echo "$1" | grep -Eq "^(${COOP_GPU_CASES})$"
    return
  fi
  case ${COOP_GPU_TIER:-quick} in
    quick) case " $QUICK " in *" $1 "*) return 0 ;; esac; return 1 ;;
    full)
      coop_gpu_k=${COOP_GPU_PART:-1/1}
      coop_gpu_m=${coop_gpu_k#*/} coop_gpu_k=${coop_gpu_k%/*}
      [ $(((coop_gpu_n - 1) % coop_gpu_m + 1)) -eq "$coop_gpu_k" ] ;;
    *) fail "COOP_GPU_TIER = $COOP_GPU_TIER: quick or full" ;;
  esac
}
coop_gpu_done() { echo "case $1: $(($(date +%s) - coop_gpu_t0)) s"; }

# A python3 that has h5py and numpy, or skip.
coop_python() {
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import h5py, numpy' 2>/dev/null; then
      PY=$py
      return 0
    fi
  done
  echo "SKIP: no python3 with h5py and numpy (Debian: python3-h5py)"
  exit 77
}

coop_tmpdir() {
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/coopsolve-test.XXXXXX")
  trap 'rm -rf "$TMP"' EXIT
}

# The GPU suites' set-up: a GPU, python with h5py, $TMP.
coop_gpu_setup() {
  coop_require_gpu
  coop_python
  coop_tmpdir
}

# coop_solve INPUT OUT RANKS BACKEND SYNC [OPTION...]: INPUT solved on RANKS
# ranks with BACKEND in run.sync = SYNC, quiet, into $TMP/OUT.h5 (stdout and
# stderr in $TMP/OUT.log); a failure, after the log, unless it ends with 0.
# Sets out, n, be and sync.
coop_solve() {
  coop_input=$1 out=$2 n=$3 be=$4 sync=$5
  shift 5
  coop_mpirun $n "$COOPSOLVE" --backend $be --set run.sync=$sync "$coop_input" \
    --set output.monitor_every=0 --output "$TMP/$out.h5" "$@" >"$TMP/$out.log" 2>&1 ||
    { cat "$TMP/$out.log"; fail "$out"; }
}

# coop_heat NAME RANKS ARG...: a heat run of inputs/quickstart.ini on the host
# backend into $TMP/NAME.h5 (its output in $TMP/NAME.out); a failure unless it ends with 0.
coop_heat() {
  name=$1 n=$2
  shift 2
  coop_mpirun "$n" "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" --set solver.name=heat \
    --set output.monitor_every=0 "$@" --output "$TMP/$name.h5" >"$TMP/$name.out" 2>&1 ||
    { cat "$TMP/$name.out"; fail "heat run $name"; }
}

# coop_solver_attr FILE NAME: attribute NAME of /solver in FILE (mode, iterations, reason...), as text.
coop_solver_attr() { $PY -c 'import h5py,sys; m=h5py.File(sys.argv[1])["solver"].attrs[sys.argv[2]]; print(m.decode() if isinstance(m,bytes) else m)' "$1" "$2"; }

# coop_case_dir: $d, a fresh directory for case number $nc (counted up).
coop_case_dir() {
  nc=$((${nc:-0} + 1))
  d=$TMP/case$nc
  mkdir "$d" || fail "cannot make $d"
}

# coop_sigterm PID OUTPUT: 2 s after the background run PID started, SIGTERM
# to its ranks (the coopsolve processes writing OUTPUT) and a wait of 60 s at
# most for it to end; rc: its exit status.
coop_sigterm() {
  sleep 2
  pkill -TERM -f "^[^ ]*coopsolve .*--output $2" || fail "SIGTERM: no ranks to signal"
  timeout 60 sh -c "while kill -0 $1 2>/dev/null; do sleep 0.2; done" || fail "SIGTERM: the run did not stop"
  wait $1
  rc=$?
}

# coop_expect_input_error DIR RANKS PREFIX SUBSTRING ARG...: run coopsolve
# (host backend) in DIR with ARGs, no stdin. Expect exit status 2, nothing on
# stdout, exactly one "coopsolve:" line on stderr, starting "coopsolve:
# PREFIX" and (SUBSTRING not empty) holding SUBSTRING once, and no output file
# in DIR. $what names the case in messages; stderr is left in $TMP/err.
coop_expect_input_error() {
  dir=$1 n=$2 prefix=$3 sub=$4
  shift 4
  (cd "$dir" && coop_mpirun "$n" "$COOPSOLVE" --backend host "$@" >"$TMP/out" 2>"$TMP/err" </dev/null)
  rc=$?
  [ $rc -eq 2 ] || { cat "$TMP/out" "$TMP/err"; fail "$what: exit status $rc, not 2"; }
  [ ! -s "$TMP/out" ] || { cat "$TMP/out"; fail "$what: wrote to stdout"; }
  lines=$(grep -c '^coopsolve:' "$TMP/err")
  [ "$lines" = 1 ] || { cat "$TMP/err"; fail "$what: $lines coopsolve lines on stderr, not 1"; }
  # an input error names the file, key or option, never the rank that met it (a run-time fault's form)
  ! grep -q '^coopsolve: rank [0-9]' "$TMP/err" || { cat "$TMP/err"; fail "$what: an input error told as a fault"; }
  want="coopsolve: $prefix" awk 'index($0, ENVIRON["want"]) == 1 { n++ } END { exit n != 1 }' \
    "$TMP/err" || { cat "$TMP/err"; fail "$what: no message starting 'coopsolve: $prefix'"; }
  [ -z "$sub" ] || want="$sub" awk 'index($0, ENVIRON["want"]) { n++ } END { exit n != 1 }' \
    "$TMP/err" || { cat "$TMP/err"; fail "$what: message lacks '$sub'"; }
  for f in out.h5 out.h5.tmp out.xmf out.xmf.tmp coopsolve.h5 coopsolve.h5.tmp coopsolve.xmf; do
    [ ! -e "$dir/$f" ] || fail "$what: left $f behind"
  done
}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
