#!/bin/sh
# The cuda backend, modes launch, graph and grid, against the host backend at
# 1 and 2 ranks (2 ranks: halos through MPI and GPU to GPU through CUDA IPC):
# fields agree to 1e-12 relative in fp64 (1e-5 in fp32), and every cuda run
# of a case gives the same bits. Skips where no GPU is.
. "$COOP_SRCDIR/tests/common.sh"
coop_gpu_setup

solve() { coop_solve "$INPUTS/quickstart.ini" "$@"; } # out, ranks, backend, sync, options...

# GPUs of this machine: with two, 2 ranks in grid mode with IPC halos run the
# whole solve in one kernel each (tune.fused_halo); sharing one GPU, they cannot
GPUS=$("$COOPSOLVE" --version | sed -n 's/^GPUs visible: //p')
# builds configured --with-nccl: every 2-rank case with its faces through NCCL too
NCCL=
# (a GPU per rank: NCCL refuses two ranks on one)
! "$COOPSOLVE" --version | grep -q '^NCCL: yes' || [ "$GPUS" -lt 2 ] || NCCL=nccl
# (the test hook COOP_PEERS_SHARED_GPU=1 lets ranks that share one GPU take it,
# by time-slicing: its cases then run on one GPU too)
FUSED=0
if [ "${GPUS:-0}" -ge 2 ] || [ "${COOP_PEERS_SHARED_GPU:-}" = 1 ]; then FUSED=1; fi
fused_check() { # log: the fused multi-rank kernel ran (2 GPUs) or was declined (1)
  if [ $FUSED = 1 ]; then
    grep -q "inside the persistent kernel" "$1" || { cat "$1"; fail "$1: the fused multi-rank kernel did not run"; }
  else
    grep -q "ranks share a GPU" "$1" || { cat "$1"; fail "$1: no note on why halos went between kernels"; }
  fi
}

# one rank in grid mode on a 2D box that fits on the chip: the field held in
# registers (tune.resident); RESIDENT=shared for boxes too large for registers
# (shared memory; SMEM_CHECK=aside or replay: how a residual check runs),
# RESIDENT=0 for cases that stream (3D, tune.blocks). The shared-memory boxes
# are sized for 132 SMs with 232448 bytes a block (H200, H100 SXM): on other
# GPUs their plans differ and only the fields are compared.
SHAPE=$("$COOPSOLVE" --version | sed -n 's/^GPU 0: .*, \([0-9]*\) SMs, \([0-9]*\) bytes.*/\1 \2/p')
resident_check() { # log
  case "${RESIDENT:-1}" in
    1) grep -q "held in registers" "$1" || { cat "$1"; fail "$1: the resident kernel did not run"; }
       [ -z "${DEPTH:-}" ] || grep -q "; $DEPTH sweep(s) between grid barriers" "$1" ||
         { cat "$1"; fail "$1: not $DEPTH sweeps between grid barriers"; } ;;
    shared)
      if [ "$SHAPE" != "132 232448" ]; then
        echo "$1: GPU of $SHAPE (SMs, bytes): shared-memory plan not checked"
        return 0
      fi
      grep -q "held in shared memory" "$1" || { cat "$1"; fail "$1: the shared-memory kernel did not run"; }
      case "${SMEM_CHECK:-}" in
        aside) grep -q "check keeps the measured field aside" "$1" || { cat "$1"; fail "$1: not a one-pass check"; } ;;
        replay) grep -q "a stop re-runs the sweeps since a checkpoint" "$1" || { cat "$1"; fail "$1: not a replay check"; } ;;
      esac ;;
    *) ! grep -q "field: held in" "$1" || { cat "$1"; fail "$1: a resident kernel ran"; } ;;
  esac
}

# COOP_GPU_HALOS: the 2-rank halo transports to compare (default all of
# mpi ipc ipc-host and nccl where built), e.g. to run the suite in two parts
# (the quick tier: IPC alone, the transport one GPU per rank takes)
if [ "${COOP_GPU_TIER:-quick}" = quick ] && [ -z "${COOP_GPU_CASES:-}" ]; then
  HALOS=${COOP_GPU_HALOS:-ipc}
else
  HALOS=${COOP_GPU_HALOS:-mpi ipc ipc-host $NCCL}
