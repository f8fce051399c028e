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

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
