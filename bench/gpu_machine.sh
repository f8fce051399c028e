#!/usr/bin/env bash
# Build, test and benchmark coopsolve on the GPU test machine from a dist
# tarball and the Debian packages it lacks (CUnit, parallel HDF5), both kept in
# DEVKIT (see README, "For developers"). Two builds: the machine's serial HDF5
# and parallel HDF5 from the packages; make check in each, then the benchmark
# with the parallel build, and with the previous version (DEVKIT/base/*.tar.gz,
# if any) in the same call. Logs and tables go to OUT.
#   bench/gpu_machine.sh DEVKIT OUT [check|bench|all]
set -uo pipefail
devkit=$(cd "${1:?usage: gpu_machine.sh DEVKIT OUT [check|bench|all]}" && pwd)
out=${2:?}
what=${3:-all}
mkdir -p "$out"
. "$(dirname "$0")/devkit_env.sh"
src=/tmp/coopsolve-src
# a warm machine keeps the last call's sources and builds: reuse them unchanged
if [ ! -x "$src/configure" ] || [ "$what" != bench ]; then
  rm -rf "$src" /tmp/build-* && mkdir -p "$src" && tar xzf "$devkit"/coopsolve-*.tar.gz -C "$src" --strip-components=1
fi
top=$src
cunit=(CUNIT_CFLAGS="-I$dep/usr/include" CUNIT_LIBS="-L$lib -lcunit")
status=0

build() { # name, configure args... (sources in $top)
  local name=$1
  shift
  mkdir -p "/tmp/build-$name" && cd "/tmp/build-$name" || return 1
  [ -x coopsolve ] && return 0
  "$top/configure" CC=mpicc "${cunit[@]}" "$@" >"/tmp/configure-$name.log" 2>&1 || { tail -30 "/tmp/configure-$name.log"; return 1; }
  make -j"$(nproc)" >"/tmp/make-$name.log" 2>&1 || { tail -40 "/tmp/make-$name.log"; return 1; }
  ./coopsolve --version
}

check() { # name
  cd "/tmp/build-$1" && make -j8 check >"$out/check-$1.log" 2>&1
  local rc=$?
  grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS|# )' "$out/check-$1.log"
  tar czf "$out/logs-$1.tar.gz" "$out/check-$1.log" tests/*.log 2>/dev/null
  rm -f "$out/check-$1.log"
  return $rc
}

if [ "$what" != bench ]; then
  build serial || status=1
  check serial || status=1
fi
build parallel HDF5_CFLAGS="-I$dep/usr/include/hdf5/openmpi" \
  HDF5_LIBS="-L$lib/hdf5/openmpi -lhdf5" || status=1
[ "$what" != bench ] && { check parallel || status=1; }
bench() { # name, build dir, sources
  "$3/bench/jacobi_bench.sh" "$2" "/tmp/bench-$1" || return 1
  cp "/tmp/bench-$1/table.md" "$out/table-$1.md"
  cp "/tmp/bench-$1/devlimits.txt" "$out/devlimits-$1.txt"
}
if [ "$what" != check ]; then
  # the version before this one, from DEVKIT/base, benchmarked in the same call
  base=$(ls "$devkit"/base/*.tar.gz 2>/dev/null | head -1)
  if [ -n "$base" ]; then
    rm -rf /tmp/coopsolve-base && mkdir -p /tmp/coopsolve-base &&
      tar xzf "$base" -C /tmp/coopsolve-base --strip-components=1
    top=/tmp/coopsolve-base
    build base HDF5_CFLAGS="-I$dep/usr/include/hdf5/openmpi" \
      HDF5_LIBS="-L$lib/hdf5/openmpi -lhdf5" && bench base /tmp/build-base "$src" || status=1
    top=$src
  fi
  bench new /tmp/build-parallel "$src" || status=1
fi
exit $status