fi
# cases by tier (tests/common.sh: coop_gpu_case); "tail" names the checks
# after the comparisons (sync = auto, refusals), "ckpt" the checkpoints
QUICK="g2d g2d-fp32 g3d-ycut-fp32 g2d-pair-ranks g2d-smem-fp32 conv tail"
RAN=
# COOP_GPU_RANKS: the rank counts to compare at (default "1 2"), e.g. 1 alone
# to recheck a kernel that only a rank alone runs
RANKS=${COOP_GPU_RANKS:-1 2}
compare() { # name, options...  (tolerance against host: $TOL, default 1e-12)
  name=$1
  shift
  coop_gpu_case "$name" || return 0
  RAN="$RAN $name "
  solve "$name-host" 1 host auto "$@"
  for n in $RANKS; do
    for sync in launch graph grid; do
      for halo in $( [ $n = 1 ] && echo mpi || echo $HALOS); do
        [ $halo != ipc-host ] || [ $sync = grid ] || continue
        r="$name-$sync-$n-$halo"
        if [ $halo = ipc-host ]; then # grid mode with IPC halos exchanged by the host
          solve "$r" $n cuda $sync --set tune.halo=ipc --set tune.fused_halo=false "$@"
        else
          solve "$r" $n cuda $sync --set tune.halo=$halo "$@"
        fi
        [ "$n-$sync-$halo" != 2-grid-ipc ] || fused_check "$TMP/$r.log"
        [ $halo != nccl ] || grep -q "through NCCL" "$TMP/$r.log" || { cat "$TMP/$r.log"; fail "$r: faces not through NCCL"; }
        [ "$n-$sync" != 1-grid ] || resident_check "$TMP/$r.log"
        # ranks with neighbours take two sweeps a pass between exchanges (the
        # fused kernel aside): the note says the plan took it, the bits that it is right
        [ -z "${PAIR_RANKS:-}" ] || [ "$n-$sync" != 2-grid ] || [ $halo = ipc ] ||
          grep -q "two sweeps a pass between exchanges" "$TMP/$r.log" ||
          { cat "$TMP/$r.log"; fail "$r: no two sweeps a pass between exchanges"; }
        [ -z "${PAIR:-}" ] || [ "$n-$sync" != 1-grid ] || grep -q "two sweeps a pass" "$TMP/$r.log" ||
          { cat "$TMP/$r.log"; fail "$r: the two-sweep kernel did not run"; }
        [ "$(coop_solver_attr "$TMP/$r.h5" mode)" = $sync ] || fail "$name: mode is not $sync"
        $PY "$H5CHECK" close "$TMP/$name-host.h5" "$TMP/$r.h5" --rtol "${TOL:-1e-12}" ||
          fail "$name: cuda $sync at $n ranks ($halo halos) differs from host"
        # same arithmetic per point in every mode and decomposition: same bits
        $PY "$H5CHECK" same "$TMP/$name-launch-1-mpi.h5" "$TMP/$r.h5" ||
          fail "$name: cuda $sync at $n ranks ($halo halos) is not bit-identical to launch at 1 rank"
      done
    done
  done
  echo "$name: every mode agrees with host"
  coop_gpu_done "$name"
}

fixed="--set solver.rtol=0 --set solver.max_iter=300 --set solver.check_every=50"
compare g2d $fixed --set grid.nx=200 --set grid.ny=150
# sizes that split unevenly and rows that end inside a 16-byte chunk; a
# residual every sweep and every 7 (odd: graphs of both parities)
compare g2d-odd --set solver.rtol=0 --set solver.max_iter=60 --set solver.check_every=1 --set grid.nx=201 --set grid.ny=149
compare g2d-odd-deep --set solver.rtol=0 --set solver.max_iter=150 --set solver.check_every=7 --set grid.nx=203 \
  --set grid.ny=77 --set grid.ghost=4 --set problem.type=laplace
TOL=1e-5 compare g2d-odd-fp32 --set solver.rtol=0 --set solver.max_iter=150 --set solver.check_every=7 \
  --set grid.nx=203 --set grid.ny=77 --set grid.ghost=3 --set solver.precision=fp32
RESIDENT=0 compare g3d-odd $fixed --set grid.dim=3 --set grid.nx=37 --set grid.ny=23 --set grid.nz=19 --set grid.ghost=2 \
  --set problem.type=laplace
