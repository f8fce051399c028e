#!/usr/bin/env bash
# The current tree against an earlier version in one call on the GPU machine
# (the same results bit for bit where a kernel path is kept, and no slower):
# builds DEVKIT/coopsolve.tar.gz (into /tmp/build, as bench/gpu_check.sh does)
# and DEVKIT/old/*.tar.gz (into /tmp/build-old) side by side; then
#   same:    the same solves on both (Jacobi launch, graph, grid fp64 and fp32,
#            2D and 3D; CG grid and launch, BiCGStab grid; a ragged batch), every field
#            compared value by value (bench/fieldcmp.c);
#   stencil, krylov, batched: each tree's own bench script on its own build
#            (stencil: its quick rows on one GPU, 1024^2 and 8192^2 Laplace;
#            krylov: all; batched: quick), old then new,
#            so both see the same GPU; the tables go to OUT/STEP-old|new.md.
#   bench/old_new.sh DEVKIT OUT [same] [stencil] [krylov] [batched]
# With no step it builds the old version only (OLD_JOBS: make's -j), which a
# later call on the same machine then reuses. STEP_LIMIT (s, default 240) bounds each bench script's run.
set -uo pipefail
devkit=$(cd "${1:?usage: bench/old_new.sh DEVKIT OUT [same] [stencil] [krylov] [batched]}" && pwd) || exit 2
mkdir -p "${2:?usage: bench/old_new.sh DEVKIT OUT [STEP...]}"
out=$(cd "$2" && pwd)
shift 2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/devkit_env.sh
. "$here/devkit_env.sh"
old=$(ls "$devkit"/old/*.tar.gz 2>/dev/null | head -1)
[ -n "$old" ] || { echo "bench/old_new.sh: no $devkit/old/*.tar.gz (the version to compare with)" >&2; exit 2; }
t0=$(date +%s)
el() { echo "[$(($(date +%s) - t0)) s] $*"; }
build_old() { # into /tmp/build-old, unless a build there is newer than the tarball
  [ -x /tmp/build-old/coopsolve ] && [ /tmp/build-old/coopsolve -nt "$old" ] && return 0
  rm -rf /tmp/old-src /tmp/build-old && mkdir -p /tmp/old-src /tmp/build-old &&
    tar xzf "$old" -C /tmp/old-src --strip-components=1 && cd /tmp/build-old &&
    /tmp/old-src/configure CC=mpicc --with-cuda-arch=sm_90 CUNIT_CFLAGS="-I$dep/usr/include" \
      CUNIT_LIBS="-L$lib -lcunit" HDF5_CFLAGS="-I$dep/usr/include/hdf5/openmpi" \
      HDF5_LIBS="-L$lib/hdf5/openmpi -lhdf5" >"$out/old-configure.log" 2>&1 &&
    make -j"${OLD_JOBS:-$(nproc)}" coopsolve >"$out/old-make.log" 2>&1 || { tail -20 "$out/old-make.log"; return 1; }
}
if [ $# -eq 0 ]; then # the old build alone (e.g. at low priority beside other work)
  build_old
  exit
fi
(build_old) &
opid=$!
bash "$here/gpu_check.sh" "$devkit" "$out/new" >"$out/new-build.txt" 2>&1 || { cat "$out/new-build.txt"; exit 1; }
wait $opid || exit 1
mpicc -O2 -I"$dep/usr/include/hdf5/openmpi" "$here/fieldcmp.c" -L"$lib/hdf5/openmpi" -lhdf5 -lm -o /tmp/fieldcmp ||
  exit 1
el "both built; old: $(/tmp/build-old/coopsolve --version | head -1); new: $(/tmp/build/coopsolve --version | head -1)"
src_old=/tmp/old-src src_new=/tmp/coopsolve-src
same() { # NAME DATASET NP KEY=VALUE...: one input, run by both builds
  local name=$1 ds=$2 np=$3 v r
  shift 3
  mkdir -p "/tmp/same/$name"
  printf '%s\n' "$@" | sort -s -t. -k1,1 | awk -F= '{ split($1, k, "."); if (k[1] != s) { print "[" k[1] "]"; s = k[1] } print k[2] " = " $2 }' \
    >"/tmp/same/$name/in.ini"
  for v in old new; do
    b=/tmp/build-$v
    [ $v = new ] && b=/tmp/build
    (cd "/tmp/same/$name" && rm -f "$v.h5" &&
      timeout 120 mpirun --oversubscribe -np "$np" "$b/coopsolve" in.ini --set "output.file=$v.h5" >"$v.log" 2>&1) ||
      { echo "| $name | $v failed: $(tail -1 "/tmp/same/$name/$v.log") |"; return 1; }
  done
  r=$(/tmp/fieldcmp "/tmp/same/$name/old.h5" "/tmp/same/$name/new.h5" "$ds")
  echo "| $name | $r | $(grep -m1 -o 'mode [a-z0-9]*\|kernel path[^,]*' "/tmp/same/$name/new.log" | head -1) |"
}
for step in "$@"; do
  case $step in
    same)
      {
        echo "| case | old against new |  |"
        echo "| --- | --- | --- |"
        j2="grid.dim=2 grid.nx=1024 grid.ny=1024 problem.type=laplace solver.name=jacobi solver.rtol=0 solver.atol=0 solver.max_iter=2000 solver.check_every=100 run.backend=cuda"
        j3="grid.dim=3 grid.nx=128 grid.ny=128 grid.nz=128 problem.type=laplace solver.name=jacobi solver.rtol=0 solver.atol=0 solver.max_iter=200 solver.check_every=100 run.backend=cuda"
        cg="grid.dim=2 grid.nx=1024 grid.ny=1024 problem.type=sine solver.name=cg solver.rtol=1e-8 solver.max_iter=3000 run.backend=cuda"
        for m in launch graph grid auto; do
          # shellcheck disable=SC2086
          same "jacobi-2d-fp64-$m" /fields/u 1 $j2 solver.precision=fp64 run.sync=$m
        done
        # shellcheck disable=SC2086
        same jacobi-2d-fp32-auto /fields/u 1 $j2 solver.precision=fp32 run.sync=auto
        # shellcheck disable=SC2086
        same jacobi-2d-fp64-auto-2ranks /fields/u 2 $j2 solver.precision=fp64 run.sync=auto
        # shellcheck disable=SC2086
        same jacobi-3d-fp64-auto /fields/u 1 $j3 solver.precision=fp64 run.sync=auto
        for m in launch grid; do
          # shellcheck disable=SC2086
          same "cg-2d-$m" /fields/u 1 $cg solver.pc=jacobi run.sync=$m
        done
        # shellcheck disable=SC2086
        same bicgstab-2d-grid /fields/u 1 ${cg/solver.name=cg/solver.name=bicgstab} solver.pc=jacobi run.sync=grid
        same batch-ragged /batch/solution 1 batch.count=64 batch.dim=2 batch.sizes=loguniform:16:128 \
          batch.shift=uniform:0:1000 batch.rhs=ones batch.seed=1 solver.name=cg solver.pc=jacobi solver.rtol=1e-8 \
          solver.max_iter=5000 run.backend=cuda
      } | tee "$out/same.md"
      el same ;;
    stencil|krylov|batched)
      for v in old new; do
        b=/tmp/build-$v s=$src_old
        [ $v = new ] && b=/tmp/build s=$src_new
        case $step in
          stencil) timeout "${STEP_LIMIT:-240}" bash "$s/bench/stencil.sh" "$b" "/tmp/on-$step-$v" \
                   '^2d-(1024|8192)-fp(32|64)-laplace-c(1|100)-r1-' >/dev/null 2>&1 ;;
          krylov) timeout "${STEP_LIMIT:-240}" bash "$s/bench/krylov.sh" "$b" "$s" "/tmp/on-$step-$v" >/dev/null 2>&1 ;;
          batched) BATCHED_BARRIERS=0 timeout "${STEP_LIMIT:-240}" bash "$s/bench/batched.sh" "$b" "/tmp/on-$step-$v" quick >/dev/null 2>&1 ;;
        esac
        echo "rc $?" >"$out/$step-$v.rc"
        cp /tmp/on-$step-$v/*.md "$out/" 2>/dev/null
        for f in /tmp/on-$step-$v/*.md; do [ -f "$f" ] && cp "$f" "$out/$step-$v-$(basename "$f")"; done
        el "$step $v ($(cat "$out/$step-$v.rc"))"
        grep -E '^\|' /tmp/on-$step-$v/*.md 2>/dev/null | cut -c1-200
      done ;;
    *) echo "bench/old_new.sh: $step: same, stencil, krylov or batched" >&2; exit 2 ;;
  esac
done
