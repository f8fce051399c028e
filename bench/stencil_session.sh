#!/usr/bin/env bash
# One call on the GPU machine for the stencil work: build the dist tarball in
# DEVKIT with parallel HDF5 (CUnit and HDF5 from DEVKIT's Debian packages),
# then the stages named, in order:
#   ptxas     register, spill and occupancy report of the step kernels, and
#             the inner loop's SASS (loads and stores) of one of them
#   smoke     a few of tests/gpu.sh's comparisons (host against every mode at 1
#             and 2 ranks, IPC halos, odd sizes): a quick check after a change
#   tests     the GPU suites (tests/gpu.sh, tests/gpu_heat.sh) at 1 and 2 ranks
#   check     the whole make check
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck on the relaxation
#             kernels (launch, graph, grid; 1 rank, and 2 ranks with IPC halos)
#   bench:SEL bench/stencil.sh with selection SEL (quick, ranks, a pattern)
# Logs and tables to OUT.
#   bench/stencil_session.sh DEVKIT OUT STAGE...
set -uo pipefail
devkit=$(cd "${1:?usage: stencil_session.sh DEVKIT OUT STAGE...}" && pwd)
out=${2:?}
shift 2
mkdir -p "$out"
dep=/opt/dep
lib=$dep/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$lib/hdf5/openmpi:$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
src=/tmp/coopsolve-src b=/tmp/build
status=0
t0=$(date +%s)
if [ ! -x "$b/coopsolve" ] || [ "$devkit/coopsolve.tar.gz" -nt "$b/coopsolve" ]; then
  mkdir -p "$dep"
  for f in "$devkit"/*.deb; do dpkg -x "$f" "$dep"; done
  rm -rf "$src" "$b" && mkdir -p "$src" "$b"
  tar xzf "$devkit"/coopsolve.tar.gz -C "$src" --strip-components=1
  nccl= # the NCCL halo path where the machine has NCCL (gpu-machine/README.md: /usr/include/nccl.h)
  [ -f /usr/include/nccl.h ] && nccl=--with-nccl
  cd "$b" && "$src/configure" CC=mpicc --with-cuda-arch=sm_90 $nccl CUNIT_CFLAGS="-I$dep/usr/include" \
    CUNIT_LIBS="-L$lib -lcunit" HDF5_CFLAGS="-I$dep/usr/include/hdf5/openmpi" \
    HDF5_LIBS="-L$lib/hdf5/openmpi -lhdf5" >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
  make -j"$(nproc)" >"$out/make.log" 2>&1 || { tail -40 "$out/make.log"; exit 1; }
  make -j"$(nproc)" check TESTS= >>"$out/make.log" 2>&1 || { tail -40 "$out/make.log"; exit 1; }
fi
cd "$b" || exit 1
./coopsolve --version | head -3
echo "build: $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv,noheader

for stage in "$@"; do
  t0=$(date +%s)
  case $stage in
    ptxas)
      for f in kernels/stencil_relax.cu solvers/relax/relax_cuda.cu; do
        nvcc -std=c++17 -O3 -I"$b" -I"$src" -I"$src/src" $(mpicc --showme:compile) -arch=sm_90 \
          -Xptxas -v -c "$src/$f" -o /tmp/x.o 2>&1 | grep -E 'Compiling entry|registers|spill' |
          sed -e 's/.*Compiling entry function/entry/' >>"$out/ptxas.txt"
      done
      # the inner loop of one kernel: its loads and stores show the 16-byte accesses
      cuobjdump -sass kernels/stencil_relax.o | awk '/Function : .*relax_kernelIfLi2ELb0ELb1E/ {on = 1}
        on && /Function : / && !/relax_kernelIfLi2ELb0ELb1E/ {on = 0} on' >"$out/sass-relax-f32-2d-laplace-norm.txt"
      grep -c . "$out/ptxas.txt"
      ;;
    smoke)
      py=python3
      $py -c 'import h5py' 2>/dev/null || py=/usr/bin/python3
      sm() { # name tol options...
        local name=$1 tol=$2
        shift 2
        ./coopsolve "$src/inputs/quickstart.ini" --backend host --set output.monitor_every=0 \
          --output /tmp/sm-$name-host.h5 "$@" >/dev/null 2>&1 || { echo "smoke $name: host run failed"; status=1; return; }
        for n in 1 2; do
          for sync in launch graph grid; do
            mpirun --bind-to none -np $n ./coopsolve "$src/inputs/quickstart.ini" --backend cuda --set run.sync=$sync \
              --set output.monitor_every=0 --output /tmp/sm-$name-$sync-$n.h5 "$@" >/tmp/sm.log 2>&1 ||
              { echo "smoke $name $sync $n: failed"; tail -5 /tmp/sm.log; status=1; continue; }
            $py "$src/tools/h5check.py" close /tmp/sm-$name-host.h5 /tmp/sm-$name-$sync-$n.h5 --rtol $tol >/dev/null ||
              { echo "smoke $name $sync $n: differs from host"; status=1; continue; }
            $py "$src/tools/h5check.py" same /tmp/sm-$name-launch-1.h5 /tmp/sm-$name-$sync-$n.h5 >/dev/null ||
              { echo "smoke $name $sync $n: not the same bits as launch at 1 rank"; status=1; continue; }
          done
        done
        echo "smoke $name: ok"
      }
      sm odd2d 1e-12 --set solver.rtol=0 --set solver.max_iter=150 --set solver.check_every=7 --set grid.nx=203 --set grid.ny=77 --set grid.ghost=4
      sm odd2d-lap-c1 1e-12 --set solver.rtol=0 --set solver.max_iter=60 --set solver.check_every=1 --set grid.nx=201 --set grid.ny=149 --set problem.type=laplace
      sm odd2d-fp32 1e-5 --set solver.rtol=0 --set solver.max_iter=150 --set solver.check_every=7 --set grid.nx=203 --set grid.ny=77 --set grid.ghost=3 --set solver.precision=fp32
      sm odd3d 1e-12 --set solver.rtol=0 --set solver.max_iter=100 --set solver.check_every=9 --set grid.dim=3 --set grid.nx=37 --set grid.ny=23 --set grid.nz=19 --set grid.ghost=2
      sm odd3d-sine-fp32 1e-5 --set solver.rtol=0 --set solver.max_iter=100 --set solver.check_every=9 --set grid.dim=3 --set grid.nx=37 --set grid.ny=23 --set grid.nz=19 --set solver.precision=fp32
      sm conv 1e-12 --set grid.nx=64 --set grid.ny=48 --set solver.rtol=1e-8 --set solver.check_every=100
      ;;
    tests)
      for t in gpu gpu_heat; do
        COOP_BUILDDIR=$b COOP_SRCDIR=$src MPIEXEC=mpirun timeout 500 bash "$src/tests/$t.sh" >"$out/$t.log" 2>&1
        rc=$?
        echo "tests/$t.sh: exit $rc"
        [ $rc = 0 ] || [ $rc = 77 ] || { status=1; tail -n 30 "$out/$t.log"; }
      done
      ;;
    check)
      make -j8 check >"$out/check.log" 2>&1 || status=1
      grep -E '^(PASS|FAIL|SKIP|ERROR|# )' "$out/check.log"
      tar czf "$out/test-logs.tar.gz" tests/*.log 2>/dev/null
      ;;
    sanitize)
      cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
      {
        for tool in memcheck racecheck synccheck; do
          for sync in launch graph grid; do
            # dim prec problem nx ny fuse_sweeps: the last three take two sweeps
            # a pass in grid mode (3D: the absorbed last column, whole tiles
            # and edge tiles with a source)
            for cfg in "2 fp64 sine 77 53 1" "2 fp32 laplace 203 77 1" "3 fp64 laplace 37 23 1" \
              "2 fp32 laplace 403 333 2" "3 fp64 laplace 128 13 2" "3 fp32 sine 150 20 2"; do
              set -- $cfg
              "$cs" --tool $tool --error-exitcode 9 ./coopsolve "$src/inputs/quickstart.ini" --backend cuda \
                --set run.sync=$sync --set grid.dim=$1 --set solver.precision=$2 --set problem.type=$3 \
                --set grid.nx=$4 --set grid.ny=$5 --set tune.fuse_sweeps=$6 --set grid.nz=19 --set solver.max_iter=30 \
                --set solver.check_every=7 --set output.monitor_every=0 --output /tmp/cs.h5 2>&1 |
                grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK|reason' | sed "s/^/$tool $sync $cfg: /" || status=1
            done
          done
          mpirun --bind-to none -np 2 "$cs" --tool $tool --error-exitcode 9 ./coopsolve "$src/inputs/quickstart.ini" \
            --backend cuda --set run.sync=grid --set tune.halo=ipc --set grid.ghost=3 --set grid.nx=203 \
            --set grid.ny=77 --set solver.max_iter=30 --set output.monitor_every=0 --output /tmp/cs2.h5 2>&1 |
            grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK|reason' | sed "s/^/$tool 2 ranks ipc: /" || status=1
          # the shared-memory solve's replay: a stop by rtol re-runs 11 sweeps from a checkpoint
          "$cs" --tool $tool --error-exitcode 9 ./coopsolve "$src/inputs/quickstart.ini" --backend cuda \
            --set run.sync=grid --set grid.nx=1001 --set grid.ny=2000 --set problem.type=laplace \
            --set solver.rtol=0.1 --set solver.check_every=1 --set output.monitor_every=0 --output /tmp/cs4.h5 2>&1 |
            grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK|reason' | sed "s/^/$tool smem replay: /" || status=1
          "$cs" --tool $tool --error-exitcode 9 ./coopsolve "$src/inputs/quickstart.ini" --backend cuda \
            --set solver.name=heat --set run.sync=grid --set grid.nx=77 --set grid.ny=53 --set solver.max_iter=40 \
            --set output.every=10 --set output.monitor_every=0 --output /tmp/cs3.h5 2>&1 |
            grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK|reason' | sed "s/^/$tool heat grid: /" || status=1
        done
      } >"$out/sanitizer.txt" 2>&1
      cat "$out/sanitizer.txt"
      ;;
    bench:*)
      sel=${stage#bench:}
      timeout 560 bash "$src/bench/stencil.sh" "$b" "$out/bench" "$sel" >"$out/bench-$$.txt" 2>"$out/bench-stderr.txt" || status=1
      cat "$out/bench/table.md" 2>/dev/null | tail -n +1
      ;;
    *) echo "unknown stage $stage"; status=1 ;;
  esac
  echo "$stage: $(( $(date +%s) - t0 )) s"
done
exit $status