compare g2d-deep $fixed --set grid.nx=200 --set grid.ny=150 --set grid.ghost=3 --set problem.type=laplace
# 3D boxes cut across z (the march axis) and across y at 2 ranks: the fused
# kernel's other two kinds of face (the boxes above are cut across x)
RESIDENT=0 compare g3d-zcut $fixed --set grid.dim=3 --set grid.nx=21 --set grid.ny=19 --set grid.nz=43 --set grid.ghost=2
TOL=1e-5 RESIDENT=0 compare g3d-ycut-fp32 $fixed --set grid.dim=3 --set grid.nx=27 --set grid.ny=45 --set grid.nz=17 \
  --set solver.precision=fp32
RESIDENT=0 compare g3d $fixed --set grid.dim=3 --set grid.nx=40 --set grid.ny=36 --set grid.nz=30
RESIDENT=0 compare g3d-deep $fixed --set grid.dim=3 --set grid.nx=40 --set grid.ny=36 --set grid.nz=30 --set grid.ghost=2
TOL=1e-5 compare g2d-fp32 $fixed --set grid.nx=200 --set grid.ny=150 --set solver.precision=fp32
TOL=1e-5 RESIDENT=0 compare g3d-fp32 $fixed --set grid.dim=3 --set grid.nx=40 --set grid.ny=36 --set grid.nz=30 \
  --set grid.ghost=2 --set solver.precision=fp32
# the 3D tile march (relax_range_ring3), at one rank: 38 chunks a row (fp32),
# a full tile and one of 6; tiles of 8, 8 and 7 rows along y; a residual
# every sweep; 67 chunks (fp64): two full tiles and one of 3; 34 chunks over
# 150 rows (19 y-tiles, the last of 6); and a persistent grid of 3 blocks
# looping over many (tile, strip of planes) tasks
TOL=1e-5 RESIDENT=0 compare g3d-tiles-fp32 --set solver.rtol=0 --set solver.max_iter=40 --set solver.check_every=1 \
  --set grid.dim=3 --set grid.nx=150 --set grid.ny=23 --set grid.nz=33 --set solver.precision=fp32
RESIDENT=0 compare g3d-tiles3 --set solver.rtol=0 --set solver.max_iter=30 --set solver.check_every=1 \
  --set grid.dim=3 --set grid.nx=133 --set grid.ny=17 --set grid.nz=21
RESIDENT=0 compare g3d-tiles2 --set solver.rtol=0 --set solver.max_iter=30 --set solver.check_every=1 \
  --set grid.dim=3 --set grid.nx=66 --set grid.ny=150 --set grid.nz=20
RESIDENT=0 compare g3d-3blocks $fixed --set grid.dim=3 --set grid.nx=70 --set grid.ny=30 --set grid.nz=25 \
  --set tune.blocks=3 --set grid.ghost=2
# a persistent grid of 2 blocks: each block strides over many tiles
RESIDENT=0 compare g2d-2blocks $fixed --set grid.nx=200 --set grid.ny=150 --set tune.blocks=2 --set grid.ghost=2
# 2D warp tasks of at most 16 rows drawn from the persistent kernel's queue:
# 2 blocks (16 warps) over 4 x 76 tasks, the last strip short (1201 rows);
# fp32 (4 x 82 tasks) with a residual every sweep and ghost 2 (at 2 ranks the
# n-step kernel: one long task a warp, dealt in turn)
RESIDENT=0 compare g2d-queue $fixed --set grid.nx=203 --set grid.ny=1201 --set tune.blocks=2
TOL=1e-5 RESIDENT=0 compare g2d-queue-fp32 --set solver.rtol=0 --set solver.max_iter=40 --set solver.check_every=1 \
  --set grid.nx=403 --set grid.ny=1301 --set tune.blocks=2 --set grid.ghost=2 --set solver.precision=fp32
# fp32 Laplace: the persistent kernels' lean row loop (whole, owned warp
# columns, unrolled by two) beside the masked one (the column of 5 chunks, the
# edge strips), 1301 rows in strips of 16 (an odd last strip)
TOL=1e-5 RESIDENT=0 compare g2d-queue-lap-fp32 --set solver.rtol=0 --set solver.max_iter=41 --set solver.check_every=1 \
  --set grid.nx=403 --set grid.ny=1301 --set tune.blocks=2 --set solver.precision=fp32 --set problem.type=laplace
