#!/usr/bin/env bash
# One call on the GPU machine for a short device budget: build the dist
# tarball in DEVKIT with parallel HDF5 (CUnit and HDF5 from DEVKIT's Debian
# packages, machine code for sm_90 only, to build fast), make check (the GPU
# suites at 1 and 2 ranks), the Krylov benchmark, and compute-sanitizer
# memcheck and racecheck on the new kernels. Logs and tables to OUT.
#   bench/gpu_session.sh DEVKIT OUT [check]
# With "check", stop after make check (no benchmark, scaling or sanitizer).
set -uo pipefail
devkit=$(cd "${1:?usage: gpu_session.sh DEVKIT OUT}" && pwd)
out=${2:?}
mkdir -p "$out"
. "$(dirname "$0")/devkit_env.sh"
src=/tmp/coopsolve-src b=/tmp/build
rm -rf "$src" "$b" && mkdir -p "$src" "$b"
tar xzf "$devkit"/coopsolve-*.tar.gz -C "$src" --strip-components=1
status=0
t0=$(date +%s)
cd "$b" && "$src/configure" CC=mpicc --with-cuda-arch=sm_90 CUNIT_CFLAGS="-I$dep/usr/include" \
  CUNIT_LIBS="-L$lib -lcunit" HDF5_CFLAGS="-I$dep/usr/include/hdf5/openmpi" \
  HDF5_LIBS="-L$lib/hdf5/openmpi -lhdf5" >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
make -j"$(nproc)" >"$out/make.log" 2>&1 || { tail -40 "$out/make.log"; exit 1; }
./coopsolve --version
echo "build: $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader

# make check: the GPU suites first, then the rest
t0=$(date +%s)
make -j8 check >"$out/check.log" 2>&1 || status=1
grep -E '^(PASS|FAIL|SKIP|ERROR|# )' "$out/check.log"
for t in gpu gpu_krylov; do tail -n 40 "tests/$t.log" >"$out/$t.log"; done
tar czf "$out/test-logs.tar.gz" tests/*.log 2>/dev/null
echo "check: $(( $(date +%s) - t0 )) s"
[ "${3:-}" = check ] && exit $status

# the benchmark table
t0=$(date +%s)
ITERS=200 bash "$src/bench/krylov.sh" "$b" "$src" /tmp/kb >"$out/krylov-bench.txt" 2>&1 || status=1
cp /tmp/kb/krylov.md "$out/krylov.md" 2>/dev/null
cat "$out/krylov.md" 2>/dev/null || tail -30 "$out/krylov-bench.txt"
echo "bench: $(( $(date +%s) - t0 )) s"

# strong scaling of CG on 4096^2 (matrix-free), 1 and 2 ranks, one GPU each
t0=$(date +%s)
{
  for cfg in "1 grid false" "1 grid true" "1 launch false" "1 launch true" "2 launch false" "2 launch true"; do
    set -- $cfg
    mpirun --bind-to none -np "$1" ./coopsolve "$src/inputs/cg_poisson.ini" --backend cuda --set run.sync="$2" \
      --set solver.cg_single_reduction="$3" \
      --set grid.nx=4096 --set grid.ny=4096 --set solver.rtol=0 --set solver.max_iter=300 \
      --set output.monitor_every=0 --output /tmp/sc.h5 | sed -n "s/^  per iteration: /ranks $1 sync $2 single_reduction $3: /p"
  done
} >"$out/scaling.txt" 2>&1
cat "$out/scaling.txt"
echo "scaling: $(( $(date +%s) - t0 )) s"

# compute-sanitizer on the new kernels: grid and launch modes, CSR and stencil
t0=$(date +%s)
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
run() { "$cs" --tool "$1" --error-exitcode 9 ./coopsolve "$src/inputs/matrix.ini" --backend cuda \
  --set output.monitor_every=0 --output /tmp/cs.h5 "${@:2}"; }
{
  for tool in memcheck racecheck; do
    for m in cg cgsr pipecg bicgstab; do
      o="--set solver.name=$m"
      [ $m = cgsr ] && o="--set solver.name=cg --set solver.cg_single_reduction=true"
      run $tool --set problem.type=laplace --set grid.nx=96 --set grid.ny=80 $o \
        --set solver.pc=jacobi --set run.sync=grid --set solver.max_iter=60 | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|reason' || status=1
      run $tool --set "problem.matrix=$src/tests/data/nos6.mtx" $o --set run.sync=grid \
        --set solver.max_iter=60 | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|reason' || status=1
    done
    run $tool --set "problem.matrix=$src/tests/data/494_bus.mtx" --set solver.name=bicgstab \
      --set run.sync=launch --set solver.max_iter=40 | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|reason' || status=1
    run $tool --set problem.type=sine --set grid.dim=3 --set grid.nx=30 --set grid.ny=20 --set grid.nz=10 \
      --set solver.name=cg --set run.sync=launch --set solver.max_iter=40 | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|reason' || status=1
  done
} >"$out/sanitizer.txt" 2>&1
cat "$out/sanitizer.txt"
echo "sanitizer: $(( $(date +%s) - t0 )) s"
exit $status
