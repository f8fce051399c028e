#!/usr/bin/env bash
# The device call that decides bench/pending's patches (README.md there), on
# one GPU in about 7 minutes. DEVKIT holds the dist tarballs:
#   coopsolve.tar.gz      main + mg-tile-sweep-2d.patch + mg-tile-pairs.patch
#   base/*.tar.gz         main
#   split/tile2d.tar.gz   main + mg-tile-sweep-2d.patch
#   split/grid4.tar.gz    main + mg-grid-bounds.patch
# All four are built side by side, then bench/mg.sh's graph and grid rows run
# on each in turn (the same GPU, one after another; grid4: grid rows only), then gpu_mg and
# test_mg_steps and the three sanitizers (the new tree's script, with its
# tile cases) on the first.
#   bench/pending/decide.sh DEVKIT OUT
set -uo pipefail
devkit=$(cd "${1:?usage: decide.sh DEVKIT OUT}" && pwd) || exit 2
mkdir -p "${2:?usage: decide.sh DEVKIT OUT}"
out=$(cd "$2" && pwd)
bench=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/devkit_env.sh
. "$bench/devkit_env.sh"
t0=$(date +%s)
el() { echo "[$(($(date +%s) - t0)) s] $*"; }
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
build() { # tarball, dir
  rm -rf "$2-src" "$2" && mkdir -p "$2-src" "$2" && tar xzf "$1" -C "$2-src" --strip-components=1 && cd "$2" &&
    "$2-src/configure" CC=mpicc --with-cuda-arch=sm_90 CUNIT_CFLAGS="-I$dep/usr/include" CUNIT_LIBS="-L$lib -lcunit" \
      HDF5_CFLAGS="-I$dep/usr/include/hdf5/openmpi" HDF5_LIBS="-L$lib/hdf5/openmpi -lhdf5" >"$out/$(basename "$2").log" 2>&1 &&
    make -j5 coopsolve >>"$out/$(basename "$2").log" 2>&1
}
(build "$(ls "$devkit"/base/*.tar.gz | head -1)" /tmp/d-base) &
b1=$!
(build "$devkit/split/tile2d.tar.gz" /tmp/d-tile2d) &
b2=$!
(build "$devkit/split/grid4.tar.gz" /tmp/d-grid4) &
b3=$!
rm -rf /tmp/build # gpu_check.sh keeps a build newer than its tarball, maybe of another tree
LIMIT=200 bash "$bench/gpu_check.sh" "$devkit" "$out/new" >"$out/new-build.txt" 2>&1 || { tail -20 "$out/new-build.txt"; exit 1; }
wait $b1 && wait $b2 && wait $b3 || { tail -5 "$out"/d-*.log; exit 1; }
el built
rows=${ROWS:-2 1024 fp64,2 4096 fp64,2 8192 fp64,2 16384 fp64,3 128 fp64,2 4096 fp32}
for b in /tmp/build /tmp/d-tile2d /tmp/d-grid4 /tmp/d-base; do
  only='^mg (graph|grid)'
  [ $b != /tmp/d-grid4 ] || only='^mg grid'
  ONLY=$only ROWS=$rows LIMIT=${LIMIT:-25} timeout 150 bash "$bench/mg.sh" "$b" "$out/mg-${b##*/}" quick >/dev/null 2>&1
  el "mg.sh on $b"
  grep -E '\^' "$out/mg-${b##*/}/mg.md" | cut -d'|' -f2-8
done
(cd /tmp/build && timeout 150 make check TESTS='tests/gpu_mg.sh tests/test_mg_steps' >"$out/mg-tests.txt" 2>&1
 el "gpu_mg rc $?"; grep -E '^(PASS|FAIL|SKIP|ERROR)' "$out/mg-tests.txt"; grep -E '^case|fail|differ' tests/gpu_mg.log | tail -14)
timeout 200 bash /tmp/coopsolve-src/bench/mg_sanitize.sh /tmp/build racecheck memcheck synccheck >"$out/sanitize.txt" 2>&1
el "sanitizers rc $?"
grep -v 'rc 0: =* \(ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards\)' "$out/sanitize.txt" | head -5