# two sweeps a pass (tune.fuse_sweeps = 2; grid mode at 1 rank, the other
# modes sweep once): fp64 with a source, 2 blocks drawing warp tasks, a stop
# at iteration 41 (between a pass's sweeps: one more sweep); fp32 Laplace with
# a check every 3 sweeps (passes without a residual, checks on either sweep);
# fp32 with ghost 4 (chunk-aligned region: the first column's outer
# neighbour a ghost) over the full grid; fp64 converging by rtol at ghost 2
PAIR=1 RESIDENT=0 compare g2d-pair --set solver.rtol=0 --set solver.max_iter=41 --set solver.check_every=1 \
  --set grid.nx=203 --set grid.ny=1201 --set tune.blocks=2 --set tune.fuse_sweeps=2
TOL=1e-5 PAIR=1 RESIDENT=0 compare g2d-pair-lap-fp32 --set solver.rtol=0 --set solver.max_iter=40 \
  --set solver.check_every=3 --set grid.nx=403 --set grid.ny=1301 --set tune.blocks=2 --set solver.precision=fp32 \
  --set problem.type=laplace --set tune.fuse_sweeps=2
TOL=1e-5 PAIR=1 RESIDENT=0 compare g2d-pair-g4-fp32 --set solver.rtol=0 --set solver.max_iter=37 \
  --set solver.check_every=1 --set grid.nx=403 --set grid.ny=333 --set grid.ghost=4 --set solver.precision=fp32 \
  --set tune.resident=false --set tune.fuse_sweeps=2
PAIR=1 RESIDENT=0 compare g2d-pair-conv --set solver.rtol=1e-5 --set solver.max_iter=20000 --set solver.check_every=1 \
  --set grid.nx=67 --set grid.ny=45 --set grid.ghost=2 --set tune.resident=false --set tune.fuse_sweeps=2
# two sweeps a pass between exchanges at 2 ranks (grid mode; the other modes
# sweep once): ghost 4, checks 11 apart, the overlap on
# (blocks of 2 and 3 plain steps beside the split one: a pair, a pair and a
# single), fp64 with a source, cut across y; ghost 3, checks 13 apart, the
# overlap off (blocks of 3 plain steps ending on the owned box, 2 after a norm
# step), fp32 Laplace wider than tall, cut across x
PAIR_RANKS=1 RESIDENT=0 compare g2d-pair-ranks --set solver.rtol=0 --set solver.max_iter=61 \
  --set solver.check_every=11 --set grid.nx=203 --set grid.ny=301 --set grid.ghost=4 --set tune.resident=false \
  --set tune.fuse_sweeps=2
TOL=1e-5 PAIR_RANKS=1 RESIDENT=0 compare g2d-pair-ranks-fp32 --set solver.rtol=0 --set solver.max_iter=50 \
  --set solver.check_every=13 --set grid.nx=603 --set grid.ny=203 --set grid.ghost=3 --set solver.precision=fp32 \
  --set problem.type=laplace --set tune.resident=false --set tune.fuse_sweeps=2 --set tune.overlap=false
# 3D two sweeps a pass (relax_pair_ring3): fp64 with a source, 67 chunks a
# row (tiles of 32, 32 and 3 chunks), 23 rows (pair tiles of 6, 6, 6, 5),
# ghost 2, 3 blocks looping over the tasks, a stop between a pass's sweeps;
# fp32 Laplace, 38 chunks (32 and 6), 20 rows (the last tile of 2), a check
# every 3; fp64, 33 chunks (a last tile of one chunk: both outer columns on
# one lane); fp64 converging by rtol
PAIR=1 RESIDENT=0 compare g3d-pair --set solver.rtol=0 --set solver.max_iter=41 --set solver.check_every=1 \
  --set grid.dim=3 --set grid.nx=133 --set grid.ny=23 --set grid.nz=21 --set grid.ghost=2 --set tune.blocks=3 \
  --set tune.fuse_sweeps=2
TOL=1e-5 PAIR=1 RESIDENT=0 compare g3d-pair-lap-fp32 --set solver.rtol=0 --set solver.max_iter=40 \
  --set solver.check_every=3 --set grid.dim=3 --set grid.nx=150 --set grid.ny=20 --set grid.nz=33 \
  --set solver.precision=fp32 --set problem.type=laplace --set tune.fuse_sweeps=2
PAIR=1 RESIDENT=0 compare g3d-pair-1chunk --set solver.rtol=0 --set solver.max_iter=30 --set solver.check_every=1 \
  --set grid.dim=3 --set grid.nx=64 --set grid.ny=14 --set grid.nz=17 --set tune.fuse_sweeps=2
