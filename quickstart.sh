#!/usr/bin/env bash
# coopsolve quickstart on Debian (or Ubuntu):
#   ./quickstart.sh         install what is missing, build, run the default job on 2 ranks
#   ./quickstart.sh check   install what is missing, build, run make check
# The CUDA backend is built when nvcc works (PATH or /usr/local/cuda/bin).
set -euo pipefail
cd "$(dirname "$0")"
top=$(pwd)
what=${1:-run}
build=${COOP_BUILD_DIR:-$top/_build}

packages=(build-essential openmpi-bin libopenmpi-dev libhdf5-openmpi-dev hdf5-tools
  libcunit1-dev autoconf automake autoconf-archive pkg-config python3 python3-h5py
  python3-numpy)

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "quickstart: installing ${missing[*]}"
  local sudo=
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "quickstart: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

configure_and_build() {
  [ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi
  mkdir -p "$build"
  cd "$build"
  [ -f Makefile ] || "$top/configure" ${COOP_CONFIGURE_FLAGS:-}
  make -j"$(nproc)"
}

# Open MPI: allow root (containers, CI) and more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

install_missing
configure_and_build
case "$what" in
  check)
    make -j"$(nproc)" check
    ;;
  run)
    out="$build/quickstart.h5"
    mpirun --oversubscribe -np 2 ./coopsolve "$top/inputs/quickstart.ini" --output "$out"
    echo "quickstart: HDF5 output in $out (view ${out%.h5}.xmf in ParaView; inspect with h5dump -H or tools/h5check.py show)"
    ;;
  *)
    echo "usage: $0 [run|check]" >&2
    exit 2
    ;;
esac
