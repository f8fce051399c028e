#!/usr/bin/env bash
# The GPU tests on the GPU machine in one call: build DEVKIT's dist tarball
# (machine code for sm_90 only, to build fast; parallel HDF5 and CUnit from
# DEVKIT's Debian packages), then make check (the GPU suites' quick tier)
# and the full tier's parts. Logs and times to OUT.
#   bench/gpu_check.sh DEVKIT OUT [quick] [full] [PART...]
# PART: SUITE:K/N as in Makefile.am's GPU_FULL_PARTS ("full": all of them).
# JOBS=N runs up to N full-tier parts at once (default 1: the parts' times
# are then those of one part alone on the GPU); LIMIT=S stops a step after S s.
set -uo pipefail
devkit=$(cd "${1:?usage: gpu_check.sh DEVKIT OUT [quick] [full] [PART...]}" && pwd)
out=${2:?}
shift 2
mkdir -p "$out"
. "$(dirname "$0")/devkit_env.sh"
src=/tmp/coopsolve-src b=/tmp/build
limit=${LIMIT:-540}
t0=$(date +%s)
if [ ! -x "$b/coopsolve" ] || [ "$devkit/coopsolve.tar.gz" -nt "$b/coopsolve" ]; then
  rm -rf "$src" "$b" && mkdir -p "$src" "$b"
  tar xzf "$devkit/coopsolve.tar.gz" -C "$src" --strip-components=1
  (cd "$b" && "$src/configure" CC=mpicc --with-cuda-arch=sm_90 CUNIT_CFLAGS="-I$dep/usr/include" \
    CUNIT_LIBS="-L$lib -lcunit" HDF5_CFLAGS="-I$dep/usr/include/hdf5/openmpi" \
    HDF5_LIBS="-L$lib/hdf5/openmpi -lhdf5" >"$out/configure.log" 2>&1) || { tail -30 "$out/configure.log"; exit 1; }
  (cd "$b" && make -j"$(nproc)" all >"$out/make.log" 2>&1 && make -j"$(nproc)" check TESTS= >>"$out/make.log" 2>&1) ||
    { tail -40 "$out/make.log"; exit 1; }
fi
cd "$b" || exit 1
./coopsolve --version | tee "$out/version.txt"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader | tee -a "$out/version.txt"
echo "build: $(($(date +%s) - t0)) s"
status=0
parts=()
for a in "$@"; do
  case $a in
    quick)
      t=$(date +%s)
      rm -f tests/*.log tests/*.trs
      timeout "$limit" make -j8 check >"$out/check.log" 2>&1 || status=1
      grep -E '^(PASS|FAIL|SKIP|ERROR|# )' "$out/check.log"
      # When each suite ended, seconds from the start: the last ones set the wall time.
      for f in tests/*.trs; do echo "$(($(stat -c %Y "$f") - t)) ${f%.trs}"; done | sort -n | tail -12 |
        tee "$out/quick-ends.txt"
      for s in gpu gpu_krylov gpu_batch gpu_heat gpu_mg; do grep -E '^case |FAIL' "tests/$s.log" >"$out/quick-$s.txt"; done
      tar czf "$out/check-logs.tar.gz" tests/*.log 2>/dev/null
      echo "make check (quick tier, -j8): $(($(date +%s) - t)) s" ;;
    full) parts+=($(make -qp 2>/dev/null | sed -n 's/^GPU_FULL_PARTS = //p' | head -1)) ;;
    *) parts+=("$a") ;;
  esac
done
run_part() { # SUITE:K/N
  local s=${1%%:*} k=${1#*:} t
  t=$(date +%s)
  timeout "$limit" make check-gpu-full GPU_FULL_PARTS="$1" >"$out/full-$s-${k/\//-}.txt" 2>&1
  local rc=$?
  cp "tests/$s-full-${k/\//-}.log" "$out/" 2>/dev/null
  echo "$1: exit $rc, $(($(date +%s) - t)) s; $(grep -c '^case ' "tests/$s-full-${k/\//-}.log" 2>/dev/null) cases"
  return $rc
}
if [ ${#parts[@]} -gt 0 ]; then
  t=$(date +%s)
  running=0
  for p in "${parts[@]}"; do
    run_part "$p" &
    running=$((running + 1))
    if [ "$running" -ge "${JOBS:-1}" ]; then wait -n || status=1; running=$((running - 1)); fi
  done
  while [ "$running" -gt 0 ]; do wait -n || status=1; running=$((running - 1)); done
  echo "full tier parts (${JOBS:-1} at once): $(($(date +%s) - t)) s"
fi
exit $status