# regions on chunk boundaries (every full tile on the branch-free path, its
# outer columns ghosts at the box's x edges): fp64 ghost 2, 64 chunks (two
# tiles); fp32 ghost 4 with a source, 32 chunks (one tile, both columns ghosts)
PAIR=1 RESIDENT=0 compare g3d-pair-aligned --set solver.rtol=0 --set solver.max_iter=31 --set solver.check_every=1 \
  --set grid.dim=3 --set grid.nx=128 --set grid.ny=13 --set grid.nz=15 --set grid.ghost=2 --set tune.fuse_sweeps=2 \
  --set problem.type=laplace
TOL=1e-5 PAIR=1 RESIDENT=0 compare g3d-pair-aligned-fp32 --set solver.rtol=0 --set solver.max_iter=30 \
  --set solver.check_every=2 --set grid.dim=3 --set grid.nx=128 --set grid.ny=11 --set grid.nz=14 --set grid.ghost=4 \
  --set solver.precision=fp32 --set tune.fuse_sweeps=2
# the last column absorbed by the tile before it (one point of the region in
# the last chunk after whole tiles): fp64 128 points (65 chunks) with a
# source; fp32 256 points (65 chunks), Laplace, ghost 1
PAIR=1 RESIDENT=0 compare g3d-pair-absorb --set solver.rtol=0 --set solver.max_iter=31 --set solver.check_every=1 \
  --set grid.dim=3 --set grid.nx=128 --set grid.ny=13 --set grid.nz=12 --set tune.fuse_sweeps=2
TOL=1e-5 PAIR=1 RESIDENT=0 compare g3d-pair-absorb-fp32 --set solver.rtol=0 --set solver.max_iter=30 \
  --set solver.check_every=2 --set grid.dim=3 --set grid.nx=256 --set grid.ny=9 --set grid.nz=10 \
  --set solver.precision=fp32 --set problem.type=laplace --set tune.fuse_sweeps=2
# strips of the plan's longest (96 planes: one tile, one block, 192 planes)
PAIR=1 RESIDENT=0 compare g3d-pair-long --set solver.rtol=0 --set solver.max_iter=21 --set solver.check_every=5 \
  --set grid.dim=3 --set grid.nx=62 --set grid.ny=6 --set grid.nz=192 --set tune.blocks=1 --set tune.fuse_sweeps=2
PAIR=1 RESIDENT=0 compare g3d-pair-conv --set solver.rtol=1e-5 --set solver.max_iter=20000 --set solver.check_every=1 \
  --set grid.dim=3 --set grid.nx=21 --set grid.ny=19 --set grid.nz=17 --set grid.ghost=2 --set tune.fuse_sweeps=2
# the resident kernel's shapes (on 132 SMs; rows a thread x thread groups a
# block): 2 x 5, 2 x 3 with a stop at an odd iteration (the measured field
# written to the second buffer), 4 x 8 and 8 x 6 with groups of unequal rows
# (bands of 31/32 and 47/48 rows), 2 x 2 in rows of 24 warps with groups of 1
# and 2 rows, fp32 with a source; and the same box streamed (tune.resident =
# false) for the bits. All but the 8 x 6 box fit GPUs of 75 SMs.
compare g2d-tall $fixed --set grid.nx=100 --set grid.ny=1200
compare g2d-r8 --set solver.rtol=0 --set solver.max_iter=41 --set solver.check_every=1 --set grid.nx=300 --set grid.ny=600
compare g2d-groups4 --set solver.rtol=0 --set solver.max_iter=41 --set solver.check_every=1 --set grid.nx=100 \
  --set grid.ny=3900
TOL=1e-5 compare g2d-groups8-fp32 --set solver.rtol=0 --set solver.max_iter=40 --set solver.check_every=3 \
  --set grid.nx=200 --set grid.ny=5999 --set grid.ghost=3 --set solver.precision=fp32
TOL=1e-5 compare g2d-wide-fp32 $fixed --set grid.nx=1500 --set grid.ny=299 --set solver.precision=fp32
case $RAN in *" g2d-wide-fp32 "*)
  solve g2d-wide-fp32-stream 1 cuda grid $fixed --set grid.nx=1500 --set grid.ny=299 --set solver.precision=fp32 \
    --set tune.resident=false
  RESIDENT=0 resident_check "$TMP/g2d-wide-fp32-stream.log"
  $PY "$H5CHECK" same "$TMP/g2d-wide-fp32-launch-1-mpi.h5" "$TMP/g2d-wide-fp32-stream.h5" ||
    fail "tune.resident = false: not bit-identical to launch" ;;
esac
# several sweeps between grid barriers (tune.resident_depth), each block
# recomputing rows of its neighbours' bands: 4 with bands of 5-6 rows in
# 3 groups of 1-2 (the rows sent spanning groups) and a last round cut short
# (61 sweeps); 2 in fp32 with a source and a check every 3; the 512^2 fp32
# shape of the benchmark (auto); converged solves whose stop falls inside a round
# (a check every sweep and every 3, stops at 5 and 6 on the host: sweeps 6-7
# and 7 computed and dropped, the measured field of the right sweep written
# out); depth 1 as before
DEPTH=4 compare g2d-d4-odd --set solver.rtol=0 --set solver.max_iter=61 --set solver.check_every=1 --set grid.nx=201 \
  --set grid.ny=149 --set tune.resident_depth=4
TOL=1e-5 DEPTH=2 compare g2d-d2-src-fp32 --set solver.rtol=0 --set solver.max_iter=50 --set solver.check_every=3 \
  --set grid.nx=203 --set grid.ny=301 --set grid.ghost=3 --set solver.precision=fp32 --set tune.resident_depth=2
TOL=1e-5 DEPTH=4 compare g2d-512-fp32-d4 --set solver.rtol=0 --set solver.max_iter=30 --set solver.check_every=1 \
  --set grid.nx=512 --set grid.ny=512 --set solver.precision=fp32 --set problem.type=laplace
DEPTH=4 compare conv-d4 --set grid.nx=64 --set grid.ny=600 --set problem.type=laplace --set solver.rtol=0.2 \
  --set solver.check_every=1 --set tune.resident_depth=4
DEPTH=4 compare conv-d4c3 --set grid.nx=64 --set grid.ny=600 --set problem.type=laplace --set solver.rtol=0.2 \
  --set solver.check_every=3 --set tune.resident_depth=4
DEPTH=1 compare g2d-d1 --set solver.rtol=0 --set solver.max_iter=41 --set solver.check_every=1 --set grid.nx=300 \
  --set grid.ny=600 --set tune.resident_depth=1
# converged solves at one sweep a barrier (a stop writes the field kept
# aside): checks every sweep, every 2 and every 5 (fp64: the histories are
# compared below at 1e-9 of the first residual, which fp32 residuals do not reach)
DEPTH=1 compare conv-d1 --set grid.nx=64 --set grid.ny=600 --set problem.type=laplace --set solver.rtol=0.05 \
  --set solver.check_every=1 --set tune.resident_depth=1
DEPTH=1 compare conv-d1c2 --set grid.nx=64 --set grid.ny=600 --set problem.type=laplace --set solver.rtol=0.02 \
  --set solver.check_every=2 --set tune.resident_depth=1
DEPTH=1 compare conv-d1c5 --set grid.nx=301 --set grid.ny=777 --set problem.type=laplace \
  --set solver.rtol=0.05 --set solver.check_every=5 --set tune.resident_depth=1
# boxes too wide or too tall for the registers, held in shared memory (one
# block per SM, one band each; counts for 132 SMs). Where two copies of a
# band fit, a check keeps the measured field aside: fp64, 512 threads, bands
# of 11-12 rows, f read from L2, a check every sweep; bands of one row (60
# rows) whose both edges go to the neighbours, f beside them; a converged
# solve that stops at an odd iteration (the measured field written out into
# the second buffer). Where they do not, a check updates as it measures and
# a stop re-runs from a checkpoint: fp32, 544 threads, bands of 13-14 rows, f
# from L2, checks every 5; and a stop at an odd iteration (15 on the host).
RESIDENT=shared SMEM_CHECK=aside compare g2d-smem-fp64 --set solver.rtol=0 --set solver.max_iter=30 --set solver.check_every=1 \
  --set grid.nx=1001 --set grid.ny=1500
TOL=1e-5 RESIDENT=shared SMEM_CHECK=aside compare g2d-smem-thin --set solver.rtol=0 --set solver.max_iter=30 --set solver.check_every=1 \
  --set grid.nx=3500 --set grid.ny=60 --set solver.precision=fp32
RESIDENT=shared SMEM_CHECK=aside compare g2d-smem-conv --set grid.nx=1801 --set grid.ny=60 --set problem.type=laplace \
  --set solver.rtol=0.3 --set solver.check_every=5
TOL=1e-5 RESIDENT=shared SMEM_CHECK=replay compare g2d-smem-fp32 --set solver.rtol=0 --set solver.max_iter=41 --set solver.check_every=5 \
  --set grid.nx=2100 --set grid.ny=1800 --set solver.precision=fp32
RESIDENT=shared SMEM_CHECK=replay compare g2d-smem-conv2 --set grid.nx=1001 --set grid.ny=2000 --set problem.type=laplace \
  --set solver.rtol=0.1 --set solver.check_every=5
# more replay (a checkpoint every 32 sweeps or more): fp32 with a source to
# max_iter, a check every sweep (the last check read-only, no re-run); stops
# by rtol that re-run from the checkpoint of iterate 0 (fp64, 512 threads,
# bands of 15-16 rows, a check every sweep: 11 iterations on the host) and
# from the one of iterate 33 (checks every 3: 57 iterations)
TOL=1e-5 RESIDENT=shared SMEM_CHECK=replay compare g2d-smem-replay --set solver.rtol=0 --set solver.max_iter=45 \
  --set solver.check_every=1 --set grid.nx=2100 --set grid.ny=1800 --set solver.precision=fp32
RESIDENT=shared SMEM_CHECK=replay compare g2d-smem-replay-conv --set grid.nx=1001 --set grid.ny=2000 \
  --set problem.type=laplace --set solver.rtol=0.1 --set solver.check_every=1
RESIDENT=shared SMEM_CHECK=replay compare g2d-smem-replay-conv3 --set grid.nx=1001 --set grid.ny=2000 \
  --set problem.type=laplace --set solver.rtol=0.03 --set solver.check_every=3
# a converged solve: at one rank grid mode runs it in one launch, stop test included
compare conv --set grid.nx=64 --set grid.ny=48 --set solver.rtol=1e-8 --set solver.check_every=100
# (g2d-smem-conv and -conv2 above: 1735 and 15 iterations on the host)
for f in "$TMP"/conv-*-*.h5 "$TMP"/g2d-smem-conv-*-*.h5 "$TMP"/g2d-smem-conv2-*-*.h5 \
  "$TMP"/g2d-smem-replay-conv-*-*.h5 "$TMP"/g2d-smem-replay-conv3-*-*.h5; do
  [ -e "$f" ] || continue # a case left out by COOP_GPU_CASES
  case $f in *-host.h5) continue ;; esac # conv-d4-host.h5: the reference itself
  h=${f##*/} # the case's name: the file's less -MODE-RANKS-HALO.h5
  h=${h%%-launch-*}
  h=${h%%-graph-*}
  h=${h%%-grid-*}
  h=$TMP/$h-host.h5
  $PY - "$h" "$f" <<'PYEOF' || fail "converged solve: $f stops differently from host"
import sys, h5py
fa, fb = (h5py.File(p, "r") for p in sys.argv[1:3])
a, b = fa["solver"].attrs, fb["solver"].attrs
ok = a["iterations"] == b["iterations"] and a["reason"] == b["reason"]
# the residual history too, against the first residual (late entries of a
# converged solve are differences of large terms: 3e-7 of their own size
# between host and GPU): a norm that counts points twice (an x-cut box's
# split step, call 27) moved r0 itself by far more
ha, hb = fa["history/residual"][...], fb["history/residual"][...]
dev = max(abs(x - y) for x, y in zip(ha, hb)) / ha[0] if len(ha) == len(hb) else float("inf")
ok = ok and dev <= 1e-9
print(sys.argv[2], b["iterations"], b["reason"], "history %.1e" % dev, "ok" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
PYEOF
done

if coop_gpu_case tail; then
# sync = auto: the persistent grid wherever cooperative launch works, but
# one launch per step for boxes above 2^22 points with neighbours and deep
# halos (bench/results/2026-11-30-h200x2-stencil.md)
auto_is() { # expected mode, ranks, options...
  want=$1 n=$2
  shift 2
  solve auto $n cuda auto --set solver.max_iter=2 "$@"
  [ "$(coop_solver_attr "$TMP/auto.h5" mode)" = "$want" ] || fail "sync = auto at $n ranks with $*: not $want"
}
auto_is grid 1 --set grid.nx=256 --set grid.ny=256
auto_is grid 1 --set grid.nx=1100 --set grid.ny=1000
auto_is grid 2 --set grid.nx=256 --set grid.ny=256
auto_is grid 2 --set grid.nx=256 --set grid.ny=256 --set grid.ghost=2
auto_is grid 2 --set grid.nx=4096 --set grid.ny=4096 --set grid.ghost=2

# a grid that cannot be co-resident is refused, never launched
if coop_mpirun 1 "$COOPSOLVE" --backend cuda --set run.sync=grid --set tune.blocks=1000000 \
  "$INPUTS/quickstart.ini" --output "$TMP/big.h5" >"$TMP/big.log" 2>&1; then
  fail "tune.blocks = 1000000 was accepted"
fi
grep -q "can be resident" "$TMP/big.log" || { cat "$TMP/big.log"; fail "no co-residency message"; }
[ ! -e "$TMP/big.h5" ] || fail "output written after a refused launch"

coop_gpu_done tail
fi

if coop_gpu_case ckpt; then
# checkpoints on the GPU: a run cut after a checkpoint and restarted ends with
# the same bits as an uninterrupted one in the same mode (Jacobi grid mode
# takes the k-sweep kernel between checks; a Krylov method in grid mode stops
# its persistent kernel there; the two modes sum in other orders)
ck() { # name ranks sync cut every options...
  name=$1 n=$2 sync=$3 cut=$4 every=$5
  shift 5
  solve "$name-full" $n cuda $sync "$@"
  solve "$name-cut" $n cuda $sync "$@" --set solver.max_iter=$cut --set output.checkpoint_every=$every
  solve "$name-rest" $n cuda $sync "$@" --restart "$TMP/$name-cut.ckpt.h5"
  $PY "$H5CHECK" same "$TMP/$name-full.h5" "$TMP/$name-rest.h5" || fail "$name: restart differs"
  echo "$name: restart bit-identical"
}
ck ck-jac-grid 1 grid 200 100 --set grid.nx=200 --set grid.ny=150 --set solver.rtol=1e-6 --set solver.check_every=50
ck ck-jac-launch 2 launch 200 100 --set grid.nx=200 --set grid.ny=150 --set solver.rtol=1e-6 --set solver.check_every=50
ck ck-cg 2 launch 40 20 --set problem.type=laplace --set grid.nx=200 --set grid.ny=150 --set solver.name=cg \
  --set solver.rtol=1e-10 --set solver.pc=jacobi
ck ck-cgsr 1 launch 40 20 --set problem.type=laplace --set grid.nx=200 --set grid.ny=150 --set solver.name=cg \
  --set solver.rtol=1e-10 --set solver.cg_single_reduction=true
# grid mode checkpoints too: the persistent kernel stops for the checkpoint
# and a restart resumes it, bit for bit against an uninterrupted grid-mode run
lap="--set problem.type=laplace --set grid.nx=200 --set grid.ny=150 --set solver.rtol=1e-10"
for m in cg cgsr pipecg bicgstab; do
  case $m in
    cgsr) opts="--set solver.name=cg --set solver.cg_single_reduction=true" ;;
    *) opts="--set solver.name=$m" ;;
  esac
  ck ck-grid-$m 1 grid 40 20 $lap $opts
  for run in full cut rest; do
    [ "$(coop_solver_attr "$TMP/ck-grid-$m-$run.h5" mode)" = grid ] || fail "ck-grid-$m: the $run run is not grid mode"
  done
done
# ... and only grid mode goes on from a grid-mode checkpoint (and vice versa)
what="grid checkpoint on the host"
coop_expect_input_error "$TMP" 1 \
  "--restart ck-grid-cg-cut.ckpt.h5: a checkpoint of a solve in grid mode" "run.sync = grid" \
  "$INPUTS/quickstart.ini" $lap --set solver.name=cg --restart ck-grid-cg-cut.ckpt.h5
if coop_mpirun 1 "$COOPSOLVE" --backend cuda --set run.sync=grid "$INPUTS/quickstart.ini" $lap \
  --set solver.name=cg --set solver.cg_single_reduction=true --restart "$TMP/ck-cgsr-cut.ckpt.h5" \
  --output "$TMP/mixed.h5" >"$TMP/mixed.log" 2>&1; then
  fail "a launch-mode checkpoint was resumed in grid mode"
fi
grep -q "run.sync = launch" "$TMP/mixed.log" || { cat "$TMP/mixed.log"; fail "no run.sync message"; }
coop_gpu_done ckpt
fi
echo "gpu: all cases passed (tier ${COOP_GPU_TIER:-quick} ${COOP_GPU_PART:-})"
